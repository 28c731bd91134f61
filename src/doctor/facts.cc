// The facts of a log (facts.h): its events gathered once, first value of each key and first
// event of each kind, the engine that printed them, the stage its frames point at and the
// furthest phase it reached. The readers table says which frames and milestones are whose.
#include "doctor/facts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "core/text.h"
#include "core/units.h"
#include "doctor/load_copies.h"
#include "doctor/readers/reader.h"

namespace vramfit::doctor {

// Lists of literals are written "..."sv: their lengths are known when compiled (a list of
// pointers is measured with strlen on every pass of a loop, on every line of a log).
using std::string_view_literals::operator""sv;
namespace {

// Events that report a failure: the first one's line ends the milestones.
constexpr EventKind kOomKinds[] = {
    EventKind::kTorchOom,        EventKind::kCudaOom,         EventKind::kSamplerOom,
    EventKind::kMaxLenError,     EventKind::kNoKvMemory,      EventKind::kStartupError,
    EventKind::kSglangNotEnough, EventKind::kSglangTokenOom,  EventKind::kGgmlAllocFail,
    EventKind::kGgmlLoadFail,    EventKind::kGgmlKvFail,      EventKind::kGgmlComputeFail,
    EventKind::kGgmlReserveFail, EventKind::kMambaBlocks,     EventKind::kProfilingError,
    EventKind::kHostOomKill,     EventKind::kHostBufferFail,  EventKind::kOllamaSystemMemory,
    EventKind::kTgiWarmupFail,   EventKind::kContextExceeded, EventKind::kVllmSwapExhausted,
    EventKind::kKvCellsFull,
};

bool IsOom(EventKind k) { return IsFailureEvent(k); }

// The engine the frames' file paths name (the readers' frame_path), or "" when none does.
std::string EngineOfFrames(const std::vector<const LogEvent*>& frames) {
  std::string engine;
  for (const LogEvent* fr : frames) {
    for (const Reader* r : Readers()) {
      if (!r->frame_path) continue;
      auto it = fr->values.find(*r->frame_path);
      if (it == fr->values.end() || it->second <= 0) continue;
      engine = r->engine;
      if (r->frame_path_final) return engine;
      break;
    }
  }
  return engine;
}

// The furthest phase the log reached before the first failure, from the milestones it printed
// (the furthest, not the last: Ray and multi-process logs print out of order).
std::optional<Stage> StageFromMilestones(const LogScan& scan, const Facts& f, const LogEvent** at) {
  std::optional<Stage> reached;
  bool capture_may_follow = false;  // the furthest is a phase a capture may follow
  for (const LogEvent& e : scan.events) {
    if (f.oom_line && e.line > f.oom_line && !e.values.contains(Num::kBarBegunBefore)) continue;
    const Reader* r = FindReader(e.engine);
    if (!r) continue;
    for (const Milestone& m : r->milestones) {
      if (m.kind != e.kind) continue;
      const bool capture_after = capture_may_follow && m.stage == Stage::kCudaGraph &&
                                 (e.rank == (*at)->rank || e.rank.empty() || (*at)->rank.empty());
      const bool follows = m.follows && reached && *reached == *m.follows;
      if (!reached || m.stage > *reached || capture_after || follows) {
        reached = m.stage;
        capture_may_follow = m.capture_may_follow;
        *at = &e;
      }
    }
  }
  return reached;
}

std::string Cited(const LogEvent* e) {
  std::string text = e->text.size() > 100 ? e->text.substr(0, 100) + "..." : e->text;
  // An event that carries only numbers (a launch's settings): its kind, not an empty citation.
  if (text.empty()) text = fmt::format("({})", EventKindName(e->kind));
  return fmt::format("line {}: {}", e->shown_line(), text);
}

}  // namespace

// A function named for decoding or inference ("decode_next_token", "infer_panel_batch_infer",
// "run_inference"): a program's own generation loop. Names that work out a placement or a type
// ("infer_auto_device_map", "infer_dtype") are load-time helpers.
bool InferenceFrame(const LogEvent* fr) {
  const std::string name = core::AsciiLower(fr->text.substr(0, fr->text.find(' ')));
  if (name.find("decode") != std::string::npos) return true;
  if (name.find("infer") == std::string::npos) return false;
  for (std::string_view helper :
       {"device"sv, "dtype"sv, "type"sv, "shape"sv, "schema"sv, "size"sv}) {
    if (name.find(helper) != std::string::npos) return false;
  }
  return true;
}

namespace {

// The program's words that loading the model failed ("Error loading model: ...", "Failed to
// load model"), when they come after `line`; else nullptr.
const LogEvent* LoadFailedAfter(const Facts& f, uint64_t line) {
  const LogEvent* e = f.first_of(EventKind::kLoadFailedWords);
  return e != nullptr && e->line > line ? e : nullptr;
}

// A transformers or plain PyTorch program whose pasted code loads a model and shows no call that
// runs one (readers/pytorch.cc MatchProgramCalls), with no frame and nothing the reporter said of
// the run: the loading call, else nullptr. A program fails where it stops, and the code shown is
// the code that ran.
const LogEvent* LoadCodeOnly(const Facts& f) {
  if (f.engine != "pytorch" && f.engine != "transformers") return nullptr;
  if (!f.frames.empty() || f.has(EventKind::kRunCall) || f.has(EventKind::kRuntimeWords) ||
      f.get(Num::kTrainingLaunch)) {
    return nullptr;
  }
  return f.first_of(EventKind::kLoadCall);
}

// A transformers or plain PyTorch program's model running: a module's forward on the stack
// (a model's forward, torch's _call_impl) with no loader's, quantizer's or engine phase's frame
// and no quantization run in the log (a quantizer's calibration runs forwards while it loads).
// The first such frame, else nullptr.
const LogEvent* RanAfterLoading(const Facts& f) {
  if (f.engine != "pytorch" && f.engine != "transformers") return nullptr;
  if (f.get(Num::kOnlineQuantization) || f.get(Num::kQuantizerTool) || !f.quantizer.empty() ||
      StageOfFrames(f.frames)) {
    return nullptr;
  }
  for (const LogEvent* fr : f.frames) {
    if (FrameIs(fr, {"forward"})) return fr;
  }
  return nullptr;
}

// A plain PyTorch or transformers program's allocator message with nothing else to place it:
// PyTorch held nearly the whole card (90% allocated) and a small request (5% of it at most)
// failed. Such a program puts its weights on the GPU first (from_pretrained, Module.cuda(),
// load_state_dict), filling it tensor by tensor until one does not fit; once loaded, generation
// grows from what the weights left. With no frame, milestone or serving line, the card found
// already full is read as the load (a guess, said so); a serving engine's log is not read so.
bool FilledWhileLoading(const Facts& f) {
  if (f.engine != "pytorch" && f.engine != "transformers") return false;
  // A module's forward on the stack (torch/nn/modules/module.py _call_impl, a model's forward) is
  // no load: building and placing a model runs none.
  if (AnyFrame(f, {"forward", "_call_impl", "_wrapped_call_impl"})) return false;
  // Nor a program's own inference loop (InferenceFrame), which calls the weights as plain
  // tensors (F.linear) with no module forward above it.
  if (std::any_of(f.frames.begin(), f.frames.end(), InferenceFrame)) return false;
  // A run that caps the GPU's share of the weights (max_memory, a front end's GPU-memory or
  // offload flag: the transformers reader's offload event "cap") stops placing weights at the
  // cap and keeps the rest on the CPU: a full card is then what came after the load. (A bare
  // device_map="auto" is no cap: a later .cuda() or .to("cuda") moves the whole model back.)
  if (const LogEvent* o = f.first_of(EventKind::kOffload); o && o->text == "cap") return false;
  const auto allocated = f.get(Num::kAllocatedBytes);
  const auto requested = f.get(Num::kRequestedBytes);
  if (!allocated || !requested || f.total <= 0) return false;
  if (*requested > 0.05 * f.total) return false;
  if (*allocated >= 0.9 * f.total) return true;
  // The older message's figures ("X already allocated; 0 bytes free; Y reserved in total"): a
  // card with no byte free whose reserve is all allocated. Weights placed one by one are never
  // freed, so the allocator holds no cached blocks (reserved = allocated); a forward pass frees
  // its activations into the cache, leaving the reserve above the allocation. The card's own
  // share (the CUDA context, a desktop's display: up to 20% of a consumer card) lowers the bar
  // to 80% allocated.
  const auto free = f.get(Num::kFreeBytes);
  const auto slack = f.get(Num::kReservedUnallocatedBytes);
  return free && slack && *free <= 0.01 * f.total && *slack <= 0.02 * *allocated &&
         *allocated >= 0.8 * f.total;
}

// vLLM sizes its KV cache so that what it holds stays within --gpu-memory-utilization x the card
// (V0 worker.py determine_num_available_blocks, V1 gpu_worker.py determine_available_memory):
// once the pool is allocated, a serving engine holds about that budget, plus the CUDA graphs
// captured outside it in the releases before 0.29 (at most a few GiB). PyTorch holding well above
// the budget (kAboveBudgetMargin, or a tenth of the card, more) when an allocation failed, with
// no frame or milestone to say otherwise, is a start-up that never sized the pool: the weights
// going on the card.
constexpr double kAboveBudgetMargin = 2.0 * (1ull << 30);
bool AboveVllmBudget(const Facts& f) {
  if (f.engine != "vllm" || f.total <= 0) return false;
  const auto gmu = f.get(Num::kGpuMemoryUtilization);
  const auto allocated = f.get(Num::kAllocatedBytes);
  if (!gmu || !allocated || *gmu <= 0 || *gmu >= 1) return false;
  return *allocated > *gmu * f.total + std::max(kAboveBudgetMargin, 0.1 * f.total);
}

// The weights the model's name states do not fit the card, in a program that places the whole
// model on the GPU: PyTorch and transformers without device_map="auto" or offload, vLLM, SGLang
// and TGI (llama.cpp and the engines on it keep the layers that do not fit on the CPU). Only the
// load can have failed.
// vLLM's log got no further than its load (the launch, the load's own lines), and PyTorch's
// allocated memory at the failure exceeds the weights the model's name states per GPU by more
// than kPastWeightsMargin: loading allocates the weights and little else in PyTorch's allocator
// (unquantized, no repacking copies), so the weights were in and the profile run was running.
constexpr double kPastWeightsMargin = 1.02;
bool VllmAllocatedPastNamedWeights(const Facts& f) {
  if (f.engine != "vllm" || f.milestone_stage != Stage::kLoad || f.tp != 1 ||
      f.get(Num::kLoadDtypeBits).value_or(16) != 16) {
    return false;
  }
  const auto allocated = f.get(Num::kAllocatedBytes);
  const auto named = NamedWeightsPerRank(f);
  return allocated && named && *named > core::kGiBf && NameBits(f.model_path) >= 16 &&
         *allocated > kPastWeightsMargin * *named && !NamedWeightsOverCard(f);
}

bool NamedWeightsCannotLoad(const Facts& f) {
  if (f.engine == "llama.cpp" || f.engine == "lm-studio") return false;
  const Reader* r = FindReader(f.engine);
  if (r && r->wraps) return false;
  if (f.has(EventKind::kOffload) || f.has(EventKind::kCpuOffload)) return false;
  return NamedWeightsOverCard(f);
}

// vLLM V0 runs its profile through the same execute_model as serving (worker.py
// determine_num_available_blocks -> model_runner.py / enc_dec_model_runner.py profile_run ->
// execute_model, 0.6-0.10), with a multimodal model's largest dummy inputs (the most items per
// prompt at the largest size, multimodal/profiling.py). A multimodal forward read as serving only
// because execute_model or the model's forward is on the stack, in a log that never got past the
// profile run (no KV-cache, graph or serving line) and shows nothing of V1, is that profile run.
bool V0MultimodalProfile(const Facts& f, const std::optional<FrameStage>& frames) {
  if (f.engine != "vllm" || !f.multimodal || f.stage != Stage::kRuntime ||
      f.has(EventKind::kVllmV1) || f.has(EventKind::kStartupFailed)) {
    return false;
  }
  if (f.milestone_stage && *f.milestone_stage > Stage::kProfile) return false;
  return !frames || (!frames->weak && FrameIs(frames->frame, {"execute_model"}));
}

// vLLM runs the multimodal encoder before serving in its profile run, with the most items of
// the largest size its budget holds (V1: gpu_model_runner.py profile_run -> the model's
// get_multimodal_embeddings, embed_multimodal from 0.11, before _dummy_run and the KV cache,
// 0.8+; V0 above), and while serving under execute_model -> _execute_mm_encoder. An excerpt that
// starts inside the encoder (its frames or code lines, no phase's frame above them) in a log that
// never got past the profile run is that profile run: a request's items are no larger.
bool EncoderBeforeServing(const Facts& f, const std::optional<FrameStage>& frames) {
  if (f.engine != "vllm" || !f.encoder || f.stage != Stage::kRuntime || frames) return false;
  return !f.milestone_stage || *f.milestone_stage <= Stage::kProfile;
}

// A program that builds vLLM's offline engine (LLM(...), the vllm reader's load call) and shows
// no call that runs it and no serving line: it failed inside the constructor, which runs the
// whole start-up (vllm/entrypoints/llm.py LLM.__init__ -> LLMEngine.from_engine_args: load,
// profile run, KV cache, capture). A forward there, with no phase's own frame above it, is the
// profile run's (V0 worker.py determine_num_available_blocks -> profile_run -> execute_model,
// V1 gpu_worker.py determine_available_memory -> profile_run): the constructor's only other
// forwards are capture's and the warm-ups', which have their own frames and milestones. The
// constructor's call (the first loading call, where it is vLLM's), else nullptr.
const LogEvent* OfflineStartupForward(const Facts& f, const std::optional<FrameStage>& frames) {
  if (f.engine != "vllm" || f.stage != Stage::kRuntime || !frames || frames->weak ||
      !(FrameIs(frames->frame, {"execute_model"}) || FrameIs(frames->frame, {"forward"}))) {
    return nullptr;
  }
  if (f.milestone_stage && *f.milestone_stage > Stage::kProfile) return nullptr;
  if (f.has(EventKind::kRunCall) || f.has(EventKind::kRuntimeWords) || f.has(EventKind::kRequest)) {
    return nullptr;
  }
  const LogEvent* call = f.first_of(EventKind::kLoadCall);
  return call && call->engine == "vllm" ? call : nullptr;
}

// A frame in V0's sampler file (the pytorch reader's path tag 2).
bool V0SamplerFrame(const LogEvent* fr) {
  auto it = fr->values.find(Num::kPathIsSampler);
  return it != fr->values.end() && it->second == 2;
}

// vLLM sizes its KV cache after a profile run with its worst case: the most tokens one step
// takes (max_num_batched_tokens) through the language model and the largest multimodal items
// through the encoder (V0 worker.py determine_num_available_blocks, V1 gpu_model_runner.py
// profile_run); serving steps are no larger. A single allocation larger than the whole card is
// the profile run's, and the language model's activations, linear in the step's tokens, do not
// reach that size: attention scores materialised over a long sequence (tokens squared x heads)
// do, which vLLM's language models never build (its paged and flash attention backends) but a
// vision tower attending without flash attention over the largest dummy image does.
bool VllmRequestOverCard(const Facts& f) {
  if (f.engine != "vllm" || f.total <= 0 || f.has(EventKind::kServing)) return false;
  const auto req = f.get(Num::kRequestedBytes);
  return req && *req > f.total;
}

// A handler raised its own error from the out-of-memory one (Python's "direct cause" line after
// it). TGI's warm-up does so in every release (flash_causal_lm.py warmup, v0.9.3 to v3.3.7:
// `raise RuntimeError(f"Not enough memory to handle ...") from e`), so in a TGI log whose
// excerpt ends before the warm-up's own message, the chain alone places the failure there.
bool ChainedAfterOom(const LogScan& scan, const Facts& f) {
  if (!f.get(Num::kExceptionChained) || f.oom_line == 0) return false;
  for (const LogEvent& e : scan.events) {
    const auto chained = e.values.find(Num::kExceptionChained);
    if (chained == e.values.end() || chained->second == 3) continue;  // not "direct cause"
    if (e.line > f.oom_line || (e.line == f.oom_line && chained->second == 2)) return true;
  }
  return false;
}

// A stage no frame or milestone decides, guessed from the figures, with why (said as a guess).
void Guess(Facts* f, Stage stage, std::string_view why) {
  f->stage = stage;
  f->stage_why = fmt::format("no frame or milestone; {} (a guess; the log does not show the phase)",
                             why);
}

// The stage from the evidence, in order: where the traceback points, else the furthest phase
// the log reached; what decided is said, and a milestone that contradicts the frames too.
void DecideStage(const LogScan& scan, Facts* fp) {
  Facts& f = *fp;
  const LogEvent* milestone = nullptr;
  f.milestone_stage = StageFromMilestones(scan, f, &milestone);
  // V0 serves right after capture (no warm-up follows it).
  const bool v0 = f.has(EventKind::kVllmV0) && !f.has(EventKind::kVllmV1);
  if (v0 && f.milestone_stage == Stage::kWarmup) f.milestone_stage = Stage::kRuntime;
  // A quantizer loads the 16-bit checkpoint (transformers' "Loading checkpoint shards: 100%")
  // and then converts it: its progress printed after that milestone is still the load, and so
  // is the save after its own end line (the pytorch reader's QuantizerFinished): it never serves.
  if (milestone && milestone->kind == EventKind::kServing) {
    auto q = milestone->values.find(Num::kOnlineQuantization);
    if (q != milestone->values.end() && q->second > 0) f.milestone_stage = Stage::kLoad;
  }
  if (milestone && f.milestone_stage == Stage::kRuntime) {
    for (const LogEvent& e : scan.events) {
      if (f.oom_line && e.line > f.oom_line) break;
      auto q = e.values.find(Num::kOnlineQuantization);
      if (e.kind == EventKind::kLoadBegin && e.line > milestone->line && q != e.values.end() &&
          q->second > 0) {
        f.milestone_stage = Stage::kLoad;
        milestone = &e;
        break;
      }
    }
  }
  // Unsloth's merged save after a training run (its "Merging 4bit and LoRA weights to 16bit"
  // after the run's lines): a weight conversion, the load's (load_copies.h UnslothMerge). On
  // the run's own line (a paste that lost its line ends) it still follows the run: Unsloth
  // merges a trained model.
  if (milestone && f.milestone_stage == Stage::kRuntime && f.unsloth_merge &&
      f.unsloth_merge->line >= milestone->line) {
    f.milestone_stage = Stage::kLoad;
    milestone = f.unsloth_merge;
  }
  const std::optional<FrameStage> frames = StageOfFrames(f.frames);
  if (frames) f.frame_stage = frames->stage;
  const bool failed_start = f.has(EventKind::kStartupFailed);
  if (frames && frames->weak && V0SamplerFrame(frames->frame)) {
    // V0's sampler, which no warm-up runs: the furthest milestone, else serving.
    f.stage = f.milestone_stage.value_or(Stage::kRuntime);
    f.stage_why = fmt::format(
        "V0 sampler frame {} ({}): V0 samples in the profile run and while serving, and has no "
        "sampler warm-up",
        Cited(frames->frame),
        f.milestone_stage ? "furthest milestone " + Cited(milestone) : "no milestone");
  } else if (frames && frames->weak) {
    // Only the sampler's files: V1 warms the sampler up with the largest batch after capture,
    // so unless the log shows serving, the warm-up is where it failed.
    const bool serving = f.milestone_stage == Stage::kRuntime;
    f.stage = serving ? Stage::kRuntime : Stage::kWarmup;
    f.stage_why = fmt::format("sampler frame {} {}", Cited(frames->frame),
                              serving ? "while serving" : "before any serving line");
  } else if (frames && frames->unless_serving) {
    // A batch step the warm-up and serving both run (TGI's generate_token): serving only when
    // the log got past the warm-up's phase (the KV blocks sized, graphs, serving lines).
    const bool serving = f.milestone_stage && *f.milestone_stage > frames->stage;
    f.stage = serving ? Stage::kRuntime : frames->stage;
    f.stage_why = fmt::format("batch step frame {} {}", Cited(frames->frame),
                              serving ? "after the warm-up (furthest milestone " +
                                            Cited(milestone) + ")"
                                      : "under no serving handler and before any line past "
                                        "the warm-up: the start-up warm-up that runs it");
  } else if (frames && frames->construction && f.milestone_stage &&
             *f.milestone_stage > Stage::kLoad) {
    // A constructor past the load (a cache or buffer object built later): the milestone says
    // how far start-up got.
    f.stage = *f.milestone_stage;
    f.stage_why = fmt::format("furthest milestone {}", Cited(milestone));
    f.stage_conflict = fmt::format("the traceback ends in a constructor ({}), which alone would "
                                   "say the model was being built",
                                   Cited(frames->frame));
  } else if (frames && frames->construction) {
    f.stage = Stage::kLoad;
    f.stage_why = fmt::format(
        "the traceback ends in a constructor, {}: the model was being built, and modules "
        "allocate their weights as they are constructed",
        Cited(frames->frame));
  } else if (frames) {
    f.stage = frames->stage;
    f.stage_why = fmt::format("traceback frame {}", Cited(frames->frame));
    if (frames->stage == Stage::kRuntime && failed_start && f.milestone_stage &&
        *f.milestone_stage != Stage::kRuntime) {
      // Serving code on the stack, but the engine says start-up failed: the warm-up after the
      // milestone ran it.
      f.stage_conflict = fmt::format(
          "the frames are serving code ({}) but start-up failed ({}); the stage is the phase "
          "after the furthest milestone ({})",
          Cited(frames->frame), Cited(f.first_of(EventKind::kStartupFailed)), Cited(milestone));
      f.stage = *f.milestone_stage;
      f.stage_why = fmt::format("furthest milestone {} with start-up failed", Cited(milestone));
    } else if (f.milestone_stage && *f.milestone_stage > frames->stage &&
               frames->stage != Stage::kRuntime) {
      f.stage_conflict =
          fmt::format("the log had reached {} ({}) but the traceback points at {}",
                      StageName(*f.milestone_stage), Cited(milestone), StageName(frames->stage));
    }
  } else if (const LogEvent* ran = f.milestone_stage == Stage::kLoad ? RanAfterLoading(f)
                                                                     : nullptr) {
    // A plain program's loading line, and then the model's own forward called by the program:
    // the load had finished.
    f.stage = Stage::kRuntime;
    f.stage_why = fmt::format("a model's forward on the stack ({}) after the loading milestone {}",
                              Cited(ran), Cited(milestone));
  } else if (VllmAllocatedPastNamedWeights(f)) {
    // vLLM loads the weights and then profiles: PyTorch already held more than all the weights
    // the model's name states, so the load had finished.
    f.stage = Stage::kProfile;
    f.stage_why = fmt::format(
        "furthest milestone {} (the load), but PyTorch held {} when the allocation failed, more "
        "than the {} of weights the model's name ({}) states per GPU: the weights were in, and "
        "vLLM's next phase is the profile run",
        Cited(milestone), Gib(*f.get(Num::kAllocatedBytes)), Gib(*NamedWeightsPerRank(f)),
        f.model_path);
  } else if (const LogEvent* lazy = f.milestone_stage == Stage::kRuntime && milestone
                                        ? LoadFailedAfter(f, milestone->line)
                                        : nullptr) {
    // A server that loads its model at the first request ("Model will be loaded on first
    // request"): the request came, then the program's own words say loading the model failed.
    f.stage = Stage::kLoad;
    f.stage_why = fmt::format("the log says loading the model failed ({}) after a request came "
                              "({}): a model loaded on demand",
                              Cited(lazy), Cited(milestone));
  } else if (f.milestone_stage) {
    f.stage = *f.milestone_stage;
    f.stage_why = fmt::format("furthest milestone {}", Cited(milestone));
  } else if (f.has(EventKind::kLoadFailedWords)) {
    f.stage = Stage::kLoad;
    f.stage_why = fmt::format(
        "no frame or milestone; the log says loading the model (or quantizing it) failed ({})",
        Cited(f.first_of(EventKind::kLoadFailedWords)));
  } else if (f.has(EventKind::kCaptureWords)) {
    f.stage = Stage::kCudaGraph;
    f.stage_why = fmt::format(
        "no frame or milestone; the report's words place the failure in CUDA graph capture ({})",
        Cited(f.first_of(EventKind::kCaptureWords)));
  } else if (f.has(EventKind::kTransformersBackend)) {
    f.stage = Stage::kLoad;
    f.stage_why = fmt::format("Transformers-backend fallback {}",
                              Cited(f.first_of(EventKind::kTransformersBackend)));
  } else if (failed_start) {
    f.stage = Stage::kProfile;
    f.stage_why = fmt::format(
        "start-up failed ({}) with no frame or milestone: profile, the start-up phase that "
        "allocates the most (a guess; the log does not show the phase)",
        Cited(f.first_of(EventKind::kStartupFailed)));
  } else if (QuantizerFrames(f)) {
    // AutoAWQ, AutoGPTQ and GPTQModel convert a 16-bit checkpoint layer by layer: the run, from
    // loading the checkpoint to writing the quantized one, is the load stage.
    f.stage = Stage::kLoad;
    f.stage_why =
        "no frame or milestone; the log sets up a quantization run (a quantize config or "
        "model.quantize call) or prints its progress, which loads and converts the weights";
  } else if (NamedWeightsCannotLoad(f)) {
    f.stage = Stage::kLoad;
    f.stage_why = fmt::format(
        "no frame or milestone; the model's name ({}) states {} of weights per GPU, more than "
        "the card's {}: it cannot have got past loading them",
        f.model_path, Gib(*NamedWeightsPerRank(f)), Gib(f.total));
  } else if (AboveVllmBudget(f)) {
    const double gmu = *f.get(Num::kGpuMemoryUtilization);
    Guess(&f, Stage::kLoad,
          fmt::format("PyTorch held {} of the card's {} when the allocation failed, well above "
                      "--gpu-memory-utilization {:.2f} x the card ({}), which a sized KV pool "
                      "keeps vLLM to: the start-up had not got that far",
                      Gib(*f.get(Num::kAllocatedBytes)), Gib(f.total), gmu, Gib(gmu * f.total)));
  } else if (VllmRequestOverCard(f)) {
    Guess(&f, Stage::kProfile,
          fmt::format("one {} allocation, more than the card's {}: vLLM's profile run is its "
                      "worst case and serving steps are no larger, and only attention scores "
                      "materialised over a long sequence reach that size, which vLLM's language "
                      "models never build but a vision tower without flash attention does over "
                      "the largest dummy image",
                      Gib(*f.get(Num::kRequestedBytes)), Gib(f.total)));
    f.multimodal = true;
  } else if (SglangRequestOverCard(f)) {
    Guess(&f, Stage::kKvCache,
          fmt::format("one {} allocation, more than the card's {}: SGLang's pools for requests "
                      "and KV tokens, sized from the context length before serving, are the only "
                      "start-up tensors that large",
                      Gib(*f.get(Num::kRequestedBytes)), Gib(f.total)));
  } else if (FilledWhileLoading(f) &&
             (f.has(EventKind::kRuntimeWords) || f.get(Num::kTrainingLaunch))) {
    // The model had run before it failed: the reporter says so (trained steps, served
    // requests), or the log starts a training run, whose steps add gradients, optimizer states
    // and activations beside the weights the load placed once. A card full at a small request
    // is a running one's, not one the weights were being placed on.
    const LogEvent* words = f.first_of(EventKind::kRuntimeWords);
    f.stage = Stage::kRuntime;
    f.stage_why = fmt::format(
        "no frame or milestone; {} and {} of the card's {} was already allocated when {} {} "
        "request failed{} (a guess; the log does not show the phase)",
        words ? (Cited(words).find("max_new_tokens=") != std::string::npos
                     ? "the pasted code generates after it loads (" + Cited(words) + ")"
                     : "the report's words place the failure after the model ran (" +
                           Cited(words) + ")")
              : std::string(*f.get(Num::kTrainingLaunch) > 1
                                ? "the log shows a training run past its first step"
                                : "the log starts a training run"),
        Gib(*f.get(Num::kAllocatedBytes)), Gib(f.total),
        Article(Gib(*f.get(Num::kRequestedBytes))), Gib(*f.get(Num::kRequestedBytes)),
        words ? "" : ": a training step holds gradients, optimizer states and activations beside "
                     "the weights");
  } else if (FilledWhileLoading(f)) {
    f.stage = Stage::kLoad;
    f.stage_why = fmt::format(
        "no frame or milestone; {} of the card's {} already allocated when {} {} request failed: "
        "the card filled while the weights were placed on it (a guess; the log does not show the "
        "phase)",
        Gib(*f.get(Num::kAllocatedBytes)), Gib(f.total),
        Article(Gib(*f.get(Num::kRequestedBytes))), Gib(*f.get(Num::kRequestedBytes)));
  } else if (const LogEvent* load = LoadCodeOnly(f)) {
    Guess(&f, Stage::kLoad,
          fmt::format("the pasted code loads the model ({}) and shows no "
                      "call that runs it (generate, a pipeline's call, a forward, a training "
                      "loop): it failed where the code stops",
                      Cited(load)));
  } else if (f.engine == "tgi" && ChainedAfterOom(scan, f)) {
    Guess(&f, Stage::kProfile,
          "TGI's warm-up (flash_causal_lm.py warmup, 0.9-3.x) catches the CUDA error of its "
          "prefill and raises its own \"Not enough memory to handle ...\" from it, and the "
          "out-of-memory error here is followed by Python's \"direct cause\" line");
  } else {
    f.stage = Stage::kRuntime;
    f.stage_why = "no frame or milestone: after start-up";
    if (const auto training = f.get(Num::kTrainingLaunch); training && *training > 1) {
      f.stage_why =
          "no frame or milestone; the log shows a training run past its first step (a step's "
          "loss or a training progress bar): after start-up";
    }
    for (const LogEvent* fr : f.frames) {
      if (!FrameIs(fr, {"forward"}) && !InferenceFrame(fr)) continue;
      f.stage_why = fmt::format("{} on the stack ({}) and no phase's frame or milestone: after "
                                "start-up",
                                InferenceFrame(fr) ? "a decoding or inference function"
                                                   : "a forward pass",
                                Cited(fr));
      break;
    }
  }
  // A forward read as serving that the log places in the profile run before it (a guess each).
  const auto profile_instead = [&f](std::string why) {
    f.stage_conflict = f.stage_why + ", which alone would say serving";
    f.stage = Stage::kProfile;
    f.stage_why = std::move(why);
  };
  if (const LogEvent* built = OfflineStartupForward(f, frames)) {
    profile_instead(fmt::format(
        "a forward on the stack ({}) in a program that builds vLLM's offline engine ({}) and "
        "shows no call that runs it (generate, chat, encode) and no serving line: the "
        "constructor runs the start-up, whose forward is the profile run with the most tokens "
        "one step takes (a guess; the excerpt does not show the phase)",
        Cited(frames->frame), Cited(built)));
  } else if (EncoderBeforeServing(f, frames)) {
    profile_instead(fmt::format(
        "the multimodal encoder on the stack ({}) with no phase's frame above it and no phase "
        "reached past the profile run: vLLM encodes its largest dummy items in the profile run "
        "before it sizes the KV cache, and a request's items are no larger (a guess; the "
        "excerpt does not show the phase)",
        fmt::format("line {}", f.encoder->shown_line())));
  } else if (V0MultimodalProfile(f, frames)) {
    profile_instead(
        "a multimodal model's forward in vLLM V0 with no phase reached past the profile run: V0 "
        "profiles the encoder with its largest dummy inputs (profile_run -> execute_model) "
        "before it sizes the KV cache, and a request's encoder pass is no larger (a guess; the "
        "excerpt does not show the phase)");
  }
}

// A traceback that ended in the failure, then another printed after it and cut before its own
// error (multiprocessing's "Process Name:" report of the dying worker, from _bootstrap down, a
// wrapper's re-raise): the later frames are the outer calls of the same failure, or of its
// consequence, and the excerpt lost their inner end; the innermost frames the failure's own
// traceback showed place it. Kept where no frame precedes the failure (a log that prints the
// error first and its traceback after), or where an error follows the later frames (their own,
// or a handler's exception Python chained to the failure).
void DropCutTracebackAfterFailure(const LogScan& scan, Facts* fp) {
  Facts& f = *fp;
  if (f.oom_line == 0 || f.frames.empty() || f.frames.front()->line > f.oom_line ||
      f.frames.back()->line < f.oom_line) {
    return;
  }
  const LogEvent* last_frame = f.frames.back();
  for (const LogEvent& e : scan.events) {
    if (e.line > last_frame->line && (IsFailureEvent(e.kind) || e.kind == EventKind::kOtherError ||
                                      e.kind == EventKind::kTraceback)) {
      return;
    }
    // Python's own link to a handler's exception ("During handling of the above exception,
    // another exception occurred:", "The above exception was the direct cause of ..."): the
    // later traceback is that exception's, which a synthetic frame of its error may close.
    if (e.line > f.oom_line && e.values.count(Num::kExceptionChained)) return;
  }
  std::erase_if(f.frames, [&](const LogEvent* fr) { return fr->line > f.oom_line; });
}

// A multi-process run (torchrun's "[rank1]: " prefixes, a worker's "(... rank=1 pid=..)")
// interleaves every rank's traceback: the frames that place the failure are the failing rank's,
// the one the first out-of-memory line names. Another rank's frames are that rank's own path
// (often a later traceback, where it stopped once the job failed), not this failure's; frames
// with no rank stay. Nothing changes when the failure names no rank or only one rank printed
// frames.
void KeepFailingRanksFrames(const LogScan& scan, Facts* fp) {
  Facts& f = *fp;
  const LogEvent* failure = nullptr;
  for (const LogEvent& e : scan.events) {
    if (IsOom(e.kind) && e.line == f.oom_line) {
      failure = &e;
      break;
    }
  }
  if (!failure || failure->rank.empty()) return;
  const auto mine = [&](const LogEvent* fr) {
    return fr->rank.empty() || fr->rank == failure->rank;
  };
  if (std::none_of(f.frames.begin(), f.frames.end(), mine)) return;
  std::erase_if(f.frames, [&](const LogEvent* fr) { return !mine(fr); });
}

}  // namespace

bool IsFailureEvent(EventKind k) {
  return std::find(std::begin(kOomKinds), std::end(kOomKinds), k) != std::end(kOomKinds);
}

const char* CauseName(Cause cause) {
  switch (cause) {
    case Cause::kWeightsTooLarge:
      return "weights_too_large";
    case Cause::kDequantizedCopy:
      return "dequantized_copy";
    case Cause::kUnshardedSlice:
      return "unsharded_slice";
    case Cause::kKvTooLongContext:
      return "kv_too_long_context";
    case Cause::kKvTooManySequences:
      return "kv_too_many_sequences";
    case Cause::kKvNoMemory:
      return "kv_no_memory";
    case Cause::kCudagraphCapture:
      return "cudagraph_capture";
    case Cause::kMultimodalEncoder:
      return "multimodal_encoder";
    case Cause::kStaticCache:
      return "static_cache";
    case Cause::kActivationPeak:
      return "activation_peak";
    case Cause::kSamplerWarmup:
      return "sampler_warmup";
    case Cause::kOtherProcess:
      return "other_process";
    case Cause::kFragmentation:
      return "fragmentation";
    case Cause::kFp16Fallback:
      return "fp16_fallback";
    case Cause::kOffloadDequantized:
      return "offload_dequantized";
    case Cause::kComputeBuffer:
      return "compute_buffer";
    case Cause::kHostMemory:
      return "host_memory";
    case Cause::kKernelWarmup:
      return "kernel_warmup";
  }
  return "";
}

// PyTorch's message wrapped over lines is read piece by piece (readers/pytorch.cc): a piece on
// the next line of the same rank that lists more of the other processes continues the list the
// first piece began, and its count and sums stand for the message.
void ContinueProcessList(const LogEvent& e, const LogEvent* before, Facts* f) {
  if (e.kind != EventKind::kTorchOom || before == nullptr || before->rank != e.rank ||
      e.line != before->line + 1) {
    return;
  }
  const auto n = e.values.find(Num::kListedProcesses);
  auto& count = f->v[static_cast<size_t>(Num::kListedProcesses)];
  if (n == e.values.end() || (count && n->second <= *count)) return;
  for (Num k : {Num::kListedProcesses, Num::kListedProcessBytes, Num::kLargestListedProcessBytes}) {
    if (const auto it = e.values.find(k); it != e.values.end()) {
      f->v[static_cast<size_t>(k)] = it->second;
    }
  }
}

Facts Gather(const LogScan& scan, const DoctorContext& ctx) {
  Facts f;
  const LogEvent* last_torch_oom = nullptr;
  uint64_t last_vllm_mm_frame_line = 0;
  bool mm_hint = false;
  const LogEvent* conv = nullptr;  // a convolution's call on the stack (readers/pytorch.cc)
  bool profile_seen = false;
  for (const LogEvent& e : scan.events) {
    const size_t kind = static_cast<size_t>(e.kind);
    if (!f.first[kind]) f.first[kind] = &e;
    // Values from before the failure, or the failure's own; later repeats (other ranks) do not
    // override.
    if (e.kind != EventKind::kFrame) {
      for (const auto& [k, x] : e.values) {
        auto& slot = f.v[static_cast<size_t>(k)];
        if (!slot) slot = x;  // the first value of each key stays
      }
    }
    ContinueProcessList(e, last_torch_oom, &f);
    if (e.kind == EventKind::kTorchOom) last_torch_oom = &e;
    if (e.kind == EventKind::kFrame) f.frames.push_back(&e);
    if (e.kind == EventKind::kMmHint && e.text == "encoder" && !f.encoder) f.encoder = &e;
    if (e.kind == EventKind::kMmHint && e.text == "conv" && !conv) conv = &e;
    // A direct attention kernel's call under a frame in a vLLM multimodal model's file (the
    // pytorch reader's two hints, with no other frame between them and at most a wrapped line or
    // two apart): the tower's attention, vLLM's language models attending only through its
    // Attention layer.
    if (e.kind == EventKind::kFrame && e.line > last_vllm_mm_frame_line) {
      last_vllm_mm_frame_line = 0;
    }
    if (e.kind == EventKind::kMmHint && e.text == "attention_call" && !f.encoder &&
        last_vllm_mm_frame_line > 0 && e.line > last_vllm_mm_frame_line &&
        e.line <= last_vllm_mm_frame_line + 3) {
      f.encoder = &e;
    }
    if (e.kind == EventKind::kMmHint && e.text == "vllm_mm_model") last_vllm_mm_frame_line = e.line;
    // Any hint but a bare attention kernel's call (every model calls one) says multimodal.
    if (e.kind == EventKind::kMmHint && e.text != "attention_call" && e.text != "conv") {
      mm_hint = true;
    }
    if (e.kind == EventKind::kMmHint && e.text == "--image" && !f.image_arg) f.image_arg = &e;
    if (e.kind == EventKind::kOtherError) f.other_errors.push_back(&e);
    if (!e.rank.empty()) f.ranks.insert(e.rank);
    // The first model named, unless a later one completes it: a terminal's wrap cuts a command
    // line's model id ("--model-id mistralai/Mixtral" + "-8x7B-Instruct-v0.1"), and the readers
    // read it again whole from the two lines joined.
    if (e.kind == EventKind::kConfig && !e.text.empty() &&
        (f.model_path.empty() ||
         (e.text.size() > f.model_path.size() && e.text.starts_with(f.model_path)))) {
      f.model_path = e.text;
    }
    // (TGI's pre-2.1 refusal of --max-total-tokens is a memory failure only after its warm-up:
    // before it, the same words refuse the user's arguments; readers/tgi.cc.)
    if (e.kind == EventKind::kProfileBegin) profile_seen = true;
    const bool arguments = e.kind == EventKind::kMaxLenError && e.text == "argument_validation" &&
                           !profile_seen;
    if (IsOom(e.kind) && f.oom_line == 0 && !arguments) f.oom_line = e.line;
    if (!f.shards_read && ShardsRead(e)) f.shards_read = &e;
    if (!f.dequantize_warning && DequantizeWarning(e)) f.dequantize_warning = &e;
    // (On the failure's own line too: a paste that lost its line ends.)
    if ((!f.oom_line || e.line <= f.oom_line) && !f.unsloth_merge && UnslothMergeLine(e)) {
      f.unsloth_merge = &e;
    }
    if (!f.oom_line) f.quantizer_layer = std::max(f.quantizer_layer, QuantizerLayer(e));
    if (!f.oom_line && !f.quantizer_packing && QuantizerPackingLine(e)) f.quantizer_packing = &e;
    if (!f.oom_line && !f.model_offloaded && ModelOffloadedLine(e)) f.model_offloaded = &e;
    // (The free memory as the model was placed, before the failure; the total from anywhere:
    // llama.cpp prints its memory breakdown as it exits.)
    if (e.kind == EventKind::kDeviceMemory) {
      Facts::DeviceMemory& d = f.devices[e.text];
      if (const auto it = e.values.find(Num::kDeviceFreeBytes);
          it != e.values.end() && !f.oom_line) {
        d.free = it->second;
      }
      if (const auto it = e.values.find(Num::kDeviceTotalBytes); it != e.values.end()) {
        d.total = it->second;
      }
    }
    if ((!f.oom_line || e.line <= f.oom_line) && !f.quantized_export && QuantizedExportLine(e)) {
      f.quantized_export = &e;
    }
  }
  KeepFailingRanksFrames(scan, &f);
  DropCutTracebackAfterFailure(scan, &f);
  // The quantizer: the outermost frame that names one (optimum's quantize_model calls AutoGPTQ's
  // or GPTQModel's GPTQ class, whose frames lie below it), else the first line that does.
  for (const LogEvent* fr : f.frames) {
    auto it = fr->values.find(Num::kQuantizerTool);
    if (it != fr->values.end()) {
      f.quantizer = QuantizerToolName(it->second);
      break;
    }
  }
  for (const LogEvent& e : scan.events) {
    if (!f.quantizer.empty()) break;
    auto it = e.values.find(Num::kQuantizerTool);
    if (it != e.values.end()) f.quantizer = QuantizerToolName(it->second);
  }
  // The engine is the one that printed engine lines; PyTorch's message alone means "pytorch".
  // An nvidia-smi table beside them is a snapshot of the card, not the program that failed.
  f.engine.clear();
  for (const std::string& e : scan.engines) {
    if (e == "nvidia-smi") continue;
    if (f.engine.empty()) f.engine = e;
    if (e != "pytorch" && e != "any") {
      f.engine = e;
      break;
    }
  }
  // An engine that runs another (Ollama on llama.cpp) is the log's engine when seen at all.
  for (const Reader* r : Readers()) {
    if (r->wraps && f.engine == r->wraps &&
        std::find(scan.engines.begin(), scan.engines.end(), r->engine) != scan.engines.end()) {
      f.engine = r->engine;
    }
  }
  // Frames name their engine by path.
  if (f.engine.empty() || f.engine == "pytorch" || f.engine == "any") {
    if (std::string by_path = EngineOfFrames(f.frames); !by_path.empty()) f.engine = by_path;
  }
  if (f.engine == "any") f.engine = "pytorch";

  f.model = ctx.model;
  if (ctx.tensor_parallel_size > 0) {
    f.tp = ctx.tensor_parallel_size;
  } else if (auto t = f.get(Num::kTensorParallelSize)) {
    f.tp = static_cast<int64_t>(*t);
  } else {
    // Ranks named in two schemes, TP labels ("(Worker_TP3 ..)", "[... TP3]") and rank labels
    // ("rank=1", a launcher's "[rank0]: " before lines the engine printed without its own
    // label), count the same processes: the larger count of one scheme, not their sum.
    size_t tp_named = 0, rank_named = 0;
    for (const std::string& r : f.ranks) (r.rfind("TP", 0) == 0 ? tp_named : rank_named) += 1;
    f.tp = std::max<int64_t>(1, static_cast<int64_t>(std::max(tp_named, rank_named)));
    // No rank named: deployment code that names its instance and not the shards (readers/
    // tgi.cc MatchSageMaker) is read as sharding over all of the instance's GPUs.
    if (f.ranks.empty()) {
      if (auto gpus = f.get(Num::kInstanceGpus)) f.tp = static_cast<int64_t>(*gpus);
    }
  }
  if (auto t = f.get(Num::kTotalBytes)) {
    f.total = *t;
  } else if (ctx.gpu) {
    f.total = static_cast<double>(ctx.gpu->total_bytes);
  } else if (auto smi = f.get(Num::kSmiTotalBytes)) {
    f.total = *smi;  // nvidia-smi's MiB total, only when no engine or CUDA total is given
  } else if (auto card = f.get(Num::kInstanceGpuBytes)) {
    f.total = *card;  // the card of the cloud instance the deployment code names
  }
  // A convolution's call is a vision encoder's patch embedding, unless a diffusion pipeline runs
  // (its VAE and UNet convolve throughout).
  if (conv && !f.get(Num::kDiffusionRun)) {
    if (!f.encoder || conv->line < f.encoder->line) f.encoder = conv;
    mm_hint = true;
  }
  f.multimodal =
      mm_hint || f.encoder != nullptr || f.has(EventKind::kImage) ||
      (ctx.model && ctx.model->has_spec && ctx.model->spec.vision.kind != VisionKind::kNone) ||
      VisionLanguageName(f.model_path);
  DecideStage(scan, &f);
  return f;
}

bool FrameIs(const LogEvent* fr, std::initializer_list<std::string_view> names) {
  const std::string_view fn = std::string_view(fr->text).substr(0, fr->text.find(' '));
  for (std::string_view n : names) {
    if (fn == n) return true;
  }
  return false;
}

bool OptimizerFrames(const Facts& f) {
  // torch.optim (optimizer.py's step wrapper -> adam.py / adamw.py step -> _init_group, which
  // creates exp_avg and exp_avg_sq on the first step, then _single_tensor_ / _multi_tensor_ /
  // _fused_adam(w), whose foreach updates allocate per-shard temporaries, 2.x); apex's and
  // DeepSpeed's fused Adam (fused_adam.py step: state['exp_avg'] = torch.zeros_like(p.data));
  // DeepSpeed's ZeRO optimizers set their states up with a first step at construction
  // (stage_1_and_2.py / deepspeed_zero_optimizer.py initialize_optimizer_states).
  static constexpr std::string_view kFiles[] = {" (adam.py)", " (adamw.py)", " (fused_adam.py)",
                                                " (optimizer.py)"};
  return std::any_of(f.frames.begin(), f.frames.end(), [](const LogEvent* fr) {
    if (FrameIs(fr, {"_init_group", "_multi_tensor_adamw", "_single_tensor_adamw",
                     "_fused_adamw", "_multi_tensor_adam", "_single_tensor_adam", "_fused_adam",
                     "initialize_optimizer_states"})) {
      return true;
    }
    if (!FrameIs(fr, {"step"})) return false;
    const std::string_view t = fr->text;
    return std::any_of(std::begin(kFiles), std::end(kFiles), [&](std::string_view file) {
      return t.size() > file.size() && t.substr(t.size() - file.size()) == file;
    });
  });
}

bool FsdpFlattenFrames(const Facts& f) {
  // torch/distributed/fsdp/_init_utils.py _init_param_handle_from_module / _from_params ->
  // _flat_param.py FlatParamHandle.flatten_tensors_into_flat_param (1.12-2.x).
  return AnyFrame(f, {"_init_param_handle_from_module", "_init_param_handle_from_params",
                      "flatten_tensors_into_flat_param"});
}

// FSDP gathering the full state dict on the GPU to save it (torch/distributed/fsdp/
// _state_dict_utils.py, 2.0+: under FULL_STATE_DICT without offload_to_cpu,
// _full_post_state_dict_hook clones each unsharded parameter on the device and, when the clone
// fails, warns "Failed to clone() tensor with name X ... if this parameter is managed by FSDP"
// with the out-of-memory as its error): the whole model's weights, unsharded on every rank
// beside the training state, at the save.
bool SharedMemory(const Facts& f) {
  const LogEvent* e = f.first_of(EventKind::kHostBufferFail);
  return e != nullptr && (Has(e->text, "shared memory") || Has(e->text, "/dev/shm"));
}
bool DataLoaderSharedMemory(const Facts& f) {
  const LogEvent* e = f.first_of(EventKind::kHostBufferFail);
  return SharedMemory(f) && (Has(e->text, "dataloader") || Has(e->text, "DataLoader") ||
                             Has(e->text, "in worker"));
}
bool LmcacheHostBuffer(const Facts& f) {
  const LogEvent* e = f.first_of(EventKind::kHostBufferFail);
  return e != nullptr && e->text == "lmcache";
}

bool FsdpFullStateDict(const Facts& f) {
  if (AnyFrame(f, {"_full_post_state_dict_hook", "_full_pre_state_dict_hook",
                   "_common_unshard_post_state_dict_hook"})) {
    return true;
  }
  return FailureSays(f, {"Failed to clone() tensor with name"});
}
bool FailureSays(const Facts& f, std::initializer_list<std::string_view> words) {
  return std::any_of(f.first.begin(), f.first.end(), [&](const LogEvent* e) {
    return e != nullptr && IsFailureEvent(e->kind) &&
           std::any_of(words.begin(), words.end(), [&](std::string_view w) {
             return Has(e->text, w);
           });
  });
}

bool RayMemoryMonitorKill(const Facts& f) {
  return FailureSays(f, {"memory pressure", "running low on memory", "ray-oom-prevention"});
}

// The unquantized method's create_weights on the stack of a quantized run: SGLang's
// layers/quantization/unquant.py (UnquantizedLinearMethod, UnquantizedFusedMoEMethod, 0.4+),
// vLLM's fused_moe/unquantized_fused_moe_method.py (0.11+) and layers/linear.py, whose only
// create_weights is UnquantizedLinearMethod's. The quantization config claims a layer by
// returning its own method; a layer it skips (a MoE's experts when the method has no MoE
// support, modules_to_not_convert) gets the unquantized one, and its empty 16-bit parameters
// are created as the model is built, before any weight is read.
// A run only the model's name says is quantized (its bits: "chatglm-6b-int4", "...-AWQ"; or a
// GGUF level: "-Q2", "Q4_K_M") counts too, the engine not having read the checkpoint's own format
// (a remote-code model's quantization_bit, a GGUF directory, a method it lacks): for a MoE's
// experts, the unquantized method's bulk, the name is enough; a dense linear built so may be one
// every quantized checkpoint keeps at 16 bits (a router), so PyTorch must also hold over twice
// the bytes the name states per GPU and 1 GiB more (a 16-bit embedding, head or vision tower
// beside the quantized layers stays under that).
bool UnquantizedCreateInQuantizedRun(const Facts& f) {
  if (f.stage != Stage::kLoad) return false;
  bool moe = false, dense = false;
  for (const LogEvent* fr : f.frames) {
    if (!FrameIs(fr, {"create_weights"})) continue;
    const std::string_view t = fr->text;
    // (fused_moe/layer.py held UnquantizedFusedMoEMethod before vLLM 0.11 and in SGLang's
    // fused_moe_triton before its unquant.py; every other method's create_weights is in its
    // own quantization file.)
    moe = moe || t.ends_with(" (unquant.py)") ||
          t.ends_with(" (unquantized_fused_moe_method.py)") || t.ends_with(" (layer.py)");
    dense = dense || t.ends_with(" (linear.py)");
  }
  if (!moe && !dense) return false;
  if (f.get(Num::kQuantizedRun)) return true;
  const int bits = NameBits(f.model_path);
  if (moe && ((bits > 0 && bits < 16) || NameSaysGgufLevel(f.model_path))) return true;
  const auto named = NamedWeightsPerRank(f);
  const auto allocated = f.get(Num::kAllocatedBytes);
  return (bits == 4 || bits == 8) && named && allocated && *allocated > 2 * *named + core::kGiBf;
}

bool UnquantizedCreateByName(const Facts& f) {
  return !f.get(Num::kQuantizedRun) && UnquantizedCreateInQuantizedRun(f);
}

// A GGUF quantization level in a model's path: "Q2", "Q4_K_M", "Q8_0", "IQ2_XXS", "UD-Q2_K_XL",
// standing alone between separators ("DeepSeek-R1-Q2/", not "Qwen2").
bool NameSaysGgufLevel(const std::string& path) {
  if (HasNoCase(path, "gguf")) return true;
  const auto separator = [](char c) { return c == '-' || c == '/' || c == '.' || c == ' '; };
  size_t start = 0;
  while (start < path.size()) {
    size_t end = start;
    while (end < path.size() && !separator(path[end])) ++end;
    // One part between separators: "Q2", "Q4_K_M", "IQ2_XXS", "UD" ...
    std::string_view part = std::string_view(path).substr(start, end - start);
    if (part.size() >= 2 && (part[0] == 'I' || part[0] == 'i') &&
        (part[1] == 'Q' || part[1] == 'q')) {
      part.remove_prefix(1);
    }
    if (part.size() >= 2 && (part[0] == 'Q' || part[0] == 'q') && part[1] >= '1' &&
        part[1] <= '8' && (part.size() == 2 || part[2] == '_')) {
      return true;
    }
    start = end + 1;
  }
  return false;
}

namespace {

bool PathIs(const LogEvent* fr, Num key) {
  auto it = fr->values.find(key);
  return it != fr->values.end() && it->second > 0;
}

// The phase a frame belongs to, by the function's name and, where the name alone is ambiguous,
// the file it lies in (the frame's text is "fn (file.py)"). A frame that calls several phases
// (vLLM V1's EngineCore._initialize_kv_caches, the executor's initialize_from_config) has no row:
// the deeper frame under it decides.
// kPlace: a model moved onto the GPU, the load when nothing on the stack says otherwise.
// kStep: a batch step that an engine's start-up warm-up and its serving both run; the milestones
// say which (StageOfFrames, DecideStage).
enum class Slot {
  kGraph,
  kSampler,
  kWarmup,
  kKv,
  kProfile,
  kLoad,
  kRuntime,
  kStartup,
  kPlace,
  kStep
};
struct FrameRow {
  std::string_view fn;
  std::string_view file;  // "" any file; else the frame's file name
  Slot slot;
};
constexpr FrameRow kFrameRows[] = {
    // vLLM V1 (vllm/v1/worker/gpu_worker.py, gpu_model_runner.py, 0.8-0.11):
    // compile_or_warm_up_model runs the compile-size _dummy_run, kernel_warmup, capture_model,
    // then _dummy_sampler_run;
    // initialize_from_config (the worker's) only allocates the KV cache (initialize_kv_cache ->
    // initialize_kv_cache_tensors -> _allocate_kv_cache_tensors / _reshape_kv_cache_tensors);
    // determine_available_memory runs profile_run (-> _dummy_run, _dummy_sampler_run,
    // _dummy_pooler_run). The V2 runner (vllm/v1/worker/gpu/, 0.12+) captures in
    // cudagraph_utils.py capture_graph(s).
    {"capture_model", "", Slot::kGraph},
    {"_capture_cudagraphs", "", Slot::kGraph},
    {"capture_graph", "", Slot::kGraph},
    {"capture_graphs", "", Slot::kGraph},
    {"capture_end", "", Slot::kGraph},
    {"capture", "", Slot::kGraph},
    {"graph_capture", "", Slot::kGraph},
    // torch.compile's CUDA graphs (mode="reduce-overhead", and transformers' generate compiling
    // the forward of a static cache with it, generation/configuration_utils.py CompileConfig,
    // 4.47+): torch/_inductor/cudagraph_trees.py CUDAGraphTreeManager.record_function ->
    // CUDAGraphNode.__init__ -> _record records a graph for each new shape in the trees' private
    // pool (2.1+); its warm-up run (run_eager) and replay (execute_node) have no row.
    {"record_function", "cudagraph_trees.py", Slot::kGraph},
    {"_record", "cudagraph_trees.py", Slot::kGraph},
    {"__init__", "cudagraph_trees.py", Slot::kGraph},
    {"_dummy_sampler_run", "", Slot::kSampler},
    {"compile_or_warm_up_model", "", Slot::kWarmup},
    {"kernel_warmup", "", Slot::kWarmup},
    {"deep_gemm_warmup", "", Slot::kWarmup},
    {"flashinfer_autotune", "", Slot::kWarmup},
    {"_warmup_and_capture", "", Slot::kWarmup},
    {"initialize_from_config", "gpu_worker.py", Slot::kKv},
    {"initialize_from_config", "by name", Slot::kKv},  // collective_rpc("initialize_from_config")
    {"initialize_kv_cache", "", Slot::kKv},
    {"initialize_kv_cache_tensors", "", Slot::kKv},
    {"_allocate_kv_cache_tensors", "", Slot::kKv},
    {"_reshape_kv_cache_tensors", "", Slot::kKv},
    {"may_reinitialize_input_batch", "", Slot::kKv},
    // vllm/v1/core/kv_cache_utils.py: sizing the cache from the profiled memory (the max-length
    // and no-memory checks raise here).
    {"get_kv_cache_config", "", Slot::kKv},
    {"get_kv_cache_configs", "", Slot::kKv},
    {"check_enough_kv_cache_memory", "", Slot::kKv},
    {"profile_run", "", Slot::kProfile},
    {"_dummy_run", "", Slot::kProfile},
    {"determine_available_memory", "", Slot::kProfile},
    {"_dummy_pooler_run", "", Slot::kProfile},
    {"profile", "", Slot::kProfile},
    // vLLM V0 (vllm/worker/worker.py, cache_engine.py, 0.4-0.10): determine_num_available_blocks
    // profiles; initialize_cache -> _init_cache_engine -> CacheEngine._allocate_kv_cache, then
    // _warm_up_model, which captures the graphs (model_runner.capture_model).
    {"determine_num_available_blocks", "", Slot::kProfile},
    {"initialize_cache", "", Slot::kKv},
    {"_init_cache_engine", "", Slot::kKv},
    {"_allocate_kv_cache", "", Slot::kKv},
    // Ollama's new engine allocates each layer's cache tensors when the layer first stores into
    // it (kvcache/causal.go (*Causal).Put -> ctx.Zeros, 0.6+), under the worst-case reservation
    // at load or a batch's forward: the KV cache's own allocation (readers/ollama.cc).
    {"Put", "causal.go", Slot::kKv},
    {"allocate_cpu_cache", "", Slot::kKv},
    {"allocate_kv_cache", "", Slot::kKv},
    {"__init__", "cache_engine.py", Slot::kKv},
    {"_warm_up_model", "worker.py", Slot::kGraph},
    // vLLM 0.2-0.4 (worker/worker.py, cache_engine.py): the engine's _init_cache (llm_engine.py,
    // executor/gpu_executor.py 0.4) runs profile_num_available_blocks, then init_cache_engine
    // (CacheEngine.allocate_gpu_cache), then warm_up_model (the capture, 0.2.7+; its row is
    // below). _init_cache itself runs all three, so it has no row: the frame under it decides.
    {"profile_num_available_blocks", "", Slot::kProfile},
    {"init_cache_engine", "", Slot::kKv},
    {"allocate_gpu_cache", "", Slot::kKv},
    // LoRA (vllm/lora/worker_manager.py, layers.py 0.3+; v1/worker/lora_model_runner_mixin.py
    // 0.8+): the stacked adapter buffers (max_loras x max_lora_rank) are built with the model;
    // the profile run activates dummy adapters.
    {"create_lora_manager", "", Slot::kLoad},
    // accelerate's FSDP2 preparation inside Trainer.train (accelerator.prepare ->
    // utils/fsdp_utils.py fsdp2_prepare_model -> fsdp2_load_full_state_dict, 1.4+): the model
    // set up before the first step.
    {"fsdp2_prepare_model", "", Slot::kLoad},
    {"fsdp2_load_full_state_dict", "", Slot::kLoad},
    {"create_lora_weights", "", Slot::kLoad},
    {"load_lora_model", "", Slot::kLoad},
    {"maybe_profile_with_lora", "", Slot::kProfile},
    {"add_dummy_lora", "", Slot::kProfile},
    // vLLM's loader (vllm/model_executor/model_loader/, both engines): get_model -> load_model ->
    // initialize_model (the layers' create_weights) -> load_weights -> weight_loader, then
    // process_weights_after_loading (repacking, dequantizing).
    {"load_model", "", Slot::kLoad},
    {"load_weights", "", Slot::kLoad},
    {"_load_weights", "", Slot::kLoad},
    {"process_weights_after_loading", "", Slot::kLoad},
    // transformers' MXFP4 experts dequantized or swizzled as the checkpoint is loaded
    // (integrations/mxfp4.py, 4.55+: load_and_swizzle_mxfp4, convert_moe_packed_tensors).
    {"convert_moe_packed_tensors", "", Slot::kLoad},
    {"load_and_swizzle_mxfp4", "", Slot::kLoad},
    // Unsloth's merged save (unsloth/save.py: save_pretrained_merged ->
    // unsloth_save_pretrained_merged -> unsloth_save_model -> _merge_lora per weight): each
    // 4-bit weight dequantized to 16 bits on the GPU with the LoRA product added, a weight
    // conversion after training, read as the load's.
    {"unsloth_save_pretrained_merged", "", Slot::kLoad},
    {"unsloth_save_model", "", Slot::kLoad},
    {"_merge_lora", "save.py", Slot::kLoad},
    // The Marlin repacks process_weights_after_loading calls (vllm/_custom_ops.py and SGLang's
    // sgl_kernel, 0.5+): each writes a new packed tensor of the loaded weight's size.
    {"gptq_marlin_repack", "", Slot::kLoad},
    {"awq_marlin_repack", "", Slot::kLoad},
    {"gptq_marlin_moe_repack", "", Slot::kLoad},
    {"awq_marlin_moe_repack", "", Slot::kLoad},
    {"weight_loader", "", Slot::kLoad},
    {"initialize_model", "", Slot::kLoad},
    {"_initialize_model", "", Slot::kLoad},
    {"get_model", "", Slot::kLoad},
    {"create_weights", "", Slot::kLoad},
    {"maybe_offload_to_cpu", "", Slot::kLoad},
    {"init_device", "", Slot::kStartup},
    // torch.cuda.mem_get_info (torch/cuda/memory.py -> cudaMemGetInfo) failing: the process's
    // first CUDA call creates its context, and only that creation finds no memory; a later
    // query does not allocate. vLLM's MemorySnapshot (utils/mem_utils.py measure) takes it as the
    // worker starts; accelerate's get_max_memory inside from_pretrained (a load frame, which
    // ranks above) too.
    {"mem_get_info", "memory.py", Slot::kStartup},
    // The process group before any weight (vLLM's worker: init_worker_distributed_environment ->
    // init_distributed_environment, ensure_model_parallel_initialized -> initialize_model_parallel,
    // the NCCL communicators and custom all-reduce buffers; SGLang's ModelRunner
    // init_torch_distributed, model_runner.py 0.3-0.5).
    {"init_worker_distributed_environment", "", Slot::kStartup},
    {"init_distributed_environment", "", Slot::kStartup},
    {"ensure_model_parallel_initialized", "", Slot::kStartup},
    {"initialize_model_parallel", "", Slot::kStartup},
    {"init_torch_distributed", "", Slot::kStartup},
    {"_init_device", "", Slot::kStartup},
    {"request_memory", "", Slot::kStartup},
    {"execute_model", "", Slot::kRuntime},
    {"run_busy_loop", "", Slot::kRuntime},
    {"step", "", Slot::kRuntime},
    {"step_with_batch_queue", "", Slot::kRuntime},
    {"process_input_sockets", "", Slot::kRuntime},
    {"run_engine_loop", "", Slot::kRuntime},
    {"engine_step", "", Slot::kRuntime},
    {"sample_tokens", "", Slot::kRuntime},
    {"_execute_mm_encoder", "", Slot::kRuntime},
    // SGLang (python/sglang/srt/model_executor/model_runner.py, cuda_graph_runner.py,
    // mem_cache/memory_pool.py, 0.3-0.5): ModelRunner.initialize -> load_model,
    // init_memory_pool (profile_max_num_token, then the pools' _create_buffers),
    // init_cuda_graphs / init_device_graphs (CudaGraphRunner -> capture ->
    // capture_one_batch_size; EAGLE's draft runners the same).
    {"init_cuda_graphs", "", Slot::kGraph},
    {"init_device_graphs", "", Slot::kGraph},
    {"cuda_graph_runner", "", Slot::kGraph},
    {"CudaGraphRunner", "", Slot::kGraph},
    {"capture_one_batch_size", "", Slot::kGraph},
    {"warm_up_model", "", Slot::kGraph},
    // A graph runner being built: CudaGraphRunner.__init__ allocates the graphs' buffers and
    // captures (cuda_graph_runner.py), EAGLE's draft runners the same
    // (speculative/eagle_draft_cuda_graph_runner.py, eagle_draft_extend_cuda_graph_runner.py).
    {"__init__", "cuda_graph_runner.py", Slot::kGraph},
    {"__init__", "eagle_draft_cuda_graph_runner.py", Slot::kGraph},
    {"__init__", "eagle_draft_extend_cuda_graph_runner.py", Slot::kGraph},
    // SGLang's LoRA adapters' buffers, made after the weights and before the KV pool
    // (model_runner.py init_lora_manager -> lora/lora_manager.py LoRAManager.init_memory_pool ->
    // lora/mem_pool.py LoRAMemoryPool.init_buffers, 0.4-0.5): the adapters' weights, not the
    // pool, though LoRA's method has the pool's name.
    {"init_memory_pool", "lora_manager.py", Slot::kLoad},
    {"init_lora_manager", "", Slot::kLoad},
    {"init_memory_pool", "", Slot::kKv},
    {"_create_buffers", "memory_pool.py", Slot::kKv},
    // The pools' constructors (mem_cache/memory_pool.py ReqToTokenPool, MHATokenToKVPool, ...,
    // 0.3-0.5) and 0.5's piecewise graphs (model_runner.py init_piecewise_cuda_graphs ->
    // piecewise_cuda_graph_runner.py PiecewiseCudaGraphRunner.__init__, which captures).
    {"__init__", "memory_pool.py", Slot::kKv},
    // HiCache's host KV pool (mem_cache/hiradix_cache.py HiRadixCache.__init__ ->
    // memory_pool_host.py HostKVCache.__init__, 0.4.6-0.5).
    {"__init__", "hiradix_cache.py", Slot::kKv},
    {"__init__", "memory_pool_host.py", Slot::kKv},
    {"init_piecewise_cuda_graphs", "", Slot::kGraph},
    {"__init__", "piecewise_cuda_graph_runner.py", Slot::kGraph},
    {"profile_max_num_token", "", Slot::kProfile},
    {"forward_batch_generation", "", Slot::kRuntime},
    // EAGLE's step while serving (speculative/eagle_worker.py, 0.4-0.5).
    {"forward_batch_speculative_generation", "", Slot::kRuntime},
    {"event_loop_overlap", "", Slot::kRuntime},
    {"event_loop_normal", "", Slot::kRuntime},
    {"run_batch", "", Slot::kRuntime},
    {"forward_thread_func_", "", Slot::kRuntime},
    {"forward_extend", "", Slot::kRuntime},
    {"forward_decode", "", Slot::kRuntime},
    // Ollama's runner (runner/ollamarunner/runner.go, 0.6+; its Go frames, readers/ollama.cc):
    // allocModel builds the model and cache and reserves the worst-case graph
    // (reserveWorstCaseGraph, the compute buffers' reservation), loadModel reads the weights,
    // processBatch / forwardBatch / computeBatch serve.
    {"reserveWorstCaseGraph", "runner.go", Slot::kProfile},
    {"initModel", "runner.go", Slot::kLoad},
    {"allocModel", "runner.go", Slot::kLoad},
    {"loadModel", "runner.go", Slot::kLoad},
    {"processBatch", "runner.go", Slot::kRuntime},
    {"forwardBatch", "runner.go", Slot::kRuntime},
    {"computeBatch", "runner.go", Slot::kRuntime},
    // TGI (server/text_generation_server/models/flash_causal_lm.py, 2.x-3.x): the Warmup RPC runs
    // FlashCausalLM.warmup, whose prefill of max-batch-prefill-tokens sizes the KV cache, then
    // init_kv_cache with the blocks left, then cuda_graph_warmup for each batch size.
    {"warmup", "flash_causal_lm.py", Slot::kProfile},
    {"Warmup", "server.py", Slot::kProfile},
    {"init_kv_cache", "", Slot::kKv},  // also a research model's own (ShadowKV models/base.py)
    // TGI 1.x and its forks (LoRAX): the warm-up allocates the KV blocks through
    // models/cache_manager.py set_cache_manager -> CacheManager.__init__ (torch.empty per layer)
    // before its prefill, where 2.x calls init_kv_cache.
    {"set_cache_manager", "", Slot::kKv},
    // SGLang 0.5's KV pools built by the model runner's mixin (model_executor/
    // model_runner_kv_cache_mixin.py _init_pools, after init_memory_pool's split).
    {"_init_pools", "", Slot::kKv},
    {"__init__", "cache_manager.py", Slot::kKv},
    {"cuda_graph_warmup", "", Slot::kGraph},
    // TGI 3.x builds the model through models/__init__.py get_model_with_lora_adapters. The
    // shard's server.py serve_inner is on the stack only while it builds the model: it then
    // awaits the gRPC server, whose handlers (Warmup, Prefill, Decode) run on their own stacks.
    {"get_model_with_lora_adapters", "", Slot::kLoad},
    // TensorRT-LLM (readers/trtllm.cc): its PyTorch backend's weight load (load_single_module),
    // the estimation pass (_util.py configure_kv_cache_capacity), the CUDA graphs
    // (model_engine.py _run_cuda_graph_warmup -> _capture_generation_cuda_graphs); the executor's
    // report of the component it could not create, read as a frame of that phase; the engine
    // path's C++ stack: TensorRT deserializing the engine (the weights), the engine's
    // execution-context memory and the runtime buffers (its activations, sized at build time),
    // the paged KV pool, a batch step.
    {"load_single_module", "", Slot::kLoad},
    {"configure_kv_cache_capacity", "", Slot::kProfile},
    {"_run_cuda_graph_warmup", "", Slot::kGraph},
    {"_capture_generation_cuda_graphs", "", Slot::kGraph},
    {"executor_model", "", Slot::kLoad},
    {"executor_profile", "", Slot::kProfile},
    {"executor_kv_cache", "", Slot::kKv},
    {"executor_graphs", "", Slot::kGraph},
    {"deserializeCudaEngine", "", Slot::kLoad},
    {"trtllm_build", "", Slot::kLoad},
    {"TllmRuntime", "", Slot::kProfile},
    {"RuntimeBuffers", "", Slot::kProfile},
    {"allocatePools", "", Slot::kKv},
    {"forwardAsync", "", Slot::kRuntime},
    {"serve_inner", "server.py", Slot::kLoad},
    // The gRPC handlers serving requests (server.py TextGenerationService.Prefill / .Decode).
    {"Prefill", "server.py", Slot::kRuntime},
    {"Decode", "server.py", Slot::kRuntime},
    // FlashCausalLM.generate_token: the warm-up runs it on one batch of --max-batch-prefill-tokens
    // (flash_causal_lm.py warmup, 1.0-3.x: `_, batch = self.generate_token(batch)` inside the try
    // that raises "Not enough memory to handle N prefill tokens"), then sizes the KV blocks from
    // the memory left, so that no later prefill (the router caps it at the same tokens) needs
    // more; the Prefill and Decode handlers run it while serving. Under neither handler's frame
    // (a traceback cut above it), the warm-up unless the log shows serving.
    {"generate_token", "flash_causal_lm.py", Slot::kStep},
    {"get_multi_weights_col", "", Slot::kLoad},
    {"get_weights_col", "", Slot::kLoad},
    {"get_sharded", "", Slot::kLoad},
    {"load_multi", "", Slot::kLoad},
    // transformers (modeling_utils.py 4.3x-4.5x): from_pretrained -> _load_pretrained_model ->
    // load_state_dict / _load_state_dict_into_meta_model (4.52+: load_shard_file), with
    // caching_allocator_warmup (4.50+) reserving the weights' bytes first; bitsandbytes' 4-bit
    // weights are quantized as they are placed (quantizer_bnb_4bit.py create_quantized_param,
    // bitsandbytes functional.quantize_4bit); accelerate's dispatch_model /
    // load_checkpoint_and_dispatch / load_checkpoint_in_model (big_modeling.py, utils/modeling.py).
    {"from_pretrained", "", Slot::kLoad},
    {"_load_pretrained_model", "", Slot::kLoad},
    {"_load_state_dict_into_meta_model", "", Slot::kLoad},
    {"_load_state_dict_into_model", "", Slot::kLoad},
    {"load_shard_file", "", Slot::kLoad},
    // transformers 5 (core_model_loading.py): convert_and_load_state_dict_in_model materializes
    // each tensor on its device in a thread pool (_materialize_copy) and sets it on its module
    // (set_param_for_module).
    {"convert_and_load_state_dict_in_model", "", Slot::kLoad},
    {"_materialize_copy", "", Slot::kLoad},
    {"set_param_for_module", "", Slot::kLoad},
    {"caching_allocator_warmup", "", Slot::kLoad},
    {"create_quantized_param", "", Slot::kLoad},
    {"quantize_4bit", "", Slot::kLoad},
    {"load_state_dict", "", Slot::kLoad},
    {"dispatch_model", "", Slot::kLoad},
    {"load_checkpoint_and_dispatch", "", Slot::kLoad},
    {"load_checkpoint_in_model", "", Slot::kLoad},
    {"from_quantized", "", Slot::kLoad},
    // Moving a built model onto the GPU: torch's Module.cuda / Module.to
    // (torch/nn/modules/module.py, 1.x-2.x, both -> _apply) and transformers' overrides of them
    // (modeling_utils.py PreTrainedModel.cuda / .to, 4.3x-4.5x): the weights being placed, unless
    // a forward pass or serving code is on the stack (accelerate's offload hooks move each
    // offloaded module with .to in pre_forward, hooks.py 0.2x-1.x).
    // The per-tensor functions _apply maps over the parameters, the last frames of such a
    // traceback when the excerpt starts below _apply: Module.to's nested convert(t)
    // ("return t.to(device, dtype if t.is_floating_point() ...)") and the lambdas of
    // Module.cuda / .half / .float / .bfloat16 (module.py, 1.x-2.x).
    {"_apply", "", Slot::kPlace},
    {"convert", "module.py", Slot::kPlace},
    {"<lambda>", "module.py", Slot::kPlace},
    {"cuda", "module.py", Slot::kPlace},
    {"to", "module.py", Slot::kPlace},
    {"cuda", "modeling_utils.py", Slot::kPlace},
    {"to", "modeling_utils.py", Slot::kPlace},
    // torch.load restoring saved tensors onto the device they were saved from, or map_location's
    // (torch/serialization.py, 1.x-2.x: load -> _load -> persistent_load -> load_tensor ->
    // restore_location / default_restore_location -> _cuda_deserialize): a checkpoint being read.
    {"load", "serialization.py", Slot::kLoad},
    {"_load", "serialization.py", Slot::kLoad},
    {"persistent_load", "serialization.py", Slot::kLoad},
    {"load_tensor", "serialization.py", Slot::kLoad},
    {"default_restore_location", "", Slot::kLoad},
    {"_cuda_deserialize", "", Slot::kLoad},
    // transformers' generate (generation/utils.py): the decoding loops (_sample, _beam_search,
    // _assisted_decoding, ...; before 4.42 without the underscore), chat / stream_chat of
    // remote-code models.
    {"generate", "", Slot::kRuntime},
    {"_sample", "", Slot::kRuntime},
    {"sample", "", Slot::kRuntime},
    {"_greedy_search", "", Slot::kRuntime},
    {"greedy_search", "", Slot::kRuntime},
    {"_beam_search", "", Slot::kRuntime},
    {"beam_search", "", Slot::kRuntime},
    {"_group_beam_search", "", Slot::kRuntime},
    {"_contrastive_search", "", Slot::kRuntime},
    {"_assisted_decoding", "", Slot::kRuntime},
    {"chat", "", Slot::kRuntime},
    {"stream_chat", "", Slot::kRuntime},
    // transformers' attention functions (integrations/sdpa_attention.py, flash_attention.py,
    // modeling_flash_attention_utils.py, each model's eager_attention_forward; 4.48+) and the
    // eager score code under an older Attention.forward ("attn_weights", the pytorch reader's):
    // a forward pass, which loading never runs (a quantizer's calibration forward has its own
    // frames, and the load stage wins over this one).
    {"eager_attention_forward", "", Slot::kRuntime},
    {"sdpa_attention_forward", "", Slot::kRuntime},
    {"flash_attention_forward", "", Slot::kRuntime},
    {"_flash_attention_forward", "", Slot::kRuntime},
    {"attn_weights", "", Slot::kRuntime},
    // Training after the load: transformers' Trainer (trainer.py train -> _inner_training_loop ->
    // training_step -> compute_loss; evaluate -> evaluation_loop -> prediction_step, 4.x) and the
    // backward pass (torch/_tensor.py backward -> torch/autograd/__init__.py backward ->
    // _engine_run_backward, 2.3+; accelerate's Accelerator.backward).
    {"train", "trainer.py", Slot::kRuntime},
    {"_inner_training_loop", "", Slot::kRuntime},
    {"training_step", "", Slot::kRuntime},
    // A training loop's step: torchtitan's Trainer.train_step -> forward_backward_step
    // (torchtitan/train.py), Megatron-LM's train_step (megatron/training/training.py).
    {"train_step", "", Slot::kRuntime},
    {"forward_backward_step", "", Slot::kRuntime},
    {"compute_loss", "trainer.py", Slot::kRuntime},
    {"evaluation_loop", "", Slot::kRuntime},
    {"prediction_step", "", Slot::kRuntime},
    {"backward", "", Slot::kRuntime},
    {"_engine_run_backward", "", Slot::kRuntime},
    // The Trainer's evaluation and prediction entries (trainer.py evaluate / predict ->
    // evaluation_loop; trainer_seq2seq.py Seq2SeqTrainer.evaluate / predict, which generate), and
    // transformers' pipelines once built: Pipeline.__call__ (pipelines/base.py) -> run_single /
    // run_multi -> forward -> _forward (the task's file: text_generation.py, 4.x), which calls
    // generate. Building a pipeline (pipelines/__init__.py pipeline(): from_pretrained) has its
    // own frames, which win.
    {"evaluate", "trainer.py", Slot::kRuntime},
    {"predict", "trainer.py", Slot::kRuntime},
    {"evaluate", "trainer_seq2seq.py", Slot::kRuntime},
    {"predict", "trainer_seq2seq.py", Slot::kRuntime},
    {"run_single", "base.py", Slot::kRuntime},
    {"run_multi", "base.py", Slot::kRuntime},
    {"__call__", "text_generation.py", Slot::kRuntime},
    {"_forward", "text_generation.py", Slot::kRuntime},
    {"__call__", "text2text_generation.py", Slot::kRuntime},
    {"_forward", "text2text_generation.py", Slot::kRuntime},
    {"pipeline", "__init__.py", Slot::kLoad},
    // lm-evaluation-harness scoring a model already loaded (lm_eval/evaluator.py simple_evaluate
    // -> evaluate; lm_eval/models/huggingface.py HFLM._loglikelihood_tokens / generate_until ->
    // _model_call / _model_generate, 0.4.x), as the quantizers run it once they have quantized
    // and saved the model (auto-round's --tasks through auto_round/eval/evaluation.py
    // simple_evaluate_user_model, 0.5+; GPTQ-style scripts that score the result): the forward
    // passes of an evaluation, after the quantizing load.
    // GPTQ-for-LLaMa's scripts score the model on each dataset after quantizing it (llama.py
    // llama_eval, opt.py opt_eval, bloom.py bloom_eval, neox.py neox_eval: the perplexity pass,
    // each layer moved to the GPU in turn over the test samples).
    {"llama_eval", "llama.py", Slot::kRuntime},
    {"opt_eval", "opt.py", Slot::kRuntime},
    {"bloom_eval", "bloom.py", Slot::kRuntime},
    {"neox_eval", "neox.py", Slot::kRuntime},
    {"simple_evaluate", "evaluator.py", Slot::kRuntime},
    {"evaluate", "evaluator.py", Slot::kRuntime},
    {"_loglikelihood_tokens", "huggingface.py", Slot::kRuntime},
    {"loglikelihood_rolling", "huggingface.py", Slot::kRuntime},
    {"generate_until", "huggingface.py", Slot::kRuntime},
    {"_model_call", "huggingface.py", Slot::kRuntime},
    {"_model_generate", "huggingface.py", Slot::kRuntime},
    // torchtune's recipes (recipes/full_finetune_*.py, lora_finetune_*.py, lora_dpo_*.py,
    // knowledge_distillation_*.py, qat_distributed.py, 0.2-0.6): recipe_main runs setup (->
    // _setup_model, which builds the model and loads its state dict) and then train (the
    // training loop). The recipe copied under another name keeps these names.
    {"_setup_model", "", Slot::kLoad},
    {"train", "full_finetune_single_device.py", Slot::kRuntime},
    {"train", "full_finetune_distributed.py", Slot::kRuntime},
    {"train", "lora_finetune_single_device.py", Slot::kRuntime},
    {"train", "lora_finetune_distributed.py", Slot::kRuntime},
    {"train", "lora_dpo_single_device.py", Slot::kRuntime},
    {"train", "lora_dpo_distributed.py", Slot::kRuntime},
    {"train", "knowledge_distillation_single_device.py", Slot::kRuntime},
    {"train", "knowledge_distillation_distributed.py", Slot::kRuntime},
    {"train", "qat_distributed.py", Slot::kRuntime},
    // LLaMA-Factory (src/llamafactory/train/tuner.py run_exp -> _training_function -> run_pt /
    // run_sft / run_rm / run_ppo / run_dpo / run_kto in train/<stage>/workflow.py, 0.6-0.9; the
    // same names under llmtuner/ before): each workflow loads the model (load_model, whose
    // from_pretrained frames have their own rows and win) and then trains, evaluates or predicts
    // through its Trainer. A traceback cut at the workflow is read as the training run it is.
    // Its export (tuner.py export_model: load_model, which merges the LoRA adapters with peft's
    // merge_and_unload -> _unload_and_optionally_merge, then save_pretrained) never generates or
    // trains: the load.
    // A Trainer being built (transformers/trainer.py Trainer.__init__, which places the model
    // on args.device with _move_model_to_device unless it is sharded, offloaded or run by
    // DeepSpeed; its subclasses' constructors call it, LLaMA-Factory's and TRL's trainers):
    // the weights are being placed, before any training step, whatever launcher is outside it.
    {"__init__", "trainer.py", Slot::kLoad},
    {"_move_model_to_device", "trainer.py", Slot::kLoad},
    {"__init__", "sft_trainer.py", Slot::kLoad},
    {"__init__", "dpo_trainer.py", Slot::kLoad},
    {"run_exp", "tuner.py", Slot::kRuntime},
    {"_training_function", "tuner.py", Slot::kRuntime},
    {"run_pt", "workflow.py", Slot::kRuntime},
    {"run_sft", "workflow.py", Slot::kRuntime},
    {"run_rm", "workflow.py", Slot::kRuntime},
    {"run_ppo", "workflow.py", Slot::kRuntime},
    {"run_dpo", "workflow.py", Slot::kRuntime},
    {"run_kto", "workflow.py", Slot::kRuntime},
    {"export_model", "tuner.py", Slot::kLoad},
    // peft's preparation of a loaded model for k-bit training (peft/utils/other.py
    // prepare_model_for_kbit_training, 0.4+): every 16-bit parameter not quantized is cast to
    // float32 in place (param.data.to(torch.float32)), before any step: the load, as it rewrites
    // the weights (a model loaded unquantized doubles in size).
    {"prepare_model_for_kbit_training", "", Slot::kLoad},
    {"merge_and_unload", "", Slot::kLoad},
    {"_unload_and_optionally_merge", "", Slot::kLoad},
    // The optimizer's step, which allocates its states (Adam's exp_avg and exp_avg_sq) on its
    // first call (torch/optim/optimizer.py Optimizer.step wrapper -> adamw.py / adam.py step ->
    // _init_group, then _single_tensor_/_multi_tensor_/_fused_adam(w), 2.x; "step" itself has
    // its row with the serving loops below): training.
    {"_init_group", "", Slot::kRuntime},
    {"_multi_tensor_adamw", "", Slot::kRuntime},
    {"_single_tensor_adamw", "", Slot::kRuntime},
    {"_fused_adamw", "", Slot::kRuntime},
    {"_multi_tensor_adam", "", Slot::kRuntime},
    {"_single_tensor_adam", "", Slot::kRuntime},
    {"_fused_adam", "", Slot::kRuntime},
    // DeepSpeed's ZeRO optimizer built inside deepspeed.initialize (engine.py / deepspeed_light.py
    // _configure_zero_optimizer -> the optimizer's constructor -> initialize_optimizer_states,
    // which runs a first step to create the states): before any training step, with the model.
    {"_configure_zero_optimizer", "", Slot::kLoad},
    {"initialize_optimizer_states", "", Slot::kLoad},
    // PyTorch FSDP wrapping the model (fully_sharded_data_parallel.py FullyShardedDataParallel
    // .__init__ -> _init_utils.py _init_param_handle_from_module, which flattens and shards each
    // wrapped unit's parameters, 1.12-2.x): the model being set up, before any step.
    {"__init__", "fully_sharded_data_parallel.py", Slot::kLoad},
    {"_init_param_handle_from_module", "", Slot::kLoad},
    // CUDA graphs captured for training: torch.cuda.make_graphed_callables (torch/cuda/graphs.py)
    // and TransformerEngine's make_graphed_callables (transformer_engine/pytorch/graph.py), which
    // Megatron-LM's CudaGraphManager calls from create_cudagraphs (megatron/core/transformer/
    // cuda_graphs.py): warm-up iterations and the captures of every graphed layer's forward and
    // backward, whose static buffers stay in the graphs' pool.
    {"make_graphed_callables", "", Slot::kGraph},
    {"_make_graphed_callables", "", Slot::kGraph},
    {"create_cudagraphs", "", Slot::kGraph},
    // Plain PyTorch reference code. Meta's llama (v1 example.py load, Llama 2/3 and Code Llama
    // generation.py Llama.build: the Transformer is built on the GPU with each Attention's
    // cache_k/cache_v, then load_state_dict) and its text_completion / chat_completion /
    // text_infilling -> generate. gpt-fast and torchchat (generate.py: _load_model, then
    // generate -> setup_caches -> prefill -> decode_n_tokens -> decode_one_token); torchtune
    // (TransformerDecoder.setup_caches, MultiHeadAttention.setup_cache); litgpt (generate/base.py:
    // GPT.set_kv_cache -> build_kv_cache, load_checkpoint, next_token); mistral-inference
    // (Transformer.from_folder, generate -> BufferCache).
    {"_load_model", "", Slot::kLoad},
    {"Llama.build", "", Slot::kLoad},
    {"build", "generation.py", Slot::kLoad},
    {"load_checkpoint", "", Slot::kLoad},
    {"from_folder", "", Slot::kLoad},
    // transformers' generate building a preallocated cache before the prefill
    // (generation/utils.py _prepare_cache_for_generation -> _get_cache, 4.42+; _setup_cache,
    // 4.38-4.41; the cache classes' constructors in cache_utils.py), or a static layer allocating
    // it at its first update (cache_utils.py StaticLayer.lazy_initialization, 4.56+): torchtune's
    // setup_caches' counterpart. A dynamic cache allocates nothing there.
    {"_prepare_cache_for_generation", "", Slot::kKv},
    {"_get_cache", "", Slot::kKv},
    {"_setup_cache", "", Slot::kKv},
    {"__init__", "cache_utils.py", Slot::kKv},
    {"lazy_initialization", "", Slot::kKv},
    {"setup_caches", "", Slot::kKv},
    // exllamav2 (exllamav2/cache.py ExLlamaV2CacheBase.create_state_tensors, 0.0.x-0.3): the
    // cache's constructor allocates every layer's K and V for batch_size x max_seq_len at once
    // (max_seq_len defaults to the model config's length); its loaders (model.py load_gen,
    // load_autosplit_gen, load_tp_gen) place the weights, and generate_simple decodes.
    {"create_state_tensors", "", Slot::kKv},
    // ExLlama's "Insufficient VRAM (in split) for model and cache" (the pytorch reader's frame):
    // its autosplit had no room for a module and the cache slice placed with it.
    {"split_for_model_and_cache", "", Slot::kKv},
    // The RL trainers' worker set-up, called through Ray (the pytorch reader's ray:: frame):
    // verl's fsdp_workers.py ActorRolloutRefWorker.init_model, SkyRL's and OpenRLHF's policy
    // workers' init_model / init_model_from_pretrained build the model and load its weights.
    {"init_model", "", Slot::kLoad},
    {"init_model_from_pretrained", "", Slot::kLoad},
    {"load_gen", "", Slot::kLoad},
    {"load_autosplit_gen", "", Slot::kLoad},
    {"load_tp_gen", "", Slot::kLoad},
    {"generate_simple", "", Slot::kRuntime},
    // A KVCache's buffers (the pytorch reader's code-line frame): the cache setup_caches builds.
    {"kv_cache_buffer", "", Slot::kKv},
    // A KV cache class's constructor in a kv_cache.py (research models' own caches).
    {"__init__", "kv_cache.py", Slot::kKv},
    {"setup_cache", "", Slot::kKv},
    {"set_kv_cache", "", Slot::kKv},
    {"build_kv_cache", "", Slot::kKv},
    {"text_completion", "generation.py", Slot::kRuntime},
    {"chat_completion", "generation.py", Slot::kRuntime},
    {"text_infilling", "generation.py", Slot::kRuntime},
    {"prefill", "generate.py", Slot::kRuntime},
    {"decode_n_tokens", "", Slot::kRuntime},
    {"decode_one_token", "", Slot::kRuntime},
    {"next_token", "base.py", Slot::kRuntime},
    // The quantizers' per-layer pass (its files are tagged too): the load stage. Loading a
    // quantized checkpoint: AutoGPTQ's from_quantized builds the QuantLinear layers (make_quant)
    // and, after the weights, allocates the kernels' buffers (autogptq_post_init,
    // exllama_set_max_input_length; auto_gptq/modeling/_base.py, _utils.py 0.4-0.7); GPTQModel's
    // the same (gptqmodel_post_init, hf_gptqmodel_post_init; gptqmodel/utils/model.py 1.x-4.x).
    {"fasterquant", "", Slot::kLoad},
    {"make_quant", "", Slot::kLoad},
    // Packing the quantized weights after the per-layer pass, still the quantization run:
    // AutoGPTQ's pack_model (auto_gptq/modeling/_utils.py 0.4-0.7), GPTQModel's pack_model /
    // pack_module (gptqmodel/utils/model.py 1.x-4.x).
    {"pack_model", "", Slot::kLoad},
    // Writing the quantized checkpoint after calibration, still the quantization run: NVIDIA's
    // Model Optimizer (AMMO before 0.11) exporting for TensorRT-LLM or Hugging Face
    // (modelopt/torch/export/model_config_export.py export_tensorrt_llm_checkpoint,
    // torch_to_tensorrt_llm_checkpoint; unified_export_hf.py export_hf_checkpoint; AMMO's
    // export_model_config), called by TensorRT-LLM's quantize.py.
    {"export_tensorrt_llm_checkpoint", "", Slot::kLoad},
    {"torch_to_tensorrt_llm_checkpoint", "", Slot::kLoad},
    {"export_hf_checkpoint", "", Slot::kLoad},
    {"export_model_config", "", Slot::kLoad},
    {"pack_module", "", Slot::kLoad},
    // HQQ moving its quantized layers to a kernel backend after loading (hqq/utils/patching.py
    // prepare_for_inference -> patch_linearlayers with hqq/backends' patch_hqq_to_aoint4,
    // patch_hqq_to_marlin, patch_hqq_to_bitblas, patch_hqq_to_gemlite, 0.1.x-0.2.x): each layer
    // is repacked into the backend's layout before anything runs.
    {"prepare_for_inference", "patching.py", Slot::kLoad},
    {"patch_hqq_to_aoint4", "", Slot::kLoad},
    {"patch_hqq_to_marlin", "", Slot::kLoad},
    {"patch_hqq_to_bitblas", "", Slot::kLoad},
    {"patch_hqq_to_gemlite", "", Slot::kLoad},
    {"autogptq_post_init", "", Slot::kLoad},
    {"exllama_set_max_input_length", "", Slot::kLoad},
    {"gptqmodel_post_init", "", Slot::kLoad},
    {"hf_gptqmodel_post_init", "", Slot::kLoad},
    // text-generation-webui (modules/models.py 2023-2024): load_model dispatches to one loader per
    // backend (huggingface_loader, AutoGPTQ_loader / GPTQ_loader -> load_quantized,
    // llamacpp_loader, ExLlama_loader, ExLlama_HF_loader, RWKV_loader); text is generated by
    // modules/text_generation.py generate_reply -> _generate_reply -> generate_reply_HF (->
    // generate_with_streaming / generate_with_callback -> model.generate).
    {"huggingface_loader", "", Slot::kLoad},
    {"AutoGPTQ_loader", "", Slot::kLoad},
    {"GPTQ_loader", "", Slot::kLoad},
    {"load_quantized", "", Slot::kLoad},
    {"llamacpp_loader", "", Slot::kLoad},
    {"ExLlama_loader", "", Slot::kLoad},
    {"ExLlama_HF_loader", "", Slot::kLoad},
    {"RWKV_loader", "", Slot::kLoad},
    {"generate_reply", "", Slot::kRuntime},
    {"_generate_reply", "", Slot::kRuntime},
    {"generate_reply_HF", "", Slot::kRuntime},
    {"generate_with_callback", "", Slot::kRuntime},
    {"generate_with_streaming", "", Slot::kRuntime},
};

// The row of `fr`, if any.
std::optional<Slot> SlotOf(const LogEvent* fr) {
  const std::string_view text = fr->text;
  const std::string_view fn = text.substr(0, text.find(' '));
  for (const FrameRow& r : kFrameRows) {
    if (fn != r.fn) continue;
    if (r.file.empty()) return r.slot;
    const size_t open = text.find(" (");
    if (open != std::string_view::npos && text.substr(open + 2, r.file.size()) == r.file &&
        text.size() == open + 3 + r.file.size()) {
      return r.slot;
    }
  }
  return std::nullopt;
}

}  // namespace

bool PinnedFailureUnder(const Facts& f, std::initializer_list<std::string_view> names) {
  return AnyFrame(f, names) && f.has(EventKind::kCudaOom) && !f.has(EventKind::kTorchOom);
}

const Facts::DeviceMemory* LoneGpu(const Facts& f) {
  const Facts::DeviceMemory* gpu = nullptr;
  for (const auto& [name, m] : f.devices) {
    if (name == "CPU" || name == "Host" || name.empty()) continue;
    if (gpu != nullptr) return nullptr;
    gpu = &m;
  }
  return gpu != nullptr && gpu->free > 0 ? gpu : nullptr;
}

bool AnyFrame(const Facts& f, std::initializer_list<std::string_view> names) {
  return std::any_of(f.frames.begin(), f.frames.end(),
                     [&](const LogEvent* fr) { return FrameIs(fr, names); });
}

std::optional<FrameStage> StageOfFrames(const std::vector<const LogEvent*>& frames) {
  const LogEvent *graph = nullptr, *sampler = nullptr, *warmup = nullptr, *kv = nullptr,
                 *profile = nullptr, *load = nullptr, *runtime = nullptr, *startup = nullptr,
                 *sampler_code = nullptr, *place = nullptr, *step = nullptr;
  auto first = [](const LogEvent*& slot, const LogEvent* fr) {
    if (!slot) slot = fr;
  };
  for (const LogEvent* fr : frames) {
    if (PathIs(fr, Num::kPathIsGraphCapture)) first(graph, fr);
    if (PathIs(fr, Num::kPathIsKernelWarmup)) first(warmup, fr);
    if (PathIs(fr, Num::kPathIsSampler)) first(sampler_code, fr);
    if (PathIs(fr, Num::kPathIsQuantizer)) first(load, fr);
    const std::optional<Slot> slot = SlotOf(fr);
    if (!slot) continue;
    switch (*slot) {
      case Slot::kGraph:
        first(graph, fr);
        break;
      case Slot::kSampler:
        first(sampler, fr);
        break;
      case Slot::kWarmup:
        first(warmup, fr);
        break;
      case Slot::kKv:
        first(kv, fr);
        break;
      case Slot::kProfile:
        first(profile, fr);
        break;
      case Slot::kLoad:
        first(load, fr);
        break;
      case Slot::kRuntime:
        first(runtime, fr);
        break;
      case Slot::kStartup:
        first(startup, fr);
        break;
      case Slot::kPlace:
        first(place, fr);
        break;
      case Slot::kStep:
        first(step, fr);
        break;
    }
  }
  // vLLM's CUDA-graph memory estimate (v1/worker/gpu_model_runner.py profile_cudagraph_memory,
  // 0.21+) captures trial graphs inside the profile, before the KV cache is sized: its capture
  // frames below it are that estimate's, in the profile stage.
  for (const LogEvent* fr : frames) {
    if (FrameIs(fr, {"profile_cudagraph_memory"})) return FrameStage{Stage::kProfile, fr};
  }
  // The most specific phase wins: capture_model calls _dummy_run, compile_or_warm_up_model
  // calls capture_model, and _initialize_kv_caches calls profile_run. The sampler warm-up runs
  // from the profile run and again after capture (compile_or_warm_up_model): the profile run's
  // frame says which.
  if (graph) return FrameStage{Stage::kCudaGraph, graph};
  if (sampler) {
    return profile && !warmup ? FrameStage{Stage::kProfile, profile}
                              : FrameStage{Stage::kWarmup, warmup ? warmup : sampler};
  }
  if (warmup) return FrameStage{Stage::kWarmup, warmup};
  if (kv) return FrameStage{Stage::kKvCache, kv};
  if (profile) return FrameStage{Stage::kProfile, profile};
  if (load) return FrameStage{Stage::kLoad, load};
  if (startup) return FrameStage{Stage::kStartup, startup};
  const bool forward = std::any_of(frames.begin(), frames.end(), [](const LogEvent* fr) {
    return FrameIs(fr, {"forward", "_call_impl", "_wrapped_call_impl"});
  });
  if (place && !runtime && !forward) return FrameStage{Stage::kLoad, place};
  if (runtime) return FrameStage{Stage::kRuntime, runtime};
  if (step) return FrameStage{Stage::kProfile, step, false, false, true};
  if (sampler_code) return FrameStage{Stage::kRuntime, sampler_code, true};
  // A traceback that ends in a constructor (past torch's device-mode dispatch, which `with
  // torch.device("cuda")` routes every factory call through): modules allocate their
  // parameters as they are built, on the default device, so the model's weights are being
  // placed (nn.Linear's or an engine's parallel linear layer's torch.empty). Only when no other
  // frame places the failure: a cache built by generate() has generate on the stack.
  // torch's device mode (torch/utils/_device.py DeviceContext.__torch_function__, 2.0+) is only
  // active inside `with torch.device(...)`, which the engines' loaders open around building the
  // model (vLLM's and SGLang's model_loader/loader.py: `with target_device:` around
  // _initialize_model); a traceback that ends there with no forward pass on it is such a build,
  // also where the constructor's frame is cut off.
  const LogEvent* device_mode = nullptr;
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
    if (FrameIs(*it, {"__torch_function__"})) {
      if ((*it)->text == "__torch_function__ (_device.py)") device_mode = *it;
      continue;
    }
    if (FrameIs(*it, {"__init__"})) return FrameStage{Stage::kLoad, *it, false, true};
    // SGLang's ModelRunner.initialize (model_executor/model_runner.py, 0.4-0.5), called from its
    // constructor: the model, the memory pools and the graphs are built in turn, so a traceback
    // cut there is a construction whose milestones say how far it got.
    if ((*it)->text == "initialize (model_runner.py)") {
      return FrameStage{Stage::kLoad, *it, false, true};
    }
    break;
  }
  if (device_mode && !forward) return FrameStage{Stage::kLoad, device_mode, false, true};
  return std::nullopt;
}

