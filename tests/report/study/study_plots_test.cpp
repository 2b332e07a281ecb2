// The plots: scripts put devices on a log2 axis with every device count as a tic, and gnuplot
// (when installed) writes non-empty PNG and SVG files for both figures.
#include "report/study/study_plots.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/study/study_run.hpp"
#include "sim/study/uncertainty.hpp"

namespace ws {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

StudyResult small_result() {
  const auto spec = parse_study_spec(
      "machine: perlmutter\npoints:\n"
      "  - {devices: 16, model: 5B, batch_sequences: 16}\n"
      "  - {devices: 64, model: 10B, batch_sequences: 64}\n",
      "perlmutter-plot-test.yaml");
  return run_study(spec, std::string(WEAKSCALE_SOURCE_DIR) + "/machines");
}

TEST(StudyPlots, EfficiencyScriptUsesLog2DeviceAxisWithEveryPoint) {
  const std::string script = efficiency_plot_script(small_result());
  EXPECT_THAT(script, HasSubstr("set logscale x 2"));
  EXPECT_THAT(script, HasSubstr("set xtics (\"16\" 16, \"64\" 64)"));
  EXPECT_THAT(script, HasSubstr("perlmutter"));
  EXPECT_THAT(script, HasSubstr("MFU"));
}

TEST(StudyPlots, BreakdownScriptStacksComputeAndEveryExposedPart) {
  const std::string script = breakdown_plot_script(small_result());
  EXPECT_THAT(script, HasSubstr("rowstacked"));
  for (const char* part : {"compute", "exposed X", "exposed Y", "exposed Z", "exposed data", "skew"}) {
    EXPECT_THAT(script, HasSubstr(part));
  }
}

// One cluster per point with every term of the decomposition, in percentage points, and the
// efficiency itself: the terms of each data line add up to the efficiency minus 100.
TEST(StudyPlots, DecompositionScriptCarriesEveryTermAndAddsUpToTheEfficiency) {
  const StudyResult r = small_result();
  const std::string script = decomposition_plot_script(r);
  EXPECT_THAT(script, HasSubstr("clustered"));
  for (const char* part : {"compute efficiency", "exposed X", "exposed Y", "exposed Z", "exposed data", "skew",
                           "contention", "efficiency (right)"}) {
    EXPECT_THAT(script, HasSubstr(part));
  }
  std::istringstream lines(script.substr(script.find("$terms << EOD\n") + 14));
  std::string line;
  std::getline(lines, line);  // the first point: every term zero
  std::getline(lines, line);
  std::istringstream fields(line);
  std::string devices, model, layout;
  fields >> devices >> model >> layout;
  double sum = 0, v = 0;
  std::vector<double> values;
  while (fields >> v) values.push_back(v);
  // compute, X, Y, Z, data, skew, contention, the efficiency, then the bubble and stage transfers.
  ASSERT_EQ(values.size(), 10u) << line;
  for (std::size_t i = 0; i < values.size(); ++i)
    if (i != 7) sum += values[i];
  EXPECT_NEAR(sum, values[7] - 100.0, 1e-3) << line;
}

// A study that ranks other strategies draws the pipeline's parts (the bubble, the wait for stage
// transfers) in both per-point figures; a 4D study's figures keep their parts.
TEST(StudyPlots, StrategiesStudiesDrawTheBubbleAndStageTransfers) {
  const auto spec = parse_study_spec(
      "machine: perlmutter\nstrategies: [megatron]\npoints:\n"
      "  - {devices: 16, model: 5B, batch_sequences: 16}\n"
      "  - {devices: 64, model: 10B, batch_sequences: 64}\n",
      "perlmutter-strategies-plot-test.yaml");
  const StudyResult megatron = run_study(spec, std::string(WEAKSCALE_SOURCE_DIR) + "/machines");
  for (const std::string& script : {breakdown_plot_script(megatron), decomposition_plot_script(megatron)}) {
    EXPECT_THAT(script, HasSubstr("pipeline bubble"));
    EXPECT_THAT(script, HasSubstr("waiting for stage transfers"));
  }
  const StudyResult four_d = small_result();
  for (const std::string& script : {breakdown_plot_script(four_d), decomposition_plot_script(four_d)})
    EXPECT_THAT(script, Not(HasSubstr("pipeline bubble")));
}

TEST(StudyPlots, BandsAreDrawnOnlyForSampledStudies) {
  StudyResult r = small_result();
  EXPECT_THAT(efficiency_plot_script(r), Not(HasSubstr("filledcurves")));
  r.samples = 3;
  for (auto& row : r.rows) {
    row.efficiency_band = Band{0.9, 1.0, 1.1};
    row.peak_fraction_band = Band{0.3, 0.4, 0.5};
  }
  const std::string script = efficiency_plot_script(r);
  EXPECT_THAT(script, HasSubstr("using 1:6:8 with filledcurves"));  // efficiency band
  EXPECT_THAT(script, HasSubstr("using 1:9:11 with filledcurves"));  // percent-of-peak band
  EXPECT_THAT(script, HasSubstr("10th-90th percentile of 3 draws"));
  // The legend says which line is the headline, and that it is a best case where the file's ranges
  // say so (the small study's machine: Perlmutter, whose GEMM scale and falloff start at the best).
  EXPECT_THAT(script, HasSubstr("headline: file as written (best case in 2 of its ranges)"));
  EXPECT_THAT(script, HasSubstr("median of the draws (typical)"));
}

TEST(StudyPlots, CandidatesScriptHasEveryCandidateOfEveryPoint) {
  const StudyResult r = small_result();
  const std::string script = candidates_plot_script(r);
  for (const auto& row : r.rows) {
    for (const auto& c : row.candidates) EXPECT_THAT(script, HasSubstr(to_string(c.layout)));
  }
}

// Two made-up sensitivity rows on the small study: every bar runs from the file's value to the value
// at its end (either order), the largest effect sits on top, and no table means no figure.
TEST(StudyPlots, SensitivityTornadoDrawsEachEndFromTheFileValue) {
  StudyResult r = small_result();
  EXPECT_EQ(sensitivity_plot_script(r), "");
  const double peak = 100.0 * r.rows.back().best.hardware_peak_fraction;
  const double eff = 100.0 * r.rows.back().efficiency;
  SensitivityRow big;
  big.range = UncertaintyRange{UncertainParameter::gemm_efficiency_scale, 0.5, 1.0, {}, {}, "estimate"};
  big.peak_fraction_low = -0.10;  // -10 points at the low end, none at the high end
  big.efficiency_low = 0.02;
  SensitivityRow small;
  small.range = UncertaintyRange{UncertainParameter::background_load, 0.0, 0.3, {}, {}, "estimate"};
  small.peak_fraction_high = -0.01;
  small.efficiency_high = -0.01;
  r.sensitivity = {big, small};
  const std::string script = sensitivity_plot_script(r);
  EXPECT_THAT(script, HasSubstr("boxxyerror"));
  EXPECT_THAT(script, HasSubstr("\"gemm_efficiency_scale [0.5 .. 1]\" 1"));  // largest effect: top line
  EXPECT_THAT(script, HasSubstr("\"background_load [0 .. 0.3]\" 0"));
  auto pair = [](double a, double b) { return fmt::format("{:.4f} {:.4f}", a, b); };
  EXPECT_THAT(script, HasSubstr(fmt::format("1 \"gemm_efficiency_scale [0.5 .. 1]\" {} {} {} {}\n", pair(peak - 10, peak),
                                            pair(peak, peak), pair(eff, eff + 2), pair(eff, eff))));
  EXPECT_THAT(script, HasSubstr(fmt::format("0 \"background_load [0 .. 0.3]\" {} {} {} {}\n", pair(peak, peak),
                                            pair(peak - 1, peak), pair(eff, eff), pair(eff - 1, eff))));
}

TEST(StudyPlots, GnuplotWritesPngAndSvgForEveryFigure) {
  if (!find_gnuplot()) GTEST_SKIP() << "gnuplot not installed";
  const auto dir = std::filesystem::temp_directory_path() / ("weakscale-plots-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const auto files = plot_study(small_result(), dir);
  ASSERT_EQ(files.size(), 8u);
  for (const char* name : {"perlmutter-plot-test.png", "perlmutter-plot-test.svg",
                           "perlmutter-plot-test-breakdown.png", "perlmutter-plot-test-breakdown.svg",
                           "perlmutter-plot-test-efficiency.png", "perlmutter-plot-test-efficiency.svg",
                           "perlmutter-plot-test-candidates.png", "perlmutter-plot-test-candidates.svg"}) {
    const auto path = dir / name;
    ASSERT_TRUE(std::filesystem::exists(path)) << name;
    EXPECT_GT(std::filesystem::file_size(path), 1000u) << name;
  }
  std::ifstream png(dir / "perlmutter-plot-test.png", std::ios::binary);
  char magic[4] = {};
  png.read(magic, 4);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
  std::filesystem::remove_all(dir);
}

TEST(StudyPlots, GnuplotDrawsTheTornadoWhenThereIsASensitivityTable) {
  if (!find_gnuplot()) GTEST_SKIP() << "gnuplot not installed";
  const auto dir = std::filesystem::temp_directory_path() / ("weakscale-tornado-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  StudyResult r = small_result();
  SensitivityRow row;
  row.range = UncertaintyRange{UncertainParameter::gemm_shape_falloff, 1.0, 2.0, {}, {}, "estimate"};
  row.peak_fraction_high = -0.05;
  row.efficiency_high = 0.03;
  r.sensitivity = {row};
  const auto files = plot_study(r, dir);
  ASSERT_EQ(files.size(), 10u);
  for (const char* name : {"perlmutter-plot-test-sensitivity.png", "perlmutter-plot-test-sensitivity.svg"}) {
    ASSERT_TRUE(std::filesystem::exists(dir / name)) << name;
    EXPECT_GT(std::filesystem::file_size(dir / name), 1000u) << name;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ws
