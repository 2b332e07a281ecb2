// The published-collectives table (benchmarks/collectives/published.csv): one measured bus
// bandwidth per row with its source, read with errors that name file, line and column.
#pragma once

#include <filesystem>
#include <istream>
#include <string>
#include <vector>

#include "base/units.hpp"

namespace ws {

// One published measurement. op: all-reduce, reduce-scatter, all-gather, or point-to-point (an
// osu_bw-style stream of `window` messages of `bytes` from one node to another, busbw = bytes moved
// / time). bytes as nccl-tests counts them (all-gather: output; reduce-scatter: input).
struct PublishedCollective {
  std::string machine, library, op;
  int nodes = 0, devices = 0;
  Bytes bytes = 0;
  double busbw_gbps = 0;
  std::string source;
  std::string file;  // the table it came from, and its line, for messages
  int line = 0;
};

// Rows of one job: the same machine, library, nodes, devices and bytes (the op may differ).
bool same_job(const PublishedCollective& a, const PublishedCollective& b);
// Two prices or bandwidths equal within rounding: terms that price identical phases identically.
bool alike(double a, double b);

// Columns (header required, in this order): machine,library,op,nodes,devices,bytes,busbw_gbps,source.
// Throws InputError naming file, line and column for a bad row.
std::vector<PublishedCollective> load_published_collectives(const std::filesystem::path& file);
// The same from a stream; `file` names it in errors.
std::vector<PublishedCollective> parse_published_collectives(std::istream& in, const std::filesystem::path& file);

// osu_bw's default window: messages in flight per iteration.
inline constexpr int kPointToPointWindow = 64;

}  // namespace ws
