// The KV cache calculator: what `batch` sequences of `context` tokens hold in K/V, MLA latents
// and linear-attention state, from a model's spec or from raw dimensions. The engine-neutral
// figure sums the per-layer formulas (src/model/kv_state.h); an engine that pages its cache
// rounds each sequence up to whole blocks (Engine::kv_cache).
//
// Example:
//   vramfit::KvQuery q;  q.context = 32768;  q.batch = 4;
//   auto kv = vramfit::EstimateKv(inventory.spec, q);   // kv->total_bytes
#ifndef VRAMFIT_KV_H_
#define VRAMFIT_KV_H_

#include <cstdint>
#include <string>
#include <vector>

#include "vramfit/model.h"
#include "vramfit/status.h"

namespace vramfit {

struct KvQuery {
  int64_t context = 0;               // tokens per sequence, required (> 0)
  int64_t batch = 1;                 // sequences held at once
  int64_t tensor_parallel_size = 1;  // figures are per GPU (rank) under this TP
  std::string kv_cache_dtype = "auto";  // auto (the model's dtype), fp8*, bfloat16, float16,
                                        // float32
  std::string version;               // the engine release ("" newest); engines only
};

struct KvEstimate {
  uint64_t elem_bytes = 0;                 // bytes of one cached value
  uint64_t bytes_per_token = 0;            // full-attention K/V and MLA latents, all layers
  uint64_t sliding_bytes_per_sequence = 0; // sliding-window layers: min(window, context) tokens
  uint64_t state_bytes_per_sequence = 0;   // linear-attention state, whatever the length
  uint64_t bytes_per_sequence = 0;         // one sequence of `context` tokens (whole pages)
  uint64_t total_bytes = 0;                // batch x bytes_per_sequence
  int64_t block_size = 0;                  // tokens per page (an engine's); 0: not paged
  uint64_t blocks_per_sequence = 0;
  int64_t layers = 0, full_layers = 0, sliding_layers = 0, mla_layers = 0, linear_layers = 0;
  int64_t shared_layers = 0;  // Gemma 4's KV-shared tail: no cache of their own
  std::vector<std::string> notes;
};

// The engine-neutral estimate. kInvalidArgument for a context or batch below 1, an unknown
// dtype, or TP that does not divide the linear-attention heads.
Result<KvEstimate> EstimateKv(const ModelSpec& spec, const KvQuery& query);

// A model described only by its cache dimensions (`vramfit kv --layers ...`).
struct KvDimensions {
  int64_t layers = 0;
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
  int64_t window = 0;      // > 0: every layer is sliding-window attention of this many tokens
  int64_t mla_rank = 0;    // > 0: MLA, a latent of mla_rank + rope_dim per token
  int64_t rope_dim = 0;
  Dtype dtype = Dtype::kBF16;
};
// kInvalidArgument naming the flag (--layers, --kv-heads, --head-dim, ...) for a value out of
// range.
Result<ModelSpec> KvSpecFromDimensions(const KvDimensions& d);

}  // namespace vramfit

#endif  // VRAMFIT_KV_H_
