// `weakscale study <spec.yaml>`: runs a study and writes CSV, JSON, side tables and plots into
// --out. Tasks (points, samples, table rows) run on every core; under mpirun they are spread over
// the ranks and rank 0 writes. Outputs are the same bytes however the work is spread.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "sim/study/point_evaluation.hpp"

namespace ws::cli {

struct StudyArgs {
  std::string spec_file;
  std::string out_dir = "results";
  bool no_plot = false;
  int top_k = 0;  // 0: the spec's top_k (default 10)
  int samples = 0;
  std::uint64_t seed = 1;
  bool no_placement_routing = false;
  bool no_sensitivity = false;
  bool restart = false;
  std::string evaluator = "flow";  // or "closed-form" ("simulated", "analytic": older names)
  int simulate_top = kDefaultSimulatedLayouts;             // layouts of the analytic ranking the simulator re-ranks
  std::string library;  // "": the spec's library, or the machine file's default
  std::vector<std::string> settings;  // --set NAME=VALUE: uncertain parameters of the machine fixed
  int jobs = 0;  // threads per process; 0: every core (one per rank under mpirun with several ranks)
};

CLI::App* add_study_command(CLI::App& app, StudyArgs& args);

// `weakscale compare-studies A.json B.json ... --name NAME --out DIR`: the studies' best layouts side
// by side (one curve per study: a strategy per study for the strategies studies), drawn from their
// JSON into DIR/NAME.png and .svg (report/study/study_comparison.hpp).
struct CompareStudiesArgs {
  std::vector<std::string> files;
  std::string name;
  std::string out_dir = "results";
};
CLI::App* add_compare_studies_command(CLI::App& app, CompareStudiesArgs& args);
void run_compare_studies_command(const CompareStudiesArgs& args, std::ostream& out);
// Results and the summary go to `out`, progress to `progress` (a bar when it is a terminal).
// Returns whether any point of the study is feasible (false: the tables say why, no plots drawn).
// MPI ranks other than 0 return true.
bool run_study_command(const StudyArgs& args, const std::string& machines_dir, std::ostream& out,
                       std::ostream& progress);

}  // namespace ws::cli
