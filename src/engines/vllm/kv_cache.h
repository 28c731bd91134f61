// vLLM's KV cache, layer by layer: what one block of each layer costs, how layers are
// grouped into one shared pool, how many blocks a byte budget buys, and what vLLM then
// prints as "GPU KV cache size" and "Maximum concurrency".
//
// Every formula follows vLLM's own code (vllm/v1/kv_cache_interface.py, kv_cache_utils.py,
// platforms/interface.py `_align_hybrid_block_size`, mamba_utils.py), cited beside it in
// src/engines/vllm/kv_cache.cc; docs/engines/vllm-kv-cache.md has the derivations and worked
// examples. Sizes are per tensor-parallel rank.
//
// Example:
//   vramfit::KvCacheOptions o;  o.max_model_len = 32768;
//   auto layout = vramfit::PlanKvCache(spec, o);
//   auto cap = vramfit::KvCapacity(*layout, 20ull << 30, o);
#ifndef VRAMFIT_ENGINES_VLLM_KV_CACHE_H_
#define VRAMFIT_ENGINES_VLLM_KV_CACHE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "engines/vllm/rules.h"
#include "vramfit/model.h"
#include "vramfit/status.h"

namespace vramfit {
namespace vllm {
// Tokens per KV block when --block-size is not given (vllm/config/cache.py DEFAULT_BLOCK_SIZE).
inline constexpr int64_t kDefaultBlockSize = 16;
}  // namespace vllm

struct KvCacheOptions {
  int64_t tensor_parallel_size = 1;   // --tensor-parallel-size
  int64_t pipeline_parallel_size = 1; // --pipeline-parallel-size: the largest stage is planned
  int64_t decode_context_parallel_size = 1;  // -dcp (>= 1): each rank keeps 1/dcp of the tokens
  int64_t block_size = 0;             // --block-size; 0: vLLM's default (16, or the MLA backend's)
  int64_t mla_block_size = 64;        // block size vLLM's MLA backend picks (FlashMLA: 64)
  std::string kv_cache_dtype =
      "auto";  // --kv-cache-dtype: auto | fp8[_e4m3|_e5m2] | {int8,fp8}_per_token_head | ...
  int64_t max_model_len = 0;          // required, > 0
  int64_t max_num_batched_tokens = 8192;  // scheduler token budget (sliding-window usage)
  int64_t num_speculative_tokens = 0; // extra conv-state rows and mamba pages
  // State pages one request holds in each linear-attention group: 1 (mamba_cache_mode "none",
  // prefix caching off) or 2 ("align": the running state and the last block-aligned one).
  int64_t mamba_pages_per_request = 1;
  // --mamba-cache-dtype (the conv state; "auto": the model dtype) and --mamba-ssm-cache-dtype
  // (the recurrent state; "auto": the config's mamba_ssm_dtype where it gives one, else the conv
  // state's): auto | float32 | float16 | bfloat16.
  std::string mamba_cache_dtype = "auto";
  std::string mamba_ssm_cache_dtype = "auto";
  bool disable_hybrid_kv_cache_manager = false;  // sliding layers then cost full context
  // --kv-cache-dtype-skip-layers: decoder layer indices ("0", "31") and "sliding_window" whose
  // attention keeps the model's dtype under a quantized --kv-cache-dtype (PR #33695).
  std::vector<std::string> kv_skip_layers;
  // The caller has already refused attention heads that TP does not divide (plan.cc,
  // HeadsRefusal): lay the layers out anyway, each rank's heads rounded down, so the stages
  // after the refusal still show numbers. Otherwise such a TP is an error.
  bool allow_uneven_heads = false;
  // The release's rules: grouping and how "GPU KV cache size" is printed (default: the newest).
  vllm::Rules rules = vllm::RulesFor(vllm::kNewestModelled);
};

enum class KvLayerKind { kFull, kSliding, kMla, kMamba };

// One layer's cache on one rank.
struct KvLayerSpec {
  int64_t layer = 0;
  KvLayerKind kind = KvLayerKind::kFull;
  int64_t block_size = 0;  // tokens per block (for mamba: the attention block it is paired with)
  uint64_t page_bytes = 0;     // bytes of one block of this layer (after padding/unification)
  uint64_t max_usage_bytes = 0;// bytes one request of max_model_len tokens needs in this layer
  int64_t sliding_window = 0;
  // KV heads per rank (attention layers): with the page, the spec's shape. vLLM's
  // AttentionSpec equality compares num_kv_heads and head_size, so layers that only share a
  // page size (a DFlash drafter's 8 x 128 beside Qwen3.6's 4 x 256) group apart.
  int64_t kv_heads = 0;
};

struct KvCacheLayout {
  std::vector<KvLayerSpec> layers;         // layers that hold cache (none for attention-free)
  std::vector<std::vector<int64_t>> groups;// layer indices per KV cache group
  int64_t group_size = 0;                  // max layers per group = tensors in the pool
  int64_t block_size = 0;                  // attention block size after hybrid alignment
  uint64_t page_bytes = 0;                 // uniform page (hybrid) or sum of pages (uniform type)
  bool uniform_type = false;               // one group whose layers differ only in shape
  uint64_t kv_bytes_per_token = 0;  // full-attention + MLA bytes per token, all layers (for people)
  uint64_t state_bytes_per_sequence = 0;   // linear-attention state per sequence, all layers
  std::vector<std::string> notes;  // vLLM log lines this layout implies (block size, padding)
};

// The layout vLLM would build for this model under `options`.
Result<KvCacheLayout> PlanKvCache(const ModelSpec& spec, const KvCacheOptions& options);

struct KvCapacityResult {
  uint64_t num_blocks = 0;        // blocks in the pool (vLLM's num_gpu_blocks, null block included)
  uint64_t allocated_bytes = 0;   // num_blocks x page x group_size
  uint64_t kv_cache_tokens = 0;   // "GPU KV cache size: N tokens" as this vLLM release prints it
  double max_concurrency = 0;     // "Maximum concurrency for L tokens per request: X"
  uint64_t blocks_per_request = 0;
  uint64_t bytes_per_request = 0; // what one max_model_len request needs
};

// Bytes of one block of the pool: one page per layer of a group (UniformTypeKVCacheSpecs: one
// page holding every layer's).
uint64_t KvBlockBytes(const KvCacheLayout& layout);

// What `available_bytes` of KV memory (vLLM's "Available KV cache memory") holds.
KvCapacityResult KvCapacity(const KvCacheLayout& layout, uint64_t available_bytes,
                            const KvCacheOptions& options);

}  // namespace vramfit

#endif  // VRAMFIT_ENGINES_VLLM_KV_CACHE_H_
