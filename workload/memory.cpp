// Per-device memory model (all counts in elements, then bytes). Written for the GPT family below;
// the Llama family's differences follow the same rules: QKV is h x (h + 2 kv_heads d), the MLP
// h x up_features and ffn x h (SwiGLU keeps its gate, up and product), RMSNorm has no beta, there
// are no biases or position table, and an untied LM head adds a second V x h weight.
//
// Parameters. FC weights are sharded over Gx*Gy*Gz as in ../shared/docs/4d-algorithm.md: per block
// QKV 3h^2, attention output h^2, MLP up 4h^2, MLP down 4h^2 (12 h^2). The tied embedding / LM head
// is a normal FC layer with k = h (over X) and n = V (over Y), cut again over Z; the learned
// position table (S x h) is sharded the same way (our choice). Small parameters are replicated
// over the groups that do not split their features: FC biases follow their layer's out-features
// (QKV 3h/Gy, attention output h/Gx, MLP up 4h/Gy, MLP down h/Gx), the two layer norms of a block
// and the final one follow the block input (features over X): 2*2h/Gx per block, 2h/Gx at the end.
// Bytes per parameter: mixed precision (bytes_per_element 2): weights 2, gradients 2, optimizer
// 12 (fp32 master copy + Adam m and v); fp32 training (4): 4 + 4 + 8 (Adam m and v).
//
// Activations. b = B/(Gdata*Gz) sequences and m = b*S tokens per rank. Without recomputation a
// block keeps, for the backward pass: its input and the first layer norm's output (QKV input),
// the second layer norm's input and output (MLP up input), all h/Gx features; Q, K, V (3h/Gy),
// the attention output = output-projection input (h/Gy), the GELU input and output (4h/Gy each);
// and the softmax probabilities (heads/Gy * S^2 per sequence). With recomputation only each
// block's input (h/Gx) is kept, plus the full working set of the one block being recomputed.
// The LM head keeps its input (h/Gx) and its logits (V/Gy) either way.
//
// Pipeline stages (Layout::pipeline). The first stage is the fullest: its share of the blocks,
// ceil(L / pp), plus the embedding (the last stage's LM head, tied copy or untied weight, is as large), and
// the activations of every model chunk forward has run ahead of backward: 1F1B's first stage holds
// min(pp, mb) micro-batches of its blocks, the interleaved schedule's warm-up + 1 chunks of
// L / (pp vpp) blocks (Narayanan et al., SC'21, section 2.2), each of B / (Gdata mb) sequences.
//
// Buffers. The all-gathered weight blocks (k*n/(Gx*Gy)) of the current layer and of the
// prefetched next one (OAG), both taken at the largest layer, the unsharded dW block that is
// reduce-scattered, and one output scratch for the all-reduces (m x the larger of the layer's
// local in/out features).
#include "workload/memory.hpp"

#include <algorithm>
#include <cmath>

namespace ws {
namespace {

// Saturates at 1 EiB, more than any device holds, so that the five parts still add up without
// wrapping for the largest dimensions the engine accepts (and a NaN counts as too large).
Bytes whole_bytes(double bytes) {
  constexpr double kSaturation = 1152921504606846976.0;  // 2^60
  return bytes < kSaturation ? static_cast<Bytes>(std::ceil(bytes)) : static_cast<Bytes>(kSaturation);
}

}  // namespace

MemoryEstimate estimate_memory(const ModelSpec& model, const Batch& batch, const Layout& layout,
                               int bytes_per_element, bool recompute) {
  const double h = model.hidden, l = model.layers, S = model.sequence_length, V = model.vocabulary,
               heads = model.heads;
  const double qkv = static_cast<double>(model.qkv_features()), up = static_cast<double>(model.up_features()),
               ffn = static_cast<double>(model.ffn());
  const double gx = layout.x, gy = layout.y, gz = layout.z, gd = layout.data;
  const double e = bytes_per_element;

  const bool pipelined = layout.pipelined();
  // The fullest stage: the first, with one block more where the layers do not divide.
  const double stage_blocks = std::ceil(l / layout.pipeline);
  // With stages, the first holds the embedding and the last the LM head; without, one rank both.
  const double embeddings = (model.tied_embeddings || pipelined ? 1.0 : 2.0) * V * h;
  const double positions = model.position == Position::learned ? S * h : 0.0;
  const double sharded_params = (stage_blocks * block_weight_count(model) + embeddings + positions) / (gx * gy * gz);
  const double norm_vectors = model.norm == NormKind::layernorm ? 2.0 : 1.0;  // gamma (and beta)
  const double biases = model.biases ? qkv / gy + h / gx + up / gy + h / gx : 0.0;
  const double small_params = stage_blocks * (biases + 2.0 * norm_vectors * h / gx) + norm_vectors * h / gx;
  const double params = sharded_params + small_params;

  MemoryEstimate mem;
  const bool mixed = bytes_per_element < 4;
  mem.weights_bytes = whole_bytes(params * e);
  // ZeRO-1 (Megatron-LM's distributed optimizer) keeps 1 / Gdata of the optimizer state per rank,
  // ZeRO-2 of the gradients too (ZeRO-3 is the grid's Z: its parameters are sharded above).
  const bool sharded = layout.sharded_optimizer();
  mem.gradients_bytes = whole_bytes(params * e / (sharded && layout.zero_stage == 2 ? gd : 1.0));
  mem.optimizer_bytes = whole_bytes(params * (mixed ? 12.0 : 8.0) / (sharded ? gd : 1.0));

  const double sequences = static_cast<double>(batch.sequences) / (gd * gz * layout.micro_batches);
  const double m = sequences * S;
  // Blocks whose activations are kept at once: one micro-batch of every block, or a stage's chunks
  // in flight.
  double kept_blocks = l;
  if (pipelined) {
    const double chunk_blocks = std::ceil(l / (layout.pipeline * layout.virtual_stages));
    const double chunks = layout.virtual_stages > 1
                              ? std::min<double>(2.0 * (layout.pipeline - 1) + (layout.virtual_stages - 1) * layout.pipeline + 1,
                                                 static_cast<double>(layout.micro_batches) * layout.virtual_stages)
                              : std::min(layout.pipeline, layout.micro_batches);
    kept_blocks = chunks * chunk_blocks;
  }
  // Q, K, V, the attention output, the MLP's first output (SwiGLU: gate and up) and its activation.
  // Sequence parallelism keeps the norms' and residuals' activations on S / tp of the tokens.
  const double residual_split = layout.sequence_parallel ? gx * gy : gx;
  const double block_working_set =
      m * (4.0 * h / residual_split + (qkv + h + up + ffn) / gy) + sequences * (heads / gy) * S * S;
  const double lm_head = m * (h / gx + V / gy);
  const double activations =
      recompute ? kept_blocks * m * h / residual_split + block_working_set + lm_head
                : kept_blocks * block_working_set + lm_head;
  mem.activations_bytes = whole_bytes(activations * e);

  // Largest gathered block and largest all-reduce output over the FC layers (normal: k/Gx, n/Gy;
  // transposed: k/Gy, n/Gx).
  const double max_block = std::max({h * qkv, h * up, ffn * h, V * h}) / (gx * gy);
  const double max_features = std::max({h / gx, qkv / gy, up / gy, V / gy});
  mem.buffers_bytes = whole_bytes((3.0 * max_block + m * max_features) * e);
  return mem;
}

}  // namespace ws
