#include "workload/comm_group.hpp"

namespace ws {

const char* to_string(CommGroup group) {
  switch (group) {
    case CommGroup::x:
      return "x";
    case CommGroup::y:
      return "y";
    case CommGroup::z:
      return "z";
    case CommGroup::data:
      return "data";
    case CommGroup::data_z:
      return "data_z";
    case CommGroup::pipeline:
      return "pipeline";
    case CommGroup::world:
      return "world";
  }
  return "?";
}

int group_size(const Layout& layout, CommGroup group) {
  switch (group) {
    case CommGroup::x:
      return layout.x;
    case CommGroup::y:
      return layout.y;
    case CommGroup::z:
      return layout.z;
    case CommGroup::data:
      return layout.data;
    case CommGroup::data_z:
      return layout.data * layout.z;
    case CommGroup::pipeline:
      return layout.pipeline;
    case CommGroup::world:
      return layout.devices();
  }
  return 1;
}

int group_stride(const Layout& layout, CommGroup group) {
  switch (group) {
    case CommGroup::x:
    case CommGroup::world:
      return 1;
    case CommGroup::y:
      return layout.x;
    case CommGroup::z:
    case CommGroup::data_z:
      return layout.x * layout.y;
    case CommGroup::data:
      return layout.x * layout.y * layout.z;
    case CommGroup::pipeline:
      return layout.stage_devices();
  }
  return 1;
}

}  // namespace ws
