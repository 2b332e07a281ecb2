// Fuzz target: the engine's text data loader (engine/train/token_source). Any file is either
// refused with InputError or gives sequences of byte tokens in [0, 256) in both data orders.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "engine/train/run_config.hpp"
#include "engine/train/token_source.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/weakscale-fuzz-text-" + std::to_string(::getpid()) + ".txt";
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                 static_cast<std::streamsize>(size));
  const int seq = size > 0 ? 1 + data[0] % 64 : 8;
  for (const ws::TextOrder order : {ws::TextOrder::random_offsets, ws::TextOrder::chunks}) {
    try {
      const ws::TextFileTokens source(path, 1, seq, order, 3);
      std::vector<int> in(static_cast<std::size_t>(seq)), target(static_cast<std::size_t>(seq));
      for (long long step = 0; step < 3; ++step)
        for (long long index = 0; index < 3; ++index) {
          source.sequence(step, index, seq, in.data(), target.data());
          for (int i = 0; i < seq; ++i)
            if (in[i] < 0 || in[i] > 255 || target[i] < 0 || target[i] > 255) std::abort();
        }
    } catch (const ws::InputError&) {
    }
  }
  std::remove(path.c_str());
  return 0;
}