std::optional<Stage> StageFromFrames(const std::vector<const LogEvent*>& frames) {
  auto s = StageOfFrames(frames);
  if (!s) return std::nullopt;
  return s->stage;
}

// SGLang allocates, after the weights and before serving, its request-to-token pool (one int32
// per token of context_length for every request slot: model_runner.py init_memory_pool,
// ReqToTokenPool, 0.3-0.5) and its KV pool; the graphs and a serving step allocate far less. A
// single allocation larger than the whole card, in a log that never got to its graphs or to
// serving, is one of those pools at a context length the card cannot hold (a model whose
// default context is millions of tokens: 2,049 slots x 10,485,760 tokens x 4 B = 80.04 GiB).
bool SglangRequestOverCard(const Facts& f) {
  if (f.engine != "sglang" || f.total <= 0 || f.has(EventKind::kServing) ||
      f.has(EventKind::kGraphBegin)) {
    return false;
  }
  const auto req = f.get(Num::kRequestedBytes);
  return req && *req > f.total;
}

bool NegativeKv(const Facts& f) {
  auto kv = f.get(Num::kKvCacheBytes);
  auto blocks = f.get(Num::kGpuBlocks);
  auto profiled = f.get(Num::kProfiledTokens);
  return (kv && *kv < 0) || (blocks && *blocks <= 0) || (profiled && *profiled <= 0);
}

