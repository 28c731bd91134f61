// Ollama over a GGUF file: how many layers its memory estimate puts on the GPU(s), what each
// GPU is charged (the layers' weights and KV cache, the compute graph, its fixed reserves) and
// what stays on the CPU. Ollama never runs out of GPU memory by its own estimate: it offloads
// fewer layers and runs the rest on the CPU, much slower. The plan calls that a failure (the
// model does not fit the GPUs) and a forced `num_gpu` beyond the estimate a load failure.
//
// The rules are those of Ollama v0.12.10 (2025-11-05), the last release whose llama runner
// places layers by the static estimate (llm/memory.go estimateGPULayers, fs/ggml/ggml.go
// GraphSize; v0.12.11 removed them for the measured layout the Ollama engine uses). Models that
// v0.12.10 runs on its own engine (gemma3, qwen3, gpt-oss, ...: fs/ggml OllamaEngineRequired)
// are placed by that measured layout instead; the plan applies the estimate and says so.
// docs/engines/ollama.md has each rule with its file.
#ifndef VRAMFIT_ENGINES_OLLAMA_OLLAMA_H_
#define VRAMFIT_ENGINES_OLLAMA_OLLAMA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "vramfit/gpu.h"
#include "vramfit/inventory.h"
#include "vramfit/plan.h"
#include "vramfit/status.h"

namespace vramfit::ollama {

// Ollama's own settings beyond the engine-neutral ones. The neutral fields it reads:
// max_model_len is num_ctx (0: OLLAMA_CONTEXT_LENGTH's default, 4096), max_num_seqs is
// OLLAMA_NUM_PARALLEL (0: 1), kv_cache_dtype is OLLAMA_KV_CACHE_TYPE ("auto": f16),
// tensor x pipeline parallel sizes the GPUs the server sees, other_process_bytes the memory
// others hold on each (Ollama sees the rest as free).
struct OllamaOptions : EngineOptions {
  int64_t num_gpu = -1;           // PARAMETER num_gpu; -1: the estimate decides
  int64_t num_batch = 0;          // PARAMETER num_batch; 0: 512
  std::string flash_attention;    // OLLAMA_FLASH_ATTENTION: "" (the model's default), 1, 0
  uint64_t gpu_overhead = 0;      // OLLAMA_GPU_OVERHEAD: bytes set aside on each GPU
  bool sched_spread = false;      // OLLAMA_SCHED_SPREAD: use every GPU, not the fewest
};

struct OllamaSettings : EngineSettings, OllamaOptions {};

EngineSettings ToEngineSettings(const OllamaSettings& s);
OllamaSettings ToOllamaSettings(const EngineSettings& s);

// What Ollama's estimate reads of a GGUF file (fs/ggml/ggml.go: KV() keys and GroupLayers()).
struct ModelFacts {
  std::string arch;                   // general.architecture
  std::vector<uint64_t> layer_bytes;  // blk.i: the sum of its tensors; size() is block_count
  uint64_t output_bytes = 0;          // output_norm + output (token_embd when untied)
  uint64_t embedding = 0, vocab = 0, context_length = 0;
  std::vector<uint64_t> heads, heads_kv;  // per layer; 0 for a recurrent layer
  uint64_t head_k = 0, head_v = 0;        // attention.key_length / value_length
  uint64_t sliding_window = 0;
  uint64_t ssm_conv = 0, ssm_inner = 0, ssm_state = 0, ssm_groups = 0;
  uint64_t ffn_gate_exps_bytes = 0;   // blk.0's ffn_gate_exps (mixtral 8x22b graph rule)
  uint64_t feed_forward_length = 0;
  bool embedding_model = false;       // ARCH.pooling_type given: no flash attention
};

ModelFacts FactsOf(const Inventory& inv);

// fs/ggml/ggml.go GraphSize(context x parallel, batch, ...): bytes of each layer's KV cache
// and the compute graph when every layer is on the GPU (full) or some are not (partial).
struct GraphSize {
  std::vector<uint64_t> kv;
  uint64_t partial = 0, full = 0;
};
GraphSize EstimateGraph(const ModelFacts& f, uint64_t context, uint64_t batch, int64_t parallel,
                        const std::string& kv_type, bool flash);

// Bytes per KV element of a cache type (ggml.go kvCacheBytesPerElement): q8_0 1, q4_0 0.5,
// f32 4, anything else 2.
double KvBytesPerElement(const std::string& type);

// The reserve Ollama keeps on every GPU besides the model (ml/device.go MinimumMemory: 457 MiB
// for CUDA and ROCm, 512 MiB for Metal).
inline constexpr uint64_t kMinimumMemory = 457ull << 20;

// llm/memory.go estimateGPULayers over GPUs with `free` bytes each (in the order Ollama tries
// them: most free first).
struct EstimateInput {
  std::vector<uint64_t> free;
  uint64_t overhead = 0;      // OLLAMA_GPU_OVERHEAD
  int64_t num_gpu = -1;       // the layers asked for; -1: as many as fit
  uint64_t projector = 0;     // a vision projector's weights, on the first GPU
};
struct MemoryEstimate {
  int64_t layers = 0;                  // layers.offload (the output layer counts as one)
  int64_t layers_model = 0;            // block_count + 1
  std::vector<int64_t> split;          // layers per GPU
  std::vector<uint64_t> allocations;   // memory.required.allocations
  uint64_t vram = 0;                   // memory.required.partial (0 when no layer fits)
  uint64_t total = 0;                  // memory.required.full
  uint64_t kv = 0;                     // memory.required.kv
  uint64_t weights_repeating = 0, weights_output = 0;
  uint64_t graph_full = 0, graph_partial = 0, graph = 0;
  bool fully_loaded = false;
};
MemoryEstimate EstimateGpuLayers(const ModelFacts& f, const GraphSize& g,
                                 const EstimateInput& in);

// An Ollama plan: the neutral plan plus the estimate behind it.
struct OllamaPlan : Plan {
  MemoryEstimate estimate;
  int64_t num_ctx = 0, num_parallel = 1, num_batch = 512;
  int64_t gpus_used = 0;               // the GPUs the scheduler picked
  int64_t layers_on_gpu = 0;           // what the runner gets (num_gpu, else the estimate)
  bool flash = false;
  std::string kv_type;                 // "f16", "q8_0", "q4_0"
  uint64_t host_bytes = 0;             // what stays in system memory
};

// Plans `inv` (a GGUF inventory) on `gpu` (tensor x pipeline parallel of them alike).
// kInvalidArgument for settings Ollama refuses.
Result<OllamaPlan> PlanOllama(const Inventory& inv, const GpuSpec& gpu, const OllamaSettings& s);

}  // namespace vramfit::ollama

#endif  // VRAMFIT_ENGINES_OLLAMA_OLLAMA_H_
