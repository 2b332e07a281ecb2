// Fuzz target: the quantity parser (base/quantity.hpp). Whatever the text, a parse either
// fails or gives a finite value, and a Time never wraps (saturated or exact).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/quantity.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (const auto t = ws::parse_time(text)) {
    // A parsed time of either sign stays on its side of zero (no wrap to the other sign).
    const ws::Time doubled = *t + *t;
    if ((t->ps() > 0 && doubled.ps() < t->ps()) || (t->ps() < 0 && doubled.ps() > t->ps())) std::abort();
  }
  if (const auto b = ws::parse_bandwidth(text); b && !std::isfinite(b->bytes_per_s())) std::abort();
  if (const auto b = ws::parse_bytes(text); b && !std::isfinite(*b)) std::abort();
  if (const auto f = ws::parse_flop_rate(text); f && !std::isfinite(f->flops())) std::abort();
  return 0;
}
