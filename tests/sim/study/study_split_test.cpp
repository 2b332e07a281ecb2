// The study run's two largest properties, labelled heavy (the sanitizer pass leaves them to the
// release pass; tests/CMakeLists.txt): an interrupted run resumes without redoing finished tasks and
// writes the same bytes, and threads or ranks that split the tasks give what one process gives. The
// smaller tests of study_resume_test.cpp run the same code under the sanitizers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sim/study/study_tasks.hpp"
#include "tests/sim/study/study_test_support.hpp"

namespace ws {
namespace {

using study_test::all_outputs;
using study_test::file_text;
using study_test::full_options;
using study_test::Interrupted;
using study_test::perlmutter;
using study_test::resume_temp_dir;
using study_test::small_spec;

TEST(StudyResume, InterruptedRunResumesWithoutRedoingFinishedTasksAndWritesTheSameBytes) {
  const auto dir = resume_temp_dir();
  const StudySpec spec = small_spec();
  const Machine machine = perlmutter();
  const std::string clean = all_outputs(*execute_study(spec, machine, full_options()));

  StudyRunOptions first = full_options();
  first.partial_file = dir / "perlmutter-small.partial.jsonl";
  constexpr int kFinishedBeforeInterrupt = 7;
  first.progress = [](const StudyProgressEvent& e) {
    if (e.done == kFinishedBeforeInterrupt) throw Interrupted();
  };
  EXPECT_THROW(execute_study(spec, machine, first), Interrupted);
  // A torn last line, as an interruption in the middle of a write would leave.
  { std::ofstream(first.partial_file, std::ios::app) << R"({"study": "cut sh)"; }

  StudyRunOptions second = full_options();
  second.partial_file = first.partial_file;
  int loaded = 0, computed = 0;
  second.progress = [&](const StudyProgressEvent& e) { (e.loaded ? loaded : computed)++; };
  const auto resumed = execute_study(spec, machine, second);
  ASSERT_TRUE(resumed);
  const auto tasks = plan_study_tasks(spec, machine, second);
  EXPECT_EQ(loaded, kFinishedBeforeInterrupt);
  EXPECT_EQ(computed, static_cast<int>(tasks.size()) - kFinishedBeforeInterrupt);
  EXPECT_EQ(all_outputs(*resumed), clean);
  std::filesystem::remove_all(dir);
}

// Threads alone, and ranks that each run threads, give the serial outputs; with threads the
// partial file holds the serial run's lines in the serial run's order. Ranks run one after the
// other in this process; rank 0's gather receives what the others sent.
TEST(StudyDistributed, RanksAndThreadsSplittingTheTasksGiveTheSerialResult) {
  const auto dir = resume_temp_dir();
  const StudySpec spec = small_spec();
  const Machine machine = perlmutter();
  StudyRunOptions serial_options = full_options();
  serial_options.partial_file = dir / "serial.partial.jsonl";
  const std::string serial = all_outputs(*execute_study(spec, machine, serial_options));

  StudyRunOptions threaded = full_options();
  threaded.jobs = 3;
  threaded.partial_file = dir / "threads.partial.jsonl";
  std::vector<std::string> progress;
  threaded.progress = [&](const StudyProgressEvent& e) { progress.push_back(std::to_string(e.done) + " " + e.line); };
  EXPECT_EQ(all_outputs(*execute_study(spec, machine, threaded)), serial) << "3 threads";
  EXPECT_EQ(file_text(threaded.partial_file), file_text(serial_options.partial_file));
  ASSERT_FALSE(progress.empty());
  for (std::size_t i = 0; i < progress.size(); ++i) EXPECT_EQ(progress[i].substr(0, progress[i].find(' ')), std::to_string(i + 1));

  constexpr int kRanks = 3;
  std::vector<std::string> shares(kRanks);
  std::optional<StudyResult> root;
  for (int rank = kRanks - 1; rank >= 0; --rank) {
    StudyRunOptions o = full_options();
    o.jobs = 2;
    o.ranks.rank = rank;
    o.ranks.size = kRanks;
    o.ranks.gather_to_root = [&, rank](const std::string& mine) {
      shares[static_cast<std::size_t>(rank)] = mine;
      return rank == 0 ? shares : std::vector<std::string>{};
    };
    auto r = execute_study(spec, machine, o);
    EXPECT_EQ(r.has_value(), rank == 0);
    if (rank == 0) root = std::move(r);
  }
  ASSERT_TRUE(root);
  EXPECT_EQ(all_outputs(*root), serial) << kRanks << " ranks of 2 threads";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ws
