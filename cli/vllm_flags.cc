// vLLM flag parsing for `plan` and `check` (see vllm_flags.h). JSON-valued flags are parsed
// with simdjson, as everywhere else.
#include "vllm_flags.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>

#include "vramfit/gpu.h"

namespace vramfit::cli {

void AddVllmFlags(CLI::App* app, VllmFlags* f) {
  VllmSettings& s = f->settings;
  app->add_option("--tensor-parallel-size", s.tensor_parallel_size, "GPUs per tensor-parallel group (-tp)");
  app->add_option("--pipeline-parallel-size", s.pipeline_parallel_size, "Pipeline stages (-pp)");
  app->add_option("--data-parallel-size", s.data_parallel_size, "Data-parallel replicas (-dp)");
  app->add_flag("--enable-expert-parallel", s.enable_expert_parallel, "Split MoE experts across ranks");
  app->add_option("--max-model-len", f->max_model_len, "Context length per request, or auto (default: the model's)");
  app->add_option("--gpu-memory-utilization", s.gpu_memory_utilization, "Fraction of each GPU's total memory (default 0.9; 0.92 from v0.21)");
  app->add_option("--kv-cache-dtype", s.kv_cache_dtype, "auto | fp8 | fp8_e4m3 | fp8_e5m2");
  app->add_option("--max-num-seqs", s.max_num_seqs, "Concurrent sequences (default by GPU: 256, or 1024 on >=70 GiB cards)");
  app->add_option("--max-num-batched-tokens", s.max_num_batched_tokens, "Tokens per scheduler step (default 2048, or 8192 on >=70 GiB cards)");
  app->add_option("--block-size", s.block_size, "KV cache block size in tokens (default 16; MLA 64)");
  app->add_flag("--enforce-eager", s.enforce_eager, "No CUDA graphs");
  app->add_flag("--v0-engine", s.v0_engine, "Plan the V0 engine (VLLM_USE_V1=0; vLLM 0.8-0.10)");
  app->add_flag("--allow-long-max-model-len", s.allow_long_max_model_len,
                "Accept --max-model-len beyond the model's (VLLM_ALLOW_LONG_MAX_MODEL_LEN=1)");
  app->add_option("--quantization,-q", s.quantization, "Force a quantization method (e.g. fp8 for online FP8)");
  app->add_option("--kv-cache-memory-bytes", f->kv_cache_memory, "Fixed KV cache size (bytes or 24GiB)");
  app->add_option("--cpu-offload-gb", s.cpu_offload_gb, "GB of weights per GPU kept in CPU memory");
  app->add_option("--limit-mm-per-prompt", f->limit_mm_per_prompt, "Items per prompt, e.g. '{\"image\": 2, \"video\": 0}'");
  app->add_option("--mm-processor-kwargs", f->mm_processor_kwargs, "Processor settings, e.g. '{\"max_pixels\": 1003520}'");
}

namespace {

Status ReadJsonInts(const std::string& flag, const std::string& text, std::vector<std::pair<std::string, int64_t>>* out) {
  if (text.find('{') == std::string::npos) {  // image=2,video=0
    size_t at = 0;
    while (at < text.size()) {
      const size_t comma = text.find(',', at);
      const std::string item = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
      const size_t eq = item.find('=');
      if (eq == std::string::npos) return Status::InvalidArgument(fmt::format("{}: expected JSON or key=value pairs, found \"{}\"", flag, text));
      try {
        out->emplace_back(item.substr(0, eq), std::stoll(item.substr(eq + 1)));
      } catch (...) {
        return Status::InvalidArgument(fmt::format("{}: \"{}\" is not a whole number", flag, item.substr(eq + 1)));
      }
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    return Status::Ok();
  }
  simdjson::dom::parser parser;
  simdjson::dom::object obj;
  if (parser.parse(text).get(obj)) return Status::InvalidArgument(fmt::format("{}: expected a JSON object, found {}", flag, text));
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

}  // namespace

Status FinishEngineAndVllmFlags(const std::string& engine, VllmFlags* f) {
  if (engine.rfind("vllm", 0) != 0 || (engine.size() > 4 && engine[4] != '@')) {
    return Status::Unsupported(fmt::format("--engine {}: only vllm (or vllm@X.Y) is modelled so far", engine));
  }
  if (engine.size() > 5) f->settings.version = engine.substr(5);
  return FinishVllmFlags(f);
}

Result<int64_t> ParseHumanInt(const std::string& flag, const std::string& text) {
  // vLLM's human_readable_int (vllm/engine/arg_utils.py): lower-case suffixes are decimal
  // (25.6k = 25,600), upper-case binary (16K = 16,384, whole numbers only).
  auto bad = [&]() {
    return Status::InvalidArgument(fmt::format(
        "{} \"{}\": expected a positive whole number of tokens, e.g. 32768, 128k (128,000) or 128K (131,072)", flag, text));
  };
  if (text.empty() || text.size() > 24) return bad();
  std::string num = text;
  double mult = 1;
  bool binary = false;
  switch (num.back()) {
    case 'k': mult = 1e3; break;
    case 'm': mult = 1e6; break;
    case 'g': mult = 1e9; break;
    case 'K': mult = 1024; binary = true; break;
    case 'M': mult = 1048576; binary = true; break;
    case 'G': mult = 1073741824; binary = true; break;
    default: break;
  }
  if (mult != 1) num.pop_back();
  const bool has_dot = num.find('.') != std::string::npos;
  if (num.empty() || (has_dot && (binary || mult == 1)) ||
      num.find_first_not_of("0123456789.") != std::string::npos || num.front() == '.' || num.back() == '.' ||
      std::count(num.begin(), num.end(), '.') > 1) {
    return bad();
  }
  const double v = std::stod(num) * mult;
  if (!(v >= 1) || v > 9e15) return bad();
  return static_cast<int64_t>(v);
}

Status FinishVllmFlags(VllmFlags* f) {
  VllmSettings& s = f->settings;
  if (!f->max_model_len.empty()) {
    if (f->max_model_len == "auto" || f->max_model_len == "-1") {
      s.max_model_len = -1;
    } else {
      auto n = ParseHumanInt("--max-model-len", f->max_model_len);
      if (!n.ok()) return Status::InvalidArgument(n.status().message() + ", or auto");
      s.max_model_len = *n;
    }
  }
  if (!f->kv_cache_memory.empty()) {
    auto b = ParseMemorySize(f->kv_cache_memory);
    if (!b.ok()) return Status::InvalidArgument("--kv-cache-memory-bytes: " + b.status().message());
    s.kv_cache_memory_bytes = *b;
  }
  if (!f->limit_mm_per_prompt.empty()) {
    std::vector<std::pair<std::string, int64_t>> kv;
    VRAMFIT_RETURN_IF_ERROR(ReadJsonInts("--limit-mm-per-prompt", f->limit_mm_per_prompt, &kv));
    for (const auto& [k, v] : kv) {
      if (k == "image") s.limit_images = v;
      if (k == "video") s.limit_videos = v;
    }
  }
  if (!f->mm_processor_kwargs.empty()) {
    std::vector<std::pair<std::string, int64_t>> kv;
    VRAMFIT_RETURN_IF_ERROR(ReadJsonInts("--mm-processor-kwargs", f->mm_processor_kwargs, &kv));
    for (const auto& [k, v] : kv) if (k == "max_pixels") s.max_pixels = v;
  }
  return Status::Ok();
}

std::vector<std::string> RewriteShortVllmFlags(std::vector<std::string> args) {
  for (std::string& a : args) {
    for (auto [from, to] : {std::pair{"-tp", "--tensor-parallel-size"}, {"-pp", "--pipeline-parallel-size"},
                            {"-dp", "--data-parallel-size"}}) {
      const std::string f(from);
      if (a == f) a = to;
      else if (a.rfind(f + "=", 0) == 0) a = std::string(to) + a.substr(f.size());
    }
  }
  return args;
}

}  // namespace vramfit::cli
