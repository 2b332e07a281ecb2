#include "harness/process/child_process.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

extern char** environ;

namespace ws {

ChildResult run_child(const std::vector<std::string>& argv, const std::vector<std::string>& environment) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) throw std::runtime_error(fmt::format("cannot create a pipe for {}", argv.at(0)));
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

std::vector<std::string> mpirun_environment() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry = *e;
    if (entry.rfind("OMPI_ALLOW_RUN_AS_ROOT", 0) == 0) continue;
    env.push_back(entry);
  }
  if (::geteuid() == 0) {
    env.emplace_back("OMPI_ALLOW_RUN_AS_ROOT=1");
    env.emplace_back("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1");
  }
  return env;
}

std::vector<std::string> mpirun_command(const std::string& mpirun, int ranks, bool oversubscribe,
                                        const RankLauncher& launcher, const std::vector<std::string>& program) {
  std::vector<std::string> c{mpirun, "-n", std::to_string(ranks)};
  if (oversubscribe) c.emplace_back("--oversubscribe");
  c.insert(c.end(), launcher.mpirun_options.begin(), launcher.mpirun_options.end());
  c.insert(c.end(), launcher.wrapper.begin(), launcher.wrapper.end());
  c.insert(c.end(), program.begin(), program.end());
  return c;
}

std::string join_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

}  // namespace ws
