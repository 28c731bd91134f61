// The failures that are not out-of-memory (readers/reader.h): a line naming a CUDA fault, a
// kernel built for another card, a communication (NCCL) error, a Triton kernel's error, a crash,
// a download, import or Python error becomes an other_error event carrying its class
// (Num::kErrorClass, an index of kClasses). The diagnosis reads a log whose only failure is one
// of these as "not an out-of-memory", names the class, quotes the line and says what usually
// causes it; an out-of-memory in the same log wins, the other error is mentioned.
// The same messages said with "out of memory" (NCCL's "Cuda failure 'out of memory'", cuBLAS's
// CUBLAS_STATUS_ALLOC_FAILED, Triton's "[CUDA]: out of memory") are read as the out-of-memory
// they are. Every matcher is a substring search over the line, linear in it.
#include "doctor/readers/reader.h"

namespace vramfit::doctor {

// Lists of literals are written "..."sv: their lengths are known when compiled (a list of
// pointers is measured with strlen on every pass of a loop, on every line of a log).
using std::string_view_literals::operator""sv;
namespace {

// The classes, most specific first (a line is given the first that matches it).
enum class Kind : uint8_t {
  kIllegalAccess,
  kDeviceAssert,
  kNoKernelImage,
  kUnsupportedDtype,
  kNccl,
  kTriton,
  kDriver,
  kSegfault,
  kHub,
  kMissingModule,
  kCudaOther,
  kPython,
  // Added after the first twelve, whose indices are kept.
  kAbort,
  kModelFile,
  kRunnerExit,
  kHybridKv,
  kAllocatorConf,
  kRankLoad,
  kRunnerStopped,
  kFlashinferWorkspace,
  kLmStudioLoad,
  kLmStudioCrash,
  kHessianNumerical,
  kExllamaInputLength,
  kAwqFusedLength,
  kNoUva,
  kLlamaContext,
  kLossScale,
  kRunnerStartTimeout,
};

// What the doctor says of each class. Sources: PyTorch's CUDA check message (c10/cuda/
// CUDAException.cpp c10_cuda_check_implementation, 2.0+: "CUDA kernel errors might be
// asynchronously reported ... For debugging consider passing CUDA_LAUNCH_BLOCKING=1"); the CUDA
// runtime's error strings (cudaGetErrorString: cudaErrorIllegalAddress "an illegal memory access
// was encountered", cudaErrorAssert "device-side assert triggered", cudaErrorNoKernelImageForDevice
// "no kernel image is available for execution on the device"); NCCL's environment variables
// (NCCL_DEBUG, NCCL_P2P_DISABLE, NCCL 2.x documentation); Python's faulthandler
// (PYTHONFAULTHANDLER, 3.3+); vLLM's check of the dtype (vllm/platforms/cuda.py
// check_if_supports_dtype: "Bfloat16 is only supported on GPUs with compute capability of at
// least 8.0 ... --dtype=half", 0.6-0.11).
constexpr OtherErrorClass kClasses[] = {
    {"illegal_memory_access", "a GPU kernel's illegal memory access",
     "a kernel read or wrote outside its buffers: a bug in a kernel (an attention backend, a "
     "quantized or custom kernel, a CUDA graph replayed with other shapes) or a fault of the "
     "driver or the card (the system log's Xid lines tell); CUDA reports it asynchronously, so "
     "the traceback may name a later call. The size of the memory does not cause it",
     {{"CUDA_LAUNCH_BLOCKING=1",
       "each kernel launch waits for its kernel, so the traceback names the one that faulted "
       "(the advice of PyTorch's own message; slow, for finding the kernel only)"}}},
    {"device_assert", "a device-side assertion in a GPU kernel",
     "a kernel's own check failed, most often an index out of range: a token id beyond the "
     "embedding's rows (a tokenizer with more tokens than the model's vocabulary, added tokens "
     "without resized embeddings) or a label outside the classes",
     {{"CUDA_LAUNCH_BLOCKING=1",
       "each kernel launch waits for its kernel, so the traceback names the kernel whose "
       "assertion failed (the advice of PyTorch's own message)"}}},
    {"no_kernel_image", "a GPU kernel not built for this card",
     "the program's binaries (PyTorch, the engine's kernels, llama.cpp's CUDA build) hold no "
     "code for the card's compute capability: a card newer than the build (Blackwell's sm_120 on "
     "a build before CUDA 12.8) or older than its oldest target",
     {{"a build for the card's compute capability",
       "torch.cuda.get_device_capability() gives the card's and torch.cuda.get_arch_list() the "
       "build's; a source build takes TORCH_CUDA_ARCH_LIST (llama.cpp: "
       "CMAKE_CUDA_ARCHITECTURES)"}}},
    {"unsupported_dtype", "a data type or kernel this card does not support",
     "the run asked for what the card's compute capability lacks: bfloat16 and "
     "FlashAttention 2 need compute capability 8.0 (Ampere) or newer, SGLang 7.5 (Turing; "
     "vLLM, llama.cpp and transformers run on Volta)",
     {}},
    {"nccl", "an NCCL (GPU communication) error",
     "the communication between the GPUs or nodes failed: NCCL and driver versions that do not "
     "match, peer-to-peer access between the cards (PCIe ACS or IOMMU settings, cards without "
     "P2P), the network between nodes, or another rank that died first (its own error is the "
     "one to read)",
     {{"NCCL_DEBUG=INFO", "NCCL logs each step and names the call that failed and why"},
      {"NCCL_P2P_DISABLE=1",
       "shows whether peer-to-peer access between the cards is at fault (transfers then go "
       "through host memory, slower)"}}},
    {"triton", "a Triton kernel's error",
     "a Triton kernel failed to compile or to launch: its block sizes ask more shared memory per "
     "block than the card has (\"out of resource: shared memory\", a limit of the kernel, not "
     "the GPU's memory), often a kernel tuned for another card, or the CUDA error it names",
     {}},
    {"cuda_driver", "no working CUDA driver or device",
     "the program found no usable GPU: no driver, or one older than the CUDA runtime the build "
     "needs, no device visible (CUDA_VISIBLE_DEVICES, a container started without GPUs), or a "
     "PyTorch build without CUDA (the CPU-only wheel)",
     {{"nvidia-smi",
       "shows whether the driver sees the card, and the newest CUDA version the driver runs"}},
     Stage::kStartup},
    {"segfault", "a crash (segmentation fault)",
     "a native crash in a C++ or CUDA extension, the driver or a library built for another "
     "version; the lines before it name the last step",
     {{"PYTHONFAULTHANDLER=1",
       "Python prints every thread's stack when the process crashes, naming the call that "
       "crashed"}}},
    {"hub_access", "a model download error (Hugging Face Hub)",
     "the model could not be fetched: a wrong model id or revision, a gated model whose licence "
     "the account has not accepted or whose token is missing, or no network",
     {{"HF_TOKEN=<token>",
       "authenticates the download; a gated model also needs its licence accepted on its page"}},
     Stage::kLoad},
    {"missing_module", "a missing module or a mismatched build",
     "a package is not installed, or a compiled extension was built against another version of "
     "PyTorch or CUDA (\"undefined symbol\"): the installed versions do not match",
     {{"pip check", "lists the installed packages whose requirements are not met"}},
     Stage::kStartup},
    {"cuda_error", "a CUDA error that is not out-of-memory", "",
     {{"CUDA_LAUNCH_BLOCKING=1",
       "each kernel launch waits for its kernel, so the traceback names the call that failed "
       "(the advice of PyTorch's own message)"}}},
    {"python_exception", "a Python exception", "", {}},
    {"abort", "a crash (the program aborted)",
     "the program stopped itself (abort(), SIGABRT): a C++ exception nobody caught (the "
     "\"what():\" line names it), a failed check in native code (GGML_ASSERT, a C++ "
     "extension's CHECK) or a library that met a state it cannot go on from; the lines before "
     "it name the step",
     {{"PYTHONFAULTHANDLER=1",
       "Python prints every thread's stack when the process aborts, naming the call that "
       "aborted"}}},
    {"model_file", "a model file this program cannot read",
     "the model's file is one the loader does not know: an architecture or tokenizer newer than "
     "the program (llama.cpp's \"unknown model architecture\", \"unknown pre-tokenizer type\"), "
     "or a file cut short or damaged by its download",
     {{"a newer release of the program",
       "reads the architectures and tokenizers added since; a damaged file is fetched again "
       "(ollama pull, or the file's checksum against the model page's)"}},
     Stage::kLoad},
    // Ollama's server keeps only the runner's last words ("llama runner process has terminated:
    // CUDA error", "exit status 2"): an out-of-memory and other faults end the same way.
    {"runner_exit", "Ollama's runner stopped, and the log does not say why",
     "the server's line keeps only the runner's last words (\"CUDA error\", \"exit status 2\"): "
     "an out-of-memory ends the runner this way as often as a crash or an unreadable model; "
     "the runner's own lines before it (ggml's \"CUDA error: ...\", \"error loading model\") "
     "say which",
     {{"OLLAMA_DEBUG=1",
       "the server logs the runner's output in full; on Linux `journalctl -u ollama --no-pager` "
       "shows the server's log, where the runner's error precedes this line"}},
     Stage::kLoad, /*undecided=*/true},
    // vLLM without its hybrid KV cache manager needs one KV cache type for every layer
    // (v1/core/kv_cache_utils.py unify_hybrid_kv_cache_specs: "Hybrid KV cache manager is
    // disabled but failed to convert the KV cache specs to one unified type.", later "Failed to
    // promote local KV cache specs to one unified type."); a KV connector turns the manager off
    // (vllm/config/vllm.py VllmConfig.__post_init__: "Turning off hybrid kv cache manager
    // because `--kv-transfer-config` is set"), and the connector factory refuses the manager
    // kept on for a connector without SupportsHMA ("... does not support HMA but HMA is
    // enabled").
    {"hybrid_kv_cache_manager",
     "vLLM's hybrid KV cache manager is off where this model needs it, or on where the KV "
     "connector cannot work with it",
     "a model with linear-attention (Mamba-style) layers beside attention ones needs the hybrid "
     "KV cache manager; --disable-hybrid-kv-cache-manager or a KV connector (--kv-transfer-config, "
     "which turns it off) leaves it unable to give every layer one KV cache type; keeping it on "
     "with a connector that does not support it is refused as well",
     {{"--no-disable-hybrid-kv-cache-manager",
       "keeps the manager with a KV connector (vLLM 0.13+) whose class subclasses SupportsHMA; "
       "LMCacheConnectorV1 does not"},
      {"drop --kv-transfer-config (or --disable-hybrid-kv-cache-manager)",
       "the manager stays on, and the model's layer types keep their own KV caches"}},
     Stage::kStartup},
    // vLLM's sleep-mode allocator (vllm/device_allocator/cumem.py CuMemAllocator.__init__,
    // 0.7.3+): `assert "expandable_segments:True" not in conf`, "Expandable segments are not
    // compatible with memory pool. Please track https://github.com/pytorch/pytorch/issues/147851
    // ...". The setting PyTorch's own out-of-memory message recommends, so it is often set
    // after an earlier OOM; the engine then stops before it loads anything.
    {"allocator_conf",
     "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, which vLLM's sleep-mode allocator "
     "refuses",
     "vLLM's memory pool for sleep mode (enable_sleep_mode, used by RL trainers that colocate "
     "the engine) cannot work with PyTorch's expandable segments, and asserts they are off; "
     "nothing ran out of memory",
     {{"unset PYTORCH_CUDA_ALLOC_CONF (or drop expandable_segments:True from it)",
       "the allocator's default segments, which the memory pool can map"},
      {"enable_sleep_mode=False",
       "without sleep mode the setting is allowed, but the engine keeps its memory between "
       "rollouts"}},
     Stage::kLoad},
    // SGLang's rank 0 loaded its shard and found the other ranks had not
    // (model_executor/model_runner.py load_model: "TP rank 0 could finish the model loading, but
    // there are other ranks that didn't finish loading. It is likely due to unexpected failures
    // (e.g., OOM) or a slow node."): the other ranks' own errors say what stopped them.
    {"rank_load_failed", "another rank did not finish loading the model",
     "rank 0 loaded its shard, but other tensor-parallel ranks did not: their own errors (often "
     "a CUDA out-of-memory while loading their shard, on a GPU another process shares) come "
     "before this line in their output, or the node is slow",
     {{"read the other ranks' lines ([TP1], [TP2], ...) or each GPU's log",
       "the first error of the rank that stopped says why; an out-of-memory there is what to "
       "fix (nvidia-smi shows another process on its GPU)"}},
     Stage::kLoad, /*undecided=*/true, /*stage_stated=*/true},
    // Ollama's client for a runner that died while serving a request (server/routes.go, 2025+:
    // "model runner has unexpectedly stopped, this may be due to resource limitations or an
    // internal error, check ollama server logs for details"): the model had loaded.
    {"runner_stopped", "Ollama's runner stopped while serving, and the message does not say why",
     "the runner died during a request: an out-of-memory while it computed (a long prompt, an "
     "image, a compute buffer grown past the estimate) ends it this way as often as a crash; the "
     "server's log holds the runner's last error",
     {{"OLLAMA_DEBUG=1",
       "the server logs the runner's output in full; on Linux `journalctl -u ollama --no-pager` "
       "shows it, with the runner's error before its death"}},
     Stage::kRuntime, /*undecided=*/true, /*stage_stated=*/true},
    // FlashInfer's attention kernels take their temporaries (split-KV partial outputs:
    // batch_prefill_tmp_v, tmp_s) from a workspace buffer the engine allocates once at a fixed
    // size; include/flashinfer/allocator.h AlignedAllocator::aligned_alloc throws "Failed to
    // allocate memory for NAME with size N and alignment A in AlignedAllocator" when a batch's
    // plan needs more than is left in it (no cudaMalloc is made). vLLM sizes that buffer by
    // VLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE (vllm/envs.py, 0.11+; a constant before).
    {"flashinfer_workspace", "FlashInfer's workspace buffer was too small for a batch",
     "FlashInfer's attention plan for a large (prefill) batch needed more temporaries than the "
     "fixed workspace buffer the engine gave it; the GPU's free memory does not enter into it, "
     "so a lower memory utilization does not help",
     {{"VLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE above the size the error names (vLLM 0.11+)",
       "a larger workspace, allocated once at start-up"},
      {"--max-num-batched-tokens lower (SGLang: --chunked-prefill-size), or another attention "
       "backend",
       "a smaller prefill batch plans fewer temporaries"}},
     Stage::kRuntime},
    // LM Studio's load failure that names no reason: the app's toast "Failed to load the model"
    // / "Error loading model." / "(Exit code: N). Unknown error. Try a different model and/or
    // config." (0.2.x-0.4.x; 0.2.x copies it as JSON, "title": "Error loading model." or
    // "Failed to load model"). N is the engine process's exit status, a Windows status code
    // printed as a large number (0xC0000409, the abort a failed GGML_ASSERT raises, shows as
    // 18446744072635812000): the llama.cpp engine died, for lack of memory or any other fault.
    {"lmstudio_load_failed", "LM Studio could not load the model, and its message does not say why",
     "the llama.cpp engine LM Studio runs stopped while loading, with an exit code instead of a "
     "reason: a weight or context buffer that did not fit ends it this way, and so do a GPU or "
     "driver its runtime does not support and a model architecture it does not know; "
     "llama.cpp's own lines before this message (the Developer Logs, `lms log stream`) say which",
     {{"a lower GPU Offload (lms load --gpu 0.5; 0 keeps every layer on the CPU)",
       "if the model then loads, memory was the cause: raise GPU Offload until the load fails "
       "and keep the last setting that loaded, or lower the Context Length"},
      {"the Developer Logs (lms log stream) while loading again",
       "llama.cpp's error before this message names what failed (\"unable to allocate CUDA0 "
       "buffer\": the weights; \"failed to allocate compute pp buffers\" or a KV buffer: the "
       "Context Length)"}},
     Stage::kLoad, /*undecided=*/true, /*stage_stated=*/true},
    // LM Studio's "The model has crashed without additional information. (Exit code: N)"
    // (0.3.x-0.4.x): the engine died after the model had loaded, during a request.
    {"lmstudio_crashed", "LM Studio's model crashed while answering, and the message does not say "
     "why",
     "the llama.cpp engine died during a request: an out-of-memory while it computed (a context "
     "grown past what fits, an image) ends it this way as often as a fault; its last error "
     "(\"CUDA error: out of memory\" says memory) is in the Developer Logs",
     {{"a lower Context Length (and GPU Offload) in the model's load settings",
       "a smaller KV cache and compute buffers leave room for the request's work"},
      {"lms log stream while repeating the request",
       "the engine's last error before the crash"}},
     Stage::kRuntime, /*undecided=*/true, /*stage_stated=*/true},
    // A GPTQ quantizer inverting a layer's Hessian (X^T X of the calibration inputs, damped on
    // its diagonal) through a Cholesky factorisation: AutoGPTQ's fasterquant
    // (auto_gptq/quantization/gptq.py, 0.7: `H = torch.linalg.cholesky(H)`) stops with
    // PyTorch's "linalg.cholesky: The factorization could not be completed because the input is
    // not positive-definite (the leading minor of order N is not positive-definite)"
    // (aten/src/ATen/native/LinearAlgebraUtils.h, 1.9+); GPTQModel 5.x retries with more damping
    // and then logs "Hessian remained non positive-definite after diagonal floor attempts"
    // (gptqmodel/quantization/gptq.py hessian_inverse).
    {"gptq_hessian_numerical",
     "a GPTQ layer's Hessian that could not be factorised (a numerical failure, not memory)",
     "GPTQ inverts each layer's Hessian, built from the calibration inputs and damped on its "
     "diagonal; too few or too uniform calibration tokens, or input channels no sample reaches, "
     "leave it singular, and the factorisation stops. Memory did not run out",
     {{"damp_percent=0.1 or more (AutoGPTQ BaseQuantizeConfig, GPTQModel QuantizeConfig; "
       "llm-compressor GPTQModifier(dampening_frac=0.1))",
       "adds more of the diagonal's mean before the factorisation, which makes the matrix "
       "positive-definite"},
      {"more and longer calibration samples (256 or more of 256+ tokens each), shuffled",
       "every input channel then sees data and the Hessian has full rank"}},
     Stage::kLoad, /*undecided=*/false, /*stage_stated=*/true},
    // The exllama (v1) kernel of AutoGPTQ and GPTQModel for act-order GPTQ models sizes its
    // temp_state buffer at load for max_input_length tokens (EXLLAMA_DEFAULT_MAX_INPUT_LENGTH,
    // 2048) and checks each input against it (exllama/cuda_func/q4_matmul.cu: "The temp_state
    // buffer is too small in the exllama backend for GPTQ with act-order. Please call the
    // exllama_set_max_input_length function to increase the buffer size for a sequence length
    // >=N"); optimum's GPTQ path (transformers' GPTQConfig) calls the same function with its
    // max_input_length.
    {"exllama_max_input_length",
     "an input longer than the exllama kernel's buffer was sized for (not memory)",
     "the exllama kernel for act-order GPTQ models keeps a scratch buffer sized at load for "
     "max_input_length tokens (2048 unless set); a longer prompt stops at its check. The GPU's "
     "memory did not run out: the buffer is sized by a setting",
     {{"exllama_set_max_input_length(model, max_input_length=N) after loading, N at least the "
       "sequence length the error names (transformers: GPTQConfig(bits=4, "
       "max_input_length=N))",
       "re-sizes the buffer for N tokens (a little more memory)"},
      {"the exllamav2 or Marlin kernel (GPTQConfig(bits=4, exllama_config={\"version\": 2}); "
       "GPTQModel backend=BACKEND.EXLLAMA_V2 or MARLIN)",
       "their scratch space follows the input, with no length set at load"}},
     Stage::kRuntime, /*undecided=*/false, /*stage_stated=*/true, /*length_setting=*/true},
    // AutoAWQ's fused modules (from_quantized(..., fuse_layers=True)) build the rotary table
    // and the KV cache for max_seq_len tokens and batch_size sequences; a longer input fails the
    // table's shape check (awq/modules/fused/attn.py RoPE.reshape_for_broadcast, 0.2.x:
    // `assert freqs_cis.shape == (x.shape[1], x.shape[-1])`, a bare AssertionError).
    {"awq_fused_max_seq_len",
     "a prompt longer than AutoAWQ's fused layers were built for",
     "from_quantized(..., fuse_layers=True) builds the fused attention's rotary table and KV "
     "cache for max_seq_len tokens (2048 unless set); a longer input fails their shape check",
     {{"from_quantized(..., max_seq_len=N) with N at least the prompt's tokens plus "
       "max_new_tokens",
       "the fused cache is preallocated for N tokens: its memory grows with N and batch_size"},
      {"from_quantized(..., fuse_layers=False), or a shorter prompt",
       "the unfused model takes any length, its cache growing as it generates"}},
     Stage::kRuntime, /*undecided=*/false, /*stage_stated=*/true, /*length_setting=*/true},
    // vLLM's buffers that the GPU reads from pinned host memory (UVA): --cpu-offload-gb on V1
    // (model_executor/models/utils.py maybe_offload_to_cpu: `assert uva_available, "V1 CPU
    // offloading requires uva (pin memory) support"`, 0.8+) and model runner V2's request
    // state (v1/worker/gpu/buffer_utils.py UvaBuffer: "UVA is not available", 2026); vLLM turns
    // pinned memory off under WSL (vllm/utils is_pin_memory_available), so both stop there.
    {"uva_unavailable",
     "vLLM needs pinned host memory (UVA) that this system does not give it (WSL)",
     "vLLM reads these buffers from page-locked host memory over the bus (unified virtual "
     "addressing); it turns pinned memory off under WSL, so the feature that needs it refuses "
     "to start. Memory did not run out",
     {{"no --cpu-offload-gb under WSL (or run on native Linux)",
       "CPU offloading of the weights needs UVA; without it the weights must fit the GPU (a "
       "quantized checkpoint, more GPUs)"},
      {"VLLM_USE_V2_MODEL_RUNNER=0",
       "model runner V1 keeps its request state on the GPU, without UVA buffers"}},
     Stage::kStartup},
    // llama-cpp-python's context refused (llama_cpp/_internals.py LlamaContext.__init__:
    // `raise ValueError("Failed to create llama_context")` when llama_new_context_with_model /
    // llama_init_from_model returns NULL, 0.2-0.3): with verbose=False nothing else shows. The
    // KV cache and the compute buffers are what the context allocates, so memory is the usual
    // reason, but an unsupported setting fails the same way.
    {"llama_context_failed",
     "llama-cpp-python could not create the context, and its message does not say why",
     "the context allocates the KV cache (n_ctx tokens; n_ctx=0 takes the model's whole "
     "training context) and the compute buffers (n_batch, n_ubatch): a buffer that did not fit "
     "is the usual reason; llama.cpp's own lines, shown with verbose=True, name it",
     {{"Llama(..., n_ctx=4096) (a smaller context; not 0, which takes the model's whole "
       "training context)",
       "a smaller KV cache; if the model then loads, memory was the cause"},
      {"Llama(..., verbose=True) while loading again",
       "llama.cpp then prints which buffer failed (\"failed to allocate buffer for kv cache\", "
       "\"failed to allocate compute pp buffers\")"}},
     Stage::kKvCache, /*undecided=*/true, /*stage_stated=*/true},
    // fp16 training's dynamic loss scaling run down to its floor (DeepSpeed runtime/fp16/
    // loss_scaler.py DynamicLossScaler.update_scale, 0.3+: `raise Exception("Current loss scale
    // already at minimum - cannot decrease scale anymore. Exiting run.")`): every step
    // overflowed, a numerical failure.
    {"fp16_loss_scale_minimum",
     "fp16 training's loss scale ran down to its minimum (gradients overflow at every step)",
     "the fp16 gradients overflowed at every step until the dynamic loss scale could not be "
     "lowered further: a learning rate too high for fp16, bad data (NaN or inf), or a model "
     "whose activations exceed fp16's range. Memory did not run out",
     {{"bf16 instead of fp16 (DeepSpeed \"bf16\": {\"enabled\": true}; Trainer bf16=True) on "
       "cards that support it",
       "bfloat16 has fp32's range: no loss scaling, no overflow"},
      {"a lower learning rate or more warm-up; check the data for NaN/inf",
       "the gradients stay in fp16's range"}},
     Stage::kRuntime, /*undecided=*/false, /*stage_stated=*/true},
    // Ollama's scheduler giving up on a runner that made no progress loading
    // (llm/server.go WaitUntilRunning, 0.1.3x+: "timed out waiting for llama runner to start -
    // progress 0.00 - ", after OLLAMA_LOAD_TIMEOUT, 5 minutes by default): slow storage or a
    // very large model read from disk, or a runner stuck; not an allocation failure.
    {"runner_start_timeout", "Ollama timed out waiting for its runner to load the model",
     "the runner made no load progress within OLLAMA_LOAD_TIMEOUT (5 minutes by default): a "
     "model read from slow or network storage, or a runner that hung; an allocation failure "
     "ends the runner with its own error instead",
     {{"OLLAMA_LOAD_TIMEOUT=30m",
       "gives a slow load time to finish (the progress figure shows how far it got)"},
      {"OLLAMA_DEBUG=1",
       "the runner's own lines show whether it is reading the model or stuck"}},
     Stage::kLoad, /*undecided=*/true, /*stage_stated=*/true},
};
static_assert(std::size(kClasses) == static_cast<size_t>(Kind::kRunnerStartTimeout) + 1);

// An out-of-memory said in words the other classes use: such a line is the memory failure.
// PyTorch's caching allocator asserting on NVML as it composes its out-of-memory message
// (readers/pytorch.cc NvmlAssertOom) is one too.
bool SaysOutOfMemory(const LineView& s) {
  return Has(s, "out of memory") || Has(s, "Out of memory") || Has(s, "OUT OF MEMORY") ||
         Has(s, "OutOfMemory") || Has(s, "ALLOC_FAILED") || Has(s, "MemoryAllocation") ||
         Has(s, "MemoryError") || NvmlAssertOom(s);
}

// PyTorch's C++ warnings: "[W1203 12:00:00.000 ProcessGroupNCCL.cpp:...]" (c10's glog-style
// prefix: W and the date).
bool C10Warning(std::string_view s) {
  for (size_t at = s.find("[W"); at != std::string_view::npos; at = s.find("[W", at + 1)) {
    if (at + 2 < s.size() && std::isdigit(static_cast<unsigned char>(s[at + 2]))) return true;
  }
  return false;
}

// A line logged as a warning or notice: a handled error the run went on from ("Failed to import
// from vllm._C with ImportError(...)"), never the failure.
bool Notice(const LineView& s) {
  return Has(s, "WARNING") || Has(s, "level=WARN") || Has(s, "Warning:") ||
         Has(s, "UserWarning") || Has(s, "level=INFO") || Has(s, " INFO ") ||
         s.substr(0, 5) == "INFO " || Has(s, "DEBUG") || C10Warning(s);
}

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

// The exception a traceback's last line names, "ValueError: ..." or
// "huggingface_hub.errors.GatedRepoError: ..." (Python's traceback.format_exception_only:
// "<qualified name>: <message>", or the name alone): a name ending in Error or Exception and
// followed by ": " or the line's end, after the line's start, a space or a prefix's bracket.
// Sets *message to what follows it. "" when the line holds none.
std::string_view RaisedName(std::string_view s, std::string_view* message) {
  for (const std::string_view suffix : {std::string_view("Error"), std::string_view("Exception")}) {
    for (size_t at = s.find(suffix); at != std::string_view::npos;
         at = s.find(suffix, at + 1)) {
      const size_t end = at + suffix.size();
      const bool colon = end < s.size() && s[end] == ':' &&
                         (end + 1 == s.size() || s[end + 1] == ' ');
      if (!colon && end != s.size()) continue;
      size_t b = at;
      while (b > 0 && IsNameChar(s[b - 1])) --b;
      if (b > 0 && s[b - 1] != ' ' && s[b - 1] != ']' && s[b - 1] != ')' && s[b - 1] != '|' &&
          s[b - 1] != '\t')
        continue;
      const std::string_view name = s.substr(b, end - b);
      // A bare "Error: ..." is a program's message (Ollama's command line), not a class.
      if (name == "Error") continue;
      // The class's own name (the last dotted part) starts upper-case: "RuntimeError", not a
      // word such as "error" or a path.
      const size_t dot = name.rfind('.');
      const char first = name[dot == std::string_view::npos ? 0 : dot + 1];
      if (!std::isupper(static_cast<unsigned char>(first))) continue;
      *message = colon ? s.substr(std::min(s.size(), end + 2)) : std::string_view();
      return name;
    }
  }
  return {};
}

// Exceptions that wrap or follow the failure rather than are it: an engine's "see the root cause
// above" (vLLM's EngineCore and WorkerProc start-up, EngineDeadError; torchrun's
// ChildFailedError; Ray's actor errors), a closed connection or a cancelled task, and every
// message about memory (the memory readers' lines).
bool Wrapper(std::string_view name, std::string_view message) {
  // SGLang's scheduler check of its token pool's bookkeeping (scheduler.py check_memory:
  // "KV cache pool leak detected!" 0.2-0.3, "token_to_kv_pool memory leak detected!" 0.4,
  // "token_to_kv_pool_allocator memory leak detected!" 0.5): a bug, not an allocation.
  if (Has(message, "leak detected!")) return false;
  for (const std::string_view n :
       {"EngineDeadError"sv, "EngineGenerateError"sv, "ChildFailedError"sv, "CancelledError"sv,
        "BrokenPipeError"sv, "ConnectionResetError"sv, "ActorDiedError"sv, "RayActorError"sv,
        "RayTaskError"sv, "ProcessExitedException"sv, "OutOfMemoryError"sv, "MemoryError"sv}) {
    if (name.size() >= n.size() && name.substr(name.size() - n.size()) == n) return true;
  }
  for (const std::string_view m :
       {"root cause"sv, "stack trace above"sv, "Engine core initialization failed"sv,
        "EngineCore failed"sv, "failed to start"sv, "Worker failed with error"sv, "emory"sv,
        "OOM"sv, "KV cache"sv, "cache blocks"sv, "max seq len"sv, "mem_fraction"sv,
        "mem-fraction"sv,
        // cuBLAS's and cuDNN's failures to set up, which a full card usually causes.
        "NOT_INITIALIZED"sv, "CUDNN_STATUS"sv}) {
    if (Has(message, m)) return true;
  }
  return false;
}

// The line ends with "out of", or "out of" and the start of "memory" ("out of mem"), or an
// exception's message is the start of PyTorch's ("RuntimeError: CUDA" + "error: out of
// memory"): a message saying out of memory that a wrap or a reflow cut there.
bool EndsInOutOfMemoryCut(std::string_view s) {
  s = Trimmed(s);
  std::string_view message;
  if (!RaisedName(s, &message).empty() && message.size() >= 4) {
    for (const std::string_view whole : {"CUDA error: out of memory"sv, "CUDA out of memory"sv,
                                         "HIP error: out of memory"sv}) {
      if (message.size() < whole.size() && whole.starts_with(message)) return true;
    }
  }
  const size_t at = s.rfind(" out of");
  if (at == std::string_view::npos) return false;
  const std::string_view rest = s.substr(at + 7);
  constexpr std::string_view kMemory = "memory";
  return rest.empty() || (rest.size() > 1 && rest[0] == ' ' && kMemory.starts_with(rest.substr(1)));
}

// The class of a line's non-memory error, if it names one.
std::optional<Kind> ClassOf(const LineView& s) {
  // Every needle below holds one of these: most lines hold none and stop here.
  const bool maybe = Has(s, "rror") || Has(s, "egmentation") || Has(s, "SIGSEGV") ||
                     Has(s, "segfault") || Has(s, "illegal") || Has(s, "ssert") ||
                     Has(s, "kernel image") || Has(s, "compatible with the current") ||
                     Has(s, "NCCL") || Has(s, "nccl") || Has(s, "riton") ||
                     Has(s, "No module named") || Has(s, "undefined symbol") ||
                     Has(s, "shared object") || Has(s, "misaligned") ||
                     Has(s, "launch failure") || Has(s, "access fault") ||
                     Has(s, "gated repo") || Has(s, "model identifier") || Has(s, "driver") ||
                     Has(s, "CUDA-capable") || Has(s, "CUBLAS_STATUS") ||
                     Has(s, "only supported on") || Has(s, "only supports") ||
                     Has(s, "exitcode: -11") || Has(s, "code 139") ||
                     Has(s, "not compiled with CUDA") || Has(s, "Aborted") ||
                     Has(s, "SIGABRT") || Has(s, "exitcode: -6)") || Has(s, "code 134") ||
                     Has(s, "terminate called") || Has(s, "model architecture") ||
                     Has(s, "pre-tokenizer") || Has(s, "magic characters") ||
                     Has(s, "file bounds") || Has(s, "tensor info") ||
                     Has(s, "process has terminated") || Has(s, "GGML_ASSERT(") ||
                     Has(s, "resource limitations") || Has(s, "POST predict:") ||
                     Has(s, "Failed to load") || Has(s, "crashed without") ||
                     Has(s, "positive-definite") || Has(s, "temp_state buffer") ||
                     Has(s, "UVA is not available") || Has(s, "requires uva") ||
                     Has(s, "Failed to create llama_context") ||
                     Has(s, "loss scale already at minimum") ||
                     Has(s, "timed out waiting for llama runner");
  if (!maybe) return std::nullopt;
  if (Has(s, "not positive-definite") || Has(s, "non positive-definite")) {
    return Kind::kHessianNumerical;
  }
  if (Has(s, "temp_state buffer is too small")) return Kind::kExllamaInputLength;
  // (Not their raise statements' code lines, which a paste that lost its line ends keeps on the
  // message's line.)
  if (Has(s, "Failed to create llama_context") &&
      !Has(s, "(\"Failed to create llama_context\")")) {
    return Kind::kLlamaContext;
  }
  if (Has(s, "Exception: Current loss scale already at minimum")) return Kind::kLossScale;
  if (Has(s, "timed out waiting for llama runner to start")) return Kind::kRunnerStartTimeout;
  if (Has(s, "UVA is not available") || Has(s, "requires uva (pin memory) support")) {
    return Kind::kNoUva;
  }
  if (Has(s, "Expandable segments are not compatible with memory pool")) {
    return Kind::kAllocatorConf;
  }
  if (Has(s, "there are other ranks that didn't finish loading")) return Kind::kRankLoad;
  if (Has(s, "in AlignedAllocator") && Has(s, "Failed to allocate memory for")) {
    return Kind::kFlashinferWorkspace;
  }
  if (Has(s, "illegal memory access") || Has(s, "cudaErrorIllegalAddress") ||
      Has(s, "CUDA_ERROR_ILLEGAL_ADDRESS") || Has(s, "misaligned address") ||
      Has(s, "an illegal instruction was encountered") || Has(s, "unspecified launch failure") ||
      Has(s, "cudaErrorLaunchFailure") || Has(s, "CUBLAS_STATUS_EXECUTION_FAILED") ||
      Has(s, "hipErrorIllegalAddress") || Has(s, "Memory access fault by GPU")) {
    return Kind::kIllegalAccess;
  }
  // "device-side assert triggered"; the kernel's own line before it: ".../Indexing.cu:1422:
  // indexSelectLargeIndex: block: [..], thread: [..] Assertion `srcIndex < srcSelectDimSize`
  // failed."
  // PyTorch's advice under every CUDA error ("Compile with `TORCH_USE_CUDA_DSA` to enable
  // device-side assertions.", c10/cuda/CUDAException.cpp, 2.1+; ROCm builds' hipified
  // "TORCH_USE_HIP_DSA") names no assertion.
  if ((Has(s, "device-side assert") && !Has(s, "TORCH_USE_CUDA_DSA") &&
       !Has(s, "TORCH_USE_HIP_DSA")) ||
      Has(s, "cudaErrorAssert") ||
      (Has(s, "Assertion `") && Has(s, ".cu:") && Has(s, "failed"))) {
    return Kind::kDeviceAssert;
  }
  // PyTorch's warning before the failure ("NVIDIA GeForce RTX 5090 with CUDA capability sm_120
  // is not compatible with the current PyTorch installation", torch/cuda/__init__.py
  // _check_capability) says the same; ROCm's "invalid device function"
  // (hipErrorInvalidDeviceFunction) is the card's architecture missing from the build.
  if (Has(s, "no kernel image is available") || Has(s, "cudaErrorNoKernelImageForDevice") ||
      Has(s, "is not compatible with the current PyTorch installation") ||
      Has(s, "invalid device function")) {
    return Kind::kNoKernelImage;
  }
  // SGLang's ModelRunner.load_model refuses a card below compute capability 7.5 ("SGLang only
  // supports sm75 and above.", srt/model_executor/model_runner.py).
  if (Has(s, "Bfloat16 is only supported on GPUs with compute capability") ||
      Has(s, "FlashAttention only supports Ampere GPUs or newer") ||
      Has(s, "bf16 is only supported on") || Has(s, "SGLang only supports sm75 and above")) {
    return Kind::kUnsupportedDtype;
  }
  // NCCL's failures as PyTorch and vLLM raise them ("NCCL error in: .../ProcessGroupNCCL.cpp:
  // 1970, unhandled cuda error", "NCCL Error 1: unhandled cuda error" before 1.12; vLLM's
  // pynccl "NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)"), NCCL's
  // result names, and the watchdog's collective timeout.
  if (Has(s, "NCCL error") || Has(s, "NCCL Error ") || Has(s, "ncclInternalError") ||
      Has(s, "ncclUnhandledCudaError") || Has(s, "ncclSystemError") ||
      Has(s, "ncclInvalidUsage") || Has(s, "ncclInvalidArgument") ||
      Has(s, "ncclRemoteError") || Has(s, "DistBackendError") ||
      Has(s, "Watchdog caught collective operation timeout") ||
      Has(s, "NCCL communicator was aborted")) {
    return Kind::kNccl;
  }
  if (Has(s, "Triton Error [") || Has(s, "triton.runtime.errors") ||
      Has(s, "OutOfResources: out of resource") || Has(s, "triton.compiler.errors") ||
      Has(s, "PTXASError")) {
    return Kind::kTriton;
  }
  if (Has(s, "CUDA driver version is insufficient") || Has(s, "Found no NVIDIA driver") ||
      Has(s, "NVIDIA driver on your system is too old") ||
      Has(s, "no CUDA-capable device is detected") || Has(s, "CUDA driver initialization failed") ||
      Has(s, "cudaErrorNoDevice") || Has(s, "cudaErrorInsufficientDriver") ||
      Has(s, "forward compatibility was attempted on non supported HW") ||
      Has(s, "No CUDA GPUs are available") || Has(s, "failed to initialize CUDA") ||
      Has(s, "Torch not compiled with CUDA enabled")) {
    return Kind::kDriver;
  }
  // The shell's "Segmentation fault (core dumped)", Python's "Fatal Python error: Segmentation
  // fault", Go's "SIGSEGV: segmentation violation" (Ollama's runner), the kernel's "segfault at",
  // torchrun's worker "failed (exitcode: -11)", Docker's "exited with code 139" (128 + 11).
  if (Has(s, "Segmentation fault") || Has(s, "SIGSEGV") || Has(s, "segfault at ") ||
      Has(s, "exitcode: -11)") || Has(s, "exited with code 139")) {
    return Kind::kSegfault;
  }
  // The shell's "Aborted (core dumped)" (a script's "line 3: 1234 Aborted (core dumped) python
  // x.py"), Python's "Fatal Python error: Aborted", Go's "SIGABRT: abort" (Ollama's runner),
  // torchrun's worker "failed (exitcode: -6)", Docker's "exited with code 134" (128 + 6), and
  // libstdc++'s "terminate called without an active exception" or "... recursively" (an
  // exception's "terminate called after throwing" is followed by its what() line, read in Match).
  // ggml's failed check before its abort (ggml.c ggml_abort: "<file>:<line>: GGML_ASSERT(<x>)
  // failed"), the line that names it.
  // A check on an allocation ("GGML_ASSERT(buf != NULL && \"failed to allocate buffer\")") is
  // not claimed: a full card fails it.
  if ((Has(s, "GGML_ASSERT(") && Has(s, ") failed") && !Has(s, "alloc") && !Has(s, "buf")) ||
      (Has(s, "Aborted") && Has(s, "core dumped")) || Trimmed(s) == "Aborted" ||
      Has(s, "Fatal Python error: Aborted") || Has(s, "SIGABRT") || Has(s, "exitcode: -6)") ||
      Has(s, "exited with code 134") ||
      (Has(s, "terminate called") && !Has(s, "after throwing"))) {
    return Kind::kAbort;
  }
  // llama.cpp's loader (llama-model-loader.cpp / llama-vocab.cpp, b3000+): "error loading model
  // architecture: unknown model architecture: 'X'", "unknown pre-tokenizer type: 'X'"; gguf.cpp's
  // "invalid magic characters", a file cut short ("failed to read tensor data", "tensor data is
  // not within the file bounds").
  if (Has(s, "unknown model architecture") || Has(s, "unknown pre-tokenizer type") ||
      Has(s, "invalid magic characters") || Has(s, "not within the file bounds") ||
      Has(s, "failed to read tensor info")) {
    return Kind::kModelFile;
  }
  // Ollama's server reporting its runner's end (llm/server.go WaitUntilRunning, 0.1.3x-0.12:
  // "llama runner process has terminated: <the runner's last error line>", or "exit status N"
  // when it printed none). Said with an allocation failure it is the out-of-memory the Ollama
  // and llama.cpp readers read.
  if (Has(s, "model runner has unexpectedly stopped")) return Kind::kRunnerStopped;
  // LM Studio's toasts (lmstudio_load_failed, lmstudio_crashed above). ("Failed to load the
  // model" without LM Studio's emoji is also llama.cpp's tools' and text-generation-webui's.)
  if (Has(s, "Try a different model and/or config") ||
      Has(s, "Please check settings and try loading the model again") ||
      Has(s, "\xf0\x9f\xa5\xb2 Failed to load the model") ||
      Has(s, "\"title\": \"Error loading model.\"") ||
      Has(s, "\"title\": \"Failed to load model\"") || Trimmed(s) == "Error loading model.") {
    return Kind::kLmStudioLoad;
  }
  if (Has(s, "The model has crashed without additional information")) {
    return Kind::kLmStudioCrash;
  }
  // The client's error of releases before the message above (api/client.go, 0.1.x-0.5): the
  // request's connection to the runner closed mid-answer, "Error: POST predict: Post
  // \"http://127.0.0.1:N/completion\": EOF" (the runner died while serving).
  if (Has(s, "POST predict:") && (Has(s, ": EOF") || Has(s, "connection reset"))) {
    return Kind::kRunnerStopped;
  }
  // Also the llama-server era's "llama-server process has terminated: ..." (0.30+), and the
  // client's words for a runner that died loading or serving ("model failed to load, this may be
  // due to resource limitations or an internal error", "model runner has unexpectedly stopped,
  // this may be due to resource limitations ...", llm/server.go and server/routes.go).
  if ((Has(s, "runner process has terminated") || Has(s, "llama-server process has terminated") ||
       Has(s, "may be due to resource limitations")) &&
      !Has(s, "unable to allocate") && !Has(s, "failed to allocate") &&
      !Has(s, "cudaMalloc failed") && !Has(s, "out-of-memory") && !Has(s, "out of memory")) {
    return Kind::kRunnerExit;
  }
  const bool notice = Notice(s);
  if (!notice && (Has(s, "KV cache specs to one unified type") ||
                  Has(s, "does not support HMA but HMA is enabled"))) {
    return Kind::kHybridKv;
  }
  if (!notice &&
      (Has(s, "GatedRepoError") || Has(s, "RepositoryNotFoundError") ||
       Has(s, "Cannot access gated repo") || Has(s, "401 Client Error") ||
       Has(s, "403 Client Error") || Has(s, "is not a valid model identifier") ||
       Has(s, "LocalEntryNotFoundError") || Has(s, "HFValidationError") ||
       Has(s, "RevisionNotFoundError") ||
       Has(s, "We couldn't connect to 'https://huggingface.co'"))) {
    return Kind::kHub;
  }
  std::string_view message;
  const std::string_view name = RaisedName(s, &message);
  if (!notice && ((!name.empty() && (name.ends_with("ModuleNotFoundError") ||
                                      name.ends_with("ImportError"))) ||
                  (Has(s, "undefined symbol") && !name.empty()))) {
    return Kind::kMissingModule;
  }
  // "CUDA error: <message>" (PyTorch's C10_CUDA_CHECK, ggml-cuda's ggml_cuda_error), HIP's, and
  // cuBLAS's status names; "CUBLAS_STATUS_NOT_INITIALIZED" usually means cuBLAS found no memory
  // for its handle, so it is not claimed here (readers/pytorch.cc reads it with "cublasCreate"
  // as the out-of-memory).
  if ((Has(s, "CUDA error: ") || Has(s, "HIP error: ") || Has(s, "CUBLAS_STATUS_")) &&
      !Has(s, "NOT_INITIALIZED") && !Has(s, "CUDNN_STATUS")) {
    return Kind::kCudaOther;
  }
  if (!notice && !name.empty() && !Wrapper(name, message)) return Kind::kPython;
  return std::nullopt;
}

void Match(const Line& line) {
  const LineView s = line.view();
  // A traceback's code line raising or checking the error (`raise RuntimeError(f"NCCL error:
  // {error_str}")`) is the source, not the message: the message follows the traceback.
  // (AutoAWQ's fused rotary table's shape check is the one such line that names its failure:
  // the AssertionError after it names nothing.)
  if (line.after_frame && Has(s, "assert freqs_cis.shape ==")) {
    line.Emit(EventKind::kOtherError, "any").values[Num::kErrorClass] =
        static_cast<double>(Kind::kAwqFusedLength);
    return;
  }
  // (Unless the message follows the code on the same line, as in a paste that lost its line
  // ends: a named class read there stands.)
  if (line.after_frame && (Has(s, "raise ") || Has(s, "assert ") || Has(s, "logger."))) {
    const std::string_view t = line.text;
    const size_t code = t.find("raise ");
    const size_t message = code == std::string_view::npos ? code : t.find("Exception: ", code);
    if (message == std::string_view::npos) return;
    const std::optional<Kind> named = ClassOf(LineView(t.substr(message), nullptr));
    if (!named || *named == Kind::kPython) return;
    line.Emit(EventKind::kOtherError, "any").values[Num::kErrorClass] =
        static_cast<double>(*named);
    return;
  }
  // The memory failures said in these classes' words; NCCL's own allocation of its buffers
  // also as "Failed to CUDA calloc N bytes" (src/include/alloc.h ncclCudaCalloc, 2.1x-2.2x,
  // under "Last error:").
  // (NCCL's and Triton's also where a paste or a terminal parted "out of" from "memory".)
  // (cuBLAS's CUBLAS_STATUS_ALLOC_FAILED in CUDA 12's words, cublasGetStatusString: "the
  // resource allocation failed", as ggml-cuda prints it: "CUDA error: the resource allocation
  // failed".)
  if ((Has(s, "CUBLAS_STATUS_ALLOC_FAILED")) ||
      (Has(s, "CUDA error: the resource allocation failed")) ||
      (Has(s, "memory'") && !WholeBoth(line, "Cuda failure", "'out of memory'").empty()) ||
      Has(s, "Failed to CUDA calloc") ||
      (Has(s, "memory") && !WholeBoth(line, "Triton Error [CUDA]", "out of memory").empty())) {
    line.Emit(EventKind::kCudaOom, "any");
    return;
  }
  // A C++ exception nobody caught, as libstdc++'s terminate handler prints it (libsupc++/
  // vterminate.cc __verbose_terminate_handler, GCC 4.x-14): "terminate called after throwing an
  // instance of 'T'", for a std::exception "  what():  <message>", then abort(). std::bad_alloc
  // is an allocation of host memory that failed; a message saying out of memory ("CUDA error: out
  // of memory" from c10::Error) is the memory failure the other readers read; any other message
  // is the crash's error, of the class it names, else an abort.
  if (Has(s, "std::bad_alloc") && !Notice(s)) {
    line.Emit(EventKind::kHostBufferFail, "any");
    return;
  }
  if (const size_t at = s.find("what():"); at != std::string_view::npos) {
    const LineView message(Trimmed(s.substr(at + 7)), nullptr);
    if (message.empty() || SaysOutOfMemory(message)) return;
    std::optional<Kind> named = ClassOf(message);
    if (!named || *named == Kind::kPython) named = Kind::kAbort;
    line.Emit(EventKind::kOtherError, "any").values[Num::kErrorClass] =
        static_cast<double>(*named);
    return;
  }
  std::optional<Kind> kind = ClassOf(s);
  // (Nor a line whose message ends cut in "out of memory": the next line completes it.)
  if (kind && (SaysOutOfMemory(s) || EndsInOutOfMemoryCut(s))) return;
  // A message a terminal wrapped mid-word ("... an illegal memory acc" / "ess was encountered"):
  // read on the two lines joined as the terminal cut them. A message the previous line held
  // whole is found again, and its first event stands.
  // (Then as a paste reflows it, the two joined at a space: "... but there are" + "other ranks
  // that didn't finish loading".)
  // A named class read on either beats a Python exception read on the other (the tight join of
  // a reflow's break reads "there areother ranks" and finds only the ValueError).
  const LineView* wrapped = nullptr;
  const bool own = kind.has_value();
  for (const LineView* joined : {&line.joined_tight, &line.joined}) {
    if (own || (kind && *kind != Kind::kPython) || !Has(*joined, "rror")) continue;
    const std::optional<Kind> named = ClassOf(*joined);  // with its byte pairs
    if (!named || (kind && *named == Kind::kPython)) continue;
    if (SaysOutOfMemory(*joined)) return;
    kind = named;
    wrapped = joined;
  }
  if (!kind) return;
  LogEvent& e = line.Emit(EventKind::kOtherError, "any");
  e.values[Num::kErrorClass] = static_cast<double>(*kind);
  // The quote is the message whole, not its last piece.
  if (wrapped) e.text = std::string(wrapped->substr(0, 300));
}

}  // namespace

const OtherErrorClass* OtherErrorOf(const LogEvent& e) {
  if (e.kind != EventKind::kOtherError) return nullptr;
  auto it = e.values.find(Num::kErrorClass);
  if (it == e.values.end() || !(it->second >= 0) ||
      it->second >= static_cast<double>(std::size(kClasses)))
    return nullptr;
  return &kClasses[static_cast<size_t>(it->second)];
}

bool IsGenericError(const OtherErrorClass& c) {
  return &c == &kClasses[static_cast<size_t>(Kind::kPython)] || c.undecided;
}

const Reader& ErrorsReader() {
  static const Reader kReader = {
      .engine = "any",
      .match = Match,
  };
  return kReader;
}

}  // namespace vramfit::doctor
