// `weakscale study <spec.yaml>`: runs a study and writes CSV, JSON and plots into --out.
#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <string>

namespace ws::cli {

struct StudyArgs {
  std::string spec_file;
  std::string out_dir = "results";
  bool no_plot = false;
};

CLI::App* add_study_command(CLI::App& app, StudyArgs& args);
// Results and the summary go to `out`, progress lines to `progress`.
void run_study_command(const StudyArgs& args, const std::string& machines_dir, std::ostream& out,
                       std::ostream& progress);

}  // namespace ws::cli
