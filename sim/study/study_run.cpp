#include "sim/study/study_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "base/input_error.hpp"
#include "base/ordered_tasks.hpp"
#include "sim/machine/machine_loader.hpp"
#include "sim/study/study_tasks.hpp"
#include "sim/study/task_records.hpp"
#include "sim/study/uncertainty.hpp"

namespace ws {
namespace {

double flops_per_device(const PointEvaluation& e, const StudyPoint& point) {
  return e.feasible ? e.candidates.front().sustained_flops_per_s / static_cast<double>(point.devices) : 0.0;
}

// Efficiency of every point of one series relative to its first feasible point (0 if infeasible).
std::vector<double> series_efficiency(const StudySpec& spec, const std::vector<const PointEvaluation*>& series) {
  std::vector<double> out(series.size(), 0.0);
  double reference = 0;
  for (std::size_t i = 0; i < series.size(); ++i) {
    if (!series[i] || !series[i]->feasible) continue;
    const double f = flops_per_device(*series[i], spec.points[i]);
    if (reference <= 0) reference = f;
    out[i] = reference > 0 ? f / reference : 0;
  }
  return out;
}

// The step's parts: computation, per-group exposed communication and skew of the collectives
// alone (the isolated step when the flow network priced it), and the contention on top.
struct StepParts {
  double step = 0, compute = 0, x = 0, y = 0, z = 0, data = 0, skew = 0, contention = 0, bubble = 0, transfers = 0;
};

StepParts step_parts(const LayoutEstimate& e) {
  const StepBreakdown& alone = e.isolated.total() > Time::zero() ? e.isolated : e.step;
  StepParts p;
  p.step = e.step.total().seconds();
  p.compute = e.step.compute.seconds();
  p.x = alone.exposed_x.seconds();
  p.y = alone.exposed_y.seconds();
  p.z = alone.exposed_z.seconds();
  p.data = alone.exposed_data.seconds();
  p.skew = alone.skew.seconds();
  p.bubble = (alone.pipeline - alone.pipeline_transfer).seconds();
  p.transfers = alone.pipeline_transfer.seconds();
  p.contention = p.step - alone.total().seconds();
  return p;
}

EfficiencyDecomposition decompose(const LayoutEstimate& point, const LayoutEstimate& first, int devices,
                                  int first_devices) {
  const StepParts a = step_parts(point), b = step_parts(first);
  // Executed flops per device per second of computation.
  const double rate = point.sustained_flops_per_s * a.step / devices / a.compute;
  const double first_rate = first.sustained_flops_per_s * b.step / first_devices / b.compute;
  EfficiencyDecomposition d;
  d.compute_efficiency = rate / first_rate;
  d.compute = d.compute_efficiency - 1.0;
  const double busy = b.compute / b.step;
  auto term = [&](double part_a, double part_b) { return -d.compute_efficiency * (part_a / a.step - part_b / b.step) / busy; };
  d.x = term(a.x, b.x);
  d.y = term(a.y, b.y);
  d.z = term(a.z, b.z);
  d.data = term(a.data, b.data);
  d.skew = term(a.skew, b.skew);
  d.contention = term(a.contention, b.contention);
  d.pipeline = term(a.bubble, b.bubble);
  d.pipeline_transfer = term(a.transfers, b.transfers);
  return d;
}

std::string point_line(std::size_t index, std::size_t count, const Machine& machine, const StudyPoint& point,
                       const PointEvaluation& e) {
  const int per_node = ranks_on_a_node(machine, point.devices, point.ranks_per_node);
  const std::string shape =
      point.ranks_per_node > 0
          ? fmt::format(" ({} nodes x {} per node)", (point.devices + per_node - 1) / per_node, per_node)
          : "";
  const std::string head = fmt::format("[{}/{}] {} {} devices{} {}", index + 1, count, machine.name, point.devices,
                                       shape, point.model.name);
  if (!e.feasible) return fmt::format("{}: infeasible: {}", head, e.reason);
  return fmt::format("{}: best {}, {:.3f} s", head, to_string(e.candidates.front().layout),
                     e.candidates.front().step.total().seconds());
}

void check_points_fit(const StudySpec& spec, const Machine& machine) {
  for (std::size_t i = 0; i < spec.points.size(); ++i) {
    const StudyPoint& point = spec.points[i];
    if (point.devices > machine.total_devices()) {
      throw InputError(InputLocation{spec.file, point.line, fmt::format("points[{}].devices", i)},
                       std::to_string(point.devices),
                       fmt::format("at most the {} devices of {}", machine.total_devices(), machine.name));
    }
    if (point.ranks_per_node > machine.node.devices) {
      throw InputError(InputLocation{spec.file, point.line, fmt::format("points[{}].ranks_per_node", i)},
                       std::to_string(point.ranks_per_node),
                       fmt::format("1 to the {} devices of a {} node", machine.node.devices, machine.name));
    }
    const int per_node = ranks_on_a_node(machine, point.devices, point.ranks_per_node);
    if (point.devices > static_cast<long long>(per_node) * machine.nodes) {
      throw InputError(InputLocation{spec.file, point.line, fmt::format("points[{}].devices", i)},
                       std::to_string(point.devices),
                       fmt::format("at most the {} nodes x {} ranks per node of {}", machine.nodes, per_node,
                                   machine.name));
    }
  }
}

// Every task's result by key, on rank 0: its own and those the other ranks send.
std::map<std::string, PointEvaluation> run_tasks(const StudySpec& spec, const Machine& machine,
                                                 const StudyRunOptions& options, const std::vector<StudyTask>& tasks,
                                                 const std::string& hash) {
  const RankGroup& ranks = options.ranks;
  const int size = std::max(ranks.size, 1);
  std::map<std::string, PointEvaluation> done;
  if (!options.partial_file.empty() && options.resume) done = load_task_records(options.partial_file, hash);

  std::vector<const StudyTask*> mine;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    if (static_cast<int>(i % static_cast<std::size_t>(size)) == ranks.rank) mine.push_back(&tasks[i]);
  }
  // Computed on options.jobs threads, each with its own evaluator, and recorded in task order: the
  // partial file, the progress lines and the first error are those of a serial run.
  std::vector<PointEvaluator> evaluators;
  const int jobs = std::max(1, std::min(options.jobs, static_cast<int>(mine.size())));
  for (int w = 0; w < jobs; ++w) evaluators.push_back(options.evaluator.make_worker());
  std::string share;
  std::map<std::string, PointEvaluation> results;
  int finished = 0;
  struct Outcome {
    PointEvaluation result;
    bool loaded = false;
  };
  const std::function<Outcome(std::size_t, int)> compute = [&](std::size_t i, int worker) {
    const StudyTask& task = *mine[i];
    if (const auto it = done.find(task.key); it != done.end()) return Outcome{it->second, true};
    const Machine m = task_machine(machine, task, options.seed);
    return Outcome{evaluators[static_cast<std::size_t>(worker)](m, spec.points[static_cast<std::size_t>(task.point)],
                                                                task_step_options(spec, task),
                                                                task_top_k(task, options.top_k)),
                   false};
  };
  const std::function<void(std::size_t, Outcome&&)> record = [&](std::size_t i, Outcome&& outcome) {
    const StudyTask* task = mine[i];
    PointEvaluation& result = outcome.result;
    StudyProgressEvent event;
    event.total = static_cast<int>(mine.size());
    event.loaded = outcome.loaded;
    const std::string line = format_task_record(hash, task->key, result);
    if (!event.loaded && !options.partial_file.empty()) append_task_record(options.partial_file, line);
    share += line;
    event.done = ++finished;
    const auto& point = spec.points[static_cast<std::size_t>(task->point)];
    event.line = fmt::format("{}: {}", task->key,
                             result.feasible ? fmt::format("best {}, {:.3f} s", to_string(result.candidates.front().layout),
                                                           result.candidates.front().step.total().seconds())
                                             : std::string("infeasible"));
    if (task->kind == TaskKind::point) {
      event.point_line = point_line(static_cast<std::size_t>(task->point), spec.points.size(), machine, point, result);
    }
    results.emplace(task->key, std::move(result));
    if (options.progress) options.progress(event);
  };
  for_each_ordered<Outcome>(mine.size(), jobs, compute, record);
  if (size == 1 || !ranks.gather_to_root) return results;
  const std::vector<std::string> shares = ranks.gather_to_root(share);
  results.clear();
  for (const auto& text : shares) results.merge(parse_task_records(text, hash));
  return results;
}

StudyRow make_row(const StudyPoint& point, const PointEvaluation& e) {
  StudyRow row;
  row.point = point;
  row.feasible = e.feasible;
  row.reason = e.reason;
  row.layouts_valid = e.layouts_valid;
  row.layouts_fitting = e.layouts_fitting;
  row.candidates = e.candidates;
  if (e.feasible) row.best = e.candidates.front();
  return row;
}

}  // namespace

