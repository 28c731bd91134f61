// vLLM's refusals before allocation (see refusals.h). Sources, vLLM ~v0.10 to ~v0.22:
//   dtype:       vllm/config/model.py _get_and_verify_dtype, _resolve_auto_dtype;
//                vllm/platforms/cuda.py supported_dtypes, check_if_supports_dtype.
//   capability:  vllm/config/vllm.py _get_quantization_config (get_min_capability of each
//                QuantizationConfig in vllm/model_executor/layers/quantization/*.py);
//                compressed_tensors.py _check_scheme_supported for the per-scheme minimums.
//   act dtypes:  the same function, QuantizationConfig.get_supported_act_dtypes.
//   FP8 blocks:  quantization/fp8.py Fp8MoEMethod.create_weights (experts) and
//                quantization/utils/fp8_utils.py validate_fp8_block_shape (dense linears).
#include "engines/vllm/refusals.h"

#include <fmt/format.h>

#include <charconv>

#include "core/units.h"
#include "model/auto_round.h"

namespace vramfit::vllm {
namespace {

constexpr int kBf16Capability = 80;  // CudaPlatform.supported_dtypes: bfloat16 from Ampere

bool Packed(const QuantScheme& q) {
  switch (q.layout) {
    case QuantLayout::kAwqGemm:
    case QuantLayout::kAwqGemv:
    case QuantLayout::kAwqGemvFast:
    case QuantLayout::kAwqMarlin:
    case QuantLayout::kGptq:
    case QuantLayout::kCtPacked:
    case QuantLayout::kCtNvfp4:
    case QuantLayout::kCtMxfp4:
    case QuantLayout::kModelOptNvfp4:
    case QuantLayout::kMxfp4Blocks:
    case QuantLayout::kBnb4:
      return true;
    default:
      return false;
  }
}

// Minimum compute capability of a selected method (QuantizationConfig.get_min_capability, checked
// at config time by VllmConfig._get_quantization_config). Research note with the PRs and
// releases: docs/engines/vllm.md, "Refusals".
int MethodFloor(const std::string& method, const Rules& rules) {
  const int marlin = rules.marlin_on_turing ? 75 : 80;
  if (method == "awq") return 75;
  if (method == "awq_marlin" || method == "gptq_marlin" || method == "fp8" ||
      method == "modelopt_fp4") {
    return marlin;
  }
  if (method == "gptq" || method == "gguf") return 60;
  if (method == "mxfp4") return 80;
  if (method == "bitsandbytes" || method == "compressed-tensors") return 70;
  if (method == "modelopt") return 89;
  return 0;
}

// compressed-tensors picks a scheme per layer at model construction and checks its floor there
// (CompressedTensorsConfig._check_scheme_supported): W8A8 FP8 falls back to W8A16 FP8 and NVFP4
// W4A4 to W4A16 below their own floors, so the floor is the fallback's.
int SchemeFloor(const QuantScheme& q, const Rules& rules) {
  switch (q.layout) {
    case QuantLayout::kCtPacked: return rules.ct_wna16_on_turing ? 75 : 80;
    case QuantLayout::kCtFp8:
    case QuantLayout::kCtNvfp4: return rules.ct_fp8_fp4_on_turing ? 75 : 80;
    case QuantLayout::kCtMxfp4: return 80;
    case QuantLayout::kCtInt8: return 75;
    default: return 0;
  }
}

// get_supported_act_dtypes of a method, as Python prints them, and whether `d` is among them.
struct ActDtypes {
  const char* text;
  bool f16, bf16, f32;
};
ActDtypes ActDtypesOf(const std::string& method, const Rules& rules) {
  if (method == "awq") return {"[torch.float16]", true, false, false};
  if (method == "gptq") {
    return rules.gptq_marlin_only ? ActDtypes{"[torch.float16, torch.bfloat16]", true, true, false}
                                  : ActDtypes{"[torch.float16]", true, false, false};
  }
  if (method == "mxfp4") return {"[torch.bfloat16]", false, true, false};
  if (method == "bitsandbytes" || method == "gguf") return {"", true, true, true};
  if (method == "compressed-tensors" && rules.ct_float32) return {"", true, true, true};
  if (method == "fp8" || method == "modelopt" || method == "modelopt_fp4") {
    return {"[torch.bfloat16, torch.float16]", true, true, false};
  }
  return {"[torch.float16, torch.bfloat16]", true, true, false};
}

const char* TorchName(Dtype d) {
  switch (d) {
    case Dtype::kF16: return "torch.float16";
    case Dtype::kBF16: return "torch.bfloat16";
    case Dtype::kF32: return "torch.float32";
    default: return "torch.float16";
  }
}

std::string CapabilityText(int cc) { return fmt::format("{}.{}", cc / 10, cc % 10); }

// The FP8 block checks of one layer's shapes: experts (Fp8MoEMethod), dense and shared MLPs
// (MergedColumnParallelLinear gate_up, RowParallelLinear down).
std::optional<Refusal> BlockShapes(const ModelSpec& spec, int64_t tp, bool ep) {
  const QuantScheme& q = spec.quant;
  const bool block = q.block_size.size() == 2 &&
                     (q.layout == QuantLayout::kFp8Block ||
                      (q.layout == QuantLayout::kCtFp8 && q.strategy == "block"));
  if (!block || q.block_size[0] <= 0 || q.block_size[1] <= 0) return std::nullopt;
  const int64_t bn = q.block_size[0], bk = q.block_size[1];
  for (const LayerSpec& l : spec.layers) {
    if (l.mlp.kind == MlpKind::kMoe && l.mlp.expert_intermediate_size > 0) {
      // With expert parallelism the experts are whole on each rank (the MoE's tp_size is 1).
      const int64_t moe_tp = ep ? 1 : tp;
      const int64_t ipp = l.mlp.expert_intermediate_size / moe_tp;
      if (ipp % bn != 0) {
        return Refusal{Stage::kLoad,
                       fmt::format("The output_size of gate's and up's weight = {} is not "
                                   "divisible by weight quantization block_n = {}.",
                                   ipp, bn)};
      }
      if (moe_tp > 1 && ipp % bk != 0) {
        return Refusal{Stage::kLoad,
                       fmt::format("The input_size of down's weight = {} is not divisible by "
                                   "weight quantization block_k = {}.",
                                   ipp, bk)};
      }
    }
    for (int64_t inter : {l.mlp.kind == MlpKind::kDense ? l.mlp.intermediate_size : int64_t{0},
                          l.mlp.shared_intermediate_size}) {
      if (inter <= 0 || tp <= 1) continue;
      const int64_t part = inter / tp;
      if (part % bn != 0) {
        return Refusal{Stage::kLoad,
                       fmt::format("Weight output_partition_size = {} is not divisible by "
                                   "weight quantization block_n = {}.",
                                   part, bn)};
      }
      if (part % bk != 0) {
        return Refusal{Stage::kLoad,
                       fmt::format("Weight input_size_per_partition = {} is not divisible by "
                                   "weight quantization block_k = {}.",
                                   part, bk)};
      }
    }
  }
  return std::nullopt;
}

}  // namespace

int ComputeCapability(const GpuSpec& gpu) { return NvidiaComputeCapability(gpu); }

bool IntegratedGpu(const GpuSpec& gpu) {
  const int cc = ComputeCapability(gpu);
  return gpu.unified_memory && (cc == 87 || cc == 110 || cc == 121);
}

ModelDtype ResolveModelDtype(const ModelSpec& spec, const GpuSpec& gpu, const std::string& flag) {
  ModelDtype out;
  const int cc = ComputeCapability(gpu);
  const bool bf16_ok = cc == 0 || cc >= kBf16Capability;
  if (flag == "half" || flag == "float16") {
    out.dtype = Dtype::kF16;
  } else if (flag == "float" || flag == "float32") {
    out.dtype = Dtype::kF32;
  } else if (flag == "bfloat16") {
    out.dtype = Dtype::kBF16;
    if (!bf16_ok) {
      out.refusal = Refusal{
          Stage::kStartup,
          fmt::format("Bfloat16 is only supported on GPUs with compute capability of at least "
                      "8.0. Your {} GPU has compute capability {}. You can use float16 instead "
                      "by explicitly setting the `dtype` flag in CLI, for example: --dtype=half.",
                      gpu.name, CapabilityText(cc))};
    }
  } else {  // auto
    const Dtype preferred = bf16_ok ? Dtype::kBF16 : Dtype::kF16;
    out.dtype = spec.dtype;
    if (spec.dtype == Dtype::kF32) {
      out.dtype = preferred;
      out.note = fmt::format("--dtype auto: the config's float32 is downcast to {} (vLLM's "
                             "default for float32 checkpoints)",
                             preferred == Dtype::kBF16 ? "bfloat16" : "float16");
    } else if (spec.dtype == Dtype::kBF16 && !bf16_ok) {
      out.dtype = Dtype::kF16;
      out.note = fmt::format("vLLM will log: Your device '{}' (with compute capability {}) "
                             "doesn't support torch.bfloat16. Falling back to torch.float16 for "
                             "compatibility.",
                             gpu.name, CapabilityText(cc));
    }
  }
  return out;
}

std::string SelectedQuantization(const QuantScheme& q, const GpuSpec& gpu, const Rules& rules,
                                 const std::string& flag) {
  if (!flag.empty()) return flag;
  if (!q.quantized()) return "";
  // AutoRoundConfig / INCConfig claims the checkpoint (get_min_capability 60) and picks the
  // Marlin or plain GPTQ/AWQ kernel per layer (quantization/auto_round.py, inc/inc.py).
  if (model::IsAutoRoundMethod(q.method_text)) return "auto-round";
  const int cc = ComputeCapability(gpu);
  const bool marlin = cc == 0 || cc >= (rules.marlin_on_turing ? 75 : 80);
  switch (q.method) {
    case QuantMethod::kAwq: return marlin ? "awq_marlin" : "awq";
    case QuantMethod::kGptq: return marlin ? "gptq_marlin" : "gptq";
    case QuantMethod::kModelOpt:  // ModelOptNvFp4Config claims quant_algo NVFP4
      return q.layout == QuantLayout::kModelOptNvfp4 ? "modelopt_fp4" : "modelopt";
    default: return q.method_text;
  }
}

std::optional<Refusal> ConfigRefusal(const ModelSpec& spec, const GpuSpec& gpu,
                                     const Rules& rules, const std::string& quantization_flag,
                                     Dtype model_dtype) {
  const std::string method = SelectedQuantization(spec.quant, gpu, rules, quantization_flag);
  if (method.empty()) return std::nullopt;
  const int cc = ComputeCapability(gpu);
  const int floor = MethodFloor(method, rules);
  if (cc > 0 && cc < floor) {
    return Refusal{Stage::kStartup,
                   fmt::format("The quantization method {} is not supported for the current "
                               "GPU. Minimum capability: {}. Current capability: {}.",
                               method, floor, cc)};
  }
  const ActDtypes acts = ActDtypesOf(method, rules);
  const bool ok = model_dtype == Dtype::kF16    ? acts.f16
                  : model_dtype == Dtype::kBF16 ? acts.bf16
                                                : acts.f32;
  if (!ok) {
    return Refusal{Stage::kStartup,
                   fmt::format("{} is not supported for quantization method {}. Supported "
                               "dtypes: {}",
                               TorchName(model_dtype), method, acts.text)};
  }
  return std::nullopt;
}

std::optional<Refusal> LayerRefusal(const Inventory& inv, const GpuSpec& gpu, const Rules& rules,
                                    int64_t tensor_parallel_size, bool enable_expert_parallel,
                                    const std::string& quantization_flag) {
  const ModelSpec& spec = inv.spec;
  const int cc = ComputeCapability(gpu);
  const std::string method = SelectedQuantization(spec.quant, gpu, rules, quantization_flag);
  if (method == "compressed-tensors" && cc > 0 && cc < SchemeFloor(spec.quant, rules)) {
    // RuntimeError built with three arguments: str() prints the tuple.
    return Refusal{Stage::kLoad,
                   fmt::format("('Quantization scheme is not supported for ', 'the current GPU. "
                               "Min capability: {}. ', 'Current capability: {}.')",
                               SchemeFloor(spec.quant, rules), cc)};
  }
  if (spec.quant.method == QuantMethod::kGptq &&
      !model::IsAutoRoundMethod(spec.quant.method_text) && rules.gptq_marlin_only && cc > 0 &&
      cc < MethodFloor("gptq_marlin", rules)) {
    // AutoGPTQLinearMethod -> verify_marlin_supported (utils/marlin_utils.py), v0.22+.
    return Refusal{Stage::kLoad,
                   fmt::format("Marlin does not support weight_bits = {}. Only types = [] are "
                               "supported (for group_size = {}, device_capability = {}, zp = "
                               "False).",
                               spec.quant.bits == 8 ? "uint8b128" : "uint4b8",
                               spec.quant.group_size > 0 ? spec.quant.group_size : -1, cc)};
  }
  if (auto r = BlockShapes(spec, tensor_parallel_size, enable_expert_parallel)) return r;
  // A packed method's layers hold qweight/scales (or weight_packed) parameters: the
  // checkpoint's 16-bit `.weight` tensors have nowhere to go, and the loader stops at the first.
  if (quantization_flag.empty() && Packed(spec.quant)) {
    for (const Finding& f : inv.audit.findings) {
      if (f.code != "fake-quantization") continue;
      std::string first;
      for (const TensorEntry& e : inv.tensors) {
        if (e.part == Part::kWeight && !e.quantized && e.layer >= 0 &&
            IsWideFloat(e.info.dtype) && e.module().find("proj") != std::string::npos) {
          first = e.info.name;
          break;
        }
      }
      return Refusal{
          Stage::kLoad,
          fmt::format("the checkpoint declares {} quantization but stores its decoder "
                      "projections unquantized: vLLM's {} layers expect packed weights, so "
                      "loading{} fails (\"There is no module or parameter named ...\"). "
                      "Remove quantization_config from config.json to load it as a 16-bit "
                      "model ({} of projections), or use the real quantized checkpoint",
                      spec.quant.method_text, spec.quant.method_text,
                      first.empty() ? "" : " " + first, core::FormatBytes(f.bytes))};
    }
  }
  return std::nullopt;
}

namespace {

// The first release whose model registry (vllm/model_executor/models/registry.py) holds each
// architecture vramfit's catalog uses and that arrived within or near the modelled releases,
// with the PR that added it. Architectures that v0.2.0, the oldest modelled release, already
// had are not listed. Source: the release notes and the registry at each cut (research note in
// docs/engines/vllm.md, "Refusals").
struct ArchRelease {
  std::string_view architecture;
  int first_release;  // major*10000 + minor*100 + patch
  std::string_view pr;  // "#N": vLLM's PR; else where the release's refusal is recorded
};
constexpr ArchRelease kArchitectures[] = {
    {"MixtralForCausalLM", 204, "#2011"},  // v0.2.4 was cut the day Mixtral was published
    {"DeepseekV3ForCausalLM", 606, "#11502"},  // "supported since v0.6.6" (issue #11559)
    {"Qwen2_5_VLForConditionalGeneration", 702, "#12604"},  // the v0.7.2 release tracker
    {"BambaForCausalLM", 703, "#10909"},  // merged 2025-02-07, after v0.7.2 was cut
    // Phi-3's PR merged after v0.4.1 was cut ("The release version 0.4.1 does not yet support
    // Phi3", a maintainer on issue #4375); v0.4.2 carried it.
    {"Phi3ForCausalLM", 402, "#4298"},
    {"Gemma3ForConditionalGeneration", 800, "#14660"},
    {"Gemma3ForCausalLM", 800, "#14660"},  // the text-only 1B, in the same PR
    {"Qwen3ForCausalLM", 804, "#15289"},
    {"Qwen3MoeForCausalLM", 804, "#15289"},
    {"GraniteMoeHybridForCausalLM", 900, "#17497"},  // merged 2025-05-06, after v0.8.5
    {"Glm4MoeForCausalLM", 1000, "#20736"},  // merged 2025-07-20, before v0.10.0's cut
    {"GptOssForCausalLM", 1001, "#22327"},
    {"Qwen3NextForCausalLM", 1002, "#24526"},
    {"Qwen3VLForConditionalGeneration", 1100, "#24727"},
    {"Qwen3VLMoeForConditionalGeneration", 1100, "#24727"},
    {"Qwen3_5ForConditionalGeneration", 1700, "#34110"},
    {"Qwen3_5MoeForConditionalGeneration", 1700, "#34110"},
    // "Gemma 4 support ... (#38826, #38847). Requires transformers>=5.5.0" (v0.19.0 notes).
    {"Gemma4ForConditionalGeneration", 1900, "#38826"},
    {"Gemma4ForCausalLM", 1900, "#38826"},
    // vLLM 0.11.0 refuses it ("Model architectures ['MiniMaxM2ForCausalLM'] are not supported
    // for now", MiniMax-AI/MiniMax-M2 issue #40, 2025-11-13); main held minimax_m2.py by
    // 2025-10-29 (HabanaAI/vllm-fork PR #2104 ports it from there), before v0.11.1's cut.
    {"MiniMaxM2ForCausalLM", 1101, "MiniMax-AI/MiniMax-M2 #40"},
};

std::string ReleaseName(int v) {
  return fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100);
}

}  // namespace

