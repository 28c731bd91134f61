// vLLM flag table and reader (see flags.h).
#include "engines/vllm/flags.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "core/text.h"
#include "core/tokens.h"
#include "engines/vllm/attention_backend.h"
#include "vramfit/gpu.h"

namespace vramfit::vllm {
namespace {

// Every flag value that does not read, in the one form (core/text.h).
constexpr auto Bad = core::BadFlagValue;

Result<int64_t> ReadInt(const std::string& flag, const std::string& text) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end) return Bad(flag, text, "a whole number");
  return v;
}

// The ranges vramfit plans (every product and sum of them stays far inside 64 bits): token
// counts within vLLM's int32 token indices, parallel sizes within any deployment, and so on.
constexpr int64_t kMaxTokens = (int64_t{1} << 31) - 1;
constexpr int64_t kMaxParallel = 4096;
constexpr int64_t kMaxBlockSize = 1 << 20;
constexpr double kMaxOffloadGib = 1 << 20;
// The largest host KV tier read (GiB): 2^20 GiB, a petabyte of host memory.
constexpr double kMaxKvOffloadingGib = 1 << 20;

// A count written as 0: the settings keep 0 for "not given, the engine's default", so without
// this check `--max-num-seqs 0` would silently plan vLLM's default; vLLM itself does not serve
// with zero sequences, tokens or block size.
Status ZeroIsNotDefault(const std::string& flag) {
  return Status::InvalidArgument(
      fmt::format("{} 0: expected 1 or more (leave the flag out for vLLM's default)", flag));
}

Status InRange(const std::string& flag, int64_t v, int64_t lo, int64_t hi, const char* why) {
  if (v >= lo && v <= hi) return Status::Ok();
  return Status::InvalidArgument(
      fmt::format("{} {}: expected {} to {} ({})", flag, v, lo, hi, why));
}

// vLLM's --quantization choices (vllm/model_executor/layers/quantization/__init__.py
// QuantizationMethods, v0.10 to v0.30, and the online shorthands): argparse refuses others.
// "auto_round": accepted by 0.20 and later (the club-3090 start-up logs in validation/vllm/
// print 'quantization': 'auto_round' among the non-default args of v0.20.1 and v0.24.0).
constexpr const char* kQuantizationChoices[] = {
    "aqlm", "awq", "auto_awq", "awq_marlin", "auto-round", "auto_round", "auto_gptq", "bitblas",
    "bitsandbytes", "compressed-tensors", "deepseek_v4_fp8", "deepspeedfp", "experts_int8",
    "fbgemm_fp8", "fp8", "fp8_per_block", "fp8_per_channel", "fp8_per_tensor", "fp_quant",
    "gguf", "gpt_oss_mxfp4", "gptq", "gptq_bitblas", "gptq_marlin", "gptq_marlin_24", "hqq",
    "humming", "inc", "int8_per_channel_weight_only", "ipex", "marlin", "modelopt",
    "modelopt_fp4", "modelopt_mixed", "modelopt_mxfp8", "moe_wna16", "mxfp4", "mxfp8",
    "nvfp4_per_token", "online", "petit_nvfp4", "ptpc_fp8", "quark", "rtn", "torchao",
    "tpu_int8"};
// --kv-cache-dtype choices (vllm/config/cache.py CacheDType).
constexpr const char* kKvCacheDtypeChoices[] = {
    "auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla",
    "turboquant_k8v4", "turboquant_4bit_nc", "turboquant_k3v4_nc", "turboquant_3bit_nc",
    "int8_per_token_head", "fp8_per_token_head", "nvfp4"};
// --mamba-cache-mode choices (vllm/config/cache.py MambaCacheMode).
constexpr const char* kMambaCacheModes[] = {"none", "align", "all"};
// --performance-mode choices (vllm/config/vllm.py PerformanceMode).
constexpr const char* kPerformanceModes[] = {"balanced", "interactivity", "throughput"};
// --all2all-backend choices (vllm/config/parallel.py All2AllBackend, read at 0.22).
constexpr const char* kAll2AllBackends[] = {
    "naive", "pplx", "deepep_high_throughput", "deepep_low_latency", "mori", "nixl_ep",
    "allgather_reducescatter", "flashinfer_all2allv", "flashinfer_nvlink_two_sided",
    "flashinfer_nvlink_one_sided"};
// --mamba-cache-dtype / --mamba-ssm-cache-dtype choices (vllm/config/cache.py MambaDType).
constexpr const char* kMambaDtypes[] = {"auto", "float32", "float16", "bfloat16"};

template <size_t N>
Status Choice(const std::string& flag, const std::string& text, const char* const (&choices)[N]) {
  for (const char* c : choices) {
    if (text == c) return Status::Ok();
  }
  std::string list;
  for (const char* c : choices) list += (list.empty() ? "'" : ", '") + std::string(c) + "'";
  return Status::InvalidArgument(fmt::format(
      "argument {}: invalid choice: '{}' (choose from {})", flag, core::Printable(text), list));
}

Result<double> ReadDouble(const std::string& flag, const std::string& text) {
  double v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || !std::isfinite(v)) return Bad(flag, text, "a number");
  return v;
}

