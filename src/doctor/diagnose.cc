// The diagnosis (see vramfit/doctor.h and docs/doctor.md): the log's facts gathered once, the
// first rule of the rule table that holds (rules.cc), the numbers it rests on, the fixes of the
// engine's reader (readers/) with the engine-neutral ones, the evidence lines, and, with the
// model and the GPU, the run's plan rebuilt and calibrated through the engine table.
#include <fmt/format.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "core/units.h"
#include "doctor/facts.h"
#include "doctor/readers/reader.h"
#include "doctor/rules.h"
#include "vramfit/advice.h"
#include "vramfit/doctor.h"
#include "vramfit/engine.h"

namespace vramfit {
namespace {

using doctor::AddFix;
using doctor::Cause;
using doctor::Facts;
using doctor::Gib;
using doctor::Reader;

// The numbers a diagnosis shows, when the log has them.
constexpr Num kShown[] = {
    Num::kRequestedBytes,
    Num::kTotalBytes,
    Num::kFreeBytes,
    Num::kAllocatedBytes,
    Num::kReservedUnallocatedBytes,
    Num::kPrivatePoolBytes,
    Num::kProcessBytes,
    Num::kWeightsBytes,
    Num::kActivationPeakBytes,
    Num::kNonTorchBytes,
    Num::kKvCacheBytes,
    Num::kKvCacheTokens,
    Num::kKvNeededBytes,
    Num::kMaxModelLen,
    Num::kEstimatedMaxModelLen,
    Num::kMaxConcurrency,
    Num::kGpuMemoryUtilization,
    Num::kBudgetBytes,
    Num::kGpuBlocks,
    Num::kMaxNumSeqs,
    Num::kCudagraphBytes,
    Num::kPeakTorchBytes,
    Num::kConsumedBytes,
    Num::kPromptTokens,
    Num::kProfiledTokens,
    Num::kTensorParallelSize,
    Num::kListedProcessBytes,
    Num::kComputeBytes,
    Num::kMambaBlocks,
    Num::kHostRequiredBytes,
    Num::kHostAvailableBytes,
    Num::kPrefillTokens,
    Num::kOffloadLayers,
    Num::kModelLayers,
};

// The lines a diagnosis cites, first event of each kind, in this order (at most 6).
constexpr EventKind kCited[] = {
    EventKind::kMaxLenError,
    EventKind::kStartupError,
    EventKind::kSamplerOom,
    EventKind::kNoKvMemory,
    EventKind::kSglangNotEnough,
    EventKind::kSglangProfiled,
    EventKind::kSglangTokenOom,
    EventKind::kTorchOom,
    EventKind::kCudaOom,
    EventKind::kGgmlAllocFail,
    EventKind::kGgmlKvFail,
    EventKind::kGgmlComputeFail,
    EventKind::kGgmlLoadFail,
    EventKind::kProfileBreakdown,
    EventKind::kKvAvailable,
    EventKind::kGpuBlocks,
    EventKind::kTransformersBackend,
    EventKind::kGraphBegin,
    EventKind::kServing,
    EventKind::kImage,
    EventKind::kStaticCache,
};

// Fixes that do not depend on the engine: before or after the engine's own.
struct NeutralFix {
  Cause cause;
  bool before_engine;
  void (*add)(const Facts& f, Diagnosis* d);
};
constexpr NeutralFix kNeutralFixes[] = {
    {Cause::kFragmentation, true,
     [](const Facts& f, Diagnosis* d) {
       // vLLM's sleep-mode allocator refuses expandable segments (cumem.py asserts they are
       // off); the engine's reader says what frees the trainer's cache there.
       if (doctor::WakeUp(f)) return;
       // NCCL allocates outside PyTorch's allocator: expandable segments do not hand it the
       // cached memory, emptying the cache does.
       if (doctor::NcclAlloc(f)) {
         AddFix(d, "torch.cuda.empty_cache() before the collective that failed",
                "returns the blocks PyTorch keeps cached to the driver, where NCCL's own "
                "cudaMalloc can use them");
         AddFix(d, "NCCL_BUFFSIZE=1048576 (or fewer NCCL_MAX_NCHANNELS)",
                "smaller buffers per channel and peer");
         return;
       }
       // Ascend's torch_npu reads its own variable (PYTORCH_NPU_ALLOC_CONF, the same
       // expandable_segments key); its message says "NPU out of memory".
       const bool npu = doctor::FailureSays(f, {"NPU out of memory"});
       AddFix(d,
              npu ? "PYTORCH_NPU_ALLOC_CONF=expandable_segments:True"
                  : "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
              fmt::format("{} was reserved but unallocated, more than the {} requested",
                          Gib(f.get(Num::kReservedUnallocatedBytes).value_or(0)),
                          Gib(f.get(Num::kRequestedBytes).value_or(0))));
     }},
    {Cause::kWeightsTooLarge, true,
     [](const Facts& f, Diagnosis* d) {
       if (!doctor::FsdpFullStateDict(f)) return;
       AddFix(d,
              "FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, "
              "FullStateDictConfig(offload_to_cpu=True, rank0_only=True))",
              "gathers the full state dict in CPU memory, on rank 0 only, when saving");
       AddFix(d, "fsdp_state_dict_type: SHARDED_STATE_DICT (accelerate's FSDP config)",
              "each rank saves its own shard: nothing is gathered whole");
     }},
    {Cause::kFp16Fallback, false,
     [](const Facts&, Diagnosis* d) {
       AddFix(d, "vramfit inspect MODEL", "checks which linears the checkpoint stores unquantized");
     }},
};

// The furthest plan the doctor rebuilds: larger sizes in a log are misreadings.
constexpr int64_t kMostTensorParallel = 1024;
constexpr double kLongestLength = 1 << 26;

class Doctor {
 public:
  Doctor(const LogScan& scan, const DoctorContext& ctx)
      : scan_(scan), ctx_(ctx), f_(doctor::Gather(scan, ctx)) {}

