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
//             v0.20.2); the max-length check and "estimated maximum model length"
//   cudagraph the graph pool, allocated after the KV cache (outside the budget before v0.20.2)
// Terms vLLM measures at run time (activation peak, non-torch, graph pool) are modelled from
// their drivers with constants documented in docs/engines/vllm.md.
//
// This is the vLLM room's own API (tests and the doctor's vLLM calibration use it); everything
// above the engines reaches vLLM through the engine table (vramfit/engine.h, engine.cc here).
#ifndef VRAMFIT_ENGINES_VLLM_VLLM_H_
#define VRAMFIT_ENGINES_VLLM_VLLM_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engines/vllm/kv_cache.h"
#include "engines/vllm/weights.h"
#include "vramfit/gpu.h"
#include "vramfit/inventory.h"
#include "vramfit/plan.h"
#include "vramfit/status.h"

namespace vramfit {

// vLLM's own settings beyond the engine-neutral ones; 0 / -1 means "vLLM's default".
struct VllmOptions : EngineOptions {
  bool v0_engine = false;               // VLLM_USE_V1=0 (0.8-0.10): the V0 engine's accounting
  // --decode-context-parallel-size / -dcp: each request's KV cache sharded by token over this
  // many ranks of its TP group (rules.h dcp_mla, dcp_gqa).
  int64_t decode_context_parallel_size = 1;
  int64_t block_size = 0;               // --block-size
  uint64_t kv_cache_memory_bytes = 0;   // --kv-cache-memory-bytes
  int64_t num_gpu_blocks_override = 0;  // --num-gpu-blocks-override (0: the profile's count)
  // --enable-eplb and its redundant experts (--eplb-config's num_redundant_experts, 0.10's
  // --num-redundant-experts): that many more physical experts, spread over the EP ranks.
  bool enable_eplb = false;
  // --enable-dbo (dual batch overlap, ParallelConfig, 0.11+): micro-batches need a DeepEP
  // all-to-all; --all2all-backend (or VLLM_ALL2ALL_BACKEND) as given ("": the default,
  // allgather_reducescatter at 0.22).
  bool enable_dbo = false;
  std::string all2all_backend;
  bool all2all_from_env = false;  // VLLM_ALL2ALL_BACKEND gave it (printed as the variable)
  int64_t num_redundant_experts = 0;
  bool disable_custom_all_reduce = false;  // --disable-custom-all-reduce
  std::string hf_overrides;             // --hf-overrides JSON, as given
  // --rope-scaling (0.4.3 to 0.10): the JSON as given; vLLM puts it over the config's (and
  // --hf-overrides') rope_scaling.
  std::string rope_scaling;
  // --speculative-config: the JSON as given, its method ("mtp", "ngram", "eagle", ...) and
  // num_speculative_tokens.
  std::string speculative_config;
  std::string speculative_method;
  // Set when --spec-method, --spec-model or --spec-tokens gave any of it (argparse refuses them
  // before 0.22); speculative_config is then the JSON vLLM builds from them.
  bool speculative_aliases = false;
  int64_t num_speculative_tokens = 0;
  std::string dtype = "auto";  // --dtype: auto | half | float16 | bfloat16 | float | float32
  double cpu_offload_gb = 0;            // --cpu-offload-gb (GiB per GPU)
  // Weight offloading's backends (OffloadConfig, vllm/config/offload.py, v0.17+): "" (auto),
  // "uva" (--cpu-offload-gb) or "prefetch" (--offload-group-size and the rest).
  std::string offload_backend;
  // PrefetchOffloadConfig: every group of `offload_group_size` decoder layers keeps its last
  // `offload_num_in_group` in host memory, `offload_prefetch_step` of them in flight.
  int64_t offload_group_size = 0;
  int64_t offload_num_in_group = 1;
  int64_t offload_prefetch_step = 1;
  // --offload-params / --cpu-offload-params: the parameter names an offloader keeps to.
  std::vector<std::string> offload_params, cpu_offload_params;
  // --kv-offloading-size (GiB of host memory, summed over the TP ranks; 0: not given) and
  // --kv-offloading-backend ("": not given, else native or lmcache): a host KV tier.
  double kv_offloading_gib = 0;
  std::string kv_offloading_backend;
  int64_t limit_images = -1;            // --limit-mm-per-prompt image (-1: default, 0: off)
  int64_t limit_videos = -1;            // --limit-mm-per-prompt video
  int64_t max_pixels = 0;               // mm_processor_kwargs max_pixels (0: the processor's)
  // --language-model-only (v0.16+, PR #34120): every modality's limit 0, so the vision tower
  // and projector are not built or loaded and the encoder is not profiled.
  bool language_model_only = false;
  // --mm-encoder-tp-mode data (MultiModalConfig.mm_encoder_tp_mode, v0.11+): the vision encoder
  // whole on every TP rank, each rank encoding a share of the items (weights: sharded, the
  // default).
  bool mm_encoder_tp_data = false;
  // --skip-mm-profiling (MultiModalConfig.skip_mm_profiling): V1's profile run skips the
  // multimodal encoder and its cache, so their peak is not charged to the budget.
  bool skip_mm_profiling = false;
  // --enable-prefix-caching (1) / --no-enable-prefix-caching (0); -1: the release's default
  // (off for hybrid models before v0.28, on from it: Rules::hybrid_prefix_caching_default).
  int enable_prefix_caching = -1;
  // --enable-chunked-prefill (1) / --no-enable-chunked-prefill (0); -1: the release's default
  // (on for V1's generate models; V0 from v0.5.4 above 32K tokens).
  int enable_chunked_prefill = -1;
  // --disable-sliding-window: every sliding-window layer attends to the whole context, and the
  // derived maximum length is capped at the window (config/model.py, read at 0.22).
  bool disable_sliding_window = false;
  // Set by PlanVllm under --disable-sliding-window: the smallest window, the derived length's cap.
  int64_t sliding_window_cap = 0;
  // --mamba-cache-mode as given ("": vLLM's "none"): none | align | all.
  std::string mamba_cache_mode;
  // --mamba-block-size (0: not given).
  int64_t mamba_block_size = 0;
  // --performance-mode (VllmConfig.performance_mode, read at 0.22): "" or balanced; throughput
  // doubles the default max_num_seqs and max_num_batched_tokens; interactivity captures every
  // batch size up to 32.
  std::string performance_mode;
  // --kv-cache-dtype-skip-layers as given: layer indices and "sliding_window" (KvCacheOptions).
  std::vector<std::string> kv_skip_layers;
  // --attention-backend as vLLM reads it (its enum name in upper case; "": auto, vLLM's choice).
  std::string attention_backend;
  // --mamba-cache-dtype / --mamba-ssm-cache-dtype ("": auto): the linear-attention state's.
  std::string mamba_cache_dtype;
  std::string mamba_ssm_cache_dtype;
  // --disable-hybrid-kv-cache-manager (SchedulerConfig, v0.10+): one KV spec for every layer.
  bool disable_hybrid_kv_cache_manager = false;
  // --no-disable-hybrid-kv-cache-manager: the user's explicit "keep it" (argparse's
  // BooleanOptionalAction; the last of the two forms given wins).
  bool keep_hybrid_kv_cache_manager = false;
  // --kv-transfer-config (KVTransferConfig, vllm/config/kv_transfer.py): the JSON as given and
  // its kv_connector ("" when it names none).
  std::string kv_transfer_config;
  std::string kv_connector;
  bool mxfp4_use_marlin = false;        // VLLM_MXFP4_USE_MARLIN=1: MXFP4 experts on Marlin
  // VLLM_USE_FLASHINFER_SAMPLER: -1 unset, 0 (the native top-k/top-p path), 1 (FlashInfer's
  // sampler); the sampler warm-up's bytes per logit depend on it (plan.cc).
  int flashinfer_sampler = -1;
  // FlashInfer imports where vLLM runs: vLLM's Docker image (vllm/vllm-openai installs it in
  // its vllm-base stage), `pip install vllm[flashinfer]` or flashinfer-python beside the wheel.
  // V1 releases up to v0.11.0 with VLLM_USE_FLASHINFER_SAMPLER unset then sample with it
  // (Rules::sampler_flashinfer_if_installed); unknown (false) plans the sort of a plain pip
  // install. `plan --flashinfer-installed`; `check` sets it for `docker run vllm/vllm-openai`.
  bool flashinfer_installed = false;
  // VLLM_USE_V2_MODEL_RUNNER: -1 unset (the release's default runner), 0 model runner V1, 1 V2.
  int use_v2_model_runner = -1;
  // torch.compile finds an earlier start's cache (vLLM logs "Directly load the compiled graph(s)
  // ... from the cache"), so the profile run compiles nothing; on model runner V2 the plan then
  // charges V2's own profile (plan.cc, "Model runner V2" in docs/engines/vllm.md).
  bool compile_cache_warm = false;
  // --compilation-config as given, and the keys of it the plan reads (CompilationConfig,
  // vllm/config/compilation.py, v0.11+): cudagraph_mode ("" the release's default, else NONE,
  // PIECEWISE, FULL, FULL_DECODE_ONLY or FULL_AND_PIECEWISE), cudagraph_capture_sizes (empty:
  // the default list) and max_cudagraph_capture_size (0: the default; also
  // --max-cudagraph-capture-size, which wins); the keys it does not read, for a note.
  std::string compilation_config;
  std::string cudagraph_mode;
  std::vector<int64_t> cudagraph_capture_sizes;
  int64_t max_cudagraph_capture_size = 0;
  bool max_capture_from_flag = false;  // --max-cudagraph-capture-size given
  // --cudagraph-capture-sizes N [N ...] gave cudagraph_capture_sizes (printed back as that flag).
  bool capture_sizes_from_flag = false;
  std::vector<std::string> compilation_keys_not_modelled;
  // -O N / --optimization-level N (-1: not given). From v0.12 vLLM's optimization level
  // (Rules::optimization_levels; default 2); before, -O was --compilation-config's short name
  // and N the compilation level, which the plan reads as compilation_mode.
  int optimization_level = -1;
  // The compilation mode (level before v0.11.1) of --compilation-config's "mode" or "level"
  // key or a bare number (-1: not given): 0 no torch.compile, 3 vLLM's piecewise compile.
  int compilation_mode = -1;
  // --enable-lora and its sizes (vllm/config/lora.py LoRAConfig): adapter slots on the GPU,
  // their largest rank, CPU-cached adapters (host memory only), the buffers' dtype ("auto": the
  // model's), and --fully-sharded-loras.
  bool enable_lora = false;
  int64_t max_loras = 1;
  int64_t max_lora_rank = 16;
  int64_t max_cpu_loras = 0;
  std::string lora_dtype = "auto";
  bool fully_sharded_loras = false;
  int64_t lora_extra_vocab_size = -1;   // --lora-extra-vocab-size (releases before 0.12)
  // --lora-target-modules (LoRAConfig.target_modules): the module suffixes that get slots;
  // empty: every supported module.
  std::vector<std::string> lora_target_modules;
  // VLLM_PP_LAYER_PARTITION as given ("16,32": decoder layers per pipeline stage; "": vLLM's
  // default split, see engines/vllm/pipeline.h).
  std::string pp_layer_partition;
  // Set by the pipeline planner only: the stage one plan is made for (-1: the whole pipeline)
  // and its decoder layers [stage_first_layer, stage_first_layer + stage_layers).
  int64_t pipeline_stage = -1;
  int64_t stage_first_layer = 0;
  int64_t stage_layers = 0;
  // The words of the user's command the plan does not read (flags not modelled or without a
  // memory effect, with their values; environment assignments), as given: the printed command
  // keeps them, so that pasting it starts the same server.
  std::vector<std::string> kept_args;
  std::vector<std::string> kept_env;
};

// The user's vLLM settings: the engine-neutral part (version "0.10" ...; empty: the newest
// modelled release; gpu_memory_utilization 0: 0.9 before v0.20.2, else 0.92) and vLLM's own.
struct VllmSettings : EngineSettings, VllmOptions {};

// The neutral form (vLLM's own part carried as engine_options) and back.
EngineSettings ToEngineSettings(const VllmSettings& s);
VllmSettings ToVllmSettings(const EngineSettings& s);

// A vLLM plan: the neutral plan (Plan::resolved carries the resolved VllmOptions) and the KV
// cache layout and options it was made with.
struct VllmPlan : Plan {
  KvCacheLayout kv_layout;
  KvCacheOptions kv_options;  // the options the layout was made with
  // The activation peak of a rank that does not sample: under the V0 engine at TP > 1 only the
  // driver gathers the logits (LogitsProcessor._gather_logits: a gather to rank 0, not an
  // all-gather) and runs the sampler warm-up, so the other ranks profile the forward and the
  // encoder alone and print a smaller peak and a larger KV memory (vLLM keeps the driver's, the
  // fewest blocks). Equal to the plan's activation peak everywhere else.
  uint64_t non_sampling_activation_bytes = 0;
};

// Plans `inv` (a checkpoint or catalog inventory) on `gpu` with `settings`. Errors are for
// impossible settings (kInvalidArgument with vLLM's message where it has one); a start-up
// that would fail is a plan with fits == false.
Result<VllmPlan> PlanVllm(const Inventory& inv, const GpuSpec& gpu, const VllmSettings& settings);

// The same with the inventory's weight profile made once (ProfileVllmWeights): for callers
// that plan one model many times (advice, fit searches).
Result<VllmPlan> PlanVllm(const Inventory& inv, const VllmWeightProfile& weights,
                          const GpuSpec& gpu, const VllmSettings& settings);

// "0.10.2" -> 1002; kInvalidArgument for releases before 0.2 or text that is not a version.
Result<int> ParseVllmVersion(const std::string& text);

}  // namespace vramfit

#endif  // VRAMFIT_ENGINES_VLLM_VLLM_H_
