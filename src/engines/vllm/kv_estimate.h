// vLLM's answer to `vramfit kv`: the engine-neutral figures, with each sequence rounded up to
// the whole KV blocks vLLM's paged cache allocates (kv_cache.h's layout of the release).
#ifndef VRAMFIT_ENGINES_VLLM_KV_ESTIMATE_H_
#define VRAMFIT_ENGINES_VLLM_KV_ESTIMATE_H_

#include "vramfit/kv.h"
#include "vramfit/model.h"
#include "vramfit/status.h"

namespace vramfit::vllm {

// kInvalidArgument as EstimateKv, and for a release vLLM's rules do not read.
Result<KvEstimate> EstimateKvPaged(const ModelSpec& spec, const KvQuery& query);

}  // namespace vramfit::vllm

#endif  // VRAMFIT_ENGINES_VLLM_KV_ESTIMATE_H_
