// The rule table (rules.h): the known out-of-memory classes as rows, most specific first. The
// engine's own error text decides first, then llama.cpp's and SGLang's failure lines, then the
// stage (where the traceback points, else the furthest phase reached) and the numbers at it.
#include "doctor/rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "core/units.h"
#include "doctor/load_copies.h"
#include "doctor/readers/reader.h"
#include "doctor/text_scan.h"

namespace vramfit::doctor {
namespace {

template <EventKind K>
bool Seen(const Facts& f) {
  return f.has(K);
}

template <Stage S>
bool At(const Facts& f) {
  return f.stage == S;
}

bool Always(const Facts&) { return true; }

// The line of kind `k` was printed by the engine the log is diagnosed as.
bool ByTheEngine(const Facts& f, EventKind k) {
  return f.has(k) && f.first_of(k)->engine == f.engine;
}

bool SamplerOom(const Facts& f) {
  return f.has(EventKind::kSamplerOom) || AnyFrame(f, {"_dummy_sampler_run"});
}

// The sampler warm-up's message or frame with the profile run's frame (and not the worker's
// warm-up): the profile run's own sampler pass.
// Without frames, a log that got no further than the profile run (weights loaded; no KV-cache,
// graph or serving line) says the same: vLLM V1's profile_run ends in _dummy_sampler_run
// (vllm/v1/worker/gpu_model_runner.py, 0.8-0.11), which raises the same message.
bool SamplerInProfile(const Facts& f) {
  if (!SamplerOom(f)) return false;
  return f.frame_stage == Stage::kProfile ||
         (!f.frame_stage && f.milestone_stage == Stage::kProfile);
}

// vLLM 0.21+ profiles the CUDA graphs into the KV budget
// (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS): an estimate over a tenth of the card (at least 1 GiB)
// that leaves no KV memory took it. Graph pools in the validation set stay under 4% of the card.
bool GraphEstimateAteKv(const Facts& f) {
  const auto graphs = f.get(Num::kCudagraphBytes);
  if (!graphs || !f.has(EventKind::kGraphEstimate)) return false;
  const bool kv_failed =
      f.has(EventKind::kNoKvMemory) || NegativeKv(f) || f.has(EventKind::kMaxLenError);
  const double floor = std::max(core::kGiBf, f.total > 0 ? 0.1 * f.total : 0.0);
  return kv_failed && *graphs >= floor;
}

// V0's initialize_cache raises for no blocks or for fewer block tokens than max_model_len: with
// blocks left and no OOM line, the second.
bool V0MaxLenCheck(const Facts& f) {
  const auto blocks = f.get(Num::kGpuBlocks);
  if (!blocks || *blocks <= 0 || f.has(EventKind::kTorchOom) || f.has(EventKind::kCudaOom))
    return false;
  return AnyFrame(
      f, {"initialize_cache", "_raise_if_cache_size_invalid", "raise_if_cache_size_invalid"});
}

// Host memory: the kernel's OOM killer, Ollama's system-memory check, a host buffer.
// Not when the log also holds a GPU out-of-memory (the allocator's message, or CUDA's / HIP's
// error raised with its traceback, as in a quantizer's Hessian): that failure is the GPU's, and a
// kill report beside it is the process's end, not what ran out.
// (The kernel driver's own out-of-memory line beside the OOM killer's is the same exhaustion of
// host memory on a unified-memory part, not a device's error that decides.)
// (A device map's refusal, read as the load's failure, is no GPU out-of-memory: a kill that
// follows it ended the run.)
bool HostOomKill(const Facts& f) {
  const LogEvent* device = f.first_of(EventKind::kCudaOom);
  return f.has(EventKind::kHostOomKill) && !f.has(EventKind::kTorchOom) &&
         (!device || Has(device->text, "[NV_ERR_NO_MEMORY]") || DeviceMapRefusal(device->text));
}
// A DataLoader worker killed by SIGKILL (readers/pytorch.cc): the OOM killer ended it while the
// loop ran, each worker holding its copy of the dataset's objects and its prefetched batches.
bool DataLoaderWorkerKilled(const Facts& f) {
  return HostOomKill(f) && FailureSays(f, {"is killed by signal: Killed"});
}
// SGLang's scheduler killed after HiCache began allocating its host pools (readers/sglang.cc
// hicache_host_pool): those pools, after the GPU's pool and graphs.
bool SglangHicacheKilled(const Facts& f) {
  return HostOomKill(f) && f.engine == "sglang" && AnyFrame(f, {"hicache_host_pool"});
}
// With no frame or milestone, at load (as for a host buffer below): a program's host memory
// peaks while a checkpoint is read into it. Not where a training bar shows steps done (readers/
// pytorch.cc TrainingProgress): the run is past its load.
bool HostOomKillAtLoad(const Facts& f) {
  const auto training = f.get(Num::kTrainingLaunch);
  return HostOomKill(f) && !f.frame_stage && !f.milestone_stage && !(training && *training > 1);
}
// A quantization run whose log stops in its progress (a milestone of the load) with no error
// line, traceback or kill report: a CUDA out-of-memory raises a Python exception and prints its
// traceback, while the kernel's OOM killer ends the process with SIGKILL and nothing printed by
// it (and a log written to a file, through tee or nohup, lacks the shell's "Killed" too). Host
// memory, a guess: the excerpt may also be cut before its error.
bool QuantizerStopped(const Facts& f) {
  return f.stage == Stage::kLoad && !f.oom_line && f.frames.empty() &&
         !f.has(EventKind::kTraceback) && f.milestone_stage == Stage::kLoad &&
         QuantizerFrames(f);
}
// ExLlamaV2's convert.py stopped the same way: it keeps no model in host memory (each module's
// 16-bit tensors are read when it is measured or quantized, and the calibration states go to the
// job's work directory), so a silent stop is not the OOM killer's but a GPU failure the excerpt
// was cut before.
bool ExLlamaConvertStopped(const Facts& f) {
  return QuantizerStopped(f) && f.quantizer == "exllamav2";
}
// A quantization run that stopped the same way in its first layer: a per-layer GPU peak (the
// calibration inputs run through the layer, the tuned block's activations and gradients, the
// Hessians) is as large at the first layer as at any, while host memory fills as the finished
// layers accumulate in it; a stop in the layer its progress names first is the GPU's, the excerpt
// cut before its error (a progress that names no layer keeps the host-memory guess).
bool QuantizerStoppedAtFirstLayer(const Facts& f) {
  return QuantizerStopped(f) && f.quantizer_layer == 1 && !f.quantizer_packing;
}
// A host buffer that failed after a device buffer had: llama.cpp retries a failed context
// (llama-context.cpp: "compute buffer allocation failed, retrying without pipeline
// parallelism", 2025+), and the retry's pinned or CPU buffer is the aftermath, not what ran out
// first.
bool HostBufferAfterDevice(const Facts& f) {
  const LogEvent* host = f.first_of(EventKind::kHostBufferFail);
  const LogEvent* device = f.first_of(EventKind::kGgmlAllocFail);
  if (host == nullptr || device == nullptr || device->line >= host->line) return false;
  auto it = device->values.find(Num::kHost);
  return it == device->values.end() || it->second == 0;
}
bool HostBuffer(const Facts& f) {
  return f.has(EventKind::kHostBufferFail) && !HostBufferAfterDevice(f);
}
// A shared-memory segment (facts.cc SharedMemory) with no frame or milestone: communication is
// set up as the processes start, before the weights.
bool SharedMemoryUnplaced(const Facts& f) {
  return SharedMemory(f) && !f.frame_stage && !f.milestone_stage;
}
// A host buffer that failed as a compute graph's reservation: ggml's graph allocator reporting,
// on the next lines, the host buffer it could not get ("ggml_gallocr_reserve_n: failed to
// allocate CUDA_Host buffer of size N", ggml-alloc.c ggml_gallocr_reserve_n_impl): the compute
// buffer that llama.cpp keeps in pinned or plain host memory, reserved when a context is
// created (the profile stage), not the model's weights.
bool HostBufferAtReserve(const Facts& f) {
  const LogEvent* host = f.first_of(EventKind::kHostBufferFail);
  if (host == nullptr || !HostBuffer(f)) return false;
  const LogEvent* r = f.first_of(EventKind::kGgmlReserveFail);
  // Within a few lines, blank lines (a paste's CR CR LF) and a terminal's wraps included.
  if (r == nullptr || r->line < host->line || r->line > host->line + 6) return false;
  auto it = r->values.find(Num::kHost);
  return it != r->values.end() && it->second > 0;
}
// Such a host compute buffer of 8 GiB or more: a default context's graph takes a few hundred
// MiB, so one that large is the graph itself grown past any host, a context (times the
// parallel slots) far beyond the default, whose attention scores fill it without flash
// attention: the context is what to change, not the host's memory.
bool HostComputeBufferHuge(const Facts& f) {
  if (!HostBufferAtReserve(f)) return false;
  const auto requested = f.get(Num::kRequestedBytes);
  return requested && *requested >= 8 * core::kGiBf;
}
// SGLang's HiCache refusing its host KV pool (readers/sglang.cc): the pool is made with the
// radix cache, after the device's KV pool (HiRadixCache.__init__ -> MHATokenToKVPoolHost,
// mem_cache/hiradix_cache.py), so the message itself places it at the KV cache, frames or not.
bool HiCacheHostPool(const Facts& f) {
  const LogEvent* e = f.first_of(EventKind::kHostBufferFail);
  return e != nullptr && (e->text == "hicache" || e->text == "hicache_ratio");
}
// The model's host buffer while loading (llama_model_load).
// With no frame or milestone, at load too: host memory fills with weights (mapped, pinned,
// converted) while loading and stays flat while serving.
bool HostBufferAtLoad(const Facts& f) {
  const bool no_evidence = !f.frame_stage && !f.milestone_stage;
  return HostBuffer(f) &&
         (f.has(EventKind::kGgmlLoadFail) || f.stage == Stage::kLoad || no_evidence);
}

// TGI's warm-up failed in its prefill (flash_causal_lm.py warmup turns an OOM of the prefill into
// "Not enough memory to handle N prefill tokens"), or with no frame placing it elsewhere: the
// same warm-up then allocates the KV blocks (init_kv_cache) and captures graphs
// (cuda_graph_warmup), whose OOMs reach "Method Warmup encountered an error" unchanged.
bool TgiWarmupPrefill(const Facts& f) {
  if (!f.has(EventKind::kTgiWarmupFail)) return false;
  if (f.get(Num::kPrefillTokens)) return true;
  return f.frame_stage != Stage::kKvCache && f.frame_stage != Stage::kCudaGraph;
}

// TGI at the profile stage (its warm-up, by a milestone or frame) without the warm-up's own
// message: the same prefill of --max-batch-prefill-tokens, in TGI's words.
bool TgiAtProfile(const Facts& f) { return f.engine == "tgi" && f.stage == Stage::kProfile; }

// A kernel warm-up's frames at the warm-up stage, or its line as the furthest milestone.
bool KernelWarmup(const Facts& f) {
  if (f.stage != Stage::kWarmup) return false;
  if (!f.frame_stage && f.has(EventKind::kKernelWarmup) && !f.has(EventKind::kGraphDone)) {
    return true;
  }
  return std::any_of(f.frames.begin(), f.frames.end(), [](const LogEvent* fr) {
    auto it = fr->values.find(Num::kPathIsKernelWarmup);
    return (it != fr->values.end() && it->second > 0) ||
           FrameIs(fr, {"kernel_warmup", "deep_gemm_warmup", "flashinfer_autotune"});
  });
}

// A static cache's mention, or (text "fused") AutoAWQ's fused-modules setting.
bool FusedSetting(const Facts& f) {
  const LogEvent* e = f.first_of(EventKind::kStaticCache);
  return e && e->text == "fused";
}

// AutoAWQ's fused modules allocate a KV cache of max_seq_len when the model is built: their
// frames, or the fused setting in a log that failed while loading.
bool FusedAwqCache(const Facts& f) {
  const bool frames = std::any_of(f.frames.begin(), f.frames.end(), [](const LogEvent* fr) {
    return FrameIs(fr, {"fuse_layers", "WindowedCache", "QuantAttentionFused", "fuse_attention",
                        "fuse_transformer"});
  });
  return frames || (f.stage == Stage::kLoad && FusedSetting(f));
}
// AutoAWQ's fused attention reallocates its cache when a batch larger than the one it was
// built for arrives (awq/modules/fused/cache.py WindowedCache.increase_batch_size, called from
// attn.py QuantAttentionFused.forward, 0.1.x-0.2.x): two max_seq_len x batch tensors again.
bool FusedAwqCacheGrown(const Facts& f) {
  return f.stage == Stage::kRuntime &&
         std::any_of(f.frames.begin(), f.frames.end(), [](const LogEvent* fr) {
           return fr->text == "increase_batch_size (cache.py)";
         });
}

// A quantizer's per-layer math on the calibration data: GPTQ accumulates each module's Hessian
// from the calibration inputs (add_batch; in_features squared, float32) and factorises and
// inverts it in fasterquant (auto_gptq/quantization/gptq.py 0.7, gptqmodel/quantization/gptq.py,
// GPTQ-for-LLaMa's gptq.py); AutoAWQ searches scales and clipping by running the layer over the
// calibration activations (awq/quantize/quantizer.py _search_best_scale, _compute_best_clip,
// 0.2). Only one layer's weights are on the GPU then: what fails there is the calibration's.
//
// The rest of a quantizer's per-layer code (AutoAWQ's AwqQuantizer: init_quant running the
// samples into the first layer, _get_input_feat running each layer over them; GPTQModel's module
// looper; TagPath marks their files 2) also holds one layer and the calibration data, unless the
// model was placed on the GPU whole (device_map="auto", or the card 90% allocated). And whatever
// the frames, an allocation of half the card, or a failure with half the card free, in a
// quantization run is not a weight: one layer's weights are a small part of any card.
bool QuantizerCodeFrames(const Facts& f) {
  return std::any_of(f.frames.begin(), f.frames.end(), [](const LogEvent* fr) {
    auto it = fr->values.find(Num::kPathIsQuantizer);
    return it != fr->values.end() && it->second >= 2;
  });
}
// AutoGPTQ keeps its per-layer loop in the entry point itself (BaseGPTQForCausalLM.quantize,
// auto_gptq/modeling/_base.py 0.4-0.7: each layer moved to the GPU, run over the calibration
// inputs with add_batch hooks, then fasterquant): a module's forward under the entry's frame is
// that calibration pass.
bool QuantizerEntryForward(const Facts& f) {
  bool entry = false;
  for (const LogEvent* fr : f.frames) {
    auto it = fr->values.find(Num::kPathIsQuantizer);
    if (it != fr->values.end() && it->second >= 1) entry = true;
    if (entry && FrameIs(fr, {"forward", "_call_impl", "_wrapped_call_impl"})) return true;
  }
  return false;
}
// The whole model on the GPU before the per-layer loop: accelerate's offload hooks, or the
// first layer's pass failing on a small request with the card already full (AutoGPTQ runs the
// embeddings and the first layer over the calibration samples first: a card full of weights
// fails there on the first small tensor). A card nearly full at the failure is not evidence by
// itself: any allocation fails when the card is full, whatever filled it.
bool ModelPlacedOnGpu(const Facts& f) {
  if (f.has(EventKind::kOffload)) return true;
  const auto allocated = f.get(Num::kAllocatedBytes);
  const auto requested = f.get(Num::kRequestedBytes);
  return f.quantizer_layer <= 1 && allocated && requested && f.total > 0 &&
         *allocated >= 0.9 * f.total && *requested < 0.02 * f.total;
}
bool CardNotFull(const Facts& f) {
  const auto requested = f.get(Num::kRequestedBytes);
  const auto free = f.get(Num::kFreeBytes);
  return f.total > 0 &&
         ((requested && *requested >= 0.5 * f.total) || (free && *free >= 0.5 * f.total));
}
// The same calibration math under other names: llm-compressor's GPTQ (modifiers/gptq/
// gptq_quantize.py make_empty_hessian, accumulate_hessian, quantize_weight, 0.6+; under
// modifiers/quantization/gptq/ before), GPTQModel's Hessian (gptqmodel/quantization/gptq.py
// process_batch -> compute_hessian_xtx, materialize_global_hessian, finalize_hessian,
// hessian_inverse, 4.x-5.x), and MIT's llm-awq search (awq/quantize/auto_scale.py
// auto_scale_block -> _search_module_scale, auto_clip.py auto_clip_block -> auto_clip_layer).
bool QuantizerHessianOrSearch(const Facts& f) {
  return AnyFrame(f, {"make_empty_hessian", "accumulate_hessian", "quantize_weight",
                      "compute_hessian_xtx", "materialize_global_hessian", "finalize_hessian",
                      "hessian_inverse", "auto_scale_block", "_search_module_scale",
                      "auto_clip_block", "auto_clip_layer"});
}
// A GPU out-of-memory after the quantizer said it moved the model off the GPU for its block
// loop (load_copies.h ModelOffloadedLine): the GPU then holds the blocks being tuned and their
// calibration inputs, not the model.
bool QuantizerModelOffloaded(const Facts& f) {
  return f.model_offloaded && (f.has(EventKind::kTorchOom) || f.has(EventKind::kCudaOom));
}
bool QuantizerCalibration(const Facts& f) {
  if (f.stage != Stage::kLoad) return false;
  if (QuantizerPastFirstLayer(f) || QuantizerModelOffloaded(f)) return true;
  if (AnyFrame(f, {"fasterquant", "add_batch", "_search_best_scale", "_compute_best_clip",
                   "_search_best_clip"}) ||
      QuantizerHessianOrSearch(f)) {
    return true;
  }
  if (!QuantizerFrames(f)) return false;
  return CardNotFull(f) ||
         ((QuantizerCodeFrames(f) || QuantizerEntryForward(f)) && !ModelPlacedOnGpu(f));
}

// llm-compressor placing the model for its sequential pipeline before any calibration
// (pipelines/sequential/helpers.py dispatch_for_sequential -> compressed-tensors'
// offloaded_dispatch, 0.6+): each module moved to its execution device; modules already on GPUs
// are gathered onto the first (llm-compressor PR 2472), so a failure there is the weights
// placed, not the calibration data.
bool QuantizerDispatch(const Facts& f) {
  return f.stage == Stage::kLoad && AnyFrame(f, {"dispatch_for_sequential", "offloaded_dispatch"});
}

// llm-compressor's calibration start (LifecycleCallbacks.calibration_epoch_start, which runs the
// modifiers' on_start: QuantizationModifier's "Calibrating weights" pass computes each targeted
// module's weight scales, and for NVFP4 its fused global scales, before any calibration sample
// is run): a failure there holds the weights onloaded for that pass, no activations yet.
bool QuantizerWeightCalibration(const Facts& f) {
  return f.stage == Stage::kLoad && AnyFrame(f, {"calibration_epoch_start"});
}

// SGLang quantizing on load (--quantization fp8 over a 16-bit checkpoint) loads every 16-bit
// weight before quantizing: a load failure then is the 16-bit copy.
bool OnlineQuantLoad(const Facts& f) {
  return f.stage == Stage::kLoad && f.engine == "sglang" && f.get(Num::kOnlineQuantization);
}

// Weights offloaded to host memory, and the failure while loading converts them on the GPU.
bool OffloadConverted(const Facts& f) {
  if (OffloadedForConversion(f)) return true;
  if (f.stage != Stage::kLoad || !f.has(EventKind::kCpuOffload)) return false;
  return AnyFrame(f, {"process_weights_after_loading", "replace_parameter"});
}
// Quantized weights rewritten on the GPU after loading, in a wider type first: vLLM's
// get_and_maybe_dequant_weights (model_executor/layers/quantization/utils/quant_utils.py, 0.8+)
// dequantizes a layer's weight to float32 or the activation dtype, scaled_dequantize and
// scaled_quantize (the same file) convert a tensor between FP8 and 16 bits; the MLA backends'
// process_weights_after_loading runs them to build the absorbed W_UV_O / W_Q_UK products from
// kv_b_proj (attention/backends/mla/utils.py 0.7.x; mla_attention.py in later releases).
bool DequantFrames(const Facts& f) {
  return f.stage == Stage::kLoad &&
         AnyFrame(f, {"get_and_maybe_dequant_weights", "scaled_dequantize", "scaled_quantize"});
}

// The quantized weights repacked into the Marlin layout after loading, at load (readers/vllm.cc
// MarlinRepackFrames): each repack writes a new packed copy of a loaded weight.
// The GPTQ loaders do the same while loading a checkpoint for the Marlin kernel: AutoGPTQ's
// convert_to_marlin (auto_gptq/utils/marlin_utils.py, 0.7: every QuantLinear replaced by a
// MarlinQuantLinear whose weight gptq_repack writes while the old one is held), GPTQModel's
// MarlinQuantLinear.post_init (gptqmodel/nn_modules/qlinear/marlin.py, 1.x-5.x: its
// gptq_marlin_repack), and AutoGPTQ's AWQ-to-GPTQ conversion at load (auto_gptq/modeling/
// _utils.py unpack_awq, 0.7: the packed 4-bit values unpacked one per int32, eight times the
// packed bytes, next to them).
bool RepackFrames(const Facts& f) {
  if (f.stage != Stage::kLoad) return false;
  if (MarlinRepackFrames(f) || AnyFrame(f, {"convert_to_marlin", "unpack_awq"})) return true;
  return std::any_of(f.frames.begin(), f.frames.end(),
                     [](const LogEvent* fr) { return fr->text == "post_init (marlin.py)"; });
}
// HQQ's prepare_for_inference repacking each quantized layer for a kernel backend (facts.cc:
// patch_hqq_to_aoint4 / _marlin / _bitblas / _gemlite): the backend's copy is made while the
// HQQ layer's own tensors are still held.
bool HqqRepackFrames(const Facts& f) {
  return f.stage == Stage::kLoad &&
         AnyFrame(f, {"patch_hqq_to_aoint4", "patch_hqq_to_marlin", "patch_hqq_to_bitblas",
                      "patch_hqq_to_gemlite"});
}
// AutoGPTQ fusing a quantized model's modules as from_quantized loads it (inject_fused_attention
// and inject_fused_mlp, True by default, 0.3-0.7: auto_gptq/nn_modules/fused_llama_attn.py and
// fused_llama_mlp.py inject_to_model): each layer's q, k and v (and gate and up) packed weights,
// zeros and scales are concatenated into new tensors while the separate ones are still held.
bool AutoGptqFusedInject(const Facts& f) {
  return f.stage == Stage::kLoad && AnyFrame(f, {"inject_to_model"});
}
// vLLM quantizing a 16-bit checkpoint to FP8 as it loads (--quantization fp8): the loader places
// every 16-bit weight first, then process_weights_after_loading of Fp8LinearMethod / Fp8MoEMethod
// (model_executor/layers/quantization/fp8.py, 0.5+) writes each FP8 copy with
// ops.scaled_fp8_quant (_custom_ops.py) beside it; a serialized FP8 checkpoint's per-shard
// requantization (requantize_with_max_scale) goes through the same call on a dequantized shard.
bool OnlineFp8Frames(const Facts& f) {
  return f.stage == Stage::kLoad && AnyFrame(f, {"scaled_fp8_quant"}) &&
         AnyFrame(f, {"process_weights_after_loading"});
}

// Triton's autotuner benchmarking a kernel's configurations (triton/runtime/autotuner.py
// Autotuner._bench -> kernel_call, 2.x-3.x) in a vLLM or SGLang log while serving: a kernel
// autotuned on its first call (vLLM's Triton GDN kernels in fla/ops, before PR 36599 moved their
// autotuning into the profile run) allocates its benchmark buffers after the KV cache has taken
// the memory budget, as a kernel warm-up would.
bool RuntimeAutotune(const Facts& f) {
  if (f.stage != Stage::kRuntime || (f.engine != "vllm" && f.engine != "sglang")) return false;
  return std::any_of(f.frames.begin(), f.frames.end(), [](const LogEvent* fr) {
    return FrameIs(fr, {"_bench", "kernel_call"}) &&
           fr->text.find("(autotuner.py)") != std::string::npos;
  });
}

// Triton's own CUDA error, "Triton Error [CUDA]: out of memory" (gpuAssert in Triton's driver.c,
// third_party/nvidia/backend in 3.x, python/triton/runtime/backends/cuda.c in 2.x): a driver call
// of the kernel's first use failed (cuModuleLoadData loading its binary, cuFuncSetAttribute, or
// the launch's local memory), not a tensor allocation. After start-up that is a kernel loaded
// for the first time while serving, with the memory already taken (the KV cache, the caching
// allocator's reserve), as a kernel warm-up after the KV cache would be.
bool RuntimeTritonLoad(const Facts& f) {
  if (f.stage != Stage::kRuntime) return false;
  const LogEvent* oom = f.first_of(EventKind::kCudaOom);
  return oom != nullptr && oom->text.find("Triton Error [CUDA]") != std::string::npos;
}

// transformers with device_map="auto" offload, failing in generate: accelerate's hooks move the
// offloaded weights onto the GPU for each forward.
// accelerate's own warning that weights were offloaded ("Some parameters are on the meta device
// because they were offloaded to the cpu") says the same without the hooks' frames: the resident
// layers were given the whole card and generate had to fit beside them.
// accelerate's AlignDevicesHook.pre_forward (accelerate/hooks.py) moves one offloaded module's
// weights onto the GPU for its forward: one layer, a small part of the card. A failed request
// of a quarter of the card or more is not such a layer but the forward's own activations
// (eager attention scores, logits), offload or not.
bool OffloadAtRuntime(const Facts& f) {
  if (f.stage != Stage::kRuntime || !f.has(EventKind::kOffload)) return false;
  const auto requested = f.get(Num::kRequestedBytes);
  if (requested && f.total > 0 && *requested >= 0.25 * f.total) return false;
  return f.has(EventKind::kCpuOffload) ||
         AnyFrame(f, {"pre_forward", "set_module_tensor_to_device", "send_to_device"});
}

// A program that preallocates its KV cache for the maximum batch and length (torchtune's,
// gpt-fast's and torchchat's setup_caches) failed allocating it.
// litgpt's GPT.set_kv_cache -> build_kv_cache (litgpt/model.py) does the same; so does a KVCache
// module's k_cache / v_cache buffer (the pytorch reader's kv_cache_buffer frame), and exllamav2's
// ExLlamaV2Cache (create_state_tensors).
bool PreallocatedCache(const Facts& f) {
  return f.stage == Stage::kKvCache &&
         AnyFrame(f, {"setup_caches", "setup_cache", "set_kv_cache", "build_kv_cache",
                      "kv_cache_buffer", "create_state_tensors"});
}

// The CUDA-graph memory estimate's frame (facts.cc StageOfFrames) placed the failure.
bool GraphEstimateCapture(const Facts& f) {
  return f.stage == Stage::kProfile && AnyFrame(f, {"profile_cudagraph_memory"});
}

// The engines' refusals of a length the KV cache cannot hold; TGI's pre-2.1 form only after its
// warm-up ("Warming up model"): before it, the same words refuse the user's arguments.
bool MaxLenError(const Facts& f) {
  const LogEvent* e = f.first_of(EventKind::kMaxLenError);
  if (e == nullptr) return false;
  if (e->text != "argument_validation") return true;
  const LogEvent* warmup = f.first_of(EventKind::kProfileBegin);
  return warmup != nullptr && warmup->line < e->line;
}

// vLLM refused a multimodal item larger than the encoder cache (readers/vllm.cc).
bool EncoderCacheRefusal(const Facts& f) {
  const LogEvent* e = f.first_of(EventKind::kContextExceeded);
  return e != nullptr && e->text == "encoder_cache";
}
// vLLM warned that its checkpoint prefetch exceeds the host's RAM, and the load then stopped
// with no GPU out-of-memory: host memory (the OOM killer ends a worker silently).
bool PrefetchOverRamAtLoad(const Facts& f) {
  return f.stage == Stage::kLoad && f.get(Num::kHostRamWarned) && !f.has(EventKind::kTorchOom) &&
         !f.has(EventKind::kCudaOom);
}
// V0's swap space allocated in pinned host memory (readers/vllm.cc allocate_cpu_cache).
bool SwapSpacePinned(const Facts& f) { return AnyFrame(f, {"allocate_cpu_cache"}); }
// Any program's page-locked host allocation (Tensor.pin_memory(), DeepSpeed's accelerator
// pin_memory for its CPU offload, a DataLoader's pin-memory thread; facts.h PinnedFailureUnder).
bool PinnedHostAlloc(const Facts& f) {
  return PinnedFailureUnder(f, {"pin_memory", "_pin_memory_loop"});
}
// vLLM's --cpu-offload-gb copies each offloaded parameter into pinned host memory as the model is
// built (model_executor/models/utils.py maybe_offload_to_cpu: torch.empty_strided(...,
// device="cpu", pin_memory=True), 0.5.4+); V1's KV offloading pins its CPU blocks
// (readers/vllm.cc kv_offload_pinned).
bool CpuOffloadPinned(const Facts& f) { return PinnedFailureUnder(f, {"maybe_offload_to_cpu"}); }
bool KvOffloadPinned(const Facts& f) { return PinnedFailureUnder(f, {"kv_offload_pinned"}); }

// ggml-cuda instantiating the decode graph as a CUDA graph (readers/llama_cpp.cc).
bool GgmlCudaGraph(const Facts& f) { return AnyFrame(f, {"cuda_graph_instantiate"}); }

// SGLang's start-up pools, one larger than the card (facts.cc SglangRequestOverCard).
bool SglangPoolOverCard(const Facts& f) {
  return f.stage == Stage::kKvCache && !f.frame_stage && SglangRequestOverCard(f);
}

// ExLlama's autosplit found no room for a module and its slice of the cache (the pytorch
// reader's split_for_model_and_cache frame): the cache is sized for every token of its length
// (exllamav2 ExLlamaV2Cache max_seq_len, exllamav3 Cache max_num_tokens, TabbyAPI's
// cache_size), by default the model's whole context.
bool ExLlamaSplit(const Facts& f) {
  return f.stage == Stage::kKvCache && AnyFrame(f, {"split_for_model_and_cache"});
}

// Meta's reference model allocates each Attention's cache_k / cache_v for max_batch_size x
// max_seq_len while Llama.build constructs it (llama/model.py, LLaMA 1 to Llama 3): the code
// line under the constructor's frame.
bool ReferenceModelCache(const Facts& f) {
  const LogEvent* e = f.first_of(EventKind::kStaticCache);
  return f.stage == Stage::kLoad && e && e->text == "cache_k";
}

// transformers' generate builds a cache object before decoding (generation/utils.py
// _prepare_cache_for_generation -> _get_cache, 4.42+; _setup_cache in 4.38-4.41): a dynamic
// cache allocates nothing there, so an allocation failing in it is a preallocated one (static,
// hybrid, sliding-window: batch x max length for every layer). From 4.56 a static layer is
// allocated at its first update (cache_utils.py StaticLayer.lazy_initialization).
bool GenerateCacheFrames(const Facts& f) {
  return AnyFrame(f, {"_prepare_cache_for_generation", "_get_cache", "_setup_cache",
                      "lazy_initialization"});
}

// At the KV cache stage, those frames or a cache class's constructor (cache_utils.py) under
// generate: the preallocated cache being allocated.
bool GenerateCacheAtKv(const Facts& f) {
  if (f.stage != Stage::kKvCache) return false;
  return GenerateCacheFrames(f) ||
         std::any_of(f.frames.begin(), f.frames.end(),
                     [](const LogEvent* fr) { return fr->text == "__init__ (cache_utils.py)"; });
}

// llama.cpp: the vision projector's start-up warm-up; a request being served.
bool GgmlFailedAfter(const Facts& f, EventKind milestone) {
  const LogEvent* m = f.first_of(milestone);
  return m && (f.oom_line == 0 || m->line <= f.oom_line);
}

// llama.cpp's output buffer, the logits and embeddings of each output token in host memory
// (readers/llama_cpp.cc): reserved for n_seq_max outputs when the context is created, before its
// KV cache; grown by a decode to its batch's outputs once the context is up (its KV or compute
// buffers printed, a request or the server running, or the decode's own "could not reserve
// space for batch" line).
bool GgmlOutputBuffer(const Facts& f) {
  const LogEvent* e = f.first_of(EventKind::kHostBufferFail);
  return e != nullptr && HostBuffer(f) && Has(e->text, "output buffer");
}
bool GgmlOutputBufferAtDecode(const Facts& f) {
  if (!GgmlOutputBuffer(f)) return false;
  if (f.has(EventKind::kGgmlDecodeFailed)) return true;
  for (EventKind later : {EventKind::kGgmlKvBuffer, EventKind::kGgmlComputeBuffer,
                          EventKind::kRequest, EventKind::kServing}) {
    if (GgmlFailedAfter(f, later)) return true;
  }
  return false;
}

// SGLang's token pool ran out while serving: its message, or the allocator's frames that raise
// it ("Out of memory. Try to lower your batch size.", mem_cache/common.py alloc_token_slots and
// the paged alloc_paged_token_slots_extend / _decode and alloc_req_slots, 0.5;
// ScheduleBatch.alloc_token_slots in schedule_batch.py, 0.4) when the message itself is cut off.
bool SglangTokenPool(const Facts& f) {
  // The scheduler's retraction (readers/sglang.cc) is a warning: with PyTorch's or CUDA's own
  // out-of-memory in the log, that allocation failed, not the token pool.
  if (const LogEvent* e = f.first_of(EventKind::kSglangTokenOom);
      e && e->text == "retraction" && (f.has(EventKind::kTorchOom) || f.has(EventKind::kCudaOom))) {
    return false;
  }
  return f.has(EventKind::kSglangTokenOom) ||
         (f.engine == "sglang" &&
          AnyFrame(f, {"alloc_token_slots", "alloc_paged_token_slots_extend",
                       "alloc_paged_token_slots_decode", "alloc_req_slots"}));
}

bool NoKvMemory(const Facts& f) {
  return f.has(EventKind::kNoKvMemory) || NegativeKv(f) || f.has(EventKind::kSglangNotEnough);
}

// llama.cpp's failures: its buffer, KV and compute failures decide; its reservation and load
// failures only in a log that is its own.
// Ollama's runner dying with a reservation failure as its last words ("llama runner process has
// terminated: error:failed to allocate buffer, size = ... ggml_gallocr_reserve_n: failed to
// allocate Metal buffer of size ..."), the message on one line or cut over the next few: the
// runner's own failure, where the new engine's layout search logs others it recovers from.
constexpr uint64_t kRunnerLastWordsLines = 4;
bool RunnerDiedReserving(const Facts& f) {
  if (f.engine != "ollama" || !f.has(EventKind::kGgmlReserveFail) ||
      !f.has(EventKind::kOllamaRunnerDied)) {
    return false;
  }
  const uint64_t died = f.first_of(EventKind::kOllamaRunnerDied)->line;
  const uint64_t reserve = f.first_of(EventKind::kGgmlReserveFail)->line;
  return reserve >= died && reserve <= died + kRunnerLastWordsLines;
}
bool GgmlFailed(const Facts& f) {
  return f.has(EventKind::kGgmlAllocFail) || f.has(EventKind::kGgmlKvFail) ||
         f.has(EventKind::kGgmlComputeFail) || ByTheEngine(f, EventKind::kGgmlReserveFail) ||
         ByTheEngine(f, EventKind::kGgmlLoadFail) || RunnerDiedReserving(f);
}
bool GgmlKv(const Facts& f) { return GgmlFailed(f) && f.has(EventKind::kGgmlKvFail); }
// The KV cache refused for the host's memory (node-llama-cpp's estimate against the free RAM).
bool GgmlKvHost(const Facts& f) {
  return GgmlKv(f) && ValueOf(f.first_of(EventKind::kGgmlKvFail), Num::kHost).value_or(0) > 0;
}
// The KV cache refused for several sequences' contexts together (node-llama-cpp's "A context
// size of N with M sequences").
bool GgmlKvSequences(const Facts& f) {
  return GgmlKv(f) &&
         ValueOf(f.first_of(EventKind::kGgmlKvFail), Num::kMaxNumSeqs).value_or(0) > 1;
}
// The recurrent-state cache (readers/llama_cpp.cc: "failed to allocate buffer for rs cache").
bool GgmlRecurrentState(const Facts& f) {
  return GgmlKv(f) &&
         ValueOf(f.first_of(EventKind::kGgmlKvFail), Num::kRecurrentState).value_or(0) > 0;
}
bool GgmlCompute(const Facts& f) {
  return GgmlFailed(f) &&
         (f.has(EventKind::kGgmlComputeFail) || f.has(EventKind::kGgmlReserveFail));
}
// llama.cpp, or an engine that runs it (Ollama, LM Studio, KoboldCpp: Reader::wraps).
bool GgmlEngine(const Facts& f) {
  if (f.engine == "llama.cpp") return true;
  const Reader* r = FindReader(f.engine);
  return r && r->wraps && std::string_view(r->wraps) == "llama.cpp";
}
// The encoder's own frames in an engine on llama.cpp (Ollama's EncodeMultimodal): the image's
// graph, in the phase the runner's frames or milestones say (the worst-case reservation's dummy
// image at profile, a request's image at runtime).
bool GgmlEncoderAt(const Facts& f, Stage stage) {
  return f.encoder && f.stage == stage && GgmlEngine(f);
}
bool GgmlEncoderAtProfile(const Facts& f) { return GgmlEncoderAt(f, Stage::kProfile); }
bool GgmlEncoderAtRuntime(const Facts& f) { return GgmlEncoderAt(f, Stage::kRuntime); }
// Ollama's scheduler said the failure came from a request being served (readers/ollama.cc
// "runtime OOM detected"): the model had loaded, so its load-time reservations had fitted.
bool OllamaServingOom(const Facts& f) {
  return f.engine == "ollama" && f.get(Num::kServingOom).has_value();
}
bool GgmlFailedServing(const Facts& f) {
  return GgmlFailedAfter(f, EventKind::kRequest) || OllamaServingOom(f);
}
// llama.cpp's one GPU with both figures (readers/llama_cpp.cc device_memory): its free memory as
// the model was placed (the last "using device ... - N MiB free" before the failure) below its
// total (the memory breakdown's or the device list's). nullptr where the log does not give
// both, or names more than one GPU.
const Facts::DeviceMemory* GgmlLoneGpu(const Facts& f) {
  const Facts::DeviceMemory* gpu = LoneGpu(f);
  return gpu == nullptr || gpu->total <= 0 || gpu->free >= gpu->total ? nullptr : gpu;
}
// As OthersAtLoad for PyTorch's message: other programs held over a quarter of the card when
// llama.cpp placed the model (its total less its free memory then), and the failed device
// allocation would have fitted in what they held. Not a host buffer's failure.
bool GgmlOthersHeldTheCard(const Facts& f) {
  // At start-up: not a request's allocation, nor one after the server came up.
  const bool starting = !GgmlFailedServing(f) && f.milestone_stage != Stage::kRuntime;
  if (!starting || !GgmlFailed(f) || HostBuffer(f)) return false;
  const Facts::DeviceMemory* gpu = GgmlLoneGpu(f);
  const auto requested = f.get(Num::kRequestedBytes);
  if (gpu == nullptr || !requested) return false;
  const double others = gpu->total - gpu->free;
  return others > 0.25 * gpu->total && *requested <= others;
}
std::string SayGgmlOthers(const Facts& f, std::map<std::string, double>* numbers) {
  const Facts::DeviceMemory& gpu = *GgmlLoneGpu(f);
  (*numbers)["other_process_bytes"] = gpu.total - gpu.free;
  (*numbers)["device_free_bytes"] = gpu.free;
  (*numbers)["device_total_bytes"] = gpu.total;
  return fmt::format(
      "other programs held {} of the card's {} when llama.cpp placed the model ({} free), and "
      "the {} it then failed to allocate would have fitted in it: the card was shared",
      Gib(gpu.total - gpu.free), Gib(gpu.total), Gib(gpu.free),
      Gib(*f.get(Num::kRequestedBytes)));
}
bool GgmlMmWarmup(const Facts& f) {
  return GgmlFailed(f) && GgmlFailedAfter(f, EventKind::kMmWarmup) && !GgmlFailedServing(f) &&
         !f.has(EventKind::kImage);
}
bool GgmlComputeImage(const Facts& f) { return GgmlCompute(f) && f.has(EventKind::kImage); }
// Ollama reserves its worst-case text batch when it loads a model (runner/ollamarunner
// runner.go reserveWorstCaseGraph, 0.6+; llama.cpp's context creation in the older runner), so a
// compute buffer that must grow while a request is served, outside llama.cpp's KV update, is the
// graph the text reservation does not cover: an image's encoding (EncodeMultimodal runs in its
// own context, sized by the image).
bool OllamaServingCompute(const Facts& f) {
  if (f.engine != "ollama" || !GgmlCompute(f) || !GgmlFailedServing(f)) {
    return false;
  }
  const LogEvent* c = f.first_of(EventKind::kGgmlComputeFail);
  if (!c) return true;
  auto it = c->values.find(Num::kDuringDecode);
  return it == c->values.end() || it->second <= 0;
}
bool GgmlComputeDecode(const Facts& f) {
  if (!GgmlCompute(f)) return false;
  // After a request began, or after the server said it serves (llama-server's listening line,
  // Ollama's "llama runner started"): nothing but requests runs after that.
  if (GgmlFailedAfter(f, EventKind::kRequest) || GgmlFailedAfter(f, EventKind::kServing)) {
    return true;
  }
  // A graph reservation that failed and, within a few lines (blank lines and wraps included),
  // llama_decode's error: the decode reserved its batch's graph (llama-context.cpp decode ->
  // graph_reserve on a changed batch shape or a speculative draft's first batch), not the
  // context's creation.
  if (const LogEvent* d = f.first_of(EventKind::kGgmlDecodeFailed);
      d && f.oom_line > 0 && d->line > f.oom_line && d->line <= f.oom_line + 12) {
    return true;
  }
  const LogEvent* c = f.first_of(EventKind::kGgmlComputeFail);
  if (!c) return false;
  auto it = c->values.find(Num::kDuringDecode);
  return it != c->values.end() && it->second > 0;
}
// llama.cpp's tools warm up right after creating the context (common_init_from_params: "warming
// up the model with an empty run", a llama_decode of BOS/EOS, common/common.cpp since 2023-09),
// before llama-server listens and before llama-cli sets up its sampler: a compute failure while
// decoding, in a log that shows the context created and nothing served or generated, is that
// warm-up.
// Ollama's server reporting its runner's death while it waited for the model to load ("llama
// runner process has terminated: ...", llm/server.go WaitUntilRunning) with a decode's compute
// failure among the last words: nothing is decoded before the runner reports ready but the
// warm-up of the llama.cpp server it ran, so that warm-up is where it failed.
bool GgmlWarmupDecode(const Facts& f) {
  if (!GgmlComputeDecode(f) || f.has(EventKind::kServing) || f.has(EventKind::kRequest) ||
      f.has(EventKind::kImage)) {
    return false;
  }
  if (f.engine == "ollama") {
    return f.has(EventKind::kOllamaRunnerDied) && !OllamaServingOom(f);
  }
  // (llama.cpp in the program's own process: llama-server, LM Studio's engine, KoboldCpp.)
  if (!GgmlEngine(f)) return false;
  return f.has(EventKind::kGgmlKvBuffer) || f.has(EventKind::kGgmlContextInit) ||
         f.has(EventKind::kGgmlComputeBuffer);
}
// CUDA's own check failing in a log of llama.cpp (or an engine on it) with the allocation
// unnamed: ggml-cuda's "CUDA error: out of memory" whose "current device: N, in function F" line
// names nothing a reader places (or was cut), or the pre-2024 "CUDA error 2 at ggml-cuda.cu:N:
// out of memory"; no other failure of ggml's and no frame says what it was.
bool GgmlUnnamedCudaOom(const Facts& f) {
  if (!GgmlEngine(f) || f.oom_line == 0 || !f.frames.empty() || f.has(EventKind::kTorchOom)) {
    return false;
  }
  for (EventKind other : {EventKind::kGgmlLoadFail, EventKind::kGgmlKvFail,
                          EventKind::kGgmlComputeFail, EventKind::kGgmlReserveFail,
                          EventKind::kHostBufferFail}) {
    if (f.has(other)) return false;
  }
  const LogEvent* cuda = f.first_of(EventKind::kCudaOom);
  const LogEvent* check = f.first_of(EventKind::kGgmlAllocFail);
  if (check) return check->line == f.oom_line && !cuda &&
                    ValueOf(check, Num::kUnnamedCudaCheck).value_or(0) > 0;
  return cuda && cuda->line == f.oom_line;
}
// Such a check before anything of the model was read: right after ggml-cuda listed its devices
// ("found N CUDA devices", ggml_init_cublas / ggml_cuda_init, as the backend starts), or a few
// lines after the tool's banner ("main: build = N") with nothing between, and no loader,
// context, buffer or served request before it. What the backend makes as it starts, each
// device's context, cuBLAS handle and streams, found no room: the card was already full, held by
// other processes or a run still holding it.
// Only where the log would show the load had it begun: llama.cpp's own tools (their banner) and
// Ollama print the loader's lines, while a program that embeds llama.cpp may silence them
// (llama_log_set) and keep ggml-cuda's device list, which it prints itself.
constexpr uint64_t kBannerLines = 8;
// PyTorch's the same: torch.cuda's lazy initialisation (torch/cuda/__init__.py _lazy_init ->
// torch._C._cuda_init, at the process's first CUDA call) failing with "CUDA error: out of memory"
// (no caching-allocator message: the allocator has not run) could not create the process's CUDA
// context, before any tensor of its own was on the card.
bool TorchCudaInitOom(const Facts& f) {
  return f.has(EventKind::kCudaOom) && !f.has(EventKind::kTorchOom) && AnyFrame(f, {"_lazy_init"});
}
bool GgmlOomBeforeLoad(const Facts& f) {
  if (!GgmlUnnamedCudaOom(f)) return false;
  for (EventKind k : {EventKind::kLoadBegin, EventKind::kGgmlModelBuffer, EventKind::kGgmlCtx,
                      EventKind::kGgmlContextInit, EventKind::kGgmlKvBuffer,
                      EventKind::kGgmlComputeBuffer, EventKind::kDeviceMemory,
                      EventKind::kServing, EventKind::kRequest, EventKind::kImage}) {
    if (GgmlFailedAfter(f, k)) return false;
  }
  const LogEvent* banner = f.first_of(EventKind::kConfig);
  if (banner && (!ValueOf(banner, Num::kGgmlBuild) || banner->line > f.oom_line)) {
    banner = nullptr;
  }
  if (!banner && f.engine != "ollama") return false;
  return GgmlFailedAfter(f, EventKind::kGgmlDeviceList) ||
         (banner && f.oom_line - banner->line <= kBannerLines);
}
// Such a check after the context's compute buffers were allocated (their sizes are printed once
// the graph reservation succeeded, llama-context.cpp) and before anything was served: nothing
// allocates under that check between the reservation and the first decode, which is the
// warm-up llama.cpp's own start-up runs (common_init_from_params, above; also in the servers
// that embed it), whose memory pool and cuBLAS workspace grow outside the measured buffers.
bool GgmlUnnamedOomAfterContext(const Facts& f) {
  if (!GgmlUnnamedCudaOom(f) || !GgmlFailedAfter(f, EventKind::kGgmlComputeBuffer)) return false;
  for (EventKind k : {EventKind::kServing, EventKind::kRequest, EventKind::kImage,
                      EventKind::kMmWarmup}) {
    if (GgmlFailedAfter(f, k)) return false;
  }
  return true;
}
// ggml-metal warned that its buffers exceed the recommended working set (readers/llama_cpp.cc),
// and a graph computed over them failed: the resident set, weights first, is too large.
bool GgmlWarmupOverWorkingSet(const Facts& f) {
  return GgmlWarmupDecode(f) && f.has(EventKind::kMetalOverWorkingSet);
}
bool GgmlDecodeOverWorkingSet(const Facts& f) {
  return GgmlComputeDecode(f) && f.has(EventKind::kMetalOverWorkingSet) &&
         !f.has(EventKind::kImage);
}
// ggml-metal's command buffer failing for memory ("command buffer N failed with status 5",
// "Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)"): Metal accepted
// every buffer when it was allocated and makes them resident only when a graph runs, so the
// failure is the working set as a whole, not one buffer growing. Where the context's KV buffer is
// several times its compute buffer ("KV buffer size" and "compute buffer size" lines), the KV
// cache is what the context added: its length (and sequences) is what to cut.
constexpr double kKvOverComputeShare = 4.0;
bool MetalKvDominates(const Facts& f) {
  const LogEvent* c = f.first_of(EventKind::kGgmlComputeFail);
  if (!c || !(Has(c->text, "failed with status 5") ||
              Has(c->text, "kIOGPUCommandBufferCallbackErrorOutOfMemory"))) {
    return false;
  }
  const auto kv = f.get(Num::kKvCacheBytes), compute = f.get(Num::kComputeBytes);
  return kv && compute && *kv > kKvOverComputeShare * *compute;
}
bool MetalKvAtWarmup(const Facts& f) { return GgmlWarmupDecode(f) && MetalKvDominates(f); }
bool MetalKvAtDecode(const Facts& f) { return GgmlComputeDecode(f) && MetalKvDominates(f); }
bool GgmlBuffer(const Facts& f) {
  return GgmlFailed(f) && (f.has(EventKind::kGgmlLoadFail) || f.has(EventKind::kGgmlAllocFail));
}
bool GgmlBufferImage(const Facts& f) { return GgmlBuffer(f) && f.has(EventKind::kImage); }
// A device buffer that failed with the projector's tensor loader on the abort's backtrace (or
// after the size its loader prints): the mmproj weights, loaded after the model's layers took
// the card (and before any warm-up, whose graph reservation fails in its own words).
bool GgmlMmprojLoad(const Facts& f) {
  return GgmlBuffer(f) && f.has(EventKind::kMmprojLoadFrame) && !f.has(EventKind::kImage) &&
         !f.has(EventKind::kGgmlReserveFail) && !GgmlFailedAfter(f, EventKind::kRequest);
}
// A device buffer that failed after llama.cpp began reserving its compute graphs (and no
// loader error): the compute buffer, not the weights or the KV cache, which come before it. Also
// after the KV cache's total ("KV self size = ...", 2024 to b5400; "llama_kv_cache: size = ...",
// later), which the KV cache's constructor prints once every one of its device buffers is
// allocated (llama-kv-cache-unified.cpp, llama-kv-cache.cpp): context creation then reserves the
// output buffer in host memory and the compute graphs (llama-context.cpp), so the next device
// buffer to fail is a compute buffer, though its reservation printed nothing yet.
bool GgmlBufferAtReserve(const Facts& f) {
  return GgmlFailed(f) && f.has(EventKind::kGgmlAllocFail) &&
         !f.has(EventKind::kGgmlLoadFail) && !f.has(EventKind::kGgmlKvFail) &&
         (GgmlFailedAfter(f, EventKind::kGgmlReserveBegin) ||
          GgmlFailedAfter(f, EventKind::kGgmlKvTotal));
}
// A tensor buffer failed (ggml-alloc.c alloc_tensor_range, which allocates the loader's tensors
// and the KV cache's alike) with no loader error, no compute reservation and no projector: when
// the weights were already allocated (llama.cpp logs the model buffer's size after allocating it,
// llama-model.cpp load_tensors) or a front end's estimate said the model fits, the buffer is the
// next one llama_init_from_model allocates, the KV cache (llama-kv-cache.cpp).
bool GgmlBufferAfterWeights(const Facts& f) {
  if (!GgmlFailed(f) || !f.has(EventKind::kGgmlAllocFail) || f.has(EventKind::kGgmlLoadFail) ||
      GgmlCompute(f) || f.has(EventKind::kImage) || GgmlFailedAfter(f, EventKind::kMmWarmup)) {
    return false;
  }
  return GgmlFailedAfter(f, EventKind::kGgmlModelBuffer) ||
         f.get(Num::kEstimateFits).value_or(0) > 0;
}

// A device buffer failed right after context creation printed its parameters ("n_ctx = 131072"
// from llama_new_context_with_model, llama_init_from_model or, 2025+, llama_context's
// constructor) and before any line of what that creation allocates next: its first device
// buffer is the KV cache (llama-kv-cache.cpp; the output buffer before it is host memory), and
// the KV cache's size line ("KV buffer size", "KV self size"), printed once it is allocated, the
// compute buffers and their reservation all come after it.
bool GgmlBufferAtContextCreation(const Facts& f) {
  if (!GgmlFailed(f) || !f.has(EventKind::kGgmlAllocFail) || f.has(EventKind::kGgmlLoadFail) ||
      GgmlCompute(f) || f.has(EventKind::kImage) || GgmlFailedAfter(f, EventKind::kMmWarmup) ||
      !GgmlFailedAfter(f, EventKind::kGgmlCtx)) {
    return false;
  }
  for (EventKind later : {EventKind::kGgmlKvBuffer, EventKind::kGgmlComputeBuffer,
                          EventKind::kGgmlReserveBegin, EventKind::kRequest, EventKind::kServing}) {
    if (GgmlFailedAfter(f, later)) return false;
  }
  return f.oom_line > 0 && f.first_of(EventKind::kGgmlCtx)->line < f.oom_line;
}

// A device buffer failed, with no line telling which, that is larger than the whole model the
// log names could be at 32 bits a weight (its name's parameter count x 4 bytes, the widest GGUF
// type, F32): it cannot be the weights' buffer. What llama.cpp allocates after the weights and
// can outgrow them is the context's: the KV cache (llama-kv-cache.cpp) and, largest at a long
// context without flash attention, the compute buffers that hold a ubatch's attention scores
// against the whole context (n_ctx x n_ubatch x heads x 4 bytes; llama-context.cpp
// graph_reserve), reserved last. A front end's estimate or a KV size the log printed decide
// first (GgmlBufferIsKv, GgmlBufferAfterWeights).
bool GgmlBufferOverNamedModel(const Facts& f) {
  if (!GgmlFailed(f) || !f.has(EventKind::kGgmlAllocFail) || f.has(EventKind::kGgmlLoadFail) ||
      f.has(EventKind::kImage) || f.has(EventKind::kGgmlModelBuffer) ||
      f.has(EventKind::kGgmlKvFail)) {
    return false;
  }
  const auto req = f.get(Num::kRequestedBytes);
  const double params = ParamsFromName(f.model_path);
  return req && params > 0 && *req > 4 * params;
}

// A device buffer that failed under the KV cache's own frame (Ollama's new engine allocating a
// layer's cache tensors as the layer first stores into it, facts.cc's row for causal.go Put):
// the KV cache, whatever else the runner had reached.
bool GgmlBufferInKvFrames(const Facts& f) {
  return GgmlBuffer(f) && !f.has(EventKind::kGgmlLoadFail) && !f.has(EventKind::kImage) &&
         f.frame_stage == Stage::kKvCache;
}
// A device allocation that failed after a request began (a slot's prompt, a finished
// generation's timings) or the server said it serves (llama-server's listening line, Ollama's
// "llama runner started"): the weights and the KV cache were allocated as the model and its
// context were created, while what a decode allocates grows with its batch over a longer
// context: ggml-cuda's pool (ggml_cuda_pool_malloc, cudaMalloc under CUDA_CHECK, whose check
// before 2024 said only "CUDA error 2 at ggml-cuda.cu:N: out of memory"), ggml-sycl's pool
// (ggml_sycl_pool_leg::alloc, "can't allocate N Bytes of memory on device"), ggml-vulkan's
// preallocated buffers (ggml_vk_preallocate_buffers, "Device memory allocation of size N
// failed") and a graph's buffer the scheduler grows. Not ggml-alloc.c's alloc_tensor_range,
// which allocates a model's or a context's tensors only when one is created.
bool GgmlBufferServing(const Facts& f) {
  const LogEvent* fail = f.first_of(EventKind::kGgmlAllocFail);
  return GgmlBuffer(f) && !f.has(EventKind::kGgmlLoadFail) && !f.has(EventKind::kImage) &&
         !f.has(EventKind::kGgmlKvFail) &&
         (GgmlFailedAfter(f, EventKind::kRequest) || GgmlFailedAfter(f, EventKind::kServing)) &&
         fail && fail->text != "alloc_tensor_range";
}

// A device buffer failed whose size is the one the log gave the KV cache (llama.cpp's "CUDA0 KV
// buffer size = X MiB", Ollama's msg="kv cache" device=CUDA0 size="X GiB", rounded to a tenth
// of a GiB) and not the weights': the KV cache, whatever order the lines came in.
bool GgmlBufferIsKv(const Facts& f) {
  if (!GgmlFailed(f) || !f.has(EventKind::kGgmlAllocFail) || f.has(EventKind::kGgmlLoadFail) ||
      f.has(EventKind::kImage) || GgmlCompute(f)) {
    return false;
  }
  const auto req = f.get(Num::kRequestedBytes), kv = f.get(Num::kKvCacheBytes),
             weights = f.get(Num::kWeightsBytes);
  auto near = [](double a, double b) {
    return b > 0 && std::abs(a - b) <= std::max(0.05 * core::kGiBf, 0.03 * b);
  };
  return req && kv && near(*req, *kv) && !(weights && near(*req, *weights));
}

// The failure event on the failure's line, an engine's own rather than PyTorch's allocator
// message where both are there; null where the log has none. (Only failure events: a notebook's
// "OutOfMemoryError   Traceback (most recent call last)" header is also a traceback event,
// which is no error text.)
const LogEvent* FailureEvent(const Facts& f) {
  const LogEvent* oom = nullptr;
  for (const LogEvent* e : f.first) {
    if (e && e->line == f.oom_line && IsFailureEvent(e->kind) &&
        (!oom || e->kind != EventKind::kTorchOom)) {
      oom = e;
    }
  }
  return oom;
}

// llama.cpp and the engines that run it (Ollama, LM Studio, KoboldCpp) at the profile stage:
// what is reserved then is the compute graph of the largest batch (llama.cpp's graph_reserve at
// context creation, Ollama's reserveWorstCaseGraph), whatever line reported the failure.
bool GgmlEngineAtProfile(const Facts& f) { return f.stage == Stage::kProfile && GgmlEngine(f); }
// The same engines at their KV cache with nothing that names the buffer (llama-cpp-python's
// bare "Failed to create llama_context"): llama.cpp sizes the cache for the whole context
// (n_ctx, or the model's training context where 0 asks for it), not from free memory.
bool GgmlEngineAtKv(const Facts& f) { return f.stage == Stage::kKvCache && GgmlEngine(f); }

// The same engines after start-up, where no line names what failed: the memory they allocate
// while serving is the compute graph's (the graph allocator's buffers, ggml-cuda's pool), the
// weights and the KV cache having been placed at start-up; activations are its contents.
// Only where no ggml line says what failed (no error line at all, or a bare CUDA or PyTorch
// out-of-memory): a reservation failure the engine logged and recovered from is not this.
bool GgmlEngineAtRuntime(const Facts& f) {
  if (f.stage != Stage::kRuntime || !GgmlEngine(f)) return false;
  const LogEvent* e = FailureEvent(f);
  return !e || e->kind == EventKind::kCudaOom || e->kind == EventKind::kTorchOom;
}

bool ProfileMultimodal(const Facts& f) { return f.stage == Stage::kProfile && f.multimodal; }

// The failed allocation lies in a multimodal encoder (a frame or code line only the encoder
// runs, facts.h Facts::encoder) while serving: the encoder's activations, whatever else holds
// the card; unless accelerate's offload hook is moving the encoder's weights in (then the
// allocation is the offloaded weights').
bool EncoderAtRuntime(const Facts& f) {
  return f.stage == Stage::kRuntime && f.encoder && !OffloadAtRuntime(f);
}
// vLLM's profile run skipped the multimodal encoder (--skip-mm-profiling; the log says so): the
// budget never held the encoder's peak, so an out-of-memory while serving is the encoder's,
// whatever frames the excerpt kept.
bool SkippedEncoderProfileAtRuntime(const Facts& f) {
  return f.stage == Stage::kRuntime && f.get(Num::kSkippedMmProfiling) && f.oom_line &&
         !OffloadAtRuntime(f);
}

// llama.cpp's multimodal command-line tools (llava-cli, minicpmv-cli, qwen2vl-cli, gemma3-cli,
// mtmd-cli: --image FILE) create the text context, load the projector, then encode the image.
// The clip graph for the image is allocated when it is encoded (clip.cpp
// clip_image_batch_encode, ggml_gallocr_alloc_graph, whose result it does not check; the
// projector's own start-up reservation only covers its default image size), so a failed graph
// reservation that llama.cpp's context does not report ("failed to allocate compute buffers",
// llama_new_context_with_model / graph_reserve) in such a run is the image's.
bool GgmlReserveForImageArg(const Facts& f) {
  return f.image_arg && GgmlFailed(f) && f.has(EventKind::kGgmlReserveFail) &&
         !f.has(EventKind::kGgmlComputeFail) && !f.has(EventKind::kGgmlKvFail) &&
         !f.has(EventKind::kGgmlLoadFail) && !GgmlFailedAfter(f, EventKind::kMmWarmup);
}

bool Backend(const Facts& f) {
  return f.stage == Stage::kLoad && f.has(EventKind::kTransformersBackend);
}
bool BackendSharded(const Facts& f) { return Backend(f) && f.tp > 1; }

bool Quantized(const Inventory& m) { return m.quantization.method != "none"; }

// With the model: the failed allocation is the 16-bit size of a quantized module, or of one
// layer's fused modules or expert stack, whole or per TP shard.
struct Dequantized {
  std::string name;
  double bytes = 0;
  int64_t shard = 1;
  bool group = false;
};
std::optional<Dequantized> FindDequantized(const Facts& f) {
  const auto requested = f.get(Num::kRequestedBytes);
  if (!f.model || !requested || *requested <= 0 || !Quantized(*f.model)) return std::nullopt;
  std::map<std::string, uint64_t> by_group;  // 16-bit bytes of fused modules and expert stacks
  std::vector<std::pair<std::string, uint64_t>> singles;
  for (const TensorEntry& t : f.model->tensors) {
    if (!t.quantized || t.part != Part::kWeight) continue;
    const uint64_t b16 = t.parameters * 2;
    singles.push_back({std::string(t.module()), b16});
    if (t.layer >= 0) {
      by_group[fmt::format("layer {} {}", t.layer, ComponentName(t.component))] += b16;
    }
  }
  auto near = [&](double c) {
    return c > 0 && std::abs(*requested - c) <= std::max(2.0 * core::kMiBf, 0.02 * c);
  };
  auto search = [&](const auto& candidates, bool group) -> std::optional<Dequantized> {
    for (const auto& [name, b] : candidates) {
      for (int64_t shard : {int64_t{1}, f.tp}) {
        const double bytes = static_cast<double>(b) / static_cast<double>(shard);
        if (near(bytes)) return Dequantized{name, bytes, shard, group};
      }
    }
    return std::nullopt;
  };
  if (auto hit = search(singles, false)) return hit;
  return search(by_group, true);
}
bool DequantizedCopy(const Facts& f) {
  return f.stage == Stage::kLoad && FindDequantized(f).has_value();
}
std::string SayDequantized(const Facts& f, std::map<std::string, double>* numbers) {
  const Dequantized hit = *FindDequantized(f);
  (*numbers)["dequantized_bytes"] = hit.bytes;
  const std::string requested = Gib(*f.get(Num::kRequestedBytes));
  if (hit.group) {
    return fmt::format(
        "the failed allocation ({}) is the 16-bit size of {} ({}): the quantized weights were "
        "dequantized on the GPU while loading",
        requested, hit.name, hit.shard > 1 ? fmt::format("/ TP {}", hit.shard) : "whole");
  }
  return fmt::format(
      "the failed allocation ({}) is the 16-bit size of {}{}: the quantized weights were "
      "dequantized on the GPU while loading",
      requested, hit.name, hit.shard > 1 ? fmt::format(" / TP {}", hit.shard) : "");
}

// With the model: the allocation is a whole tensor where TP > 1 expects a shard.
const TensorEntry* FindWholeTensor(const Facts& f) {
  const auto requested = f.get(Num::kRequestedBytes);
  if (!f.model || !requested || *requested <= 0 || f.tp <= 1) return nullptr;
  for (const TensorEntry& t : f.model->tensors) {
    const double whole = static_cast<double>(t.info.bytes());
    if (whole > 64 * core::kMiBf && std::abs(*requested - whole) <= 0.02 * whole) return &t;
  }
  return nullptr;
}
bool WholeTensor(const Facts& f) { return f.stage == Stage::kLoad && FindWholeTensor(f); }

// A sharding data-parallel wrapper materialising whole parameters on one rank while the model is
// set up: PyTorch FSDP (1.x-2.x torch/distributed/fsdp/_init_utils.py
// _init_param_handle_from_module -> _flat_param.py FlatParamHandle.flatten_tensors_into_flat_param,
// which concatenates every parameter of a wrapped unit into one flat tensor on the device before
// sharding it: with no auto_wrap_policy the unit is the whole model), and DeepSpeed ZeRO-3's
// GatheredParameters (runtime/zero/partition_parameters.py), which all-gathers the listed
// partitioned parameters whole onto every rank (transformers' _initialize_missing_keys gathers
// every uninitialised one at once). accelerate's FSDP2 preparation does it for every parameter
// as it loads the full state dict (accelerate/utils/fsdp_utils.py fsdp2_prepare_model ->
// fsdp2_load_full_state_dict, 1.4+: "full_tensor = torch.empty(sharded_param.size(), device=
// 'cuda')" on every rank, then distribute_tensor), inside Trainer.train.
bool ShardingGathersWhole(const Facts& f) {
  return f.stage == Stage::kLoad &&
         (FsdpFlattenFrames(f) ||
          AnyFrame(f, {"GatheredParameters", "fsdp2_load_full_state_dict"}));
}
std::string SayWholeTensor(const Facts& f, std::map<std::string, double>*) {
  return fmt::format(
      "the failed allocation ({}) is the whole of {} although TP {} should give each rank 1/{} "
      "of it",
      Gib(*f.get(Num::kRequestedBytes)), FindWholeTensor(f)->info.name, f.tp, f.tp);
}

// With the model: its weights per rank against the card.
double PerRank(const Facts& f) {
  return static_cast<double>(f.model->total_bytes) / static_cast<double>(f.tp);
}
bool ModelTooLarge(const Facts& f) {
  return f.stage == Stage::kLoad && f.model && f.total > 0 && PerRank(f) > 0.95 * f.total;
}
std::string SayModelTooLarge(const Facts& f, std::map<std::string, double>* numbers) {
  (*numbers)["weights_estimate_bytes"] = PerRank(f);
  return fmt::format("{} of weights per GPU at tensor parallel {} on {} {} card", Gib(PerRank(f)),
                     f.tp, Article(Gib(f.total)), Gib(f.total));
}
// The KV pool found no room because the weights alone fill what the engine could ever give it,
// so no memory setting helps: vLLM's loaded weights at 95% or more of the card (the
// --gpu-memory-utilization a deployment can use), SGLang's own floor for --mem-fraction-static
// at 0.95 or above ("Raise --mem-fraction-static above 1.000"), or its load-end figures putting
// the weights above 92% of the memory free before the load (the fraction that would leave the
// pool 3% of it is then over 0.95, as sglang.cc's fixes compute it). Below those, a larger
// budget makes room and the failure is the KV pool's (kv_no_memory).
constexpr double kWeightsFillFraction = 0.95;
bool WeightsFillTheCard(const Facts& f) {
  if (!NoKvMemory(f)) return false;
  const auto w = f.get(Num::kWeightsBytes);
  if (f.engine == "vllm") return w && *w > 0 && f.total > 0 && *w >= kWeightsFillFraction * f.total;
  if (f.engine != "sglang" || !f.has(EventKind::kSglangNotEnough)) return false;
  if (const LogEvent* e = f.first_of(EventKind::kSglangNotEnough)) {
    if (const auto y = NumberAfter(e->text, "Raise --mem-fraction-static above"); y) {
      return *y >= kWeightsFillFraction;
    }
  }
  const auto free = f.get(Num::kFreeBytes);
  return w && *w > 0 && free && *free >= 0 &&
         1 - *free / (*free + *w) + 0.03 > kWeightsFillFraction;
}
std::string SayWeightsFillTheCard(const Facts& f, std::map<std::string, double>* numbers) {
  const double w = f.get(Num::kWeightsBytes).value_or(0);
  if (w > 0) (*numbers)["weights_estimate_bytes"] = w;  // per GPU, as loaded
  if (f.engine == "vllm") {
    return fmt::format(
        "the weights alone took {} of the card's {}: no --gpu-memory-utilization leaves room "
        "for a KV cache beside them",
        Gib(w), Gib(f.total));
  }
  return w > 0 ? fmt::format("the weights alone took {} of the memory free before the load: no "
                             "--mem-fraction-static leaves room for a KV pool beside them",
                             Gib(w))
               : std::string("SGLang's own floor for --mem-fraction-static is at or above 0.95: "
                             "no fraction leaves room for a KV pool beside the weights");
}

// vLLM's profile run on a card its weights already overfill: the weights it loaded ("Model
// loading took X") exceed the budget --gpu-memory-utilization sets (0.9 of the card by default,
// vllm/config/cache.py), so whatever the profile's forward asks for fails; its activations are
// not what a smaller batch would fix.
bool WeightsOverBudgetAtProfile(const Facts& f) {
  if (f.engine != "vllm" || f.stage != Stage::kProfile || f.total <= 0) return false;
  const auto weights = f.get(Num::kWeightsBytes);
  const double util = f.get(Num::kGpuMemoryUtilization).value_or(0.9);
  return weights && util > 0 && util <= 1 && *weights > util * f.total;
}
std::string SayWeightsOverBudget(const Facts& f, std::map<std::string, double>* numbers) {
  const double util = f.get(Num::kGpuMemoryUtilization).value_or(0.9);
  (*numbers)["weights_estimate_bytes"] = *f.get(Num::kWeightsBytes);  // per GPU, as loaded
  return fmt::format(
      "the profile run found no room: the weights alone took {} of the card's {}, more than "
      "the {:.2f} the memory budget allows ({})",
      Gib(*f.get(Num::kWeightsBytes)), Gib(f.total), util, Gib(util * f.total));
}
bool ModelUnquantized(const Facts& f) {
  if (f.stage != Stage::kLoad || !f.model || !Quantized(*f.model)) return false;
  const auto allocated = f.get(Num::kAllocatedBytes);
  return allocated && *allocated > 1.3 * PerRank(f);
}
std::string SayModelUnquantized(const Facts& f, std::map<std::string, double>*) {
  return fmt::format(
      "{} allocated while loading a {}-bit checkpoint of {} per GPU: layers were materialised "
      "unquantized",
      Gib(*f.get(Num::kAllocatedBytes)), f.model->quantization.bits, Gib(PerRank(f)));
}

std::string SayUnquantizedByName(const Facts& f, std::map<std::string, double>* numbers) {
  const int bits = NameBits(f.model_path);
  const auto per_rank = NamedWeightsPerRank(f);
  const auto allocated = f.get(Num::kAllocatedBytes);
  if (per_rank && allocated && (bits == 4 || bits == 8)) {
    (*numbers)["weights_estimate_bytes"] = *per_rank;
    return fmt::format(
        "the model's name says {} bits ({}), about {} of weights per GPU, but PyTorch already "
        "held {} as the layers were built by the unquantized method: the engine did not read the "
        "checkpoint's quantization and builds its layers at 16 bits",
        bits, f.model_path, Gib(*per_rank), Gib(*allocated));
  }
  return fmt::format(
      "the model's name says it is quantized ({}{}), but the engine built its MoE experts with "
      "the unquantized method{}: it did not read the checkpoint's quantization (a GGUF directory, "
      "or a format it lacks) and builds the experts at 16 bits",
      f.model_path,
      bits > 0 && bits < 16 ? fmt::format(", {} bits", bits) : std::string(", a GGUF level"),
      allocated ? fmt::format(", PyTorch already holding {}", Gib(*allocated)) : std::string());
}

bool NameTooLarge(const Facts& f) {
  return f.stage == Stage::kLoad && NamedWeightsOverCard(f);
}
std::string SayNameTooLarge(const Facts& f, std::map<std::string, double>* numbers) {
  const double per_rank = *NamedWeightsPerRank(f);
  (*numbers)["weights_estimate_bytes"] = per_rank;
  return fmt::format(
      "the model's name says {} parameters at {} bits: about {} of weights per GPU at "
      "tensor parallel {}, more than the card's {}",
      NamedParamsWords(f.model_path), NameBits(f.model_path), Gib(per_rank), f.tp,
      Gib(f.total));
}

// PyTorch's message lists other processes holding more than a quarter of the card. This
// process's own share is "this process has"; a message that lists every process by pid
// without it gives PyTorch's allocated and reserved memory, and 1 GiB more is allowed for the
// CUDA context and non-torch memory (so the others are never overstated). A message cut before
// either (a wrap or an excerpt's end) that lists several processes: the failing one is at most
// the largest of them, and the others hold at least the rest.
std::optional<double> OwnBytes(const Facts& f) {
  if (auto own = f.get(Num::kProcessBytes)) return own;
  const auto allocated = f.get(Num::kAllocatedBytes);
  if (!allocated) {
    const auto largest = f.get(Num::kLargestListedProcessBytes);
    if (largest && f.get(Num::kListedProcesses).value_or(0) >= 2) return largest;
    return std::nullopt;
  }
  return *allocated + f.get(Num::kReservedUnallocatedBytes).value_or(0) + core::kGiBf;
}
// PyTorch 2.1+ lists each process NVML reports on the card (CUDACachingAllocator.cpp
// reportProcessMemoryInfo): its own pid as "Including non-PyTorch memory, this process has X",
// every other as "Process N has X". With its own line shown, the "Process" lines are all other
// processes; without it (a container, whose pid NVML does not know), the process itself may be
// one of them, and its own estimate is taken off.
// What the "Process N has X" lines add up to; none of them beside the process's own line (NVML
// sees no other process of this PID namespace) is nothing listed, not an unread message.
std::optional<double> ListedBytes(const Facts& f) {
  if (const auto listed = f.get(Num::kListedProcessBytes)) return listed;
  if (f.get(Num::kProcessBytes).value_or(0) > 0) return 0.0;
  return std::nullopt;
}
double OthersBytes(const Facts& f) {
  if (f.get(Num::kProcessBytes)) return *ListedBytes(f);
  return *f.get(Num::kListedProcessBytes) - *OwnBytes(f);
}
// Memory in use that no listed process accounts for: the card's total less what is free, this
// process's own and the others PyTorch lists. NVML lists only the processes of the caller's
// PID namespace, so another container's jobs on a shared card show only here; a few hundred
// MiB are the driver's own.
double UnlistedBytes(const Facts& f) {
  const auto free = f.get(Num::kFreeBytes);
  const auto own = f.get(Num::kProcessBytes);
  if (!free || !own || !ListedBytes(f) || f.total <= 0) return 0;
  return std::max(0.0, f.total - *free - *own - *ListedBytes(f));
}
// Freeing what others hold would have let the request through (OthersOldMessage's test for
// PyTorch's newer message, which lists the processes).
bool OthersWouldMakeRoom(const Facts& f) {
  const auto requested = f.get(Num::kRequestedBytes);
  const auto free = f.get(Num::kFreeBytes);
  return !requested || !free || *requested <= *free + OthersBytes(f) + UnlistedBytes(f);
}
bool OthersAtLoad(const Facts& f) {
  const bool starting =
      f.stage == Stage::kLoad || f.stage == Stage::kProfile || f.stage == Stage::kKvCache;
  // A model whose stated size exceeds the card would not load on it emptied either.
  return starting && ListedBytes(f) && OwnBytes(f) && f.total > 0 &&
         OthersBytes(f) + UnlistedBytes(f) > 0.25 * f.total && !NamedWeightsOverCard(f) &&
         OthersWouldMakeRoom(f);
}
// After start-up too, when PyTorch's message lists other processes holding over half the card
// and the failing process itself holds under a quarter of it: its own tensors are not what
// filled the card (a client of a server that pre-reserved the GPU, a second job on the card).
bool OthersHoldMost(const Facts& f) {
  if (!ListedBytes(f) || !OwnBytes(f) || f.total <= 0) return false;
  if (!OthersWouldMakeRoom(f)) return false;
  const double others = OthersBytes(f) + UnlistedBytes(f), own = *OwnBytes(f);
  // Also when others hold over a quarter of the card and at least as much as the failing
  // process: the program would have had that memory on a card of its own (unless its model's
  // stated size exceeds the card anyway).
  return (others > 0.5 * f.total && own < 0.25 * f.total) ||
         (others > 0.25 * f.total && others >= own && !NamedWeightsOverCard(f));
}
// vLLM allocating the KV cache it sized (not its own KV errors, read above) while PyTorch's
// message lists other processes holding more than the card's share outside the budget
// ((1 - --gpu-memory-utilization) x the card, 0.9 by default) and at least 1 GiB: the budget is
// the card's total times the utilization, and V0 (worker.py determine_num_available_blocks)
// charges only its own profile peak against it, so memory others hold beyond that share is what
// the cache then found taken; V1 checks the free memory at start-up only, against others that
// grew after it. Freeing what they hold would have let the cache in (OthersWouldMakeRoom).
bool OthersOverVllmHeadroom(const Facts& f) {
  if (f.engine != "vllm" || f.stage != Stage::kKvCache) return false;
  if (!ListedBytes(f) || !OwnBytes(f) || f.total <= 0 || NamedWeightsOverCard(f)) return false;
  const double gmu = f.get(Num::kGpuMemoryUtilization).value_or(0.9);
  const double others = OthersBytes(f) + UnlistedBytes(f);
  return others > std::max((1 - gmu) * f.total, core::kGiBf) && OthersWouldMakeRoom(f);
}
std::string SayOthers(const Facts& f, std::map<std::string, double>* numbers) {
  (*numbers)["other_process_bytes"] = OthersBytes(f);
  // Past the driver's own few hundred MiB, the unlisted memory is named with the listed.
  if (UnlistedBytes(f) > core::kGiBf) {
    (*numbers)["unlisted_process_bytes"] = UnlistedBytes(f);
    return fmt::format(
        "other processes hold {} of the GPU's {} ({} in the processes listed, {} in use by none "
        "of them: processes of another container or user on the same card)",
        Gib(OthersBytes(f) + UnlistedBytes(f)), Gib(f.total), Gib(OthersBytes(f)),
        Gib(UnlistedBytes(f)));
  }
  return fmt::format("other processes hold {} of the GPU's {}", Gib(OthersBytes(f)), Gib(f.total));
}

// PyTorch's message before 2.1 ("T total capacity; A already allocated; F free; R reserved in
// total by PyTorch", c10/cuda/CUDACachingAllocator.cpp 1.x-2.0) lists no processes, but what is
// neither free nor reserved by this process's allocator (T - F - R) is held outside it: this
// process's CUDA context (under 1 GiB, allowed for) and other processes. A quarter of the card
// held there, in a plain PyTorch or transformers program (engines allocate outside PyTorch's
// allocator themselves), is other processes.
// PyTorch 2.1+'s message from inside a container is read the same way: NVML does not know the
// container's pids, so it says "this process has 0 bytes memory in use" while its allocator
// holds memory, and lists no process; what the allocator holds is then its allocated plus its
// reserved-but-unallocated memory. ROCm's message (the HIP build's) has no process line at all,
// read the same way where it gives the reserved figure. Read so only while that is under a
// quarter of the card: a process that itself holds more may not have fitted on the card alone
// either. (CUDA's message with its process line lost to a wrap is not read so.)
std::optional<double> AllocatorHolds(const Facts& f) {
  if (f.get(Num::kReservedBytes)) return f.get(Num::kReservedBytes);
  const auto allocated = f.get(Num::kAllocatedBytes);
  const auto process = f.get(Num::kProcessBytes);
  const LogEvent* oom = f.first_of(EventKind::kTorchOom);
  const bool unlisted = process ? *process == 0.0
                                : f.get(Num::kReservedUnallocatedBytes).has_value() && oom &&
                                      Has(oom->text, "HIP out of memory");
  if (unlisted && allocated && *allocated > 0 && !f.get(Num::kListedProcessBytes)) {
    const double held = *allocated + f.get(Num::kReservedUnallocatedBytes).value_or(0);
    if (held < 0.25 * f.total) return held;
  }
  return std::nullopt;
}
double OldMessageOthers(const Facts& f) {
  return f.total - *f.get(Num::kFreeBytes) - *AllocatorHolds(f) - core::kGiBf;
}
bool OthersOldMessage(const Facts& f) {
  if (f.engine != "pytorch" && f.engine != "transformers") return false;
  if (!AllocatorHolds(f) || !f.get(Num::kFreeBytes) || f.total <= 0) return false;
  // Others are the cause only where the request would have fit without them: a single request
  // larger than the free memory and all they hold (an attention-score tensor over a whole card)
  // is the program's own.
  const auto requested = f.get(Num::kRequestedBytes);
  if (requested && *requested > *f.get(Num::kFreeBytes) + OldMessageOthers(f)) return false;
  return OldMessageOthers(f) > std::max(0.25 * f.total, core::kGiBf);
}
// With no frame or milestone: the load (a guess, as for a full card): a program meets memory
// held by others as soon as it places its weights.
bool OthersOldNoEvidence(const Facts& f) {
  return OthersOldMessage(f) && !f.frame_stage && !f.milestone_stage;
}
// Neither frame nor milestone, and this process's allocator holds nothing ("0 bytes reserved in
// total by PyTorch"): the failed request was its first, before any weight was on the card, so
// the card was taken before the program started (the corpus README's startup stage).
bool OthersBeforeAnyWeight(const Facts& f) {
  return OthersOldNoEvidence(f) && *AllocatorHolds(f) == 0;
}
// The same in PyTorch's listing message: "Of the allocated memory 0 bytes is allocated by
// PyTorch, and 0 bytes is reserved by PyTorch but unallocated" while the processes it lists hold
// over a quarter of the card, with no traceback or milestone: the failed request was the
// program's first, the card taken before it started. (A traceback may show a later phase the
// doctor has no frame for: a rank of a multi-GPU job placing a tensor on another rank's card for
// the first time while it saves, whose own card holds its work.)
bool OthersBeforeFirstAllocation(const Facts& f) {
  if (f.frame_stage || f.milestone_stage || !f.frames.empty() ||
      f.has(EventKind::kTraceback) || !ListedBytes(f) || f.total <= 0) {
    return false;
  }
  const auto allocated = f.get(Num::kAllocatedBytes);
  const auto unallocated = f.get(Num::kReservedUnallocatedBytes);
  return allocated && *allocated == 0 && unallocated && *unallocated == 0 &&
         OthersBytes(f) + UnlistedBytes(f) > 0.25 * f.total && OthersWouldMakeRoom(f);
}
// After start-up, as for the listing message (OthersHoldMost): others hold over half the card
// and this process's allocator under a quarter of it.
bool OthersOldHoldMost(const Facts& f) {
  return OthersOldMessage(f) && f.stage == Stage::kRuntime &&
         OldMessageOthers(f) > 0.5 * f.total && *AllocatorHolds(f) < 0.25 * f.total;
}
bool OthersOldStarting(const Facts& f) {
  return OthersOldMessage(f) && (f.stage == Stage::kLoad || f.stage == Stage::kKvCache);
}
std::string SayOthersOld(const Facts& f, std::map<std::string, double>* numbers) {
  (*numbers)["other_process_bytes"] = OldMessageOthers(f);
  return fmt::format(
      "{} of the GPU's {} is neither free nor reserved by this process's PyTorch allocator "
      "(less 1 GiB for its CUDA context): other processes hold it",
      Gib(OldMessageOthers(f)), Gib(f.total));
}

// In any phase, PyTorch held reserved-but-unallocated memory of at least twice the request and
// at least 1 GiB: the request would have fit in what the caching allocator held had it not been
// split (expandable segments recover it). A few hundred MiB reserved is the allocator's normal
// slack, not fragmentation.
bool Fragmented(const Facts& f) {
  const auto requested = f.get(Num::kRequestedBytes);
  const auto reserved_free = f.get(Num::kReservedUnallocatedBytes);
  if (!requested || !reserved_free || *requested <= 0) return false;
  return *reserved_free >= std::max(2 * *requested, core::kGiBf);
}
// (Not while loading weights, where the weights that did not fit are the cause, unless the
// load is a quantizer's layer-by-layer run: its weights move one layer at a time, and its
// calibration tensors of many sizes are made and freed over and over.)
// Nor while CUDA graphs are captured: what a captured graph's tensors freed stays reserved in
// the graphs' private pool (torch.cuda.graph's pool, which vLLM and SGLang share across their
// captures), counted as reserved but unallocated and kept for replay, where no allocation
// outside the pool can use it and expandable segments do not return it: the graphs' memory.
bool FragmentedPastLoad(const Facts& f) {
  return (f.stage != Stage::kLoad || QuantizerFrames(f)) && f.stage != Stage::kCudaGraph &&
         Fragmented(f);
}
// NCCL's buffers failing as the process group comes up, before anything was loaded:
// init_process_group with a device_id (torch/distributed/distributed_c10d.py, 2.3+) creates the
// communicator eagerly, its buffers NCCL's first allocation on the card; with none of the
// program's tensors there yet, the card was held by others (other processes, or other ranks
// sharing its GPU when each rank did not set its own device). (Not a later collective such as a
// barrier: a program calls those between its steps too, with its own tensors on the card.)
bool NcclAllocAtGroupStart(const Facts& f) {
  if (!NcclAlloc(f) || !AnyFrame(f, {"init_process_group"})) return false;
  for (EventKind k : {EventKind::kLoadBegin, EventKind::kWeightsLoaded, EventKind::kServing}) {
    if (f.has(k)) return false;
  }
  return !f.get(Num::kTrainingLaunch) &&
         !AnyFrame(f, {"train", "_inner_training_loop", "training_step", "backward", "step"});
}
// NCCL's buffers (NcclAlloc, below) in a PyTorch program while it runs.
bool NcclAllocBesideTorchCache(const Facts& f) {
  return f.stage == Stage::kRuntime && NcclAlloc(f) &&
         (f.engine == "pytorch" || f.engine == "transformers");
}
// vLLM's sleep mode (vllm/device_allocator/cumem.py CuMemAllocator, 0.7.3+): sleep() releases
// the physical memory of the weights and the KV cache, wake_up() maps it back (create_and_map ->
// csrc/cumem_allocator.cpp). Out of memory there means something took that memory in between:
// in an RL trainer that runs the engine in its own process (verl's hybrid engine: the rollout
// sharding manager's __enter__ or generate_sequences wakes it), the training step's blocks kept
// by PyTorch's caching allocator, which the engine's allocator cannot map (verl PR #575);
// otherwise a colocated process (OpenRLHF's actors beside its vLLM actors).
// SGLang's counterpart (torch_memory_saver: release_memory_occupation, then
// resume_memory_occupation re-creates the mappings, "[torch_memory_saver.cpp] CUresult error: 2
// (out of memory) ... func=cu_mem_create") reads the same.
bool WakeUpInTrainer(const Facts& f) {
  return WakeUp(f) && AnyFrame(f, {"__enter__", "generate_sequences"});
}
bool WakeUpBesideTrainer(const Facts& f) { return WakeUp(f) && !WakeUpInTrainer(f); }
// TGI's 0.9 images ran PyTorch's cudaMallocAsync backend, whose OOM message counts only live
// tensors as "Currently allocated" and adds what CUDA reports free (the tgi reader's free bytes;
// c10/cuda/CUDAMallocAsyncAllocator.cpp mallocAsync). The rest of the device limit, less 1 GiB
// for the CUDA context, is held by the shard's async pool, which keeps freed blocks cached: at
// twice the request and 1 GiB, the request would have fit in it (as for reserved-but-unallocated
// memory above). The message's format has no reserved fields.
double AsyncPoolBytes(const Facts& f) {
  return f.total - *f.get(Num::kFreeBytes) - *f.get(Num::kAllocatedBytes) - core::kGiBf;
}
bool TgiAsyncPool(const Facts& f) {
  if (f.engine != "tgi" || f.get(Num::kReservedBytes) || f.get(Num::kReservedUnallocatedBytes)) {
    return false;
  }
  const auto requested = f.get(Num::kRequestedBytes);
  if (!requested || !f.get(Num::kFreeBytes) || !f.get(Num::kAllocatedBytes) || f.total <= 0) {
    return false;
  }
  return AsyncPoolBytes(f) >= std::max(2 * *requested, core::kGiBf);
}
std::string SayAsyncPool(const Facts& f, std::map<std::string, double>* numbers) {
  (*numbers)["pool_bytes"] = AsyncPoolBytes(f);
  return fmt::format(
      "only {} of the {} limit was allocated to tensors and {} was free when {} failed: about {} "
      "was cached in the cudaMallocAsync pool (TGI 0.9's allocator backend), not given to the "
      "request",
      Gib(*f.get(Num::kAllocatedBytes)), Gib(f.total), Gib(*f.get(Num::kFreeBytes)),
      Gib(*f.get(Num::kRequestedBytes)), Gib(AsyncPoolBytes(f)));
}
// While loading, not when PyTorch has allocated 95% of the card: what the load placed fills it,
// and the reserved slack, were it all recovered, would not hold the rest of the weights.
bool FragmentedAtLoad(const Facts& f) {
  const auto allocated = f.get(Num::kAllocatedBytes);
  return Fragmented(f) && !(allocated && f.total > 0 && *allocated >= 0.95 * f.total);
}
// A conversion after loading (load_copies.cc), placed before the model-size rows (the frames
// show the weights were allocated), unless the allocator held the request (fragmentation).
// Its frames, the shard bar at 100% before a load_model traceback, or transformers' warning
// that it dequantizes the checkpoint. That warning wins over the allocator's slack: the load
// places a model two (FP8) to four (MXFP4) times the checkpoint's size, so a request the cached
// blocks would have held is one of many the rest of the load still makes.
bool ConvertedAfterLoading(const Facts& f) {
  if (DequantizeOnLoad(f)) return true;
  return (PostLoadConversion(f) || ConvertedAfterShards(f)) && !FragmentedAtLoad(f);
}
// At runtime a static cache's mention, not the fused setting (whose cache was allocated at load).
// A mention alone (a model's default cache_implementation) yields to a multimodal forward: the
// vision tower runs after the cache is allocated, and its frames say where the request failed.
bool RuntimeStaticCache(const Facts& f) {
  if (f.stage != Stage::kRuntime) return false;
  if (GenerateCacheFrames(f)) return true;
  return f.has(EventKind::kStaticCache) && !FusedSetting(f) && !f.multimodal;
}
// The pool --kv-cache-memory-bytes fixed (vLLM's "reserved X GiB memory for KV Cache as
// specified by kv_cache_memory_bytes config"), allocated without a profile to size it.
bool FixedKvAtKv(const Facts& f) {
  return f.stage == Stage::kKvCache && f.get(Num::kFixedKvBytes).value_or(0) > 0;
}
bool RuntimeMultimodal(const Facts& f) { return f.stage == Stage::kRuntime && f.multimodal; }
// Serving, a request's images; training (a launch or steps in the log), a batch's.
std::string SayRuntimeMultimodal(const Facts& f, std::map<std::string, double>*) {
  if (f.get(Num::kTrainingLaunch)) {
    return "a training batch's images or video frames ran the vision encoder out of memory: its "
           "activations (kept for the backward pass) grow with the pixels per image and the "
           "images per batch";
  }
  return "a request's images ran the vision encoder out of memory (the encoder's activations "
         "grow with the image's pixels); not the KV cache, which was allocated at start-up";
}

// The engine's words for `rule`: its own reader's, else the default reader's, else the first
// reader's that has some.
std::string EngineWords(Words rule, const Facts& f) {
  for (const Reader* r : ReadersFor(f.engine)) {
    if (!r->words) continue;
    if (std::string s = r->words(rule, f); !s.empty()) return s;
  }
  return "";
}

// A row with a fixed summary, one worded by the engine, one whose summary carries numbers.
Rule Text(Cause c, Stage s, bool (*when)(const Facts&), const char* summary) {
  return {c, s, when, summary, nullptr, Words::kNone};
}
Rule Worded(Cause c, Stage s, bool (*when)(const Facts&), Words words) {
  return {c, s, when, nullptr, nullptr, words};
}
Rule Said(Cause c, Stage s, bool (*when)(const Facts&),
          std::string (*say)(const Facts&, std::map<std::string, double>*)) {
  return {c, s, when, nullptr, say, Words::kNone};
}

// The last row's summary. transformers' generate (and a program calling it) grows its dynamic
// KV cache with every token it generates, so there the cache is part of what grows; a paged
// engine allocated its cache at start-up.
std::string SayRuntimeActivation(const Facts& f, std::map<std::string, double>*) {
  // A training step or an evaluation on the stack (transformers' Trainer, a plain loop's
  // backward): not generation, whatever the engine.
  if (AnyFrame(f, {"evaluation_loop", "prediction_step"})) {
    return "a runtime allocation failed in an evaluation: the activations of a batch, and the "
           "predictions the loop gathers on the GPU across batches";
  }
  if (AnyFrame(f, {"_inner_training_loop", "training_step", "backward", "_engine_run_backward",
                   "train"})) {
    return "a runtime allocation failed in a training step: the activations the forward keeps "
           "for the backward pass and the gradients it writes, which grow with the batch and "
           "the sequence length";
  }
  if (f.engine == "transformers" || AnyFrame(f, {"generate", "_sample", "_greedy_search"})) {
    return "a runtime allocation failed while generating: the activations of a long prompt or a "
           "large batch, or the dynamic KV cache, which generate grows with every new token";
  }
  // A program's own decoding loop keeps a KV cache that grows with every token, as generate's.
  if (std::any_of(f.frames.begin(), f.frames.end(), InferenceFrame)) {
    return "a runtime allocation failed while the program decoded: the activations of a long "
           "input or a large batch, or the KV cache its decoding loop grows with every token";
  }
  if (f.engine == "pytorch") {
    return "a runtime allocation failed after the model was placed: the activations of a long "
           "input or a large batch (or a cache the program grows as it runs)";
  }
  return "a runtime allocation for activations failed (a long prompt or a large batch); not the "
         "KV cache, which a paged engine allocates at start-up";
}

constexpr char kFragmentedText[] =
    "an allocation failed although PyTorch held more reserved-but-unallocated memory than twice "
    "the request: fragmentation of the caching allocator";

}  // namespace

bool WakeUp(const Facts& f) {
  return AnyFrame(f, {"wake_up", "create_and_map", "resume_memory_occupation"});
}

// NCCL could not allocate its own buffers ("Failed to CUDA calloc N bytes", "Cuda failure 'out
// of memory'": NCCL's cudaMalloc, outside PyTorch's caching allocator) while a PyTorch program
// ran: the blocks PyTorch freed stay reserved in its cache, where NCCL cannot use them (the
// small buffers of a collective fail on a card whose memory PyTorch holds).
bool NcclAlloc(const Facts& f) {
  return FailureSays(f, {"Failed to CUDA calloc", "Cuda failure 'out of memory'"});
}

// Ollama's MLX runner refused the model against the GPU's free memory (readers/ollama.cc: the
// system-memory event with host 0).
bool OllamaGpuRefusal(const Facts& f) {
  const LogEvent* e = f.first_of(EventKind::kOllamaSystemMemory);
  if (!e) return false;
  auto it = e->values.find(Num::kHost);
  return it != e->values.end() && it->second == 0;
}

// The optimizer's step or its states' set-up on the stack, where the traceback places the
// failure in training or its set-up (not a quantizer's or an engine's own phase).
bool OptimizerStates(const Facts& f) {
  return OptimizerFrames(f) && (f.stage == Stage::kRuntime || f.stage == Stage::kLoad);
}

// llama.cpp's decode found no free KV cells while several sequences shared them (server slots).
bool KvCellsShared(const Facts& f) {
  return f.has(EventKind::kKvCellsFull) && f.has(EventKind::kParallelSequences);
}

// The report says another instance of the engine shared the GPU (readers/pytorch.cc
// OtherInstanceWords), and vLLM or SGLang failed starting up: before its KV pool was sized, or
// finding nothing left for it. Each instance sizes its pool from what it measures free or
// profiles, so the other's memory (or its growth while this one profiled) is what was missing.
bool OtherInstanceWords(const Facts& f) {
  return f.has(EventKind::kOtherInstanceWords) && (f.engine == "vllm" || f.engine == "sglang");
}
bool OtherInstanceLeftNoKv(const Facts& f) { return OtherInstanceWords(f) && NoKvMemory(f); }
// KoboldCpp's own note that another application held GPU memory at start-up, and its load
// (weights, KV cache or compute buffers) then failed: the memory it needed was what the other
// held, when the failed request fits in that (or the log gives no request).
// Ollama's scheduler the same way: "gpu VRAM usage didn't recover within timeout" (server/
// sched.go waitForVRAMRecovery, 0.1.3x+), the previous runner's memory not yet given back when
// the next model was placed.
bool KoboldCppOtherApp(const Facts& f) {
  const LogEvent* e = f.first_of(EventKind::kOtherInstanceWords);
  const bool starting = !GgmlFailedServing(f) && f.milestone_stage != Stage::kRuntime;
  if (e == nullptr || (f.engine != "koboldcpp" && f.engine != "ollama") || !starting) {
    return false;
  }
  const auto used = e->values.find(Num::kUsedBytes);
  const auto requested = f.get(Num::kRequestedBytes);
  return !requested || used == e->values.end() || *requested <= 2 * used->second;
}
bool OtherInstanceHeldTheCard(const Facts& f) {
  return OtherInstanceWords(f) && (f.stage == Stage::kStartup || f.stage == Stage::kLoad ||
                                   f.stage == Stage::kProfile || f.stage == Stage::kKvCache);
}

constexpr char kOtherInstanceText[] =
    "another instance of the engine shares the GPU (the report says so): each instance sizes its "
    "memory from what it finds free or profiles, so what the other holds, or takes while this "
    "one profiles, is what this one lacked";

const std::vector<Rule>& Rules() {
  using C = Cause;
  using S = Stage;
  using E = EventKind;
  static const std::vector<Rule> kRules = {
      // The engine's own error text.
      Worded(C::kKvTooLongContext, S::kKvCache, MaxLenError, Words::kMaxLenCheck),
      Worded(C::kOtherProcess, S::kStartup, Seen<E::kStartupError>, Words::kStartupFreeMemory),
      Worded(C::kOtherProcess, S::kProfile, Seen<E::kProfilingError>, Words::kProfilingError),
      Worded(C::kKvTooManySequences, S::kKvCache, Seen<E::kMambaBlocks>, Words::kMambaBlocks),
      Worded(C::kSamplerWarmup, S::kProfile, SamplerInProfile, Words::kSamplerWarmup),
      Worded(C::kSamplerWarmup, S::kWarmup, SamplerOom, Words::kSamplerWarmup),
      Worded(C::kActivationPeak, S::kProfile, TgiWarmupPrefill, Words::kWarmupPrefill),
      Said(C::kWeightsTooLarge, S::kProfile, WeightsOverBudgetAtProfile, SayWeightsOverBudget),
      Text(C::kWeightsTooLarge, S::kStartup, OllamaGpuRefusal,
           "Ollama's MLX runner refused to start: the model's weights are larger than the "
           "GPU's free memory less its overhead (the runner takes the first GPU only and cannot "
           "offload layers to the CPU)"),
      Worded(C::kHostMemory, S::kStartup, Seen<E::kOllamaSystemMemory>, Words::kHostMemory),
      Text(C::kMultimodalEncoder, S::kRuntime, EncoderCacheRefusal,
           "a request's image (or audio, video) item has more embedding tokens than the encoder "
           "cache vLLM sized at start-up from --limit-mm-per-prompt and the model's largest item: "
           "it is refused before the encoder runs"),
      Worded(C::kKvTooLongContext, S::kRuntime, Seen<E::kContextExceeded>, Words::kContextExceeded),
      Text(C::kCudagraphCapture, S::kRuntime, GgmlCudaGraph,
           "ggml-cuda captures the decode graph as a CUDA graph and instantiates it "
           "(cudaGraphInstantiate) while serving: the instantiation found no memory left"),
      Worded(C::kKvTooManySequences, S::kRuntime, KvCellsShared, Words::kKvCellsFull),
      Worded(C::kKvTooLongContext, S::kRuntime, Seen<E::kKvCellsFull>, Words::kKvCellsFull),
      Worded(C::kCudagraphCapture, S::kKvCache, GraphEstimateAteKv, Words::kGraphEstimate),
      Text(C::kKvTooLongContext, S::kKvCache, V0MaxLenCheck,
           "V0's initialize_cache check failed with GPU blocks left: one --max-model-len request "
           "needs more tokens than the blocks hold (# GPU blocks x 16)"),
      // The report's words that another instance shared the GPU, before the engine's own
      // accounting of a pool it found no room for (its messages above name what they check).
      Text(C::kOtherProcess, S::kKvCache, OtherInstanceLeftNoKv, kOtherInstanceText),
      Text(C::kOtherProcess, S::kLoad, KoboldCppOtherApp,
           "the engine noted that another program (or a model still unloading) held GPU "
           "memory when the load began, and the load then failed: the model, its context and "
           "buffers were placed as if that memory were free"),
      Text(C::kOtherProcess, S::kStartup, TorchCudaInitOom,
           "CUDA could not create this process's context at its first CUDA call (torch.cuda's "
           "lazy initialisation), before any of its tensors was on the card: the card was "
           "already full, held by other processes or an earlier run"),
      Text(C::kOtherProcess, S::kStartup, GgmlOomBeforeLoad,
           "CUDA's check failed as the backend started, before any of the model was read (the "
           "devices listed, no loader, context or buffer line): the context, cuBLAS handle and "
           "streams it makes for each device found no room, so the card was already held, by "
           "other processes or an earlier run"),
      Text(C::kComputeBuffer, S::kWarmup, GgmlUnnamedOomAfterContext,
           "CUDA's check failed after the context's compute buffers were allocated and before "
           "anything was served: the first decode, the warm-up llama.cpp runs as it starts, "
           "whose memory pool and cuBLAS workspace grow outside the buffers it measured"),
      {C::kOtherProcess, S::kKvCache, OtherInstanceHeldTheCard, kOtherInstanceText, nullptr,
       Words::kNone, true},
      Said(C::kWeightsTooLarge, S::kKvCache, WeightsFillTheCard, SayWeightsFillTheCard),
      Worded(C::kKvNoMemory, S::kKvCache, Seen<E::kSglangNotEnough>, Words::kTokenPoolEmpty),
      Text(C::kKvNoMemory, S::kKvCache, NoKvMemory,
           "nothing is left for the KV cache: the weights and the profiled activation peak use the "
           "whole --gpu-memory-utilization budget"),
      Text(C::kKvTooLongContext, S::kKvCache, KvTooSmall,
           "the KV cache holds fewer tokens than one --max-model-len request (# GPU blocks x 16 "
           "tokens)"),
      // llama.cpp's KV buffer (also in host memory), then host memory in the phase the
      // evidence shows, then llama.cpp's other failed allocations.
      Text(C::kHostMemory, S::kKvCache, GgmlKvHost,
           "the context's memory was refused for the host's RAM: the estimate of what the "
           "context keeps in system memory is more than is free"),
      // Another program holding the card as llama.cpp placed the model, whatever it then
      // failed to allocate (the KV cache, a weight buffer, a compute buffer).
      {C::kOtherProcess, S::kLoad, GgmlOthersHeldTheCard, nullptr, SayGgmlOthers, Words::kNone,
       false, true},
      Text(C::kKvTooManySequences, S::kKvCache, GgmlRecurrentState,
           "the recurrent-state cache (the fixed state of the model's Mamba or linear-attention "
           "layers, one copy per sequence: -np slots) did not fit after the weights and the "
           "attention layers' KV cache"),
      Text(C::kKvTooManySequences, S::kKvCache, GgmlKvSequences,
           "the context was refused before it was allocated: its KV cache for every sequence "
           "(each with its own context) is more than the free device memory"),
      Worded(C::kKvTooLongContext, S::kKvCache, GgmlKv, Words::kKvBuffer),
      Worded(C::kHostMemory, S::kKvCache, HiCacheHostPool, Words::kHostMemory),
      // LMCache's host buffer of KV chunks full (facts.cc LmcacheHostBuffer): its chunks are
      // stored after each forward and retrieved before one (the connector's save_kv_layer /
      // start_load_kv), so the message places it while serving, frames or not.
      Worded(C::kHostMemory, S::kRuntime, LmcacheHostBuffer, Words::kHostMemory),
      Text(C::kHostMemory, S::kRuntime, GgmlOutputBufferAtDecode,
           "the output buffer (each output token's logits, n_vocab floats, kept in pinned or "
           "plain host memory) could not grow to a batch's outputs: every token of an "
           "embedding or all-logits batch is an output"),
      Text(C::kHostMemory, S::kKvCache, GgmlOutputBuffer,
           "the context's output buffer (the logits of each sequence's output token, n_vocab "
           "floats, kept in pinned or plain host memory) could not be allocated when the "
           "context was created, before its KV cache: the host is out of (pinned) memory"),
      Text(C::kHostMemory, S::kRuntime, DataLoaderSharedMemory,
           "the DataLoader's workers ran out of shared memory (/dev/shm), through which they "
           "hand batches to the training process: a container's shared-memory limit, not the "
           "GPU's memory"),
      Text(C::kHostMemory, S::kStartup, SharedMemoryUnplaced,
           "a shared-memory segment (/dev/shm: NCCL's buffers between the GPUs of one node) "
           "could not be created as the processes set up their communication: a container's "
           "shared-memory limit, not the GPU's memory"),
      {C::kHostMemory, S::kStartup, SharedMemory,
       "a shared-memory segment (/dev/shm: NCCL's buffers between the GPUs of one node) could "
       "not be created: a container's shared-memory limit, not the GPU's memory",
       nullptr, Words::kNone, true},
      Text(C::kComputeBuffer, S::kProfile, HostComputeBufferHuge,
           "a compute graph's buffer in host memory could not be allocated when the context "
           "reserved its graphs, and it is far larger than a default context's: the context "
           "(and the parallel sequences) asked for makes the graph too large for any host"),
      Text(C::kHostMemory, S::kProfile, HostBufferAtReserve,
           "a compute graph's buffer in host memory (pinned CUDA_Host or CPU) could not be "
           "allocated when the context reserved its graphs: the host-side compute buffer, which "
           "grows with the micro-batch and the context"),
      Worded(C::kHostMemory, S::kLoad, HostBufferAtLoad, Words::kHostMemory),
      {C::kHostMemory, S::kLoad, HostBuffer, nullptr, nullptr, Words::kHostMemory, true},
      Text(C::kHostMemory, S::kRuntime, DataLoaderWorkerKilled,
           "a DataLoader worker was killed (SIGKILL) while batches were loaded: the kernel's OOM "
           "killer, host memory exhausted by the workers' copies of the dataset and their "
           "prefetched batches beside the main process"),
      Text(C::kHostMemory, S::kLoad, CpuOffloadPinned,
           "--cpu-offload-gb's copies of the weights, pinned in host memory as the model is "
           "built, did not fit in the host's RAM (or the container's memory limit): pinned "
           "memory cannot be paged out, and CUDA reports its failure as out of memory"),
      {C::kHostMemory, S::kLoad, PinnedHostAlloc,
       "a page-locked (pinned) host allocation failed: CUDA reports it as out of memory, but the "
       "memory is the host's (pinned memory cannot be paged out; WSL and containers cap it)",
       nullptr, Words::kNone, true},
      Text(C::kHostMemory, S::kKvCache, KvOffloadPinned,
           "the KV offloading buffers (--kv-offloading-size), pinned in host memory when the KV "
           "cache is set up, did not fit in the host's RAM: CUDA reports a failed page-locked "
           "allocation as out of memory"),
      Text(C::kHostMemory, S::kKvCache, SwapSpacePinned,
           "V0's swap space (--swap-space GiB a GPU, 4 by default), allocated in pinned host "
           "memory after the GPU's KV cache, did not fit in the host's RAM: pinned memory "
           "cannot be paged out"),
      Text(C::kHostMemory, S::kLoad, PrefetchOverRamAtLoad,
           "vLLM warned that the checkpoint it prefetches into the page cache is larger than 90% "
           "of the host's available RAM, and the load then stopped with no GPU error: the "
           "kernel's OOM killer ends a worker that runs out of host memory silently"),
      Text(C::kHostMemory, S::kKvCache, SglangHicacheKilled,
           "SGLang's hierarchical cache (HiCache) allocated its host KV pools, one per rank, and "
           "the kernel's OOM killer then ended the scheduler: the ranks' host pools together "
           "exceed the host's (or the container's) memory"),
      Worded(C::kHostMemory, S::kLoad, HostOomKillAtLoad, Words::kHostMemory),
      {C::kHostMemory, S::kLoad, HostOomKill, nullptr, nullptr, Words::kHostMemory, true},
      Text(C::kActivationPeak, S::kLoad, ExLlamaConvertStopped,
           "ExLlamaV2's conversion stopped in its progress with no error line: it reads one "
           "module of the 16-bit model at a time and keeps the calibration states on disk, so "
           "host memory is seldom what runs out; the module's calibration pass on the GPU is (a "
           "guess, the excerpt may be cut before its error)"),
      Text(C::kActivationPeak, S::kLoad, QuantizerStoppedAtFirstLayer,
           "the quantization run stopped in its first layer with no error line or traceback: the "
           "per-layer calibration work on the GPU (the calibration inputs through the layer, "
           "the statistics or the tuned block's activations) peaks at the first layer already, "
           "while host memory fills as finished layers accumulate (a guess: the excerpt is cut "
           "before its error)"),
      Text(C::kHostMemory, S::kLoad, QuantizerStopped,
           "the quantization run stopped in its progress with no error line or traceback: a GPU "
           "out-of-memory prints one, the kernel's OOM killer ends the process silently (host "
           "memory; a guess, the excerpt may be cut before its error)"),
      {C::kMultimodalEncoder, S::kProfile, GgmlEncoderAtProfile, nullptr, nullptr,
       Words::kProjectorWarmup, true},
      {C::kMultimodalEncoder, S::kRuntime, GgmlEncoderAtRuntime, nullptr, nullptr,
       Words::kImageComputeBuffer, true},
      Worded(C::kMultimodalEncoder, S::kLoad, GgmlMmprojLoad, Words::kProjectorLoad),
      Worded(C::kMultimodalEncoder, S::kProfile, GgmlMmWarmup, Words::kProjectorWarmup),
      Worded(C::kMultimodalEncoder, S::kRuntime, GgmlComputeImage, Words::kImageComputeBuffer),
      Worded(C::kMultimodalEncoder, S::kRuntime, OllamaServingCompute, Words::kImageComputeBuffer),
      Worded(C::kMultimodalEncoder, S::kRuntime, GgmlReserveForImageArg,
             Words::kImageComputeBuffer),
      Worded(C::kWeightsTooLarge, S::kWarmup, GgmlWarmupOverWorkingSet, Words::kMetalWorkingSet),
      Text(C::kKvTooLongContext, S::kWarmup, MetalKvAtWarmup,
           "Metal could not make the context's buffers resident when the warm-up's first graph "
           "ran (it accepts every allocation and commits them at first use): the KV cache, "
           "several times the compute buffer, is what the context added to the weights"),
      Worded(C::kComputeBuffer, S::kWarmup, GgmlWarmupDecode, Words::kWarmupComputeBuffer),
      Worded(C::kWeightsTooLarge, S::kRuntime, GgmlDecodeOverWorkingSet, Words::kMetalWorkingSet),
      Text(C::kKvTooLongContext, S::kRuntime, MetalKvAtDecode,
           "Metal could not make the context's buffers resident when a graph ran (it accepts "
           "every allocation and commits them at first use): the KV cache, several times the "
           "compute buffer, is what the context added to the weights"),
      Worded(C::kComputeBuffer, S::kRuntime, GgmlComputeDecode, Words::kDecodeComputeBuffer),
      Worded(C::kComputeBuffer, S::kProfile, GgmlCompute, Words::kContextComputeBuffer),
      Worded(C::kMultimodalEncoder, S::kRuntime, GgmlBufferImage, Words::kImageBuffer),
      Worded(C::kKvTooLongContext, S::kKvCache, GgmlBufferInKvFrames, Words::kKvBuffer),
      Worded(C::kComputeBuffer, S::kRuntime, GgmlBufferServing,
             Words::kDecodeComputeBuffer),
      Worded(C::kKvTooLongContext, S::kKvCache, GgmlBufferIsKv, Words::kKvBuffer),
      Worded(C::kComputeBuffer, S::kProfile, GgmlBufferAtReserve, Words::kContextComputeBuffer),
      Worded(C::kKvTooLongContext, S::kKvCache, GgmlBufferAfterWeights, Words::kKvBuffer),
      Worded(C::kKvTooLongContext, S::kKvCache, GgmlBufferAtContextCreation, Words::kKvBuffer),
      Text(C::kComputeBuffer, S::kProfile, GgmlBufferOverNamedModel,
           "a buffer larger than the whole named model at 32 bits a weight failed, so not the "
           "weights': the context's buffers (the compute buffers, which at a long context "
           "without flash attention hold a ubatch's attention scores against the whole context, "
           "or the KV cache) do not fit"),
      Worded(C::kWeightsTooLarge, S::kLoad, GgmlBuffer, Words::kWeightBuffer),
      // SGLang's token pool.
      Worded(C::kKvTooManySequences, S::kRuntime, SglangTokenPool, Words::kTokenPool),
      // Fragmentation, in any phase: the allocator held what was asked (twice the request), so
      // the request would have fit whatever ran it, an encoder's frames included.
      Text(C::kWeightsTooLarge, S::kRuntime, FsdpFullStateDict,
           "FSDP gathered the full state dict on the GPU to save it: every parameter unsharded "
           "and cloned on each rank beside the training state, the whole model's weights at "
           "once"),
      {C::kFragmentation, S::kRuntime, FragmentedPastLoad, kFragmentedText, nullptr, Words::kNone,
       true},
      Text(C::kOtherProcess, S::kStartup, NcclAllocAtGroupStart,
           "NCCL could not allocate its communicator's buffers as the process group came up, "
           "before the program had placed anything on the card: it was already held by other "
           "processes, or by other ranks sharing this GPU (each rank should set its own "
           "device, torch.cuda.set_device(local_rank))"),
      Text(C::kFragmentation, S::kRuntime, NcclAllocBesideTorchCache,
           "NCCL could not allocate its buffers for a collective: it allocates with cudaMalloc, "
           "outside PyTorch's caching allocator, and the memory the training step freed stays "
           "reserved in PyTorch's cache, where NCCL cannot use it"),
      // The encoder that vLLM's profile skipped (--skip-mm-profiling), while serving.
      Text(C::kMultimodalEncoder, S::kRuntime, SkippedEncoderProfileAtRuntime,
           "a request's images ran the multimodal encoder out of memory: vLLM skipped the "
           "encoder's profile (--skip-mm-profiling), so the KV cache took the memory its "
           "activations and embeddings need"),
      // The allocation site in a multimodal encoder while serving.
      Text(C::kMultimodalEncoder, S::kRuntime, EncoderAtRuntime,
           "a request's images (or audio) ran the multimodal encoder out of memory: the failed "
           "allocation is in the encoder's frames, whose activations grow with the pixels and "
           "items"),
      // vLLM V0's preemption by swapping with the CPU swap space full.
      Text(C::kKvTooManySequences, S::kRuntime, Seen<E::kVllmSwapExhausted>,
           "the KV cache was full with the running sequences, and vLLM's preemption by swapping "
           "found no room left in the CPU swap space (--swap-space) for the sequences it "
           "pushed out"),
      // vLLM waking from sleep mode in an RL trainer.
      Text(C::kFragmentation, S::kRuntime, WakeUpInTrainer,
           "vLLM's wake_up could not map back its weights and KV cache: the training step that "
           "ran in this process left its freed blocks in PyTorch's caching allocator, which the "
           "engine's sleep-mode allocator cannot use"),
      Text(C::kOtherProcess, S::kRuntime, WakeUpBesideTrainer,
           "vLLM's wake_up could not map back its weights and KV cache: a process colocated on "
           "the GPU (the trainer) holds the memory the engine released when it slept"),
      // Other processes holding a quarter of the card during start-up, or vLLM's share outside
      // its budget as it allocates the KV cache.
      {C::kOtherProcess, S::kStartup, OthersBeforeFirstAllocation, nullptr, SayOthers,
       Words::kNone},
      {C::kOtherProcess, S::kLoad, OthersAtLoad, nullptr, SayOthers, Words::kNone, true},
      {C::kOtherProcess, S::kKvCache, OthersOverVllmHeadroom, nullptr, SayOthers, Words::kNone,
       true},
      {C::kOtherProcess, S::kRuntime, OthersHoldMost, nullptr, SayOthers, Words::kNone, true},
      Said(C::kOtherProcess, S::kStartup, OthersBeforeAnyWeight, SayOthersOld),
      Said(C::kOtherProcess, S::kLoad, OthersOldNoEvidence, SayOthersOld),
      {C::kOtherProcess, S::kLoad, OthersOldStarting, nullptr, SayOthersOld, Words::kNone, true},
      {C::kOtherProcess, S::kRuntime, OthersOldHoldMost, nullptr, SayOthersOld, Words::kNone,
       true},
      {C::kFragmentation, S::kRuntime, TgiAsyncPool, nullptr, SayAsyncPool, Words::kNone, true},
      // A training run's optimizer: its states are the model's, not the batch's.
      {C::kWeightsTooLarge, S::kRuntime, OptimizerStates,
       "the optimizer's step ran out of memory: its states (Adam keeps two fp32 moments per "
       "trained parameter, created at the first step) and the update's temporaries sit beside "
       "the parameters and their gradients: the model states do not fit, whatever the batch",
       nullptr, Words::kNone, true},
      // By stage.
      Worded(C::kKernelWarmup, S::kWarmup, KernelWarmup, Words::kKernelWarmup),
      Worded(C::kSamplerWarmup, S::kWarmup, At<S::kWarmup>, Words::kSamplerWarmup),
      Worded(C::kCudagraphCapture, S::kCudaGraph, At<S::kCudaGraph>, Words::kGraphCapture),
      Text(C::kCudagraphCapture, S::kProfile, GraphEstimateCapture,
           "vLLM's CUDA-graph memory estimate (profile_cudagraph_memory, 0.21+) captures trial "
           "graphs inside the profile, before the KV cache is sized, and the capture did not fit "
           "beside the weights and the profile's activations"),
      Text(C::kKvTooLongContext, S::kKvCache, ExLlamaSplit,
           "ExLlama's loader places each module together with its slice of the KV cache, sized "
           "for every token of the cache's length (max_seq_len / cache_size, by default the "
           "model's whole context), and the GPU split has no room for both: the cache is the "
           "part that grows with the length"),
      Text(C::kKvTooLongContext, S::kKvCache, SglangPoolOverCard,
           "SGLang sizes its request-to-token pool (an int32 per token of --context-length for "
           "every request slot) and its KV pool from the model's context length before serving: "
           "at a context of millions of tokens one pool is larger than the card"),
      Text(C::kStaticCache, S::kKvCache, PreallocatedCache,
           "the program preallocates its KV cache for the maximum batch and length "
           "(setup_caches) before generating, and that cache does not fit next to the weights"),
      Text(C::kStaticCache, S::kKvCache, GenerateCacheAtKv,
           "generate allocates a static cache (batch x max_cache_len for every layer) before the "
           "prefill, and that cache does not fit next to the weights"),
      Text(C::kKvNoMemory, S::kKvCache, FixedKvAtKv,
           "the KV cache --kv-cache-memory-bytes fixed did not fit beside the weights: with it "
           "vLLM skips its memory profiling, so nothing checked the size against free memory"),
      Text(C::kKvTooLongContext, S::kKvCache, GgmlEngineAtKv,
           "creating the context (its KV cache for every token of the context, and its compute "
           "buffers) failed: llama.cpp sizes the KV cache for the whole context it is given, "
           "whatever memory is free"),
      Text(C::kKvNoMemory, S::kKvCache, At<S::kKvCache>,
           "allocating the KV cache ran out of memory: less was free than the cache needs (an "
           "engine that sized it by profiling found the memory it measured no longer free)"),
      Worded(C::kComputeBuffer, S::kProfile, GgmlEngineAtProfile, Words::kContextComputeBuffer),
      Worded(C::kMultimodalEncoder, S::kProfile, ProfileMultimodal, Words::kProfileEncoder),
      Worded(C::kActivationPeak, S::kProfile, TgiAtProfile, Words::kWarmupPrefill),
      Text(C::kActivationPeak, S::kProfile, At<S::kProfile>,
           "the profile run ran out of memory: a forward pass over max_num_batched_tokens tokens "
           "does not fit next to the weights"),
      Text(C::kStaticCache, S::kLoad, ReferenceModelCache,
           "the reference model allocates every layer's KV cache (cache_k, cache_v) for "
           "max_batch_size x max_seq_len while it is built, before the weights are loaded"),
      Text(C::kStaticCache, S::kLoad, FusedAwqCache,
           "AutoAWQ's fused modules (fuse_layers=True) allocate a KV cache of max_seq_len for "
           "every layer while the model is built"),
      Text(C::kStaticCache, S::kRuntime, FusedAwqCacheGrown,
           "AutoAWQ's fused modules reallocated their preallocated cache for a larger batch: "
           "the cache holds max_seq_len tokens for every sequence of the batch"),
      Text(C::kDequantizedCopy, S::kLoad, QuantizedExport,
           "the quantizer was exporting the quantized checkpoint after calibration (NVIDIA "
           "Model Optimizer's export under TensorRT-LLM's quantize.py): it builds each quantized "
           "weight and its scales on the GPU while the calibrated 16-bit model is still there, "
           "and those copies do not fit beside it"),
      Text(C::kWeightsTooLarge, S::kLoad, QuantizerDispatch,
           "the quantizer was placing the model's modules on the GPU before calibrating "
           "(dispatch_for_sequential): the weights gathered there do not fit"),
      Text(C::kWeightsTooLarge, S::kLoad, QuantizerWeightCalibration,
           "the quantizer was calibrating the weights before any calibration sample ran "
           "(llm-compressor's calibration_epoch_start: \"Calibrating weights\", each module's "
           "weight scales): the weights it onloaded to the GPU for that pass do not fit"),
      Text(C::kActivationPeak, S::kLoad, QuantizerCalibration,
           "quantizing ran out of memory in its per-layer calibration work (GPTQ's Hessian, "
           "AutoAWQ's scale search): one layer is on the GPU, and the calibration activations "
           "and statistics built from them do not fit next to it"),
      Text(C::kDequantizedCopy, S::kLoad, OnlineQuantLoad,
           "SGLang quantizes on load (--quantization fp8 over a 16-bit checkpoint): it loads the "
           "16-bit weights first, and those do not fit although the FP8 result would"),
      Text(C::kOffloadDequantized, S::kLoad, OffloadConverted,
           "weights offloaded to host memory were converted after loading (repacked or "
           "dequantized) and the converted copies were placed on the GPU"),
      Text(C::kDequantizedCopy, S::kLoad, UnslothMerge,
           "Unsloth's merged save (save_pretrained_merged, save_method=\"merged_16bit\") "
           "dequantizes each 4-bit weight to 16 bits on the GPU and adds the LoRA product, "
           "keeping the merged layers on the card up to maximum_memory_usage: those 16-bit "
           "copies do not fit beside the 4-bit model"),
      Text(C::kDequantizedCopy, S::kLoad, DequantFrames,
           "the quantized weights were rewritten on the GPU after loading (dequantized to 16 or "
           "32 bits, multiplied and quantized again): the wide copies do not fit next to the "
           "weights"),
      Text(C::kDequantizedCopy, S::kLoad, ConvertedAfterLoading,
           "the quantized weights were being converted as they were loaded (repacked, "
           "swizzled, dequantized to 16 bits or quantized again: vLLM's and SGLang's "
           "process_weights_after_loading, transformers' quantizers): the converted copies do "
           "not fit beside the weights"),
      Worded(C::kUnshardedSlice, S::kLoad, BackendSharded, Words::kBackendUnsharded),
      Worded(C::kFp16Fallback, S::kLoad, Backend, Words::kBackendUnquantized),
      Said(C::kFp16Fallback, S::kLoad, UnquantizedCreateByName, SayUnquantizedByName),
      Text(C::kFp16Fallback, S::kLoad, UnquantizedCreateInQuantizedRun,
           "a layer the checkpoint's quantization method did not claim (the unquantized "
           "method's create_weights: typically a MoE's experts, or a module the method skips) was "
           "created at 16 bits as the model was built, before any weight was read: the quantized "
           "checkpoint is loaded partly unquantized"),
      Said(C::kDequantizedCopy, S::kLoad, DequantizedCopy, SayDequantized),
      Said(C::kUnshardedSlice, S::kLoad, WholeTensor, SayWholeTensor),
      Text(C::kUnshardedSlice, S::kLoad, ShardingGathersWhole,
           "the sharding wrapper materialised whole parameters on one rank while setting the "
           "model up (FSDP flattening a wrapped unit's parameters into one tensor before "
           "sharding it, or ZeRO-3 gathering partitioned parameters whole): the unit gathered "
           "at once does not fit, though its shards would"),
      Said(C::kWeightsTooLarge, S::kLoad, ModelTooLarge, SayModelTooLarge),
      Said(C::kFp16Fallback, S::kLoad, ModelUnquantized, SayModelUnquantized),
      Said(C::kWeightsTooLarge, S::kLoad, NameTooLarge, SayNameTooLarge),
      Text(C::kFragmentation, S::kLoad, FragmentedAtLoad, kFragmentedText),
      Text(C::kDequantizedCopy, S::kLoad, RepackFrames,
           "the quantized weights were being repacked into the Marlin kernel's layout after "
           "loading: each repack writes a new copy of a packed weight while the loaded one is "
           "still held, on a card the weights already nearly fill"),
      Text(C::kDequantizedCopy, S::kLoad, HqqRepackFrames,
           "HQQ's prepare_for_inference was repacking the quantized layers for a kernel backend "
           "(torchao int4, Marlin, BitBLAS, GemLite): each layer's new copy is made while its "
           "HQQ tensors are still held, on a card the model already nearly fills"),
      Text(C::kDequantizedCopy, S::kLoad, AutoGptqFusedInject,
           "AutoGPTQ was fusing the loaded model's attention (and MLP) modules: each layer's q, k "
           "and v packed weights are concatenated into a new tensor while the separate ones are "
           "still held, a repacked copy on a card the weights already nearly fill"),
      Text(C::kDequantizedCopy, S::kLoad, OnlineFp8Frames,
           "the weights were being quantized to FP8 on the GPU after loading: the 16-bit weights "
           "are all placed first and each FP8 copy is written beside them, so the load peaks at "
           "the 16-bit size although the FP8 model would fit"),
      Text(C::kWeightsTooLarge, S::kLoad, At<S::kLoad>,
           "loading the weights ran out of memory: the weights (and their load-time copies) do not "
           "fit on each GPU"),
      Text(C::kOtherProcess, S::kStartup, At<S::kStartup>,
           "start-up ran out of memory before loading: something else holds memory on the GPU"),
      // What is left is at runtime.
      Text(C::kOffloadDequantized, S::kRuntime, OffloadAtRuntime,
           "device_map=\"auto\" offloaded layers, and generate moves each offloaded layer's "
           "weights onto the GPU for its forward: the GPU holds them next to the resident ones"),
      Text(C::kStaticCache, S::kRuntime, RuntimeStaticCache,
           "generation with a static cache reserves the whole max length for every sequence up "
           "front"),
      Text(C::kKernelWarmup, S::kRuntime, RuntimeAutotune,
           "Triton's autotuner benchmarked a kernel's configurations on its first call while "
           "serving: its buffers are allocated after the KV cache took the memory budget"),
      Text(C::kKernelWarmup, S::kRuntime, RuntimeTritonLoad,
           "a Triton kernel's first use failed in the driver (loading its binary or its launch "
           "resources), not a tensor allocation: the memory was already taken when the kernel "
           "was first called"),
      Said(C::kMultimodalEncoder, S::kRuntime, RuntimeMultimodal, SayRuntimeMultimodal),
      Worded(C::kComputeBuffer, S::kRuntime, GgmlEngineAtRuntime, Words::kDecodeComputeBuffer),
      Said(C::kActivationPeak, S::kRuntime, Always, SayRuntimeActivation),
  };
  return kRules;
}

const Rule& Classify(const Facts& f, Diagnosis* d) {
  const std::vector<Rule>& rules = Rules();
  const Rule* match = &rules.back();
  for (const Rule& r : rules) {
    if (r.when(f)) {
      match = &r;
      break;
    }
  }
  // The rule that gives the stage: the match, or the next that holds after it.
  const Rule* staged = match;
  if (match->stage_from_next) {
    for (const Rule* r = match + 1; r != rules.data() + rules.size(); ++r) {
      if (!r->stage_from_next && r->when(f)) {
        staged = r;
        break;
      }
    }
  }
  const Stage stage = staged->stage_from_facts ? f.stage : staged->stage;
  d->stage = StageName(stage);
  // What decided the stage: the rule's own evidence (the engine's error text) when it fixes the
  // stage, else the frames or milestones; and what points elsewhere.
  const LogEvent* oom = FailureEvent(f);
  // The engine's own error line (not PyTorch's allocator message) fixes the stage.
  const bool own_text = oom && oom->kind != EventKind::kTorchOom &&
                        oom->kind != EventKind::kCudaOom && !staged->stage_from_facts;
  if (!own_text && (staged->stage_from_facts || stage == f.stage)) {
    d->stage_evidence = f.stage_why;
    if (!f.stage_conflict.empty()) d->notes.push_back("stage: " + f.stage_conflict);
  } else {
    d->stage_evidence =
        oom ? fmt::format("the error text at line {} ({})", oom->shown_line(),
                          EventKindName(oom->kind))
            : "the failure's own lines";
    // A traceback that places it further than the error text alone (TGI's "Method Warmup
    // encountered an error" wrapping the KV cache's allocation): both, the frame last.
    // So too the milestone that places a buffer's failure, whose words name no phase (ggml's,
    // read as a decode's after a served request).
    const bool by_frame = f.frame_stage && *f.frame_stage == stage &&
                          f.stage_why.rfind("traceback frame", 0) == 0;
    const bool by_milestone = oom && oom->kind == EventKind::kGgmlAllocFail &&
                              f.milestone_stage && *f.milestone_stage == stage &&
                              f.stage_why.rfind("furthest milestone", 0) == 0;
    if (own_text && stage == f.stage && (by_frame || by_milestone)) {
      d->stage_evidence += "; " + f.stage_why;
    }
    if ((f.frame_stage || f.milestone_stage) && stage != f.stage) {
      d->notes.push_back(fmt::format("stage: the error text says {}; {} would say {}",
                                     StageName(stage), f.stage_why, StageName(f.stage)));
    }
  }
  d->cause = CauseName(match->cause);
  d->summary = match->summary ? std::string(match->summary)
               : match->say   ? match->say(f, &d->numbers)
                              : EngineWords(match->words, f);
  return *match;
}

}  // namespace vramfit::doctor
