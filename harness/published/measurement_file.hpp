// Measured collective bandwidths in the formats they come in, read into published-table rows for
// `weakscale collectives-vs-published`:
//   csv         the project's table (published_table.hpp): header machine,library,op,nodes,devices,...
//   nccl-tests  stdout of nccl-tests / rccl-tests (all_reduce_perf, all_gather_perf,
//               reduce_scatter_perf): '#' header, '#  Rank N ... on HOST device D' lines, one row per
//               size (nccl_tests_output.hpp)
//   osu         stdout of OSU micro-benchmarks osu_bw ('# OSU MPI Bandwidth Test', '# Size
//               Bandwidth (MB/s)'): point-to-point rows (osu_output.hpp)
// A benchmark's output never names the machine or the library, and OSU's never the job shape: those
// come from the command line (BenchmarkJob). What the file prints wins over nothing; a value the file
// prints and the command line contradicts is an error naming both.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/published/published_table.hpp"

namespace ws {

enum class MeasurementFormat { csv, nccl_tests, osu };

// What the command line says about the runs (--machine, --library, --op, --nodes,
// --ranks-per-node); empty or 0: not given.
struct BenchmarkJob {
  std::string machine, library, op;
  int nodes = 0, ranks_per_node = 0;
};

// "csv", "nccl-tests" (also for rccl-tests), "osu"; nullopt for anything else.
std::optional<MeasurementFormat> parse_measurement_format(std::string_view name);
// The format by content: the CSV header line, the nccl-tests '# nThread' header or rccl-tests'
// version line, or an OSU '# OSU ' title, whichever comes first. Throws InputError naming the file
// when none does.
MeasurementFormat detect_measurement_format(std::string_view text, const std::filesystem::path& file);

// Rows of one file (read with read_input_file): in `format`, or the detected one. For csv rows, the
// job's values that are given must agree with every row.
std::vector<PublishedCollective> load_measurements(const std::filesystem::path& file,
                                                   std::optional<MeasurementFormat> format,
                                                   const BenchmarkJob& job);

// Shared by the readers: the whitespace-separated words of a line; a number that is the whole word
// (strtod syntax), or nullopt; a non-negative integer that is the whole word, or nullopt.
std::vector<std::string_view> split_words(std::string_view line);
std::optional<double> parse_number(std::string_view word);
std::optional<unsigned long long> parse_unsigned(std::string_view word);
// Throws InputError for an empty --machine or --library: `format` ("nccl-tests output") names what
// did not print them.
void require_identity(const BenchmarkJob& job, const std::filesystem::path& file, std::string_view format);

}  // namespace ws
