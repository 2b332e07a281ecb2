// Which collectives of the 4D algorithm overlap computation (../shared/docs/4d-algorithm.md,
// "Overlapping collectives with computation"); each is switchable so its effect can be measured.
#pragma once

namespace ws {

struct OverlapOptions {
  bool all_reduce = true;      // OAR: backward dX all-reduce runs while dW is computed
  bool reduce_scatter = true;  // ORS: dW reduce-scatter over Z completes one block later
  bool all_gather = true;      // OAG: Z all-gathers of a block's weights start one block ahead
};

}  // namespace ws
