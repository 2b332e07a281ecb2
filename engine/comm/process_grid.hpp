// The 4D process grid Gdata x Gx x Gy x Gz of ../shared/docs/4d-algorithm.md, once per pipeline
// stage: this rank's coordinates and one Communicator per group, split from a parent communicator
// with ranks laid out X fastest and stages outermost (workload/layout.hpp). The pipeline group
// joins the ranks of one grid position across the stages, ordered by stage.
#pragma once

#include <mpi.h>

#include <memory>

#include "engine/comm/communicator.hpp"
#include "engine/comm/timeline.hpp"
#include "workload/layout.hpp"

namespace ws {

class ProcessGrid {
 public:
  // One rank, every group of size 1; touches no MPI.
  static ProcessGrid serial();
  // Collective over `parent`, whose size must equal layout.devices() (checked by the caller
  // before training; asserted here).
  ProcessGrid(MPI_Comm parent, const Layout& layout);

  const Layout& layout() const { return layout_; }
  const RankCoords& coords() const { return coords_; }
  int rank() const { return rank_; }
  const Communicator& group(CommGroup kind) const;
  const Communicator& world() const { return world_; }
  // The ranks that see different tokens but hold the same X x Y shard: data x Z. Parameters not
  // sharded over Z (biases, norms, embeddings) complete their gradients over it.
  const Communicator& batch_group() const { return batch_; }
  // Where this rank's compute phases and collectives are recorded (mutable through a const grid:
  // recording what happened does not change the grid).
  Timeline& timeline() const { return *timeline_; }

 private:
  ProcessGrid();

  Layout layout_{};
  RankCoords coords_{};
  int rank_ = 0;
  // Declared before the communicators, which point at it; on the heap so moves keep its address.
  std::unique_ptr<Timeline> timeline_;
  Communicator world_, x_, y_, z_, data_, batch_, pipeline_;
};

}  // namespace ws
