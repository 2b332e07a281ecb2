#include "harness/validate/engine_runner.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/process/child_process.hpp"
#include "harness/validate/engine_trace.hpp"
#include "base/output_file.hpp"

namespace ws {
namespace {

constexpr std::size_t kOutputTailChars = 1500;

std::string tail(const std::string& text) {
  return text.size() <= kOutputTailChars ? text : "..." + text.substr(text.size() - kOutputTailChars);
}

PhaseTimes phases_of(const nlohmann::json& summary) {
  PhaseTimes t;
  t.step_s = summary.at("step_s").get<double>();
  t.compute_s = summary.at("compute_s").get<double>();
  t.cpu_s = summary.value("cpu_s", 0.0);  // diagnostic only: tolerated missing
  for (const auto& [group, figures] : summary.at("comm").items()) {
    t.exposed_comm_s[group] = figures.at("exposed_s").get<double>();
    t.progress_s += figures.value("progress_s", 0.0);
  }
  return t;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::vector<std::string> engine_command(const EngineRunner& runner, const ValidationRun& run) {
  // -x exports the variable to every rank (Open MPI).
  RankLauncher launcher = runner.launcher;
  launcher.mpirun_options.insert(launcher.mpirun_options.begin(), {"-x", "OPENBLAS_NUM_THREADS=1"});
  std::vector<std::string> program{runner.engine_executable};
  const auto args = engine_arguments(run);
  program.insert(program.end(), args.begin(), args.end());
  return mpirun_command(runner.mpirun, run.ranks(), /*oversubscribe=*/true, launcher, program);
}

PhaseTimes parse_engine_summary(const std::string& output) {
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line.front() != '{') continue;
    const auto json = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded() || json.value("event", "") != "summary") continue;
    try {
      return phases_of(json);
    } catch (const nlohmann::json::exception& e) {
      throw EngineRunError(fmt::format("unreadable engine summary ({}): {}", e.what(), line));
    }
  }
  throw EngineRunError("the engine printed no summary line; its output ends: " + tail(output));
}

PhaseTimes measure_run(const EngineRunner& runner, const ValidationRun& run,
                       const std::optional<std::filesystem::path>& keep_trace) {
  // The engine's trace goes to a private directory nobody else can predict or write into.
  const ScratchDirectory scratch("weakscale-validate");
  const auto trace = keep_trace.value_or(scratch.path() / fmt::format("{}.json", run.id));
  auto command = engine_command(runner, run);
  command.insert(command.end(), {"--trace", trace.string()});
  const ChildResult result = run_child(command, mpirun_environment());
  const std::string trace_text = read_file(trace);
  if (result.exit_code != 0) {
    throw EngineRunError(fmt::format("engine run {} failed (exit {}): {}; its output ends: {}", run.id,
                                     result.exit_code, join_command(command), tail(result.output)));
  }
  try {
    PhaseTimes measured = parse_engine_summary(result.output);
    measured.compute_by_kind_s = compute_by_kind_from_trace(trace_text, step_schedule(run), run.warmup);
    return measured;
  } catch (const std::runtime_error& e) {
    throw EngineRunError(fmt::format("engine run {} ({}): {}", run.id, join_command(command), e.what()));
  }
}

}  // namespace ws
