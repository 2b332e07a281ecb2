#include "sim/cli/study_command.hpp"

#include <ostream>

#include "sim/study/study_plots.hpp"
#include "sim/study/study_run.hpp"
#include "sim/study/study_spec.hpp"
#include "sim/study/study_summary.hpp"
#include "sim/study/study_writers.hpp"

namespace ws::cli {

CLI::App* add_study_command(CLI::App& app, StudyArgs& a) {
  CLI::App* study = app.add_subcommand("study", "Run a weak-scaling study: benchmarks/studies/<name>.yaml");
  study->add_option("spec", a.spec_file, "study spec (YAML)")->required();
  study->add_option("--out", a.out_dir, "directory for <name>.csv/.json/.png/.svg")->capture_default_str();
  study->add_flag("--no-plot", a.no_plot, "write CSV and JSON only (no gnuplot needed)");
  return study;
}

void run_study_command(const StudyArgs& a, const std::string& machines_dir, std::ostream& out,
                       std::ostream& progress) {
  const StudySpec spec = load_study_spec(a.spec_file);
  const StudyResult result =
      run_study(spec, machines_dir, [&](const std::string& line) { progress << line << std::endl; });
  out << format_study_summary(result) << "\n";
  out << "wrote " << write_study_csv(result, a.out_dir).string() << "\n";
  out << "wrote " << write_study_json(result, a.out_dir).string() << "\n";
  if (!a.no_plot) {
    for (const auto& file : plot_study(result, a.out_dir)) out << "wrote " << file.string() << "\n";
  }
}

}  // namespace ws::cli