  Diagnosis Run() {
    d_.engine = f_.engine;
    // A quantizer's run on PyTorch or transformers is that quantizer's: its name is the engine
    // (the rules still read the log as the PyTorch program it is). optimum's GPTQ code also
    // loads GPTQ checkpoints for transformers, so it names the engine only in a quantization run.
    const bool plain = f_.engine.empty() || f_.engine == "pytorch" || f_.engine == "transformers";
    if (plain && !f_.quantizer.empty() &&
        (f_.quantizer != "optimum" || doctor::QuantizerFrames(f_))) {
      d_.engine = f_.quantizer;
    }
    // A failure: an out-of-memory or KV error line, or a traceback, or SGLang's scheduler
    // exception; else a start-up log that stops before serving (the excerpt ends at the crash).
    const bool kv_error = doctor::NegativeKv(f_) || doctor::KvTooSmall(f_);
    // A failure that is not out-of-memory, where no memory failure is in the log: said as such,
    // with no memory advice. Beside an out-of-memory it is only mentioned.
    const LogEvent* other = OtherErrorEvent();
    // A line that only says a process ended yields to its own stack's frames (Ollama's runner
    // panicking in reserveWorstCaseGraph), which place a memory failure.
    const bool undecided = other && doctor::OtherErrorOf(*other)->undecided;
    if (other && !kv_error && (!f_.oom_line || OnlyWhereOtherErrorsStruck()) &&
        !(undecided && !f_.frames.empty())) {
      return NotOutOfMemory(*other);
    }
    const bool error = f_.oom_line || kv_error || !f_.frames.empty() ||
                       f_.has(EventKind::kTraceback) || f_.has(EventKind::kSglangException);
    const bool stopped = !error && !f_.has(EventKind::kServing) && f_.milestone_stage.has_value();
    if (!error && !stopped) {
      d_.found = false;
      // A start-up that got to serving, with nothing failing after it: said, so that a healthy
      // log does not read as one the doctor could not read.
      if (const LogEvent* s = f_.first_of(EventKind::kServing)) {
        const std::string text = s->text.size() > 100 ? s->text.substr(0, 100) + "..." : s->text;
        d_.notes.push_back(fmt::format(
            "{} reached serving (line {}: {}) and the log shows no failure after it",
            d_.engine.empty() ? std::string("the engine") : d_.engine, s->shown_line(), text));
      }
      SmiSnapshot();
      return d_;
    }
    d_.found = true;
    RunNote();
    NvmlNote();
    Derive();
    if (!f_.oom_line && !kv_error) {
      d_.notes.push_back(
          stopped ? "no error line in the log: the stage is where the log stops"
                  : "no out-of-memory line in the log: the stage is where the traceback points");
    }
    const Cause cause = doctor::Classify(f_, &d_).cause;
    Numbers();
    Fixes(cause);
    Evidence();
    if (other && !doctor::OtherErrorOf(*other)->undecided) MentionOther(*other);
    if (ctx_.model) Calibrate();
    return d_;
  }

