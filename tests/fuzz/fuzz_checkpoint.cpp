// Fuzz target: the checkpoint format (engine/train/checkpoint_format). The same bytes are read
// as a manifest and as a shard; both checks must return a verdict, never crash or throw.
#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/train/checkpoint_format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const nlohmann::json identity{{"model", {{"layers", 2}, {"hidden", 64}}}, {"layout", "2x1x1x1"},
                                       {"batch", 8}, {"seed", 1}, {"data", "synthetic"}, {"scalar_bytes", 4}};
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ws::ShardEntry entry;
  (void)ws::check_manifest(text, "manifest.json", identity, 2, 1, entry);
  const std::vector<char> bytes(text.begin(), text.end());
  ws::ShardHeader header;
  std::vector<std::int64_t> choices;
  // A tiny model so that the fuzzer can reach the exact-size path.
  (void)ws::check_shard(bytes, "rank00001.step00000003.bin", ws::ShardExpectation{4, 1, 2, 3}, header, choices);
  return 0;
}
