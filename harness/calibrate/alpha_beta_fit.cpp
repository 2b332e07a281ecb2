#include "harness/calibrate/alpha_beta_fit.hpp"


#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace ws {
namespace {

struct LinearFit {
  Eigen::VectorXd coefficients;
  double max_relative_residual = 0;
};

// Minimises sum_i ((features_i . x - t_i) / t_i)^2 subject to x_j >= 0 for the columns marked
// `non_negative`. With at most a few such columns, trying every subset of them pinned at zero and
// keeping the best feasible solution is exact and simpler than an active-set solver.
LinearFit relative_least_squares(const Eigen::MatrixXd& features, const Eigen::VectorXd& times,
                                 const std::vector<bool>& non_negative) {
  const auto columns = static_cast<int>(features.cols());
  std::vector<int> clampable;
  for (int j = 0; j < columns; ++j) {
    if (non_negative[static_cast<std::size_t>(j)]) clampable.push_back(j);
  }
  Eigen::MatrixXd weighted = features;
  for (Eigen::Index i = 0; i < features.rows(); ++i) weighted.row(i) /= times(i);
  const Eigen::VectorXd ones = Eigen::VectorXd::Ones(features.rows());

  LinearFit best;
  double best_cost = std::numeric_limits<double>::infinity();
  const unsigned subsets = 1U << clampable.size();
  for (unsigned pinned = 0; pinned < subsets; ++pinned) {
    std::vector<int> free_columns;
    for (int j = 0; j < columns; ++j) {
      const auto it = std::find(clampable.begin(), clampable.end(), j);
      const bool is_pinned =
          it != clampable.end() && ((pinned >> static_cast<unsigned>(it - clampable.begin())) & 1U) != 0;
      if (!is_pinned) free_columns.push_back(j);
    }
    if (free_columns.empty()) continue;
    Eigen::MatrixXd reduced(weighted.rows(), static_cast<Eigen::Index>(free_columns.size()));
    for (std::size_t c = 0; c < free_columns.size(); ++c) {
      reduced.col(static_cast<Eigen::Index>(c)) = weighted.col(free_columns[c]);
    }
    const Eigen::VectorXd solution = reduced.colPivHouseholderQr().solve(ones);
    Eigen::VectorXd x = Eigen::VectorXd::Zero(columns);
    for (std::size_t c = 0; c < free_columns.size(); ++c) x(free_columns[c]) = solution(static_cast<Eigen::Index>(c));
    bool feasible = true;
    for (int j : clampable) feasible = feasible && x(j) >= 0.0;
    if (!feasible) continue;
    const Eigen::VectorXd residual = weighted * x - ones;
    const double cost = residual.squaredNorm();
    // Strictly better only: with exact data the unpinned (first) subset wins ties.
    if (cost < best_cost * (1.0 - 1e-12)) {
      best_cost = cost;
      best.coefficients = x;
      best.max_relative_residual = residual.cwiseAbs().maxCoeff();
    }
  }
  if (!std::isfinite(best_cost)) throw std::invalid_argument("alpha-beta fit: no feasible solution");
  return best;
}

void check_times(double seconds, double bytes) {
  if (!(seconds > 0.0) || !std::isfinite(seconds) || bytes < 0.0) {
    throw std::invalid_argument("alpha-beta fit: every sample needs seconds > 0 and bytes >= 0");
  }
}

}  // namespace

AlphaBeta fit_alpha_beta(const std::vector<TimedTransfer>& samples) {
  double smallest = std::numeric_limits<double>::infinity(), largest = 0;
  for (const auto& s : samples) {
    check_times(s.seconds, s.bytes);
    smallest = std::min(smallest, s.bytes);
    largest = std::max(largest, s.bytes);
  }
  if (samples.size() < 2 || !(largest > smallest)) {
    throw std::invalid_argument("alpha-beta fit: needs samples at two or more message sizes");
  }
  const auto rows = static_cast<Eigen::Index>(samples.size());
  Eigen::MatrixXd features(rows, 2);
  Eigen::VectorXd times(rows);
  for (Eigen::Index i = 0; i < rows; ++i) {
    const auto& s = samples[static_cast<std::size_t>(i)];
    features(i, 0) = 1.0;
    features(i, 1) = s.bytes;
    times(i) = s.seconds;
  }
  const LinearFit fit = relative_least_squares(features, times, {true, false});
  const double seconds_per_byte = fit.coefficients(1);
  if (!(seconds_per_byte > 0.0)) {
    throw std::invalid_argument("alpha-beta fit: time does not grow with message size (bandwidth <= 0)");
  }
  AlphaBeta out;
  out.latency = Time::from_seconds(fit.coefficients(0));
  out.bandwidth = Bandwidth::from_bytes_per_s(1.0 / seconds_per_byte);
  out.max_relative_residual = fit.max_relative_residual;
  return out;
}

}  // namespace ws
