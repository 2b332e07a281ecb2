// Point-to-point messages on the flow network as Slingshot carries them: each message sprayed per
// packet over the paths the traffic model routes (traffic.hpp), so a message is a shaped flow and
// routing lives in one place. One shape per (source, destination, Valiant share), made at first use.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>

#include "base/units.hpp"
#include "sim/net/flow_network.hpp"
#include "sim/net/traffic.hpp"

namespace ws {

struct MessageRoute {
  int shape = -1;  // the network's shape of this route
  Time latency;    // first byte: links and switches, the Valiant detour in its share
};

struct SentMessage {
  int flow = -1;
  Time latency;
};

class SprayedMessages {
 public:
  explicit SprayedMessages(FlowNetwork& network);

  // Devices src != dst; `valiant_share` in [0, 1] of the bytes take Valiant paths (0: minimal).
  MessageRoute route(int src_device, int dst_device, double valiant_share = 0.0);
  // A message of `bytes` requested at `at`: it carries data after the route's latency, then at the
  // route's max-min share (FlowNetwork::start_shaped_flow).
  SentMessage send(Time at, int src_device, int dst_device, Bytes bytes, std::uint64_t tag,
                   double valiant_share = 0.0);

 private:
  FlowNetwork* network_;
  TrafficRouter router_;
  std::map<std::tuple<int, int, double>, MessageRoute> routes_;
};

}  // namespace ws
