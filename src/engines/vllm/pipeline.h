// vLLM pipeline parallelism, stage by stage: which decoder layers each stage holds (vLLM's
// default split or VLLM_PP_LAYER_PARTITION), the card each stage runs on (one card for all, or
// one per stage for mixed cards), and how the stages' KV memories become one pool.
//
// Each stage is planned as its own start-up (its layers' weights, its card's budget, its own
// KV layout); PlanPipeline then combines them as vLLM's engine core does
// (v1/core/kv_cache_utils.py get_kv_cache_configs): every worker gets the smallest worker's
// block count, so the stage with the fewest blocks binds the pool ("GPU KV cache size"), and
// the max-length check runs per stage or on the whole model, depending on the release
// (Rules::pp_kv_check_whole_model). Sources and worked numbers: docs/engines/vllm.md.
#ifndef VRAMFIT_ENGINES_VLLM_PIPELINE_H_
#define VRAMFIT_ENGINES_VLLM_PIPELINE_H_

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "engines/vllm/kv_cache.h"
#include "engines/vllm/vllm.h"
#include "vramfit/gpu.h"
#include "vramfit/model.h"
#include "vramfit/status.h"

namespace vramfit::vllm {

// Decoder layers per stage, in stage order, for `layers` layers over `stages` stages.
// `partition` is VLLM_PP_LAYER_PARTITION as given ("" for vLLM's default split). kInvalidArgument
// with vLLM's own words (vllm/distributed/utils.py get_pp_indices) for text that is not a comma
// list of whole numbers, a count other than `stages`, or a sum other than `layers`.
Result<std::vector<int64_t>> PipelinePartition(int64_t layers, int64_t stages,
                                               std::string_view partition);

// The card each of `stages` stages runs on: `gpu` for all when `cards` is empty or one card;
// one per stage when `cards` has `stages` entries; one per rank (stage-major, `tp` ranks a
// stage) when it has tp x stages, the smallest of a stage's ranks standing for the stage.
// kInvalidArgument for any other count.
Result<std::vector<GpuSpec>> StageGpus(const GpuSpec& gpu, const std::vector<GpuSpec>& cards,
                                       int64_t stages, int64_t tp);

// `spec` with only decoder layers [first_layer, first_layer + layers) (clamped to the model's);
// its own MTP layers stay on the last stage only.
ModelSpec StageSpec(const ModelSpec& spec, int64_t first_layer, int64_t layers, bool last_stage);

// Bytes one request of `len` tokens needs in the KV cache of `spec`'s layers under `options`:
// blocks per request x page (x group size): what vLLM's max-length check compares.
uint64_t KvBytesForLength(const ModelSpec& spec, KvCacheOptions options, int64_t len);

// One stage's plan: the planner called with VllmOptions::pipeline_stage set.
using StagePlanner = std::function<Result<VllmPlan>(const GpuSpec& gpu, const VllmSettings& s)>;

// Plans a pipeline of `in.pipeline_parallel_size` stages over `spec` (the model after
// --hf-overrides): splits the layers, plans each stage with `plan_stage`, and combines the stage
// plans into one (the binding stage's figures in Plan::gpus, every stage's in
// Plan::pipeline_stages).
Result<VllmPlan> PlanPipeline(const ModelSpec& spec, const GpuSpec& gpu, const VllmSettings& in,
                              const StagePlanner& plan_stage);

}  // namespace vramfit::vllm

#endif  // VRAMFIT_ENGINES_VLLM_PIPELINE_H_
