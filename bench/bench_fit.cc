// The fit search: plans evaluated per second, and whole searches as a user runs them.
#include <benchmark/benchmark.h>

#include "engines/vllm/engine.h"
#include "vramfit/fit.h"
#include "vramfit/inspect.h"

namespace {

std::vector<vramfit::GpuSpec> NvidiaCatalog() {
  std::vector<vramfit::GpuSpec> out;
  const auto catalog = vramfit::GpuCatalog();  // kept alive for the loop
  for (const auto& g : *catalog) if (g.vendor == "nvidia") out.push_back(g);
  return out;
}

void Search(benchmark::State& state, const char* model, vramfit::FitGoal goal, bool catalog,
            int64_t min_context, double min_concurrency) {
  const auto inv = vramfit::InspectModel(model, {});
  vramfit::FitRequest req;
  req.goal = goal;
  req.min_context = min_context;
  req.min_concurrency = min_concurrency;
  req.cards = catalog ? NvidiaCatalog() : std::vector<vramfit::GpuSpec>{*vramfit::FindGpu("4090")};
  req.max_gpus = catalog ? 8 : 2;
  uint64_t plans = 0;
  for (auto _ : state) {
    auto r = vramfit::Fit(vramfit::vllm::VllmEngine(), {{model, &*inv}}, req);
    plans += r->plans;
    benchmark::DoNotOptimize(r);
  }
  state.counters["plans_per_search"] =
      static_cast<double>(plans) / static_cast<double>(state.iterations());
  state.counters["plans_per_second"] =
      benchmark::Counter(static_cast<double>(plans), benchmark::Counter::kIsRate);
}

// --goal context on one 4090 with up to 2 cards.
BENCHMARK_CAPTURE(Search, context_qwen3_8b_4090x2, "qwen3-8b", vramfit::FitGoal::kContext, false, 0,
                  4)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Search, context_qwen3_4b_awq_4090x2, "qwen3-4b-instruct-2507-awq",
                  vramfit::FitGoal::kContext, false, 0, 1)
    ->Unit(benchmark::kMillisecond);
// --goal gpus over the whole NVIDIA catalog, counts 1..8.
BENCHMARK_CAPTURE(Search, gpus_qwen3_8b_catalog, "qwen3-8b", vramfit::FitGoal::kGpus, true, 32768,
                  8)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Search, gpus_qwen3_30b_a3b_catalog, "qwen3-30b-a3b", vramfit::FitGoal::kGpus,
                  true, 32768, 4)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Search, gpus_qwen3_30b_a3b_gptq_catalog, "qwen3-30b-a3b-gptq-int4",
                  vramfit::FitGoal::kGpus, true, 32768, 4)
    ->Unit(benchmark::kMillisecond);

}  // namespace
