// The spellings of Intel AutoRound's quant_method. An AutoRound checkpoint is modelled with the
// GPTQ or AWQ scheme of its packing (src/model/quant.cc); method_text keeps the spelling, and
// this says whether a scheme came from AutoRound, for the engines' kernel names and refusals.
#ifndef VRAMFIT_MODEL_AUTO_ROUND_H_
#define VRAMFIT_MODEL_AUTO_ROUND_H_

#include <string_view>

namespace vramfit::model {

// "auto-round" (AutoRound 0.5+), "intel/auto-round" (older exports), "auto_round" (vLLM's INC
// config accepts it too: quantization/inc/inc.py AUTO_ROUND_QUANT_METHODS).
inline bool IsAutoRoundMethod(std::string_view method_text) {
  return method_text == "auto-round" || method_text == "auto_round" ||
         method_text == "intel/auto-round";
}

}  // namespace vramfit::model

#endif  // VRAMFIT_MODEL_AUTO_ROUND_H_
