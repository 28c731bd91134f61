// Log readers (see vramfit/doctor.h): bytes in, events out. One pass, chunked reads, lines cut
// at a cap; each line is cleaned of ANSI colours and matched against the lines the engines
// print, as written in their sources (vLLM's worker/gpu_worker/kv_cache_utils, PyTorch's
// CUDACachingAllocator message, SGLang's model_runner/scheduler, llama.cpp's ggml-backend and
// llama-context, nvidia-smi's table). Worker prefixes and timestamps are not stripped: matches
// are substring matches, and the rank is read from the prefix.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "doctor/text_scan.h"
#include "vramfit/doctor.h"

namespace vramfit {
namespace {

using doctor::BytesAfter;
using doctor::BytesBefore;
using doctor::Has;
using doctor::HasNoCase;
using doctor::NumberAfter;
using doctor::NumberAt;

// "(VllmWorker rank=1 pid=..)", "[rank0]:", "(Worker_TP3 pid=..)", "[... TP0]", "(Worker_TP3_EP3
// ..)".
std::string RankOf(std::string_view s) {
  size_t at = s.find("rank=");
  if (at != std::string_view::npos && at < 80) {
    size_t e = at + 5;
    while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) ++e;
    return "rank" + std::string(s.substr(at + 5, e - at - 5));
  }
  at = s.find("[rank");
  if (at != std::string_view::npos && at < 20) {
    size_t e = at + 5;
    while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) ++e;
    return "rank" + std::string(s.substr(at + 5, e - at - 5));
  }
  for (std::string_view key : {"Worker_TP", " TP"}) {
    at = s.find(key);
    if (at != std::string_view::npos && at < 80) {
      size_t e = at + key.size();
      while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) ++e;
      if (e > at + key.size())
        return "TP" + std::string(s.substr(at + key.size(), e - at - key.size()));
    }
  }
  return "";
}

class Scanner {
 public:
  Scanner(LogScan* out, const ScanOptions& o) : out_(out), opt_(o) {}

  void Line(std::string_view raw, bool cut, bool binary) {
    ++out_->lines;
    if (cut) ++out_->long_lines;
    if (binary) {
      ++out_->binary_lines;
      return;
    }
    const std::string clean = doctor::StripAnsi(raw);
    line_ = clean;
    rank_ = RankOf(line_);
    const size_t before = out_->events.size() + out_->dropped_events;
    Match();
    if (out_->events.size() + out_->dropped_events == before && LooksLikeAnError(line_) &&
        out_->unplaced.size() < 8) {
      out_->unplaced.push_back(fmt::format("line {}: {}", out_->lines, Trim(line_, 160)));
    }
  }