 private:
  // The log's failure that is not out-of-memory: the first of a named class (a CUDA fault, NCCL,
  // a crash, ...), else the first Python exception (a wrapper's or a consequence's line names a
  // class less often than the root cause does). nullptr when none.
  // An error whose message the next line completes as another class (a wrap or a reflow parted
  // it, and the errors reader read the two joined there) is read from the completed one:
  // "ValueError: TP rank 0 could finish the model loading, but there are" + "other ranks that
  // didn't ..." (of one class, the first line stands and QuoteOf quotes it whole).
  const LogEvent* OtherErrorEvent() const {
    const auto completed = [&](const LogEvent* e) {
      for (const LogEvent* n : f_.other_errors) {
        if (n->line == e->line + 1 && doctor::OtherErrorOf(*n) != doctor::OtherErrorOf(*e) &&
            Continues(e->text, n->text)) {
          return true;
        }
      }
      return false;
    };
    for (const LogEvent* e : f_.other_errors) {
      const doctor::OtherErrorClass* c = doctor::OtherErrorOf(*e);
      if (c && !doctor::IsGenericError(*c) && !completed(e)) return e;
    }
    // A Python exception before a line that only says a process ended.
    for (const LogEvent* e : f_.other_errors) {
      const doctor::OtherErrorClass* c = doctor::OtherErrorOf(*e);
      if (c && !c->undecided && !completed(e)) return e;
    }
    for (const LogEvent* e : f_.other_errors) {
      if (!completed(e)) return e;
    }
    return f_.other_errors.empty() ? nullptr : f_.other_errors.front();
  }

  // ggml-cuda's "current device: N, in function F at ggml-cuda.cu:L" follows the CUDA error's
  // own line (ggml_cuda_error). The llama.cpp reader reads it as an allocation in the compute
  // paths unless the line before says another error, which it sees only when the two lines share
  // a prefix; a journal's timestamps that differ by a second do not. Every failure event of the
  // log being such a line right after another error's, the log has no out-of-memory.
  bool OnlyWhereOtherErrorsStruck() const {
    std::set<uint64_t> after_other;
    for (const LogEvent* e : f_.other_errors) after_other.insert(e->line + 1);
    bool any = false;
    for (const LogEvent& e : scan_.events) {
      if (!doctor::IsFailureEvent(e.kind)) continue;
      if (e.kind != EventKind::kGgmlComputeFail || !after_other.count(e.line) ||
          e.text.find("current device:") == std::string::npos)
        return false;
      any = true;
    }
    return any;
  }

  void SetOtherError(const LogEvent& e, const doctor::OtherErrorClass& c) {
    d_.other_error = OtherError{c.name, e.shown_line(), QuoteOf(e), c.usual};
  }

  // `joined` begins with the end of `first` (16 bytes at least) and goes on past it: the text of
  // the line after `first` read joined to it.
  static bool Continues(std::string_view first, std::string_view joined) {
    constexpr size_t kLeastOverlap = 16;
    for (size_t p = 0; p + kLeastOverlap <= first.size(); ++p) {
      const std::string_view end = first.substr(p);
      if (joined.size() > end.size() && joined.starts_with(end)) return true;
    }
    return false;
  }

