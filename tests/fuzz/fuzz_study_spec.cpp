// Fuzz target: the study spec loader (sim/study/study_spec). Bad input must end in ws::InputError.
#include <cstdint>
#include <string>

#include "base/input_error.hpp"
#include "sim/study/study_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)ws::parse_study_spec(text, "fuzz.yaml");
  } catch (const ws::InputError&) {
  }
  return 0;
}
