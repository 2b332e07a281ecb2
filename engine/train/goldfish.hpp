// The Goldfish loss (Hans et al., "Be like a Goldfish, Don't Memorize! Mitigating Memorization in
// Generative LLMs", NeurIPS 2024, arXiv:2406.10209): a pseudo-random 1 in k of the target tokens
// is left out of the loss, chosen by a hash of the h tokens that precede it ("hashed" mask, their
// section 3.1), so the same text always drops the same tokens, in every epoch, on every rank and
// under every layout, and no training sequence is ever supervised in full.
#pragma once

#include <cstdint>

namespace ws {

// A target the loss leaves out: cross_entropy_forward adds nothing for it and its logit
// gradient is zero.
inline constexpr int kIgnoredTarget = -1;

struct GoldfishOptions {
  int k = 0;         // drop 1 in k targets; 0 = off (every target supervised)
  int context = 13;  // h: tokens hashed to decide (the paper's default is 13)
  bool enabled() const { return k > 0; }
};

// Whether the target that follows `preceding[0 .. context)` (the h tokens just before it, oldest
// first) is dropped: a 64-bit hash of the token ids, dropped when it is 0 mod k. Depends on the
// token ids only: no seed, no position, no rank.
bool goldfish_drops(const int* preceding, int context, int k);

// Marks the dropped targets of `sequences` sequences of `seq` tokens as kIgnoredTarget, in
// place. Target i follows inputs[0 .. i] (targets[i] is the token after inputs[i]); a target with
// fewer than h tokens before it inside its sequence is always kept, as in the paper. Returns the
// number of targets kept. With options off, changes nothing and returns sequences * seq.
long long apply_goldfish_mask(const GoldfishOptions& options, const int* inputs, int* targets, int sequences,
                              int seq);

}  // namespace ws
