// The vocabulary of the doctor's log readers (vramfit/doctor.h): the kind of each recognised
// line (EventKind) and the keys of the numbers it carries (Num). Each value has one name
// (EventKindName, NumName): the spelling docs/doctor.md and the diagnosis's `numbers` use.
#ifndef VRAMFIT_DOCTOR_EVENTS_H_
#define VRAMFIT_DOCTOR_EVENTS_H_

#include <cstdint>

namespace vramfit {

// What a recognised line says, grouped by the reader that emits it (src/doctor/readers/).
enum class EventKind : uint8_t {
  // vLLM (V0 and V1).
  kWeightsLoaded,        // weights_loaded: "Model loading took", "Loading model weights took"
  kProfileBreakdown,     // profile_breakdown: the memory profile on one line
  kProfileItem,          // profile_item: one line of the multi-line profile (Dec 2024)
  kBudget,               // budget: total_gpu_memory (T) x gpu_memory_utilization (U) = B
  kStartupError,         // startup_error: free memory on start-up below the budget
  kProfileV1,            // profile_v1: the free-memory line with the usage breakdown
  kKvAvailable,          // kv_available: "Available KV cache memory"
  kKvTokens,             // kv_tokens: "GPU KV cache size" (SGLang: "#tokens")
  kSamplerOom,           // sampler_oom: "warming up sampler with N dummy requests"
  kGraphEstimate,        // graph_estimate: "Estimated CUDA graph memory"
  kMaxConcurrency,       // max_concurrency: "Maximum concurrency for L tokens per request"
  kGpuBlocks,            // gpu_blocks: "# GPU blocks: N"
  kMaxLenError,          // max_len_error: the max-length check
  kNoKvMemory,           // no_kv_memory: "No available memory for the cache blocks"
  kGraphBegin,           // graph_begin: CUDA graph capture began (also SGLang)
  kGraphDone,            // graph_done: CUDA graph capture finished (also SGLang)
  kLoadBegin,            // load_begin: weight loading began
  kProfileBegin,         // profile_begin: the profile run began
  kServing,              // serving: start-up finished, requests are served
  kTransformersBackend,  // transformers_backend: the fallback to the Transformers backend
  kVllmV1,               // vllm_v1: a line of the V1 engine's files or processes
  kVllmV0,               // vllm_v0: a line of the V0 engine's
  kConfig,               // config: engine configuration (length, TP, utilization, model)
  kMambaBlocks,          // mamba_blocks: "max_num_seqs (N) exceeds available Mamba cache blocks"
  kProfilingError,       // profiling_error: "Error in memory profiling" (free memory rose)
  kStartupFailed,        // startup_failed: "EngineCore failed to start" and the like
  kCpuOffload,           // cpu_offload: weights offloaded to host memory (--cpu-offload-gb, UVA)
  kKernelWarmup,         // kernel_warmup: a kernel warm-up began (DeepGEMM, FlashInfer)
  // PyTorch.
  kTorchOom,             // torch_oom: "Tried to allocate X ..."
  kCudaOom,              // cuda_oom: "CUDA error: out of memory" and the like
  kFrame,                // frame: a traceback frame or a code line (text: function (file))
  kTraceback,            // traceback: "Traceback (most recent call last)"
  kHostOomKill,          // host_oom_kill: the kernel's OOM killer ended the process
  // SGLang.
  kSglangWeights,        // sglang_weights: "Load weight end. ... avail mem=.., mem usage=.."
  kSglangProfiled,       // sglang_profiled: "... is larger than the profiled value P"
  kSglangNotEnough,      // sglang_not_enough: "Not enough memory ... --mem-fraction-static"
  kSglangTokenOom,       // sglang_token_oom: "Decode/Prefill out of memory"
  kSglangException,      // sglang_exception: "Scheduler hit an exception"
  kSglangMarker,         // sglang_marker: "mem_fraction_static=", "sglang.launch_server"
  // llama.cpp.
  kGgmlAllocFail,        // ggml_alloc_fail: a backend buffer allocation failed
  kGgmlLoadFail,         // ggml_load_fail: the model's tensors could not be allocated
  kGgmlKvFail,           // ggml_kv_fail: the KV cache buffer could not be allocated
  kGgmlComputeFail,      // ggml_compute_fail: compute buffers could not be allocated
  kGgmlReserveFail,      // ggml_reserve_fail: gallocr_reserve failed
  kGgmlCtx,              // ggml_ctx: n_ctx / n_ctx_slot
  kGgmlKvBuffer,         // ggml_kv_buffer: "KV buffer size ="
  kGgmlModelBuffer,      // ggml_model_buffer: "model buffer size ="
  kGgmlComputeBuffer,    // ggml_compute_buffer: "compute buffer size ="
  kGgmlContextInit,      // ggml_context_init: the context is being created
  kImage,                // image: an image is encoded (mtmd/clip)
  kMmWarmup,             // mm_warmup: the vision projector's start-up warm-up (clip/mtmd)
  kRequest,              // request: a request is being served (slot launched, cache slot)
  kFitAdjust,            // fit_adjust: --fit (or Ollama) moved layers or cut the context
  kContextExceeded,      // context_exceeded: a request longer than the context (llama-server)
  kHostBufferFail,       // host_buffer_fail: a host buffer (CPU, CUDA_Host) failed
  kLoadEstimate,         // load_estimate: a front end's estimate before loading (LM Studio)
  // Ollama.
  kOllamaMarker,         // ollama_marker: a line of Ollama's server or runner
  kOllamaSystemMemory,   // ollama_system_memory: "model requires more system memory (X)"
  kOllamaOffload,        // ollama_offload: the offload estimate (layers, memory.required)
  // TGI (text-generation-inference).
  kTgiMarker,            // tgi_marker: a line of text_generation_launcher/server/router
  kTgiWarmupFail,        // tgi_warmup_fail: the warm-up prefill did not fit
  // transformers.
  kStaticCache,          // static_cache: a static KV cache
  kOffload,              // offload: device_map="auto" offload lines
  // nvidia-smi.
  kSmiGpu,               // smi_gpu: the per-GPU "used MiB / total MiB" cell
  kSmiProcess,           // smi_process: a row of the process table
  // Any engine.
  kMmHint,               // mm_hint: a multimodal hint (pixel values, encoder frames, ...)
  kPrompt,               // prompt: a request's prompt length
  kOtherError,           // other_error: a failure that is not out-of-memory (a CUDA fault, a
                         // kernel not built for the card, NCCL, Triton, a crash, a download,
                         // import or Python error); its class under Num::kErrorClass
  kHybridKvOff,          // hybrid_kv_off: vLLM turned its hybrid KV cache manager off for a KV
                         // connector
  kGgmlReserveBegin,     // ggml_reserve_begin: llama.cpp began reserving its compute graphs
  kOllamaRunnerDied,     // ollama_runner_died: "llama runner process has terminated: ..."
  kVllmSwapExhausted,    // vllm_swap_exhausted: V0 preempted by swapping, and the CPU swap space
                         // (--swap-space) ran out
  kMetalOverWorkingSet,  // metal_over_working_set: ggml-metal's buffers exceed the device's
                         // recommended working set
  kMmprojLoadFrame,      // mmproj_load_frame: a native backtrace frame of the vision projector's
                         // tensor loader (clip_model_loader::load_tensors, clip_init)
  kLoadFailedWords,      // load_failed_words: the log's own words say loading the model failed
                         // ("Failed to load model", "Error loading model"; not llama.cpp's)
  kKvCellsFull,          // kv_cells_full: llama.cpp's decode found no free cells in the KV cache
                         // for a batch (not an allocation: the cache is full)
  kParallelSequences,    // parallel_sequences: more than one sequence shares llama.cpp's context
                         // (server slots, n_seq_max, -np above 1)
  kRuntimeWords,         // runtime_words: the reporter's words place the failure after the
                         // model ran ("during training", "after step 3", "midway", "during
                         // inference")
  kGgmlDecodeFailed,     // ggml_decode_failed: llama_decode returned an error ("failed to
                         // decode, ret = -1"), not a full KV cache (ret = 1)
  kVllmMarker,           // vllm_marker: a line in vLLM's logger format ("ERROR 05-02 10:11:12
                         // [core.py:396] ..."), of either engine core
  kDeviceMemory,         // device_memory: llama.cpp's figures for one device (its name in the
                         // text): free as the model is placed, or its total
  kTrtllmMarker,         // trtllm_marker: a line of TensorRT-LLM's loggers, commands or package
  kGgmlKvTotal,          // ggml_kv_total: llama.cpp's KV total, printed once all its buffers exist
  kCaptureWords,         // capture_words: the report's words place the failure in CUDA graph
                         // capture ("died during CUDA-graph capture")
  kOtherInstanceWords,   // other_instance_words: the report's words say another instance of the
                         // engine shared the GPU ("two vLLM replicas", "a second instance")
  kLoadCall,             // load_call: the program's pasted code loads a model
                         // (AutoModelForCausalLM.from_pretrained(...)), outside a traceback
  kRunCall,              // run_call: the program's pasted code runs a model (generate, a
                         // pipeline's call, a forward, a training loop), outside a traceback
  kGgmlDeviceList,       // ggml_device_list: ggml-cuda listed its devices as the backend started
                         // ("found N CUDA devices")
};
inline constexpr int kEventKindCount = 88;

// The keys of an event's numbers: bytes for *_bytes, plain counts and ratios otherwise.
enum class Num : uint8_t {
  kWeightsBytes,              // weights_bytes
  kNonTorchBytes,             // non_torch_bytes
  kActivationPeakBytes,       // activation_peak_bytes
  kKvCacheBytes,              // kv_cache_bytes
  kTotalBytes,                // total_bytes
  kPeakTorchBytes,            // peak_torch_bytes
  kGpuMemoryUtilization,      // gpu_memory_utilization
  kBudgetBytes,               // budget_bytes
  kFreeBytes,                 // free_bytes
  kConsumedBytes,             // consumed_bytes
  kCudagraphBytes,            // cudagraph_bytes
  kKvCacheTokens,             // kv_cache_tokens
  kMaxNumSeqs,                // max_num_seqs
  kMaxModelLen,               // max_model_len
  kMaxConcurrency,            // max_concurrency
  kGpuBlocks,                 // gpu_blocks
  kKvNeededBytes,             // kv_needed_bytes
  kEstimatedMaxModelLen,      // estimated_max_model_len
  kTensorParallelSize,        // tensor_parallel_size
  kRequestedBytes,            // requested_bytes
  kProcessBytes,              // process_bytes
  kAllocatedBytes,            // allocated_bytes
  kReservedUnallocatedBytes,  // reserved_unallocated_bytes
  kListedProcessBytes,        // listed_process_bytes
  kListedProcesses,           // listed_processes
  kLargestListedProcessBytes,  // largest_listed_process_bytes: the largest of those processes
  kGpuIndex,                  // gpu_index
  kReservedBytes,             // reserved_bytes
  kPathHasSglang,             // path_has_sglang: a frame's file lies in SGLang (1 or 0)
  kPathHasVllm,               // path_has_vllm: ... in vLLM
  kPathHasTransformers,       // path_has_transformers: ... in transformers or accelerate
  kProfiledTokens,            // profiled_tokens
  kMemFractionStatic,         // mem_fraction_static
  kHost,                      // host: the failed buffer was host memory (1 or 0)
  kDuringDecode,              // during_decode: the failure came while decoding (1 or 0)
  kComputeBytes,              // compute_bytes
  kUsedBytes,                 // used_bytes
  kPromptTokens,              // prompt_tokens
  kPathIsGraphCapture,        // path_is_graph_capture: a frame's file runs graph capture (1)
  kPathIsKernelWarmup,        // path_is_kernel_warmup: ... a kernel warm-up (1)
  kPathIsSampler,             // path_is_sampler: ... the sampler (1)
  kMambaBlocks,               // mamba_blocks: Mamba cache blocks available
  kHostRequiredBytes,         // host_required_bytes: system memory a model requires
  kHostAvailableBytes,        // host_available_bytes: system memory available
  kPrefillTokens,             // prefill_tokens: a warm-up prefill's tokens (TGI)
  kSmiTotalBytes,             // smi_total_bytes: a GPU's total as nvidia-smi lists it
  kOffloadLayers,             // offload_layers: layers put on the GPU (Ollama's estimate)
  kModelLayers,               // model_layers: the model's layers (Ollama's estimate)
  kGpuOverheadBytes,          // gpu_overhead_bytes: OLLAMA_GPU_OVERHEAD in the estimate
  kOnlineQuantization,        // online_quantization: weights quantized while loading (1)
  kPathIsQuantizer,           // path_is_quantizer: a frame's file is a quantizer's (1)
  // SGLang's server arguments, for the plan the doctor rebuilds.
  kContextLength,             // context_length: SGLang's --context-length
  kChunkedPrefillSize,        // chunked_prefill_size
  kCudaGraphMaxBs,            // cuda_graph_max_bs
  kMaxTotalTokens,            // max_total_tokens
  kKvCacheDtypeBits,          // kv_cache_dtype_bits: 8 for an fp8 KV cache, 16 for bf16/fp16
  // A front end's estimate before loading (LM Studio).
  kEstimateFits,              // estimate_fits: the estimate said the model fits (1) or not (0)
  // A failure that is not out-of-memory.
  kErrorClass,                // error_class: its class (an index of the doctor's error table)
  // A training or generation run's own settings (transformers' Trainer, generate).
  kTrainBatchPerDevice,       // train_batch_per_device: the Trainer's per-device batch
  kGradAccumSteps,            // grad_accum_steps: the Trainer's gradient accumulation steps
  kNumBeams,                  // num_beams: generate's beams
  // Which layer-by-layer quantizer a frame's file or a line belongs to (an index of the doctor's
  // quantizer table: AutoGPTQ, GPTQModel, GPTQ-for-LLaMa, optimum, llm-compressor, auto-round,
  // AutoAWQ).
  kQuantizerTool,             // quantizer_tool
  // A progress bar's line (tqdm) drawn when its work began and closed, newline and all, only
  // when the work ended: printed after the error that stopped it, it was begun before it (1).
  kBarBegunBefore,            // bar_begun_before
  // A command line that starts a training run (a launcher with a training script or flags): 1.
  kTrainingLaunch,            // training_launch
  // The KV cache --kv-cache-memory-bytes fixed, as vLLM reported reserving it ("reserved X GiB
  // memory for KV Cache as specified by kv_cache_memory_bytes config").
  kFixedKvBytes,              // fixed_kv_bytes
  // The weights' dtype a from_pretrained call asks for (torch_dtype= / dtype=): 16 or 32 bits.
  kLoadDtypeBits,             // load_dtype_bits
  kServingOom,                // serving_oom: the engine says a request being served hit it (1)
  // vLLM's profile run skipped the multimodal encoder (--skip-mm-profiling): 1.
  kSkippedMmProfiling,        // skipped_mm_profiling
  // The layer a quantizer's progress line names, counted from 1 ("layer 3/32": 3;
  // "model.layers.0": 1).
  kQuantizerLayer,            // quantizer_layer
  // Unsloth's merged save began ("Merging 4bit and LoRA weights to 16bit"): 1.
  kUnslothMerge,              // unsloth_merge
  // The log names a weight quantization the run uses (an engine's "awq quantization is not
  // fully optimized yet", --quantization X, quantization=X): 1.
  kQuantizedRun,              // quantized_run
  // PyTorch's message: "with X allocated in private pools (e.g., CUDA Graphs)", printed only
  // where X is above zero (2.1+): CUDA graphs' pools, and any other private pool (a MemPool an
  // engine or library allocates from), so it places no phase by itself.
  kPrivatePoolBytes,          // private_pool_bytes
  // llama.cpp's --fit gave up because the user fixed what it would change ("failed to fit params
  // to free device memory: n_gpu_layers already set by user to N, abort"): N, the -ngl given.
  kFitAbortedLayers,          // fit_aborted_layers
  // A quantizer's export failed writing the quantized checkpoint (NVIDIA Model Optimizer's
  // "Cannot export model to the model_config"): 1.
  kQuantizedExport,           // quantized_export
  // llama.cpp's free memory of a device as it places the model ("using device CUDA0 (NAME) -
  // 10874 MiB free"; common_params' device list "(T MiB, F MiB free)").
  kDeviceFreeBytes,           // device_free_bytes
  // llama.cpp's total of a device (its memory breakdown's row "| - CUDA0 (NAME) | 16368 = ...",
  // the device list's "(T MiB, F MiB free)").
  kDeviceTotalBytes,          // device_total_bytes
  // TGI's --max-input-tokens (--max-input-length before 2.0): the longest prompt, which its
  // launcher and router require to be at most --max-batch-prefill-tokens.
  kMaxInputTokens,            // max_input_tokens
  // llama.cpp's failed buffer was the recurrent-state cache ("failed to allocate buffer for rs
  // cache": the fixed per-sequence state of Mamba and linear-attention layers): 1.
  kRecurrentState,            // recurrent_state
  // ggml-cuda's check before 2024 failed an allocation it does not name ("CUDA error 2 at
  // ggml-cuda.cu:N: out of memory"): 1.
  kUnnamedCudaCheck,          // unnamed_cuda_check
  // The memory of one GPU of the cloud instance the deployment code names (SageMaker's
  // instance_type="ml.g5.2xlarge": an A10G), as CUDA reports that card.
  kInstanceGpuBytes,          // instance_gpu_bytes
  // The GPUs of that instance (ml.g5.48xlarge: 8).
  kInstanceGpus,              // instance_gpus
  // Python's "The above exception was the direct cause of the following exception:", where a
  // handler raised its own error from the one before (`raise ... from e`): 1; 2 where the line
  // holds an out-of-memory error before it (a paste that lost its line ends).
  kExceptionChained,          // exception_chained
  // The engine warned that host memory will not hold what it reads into it (vLLM's prefetch of a
  // checkpoint larger than 90% of the available RAM): 1.
  kHostRamWarned,             // host_ram_warned
  // The bits bitsandbytes quantizes the weights to on load, as the program's code asks
  // (BitsAndBytesConfig(load_in_4bit=True), from_pretrained(..., load_in_8bit=True)): 4 or 8.
  kLoadQuantBits,             // load_quant_bits
  // llama.cpp's build number as its tools print it at start ("build: 7001 (hash) with ...").
  kGgmlBuild,                 // ggml_build
  // llama.cpp's flash attention as its context prints it ("llama_context: flash_attn    = 0",
  // "= disabled" / "= enabled" from the -fa on|off|auto flag, 2025+): 0 off and 1 on as a
  // number (the boolean -fa's builds), 2 off and 3 on as a word (-fa on|off|auto's builds).
  kFlashAttention,            // flash_attention
  // A diffusion pipeline runs (diffusers' package, its pipelines' num_inference_steps, a VAE or
  // UNet class): its convolutions are the VAE's and the UNet's, not a vision encoder's patch
  // embedding (1).
  kDiffusionRun,              // diffusion_run
  // A llama.cpp tool's own line (llama-server's "main: ..." / "srv " / "slot " lines, a
  // llama-cli or llama-server command line, the tools' "system_info:"): the program that ran the
  // library is llama.cpp's own, not another front end printing its lines (1).
  kGgmlFrontEnd,              // ggml_front_end
};
inline constexpr int kNumCount = 88;

// "torch_oom", "kv_cache_bytes", ...: the names in the comments above.
const char* EventKindName(EventKind kind);
const char* NumName(Num key);

}  // namespace vramfit

#endif  // VRAMFIT_DOCTOR_EVENTS_H_
