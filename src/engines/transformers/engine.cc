// transformers behind the engine interface: its flags, the `transformers MODEL` command line,
// the planner, its remedies and fit knobs, adapted to the engine-neutral types.
#include "engines/transformers/engine.h"

#include <fmt/format.h>

#include "engines/transformers/command.h"
#include "engines/transformers/rules.h"
#include "engines/transformers/transformers.h"

namespace vramfit::transformers {
namespace {

class PreparedTransformersModel : public PreparedModel {
 public:
  explicit PreparedTransformersModel(const Inventory& inv) : inv_(inv) {}

  Result<vramfit::Plan> MakePlan(const GpuSpec& gpu, const EngineSettings& s) const override {
    auto p = PlanTransformers(inv_, gpu, ToTransformersSettings(s));
    if (!p.ok()) return p.status();
    return static_cast<vramfit::Plan&&>(std::move(*p));
  }

  std::vector<Remedy> Remedies(const GpuSpec& gpu, const EngineSettings& es,
                               const vramfit::Plan& plan) const override {
    std::vector<Remedy> out;
    if (plan.fits || !plan.failure_stage || plan.gpus.empty()) return out;
    const TransformersSettings s = ToTransformersSettings(es);
    auto add = [&](const TransformersSettings& v, std::string change, std::string cost,
                   int group = 0) {
      out.push_back({std::move(change), std::move(cost), ToEngineSettings(v), group});
    };
    const Stage st = *plan.failure_stage;
    // float32 weights because no dtype was given (transformers 4.x): the checkpoint's own dtype
    // halves them, whatever the stage that failed.
    const bool f32 = s.dtype == "float32" || s.dtype == "float" ||
                     (s.dtype.empty() && !inv_.spec.quant.quantized() &&
                      plan.modelled_version.rfind("4.", 0) == 0);
    if (f32 && !s.load_in_4bit && !s.load_in_8bit) {
      TransformersSettings v = s;
      v.dtype = "auto";
      add(v, "--dtype auto", "none: the checkpoint's own 16-bit dtype instead of float32");
    }
    // What the plan searched (PlanTransformers: the longest fused or static cache, the largest
    // images that fit), each a remedy setting one knob.
    const auto searched = PlanTransformers(inv_, gpu, s);
    auto from_search = [&](int64_t TransformersPlan::*found, int64_t TransformersOptions::*knob,
                           const char* flag, const char* cost) {
      if (!searched.ok() || (*searched).*found <= 0) return;
      TransformersSettings v = s;
      v.*knob = (*searched).*found;
      add(v, fmt::format("{} {}", flag, v.*knob), cost);
    };
    // AutoAWQ's fused cache: the longest fuse_max_seq_len that fits, or transformers' own
    // cache, which grows with the tokens.
    if (s.do_fuse) {
      from_search(&TransformersPlan::estimated_fuse_max_seq_len,
                  &TransformersOptions::fuse_max_seq_len, "--fuse-max-seq-len",
                  "a shorter fused cache: prompt + generation must stay within it");
      TransformersSettings v = s;
      v.do_fuse = false;
      v.fuse_max_seq_len = 0;
      add(v, "without --do-fuse", "transformers' own attention and cache: no preallocation, "
                                  "slower decoding than the fused kernels");
    }
    const bool is_static = s.cache_implementation == "static" ||
                           s.cache_implementation == "offloaded_static";
    // The longest static cache that fits.
    from_search(&TransformersPlan::estimated_max_cache_len, &TransformersOptions::max_cache_len,
                "--max-cache-len", "a shorter static cache: generation stops there");
    if (is_static) {
      TransformersSettings v = s;
      v.cache_implementation = "dynamic";
      v.max_cache_len = 0;
      add(v, "--cache-implementation dynamic", "the cache grows with the tokens; no torch.compile "
                                               "of a fixed shape");
    }
    if (st == Stage::kProfile || st == Stage::kRuntime || st == Stage::kKvCache) {
      // The longest prompt + generation that fits (the plan searched it; advice itself tries it
      // only for a kv_cache failure).
      if (plan.estimated_max_model_len > 0 && st != Stage::kKvCache) {
        TransformersSettings v = s;
        v.max_model_len = plan.estimated_max_model_len;
        if (v.prompt_tokens > 0 && v.max_new_tokens > 0) {
          v.max_new_tokens = v.max_model_len - v.prompt_tokens;
        }
        add(v, fmt::format("--max-length {}", v.max_model_len), "shorter prompt + generation");
      }
      from_search(&TransformersPlan::estimated_max_pixels, &TransformersOptions::max_pixels,
                  "--max-pixels",
                  "smaller images: the processor resizes each to at most that many pixels");
      if (s.attn_implementation == "eager") {
        TransformersSettings v = s;
        v.attn_implementation = "sdpa";
        add(v, "--attn-implementation sdpa", "none: the same results without the score matrix");
      }
      // (Fused AWQ attention never writes transformers' cache: its class changes nothing.)
      if ((s.cache_implementation.empty() || s.cache_implementation == "dynamic") &&
          !s.do_fuse) {
        TransformersSettings v = s;
        v.cache_implementation = "quantized";
        add(v, "--cache-implementation quantized", "int4 KV (quanto): a small accuracy cost, "
                                                   "slower decoding", 1);
        v.cache_implementation = "offloaded";
        add(v, "--cache-implementation offloaded", "KV in CPU memory, two layers on the GPU: "
                                                   "slower decoding", 1);
      }
      if (s.num_beams > 1) {
        TransformersSettings v = s;
        v.num_beams = 1;
        v.num_return_sequences = 1;
        add(v, "--num-beams 1", "no beam search");
      }
    }
    // device_map="auto" on one GPU keeps about a tenth of the card free for activations
    // (get_balanced_memory) and places the rest on the CPU, which a quantized model refuses:
    // every weight on GPU 0 instead, where they fit.
    const bool auto_map = s.device_map == "auto" || s.device_map.starts_with("balanced") ||
                          s.device_map == "sequential";
    if (st == Stage::kLoad && auto_map && s.max_memory.empty() && plan.gpus.size() == 1 &&
        (inv_.spec.quant.quantized() || s.load_in_4bit || s.load_in_8bit)) {
      TransformersSettings v = s;
      v.device_map = "0";
      add(v, "--device-map 0", "every weight on GPU 0, none offloaded: less room left for the "
                               "prompt's activations");
    }
    if (st == Stage::kLoad && !inv_.spec.quant.quantized() && !s.load_in_4bit &&
        !s.load_in_8bit) {
      TransformersSettings v = s;
      v.load_in_8bit = true;
      add(v, "--load-in-8bit", "bitsandbytes int8 weights: a small accuracy cost, slower", 2);
      v.load_in_8bit = false;
      v.load_in_4bit = true;
      add(v, "--load-in-4bit", "bitsandbytes nf4/fp4 weights: an accuracy cost, slower", 2);
    }
    return out;
  }

