#include "report/published/published_writers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "base/output_file.hpp"
#include "report/csv.hpp"
#include "report/gnuplot.hpp"

namespace ws {

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

std::filesystem::path write_end_to_end_csv(const std::vector<RunComparison>& comparisons,
                                           const std::vector<ComputeScaleFit>& fits,
                                           const std::filesystem::path& out_dir) {
  const auto path = out_dir / "end-to-end-vs-published.csv";
  // Per comparison: its machine's fitted factor, and the row's throughput with it and held out.
  std::vector<std::string> fitted(comparisons.size(), ",,,,");
  for (const ComputeScaleFit& f : fits)
    for (std::size_t k = 0; k < f.rows.size(); ++k) {
      const double measured = comparisons[f.rows[k]].run.measured;
      fitted[f.rows[k]] = fmt::format("{:.4f},{:.6g},{:.4f},{:.6g},{:.4f}", f.fitted, f.fitted_predicted[k],
                                      f.fitted_predicted[k] / measured - 1.0, f.held_out_predicted[k],
                                      f.held_out_predicted[k] / measured - 1.0);
    }
  std::ostringstream out;
  out << "line,machine,framework,model,devices,layout,unit,measured,predicted,relative_error,step_s,fits_memory,"
         "band_low,band_high,compute_scale_fitted,fitted_predicted,fitted_error,held_out_predicted,held_out_error,"
         "not_simulated,source\n";
  for (std::size_t i = 0; i < comparisons.size(); ++i) {
    const RunComparison& c = comparisons[i];
    const PublishedRun& r = c.run;
    const bool band = c.simulated && c.band_high > 0;
    out << fmt::format("{},{},{},{},{},{},{},{:.6g},{},{},{},{},{},{},{},{},{}\n", r.line, r.machine, r.framework,
                       csv_field(r.model_name), r.devices, c.simulated ? csv_field(to_string(r.layout)) : "",
                       csv_field(r.unit), r.measured, c.simulated ? fmt::format("{:.6g}", c.predicted) : "",
                       c.simulated ? fmt::format("{:.4f}", c.error) : "",
                       c.simulated ? fmt::format("{:.4f}", c.step.seconds()) : "",
                       c.simulated ? (c.fits_memory ? "1" : "0") : "", band ? fmt::format("{:.6g}", c.band_low) : "",
                       band ? fmt::format("{:.6g}", c.band_high) : "", fitted[i], csv_field(r.missing),
                       csv_field(r.source));
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
