// TensorRT-LLM's log reader (readers/reader.h): the C++ runtime's and the Python API's lines
// (the TensorRT engine path: an engine from trtllm-build run by the executor, run.py or Triton's
// tensorrtllm backend; the PyTorch backend of trtllm-serve and the LLM API), the phases they
// mark, the failures they report (the CUDA runtime error its allocators throw, TensorRT's own
// out-of-memory, the executor's report of the component it could not create, a KV cache with no
// block left or too small for one sequence), TensorRT-LLM's words and its settings as fixes.
//
// Read at TensorRT-LLM commit b35ac1b (version.py 1.2.0rc2) unless a line says otherwise:
// cpp/include/tensorrt_llm/common/logger.h (prefixes "[TensorRT-LLM][INFO] " and, later,
// "MM-DD-YYYY HH:MM:SS.uuuuuu [TRT-LLM] [I] "), tensorrt_llm/logger.py ("[TRT-LLM] [I] " after the
// time), cpp/include/tensorrt_llm/common/cudaUtils.h check ("[TensorRT-LLM][ERROR] CUDA runtime
// error in %s: %s"), cpp/tensorrt_llm/runtime/tllmRuntime.cpp, cpp/tensorrt_llm/batch_manager/
// kvCacheManager.cpp and trtGptModelInflightBatching.cpp, tensorrt_llm/_torch/pyexecutor/
// _util.py, resource_manager.py and py_executor_creator.py (commit 000429d).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "doctor/readers/reader.h"

