// A weak-scaling study as written in benchmarks/studies/<name>.yaml: one machine, one set of step
// options, and the (devices, model, batch) points to evaluate, validated strictly on load.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/input_error.hpp"
#include "workload/layout.hpp"
#include "workload/model.hpp"
#include "sim/machine/machine.hpp"
#include "sim/step/step_options.hpp"

namespace ws {

struct StudyPoint {
  int devices = 0;
  ModelSpec model;
  Batch batch;
  int line = 0;  // where the point is written, for messages about it
  // Pinned (points[i].layout): the point prices this layout alone instead of searching every one,
  // e.g. the layout a published run used. Checked on load: it holds `devices` and can run the model.
  std::optional<Layout> layout;
  // Whose layouts the point ranks (the spec's `strategies`: 4d, megatron, fsdp; 4D alone by default).
  std::vector<Strategy> strategies{Strategy::four_d};
  // points[i].ranks_per_node: ranks on each of the job's nodes, its first devices (srun
  // --ntasks-per-node); 0 (not given): every device of each node. Checked against the machine when
  // the study runs.
  int ranks_per_node = 0;
};

struct StudySpec {
  std::string name;         // output files are <name>.csv etc.; starts with the machine's name
  std::string file;         // where the spec was read from ("" when parsed from text)
  std::string machine;      // machine name ("frontier") or path to a machine file
  std::string description;  // optional, copied into the JSON results
  std::string rationale;    // optional: why these triples, copied into the JSON results
  // Optional: the machine's collective library to price with instead of its default (the first);
  // where the spec names it, for the error when the machine has no such library.
  std::string library;
  InputLocation library_at;
  StepOptions options;
  int top_k = 10;  // layouts kept per point in the candidates table
  std::vector<StudyPoint> points;  // at least one, devices non-decreasing
};

// `file` names the spec in errors and gives the default name (its stem).
StudySpec parse_study_spec(const std::string& yaml_text, const std::string& file);
StudySpec load_study_spec(const std::string& path);

// The machine a study runs on: `machine` with the spec's collective library as its default.
// Throws InputError (where the library is named, key "library", the allowed names) when the
// machine has no library of that name.
Machine study_machine(const StudySpec& spec, Machine machine);

// The machine's short name as used in study names: "frontier" for "frontier" and for
// "machines/frontier.yaml".
std::string machine_short_name(const std::string& machine_name_or_path);

}  // namespace ws
