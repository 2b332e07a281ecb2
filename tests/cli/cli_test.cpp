// Runs the built `weakscale` binary as a user would: bad input must end with exit code 2 and one
// line "weakscale: error: ..." naming the file or option and key; good input prints results.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/cli/command_run.hpp"
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;
using ::testing::StartsWith;

const std::string kSource = WEAKSCALE_SOURCE_DIR;

using Run = ws::testing::CommandRun;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// One directory per test and process; created on first use and reused within the test.
std::filesystem::path test_temp_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const auto dir = std::filesystem::temp_directory_path() /
                   (std::string("weakscale-cli-") + info->name() + "-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

// Runs the binary from the source root (so ./machines is found as users find it), stderr to a file.
Run weakscale(const std::string& args) {
  const auto err_file = test_temp_dir() / "stderr.txt";
  return ws::testing::run_command("cd '" + kSource + "' && '" + std::string(WEAKSCALE_EXE) + "' " + args, err_file);
}

void expect_one_line_error(const Run& run) {
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_THAT(run.err, StartsWith("weakscale: error: "));
  ASSERT_FALSE(run.err.empty());
  EXPECT_EQ(run.err.find('\n'), run.err.size() - 1) << "more than one line:\n" << run.err;
}

std::filesystem::path write_spec(const std::string& name, const std::string& text) {
  const auto path = test_temp_dir() / name;
  std::ofstream(path) << text;
  return path;
}

TEST(Cli, StudyWithUnknownKeyNamesFileLineAndKey) {
  const auto spec = write_spec(
      "frontier-bad.yaml", "machine: frontier\npoints:\n  - {devices: 8, modle: 5B, batch_sequences: 8}\n");
  const auto run =
      weakscale("study '" + spec.string() + "' --no-plot --out '" + spec.parent_path().string() + "'");
  expect_one_line_error(run);
  EXPECT_THAT(run.err, HasSubstr(spec.string() + ":3"));
  EXPECT_THAT(run.err, HasSubstr("points[0].modle"));
}

TEST(Cli, StudyWithUnknownModelListsTheFamily) {
  const auto spec = write_spec(
      "frontier-bad.yaml", "machine: frontier\npoints:\n  - {devices: 8, model: 7B, batch_sequences: 8}\n");
  const auto run = weakscale("study '" + spec.string() + "' --no-plot");
  expect_one_line_error(run);
  EXPECT_THAT(run.err, HasSubstr("points[0].model"));
  EXPECT_THAT(run.err, HasSubstr("5B, 10B"));
}

TEST(Cli, MissingStudyFile) {
  const auto run = weakscale("study /nonexistent/frontier-x.yaml --no-plot");
  expect_one_line_error(run);
  EXPECT_THAT(run.err, HasSubstr("/nonexistent/frontier-x.yaml"));
}

TEST(Cli, PlanWithUnknownModelNamesTheOption) {
  const auto run = weakscale("plan --machine frontier --model 7B --devices 512 --batch 512");
  expect_one_line_error(run);
  EXPECT_THAT(run.err, HasSubstr("--model"));
  EXPECT_THAT(run.err, HasSubstr("7B"));
}

TEST(Cli, PlanWithUnknownMachine) {
  const auto run = weakscale("plan --machine nosuch --model 5B --devices 8 --batch 8");
  expect_one_line_error(run);
  EXPECT_THAT(run.err, HasSubstr("nosuch"));
}

TEST(Cli, BadArgumentsAreOneLineErrors) {
  expect_one_line_error(weakscale("plan --machine frontier --model 5B --batch 8"));  // no --devices
  expect_one_line_error(weakscale("plan --machine frontier --model 5B --devices -8 --batch 8"));
  expect_one_line_error(
      weakscale("plan --machine frontier --model 5B --devices 8 --batch 8 --precision fp8"));
  expect_one_line_error(
      weakscale("plan --machine frontier --model 5B --layers 4 --hidden 64 --heads 4 --devices 8 --batch 8"));
  expect_one_line_error(weakscale("frobnicate"));
  expect_one_line_error(weakscale(""));
}

// A table row's rank: a number, or "-" for a layout asked about that has none.
bool ranked_label(const std::string& rank) {
  return rank == "-" || (!rank.empty() && rank.find_first_not_of("0123456789") == std::string::npos);
}

// The table's rows as (rank label, layout, step seconds).
struct PlanRow {
  std::string rank;
  std::string layout;
  double step = 0;
};
std::vector<PlanRow> plan_rows(const std::string& out) {
  std::vector<PlanRow> rows;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream row(line);
    PlanRow r;
    if (row >> r.rank >> r.layout >> r.step && ranked_label(r.rank)) rows.push_back(r);
  }
  return rows;
}

