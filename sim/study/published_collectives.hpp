// Predicted against published collective bandwidths: reads a table of published measurements
// (benchmarks/collectives/published.csv), simulates every row with the flow-level collectives, and
// writes the comparison as CSV and a predicted-vs-published plot.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sim/core/units.hpp"

namespace ws {

// One published measurement. op: all-reduce, reduce-scatter, all-gather, or point-to-point (an
// osu_bw-style stream of `window` messages of `bytes` from one node to another, busbw = bytes moved
// / time). bytes as nccl-tests counts them (all-gather: output; reduce-scatter: input).
struct PublishedCollective {
  std::string machine, library, op;
  int nodes = 0, devices = 0;
  Bytes bytes = 0;
  double busbw_gbps = 0;
  std::string source;
  std::string file;  // the table it came from, and its line, for messages
  int line = 0;
};

struct CollectiveComparison {
  PublishedCollective published;
  std::string algorithm;  // what the simulation ran
  double predicted_busbw_gbps = 0;
  double predicted_time_us = 0;
  double relative_error = 0;  // (predicted - published) / published
};

struct ComparisonSummary {
  double median_abs_error = 0;
  double worst_abs_error = 0;
  std::size_t worst_row = 0;  // index into the comparisons
};

// Columns (header required, in this order): machine,library,op,nodes,devices,bytes,busbw_gbps,source.
// Throws InputError naming file, line and column for a bad row.
std::vector<PublishedCollective> load_published_collectives(const std::filesystem::path& file);

// osu_bw's default window: messages in flight per iteration.
inline constexpr int kPointToPointWindow = 64;

std::vector<CollectiveComparison> compare_with_published(const std::vector<PublishedCollective>& rows,
                                                         const std::string& machines_dir);
ComparisonSummary summarize(const std::vector<CollectiveComparison>& comparisons);

// <out_dir>/collectives-vs-published.csv; returns its path.
std::filesystem::path write_comparison_csv(const std::vector<CollectiveComparison>& comparisons,
                                           const std::filesystem::path& out_dir);
// <out_dir>/collectives-vs-published.{png,svg}: predicted vs published busbw, log-log, y = x.
// Throws PlotError (sim/study/study_plots.hpp) without gnuplot.
std::vector<std::filesystem::path> plot_comparison(const std::vector<CollectiveComparison>& comparisons,
                                                   const std::filesystem::path& out_dir);

}  // namespace ws
