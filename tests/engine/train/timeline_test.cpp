// The timeline of a serial training step: every GEMM and kernel phase of every block appears,
// in forward, backward and (with --recompute) recompute, with names a simulator can reproduce;
// spans nest inside the step and the trace JSON is valid Chrome trace format.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "engine/train/trace_writer.hpp"
#include "engine/train/trainer.hpp"

namespace ws {
namespace {

RunConfig tiny(bool recompute) {
  RunConfig run;
  run.model = ModelSpec{"tiny", 2, 16, 2, 8, 32, 1};
  run.batch_sequences = 2;
  run.seed = 1;
  run.schedule.recompute = recompute;
  return run;
}

std::set<std::string> names_of_one_step(bool recompute) {
  const RunConfig run = tiny(recompute);
  const ProcessGrid grid = ProcessGrid::serial();
  const SyntheticTokens source(run.seed, run.model.vocabulary);
  Trainer<float> trainer(run, grid, source);
  grid.timeline().set_tracing(true);
  trainer.step();
  std::set<std::string> names;
  for (const TraceEvent& e : grid.timeline().events()) {
    names.insert(e.name);
    EXPECT_LE(e.start, e.end) << e.name;
  }
  return names;
}

TEST(Timeline, NamesEveryKernelPhaseOfEveryBlock) {
  const auto names = names_of_one_step(false);
  for (int b = 0; b < 2; ++b) {
    const std::string block = ".block" + std::to_string(b) + ".";
    for (const char* layer : {"qkv", "proj", "up", "down"}) {
      EXPECT_TRUE(names.contains("fwd" + block + layer + ".gemm")) << block << layer;
      EXPECT_TRUE(names.contains("bwd" + block + layer + ".dx_gemm")) << block << layer;
      EXPECT_TRUE(names.contains("bwd" + block + layer + ".dw_gemm")) << block << layer;
    }
    for (const char* kernel : {"attention", "gelu"}) {
      EXPECT_TRUE(names.contains("fwd" + block + kernel)) << block << kernel;
      EXPECT_TRUE(names.contains("bwd" + block + kernel)) << block << kernel;
    }
    for (const char* norm : {"ln1", "ln2"}) {  // in stages around their sums over X
      for (const char* stage : {".mean", ".variance", ".normalize"})
        EXPECT_TRUE(names.contains("fwd" + block + norm + stage)) << block << norm << stage;
      for (const char* stage : {".sums", ".dx"})
        EXPECT_TRUE(names.contains("bwd" + block + norm + stage)) << block << norm << stage;
    }
  }
  for (const char* phase :
       {"fwd.lm_head.gemm", "bwd.lm_head.dw_gemm", "fwd.cross_entropy", "optimizer.adamw"})
    EXPECT_TRUE(names.contains(phase)) << phase;
  for (const auto& n : names) EXPECT_EQ(n.find("recompute."), std::string::npos) << n;
}

TEST(Timeline, RecomputeRerunsEachBlockForward) {
  const auto names = names_of_one_step(true);
  for (int b = 0; b < 2; ++b)
    EXPECT_TRUE(names.contains("recompute.block" + std::to_string(b) + ".qkv.gemm")) << b;
}

TEST(Timeline, NothingIsRecordedUnlessTracing) {
  const ProcessGrid grid = ProcessGrid::serial();
  { const ComputeSpan span(grid.timeline(), "fwd", 0, "ln1"); }
  EXPECT_TRUE(grid.timeline().events().empty());
  grid.timeline().set_tracing(true);
  { const ComputeSpan span(grid.timeline(), "fwd", 0, "ln1"); }
  ASSERT_EQ(grid.timeline().events().size(), 1u);
  EXPECT_EQ(grid.timeline().events()[0].name, "fwd.block0.ln1");
}

TEST(Timeline, TraceEventsAreChromeTraceCompleteEvents) {
  const ProcessGrid grid = ProcessGrid::serial();
  grid.timeline().set_tracing(true);
  { const ComputeSpan span(grid.timeline(), "bwd", 3, "qkv.dw_gemm"); }
  const auto events = nlohmann::json::parse(trace_events_json(grid.timeline(), 7));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["name"], "bwd.block3.qkv.dw_gemm");
  EXPECT_EQ(events[0]["ph"], "X");
  EXPECT_EQ(events[0]["pid"], 7);
  EXPECT_EQ(events[0]["tid"], 0);
  EXPECT_GE(events[0]["dur"].get<double>(), 0.0);
}

}  // namespace
}  // namespace ws
