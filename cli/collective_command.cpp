#include "cli/collective_command.hpp"

#include "base/ordered_tasks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iterator>
#include <limits>
#include <set>
#include <optional>
#include <ostream>

#include "cli/option_checks.hpp"
#include "sim/pricing/collective_job.hpp"
#include "base/input_error.hpp"
#include "base/output_file.hpp"
#include "base/quantity.hpp"
#include "sim/machine/machine_loader.hpp"
#include "harness/published/fitted_machine_file.hpp"
#include "harness/published/measurement_file.hpp"
#include "harness/published/published_collectives.hpp"
#include "report/published/published_writers.hpp"

namespace ws::cli {

namespace {

// Whether one of the machine file's `uncertainty:` ranges moves a term of `library` (its own or
// one of its protocols'): without one, the library's band is a point.
bool library_has_range(const std::string& machine, const std::string& library, const std::string& machines_dir) {
  const Machine m = load_machine_by_name(machine, machines_dir);
  return std::any_of(m.uncertainty.begin(), m.uncertainty.end(),
                     [&](const UncertaintyRange& r) { return r.library == library; });
}

InputError flag_error(const std::string& flag, const std::string& value, const std::string& expected) {
  return InputError(InputLocation{"", 0, flag}, value, expected);
}

std::string gigabytes(double bytes) { return fmt::format("{:.3f} GB", bytes * 1e-9); }

std::string format_time(Time t) {
  if (t.seconds() >= 1) return fmt::format("{:.3f} s", t.seconds());
  if (t.ms() >= 1) return fmt::format("{:.3f} ms", t.ms());
  return fmt::format("{:.3f} us", t.us());
}

// A word as a shell would need it retyped: single-quoted when it holds anything but plain characters.
std::string shell_word(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./=:+-") ==
                           std::string::npos)
    return word;
  std::string out = "'";
  for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The fit's command line, for the written machine file's header: what a user retypes to redo it.
std::string fit_command(const CollectivesVsPublishedArgs& a) {
  std::string c = "weakscale collectives-vs-published";
  for (const auto& f : a.files) c += " " + shell_word(f);
  auto option = [&c](const char* flag, const std::string& value) {
    if (!value.empty()) c += fmt::format(" {} {}", flag, shell_word(value));
  };
  option("--format", a.format);
  option("--machine", a.machine);
  option("--library", a.library);
  option("--op", a.op);
  if (a.nodes > 0) option("--nodes", std::to_string(a.nodes));
  if (a.ranks_per_node > 0) option("--ranks-per-node", std::to_string(a.ranks_per_node));
  option("--write-machine", a.write_machine);
  return c;
}

std::string today_iso() {
  const std::chrono::year_month_day d{std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now())};
  return fmt::format("{:04}-{:02}-{:02}", static_cast<int>(d.year()), static_cast<unsigned>(d.month()),
                     static_cast<unsigned>(d.day()));
}

}  // namespace

CLI::App* add_collective_command(CLI::App& app, CollectiveArgs& a) {
  const CLI::Range kPositive(1, std::numeric_limits<int>::max());
  CLI::App* c = app.add_subcommand(
      "collective", "Simulate one collective (or every group of one kind of a 4D layout) on the machine's network");
  c->add_option("--machine", a.machine, "machine name (machines/<name>.yaml) or machine file")->required();
  c->add_option("--op", a.op, "collective")
      ->required()
      ->check(CLI::IsMember({"all-reduce", "reduce-scatter", "all-gather"}));
  c->add_option("--bytes", a.bytes, "all-reduce: buffer; reduce-scatter: input; all-gather: output (e.g. 1GiB)")
      ->required();
  auto* nodes = c->add_option("--nodes", a.nodes, "job nodes")->check(kPositive);
  c->add_option("--devices", a.devices,
                "job devices (ranks); with --nodes, spread evenly over them (srun -N nodes -n ranks)")
      ->check(kPositive);
  c->add_option("--ranks-per-node", a.ranks_per_node,
                "ranks on each node, on its first devices (srun --gpus-per-node); default: every device")
      ->check(kPositive);
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
  c->add_option("--seed", a.seed, "placement and routing seed")->capture_default_str()->check(non_negative_integer_text());
  c->add_option("--top", a.top, "busiest links to list")->capture_default_str()->check(CLI::Range(0, 1000));
  c->add_flag("--every-step", a.every_step,
              "run every send of every algorithm step as its own flow (the slow reference the phases are checked "
              "against) instead of the phases");
  layout->excludes(nodes);
  return c;
}

