#include "harness/netns/netns_cluster.hpp"

#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "base/input_error.hpp"
#include "base/quantity.hpp"

extern char** environ;

namespace ws {
namespace {

// Runs an iproute2 command; NetnsError with its output when it fails.
void ip_tool(const std::vector<std::string>& argv) {
  ChildResult r;
  try {
    r = run_child(argv, {"PATH=/usr/sbin:/sbin:/usr/bin:/bin"});
  } catch (const std::runtime_error& e) {
    throw NetnsError(fmt::format("cannot run {} (is iproute2 installed?): {}", argv.front(), e.what()));
  }
  if (r.exit_code != 0) {
    throw NetnsError(fmt::format("'{}' failed (exit {}): {}", join_command(argv), r.exit_code, r.output));
  }
}

// Token bucket with a 64 KiB burst: one TSO/GSO segment fits, and larger bursts would let messages
// of a few hundred KiB pass at the bridge's speed, which no alpha-beta link describes. A queue of
// 50 ms before drops; TCP then settles at ~94 % of the rate (headers).
std::vector<std::string> tbf(Bandwidth rate) {
  return {"tbf", "rate", fmt::format("{}bit", static_cast<long long>(8 * rate.bytes_per_s())), "burst", "65536b",
          "latency", "50ms"};
}

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

Bandwidth parse_netns_rate(const std::string& text) {
  const auto rate = parse_bandwidth(text);
  if (!rate || !within(kBandwidthRange, rate->bytes_per_s())) {
    throw InputError(InputLocation{"", 0, "--netns-rate"}, text,
                     fmt::format("a bandwidth {} with its unit, e.g. \"1 Gb/s\" (units: {})", kBandwidthRange.text,
                                 kBandwidthUnits));
  }
  return *rate;
}

ShapedNetwork::ShapedNetwork(const ShapedNetworkSpec& spec, std::string netns_exec_executable)
    : spec_(spec), netns_exec_(std::move(netns_exec_executable)) {
  if (spec_.ranks < 1 || spec_.ranks > 250) throw NetnsError("the shaped network takes 1 to 250 ranks");
  if (!(spec_.rate.bytes_per_s() > 0)) throw NetnsError("the shaped network needs a positive rate");
  if (::geteuid() != 0) {
    throw NetnsError("network namespaces need root (CAP_NET_ADMIN, CAP_SYS_ADMIN): run as root or leave out "
                     "--netns-rate");
  }
  if (spec_.prefix.empty()) spec_.prefix = fmt::format("ws{}n", static_cast<long>(::getpid()));
  const std::string bridge = spec_.prefix + "br";
  start_reaper();
  try {
    ip_tool({"ip", "link", "add", bridge, "type", "bridge"});
    bridge_made_ = true;
    ip_tool({"ip", "link", "set", bridge, "up"});
    for (int i = 0; i < spec_.ranks; ++i) {
      const std::string ns = spec_.prefix + std::to_string(i);
      const std::string inside = fmt::format("{}v{}", spec_.prefix, i), outside = fmt::format("{}p{}", spec_.prefix, i);
      ip_tool({"ip", "netns", "add", ns});
      namespaces_.push_back(ns);
      ip_tool({"ip", "link", "add", inside, "type", "veth", "peer", "name", outside});
      ip_tool({"ip", "link", "set", inside, "netns", ns});
      ip_tool({"ip", "link", "set", outside, "master", bridge});
      ip_tool({"ip", "link", "set", outside, "up"});
      ip_tool({"ip", "-n", ns, "addr", "add", fmt::format("10.77.0.{}/24", i + 1), "dev", inside});
      ip_tool({"ip", "-n", ns, "link", "set", inside, "up"});
      ip_tool({"ip", "-n", ns, "link", "set", "lo", "up"});
      // Shape both directions: the rank's sends leave through `inside`, its receives through `outside`.
      ip_tool(concat({"tc", "-n", ns, "qdisc", "add", "dev", inside, "root"}, tbf(spec_.rate)));
      ip_tool(concat({"tc", "qdisc", "add", "dev", outside, "root"}, tbf(spec_.rate)));
    }
  } catch (...) {
    tear_down();
    throw;
  }
}

ShapedNetwork::~ShapedNetwork() { tear_down(); }

void ShapedNetwork::start_reaper() {
  // A socket, not a pipe: sending to a reaper that died must not raise SIGPIPE here (MSG_NOSIGNAL).
  // Close-on-exec, so that mpirun and the ranks do not hold it open after this process is gone.
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) {
    throw NetnsError(fmt::format("socketpair for the namespaces' reaper: {}", std::strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, ends[0], STDIN_FILENO);  // dup2 clears close-on-exec
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // A process group of its own: Ctrl-C in a terminal signals the foreground group, which the reaper
  // must outlive (it also ignores SIGINT, SIGTERM and SIGHUP).
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  std::vector<std::string> argv = {netns_exec_, "--reap", spec_.prefix, std::to_string(spec_.ranks)};
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, netns_exec_.c_str(), &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(ends[0]);
  if (rc != 0) {
    ::close(ends[1]);
    throw NetnsError(fmt::format("cannot start '{} --reap', which removes the namespaces if this process dies: {}",
                                 netns_exec_, std::strerror(rc)));
  }
  reaper_ = pid;
  reaper_socket_ = ends[1];
}

void ShapedNetwork::tear_down() noexcept {
  // Deleting a namespace deletes the veth end inside it, and with it the peer on the bridge.
  for (const auto& ns : namespaces_) {
    try {
      ip_tool({"ip", "netns", "del", ns});
    } catch (...) {
    }
  }
  namespaces_.clear();
  if (bridge_made_) {
    try {
      ip_tool({"ip", "link", "del", spec_.prefix + "br"});
    } catch (...) {
    }
    bridge_made_ = false;
  }
  // Removed here: the reaper may go.
  if (reaper_socket_ >= 0) {
    const char done = 'd';
    (void)::send(reaper_socket_, &done, 1, MSG_NOSIGNAL);
    ::close(reaper_socket_);
    reaper_socket_ = -1;
  }
  if (reaper_ > 0) {
    int status = 0;
    ::waitpid(reaper_, &status, 0);
    reaper_ = -1;
  }
}

RankLauncher ShapedNetwork::launcher() const {
  return RankLauncher{{"--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include", kShapedNetworkSubnet},
                      {netns_exec_, "--prefix", spec_.prefix, "--"}};
}

std::string ShapedNetwork::describe() const {
  return fmt::format("{} ranks in network namespaces {}0..{}, each joined to one bridge by a veth pair shaped with "
                     "tc tbf to {:.3f} Gb/s each way; Open MPI's TCP transport on {}",
                     spec_.ranks, spec_.prefix, spec_.ranks - 1, 8e-9 * spec_.rate.bytes_per_s(),
                     kShapedNetworkSubnet);
}

}  // namespace ws