  // The error's text whole: a line that named the error whole and that a terminal then wrapped
  // mid-word ("... for more in" / "formation.") is found again joined on the next line (the
  // errors reader's event there, of the same class); the quote is that joined text. A next line
  // that begins with a space is its own line (ggml's "  current device: ..."), not a wrap.
  std::string QuoteOf(const LogEvent& e) const {
    constexpr size_t kLeastOverlap = 16;
    for (const LogEvent* n : f_.other_errors) {
      if (n->line != e.line + 1 || doctor::OtherErrorOf(*n) != doctor::OtherErrorOf(e)) continue;
      const std::string_view joined = n->text;
      for (size_t p = 0; p + kLeastOverlap <= e.text.size(); ++p) {
        const std::string_view end = std::string_view(e.text).substr(p);
        if (joined.size() <= end.size() || !joined.starts_with(end)) continue;
        // Mid-word: the first piece ends inside a word and the next goes on in lower case
        // ("... in h" / "ttps://"); a sentence's end or a capital begins another line.
        const unsigned char last = static_cast<unsigned char>(end.back());
        const unsigned char next = static_cast<unsigned char>(joined[end.size()]);
        if (std::isalnum(last) && (std::islower(next) || std::isdigit(next))) return n->text;
        break;
      }
    }
    return e.text;
  }

  // The diagnosis of a log whose failure is not out-of-memory: where it happened (the frames and
  // milestones, as for any failure), what the error is, the line, its usual cause, and the steps
  // that find it; no memory setting.
  Diagnosis NotOutOfMemory(const LogEvent& e) {
    const doctor::OtherErrorClass& c = *doctor::OtherErrorOf(e);
    d_.found = true;
    RunNote();
    d_.cause = "not_out_of_memory";
    d_.stage = StageName(f_.stage);
    d_.stage_evidence = f_.stage_why;
    if (c.stage_stated && c.unplaced_stage) {
      d_.stage = StageName(*c.unplaced_stage);
      d_.stage_evidence = fmt::format("the error's own words: {} (line {})", c.words,
                                      e.shown_line());
    } else if (!f_.frame_stage && !f_.milestone_stage && c.unplaced_stage) {
      d_.stage = StageName(*c.unplaced_stage);
      d_.stage_evidence = fmt::format("no frame or milestone: {} strikes at {}", c.words,
                                      StageName(*c.unplaced_stage));
    } else if (f_.engine == "llama.cpp" && !f_.frame_stage &&
               f_.milestone_stage == Stage::kKvCache && f_.stage == Stage::kKvCache &&
               f_.has(EventKind::kGgmlModelBuffer) && !f_.has(EventKind::kGgmlCtx)) {
      // llama.cpp prints its weight buffers once they are allocated and then reads the
      // tensors' data into them (llama_model_loader load_all_data): an allocation failing after
      // those lines is the context's, but a crash that is no allocation, before the context's
      // first line, is still the load's.
      d_.stage = "load";
      d_.stage_evidence = "after the weight buffers' lines and before the context's: the "
                          "tensors' data was being loaded";
    }
    SetOtherError(e, c);
    d_.summary = fmt::format("this failure is not an out-of-memory: {} (line {})", c.words,
                             e.shown_line());
    if (c.undecided) {
      d_.cause = "undetermined";
      d_.summary = fmt::format(
          "the log does not say whether this failure is an out-of-memory: {} (line {})", c.words,
          e.shown_line());
    }
    if (*c.usual) d_.notes.push_back(std::string("usual cause: ") + c.usual);
    // libstdc++'s report of an uncaught exception: "what():  <message>".
    if (const size_t at = e.text.find("what():"); at != std::string::npos) {
      const size_t b = e.text.find_first_not_of(' ', at + 7);
      if (b != std::string::npos) {
        d_.notes.push_back("the uncaught C++ exception says: " + e.text.substr(b));
      }
    }
    d_.notes.push_back(
        c.undecided ? "no out-of-memory line and no other error in the log: no memory setting is "
                      "advised until the failing process's own error is seen"
        : c.length_setting
            ? "no out-of-memory in the log: the input outgrew a length the program was set up "
              "for at load, which a length setting changes (a longer one takes more memory)"
            : "no out-of-memory or KV-cache error in the log: memory settings are not what to "
              "change");
    // The length the exllama kernel's check asked for ("... for a sequence length >=2960").
    if (std::string_view(c.name) == "exllama_max_input_length") {
      if (const auto n = doctor::NumberAfter(e.text, ">="); n && *n >= 1 && *n <= 1e7) {
        AddFix(&d_,
               fmt::format("exllama_set_max_input_length(model, max_input_length={:.0f}) "
                           "(transformers: GPTQConfig(bits=4, max_input_length={:.0f}))",
                           *n, *n),
               "the length the kernel's check asked for; a larger one leaves room for longer "
               "prompts");
      }
    }
    for (const doctor::OtherErrorFix& x : c.fixes) {
      if (x.change) AddFix(&d_, x.change, x.effect);
    }
    if (std::string_view(c.name) == "unsupported_dtype") {
      // FlashAttention 2 needs Ampere whatever the dtype: float16 does not help there.
      if (e.text.find("FlashAttention") != std::string::npos) {
        if (f_.engine == "transformers") {
          AddFix(&d_, "attn_implementation=\"sdpa\"",
                 "PyTorch's scaled-dot-product attention runs on cards below compute "
                 "capability 8.0, where FlashAttention 2 does not");
        }
      } else {
        const bool engine_flag = f_.engine == "vllm" || f_.engine == "sglang";
        // TGI's launcher: --dtype float16 | bfloat16 (launcher/src/main.rs, 1.x-3.x).
        AddFix(&d_,
               engine_flag          ? "--dtype half"
               : f_.engine == "tgi" ? "--dtype float16"
                                    : "torch_dtype=torch.float16",
               "float16 runs on cards below compute capability 8.0, where bfloat16 does not "
               "(vLLM's own message says so)");
      }
    }
    d_.evidence.push_back(fmt::format("line {}: {}", e.shown_line(), d_.other_error->text));
    if (f_.frame_stage) {
      for (const LogEvent* fr : f_.frames) {
        if (doctor::StageFromFrames({fr}) == f_.frame_stage) {
          d_.evidence.push_back(fmt::format("line {}: {}", fr->shown_line(), fr->text));
          break;
        }
      }
    }
    return d_;
  }

