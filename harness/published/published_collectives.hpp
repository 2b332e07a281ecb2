// Predicted against published collective bandwidths: reads a table of published measurements
// (benchmarks/collectives/published.csv), simulates every row with the flow-level collectives, and
// fits and scores each library's terms (report/published writes the CSVs and the plot).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/units.hpp"
#include "harness/published/collective_fit.hpp"
#include "harness/published/published_table.hpp"

namespace ws {

struct CollectiveComparison {
  PublishedCollective published;
  std::string algorithm;  // what the simulation ran
  double predicted_busbw_gbps = 0;  // the machine file as written
  double predicted_time_us = 0;
  double relative_error = 0;  // (predicted - published) / published
  // The library's terms fitted to the table (collective_fit.hpp): to every row of its (machine,
  // library), to the other folds (held out), and to its rows of at most 16 nodes (held out, set
  // for larger rows only). Point-to-point rows are not fitted: they repeat the prediction.
  double fitted_busbw_gbps = 0;
  double kfold_busbw_gbps = 0;
  std::optional<double> scale_busbw_gbps;
  // Written terms the held-out prices move with (RowFit, collective_fit.hpp); empty: fitted terms only.
  std::string kfold_written_terms, scale_written_terms;
  // The links' bound on the row's busbw (PublishedRowModel::ceiling_busbw_gbps): of the algorithm
  // run, and of the fastest algorithm the model has for the row. Unset for point-to-point rows.
  std::optional<double> ceiling_busbw_gbps, best_ceiling_busbw_gbps;
  // The row's band from the machine file's `uncertainty:` ranges (sim/study/uncertainty.hpp,
  // prediction_band): the 10th and 90th percentile of its busbw priced on `band_samples` seeded
  // draws of every range (the study's draws, seed 1), widened to hold the prediction as written.
  // Unset for point-to-point rows and machines without ranges. A collective range moves the
  // library it names (the file's default where it names none): a library no range names has a
  // band from the network's ranges alone. draws_*: the percentiles alone, before the widening.
  std::optional<double> band_low_gbps, band_high_gbps;
  std::optional<double> draws_low_gbps, draws_high_gbps;
};

inline constexpr int kBandSamples = 32;  // the command's default, as the default study's --samples

// How many rows of one (machine, library) (empty names: all) have a band, and how many of those
// hold their published value (the target is 80 %: a band that misses more is too narrow or off
// centre, to be reconsidered from its sources).
struct BandCoverage {
  int rows = 0, inside = 0;
  int inside_draws = 0;  // rows inside the draws' percentiles alone (draws_*_gbps)
};
BandCoverage band_coverage(const std::vector<CollectiveComparison>& comparisons, const std::string& machine = {},
                           const std::string& library = {});

// kfold_own and scale_own: the held-out rows priced by terms fitted on the training rows alone.
enum class ComparisonScheme { as_written, in_sample, kfold, scale, kfold_own, scale_own };

struct ComparisonSummary {
  double median_abs_error = 0;
  double worst_abs_error = 0;
  std::size_t worst_row = 0;  // index into the comparisons
  int rows = 0;               // the rows the scheme scores
};

// What the published rows themselves allow: rows the model cannot tell apart (same machine, library,
// nodes, devices, bytes and algorithm, priced alike under the file's terms and under the fitted
// ones: an all-gather ring and a reduce-scatter ring of one size, for example) get one prediction,
// so when their published values a < b differ, no model is within (b - a) / (a + b) of both (the
// prediction 2ab / (a + b) reaches it). The largest such gap is a floor under any model's worst error.
struct ConsistencyFloor {
  double worst_abs_error = 0;
  std::optional<std::size_t> low_row, high_row;  // the pair that sets it (indices into the comparisons)
};
// Over the comparisons of one (machine, library); empty names: over all of them.
ConsistencyFloor consistency_floor(const std::vector<CollectiveComparison>& comparisons, const std::string& machine = {},
                                   const std::string& library = {});

// Rows of one (machine, library) (empty names: all) whose published busbw is above the ceiling of
// the algorithm the model runs (`above_ceiling`), or above every algorithm's (`above_best_ceiling`):
// rows no fit of the library's terms can reach.
struct CeilingCount {
  int rows = 0, above_ceiling = 0, above_best_ceiling = 0;
};
CeilingCount count_above_ceiling(const std::vector<CollectiveComparison>& comparisons, const std::string& machine = {},
                                 const std::string& library = {});

struct PublishedComparison {
  std::vector<CollectiveComparison> rows;
  std::vector<LibraryFit> libraries;  // the fitted terms and scores of each (machine, library)
};

// band_samples > 0 also prices each row's band (CollectiveComparison::band_low_gbps): each draw
// prices the row's collective again on its own network, the bulk of the time (about 50 s for the
// 191 rows of benchmarks/collectives/published.csv at 32 draws, on `jobs` threads).
PublishedComparison compare_with_published(const std::vector<PublishedCollective>& rows,
                                           const std::string& machines_dir, int band_samples = 0, int jobs = 1);

// Over the rows a scheme predicts (scale: only the held-out large rows).
ComparisonSummary summarize(const std::vector<CollectiveComparison>& comparisons,
                            ComparisonScheme scheme = ComparisonScheme::as_written);

}  // namespace ws
