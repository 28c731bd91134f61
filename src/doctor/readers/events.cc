// The names of the readers' vocabulary (vramfit/doctor_events.h): one table each, checked at
// compile time to list every value once, in the enum's order. The names are the ones the
// documentation and the diagnosis's `numbers` use.
#include <iterator>
#include <utility>

#include "vramfit/doctor_events.h"

namespace vramfit {
namespace {

constexpr std::pair<EventKind, const char*> kEventKindNames[] = {
    {EventKind::kWeightsLoaded, "weights_loaded"},
    {EventKind::kProfileBreakdown, "profile_breakdown"},
    {EventKind::kProfileItem, "profile_item"},
    {EventKind::kBudget, "budget"},
    {EventKind::kStartupError, "startup_error"},
    {EventKind::kProfileV1, "profile_v1"},
    {EventKind::kKvAvailable, "kv_available"},
    {EventKind::kKvTokens, "kv_tokens"},
    {EventKind::kSamplerOom, "sampler_oom"},
    {EventKind::kGraphEstimate, "graph_estimate"},
    {EventKind::kMaxConcurrency, "max_concurrency"},
    {EventKind::kGpuBlocks, "gpu_blocks"},
    {EventKind::kMaxLenError, "max_len_error"},
    {EventKind::kNoKvMemory, "no_kv_memory"},
    {EventKind::kGraphBegin, "graph_begin"},
    {EventKind::kGraphDone, "graph_done"},
    {EventKind::kLoadBegin, "load_begin"},
    {EventKind::kProfileBegin, "profile_begin"},
    {EventKind::kServing, "serving"},
    {EventKind::kTransformersBackend, "transformers_backend"},
    {EventKind::kVllmV1, "vllm_v1"},
    {EventKind::kVllmV0, "vllm_v0"},
    {EventKind::kConfig, "config"},
    {EventKind::kMambaBlocks, "mamba_blocks"},
    {EventKind::kProfilingError, "profiling_error"},
    {EventKind::kStartupFailed, "startup_failed"},
    {EventKind::kCpuOffload, "cpu_offload"},
    {EventKind::kKernelWarmup, "kernel_warmup"},
    {EventKind::kTorchOom, "torch_oom"},
    {EventKind::kCudaOom, "cuda_oom"},
    {EventKind::kFrame, "frame"},
    {EventKind::kTraceback, "traceback"},
    {EventKind::kHostOomKill, "host_oom_kill"},
    {EventKind::kSglangWeights, "sglang_weights"},
    {EventKind::kSglangProfiled, "sglang_profiled"},
    {EventKind::kSglangNotEnough, "sglang_not_enough"},
    {EventKind::kSglangTokenOom, "sglang_token_oom"},
    {EventKind::kSglangException, "sglang_exception"},
    {EventKind::kSglangMarker, "sglang_marker"},
    {EventKind::kGgmlAllocFail, "ggml_alloc_fail"},
    {EventKind::kGgmlLoadFail, "ggml_load_fail"},
    {EventKind::kGgmlKvFail, "ggml_kv_fail"},
    {EventKind::kGgmlComputeFail, "ggml_compute_fail"},
    {EventKind::kGgmlReserveFail, "ggml_reserve_fail"},
    {EventKind::kGgmlCtx, "ggml_ctx"},
    {EventKind::kGgmlKvBuffer, "ggml_kv_buffer"},
    {EventKind::kGgmlModelBuffer, "ggml_model_buffer"},
    {EventKind::kGgmlComputeBuffer, "ggml_compute_buffer"},
    {EventKind::kGgmlContextInit, "ggml_context_init"},
    {EventKind::kImage, "image"},
    {EventKind::kMmWarmup, "mm_warmup"},
    {EventKind::kRequest, "request"},
    {EventKind::kFitAdjust, "fit_adjust"},
    {EventKind::kContextExceeded, "context_exceeded"},
    {EventKind::kHostBufferFail, "host_buffer_fail"},
    {EventKind::kLoadEstimate, "load_estimate"},
    {EventKind::kOllamaMarker, "ollama_marker"},
    {EventKind::kOllamaSystemMemory, "ollama_system_memory"},
    {EventKind::kOllamaOffload, "ollama_offload"},
    {EventKind::kTgiMarker, "tgi_marker"},
    {EventKind::kTgiWarmupFail, "tgi_warmup_fail"},
    {EventKind::kStaticCache, "static_cache"},
    {EventKind::kOffload, "offload"},
    {EventKind::kSmiGpu, "smi_gpu"},
    {EventKind::kSmiProcess, "smi_process"},
    {EventKind::kMmHint, "mm_hint"},
    {EventKind::kPrompt, "prompt"},
    {EventKind::kOtherError, "other_error"},
    {EventKind::kHybridKvOff, "hybrid_kv_off"},
    {EventKind::kGgmlReserveBegin, "ggml_reserve_begin"},
    {EventKind::kOllamaRunnerDied, "ollama_runner_died"},
    {EventKind::kVllmSwapExhausted, "vllm_swap_exhausted"},
    {EventKind::kMetalOverWorkingSet, "metal_over_working_set"},
    {EventKind::kMmprojLoadFrame, "mmproj_load_frame"},
    {EventKind::kLoadFailedWords, "load_failed_words"},
    {EventKind::kKvCellsFull, "kv_cells_full"},
    {EventKind::kParallelSequences, "parallel_sequences"},
    {EventKind::kRuntimeWords, "runtime_words"},
    {EventKind::kGgmlDecodeFailed, "ggml_decode_failed"},
    {EventKind::kVllmMarker, "vllm_marker"},
};

constexpr std::pair<Num, const char*> kNumNames[] = {
    {Num::kWeightsBytes, "weights_bytes"},
    {Num::kNonTorchBytes, "non_torch_bytes"},
    {Num::kActivationPeakBytes, "activation_peak_bytes"},
    {Num::kKvCacheBytes, "kv_cache_bytes"},
    {Num::kTotalBytes, "total_bytes"},
    {Num::kPeakTorchBytes, "peak_torch_bytes"},
    {Num::kGpuMemoryUtilization, "gpu_memory_utilization"},
    {Num::kBudgetBytes, "budget_bytes"},
    {Num::kFreeBytes, "free_bytes"},
    {Num::kConsumedBytes, "consumed_bytes"},
    {Num::kCudagraphBytes, "cudagraph_bytes"},
    {Num::kKvCacheTokens, "kv_cache_tokens"},
    {Num::kMaxNumSeqs, "max_num_seqs"},
    {Num::kMaxModelLen, "max_model_len"},
    {Num::kMaxConcurrency, "max_concurrency"},
    {Num::kGpuBlocks, "gpu_blocks"},
    {Num::kKvNeededBytes, "kv_needed_bytes"},
    {Num::kEstimatedMaxModelLen, "estimated_max_model_len"},
    {Num::kTensorParallelSize, "tensor_parallel_size"},
    {Num::kRequestedBytes, "requested_bytes"},
    {Num::kProcessBytes, "process_bytes"},
    {Num::kAllocatedBytes, "allocated_bytes"},
    {Num::kReservedUnallocatedBytes, "reserved_unallocated_bytes"},
    {Num::kListedProcessBytes, "listed_process_bytes"},
    {Num::kListedProcesses, "listed_processes"},
    {Num::kLargestListedProcessBytes, "largest_listed_process_bytes"},
    {Num::kGpuIndex, "gpu_index"},
    {Num::kReservedBytes, "reserved_bytes"},
    {Num::kPathHasSglang, "path_has_sglang"},
    {Num::kPathHasVllm, "path_has_vllm"},
    {Num::kPathHasTransformers, "path_has_transformers"},
    {Num::kProfiledTokens, "profiled_tokens"},
    {Num::kMemFractionStatic, "mem_fraction_static"},
    {Num::kHost, "host"},
    {Num::kDuringDecode, "during_decode"},
    {Num::kComputeBytes, "compute_bytes"},
    {Num::kUsedBytes, "used_bytes"},
    {Num::kPromptTokens, "prompt_tokens"},
    {Num::kPathIsGraphCapture, "path_is_graph_capture"},
    {Num::kPathIsKernelWarmup, "path_is_kernel_warmup"},
    {Num::kPathIsSampler, "path_is_sampler"},
    {Num::kMambaBlocks, "mamba_blocks"},
    {Num::kHostRequiredBytes, "host_required_bytes"},
    {Num::kHostAvailableBytes, "host_available_bytes"},
    {Num::kPrefillTokens, "prefill_tokens"},
    {Num::kSmiTotalBytes, "smi_total_bytes"},
    {Num::kOffloadLayers, "offload_layers"},
    {Num::kModelLayers, "model_layers"},
    {Num::kGpuOverheadBytes, "gpu_overhead_bytes"},
    {Num::kOnlineQuantization, "online_quantization"},
    {Num::kPathIsQuantizer, "path_is_quantizer"},
    {Num::kContextLength, "context_length"},
    {Num::kChunkedPrefillSize, "chunked_prefill_size"},
    {Num::kCudaGraphMaxBs, "cuda_graph_max_bs"},
    {Num::kMaxTotalTokens, "max_total_tokens"},
    {Num::kKvCacheDtypeBits, "kv_cache_dtype_bits"},
    {Num::kEstimateFits, "estimate_fits"},
    {Num::kErrorClass, "error_class"},
    {Num::kTrainBatchPerDevice, "train_batch_per_device"},
    {Num::kGradAccumSteps, "grad_accum_steps"},
    {Num::kNumBeams, "num_beams"},
    {Num::kQuantizerTool, "quantizer_tool"},
    {Num::kBarBegunBefore, "bar_begun_before"},
    {Num::kTrainingLaunch, "training_launch"},
    {Num::kFixedKvBytes, "fixed_kv_bytes"},
    {Num::kLoadDtypeBits, "load_dtype_bits"},
    {Num::kServingOom, "serving_oom"},
    {Num::kSkippedMmProfiling, "skipped_mm_profiling"},
    {Num::kQuantizerLayer, "quantizer_layer"},
    {Num::kUnslothMerge, "unsloth_merge"},
    {Num::kQuantizedRun, "quantized_run"},
    {Num::kPrivatePoolBytes, "private_pool_bytes"},
    {Num::kFitAbortedLayers, "fit_aborted_layers"},
    {Num::kQuantizedExport, "quantized_export"},
};

// Entry i names value i, and every value has an entry.
template <typename T, size_t N>
constexpr bool InOrder(const std::pair<T, const char*> (&table)[N], int count) {
  if (static_cast<int>(N) != count) return false;
  for (size_t i = 0; i < N; ++i) {
    if (static_cast<size_t>(table[i].first) != i) return false;
  }
  return true;
}
static_assert(InOrder(kEventKindNames, kEventKindCount));
static_assert(InOrder(kNumNames, kNumCount));

}  // namespace

const char* EventKindName(EventKind kind) {
  return kEventKindNames[static_cast<size_t>(kind)].second;
}

const char* NumName(Num key) { return kNumNames[static_cast<size_t>(key)].second; }

}  // namespace vramfit
