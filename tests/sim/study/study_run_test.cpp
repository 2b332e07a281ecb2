// Properties of run_study and the writers on a real machine file: one row per point, efficiency
// relative to the first point, step = compute + exposed parts, infeasible points kept with a
// reason and empty numbers, and CSV rows as wide as the header.
#include "sim/study/study_run.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "base/input_error.hpp"
#include "sim/machine/machine_loader.hpp"
#include "report/study/study_summary.hpp"
#include "report/study/study_writers.hpp"

namespace ws {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kMachines = std::string(WEAKSCALE_SOURCE_DIR) + "/machines";

StudySpec spec_of(const std::string& points) {
  return parse_study_spec("machine: perlmutter\npoints:\n" + points, "perlmutter-run-test.yaml");
}

// Splits one CSV line, honouring RFC 4180 quotes.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      fields.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    lines.push_back(text.substr(start, end - start));
  }
  return lines;
}

std::size_t column(const std::string& name) {
  const auto& cols = study_csv_columns();
  return static_cast<std::size_t>(std::find(cols.begin(), cols.end(), name) - cols.begin());
}

TEST(StudyRun, OneRowPerPointWithEfficiencyRelativeToTheFirst) {
  const auto spec = spec_of(
      "  - {devices: 16, model: 5B, batch_sequences: 16}\n"
      "  - {devices: 32, model: 5B, batch_sequences: 32}\n"
      "  - {devices: 64, model: 10B, batch_sequences: 64}\n");
  std::vector<std::string> progress;
  const auto result = run_study(spec, kMachines, [&](const std::string& l) { progress.push_back(l); });
  ASSERT_EQ(result.rows.size(), 3u);
  ASSERT_EQ(progress.size(), 3u);
  EXPECT_THAT(progress[0], StartsWith("[1/3] perlmutter 16 devices 5B: best "));
  EXPECT_THAT(progress[2], StartsWith("[3/3] "));
  for (const auto& row : result.rows) {
    ASSERT_TRUE(row.feasible) << row.reason;
    EXPECT_EQ(row.best.layout.devices(), row.point.devices);
    EXPECT_LE(row.layouts_fitting, row.layouts_valid);
    EXPECT_GE(row.layouts_fitting, 1);
    EXPECT_TRUE(row.best.fits_memory);
    const auto& b = row.best.step;
    EXPECT_EQ(b.total(), b.compute + b.exposed_x + b.exposed_y + b.exposed_z + b.exposed_data + b.skew);
    EXPECT_NEAR(row.efficiency, flops_per_device(row) / flops_per_device(result.rows[0]), 1e-12);
  }
  EXPECT_DOUBLE_EQ(result.rows[0].efficiency, 1.0);
}

TEST(StudyRun, InfeasiblePointIsKeptWithReasonAndEmptyNumbers) {
  // 175B cannot fit on 4 GPUs of 40 GiB in any layout.
  const auto spec = spec_of(
      "  - {devices: 4, model: 175B, batch_sequences: 4}\n"
      "  - {devices: 16, model: 5B, batch_sequences: 16}\n");
  const auto result = run_study(spec, kMachines);
  ASSERT_EQ(result.rows.size(), 2u);
  EXPECT_FALSE(result.rows[0].feasible);
  EXPECT_FALSE(result.rows[0].reason.empty());
  ASSERT_TRUE(result.rows[1].feasible);
  // The reference for efficiency is the first feasible point.
  EXPECT_DOUBLE_EQ(result.rows[1].efficiency, 1.0);

  const auto lines = lines_of(format_study_csv(result));
  ASSERT_EQ(lines.size(), 3u);
  const auto infeasible = csv_fields(lines[1]);
  ASSERT_EQ(infeasible.size(), study_csv_columns().size());
  EXPECT_EQ(infeasible[column("devices")], "4");
  EXPECT_EQ(infeasible[column("model")], "175B");
  for (const char* empty : {"layout", "step_s", "pflops", "peak_fraction_hw", "efficiency", "memory_gib"}) {
    EXPECT_EQ(infeasible[column(empty)], "") << empty;
  }
  EXPECT_EQ(infeasible[column("note")], result.rows[0].reason);
  EXPECT_EQ(csv_fields(lines[2])[column("note")], "");
}

