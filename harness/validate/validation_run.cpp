#include "harness/validate/validation_run.hpp"

#include <fmt/format.h>

namespace ws {
namespace {

struct MatrixModel {
  ModelSpec spec;
  long long sequences_per_rank = 0;
};

// Sizes chosen so that the whole matrix takes a few minutes on two cores, while GEMMs are still
// large enough (k, n >= 256) that the machine file's efficiency table covers them.
MatrixModel model(int layers, int hidden, int sequence, int vocabulary, long long sequences_per_rank) {
  ModelSpec m;
  m.name = fmt::format("h{}l{}", hidden, layers);
  m.layers = layers;
  m.hidden = hidden;
  m.heads = hidden / 64;  // head dimension 64, as in the GPT family
  m.sequence_length = sequence;
  m.vocabulary = vocabulary;
  return MatrixModel{m, sequences_per_rank};
}

// The same with the Llama architecture (docs/models.md): half as many K/V heads as heads, SwiGLU
// of the reference width, RMSNorm, rotary positions, untied LM head, no biases.
MatrixModel llama_model(int layers, int hidden, int sequence, int vocabulary, long long sequences_per_rank) {
  MatrixModel m = model(layers, hidden, sequence, vocabulary, sequences_per_rank);
  m.spec.name = fmt::format("llama-h{}l{}", hidden, layers);
  m.spec.kv_heads = m.spec.heads / 2;
  m.spec = with_llama_architecture(m.spec);
  return m;
}

const Layout kOneRank{1, 1, 1, 1};
// Every way to put two ranks on one axis (Gdata x Gx x Gy x Gz).
const std::vector<Layout> kTwoRankLayouts{{2, 1, 1, 1}, {1, 2, 1, 1}, {1, 1, 2, 1}, {1, 1, 1, 2}};
// Four ranks: two axes at a time, so that collectives of two groups overlap.
const std::vector<Layout> kFourRankLayouts{{2, 1, 1, 2}, {1, 2, 2, 1}, {2, 1, 2, 1}, {1, 1, 2, 2}};
// Eight and sixteen ranks, on hosts with that many cores: three and four axes at once, and data
// parallelism alone, whose all-reduce now spans more ranks than the two- and four-rank runs test.
const std::vector<Layout> kEightRankLayouts{{2, 2, 2, 1}, {2, 1, 2, 2}, {1, 2, 2, 2}, {8, 1, 1, 1}};
const std::vector<Layout> kSixteenRankLayouts{{2, 2, 2, 2}, {4, 1, 2, 2}, {2, 1, 2, 4}, {16, 1, 1, 1}};

Layout pipelined(Layout stage, int pp, int vpp, int micro_batches) {
  stage.pipeline = pp, stage.virtual_stages = vpp, stage.micro_batches = micro_batches;
  return stage;
}

StepScheduleOptions switches(bool overlap_on, bool recompute) {
  StepScheduleOptions o;
  o.recompute = recompute;
  o.overlap_all_reduce = o.overlap_reduce_scatter = o.overlap_all_gather = o.overlap_data_parallel = overlap_on;
  return o;
}

class MatrixBuilder {
 public:
  void add(const MatrixModel& m, const Layout& layout, bool overlap_on, bool recompute = false) {
    ValidationRun run;
    run.id = fmt::format("r{:02}", runs_.size() + 1);
    run.model = m.spec;
    run.layout = layout;
    run.sequences = m.sequences_per_rank * layout.devices();
    run.schedule = switches(overlap_on, recompute);
    runs_.push_back(run);
  }
  std::vector<ValidationRun> take() { return std::move(runs_); }

