// Starts a command (mpirun and the programs it runs) and collects what it prints, for the commands
// that measure this host: `weakscale calibrate` and `weakscale validate`.
#pragma once

#include <string>
#include <vector>

namespace ws {

struct ChildResult {
  int exit_code = -1;  // -1 when the child did not exit normally (killed by a signal)
  std::string output;  // stdout and stderr together, in the order written
};

// Runs argv[0] (searched on PATH) with `environment`, collecting its stdout and stderr.
// Throws std::runtime_error when it cannot be started.
ChildResult run_child(const std::vector<std::string>& argv, const std::vector<std::string>& environment);

// This process's environment for an mpirun child: Open MPI refuses to start as root (containers,
// CI) unless told twice, so the two OMPI_ALLOW_RUN_AS_ROOT variables are added when running as root.
std::vector<std::string> mpirun_environment();

// How mpirun starts each rank: options for mpirun itself (before the program) and a wrapper the
// rank's program runs under. Empty for ranks on this host's shared memory; the network-namespace
// mode of calibrate and validate (harness/netns) fills both.
struct RankLauncher {
  std::vector<std::string> mpirun_options;  // e.g. --mca btl self,tcp
  std::vector<std::string> wrapper;         // e.g. weakscale-netns-exec --prefix ws123n --
};

// `mpirun -n ranks [--oversubscribe] <launcher.mpirun_options> <launcher.wrapper> program...`.
std::vector<std::string> mpirun_command(const std::string& mpirun, int ranks, bool oversubscribe,
                                        const RankLauncher& launcher, const std::vector<std::string>& program);

// The words joined by spaces, as a user would retype the command.
std::string join_command(const std::vector<std::string>& argv);

}  // namespace ws
