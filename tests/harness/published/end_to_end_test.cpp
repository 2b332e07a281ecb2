// Published training runs: the shipped table reads; a row's throughput is its simulated step in the
// row's unit (samples/s = global batch / step, tokens/s per device and TFLOP/s per device follow);
// rows without what a step needs are kept and say what they lack; malformed cells are errors
// naming the file, line and column.
#include "harness/published/end_to_end.hpp"

#include <gtest/gtest.h>

#include "sim/machine/machine_loader.hpp"
#include "sim/study/uncertainty.hpp"

#include <filesystem>
#include <fstream>

#include "base/input_error.hpp"
#include "workload/flops.hpp"

namespace ws {
namespace {

const std::string kMachines = std::string(WEAKSCALE_SOURCE_DIR) + "/machines";
const char* kHeader =
    "machine,framework,model,layers,hidden,heads,kv_heads,ffn_hidden,vocabulary,sequence,family,precision,devices,"
    "nodes,tp,pp,vpp,dp,zero_stage,sequence_parallel,micro_batch,global_batch,recompute,measured,unit,definition,"
    "source\n";

std::string write(const std::string& name, const std::string& rows) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << kHeader << rows;
  return path.string();
}

TEST(EndToEnd, TheShippedTableReads) {
  const auto runs = load_published_runs(std::string(WEAKSCALE_SOURCE_DIR) + "/benchmarks/end-to-end/published.csv");
  ASSERT_GE(runs.size(), 15u);
  int complete = 0;
  for (const PublishedRun& r : runs) complete += r.missing.empty();
  EXPECT_GE(complete, 5);
}

TEST(EndToEnd, UnitsFollowFromTheSimulatedStep) {
  const std::string row =
      "lumi,megatron-lm,GPT 1.3B,24,2048,16,,,50304,2048,gpt,bf16,16,2,2,2,,4,0,false,1,64,full,1,UNIT,d,s\n";
  std::string rows;
  for (const char* unit : {"samples/s total", "tokens/s per GCD", "TFLOP/s per GCD", "tokens/s total"}) {
    std::string r = row;
    r.replace(r.find("UNIT"), 4, unit);
    rows += r;
  }
  const auto runs = load_published_runs(write("ws_e2e_units.csv", rows));
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[0].missing, "");
  EXPECT_EQ(to_string(runs[0].layout), "tp=2,pp=2,dp=4,mb=16");
  const auto c = compare_runs_with_published(runs, kMachines);
  ASSERT_TRUE(c[0].simulated);
  const double step = c[0].step.seconds();
  EXPECT_NEAR(c[0].predicted, 64.0 / step, 1e-9 * c[0].predicted);
  EXPECT_NEAR(c[1].predicted, 64.0 * 2048 / step / 16, 1e-9 * c[1].predicted);
  EXPECT_NEAR(c[2].predicted, executed_flops_per_step(runs[2].model, Batch{64}, true) / step / 16 * 1e-12,
              1e-9 * c[2].predicted);
  EXPECT_NEAR(c[3].predicted, 64.0 * 2048 / step, 1e-9 * c[3].predicted);
  EXPECT_NEAR(c[0].error, c[0].predicted - 1.0, 1e-12);  // measured 1
  // A band over draws of LUMI's ranges: the GEMM scale's range starts at the written best case, so
  // the throughput as written sits at or above the band's low end.
  const auto banded = compare_runs_with_published({runs[0]}, kMachines, 8);
  EXPECT_GT(banded[0].band_low, 0.0);
  EXPECT_LE(banded[0].band_low, banded[0].band_high);
  EXPECT_LE(banded[0].band_low, banded[0].predicted);
  EXPECT_EQ(banded[0].predicted, c[0].predicted);
}

