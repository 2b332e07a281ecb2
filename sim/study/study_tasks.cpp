#include "sim/study/study_tasks.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "base/fnv1a.hpp"
#include "report/text_file.hpp"
#include "sim/study/uncertainty.hpp"

namespace ws {
namespace {


std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

constexpr RoutingPolicy kRoutings[] = {RoutingPolicy::minimal, RoutingPolicy::non_minimal, RoutingPolicy::adaptive};
constexpr NodeAllocation kAllocations[] = {NodeAllocation::contiguous, NodeAllocation::scattered};

}  // namespace

std::vector<StudyTask> plan_study_tasks(const StudySpec& spec, const Machine& machine,
                                        const StudyRunOptions& options) {
  std::vector<StudyTask> tasks;
  const int points = static_cast<int>(spec.points.size());
  for (int i = 0; i < points; ++i) {
    StudyTask t;
    t.point = i;
    t.key = fmt::format("point {}", i);
    tasks.push_back(t);
  }
  if (options.placement_routing) {
    for (int i = std::max(0, points - std::max(options.placement_points, 0)); i < points; ++i) {
      for (const auto allocation : kAllocations) {
        for (const auto routing : kRoutings) {
          StudyTask t;
          t.kind = TaskKind::placement_routing;
          t.point = i;
          t.allocation = allocation;
          t.routing = routing;
          t.key = fmt::format("placement {} routing {} point {}", to_string(allocation), to_string(routing), i);
          tasks.push_back(t);
        }
      }
    }
  }
  if (options.sensitivity) {
    for (std::size_t p = 0; p < machine.uncertainty.size(); ++p) {
      for (const bool high : {false, true}) {
        for (int i = 0; i < points; ++i) {
          StudyTask t;
          t.kind = TaskKind::sensitivity;
          t.point = i;
          t.parameter = static_cast<int>(p);
          t.high = high;
          t.key = fmt::format("sensitivity {} {} point {}", range_label(machine.uncertainty[p]),
                              high ? "high" : "low", i);
          tasks.push_back(t);
        }
      }
    }
  }
  if (!machine.uncertainty.empty()) {
    for (int s = 0; s < options.samples; ++s) {
      for (int i = 0; i < points; ++i) {
        StudyTask t;
        t.kind = TaskKind::sample;
        t.point = i;
        t.sample = s;
        t.key = fmt::format("sample {} seed {} point {}", s, options.seed, i);
        tasks.push_back(t);
      }
    }
  }
  return tasks;
}

Machine task_machine(const Machine& machine, const StudyTask& task, std::uint64_t seed) {
  switch (task.kind) {
    case TaskKind::point: return machine;
    case TaskKind::placement_routing: {
      Machine m = machine;
      m.network.routing = task.routing;
      return m;
    }
    case TaskKind::sensitivity: {
      const auto& range = machine.uncertainty[static_cast<std::size_t>(task.parameter)];
      return with_value(machine, range, task.high ? high_value(range) : low_value(range));
    }
    case TaskKind::sample: return sampled_machine(machine, seed, task.sample);
  }
  return machine;
}

StepOptions task_step_options(const StudySpec& spec, const StudyTask& task) {
  StepOptions o = spec.options;
  o.ranks_per_node = spec.points[static_cast<std::size_t>(task.point)].ranks_per_node;
  if (task.kind == TaskKind::placement_routing) o.allocation = task.allocation;
  return o;
}

int task_top_k(const StudyTask& task, int top_k) { return task.kind == TaskKind::point ? std::max(top_k, 1) : 1; }

std::string study_hash(const StudySpec& spec, const Machine& machine, const std::string& evaluator, int top_k) {
  const StepOptions& o = spec.options;
  // The program's version and commit: another build may compute other numbers.
  std::string canon = fmt::format("program {}\nevaluator {}\ntop_k {}\nmachine {}\nlibrary {}\n", program_version(),
                                  evaluator, top_k, machine.name, machine.collective_libraries.front().name);
  canon += fmt::format("options {} {} {} {} {} {} {}\n", to_string(o.precision), o.recompute, o.overlap_all_reduce,
                       o.overlap_reduce_scatter, o.overlap_all_gather, o.overlap_data_parallel,
                       to_string(o.allocation));
  for (const auto& p : spec.points) {
    const ModelSpec& m = p.model;
    canon += fmt::format("point {} {} {} {} {} {} {} {} {}", p.devices, m.name, m.layers, m.hidden, m.heads,
                         m.sequence_length, m.vocabulary, m.min_tensor_parallel, p.batch.sequences);
    // The architecture, where it is not GPT-2's (GPT points keep the hashes they had).
    if (!m.gpt_style())
      canon += fmt::format(" arch {} {} {} {} {} {} {}", m.kv_head_count(), m.ffn(), to_string(m.activation),
                           to_string(m.norm), to_string(m.position), m.tied_embeddings, m.biases);
    if (p.ranks_per_node > 0) canon += fmt::format(" ranks_per_node {}", p.ranks_per_node);
    canon += p.layout ? " layout " + to_string(*p.layout) + "\n" : "\n";
  }
  for (const std::string& setting : machine.overrides) canon += "set " + setting + "\n";
  // The machine file itself: any edit to it invalidates what was computed from it.
  canon += file_bytes(machine.source_file);
  return fmt::format("{:016x}", fnv1a64(canon));
}

}  // namespace ws
