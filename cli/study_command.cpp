#include "cli/option_checks.hpp"
#include "cli/study_command.hpp"

#include "base/ordered_tasks.hpp"
#include "base/output_file.hpp"

#include <ctime>
#include <optional>
#include <algorithm>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <limits>
#include <ostream>

#include "cli/study_ranks.hpp"
#include "sim/machine/machine_loader.hpp"
#include "report/study/study_comparison.hpp"
#include "report/study/study_plots.hpp"
#include "sim/study/study_run.hpp"
#include "sim/study/uncertainty.hpp"
#include "sim/study/study_spec.hpp"
#include "report/study/study_summary.hpp"
#include "report/study/study_tables.hpp"
#include "report/study/study_writers.hpp"

namespace ws::cli {
namespace {

// A bar redrawn in place on a terminal; one plain line per finished task otherwise (logs).
StudyProgressCallback progress_display(std::ostream& progress, bool terminal) {
  if (!terminal) {
    // Points keep their "[i/n] machine devices model: best ..." line; the other tasks count tasks.
    return [&progress](const StudyProgressEvent& e) {
      const std::string line =
          e.point_line.empty() ? fmt::format("[task {}/{}] {}", e.done, e.total, e.line) : e.point_line;
      progress << line << (e.loaded ? " (from partial file)" : "") << std::endl;
    };
  }
  return [&progress](const StudyProgressEvent& e) {
    constexpr int kWidth = 30;
    const int filled = e.total > 0 ? kWidth * e.done / e.total : kWidth;
    std::string line = fmt::format("\r[{}{}] {}/{} {}", std::string(static_cast<std::size_t>(filled), '#'),
                                   std::string(static_cast<std::size_t>(kWidth - filled), '.'), e.done, e.total,
                                   e.line);
    constexpr std::size_t kColumns = 100;  // keep it on one line of a common terminal
    if (line.size() > kColumns) line.resize(kColumns);
    progress << line << "\x1b[K" << (e.done == e.total ? "\n" : "") << std::flush;
  };
}

}  // namespace

CLI::App* add_study_command(CLI::App& app, StudyArgs& a) {
  const CLI::Range kPositive(1, std::numeric_limits<int>::max());
  CLI::App* study = app.add_subcommand(
      "study", "Run a weak-scaling study: benchmarks/studies/<name>.yaml (under mpirun: spread over the ranks)");
  study->add_option("spec", a.spec_file, "study spec (YAML)")->required();
  study->add_option("--out", a.out_dir, "directory for <name>.csv/.json/.png/.svg and the tables")
      ->capture_default_str();
  study->add_flag("--no-plot", a.no_plot, "write CSV and JSON only (no gnuplot needed)");
  study->add_option("--top-k", a.top_k, "layouts kept per point in <name>-candidates.csv (default: the spec's, 10)")
      ->check(kPositive);
  // Each sample prices every point again: 10,000 is hours on a laptop, and the limit for one run.
  study->add_option("--samples", a.samples, "samples of the machine file's uncertainty ranges (median and band), at most 10000")
      ->check(CLI::Range(0, 10000));
  study->add_option("--seed", a.seed, "root seed of the samples")->capture_default_str()->check(non_negative_integer_text());
  study->add_flag("--no-placement-routing", a.no_placement_routing,
                  "skip node allocation x routing at the largest points");
  study->add_flag("--no-sensitivity", a.no_sensitivity, "skip the one-at-a-time sensitivity table");
  study->add_option("--evaluator", a.evaluator,
                    "how layouts are scored: 'flow' (the closed form's fastest --simulate-top re-ranked by the "
                    "step simulator, every collective in flight on one flow network) or 'closed-form' (each "
                    "collective alone, closed form only); 'simulated' and 'analytic' are older names of the two")
      ->check(CLI::IsMember({"flow", "closed-form", "simulated", "analytic"}))
      ->capture_default_str();
  study->add_option("--simulate-top", a.simulate_top,
                    "how many of the analytic ranking's fastest layouts the simulator re-ranks (at least --top-k)")
      ->check(kPositive)
      ->capture_default_str();
  study->add_option("--library", a.library,
                    "collective library of the machine file to price with (default: the spec's 'library', else "
                    "the file's first); the JSON records it");
  study->add_option("--set", a.settings,
                    "fix one of the machine file's uncertain parameters, NAME=VALUE (repeatable; e.g. "
                    "gemm_efficiency_scale=0.8): every point uses it, samples and the sensitivity table stop "
                    "varying it, and the JSON records it");
  study->add_flag("--restart", a.restart, "ignore <name>.partial.jsonl from an interrupted run and start over");
  // Each thread keeps its own job networks (up to a few GiB at 8,192 devices), so the count is capped.
  study->add_option("--jobs", a.jobs,
                    "threads that compute the study's tasks, at most 256 (default: every core, or 1 per rank "
                    "under mpirun with several ranks); the outputs are the same for any number")
      ->check(CLI::Range(1, 256));
  return study;
}

CLI::App* add_compare_studies_command(CLI::App& app, CompareStudiesArgs& a) {
  CLI::App* c = app.add_subcommand(
      "compare-studies", "Draw studies' best layouts side by side (one curve per study) from their JSON");
  c->add_option("studies", a.files, "the studies' JSON files (weakscale study), two to six, of one machine")
      ->required()
      ->expected(2, 6);
  c->add_option("--name", a.name, "the figure's file name, without extension")->required();
  c->add_option("--out", a.out_dir, "directory for <name>.png and <name>.svg")->capture_default_str();
  return c;
}

void run_compare_studies_command(const CompareStudiesArgs& a, std::ostream& out) {
  if (a.name.find('/') != std::string::npos || a.name == "." || a.name == "..")
    throw InputError(InputLocation{"", 0, "--name"}, a.name, "a file name without a directory");
  std::vector<ComparedStudy> studies;
  for (const std::string& file : a.files) studies.push_back(read_study_json(file));
  for (const ComparedStudy& s : studies) {
    if (s.machine != studies.front().machine)
      throw InputError(InputLocation{s.file, 0, "machine"}, s.machine,
                       fmt::format("the machine of {} ({}): studies compared share their machine",
                                   studies.front().file, studies.front().machine));
    if (s.points.empty())
      throw InputError(InputLocation{s.file, 0, "rows"}, "(no feasible point)", "a study with a feasible point");
  }
  for (const auto& file : plot_comparison(studies, a.out_dir, a.name)) out << "wrote " << file.string() << "\n";
}

bool run_study_command(const StudyArgs& a, const std::string& machines_dir, std::ostream& out,
                       std::ostream& progress) {
  StudyMpiSession mpi;  // does nothing unless started by mpirun
  try {
    StudySpec spec = load_study_spec(a.spec_file);
    if (!a.library.empty()) {
      spec.library = a.library;
      spec.library_at = InputLocation{"", 0, "--library"};
    }
    const Machine machine = with_settings(study_machine(spec, load_machine_by_name(spec.machine, machines_dir)), a.settings);
    const std::filesystem::path out_dir(a.out_dir);
    // Checked before hours of simulation: an --out that cannot be created or written is an output
    // error now, and a second study writing there at the same time is refused (rank 0 holds the
    // lock for the whole job; the other ranks only append to the partial file).
    std::optional<DirectoryLock> lock;
    if (mpi.rank() == 0) {
      try {
        lock.emplace(out_dir, fmt::format("weakscale study {} --seed {} --samples {}, started {:%Y-%m-%d %H:%M:%S}",
                                          a.spec_file, a.seed, a.samples, fmt::localtime(std::time(nullptr))));
      } catch (const OutputError& e) {
        throw OutputError(std::string("--out ") + e.what());
      }
    }
    StudyRunOptions options;
    options.evaluator = a.evaluator == "closed-form" || a.evaluator == "analytic" ? closed_form_evaluator()
                                                                                   : flow_evaluator(a.simulate_top);
    options.top_k = a.top_k > 0 ? a.top_k : spec.top_k;
    options.samples = a.samples;
    options.seed = a.seed;
    options.placement_routing = !a.no_placement_routing;
    options.sensitivity = !a.no_sensitivity && !machine.uncertainty.empty();
    options.partial_file = out_dir / (spec.name + ".partial.jsonl");
    // Every rank ignores the old lines; rank 0 also removes them (another rank may already append).
    options.resume = !a.restart;
    // A link at the partial file's name is not this study's record: it is neither read nor followed.
    if (mpi.rank() == 0 && (a.restart || std::filesystem::is_symlink(options.partial_file)))
      std::filesystem::remove(options.partial_file);
    options.ranks = mpi.ranks();
    options.jobs = a.jobs > 0 ? a.jobs : mpi.size() > 1 ? 1 : usable_cores();
    if (mpi.rank() == 0) options.progress = progress_display(progress, ::isatty(STDERR_FILENO) != 0);
    if (a.samples > 0 && machine.uncertainty.empty() && mpi.rank() == 0) {
      progress << "weakscale: note: " << machine.name << " has no uncertainty ranges; --samples ignored"
               << std::endl;
    }

    const auto result = execute_study(spec, machine, options);
    if (!result) return true;  // not rank 0: its results went to rank 0
    out << format_study_summary(*result) << "\n";
    out << "wrote " << write_study_csv(*result, out_dir).string() << "\n";
    out << "wrote " << write_study_json(*result, out_dir).string() << "\n";
    for (const auto& file : write_study_tables(*result, out_dir)) out << "wrote " << file.string() << "\n";
    // Every rank has sent its results, so the partial file is no longer needed.
    std::filesystem::remove(options.partial_file);
    const bool feasible = std::any_of(result->rows.begin(), result->rows.end(), [](const StudyRow& r) { return r.feasible; });
    if (!feasible) {
      progress << "weakscale: no point of study '" << spec.name << "' is feasible (see the table); no plots drawn"
               << std::endl;
      return false;
    }
    if (!a.no_plot) {
      for (const auto& file : plot_study(*result, out_dir)) out << "wrote " << file.string() << "\n";
    }
    return true;
  } catch (const std::exception& e) {
    if (mpi.size() <= 1) throw;
    std::cerr << "weakscale: error (rank " << mpi.rank() << "): " << e.what() << std::endl;
    mpi.abort(2);
  }
  return true;
}

}  // namespace ws::cli
