// The consistency floor: rows the model prices alike cannot all be predicted better than half
// their relative spread, and on the shipped table no scheme's worst error beats it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "harness/published/collective_fit.hpp"
#include "harness/published/published_collectives.hpp"
#include "harness/published/published_table.hpp"

namespace ws {
namespace {

CollectiveComparison row(const std::string& op, double published, double predicted, Bytes bytes = 8 << 20,
                         const std::string& library = "rccl") {
  CollectiveComparison c;
  c.published.machine = "frontier";
  c.published.library = library;
  c.published.op = op;
  c.published.nodes = 64;
  c.published.devices = 512;
  c.published.bytes = bytes;
  c.published.busbw_gbps = published;
  c.algorithm = "ring";
  c.predicted_busbw_gbps = c.fitted_busbw_gbps = c.kfold_busbw_gbps = predicted;
  return c;
}

TEST(ConsistencyFloor, IsHalfTheRelativeSpreadOfRowsPricedAlike) {
  const std::vector<CollectiveComparison> rows{row("all-gather", 3.0, 2.0), row("reduce-scatter", 1.0, 2.0)};
  const ConsistencyFloor floor = consistency_floor(rows);
  EXPECT_DOUBLE_EQ(floor.worst_abs_error, 0.5);  // (3 - 1) / (3 + 1)
  ASSERT_TRUE(floor.low_row && floor.high_row);
  EXPECT_EQ(*floor.low_row, 1u);
  EXPECT_EQ(*floor.high_row, 0u);
  // The harmonic mean 2ab / (a + b) = 1.5 reaches the floor on both rows, and nothing does better.
  const double best = 2 * 3.0 * 1.0 / (3.0 + 1.0);
  EXPECT_DOUBLE_EQ(std::abs(best / 3.0 - 1), 0.5);
  EXPECT_DOUBLE_EQ(std::abs(best / 1.0 - 1), 0.5);
  for (double x = 0.5; x < 4; x += 0.01) EXPECT_GE(std::max(std::abs(x / 3 - 1), std::abs(x - 1)), 0.5 - 1e-12);
}

TEST(ConsistencyFloor, RowsTheModelTellsApartSetNoFloor) {
  // Another size, another library, or a different price: the model may give each its own answer.
  EXPECT_EQ(consistency_floor({row("all-gather", 3.0, 2.0), row("reduce-scatter", 1.0, 2.0, 32 << 20)}).worst_abs_error,
            0.0);
  EXPECT_EQ(consistency_floor({row("all-gather", 3.0, 2.0), row("reduce-scatter", 1.0, 2.0, 8 << 20, "rccl-eager")})
                .worst_abs_error,
            0.0);
  EXPECT_EQ(consistency_floor({row("all-gather", 3.0, 2.0), row("reduce-scatter", 1.0, 2.5)}).worst_abs_error, 0.0);
  auto fitted_apart = row("reduce-scatter", 1.0, 2.0);
  fitted_apart.fitted_busbw_gbps = 1.9;
  EXPECT_EQ(consistency_floor({row("all-gather", 3.0, 2.0), fitted_apart}).worst_abs_error, 0.0);
  EXPECT_FALSE(consistency_floor({}).low_row.has_value());
}

TEST(ConsistencyFloor, ScopedToOneLibrary) {
  const std::vector<CollectiveComparison> rows{row("all-gather", 3.0, 2.0), row("reduce-scatter", 1.0, 2.0),
                                               row("all-gather", 1.1, 2.0, 8 << 20, "rccl-eager"),
                                               row("reduce-scatter", 1.0, 2.0, 8 << 20, "rccl-eager")};
  EXPECT_DOUBLE_EQ(consistency_floor(rows, "frontier", "rccl").worst_abs_error, 0.5);
  EXPECT_NEAR(consistency_floor(rows, "frontier", "rccl-eager").worst_abs_error, 0.1 / 2.1, 1e-12);
  EXPECT_EQ(consistency_floor(rows, "alps", "nccl").worst_abs_error, 0.0);
}

// The shipped table: neither the file's terms nor the terms fitted to every row beat the floor of
// their library's rows, which is what makes it a floor for one model (the held-out schemes use one
// fit per fold, so two rows of a pair may get different terms); the pair that sets it is one job.
TEST(ConsistencyFloor, NoSchemeBeatsItOnThePublishedTable) {
  const std::string source = WEAKSCALE_SOURCE_DIR;
  const auto table = load_published_collectives(source + "/benchmarks/collectives/published.csv");
  const PublishedComparison result = compare_with_published(table, source + "/machines");
  bool some_floor = false;
  for (const LibraryFit& f : result.libraries) {
    const ConsistencyFloor floor = consistency_floor(result.rows, f.machine, f.library);
    some_floor = some_floor || floor.worst_abs_error > 0;
    for (const FitScore& s : {f.file, f.in_sample}) EXPECT_GE(s.worst_abs_error, floor.worst_abs_error - 1e-9);
    if (!floor.low_row) continue;
    const auto& lo = result.rows[*floor.low_row].published;
    const auto& hi = result.rows[*floor.high_row].published;
    EXPECT_EQ(lo.nodes, hi.nodes);
    EXPECT_EQ(lo.bytes, hi.bytes);
    EXPECT_EQ(lo.library, f.library);
    EXPECT_LT(lo.busbw_gbps, hi.busbw_gbps);
  }
  EXPECT_TRUE(some_floor);  // the table holds all-gather/reduce-scatter pairs that disagree
}

// The NCCL terms the Perlmutter file carries are its cross-validated fit to its published rows, so
// as written they meet the held-out targets there (median <= 10 %, worst <= 25 %, and on 5-fold
// held-out rows the same); Alps takes the
// per-step term from that fit (same NIC and NCCL plugin) and its own rows, not in the fit, are
// predicted within 15 % median (31 % and 270 % with the earlier 2 us estimate).
TEST(PublishedCollectives, NcclFilesCarryTheCrossValidatedTerms) {
  const std::string source = WEAKSCALE_SOURCE_DIR;
  const auto table = load_published_collectives(source + "/benchmarks/collectives/published.csv");
  const PublishedComparison result = compare_with_published(table, source + "/machines");
  int checked = 0;
  for (const LibraryFit& f : result.libraries) {
    if (f.library != "nccl") continue;
    ++checked;
    if (f.machine == "perlmutter") {
      EXPECT_GE(f.file.rows, 30);
      EXPECT_LE(f.file.median_abs_error, 0.10);
      EXPECT_LE(f.file.worst_abs_error, 0.25);
      EXPECT_LE(f.kfold.median_abs_error, 0.10);
      // Held out 5-fold, the worst row too (33.6 % before LL128 was its third protocol).
      EXPECT_LE(f.kfold.worst_abs_error, 0.25);
    } else if (f.machine == "alps") {
      EXPECT_GE(f.file.rows, 7);
      EXPECT_LE(f.file.median_abs_error, 0.15);
    }
  }
  EXPECT_EQ(checked, 2);
}

// A held-out row names the written terms its held-out price moves with: terms the fit kept as
// written because no training row's price depends on them, whose written values may be fits to every
// row, the held-out ones included. The "own" scores are over the other held-out rows. On the shipped
// table the scale scheme prices Frontier RCCL's LL rows above 16 nodes (8-32 KiB steps) through LL's
// written terms: under the file's terms no job of at most 16 nodes runs LL. Perlmutter's jobs of at
// most 16 nodes run LL at one step size (16 KiB, 1 MiB over 16 nodes): the scale fit takes LL's step
// latency from it but keeps LL's written bandwidth, which only its rows above 16 nodes with steps of
// 16 KiB or less (the ones LL runs on fewer channels) borrow.
TEST(PublishedCollectives, HeldOutRowsNameTheWrittenTermsTheirPricesMoveWith) {
  const std::string source = WEAKSCALE_SOURCE_DIR;
  const auto table = load_published_collectives(source + "/benchmarks/collectives/published.csv");
  const PublishedComparison result = compare_with_published(table, source + "/machines");
  const std::set<std::string> names{"LL.step_latency", "LL.bandwidth_efficiency", "LL128.step_latency",
                                    "LL128.bandwidth_efficiency", "eager_overflow.per_step"};
  auto each_name = [&](const std::string& terms, const std::string& where) {
    std::size_t at = 0;
    while (at < terms.size()) {
      const std::size_t end = std::min(terms.find(' ', at), terms.size());
      EXPECT_TRUE(names.count(terms.substr(at, end - at))) << where << ": " << terms;
      at = end + 1;
    }
  };
  bool frontier_ll = false, perlmutter_ll = false;
  int own_kfold_rows = 0, own_scale_rows = 0;
  for (const LibraryFit& f : result.libraries) {
    int kfold_written = 0, scale_written = 0;
    for (const CollectiveComparison& c : result.rows) {
      const auto& p = c.published;
      if (p.machine != f.machine || p.library != f.library) continue;
      const std::string where = p.machine + " " + p.library + " " + p.op + " " + std::to_string(p.nodes);
      each_name(c.kfold_written_terms, where);
      each_name(c.scale_written_terms, where);
      kfold_written += !c.kfold_written_terms.empty();
      scale_written += !c.scale_written_terms.empty();
      if (p.nodes <= kScaleSplitNodes) {
        EXPECT_TRUE(c.scale_written_terms.empty()) << where << ": a training row";
      }
      if (p.machine == "frontier" && p.library == "rccl" &&
          c.scale_written_terms == "LL.step_latency LL.bandwidth_efficiency") {
        EXPECT_GT(p.nodes, kScaleSplitNodes);
        EXPECT_LE(p.bytes / p.devices, Bytes{32 << 10}) << where;
        frontier_ll = true;
      }
      if (p.machine == "perlmutter" && !c.scale_written_terms.empty()) {
        EXPECT_EQ(c.scale_written_terms, "LL.bandwidth_efficiency") << where;
        EXPECT_GT(p.nodes, kScaleSplitNodes) << where;
        EXPECT_LE(p.bytes / p.devices, Bytes{16} << 10) << where;
        perlmutter_ll = true;
      }
    }
    EXPECT_EQ(f.kfold_own.rows + kfold_written, f.kfold.rows) << f.machine << " " << f.library;
    EXPECT_EQ(f.scale_own.rows + scale_written, f.scale.rows) << f.machine << " " << f.library;
    EXPECT_LE(f.kfold_own.worst_abs_error, f.kfold.worst_abs_error + 1e-12);
    EXPECT_LE(f.scale_own.worst_abs_error, f.scale.worst_abs_error + 1e-12);
    own_kfold_rows += f.kfold_own.rows;
    own_scale_rows += f.scale_own.rows;
  }
  EXPECT_TRUE(frontier_ll);
  EXPECT_TRUE(perlmutter_ll);
  // Point-to-point rows are not fitted: the held-out schemes repeat their prediction (no terms).
  const auto point_to_point = std::count_if(result.rows.begin(), result.rows.end(), [](const CollectiveComparison& c) {
    return c.published.op == "point-to-point";
  });
  EXPECT_EQ(summarize(result.rows, ComparisonScheme::kfold_own).rows, own_kfold_rows + point_to_point);
  EXPECT_EQ(summarize(result.rows, ComparisonScheme::scale_own).rows, own_scale_rows);
  EXPECT_LT(own_scale_rows, summarize(result.rows, ComparisonScheme::scale).rows);
}

// The 5-fold scheme's folds: balanced, the same every time, and not the table's order. The shipped
// Frontier RCCL rows list five message sizes per node count; folds by position put every 8 MiB row
// in one fold, which then predicted the smallest steps from fits that never saw them.
TEST(CrossValidation, FoldsAreBalancedDeterministicAndShuffled) {
  for (const std::size_t rows : {std::size_t{7}, std::size_t{36}, std::size_t{75}}) {
    const std::vector<int> fold = fold_assignment(rows, kFitFolds);
    ASSERT_EQ(fold.size(), rows);
    EXPECT_EQ(fold, fold_assignment(rows, kFitFolds));
    std::map<int, std::size_t> sizes;
    for (const int f : fold) {
      ASSERT_GE(f, 0);
      ASSERT_LT(f, kFitFolds);
      ++sizes[f];
    }
    EXPECT_EQ(sizes.size(), static_cast<std::size_t>(std::min<std::size_t>(rows, kFitFolds)));
    for (const auto& [f, n] : sizes) {
      EXPECT_GE(n, rows / kFitFolds) << f;
      EXPECT_LE(n, rows / kFitFolds + 1) << f;
    }
    if (rows < 2 * kFitFolds) continue;
    // Every fold mixes positions of several residues modulo the fold count (five sizes per node count).
    for (int f = 0; f < kFitFolds; ++f) {
      std::set<std::size_t> residues;
      for (std::size_t k = 0; k < rows; ++k)
        if (fold[k] == f) residues.insert(k % kFitFolds);
      EXPECT_GE(residues.size(), 2u) << rows << " rows, fold " << f;
    }
  }
}

// Rows of one job that the model prices alike are held out together: their groups share a fold, folds
// differ by at most the largest group, and one row per group deals exactly as the rows alone.
TEST(CrossValidation, RowsOfAGroupShareAFold) {
  for (const std::size_t rows : {std::size_t{7}, std::size_t{36}, std::size_t{75}}) {
    std::vector<int> own(rows);
    for (std::size_t r = 0; r < rows; ++r) own[r] = static_cast<int>(100 + 7 * r);  // any ids
    EXPECT_EQ(fold_assignment(own, kFitFolds), fold_assignment(rows, kFitFolds)) << rows;
  }
  std::vector<int> group;  // 40 jobs, two rows for two jobs in three, listed apart as the table does
  for (int g = 0; g < 40; ++g) group.push_back(3 * g);
  for (int g = 0; g < 40; ++g)
    if (g % 3 != 0) group.push_back(3 * g);
  const std::vector<int> fold = fold_assignment(group, kFitFolds);
  ASSERT_EQ(fold.size(), group.size());
  EXPECT_EQ(fold, fold_assignment(group, kFitFolds));
  std::map<int, int> fold_of;
  std::map<int, std::size_t> sizes;
  for (std::size_t r = 0; r < group.size(); ++r) {
    const auto [at, fresh] = fold_of.emplace(group[r], fold[r]);
    EXPECT_EQ(at->second, fold[r]) << "group " << group[r];
    ++sizes[fold[r]];
  }
  ASSERT_EQ(sizes.size(), static_cast<std::size_t>(kFitFolds));
  std::size_t least = group.size(), most = 0;
  for (const auto& [f, n] : sizes) {
    least = std::min(least, n);
    most = std::max(most, n);
  }
  EXPECT_LE(most - least, 2u);
}

}  // namespace
}  // namespace ws
