// Fuzz target: the `weakscale` command line (cli/weakscale_main), run to the end: parsing, the
// machine file, the plan (closed form and flow evaluator) or the collective, and the files it
// writes. The first input byte picks the command (plan or collective: never calibrate, validate or
// collectives-vs-published, which start MPI jobs or read large tables); each further byte picks a
// flag or a value from tables of the commands' flags and of values that probe their limits. Every
// run must end in one of the documented exit codes, and never in 1: with these arguments that is
// an exception no check refused (an InternalError, a std::out_of_range, ...), a bug. Argument
// vectors that would be slow (large jobs) or write outside a private directory are skipped, so one
// input takes well under a second and touches nothing else.
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/output_file.hpp"
#include "cli/weakscale_main.hpp"

namespace {

constexpr long long kHuge = 1LL << 30;

// Files the values refer to, made once per process in a private directory: every output path lies
// in it (inputs that name another are skipped). The working directory stays libFuzzer's, whose
// corpus and artifact paths may be relative; relative values are only ever read.
struct Scratch {
  std::filesystem::path dir = ws::make_private_directory("weakscale-fuzz-weakscale-args");
  std::string csv = (dir / "plan.csv").string();
  std::string trace = (dir / "trace.json").string();
  std::string missing = (dir / "missing" / "sub" / "out.csv").string();
  std::string slash = dir.string() + "/";
  std::string fifo = (dir / "fifo").string();
  std::string machine = (dir / "small.yaml").string();
  std::string bad_machine = (dir / "bad.yaml").string();
  Scratch() {
    ::mkfifo(fifo.c_str(), 0600);
    std::filesystem::copy_file(std::string(WEAKSCALE_SOURCE_DIR) + "/machines/local.yaml", machine);
    std::ofstream(bad_machine) << "name: bad\nnodes: 1\n";
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

const Scratch& scratch() {
  static const Scratch s;
  return s;
}

const std::vector<std::string>& tokens() {
  const Scratch& s = scratch();
  static const std::vector<std::string> table = {
      // flags of plan and collective
      "--machine", "--model", "--layers", "--hidden", "--heads", "--seq", "--vocab", "--devices", "--batch",
      "--top", "--show-invalid", "--precision", "--library", "--no-recompute", "--no-oar", "--no-ors", "--no-oag",
      "--overlap-data", "--evaluator", "--simulate-top", "--set", "--csv", "--layout", "--trace", "--op", "--bytes",
      "--nodes", "--group", "--algorithm", "--routing", "--placement", "--seed", "--every-step", "--help", "-h",
      "--bogus", "--machines-dir", "--devices=8", "--machine=frontier", "--evaluator=flow", "--top=0",
      // machines
      "frontier", "perlmutter", "alps", "local", "local-netns", "nonexistent", "frontier.yaml", "../machines/frontier",
      s.machine, s.bad_machine, s.fifo, "/dev/zero",
      // counts and numbers
      "1", "2", "3", "4", "6", "7", "8", "12", "16", "64", "0", "-1", "2147483648", "nan", "inf", "1e300", "",
      "18446744073709551615", "18446744073709551616", "0x10", " 1",
      // models, layouts, sizes
      "5B", "20B", "175B", "1T", "6B", "l2-h64", "1x1x1x8", "2x1x2x2", "1x2x2x1", "1x1x1x1", "2x1x1x1", "4x1x1x1",
      "1x1x1x4", "1x1x1x16", "2x2x2x2", "16x1x1x1", "0x1x1x1", "8x8x8x8x8", "1x1x1", "-1x1x1x1",
      "4294967296x1x1x1", "1B", "1MiB", "1GiB", "1PiB", "2PiB", "0B", "-1MiB", "1e400B", "nanB", "1.5KiB", "3B",
      "1 GB", "1GB/s",
      // choices
      "bf16", "fp16", "fp32", "closed-form", "flow", "simulated", "all-reduce", "reduce-scatter", "all-gather",
      "broadcast", "auto", "ring", "rhd", "tree", "hierarchical", "binomial", "minimal", "nonminimal", "adaptive",
      "contiguous", "scattered", "data", "x", "y", "z", "rccl", "rccl-eager", "cray-mpich", "nccl", "openmpi",
      // --set
      "gemm_efficiency_scale=0.8", "gemm_efficiency_scale=nan", "gemm_efficiency_scale=-1",
      "gemm_efficiency_scale=1e300", "gemm_efficiency_scale=0", "collective_step_latency=40 us",
      "collective_step_latency=1e300 s", "collective_bandwidth_efficiency=1", "collective_bandwidth_efficiency=0",
      "bogus=1", "=", "gemm_efficiency_scale",
      // output paths, all in the scratch directory
      s.csv, s.trace, s.missing, s.slash, s.dir.string(), "\x1b[2J", "a\nb"};
  return table;
}

// The leading integer of `text` (0 if none), clamped so that the products below cannot overflow.
long long number_or_zero(const std::string& text) {
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  return end != text.c_str() ? std::clamp(v, -kHuge, kHuge) : 0;
}

// The devices the job would have at most, by the values that follow --devices, --nodes (8 devices
// per node, Frontier's) and --layout; and whether the input asks for the slow paths.
struct Cost {
  bool outside_scratch = false;  // --csv or --trace names a file outside the scratch directory
  long long devices = 0;
  bool flow = false;        // plan --evaluator flow
  bool every_step = false;  // collective --every-step
  bool trace = false;       // plan --trace: one more step simulated
  long long layers = 0;
};

Cost cost_of(const std::vector<std::string>& args) {
  const Scratch& s = scratch();
  const std::vector<std::string> outputs = {s.csv, s.trace, s.missing, s.slash, s.dir.string()};
  Cost c;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const std::string next = i + 1 < args.size() ? args[i + 1] : "";
    if ((a == "--csv" || a == "--trace") && std::find(outputs.begin(), outputs.end(), next) == outputs.end()) {
      c.outside_scratch = true;
    }
    if (a == "--devices") c.devices = std::max(c.devices, number_or_zero(next));
    if (a == "--devices=8") c.devices = std::max(c.devices, 8LL);
    if (a == "--nodes") c.devices = std::max(c.devices, 8 * number_or_zero(next));
    if (a == "--layout") {
      long long product = 1;
      std::stringstream parts(next);
      for (std::string part; std::getline(parts, part, 'x');)
        product = std::min(product * std::max(1LL, number_or_zero(part)), kHuge);
      c.devices = std::max(c.devices, product);
    }
    if (a == "--layers") c.layers = std::max(c.layers, number_or_zero(next));
    if (a == "--model" && next != "5B" && next != "6B") c.layers = std::max(c.layers, 100LL);  // 20B: 32, 1T: 128
    if (a == "--evaluator=flow" || (a == "--evaluator" && next == "flow")) c.flow = true;
    if (a == "--every-step") c.every_step = true;
    if (a == "--trace") c.trace = true;
  }
  return c;
}

// Skipped: slow argument vectors, and those that would write outside the scratch directory (as
// root, `--csv /dev/zero` would replace the device node).
bool skipped(const Cost& c) {
  if (c.outside_scratch) return true;
  if (c.devices > 64) return true;
  if (c.every_step && c.devices > 16) return true;
  if ((c.flow || c.trace) && (c.devices > 16 || c.layers > 24)) return true;
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto& table = tokens();
  std::vector<std::string> args{"weakscale", "--machines-dir", std::string(WEAKSCALE_SOURCE_DIR) + "/machines",
                                data[0] % 2 == 0 ? "plan" : "collective"};
  for (std::size_t i = 1; i < size && args.size() < 40; ++i) args.push_back(table[data[i] % table.size()]);
  if (skipped(cost_of(args))) return 0;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::ostringstream out, err;
  const int code = ws::cli::run_weakscale(static_cast<int>(argv.size()), argv.data(), out, err);
  const std::string message = err.str();
  // Exit 1 is "any other failure": with these arguments (no MPI job, every path writable or
  // refused) there is none but a bug, an InternalError above all.
  if (code < 0 || code > 4 || code == ws::cli::kFailureExit) {
    std::fprintf(stderr, "fuzz_weakscale_args: exit %d: %s\n", code, message.c_str());
    std::abort();
  }
  // Errors are one line, whatever the arguments echo.
  if (code != 0 && code != 3) {
    const auto newline = message.find('\n');
    if (newline != message.size() - 1 || message.find('\x1b') != std::string::npos) {
      std::fprintf(stderr, "fuzz_weakscale_args: error not on one line: %s\n", message.c_str());
      std::abort();
    }
  }
  return 0;
}
