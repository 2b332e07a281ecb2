// Small summaries of measured samples, shared by the probes and the reports.
#pragma once

#include <algorithm>
#include <vector>

namespace ws {

// The middle value (the mean of the two middle ones for an even count); 0 for no samples.
inline double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

}  // namespace ws