// A point that pins its layout prices that layout alone: pinning the layout the search chose gives
// the searched row's numbers, pinning another gives no faster step (the search keeps the fastest),
// and a pinned layout over memory makes the point infeasible with a reason that names it.
TEST(StudyRun, PinnedLayoutPricesThatLayoutAlone) {
  const auto searched = run_study(spec_of("  - {devices: 64, model: 5B, batch_sequences: 64}\n"), kMachines);
  ASSERT_TRUE(searched.rows[0].feasible);
  const LayoutEstimate& best = searched.rows[0].best;
  const auto pinned = run_study(
      spec_of("  - {devices: 64, model: 5B, batch_sequences: 64, layout: " + to_string(best.layout) + "}\n" +
              "  - {devices: 64, model: 5B, batch_sequences: 64, layout: 16x1x2x2}\n" +
              "  - {devices: 64, model: 5B, batch_sequences: 64, layout: 64x1x1x1}\n"),
      kMachines);
  ASSERT_EQ(pinned.rows.size(), 3u);
  const StudyRow& same = pinned.rows[0];
  ASSERT_TRUE(same.feasible) << same.reason;
  EXPECT_EQ(same.best.layout, best.layout);
  EXPECT_EQ(same.best.step.total(), best.step.total());
  EXPECT_EQ(same.best.step.exposed_data, best.step.exposed_data);
  EXPECT_EQ(same.best.analytic_step, best.analytic_step);
  EXPECT_EQ(same.layouts_valid, 1);
  EXPECT_EQ(same.candidates.size(), 1u);
  const StudyRow& other = pinned.rows[1];
  ASSERT_TRUE(other.feasible) << other.reason;
  EXPECT_EQ(other.best.layout, (Layout{16, 1, 2, 2}));
  EXPECT_GT(other.best.step.total(), best.step.total());
  EXPECT_LT(other.efficiency, 1.0);
  EXPECT_FALSE(pinned.rows[2].feasible);
  EXPECT_THAT(pinned.rows[2].reason, HasSubstr("layout 64x1x1x1 does not fit in device memory"));
}

TEST(StudyRun, CsvRowsMatchTheHeaderAndCarryRequiredColumns) {
  const auto result = run_study(spec_of("  - {devices: 8, model: 5B, batch_sequences: 8}\n"), kMachines);
  const auto lines = lines_of(format_study_csv(result));
  ASSERT_EQ(lines.size(), 2u);
  const auto header = csv_fields(lines[0]);
  EXPECT_EQ(header, study_csv_columns());
  for (const char* required :
       {"machine", "devices", "model", "batch_tokens", "layout", "step_s", "pflops", "peak_fraction_hw",
        "model_peak_fraction", "efficiency", "compute_s", "exposed_x_s", "exposed_y_s", "exposed_z_s",
        "exposed_data_s", "memory_gib", "layouts_valid", "layouts_fitting"}) {
    EXPECT_LT(column(required), header.size()) << required;
  }
  const auto row = csv_fields(lines[1]);
  ASSERT_EQ(row.size(), header.size());
  EXPECT_EQ(row[column("machine")], "perlmutter");
  EXPECT_EQ(row[column("batch_tokens")], "16384");
  EXPECT_EQ(row[column("efficiency")], "1.000000");
}

TEST(StudyRun, JsonCarriesMetadataAndTheSameRows) {
  const auto result = run_study(spec_of("  - {devices: 8, model: 5B, batch_sequences: 8}\n"), kMachines);
  const std::string json = format_study_json(result);
  for (const char* key :
       {"\"study\": \"perlmutter-run-test\"", "\"machine_file\"", "\"options\"", "\"weakscale_version\"",
        "\"git_commit\"", "\"rows\"", "\"step_s\"", "\"precision\": \"bf16\""}) {
    EXPECT_THAT(json, HasSubstr(key));
  }
}

// The headline is the file as written; with samples, the summary and the JSON name the ranges
// whose written value is a best case (Perlmutter: the GEMM scale and shape falloff), so a reader
// knows why the band lies below it, and the others as errors.
TEST(StudyRun, SummaryAndJsonSayWhatTheHeadlineAndTheBandAre) {
  StudyResult result = run_study(spec_of("  - {devices: 8, model: 5B, batch_sequences: 8}\n"), kMachines);
  const Headline plain = study_headline(result);
  EXPECT_THAT(plain.statement, HasSubstr("as written"));
  EXPECT_THAT(plain.statement, HasSubstr("no uncertainty samples"));
  result.samples = 8;
  const Headline sampled = study_headline(result);
  EXPECT_EQ(sampled.best_case_ranges, (std::vector<std::string>{"gemm_efficiency_scale", "gemm_shape_falloff"}));
  EXPECT_EQ(sampled.best_case_ranges.size() + sampled.error_ranges.size(), result.machine.uncertainty.size());
  EXPECT_THAT(sampled.statement, HasSubstr("10th-90th percentile of 8 draws"));
  EXPECT_THAT(sampled.statement, HasSubstr("written values of gemm_efficiency_scale, gemm_shape_falloff are the best case"));
  EXPECT_THAT(format_study_summary(result), HasSubstr(sampled.statement));
  const std::string json = format_study_json(result);
  EXPECT_THAT(json, HasSubstr("\"figure\": \"as_written\""));
  EXPECT_THAT(json, HasSubstr("\"best_case_ranges\": [\n      \"gemm_efficiency_scale\""));
}

