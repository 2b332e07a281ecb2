// A calibration written as YAML passes the machine loader and reads back as the same figures; every
// figure line says how it was measured; the derived figures respect the schema's ranges.
#include "harness/calibrate/calibrated_machine.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include <sstream>
#include <string>

#include "harness/calibrate/machine_yaml_writer.hpp"
#include "base/statistics.hpp"
#include "sim/machine/machine_loader.hpp"

namespace ws {
namespace {

// A 4-core host with exact alpha-beta communication: alpha 400 ns, beta 8 GB/s; collectives with
// launch 3 us, step 1 us (link 400 ns + library 600 ns), ring bandwidth 6 GB/s.
Calibration synthetic_calibration() {
  Calibration c;
  c.machine_name = "synthetic";
  c.command_line = "weakscale calibrate --out synthetic.yaml";
  c.date_utc = "2026-01-01T00:00:00Z";
  c.note = "synthetic figures for a test";
  c.host.hostname = "testhost";
  c.host.machine_id = "0123abcd";
  c.host.boot_id = "b00t-1";
  c.host.cpu_model = "Test CPU";
  c.host.cores = 4;
  c.host.clock_hz = 2.5e9;
  c.host.clock_source = "test";
  c.host.vector_isa = "avx2+fma";
  c.host.fp32_lanes = 8;
  c.host.fma_units = 2;
  c.host.has_fma = true;
  c.host.memory_bytes = 16.0 * 1073741824.0;
  c.host.last_level_cache_bytes = 32.0 * 1048576.0;
  c.gemm.grid.repetitions = 5;
  c.gemm.blas = "OpenBLAS test";
  c.gemm.rates = {{64, 64, 64, 20e9, 18e9, 19e9}, {512, 512, 512, 60e9, 61e9, 59e9}, {2048, 64, 512, 50e9, 40e9, 45e9}};
  c.memory = MemoryMeasurements{128.0 * 1048576.0, 10, 4, 20e9, 40e9};
  // Four cores' batch times (s per call): medians 1, 1, 1.25, 1 s (rates 1, 1, 0.8, 1 per s: CV 0.1 / 0.95);
  // each batch over its core's median, pooled: 12 values of mean 1 with squared deviations summing to 0.1.
  c.variability.side = 256;
  c.variability.threads = 4;
  c.variability.seconds_per_call = {{1.0, 1.1, 0.9}, {1.0, 1.0, 1.0}, {1.25, 1.25, 1.25}, {1.0, 1.2, 0.8}};
  c.mpi.library = "Open MPI test";
  c.mpi.ranks = 4;
  c.mpi.batches = 7;
  c.mpi.largest_bytes = 64.0 * 1048576.0;
  c.mpi.command = "mpirun -np 4 weakscale-calibrate-mpi --out FILE";
  for (double bytes = 1; bytes <= c.mpi.largest_bytes; bytes *= 4) c.mpi.ping_pong.push_back({bytes, 400e-9 + bytes / 8e9});
  // Open MPI's non-blocking collectives on 4 ranks (binomial tree of height 2 for the reductions,
  // ring-like all-gather): launch 3 us, step 1 us, 6 GB/s.
  for (double bytes = 16; bytes <= c.mpi.largest_bytes; bytes *= 4) {
    const double whole = 1e-6 + bytes / 6e9;
    c.mpi.collectives.push_back({CollectiveOp::all_reduce, 4, bytes, 3e-6 + 4 * whole});
    c.mpi.collectives.push_back({CollectiveOp::reduce_scatter, 4, bytes, 3e-6 + 2 * whole + 1e-6 + 0.75 * bytes / 6e9});
    c.mpi.collectives.push_back({CollectiveOp::all_gather, 4, bytes, 3e-6 + 3 * 1e-6 + 0.75 * bytes / 6e9});
  }
  return c;
}

void expect_relative(double loaded, double expected, double tolerance, const char* what) {
  EXPECT_NEAR(loaded, expected, tolerance * std::abs(expected)) << what;
}

TEST(CalibratedMachine, WrittenFileLoadsBackAsTheSameFigures) {
  const Calibration c = synthetic_calibration();
  const Machine expected = calibrated_machine(c);
  const Machine loaded = parse_machine(format_calibrated_machine_yaml(c), "synthetic.yaml");
  constexpr double kPrinted = 1e-4;  // 5 significant digits (efficiencies 4)

  EXPECT_EQ(loaded.name, "synthetic");
  EXPECT_EQ(loaded.nodes, 1);
  // The host and boot it describes, so that validate can tell another host from this one.
  ASSERT_TRUE(loaded.measured_on.has_value());
  EXPECT_EQ(loaded.measured_on->hostname, "testhost");
  EXPECT_EQ(loaded.measured_on->machine_id, "0123abcd");
  EXPECT_EQ(loaded.measured_on->boot_id, "b00t-1");
  EXPECT_EQ(loaded.measured_on->cpu_model, "Test CPU");
  EXPECT_EQ(loaded.measured_on->cores, 4);
  EXPECT_EQ(other_host_reason(loaded.measured_on, measured_host(c.host)), "");
  expect_relative(loaded.device.peak_fp32.flops(), expected.device.peak_fp32.flops(), kPrinted, "fp32 peak");
  expect_relative(loaded.device.peak_bf16.flops(), expected.device.peak_bf16.flops(), kPrinted, "bf16 peak");
  expect_relative(loaded.device.memory_bandwidth.bytes_per_s(), expected.device.memory_bandwidth.bytes_per_s(),
                  kPrinted, "memory bandwidth");
  expect_relative(to_gib(loaded.device.memory_capacity_bytes), to_gib(expected.device.memory_capacity_bytes), kPrinted,
                  "capacity");
  ASSERT_EQ(loaded.device.gemm.samples.size(), expected.device.gemm.samples.size());
  for (std::size_t i = 0; i < loaded.device.gemm.samples.size(); ++i) {
    const auto& l = loaded.device.gemm.samples[i];
    const auto& e = expected.device.gemm.samples[i];
    EXPECT_EQ(l.m, e.m);
    EXPECT_EQ(l.n, e.n);
    EXPECT_EQ(l.k, e.k);
    expect_relative(l.efficiency, e.efficiency, 1e-3, "gemm efficiency");
  }
  EXPECT_EQ(loaded.node.devices, 4);
  ASSERT_EQ(loaded.node.links.size(), expected.node.links.size());
  ASSERT_EQ(loaded.node.links.size(), 6u);  // all-to-all over 4 cores
  for (std::size_t i = 0; i < loaded.node.links.size(); ++i) {
    EXPECT_EQ(loaded.node.links[i].device_a, expected.node.links[i].device_a);
    EXPECT_EQ(loaded.node.links[i].device_b, expected.node.links[i].device_b);
    expect_relative(loaded.node.links[i].bandwidth.bytes_per_s(), expected.node.links[i].bandwidth.bytes_per_s(),
                    kPrinted, "link bandwidth");
    EXPECT_EQ(loaded.node.links[i].latency, expected.node.links[i].latency);  // printed to the picosecond
  }
  ASSERT_EQ(loaded.node.nics.size(), 1u);
  EXPECT_EQ(loaded.node.nics[0].latency, expected.node.nics[0].latency);
  EXPECT_EQ(loaded.node.nic_efficiency.half_bandwidth_bytes, expected.node.nic_efficiency.half_bandwidth_bytes);
  EXPECT_EQ(loaded.network.groups, 1);
  EXPECT_EQ(loaded.network.nodes_per_group, 1);
  ASSERT_EQ(loaded.collective_libraries.size(), 1u);
  const auto& lib = loaded.collective_libraries[0];
  EXPECT_EQ(lib.name, "openmpi");
  EXPECT_EQ(lib.launch_latency, expected.collective_libraries[0].launch_latency);
  EXPECT_EQ(lib.step_latency, expected.collective_libraries[0].step_latency);
  expect_relative(lib.bandwidth_efficiency, expected.collective_libraries[0].bandwidth_efficiency, 1e-3, "eff");
}

// Busy-node passes spread over a calibration combine as validate's tracker combines them: the
// fastest lone rate and the fastest busy rate, each from whichever pass the host disturbed least.
TEST(CalibratedMachine, BusyNodePassesKeepTheFastestRateOfEachKind) {
  const std::vector<BusyNodeGemm> passes{{512, 2, 100e9, 52e9, 1}, {512, 2, 104e9, 99e9, 1}, {512, 2, 108e9, 90e9, 1}};
  const BusyNodeGemm fastest = fastest_busy_node(passes);
  EXPECT_EQ(fastest.alone_flops, 108e9);
  EXPECT_EQ(fastest.each_flops, 99e9);
  EXPECT_EQ(fastest.passes, 3);
  EXPECT_NEAR(fastest.share(), 99.0 / 108.0, 1e-12);
  Calibration c = synthetic_calibration();
  c.busy_node = fastest;
  EXPECT_NE(format_calibrated_machine_yaml(c).find("the fastest of 3 passes"), std::string::npos);
  EXPECT_EQ(fastest_busy_node({}).share(), 1.0);
}

TEST(CalibratedMachine, CoreVariabilityIsTheSpreadOfMediansAndTheMedianJitter) {
  const Calibration c = synthetic_calibration();
  EXPECT_NEAR(coefficient_of_variation({1.0, 2.0, 3.0}), 0.5, 1e-12);  // sd 1 (n - 1) over mean 2
  EXPECT_EQ(coefficient_of_variation({4.0}), 0.0);
  EXPECT_NEAR(c.variability.speed_spread(), 0.1 / 0.95, 1e-12);
  EXPECT_NEAR(c.variability.noise(), std::sqrt(0.1 / 11), 1e-12);
  // Per round the slowest core (1.25 s) over the mean core, less 1, averaged over the three rounds.
  EXPECT_NEAR(c.variability.barrier_wait(), ((1.25 / 1.0625 - 1) + (1.25 / 1.1375 - 1) + (1.25 / 0.9875 - 1)) / 3, 1e-12);
  CoreVariability one_core;
  one_core.threads = 1;
  one_core.seconds_per_call = {{1.0, 3.0}};
  EXPECT_EQ(one_core.barrier_wait(), 0.0);  // nobody to wait for
  EXPECT_NE(format_calibrated_machine_yaml(c).find("the slowest core took 18.0 % longer"), std::string::npos);
  // The file: the spread as measured (below the barrier's bound) and the jitter that makes the step
  // simulator's wait for one span, (spread + noise) x E[max of 4 normals], the barrier's.
  const double per_sd = c.variability.barrier_wait() / expected_max_of_normals(4);
  ASSERT_GT(per_sd, 0.1 / 0.95);
  const Machine loaded = parse_machine(format_calibrated_machine_yaml(c), "synthetic.yaml");
  EXPECT_NEAR(loaded.variability.device_speed_spread, 0.1 / 0.95, 1e-4);
  EXPECT_NEAR(loaded.variability.compute_noise, per_sd - 0.1 / 0.95, 1e-4);
  // A spread above what the barrier allows is capped there, and leaves no jitter.
  CoreVariability persistent = c.variability;
  persistent.seconds_per_call = {{1.0, 1.0}, {1.0, 1.0}, {1.3, 1.3}, {1.3, 1.3}};  // rates CV 0.151, wait 0.130
  const SynchronizingVariability capped = synchronizing_variability(persistent);
  EXPECT_NEAR(capped.speed_spread, persistent.barrier_wait() / expected_max_of_normals(4), 1e-12);
  EXPECT_LT(capped.speed_spread, persistent.speed_spread());
  EXPECT_EQ(capped.noise, 0.0);
  // One core: nobody waits; the coefficients of variation as measured.
  one_core.side = 256;
  EXPECT_EQ(synchronizing_variability(one_core).noise, one_core.noise());
  EXPECT_EQ(loaded.variability.collective_entry_jitter, Time::zero());
  // Not measured: no variability in the file, and the loader's default of none.
  Calibration without = c;
  without.variability = CoreVariability{};
  const std::string yaml = format_calibrated_machine_yaml(without);
  EXPECT_EQ(yaml.find("variability:"), std::string::npos);
  EXPECT_EQ(parse_machine(yaml, "synthetic.yaml").variability.device_speed_spread, 0.0);
}

// Of the spread's passes the quietest is kept: a pass with one core slowed (a busy host) loses to
// one whose barrier cost less, whatever their order; the file says how many passes there were.
TEST(CalibratedMachine, TheQuietestVariabilityPassIsKept) {
  const Calibration c = synthetic_calibration();
  CoreVariability busy = c.variability;
  for (double& s : busy.seconds_per_call[2]) s *= 1.3;  // the slowest core, at 0.77 of its speed
  ASSERT_GT(busy.barrier_wait(), c.variability.barrier_wait());
  for (const auto& passes : {std::vector{busy, c.variability, busy}, std::vector{c.variability, busy}}) {
    const CoreVariability kept = quietest_variability(passes);
    EXPECT_EQ(kept.seconds_per_call, c.variability.seconds_per_call);
    EXPECT_EQ(kept.passes, static_cast<int>(passes.size()));
  }
  EXPECT_EQ(quietest_variability({}).threads, 0);  // none: not measured
  Calibration three = c;
  three.variability = quietest_variability({busy, c.variability, busy});
  EXPECT_NE(format_calibrated_machine_yaml(three).find("the quietest (least barrier wait) of 3 passes"),
            std::string::npos);
}

TEST(CalibratedMachine, CoreVariabilityProbeTimesEveryCoreInEveryRound) {
  const CoreVariability v = measure_core_variability(64, 2, 5);
  ASSERT_EQ(v.seconds_per_call.size(), 2u);
  for (const auto& rounds : v.seconds_per_call) {
    ASSERT_EQ(rounds.size(), 5u);
    for (const double s : rounds) EXPECT_GT(s, 0.0);
  }
  EXPECT_GE(v.barrier_wait(), 0.0);  // the slowest core is never faster than the mean
  EXPECT_GE(v.speed_spread(), 0.0);
}

TEST(CalibratedMachine, FitsTheSyntheticLinkExactly) {
  const Machine m = calibrated_machine(synthetic_calibration());
  EXPECT_NEAR(m.node.links[0].latency.ns(), 400.0, 1e-3);
  EXPECT_NEAR(m.node.links[0].bandwidth.gbps(), 8.0, 1e-6);
  EXPECT_EQ(m.node.nic_efficiency.half_bandwidth_bytes, 3200u);  // 400 ns x 8 GB/s
}

// The collective terms are those of the model the simulator prices with: collectives timed as the
// simulator prices a known library (launch 3 us, 600 ns per step on top of the links, 0.75 of their
// bandwidth) give those terms back, and the written file, loaded and priced, gives back the times
// it was fitted to. Over the shared-memory node and over one node per rank (a shaped network).
TEST(CalibratedMachine, PricingTheWrittenFileGivesBackTheTimesItWasFittedTo) {
  for (const bool shaped : {false, true}) {
    Calibration c = synthetic_calibration();
    if (shaped) c.shaped_network = "veth pairs shaped to 1 Gb/s (test)";
    Machine truth = calibrated_machine(c);
    CollectiveLibrary& known = truth.collective_libraries.at(0);
    known.launch_latency = Time::from_ns(3000);
    known.step_latency = Time::from_ns(600);
    known.bandwidth_efficiency = 0.75;
    for (TimedCollective& s : c.mpi.collectives) s.seconds = priced_collective_time(truth, s).seconds();

    const Machine fitted = calibrated_machine(c);
    const CollectiveLibrary& lib = fitted.collective_libraries.at(0);
    EXPECT_NEAR(lib.launch_latency.ns(), 3000.0, 30.0) << shaped;
    EXPECT_NEAR(lib.step_latency.ns(), 600.0, 6.0) << shaped;
    EXPECT_NEAR(lib.bandwidth_efficiency, 0.75, 0.0075) << shaped;
    const Machine loaded = parse_machine(format_calibrated_machine_yaml(c), "synthetic.yaml");
    for (const TimedCollective& s : c.mpi.collectives) {
      EXPECT_NEAR(priced_collective_time(loaded, s).seconds() / s.seconds, 1.0, 0.005)
          << shaped << " " << to_string(s.op) << " " << s.full_bytes << " B";
    }
  }
}

TEST(CalibratedMachine, PeakIsDerivedFromTheClockAndEfficienciesAreFractionsOfIt) {
  const Machine m = calibrated_machine(synthetic_calibration());
  EXPECT_DOUBLE_EQ(m.device.peak_fp32.flops(), 2.5e9 * 32.0);
  EXPECT_DOUBLE_EQ(m.device.gemm.samples[1].efficiency, 61e9 / 80e9);  // best of NN / NT / TN
  EXPECT_DOUBLE_EQ(m.device.memory_bandwidth.bytes_per_s(), 10e9);     // 40 GB/s shared by 4 cores
}

TEST(CalibratedMachine, MeasuredRateAboveTheDerivedPeakBecomesThePeak) {
  Calibration c = synthetic_calibration();
  c.host.clock_hz = 1e9;  // derived peak 32 GFLOP/s, below the measured 61
  const Machine m = calibrated_machine(c);
  EXPECT_DOUBLE_EQ(m.device.peak_fp32.flops(), 61e9);
  for (const auto& s : m.device.gemm.samples) {
    EXPECT_GT(s.efficiency, 0.0);
    EXPECT_LE(s.efficiency, 1.0);
  }
  c.host.clock_hz = 0;  // unknown clock
  EXPECT_DOUBLE_EQ(calibrated_machine(c).device.peak_fp32.flops(), 61e9);
  EXPECT_NO_THROW(parse_machine(format_calibrated_machine_yaml(c), "unknown-clock.yaml"));
}

// Every line that sets a value carries a comment, as the schema asks of shipped files.
TEST(CalibratedMachine, EveryFigureLineSaysHowItWasMeasured) {
  std::istringstream lines(format_calibrated_machine_yaml(synthetic_calibration()));
  std::string line;
  int figures = 0;
  while (std::getline(lines, line)) {
    const auto first = line.find_first_not_of(' ');
    if (first == std::string::npos || line[first] == '#') continue;
    const std::string body = line.substr(0, line.find('#'));
    const bool has_number = body.find_first_of("0123456789") != std::string::npos;
    if (!has_number || body.find("name:") != std::string::npos || body.find("description:") != std::string::npos) {
      continue;
    }
    ++figures;
    EXPECT_NE(line.find("  # "), std::string::npos) << "no comment on: " << line;
  }
  EXPECT_GT(figures, 20);
}

// Over shared memory the cores move the collectives' data (progress: host); across the shaped
// network of one namespace per rank the kernel's TCP stack does (asynchronous). Both survive the
// written file.
TEST(CalibratedMachine, CollectivesAreHostProgressedOnSharedMemoryOnly) {
  Calibration c = synthetic_calibration();
  const Machine shared = parse_machine(format_calibrated_machine_yaml(c), "synthetic.yaml");
  EXPECT_EQ(calibrated_machine(c).collective_libraries.at(0).progress, CollectiveProgress::host);
  EXPECT_EQ(shared.collective_libraries.at(0).progress, CollectiveProgress::host);
  c.shaped_network = "4 namespaces on veth links shaped to 1 Gb/s";
  const Machine shaped = parse_machine(format_calibrated_machine_yaml(c), "synthetic.yaml");
  EXPECT_EQ(calibrated_machine(c).collective_libraries.at(0).progress, CollectiveProgress::asynchronous);
  EXPECT_EQ(shaped.collective_libraries.at(0).progress, CollectiveProgress::asynchronous);
}

// Host tracking: new GEMM rates and kernel times replace the device's compute and nothing else.
TEST(CalibratedMachine, MeasuredComputeReplacesOnlyTheDevicesCompute) {
  const Calibration c = synthetic_calibration();
  const Machine file = calibrated_machine(c);
  GemmMeasurements slower = c.gemm;
  for (auto& r : slower.rates) r.nn_flops *= 0.5, r.nt_flops *= 0.5, r.tn_flops *= 0.5;
  ElementwiseMeasurements kernels;
  kernels.seconds[static_cast<std::size_t>(ElementwiseKernel::gelu_forward)] = 0.01;
  kernels.elements[static_cast<std::size_t>(ElementwiseKernel::gelu_forward)] = 1e6;
  const Machine tracked = with_measured_compute(file, slower, kernels);

  EXPECT_EQ(tracked.device.peak_fp32.flops(), file.device.peak_fp32.flops());  // no new rate beats it
  ASSERT_EQ(tracked.device.gemm.samples.size(), file.device.gemm.samples.size());
  for (std::size_t i = 0; i < tracked.device.gemm.samples.size(); ++i) {
    EXPECT_NEAR(tracked.device.gemm.samples[i].efficiency, 0.5 * file.device.gemm.samples[i].efficiency, 1e-12);
  }
  EXPECT_DOUBLE_EQ(tracked.device.elementwise.elements_per_s[static_cast<std::size_t>(ElementwiseKernel::gelu_forward)],
                   1e8);
  EXPECT_EQ(tracked.device.memory_bandwidth.bytes_per_s(), file.device.memory_bandwidth.bytes_per_s());
  EXPECT_EQ(tracked.node.links.size(), file.node.links.size());
  EXPECT_EQ(tracked.collective_libraries.at(0).bandwidth_efficiency, file.collective_libraries.at(0).bandwidth_efficiency);

  // A rate above the file's peak raises the peak with it; efficiencies stay fractions.
  GemmMeasurements faster = c.gemm;
  faster.rates[1].nn_flops = 2.0 * file.device.peak_fp32.flops();
  const Machine fast = with_measured_compute(file, faster, kernels);
  EXPECT_DOUBLE_EQ(fast.device.peak_fp32.flops(), 2.0 * file.device.peak_fp32.flops());
  EXPECT_DOUBLE_EQ(fast.device.gemm.samples[1].efficiency, 1.0);
  EXPECT_DOUBLE_EQ(fast.device.peak_bf16.flops(), fast.device.peak_fp32.flops());
}

}  // namespace
}  // namespace ws
