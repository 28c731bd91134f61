// vLLM behind the engine interface: its flags, command lines, planner and fit knobs, adapted
// to the engine-neutral types (EngineSettings <-> VllmSettings, VllmPlan -> Plan).
#include "engines/vllm/engine.h"

#include <fmt/format.h>

#include "engines/vllm/command.h"
#include "engines/vllm/defaults.h"
#include "engines/vllm/flags.h"
#include "engines/vllm/vllm.h"

namespace vramfit::vllm {
namespace {

class PreparedVllmModel : public PreparedModel {
 public:
  explicit PreparedVllmModel(const Inventory& inv) : inv_(inv), profile_(ProfileVllmWeights(inv)) {}

  Result<vramfit::Plan> MakePlan(const GpuSpec& gpu, const EngineSettings& s) const override {
    auto p = PlanVllm(inv_, *profile_, gpu, ToVllmSettings(s));
    if (!p.ok()) return p.status();
    return static_cast<vramfit::Plan&&>(std::move(*p));
  }

 private:
  const Inventory& inv_;
  std::shared_ptr<const VllmWeightProfile> profile_;
};

Result<EngineSettings> ReadEngineFlags(const FlagValues& given, EngineSettings base) {
  auto s = ReadFlags(given, ToVllmSettings(base));
  if (!s.ok()) return s.status();
  return ToEngineSettings(*s);
}

Status CheckVersion(const std::string& version) {
  auto v = ParseRelease(version);
  return v.ok() ? Status::Ok() : v.status();
}

Result<std::unique_ptr<PreparedModel>> Prepare(const Inventory& inv) {
  if (!inv.has_spec) {
    return Status::InvalidArgument("planning needs the model's config.json (none was found)");
  }
  return std::unique_ptr<PreparedModel>(std::make_unique<PreparedVllmModel>(inv));
}

Status CheckContext(const ModelSpec& spec, const EngineSettings& s, int64_t len,
                    std::string_view what) {
  const int64_t max = DerivedMaxModelLen(spec);
  if (len <= max || s.allow_long_max_model_len) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "{} is beyond the model's maximum length ({}, max_position_embeddings in config.json); vLLM "
      "refuses a longer --max-model-len unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 "
      "(--allow-long-max-model-len)", what, max));
}

const char* FlagName(Setting s) {
  switch (s) {
    case Setting::kTensorParallel: return "--tensor-parallel-size";
    case Setting::kPipelineParallel: return "--pipeline-parallel-size";
    case Setting::kMaxModelLen: return "--max-model-len";
    case Setting::kGpuMemoryUtilization: return "--gpu-memory-utilization";
    case Setting::kKvCacheDtype: return "--kv-cache-dtype";
    case Setting::kMaxNumSeqs: return "--max-num-seqs";
    case Setting::kMaxNumBatchedTokens: return "--max-num-batched-tokens";
    case Setting::kEnforceEager: return "--enforce-eager";
  }
  return "";
}

// The fit knobs: each leaves a setting the user gave alone (the search checks which were
// given), and changes nothing where vLLM's default is already the value.
bool Fp8Kv(const GpuSpec&, EngineSettings* s) {
  if (s->kv_cache_dtype != "auto") return false;
  s->kv_cache_dtype = "fp8";
  return true;
}
bool Eager(const GpuSpec&, EngineSettings* s) {
  if (s->enforce_eager) return false;
  s->enforce_eager = true;
  return true;
}
// Above both of vLLM's defaults (0.9, 0.92).
constexpr double kHighUtilization = 0.95;
bool HighUtilization(const GpuSpec&, EngineSettings* s) {
  if (s->gpu_memory_utilization != 0) return false;
  s->gpu_memory_utilization = kHighUtilization;
  return true;
}
// A smaller prefill step where vLLM's default is larger.
constexpr int64_t kSmallBatch = 2048;
bool SmallBatch(const GpuSpec& gpu, EngineSettings* s) {
  if (s->max_num_batched_tokens != 0 || DefaultMaxNumBatchedTokens(gpu) <= kSmallBatch) {
    return false;
  }
  s->max_num_batched_tokens = kSmallBatch;
  return true;
}
constexpr int64_t kFewSeqs = 64;
bool FewSeqs(const GpuSpec&, EngineSettings* s) {
  if (s->max_num_seqs != 0) return false;
  s->max_num_seqs = kFewSeqs;
  return true;
}

}  // namespace

const Engine& VllmEngine() {
  static const Engine kEngine = {
      .name = "vllm",
      .title = "vLLM",
      .flags = Flags(),
      .read_flags = ReadEngineFlags,
      .check_version = CheckVersion,
      .recognizes = IsServeCommand,
      .command_forms = "`vllm serve MODEL ...` or `python -m vllm.entrypoints.openai.api_server "
                       "--model MODEL ...`",
      .command_example = "vllm serve Qwen/Qwen3-8B --max-model-len 32768",
      .read_command = ReadServeCommand,
      .prepare = Prepare,
      .model_max_len = DerivedMaxModelLen,
      .check_context = CheckContext,
      .knobs = {{Setting::kKvCacheDtype, "fp8", "a small accuracy cost", Fp8Kv},
                {Setting::kEnforceEager, "", "slower decoding", Eager},
                {Setting::kGpuMemoryUtilization, "0.95", "less headroom", HighUtilization},
                {Setting::kMaxNumBatchedTokens, "2048", "slower prefill", SmallBatch},
                {Setting::kMaxNumSeqs, "64", "fewer requests at once", FewSeqs}},
      .flag_name = FlagName,
  };
  return kEngine;
}

}  // namespace vramfit::vllm
