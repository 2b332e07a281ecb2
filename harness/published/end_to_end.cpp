// Reading the published-runs table and simulating each row.
#include "harness/published/end_to_end.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>
#include <map>
#include <optional>

#include "base/input_error.hpp"
#include "base/input_file.hpp"
#include "report/csv.hpp"
#include "sim/layout_search/layout_enumeration.hpp"
#include "sim/machine/machine_loader.hpp"
#include "sim/step/simulated_step.hpp"
#include "sim/study/model_input.hpp"
#include "sim/study/uncertainty.hpp"
#include "workload/flops.hpp"
#include "workload/memory.hpp"

namespace ws {
namespace {

constexpr const char* kRunColumns[] = {"machine",   "framework",  "model",      "layers",    "hidden",
                                    "heads",     "kv_heads",   "ffn_hidden", "vocabulary", "sequence",
                                    "family",    "precision",  "devices",    "nodes",     "tp",
                                    "pp",        "vpp",        "dp",         "zero_stage", "sequence_parallel",
                                    "micro_batch", "global_batch", "recompute", "measured", "unit",
                                    "definition", "source"};

const char* const kRunUnitNames[] = {"TFLOP/s per GCD", "TFLOP/s per GPU", "% of peak",     "samples/s total",
                              "tokens/s per GCD", "tokens/s per GPU", "tokens/s total", "PFLOP/s total",
                              "EFLOP/s total"};

struct Row {
  const std::string& path;
  int line;
  std::map<std::string, std::string> cells;

  const std::string& text(const char* column) const { return cells.at(column); }
  InputError error(const char* column, const std::string& expected) const {
    return InputError({path, line, column}, text(column), expected);
  }
  // A positive whole number of at most 2^31 - 1 (products of two stay exact), or none for an
  // empty cell.
  std::optional<long long> count(const char* column) const {
    const std::string& t = text(column);
    if (t.empty()) return std::nullopt;
    long long v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || end != t.data() + t.size() || v <= 0 || v > std::numeric_limits<int>::max())
      throw error(column, "a positive whole number up to 2147483647, or nothing");
    return v;
  }
  std::optional<long long> count_or_zero(const char* column) const {
    if (text(column) == "0") return 0;
    return count(column);
  }
};

double number(const Row& row, const char* column) {
  const std::string& t = row.text(column);
  double v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size() || !(v > 0) || !std::isfinite(v))
    throw row.error(column, "a positive finite number");
  return v;
}

PublishedRun read_row(const Row& row) {
  PublishedRun r;
  r.line = row.line;
  r.file = row.path;
  r.machine = row.text("machine"), r.framework = row.text("framework"), r.model_name = row.text("model");
  r.unit = row.text("unit"), r.definition = row.text("definition"), r.source = row.text("source");
  r.measured = number(row, "measured");
  if (std::find(std::begin(kRunUnitNames), std::end(kRunUnitNames), r.unit) == std::end(kRunUnitNames)) throw row.error("unit", kRunUnits);
  const std::string& precision = row.text("precision");
  if (!precision.empty()) {
    const auto p = parse_precision(precision);
    if (!p) throw row.error("precision", std::string(kPrecisionNames) + ", or nothing");
    r.precision = *p;
  }
  const std::string& family = row.text("family");
  if (family != "gpt" && family != "llama") throw row.error("family", "gpt or llama");
  const std::string& recompute = row.text("recompute");
  if (recompute != "" && recompute != "full" && recompute != "selective" && recompute != "none")
    throw row.error("recompute", "full, selective, none, or nothing");
  const std::string& sp = row.text("sequence_parallel");
  if (sp != "" && sp != "true" && sp != "false") throw row.error("sequence_parallel", "true, false, or nothing");

  std::vector<std::string> missing;
  auto need = [&](const char* column) {
    const auto v = row.count(column);
    if (!v) missing.push_back(column);
    return v.value_or(1);
  };
  CustomModelFields f;
  f.layers = need("layers"), f.hidden = need("hidden"), f.heads = need("heads");
  f.vocabulary = need("vocabulary"), f.sequence_length = need("sequence");
  f.family = family;
  f.kv_heads = row.count("kv_heads").value_or(0), f.ffn_hidden = row.count("ffn_hidden").value_or(0);
  const long long tp = need("tp"), pp = need("pp"), dp = need("dp"), micro = need("micro_batch");
  const long long vpp = row.count("vpp").value_or(1);
  r.global_batch = need("global_batch");
  r.devices = static_cast<int>(row.count("devices").value_or(0));
  if (r.devices == 0) missing.push_back("devices");
  const long long zero = row.count_or_zero("zero_stage").value_or(0);
  if (zero > 3) throw row.error("zero_stage", "a ZeRO stage: 0, 1, 2 or 3, or nothing");
  if (precision.empty()) missing.push_back("precision");
  if (recompute.empty()) missing.push_back("recompute");
  if (!missing.empty()) {
    r.missing = "no " + fmt::format("{}", fmt::join(missing, ", "));
    return r;
  }
  r.model = custom_model(f, InputLocation{row.path, row.line, ""});
  r.model.name = r.model_name;
  // "selective" recomputes attention only; priced without recomputation (its flops are small).
  r.recompute = recompute == "full";
  const long long per_replica = dp * micro;
  if (r.global_batch % per_replica != 0) {
    r.missing = fmt::format("global batch {} not divisible by dp x micro_batch = {}", r.global_batch, per_replica);
    return r;
  }
  r.layout = megatron_layout(static_cast<int>(tp), static_cast<int>(pp), static_cast<int>(vpp), static_cast<int>(dp),
                             static_cast<int>(r.global_batch / per_replica), static_cast<int>(zero), sp == "true");
  if (!holds_devices(r.layout, r.devices))
    throw row.error("devices", fmt::format("tp x pp x dp = {} x {} x {} devices", tp, pp, dp));
  if (const long long nodes = row.count("nodes").value_or(0); nodes > 0) {
    if (r.devices % nodes != 0)
      throw row.error("nodes", fmt::format("a node count that divides the {} devices (ranks per node alike)", r.devices));
    r.ranks_per_node = static_cast<int>(r.devices / nodes);
  }
  if (const std::string problem = layout_problem(r.model, Batch{r.global_batch}, r.layout); !problem.empty())
    r.missing = "layout " + to_string(r.layout) + " cannot run the model: " + problem;
  return r;
}

}  // namespace

