// One RMSNorm stage of the step schedule (norm_row_sums, norm_normalize, norm_backward_sums,
// norm_backward_dx) on a norm's operands: the blocks' ln1 and ln2 and the final norm share it.
// The row sums of squares are summed over X in `rstd` (StepTask::norm_variance_sum), the backward
// sums in `sums` (StepTask::norm_backward_sum).
#pragma once

#include <stdexcept>
#include <vector>

#include "engine/kernels/rms_norm.hpp"
#include "workload/step_schedule.hpp"

namespace ws {

template <class T>
struct NormStage {
  const T* x;
  const T* gamma;
  T* y;
  T* rstd;
  const T* dy;
  T* dx;
  T* dgamma;
  int rows, width, full_width;
};

template <class T>
void rms_norm_stage(const StepOp& op, const NormStage<T>& n, std::vector<T>& sums) {
  switch (op.task) {
    case StepTask::norm_row_sums:
      rms_norm_row_sums(n.x, n.rstd, n.rows, n.width);
      break;
    case StepTask::norm_normalize:
      rms_norm_normalize(n.x, n.gamma, n.y, n.rstd, n.rows, n.width, n.full_width);
      break;
    case StepTask::norm_backward_sums:
      sums.resize(static_cast<std::size_t>(n.rows));
      rms_norm_backward_sums(n.dy, n.x, n.gamma, n.rstd, sums.data(), n.dgamma, n.rows, n.width);
      break;
    case StepTask::norm_backward_dx:
      rms_norm_backward_dx(n.dy, n.x, n.gamma, n.rstd, sums.data(), n.dx, n.rows, n.width, n.full_width);
      break;
    default:
      throw std::logic_error("step op " + op.name + " is not an RMSNorm stage");
  }
}

}  // namespace ws