  void Finish() {
    std::vector<std::pair<std::string, uint64_t>> v(engine_counts_.begin(), engine_counts_.end());
    std::stable_sort(v.begin(), v.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    for (const auto& [e, n] : v) out_->engines.push_back(e);
  }

 private:
  static std::string Trim(std::string_view s, size_t n) {
    size_t b = 0;
    while (b < s.size() && (s[b] == ' ' || s[b] == '\t')) ++b;
    s = s.substr(b);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
    return std::string(s.substr(0, n));
  }

  static bool LooksLikeAnError(std::string_view s) {
    return Has(s, "Error") || Has(s, "ERROR") || HasNoCase(s, "out of memory") ||
           Has(s, "Traceback") || HasNoCase(s, "failed to");
  }

  LogEvent& Emit(const char* kind, const char* engine) {
    ++engine_counts_[engine];
    if (out_->events.size() >= opt_.max_events) {
      ++out_->dropped_events;
      scratch_ = LogEvent();
      return scratch_;
    }
    LogEvent e;
    e.kind = kind;
    e.engine = engine;
    e.line = out_->lines;
    e.rank = rank_;
    e.text = Trim(line_, 300);
    out_->events.push_back(std::move(e));
    return out_->events.back();
  }

  // Numbers beyond 10^15 (a petabyte, a quadrillion tokens) are not read: no engine prints
  // them, and every later use stays within integer range.
  void Set(LogEvent& e, const char* key, std::optional<double> v) {
    if (v && std::isfinite(*v) && std::abs(*v) <= 1e15) e.values[key] = *v;
  }

  // Lines that carry one number after a fixed key.
  struct OneValue {
    const char* key;
    const char* kind;
    const char* engine;
    const char* value;
    bool bytes;
  };
  void MatchOneValue(std::string_view s, std::initializer_list<OneValue> table) {
    for (const OneValue& t : table) {
      if (!Has(s, t.key)) continue;
      auto& e = Emit(t.kind, t.engine);
      Set(e, t.value, t.bytes ? BytesAfter(s, t.key) : NumberAfter(s, t.key));
    }
  }

  void Match() {
    const std::string_view s = line_;
    if (s.empty()) return;
    MatchVllm(s);
    MatchTorch(s);
    MatchSglang(s);
    MatchLlamaCpp(s);
    MatchTransformers(s);
    MatchNvidiaSmi(s);
    MatchHints(s);
  }

  void MatchVllm(std::string_view s) {
    if (Has(s, "Loading model weights took") || Has(s, "Model loading took")) {
      auto& e = Emit("weights_loaded", "vllm");
      Set(e, "weights_bytes", BytesAfter(s, " took"));
    }
    if (Has(s, "model weights take") && Has(s, "non_torch_memory takes")) {
      auto& e = Emit("profile_breakdown", "vllm");
      Set(e, "weights_bytes", BytesAfter(s, "model weights take"));
      Set(e, "non_torch_bytes", BytesAfter(s, "non_torch_memory takes"));
      Set(e, "activation_peak_bytes", BytesAfter(s, "activation peak memory takes"));
      Set(e, "kv_cache_bytes", BytesAfter(s, "reserved for KV Cache is"));
    } else if (Has(s, "Memory profiling results:") && Has(s, "total_gpu_memory=")) {
      auto& e = Emit("profile_breakdown", "vllm");  // the 0.6.4 one-line form
      Set(e, "total_bytes", BytesAfter(s, "total_gpu_memory="));
      Set(e, "peak_torch_bytes", BytesAfter(s, "peak_torch_memory="));
      Set(e, "non_torch_bytes", BytesAfter(s, "non_torch_memory="));
      Set(e, "kv_cache_bytes", BytesAfter(s, "kv_cache_size="));
      Set(e, "gpu_memory_utilization", NumberAfter(s, "gpu_memory_utilization="));
    } else {
      // The multi-line form of Dec 2024: "model weights take   14.96GiB" etc., one per line.
      static const std::array<std::pair<const char*, const char*>, 6> kItems = {{
          {"] total_gpu_memory ", "total_bytes"},
          {"] model weights take ", "weights_bytes"},
          {"] non_torch_memory ", "non_torch_bytes"},
          {"] PyTorch activation peak memory ", "activation_peak_bytes"},
          {"] available_kv_cache_memory ", "kv_cache_bytes"},
          {"] gpu_memory_utilization ", "gpu_memory_utilization"},
      }};
      for (const auto& [key, name] : kItems) {
        if (Has(s, key)) {
          auto& e = Emit("profile_item", "vllm");
          Set(e, name,
              std::string_view(name) == "gpu_memory_utilization" ? NumberAfter(s, key)
                                                                 : BytesAfter(s, key));
        }
      }
    }
    if (Has(s, "total_gpu_memory (") && Has(s, "x gpu_memory_utilization (")) {
      auto& e = Emit("budget", "vllm");
      Set(e, "total_bytes", BytesAfter(s, "total_gpu_memory ("));
      Set(e, "gpu_memory_utilization", NumberAfter(s, "gpu_memory_utilization ("));
      Set(e, "budget_bytes", BytesAfter(s, ") = "));
    }
    if (Has(s, "Free memory on device") && Has(s, "on startup")) {
      const bool error = Has(s, "is less than desired GPU memory utilization");
      auto& e = Emit(error ? "startup_error" : "profile_v1", "vllm");
      // "(21.5/23.5 GiB)": the unit follows the total.
      size_t slash = s.find('/', s.find("Free memory on device ("));
      if (slash != std::string_view::npos) {
        auto free = NumberAfter(s, "Free memory on device (");
        auto total = BytesAfter(s, "/", slash);
        auto total_plain = NumberAfter(s, "/", slash);
        if (free && total && total_plain && *total_plain > 0) {
          Set(e, "free_bytes", *free * (*total / *total_plain));
          Set(e, "total_bytes", *total);
        }
      }
      Set(e, "gpu_memory_utilization", NumberAfter(s, "memory utilization ("));
      size_t comma = s.find(", ", s.find("memory utilization ("));
      if (comma != std::string_view::npos) Set(e, "budget_bytes", BytesAfter(s, ", ", comma));
      if (!error) {
        Set(e, "consumed_bytes", BytesAfter(s, "Actual usage is"));
        Set(e, "activation_peak_bytes", BytesBefore(s, "for peak activation", ", "));
        Set(e, "cudagraph_bytes", BytesBefore(s, "for CUDAGraph memory", "and "));
      }
    }
    MatchOneValue(
        s, {{"Available KV cache memory:", "kv_available", "vllm", "kv_cache_bytes", true},
            {"GPU KV cache size:", "kv_tokens", "vllm", "kv_cache_tokens", false},
            {"warming up sampler with", "sampler_oom", "vllm", "max_num_seqs", false},
            {"Estimated CUDA graph memory:", "graph_estimate", "vllm", "cudagraph_bytes", true}});
    if (Has(s, "Maximum concurrency for")) {
      auto& e = Emit("max_concurrency", "vllm");
      size_t end = 0;
      Set(e, "max_model_len", NumberAfter(s, "Maximum concurrency for", 0, &end));
      if (end) Set(e, "max_concurrency", NumberAfter(s, "per request:", end));
    }
    if (Has(s, "# GPU blocks:") || Has(s, "# cuda blocks:") || Has(s, "# CUDA blocks:")) {
      auto& e = Emit("gpu_blocks", "vllm");
      Set(e, "gpu_blocks",
          Has(s, "# GPU blocks:")    ? NumberAfter(s, "# GPU blocks:")
          : Has(s, "# cuda blocks:") ? NumberAfter(s, "# cuda blocks:")
                                     : NumberAfter(s, "# CUDA blocks:"));
    }
    if ((Has(s, "max seq len (") || Has(s, "max_model_len (")) &&
        (Has(s, "larger than the maximum number of tokens") || Has(s, "KV cache is needed"))) {
      auto& e = Emit("max_len_error", "vllm");
      Set(e, "max_model_len",
          NumberAfter(s, Has(s, "max seq len (") ? "max seq len (" : "max_model_len ("));
      if (Has(s, "stored in KV cache ("))
        Set(e, "kv_cache_tokens", NumberAfter(s, "stored in KV cache ("));
      if (Has(s, "KV cache is needed")) {
        size_t at = s.find("KV cache is needed");
        size_t open = s.rfind('(', at);
        if (open != std::string_view::npos) Set(e, "kv_needed_bytes", BytesAfter(s, "(", open));
        Set(e, "kv_cache_bytes", BytesAfter(s, "available KV cache memory ("));
      }
      Set(e, "estimated_max_model_len", NumberAfter(s, "estimated maximum model length is"));
    }
    if (Has(s, "No available memory for the cache blocks")) Emit("no_kv_memory", "vllm");
    if (Has(s, "Capturing CUDA graph") || Has(s, "Capturing cudagraphs") ||
        Has(s, "Capturing the model for CUDA graphs") || Has(s, "Profiling CUDA graph memory")) {
      Emit("graph_begin", "vllm");
    }
    if (Has(s, "Graph capturing finished")) {
      auto& e = Emit("graph_done", "vllm");
      Set(e, "cudagraph_bytes", BytesAfter(s, ", took"));
    }
    if (Has(s, "Starting to load model") || Has(s, "Loading safetensors checkpoint shards") ||
        Has(s, "Loading weights took") || Has(s, "Loading model from scratch")) {
      Emit("load_begin", "vllm");
    }
    if (Has(s, "Starting profile run") || Has(s, "Memory profiling takes"))
      Emit("profile_begin", "vllm");
    if (Has(s, "init engine (profile, create kv cache") || Has(s, "Starting vLLM API server") ||
        Has(s, "Application startup complete") || Has(s, "Uvicorn running") ||
        Has(s, "Avg prompt throughput") || Has(s, "Received request") || Has(s, "POST /v1/") ||
        Has(s, "Dumping scheduler output") || Has(s, "Model loaded in") ||
        Has(s, "KV cache pool created")) {
      Emit("serving", "vllm");
    }
    if (Has(s, "falling back to Transformers") || Has(s, "Using Transformers backend"))
      Emit("transformers_backend", "vllm");
    // Which engine core printed it: V1's files and processes, or V0's.
    if (Has(s, "EngineCore") || Has(s, "gpu_worker.py") || Has(s, "gpu_model_runner.py") ||
        Has(s, "kv_cache_utils.py") || Has(s, "/v1/")) {
      Emit("vllm_v1", "vllm");
    } else if (Has(s, "VllmWorkerProcess") || Has(s, " worker.py:") || Has(s, "[worker.py:") ||
               Has(s, " model_runner.py:") || Has(s, "[model_runner.py:") ||
               Has(s, "llm_engine.py") || Has(s, "executor_base.py") ||
               Has(s, "Memory profiling results:") || Has(s, "# GPU blocks:")) {
      Emit("vllm_v0", "vllm");
    }
    // Engine configuration: "max_seq_len=4096", "tensor_parallel_size=8", "quantization=awq",
    // "'max_model_len': 32768", "gpu_memory_utilization=0.95".
    if (Has(s, "max_seq_len=") || Has(s, "'max_model_len':") || Has(s, "tensor_parallel_size=") ||
        Has(s, "--max-model-len") || Has(s, "--tensor-parallel-size") ||
        Has(s, "--gpu-memory-utilization") || Has(s, "--model ") ||
        Has(s, "Starting to load model ") || Has(s, "model='")) {
      auto& e = Emit("config", "vllm");
      Set(e, "max_model_len", Has(s, "max_seq_len=") ? NumberAfter(s, "max_seq_len=")
                              : Has(s, "'max_model_len':") ? NumberAfter(s, "'max_model_len':")
                                                           : NumberAfter(s, "--max-model-len"));
      Set(e, "tensor_parallel_size",
          Has(s, "tensor_parallel_size=") ? NumberAfter(s, "tensor_parallel_size=")
                                          : NumberAfter(s, "--tensor-parallel-size"));
      Set(e, "gpu_memory_utilization",
          Has(s, "gpu_memory_utilization=") ? NumberAfter(s, "gpu_memory_utilization=")
                                            : NumberAfter(s, "--gpu-memory-utilization"));
      e.text = ModelPath(s);
    }
  }

  // The model path or id a command line or config line names.
  static std::string ModelPath(std::string_view s) {
    for (std::string_view key :
         {"--model ", "--model=", "model='", "Starting to load model ", "vllm serve "}) {
      size_t at = s.find(key);
      if (at == std::string_view::npos) continue;
      size_t b = at + key.size();
      size_t e = b;
      while (e < s.size() && s[e] != ' ' && s[e] != '\'' && s[e] != ',' && s[e] != '"' &&
             e - b < 200)
        ++e;
      std::string m(s.substr(b, e - b));
      while (!m.empty() && m.back() == '.') m.pop_back();
      if (!m.empty() && m[0] != '-') return m;
    }
    return "";
  }

  void MatchTorch(std::string_view s) {
    const size_t tried = s.find("Tried to allocate");
    if (tried != std::string_view::npos) {
      auto& e = Emit("torch_oom", "pytorch");
      Set(e, "requested_bytes", BytesAfter(s, "Tried to allocate", tried));
      if (Has(s, "total capacity of")) {  // PyTorch >= 2.1
        Set(e, "total_bytes", BytesAfter(s, "total capacity of"));
        Set(e, "free_bytes", BytesAfter(s, "of which"));
        Set(e, "process_bytes", BytesAfter(s, "this process has"));
        Set(e, "allocated_bytes", BytesAfter(s, "Of the allocated memory"));
        Set(e, "reserved_unallocated_bytes",
            BytesBefore(s, "reserved by PyTorch but unallocated", "and "));
        double others = 0;
        int processes = 0;
        for (size_t at = s.find("Process "); at != std::string_view::npos;
             at = s.find("Process ", at + 8)) {
          size_t end = 0;
          if (!NumberAt(s, at + 8, &end)) continue;
          if (s.substr(end, 5) != " has ") continue;
          if (auto b = BytesAfter(s, " has ", end)) {
            others += *b;
            ++processes;
          }
        }
        if (processes > 0) {
          Set(e, "listed_process_bytes", others);
          Set(e, "listed_processes", processes);
        }
        Set(e, "gpu_index", NumberAfter(s, "GPU "));
      } else {  // "(GPU 0; 23.69 GiB total capacity; 3.45 GiB already allocated; 17.23 GiB free;
                // ...)"
        Set(e, "gpu_index", NumberAfter(s, "(GPU "));
        size_t semi = s.find(';', tried);
        if (semi != std::string_view::npos) Set(e, "total_bytes", BytesAfter(s, ";", semi));
        Set(e, "allocated_bytes", BytesBefore(s, "already allocated", ";"));
        Set(e, "free_bytes",
            Has(s, " free;") ? BytesBefore(s, " free;", ";") : BytesBefore(s, " free)", ";"));
        Set(e, "reserved_bytes", BytesBefore(s, "reserved in total by PyTorch", ";"));
        if (e.values.count("reserved_bytes") && e.values.count("allocated_bytes")) {
          Set(e, "reserved_unallocated_bytes",
              std::max(0.0, e.values["reserved_bytes"] - e.values["allocated_bytes"]));
        }
      }
      return;
    }
    if (Has(s, "CUDA error: out of memory") || Has(s, "cudaErrorMemoryAllocation") ||
        (Has(s, "CUDA out of memory") && !Has(s, "warming up sampler")) ||
        Has(s, "HIP out of memory") || Has(s, "OutOfMemoryError")) {
      Emit("cuda_oom", "pytorch");
    }
    const size_t file = s.find("File \"");
    if (file != std::string_view::npos) {
      const size_t in = s.find(", in ", file);
      if (in != std::string_view::npos) {
        auto& e = Emit("frame", "pytorch");
        size_t b = in + 5, end = b;
        while (end < s.size() && end - b < 120 && s[end] != ' ' && s[end] != '\r') ++end;
        e.text = std::string(s.substr(b, end - b));
        const size_t q = s.find('"', file + 6);
        if (q != std::string_view::npos) {
          std::string_view path = s.substr(file + 6, q - file - 6);
          const size_t slash = path.rfind('/');
          e.values["path_has_sglang"] = Has(path, "sglang") ? 1 : 0;
          e.values["path_has_vllm"] = Has(path, "vllm/") ? 1 : 0;
          e.values["path_has_transformers"] =
              Has(path, "transformers/") || Has(path, "accelerate/") ? 1 : 0;
          e.text += " (" +
                    std::string(slash == std::string_view::npos ? path : path.substr(slash + 1)) +
                    ")";
        }
      }
    }
    if (Has(s, "Traceback (most recent call last)")) Emit("traceback", "pytorch");
    // "Exception in worker ... while processing method determine_num_available_blocks."
    if (Has(s, "while processing method ")) {
      size_t b = s.find("while processing method ") + 24, end = b;
      while (end < s.size() && end - b < 80 &&
             (std::isalnum(static_cast<unsigned char>(s[end])) || s[end] == '_'))
        ++end;
      auto& e = Emit("frame", "pytorch");
      e.text = std::string(s.substr(b, end - b));
    }
    // The code line under a frame: "model = AutoModelForCausalLM.from_pretrained(...)",
    // "model.generate(".
    if (file == std::string_view::npos) {
      for (const char* call :
           {".from_pretrained(", ".generate(", "load_checkpoint_and_dispatch("}) {
        if (Has(s, call)) {
          auto& e = Emit("frame", "transformers");
          std::string fn = call;
          e.text = fn.substr(fn[0] == '.' ? 1 : 0, fn.size() - (fn[0] == '.' ? 2 : 1));
          e.values["path_has_transformers"] = 1;
        }
      }
    }
  }

  void MatchSglang(std::string_view s) {
    if (Has(s, "Load weight end.") && Has(s, "avail mem=")) {
      auto& e = Emit("sglang_weights", "sglang");
      Set(e, "free_bytes", BytesAfter(s, "avail mem="));
      Set(e, "weights_bytes", BytesAfter(s, "mem usage="));
    }
    if (Has(s, "KV Cache is allocated."))
      MatchOneValue(s, {{"#tokens:", "kv_tokens", "sglang", "kv_cache_tokens", false}});
    if (Has(s, "is larger than the profiled value")) {
      MatchOneValue(
          s, {{"the profiled value", "sglang_profiled", "sglang", "profiled_tokens", false}});
    }
    if (Has(s, "Not enough memory. Please try to increase --mem-fraction-static") ||
        (Has(s, "Not enough memory") && Has(s, "mem-fraction-static"))) {
      Emit("sglang_not_enough", "sglang");
    }
    if (Has(s, "Capture cuda graph begin") || Has(s, "Capture CUDA graph begin"))
      Emit("graph_begin", "sglang");
    if (Has(s, "Capture cuda graph end") || Has(s, "Capture CUDA graph end"))
      Emit("graph_done", "sglang");
    if (Has(s, "Decode out of memory") || Has(s, "Prefill out of memory"))
      Emit("sglang_token_oom", "sglang");
    if (Has(s, "Scheduler hit an exception")) Emit("sglang_exception", "sglang");
    if (Has(s, "mem_fraction_static=") || Has(s, "sglang.launch_server")) {
      auto& e = Emit("sglang_marker", "sglang");
      Set(e, "mem_fraction_static", NumberAfter(s, "mem_fraction_static="));
    }
  }

  void MatchLlamaCpp(std::string_view s) {
    if (Has(s, "buffer_type_alloc_buffer:") && Has(s, "failed")) {
      auto& e = Emit("ggml_alloc_fail", "llama.cpp");
      Set(e, "requested_bytes", BytesAfter(s, "allocating"));
      if (!e.values.count("requested_bytes"))
        Set(e, "requested_bytes", BytesAfter(s, "buffer of size"));
      e.values["host"] = Has(s, "cpu_buffer") ? 1 : 0;
    }
    if (Has(s, "alloc_tensor_range: failed") ||
        (Has(s, "llama_model_load") && Has(s, "unable to allocate"))) {
      Emit("ggml_load_fail", "llama.cpp");
    }
    if (Has(s, "failed to allocate buffer for kv cache") ||
        Has(s, "llama_kv_cache_init() failed") ||
        Has(s, "failed to initialize the context: failed to allocate buffer for kv")) {
      Emit("ggml_kv_fail", "llama.cpp");
    }
    if (Has(s, "failed to allocate compute") || Has(s, "compute buffer allocation failed")) {
      auto& e = Emit("ggml_compute_fail", "llama.cpp");
      e.values["during_decode"] =
          Has(s, "kv_cache_update") || Has(s, "llama_decode") || Has(s, "decode:") ? 1 : 0;
    }
    if (Has(s, "gallocr_reserve") && Has(s, "failed")) {
      auto& e = Emit("ggml_reserve_fail", "llama.cpp");
      Set(e, "requested_bytes", BytesAfter(s, "buffer of size"));
    }
    if (Has(s, "n_ctx") &&
        (Has(s, "n_ctx      =") || Has(s, "n_ctx =") || Has(s, "n_ctx_slot ="))) {
      auto& e = Emit("ggml_ctx", "llama.cpp");
      Set(e, "max_model_len",
          Has(s, "n_ctx_slot =") ? NumberAfter(s, "n_ctx_slot =") : NumberAfter(s, "="));
    }
    MatchOneValue(
        s, {{"KV buffer size =", "ggml_kv_buffer", "llama.cpp", "kv_cache_bytes", true},
            {"model buffer size =", "ggml_model_buffer", "llama.cpp", "weights_bytes", true},
            {"compute buffer size =", "ggml_compute_buffer", "llama.cpp", "compute_bytes", true}});
    if (Has(s, "llama_new_context_with_model") || Has(s, "llama_init_from_model") ||
        Has(s, "sched_reserve") || Has(s, "graph_reserve")) {
      Emit("ggml_context_init", "llama.cpp");
    }
    if (Has(s, "processing image") || Has(s, "encoding image") || Has(s, "clip_model_load") ||
        Has(s, "mtmd")) {
      Emit("image", "llama.cpp");
    }
  }

  void MatchTransformers(std::string_view s) {
    if (Has(s, "StaticCache") || Has(s, "cache_implementation=\"static\"") ||
        Has(s, "cache_implementation='static'")) {
      Emit("static_cache", "transformers");
    }
    if (Has(s, "device_map=\"auto\"") || Has(s, "device_map='auto'") ||
        Has(s, "offloaded to the cpu") || Has(s, "Some parameters are on the meta device")) {
      Emit("offload", "transformers");
    }
  }

  void MatchNvidiaSmi(std::string_view s) {
    // "|  0  NVIDIA A100 80GB...  On | 00000000:3B:00.0 Off | ... | 23458MiB / 24564MiB | 98%
    // Default |"
    const size_t slash = s.find("MiB / ");
    if (slash != std::string_view::npos && s.size() > 0 && (s[0] == '|' || Has(s, "| "))) {
      size_t start = slash;
      while (start > 0 && std::isdigit(static_cast<unsigned char>(s[start - 1]))) --start;
      auto used = NumberAt(s, start);
      auto total = NumberAt(s, slash + 6);
      if (used && total) {
        auto& e = Emit("smi_gpu", "nvidia-smi");
        Set(e, "used_bytes", *used * 1048576.0);
        Set(e, "total_bytes", *total * 1048576.0);
      }
      return;
    }
    // "|    0   N/A  N/A    123456    C   ...python3.10    18000MiB |"
    if (s.size() > 2 && s[0] == '|' && Has(s, "MiB |") &&
        (Has(s, "   C ") || Has(s, " C+G ") || Has(s, "   G "))) {
      const size_t mib = s.rfind("MiB");
      size_t start = mib;
      while (start > 0 && std::isdigit(static_cast<unsigned char>(s[start - 1]))) --start;
      if (auto n = NumberAt(s, start)) {
        auto& e = Emit("smi_process", "nvidia-smi");
        Set(e, "used_bytes", *n * 1048576.0);
      }
    }
  }

  void MatchHints(std::string_view s) {
    if (Has(s, "pixel_values") || Has(s, "image_grid_thw") || Has(s, "mm_features") ||
        Has(s, "multi-modal") || Has(s, "multimodal") || Has(s, "limit_mm_per_prompt") ||
        Has(s, "dummy image") || Has(s, "get_image_features") || Has(s, "_execute_mm_encoder") ||
        Has(s, "get_multimodal_embeddings") || Has(s, "embed_multimodal") || Has(s, "visual(") ||
        Has(s, "vision_tower") || Has(s, "encoder cache") || Has(s, "pixel_values=") ||
        Has(s, "image_embeds") || Has(s, "visual_embedding") || Has(s, "VisionTransformer") ||
        Has(s, "Qwen2_5_VisionTransformer") || Has(s, "vision_model") ||
        Has(s, "<|vision_start|>") || Has(s, "<|image_pad|>") || Has(s, "image_url") ||
        HasNoCase(s, "describe the image") || Has(s, "\xe5\x9b\xbe\xe7\x89\x87") /* 图片 */ ||
        Has(s, "\xe5\x9b\xbe\xe5\x83\x8f") /* 图像 */) {
      Emit("mm_hint", "any");
    }
    if (Has(s, "prompt_token_ids_len=")) {
      auto& e = Emit("prompt", "vllm");
      Set(e, "prompt_tokens", NumberAfter(s, "prompt_token_ids_len="));
    }
  }

  LogScan* out_;
  ScanOptions opt_;
  std::string line_;
  std::string rank_;
  LogEvent scratch_;
  std::map<std::string, uint64_t> engine_counts_;
};

}  // namespace