double SensitivityRow::effect() const {
  return std::max({std::abs(efficiency_low), std::abs(efficiency_high), std::abs(peak_fraction_low),
                   std::abs(peak_fraction_high)});
}

double flops_per_device(const StudyRow& row) {
  return row.best.sustained_flops_per_s / static_cast<double>(row.point.devices);
}

std::optional<StudyResult> execute_study(const StudySpec& spec, const Machine& file_machine,
                                         const StudyRunOptions& options) {
  const Machine machine = study_machine(spec, file_machine);
  check_points_fit(spec, machine);
  const std::vector<StudyTask> tasks = plan_study_tasks(spec, machine, options);
  const std::string hash = study_hash(spec, machine, options.evaluator.name, options.top_k);
  const auto results = run_tasks(spec, machine, options, tasks, hash);
  if (options.ranks.rank != 0) return std::nullopt;

  auto result_of = [&](const StudyTask& task) -> const PointEvaluation& {
    const auto it = results.find(task.key);
    if (it == results.end()) throw std::runtime_error("study: no result for task '" + task.key + "'");
    return it->second;
  };
  // Tasks of one kind come in point order, so each series is a run of consecutive tasks.
  const std::size_t points = spec.points.size();
  auto series_at = [&](std::size_t first) {
    std::vector<const PointEvaluation*> s;
    for (std::size_t i = 0; i < points; ++i) s.push_back(&result_of(tasks[first + i]));
    return s;
  };

  StudyResult result;
  result.spec = spec;
  result.machine = machine;
  result.evaluator = options.evaluator.name;
  result.top_k = options.top_k;
  result.seed = options.seed;
  const auto nominal = series_at(0);
  const auto efficiency = series_efficiency(spec, nominal);
  const StudyRow* first = nullptr;
  for (std::size_t i = 0; i < points; ++i) {
    result.rows.push_back(make_row(spec.points[i], *nominal[i]));
    result.rows.back().efficiency = efficiency[i];
  }
  for (const StudyRow& row : result.rows) {
    if (row.feasible && first == nullptr) first = &row;
  }
  for (StudyRow& row : result.rows) {
    if (row.feasible && first != nullptr)
      row.decomposition = decompose(row.best, first->best, row.point.devices, first->point.devices);
  }

  std::vector<std::vector<double>> eff(points), peak(points), step(points);
  for (std::size_t t = points; t < tasks.size(); ++t) {
    const StudyTask& task = tasks[t];
    if (task.kind == TaskKind::placement_routing) {
      const auto& e = result_of(task);
      PlacementRoutingRow row{task.point, task.allocation, task.routing, e.feasible, {}};
      if (e.feasible) row.best = e.candidates.front();
      result.placement_routing.push_back(row);
    } else if (task.point == 0 && task.kind == TaskKind::sensitivity && task.high) {
      const auto& range = machine.uncertainty[static_cast<std::size_t>(task.parameter)];
      SensitivityRow row;
      row.range = range;
      row.nominal = format_value(range.parameter, nominal_value(machine, range));
      const auto low = series_at(t - points), high = series_at(t);
      const double eff_nominal = efficiency.back();
      const double peak_nominal = result.rows.back().feasible ? result.rows.back().best.hardware_peak_fraction : 0;
      auto peak_of = [](const PointEvaluation* e) { return e->feasible ? e->candidates.front().hardware_peak_fraction : 0; };
      row.efficiency_low = series_efficiency(spec, low).back() - eff_nominal;
      row.efficiency_high = series_efficiency(spec, high).back() - eff_nominal;
      row.peak_fraction_low = peak_of(low.back()) - peak_nominal;
      row.peak_fraction_high = peak_of(high.back()) - peak_nominal;
      result.sensitivity.push_back(row);
    } else if (task.point == 0 && task.kind == TaskKind::sample) {
      const auto sample = series_at(t);
      const auto sample_eff = series_efficiency(spec, sample);
      for (std::size_t i = 0; i < points; ++i) {
        if (!sample[i]->feasible) continue;
        eff[i].push_back(sample_eff[i]);
        peak[i].push_back(sample[i]->candidates.front().hardware_peak_fraction);
        step[i].push_back(sample[i]->candidates.front().step.total().seconds());
      }
      ++result.samples;
    }
  }
  auto band = [](const std::vector<double>& v) { return Band{percentile(v, 0.1), percentile(v, 0.5), percentile(v, 0.9)}; };
  for (std::size_t i = 0; i < points && result.samples > 0; ++i) {
    result.rows[i].samples_feasible = static_cast<int>(eff[i].size());
    if (eff[i].empty()) continue;
    result.rows[i].efficiency_band = band(eff[i]);
    result.rows[i].peak_fraction_band = band(peak[i]);
    result.rows[i].step_band = band(step[i]);
  }
  // Largest effect first; equal effects keep the machine file's order.
  std::stable_sort(result.sensitivity.begin(), result.sensitivity.end(),
                   [](const SensitivityRow& a, const SensitivityRow& b) { return a.effect() > b.effect(); });
  return result;
}

StudyResult run_study(const StudySpec& spec, const Machine& machine, const StudyProgress& progress) {
  StudyRunOptions options;
  if (progress) {
    options.progress = [&](const StudyProgressEvent& e) {
      if (!e.point_line.empty()) progress(e.point_line);
    };
  }
  return *execute_study(spec, machine, options);
}

StudyResult run_study(const StudySpec& spec, const std::string& machines_dir, const StudyProgress& progress) {
  return run_study(spec, load_machine_by_name(spec.machine, machines_dir), progress);
}

}  // namespace ws