  // The file's line of the out-of-memory read as the failure (f_.oom_line is its place in
  // reading order).
  uint64_t OomShownLine() const {
    for (const LogEvent& e : scan_.events) {
      if (doctor::IsFailureEvent(e.kind) && e.line == f_.oom_line) return e.shown_line();
    }
    return f_.oom_line;
  }

  // Another error beside the out-of-memory: named, not diagnosed.
  void MentionOther(const LogEvent& e) {
    const doctor::OtherErrorClass& c = *doctor::OtherErrorOf(e);
    SetOtherError(e, c);
    // (The exception that carries the out-of-memory's own words, on its line, is no other.)
    if (f_.oom_line != 0 && e.line == f_.oom_line) return;
    if (f_.oom_line == 0) {
      d_.notes.push_back(fmt::format("the log also shows {} at line {}: the KV-cache error is "
                                     "read as the failure",
                                     c.words, e.shown_line()));
      return;
    }
    d_.notes.push_back(fmt::format(
        "the log also shows {} at line {}, {} the out-of-memory (line {}): the out-of-memory is "
        "read as the failure{}",
        c.words, e.shown_line(), e.line > f_.oom_line ? "after" : "before", OomShownLine(),
        e.line > f_.oom_line ? "; an error after it is often its consequence" : ""));
  }

