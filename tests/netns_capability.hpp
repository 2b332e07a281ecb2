// Whether this process may build what harness/netns builds: a network namespace, a veth pair and a tc
// token bucket on it. Tests of the network-namespace mode skip (and say why) where it may not:
// not root, a container without CAP_SYS_ADMIN, a kernel without veth or tbf.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace ws::testing {

inline bool can_make_shaped_namespaces() {
  if (::geteuid() != 0) return false;
  const std::string p = "wst" + std::to_string(::getpid());
  const std::string script = "ip netns add " + p + " && ip link add " + p + "a type veth peer name " + p +
                             "b && tc qdisc add dev " + p + "a root tbf rate 1gbit burst 65536b latency 50ms; rc=$?; "
                             "ip link del " + p + "a; ip netns del " + p + "; exit $rc";
  return std::system(("sh -c '" + script + "' >/dev/null 2>&1").c_str()) == 0;
}

}  // namespace ws::testing
