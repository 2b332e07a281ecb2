// Fuzz target: weakscale-engine's command line (engine/train/engine_options), everything up to MPI
// and training. Each input byte picks a flag or a value from tables of the engine's flags and of
// values that once slipped through (nan, -1, 2^31, "", devices, a FIFO, a file above the 1 GiB
// limit); the first byte picks the rank count. Any argument vector is either refused with
// InputError or accepted: no crash, no other exception, no hang on a device or FIFO, no
// allocation of what a flag asks for.
#include <sys/stat.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/input_error.hpp"
#include "base/output_file.hpp"
#include "engine/train/engine_options.hpp"

namespace {

// Files the values refer to, made once per process in a private directory: a small text, a FIFO
// with no writer, a sparse file one byte above the limit, a CSV under another header.
struct Scratch {
  std::filesystem::path dir = ws::make_private_directory("weakscale-fuzz-engine-args");
  std::string text = (dir / "text.txt").string();
  std::string fifo = (dir / "fifo").string();
  std::string huge = (dir / "huge.txt").string();
  std::string foreign = (dir / "foreign.csv").string();
  Scratch() {
    std::ofstream(text) << std::string(4096, 'a') << "the quick brown fox jumps over the lazy dog\n";
    ::mkfifo(fifo.c_str(), 0600);
    std::ofstream(huge).put('x');
    std::filesystem::resize_file(huge, (1ull << 30) + 1);
    std::ofstream(foreign) << "name,value\nalpha,1\n";
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

const std::vector<std::string>& tokens() {
  static const Scratch scratch;
  static const std::vector<std::string> table = {
      // flags
      "--layers", "--hidden", "--heads", "--seq", "--vocab", "--batch", "--steps", "--warmup", "--peak",
      "--csv", "--trace", "--checkpoint-dir", "--checkpoint-every", "--resume", "--recompute", "--layout",
      "--seed", "--data", "--data-order", "--lr", "--goldfish-k", "--goldfish-context", "--eval-memorization",
      "--eval-sequences", "--eval-prefix", "--eval-length", "--eval-every", "--validation-data", "--no-tune",
      "--no-overlap-dp", "--no-oar", "--no-ors", "--no-oag", "--help", "--bogus", "-h", "--lr=", "--steps=-1",
      "--seed=-1",
      // numbers
      "0", "1", "2", "3", "4", "8", "16", "31", "32", "64", "255", "256", "4096", "-1", "-5", "+1", " 1",
      "1 ", "0x10", "1e3", "2.5", "1e300", "1e-300", "-1e300", "nan", "-nan", "inf", "-inf", "0.001", "10",
      "10.0001", "16777216", "16777217", "65536", "1000000000", "1000000001", "2147483646", "2147483647",
      "2147483648", "4294967296", "9223372036854775807", "9223372036854775808", "18446744073709551615",
      "18446744073709551616", "-9223372036854775808", "99999999999999999999999999999999",
      // layouts, orders, rates, text
      "", "1x1x1x1", "2x1x1x1", "4x1x1x1", "1x2x2x1", "1x1x1x2", "2x2x2x2", "0x1x1x1", "-1x1x1x1",
      "4294967296x1x1x1", "2147483647x2147483647x2147483647x2147483647", "1x1x1", "x", "random", "chunks",
      "47.5 GFLOP/s", "312 FLOP/s", "1e30 FLOP/s", "nan GFLOP/s", "-", "--", "\x1b[2J", "a\nb", "abc",
      // paths
      "/dev/zero", "/dev/null", "/dev/stdout", "/dev/full", "/nonexistent/f", "/tmp", "/", ".", scratch.text,
      scratch.fifo, scratch.huge, scratch.foreign, scratch.dir.string()};
  return table;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto& table = tokens();
  const int ranks = 1 + data[0] % 8;
  std::vector<std::string> args{"weakscale-engine"};
  for (std::size_t i = 1; i < size && args.size() < 32; ++i) args.push_back(table[data[i] % table.size()]);
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    ws::EngineCommandLine line = ws::parse_engine_command_line(static_cast<int>(argv.size()), argv.data());
    if (!line.help.empty()) return 0;
    ws::validate_engine_options(line.options, ranks);
    (void)ws::output_files_problem(line.options);
  } catch (const ws::InputError& e) {
    // One line: a message never carries a newline or an escape sequence from the arguments.
    for (const char* c = e.what(); *c != '\0'; ++c)
      if (*c == '\n' || *c == '\x1b') std::abort();
  }
  return 0;
}