  // PyTorch's NVML assert read as its out-of-memory (readers/pytorch.cc NvmlAssertOom): said, for
  // the assert does not look like one.
  void NvmlNote() {
    for (const LogEvent& e : scan_.events) {
      if (e.kind != EventKind::kCudaOom || e.line != f_.oom_line ||
          !doctor::NvmlAssertOom(doctor::LineView(e.text, nullptr))) {
        continue;
      }
      d_.notes.push_back(fmt::format(
          "line {}'s NVML assert is PyTorch's out-of-memory: the caching allocator asserts on "
          "NVML while it writes the out-of-memory message, and NVML did not answer (Jetson, some "
          "containers and WSL set-ups)",
          e.shown_line()));
      return;
    }
  }

  // Which run of a log of several the diagnosis reads.
  void RunNote() {
    if (scan_.newest_first) {
      d_.notes.push_back("the log is newest first (its timestamps run backwards): it is read from "
                         "its last line up, and its line numbers count from that last line");
    }
    if (scan_.earlier_runs == 0) return;
    d_.notes.push_back(fmt::format("the log holds {} runs: the last one is read (from line {}), "
                                   "the earlier ones failed before it",
                                   scan_.earlier_runs + 1, scan_.run_line));
  }

  void Derive() {
    // 0.6.4's one-line profile: the activation peak is the torch peak less the weights.
    auto& act = f_.v[static_cast<size_t>(Num::kActivationPeakBytes)];
    const auto peak = f_.get(Num::kPeakTorchBytes);
    const auto weights = f_.get(Num::kWeightsBytes);
    if (!act && peak && weights) act = *peak - *weights;
  }

  void Numbers() {
    for (Num k : kShown) {
      if (auto x = f_.get(k)) d_.numbers[NumName(k)] = *x;
    }
    if (!f_.ranks.empty()) d_.numbers["ranks_seen"] = static_cast<double>(f_.ranks.size());
  }

  // The engine-neutral fixes around those of the first reader that has some for the cause
  // (the engine's own, else the default reader's, else any other's).
  void Fixes(Cause cause) {
    // A shared-memory segment is the container's limit, whatever the engine.
    if (cause == Cause::kHostMemory && doctor::SharedMemory(f_)) {
      AddFix(&d_, "docker run --shm-size=16g (or --ipc=host; Kubernetes: an emptyDir with "
                  "medium: Memory mounted at /dev/shm)",
             "/dev/shm is 64 MB in a container by default");
      if (doctor::DataLoaderSharedMemory(f_)) {
        AddFix(&d_, "DataLoader(..., num_workers=0) (or fewer workers)",
               "batches then stay in the training process, not in shared memory");
      } else {
        AddFix(&d_, "NCCL_SHM_DISABLE=1", "NCCL then goes through the network or P2P instead "
                                          "of shared memory (slower)");
      }
      return;
    }
    for (const NeutralFix& n : kNeutralFixes) {
      if (n.cause == cause && n.before_engine) n.add(f_, &d_);
    }
    for (const Reader* r : doctor::ReadersFor(f_.engine)) {
      if (r->fixes && r->fixes(cause, f_, &d_)) break;
    }
    for (const NeutralFix& n : kNeutralFixes) {
      if (n.cause == cause && !n.before_engine) n.add(f_, &d_);
    }
  }

  void Evidence() {
    std::set<uint64_t> seen;
    auto add = [&](const LogEvent* e) {
      if (!e || seen.count(e->line) || d_.evidence.size() >= 6) return;
      seen.insert(e->line);
      d_.evidence.push_back(fmt::format("line {}: {}", e->shown_line(), e->text));
    };
    for (EventKind k : kCited) add(f_.first_of(k));
    if (f_.frame_stage) {
      for (const LogEvent* fr : f_.frames) {
        if (doctor::StageFromFrames({fr}) == f_.frame_stage) {
          add(fr);
          break;
        }
      }
    }
  }

