// vLLM, stage by stage: what one `vllm serve` start-up will do with GPU memory on each rank,
// which stage fails first, and by how much.
//
// Stages in vLLM's order (vllm/v1/worker/gpu_worker.py, gpu_model_runner.py,
// v1/core/kv_cache_utils.py, as restated with commits in ../shared/reference/vllm-memory.md):
//   startup   requested = ceil(total x gpu_memory_utilization) must fit in free memory
//   load      weights per rank (sharded, packed) plus the load transient must fit
//   profile   a dummy forward of max_num_batched_tokens, the sampler and the encoder set the
//             activation peak; non-torch memory (cuBLAS, kernels, NCCL) grows
//   kv_cache  available = requested - weights - activation - non-torch (- graph estimate from
//             v0.21); the max-length check and "estimated maximum model length"
//   cudagraph the graph pool, allocated after the KV cache (outside the budget before v0.21)
// Terms vLLM measures at run time (activation peak, non-torch, graph pool) are modelled from
// their drivers with constants documented in docs/engines/vllm.md.
#ifndef VRAMFIT_VLLM_H_
#define VRAMFIT_VLLM_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vramfit/gpu.h"
#include "vramfit/inventory.h"
#include "vramfit/kv_cache.h"
#include "vramfit/status.h"
#include "vramfit/vllm_weights.h"

namespace vramfit {

// The user's vLLM settings; 0 / empty means "vLLM's default", resolved by PlanVllm.
struct VllmSettings {
  std::string version = "";             // "0.10" ... ; empty: the newest modelled release
  bool v0_engine = false;               // VLLM_USE_V1=0 (0.8-0.10): the V0 engine's accounting
  int64_t tensor_parallel_size = 1;
  int64_t pipeline_parallel_size = 1;
  int64_t data_parallel_size = 1;
  bool enable_expert_parallel = false;
  int64_t max_model_len = 0;            // 0: the model's; -1: auto (fit)
  double gpu_memory_utilization = 0;    // 0: 0.9 (< v0.21) or 0.92
  std::string kv_cache_dtype = "auto";
  int64_t max_num_seqs = 0;
  int64_t max_num_batched_tokens = 0;
  int64_t block_size = 0;
  bool enforce_eager = false;
  std::string quantization;             // --quantization
  uint64_t kv_cache_memory_bytes = 0;   // --kv-cache-memory-bytes
  double cpu_offload_gb = 0;            // --cpu-offload-gb
  int64_t limit_images = -1;            // --limit-mm-per-prompt image (-1: default, 0: off)
  int64_t limit_videos = -1;            // --limit-mm-per-prompt video
  int64_t max_pixels = 0;               // mm_processor_kwargs max_pixels (0: the processor's)
  bool allow_long_max_model_len = false;// VLLM_ALLOW_LONG_MAX_MODEL_LEN=1
  uint64_t other_process_bytes = 0;     // memory other processes hold on each GPU at start
  // Measured values that replace the model's estimates (vramfit doctor calibrates a plan on
  // the numbers a log printed); 0: estimate.
  uint64_t measured_activation_bytes = 0;
  uint64_t measured_non_torch_bytes = 0;
};

// One number of the plan with the formula that made it (for --explain).
struct Explained {
  std::string name;
  uint64_t bytes = 0;
  std::string formula;
};

struct VllmGpuPlan {
  uint64_t total_bytes = 0;
  uint64_t budget_bytes = 0;            // requested = ceil(total x utilization)
  uint64_t cuda_context_bytes = 0;
  uint64_t weights_bytes = 0;
  uint64_t load_peak_bytes = 0;
  uint64_t activation_peak_bytes = 0;
  uint64_t non_torch_bytes = 0;
  uint64_t cudagraph_bytes = 0;
  uint64_t kv_cache_bytes = 0;          // available KV cache memory
  std::vector<Explained> explain;
};

struct VllmPlan {
  bool fits = false;
  std::string failure_stage;            // "" or startup | load | profile | kv_cache | cudagraph
  std::string failure_message;          // vLLM's own error text where it has one
  std::string modelled_version;         // the release whose rules were applied
  std::vector<std::string> notes;       // defaults applied, version mapping, log lines implied
  VllmSettings resolved;                // settings after vLLM's defaults
  GpuSpec gpu;
  int64_t gpu_count = 1;
  std::vector<VllmGpuPlan> gpus;        // one per rank of one pipeline stage (ranks are alike)
  KvCacheLayout kv_layout;
  uint64_t kv_cache_tokens = 0;         // "GPU KV cache size: N tokens"
  double max_concurrency = 0;           // "Maximum concurrency for L tokens per request: X"
  int64_t max_model_len = 0;            // used (the fitted value under auto)
  int64_t estimated_max_model_len = 0;  // vLLM's estimate when the max-length check fails
  uint64_t kv_needed_bytes = 0;         // for one max_model_len request
  std::string command;                  // the equivalent `vllm serve` command line
};

// Plans `inv` (a checkpoint or catalog inventory) on `gpu` with `settings`. Errors are for
// impossible settings (kInvalidArgument with vLLM's message where it has one); a start-up
// that would fail is a plan with fits == false.
Result<VllmPlan> PlanVllm(const Inventory& inv, const GpuSpec& gpu, const VllmSettings& settings);

// The same with the inventory's weight profile made once (ProfileVllmWeights): for callers
// that plan one model many times (advice, fit searches).
Result<VllmPlan> PlanVllm(const Inventory& inv, const VllmWeightProfile& weights, const GpuSpec& gpu,
                          const VllmSettings& settings);

// "0.10.2" -> 1000; kInvalidArgument for releases before 0.8 or text that is not a version.
Result<int> ParseVllmVersion(const std::string& text);

}  // namespace vramfit

#endif  // VRAMFIT_VLLM_H_
