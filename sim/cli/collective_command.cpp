#include "sim/cli/collective_command.hpp"

#include <fmt/format.h>

#include <limits>
#include <ostream>

#include "sim/collectives/collective_job.hpp"
#include "sim/core/input_error.hpp"
#include "sim/core/quantity.hpp"
#include "sim/machine/machine_loader.hpp"
#include "sim/study/published_collectives.hpp"
#include "sim/study/study_plots.hpp"

namespace ws::cli {

namespace {

InputError flag_error(const std::string& flag, const std::string& value, const std::string& expected) {
  return InputError(InputLocation{"", 0, flag}, value, expected);
}

std::string gigabytes(double bytes) { return fmt::format("{:.3f} GB", bytes * 1e-9); }

std::string format_time(Time t) {
  if (t.seconds() >= 1) return fmt::format("{:.3f} s", t.seconds());
  if (t.ms() >= 1) return fmt::format("{:.3f} ms", t.ms());
  return fmt::format("{:.3f} us", t.us());
}

}  // namespace

CLI::App* add_collective_command(CLI::App& app, CollectiveArgs& a) {
  const CLI::Range kPositive(1, std::numeric_limits<int>::max());
  CLI::App* c = app.add_subcommand(
      "collective", "Simulate one collective (or every group of one kind of a 4D layout) on the flow network");
  c->add_option("--machine", a.machine, "machine name (machines/<name>.yaml) or machine file")->required();
  c->add_option("--op", a.op, "collective")
      ->required()
      ->check(CLI::IsMember({"all-reduce", "reduce-scatter", "all-gather"}));
  c->add_option("--bytes", a.bytes, "all-reduce: buffer; reduce-scatter: input; all-gather: output (e.g. 1GiB)")
      ->required();
  auto* nodes = c->add_option("--nodes", a.nodes, "job nodes")->check(kPositive);
  c->add_option("--devices", a.devices, "job devices (ranks)")->check(kPositive);
  auto* layout = c->add_option("--layout", a.layout, "4D layout GdataxGxxGyxGz: run every --group group at once");
  c->add_option("--group", a.group, "with --layout: which groups")
      ->capture_default_str()
      ->check(CLI::IsMember({"data", "x", "y", "z"}));
  c->add_option("--algorithm", a.algorithm, "collective algorithm")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "ring", "rhd", "tree", "hierarchical", "binomial"}));
  c->add_option("--library", a.library, "collective library of the machine file (default: its first)");
  c->add_option("--routing", a.routing, "override the machine's routing")
      ->check(CLI::IsMember({"minimal", "nonminimal", "adaptive"}));
  c->add_option("--placement", a.placement, "which nodes the job gets")
      ->capture_default_str()
      ->check(CLI::IsMember({"contiguous", "scattered"}));
  c->add_option("--seed", a.seed, "placement and routing seed")->capture_default_str();
  c->add_option("--top", a.top, "busiest links to list")->capture_default_str()->check(CLI::Range(0, 1000));
  c->add_option("--max-flows", a.max_flows, "coalesce ring steps above this many flows (0: never)")
      ->capture_default_str();
  layout->excludes(nodes);
  return c;
}

