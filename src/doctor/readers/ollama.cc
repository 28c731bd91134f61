// Ollama's log reader (readers/reader.h): its server and runner lines (`source=server.go`,
// `msg=offload` with the offload estimate, the system-memory check, the runner's exit), the
// phases they mark, its words, and fixes in Ollama's vocabulary: environment variables of the
// server (OLLAMA_CONTEXT_LENGTH, OLLAMA_NUM_PARALLEL, OLLAMA_FLASH_ATTENTION,
// OLLAMA_KV_CACHE_TYPE, OLLAMA_GPU_OVERHEAD, OLLAMA_MAX_LOADED_MODELS) and Modelfile
// parameters (num_ctx, num_gpu, num_batch). Ollama runs llama.cpp: the buffer failures are read
// by the llama.cpp reader and diagnosed in Ollama's terms here (Reader::wraps).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/units.h"
#include "doctor/readers/reader.h"
#include "vramfit/advice.h"

namespace vramfit::doctor {

// Lists of literals are written "..."sv: their lengths are known when compiled (a list of
// pointers is measured with strlen on every pass of a loop, on every line of a log).
using std::string_view_literals::operator""sv;
namespace {

constexpr char kEngine[] = "ollama";

// Ollama's sizes are quoted: memory.available="[23.3 GiB]", total="15.5 GiB".
std::optional<double> QuotedBytes(std::string_view s, std::string_view key) {
  size_t at = s.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  at += key.size();
  while (at < s.size() && (s[at] == '"' || s[at] == '[')) ++at;
  return BytesAfter(s, "", at);
}

// `key` is in `s` with nothing after it but spaces and the quotes that close a logfmt value
// (and whatever follows that closing quote: the record's next field, or the next lines where a
// paste lost the line ends).
bool NothingAfter(std::string_view s, std::string_view key) {
  const size_t at = s.find(key);
  if (at == std::string_view::npos) return false;
  std::string_view rest = s.substr(at + key.size());
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\\' || rest.front() == '\r')) {
    rest.remove_prefix(1);
  }
  return rest.empty() || rest.front() == '"' ||
         rest.find_first_not_of(" \"'`\\\r") == std::string_view::npos;
}

// A Go stack frame of Ollama's runner, as a panic prints it:
// "github.com/ollama/ollama/runner/ollamarunner.(*Server).reserveWorstCaseGraph(0xc00054e000)".
// The function's name (after the receiver), or "" when the line is no call frame ("created by
// ..." lines have no argument list).
std::string_view GoFrame(std::string_view s) {
  constexpr std::string_view kPackage = "github.com/ollama/ollama/";
  const size_t at = s.find(kPackage);
  if (at == std::string_view::npos) return {};
  size_t i = at + kPackage.size();
  while (i < s.size()) {
    const size_t open = s.find('(', i);
    if (open == std::string_view::npos) return {};
    if (open + 1 < s.size() && s[open + 1] == '*') {  // the receiver, "(*Server)"
      i = s.find(')', open);
      if (i == std::string_view::npos) return {};
      continue;
    }
    const size_t dot = s.rfind('.', open);
    if (dot == std::string_view::npos || dot < at || dot + 1 >= open) return {};
    return s.substr(dot + 1, open - dot - 1);
  }
  return {};
}

// The part of ml.ErrNoMem's allocations that failed (see Match): the first size marked F, what
// it was (the label before it: "InputWeights", "Weights", "Cache" or "Graph"), and whether it was
// on the CPU (before "GPUs:", or a device named CPU). Empty `what` when no size is marked F.
struct FailedAllocation {
  std::string_view what;
  bool host = false;
  double bytes = 0;
};
FailedAllocation FirstFailed(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != 'F' || i == 0 || !std::isdigit(static_cast<unsigned char>(s[i - 1]))) continue;
    if (i + 1 < s.size() && std::isalnum(static_cast<unsigned char>(s[i + 1]))) continue;
    size_t b = i;
    while (b > 0 && std::isdigit(static_cast<unsigned char>(s[b - 1]))) --b;
    if (b == 0 || (s[b - 1] != ':' && s[b - 1] != '[' && s[b - 1] != ' ')) continue;
    FailedAllocation out;
    out.bytes = NumberAt(s, b).value_or(0);
    const std::string_view head = s.substr(0, b);
    size_t label = std::string_view::npos;
    for (std::string_view key : {"Weights:"sv, "Cache:"sv, "Graph:"sv}) {
      const size_t at = head.rfind(key);
      if (at == std::string_view::npos || (label != std::string_view::npos && at < label)) {
        continue;
      }
      label = at;
      out.what = key.substr(0, key.size() - 1);
      if (key == "Weights:" && at >= 5 && head.substr(at - 5, 5) == "Input") {
        out.what = "InputWeights";
      }
    }
    if (out.what.empty()) return {};
    const size_t gpus = head.rfind("GPUs:");
    const size_t name = head.rfind("Name:");
    out.host = out.what == "InputWeights" || gpus == std::string_view::npos ||
               (name != std::string_view::npos && name > gpus &&
                head.substr(name + 5, 3) == "CPU");
    return out;
  }
  return {};
}

