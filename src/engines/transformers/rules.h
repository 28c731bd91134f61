// transformers' rules for one release, resolved once from the version text: every behaviour
// that changed between releases is a named field here, so no other file compares release
// numbers. docs/engines/transformers.md lists them with the upstream file of each.
#ifndef VRAMFIT_ENGINES_TRANSFORMERS_RULES_H_
#define VRAMFIT_ENGINES_TRANSFORMERS_RULES_H_

#include <string>

#include "vramfit/status.h"

namespace vramfit::transformers {

// A release as major*10000 + minor*100 + patch (4.57.1 = 45701).
inline constexpr int kOldestModelled = 44000;  // 4.40: DynamicCache objects in generate
inline constexpr int kNewestModelled = 50000;  // 5.0 (integrations/accelerate.py as read)
inline constexpr int kDefaultRelease = 45700;  // 4.57: the last 4.x line, most installs

struct Rules {
  int release = kDefaultRelease;
  std::string text = "4.57";
  // from_pretrained without dtype: float32 before 5.0 (modeling_utils.py
  // _get_dtype / get_torch_dtype), the checkpoint's own dtype ("auto") from 5.0.
  bool default_dtype_auto = false;
  // generate keeps only the last token's logits on the prefill (logits_to_keep /
  // num_logits_to_keep, 4.45); before, the model computed logits for every prompt token and
  // LlamaForCausalLM upcast them all to float32 (`logits = logits.float()`).
  bool prefill_last_logits_only = true;
  // DynamicCache keeps only the window for sliding-attention layers (DynamicSlidingWindowLayer,
  // cache_utils.py 4.56); before, a dynamic cache held every token in every layer.
  bool dynamic_sliding_window = true;
};

// "4.57.1" or "v5.0" -> 45701 / 50000; kInvalidArgument otherwise.
Result<int> ParseReleaseNumber(const std::string& text);

// The rules of `release` (clamped to the modelled range).
Rules RulesFor(int release);

}  // namespace vramfit::transformers

#endif  // VRAMFIT_ENGINES_TRANSFORMERS_RULES_H_
