// `weakscale collective`: one collective (or every group of one kind of a 4D layout) on a machine,
// simulated on the flow network; `weakscale collectives-vs-published`: every row of a table of
// published collective bandwidths, predicted and compared. Arguments as parsed; the work is in
// sim/collectives and sim/study.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace ws::cli {

struct EndToEndArgs {
  std::string file = "benchmarks/end-to-end/published.csv";
  std::string out_dir = "results";
  int band_samples = 32;
};
CLI::App* add_end_to_end_command(CLI::App& app, EndToEndArgs& args);
void run_end_to_end_command(const EndToEndArgs& args, const std::string& machines_dir, std::ostream& out);

struct CollectiveArgs {
  std::string machine;
  std::string op;
  std::string bytes;
  int nodes = 0;
  int devices = 0;
  int ranks_per_node = 0;  // 0: full nodes, or devices / nodes when both are given
  std::string algorithm = "auto";
  std::string library;  // empty: the machine's default
  std::string routing;  // empty: the machine's
  std::string placement = "contiguous";
  std::uint64_t seed = 1;
  std::string layout;  // empty: one communicator of all devices
  std::string group = "data";
  int top = 10;
  bool every_step = false;  // the per-step reference instead of the phases
};

CLI::App* add_collective_command(CLI::App& app, CollectiveArgs& args);
void run_collective_command(const CollectiveArgs& args, const std::string& machines_dir, std::ostream& out);

struct CollectivesVsPublishedArgs {
  std::vector<std::string> files;  // our CSV, nccl-tests / rccl-tests or osu_bw output; rows compared together
  std::string format;              // empty: detected from each file's content
  // What benchmark output does not print (harness/published/measurement_file.hpp); empty or 0: not given.
  std::string machine, library, op;
  int nodes = 0;
  int ranks_per_node = 0;
  std::string out_dir = "results";
  bool no_plot = false;
  int band_samples = 32;  // draws of the machine files' ranges for each row's band; 0: no bands
  int jobs = 0;           // threads for the bands; 0: every core
  std::string write_machine;  // non-empty: write the machine file with the fitted library's terms here
};

CLI::App* add_collectives_vs_published_command(CLI::App& app, CollectivesVsPublishedArgs& args);
void run_collectives_vs_published_command(const CollectivesVsPublishedArgs& args, const std::string& machines_dir,
                                          std::ostream& out);

}  // namespace ws::cli