void run_collective_command(const CollectiveArgs& a, const std::string& machines_dir, std::ostream& out) {
  CollectiveJobSpec spec;
  spec.op = a.op == "all-reduce" ? CollectiveOp::all_reduce
            : a.op == "reduce-scatter" ? CollectiveOp::reduce_scatter
                                       : CollectiveOp::all_gather;  // checked by CLI11
  const auto bytes = parse_bytes(a.bytes);
  if (!bytes || *bytes < 1 || *bytes > 0x1p50) {
    throw flag_error("--bytes", a.bytes, "a size with a unit, 1 B to 1 PiB (e.g. 1GiB, 128MB, 4096B)");
  }
  spec.bytes = static_cast<Bytes>(std::llround(*bytes));
  spec.nodes = a.nodes;
  spec.devices = a.devices;
  spec.ranks_per_node = a.ranks_per_node;
  if (!a.layout.empty()) {
    spec.layout = parse_layout(a.layout);
    if (!spec.layout) throw flag_error("--layout", a.layout, "Gdata x Gx x Gy x Gz, e.g. 512x2x2x2");
    spec.group = a.group == "x" ? CommGroup::x : a.group == "y" ? CommGroup::y : a.group == "z" ? CommGroup::z
                                                                                                : CommGroup::data;
  } else if (a.nodes == 0 && a.devices == 0) {
    throw flag_error("--nodes", "", "--nodes N, --devices N or --layout L");
  }
  if (a.algorithm != "auto") spec.algorithm = parse_algorithm(a.algorithm);
  spec.library = a.library;
  if (a.routing == "minimal") spec.routing = RoutingPolicy::minimal;
  if (a.routing == "nonminimal") spec.routing = RoutingPolicy::non_minimal;
  if (a.routing == "adaptive") spec.routing = RoutingPolicy::adaptive;
  spec.placement = a.placement == "scattered" ? NodeAllocation::scattered : NodeAllocation::contiguous;
  spec.seed = a.seed;
  spec.top_links = a.top;
  spec.model = a.every_step ? CollectiveModel::every_step : CollectiveModel::closed_form;
  const Machine machine = load_machine_by_name(a.machine, machines_dir);
  const CollectiveJobReport r = run_collective_job(machine, spec);

  const int per_switch = machine.network.nodes_per_switch;
  out << fmt::format("machine     {} ({} node{} x {} rank{} per node, {} devices; {}), library {}\n", r.machine, r.nodes,
                     r.nodes == 1 ? "" : "s", r.ranks_per_node, r.ranks_per_node == 1 ? "" : "s", r.devices,
                     per_switch > 0 ? fmt::format("{} consecutive nodes per switch", per_switch)
                                    : std::string("NICs striped over switches"),
                     r.library);
  out << fmt::format("collective  {} of {} B ({}) x {} communicator{} of {} members{}\n", to_string(r.op), r.bytes,
                     gigabytes(static_cast<double>(r.bytes)), r.communicators, r.communicators == 1 ? "" : "s",
                     r.members, spec.layout ? fmt::format(" ({} groups of {})", a.group, a.layout) : "");
  out << fmt::format("algorithm   {}{} ({}), routing {}, placement {}, seed {}\n", to_string(r.algorithm),
                     r.ring_channels > 1 ? fmt::format(", {} ring channels", r.ring_channels) : "",
                     spec.algorithm ? "chosen" : "auto", to_string(r.routing), a.placement, a.seed);
  out << fmt::format("model       {}\n",
                     r.model == CollectiveModel::closed_form
                         ? "phases: every communicator of a phase as one flow, ring steps merged (--every-step: the "
                           "per-step reference)"
                         : fmt::format("every step: {} flows, each send of each step its own", r.flows));
  out << fmt::format("time        {}\n", format_time(r.time));
  out << fmt::format("bandwidth   algbw {:.2f} GB/s, busbw {:.2f} GB/s (NCCL definitions, per communicator)\n",
                     r.algbw_gbps, r.busbw_gbps);
  double longest = 0;
  for (const PhaseUsage& p : r.phases) longest = std::max(longest, p.time.seconds());
  for (std::size_t i = 0; i < r.phases.size(); ++i) {
    const PhaseUsage& p = r.phases[i];
    // Long programs (trees, rhd) list their phases that take at least a tenth of the longest.
    if (r.phases.size() > 6 && p.time.seconds() < 0.1 * longest) continue;
    out << fmt::format("phase {:<5} {} step{}, alone {}, non-minimal share {:.1f}%\n", i + 1, p.steps,
                       p.steps == 1 ? "" : "s", format_time(p.time), 100.0 * p.valiant_share);
  }
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
  const CLI::Range kPositive(1, std::numeric_limits<int>::max());
  CLI::App* c = app.add_subcommand(
      "collectives-vs-published",
      "Simulate every row of published or measured collective bandwidths and compare busbw");
  c->add_option("files", a.files,
                "CSV of published rows (benchmarks/collectives/published.csv), nccl-tests / rccl-tests *_perf output "
                "or osu_bw output; several files (one per run) are compared together")
      ->required();
  c->add_option("--format", a.format, "input format (default: detected from each file's content)")
      ->check(CLI::IsMember({"csv", "nccl-tests", "osu"}));
  c->add_option("--machine", a.machine,
                "machine name (machines/<name>.yaml) of benchmark output, which does not print it");
  c->add_option("--library", a.library, "collective library of benchmark output (e.g. nccl, rccl, cray-mpich)");
  c->add_option("--op", a.op, "collective of nccl-tests output that does not print '# Collective test starting'")
      ->check(CLI::IsMember({"all-reduce", "reduce-scatter", "all-gather"}));
  c->add_option("--nodes", a.nodes, "job nodes where the output has no '#  Rank ... on HOST' lines (osu_bw: 2)")
      ->check(kPositive);
  c->add_option("--ranks-per-node", a.ranks_per_node, "ranks on each node where the output has no rank lines")
      ->check(kPositive);
  c->add_option("--out", a.out_dir, "directory for collectives-vs-published.csv/.png/.svg")->capture_default_str();
  c->add_flag("--no-plot", a.no_plot, "write the CSV only (no gnuplot needed)");
  c->add_option("--band-samples", a.band_samples,
                "draws of the machine file's uncertainty ranges that price each row's band (10th-90th "
                "percentile, widened to hold the prediction as written) and each library's in-band share; 0: none")
      ->capture_default_str()
      ->check(CLI::Range(0, 10000));
  c->add_option("--jobs", a.jobs, "threads pricing the bands (default: every core)")->check(kPositive);
  c->add_option("--write-machine", a.write_machine,
                "write a copy of the rows' machine file with the library's terms fitted to them here (rows of one "
                "machine and library only); every other line and comment of the file is kept");
  return c;
}

