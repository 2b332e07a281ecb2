// validation.csv round trip (every column comes back as written), the JSON's statistics and the
// plot script.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "harness/validate/validation_run.hpp"
#include "report/validation/validation_plots.hpp"
#include "report/validation/validation_writers.hpp"

namespace ws {
namespace {

std::vector<ValidationRecord> sample_records() {
  auto runs = validation_matrix(MatrixOptions{2, false});
  ValidationRecord a{runs.at(0), PhaseTimes{0.3125, 0.3125, {}}, PhaseTimes{0.30000000000000004, 0.3, {}},
                     PhaseTimes{0.34375, 0.34375, {}}};
  ValidationRecord b{runs.at(6),
                     PhaseTimes{1.1, 0.7, {{"x", 0.25}, {"world", 1e-5}, {"data_z", 0.14999}}, 0.61,
                                {{"gemm", 0.5}, {"gelu", 0.125}}, 0.03125},
                     PhaseTimes{1.0, 0.72, {{"x", 0.2}, {"data_z", 0.08}}, 0, {{"gemm", 0.45}, {"attention", 0.01}}},
                     std::nullopt};
  b.run.schedule.overlap_all_reduce = b.run.schedule.overlap_all_gather = false;
  b.run.schedule.recompute = true;
  ValidationRecord c{runs.at(9), PhaseTimes{0.9, 0.8, {{"y", 0.1}}}, std::nullopt, std::nullopt};
  return {a, b, c};
}

// The matrix's last run is a Llama one (grouped-query attention, SwiGLU, RMSNorm, rotary).
// The matrix's last Llama run: on two pipeline stages (its layout has commas: quoted).
ValidationRecord llama_record() {
  const auto runs = validation_matrix(MatrixOptions{2, false});
  const auto it = std::find_if(runs.rbegin(), runs.rend(), [](const ValidationRun& r) { return !r.model.gpt_style(); });
  EXPECT_NE(it, runs.rend());
  const ValidationRun run = *it;
  EXPECT_TRUE(run.layout.pipelined());
  return ValidationRecord{run, PhaseTimes{0.5, 0.4, {{"data", 0.01}}}, PhaseTimes{0.45, 0.4, {}}, std::nullopt};
}

void expect_same_phases(const PhaseTimes& a, const PhaseTimes& b) {
  EXPECT_EQ(a.step_s, b.step_s);
  EXPECT_EQ(a.compute_s, b.compute_s);
  EXPECT_EQ(a.cpu_s, b.cpu_s);
  for (const CommGroup g : kAllCommGroups) EXPECT_EQ(a.exposed(to_string(g)), b.exposed(to_string(g))) << to_string(g);
  EXPECT_EQ(a.compute_by_kind_s, b.compute_by_kind_s);
  EXPECT_EQ(a.progress_s, b.progress_s);
}

TEST(ValidationCsv, RoundTrip) {
  auto records = sample_records();
  records.push_back(llama_record());
  const std::string text = format_validation_csv(records);
  const auto back = parse_validation_csv(text);
  ASSERT_EQ(back.size(), records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    const auto& s = back[i];
    EXPECT_EQ(s.run.id, r.run.id);
    EXPECT_EQ(s.run.model.layers, r.run.model.layers);
    EXPECT_EQ(s.run.model.hidden, r.run.model.hidden);
    EXPECT_EQ(s.run.model.heads, r.run.model.heads);
    EXPECT_EQ(s.run.model.sequence_length, r.run.model.sequence_length);
    EXPECT_EQ(s.run.model.vocabulary, r.run.model.vocabulary);
    EXPECT_EQ(s.run.model, r.run.model);  // the architecture too (family, K/V heads, MLP width)
    EXPECT_EQ(s.run.sequences, r.run.sequences);
    EXPECT_EQ(s.run.layout, r.run.layout);
    EXPECT_EQ(s.run.schedule, r.run.schedule);
    EXPECT_EQ(s.run.steps, r.run.steps);
    EXPECT_EQ(s.run.warmup, r.run.warmup);
    expect_same_phases(s.measured, r.measured);
    ASSERT_EQ(s.simulated.has_value(), r.simulated.has_value());
    if (r.simulated) expect_same_phases(*s.simulated, *r.simulated);
    ASSERT_EQ(s.simulated_on_file.has_value(), r.simulated_on_file.has_value());
    if (r.simulated_on_file) {
      EXPECT_EQ(s.simulated_on_file->step_s, r.simulated_on_file->step_s);
    }
  }
  EXPECT_EQ(format_validation_csv(back), text);
}

TEST(ValidationCsv, RejectsAWrongHeaderAndABadNumber) {
  EXPECT_THROW(parse_validation_csv("run,layers\n"), std::runtime_error);
  std::string text = format_validation_csv(sample_records());
  const auto pos = text.find("0.3125");
  text.replace(pos, 6, "abc");
  EXPECT_THROW(parse_validation_csv(text), std::runtime_error);
}

TEST(ValidationJson, CarriesTheStatisticsAndEveryRun) {
  const auto records = sample_records();
  const auto errors = summarize_errors(records);
  const auto json = nlohmann::json::parse(
      format_validation_json(records, errors, ValidationProvenance{"weakscale validate", "local", "m.yaml", "abc", 2, 1.5}));
  EXPECT_EQ(json.at("runs").size(), 3u);
  EXPECT_EQ(json.at("errors").at("simulated_runs"), 2);
  EXPECT_NEAR(json.at("errors").at("worst_abs_relative_error").get<double>(), 0.1 / 1.1, 1e-12);
  EXPECT_EQ(json.at("errors").at("worst_run"), records[1].run.id);
  // Run a alone was also simulated on the file as written: 0.34375 against 0.3125 measured.
  EXPECT_EQ(json.at("errors_on_file").at("simulated_runs"), 1);
  EXPECT_NEAR(json.at("errors_on_file").at("median_abs_relative_error").get<double>(), 0.1, 1e-12);
  EXPECT_NEAR(json.at("runs").at(0).at("file_relative_error").get<double>(), 0.1, 1e-12);
  EXPECT_FALSE(json.at("runs").at(2).contains("simulated"));
  EXPECT_EQ(json.at("machine_file"), "m.yaml");
}

TEST(ValidationPlot, ScriptHasTheDiagonalAndOneRowPerSimulatedRun) {
  const auto records = sample_records();
  const std::string script = validation_plot_script(records, "local");
  EXPECT_NE(script.find("title \"y = x\""), std::string::npos);
  const auto begin = script.find("$runs << EOD\n");
  const auto end = script.find("EOD\n", begin + 12);
  ASSERT_NE(begin, std::string::npos);
  const std::string block = script.substr(begin, end - begin);
  EXPECT_EQ(std::count(block.begin(), block.end(), '\n'), 3);  // header line + 2 simulated runs
}

}  // namespace
}  // namespace ws
