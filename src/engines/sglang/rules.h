// SGLang's rules for one release, resolved once from the version text: each behaviour that
// changed between the modelled releases is a named field, so no other file compares release
// numbers. Sources are python/sglang/srt/server_args.py and model_executor/ at the releases
// named beside each field; docs/engines/sglang.md lists them.
#ifndef VRAMFIT_ENGINES_SGLANG_RULES_H_
#define VRAMFIT_ENGINES_SGLANG_RULES_H_

#include <string>

#include "vramfit/status.h"

namespace vramfit::sglang {

// A release as major*10000 + minor*100 + patch (0.5.5 = 505). Only rules.cc and the tests that
// pin a release use these numbers.
inline constexpr int kOldestModelled = 400;  // v0.4.0 (Dec 2024)
inline constexpr int kNewestModelled = 505;  // v0.5.5 (model_runner_kv_cache_mixin.py)

// "0.5.5", "v0.4.6.post1" or "0.5.3rc2" -> 505 / 406 / 503; kInvalidArgument for text that is
// not a version or a release before 0.4.
Result<int> ParseRelease(const std::string& text);

struct Rules {
  int release = kNewestModelled;  // clamped to [kOldestModelled, kNewestModelled]
  std::string text = "0.5";       // the modelled release line as people write it
  // The default --mem-fraction-static (ServerArgs._handle_gpu_memory_settings, v0.5.x): the GPU
  // minus a reserve for activations (chunked prefill x 1.5 MB), CUDA graphs (max bs x 2 MB),
  // parallelism (tp x pp / 8 GiB), at least 10 GiB above 60 GiB. Before (v0.4.x
  // ServerArgs.__post_init__) a table by TP size: 0.88, 0.87 (tp >= 2), 0.85 (>= 4), 0.81
  // (>= 8), 0.79 (>= 16).
  bool fraction_from_reserve = true;
  // cuda_graph_max_bs by GPU memory and TP (v0.5.x: 8 / 24-80 / 32-160 / 256-512); v0.4.x: 160,
  // 8 on GPUs under 25 GB.
  bool graph_bs_by_gpu = true;
  // chunked_prefill_size under 25 GB in v0.4.x: 2048, else 8192; v0.5.x: 2048 / 4096 / 8192 /
  // 16384 by GPU memory (20, 35, 60, 160 GB steps).
  bool chunk_by_gpu_steps = true;
  // Hybrid linear-attention (Qwen3-Next, Qwen3.5) mamba pool: the rest split by
  // mamba_full_memory_ratio (0.9) from v0.5.x; not served before v0.5.
  bool mamba_pool = true;
};

// The rules of `release` (any integer: clamped to the modelled range).
Rules RulesFor(int release);

// The releases whose server parser is listed in full (server_flags_data.cc), oldest first:
// v0.4.10.post2, v0.5.5, v0.5.13.
inline constexpr int kFlagListReleases[] = {410, 505, 513};
inline constexpr const char* kFlagListNames[] = {"0.4.10.post2", "0.5.5", "0.5.13"};

// Which of those lists decide whether a flag exists at `release` (bit i: kFlagListReleases[i]):
// a listed release's own; between two listed ones, both (a flag is refused only when neither
// has it); before the first or after the last, that one. Without a version (`release` 0), the
// lists from the newest modelled release on.
unsigned FlagListsFor(int release);

}  // namespace vramfit::sglang

#endif  // VRAMFIT_ENGINES_SGLANG_RULES_H_
