// llama.cpp's --fit (llama_params_fit, src/llama.cpp, PR 16653): before the model loads, the
// settings the user left unset are changed so that every device keeps --fit-target free. The
// plan runs it first and then plans the chosen settings, so the plan shows what llama.cpp
// would load. It changes only `settings`; its notes say what it changed and why.
#ifndef VRAMFIT_ENGINES_LLAMACPP_FIT_H_
#define VRAMFIT_ENGINES_LLAMACPP_FIT_H_

#include <functional>
#include <string>
#include <vector>

#include "engines/llamacpp/llamacpp.h"
#include "engines/llamacpp/rules.h"

namespace vramfit::llamacpp {

// What --fit did: one note per change (or why it changed nothing), and its own failure
// ("n_gpu_layers already set by user to 99, abort"), "" when it did not give up. llama.cpp
// then loads with the settings as they stand, context reduction included.
struct FitOutcome {
  std::vector<std::string> notes;
  std::string failure;
};

// Plans fixed settings (no --fit): how --fit's projections are made.
using FixedPlanner = std::function<Result<LlamaCppPlan>(const LlamaCppSettings&)>;

// Whether --fit runs: `--fit on|off` as given, else the build's default.
bool FitApplies(const Rules& rules, const LlamaCppSettings& s);

// Runs --fit over `*s` (which it changes): the context first when -c is unset, then the
// experts (MoE) or the layers when -ngl, -ts and -ot are unset.
Result<FitOutcome> FitParams(const Inventory& inv, const FixedPlanner& plan,
                             LlamaCppSettings* s);

}  // namespace vramfit::llamacpp

#endif  // VRAMFIT_ENGINES_LLAMACPP_FIT_H_
