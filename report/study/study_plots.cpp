#include "report/study/study_plots.hpp"

#include "report/study/study_summary.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <string_view>

#include "sim/study/uncertainty.hpp"

namespace ws {
namespace {

std::vector<const StudyRow*> feasible_rows(const StudyResult& result) {
  std::vector<const StudyRow*> rows;
  for (const auto& row : result.rows) {
    if (row.feasible) rows.push_back(&row);
  }
  return rows;
}

std::string figure_title(const StudyResult& result, std::string_view what) {
  const auto& points = result.spec.points;
  const std::string series =
      points.front().model.name == points.back().model.name
          ? fmt::format("{}, {} to {} devices", points.front().model.name, points.front().devices,
                        points.back().devices)
          : fmt::format("{} on {} to {} on {} devices", points.front().model.name, points.front().devices,
                        points.back().model.name, points.back().devices);
  // Figures of a run with parameters fixed on the command line say so: they are not the file's.
  const std::string set = result.machine.overrides.empty()
                              ? std::string()
                              : fmt::format("; set: {}", fmt::join(result.machine.overrides, ", "));
  return fmt::format("{}: {} ({}, {}{})", result.machine.name, what, series,
                     to_string(result.spec.options.precision), set);
}

// Device counts as tic labels on the log2 axis (gnuplot would otherwise print 2^9 or 512.0).
std::string device_tics(const std::vector<const StudyRow*>& rows) {
  std::string tics;
  int last = 0;
  for (const auto* row : rows) {
    if (row->point.devices == last) continue;
    last = row->point.devices;
    tics += fmt::format("{}\"{}\" {}", tics.empty() ? "" : ", ", last, last);
  }
  return tics;
}

std::string terminal(std::string_view format) {
  // Sizes chosen for a two-column paper figure; svg keeps text as text for editing.
  if (format == "png") return "set terminal pngcairo size 1600,650 noenhanced font \"Sans,13\" linewidth 2\n";
  return "set terminal svg size 1280,520 noenhanced font \"Sans,12\" linewidth 1.5 background \"white\"\n";
}

}  // namespace


std::string efficiency_plot_script(const StudyResult& result) {
  const auto rows = feasible_rows(result);
  std::string s = "$points << EOD\n";
  const bool bands = result.samples > 0;
  for (const auto* row : rows) {
    s += fmt::format("{} {:.4f} {:.4f} {:.4f} {}", row->point.devices, 100.0 * row->efficiency,
                     100.0 * row->best.hardware_peak_fraction, 100.0 * row->best.model_peak_fraction,
                     gnuplot_string(row->point.model.name));
    // Columns 6-11: efficiency and hardware percent of peak, 10th / 50th / 90th percentile.
    if (bands) {
      for (const auto& band : {row->efficiency_band, row->peak_fraction_band}) {
        if (band) {
          s += fmt::format(" {:.4f} {:.4f} {:.4f}", 100.0 * band->p10, 100.0 * band->p50, 100.0 * band->p90);
        } else {
          s += " NaN NaN NaN";
        }
      }
    }
    s += "\n";
  }
  s += "EOD\n";
  const double lo = rows.empty() ? 1 : rows.front()->point.devices / 1.5;
  const double hi = rows.empty() ? 2 : rows.back()->point.devices * 1.5;
  const double peak_tflops = peak(result.machine.device, result.spec.options.precision).tflops();
  s += fmt::format(
      "set multiplot layout 1,2 title {} font \",15\"\n"
      "set logscale x 2\n"
      "set xrange [{}:{}]\n"
      "set xtics ({})\n"
      "set xlabel \"devices (log scale, base 2)\"\n"
      "set grid xtics ytics lc rgb \"#d0d0d0\"\n"
      "set key bottom left box opaque\n"
      "set border lw 1\n",
      gnuplot_string(figure_title(result, "weak scaling")), lo, hi, device_tics(rows));
  // Room above the highest point for its model label; 120 % keeps the ideal line off the top.
  double top = 120;
  for (const auto* row : rows) {
    top = std::max(top, 100.0 * row->efficiency * 1.15);
    if (row->efficiency_band) top = std::max(top, 100.0 * row->efficiency_band->p90 * 1.1);
  }
  // What the headline and the band are (study_headline): the file as written, and the draws.
  const Headline headline = study_headline(result);
  const std::size_t best_cases = headline.best_case_ranges.size();
  const std::string band_title = fmt::format("band: 10th-90th percentile of {} draws", result.samples);
  const std::string median_title = best_cases > 0 ? "median of the draws (typical)" : "median of the draws";
  const std::string headline_title =
      best_cases > 0 ? fmt::format("headline: file as written (best case in {} of its ranges)", best_cases)
                     : std::string("headline: file as written");
  const std::string efficiency_band =
      bands
          ? fmt::format(
                "     $points using 1:6:8 with filledcurves fc rgb \"#1f77b4\" fs transparent solid 0.2 "
                "noborder title {}, \\\n"
                "     $points using 1:7 with lines dt 3 lc rgb \"#1f77b4\" title {}, \\\n",
                gnuplot_string(band_title), gnuplot_string(median_title))
          : std::string();
  const std::string peak_band =
      bands ? fmt::format(
                  "     $points using 1:9:11 with filledcurves fc rgb \"#d62728\" fs transparent solid 0.2 "
                  "noborder title {}, \\\n"
                  "     $points using 1:10 with lines dt 3 lc rgb \"#d62728\" title {}, "
                  "\\\n",
                  gnuplot_string(band_title), gnuplot_string(median_title))
            : std::string();
  s += fmt::format(
      "set title \"Weak-scaling efficiency\"\n"
      "set ylabel \"efficiency: flop/s per device vs. first point (%)\"\n"
      "set yrange [0:{:.0f}]\n"
      "plot 100 with lines dt 2 lc rgb \"#808080\" title \"ideal\", \\\n"
      "{}"
      "     $points using 1:2 with linespoints pt 7 ps 1.5 lc rgb \"#1f77b4\" title {}, \\\n"
      "     $points using 1:2:5 with labels offset 0,1.2 notitle\n",
      top, efficiency_band, gnuplot_string(bands ? headline_title : "predicted"));
  s += fmt::format(
      "set title \"Percent of peak ({:.1f} TFLOP/s {} per device)\"\n"
      "set ylabel \"percent of peak (%)\"\n"
      "set yrange [0:100]\n"
      "plot {}"
      "     $points using 1:3 with linespoints pt 7 ps 1.5 lc rgb \"#d62728\" title \"hardware flops (with "
      "recomputation){}\", \\\n"
      "     $points using 1:4 with linespoints pt 5 ps 1.5 lc rgb \"#2ca02c\" title \"model flops (MFU)\", "
      "\\\n"
      "     $points using 1:3:5 with labels offset 0,1.2 notitle\n"
      "unset multiplot\n",
      peak_tflops, to_string(result.spec.options.precision), peak_band, bands ? ", headline" : "");
  return s;
}

// The bars both per-point figures share: columns 4-9 of the data block `block` (compute, exposed X,
// Y, Z, data, skew), each point labelled with its devices, model and layout (its layout in two
// lines: column 3 and column `layout_tail`, layout_lines()).
static std::string part_bars(std::string_view block, std::string_view compute_title, std::string_view skew_title,
                             int layout_tail) {
  return fmt::format(
      "{} using 4:xtic(sprintf(\"%d\\n%s\\n%s\\n%s\", $1, strcol(2), strcol(3), strcol({}))) lc rgb \"#4c72b0\" "
      "title \"{}\", \\\n"
      "     '' using 5 lc rgb \"#dd8452\" title \"exposed X\", \\\n"
      "     '' using 6 lc rgb \"#55a868\" title \"exposed Y\", \\\n"
      "     '' using 7 lc rgb \"#c44e52\" title \"exposed Z\", \\\n"
      "     '' using 8 lc rgb \"#8172b3\" title \"exposed data\", \\\n"
      "     '' using 9 lc rgb \"#937860\" title \"{}\"",
      block, layout_tail, compute_title, skew_title);
}

// A layout's tic label in two lines (Megatron-LM's spellings run to 40 characters): split at the
// comma nearest its middle; short ones keep one line and an empty second.
static std::pair<std::string, std::string> layout_lines(const Layout& layout) {
  const std::string text = to_string(layout);
  if (text.size() <= 16) return {text, " "};
  std::size_t best = std::string::npos;
  for (std::size_t i = text.find(','); i != std::string::npos; i = text.find(',', i + 1))
    if (best == std::string::npos || std::abs(static_cast<long>(i) - static_cast<long>(text.size() / 2)) <
                                         std::abs(static_cast<long>(best) - static_cast<long>(text.size() / 2)))
      best = i;
  if (best == std::string::npos) return {text, " "};
  return {text.substr(0, best + 1), text.substr(best + 1)};
}

// Whether the study ranks other strategies than 4D (pipelined layouts among them): its figures add
// the pipeline's parts, the bubble and the wait for stage transfers.
static bool ranks_pipelines(const StudyResult& result) {
  return !result.spec.points.empty() && result.spec.points.front().strategies != std::vector<Strategy>{Strategy::four_d};
}

// Bars for the pipeline's parts in columns `bubble` and `bubble` + 1 of the same data block.
static std::string pipeline_bars(const StudyResult& result, int bubble) {
  if (!ranks_pipelines(result)) return {};
  return fmt::format(", \\\n     '' using {} lc rgb \"#ccb974\" title \"pipeline bubble\", \\\n"
                     "     '' using {} lc rgb \"#64b5cd\" title \"waiting for stage transfers\"",
                     bubble, bubble + 1);
}

std::string breakdown_plot_script(const StudyResult& result) {
  const auto rows = feasible_rows(result);
  std::string s = "$steps << EOD\n";
  for (const auto* row : rows) {
    const auto& b = row->best.step;
    const auto [head, tail] = layout_lines(row->best.layout);
    s += fmt::format("{} {} {} {:.6f} {:.6f} {:.6f} {:.6f} {:.6f} {:.6f} {:.6f} {:.6f} {}\n", row->point.devices,
                     gnuplot_string(row->point.model.name), gnuplot_string(head), b.compute.seconds(),
                     b.exposed_x.seconds(), b.exposed_y.seconds(), b.exposed_z.seconds(), b.exposed_data.seconds(),
                     b.skew.seconds(), (b.pipeline - b.pipeline_transfer).seconds(), b.pipeline_transfer.seconds(),
                     gnuplot_string(tail));
  }
  s += "EOD\n";
  s += fmt::format(
      "set title {} font \",15\"\n"
      "set style data histograms\n"
      "set style histogram rowstacked\n"
      "set style fill solid 0.85 border -1\n"
      "set boxwidth 0.6\n"
      "set xrange [-0.6:{} - 0.4]\n"
      "set bmargin 8\n"
      "set xlabel \"devices, model and best layout\" offset 0,-2.6\n"
      "set ylabel \"time per training step (s)\"\n"
      "set yrange [0:*]\n"
      "set grid ytics lc rgb \"#d0d0d0\"\n"
      "set key top left box opaque reverse Left\n"
      "set xtics nomirror\n"
      "plot {}{}\n",
      gnuplot_string(figure_title(result, "step-time breakdown of the best layout")), rows.size(),
      part_bars("$steps", "compute", "skew (slowest device and member)", 12), pipeline_bars(result, 10));
  return s;
}

// Where the efficiency goes: per point, the terms of EfficiencyDecomposition in percentage points
// (clustered bars, above zero a gain over the first point, below a loss), and the efficiency itself
// as a line on the right axis, so a point below or above 100 % shows its causes at a glance.
std::string decomposition_plot_script(const StudyResult& result) {
  const auto rows = feasible_rows(result);
  std::string s = "$terms << EOD\n";
  for (const auto* row : rows) {
    const auto& d = row->decomposition;
    const auto [head, tail] = layout_lines(row->best.layout);
    s += fmt::format("{} {} {} {:.4f} {:.4f} {:.4f} {:.4f} {:.4f} {:.4f} {:.4f} {:.4f} {:.4f} {:.4f} {}\n",
                     row->point.devices, gnuplot_string(row->point.model.name), gnuplot_string(head), 100 * d.compute,
                     100 * d.x, 100 * d.y, 100 * d.z, 100 * d.data, 100 * d.skew, 100 * d.contention,
                     100 * row->efficiency, 100 * d.pipeline, 100 * d.pipeline_transfer, gnuplot_string(tail));
  }
  s += "EOD\n";
  s += fmt::format(
      "set title {} font \",15\"\n"
      "set style data histograms\n"
      "set style histogram clustered gap 1.5\n"
      "set style fill solid 0.85 border -1\n"
      "set xrange [-0.6:{} - 0.4]\n"
      "set bmargin 8\n"
      "set xlabel \"devices, model and best layout\" offset 0,-2.6\n"
      "set ylabel \"gain (+) or loss (-) vs the first point (% points)\"\n"
      "set y2label \"weak-scaling efficiency (%)\"\n"
      "set y2tics\n"
      "set ytics nomirror\n"
      "set grid ytics lc rgb \"#d0d0d0\"\n"
      "set xzeroaxis lt -1\n"
      "set key outside right top box opaque\n"
      "set xtics nomirror\n"
      "plot {}, \\\n"
      "     '' using 10 lc rgb \"#da8bc3\" title \"contention\"{}, \\\n"
      "     '' using 0:11 axes x1y2 with linespoints lw 2 pt 7 lc rgb \"black\" title \"efficiency (right)\"\n",
      gnuplot_string(figure_title(result, "where the weak-scaling efficiency goes")), rows.size(),
      part_bars("$terms", "compute efficiency", "skew and noise", 14), pipeline_bars(result, 12));
  return s;
}

std::string candidates_plot_script(const StudyResult& result) {
  const auto rows = feasible_rows(result);
  std::string s = "$candidates << EOD\n";
  std::size_t k = 0;
  for (const auto* row : rows) {
    for (std::size_t i = 0; i < row->candidates.size(); ++i) {
      const double slower = 100.0 * (row->candidates[i].step.total() / row->best.step.total() - 1.0);
      s += fmt::format("{} {} {:.4f} {}\n", row->point.devices, i + 1, slower,
                       gnuplot_string(to_string(row->candidates[i].layout)));
    }
    k = std::max(k, row->candidates.size());
  }
  s += "EOD\n";
  const double lo = rows.empty() ? 1 : rows.front()->point.devices / 1.5;
  const double hi = rows.empty() ? 2 : rows.back()->point.devices * 1.5;
  // Rank 1 (the best layout, 0 %) is labelled with its layout; the others are dots by rank.
  s += fmt::format(
      "set title {} font \",15\"\n"
      "set logscale x 2\n"
      "set xrange [{}:{}]\n"
      "set xtics ({})\n"
      "set xlabel \"devices (log scale, base 2)\"\n"
      "set ylabel \"step time vs. the best layout (% slower)\"\n"
      "set yrange [-5:*]\n"
      "set grid xtics ytics lc rgb \"#d0d0d0\"\n"
      "set key top left box opaque\n"
      "set palette defined (1 \"#1f77b4\", {} \"#d62728\")\n"
      "set cbrange [1:{}]\n"
      "set cblabel \"rank of the layout\"\n"
      "plot $candidates using 1:3:2 with points pt 7 ps 1.3 lc palette title \"top {} layouts of each "
      "point\", \\\n"
      "     $candidates using 1:($2 == 1 ? $3 : 1/0):4 with labels offset 0,-1.2 notitle\n",
      gnuplot_string(figure_title(result, fmt::format("how much the layout choice matters (top {})", k))), lo, hi,
      device_tics(rows), std::max<std::size_t>(k, 2), std::max<std::size_t>(k, 2), k);
  return s;
}

// A tornado figure of the one-at-a-time sensitivity table: per uncertain parameter (largest effect
// on top), the largest point's percent of peak and efficiency with that parameter at the low end
// (the bar below its line) and at the high end (above), each bar drawn from the machine file's value
// (the dashed line) to the value at that end, so a reader sees which unsourced value could move the
// prediction, and which way.
std::string sensitivity_plot_script(const StudyResult& result) {
  if (result.sensitivity.empty() || result.rows.empty() || !result.rows.back().feasible) return {};
  const StudyRow& last = result.rows.back();
  const double eff = 100.0 * last.efficiency;
  const double peak = 100.0 * last.best.hardware_peak_fraction;
  const std::size_t n = result.sensitivity.size();
  // Columns: y, label, then each bar's [from, to]: percent of peak at the low end (3-4) and at the
  // high end (5-6), efficiency at the low end (7-8) and at the high end (9-10).
  auto bar = [](double nominal, double at_end) {
    return fmt::format("{:.4f} {:.4f}", std::min(nominal, at_end), std::max(nominal, at_end));
  };
  std::string s = "$ranges << EOD\n";
  std::string tics;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& row = result.sensitivity[i];
    const auto p = row.range.parameter;
    const std::size_t y = n - 1 - i;
    const std::string label = fmt::format("{} [{} .. {}]", range_label(row.range), format_value(p, low_value(row.range)),
                                          format_value(p, high_value(row.range)));
    s += fmt::format("{} {} {} {} {} {}\n", y, gnuplot_string(label), bar(peak, peak + 100.0 * row.peak_fraction_low),
                     bar(peak, peak + 100.0 * row.peak_fraction_high), bar(eff, eff + 100.0 * row.efficiency_low),
                     bar(eff, eff + 100.0 * row.efficiency_high));
    tics += fmt::format("{}{} {}", tics.empty() ? "" : ", ", gnuplot_string(label), y);
  }
  s += "EOD\n";
  auto panel = [](std::string_view title, std::string_view xlabel, double nominal, int column) {
    return fmt::format(
        "set title {0}\n"
        "set xlabel {1}\n"
        "set arrow 1 from {2:.4f}, graph 0 to {2:.4f}, graph 1 nohead dt 2 lc rgb \"#404040\"\n"
        "plot $ranges using (${3}+${4})/2:($1-0.19):{3}:{4}:($1-0.38):1 with boxxyerror fs solid 0.85 border -1 "
        "lc rgb \"#4c72b0\" title \"at the low end\", \\\n"
        "     $ranges using (${5}+${6})/2:($1+0.19):{5}:{6}:1:($1+0.38) with boxxyerror fs solid 0.85 border -1 "
        "lc rgb \"#dd8452\" title \"at the high end\"\n",
        gnuplot_string(title), gnuplot_string(xlabel), nominal, column, column + 1, column + 2, column + 3);
  };
  s += fmt::format(
      // Two equal panels right of the parameter names (screen fractions: left, right, bottom, top).
      "set multiplot layout 1,2 title {} font \",15\" margins 0.27,0.98,0.13,0.86 spacing 0.05,0\n"
      "set ytics ({}) font \",10\"\n"
      "set yrange [-0.6:{} - 0.4]\n"
      "set grid xtics lc rgb \"#d0d0d0\"\n"
      "set key bottom right box opaque\n",
      gnuplot_string(figure_title(
          result, fmt::format("sensitivity at {} devices, one parameter at a time", last.point.devices))),
      tics, n);
  s += panel(fmt::format("Percent of peak (file: {:.1f} %)", peak), "percent of peak, hardware flops (%)", peak, 3);
  s += "unset ytics\n";
  s += panel(fmt::format("Weak-scaling efficiency (file: {:.1f} %)", eff), "efficiency vs. the first point (%)", eff,
             7);
  s += "unset multiplot\n";
  return s;
}

