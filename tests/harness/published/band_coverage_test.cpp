// Each published row's band from its machine file's uncertainty ranges: the 10th-90th percentile
// of the row priced on seeded draws, the same on any number of threads, holding the as-written
// prediction's neighbourhood; coverage counts the rows whose published busbw lies in it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/published/published_collectives.hpp"
#include "harness/published/published_table.hpp"

namespace ws {
namespace {

// Perlmutter's NCCL rows of the shipped table (one machine keeps the test short).
std::vector<PublishedCollective> perlmutter_rows() {
  const std::string source = WEAKSCALE_SOURCE_DIR;
  std::vector<PublishedCollective> rows;
  for (const auto& row : load_published_collectives(source + "/benchmarks/collectives/published.csv"))
    if (row.machine == "perlmutter" && rows.size() < 12) rows.push_back(row);
  return rows;
}

TEST(BandCoverage, BandsAreSeededDrawsTheSameOnAnyNumberOfThreads) {
  const std::string machines = std::string(WEAKSCALE_SOURCE_DIR) + "/machines";
  const auto rows = perlmutter_rows();
  ASSERT_FALSE(rows.empty());
  const PublishedComparison none = compare_with_published(rows, machines);
  const PublishedComparison one = compare_with_published(rows, machines, 8, 1);
  const PublishedComparison two = compare_with_published(rows, machines, 8, 2);
  ASSERT_EQ(one.rows.size(), rows.size());
  int inside = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_FALSE(none.rows[i].band_low_gbps);  // no draws asked for
    ASSERT_TRUE(one.rows[i].band_low_gbps && one.rows[i].band_high_gbps);
    EXPECT_LE(*one.rows[i].band_low_gbps, *one.rows[i].band_high_gbps);
    EXPECT_EQ(*one.rows[i].band_low_gbps, *two.rows[i].band_low_gbps);
    EXPECT_EQ(*one.rows[i].band_high_gbps, *two.rows[i].band_high_gbps);
    // The draws move the prediction: the band is not a point (bandwidth efficiency 0.5-0.65).
    EXPECT_LT(*one.rows[i].band_low_gbps, *one.rows[i].band_high_gbps);
    const double published = rows[i].busbw_gbps;
    inside += *one.rows[i].band_low_gbps <= published && published <= *one.rows[i].band_high_gbps;
    // The predictions besides the band are the ones without it.
    EXPECT_EQ(one.rows[i].predicted_busbw_gbps, none.rows[i].predicted_busbw_gbps);
  }
  const BandCoverage coverage = band_coverage(one.rows, "perlmutter", "nccl");
  EXPECT_EQ(coverage.rows, static_cast<int>(rows.size()));
  EXPECT_EQ(coverage.inside, inside);
  EXPECT_EQ(band_coverage(one.rows, "frontier", "rccl").rows, 0);
  EXPECT_EQ(band_coverage(none.rows).rows, 0);
}

}  // namespace
}  // namespace ws
