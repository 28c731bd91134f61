// SGLang flag table and reader (see flags.h).
#include "engines/sglang/flags.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <charconv>
#include <cmath>
#include <string_view>
#include <utility>

#include "core/text.h"

namespace vramfit::sglang {
namespace {

constexpr auto Bad = core::BadFlagValue;

// The ranges vramfit plans: token counts within int32 token indices, parallel sizes within any
// deployment.
constexpr int64_t kMaxTokens = (int64_t{1} << 31) - 1;
constexpr int64_t kMaxParallel = 4096;
constexpr int64_t kMaxBatch = 1 << 16;

Result<int64_t> Int(const std::string& flag, const std::string& text, int64_t lo, int64_t hi) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end) return Bad(flag, text, "a whole number");
  if (v < lo || v > hi) {
    return Status::InvalidArgument(fmt::format("{} {}: expected {} to {}", flag, v, lo, hi));
  }
  return v;
}

Result<double> Fraction(const std::string& flag, const std::string& text) {
  double v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || !std::isfinite(v)) return Bad(flag, text, "a number");
  if (v <= 0 || v > 1) return Bad(flag, text, "a fraction in (0, 1]");
  return v;
}

// --kv-cache-dtype choices (server_args.py, v0.5.5).
constexpr const char* kKvDtypes[] = {"auto", "fp8_e5m2", "fp8_e4m3", "bf16", "bfloat16",
                                     "fp4_e2m1"};
// --quantization choices: QUANTIZATION_CHOICES of server_args.py at v0.4.10.post2, v0.5.5 and
// v0.5.13 together (a name one of them has); argparse refuses any other ("invalid choice").
constexpr const char* kQuantizations[] = {
    "awq", "fp8", "mxfp8", "gptq", "marlin", "gptq_marlin", "awq_marlin", "bitsandbytes", "gguf",
    "modelopt", "modelopt_fp8", "modelopt_fp4", "nvfp4_online", "modelopt_mixed", "petit_nvfp4",
    "w8a8_int8", "w8a8_fp8", "moe_wna16", "qoq", "w4afp8", "mxfp4", "auto-round",
    "auto-round-int8", "compressed-tensors", "modelslim", "mxfp_w4a8", "quark",
    "quark_int4fp8_moe", "quark_mxfp4", "unquant"};
// --speculative-algorithm choices.
constexpr const char* kSpecAlgorithms[] = {"EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM"};
// --mm-attention-backend choices (the vision towers' attention, layers/attention/vision.py).
constexpr const char* kMmBackends[] = {"sdpa", "fa3", "triton_attn", "ascend_attn", "aiter_attn"};
// --dtype choices.
constexpr const char* kDtypes[] = {"auto", "half", "float16", "bfloat16", "float", "float32"};

template <size_t N>
Status Choice(const std::string& flag, const std::string& text, const char* const (&choices)[N]) {
  std::string list;
  for (const char* c : choices) {
    if (text == c) return Status::Ok();
    list += (list.empty() ? "'" : ", '") + std::string(c) + "'";
  }
  return Status::InvalidArgument(fmt::format(
      "argument {}: invalid choice: '{}' (choose from {})", flag, core::Printable(text), list));
}

// A JSON-valued flag's object (kept alive by `parser`).
Status ParseObject(const std::string& flag, const std::string& text,
                   simdjson::dom::parser& parser, simdjson::dom::object* obj) {
  if (parser.parse(text).get(*obj)) {
    return Status::InvalidArgument(
        fmt::format("{}: expected a JSON object, found {}", flag, core::Printable(text)));
  }
  return Status::Ok();
}

