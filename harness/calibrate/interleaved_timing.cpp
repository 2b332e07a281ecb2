#include "harness/calibrate/interleaved_timing.hpp"

#include <algorithm>

#include "base/statistics.hpp"

namespace ws {

std::vector<double> interleaved_median_seconds(const std::vector<TimedProbe>& probes, int passes) {
  for (const auto& probe : probes) probe();
  std::vector<std::vector<double>> samples(probes.size());
  for (int pass = 0; pass < std::max(passes, 1); ++pass) {
    for (std::size_t i = 0; i < probes.size(); ++i) samples[i].push_back(probes[i]());
  }
  std::vector<double> medians;
  medians.reserve(probes.size());
  for (const auto& s : samples) medians.push_back(median(s));
  return medians;
}

}  // namespace ws
