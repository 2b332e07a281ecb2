// Fuzz target: the machine file loader (sim/machine). Bad input must end in ws::InputError (one
// line naming file, key and what was expected); any other exception, a crash or a hang is a bug.
#include <cstdint>
#include <string>

#include "base/input_error.hpp"
#include "sim/machine/machine_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const ws::Machine machine = ws::parse_machine(text, "fuzz.yaml");
    (void)machine.total_devices();
  } catch (const ws::InputError&) {
  }
  return 0;
}
