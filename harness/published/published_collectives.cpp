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
#include "base/output_file.hpp"
#include "report/csv.hpp"
#include "report/gnuplot.hpp"

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
// The row's busbw on every draw of its machine's ranges: the 10th and 90th percentile.
void price_band(const std::vector<Machine>& draws, const PublishedCollective& row, CollectiveComparison& c) {
  if (draws.empty()) return;
  std::vector<double> busbw;
  for (const Machine& draw : draws) {
    const PublishedRowModel model(draw, row);
    for (const auto& l : draw.collective_libraries)
      if (l.name == row.library) busbw.push_back(model.busbw_gbps(l));
  }
  if (busbw.empty()) return;
  c.band_low_gbps = percentile(busbw, 0.1);
  c.band_high_gbps = percentile(busbw, 0.9);
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

std::filesystem::path write_fit_csv(const PublishedComparison& comparison, const std::filesystem::path& out_dir) {
  const auto path = out_dir / "collectives-fit.csv";
  std::ostringstream out;
  out << "machine,library,rows,launch_us_file,step_us_file,efficiency_file,launch_us_fit,step_us_fit,efficiency_fit,"
         "overhead_per_step_us_fit,ll_step_us_fit,ll_efficiency_fit,ll128_step_us_fit,ll128_efficiency_fit,"
         "eager_per_step_us_fit,"
         "median_error_file,worst_error_file,median_error_fit,worst_error_fit,"
         "median_error_kfold,worst_error_kfold,scale_rows,median_error_scale,worst_error_scale,worst_error_floor,"
         "kfold_rows_own,median_error_kfold_own,worst_error_kfold_own,"
         "scale_rows_own,median_error_scale_own,worst_error_scale_own,rows_above_ceiling,rows_above_best_ceiling\n";
  for (const LibraryFit& f : comparison.libraries) {
    std::string overhead;
    for (const Time t : f.fitted.overhead_per_step) overhead += fmt::format("{}{:.2f}", overhead.empty() ? "" : " ", t.us());
    // Empty where the library has no such protocol or eager-overflow window.
    auto protocol_terms = [&](const char* name) {
      for (const ProtocolTerms& p : f.fitted.protocols) {
        if (p.name == name) return fmt::format("{:.3f},{:.4f}", p.step_latency.us(), p.bandwidth_efficiency);
      }
      return std::string(",");
    };
    const std::string eager = f.fitted.eager_per_step ? fmt::format("{:.2f}", f.fitted.eager_per_step->us()) : "";
    // Rows, median and worst of a score; empty errors where it has no rows.
    auto scored = [](const FitScore& s) {
      if (s.rows == 0) return fmt::format("{},,", s.rows);
      return fmt::format("{},{:.4f},{:.4f}", s.rows, s.median_abs_error, s.worst_abs_error);
    };
    const CeilingCount above = count_above_ceiling(comparison.rows, f.machine, f.library);
    out << fmt::format("{},{},{},{:.3f},{:.3f},{:.4f},{:.3f},{:.3f},{:.4f},{},{},{},{},"
                       "{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{},{:.4f},{},{},{},{}\n",
                       f.machine, f.library, f.file.rows, f.as_written.launch_latency.us(), f.as_written.step_latency.us(),
                       f.as_written.bandwidth_efficiency, f.fitted.launch_latency.us(), f.fitted.step_latency.us(),
                       f.fitted.bandwidth_efficiency, overhead, protocol_terms("LL"), protocol_terms("LL128"), eager,
                       f.file.median_abs_error, f.file.worst_abs_error,
                       f.in_sample.median_abs_error, f.in_sample.worst_abs_error, f.kfold.median_abs_error,
                       f.kfold.worst_abs_error, scored(f.scale), consistency_floor(comparison.rows, f.machine, f.library).worst_abs_error,
                       scored(f.kfold_own), scored(f.scale_own), above.above_ceiling, above.above_best_ceiling);
  }
  write_file_atomically(path, out.str());
  return path;
}

std::filesystem::path write_comparison_csv(const std::vector<CollectiveComparison>& comparisons,
                                           const std::filesystem::path& out_dir) {
  const auto path = out_dir / "collectives-vs-published.csv";
  std::ostringstream out;
  out << "machine,library,op,nodes,devices,bytes,published_busbw_gbps,predicted_busbw_gbps,relative_error,"
         "fitted_busbw_gbps,fitted_error,kfold_busbw_gbps,kfold_error,scale_busbw_gbps,scale_error,"
         "kfold_written_terms,scale_written_terms,algorithm,predicted_time_us,source,ceiling_busbw_gbps,"
         "best_ceiling_busbw_gbps,band_low_busbw_gbps,band_high_busbw_gbps\n";
  for (const auto& c : comparisons) {
    const auto& p = c.published;
    auto error = [&](double predicted) { return predicted / p.busbw_gbps - 1.0; };
    auto optional = [](const std::optional<double>& v) { return v ? fmt::format("{:.4g}", *v) : std::string(); };
    out << fmt::format("{},{},{},{},{},{},{:.4g},{:.4g},{:.4f},{:.4g},{:.4f},{:.4g},{:.4f},{},{},{},{},{},{:.2f},{},{},{},{},{}\n",
                       p.machine, p.library, p.op, p.nodes, p.devices, p.bytes, p.busbw_gbps, c.predicted_busbw_gbps,
                       c.relative_error, c.fitted_busbw_gbps, error(c.fitted_busbw_gbps), c.kfold_busbw_gbps,
                       error(c.kfold_busbw_gbps),
                       c.scale_busbw_gbps ? fmt::format("{:.4g}", *c.scale_busbw_gbps) : "",
                       c.scale_busbw_gbps ? fmt::format("{:.4f}", error(*c.scale_busbw_gbps)) : "",
                       c.kfold_written_terms, c.scale_written_terms, c.algorithm,
                       c.predicted_time_us, csv_field(p.source), optional(c.ceiling_busbw_gbps),
                       optional(c.best_ceiling_busbw_gbps), optional(c.band_low_gbps), optional(c.band_high_gbps));
  }
  write_file_atomically(path, out.str());
  return path;
}

std::vector<std::filesystem::path> plot_comparison(const std::vector<CollectiveComparison>& comparisons,
                                                   const std::filesystem::path& out_dir) {
  const auto gnuplot = find_gnuplot();
  if (!gnuplot) throw PlotError("gnuplot not found on PATH: install gnuplot-nox or pass --no-plot");
  std::filesystem::create_directories(out_dir);
  // One series per (machine, library), in order of first appearance.
  std::vector<std::string> series;
  std::string data;
  double lo = 1e30, hi = 0;
  for (const auto& c : comparisons) {
    const std::string name = c.published.machine + " " + c.published.library + " " + c.published.op;
    if (std::find(series.begin(), series.end(), name) == series.end()) series.push_back(name);
    lo = std::min({lo, c.published.busbw_gbps, c.predicted_busbw_gbps});
    hi = std::max({hi, c.published.busbw_gbps, c.predicted_busbw_gbps});
  }
  for (std::size_t s = 0; s < series.size(); ++s) {
    data += fmt::format("$s{} << EOD\n", s);
    for (const auto& c : comparisons) {
      if (c.published.machine + " " + c.published.library + " " + c.published.op != series[s]) continue;
      data += fmt::format("{:.6g} {:.6g}\n", c.published.busbw_gbps, std::max(c.predicted_busbw_gbps, 1e-6));
    }
    data += "EOD\n";
  }
  const auto summary = summarize(comparisons);
  std::string body = data + fmt::format(
      "set title {} font \",14\"\n"
      "set logscale xy 10\n"
      "set xrange [{:.4g}:{:.4g}]\nset yrange [{:.4g}:{:.4g}]\n"
      "set xlabel \"published busbw (GB/s)\"\nset ylabel \"predicted busbw (GB/s)\"\n"
      "set grid xtics ytics mxtics mytics lc rgb \"#d0d0d0\"\n"
      "set key top left box opaque\nset size square\n"
      "plot x with lines dt 2 lc rgb \"#808080\" title \"y = x\"",
      gnuplot_string(fmt::format("Collectives: predicted vs published busbw (median |error| {:.0f}%, worst {:.0f}%)",
                            100 * summary.median_abs_error, 100 * summary.worst_abs_error)),
      lo / 1.5, hi * 1.5, lo / 1.5, hi * 1.5);
  for (std::size_t s = 0; s < series.size(); ++s) {
    body += fmt::format(", \\\n     $s{} using 1:2 with points pt {} ps 1.6 title {}", s, 5 + 2 * static_cast<int>(s % 5),
                        gnuplot_string(series[s]));
  }
  body += "\n";
  std::string script;
  FigureFiles figures;
  for (const char* format : {"png", "svg"}) {
    const auto file = out_dir / fmt::format("collectives-vs-published.{}", format);
    const std::string terminal = std::string(format) == "png"
                                     ? "set terminal pngcairo size 1000,1000 noenhanced font \"Sans,13\" linewidth 2\n"
                                     : "set terminal svg size 900,900 noenhanced font \"Sans,12\" background \"white\"\n";
    script += "reset\n" + terminal + figures.set_output(file) + body + "unset output\n";
  }
  return render_gnuplot(*gnuplot, script, figures);
}

}  // namespace ws
