// SGLang's defaults, in one place: the context length it derives from config.json, and the
// server arguments it fills by GPU memory (chunked_prefill_size, cuda_graph_max_bs,
// mem_fraction_static), the CUDA-graph batch sizes and max_running_requests. The planner, the
// flag reader and the fit knobs all read them from here.
#ifndef VRAMFIT_ENGINES_SGLANG_DEFAULTS_H_
#define VRAMFIT_ENGINES_SGLANG_DEFAULTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "engines/sglang/rules.h"
#include "engines/sglang/sglang.h"
#include "vramfit/gpu.h"
#include "vramfit/model.h"

namespace vramfit::sglang {

// The context SGLang uses when config.json names none (hf_transformers_utils.py
// get_context_length).
inline constexpr int64_t kFallbackContextLen = 2048;

// context_len from the config (get_context_length): max_position_embeddings times the
// rope_scaling factor, except for llama3 scaling and configs that give an
// original_max_position_embeddings (factor 1); kFallbackContextLen without one.
int64_t DerivedContextLen(const ModelSpec& spec);

// SGLang's error for --context-length beyond the derived length without
// SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 (configs/model_config.py).
std::string ContextLenError(int64_t requested, int64_t derived);

// The GPU memory SGLang keys its defaults on, in MiB (utils get_device_memory_capacity: the
// nvidia-smi total of the smallest GPU).
double GpuMemMib(const GpuSpec& gpu);

// Defaults by GPU memory (ServerArgs._handle_gpu_memory_settings, v0.5.5).
int64_t DefaultChunkedPrefillSize(const Rules& rules, const GpuSpec& gpu);
int64_t DefaultCudaGraphMaxBs(const Rules& rules, const GpuSpec& gpu, int64_t tp);

// The batch sizes captured as decode graphs for cuda_graph_max_bs
// (ServerArgs._generate_cuda_graph_batch_sizes): 1, 2, 4, 8, 12, then steps of 8 to 256, of 16
// to 512, of 32 beyond; with speculative decoding 1-8, steps of 2 to 32, of 4 to 64, of 8 to
// 256, of 16 beyond. `rows`, the request table's (req_to_token_pool.size, that is
// --max-running-requests), caps them when given: a list reaching past it gains rows - 1 and
// rows, then drops every size above rows (get_batch_sizes_to_capture, cuda_graph_runner.py,
// v0.4.x-v0.5.x; later releases add rows alone, so this is the safe side by one graph).
std::vector<int64_t> CaptureBatchSizes(int64_t max_bs, bool speculative, int64_t rows = 0);

// The default --mem-fraction-static for settings whose chunk, graph size and parallel sizes are
// resolved (see Rules::fraction_from_reserve), lowered for a vision tower
// (adjust_mem_fraction_for_vlm: x 0.95 x a factor of the tower's size, 0.8 to 1.05).
double DefaultMemFractionStatic(const Rules& rules, const GpuSpec& gpu, const ModelSpec& spec,
                                const SglangSettings& s);

// max_running_requests when not given (init_memory: the request table's rows,
// clamp(tokens / context_len x 512, 2048, 4096)) and what the scheduler then runs at once
// (tp_worker.py: min(tokens / 2, rows) when not given).
int64_t DefaultRequestRows(int64_t tokens, int64_t context_len);
int64_t RunningRequests(const SglangSettings& s, int64_t tokens, int64_t rows);

// Fills every setting left at 0 as SGLang does, except what depends on the token pool.
void ApplyDefaults(const Rules& rules, const GpuSpec& gpu, const ModelSpec& spec,
                   SglangSettings* s);

}  // namespace vramfit::sglang

#endif  // VRAMFIT_ENGINES_SGLANG_DEFAULTS_H_