  // With the model and the GPU: the plan of the settings the log shows, rebuilt by the engine
  // whose reader says how (the log's engine, or the default reader's when none was recognised),
  // each reported number against it, then a plan calibrated on what the log measured (the
  // activation and non-torch memory; the free memory around the load where the reader reads
  // it, which also stands for the GPU when none was given), whose advice replaces the generic
  // fixes when it fails.
  void Calibrate() {
    const Reader* reader =
        f_.engine.empty() ? &doctor::DefaultReader() : doctor::FindReader(f_.engine);
    if (!reader || !reader->run_flags) return;
    EngineSettings measured;
    const std::string measured_words = reader->measured ? reader->measured(f_, &measured) : "";
    if (!ctx_.gpu && measured.measured_free_before_load_bytes == 0) return;
    EngineSettings s;
    s.tensor_parallel_size = f_.tp;
    if (s.tensor_parallel_size > kMostTensorParallel ||
        f_.get(Num::kMaxModelLen).value_or(0) > kLongestLength) {
      d_.notes.push_back(
          "plan not rebuilt: the log's tensor-parallel size or length is out of range");
      return;
    }
    FlagValues flags;
    reader->run_flags(f_, &flags, &d_.notes);
    if (auto l = f_.get(Num::kMaxModelLen); l && *l > 0) {
      s.max_model_len = static_cast<int64_t>(*l);
    }
    if (auto u = f_.get(Num::kGpuMemoryUtilization); u && *u > 0 && *u <= 1) {
      s.gpu_memory_utilization = *u;
    }
    s.allow_long_max_model_len = true;
    auto engine = FindEngine(reader->engine);
    if (!engine.ok()) {
      d_.notes.push_back("plan not rebuilt: " + engine.status().message());
      return;
    }
    const Engine& e = *engine->engine;
    auto settings = e.read_flags(flags, s);
    if (!settings.ok()) {
      d_.notes.push_back("plan not rebuilt: " + settings.status().message());
      return;
    }
    GpuSpec gpu;
    if (ctx_.gpu) {
      gpu = *ctx_.gpu;
    } else {
      // No --gpu: a GPU of the free memory the log measured before the load, up to whole GiB.
      gpu.id = "log";
      gpu.name = "the log's GPU";
      gpu.custom = true;
      gpu.total_bytes = (measured.measured_free_before_load_bytes / core::kGiB + 1) * core::kGiB;
      d_.notes.push_back(fmt::format(
          "no --gpu: the plan's GPU is {} (the log's free memory before the load, rounded up)",
          Gib(static_cast<double>(gpu.total_bytes))));
    }
    if (auto t = f_.get(Num::kTotalBytes); t && *t > 0) gpu.total_bytes = static_cast<uint64_t>(*t);
    auto model = e.prepare(*ctx_.model);
    if (!model.ok()) {
      d_.notes.push_back("plan not rebuilt: " + model.status().message());
      return;
    }
    auto plan = (*model)->MakePlan(gpu, *settings);
    if (!plan.ok()) {
      d_.notes.push_back("plan not rebuilt: " + plan.status().message());
      return;
    }
    const GpuPlan& g = plan->gpus[0];
    auto compare = [&](const char* what, Num key, double predicted) {
      if (auto r = f_.get(key)) {
        d_.notes.push_back(fmt::format("{}: log {} / plan {} ({:+.1f}%)", what, Gib(*r),
                                       Gib(predicted),
                                       *r != 0 ? 100.0 * (predicted - *r) / std::abs(*r) : 0.0));
      }
    };
    compare("weights per GPU", Num::kWeightsBytes, static_cast<double>(g.weights_bytes));
    compare("activation peak", Num::kActivationPeakBytes,
            static_cast<double>(g.activation_peak_bytes));
    compare("non-torch memory", Num::kNonTorchBytes, static_cast<double>(g.non_torch_bytes));
    compare("KV cache memory", Num::kKvCacheBytes, static_cast<double>(g.kv_cache_bytes));
    d_.numbers["plan_weights_bytes"] = static_cast<double>(g.weights_bytes);
    d_.numbers["plan_kv_cache_bytes"] = static_cast<double>(g.kv_cache_bytes);
    // Calibrated: the measured terms replace the estimates.
    EngineSettings c = *settings;
    std::vector<std::string> what;
    if (auto a = f_.get(Num::kActivationPeakBytes); a && *a > 0) {
      c.measured_activation_bytes = static_cast<uint64_t>(*a);
    }
    if (auto n = f_.get(Num::kNonTorchBytes); n && *n > 0) {
      c.measured_non_torch_bytes = static_cast<uint64_t>(*n);
    }
    if (c.measured_activation_bytes > 0 || c.measured_non_torch_bytes > 0) {
      what.push_back("measured activation and non-torch memory");
    }
    if (!measured_words.empty()) {
      c.measured_free_before_load_bytes = measured.measured_free_before_load_bytes;
      c.measured_free_after_load_bytes = measured.measured_free_after_load_bytes;
      d_.numbers["calibrated_free_before_load_bytes"] =
          static_cast<double>(c.measured_free_before_load_bytes);
      d_.numbers["calibrated_free_after_load_bytes"] =
          static_cast<double>(c.measured_free_after_load_bytes);
      what.push_back(measured_words);
    }
    if (what.empty()) return;
    auto calibrated = (*model)->MakePlan(gpu, c);
    if (!calibrated.ok()) {
      d_.notes.push_back("calibrated plan not made: " + calibrated.status().message());
      return;
    }
    const uint64_t tokens = calibrated->kv_cache_tokens;
    d_.numbers["calibrated_kv_cache_bytes"] =
        static_cast<double>(calibrated->gpus[0].kv_cache_bytes);
    d_.numbers["calibrated_kv_cache_tokens"] = static_cast<double>(tokens);
    d_.notes.push_back(fmt::format(
        "calibrated plan ({}): KV cache {}{}, {}",
        what.size() == 1 ? what[0] : what[0] + "; " + what[1],
        Gib(static_cast<double>(calibrated->gpus[0].kv_cache_bytes)),
        tokens > 0 ? fmt::format(" ({} tokens)", tokens) : std::string(),
        calibrated->fits ? "fits"
                         : std::string("fails at ") + StageName(*calibrated->failure_stage)));
    if (auto t = f_.get(Num::kKvCacheTokens); t && *t > 0 && tokens > 0) {
      d_.notes.push_back(fmt::format("KV cache tokens: log {:.0f} / calibrated plan {} ({:+.1f}%)",
                                     *t, tokens,
                                     100.0 * (static_cast<double>(tokens) - *t) / *t));
    }
    if (!calibrated->fits) {
      const auto advice = Advise(e, **model, gpu, c, *calibrated);
      if (!advice.empty()) {
        d_.fixes.clear();
        for (const Advice& a : advice)
          d_.fixes.push_back({a.change, a.effect + " (" + a.cost + ")"});
      }
    }
  }

