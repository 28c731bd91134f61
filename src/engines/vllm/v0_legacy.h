// vLLM releases before 0.8, whose only engine is V0 (vllm/worker/worker.py,
// vllm/worker/model_runner.py, vllm/worker/cache_engine.py): what their worker charges against
// total x gpu_memory_utilization beside the weights and the profile run's activation peak, and
// the KV layout of DeepSeek's MLA layers before vLLM cached the latent. The eras are
// Rules::v0_profiling (rules.h); docs/engines/vllm.md, "Releases before 0.8", lists them.
#ifndef VRAMFIT_ENGINES_VLLM_V0_LEGACY_H_
#define VRAMFIT_ENGINES_VLLM_V0_LEGACY_H_

#include <cstdint>
#include <optional>
#include <string>

#include "engines/vllm/rules.h"
#include "vramfit/model.h"

namespace vramfit::vllm {

// The device memory a V0 worker holds outside PyTorch's allocator, per rank.
struct LegacyDeviceMemory {
  uint64_t cuda_context = 0;     // held before the worker's first measurement
  uint64_t nccl = 0;             // communicators and all-reduce buffers (TP > 1), set up after it
  uint64_t growth = 0;           // cuBLAS workspaces and kernel images the profile run adds
  uint64_t other_processes = 0;  // other processes on the card
};

struct LegacyCharge {
  uint64_t bytes = 0;  // charged beside the weights and the activation peak
  std::string why;     // the formula, with its source
};

// What the V0 worker of `rules.release` charges beside the weights and the activation peak, or
// nullopt from v0.6.5 (V0Profiling::kSnapshot), which the plan models with the later V0 rules.
std::optional<LegacyCharge> LegacyV0NonTorch(const Rules& rules, const LegacyDeviceMemory& m);

// Whether NCCL's buffers fall inside the budget (they are set up after the worker's first
// measurement in every era before v0.6.5 that charges non-torch memory at all).
bool LegacyNcclInBudget(const Rules& rules);

// DeepSeek-V2/V3 before v0.7.1 (Rules::mla_latent_cache false): each MLA layer caches K and V
// for all of its heads (model_executor/models/deepseek_v2.py DeepseekV2Attention:
// Attention(num_local_heads, head_size, num_kv_heads=num_local_heads)), at 256 before v0.7.0
// (Rules::deepseek_heads_padded_256: config.py get_head_size, q, k and v zero-padded) and at
// qk_head_dim (qk_nope_head_dim + qk_rope_head_dim, V padded to it) in v0.7.0. Returns the spec
// with those layers as full attention, or nullopt when nothing changes.
std::optional<ModelSpec> LegacyKvSpec(const Rules& rules, const ModelSpec& spec);

}  // namespace vramfit::vllm

#endif  // VRAMFIT_ENGINES_VLLM_V0_LEGACY_H_
