// The engine's kernels on the shapes of the 1-rank benchmark model (hidden 1024, 16 heads,
// 4 sequences of 512 tokens: m = 2048 rows): every FC product in each GEMM layout (NN forward,
// NT dX, TN dW) and each variant (row-major call, the (B^T A^T)^T "swapped" call, materialised
// transposed B), the sgemm 1024^3 reference rate, attention and layer norm. fp32, one core.
// Reproduce: cmake --build build --target bench_engine_kernels &&
//            OPENBLAS_NUM_THREADS=1 build/benchmarks/bench_engine_kernels
#include <benchmark/benchmark.h>

#include <vector>

#include "engine/kernels/attention.hpp"
#include "engine/kernels/gemm.hpp"
#include "engine/kernels/layer_norm.hpp"

namespace {

constexpr int kTokens = 4 * 512, kHidden = 1024, kHeads = 16, kSeq = 512;

std::vector<float> filled(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 2654435761u) % 1000) * 1e-3f - 0.5f;
  return v;
}

void set_flop_rate(benchmark::State& state, double flops_per_iteration) {
  state.counters["flop/s"] = benchmark::Counter(
      flops_per_iteration, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

// C (m x n) = op(A) op(B), row-major contiguous operands, with one GEMM variant.
void BM_Gemm(benchmark::State& state, ws::Op op_a, ws::Op op_b, int m, int n, int k,
             ws::GemmVariant variant) {
  const auto a = filled(static_cast<std::size_t>(m) * k), b = filled(static_cast<std::size_t>(k) * n);
  std::vector<float> c(static_cast<std::size_t>(m) * n), scratch;
  const ws::GemmArgs<float> g{
      op_a, op_b,     m, n, k, 1.0f, a.data(), op_a == ws::Op::n ? k : m, b.data(), op_b == ws::Op::n ? n : k,
      0.0f, c.data(), n};
  for (auto _ : state) {
    ws::gemm_variant(variant, g, scratch);
    benchmark::DoNotOptimize(c.data());
  }
  set_flop_rate(state, 2.0 * m * n * k);
}

// The reference rate the step is compared with.
BENCHMARK_CAPTURE(BM_Gemm, sgemm_1024_cubed, ws::Op::n, ws::Op::n, 1024, 1024, 1024,
                  ws::GemmVariant::row_major)
    ->Unit(benchmark::kMillisecond);

// Each FC layer of a block: forward x W (NN), backward dX = dY W^T (NT), dW = X^T dY (TN), with
// (in, out) = QKV (h, 3h), proj (h, h), MLP up (h, 4h), MLP down (4h, h); and the tied LM head
// (vocabulary 50304) in its three products.
#define WS_FC_SHAPES(NAME, IN, OUT)                                                             \
  BENCHMARK_CAPTURE(BM_Gemm, NAME##_fwd_NN_row_major, ws::Op::n, ws::Op::n, kTokens, OUT, IN,   \
                    ws::GemmVariant::row_major)                                                 \
      ->Unit(benchmark::kMillisecond);                                                          \
  BENCHMARK_CAPTURE(BM_Gemm, NAME##_fwd_NN_swapped, ws::Op::n, ws::Op::n, kTokens, OUT, IN,     \
                    ws::GemmVariant::swapped)                                                   \
      ->Unit(benchmark::kMillisecond);                                                          \
  BENCHMARK_CAPTURE(BM_Gemm, NAME##_dx_NT_row_major, ws::Op::n, ws::Op::t, kTokens, IN, OUT,    \
                    ws::GemmVariant::row_major)                                                 \
      ->Unit(benchmark::kMillisecond);                                                          \
  BENCHMARK_CAPTURE(BM_Gemm, NAME##_dx_NT_swapped, ws::Op::n, ws::Op::t, kTokens, IN, OUT,      \
                    ws::GemmVariant::swapped)                                                   \
      ->Unit(benchmark::kMillisecond);                                                          \
  BENCHMARK_CAPTURE(BM_Gemm, NAME##_dx_NT_transposed_b, ws::Op::n, ws::Op::t, kTokens, IN, OUT, \
                    ws::GemmVariant::transposed_b)                                              \
      ->Unit(benchmark::kMillisecond);                                                          \
  BENCHMARK_CAPTURE(BM_Gemm, NAME##_dw_TN_row_major, ws::Op::t, ws::Op::n, IN, OUT, kTokens,    \
                    ws::GemmVariant::row_major)                                                 \
      ->Unit(benchmark::kMillisecond);                                                          \
  BENCHMARK_CAPTURE(BM_Gemm, NAME##_dw_TN_swapped, ws::Op::t, ws::Op::n, IN, OUT, kTokens,      \
                    ws::GemmVariant::swapped)                                                   \
      ->Unit(benchmark::kMillisecond);
WS_FC_SHAPES(qkv, kHidden, 3 * kHidden)
WS_FC_SHAPES(proj, kHidden, kHidden)
WS_FC_SHAPES(up, kHidden, 4 * kHidden)
WS_FC_SHAPES(down, 4 * kHidden, kHidden)
#undef WS_FC_SHAPES
BENCHMARK_CAPTURE(BM_Gemm, lm_head_fwd_NT_row_major, ws::Op::n, ws::Op::t, kTokens, 50304, kHidden,
                  ws::GemmVariant::row_major)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Gemm, lm_head_fwd_NT_swapped, ws::Op::n, ws::Op::t, kTokens, 50304, kHidden,
                  ws::GemmVariant::swapped)
    ->Unit(benchmark::kMillisecond);

// Causal attention of one 512-token sequence, 16 heads of 64 (the full-square score products
// are what runs; the flop counter uses the algorithm note's 4 S^2 h per sequence forward).
void BM_Attention(benchmark::State& state, bool backward) {
  const ws::AttentionShape shape{1, kSeq, kHeads, kHidden / kHeads};
  const auto qkv = filled(static_cast<std::size_t>(kSeq) * 3 * kHidden);
  std::vector<float> out(static_cast<std::size_t>(kSeq) * kHidden), probs(shape.probs_size());
  const auto dout = filled(out.size());
  std::vector<float> dqkv(qkv.size()), dprobs(static_cast<std::size_t>(kSeq) * kSeq);
  ws::attention_forward(shape, qkv.data(), out.data(), probs.data());
  for (auto _ : state) {
    if (backward)
      ws::attention_backward(shape, qkv.data(), probs.data(), dout.data(), dqkv.data(), dprobs.data());
    else
      ws::attention_forward(shape, qkv.data(), out.data(), probs.data());
    benchmark::ClobberMemory();
  }
  set_flop_rate(state, (backward ? 8.0 : 4.0) * kSeq * kSeq * kHidden);
}
BENCHMARK_CAPTURE(BM_Attention, forward, false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Attention, backward, true)->Unit(benchmark::kMillisecond);

// Layer norm over the 2048 x 1024 residual stream (one rank, unsharded features).
void BM_LayerNorm(benchmark::State& state, bool backward) {
  const auto x = filled(static_cast<std::size_t>(kTokens) * kHidden), dy = filled(x.size());
  std::vector<float> gamma(kHidden, 1.0f), beta(kHidden, 0.0f), y(x.size()), mean(kTokens), rstd(kTokens);
  std::vector<float> dx(x.size()), dgamma(kHidden), dbeta(kHidden);
  ws::layer_norm_forward(x.data(), gamma.data(), beta.data(), y.data(), mean.data(), rstd.data(), kTokens,
                         kHidden, kHidden);
  for (auto _ : state) {
    if (backward)
      ws::layer_norm_backward(dy.data(), x.data(), gamma.data(), mean.data(), rstd.data(), dx.data(),
                              dgamma.data(), dbeta.data(), kTokens, kHidden, kHidden);
    else
      ws::layer_norm_forward(x.data(), gamma.data(), beta.data(), y.data(), mean.data(), rstd.data(), kTokens,
                             kHidden, kHidden);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * (backward ? 3 : 2) * kTokens *
                          kHidden * static_cast<std::int64_t>(sizeof(float)));
}
BENCHMARK_CAPTURE(BM_LayerNorm, forward, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_LayerNorm, backward, true)->Unit(benchmark::kMicrosecond);

}  // namespace
