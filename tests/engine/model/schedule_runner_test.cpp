// The runner is the engine's step: it must run every op in the schedule's order, trace exactly
// the traced ones, and refuse a buffer that is not the payload the simulator was told about.
#include "engine/model/schedule_runner.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace ws {
namespace {

StepOp compute_op(std::string name, bool traced = true) {
  StepOp op;
  op.kind = StepOpKind::compute;
  op.name = std::move(name);
  op.traced = traced;
  return op;
}

StepOp all_reduce_op(std::string name, std::uint64_t bytes) {
  StepOp op;
  op.kind = StepOpKind::collective;
  op.name = std::move(name);
  op.collective = CollectiveOp::all_reduce;
  op.group = CommGroup::x;
  op.bytes = bytes;
  return op;
}

// Records the ops it is handed and answers every collective with `floats` elements.
class RecordingHandler final : public OpHandler<float> {
 public:
  explicit RecordingHandler(std::size_t floats) : buffer(floats) {}
  void compute(const StepOp& op) override { seen.push_back(op.name); }
  CollectiveBuffers<float> buffers(const StepOp& op) override {
    seen.push_back(op.name);
    return {nullptr, buffer.data(), buffer.size()};
  }
  std::vector<std::string> seen;
  std::vector<float> buffer;
};

TEST(ScheduleRunner, RunsEveryOpInOrderAndTracesOnlyTheTracedOnes) {
  ProcessGrid grid = ProcessGrid::serial();
  grid.timeline().set_tracing(true);
  StepSchedule schedule;
  schedule.ops = {compute_op("fwd.a"), compute_op("fwd.between", false), all_reduce_op("allreduce.x", 16),
                  compute_op("fwd.b")};
  RecordingHandler handler(4);
  ScheduleRunner<float>(grid).run(schedule, handler);
  EXPECT_EQ(handler.seen, (std::vector<std::string>{"fwd.a", "fwd.between", "allreduce.x", "fwd.b"}));
  std::vector<std::string> traced;
  for (const TraceEvent& e : grid.timeline().events())
    if (!e.comm) traced.push_back(e.name);
  EXPECT_EQ(traced, (std::vector<std::string>{"fwd.a", "fwd.b"}));
}

TEST(ScheduleRunner, RefusesABufferThatIsNotTheOpsPayload) {
  ProcessGrid grid = ProcessGrid::serial();
  StepSchedule schedule;
  schedule.ops = {all_reduce_op("allreduce.x", 16)};
  RecordingHandler three_floats(3);
  try {
    ScheduleRunner<float>(grid).run(schedule, three_floats);
    FAIL() << "a 12-byte buffer for a 16-byte all-reduce was accepted";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("allreduce.x"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("12 bytes"), std::string::npos) << e.what();
  }
  // A bf16 schedule's payload is 2 bytes an element: the same 4 floats are 8 bytes of it.
  schedule.precision = Precision::bf16;
  RecordingHandler four_floats(4);
  EXPECT_THROW(ScheduleRunner<float>(grid).run(schedule, four_floats), std::logic_error);
  schedule.ops[0].bytes = 8;
  EXPECT_NO_THROW(ScheduleRunner<float>(grid).run(schedule, four_floats));
}

}  // namespace
}  // namespace ws
