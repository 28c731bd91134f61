// What the doctor's rules and the engines' readers share: the causes, the rules an engine may
// word in its own terms, and the facts gathered from a log's events (first value of each key,
// first event of each kind, frames, ranks) together with what the context adds (model, GPU).
// Engine-neutral: engines are known here only by the names their events carry.
#ifndef VRAMFIT_DOCTOR_FACTS_H_
#define VRAMFIT_DOCTOR_FACTS_H_

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "vramfit/doctor.h"
#include "vramfit/plan.h"

namespace vramfit::doctor {

// Diagnosis::cause, typed (CauseName gives the JSON name).
enum class Cause : uint8_t {
  kWeightsTooLarge,     // weights_too_large
  kDequantizedCopy,     // dequantized_copy
  kUnshardedSlice,      // unsharded_slice
  kKvTooLongContext,    // kv_too_long_context
  kKvTooManySequences,  // kv_too_many_sequences
  kKvNoMemory,          // kv_no_memory
  kCudagraphCapture,    // cudagraph_capture
  kMultimodalEncoder,   // multimodal_encoder
  kStaticCache,         // static_cache
  kActivationPeak,      // activation_peak
  kSamplerWarmup,       // sampler_warmup
  kOtherProcess,        // other_process
  kFragmentation,       // fragmentation
  kFp16Fallback,        // fp16_fallback
  kOffloadDequantized,  // offload_dequantized (named in vramfit/doctor.h; no rule yet)
  kComputeBuffer,       // compute_buffer
  kHostMemory,          // host_memory: system RAM (pinned, mapped or plain), not the GPU
  kKernelWarmup,        // kernel_warmup: a kernel warm-up after the KV cache (DeepGEMM, ...)
};
const char* CauseName(Cause cause);

// Whether an event reports a failure (out of memory, a check that refused the settings, a
// buffer that could not be allocated): the first one's line ends the milestones.
bool IsFailureEvent(EventKind kind);

// The rules whose summary describes one engine's behaviour: the summary is that engine's
// reader's words (Reader::words), asked as its fixes are (ReadersFor).
enum class Words : uint8_t {
  kNone,
  kMaxLenCheck,           // the max-length check failed
  kStartupFreeMemory,     // free memory at start-up below the budget
  kSamplerWarmup,         // the sampler warm-up
  kGraphCapture,          // CUDA graph capture
  kProfileEncoder,        // the profile run's multimodal pass
  kBackendUnsharded,      // the Transformers-backend fallback at TP > 1
  kBackendUnquantized,    // the Transformers-backend fallback at TP 1
  kKvBuffer,              // the KV buffer for the context
  kImageComputeBuffer,    // an image's compute buffer
  kDecodeComputeBuffer,   // a compute buffer while decoding
  kContextComputeBuffer,  // the compute buffers at context creation
  kImageBuffer,           // an image's buffer
  kWeightBuffer,          // the weight buffer
  kTokenPool,             // the token pool while serving
  kMambaBlocks,           // too few Mamba state blocks for max_num_seqs
  kKernelWarmup,          // a kernel warm-up after the KV cache was allocated
  kGraphEstimate,         // the profiled CUDA-graph estimate took the KV budget
  kProfilingError,        // free memory grew during profiling (another process)
  kWarmupPrefill,         // the warm-up prefill batch (TGI)
  kHostMemory,            // system memory
  kProjectorWarmup,       // the vision projector's start-up buffers
  kContextExceeded,       // a request longer than the context
  kTokenPoolEmpty,        // the fraction left no token pool after the weights (SGLang)
  kWarmupComputeBuffer,   // a compute buffer in the warm-up decode after context creation
  kMetalWorkingSet,       // a graph computed past Metal's recommended working set
  kProjectorLoad,         // the vision projector's weights, loaded after the model's layers
  kKvCellsFull,           // a batch found no free cells in the KV cache (llama.cpp's decode)
};

// Everything the events say, first value of each key and first event of each kind (the first
// failure wins), and what the context adds.
struct Facts {
  std::array<std::optional<double>, kNumCount> v;        // first value seen per key (not frames')
  std::array<const LogEvent*, kEventKindCount> first{};  // first event per kind
  std::vector<const LogEvent*> frames;
  std::vector<const LogEvent*> other_errors;  // failures that are not out-of-memory, in order
  std::set<std::string> ranks;
  std::string model_path;
  uint64_t oom_line = 0;  // first OOM-like event
  const LogEvent* shards_read = nullptr;  // the loader's shard bar at 100% (vLLM, SGLang)
  const LogEvent* dequantize_warning = nullptr;  // a quantizer dequantizing as it loads
  const LogEvent* unsloth_merge = nullptr;  // Unsloth's merged save began before the failure
  int quantizer_layer = 0;  // the furthest layer a quantizer's progress named before the failure
  // A quantizer's packing line before the failure (load_copies.h QuantizerPackingLine): every
  // layer was quantized.
  const LogEvent* quantizer_packing = nullptr;
  // A quantizer's line saying it moved the model off the GPU before its per-layer pass
  // (load_copies.h ModelOffloadedLine), before the failure.
  const LogEvent* model_offloaded = nullptr;
  // The quantizer's export failing as it wrote the quantized checkpoint (load_copies.h
  // QuantizedExportLine), at or before the failure.
  const LogEvent* quantized_export = nullptr;
  // llama.cpp's figures for its devices (device_memory events), by the device's name: the last
  // free memory printed as the model was placed before the failure, and the total (0: not
  // printed).
  struct DeviceMemory {
    double free = 0, total = 0;
  };
  std::map<std::string, DeviceMemory> devices;
  std::string engine;     // "" when no engine was recognised
  // The layer-by-layer quantizer the log names (readers/reader.h QuantizerToolName): the
  // outermost frame in one's package, else the first line naming one; "" when none.
  std::string quantizer;
  // From the context and the events together.
  const Inventory* model = nullptr;      // DoctorContext::model
  int64_t tp = 1;                        // the context's, else the log's, else ranks seen
  double total = 0;                      // the log's total, else the GPU's (0: unknown)
  bool multimodal = false;               // hints in the log, or a model with a vision tower
  const LogEvent* encoder = nullptr;     // a frame or code line only a multimodal encoder runs
  const LogEvent* image_arg = nullptr;   // a command line passing an image (llama.cpp --image)
  std::optional<Stage> frame_stage;      // where the traceback points
  std::optional<Stage> milestone_stage;  // the furthest phase reached before the failure
  Stage stage = Stage::kRuntime;         // frames, else milestones, else load or runtime
  std::string stage_why;                 // the evidence that decided the stage
  std::string stage_conflict;            // evidence that points elsewhere ("" when none)

