// Paper-ready figures of a study through gnuplot (pngcairo and svg terminals):
// <name>.png/.svg (weak-scaling efficiency and percent of peak vs devices, log2 axis) and
// <name>-breakdown.png/.svg (compute and exposed X/Y/Z/data time per step, stacked, with the best
// layout under each bar) and <name>-candidates.png/.svg (the top k layouts of each point: how much
// slower than the best, i.e. how much the layout choice matters).
#pragma once

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/study/study_run.hpp"

namespace ws {

// gnuplot missing, or it did not produce a file. Not an input error: the study itself is fine
// and the CSV/JSON are already written when this is thrown.
class PlotError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The gnuplot executable on PATH, if any.
std::optional<std::filesystem::path> find_gnuplot();

// "set output ...\n" for figure `file`: gnuplot writes to its temporary name (base/output_file),
// render_gnuplot moves it into place once complete.
std::string set_output(const std::filesystem::path& file);

// Runs `script` through gnuplot and checks that it wrote every one of `files` (the figures the
// script sets as outputs with set_output) completely: a missing, empty or truncated figure (a PNG
// without its IEND chunk, an SVG without </svg>, e.g. on a full disk) is an OutputError and the
// previous figure stays; complete ones are renamed into place.
void render_gnuplot(const std::filesystem::path& gnuplot, const std::string& script,
                    const std::vector<std::filesystem::path>& files);

// The gnuplot commands for one figure (terminal and output excluded), for inspection and tests.
std::string efficiency_plot_script(const StudyResult& result);
std::string breakdown_plot_script(const StudyResult& result);
std::string decomposition_plot_script(const StudyResult& result);
std::string candidates_plot_script(const StudyResult& result);

// Draws the four figures (efficiency, breakdown, efficiency decomposition, candidates) in PNG and SVG into out_dir and returns the files written.
std::vector<std::filesystem::path> plot_study(const StudyResult& result,
                                              const std::filesystem::path& out_dir);

}  // namespace ws