// Exit codes a script can tell apart (README, "Reliability"): 3 when nothing fits (the table
// still says why), 4 when an output cannot be written: a full stdout (before: exit 0, table
// lost) or an --out directory that cannot be created.
TEST(Cli, ExitCodesTellNothingFeasibleAndOutputErrorsApart) {
  const auto none = weakscale("plan --machine perlmutter --model 175B --devices 8 --batch 8");
  EXPECT_EQ(none.exit_code, 3) << none.err;
  EXPECT_THAT(none.out, HasSubstr("0 layouts fit in memory"));
  const auto full = weakscale("plan --machine perlmutter --model 5B --devices 64 --batch 64 >/dev/full");
  EXPECT_EQ(full.exit_code, 4) << full.err;
  EXPECT_THAT(full.err, HasSubstr("weakscale: error: cannot write to standard output"));
  const auto out = weakscale("study benchmarks/studies/perlmutter-small.yaml --no-plot --out /proc/weakscale-out");
  EXPECT_EQ(out.exit_code, 4) << out.err;
  EXPECT_THAT(out.err, HasSubstr("--out /proc/weakscale-out: cannot create the directory"));
}

// --library prices with another of the machine file's libraries and the table says which; a name
// the file lacks is a one-line error listing the ones it has. study --library the same.
TEST(Cli, PlanAndStudyPriceWithTheLibraryAskedFor) {
  const std::string args = "plan --machine frontier --model 5B --devices 64 --batch 64 --top 1";
  const auto rccl = weakscale(args);
  const auto mpich = weakscale(args + " --library cray-mpich");
  ASSERT_EQ(mpich.exit_code, 0) << mpich.err;
  EXPECT_THAT(rccl.out, HasSubstr("collectives priced as rccl;"));
  EXPECT_THAT(mpich.out, HasSubstr("collectives priced as cray-mpich;"));
  EXPECT_NE(rccl.out, mpich.out);
  const auto bad = weakscale(args + " --library nccl");
  expect_one_line_error(bad);
  EXPECT_THAT(bad.err, HasSubstr("--library"));
  EXPECT_THAT(bad.err, HasSubstr("rccl, rccl-eager, cray-mpich"));
  const auto study = weakscale("study benchmarks/studies/perlmutter-small.yaml --no-plot --library rccl --out '" +
                               test_temp_dir().string() + "'");
  expect_one_line_error(study);
  EXPECT_THAT(study.err, HasSubstr("one of the collective libraries of perlmutter: nccl"));
}

TEST(Cli, PlanPrintsARankedTableOfLayouts) {
  const auto run = weakscale("plan --machine perlmutter --model 5B --devices 64 --batch 64 --top 3");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("rank"));
  EXPECT_THAT(run.out, HasSubstr("layouts fit in memory"));
  EXPECT_THAT(run.out, MatchesRegex("(.|\n)*\n +1 +[0-9]+x[0-9]+x[0-9]+x[0-9]+ +[0-9.]+(.|\n)*"));
  EXPECT_THAT(run.out, MatchesRegex("(.|\n)*\n +3 +[0-9]+x[0-9]+x[0-9]+x[0-9]+ (.|\n)*"));
  EXPECT_THAT(run.out, Not(MatchesRegex("(.|\n)*\n +4 +[0-9]+x[0-9]+x(.|\n)*")));
}

