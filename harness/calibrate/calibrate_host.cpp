#include "harness/calibrate/calibrate_host.hpp"

#include "harness/calibrate/alpha_beta_fit.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <ostream>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace ws {
namespace {

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm parts{};
  ::gmtime_r(&now, &parts);
  char text[32] = {};
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

}  // namespace

Calibration calibrate_host(const CalibrateOptions& options, std::ostream& progress) {
  Calibration c;
  c.machine_name = options.machine_name;
  c.command_line = options.command_line;
  c.note = options.note;
  c.date_utc = utc_now();
  c.host = read_host_facts();
  const int ranks = options.ranks > 0 ? options.ranks : std::max(c.host.cores, 2);

  const GemmGrid grid = options.quick ? quick_gemm_grid() : default_gemm_grid();
  const ElementwiseShapes shapes = options.quick ? quick_elementwise_shapes() : default_elementwise_shapes();
  progress << fmt::format("calibrate: GEMM ({} shapes x 3 variants) and element-wise kernels (GELU, layer norm, "
                          "attention, cross-entropy) on one core, {} interleaved passes...",
                          grid.shapes.size(), grid.repetitions)
           << std::endl;
  {
    // One pass times every GEMM and every kernel once, so all figures share the host's drift.
    const auto start = std::chrono::steady_clock::now();
    GemmGridProbes gemm(grid);
    ElementwiseProbes elementwise(shapes);
    std::vector<TimedProbe> probes = gemm.probes();
    const std::size_t gemm_probes = probes.size();
    for (auto& p : elementwise.probes()) probes.push_back(std::move(p));
    const auto seconds = interleaved_median_seconds(probes, grid.repetitions);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const auto split = seconds.begin() + static_cast<std::ptrdiff_t>(gemm_probes);
    c.gemm = gemm.measurements({seconds.begin(), split}, wall);
    c.elementwise = elementwise.measurements({split, seconds.end()}, wall);
    c.elementwise.shapes.repetitions = grid.repetitions;
  }
  // busy_node_compute in passes spread over the calibration, the fastest kept as validate's tracker
  // keeps them: one pass on a fresh 2-core VM measured 0.52 where the tracker measured 0.96-1.00
  // around every run minutes later (results/validation-stop51).
  const int busy_side = options.quick ? 128 : 512;
  const int busy_repetitions = options.quick ? 1 : 5;
  std::vector<BusyNodeGemm> busy_passes;
  const auto measure_busy_node = [&] {
    busy_passes.push_back(measure_busy_node_gemm(busy_side, c.host.cores, busy_repetitions));
  };
  progress << fmt::format("calibrate: GEMM {}^3 alone and on all {} cores at once (the first of {} passes)...",
                          busy_side, c.host.cores, options.quick ? 1 : 3)
           << std::endl;
  measure_busy_node();
  progress << fmt::format("calibrate: spread and jitter of the cores' speed, GEMM 256^3 on all {} cores at once...",
                          c.host.cores)
           << std::endl;
  // The spread in passes spread over the calibration too, the quietest kept.
  std::vector<CoreVariability> variability_passes;
  const auto measure_variability = [&] {
    variability_passes.push_back(
        measure_core_variability(options.quick ? 128 : 256, c.host.cores, options.quick ? 3 : 100));
  };
  measure_variability();
  if (!options.quick) measure_busy_node();

  // Arrays of 4x the last-level cache (at least 64 MiB) so the triad streams from DRAM.
  const double array_bytes =
      options.quick ? 4.0 * 1024 * 1024 : std::max(4.0 * c.host.last_level_cache_bytes, 64.0 * 1024 * 1024);
  progress << fmt::format("calibrate: memory bandwidth, 3 arrays of {:.0f} MiB...", array_bytes / 1048576.0)
           << std::endl;
  c.memory = measure_memory_bandwidth(array_bytes, c.host.cores, options.quick ? 2 : 10);
  if (!options.quick) {
    measure_busy_node();
    measure_variability();
  }
  c.busy_node = fastest_busy_node(busy_passes);

  progress << fmt::format("calibrate: MPI ping-pong and collectives on {} ranks...", ranks) << std::endl;
  for (int attempt = 1;; ++attempt) {
    c.mpi = measure_mpi(MpiProbeOptions{options.mpi_probe_executable, "mpirun", ranks, options.quick, options.launcher});
    if (!options.shaped_rate) break;
    const Bandwidth fitted = fit_alpha_beta(c.mpi.ping_pong).bandwidth;
    if (!faster_than_shaped(fitted, *options.shaped_rate)) break;
    const std::string what = fmt::format(
        "the ping-pong fits {:.3f} GB/s over links shaped to {:.3f} GB/s (more than {:.0f}x): the timed messages rode "
        "the token bucket's burst",
        fitted.bytes_per_s() * 1e-9, options.shaped_rate->bytes_per_s() * 1e-9, kShapedFitSlack);
    if (attempt == kShapedProbeTries) {
      throw std::runtime_error(fmt::format("calibrate: {} in {} tries; run it again on an idle host", what, attempt));
    }
    progress << "calibrate: " << what << "; measuring again" << std::endl;
  }
  // A third pass of the spread after the MPI probes, minutes into the calibration.
  if (!options.quick) measure_variability();
  c.variability = quietest_variability(std::move(variability_passes));
  c.shaped_network = options.shaped_network;
  return c;
}

bool faster_than_shaped(Bandwidth fitted, Bandwidth rate) {
  return fitted.bytes_per_s() > kShapedFitSlack * rate.bytes_per_s();
}

}  // namespace ws