// --json-model-override-args: a JSON object; max_position_embeddings (and context_length)
// change the derived context; other keys are listed as not modelled.
Status ReadOverride(const std::string& flag, const std::string& text, SglangSettings* s) {
  simdjson::dom::parser parser;
  simdjson::dom::object obj;
  VRAMFIT_RETURN_IF_ERROR(ParseObject(flag, text, parser, &obj));
  s->json_model_override_args = text;
  for (auto field : obj) {
    int64_t v = 0;
    if (field.key == "max_position_embeddings" || field.key == "context_length") {
      if (field.value.get_int64().get(v) || v <= 0 || v > kMaxTokens) {
        return Status::InvalidArgument(fmt::format(
            "{}: \"{}\" must be a whole number of tokens", flag, std::string(field.key)));
      }
      s->override_context_len = v;
    }
  }
  return Status::Ok();
}

// --limit-mm-data-per-request: a JSON object of items per modality; "image" is planned, the
// other modalities are not read.
Status ReadMmLimit(const std::string& flag, const std::string& text, SglangSettings* s) {
  simdjson::dom::parser parser;
  simdjson::dom::object obj;
  VRAMFIT_RETURN_IF_ERROR(ParseObject(flag, text, parser, &obj));
  for (auto field : obj) {
    if (field.key != "image") continue;
    int64_t v = 0;
    if (field.value.get_int64().get(v) || v < 0 || v > kMaxBatch) {
      return Status::InvalidArgument(fmt::format(
          "{}: \"image\" must be a whole number of images, 0 to {}", flag, kMaxBatch));
    }
    s->images_per_request = v;
  }
  return Status::Ok();
}

}  // namespace

// --tp, --dp and --ep, the abbreviations SGLang's own documentation writes (argparse reads a
// unique prefix), stand as short names: `plan --engine sglang --tp 2` reads as --tp-size 2.
const std::vector<FlagSpec>& Flags() {
  static const std::vector<FlagSpec> kFlags = {
      {"--tp-size", "--tp", "tensor-parallel size (SGLang also reads --tp)", "INT"},
      {"--tensor-parallel-size", nullptr, "tensor-parallel size", "INT"},
      {"--pp-size", nullptr, "pipeline-parallel size", "INT"},
      {"--pipeline-parallel-size", nullptr, "pipeline-parallel size", "INT"},
      {"--dp-size", "--dp", "data-parallel size (SGLang also reads --dp)", "INT"},
      {"--data-parallel-size", nullptr, "data-parallel size", "INT"},
      {"--ep-size", "--ep", "expert-parallel size (SGLang also reads --ep)", "INT"},
      {"--enable-dp-attention", nullptr, "SGLang: attention data-parallel (attention TP = tp / dp)",
       nullptr},
      {"--cpu-offload-gb", nullptr,
       "SGLang: GiB of each GPU's weights kept in host memory and copied in for each forward",
       "INT"},
      {"--mem-fraction-static", nullptr,
       "SGLang: fraction of the free memory for weights and the KV pool (default by GPU)",
       "FLOAT"},
      {"--context-length", nullptr, "SGLang: the context length (default: the model's)", "INT"},
      {"--max-running-requests", nullptr, "SGLang: requests running at once", "INT"},
      {"--max-total-tokens", nullptr, "SGLang: cap on the KV pool's tokens", "INT"},
      {"--chunked-prefill-size", nullptr, "SGLang: prefill chunk in tokens (-1: no chunking)",
       "INT"},
      {"--cuda-graph-max-bs", nullptr, "SGLang: largest decode batch captured as a CUDA graph",
       "INT"},
      {"--disable-cuda-graph", nullptr, "SGLang: capture no CUDA graphs", nullptr},
      {"--kv-cache-dtype", nullptr, "KV cache dtype", "TEXT"},
      {"--quantization", "-q", "quantization method", "TEXT"},
      {"--dtype", nullptr, "model dtype", "TEXT"},
      {"--page-size", nullptr, "SGLang: tokens per KV page (default 1)", "INT"},
      {"--json-model-override-args", nullptr, "SGLang: JSON that overrides config.json", "TEXT"},
      {"--speculative-algorithm", nullptr, "SGLang: EAGLE, EAGLE3, NEXTN, STANDALONE or NGRAM",
       "TEXT"},
      {"--speculative-draft-model-path", nullptr, "SGLang: the draft model", "TEXT"},
      {"--speculative-num-draft-tokens", nullptr, "SGLang: draft tokens per step", "INT"},
      {"--disable-radix-cache", nullptr, "SGLang: no prefix cache", nullptr},
      {"--mamba-full-memory-ratio", nullptr, "SGLang: mamba state / KV memory (default 0.9)",
       "FLOAT"},
      {"--swa-full-tokens-ratio", nullptr, "SGLang: sliding / full pool tokens (default 0.8)",
       "FLOAT"},
      {"--limit-mm-data-per-request", nullptr,
       "SGLang: items per request by modality, e.g. '{\"image\": 2}' (planned: image)", "JSON"},
      {"--mm-attention-backend", nullptr,
       "SGLang: the vision tower's attention (sdpa, fa3, triton_attn; default by GPU)", "TEXT"},
  };
  return kFlags;
}

