#include "sim/study/published_collectives.hpp"

// gnuplot-iostream is included as a system header (see study_plots.cpp).
#include <fmt/format.h>
#include <gnuplot-iostream.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/collectives/collective_job.hpp"
#include "sim/core/input_error.hpp"
#include "sim/core/quantity.hpp"
#include "sim/machine/machine_loader.hpp"
#include "sim/study/study_plots.hpp"

namespace ws {
namespace {

constexpr const char* kColumns[] = {"machine", "library", "op", "nodes", "devices", "bytes", "busbw_gbps", "source"};
constexpr std::size_t kColumnCount = std::size(kColumns);

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (const char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"") == std::string::npos) return s;
  std::string out = "\"";
  for (const char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + '"';
}

std::string gp_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + '"';
}

std::optional<CollectiveOp> parse_op(const std::string& s) {
  for (const auto op : {CollectiveOp::all_reduce, CollectiveOp::reduce_scatter, CollectiveOp::all_gather}) {
    if (s == to_string(op)) return op;
  }
  return std::nullopt;
}

int parse_count(const std::string& text, const InputLocation& where) {
  std::size_t used = 0;
  int v = 0;
  try {
    v = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || v < 1) throw InputError(where, text, "an integer >= 1");
  return v;
}

// osu_bw between device 0 of two nodes: a window of messages, all in flight at once, through the
// MPI library's point-to-point path: no collective launch or step latency, the NIC's large-message
// efficiency and small-message overhead (NicEfficiencyCurve).
CollectiveComparison point_to_point(const Machine& machine, const PublishedCollective& row) {
  const Topology topology = build_topology(machine, 2);
  Router router(topology, RouterOptions{RoutingPolicy::minimal, 1});
  FlowNetwork network(topology, router);
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

std::vector<PublishedCollective> load_published_collectives(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw InputError(InputLocation{file.string(), 0, ""}, "", "a readable CSV file");
  std::vector<PublishedCollective> rows;
  std::string line;
  int number = 0;
  bool header = true;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line.front() == '#') continue;
    const auto f = split_csv(line);
    const InputLocation at{file.string(), number, ""};
    if (header) {
      std::string expected;
      for (const char* c : kColumns) expected += (expected.empty() ? "" : ",") + std::string(c);
      if (line != expected) throw InputError(at, line, "the header " + expected);
      header = false;
      continue;
    }
    if (f.size() != kColumnCount) {
      throw InputError(at, line, fmt::format("{} comma-separated columns", kColumnCount));
    }
    auto where = [&](std::size_t col) { return InputLocation{file.string(), number, kColumns[col]}; };
    PublishedCollective r;
    r.machine = f[0];
    r.library = f[1];
    r.op = f[2];
    if (!parse_op(r.op) && r.op != "point-to-point") {
      throw InputError(where(2), r.op, "all-reduce, reduce-scatter, all-gather or point-to-point");
    }
    r.nodes = parse_count(f[3], where(3));
    r.devices = parse_count(f[4], where(4));
    const auto bytes = parse_bytes(f[5]);
    if (!bytes || *bytes < 1) throw InputError(where(5), f[5], "a size with a unit, e.g. \"128 MiB\"");
    r.bytes = static_cast<Bytes>(std::llround(*bytes));
    char* end = nullptr;
    r.busbw_gbps = std::strtod(f[6].c_str(), &end);
    if (end == f[6].c_str() || *end != '\0' || !(r.busbw_gbps > 0)) {
      throw InputError(where(6), f[6], "a bandwidth in GB/s > 0");
    }
    r.source = f[7];
    r.file = file.string();
    r.line = number;
    rows.push_back(std::move(r));
  }
  if (rows.empty()) throw InputError(InputLocation{file.string(), 0, ""}, "", "at least one row");
  return rows;
}

