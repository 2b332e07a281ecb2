// The engine summary reader and the engine's command line (plain mpirun, and with a rank launcher).
#include <gtest/gtest.h>

#include <string>

#include "harness/validate/engine_runner.hpp"

namespace ws {
namespace {

TEST(EngineSummary, ReadsTheSummaryLineAmongOthers) {
  const std::string output =
      "some mpirun warning\n"
      "{\"event\":\"start\",\"layout\":\"1x2x1x1\"}\n"
      "{\"event\":\"step\",\"time_s\":9}\n"
      "{not json\n"
      "{\"event\":\"summary\",\"step_s\":0.5,\"compute_s\":0.4,\"exposed_comm_s\":0.1,"
      "\"cpu_s\":0.45,\"comm\":{\"x\":{\"exposed_s\":0.08,\"bytes\":1,\"collectives\":2},\"world\":{\"exposed_s\":0.02}}}\n"
      "{\"event\":\"gemm_tuning\"}\n";
  const PhaseTimes t = parse_engine_summary(output);
  EXPECT_DOUBLE_EQ(t.step_s, 0.5);
  EXPECT_DOUBLE_EQ(t.compute_s, 0.4);
  EXPECT_DOUBLE_EQ(t.cpu_s, 0.45);
  EXPECT_DOUBLE_EQ(t.exposed("x"), 0.08);
  EXPECT_DOUBLE_EQ(t.exposed("world"), 0.02);
  EXPECT_DOUBLE_EQ(t.exposed("y"), 0.0);
}

TEST(EngineSummary, NoSummaryIsAnErrorShowingTheOutput) {
  try {
    parse_engine_summary("weakscale-engine: error: --layout 3x1x1x1 needs 3 ranks\n");
    FAIL() << "expected EngineRunError";
  } catch (const EngineRunError& e) {
    EXPECT_NE(std::string(e.what()).find("needs 3 ranks"), std::string::npos);
  }
}

TEST(EngineCommand, OversubscribesOneBlasThreadPerRank) {
  const ValidationRun run = validation_matrix(MatrixOptions{2, false}).back();
  const auto command = engine_command(EngineRunner{"/bin/engine", "mpirun"}, run);
  const std::string text = [&] {
    std::string s;
    for (const auto& w : command) s += w + " ";
    return s;
  }();
  EXPECT_EQ(text.rfind("mpirun -n 2 --oversubscribe -x OPENBLAS_NUM_THREADS=1 /bin/engine --layers", 0), 0u) << text;
}

// The network-namespace mode: mpirun's own options first, then the rank's wrapper, then the engine.
TEST(EngineCommand, PutsTheLauncherBetweenMpirunAndTheEngine) {
  const ValidationRun run = validation_matrix(MatrixOptions{2, false}).back();
  EngineRunner runner{"/bin/engine", "mpirun"};
  runner.launcher = RankLauncher{{"--mca", "btl", "self,tcp"}, {"/bin/netns-exec", "--prefix", "ws1n", "--"}};
  std::string text;
  for (const auto& w : engine_command(runner, run)) text += w + " ";
  EXPECT_EQ(text.rfind("mpirun -n 2 --oversubscribe -x OPENBLAS_NUM_THREADS=1 --mca btl self,tcp /bin/netns-exec "
                       "--prefix ws1n -- /bin/engine --layers",
                       0),
            0u)
      << text;
}

}  // namespace
}  // namespace ws