  // What an nvidia-smi snapshot without a failure shows: each GPU's use and the processes.
  void SmiSnapshot() {
    double listed = 0;
    int processes = 0, gpus = 0;
    for (const LogEvent& e : scan_.events) {
      if (e.kind == EventKind::kSmiGpu) {
        auto used = e.values.find(Num::kUsedBytes);
        auto total = e.values.find(Num::kSmiTotalBytes);
        if (total == e.values.end()) continue;
        d_.notes.push_back(
            fmt::format("nvidia-smi, line {}: GPU {}{} of {}", e.shown_line(), gpus++,
                        used != e.values.end() ? fmt::format(" uses {}", Gib(used->second)) : "",
                        Gib(total->second)));
      } else if (e.kind == EventKind::kSmiProcess) {
        auto used = e.values.find(Num::kUsedBytes);
        if (used != e.values.end()) listed += used->second;
        ++processes;
      }
    }
    if (processes > 0) {
      d_.notes.push_back(
          fmt::format("nvidia-smi: {} process(es) hold {} in all", processes, Gib(listed)));
    }
    if (gpus > 0 || processes > 0) {
      d_.notes.push_back(
          "no failure in the log: a snapshot alone says what holds memory, not why a run failed; "
          "pass the engine's log with it");
    }
  }

  const LogScan& scan_;
  const DoctorContext& ctx_;
  Facts f_;
  Diagnosis d_;
};

}  // namespace

Diagnosis Diagnose(const LogScan& scan, const DoctorContext& context) {
  return Doctor(scan, context).Run();
}

}  // namespace vramfit
