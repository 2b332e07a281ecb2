// The shipped machine files load and carry the facts from docs/machines.md that later stages rely on.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "sim/machine/machine_loader.hpp"

namespace ws {
namespace {
using namespace ws::literals;

const std::string kMachinesDir = std::string(WEAKSCALE_SOURCE_DIR) + "/machines";

Machine load(const std::string& name) { return load_machine_by_name(name, kMachinesDir); }

// Per-direction bandwidth summed over each device's intra-node links.
std::map<int, double> link_bandwidth_per_device(const NodeSpec& node) {
  std::map<int, double> out;
  for (const auto& link : node.links) {
    out[link.device_a] += link.bandwidth.gbps();
    out[link.device_b] += link.bandwidth.gbps();
  }
  return out;
}

std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream row(line);
  for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
  return cells;
}

TEST(MachineFiles, EveryShippedMachineLoadsAndFitsItsDragonfly) {
  for (const std::string name : {"perlmutter", "frontier", "alps"}) {
    SCOPED_TRACE(name);
    const Machine m = load(name);
    EXPECT_EQ(m.name, name);
    EXPECT_EQ(m.source_file, kMachinesDir + "/" + name + ".yaml");
    EXPECT_LE(m.nodes, m.network.groups * m.network.nodes_per_group);
    EXPECT_EQ(m.node.nics.size(), 4u);
    for (const auto& nic : m.node.nics) EXPECT_EQ(nic.bandwidth, 25_GBps);  // 200 Gb/s Cassini
    EXPECT_EQ(m.network.ports_per_switch, 64);
    EXPECT_EQ(m.network.switch_latency, 350_ns);
    EXPECT_FALSE(m.collective_libraries.empty());
    EXPECT_GE(m.device.gemm.samples.size(), 4u);
  }
}

// Choosing a library makes it the default (first) and keeps the others in file order; a name the
// machine lacks leaves it as it was.
TEST(MachineFiles, UseCollectiveLibraryMakesTheNamedOneTheDefault) {
  Machine m = load("frontier");
  ASSERT_EQ(collective_library_names(m), "rccl, rccl-eager, cray-mpich");
  EXPECT_FALSE(use_collective_library(m, "nccl"));
  EXPECT_EQ(collective_library_names(m), "rccl, rccl-eager, cray-mpich");
  EXPECT_TRUE(use_collective_library(m, "cray-mpich"));
  EXPECT_EQ(collective_library_names(m), "cray-mpich, rccl, rccl-eager");
  EXPECT_EQ(m.collective_libraries.front().launch_latency,
            load("frontier").collective_libraries.back().launch_latency);
  EXPECT_TRUE(use_collective_library(m, "cray-mpich"));  // already the default: nothing moves
  EXPECT_EQ(collective_library_names(m), "cray-mpich, rccl, rccl-eager");
}

TEST(MachineFiles, LoadsByPathToo) {
  EXPECT_EQ(load(kMachinesDir + "/alps.yaml").name, "alps");
}

TEST(MachineFiles, Frontier) {
  const Machine m = load("frontier");
  EXPECT_EQ(m.node.devices, 8);
  EXPECT_DOUBLE_EQ(m.device.peak_bf16.tflops(), 191.5);
  EXPECT_EQ(m.network.groups, 74);
  EXPECT_EQ(m.network.nodes_per_group, 128);
  EXPECT_EQ(m.network.global_links_per_group_pair, 4);
  EXPECT_EQ(m.nodes, 9408);
  // RCCL with rendezvous only (the default), with libfabric's eager messages, and Cray MPICH.
  EXPECT_EQ(m.collective_libraries[0].name, "rccl");
  EXPECT_EQ(m.collective_libraries[0].step_latency, 27_us);
  EXPECT_EQ(m.collective_libraries[0].step_overlap, StepOverlap::pipelined);
  EXPECT_TRUE(m.collective_libraries[0].large_job_overhead.points.empty());
  EXPECT_EQ(m.collective_libraries[1].name, "rccl-eager");
  ASSERT_TRUE(m.collective_libraries[1].eager_overflow.has_value());
  EXPECT_FALSE(m.collective_libraries[0].eager_overflow.has_value());
  EXPECT_EQ(m.collective_libraries[2].name, "cray-mpich");
  EXPECT_EQ(m.collective_libraries[2].step_overlap, StepOverlap::serial);
  // 4 in-package + 2 + 1 Infinity Fabric links of 50 GB/s/dir per GCD: 350 GB/s each.
  ASSERT_EQ(m.node.links.size(), 12u);
  for (const auto& [device, gbps] : link_bandwidth_per_device(m.node)) EXPECT_DOUBLE_EQ(gbps, 350.0) << device;
  // One NIC per OAM: no two NICs on the same GCD pair (0,1), (2,3), ...
  std::map<int, int> per_oam;
  for (const auto& nic : m.node.nics) ++per_oam[nic.attached_device / 2];
  EXPECT_EQ(per_oam.size(), 4u);
}

TEST(MachineFiles, Perlmutter) {
  const Machine m = load("perlmutter");
  EXPECT_EQ(m.nodes, 1792);
  EXPECT_EQ(m.node.devices, 4);
  ASSERT_EQ(m.node.links.size(), 6u);
  for (const auto& link : m.node.links) EXPECT_EQ(link.bandwidth, 100_GBps);
  EXPECT_DOUBLE_EQ(m.device.peak_bf16.tflops(), 312.0);
  EXPECT_EQ(m.network.groups, 14);
  EXPECT_EQ(m.collective_libraries[0].name, "nccl");
  EXPECT_EQ(m.collective_libraries[0].step_latency, Time::from_ps(17708000));  // the fit to its published rows
  EXPECT_EQ(load("alps").collective_libraries[0].step_latency, m.collective_libraries[0].step_latency);
}

TEST(MachineFiles, Alps) {
  const Machine m = load("alps");
  EXPECT_EQ(m.nodes, 2688);
  EXPECT_EQ(m.total_devices(), 10752);
  ASSERT_EQ(m.node.links.size(), 6u);
  for (const auto& link : m.node.links) EXPECT_EQ(link.bandwidth, 150_GBps);
  EXPECT_DOUBLE_EQ(m.device.peak_bf16.tflops(), 989.0);
  EXPECT_EQ(m.network.nodes_per_group, 112);
  EXPECT_EQ(m.collective_libraries[0].name, "nccl");
}

// The Alps GEMM table is the H100 measurement, sample for sample (results/gpu/README.md): the file
// and results/gpu/h100-sxm/gemm-efficiency.csv cannot drift apart.
TEST(MachineFiles, AlpsGemmTableIsTheMeasuredH100Grid) {
  const Machine m = load("alps");
  std::ifstream csv(std::string(WEAKSCALE_SOURCE_DIR) + "/results/gpu/h100-sxm/gemm-efficiency.csv");
  ASSERT_TRUE(csv) << "results/gpu/h100-sxm/gemm-efficiency.csv";
  std::string line;
  std::getline(csv, line);
  ASSERT_EQ(line, "m,n,k,seconds_nn,seconds_nt,seconds_tn,efficiency");
  std::map<std::tuple<double, double, double>, double> measured;
  while (std::getline(csv, line)) {
    const std::vector<std::string> cells = csv_cells(line);
    ASSERT_EQ(cells.size(), 7u) << line;
    measured[{std::stod(cells[0]), std::stod(cells[1]), std::stod(cells[2])}] = std::stod(cells[6]);
  }
  ASSERT_EQ(measured.size(), 729u);
  ASSERT_EQ(m.device.gemm.samples.size(), measured.size());
  ASSERT_TRUE(m.device.gemm.grid.has_value());
  for (const auto& s : m.device.gemm.samples) {
    const auto it = measured.find({s.m, s.n, s.k});
    ASSERT_NE(it, measured.end()) << s.m << " x " << s.n << " x " << s.k;
    EXPECT_EQ(s.efficiency, it->second) << s.m << " x " << s.n << " x " << s.k;
  }
  ASSERT_TRUE(m.device.fused_attention.has_value());
}

// One measured GPU's element-wise kernels (results/gpu/<gpu>/run{1,2,3}/elementwise.csv, written by
// gpu_rates.py): per kernel the median time over the runs, its element count and least bytes per element,
// and the peak bandwidth the runs divided by (their env.json).
struct MeasuredKernel {
  double seconds = 0;
  double elements = 0;
  double bytes_per_element = 0;
};
struct MeasuredGpu {
  double bandwidth = 0;  // bytes/s
  std::map<std::string, MeasuredKernel> kernels;
};
MeasuredGpu measured_elementwise(const std::string& gpu) {
  MeasuredGpu measured;
  std::map<std::string, std::vector<MeasuredKernel>> runs;
  for (const char* run : {"run1", "run2", "run3"}) {
    const std::string folder = std::string(WEAKSCALE_SOURCE_DIR) + "/results/gpu/" + gpu + "/" + run + "/";
    const std::string env = folder + "env.json";
    std::ifstream env_file(env);
    EXPECT_TRUE(env_file) << env;
    const double bandwidth = nlohmann::json::parse(env_file).at("peak_memory_bandwidth_gbps_used").get<double>() * 1e9;
    if (measured.bandwidth != 0) {
      EXPECT_EQ(bandwidth, measured.bandwidth) << env;
    }
    measured.bandwidth = bandwidth;
    const std::string path = folder + "elementwise.csv";
    std::ifstream csv(path);
    EXPECT_TRUE(csv) << path;
    std::string line;
    // The CSVs were written by Python's csv module: CRLF line ends.
    const auto read_line = [&csv](std::string& l) {
      if (!std::getline(csv, l)) return false;
      if (!l.empty() && l.back() == '\r') l.pop_back();
      return true;
    };
    read_line(line);
    EXPECT_EQ(line, "kernel,elements,dtype,seconds,elements_per_s,bytes_per_element,gbps,fraction_of_peak_bandwidth");
    while (read_line(line)) {
      const std::vector<std::string> cells = csv_cells(line);
      EXPECT_EQ(cells.size(), 8u) << line;
      if (cells.size() != 8u) continue;
      runs[cells[0]].push_back({std::stod(cells[3]), std::stod(cells[1]), std::stod(cells[5])});
    }
  }
  for (auto& [kernel, samples] : runs) {
    EXPECT_EQ(samples.size(), 3u) << gpu << " " << kernel;
    std::sort(samples.begin(), samples.end(),
              [](const MeasuredKernel& a, const MeasuredKernel& b) { return a.seconds < b.seconds; });
    measured.kernels[kernel] = samples[samples.size() / 2];
  }
  return measured;
}

// The GPU files' element-wise rates come from the measured GPUs (results/gpu/README.md), to the files'
// four digits. Perlmutter and Frontier: the H100's fraction of peak memory bandwidth carried over to
// theirs. Alps: its GH200 shares the die of the H100 and the H200, whose bandwidths bracket its 4 TB/s;
// each kernel's time is the straight line in 1 / bandwidth through the two, read at 4 TB/s.
TEST(MachineFiles, GpuElementwiseRatesComeFromTheMeasuredGpus) {
  const auto h100 = measured_elementwise("h100-sxm");
  const auto h200 = measured_elementwise("h200");
  const double h100_bandwidth = h100.bandwidth, h200_bandwidth = h200.bandwidth;  // from the runs' env.json
  for (const char* name : {"alps", "perlmutter", "frontier"}) {
    const Machine m = load(name);
    const double bandwidth = m.device.memory_bandwidth.bytes_per_s();
    int given = 0;
    for (int k = 0; k < kElementwiseKernels; ++k) {
      const auto kernel = static_cast<ElementwiseKernel>(k);
      const double rate = m.device.elementwise.of(kernel);
      const auto it = h100.kernels.find(std::string(to_string(kernel)));
      if (it == h100.kernels.end()) {
        EXPECT_EQ(rate, 0.0) << name << " " << to_string(kernel) << ": not measured, priced by its traffic";
        continue;
      }
      const MeasuredKernel& slow = it->second;
      double expected = 0;
      if (std::string(name) == "alps") {
        const MeasuredKernel& fast = h200.kernels.at(it->first);
        ASSERT_EQ(fast.elements, slow.elements);
        const double per_inverse_bandwidth = (slow.seconds - fast.seconds) / (1 / h100_bandwidth - 1 / h200_bandwidth);
        const double fixed = slow.seconds - per_inverse_bandwidth / h100_bandwidth;
        ASSERT_GT(bandwidth, h100_bandwidth);  // an interpolation, not an extrapolation
        ASSERT_LT(bandwidth, h200_bandwidth);
        expected = slow.elements / (per_inverse_bandwidth / bandwidth + fixed);
      } else {
        const double fraction = slow.elements * slow.bytes_per_element / slow.seconds / h100_bandwidth;
        expected = fraction * bandwidth / slow.bytes_per_element;
      }
      EXPECT_NEAR(rate / expected, 1.0, 5e-4) << name << " " << to_string(kernel);
      ++given;
    }
    EXPECT_EQ(given, 6) << name;
  }
}

// Time-weighted slowdowns of the Alps study points' GEMMs beside a stand-in collective kernel
// (results/gpu/*/overlap-slowdown*.csv, written by benchmarks/gpu/overlap_slowdown.py on an H100 and
// an H200), one per run, point and setting, at the settings that stand for a step's collectives:
// 16-24 resident blocks moving 100 (inter-node) or 1000 GB/s (NVLink) of memory traffic.
std::vector<double> measured_overlap_slowdowns() {
  std::vector<double> slowdowns;
  for (const char* file : {"h100-sxm/overlap-slowdown.csv", "h200/overlap-slowdown-run1.csv",
                           "h200/overlap-slowdown-run2.csv"}) {
    const std::string path = std::string(WEAKSCALE_SOURCE_DIR) + "/results/gpu/" + file;
    std::ifstream csv(path);
    EXPECT_TRUE(csv) << path;
    std::string line;
    const auto read_line = [&csv](std::string& l) {  // Python's csv module ends lines with CRLF
      if (!std::getline(csv, l)) return false;
      if (!l.empty() && l.back() == '\r') l.pop_back();
      return true;
    };
    read_line(line);
    const std::vector<std::string> header = csv_cells(line);
    const auto column = [&header, &path](const std::string& name) {
      const auto it = std::find(header.begin(), header.end(), name);
      EXPECT_NE(it, header.end()) << path << ": no column " << name;
      return static_cast<std::size_t>(it - header.begin());
    };
    const std::size_t point = column("point"), kind = column("kind"), ctas = column("ctas"),
                      rate = column("target_gbps"), alone = column("alone_s"), overlapped = column("overlapped_s");
    std::map<std::tuple<std::string, int, int>, std::pair<double, double>> sums;  // alone, overlapped
    int gemms = 0;
    while (read_line(line)) {
      const std::vector<std::string> cells = csv_cells(line);
      EXPECT_EQ(cells.size(), header.size()) << path << ": " << line;
      if (cells.size() != header.size() || cells[kind] != "gemm") continue;
      ++gemms;
      const int blocks = std::stoi(cells[ctas]), gbps = std::stoi(cells[rate]);
      if ((blocks != 16 && blocks != 24) || (gbps != 100 && gbps != 1000)) continue;
      auto& [a, o] = sums[{cells[point], blocks, gbps}];
      a += std::stod(cells[alone]);
      o += std::stod(cells[overlapped]);
    }
    EXPECT_EQ(gemms, 45 * 16) << path;  // 45 GEMMs, 4 block counts x 4 rates
    EXPECT_EQ(sums.size(), 3u * 2u * 2u) << path;
    for (const auto& [key, time] : sums) slowdowns.push_back(time.second / time.first - 1);
  }
  return slowdowns;
}

// The compute slowdown under overlap is Lee et al.'s published average over four GPUs; on the die of
// Alps' GH200 (132 SMs, measured on the H100 and H200) the study's own GEMMs beside a collective's
// stand-in slow by an amount that must bracket it, and every file's uncertainty range must hold all
// of the measured values.
TEST(MachineFiles, ComputeSlowdownLiesInsideTheSlowdownsMeasuredOnHopper) {
  const std::vector<double> measured = measured_overlap_slowdowns();
  ASSERT_EQ(measured.size(), 36u);
  const auto [least, most] = std::minmax_element(measured.begin(), measured.end());
  EXPECT_GT(*least, 0.0);  // a resident collective never speeds the GEMMs up
  const Machine alps = load("alps");
  const double slowdown = alps.collective_libraries.front().compute_slowdown;
  EXPECT_GE(slowdown, *least);
  EXPECT_LE(slowdown, *most);
  for (const char* name : {"alps", "perlmutter", "frontier"}) {
    const Machine m = load(name);
    const auto range = std::find_if(m.uncertainty.begin(), m.uncertainty.end(), [](const UncertaintyRange& r) {
      return r.parameter == UncertainParameter::compute_slowdown;
    });
    ASSERT_NE(range, m.uncertainty.end()) << name;
    EXPECT_LE(range->low, *least) << name;
    EXPECT_GE(range->high, *most) << name;
  }
}

}  // namespace
}  // namespace ws
