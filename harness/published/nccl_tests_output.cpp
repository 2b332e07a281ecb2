// Reading nccl-tests / rccl-tests stdout (format: NVIDIA/nccl-tests src/util.cu and src/common.cu,
// ROCm/rccl-tests src/common.cu).
#include "harness/published/nccl_tests_output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>

#include "base/input_error.hpp"
#include "base/quantity.hpp"

namespace ws {
namespace {

// Where one half (out-of-place or in-place) of a row keeps its time, busbw and #wrong.
struct Half {
  std::size_t time = 0, busbw = 0, wrong = 0;
  bool has_busbw = false, has_wrong = false;
};

// The run's column header: how many words a row has and where its values are.
struct Columns {
  std::size_t words = 0;
  std::size_t size = 0;
  std::vector<Half> halves;
  bool cpu_time = false;  // -C: the time column is CPU time, not the time busbw comes from
  int line = 0;
};

// A row as read, its op and rank count not yet known.
struct RawRow {
  Bytes bytes = 0;
  std::string time, busbw;  // the chosen half's words
  int line = 0;
};

std::optional<Columns> parse_columns(const std::vector<std::string_view>& names, int line) {
  Columns c;
  c.line = line;
  c.words = names.size();
  bool has_size = false;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto name = names[i];
    if (name == "size") {
      c.size = i;
      has_size = true;
    } else if (name == "time" || name == "cputime") {
      c.cpu_time = name == "cputime";
      c.halves.push_back(Half{i, 0, 0, false, false});
    } else if (name == "busbw" && !c.halves.empty()) {
      c.halves.back().busbw = i;
      c.halves.back().has_busbw = true;
    } else if (name == "#wrong" && !c.halves.empty()) {
      c.halves.back().wrong = i;
      c.halves.back().has_wrong = true;
    } else if (name == "timestamp") {
      ++c.words;  // printed as two words, date and time
    }
  }
  if (!has_size || c.halves.empty()) return std::nullopt;
  for (const Half& h : c.halves) {
    if (!h.has_busbw || !h.has_wrong) return std::nullopt;
  }
  return c;
}

// all_reduce_perf -> all-reduce; the program may be printed with its directory.
std::optional<std::string> op_of_program(std::string_view program) {
  const auto slash = program.rfind('/');
  if (slash != std::string_view::npos) program.remove_prefix(slash + 1);
  if (program == "all_reduce_perf") return "all-reduce";
  if (program == "all_gather_perf") return "all-gather";
  if (program == "reduce_scatter_perf") return "reduce-scatter";
  return std::nullopt;
}

// nccl-tests' busbw / algbw (doc/PERFORMANCE.md), with algbw = size / time for these three tests.
double busbw_factor(const std::string& op, int ranks) {
  const double n = ranks;
  return op == "all-reduce" ? 2 * (n - 1) / n : (n - 1) / n;
}

// Half a unit in the last digit of a number as printed ("12.34" -> 0.005, "1.2e+03" -> 50).
double half_unit(std::string_view word) {
  int exponent = 0;
  const auto e = word.find_first_of("eE");
  if (e != std::string_view::npos) {
    exponent = static_cast<int>(parse_number(word.substr(e + 1)).value_or(0));
    word = word.substr(0, e);
  }
  const auto dot = word.find('.');
  const int decimals = dot == std::string_view::npos ? 0 : static_cast<int>(word.size() - dot - 1);
  return 0.5 * std::pow(10.0, exponent - decimals);
}

const char* kColumnHeader =
    "the nccl-tests column header '#  size  count  type  redop  root  time  algbw  busbw  #wrong ...'";

}  // namespace

