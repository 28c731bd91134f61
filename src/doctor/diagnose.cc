// Diagnosis rules (see vramfit/doctor.h and docs/doctor.md). The stage comes from the engine's
// own error text where it has one, else from the traceback's frames, else from the last
// start-up milestone the log reached; the cause from rules that encode the known OOM classes,
// most specific first; the fixes carry values computed from the log's own numbers (and from a
// vLLM plan calibrated on them when the model and GPU are known).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/units.h"
#include "doctor/text_scan.h"
#include "vramfit/advice.h"
#include "vramfit/doctor.h"
#include "engines/vllm/engine.h"
#include "engines/vllm/vllm.h"

namespace vramfit {
namespace {

using doctor::Has;
using doctor::HasNoCase;

constexpr double kGiB = 1073741824.0;

std::string Gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / kGiB); }

// Everything the events say, first value of each kind (the first failure wins).
struct Facts {
  std::map<std::string, double> v;          // first value seen per key
  std::map<std::string, const LogEvent*> first;  // first event per kind
  std::vector<const LogEvent*> frames;
  std::set<std::string> ranks;
  std::string model_path;
  uint64_t oom_line = 0;                    // first OOM-like event
  std::string engine;

  bool has(const char* kind) const { return first.count(kind) > 0; }
  std::optional<double> get(const char* key) const {
    auto it = v.find(key);
    return it == v.end() ? std::nullopt : std::optional<double>(it->second);
  }
};

const std::set<std::string> kOomKinds = {
    "torch_oom",     "cuda_oom",          "sampler_oom",      "max_len_error",   "no_kv_memory",
    "startup_error", "sglang_not_enough", "sglang_token_oom", "ggml_alloc_fail", "ggml_load_fail",
    "ggml_kv_fail",  "ggml_compute_fail", "ggml_reserve_fail"};

Facts Gather(const LogScan& scan) {
  Facts f;
  for (const LogEvent& e : scan.events) {
    if (!f.first.count(e.kind)) f.first[e.kind] = &e;
    // Values from before the failure, or the failure's own; later repeats (other ranks) do not
    // override.
    if (e.kind != "frame") {
      for (const auto& [k, x] : e.values) f.v.emplace(k, x);  // the first value of each key stays
    }
    if (e.kind == "frame") f.frames.push_back(&e);
    if (!e.rank.empty()) f.ranks.insert(e.rank);
    if (e.kind == "config" && f.model_path.empty() && !e.text.empty()) f.model_path = e.text;
    if (kOomKinds.count(e.kind) && f.oom_line == 0) f.oom_line = e.line;
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
    for (const LogEvent* fr : f.frames) {
      auto has = [&](const char* k) {
        auto it = fr->values.find(k);
        return it != fr->values.end() && it->second > 0;
      };
      if (has("path_has_vllm")) { f.engine = "vllm"; break; }
      if (has("path_has_sglang")) { f.engine = "sglang"; break; }
      if (has("path_has_transformers")) f.engine = "transformers";
    }
  }
  if (f.engine == "any") f.engine = "pytorch";
  return f;
}

bool FrameIs(const LogEvent* fr, std::initializer_list<const char*> names) {
  const std::string_view fn = std::string_view(fr->text).substr(0, fr->text.find(' '));
  for (const char* n : names) {
    if (fn == n) return true;
  }
  return false;
}

