// Time to rank every layout of one weak-scaling point with the analytic model: plan_layouts for
// 8,192 devices of Frontier (machines/frontier.yaml), GPT 80B, 4,096 sequences per step; and
// Llama-3 70B on 2,048, 4D alone and every strategy together.
// Reproduce: cmake --build <build> --target bench_plan && <build>/benchmarks/bench_plan
#include <benchmark/benchmark.h>

#include "workload/model.hpp"
#include "base/ordered_tasks.hpp"
#include "sim/layout_search/plan.hpp"
#include "sim/machine/machine_loader.hpp"

namespace {

void BM_PlanLayouts(benchmark::State& state, const char* model_name) {
  const ws::Machine machine = ws::load_machine(WEAKSCALE_SOURCE_DIR "/machines/frontier.yaml");
  const ws::ModelSpec model = *ws::find_model(model_name);
  const ws::Batch batch{4096};
  const int devices = static_cast<int>(state.range(0));
  const ws::StepOptions options;
  std::size_t layouts = 0;
  for (auto _ : state) {
    const ws::Plan plan = ws::plan_layouts(machine, model, batch, devices, options);
    layouts = plan.ranked.size() + plan.over_memory.size() + plan.invalid.size();
    benchmark::DoNotOptimize(plan.ranked.data());
  }
  state.counters["layouts"] = static_cast<double>(layouts);
}

BENCHMARK_CAPTURE(BM_PlanLayouts, gpt80b, "80B")->Arg(8192)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PlanLayouts, gpt60b, "60B")->Arg(8192)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PlanLayouts, llama3_70b, "llama3-70b")->Arg(2048)->Unit(benchmark::kMillisecond);

// Issue 44's target: a 70B Llama on 2,048 devices across every strategy (4D, Megatron-LM with its
// pipelines, FSDP / HSDP) in under 10 s, closed form.
void BM_PlanAllStrategies(benchmark::State& state) {
  const ws::Machine machine = ws::load_machine(WEAKSCALE_SOURCE_DIR "/machines/frontier.yaml");
  const ws::ModelSpec model = *ws::find_model("llama3-70b");
  const ws::Batch batch{4096};
  const ws::Strategy all[] = {ws::Strategy::four_d, ws::Strategy::megatron, ws::Strategy::fsdp};
  std::size_t layouts = 0;
  for (auto _ : state) {
    // As `weakscale plan` runs it: on every core.
    ws::JobNetwork network(machine, static_cast<int>(state.range(0)));
    const ws::Plan plan = ws::plan_layouts(network, model, batch, ws::StepOptions{}, all, ws::usable_cores());
    layouts = plan.ranked.size() + plan.over_memory.size() + plan.invalid.size();
    benchmark::DoNotOptimize(plan.ranked.data());
  }
  state.counters["layouts"] = static_cast<double>(layouts);
}
BENCHMARK(BM_PlanAllStrategies)->Arg(2048)->Unit(benchmark::kMillisecond);

}  // namespace