TEST(EndToEnd, RowsWithoutAStepSayWhatTheyLack) {
  const auto runs = load_published_runs(write(
      "ws_e2e_missing.csv", "frontier,megatron-lm,GPT 22B,,,,,,,,gpt,,,,,,,,,,,,,38.4,% of peak,d,s\n"
                            "lumi,megatron-lm,GPT 7B,32,4096,32,,,50304,2048,gpt,bf16,8,1,1,1,,8,3,false,1,64,full,2,"
                            "samples/s total,d,s\n"));
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_NE(runs[0].missing.find("no layers, hidden"), std::string::npos) << runs[0].missing;
  // ZeRO-3 under gradient accumulation (8 micro-batches of 1 on 8 ranks): a step the schedule does not write.
  EXPECT_NE(runs[1].missing.find("zero=3 with mb=8 micro-batches"), std::string::npos) << runs[1].missing;
  const auto c = compare_runs_with_published(runs, kMachines);
  EXPECT_FALSE(c[0].simulated);
  EXPECT_FALSE(c[1].simulated);
}

// ZeRO stages in Megatron-LM's spelling: 2 runs ZeRO-1's collectives (the same step, less gradient
// memory), 3 shards the parameters over the data ranks (the grid's Z, as FSDP's dp_shard).
TEST(EndToEnd, ZeroStagesOneTwoAndThreeAreSimulated) {
  std::string rows;
  for (int zero : {1, 2, 3})
    rows += "lumi,megatron-lm,GPT 1B,8,2048,16,,,50304,2048,gpt,bf16,8,1,1,1,,8," + std::to_string(zero) +
            ",false,1,8,full,1,samples/s total,d,s\n";
  const auto runs = load_published_runs(write("ws_e2e_zero.csv", rows));
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(to_string(runs[0].layout), "tp=1,pp=1,dp=8,mb=1,zero=1");
  EXPECT_EQ(to_string(runs[1].layout), "tp=1,pp=1,dp=8,mb=1,zero=2");
  EXPECT_EQ(to_string(runs[2].layout), "tp=1,pp=1,dp=8,mb=1,zero=3");
  EXPECT_EQ(runs[2].layout.z, 8);
  EXPECT_EQ(runs[2].layout.data, 1);
  const auto c = compare_runs_with_published(runs, kMachines);
  for (const auto& row : c) EXPECT_TRUE(row.simulated) << row.run.missing;
  EXPECT_EQ(c[0].predicted, c[1].predicted);  // the same collectives
  EXPECT_NE(c[0].predicted, c[2].predicted);  // per-layer gathers and scatters instead
}

// A row's nodes shape its job: 16 GCDs on 4 LUMI nodes run 4 per node, their tensor-parallel pairs
// still inside a node but their data-parallel peers spread wider; on 1 node they do not fit.
TEST(EndToEnd, TheRowsNodesShapeTheJob) {
  const std::string row = "lumi,m,GPT 1.3B,24,2048,16,,,50304,2048,gpt,bf16,16,NODES,2,2,,4,0,false,1,64,full,1,samples/s total,d,s\n";
  std::string rows;
  for (const char* nodes : {"2", "4", ""}) {
    std::string r = row;
    r.replace(r.find("NODES"), 5, nodes);
    rows += r;
  }
  const auto runs = load_published_runs(write("ws_e2e_nodes.csv", rows));
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].ranks_per_node, 8);
  EXPECT_EQ(runs[1].ranks_per_node, 4);
  EXPECT_EQ(runs[2].ranks_per_node, 0);
  const auto c = compare_runs_with_published(runs, kMachines);
  EXPECT_EQ(c[0].step, c[2].step);  // full nodes either way
  EXPECT_GT(c[1].step, c[0].step);
  PublishedRun crowded = runs[0];
  crowded.ranks_per_node = 16;
  EXPECT_THROW(compare_runs_with_published({crowded}, kMachines), InputError);
}

