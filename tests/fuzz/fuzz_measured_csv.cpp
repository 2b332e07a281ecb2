// Fuzz target: the engine's --csv rows that `weakscale validate --measured` reads back.
// Bad input must end in ws::InputError.
#include <cstdint>
#include <string>

#include "base/input_error.hpp"
#include "harness/validate/measured_runs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)ws::parse_measured_runs(std::string(reinterpret_cast<const char*>(data), size), "fuzz.csv");
  } catch (const ws::InputError&) {
  }
  return 0;
}
