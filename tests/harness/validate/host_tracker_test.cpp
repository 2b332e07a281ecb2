// HostTracker: the tracked machine takes the passes' compute and, where the file's node has several
// cores, their busy-node share; without passes it is the file's own.
#include <gtest/gtest.h>

#include "harness/validate/host_tracker.hpp"
#include "sim/machine/machine_loader.hpp"

namespace ws {
namespace {

Machine local_file() { return load_machine(WEAKSCALE_SOURCE_DIR "/machines/local.yaml"); }

TEST(HostTracker, NoPassesLeavesTheFileAsWritten) {
  Machine file = local_file();
  file.device.busy_node_compute = 0.123;
  HostTracker tracker(file, quick_gemm_grid(), quick_elementwise_shapes());
  EXPECT_EQ(tracker.passes(), 0);
  EXPECT_EQ(tracker.take_machine().device.busy_node_compute, 0.123);
}

TEST(HostTracker, PassesReMeasureTheBusyNodeShareOfASharedHostFile) {
  Machine file = local_file();
  ASSERT_GT(file.node.devices, 1);
  file.device.busy_node_compute = 0.123;  // no host's: the tracked value must come from the passes
  HostTracker tracker(file, quick_gemm_grid(), quick_elementwise_shapes());
  tracker.pass();
  tracker.pass();
  EXPECT_EQ(tracker.passes(), 2);
  const Machine tracked = tracker.take_machine();
  EXPECT_NE(tracked.device.busy_node_compute, 0.123);
  EXPECT_GT(tracked.device.busy_node_compute, 0.0);
  EXPECT_LE(tracked.device.busy_node_compute, 1.0);
  EXPECT_EQ(tracker.passes(), 0);  // taken: the next configuration starts afresh
  // One device per node (a file of network namespaces): no node to share, the file's value stays.
  Machine one_per_node = file;
  one_per_node.node.devices = 1;
  HostTracker alone(one_per_node, quick_gemm_grid(), quick_elementwise_shapes());
  alone.pass();
  EXPECT_EQ(alone.take_machine().device.busy_node_compute, 0.123);
}

}  // namespace
}  // namespace ws
