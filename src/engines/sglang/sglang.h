// SGLang, stage by stage: what one `python -m sglang.launch_server` start-up does with GPU
// memory on each rank, which stage fails first, and by how much.
//
// Stages in SGLang's order (python/sglang/srt/model_executor/model_runner.py and
// model_runner_kv_cache_mixin.py, v0.5.5):
//   startup   init_torch_distributed measures the free memory F (min over ranks), after the
//             CUDA context and, with TP > 1, NCCL and the custom all-reduce buffers
//   load      the weights of one rank (and online FP8's 16-bit copy) must fit in F
//   kv_cache  profile_max_num_token: rest = free after load - F x (1 - mem_fraction_static);
//             tokens = rest / cell (bytes of K and V per token over the rank's layers; MLA: the
//             latent); rest <= 0 raises "Not enough memory. Please try to increase
//             --mem-fraction-static"
//   cudagraph the request-to-token table, the attention workspace and the decode graphs come
//             out of what the fraction left: F x (1 - mem_fraction_static)
//   runtime   the largest prefill chunk's activations must fit in what is left after graphs
// Terms SGLang measures at run time (load overhead, graph pool, activations) are modelled from
// their drivers with the constants in plan.cc, explained in docs/engines/sglang.md.
#ifndef VRAMFIT_ENGINES_SGLANG_SGLANG_H_
#define VRAMFIT_ENGINES_SGLANG_SGLANG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "vramfit/gpu.h"
#include "vramfit/inventory.h"
#include "vramfit/plan.h"
#include "vramfit/status.h"

namespace vramfit::sglang {

// The largest image SGLang's Qwen-VL processor resizes to before the checkpoint's processor
// sees it (multimodal/processors/qwen_vl.py MAX_PIXELS, v0.5.5): SGLANG_IMAGE_MAX_PIXELS,
// default 16384 x 28 x 28 (environ.py). The smaller of it and the processor's max_pixels holds.
inline constexpr int64_t kImageMaxPixels = 16384 * 28 * 28;

// SGLang's own settings beyond the engine-neutral ones (0 / empty: SGLang's default). The
// neutral ones map as: gpu_memory_utilization = --mem-fraction-static, max_model_len =
// --context-length, max_num_seqs = --max-running-requests, max_num_batched_tokens =
// --chunked-prefill-size, enforce_eager = --disable-cuda-graph.
struct SglangOptions : EngineOptions {
  int64_t max_total_tokens = 0;        // --max-total-tokens: caps the token pool
  int64_t cuda_graph_max_bs = 0;       // --cuda-graph-max-bs
  int64_t page_size = 0;               // --page-size (0: 1)
  bool enable_dp_attention = false;    // --enable-dp-attention: attention TP = tp / dp
  int64_t ep_size = 1;                 // --ep-size
  std::string dtype = "auto";          // --dtype
  std::string json_model_override_args;  // as given
  // What the override sets that the plan reads (0: not set).
  int64_t override_context_len = 0;    // max_position_embeddings
  // --speculative-algorithm (EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM; "" none) and its
  // --speculative-num-draft-tokens.
  std::string speculative_algorithm;
  int64_t speculative_num_draft_tokens = 0;
  double mamba_full_memory_ratio = 0;  // --mamba-full-memory-ratio (0: 0.9)
  double swa_full_tokens_ratio = 0;    // --swa-full-tokens-ratio (0: 0.8)
  bool disable_radix_cache = false;    // --disable-radix-cache
  // --cpu-offload-gb: GiB of each rank's weights kept in host memory (0: none).
  double cpu_offload_gb = 0;
  // Images through a Qwen-VL tower: the images of one request (--limit-mm-data-per-request's
  // "image"; -1: not given, one is planned), SGLANG_IMAGE_MAX_PIXELS (0: its default) and
  // --mm-attention-backend ("": the GPU's default).
  int64_t images_per_request = -1;
  int64_t image_max_pixels = 0;
  std::string mm_attention_backend;
  // The words of the user's command the plan does not read (flags not modelled or without a
  // memory effect, with their values; environment assignments likewise), as given: the printed
  // command keeps them, so that pasting it starts the same server.
  std::vector<std::string> kept_args;
  std::vector<std::string> kept_env;
};

struct SglangSettings : EngineSettings, SglangOptions {};

// The neutral form (SGLang's own part carried as engine_options) and back.
EngineSettings ToEngineSettings(const SglangSettings& s);
SglangSettings ToSglangSettings(const EngineSettings& s);

// Plans `inv` on `gpu` with `settings`. Errors are for impossible settings (kInvalidArgument
// with SGLang's message where it has one); a start-up that would fail is a plan with
// fits == false.
Result<Plan> PlanSglang(const Inventory& inv, const GpuSpec& gpu, const SglangSettings& settings);

// The token pool of a start-up whose free memory before the load (`free_before_load`, F) and
// after it (`free_after_load`) are known, as profile_max_num_token computes it: for scoring
// published logs with the formula alone, and for the doctor's calibration.
struct TokenPool {
  int64_t tokens = 0;            // max_total_num_tokens (page-aligned, capped)
  uint64_t cell_bytes = 0;       // K and V (or the MLA latent) of one token over the layers
  uint64_t kv_bytes = 0;         // tokens x cell
  uint64_t mamba_bytes = 0;      // linear-attention state pool (hybrid models)
  int64_t mamba_slots = 0;       // its sequences (max_mamba_cache_size)
  int64_t swa_tokens = 0;        // hybrid sliding-window models: the sliding layers' pool
};
Result<TokenPool> ProfileTokenPool(const ModelSpec& spec, const SglangSettings& s,
                                   double free_before_load_gib, double free_after_load_gib);

}  // namespace vramfit::sglang

#endif  // VRAMFIT_ENGINES_SGLANG_SGLANG_H_
