// The links' bound on a published row: the busbw of the model's algorithm with every library term
// at its most favourable value. No fit of the terms prices a row above it, and on a two-node ring
// all-reduce it is the nodes' injection bandwidth.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/published/collective_fit.hpp"
#include "harness/published/published_collectives.hpp"
#include "harness/published/published_table.hpp"
#include "sim/machine/machine_loader.hpp"

namespace ws {
namespace {

const std::string kSource = WEAKSCALE_SOURCE_DIR;

PublishedCollective alps_all_reduce(Bytes bytes) {
  PublishedCollective row;
  row.machine = "alps";
  row.library = "nccl";
  row.op = "all-reduce";
  row.nodes = 2;
  row.devices = 8;
  row.bytes = bytes;
  row.busbw_gbps = 100;
  return row;
}

// A ring all-reduce over two nodes sends every byte of its 2 (p - 1) / p x S per rank across the node
// boundary, so its busbw cannot pass one node's NICs: 4 x 25 GB/s on Alps (machines/alps.yaml).
// Latencies only lower the bound's approach at small sizes.
TEST(LinksCeiling, TwoNodeRingAllReduceIsTheNodesInjectionBandwidth) {
  const Machine alps = load_machine_by_name("alps", kSource + "/machines");
  const PublishedRowModel large(alps, alps_all_reduce(Bytes{1} << 30));
  const CollectiveLibrary& nccl = alps.collective_libraries.front();
  ASSERT_EQ(large.algorithm(nccl), "ring");  // the tuner's threshold: ring above 4 MiB on 2 nodes
  EXPECT_NEAR(large.ceiling_busbw_gbps(nccl), 100.0, 0.1);
  const PublishedRowModel small(alps, alps_all_reduce(Bytes{1} << 20));
  EXPECT_LT(small.ceiling_busbw_gbps(nccl), large.ceiling_busbw_gbps(nccl));
}

// Every term at its most favourable value: the bound is above the prediction with the terms as
// written and with any others, and the best algorithm's bound above the one run.
TEST(LinksCeiling, NoLibraryTermsPriceARowAboveIt) {
  const Machine alps = load_machine_by_name("alps", kSource + "/machines");
  for (const Bytes bytes : {Bytes{1} << 16, Bytes{1} << 20, Bytes{4} << 20, Bytes{1} << 27}) {
    const PublishedRowModel model(alps, alps_all_reduce(bytes));
    CollectiveLibrary library = alps.collective_libraries.front();
    const double ceiling = model.ceiling_busbw_gbps(library);
    EXPECT_LE(model.busbw_gbps(library), ceiling) << bytes;
    EXPECT_GE(model.best_ceiling_busbw_gbps(), ceiling) << bytes;
    library.launch_latency = Time::zero();
    library.step_latency = Time::from_seconds(1e-9);
    library.bandwidth_efficiency = 1.0;
    EXPECT_LE(model.busbw_gbps(library), ceiling * (1 + 1e-9)) << bytes;
  }
}

// The shipped table: every collective row has both bounds, the file's and the fitted predictions stay
// under them, and the rows above them are counted per library as the fit CSV reports.
TEST(LinksCeiling, ShippedTableRowsAboveTheBoundAreCounted) {
  const auto table = load_published_collectives(kSource + "/benchmarks/collectives/published.csv");
  const PublishedComparison result = compare_with_published(table, kSource + "/machines");
  int collective_rows = 0, above = 0;
  for (const CollectiveComparison& c : result.rows) {
    if (c.published.op == "point-to-point") {
      EXPECT_FALSE(c.ceiling_busbw_gbps.has_value());
      continue;
    }
    ++collective_rows;
    ASSERT_TRUE(c.ceiling_busbw_gbps && c.best_ceiling_busbw_gbps);
    EXPECT_LE(c.predicted_busbw_gbps, *c.ceiling_busbw_gbps * (1 + 1e-9)) << c.published.machine << " " << c.published.bytes;
    EXPECT_LE(c.fitted_busbw_gbps, *c.ceiling_busbw_gbps * (1 + 1e-9)) << c.published.machine << " " << c.published.bytes;
    EXPECT_GE(*c.best_ceiling_busbw_gbps, *c.ceiling_busbw_gbps * (1 - 1e-12));
    if (c.published.busbw_gbps > *c.ceiling_busbw_gbps) ++above;
  }
  const CeilingCount all = count_above_ceiling(result.rows);
  EXPECT_EQ(all.rows, collective_rows);
  EXPECT_EQ(all.above_ceiling, above);
  EXPECT_LE(all.above_best_ceiling, all.above_ceiling);
  int per_library = 0;
  for (const LibraryFit& f : result.libraries) per_library += count_above_ceiling(result.rows, f.machine, f.library).above_ceiling;
  EXPECT_EQ(per_library, all.above_ceiling);
}

}  // namespace
}  // namespace ws