bool KvTooSmall(const Facts& f) {
  const Reader* r = FindReader(f.engine);
  const int64_t block = r ? r->kv_block_tokens : 0;
  auto blocks = f.get(Num::kGpuBlocks);
  auto len = f.get(Num::kMaxModelLen);
  return block > 0 && blocks && len && *blocks > 0 && *blocks * static_cast<double>(block) < *len;
}

bool VisionLanguageName(const std::string& path) {
  const std::string name =
      path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  const std::string low = core::AsciiLower(name);
  // "VL" as a word of the name: Qwen2-VL, Qwen2.5-VL, DeepSeek-VL2, Kimi-VL (not "-vllm").
  for (size_t at = low.find("vl"); at != std::string::npos; at = low.find("vl", at + 1)) {
    const bool start = at == 0 || low[at - 1] == '-' || low[at - 1] == '_' || low[at - 1] == '.';
    const bool end = at + 2 == low.size() || !std::isalpha(static_cast<unsigned char>(low[at + 2]));
    if (start && end) return true;
  }
  for (const char* key : {"internvl", "cogvlm", "smolvlm", "llava", "pixtral", "-vision",
                          "_vision", "idefics", "paligemma", "minicpm-v", "minicpm-llama3-v",
                          "florence-2", "qwen2-audio", "whisper", "-omni", "molmo"}) {
    if (low.find(key) != std::string::npos) return true;
  }
  return false;
}