std::optional<Refusal> ArchitectureRefusal(const ModelSpec& spec, int release) {
  {
    const std::string& arch = spec.architecture;
    for (const ArchRelease& a : kArchitectures) {
      if (a.architecture != arch || release >= a.first_release) continue;
      return Refusal{Stage::kStartup,
                     fmt::format("Model architectures ['{}'] are not supported for now. "
                                 "Supported architectures: dict_keys([...]) (vLLM {} predates "
                                 "it: first served by vLLM {}, {}{})",
                                 arch, ReleaseName(release), ReleaseName(a.first_release),
                                 a.pr.starts_with("#") ? "PR " : "see ", a.pr),
                     fmt::format("vLLM {} does not have {} (first served by vLLM {}): no GPU "
                                 "or setting changes that; use --engine vllm@{} or newer",
                                 ReleaseName(release), arch, ReleaseName(a.first_release),
                                 ReleaseName(a.first_release))};
    }
  }
  return std::nullopt;
}

std::optional<Refusal> ContextParallelConfigRefusal(const ModelSpec& spec, const Rules& rules,
                                                    int64_t tensor_parallel_size, int64_t dcp) {
  // Releases before PR #23734 (v0.10.2) have no such flag: the serve flag check
  // (serve_flags.cc) refuses it before any plan.
  if (dcp <= 1) return std::nullopt;
  // vllm/config/parallel.py ParallelConfig (the f-strings join without a space).
  if (tensor_parallel_size % dcp != 0) {
    return Refusal{Stage::kStartup,
                   fmt::format("tp_size={} must be divisible bydcp_size={}.",
                               tensor_parallel_size, dcp)};
  }
  if (spec.CountAttention(AttentionKind::kMla) > 0 || !rules.dcp_gqa) return std::nullopt;
  // vllm/config/model.py verify_with_parallel_config (PR #24864): the KV heads of the full
  // attention layers.
  int64_t heads = 0, kv_heads = 0;
  for (const auto& l : spec.layers) {
    if (l.attention.kind != AttentionKind::kFull && l.attention.kind != AttentionKind::kSliding) {
      continue;
    }
    heads = l.attention.num_heads;
    kv_heads = l.attention.num_kv_heads > 0 ? l.attention.num_kv_heads : l.attention.num_heads;
    break;
  }
  if (kv_heads <= 0) return std::nullopt;
  if (tensor_parallel_size <= kv_heads) {
    return Refusal{Stage::kStartup,
                   fmt::format("tensor parallel size {} must be greater than total num kv heads "
                               "{} when enable decode context parallel for GQA/MQA",
                               tensor_parallel_size, kv_heads)};
  }
  const int64_t max_dcp = tensor_parallel_size / kv_heads;
  if (dcp > max_dcp) {
    return Refusal{Stage::kStartup,
                   fmt::format("decode context parallel size must less than or equal to (tensor "
                               "parallel size {} // total num kv heads {}) = {}, but got {}",
                               tensor_parallel_size, kv_heads, max_dcp, dcp)};
  }
  if ((heads / kv_heads) % dcp != 0) {
    return Refusal{Stage::kStartup,
                   fmt::format("Total number of q per kv attn heads ({}) must be divisible by dcp "
                               "world size when enable decode context parallel for GQA ({}).",
                               heads / kv_heads, dcp)};
  }
  return std::nullopt;
}

