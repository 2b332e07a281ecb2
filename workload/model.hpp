// Model specifications and the training batch: the "what is trained" half of a run. Two families
// share one description: GPT-2 style (LayerNorm, GELU MLP of 4h, multi-head attention, learned
// positions, tied embeddings, biases) and Llama style (RMSNorm, SwiGLU MLP, grouped-query
// attention, rotary positions, untied embeddings, no biases). Every field that the families
// differ in defaults to GPT's value, so {name, layers, hidden, heads, sequence, vocabulary} is a
// GPT model as before.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ws {

enum class Activation { gelu, swiglu };      // MLP: gelu(x W_up) W_down, or (silu(x W_gate) * x W_up) W_down
enum class NormKind { layernorm, rmsnorm };  // RMSNorm: no mean, no bias (Zhang & Sennrich 2019)
enum class Position { learned, rope };       // a learned S x h table, or rotary (Su et al. 2021) on Q and K

const char* to_string(Activation activation);  // "gelu", "swiglu"
const char* to_string(NormKind norm);          // "layernorm", "rmsnorm"
const char* to_string(Position position);      // "learned", "rope"
std::optional<Activation> parse_activation(std::string_view text);
std::optional<NormKind> parse_norm(std::string_view text);
std::optional<Position> parse_position(std::string_view text);

struct ModelSpec {
  std::string name;
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int sequence_length = 0;
  int vocabulary = 0;
  int min_tensor_parallel = 1;  // min Gx*Gy*Gz from the sources' table (memory floor hint)
  int kv_heads = 0;             // key/value heads (grouped-query attention); 0: as many as heads
  int ffn_hidden = 0;           // MLP inner width; 0: 4 * hidden
  Activation activation = Activation::gelu;
  NormKind norm = NormKind::layernorm;
  Position position = Position::learned;
  bool tied_embeddings = true;  // the LM head reuses the token embedding
  bool biases = true;           // FC layers carry biases (GPT-2 does, Llama does not)
  double rope_base = 10000.0;   // rotary positions' base (Su et al. 2021; Llama 3: 500,000)

  int kv_head_count() const { return kv_heads > 0 ? kv_heads : heads; }
  long long head_dim() const { return heads > 0 ? hidden / heads : 0; }
  long long ffn() const { return ffn_hidden > 0 ? ffn_hidden : 4LL * hidden; }
  // Output features of the fused QKV layer: h queries, then keys and values of the kv heads.
  long long qkv_features() const { return hidden + 2LL * kv_head_count() * head_dim(); }
  // Output features of the MLP's first layer: SwiGLU fuses the gate and up projections.
  long long up_features() const { return activation == Activation::swiglu ? 2 * ffn() : ffn(); }
  // Whether every family field has GPT-2's value (what the engine trains today).
  bool gpt_style() const;
  friend bool operator==(const ModelSpec&, const ModelSpec&) = default;
};

// The Llama choices on a model's dimensions: SwiGLU, RMSNorm, rotary positions, untied embeddings,
// no biases, and (where ffn_hidden is 0) the reference implementation's MLP width, 2/3 of 4h rounded
// up to a multiple of 256 (github.com/facebookresearch/llama, model.py, FeedForward; 11,008 for
// h = 4,096).
ModelSpec with_llama_architecture(ModelSpec model);
// The engine's --family of a model: "llama" for RMSNorm models (with_llama_architecture), else "gpt".
// With --kv-heads and --ffn-hidden it is what a CSV row records of the architecture.
const char* family_name(const ModelSpec& model);
long long llama_ffn_width(long long hidden);

// "8 kv heads, swiglu ffn 28672, rmsnorm, rope, untied embeddings, no biases": what sets the model
// apart from GPT-2's architecture; empty for a GPT-style model.
std::string architecture_summary(const ModelSpec& model);

// A training batch: `sequences` sequences of the model's sequence length per step (global).
struct Batch {
  long long sequences = 0;
};

long long batch_tokens(const ModelSpec& model, const Batch& batch);

// Weights of one transformer block's four FC layers: h * qkv_features (QKV) + h^2 (output
// projection) + h * up_features + ffn * h (MLP). GPT: 12 h^2.
double block_weight_count(const ModelSpec& model);

// Parameter count: l (block weights + biases + norm vectors) + V h (embedding) + V h again when
// the LM head is untied + S h (learned positions) + the final norm. GPT: 12 l h^2 + 13 l h + V h
// + S h + 2 h.
double parameter_count(const ModelSpec& model);

// The GPT family of ../shared/docs/4d-algorithm.md (sequence 2048, GPT-2 vocabulary padded to
// 50,304 = 393 * 128 so that it divides every power-of-two tensor-parallel size up to 128).
const std::vector<ModelSpec>& gpt_family();
// Llama-2 and Llama-3 as published (model.cpp names the source of each number).
const std::vector<ModelSpec>& llama_family();
std::optional<ModelSpec> find_model(std::string_view name);
std::string model_names();  // "5B, 10B, ..., llama3-405b" for error messages

}  // namespace ws