namespace {
// ParamsFromName, and whether the name gave experts x size.
double NamedParams(const std::string& path, bool* mixture) {
  *mixture = false;
  const std::string name =
      path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  for (size_t i = 0; i < name.size(); ++i) {
    if ((name[i] == 'B' || name[i] == 'b') && i > 0 &&
        std::isdigit(static_cast<unsigned char>(name[i - 1])) &&
        (i + 1 == name.size() || !std::isalnum(static_cast<unsigned char>(name[i + 1])))) {
      size_t b = i;
      while (b > 0 && (std::isdigit(static_cast<unsigned char>(name[b - 1])) || name[b - 1] == '.'))
        --b;
      if (b > 0 && (name[b - 1] == 'x' || name[b - 1] == 'X')) {
        // "8x7B": E experts of a P-parameter model share its attention and embeddings, and each
        // adds its MLP, which is most of a dense model's parameters (Mixtral-8x7B's config.json:
        // 32 layers x 3 x 4096 x 14336 = 5.6B of Mistral-7B's 7.2B; 46.7B in all). At least
        // P x (1 + 0.6 (E - 1)): 36B for 8x7B, 114B for 8x22B.
        size_t e = b - 1;
        while (e > 0 && std::isdigit(static_cast<unsigned char>(name[e - 1]))) --e;
        const double experts = std::atof(name.substr(e, b - 1 - e).c_str());
        const double p = std::atof(name.substr(b, i - b).c_str());
        if (experts < 2 || experts > 256 || p <= 0 || p >= 5000) return 0;
        *mixture = true;
        return p * (1 + 0.6 * (experts - 1)) * 1e9;
      }
      if (b > 0 && name[b - 1] == 'A' && b > 1 && name[b - 2] == '-')
        continue;  // -A3B: active parameters
      const double n = std::atof(name.substr(b, i - b).c_str());
      if (n > 0 && n < 5000) return n * 1e9;
    }
  }
  return 0;
}
}  // namespace

