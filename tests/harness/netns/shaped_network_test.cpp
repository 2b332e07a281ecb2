// ShapedNetwork removes its namespaces and bridge on destruction, and its reaper removes them when
// the process that made them dies before the destructor runs (a killed `calibrate --netns-rate`
// used to leave them behind). Needs root, network namespaces, veth and tc tbf; skips otherwise.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "harness/netns/netns_cluster.hpp"
#include "tests/netns_capability.hpp"

namespace ws {
namespace {

bool bridge_exists(const std::string& prefix) {
  return std::system(fmt::format("ip link show {}br >/dev/null 2>&1", prefix).c_str()) == 0;
}

bool namespace_exists(const std::string& prefix, int index) {
  return std::system(fmt::format("ip netns list | grep -qw {}{}", prefix, index).c_str()) == 0;
}

bool anything_left(const std::string& prefix) {
  return bridge_exists(prefix) || namespace_exists(prefix, 0) || namespace_exists(prefix, 1);
}

// The reaper works after its maker is gone: give it up to 10 s.
bool gone_within_seconds(const std::string& prefix, int seconds) {
  for (int i = 0; i < 10 * seconds; ++i) {
    if (!anything_left(prefix)) return true;
    ::usleep(100000);
  }
  return !anything_left(prefix);
}

std::string unique_prefix(char tag) { return fmt::format("wsk{}{}", ::getpid() % 100000, tag); }

TEST(ShapedNetwork, DestructorRemovesTheNamespacesAndTheBridge) {
  if (!testing::can_make_shaped_namespaces()) GTEST_SKIP() << "needs root, network namespaces, veth and tc tbf";
  const std::string prefix = unique_prefix('d');
  {
    const ShapedNetwork net(ShapedNetworkSpec{2, Bandwidth::from_bytes_per_s(125e6), prefix},
                            WEAKSCALE_NETNS_EXEC_EXE);
    EXPECT_TRUE(bridge_exists(prefix));
    EXPECT_TRUE(namespace_exists(prefix, 0));
    EXPECT_TRUE(namespace_exists(prefix, 1));
  }
  EXPECT_FALSE(anything_left(prefix)) << prefix;  // at once, not by the reaper
}

TEST(ShapedNetwork, ItsReaperRemovesThemWhenTheMakerIsKilled) {
  if (!testing::can_make_shaped_namespaces()) GTEST_SKIP() << "needs root, network namespaces, veth and tc tbf";
  for (const int signal : {SIGKILL, SIGTERM, SIGINT}) {
    const std::string prefix = unique_prefix(signal == SIGKILL ? 'k' : signal == SIGTERM ? 't' : 'i');
    const pid_t maker = ::fork();
    ASSERT_GE(maker, 0);
    if (maker == 0) {
      try {
        const ShapedNetwork net(ShapedNetworkSpec{2, Bandwidth::from_bytes_per_s(125e6), prefix},
                                WEAKSCALE_NETNS_EXEC_EXE);
        if (!anything_left(prefix)) ::_exit(5);
        ::raise(signal);  // dies here, its destructor never runs
      } catch (...) {
        ::_exit(3);
      }
      ::_exit(4);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(maker, &status, 0), maker);
    ASSERT_TRUE(WIFSIGNALED(status)) << "exit " << WEXITSTATUS(status) << " (3: not made, 5: not there)";
    EXPECT_EQ(WTERMSIG(status), signal);
    EXPECT_TRUE(gone_within_seconds(prefix, 10)) << prefix << " after signal " << signal;
    // Where the reaper failed, do not leave its work to the next run.
    (void)std::system(fmt::format("ip netns del {0}0; ip netns del {0}1; ip link del {0}br", prefix).append(
        " >/dev/null 2>&1").c_str());
  }
}

}  // namespace
}  // namespace ws