  bool has(EventKind k) const { return first[static_cast<size_t>(k)] != nullptr; }
  const LogEvent* first_of(EventKind k) const { return first[static_cast<size_t>(k)]; }
  std::optional<double> get(Num k) const { return v[static_cast<size_t>(k)]; }
};

// The facts of `scan` with `context`.
Facts Gather(const LogScan& scan, const DoctorContext& context);

// An event's value for `key`; none where the event (or the value) is missing.
inline std::optional<double> ValueOf(const LogEvent* e, Num key) {
  if (!e) return std::nullopt;
  const auto it = e->values.find(key);
  return it == e->values.end() ? std::nullopt : std::optional<double>(it->second);
}

// Whether a frame's function is one of `names`.
bool FrameIs(const LogEvent* frame, std::initializer_list<std::string_view> names);
// Whether any of the log's frames is.
bool AnyFrame(const Facts& f, std::initializer_list<std::string_view> names);
// A page-locked (pinned) host allocation failed under one of the frames `names`: CUDA says "out
// of memory" (cudaHostAlloc's error) without the caching allocator's "Tried to allocate".
bool PinnedFailureUnder(const Facts& f, std::initializer_list<std::string_view> names);
// The log's one GPU among its devices (not "CPU" or "Host"), with its free memory known; nullptr
// where it shows none or several.
const Facts::DeviceMemory* LoneGpu(const Facts& f);
// A function named for decoding or inference: a program's own generation loop (facts.cc).
bool InferenceFrame(const LogEvent* fr);
// An optimizer's step or its states' set-up is on the stack (facts.cc): what it allocates are
// the model states (the optimizer's moments and the update's temporaries), sized by the trained
// parameters, not by the batch.
bool OptimizerFrames(const Facts& f);
// PyTorch FSDP building a wrapped unit's flat parameter on the stack (facts.cc).
bool FsdpFlattenFrames(const Facts& f);
// FSDP gathering the full state dict on the GPU to save it (facts.cc).
bool FsdpFullStateDict(const Facts& f);
// Whether the first event of a failure kind says any of `words` (facts.cc).
bool FailureSays(const Facts& f, std::initializer_list<std::string_view> words);
// The failure is Ray's memory monitor killing a worker over the node's RAM threshold (the
// raylet's "killed due to memory pressure", ray.exceptions.OutOfMemoryError's "running low on
// memory", its documentation's ray-oom-prevention link).
bool RayMemoryMonitorKill(const Facts& f);
// The host buffer that failed is a shared-memory segment (/dev/shm: DataLoader workers, NCCL's
// intra-node buffers; facts.cc), and whether the DataLoader's.
bool SharedMemory(const Facts& f);
bool DataLoaderSharedMemory(const Facts& f);
// The host buffer that failed is LMCache's local CPU buffer of KV chunks (readers/vllm.cc).
bool LmcacheHostBuffer(const Facts& f);
// A quantized run (Num::kQuantizedRun) failing at load in an unquantized method's create_weights
// (facts.cc): a layer the quantization method did not claim, created at 16 bits.
bool UnquantizedCreateInQuantizedRun(const Facts& f);
// The same in a run only the model's name says is quantized (no quantization flag or config
// line): the engine did not read the checkpoint's own format.
bool UnquantizedCreateByName(const Facts& f);
// An engine mapping its memory back after a sleep (vLLM's sleep mode, SGLang's memory saver) is
// on the stack (rules.cc).
bool WakeUp(const Facts& f);
// NCCL's own buffers failed to allocate (rules.cc): outside PyTorch's caching allocator.
bool NcclAlloc(const Facts& f);

// Where `frames` point: the stage and the frame that decided it; `weak` when only the sampler's
// files say so (the sampler runs in the warm-up and while serving alike); `construction` when
// only a constructor at the traceback's end says so (a model being built allocates its weights).
struct FrameStage {
  Stage stage;
  const LogEvent* frame;
  bool weak = false;
  bool construction = false;
  // Only a batch step that a start-up warm-up and serving both run says so: `stage` is the
  // warm-up's, serving when the log got past that phase.
  bool unless_serving = false;
};
std::optional<FrameStage> StageOfFrames(const std::vector<const LogEvent*>& frames);

// The stage `frames` point at, by priority (capture_model calls _dummy_run, and
// _initialize_kv_caches calls profile_run: the most specific phase wins).
std::optional<Stage> StageFromFrames(const std::vector<const LogEvent*>& frames);

// A KV cache of no memory: negative KV memory, no GPU blocks, no profiled tokens.
bool NegativeKv(const Facts& f);
// SGLang's log shows one allocation larger than the card before its graphs or serving.
bool SglangRequestOverCard(const Facts& f);
// Fewer KV tokens (blocks x the engine's block size) than one max_model_len request.
bool KvTooSmall(const Facts& f);

// The model's name says it is a vision-language (or audio) model: "Qwen2.5-VL-7B-Instruct",
// "InternVL2_5-8B", "llava-v1.6-34b", "Llama-3.2-11B-Vision-Instruct", "whisper-large-v3".
bool VisionLanguageName(const std::string& path);
// The parameters a model's name states ("Qwen1.5-72B-Chat" -> 72e9); 0 when it states none.
// For a mixture of experts named "8x7B", whose total the name does not give, a lower bound (the
// experts' MLPs added to one dense model's parameters: 36e9).
double ParamsFromName(const std::string& path);
// ParamsFromName in words: "72B", or "at least 36B" for a mixture's name.
std::string NamedParamsWords(const std::string& path);
// The bits per weight a model's name states: 8 for Int8 / 8bit / FP8 / W8A8 / W8A16, 4 for
// Int4 / 4bit / NVFP4 / MXFP4 / W4A16 / AWQ / GPTQ; 0 for a format whose bits the name does not
// give (GGUF's quant types, a bare "bnb"); 16 when it names no quantization.
int NameBits(const std::string& path);
// A GGUF quantization level stands in the path ("-Q2/", "Q4_K_M", "IQ2_XXS"), or "gguf" does.
bool NameSaysGgufLevel(const std::string& path);
// The weights the log's model name states (parameters x bits), per tensor-parallel rank; none
// when the name states no size or no bits.
std::optional<double> NamedWeightsPerRank(const Facts& f);
// Those weights are more than 95% of the card: they cannot be loaded whole.
bool NamedWeightsOverCard(const Facts& f);

// "14.96 GiB".
std::string Gib(double bytes);
// "a" or "an" before a size as written ("an 8.00 GiB", "an 11.50 GiB", "a 0.26 GiB").
std::string Article(std::string_view size);

inline void AddFix(Diagnosis* d, std::string change, std::string effect) {
  d->fixes.push_back({std::move(change), std::move(effect)});
}

}  // namespace vramfit::doctor

#endif  // VRAMFIT_DOCTOR_FACTS_H_
