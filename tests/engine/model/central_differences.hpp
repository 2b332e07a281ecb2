// Every parameter's analytic gradient against central finite differences of the loss, for the
// gradient tests of the model (with and without the Goldfish mask).
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engine/model/parameters.hpp"

namespace ws {

struct GradientCheck {
  double worst = 0;         // largest relative error |numeric - analytic| / max(1e-3, |numeric| + |analytic|)
  std::string worst_at;     // "name[i]: analytic a numeric n"
  double analytic_norm = 0; // the check is vacuous if this is ~0
  std::size_t checked = 0;
};

// `loss()` recomputes the loss from the store's current values. Step h = 1e-5: rounding (1e-16 /
// h) is tiny and the O(h^2) truncation error is below the tests' 1e-6.
template <class Loss>
GradientCheck compare_with_central_differences(ParameterStore<double>& store, const std::vector<double>& analytic,
                                               Loss loss, double h = 1e-5) {
  GradientCheck check;
  for (const TensorInfo& info : store.tensors())
    for (std::size_t i = 0; i < info.tensor.size; ++i) {
      double& p = store.value(info.tensor)[i];
      const double saved = p;
      p = saved + h;
      const double up = loss();
      p = saved - h;
      const double down = loss();
      p = saved;
      const double numeric = (up - down) / (2 * h);
      const double want = analytic[info.tensor.offset + i];
      const double error = std::fabs(numeric - want) / std::max(1e-3, std::fabs(numeric) + std::fabs(want));
      if (error > check.worst || check.worst_at.empty()) {
        check.worst = std::max(check.worst, error);
        check.worst_at = info.name + "[" + std::to_string(i) + "]: analytic " + std::to_string(want) + " numeric " +
                         std::to_string(numeric);
      }
      check.analytic_norm += want * want;
      ++check.checked;
    }
  check.analytic_norm = std::sqrt(check.analytic_norm);
  return check;
}

}  // namespace ws
