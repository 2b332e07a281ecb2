#include "report/study/study_comparison.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "base/input_error.hpp"
#include "base/input_file.hpp"
#include "report/gnuplot.hpp"

namespace ws {
namespace {

using Json = nlohmann::json;

std::string strategy_words(const std::string& strategy) {
  if (strategy == "4d") return "4D";
  if (strategy == "megatron") return "Megatron-LM (tp x pp x dp)";
  if (strategy == "fsdp") return "FSDP / HSDP";
  return strategy;
}

// The value of `key` in `object`, of the JSON type `T`, or an InputError naming where it is.
template <class T>
T field(const Json& object, const char* key, const std::string& file, const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null())
    throw InputError(InputLocation{file, 0, where + key}, "(missing)", "a value");
  try {
    return it->get<T>();
  } catch (const Json::exception&) {
    throw InputError(InputLocation{file, 0, where + key}, printable(it->dump()),
                     std::is_arithmetic_v<T> ? "a number" : "a string");
  }
}

}  // namespace

ComparedStudy read_study_json(const std::filesystem::path& path) {
  const std::string file = path.string();
  const std::string text = read_input_file(path, "a study's JSON (weakscale study)", kMaxTableFileBytes);
  const Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object())
    throw InputError(InputLocation{file, 0, ""}, "(not JSON)", "a study's JSON object (weakscale study)");
  ComparedStudy s;
  s.file = file;
  s.name = field<std::string>(json, "study", file, "");
  s.machine = field<std::string>(json, "machine", file, "");
  const auto rows = json.find("rows");
  if (rows == json.end() || !rows->is_array())
    throw InputError(InputLocation{file, 0, "rows"}, "(missing)", "an array of the study's points");
  for (std::size_t i = 0; i < rows->size(); ++i) {
    const Json& row = (*rows)[i];
    const std::string where = fmt::format("rows[{}].", i);
    if (!row.is_object()) throw InputError(InputLocation{file, 0, fmt::format("rows[{}]", i)}, "", "an object");
    if (!row.contains("step_s") || row.at("step_s").is_null()) continue;  // an infeasible point
    ComparedPoint p;
    p.devices = field<int>(row, "devices", file, where);
    p.model = field<std::string>(row, "model", file, where);
    p.layout = field<std::string>(row, "layout", file, where);
    p.step_s = field<double>(row, "step_s", file, where);
    p.efficiency = field<double>(row, "efficiency", file, where);
    p.hardware_peak = field<double>(row, "peak_fraction_hw", file, where);
    p.model_peak = field<double>(row, "model_peak_fraction", file, where);
    if (!(p.step_s > 0) || p.devices < 1)
      throw InputError(InputLocation{file, 0, where + "step_s"}, fmt::format("{}", p.step_s),
                       "a positive step time on at least one device");
    s.points.push_back(std::move(p));
  }
  // A study's JSON names its strategies where it ranks more than the 4D layouts.
  const auto strategies = json.find("strategies");
  if (strategies == json.end()) {
    s.label = strategy_words("4d");
  } else if (strategies->is_array() && strategies->size() == 1 && strategies->front().is_string()) {
    s.label = strategy_words(strategies->front().get<std::string>());
  } else {
    s.label = s.name;  // several strategies: the study's own name
  }
  return s;
}

std::string comparison_plot_script(const std::vector<ComparedStudy>& studies) {
  static constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};
  // The fastest study at each device count: the third panel's baseline.
  std::map<int, double> fastest;
  for (const auto& s : studies)
    for (const auto& p : s.points) {
      const auto it = fastest.find(p.devices);
      if (it == fastest.end() || p.step_s < it->second) fastest[p.devices] = p.step_s;
    }
  std::string data;
  for (std::size_t k = 0; k < studies.size(); ++k) {
    data += fmt::format("$study{} << EOD\n", k);
    for (const auto& p : studies[k].points)
      data += fmt::format("{} {:.4f} {:.4f} {:.4f} {:.4f} {}\n", p.devices, 100.0 * p.model_peak, 100.0 * p.efficiency,
                          100.0 * (p.step_s / fastest.at(p.devices) - 1.0), 100.0 * p.hardware_peak,
                          gnuplot_string(p.layout));
    data += "EOD\n";
  }
  int lo = 0, hi = 0;
  std::string tics;
  for (const auto& [devices, step] : fastest) {
    if (lo == 0) lo = devices;
    hi = devices;
    tics += fmt::format("{}\"{}\" {}", tics.empty() ? "" : ", ", devices, devices);
  }
  auto curves = [&](int column, const char* point_type) {
    std::string plot;
    for (std::size_t k = 0; k < studies.size(); ++k)
      plot += fmt::format("{}$study{} using 1:{} with linespoints pt {} ps 1.4 lc rgb \"{}\" title {}",
                          k == 0 ? "plot " : ", \\\n     ", k, column, point_type, kColours[k % std::size(kColours)],
                          gnuplot_string(studies[k].label));
    return plot + "\n";
  };
  const std::string machine = studies.empty() ? std::string() : studies.front().machine;
  const std::string series = studies.empty() || studies.front().points.empty()
                                 ? std::string()
                                 : fmt::format("{} on {} to {} on {} devices", studies.front().points.front().model,
                                               studies.front().points.front().devices,
                                               studies.front().points.back().model,
                                               studies.front().points.back().devices);
  std::string s = data;
  s += fmt::format(
      "set multiplot layout 1,3 title {} font \",15\"\n"
      "set logscale x 2\n"
      "set xrange [{}:{}]\n"
      "set xtics ({})\n"
      "set xlabel \"devices (log scale, base 2)\"\n"
      "set grid xtics ytics lc rgb \"#d0d0d0\"\n"
      "set key bottom left box opaque\n",
      gnuplot_string(fmt::format("{}: the best layout of each strategy ({})", machine, series)), lo / 1.5, hi * 1.5,
      tics);
  s += "set title \"Model flops' percent of peak (MFU)\"\nset ylabel \"MFU (%)\"\nset yrange [0:*]\n" + curves(2, "7");
  s += "set title \"Weak-scaling efficiency (each vs. its first point)\"\nset ylabel \"efficiency (%)\"\n"
       "set yrange [0:*]\n" +
       curves(3, "5");
  s += "set title \"Step time vs. the fastest strategy\"\nset ylabel \"% slower than the fastest\"\n"
       "set yrange [-2:*]\nset key top left box opaque\n" +
       curves(4, "9");
  s += "unset multiplot\n";
  return s;
}

std::vector<std::filesystem::path> plot_comparison(const std::vector<ComparedStudy>& studies,
                                                   const std::filesystem::path& out_dir, const std::string& stem) {
  const auto gnuplot = find_gnuplot();
  if (!gnuplot) throw PlotError("gnuplot not found on PATH: install gnuplot-nox (scripts/install-deps.sh)");
  std::filesystem::create_directories(out_dir);
  FigureFiles outputs;
  std::string script;
  const std::string body = comparison_plot_script(studies);
  for (const char* format : {"png", "svg"}) {
    const auto file = out_dir / fmt::format("{}.{}", stem, format);
    script += "reset\n";
    script += format == std::string_view("png")
                  ? "set terminal pngcairo size 1900,650 noenhanced font \"Sans,13\" linewidth 2\n"
                  : "set terminal svg size 1500,520 noenhanced font \"Sans,12\" linewidth 1.5 background \"white\"\n";
    script += outputs.set_output(file) + body + "unset output\n";
  }
  return render_gnuplot(*gnuplot, script, outputs);
}

}  // namespace ws
