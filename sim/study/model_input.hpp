// Turns user-given model and precision choices (a study file or command-line flags) into the
// schedule's ModelSpec and Precision, rejecting what a GPT model cannot be with InputError.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "workload/model.hpp"
#include "base/input_error.hpp"
#include "sim/machine/machine.hpp"

namespace ws {

// The numbers of a model that is not a preset. `family` (gpt or llama) sets the architecture's
// defaults (GPT-2: LayerNorm, GELU, learned positions, tied embeddings, biases; Llama: RMSNorm,
// SwiGLU, rotary positions, untied embeddings, no biases); the other fields, where given, override
// them. Empty text and 0 mean "the family's".
struct CustomModelFields {
  long long layers = 0;
  long long hidden = 0;
  long long heads = 0;
  long long sequence_length = 0;
  long long vocabulary = 0;
  std::string family{};
  long long kv_heads = 0;    // 0: heads
  long long ffn_hidden = 0;  // 0: 4 hidden (GPT), the Llama rule 2/3 x 4h rounded up to 256 (Llama)
  std::string activation{}, norm{}, position{};
  std::optional<bool> tied_embeddings{}, biases{};
};

// How the fields are called where the user wrote them: YAML keys by default, flags on the CLI.
struct CustomModelKeys {
  std::string_view layers = "layers";
  std::string_view hidden = "hidden";
  std::string_view heads = "heads";
  std::string_view sequence_length = "sequence_length";
  std::string_view vocabulary = "vocabulary";
  std::string_view family = "family";
  std::string_view kv_heads = "kv_heads";
  std::string_view ffn_hidden = "ffn_hidden";
  std::string_view activation = "activation";
  std::string_view norm = "norm";
  std::string_view position = "position";
};

// A named GPT-family model; unknown names list the allowed ones. `custom_hint` says how a model
// outside the family is given where the user is ("a map of layers, ...", "--layers/--hidden/...").
ModelSpec named_model(std::string_view name, const InputLocation& where, std::string_view custom_hint);

// Checks every field is a positive int, hidden divides into heads and heads into kv_heads, and the
// named choices are known. The name reads "l<layers>-h<hidden>" (GPT) or "llama-l<layers>-h<hidden>"
// so that result rows say which custom model they are. Errors name the
// field as where.key + "." + field key, or the field key alone when where.key is empty.
ModelSpec custom_model(const CustomModelFields& fields, const InputLocation& where,
                       const CustomModelKeys& keys = {});

std::optional<Precision> parse_precision(std::string_view text);
inline constexpr std::string_view kPrecisionNames = "bf16, fp16, fp32";

}  // namespace ws
