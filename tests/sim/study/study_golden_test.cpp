// End-to-end golden test: the small Perlmutter study through run_study and the CSV writer must
// reproduce tests/golden/perlmutter-small.csv byte for byte.
// After a deliberate change to the model, a machine file or the CSV format, regenerate with
//   scripts/update-golden.sh [build-dir]
// and review `git diff tests/golden` before committing it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/study/study_run.hpp"
#include "sim/study/study_spec.hpp"
#include "sim/study/study_writers.hpp"

namespace ws {
namespace {

const std::string kSource = WEAKSCALE_SOURCE_DIR;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A directory of its own per test, so that parallel ctest runs never share files.
std::filesystem::path fresh_temp_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const auto dir =
      std::filesystem::temp_directory_path() / (std::string("weakscale-") + info->test_suite_name() + "-" +
                                                info->name() + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// First differing line, so that a failure says what changed without dumping both files.
std::string first_difference(const std::string& expected, const std::string& actual) {
  std::istringstream e(expected), a(actual);
  std::string le, la;
  for (int line = 1;; ++line) {
    const bool more_e = static_cast<bool>(std::getline(e, le));
    const bool more_a = static_cast<bool>(std::getline(a, la));
    if (!more_e && !more_a) return "files differ only in line endings or a trailing newline";
    if (le != la || more_e != more_a) {
      return "line " + std::to_string(line) + ":\n  golden: " + (more_e ? le : "<end of file>") +
             "\n  now:    " + (more_a ? la : "<end of file>");
    }
  }
}

StudyResult run_small_study() {
  const auto spec = load_study_spec(kSource + "/benchmarks/studies/perlmutter-small.yaml");
  return run_study(spec, kSource + "/machines");
}

TEST(StudyGolden, PerlmutterSmallCsvMatchesGolden) {
  const auto dir = fresh_temp_dir();
  const auto written = write_study_csv(run_small_study(), dir);
  EXPECT_EQ(written, dir / "perlmutter-small.csv");
  const auto golden_path = std::filesystem::path(kSource) / "tests/golden/perlmutter-small.csv";
  ASSERT_TRUE(std::filesystem::exists(golden_path))
      << golden_path << " is missing; create it with scripts/update-golden.sh";
  const std::string golden = read_file(golden_path);
  const std::string now = read_file(written);
  EXPECT_EQ(golden, now) << "perlmutter-small.csv differs from the golden file at "
                         << first_difference(golden, now)
                         << "\nIf the change is intended, run scripts/update-golden.sh [build-dir] "
                            "and review git diff tests/golden. Output kept in "
                         << written;
  if (golden == now) std::filesystem::remove_all(dir);
}

TEST(StudyGolden, TwoRunsWriteIdenticalBytes) {
  const auto dir_a = fresh_temp_dir() / "a";
  const auto dir_b = dir_a.parent_path() / "b";
  const auto csv_a = write_study_csv(run_small_study(), dir_a);
  const auto csv_b = write_study_csv(run_small_study(), dir_b);
  const auto json_a = write_study_json(run_small_study(), dir_a);
  const auto json_b = write_study_json(run_small_study(), dir_b);
  EXPECT_EQ(read_file(csv_a), read_file(csv_b));
  EXPECT_EQ(read_file(json_a), read_file(json_b));
  std::filesystem::remove_all(dir_a.parent_path());
}

}  // namespace
}  // namespace ws
