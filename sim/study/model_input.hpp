// Turns user-given model and precision choices (a study file or command-line flags) into the
// schedule's ModelSpec and Precision, rejecting what a GPT model cannot be with InputError.
#pragma once

#include <optional>
#include <string_view>

#include "engine/schedule/model.hpp"
#include "base/input_error.hpp"
#include "sim/machine/machine.hpp"

namespace ws {

// The numbers of a model that is not in the GPT family.
struct CustomModelFields {
  long long layers = 0;
  long long hidden = 0;
  long long heads = 0;
  long long sequence_length = 0;
  long long vocabulary = 0;
};

// How the fields are called where the user wrote them: YAML keys by default, flags on the CLI.
struct CustomModelKeys {
  std::string_view layers = "layers";
  std::string_view hidden = "hidden";
  std::string_view heads = "heads";
  std::string_view sequence_length = "sequence_length";
  std::string_view vocabulary = "vocabulary";
};

// A named GPT-family model; unknown names list the allowed ones. `custom_hint` says how a model
// outside the family is given where the user is ("a map of layers, ...", "--layers/--hidden/...").
ModelSpec named_model(std::string_view name, const InputLocation& where, std::string_view custom_hint);

// Checks every field is a positive int and hidden divides into heads. The name reads
// "l<layers>-h<hidden>" so that result rows say which custom model they are. Errors name the
// field as where.key + "." + field key, or the field key alone when where.key is empty.
ModelSpec custom_model(const CustomModelFields& fields, const InputLocation& where,
                       const CustomModelKeys& keys = {});

std::optional<Precision> parse_precision(std::string_view text);
inline constexpr std::string_view kPrecisionNames = "bf16, fp16, fp32";

}  // namespace ws
