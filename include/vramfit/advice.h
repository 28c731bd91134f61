// Advice: concrete changes to an engine's settings that make a plan fit (or fit better), each
// re-planned to prove it fits, with its effect in numbers. Never advice that does not fit.
// Engine-neutral: the changes are Settings, spelled as the engine's own flags.
//
// Example:
//   auto advice = vramfit::Advise(engine, *model, gpu, settings, plan);
//   for (const auto& a : advice) std::cout << a.change << ": " << a.effect << "\n";
#ifndef VRAMFIT_ADVICE_H_
#define VRAMFIT_ADVICE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "vramfit/engine.h"
#include "vramfit/plan.h"

namespace vramfit {

struct Advice {
  std::string change;       // the flag(s), e.g. "--max-model-len 98304"
  std::string effect;       // "fits: KV cache 13.50 GiB per GPU, ..."
  std::string cost;         // what is given up ("shorter context", "speed", "a second GPU")
  EngineSettings settings;  // the settings with the change applied
  Plan plan;                // its plan (fits)
};

// Ranked advice for `plan` (made by model.MakePlan(gpu, settings)).
std::vector<Advice> Advise(const Engine& engine, const PreparedModel& model, const GpuSpec& gpu,
                           const EngineSettings& settings, const Plan& plan);

// Another checkpoint of the same model (a catalog variant in another weight format).
struct Alternative {
  std::string name;                   // how advice names it: the repo id, or the catalog id
  const Inventory* inventory = nullptr;
};

// For a plan that fails at load or at the KV cache: each alternative planned with the same
// settings (its own quantization), kept when it fits, smallest weights first.
std::vector<Advice> AdviseAlternatives(const Engine& engine,
                                       const std::vector<Alternative>& alternatives,
                                       const GpuSpec& gpu, const EngineSettings& settings,
                                       const Plan& plan);

// A context length as advice writes it: rounded down to a multiple of 1,024 tokens from 2,048
// up, unchanged below.
int64_t TidyContextLength(int64_t tokens);

}  // namespace vramfit

#endif  // VRAMFIT_ADVICE_H_
