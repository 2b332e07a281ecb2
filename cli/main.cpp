// The `weakscale` command: cli/weakscale_main does the work (exit codes there); this binds it to
// the process's standard streams.
#include <iostream>

#include "cli/weakscale_main.hpp"

int main(int argc, char** argv) { return ws::cli::run_weakscale(argc, argv, std::cout, std::cerr); }
