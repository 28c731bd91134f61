// The engine-neutral plan: what one engine start-up does with GPU memory, stage by stage, on
// each GPU, and whether it fits. Every engine (vramfit/engine.h) fills the same Plan; the fit
// search, the advice, the reports and the doctor read only this type.
//
// Settings are likewise split: EngineSettings holds the knobs every engine has in some form
// (parallel sizes, context length, memory fraction, KV dtype, batch limits, graphs) and an
// opaque engine-owned part (EngineOptions) that only its engine reads.
//
// Example:
//   auto plan = model->Plan(*vramfit::FindGpu("4090"), settings);
//   if (plan.ok() && !plan->fits) puts(vramfit::StageName(*plan->failure_stage));
#ifndef VRAMFIT_PLAN_H_
#define VRAMFIT_PLAN_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vramfit/gpu.h"

namespace vramfit {

struct Inventory;  // vramfit/inventory.h
struct GgufFile;   // vramfit/gguf.h

// The stages of a start-up, in the order engines run them.
enum class Stage { kStartup, kLoad, kProfile, kKvCache, kCudaGraph, kWarmup, kRuntime };
inline constexpr int kStageCount = 7;

// "startup", "load", "profile", "kv_cache", "cudagraph", "warmup", "runtime" (the JSON names).
const char* StageName(Stage s);
// The stage of a JSON name; nullopt for any other text.
std::optional<Stage> StageFromName(std::string_view name);

// The engine-specific part of the settings: each engine derives its own and reads it back.
struct EngineOptions {
  virtual ~EngineOptions() = default;
};

// The user's settings; 0 / empty means "the engine's default", resolved by the engine.
struct EngineSettings {
  std::string version = "";              // engine release "0.10" ...; empty: the newest modelled
  int64_t tensor_parallel_size = 1;
  int64_t pipeline_parallel_size = 1;
  int64_t data_parallel_size = 1;
  bool enable_expert_parallel = false;
  int64_t max_model_len = 0;             // 0: the model's; -1: auto (the longest that fits)
  double gpu_memory_utilization = 0;     // 0: the engine's default fraction
  std::string kv_cache_dtype = "auto";
  int64_t max_num_seqs = 0;              // 0: the engine's default
  int64_t max_num_batched_tokens = 0;    // 0: the engine's default
  bool enforce_eager = false;            // no CUDA graphs
  std::string quantization;              // force a quantization method ("" = the checkpoint's)
  bool allow_long_max_model_len = false; // accept a context beyond the model's maximum
  uint64_t other_process_bytes = 0;      // memory other processes hold on each GPU at start
  // Measured values that replace the model's estimates (the doctor calibrates a plan on the
  // numbers a log printed); 0: estimate.
  uint64_t measured_activation_bytes = 0;
  uint64_t measured_non_torch_bytes = 0;
  // The free memory the engine measured on one GPU before it loaded the weights and after (an
  // engine that sizes its KV cache from them, as SGLang's profile_max_num_token does, uses these
  // instead of its model of the CUDA context, NCCL and the load); 0: estimate.
  uint64_t measured_free_before_load_bytes = 0;
  uint64_t measured_free_after_load_bytes = 0;
  // A separate draft model for speculative decoding (vLLM's --speculative-config "model"), as
  // the user named it, and its inventory once the caller has read it: engines never open files,
  // so the command that reads the flags reads the draft too. Null: not read, and the plan names
  // the draft's weights and KV cache as not modelled.
  std::string draft_model;
  std::shared_ptr<const Inventory> draft_inventory;
  // A vision projector file (llama.cpp's --mmproj) as the user named it, and its header once
  // the caller has read it, as for the draft. Null: not read; the plan names the vision
  // encoder's weights and compute buffer as not modelled.
  std::string mmproj;
  std::shared_ptr<const GgufFile> mmproj_header;
  // Mixed cards: the card of each pipeline stage, or of each rank in rank order (stage-major),
  // as the user named them (`--gpu 5070ti,5090`); empty: every rank is the GPU planned for.
  // Engines whose table entry sets Engine::plans_stage_gpus read it.
  std::vector<GpuSpec> stage_gpus;
  // The engine's own settings (null: its defaults). Shared, never modified after creation.
  std::shared_ptr<const EngineOptions> engine_options;
};

// One number of the plan with the formula that made it (for --explain).
struct Explained {
  std::string name;
  uint64_t bytes = 0;
  std::string formula;
};

// One GPU of the plan (ranks of one pipeline stage are alike; the largest stage is planned).
struct GpuPlan {
  uint64_t total_bytes = 0;
  uint64_t budget_bytes = 0;            // what the engine may use (total x its memory fraction)
  uint64_t cuda_context_bytes = 0;
  uint64_t weights_bytes = 0;
  // Adapter buffers made with the weights, at load (vLLM's --enable-lora slots: max_loras x
  // rank stacks per wrapped module); 0 without adapters. Not part of weights_bytes.
  uint64_t lora_bytes = 0;
  uint64_t load_peak_bytes = 0;
  uint64_t activation_peak_bytes = 0;
  uint64_t non_torch_bytes = 0;
  uint64_t cudagraph_bytes = 0;
  uint64_t kv_cache_bytes = 0;          // memory for the KV cache (and per-sequence state)
  // The most the framework's allocator holds at any stage (torch.cuda.max_memory_allocated),
  // and what nvidia-smi shows for the process then (with the CUDA context and non-torch memory).
  uint64_t peak_bytes = 0;
  uint64_t device_used_bytes = 0;
  std::vector<Explained> explain;
};

// One row of the stage table: what the stage holds, in the engine's words.
struct StageLine {
  Stage stage = Stage::kStartup;
  std::string detail;                   // "weights 14.19 GiB, load peak 14.50 GiB"
};

// One pipeline stage of a plan: its decoder layers, its card and one of its ranks.
struct PipelineStage {
  int64_t first_layer = 0;              // decoder layers [first_layer, first_layer + layers)
  int64_t layers = 0;
  GpuSpec gpu;
  GpuPlan per_gpu;                      // one rank of the stage
  uint64_t kv_cache_tokens = 0;         // what the stage's own KV memory would hold alone
  uint64_t kv_needed_bytes = 0;         // one max_model_len request in the stage's layers
  std::optional<Stage> failure_stage;   // where the stage's own start-up fails (nullopt: never)
};

struct Plan {
  std::string engine;                   // "vllm": the engine table's name
  std::string engine_title;             // "vLLM": as people write it
  std::string modelled_version;         // the release whose rules were applied
  bool fits = false;
  std::optional<Stage> failure_stage;   // the first stage that fails
  std::string failure_message;          // the engine's own error text where it has one
  // When the engine's release refuses the model or settings whatever the memory (an
  // architecture the release predates, a config key it cannot read): what refuses and what to
  // change, e.g. "vLLM 0.4.3 cannot load this model ...; use vLLM 0.5.3.post1 or newer". No
  // card or knob fixes it, so the reports point here rather than at larger GPUs. "" otherwise.
  std::string refusal;
  std::vector<std::string> notes;       // defaults applied, version mapping, log lines implied
  // Settings given that change nothing in this plan (a flag the engine's release does not act
  // on, as modelled), each with why: the CLI names them on stderr rather than drop them.
  std::vector<std::string> without_effect;
  EngineSettings resolved;              // settings after the engine's defaults
  GpuSpec gpu;
  int64_t gpu_count = 1;
  std::vector<GpuPlan> gpus;
  std::vector<StageLine> stages;        // the engine's stages in start-up order
  uint64_t kv_cache_tokens = 0;         // tokens the KV cache holds, as the engine prints it
  double max_concurrency = 0;           // full-length requests the KV cache holds at once
  int64_t max_model_len = 0;            // used (the fitted value under auto)
  int64_t estimated_max_model_len = 0;  // the engine's estimate when the context does not fit
  uint64_t kv_needed_bytes = 0;         // for one max_model_len request
  int64_t kv_block_size = 0;            // tokens per KV block (0: not paged)
  uint64_t kv_groups = 0;               // KV cache groups (paged engines)
  // Pipeline parallel: every stage, in order (empty without pipeline stages), and the stage whose
  // KV memory holds the fewest blocks, which sets the pool every stage gets (-1: none). `gpu` and
  // `gpus` are then the stage that decides the verdict: the failing one, else the binding one.
  std::vector<PipelineStage> pipeline_stages;
  int64_t binding_stage = -1;
  // How sure the verdict is. margin_bytes: the headroom of the tightest check that passed (the
  // KV memory one max-length request leaves, the device memory left after graph capture, the
  // free memory left at load), negative by how much the failing check falls short.
  // uncertainty_bytes: the spread of the plan's measured terms on this start-up (the engine's
  // validation errors, docs/validation.md). A margin inside it is a low-confidence verdict.
  // not_counted: memory the run would hold that the plan leaves out because its input could not
  // be read (a speculative draft model, a vision projector), each in words. A plan with any is a
  // low-confidence verdict whatever its margin: that margin must also hold what is left out.
  int64_t margin_bytes = 0;
  uint64_t uncertainty_bytes = 0;
  std::vector<std::string> not_counted;
  bool low_confidence() const {
    return !not_counted.empty() ||
           static_cast<uint64_t>(margin_bytes < 0 ? -margin_bytes : margin_bytes) <
               uncertainty_bytes;
  }
  std::string command;                  // the equivalent engine command line
  // A what-if quantization's label ("AWQ 4-bit g128") when the model planned is the
  // checkpoint a quantizer would write (InspectOptions::as_quantized); "" otherwise.
  std::string what_if;
};

}  // namespace vramfit

#endif  // VRAMFIT_PLAN_H_