// --evaluator flow re-ranks the closed form's fastest layouts by the step simulator on the flow
// network: the same layouts fit, the table's steps are the simulated ones (sorted), and a bad name
// is refused with the allowed values.
TEST(Cli, PlanWithTheFlowEvaluatorReRanksTheClosedFormsTop) {
  const std::string args = "plan --machine perlmutter --model 5B --devices 64 --batch 64 --top 4";
  const auto closed = weakscale(args);
  const auto flow = weakscale(args + " --evaluator flow --simulate-top 8");
  ASSERT_EQ(flow.exit_code, 0) << flow.err;
  EXPECT_THAT(flow.out, HasSubstr("flow evaluator: the closed form's fastest 8 of "));
  auto footer = [](const std::string& out) { return out.substr(out.rfind("layouts fit in memory") - 6); };
  EXPECT_EQ(footer(flow.out), footer(closed.out));
  std::vector<double> steps;
  for (const PlanRow& row : plan_rows(flow.out)) steps.push_back(row.step);
  ASSERT_EQ(steps.size(), 4u) << flow.out;
  EXPECT_TRUE(std::is_sorted(steps.begin(), steps.end())) << flow.out;
  expect_one_line_error(weakscale(args + " --evaluator fluid"));
}

// --evaluator every-step re-ranks with the per-send reference: on a small job its steps are the
// flow evaluator's within 5 % (the test SimulatedStep.EveryStepReferenceAgrees... holds whole steps
// to 2 %), and a job above its limit is a one-line error naming --evaluator and the choices.
TEST(Cli, PlanWithTheEveryStepEvaluatorAgreesWithTheFlowEvaluatorOnASmallJob) {
  const std::string args = "plan --machine perlmutter --model 5B --devices 16 --batch 16 --top 2 --simulate-top 2";
  const auto flow = weakscale(args + " --evaluator flow");
  const auto every = weakscale(args + " --evaluator every-step --layout 1x1x2x8");
  ASSERT_EQ(every.exit_code, 0) << every.err;
  EXPECT_THAT(every.out, HasSubstr("every-step evaluator: the closed form's fastest 2 of "));
  EXPECT_THAT(every.out, HasSubstr("with every send its own flow"));
  const auto flow_rows = plan_rows(flow.out), every_rows = plan_rows(every.out);
  ASSERT_EQ(flow_rows.size(), 2u) << flow.out;
  ASSERT_GE(every_rows.size(), 2u) << every.out;
  for (std::size_t i = 0; i < 2; ++i) EXPECT_NEAR(every_rows[i].step / flow_rows[i].step, 1.0, 0.05) << every.out;
  const auto big = weakscale("plan --machine perlmutter --model 5B --devices 128 --batch 128 --evaluator every-step");
  expect_one_line_error(big);
  EXPECT_THAT(big.err, HasSubstr("'--evaluator'"));
  EXPECT_THAT(big.err, HasSubstr("at most 64 devices"));
}

