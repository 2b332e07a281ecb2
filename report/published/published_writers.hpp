// The published-collectives check written out (`weakscale collectives-vs-published`): the
// comparison and each library's fit as CSV, and the predicted-vs-published figure.
#pragma once

#include <filesystem>
#include <vector>

#include "harness/published/end_to_end.hpp"
#include "harness/published/published_collectives.hpp"

namespace ws {

// <out_dir>/collectives-fit.csv: each library's terms as written and fitted, the four scores and the
// consistency floor of its rows.
std::filesystem::path write_fit_csv(const PublishedComparison& comparison, const std::filesystem::path& out_dir);

// <out_dir>/collectives-vs-published.csv; returns its path.
std::filesystem::path write_comparison_csv(const std::vector<CollectiveComparison>& comparisons,
                                           const std::filesystem::path& out_dir);
// <out_dir>/collectives-vs-published.{png,svg}: predicted vs published busbw, log-log, y = x.
// Throws PlotError (report/gnuplot.hpp) without gnuplot.
std::vector<std::filesystem::path> plot_comparison(const std::vector<CollectiveComparison>& comparisons,
                                                   const std::filesystem::path& out_dir);

// <out_dir>/end-to-end-vs-published.csv: every published run, its simulated step and throughput in
// the row's unit and the error, or why it was not simulated, and where its machine's compute factor
// was fitted (fit_compute_scale) the row's throughput with it and held out; returns its path.
std::filesystem::path write_end_to_end_csv(const std::vector<RunComparison>& comparisons,
                                           const std::vector<ComputeScaleFit>& fits,
                                           const std::filesystem::path& out_dir);

}  // namespace ws
