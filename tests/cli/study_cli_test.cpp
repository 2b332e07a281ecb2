// `weakscale study` end to end: an interrupted study resumes from <name>.partial.jsonl without
// redoing finished tasks and writes the same bytes; `mpirun -np 2 weakscale study` writes exactly
// what the serial run writes (long: starts MPI); the default options write the golden CSV.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/cli/command_run.hpp"
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "sim/machine/machine_loader.hpp"
#include "sim/study/study_run.hpp"

namespace {

using ::testing::HasSubstr;

const std::string kSource = WEAKSCALE_SOURCE_DIR;
const std::string kSpec = kSource + "/benchmarks/studies/perlmutter-small.yaml";

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::filesystem::path fresh_dir(const std::string& leaf) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const auto dir = std::filesystem::temp_directory_path() /
                   (std::string("weakscale-study-cli-") + info->name() + "-" + std::to_string(::getpid())) / leaf;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

using ws::testing::CommandRun;

// `prefix` goes before the binary (e.g. "mpirun -np 2"); runs from the source root.
CommandRun run(const std::string& prefix, const std::string& args, const std::filesystem::path& err_file) {
  return ws::testing::run_command(
      "cd '" + kSource + "' && " + prefix + " '" + std::string(WEAKSCALE_EXE) + "' " + args, err_file);
}

// Samples and the placement table, not the sensitivity table (its tasks are like the samples' and
// would triple the run).
std::string study_args(const std::filesystem::path& out) {
  return "study '" + kSpec + "' --samples 4 --seed 9 --top-k 4 --no-sensitivity --no-plot --out '" + out.string() + "'";
}

void expect_same_files(const std::filesystem::path& a, const std::filesystem::path& b) {
  int compared = 0;
  for (const auto& entry : std::filesystem::directory_iterator(a)) {
    const auto name = entry.path().filename();
    if (name.string().find("perlmutter-small") != 0) continue;
    ASSERT_TRUE(std::filesystem::exists(b / name)) << name;
    EXPECT_EQ(read_file(entry.path()), read_file(b / name)) << name << " differs";
    ++compared;
  }
  EXPECT_EQ(compared, 4);  // csv, json, candidates, placement-routing (no partial left)
}

struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};

TEST(StudyCli, InterruptedStudyResumesWithoutRedoingFinishedTasks) {
  const auto clean = fresh_dir("clean");
  const auto resumed = fresh_dir("resumed");
  const CommandRun first = run("", study_args(clean), clean / "stderr.txt");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_FALSE(std::filesystem::exists(clean / "perlmutter-small.partial.jsonl"));  // removed when complete

  // The first 5 tasks finished before an interruption: run them through the library with the
  // options the command uses, and stop.
  ws::StudyRunOptions o;
  o.evaluator = ws::flow_evaluator();
  o.top_k = 4;
  o.samples = 4;
  o.seed = 9;
  o.placement_routing = true;
  o.sensitivity = false;
  o.partial_file = resumed / "perlmutter-small.partial.jsonl";
  o.progress = [](const ws::StudyProgressEvent& e) {
    if (e.done == 5) throw Interrupted();
  };
  EXPECT_THROW(ws::execute_study(ws::load_study_spec(kSpec), ws::load_machine(kSource + "/machines/perlmutter.yaml"), o),
               Interrupted);

  const CommandRun second = run("", study_args(resumed), resumed / "stderr.txt");
  ASSERT_EQ(second.exit_code, 0) << second.err;
  std::size_t loaded = 0;
  for (auto at = second.err.find("(from partial file)"); at != std::string::npos;
       at = second.err.find("(from partial file)", at + 1)) {
    ++loaded;
  }
  EXPECT_EQ(loaded, 5u) << second.err;
  std::filesystem::remove(clean / "stderr.txt");
  std::filesystem::remove(resumed / "stderr.txt");
  expect_same_files(clean, resumed);
}

TEST(StudyCli, MpirunWithTwoRanksWritesWhatTheSerialRunWrites) {
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  const auto serial = fresh_dir("serial");
  const auto distributed = fresh_dir("distributed");
  const CommandRun a = run("", study_args(serial), serial / "stderr.txt");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const CommandRun b = run(std::string("'") + WEAKSCALE_MPIEXEC + "' -n 2 --oversubscribe", study_args(distributed),
                    distributed / "stderr.txt");
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_THAT(b.out, HasSubstr("wrote "));
  std::filesystem::remove(serial / "stderr.txt");
  std::filesystem::remove(distributed / "stderr.txt");
  expect_same_files(serial, distributed);
}

// The command as README's users run it writes the golden CSV (tests/golden/; the in-process
// golden tests cover the same code under the sanitizers).
TEST(StudyCli, StudyWritesTheGoldenCsv) {
  const auto out = fresh_dir("golden");
  const CommandRun study =
      run("", "study benchmarks/studies/perlmutter-small.yaml --no-plot --out '" + out.string() + "'", out / "stderr.txt");
  ASSERT_EQ(study.exit_code, 0) << study.err;
  EXPECT_THAT(study.err, HasSubstr("[3/3] perlmutter 256 devices"));
  EXPECT_THAT(study.out, HasSubstr("perlmutter-small.csv"));
  EXPECT_TRUE(std::filesystem::exists(out / "perlmutter-small.json"));
  EXPECT_FALSE(std::filesystem::exists(out / "perlmutter-small.png"));  // --no-plot
  EXPECT_EQ(read_file(out / "perlmutter-small.csv"), read_file(kSource + "/tests/golden/perlmutter-small.csv"))
      << "regenerate with scripts/update-golden.sh if the change is intended";
}

}  // namespace
