// `weakscale validate` for real: --quick runs the engine under mpirun, simulates each run and
// writes the CSV, JSON and both traces; bad inputs fail with one line naming what to fix.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "report/validation/validation_writers.hpp"
#include "tests/netns_capability.hpp"

namespace ws {
namespace {

struct CommandResult {
  int exit_code = -1;
  std::string output;
};

class ValidateCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("weakscale-validate-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  CommandResult run(const std::string& args) const {
    const auto log = dir_ / "log.txt";
    const std::string command =
        "'" + std::string(WEAKSCALE_EXE) + "' validate " + args + " >'" + log.string() + "' 2>&1";
    const int status = std::system(command.c_str());
    std::ifstream in(log);
    std::ostringstream text;
    text << in.rdbuf();
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
  }

  std::string machine() const { return std::string(WEAKSCALE_SOURCE_DIR) + "/machines/local.yaml"; }

  std::filesystem::path dir_;
};

TEST_F(ValidateCommand, QuickRunWritesTheRunsAndBothTraces) {
  const auto traces = dir_ / "traces";
  const auto result = run("--quick --no-plot --machine '" + machine() + "' --out '" + dir_.string() +
                          "' --traces '" + traces.string() + "'");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  // The committed file does not name its host: a quick run validates it as written, and says so.
  EXPECT_NE(result.output.find("may not describe this host (it does not say which host it was measured on"),
            std::string::npos)
      << result.output;
  std::ifstream csv(dir_ / "validation.csv");
  std::ostringstream text;
  text << csv.rdbuf();
  const auto records = parse_validation_csv(text.str());
  ASSERT_GE(records.size(), 1u);
  for (const auto& r : records) {
    EXPECT_GT(r.measured.step_s, 0);
    EXPECT_GT(r.measured.compute_s, 0);
    ASSERT_TRUE(r.simulated);
    EXPECT_GT(r.simulated->step_s, 0);
    EXPECT_GT(r.measured.compute("gemm"), 0);
    EXPECT_GT(r.simulated->compute("gemm"), 0);
    EXPECT_TRUE(std::filesystem::exists(traces / (r.run.id + "-engine.json"))) << r.run.id;
    EXPECT_TRUE(std::filesystem::exists(traces / (r.run.id + "-simulated.json"))) << r.run.id;
  }
  EXPECT_TRUE(std::filesystem::exists(dir_ / "validation.json"));
}

// Each configuration twice: one line per configuration, and only the kept run's trace remains.
TEST_F(ValidateCommand, RepeatedRunsKeepOneRecordAndOneTraceEach) {
  const auto traces = dir_ / "traces";
  const auto result = run("--quick --repeat 2 --no-plot --machine '" + machine() + "' --out '" + dir_.string() +
                          "' --traces '" + traces.string() + "'");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("x 2 engine runs"), std::string::npos) << result.output;
  std::ifstream csv(dir_ / "validation.csv");
  std::ostringstream text;
  text << csv.rdbuf();
  const auto records = parse_validation_csv(text.str());
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& f : std::filesystem::directory_iterator(traces)) ++files;
  EXPECT_EQ(files, 2 * records.size());  // <run>-engine.json and <run>-simulated.json, no try files
  for (const auto& r : records) EXPECT_TRUE(std::filesystem::exists(traces / (r.run.id + "-engine.json")));
}

TEST_F(ValidateCommand, MissingMachineFileIsOneLineInputError) {
  const auto result = run("--quick --machine '" + (dir_ / "none.yaml").string() + "' --out '" + dir_.string() + "'");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.output.find("none.yaml"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("weakscale calibrate"), std::string::npos) << result.output;
}

TEST_F(ValidateCommand, MissingEngineIsOneLineInputError) {
  const auto result = run("--quick --machine '" + machine() + "' --engine '" + (dir_ / "no-engine").string() +
                          "' --out '" + dir_.string() + "'");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.output.find("weakscale-engine"), std::string::npos) << result.output;
}

TEST_F(ValidateCommand, FailingEngineRunShowsTheCommand) {
  // /bin/false stands in for an engine that exits non-zero before printing a summary.
  const auto result = run("--quick --machine '" + machine() + "' --engine /bin/false --out '" + dir_.string() + "'");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("engine run r01 failed"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("mpirun -n 1 --oversubscribe"), std::string::npos) << result.output;
}

TEST_F(ValidateCommand, NetnsWithASharedMemoryMachineFileIsInputError) {
  const auto result = run("--quick --machine '" + machine() + "' --netns-rate '1 Gb/s' --out '" + dir_.string() + "'");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("node.devices"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("calibrate --netns-rate"), std::string::npos) << result.output;
}

TEST_F(ValidateCommand, NetnsMachineFileWithoutNetnsIsInputError) {
  const std::string netns_machine = std::string(WEAKSCALE_SOURCE_DIR) + "/machines/local-netns.yaml";
  const auto result = run("--quick --machine '" + netns_machine + "' --out '" + dir_.string() + "'");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--netns-rate"), std::string::npos) << result.output;
}

TEST_F(ValidateCommand, BadNetnsRateIsOneLineInputError) {
  const auto result = run("--quick --machine '" + machine() + "' --netns-rate fast --out '" + dir_.string() + "'");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--netns-rate"), std::string::npos) << result.output;
}

// The ranks in network namespaces over shaped veth links (needs root and namespaces).
TEST_F(ValidateCommand, NetnsQuickRunSaysHowTheRanksTalked) {
  if (!testing::can_make_shaped_namespaces()) {
    GTEST_SKIP() << "needs root, network namespaces, veth and tc tbf";
  }
  const std::string netns_machine = std::string(WEAKSCALE_SOURCE_DIR) + "/machines/local-netns.yaml";
  const auto result =
      run("--quick --no-plot --machine '" + netns_machine + "' --netns-rate '1 Gb/s' --out '" + dir_.string() + "'");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("validate: network: 2 ranks in network namespaces"), std::string::npos)
      << result.output;
  std::ifstream json(dir_ / "validation.json");
  std::ostringstream text;
  text << json.rdbuf();
  EXPECT_NE(text.str().find("tbf to 1.000 Gb/s"), std::string::npos);
}

}  // namespace
}  // namespace ws
