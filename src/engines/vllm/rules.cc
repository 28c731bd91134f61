// vLLM's release rules (see rules.h): the one place release numbers are compared.
#include "engines/vllm/rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace vramfit::vllm {

Result<int> ParseRelease(const std::string& text) {
  std::string t = text;
  if (!t.empty() && (t[0] == 'v' || t[0] == 'V')) t = t.substr(1);
  int parts[3] = {0, 0, 0};
  size_t at = 0;
  for (int i = 0; i < 3 && at <= t.size(); ++i) {
    const char* begin = t.data() + at;
    auto [end, ec] = std::from_chars(begin, t.data() + t.size(), parts[i]);
    if (ec != std::errc() || end == begin) {
      if (i < 2) {
        return Status::InvalidArgument(
            fmt::format("vLLM version \"{}\": expected MAJOR.MINOR[.PATCH], e.g. 0.10.2", text));
      }
      break;
    }
    at = static_cast<size_t>(end - t.data());
    if (at < t.size() && t[at] == '.') {
      ++at;
    } else {
      break;
    }
  }
  if (parts[0] < 0 || parts[0] > 9 || parts[1] < 0 || parts[1] > 99 || parts[2] < 0 ||
      parts[2] > 99) {
    return Status::InvalidArgument(fmt::format(
        "vLLM version \"{}\": expected MAJOR.MINOR[.PATCH] with MAJOR 0-9 and MINOR and PATCH "
        "0-99, e.g. 0.10.2",
        text));
  }
  const int v = parts[0] * 10000 + parts[1] * 100 + parts[2];
  if (v < kOldestV0Modelled) {
    return Status::InvalidArgument(
        fmt::format("vLLM version \"{}\": releases before 0.2 are not modelled", text));
  }
  return v;
}

Rules RulesFor(int release) {
  Rules r;
  // Before 0.8 each release keeps its own number (V0 only, see LegacyV0Rules); 0.8 and 0.9 are
  // planned with 0.10's rules.
  r.release = release < kFirstV1Default ? std::max(release, kOldestV0Modelled)
                                        : std::clamp(release, kOldestModelled, kNewestModelled);
  r.text = fmt::format("{}.{}", r.release / 10000, (r.release / 100) % 100);
  r.has_v0_engine = r.release < 1100;
  r.default_gpu_memory_utilization = r.release >= 2002 ? 0.92 : 0.9;
  r.nccl_in_budget = r.release < 1100;
  r.cudagraph_in_budget = r.release >= 2002;
  r.cap_batched_tokens_by_seqs_x_len = r.release >= 1100;
  r.full_and_piecewise_graphs = r.release >= 1100;
  r.capture_step16_from_256 = r.release >= 1101;
  r.capture_to_512_by_tokens = release >= kFirstV1Default && release < 902;  // 0.8.0 to 0.9.1
  r.capture_sizes_per_decode_query = r.release >= 1300;
  r.optimization_levels = r.release >= 1200;
  r.lora_extra_vocab = r.release < 1200;
  r.lora_graphs_specialized = r.release >= 1100;
  r.qwen3_lora_embeddings = r.release >= 1600;
  r.lora_fused_moe = r.release >= 1101;
  r.fused_moe_chunk_tokens = r.release >= 1100 ? 16384 : 32768;
  r.sampler_sorts = r.release >= 1101 && r.release < 1700;
  r.sampler_triton = r.release >= 1700 && r.release < 2100;
  r.sampler_native_triton = r.release >= 1700;
  r.sampler_flashinfer_if_installed = r.release < 1101;
  r.tp_profile_workspaces = r.release >= 1700;
  r.allreduce_fusion_single_dp_pp = r.release >= 1700 && r.release < 2100;
  r.online_fp8_layerwise = r.release >= 1600;
  r.language_model_only_flag = r.release >= 1600;
  r.serve_cli = r.release >= 502;
  r.mxfp4_triton_kernels = r.release >= 1200;
  r.marlin_on_turing = r.release >= 1400;
  r.ct_wna16_on_turing = r.release >= 1200;
  r.ct_fp8_fp4_on_turing = r.release >= 1600;
  r.gptq_marlin_only = r.release >= 2200;
  r.ct_float32 = r.release >= 1001;
  r.hybrid_prefix_caching_default = release >= 2800;
  r.batch_tier_160gib = release >= 2800;
  r.prefetch_offload = r.release >= 1700;
  r.mamba_block_size_flag = r.release >= 1101;
  r.spec_alias_flags = r.release >= 2200;
  r.mamba_align_mode = r.release >= 1600;
  r.strided_kv_groups = r.release >= 1100;
  r.group_close_enough_percent = r.release >= 1800 ? 150 : r.release >= 1100 ? 125 : 0;
  r.tokens_from_concurrency = r.release >= 2001;
  r.kv_per_token_head_quant = r.release >= 2000;
  r.kv_turboquant = r.release >= 2000;         // PR #38479, 2026-04-15
  r.kv_turboquant_hybrid = r.release >= 2100;  // PR #39931, 2026-05-05
  r.kv_nvfp4 = r.release >= 2100;              // PR #40177, 2026-04-30 (after 0.20.1's #41069)
  r.attention_backend_flag = r.release >= 1300;  // PR #26315, 2025-12-05 (after 0.12.0)
  r.dcp_gqa = r.release >= 1101;
  r.integrated_free_from_host = r.release >= 1300;
  r.kv_cache_dtype_flag = r.release >= 300;
  r.kv_fp8_e5m2 = r.release < 401 || r.release >= 403;
  r.kv_fp8 = r.release >= 401;
  r.kv_fp8_e4m3 = r.release >= 403;
  r.limit_mm_flag = r.release >= 505;
  r.limit_mm_json = r.release >= 805;
  r.rope_type_key = r.release >= 504;  // and 0.5.3.post1 (LlamaRopeRefusal)
  r.qwen3vl_video_timestamps = r.release < 1300;
  r.qwen3vl_video_two_frames = r.release >= 1500;
  r.mm_outputs_padded_to_budget = r.release >= 1100 && r.release < 1200;
  r.vision_rotary_fp32_qk = r.release >= 1100 && r.release < 1101;
  r.mm_tie_prefers_video = r.release >= 1700;
  // From the stated release: v0.22.0, v0.23.0, v0.25.0 and v0.29.0 release notes (PRs #39337,
  // #43458, #44443) and vLLM's post on the rollout (2026-08-31: dates of PRs #42667, #45461,
  // #44446 and #53183). v0.24 is the first release after #42667 (merged 2026-06-12, after the
  // v0.23 branch was cut) and the release whose quantized-model support v0.25's notes build on
  // (#44446, 2026-06-18); the post names v0.29.0 as the first tag with #53183.
  using V2 = ModelRunnerV2Default;
  r.model_runner_v2 = release >= 2900   ? V2::kAll
                      : release >= 2500 ? V2::kDense
                      : release >= 2400 ? V2::kListedQuantizedToo
                      : release >= 2300 ? V2::kQwen3LlamaMistral
                      : release >= 2200 ? V2::kQwen3Dense
                                        : V2::kNone;
  r.pp_kv_check_whole_model = r.release >= 1400 && r.release < 1600;
  LegacyV0Rules(&r);
  return r;
}

