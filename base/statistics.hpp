// Small summaries of measured samples, shared by the probes and the reports.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace ws {

// The middle value (the mean of the two middle ones for an even count); 0 for no samples.
inline double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

// Sample standard deviation over the mean (n - 1 in the variance); 0 for fewer than two samples or
// a zero mean.
inline double coefficient_of_variation(const std::vector<double>& values) {
  if (values.size() < 2) return 0.0;
  double mean = 0.0;
  for (const double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  if (mean == 0.0) return 0.0;
  double squares = 0.0;
  for (const double v : values) squares += (v - mean) * (v - mean);
  return std::sqrt(squares / static_cast<double>(values.size() - 1)) / std::abs(mean);
}

// Expected maximum of n independent standard normal variables (0 for n <= 1): how far the slowest
// of n members lags their mean, in standard deviations. Numerical integration of
// x n phi(x) Phi(x)^(n-1) (trapezoid, 4,000 intervals), accurate to 1e-6 for n up to 10^6.
inline double expected_max_of_normals(int n) {
  if (n <= 1) return 0.0;
  const double lo = -8.0, hi = 8.0 + std::sqrt(2.0 * std::log(static_cast<double>(n)));
  constexpr int kIntervals = 4000;
  const double h = (hi - lo) / kIntervals;
  double sum = 0.0;
  for (int i = 0; i <= kIntervals; ++i) {
    const double x = lo + h * i;
    const double phi = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
    const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
    const double f = x * n * phi * std::pow(cdf, n - 1);
    sum += (i == 0 || i == kIntervals) ? 0.5 * f : f;
  }
  return sum * h;
}

}  // namespace ws