void Match(const Line& line) {
  const LineView s = line.view();
  // The runner's phases on a panic's stack (runner/ollamarunner/runner.go, 0.6+): initModel /
  // allocModel build the model and its cache, reserveWorstCaseGraph reserves the compute graph of
  // the largest batch, processBatch / forwardBatch / computeBatch serve.
  if (Has(s, "github.com/ollama/ollama/")) {
    const std::string_view fn = GoFrame(s);
    for (std::string_view name :
         {"reserveWorstCaseGraph"sv, "initModel"sv, "allocModel"sv, "loadModel"sv, "processBatch"sv,
          "forwardBatch"sv, "computeBatch"sv}) {
      if (fn != name) continue;
      line.Emit(EventKind::kFrame, kEngine).text = std::string(fn) + " (runner.go)";
      break;
    }
    if (fn == "Put" && Has(s, "kvcache.(*Causal).Put")) {
      line.Emit(EventKind::kFrame, kEngine).text = "Put (causal.go)";
    }
    // A model's image encoder (model/models/<name>/model.go (*Model).EncodeMultimodal, 0.6+),
    // which the runner calls for a request's images (ollamarunner/runner.go (*Server).inputs)
    // and for the 2048 x 2048 dummy image of its worst-case reservation (reserveWorstCaseGraph):
    // the failure is in the encoder, at the phase the runner's frame says.
    // (Also the runner's store of a request's encoded images, which encodes them on first use:
    // ollamarunner/multimodal.go multimodalStore.getMultimodal / getTensor, 0.7+.)
    if (fn == "EncodeMultimodal" ||
        ((fn == "getTensor" || fn == "getMultimodal") && Has(s, "multimodalStore"))) {
      line.Emit(EventKind::kFrame, kEngine).text = "EncodeMultimodal (model.go)";
      line.Emit(EventKind::kMmHint, kEngine).text = "encoder";
    }
  }
  // The scheduler found the previous runner's memory not given back in time (server/sched.go,
  // 0.1.3x+: "gpu VRAM usage didn't recover within timeout"): it was still held as the next
  // model was placed (rules.cc KoboldCppOtherApp).
  if (!Whole(line, "VRAM usage didn't recover within timeout").empty()) {
    line.Emit(EventKind::kOtherInstanceWords, kEngine);
  }
  // Ollama's structured lines: "time=... level=INFO source=server.go:105 msg=...".
  const bool server = (Has(s, "level=") && Has(s, " source=")) || Has(s, "llama runner") ||
                      Has(s, "check ollama server logs") ||
                      Has(s, "llama-server process has terminated") ||
                      Has(s, "llama-server process no longer running") ||
                      Has(s, "OLLAMA_") || Has(s, "Ollama call failed") ||
                      (Has(s, "POST predict:") && Has(s, "/completion")) ||
                      Has(s, "ollama runner") || Has(s, "/ollama") ||
                      // Its build's paths on Windows ("C:\\a\\ollama\\ollama\\llm\\llama.cpp"),
                      // and a collector naming the program (journald's "ollama[4504]:", a
                      // compose service "ollama-1"); its model store's blob names
                      // (~/.ollama/models/blobs/sha256-<digest>, server/modelpath.go).
                      Has(s, "\\ollama\\") || line.source.starts_with("ollama") ||
                      Has(s, "blobs/sha256-") || Has(s, "blobs\\sha256-");
  if (server) {
    auto& e = line.Emit(EventKind::kOllamaMarker, kEngine);
    // "starting llama server" cmd="... --ctx-size 8192 --batch-size 512 --n-gpu-layers 33 ...";
    // the new runner's load request, msg="load request" request="{Operation:alloc ... Parallel:1
    // BatchSize:512 FlashAttention:Disabled KvSize:262144 ...}" (runner/ollamarunner/runner.go,
    // 0.12+: KvSize is num_ctx x the parallel slots).
    Set(e, Num::kMaxModelLen, Has(s, "--ctx-size ") ? NumberAfter(s, "--ctx-size ")
                                                     : NumberAfter(s, "KvSize:"));
    // The parallel slots the context is shared by (--ctx-size and KvSize are num_ctx x them):
    // the runner's "--parallel N", the new runner's "Parallel:N".
    Set(e, Num::kMaxNumSeqs, Has(s, "--parallel ") ? NumberAfter(s, "--parallel ")
                                                   : NumberAfter(s, "Parallel:"));
  }
  // The new engine's memory summary per device (ml/device.go, BackendMemory's log, 0.12+):
  // msg="model weights" device=CUDA0 size="9.2 GiB", msg="kv cache" ..., msg="compute graph"
  // ...; the GPU's lines, not the CPU's. rules.cc matches a failed buffer's size against them.
  // Also where a paste reflowed the line inside the message ('msg="kv' + 'cache" device=...').
  if (Has(s, " size=")) {
    for (const auto& [what, num] :
         {std::pair{"msg=\"model weights\""sv, Num::kWeightsBytes},
          std::pair{"msg=\"kv cache\""sv, Num::kKvCacheBytes},
          std::pair{"msg=\"compute graph\""sv, Num::kComputeBytes}}) {
      const LineView t = WholeBoth(line, what, " size="sv);
      if (t.empty() || !Has(t, " device=") || Has(t, " device=CPU")) continue;
      Set(line.Emit(EventKind::kOllamaMarker, kEngine), num, QuotedBytes(t, " size="));
      break;
    }
  }
  if (Has(s, "msg=offload") || Has(s, "msg=\"offload")) {
    auto& e = line.Emit(EventKind::kOllamaOffload, kEngine);
    Set(e, Num::kOffloadLayers, NumberAfter(s, "layers.offload="));
    Set(e, Num::kModelLayers, NumberAfter(s, "layers.model="));
    Set(e, Num::kGpuOverheadBytes, QuotedBytes(s, "memory.gpu_overhead="));
    // On one GPU (no comma in layers.split), the estimate's KV cache and weights for the layers
    // it offloads: memory.required.kv and memory.weights.repeating are the whole model's
    // (llm/memory.go EstimateGPULayers sums every layer), and the GPU holds the offloaded
    // layers' share (llama.cpp places each layer's KV with the layer). rules.cc matches a
    // failed buffer's size against them.
    const auto kv = QuotedBytes(s, "memory.required.kv=");
    const auto repeating = QuotedBytes(s, "memory.weights.repeating=");
    const auto layers = NumberAfter(s, "layers.model=");
    const auto offload = NumberAfter(s, "layers.offload=");
    const size_t split = s.find("layers.split=");
    const size_t split_end = split == std::string_view::npos ? split : s.find(' ', split);
    const bool one_gpu = split != std::string_view::npos &&
                         s.substr(split, split_end == std::string_view::npos
                                             ? std::string_view::npos
                                             : split_end - split)
                                 .find(',') == std::string_view::npos;
    if (one_gpu && layers && offload && *layers > 0 && *offload > 0 && *offload <= *layers) {
      const double share = *offload / *layers;
      if (kv) Set(e, Num::kKvCacheBytes, *kv * share);
      if (repeating) Set(e, Num::kWeightsBytes, *repeating * share);
    }
  }
  // Also wrapped by a terminal over two lines (Whole).
  if (const std::string_view w = Whole(line, "requires more system memory"); !w.empty()) {
    auto& e = line.Emit(EventKind::kOllamaSystemMemory, kEngine);
    Set(e, Num::kHostRequiredBytes, BytesAfter(w, "requires more system memory ("));
    Set(e, Num::kHostAvailableBytes, BytesAfter(w, "than is available ("));
  }
  // The MLX and image-generation runners' check before they start (x/mlxrunner and x/imagegen
  // client Load, 2026: the model's size against the first GPU's free memory less
  // MinimumMemory() + OLLAMA_GPU_OVERHEAD): "model requires 20.4 GiB but only 11.3 GiB are
  // available (after 512.0 MiB overhead)", nothing loaded yet; also reflowed at a word break
  // between its two parts.
  if (const std::string_view w = WholeBoth(line, "model requires ", "are available (after");
      !w.empty() && Has(w, " but only ")) {
    auto& e = line.Emit(EventKind::kOllamaSystemMemory, kEngine);
    e.values[Num::kHost] = 0;
    Set(e, Num::kWeightsBytes, BytesAfter(w, "model requires "));
    Set(e, Num::kFreeBytes, BytesAfter(w, " but only "));
  }
  // The scheduler's earlier check (server/sched.go, PR #5469, July 2024, until the estimate
  // moved to llm/server.go): the model's estimate against system and GPU memory together,
  // "requested model (18.4 GiB) is too large for this system (6.8 GiB)", logged as
  // msg="model request too large for system" requested=... available=....
  if (const std::string_view w = Whole(line, "is too large for this system"); !w.empty() &&
      Has(w, "requested model (")) {
    auto& e = line.Emit(EventKind::kOllamaSystemMemory, kEngine);
    Set(e, Num::kHostRequiredBytes, BytesAfter(w, "requested model ("));
    Set(e, Num::kHostAvailableBytes, BytesAfter(w, "for this system ("));
  } else if (Has(s, "model request too large for system")) {
    auto& e = line.Emit(EventKind::kOllamaSystemMemory, kEngine);
    Set(e, Num::kHostRequiredBytes, QuotedBytes(s, "requested="));
    Set(e, Num::kHostAvailableBytes, QuotedBytes(s, "available="));
  }
  // The new engine's layout search (llm/server.go, 0.12+) allocates the weights, KV cache and
  // compute graph of a layout together; when none fits: "memory layout cannot be allocated" (with
  // " with num_gpu = N" when the request fixed the layers on the GPU).
  if (Has(s, "memory layout cannot be allocated")) {
    auto& e = line.Emit(EventKind::kGgmlLoadFail, kEngine);
    Set(e, Num::kOffloadLayers, NumberAfter(s, "with num_gpu ="));
  }
  // The scheduler's report of a runner that died with an out-of-memory error (server.go takes the
  // runner's last error line: "llama runner process has terminated: cudaMalloc failed: out of
  // memory"), the failure when the runner's own lines are not in the excerpt.
  // The server waits for the runner to load the model (llm/server.go WaitUntilRunning) and
  // reports its death in that wait as "llama runner process has terminated: ...", so the message
  // also says the model was loading; "starting llama server" begins that load.
  // Its older form, from the health check that wait polls (llm/server.go getServerStatus,
  // 0.1.3x-0.3): "llama runner process no longer running: <exit code> <last error>".
  // Since 0.30 (2026) the runner is llama.cpp's llama-server: "llama-server process has
  // terminated: ...", msg="llama-server process no longer running" sys="signal: killed".
  // (The llama-server era's message also where a paste reflowed it: 'msg="llama-server process
  // no' + 'longer running" sys="signal: killed"'.)
  // (Both forms also where a paste reflowed them inside "no" + "longer running".)
  const bool runner = Has(s, "runner process ") || Has(s, "llama-server process ");
  const LineView old_form = Whole(line, "runner process no longer running:");
  const bool no_longer =
      !old_form.empty() || !Whole(line, "llama-server process no longer running").empty();
  const bool terminated = runner && Has(s, "process has terminated");
  // The MLX runner likewise (x/mlxrunner/client.go, 0.17+): "starting mlx runner subprocess",
  // and its death while the server waits for it to answer, "mlx runner failed: <error> (exit:
  // ...)" (the "(exit: " form only from WaitUntilRunning): the load.
  const bool mlx_start = Has(s, "starting mlx runner subprocess") ||
                         (Has(s, "mlx runner failed:") && Has(s, "(exit: "));
  // (Since 0.30 the runner is llama.cpp's llama-server: msg="starting llama-server" cmd=...,
  // llm/llama_server.go.)
  if (terminated || no_longer || mlx_start || Has(s, "starting llama server") ||
      Has(s, "msg=\"starting llama-server\"")) {
    line.Emit(EventKind::kLoadBegin, kEngine);
  }
  // A signal ended the runner with no error of its own: exit code -1 and nothing after it
  // (getServerStatus: "Most likely a signal killed it"), or Go's "signal: killed" (SIGKILL) as
  // the wait's error. Nothing prints when the kernel's OOM killer sends SIGKILL, the usual
  // sender while a model is read into memory: host memory, as a shell's "Killed".
  // (The signal also where a paste reflowed the message before it: "...has terminated:" +
  // "signal: killed".)
  // (Also the llama-server era's error log, msg="llama-server terminated" error="signal:
  // killed", llm/llama_server.go, 0.30+.)
  auto runner_killed = [](const LineView& t) {
    return Has(t, "signal: killed") &&
           (((Has(t, "runner process ") || Has(t, "llama-server process ")) &&
             (Has(t, "process has terminated") || Has(t, "no longer running"))) ||
            Has(t, "msg=\"llama-server terminated\""));
  };
  const bool killed_runner =
      runner_killed(s) || (!line.joined.empty() && runner_killed(line.joined));
  if ((no_longer && NothingAfter(old_form.empty() ? s : old_form, "no longer running: -1")) ||
      killed_runner) {
    line.Emit(EventKind::kHostOomKill, kEngine);
  }
  if (terminated && Has(s, "out of memory")) line.Emit(EventKind::kCudaOom, kEngine);
  // The runner's death, whose message carries its last words (rules.cc reads a reservation
  // failure in them as the runner's own).
  if (terminated) line.Emit(EventKind::kOllamaRunnerDied, kEngine);
  // The new engine's allocation failure (ml/backend.go ErrNoMem, 0.11+), panicked by the runner
  // while it lays the model out (ollamarunner allocModel / reserveWorstCaseGraph) or returned to
  // the server: "insufficient memory - required allocations: {InputWeights:550502400A CPU:{Name:CPU
  // ... Weights:[...] Cache:[...] Graph:0U} GPUs:[{Name:CUDA0 ... Weights:[60561408A ...]
  // Cache:[...] Graph:1212612608F}]}". Each size carries its status (Memory.String: U not yet
  // tried, F failed, A allocated); the first F says what did not fit: a GPU's weights (the
  // load), its KV cache, its worst-case graph (the compute buffers reserved at start-up), or a
  // host buffer (the CPU's parts, the input embeddings).
  if (const LineView m = Whole(line, "required allocations"); !m.empty() &&
      Has(m, "insufficient memory")) {
    const FailedAllocation failed = FirstFailed(m.substr(m.find("required allocations")));
    if (failed.what.empty()) {
      // Nothing marked F (releases that printed sizes alone, a line cut short): the frames
      // place it (rules.cc reads reserveWorstCaseGraph as the graph's reservation).
    } else if (failed.host) {
      auto& e = line.Emit(EventKind::kHostBufferFail, kEngine);
      e.values[Num::kHost] = 1;
      if (failed.bytes > 0) e.values[Num::kRequestedBytes] = failed.bytes;
    } else {
      auto& e = line.Emit(EventKind::kGgmlAllocFail, kEngine);
      e.values[Num::kHost] = 0;
      if (failed.bytes > 0) e.values[Num::kRequestedBytes] = failed.bytes;
      if (failed.what == "Weights") line.Emit(EventKind::kGgmlLoadFail, kEngine);
      if (failed.what == "Cache") line.Emit(EventKind::kGgmlKvFail, kEngine);
      if (failed.what == "Graph") line.Emit(EventKind::kGgmlComputeFail, kEngine);
    }
  }
  // The engine's allocation of a layout failing (llm/server.go, 0.12-0.29: "failed to allocate
  // memory for model", "failed to commit memory for model"; "unable to allocate memory from
  // device CUDA0 for model weights"; not the runner's ml.ErrNoMem panic, "insufficient memory
  // - required allocations", which its frames place), a load that had to fit whole ("unable to
  // load full model on GPU", the scheduler's sentinel), and the llama-server era's startup
  // out-of-memory (0.30+, llm/llama_server.go: "llama-server reported out-of-memory during
  // startup: ..."): the model's memory did not fit as laid out, at the load.
  if (Has(s, "failed to allocate memory for model") ||
      Has(s, "failed to commit memory for model") ||
      Has(s, "unable to allocate memory from device") ||
      Has(s, "unable to load full model on GPU") ||
      Has(s, "reported out-of-memory during startup")) {
    line.Emit(EventKind::kGgmlLoadFail, kEngine);
    line.Emit(EventKind::kLoadBegin, kEngine);
  }
  // The scheduler's retry after such a failure with num_ctx left automatic (server/sched.go,
  // 0.30+): msg="llama-server load failed; reducing automatic context and retrying once"
  // old_num_ctx=32768 ... new_num_ctx=8192.
  if (Has(s, "reducing automatic context and retrying")) {
    auto& e = line.Emit(EventKind::kFitAdjust, kEngine);
    Set(e, Num::kMaxModelLen, NumberAfter(s, "old_num_ctx="));
    Set(e, Num::kEstimatedMaxModelLen, NumberAfter(s, "new_num_ctx="));
  }
  // A prompt longer than the context, refused (server/prompt.go and the runners, 400 Bad
  // Request): "the prompt is longer than the context length currently available to the model",
  // "input exceeds maximum context length", "the input length exceeds the context length".
  if (Has(s, "prompt is longer than the context length") ||
      Has(s, "input exceeds maximum context length") ||
      Has(s, "input length exceeds the context length")) {
    line.Emit(EventKind::kContextExceeded, kEngine);
  }
  // The new engine's KV cache with no free slot for a batch (kvcache/causal.go: "could not find a
  // kv cache slot (cache: 8192 batch: 512)"): full, not an allocation.
  if (Has(s, "could not find a kv cache slot") || Has(s, "unable to find a kv cache slot")) {
    line.Emit(EventKind::kKvCellsFull, kEngine);
  }
  // The runner serving: "llama runner started in 5.29 seconds" (llm/server.go, 0.1.3x+), and the
  // in-process server of 0.1.2x (llm/dyn_ext_server.go): msg="Starting llama main loop".
  // Since 0.30, "llama-server started in 6.18 seconds" (llm/llama_server.go).
  if (Has(s, "llama runner started in") || Has(s, "Starting llama main loop") ||
      Has(s, "llama-server started in")) {
    line.Emit(EventKind::kServing, kEngine);
  }
  // 0.1.2x's dyn_ext_server.go logs the images a request carries before it is evaluated
  // (msg="loaded 1 images"): the request's images are encoded next (the CLIP projector).
  if (Has(s, "msg=\"loaded ") && Has(s, " images\"")) line.Emit(EventKind::kImage, kEngine);
  if (!Whole(line, "loading cache slot").empty()) line.Emit(EventKind::kRequest, kEngine);
  // The scheduler's answer to a failed completion (server/routes.go calls
  // sched.expireRunnersForRuntimeOOM when runner.Completion returns an error, 2026 releases):
  // "runtime OOM detected; expiring loaded models to clear memory before next request". The model
  // had loaded and a request was being served; a failed load never reaches Completion.
  // The scheduler logs it only for an error llm.IsOutOfMemory matched (llm/status.go: "out of
  // memory", "cudaMalloc failed", "failed to allocate", "insufficient memory", ...), so the
  // line is the failure itself where its error's words are none the readers know.
  if (Has(s, "runtime OOM detected")) {
    auto& e = line.Emit(EventKind::kOllamaMarker, kEngine);
    Set(e, Num::kServingOom, 1);
    bool worded = false;
    for (std::string_view w :
         {"out of memory"sv, "out of device memory"sv, "cudaMalloc failed"sv, "hipMalloc failed"sv,
          "failed to allocate"sv, "allocation failed"sv, "not enough memory"sv,
          "insufficient memory"sv, "OutOfMemory"sv, "OUT_OF_DEVICE_MEMORY"sv}) {
      worded = worded || Has(s, w);
    }
    if (!worded) line.Emit(EventKind::kCudaOom, kEngine);
  }
  // The server's answer when the runner's reply to a completion stops short (its stream ends in
  // "unexpected EOF" or "forcibly closed": the runner died): "an error was encountered while
  // running the model: <the runner's last error line>" (llm/server.go Completion; llm/
  // llama_server.go from 0.30), the API's 500 body {"error":"an error was encountered ..."}.
  // A request was being served. Where the runner's last line is an out-of-memory (ggml's "CUDA
  // error: out of memory", "cudaMalloc failed: out of memory", on this line or the next), the
  // failure was that request's, as "runtime OOM detected" says.
  if (const LineView w = Whole(line, "an error was encountered while running the model");
      !w.empty()) {
    auto& e = line.Emit(EventKind::kOllamaMarker, kEngine);
    const std::string_view rest = w.substr(w.find("running the model"));
    if (Has(rest, "out of memory") || Has(rest, "CUDA error")) {
      Set(e, Num::kServingOom, 1);
      // The completion it answers: a request was being served (the runtime's milestone).
      line.Emit(EventKind::kServing, kEngine);
    }
    if (Has(rest, "out of memory")) line.Emit(EventKind::kCudaOom, kEngine);
  }
}

