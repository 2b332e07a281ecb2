#include "engine/schedule/model.hpp"

namespace ws {

long long batch_tokens(const ModelSpec& model, const Batch& batch) {
  return batch.sequences * model.sequence_length;
}

double parameter_count(const ModelSpec& m) {
  const double l = m.layers, h = m.hidden;
  return 12.0 * l * h * h + 13.0 * l * h + static_cast<double>(m.vocabulary) * h +
         static_cast<double>(m.sequence_length) * h + 2.0 * h;
}

const std::vector<ModelSpec>& gpt_family() {
  // GPT-2's 50,257 tokens padded to a multiple of 128, as Megatron and AxoNN do.
  constexpr int kVocab = 50304;
  constexpr int kSeq = 2048;
  static const std::vector<ModelSpec> family{
      {"5B", 24, 4096, 32, kSeq, kVocab, 4},        {"10B", 32, 5120, 40, kSeq, kVocab, 8},
      {"20B", 32, 7168, 56, kSeq, kVocab, 16},      {"40B", 38, 9216, 72, kSeq, kVocab, 32},
      {"50B", 48, 9216, 72, kSeq, kVocab, 32},      {"60B", 56, 9216, 72, kSeq, kVocab, 64},
      {"80B", 42, 12288, 96, kSeq, kVocab, 64},     {"100B", 53, 12288, 96, kSeq, kVocab, 64},
      {"160B", 84, 12288, 96, kSeq, kVocab, 128},   {"175B", 96, 12288, 96, kSeq, kVocab, 128},
  };
  return family;
}

std::optional<ModelSpec> find_model(std::string_view name) {
  for (const auto& m : gpt_family()) {
    if (m.name == name) return m;
  }
  return std::nullopt;
}

std::string model_names() {
  std::string out;
  for (const auto& m : gpt_family()) {
    if (!out.empty()) out += ", ";
    out += m.name;
  }
  return out;
}

}  // namespace ws
