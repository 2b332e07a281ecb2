// The machine file's optional `uncertainty:` section: ranges read with their units, and every
// inconsistent range rejected with file, key and what was expected.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <stdexcept>
#include <sstream>
#include <string>

#include "base/input_error.hpp"
#include "sim/compute/gemm_efficiency.hpp"
#include "sim/machine/machine_loader.hpp"
#include "sim/study/uncertainty.hpp"

namespace ws {
namespace {

using ::testing::HasSubstr;

std::string perlmutter_without_ranges() {
  std::ifstream in(std::string(WEAKSCALE_SOURCE_DIR) + "/machines/perlmutter.yaml");
  std::ostringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  return all.substr(0, all.find("\nuncertainty:")) + "\n";
}

Machine with_ranges(const std::string& entries) {
  return parse_machine(perlmutter_without_ranges() + "uncertainty:\n" + entries, "m.yaml");
}

std::string error_of(const std::string& entries) {
  try {
    with_ranges(entries);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(UncertaintyLoader, ShippedMachinesCarryRangesForTheIssueParameters) {
  for (const char* name : {"perlmutter", "frontier", "alps"}) {
    const Machine m = load_machine_by_name(name, std::string(WEAKSCALE_SOURCE_DIR) + "/machines");
    // The five of the first studies, background load and device spread (the costs of scale), the
    // compute slowdown under overlap, the fused attention's rate where it is an estimate, and how
    // fast GEMM efficiency falls below the best shape where only the best shape is published; then
    // the protocols' steps (Perlmutter's LL and LL128, Frontier's LL) and Frontier's other two
    // libraries' terms (rccl-eager's step, bandwidth, compute slowdown and eager window; Cray MPICH's
    // step and bandwidth).
    const std::size_t expected = std::string(name) == "alps" ? 8u : std::string(name) == "perlmutter" ? 12u : 17u;
    EXPECT_EQ(m.uncertainty.size(), expected) << name;
    for (const auto& r : m.uncertainty) EXPECT_FALSE(r.source.empty());
  }
  EXPECT_TRUE(parse_machine(perlmutter_without_ranges(), "m.yaml").uncertainty.empty());
}

TEST(UncertaintyLoader, ReadsUnitsPerParameter) {
  const Machine m = with_ranges(
      "  - {parameter: switch_latency, low: \"250 ns\", high: \"0.5 us\", source: estimate, spans: error}\n"
      "  - {parameter: global_links_per_group_pair, low: 4, high: 12, source: estimate, spans: error}\n");
  ASSERT_EQ(m.uncertainty.size(), 2u);
  EXPECT_EQ(m.uncertainty[0].parameter, UncertainParameter::switch_latency);
  EXPECT_EQ(m.uncertainty[0].high_time, Time::from_ns(500));
  EXPECT_EQ(m.uncertainty[1].high, 12);
}

TEST(UncertaintyLoader, AttentionScaleNeedsAFusedAttentionRate) {
  const Machine m = with_ranges("  - {parameter: attention_efficiency_scale, low: 0.5, high: 2, source: estimate, spans: error}\n");
  ASSERT_EQ(m.uncertainty.size(), 1u);
  // Scaled, each efficiency is capped at 1.
  const Machine high = with_value(m, UncertainParameter::attention_efficiency_scale, {2.0, {}});
  EXPECT_DOUBLE_EQ(high.device.fused_attention->forward_efficiency,
                   std::min(1.0, 2.0 * m.device.fused_attention->forward_efficiency));
  EXPECT_DOUBLE_EQ(high.device.fused_attention->backward_efficiency, 2.0 * m.device.fused_attention->backward_efficiency);
  const Machine low = with_value(m, UncertainParameter::attention_efficiency_scale, {0.5, {}});
  EXPECT_DOUBLE_EQ(low.device.fused_attention->forward_efficiency, 0.5 * m.device.fused_attention->forward_efficiency);
  EXPECT_THAT(error_of("  - {parameter: attention_efficiency_scale, low: 1.1, high: 2, source: x, spans: error}\n"),
              HasSubstr("contains the machine's own value 1"));
  // A machine that prices the engine's own attention has no such rate to scale.
  std::string unfused = perlmutter_without_ranges();
  const auto from = unfused.find("  fused_attention:");
  ASSERT_NE(from, std::string::npos);
  unfused.erase(from, unfused.find("  gemm_efficiency:") - from);
  try {
    parse_machine(unfused + "uncertainty:\n  - {parameter: attention_efficiency_scale, low: 0.5, high: 2, source: x, spans: error}\n",
                  "m.yaml");
    ADD_FAILURE() << "accepted a scale without device.fused_attention";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("uncertainty[0].parameter"));
    EXPECT_THAT(e.what(), HasSubstr("needs device.fused_attention"));
  }
}

TEST(UncertaintyLoader, ShapeFalloffBendsTheTableBelowItsBestShape) {
  const Machine m = with_ranges("  - {parameter: gemm_shape_falloff, low: 1, high: 2, source: estimate, spans: error}\n");
  ASSERT_EQ(m.uncertainty.size(), 1u);
  const auto& nominal = m.device.gemm.samples;
  double best = 0;
  for (const auto& s : nominal) best = std::max(best, s.efficiency);
  // Exponent 1 is the table as written; exponent 2 squares each sample's ratio to the best one,
  // so the best shape keeps its published figure and every other shape falls further below it.
  const Machine same = with_value(m, UncertainParameter::gemm_shape_falloff, {1.0, {}});
  const Machine steep = with_value(m, UncertainParameter::gemm_shape_falloff, {2.0, {}});
  ASSERT_EQ(steep.device.gemm.samples.size(), nominal.size());
  for (std::size_t i = 0; i < nominal.size(); ++i) {
    const double e = nominal[i].efficiency;
    EXPECT_NEAR(same.device.gemm.samples[i].efficiency, e, 1e-15);
    EXPECT_NEAR(steep.device.gemm.samples[i].efficiency, e * e / best, 1e-15);
    if (e == best) EXPECT_EQ(steep.device.gemm.samples[i].efficiency, best);
    else EXPECT_LT(steep.device.gemm.samples[i].efficiency, e);
  }
  // Between the samples too: a 768-cube GEMM (not in the table) runs slower on the steeper table.
  EXPECT_LT(gemm_efficiency(steep.device.gemm, 768, 768, 768), gemm_efficiency(m.device.gemm, 768, 768, 768));
  EXPECT_THAT(error_of("  - {parameter: gemm_shape_falloff, low: 1.2, high: 2, source: x, spans: error}\n"),
              HasSubstr("contains the machine's own value 1"));
  EXPECT_THAT(error_of("  - {parameter: gemm_shape_falloff, low: 0, high: 2, source: x, spans: error}\n"),
              HasSubstr("uncertainty[0].low"));
}

TEST(UncertaintyLoader, RejectsInconsistentRanges) {
  EXPECT_THAT(error_of("  - {parameter: gemm, low: 0.5, high: 1, source: x, spans: error}\n"), HasSubstr("gemm_shape_falloff"));
  EXPECT_THAT(error_of("  - {parameter: gemm_efficiency_scale, low: 0.5, high: 0.9, source: x, spans: error}\n"),
              HasSubstr("contains the machine's own value 1"));
  EXPECT_THAT(error_of("  - {parameter: switch_latency, low: 250, high: \"500 ns\", source: x, spans: error}\n"),
              HasSubstr("uncertainty[0].low"));
  EXPECT_THAT(error_of("  - {parameter: collective_bandwidth_efficiency, low: 0.7, high: 0.5, source: x, spans: error}\n"),
              HasSubstr(">= low"));
  EXPECT_THAT(error_of("  - {parameter: global_links_per_group_pair, low: 4, high: 100, source: x, spans: error}\n"),
              HasSubstr("at most"));
  EXPECT_THAT(error_of("  - {parameter: switch_latency, low: \"250 ns\", high: \"500 ns\", source: x, spans: error}\n"
                       "  - {parameter: switch_latency, low: \"250 ns\", high: \"500 ns\", source: x, spans: error}\n"),
              HasSubstr("earlier entry"));
  EXPECT_THAT(error_of("  - {parameter: switch_latency, low: \"250 ns\", high: \"500 ns\"}\n"),
              HasSubstr("source"));
  // What the range spans around the written value is required and one of two words.
  EXPECT_THAT(error_of("  - {parameter: switch_latency, low: \"250 ns\", high: \"500 ns\", source: x}\n"),
              HasSubstr("spans"));
  EXPECT_THAT(error_of("  - {parameter: switch_latency, low: \"250 ns\", high: \"500 ns\", source: x, spans: wide}\n"),
              HasSubstr("best_to_typical (the file's value is the best case a run sees) or error"));
}

// The shipped files say which ranges start at the written value's best case: the GEMM scale on
// every machine (published best-shape rates), and Frontier's rendezvous-only collective bandwidth.
TEST(UncertaintyLoader, ShippedFilesMarkTheirBestCaseRanges) {
  for (const char* name : {"frontier", "perlmutter", "alps"}) {
    const Machine m = load_machine(std::string(WEAKSCALE_SOURCE_DIR) + "/machines/" + name + ".yaml");
    bool gemm_best = false;
    for (const UncertaintyRange& r : m.uncertainty)
      if (r.parameter == UncertainParameter::gemm_efficiency_scale) gemm_best = r.spans == RangeSpan::best_to_typical;
    EXPECT_TRUE(gemm_best) << name;
  }
}

// --set NAME=VALUE: the value is read as an end of that parameter's range would be (with its unit,
// inside its kind's bounds), and bad settings name the flag and the parameter.
TEST(ParameterSetting, IsReadAsARangeEndIs) {
  const Machine m = load_machine_by_name("frontier", std::string(WEAKSCALE_SOURCE_DIR) + "/machines");
  const UncertaintyRange latency = parse_parameter_setting(m, "collective_step_latency=40 us");
  EXPECT_EQ(latency.parameter, UncertainParameter::collective_step_latency);
  EXPECT_EQ(latency.low_time, Time::from_us(40));
  EXPECT_EQ(latency.high_time, Time::from_us(40));
  EXPECT_DOUBLE_EQ(parse_parameter_setting(m, "background_load=0.25").low, 0.25);
  EXPECT_DOUBLE_EQ(parse_parameter_setting(m, "global_links_per_group_pair=2").low, 2.0);
  struct Bad {
    const char* setting;
    const char* key;
    const char* expected;
  };
  for (const Bad& bad : {Bad{"gemm=1", "'--set'", "one of: gemm_efficiency_scale"},
                         Bad{"gemm_efficiency_scale", "'--set'", "NAME=VALUE"},
                         Bad{"=0.5", "'--set'", "NAME=VALUE"},
                         Bad{"gemm_efficiency_scale=0", "'--set gemm_efficiency_scale'", "a positive number"},
                         Bad{"background_load=1", "'--set background_load'", "[0, 1)"},
                         Bad{"collective_step_latency=40", "'--set collective_step_latency'", "with a unit"},
                         Bad{"global_links_per_group_pair=100", "'--set global_links_per_group_pair'", "at most"},
                         // The default library, rccl, has no eager window: the setting would move nothing.
                         Bad{"collective_eager_overflow=100 us", "'--set'", "rccl has no eager_overflow"}}) {
    try {
      parse_parameter_setting(m, bad.setting);
      ADD_FAILURE() << bad.setting << " was accepted";
    } catch (const InputError& e) {
      EXPECT_THAT(e.what(), HasSubstr(bad.key)) << bad.setting;
      EXPECT_THAT(e.what(), HasSubstr(bad.expected)) << bad.setting;
    }
  }
}

// Settings applied: the machine is the one the sensitivity table builds for that value, the
// parameter's range is gone (samples and the table no longer vary it), the setting is recorded,
// and a parameter set twice (a scale would compound) is refused.
TEST(ParameterSetting, FixesTheParameterAndDropsItsRange) {
  const Machine m = load_machine_by_name("frontier", std::string(WEAKSCALE_SOURCE_DIR) + "/machines");
  const Machine set = with_settings(m, {"gemm_efficiency_scale=0.6", "switch_latency=500 ns"});
  const Machine expected = with_value(with_value(m, UncertainParameter::gemm_efficiency_scale, {0.6, {}}),
                                      UncertainParameter::switch_latency, {0.0, Time::from_ns(500)});
  ASSERT_EQ(set.device.gemm.samples.size(), expected.device.gemm.samples.size());
  for (std::size_t i = 0; i < set.device.gemm.samples.size(); ++i)
    EXPECT_DOUBLE_EQ(set.device.gemm.samples[i].efficiency, expected.device.gemm.samples[i].efficiency);
  EXPECT_EQ(set.network.switch_latency, Time::from_ns(500));
  EXPECT_EQ(set.uncertainty.size(), m.uncertainty.size() - 2);
  for (const auto& r : set.uncertainty) {
    EXPECT_NE(r.parameter, UncertainParameter::gemm_efficiency_scale);
    EXPECT_NE(r.parameter, UncertainParameter::switch_latency);
  }
  EXPECT_EQ(set.overrides, (std::vector<std::string>{"gemm_efficiency_scale=0.6", "switch_latency=500 ns"}));
  EXPECT_TRUE(with_settings(m, {}).overrides.empty());
  EXPECT_THROW(with_settings(m, {"gemm_efficiency_scale=0.6", "gemm_efficiency_scale=0.7"}), InputError);
}

// A collective range moves the library it names (the file's first where it names none) and, with
// `protocol:`, that protocol's terms only; the label says which.
TEST(UncertaintyLoader, RangesMoveTheLibraryAndProtocolTheyName) {
  const Machine m = load_machine_by_name("frontier", std::string(WEAKSCALE_SOURCE_DIR) + "/machines");
  const auto range = [&](UncertainParameter p, const std::string& library, const std::string& protocol) {
    for (const UncertaintyRange& r : m.uncertainty)
      if (r.parameter == p && r.library == library && r.protocol == protocol) return r;
    throw std::runtime_error("no such range");
  };
  const UncertaintyRange own = range(UncertainParameter::collective_step_latency, "rccl", "");
  const UncertaintyRange ll = range(UncertainParameter::collective_step_latency, "rccl", "LL");
  const UncertaintyRange eager = range(UncertainParameter::collective_eager_overflow, "rccl-eager", "");
  const UncertaintyRange mpich = range(UncertainParameter::collective_bandwidth_efficiency, "cray-mpich", "");
  EXPECT_EQ(range_label(own), "collective_step_latency");  // the default library, as the file wrote it
  EXPECT_EQ(range_label(ll), "collective_step_latency (LL)");
  EXPECT_EQ(range_label(eager), "collective_eager_overflow (rccl-eager)");
  EXPECT_EQ(nominal_value(m, eager).time, Time::from_us(310));
  EXPECT_EQ(nominal_value(m, ll).time, Time::from_ns(5600));
  EXPECT_DOUBLE_EQ(nominal_value(m, mpich).number, 0.22);

  const auto library = [](const Machine& machine, const std::string& name) {
    for (const auto& l : machine.collective_libraries)
      if (l.name == name) return l;
    throw std::runtime_error("no library " + name);
  };
  // Each moves its own term and nothing else of the libraries.
  const Machine slow_ll = with_value(m, ll, high_value(ll));
  EXPECT_EQ(library(slow_ll, "rccl").protocols.at(0).step_latency, ll.high_time);
  EXPECT_EQ(library(slow_ll, "rccl").step_latency, library(m, "rccl").step_latency);
  EXPECT_EQ(library(slow_ll, "rccl-eager").step_latency, library(m, "rccl-eager").step_latency);
  const Machine slow_eager = with_value(m, eager, low_value(eager));
  EXPECT_EQ(library(slow_eager, "rccl-eager").eager_overflow->per_step, eager.low_time);
  EXPECT_EQ(library(slow_eager, "rccl").step_latency, library(m, "rccl").step_latency);
  const Machine wide_mpich = with_value(m, mpich, high_value(mpich));
  EXPECT_DOUBLE_EQ(library(wide_mpich, "cray-mpich").bandwidth_efficiency, mpich.high);
  EXPECT_DOUBLE_EQ(library(wide_mpich, "rccl").bandwidth_efficiency, library(m, "rccl").bandwidth_efficiency);
  // Every draw keeps each named term inside its range.
  for (int s = 0; s < 8; ++s) {
    const Machine draw = sampled_machine(m, 1, s);
    const Time per_step = library(draw, "rccl-eager").eager_overflow->per_step;
    EXPECT_GE(per_step, eager.low_time);
    EXPECT_LE(per_step, eager.high_time);
    const Time ll_step = library(draw, "rccl").protocols.at(0).step_latency;
    EXPECT_GE(ll_step, ll.low_time);
    EXPECT_LE(ll_step, ll.high_time);
  }
}

// A study prices its steps with the default library alone: the ranges of the others leave it, and a
// study whose `library:` picks another keeps that one's ranges (and the network's) instead.
TEST(UncertaintyLoader, AStudyKeepsTheRangesOfTheLibraryItRuns) {
  const Machine m = load_machine_by_name("frontier", std::string(WEAKSCALE_SOURCE_DIR) + "/machines");
  const auto libraries_of = [](const Machine& machine) {
    std::set<std::string> names;
    for (const UncertaintyRange& r : machine.uncertainty)
      if (!r.library.empty()) names.insert(r.library);
    return names;
  };
  EXPECT_EQ(libraries_of(m), (std::set<std::string>{"rccl", "rccl-eager", "cray-mpich"}));
  const Machine as_default = without_other_libraries_ranges(m);
  EXPECT_EQ(libraries_of(as_default), (std::set<std::string>{"rccl"}));
  Machine eager = m;
  ASSERT_TRUE(use_collective_library(eager, "rccl-eager"));
  eager = without_other_libraries_ranges(eager);
  EXPECT_EQ(libraries_of(eager), (std::set<std::string>{"rccl-eager"}));
  // The eager study varies the same kinds of collective term the default one does (and its window).
  const auto parameters_of = [](const Machine& machine) {
    std::multiset<UncertainParameter> kinds;
    for (const UncertaintyRange& r : machine.uncertainty)
      if (r.protocol.empty()) kinds.insert(r.parameter);
    return kinds;
  };
  std::multiset<UncertainParameter> expected = parameters_of(as_default);
  expected.insert(UncertainParameter::collective_eager_overflow);
  EXPECT_EQ(parameters_of(eager), expected);
  const auto network_ranges = [](const Machine& machine) {
    return std::count_if(machine.uncertainty.begin(), machine.uncertainty.end(),
                         [](const UncertaintyRange& r) { return r.library.empty(); });
  };
  EXPECT_EQ(network_ranges(eager), network_ranges(m));
  // --set moves the default library's own term and drops that range only.
  const Machine set = with_settings(m, {"collective_step_latency=30 us"});
  EXPECT_EQ(set.uncertainty.size(), m.uncertainty.size() - 1);
  EXPECT_EQ(std::count_if(set.uncertainty.begin(), set.uncertainty.end(),
                          [](const UncertaintyRange& r) { return r.parameter == UncertainParameter::collective_step_latency; }),
            3);  // rccl's LL, rccl-eager's and Cray MPICH's remain
  // With the eager library picked, its window is the default library's term a setting moves.
  const Machine eager_set = with_settings(eager, {"collective_eager_overflow=250 us"});
  EXPECT_EQ(eager_set.collective_libraries.front().eager_overflow->per_step, Time::from_us(250));
  EXPECT_EQ(eager_set.uncertainty.size(), eager.uncertainty.size() - 1);
}

TEST(UncertaintyLoader, RejectsATargetTheLibraryDoesNotHave) {
  // Perlmutter's one library, nccl, has LL and LL128 and no eager window.
  EXPECT_NO_THROW(with_ranges("  - {parameter: collective_step_latency, protocol: ll128, low: \"8 us\", high: \"9 us\", "
                              "source: x, spans: error}\n"));
  EXPECT_THAT(error_of("  - {parameter: collective_step_latency, library: rccl, low: \"9 us\", high: \"25 us\", "
                       "source: x, spans: error}\n"),
              HasSubstr("one of the file's collectives: nccl"));
  EXPECT_THAT(error_of("  - {parameter: background_load, library: nccl, low: 0, high: 0.3, source: x, spans: error}\n"),
              HasSubstr("not a collective library's term"));
  EXPECT_THAT(error_of("  - {parameter: compute_slowdown, protocol: low_latency, low: 0, high: 0.3, source: x, spans: error}\n"),
              HasSubstr("a protocol has a step latency and a bandwidth efficiency only"));
  EXPECT_THAT(error_of("  - {parameter: collective_step_latency, protocol: simple, low: \"9 us\", high: \"25 us\", "
                       "source: x, spans: error}\n"),
              HasSubstr("low_latency or ll128"));
  EXPECT_THAT(error_of("  - {parameter: collective_eager_overflow, low: \"9 us\", high: \"25 us\", source: x, spans: error}\n"),
              HasSubstr("nccl has no eager_overflow"));
  // The range holds the protocol's own value, not the library's.
  EXPECT_THAT(error_of("  - {parameter: collective_step_latency, protocol: low_latency, low: \"9 us\", high: \"25 us\", "
                       "source: x, spans: error}\n"),
              HasSubstr("contains the machine's own value 3971 ns"));
  // One range per (parameter, library, protocol): the library's own step and LL's are two.
  EXPECT_NO_THROW(with_ranges(
      "  - {parameter: collective_step_latency, low: \"9 us\", high: \"25 us\", source: x, spans: error}\n"
      "  - {parameter: collective_step_latency, protocol: low_latency, low: \"3 us\", high: \"5 us\", source: x, spans: error}\n"));
  EXPECT_THAT(error_of("  - {parameter: collective_step_latency, low: \"9 us\", high: \"25 us\", source: x, spans: error}\n"
                       "  - {parameter: collective_step_latency, library: nccl, low: \"9 us\", high: \"25 us\", source: x, "
                       "spans: error}\n"),
              HasSubstr("earlier entry"));
}

// The band a measurement is checked against holds the draws' 10th-90th percentile and the
// prediction as written, wherever that lies.
TEST(PredictionBand, HoldsTheDrawsPercentilesAndTheWrittenPrediction) {
  std::vector<double> draws;
  for (int i = 0; i <= 10; ++i) draws.push_back(10.0 + i);  // 10 .. 20: percentiles 11 and 19
  const PredictionBand inside = prediction_band(draws, 15.0);
  EXPECT_DOUBLE_EQ(inside.low, 11.0);
  EXPECT_DOUBLE_EQ(inside.high, 19.0);
  const PredictionBand best_case = prediction_band(draws, 21.0);  // a best_to_typical range's written end
  EXPECT_DOUBLE_EQ(best_case.draws_high, 19.0);
  EXPECT_DOUBLE_EQ(best_case.high, 21.0);
  EXPECT_DOUBLE_EQ(best_case.low, 11.0);
  EXPECT_DOUBLE_EQ(prediction_band(draws, 5.0).low, 5.0);
}

}  // namespace
}  // namespace ws