std::string Say(Words rule, const Facts& f) {
  // The llama.cpp buffers in Ollama's words (its settings, not llama.cpp's flags).
  switch (rule) {
    case Words::kStartupFreeMemory:
      return "the runner's CUDA backend could not create its context or read the GPU's free "
             "memory (ggml-cuda: \"failed to initialize CUDA: out of memory\"), before the model "
             "was placed: other processes hold the GPU's memory";
    case Words::kWeightBuffer: {
      const LogEvent* e = f.first_of(EventKind::kGgmlLoadFail);
      if (e && Has(e->text, "memory layout cannot be allocated")) {
        return "Ollama found no layout of the model's layers, KV cache and compute graph that "
               "fits the GPU's memory";
      }
      return "Ollama's runner could not allocate the weights of the layers it put on the GPU "
             "(num_gpu, from its offload estimate)";
    }
    case Words::kKvBuffer:
      return "Ollama's runner could not allocate the KV cache for the context (num_ctx x "
             "OLLAMA_NUM_PARALLEL)";
    case Words::kContextExceeded: {
      const LogEvent* fit = f.first_of(EventKind::kFitAdjust);
      if (const auto cut = ValueOf(fit, Num::kEstimatedMaxModelLen);
          cut && fit->engine == kEngine) {
        return fmt::format(
            "Ollama's load failed for memory and it retried with num_ctx cut to {:.0f}; a prompt "
            "longer than that context is refused",
            *cut);
      }
      return "a prompt longer than the model's context (num_ctx) is refused: no memory ran out";
    }
    case Words::kKvCellsFull:
      return "the runner's KV cache had no free slot for the batch: the context (num_ctx, shared "
             "by the parallel slots) is full";
    case Words::kContextComputeBuffer:
      return "Ollama's runner could not reserve its compute buffers when creating the context "
             "(they grow with num_ctx and num_batch)";
    case Words::kImageComputeBuffer:
      return "a compute buffer had to grow while Ollama served a request: the worst-case text "
             "batch was reserved at load, so the graph that did not fit is an image's encoding";
    case Words::kDecodeComputeBuffer:
      return "Ollama's runner could not grow a compute buffer while serving a request";
    default:
      break;
  }
  if (rule != Words::kHostMemory) return "";
  const auto need = f.get(Num::kHostRequiredBytes), have = f.get(Num::kHostAvailableBytes);
  if (need && have) {
    return fmt::format(
        "Ollama refused to load the model: it requires {} of system memory and {} is available",
        Gib(*need), Gib(*have));
  }
  if (const LogEvent* kill = f.first_of(EventKind::kHostOomKill);
      kill && kill->engine == kEngine) {
    return "a signal ended Ollama's runner while it loaded the model, with no error of its own: "
           "the kernel's OOM killer, most likely, with the system's memory (RAM) short of the "
           "part of the model kept on the CPU";
  }
  return "Ollama's runner could not allocate host memory (system RAM or pinned CUDA_Host "
         "memory) for the part of the model kept on the CPU";
}