double ParamsFromName(const std::string& path) {
  bool mixture = false;
  return NamedParams(path, &mixture);
}

std::string NamedParamsWords(const std::string& path) {
  bool mixture = false;
  const double n = NamedParams(path, &mixture);
  return fmt::format("{}{:.0f}B", mixture ? "at least " : "", n / 1e9);
}

// The names' spellings on the Hugging Face hub: "Qwen2.5-7B-Instruct-GPTQ-Int8",
// "Llama-2-13B-chat-AWQ", "vicuna-13b-GPTQ-4bit-128g", "Meta-Llama-3-70B-Instruct-FP8",
// "Llama-3.1-8B-Instruct-W4A16", "gpt-oss-20b-MXFP4"; the 8-bit marks are read first (a GPTQ
// model may be 8-bit).
int NameBits(const std::string& path) {
  for (const char* key : {"gguf", "ggml"}) {
    if (HasNoCase(path, key)) return 0;
  }
  for (const char* key : {"int8", "8bit", "8-bit", "fp8", "w8a8", "w8a16"}) {
    if (HasNoCase(path, key)) return 8;
  }
  for (const char* key : {"int4", "4bit", "4-bit", "nvfp4", "mxfp4", "w4a16", "awq", "gptq"}) {
    if (HasNoCase(path, key)) return 4;
  }
  return HasNoCase(path, "bnb") ? 0 : 16;
}

