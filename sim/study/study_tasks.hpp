// The work of a study as a fixed, ordered list of tasks (one point evaluation each), with the
// machine and step options each runs on and a key that names it in the partial file. Ranks take
// tasks round robin (task i on rank i mod size), so the split is deterministic.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/step/step_options.hpp"
#include "sim/machine/machine.hpp"
#include "sim/study/study_run.hpp"

namespace ws {

enum class TaskKind { point, placement_routing, sensitivity, sample };

struct StudyTask {
  TaskKind kind = TaskKind::point;
  int point = 0;      // index into spec.points
  int sample = 0;     // TaskKind::sample
  int parameter = 0;  // TaskKind::sensitivity: index into machine.uncertainty
  bool high = false;  // TaskKind::sensitivity: the high end of the range, else the low end
  NodeAllocation allocation = NodeAllocation::contiguous;  // TaskKind::placement_routing
  RoutingPolicy routing = RoutingPolicy::adaptive;         // TaskKind::placement_routing
  std::string key;    // "point 3", "sample 17 seed 42 point 3", ...: unique within a study
};

// Points first, then allocation x routing, sensitivity and samples, each in point order.
std::vector<StudyTask> plan_study_tasks(const StudySpec& spec, const Machine& machine,
                                        const StudyRunOptions& options);

// The machine and step options a task is evaluated with, and how many candidates it keeps.
Machine task_machine(const Machine& machine, const StudyTask& task, std::uint64_t seed);
StepOptions task_step_options(const StudySpec& spec, const StudyTask& task);
int task_top_k(const StudyTask& task, int top_k);

// 16 hex digits naming everything a task's result depends on besides its key: the points and
// step options of the spec, the machine file's bytes, the evaluator and k. Partial-file lines with
// another hash are ignored.
std::string study_hash(const StudySpec& spec, const Machine& machine, const std::string& evaluator, int top_k);

}  // namespace ws
