// GPT-style model specifications and the training batch: the "what is trained" half of a run.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ws {

struct ModelSpec {
  std::string name;
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int sequence_length = 0;
  int vocabulary = 0;
  int min_tensor_parallel = 1;  // min Gx*Gy*Gz from the sources' table (memory floor hint)
};

// A training batch: `sequences` sequences of the model's sequence length per step (global).
struct Batch {
  long long sequences = 0;
};

long long batch_tokens(const ModelSpec& model, const Batch& batch);

// Parameter count: 12 l h^2 (attention + MLP weights) + 13 l h (biases, 2 layer norms)
// + V h (tied embedding / LM head) + S h (positions) + 2 h (final layer norm).
double parameter_count(const ModelSpec& model);

// The GPT family of ../shared/docs/4d-algorithm.md (sequence 2048, GPT-2 vocabulary padded to
// 50,304 = 393 * 128 so that it divides every power-of-two tensor-parallel size up to 128).
const std::vector<ModelSpec>& gpt_family();
std::optional<ModelSpec> find_model(std::string_view name);
std::string model_names();  // "5B, 10B, ..." for error messages

}  // namespace ws
