#include "report/study/study_writers.hpp"

#include "report/study/study_summary.hpp"

#include "report/csv.hpp"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <system_error>
#include <variant>

#include "sim/pricing/job_network.hpp"
#include "workload/flops.hpp"
#include "base/input_error.hpp"


namespace ws {
namespace {

// A number printed with a fixed number of decimals; empty for infeasible points.
struct Fixed {
  double value;
  int decimals;
};
using Cell = std::variant<std::monostate, std::string, long long, Fixed>;

struct Column {
  const char* name;
  const char* meaning;  // copied into the JSON metadata so that the file explains itself
  Cell (*cell)(const StudyResult&, const StudyRow&);
};

std::optional<double> when_feasible(const StudyRow& row, double value) {
  return row.feasible ? std::optional<double>(value) : std::nullopt;
}
Cell fixed(std::optional<double> v, int decimals) {
  if (!v) return std::monostate{};
  return Fixed{*v, decimals};
}

// One table definition shared by CSV and JSON so that both always carry the same columns.
const std::vector<Column>& columns() {
  static const std::vector<Column> kColumns{
      {"machine", "machine name from the machine file",
       [](const StudyResult& r, const StudyRow&) -> Cell { return r.machine.name; }},
      {"devices", "devices (GPUs / GCDs) in the job",
       [](const StudyResult&, const StudyRow& w) -> Cell { return static_cast<long long>(w.point.devices); }},
      {"nodes", "nodes the job spans: devices / ranks_per_node, rounded up",
       [](const StudyResult& r, const StudyRow& w) -> Cell {
         const int per_node = ranks_on_a_node(r.machine, w.point.devices, w.point.ranks_per_node);
         return static_cast<long long>((w.point.devices + per_node - 1) / per_node);
       }},
      {"ranks_per_node", "ranks on each of the job's nodes: the point's ranks_per_node, or all the node's devices",
       [](const StudyResult& r, const StudyRow& w) -> Cell {
         return static_cast<long long>(ranks_on_a_node(r.machine, w.point.devices, w.point.ranks_per_node));
       }},
      {"model", "model name (GPT family, or l<layers>-h<hidden> for an inline spec)",
       [](const StudyResult&, const StudyRow& w) -> Cell { return w.point.model.name; }},
      {"parameters_b", "model parameters, billions",
       [](const StudyResult&, const StudyRow& w) -> Cell {
         return Fixed{parameter_count(w.point.model) * 1e-9, 3};
       }},
      {"batch_sequences", "global batch, sequences per step",
       [](const StudyResult&, const StudyRow& w) -> Cell { return w.point.batch.sequences; }},
      {"batch_tokens", "global batch, tokens per step",
       [](const StudyResult&, const StudyRow& w) -> Cell {
         return batch_tokens(w.point.model, w.point.batch);
       }},
      {"layout", "fastest layout that fits in memory, Gdata x Gx x Gy x Gz",
       [](const StudyResult&, const StudyRow& w) -> Cell {
         return w.feasible ? Cell(to_string(w.best.layout)) : Cell(std::monostate{});
       }},
      {"step_s", "predicted time of one training step, seconds",
       [](const StudyResult&, const StudyRow& w) {
         return fixed(when_feasible(w, w.best.step.total().seconds()), 6);
       }},
      {"pflops", "sustained executed flop/s of the whole job, PFLOP/s",
       [](const StudyResult&, const StudyRow& w) {
         return fixed(when_feasible(w, w.best.sustained_flops_per_s * 1e-15), 4);
       }},
      {"tflops_per_device", "sustained executed flop/s per device, TFLOP/s",
       [](const StudyResult&, const StudyRow& w) {
         return fixed(when_feasible(w, flops_per_device(w) * 1e-12), 3);
       }},
      {"peak_fraction_hw", "hardware flops (with recomputation) / (step * devices * peak)",
       [](const StudyResult&, const StudyRow& w) {
         return fixed(when_feasible(w, w.best.hardware_peak_fraction), 6);
       }},
      {"model_peak_fraction", "model flops (no recomputation) / (step * devices * peak): MFU",
       [](const StudyResult&, const StudyRow& w) {
         return fixed(when_feasible(w, w.best.model_peak_fraction), 6);
       }},
      {"efficiency", "weak-scaling efficiency: flop/s per device relative to the first feasible point",
       [](const StudyResult&, const StudyRow& w) { return fixed(when_feasible(w, w.efficiency), 6); }},
      {"compute_s", "computation on the critical path, seconds",
       [](const StudyResult&, const StudyRow& w) {
         return fixed(when_feasible(w, w.best.step.compute.seconds()), 6);
       }},
      {"exposed_x_s", "X-group communication not hidden by computation, seconds",
       [](const StudyResult&, const StudyRow& w) {
         return fixed(when_feasible(w, w.best.step.exposed_x.seconds()), 6);
       }},
      {"exposed_y_s", "Y-group communication not hidden by computation, seconds",
       [](const StudyResult&, const StudyRow& w) {
         return fixed(when_feasible(w, w.best.step.exposed_y.seconds()), 6);
       }},
      {"exposed_z_s", "Z-group communication not hidden by computation, seconds",
       [](const StudyResult&, const StudyRow& w) {
         return fixed(when_feasible(w, w.best.step.exposed_z.seconds()), 6);
       }},
      {"exposed_data_s", "data-parallel communication not hidden by computation, seconds",
       [](const StudyResult&, const StudyRow& w) {
         return fixed(when_feasible(w, w.best.step.exposed_data.seconds()), 6);
       }},
      {"skew_s", "time lost to device variability: the slowest device's extra compute and waits for a group's slowest member, seconds",
       [](const StudyResult&, const StudyRow& w) { return fixed(when_feasible(w, w.best.step.skew.seconds()), 6); }},
      {"contention_s", "what collectives in flight together cost each other: the step minus the step with every collective priced alone, seconds",
       [](const StudyResult&, const StudyRow& w) {
         const Time alone = w.best.isolated.total() > Time::zero() ? w.best.isolated.total() : w.best.step.total();
         return fixed(when_feasible(w, (w.best.step.total() - alone).seconds()), 6);
       }},
      {"compute_efficiency", "executed flops per device per second of computation, relative to the first point",
       [](const StudyResult&, const StudyRow& w) { return fixed(when_feasible(w, w.decomposition.compute_efficiency), 6); }},
      {"efficiency_from_compute", "efficiency - 1 split into parts (they sum to it): compute efficiency - 1",
       [](const StudyResult&, const StudyRow& w) { return fixed(when_feasible(w, w.decomposition.compute), 6); }},
      {"efficiency_from_x", "part of efficiency - 1 from exposed X communication (priced alone)",
       [](const StudyResult&, const StudyRow& w) { return fixed(when_feasible(w, w.decomposition.x), 6); }},
      {"efficiency_from_y", "part of efficiency - 1 from exposed Y communication (priced alone)",
       [](const StudyResult&, const StudyRow& w) { return fixed(when_feasible(w, w.decomposition.y), 6); }},
      {"efficiency_from_z", "part of efficiency - 1 from exposed Z communication (priced alone)",
       [](const StudyResult&, const StudyRow& w) { return fixed(when_feasible(w, w.decomposition.z), 6); }},
      {"efficiency_from_data", "part of efficiency - 1 from exposed data-parallel communication (priced alone)",
       [](const StudyResult&, const StudyRow& w) { return fixed(when_feasible(w, w.decomposition.data), 6); }},
      {"efficiency_from_skew", "part of efficiency - 1 from device variability (skew_s)",
       [](const StudyResult&, const StudyRow& w) { return fixed(when_feasible(w, w.decomposition.skew), 6); }},
      {"efficiency_from_contention", "part of efficiency - 1 from collectives sharing the network (contention_s)",
       [](const StudyResult&, const StudyRow& w) { return fixed(when_feasible(w, w.decomposition.contention), 6); }},
      {"memory_gib", "predicted memory per device, GiB",
       [](const StudyResult&, const StudyRow& w) {
         return fixed(when_feasible(w, to_gib(w.best.memory.total_bytes())), 3);
       }},
      {"memory_capacity_gib", "device memory capacity, GiB",
       [](const StudyResult& r, const StudyRow&) -> Cell {
         return Fixed{to_gib(r.machine.device.memory_capacity_bytes), 3};
       }},
      {"layouts_valid", "layouts that can run the model and batch (divisibility); 1 where the point pins its layout",
       [](const StudyResult&, const StudyRow& w) -> Cell { return static_cast<long long>(w.layouts_valid); }},
      {"layouts_fitting", "valid layouts that also fit in device memory",
       [](const StudyResult&, const StudyRow& w) -> Cell {
         return static_cast<long long>(w.layouts_fitting);
       }},
      {"note", "empty, or why the point has no result",
       [](const StudyResult&, const StudyRow& w) -> Cell { return w.reason; }},
  };
  return kColumns;
}

std::optional<double> band_value(const std::optional<Band>& band, double Band::*field) {
  return band ? std::optional<double>((*band).*field) : std::nullopt;
}

// Appended after the plain columns when the study was sampled, so that an unsampled study's CSV
// keeps its columns (and the golden file its bytes).
const std::vector<Column>& band_columns() {
  static const std::vector<Column> kColumns{
      {"samples_feasible", "uncertainty samples in which the point has a layout that fits",
       [](const StudyResult&, const StudyRow& w) -> Cell { return static_cast<long long>(w.samples_feasible); }},
      {"efficiency_p10", "efficiency over the uncertainty samples: 10th percentile",
       [](const StudyResult&, const StudyRow& w) { return fixed(band_value(w.efficiency_band, &Band::p10), 6); }},
      {"efficiency_median", "efficiency over the uncertainty samples: median",
       [](const StudyResult&, const StudyRow& w) { return fixed(band_value(w.efficiency_band, &Band::p50), 6); }},
      {"efficiency_p90", "efficiency over the uncertainty samples: 90th percentile",
       [](const StudyResult&, const StudyRow& w) { return fixed(band_value(w.efficiency_band, &Band::p90), 6); }},
      {"peak_fraction_hw_p10", "peak_fraction_hw over the uncertainty samples: 10th percentile",
       [](const StudyResult&, const StudyRow& w) { return fixed(band_value(w.peak_fraction_band, &Band::p10), 6); }},
      {"peak_fraction_hw_median", "peak_fraction_hw over the uncertainty samples: median",
       [](const StudyResult&, const StudyRow& w) { return fixed(band_value(w.peak_fraction_band, &Band::p50), 6); }},
      {"peak_fraction_hw_p90", "peak_fraction_hw over the uncertainty samples: 90th percentile",
       [](const StudyResult&, const StudyRow& w) { return fixed(band_value(w.peak_fraction_band, &Band::p90), 6); }},
      {"step_s_p10", "step time over the uncertainty samples (best layout of each): 10th percentile",
       [](const StudyResult&, const StudyRow& w) { return fixed(band_value(w.step_band, &Band::p10), 6); }},
      {"step_s_median", "step time over the uncertainty samples: median",
       [](const StudyResult&, const StudyRow& w) { return fixed(band_value(w.step_band, &Band::p50), 6); }},
      {"step_s_p90", "step time over the uncertainty samples: 90th percentile",
       [](const StudyResult&, const StudyRow& w) { return fixed(band_value(w.step_band, &Band::p90), 6); }},
  };
  return kColumns;
}

// Appended where a study ranks more than the 4D layouts (pipelined ones among them), so that a 4D
// study's CSV keeps its columns.
const std::vector<Column>& pipeline_columns() {
  static const std::vector<Column> kColumns{
      {"strategy", "the chosen layout's strategy: 4d, megatron or fsdp",
       [](const StudyResult&, const StudyRow& w) -> Cell {
         return w.feasible ? Cell(std::string(to_string(w.best.layout.strategy))) : Cell(std::monostate{});
       }},
      {"pipeline_s", "a pipelined layout's last stage idle for its peers (the bubble) or waiting for transfers "
                     "between stages, priced alone, seconds",
       [](const StudyResult&, const StudyRow& w) {
         const StepBreakdown& alone = w.best.isolated.total() > Time::zero() ? w.best.isolated : w.best.step;
         return fixed(when_feasible(w, alone.pipeline.seconds()), 6);
       }},
      {"pipeline_transfer_s", "the part of pipeline_s spent waiting for transfers between stages, seconds",
       [](const StudyResult&, const StudyRow& w) {
         const StepBreakdown& alone = w.best.isolated.total() > Time::zero() ? w.best.isolated : w.best.step;
         return fixed(when_feasible(w, alone.pipeline_transfer.seconds()), 6);
       }},
      {"efficiency_from_bubble", "part of efficiency - 1 from the pipeline's bubble (pipeline_s - pipeline_transfer_s)",
       [](const StudyResult&, const StudyRow& w) { return fixed(when_feasible(w, w.decomposition.pipeline), 6); }},
      {"efficiency_from_stage_transfers", "part of efficiency - 1 from waiting for stage transfers (pipeline_transfer_s)",
       [](const StudyResult&, const StudyRow& w) {
         return fixed(when_feasible(w, w.decomposition.pipeline_transfer), 6);
       }},
  };
  return kColumns;
}

std::vector<const Column*> columns_of(const StudyResult& result) {
  std::vector<const Column*> out;
  for (const auto& c : columns()) out.push_back(&c);
  if (!result.spec.points.empty() && result.spec.points.front().strategies != std::vector<Strategy>{Strategy::four_d}) {
    for (const auto& c : pipeline_columns()) out.push_back(&c);
  }
  if (result.samples > 0) {
    for (const auto& c : band_columns()) out.push_back(&c);
  }
  return out;
}

// fmt without the 'L' specifier ignores the locale, so the bytes never depend on it.
std::string csv_cell(const Cell& cell) {
  struct Visitor {
    std::string operator()(std::monostate) const { return {}; }
    std::string operator()(const std::string& s) const { return csv_field(s); }
    std::string operator()(long long v) const { return fmt::format("{}", v); }
    std::string operator()(Fixed f) const {
      std::string text = fmt::format("{:.{}f}", f.value, f.decimals);
      // A value that rounds to zero prints without a sign.
      if (text.find_first_not_of("-0.") == std::string::npos && text.front() == '-') text.erase(0, 1);
      return text;
    }
  };
  return std::visit(Visitor{}, cell);
}

nlohmann::ordered_json json_cell(const Cell& cell) {
  struct Visitor {
    nlohmann::ordered_json operator()(std::monostate) const { return nullptr; }
    nlohmann::ordered_json operator()(const std::string& s) const { return s; }
    nlohmann::ordered_json operator()(long long v) const { return v; }
    nlohmann::ordered_json operator()(Fixed f) const { return f.value; }
  };
  return std::visit(Visitor{}, cell);
}

nlohmann::ordered_json options_json(const StepOptions& o) {
  return {{"precision", to_string(o.precision)},        {"recompute", o.recompute},
          {"overlap_all_reduce", o.overlap_all_reduce}, {"overlap_reduce_scatter", o.overlap_reduce_scatter},
          {"overlap_all_gather", o.overlap_all_gather}, {"overlap_data_parallel", o.overlap_data_parallel}};
}

nlohmann::ordered_json model_json(const ModelSpec& m) {
  nlohmann::ordered_json json{{"name", m.name},
                              {"layers", m.layers},
                              {"hidden", m.hidden},
                              {"heads", m.heads},
                              {"sequence_length", m.sequence_length},
                              {"vocabulary", m.vocabulary}};
  // The architecture, where it is not GPT-2's (every field, so the model can be written back).
  if (!m.gpt_style()) {
    json["kv_heads"] = m.kv_head_count(), json["ffn_hidden"] = m.ffn();
    json["activation"] = to_string(m.activation), json["norm"] = to_string(m.norm);
    json["position"] = to_string(m.position), json["tied_embeddings"] = m.tied_embeddings;
    json["biases"] = m.biases;
  }
  return json;
}

}  // namespace

const std::vector<std::string>& study_csv_columns() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const auto& c : columns()) names.emplace_back(c.name);
    return names;
  }();
  return kNames;
}

