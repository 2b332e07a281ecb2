#include "report/validation/validation_plots.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "report/gnuplot.hpp"

namespace ws {
namespace {

// Phases bottom to top in the stacked bars, with one colour each (measured solid, simulated hatched).
struct Phase {
  const char* label;
  const char* group;  // nullptr: compute
  const char* colour;
};
constexpr std::array<Phase, 7> kPhases{{{"compute", nullptr, "#4c72b0"},
                                        {"exposed x", "x", "#dd8452"},
                                        {"exposed y", "y", "#55a868"},
                                        {"exposed z", "z", "#c44e52"},
                                        {"exposed data", "data", "#8172b3"},
                                        {"exposed data x z", "data_z", "#937860"},
                                        {"exposed world", "world", "#da8bc3"}}};

double phase_seconds(const PhaseTimes& t, const Phase& p) {
  return p.group ? t.exposed(p.group) : t.compute_s;
}

// Per run: index, measured, simulated, label, then the cumulative phase sums of measured (7) and
// simulated (7), so each stack is drawn as boxes from the tallest down.
std::string data_block(const std::vector<const ValidationRecord*>& rows) {
  std::string s = "$runs << EOD\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = *rows[i];
    s += fmt::format("{} {:.6g} {:.6g} \"{} {}\"", i, r.measured.step_s, r.simulated->step_s, r.run.id,
                     to_string(r.run.layout));
    for (const PhaseTimes* t : {&r.measured, &*r.simulated}) {
      double sum = 0;
      for (const auto& p : kPhases) s += fmt::format(" {:.6g}", sum += phase_seconds(*t, p));
    }
    s += "\n";
  }
  return s + "EOD\n";
}

// Log axes from a bit below the fastest to a bit above the slowest step, measured or simulated.
std::string scatter_panel(const std::vector<const ValidationRecord*>& rows) {
  double lo = rows.front()->measured.step_s, hi = lo;
  for (const auto* r : rows) {
    lo = std::min({lo, r->measured.step_s, r->simulated->step_s});
    hi = std::max({hi, r->measured.step_s, r->simulated->step_s});
  }
  return fmt::format(
      "set title \"simulated vs measured step time\"\n"
      "set xlabel \"measured step (s)\"\n"
      "set ylabel \"simulated step (s)\"\n"
      "set logscale xy\n"
      "set xrange [{0:.6g}:{1:.6g}]\n"
      "set yrange [{0:.6g}:{1:.6g}]\n"
      "set key top left box opaque\n"
      "plot x with lines dt 2 lc rgb \"#606060\" title \"y = x\", "
      "x * 1.15 with lines dt 3 lc rgb \"#b0b0b0\" title \"+-15 %\", "
      "x / 1.15 with lines dt 3 lc rgb \"#b0b0b0\" notitle, "
      "$runs using 2:3 with points pt 7 ps 1.2 lc rgb \"#4c72b0\" title \"runs\"\n",
      lo / 1.3, hi * 1.3);
}

std::string bars_panel() {
  std::string s =
      "unset logscale\n"
      "set autoscale\n"
      "set title \"per phase: measured (left, solid) and simulated (right, hatched) per run\"\n"
      "set xlabel \"\"\n"
      "set ylabel \"seconds per step\"\n"
      "set yrange [0:*]\n"
      "set xtics rotate by 60 right font \",9\"\n"
      "set key top left box opaque font \",9\"\n"
      "set boxwidth 0.38\n"
      "plot ";
  // Tallest cumulative sum first so that each lower phase paints over it.
  for (std::size_t k = kPhases.size(); k-- > 0;) {
    const auto& p = kPhases[k];
    s += fmt::format(
        "$runs using ($1-0.2):{}:xtic(4) with boxes fill solid 0.9 noborder lc rgb \"{}\" title \"{}\", "
        "$runs using ($1+0.2):{} with boxes fill pattern 2 border lc rgb \"{}\" notitle, ",
        5 + k, p.colour, p.label, 5 + kPhases.size() + k, p.colour);
  }
  s.resize(s.size() - 2);
  return s + "\n";
}

// Compute per kind of op summed over the simulated runs: where the compute model is off.
std::string kinds_panel(const std::vector<ValidationRecord>& records) {
  std::string s = "$kinds << EOD\n";
  int i = 0;
  for (const auto& t : compute_totals_by_kind(records)) {
    s += fmt::format("{} {:.6g} {:.6g} \"{}\"\n", i++, t.measured_s, t.simulated_s, t.phase);
  }
  return s +
         "EOD\n"
         "set title \"compute per kind of op, summed over the runs (rank 0, per step)\"\n"
         "set xlabel \"\"\n"
         "set ylabel \"seconds (log scale)\"\n"
         "set logscale y\n"
         "set format y \"%g\"\n"
         "set yrange [*:*]\n"
         "set xtics rotate by 45 right font \",10\"\n"
         "set key top right box opaque font \",10\"\n"
         "set boxwidth 0.38\n"
         "plot $kinds using ($1-0.2):2:xtic(4) with boxes fill solid 0.9 noborder lc rgb \"#4c72b0\" "
         "title \"measured (engine trace)\", "
         "$kinds using ($1+0.2):3 with boxes fill pattern 2 border lc rgb \"#dd8452\" title \"simulated\"\n";
}

}  // namespace

std::string validation_plot_script(const std::vector<ValidationRecord>& records,
                                   const std::string& machine_name) {
  std::vector<const ValidationRecord*> rows;
  for (const auto& r : records) {
    if (r.simulated) rows.push_back(&r);
  }
  if (rows.empty()) return {};
  return data_block(rows) +
         fmt::format(
             "set multiplot layout 1,3 title \"{}: weakscale-engine measured vs simulated\" font \",15\"\n",
             machine_name) +
         "set grid xtics ytics lc rgb \"#d0d0d0\"\n" + scatter_panel(rows) + bars_panel() +
         kinds_panel(records) + "unset multiplot\n";
}

std::vector<std::filesystem::path> plot_validation(const std::vector<ValidationRecord>& records,
                                                   const std::string& machine_name,
                                                   const std::filesystem::path& out_dir) {
  const auto gnuplot = find_gnuplot();
  if (!gnuplot) throw PlotError("gnuplot not found on PATH: install gnuplot-nox (scripts/install-deps.sh)");
  if (std::none_of(records.begin(), records.end(), [](const auto& r) { return r.simulated.has_value(); })) {
    throw PlotError("no run was simulated: nothing to plot");
  }
  std::filesystem::create_directories(out_dir);
  const std::string body = validation_plot_script(records, machine_name);
  const std::pair<const char*, const char*> terminals[] = {
      {"png", "set terminal pngcairo size 2400,750 noenhanced font \"Sans,12\" linewidth 1.5\n"},
      {"svg", "set terminal svg size 1900,600 noenhanced font \"Sans,11\" background \"white\"\n"}};
  std::string script;
  FigureFiles figures;
  for (const auto& [format, terminal] : terminals) {
    const auto file = out_dir / fmt::format("validation.{}", format);
    script += fmt::format("reset\n{}{}{}unset output\n", terminal, figures.set_output(file), body);
  }
  return render_gnuplot(*gnuplot, script, figures);
}

}  // namespace ws
