// Studies side by side: the best layout of each strategy at each point of the same series, one curve
// per study (benchmarks/studies/<machine>-strategies-<strategy>.yaml run one study per strategy).
// Read back from the studies' JSON (report/study/study_writers.hpp), so a figure can be redrawn from
// results/ without pricing anything again.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ws {

// One feasible point of a study, as its JSON row has it.
struct ComparedPoint {
  int devices = 0;
  std::string model;
  std::string layout;
  double step_s = 0;
  double efficiency = 0;          // vs the study's own first point
  double hardware_peak = 0;       // fraction of peak, hardware flops
  double model_peak = 0;          // MFU
};

struct ComparedStudy {
  std::string file;
  std::string name;      // the study's name
  std::string machine;
  std::string label;     // its one strategy in words ("4D" where it names none), or the study's name
  std::vector<ComparedPoint> points;
};

// Reads a study's JSON; an unreadable file, or a missing or mistyped key, is an InputError naming
// the file, the row and the key.
ComparedStudy read_study_json(const std::filesystem::path& file);

// The gnuplot commands (terminal and output excluded) of the comparison: per study, model flops'
// percent of peak (MFU), weak-scaling efficiency (each vs its own first point), and the step time
// against the fastest study at the same device count. Studies must share their machine.
std::string comparison_plot_script(const std::vector<ComparedStudy>& studies);

// <stem>.png and <stem>.svg in out_dir; PlotError without gnuplot. Returns the files written.
std::vector<std::filesystem::path> plot_comparison(const std::vector<ComparedStudy>& studies,
                                                   const std::filesystem::path& out_dir, const std::string& stem);

}  // namespace ws