 private:
  std::vector<ValidationRun> runs_;
};

std::vector<ValidationRun> quick_matrix() {
  const MatrixModel tiny = model(2, 64, 32, 256, 2);
  MatrixBuilder b;
  b.add(tiny, kOneRank, true);
  b.add(tiny, Layout{1, 1, 1, 2}, true);
  auto runs = b.take();
  for (auto& run : runs) run.steps = 3, run.warmup = 1;
  return runs;
}

}  // namespace

std::vector<ValidationRun> validation_matrix(const MatrixOptions& options) {
  if (options.quick) return quick_matrix();
  const MatrixModel small = model(2, 256, 128, 1024, 4);
  const MatrixModel medium = model(4, 512, 128, 1024, 4);
  const MatrixModel wide = model(2, 768, 256, 2048, 2);
  MatrixBuilder b;
  for (const auto& m : {small, medium, wide}) b.add(m, kOneRank, true);
  b.add(medium, kOneRank, true, /*recompute=*/true);
  if (options.ranks_max >= 2) {
    for (const auto& m : {small, medium}) {
      for (const Layout& layout : kTwoRankLayouts) {
        for (const bool on : {true, false}) b.add(m, layout, on);
      }
    }
  }
  if (options.ranks_max >= 4) {
    for (const Layout& layout : kFourRankLayouts) b.add(small, layout, true);
  }
  // The Llama architecture at the small GPT's size: one rank, and every two-rank layout.
  const MatrixModel small_llama = llama_model(2, 256, 128, 1024, 4);
  b.add(small_llama, kOneRank, true);
  if (options.ranks_max >= 2)
    for (const Layout& layout : kTwoRankLayouts) b.add(small_llama, layout, true);
  // Pipelines: gradient accumulation on one rank; two stages with 1F1B (all bubble at mb = pp, less
  // at 2 pp) and the interleaved schedule over two chunks of the 4-block model, overlap on and off;
  // the Llama; with four ranks, data or X parallel within each stage.
  if (options.ranks_max >= 1) b.add(small, pipelined(kOneRank, 1, 1, 2), true);
  if (options.ranks_max >= 2) {
    b.add(small, pipelined(kOneRank, 2, 1, 2), true);
    b.add(small, pipelined(kOneRank, 2, 1, 4), false);
    b.add(medium, pipelined(kOneRank, 2, 1, 4), true);
    b.add(medium, pipelined(kOneRank, 2, 2, 2), true);
    b.add(medium, pipelined(kOneRank, 2, 2, 4), false);
    b.add(small_llama, pipelined(kOneRank, 2, 1, 2), true);
    // Megatron-LM's tp with its vocabulary-parallel head, and its distributed optimizer.
    b.add(small, *parse_layout("tp=2,dp=1"), true);
    b.add(small, *parse_layout("tp=1,dp=2,zero=1"), true);
    // Megatron-LM's sequence parallelism: norms and residuals on half the tokens each, the
    // column-parallel inputs gathered and the row-parallel outputs reduce-scattered over tp.
    b.add(small, *parse_layout("tp=2,dp=1,sp"), true);
    b.add(medium, *parse_layout("tp=2,dp=1,sp"), false);
  }
  if (options.ranks_max >= 4) {
    b.add(small, pipelined(Layout{2, 1, 1, 1}, 2, 1, 2), true);
    b.add(small, pipelined(Layout{1, 2, 1, 1}, 2, 1, 2), true);
  }
  if (options.ranks_max >= 8) {
    for (const Layout& layout : kEightRankLayouts) b.add(small, layout, true);
  }
  if (options.ranks_max >= 16) {
    for (const Layout& layout : kSixteenRankLayouts) b.add(small, layout, true);
  }
  return b.take();
}

std::vector<std::string> engine_arguments(const ValidationRun& run) {
  const ModelSpec& m = run.model;
  std::vector<std::string> args{"--layers", std::to_string(m.layers),          "--hidden", std::to_string(m.hidden),
                                "--heads",  std::to_string(m.heads),           "--seq",    std::to_string(m.sequence_length),
                                "--vocab",  std::to_string(m.vocabulary),      "--batch",  std::to_string(run.sequences),
                                "--steps",  std::to_string(run.steps),         "--warmup", std::to_string(run.warmup),
                                "--layout", to_string(run.layout)};
  if (!m.gpt_style()) {
    args.insert(args.end(), {"--family", family_name(m), "--kv-heads",
                             std::to_string(m.kv_head_count()), "--ffn-hidden", std::to_string(m.ffn())});
  }
  const StepScheduleOptions& o = run.schedule;
  if (o.recompute) args.emplace_back("--recompute");
  if (!o.overlap_all_reduce) args.emplace_back("--no-oar");
  if (!o.overlap_reduce_scatter) args.emplace_back("--no-ors");
  if (!o.overlap_all_gather) args.emplace_back("--no-oag");
  if (!o.overlap_data_parallel) args.emplace_back("--no-overlap-dp");
  return args;
}

StepSchedule step_schedule(const ValidationRun& run) {
  if (run.layout.pipelined()) return make_stage_schedule(run.model, run.layout, run.sequences, 0, run.schedule);
  return make_step_schedule(run.model, run.layout, run.sequences, run.schedule);
}

std::string describe(const ValidationRun& run) {
  const ModelSpec& m = run.model;
  return fmt::format("{}h{} l{} s{} v{} b{} {}{} overlap {}", m.gpt_style() ? "" : "llama ", m.hidden, m.layers,
                     m.sequence_length, m.vocabulary,
                     run.sequences, to_string(run.layout), run.schedule.recompute ? " recompute" : "",
                     all_overlaps_on(run.schedule) ? "on" : "off");
}

}  // namespace ws
