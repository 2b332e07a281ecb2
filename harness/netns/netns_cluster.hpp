// A shaped network between MPI ranks on one host: every rank in its own network namespace, joined
// to one Linux bridge by a veth pair whose two ends are rate-limited with a tc token bucket (tbf),
// and Open MPI told to use its TCP transport on that subnet only. What the ranks exchange then
// crosses a real network stack (TCP, veth, bridge, queueing) at a bandwidth we choose, instead of
// shared memory: the network half of the simulator's model can be checked against it.
//
// Latency is the stack's own (tens of microseconds, measured by calibrate): the `netem` queueing
// discipline that would add delay is often missing from VM kernels, so it is not used.
//
// Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) and the `ip` and `tc` tools (iproute2).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "harness/process/child_process.hpp"
#include "base/units.hpp"

namespace ws {

struct ShapedNetworkSpec {
  int ranks = 2;
  Bandwidth rate;       // each rank's send and receive rate (both ends of its veth)
  std::string prefix;   // names: <prefix>0.. (namespaces), <prefix>br (bridge); empty: "ws<pid>n"
};

// Thrown when the namespaces cannot be made (not root, no iproute2, no tbf); the message says which
// command failed and what it printed.
class NetnsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Makes the namespaces, links and shaping on construction and removes them on destruction. A
// process killed in between (SIGTERM, Ctrl-C, SIGKILL, a crash) cannot run its destructor: a reaper
// started first (`weakscale-netns-exec --reap`, in its own process group, deaf to SIGINT, SIGTERM
// and SIGHUP) sees its socket to this process close without the word that all was removed, and
// removes them. Only a reaper killed too (SIGKILL to it) leaves them behind: `ip netns list` shows
// ws<pid>n0..; `ip netns del` removes each (their veth pairs go with them), `ip link del ws<pid>nbr`
// the bridge.
class ShapedNetwork {
 public:
  ShapedNetwork(const ShapedNetworkSpec& spec, std::string netns_exec_executable);
  ~ShapedNetwork();
  ShapedNetwork(const ShapedNetwork&) = delete;
  ShapedNetwork& operator=(const ShapedNetwork&) = delete;

  // mpirun options (TCP transport on the bridge's subnet) and the per-rank wrapper.
  RankLauncher launcher() const;
  // "2 ranks in network namespaces ws123n0..1, veth + bridge, tbf 1.000 Gb/s each way, Open MPI TCP"
  std::string describe() const;
  const ShapedNetworkSpec& spec() const { return spec_; }

 private:
  void start_reaper();
  void tear_down() noexcept;
  ShapedNetworkSpec spec_;
  std::string netns_exec_;
  std::vector<std::string> namespaces_;
  bool bridge_made_ = false;
  int reaper_ = -1;         // the reaper's process id
  int reaper_socket_ = -1;  // our end of its stdin
};

// The --netns-rate option's text ("1 Gb/s") as a bandwidth; InputError naming the option, the
// value and the accepted units otherwise (also for a rate that is not positive).
Bandwidth parse_netns_rate(const std::string& text);

// The subnet the ranks' veth ends get addresses in (rank i: 10.77.0.(i+1)).
inline constexpr const char* kShapedNetworkSubnet = "10.77.0.0/24";

}  // namespace ws
