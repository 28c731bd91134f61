// What vLLM refuses before it allocates any KV cache: the checks it makes while building its
// config (the model dtype, the quantization method against the GPU's compute capability and
// the dtype) and while creating the layers (block-quantized shards that tensor parallelism
// cuts off the block grid; a checkpoint that declares a packed quantization but stores 16-bit
// projections). Each refusal carries vLLM's own message and the stage it stops at; each rule
// cites the vLLM file it follows (docs/engines/vllm.md, "Refusals").
#ifndef VRAMFIT_ENGINES_VLLM_REFUSALS_H_
#define VRAMFIT_ENGINES_VLLM_REFUSALS_H_

#include <optional>
#include <string>

#include "engines/vllm/rules.h"
#include "vramfit/formats.h"
#include "vramfit/gpu.h"
#include "vramfit/inventory.h"
#include "vramfit/plan.h"

namespace vramfit::vllm {

struct Refusal {
  Stage stage = Stage::kStartup;
  std::string message;  // vLLM's text
  // Set when only another release lifts it (whatever the card or knobs): what refuses and the
  // release to use instead, as Plan::refusal says it. "" otherwise.
  std::string change;
};

// The GPU's compute capability as vLLM compares it (8.9 -> 89); 0 when unknown (a GPU given by
// --gpu-memory) or not NVIDIA.
int ComputeCapability(const GpuSpec& gpu);

// An integrated GPU, one CUDA reports is_integrated for: memory shared with the CPU on a Tegra
// or GB10 part (compute capability 8.7 Orin, 11.0 Thor, 12.1 GB10); GH200's Hopper is discrete.
bool IntegratedGpu(const GpuSpec& gpu);

// The model dtype vLLM runs with (ModelConfig._get_and_verify_dtype, _resolve_auto_dtype):
// `flag` is --dtype. auto keeps the config's 16-bit dtype where the GPU supports it, downcasts a
// float32 config to the GPU's preferred 16-bit dtype (bfloat16 from compute capability 8.0,
// else float16), and falls back to float16 for a bfloat16 config below 8.0.
struct ModelDtype {
  Dtype dtype = Dtype::kBF16;
  std::string note;                // what vLLM logs about the choice ("" when nothing)
  std::optional<Refusal> refusal;  // an explicit bfloat16 below 8.0
};
ModelDtype ResolveModelDtype(const ModelSpec& spec, const GpuSpec& gpu, const std::string& flag);

// The quantization method vLLM selects ("awq_marlin", "gptq", "fp8", ...; "" for none): the
// checkpoint's method, upgraded to its Marlin variant where Marlin runs, or --quantization.
std::string SelectedQuantization(const QuantScheme& q, const GpuSpec& gpu, const Rules& rules,
                                 const std::string& flag);

// Config-time refusals, in vLLM's order: the quantization method's minimum compute capability,
// then the model dtype against the method's supported activation dtypes.
std::optional<Refusal> ConfigRefusal(const ModelSpec& spec, const GpuSpec& gpu,
                                     const Rules& rules, const std::string& quantization_flag,
                                     Dtype model_dtype);

// Layer-creation refusals (stage load, before any weight is read): FP8 block shapes under
// tensor parallelism, and a declared packed quantization over unquantized projections.
std::optional<Refusal> LayerRefusal(const Inventory& inv, const GpuSpec& gpu, const Rules& rules,
                                    int64_t tensor_parallel_size, bool enable_expert_parallel,
                                    const std::string& quantization_flag);

// The model's architecture against the release's model registry (registry.py
// _raise_for_unsupported, at config time): a release that predates the architecture refuses it.
// `release` is the release asked for (not clamped to the modelled range).
std::optional<Refusal> ArchitectureRefusal(const ModelSpec& spec, int release);

// Llama 3.1's rope_scaling ({"rope_type": "llama3", ...}, no "type" key) on a release before
// v0.5.3.post1 (Rules::rope_type_key): vLLM indexes rope_scaling["type"] and stops with
// KeyError: 'type'. `version` is the version as given, whose ".post1" the release number drops.
std::optional<Refusal> RopeScalingRefusal(const ModelSpec& spec, const Rules& rules,
                                          const std::string& version);

// Decode context parallelism (--decode-context-parallel-size, `dcp`) as vLLM checks it while
// building its config: the flag's release (PR #23734, v0.10.2), the TP group it splits
// (ParallelConfig: tp divisible by dcp) and, for grouped-query attention (from PR #24864, taken
// as v0.11.1), ModelConfig.verify_with_parallel_config's head checks (tp above the KV heads, dcp
// at most tp / KV heads, query heads per KV head divisible by dcp). nullopt for dcp 1.
std::optional<Refusal> ContextParallelConfigRefusal(const ModelSpec& spec, const Rules& rules,
                                                    int64_t tensor_parallel_size, int64_t dcp);

// The same once the KV cache is made (stage kv_cache): a grouped-query attention model before
// PR #24864 (its attention implementation returns no softmax LSE for decode), and the layer
// kinds DCP does not shard (sliding window, linear attention: single_type_kv_cache_manager.py's
// asserts).
std::optional<Refusal> ContextParallelKvRefusal(const ModelSpec& spec, const Rules& rules,
                                                int64_t dcp);

}  // namespace vramfit::vllm

#endif  // VRAMFIT_ENGINES_VLLM_REFUSALS_H_
