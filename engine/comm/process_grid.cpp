#include "engine/comm/process_grid.hpp"

#include <cassert>
#include <utility>

#include "engine/comm/mpi_check.hpp"

namespace ws {

namespace {

// Members of a group share every coordinate except the group's own; they are ordered by it.
CommGroup comm_group(GroupKind kind) {
  switch (kind) {
    case GroupKind::x: return CommGroup::x;
    case GroupKind::y: return CommGroup::y;
    case GroupKind::z: return CommGroup::z;
    case GroupKind::data: return CommGroup::data;
  }
  return CommGroup::world;
}

Communicator split(MPI_Comm parent, const Layout& layout, const RankCoords& c, GroupKind kind, Timeline& timeline) {
  RankCoords color_coords = c;
  int key = 0;
  switch (kind) {
    case GroupKind::x: key = std::exchange(color_coords.x, 0); break;
    case GroupKind::y: key = std::exchange(color_coords.y, 0); break;
    case GroupKind::z: key = std::exchange(color_coords.z, 0); break;
    case GroupKind::data: key = std::exchange(color_coords.data, 0); break;
  }
  MPI_Comm comm = MPI_COMM_NULL;
  WS_MPI_CHECK(MPI_Comm_split(parent, rank_of(layout, color_coords), key, &comm));
  return Communicator(comm, true, timeline, comm_group(kind));
}

}  // namespace

ProcessGrid::ProcessGrid() : timeline_(std::make_unique<Timeline>()) {}

ProcessGrid ProcessGrid::serial() { return ProcessGrid(); }

ProcessGrid::ProcessGrid(MPI_Comm parent, const Layout& layout)
    : layout_(layout),
      timeline_(std::make_unique<Timeline>()),
      world_(parent, false, *timeline_, CommGroup::world) {
  assert(world_.size() == layout.devices());
  rank_ = world_.rank();
  coords_ = coords_of(layout, rank_);
  x_ = split(parent, layout, coords_, GroupKind::x, *timeline_);
  y_ = split(parent, layout, coords_, GroupKind::y, *timeline_);
  z_ = split(parent, layout, coords_, GroupKind::z, *timeline_);
  data_ = split(parent, layout, coords_, GroupKind::data, *timeline_);
  MPI_Comm batch = MPI_COMM_NULL;
  WS_MPI_CHECK(MPI_Comm_split(parent, coords_.x + layout.x * coords_.y, coords_.z + layout.z * coords_.data, &batch));
  batch_ = Communicator(batch, true, *timeline_, CommGroup::data_z);
}

const Communicator& ProcessGrid::group(GroupKind kind) const {
  switch (kind) {
    case GroupKind::x: return x_;
    case GroupKind::y: return y_;
    case GroupKind::z: return z_;
    case GroupKind::data: return data_;
  }
  return world_;
}

}  // namespace ws