// The log's context is num_ctx x the parallel slots (the runner's --ctx-size, KvSize); one
// slot's num_ctx, where the slots are known.
std::optional<double> SlotContext(const Facts& f) {
  const auto len = f.get(Num::kMaxModelLen);
  const auto slots = f.get(Num::kMaxNumSeqs);
  if (!len) return std::nullopt;
  return slots && *slots >= 1 ? *len / *slots : *len;
}

// num_ctx a quarter of one slot's (of the log's context where the slots are not known), tidied,
// at least 1024; "" where that is no smaller than the slot's (SmallerContextOr says
// something then).
std::string SmallerContext(const Facts& f) {
  const auto len = f.get(Num::kMaxModelLen);
  if (!len) return "PARAMETER num_ctx 4096 (or OLLAMA_CONTEXT_LENGTH=4096)";
  const bool slots = f.get(Num::kMaxNumSeqs).has_value();
  const double slot = *SlotContext(f);
  const int64_t n = std::max<int64_t>(1024, TidyContextLength(static_cast<int64_t>(slot / 4)));
  if (slots && static_cast<double>(n) >= slot) return "";
  return fmt::format("PARAMETER num_ctx {} (or OLLAMA_CONTEXT_LENGTH={})", n, n);
}

std::string SmallerContextOr(const Facts& f) {
  const std::string smaller = SmallerContext(f);
  return smaller.empty() ? "PARAMETER num_ctx 1024 (or OLLAMA_CONTEXT_LENGTH=1024)" : smaller;
}

