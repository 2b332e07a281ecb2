// Running a shell command line from a CLI test: its standard output captured, its standard error
// through a file, its exit code. Shared by the tests of the `weakscale` binary.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace ws::testing {

struct CommandRun {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `command` under /bin/sh with stderr sent to `err_file` (read back, then left in place).
inline CommandRun run_command(const std::string& command, const std::filesystem::path& err_file) {
  CommandRun run;
  FILE* pipe = ::popen((command + " 2>'" + err_file.string() + "'").c_str(), "r");
  if (!pipe) return run;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) run.out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  run.err = text.str();
  return run;
}

}  // namespace ws::testing