namespace vramfit::doctor {
namespace {

constexpr char kEngine[] = "tensorrt-llm";

// The components TensorRT-LLM's PyTorch backend creates in turn, as its report names them when
// one did not fit ("The following component could not be created: Model"; py_executor_creator.py
// _ExecutorMemoryMonitor, 1.0+; the enum's tag where the report prints it raw), and the frame each
// stands for (facts.cc kFrameRows: the phase it belongs to).
struct Component {
  std::string_view name;
  std::string_view tag;
  const char* frame;
};
constexpr Component kComponents[] = {
    // The model's weights (and a draft model's).
    {"Model", "model", "executor_model (TensorRT-LLM's executor: the model)"},
    {"Draft model for speculative decoding", "draft_model",
     "executor_model (TensorRT-LLM's executor: the draft model)"},
    // Buffers sized by max_seq_len x max_batch_size, and the estimation pass's temporary KV
    // cache and resources, sized by max_num_tokens: before the KV cache is sized.
    {"Sampler", "sampler", "executor_profile (TensorRT-LLM's executor: the sampler)"},
    {"Drafter", "drafter", "executor_profile (TensorRT-LLM's executor: the drafter)"},
    {"Speculative decoding resources", "spec_resource_manager",
     "executor_profile (TensorRT-LLM's executor: speculative decoding resources)"},
    {"Initial KV Cache", "_no_capture_init_kv_cache",
     "executor_profile (TensorRT-LLM's executor: the temporary KV cache of the estimation)"},
    {"Additional executor resources (temporary", "_no_capture_init_extra_resources",
     "executor_profile (TensorRT-LLM's executor: the estimation's resources)"},
    {"Model resources created during usage", "model_extra",
     "executor_profile (TensorRT-LLM's executor: the model's resources during the estimation)"},
    // The final KV cache, then the final executor's resources: CUDA graphs, the autotuner and
    // the warm-up, created after the KV cache took its fraction.
    {"KV cache", "kv_cache", "executor_kv_cache (TensorRT-LLM's executor: the KV cache)"},
    {"Additional executor resources", "executor_extra",
     "executor_graphs (TensorRT-LLM's executor: CUDA graphs and warm-up after the KV cache)"},
};

// The C++ stack frames TensorRT-LLM prints under its exceptions ("3  0x7fe5... tensorrt_llm::
// runtime::TllmRuntime::TllmRuntime(void const*, ...) + 593"; tllmException.cpp) that say which
// allocation failed, innermost first in the stack: the engine's execution-context memory (its
// activations, sized at build time), the runtime buffers, the paged KV pool, a step's own.
struct CppFrame {
  std::string_view key;
  const char* frame;
};
constexpr CppFrame kCppFrames[] = {
    {"KVCacheManager::allocatePools", "allocatePools (TensorRT-LLM's paged KV pool)"},
    {"RuntimeBuffers::", "RuntimeBuffers (TensorRT-LLM's runtime buffers)"},
    {"TllmRuntime::TllmRuntime", "TllmRuntime (the engine's execution-context memory)"},
    {"::forwardAsync", "forwardAsync (a batch step)"},
};

// A figure in GiB after `key` ("Total GPU memory (GiB): 95.00").
std::optional<double> GibAfter(std::string_view s, std::string_view key) {
  const auto v = NumberAfter(s, key);
  if (!v) return std::nullopt;
  return *v * 1024.0 * 1024.0 * 1024.0;
}

// A line of TensorRT-LLM's: its loggers' prefixes, its commands, its Python package's paths.
bool Marked(const LineView& s) {
  return Has(s, "[TensorRT-LLM]") || Has(s, "[TRT-LLM]") || Has(s, "trtllm-serve") ||
         Has(s, "trtllm-build") || Has(s, "tensorrt_llm/_torch/") ||
         Has(s, "tensorrt_llm/runtime/") || Has(s, "tensorrt_llm/executor/") ||
         Has(s, "tensorrt_llm/llmapi/") || Has(s, "tensorrt_llm::") ||
         Has(s, "TllmException") || Has(s, "tensorrtllm_backend");
}

// The phases, in the order the two paths print them.
void MatchPhases(const Line& line) {
  const LineView s = line.view();
  // Engine path: TensorRT's deserializer ("Loaded engine size: %d MiB", forwarded through
  // tllmLogger.cpp), then tllmRuntime.cpp's execution-context memory ("[MemUsageChange]
  // Allocated %.2f MiB for execution context memory."), trtGptModelInflightBatching.cpp's
  // "Allocated %s GPU memory for runtime buffers." and "... for decoder.", then
  // kvCacheManager.cpp's "Memory usage when calculating max tokens in paged kv cache: total:
  // %0.2f GiB, available: %0.2f GiB" and "Allocated %0.2f GiB for max tokens in paged KV cache
  // (%d)." (allocatePools).
  if (Has(s, "Loaded engine size:")) {
    Set(line.Emit(EventKind::kWeightsLoaded, kEngine), Num::kWeightsBytes,
        BytesAfter(s, "Loaded engine size:"));
  }
  if (Has(s, "for execution context memory") || Has(s, "GPU memory for runtime buffers") ||
      Has(s, "GPU memory for decoder")) {
    line.Emit(EventKind::kProfileBegin, kEngine);
  }
  if (Has(s, "Memory usage when calculating max tokens in paged kv cache")) {
    auto& e = line.Emit(EventKind::kKvAvailable, kEngine);
    Set(e, Num::kTotalBytes, BytesAfter(s, "total:"));
    Set(e, Num::kFreeBytes, BytesAfter(s, "available:"));
  }
  if (Has(s, "for max tokens in paged KV cache (")) {
    auto& e = line.Emit(EventKind::kKvTokens, kEngine);
    Set(e, Num::kKvCacheBytes, BytesAfter(s, "Allocated"));
    Set(e, Num::kKvCacheTokens, NumberAfter(s, "paged KV cache ("));
  }
  // PyTorch backend: the weights ("Use X GB for model weights.", a rank's "Prefetching PATH to
  // memory...", "Model init total"), the estimation's profile (_util.py
  // configure_kv_cache_capacity: "Memory used after loading model weights ... in memory usage
  // profiling", "Peak memory during memory usage profiling ...", "Estimated max memory in KV
  // cache : X GiB"), the autotuner, the CUDA graphs (model_engine.py "Creating CUDA graph
  // instances for N batch sizes.", "Run generation only CUDA graph warmup for batch size=N").
  if (Has(s, "for model weights.") && Has(s, "[TRT-LLM]")) {
    line.Emit(EventKind::kLoadBegin, kEngine);
  }
  if (Has(s, "[TRT-LLM]") && Has(s, "Prefetching ")) {
    line.Emit(EventKind::kLoadBegin, kEngine);
  }
  if (Has(s, "Model init total --")) line.Emit(EventKind::kWeightsLoaded, kEngine);
  if (Has(s, "in memory usage profiling:") ||
      Has(s, "Peak memory during memory usage profiling")) {
    line.Emit(EventKind::kProfileBegin, kEngine);
  }
  if (Has(s, "Estimated max memory in KV cache")) {
    Set(line.Emit(EventKind::kKvAvailable, kEngine), Num::kKvCacheBytes,
        BytesAfter(s, "Estimated max memory in KV cache :"));
  }
  if (Has(s, "[Autotuner] Autotuning process starts")) {
    line.Emit(EventKind::kKernelWarmup, kEngine);
  }
  if (Has(s, "Creating CUDA graph instances for") || Has(s, "CUDA graph warmup for batch size")) {
    line.Emit(EventKind::kGraphBegin, kEngine);
  }
  // Serving: the C++ executor's "Executor instance created by worker", the LLM API's "LLM Args:"
  // (printed once the executor is up, py_executor_creator.py).
  if (Has(s, "Executor instance created by worker") ||
      (Has(s, "[TRT-LLM]") && Has(s, "LLM Args:"))) {
    line.Emit(EventKind::kServing, kEngine);
  }
}

// The failures.
void MatchFailures(const Line& line) {
  const LineView s = line.view();
  // The CUDA runtime error its allocators throw (cudaUtils.h check: "[TensorRT-LLM][ERROR] CUDA
  // runtime error in ::cudaMallocAsync(ptr, n, mCudaStream->get()): out of memory (.../
  // tllmBuffers.h:112)"), TensorRT's own through the runtime's logger ("[defaultAllocator.cpp::
  // allocate::31] Error Code 1: Cuda Runtime (out of memory)", "Error Code 2: OutOfMemory
  // (Requested size was N bytes.)", "Requested amount of GPU memory (N bytes) could not be
  // allocated").
  // (Across a wrap or a reflow too: the message is one long line as printed.)
  const bool cuda_error = !WholeBoth(line, "CUDA runtime error in", "out of memory").empty();
  const bool trt_error = Has(s, "Error Code 2: OutOfMemory") ||
                         (Has(s, "Error Code 1: Cuda Runtime") && Has(s, "out of memory"));
  const bool requested = Has(s, "Requested amount of GPU memory (");
  if (cuda_error || trt_error || requested) {
    auto& e = line.Emit(EventKind::kCudaOom, kEngine);
    if (Has(s, "Requested size was")) {
      Set(e, Num::kRequestedBytes, NumberAfter(s, "Requested size was"));
    }
    if (requested) Set(e, Num::kRequestedBytes, NumberAfter(s, "Requested amount of GPU memory ("));
    // Where TensorRT ran out: deserializing an engine (the weights, at load) or building one
    // (trtllm-build's builder: virtualMemoryBuffer resizePhysical, globWriter).
    if (Has(s, "deserialize.cpp")) {
      line.Emit(EventKind::kFrame, kEngine).text = "deserializeCudaEngine (TensorRT's engine load)";
    }
    if (Has(s, "virtualMemoryBuffer.cpp") || Has(s, "globWriter.cpp")) {
      line.Emit(EventKind::kFrame, kEngine).text = "trtllm_build (TensorRT's engine build)";
    }
    // The error raised from a batch step ("Encountered an error in forwardAsync function: ...").
    if (Has(s, "in forwardAsync function")) {
      line.Emit(EventKind::kFrame, kEngine).text = "forwardAsync (a batch step)";
    }
  }
  if (Has(s, "Failed to deserialize cuda engine")) {
    line.Emit(EventKind::kFrame, kEngine).text = "deserializeCudaEngine (TensorRT's engine load)";
  }
  if (Has(s, "Engine building failed")) {
    line.Emit(EventKind::kFrame, kEngine).text = "trtllm_build (TensorRT's engine build)";
  }
  // The C++ stack under the exception.
  if (Has(s, "tensorrt_llm::")) {
    for (const CppFrame& f : kCppFrames) {
      if (Has(s, f.key)) {
        line.Emit(EventKind::kFrame, kEngine).text = f.frame;
        break;
      }
    }
  }
  // The PyTorch backend's report (py_executor_creator.py _maybe_explain_if_oom, 1.0+; "... which
  // might indicate insufficient GPU memory" before it), then the component and the figures.
  if (Has(s, "Executor creation failed due to insufficient GPU memory") ||
      Has(s, "which might indicate insufficient GPU memory")) {
    line.Emit(EventKind::kCudaOom, kEngine);
  }
  if (Has(s, "The following component could not be created:")) {
    const std::string_view t = line.text;
    std::string_view name = t.substr(t.find("created:") + 8);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    for (const Component& c : kComponents) {
      if (name.starts_with(c.name) || name == c.tag) {
        line.Emit(EventKind::kFrame, kEngine).text = c.frame;
        break;
      }
    }
  }
  if (Has(s, "Total GPU memory (GiB):")) {
    Set(line.Emit(EventKind::kTrtllmMarker, kEngine), Num::kTotalBytes,
        GibAfter(s, "Total GPU memory (GiB):"));
  }
  if (Has(s, "Free GPU memory before component creation attempt (GiB):")) {
    Set(line.Emit(EventKind::kTrtllmMarker, kEngine), Num::kFreeBytes,
        GibAfter(s, "creation attempt (GiB):"));
  }
  // A weight's placement failing on one rank ("[TRT-LLM] [RANK 2] [E] Error executing
  // load_single_module with args ('model.layers.9.mlp.gate_up_proj', Linear()): CUDA out of
  // memory. ..."): the load, with PyTorch's message read by the pytorch reader.
  if (Has(s, "Error executing load_single_module")) {
    line.Emit(EventKind::kFrame, kEngine).text = "load_single_module (TensorRT-LLM's weight load)";
  }
  // The paged KV pool with no block left for a step (kvCacheManager.cpp allocateBlock: "Can't
  // allocate new blocks. No free blocks left." and, later, "... for window size %d. ..."): the
  // pool is full with the batch admitted, not an allocation of memory.
  if (!WholeBoth(line, "Can't allocate new blocks", "No free blocks left").empty()) {
    line.Emit(EventKind::kKvCellsFull, kEngine);
    line.Emit(EventKind::kParallelSequences, kEngine);
  }
  // A KV cache too small for one sequence: the 0.x check ("maxTokensInPagedKvCache (%d) must be
  // large enough to process at least 1 sequence to completion"), the fail-fast one ("Attention
  // window too large to fit even a single sequence in the KV cache"), resource_manager.py's
  // asserts ("Impossible to fit in any sequence in kvCache", and its misspelt twin).
  if (Has(s, "must be large enough to process at least 1 sequence") ||
      Has(s, "too large to fit even a single sequence in the KV cache") ||
      Has(s, "to fit in any sequence in kvCache")) {
    auto& e = line.Emit(EventKind::kMaxLenError, kEngine);
    Set(e, Num::kKvCacheTokens, NumberAfter(s, "maxTokensInPagedKvCache ("));
  }
}

void Match(const Line& line) {
  const LineView s = line.view();
  if (!Marked(s) && !Has(s, "Executor creation failed") && !Has(s, "component could not be") &&
      !Has(s, "GPU memory (GiB):") && !Has(s, "free blocks left") &&
      !Has(s, "Error Code 2: OutOfMemory") && !Has(s, "out of memory")) {
    return;
  }
  if (Marked(s)) line.Emit(EventKind::kTrtllmMarker, kEngine);
  MatchPhases(line);
  MatchFailures(line);
}

std::string Say(Words rule, const Facts& f) {
  // (Its words only for its own logs: another engine's log asks the readers in turn.)
  if (f.engine != kEngine) return "";
  if (rule == Words::kKvCellsFull) {
    return "TensorRT-LLM's paged KV pool had no free block left for a step of the admitted "
           "batch (kvCacheManager.cpp: \"Can't allocate new blocks. No free blocks left.\"): the "
           "pool was sized at start-up from free_gpu_memory_fraction of the memory left";
  }
  if (rule == Words::kMaxLenCheck) {
    return "TensorRT-LLM's KV cache cannot hold one sequence of max_seq_len: the pool, sized from "
           "free_gpu_memory_fraction of the memory left after the weights and activations, has "
           "fewer tokens than one request needs";
  }
  if (rule == Words::kGraphCapture) {
    return "TensorRT-LLM's PyTorch backend captures a CUDA graph for each batch size up to "
           "cuda_graph_config's max_batch_size and warms up after the final KV cache took its "
           "fraction of the free memory (py_executor_creator.py, model_engine.py "
           "_capture_generation_cuda_graphs)";
  }
  return "";
}

// The KV fraction's three spellings: trtllm-serve's flag, the LLM API's KvCacheConfig, Triton's
// tensorrtllm backend parameter (kvCacheManager.cpp names the last "aka
// kv_cache_free_gpu_mem_fraction").
std::string Fraction(double x) {
  return fmt::format(
      "--kv_cache_free_gpu_memory_fraction {:.2f} (trtllm-serve; KvCacheConfig("
      "free_gpu_memory_fraction={:.2f}) in the LLM API; kv_cache_free_gpu_mem_fraction in "
      "Triton's config.pbtxt; default 0.9)",
      x, x);
}

bool Fixes(Cause cause, const Facts& f, Diagnosis* d) {
  switch (cause) {
    case Cause::kWeightsTooLarge:
      // trtllm-build's builder ran out (TensorRT's engine build): the engine is built on the
      // card it runs on, sized by the build's limits.
      if (AnyFrame(f, {"trtllm_build"})) {
        AddFix(d, "trtllm-build --max_batch_size, --max_num_tokens and --max_seq_len lower",
               "the builder's activation memory and the engine's are sized by these limits");
        AddFix(d, "trtllm-build --tp_size 2 (a rank's share of the weights on each GPU)",
               "each GPU builds and holds a share of the weights");
        AddFix(d, "a quantized checkpoint (FP8, NVFP4 or INT4-AWQ through Model Optimizer)",
               "a half or a quarter of the 16-bit weight bytes");
        return true;
      }
      AddFix(d, "--tp_size 2 (or --pp_size 2; for an engine, build it with more GPUs)",
             "each GPU holds a share of the weights");
      AddFix(d, "a quantized checkpoint (FP8, NVFP4 or INT4-AWQ through Model Optimizer)",
             "a half or a quarter of the 16-bit weight bytes");
      return true;
    case Cause::kActivationPeak:
      if (d->stage == "runtime") {
        AddFix(d, Fraction(0.8),
               "the KV pool takes that fraction of the memory left at start-up; a lower one "
               "leaves a step's own allocations (context logits, sampling) the room this one "
               "lacked");
      }
      AddFix(d, "--max_num_tokens lower (trtllm-serve; for an engine, trtllm-build "
                "--max_num_tokens and --max_batch_size)",
             "the activations and the estimation pass are sized by the tokens of one batch");
      AddFix(d, "--max_batch_size lower", "fewer requests in one step");
      return true;
    case Cause::kCudagraphCapture:
      AddFix(d, "cuda_graph_config: max_batch_size lower (extra_llm_api_options YAML)",
             "fewer and smaller captured graphs");
      AddFix(d, Fraction(0.8),
             "the final KV cache takes less, leaving the graphs and the warm-up room");
      return true;
    case Cause::kKvNoMemory:
      // The KV cache could not be created at the fraction asked for (the executor's own advice:
      // "reduce free_gpu_memory_fraction").
      AddFix(d, Fraction(0.8), "a smaller KV pool, created from the memory left");
      AddFix(d, "--max_num_tokens lower, --tp_size 2 or a quantized checkpoint",
             "smaller activations or weights leave the KV pool more memory");
      return true;
    case Cause::kKvTooLongContext: {
      const auto tokens = f.get(Num::kKvCacheTokens);
      AddFix(d,
             tokens && *tokens >= 2 ? fmt::format("--max_seq_len {:.0f}", *tokens)
                                    : std::string("--max_seq_len lower"),
             "one request must fit in the tokens the KV pool holds");
      AddFix(d, "--max_num_tokens lower, --tp_size 2 or a quantized checkpoint",
             "smaller activations or weights leave the KV pool more memory");
      return true;
    }
    case Cause::kKvTooManySequences:
      AddFix(d, "--max_batch_size lower", "fewer requests share the KV pool");
      AddFix(d, Fraction(0.95), "a larger KV pool (where the activations leave room)");
      return true;
    default:
      AddFix(d, Fraction(0.8), "leaves headroom outside the KV pool");
      return true;
  }
}

// The version banner the LLM API prints as it starts ("[TensorRT-LLM] TensorRT-LLM version:
// 1.1.0rc3") and the PyTorch backend's "Using LLM with PyTorch backend".
bool BeginsRun(const Line& line) {
  const LineView s = line.view();
  return Has(s, "TensorRT-LLM version:") || Has(s, "Using LLM with PyTorch backend");
}

}  // namespace

const Reader& TrtllmReader() {
  static const Reader kReader = {
      .engine = kEngine,
      .match = Match,
      .milestones = {{EventKind::kLoadBegin, Stage::kLoad},
                     {EventKind::kWeightsLoaded, Stage::kProfile},
                     {EventKind::kProfileBegin, Stage::kProfile},
                     {EventKind::kKvAvailable, Stage::kKvCache},
                     // The pool allocated: the PyTorch backend warms up and captures after it.
                     {EventKind::kKvTokens, Stage::kKvCache, true},
                     {EventKind::kKernelWarmup, Stage::kWarmup, true},
                     {EventKind::kGraphBegin, Stage::kCudaGraph},
                     {EventKind::kServing, Stage::kRuntime}},
      .fixes = Fixes,
      .words = Say,
      .begins_run = BeginsRun,
  };
  return kReader;
}

}  // namespace vramfit::doctor
