// Replays fuzz inputs through a fuzz target without libFuzzer: every file under the directories
// given (the seed corpus and the crashes found, kept as regressions) is fed to
// LLVMFuzzerTestOneInput once. Built with the normal and the sanitizer builds, so CI re-checks
// every input the fuzzers ever failed on.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  std::size_t inputs = 0;
  for (int a = 1; a < argc; ++a) {
    std::error_code ec;
    if (!std::filesystem::is_directory(argv[a], ec)) continue;  // a target may have no regressions yet
    for (const auto& entry : std::filesystem::recursive_directory_iterator(argv[a])) {
      if (!entry.is_regular_file()) continue;
      std::ifstream in(entry.path(), std::ios::binary);
      const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
      ++inputs;
    }
  }
  std::printf("replayed %zu inputs\n", inputs);
  return inputs > 0 ? 0 : 1;
}
