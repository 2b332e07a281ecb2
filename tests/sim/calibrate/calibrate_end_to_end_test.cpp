// `weakscale calibrate --quick` on this host: it measures for real (GEMM, triad, mpirun with two
// ranks) and writes a file that the machine loader accepts, describing this host.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "sim/machine/machine_loader.hpp"

namespace ws {
namespace {

TEST(CalibrateEndToEnd, QuickRunWritesALoadableMachineFile) {
  const auto dir = std::filesystem::temp_directory_path() / ("weakscale-calibrate-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto out = dir / "tmp.yaml";
  const auto log = dir / "log.txt";
  const std::string command = "'" + std::string(WEAKSCALE_EXE) + "' calibrate --quick --ranks 2 --out '" +
                              out.string() + "' >'" + log.string() + "' 2>&1";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << "see " << log;

  const Machine m = load_machine(out.string());
  EXPECT_EQ(m.name, "tmp");  // the file's stem
  EXPECT_EQ(m.nodes, 1);
  EXPECT_EQ(m.node.devices, 2);
  EXPECT_EQ(m.node.links.size(), 1u);
  EXPECT_EQ(m.device.gemm.samples.size(), 3u);  // the quick grid
  EXPECT_GT(m.device.peak_fp32.flops(), 1e8);
  EXPECT_GT(m.device.memory_bandwidth.bytes_per_s(), 1e8);
  EXPECT_GT(m.node.links[0].bandwidth.bytes_per_s(), 1e6);
  EXPECT_EQ(m.collective_libraries.front().name, "openmpi");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ws
