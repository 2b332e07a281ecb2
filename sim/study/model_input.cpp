#include "sim/study/model_input.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <string>

namespace ws {
namespace {
InputLocation field_location(const InputLocation& where, std::string_view field) {
  InputLocation at = where;
  at.key = at.key.empty() ? std::string(field) : fmt::format("{}.{}", at.key, field);
  return at;
}

// Limits of a custom model (README "Reliability"): well above any published model (GPT-3: 96
// layers, hidden 12,288; Llama-3 405B: 126 layers, hidden 16,384), low enough that a step's
// schedule, which grows with the layers, and the flop counts stay small and finite.
constexpr long long kMaxLayers = 4096;
constexpr long long kMaxHidden = 1LL << 20;
constexpr long long kMaxSequence = 1LL << 24;
constexpr long long kMaxVocabulary = 1LL << 24;
constexpr long long kMaxFfn = 1LL << 22;

int checked_positive(long long value, const InputLocation& where, std::string_view field, long long maximum) {
  if (value <= 0 || value > maximum) {
    throw InputError(field_location(where, field), std::to_string(value),
                     fmt::format("a positive integer of at most {} (the limit for a custom model)", maximum));
  }
  return static_cast<int>(value);
}
}  // namespace

ModelSpec named_model(std::string_view name, const InputLocation& where, std::string_view custom_hint) {
  if (auto model = find_model(name)) return *model;
  throw InputError(where, std::string(name),
                   fmt::format("a model name ({}) or {}", model_names(), custom_hint));
}

namespace {
// A named choice (family, activation, norm, position) or the error naming the allowed values.
template <class Parse>
auto choice(const std::string& text, Parse parse, const InputLocation& where, std::string_view key,
            std::string_view allowed) {
  auto value = parse(text);
  if (!value) throw InputError(field_location(where, key), text, fmt::format("one of {}", allowed));
  return *value;
}

}  // namespace

ModelSpec custom_model(const CustomModelFields& fields, const InputLocation& where,
                       const CustomModelKeys& keys) {
  ModelSpec model;
  model.layers = checked_positive(fields.layers, where, keys.layers, kMaxLayers);
  model.hidden = checked_positive(fields.hidden, where, keys.hidden, kMaxHidden);
  model.heads = checked_positive(fields.heads, where, keys.heads, kMaxHidden);
  model.sequence_length = checked_positive(fields.sequence_length, where, keys.sequence_length, kMaxSequence);
  model.vocabulary = checked_positive(fields.vocabulary, where, keys.vocabulary, kMaxVocabulary);
  if (model.hidden % model.heads != 0) {
    throw InputError(field_location(where, keys.hidden), std::to_string(model.hidden),
                     fmt::format("a multiple of {} ({})", keys.heads, model.heads));
  }
  const bool llama = !fields.family.empty() &&
                     choice(fields.family, [](std::string_view t) -> std::optional<bool> {
                       if (t == "gpt") return false;
                       if (t == "llama") return true;
                       return std::nullopt;
                     }, where, keys.family, "gpt, llama");
  if (llama) {
    model.ffn_hidden = static_cast<int>(std::min(llama_ffn_width(model.hidden), kMaxFfn));
    model = with_llama_architecture(model);
  }
  if (fields.kv_heads != 0) {
    model.kv_heads = checked_positive(fields.kv_heads, where, keys.kv_heads, model.heads);
    if (model.heads % model.kv_heads != 0)
      throw InputError(field_location(where, keys.kv_heads), std::to_string(model.kv_heads),
                       fmt::format("a divisor of {} ({})", keys.heads, model.heads));
  }
  if (fields.ffn_hidden != 0) model.ffn_hidden = checked_positive(fields.ffn_hidden, where, keys.ffn_hidden, kMaxFfn);
  if (!fields.activation.empty())
    model.activation = choice(fields.activation, parse_activation, where, keys.activation, "gelu, swiglu");
  if (!fields.norm.empty()) model.norm = choice(fields.norm, parse_norm, where, keys.norm, "layernorm, rmsnorm");
  if (!fields.position.empty())
    model.position = choice(fields.position, parse_position, where, keys.position, "learned, rope");
  if (fields.tied_embeddings) model.tied_embeddings = *fields.tied_embeddings;
  if (fields.biases) model.biases = *fields.biases;
  model.name = fmt::format("{}l{}-h{}", llama ? "llama-" : "", model.layers, model.hidden);
  // No memory-floor hint for an unpublished model: every tensor-parallel size is considered.
  model.min_tensor_parallel = 1;
  return model;
}

std::optional<Precision> parse_precision(std::string_view text) {
  if (text == "bf16") return Precision::bf16;
  if (text == "fp16") return Precision::fp16;
  if (text == "fp32") return Precision::fp32;
  return std::nullopt;
}

}  // namespace ws
