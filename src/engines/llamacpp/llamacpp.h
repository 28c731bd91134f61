// llama.cpp (llama-server / llama-cli) over a GGUF file, stage by stage: which buffers each
// device gets (model, KV cache, recurrent state, compute), which allocation fails first, and by
// how much. The names are llama.cpp's own log lines ("CUDA0 model buffer size", "CUDA0 KV
// buffer size", "CUDA0 compute buffer size").
//
// Stages (docs/engines/llamacpp.md has each rule with its upstream file):
//   startup   the CUDA context of every device used
//   load      model buffers per device: -ngl layers counted from the last, the output layer as
//             layer n_layer, the input embedding on the CPU, overrides (-ot, --cpu-moe)
//   kv_cache  KV buffers of the attention layers on their device (-c padded to 256, SWA
//             layers at their window unless --swa-full) and the recurrent state per sequence
//   profile   the compute buffers the scheduler reserves for one ubatch (an estimate)
//   warmup    with --mmproj: the vision projector's weights and the encoder's compute buffer
//             clip's warm-up reserves (tools/mtmd/clip.cpp), loaded after the text model
//   runtime   all of it at once
// Before them, llama.cpp's --fit (fit.h; on by default since b7410) may shrink an unset
// context and move experts or layers to the CPU; the stages are those of its chosen settings.
//
// The rules are those of llama.cpp ec98e2002 (2025-12), the tree Ollama v0.24.0 vendors under
// llama/llama.cpp (src/llama-model.cpp, src/llama-context.cpp, src/llama-kv-cache*.cpp,
// src/llama-memory-*.cpp, src/llama-hparams.cpp). This is the room's own API (its tests use
// it); everything above the engines reaches it through the engine table (engine.cc).
#ifndef VRAMFIT_ENGINES_LLAMACPP_LLAMACPP_H_
#define VRAMFIT_ENGINES_LLAMACPP_LLAMACPP_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "vramfit/gpu.h"
#include "vramfit/inventory.h"
#include "vramfit/plan.h"
#include "vramfit/status.h"