// The stage the traceback's frames point at, by priority (capture_model calls _dummy_run, and
// _initialize_kv_caches calls profile_run: the most specific phase wins).
std::string StageFromFrames(const Facts& f) {
  bool graph = false, sampler = false, kv = false, profile = false, load = false, runtime = false,
       startup = false;
  for (const LogEvent* fr : f.frames) {
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
  if (graph) return "cudagraph";
  if (sampler) return "profile";
  if (kv) return "kv_cache";
  if (profile) return "profile";
  if (load) return "load";
  if (startup) return "startup";
  if (runtime) return "runtime";
  return "";
}

// The furthest phase the log reached before the first failure, from the milestones it printed
// (the furthest, not the last: Ray and multi-process logs print out of order).
std::string StageFromMilestones(const LogScan& scan, const Facts& f) {
  static const char* kOrder[] = {"load", "profile", "kv_cache", "cudagraph", "runtime"};
  int reached = -1;
  for (const LogEvent& e : scan.events) {
    if (f.oom_line && e.line > f.oom_line) break;
    const std::string& k = e.kind;
    int at = -1;
    if (k == "load_begin" || k == "config") at = 0;
    else if (k == "weights_loaded" || k == "profile_begin") at = 1;
    else if (k == "profile_breakdown" || k == "kv_available" || k == "profile_item" ||
             k == "budget" || k == "profile_v1" || k == "sglang_weights" ||
             k == "ggml_model_buffer")
      at = 2;
    else if (k == "kv_tokens" || k == "gpu_blocks" || k == "max_concurrency")
      at = e.engine == "sglang" ? 3 : 2;
    else if (k == "graph_begin") at = 3;
    else if (k == "graph_done" || k == "serving" || k == "prompt") at = 4;
    reached = std::max(reached, at);
  }
  return reached < 0 ? "" : kOrder[reached];
}

// "Qwen1.5-72B-Chat" -> 72e9; "Mixtral-8x7B" -> 46.7e9 is not attempted (returns 0).
double ParamsFromName(const std::string& path) {
  const std::string name =
      path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  for (size_t i = 0; i < name.size(); ++i) {
    if ((name[i] == 'B' || name[i] == 'b') && i > 0 &&
        std::isdigit(static_cast<unsigned char>(name[i - 1])) &&
        (i + 1 == name.size() || !std::isalnum(static_cast<unsigned char>(name[i + 1])))) {
      size_t b = i;
      while (b > 0 && (std::isdigit(static_cast<unsigned char>(name[b - 1])) || name[b - 1] == '.'))
        --b;
      if (b > 0 && (name[b - 1] == 'x' || name[b - 1] == 'X')) return 0;  // 8x7B: experts
      if (b > 0 && name[b - 1] == 'A' && b > 1 && name[b - 2] == '-')
        continue;  // -A3B: active parameters
      const double n = std::atof(name.substr(b, i - b).c_str());
      if (n > 0 && n < 5000) return n * 1e9;
    }
  }
  return 0;
}

bool QuantizedName(const std::string& path) {
  return HasNoCase(path, "awq") || HasNoCase(path, "gptq") || HasNoCase(path, "int4") ||
         HasNoCase(path, "int8") || HasNoCase(path, "fp8") || HasNoCase(path, "4bit") ||
         HasNoCase(path, "nvfp4") || HasNoCase(path, "gguf") || HasNoCase(path, "w4a16") ||
         HasNoCase(path, "w8a8") || HasNoCase(path, "bnb");
}

class Doctor {
 public:
  Doctor(const LogScan& scan, const DoctorContext& ctx)
      : scan_(scan), ctx_(ctx), f_(Gather(scan)) {}

  Diagnosis Run() {
    d_.engine = f_.engine;
    // A failure: an out-of-memory or KV error line, or a traceback, or SGLang's scheduler
    // exception; else a start-up log that stops before serving (the excerpt ends at the crash).
    const bool error = f_.oom_line || NegativeKv() || KvTooSmall() || !f_.frames.empty() ||
                       f_.has("traceback") || f_.has("sglang_exception");
    const bool stopped = !error && !f_.has("serving") && !StageFromMilestones(scan_, f_).empty();
    if (!error && !stopped) {
      d_.found = false;
      return d_;
    }
    d_.found = true;
    Derive();
    if (!f_.oom_line && !NegativeKv() && !KvTooSmall()) {
      d_.notes.push_back(
          stopped ? "no error line in the log: the stage is where the log stops"
                  : "no out-of-memory line in the log: the stage is where the traceback points");
    }
    Classify();
    Numbers();
    Fixes();
    Evidence();
    if (ctx_.model && ctx_.gpu && (f_.engine == "vllm" || f_.engine.empty())) Calibrate();
    return d_;
  }

 private:
  bool NegativeKv() const {
    auto kv = f_.get("kv_cache_bytes");
    return (kv && *kv < 0) || (f_.get("gpu_blocks") && *f_.get("gpu_blocks") == 0) ||
           (f_.get("profiled_tokens") && *f_.get("profiled_tokens") <= 0);
  }

  // V0's check: fewer KV tokens (# GPU blocks x 16) than one max_model_len request.
  bool KvTooSmall() const {
    auto blocks = f_.get("gpu_blocks");
    auto len = f_.get("max_model_len");
    return blocks && len && *blocks > 0 && *blocks * 16 < *len && f_.engine == "vllm";
  }

  bool Multimodal() const {
    if (f_.has("mm_hint") || f_.has("image")) return true;
    return ctx_.model && ctx_.model->has_spec && ctx_.model->spec.vision.kind != VisionKind::kNone;
  }

  void Set(const char* stage, const char* cause, std::string summary) {
    d_.stage = stage;
    d_.cause = cause;
    d_.summary = std::move(summary);
  }

  int64_t Tp() const {
    if (ctx_.tensor_parallel_size > 0) return ctx_.tensor_parallel_size;
    if (auto t = f_.get("tensor_parallel_size")) return static_cast<int64_t>(*t);
    return std::max<int64_t>(1, static_cast<int64_t>(f_.ranks.size()));
  }

  double Total() const {
    if (auto t = f_.get("total_bytes")) return *t;
    if (ctx_.gpu) return static_cast<double>(ctx_.gpu->total_bytes);
    return 0;
  }

  void Classify() {
    const auto requested = f_.get("requested_bytes");
    const auto reserved_free = f_.get("reserved_unallocated_bytes");
    if (f_.has("max_len_error")) {
      Set("kv_cache", "kv_too_long_context",
          "vLLM's max-length check failed: one request of --max-model-len needs more "
          "KV cache than the memory left for it");
      return;
    }
    if (f_.has("startup_error")) {
      Set("startup", "other_process",
          "vLLM refused to start: the GPU's free memory at start-up is below "
          "--gpu-memory-utilization x total; something else holds memory on it");
      return;
    }
    if (f_.has("sampler_oom") ||
        std::any_of(f_.frames.begin(), f_.frames.end(),
                    [](const LogEvent* fr) { return FrameIs(fr, {"_dummy_sampler_run"}); })) {
      Set("profile", "sampler_warmup",
          "the sampler warm-up ran out of memory: vLLM samples max_num_seqs dummy requests' "
          "logits (vocabulary-wide, fp32) at once during start-up");
      return;
    }
    if (f_.has("no_kv_memory") || NegativeKv() || f_.has("sglang_not_enough")) {
      Set("kv_cache", "kv_no_memory",
          "nothing is left for the KV cache: the weights and the profiled activation peak "
          "use the whole --gpu-memory-utilization budget");
      return;
    }
    if (KvTooSmall()) {
      Set("kv_cache", "kv_too_long_context",
          "the KV cache holds fewer tokens than one --max-model-len request "
          "(# GPU blocks x 16 tokens)");
      return;
    }
    if (f_.engine == "llama.cpp" || f_.has("ggml_alloc_fail") || f_.has("ggml_kv_fail") ||
        f_.has("ggml_compute_fail")) {
      if (LlamaCpp()) return;
    }
    if (f_.has("sglang_token_oom")) {
      Set("runtime", "kv_too_many_sequences",
          "SGLang's token pool ran out while serving: the running batch needs more "
          "KV tokens than the pool holds");
      return;
    }
    std::string stage = StageFromFrames(f_);
    if (stage.empty()) stage = StageFromMilestones(scan_, f_);
    if (stage.empty()) stage = f_.has("transformers_backend") ? "load" : "runtime";
    if (stage == "cudagraph") {
      Set("cudagraph", "cudagraph_capture",
          "CUDA graph capture ran out of memory: the graph pool is allocated after the "
          "KV cache was sized (outside the budget before vLLM 0.21)");
      return;
    }
    if (stage == "kv_cache") {
      Set("kv_cache", "kv_no_memory",
          "allocating the KV cache ran out of memory: what was measured as free at "
          "profiling was no longer there");
      return;
    }
    if (stage == "profile") {
      if (Multimodal()) {
        Set("profile", "multimodal_encoder",
            "the profile run's multimodal pass ran out of memory: vLLM profiles the "
            "encoder with the largest items --limit-mm-per-prompt allows");
      } else {
        Set("profile", "activation_peak",
            "the profile run ran out of memory: a forward pass over max_num_batched_tokens "
            "tokens does not fit next to the weights");
      }
      return;
    }
    if (stage == "load") {
      Load();
      return;
    }
    if (stage == "startup") {
      Set("startup", "other_process",
          "start-up ran out of memory before loading: something else holds memory on the GPU");
      return;
    }
    // Runtime.
    if (requested && reserved_free && *requested > 0 &&
        *reserved_free >= std::max(*requested, 512.0 * 1048576)) {
      Set("runtime", "fragmentation",
          "a runtime allocation failed although PyTorch held more reserved-but-unallocated "
          "memory than it asked for: fragmentation of the caching allocator");
      return;
    }
    if (f_.has("static_cache")) {
      Set("runtime", "static_cache",
          "generation with a static cache reserves the whole max length for every sequence "
          "up front");
      return;
    }
    if (Multimodal()) {
      Set("runtime", "multimodal_encoder",
          "a request's images ran the vision encoder out of memory (the encoder's "
          "activations grow with the image's pixels); not the KV cache, which was "
          "allocated at start-up");
      return;
    }
    Set("runtime", "activation_peak",
        "a runtime allocation for activations failed (a long prompt or a large batch); "
        "not the KV cache, which a paged engine allocates at start-up");
  }

  bool LlamaCpp() {
    if (f_.has("ggml_kv_fail")) {
      Set("kv_cache", "kv_too_long_context",
          "llama.cpp could not allocate the KV cache for the context (-c / n_ctx)");
      return true;
    }
    if (f_.has("ggml_compute_fail") || f_.has("ggml_reserve_fail")) {
      if (f_.has("image")) {
        Set("runtime", "multimodal_encoder",
            "encoding an image (mtmd/clip) needed a compute buffer that does not fit");
        return true;
      }
      const LogEvent* c =
          f_.first.count("ggml_compute_fail") ? f_.first.at("ggml_compute_fail") : nullptr;
      const bool decode =
          c && c->values.count("during_decode") && c->values.at("during_decode") > 0;
      if (decode) {
        Set("runtime", "compute_buffer",
            "llama.cpp could not grow a compute buffer while decoding");
      } else {
        Set("profile", "compute_buffer",
            "llama.cpp could not reserve its compute buffers when creating the context "
            "(the worst-case graph for n_batch/n_ubatch)");
      }
      return true;
    }
    if (f_.has("ggml_load_fail") || f_.has("ggml_alloc_fail")) {
      if (f_.has("image")) {
        Set("runtime", "multimodal_encoder",
            "encoding an image (mtmd/clip) needed a buffer that does not fit");
        return true;
      }
      Set("load", "weights_too_large",
          "llama.cpp could not allocate the model's weight buffer on the GPU: the layers "
          "offloaded to it (-ngl) do not fit");
      return true;
    }
    return false;
  }

  void Load() {
    const double total = Total();
    const int64_t tp = Tp();
    if (f_.has("transformers_backend")) {
      if (tp > 1) {
        Set("load", "unsharded_slice",
            fmt::format("vLLM fell back to the Transformers backend, which did not shard this "
                        "model across the {} tensor-parallel ranks as the native "
                        "implementation does",
                        tp));
      } else {
        Set("load", "fp16_fallback",
            "vLLM fell back to the Transformers backend and loaded part of the quantized "
            "checkpoint unquantized: more memory than the 4-bit weights should take");
      }
      return;
    }
    if (ctx_.model && ModelLoadRules()) return;
    // A model name that states its size: 16-bit weights per rank against the card.
    const double params = ParamsFromName(f_.model_path);
    if (params > 0 && total > 0 && !QuantizedName(f_.model_path) &&
        params * 2 / static_cast<double>(tp) > total * 0.95) {
      d_.numbers["weights_estimate_bytes"] = params * 2 / static_cast<double>(tp);
      Set("load", "weights_too_large",
          fmt::format("the model's name says {:.0f}B parameters: about {} of 16-bit weights "
                      "per GPU at tensor parallel {}, more than the card's {}",
                      params / 1e9, Gib(params * 2 / static_cast<double>(tp)), tp, Gib(total)));
      return;
    }
    if (OtherProcesses()) return;
    Set("load", "weights_too_large",
        "loading the weights ran out of memory: the weights (and their load-time "
        "copies) do not fit on each GPU");
  }

  bool OtherProcesses() {
    auto listed = f_.get("listed_process_bytes");
    auto mine = f_.get("process_bytes");
    const double total = Total();
    if (listed && mine && total > 0 && *listed - *mine > 0.25 * total) {
      d_.numbers["other_process_bytes"] = *listed - *mine;
      Set(d_.stage.empty() ? "load" : d_.stage.c_str(), "other_process",
          fmt::format("other processes hold {} of the GPU's {}", Gib(*listed - *mine), Gib(total)));
      return true;
    }
    return false;
  }

  // With the model: does the failed allocation match a dequantized (16-bit) module, or the
  // whole tensor where a tensor-parallel shard was expected; do the weights fit at all.
  bool ModelLoadRules() {
    const Inventory& m = *ctx_.model;
    const int64_t tp = Tp();
    const auto requested = f_.get("requested_bytes");
    const bool quantized = m.quantization.method != "none";
    if (requested && *requested > 0 && quantized) {
      std::map<std::string, uint64_t> by_group;  // 16-bit bytes of fused modules and expert stacks
      std::vector<std::pair<std::string, uint64_t>> singles;
      for (const TensorEntry& t : m.tensors) {
        if (!t.quantized || t.part != Part::kWeight) continue;
        const uint64_t b16 = t.parameters * 2;
        singles.push_back({t.module, b16});
        if (t.layer >= 0)
          by_group[fmt::format("layer {} {}", t.layer, ComponentName(t.component))] += b16;
      }
      auto near = [&](double c) {
        return c > 0 && std::abs(*requested - c) <= std::max(2.0 * 1048576, 0.02 * c);
      };
      for (const auto& [name, b] : singles) {
        for (int64_t shard : {int64_t{1}, tp}) {
          if (near(static_cast<double>(b) / static_cast<double>(shard))) {
            d_.numbers["dequantized_bytes"] = static_cast<double>(b) / static_cast<double>(shard);
            Set("load", "dequantized_copy",
                fmt::format("the failed allocation ({}) is the 16-bit size of {}{}: the "
                            "quantized weights were dequantized on the GPU while loading",
                            Gib(*requested), name,
                            shard > 1 ? fmt::format(" / TP {}", shard) : ""));
            return true;
          }
        }
      }
      for (const auto& [name, b] : by_group) {
        for (int64_t shard : {int64_t{1}, tp}) {
          if (near(static_cast<double>(b) / static_cast<double>(shard))) {
            d_.numbers["dequantized_bytes"] = static_cast<double>(b) / static_cast<double>(shard);
            Set("load", "dequantized_copy",
                fmt::format("the failed allocation ({}) is the 16-bit size of {} ({}): the "
                            "quantized weights were dequantized on the GPU while loading",
                            Gib(*requested), name,
                            shard > 1 ? fmt::format("/ TP {}", shard) : "whole"));
            return true;
          }
        }
      }
    }
    // Unsharded: the allocation is a whole tensor where TP > 1 expects a shard.
    if (requested && *requested > 0 && tp > 1) {
      for (const TensorEntry& t : m.tensors) {
        const double whole = static_cast<double>(t.info.bytes());
        if (whole > 64 * 1048576.0 && std::abs(*requested - whole) <= 0.02 * whole) {
          Set("load", "unsharded_slice",
              fmt::format("the failed allocation ({}) is the whole of {} although TP {} should "
                          "give each rank 1/{} of it",
                          Gib(*requested), t.info.name, tp, tp));
          return true;
        }
      }
    }
    // Weights per rank against the card.
    const double total = Total();
    const double per_rank = static_cast<double>(m.total_bytes) / static_cast<double>(tp);
    if (total > 0 && per_rank > 0.95 * total) {
      d_.numbers["weights_estimate_bytes"] = per_rank;
      Set("load", "weights_too_large",
          fmt::format("{} of weights per GPU at tensor parallel {} on a {} card", Gib(per_rank), tp,
                      Gib(total)));
      return true;
    }
    if (quantized) {
      const auto allocated = f_.get("allocated_bytes");
      if (allocated && *allocated > 1.3 * per_rank) {
        Set("load", "fp16_fallback",
            fmt::format("{} allocated while loading a {}-bit checkpoint of {} per GPU: layers "
                        "were materialised unquantized",
                        Gib(*allocated), m.quantization.bits, Gib(per_rank)));
        return true;
      }
    }
    return false;
  }

  void Derive() {
    // 0.6.4's one-line profile: the activation peak is the torch peak less the weights.
    if (!f_.get("activation_peak_bytes") && f_.get("peak_torch_bytes") && f_.get("weights_bytes")) {
      f_.v["activation_peak_bytes"] = *f_.get("peak_torch_bytes") - *f_.get("weights_bytes");
    }
  }

  void Numbers() {
    static const char* kKeys[] = {"requested_bytes",
                                  "total_bytes",
                                  "free_bytes",
                                  "allocated_bytes",
                                  "reserved_unallocated_bytes",
                                  "process_bytes",
                                  "weights_bytes",
                                  "activation_peak_bytes",
                                  "non_torch_bytes",
                                  "kv_cache_bytes",
                                  "kv_cache_tokens",
                                  "kv_needed_bytes",
                                  "max_model_len",
                                  "estimated_max_model_len",
                                  "max_concurrency",
                                  "gpu_memory_utilization",
                                  "budget_bytes",
                                  "gpu_blocks",
                                  "max_num_seqs",
                                  "cudagraph_bytes",
                                  "peak_torch_bytes",
                                  "consumed_bytes",
                                  "prompt_tokens",
                                  "profiled_tokens",
                                  "tensor_parallel_size",
                                  "listed_process_bytes",
                                  "compute_bytes"};
    for (const char* k : kKeys) {
      if (auto x = f_.get(k)) d_.numbers[k] = *x;
    }
    if (!f_.ranks.empty()) d_.numbers["ranks_seen"] = static_cast<double>(f_.ranks.size());
  }

  void Fix(std::string change, std::string effect) {
    d_.fixes.push_back({std::move(change), std::move(effect)});
  }

  void Fixes() {
    const double total = Total();
    const auto gmu = f_.get("gpu_memory_utilization");
    const auto kv = f_.get("kv_cache_bytes");
    const auto len = f_.get("max_model_len");
    const std::string& c = d_.cause;
    if (c == "kv_too_long_context") {
      double est = f_.get("estimated_max_model_len").value_or(0);
      if (est <= 0) {
        if (auto t = f_.get("kv_cache_tokens")) est = *t;
        else if (auto b = f_.get("gpu_blocks")) est = *b * 16;
      }
      if (f_.engine == "llama.cpp") {
        Fix(len ? fmt::format("-c {}",
                              std::max<int64_t>(4096, static_cast<int64_t>(*len / 4) / 1024 * 1024))
                : "-c 32768",
            "a smaller context: the KV cache grows linearly with n_ctx (per slot with -np)");
        Fix("-ctk q8_0 -ctv q8_0 (with -fa)",
            "a quantized KV cache: about half the bytes per token");
        return;
      }
      if (est > 0) {
        const int64_t fit =
            est >= 2048 ? static_cast<int64_t>(est) / 1024 * 1024 : static_cast<int64_t>(est);
        Fix(fmt::format("--max-model-len {}", fit),
            kv ? fmt::format("fits: {} of KV cache holds {} tokens", Gib(*kv),
                             core::GroupDigits(static_cast<uint64_t>(est)))
               : fmt::format("fits: the KV cache holds {} tokens",
                             core::GroupDigits(static_cast<uint64_t>(est))));
        Fix("--kv-cache-dtype fp8",
            fmt::format("halves the KV bytes per token: about {} tokens in the same memory",
                        core::GroupDigits(static_cast<uint64_t>(2 * est))));
      }
      if (auto need = f_.get("kv_needed_bytes"); need && kv && gmu && total > 0) {
        const double u = std::ceil((*gmu + (*need - *kv) / total) * 100) / 100;
        if (u <= 0.98) {
          Fix(fmt::format("--gpu-memory-utilization {:.2f}", u),
              fmt::format("adds {} to the budget: the {} a full-length request needs fit",
                          Gib(*need - *kv), Gib(*need)));
        }
      }
      Fix("--tensor-parallel-size 2 (on two GPUs)",
          "splits the KV heads: each GPU holds half of every token's KV");
    } else if (c == "kv_no_memory") {
      const auto w = f_.get("weights_bytes");
      const auto act = f_.get("activation_peak_bytes");
      const auto nt = f_.get("non_torch_bytes");
      if (w && act && total > 0) {
        const double used = *w + *act + nt.value_or(0);
        const double u = std::ceil((used + kGiB) / total * 100) / 100;
        if (u <= 0.97) {
          Fix(fmt::format("--gpu-memory-utilization {:.2f}", u),
              fmt::format("weights {} + activation {} + non-torch {} = {} of {}: this leaves about "
                          "1 GiB for the KV "
                          "cache",
                          Gib(*w), Gib(*act), Gib(nt.value_or(0)), Gib(used), Gib(total)));
        } else {
          Fix("a smaller checkpoint (4-bit AWQ/GPTQ) or --tensor-parallel-size 2",
              fmt::format("weights {} + activation {} leave no room in {}", Gib(*w), Gib(*act),
                          Gib(total)));
        }
        if (*act > 0.5 * kGiB) {
          Fix("--max-num-batched-tokens 2048 (or lower --max-model-len where chunked prefill is "
              "off)",
              fmt::format("the profiled activation peak ({}) scales with the tokens of one step",
                          Gib(*act)));
        }
      } else if (f_.engine == "sglang") {
        Fix("--mem-fraction-static 0.9 (or higher), --context-length lower",
            "SGLang sizes its KV pool from mem-fraction-static x total minus the weights");
      } else {
        Fix("--gpu-memory-utilization 0.95",
            "a larger budget for weights, activations and the KV cache");
        Fix("--max-model-len / --max-num-batched-tokens lower", "smaller profiled activations");
      }
    } else if (c == "sampler_warmup") {
      const double seqs = f_.get("max_num_seqs").value_or(256);
      Fix(fmt::format("--max-num-seqs {}", std::max<int64_t>(8, static_cast<int64_t>(seqs / 4))),
          fmt::format("the sampler warms up {:.0f} requests' logits at once; a quarter of them "
                      "needs a quarter of the "
                      "memory",
                      seqs));
      if (gmu) Fix(fmt::format("--gpu-memory-utilization {:.2f}", std::max(0.5, *gmu - 0.05)),
                   "more headroom outside the budget for the warm-up");
    } else if (c == "cudagraph_capture") {
      Fix("--enforce-eager",
          "no CUDA graphs: the capture's pool is not allocated (slower decoding)");
      if (gmu) {
        Fix(fmt::format("--gpu-memory-utilization {:.2f}", std::max(0.5, *gmu - 0.05)),
            fmt::format("leaves {} more outside the budget for the graph pool",
                        total > 0 ? Gib(0.05 * total) : "5%"));
      }
      Fix("--max-num-seqs 64 (or -O '{\"cudagraph_capture_sizes\": [1, 2, 4, 8, 16, 32, 64]}')",
          "fewer and smaller captured batch sizes");
    } else if (c == "other_process") {
      const auto free = f_.get("free_bytes");
      if (free && total > 0) {
        const double u = std::floor((*free / total - 0.01) * 100) / 100;
        if (u >= 0.3)
          Fix(fmt::format("--gpu-memory-utilization {:.2f}", u),
              fmt::format("what is free ({} of {}) minus a margin", Gib(*free), Gib(total)));
      }
      Fix("stop the other processes on the GPU (nvidia-smi lists them), or use another GPU",
          d_.numbers.count("other_process_bytes")
              ? fmt::format("they hold {}", Gib(d_.numbers["other_process_bytes"]))
              : "vLLM's budget is a fraction of the total, not of what is free");
    } else if (c == "fragmentation") {
      Fix("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
          fmt::format("{} was reserved but unallocated, more than the {} requested",
                      Gib(f_.get("reserved_unallocated_bytes").value_or(0)),
                      Gib(f_.get("requested_bytes").value_or(0))));
      if (gmu)
        Fix(fmt::format("--gpu-memory-utilization {:.2f}", std::max(0.5, *gmu - 0.03)),
            "more headroom for runtime peaks");
    } else if (c == "multimodal_encoder") {
      Fix("--mm-processor-kwargs '{\"max_pixels\": 1003520}'",
          "caps each image at 1280 visual tokens (Qwen-VL: 28 x 28 pixels a token); the encoder's "
          "activations grow with pixels");
      Fix("--limit-mm-per-prompt '{\"image\": 1}'",
          "fewer images a prompt: the encoder budget and the profile shrink");
      if (d_.stage == "runtime")
        Fix("--gpu-memory-utilization lower by the failed allocation",
            fmt::format("the encoder needed {} outside the KV pool",
                        Gib(f_.get("requested_bytes").value_or(0))));
    } else if (c == "activation_peak") {
      if (f_.engine == "sglang") {
        Fix("--chunked-prefill-size 4096 --mem-fraction-static lower by 0.05",
            "smaller prefill chunks, more headroom for activations");
      } else if (f_.engine == "transformers" || f_.engine == "pytorch") {
        Fix("a smaller batch or shorter inputs (max_new_tokens, truncation)",
            "activations and logits grow with batch x length");
      } else {
        Fix("--max-num-batched-tokens 2048",
            "a smaller step: activations scale with the tokens of one forward pass");
        if (gmu)
          Fix(fmt::format("--gpu-memory-utilization {:.2f}", std::max(0.5, *gmu - 0.05)),
              "more headroom for runtime peaks");
      }
    } else if (c == "weights_too_large") {
      if (f_.engine == "llama.cpp") {
        Fix("--fit on (or -ngl lower / --tensor-split)",
            "keeps the layers that do not fit in host memory");
      } else {
        const double w = d_.numbers.count("weights_estimate_bytes")
                             ? d_.numbers["weights_estimate_bytes"] * static_cast<double>(Tp())
                             : 0;
        if (w > 0 && total > 0) {
          int64_t n = 1;
          while (n < 64 && w / static_cast<double>(n) > 0.8 * total) n *= 2;
          Fix(fmt::format("--tensor-parallel-size {}", n),
              fmt::format("{} of weights over {} GPUs: {} each", Gib(w), n,
                          Gib(w / static_cast<double>(n))));
        } else {
          Fix("--tensor-parallel-size 2 (or more GPUs)", "the weights are split across the GPUs");
        }
        Fix("a 4-bit checkpoint (AWQ/GPTQ) or FP8", "a quarter or half of the 16-bit weight bytes");
      }
    } else if (c == "dequantized_copy") {
      Fix("a kernel path that keeps the weights packed (--quantization awq_marlin / gptq_marlin on "
          "compute capability "
          ">= 7.5) or a vLLM release that repacks layer by layer",
          fmt::format("the 16-bit copy ({}) is what ran out",
                      Gib(d_.numbers["dequantized_bytes"])));
      Fix("--tensor-parallel-size 2", "each rank dequantizes half of every sharded module");
    } else if (c == "unsharded_slice") {
      Fix("a vLLM release with native support for this model (not the Transformers backend)",
          "native implementations shard every weight across the tensor-parallel ranks");
    } else if (c == "fp16_fallback") {
      Fix("a vLLM release with native support for this architecture",
          "the Transformers fallback loaded quantized layers in 16 bits");
      Fix("vramfit inspect MODEL", "checks which linears the checkpoint stores unquantized");
    } else if (c == "static_cache") {
      Fix("cache_implementation=\"dynamic\" (or a smaller max_cache_len)",
          "a static cache reserves batch x max length of KV up front");
    } else if (c == "kv_too_many_sequences") {
      Fix("--max-running-requests lower (or --mem-fraction-static higher)",
          "fewer sequences share the token pool");
    } else if (c == "compute_buffer") {
      Fix("-ub 256 (a smaller micro-batch) and -b 512", "the compute buffer grows with n_ubatch");
      Fix("-c lower or --no-kv-offload", "leaves more device memory for compute buffers");
    }
  }

  void Evidence() {
    std::set<uint64_t> seen;
    auto add = [&](const LogEvent* e) {
      if (!e || seen.count(e->line) || d_.evidence.size() >= 6) return;
      seen.insert(e->line);
      d_.evidence.push_back(fmt::format("line {}: {}", e->line, e->text));
    };
    for (const char* k : {"max_len_error",
                          "startup_error",
                          "sampler_oom",
                          "no_kv_memory",
                          "sglang_not_enough",
                          "sglang_profiled",
                          "sglang_token_oom",
                          "torch_oom",
                          "cuda_oom",
                          "ggml_alloc_fail",
                          "ggml_kv_fail",
                          "ggml_compute_fail",
                          "ggml_load_fail",
                          "profile_breakdown",
                          "kv_available",
                          "gpu_blocks",
                          "transformers_backend",
                          "graph_begin",
                          "serving",
                          "image",
                          "static_cache"}) {
      if (f_.has(k)) add(f_.first.at(k));
    }
    const std::string stage_frames = StageFromFrames(f_);
    if (!stage_frames.empty()) {
      for (const LogEvent* fr : f_.frames) {
        if (StageFromFrames(Facts{{}, {}, {fr}, {}, {}, 0, {}}) == stage_frames) {
          add(fr);
          break;
        }
      }
    }
  }

  // With the model and the GPU: the vLLM plan of the settings the log shows, each reported
  // number against it, then a plan calibrated on the measured activation and non-torch memory,
  // whose advice replaces the generic fixes.
  void Calibrate() {
    VllmSettings s;
    s.tensor_parallel_size = Tp();
    if (s.tensor_parallel_size > 1024 || f_.get("max_model_len").value_or(0) > (1 << 26)) {
      d_.notes.push_back(
          "plan not rebuilt: the log's tensor-parallel size or length is out of range");
      return;
    }
    s.v0_engine = f_.has("vllm_v0") && !f_.has("vllm_v1");
    if (s.v0_engine)
      d_.notes.push_back("the log's lines are the V0 engine's: planned with V0 rules");
    if (auto l = f_.get("max_model_len"); l && *l > 0) s.max_model_len = static_cast<int64_t>(*l);
    if (auto u = f_.get("gpu_memory_utilization"); u && *u > 0 && *u <= 1)
      s.gpu_memory_utilization = *u;
    s.allow_long_max_model_len = true;
    GpuSpec gpu = *ctx_.gpu;
    if (auto t = f_.get("total_bytes"); t && *t > 0) gpu.total_bytes = static_cast<uint64_t>(*t);
    auto plan = PlanVllm(*ctx_.model, gpu, s);
    if (!plan.ok()) {
      d_.notes.push_back("plan not rebuilt: " + plan.status().message());
      return;
    }
    const GpuPlan& g = plan->gpus[0];
    auto compare = [&](const char* what, const char* key, double predicted) {
      if (auto r = f_.get(key)) {
        d_.notes.push_back(fmt::format("{}: log {} / plan {} ({:+.1f}%)", what, Gib(*r),
                                       Gib(predicted),
                                       *r != 0 ? 100.0 * (predicted - *r) / std::abs(*r) : 0.0));
      }
    };
    compare("weights per GPU", "weights_bytes", static_cast<double>(g.weights_bytes));
    compare("activation peak", "activation_peak_bytes",
            static_cast<double>(g.activation_peak_bytes));
    compare("non-torch memory", "non_torch_bytes", static_cast<double>(g.non_torch_bytes));
    compare("KV cache memory", "kv_cache_bytes", static_cast<double>(g.kv_cache_bytes));
    d_.numbers["plan_weights_bytes"] = static_cast<double>(g.weights_bytes);
    d_.numbers["plan_kv_cache_bytes"] = static_cast<double>(g.kv_cache_bytes);
    // Calibrated: the measured terms replace the estimates.
    VllmSettings c = s;
    if (auto a = f_.get("activation_peak_bytes"); a && *a > 0)
      c.measured_activation_bytes = static_cast<uint64_t>(*a);
    if (auto n = f_.get("non_torch_bytes"); n && *n > 0)
      c.measured_non_torch_bytes = static_cast<uint64_t>(*n);
    if (c.measured_activation_bytes == 0 && c.measured_non_torch_bytes == 0) return;
    auto calibrated = PlanVllm(*ctx_.model, gpu, c);
    if (!calibrated.ok()) return;
    d_.notes.push_back(fmt::format(
        "calibrated plan (measured activation and non-torch memory): KV cache {}, {}",
        Gib(static_cast<double>(calibrated->gpus[0].kv_cache_bytes)),
        calibrated->fits ? "fits"
                         : std::string("fails at ") + StageName(*calibrated->failure_stage)));
    if (!calibrated->fits) {
      const Engine& engine = vllm::VllmEngine();
      auto model = engine.prepare(*ctx_.model);
      if (!model.ok()) return;
      const auto advice = Advise(engine, **model, gpu, ToEngineSettings(c), *calibrated);
      if (!advice.empty()) {
        d_.fixes.clear();
        for (const Advice& a : advice)
          d_.fixes.push_back({a.change, a.effect + " (" + a.cost + ")"});
      }
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
