#include "harness/calibrate/mpi_probe.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/process/child_process.hpp"
#include "base/output_file.hpp"

namespace ws {
namespace {

std::vector<TimedCollective> read_collective_rows(const nlohmann::json& rows, CollectiveOp op, int ranks) {
  std::vector<TimedCollective> out;
  for (const auto& row : rows) {
    out.push_back(TimedCollective{op, ranks, row.at("full_bytes").get<double>(), row.at("seconds").get<double>()});
  }
  return out;
}

}  // namespace

MpiMeasurements parse_mpi_probe_json(const std::string& text) {
  try {
    const auto json = nlohmann::json::parse(text);
    MpiMeasurements m;
    m.library = json.at("library").get<std::string>();
    m.ranks = json.at("ranks").get<int>();
    m.batches = json.at("batches").get<int>();
    for (const auto& row : json.at("ping_pong")) {
      m.ping_pong.push_back(TimedTransfer{row.at("bytes").get<double>(), row.at("seconds").get<double>()});
      m.largest_bytes = std::max(m.largest_bytes, m.ping_pong.back().bytes);
    }
    for (const auto& [key, op] : {std::pair{"all_reduce", CollectiveOp::all_reduce},
                                  std::pair{"reduce_scatter", CollectiveOp::reduce_scatter},
                                  std::pair{"all_gather", CollectiveOp::all_gather}}) {
      const auto rows = read_collective_rows(json.at(key), op, m.ranks);
      m.collectives.insert(m.collectives.end(), rows.begin(), rows.end());
    }
    return m;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("unreadable MPI probe output ({}): {}", e.what(), text.substr(0, 200)));
  }
}

MpiMeasurements measure_mpi(const MpiProbeOptions& options) {
  if (!std::filesystem::is_regular_file(options.probe_executable)) {
    throw std::runtime_error(fmt::format("MPI probe {} not found (build the weakscale-calibrate-mpi target)",
                                         options.probe_executable));
  }
  // The probe's output goes to a private directory nobody else can predict or write into.
  const ScratchDirectory scratch("weakscale-calibrate-mpi");
  const auto json_path = scratch.path() / "probe.json";
  std::vector<std::string> probe{options.probe_executable, "--out", json_path.string()};
  if (options.quick) probe.emplace_back("--quick");
  const auto env = mpirun_environment();
  std::vector<std::string> command = mpirun_command(options.mpirun, options.ranks, false, options.launcher, probe);
  ChildResult run = run_child(command, env);
  // Open MPI counts slots as cores; hosts whose online CPUs are hardware threads need this.
  if (run.exit_code != 0 && run.output.find("slots") != std::string::npos) {
    command = mpirun_command(options.mpirun, options.ranks, true, options.launcher, probe);
    run = run_child(command, env);
  }
  if (run.exit_code != 0) {
    std::filesystem::remove(json_path);
    throw std::runtime_error(fmt::format("'{}' failed (exit {}): {}", join_command(command), run.exit_code,
                                         run.output.substr(0, 2000)));
  }
  std::ifstream in(json_path);
  std::ostringstream text;
  text << in.rdbuf();
  std::filesystem::remove(json_path);
  MpiMeasurements m = parse_mpi_probe_json(text.str());
  for (auto& word : command) {
    if (word == options.probe_executable || (!options.launcher.wrapper.empty() && word == options.launcher.wrapper.front()))
      word = std::filesystem::path(word).filename().string();
    if (word == json_path.string()) word = "FILE";
  }
  m.command = join_command(command);
  return m;
}

}  // namespace ws
