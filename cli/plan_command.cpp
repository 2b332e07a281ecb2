#include "cli/plan_command.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sim/layout_search/plan.hpp"
#include "base/input_error.hpp"
#include "report/text_file.hpp"
#include "sim/machine/machine_loader.hpp"
#include "sim/step/simulated_step.hpp"
#include "sim/study/model_input.hpp"
#include "report/study/plan_table.hpp"
#include "sim/study/point_evaluation.hpp"
#include "sim/study/uncertainty.hpp"

namespace ws::cli {

namespace {
// The per-send evaluator's limit: its time grows with sends x flows in flight.
constexpr int kEveryStepMaxDevices = 64;
}  // namespace

CLI::App* add_plan_command(CLI::App& app, PlanArgs& a) {
  // CLI11's PositiveNumber prints the upper bound as a 300-digit double; this prints 2147483647.
  const CLI::Range kPositive(1, std::numeric_limits<int>::max());
  CLI::App* plan = app.add_subcommand(
      "plan", "Rank every 4D layout (Gdata x Gx x Gy x Gz) of one point by predicted step time");
  plan->add_option("--machine", a.machine, "machine name (machines/<name>.yaml) or machine file")->required();
  auto* model = plan->add_option("--model", a.model, "model preset (5B, ..., 175B, llama2-7b, llama3-8b, llama3-70b, ...)");
  auto* layers = plan->add_option("--layers", a.layers, "layers of a custom model (instead of --model)");
  auto* hidden = plan->add_option("--hidden", a.hidden, "hidden size of a custom model");
  auto* heads = plan->add_option("--heads", a.heads, "attention heads of a custom model");
  auto* seq = plan->add_option("--seq", a.sequence_length, "sequence length of a custom model")
                  ->capture_default_str();
  auto* vocab =
      plan->add_option("--vocab", a.vocabulary, "vocabulary of a custom model")->capture_default_str();
  const std::vector<CLI::Option*> architecture{
      plan->add_option("--family", a.family, "architecture of a custom model: gpt (default) or llama")
          ->check(CLI::IsMember({"gpt", "llama"})),
      plan->add_option("--kv-heads", a.kv_heads, "key/value heads of a custom model (default: --heads)"),
      plan->add_option("--ffn-hidden", a.ffn_hidden, "MLP width of a custom model (default: the family's)"),
      plan->add_option("--activation", a.activation, "MLP activation of a custom model: gelu or swiglu")
          ->check(CLI::IsMember({"gelu", "swiglu"})),
      plan->add_option("--norm", a.norm, "norm of a custom model: layernorm or rmsnorm")
          ->check(CLI::IsMember({"layernorm", "rmsnorm"})),
      plan->add_option("--position", a.position, "positions of a custom model: learned or rope")
          ->check(CLI::IsMember({"learned", "rope"})),
      plan->add_option("--tied-embeddings", a.tied_embeddings, "whether the LM head reuses the embedding")
          ->check(CLI::IsMember({"true", "false"})),
      plan->add_option("--biases", a.biases, "whether the FC layers carry biases")->check(CLI::IsMember({"true", "false"}))};
  for (auto* o : {layers, hidden, heads, seq, vocab}) model->excludes(o);
  for (auto* o : architecture) {
    model->excludes(o);
    o->needs(layers);
  }
  layers->needs(hidden)->needs(heads);
  hidden->needs(layers);
  heads->needs(layers);
  plan->add_option("--devices", a.devices, "devices in the job")->required()->check(kPositive);
  plan->add_option("--batch", a.batch_sequences, "global batch, sequences per step")
      ->required()
      ->check(kPositive);
  plan->add_option("--top", a.top, "rows of the ranked table")->capture_default_str()->check(kPositive);
  plan->add_flag("--show-invalid", a.show_invalid, "list over-memory and invalid layouts with reasons");
  plan->add_option("--precision", a.precision, "training precision")
      ->capture_default_str()
      ->check(CLI::IsMember({"bf16", "fp16", "fp32"}));
  plan->add_option("--library", a.library,
                   "collective library of the machine file to price with (default: the file's first)");
  plan->add_flag("--no-recompute", a.no_recompute, "keep activations instead of recomputing them");
  plan->add_flag("--no-oar", a.no_oar, "do not overlap the Y all-reduce of dX with the dW GEMM");
  plan->add_flag("--no-ors", a.no_ors, "do not overlap the Z reduce-scatter of dW");
  plan->add_flag("--no-oag", a.no_oag, "do not prefetch the Z all-gather of the next layer");
  plan->add_flag("--overlap-data", a.overlap_data, "overlap the data-parallel all-reduce with backward");
  plan->add_option("--evaluator", a.evaluator,
                   "'closed-form' (every layout priced alone, each collective in closed form) or 'flow' (the "
                   "fastest --simulate-top layouts re-ranked by the step simulator, every collective of the step "
                   "in flight on one flow network) or 'every-step' (those layouts re-ranked with every send of "
                   "every collective its own flow: the per-send reference the flow network's phases are checked "
                   "against, for jobs of at most " + std::to_string(kEveryStepMaxDevices) + " devices)")
      ->check(CLI::IsMember({"closed-form", "flow", "every-step"}))
      ->capture_default_str();
  plan->add_option("--simulate-top", a.simulate_top, "layouts the flow evaluator re-ranks (at least --top)")
      ->check(kPositive)
      ->capture_default_str();
  plan->add_option("--set", a.settings,
                   "fix one of the machine file's uncertain parameters for this run, NAME=VALUE (repeatable; the "
                   "names of its uncertainty: ranges, e.g. gemm_efficiency_scale=0.8, 'collective_step_latency=40 "
                   "us'); the table's header names them");
  plan->add_option("--csv", a.csv,
                   "also write every ranked layout (the flow evaluator's re-ranked ones with --evaluator flow, and "
                   "the --layout) as CSV to this file: the table's columns in seconds, fractions and GiB");
  plan->add_option("--layout", a.layout,
                   "price this layout (Gdata x Gx x Gy x Gz, e.g. 32x1x2x128) beside the ranked table: its row, "
                   "its rank among the fitting layouts and how much slower it is than the fastest");
  plan->add_option("--trace", a.trace,
                   "write the step of the first-ranked layout (of --layout, if given), simulated on the flow "
                   "network, as a Chrome trace / Perfetto JSON (rank 0's compute and collectives, the engine's "
                   "event names)");
  return plan;
}

namespace {

InputError layout_error(const std::string& value, const std::string& expected) {
  return InputError(InputLocation{"", 0, "--layout"}, value, expected);
}

// The layout asked for by --layout, checked against the point: it must parse and hold --devices.
std::optional<Layout> asked_layout(const PlanArgs& a) {
  if (a.layout.empty()) return std::nullopt;
  const std::optional<Layout> layout = parse_layout(a.layout);
  if (!layout) throw layout_error(a.layout, "Gdata x Gx x Gy x Gz, e.g. 32x1x2x128");
  if (!holds_devices(*layout, a.devices)) {
    throw layout_error(a.layout, fmt::format("a layout whose Gdata x Gx x Gy x Gz is --devices ({})", a.devices));
  }
  return layout;
}

std::optional<std::size_t> index_of(const std::vector<LayoutEstimate>& estimates, const Layout& layout) {
  const auto it = std::find_if(estimates.begin(), estimates.end(),
                               [&](const LayoutEstimate& e) { return e.layout == layout; });
  if (it == estimates.end()) return std::nullopt;
  return static_cast<std::size_t>(it - estimates.begin());
}

// "+4.3 % on the fastest, 32x1x1x256 (12.5258 s)", or "the fastest" when it is.
std::string against_fastest(const LayoutEstimate& asked, const LayoutEstimate& fastest) {
  if (asked.layout == fastest.layout) return "the fastest";
  return fmt::format("{:+.1f} % on the fastest, {} ({:.4f} s)",
                     100.0 * (asked.step.total().seconds() / fastest.step.total().seconds() - 1.0),
                     to_string(fastest.layout), fastest.step.total().seconds());
}

// A layout asked for with --layout, as the table and the closing line show it.
struct AskedRow {
  LayoutEstimate estimate;
  std::optional<std::size_t> closed_form_rank;  // 0-based among the fitting layouts; none: over memory
  std::string rank;                             // the table's label: its rank, or "-"
  std::string note;                             // where it stands
};

// Its closed-form estimate and rank in `plan`; a layout the point cannot run is an error.
AskedRow closed_form_row(const Plan& plan, const Layout& asked, const PlanArgs& a, const ModelSpec& model,
                         const Batch& batch) {
  for (const LayoutCandidate& c : plan.invalid) {
    if (c.layout == asked) {
      throw layout_error(a.layout, fmt::format("a layout that can run {} with a batch of {} sequences; this one "
                                               "cannot: {}",
                                               model.name, batch.sequences, c.reason));
    }
  }
  AskedRow row;
  row.closed_form_rank = index_of(plan.ranked, asked);
  if (row.closed_form_rank) {
    row.estimate = plan.ranked[*row.closed_form_rank];
    row.rank = fmt::format("{}", *row.closed_form_rank + 1);
    row.note = fmt::format("rank {} of {} fitting layouts by the closed form", *row.closed_form_rank + 1,
                           plan.ranked.size());
  } else {
    // Valid (every layout of --devices is enumerated), so over memory.
    row.estimate = plan.over_memory.at(index_of(plan.over_memory, asked).value());
    row.rank = "-";
  }
  return row;
}

// The row with its step simulated on the flow network: taken from `simulated` (the flow
// evaluator's re-ranked top, of `fitting` layouts) when it is there, else simulated now.
void simulate_row(AskedRow& row, const std::vector<LayoutEstimate>& simulated, std::size_t fitting,
                  JobNetwork& network, const StudyPoint& point, const StepOptions& step, CollectiveModel model) {
  const char* where = model == CollectiveModel::every_step ? "with every send its own flow" : "on the flow network";
  if (const auto i = index_of(simulated, row.estimate.layout)) {
    row.estimate = simulated[*i];
    row.rank = fmt::format("{}", *i + 1);
    row.note = fmt::format("rank {} of the {} simulated {} (rank {} of {} by the closed form)", *i + 1,
                           simulated.size(), where, row.closed_form_rank.value() + 1, fitting);
    return;
  }
  row.estimate = simulate_candidate(network, point, step, row.estimate, model);
  row.rank = "-";
  row.note = row.closed_form_rank ? fmt::format("simulated {} too; rank {} of {} by the closed form, outside the {} "
                                                "the {} evaluator re-ranks",
                                                where, *row.closed_form_rank + 1, fitting, simulated.size(),
                                                to_string(model))
                                  : fmt::format("simulated {} too", where);
}

// The closing line: the asked layout's step and percent of peak, where it stands, and its
// distance to the fastest (or why it cannot run).
std::string asked_line(const AskedRow& row, const Plan& plan, const Machine& machine) {
  const LayoutEstimate& e = row.estimate;
  if (!row.closed_form_rank) {
    return fmt::format("\nlayout {}: does not fit in device memory: needs {:.1f} GiB of {:.0f} GiB{}\n",
                       to_string(e.layout), to_gib(e.memory.total_bytes()), to_gib(machine.device.memory_capacity_bytes),
                       row.note.empty() ? "" : " (" + row.note + ")");
  }
  return fmt::format("\nlayout {}: {:.4f} s per step, {:.1f} % of peak (hardware flops); {}; {}\n", to_string(e.layout),
                     e.step.total().seconds(), 100.0 * e.hardware_peak_fraction, row.note,
                     against_fastest(e, plan.ranked.front()));
}

}  // namespace

namespace {
CustomModelFields custom_model_fields(const PlanArgs& a) {
  CustomModelFields f;
  f.layers = a.layers, f.hidden = a.hidden, f.heads = a.heads;
  f.sequence_length = a.sequence_length, f.vocabulary = a.vocabulary;
  f.family = a.family, f.kv_heads = a.kv_heads, f.ffn_hidden = a.ffn_hidden;
  f.activation = a.activation, f.norm = a.norm, f.position = a.position;
  if (!a.tied_embeddings.empty()) f.tied_embeddings = a.tied_embeddings == "true";
  if (!a.biases.empty()) f.biases = a.biases == "true";
  return f;
}
}  // namespace

bool run_plan_command(const PlanArgs& a, const std::string& machines_dir, std::ostream& out) {
  if (a.model.empty() && a.layers == 0) {
    throw InputError(InputLocation{"", 0, "--model"}, "",
                     "--model NAME, or --layers, --hidden and --heads for another model");
  }
  const ModelSpec model =
      a.model.empty() ? custom_model(custom_model_fields(a), InputLocation{},
                                     {"--layers", "--hidden", "--heads", "--seq", "--vocab", "--family", "--kv-heads",
                                      "--ffn-hidden", "--activation", "--norm", "--position"})
                      : named_model(a.model, InputLocation{"", 0, "--model"},
                                    "--layers/--hidden/--heads [--seq --vocab] for another model");
  const std::optional<Layout> asked = asked_layout(a);
  StepOptions step;
  step.precision = parse_precision(a.precision).value_or(Precision::bf16);  // checked by CLI11
  step.recompute = !a.no_recompute;
  step.overlap_all_reduce = !a.no_oar;
  step.overlap_reduce_scatter = !a.no_ors;
  step.overlap_all_gather = !a.no_oag;
  step.overlap_data_parallel = a.overlap_data;
  Machine machine = load_machine_by_name(a.machine, machines_dir);
  if (!a.library.empty()) machine = with_collective_library(std::move(machine), a.library, {"", 0, "--library"});
  machine = with_settings(std::move(machine), a.settings);
  const Batch batch{a.batch_sequences};
  Plan plan = plan_layouts(machine, model, batch, a.devices, step);
  PlanTableOptions table;
  table.top = a.top;
  table.show_invalid = a.show_invalid;
  table.fitting = plan.ranked.size();

  std::optional<AskedRow> asked_row;
  if (asked) asked_row = closed_form_row(plan, *asked, a, model, batch);
  const CollectiveModel evaluator = parse_collective_model(a.evaluator).value();
  if (evaluator == CollectiveModel::every_step && a.devices > kEveryStepMaxDevices) {
    throw InputError(InputLocation{"", 0, "--evaluator"}, "every-step",
                     fmt::format("'flow' or 'closed-form' for {} devices ('every-step' takes jobs of at most {} "
                                 "devices: the per-send reference's time grows with sends x flows in flight)",
                                 a.devices, kEveryStepMaxDevices));
  }
  if (evaluator != CollectiveModel::closed_form && !plan.ranked.empty()) {
    // The closed form's fastest layouts simulated on the flow network and re-ranked; the table then
    // lists those (the rest stay counted below it).
    const StudyPoint point{a.devices, model, batch, 0, std::nullopt};  // ranked: --layout is compared, not pinned
    JobNetworks networks;
    const std::size_t fitting = plan.ranked.size();
    const int simulated = std::max(a.top, a.simulate_top);
    plan.ranked = evaluate_point_simulated(machine, point, step, simulated, simulated, &networks, evaluator).candidates;
    out << fmt::format("{} evaluator: the closed form's fastest {} of {} fitting layouts simulated, re-ranked\n",
                       to_string(evaluator), plan.ranked.size(), fitting);
    if (asked_row) {
      simulate_row(*asked_row, plan.ranked, fitting, networks.get(machine, a.devices, step.allocation), point, step,
                   evaluator);
    }
  }
  if (asked_row) {
    table.asked = asked_row->estimate;
    table.asked_rank = asked_row->rank;
  }
  out << format_plan_table(machine, model, batch, a.devices, step, plan, table);
  if (asked_row) out << asked_line(*asked_row, plan, machine);
  if (!a.csv.empty()) {
    const std::filesystem::path csv(a.csv);
    const auto written = write_text_file(csv.has_parent_path() ? csv.parent_path() : std::filesystem::path("."),
                                         csv.filename().string(), format_plan_csv(machine, a.devices, plan, table));
    out << fmt::format("wrote {}\n", written.string());
  }
  if (!a.trace.empty() && (asked || !plan.ranked.empty())) {
    SimulatedStepConfig config;
    config.model = model;
    config.layout = asked ? *asked : plan.ranked.front().layout;
    config.sequences = batch.sequences;
    config.options = step;
    config.trace = true;
    write_simulated_trace(simulate_step(machine, config), a.trace);
    out << fmt::format("trace: the step of {} simulated on the flow network, written to {}\n",
                       to_string(config.layout), a.trace);
  }
  // With --layout, whether that one fits; else whether any does.
  return asked_row ? asked_row->closed_form_rank.has_value() : !plan.ranked.empty();
}

}  // namespace ws::cli
