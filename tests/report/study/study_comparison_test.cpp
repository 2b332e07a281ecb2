// Studies side by side: a study's JSON read back point for point, the figure's script with one
// curve per study and the step time against the fastest at each device count, and unreadable
// files refused naming the file and key.
#include "report/study/study_comparison.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/input_error.hpp"
#include "report/study/study_writers.hpp"
#include "sim/study/study_run.hpp"

namespace ws {
namespace {

using ::testing::HasSubstr;

std::filesystem::path scratch(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("ws-compare-" + std::to_string(::getpid()) + "-" + name);
  std::filesystem::create_directories(dir);
  return dir;
}

StudyResult strategy_result(const char* strategy) {
  const auto spec = parse_study_spec(std::string("machine: perlmutter\nstrategies: [") + strategy +
                                         "]\npoints:\n"
                                         "  - {devices: 16, model: 5B, batch_sequences: 16}\n"
                                         "  - {devices: 64, model: 10B, batch_sequences: 64}\n",
                                     std::string("perlmutter-") + strategy + ".yaml");
  return run_study(spec, std::string(WEAKSCALE_SOURCE_DIR) + "/machines");
}

TEST(StudyComparison, ReadsAStudysJsonPointForPoint) {
  const StudyResult result = strategy_result("fsdp");
  const auto dir = scratch("read");
  const ComparedStudy s = read_study_json(write_study_json(result, dir));
  EXPECT_EQ(s.machine, "perlmutter");
  EXPECT_EQ(s.label, "FSDP / HSDP");
  ASSERT_EQ(s.points.size(), result.rows.size());
  for (std::size_t i = 0; i < s.points.size(); ++i) {
    EXPECT_EQ(s.points[i].devices, result.rows[i].point.devices);
    EXPECT_EQ(s.points[i].layout, to_string(result.rows[i].best.layout));
    EXPECT_NEAR(s.points[i].step_s, result.rows[i].best.step.total().seconds(), 1e-9);
    EXPECT_NEAR(s.points[i].efficiency, result.rows[i].efficiency, 1e-9);
  }
  std::filesystem::remove_all(dir);
}

// The fastest study at a device count is 0 % slower there; each study is its own curve.
TEST(StudyComparison, ScriptHasOneCurvePerStudyAgainstTheFastest) {
  ComparedStudy a{"a.json", "a", "m", "4D", {{16, "5B", "16x1x1x1", 2.0, 1.0, 0.5, 0.4}}};
  ComparedStudy b{"b.json", "b", "m", "FSDP / HSDP", {{16, "5B", "dp_shard=16", 2.5, 1.0, 0.4, 0.3}}};
  const std::string script = comparison_plot_script({a, b});
  EXPECT_THAT(script, HasSubstr("title \"4D\""));
  EXPECT_THAT(script, HasSubstr("title \"FSDP / HSDP\""));
  EXPECT_THAT(script, HasSubstr("$study0 << EOD\n16 40.0000 100.0000 0.0000 50.0000"));
  EXPECT_THAT(script, HasSubstr("$study1 << EOD\n16 30.0000 100.0000 25.0000 40.0000"));
}

TEST(StudyComparison, AMissingKeyIsAnInputErrorNamingFileAndKey) {
  const auto dir = scratch("bad");
  const auto file = dir / "bad.json";
  std::ofstream(file) << R"({"study": "s", "machine": "m", "rows": [{"devices": 16, "model": "5B", "step_s": 1.0}]})";
  try {
    read_study_json(file);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr(file.string()));
    EXPECT_THAT(std::string(e.what()), HasSubstr("rows[0].layout"));
  }
  std::ofstream(file) << "not json";
  EXPECT_THROW(read_study_json(file), InputError);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ws