void run_collectives_vs_published_command(const CollectivesVsPublishedArgs& a, const std::string& machines_dir,
                                          std::ostream& out) {
  std::optional<MeasurementFormat> format;
  if (!a.format.empty()) format = parse_measurement_format(a.format);  // checked by CLI11
  const BenchmarkJob job{a.machine, a.library, a.op, a.nodes, a.ranks_per_node};
  std::vector<PublishedCollective> rows;
  for (const auto& file : a.files) {
    auto more = load_measurements(file, format, job);
    rows.insert(rows.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  // --write-machine: checked before the fit, so that a typo does not cost the run. The file is one
  // machine's with one library's terms: rows of several groups have no single answer.
  std::filesystem::path machine_source;
  if (!a.write_machine.empty()) {
    std::set<std::pair<std::string, std::string>> groups;
    for (const auto& r : rows)
      if (r.op != "point-to-point") groups.emplace(r.machine, r.library);
    if (groups.size() != 1) {
      std::string found;
      for (const auto& [machine, library] : groups) found += (found.empty() ? "" : ", ") + machine + " " + library;
      throw flag_error("--write-machine", a.write_machine,
                       fmt::format("rows of exactly one (machine, library) group to fit, found {}{}", groups.size(),
                                   found.empty() ? std::string() : ": " + found));
    }
    machine_source = machine_file_path(groups.begin()->first, machines_dir);
    check_output_path(a.write_machine);
  }
  const PublishedComparison result =
      compare_with_published(rows, machines_dir, a.band_samples, a.jobs > 0 ? a.jobs : usable_cores());
  const auto& comparisons = result.rows;
  out << "wrote " << write_comparison_csv(comparisons, a.out_dir).string() << "\n";
  out << "wrote " << write_fit_csv(result, a.out_dir).string() << "\n";
  if (!a.no_plot) {
    for (const auto& file : plot_comparison(comparisons, a.out_dir)) out << "wrote " << file.string() << "\n";
  }
  if (!a.write_machine.empty()) {
    const LibraryFit& fit = result.libraries.front();  // the one group, checked above
    write_fitted_machine_file(machine_source, a.write_machine, fit, FitProvenance{fit_command(a), a.files, today_iso()});
    out << "wrote " << a.write_machine << " (" << machine_source.string() << " with " << fit.library
        << "'s terms fitted to these rows)\n";
  }
  const auto summary = summarize(comparisons);
  const auto& w = comparisons[summary.worst_row];
  out << fmt::format("rows {}, as the machine files are written: median |relative error| {:.1f}%, worst {:.1f}%: {} {} "
                     "{} {} nodes {} B (published {:.3g} GB/s, predicted {:.3g} GB/s, {})\n",
                     comparisons.size(), 100 * summary.median_abs_error, 100 * summary.worst_abs_error,
                     w.published.machine, w.published.library, w.published.op, w.published.nodes, w.published.bytes,
                     w.published.busbw_gbps, w.predicted_busbw_gbps, w.algorithm);
  const std::pair<ComparisonScheme, std::string> schemes[] = {
      {ComparisonScheme::in_sample, "library terms fitted to every row (in sample)"},
      {ComparisonScheme::kfold, fmt::format("held out, {}-fold", kFitFolds)},
      {ComparisonScheme::scale, "held out, rows above 16 nodes predicted from fits to rows of at most 16"},
      {ComparisonScheme::kfold_own, fmt::format("held out, {}-fold, rows no written term prices", kFitFolds)},
      {ComparisonScheme::scale_own, "held out, scale, rows no written term prices"}};
  for (const auto& [scheme, name] : schemes) {
    const auto s = summarize(comparisons, scheme);
    if (s.rows == 0) continue;
    const auto& r = comparisons[s.worst_row];
    out << fmt::format("{} ({} rows): median {:.1f}%, worst {:.1f}% ({} {} {} nodes {} B)\n", name, s.rows,
                       100 * s.median_abs_error, 100 * s.worst_abs_error, r.published.machine, r.published.library,
                       r.published.nodes, r.published.bytes);
  }
  // The same scores per (machine, library), as collectives-fit.csv has them: the overall worst is one
  // library's, and a user asks how far each library's held-out rows are from the target.
  auto score = [](const FitScore& s) {
    return s.rows == 0 ? std::string("-")
                       : fmt::format("{:.1f} / {:.1f}%", 100 * s.median_abs_error, 100 * s.worst_abs_error);
  };
  out << "by library, median / worst |relative error| (scale: rows above 16 nodes; floor: rows it cannot tell "
         "apart; in band: rows whose published busbw lies in their band, the 10th-90th percentile of "
      << a.band_samples
      << " draws of the machine file's uncertainty ranges widened to hold the prediction as written, target 80 %; "
         "draws: inside the percentiles alone):\n";
  out << fmt::format("  {:<11} {:<11} {:>4}  {:<15} {:<15} {:<15} {:<19} {:<7} {}\n", "machine", "library", "rows",
                     "as written", "in sample", "5-fold", "scale (rows)", "floor", "in band");
  for (const LibraryFit& f : result.libraries) {
    const std::string scale = f.scale.rows == 0 ? "-" : fmt::format("{} ({})", score(f.scale), f.scale.rows);
    const BandCoverage band = band_coverage(comparisons, f.machine, f.library);
    // A library no collective range names has a band that is a point (its rows' network draws move
    // it by a few tenths of a percent), so no share is claimed for it.
    const bool ranged = library_has_range(f.machine, f.library, machines_dir);
    out << fmt::format("  {:<11} {:<11} {:>4}  {:<15} {:<15} {:<15} {:<19} {:<7} {}\n", f.machine, f.library,
                       f.file.rows, score(f.file), score(f.in_sample), score(f.kfold), scale,
                       fmt::format("{:.1f}%", 100 * consistency_floor(comparisons, f.machine, f.library).worst_abs_error),
                       band.rows == 0 ? std::string("-")
                       : !ranged      ? std::string("- (no range covers its terms)")
                                      : fmt::format("{} of {} ({:.0f}%; draws {:.0f}%)", band.inside, band.rows,
                                                    100.0 * band.inside / band.rows,
                                                    100.0 * band.inside_draws / band.rows));
  }
  const ConsistencyFloor floor = consistency_floor(comparisons);
  if (floor.low_row && floor.high_row) {
    const auto& lo = comparisons[*floor.low_row].published;
    const auto& hi = comparisons[*floor.high_row].published;
    out << fmt::format("floor under any model's worst error: {:.1f}%: rows it cannot tell apart disagree ({} {} {} "
                       "nodes {} B: {} {:.3g} GB/s, {} {:.3g} GB/s)\n",
                       100 * floor.worst_abs_error, lo.machine, lo.library, lo.nodes, lo.bytes, lo.op, lo.busbw_gbps,
                       hi.op, hi.busbw_gbps);
  }
  // Rows above the links' bound: no fit of the library's terms reaches them, only another algorithm.
  const CeilingCount above = count_above_ceiling(comparisons);
  out << fmt::format("rows above the links' bound of the algorithm run: {} of {}; above every algorithm's: {}\n",
                     above.above_ceiling, above.rows, above.above_best_ceiling);
  for (const auto& c : comparisons) {
    if (!c.ceiling_busbw_gbps || c.published.busbw_gbps <= *c.ceiling_busbw_gbps) continue;
    out << fmt::format("  {} {} {} {} nodes {} B: published {:.3g} GB/s, {} bound {:.3g}, best algorithm's {:.3g}\n",
                       c.published.machine, c.published.library, c.published.op, c.published.nodes, c.published.bytes,
                       c.published.busbw_gbps, c.algorithm, *c.ceiling_busbw_gbps, *c.best_ceiling_busbw_gbps);
  }
}

CLI::App* add_end_to_end_command(CLI::App& app, EndToEndArgs& a) {
  CLI::App* c = app.add_subcommand("end-to-end-vs-published",
                                   "Simulate published training runs (framework, model, layout, batch) on their "
                                   "machine files as written and compare their throughput");
  c->add_option("file", a.file, "published runs (benchmarks/end-to-end/published.csv; its README says the columns)")
      ->capture_default_str();
  c->add_option("--out", a.out_dir, "directory for end-to-end-vs-published.csv")->capture_default_str();
  c->add_option("--band-samples", a.band_samples,
                "draws of the machine file's uncertainty ranges that price each row's band (10th-90th percentile, widened to hold the prediction as written); "
                "0: none")
      ->capture_default_str()
      ->check(CLI::Range(0, 10000));
  return c;
}

void run_end_to_end_command(const EndToEndArgs& a, const std::string& machines_dir, std::ostream& out) {
  const std::vector<RunComparison> comparisons =
      compare_runs_with_published(load_published_runs(a.file), machines_dir, a.band_samples);
  const std::vector<ComputeScaleFit> fits = fit_compute_scale(comparisons, machines_dir);
  out << "wrote " << write_end_to_end_csv(comparisons, fits, a.out_dir).string() << "\n";
  out << fmt::format("{:>5} {:<10} {:<16} {:>6} {:<28} {:<16} {:>10} {:>10} {:>8}\n", "line", "machine", "model",
                     "devices", "layout", "unit", "published", "simulated", "error");
  std::map<std::string, std::vector<double>> errors;
  std::map<std::string, int> in_band;
  std::vector<double> all;
  for (const RunComparison& c : comparisons) {
    const PublishedRun& r = c.run;
    if (!c.simulated) {
      out << fmt::format("{:>5} {:<10} {:<16} {:>6} not simulated: {}\n", r.line, r.machine, r.model_name, r.devices,
                         r.missing);
      continue;
    }
    const std::string band =
        c.band_high > 0 ? fmt::format("  band {:.4g}-{:.4g}{}", c.band_low, c.band_high, c.in_band() ? " (in)" : "") : "";
    out << fmt::format("{:>5} {:<10} {:<16} {:>6} {:<28} {:<16} {:>10.4g} {:>10.4g} {:>+7.1f}%{}{}\n", r.line, r.machine,
                       r.model_name, r.devices, to_string(r.layout), r.unit, r.measured, c.predicted, 100.0 * c.error,
                       band, c.fits_memory ? "" : "  (over memory in the model)");
    errors[r.machine].push_back(std::abs(c.error));
    if (c.band_high > 0) in_band[r.machine] += c.in_band();
    all.push_back(std::abs(c.error));
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  };
  out << "\n|error| by machine, machine files as written (no term fitted to these rows):\n";
  for (const auto& [machine, e] : errors)
    out << fmt::format("  {:<10} {} rows, median {:.1f} %, worst {:.1f} %{}\n", machine, e.size(), 100.0 * median(e),
                       100.0 * *std::max_element(e.begin(), e.end()),
                       a.band_samples > 0 ? fmt::format("; in band {} of {}", in_band[machine], e.size()) : "");
  if (!all.empty())
    out << fmt::format("  {:<10} {} rows, median {:.1f} %, worst {:.1f} %; {} rows not simulated\n", "all", all.size(),
                       100.0 * median(all), 100.0 * *std::max_element(all.begin(), all.end()),
                       comparisons.size() - all.size());
  if (fits.empty()) return;
  out << "\none compute factor per machine (gemm_efficiency_scale fitted to its rows; held out: each row predicted "
         "by the factor fitted to the others), |error| median / worst:\n";
  for (const ComputeScaleFit& f : fits) {
    std::vector<double> in_sample, held_out;
    for (std::size_t k = 0; k < f.rows.size(); ++k) {
      const double measured = comparisons[f.rows[k]].run.measured;
      in_sample.push_back(std::abs(f.fitted_predicted[k] / measured - 1.0));
      held_out.push_back(std::abs(f.held_out_predicted[k] / measured - 1.0));
    }
    const std::string range = f.range_high > 0 ? fmt::format(" (range {:.3g}-{:.4g})", f.range_low, f.range_high) : "";
    out << fmt::format("  {:<10} {} rows: as written {:.3g}{}, fitted {:.3f}{}; in sample {:.1f} / {:.1f} %, held out "
                       "{:.1f} / {:.1f} %\n",
                       f.machine, f.rows.size(), f.as_written, range, f.fitted,
                       f.fitted <= kComputeScaleLow * 1.001 || f.fitted >= kComputeScaleHigh * 0.999 ? " (at the searched span's end)" : "",
                       100.0 * median(in_sample), 100.0 * *std::max_element(in_sample.begin(), in_sample.end()),
                       100.0 * median(held_out), 100.0 * *std::max_element(held_out.begin(), held_out.end()));
  }
}

}  // namespace ws::cli
