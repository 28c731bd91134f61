// vLLM's rules for one release, resolved once from the version text: every behaviour that
// changed between releases is a named field here, so no other file compares release numbers.
// Each field cites the upstream change that introduced it (../shared/reference/vllm-memory.md
// has the commits); docs/engines/vllm.md lists them as a table.
#ifndef VRAMFIT_ENGINES_VLLM_RULES_H_
#define VRAMFIT_ENGINES_VLLM_RULES_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "vramfit/status.h"

namespace vramfit::vllm {

// A release as major*10000 + minor*100 + patch (0.10.2 = 1002). Only rules.cc and the tests
// that pin a release use these numbers.
inline constexpr int kOldestModelled = 1000;   // rules read from upstream ~v0.10.0 (b77c7d327)
inline constexpr int kNewestModelled = 2200;   // up to upstream ~v0.22-dev (9aaf83ef5)
// Releases before 0.8 run the V0 engine only; their rules (the V0 worker's memory accounting,
// the scheduler's defaults, DeepSeek's KV layout) are kept per release from 0.2 (RulesFor does
// not clamp them to 0.10). 0.8 and 0.9 are planned with 0.10's rules.
inline constexpr int kOldestV0Modelled = 200;
inline constexpr int kFirstV1Default = 800;

// "0.10.2" or "v0.10" -> 1002 / 1000; kInvalidArgument for releases before 0.2 or text that is
// not a version.
Result<int> ParseRelease(const std::string& text);

// Which models a release runs on model runner V2 (vllm/v1/worker/gpu/model_runner.py) unless
// VLLM_USE_V2_MODEL_RUNNER says otherwise. Read from the stated release, not the clamped one: it
// only names the runner, the plan's numbers follow model runner V1 (docs/engines/vllm.md).
enum class ModelRunnerV2Default {
  kNone,                  // before v0.22
  kQwen3Dense,            // v0.22 (PR #39337): Qwen3ForCausalLM, neither MoE nor quantized
  kQwen3LlamaMistral,     // v0.23 (PR #43458): also LlamaForCausalLM and MistralForCausalLM
  kListedQuantizedToo,    // v0.24: those quantized too (PR #44446), and the MoE architectures
                          // Qwen2MoeForCausalLM, DeepseekV2ForCausalLM (PR #42667) and
                          // GraniteMoeForCausalLM (PR #45461)
  kDense,                 // v0.25 (PR #44443): every model that is not MoE, and those MoE ones
  kAll,                   // v0.29 (PR #53183): every model
};

// How the V0 worker (vllm/worker/worker.py) turns the profile run into the KV budget
// (docs/engines/vllm.md, "Releases before 0.8"). Each era charges the weights and the profile's
// activation peak; they differ in what else is charged against total x utilization.
enum class V0Profiling {
  // v0.2.0-v0.2.4: torch.cuda.max_memory_allocated() after the profile run; nothing outside
  // PyTorch's allocator is charged.
  kTorchPeak,
  // v0.2.5-v0.3.0 (PR #2031, "Fix peak memory profiling"): total - free after the profile run,
  // i.e. everything on the device: the CUDA context, NCCL, other processes.
  kDeviceUsed,
  // v0.3.1-v0.6.3 (PR #2863): free memory at init_device minus free memory after the profile
  // run: the context and other processes are left out, NCCL (set up after) is charged.
  kSinceInit,
  // v0.6.4: torch's peak allocation plus "non-torch" memory, the device's used memory minus
  // torch's current allocation after empty_cache: the context, NCCL and other processes.
  kTorchPeakPlusNonTorch,
  // v0.6.5 on (PR #10511, utils.py memory_profiling): the weights, the torch peak increase and
  // the non-torch increase since the baseline snapshot of init_device.
  kSnapshot,
};

struct Rules {
  int release = kNewestModelled;        // clamped to [kOldestModelled, kNewestModelled]
  std::string text = "0.22";            // "0.22": the modelled release as people write it
  bool has_v0_engine = false;           // VLLM_USE_V1=0 exists before v0.11 (removed in 0.11)
  // Engine and budget (vllm/v1/worker/gpu_worker.py, config/cache.py).
  // PR #38284 (main, 2026-04-21): the graph estimate reserved in the budget and the default
  // utilization 0.9 -> 0.92. From v0.20.2: the builds that say 0.20.2 (the 0.20.2rc1.devN
  // nightlies, issue #46462's "official 0.20.2" image) print the line numbers of main after
  // 2026-04-28 (gpu_worker.py:440/455, gpu_model_runner.py:5963/6042, kv_cache_utils.py:1152) and
  // "CUDA graph memory profiling is enabled (default since v0.21.0)".
  double default_gpu_memory_utilization = 0.92;  // 0.9 before v0.20.2
  bool nccl_in_budget = false;          // V1 before v0.11 snapshotted before NCCL (PR #25359)
  bool cudagraph_in_budget = true;      // v0.20.2+: the graph estimate is reserved in the budget
  // Scheduler defaults (EngineArgs.get_batch_defaults).
  bool cap_batched_tokens_by_seqs_x_len = true;  // v0.11+: min(default, seqs x max_model_len)
  // CUDA graphs (VllmConfig._set_cudagraph_sizes, CompilationConfig).
  bool full_and_piecewise_graphs = true; // v0.11+: FULL_AND_PIECEWISE is the default mode
  bool capture_step16_from_256 = true;  // v0.11.1+ (PR #26016): step 8 up to 256, then 16
  // V1 in 0.8.0 to 0.9.1, planned with 0.10's rules otherwise: the default capture list is
  // [1, 2, 4] + 8..512 step 8, cut at max_num_batched_tokens and not at max_num_seqs
  // (config.py VllmConfig._set_cudagraph_sizes at 0.8.5; SchedulerConfig.cuda_graph_sizes = [512]
  // from PR #17201, 0.9.0); PR #20628 (0.10.0) made it min(max_num_seqs x 2, 512).
  bool capture_to_512_by_tokens = false;
  // v0.13+ (PR #30330, 2025-12-10): with speculative decoding the largest capture size is
  // max_num_seqs x (1 + num_speculative_tokens) x 2 (config/vllm.py decode_query_len), and the
  // FULL decode graphs cover uniform batches of up to max_num_seqs x (1 + k) tokens
  // (v1/cudagraph_dispatcher.py initialize_cudagraph_keys); before, max_num_seqs x 2.
  bool capture_sizes_per_decode_query = true;
  // -O / --optimization-level (PR #26847, merged in the week to 2025-11-28, first in v0.12.0;
  // config/vllm.py OptimizationLevel, OPTIMIZATION_LEVEL_00..03): -O0 no torch.compile and no
  // CUDA graphs, -O1 compiled with PIECEWISE graphs, -O2 (the default) and -O3
  // FULL_AND_PIECEWISE. Before it -O was --compilation-config's short name (PR #10437, v0.6.5):
  // -O N set the compilation level N, and V1 captured graphs only at level 3 (PIECEWISE).
  bool optimization_levels = true;
  // LoRA (vllm/lora/): the extra vocabulary rows (--lora-extra-vocab-size, default 256) until
  // PRs #28382 and #28545 removed them (2025-11-11/12, taken as v0.12); separate CUDA graphs with
  // and without active adapters (CompilationConfig.cudagraph_specialize_lora, default True, in
  // the source of the 0.10.2 line; from 0.11 here, 0.10's rules keep one set); Qwen3's embedding
  // and LM head wrapped from PR #29816 (merged 2026-02-06, v0.16).
  bool lora_extra_vocab = false;
  bool lora_graphs_specialized = true;
  bool qwen3_lora_embeddings = true;
  // LoRA on the routed experts (vllm/lora/layers/fused_moe.py FusedMoEWithLoRA, PR #21229,
  // merged after v0.11.0; TRL issue #4584 names v0.11.2 the release that brought it): from
  // 0.11.1 here, which charges it one patch early at worst (the safe side).
  bool lora_fused_moe = true;
  // MoE (fused_moe/fused_moe.py VLLM_FUSED_MOE_CHUNK_SIZE).
  uint64_t fused_moe_chunk_tokens = 16384;  // 32768 before v0.11, 65536 before v0.6
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
  // Prefix caching on by default for hybrid (Mamba / linear-attention) models (PR #50991,
  // "[Mamba] enable prefix cache by default", v0.28.0); before, off unless
  // --enable-prefix-caching. On, MambaModelConfig.verify_and_update_config resolves
  // mamba_cache_mode "none" to "align" for a model without Mamba prefix caching ("all" support):
  // two state pages per request in each linear-attention group. Read from the release number
  // itself, past the newest modelled one (the rest of 0.28's rules are 0.22's).
  bool hybrid_prefix_caching_default = false;
  // A third scheduler tier in get_batch_defaults (engine/arg_utils.py, v0.28.0, lines 2582-2591
  // as a pinned reading of the tag quotes them; a later build's traceback shows the same
  // `if device_memory >= 160 * GiB_bytes:`): a device of 160 GiB or more, "like B200/B300",
  // gets an API-server max_num_batched_tokens of 16384 (8192 before). Read from the release
  // number itself, like hybrid_prefix_caching_default.
  bool batch_tier_160gib = false;
  // Prefetch weight offloading (--offload-group-size and the rest, OffloadConfig; PR #29941,
  // merged 2026-02-25, taken as v0.17): argparse refuses its flags before.
  bool prefetch_offload = true;
  // --mamba-block-size (CacheConfig.mamba_block_size, PR #27289, merged 2025-10-28, first in
  // v0.11.1): argparse refuses it before. With it comes the check that it is set only with
  // prefix caching (CacheConfig.validate_mamba_block_size, moved to VllmConfig the next day by
  // PR #27773, which lets a value equal to max_model_len through).
  bool mamba_block_size_flag = true;
  // --spec-method, --spec-model, --spec-tokens (PR #42476, merged 2026-05-18, taken as 0.22):
  // argparse refuses them before.
  bool spec_alias_flags = true;
  // Mamba prefix caching's "align" mode (PR #30877, merged 2026-01-24; 0.16 here, the first
  // release certain to hold it): before it, prefix caching on a hybrid model is not modelled.
  bool mamba_align_mode = true;
  // Sampler warm-up (v1/sample/ops/topk_topp_sampler.py, apply_top_k_top_p): the full-vocab
  // PyTorch sort from v0.11.1, when PR #26859 (2025-10-14) made the FlashInfer sampler opt-in,
  // until v0.17, whose PR #33538 (2026-02-17, not in v0.16.0) routes batches of 8 or more to a
  // Triton kernel that sorts nothing.
  bool sampler_sorts = false;
  // That Triton kernel's releases, v0.17 to v0.20: FlashInfer's sampler is the default again
  // from v0.21 (PR #40376).
  bool sampler_triton = false;
  // The native path (forward_native's apply_top_k_top_p, what VLLM_USE_FLASHINFER_SAMPLER=0
  // selects) is that Triton kernel from v0.17 on, the full-vocab sort before.
  bool sampler_native_triton = false;
  // V1 releases up to v0.11.0: the warm-up's top-k/top-p runs FlashInfer's sampler wherever
  // FlashInfer imports and VLLM_USE_FLASHINFER_SAMPLER is not 0 (v1/sample/ops/
  // topk_topp_sampler.py: `envs.VLLM_USE_FLASHINFER_SAMPLER is not False`), else the PyTorch
  // sort. vLLM's images ship FlashInfer; the pip wheel carried none until PR #26443 (v0.11.1),
  // so the path depends on how vLLM was installed (see plan.cc).
  bool sampler_flashinfer_if_installed = false;
  // All-reduce workspaces inside the profile run with TP > 1 (docs/engines/
  // vllm-multimodal-and-allreduce.md, part B): from v0.17 the FlashInfer all-reduce + RMSNorm
  // fusion is on by default at -O2 (PR #34299, 2026-02-11) and creates its IPC workspace while
  // profile_run compiles, and from ~v0.18 CUDA-graph memory profiling runs inside the same
  // measurement (PR #30515). Before v0.17 the custom all-reduce's buffers are made before the
  // snapshot (PR #25359, v0.11) and only NCCL's lazy buffers grow during the profile.
  bool tp_profile_workspaces = true;
  // The tensor-parallel all-reduce is out of place on every path from v0.6.5: PR #10121
  // (2024-11, "changes pynccl all reduce to be out of place and removes support for torch
  // distributed's all reduce") made the NCCL path, the one a profile-sized tensor takes (above
  // the custom all-reduce's size limit), write into a new tensor (pynccl.py all_reduce:
  // out_tensor = torch.empty_like(in_tensor); parallel_state.py GroupCoordinator.all_reduce:
  // "we always make the all-reduce operation out-of-place"). Before it, NCCL reduced in place.
  bool all_reduce_out_of_place = true;
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
  // --language-model-only (PR #34120, merged 2026-02-09, taken as v0.16): the same as a limit of
  // 0 for every modality; the models' towers are built under _mark_tower_model (PR #32605,
  // 2026-01-19), which skips them then. Older releases refuse the flag.
  bool language_model_only_flag = true;
  // The `vllm serve MODEL` command (vllm/scripts.py, PR #5090), first released in v0.5.2 (the docs
  // moved to it after that release, PR #6431); before it the server starts as `python -m
  // vllm.entrypoints.openai.api_server --model MODEL`.
  bool serve_cli = true;
  // Qwen3-VL's dummy video (model_executor/models/qwen3_vl.py get_max_video_tokens,
  // get_dummy_mm_data; docs/engines/vllm-multimodal-and-allreduce.md, A.4). Up to v0.14 as many
  // frames as max_model_len holds, at most 24,576, each resized so that all frames together stay
  // under the video processor's longest_edge; up to v0.12 the budget counts 12.5 tokens per
  // embedding for the timestamp text (PR #30475, 2025-12-16, dropped it: from v0.13 here, the
  // image-sized count); from v0.15 two frames (PR #32684, 2026-01-25).
  bool qwen3vl_video_timestamps = false;
  bool qwen3vl_video_two_frames = true;
  // v0.11 only (PR #25810 in, PR #29386 out in v0.12): each dummy encoder output is padded with
  // zeros to the encoder budget's rows before it is cached (gpu_model_runner.py profile_run).
  bool mm_outputs_padded_to_budget = false;
  // v0.11.0 only: the Qwen-VL vision attention (qwen2_5_vl.py Qwen2_5_VisionAttention.forward,
  // shared by Qwen3-VL; qwen2_vl.py alike) concatenates q and k (PR #24511, 2025-09-14) and
  // rotates them through an fp32 copy (apply_rotary_pos_emb_vision: t.float(), an fp32 output,
  // then type_as), while the block input, its normed copy, the qkv output and contiguous q, k, v
  // are alive; PR #28769 (2025-11-16, taken as v0.11.1) and PR #28798 (cos/sin cache, no fp32
  // copy) reworked it. See plan.cc VisionTowerBytesPerPatch.
  bool vision_rotary_fp32_qk = false;
  // The encoder profile's modality on a tie in tokens per item (get_modality_with_max_tokens):
  // the first listed, the image, until PR #34533 (2026-02-13, taken as v0.17) keyed the max on
  // (tokens, name), so video wins.
  bool mm_tie_prefers_video = true;
  // KV cache (v1/core/kv_cache_utils.py).
  bool strided_kv_groups = true;        // v0.11+: layers[g::n_groups]; v0.10: contiguous slices
  int group_close_enough_percent = 150; // largest bucket used under this % of the smallest:
                                        // 150 since PR #36684 (~v0.18), 125 before, 0 in v0.10
  // v0.20.1+ (PR #41069, 2026-04-28): tokens = concurrency x length. The PR moved the two log
  // calls next to each other (kv_cache_utils.py 1713/1718 -> 1710/1711); v0.20.1 prints them at
  // 1708/1709 (club-3090 #91), v0.21.0 at 1710/1711 (LMCache #3430).
  bool tokens_from_concurrency = true;
  // --kv-cache-dtype's choices before v0.4.3 (vllm/engine/arg_utils.py): the flag came with the
  // FP8 E5M2 KV cache (PR #2279, 2024-01-28, v0.3.0) as `auto | fp8_e5m2`; PR #3290
  // (2024-04-03, v0.4.1) replaced fp8_e5m2 by `fp8` (scaled e4m3); PR #4893 (2024-05-22,
  // v0.4.3) took fp8_e5m2 back and added fp8_e4m3 as fp8's other name.
  bool kv_cache_dtype_flag = true;      // v0.3.0+
  bool kv_fp8_e5m2 = true;              // v0.3.0-v0.4.0 and v0.4.3+
  bool kv_fp8 = true;                   // `fp8` from v0.4.1
  bool kv_fp8_e4m3 = true;              // v0.4.3+
  // --limit-mm-per-prompt (PR #7126, 2024-08-15, v0.5.5) read `image=16,video=2` only, until
  // PR #16789 (2025-04-18, v0.8.5; arg_utils.py optional_dict) took a JSON object too.
  bool limit_mm_flag = true;
  bool limit_mm_json = true;
  // Llama 3.1's rope_scaling ({"rope_type": "llama3", ...}, no "type" key) is read from
  // v0.5.3.post1 (PR #6693, "Fix RoPE error in Llama 3.1"); before, vllm/config.py
  // _get_and_verify_max_len (from v0.2.2; the attention layer's get_rope before) indexes
  // rope_scaling["type"]. A release number keeps no .postN: see LlamaRopeRefusal.
  bool rope_type_key = true;
  // --kv-cache-dtype int8_per_token_head / fp8_per_token_head (PR #38378, 2026-04-02; planned
  // from v0.20, the first release line dated after it).
  bool kv_per_token_head_quant = true;
  // TurboQuant KV presets (turboquant_k8v4, _4bit_nc, _k3v4_nc, _3bit_nc): PR #38479; on hybrid
  // models from PR #39931. The NVFP4 KV cache through FlashInfer: PR #40177.
  bool kv_turboquant = true;
  bool kv_turboquant_hybrid = true;
  bool kv_nvfp4 = true;
  // --attention-backend (AttentionConfig, PR #26315, 2025-12-05): 0.13 on; before, the
  // VLLM_ATTENTION_BACKEND variable chose the backend.
  bool attention_backend_flag = true;
  // --decode-context-parallel-size (ParallelConfig.decode_context_parallel_size): the KV cache
  // sharded by token over DCP ranks of the TP group, for MLA layers from PR #23734 (2025-09-06,
  // v0.10.2; the flag check knows its release); grouped-query attention from PR #24864
  // (2025-10-14, FlashAttention; taken as v0.11.1), which added ModelConfig's head checks.
  // Before it a GQA model's attention implementation fails gpu_model_runner's check ("DCP
  // requires attention impls to return the softmax lse for decode").
  bool dcp_gqa = true;
  // On an integrated GPU (CUDA's is_integrated) MemorySnapshot.measure takes free memory from
  // psutil's available host memory (vllm/utils/mem_utils.py; read at v0.13 and v0.22, not at
  // v0.10): the host memory start-up takes counts as non-torch memory.
  bool integrated_free_from_host = true;
  ModelRunnerV2Default model_runner_v2 = ModelRunnerV2Default::kQwen3Dense;
  // Pipeline parallel max-length check (get_kv_cache_configs): PR #29431 (v0.14) checked one
  // request of the whole model's layers against the smallest worker's available memory; PR
  // #33698 (merged 2026-02, taken as v0.16) checks each worker's own layers against its own
  // memory, as releases before v0.14 did (issues #32105, #34076).
  bool pp_kv_check_whole_model = false;
  // Releases before 0.8 (see V0Profiling).
  bool v0_only = false;                  // before 0.8 the V0 engine is the engine
  V0Profiling v0_profiling = V0Profiling::kSnapshot;
  // DeepSeek-V2/V3 cache the MLA latent from v0.7.1 (PR #12601); before, DeepseekV2Attention
  // cached K and V for every head at qk_head_dim, V zero-padded to it.
  bool mla_latent_cache = true;
  // ... at a head size of 256 before v0.7.0: ModelConfig.get_head_size returned 256 for
  // deepseek_v2 (PR #4650, "FlashAttention supports only head_size 32, 64, 128, 256") and q, k, v
  // were zero-padded to it, until PR #12067 (2025-01-15) dropped the padding.
  bool deepseek_heads_padded_256 = false;
  // V0 SchedulerConfig: chunked prefill on by default above 32K context from v0.5.4 (PR #6666,
  // merged 2024-07-23) ...
  bool v0_long_context_chunked_prefill = true;
  // ... with a 512-token budget up to 0.6.4 ("Chunked prefill is enabled with
  // max_num_batched_tokens=512" in the logs of 0.6.4), 2048 from 0.6.5 (SchedulerConfig.
  // __post_init__ of v0.6.6.post1: "a balance between ITL and TTFT").
  int64_t v0_chunked_prefill_tokens = 2048;
};

// The rules of `release` (any integer: clamped to the modelled range, except model_runner_v2;
// releases before 0.8 keep their own number, from 0.2).
Rules RulesFor(int release);

// The fields of releases before 0.8 (v0_only ... v0_chunked_prefill_tokens), from r->release.
void LegacyV0Rules(Rules* r);

// Whether vLLM runs a model of `architecture` (config.json's first "architectures" entry) on
// model runner V2 by default at the rules' release: VllmConfig.use_v2_model_runner without
// VLLM_USE_V2_MODEL_RUNNER (config/vllm.py _is_default_v2_model_runner_model; v0.22: the
// architecture set, not is_moe, not is_quantized, the generate runner; v0.24 drops the last two
// for the listed architectures, v0.25 takes every model that is not MoE). Features V2 does not
// support yet fall back to V1 in vLLM; they are not read here.
bool ModelRunnerV2ByDefault(const Rules& rules, std::string_view architecture, bool moe,
                            bool quantized);

}  // namespace vramfit::vllm

#endif  // VRAMFIT_ENGINES_VLLM_RULES_H_
