#include "sim/study/model_input.hpp"

#include <fmt/format.h>

#include <limits>
#include <string>

namespace ws {
namespace {
InputLocation field_location(const InputLocation& where, std::string_view field) {
  InputLocation at = where;
  at.key = at.key.empty() ? std::string(field) : fmt::format("{}.{}", at.key, field);
  return at;
}

int checked_positive(long long value, const InputLocation& where, std::string_view field) {
  if (value <= 0 || value > std::numeric_limits<int>::max()) {
    throw InputError(field_location(where, field), std::to_string(value), "a positive integer");
  }
  return static_cast<int>(value);
}
}  // namespace

ModelSpec named_model(std::string_view name, const InputLocation& where, std::string_view custom_hint) {
  if (auto model = find_model(name)) return *model;
  throw InputError(where, std::string(name),
                   fmt::format("a GPT family model name ({}) or {}", model_names(), custom_hint));
}

ModelSpec custom_model(const CustomModelFields& fields, const InputLocation& where,
                       const CustomModelKeys& keys) {
  ModelSpec model;
  model.layers = checked_positive(fields.layers, where, keys.layers);
  model.hidden = checked_positive(fields.hidden, where, keys.hidden);
  model.heads = checked_positive(fields.heads, where, keys.heads);
  model.sequence_length = checked_positive(fields.sequence_length, where, keys.sequence_length);
  model.vocabulary = checked_positive(fields.vocabulary, where, keys.vocabulary);
  if (model.hidden % model.heads != 0) {
    throw InputError(field_location(where, keys.hidden), std::to_string(model.hidden),
                     fmt::format("a multiple of {} ({})", keys.heads, model.heads));
  }
  model.name = fmt::format("l{}-h{}", model.layers, model.hidden);
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
