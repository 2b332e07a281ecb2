#include "harness/published/published_collectives.hpp"

#include "base/ordered_tasks.hpp"
#include "sim/study/uncertainty.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/collectives/flow_schedule.hpp"
#include "sim/net/flow_network.hpp"
#include "base/input_error.hpp"
#include "base/quantity.hpp"
#include "sim/machine/machine_loader.hpp"
#include "base/statistics.hpp"

namespace ws {
namespace {

// osu_bw between device 0 of two nodes: a window of messages, all in flight at once, through the
// MPI library's point-to-point path: no collective launch or step latency, the NIC's large-message
// efficiency and small-message overhead (NicEfficiencyCurve).
CollectiveComparison point_to_point(const Machine& machine, const PublishedCollective& row) {
  const Topology topology = build_topology(machine, 2);
  FlowNetwork network(topology);
  FlowSchedule schedule;
  schedule.devices = {0, machine.node.devices};
  for (int i = 0; i < kPointToPointWindow; ++i) schedule.add_send(0, 1, row.bytes, {});
  const CollectiveLibrary mpi{"mpi point-to-point", Time::zero(), Time::zero(),
                              machine.node.nic_efficiency.large_message_efficiency};
  const WireModel wire{mpi.bandwidth_efficiency, machine.node.nic_efficiency.half_bandwidth_bytes};
  const std::vector<FlowSchedule> schedules{schedule};
  const auto result = run_flow_schedules(network, schedules, mpi, wire).front();
  CollectiveComparison c;
  c.algorithm = "point-to-point";
  c.predicted_time_us = result.end.us();
  c.predicted_busbw_gbps = static_cast<double>(row.bytes) * kPointToPointWindow / result.end.seconds() * 1e-9;
  return c;
}

}  // namespace

namespace {
// The row's busbw on every draw of its machine's ranges: its band around the row's prediction.
void price_band(const std::vector<Machine>& draws, const PublishedCollective& row, CollectiveComparison& c) {
  if (draws.empty()) return;
  std::vector<double> busbw;
  for (const Machine& draw : draws) {
    const PublishedRowModel model(draw, row);
    for (const auto& l : draw.collective_libraries)
      if (l.name == row.library) busbw.push_back(model.busbw_gbps(l));
  }
  if (busbw.empty()) return;
  const PredictionBand band = prediction_band(busbw, c.predicted_busbw_gbps);
  c.band_low_gbps = band.low;
  c.band_high_gbps = band.high;
  c.draws_low_gbps = band.draws_low;
  c.draws_high_gbps = band.draws_high;
}
}  // namespace

BandCoverage band_coverage(const std::vector<CollectiveComparison>& comparisons, const std::string& machine,
                           const std::string& library) {
  BandCoverage coverage;
  for (const auto& c : comparisons) {
    if (!machine.empty() && (c.published.machine != machine || c.published.library != library)) continue;
    if (!c.band_low_gbps || !c.band_high_gbps) continue;
    ++coverage.rows;
    if (*c.band_low_gbps <= c.published.busbw_gbps && c.published.busbw_gbps <= *c.band_high_gbps) ++coverage.inside;
    if (*c.draws_low_gbps <= c.published.busbw_gbps && c.published.busbw_gbps <= *c.draws_high_gbps)
      ++coverage.inside_draws;
  }
  return coverage;
}

PublishedComparison compare_with_published(const std::vector<PublishedCollective>& rows,
                                           const std::string& machines_dir, int band_samples, int jobs) {
  std::map<std::string, Machine> machines;
  std::map<std::string, std::vector<Machine>> draws;  // kBandSamples draws of each machine's ranges, seed 1
  PublishedComparison out;
  const PublishedFit fit = fit_published(rows, machines_dir);
  out.libraries = fit.libraries;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    auto it = machines.find(row.machine);
    if (it == machines.end()) it = machines.emplace(row.machine, load_machine_by_name(row.machine, machines_dir)).first;
    const Machine& machine = it->second;
    auto drawn = draws.find(row.machine);
    if (drawn == draws.end()) {
      std::vector<Machine> samples;
      if (!machine.uncertainty.empty())
        for (int s = 0; s < band_samples; ++s) samples.push_back(sampled_machine(machine, 1, s));
      drawn = draws.emplace(row.machine, std::move(samples)).first;
    }
    CollectiveComparison c;
    if (row.op == "point-to-point") {
      c = point_to_point(machine, row);
      c.fitted_busbw_gbps = c.kfold_busbw_gbps = c.predicted_busbw_gbps;
    } else {
      const PublishedRowModel model(machine, row);
      const CollectiveLibrary* library = nullptr;
      for (const auto& l : machine.collective_libraries)
        if (l.name == row.library) library = &l;
      c.algorithm = model.algorithm(*library);
      c.predicted_busbw_gbps = model.busbw_gbps(*library);
      c.predicted_time_us = model.time(*library).us();
      c.fitted_busbw_gbps = fit.rows[i].fitted_busbw_gbps;
      c.kfold_busbw_gbps = fit.rows[i].kfold_busbw_gbps;
      c.scale_busbw_gbps = fit.rows[i].scale_busbw_gbps;
      c.kfold_written_terms = fit.rows[i].kfold_written_terms;
      c.scale_written_terms = fit.rows[i].scale_written_terms;
      c.ceiling_busbw_gbps = model.ceiling_busbw_gbps(*library);
      c.best_ceiling_busbw_gbps = model.best_ceiling_busbw_gbps();
    }
    c.published = row;
    c.relative_error = (c.predicted_busbw_gbps - row.busbw_gbps) / row.busbw_gbps;
    out.rows.push_back(std::move(c));
  }
  // The bands, row by row on `jobs` threads (each row's draws are independent of the others').
  for_each_ordered<CollectiveComparison>(
      out.rows.size(), jobs,
      [&](std::size_t i, int) {
        CollectiveComparison c = out.rows[i];
        if (c.published.op != "point-to-point") price_band(draws.at(c.published.machine), c.published, c);
        return c;
      },
      [&](std::size_t i, CollectiveComparison&& c) { out.rows[i] = std::move(c); });
  return out;
}

