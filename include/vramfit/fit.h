// `vramfit fit`: the settings that fit, found by planning with one engine of the engine table
// (vramfit/engine.h) over what a user can change: tensor/pipeline parallel sizes, the context,
// and the engine's knobs (for vLLM: max-num-seqs, max-num-batched-tokens,
// gpu-memory-utilization, the KV cache dtype, eager mode), and a catalog model's quantized
// variants. Exact where the answer is monotone (binary search for the longest context, as
// vLLM's own `--max-model-len auto` does), exhaustive over the small grid of the other knobs.
// Every option returned is a plan that fits; settings the engine rejects are never proposed.
#ifndef VRAMFIT_FIT_H_
#define VRAMFIT_FIT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vramfit/gpu.h"
#include "vramfit/inventory.h"
#include "vramfit/status.h"
#include "vramfit/engine.h"
#include "vramfit/plan.h"

namespace vramfit {

enum class FitGoal {
  kContext,      // the longest context at a given concurrency
  kConcurrency,  // the most concurrent requests at a given context
  kGpus,         // the fewest (then the least memory) cards that serve a context and concurrency
};

// Which of the user's settings are fixed (given on the command line) and not searched.
struct FitFixed {
  bool tensor_parallel = false, pipeline_parallel = false, max_model_len = false,
       kv_cache_dtype = false, enforce_eager = false, gpu_memory_utilization = false,
       max_num_batched_tokens = false, max_num_seqs = false;
  // Whether the setting is fixed.
  bool Has(Setting s) const;
};

struct FitRequest {
  FitGoal goal = FitGoal::kContext;
  EngineSettings base;           // the user's settings; searched knobs start from the defaults
  FitFixed fixed;
  std::vector<GpuSpec>
      cards;         // the card (context, concurrency goals) or the candidates (gpus goal)
  int max_gpus = 1;  // GPUs available (context, concurrency); most tried per card (gpus)
  int64_t min_context = 0;       // context the answer must reach (0: any for the context goal; the
                                 // model's maximum for the other goals)
  double min_concurrency = 1;    // full-length requests served at once (the engine's concurrency)
  bool no_eager = false;         // keep CUDA graphs: never propose --enforce-eager
  size_t max_options = 8;        // rows of the Pareto table
};

struct FitOption {
  std::string model;  // the model planned (a variant's catalog id when not the one asked)
  GpuSpec gpu;
  int gpus = 1;                  // cards used: tp x pp
  EngineSettings settings;       // as planned (max_model_len explicit)
  Plan plan;                     // fits
  int64_t context = 0;           // max_model_len
  double concurrency = 0;        // the engine's concurrency at that context (KV capacity)
  double served = 0;             // min(concurrency, max_num_seqs): requests served at once
  std::vector<std::string>
      given_up;  // what this row trades away, e.g. "--enforce-eager (slower decoding)"
  std::string command;           // the engine's command line (vramfit check accepts it)
};

struct FitResult {
  std::string engine;             // the engine table's name ("vllm")
  std::string engine_title;       // as people write it ("vLLM")
  bool met = false;               // some option meets the goal's constraints
  std::vector<FitOption> options; // met: the Pareto set, best first
  std::string unmet;  // when not met: what cannot be done, with the nearest thing that fits
  std::optional<FitOption> nearest;
  uint64_t plans = 0;             // plans evaluated
  // What the search added to the settings asked for, and why (a documented long-context
  // setting for a --min-context past the model's length: Engine::stretch_context).
  std::vector<std::string> notes;
};

// One model to search: the asked one first, then its catalog variants.
struct FitModel {
  std::string name;
  const Inventory* inventory = nullptr;
};

// Runs the search with `engine`. kInvalidArgument for a request that cannot be searched (no
// card, no model, bad numbers); a goal that cannot be met is a result with met == false.
Result<FitResult> Fit(const Engine& engine, const std::vector<FitModel>& models,
                      const FitRequest& request);

// For each card and each count 1..max_count: the longest context (the engine's defaults
// otherwise, one request) with the count's best layout (tensor parallel, else pipeline stages); 0
// when nothing fits, -1 when no layout of that count is valid for the model.
struct GpusTableRow {
  GpuSpec gpu;
  std::vector<int64_t> longest;   // index: count - 1
  std::vector<std::string> layout;// "tp2", "tp2 pp2", ...
};
Result<std::vector<GpusTableRow>> FitGpusTable(const Engine& engine, const Inventory& inv,
                                               const std::vector<GpuSpec>& cards, int max_count,
                                               const EngineSettings& base, uint64_t* plans);

}  // namespace vramfit

#endif  // VRAMFIT_FIT_H_