std::optional<double> NamedWeightsPerRank(const Facts& f) {
  const double params = ParamsFromName(f.model_path);
  const int bits = NameBits(f.model_path);
  if (params <= 0 || bits <= 0) return std::nullopt;
  // A run that quantizes a 16-bit checkpoint (--quantization, SageMaker's HF_MODEL_QUANTIZE)
  // holds fewer bytes than the name's bits say, how many fewer the name does not tell.
  if (bits >= 16 && f.get(Num::kQuantizedRun)) return std::nullopt;
  return params * bits / 8 / static_cast<double>(f.tp);
}

bool NamedWeightsOverCard(const Facts& f) {
  const auto bytes = NamedWeightsPerRank(f);
  return bytes && f.total > 0 && *bytes > 0.95 * f.total;
}

std::string Gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / core::kGiBf); }

std::string Article(std::string_view size) {
  const std::string_view whole = size.substr(0, size.find_first_not_of("0123456789"));
  // Eight, eighty, eleven and eighteen (and their thousands) begin with a vowel sound.
  const bool vowel = (!whole.empty() && whole[0] == '8') ||
                     ((whole == "11" || whole == "18") ||
                      (whole.size() == 5 && (whole.starts_with("11") || whole.starts_with("18"))));
  return vowel ? "an" : "a";
}

}  // namespace vramfit::doctor