std::vector<PublishedCollective> parse_nccl_tests_output(std::string_view text,
                                                         const std::filesystem::path& file,
                                                         const BenchmarkJob& job) {
  require_identity(job, file, "nccl-tests output");
  const std::string name = file.string();
  std::optional<Columns> columns;
  std::map<unsigned long long, std::string> host_of_rank;
  std::map<std::string, int> ranks_on_host;  // ordered: messages list hosts the same way every run
  int first_rank_line = 0, op_line = 0, run_line = 0, footer_line = 0, number = 0;
  std::string program, tool = "nccl-tests";
  std::vector<RawRow> raw;

  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    const bool cut = end == std::string_view::npos;  // the last line, without its newline
    if (cut) end = text.size();
    const std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    ++number;
    const InputLocation at{name, number, ""};
    if (line.rfind("rccl-tests: Version", 0) == 0) tool = "rccl-tests";
    if (!line.empty() && line.front() == '#') {
      const auto words = split_words(line.substr(1));
      if (words.empty()) continue;
      if (words[0] == "Rank") {
        // '#  Rank  3 Group  0 Pid  4242 on nid001 device  3 [0000:c1:00] NVIDIA A100'; older and
        // rccl-tests lines have no Group.
        const auto on = std::find(words.begin(), words.end(), "on");
        const auto rank = words.size() > 1 ? parse_unsigned(words[1]) : std::nullopt;
        if (!rank || on == words.end() || on + 1 == words.end()) {
          throw InputError(at, std::string(line), "a rank line '#  Rank N ... on HOST device D'");
        }
        const std::string host(*(on + 1));
        if (!host_of_rank.emplace(*rank, host).second) {
          throw InputError(
              at, std::string(line),
              fmt::format("each rank listed once (rank {} is listed twice: one run per file; nccl-tests "
                          "built without MPI=1 prints one header per process)",
                          *rank));
        }
        ++ranks_on_host[host];
        if (first_rank_line == 0) first_rank_line = number;
      } else if (words.size() >= 3 && words[0] == "Collective" && words[1] == "test" &&
                 words[2] == "starting:") {
        if (words.size() < 4)
          throw InputError(at, std::string(line), "'# Collective test starting: PROGRAM'");
        if (op_line != 0) throw InputError(at, std::string(line), "one nccl-tests run per file");
        program = std::string(words[3]);
        op_line = number;
      } else if (words[0] == "nThread") {
        if (run_line != 0) {
          throw InputError(at, std::string(line),
                           fmt::format("one nccl-tests run per file (a run began on line {})", run_line));
        }
        run_line = number;
      } else if (words[0] == "size") {
        columns = parse_columns(words, number);
        if (!columns) throw InputError(at, std::string(line), kColumnHeader);
      } else if (words.size() >= 3 && words[0] == "Avg" && words[1] == "bus" && words[2] == "bandwidth") {
        footer_line = number;
      }
      continue;
    }
    // Rows are the lines after the column header that start with a size; NCCL's own log lines
    // (NCCL_DEBUG=INFO, "host:pid:tid [0] NCCL INFO ...") and rccl-tests' version line are not.
    const auto words = split_words(line);
    if (!columns || words.empty() || !parse_unsigned(words[0])) continue;
    if (footer_line != 0) {
      throw InputError(
          at, std::string(line),
          fmt::format("no rows after the run's closing line {} (one run per file)", footer_line));
    }
    if (words.size() != columns->words) {
      throw InputError(
          at, std::string(line),
          fmt::format("{} columns as the column header on line {} names; the row has {}{}", columns->words,
                      columns->line, words.size(), cut ? " and the file ends inside it (cut short?)" : ""));
    }
    const auto size = parse_unsigned(words[columns->size]);
    if (!size || *size > static_cast<unsigned long long>(kSizeRange.high)) {
      throw InputError(InputLocation{name, number, "size"}, std::string(words[columns->size]),
                       fmt::format("a size in bytes, {}", kSizeRange.text));
    }
    // The better half; a size of 0 has no bandwidth and is skipped after its checks.
    std::optional<std::size_t> best;
    double best_score = 0;
    for (std::size_t h = 0; h < columns->halves.size(); ++h) {
      const Half& half = columns->halves[h];
      const auto wrong = words[half.wrong];
      if (wrong != "N/A" && parse_number(wrong) != 0.0) {
        throw InputError(InputLocation{name, number, "#wrong"}, std::string(wrong),
                         "0 or N/A (the run computed wrong results: its bandwidths are not a measurement)");
      }
      const auto time = parse_number(words[half.time]);
      const auto busbw = parse_number(words[half.busbw]);
      if (!time || *time < 0) {
        throw InputError(InputLocation{name, number, "time"}, std::string(words[half.time]), "a time in us");
      }
      if (!busbw || *busbw < 0 || *busbw * 1e9 > kBandwidthRange.high) {
        throw InputError(InputLocation{name, number, "busbw"}, std::string(words[half.busbw]),
                         "a bandwidth in GB/s, 0 to 100 TB/s");
      }
      // The faster half has the higher busbw (same size and factor); its time has more digits than
      // the busbw (0.29 and 0.29 at 4 KiB), except under -C, where the time is CPU time.
      const double score = columns->cpu_time ? *busbw : (*time > 0 ? 1 / *time : 0);
      if (!best || score > best_score) {
        best = h;
        best_score = score;
      }
    }
    if (*size == 0) continue;
    const Half& chosen = columns->halves[*best];
    if (parse_number(words[chosen.time]) <= 0.0) {
      throw InputError(InputLocation{name, number, "time"}, std::string(words[chosen.time]),
                       "a time above 0 us");
    }
    raw.push_back(RawRow{static_cast<Bytes>(*size), std::string(words[chosen.time]),
                         std::string(words[chosen.busbw]), number});
  }

  if (!columns) throw InputError(InputLocation{name, 0, ""}, "", kColumnHeader);
  if (footer_line == 0) {
    throw InputError(
        InputLocation{name, number, ""}, "",
        fmt::format("the run's closing '# Avg bus bandwidth' line (the file ends at line {}: cut short?)",
                    number));
  }
  if (raw.empty()) throw InputError(InputLocation{name, 0, ""}, "", "at least one row of a size above 0");

  // The op: the file's, else the command line's; both given must agree.
  std::string op = job.op;
  if (!program.empty()) {
    const auto file_op = op_of_program(program);
    if (!file_op) {
      throw InputError(InputLocation{name, op_line, ""}, program,
                       "all_reduce_perf, all_gather_perf or reduce_scatter_perf (the collectives compared)");
    }
    if (!job.op.empty() && job.op != *file_op) {
      throw InputError(
          InputLocation{name, op_line, "--op"}, job.op,
          fmt::format("{}, the op of the file's '# Collective test starting: {}' (the file and the "
                      "command line disagree)",
                      *file_op, program));
    }
    op = *file_op;
  }
  if (op.empty()) {
    throw InputError(
        InputLocation{name, 0, "--op"}, "",
        "--op all-reduce|all-gather|reduce-scatter on the command line (the file has no '# Collective "
        "test starting' line naming its test)");
  }

  // The job shape: the rank lines', else the command line's; both given must agree.
  int ranks = 0, nodes = 0;
  if (!host_of_rank.empty()) {
    ranks = static_cast<int>(host_of_rank.size());
    nodes = static_cast<int>(ranks_on_host.size());
    if (job.nodes != 0 && job.nodes != nodes) {
      throw InputError(
          InputLocation{name, first_rank_line, "--nodes"}, std::to_string(job.nodes),
          fmt::format("{}, the distinct hosts of the file's '#  Rank' lines (the file and the command "
                      "line disagree)",
                      nodes));
    }
    for (const auto& [host, count] : ranks_on_host) {
      if (job.ranks_per_node != 0 && job.ranks_per_node != count) {
        throw InputError(
            InputLocation{name, first_rank_line, "--ranks-per-node"}, std::to_string(job.ranks_per_node),
            fmt::format("{}, the ranks the file's '#  Rank' lines place on {} (the file and the command "
                        "line disagree)",
                        count, host));
      }
    }
  } else {
    if (job.nodes == 0 || job.ranks_per_node == 0) {
      throw InputError(
          InputLocation{name, 0, job.nodes == 0 ? "--nodes" : "--ranks-per-node"}, "",
          "--nodes N and --ranks-per-node R on the command line (the file has no '#  Rank ... on HOST' "
          "lines)");
    }
    nodes = job.nodes;
    ranks = job.nodes * job.ranks_per_node;
  }
  if (ranks < 2) {
    throw InputError(InputLocation{name, first_rank_line, "ranks"}, std::to_string(ranks),
                     "at least 2 ranks (the busbw of one rank is 0)");
  }

  const double factor = busbw_factor(op, ranks);
  std::vector<PublishedCollective> rows;
  for (const RawRow& r : raw) {
    const double time_us = *parse_number(r.time);
    const double printed = *parse_number(r.busbw);
    const double busbw = static_cast<double>(r.bytes) / (time_us * 1e-6) * factor * 1e-9;
    // Both printed numbers are rounded; the recomputed busbw may differ from the printed one by the
    // rounding of each (time's relative rounding carries over), not more.
    const double tolerance = half_unit(r.busbw) + busbw * half_unit(r.time) / time_us + 1e-9 * busbw;
    if (!columns->cpu_time && std::abs(busbw - printed) > tolerance) {
      throw InputError(
          InputLocation{name, r.line, "busbw"}, r.busbw,
          fmt::format("{:.4g} GB/s, the busbw of {} over {} ranks ({:.4g} x size / time): the op or "
                      "the rank count is not the run's",
                      busbw, op, ranks, factor));
    }
    // Small sizes may sit below the table's 1 MB/s floor: their busbw is latency-bound, not implausible.
    if (busbw * 1e9 > kBandwidthRange.high) {
      throw InputError(InputLocation{name, r.line, "time"}, r.time,
                       "a time giving a busbw of at most 100 TB/s");
    }
    PublishedCollective row;
    row.machine = job.machine;
    row.library = job.library;
    row.op = op;
    row.nodes = nodes;
    row.devices = ranks;
    row.bytes = r.bytes;
    row.busbw_gbps = busbw;
    row.source = fmt::format("{} {} ({})", tool, program.empty() ? op : program, file.filename().string());
    row.file = name;
    row.line = r.line;
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace ws
