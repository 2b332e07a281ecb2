#include "workload/model.hpp"

#include <fmt/format.h>

#include <array>
#include <utility>

namespace ws {

namespace {
template <class Enum, std::size_t N>
std::optional<Enum> parse_named(std::string_view text, const std::array<std::pair<const char*, Enum>, N>& names) {
  for (const auto& [name, value] : names)
    if (text == name) return value;
  return std::nullopt;
}
constexpr std::array<std::pair<const char*, Activation>, 2> kActivations{
    {{"gelu", Activation::gelu}, {"swiglu", Activation::swiglu}}};
constexpr std::array<std::pair<const char*, NormKind>, 2> kNorms{
    {{"layernorm", NormKind::layernorm}, {"rmsnorm", NormKind::rmsnorm}}};
constexpr std::array<std::pair<const char*, Position>, 2> kPositions{
    {{"learned", Position::learned}, {"rope", Position::rope}}};
}  // namespace

const char* to_string(Activation activation) { return activation == Activation::gelu ? "gelu" : "swiglu"; }
const char* to_string(NormKind norm) { return norm == NormKind::layernorm ? "layernorm" : "rmsnorm"; }
const char* to_string(Position position) { return position == Position::learned ? "learned" : "rope"; }
std::optional<Activation> parse_activation(std::string_view text) { return parse_named(text, kActivations); }
std::optional<NormKind> parse_norm(std::string_view text) { return parse_named(text, kNorms); }
std::optional<Position> parse_position(std::string_view text) { return parse_named(text, kPositions); }

bool ModelSpec::gpt_style() const {
  return kv_head_count() == heads && ffn() == 4LL * hidden && activation == Activation::gelu &&
         norm == NormKind::layernorm && position == Position::learned && tied_embeddings && biases;
}

long long llama_ffn_width(long long hidden) {
  const long long two_thirds = 2 * (4 * hidden) / 3;
  return 256 * ((two_thirds + 255) / 256);
}

const char* family_name(const ModelSpec& m) { return m.norm == NormKind::rmsnorm ? "llama" : "gpt"; }

ModelSpec with_llama_architecture(ModelSpec m) {
  m.activation = Activation::swiglu, m.norm = NormKind::rmsnorm, m.position = Position::rope;
  m.tied_embeddings = false, m.biases = false;
  if (m.ffn_hidden == 0) m.ffn_hidden = static_cast<int>(llama_ffn_width(m.hidden));
  return m;
}

std::string architecture_summary(const ModelSpec& m) {
  if (m.gpt_style()) return {};
  std::string out = fmt::format("{} kv heads, {} ffn {}, {}, {}", m.kv_head_count(), to_string(m.activation), m.ffn(),
                                to_string(m.norm), to_string(m.position));
  if (!m.tied_embeddings) out += ", untied embeddings";
  if (!m.biases) out += ", no biases";
  return out;
}

long long batch_tokens(const ModelSpec& model, const Batch& batch) {
  return batch.sequences * model.sequence_length;
}

double block_weight_count(const ModelSpec& m) {
  const double h = m.hidden;
  return h * static_cast<double>(m.qkv_features()) + h * h + h * static_cast<double>(m.up_features()) +
         static_cast<double>(m.ffn()) * h;
}

double parameter_count(const ModelSpec& m) {
  const double l = m.layers, h = m.hidden, V = m.vocabulary;
  // FC biases follow their layers' output features: QKV, projection (h), MLP up, MLP down (h).
  const double biases =
      m.biases ? static_cast<double>(m.qkv_features()) + h + static_cast<double>(m.up_features()) + h : 0.0;
  const double norm_vector = m.norm == NormKind::layernorm ? 2.0 * h : h;  // gamma (and beta)
  const double embeddings = (m.tied_embeddings ? 1.0 : 2.0) * V * h;
  const double positions = m.position == Position::learned ? static_cast<double>(m.sequence_length) * h : 0.0;
  return l * (block_weight_count(m) + biases + 2.0 * norm_vector) + embeddings + positions + norm_vector;
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

namespace {
// A Llama-architecture model: RMSNorm, SwiGLU, rotary positions, untied embeddings, no biases.
// No memory-floor hint (1): the sources publish no minimum tensor-parallel size.
ModelSpec llama(const char* name, int layers, int hidden, int heads, int kv_heads, int ffn, int sequence,
                int vocabulary, double rope_base) {
  ModelSpec m{name, layers, hidden, heads, sequence, vocabulary, 1};
  m.kv_heads = kv_heads, m.ffn_hidden = ffn, m.rope_base = rope_base;
  return with_llama_architecture(m);
}
}  // namespace

const std::vector<ModelSpec>& llama_family() {
  static const std::vector<ModelSpec> family{
      // Llama 2 (Touvron et al. 2023, arXiv:2307.09288, Table 1: context 4,096, GQA on 70B only;
      // dimensions of Touvron et al. 2023a, arXiv:2302.13971, Table 2; FFN widths and the 32,000-token
      // vocabulary from the released configs, huggingface.co/meta-llama/Llama-2-{7b,70b}-hf).
      // Rotary base 10,000 (Llama 2) and 500,000 (Llama 3, Section 3.2.1): it moves no flop or
      // byte, only the engine's numbers.
      llama("llama2-7b", 32, 4096, 32, 32, 11008, 4096, 32000, 1e4),
      llama("llama2-70b", 80, 8192, 64, 8, 28672, 4096, 32000, 1e4),
      // Llama 3 (Dubey et al. 2024, "The Llama 3 Herd of Models", arXiv:2407.21783, Table 3: layers,
      // model dimension, FFN dimension, heads, 8 key/value heads; pre-training sequence 8,192; the
      // 128,256-token vocabulary of the released tokenizer, which the paper rounds to 128K).
      llama("llama3-8b", 32, 4096, 32, 8, 14336, 8192, 128256, 5e5),
      llama("llama3-70b", 80, 8192, 64, 8, 28672, 8192, 128256, 5e5),
      llama("llama3-405b", 126, 16384, 128, 8, 53248, 8192, 128256, 5e5),
  };
  return family;
}

std::optional<ModelSpec> find_model(std::string_view name) {
  for (const auto* family : {&gpt_family(), &llama_family()})
    for (const auto& m : *family)
      if (m.name == name) return m;
  return std::nullopt;
}

std::string model_names() {
  std::string out;
  for (const auto* family : {&gpt_family(), &llama_family()})
    for (const auto& m : *family) {
      if (!out.empty()) out += ", ";
      out += m.name;
    }
  return out;
}

}  // namespace ws