std::vector<PublishedRun> load_published_runs(const std::string& path) {
  // A regular file of bounded size: a FIFO or device is refused, never waited on.
  std::istringstream in(read_input_file(path, "a published-runs CSV", 16 * 1024 * 1024));
  std::string line;
  std::vector<std::string> header;
  std::vector<PublishedRun> runs;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line.front() == '#') continue;
    const std::vector<std::string> fields = split_csv_line(line);
    if (header.empty()) {
      header = fields;
      for (const char* c : kRunColumns)
        if (std::find(header.begin(), header.end(), c) == header.end())
          throw InputError({path, number, c}, "", "a header with every column of benchmarks/end-to-end/README.md");
      continue;
    }
    if (fields.size() != header.size())
      throw InputError({path, number, ""}, fmt::format("{} fields", fields.size()),
                       fmt::format("{} fields, as the header", header.size()));
    Row row{path, number, {}};
    for (std::size_t i = 0; i < header.size(); ++i) row.cells[header[i]] = fields[i];
    runs.push_back(read_row(row));
  }
  if (header.empty()) throw InputError({path, 0, ""}, "", "a header line and rows");
  return runs;
}

double simulated_throughput(const Machine& machine, const PublishedRun& run, Time* step_out) {
  SimulatedStepConfig config;
  config.model = run.model;
  config.layout = run.layout;
  config.sequences = run.global_batch;
  config.options.precision = run.precision;
  config.options.recompute = run.recompute;
  config.options.ranks_per_node = run.ranks_per_node;
  config.collectives = CollectiveModel::flow;
  const SimulatedStep step = simulate_step(machine, config);
  if (step_out != nullptr) *step_out = step.step;
  const double seconds = step.step.seconds();
  const double executed = executed_flops_per_step(run.model, Batch{run.global_batch}, run.recompute) / seconds;
  const double tokens = static_cast<double>(run.global_batch) * static_cast<double>(run.model.sequence_length) / seconds;
  const std::string& u = run.unit;
  if (u == "TFLOP/s per GCD" || u == "TFLOP/s per GPU") return executed / run.devices * 1e-12;
  if (u == "% of peak") return 100.0 * executed / run.devices / peak(machine.device, run.precision).flops();
  if (u == "samples/s total") return static_cast<double>(run.global_batch) / seconds;
  if (u == "tokens/s per GCD" || u == "tokens/s per GPU") return tokens / run.devices;
  if (u == "tokens/s total") return tokens;
  if (u == "PFLOP/s total") return executed * 1e-15;
  return executed * 1e-18;  // EFLOP/s total (load_published_runs checked the unit)
}

std::vector<RunComparison> compare_runs_with_published(const std::vector<PublishedRun>& runs,
                                                       const std::string& machines_dir, int band_samples) {
  std::vector<RunComparison> out;
  std::map<std::string, Machine> machines;
  for (const PublishedRun& run : runs) {
    RunComparison c;
    c.run = run;
    if (!run.missing.empty()) {
      out.push_back(std::move(c));
      continue;
    }
    auto it = machines.find(run.machine);
    if (it == machines.end()) it = machines.emplace(run.machine, load_machine_by_name(run.machine, machines_dir)).first;
    const Machine& machine = it->second;
    if (run.ranks_per_node > machine.node.devices)
      throw InputError({run.file, run.line, "nodes"}, std::to_string(run.devices / run.ranks_per_node),
                       fmt::format("at least devices / {} (the devices of a {} node)", machine.node.devices, machine.name));
    c.predicted = simulated_throughput(machine, run, &c.step);
    c.simulated = true;
    if (band_samples > 0) {
      std::vector<double> sampled;
      for (int s = 0; s < band_samples; ++s) sampled.push_back(simulated_throughput(sampled_machine(machine, 1, s), run));
      const PredictionBand band = prediction_band(sampled, c.predicted);
      c.band_low = band.low;
      c.band_high = band.high;
    }
    c.error = c.predicted / run.measured - 1.0;
    c.fits_memory = estimate_memory(run.model, Batch{run.global_batch}, run.layout, element_bytes(run.precision), run.recompute).total_bytes() <=
                    machine.device.memory_capacity_bytes;
    out.push_back(std::move(c));
  }
  return out;
}

