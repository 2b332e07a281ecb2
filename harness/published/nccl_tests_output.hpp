// Reading the stdout of nccl-tests and rccl-tests (all_reduce_perf, all_gather_perf,
// reduce_scatter_perf) into published-table rows: one row per message size.
//
// The columns come from the run's own column header ('#  size  count  type  redop  root  time
// algbw  busbw  #wrong ...'), so the out-of-place + in-place table, rccl-tests' in-place-only one,
// the per-iteration columns and the timestamp column all read the same way. Of the two halves of a
// row the reader takes the one with the higher busbw, i.e. the shorter time (the better of
// out-of-place and in-place, as a published figure quotes it); there is no option to pick one. busbw is
// recomputed from the size and the half's time with the nccl-tests definitions (all-reduce: 2(n-1)/n x size /
// time; all-gather and reduce-scatter: (n-1)/n x size / time) because the printed busbw has two decimals
// (0.00 for small sizes), and it must agree with the printed one within their roundings: that check catches a
// wrong --op or rank count. Rows of size 0 are skipped (no bandwidth); a row with #wrong other than 0 or N/A
// is an error (the run computed wrong results).
//
// Job shape: ranks are the '#  Rank N ... on HOST device D' lines, nodes the distinct HOSTs; without
// rank lines, --nodes and --ranks-per-node give them. The op is the '# Collective test starting:
// X_perf' line of newer nccl-tests, else --op. One run per file; a file without the closing
// '# Avg bus bandwidth' line is taken as cut short.
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "harness/published/measurement_file.hpp"
#include "harness/published/published_table.hpp"

namespace ws {

// Throws InputError naming file, line and what was expected for a malformed or truncated output.
std::vector<PublishedCollective> parse_nccl_tests_output(std::string_view text,
                                                         const std::filesystem::path& file,
                                                         const BenchmarkJob& job);

}  // namespace ws