std::vector<CollectiveComparison> compare_with_published(const std::vector<PublishedCollective>& rows,
                                                         const std::string& machines_dir) {
  std::map<std::string, Machine> machines;
  std::vector<CollectiveComparison> out;
  for (const auto& row : rows) {
    auto it = machines.find(row.machine);
    if (it == machines.end()) it = machines.emplace(row.machine, load_machine_by_name(row.machine, machines_dir)).first;
    const Machine& machine = it->second;
    CollectiveComparison c;
    if (row.op == "point-to-point") {
      c = point_to_point(machine, row);
    } else {
      CollectiveJobSpec spec;
      spec.op = *parse_op(row.op);
      spec.bytes = row.bytes;
      spec.nodes = row.nodes;
      spec.devices = row.devices;
      spec.library = row.library;
      // A small flow budget keeps the whole table near a minute on two cores; coalesced ring
      // segments are exact for lockstep rings (sim/collectives/README.md).
      spec.max_flows = 20'000;
      spec.top_links = 0;
      CollectiveJobReport rep;
      try {
        rep = run_collective_job(machine, spec);
      } catch (const InputError& e) {
        throw InputError(InputLocation{row.file, row.line, ""}, row.machine + " " + row.library + " " + row.op,
                         std::string("a row the simulator can run (") + e.what() + ")");
      }
      c.algorithm = to_string(rep.algorithm);
      c.predicted_busbw_gbps = rep.busbw_gbps;
      c.predicted_time_us = rep.time.us();
    }
    c.published = row;
    c.relative_error = (c.predicted_busbw_gbps - row.busbw_gbps) / row.busbw_gbps;
    out.push_back(std::move(c));
  }
  return out;
}

ComparisonSummary summarize(const std::vector<CollectiveComparison>& comparisons) {
  ComparisonSummary s;
  if (comparisons.empty()) return s;
  std::vector<double> errors;
  for (std::size_t i = 0; i < comparisons.size(); ++i) {
    const double e = std::abs(comparisons[i].relative_error);
    errors.push_back(e);
    if (e > s.worst_abs_error) {
      s.worst_abs_error = e;
      s.worst_row = i;
    }
  }
  std::sort(errors.begin(), errors.end());
  const std::size_t n = errors.size();
  s.median_abs_error = n % 2 ? errors[n / 2] : 0.5 * (errors[n / 2 - 1] + errors[n / 2]);
  return s;
}

std::filesystem::path write_comparison_csv(const std::vector<CollectiveComparison>& comparisons,
                                           const std::filesystem::path& out_dir) {
  std::filesystem::create_directories(out_dir);
  const auto path = out_dir / "collectives-vs-published.csv";
  std::ofstream out(path);
  out << "machine,library,op,nodes,devices,bytes,published_busbw_gbps,predicted_busbw_gbps,relative_error,"
         "algorithm,predicted_time_us,source\n";
  for (const auto& c : comparisons) {
    const auto& p = c.published;
    out << fmt::format("{},{},{},{},{},{},{:.4g},{:.4g},{:.4f},{},{:.2f},{}\n", p.machine, p.library, p.op, p.nodes,
                       p.devices, p.bytes, p.busbw_gbps, c.predicted_busbw_gbps, c.relative_error, c.algorithm,
                       c.predicted_time_us, csv_field(p.source));
  }
  if (!out) throw std::runtime_error("could not write " + path.string());
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
      gp_string(fmt::format("Collectives: predicted vs published busbw (median |error| {:.0f}%, worst {:.0f}%)",
                            100 * summary.median_abs_error, 100 * summary.worst_abs_error)),
      lo / 1.5, hi * 1.5, lo / 1.5, hi * 1.5);
  for (std::size_t s = 0; s < series.size(); ++s) {
    body += fmt::format(", \\\n     $s{} using 1:2 with points pt {} ps 1.6 title {}", s, 5 + 2 * static_cast<int>(s % 5),
                        gp_string(series[s]));
  }
  body += "\n";
  std::vector<std::filesystem::path> files;
  std::string script;
  for (const char* format : {"png", "svg"}) {
    const auto file = out_dir / fmt::format("collectives-vs-published.{}", format);
    std::filesystem::remove(file);
    const std::string terminal = std::string(format) == "png"
                                     ? "set terminal pngcairo size 1000,1000 noenhanced font \"Sans,13\" linewidth 2\n"
                                     : "set terminal svg size 900,900 noenhanced font \"Sans,12\" background \"white\"\n";
    script += "reset\n" + terminal + "set output " + gp_string(file.string()) + "\n" + body + "unset output\n";
    files.push_back(file);
  }
  {
    Gnuplot gp(fmt::format("'{}'", gnuplot->string()));
    gp << script << std::flush;
  }
  for (const auto& file : files) {
    std::error_code ec;
    if (std::filesystem::file_size(file, ec) == 0 || ec) {
      throw PlotError(fmt::format("gnuplot did not write {}", file.string()));
    }
  }
  return files;
}

}  // namespace ws
