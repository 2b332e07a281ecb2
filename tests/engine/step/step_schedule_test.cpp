// The step schedule against the algorithm note (../shared/docs/4d-algorithm.md): per group, the
// number of collectives and the bytes they carry follow in closed form from the model and layout;
// every non-blocking collective is waited exactly once, later; overlap switches move waits, not
// collectives.
#include "workload/step_schedule.hpp"
#include "workload/flops.hpp"

#include <gtest/gtest.h>

#include <map>
#include <tuple>
#include <vector>

namespace ws {
namespace {

struct Totals {
  long long count = 0;
  double bytes = 0;
};
using Key = std::tuple<CollectiveOp, CommGroup>;

std::map<Key, Totals> totals_of(const StepSchedule& s) {
  std::map<Key, Totals> totals;
  for (const StepOp& op : s.ops)
    if (op.kind == StepOpKind::collective) {
      Totals& t = totals[{op.collective, op.group}];
      ++t.count;
      t.bytes += static_cast<double>(op.bytes);
    }
  return totals;
}

// A closed form's totals per (collective, group); a group of one rank records nothing.
struct ExpectedTotals {
  Layout layout;
  std::map<Key, Totals> totals{};
  void add(CollectiveOp op, CommGroup group, double count, double bytes) {
    if (group_size(layout, group) == 1) return;
    Totals& entry = totals[{op, group}];
    entry.count += static_cast<long long>(count);
    entry.bytes += bytes;
  }
};

// The closed form: per block four FC layers (QKV h->3h and MLP up h->4h normal, projection h->h
// and MLP down 4h->h transposed), two layer norms whose row statistics are summed over X, the
// LM head's logits summed over X, gradients all-reduced in one bucket per group per block (with data-parallel overlap) or per step, the loss over data x Z and the
// squared gradient norm over X, Y and Z.
std::map<Key, Totals> closed_form(const ModelSpec& model, const Layout& g, long long sequences,
                                  const StepScheduleOptions& o) {
  const double e = o.bytes_per_element(), h = model.hidden, L = model.layers, V = model.vocabulary,
               S = model.sequence_length;
  const double m = static_cast<double>(sequences) / (g.data * g.z) * S;
  const double X = g.x, Y = g.y, Z = g.z;
  const double forward_passes = o.recompute ? 2 : 1;
  ExpectedTotals t{g};
  auto add = [&](CollectiveOp op, CommGroup group, double count, double bytes) { t.add(op, group, count, bytes); };
  const double block_weights = 12 * h * h / (X * Y) * e;  // (3 + 1 + 4 + 4) h^2 over X x Y
  add(CollectiveOp::all_gather, CommGroup::z, 4 * L * forward_passes, L * forward_passes * block_weights);
  add(CollectiveOp::reduce_scatter, CommGroup::z, 4 * L, L * block_weights);
  // X: normal layers' forward outputs (3h + 4h over Y), transposed layers' dX (h + 4h over Y),
  // 2 + 2 layer-norm sums forward (m each) and 2 backward (2m each), per block; lnf; logits; norm.
  add(CollectiveOp::all_reduce, CommGroup::x, L * (forward_passes * (2 + 4) + 2 + 2) + 2 + 1 + 1 + 1,
      L * (forward_passes * (7 * h / Y + 4) * m + (5 * h / Y + 4) * m) * e + (2 + 2) * m * e + m * V * e + 8);
  // Y: transposed layers' forward outputs (h over X, twice), normal layers' dX (h over X, twice).
  add(CollectiveOp::all_reduce, CommGroup::y, L * (forward_passes * 2 + 2) + 1,
      L * (forward_passes * 2 + 2) * m * h / X * e + 8);
  add(CollectiveOp::all_reduce, CommGroup::z, 1, 8);
  // Buckets: with data-parallel overlap one per block and group, and wte + wpe and lnf on their own;
  // without, one per group after backward.
  const double dp = o.overlap_data_parallel;
  add(CollectiveOp::all_reduce, CommGroup::data, dp ? L : 1, L * block_weights / Z);
  // Replicated over Z: 4 layer-norm vectors and the biases (3h + h + 4h + h features); wte, wpe,
  // lnf; the loss and the supervised-target count (two doubles).
  const double replicated = L * (4 * h / X + 7 * h / Y + 2 * h / X) + V * h / X + S * h / X + 2 * h / X;
  add(CollectiveOp::all_reduce, CommGroup::data_z, (dp ? L + 2 : 1) + 1, replicated * e + 16);
  return t.totals;
}

using ClosedForm = std::map<Key, Totals> (*)(const ModelSpec&, const Layout&, long long, const StepScheduleOptions&);

void expect_closed_form(const ModelSpec& model, const Layout& layout, long long sequences,
                        const StepScheduleOptions& o, ClosedForm form = closed_form) {
  const auto actual = totals_of(make_step_schedule(model, layout, sequences, o));
  const auto expected = form(model, layout, sequences, o);
  ASSERT_EQ(actual.size(), expected.size()) << to_string(layout);
  for (const auto& [key, want] : expected) {
    const auto it = actual.find(key);
    ASSERT_NE(it, actual.end()) << to_string(layout) << " " << to_string(std::get<0>(key)) << "."
                                << to_string(std::get<1>(key));
    EXPECT_EQ(it->second.count, want.count)
        << to_string(layout) << " " << to_string(std::get<0>(key)) << "." << to_string(std::get<1>(key));
    EXPECT_DOUBLE_EQ(it->second.bytes, want.bytes)
        << to_string(layout) << " " << to_string(std::get<0>(key)) << "." << to_string(std::get<1>(key));
  }
}

const ModelSpec kModel{"small", 3, 64, 8, 16, 128, 1};

std::vector<Layout> layouts() {
  return {{1, 1, 1, 1}, {2, 1, 1, 1}, {1, 2, 1, 1}, {1, 1, 2, 1}, {1, 1, 1, 2},
          {2, 2, 2, 2}, {4, 2, 1, 2}, {1, 4, 2, 1}, {2, 1, 4, 2}, {8, 2, 2, 2}};
}

std::vector<StepScheduleOptions> option_sets() {
  StepScheduleOptions on, off, recompute;
  off.overlap_all_reduce = off.overlap_reduce_scatter = off.overlap_all_gather = off.overlap_data_parallel =
      false;
  recompute.recompute = true;
  recompute.precision = Precision::bf16;
  return {on, off, recompute};
}

TEST(StepSchedule, CollectivesAndBytesFollowTheAlgorithmNote) {
  for (const Layout& layout : layouts())
    for (const StepScheduleOptions& o : option_sets()) expect_closed_form(kModel, layout, 16, o);
}

// OAG in forward and in backward (the algorithm note): with recomputation every Z all-gather is
// issued ahead, a block's before the previous block's work starts (forward: block b-1's forward;
// backward: block b+1's recompute, or the LM head's backward for the last block), and each is
// waited once, by its own block. Without OAG every gather blocks.
TEST(StepSchedule, RecomputeGathersArePrefetchedOneBlockAheadInBackward) {
  const ModelSpec model{"small", 4, 64, 8, 16, 128, 1};
  StepScheduleOptions o;
  o.recompute = true;
  o.precision = Precision::bf16;
  const StepSchedule s = make_step_schedule(model, Layout{1, 1, 2, 2}, 16, o);
  // Where each block's forward and recompute work starts (first compute op of the block).
  std::map<std::pair<int, bool>, std::size_t> first_compute;
  std::size_t lm_head_backward = kNoOp;
  for (std::size_t i = 0; i < s.ops.size(); ++i) {
    const StepOp& op = s.ops[i];
    if (op.kind == StepOpKind::compute && op.block >= 0) first_compute.try_emplace({op.block, op.recomputed}, i);
    if (op.task == StepTask::lm_head_dx_gemm) lm_head_backward = i;
  }
  int backward_gathers = 0;
  for (std::size_t i = 0; i < s.ops.size(); ++i) {
    const StepOp& op = s.ops[i];
    if (op.kind != StepOpKind::collective || op.task != StepTask::weight_gather) continue;
    ASSERT_FALSE(op.blocking) << op.name << " block " << op.block;
    const StepOp& wait = s.ops[op.partner];
    // Forward gathers are waited in forward, backward ones in the block's recompute.
    const bool in_backward = op.partner > first_compute.at({model.layers - 1, true});
    EXPECT_EQ(wait.block, op.block);
    EXPECT_EQ(wait.recomputed, in_backward);
    if (!in_backward) {
      if (op.block > 0) {
        EXPECT_LT(i, first_compute.at({op.block - 1, false})) << op.name;
      }
      continue;
    }
    ++backward_gathers;
    if (op.block + 1 < model.layers) {
      EXPECT_LT(i, first_compute.at({op.block + 1, true})) << op.name << " block " << op.block;
    } else {
      EXPECT_LT(i, lm_head_backward) << op.name;
    }
  }
  EXPECT_EQ(backward_gathers, 4 * model.layers);

  o.overlap_all_gather = false;
  for (const StepOp& op : make_step_schedule(model, Layout{1, 1, 2, 2}, 16, o).ops)
    if (op.kind == StepOpKind::collective && op.task == StepTask::weight_gather) {
      EXPECT_TRUE(op.blocking);
    }
}

TEST(StepSchedule, EveryNonBlockingCollectiveIsWaitedOnceAfterItsIssue) {
  for (const Layout& layout : layouts())
    for (const StepScheduleOptions& o : option_sets()) {
      const StepSchedule s = make_step_schedule(kModel, layout, 16, o);
      for (std::size_t i = 0; i < s.ops.size(); ++i) {
        const StepOp& op = s.ops[i];
        if (op.kind == StepOpKind::collective && !op.blocking) {
          ASSERT_NE(op.partner, kNoOp) << op.name;
          ASSERT_GT(op.partner, i);
          EXPECT_EQ(s.ops[op.partner].kind, StepOpKind::wait);
          EXPECT_EQ(s.ops[op.partner].partner, i);
          EXPECT_EQ(s.ops[op.partner].name, "wait." + op.name);
        } else if (op.kind == StepOpKind::wait) {
          ASSERT_LT(op.partner, i);
          EXPECT_FALSE(s.ops[op.partner].blocking);
        } else if (op.kind == StepOpKind::collective) {
          EXPECT_EQ(op.partner, kNoOp);
        }
      }
    }
}

// A schedule built only to be priced (OpNames::none) is the traced one without its names: same ops,
// same order, same sizes and partners; every traced op is named.
TEST(StepSchedule, WithoutNamesTheOpsAreTheTracedOnesLessTheirNames) {
  for (const Layout& layout : layouts())
    for (const StepScheduleOptions& o : option_sets()) {
      const StepSchedule traced = make_step_schedule(kModel, layout, 16, o);
      const StepSchedule priced = make_step_schedule(kModel, layout, 16, o, OpNames::none);
      ASSERT_EQ(priced.ops.size(), traced.ops.size());
      for (std::size_t i = 0; i < traced.ops.size(); ++i) {
        EXPECT_FALSE(traced.ops[i].name.empty()) << i;
        EXPECT_TRUE(priced.ops[i].name.empty()) << traced.ops[i].name;
        StepOp unnamed = traced.ops[i];
        unnamed.name.clear();
        EXPECT_EQ(priced.ops[i], unnamed) << traced.ops[i].name;
      }
    }
}

TEST(StepSchedule, OneRankRunsEveryGemmOfTheFlopCount) {
  // Model flops of the note, 72 B S l h^2 (1 + S/(6h) + V/(12 l h)), count attention as full
  // S x S products; the engine's GEMMs on one rank execute exactly that.
  const ModelSpec& md = kModel;
  const StepSchedule s = make_step_schedule(md, Layout{}, 4, {});
  double flops = 0;
  for (const StepOp& op : s.ops)
    for (const GemmCall& g : op.gemms) flops += g.flops();
  const double B = 4, S = md.sequence_length, l = md.layers, h = md.hidden, V = md.vocabulary;
  EXPECT_DOUBLE_EQ(flops, 72 * B * S * l * h * h * (1 + S / (6 * h) + V / (12 * l * h)));
}

// dW on more than one rank: the engine's row tiles (progress points between them) by default, one
// GEMM when asked (a GPU library progresses on its own); the tiles cover the GEMM's rows once.
TEST(StepSchedule, WeightGradientsRunInTheRequestedRowTiles) {
  const Layout layout{2, 1, 2, 1};
  auto dw_gemms = [&](int tiles) {
    StepScheduleOptions o;
    o.weight_gradient_tiles = tiles;
    std::vector<std::vector<GemmCall>> out;
    for (const StepOp& op : make_step_schedule(kModel, layout, 16, o).ops)
      if (op.task == StepTask::fc_dw_gemm) out.push_back(op.gemms);
    return out;
  };
  EXPECT_EQ(StepScheduleOptions{}.weight_gradient_tiles, 4);  // engine/model/fc_layer.cpp's tiles
  const auto tiled = dw_gemms(4), whole = dw_gemms(1);
  ASSERT_EQ(tiled.size(), static_cast<std::size_t>(4 * kModel.layers));  // four FC layers per block
  ASSERT_EQ(whole.size(), tiled.size());
  for (std::size_t i = 0; i < whole.size(); ++i) {
    ASSERT_EQ(whole[i].size(), 1u);
    ASSERT_EQ(tiled[i].size(), 4u);
    long long rows = 0;
    for (const GemmCall& g : tiled[i]) {
      EXPECT_EQ(g.n, whole[i][0].n);
      EXPECT_EQ(g.k, whole[i][0].k);
      rows += g.m;
    }
    EXPECT_EQ(rows, whole[i][0].m);
  }
}

}  // namespace
}  // namespace ws

