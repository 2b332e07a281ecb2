// Every factorisation of a rank count into Gdata x Gx x Gy x Gz whose run the engine accepts
// (validate_run): the layouts a multi-rank test sweeps.
#pragma once

#include <vector>

#include "engine/train/run_config.hpp"

namespace ws {

// make_run(layout) -> RunConfig: the test's run on that layout.
template <class MakeRun>
std::vector<Layout> accepted_layouts(int ranks, MakeRun make_run) {
  std::vector<Layout> out;
  for (int d = 1; d <= ranks; ++d)
    for (int x = 1; x <= ranks; ++x)
      for (int y = 1; y <= ranks; ++y)
        if (ranks % (d * x * y) == 0) {
          const Layout l{d, x, y, ranks / (d * x * y)};
          try {
            validate_run(make_run(l), ranks);
            out.push_back(l);
          } catch (const InputError&) {
          }
        }
  return out;
}

}  // namespace ws
