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

#include "base/ordered_tasks.hpp"
#include "sim/layout_search/plan.hpp"
#include "base/input_error.hpp"
#include "report/text_file.hpp"
#include "sim/machine/machine_loader.hpp"
#include "sim/step/simulated_step.hpp"
#include "sim/study/model_input.hpp"
#include "report/study/plan_table.hpp"
#include "sim/study/point_plan.hpp"
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
  plan->add_option("--ranks-per-node", a.ranks_per_node,
                   "ranks (devices used) on each node, its first ones, as srun --ntasks-per-node places them "
                   "(default: every device of each node; e.g. 1 for one GPU per node)")
      ->check(kPositive);
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
                   "price this layout (Gdata x Gx x Gy x Gz, e.g. 32x1x2x128; with pipeline stages, model chunks "
                   "and micro-batches, e.g. 8x1x4x1/pp=4,vpp=2,mb=16; Megatron-LM's tp=4,pp=8,vpp=2,dp=64,mb=16 "
                   "with optional zero=1|2|3, sp and order=tp-pp-dp; FSDP's dp_shard=64,dp_replicate=2,tp=4) "
                   "beside the ranked table: its row, its rank among the fitting layouts and how much slower it "
                   "is than the fastest");
  plan->add_option("--strategy", a.strategy,
                   "whose layouts to rank: '4d' (Gdata x Gx x Gy x Gz), 'megatron' (tp x pp x dp with 1F1B and "
                   "interleaved pipelines, micro-batches of 1, 2 or 4 sequences, sp off and on, zero=1 where "
                   "dp > 1, and the 16 fastest pipelined ones also in the tp-pp-dp rank order), 'fsdp' (dp_shard x "
                   "dp_replicate x tp), or 'all' in one table with a strategy column")
      ->check(CLI::IsMember({"4d", "megatron", "fsdp", "all"}));
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
  if (!layout)
    throw layout_error(a.layout,
                       "Gdata x Gx x Gy x Gz, e.g. 32x1x2x128, optionally /pp=P[,vpp=V],mb=M "
                       "(e.g. 8x1x4x1/pp=4,vpp=2,mb=16); Megatron-LM's tp=T,pp=P,dp=D,mb=M with optional vpp=V, "
                       "zero=1|2|3, sp and order=tp-pp-dp; or FSDP's dp_shard=S[,dp_replicate=R][,tp=T]");
  if (!holds_devices(*layout, a.devices)) {
    throw layout_error(a.layout, fmt::format("a layout whose Gdata x Gx x Gy x Gz is --devices ({})", a.devices));
  }
  return layout;
}

// Why the asked layout cannot run the point, as --layout's error.
InputError asked_layout_problem(const PlanArgs& a, const ModelSpec& model, const Batch& batch,
                                const std::string& problem) {
  return layout_error(a.layout, fmt::format("a layout that can run {} with a batch of {} sequences; this one "
                                            "cannot: {}",
                                            model.name, batch.sequences, problem));
}

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
  step.ranks_per_node = a.ranks_per_node;
  Machine machine = load_machine_by_name(a.machine, machines_dir);
  if (a.ranks_per_node > machine.node.devices) {
    throw InputError(InputLocation{"", 0, "--ranks-per-node"}, std::to_string(a.ranks_per_node),
                     fmt::format("1 to the {} devices of a {} node", machine.node.devices, machine.name));
  }
  if (!a.library.empty()) machine = with_collective_library(std::move(machine), a.library, {"", 0, "--library"});
  machine = with_settings(std::move(machine), a.settings);
  const Batch batch{a.batch_sequences};
  const CollectiveModel evaluator = parse_collective_model(a.evaluator).value();
  if (evaluator == CollectiveModel::every_step && a.devices > kEveryStepMaxDevices) {
    throw InputError(InputLocation{"", 0, "--evaluator"}, "every-step",
                     fmt::format("'flow' or 'closed-form' for {} devices ('every-step' takes jobs of at most {} "
                                 "devices: the per-send reference's time grows with sends x flows in flight)",
                                 a.devices, kEveryStepMaxDevices));
  }
  // The point is ranked: --layout is compared, not pinned.
  const StudyPoint point{a.devices, model, batch, 0, std::nullopt};
  PointPlanOptions options;
  options.evaluator = evaluator;
  options.simulated = std::max(a.top, a.simulate_top);
  options.asked = asked;
  options.jobs = usable_cores();
  if (a.strategy == "all")
    options.strategies = {Strategy::four_d, Strategy::megatron, Strategy::fsdp};
  else if (a.strategy == "megatron")
    options.strategies = {Strategy::megatron};
  else if (a.strategy == "fsdp")
    options.strategies = {Strategy::fsdp};
  const PointPlan priced = plan_point(machine, point, step, options);
  if (priced.asked && !priced.asked->problem.empty()) throw asked_layout_problem(a, model, batch, priced.asked->problem);
  out << format_point_plan(machine, point, step, priced, a.top, a.show_invalid);
  if (!a.csv.empty()) {
    const std::filesystem::path csv(a.csv);
    const auto written = write_text_file(csv.has_parent_path() ? csv.parent_path() : std::filesystem::path("."),
                                         csv.filename().string(), format_point_plan_csv(machine, a.devices, priced));
    out << fmt::format("wrote {}\n", written.string());
  }
  if (!a.trace.empty() && (asked || !priced.plan.ranked.empty())) {
    SimulatedStepConfig config;
    config.model = model;
    config.layout = asked ? *asked : priced.plan.ranked.front().layout;
    config.sequences = batch.sequences;
    config.options = step;
    config.trace = true;
    write_simulated_trace(simulate_step(machine, config), a.trace);
    out << fmt::format("trace: the step of {} simulated on the flow network, written to {}\n",
                       to_string(config.layout), a.trace);
  }
  // With --layout, whether that one fits; else whether any does.
  return priced.asked ? priced.asked->closed_form_rank.has_value() : !priced.plan.ranked.empty();
}

}  // namespace ws::cli
