// The Ollama plan (see ollama.h): settings resolved as Ollama v0.12.10 resolves them, the
// scheduler's choice of GPUs, the estimate's layer placement, and the verdict. Each rule names
// the Ollama file it follows.
#include <fmt/format.h>

#include <algorithm>

#include "core/text.h"
#include "core/units.h"
#include "engines/ollama/command.h"
#include "engines/ollama/ollama.h"

namespace vramfit::ollama {
namespace {

using core::FormatBytes;
using core::kMiB;

// api/types.go DefaultOptions: num_batch 512; envconfig OLLAMA_CONTEXT_LENGTH: 4096.
constexpr int64_t kDefaultNumCtx = 4096;
constexpr int64_t kDefaultNumBatch = 512;

// fs/ggml/ggml.go FlashAttention: the architectures that turn it on unless
// OLLAMA_FLASH_ATTENTION says otherwise.
bool FlashByDefault(const std::string& arch) {
  static const char* kArch[] = {"gemma3", "gptoss", "gpt-oss", "qwen3", "qwen3moe", "qwen3vl",
                                "qwen3vlmoe"};
  return std::find(std::begin(kArch), std::end(kArch), arch) != std::end(kArch);
}

// fs/ggml/ggml.go OllamaEngineRequired: models v0.12.10 runs on its own engine, whose layout
// is measured, not estimated.
bool OllamaEngine(const std::string& arch) {
  static const char* kArch[] = {"gemma3", "gemma3n", "gptoss", "gpt-oss", "llama4", "mistral3",
                                "mllama", "qwen25vl", "qwen3", "qwen3moe", "qwen3vl",
                                "qwen3vlmoe"};
  return std::find(std::begin(kArch), std::end(kArch), arch) != std::end(kArch);
}

// envconfig BoolWithDefault: strconv.ParseBool, any other text reads as true.
bool ReadEnvBool(const std::string& v) {
  return !(v == "0" || v == "f" || v == "F" || v == "false" || v == "FALSE" || v == "False");
}

struct Resolved {
  int64_t num_ctx = kDefaultNumCtx, num_batch = kDefaultNumBatch, parallel = 1, gpus = 1;
  bool flash = false;
  std::string kv_type = "f16";
  std::vector<std::string> notes;
};

Result<Resolved> Resolve(const ModelFacts& f, const GpuSpec& gpu, const OllamaSettings& s) {
  Resolved r;
  if (!s.version.empty() && s.version != "0.12.10" && s.version != "0.12") {
    return Status::InvalidArgument(fmt::format(
        "Ollama {}: the rules modelled are v0.12.10's (the last release that places layers by "
        "its static estimate); give --engine ollama or ollama@0.12.10",
        core::Printable(s.version)));
  }
  r.gpus = std::max<int64_t>(1, s.tensor_parallel_size) *
           std::max<int64_t>(1, s.pipeline_parallel_size);
  if (r.gpus > 64) return Status::InvalidArgument("Ollama: at most 64 GPUs are modelled");
  // server/sched.go GetRunner: num_ctx at least 4; llm/server.go NewLlamaServer: at most the
  // model's context_length (with a warning), and num_batch at most num_ctx.
  r.num_ctx = s.max_model_len > 0 ? s.max_model_len : kDefaultNumCtx;
  r.num_ctx = std::max<int64_t>(r.num_ctx, 4);
  if (f.context_length > 0 && static_cast<uint64_t>(r.num_ctx) > f.context_length) {
    r.notes.push_back(fmt::format("num_ctx {} is past the model's context_length: Ollama uses {}",
                                  r.num_ctx, f.context_length));
    r.num_ctx = static_cast<int64_t>(f.context_length);
  }
  r.num_batch = std::min(s.num_batch > 0 ? s.num_batch : kDefaultNumBatch, r.num_ctx);
  // server/sched.go load: OLLAMA_NUM_PARALLEL (default 1), at least 1.
  r.parallel = std::max<int64_t>(s.max_num_seqs, 1);
  if (r.parallel > 1024) return Status::InvalidArgument("OLLAMA_NUM_PARALLEL: at most 1024");
  // The estimate's products stay inside 64 bits for caches of up to 2^32 cells.
  if (r.num_ctx * r.parallel > (int64_t{1} << 32)) {
    return Status::InvalidArgument(fmt::format(
        "num_ctx {} x OLLAMA_NUM_PARALLEL {}: more than 2^32 cache cells are not modelled",
        r.num_ctx, r.parallel));
  }
  // llm/server.go NewLlamaServer: flash attention from OLLAMA_FLASH_ATTENTION (default: the
  // architecture's), off on a GPU without the kernel (ml/device.go: CUDA compute 7.2) or a
  // model whose K and V head sizes differ; a KV cache type only with flash attention (else
  // f16 with a warning), and only f16, q8_0 or q4_0 (fs/ggml SupportsKVCacheType).
  r.flash = s.flash_attention.empty() ? FlashByDefault(f.arch) : ReadEnvBool(s.flash_attention);
  if (r.flash && gpu.compute_capability == "7.2") {
    r.flash = false;
    r.notes.push_back("flash attention enabled but not supported by gpu (compute 7.2)");
  }
  if (r.flash && (f.head_k == 0 || f.head_k != f.head_v || f.arch == "gemma2")) {
    r.flash = false;
    r.notes.push_back("flash attention enabled but not supported by model");
  }
  std::string kv = s.kv_cache_dtype == "auto" ? "" : s.kv_cache_dtype;
  std::transform(kv.begin(), kv.end(), kv.begin(), ::tolower);
  if (!kv.empty() && kv != "f16" && kv != "q8_0" && kv != "q4_0") {
    // Ollama itself falls back to f16 with a warning; a plan refuses the typo instead.
    return Status::InvalidArgument(fmt::format(
        "OLLAMA_KV_CACHE_TYPE {}: Ollama reads f16, q8_0 or q4_0 (any other value runs as f16 "
        "with the warning \"kv cache type not supported by model\")", core::Printable(kv)));
  }
  if (r.flash) {
    r.kv_type = kv.empty() ? "f16" : kv;
  } else if (!kv.empty() && kv != "f16") {
    r.notes.push_back(fmt::format("quantized kv cache requested but flash attention disabled: "
                                  "{} ignored (f16 used; set OLLAMA_FLASH_ATTENTION=1)",
                                  core::Printable(kv)));
  }
  return r;
}

MemoryEstimate Estimate(const ModelFacts& f, const Resolved& r, const OllamaSettings& s,
                        const std::vector<uint64_t>& free) {
  const GraphSize g = EstimateGraph(f, static_cast<uint64_t>(r.num_ctx),
                                    static_cast<uint64_t>(r.num_batch), r.parallel, r.kv_type,
                                    r.flash);
  EstimateInput in;
  in.free = free;
  in.overhead = s.gpu_overhead;
  in.num_gpu = s.num_gpu;
  return EstimateGpuLayers(f, g, in);
}

// llm/memory.go predictServerFit: every layer (or num_gpu of them) placed.
bool FullFit(const ModelFacts& f, const MemoryEstimate& e, int64_t num_gpu) {
  const int64_t all = static_cast<int64_t>(f.layer_bytes.size()) + 1;
  if (num_gpu < 0) return e.layers > 0 && e.layers >= all;
  return e.layers > 0 && e.layers >= num_gpu;
}

}  // namespace

Result<OllamaPlan> PlanOllama(const Inventory& inv, const GpuSpec& gpu, const OllamaSettings& s) {
  const ModelFacts f = FactsOf(inv);
  if (f.layer_bytes.empty()) return Status::InvalidArgument("the GGUF file has no layers to plan");
  auto resolved = Resolve(f, gpu, s);
  if (!resolved.ok()) return resolved.status();
  Resolved& r = *resolved;
  OllamaPlan p;
  p.engine = "ollama";
  p.engine_title = "Ollama";
  p.modelled_version = "0.12.10";
  p.gpu = gpu;
  p.gpu_count = r.gpus;
  p.num_ctx = r.num_ctx;
  p.num_batch = r.num_batch;
  p.num_parallel = r.parallel;
  p.flash = r.flash;
  p.kv_type = r.kv_type;
  const int64_t blocks = static_cast<int64_t>(f.layer_bytes.size());
  // What Ollama sees as free on each GPU (CUDA's free memory: the card less other processes).
  const uint64_t other = s.other_process_bytes;
  const uint64_t free_each = gpu.total_bytes > other ? gpu.total_bytes - other : 0;
  // server/sched.go + llm/memory.go pickBestFullFitByLibrary: the fewest GPUs (most free
  // first) on which the whole model fits, all of them under OLLAMA_SCHED_SPREAD; failing a full
  // fit, every GPU (pickBestPartialFitByLibrary, one library). num_gpu 0: the CPU only.
  int64_t used = r.gpus;
  if (s.num_gpu != 0 && !s.sched_spread) {
    for (int64_t k = 1; k <= r.gpus; ++k) {
      const MemoryEstimate e = Estimate(f, r, s, std::vector<uint64_t>(k, free_each));
      if (FullFit(f, e, s.num_gpu)) {
        used = k;
        break;
      }
    }
  }
  MemoryEstimate e = Estimate(f, r, s, std::vector<uint64_t>(used, free_each));
  // llm/server.go llamaServer.Load: num_gpu 0 or no layer placed: the CPU; num_gpu -1 takes
  // the estimate's layers; a num_gpu the user set goes to the runner as given.
  int64_t on_gpu = 0;
  if (s.num_gpu != 0 && e.layers > 0) on_gpu = s.num_gpu < 0 ? e.layers : s.num_gpu;
  on_gpu = std::min(on_gpu, blocks + 1);
  p.estimate = e;
  p.gpus_used = on_gpu > 0 ? used : 0;
  p.layers_on_gpu = on_gpu;
  // The runner's bytes per GPU: the estimate's allocation, or for a num_gpu past the estimate
  // its layers charged at the estimate's rates (createGPULayers splits them in the estimate's
  // proportions).
  std::vector<uint64_t> weights(static_cast<size_t>(r.gpus), 0), kv(weights), graph(weights),
      charged(weights);
  const GraphSize g = EstimateGraph(f, static_cast<uint64_t>(r.num_ctx),
                                    static_cast<uint64_t>(r.num_batch), r.parallel, r.kv_type,
                                    r.flash);
  if (on_gpu > 0) {
    // Layers [start, start + on_gpu) of blocks + 1 (the output layer last), split over the GPUs
    // with layers by the estimate's counts.
    const int64_t start = std::max<int64_t>(0, blocks - on_gpu);
    const int64_t stop = std::min(start + on_gpu, blocks + 1);
    std::vector<double> cum;
    double sum = 0;
    for (int64_t c : e.split) cum.push_back(sum += static_cast<double>(c));
    for (double& c : cum) c /= sum > 0 ? sum : 1;
    for (int64_t i = start; i < stop; ++i) {
      const double at = static_cast<double>(i - start) / static_cast<double>(stop - start);
      size_t gi = 0;
      while (gi + 1 < cum.size() && !(at < cum[gi])) ++gi;
      if (i < blocks) {
        weights[gi] += f.layer_bytes[static_cast<size_t>(i)];
        kv[gi] += g.kv[static_cast<size_t>(i)];
      } else {
        weights[gi] += f.output_bytes;
      }
    }
  }
  const bool forced = s.num_gpu > 0 && on_gpu > e.layers;
  for (int64_t i = 0; i < r.gpus; ++i) {
    const size_t k = static_cast<size_t>(i);
    if (weights[k] == 0 && kv[k] == 0) continue;
    graph[k] = on_gpu >= blocks + 1 ? (used > 1 ? e.graph_partial : e.graph_full)
                                    : e.graph_partial;
    charged[k] = kMinimumMemory + weights[k] + kv[k] + graph[k];
  }
  // What stays in system memory: every layer and cache not on a GPU (memory.required.full less
  // the GPUs' share, as llamaServer.Load checks it against free system memory).
  uint64_t on_gpus = 0, all = f.output_bytes;
  for (size_t i = 0; i < weights.size(); ++i) on_gpus += weights[i] + kv[i];
  for (size_t i = 0; i < f.layer_bytes.size(); ++i) all += f.layer_bytes[i] + g.kv[i];
  p.host_bytes = all > on_gpus ? all - on_gpus : 0;
  // The verdict. A num_gpu past the estimate loads layers that may not fit the card (the
  // runner's cudaMalloc fails); otherwise Ollama fits by construction, and layers left on the
  // CPU are the failure: at load when the weights alone exceed the GPUs, else at the KV cache
  // (a shorter num_ctx or a quantized cache brings the layers back).
  p.fits = true;
  int64_t margin = INT64_MAX;
  std::string fail;
  for (int64_t i = 0; i < r.gpus; ++i) {
    const size_t k = static_cast<size_t>(i);
    const int64_t left = static_cast<int64_t>(free_each) - static_cast<int64_t>(charged[k]) -
                         static_cast<int64_t>(s.gpu_overhead);
    if (charged[k] > 0) margin = std::min(margin, left);
    if (forced && charged[k] > free_each && fail.empty()) {
      fail = fmt::format(
          "num_gpu {} puts {} on GPU {} with {} free: cudaMalloc failed: out of memory "
          "(unable to allocate CUDA{} buffer); Ollama's estimate places {} layers",
          s.num_gpu, FormatBytes(charged[k]), i, FormatBytes(free_each), i, e.layers);
    }
  }
  if (!fail.empty()) {
    p.fits = false;
    p.failure_stage = Stage::kLoad;
    p.failure_message = fail;
  } else if (on_gpu < blocks + 1) {
    p.fits = false;
    uint64_t weights_all = f.output_bytes;
    for (uint64_t b : f.layer_bytes) weights_all += b;
    const uint64_t room = (free_each > s.gpu_overhead + kMinimumMemory
                               ? free_each - s.gpu_overhead - kMinimumMemory
                               : 0) *
                          static_cast<uint64_t>(r.gpus);
    p.failure_stage = weights_all > room ? Stage::kLoad : Stage::kKvCache;
    p.failure_message = fmt::format(
        "offloaded {}/{} layers to GPU: {} of the model and its KV cache stay in system memory "
        "and run on the CPU (memory.required.full {}, memory.available {} x {})",
        on_gpu, blocks + 1, FormatBytes(p.host_bytes), FormatBytes(e.total),
        FormatBytes(free_each), r.gpus);
    if (margin == INT64_MAX) margin = 0;
    margin = std::min<int64_t>(margin, 0) - static_cast<int64_t>(p.host_bytes);
  }
  p.margin_bytes = margin == INT64_MAX ? 0 : margin;
  p.uncertainty_bytes = 256 * kMiB;
  for (int64_t i = 0; i < r.gpus; ++i) {
    const size_t k = static_cast<size_t>(i);
    GpuPlan x;
    x.total_bytes = gpu.total_bytes;
    x.budget_bytes = free_each > s.gpu_overhead ? free_each - s.gpu_overhead : 0;
    x.cuda_context_bytes = kMinimumMemory;
    x.weights_bytes = weights[k];
    x.load_peak_bytes = weights[k];
    x.kv_cache_bytes = kv[k];
    x.activation_peak_bytes = graph[k];
    x.peak_bytes = weights[k] + kv[k] + graph[k];
    x.device_used_bytes = charged[k];
    x.explain.push_back({"weights", weights[k], fmt::format(
        "{} of {} layers on GPU {} (the output layer counts as one)",
        i < static_cast<int64_t>(e.split.size()) ? e.split[k] : 0, blocks + 1, i)});
    x.explain.push_back({"kv", kv[k], fmt::format(
        "num_ctx {} x {} sequence(s) x (K + V) x KV heads x {} bytes ({}) per layer",
        r.num_ctx, r.parallel, KvBytesPerElement(r.kv_type), r.kv_type)});
    x.explain.push_back({"graph", graph[k], fmt::format(
        "GraphSize {} offload for a {}-token batch ({} architecture rule)",
        on_gpu >= blocks + 1 && used == 1 ? "full" : "partial", r.num_batch,
        g.partial > 0 ? f.arch : std::string("GQA fallback"))});
    x.explain.push_back({"reserve", kMinimumMemory, "ml/device.go MinimumMemory (CUDA context)"});
    p.gpus.push_back(std::move(x));
  }
  // The stage table, for the GPU charged most.
  size_t t = 0;
  for (size_t i = 1; i < charged.size(); ++i) {
    if (charged[i] > charged[t]) t = i;
  }
  const std::string on = r.gpus > 1 ? fmt::format(" (GPU {})", t) : "";
  p.stages.push_back({Stage::kStartup, fmt::format(
      "{} free per GPU, minimum {} and OLLAMA_GPU_OVERHEAD {} reserved; scheduler picks {} "
      "GPU(s)", FormatBytes(free_each), FormatBytes(kMinimumMemory), FormatBytes(s.gpu_overhead),
      p.gpus_used)});
  p.stages.push_back({Stage::kLoad, fmt::format(
      "offload {}/{} layers (split {}), weights {}{}; system memory {}", on_gpu, blocks + 1,
      fmt::join(e.split, ","), FormatBytes(weights[t]), on, FormatBytes(p.host_bytes))});
  p.stages.push_back({Stage::kKvCache, fmt::format(
      "KV {}{}: num_ctx {} x {} parallel, {} (memory.required.kv {} for every layer)",
      FormatBytes(kv[t]), on, r.num_ctx, r.parallel, r.kv_type, FormatBytes(e.kv))});
  p.stages.push_back({Stage::kProfile, fmt::format(
      "graph {}{} (memory.graph.full {}, partial {}; num_batch {}, flash attention {})",
      FormatBytes(graph[t]), on, FormatBytes(e.graph_full), FormatBytes(e.graph_partial),
      r.num_batch, r.flash ? "on" : "off")});
  p.stages.push_back({Stage::kRuntime, fmt::format(
      "{}{} of {} free (memory.required.partial {}, full {})", FormatBytes(charged[t]), on,
      FormatBytes(free_each), FormatBytes(e.vram), FormatBytes(e.total))});
  p.max_model_len = r.num_ctx;
  p.kv_cache_tokens = static_cast<uint64_t>(r.num_ctx * r.parallel);
  p.max_concurrency = static_cast<double>(r.parallel);
  for (uint64_t k : kv) p.kv_needed_bytes += k;
  p.notes = std::move(r.notes);
  if (OllamaEngine(f.arch)) {
    p.notes.push_back(fmt::format(
        "Ollama v0.12.10 runs {} on its own engine, which places layers by measured allocations, "
        "not by this estimate: the layer count may differ", f.arch));
  }
  if (p.host_bytes > 0) {
    p.notes.push_back(fmt::format("system memory: {} of layers and KV cache on the CPU "
                                  "(llamaServer.Load refuses when free RAM + swap is less)",
                                  FormatBytes(p.host_bytes)));
  }
  if (s.num_gpu >= 0 || s.num_batch > 0) {
    std::string lines;
    if (s.num_gpu >= 0) lines += fmt::format(" PARAMETER num_gpu {}", s.num_gpu);
    if (s.num_batch > 0) lines += fmt::format(" PARAMETER num_batch {}", s.num_batch);
    p.notes.push_back("Modelfile:" + lines);
  }
  OllamaSettings res = s;
  res.max_model_len = r.num_ctx;
  res.max_num_seqs = r.parallel;
  res.tensor_parallel_size = 1;
  res.pipeline_parallel_size = r.gpus;
  res.kv_cache_dtype = r.kv_type;
  res.gpu_memory_utilization = gpu.total_bytes > 0 ? static_cast<double>(p.gpus[0].budget_bytes) /
                                                         static_cast<double>(gpu.total_bytes)
                                                   : 0;
  p.resolved = ToEngineSettings(res);
  p.command = CommandLine(inv, s);
  return p;
}

EngineSettings ToEngineSettings(const OllamaSettings& s) {
  EngineSettings e = static_cast<const EngineSettings&>(s);
  e.engine_options = std::make_shared<OllamaOptions>(static_cast<const OllamaOptions&>(s));
  return e;
}

OllamaSettings ToOllamaSettings(const EngineSettings& e) {
  OllamaSettings s;
  static_cast<EngineSettings&>(s) = e;
  s.engine_options.reset();
  if (auto* o = dynamic_cast<const OllamaOptions*>(e.engine_options.get())) {
    static_cast<OllamaOptions&>(s) = *o;
  }
  return s;
}

}  // namespace vramfit::ollama
