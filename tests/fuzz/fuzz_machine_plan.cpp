// Fuzz target: machine files through to a flow plan, not only to the parser. A file the loader
// accepts must carry a small job: one collective of each kind (the phases model, the library's
// algorithm) and the flow evaluator's plan of a tiny model, for a few device counts the machine
// holds. Refusals are InputError (a machine too small for a job is one); every time and bandwidth
// is finite and non-negative; any other exception (an InternalError above all), a crash or a hang
// is a bug. Machines with more than 64 devices per node are skipped, and jobs have at most 16.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/input_error.hpp"
#include "sim/machine/machine_loader.hpp"
#include "sim/pricing/collective_job.hpp"
#include "sim/study/model_input.hpp"
#include "sim/study/point_evaluation.hpp"

namespace {

constexpr int kMaxNodeDevices = 64;
constexpr int kMaxJobDevices = 16;

void expect(bool condition, const char* what, double value, int devices) {
  if (condition) return;
  std::fprintf(stderr, "fuzz_machine_plan: %s = %g on %d devices\n", what, value, devices);
  std::abort();
}

void expect_time(ws::Time t, const char* what, int devices) {
  expect(std::isfinite(t.seconds()) && t.seconds() >= 0, what, t.seconds(), devices);
}

// The job sizes tried: one device, two, a node (or as much of one as a job may have), and the
// largest job allowed; only those the machine holds.
std::vector<int> job_sizes(const ws::Machine& machine) {
  const int most = std::min(machine.total_devices(), kMaxJobDevices);
  std::vector<int> sizes;
  for (int d : {1, 2, machine.node.devices, most}) {
    if (d >= 1 && d <= most && std::find(sizes.begin(), sizes.end(), d) == sizes.end()) sizes.push_back(d);
  }
  return sizes;
}

void run_collectives(const ws::Machine& machine, int devices) {
  for (ws::CollectiveOp op : {ws::CollectiveOp::all_reduce, ws::CollectiveOp::reduce_scatter,
                              ws::CollectiveOp::all_gather}) {
    ws::CollectiveJobSpec spec;
    spec.op = op;
    spec.bytes = 1 << 20;
    spec.devices = devices;
    try {
      const ws::CollectiveJobReport r = ws::run_collective_job(machine, spec);
      expect_time(r.time, "collective time", devices);
      expect(std::isfinite(r.algbw_gbps) && r.algbw_gbps >= 0, "algbw_gbps", r.algbw_gbps, devices);
      expect(std::isfinite(r.busbw_gbps) && r.busbw_gbps >= 0, "busbw_gbps", r.busbw_gbps, devices);
      for (const ws::PhaseUsage& p : r.phases) expect_time(p.time, "phase time", devices);
    } catch (const ws::InputError&) {
    }
  }
}

// The flow evaluator as `weakscale plan --evaluator flow` runs it: the closed form ranks every
// layout, the fastest two are simulated on the flow network and re-ranked.
void run_flow_plan(const ws::Machine& machine, int devices) {
  const ws::ModelSpec model = ws::custom_model({2, 64, 4, 32, 256}, ws::InputLocation{});
  const ws::StudyPoint point{devices, model, ws::Batch{devices}, 0, std::nullopt};
  try {
    const ws::PointEvaluation e = ws::evaluate_point_simulated(machine, point, ws::StepOptions{}, 2, 2);
    for (const ws::LayoutEstimate& c : e.candidates) {
      expect_time(c.step.compute, "step compute", devices);
      expect_time(c.step.exposed_x, "step exposed_x", devices);
      expect_time(c.step.exposed_y, "step exposed_y", devices);
      expect_time(c.step.exposed_z, "step exposed_z", devices);
      expect_time(c.step.exposed_data, "step exposed_data", devices);
      expect_time(c.step.skew, "step skew", devices);
      expect_time(c.analytic_step, "closed-form step", devices);
      expect(c.step.total().seconds() > 0, "step time", c.step.total().seconds(), devices);
      expect(std::isfinite(c.hardware_peak_fraction) && c.hardware_peak_fraction >= 0, "hardware peak fraction",
             c.hardware_peak_fraction, devices);
    }
  } catch (const ws::InputError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ws::Machine machine;
  try {
    machine = ws::parse_machine(text, "fuzz.yaml");
  } catch (const ws::InputError&) {
    return 0;
  }
  if (machine.node.devices > kMaxNodeDevices) return 0;
  // Collectives at every size; the flow plan (the costlier half) at the largest only, so that one
  // input stays well under the fuzzer's 10 s timeout under ASan.
  const std::vector<int> sizes = job_sizes(machine);
  for (int devices : sizes) run_collectives(machine, devices);
  if (!sizes.empty()) run_flow_plan(machine, sizes.back());
  return 0;
}
