// Fuzz target: nccl-tests / rccl-tests and OSU stdout (harness/published/nccl_tests_output.hpp,
// osu_output.hpp), as `collectives-vs-published` reads them. The first byte picks the reader and
// which job facts the "command line" gives; bad input must end in ws::InputError.
#include <cstdint>
#include <string_view>

#include "base/input_error.hpp"
#include "harness/published/nccl_tests_output.hpp"
#include "harness/published/osu_output.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t pick = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  ws::BenchmarkJob job;
  job.machine = "perlmutter";
  job.library = "nccl";
  if (pick & 2) job.op = "all-reduce";
  if (pick & 4) job.nodes = 2;
  if (pick & 8) job.ranks_per_node = 4;
  try {
    if (pick & 1) {
      (void)ws::parse_osu_output(text, "fuzz.txt", job);
    } else {
      (void)ws::parse_nccl_tests_output(text, "fuzz.txt", job);
    }
  } catch (const ws::InputError&) {
  }
  return 0;
}
