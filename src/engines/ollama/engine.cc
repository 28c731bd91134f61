// Ollama behind the engine interface: its flags and command lines, the planner over GGUF
// inventories, and its remedies in its own vocabulary (environment variables and Modelfile
// PARAMETER lines, never llama.cpp flags): a shorter num_ctx first, then a quantized KV cache,
// fewer parallel requests, less reserved overhead, or the num_gpu its estimate would choose.
#include "engines/ollama/engine.h"

#include <fmt/format.h>

#include <algorithm>

#include "engines/ollama/command.h"
#include "engines/ollama/ollama.h"

namespace vramfit::ollama {
namespace {

bool IsGguf(const Inventory& inv) {
  return std::any_of(inv.files.begin(), inv.files.end(),
                     [](const std::string& f) { return f.ends_with(".gguf"); });
}

// The tokens a shorter num_ctx is searched in.
constexpr int64_t kCtxStep = 256;

class PreparedOllamaModel : public PreparedModel {
 public:
  explicit PreparedOllamaModel(const Inventory& inv) : inv_(inv) {}

  Result<vramfit::Plan> MakePlan(const GpuSpec& gpu, const EngineSettings& es) const override {
    const OllamaSettings s = ToOllamaSettings(es);
    auto p = PlanOllama(inv_, gpu, s);
    if (!p.ok()) return p.status();
    if (!p->fits && p->failure_stage == Stage::kKvCache) {
      // The longest num_ctx (in steps of 256) that keeps every layer on the GPUs.
      OllamaSettings t = s;
      int64_t lo = 0, hi = p->num_ctx / kCtxStep - (p->num_ctx % kCtxStep == 0 ? 1 : 0);
      while (lo < hi) {
        const int64_t mid = lo + (hi - lo + 1) / 2;
        t.max_model_len = mid * kCtxStep;
        auto q = PlanOllama(inv_, gpu, t);
        if (q.ok() && q->fits) {
          lo = mid;
        } else {
          hi = mid - 1;
        }
      }
      p->estimated_max_model_len = lo * kCtxStep;
    }
    return static_cast<vramfit::Plan&&>(std::move(*p));
  }

  std::vector<Remedy> Remedies(const GpuSpec& gpu, const EngineSettings& es,
                               const vramfit::Plan& plan) const override {
    std::vector<Remedy> out;
    if (plan.fits || !plan.failure_stage) return out;
    const OllamaSettings s = ToOllamaSettings(es);
    const int64_t blocks = static_cast<int64_t>(inv_.spec.layers.size());
    // A num_gpu past the estimate: the estimate's own count (or num_gpu unset).
    if (s.num_gpu > 0 && plan.failure_stage == Stage::kLoad) {
      auto p = PlanOllama(inv_, gpu, s);
      if (p.ok() && p->estimate.layers > 0) {
        OllamaSettings v = s;
        v.num_gpu = -1;
        out.push_back({"remove PARAMETER num_gpu (Ollama's estimate decides)",
                       fmt::format("{} of {} layers run on the CPU: much slower",
                                   blocks + 1 - p->estimate.layers, blocks + 1),
                       ToEngineSettings(v), 1});
      }
    }
    const std::string kv = s.kv_cache_dtype;
    if (kv != "q8_0" && kv != "q4_0") {
      OllamaSettings v = s;
      v.kv_cache_dtype = "q8_0";
      v.flash_attention = "1";
      out.push_back({"OLLAMA_FLASH_ATTENTION=1 OLLAMA_KV_CACHE_TYPE=q8_0",
                     "q8_0 K and V caches: half the KV bytes, a small accuracy cost",
                     ToEngineSettings(v), 2});
    }
    if (s.max_num_seqs > 1) {
      OllamaSettings v = s;
      v.max_num_seqs = 1;
      out.push_back({"OLLAMA_NUM_PARALLEL=1", "one request at a time", ToEngineSettings(v), 3});
    }
    if (s.gpu_overhead > 0) {
      OllamaSettings v = s;
      v.gpu_overhead = 0;
      out.push_back({"OLLAMA_GPU_OVERHEAD=0", "no memory kept free for other programs",
                     ToEngineSettings(v), 4});
    }
    return out;
  }

