// Advice for a vLLM plan through the engine table, as `vramfit plan` gives it (for the vLLM
// room's tests).
#ifndef VRAMFIT_TESTS_TESTUTIL_VLLM_ADVICE_H_
#define VRAMFIT_TESTS_TESTUTIL_VLLM_ADVICE_H_

#include <vector>

#include "engines/vllm/engine.h"
#include "engines/vllm/vllm.h"
#include "vramfit/advice.h"

namespace vramfit::testutil {

inline std::vector<Advice> AdviseVllm(const Inventory& inv, const GpuSpec& gpu,
                                      const VllmSettings& s, const Plan& plan) {
  const Engine& engine = vllm::VllmEngine();
  auto model = engine.prepare(inv);
  return Advise(engine, **model, gpu, ToEngineSettings(s), plan);
}

}  // namespace vramfit::testutil

#endif  // VRAMFIT_TESTS_TESTUTIL_VLLM_ADVICE_H_