namespace vramfit::llamacpp {

// The program whose defaults apply where a flag is not given.
enum class Program { kServer, kCli };

// LlamaCppOptions::n_ubatch for `-ub 0`, which llama.cpp reads as the logical batch (-b).
inline constexpr int64_t kUbatchAsBatch = -1;

// llama.cpp's own settings beyond the engine-neutral ones. The neutral fields it reads:
// max_model_len is -c (0: the model's n_ctx_train), max_num_seqs is --parallel (0: the
// program's default), max_num_batched_tokens is -b (0: 2048), kv_cache_dtype is
// --cache-type-k alone (V has its own -ctv, f16 unless given; "auto" is f16),
// pipeline_parallel_size is the number of GPUs the process sees, other_process_bytes the
// memory others hold on each.
struct LlamaCppOptions : EngineOptions {
  Program program = Program::kServer;
  int64_t n_gpu_layers = -1;          // -ngl; -1: llama_model_default_params' 999 (all)
  std::string split_mode = "layer";   // -sm layer | row | none
  std::vector<double> tensor_split;   // -ts 3,1 (empty: equal, as equal free memory gives)
  int64_t main_gpu = 0;               // -mg
  // -ot PATTERN=BUFFER, in order; the first pattern that matches a tensor name wins.
  std::vector<std::pair<std::string, std::string>> overrides;
  bool cpu_moe = false;               // --cpu-moe: every layer's experts on the CPU
  int64_t n_cpu_moe = 0;              // --n-cpu-moe N: experts of the first N layers on the CPU
  std::string cache_type_v;           // -ctv ("": f16, whatever -ctk is)
  int kv_unified = -1;                // -kvu; -1: the program's default
  bool swa_full = false;              // --swa-full
  int64_t n_ubatch = 0;               // -ub; 0: 512; kUbatchAsBatch: `-ub 0`, n_batch
  std::string flash_attn = "auto";    // -fa on | off | auto
  bool no_kv_offload = false;         // -nkvo: the KV cache stays on the CPU
  bool mmap = true;                   // --no-mmap turns it off (host RAM, not VRAM)
  // --no-mmproj-offload: the vision projector and its encoder stay on the CPU. The projector
  // file itself is EngineSettings::mmproj / mmproj_header.
  bool mmproj_offload = true;
  // --fit on|off (-fit): -1 is the build's default (on since the --fit build, rules.h); 1 or
  // 0 as given. -fitt MiB[,MiB...] is the memory --fit leaves free per device (empty: 1024
  // each; one value is every device's), -fitc the smallest context it reduces to.
  int fit = -1;
  std::vector<int64_t> fit_target_mib;
  int64_t fit_ctx = 4096;
  // The words of the user's command the plan does not read (flags not modelled or without a
  // memory effect, with their values; environment assignments), as given: the printed command
  // keeps them, so that pasting it starts the same server.
  std::vector<std::string> kept_args;
  std::vector<std::string> kept_env;
};

// The settings as one struct: the neutral part and llama.cpp's own.
struct LlamaCppSettings : EngineSettings, LlamaCppOptions {};

EngineSettings ToEngineSettings(const LlamaCppSettings& s);
LlamaCppSettings ToLlamaCppSettings(const EngineSettings& s);

// One device's buffers as llama.cpp logs them (bytes).
struct DeviceBuffers {
  uint64_t model = 0;     // "CUDA0 model buffer size"
  uint64_t kv = 0;        // "CUDA0 KV buffer size" (attention layers)
  uint64_t state = 0;     // "CUDA0 RS buffer size" (recurrent layers)
  uint64_t compute = 0;   // "CUDA0 compute buffer size" (estimate)
  uint64_t projector = 0; // the mmproj's weights ("load_hparams: model size")
  uint64_t encoder = 0;   // clip's "CUDA0 compute buffer size" at warm-up (estimate)
  int layers = 0;         // repeating layers on this device
  bool output = false;    // the output layer is here
  uint64_t total() const { return model + kv + state + compute + projector + encoder; }
};

// A llama.cpp plan: the neutral plan plus the buffers of each GPU and of the host.
struct LlamaCppPlan : Plan {
  std::vector<DeviceBuffers> devices;  // one per GPU
  DeviceBuffers host;                  // CPU buffers (model: CPU_Mapped with mmap)
  int64_t n_ctx = 0;                   // after padding
  int64_t n_seq_max = 1;
  uint64_t kv_cells = 0;               // cells of a full-attention layer (all streams)
  uint64_t swa_cells = 0;              // cells of a sliding layer (0: none)
  // With a vision projector: the tokens the largest image becomes (per tile for tiled
  // projectors) and how many such images one request's context holds; 0 without one.
  int64_t image_tokens = 0;
  int64_t images_per_request = 0;
};

// The tokens -c is padded to (llama-context.cpp: GGML_PAD(n_ctx, 256)).
inline constexpr int64_t kCtxPad = 256;
// The CUDA context and cuBLAS workspace of one device, which no llama.cpp buffer line shows.
inline constexpr uint64_t kCudaContextBytes = 512ull << 20;

// Plans `inv` (a GGUF inventory) on `gpu` (pipeline_parallel_size of them alike).
// kInvalidArgument for settings llama.cpp refuses (a bad --main-gpu, a cache type it lacks).
Result<LlamaCppPlan> PlanLlamaCpp(const Inventory& inv, const GpuSpec& gpu,
                                  const LlamaCppSettings& settings);

// Bytes of one row of `n` elements of a cache type (ggml_row_size): f32, f16, bf16, q8_0,
// q4_0, q4_1, iq4_nl, q5_0, q5_1. kInvalidArgument names the flag for another type.
Result<uint64_t> CacheRowBytes(const std::string& type, uint64_t n, const char* flag);

}  // namespace vramfit::llamacpp

#endif  // VRAMFIT_ENGINES_LLAMACPP_LLAMACPP_H_