ConsistencyFloor consistency_floor(const std::vector<CollectiveComparison>& comparisons, const std::string& machine,
                                   const std::string& library) {
  ConsistencyFloor floor;
  for (std::size_t i = 0; i < comparisons.size(); ++i) {
    const auto& a = comparisons[i];
    if (!machine.empty() && (a.published.machine != machine || a.published.library != library)) continue;
    if (a.published.op == "point-to-point") continue;
    for (std::size_t j = i + 1; j < comparisons.size(); ++j) {
      const auto& b = comparisons[j];
      if (!same_job(a.published, b.published) || b.algorithm != a.algorithm ||
          !alike(a.predicted_busbw_gbps, b.predicted_busbw_gbps) ||
          !alike(a.fitted_busbw_gbps, b.fitted_busbw_gbps))
        continue;
      const double lo = std::min(a.published.busbw_gbps, b.published.busbw_gbps);
      const double hi = std::max(a.published.busbw_gbps, b.published.busbw_gbps);
      const double gap = (hi - lo) / (hi + lo);
      if (gap > floor.worst_abs_error) {
        floor.worst_abs_error = gap;
        const bool a_low = a.published.busbw_gbps <= b.published.busbw_gbps;
        floor.low_row = a_low ? i : j;
        floor.high_row = a_low ? j : i;
      }
    }
  }
  return floor;
}

CeilingCount count_above_ceiling(const std::vector<CollectiveComparison>& comparisons, const std::string& machine,
                                 const std::string& library) {
  CeilingCount count;
  for (const auto& c : comparisons) {
    if (!machine.empty() && (c.published.machine != machine || c.published.library != library)) continue;
    if (!c.ceiling_busbw_gbps) continue;
    ++count.rows;
    if (c.published.busbw_gbps > *c.ceiling_busbw_gbps) ++count.above_ceiling;
    if (c.published.busbw_gbps > *c.best_ceiling_busbw_gbps) ++count.above_best_ceiling;
  }
  return count;
}

ComparisonSummary summarize(const std::vector<CollectiveComparison>& comparisons, ComparisonScheme scheme) {
  ComparisonSummary s;
  std::vector<double> errors;
  for (std::size_t i = 0; i < comparisons.size(); ++i) {
    const auto& c = comparisons[i];
    double predicted = c.predicted_busbw_gbps;
    if (scheme == ComparisonScheme::in_sample) predicted = c.fitted_busbw_gbps;
    if (scheme == ComparisonScheme::kfold || scheme == ComparisonScheme::kfold_own) {
      if (scheme == ComparisonScheme::kfold_own && !c.kfold_written_terms.empty()) continue;
      predicted = c.kfold_busbw_gbps;
    }
    if (scheme == ComparisonScheme::scale || scheme == ComparisonScheme::scale_own) {
      if (!c.scale_busbw_gbps || (scheme == ComparisonScheme::scale_own && !c.scale_written_terms.empty())) continue;
      predicted = *c.scale_busbw_gbps;
    }
    const double e = std::abs(predicted / c.published.busbw_gbps - 1.0);
    errors.push_back(e);
    ++s.rows;
    if (e > s.worst_abs_error) {
      s.worst_abs_error = e;
      s.worst_row = i;
    }
  }
  if (errors.empty()) return s;
  s.median_abs_error = median(errors);
  return s;
}

}  // namespace ws