void run_collective_command(const CollectiveArgs& a, const std::string& machines_dir, std::ostream& out) {
  CollectiveJobSpec spec;
  spec.op = a.op == "all-reduce" ? CollectiveOp::all_reduce
            : a.op == "reduce-scatter" ? CollectiveOp::reduce_scatter
                                       : CollectiveOp::all_gather;  // checked by CLI11
  const auto bytes = parse_bytes(a.bytes);
  if (!bytes || *bytes < 1 || *bytes > 1e15) {
    throw flag_error("--bytes", a.bytes, "a size with a unit, 1 B to 1 PB (e.g. 1GiB, 128MB, 4096B)");
  }
  spec.bytes = static_cast<Bytes>(std::llround(*bytes));
  spec.nodes = a.nodes;
  spec.devices = a.devices;
  if (!a.layout.empty()) {
    spec.layout = parse_layout(a.layout);
    if (!spec.layout) throw flag_error("--layout", a.layout, "Gdata x Gx x Gy x Gz, e.g. 512x2x2x2");
    spec.group = a.group == "x" ? GroupKind::x : a.group == "y" ? GroupKind::y : a.group == "z" ? GroupKind::z
                                                                                                : GroupKind::data;
  } else if (a.nodes == 0 && a.devices == 0) {
    throw flag_error("--nodes", "", "--nodes N, --devices N or --layout L");
  }
  if (a.algorithm != "auto") spec.algorithm = parse_algorithm(a.algorithm);
  spec.library = a.library;
  if (a.routing == "minimal") spec.routing = RoutingPolicy::minimal;
  if (a.routing == "nonminimal") spec.routing = RoutingPolicy::non_minimal;
  if (a.routing == "adaptive") spec.routing = RoutingPolicy::adaptive;
  spec.placement = a.placement == "scattered" ? PlacementKind::scattered : PlacementKind::contiguous;
  spec.seed = a.seed;
  spec.top_links = a.top;
  spec.max_flows = a.max_flows;
  const Machine machine = load_machine_by_name(a.machine, machines_dir);
  const CollectiveJobReport r = run_collective_job(machine, spec);

  out << fmt::format("machine     {} ({} nodes, {} devices), library {}\n", r.machine, r.nodes, r.devices, r.library);
  out << fmt::format("collective  {} of {} B ({}) x {} communicator{} of {} members{}\n", to_string(r.op), r.bytes,
                     gigabytes(static_cast<double>(r.bytes)), r.communicators, r.communicators == 1 ? "" : "s",
                     r.members, spec.layout ? fmt::format(" ({} groups of {})", a.group, a.layout) : "");
  out << fmt::format("algorithm   {}{} ({}), routing {}, placement {}, seed {}\n", to_string(r.algorithm),
                     r.ring_channels > 1 ? fmt::format(", {} ring channels", r.ring_channels) : "",
                     spec.algorithm ? "chosen" : "auto", to_string(r.routing), a.placement, a.seed);
  out << fmt::format("time        {}\n", format_time(r.time));
  out << fmt::format("bandwidth   algbw {:.2f} GB/s, busbw {:.2f} GB/s (NCCL definitions, per communicator)\n",
                     r.algbw_gbps, r.busbw_gbps);
  const double routed = static_cast<double>(r.minimal_routes + r.non_minimal_routes);
  out << fmt::format("flows       {}{}\n", r.flows,
                     r.max_segments > 0 ? fmt::format(" (ring steps coalesced into {} segments per ring)", r.max_segments)
                                        : "");
  out << fmt::format("route mix   minimal {} ({:.1f}%), non-minimal {} ({:.1f}%) of {} routed flows\n",
                     r.minimal_routes, routed > 0 ? 100.0 * static_cast<double>(r.minimal_routes) / routed : 0.0,
                     r.non_minimal_routes,
                     routed > 0 ? 100.0 * static_cast<double>(r.non_minimal_routes) / routed : 0.0,
                     r.minimal_routes + r.non_minimal_routes);
  if (!r.busiest.empty()) {
    out << fmt::format("busiest links (by bytes carried):\n  {:>4}  {:>12}  {:<13}  {}\n", "#", "bytes", "kind",
                       "link");
    for (std::size_t i = 0; i < r.busiest.size(); ++i) {
      const LinkUsage& l = r.busiest[i];
      out << fmt::format("  {:>4}  {:>12}  {:<13}  {} -> {}\n", i + 1, gigabytes(l.bytes), to_string(l.kind), l.from,
                         l.to);
    }
  }
}

CLI::App* add_collectives_vs_published_command(CLI::App& app, CollectivesVsPublishedArgs& a) {
  CLI::App* c = app.add_subcommand("collectives-vs-published",
                                   "Simulate every row of a published collective table and compare busbw");
  c->add_option("table", a.table, "CSV of published rows (benchmarks/collectives/published.csv)")->required();
  c->add_option("--out", a.out_dir, "directory for collectives-vs-published.csv/.png/.svg")->capture_default_str();
  c->add_flag("--no-plot", a.no_plot, "write the CSV only (no gnuplot needed)");
  return c;
}

void run_collectives_vs_published_command(const CollectivesVsPublishedArgs& a, const std::string& machines_dir,
                                          std::ostream& out) {
  const auto rows = load_published_collectives(a.table);
  const auto comparisons = compare_with_published(rows, machines_dir);
  const auto summary = summarize(comparisons);
  out << "wrote " << write_comparison_csv(comparisons, a.out_dir).string() << "\n";
  if (!a.no_plot) {
    for (const auto& file : plot_comparison(comparisons, a.out_dir)) out << "wrote " << file.string() << "\n";
  }
  const auto& w = comparisons[summary.worst_row];
  out << fmt::format("rows {}, median |relative error| {:.1f}%, worst {:.1f}%: {} {} {} {} nodes {} B "
                     "(published {:.3g} GB/s, predicted {:.3g} GB/s, {})\n",
                     comparisons.size(), 100 * summary.median_abs_error, 100 * summary.worst_abs_error,
                     w.published.machine, w.published.library, w.published.op, w.published.nodes, w.published.bytes,
                     w.published.busbw_gbps, w.predicted_busbw_gbps, w.algorithm);
}

}  // namespace ws::cli
