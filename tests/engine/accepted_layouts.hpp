// Every factorisation of a rank count into Gdata x Gx x Gy x Gz whose run the engine accepts
// (validate_run): the layouts a multi-rank test sweeps.
#pragma once

#include <string>
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

// Layouts of the other strategies whose LM head splits the vocabulary over tp (Gy): Megatron-LM's
// tp x pp x dp (tp = 2 or 4; without stages, with 2 stages under 1F1B and interleaved) and FSDP /
// HSDP with tp (dp_shard, and dp_replicate x dp_shard), for `ranks` ranks; stages need `layers`
// blocks per chunk. A model whose heads do not split over a tp is the caller's to skip.
inline std::vector<Layout> vocabulary_parallel_layouts(int ranks, int layers) {
  std::vector<std::string> spellings;
  for (int tp : {2, 4}) {
    if (ranks % tp != 0) continue;
    const int rest = ranks / tp;
    spellings.push_back("tp=" + std::to_string(tp) + ",dp=" + std::to_string(rest));
    if (rest % 2 == 0) {
      const std::string dp = std::to_string(rest / 2);
      spellings.push_back("tp=" + std::to_string(tp) + ",pp=2,dp=" + dp + ",mb=4");
      if (layers >= 4) spellings.push_back("tp=" + std::to_string(tp) + ",pp=2,vpp=2,dp=" + dp + ",mb=2");
      spellings.push_back("dp_shard=" + std::to_string(rest / 2) + ",dp_replicate=2,tp=" + std::to_string(tp));
    }
    spellings.push_back("dp_shard=" + std::to_string(rest) + ",tp=" + std::to_string(tp));
  }
  std::vector<Layout> out;
  for (const std::string& text : spellings) out.push_back(*parse_layout(text));
  return out;
}

// Megatron-LM's layouts with sequence parallelism for `ranks` ranks: tp = 2 or 4 without stages,
// with 2 stages under 1F1B and interleaved (given `layers` blocks), and with ZeRO-1 and ZeRO-3 over
// dp = 2 or more.
inline std::vector<Layout> sequence_parallel_layouts(int ranks, int layers) {
  std::vector<std::string> spellings;
  for (int tp : {2, 4}) {
    if (ranks % tp != 0) continue;
    const int rest = ranks / tp;
    const std::string t = "tp=" + std::to_string(tp);
    spellings.push_back(t + ",dp=" + std::to_string(rest) + ",sp");
    if (rest % 2 == 0) {
      const std::string dp = std::to_string(rest / 2);
      spellings.push_back(t + ",pp=2,dp=" + dp + ",mb=4,sp");
      if (layers >= 4) spellings.push_back(t + ",pp=2,vpp=2,dp=" + dp + ",mb=2,sp");
      spellings.push_back(t + ",dp=" + std::to_string(rest) + ",zero=1,sp");
      spellings.push_back(t + ",dp=" + std::to_string(rest) + ",zero=3,sp");  // the weights sharded over Z too
    }
  }
  std::vector<Layout> out;
  for (const std::string& text : spellings) out.push_back(*parse_layout(text));
  return out;
}

}  // namespace ws
