// SGLang's log reader (readers/reader.h): its lines as model_runner and the scheduler print
// them (weights loaded with the memory left, the KV pool's tokens, the profiled-value and
// not-enough-memory errors, the token pool running out, CUDA graph capture), the phases they
// mark, SGLang's words for its token pool, and its flags as fixes.
#include "doctor/readers/reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "doctor/load_copies.h"

namespace vramfit::doctor {

// Lists of literals are written "..."sv: their lengths are known when compiled (a list of
// pointers is measured with strlen on every pass of a loop, on every line of a log).
using std::string_view_literals::operator""sv;
namespace {

constexpr char kEngine[] = "sglang";

// DeepGEMM's JIT warm-up on the stack (readers/pytorch.cc TagPath: SGLang's
// deep_gemm_wrapper/compile_utils.py).
bool DeepGemmWarmupFrames(const Facts& f) {
  return std::any_of(f.frames.begin(), f.frames.end(), [](const LogEvent* fr) {
    return ValueOf(fr, Num::kPathIsKernelWarmup).value_or(0) > 0;
  });
}

// The server arguments the rebuilt plan needs, as the ServerArgs(...) line prints them
// (" tp_size=2, ", "kv_cache_dtype='fp8_e5m2'"; None: not set) or as a launch line gives them.
struct ServerArg {
  const char* printed;  // " context_length=": a space before, so "attn_tp_size=" is not it
  const char* flag;     // "--context-length " (or "=")
  Num key;
};
constexpr ServerArg kServerArgs[] = {
    {" tp_size=", "--tp-size", Num::kTensorParallelSize},
    {" tp_size=", "--tp", Num::kTensorParallelSize},
    {" context_length=", "--context-length", Num::kContextLength},
    {" chunked_prefill_size=", "--chunked-prefill-size", Num::kChunkedPrefillSize},
    {" cuda_graph_max_bs=", "--cuda-graph-max-bs", Num::kCudaGraphMaxBs},
    {" max_total_tokens=", "--max-total-tokens", Num::kMaxTotalTokens},
};

// The word after `key` up to a quote, comma, space or parenthesis.
std::string_view WordAfter(std::string_view s, std::string_view key) {
  const size_t at = s.find(key);
  if (at == std::string_view::npos) return {};
  size_t b = at + key.size();
  while (b < s.size() && (s[b] == '\'' || s[b] == '"' || s[b] == ' ' || s[b] == '=')) ++b;
  size_t e = b;
  while (e < s.size() && s[e] != '\'' && s[e] != '"' && s[e] != ',' && s[e] != ' ' &&
         s[e] != ')') {
    ++e;
  }
  return s.substr(b, e - b);
}

void ServerArgs(std::string_view s, LogEvent* e) {
  for (const ServerArg& a : kServerArgs) {
    if (e->values.count(a.key)) continue;
    std::optional<double> v = NumberAfter(s, a.printed);
    if (!v) {
      // "--tp 2" or "--tp=2", not "--tp-size" read as "--tp".
      const std::string flag = a.flag;
      for (const char* sep : {" ", "="}) {
        const size_t at = s.find(flag + sep);
        if (at != std::string_view::npos) v = NumberAt(s, at + flag.size());
        if (v) break;
      }
    }
    if (v && *v > 0) Set(*e, a.key, v);
  }
  std::string_view kv = WordAfter(s, "kv_cache_dtype=");
  if (kv.empty()) kv = WordAfter(s, "--kv-cache-dtype");
  if (kv.rfind("fp8", 0) == 0) {
    e->values[Num::kKvCacheDtypeBits] = 8;
  } else if (kv == "bf16" || kv == "bfloat16" || kv == "fp16" || kv == "float16") {
    e->values[Num::kKvCacheDtypeBits] = 16;
  }
}

// The token pool's other lines (the "Messages read" table of docs/doctor.md, SGLang):
// - the scheduler's retraction when the pool cannot hold the running batch's next tokens
//   (scheduler.py update_running_batch): "Decode out of memory happened. #retracted_reqs: 1,
//   #new_token_ratio: 0.80 -> 0.91" (0.2-0.3, read in Match as "Decode out of memory"), renamed
//   "KV cache pool is full. Retract requests. #retracted_reqs: ..." (0.4-0.5);
// - the allocator's message after its first line (schedule_batch.py alloc_token_slots 0.3-0.4,
//   mem_cache/common.py alloc_token_slots 0.5): "Try to allocate 8192 tokens." (read: the tokens
//   asked for), then the free and evictable tokens ("Avaliable tokens: 3200", 0.3-0.4, so spelled;
//   "Available tokens: 3200 (available_size=3200 + evictable_size=0)", "Available full tokens:
//   N (...)" for a hybrid pool, 0.5; not read: the request alone sizes the fix). A decode step
//   asks one token per running request (more with speculative decoding), a prefill the batch's
//   new tokens: Num::kDuringDecode says which.
void MatchTokenPool(const Line& line) {
  const LineView s = line.view();
  // A retraction is the scheduler coping (the requests are queued again): the event's text
  // says so, and an allocator's out-of-memory elsewhere in the log is the failure (rules.cc).
  if (!Whole(line, "KV cache pool is full. Retract requests").empty() ||
      Has(s, "Decode out of memory happened")) {
    auto& e = line.Emit(EventKind::kSglangTokenOom, kEngine);
    e.values[Num::kDuringDecode] = 1;
    e.text = "retraction";
  } else if (Has(s, "Decode out of memory")) {
    line.Emit(EventKind::kSglangTokenOom, kEngine).values[Num::kDuringDecode] = 1;
  }
  if (Has(s, "Prefill out of memory")) {
    line.Emit(EventKind::kSglangTokenOom, kEngine).values[Num::kDuringDecode] = 0;
  }
  // Its first releases' lower-case form (managers/router/model_rpc.py and tp_worker.py
  // forward_decode_batch, 0.2.0-0.2.13): "decode out of memory happened, #retracted_reqs: N".
  if (Has(s, "decode out of memory happened")) {
    auto& e = line.Emit(EventKind::kSglangTokenOom, kEngine);
    e.values[Num::kDuringDecode] = 1;
    e.text = "retraction";
  }
  // The prefill/decode-disaggregated decode server pre-allocating a transferred request's KV
  // (disaggregation/decode.py DecodePreallocQueue._pre_alloc, 0.4.7+): "KV cache is full! There
  // is a bug in memory estimation." (its token pool) and "req_pool_indices is full! ..." (its
  // request slots).
  if (Has(s, "KV cache is full! There is a bug in memory estimation")) {
    line.Emit(EventKind::kSglangTokenOom, kEngine).values[Num::kDuringDecode] = 1;
  }
  if (Has(s, "req_pool_indices is full!")) {
    line.Emit(EventKind::kSglangTokenOom, kEngine).text = "request slots";
  }
  // A hybrid model's state slots taken by the running requests (mem_cache/memory_pool.py
  // HybridReqToTokenPool.alloc, 0.5.2-0.5.6: "Not enough space for mamba cache, try to increase
  // --max-mamba-cache-size."; later releases raise from alloc_req_slots, read by its frame).
  if (Has(s, "Not enough space for mamba cache")) {
    line.Emit(EventKind::kSglangTokenOom, kEngine).text = "mamba slots";
  }
  if (Has(s, "Try to allocate ") && Has(s, " tokens.")) {
    auto& e = line.Emit(EventKind::kSglangTokenOom, kEngine);
    Set(e, Num::kPrefillTokens, NumberAfter(s, "Try to allocate"));
  }
}

// The scheduler's summary once the worker is built (scheduler.py Scheduler.__init__, after the
// model runner loaded the weights, sized the pool and captured the graphs):
// "max_total_num_tokens=46611, chunked_prefill_size=2048, max_prefill_tokens=16384,
// max_running_requests=..., context_len=..., available_gpu_mem=0.53 GB" (0.3-0.5; 0.1-0.2
// "max_total_num_tokens=..., max_prefill_tokens=..., context_len=..."): capture is over.
// The capture lines of every runner (model_runner.py init_cuda_graphs / init_device_graphs,
// eagle_worker.py, piecewise runners): "Capture cuda graph begin. ... avail mem=X GB" (0.4-0.5),
// "Capture CUDA graph begin" (0.3), "Capture draft cuda graph begin", "Capture draft extend cuda
// graph begin" (EAGLE, 0.4-0.5), "Capture piecewise CUDA graph begin. avail mem=X GB" and its
// "Capture cuda graph num tokens [4, 8, ...]" (piecewise_cuda_graph_runner.py, 0.5), "Capture
// target decode CUDA graph end. elapsed=16.40 s" (after 0.5.10): " graph begin" / " graph end"
// after "Capture ".
void MatchCaptureAndSummary(const Line& line) {
  const LineView s = line.view();
  if (Has(s, "Capture ") && (Has(s, " graph begin") || Has(s, " Graph begin"))) {
    line.Emit(EventKind::kGraphBegin, kEngine);
  }
  if (Has(s, "Capture ") && (Has(s, " graph end") || Has(s, " Graph end"))) {
    line.Emit(EventKind::kGraphDone, kEngine);
  }
  if (Has(s, "max_total_num_tokens=") && Has(s, "context_len=")) {
    auto& e = line.Emit(EventKind::kGraphDone, kEngine);
    Set(e, Num::kKvCacheTokens, NumberAfter(s, "max_total_num_tokens="));
  }
}

void Match(const Line& line) {
  const LineView s = line.view();
  // torch_memory_saver (SGLang's --enable-memory-saver, RL trainers' colocation) failing to map
  // the memory back: "[torch_memory_saver.cpp] CUresult error: 2 (out of memory) ...
  // func=cu_mem_create"; the trainer's requests name the call ("Async request to
  // resume_memory_occupation timed out").
  if (Has(s, "torch_memory_saver") && Has(s, "out of memory")) {
    line.Emit(EventKind::kCudaOom, kEngine);
  }
  if (Has(s, "resume_memory_occupation")) {
    line.Emit(EventKind::kFrame, kEngine).text = "resume_memory_occupation";
  }
  if (const LineView w = WholeBoth(line, "Load weight end.", "avail mem="); !w.empty()) {
    auto& e = line.Emit(EventKind::kSglangWeights, kEngine);
    Set(e, Num::kFreeBytes, BytesAfter(w, "avail mem="));
    Set(e, Num::kWeightsBytes, BytesAfter(w, "mem usage="));
  }
  // memory_pool.py: "KV Cache is allocated. #tokens: N, K size: ..." (0.4.2+), "KV Cache is
  // allocated. K size: X GB, V size: Y GB." before it (0.4.1), and the sliding-window pool's
  // "SWAKVPool mem usage: X GB, swa size: ..., full size: ..." (0.4.9+): the pool is allocated.
  if (Has(s, "KV Cache is allocated.")) {
    if (Has(s, "#tokens:")) {
      MatchOneValue(line, kEngine,
                    {{"#tokens:", EventKind::kKvTokens, Num::kKvCacheTokens, false}});
    } else {
      line.Emit(EventKind::kKvTokens, kEngine);
    }
  }
  if (Has(s, "SWAKVPool mem usage:")) line.Emit(EventKind::kKvTokens, kEngine);
  if (Has(s, "is larger than the profiled value")) {
    MatchOneValue(
        line, kEngine,
        {{"the profiled value", EventKind::kSglangProfiled, Num::kProfiledTokens, false}});
  }
  // Also retold beside the fraction's name in its server-argument spelling
  // ("mem_fraction_static=0.05~0.60 all report `Not enough memory`").
  // A paste reflowed at a space may break it anywhere ("Not enough" + "memory. Please try"): the
  // previous line's part is read with this one's.
  if (const LineView n = Whole(line, "Not enough memory");
      !n.empty() && (Has(n, "mem-fraction-static") || Has(n, "mem_fraction_static"))) {
    auto& e = line.Emit(EventKind::kSglangNotEnough, kEngine);
    // Later releases add the fraction it ran with (pool_configurator.py MemoryPoolConfig
    // __post_init__: " Current value: mem_fraction_static=0.6").
    if (Has(n, "Current value: mem_fraction_static=")) {
      Set(e, Num::kMemFractionStatic, NumberAfter(n, "Current value: mem_fraction_static="));
    }
  }
  // The same check in 0.5.x (model_runner_kv_cache_mixin.py profile_max_num_token, rest_memory
  // <= 0): "ValueError: Loaded weights leave no GPU memory for the KV cache under
  // --mem-fraction-static=0.88. Raise --mem-fraction-static above 0.912 (minimum viable = 1 -
  // available/pre = 0.9113)."; a terminal or a paste often breaks it after "under", and the
  // event waits for the line that carries the fraction.
  if (const std::string_view w = Whole(line, "leave no GPU memory for the KV cache");
      !w.empty() && (Has(w, "--mem-fraction-static=") || w == line.joined)) {
    auto& e = line.Emit(EventKind::kSglangNotEnough, kEngine);
    Set(e, Num::kMemFractionStatic, NumberAfter(w, "--mem-fraction-static="));
    e.text = std::string(w);
  }
  // A hybrid model's state cache (its Mamba or linear-attention layers' per-request state) with
  // fewer slots than one request takes (model_runner_kv_cache_mixin.py, 2026: "RuntimeError:
  // Hybrid (mamba/linear-attention) state cache is too small to serve any requests.
  // max_mamba_cache_size=4, mamba_ratio=5, resulting max_num_reqs=0. Try: ..."): the slots the
  // fraction left, divided by the slots a request takes, serve none.
  if (const std::string_view w = Whole(line, "resulting max_num_reqs=");
      !w.empty() && Has(w, "mamba_ratio=")) {
    auto& e = line.Emit(EventKind::kSglangNotEnough, kEngine);
    Set(e, Num::kMambaBlocks, NumberAfter(w, "max_mamba_cache_size="));
    e.text = std::string(w);
  }
  // The worker's checks once the pool is sized (managers/tp_worker.py TpModelWorker.__init__,
  // 0.3-0.5): "Memory pool size is too small" (the longest request the pool allows, the pool's
  // tokens less one, is 5 tokens or fewer) and "max_running_request is zero" (the pool holds
  // fewer than 2 tokens, 0.4.5+); a sliding-window pool smaller than one window (model_executor/
  // pool_configurator.py, 2026: "SWA pool (N tokens) cannot hold even one request"). Each is the
  // pool that the memory left after the weights sized, holding next to nothing.
  if (Has(s, "Memory pool size is too small") || Has(s, "max_running_request is zero") ||
      !Whole(line, "cannot hold even one request").empty()) {
    line.Emit(EventKind::kSglangNotEnough, kEngine);
  }
  // The pool configurator's other refusals as it sizes the pools from what the weights left
  // (model_executor/pool_configurator.py and model_runner_kv_cache_mixin.py, 0.5.13+): "Not enough
  // GPU memory for hybrid (mamba/linear-attention) state cache. Computed max_mamba_cache_size=0
  // ..."; "SWA pool cap (N tokens, X GiB) leaves no room for the full KV pool within the
  // available Y GiB" (0.5.14+); "int8 mamba checkpoint pool needs ~X GB but only Y GB HBM is
  // free" (0.5.14+). Each is the memory left for the cache too small for it.
  if (!Whole(line, "Not enough GPU memory for hybrid").empty() ||
      !Whole(line, "leaves no room for the full KV pool").empty() ||
      (!Whole(line, "mamba checkpoint pool needs").empty() &&
       !Whole(line, "HBM is free").empty())) {
    line.Emit(EventKind::kSglangNotEnough, kEngine);
  }
  // One request alone outgrew the token pool while decoding: every other request was retracted
  // and the last still did not fit (managers/schedule_batch.py retract_decode: "Failed to retract
  // any request. No space left for only one request." 0.4.7-0.5.6; from 0.5.7 the request is
  // aborted with "Out of memory even after retracting all other requests in the decode batch.
  // Aborting the last request." and logged "retract_decode: aborted last request RID due to
  // OOM"). A shorter request or a larger pool serves it; fewer requests cannot.
  if (Has(s, "No space left for only one request") ||
      !Whole(line, "Out of memory even after retracting all other requests").empty() ||
      (Has(s, "aborted last request") && Has(s, "due to OOM"))) {
    line.Emit(EventKind::kContextExceeded, kEngine).text = "retract_one";
  }
  // A request longer than the pool or the context allows, refused (managers/utils.py
  // validate_input_length, 0.4.1+: "Input length (N tokens) exceeds the maximum allowed length
  // (M tokens)", where M is the smaller of the context length and the token pool, less a few;
  // with --allow-auto-truncate, the warning "Request length is longer than the KV cache pool
  // size or the max context length. Truncated. len(req.origin_input_ids)=N,
  // max_req_input_len=M", 0.2.6+) or by the disaggregated servers (disaggregation/prefill.py and
  // decode.py: "Request RID exceeds the maximum number of tokens: N > M", M the pool's tokens).
  if (const std::string_view w = Whole(line, "exceeds the maximum allowed length ("); !w.empty()) {
    auto& e = line.Emit(EventKind::kContextExceeded, kEngine);
    Set(e, Num::kPromptTokens, NumberAfter(w, "Input length ("));
    Set(e, Num::kMaxModelLen, NumberAfter(w, "maximum allowed length ("));
    e.text = "input_length";
  }
  if (Has(s, "longer than the KV cache pool size or the max context length")) {
    auto& e = line.Emit(EventKind::kContextExceeded, kEngine);
    Set(e, Num::kPromptTokens, NumberAfter(s, "len(req.origin_input_ids)="));
    Set(e, Num::kMaxModelLen, NumberAfter(s, "max_req_input_len="));
    e.text = "input_length";
  }
  if (const std::string_view w = Whole(line, "exceeds the maximum number of tokens:"); !w.empty()) {
    auto& e = line.Emit(EventKind::kContextExceeded, kEngine);
    size_t end = 0;
    Set(e, Num::kPromptTokens, NumberAfter(w, "maximum number of tokens:", 0, &end));
    if (end) Set(e, Num::kKvCacheTokens, NumberAfter(w, ">", end));
    e.text = "pool_tokens";
  }
  // A scheduler process killed as the server started (entrypoints/engine.py
  // _scheduler_died_error, 0.5.10+: "Rank N scheduler died during initialization (exit code: -9).
  // If exit code is -9 (SIGKILL), a common cause is the OS OOM killer."): SIGKILL, the kernel's
  // OOM killer on host memory.
  if (const std::string_view w = Whole(line, "scheduler died during initialization (exit code:");
      !w.empty() && NumberAfter(w, "(exit code:") == -9.0) {
    line.Emit(EventKind::kHostOomKill, kEngine);
  }
  // HiCache's host pool smaller than the device pool (mem_cache/memory_pool_host.py
  // HostKVCache.__init__, 0.4.1-0.5: "The host memory should be larger than the device memory
  // with the current protocol"): --hicache-ratio (x the device pool) at 1 or below, or a
  // --hicache-size under the device pool.
  if (Has(s, "host memory should be larger than the device memory")) {
    line.Emit(EventKind::kHostBufferFail, kEngine).text = "hicache_ratio";
  }
  // cuda_graph_runner.py's "Capture cuda graph bs [1, 2, 4, ...]" and its progress bar,
  // "Capturing batches (bs=160 avail_mem=1.72 GB)" (0.4-0.5).
  // (0.4.4's bar: "Capturing batches (avail_mem=8.93 GB)".)
  if (Has(s, "Capture cuda graph bs") || Has(s, "Capturing batches (bs=") ||
      Has(s, "Capturing batches (avail_mem=") ||
      Has(s, "Capture cuda graph num tokens")) {
    line.Emit(EventKind::kGraphBegin, kEngine);
  }
  MatchCaptureAndSummary(line);
  if (Has(s, "Out of memory. Try to lower your batch size")) {
    line.Emit(EventKind::kSglangTokenOom, kEngine);
  }
  MatchTokenPool(line);
  // The request-slot pool: "alloc_req_slots runs out of memory. Please set a smaller number for
  // `--max-running-requests`" (common.py alloc_req_slots, schedule_batch.py in 0.4).
  if (Has(s, "alloc_req_slots runs out of memory")) {
    line.Emit(EventKind::kSglangTokenOom, kEngine);
  }
  // Its earlier forms (managers/router/infer_batch.py Batch.prepare_for_extend, 0.1.x):
  // req_to_token_pool.alloc(bs) returns None when fewer request slots are free than the batch
  // has sequences; the first releases used the result at once ("req_pool_indices_cpu =
  // req_pool_indices.cpu().numpy()", failing with "AttributeError: 'NoneType' object has no
  // attribute 'cpu'"), later ones raise "Out of memory. Please set a smaller number for
  // `--max-running-requests`." there. Either is the request pool exhausted by the batch.
  const bool none_slots = Has(s, "'NoneType' object has no attribute 'cpu'") &&
                          Has(line.joined, "req_pool_indices.cpu()");
  if (none_slots || (Has(s, "Out of memory. Please set a smaller number for") &&
                     Has(s, "max-running-requests"))) {
    line.Emit(EventKind::kSglangTokenOom, kEngine).text = "request slots";
  }
  // HiCache's host KV pool refusing a size the host cannot hold (mem_cache/memory_pool_host.py
  // HostKVCache.__init__, 0.4.6-0.5): "Not enough host memory available. Requesting X GB but only
  // have Y GB free. Please reduce the size of the hierarchical cache." (decimal GB; "... of the
  // KVStore." in forks). System memory, before any allocation.
  // Later releases check the size with a reserve and the cgroup's limit (validate_hicache_memory:
  // "Not enough host memory for hierarchical KV cache. Requesting X GB plus R GB reserve, but only
  // Y GB is available from <source>.").
  // The DeepSeek pools' own host checks say which pool (2026: "Not enough host memory for DSA
  // indexer hierarchical cache. Requesting X GB but only have Y GB free.", "... for V4 paged
  // pool c4. Requesting ...").
  LineView w = Whole(line, "Not enough host memory available. Requesting");
  if (w.empty()) w = Whole(line, "Not enough host memory for DSA indexer");
  if (w.empty()) w = Whole(line, "Not enough host memory for V4 paged pool");
  const bool reserve = w.empty();
  if (reserve) w = Whole(line, "Not enough host memory for hierarchical KV cache. Requesting");
  if (!w.empty()) {
    auto& e = line.Emit(EventKind::kHostBufferFail, kEngine);
    const auto need = NumberAfter(w, "Requesting"),
               have = reserve ? NumberAfter(w, "but only") : NumberAfter(w, "but only have");
    if (need) Set(e, Num::kHostRequiredBytes, *need * 1e9);
    if (have) Set(e, Num::kHostAvailableBytes, *have * 1e9);
    e.text = "hicache";
  }
  // HiCache allocating its host pool (mem_cache/memory_pool_host.py HostKVCache.__init__,
  // 0.4.6+: "Allocating 476.61 GB host memory for hierarchical KV cache.", once per rank, pinned
  // where it can be): the host's memory is taken next, after the GPU's pool and graphs.
  if (const LineView a = Whole(line, "GB host memory for hierarchical KV cache"); !a.empty()) {
    auto& e = line.Emit(EventKind::kFrame, kEngine);
    e.text = "hicache_host_pool (its allocation)";
    Set(e, Num::kHostRequiredBytes, BytesAfter(a, "Allocating"));
  }
  // The launcher's words for a scheduler that died before 0.5.10 (entrypoints/engine.py
  // _launch_subprocesses, 0.4-0.5: "Rank 0 scheduler is dead. Please check if there are relevant
  // logs." then "Exit code: -9"): SIGKILL, the kernel's OOM killer on host memory.
  if (Trimmed(s).ends_with("Exit code: -9")) line.Emit(EventKind::kHostOomKill, kEngine);
  // The scheduler's wrapper around its traceback: "Scheduler hit an exception: " (scheduler.py
  // run_scheduler_process, 0.3-0.5), "Exception in ModelTpServer:" (managers/controller/
  // tp_worker.py exposed_step, 0.1-0.2).
  if (Has(s, "Scheduler hit an exception") || Has(s, "Exception in ModelTpServer")) {
    line.Emit(EventKind::kSglangException, kEngine);
  }
  // The code line under a frame calling a token-pool allocator (EAGLE's prepare_for_verify:
  // "batch.out_cache_loc = alloc_token_slots(", speculative/eagle_info.py 0.5; ScheduleBatch's
  // "self.alloc_token_slots(" in 0.4): the allocator's own frame, where the excerpt stops first.
  if (line.after_frame) {
    for (const std::string_view fn : {"alloc_token_slots("sv, "alloc_paged_token_slots_extend("sv,
                                      "alloc_paged_token_slots_decode("sv, "alloc_req_slots("sv}) {
      if (!Has(s, fn)) continue;
      const std::string_view name = fn.substr(0, fn.size() - 1);
      line.Emit(EventKind::kFrame, kEngine).text = std::string(name) + " (its call)";
      break;
    }
  }
  // The server's arguments, or a command line running one of SGLang's modules ("python -m
  // sglang.launch_server", the offline benchmarks sglang.bench_one_batch and
  // sglang.bench_offline_throughput, which build the same ModelRunner) or its CLI.
  // (Also the launcher's watchdog on its children: "Subprocess scheduler_0 (pid=N) crashed with
  // exit code -9" (utils/watchdog.py, 0.5.10) and "Received sigquit from a child process. It
  // usually means the child failed." (0.4-0.5).)
  if (Has(s, "mem_fraction_static=") || Has(s, "sglang.launch_server") ||
      Has(s, "-m sglang.") || Has(s, "sglang serve ") || Has(s, "Subprocess scheduler_") ||
      Has(s, "Received sigquit from a child process")) {
    auto& e = line.Emit(EventKind::kSglangMarker, kEngine);
    Set(e, Num::kMemFractionStatic, NumberAfter(s, "mem_fraction_static="));
    ServerArgs(s, &e);
    // Quantization on load: the server arguments' quantization='fp8' (or --quantization fp8).
    if (Has(s, "quantization='fp8'") || Has(s, "--quantization fp8")) {
      e.values[Num::kOnlineQuantization] = 1;
    }
  }
  // CudaGraphRunner.__init__ (cuda_graph_runner.py, 0.3-0.5) wraps what capture() raised as
  // "Capture cuda graph failed: <error>" (an OOM's message follows on the same line); EAGLE's
  // draft runners the same.
  // From 0.5.10 the piecewise graphs' context logs "Piecewise CUDA Graph failed with error: <e>"
  // and re-raises (compilation/piecewise_context_manager.py enable_piecewise_cuda_graph), around
  // their capture at start-up and around each replay while serving: a capture unless the log
  // shows the server serving (the serving lines below are the furthest phase then).
  // 0.5.14+ names the prefill graphs' runner: "Capture prefill CUDA graph failed: <error>"
  // (model_executor/prefill_cuda_graph_runner.py; "Fail when using backend: breakable for
  // prefill runner.").
  if (Has(s, "Capture cuda graph failed") || Has(s, "Capture CUDA graph failed") ||
      Has(s, "Capture prefill CUDA graph failed") ||
      Has(s, "Piecewise CUDA Graph failed with error")) {
    line.Emit(EventKind::kGraphBegin, kEngine);
  }
  // model_runner.py init_memory_pool logs "Memory pool end. avail mem=X GB" once the KV pool is
  // allocated (0.4-0.5): the next phase is capture.
  if (Has(s, "Memory pool end.")) line.Emit(EventKind::kKvTokens, kEngine);
  // ModelRunner.kernel_warmup after the pool and before the graphs (model_executor/
  // model_runner.py _flashinfer_autotune, 0.5.x: "Running FlashInfer autotune...", then
  // "FlashInfer autotune completed."): a failure after the first line and before any capture
  // line is the warm-up's.
  if (Has(s, "Running FlashInfer autotune")) line.Emit(EventKind::kKernelWarmup, kEngine);
  // model_runner.py load_model opens with "Load weight begin. avail mem=X GB"; the server is up
  // at "The server is fired up and ready to roll!", and serves "Prefill batch." / "Decode
  // batch." lines (scheduler.py, 0.3-0.5.3), from 0.5.4 "Prefill batch [N], #new-seq: ..." and
  // "Decode batch [N], #running-req: ...", the count only with LOG_FORWARD_ITERS in later
  // releases ("Decode batch, #running-req: ..."; scheduler_metrics_mixin.py).
  // init_torch_distributed logs "Init torch distributed ends. mem usage=X GB" (0.4-0.5) just
  // before load_model: the load is next.
  if (Has(s, "Load weight begin") || Has(s, "Init torch distributed ends")) {
    line.Emit(EventKind::kLoadBegin, kEngine);
  }
  if (Has(s, "The server is fired up") || (Has(s, "Prefill batch") && Has(s, "#new-seq:")) ||
      (Has(s, "Decode batch") && Has(s, "#running-req:"))) {
    line.Emit(EventKind::kServing, kEngine);
  }
  // model_runner.py init_torch_distributed (0.3-0.5): at TP > 1, a GPU with less than 90% of
  // this one's free memory stops the start-up ("The memory capacity is unbalanced. Some GPUs may
  // be occupied by other processes."); with the check disabled it is only a warning.
  if (Has(s, "memory capacity is unbalanced") && !Has(s, "WARNING") && !Has(s, "warning")) {
    line.Emit(EventKind::kStartupError, kEngine);
  }
}

constexpr double kGiB = 1024.0 * 1024 * 1024;

// The fraction 0.05 below the one the log's server arguments show, or the words for it.
// A Qwen-VL model's log: its model file's frames (models/qwen2_vl.py, qwen2_5_vl.py, qwen3_vl.py)
// or the model's name.
bool QwenVlLog(const Facts& f) {
  const bool named = HasNoCase(f.model_path, "qwen") && VisionLanguageName(f.model_path);
  return named || std::any_of(f.frames.begin(), f.frames.end(), [](const LogEvent* fr) {
           return Has(fr->text, "(qwen2_vl.py)") || Has(fr->text, "(qwen2_5_vl.py)") ||
                  Has(fr->text, "(qwen3_vl.py)") || Has(fr->text, "(qwen3_vl_moe.py)");
         });
}

// The fraction 0.05 above the one the log's server arguments show (at most 0.95).
std::string Higher(const Facts& f) {
  const auto m = f.get(Num::kMemFractionStatic);
  if (!m || *m <= 0.1 || *m >= 0.95) return "higher by 0.05";
  return fmt::format("{:.2f} (from {:.3g})", std::min(0.95, std::floor((*m + 0.05) * 100) / 100),
                     *m);
}

std::string Lower(const Facts& f) {
  const auto m = f.get(Num::kMemFractionStatic);
  if (!m || *m <= 0.1 || *m > 1) return "lower by 0.05";
  return fmt::format("{:.2f} (from {:.3g})", std::floor((*m - 0.05) * 100) / 100, *m);
}

// SGLang's refusal of a hybrid model's state cache (Match): its event, else null.
const LogEvent* MambaSlots(const Facts& f) {
  const LogEvent* e = f.first_of(EventKind::kSglangNotEnough);
  return e && Has(e->text, "mamba_ratio=") ? e : nullptr;
}

std::string Say(Words rule, const Facts& f) {
  if (rule == Words::kStartupFreeMemory) {
    return "SGLang refused to start: one GPU has less than 90% of the free memory of another "
           "(its tensor-parallel balance check); other processes hold memory on it";
  }
  if (rule == Words::kTokenPoolEmpty && MambaSlots(f)) {
    return "the hybrid model's state cache (the per-request state of its Mamba or "
           "linear-attention layers, drawn from --mem-fraction-static beside the attention KV "
           "pool) holds fewer slots than one request takes (mamba_ratio): it serves no request";
  }
  if (rule == Words::kTokenPoolEmpty) {
    return "SGLang's token pool is empty: after the weights, nothing is left of "
           "--mem-fraction-static x the free memory before the load (profile_max_num_token: "
           "free after load - free before x (1 - fraction) <= 0)";
  }
  if (rule == Words::kBackendUnquantized || rule == Words::kBackendUnsharded) {
    return std::string(
               "SGLang built the model through its Transformers backend (models/transformers.py, "
               "transformers' AutoModel.from_config), the generic path for an architecture it "
               "has no implementation of: the layers it does not replace are built as "
               "transformers defines them, in 16 bits") +
           (rule == Words::kBackendUnsharded
                ? ", and those outside the model's tensor-parallel plan whole on every rank"
                : ", so the model takes more memory than natively");
  }
  if (rule == Words::kContextExceeded) {
    const LogEvent* e = f.first_of(EventKind::kContextExceeded);
    if (!e) return "";
    if (e->text == "retract_one") {
      return "one request alone outgrew SGLang's token pool while decoding: the scheduler "
             "retracted every other request and the last still did not fit, so it was aborted "
             "(schedule_batch.py retract_decode); fewer requests cannot help, a shorter one or a "
             "larger pool can";
    }
    const auto n = f.get(Num::kPromptTokens);
    const auto m = e->text == "pool_tokens" ? f.get(Num::kKvCacheTokens) : f.get(Num::kMaxModelLen);
    return fmt::format(
        "SGLang refused a request{} longer than it allows{}: the limit is the smaller of the "
        "context length and the KV token pool (less a few tokens), so a pool sized small by "
        "--mem-fraction-static limits the requests too",
        n ? fmt::format(" of {:.0f} tokens", *n) : "",
        m ? fmt::format(" ({:.0f} tokens)", *m) : "");
  }
  if (rule == Words::kHostMemory) {
    const LogEvent* e = f.first_of(EventKind::kHostBufferFail);
    if (e && e->text == "hicache_ratio") {
      return "SGLang's hierarchical cache (HiCache) needs its host KV pool larger than the GPU's "
             "KV pool (memory_pool_host.py), and --hicache-ratio (x the GPU pool) or "
             "--hicache-size made it no larger";
    }
    if (!e || e->text != "hicache") return "";
    const auto need = f.get(Num::kHostRequiredBytes), have = f.get(Num::kHostAvailableBytes);
    return fmt::format(
        "SGLang's hierarchical cache (HiCache) asked for a host KV pool{} that system memory "
        "cannot hold (memory_pool_host.py: the host's available memory less 10 GB{})",
        need ? fmt::format(" of {:.0f} GB", *need / 1e9) : "",
        have ? fmt::format(", {:.0f} GB here", *have / 1e9) : "");
  }
  if (rule == Words::kKernelWarmup && DeepGemmWarmupFrames(f)) {
    return "SGLang's DeepGEMM JIT warm-up (layers/deep_gemm_wrapper/compile_utils.py) compiles "
           "and runs each FP8 GEMM shape for every batch size with buffers of its own, in what "
           "--mem-fraction-static leaves outside the static pool, and they did not fit there";
  }
  if (rule == Words::kKernelWarmup) {
    return "SGLang tunes its kernels (FlashInfer's autotuning: model_runner.py kernel_warmup, "
           "after the KV pool and before the CUDA graphs, 0.5) in what --mem-fraction-static "
           "leaves outside the static pool, and the tuning's workspaces did not fit there";
  }
  if (rule == Words::kGraphCapture) {
    return "SGLang captures its CUDA graphs after the KV pool is allocated, in what "
           "--mem-fraction-static leaves outside the static pool (model_runner.py "
           "init_cuda_graphs, cuda_graph_runner.py): the graphs for every batch size up to "
           "--cuda-graph-max-bs did not fit there";
  }
  if (rule != Words::kTokenPool) return "";
  return "SGLang's token pool ran out while serving: the running batch needs more KV tokens "
         "than the pool holds";
}

bool Fixes(Cause cause, const Facts& f, Diagnosis* d) {
  switch (cause) {
    case Cause::kKvNoMemory:
      if (const LogEvent* e = MambaSlots(f)) {
        const auto ratio = NumberAfter(e->text, "mamba_ratio=");
        const auto slots = NumberAfter(e->text, "max_mamba_cache_size=");
        if (ratio && *ratio >= 1) {
          AddFix(d, fmt::format("--max-mamba-cache-size {:.0f}", *ratio * 2),
                 fmt::format("state slots for two requests: each takes {:.0f} (mamba_ratio){}",
                             *ratio,
                             slots ? fmt::format(", and {:.0f} served none", *slots) : ""));
        }
        AddFix(d, "--mem-fraction-static higher, or --max-total-tokens lower",
               "the state cache and the attention KV pool share the fraction: a larger fraction "
               "or a smaller KV pool leaves more state slots");
        AddFix(d, "--max-running-requests 1", "the fewest state slots a server can run with");
        return true;
      }
      // A log that shows the weights and the activation peak gets the default reader's budget
      // arithmetic instead.
      if (f.get(Num::kWeightsBytes) && f.get(Num::kActivationPeakBytes) && f.total > 0) {
        return false;
      }
      // An allocation that failed while the pool was created (model_runner.py init_memory_pool
      // -> memory_pool.py _create_buffers, 0.4-0.5): the pool the fraction sized did not fit
      // beside what else the GPU holds (the CUDA context, graphs, other processes): a lower
      // fraction. Without one, the pool came out empty or negative: a higher fraction.
      if (!f.has(EventKind::kSglangNotEnough) && !NegativeKv(f) &&
          (f.has(EventKind::kTorchOom) || f.has(EventKind::kCudaOom))) {
        AddFix(d, "--mem-fraction-static " + Lower(f),
               "the KV pool is sized from the free memory x mem-fraction-static minus the "
               "weights, and that pool did not fit beside the rest of the GPU's memory");
        AddFix(d, "--max-total-tokens lower (or --context-length lower)",
               "caps the pool below what the fraction gives");
        return true;
      }
      // The engine's own minimum ("Raise --mem-fraction-static above Y"), two points more.
      if (const LogEvent* e = f.first_of(EventKind::kSglangNotEnough); e) {
        if (const auto y = NumberAfter(e->text, "Raise --mem-fraction-static above");
            y && *y > 0 && *y < 1) {
          const double x = std::ceil((*y + 0.02) * 100) / 100;
          if (x < 1) {
            AddFix(d, fmt::format("--mem-fraction-static {:.2f}", x),
                   fmt::format("SGLang's own minimum is {:.3f}: below it the weights leave no "
                               "KV pool", *y));
          }
          if (x > 0.95) {
            AddFix(d, "--tp 2 (or a quantized checkpoint)",
                   "the weights take almost the whole fraction: what is left outside it may not "
                   "hold the graphs and activations");
          }
          return true;
        }
      }
      if (auto w = f.get(Num::kWeightsBytes), free = f.get(Num::kFreeBytes);
          w && free && *w > 0) {
        // profile_max_num_token: rest = free after load - F x (1 - fraction), F = free + weights
        // (the load-end line's avail mem and mem usage): rest > 0 from 1 - free / F; three
        // points more give the pool 3% of F.
        const double total = *free + *w;
        const double least = 1 - *free / total;
        double x = std::ceil((least + 0.03) * 100) / 100;
        // SGLang said "increase": a floor at or below the fraction it ran with (the log's own
        // figures come from another rank or moment) still calls for more than that fraction.
        const auto now = f.get(Num::kMemFractionStatic);
        const bool above_floor = now && *now > 0 && *now < 1 && x <= *now;
        if (above_floor) x = std::ceil((*now + 0.05) * 100) / 100;
        if (x <= 0.95 && above_floor) {
          AddFix(d, fmt::format("--mem-fraction-static {:.2f} (from {:.2f})", x, *now),
                 fmt::format("SGLang found no room for a KV pool at {:.2f}, although the "
                             "load-end line's figures ({:.2f} GiB of weights, {:.2f} GiB left; "
                             "another rank's or an earlier moment's) put the floor at {:.3f}: a "
                             "fraction above the one that failed",
                             *now, *w / kGiB, *free / kGiB, least));
        } else if (x <= 0.95) {
          AddFix(d, fmt::format("--mem-fraction-static {:.2f}", x),
                 fmt::format("the weights ({:.2f} GiB) leave {:.2f} GiB of the {:.2f} GiB free "
                             "before the load; the pool is empty below {:.3f}",
                             *w / kGiB, *free / kGiB, total / kGiB, least));
        } else {
          AddFix(d, "--tp 2 (or a quantized checkpoint)",
                 fmt::format("the weights take {:.0f}% of the free memory: no fraction up to "
                             "0.95 leaves a pool", 100 * *w / total));
        }
        AddFix(d, "--context-length lower, --cuda-graph-max-bs lower",
               "what the fraction leaves out serves fewer, shorter requests");
        return true;
      }
      // Without the load-end line's figures: a fraction above the one that failed, where the
      // error says which (at 0.95 and above, more GPUs or smaller weights instead).
      if (const auto now = f.get(Num::kMemFractionStatic); now && *now > 0 && *now < 1) {
        if (*now < 0.95) {
          const double x = std::min(0.95, std::max(0.9, std::ceil((*now + 0.05) * 100) / 100));
          AddFix(d, fmt::format("--mem-fraction-static {:.2f} (from {:.2f}), --context-length "
                                "lower", x, *now),
                 "SGLang sizes its KV pool from the free memory x mem-fraction-static minus the "
                 "weights, and at the fraction it ran with nothing was left");
        } else {
          AddFix(d, "--tp 2 (or a quantized checkpoint)",
                 fmt::format("at --mem-fraction-static {:.2f} the weights still leave no KV pool",
                             *now));
        }
        return true;
      }
      AddFix(d, "--mem-fraction-static 0.9 (or higher), --context-length lower",
             "SGLang sizes its KV pool from the free memory x mem-fraction-static minus the "
             "weights");
      return true;
    case Cause::kActivationPeak: {
      // The server arguments' chunked_prefill_size (ServerArgs, the scheduler's summary line):
      // a prefill's activations grow with the chunk's tokens.
      const auto chunk = f.get(Num::kChunkedPrefillSize);
      AddFix(d,
             (chunk && *chunk >= 1024 && *chunk <= 1e7
                  ? fmt::format("--chunked-prefill-size {:.0f} (from {:.0f})",
                                std::floor(*chunk / 2), *chunk)
                  : std::string("--chunked-prefill-size 4096")) +
                 " --mem-fraction-static " + Lower(f),
             "smaller prefill chunks, more headroom for activations");
      return true;
    }
    case Cause::kKvTooManySequences: {
      // The allocator's "Try to allocate N tokens." (MatchTokenPool): a decode step asks one
      // token per running request, a prefill its batch's new tokens, capped by
      // --chunked-prefill-size (scheduler.py, 0.3-0.5).
      const auto n = f.get(Num::kPrefillTokens);
      const auto decode = f.get(Num::kDuringDecode);
      if (n && *n >= 2 && *n <= 1e9 && decode && *decode > 0) {
        AddFix(d, fmt::format("--max-running-requests {:.0f}", std::floor(*n / 2)),
               fmt::format("the decode step asked the pool for {:.0f} tokens, one per running "
                           "request: half as many requests ask half as many", *n));
      } else if (n && *n >= 256 && *n <= 1e9 && decode && *decode == 0) {
        const double chunk = std::exp2(std::floor(std::log2(*n / 2)));
        AddFix(d, fmt::format("--chunked-prefill-size {:.0f}", chunk),
               fmt::format("the prefill asked the pool for {:.0f} tokens at once; smaller chunks "
                           "ask for fewer", *n));
      }
      // A hybrid model's state slots (Match): their own pool, sized apart from the tokens'.
      const LogEvent* slots = f.first_of(EventKind::kSglangTokenOom);
      if (slots && slots->text == "mamba slots") {
        AddFix(d, "--max-mamba-cache-size higher (or --max-running-requests lower)",
               "one state slot per running request: more slots, or fewer requests");
      }
      AddFix(d, "--max-running-requests lower (or --mem-fraction-static higher)",
             "fewer sequences share the token pool");
      // SGLang's tuning guide: frequent "KV cache pool is full. Retract requests." warrants a
      // more conservative scheduler (docs/advanced_features/hyperparameter_tuning.md, 0.4-0.5).
      AddFix(d, "--schedule-conservativeness 1.3",
             "the scheduler admits requests as if each would generate more of its max tokens");
      return true;
    }
    case Cause::kCudagraphCapture:
      // The piecewise graphs (0.5.10: on by default) are captured by token count, up to
      // --piecewise-cuda-graph-max-tokens (default the chunked prefill size; 2048 with an MLA
      // backend; server_args.py _handle_piecewise_cuda_graph), apart from the decode graphs'
      // batch sizes; the engine's own message names --disable-piecewise-cuda-graph.
      if (FailureSays(f, {"Piecewise CUDA Graph failed"}) ||
          AnyFrame(f, {"init_piecewise_cuda_graphs"})) {
        const auto chunk = f.get(Num::kChunkedPrefillSize);
        AddFix(d,
               chunk && *chunk >= 1024 && *chunk <= 1e7
                   ? fmt::format("--piecewise-cuda-graph-max-tokens {:.0f} (from {:.0f})",
                                 std::floor(*chunk / 2), *chunk)
                   : std::string("--piecewise-cuda-graph-max-tokens 2048"),
               "fewer and smaller token counts captured as piecewise graphs");
        AddFix(d, "--disable-piecewise-cuda-graph",
               "no piecewise graphs (SGLang's own workaround): prefill runs eagerly, the decode "
               "graphs stay");
      }
      // The server arguments' cuda_graph_max_bs: the graphs' buffers and pool grow with it
      // (cuda_graph_runner.py captures every batch size up to it, largest first).
      if (const auto bs = f.get(Num::kCudaGraphMaxBs); bs && *bs >= 16 && *bs <= 1e6) {
        AddFix(d, fmt::format("--cuda-graph-max-bs {:.0f} (from {:.0f})", std::floor(*bs / 2),
                              *bs),
               "half the largest captured batch: smaller graph buffers and pool");
      }
      AddFix(d, "--cuda-graph-max-bs 16 (or --disable-cuda-graph)",
             "fewer and smaller captured batches (EAGLE drafts capture their own graphs too)");
      AddFix(d, "--mem-fraction-static " + Lower(f),
             "leaves more memory outside the static pool for the graphs");
      return true;
    case Cause::kKernelWarmup:
      // DeepGEMM's JIT warm-up (readers/pytorch.cc TagPath): environ.py SGLANG_ENABLE_JIT_DEEPGEMM
      // (0.5.x; SGL_ENABLE_JIT_DEEPGEMM before) turns DeepGEMM off, the precompile step
      // (python -m sglang.compile_deep_gemm) builds its kernels outside the server.
      if (DeepGemmWarmupFrames(f)) {
        AddFix(d, "SGLANG_ENABLE_JIT_DEEPGEMM=0 (SGL_ENABLE_JIT_DEEPGEMM=0 before 0.5)",
               "the FP8 GEMMs run without DeepGEMM: no warm-up buffers for every batch size");
        AddFix(d, "python3 -m sglang.compile_deep_gemm with the server's arguments, before "
                  "starting it",
               "compiles the kernels ahead; the server then loads them");
      }
      // server_args.py --disable-flashinfer-autotune (0.5.x): kernel_warmup then tunes nothing.
      AddFix(d, "--disable-flashinfer-autotune",
             "the FlashInfer kernels run with their default configurations; nothing is tuned at "
             "start-up");
      AddFix(d, "--mem-fraction-static " + Lower(f),
             "a smaller static pool leaves the tuning's workspaces room");
      return true;
    case Cause::kKvTooLongContext:
      // A request refused or aborted for the pool's size (Match): a larger pool or a shorter
      // request; the context length only caps what is asked.
      if (const LogEvent* e = f.first_of(EventKind::kContextExceeded)) {
        AddFix(d, "--mem-fraction-static " + Higher(f),
               "a larger KV token pool: the longest request SGLang accepts is the pool's tokens "
               "when the pool is smaller than the context length");
        AddFix(d, "a shorter request (prompt plus max_tokens), or --allow-auto-truncate",
               e->text == "retract_one"
                   ? std::string("the one request left must fit in the pool as it decodes")
                   : std::string("the request must fit in the pool and the context length"));
        AddFix(d, "--kv-cache-dtype fp8_e5m2", "about half the KV bytes per token: twice the "
                                               "tokens in the same pool");
        return true;
      }
      AddFix(d, "--context-length lower", "a shorter context needs fewer KV tokens per request");
      AddFix(d, "--kv-cache-dtype fp8_e5m2", "about half the KV bytes per token");
      return true;
    case Cause::kWeightsTooLarge:
    case Cause::kDequantizedCopy:
      // Twice the tensor parallelism the log shows (its ranks or tp_size), at least 2.
      AddFix(d, fmt::format("--tp {} (or more GPUs)", std::max<int64_t>(2, 2 * f.tp)),
             "each GPU loads a share of the weights");
      // Loaded, with nothing left for the KV pool at any fraction (rules.cc
      // WeightsFillTheCard): fewer weight bytes, not a larger --mem-fraction-static.
      if (d->stage == "kv_cache") {
        AddFix(d, "a quantized checkpoint (AWQ/GPTQ 4-bit, or FP8)",
               "a quarter or half of the 16-bit weight bytes, leaving room for the KV pool");
        return true;
      }
      // A Marlin repack (rules.cc RepackFrames) of a checkpoint that is already quantized.
      if (MarlinRepackFrames(f)) {
        AddFix(d, "a smaller checkpoint, or fewer other tensors on the card at load",
               "the repack holds a new packed copy of a weight next to the loaded one");
        return true;
      }
      // Another conversion after loading (load_copies.cc), not quantizing on load.
      if (!f.get(Num::kOnlineQuantization) &&
          (PostLoadConversion(f) || ConvertedAfterShards(f))) {
        AddFix(d, "a smaller checkpoint, or fewer other tensors on the card at load",
               "the conversion holds a new copy of a weight next to the loaded one");
        return true;
      }
      AddFix(d, "a checkpoint already quantized (FP8/AWQ/GPTQ) instead of --quantization on load",
             "online quantization loads the 16-bit weights first");
      return true;
    case Cause::kMultimodalEncoder:
      // The image processor on the GPU in the tokenizer manager (readers/hints.cc EncoderRuns).
      if (std::any_of(f.frames.begin(), f.frames.end(), [](const LogEvent* fr) {
            return fr->text.find("(base_processor.py)") != std::string::npos ||
                   fr->text.find("(image_processing_utils_fast.py)") != std::string::npos;
          })) {
        AddFix(d, "--disable-fast-image-processor",
               "the images are processed on the CPU, not on the GPU beside the model");
      }
      // SGLang's Qwen-VL processors resize each image to at most SGLANG_IMAGE_MAX_PIXELS pixels
      // (multimodal/processors/qwen_vl.py resize_image -> smart_resize, environ.py, 0.5;
      // default 16384 x 28 x 28 = 12845056, a token per 28 x 28 pixels); 1280 tokens' worth is
      // the Qwen-VL model cards' suggested cap.
      if (QwenVlLog(f)) {
        AddFix(d, "SGLANG_IMAGE_MAX_PIXELS=1003520 (from the default 12845056)",
               "caps each image at 1280 visual tokens (28 x 28 pixels a token): the encoder's "
               "activations grow with pixels");
      } else {
        AddFix(d, "smaller images (resized before they are sent), fewer a request",
               "the encoder's activations grow with the pixels and items");
      }
      AddFix(d, "--mem-fraction-static " + Lower(f),
             "the encoder runs outside the static pool: a smaller pool leaves it room");
      return true;
    case Cause::kOtherProcess:
      AddFix(d, "stop the other processes on the GPUs (nvidia-smi lists them), or "
                "CUDA_VISIBLE_DEVICES naming GPUs that are free",
             "every tensor-parallel rank sizes its pool from the least free memory");
      AddFix(d, "--mem-fraction-static " + Lower(f), "a smaller share of what is free");
      return true;
    case Cause::kFp16Fallback:
      if (UnquantizedCreateInQuantizedRun(f)) {
        AddFix(d, "a --quantization whose MoE method keeps the experts quantized (moe_wna16; "
                  "awq_marlin or gptq_marlin on NVIDIA cards), or an SGLang release that does",
               "the experts then stay 4-bit instead of being created at 16 bits");
        AddFix(d, "--tp 4 (or more GPUs)", "each GPU builds a smaller share of the 16-bit layers");
        return true;
      }
      [[fallthrough]];
    case Cause::kUnshardedSlice:
      // ServerArgs --model-impl (auto, sglang, transformers; 0.4.6+).
      AddFix(d, "an SGLang release that implements this architecture (--model-impl sglang)",
             "the native implementation loads the checkpoint quantized and sharded");
      AddFix(d, "--tp 2 (or more GPUs)", "each GPU builds a share of the model");
      return true;
    case Cause::kFragmentation:
      return false;
    case Cause::kHostMemory: {
      // HiCache's host pool: --hicache-size (GB per rank) overrides the device pool x
      // --hicache-ratio (server_args.py, 0.4.6-0.5).
      const LogEvent* e = f.first_of(EventKind::kHostBufferFail);
      if (e && e->text == "hicache_ratio") {
        AddFix(d, "--hicache-ratio 2 (or a --hicache-size in GB larger than the GPU's KV pool)",
               "HiCache's host pool must be larger than the GPU pool it backs");
        return true;
      }
      // The host pool allocated, then the scheduler killed (rules.cc SglangHicacheKilled).
      const LogEvent* alloc = nullptr;
      for (const LogEvent* fr : f.frames) {
        if (FrameIs(fr, {"hicache_host_pool"})) alloc = fr;
      }
      if ((!e || e->text != "hicache") && alloc) {
        const auto per_rank = ValueOf(alloc, Num::kHostRequiredBytes);
        AddFix(d,
               per_rank ? fmt::format("--hicache-size {:.0f} (GB a rank; {:.0f} GB a rank now)",
                                      std::max(1.0, std::floor(*per_rank / 1e9 / 2)),
                                      *per_rank / 1e9)
                        : std::string("--hicache-size lower (GB a rank), or --hicache-ratio lower"),
               "every rank allocates its own host pool: their sum must fit the host's (or the "
               "container's) memory");
        AddFix(d, "more host memory for the server (a container's memory limit above the ranks' "
                  "host pools)",
               "the kernel's OOM killer ended the scheduler as the host pools were allocated");
        return true;
      }
      if (!e || e->text != "hicache") return false;
      const auto have = f.get(Num::kHostAvailableBytes);
      const std::string size =
          have && *have >= 2e9
              ? fmt::format("--hicache-size {:.0f}", std::floor(*have / 1e9 * 0.9))
              : std::string("--hicache-ratio lower (or --hicache-size in GB)");
      AddFix(d, size, "a host KV pool the free system memory holds");
      AddFix(d, "--hicache-ratio 1 with --mem-fraction-static lower",
             "the host pool is a multiple of the GPU pool");
      return true;
    }
    default:
      AddFix(d, "--mem-fraction-static " + Lower(f),
             "more memory outside the static pool for activations and buffers");
      return true;
  }
}

// The server arguments the log shows, as SGLang flags, for the plan rebuilt with --model.
void RunFlags(const Facts& f, FlagValues* flags, std::vector<std::string>*) {
  if (auto m = f.get(Num::kMemFractionStatic); m && *m > 0 && *m <= 1) {
    flags->emplace_back("--mem-fraction-static", fmt::format("{}", *m));
  }
  if (f.get(Num::kOnlineQuantization).value_or(0) > 0) {
    flags->emplace_back("--quantization", "fp8");
  }
  constexpr std::pair<Num, const char*> kCounts[] = {
      {Num::kContextLength, "--context-length"},
      {Num::kChunkedPrefillSize, "--chunked-prefill-size"},
      {Num::kCudaGraphMaxBs, "--cuda-graph-max-bs"},
      {Num::kMaxTotalTokens, "--max-total-tokens"},
  };
  for (const auto& [key, flag] : kCounts) {
    if (auto v = f.get(key); v && *v >= 1 && *v <= 1e9) {
      flags->emplace_back(flag, fmt::format("{:.0f}", *v));
    }
  }
  if (auto bits = f.get(Num::kKvCacheDtypeBits); bits && *bits == 8) {
    flags->emplace_back("--kv-cache-dtype", "fp8_e4m3");
  }
}

// The load-end line's numbers as the planner's measured terms: "avail mem" is the free memory
// after the load and "mem usage" what the load took (model_runner.py load_model, v0.5.5: before
// minus after), so the free memory before the load is their sum. profile_max_num_token's F is
// measured a moment earlier, in init_torch_distributed; nothing is allocated between the two.
std::string Measured(const Facts& f, EngineSettings* s) {
  const LogEvent* e = f.first_of(EventKind::kSglangWeights);
  if (!e) return "";
  const auto free = e->values.find(Num::kFreeBytes);
  const auto used = e->values.find(Num::kWeightsBytes);
  if (free == e->values.end() || used == e->values.end() || free->second <= 0 ||
      used->second < 0 || free->second + used->second > 1e15) {
    return "";
  }
  s->measured_free_after_load_bytes = static_cast<uint64_t>(free->second);
  s->measured_free_before_load_bytes = static_cast<uint64_t>(free->second + used->second);
  return fmt::format("free memory before the load {:.2f} GiB (avail mem {:.2f} + mem usage {:.2f}) "
                     "and after it {:.2f} GiB, from line {}",
                     (free->second + used->second) / kGiB, free->second / kGiB,
                     used->second / kGiB, free->second / kGiB, e->shown_line());
}

// SGLang's launcher prints its arguments once as it starts ("server_args=ServerArgs(...)",
// srt/entrypoints/http_server.py launch_server, 0.3+).
bool BeginsRun(const Line& line) { return Has(line.view(), "server_args=ServerArgs("); }

}  // namespace

const Reader& SglangReader() {
  static const Reader kReader = {
      .engine = kEngine,
      .match = Match,
      // Its KV pool's size is printed once the pool is allocated: the next phase is capture.
      // EAGLE's draft worker is built after the target's (speculative/eagle_worker.py, 0.4-0.5):
      // its "Load weight begin" follows the target's capture end.
      .milestones = {{EventKind::kLoadBegin, Stage::kLoad, false, Stage::kRuntime},
                     {EventKind::kSglangWeights, Stage::kKvCache},
                     {EventKind::kKvTokens, Stage::kCudaGraph},
                     {EventKind::kKernelWarmup, Stage::kWarmup, true},
                     {EventKind::kGraphBegin, Stage::kCudaGraph},
                     // EAGLE's draft captures its graphs after the target's.
                     {EventKind::kGraphDone, Stage::kRuntime, true},
                     {EventKind::kServing, Stage::kRuntime}},
      .frame_path = Num::kPathHasSglang,
      .frame_path_final = true,
      .fixes = Fixes,
      .words = Say,
      .run_flags = RunFlags,
      .measured = Measured,
      .begins_run = BeginsRun,
  };
  return kReader;
}

}  // namespace vramfit::doctor
