#include "sim/net/sprayed_messages.hpp"

#include "base/check.hpp"

namespace ws {

SprayedMessages::SprayedMessages(FlowNetwork& network) : network_(&network), router_(network.topology()) {}

MessageRoute SprayedMessages::route(int src_device, int dst_device, double valiant_share) {
  WS_CHECK(src_device != dst_device && valiant_share >= 0.0 && valiant_share <= 1.0,
           "a message goes between two devices, with a Valiant share in [0, 1]");
  auto [it, fresh] = routes_.try_emplace({src_device, dst_device, valiant_share});
  if (fresh) {
    const TrafficDemand demand{src_device, dst_device, 1.0};
    const TrafficLoads loads = router_.route({&demand, 1}, valiant_share > 0.0);
    const Time latency = Time::from_ps(static_cast<std::int64_t>(
        (1.0 - valiant_share) * static_cast<double>(loads.minimal_latency.ps()) +
        valiant_share * static_cast<double>(loads.valiant_latency.ps())));
    it->second = {network_->add_shape(mix_routes(loads, valiant_share)), latency};
  }
  return it->second;
}

SentMessage SprayedMessages::send(Time at, int src_device, int dst_device, Bytes bytes, std::uint64_t tag,
                                  double valiant_share) {
  const MessageRoute r = route(src_device, dst_device, valiant_share);
  return {network_->start_shaped_flow(at, r.shape, r.latency, static_cast<double>(bytes), bytes, tag), r.latency};
}

}  // namespace ws