std::optional<Refusal> ContextParallelKvRefusal(const ModelSpec& spec, const Rules& rules,
                                                int64_t dcp) {
  if (dcp <= 1) return std::nullopt;
  if (spec.CountAttention(AttentionKind::kLinear) > 0) {
    return Refusal{Stage::kKvCache, "DCP not support mamba now."};
  }
  if (spec.CountAttention(AttentionKind::kSliding) > 0) {
    return Refusal{Stage::kKvCache, "DCP not support sliding window attn now."};
  }
  if (spec.CountAttention(AttentionKind::kMla) == 0 && !rules.dcp_gqa) {
    // gpu_model_runner.py initialize_kv_cache (v0.10.2-v0.11.0): every attention layer's
    // implementation must return the softmax LSE for decode; only MLA backends did.
    return Refusal{Stage::kKvCache,
                   "DCP requires attention impls to return the softmax lse for decode, but the "
                   "impl FlashAttentionImpl does not return the softmax lse for decode. (decode "
                   "context parallelism for grouped-query attention came with PR #24864, taken "
                   "as vLLM 0.11.1)",
                   fmt::format("vLLM {} shards only MLA models' KV cache by context: use --engine "
                               "vllm@0.11.1 or newer, or drop --decode-context-parallel-size",
                               rules.text)};
  }
  return std::nullopt;
}