Result<LogScan> ScanLog(std::istream& in, const ScanOptions& options) {
  LogScan scan;
  Scanner scanner(&scan, options);
  std::string line;
  line.reserve(4096);
  bool cut = false, binary = false;
  uint64_t odd = 0;
  char prev = 0;
  std::vector<char> buf(64 * 1024);
  auto flush = [&]() {
    binary = binary || (line.size() > 16 && odd * 4 > line.size());
    scanner.Line(line, cut, binary);
    line.clear();
    cut = binary = false;
    odd = 0;
  };
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const std::streamsize n = in.gcount();
    if (n <= 0) break;
    scan.bytes += static_cast<uint64_t>(n);
    for (std::streamsize i = 0; i < n; ++i) {
      const char c = buf[static_cast<size_t>(i)];
      const char before = prev;
      prev = c;
      if (c == '\n' && before == '\r') continue;  // CRLF: one line end
      if (c == '\n' || c == '\r') {
        flush();
        continue;
      }
      if (c == '\0') binary = true;
      const unsigned char u = static_cast<unsigned char>(c);
      if (u < 0x20 && c != '\t' && c != '\x1b') ++odd;
      if (line.size() < options.max_line_bytes) line += c;
      else cut = true;
    }
  }
  if (in.bad()) return Status::InvalidArgument("the log could not be read (I/O error)");
  if (!line.empty()) flush();
  scanner.Finish();
  return scan;
}

}  // namespace vramfit
