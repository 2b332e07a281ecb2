// Properties of the task-based study run: resume records are checked and exact, an interrupted
// threaded run resumes to the same bytes, samples are seeded, bands contain their median, the side
// tables are consistent with the main rows (the two largest properties: study_split_test.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

#include "sim/machine/machine_loader.hpp"
#include "sim/study/study_run.hpp"
#include "report/csv.hpp"
#include "report/study/study_tables.hpp"
#include "sim/study/study_tasks.hpp"
#include "report/study/study_writers.hpp"
#include "sim/study/task_records.hpp"
#include "sim/study/uncertainty.hpp"
#include "tests/sim/study/study_test_support.hpp"

namespace ws {
namespace {

using study_test::all_outputs;
using study_test::full_options;
using study_test::Interrupted;
using study_test::perlmutter;
using study_test::resume_temp_dir;
using study_test::small_spec;

TEST(StudyResume, RecordsOfAnotherStudyAreIgnored) {
  const StudySpec spec = small_spec();
  const Machine machine = perlmutter();
  const auto hash = study_hash(spec, machine, "closed-form", 10);
  EXPECT_EQ(hash, study_hash(spec, machine, "closed-form", 10));
  EXPECT_NE(hash, study_hash(spec, machine, "closed-form", 3));
  EXPECT_NE(hash, study_hash(spec, machine, "flow top 16", 10));
  StudySpec other = spec;
  other.points.back().batch.sequences *= 2;
  EXPECT_NE(hash, study_hash(other, machine, "closed-form", 10));
  // Parameters fixed on the command line (--set) and a pinned layout are other studies too.
  EXPECT_NE(hash, study_hash(spec, with_settings(machine, {"gemm_efficiency_scale=0.8"}), "closed-form", 10));
  StudySpec pinned = spec;
  pinned.points.front().layout = Layout{pinned.points.front().devices, 1, 1, 1};
  EXPECT_NE(hash, study_hash(pinned, machine, "closed-form", 10));

  PointEvaluation e;
  e.reason = "x";
  const std::string text = format_task_record("aaaa", "point 0", e) + format_task_record(hash, "point 1", e);
  const auto records = parse_task_records(text, hash);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records.begin()->first, "point 1");
}

// A record edited into another valid line (here a step time) fails its checksum and is
// recomputed rather than trusted; the untouched record still loads.
TEST(StudyResume, AnEditedRecordIsNotTrusted) {
  const StudySpec spec = small_spec();
  const auto result = execute_study(spec, perlmutter(), StudyRunOptions{});
  const StudyRow& row = result->rows.front();
  ASSERT_FALSE(row.candidates.empty());
  const PointEvaluation e{row.feasible, row.reason, row.layouts_valid, row.layouts_fitting, row.candidates};
  const std::string good = format_task_record("h", "a", e);
  nlohmann::json edited = nlohmann::json::parse(format_task_record("h", "b", e));
  ASSERT_TRUE(edited.contains("check"));
  edited["result"]["candidates"][0]["analytic_step_ps"] = 1;
  const auto records = parse_task_records(good + edited.dump() + "\n", "h");
  EXPECT_EQ(records.size(), 1u);
  EXPECT_TRUE(records.count("a"));
}

TEST(StudyResume, RecordRoundTripIsExact) {
  const StudySpec spec = small_spec();
  const auto result = execute_study(spec, perlmutter(), StudyRunOptions{});
  for (const auto& row : result->rows) {
    PointEvaluation e{row.feasible, row.reason, row.layouts_valid, row.layouts_fitting, row.candidates};
    const auto back = parse_task_records(format_task_record("h", "k", e), "h").at("k");
    ASSERT_EQ(back.candidates.size(), e.candidates.size());
    for (std::size_t i = 0; i < e.candidates.size(); ++i) {
      const auto &a = e.candidates[i], &b = back.candidates[i];
      EXPECT_EQ(a.layout, b.layout);
      EXPECT_EQ(a.step.total(), b.step.total());
      EXPECT_EQ(a.sustained_flops_per_s, b.sustained_flops_per_s);  // bit for bit
      EXPECT_EQ(a.hardware_peak_fraction, b.hardware_peak_fraction);
      EXPECT_EQ(a.memory.total_bytes(), b.memory.total_bytes());
    }
  }
}


// An interruption (here the progress callback throwing, as a signal handler's exit would) while
// threads are computing ends the run with the error; the rerun resumes from the lines recorded.
TEST(StudyResume, ThreadsInterruptedResumeToTheSameBytes) {
  const auto dir = resume_temp_dir();
  const StudySpec spec = small_spec();
  const Machine machine = perlmutter();
  StudyRunOptions o;
  o.samples = 3;
  o.seed = 5;
  o.jobs = 2;
  const std::string clean = all_outputs(*execute_study(spec, machine, o));
  o.partial_file = dir / "p.jsonl";
  o.progress = [](const StudyProgressEvent& e) {
    if (e.done == 4) throw Interrupted();
  };
  EXPECT_THROW(execute_study(spec, machine, o), Interrupted);
  int loaded = 0;
  o.progress = [&](const StudyProgressEvent& e) { loaded += e.loaded ? 1 : 0; };
  EXPECT_EQ(all_outputs(*execute_study(spec, machine, o)), clean);
  EXPECT_EQ(loaded, 4);
  std::filesystem::remove_all(dir);
}

// Samples alone (the side tables do not change what is drawn).
StudyRunOptions sampled_options() {
  StudyRunOptions o;
  o.samples = 6;
  o.seed = 42;
  return o;
}

TEST(StudyUncertainty, SamplingIsDeterministicForASeedAndDiffersAcrossSeeds) {
  const StudySpec spec = small_spec();
  const Machine machine = perlmutter();
  StudyRunOptions o = sampled_options();
  const std::string a = format_study_csv(*execute_study(spec, machine, o));
  EXPECT_EQ(a, format_study_csv(*execute_study(spec, machine, o)));
  o.seed = 43;
  EXPECT_NE(a, format_study_csv(*execute_study(spec, machine, o)));
  // A sample depends only on (seed, index): the same machine whatever else was drawn.
  const Machine s3 = sampled_machine(machine, 42, 3);
  EXPECT_EQ(s3.network.switch_latency, sampled_machine(machine, 42, 3).network.switch_latency);
  EXPECT_EQ(s3.collective_libraries.front().bandwidth_efficiency,
            sampled_machine(machine, 42, 3).collective_libraries.front().bandwidth_efficiency);
}

TEST(StudyUncertainty, SamplesStayInsideTheRanges) {
  const Machine machine = perlmutter();
  ASSERT_FALSE(machine.uncertainty.empty());
  for (int s = 0; s < 200; ++s) {
    const Machine m = sampled_machine(machine, 7, s);
    for (const auto& r : machine.uncertainty) {
      const ParameterValue v = nominal_value(m, r);
      if (is_latency(r.parameter)) {
        EXPECT_GE(v.time, r.low_time);
        EXPECT_LE(v.time, r.high_time);
      } else if (r.parameter != UncertainParameter::gemm_efficiency_scale) {
        EXPECT_GE(v.number, r.low);
        EXPECT_LE(v.number, r.high);
      }
    }
    const double scale = m.device.gemm.samples.front().efficiency / machine.device.gemm.samples.front().efficiency;
    EXPECT_GE(scale, machine.uncertainty.front().low - 1e-12);
    EXPECT_LE(scale, machine.uncertainty.front().high + 1e-12);
  }
}

TEST(StudyUncertainty, BandsContainTheMedian) {
  const auto r = *execute_study(small_spec(), perlmutter(), sampled_options());
  EXPECT_EQ(r.samples, 6);
  for (const auto& row : r.rows) {
    ASSERT_TRUE(row.efficiency_band && row.peak_fraction_band && row.step_band);
    for (const auto& band : {*row.efficiency_band, *row.peak_fraction_band, *row.step_band}) {
      EXPECT_LE(band.p10, band.p50);
      EXPECT_LE(band.p50, band.p90);
    }
  }
  // The CSV carries the band next to the median and the plain columns are unchanged.
  const std::string csv = format_study_csv(r);
  EXPECT_THAT(csv, ::testing::HasSubstr("efficiency_p10,efficiency_median,efficiency_p90"));
  const std::string plain = format_study_csv(*execute_study(small_spec(), perlmutter(), StudyRunOptions{}));
  EXPECT_EQ(csv.substr(0, csv.find(",samples_feasible")), plain.substr(0, plain.find('\n')));
}

TEST(StudyUncertainty, PercentileInterpolatesBetweenOrderStatistics) {
  EXPECT_DOUBLE_EQ(percentile({3, 1, 2}, 0.5), 2);
  EXPECT_DOUBLE_EQ(percentile({1, 2, 3, 4}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(percentile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 0.1), 2);
  EXPECT_DOUBLE_EQ(percentile({5}, 0.9), 5);
}

TEST(StudyTables, CandidatesAreRankedAndTheFirstIsTheRowsBest) {
  StudyRunOptions o;
  o.top_k = 5;
  const auto r = *execute_study(small_spec(), perlmutter(), o);
  for (const auto& row : r.rows) {
    ASSERT_FALSE(row.candidates.empty());
    EXPECT_LE(row.candidates.size(), 5u);
    EXPECT_EQ(row.candidates.front().layout, row.best.layout);
    for (std::size_t i = 1; i < row.candidates.size(); ++i) {
      EXPECT_LE(row.candidates[i - 1].step.total(), row.candidates[i].step.total());
    }
  }
}

// Megatron-LM's and FSDP's spellings hold commas: the candidates table quotes them, so every row
// has the header's fields (an unquoted "tp=4,pp=2,..." spread one layout over several columns).
TEST(StudyTables, CandidatesCsvQuotesFrameworkLayouts) {
  StudySpec spec = small_spec();
  for (StudyPoint& p : spec.points) p.strategies = {Strategy::megatron};
  StudyRunOptions o;
  o.top_k = 5;
  const auto r = *execute_study(spec, perlmutter(), o);
  std::istringstream csv(format_candidates_csv(r));
  std::string line;
  ASSERT_TRUE(std::getline(csv, line));
  const std::size_t columns = split_csv_line(line).size();
  int rows = 0, with_commas = 0;
  while (std::getline(csv, line)) {
    const auto fields = split_csv_line(line);
    ASSERT_EQ(fields.size(), columns) << line;
    with_commas += fields[5].find(',') != std::string::npos;
    EXPECT_TRUE(parse_layout(fields[5]).has_value()) << fields[5];
    ++rows;
  }
  EXPECT_GT(rows, 0);
  EXPECT_EQ(with_commas, rows);
}

TEST(StudyTables, PlacementRoutingCoversTheLargestPointsAndAdaptiveIsNeverWorseThanMinimal) {
  StudyRunOptions o;
  o.placement_routing = true;
  const auto r = *execute_study(small_spec(), perlmutter(), o);
  ASSERT_EQ(r.placement_routing.size(), 2u * 2u * 3u);  // 2 points x 2 allocations x 3 routings
  for (std::size_t i = 0; i < r.placement_routing.size(); i += 3) {
    const auto& minimal = r.placement_routing[i];
    const auto& adaptive = r.placement_routing[i + 2];
    ASSERT_EQ(minimal.routing, RoutingPolicy::minimal);
    ASSERT_EQ(adaptive.routing, RoutingPolicy::adaptive);
    EXPECT_LE(adaptive.best.step.total(), minimal.best.step.total());
  }
  // Contiguous adaptive is the machine file's own setting: the same answer as the main row.
  EXPECT_EQ(r.placement_routing[2].best.step.total(),
            r.rows[static_cast<std::size_t>(r.placement_routing[2].point)].best.step.total());
}

TEST(StudyTables, SensitivityIsSortedByEffectAndNamesEveryParameter) {
  StudyRunOptions o;
  o.sensitivity = true;
  const auto r = *execute_study(small_spec(), perlmutter(), o);
  ASSERT_EQ(r.sensitivity.size(), perlmutter().uncertainty.size());
  for (std::size_t i = 1; i < r.sensitivity.size(); ++i) {
    EXPECT_GE(r.sensitivity[i - 1].effect(), r.sensitivity[i].effect());
  }
  // Less GEMM efficiency can only lower the percent of peak.
  for (const auto& s : r.sensitivity) {
    if (s.range.parameter == UncertainParameter::gemm_efficiency_scale) {
      EXPECT_LT(s.peak_fraction_low, 0);
    }
  }
}

}  // namespace
}  // namespace ws