// The spec's library prices every collective of the study: Cray MPICH's 2 ms launch and host-side
// reductions make the same point slower than RCCL does, and the JSON names the library used.
TEST(StudyRun, TheSpecsLibraryPricesTheStepAndTheJsonNamesIt) {
  const std::string points =
      "points:\n  - devices: 64\n    batch_sequences: 64\n"
      "    model: {layers: 2, hidden: 1024, heads: 8, sequence_length: 1024, vocabulary: 50304}\n";
  const auto rccl = run_study(parse_study_spec("machine: frontier\n" + points, "frontier-lib.yaml"), kMachines);
  const auto mpich =
      run_study(parse_study_spec("machine: frontier\nlibrary: cray-mpich\n" + points, "frontier-lib.yaml"), kMachines);
  ASSERT_TRUE(rccl.rows.front().feasible);
  ASSERT_TRUE(mpich.rows.front().feasible);
  EXPECT_GT(mpich.rows.front().best.step.total(), rccl.rows.front().best.step.total());
  EXPECT_THAT(format_study_json(rccl), HasSubstr("\"collective_library\": \"rccl\""));
  EXPECT_THAT(format_study_json(mpich), HasSubstr("\"collective_library\": \"cray-mpich\""));
}

TEST(StudyRun, ALibraryTheMachineLacksIsAnInputErrorAtTheSpecsLine) {
  const auto spec = parse_study_spec(
      "machine: perlmutter\nlibrary: rccl\npoints:\n  - {devices: 8, model: 5B, batch_sequences: 8}\n",
      "perlmutter-lib.yaml");
  try {
    run_study(spec, kMachines);
    FAIL() << "priced with a library perlmutter does not have";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, "perlmutter-lib.yaml");
    EXPECT_EQ(e.where().line, 2);
    EXPECT_EQ(e.where().key, "library");
    EXPECT_THAT(e.what(), HasSubstr("nccl"));
  }
}

TEST(StudyRun, PointLargerThanTheMachineIsAnInputError) {
  const auto machine = load_machine_by_name("perlmutter", kMachines);
  const auto spec = spec_of("  - {devices: " + std::to_string(machine.total_devices() * 2) +
                            ", model: 5B, batch_sequences: 8}\n");
  try {
    run_study(spec, machine);
    FAIL() << "accepted a point larger than the machine";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().key, "points[0].devices");
    EXPECT_EQ(e.where().line, 3);
  }
}

// More ranks per node than a node has devices, or more nodes than the machine has at that many per
// node: an error at the point's line naming its key.
TEST(StudyRun, RanksPerNodeBeyondTheMachineIsAnInputErrorAtThePoint) {
  const auto machine = load_machine_by_name("perlmutter", kMachines);
  const auto reject = [&](const std::string& point, const std::string& key) {
    try {
      run_study(spec_of(point), machine);
      ADD_FAILURE() << "accepted " << point;
    } catch (const InputError& e) {
      EXPECT_EQ(e.where().key, key);
      EXPECT_EQ(e.where().line, 3);
    }
  };
  reject("  - {devices: 8, model: 5B, batch_sequences: 8, ranks_per_node: 5}\n", "points[0].ranks_per_node");
  reject("  - {devices: " + std::to_string(machine.nodes + 1) + ", model: 5B, batch_sequences: 8, ranks_per_node: 1}\n",
         "points[0].devices");
}

// A point spread over nodes of one rank each prices its tensor-parallel groups across nodes: no
// faster than the same point on full nodes.
TEST(StudyRun, OneRankPerNodeIsNoFasterThanFullNodes) {
  const auto result = run_study(spec_of("  - {devices: 8, model: 5B, batch_sequences: 8}\n"
                                        "  - {devices: 8, model: 5B, batch_sequences: 8, ranks_per_node: 1}\n"),
                                kMachines);
  ASSERT_EQ(result.rows.size(), 2u);
  ASSERT_TRUE(result.rows[0].feasible && result.rows[1].feasible);
  EXPECT_GT(result.rows[1].best.step.total(), result.rows[0].best.step.total());
  // The CSV says how each job was shaped: 2 full Perlmutter nodes of 4, then 8 nodes of 1.
  const auto lines = lines_of(format_study_csv(result));
  ASSERT_EQ(lines.size(), 3u);
  for (const auto& [line, nodes, per_node] :
       {std::tuple{lines[1], "2", "4"}, std::tuple{lines[2], "8", "1"}}) {
    const auto fields = csv_fields(line);
    EXPECT_EQ(fields.at(column("nodes")), nodes) << line;
    EXPECT_EQ(fields.at(column("ranks_per_node")), per_node) << line;
  }
}

TEST(StudyRun, UnknownMachineIsAnInputError) {
  const auto spec = parse_study_spec(
      "machine: nosuch\npoints:\n  - {devices: 8, model: 5B, batch_sequences: 8}\n", "nosuch-study.yaml");
  EXPECT_THROW(run_study(spec, kMachines), InputError);
}

}  // namespace
}  // namespace ws