// One eighth fewer layers than were put on the GPU (the estimate's, or the request's num_gpu).
std::string FewerLayers(const Facts& f) {
  const auto layers = f.get(Num::kOffloadLayers);
  // num_gpu = 999 and the like ask for every layer, whatever the model has.
  if (!layers || *layers < 2 || *layers > 256) {
    return "PARAMETER num_gpu lower (fewer layers on the GPU)";
  }
  const int64_t n = static_cast<int64_t>(*layers);
  return fmt::format("PARAMETER num_gpu {} ({} layers were put on the GPU)",
                     n - std::max<int64_t>(1, n / 8), n);
}

bool Fixes(Cause cause, const Facts& f, Diagnosis* d) {
  switch (cause) {
    case Cause::kKvTooLongContext: {
      if (f.has(EventKind::kContextExceeded) || f.has(EventKind::kKvCellsFull)) {
        // Where the scheduler cut num_ctx for memory, twice the cut one (a q8_0 KV cache holds
        // about twice the tokens in the memory that held the cut context); else twice the
        // slot's context where the log gives it, else a common long one.
        const auto cut = ValueOf(f.first_of(EventKind::kFitAdjust), Num::kEstimatedMaxModelLen);
        const auto base = cut ? cut : SlotContext(f);
        const int64_t n = base ? TidyContextLength(static_cast<int64_t>(*base * 2)) : 32768;
        AddFix(d,
               fmt::format("PARAMETER num_ctx {} (or OLLAMA_CONTEXT_LENGTH={}), with "
                           "OLLAMA_FLASH_ATTENTION=1 OLLAMA_KV_CACHE_TYPE=q8_0",
                           n, n),
               "a longer context for the prompt, in half the KV bytes per token");
        AddFix(d, "a shorter prompt", "within the context the model has now");
        return true;
      }
      // Several slots: one slot's cache is the context's; the others multiply it.
      const auto slots = f.get(Num::kMaxNumSeqs);
      if (slots && *slots > 1) {
        AddFix(d, "OLLAMA_NUM_PARALLEL=1",
               fmt::format("the runner holds a KV cache of num_ctx tokens for each of its {:.0f} "
                           "parallel slots; one slot needs 1/{:.0f} of the memory",
                           *slots, *slots));
      }
      if (const std::string smaller = SmallerContext(f); !smaller.empty()) {
        AddFix(d, smaller, "the KV cache grows linearly with the context");
      }
      AddFix(d, "OLLAMA_FLASH_ATTENTION=1 OLLAMA_KV_CACHE_TYPE=q8_0",
             "a quantized KV cache: about half the bytes per token");
      if (!slots) {
        AddFix(d, "OLLAMA_NUM_PARALLEL=1", "each parallel slot adds a context's KV cache");
      }
      return true;
    }
    case Cause::kComputeBuffer:
    case Cause::kActivationPeak:
      // A buffer that grew while serving (the CUDA pool, an image's graph) is outside what the
      // offload estimate counted; OLLAMA_GPU_OVERHEAD (envconfig, 0.3.11+: bytes kept free per
      // GPU) makes the estimate place fewer layers.
      if (d->stage == "runtime") {
        AddFix(d, "OLLAMA_GPU_OVERHEAD=1073741824",
               "reserves 1 GiB per GPU outside Ollama's estimate for buffers that grow while "
               "serving, so it places fewer layers");
      }
      AddFix(d, "OLLAMA_FLASH_ATTENTION=1", "a smaller attention compute buffer");
      AddFix(d, "PARAMETER num_batch 256", "the compute buffer grows with the batch");
      AddFix(d, SmallerContextOr(f), "the compute buffer grows with the context too");
      return true;
    case Cause::kWeightsTooLarge:
      // The MLX runner's own refusal (host 0 on the system-memory event): it places the whole
      // model on the first GPU, so neither num_gpu nor the overhead changes its check.
      if (const LogEvent* e = f.first_of(EventKind::kOllamaSystemMemory);
          e && e->values.count(Num::kHost) && e->values.at(Num::kHost) == 0) {
        AddFix(d, "a smaller quantization of the model, or its GGUF tag",
               "the MLX runner needs the whole model in GPU memory; Ollama's llama engine (GGUF) "
               "can keep layers on the CPU");
        AddFix(d, "free GPU memory: unload other models (ollama stop), quit other programs",
               "the check counts the GPU's free memory at the moment of the request");
        return true;
      }
      if (const LogEvent* e = f.first_of(EventKind::kGgmlLoadFail);
          e && Has(e->text, "with num_gpu =")) {
        AddFix(d, "num_gpu left out of the request and the Modelfile",
               "the request fixed the layers on the GPU; without it Ollama searches for a "
               "layout that fits and keeps the rest on the CPU");
      }
      AddFix(d, FewerLayers(f),
             "Ollama's estimate left too little room: the rest stays on the CPU");
      AddFix(d, "OLLAMA_GPU_OVERHEAD=1073741824",
             "reserves 1 GiB of the GPU outside Ollama's estimate, so it places fewer layers");
      return true;
    case Cause::kMultimodalEncoder:
      AddFix(d, "smaller images (resize before sending)",
             "the vision encoder's buffers grow with the image's pixels");
      AddFix(d, FewerLayers(f), "leaves room on the GPU for the projector's buffers");
      AddFix(d, "OLLAMA_GPU_OVERHEAD=1073741824", "reserves room outside Ollama's estimate");
      return true;
    case Cause::kHostMemory: {
      const auto need = f.get(Num::kHostRequiredBytes), have = f.get(Num::kHostAvailableBytes);
      AddFix(d, "free system RAM: close other programs, OLLAMA_MAX_LOADED_MODELS=1",
             need && have ? fmt::format("{} short of what the model requires", Gib(*need - *have))
                          : "the host part of the model did not fit in system memory");
      AddFix(d, SmallerContextOr(f) + ", OLLAMA_NUM_PARALLEL=1",
             "a smaller context shrinks the memory Ollama requires");
      AddFix(d, "a smaller quantization or model tag", "fewer weight bytes to hold");
      return true;
    }
    case Cause::kFragmentation:
      return false;
    case Cause::kOtherProcess:
      AddOthersHeldFixes(
          d, "free the GPU: quit the other programs on it, unload other models (ollama stop)",
          "OLLAMA_GPU_OVERHEAD=1073741824",
          "reserves 1 GiB per GPU outside Ollama's estimate for what others take meanwhile, so "
          "it places fewer layers");
      return true;
    default:
      AddFix(d, FewerLayers(f), "less of the model on the GPU leaves room for the rest");
      AddFix(d, SmallerContextOr(f), "a smaller KV cache and compute buffer");
      return true;
  }
}

// Ollama starts a runner for each model load: msg="starting llama server" (llm/server.go,
// 0.1-0.5), msg="starting runner" (0.6+) and msg="starting llama-server" (0.30+); the server
// itself "Listening on ADDR (version V)" (server/routes.go). A load retried after a failure is a
// new run.
bool BeginsRun(const Line& line) {
  const LineView s = line.view();
  return Has(s, "msg=\"starting llama server\"") || Has(s, "msg=\"starting runner\"") ||
         Has(s, "msg=\"starting llama-server\"") ||
         (Has(s, "msg=\"Listening on ") && Has(s, "(version "));
}

}  // namespace

const Reader& OllamaReader() {
  static const Reader kReader = {
      .engine = kEngine,
      .match = Match,
      .milestones = {{EventKind::kLoadBegin, Stage::kLoad},
                     {EventKind::kOllamaOffload, Stage::kLoad},
                     {EventKind::kServing, Stage::kRuntime},
                     {EventKind::kRequest, Stage::kRuntime}},
      .fixes = Fixes,
      .words = Say,
      .begins_run = BeginsRun,
      .wraps = "llama.cpp",
  };
  return kReader;
}

}  // namespace vramfit::doctor
