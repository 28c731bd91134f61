// Gemma 3n/4's KV sharing: which earlier layer a KV-shared layer reads its K/V from.
#ifndef VRAMFIT_MODEL_KV_SHARE_H_
#define VRAMFIT_MODEL_KV_SHARE_H_

#include <cstdint>

#include "vramfit/model.h"

namespace vramfit::model {

// The layer whose K/V layer `i` reuses: the last earlier layer of the same attention kind that
// holds its own cache (transformers modeling_gemma4.py kv_shared_layer_index; vLLM's
// kv_sharing_target_layer_name). -1 when `i` holds its own cache or no such layer exists.
inline int64_t KvShareTarget(const ModelSpec& spec, int64_t i) {
  if (i < 0 || i >= static_cast<int64_t>(spec.layers.size())) return -1;
  const AttentionSpec& a = spec.layers[static_cast<size_t>(i)].attention;
  if (!a.kv_shared) return -1;
  for (int64_t j = i - 1; j >= 0; --j) {
    const AttentionSpec& b = spec.layers[static_cast<size_t>(j)].attention;
    if (!b.kv_shared && b.kind == a.kind) return j;
  }
  return -1;
}

}  // namespace vramfit::model

#endif  // VRAMFIT_MODEL_KV_SHARE_H_