// --layout prices one layout beside the table: its row carries its rank and step as the full table
// has them, the closing line its distance to the fastest; over memory it is priced and exits 3
// (nothing asked for fits); a layout that is not one of the point's is a one-line error with the
// reason.
TEST(Cli, PlanPricesTheLayoutAskedForWithItsRank) {
  const std::string args = "plan --machine perlmutter --model 5B --devices 64 --batch 64";
  const auto full = weakscale(args + " --top 100");
  ASSERT_EQ(full.exit_code, 0) << full.err;
  const std::vector<PlanRow> all = plan_rows(full.out);
  ASSERT_GT(all.size(), 10u) << full.out;
  const PlanRow& tenth = all[9];  // below --top 3: printed after the top rows
  const auto asked = weakscale(args + " --top 3 --layout " + tenth.layout);
  ASSERT_EQ(asked.exit_code, 0) << asked.err;
  const std::vector<PlanRow> rows = plan_rows(asked.out);
  ASSERT_EQ(rows.size(), 4u) << asked.out;
  EXPECT_EQ(rows.back().rank, "10");
  EXPECT_EQ(rows.back().layout, tenth.layout);
  EXPECT_DOUBLE_EQ(rows.back().step, tenth.step);
  EXPECT_THAT(asked.out, HasSubstr("rank 10 of "));
  EXPECT_THAT(asked.out, HasSubstr(fmt::format("{:+.1f} % on the fastest, {}", 100.0 * (tenth.step / all[0].step - 1.0),
                                               all[0].layout)));
  const auto first = weakscale(args + " --top 3 --layout " + all[0].layout);
  EXPECT_EQ(plan_rows(first.out).size(), 3u) << first.out;  // already in the table: not repeated
  EXPECT_THAT(first.out, HasSubstr("the fastest"));

  const auto over = weakscale(args + " --layout 64x1x1x1");  // 5B unsharded: 77.6 GiB of 40
  EXPECT_EQ(over.exit_code, 3) << over.err;
  EXPECT_THAT(over.out, HasSubstr("layout 64x1x1x1: does not fit in device memory: needs"));
  EXPECT_EQ(plan_rows(over.out).back().rank, "-");

  for (const char* bad : {"1x1x64x1", "4x2x2x3", "64x1x1", "big"}) {
    const auto run = weakscale(args + " --layout " + bad);
    expect_one_line_error(run);
    EXPECT_THAT(run.err, HasSubstr("'--layout'"));
  }
  EXPECT_THAT(weakscale(args + " --layout 1x1x64x1").err, HasSubstr("heads 32 not divisible by Gy=64"));
}

// With the flow evaluator the asked layout is simulated whether or not it is among the re-ranked:
// outside them its step is the one it has when they include it (a layout's simulated step does not
// depend on which others are simulated).
TEST(Cli, PlanSimulatesTheLayoutAskedForOnTheFlowNetwork) {
  const std::string args = "plan --machine perlmutter --model 5B --devices 64 --batch 64 --evaluator flow";
  const auto closed = weakscale("plan --machine perlmutter --model 5B --devices 64 --batch 64 --top 100");
  const std::vector<PlanRow> ranked = plan_rows(closed.out);
  ASSERT_GT(ranked.size(), 8u);
  const std::string layout = ranked[7].layout;  // closed-form rank 8
  const auto outside = weakscale(args + " --top 2 --simulate-top 4 --layout " + layout);
  ASSERT_EQ(outside.exit_code, 0) << outside.err;
  EXPECT_THAT(outside.out, HasSubstr("rank 8 of "));
  EXPECT_THAT(outside.out, HasSubstr("outside the 4 the flow evaluator re-ranks"));
  const auto inside = weakscale(args + " --top 8 --simulate-top 8 --layout " + layout);
  ASSERT_EQ(inside.exit_code, 0) << inside.err;
  EXPECT_THAT(inside.out, HasSubstr("simulated on the flow network (rank 8 of "));
  const auto row = [&](const std::string& out) {
    for (const PlanRow& r : plan_rows(out)) {
      if (r.layout == layout) return r;
    }
    return PlanRow{};
  };
  EXPECT_EQ(row(outside.out).rank, "-");
  EXPECT_NE(row(inside.out).rank, "-");
  EXPECT_GT(row(outside.out).step, 0);
  EXPECT_DOUBLE_EQ(row(outside.out).step, row(inside.out).step);
}