Status ReadJsonInts(const std::string& flag, const std::string& text,
                    std::vector<std::pair<std::string, int64_t>>* out) {
  if (text.find('{') == std::string::npos) {  // image=2,video=0
    size_t at = 0;
    while (at < text.size()) {
      const size_t comma = text.find(',', at);
      const std::string item =
          text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
      const size_t eq = item.find('=');
      if (eq == std::string::npos) {
        return Status::InvalidArgument(
            fmt::format("{}: expected JSON or key=value pairs, found \"{}\"", flag,
                        core::Printable(text)));
      }
      try {
        out->emplace_back(item.substr(0, eq), std::stoll(item.substr(eq + 1)));
      } catch (...) {
        return Status::InvalidArgument(
            fmt::format("{}: \"{}\" is not a whole number", flag,
                        core::Printable(item.substr(eq + 1))));
      }
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    return Status::Ok();
  }
  simdjson::dom::parser parser;
  simdjson::dom::object obj;
  if (parser.parse(text).get(obj)) {
    return Status::InvalidArgument(
        fmt::format("{}: expected a JSON object, found {}", flag, core::Printable(text)));
  }
  for (auto field : obj) {
    int64_t v = 0;
    simdjson::dom::object nested;
    if (!field.value.get_object().get(nested)) {  // {"image": {"count": 2, ...}}
      if (nested["count"].get_int64().get(v)) continue;
    } else if (field.value.get_int64().get(v)) {
      continue;  // non-integer settings are not memory-relevant
    }
    out->emplace_back(std::string(field.key), v);
  }
  return Status::Ok();
}

// --compilation-config: a JSON object (or a bare number, the compilation level of releases
// before 0.11, which sets no graph key). cudagraph_mode is read as CUDAGraphMode's member names
// in any case (the config's validator upper-cases strings); cudagraph_capture_sizes as whole
// numbers (the dotted `--compilation-config.cudagraph_capture_sizes+ 1,2,4` form gives them as
// text); max_cudagraph_capture_size as a whole number.
Status ReadCompilationConfig(const std::string& text, VllmSettings* s) {
  constexpr const char* kFlag = "--compilation-config";
  s->compilation_config = text;
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) {
    // The compilation level of releases before 0.11 (CompilationConfig.from_cli: a bare number
    // is {"level": N}): 0 to 3.
    auto n = ReadInt(kFlag, text);
    if (!n.ok()) return n.status();
    VRAMFIT_RETURN_IF_ERROR(InRange(kFlag, *n, 0, 3, "a compilation level"));
    s->compilation_mode = static_cast<int>(*n);
    return Status::Ok();
  }
  simdjson::dom::parser parser;
  simdjson::dom::object obj;
  if (parser.parse(text).get(obj)) {
    return Status::InvalidArgument(fmt::format(
        "{}: expected a JSON object such as '{{\"cudagraph_mode\": \"PIECEWISE\"}}', found {}",
        kFlag, core::Printable(text)));
  }
  auto whole = [&](simdjson::dom::element e, const char* key, int64_t* out) -> Status {
    std::string_view t;
    if (!e.get_int64().get(*out)) {
    } else if (!e.get_string().get(t)) {
      auto n = ReadInt(fmt::format("{} {}", kFlag, key), std::string(t));
      if (!n.ok()) return n.status();
      *out = *n;
    } else {
      return Status::InvalidArgument(fmt::format("{} {}: expected a whole number", kFlag, key));
    }
    return InRange(fmt::format("{} {}", kFlag, key), *out, 1, kMaxTokens,
                   "a batch size, int32 in vLLM");
  };
  for (auto field : obj) {
    const std::string key(field.key);
    if (key == "cudagraph_mode") {
      std::string_view mode;
      if (field.value.get_string().get(mode)) {
        return Status::InvalidArgument(
            fmt::format("{} cudagraph_mode: expected a name such as \"PIECEWISE\"", kFlag));
      }
      std::string upper(mode);
      std::transform(upper.begin(), upper.end(), upper.begin(),
                     [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
      static const char* const kModes[] = {"NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY",
                                     "FULL_AND_PIECEWISE"};
      VRAMFIT_RETURN_IF_ERROR(Choice(fmt::format("{} cudagraph_mode", kFlag), upper, kModes));
      s->cudagraph_mode = upper;
    } else if (key == "cudagraph_capture_sizes") {
      simdjson::dom::array sizes;
      if (field.value.get_array().get(sizes)) {
        return Status::InvalidArgument(fmt::format(
            "{} cudagraph_capture_sizes: expected a list of batch sizes", kFlag));
      }
      s->cudagraph_capture_sizes.clear();
      for (auto e : sizes) {
        int64_t n = 0;
        VRAMFIT_RETURN_IF_ERROR(whole(e, "cudagraph_capture_sizes", &n));
        s->cudagraph_capture_sizes.push_back(n);
        if (s->cudagraph_capture_sizes.size() > 4096) {
          return Status::InvalidArgument(fmt::format(
              "{} cudagraph_capture_sizes: more than 4096 sizes", kFlag));
        }
      }
      if (s->cudagraph_capture_sizes.empty()) {
        // VllmConfig._set_cudagraph_sizes asserts at least one element.
        return Status::InvalidArgument(fmt::format(
            "{} cudagraph_capture_sizes: an empty list, which vLLM refuses "
            "(\"cudagraph_capture_sizes should contain at least one element when using cuda "
            "graph\"); use \"cudagraph_mode\": \"NONE\" for no graphs",
            kFlag));
      }
    } else if (key == "mode" || key == "level") {
      // CompilationMode (CompilationLevel before v0.11.1): NONE 0, STOCK_TORCH_COMPILE 1,
      // DYNAMO_TRACE_ONCE 2, VLLM_COMPILE 3; a name of them in the newer config.
      int64_t n = -1;
      std::string_view name;
      if (!field.value.get_int64().get(n)) {
      } else if (!field.value.get_string().get(name)) {
        std::string upper(name);
        std::transform(upper.begin(), upper.end(), upper.begin(),
                       [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
        static const char* const kNames[] = {"NONE", "STOCK_TORCH_COMPILE", "DYNAMO_TRACE_ONCE",
                                             "VLLM_COMPILE"};
        for (int i = 0; i < 4; ++i) {
          if (upper == kNames[i]) n = i;
        }
        if (n < 0) {
          auto v = ReadInt(fmt::format("{} {}", kFlag, key), upper);
          if (!v.ok()) {
            VRAMFIT_RETURN_IF_ERROR(Choice(fmt::format("{} {}", kFlag, key), upper, kNames));
          }
          n = *v;
        }
      } else {
        return Status::InvalidArgument(fmt::format("{} {}: expected 0 to 3 or a mode's name",
                                                   kFlag, key));
      }
      VRAMFIT_RETURN_IF_ERROR(
          InRange(fmt::format("{} {}", kFlag, key), n, 0, 3,
                  "NONE, STOCK_TORCH_COMPILE, DYNAMO_TRACE_ONCE, VLLM_COMPILE"));
      s->compilation_mode = static_cast<int>(n);
    } else if (key == "max_cudagraph_capture_size") {
      VRAMFIT_RETURN_IF_ERROR(
          whole(field.value, "max_cudagraph_capture_size", &s->max_cudagraph_capture_size));
    } else {
      s->compilation_keys_not_modelled.push_back(core::Printable(key));
    }
  }
  return Status::Ok();
}

// --kv-offloading-size GIB and --kv-offloading-backend {native,lmcache} (vllm/config/cache.py
// CacheConfig, PR #27621): the size is a float in GiB, the host tier summed over the TP ranks;
// the backend is KVOffloadingBackend, Literal["native", "lmcache"]. A tier that holds nothing
// (0 or less) is refused, and so is a size that is not a finite number.
Status ReadKvOffloading(const std::string& name, const std::string& value, VllmSettings* s) {
  if (name == "--kv-offloading-backend") {
    if (value != "native" && value != "lmcache") {
      return Status::InvalidArgument(fmt::format(
          "--kv-offloading-backend {}: expected native or lmcache (vLLM's KVOffloadingBackend)",
          core::Printable(value)));
    }
    s->kv_offloading_backend = value;
    return Status::Ok();
  }
  const Result<double> gib = ReadDouble(name, value);
  if (!gib.ok() || *gib <= 0 || *gib > kMaxKvOffloadingGib) {
    return Status::InvalidArgument(fmt::format(
        "--kv-offloading-size {}: expected a size in GiB above 0 and up to {} (the host KV "
        "tier, summed over the tensor-parallel ranks)",
        core::Printable(value), kMaxKvOffloadingGib));
  }
  s->kv_offloading_gib = *gib;
  return Status::Ok();
}

}  // namespace

bool SpeculativeUsesOwnLayers(std::string_view method) {
  return method == "mtp" || method == "deepseek_mtp" || method == "qwen3_next_mtp" ||
         method == "qwen3_5_mtp";
}

const std::vector<FlagSpec>& Flags() {
  static const std::vector<FlagSpec> kFlags = {
      {"--tensor-parallel-size", "-tp", "GPUs per tensor-parallel group (-tp)", "INT"},
      {"--pipeline-parallel-size", "-pp", "Pipeline stages (-pp)", "INT"},
      {"--data-parallel-size", "-dp", "Data-parallel replicas (-dp)", "INT"},
      {"--decode-context-parallel-size", "-dcp",
       "KV cache sharded by token over N ranks of the TP group (-dcp; vLLM 0.10.2+, MLA; GQA "
       "from 0.11.1)",
       "INT"},
      {"--enable-expert-parallel", nullptr, "Split MoE experts across ranks", nullptr},
      {"--enable-eplb", nullptr,
       "Expert-parallel load balancing (needs --enable-expert-parallel and TP x DP > 1)",
       nullptr},
      {"--enable-dbo", nullptr,
       "Dual batch overlap (vLLM 0.11+): refused unless --all2all-backend is a DeepEP one",
       nullptr},
      {"--all2all-backend", nullptr,
       "The experts' all-to-all: allgather_reducescatter (default) | deepep_low_latency | "
       "deepep_high_throughput | ... (the DeepEP and other kernels' buffers are not modelled)",
       "TEXT"},
      {"--eplb-config", nullptr,
       "EPLB settings, e.g. '{\"num_redundant_experts\": 32}': that many more physical experts",
       "TEXT"},
      {"--num-redundant-experts", nullptr, "Redundant experts for EPLB (vLLM 0.9-0.10 spelling)",
       "INT"},
      {"--max-model-len", nullptr, "Context length per request, or auto (default: the model's)",
       "TEXT"},
      {"--gpu-memory-utilization", nullptr,
       "Fraction of each GPU's total memory (default 0.9; 0.92 from v0.20.2)", "FLOAT"},
      {"--kv-cache-dtype", nullptr, "auto | fp8 | fp8_e4m3 | fp8_e5m2", "TEXT"},
      {"--max-num-seqs", nullptr,
       "Concurrent sequences (default by GPU: 256, or 1024 on >=70 GiB cards)", "INT"},
      {"--max-num-batched-tokens", nullptr,
       "Tokens per scheduler step (default 2048, or 8192 on >=70 GiB cards)", "INT"},
      {"--block-size", nullptr, "KV cache block size in tokens (default 16; MLA 64)", "INT"},
      {"--enforce-eager", nullptr, "No CUDA graphs", nullptr},
      {"--v0-engine", nullptr, "Plan the V0 engine (VLLM_USE_V1=0; vLLM 0.8-0.10)", nullptr},
      {"--compile-cache-warm", nullptr,
       "torch.compile finds an earlier start's cache (model runner V2 then profiles less)",
       nullptr},
      {"--flashinfer-installed", nullptr,
       "FlashInfer imports where vLLM runs (vLLM's Docker image, vllm[flashinfer]): 0.8-0.11.0 "
       "sample with it",
       nullptr},
      {"--allow-long-max-model-len", nullptr,
       "Accept --max-model-len beyond the model's (VLLM_ALLOW_LONG_MAX_MODEL_LEN=1)", nullptr},
      {"--pp-layer-partition", nullptr,
       "Decoder layers per pipeline stage, e.g. 16,32 (VLLM_PP_LAYER_PARTITION)", "TEXT"},
      {"--quantization", "-q", "Force a quantization method (e.g. fp8 for online FP8)", "TEXT"},
      {"--kv-cache-memory-bytes", nullptr, "Fixed KV cache size (bytes or 24GiB)", "TEXT"},
      {"--num-gpu-blocks-override", nullptr,
       "Fixed number of KV cache blocks, whatever the profile measured", "INT"},
      {"--cpu-offload-gb", nullptr, "GiB of weights per GPU kept in CPU memory", "FLOAT"},
      {"--cpu-offload-params", nullptr,
       "Parameter names --cpu-offload-gb keeps to, e.g. experts (named; the GiB are charged)",
       "TEXT..."},
      {"--offload-backend", nullptr, "auto | uva | prefetch: the weight offloader (vLLM 0.17+)",
       "TEXT"},
      {"--offload-group-size", nullptr,
       "Prefetch offloading: of every N decoder layers the last --offload-num-in-group stay in "
       "CPU memory, copied in ahead of use (vLLM 0.17+)",
       "INT"},
      {"--offload-num-in-group", nullptr, "Layers of each group kept in CPU memory (default 1)",
       "INT"},
      {"--offload-prefetch-step", nullptr,
       "Offloaded layers copied in ahead: one GPU buffer set each (default 1)", "INT"},
      {"--offload-params", nullptr,
       "Parameter names prefetch offloading keeps to, e.g. experts (then not modelled)",
       "TEXT..."},
      {"--kv-offloading-size", nullptr,
       "GiB of host KV tier, summed over the TP ranks (named; the GPU pool is unchanged)",
       "FLOAT"},
      {"--kv-offloading-backend", nullptr, "Host KV tier backend: native | lmcache", "TEXT"},
      {"--speculative-config", nullptr,
       "Speculative decoding, e.g. '{\"method\": \"mtp\", \"num_speculative_tokens\": 2}'",
       "TEXT"},
      {"--spec-method", nullptr, "--speculative-config's method (vLLM 0.22+)", "TEXT"},
      {"--spec-model", nullptr, "--speculative-config's draft model (vLLM 0.22+)", "TEXT"},
      {"--spec-tokens", nullptr, "--speculative-config's num_speculative_tokens (vLLM 0.22+)",
       "INT"},
      {"--hf-overrides", nullptr,
       "config.json keys to override, e.g. '{\"rope_scaling\": {\"rope_type\": \"yarn\", "
       "\"factor\": 4.0, \"original_max_position_embeddings\": 32768}}'",
       "TEXT"},
      {"--disable-custom-all-reduce", nullptr,
       "No custom all-reduce: NCCL only (saves its buffers, ~1.5 GiB per GPU)", nullptr},
      {"--dtype", nullptr, "Model dtype: auto | half | float16 | bfloat16 | float | float32",
       "TEXT"},
      {"--limit-mm-per-prompt", nullptr, "Items per prompt, e.g. '{\"image\": 2, \"video\": 0}'",
       "TEXT"},
      {"--mm-processor-kwargs", nullptr, "Processor settings, e.g. '{\"max_pixels\": 1003520}'",
       "TEXT"},
      {"--language-model-only", nullptr,
       "Text only: no vision tower, no encoder profile (vLLM 0.16+)", nullptr},
      {"--disable-hybrid-kv-cache-manager", nullptr,
       "One KV cache type for all layers: sliding-window layers beside full ones cache the "
       "whole context",
       nullptr},
      {"--enable-prefix-caching", nullptr,
       "Prefix caching on (the default, but for hybrid models before vLLM 0.28): a hybrid "
       "model's linear-attention state then takes two pages per request",
       nullptr},
      {"--no-enable-prefix-caching", nullptr,
       "Prefix caching off: one linear-attention state page per request", nullptr},
      {"--enable-chunked-prefill", nullptr, "Chunked prefill on (the default of V1)", nullptr},
      {"--disable-sliding-window", nullptr,
       "Sliding-window layers attend to the whole context; the maximum length is capped at the "
       "window",
       nullptr},
      {"--no-enable-chunked-prefill", nullptr,
       "Chunked prefill off: a prompt is prefilled in one step, so the batched-token budget is "
       "at least --max-model-len",
       nullptr},
      {"--mamba-cache-mode", nullptr, "none | align | all (hybrid models; needs prefix caching)",
       "TEXT"},
      {"--mamba-block-size", nullptr,
       "Tokens per linear-attention state block (hybrid models, from vLLM 0.11.1; only with "
       "prefix caching on)",
       "INT"},
      {"--mamba-cache-dtype", nullptr,
       "Linear-attention conv state (and recurrent state under auto): auto | float32 | float16 "
       "| bfloat16",
       "TEXT"},
      {"--mamba-ssm-cache-dtype", nullptr,
       "Linear-attention recurrent state: auto (the config's mamba_ssm_dtype, else the conv "
       "state's) | float32 | float16 | bfloat16",
       "TEXT"},
      {"--performance-mode", nullptr,
       "balanced | throughput (twice the default sequences and batched tokens) | interactivity "
       "(CUDA graphs for every batch size up to 32)",
       "TEXT"},
      {"--kv-cache-dtype-skip-layers", nullptr,
       "Layers whose KV cache keeps the model's dtype under a quantized --kv-cache-dtype: "
       "decoder layer indices and/or sliding_window, e.g. 0 1 46 47",
       "TEXT..."},
      {"--attention-backend", nullptr,
       "auto | FLASH_ATTN | FLASHINFER | TRITON_ATTN | FLEX_ATTENTION | FLASHMLA | "
       "FLASHINFER_MLA | CUTLASS_MLA | TRITON_MLA | FLASH_ATTN_MLA | ... (vLLM 0.13+): refused "
       "where the backend cannot run the model on the GPU; MLA backends set the KV block size",
       "TEXT"},
      {"--no-disable-hybrid-kv-cache-manager", nullptr,
       "Keep the hybrid KV cache manager beside a KV connector (vLLM 0.13+; the connector must "
       "support it)",
       nullptr},
      {"--kv-transfer-config", nullptr,
       "A KV connector, e.g. '{\"kv_connector\": \"LMCacheConnectorV1\", \"kv_role\": "
       "\"kv_both\"}': vLLM turns the hybrid KV cache manager off for it",
       "TEXT"},
      {"--skip-mm-profiling", nullptr,
       "No encoder profile: the KV cache takes its memory, and the first request with the most "
       "images needs it beside the pool",
       nullptr},
      {"--mm-encoder-tp-mode", nullptr,
       "weights | data: data keeps the vision encoder whole on every TP rank, each encoding a "
       "share of the images",
       "TEXT"},
      {"--compilation-config", "-cc",
       "CUDA-graph keys read: cudagraph_mode, cudagraph_capture_sizes, "
       "max_cudagraph_capture_size, e.g. '{\"cudagraph_mode\": \"FULL_DECODE_ONLY\"}'",
       "TEXT"},
      {"--cudagraph-capture-sizes", nullptr,
       "Batch sizes captured as CUDA graphs, e.g. 1 2 4 8 16 (replaces the default list)",
       "INT..."},
      {"--max-cudagraph-capture-size", nullptr,
       "Largest batch captured as a CUDA graph (default min(2 x max-num-seqs, 512))", "INT"},
      {"--optimization-level", "-O",
       "0-3 (-O0 ... -O3): 0 no torch.compile and no CUDA graphs, 1 PIECEWISE graphs, 2 (default) "
       "and 3 FULL_AND_PIECEWISE (vLLM 0.12+; before, -O N is the compilation level)",
       "INT"},
      {"--enable-lora", nullptr,
       "LoRA adapter slots on every GPU (their buffers load with the model)", nullptr},
      {"--max-loras", nullptr, "LoRA adapters served at once (default 1)", "INT"},
      {"--max-lora-rank", nullptr, "Largest LoRA rank (default 16)", "INT"},
      {"--max-cpu-loras", nullptr, "LoRA adapters cached in host memory (no GPU memory)", "INT"},
      {"--lora-target-modules", nullptr,
       "Module suffixes that get LoRA slots, e.g. q_proj v_proj o_proj (default: all)",
       "TEXT..."},
      {"--lora-dtype", nullptr, "auto | float16 | bfloat16 (auto: the model's dtype)", "TEXT"},
      {"--fully-sharded-loras", nullptr, "Shard both LoRA matrices across TP ranks", nullptr},
      {"--lora-extra-vocab-size", nullptr, "Extra vocabulary rows per adapter (vLLM before 0.12)",
       "INT"},
  };
  return kFlags;
}

Result<int64_t> ParseHumanInt(const std::string& flag, const std::string& text) {
  return core::ParseTokenCount(flag, text);
}

// Whether `text` is a number with one of vLLM's human_readable_int suffixes (k m g decimal,
// K M G binary; vllm/engine/arg_utils.py since v0.10, for --max-model-len,
// --max-num-batched-tokens and --kv-cache-memory-bytes), e.g. 16k or 1.5g.
bool HumanReadableSuffix(const std::string& text) {
  if (text.size() < 2 || std::string_view("kmgKMG").find(text.back()) == std::string::npos) {
    return false;
  }
  return std::isdigit(static_cast<unsigned char>(text[0])) &&
         text.find_first_not_of("0123456789.") == text.size() - 1;
}

// --cudagraph-capture-sizes: its words as the command gave them (several after the flag, or
// joined by commas), each a whole batch size in int32, at most 4096 of them.
Status ReadCaptureSizes(const std::string& text, std::vector<int64_t>* sizes) {
  constexpr const char* kFlag = "--cudagraph-capture-sizes";
  size_t at = 0;
  while (at <= text.size()) {
    size_t end = text.find_first_of(",\n", at);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(at, end - at);
    auto n = ReadInt(kFlag, word);
    if (!n.ok()) return n.status();
    VRAMFIT_RETURN_IF_ERROR(InRange(kFlag, *n, 1, kMaxTokens, "a batch size, int32 in vLLM"));
    sizes->push_back(*n);
    if (sizes->size() > 4096) {
      return Status::InvalidArgument(fmt::format("{}: more than 4096 sizes", kFlag));
    }
    at = end + 1;
  }
  return Status::Ok();
}

namespace {
// One whole-number key of a JSON (or key=value) flag, kept in [lo, kMaxTokens]; other keys are
// not memory-relevant. `text` empty: nothing given, `out` unchanged.
Status ReadJsonKey(const std::string& flag, const std::string& text, const std::string& key,
                   int64_t lo, const char* what, int64_t* out) {
  if (text.empty()) return Status::Ok();
  std::vector<std::pair<std::string, int64_t>> kv;
  VRAMFIT_RETURN_IF_ERROR(ReadJsonInts(flag, text, &kv));
  for (const auto& [k, v] : kv) {
    if (k != key) continue;
    VRAMFIT_RETURN_IF_ERROR(InRange(flag + " " + key, v, lo, kMaxTokens, what));
    *out = v;
  }
  return Status::Ok();
}

// --speculative-config's JSON into the settings: the method, a separate draft model and
// num_speculative_tokens.
Status ReadSpeculativeConfig(std::string_view text, VllmSettings* out) {
  VllmSettings& s = *out;
  simdjson::dom::parser parser;
  simdjson::dom::object obj;
  if (parser.parse(text).get(obj)) {
    return Status::InvalidArgument(
        fmt::format("--speculative-config: expected a JSON object, found {}",
                    core::Printable(text)));
  }
  std::string_view method;
  std::string_view model;  // a separate draft (draft_model, eagle, eagle3, medusa, ...)
  const bool has_model = !obj["model"].get_string().get(model) && !model.empty();
  if (obj["method"].get_string().get(method)) {
    method = has_model ? "draft_model" : "";  // a model without a method: "draft_model"
  }
  int64_t k = 0;
  simdjson::dom::element tokens;
  if (!obj["num_speculative_tokens"].get(tokens) && !tokens.is_null()) {
    if (tokens.get_int64().get(k)) {
      return Status::InvalidArgument(
          "--speculative-config num_speculative_tokens: expected a whole number 1 to 64");
    }
    VRAMFIT_RETURN_IF_ERROR(
        InRange("--speculative-config num_speculative_tokens", k, 1, 64, "draft tokens"));
  }
  s.speculative_config = std::string(text);
  s.speculative_method = std::string(method);
  // The MTP methods load the target's own layers and ignore "model"; n-gram and suffix
  // drafting have no model.
  s.draft_model = has_model && !SpeculativeUsesOwnLayers(method) && method != "ngram" &&
                          method != "suffix"
                      ? std::string(model)
                      : "";
  s.num_speculative_tokens = k;
  return Status::Ok();
}

// --spec-method, --spec-model and --spec-tokens (PR #42476, 0.22) set the keys method, model
// and num_speculative_tokens of --speculative-config, and EngineArgs.create_speculative_config
// (vllm/engine/arg_utils.py) refuses one beside the same key in the JSON. The JSON with the
// aliases' keys added, as vLLM builds it.
Result<std::string> WithSpecAliases(
    const std::string& json, const std::vector<std::pair<std::string, nlohmann::json>>& aliases) {
  static constexpr std::pair<std::string_view, std::string_view> kFlagOf[] = {
      {"method", "--spec-method"},
      {"model", "--spec-model"},
      {"num_speculative_tokens", "--spec-tokens"}};
  std::string body = json.empty() ? "{}" : json;
  simdjson::dom::parser parser;
  simdjson::dom::object obj;
  if (parser.parse(body).get(obj)) {
    return Status::InvalidArgument(fmt::format(
        "--speculative-config: expected a JSON object, found {}", core::Printable(body)));
  }
  size_t close = body.find_last_of('}');
  bool empty = obj.size() == 0;
  for (const auto& [key, value] : aliases) {
    std::string_view flag;
    for (const auto& [k, f] : kFlagOf) {
      if (k == key) flag = f;
    }
    simdjson::dom::element present;
    if (!obj[key].get(present)) {
      return Status::InvalidArgument(
          fmt::format("{} and --speculative-config['{}'] are mutually exclusive (vLLM refuses "
                      "the two together); give it once",
                      flag, key));
    }
    const std::string piece =
        fmt::format("{}{}: {}", empty ? "" : ", ", nlohmann::json(key).dump(), value.dump());
    body.insert(close, piece);
    close += piece.size();
    empty = false;
  }
  return body;
}

}  // namespace

Result<VllmSettings> ReadFlags(const FlagValues& given, VllmSettings s) {
  // Numbers first, in table order, as a typed parser would have read them; then the flags
  // whose text needs reading.
  std::string max_model_len, kv_cache_memory, limit_mm, mm_kwargs, eplb_config;
  int64_t max_capture_flag = 0;
  std::vector<int64_t> capture_sizes_flag;
  std::string spec_json;
  std::vector<std::pair<std::string, nlohmann::json>> spec_aliases;
  for (const auto& [name, text] : given) {
    // `--max-model-len ""`: vLLM's typed parsers and JSON readers refuse an empty value, so it
    // is not the default either (an unset flag is left out of `given`).
    for (const FlagSpec& f : Flags()) {
      if (text.empty() && f.type_name != nullptr && name == f.name) {
        return Status::InvalidArgument(fmt::format(
            "{} \"\": an empty value, which vLLM refuses; leave the flag out for its default",
            name));
      }
    }
    auto as_int = [&](int64_t* out) -> Status {
      auto v = ReadInt(name, text);
      if (!v.ok()) return v.status();
      *out = *v;
      return Status::Ok();
    };
    auto as_double = [&](double* out) -> Status {
      auto v = ReadDouble(name, text);
      if (!v.ok()) return v.status();
      *out = *v;
      return Status::Ok();
    };
    if (name == "--tensor-parallel-size") {
      VRAMFIT_RETURN_IF_ERROR(as_int(&s.tensor_parallel_size));
    } else if (name == "--pipeline-parallel-size") {
      VRAMFIT_RETURN_IF_ERROR(as_int(&s.pipeline_parallel_size));
    } else if (name == "--data-parallel-size") {
      VRAMFIT_RETURN_IF_ERROR(as_int(&s.data_parallel_size));
    } else if (name == "--decode-context-parallel-size") {
      VRAMFIT_RETURN_IF_ERROR(as_int(&s.decode_context_parallel_size));
    } else if (name == "--enable-expert-parallel") {
      s.enable_expert_parallel = true;
    } else if (name == "--enable-eplb") {
      s.enable_eplb = true;
    } else if (name == "--enable-dbo") {
      s.enable_dbo = true;
    } else if (name == "--all2all-backend") {
      VRAMFIT_RETURN_IF_ERROR(Choice(name, text, kAll2AllBackends));
      s.all2all_backend = text;
      s.all2all_from_env = false;
    } else if (name == "--num-redundant-experts") {
      VRAMFIT_RETURN_IF_ERROR(as_int(&s.num_redundant_experts));
      VRAMFIT_RETURN_IF_ERROR(
          InRange(name, s.num_redundant_experts, 0, kMaxTokens, "redundant experts"));
    } else if (name == "--eplb-config") {
      eplb_config = text;
    } else if (name == "--max-model-len") {
      max_model_len = text;
    } else if (name == "--gpu-memory-utilization") {
      VRAMFIT_RETURN_IF_ERROR(as_double(&s.gpu_memory_utilization));
      // 0 stands for "the release's default" in VllmSettings; written out, vLLM refuses it
      // (CacheConfig: gpu_memory_utilization gt=0, le=1).
      if (!(s.gpu_memory_utilization > 0)) {
        return Status::InvalidArgument(fmt::format(
            "--gpu-memory-utilization {}: expected a fraction in (0, 1]", text));
      }
    } else if (name == "--kv-cache-dtype") {
      VRAMFIT_RETURN_IF_ERROR(Choice(name, text, kKvCacheDtypeChoices));
      s.kv_cache_dtype = text;
    } else if (name == "--max-num-seqs") {
      VRAMFIT_RETURN_IF_ERROR(as_int(&s.max_num_seqs));
      if (s.max_num_seqs == 0) return ZeroIsNotDefault(name);
    } else if (name == "--num-gpu-blocks-override") {
      VRAMFIT_RETURN_IF_ERROR(as_int(&s.num_gpu_blocks_override));
      VRAMFIT_RETURN_IF_ERROR(InRange(name, s.num_gpu_blocks_override, 1, kMaxTokens, "blocks"));
    } else if (name == "--max-num-batched-tokens") {
      if (HumanReadableSuffix(text)) {  // vLLM reads it with human_readable_int: 16k, 8K
        auto v = ParseHumanInt(name, text);
        if (!v.ok()) return v.status();
        s.max_num_batched_tokens = *v;
      } else {
        VRAMFIT_RETURN_IF_ERROR(as_int(&s.max_num_batched_tokens));
      }
      if (s.max_num_batched_tokens == 0) return ZeroIsNotDefault(name);
    } else if (name == "--block-size") {
      VRAMFIT_RETURN_IF_ERROR(as_int(&s.block_size));
      if (s.block_size == 0) return ZeroIsNotDefault(name);
    } else if (name == "--enforce-eager") {
      s.enforce_eager = true;
    } else if (name == "--language-model-only") {
      s.language_model_only = true;
    } else if (name == "--disable-hybrid-kv-cache-manager") {
      s.disable_hybrid_kv_cache_manager = true;
      s.keep_hybrid_kv_cache_manager = false;
    } else if (name == "--enable-prefix-caching") {
      s.enable_prefix_caching = 1;
    } else if (name == "--no-enable-prefix-caching") {
      s.enable_prefix_caching = 0;
    } else if (name == "--disable-sliding-window") {
      s.disable_sliding_window = true;
    } else if (name == "--enable-chunked-prefill") {
      s.enable_chunked_prefill = 1;
    } else if (name == "--no-enable-chunked-prefill") {
      s.enable_chunked_prefill = 0;
    } else if (name == "--mamba-block-size") {
      // CacheConfig.mamba_block_size: Field(gt=0) (vllm/config/cache.py).
      VRAMFIT_RETURN_IF_ERROR(as_int(&s.mamba_block_size));
      if (s.mamba_block_size <= 0) {
        return Status::InvalidArgument(fmt::format(
            "--mamba-block-size {}: vLLM takes a positive number of tokens (CacheConfig "
            "mamba_block_size: greater than 0)",
            s.mamba_block_size));
      }
    } else if (name == "--mamba-cache-mode") {
      VRAMFIT_RETURN_IF_ERROR(Choice(name, text, kMambaCacheModes));
      s.mamba_cache_mode = text;
    } else if (name == "--mamba-cache-dtype" || name == "--mamba-ssm-cache-dtype") {
      VRAMFIT_RETURN_IF_ERROR(Choice(name, text, kMambaDtypes));
      (name == "--mamba-cache-dtype" ? s.mamba_cache_dtype : s.mamba_ssm_cache_dtype) =
          text == "auto" ? "" : text;
    } else if (name == "--performance-mode") {
      VRAMFIT_RETURN_IF_ERROR(Choice(name, text, kPerformanceModes));
      s.performance_mode = text == "balanced" ? "" : text;
    } else if (name == "--kv-cache-dtype-skip-layers") {
      // CacheConfig.kv_cache_dtype_skip_layers (list[str], nargs "+"): vLLM matches each word
      // against a layer's index or "sliding_window" and checks nothing else; so does the plan.
      s.kv_skip_layers.clear();
      for (size_t at = 0; at <= text.size();) {
        const size_t comma = std::min(text.find(',', at), text.size());
        if (comma > at) s.kv_skip_layers.push_back(text.substr(at, comma - at));
        at = comma + 1;
      }
    } else if (name == "--attention-backend") {
      auto backend = ReadAttentionBackend(text);
      if (!backend.ok()) return backend.status();
      s.attention_backend = *backend;
    } else if (name == "--no-disable-hybrid-kv-cache-manager") {
      s.keep_hybrid_kv_cache_manager = true;
      s.disable_hybrid_kv_cache_manager = false;
    } else if (name == "--kv-transfer-config") {
      // KVTransferConfig's fields (vllm/config/kv_transfer.py); kv_connector names the class.
      simdjson::dom::parser parser;
      simdjson::dom::object obj;
      if (parser.parse(text).get(obj)) {
        return Status::InvalidArgument(fmt::format(
            "--kv-transfer-config: expected a JSON object, found {}", core::Printable(text)));
      }
      simdjson::dom::element connector;
      std::string_view name_text;
      if (!obj["kv_connector"].get(connector) && !connector.is_null()) {
        if (connector.get_string().get(name_text)) {
          return Status::InvalidArgument(
              "--kv-transfer-config kv_connector: expected a connector's class name (text)");
        }
      }
      s.kv_transfer_config = text;
      s.kv_connector = std::string(name_text);
    } else if (name == "--skip-mm-profiling") {
      s.skip_mm_profiling = true;
    } else if (name == "--mm-encoder-tp-mode") {
      // MMEncoderTPMode = Literal["weights", "data"] (vllm/config/multimodal.py).
      static const char* const kModes[] = {"weights", "data"};
      VRAMFIT_RETURN_IF_ERROR(Choice(name, text, kModes));
      s.mm_encoder_tp_data = text == "data";
    } else if (name == "--v0-engine") {
      s.v0_engine = true;
    } else if (name == "--compile-cache-warm") {
      s.compile_cache_warm = true;
    } else if (name == "--flashinfer-installed") {
      s.flashinfer_installed = true;
    } else if (name == "--allow-long-max-model-len") {
      s.allow_long_max_model_len = true;
    } else if (name == "--pp-layer-partition") {
      s.pp_layer_partition = text;  // checked by the plan against the model's layers
    } else if (name == "--quantization") {
      VRAMFIT_RETURN_IF_ERROR(Choice("--quantization/-q", text, kQuantizationChoices));
      s.quantization = text;
    } else if (name == "--kv-cache-memory-bytes") {
      kv_cache_memory = text;
    } else if (name == "--speculative-config") {
      spec_json = text;
    } else if (name == "--spec-method") {
      spec_aliases.emplace_back("method", nlohmann::json(text));
    } else if (name == "--spec-model") {
      spec_aliases.emplace_back("model", nlohmann::json(text));
    } else if (name == "--spec-tokens") {
      int64_t k = 0;
      VRAMFIT_RETURN_IF_ERROR(as_int(&k));
      spec_aliases.emplace_back("num_speculative_tokens", nlohmann::json(k));
    } else if (name == "--compilation-config") {
      VRAMFIT_RETURN_IF_ERROR(ReadCompilationConfig(text, &s));
    } else if (name == "--cudagraph-capture-sizes") {
      VRAMFIT_RETURN_IF_ERROR(ReadCaptureSizes(text, &capture_sizes_flag));
    } else if (name == "--max-cudagraph-capture-size") {
      auto n = ReadInt(name, text);
      if (!n.ok()) return n.status();
      VRAMFIT_RETURN_IF_ERROR(
          InRange(name, *n, 1, kMaxTokens, "a batch size, int32 in vLLM"));
      max_capture_flag = *n;
    } else if (name == "--optimization-level") {
      int64_t n = 0;
      VRAMFIT_RETURN_IF_ERROR(as_int(&n));
      // OptimizationLevel (config/vllm.py): O0 to O3.
      VRAMFIT_RETURN_IF_ERROR(InRange("--optimization-level/-O", n, 0, 3, "-O0 to -O3"));
      s.optimization_level = static_cast<int>(n);
    } else if (name == "--enable-lora") {
      s.enable_lora = true;
    } else if (name == "--fully-sharded-loras") {
      s.fully_sharded_loras = true;
    } else if (name == "--max-loras") {
      VRAMFIT_RETURN_IF_ERROR(as_int(&s.max_loras));
      VRAMFIT_RETURN_IF_ERROR(InRange(name, s.max_loras, 1, 4096, "adapter slots"));
    } else if (name == "--max-lora-rank") {
      VRAMFIT_RETURN_IF_ERROR(as_int(&s.max_lora_rank));
      // LoRAConfig.max_lora_rank: MaxLoRARanks = Literal[1, 8, 16, 32, 64, 128, 256, 320, 512]
      // (vllm/config/lora.py); argparse refuses the others.
      static const char* const kRanks[] = {"1", "8", "16", "32", "64", "128", "256", "320", "512"};
      VRAMFIT_RETURN_IF_ERROR(Choice(name, std::to_string(s.max_lora_rank), kRanks));
    } else if (name == "--max-cpu-loras") {
      VRAMFIT_RETURN_IF_ERROR(as_int(&s.max_cpu_loras));
      VRAMFIT_RETURN_IF_ERROR(InRange(name, s.max_cpu_loras, 1, 1 << 20, "cached adapters"));
    } else if (name == "--lora-extra-vocab-size") {
      VRAMFIT_RETURN_IF_ERROR(as_int(&s.lora_extra_vocab_size));
      VRAMFIT_RETURN_IF_ERROR(InRange(name, s.lora_extra_vocab_size, 0, 1 << 20, "tokens"));
    } else if (name == "--lora-dtype") {
      // LoRADType = Literal["auto", "float16", "bfloat16"] (vllm/config/lora.py).
      static const char* const kLoraDtypes[] = {"auto", "float16", "bfloat16"};
      VRAMFIT_RETURN_IF_ERROR(Choice(name, text, kLoraDtypes));
      s.lora_dtype = text;
    } else if (name == "--hf-overrides") {
      std::vector<std::string> ignored;
      auto checked = ApplyConfigOverrides(ModelSpec{}, text, name, &ignored);
      if (!checked.ok()) return checked.status();
      s.hf_overrides = text;
    } else if (name == "--disable-custom-all-reduce") {
      s.disable_custom_all_reduce = true;
    } else if (name == "--dtype") {
      static const char* kDtypes[] = {"auto", "half", "float16", "bfloat16", "float", "float32"};
      if (std::find(std::begin(kDtypes), std::end(kDtypes), text) == std::end(kDtypes)) {
        return Bad(name, text, "auto, half, float16, bfloat16, float or float32");
      }
      s.dtype = text;
    } else if (name == "--cpu-offload-gb") {
      VRAMFIT_RETURN_IF_ERROR(as_double(&s.cpu_offload_gb));
    } else if (name == "--offload-backend") {
      // OffloadBackend = Literal["auto", "uva", "prefetch"] (vllm/config/offload.py).
      static const char* const kBackends[] = {"auto", "uva", "prefetch"};
      VRAMFIT_RETURN_IF_ERROR(Choice(name, text, kBackends));
      s.offload_backend = text == "auto" ? "" : text;
    } else if (name == "--offload-group-size") {
      VRAMFIT_RETURN_IF_ERROR(as_int(&s.offload_group_size));
      if (s.offload_group_size < 0) return Bad(name, text, "0 or more layers");
    } else if (name == "--offload-num-in-group") {
      VRAMFIT_RETURN_IF_ERROR(as_int(&s.offload_num_in_group));
      if (s.offload_num_in_group < 1) return Bad(name, text, "1 or more layers");
    } else if (name == "--offload-prefetch-step") {
      VRAMFIT_RETURN_IF_ERROR(as_int(&s.offload_prefetch_step));
      if (s.offload_prefetch_step < 0) return Bad(name, text, "0 or more layers");
    } else if (name == "--offload-params" || name == "--cpu-offload-params" ||
               name == "--lora-target-modules") {
      std::vector<std::string>& names = name == "--offload-params"       ? s.offload_params
                                        : name == "--cpu-offload-params" ? s.cpu_offload_params
                                                                         : s.lora_target_modules;
      names.clear();
      for (size_t at = 0; at <= text.size();) {
        const size_t comma = std::min(text.find(',', at), text.size());
        if (comma > at) names.push_back(text.substr(at, comma - at));
        at = comma + 1;
      }
    } else if (name == "--kv-offloading-size" || name == "--kv-offloading-backend") {
      VRAMFIT_RETURN_IF_ERROR(ReadKvOffloading(name, text, &s));
    } else if (name == "--limit-mm-per-prompt") {
      limit_mm = text;
    } else if (name == "--mm-processor-kwargs") {
      mm_kwargs = text;
    } else {
      return Status::InvalidArgument(fmt::format("{}: not a vLLM flag vramfit reads", name));
    }
  }
  // --cudagraph-capture-sizes (v0.11.1+, EngineArgs.cudagraph_capture_sizes, list[int] read
  // with nargs="+"): create_engine_config copies it into compilation_config and refuses it
  // beside compilation_config's own key ("cudagraph_capture_sizes and compilation_config.
  // cudagraph_capture_sizes are mutually exclusive", vllm/engine/arg_utils.py).
  if (!spec_json.empty() || !spec_aliases.empty()) {
    auto merged = WithSpecAliases(spec_json, spec_aliases);
    if (!merged.ok()) return merged.status();
    VRAMFIT_RETURN_IF_ERROR(ReadSpeculativeConfig(*merged, &s));
    s.speculative_aliases = !spec_aliases.empty();
  }
  if (!capture_sizes_flag.empty()) {
    if (!s.cudagraph_capture_sizes.empty()) {
      return Status::InvalidArgument(
          "--cudagraph-capture-sizes beside --compilation-config's cudagraph_capture_sizes: "
          "vLLM refuses the two together (\"cudagraph_capture_sizes and compilation_config."
          "cudagraph_capture_sizes are mutually exclusive\"); give the sizes once");
    }
    s.cudagraph_capture_sizes = std::move(capture_sizes_flag);
    s.capture_sizes_from_flag = true;
  }
  // The flag is copied into the compilation config after it (EngineArgs.create_engine_config,
  // v0.2x: no longer refused beside compilation_config's own key, as v0.11 refused it).
  if (max_capture_flag > 0) {
    s.max_cudagraph_capture_size = max_capture_flag;
    s.max_capture_from_flag = true;
  }
  // LoRAConfig.__post_init__: max_cpu_loras defaults to max_loras and may not be smaller.
  if (s.max_cpu_loras > 0 && s.max_cpu_loras < s.max_loras) {
    return Status::InvalidArgument(fmt::format(
        "--max-cpu-loras {} must be >= --max-loras {} (vLLM's LoRAConfig refuses it)",
        s.max_cpu_loras, s.max_loras));
  }
  // Ranges, before any arithmetic uses the numbers.
  const char* kTokens = "token counts are int32 in vLLM";
  const char* kGpus = "GPUs in one deployment";
  VRAMFIT_RETURN_IF_ERROR(
      InRange("--tensor-parallel-size", s.tensor_parallel_size, 1, kMaxParallel, kGpus));
  VRAMFIT_RETURN_IF_ERROR(
      InRange("--pipeline-parallel-size", s.pipeline_parallel_size, 1, kMaxParallel, kGpus));
  VRAMFIT_RETURN_IF_ERROR(
      InRange("--data-parallel-size", s.data_parallel_size, 1, kMaxParallel, kGpus));
  VRAMFIT_RETURN_IF_ERROR(InRange("--decode-context-parallel-size", s.decode_context_parallel_size,
                                  1, kMaxParallel, "ranks of the tensor-parallel group"));
  if (s.max_num_seqs != 0) {
    VRAMFIT_RETURN_IF_ERROR(InRange("--max-num-seqs", s.max_num_seqs, 1, kMaxTokens, kTokens));
  }
  if (s.max_num_batched_tokens != 0) {
    VRAMFIT_RETURN_IF_ERROR(InRange("--max-num-batched-tokens", s.max_num_batched_tokens, 1,
                                    kMaxTokens, kTokens));
  }
  if (s.block_size != 0) {
    VRAMFIT_RETURN_IF_ERROR(
        InRange("--block-size", s.block_size, 1, kMaxBlockSize, "tokens per KV block"));
  }
  if (!(s.cpu_offload_gb >= 0 && s.cpu_offload_gb <= kMaxOffloadGib)) {
    return Status::InvalidArgument(fmt::format(
        "--cpu-offload-gb {}: expected 0 to {} GiB per GPU", s.cpu_offload_gb, kMaxOffloadGib));
  }
  if (!(s.gpu_memory_utilization >= 0 && s.gpu_memory_utilization <= 1)) {
    return Status::InvalidArgument(fmt::format(
        "--gpu-memory-utilization {}: expected a fraction in (0, 1]", s.gpu_memory_utilization));
  }
  if (!max_model_len.empty()) {
    if (max_model_len == "auto" || max_model_len == "-1") {
      s.max_model_len = -1;
    } else {
      auto n = ParseHumanInt("--max-model-len", max_model_len);
      if (!n.ok()) return Status::InvalidArgument(n.status().message() + ", or auto");
      VRAMFIT_RETURN_IF_ERROR(InRange("--max-model-len", *n, 1, kMaxTokens, kTokens));
      s.max_model_len = *n;
    }
  }
  if (HumanReadableSuffix(kv_cache_memory)) {
    // vLLM's human_readable_int: 10g is 10,000,000,000 bytes, 10G is 10 GiB.
    auto n = ParseHumanInt("--kv-cache-memory-bytes", kv_cache_memory);
    if (!n.ok()) {
      return Status::InvalidArgument(fmt::format(
          "--kv-cache-memory-bytes \"{}\": expected a positive size, e.g. 10G (10 GiB), 10g "
          "(10,000,000,000 bytes) or 24GiB", kv_cache_memory));
    }
    s.kv_cache_memory_bytes = static_cast<uint64_t>(*n);
  } else if (!kv_cache_memory.empty()) {
    auto b = ParseMemorySize(kv_cache_memory);
    if (!b.ok()) return Status::InvalidArgument("--kv-cache-memory-bytes: " + b.status().message());
    s.kv_cache_memory_bytes = *b;
  }
  if (!limit_mm.empty()) {
    std::vector<std::pair<std::string, int64_t>> kv;
    VRAMFIT_RETURN_IF_ERROR(ReadJsonInts("--limit-mm-per-prompt", limit_mm, &kv));
    for (const auto& [k, v] : kv) {
      if (k != "image" && k != "video") continue;
      VRAMFIT_RETURN_IF_ERROR(InRange("--limit-mm-per-prompt " + k, v, 0, kMaxTokens,
                                      "items per prompt"));
      (k == "image" ? s.limit_images : s.limit_videos) = v;
    }
  }
  // EPLBConfig (vllm/config/parallel.py, read at 0.22): num_redundant_experts sizes the
  // weights; window_size, step_interval, log_balancedness and the policy do not.
  VRAMFIT_RETURN_IF_ERROR(ReadJsonKey("--eplb-config", eplb_config, "num_redundant_experts", 0,
                                      "redundant experts", &s.num_redundant_experts));
  VRAMFIT_RETURN_IF_ERROR(ReadJsonKey("--mm-processor-kwargs", mm_kwargs, "max_pixels", 1,
                                      "pixels per image", &s.max_pixels));
  return s;
}

Status CheckKvCacheDtypeChoice(const Rules& rules, const std::string& value,
                               const std::string& version) {
  const std::string& release = version.empty() ? rules.text : version;
  if (value == "auto") return Status::Ok();
  if (!rules.kv_cache_dtype_flag) {
    return Status::InvalidArgument(fmt::format(
        "--kv-cache-dtype {}: vLLM {} has no such flag (the server stops with \"unrecognized "
        "arguments\"); an FP8 KV cache came with vLLM 0.3.0 (PR #2279)",
        core::Printable(value), release));
  }
  if (rules.kv_fp8 && rules.kv_fp8_e5m2 && rules.kv_fp8_e4m3) return Status::Ok();
  // v0.3.0-v0.4.2: argparse's choices, in arg_utils.py's order.
  std::vector<std::string> choices = {"auto"};
  if (rules.kv_fp8) choices.push_back("fp8");
  if (rules.kv_fp8_e5m2) choices.push_back("fp8_e5m2");
  if (rules.kv_fp8_e4m3) choices.push_back("fp8_e4m3");
  if (std::find(choices.begin(), choices.end(), value) != choices.end()) return Status::Ok();
  std::string list;
  for (const std::string& c : choices) list += (list.empty() ? "'" : ", '") + c + "'";
  return Status::InvalidArgument(
      fmt::format("argument --kv-cache-dtype: invalid choice: '{}' (choose from {}) (vLLM {})",
                  core::Printable(value), list, release));
}

}  // namespace vramfit::vllm