namespace ws {
namespace {

// A small Llama: 3 blocks, h = 64, 8 query heads of 8, 2 K/V heads, SwiGLU of 96, RMSNorm,
// rotary positions, untied LM head, no biases.
ModelSpec small_llama() {
  ModelSpec m{"small-llama", 3, 64, 8, 16, 128, 1};
  m.kv_heads = 2, m.ffn_hidden = 96, m.activation = Activation::swiglu, m.norm = NormKind::rmsnorm;
  m.position = Position::rope, m.tied_embeddings = false, m.biases = false;
  return m;
}

// The closed form of the GPT test with the Llama family's widths: QKV h -> h + 2 kv d = 96 and
// SwiGLU up h -> 2 ffn = 192 normal, projection h -> h and down ffn -> h transposed; one RMSNorm
// sum (m) per norm forward and backward; no biases or betas; wte, lnf's gamma and the untied
// LM head replicated over Z.
std::map<Key, Totals> llama_closed_form(const ModelSpec& model, const Layout& g, long long sequences,
                                        const StepScheduleOptions& o) {
  const double e = o.bytes_per_element(), h = model.hidden, L = model.layers, V = model.vocabulary;
  const double qkv = 96, up = 192, ffn = 96;
  const double m = static_cast<double>(sequences) / (g.data * g.z) * model.sequence_length;
  const double X = g.x, Y = g.y, Z = g.z;
  const double fp = o.recompute ? 2 : 1;
  ExpectedTotals t{g};
  auto add = [&](CollectiveOp op, CommGroup group, double count, double bytes) { t.add(op, group, count, bytes); };
  const double block_weights = (h * qkv + h * h + h * up + ffn * h) / (X * Y) * e;
  add(CollectiveOp::all_gather, CommGroup::z, 4 * L * fp, L * fp * block_weights);
  add(CollectiveOp::reduce_scatter, CommGroup::z, 4 * L, L * block_weights);
  // X: QKV's and up's outputs and two norm sums per forward; projection's and down's dX and two
  // norm sums in backward; lnf forward and backward; the logits; the gradient norm.
  add(CollectiveOp::all_reduce, CommGroup::x, L * (fp * 4 + 4) + 1 + 1 + 1 + 1,
      L * (fp * ((qkv + up) / Y + 2) * m + ((h + ffn) / Y + 2) * m) * e + 2 * m * e + m * V * e + 8);
  add(CollectiveOp::all_reduce, CommGroup::y, L * (fp * 2 + 2) + 1, L * (fp * 2 + 2) * m * h / X * e + 8);
  add(CollectiveOp::all_reduce, CommGroup::z, 1, 8);
  const double dp = o.overlap_data_parallel;
  add(CollectiveOp::all_reduce, CommGroup::data, dp ? L : 1, L * block_weights / Z);
  const double replicated = L * 2 * h / X + V * h / X + h / X + V * h / X;
  add(CollectiveOp::all_reduce, CommGroup::data_z, (dp ? L + 2 : 1) + 1, replicated * e + 16);
  return t.totals;
}

TEST(StepSchedule, LlamaCollectivesAndBytesFollowTheClosedForm) {
  const ModelSpec model = small_llama();
  // Y divides the 2 K/V heads.
  for (const Layout& layout : {Layout{1, 1, 1, 1}, Layout{2, 1, 1, 1}, Layout{1, 2, 1, 1}, Layout{1, 1, 2, 1},
                               Layout{1, 1, 1, 2}, Layout{2, 2, 2, 2}, Layout{4, 2, 1, 2}, Layout{1, 4, 2, 1}})
    for (const StepScheduleOptions& o : option_sets()) expect_closed_form(model, layout, 16, o, llama_closed_form);
}

// One rank runs the model flops of workload/flops.hpp in its GEMMs, in either family; its
// tensors are the parameter count; the rotary turns come in pairs around attention.
TEST(StepSchedule, OneRankOfEitherFamilyRunsTheFlopCountAndHoldsEveryParameter) {
  for (const ModelSpec& model : {kModel, small_llama()}) {
    const StepSchedule s = make_step_schedule(model, Layout{}, 4, {});
    double flops = 0;
    int rope = 0, bias = 0;
    for (const StepOp& op : s.ops) {
      for (const GemmCall& g : op.gemms) flops += g.flops();
      rope += op.task == StepTask::rope_forward || op.task == StepTask::rope_backward;
      bias += op.task == StepTask::fc_bias_add || op.task == StepTask::fc_bias_grad;
    }
    EXPECT_DOUBLE_EQ(flops, model_flops_per_step(model, Batch{4})) << model.name;
    double elements = 0;
    for (const RankTensor& t : rank_tensors(model, Layout{})) elements += static_cast<double>(t.elements);
    EXPECT_EQ(elements, parameter_count(model)) << model.name;
    EXPECT_EQ(rope, model.position == Position::rope ? 2 * model.layers : 0) << model.name;
    EXPECT_EQ(bias, model.biases ? 8 * model.layers : 0) << model.name;
  }
}

}  // namespace
}  // namespace ws