std::string SglangSpelling(const std::string& vllm_flag) {
  static constexpr std::pair<std::string_view, std::string_view> kNames[] = {
      {"--max-model-len", "--context-length"},
      {"--gpu-memory-utilization", "--mem-fraction-static"},
      {"--max-num-seqs", "--max-running-requests"},
      {"--max-num-batched-tokens", "--chunked-prefill-size"},
      {"--enforce-eager", "--disable-cuda-graph"},
      {"--block-size", "--page-size"},
  };
  for (const auto& [vllm, sglang] : kNames) {
    if (vllm_flag == vllm) return fmt::format(" (SGLang spells the nearest setting {})", sglang);
  }
  return "";
}

std::string CanonicalFlag(const std::string& name) {
  if (name == "--tp") return "--tp-size";
  if (name == "--dp") return "--dp-size";
  if (name == "--ep" || name == "--expert-parallel-size") return "--ep-size";
  if (name == "--model" || name == "--model-path") return "--model-path";
  for (const FlagSpec& f : Flags()) {
    if (name == f.name) return name;
  }
  return "";
}

Result<SglangSettings> ReadFlags(const FlagValues& given, SglangSettings s) {
  for (const auto& [name, text] : given) {
    const std::string& f = name;
    if (f == "--tp-size" || f == "--tensor-parallel-size") {
      auto v = Int(f, text, 1, kMaxParallel);
      if (!v.ok()) return v.status();
      s.tensor_parallel_size = *v;
    } else if (f == "--pp-size" || f == "--pipeline-parallel-size") {
      auto v = Int(f, text, 1, kMaxParallel);
      if (!v.ok()) return v.status();
      s.pipeline_parallel_size = *v;
    } else if (f == "--dp-size" || f == "--data-parallel-size") {
      auto v = Int(f, text, 1, kMaxParallel);
      if (!v.ok()) return v.status();
      s.data_parallel_size = *v;
    } else if (f == "--ep-size") {
      auto v = Int(f, text, 1, kMaxParallel);
      if (!v.ok()) return v.status();
      s.ep_size = *v;
      s.enable_expert_parallel = *v > 1;
    } else if (f == "--enable-dp-attention") {
      s.enable_dp_attention = true;
    } else if (f == "--mem-fraction-static") {
      auto v = Fraction(f, text);
      if (!v.ok()) return v.status();
      s.gpu_memory_utilization = *v;
    } else if (f == "--context-length") {
      auto v = Int(f, text, 1, kMaxTokens);
      if (!v.ok()) return v.status();
      s.max_model_len = *v;
    } else if (f == "--max-running-requests") {
      auto v = Int(f, text, 1, kMaxTokens);
      if (!v.ok()) return v.status();
      s.max_num_seqs = *v;
    } else if (f == "--max-total-tokens") {
      auto v = Int(f, text, 1, kMaxTokens);
      if (!v.ok()) return v.status();
      s.max_total_tokens = *v;
    } else if (f == "--chunked-prefill-size") {
      auto v = Int(f, text, -1, kMaxTokens);
      if (!v.ok()) return v.status();
      if (*v == 0) return Bad(f, text, "a positive number of tokens, or -1");
      s.max_num_batched_tokens = *v;
    } else if (f == "--cuda-graph-max-bs") {
      auto v = Int(f, text, 1, kMaxBatch);
      if (!v.ok()) return v.status();
      s.cuda_graph_max_bs = *v;
    } else if (f == "--disable-cuda-graph") {
      s.enforce_eager = true;
    } else if (f == "--kv-cache-dtype") {
      // argparse's choices (server_args.py, v0.4.10 to v0.5.13) have no plain "fp8": SGLang
      // stops with "invalid choice"; vLLM's spelling gets SGLang's in the message.
      const Status c = Choice(f, text, kKvDtypes);
      if (!c.ok() && text == "fp8") {
        return Status::InvalidArgument(c.message() + " (vLLM's fp8 is SGLang's fp8_e4m3)");
      }
      VRAMFIT_RETURN_IF_ERROR(c);
      s.kv_cache_dtype = text;
    } else if (f == "--quantization") {
      if (text.empty()) return Bad(f, text, "a quantization method");
      VRAMFIT_RETURN_IF_ERROR(Choice(f, text, kQuantizations));
      s.quantization = text;
    } else if (f == "--dtype") {
      VRAMFIT_RETURN_IF_ERROR(Choice(f, text, kDtypes));
      s.dtype = text;
    } else if (f == "--page-size") {
      auto v = Int(f, text, 1, kMaxBatch);
      if (!v.ok()) return v.status();
      s.page_size = *v;
    } else if (f == "--json-model-override-args") {
      VRAMFIT_RETURN_IF_ERROR(ReadOverride(f, text, &s));
    } else if (f == "--speculative-algorithm") {
      VRAMFIT_RETURN_IF_ERROR(Choice(f, text, kSpecAlgorithms));
      s.speculative_algorithm = text;
    } else if (f == "--speculative-draft-model-path") {
      s.draft_model = text;
    } else if (f == "--speculative-num-draft-tokens") {
      auto v = Int(f, text, 1, kMaxBatch);
      if (!v.ok()) return v.status();
      s.speculative_num_draft_tokens = *v;
    } else if (f == "--disable-radix-cache") {
      s.disable_radix_cache = true;
    } else if (f == "--cpu-offload-gb") {
      // ServerArgs.cpu_offload_gb (int in server_args.py; a whole number of GiB: the model
      // runner's set_cpu_offload_max_bytes(int(cpu_offload_gb * 1024**3))).
      auto v = Int(f, text, 0, 1 << 20);
      if (!v.ok()) return v.status();
      s.cpu_offload_gb = static_cast<double>(*v);
    } else if (f == "--mamba-full-memory-ratio" || f == "--swa-full-tokens-ratio") {
      auto v = Fraction(f, text);
      if (!v.ok()) return v.status();
      (f == "--mamba-full-memory-ratio" ? s.mamba_full_memory_ratio : s.swa_full_tokens_ratio) =
          *v;
    } else if (f == "--limit-mm-data-per-request") {
      VRAMFIT_RETURN_IF_ERROR(ReadMmLimit(f, text, &s));
    } else if (f == "--mm-attention-backend") {
      VRAMFIT_RETURN_IF_ERROR(Choice(f, text, kMmBackends));
      s.mm_attention_backend = text;
    } else {
      return Status::InvalidArgument(fmt::format("{} is not a flag of SGLang{}", f,
                                                 SglangSpelling(f)));
    }
  }
  return s;
}

}  // namespace vramfit::sglang
