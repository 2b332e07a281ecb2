// Reading the stdout of the OSU micro-benchmarks' osu_bw into point-to-point rows of the published
// table: a window of messages of one size streamed from one rank to another (PublishedCollective's
// point-to-point op). OSU's MB is 10^6 bytes (osu_bw divides bytes by 1e6), so GB/s = MB/s / 1000.
// osu_bw prints neither machine, library nor where its two ranks ran: --machine and --library are
// required, and --nodes must be 2 (the point-to-point model runs the ranks on two nodes).
// Not read (an error naming the title): osu_bibw, osu_mbw_mr, osu_latency (one message in flight,
// not the windowed stream the model prices) and the collective latency tests.
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "harness/published/measurement_file.hpp"
#include "harness/published/published_table.hpp"

namespace ws {

// Throws InputError naming file, line and what was expected for a malformed or truncated output.
std::vector<PublishedCollective> parse_osu_output(std::string_view text, const std::filesystem::path& file,
                                                  const BenchmarkJob& job);

}  // namespace ws
