// vLLM's rules for one release, resolved once from the version text: every behaviour that
// changed between releases is a named field here, so no other file compares release numbers.
// Each field cites the upstream change that introduced it (../shared/reference/vllm-memory.md
// has the commits); docs/engines/vllm.md lists them as a table.
#ifndef VRAMFIT_ENGINES_VLLM_RULES_H_
#define VRAMFIT_ENGINES_VLLM_RULES_H_

#include <cstdint>
#include <string>

#include "vramfit/status.h"

namespace vramfit::vllm {

// A release as major*10000 + minor*100 + patch (0.10.2 = 1002). Only rules.cc and the tests
// that pin a release use these numbers.
inline constexpr int kOldestModelled = 1000;   // rules read from upstream ~v0.10.0 (b77c7d327)
inline constexpr int kNewestModelled = 2200;   // up to upstream ~v0.22-dev (9aaf83ef5)

// "0.10.2" or "v0.10" -> 1002 / 1000; kInvalidArgument for releases before 0.8 or text that is
// not a version.
Result<int> ParseRelease(const std::string& text);

struct Rules {
  int release = kNewestModelled;        // clamped to [kOldestModelled, kNewestModelled]
  std::string text = "0.22";            // "0.22": the modelled release as people write it
  bool has_v0_engine = false;           // VLLM_USE_V1=0 exists before v0.11 (removed in 0.11)
  // Engine and budget (vllm/v1/worker/gpu_worker.py, config/cache.py).
  double default_gpu_memory_utilization = 0.92;  // 0.9 before v0.21
  bool nccl_in_budget = false;          // V1 before v0.11 snapshotted before NCCL (PR #25359)
  bool cudagraph_in_budget = true;      // v0.21+: the graph estimate is reserved in the budget
  // Scheduler defaults (EngineArgs.get_batch_defaults).
  bool cap_batched_tokens_by_seqs_x_len = true;  // v0.11+: min(default, seqs x max_model_len)
  // CUDA graphs (VllmConfig._set_cudagraph_sizes, CompilationConfig).
  bool full_and_piecewise_graphs = true; // v0.11+: FULL_AND_PIECEWISE is the default mode
  bool capture_step16_from_256 = true;  // v0.11.1+ (PR #26016): step 8 up to 256, then 16
  // MoE (fused_moe/fused_moe.py VLLM_FUSED_MOE_CHUNK_SIZE).
  uint64_t fused_moe_chunk_tokens = 16384;  // 32768 before v0.11
  // Marlin kernels on Turing (PRs #29901, #31008; v0.14): the floor of awq_marlin, gptq_marlin,
  // fp8 and modelopt_fp4 (get_min_capability), and of Marlin itself, 8.0 -> 7.5.
  bool marlin_on_turing = true;
  // compressed-tensors schemes' floors (schemes/*.py): WNA16 8.0 -> 7.5 (PR #29732, v0.12);
  // W8A16 FP8 and NVFP4 W4A16 8.0 -> 7.5 (PRs #33076, #33201, v0.16).
  bool ct_wna16_on_turing = true;
  bool ct_fp8_fp4_on_turing = true;
  // GPTQ consolidation (PR #38288, v0.22): every GPTQ checkpoint runs on Marlin (AutoGPTQConfig);
  // before, gptq_marlin declined below Marlin's floor and the exllama `gptq` kernel (6.0) ran.
  bool gptq_marlin_only = true;
  // compressed-tensors accepts --dtype float32 (get_supported_act_dtypes, PR #17112, v0.10.1).
  bool ct_float32 = true;
  // Sampler warm-up (v1/sample/ops/topk_topp_sampler.py, apply_top_k_top_p): the full-vocab
  // PyTorch sort from v0.11.1, when PR #26859 (2025-10-14) made the FlashInfer sampler opt-in,
  // until v0.17, whose PR #33538 (2026-02-17, not in v0.16.0) routes batches of 8 or more to a
  // Triton kernel that sorts nothing.
  bool sampler_sorts = false;
  // That Triton kernel's releases, v0.17 to v0.20: FlashInfer's sampler is the default again
  // from v0.21 (PR #40376).
  bool sampler_triton = false;
  // V1 releases before v0.11 (v0.8-v0.10): the warm-up's top-k/top-p runs FlashInfer's sampler
  // in vLLM's images (FlashInfer 0.2.1.post2 in v0.8's, PR #14815; the 0.2.3 API from PR
  // #15777, sampling from logits from PR #18608); the pip wheel carried no FlashInfer until PR
  // #26443 (v0.11.1), so a pip install sorts. v0.11.0 is left out: see plan.cc.
  bool sampler_flashinfer_images = false;
  // All-reduce workspaces inside the profile run with TP > 1 (docs/engines/
  // vllm-multimodal-and-allreduce.md, part B): from v0.17 the FlashInfer all-reduce + RMSNorm
  // fusion is on by default at -O2 (PR #34299, 2026-02-11) and creates its IPC workspace while
  // profile_run compiles, and from ~v0.18 CUDA-graph memory profiling runs inside the same
  // measurement (PR #30515). Before v0.17 the custom all-reduce's buffers are made before the
  // snapshot (PR #25359, v0.11) and only NCCL's lazy buffers grow during the profile.
  bool tp_profile_workspaces = true;
  // The all-reduce + RMSNorm fusion (config/vllm.py enable_allreduce_rms_fusion) refused TP with
  // DP > 1 or PP > 1 from its default-on in v0.17 (issues #34458, #35426) until PR #41458
  // (2026-05-01, first in v0.21) re-enabled it there.
  bool allreduce_fusion_single_dp_pp = false;
  // gpt-oss MXFP4 experts (quantization/mxfp4.py get_mxfp4_backend): triton_kernels is bundled
  // in vLLM's wheel from v0.12 (PR #28788, tag v3.5.x), so Hopper picks the Triton backend;
  // before, Marlin unless it was installed by hand.
  bool mxfp4_triton_kernels = true;
  // Weight loading (quantization/fp8.py).
  bool online_fp8_layerwise = true;     // v0.16+ (PR #31914): one layer in 16 bits at a time
  // KV cache (v1/core/kv_cache_utils.py).
  bool strided_kv_groups = true;        // v0.11+: layers[g::n_groups]; v0.10: contiguous slices
  int group_close_enough_percent = 150; // largest bucket used under this % of the smallest:
                                        // 150 since PR #36684 (~v0.18), 125 before, 0 in v0.10
  bool tokens_from_concurrency = true;  // ~v0.22 (PR #41069): tokens = concurrency x length
  // Pipeline parallel max-length check (get_kv_cache_configs): PR #29431 (v0.14) checked one
  // request of the whole model's layers against the smallest worker's available memory; PR
  // #33698 (merged 2026-02, taken as v0.16) checks each worker's own layers against its own
  // memory, as releases before v0.14 did (issues #32105, #34076).
  bool pp_kv_check_whole_model = false;
};

// The rules of `release` (any integer: clamped to the modelled range).
Rules RulesFor(int release);

}  // namespace vramfit::vllm

#endif  // VRAMFIT_ENGINES_VLLM_RULES_H_