// --set fixes an uncertain parameter for the run: the table's header names it, a lower GEMM
// efficiency makes the fastest step slower, and a bad setting is a one-line error naming --set.
// A study records it in its JSON and its sensitivity table no longer varies it.
TEST(Cli, SetFixesAParameterForPlanAndStudy) {
  const std::string args = "plan --machine perlmutter --model 5B --devices 64 --batch 64 --top 1";
  const auto nominal = weakscale(args);
  const auto slower = weakscale(args + " --set gemm_efficiency_scale=0.5");
  ASSERT_EQ(slower.exit_code, 0) << slower.err;
  EXPECT_THAT(slower.out, HasSubstr("set for this run: gemm_efficiency_scale=0.5"));
  EXPECT_THAT(nominal.out, Not(HasSubstr("set for this run")));
  ASSERT_EQ(plan_rows(nominal.out).size(), 1u);
  ASSERT_EQ(plan_rows(slower.out).size(), 1u);
  EXPECT_GT(plan_rows(slower.out)[0].step, plan_rows(nominal.out)[0].step);
  const auto bad = weakscale(args + " --set background_load=2");
  expect_one_line_error(bad);
  EXPECT_THAT(bad.err, HasSubstr("'--set background_load'"));

  const auto out = test_temp_dir();
  const auto study = weakscale("study benchmarks/studies/perlmutter-small.yaml --samples 2 --no-plot --set compute_slowdown=0.3 --out '" +
                               out.string() + "'");
  ASSERT_EQ(study.exit_code, 0) << study.err;
  EXPECT_THAT(study.out, HasSubstr("set for this run: compute_slowdown=0.3"));
  EXPECT_THAT(read_file(out / "perlmutter-small.json"), HasSubstr("\"machine_overrides\": [\n    \"compute_slowdown=0.3\""));
  const std::string sensitivity = read_file(out / "perlmutter-small-sensitivity.csv");
  EXPECT_THAT(sensitivity, HasSubstr("gemm_efficiency_scale,"));
  EXPECT_THAT(sensitivity, Not(HasSubstr("compute_slowdown,")));
}

// --ranks-per-node shapes the job as srun --ntasks-per-node: the header says the nodes and ranks per
// node it priced; fewer per node never make the fastest layout faster; more than a node has is a
// one-line error naming the flag.
TEST(Cli, PlanShapesTheJobByRanksPerNode) {
  const std::string args = "plan --machine perlmutter --model 5B --devices 64 --batch 64 --top 1";
  const auto full = weakscale(args), one = weakscale(args + " --ranks-per-node 1");
  ASSERT_EQ(full.exit_code, 0) << full.err;
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_THAT(full.out, HasSubstr("job: 16 nodes x 4 ranks per node (of 4 devices each), contiguous allocation"));
  EXPECT_THAT(one.out, HasSubstr("job: 64 nodes x 1 rank per node (of 4 devices each)"));
  EXPECT_GT(plan_rows(one.out)[0].step, plan_rows(full.out)[0].step);
  const auto bad = weakscale(args + " --ranks-per-node 5");
  expect_one_line_error(bad);
  EXPECT_THAT(bad.err, HasSubstr("'--ranks-per-node'"));
  EXPECT_THAT(bad.err, HasSubstr("1 to the 4 devices of a perlmutter node"));
}

