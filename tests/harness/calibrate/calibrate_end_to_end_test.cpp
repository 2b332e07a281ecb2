// `weakscale calibrate --quick` on this host: it measures for real (GEMM, triad, mpirun with two
// ranks) and writes a file that the machine loader accepts, describing this host.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "sim/machine/machine_loader.hpp"
#include "tests/netns_capability.hpp"

namespace ws {
namespace {

// `weakscale calibrate --quick --ranks 2 <args> --out <dir>/<file>`, its output in <dir>/log.txt.
struct CalibrateRun {
  std::filesystem::path dir, out, log;
  int status = -1;
};

CalibrateRun run_calibrate(const std::string& dir_name, const std::string& file, const std::string& args) {
  CalibrateRun r;
  r.dir = std::filesystem::temp_directory_path() / (dir_name + "-" + std::to_string(::getpid()));
  std::filesystem::create_directories(r.dir);
  r.out = r.dir / file;
  r.log = r.dir / "log.txt";
  const std::string command = "'" + std::string(WEAKSCALE_EXE) + "' calibrate --quick --ranks 2 " + args + " --out '" +
                              r.out.string() + "' >'" + r.log.string() + "' 2>&1";
  r.status = std::system(command.c_str());
  return r;
}

TEST(CalibrateEndToEnd, QuickRunWritesALoadableMachineFile) {
  const CalibrateRun run = run_calibrate("weakscale-calibrate", "tmp.yaml", "");
  const auto& dir = run.dir;
  const auto& out = run.out;
  ASSERT_TRUE(WIFEXITED(run.status));
  ASSERT_EQ(WEXITSTATUS(run.status), 0) << "see " << run.log;

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

// The machine file is written last, atomically and checked: on a full device the run is exit 4
// (README "Reliability") naming the file and the reason, and the device is not renamed over.
TEST(CalibrateEndToEnd, AFullDeviceIsAnOutputErrorNotASilentFile) {
  ASSERT_TRUE(std::filesystem::is_character_file("/dev/full"));
  const std::string log = (std::filesystem::temp_directory_path() /
                           ("weakscale-calibrate-full-" + std::to_string(::getpid()) + ".txt")).string();
  const std::string command =
      "'" + std::string(WEAKSCALE_EXE) + "' calibrate --quick --ranks 2 --out /dev/full >'" + log + "' 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(WIFEXITED(status)) << text;
  EXPECT_EQ(WEXITSTATUS(status), 4) << text;
  EXPECT_NE(text.find("/dev/full: writing"), std::string::npos) << text;
  EXPECT_NE(text.find("No space left on device"), std::string::npos) << text;
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/full"));
  std::filesystem::remove(log);
}

std::string command_output(const std::string& command) {
  std::string out;
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    char buffer[256];
    while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
    ::pclose(pipe);
  }
  return out;
}

// --netns-rate for real: the two ranks in their own namespaces over a veth pair shaped to
// 0.5 Gb/s. The fitted link is then the shaped one (shared memory here is several GB/s), the
// file has a node per rank, and the namespaces are gone afterwards. Needs root and namespaces.
TEST(CalibrateEndToEnd, NetnsRunMeasuresTheShapedLinkAndCleansUp) {
  if (!testing::can_make_shaped_namespaces()) {
    GTEST_SKIP() << "needs root, network namespaces, veth and tc tbf";
  }
  const CalibrateRun run = run_calibrate("weakscale-calibrate-netns", "netns.yaml", "--netns-rate '0.5 Gb/s'");
  const auto& dir = run.dir;
  const auto& out = run.out;
  ASSERT_TRUE(WIFEXITED(run.status));
  ASSERT_EQ(WEXITSTATUS(run.status), 0) << "see " << run.log;

  const Machine m = load_machine(out.string());
  EXPECT_EQ(m.nodes, 2);
  EXPECT_EQ(m.node.devices, 1);
  EXPECT_TRUE(m.node.links.empty());
  ASSERT_EQ(m.node.nics.size(), 1u);
  EXPECT_LT(m.node.nics[0].bandwidth.bytes_per_s(), 1e9);
  EXPECT_GT(m.node.nics[0].latency.seconds(), 1e-6);  // a TCP stack, not shared memory
  EXPECT_EQ(m.network.endpoints_per_switch, 2);
  // The run's namespaces (named in the file's node comment: --prefix P) and bridge are gone.
  std::ifstream file(out);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const auto at = text.find("--prefix ");
  ASSERT_NE(at, std::string::npos);
  const std::string prefix = text.substr(at + 9, text.find(' ', at + 9) - (at + 9));
  EXPECT_EQ(command_output("ip netns list").find(prefix), std::string::npos) << prefix;
  EXPECT_NE(std::system(("ip link show " + prefix + "br >/dev/null 2>&1").c_str()), 0) << prefix;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ws