// Rows whose "measured" throughput is the simulator's at a known compute factor: the fit finds that
// factor (to the interpolation between simulated factors), and predicts each row, in sample and held
// out, to within that; the as-written factor (1) prices them all high.
TEST(EndToEnd, OneComputeFactorIsFittedAndScoredHeldOut) {
  std::string rows;
  for (const char* layout : {"2,2,,4", "1,2,,8", "2,1,,8"})  // tp,pp,vpp,dp
    rows += std::string("lumi,m,GPT 1.3B,24,2048,16,,,50304,2048,gpt,bf16,16,2,") + layout +
            ",0,false,1,64,full,1,samples/s total,d,s\n";
  std::vector<PublishedRun> runs = load_published_runs(write("ws_e2e_fit.csv", rows));
  const Machine slower = with_value(load_machine_by_name("lumi", kMachines), UncertainParameter::gemm_efficiency_scale,
                                    ParameterValue{0.7, Time::zero()});
  for (PublishedRun& r : runs) r.measured = simulated_throughput(slower, r);
  const auto comparisons = compare_runs_with_published(runs, kMachines);
  const auto fits = fit_compute_scale(comparisons, kMachines);
  ASSERT_EQ(fits.size(), 1u);
  EXPECT_EQ(fits[0].machine, "lumi");
  EXPECT_EQ(fits[0].rows.size(), 3u);
  EXPECT_NEAR(fits[0].fitted, 0.7, 0.01);
  EXPECT_DOUBLE_EQ(fits[0].as_written, 1.0);
  for (std::size_t k = 0; k < 3; ++k) {
    const double measured = comparisons[k].run.measured;
    EXPECT_GT(comparisons[k].error, 0.1);  // as written: faster than these rows
    EXPECT_NEAR(fits[0].fitted_predicted[k] / measured, 1.0, 0.01);
    EXPECT_NEAR(fits[0].held_out_predicted[k] / measured, 1.0, 0.01);
  }
}

TEST(EndToEnd, MalformedCellsNameFileLineAndColumn) {
  const std::pair<const char*, const char*> cases[] = {
      {"lumi,m,GPT,x,2048,16,,,50304,2048,gpt,bf16,16,2,2,2,,4,0,false,1,64,full,1,samples/s total,d,s\n", "layers"},
      {"lumi,m,GPT,24,2048,16,,,50304,2048,gpt,bf16,16,2,2,2,,4,0,false,1,64,full,1,furlongs,d,s\n", "unit"},
      {"lumi,m,GPT,24,2048,16,,,50304,2048,gpt,fp8,16,2,2,2,,4,0,false,1,64,full,1,samples/s total,d,s\n",
       "precision"},
      {"lumi,m,GPT,24,2048,16,,,50304,2048,gpt,bf16,17,2,2,2,,4,0,false,1,64,full,1,samples/s total,d,s\n", "devices"},
      {"lumi,m,GPT,24,2048,16,,,50304,2048,gpt,bf16,16,2,2,2,,4,0,false,1,64,full,-3,samples/s total,d,s\n",
       "measured"},
      {"lumi,m,GPT,24,2048,16,,,50304,2048,gpt,bf16,16,2,2,2,,9223372036854775807,0,false,9223372036854775807,64,full,1,"
       "samples/s total,d,s\n",
       "dp"},
      {"lumi,m,GPT,24,2048,16,,,50304,2048,gpt,bf16,16,2,2,2,,4,0,false,1,64,full,inf,samples/s total,d,s\n",
       "measured"},
      {"lumi,m,GPT,24,2048,16,,,50304,2048,gpt,bf16,16,3,2,2,,4,0,false,1,64,full,1,samples/s total,d,s\n", "nodes"},
      {"lumi,m,GPT,24,2048\n", ""}};
  for (const auto& [row, column] : cases) {
    const std::string path = write("ws_e2e_bad.csv", row);
    try {
      load_published_runs(path);
      FAIL() << row;
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(path), std::string::npos) << what;
      EXPECT_NE(what.find(":2"), std::string::npos) << what;
      EXPECT_NE(what.find(column), std::string::npos) << what;
    }
  }
}

}  // namespace
}  // namespace ws
