// The `weakscale` command as a function: cli/main.cpp calls it with the process's streams, the
// command-line fuzz target (tests/fuzz/fuzz_weakscale_args) with string streams.
#pragma once

#include <iosfwd>

namespace ws::cli {

// Exit codes a script can tell apart (README, "Reliability").
inline constexpr int kSuccessExit = 0;
inline constexpr int kFailureExit = 1;         // any other failure, a broken internal invariant included
inline constexpr int kInputErrorExit = 2;      // bad input: arguments, machine file, spec
inline constexpr int kNothingFeasibleExit = 3;  // no layout fits / no feasible study point (the outputs say so)
inline constexpr int kOutputErrorExit = 4;     // an output could not be written (`out` included)

// Runs one command line: tables and results go to `out`, errors (one line each) and the study's
// progress to `err`. Returns the exit code; never throws for anything the arguments or the files
// they name can cause.
int run_weakscale(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace ws::cli
