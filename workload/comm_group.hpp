// The communicators of the 4D algorithm, one name for engine and simulator: the X, Y and Z
// groups of the 3D tensor-parallel grid, the data-parallel group, data x Z (the group that
// completes the gradients of parameters replicated over Z), the pipeline (the ranks of the same
// grid position on every stage: stage transfers and the gradient norm's sum over stages), and the
// world.
#pragma once

#include <array>

#include "workload/layout.hpp"

namespace ws {

enum class CommGroup { x, y, z, data, data_z, pipeline, world };
inline constexpr int kCommGroups = 7;
inline constexpr std::array<CommGroup, kCommGroups> kAllCommGroups{CommGroup::x,    CommGroup::y,
                                                                   CommGroup::z,    CommGroup::data,
                                                                   CommGroup::data_z, CommGroup::pipeline,
                                                                   CommGroup::world};
// A training step's collectives run on the first six (never on the world): arrays indexed by a
// step's group have kStepGroups entries.
inline constexpr int kStepGroups = 6;

// "x", "y", "z", "data", "data_z", "pipeline", "world": the spelling of trace events and summaries.
const char* to_string(CommGroup group);
// Ranks in one group of `group`'s kind under `layout` (the world: every rank), and the stride
// between consecutive members in rank order (X fastest; data x Z runs Z fastest, then data; the
// pipeline strides over whole stages).
int group_size(const Layout& layout, CommGroup group);
int group_stride(const Layout& layout, CommGroup group);

}  // namespace ws