std::vector<std::filesystem::path> plot_study(const StudyResult& result,
                                              const std::filesystem::path& out_dir) {
  const auto gnuplot = find_gnuplot();
  if (!gnuplot) {
    throw PlotError(
        "gnuplot not found on PATH: install gnuplot-nox (scripts/install-deps.sh) or pass --no-plot");
  }
  if (feasible_rows(result).empty()) {
    throw PlotError(
        fmt::format("study '{}' has no feasible point to plot; pass --no-plot", result.spec.name));
  }
  std::filesystem::create_directories(out_dir);
  struct Figure {
    std::string stem;
    std::string body;
  };
  const Figure figures[] = {{result.spec.name, efficiency_plot_script(result)},
                            {result.spec.name + "-breakdown", breakdown_plot_script(result)},
                            {result.spec.name + "-efficiency", decomposition_plot_script(result)},
                            {result.spec.name + "-candidates", candidates_plot_script(result)},
                            {result.spec.name + "-sensitivity", sensitivity_plot_script(result)}};
  std::string script;
  FigureFiles outputs;
  for (const auto& figure : figures) {
    if (figure.body.empty()) continue;  // no sensitivity table, no tornado
    for (const char* format : {"png", "svg"}) {
      const auto file = out_dir / fmt::format("{}.{}", figure.stem, format);
      script += "reset\n" + terminal(format) + outputs.set_output(file) + figure.body + "unset output\n";
    }
  }
  return render_gnuplot(*gnuplot, script, outputs);
}

}  // namespace ws