// --csv writes every ranked layout with the table's numbers (the table rounds them), the asked
// layout last when it is not ranked (rank "-"), and the closed form's step where the flow
// evaluator re-ranked; an unwritable path is an output error (exit 4).
TEST(Cli, PlanWritesItsRankedLayoutsAsCsv) {
  const auto csv = test_temp_dir() / "plan.csv";
  const std::string args = "plan --machine perlmutter --model 5B --devices 64 --batch 64 --top 100";
  const auto run = weakscale(args + " --layout 64x1x1x1 --csv '" + csv.string() + "'");
  ASSERT_EQ(run.exit_code, 3) << run.err;  // the asked layout is over memory
  const std::vector<PlanRow> table = plan_rows(run.out);
  const auto lines = [](const std::string& text) {
    std::vector<std::vector<std::string>> rows;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      std::vector<std::string> cells(1);
      for (const char c : line) {
        if (c == ',') {
          cells.emplace_back();
        } else {
          cells.back().push_back(c);
        }
      }
      rows.push_back(cells);
    }
    return rows;
  };
  const auto rows = lines(read_file(csv));
  ASSERT_EQ(rows.size(), table.size() + 1) << "header + one line per table row";
  EXPECT_EQ(rows[0][0], "rank");
  EXPECT_EQ(rows[0][12], "closed_form_step_s");
  for (std::size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(rows[i + 1][0], table[i].rank);
    EXPECT_EQ(rows[i + 1][1], table[i].layout);
    EXPECT_NEAR(std::stod(rows[i + 1][2]), table[i].step, 0.51e-4);  // the table prints 4 decimals
    EXPECT_EQ(rows[i + 1][12], "");  // the closed form ranked them itself
  }
  EXPECT_EQ(rows.back()[0], "-");
  EXPECT_EQ(rows.back()[1], "64x1x1x1");
  EXPECT_EQ(rows.back().back(), "0");  // fits_memory

  const auto flow = weakscale("plan --machine perlmutter --model 5B --devices 64 --batch 64 --top 4 --evaluator flow "
                              "--simulate-top 4 --csv '" + csv.string() + "'");
  ASSERT_EQ(flow.exit_code, 0) << flow.err;
  const auto simulated = lines(read_file(csv));
  ASSERT_EQ(simulated.size(), 5u);
  for (std::size_t i = 1; i < simulated.size(); ++i) EXPECT_NE(simulated[i][12], "");
  // A pipeline's bubble and transfer waits: the table's pipeline column, transfers a part of it
  // (counted from the row's end: the quoted layout holds commas).
  const auto piped = weakscale("plan --machine perlmutter --model 5B --devices 64 --batch 64 --top 1 --strategy megatron "
                               "--layout tp=4,pp=2,dp=8,mb=4 --csv '" + csv.string() + "'");
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_THAT(read_file(csv), HasSubstr(",exposed_data_s,pipeline_s,pipeline_transfer_s,skew_s,"));
  const auto asked = lines(read_file(csv)).back();
  ASSERT_GE(asked.size(), 11u);
  const double pipeline = std::stod(asked[asked.size() - 10]), transfers = std::stod(asked[asked.size() - 9]);
  EXPECT_GT(pipeline, 0.0);
  EXPECT_GT(transfers, 0.0);
  EXPECT_LE(transfers, pipeline);
  EXPECT_EQ(weakscale(args + " --csv /proc/weakscale-no/plan.csv").exit_code, 4);
}

TEST(Cli, PlanAcceptsACustomModelAndShowsInvalidLayouts) {
  const auto run = weakscale(
      "plan --machine perlmutter --layers 4 --hidden 512 --heads 8 --seq 256 --vocab 1024 "
      "--devices 16 --batch 4 --show-invalid --precision fp16 --no-recompute --no-oar --no-ors --no-oag "
      "--overlap-data");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("l4-h512"));
  EXPECT_THAT(run.out, HasSubstr("invalid "));  // batch 4 cannot be split over 16 data-parallel ranks
}

// Llama models: a preset by name, or --family llama with --layers etc.; the header says what sets
// the model apart from GPT-2, layouts that split the 8 K/V heads over more than 8 Y ranks are
// invalid, and architecture flags are refused with a preset or with bad values.
TEST(Cli, PlanPricesLlamaModels) {
  auto run = weakscale("plan --machine frontier --model llama3-8b --devices 64 --batch 64 --top 2 --show-invalid");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("8 kv heads, swiglu ffn 14336, rmsnorm, rope, untied embeddings, no biases, 8.03 B"));
  EXPECT_THAT(run.out, HasSubstr("kv_heads 8 not divisible by Gy=16"));
  run = weakscale("plan --machine frontier --family llama --layers 4 --hidden 1024 --heads 16 --kv-heads 4 "
                  "--seq 512 --vocab 32000 --devices 8 --batch 8 --top 1");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("llama-l4-h1024"));
  EXPECT_THAT(run.out, HasSubstr("4 kv heads, swiglu ffn 2816"));
  run = weakscale("plan --machine frontier --family llama --layers 4 --hidden 1024 --heads 16 --kv-heads 3 "
                  "--devices 8 --batch 8");
  expect_one_line_error(run);
  EXPECT_THAT(run.err, HasSubstr("--kv-heads"));
  EXPECT_THAT(run.err, HasSubstr("a divisor of --heads (16)"));
  expect_one_line_error(weakscale("plan --machine frontier --model 5B --kv-heads 2 --devices 8 --batch 8"));
  expect_one_line_error(
      weakscale("plan --machine frontier --layers 2 --hidden 64 --heads 4 --norm batch --devices 8 --batch 8"));
}

}  // namespace
