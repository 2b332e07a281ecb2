// The hand-written backward pass against central finite differences of the forward pass, in
// double precision (the same templated code as fp32 training), for every parameter of a tiny
// model.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <vector>

#include "engine/model/gpt.hpp"
#include "workload/step_schedule.hpp"
#include "engine/train/token_source.hpp"
#include "tests/engine/model/central_differences.hpp"
#include "tests/engine/tiny_models.hpp"

namespace ws {
namespace {

ModelSpec tiny_model() {
  ModelSpec spec;
  spec.name = "tiny";
  spec.layers = 2;
  spec.hidden = 16;
  spec.heads = 2;
  spec.sequence_length = 8;
  spec.vocabulary = 32;
  return spec;
}

// Every parameter's analytic gradient against central differences of the mean loss, in double;
// the model's tensors are also the schedule's (rank_tensors), in its order.
void expect_central_differences(const ModelSpec& spec) {
  const ProcessGrid grid = ProcessGrid::serial();
  GemmTuner<double> tuner;
  Gpt<double> model(spec, grid, tuner, 7);
  const int sequences = 2;
  const TokenBatch batch = load_batch(SyntheticTokens(3, spec.vocabulary), 0, BatchShard{0, sequences},
                                      spec.sequence_length);
  const double tokens = sequences * spec.sequence_length;
  auto loss = [&] { return model.forward(batch.inputs.data(), batch.targets.data(), sequences) / tokens; };

  auto& store = model.parameters();
  store.zero_grads();
  loss();
  model.backward(1.0 / tokens);
  const std::vector<double> analytic = store.grads();

  const GradientCheck check = compare_with_central_differences(store, analytic, loss);
  EXPECT_LT(check.worst, 1e-6) << spec.name << " " << check.worst_at;
  EXPECT_EQ(check.checked, store.size());
  std::ostringstream text;
  text << std::scientific << check.worst;
  ::testing::Test::RecordProperty("worst_relative_error", text.str());
  EXPECT_GT(check.analytic_norm, 1e-2);  // the check is not vacuous: gradients are far from zero
  const std::vector<RankTensor> expected = rank_tensors(spec, Layout{});
  ASSERT_EQ(store.tensors().size(), expected.size());
  for (std::size_t t = 0; t < expected.size(); ++t) {
    EXPECT_EQ(store.tensors()[t].name, expected[t].name);
    EXPECT_EQ(store.tensors()[t].tensor.size, static_cast<std::size_t>(expected[t].elements));
  }
}

TEST(GptGradient, MatchesCentralFiniteDifferencesInDouble) { expect_central_differences(tiny_model()); }

// The Llama family's kernels (RMSNorm, SwiGLU, rotary positions, grouped-query attention whose
// K and V gradients add over the query heads of a group, untied LM head; no wpe, betas or biases).
TEST(GptGradient, LlamaMatchesCentralFiniteDifferencesInDouble) { expect_central_differences(tiny_llama()); }

TEST(GptGradient, FloatAndDoubleModelsAgree) {
  const ModelSpec spec = tiny_model();
  const ProcessGrid grid = ProcessGrid::serial();
  GemmTuner<float> tuner_f;
  GemmTuner<double> tuner_d;
  Gpt<float> model_f(spec, grid, tuner_f, 11);
  Gpt<double> model_d(spec, grid, tuner_d, 11);
  const TokenBatch batch = load_batch(SyntheticTokens(5, spec.vocabulary), 0, BatchShard{0, 3}, spec.sequence_length);
  const double loss_f = model_f.forward(batch.inputs.data(), batch.targets.data(), 3);
  const double loss_d = model_d.forward(batch.inputs.data(), batch.targets.data(), 3);
  EXPECT_NEAR(loss_f, loss_d, 1e-5 * std::fabs(loss_d));
  // An untrained model predicts roughly uniformly: mean loss near log(V).
  EXPECT_NEAR(loss_d / (3 * spec.sequence_length), std::log(spec.vocabulary), 0.5);
}

}  // namespace
}  // namespace ws
