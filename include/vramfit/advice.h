// Advice: concrete changes to vLLM settings that make a plan fit (or fit better), each
// re-planned to prove it fits, with its effect in numbers. Never advice that does not fit.
#ifndef VRAMFIT_ADVICE_H_
#define VRAMFIT_ADVICE_H_

#include <string>
#include <vector>

#include "vramfit/vllm.h"

namespace vramfit {

struct Advice {
  std::string change;   // the flag(s), e.g. "--max-model-len 98304"
  std::string effect;   // "KV 13.50 GiB for 98,304 tokens; fits, 1.00x concurrency"
  std::string cost;     // what is given up ("shorter context", "speed", "a second GPU")
  VllmSettings settings;// the settings with the change applied
  VllmPlan plan;        // its plan (fits)
};

// Ranked advice for `plan` (made by PlanVllm(inv, gpu, settings)).
std::vector<Advice> AdviseVllm(const Inventory& inv, const GpuSpec& gpu, const VllmSettings& settings,
                               const VllmPlan& plan);

}  // namespace vramfit

#endif  // VRAMFIT_ADVICE_H_