 private:
  const Inventory& inv_;
};

Result<EngineSettings> ReadEngineFlags(const FlagValues& given, EngineSettings base) {
  auto s = ReadFlags(given, ToOllamaSettings(base));
  if (!s.ok()) return s.status();
  return ToEngineSettings(*s);
}

Status CheckVersion(const std::string& version) {
  if (version.empty() || version == "0.12" || version == "0.12.10") return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "Ollama {}: the modelled release is 0.12.10 (the last that places layers by its static "
      "estimate)", version));
}

Result<std::unique_ptr<PreparedModel>> Prepare(const Inventory& inv) {
  if (!IsGguf(inv)) {
    return Status::Unsupported("Ollama runs GGUF files (ollama create converts a safetensors "
                               "checkpoint to one): plan the .gguf file, an Ollama library "
                               "name (qwen3:32b), or the GGUF what-if of this model with "
                               "--as-quantized q4_k_m (the library's default type)");
  }
  if (!inv.has_spec || inv.spec.layers.empty()) {
    return Status::InvalidArgument("planning needs the GGUF file's model keys (none were read)");
  }
  return std::unique_ptr<PreparedModel>(std::make_unique<PreparedOllamaModel>(inv));
}

// num_ctx past the model's context_length is cut to it (llm/server.go), so the model's is the
// longest.
int64_t ModelMaxLen(const ModelSpec& spec) {
  return spec.max_position_embeddings > 0 ? spec.max_position_embeddings : 4096;
}

Status CheckContext(const ModelSpec& spec, const EngineSettings&, int64_t len,
                    std::string_view what) {
  if (len <= ModelMaxLen(spec)) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "{}: Ollama cuts num_ctx to the model's context_length ({})", what, ModelMaxLen(spec)));
}

const char* FlagName(Setting s) {
  switch (s) {
    case Setting::kMaxModelLen: return "PARAMETER num_ctx";
    case Setting::kKvCacheDtype: return "OLLAMA_KV_CACHE_TYPE=";
    case Setting::kMaxNumSeqs: return "OLLAMA_NUM_PARALLEL=";
    case Setting::kMaxNumBatchedTokens: return "PARAMETER num_batch";
    // Ollama uses every GPU it sees (CUDA_VISIBLE_DEVICES); the plan's command says which.
    case Setting::kTensorParallel: return "GPUs:";
    case Setting::kPipelineParallel: return "GPUs:";
    default: return "";
  }
}

// Fit knob: q8_0 K and V caches, with the flash attention they need.
bool Q8Cache(const GpuSpec&, EngineSettings* e) {
  OllamaSettings s = ToOllamaSettings(*e);
  if (s.kv_cache_dtype != "auto" && s.kv_cache_dtype != "f16") return false;
  if (s.flash_attention == "0" || s.flash_attention == "false") return false;
  s.kv_cache_dtype = "q8_0";
  s.flash_attention = "1";
  *e = ToEngineSettings(s);
  return true;
}

}  // namespace

const Engine& OllamaEngine() {
  static const Engine kEngine = {
      .name = "ollama",
      .title = "Ollama",
      .flags = Flags(),
      .read_flags = ReadEngineFlags,
      .check_version = CheckVersion,
      .recognizes = IsOllamaCommand,
      .command_forms = "`[OLLAMA_...=V] ollama run MODEL.gguf`",
      .command_example = "OLLAMA_CONTEXT_LENGTH=8192 ollama run Qwen3-8B-Q4_K_M.gguf",
      .read_command = ReadOllamaCommand,
      .prepare = Prepare,
      .model_max_len = [](const ModelSpec& spec, const EngineSettings&) {
        return ModelMaxLen(spec);
      },
      .check_context = CheckContext,
      .knobs = {{Setting::kKvCacheDtype, "q8_0",
                 "q8_0 K and V caches with OLLAMA_FLASH_ATTENTION=1: a small accuracy cost",
                 Q8Cache}},
      .flag_name = FlagName,
      .no_memory_effect = HasNoMemoryEffect,
  };
  return kEngine;
}

}  // namespace vramfit::ollama