std::optional<Refusal> RopeScalingRefusal(const ModelSpec& spec, const Rules& rules,
                                          const std::string& version) {
  if (rules.rope_type_key || spec.rope_scaling.type != "llama3") return std::nullopt;
  // 0.5.3.post1 (PR #6693 landed between v0.5.3 and it, the same day) reads "rope_type".
  if (rules.release == 503 && version.find("post") != std::string::npos) return std::nullopt;
  // vllm/config.py _get_and_verify_max_len indexes rope_scaling["type"] from v0.2.2 (yarn);
  // before, only the attention layer's get_rope did, when the model is built.
  const bool at_config = rules.release >= 202;
  return Refusal{
      at_config ? Stage::kStartup : Stage::kLoad,
      fmt::format("KeyError: 'type' (vLLM {} reads rope_scaling[\"type\"] in {}; this "
                  "checkpoint's rope_scaling has \"rope_type\": \"llama3\" and no \"type\", "
                  "which vLLM reads from 0.5.3.post1, PR #6693 \"Fix RoPE error in Llama 3.1\". "
                  "With transformers older than 4.43 the config load stops first: \"`rope_scaling` "
                  "must be a dictionary with two fields, `type` and `factor`\")",
                  version.empty() ? rules.text : version,
                  at_config ? "vllm/config.py _get_and_verify_max_len"
                            : "the attention layer's get_rope"),
      fmt::format("vLLM {} cannot read this checkpoint's rope_scaling (\"rope_type\": "
                  "\"llama3\"): no GPU or setting changes that; use --engine vllm@0.5.3.post1 "
                  "or newer",
                  version.empty() ? rules.text : version)};
}

}  // namespace vramfit::vllm
