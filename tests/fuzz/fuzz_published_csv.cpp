// Fuzz target: the published-collectives table (benchmarks/collectives/published.csv format).
// Bad input must end in ws::InputError.
#include <cstdint>
#include <sstream>
#include <string>

#include "base/input_error.hpp"
#include "harness/published/published_table.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    (void)ws::parse_published_collectives(in, "fuzz.csv");
  } catch (const ws::InputError&) {
  }
  return 0;
}
