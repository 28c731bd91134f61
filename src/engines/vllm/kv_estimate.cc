// vLLM's paged KV figures for `vramfit kv` (see kv_estimate.h). The pages come from
// PlanKvCache (block size, hybrid alignment, groups: vllm/v1/core/kv_cache_utils.py and
// kv_cache_interface.py at the modelled release); a request holds
// ceil(max usage / block bytes) blocks (get_max_concurrency_for_kv_cache_config), so one
// sequence costs whole blocks.
#include "engines/vllm/kv_estimate.h"

#include <fmt/format.h>

#include "core/checked.h"
#include "engines/vllm/kv_cache.h"
#include "engines/vllm/rules.h"
#include "engines/vllm/v0_legacy.h"

namespace vramfit::vllm {

Result<KvEstimate> EstimateKvPaged(const ModelSpec& spec, const KvQuery& q) {
  // A cache type only vLLM has (TurboQuant's and NVFP4's packed slots, per-token-head scales,
  // fp8_ds_mla): the engine-neutral figures are taken at one byte a value and the per-token
  // bytes from vLLM's layout below.
  auto neutral = EstimateKv(spec, q);
  bool engine_dtype = false;
  if (!neutral.ok()) {
    KvQuery one_byte = q;
    one_byte.kv_cache_dtype = "fp8";
    KvCacheOptions probe;
    probe.kv_cache_dtype = q.kv_cache_dtype;
    probe.max_model_len = 1;
    if (q.kv_cache_dtype == "fp8" || !PlanKvCache(spec, probe).ok()) return neutral.status();
    neutral = EstimateKv(spec, one_byte);
    if (!neutral.ok()) return neutral.status();
    engine_dtype = true;
  }
  int release = kNewestModelled;
  if (!q.version.empty()) {
    auto r = ParseRelease(q.version);
    if (!r.ok()) return r.status();
    release = *r;
  }
  KvCacheOptions o;
  o.tensor_parallel_size = q.tensor_parallel_size;
  o.kv_cache_dtype = q.kv_cache_dtype;
  o.max_model_len = q.context;
  o.rules = RulesFor(release);
  // Before v0.7.1 DeepSeek's MLA layers cache full K and V (v0_legacy.h).
  const auto legacy = LegacyKvSpec(o.rules, spec);
  auto layout = PlanKvCache(legacy ? *legacy : spec, o);
  if (!layout.ok()) return layout.status();
  KvEstimate e = *neutral;
  if (engine_dtype) {
    e.bytes_per_token = layout->kv_bytes_per_token;
    e.elem_bytes = 0;  // no one size a value
    e.notes.push_back(fmt::format("--kv-cache-dtype {}: per-token bytes from vLLM's layout of "
                                  "it, not one size a value",
                                  q.kv_cache_dtype));
  }
  if (layout->layers.empty() || layout->page_bytes == 0) return e;
  const KvCapacityResult cap = KvCapacity(*layout, 0, o);
  const uint64_t block_bytes = KvBlockBytes(*layout);
  e.block_size = layout->block_size;
  e.blocks_per_sequence = cap.blocks_per_request;
  if (!core::CheckedMul(cap.blocks_per_request, block_bytes, &e.bytes_per_sequence) ||
      !core::CheckedMul(e.bytes_per_sequence, static_cast<uint64_t>(q.batch), &e.total_bytes)) {
    return Status::InvalidArgument("the KV cache of these dimensions passes 2^64 bytes");
  }
  e.notes.insert(e.notes.end(), layout->notes.begin(), layout->notes.end());
  e.notes.push_back(fmt::format(
      "vLLM {}: blocks of {} tokens ({} bytes per block, all layers); a sequence holds whole "
      "blocks",
      o.rules.text, layout->block_size, block_bytes));
  return e;
}

}  // namespace vramfit::vllm
