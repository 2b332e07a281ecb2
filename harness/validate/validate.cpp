#include "harness/validate/validate.hpp"

#include "harness/validate/measured_runs.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <ostream>
#include <thread>

#include <fmt/format.h>

#include "harness/calibrate/gemm_probe.hpp"
#include "sim/compute/gemm_efficiency.hpp"
#include "base/input_error.hpp"
#include "sim/machine/machine_loader.hpp"
#include "harness/netns/netns_cluster.hpp"
#include "report/text_file.hpp"
#include "harness/validate/host_tracker.hpp"

namespace ws {
namespace {

void check_inputs(const ValidateOptions& o) {
  if (!std::filesystem::is_regular_file(o.machine_file)) {
    throw InputError(InputLocation{"", 0, "--machine"}, o.machine_file,
                     "an existing machine file (write one with `weakscale calibrate --out " + o.machine_file + "`)");
  }
  if (!std::filesystem::is_regular_file(o.engine.engine_executable)) {
    throw InputError(InputLocation{"", 0, "--engine"}, o.engine.engine_executable,
                     "the weakscale-engine executable (build the weakscale-engine target)");
  }
}

// The matrix's runs named in `ids` (all when empty); an unknown id is an input error listing them.
std::vector<ValidationRun> select_runs(std::vector<ValidationRun> runs, const std::vector<std::string>& ids) {
  if (ids.empty()) return runs;
  std::string known;
  for (const auto& r : runs) known += (known.empty() ? "" : ", ") + r.id;
  for (const auto& id : ids) {
    if (std::none_of(runs.begin(), runs.end(), [&](const ValidationRun& r) { return r.id == id; })) {
      throw InputError(InputLocation{"", 0, "--runs"}, id, "ids of the validation matrix: " + known);
    }
  }
  std::erase_if(runs, [&](const ValidationRun& r) { return std::find(ids.begin(), ids.end(), r.id) == ids.end(); });
  return runs;
}

int effective_ranks_max(int requested) {
  if (requested > 0) return requested;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::string percent(double fraction) { return fmt::format("{:+.1f} %", 100.0 * fraction); }

void print_run(const ValidationRecord& r, std::ostream& log) {
  std::string line = fmt::format("validate: {} {}: measured {:.4f} s ({:.2f} of a core)", r.run.id, describe(r.run),
                                 r.measured.step_s, r.measured.cpu_s / r.measured.step_s);
  if (r.measured.host_speed > 0) line += fmt::format(", host at {:.2f} of calibrated speed", r.measured.host_speed);
  if (r.simulated) {
    line += fmt::format(", simulated {:.4f} s ({})", r.simulated->step_s,
                        percent(relative_error(r.measured.step_s, r.simulated->step_s)));
  }
  if (r.simulated_on_file) {
    line += fmt::format(" [on the file as written: {:.4f} s ({})]", r.simulated_on_file->step_s,
                        percent(relative_error(r.measured.step_s, r.simulated_on_file->step_s)));
  }
  log << line << std::endl;
}

std::optional<std::filesystem::path> trace_file(const std::optional<std::filesystem::path>& dir,
                                                const ValidationRun& run, const char* side) {
  if (!dir) return std::nullopt;
  return *dir / fmt::format("{}-{}.json", run.id, side);
}

}  // namespace

std::size_t kept_try(const std::vector<PhaseTimes>& tries) {
  const auto fastest = std::min_element(tries.begin(), tries.end(),
                                        [](const PhaseTimes& a, const PhaseTimes& b) { return a.step_s < b.step_s; });
  return static_cast<std::size_t>(fastest - tries.begin());  // 0 for none: end() is begin()
}

double measure_host_speed(const Machine& machine) {
  constexpr int kSide = 512;
  GemmGrid grid;
  grid.shapes = {{kSide, kSide, kSide}};
  grid.repetitions = 5;
  const GemmMeasurements now = measure_gemm(grid);
  const double predicted = 2.0 * kSide * kSide * kSide / gemm_time(machine.device, Precision::fp32, kSide, kSide, kSide).seconds();
  return now.rates.empty() || predicted <= 0 ? 0.0 : now.rates.front().best_flops() / predicted;
}

std::vector<ValidationRecord> validate_runs(const std::vector<ValidationRun>& runs, const EngineRunner& engine,
                                            const StepSimulator& simulate,
                                            const std::optional<std::filesystem::path>& trace_dir, std::ostream& log,
                                            const HostSpeedProbe& host_speed, int repeat, HostTracker* tracker) {
  if (trace_dir) std::filesystem::create_directories(*trace_dir);
  std::vector<ValidationRecord> records;
  for (const auto& run : runs) {
    if (tracker) tracker->pass();
    // Every repetition writes its own trace; the fastest one's is kept under the run's name.
    std::vector<PhaseTimes> tries;
    std::vector<std::optional<std::filesystem::path>> traces;
    for (int i = 0; i < std::max(repeat, 1); ++i) {
      const double speed = host_speed ? host_speed() : 0.0;
      auto trace = trace_file(trace_dir, run, "engine");
      if (trace && repeat > 1) trace->replace_filename(fmt::format("{}-engine-try{}.json", run.id, i + 1));
      tries.push_back(measure_run(engine, run, trace));
      tries.back().host_speed = speed;
      traces.push_back(trace);
      if (tracker) tracker->pass();
    }
    const std::size_t kept = kept_try(tries);
    for (std::size_t i = 0; i < traces.size(); ++i) {
      if (!traces[i] || traces.size() == 1) continue;
      if (i == kept) {
        std::filesystem::rename(*traces[i], *trace_file(trace_dir, run, "engine"));
      } else {
        std::filesystem::remove(*traces[i]);
      }
    }
    ValidationRecord r{run, tries[kept], std::nullopt, std::nullopt};
    if (tracker) {
      const Machine tracked = tracker->take_machine();
      if (tracked.node.devices > 1)
        log << fmt::format("validate: {} tracked: a core with all {} busy ran at {:.2f} of one alone (the file: {:.2f})",
                           run.id, tracked.node.devices, tracked.device.busy_node_compute,
                           tracker->file_machine().device.busy_node_compute)
            << std::endl;
      r.simulated = make_step_simulator(tracked)(run, trace_file(trace_dir, run, "simulated"));
      if (simulate) r.simulated_on_file = simulate(run, std::nullopt);
    } else if (simulate) {
      r.simulated = simulate(run, trace_file(trace_dir, run, "simulated"));
    }
    print_run(r, log);
    records.push_back(std::move(r));
  }
  return records;
}

namespace {

// --measured: runs made elsewhere, read from the engine's CSV rows, simulated on the machine file.
ValidationReport validate_measured(const ValidateOptions& o, std::ostream& log) {
  if (!std::filesystem::is_regular_file(o.machine_file)) {
    throw InputError(InputLocation{"", 0, "--machine"}, o.machine_file,
                     "an existing machine file of the system the runs were made on");
  }
  const auto start = std::chrono::steady_clock::now();
  const Machine machine = load_machine(o.machine_file);
  const StepSimulator simulate = make_step_simulator(machine);
  const std::vector<MeasuredRun> runs = read_measured_runs(o.measured);
  std::string files;
  for (const auto& f : o.measured) files += (files.empty() ? "" : ", ") + f.string();
  log << fmt::format("validate: {} runs measured elsewhere ({}), simulated on machine {} ({})", runs.size(), files,
                     machine.name, o.machine_file)
      << std::endl;
  ValidationReport report;
  for (const MeasuredRun& m : runs) {
    if (m.run.ranks() > machine.total_devices()) {
      throw InputError(InputLocation{o.machine_file, 0, "nodes"}, std::to_string(machine.total_devices()),
                       fmt::format("a machine with the {} ranks of run {} ({})", m.run.ranks(), m.run.id,
                                   describe(m.run)));
    }
    ValidationRecord r{m.run, m.measured, simulate(m.run, std::nullopt), std::nullopt};
    log << fmt::format("validate: {} {}: measured {:.4f} s, simulated {:.4f} s ({:+.1f} %)", r.run.id,
                       describe(r.run), r.measured.step_s, r.simulated->step_s,
                       100.0 * relative_error(r.measured.step_s, r.simulated->step_s))
        << std::endl;
    report.records.push_back(std::move(r));
  }
  report.errors = summarize_errors(report.records);
  report.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.provenance = ValidationProvenance{o.command_line, machine.name, o.machine_file, program_commit(),
                                           0,  // the measuring hosts' cores are not in the CSV
                                           report.wall_s, median_core_share(report.records), 0.0,
                                           "measured elsewhere: " + files, 1, false};
  return report;
}

}  // namespace

ValidationReport validate(const ValidateOptions& o, std::ostream& log) {
  if (!o.measured.empty()) return validate_measured(o, log);
  check_inputs(o);
  const auto start = std::chrono::steady_clock::now();
  const Machine machine = load_machine(o.machine_file);
  const StepSimulator simulate = make_step_simulator(machine);
  const auto runs = select_runs(validation_matrix(MatrixOptions{effective_ranks_max(o.ranks_max), o.quick}), o.only_runs);
  const int repeat = std::max(o.repeat, 1);
  log << fmt::format("validate: {} configurations x {} engine runs (the fastest kept), machine {} ({})", runs.size(),
                     repeat, machine.name, o.machine_file)
      << std::endl;

  EngineRunner engine = o.engine;
  std::optional<ShapedNetwork> network;
  if (!o.netns_rate && machine.node.devices == 1 && machine.nodes > 1) {
    // Without namespaces the ranks share memory; a file of one-rank nodes would price a network.
    throw InputError(InputLocation{o.machine_file, 0, "node.devices"}, "1",
                     "a machine file of this host's shared memory (`weakscale calibrate` without --netns-rate), or "
                     "--netns-rate as the file was calibrated with");
  }
  if (o.netns_rate) {
    if (machine.node.devices != 1) {
      throw InputError(InputLocation{o.machine_file, 0, "node.devices"}, std::to_string(machine.node.devices),
                       "1 with --netns-rate: a machine file written by `weakscale calibrate --netns-rate` (one "
                       "node per rank)");
    }
    int most_ranks = 1;
    for (const auto& run : runs) most_ranks = std::max(most_ranks, run.ranks());
    network.emplace(ShapedNetworkSpec{most_ranks, *o.netns_rate, ""}, o.netns_exec_executable);
    engine.launcher = network->launcher();
    log << "validate: network: " << network->describe() << std::endl;
  }

  std::optional<HostTracker> tracker;
  if (o.track_host) {
    const GemmGrid grid = o.quick ? quick_gemm_grid() : default_gemm_grid();
    log << fmt::format("validate: tracking this host's compute: a pass over the calibration's {} GEMM shapes and "
                       "element-wise kernels (and, where the file's ranks share this host, sgemm 512^3 on all its "
                       "cores at once: busy_node_compute) before each configuration and after each run; each "
                       "configuration is simulated on the file's machine with the compute of its fastest pass "
                       "per probe (--no-track-host: the file alone)",
                       grid.shapes.size())
        << std::endl;
    tracker.emplace(machine, grid, o.quick ? quick_elementwise_shapes() : default_elementwise_shapes());
  }

  ValidationReport report;
  report.records = validate_runs(runs, engine, simulate, o.trace_dir, log,
                                 [&machine] { return measure_host_speed(machine); }, repeat,
                                 tracker ? &*tracker : nullptr);
  report.errors = summarize_errors(report.records);
  report.errors_on_file = summarize_errors_on_file(report.records);
  report.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.provenance = ValidationProvenance{o.command_line, machine.name, o.machine_file, program_commit(),
                                           std::thread::hardware_concurrency(), report.wall_s,
                                           median_core_share(report.records), median_host_speed(report.records),
                                           network ? network->describe() : "shared memory (Open MPI's defaults)",
                                           repeat, o.track_host};
  return report;
}

}  // namespace ws
