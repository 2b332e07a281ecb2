// A link and how much of a flow's rate it carries: the unit of weighted (sprayed or coupled)
// flows in FlowNetwork and of traffic loads (traffic.hpp).
#pragma once

namespace ws {

struct LinkShare {
  int link = 0;         // index into Topology::links
  double weight = 0.0;  // bytes on this link per byte of the flow's progress
};

}  // namespace ws