namespace {

double log_factor_at(int i) {
  return std::log(kComputeScaleLow) +
         (std::log(kComputeScaleHigh) - std::log(kComputeScaleLow)) * i / (kComputeScaleGrid - 1);
}

// log throughput at log factor x, piecewise linear between the grid's points (clamped at its ends).
double interpolate(const std::vector<double>& log_throughput, double x) {
  const double step = log_factor_at(1) - log_factor_at(0);
  const double at = std::clamp((x - log_factor_at(0)) / step, 0.0, static_cast<double>(kComputeScaleGrid - 1));
  const int i = std::min(static_cast<int>(at), kComputeScaleGrid - 2);
  return log_throughput[static_cast<std::size_t>(i)] +
         (at - i) * (log_throughput[static_cast<std::size_t>(i) + 1] - log_throughput[static_cast<std::size_t>(i)]);
}

// The log factor minimising the squared log errors of `rows` (indices into curves / measured),
// searched on a grid 100 times finer than the simulated one: deterministic, and the interpolated
// error is smooth enough that the finer grid's step (0.12 % in factor) is below any figure printed.
double best_log_factor(const std::vector<std::vector<double>>& curves, const std::vector<double>& log_measured,
                       const std::vector<std::size_t>& rows) {
  constexpr int kFine = 100 * (kComputeScaleGrid - 1);
  double best_x = log_factor_at(0), best = std::numeric_limits<double>::infinity();
  for (int k = 0; k <= kFine; ++k) {
    const double x = log_factor_at(0) + (log_factor_at(kComputeScaleGrid - 1) - log_factor_at(0)) * k / kFine;
    double sum = 0;
    for (const std::size_t r : rows) {
      const double e = interpolate(curves[r], x) - log_measured[r];
      sum += e * e;
    }
    if (sum < best) best = sum, best_x = x;
  }
  return best_x;
}

}  // namespace

std::vector<ComputeScaleFit> fit_compute_scale(const std::vector<RunComparison>& comparisons,
                                               const std::string& machines_dir) {
  std::map<std::string, std::vector<std::size_t>> by_machine;
  for (std::size_t i = 0; i < comparisons.size(); ++i)
    if (comparisons[i].simulated) by_machine[comparisons[i].run.machine].push_back(i);
  std::vector<ComputeScaleFit> fits;
  for (const auto& [name, rows] : by_machine) {
    if (rows.size() < 2) continue;
    const Machine machine = load_machine_by_name(name, machines_dir);
    ComputeScaleFit fit;
    fit.machine = name;
    fit.rows = rows;
    fit.as_written = nominal_value(machine, UncertainParameter::gemm_efficiency_scale).number;
    for (const UncertaintyRange& range : machine.uncertainty)
      if (range.parameter == UncertainParameter::gemm_efficiency_scale)
        fit.range_low = low_value(range).number, fit.range_high = high_value(range).number;
    std::vector<std::vector<double>> curves(rows.size());
    std::vector<double> log_measured(rows.size());
    for (int g = 0; g < kComputeScaleGrid; ++g) {
      const Machine scaled = with_value(machine, UncertainParameter::gemm_efficiency_scale,
                                        ParameterValue{std::exp(log_factor_at(g)), Time::zero()});
      for (std::size_t k = 0; k < rows.size(); ++k)
        curves[k].push_back(std::log(simulated_throughput(scaled, comparisons[rows[k]].run)));
    }
    std::vector<std::size_t> all(rows.size());
    for (std::size_t k = 0; k < rows.size(); ++k) {
      all[k] = k;
      log_measured[k] = std::log(comparisons[rows[k]].run.measured);
    }
    const double x = best_log_factor(curves, log_measured, all);
    fit.fitted = std::exp(x);
    for (std::size_t k = 0; k < rows.size(); ++k) {
      fit.fitted_predicted.push_back(std::exp(interpolate(curves[k], x)));
      std::vector<std::size_t> others;
      for (std::size_t j = 0; j < rows.size(); ++j)
        if (j != k) others.push_back(j);
      fit.held_out_predicted.push_back(std::exp(interpolate(curves[k], best_log_factor(curves, log_measured, others))));
    }
    fits.push_back(std::move(fit));
  }
  return fits;
}

}  // namespace ws