// Releases before 0.8 (rules.h V0Profiling); each cites the upstream change.
void LegacyV0Rules(Rules* r) {
  const int v = r->release;
  r->v0_only = v < kFirstV1Default;
  r->v0_profiling = v < 205    ? V0Profiling::kTorchPeak             // PR #2031 in v0.2.5
                    : v < 301  ? V0Profiling::kDeviceUsed            // PR #2863 in v0.3.1
                    : v < 604  ? V0Profiling::kSinceInit             // PR #9352 in v0.6.4
                    : v < 605  ? V0Profiling::kTorchPeakPlusNonTorch  // PR #10511 in v0.6.5
                               : V0Profiling::kSnapshot;
  r->mla_latent_cache = v >= 701;                  // PR #12601
  r->deepseek_heads_padded_256 = v < 700;          // PR #12067
  r->v0_long_context_chunked_prefill = v >= 504;   // PR #6666
  r->v0_chunked_prefill_tokens = v < 605 ? 512 : 2048;
  r->all_reduce_out_of_place = v >= 605;           // PR #10121
  // fused_moe's token chunk: 64K from PR #6029 (July 2024, v0.5.1; before, more than 65,536
  // tokens were refused), 32K from PR #7995 (2024-08-29, v0.6.0).
  if (v < 600) r->fused_moe_chunk_tokens = 65536;
}

namespace {

// The MoE architectures on model runner V2 by default from v0.24 (config/vllm.py
// DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES after PRs #42667 and #45461). A reading of the v0.27.1
// selector counts seven MoE families in that set; the other four were not read.
bool ListedMoe(std::string_view architecture) {
  return architecture == "Qwen2MoeForCausalLM" || architecture == "DeepseekV2ForCausalLM" ||
         architecture == "GraniteMoeForCausalLM";
}

bool QwenLlamaMistral(std::string_view architecture) {
  return architecture == "Qwen3ForCausalLM" || architecture == "LlamaForCausalLM" ||
         architecture == "MistralForCausalLM";
}

}  // namespace

bool ModelRunnerV2ByDefault(const Rules& rules, std::string_view architecture, bool moe,
                            bool quantized) {
  switch (rules.model_runner_v2) {
    case ModelRunnerV2Default::kNone:
      return false;
    case ModelRunnerV2Default::kQwen3Dense:
      return architecture == "Qwen3ForCausalLM" && !moe && !quantized;
    case ModelRunnerV2Default::kQwen3LlamaMistral:
      return QwenLlamaMistral(architecture) && !moe && !quantized;
    case ModelRunnerV2Default::kListedQuantizedToo:
      return (QwenLlamaMistral(architecture) && !moe) || ListedMoe(architecture);
    case ModelRunnerV2Default::kDense:
      return !moe || ListedMoe(architecture);
    case ModelRunnerV2Default::kAll:
      return true;
  }
  return false;
}

}  // namespace vramfit::vllm
