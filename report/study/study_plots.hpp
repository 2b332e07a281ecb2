// Paper-ready figures of a study through gnuplot (pngcairo and svg terminals):
// <name>.png/.svg (weak-scaling efficiency and percent of peak vs devices, log2 axis) and
// <name>-breakdown.png/.svg (compute and exposed X/Y/Z/data time per step, stacked, with the best
// layout under each bar), <name>-candidates.png/.svg (the top k layouts of each point: how much
// slower than the best, i.e. how much the layout choice matters) and <name>-sensitivity.png/.svg
// (each uncertain parameter at either end of its range: a tornado).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "report/gnuplot.hpp"
#include "sim/study/study_run.hpp"

namespace ws {

// The gnuplot commands for one figure (terminal and output excluded), for inspection and tests.
std::string efficiency_plot_script(const StudyResult& result);
std::string breakdown_plot_script(const StudyResult& result);
std::string decomposition_plot_script(const StudyResult& result);
std::string candidates_plot_script(const StudyResult& result);
// Empty when the study has no sensitivity table (no uncertainty ranges, or --no-sensitivity).
std::string sensitivity_plot_script(const StudyResult& result);

// Draws the figures (efficiency, breakdown, efficiency decomposition, candidates, and the sensitivity
// tornado when there is a sensitivity table) in PNG and SVG into out_dir and returns the files written.
std::vector<std::filesystem::path> plot_study(const StudyResult& result,
                                              const std::filesystem::path& out_dir);

}  // namespace ws
