// Runs measured elsewhere, read back from the engine's own --csv rows: the configuration and the
// times survive the round trip, and every bad file names file, line and column.
#include "harness/validate/measured_runs.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/input_error.hpp"
#include "engine/train/run_config.hpp"
#include "engine/train/step_summary.hpp"
#include "harness/validate/step_simulation.hpp"
#include "harness/validate/validate.hpp"
#include "report/validation/validation_report.hpp"
#include "sim/machine/machine_loader.hpp"

namespace ws {
namespace {

using ::testing::HasSubstr;

std::filesystem::path temp_file(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / ("weakscale-measured-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path) << text;
  return path;
}

RunConfig config(const Layout& layout, bool oar, int tiles) {
  RunConfig run;
  run.model = ModelSpec{"x", 2, 256, 4, 128, 256, 1};
  run.layout = layout;
  run.batch_sequences = 8;
  run.schedule.recompute = true;
  run.schedule.overlap_all_reduce = oar;
  run.schedule.overlap_data_parallel = false;
  run.schedule.weight_gradient_tiles = tiles;
  return run;
}

RunSummary summary(double step, double compute, double exposed_z) {
  RunSummary s;
  s.measured_steps = 4;
  s.step_s = step;
  s.compute_s = compute;
  s.cpu_s = 0.9 * step;
  s.groups[static_cast<std::size_t>(CommGroup::z)].exposed_s = exposed_z;
  return s;
}

TEST(MeasuredRuns, TheEnginesCsvRowsReadBackAsTheirRuns) {
  const RunConfig a = config(Layout{1, 1, 1, 2}, true, 4);
  const RunConfig b = config(Layout{1, 2, 1, 1}, false, 1);
  const auto file = temp_file("two.csv", csv_header() + "\n" + csv_row(summary(0.125, 0.1, 0.025), a) + "\n" +
                                             csv_row(summary(0.25, 0.2, 0.0), b) + "\n");
  const std::vector<MeasuredRun> runs = read_measured_runs({file, file});
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[0].run.id, "m01");
  EXPECT_EQ(runs[3].run.id, "m04");
  const MeasuredRun& first = runs[0];
  EXPECT_EQ(first.run.layout, a.layout);
  EXPECT_EQ(first.run.model.layers, 2);
  EXPECT_EQ(first.run.model.hidden, 256);
  EXPECT_EQ(first.run.model.heads, 4);
  EXPECT_EQ(first.run.model.sequence_length, 128);
  EXPECT_EQ(first.run.model.vocabulary, 256);
  EXPECT_EQ(first.run.sequences, 8);
  EXPECT_EQ(first.run.schedule.recompute, true);
  EXPECT_EQ(first.run.schedule.overlap_all_reduce, true);
  EXPECT_EQ(first.run.schedule.overlap_data_parallel, false);
  EXPECT_EQ(first.run.schedule.weight_gradient_tiles, 4);
  EXPECT_DOUBLE_EQ(first.measured.step_s, 0.125);
  EXPECT_DOUBLE_EQ(first.measured.compute_s, 0.1);
  EXPECT_DOUBLE_EQ(first.measured.exposed("z"), 0.025);
  EXPECT_DOUBLE_EQ(first.measured.cpu_s, 0.9 * 0.125);
  EXPECT_EQ(runs[1].run.layout, b.layout);
  EXPECT_EQ(runs[1].run.schedule.overlap_all_reduce, false);
  EXPECT_EQ(runs[1].run.schedule.weight_gradient_tiles, 1);
}

// A Llama run's row carries its architecture (family, K/V heads, MLP width), so it is simulated as
// the Llama model it was; rows of files written before those columns are GPT-2 style.
TEST(MeasuredRuns, ALlamaRowReadsBackAsTheLlamaModel) {
  RunConfig llama = config(Layout{2, 1, 1, 1}, true, 4);
  llama.model.kv_heads = 2;
  llama.model = with_llama_architecture(llama.model);
  const auto file = temp_file("llama.csv", csv_header() + "\n" + csv_row(summary(0.125, 0.1, 0.0), llama) + "\n");
  const std::vector<MeasuredRun> runs = read_measured_runs({file});
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_FALSE(runs[0].run.model.gpt_style());
  EXPECT_EQ(runs[0].run.model.kv_head_count(), 2);
  EXPECT_EQ(runs[0].run.model.ffn(), llama.model.ffn());
  EXPECT_EQ(runs[0].run.model.norm, NormKind::rmsnorm);
  EXPECT_EQ(runs[0].run.model.position, Position::rope);
  // The header before the architecture columns: the same row without them is a GPT run.
  std::string header = csv_header(), row = csv_row(summary(0.125, 0.1, 0.0), config(Layout{2, 1, 1, 1}, true, 4));
  header.resize(header.find(",family")), row.resize(row.find(",gpt,"));
  const std::vector<MeasuredRun> old = read_measured_runs({temp_file("old.csv", header + "\n" + row + "\n")});
  ASSERT_EQ(old.size(), 1u);
  EXPECT_TRUE(old[0].run.model.gpt_style());
}

// validate --measured simulates each row exactly as the simulator simulates that run, and its
// error is (simulated - measured) / measured.
TEST(MeasuredRuns, ValidateSimulatesEachRowAsTheSimulatorDoes) {
  const RunConfig a = config(Layout{1, 1, 1, 2}, true, 4);
  const auto file = temp_file("one.csv", csv_header() + "\n" + csv_row(summary(0.125, 0.1, 0.025), a) + "\n");
  ValidateOptions o;
  o.machine_file = std::string(WEAKSCALE_SOURCE_DIR) + "/machines/local.yaml";
  o.out_dir = file.parent_path() / "out";
  o.plot = false;
  o.measured = {file};
  std::ostringstream log;
  ValidationReport report = validate(o, log);
  write_validation_report(report, o, log);
  ASSERT_EQ(report.records.size(), 1u);
  const Machine machine = load_machine(o.machine_file);
  const PhaseTimes expected = make_step_simulator(machine)(read_measured_runs({file})[0].run, std::nullopt);
  ASSERT_TRUE(report.records[0].simulated);
  EXPECT_DOUBLE_EQ(report.records[0].simulated->step_s, expected.step_s);
  ASSERT_TRUE(report.errors);
  EXPECT_DOUBLE_EQ(report.errors->worst_abs_error, std::abs(expected.step_s - 0.125) / 0.125);
  EXPECT_THAT(log.str(), HasSubstr("1 runs measured elsewhere"));
  EXPECT_TRUE(std::filesystem::exists(o.out_dir / "validation.csv"));
}

std::string error_of(const std::string& text) {
  const auto file = temp_file("bad.csv", text);
  try {
    read_measured_runs({file});
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(MeasuredRuns, BadFilesNameFileLineAndColumn) {
  const std::string header = csv_header();
  const std::string good = csv_row(summary(0.125, 0.1, 0.025), config(Layout{1, 1, 1, 2}, true, 4));
  // A CSV from before the switches were recorded: the first missing column, on the header's line.
  const std::string old_header = header.substr(0, header.find(",oar"));
  EXPECT_THAT(error_of(old_header + "\n" + good + "\n"), HasSubstr(":1: key 'oar'"));
  EXPECT_THAT(error_of(header + "\n"), HasSubstr("at least one run"));
  auto with_field = [&](std::size_t index, const std::string& value) {
    std::vector<std::string> fields;
    std::string field;
    for (const char c : good + ",") {
      if (c == ',') {
        fields.push_back(field);
        field.clear();
      } else {
        field += c;
      }
    }
    fields[index] = value;
    std::string row;
    for (std::size_t i = 0; i < fields.size(); ++i) row += (i ? "," : "") + fields[i];
    return header + "\n" + good + "\n" + row + "\n";
  };
  // Columns: 0 layout, 3 hidden, 10 step_s, 23 oar.
  EXPECT_THAT(error_of(with_field(10, "fast")), HasSubstr(":3: key 'step_s'"));
  EXPECT_THAT(error_of(with_field(10, "0")), HasSubstr("a step time above 0 s"));
  EXPECT_THAT(error_of(with_field(23, "2")), HasSubstr("key 'oar': expected 0 or 1"));
  EXPECT_THAT(error_of(with_field(0, "1x1x2")), HasSubstr("key 'layout'"));
  EXPECT_THAT(error_of(with_field(3, "250")), HasSubstr("not divisible by --heads 4"));
  EXPECT_THAT(error_of(header + "\n" + good.substr(0, good.find(",0.125")) + "\n"), HasSubstr("shorter than the header"));
  EXPECT_THAT(error_of(""), HasSubstr("header"));
  try {
    read_measured_runs({"/nonexistent/runs.csv"});
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent/runs.csv"));
  }
}

}  // namespace
}  // namespace ws
