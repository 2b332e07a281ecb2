#include "harness/validate/host_tracker.hpp"

#include <algorithm>
#include <utility>

#include "harness/calibrate/calibrated_machine.hpp"

namespace ws {

HostTracker::HostTracker(Machine file_machine, GemmGrid grid, ElementwiseShapes shapes)
    : file_machine_(std::move(file_machine)), gemm_(std::move(grid)), elementwise_(shapes) {
  probes_ = gemm_.probes();
  gemm_probes_ = probes_.size();
  for (auto& p : elementwise_.probes()) probes_.push_back(std::move(p));
  for (const auto& p : probes_) p();  // warm-up, not counted
  samples_.resize(probes_.size());
}

void HostTracker::pass() {
  for (std::size_t i = 0; i < probes_.size(); ++i) samples_[i].push_back(probes_[i]());
  // The file's ranks share one host: how fast a core computes with all of them busy drifts too.
  if (file_machine_.node.devices > 1)
    busy_node_.push_back(measure_busy_node_gemm(kBusySide, file_machine_.node.devices, kBusyRepetitions));
}

double fastest_pass_seconds(const std::vector<double>& seconds) {
  return seconds.empty() ? 0.0 : *std::min_element(seconds.begin(), seconds.end());
}

double fastest_busy_node_share(const std::vector<BusyNodeGemm>& passes) { return fastest_busy_node(passes).share(); }

int HostTracker::passes() const { return samples_.empty() ? 0 : static_cast<int>(samples_.front().size()); }

Machine HostTracker::take_machine() {
  if (passes() == 0) return file_machine_;
  std::vector<double> seconds;
  for (auto& s : samples_) {
    seconds.push_back(fastest_pass_seconds(s));
    s.clear();
  }
  const auto split = seconds.begin() + static_cast<std::ptrdiff_t>(gemm_probes_);
  Machine tracked = with_measured_compute(file_machine_, gemm_.measurements({seconds.begin(), split}, 0),
                                          elementwise_.measurements({split, seconds.end()}, 0));
  if (!busy_node_.empty()) {
    tracked.device.busy_node_compute = fastest_busy_node_share(busy_node_);
    busy_node_.clear();
  }
  return tracked;
}

}  // namespace ws