std::string format_study_csv(const StudyResult& result) {
  const auto cols = columns_of(result);
  std::string out;
  for (std::size_t i = 0; i < cols.size(); ++i) {
    out += (i ? "," : "");
    out += cols[i]->name;
  }
  out += '\n';
  for (const auto& row : result.rows) {
    for (std::size_t i = 0; i < cols.size(); ++i) {
      out += (i ? "," : "");
      out += csv_cell(cols[i]->cell(result, row));
    }
    out += '\n';
  }
  return out;
}

std::string format_study_json(const StudyResult& result) {
  nlohmann::ordered_json column_meanings = nlohmann::ordered_json::object();
  const auto cols = columns_of(result);
  for (const auto* c : cols) column_meanings[c->name] = c->meaning;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& row : result.rows) {
    nlohmann::ordered_json r = nlohmann::ordered_json::object();
    for (const auto* c : cols) r[c->name] = json_cell(c->cell(result, row));
    r["model_spec"] = model_json(row.point.model);
    rows.push_back(std::move(r));
  }
  const Headline headline = study_headline(result);
  const nlohmann::ordered_json doc{
      {"study", result.spec.name},
      {"study_file", result.spec.file},
      {"description", result.spec.description},
      {"rationale", result.spec.rationale},
      {"machine", result.machine.name},
      {"machine_file", result.machine.source_file},
      {"collective_library", result.machine.collective_libraries.front().name},
      {"machine_overrides", result.machine.overrides},
      {"options", options_json(result.spec.options)},
      {"evaluator", result.evaluator},
      {"top_k", result.top_k},
      {"headline",
       {{"figure", "as_written"},
        {"band", result.samples > 0 ? "10th-90th percentile of the uncertainty samples" : "none"},
        {"best_case_ranges", headline.best_case_ranges},
        {"error_ranges", headline.error_ranges},
        {"statement", headline.statement}}},
      {"uncertainty_samples", result.samples},
      {"seed", result.samples > 0 ? nlohmann::ordered_json(result.seed) : nlohmann::ordered_json(nullptr)},
      {"efficiency_definition", "sustained executed flop/s per device relative to the first feasible point"},
      {"weakscale_version", program_release()},
      {"git_commit", program_commit()},
      {"columns", column_meanings},
      {"rows", rows},
  };
  // Which strategies' layouts each point ranked, where a spec names more than the 4D ones.
  if (!result.spec.points.empty() && result.spec.points.front().strategies != std::vector<Strategy>{Strategy::four_d}) {
    nlohmann::ordered_json strategies = nlohmann::ordered_json::array();
    for (const Strategy st : result.spec.points.front().strategies) strategies.push_back(to_string(st));
    nlohmann::ordered_json with = doc;
    with["strategies"] = strategies;
    return with.dump(2) + "\n";
  }
  return doc.dump(2) + "\n";
}

std::filesystem::path write_study_csv(const StudyResult& result, const std::filesystem::path& out_dir) {
  return write_text_file(out_dir, result.spec.name + ".csv", format_study_csv(result));
}

std::filesystem::path write_study_json(const StudyResult& result, const std::filesystem::path& out_dir) {
  return write_text_file(out_dir, result.spec.name + ".json", format_study_json(result));
}

}  // namespace ws
