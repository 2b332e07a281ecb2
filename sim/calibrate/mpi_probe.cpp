#include "sim/calibrate/mpi_probe.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

extern char** environ;

namespace ws {
namespace {

struct ChildResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs argv[0] (searched on PATH) with `environment`, collecting its stdout and stderr.
ChildResult run_child(const std::vector<std::string>& argv, const std::vector<std::string>& environment) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) throw std::runtime_error("cannot create a pipe for mpirun");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[1]);
  std::vector<char*> args, env;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : environment) env.push_back(const_cast<char*>(e.c_str()));
  env.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  ChildResult result;
  if (spawned != 0) {
    ::close(pipe_fds[0]);
    throw std::runtime_error(fmt::format("cannot start {} ({}); is Open MPI installed and on PATH?", argv[0],
                                         std::strerror(spawned)));
  }
  std::array<char, 4096> buffer{};
  ssize_t n = 0;
  while ((n = ::read(pipe_fds[0], buffer.data(), buffer.size())) > 0) {
    result.output.append(buffer.data(), static_cast<std::size_t>(n));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::vector<std::string> child_environment() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry = *e;
    if (entry.rfind("OMPI_ALLOW_RUN_AS_ROOT", 0) == 0) continue;
    env.push_back(entry);
  }
  // Open MPI refuses to start as root (containers, CI) unless told twice.
  if (::geteuid() == 0) {
    env.emplace_back("OMPI_ALLOW_RUN_AS_ROOT=1");
    env.emplace_back("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1");
  }
  return env;
}

std::string join_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

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
  const auto json_path = std::filesystem::temp_directory_path() /
                         fmt::format("weakscale-calibrate-mpi-{}.json", static_cast<long>(::getpid()));
  std::vector<std::string> argv{options.mpirun, "-np", std::to_string(options.ranks)};
  const std::vector<std::string> probe{options.probe_executable, "--out", json_path.string()};
  std::vector<std::string> command = argv;
  command.insert(command.end(), probe.begin(), probe.end());
  if (options.quick) command.emplace_back("--quick");
  const auto env = child_environment();
  ChildResult run = run_child(command, env);
  // Open MPI counts slots as cores; hosts whose online CPUs are hardware threads need this.
  if (run.exit_code != 0 && run.output.find("slots") != std::string::npos) {
    command.insert(command.begin() + 3, "--oversubscribe");
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
    if (word == options.probe_executable) word = std::filesystem::path(word).filename().string();
    if (word == json_path.string()) word = "FILE";
  }
  m.command = join_command(command);
  return m;
}

}  // namespace ws
