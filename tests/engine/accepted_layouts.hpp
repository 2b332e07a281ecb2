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

// Pipeline layouts of `ranks` for a model of `layers` blocks: pp = 2, 4, 8 stages dividing the
// ranks, the rest as data or as X; per pp one micro-batch (all bubble), 2 pp micro-batches (1F1B)
// and the interleaved schedule over 2 chunks with pp micro-batches, where the blocks suffice.
inline std::vector<Layout> pipeline_layouts(int ranks, int layers) {
  std::vector<Layout> out;
  for (int pp : {2, 4, 8}) {
    if (ranks % pp != 0) continue;
    const int rest = ranks / pp;
    std::vector<std::pair<int, int>> grids{{rest, 1}};  // (data, x)
    if (rest > 1) grids.emplace_back(1, rest);
    for (const auto& [data, x] : grids)
      for (const auto& [vpp, mb] : {std::pair{1, 1}, std::pair{1, 2 * pp}, std::pair{2, pp}}) {
        if (pp * vpp > layers) continue;
        Layout l{data, x, 1, 1};
        l.pipeline = pp, l.virtual_stages = vpp, l.micro_batches = mb;
        out.push_back(l);
      }
  }
  return out;
}

}  // namespace ws
