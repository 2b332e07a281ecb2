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
      return layout.x * layout.y;
    // Z and data side by side (stages inside the data ranks come with Gz = 1 only).
    case CommGroup::data_z:
      return layout.z > 1 ? layout.x * layout.y : layout.data_stride();
    case CommGroup::data:
      return layout.data_stride();
    case CommGroup::pipeline:
      return layout.stage_stride();
  }
  return 1;
}

}  // namespace ws
