// The facts of a log (facts.h): its events gathered once, first value of each key and first
// event of each kind, the engine that printed them, the stage its frames point at and the
// furthest phase it reached. The readers table says which frames and milestones are whose.
#include "doctor/facts.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/units.h"
#include "doctor/readers/reader.h"

namespace vramfit::doctor {
namespace {

// Events that report a failure: the first one's line ends the milestones.
constexpr EventKind kOomKinds[] = {
    EventKind::kTorchOom,        EventKind::kCudaOom,        EventKind::kSamplerOom,
    EventKind::kMaxLenError,     EventKind::kNoKvMemory,     EventKind::kStartupError,
    EventKind::kSglangNotEnough, EventKind::kSglangTokenOom, EventKind::kGgmlAllocFail,
    EventKind::kGgmlLoadFail,    EventKind::kGgmlKvFail,     EventKind::kGgmlComputeFail,
    EventKind::kGgmlReserveFail,
};

bool IsOom(EventKind k) {
  return std::find(std::begin(kOomKinds), std::end(kOomKinds), k) != std::end(kOomKinds);
}

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
std::optional<Stage> StageFromMilestones(const LogScan& scan, const Facts& f) {
  std::optional<Stage> reached;
  for (const LogEvent& e : scan.events) {
    if (f.oom_line && e.line > f.oom_line) break;
    const Reader* r = FindReader(e.engine);
    if (!r) continue;
    for (const Milestone& m : r->milestones) {
      if (m.kind == e.kind && (!reached || m.stage > *reached)) reached = m.stage;
    }
  }
  return reached;
}

}  // namespace

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
  }
  return "";
}

Facts Gather(const LogScan& scan, const DoctorContext& ctx) {
  Facts f;
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
    if (e.kind == EventKind::kFrame) f.frames.push_back(&e);
    if (!e.rank.empty()) f.ranks.insert(e.rank);
    if (e.kind == EventKind::kConfig && f.model_path.empty() && !e.text.empty()) {
      f.model_path = e.text;
    }
    if (IsOom(e.kind) && f.oom_line == 0) f.oom_line = e.line;
  }
  f.engine = scan.engines.empty() ? "" : scan.engines[0];
  // The engine is the one that printed engine lines; PyTorch's message alone means "pytorch".
  for (const std::string& e : scan.engines) {
    if (e != "pytorch" && e != "any") {
      f.engine = e;
      break;
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
    f.tp = std::max<int64_t>(1, static_cast<int64_t>(f.ranks.size()));
  }
  if (auto t = f.get(Num::kTotalBytes)) {
    f.total = *t;
  } else if (ctx.gpu) {
    f.total = static_cast<double>(ctx.gpu->total_bytes);
  }
  f.multimodal =
      f.has(EventKind::kMmHint) || f.has(EventKind::kImage) ||
      (ctx.model && ctx.model->has_spec && ctx.model->spec.vision.kind != VisionKind::kNone);
  f.frame_stage = StageFromFrames(f.frames);
  f.milestone_stage = StageFromMilestones(scan, f);
  f.stage = f.frame_stage                            ? *f.frame_stage
            : f.milestone_stage                      ? *f.milestone_stage
            : f.has(EventKind::kTransformersBackend) ? Stage::kLoad
                                                     : Stage::kRuntime;
  return f;
}

bool FrameIs(const LogEvent* fr, std::initializer_list<std::string_view> names) {
  const std::string_view fn = std::string_view(fr->text).substr(0, fr->text.find(' '));
  for (std::string_view n : names) {
    if (fn == n) return true;
  }
  return false;
}

std::optional<Stage> StageFromFrames(const std::vector<const LogEvent*>& frames) {
  bool graph = false, sampler = false, kv = false, profile = false, load = false, runtime = false,
       startup = false;
  for (const LogEvent* fr : frames) {
    if (FrameIs(fr, {"capture_model", "_capture_cudagraphs", "capture_end", "capture",
                     "capture_one_batch_size", "init_cuda_graphs", "cuda_graph_runner",
                     "CudaGraphRunner", "graph_capture"}))
      graph = true;
    if (FrameIs(fr, {"_dummy_sampler_run"})) sampler = true;
    if (FrameIs(fr,
                {"initialize_kv_cache", "_allocate_kv_cache_tensors", "initialize_kv_cache_tensors",
                 "_allocate_kv_cache", "allocate_kv_cache", "init_memory_pool", "_init_cache",
                 "initialize_cache", "_reshape_kv_cache_tensors"}))
      kv = true;
    if (FrameIs(fr, {"profile_run", "_dummy_run", "determine_available_memory",
                     "determine_num_available_blocks", "profile", "_dummy_pooler_run",
                     "profile_max_num_token"}))
      profile = true;
    if (FrameIs(fr, {"load_model", "load_weights", "_load_weights", "process_weights_after_loading",
                     "from_pretrained", "_load_state_dict_into_meta_model",
                     "_load_pretrained_model", "load_state_dict", "dispatch_model",
                     "load_checkpoint_and_dispatch", "weight_loader", "initialize_model",
                     "_initialize_model", "load_checkpoint_in_model", "_load_model", "get_model"}))
      load = true;
    if (FrameIs(fr,
                {"execute_model", "run_busy_loop", "step", "generate", "_sample", "_greedy_search",
                 "sample", "forward_batch_generation", "event_loop_overlap", "event_loop_normal",
                 "run_batch", "forward_thread_func_", "forward_extend", "forward_decode",
                 "_execute_mm_encoder", "process_input_sockets", "chat", "stream_chat"}))
      runtime = true;
    if (FrameIs(fr, {"init_device", "request_memory", "_init_device"})) startup = true;
  }
  if (graph) return Stage::kCudaGraph;
  if (sampler) return Stage::kProfile;
  if (kv) return Stage::kKvCache;
  if (profile) return Stage::kProfile;
  if (load) return Stage::kLoad;
  if (startup) return Stage::kStartup;
  if (runtime) return Stage::kRuntime;
  return std::nullopt;
}

bool NegativeKv(const Facts& f) {
  auto kv = f.get(Num::kKvCacheBytes);
  auto blocks = f.get(Num::kGpuBlocks);
  auto profiled = f.get(Num::kProfiledTokens);
  return (kv && *kv < 0) || (blocks && *blocks == 0) || (profiled && *profiled <= 0);
}

bool KvTooSmall(const Facts& f) {
  const Reader* r = FindReader(f.engine);
  const int64_t block = r ? r->kv_block_tokens : 0;
  auto blocks = f.get(Num::kGpuBlocks);
  auto len = f.get(Num::kMaxModelLen);
  return block > 0 && blocks && len && *blocks > 0 && *blocks * static_cast<double>(block) < *len;
}

std::string Gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / core::kGiBf); }

}  // namespace vramfit::doctor
