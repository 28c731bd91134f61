// libFuzzer target: config.json -> a plan, as `vramfit plan MODEL --gpu 4090` makes one for a
// model without weights: ModelSpec, synthesized tensors, inventory, the vLLM room's prepare
// and MakePlan on a catalog GPU, the advice, a small fit search, and the plan and fit
// renderers. Every divisor read from a config must be range-checked before it gets here.
#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"
#include "vramfit/advice.h"
#include "vramfit/engine.h"
#include "vramfit/fit.h"
#include "vramfit/gpu.h"
#include "vramfit/report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto synthesized = vramfit::fuzz::SynthesizedInventory(data, size);
  if (!synthesized) return 0;
  const vramfit::Inventory& inv = *synthesized;
  auto engine = vramfit::FindEngine("vllm");
  auto gpu = vramfit::FindGpu("4090");
  if (!engine.ok() || !gpu.ok()) __builtin_trap();  // the tables are embedded
  auto model = engine->engine->prepare(inv);
  if (!model.ok()) return 0;
  vramfit::EngineSettings settings;
  settings.max_model_len = 4096;
  auto plan = (*model)->MakePlan(*gpu, settings);
  if (!plan.ok()) return 0;
  const auto advice = vramfit::Advise(*engine->engine, **model, *gpu, settings, *plan);
  (void)vramfit::RenderPlanText(*plan, advice, {true});
  (void)vramfit::RenderPlanJson(*plan, advice, {true});
  vramfit::FitRequest request;
  request.cards = {*gpu};
  request.max_gpus = 2;
  request.max_options = 2;
  auto fit = vramfit::Fit(*engine->engine, {{"fuzz", &inv}}, request);
  if (fit.ok()) {
    (void)vramfit::RenderFitText(*fit, {});
    (void)vramfit::RenderFitJson(*fit, {});
  }
  return 0;
}
