#include "engine/comm/process_grid.hpp"

#include <cassert>
#include <utility>

#include "engine/comm/mpi_check.hpp"

namespace ws {

namespace {

// Members of one of the four grid groups share every coordinate except the group's own; they are
// ordered by it. (data x Z and the world are made apart.)
Communicator split(MPI_Comm parent, const Layout& layout, const RankCoords& c, CommGroup kind, Timeline& timeline) {
  RankCoords color_coords = c;
  int key = 0;
  switch (kind) {
    case CommGroup::x: key = std::exchange(color_coords.x, 0); break;
    case CommGroup::y: key = std::exchange(color_coords.y, 0); break;
    case CommGroup::z: key = std::exchange(color_coords.z, 0); break;
    case CommGroup::data: key = std::exchange(color_coords.data, 0); break;
    case CommGroup::data_z:
    case CommGroup::pipeline:
    case CommGroup::world: assert(false && "not a grid axis"); break;
  }
  MPI_Comm comm = MPI_COMM_NULL;
  WS_MPI_CHECK(MPI_Comm_split(parent, rank_of(layout, color_coords), key, &comm));
  return Communicator(comm, true, timeline, kind);
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
  x_ = split(parent, layout, coords_, CommGroup::x, *timeline_);
  y_ = split(parent, layout, coords_, CommGroup::y, *timeline_);
  z_ = split(parent, layout, coords_, CommGroup::z, *timeline_);
  data_ = split(parent, layout, coords_, CommGroup::data, *timeline_);
  MPI_Comm batch = MPI_COMM_NULL;
  WS_MPI_CHECK(MPI_Comm_split(parent, coords_.x + layout.x * (coords_.y + layout.y * coords_.stage),
                              coords_.z + layout.z * coords_.data, &batch));
  batch_ = Communicator(batch, true, *timeline_, CommGroup::data_z);
  MPI_Comm pipeline = MPI_COMM_NULL;
  RankCoords first_stage = coords_;  // the same grid position on stage 0
  first_stage.stage = 0;
  WS_MPI_CHECK(MPI_Comm_split(parent, rank_of(layout, first_stage), coords_.stage, &pipeline));
  pipeline_ = Communicator(pipeline, true, *timeline_, CommGroup::pipeline);
}

const Communicator& ProcessGrid::group(CommGroup kind) const {
  switch (kind) {
    case CommGroup::x: return x_;
    case CommGroup::y: return y_;
    case CommGroup::z: return z_;
    case CommGroup::data: return data_;
    case CommGroup::data_z: return batch_;
    case CommGroup::pipeline: return pipeline_;
    case CommGroup::world: return world_;
  }
  return world_;
}

}  // namespace ws
