// llama.cpp behind the engine interface: its flags, the llama-server / llama-cli command
// lines, the planner over GGUF inventories, its remedies in its own flags (context first, then
// layers or experts to the CPU, as llama.cpp's --fit orders them) and its fit knobs.
#include "engines/llamacpp/engine.h"

#include <fmt/format.h>

#include <algorithm>

#include "engines/llamacpp/command.h"
#include "engines/llamacpp/fit.h"
#include "engines/llamacpp/llamacpp.h"
#include "engines/llamacpp/rules.h"

namespace vramfit::llamacpp {
namespace {

bool IsGguf(const Inventory& inv) {
  return std::any_of(inv.files.begin(), inv.files.end(),
                     [](const std::string& f) { return f.ends_with(".gguf"); });
}

// The largest value in [lo, hi] for which `fits` holds (monotone, true at lo); lo - 1 if none.
template <typename F>
int64_t Largest(int64_t lo, int64_t hi, F fits) {
  if (!fits(lo)) return lo - 1;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

class PreparedLlamaCppModel : public PreparedModel {
 public:
  explicit PreparedLlamaCppModel(const Inventory& inv) : inv_(inv) {}

  Result<vramfit::Plan> MakePlan(const GpuSpec& gpu, const EngineSettings& es) const override {
    const LlamaCppSettings s = ToLlamaCppSettings(es);
    auto p = PlanLlamaCpp(inv_, gpu, s);
    if (!p.ok()) return p.status();
    if (!p->fits && (p->failure_stage == Stage::kKvCache ||
                     p->failure_stage == Stage::kProfile)) {
      // The longest -c that fits (what llama.cpp's --fit tries first).
      LlamaCppSettings t = s;
      const int64_t best = Largest(1, std::max<int64_t>(1, p->n_ctx / kCtxPad - 1),
                                   [&](int64_t units) {
        t.max_model_len = units * kCtxPad;
        auto q = PlanLlamaCpp(inv_, gpu, t);
        return q.ok() && q->fits;
      });
      p->estimated_max_model_len = best > 0 ? best * kCtxPad : 0;
    }
    return static_cast<vramfit::Plan&&>(std::move(*p));
  }

  std::vector<Remedy> Remedies(const GpuSpec& gpu, const EngineSettings& es,
                               const vramfit::Plan& plan) const override {
    std::vector<Remedy> out;
    if (plan.fits || !plan.failure_stage) return out;
    const LlamaCppSettings s = ToLlamaCppSettings(es);
    const int64_t n_layer = static_cast<int64_t>(inv_.spec.layers.size());
    auto fits = [&](const LlamaCppSettings& v) {
      auto q = PlanLlamaCpp(inv_, gpu, v);
      return q.ok() && q->fits;
    };
    // The vision projector on the CPU (it is loaded last, so it is what failed to fit).
    if (plan.failure_stage == Stage::kWarmup && s.mmproj_offload) {
      LlamaCppSettings v = s;
      v.mmproj_offload = false;
      if (fits(v)) {
        out.push_back({"--no-mmproj-offload", "the vision encoder runs on the CPU: slower image "
                       "encoding", ToEngineSettings(v), 1});
      }
    }
    // The projector left out: text only (a projector from -hf's what-if or --mmproj).
    if (plan.failure_stage == Stage::kWarmup && (!s.mmproj.empty() || s.mmproj_header)) {
      LlamaCppSettings v = s;
      v.mmproj.clear();
      v.mmproj_header.reset();
      if (fits(v)) {
        // (Group 0: shown beside the engine's first way out, a different trade.)
        out.push_back({"--no-mmproj", "no vision projector: the server takes no images",
                       ToEngineSettings(v), 0});
      }
      // --fit leaves its target free without counting the projector (before PR 21489): a
      // larger target leaves the projector and its encoder room, in 256 MiB steps.
      auto rules = RulesFor(s.version);
      if (rules.ok() && FitApplies(*rules, s) && s.fit_target_mib.size() <= 1) {
        const int64_t from = s.fit_target_mib.empty() ? 1024 : s.fit_target_mib.front();
        for (int64_t mib = from + 256; mib <= from + 8192; mib += 256) {
          LlamaCppSettings t = s;
          t.fit_target_mib = {mib};
          if (!fits(t)) continue;
          out.push_back({fmt::format("--fit-target {}", mib),
                         fmt::format("--fit leaves {} MiB free for the projector and its "
                                     "encoder (a shorter context or fewer layers on the GPU)",
                                     mib),
                         ToEngineSettings(t), 0});
          break;
        }
      }
    }
    bool moe = false;
    for (const LayerSpec& l : inv_.spec.layers) moe |= l.mlp.kind == MlpKind::kMoe;
    // Experts of the first N layers to the CPU: the attention and the KV stay on the GPU.
    if (moe && !s.cpu_moe) {
      LlamaCppSettings v = s;
      // The fewest layers whose experts must leave: the largest count that still does not
      // fit, plus one (more experts on the CPU never need more GPU memory).
      const int64_t lo = std::max<int64_t>(s.n_cpu_moe, 0);
      const int64_t too_few = Largest(lo, n_layer, [&](int64_t n) {
        v.n_cpu_moe = n;
        return !fits(v);
      });
      const int64_t n = too_few + 1;
      v.n_cpu_moe = n;
      if (n <= n_layer && fits(v)) {
        out.push_back({fmt::format("--n-cpu-moe {}", n),
                       fmt::format("the experts of {} layer(s) run on the CPU: slower decoding", n),
                       ToEngineSettings(v), 1});
      }
    }
    // Fewer layers on the GPUs (-ngl counts from the last layer, the output layer first).
    {
      LlamaCppSettings v = s;
      const int64_t top = s.n_gpu_layers < 0 ? n_layer + 1 : std::min(s.n_gpu_layers, n_layer + 1);
      const int64_t best = Largest(0, top - 1, [&](int64_t ngl) {
        v.n_gpu_layers = ngl;
        return fits(v);
      });
      if (best >= 0 && best < top) {
        v.n_gpu_layers = best;
        out.push_back({fmt::format("-ngl {}", best),
                       fmt::format("{} of {} layers run on the CPU: much slower",
                                   n_layer + 1 - best, n_layer + 1),
                       ToEngineSettings(v), 1});
      }
    }
    return out;
  }

 private:
  const Inventory& inv_;
};

Result<EngineSettings> ReadEngineFlags(const FlagValues& given, EngineSettings base) {
  auto s = ReadFlags(given, ToLlamaCppSettings(base));
  if (!s.ok()) return s.status();
  return ToEngineSettings(*s);
}

Status CheckVersion(const std::string& version) { return RulesFor(version).status(); }

Result<std::unique_ptr<PreparedModel>> Prepare(const Inventory& inv) {
  if (!IsGguf(inv)) {
    return Status::Unsupported("llama.cpp runs GGUF files: convert the checkpoint with "
                               "llama.cpp's convert_hf_to_gguf.py (and llama-quantize), then "
                               "plan the .gguf file, or plan the file they would make with "
                               "--as-quantized q4_k_m (q8_0, q6_k, f16, ...)");
  }
  if (!inv.has_spec || inv.spec.layers.empty()) {
    return Status::InvalidArgument("planning needs the GGUF file's model keys (none were read: "
                                   "an mmproj file is planned with its model)");
  }
  return std::unique_ptr<PreparedModel>(std::make_unique<PreparedLlamaCppModel>(inv));
}

int64_t ModelMaxLen(const ModelSpec& spec) {
  return spec.max_position_embeddings > 0 ? spec.max_position_embeddings : 4096;
}

// llama.cpp accepts a context past n_ctx_train with a warning ("possible training context
// overflow", llama-context.cpp); only its uint32 limit refuses.
Status CheckContext(const ModelSpec&, const EngineSettings&, int64_t len, std::string_view what) {
  if (len <= (int64_t{1} << 31) - 1) return Status::Ok();
  return Status::InvalidArgument(fmt::format("{}: llama.cpp's context is at most 2147483647",
                                             what));
}

const char* FlagName(Setting s) {
  switch (s) {
    case Setting::kMaxModelLen: return "-c";
    case Setting::kKvCacheDtype: return "-ctk";
    case Setting::kMaxNumSeqs: return "-np";
    case Setting::kMaxNumBatchedTokens: return "-b";
    // llama.cpp uses every GPU it sees (CUDA_VISIBLE_DEVICES); the plan's command says which.
    case Setting::kTensorParallel: return "GPUs:";
    case Setting::kPipelineParallel: return "GPUs:";
    default: return "";
  }
}

// Fit knob: q8_0 K and V caches, both flags (-ctk sets K only; flash attention, on by
// default, allows a quantized V).
bool Q8Cache(const GpuSpec&, EngineSettings* e) {
  LlamaCppSettings s = ToLlamaCppSettings(*e);
  if (s.kv_cache_dtype != "auto" && s.kv_cache_dtype != "f16") return false;
  if (!s.cache_type_v.empty() && s.cache_type_v != "f16") return false;
  if (s.flash_attn == "off") return false;
  s.kv_cache_dtype = "q8_0";
  s.cache_type_v = "q8_0";
  *e = ToEngineSettings(s);
  return true;
}

}  // namespace

const Engine& LlamaCppEngine() {
  static const Engine kEngine = {
      .name = "llamacpp",
      .title = "llama.cpp",
      .flags = Flags(),
      .read_flags = ReadEngineFlags,
      .check_version = CheckVersion,
      .recognizes = IsLlamaCppCommand,
      .command_forms = "`llama-server -m MODEL.gguf [-c N] [-ngl N] ...` or `llama-cli ...`",
      .command_example = "llama-server -m Qwen3-8B-Q4_K_M.gguf -ngl 99 -c 32768",
      .read_command = ReadLlamaCppCommand,
      .prepare = Prepare,
      .model_max_len = [](const ModelSpec& spec, const EngineSettings&) {
        return ModelMaxLen(spec);
      },
      .check_context = CheckContext,
      .knobs = {{Setting::kKvCacheDtype, "q8_0 -ctv q8_0",
                 "q8_0 K and V caches: a small accuracy cost", Q8Cache}},
      .flag_name = FlagName,
      // llama.cpp's images (.devops/*.Dockerfile, docs/docker.md): the `server*` tags run
      // /app/llama-server, the `light*` tags /app/llama-cli (`full*` run tools.sh: not read).
      .images = {{"ggml-org/llama.cpp", "llama-server", {}, "server"},
                 {"ggml-org/llama.cpp", "llama-cli", {}, "light"},
                 {"ggerganov/llama.cpp", "llama-server", {}, "server"},
                 {"ggerganov/llama.cpp", "llama-cli", {}, "light"}},
      .no_memory_effect = HasNoMemoryEffect,
  };
  return kEngine;
}

}  // namespace vramfit::llamacpp