 private:
  const Inventory& inv_;
};

Result<EngineSettings> ReadEngineFlags(const FlagValues& given, EngineSettings base) {
  auto s = ReadFlags(given, ToTransformersSettings(base));
  if (!s.ok()) return s.status();
  return ToEngineSettings(*s);
}

Status CheckVersion(const std::string& version) {
  auto v = ParseReleaseNumber(version);
  return v.ok() ? Status::Ok() : v.status();
}

Result<std::unique_ptr<PreparedModel>> Prepare(const Inventory& inv) {
  VRAMFIT_RETURN_IF_ERROR(CheckPlannable(inv, "transformers"));
  return std::unique_ptr<PreparedModel>(std::make_unique<PreparedTransformersModel>(inv));
}

int64_t ModelMaxLen(const ModelSpec& spec) {
  return spec.max_position_embeddings > 0 ? spec.max_position_embeddings : 4096;
}

Status CheckContext(const ModelSpec& spec, const EngineSettings&, int64_t len,
                    std::string_view what) {
  if (len <= ModelMaxLen(spec)) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "{} is beyond the model's maximum length ({}, max_position_embeddings in config.json)",
      what, ModelMaxLen(spec)));
}

const char* FlagName(Setting s) {
  switch (s) {
    case Setting::kMaxModelLen: return "--max-length";
    case Setting::kKvCacheDtype: return "--cache-implementation";
    case Setting::kMaxNumSeqs: return "--batch-size";
    case Setting::kPipelineParallel: return "--num-gpus";
    default: return "";
  }
}

// Fit knob: the quantized cache where the user left the cache class alone.
bool QuantizedCache(const GpuSpec&, EngineSettings* e) {
  TransformersSettings s = ToTransformersSettings(*e);
  if (!s.cache_implementation.empty() && s.cache_implementation != "dynamic") return false;
  if (s.do_fuse) return false;  // the fused AWQ attention keeps its own cache
  s.cache_implementation = "quantized";
  *e = ToEngineSettings(s);
  return true;
}

}  // namespace

const Engine& TransformersEngine() {
  static const Engine kEngine = {
      .name = "transformers",
      .title = "transformers",
      .flags = Flags(),
      .read_flags = ReadEngineFlags,
      .check_version = CheckVersion,
      .recognizes = IsTransformersCommand,
      .command_forms = "`transformers MODEL [--device-map ...] [--cache-implementation ...]`",
      .command_example = "transformers Qwen/Qwen3-4B-Instruct-2507 --dtype bfloat16 "
                         "--cache-implementation static --max-cache-len 32768",
      .read_command = ReadTransformersCommand,
      .prepare = Prepare,
      .model_max_len = [](const ModelSpec& spec, const EngineSettings&) {
        return ModelMaxLen(spec);
      },
      .check_context = CheckContext,
      .knobs = {{Setting::kKvCacheDtype, "quantized", "int4 KV cache (quanto): a small accuracy "
                                                      "cost", QuantizedCache}},
      .flag_name = FlagName,
      .no_memory_effect = HasNoMemoryEffect,
  };
  return kEngine;
}

}  // namespace vramfit::transformers
