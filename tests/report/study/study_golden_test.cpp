// Determinism of the study writers: the small Perlmutter study run twice gives the same bytes.
// (Its CSV is also pinned byte for byte through the CLI: tests/golden/cases.txt.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/study/study_run.hpp"
#include "sim/study/study_spec.hpp"
#include "report/study/study_writers.hpp"

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

StudyResult run_small_study() {
  const auto spec = load_study_spec(kSource + "/benchmarks/studies/perlmutter-small.yaml");
  return run_study(spec, kSource + "/machines");
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
