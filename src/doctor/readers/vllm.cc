// vLLM's log reader (readers/reader.h): its lines as vLLM prints them (V1's gpu_worker,
// gpu_model_runner and kv_cache_utils; V0's worker, model_runner and llm_engine; the engine
// config), the phases they mark, vLLM's words for the rules about its behaviour, its flags as
// fixes (also the default fixes for engines without their own), and the flags a log implies
// (the V0 engine) for rebuilding the run's plan.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>

#include "core/text.h"
#include "core/units.h"
#include "doctor/readers/reader.h"
#include "vramfit/advice.h"

namespace vramfit::doctor {

// Lists of literals are written "..."sv: their lengths are known when compiled (a list of
// pointers is measured with strlen on every pass of a loop, on every line of a log).
using std::string_view_literals::operator""sv;
namespace {

constexpr char kEngine[] = "vllm";
// V0's "# GPU blocks: N" counts blocks of 16 tokens (its default block size).
constexpr int64_t kBlockTokens = 16;

// The model path or id a command line or config line names.
std::string ModelPath(std::string_view s) {
  for (std::string_view key :
       {"--model "sv, "--model="sv, "model='"sv, "Starting to load model "sv, "vllm serve "sv}) {
    size_t at = s.find(key);
    if (at == std::string_view::npos) continue;
    size_t b = at + key.size();
    size_t e = b;
    while (e < s.size() && s[e] != ' ' && s[e] != '\'' && s[e] != ',' && s[e] != '"' && e - b < 200)
      ++e;
    std::string m(s.substr(b, e - b));
    while (!m.empty() && m.back() == '.') m.pop_back();
    if (!m.empty() && m[0] != '-') return m;
  }
  return "";
}

// transformers' pipeline factory, pipeline('<task>', model='<id>', ...): its model= is not
// vLLM's engine config (the transformers reader reads the call).
bool TransformersPipeline(const LineView& s) {
  return Has(s, "pipeline('") || Has(s, "pipeline(\"");
}

// Whether the line, or the previous line joined to it, holds one of `keys`.
bool AnyHolds(const Line& line, std::initializer_list<std::string_view> keys) {
  for (std::string_view k : keys) {
    if (!Whole(line, k).empty()) return true;
  }
  return false;
}

// The figure after `key` (with its unit when `bytes`) in the line, else in the previous line
// joined to it (tight first): a figure that runs to a text's end (unless it has its two
// decimals), or bytes without their unit, may be cut by a wrap and are not read from that text.
std::optional<double> WrappedFigure(const Line& line, std::string_view key, bool bytes) {
  for (const LineView& t : {line.view(), line.joined_tight, line.joined}) {
    if (!Has(t, key)) continue;
    size_t end = 0;
    const auto n = NumberAfter(t, key, 0, &end);
    if (!n) continue;
    size_t last = t.size();
    while (last > 0 && (t[last - 1] == ' ' || t[last - 1] == '\r')) --last;
    if (end >= last) {
      // At the text's end: whole only as vLLM prints its fractions, with two decimals ("%.2f").
      size_t d = end;
      while (d > 0 && std::isdigit(static_cast<unsigned char>(t[d - 1]))) --d;
      if (bytes || end - d < 2 || d == 0 || t[d - 1] != '.') continue;
    }
    if (!bytes) return n;
    size_t unit_end = 0;
    const auto b = BytesAfter(t, key, 0, &unit_end);
    if (b && unit_end > 0 && std::isalpha(static_cast<unsigned char>(t[unit_end - 1]))) return b;
  }
  return std::nullopt;
}

void MatchProfile(const Line& line) {
  const LineView s = line.view();
  if (Has(s, "Loading model weights took") || Has(s, "Model loading took")) {
    // (A size cut from its unit at the line's end, "took 27.52" + "GiB and 88.1 seconds", is
    // read on the next line, from the two joined.)
    auto& e = line.Emit(EventKind::kWeightsLoaded, kEngine);
    Set(e, Num::kWeightsBytes, SizeWithUnit(s, " took"));
  } else if (const LineView t = Has(s, "GiB") || Has(s, "GB") ? Whole(line, "Model loading took")
                                                               : LineView();
             !t.empty()) {
    // The milestone a terminal cut inside its words ("Model loading t" + "ook 15.47 GiB").
    Set(line.Emit(EventKind::kWeightsLoaded, kEngine), Num::kWeightsBytes,
        WrappedFigure(line, "Model loading took", true));
  }
  // The breakdown and budget lines are long: also read when a terminal wrapped them, each
  // figure from the text that holds it whole (WrappedFigure).
  if (AnyHolds(line, {"non_torch_memory takes", "activation peak memory takes",
                      "reserved for KV Cache is"})) {
    auto& e = line.Emit(EventKind::kProfileBreakdown, kEngine);
    Set(e, Num::kWeightsBytes, WrappedFigure(line, "model weights take", true));
    Set(e, Num::kNonTorchBytes, WrappedFigure(line, "non_torch_memory takes", true));
    Set(e, Num::kActivationPeakBytes, WrappedFigure(line, "activation peak memory takes", true));
    Set(e, Num::kKvCacheBytes, WrappedFigure(line, "reserved for KV Cache is", true));
  } else if (AnyHolds(line,
                      {"Memory profiling results:", "peak_torch_memory=", "kv_cache_size="})) {
    auto& e = line.Emit(EventKind::kProfileBreakdown, kEngine);  // the 0.6.4 one-line form
    Set(e, Num::kTotalBytes, WrappedFigure(line, "total_gpu_memory=", true));
    Set(e, Num::kPeakTorchBytes, WrappedFigure(line, "peak_torch_memory=", true));
    Set(e, Num::kNonTorchBytes, WrappedFigure(line, "non_torch_memory=", true));
    Set(e, Num::kKvCacheBytes, WrappedFigure(line, "kv_cache_size=", true));
    Set(e, Num::kGpuMemoryUtilization, WrappedFigure(line, "gpu_memory_utilization=", false));
  } else {
    // The multi-line form of Dec 2024: "model weights take   14.96GiB" etc., one per line.
    static const std::array<std::pair<std::string_view, Num>, 6> kItems = {{
        {"] total_gpu_memory ", Num::kTotalBytes},
        {"] model weights take ", Num::kWeightsBytes},
        {"] non_torch_memory ", Num::kNonTorchBytes},
        {"] PyTorch activation peak memory ", Num::kActivationPeakBytes},
        {"] available_kv_cache_memory ", Num::kKvCacheBytes},
        {"] gpu_memory_utilization ", Num::kGpuMemoryUtilization},
    }};
    for (const auto& [key, name] : kItems) {
      if (Has(s, key)) {
        auto& e = line.Emit(EventKind::kProfileItem, kEngine);
        Set(e, name, WrappedFigure(line, key, name != Num::kGpuMemoryUtilization));
      }
    }
  }
  if (AnyHolds(line, {"x gpu_memory_utilization ("})) {
    auto& e = line.Emit(EventKind::kBudget, kEngine);
    Set(e, Num::kTotalBytes, WrappedFigure(line, "total_gpu_memory (", true));
    Set(e, Num::kGpuMemoryUtilization, WrappedFigure(line, "gpu_memory_utilization (", false));
    Set(e, Num::kBudgetBytes, WrappedFigure(line, ") = ", true));
  }
  // Also wrapped over two lines; a terminal's wrap may cut a number, so the tight join first.
  // Also retold in lower case ("free memory on device cuda:0 (46.95/79.18 GiB) on startup is
  // less than ...", an issue's title): "ree memory on device" is the key.
  LineView fm = s;
  if (!Has(s, "ree memory on device") || !Has(s, "on startup")) {
    fm = {};
    for (const LineView& t : {line.joined_tight, line.joined}) {
      if (Has(t, "ree memory on device") && Has(t, "on startup")) {
        fm = t;
        break;
      }
    }
  }
  if (!fm.empty()) {
    // The refusal wrapped after "is less than" (or "is less", "is") reads as the error on its
    // first line already: the profile's own summary says "on startup. Desired ...".
    std::string_view tail = fm;
    while (!tail.empty() && (tail.back() == ' ' || tail.back() == '\r')) tail.remove_suffix(1);
    const bool error = Has(fm, "is less than desired") || Has(fm, "on startup is less") ||
                       tail.ends_with("on startup is");
    auto& e = line.Emit(error ? EventKind::kStartupError : EventKind::kProfileV1, kEngine);
    // "(21.5/23.5 GiB)": the unit follows the total. Since 0.11 the device is named first,
    // "Free memory on device cuda:0 (22.76/24.0 GiB)" (vllm/v1/worker/utils.py request_memory).
    const size_t open = fm.find('(', fm.find("ree memory on device"));
    const size_t slash = open == std::string_view::npos ? open : fm.find('/', open);
    if (slash != std::string_view::npos) {
      auto free = NumberAt(fm, open + 1);
      auto total = BytesAfter(fm, "/", slash);
      auto total_plain = NumberAfter(fm, "/", slash);
      // (A unit cut off by a wrap leaves the plain number: not read.)
      if (free && total && total_plain && *total_plain > 0 && *total > *total_plain) {
        Set(e, Num::kFreeBytes, *free * (*total / *total_plain));
        Set(e, Num::kTotalBytes, *total);
      }
    }
    Set(e, Num::kGpuMemoryUtilization, NumberAfter(fm, "memory utilization ("));
    size_t comma = fm.find(", ", fm.find("memory utilization ("));
    if (comma != std::string_view::npos) {
      const auto budget = BytesAfter(fm, ", ", comma);
      if (budget && budget != NumberAfter(fm, ", ", comma)) Set(e, Num::kBudgetBytes, budget);
    }
    if (!error) {
      Set(e, Num::kConsumedBytes, BytesAfter(fm, "Actual usage is"));
      Set(e, Num::kActivationPeakBytes, BytesBefore(fm, "for peak activation", ", "));
      Set(e, Num::kCudagraphBytes, BytesBefore(fm, "for CUDAGraph memory", "and "));
    }
  }
}

bool IsMaxLenError(const LineView& s) {
  return ((Has(s, "max seq len (") || Has(s, "max_model_len (")) &&
          (Has(s, "larger than the maximum number of tokens") || Has(s, "KV cache is needed"))) ||
         // The check's second half alone is the engine's words, however the first half came out
         // when someone retyped the message ("The model's max sew len (32768) is larger than").
         Has(s, "maximum number of tokens that can be stored in KV cache (");
}
// The same check quoted in short, as people retell it in notes and issues ("ValueError: max seq
// len 200000 needs 13.86 GiB KV, only 10.2 GiB available."): the length, what it needs and
// what is available, in one line.
bool IsRetoldMaxLenError(const LineView& s) {
  return (Has(s, "max seq len") || Has(s, "max_model_len")) && Has(s, " needs ") &&
         Has(s, "KV") && Has(s, "available") && !IsMaxLenError(s);
}

void MaxLenError(const Line& line, std::string_view s) {
  auto& e = line.Emit(EventKind::kMaxLenError, kEngine);
  if (Has(s, "max seq len (") || Has(s, "max_model_len (")) {
    Set(e, Num::kMaxModelLen,
        NumberAfter(s, Has(s, "max seq len (") ? "max seq len (" : "max_model_len ("));
  } else if (const size_t larger = s.find(" is larger than"); larger != std::string_view::npos) {
    // The length in the parenthesis just before "is larger than", whatever the words before it.
    const size_t open = s.substr(0, larger).rfind('(');
    if (open != std::string_view::npos) {
      Set(e, Num::kMaxModelLen, NumberAfter(s.substr(open, larger - open), "("));
    }
  }
  if (Has(s, "stored in KV cache (")) {
    Set(e, Num::kKvCacheTokens, NumberAfter(s, "stored in KV cache ("));
  }
  if (Has(s, "KV cache is needed")) {
    // The size just before the words, with its unit: "(X GiB KV cache is needed" (the releases
    // that open a parenthesis there), "(1048576), X GiB KV cache is needed" (those that do not:
    // the length's bare number is not the size), or the clause opening its line.
    std::optional<double> need = SizeBefore(s, "KV cache is needed", ", ");
    if (!need) need = SizeAfter(s.substr(0, s.find("KV cache is needed")), "");
    Set(e, Num::kKvNeededBytes, need);
    Set(e, Num::kKvCacheBytes, BytesAfter(s, "available KV cache memory ("));
  }
  Set(e, Num::kEstimatedMaxModelLen, NumberAfter(s, "estimated maximum model length is"));
}

constexpr std::string_view kSamplerWarmupWords[] = {
    "sampler warmup", "sampler warm-up", "sampler warm up", "warming up the sampler",
    "warming up sampler", "warmup of the sampler", "warm-up of the sampler"};

// The words of a report that name the sampler's warm-up and an out-of-memory failure on one line
// (not a traceback's source line).
bool SamplerWarmupWords(std::string_view t) {
  if (t.find("File \"") != std::string_view::npos) return false;
  const std::string lower = core::AsciiLower(t);
  const bool warmup = std::any_of(
      std::begin(kSamplerWarmupWords), std::end(kSamplerWarmupWords),
      [&](std::string_view w) { return lower.find(w) != std::string::npos; });
  if (!warmup) return false;
  if (lower.find("out of memory") != std::string::npos) return true;
  // "OOM" as a word ("room", "bloom" are not).
  for (size_t at = lower.find("oom"); at != std::string::npos; at = lower.find("oom", at + 3)) {
    const bool open = at == 0 || !std::isalpha(static_cast<unsigned char>(lower[at - 1]));
    const bool close = at + 3 >= lower.size() ||
                       !std::isalpha(static_cast<unsigned char>(lower[at + 3])) ||
                       lower.compare(at + 3, 2, "ed") == 0 || lower.compare(at + 3, 1, "s") == 0;
    if (open && close) return true;
  }
  return false;
}

// A request refused as longer than the context (MatchKvCache): `words` on the line (or across
// its wrap), with the request's tokens after `asked` and the limit after `limit`. The key a
// literal: its hashes are constants in the line's byte-pair test.
template <size_t N>
bool ReadRefusal(const Line& line, const char (&words)[N], std::string_view asked,
                 std::string_view limit) {
  const std::string_view w = Whole(line, words);
  if (w.empty() || w.find(asked) == std::string_view::npos) return false;
  auto& e = line.Emit(EventKind::kContextExceeded, kEngine);
  Set(e, Num::kPromptTokens, NumberAfter(w, asked));
  Set(e, Num::kMaxModelLen, NumberAfter(w, limit));
  return true;
}

void MatchKvCache(const Line& line) {
  const LineView s = line.view();
  MatchOneValue(
      line, kEngine,
      {{"Available KV cache memory:", EventKind::kKvAvailable, Num::kKvCacheBytes, true},
       {"GPU KV cache size:", EventKind::kKvTokens, Num::kKvCacheTokens, false},
       {"warming up sampler with", EventKind::kSamplerOom, Num::kMaxNumSeqs, false},
       {"Estimated CUDA graph memory:", EventKind::kGraphEstimate, Num::kCudagraphBytes, true}});
  // The sampler's message wrapped inside its key: read from the two lines joined.
  if (!Has(s, "warming up sampler with")) {
    if (const std::string_view t = Whole(line, "warming up sampler with"); !t.empty()) {
      Set(line.Emit(EventKind::kSamplerOom, kEngine), Num::kMaxNumSeqs,
          NumberAfter(t, "warming up sampler with"));
    }
  }
  // A pooling model's counterpart (gpu_model_runner.py _dummy_pooler_run, 0.10+): "CUDA out of
  // memory occurred when warming up pooler (task='embed') with N dummy requests".
  if (const std::string_view t = Whole(line, "when warming up pooler"); !t.empty()) {
    auto& e = line.Emit(EventKind::kSamplerOom, kEngine);
    Set(e, Num::kMaxNumSeqs, NumberAfter(t, ") with "));
  }
  // The sampler warm-up's failure retold in a report's words ("CUDA out of memory during sampler
  // warmup", "OOM in the sampler warm-up"): the same failure, its request count unsaid.
  if (Has(s, "ampler") && !Has(s, "warming up sampler with") && SamplerWarmupWords(line.text)) {
    line.Emit(EventKind::kSamplerOom, kEngine);
  }
  // --kv-cache-memory-bytes (gpu_worker.py determine_available_memory, 0.11+): "Initial free
  // memory 78.68 GiB, reserved 20.00 GiB memory for KV Cache as specified by
  // kv_cache_memory_bytes config and skipped memory profiling." The pool's size, as the available
  // KV memory, and that the flag fixed it.
  if (const std::string_view t = Whole(line, "memory for KV Cache as specified by"); !t.empty()) {
    auto& e = line.Emit(EventKind::kKvAvailable, kEngine);
    const auto bytes = BytesAfter(t, "reserved ");
    Set(e, Num::kKvCacheBytes, bytes);
    Set(e, Num::kFixedKvBytes, bytes);
  }
  if (Has(s, "Maximum concurrency for")) {
    auto& e = line.Emit(EventKind::kMaxConcurrency, kEngine);
    size_t end = 0;
    Set(e, Num::kMaxModelLen, NumberAfter(s, "Maximum concurrency for", 0, &end));
    if (end) Set(e, Num::kMaxConcurrency, NumberAfter(s, "per request:", end));
  }
  // verl's vendored V0 engine (verl/third_party/vllm/vllm_v_0_*/llm_engine_sp.py
  // _initialize_kv_caches, verl 0.1-0.3) prints "before init cache memory allocated: 5.97GB,
  // reserved: 6.08GB" once the profile has sized the blocks, just before the workers allocate
  // them (and "after init cache ..." once they have): the KV cache's allocation.
  if (Has(s, "before init cache memory allocated:")) {
    line.Emit(EventKind::kGpuBlocks, kEngine);
    line.Emit(EventKind::kVllmV0, kEngine);
  }
  if (Has(s, "# GPU blocks:") || Has(s, "# cuda blocks:") || Has(s, "# CUDA blocks:")) {
    auto& e = line.Emit(EventKind::kGpuBlocks, kEngine);
    Set(e, Num::kGpuBlocks,
        Has(s, "# GPU blocks:")    ? NumberAfter(s, "# GPU blocks:")
        : Has(s, "# cuda blocks:") ? NumberAfter(s, "# cuda blocks:")
                                   : NumberAfter(s, "# CUDA blocks:"));
  }
  // The max-length check, also wrapped over two lines (read from the two joined, at a space or
  // mid-word).
  if (IsMaxLenError(s)) {
    MaxLenError(line, s);
  } else if (IsRetoldMaxLenError(s)) {
    auto& e = line.Emit(EventKind::kMaxLenError, kEngine);
    Set(e, Num::kMaxModelLen,
        NumberAfter(s, Has(s, "max seq len") ? "max seq len" : "max_model_len"));
    Set(e, Num::kKvNeededBytes, BytesAfter(s, " needs "));
    Set(e, Num::kKvCacheBytes, BytesAfter(s, " only "));
  } else if (!line.joined.empty() && IsMaxLenError(line.joined)) {
    MaxLenError(line, line.joined);
  } else if (!line.joined_tight.empty() && IsMaxLenError(line.joined_tight)) {
    MaxLenError(line, line.joined_tight);
  } else if (!line.spaced.empty() && IsMaxLenError(line.spaced)) {
    // A reflow at a terminal's usual width read as its wrap ("... stored in KV" + "cache (N)"
    // joined mid-word): the message with the space put back.
    MaxLenError(line, line.spaced);
  } else if (Has(s, "KV cache is needed, which is larger than the available KV cache") ||
             Has(s, "To serve at least one request with the model")) {
    // Either clause of V1's check on a line of its own, the other beyond a blank line or cut
    // (kv_cache_utils.py check_enough_kv_cache_memory: "To serve at least one request with the
    // model's max seq len (N), (X GiB KV cache is needed, which is larger than the available KV
    // cache memory (Y GiB). ..."): the values of the line are read as they are.
    MaxLenError(line, s);
  } else if (const LineView t =
                 WholeBoth(line, "KV cache is needed", "than the available KV cache memory");
             !t.empty()) {
    // The second clause alone, wrapped over two lines ("16.44 GiB KV cache is needed, which is
    // larger than the" + "available KV cache memory (14.25 GiB)", as notes reflow it).
    MaxLenError(line, t);
  } else if (constexpr std::string_view kEstimated = "estimated maximum model length is";
             Has(s, kEstimated) ||
             (Has(s, "maximum model length is") && Has(line.joined_tight, kEstimated))) {
    // The error's last sentence on a line of its own (or quoted alone in a report's prose:
    // "vLLM refuses with 'estimated maximum model length is 25968'").
    const std::string_view t = Has(s, kEstimated) ? s : line.joined_tight;
    auto& e = line.Emit(EventKind::kMaxLenError, kEngine);
    Set(e, Num::kEstimatedMaxModelLen, NumberAfter(t, kEstimated));
  } else if (constexpr std::string_view kRetold = "stimated max model length";
             Has(s, kRetold) && (Has(s, "=") || Has(s, ":"))) {
    // Retold in short ("Estimated max model length = 147,136."), the sentence's figure.
    auto& e = line.Emit(EventKind::kMaxLenError, kEngine);
    Set(e, Num::kEstimatedMaxModelLen,
        NumberAfter(s, Has(s, "=") ? std::string_view("=") : std::string_view(":"),
                    s.find(kRetold)));
  }
  // max_model_len "auto" fitted to the memory (v1/core/kv_cache_utils.py
  // _auto_fit_max_model_len, 2026): "Auto-fit max_model_len: reduced from 131072 to 77824 to
  // fit in available GPU memory (9.5 GiB available for KV cache)".
  if (Has(s, "Auto-fit max_model_len: reduced from")) {
    size_t end = 0;
    auto& e = line.Emit(EventKind::kFitAdjust, kEngine);
    Set(e, Num::kMaxModelLen, NumberAfter(s, "reduced from", 0, &end));
    if (end) Set(e, Num::kEstimatedMaxModelLen, NumberAfter(s, " to ", end));
    Set(e, Num::kKvCacheBytes, BytesAfter(s, "available GPU memory ("));
  }
  // A request longer than max_model_len, refused before it runs: the OpenAI server's "This
  // model's maximum context length is 32768 tokens. However, you requested 40000 tokens (39000
  // in the messages, 1000 in the completion)" (entrypoints/openai/serving_engine.py
  // _validate_input; "... and your request has N input tokens" in later releases), and V1's
  // input check "The decoder prompt (length 140000) is longer than the maximum model length of
  // 131072" (v1/engine/processor.py, input_processor.py _validate_model_input).
  if (const std::string_view t = Whole(line, "maximum context length is "); !t.empty()) {
    const size_t at = t.find("maximum context length is ");
    std::optional<double> asked;
    for (std::string_view key : {"you requested "sv, "your request has "sv, "resulted in "sv}) {
      if (!asked) asked = NumberAfter(t, key, at);
    }
    if (asked) {
      auto& e = line.Emit(EventKind::kContextExceeded, kEngine);
      Set(e, Num::kMaxModelLen, NumberAfter(t, "maximum context length is ", at));
      Set(e, Num::kPromptTokens, asked);
    }
  } else if (const std::string_view d =
                 WholeBoth(line, "prompt (length ", "longer than the maximum model length of");
             !d.empty()) {
    auto& e = line.Emit(EventKind::kContextExceeded, kEngine);
    Set(e, Num::kPromptTokens, NumberAfter(d, "prompt (length "));
    Set(e, Num::kMaxModelLen, NumberAfter(d, "maximum model length of "));
  }
  // The other wordings of the same refusal: V1's "Prompt length of N is longer than the maximum
  // model length of M." (v1/engine/processor.py, 0.7-0.8), a multimodal prompt's "The prompt
  // (total length N) is too long to fit into the model (context length M)" (llm_engine.py and
  // processor.py, 0.6-0.8), the renderer's "You passed N input tokens and requested M output
  // tokens. However, the model's context length is only T" (renderers/params.py, 2026), the
  // Responses API's "The engine prompt length N exceeds the max_model_len M" (0.11.1+), and
  // "Input length (N) exceeds model's maximum context length (M)" (entrypoints/utils.py
  // get_max_tokens, 2026); V0's scheduler ignoring a prompt over its limit ("Input prompt (N
  // tokens) is too long and exceeds limit of M", core/scheduler.py _schedule_prefills, 0.6-0.10).
  (void)(ReadRefusal(line, "is longer than the maximum model length of", "Prompt length of",
                     "maximum model length of") ||
         ReadRefusal(line, "is too long to fit into the model", "(total length",
                     "(context length") ||
         ReadRefusal(line, "However, the model's context length is only", "You passed",
                     "context length is only") ||
         ReadRefusal(line, "exceeds the max_model_len", "engine prompt length",
                     "exceeds the max_model_len") ||
         ReadRefusal(line, "exceeds model's maximum context length", "Input length (",
                     "maximum context length (") ||
         ReadRefusal(line, "is too long and exceeds limit of", "Input prompt (",
                     "exceeds limit of"));
  // V0's scheduler finding a prompt or a swapped-in sequence larger than the whole KV cache
  // ("Input prompt (N tokens) [+ lookahead slots (L)] is too long and exceeds the capacity of
  // block_manager", _schedule_prefills, 0.6-0.10; "Failing the request RID because there's not
  // enough kv cache blocks to run the entire sequence.", _schedule_swapped): the cache holds
  // fewer tokens than one request.
  if (const std::string_view w = Whole(line, "exceeds the capacity of block_manager"); !w.empty()) {
    auto& e = line.Emit(EventKind::kContextExceeded, kEngine);
    Set(e, Num::kPromptTokens, NumberAfter(w, "Input prompt ("));
    e.text = "kv_capacity";
  } else if (Has(s, "not enough kv cache blocks to run the entire sequence")) {
    line.Emit(EventKind::kContextExceeded, kEngine).text = "kv_capacity";
  }
  // The KV block pool empty while scheduling: V0's block manager ("Out of memory! No free blocks
  // are available.", core/block_manager_v1.py, 0.6.0-0.6.3; "No usable cache memory left",
  // core/evictor.py with prefix caching, 0.6-0.10) and V1's ("Cannot get N free blocks from the
  // pool", v1/core/block_pool.py; "No free blocks available", kv_cache_utils.py
  // FreeKVCacheBlockQueue.popleft, 0.7+): the running sequences took every block.
  if (Has(s, "No free blocks are available") || Has(s, "No usable cache memory left") ||
      (Has(s, "Cannot get ") && Has(s, "free blocks from the pool")) ||
      Has(s, "No free blocks available")) {
    line.Emit(EventKind::kSglangTokenOom, kEngine).text = "kv_blocks";
  }
  // A worker killed with SIGKILL as the engine started (v1/engine/utils.py
  // wait_for_engine_startup, 0.10+: "Engine core initialization failed. See root cause above.
  // Failed core proc(s): {'EngineCore_DP0': -9}"): the kernel's OOM killer, on host memory.
  if (const std::string_view w = Whole(line, "Failed core proc(s):"); !w.empty() &&
      (Has(w, "': -9}") || Has(w, "': -9,"))) {
    line.Emit(EventKind::kHostOomKill, kEngine);
  }
  // 0.11.0's own messages for an out-of-memory while the model is built
  // (model_executor/layers/linear.py UnquantizedLinearMethod.create_weights: "Failed to create
  // unquantized linear weights. This may be caused by insufficient memory to allocate the
  // weight."; attention/layer.py Attention.__init__: "Failed to initialize q/k/v range constants.
  // This may be caused by insufficient memory to allocate kv cache."): the load.
  if (Has(s, "Failed to create unquantized linear weights") ||
      Has(s, "Failed to initialize q/k/v range constants")) {
    line.Emit(EventKind::kCudaOom, kEngine);
    line.Emit(EventKind::kFrame, kEngine).text = "create_weights (vLLM's message)";
  }
  // A multimodal item whose embeddings exceed the encoder cache fixed at start-up, refused
  // before the encoder runs (v1/engine/input_processor.py _validate_model_input, 2026: "The
  // decoder prompt contains a(n) image item with N embedding tokens, which exceeds the
  // pre-allocated encoder cache size M").
  if (const std::string_view w = Whole(line, "exceeds the pre-allocated encoder cache size");
      !w.empty()) {
    auto& e = line.Emit(EventKind::kContextExceeded, kEngine);
    Set(e, Num::kPromptTokens, NumberAfter(w, "item with"));
    e.text = "encoder_cache";
  }
  // The loader's warning that the checkpoint will not fit in host memory
  // (model_loader/weight_utils.py safetensors_weights_iterator, 2026: "checkpoint total size (X
  // GiB) exceeds 90% of available RAM (Y GiB). This may cause out-of-memory errors.").
  if (Has(s, "of available RAM") && Has(s, "checkpoint total size")) {
    line.Emit(EventKind::kConfig, kEngine).values[Num::kHostRamWarned] = 1;
  }
  // V0's swap space, pinned in host memory, allocated after the GPU cache (worker/
  // cache_engine.py CacheEngine.__init__: "self.cpu_cache = self._allocate_kv_cache(
  // self.num_cpu_blocks, \"cpu\")", 0.6-0.10; --swap-space GiB a GPU): its code line under the
  // frame, read as the frame of that host allocation.
  if (line.after_frame && Has(s, "self.cpu_cache = self._allocate_kv_cache(")) {
    line.Emit(EventKind::kFrame, kEngine).text = "allocate_cpu_cache (its call)";
  }
  // V1's KV offloading to host memory (--kv-offloading-size, OffloadingConnector; v1/kv_offload/
  // cpu.py get_handlers -> worker/cpu_gpu.py CpuGpuOffloadingHandlers.__init__, 0.11+), which
  // allocates its CPU blocks with torch.zeros(..., device="cpu", pin_memory=True): a failure
  // there is CUDA's page-locked host allocation ("CUDA error: out of memory"), host memory.
  if (!Whole(line, "CpuGpuOffloadingHandlers(").empty()) {
    line.Emit(EventKind::kFrame, kEngine).text = "kv_offload_pinned (its call)";
  }
  // The CPU backend's checks of host memory (v1/worker/cpu_worker.py, 2026): "Available memory
  // on node N (F/T GiB) on startup is less than desired CPU memory utilization (U, B GiB)"
  // (CPUWorker.__init__: there --gpu-memory-utilization is the fraction of the host's memory),
  // and "... on kv cache allocation is less than requested memory for kv (K/B GiB)"
  // (determine_available_memory).
  if (const std::string_view w = Whole(line, "on startup is less than desired CPU memory");
      !w.empty()) {
    auto& e = line.Emit(EventKind::kOllamaSystemMemory, kEngine);
    e.text = "cpu_backend";
  }
  if (const std::string_view w = Whole(line, "on kv cache allocation is less than requested");
      !w.empty()) {
    line.Emit(EventKind::kNoKvMemory, kEngine).text = "cpu_backend";
  }
  // Hybrid models (V1 0.10+): one Mamba state block per running sequence, from the KV budget.
  if (const std::string_view t = Whole(line, "exceeds available Mamba cache blocks"); !t.empty()) {
    auto& e = line.Emit(EventKind::kMambaBlocks, kEngine);
    Set(e, Num::kMaxNumSeqs, NumberAfter(t, "max_num_seqs ("));
    Set(e, Num::kMambaBlocks, NumberAfter(t, "available Mamba cache blocks ("));
  }
  // The profiler's check that free memory did not grow while it measured (V1).
  // (Also wrapped: its free figure read from the text that holds it.)
  // (Its figures may be a line further than its first words: both figures' words mark it too.)
  if (!Whole(line, "Error in memory profiling").empty() ||
      (!Whole(line, "Initial free memory ").empty() &&
       !Whole(line, "current free memory ").empty())) {
    auto& e = line.Emit(EventKind::kProfilingError, kEngine);
    // V0 and early V1 print bytes without a unit (worker.py, gpu_worker.py 0.5-0.8): a plain
    // figure is bytes only when it is one (a GiB figure whose unit a wrap cut off is small).
    auto free = WrappedFigure(line, "current free memory", true);
    if (const auto plain = NumberAfter(s, "current free memory"); !free && plain && *plain > 1e6) {
      free = plain;
    }
    Set(e, Num::kFreeBytes, free);
  }
  // --max-model-len auto (-1) with nothing left: "Cannot auto-fit max_model_len: not enough GPU
  // memory available to serve even a single token." (kv_cache_utils.py, the auto-fit of 0.2x):
  // the same empty KV budget as "No available memory for the cache blocks".
  if (!Whole(line, "No available memory for the cache blocks").empty() ||
      !Whole(line, "Cannot auto-fit max_model_len").empty()) {
    line.Emit(EventKind::kNoKvMemory, kEngine);
  }
}

// A program line that builds vLLM's offline engine: "LLM(" as a call of its own (not a
// longer name's: "vLLM(", "ChatLLM(", "OpenLLM("), in code (not a traceback's frame or source
// line, whose frames place the failure themselves).
bool OfflineEngineBuilt(std::string_view t) {
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
  if (t.starts_with("File ") || t.starts_with("-->") || t.starts_with("#")) return false;
  for (size_t at = t.find("LLM("); at != std::string_view::npos; at = t.find("LLM(", at + 1)) {
    if (at == 0) return true;
    const char c = t[at - 1];
    if (c == ' ' || c == '=' || c == '(' || c == '.') return true;
  }
  return false;
}

void MatchPhases(const Line& line) {
  const LineView s = line.view();
  // vllm-ascend's NPU runner captures the same graphs as ACL graphs (model_runner_v1.py:
  // "Starting to capture ACL graphs for cases: [...]", then the "Capturing ACL graphs (mixed
  // prefill-decode, PIECEWISE)" progress bar).
  if (Has(s, "Capturing CUDA graph") || Has(s, "Capturing cudagraphs") ||
      Has(s, "Capturing the model for CUDA graphs") || Has(s, "Profiling CUDA graph memory") ||
      Has(s, "Capturing ACL graphs") || Has(s, "to capture ACL graphs")) {
    line.Emit(EventKind::kGraphBegin, kEngine);
  }
  // The kernel warm-up of compile_or_warm_up_model (model_executor/warmup/kernel_warmup.py,
  // 0.10.2+), after the KV cache and before capture: DeepGEMM's progress bars
  // ("DeepGemm(fp8_gemm_nt) warmup (W=...)", deep_gemm_warmup.py; one bar "DeepGEMM warmup: 37%|"
  // from 0.11, tqdm(desc="DeepGEMM warmup")), FlashInfer's attention warm-up and autotuner, the
  // JIT kernels' warm-up.
  if ((Has(s, "DeepGemm(") && Has(s, ") warmup")) || Has(s, "DeepGEMM warmup:") ||
      Has(s, "Warming up FlashInfer") ||
      Has(s, "[Autotuner]: Autotuning process starts") || Has(s, "JIT kernel warmup starting") ||
      Has(s, "[kernel_warmup.py:") || Has(s, "[deep_gemm_warmup.py:")) {
    line.Emit(EventKind::kKernelWarmup, kEngine);
  }
  // The milestones also where a paste's reflow broke them ("Graph capturing" + "finished in
  // 28 secs"): the previous line's part is read with this one's.
  if (const LineView g = Whole(line, "Graph capturing finished"); !g.empty()) {
    auto& e = line.Emit(EventKind::kGraphDone, kEngine);
    Set(e, Num::kCudagraphBytes, BytesAfter(g, ", took"));
  }
  if (!Whole(line, "Starting to load model").empty() || Has(s, "Loading weights took") ||
      Has(s, "Loading model from scratch")) {
    line.Emit(EventKind::kLoadBegin, kEngine);
  }
  // The shard progress bar is the weight loader's, which SGLang shares: no engine of its own.
  // At 100% every file was read into the model (load_copies.cc ShardsRead).
  if (Has(s, "Loading safetensors checkpoint shards") || Has(s, "Loading pt checkpoint shards")) {
    line.Emit(EventKind::kLoadBegin, "any");
  }
  if (Has(s, "Starting profile run") || Has(s, "Memory profiling takes")) {
    line.Emit(EventKind::kProfileBegin, kEngine);
  }
  // The profile run building a multimodal model's dummy inputs: the profiler's warning that the
  // worst-case multimodal tokens exceed the dummy sequence (vllm/multimodal/profiling.py
  // MultiModalProfiler.get_decoder_dummy_data / get_encoder_dummy_data, reached from V0's
  // model_runner.py / enc_dec_model_runner.py profile_run and early V1's gpu_model_runner.py
  // profile_run: "The context length (N) of the model is too short to hold the multi-modal
  // embeddings" 0.7, "The [encoder ]sequence length used for profiling (max_num_batched_tokens /
  // max_num_seqs = N) is too short to hold the multi-modal embeddings" 0.8-0.10), and V0's
  // profile_run cutting its dummy sequences to what the batch holds ("Computed max_num_seqs
  // (min(256, 5120 // 278528)) to be less than 1", model_runner.py 0.6-0.10).
  // V1's profile run announcing its encoder pass over the dummy items, just before it runs them
  // (gpu_model_runner.py profile_run, 0.8+: "Encoder cache will be initialized with a budget of
  // N tokens, and profiled with M image items of the maximum feature size.").
  // --skip-mm-profiling (gpu_model_runner.py profile_run, read at 0.22: "Skipping memory
  // profiling for multimodal encoder and encoder cache."): the encoder's peak is not in the
  // budget, and comes beside the KV pool at the first request with images.
  if (Has(s, "Skipping memory profiling for multimodal encoder")) {
    Set(line.Emit(EventKind::kConfig, kEngine), Num::kSkippedMmProfiling, 1);
  }
  if (Has(s, "Encoder cache will be initialized with a budget") ||
      Has(s, "is too short to hold the multi-modal embeddings") ||
      (Has(s, "Computed max_num_seqs (min(") && Has(s, "to be less than 1"))) {
    line.Emit(EventKind::kProfileBegin, kEngine);
  }
  if (Has(s, "init engine (profile, create kv cache") || Has(s, "Starting vLLM API server") ||
      Has(s, "Avg prompt throughput") || Has(s, "Received request") ||
      Has(s, "Dumping scheduler output") || Has(s, "Model loaded in") ||
      Has(s, "KV cache pool created")) {
    line.Emit(EventKind::kServing, kEngine);
  }
  // The offline LLM's progress bars (vllm/entrypoints/llm.py: "Adding requests" as it queues the
  // prompts, "Processed prompts" in _run_engine as it steps them): the LLM was built, start-up is
  // over, and its generate() is serving them.
  // A bar at 0% is its first drawing, kept on screen until the error closed it.
  if (Has(s, "Processed prompts:") || Has(s, "Adding requests:")) {
    LogEvent& e = line.Emit(EventKind::kServing, kEngine);
    if (Has(s, " 0%|")) Set(e, Num::kBarBegunBefore, 1);
  }
  // V1's engine core dying after it was built (vllm/v1/engine/core.py run_engine_core, 0.8+:
  // "EngineCore encountered a fatal error." is logged only once EngineCoreProc exists, its KV
  // cache and graphs done, "EngineCore failed to start." before): serving.
  if (Has(s, "EngineCore encountered a fatal error")) {
    line.Emit(EventKind::kServing, kEngine);
  }
  // A line logged by the OpenAI server's request handlers ("ERROR 02-11 08:25:49
  // serving_chat.py:661] ...", "(APIServer pid=1) ERROR ... [serving_completion.py:412]":
  // vllm/entrypoints/openai/serving_chat.py, serving_completion.py, serving_responses.py,
  // serving_engine.py log a request's failure with its traceback): a request was being served.
  for (const std::string_view handler :
       {"serving_chat.py:"sv, "serving_completion.py:"sv, "serving_responses.py:"sv,
        "serving_engine.py:"sv}) {
    if (!Has(s, handler)) continue;
    const std::string_view t = line.text;
    size_t at = t.find(handler) + handler.size();
    const size_t digits = at;
    while (at < t.size() && t[at] >= '0' && t[at] <= '9') ++at;
    if (at > digits && at < t.size() && t[at] == ']') {
      line.Emit(EventKind::kServing, kEngine);
      break;
    }
  }
  // Any OpenAI-compatible server's lines (uvicorn's, an access log's "POST /v1/..."): serving,
  // but not vLLM's own (torchchat, FastChat, Xinference and SGLang print them too).
  if (Has(s, "Application startup complete") || Has(s, "Uvicorn running") ||
      Has(s, "POST /v1/")) {
    line.Emit(EventKind::kServing, "any");
  }
  // vLLM's dump of the batch the engine was executing when its step raised
  // (vllm/logging_utils/dump_input.py: V1's dump_engine_exception, called from
  // v1/engine/core.py execute_model_with_error_logging, "Dumping scheduler output for model
  // execution", 0.9+; V0's dump_engine_exception_v0, "Dumping model input for execution" and
  // "Errored Batch request #N", 0.8-0.10): the model failed on a real batch while serving,
  // whatever error line the excerpt kept. The step's tokens (the SchedulerOutput's
  // total_num_scheduled_tokens) size its activations.
  if (Has(s, "Dumping scheduler output for model execution") ||
      Has(s, "Dumping model input for execution") || Has(s, "Errored Batch request #")) {
    line.Emit(EventKind::kTraceback, kEngine);
  }
  // V0's dump names the batch's requests (a served batch, not a start-up one).
  if (Has(s, "Errored Batch request #") || Has(s, "Batch info: requests_count=")) {
    line.Emit(EventKind::kServing, kEngine);
  }
  if (Has(s, "total_num_scheduled_tokens=")) {
    Set(line.Emit(EventKind::kServing, kEngine), Num::kPrefillTokens,
        NumberAfter(s, "total_num_scheduled_tokens="));
  }
  // Start-up did not finish: the failure is not at runtime.
  if (Has(s, "EngineCore failed to start") || Has(s, "Engine core initialization failed") ||
      Has(s, "WorkerProc failed to start") || Has(s, "Engine process failed to start") ||
      Has(s, "when initializing the engine")) {
    line.Emit(EventKind::kStartupFailed, kEngine);
  }
  // Weights kept in host memory: --cpu-offload-gb, the UVA offloader's total.
  if (Has(s, "CPU offloaded parameters") || Has(s, "--cpu-offload-gb") ||
      (Has(s, "cpu_offload_gb=") && !Has(s, "cpu_offload_gb=0"))) {
    line.Emit(EventKind::kCpuOffload, kEngine);
  }
  // V0's worker: "Error executing method initialize_cache. This might cause deadlock ...".
  if (Has(s, "Error executing method ")) MatchMethodFrame(line, kEngine, "Error executing method ");
  // V0's model runner re-raises what its execute_model raised with the input it pickled
  // ("Error in model execution (input dumped to /tmp/err_execute_model_input_<time>.pkl): CUDA
  // out of memory. ...", or "Error in model execution: ..." where pickling failed;
  // worker/model_runner_base.py dump_input_when_exception, 0.6.2 until V0's removal): V0's
  // execute_model on the stack, which the profile run and serving steps both call.
  // (Also where a terminal or a paste wrapped the message inside it.)
  if (!WholeBoth(line, "Error in model execution", "(input dumped").empty() ||
      !WholeBoth(line, "Error in model execution", "execution: ").empty()) {
    line.Emit(EventKind::kVllmV0, kEngine);
    line.Emit(EventKind::kFrame, kEngine).text =
        "execute_model (V0's dump of the failed step's input)";
  }
  // The offline engine built in the program's own code ("llm = LLM(model=...", "LLM(\n"):
  // vLLM's start-up, load to capture, runs inside that constructor (vllm/entrypoints/llm.py,
  // LLM.__init__ -> LLMEngine.from_engine_args).
  if (!line.after_frame && Has(s, "LLM(") && OfflineEngineBuilt(line.text)) {
    line.Emit(EventKind::kLoadCall, kEngine);
  }
  // The worker's call of the sampler warm-up (compile_or_warm_up_model); the profile run calls
  // it as self._dummy_sampler_run.
  if (Has(s, "self.model_runner._dummy_sampler_run(") && line.after_frame) {
    auto& e = line.Emit(EventKind::kFrame, kEngine);
    e.text = "compile_or_warm_up_model (its _dummy_sampler_run call)";
  }
  if (Has(s, "falling back to Transformers") || Has(s, "Using Transformers backend")) {
    line.Emit(EventKind::kTransformersBackend, kEngine);
  }
  // Which engine core printed it: V1's files and processes, or V0's. (A path's "/v1/", not an
  // HTTP request's " /v1/chat/completions", which any OpenAI-compatible server logs.)
  // (V1's multiprocess executor relays a worker's error: "Worker failed with error '...', please
  // check the stack trace above for the root cause", multiproc_executor.py, 0.8+; the message
  // may be wrapped, its head read alone.)
  if (Has(s, "EngineCore") || Has(s, "gpu_worker.py") || Has(s, "gpu_model_runner.py") ||
      Has(s, "kv_cache_utils.py") || (Has(s, "/v1/") && !Has(s, " /v1/")) ||
      Has(s, "Worker failed with error '")) {
    line.Emit(EventKind::kVllmV1, kEngine);
  } else if (Has(s, "VllmWorkerProcess") || Has(s, " worker.py:") || Has(s, "[worker.py:") ||
             Has(s, " model_runner.py:") || Has(s, "[model_runner.py:") ||
             Has(s, "llm_engine.py") || Has(s, "executor_base.py") ||
             Has(s, "Memory profiling results:") || Has(s, "# GPU blocks:")) {
    line.Emit(EventKind::kVllmV0, kEngine);
  }
}

// "--model X" on a vLLM command line ("python -m vllm.entrypoints.openai.api_server --model
// X", "vllm serve --model X", benchmarks/benchmark_*.py); a training or evaluation script's own
// --model flag ("torchrun train.py --model Llama-3-8B") is not vLLM's.
bool VllmModelFlag(const LineView& s) {
  return Has(s, "--model ") && (Has(s, "vllm") || Has(s, "entrypoints") ||
                                Has(s, "benchmark_serving") || Has(s, "benchmark_throughput") ||
                                Has(s, "benchmark_latency"));
}

// "model='X'" as vLLM writes or takes it: its engine-config line ("Initializing a V1 LLM engine
// (v0.8.5) with config: model='X', speculative_config=None, tokenizer='X', ...") and the Python
// LLM(model='X', ...) call. Another library's model= argument (transformers' pipeline, an API
// client's ChatOpenAI(model='gpt-4o')) is not vLLM's.
bool VllmModelArg(const LineView& s) {
  if (!Has(s, "model='") || TransformersPipeline(s)) return false;
  return Has(s, "with config:") || Has(s, "tokenizer='") || Has(s, "LLM(") || Has(s, "vllm") ||
         Has(s, "tensor_parallel_size=") || Has(s, "gpu_memory_utilization=");
}

// Engine configuration: "max_seq_len=4096", "tensor_parallel_size=8", "quantization=awq",
// "'max_model_len': 32768", "gpu_memory_utilization=0.95", "'gpu_memory_utilization': 0.85".
// The weights' dtype a launch line or the engine's config sets: --dtype float / float32 (32
// bits), half / float16 / bfloat16 (16); the config's "dtype=torch.float32". 0 when none.
int VllmDtypeBits(std::string_view s) {
  for (std::string_view key : {"--dtype="sv, "--dtype "sv, "dtype=torch."sv, "'dtype': '"sv}) {
    const size_t at = s.find(key);
    if (at == std::string_view::npos) continue;
    std::string_view v = s.substr(at + key.size(), 12);
    while (!v.empty() && (v.front() == '"' || v.front() == '\'' || v.front() == ' ')) {
      v.remove_prefix(1);
    }
    if (v.starts_with("float32") || (v.starts_with("float") && !v.starts_with("float1") &&
                                     !v.starts_with("float8"))) {
      return 32;
    }
    if (v.starts_with("half") || v.starts_with("float16") || v.starts_with("bfloat16")) return 16;
  }
  return 0;
}

void MatchConfig(const Line& line) {
  const LineView s = line.view();
  // (Only on vLLM's own lines: a launch of vLLM, its V0 engine config, its non-default
  // arguments; a transformers program prints "dtype=torch.float32" too.)
  if (Has(s, "dtype") &&
      (Has(s, "vllm") || Has(s, "non-default args") ||
       (Has(s, "max_seq_len=") && Has(s, "tokenizer=")))) {
    if (const int bits = VllmDtypeBits(s)) {
      Set(line.Emit(EventKind::kConfig, kEngine), Num::kLoadDtypeBits, bits);
    }
  }
  // V0's engine-config line has max_seq_len= beside tokenizer=; a Python call's max_seq_len=
  // argument (AutoAWQ's from_quantized) is not vLLM's.
  const bool v0_config = Has(s, "max_seq_len=") && Has(s, "tokenizer=");
  if (v0_config || Has(s, "'max_model_len':") || Has(s, "tensor_parallel_size=") ||
      Has(s, "--max-model-len") || Has(s, "--tensor-parallel-size") ||
      Has(s, "--gpu-memory-utilization") || VllmModelFlag(s) ||
      Has(s, "Starting to load model ") || VllmModelArg(s) ||
      Has(s, "--max-num-seqs") || Has(s, "'max_num_seqs':") ||
      Has(s, "'gpu_memory_utilization':")) {
    auto& e = line.Emit(EventKind::kConfig, kEngine);
    // The flag, or the engine's "non-default args: {..., 'max_num_seqs': 128}" (0.10+).
    Set(e, Num::kMaxNumSeqs,
        Has(s, "--max-num-seqs") ? NumberAfter(s, "--max-num-seqs")
                                 : NumberAfter(s, "'max_num_seqs':"));
    Set(e, Num::kMaxModelLen,
        Has(s, "max_seq_len=")       ? NumberAfter(s, "max_seq_len=")
        : Has(s, "'max_model_len':") ? NumberAfter(s, "'max_model_len':")
                                     : NumberAfter(s, "--max-model-len"));
    Set(e, Num::kTensorParallelSize,
        Has(s, "tensor_parallel_size=") ? NumberAfter(s, "tensor_parallel_size=")
                                        : NumberAfter(s, "--tensor-parallel-size"));
    Set(e, Num::kGpuMemoryUtilization,
        Has(s, "gpu_memory_utilization=")     ? NumberAfter(s, "gpu_memory_utilization=")
        : Has(s, "'gpu_memory_utilization':") ? NumberAfter(s, "'gpu_memory_utilization':")
                                              : NumberAfter(s, "--gpu-memory-utilization"));
    e.text = ModelPath(s);
  }
  // A vLLM command line's model cut by a wrap at the end of the previous line ("vllm serve
  // Qwen/Qwen3-" + "30B-A3B-FP8 --tensor-parallel-size 2"): read again from the two lines joined
  // mid-word (facts.cc takes the longer name that completes the first).
  const LineView& tight = line.joined_tight;
  // (Not where this line begins a flag: "Qwen/Qwen3-8B" + "--max-model-len 8192" is two
  // arguments a paste broke apart, not one name.)
  if (!tight.empty() && !s.starts_with("--") &&
      (Has(tight, "vllm serve ") || VllmModelFlag(tight)) && !Has(s, "vllm serve ") &&
      !Has(s, "--model ")) {
    if (std::string path = ModelPath(tight); !path.empty()) {
      line.Emit(EventKind::kConfig, kEngine).text = std::move(path);
    }
  }
}

// Milestones and checks read from vLLM's sources across releases (docs/doctor.md, "vLLM:
// messages read"), beside the ones above; each names its file, function and releases.
void MatchSourceLines(const Line& line) {
  const LineView s = line.view();
  // Weight loading. V1's load_model loads a speculative draft after the target ("Loading
  // drafter model...", v1/worker/gpu_model_runner.py, 0.9+); the loaders' "Using model weights
  // format [...]" (model_loader/loader.py _prepare_weights, 0.5-0.6; default_loader.py 0.7+),
  // "Loading weights with BitsAndBytes quantization" (bitsandbytes_loader.py, 0.5+), and the
  // checkpoint prefetch of model_loader/weight_utils.py ("Filesystem type for checkpoints:",
  // "Prefetching checkpoint files into page cache", 0.20+).
  // The MoE layers being built with expert parallelism print their placement once ("[EP Rank
  // 0/4] Expert parallelism is enabled. Expert placement strategy: linear. Local/global number
  // of experts: 64/256.": model_executor/layers/fused_moe/layer.py, later expert_map_manager.py,
  // 0.10+): the model is under construction, its weights being created.
  if (Has(s, "Local/global number of experts:") || Has(s, "Loading drafter model") ||
      Has(s, "Using model weights format") ||
      Has(s, "Loading weights with BitsAndBytes quantization") ||
      Has(s, "Filesystem type for checkpoints:") ||
      Has(s, "Prefetching checkpoint files into page cache")) {
    line.Emit(EventKind::kLoadBegin, kEngine);
  }
  // V1 compiles the model in its first forward pass, the profile run's
  // (gpu_worker.py determine_available_memory -> profile_run -> _dummy_run): compilation/
  // backends.py "Dynamo bytecode transform time: N s" and "Using cache directory: ... for vLLM's
  // torch.compile" (0.7+), compilation/monitor.py "torch.compile takes N s in total" (0.7-0.19;
  // "took" after) and "Initial profiling/warmup run took N s" (0.20+).
  // (Also backends.py's "Compiling a graph for dynamic shape takes N s", 0.7+.)
  if (Has(s, "Dynamo bytecode transform time") || Has(s, "for vLLM's torch.compile") ||
      Has(s, "Compiling a graph for dynamic shape takes") ||
      Has(s, "torch.compile takes") || Has(s, "torch.compile took") ||
      Has(s, "Initial profiling/warmup run took")) {
    line.Emit(EventKind::kProfileBegin, kEngine);
  }
  // After the KV budget is known (v1/worker/gpu_worker.py determine_available_memory, 0.20+):
  // "CUDA graph memory profiling is enabled (default since v0.21.0). The current
  // --gpu-memory-utilization=0.9500 is equivalent to --gpu-memory-utilization=0.9115 without CUDA
  // graph memory profiling ...", or "... is disabled (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0)";
  // v1/core/kv_cache_utils.py "Add N padding layers, may waste at most X% KV cache memory" and
  // "Overriding num_gpu_blocks=N with num_gpu_blocks_override=M" (V0's worker.py too).
  // (Also where a paste reflowed the message: "... CUDA graph" + "memory profiling is enabled".)
  if (!Whole(line, "CUDA graph memory profiling is").empty() ||
      !Whole(line, "is equivalent to --gpu-memory-utilization=").empty() ||
      Has(s, "padding layers, may waste at most") || Has(s, "Overriding num_gpu_blocks=")) {
    auto& e = line.Emit(EventKind::kProfileV1, kEngine);
    const LineView current = Whole(line, "The current --gpu-memory-utilization=");
    Set(e, Num::kGpuMemoryUtilization,
        NumberAfter(current, "The current --gpu-memory-utilization="));
  }
  // The report's words for that estimate's trial captures ("vLLM's CUDA-graph memory-profiling
  // step tries to allocate ..."), not the engine's own notice above: as the estimate's frame.
  // (Also across a wrap: "vLLM's CUDA-graph" + "memory-profiling step". Never a log record of
  // the engine's: "CUDA graph memory profiling is enabled", "will be enabled by default".)
  if (Has(s, "emory profiling") || Has(s, "emory-profiling")) {
    const auto words = [](std::string_view t) {
      for (std::string_view w :
           {"raph memory profiling"sv, "raph memory-profiling"sv, "raph-memory profiling"sv}) {
        const size_t at = t.find(w);
        if (at == std::string_view::npos) continue;
        const std::string_view rest = t.substr(at + w.size());
        if (rest.starts_with(" step") || rest.starts_with(" pass") ||
            rest.starts_with(" run")) {
          return true;
        }
      }
      return false;
    };
    const bool record = Has(s, " INFO ") || Has(s, "WARNING") || Has(s, ".py:");
    if (!record && (words(line.text) || (!line.joined.empty() && words(line.joined)))) {
      line.Emit(EventKind::kFrame, kEngine).text =
          "profile_cudagraph_memory (the report's words)";
    }
  }
  // V0's capture_model logs a second line as it starts (worker/model_runner.py, 0.3-0.10): "CUDA
  // graphs can take additional 1~3 GiB memory per GPU. If you are running out of memory, ...".
  if (Has(s, "CUDA graphs can take additional")) line.Emit(EventKind::kGraphBegin, kEngine);
  // The captured pool measured after capture (v1/worker/gpu_worker.py
  // compile_or_warm_up_model, 0.20+): "CUDA graph pool memory: X GiB (actual), Y GiB (estimated)".
  if (Has(s, "CUDA graph pool memory:")) {
    Set(line.Emit(EventKind::kGraphDone, kEngine), Num::kCudagraphBytes,
        BytesAfter(s, "CUDA graph pool memory:"));
  }
  // compile_or_warm_up_model's compile-size runs, after the KV cache and before capture
  // (v1/worker/gpu_worker.py, 0.7+): "Compile and warming up model for size N".
  if (Has(s, "Compile and warming up model for size")) {
    line.Emit(EventKind::kKernelWarmup, kEngine);
  }
  // Serving: V0's scheduler preempting for KV space ("Sequence group N is preempted by
  // PreemptionMode.RECOMPUTE mode because there is not enough KV cache space", core/scheduler.py
  // 0.3-0.10), sleep mode ("It took N seconds to fall asleep." / "to wake up.",
  // executor_base.py / v1 abstract executor, 0.7.3+), V1's client seeing its engine die after
  // start-up ("Engine core proc EngineCore_DP0 died unexpectedly, shutting down client.",
  // v1/engine/core_client.py, 0.8+: the monitor starts once the engine is up), V0's async engine
  // ("Added request", "Finished request", engine/async_llm_engine.py 0.2-0.10).
  // The dead engine as the client reports it, raised only once the engine served: V0's
  // AsyncEngineDeadError "Background loop has errored already." and "Task finished
  // unexpectedly." (engine/async_llm_engine.py, 0.3-0.10), V1's EngineDeadError "EngineCore
  // encountered an issue. See stack trace (above) for the root cause." (v1/engine/exceptions.py,
  // 0.8+; a start-up failure is "Engine core initialization failed" instead), and V1's
  // "AsyncLLM output_handler failed." (v1/engine/async_llm.py: the handler runs once the client
  // is up, after the engine started).
  // (Also where a paste reflowed the message: "EngineCore encountered an" + "issue. ...".)
  if (!Whole(line, "Background loop has errored already").empty() ||
      !Whole(line, "AsyncLLM output_handler failed").empty() ||
      (Has(s, "AsyncEngineDeadError") && Has(s, "Task finished unexpectedly")) ||
      !Whole(line, "EngineCore encountered an issue").empty()) {
    line.Emit(EventKind::kServing, kEngine);
  }
  // V0's scheduler preempting by swapping out a sequence group whose blocks the CPU swap space
  // (--swap-space, 4 GiB a GPU by default) cannot take (core/scheduler.py _preempt_by_swap /
  // _swap_out, 0.2-0.10): "Aborted due to the lack of CPU swap space. Please increase the swap
  // space to avoid this error." The KV cache was full with the running sequences.
  // (Its words after "Aborted" alone: a line a reflow filled to the width reads as a terminal's
  // cut, "Aborted" + "due to ..." joined without the space.)
  if (!Whole(line, "due to the lack of CPU swap space").empty()) {
    line.Emit(EventKind::kVllmSwapExhausted, kEngine);
  }
  if (Has(s, "is preempted by PreemptionMode") || Has(s, "seconds to fall asleep") ||
      Has(s, "seconds to wake up") || Has(s, "died unexpectedly, shutting down client") ||
      ((Has(s, "Added request ") || Has(s, "Finished request ")) && Has(s, "cmpl-"))) {
    line.Emit(EventKind::kServing, kEngine);
  }
  // V0's EngineArgs warning with chunked prefill off and a context over 32K (engine/arg_utils.py
  // create_engine_config, 0.5-0.8): "The model has a long context length (131072). This may
  // cause OOM errors during the initial memory profiling phase, ...": the run's max_model_len.
  if (Has(s, "The model has a long context length (")) {
    Set(line.Emit(EventKind::kConfig, kEngine), Num::kMaxModelLen,
        NumberAfter(s, "The model has a long context length ("));
  }
  // The host-memory check of the CPU swap space (config.py CacheConfig.verify_with_parallel_config,
  // 0.2-0.10): "Too large swap space. X GiB out of the Y GiB total CPU memory is allocated for the
  // swap space." (over 70% of host RAM; the warning "Possibly too large swap space" over 40%).
  // (Also wrapped; the raising code line of a traceback, which holds the first words, is not it.)
  // The warning's figures too, for the swap space's own allocation failing later (Fixes).
  if (const std::string_view t = Whole(line, "Possibly too large swap space.");
      !t.empty() && !Has(t, "logger.")) {
    auto& e = line.Emit(EventKind::kConfig, kEngine);
    Set(e, Num::kHostRequiredBytes, WrappedFigure(line, "Possibly too large swap space.", true));
    Set(e, Num::kHostAvailableBytes, WrappedFigure(line, "GiB out of the", true));
  }
  if (const std::string_view t = Whole(line, "Too large swap space");
      !t.empty() && !Has(t, "ossibly too large swap space") && !Has(t, "raise ValueError")) {
    auto& e = line.Emit(EventKind::kOllamaSystemMemory, kEngine);
    Set(e, Num::kHostRequiredBytes, WrappedFigure(line, "Too large swap space.", true));
    Set(e, Num::kHostAvailableBytes, WrappedFigure(line, "GiB out of the", true));
  }
}

// vLLM's logger format (vllm/logger.py: "%(levelname)s %(asctime)s [%(filename)s:%(lineno)d]
// %(message)s", the date "%m-%d %H:%M:%S"; before 0.6 without the bracket before the file):
// "ERROR 05-02 10:11:12 [core.py:396] ...", after a worker's or a collector's prefix.
bool VllmLoggerLine(std::string_view s) {
  for (std::string_view level : {"INFO "sv, "WARNING "sv, "ERROR "sv, "DEBUG "sv, "CRITICAL "sv}) {
    const size_t at = s.substr(0, 96).find(level);
    if (at == std::string_view::npos) continue;
    std::string_view r = s.substr(at + level.size());
    const auto digits = [&](size_t from, size_t n) {
      if (r.size() < from + n) return false;
      for (size_t i = from; i < from + n; ++i) {
        if (!std::isdigit(static_cast<unsigned char>(r[i]))) return false;
      }
      return true;
    };
    // "05-02 10:11:12 "
    if (!(digits(0, 2) && r[2] == '-' && digits(3, 2) && r[5] == ' ' && digits(6, 2) &&
          r[8] == ':' && digits(9, 2) && r[11] == ':' && digits(12, 2) && r.size() > 15 &&
          r[14] == ' ')) {
      continue;
    }
    r.remove_prefix(15);
    if (!r.empty() && r[0] == '[') r.remove_prefix(1);
    const size_t py = r.substr(0, 64).find(".py:");
    const size_t close = r.substr(0, 72).find(']');
    return py != std::string_view::npos && close != std::string_view::npos && py < close &&
           r.substr(0, py).find(' ') == std::string_view::npos;
  }
  return false;
}

void Match(const Line& line) {
  if (Has(line.view(), ".py:") && VllmLoggerLine(line.text)) {
    line.Emit(EventKind::kVllmMarker, kEngine);
  }
  // A KV connector turned the hybrid KV cache manager off (vllm/config/vllm.py
  // VllmConfig.__post_init__, v0.9.2+: "Turning off hybrid kv cache manager because
  // `--kv-transfer-config` is set", later "... selects a KV connector that does not support
  // it"): sliding-window layers then cache the whole context.
  if (Has(line.view(), "Turning off hybrid kv cache manager")) {
    line.Emit(EventKind::kHybridKvOff, kEngine);
  }
  // LMCache's allocator of its host buffer of KV chunks finding no free block (lmcache/v1/
  // memory_management.py, TensorMemoryAllocator.allocate: "Failed to allocate memory for
  // tensor(...) because no memory is available"), in a vLLM run with the LMCache connector: the
  // local CPU buffer (max_local_cpu_size, 5.0 GB by default, lmcache/v1/config.py) full of
  // chunks that stores and retrieves in flight hold, host memory, not the GPU's. (Also where a
  // paste reflowed the message after its logger's name, or after the tensor it names.)
  if (Has(line.view(), "available") &&
      (!WholeBoth(line, "LMCache", "because no memory is available").empty() ||
       !WholeBoth(line, "tensor(torch.Size", "because no memory is available").empty())) {
    auto& e = line.Emit(EventKind::kHostBufferFail, kEngine);
    e.values[Num::kHost] = 1;
    e.text = "lmcache";
  }
  MatchProfile(line);
  MatchKvCache(line);
  MatchPhases(line);
  MatchConfig(line);
  MatchSourceLines(line);
}

// vLLM's words for the rules about its behaviour; they also word them for the engines that
// have none of their own.
std::string Say(Words rule, const Facts& f) {
  switch (rule) {
    case Words::kMaxLenCheck:
      return "vLLM's max-length check failed: one request of --max-model-len needs more KV cache "
             "than the memory left for it";
    case Words::kStartupFreeMemory:
      return "vLLM refused to start: the GPU's free memory at start-up is below "
             "--gpu-memory-utilization x total; something else holds memory on it";
    case Words::kSamplerWarmup:
      if (const LogEvent* e = f.first_of(EventKind::kSamplerOom); e && Has(e->text, "pooler")) {
        return "the pooler warm-up ran out of memory: vLLM pools max_num_seqs dummy requests' "
               "hidden states at once during start-up";
      }
      return "the sampler warm-up ran out of memory: vLLM samples max_num_seqs dummy requests' "
             "logits (vocabulary-wide, fp32) at once during start-up";
    case Words::kGraphCapture:
      return "CUDA graph capture ran out of memory: the graph pool is allocated after the KV "
             "cache was sized (outside the budget before vLLM 0.20.2)";
    case Words::kProfileEncoder:
      return "the profile run's multimodal pass ran out of memory: vLLM profiles the encoder "
             "with the largest items --limit-mm-per-prompt allows";
    case Words::kBackendUnsharded:
      return fmt::format(
          "vLLM fell back to the Transformers backend, which did not shard this model across the "
          "{} tensor-parallel ranks as the native implementation does",
          f.tp);
    case Words::kMambaBlocks:
      return fmt::format(
          "vLLM has fewer Mamba state blocks than --max-num-seqs: each running sequence of a "
          "hybrid "
          "(linear-attention) model holds one, and the KV budget yields {}",
          f.get(Num::kMambaBlocks) ? fmt::format("{:.0f}", *f.get(Num::kMambaBlocks)) : "too few");
    case Words::kKernelWarmup:
      return "a kernel warm-up (DeepGEMM JIT, FlashInfer autotuning) ran out of memory after the "
             "KV cache took the --gpu-memory-utilization budget: its workspaces are outside it";
    case Words::kGraphEstimate:
      return fmt::format(
          "vLLM's profiled CUDA-graph estimate ({}) was taken from the KV budget "
          "(VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS) and left no room for the KV cache",
          Gib(f.get(Num::kCudagraphBytes).value_or(0)));
    case Words::kTokenPool:
      return "vLLM's KV block pool ran out while scheduling (V0's block manager \"No free blocks "
             "are available\" or evictor \"No usable cache memory left\"; V1's block pool "
             "\"Cannot get N free blocks\"): the running sequences took every block the KV "
             "cache holds";
    case Words::kProfilingError:
      return "vLLM's memory profiler saw free memory grow while it measured: another process on "
             "the GPU released memory during start-up, so the measurement is void";
    case Words::kHostMemory:
      if (LmcacheHostBuffer(f)) {
        return "LMCache's host buffer of KV chunks was full: its allocator found no free block "
               "for a chunk (\"because no memory is available\"), every chunk in it held by the "
               "stores and retrieves in flight (or never freed); host memory, not the GPU's";
      }
      if (const LogEvent* e = f.first_of(EventKind::kOllamaSystemMemory);
          e && e->text == "cpu_backend") {
        return "vLLM's CPU backend refused to start: the node's available memory is less than "
               "--gpu-memory-utilization x its total, the share of host memory it reserves "
               "(cpu_worker.py)";
      }
      return "host memory ran out, not GPU memory: the process was killed (or refused) while "
             "holding weights in system RAM";
    case Words::kBackendUnquantized:
      return "vLLM fell back to the Transformers backend and loaded part of the quantized "
             "checkpoint unquantized: more memory than the 4-bit weights should take";
    case Words::kContextExceeded: {
      const LogEvent* fit = f.first_of(EventKind::kFitAdjust);
      const LogEvent* ask = f.first_of(EventKind::kContextExceeded);
      const auto asked = ValueOf(ask, Num::kPromptTokens);
      const std::string request =
          asked ? fmt::format("a request of {} tokens", core::GroupDigits(
                                                            static_cast<uint64_t>(*asked)))
                : std::string("a request");
      if (ask && ask->text == "kv_capacity") {
        return fmt::format(
            "{} needs more KV blocks than the whole GPU cache holds: V0's scheduler ignores or "
            "fails it (core/scheduler.py, block_manager can_allocate / can_swap_in NEVER); the "
            "KV cache is smaller than max_model_len lets a request be",
            request);
      }
      const auto from = ValueOf(fit, Num::kMaxModelLen);
      const auto to = ValueOf(fit, Num::kEstimatedMaxModelLen);
      if (from && to) {
        return fmt::format(
            "vLLM's auto-fit cut max_model_len from {} to {} tokens, what the KV cache left in "
            "memory holds; {} is longer than that and is refused before it runs",
            core::GroupDigits(static_cast<uint64_t>(*from)),
            core::GroupDigits(static_cast<uint64_t>(*to)), request);
      }
      const auto len = ValueOf(ask, Num::kMaxModelLen);
      return fmt::format(
          "{} is longer than the server's max_model_len{}: vLLM refuses it before it runs (no "
          "memory ran out; a longer context needs its KV cache to fit)",
          request,
          len ? fmt::format(" ({})", core::GroupDigits(static_cast<uint64_t>(*len))) : "");
    }
    default:
      return "";
  }
}

// A lower --gpu-memory-utilization (not below 0.5 from above it), for headroom outside the budget.
std::string LowerUtilization(double gmu, double by) {
  // Always below the value the log ran with: at 0.5 or less, `by` lower still.
  const double lower = gmu > 0.5 ? std::max(0.5, gmu - by) : std::max(0.05, gmu - by);
  return fmt::format("--gpu-memory-utilization {:.2f}", lower);
}

// The KV connector's price, named first where the log shows vLLM paying it.
// The manager changes nothing for a model of one layer type; with the model given, the fix is
// offered only for one with sliding-window layers, otherwise worded for such a model.
void HybridKvOffFix(const Facts& f, Diagnosis* d) {
  if (!f.has(EventKind::kHybridKvOff)) return;
  const bool known = f.model != nullptr && f.model->has_spec;
  if (known && std::none_of(f.model->spec.layers.begin(), f.model->spec.layers.end(),
                            [](const LayerSpec& l) {
                              return l.attention.kind == AttentionKind::kSliding;
                            })) {
    return;
  }
  AddFix(d, "--no-disable-hybrid-kv-cache-manager",
         std::string(known ? "" : "for a model with sliding-window layers (Gemma 2 and 3, "
                                  "gpt-oss, ...): ") +
             "vLLM turned the hybrid KV cache manager off for the KV connector, so "
             "sliding-window layers cache the whole context; kept on (vLLM 0.13+, a connector "
             "that subclasses SupportsHMA; LMCacheConnectorV1 does not) they cache only their "
             "window");
}

// A request longer than max_model_len (Match): a longer max_model_len, whose KV cache the
// start-up then checks, or memory for one where auto-fit cut it; else a shorter request.
void ContextExceededFixes(const Facts& f, Diagnosis* d) {
  const auto asked = ValueOf(f.first_of(EventKind::kContextExceeded), Num::kPromptTokens);
  const std::string len =
      asked ? fmt::format("--max-model-len {}", TidyContextLength(static_cast<int64_t>(
                                                    std::min(*asked * 1.25, 16777216.0))))
            : std::string("--max-model-len larger");
  if (f.has(EventKind::kFitAdjust)) {
    AddFix(d, len + " with --kv-cache-dtype fp8",
           "half the KV bytes per token: about twice the context in the memory auto-fit found");
    AddFix(d, "--gpu-memory-utilization higher (0.95 on a dedicated GPU)",
           "more memory for the KV cache, so auto-fit keeps more of the context");
    AddFix(d, "--tensor-parallel-size 2 (on two GPUs)",
           "splits the KV heads: each GPU holds half of every token's KV");
    return;
  }
  AddFix(d, len,
         "room for the request; start-up then checks that one request of that length fits the "
         "KV cache (vramfit check -- vllm serve ... " + len + " says whether it will)");
  AddFix(d, "a shorter prompt, or a lower max_tokens", "the request within max_model_len");
}

void KvTooLongFixes(const Facts& f, Diagnosis* d) {
  HybridKvOffFix(f, d);
  const auto kv = f.get(Num::kKvCacheBytes);
  const auto gmu = f.get(Num::kGpuMemoryUtilization);
  double est = f.get(Num::kEstimatedMaxModelLen).value_or(0);
  if (est <= 0) {
    if (auto t = f.get(Num::kKvCacheTokens)) {
      est = *t;
    } else if (auto b = f.get(Num::kGpuBlocks)) {
      est = *b * kBlockTokens;
    }
  }
  // Without vLLM's own estimate (a paste cut before its last sentence): one request's KV grows
  // about linearly with its length, so the available memory holds about len x available /
  // needed tokens (vLLM's estimate is the same bound, found by bisection).
  const auto need = f.get(Num::kKvNeededBytes);
  const auto len = f.get(Num::kMaxModelLen);
  const bool scaled = est <= 0 && need && kv && len && *need > *kv && *kv > 0;
  if (scaled) est = std::floor(*len * *kv / *need);
  if (est > 0) {
    const std::string tokens = core::GroupDigits(static_cast<uint64_t>(est));
    AddFix(d, fmt::format("--max-model-len {}", TidyContextLength(static_cast<int64_t>(est))),
           scaled ? fmt::format("about {} tokens fit in {} of KV cache ({} x {} / {})", tokens,
                                Gib(*kv), core::GroupDigits(static_cast<uint64_t>(*len)),
                                Gib(*kv), Gib(*need))
           : kv ? fmt::format("fits: {} of KV cache holds {} tokens", Gib(*kv), tokens)
                : fmt::format("fits: the KV cache holds {} tokens", tokens));
    AddFix(d, "--kv-cache-dtype fp8",
           fmt::format("halves the KV bytes per token: about {} tokens in the same memory",
                       core::GroupDigits(static_cast<uint64_t>(2 * est))));
  }
  if (need && kv && gmu && f.total > 0) {
    const double u = std::ceil((*gmu + (*need - *kv) / f.total) * 100) / 100;
    if (u <= 0.98) {
      AddFix(d, fmt::format("--gpu-memory-utilization {:.2f}", u),
             fmt::format("adds {} to the budget: the {} a full-length request needs fit",
                         Gib(*need - *kv), Gib(*need)));
    }
  }
  AddFix(d, "--tensor-parallel-size 2 (on two GPUs)",
         "splits the KV heads: each GPU holds half of every token's KV");
}

void KvNoMemoryFixes(const Facts& f, Diagnosis* d) {
  // The CPU backend's KV cache in host memory (MatchKvCache): its own setting, and the host's.
  if (const LogEvent* e = f.first_of(EventKind::kNoKvMemory); e && e->text == "cpu_backend") {
    AddFix(d, "VLLM_CPU_KVCACHE_SPACE lower (GiB; or --kv-cache-memory-bytes)",
           "the CPU backend's KV cache is taken from host memory, which other processes hold "
           "part of");
    AddFix(d, "stop other processes on the host (or the NUMA node)",
           "the check compares the node's available memory with the KV cache asked for");
    return;
  }
  HybridKvOffFix(f, d);
  // --kv-cache-memory-bytes: vLLM skipped its profiling and reserved the given bytes whatever
  // --gpu-memory-utilization says (gpu_worker.py determine_available_memory, 0.11+), so only a
  // smaller fixed size helps. What was still missing when the allocation failed (the rest of the
  // pool past what PyTorch had allocated beside the weights, less what was free) comes off it.
  if (const auto fixed = f.get(Num::kFixedKvBytes); fixed && *fixed > 0) {
    const auto allocated = f.get(Num::kAllocatedBytes);
    const auto w = f.get(Num::kWeightsBytes);
    const auto free = f.get(Num::kFreeBytes);
    std::string change = "--kv-cache-memory-bytes lower";
    std::string why = fmt::format(
        "vLLM reserved the {} this flag fixes and skipped its memory profiling; "
        "--gpu-memory-utilization does not bound it",
        Gib(*fixed));
    if (allocated && w && free && *allocated > *w) {
      const double short_by = std::max(0.0, *fixed - (*allocated - *w) - *free);
      // One GiB more for the forward's activations and the CUDA graphs that come after the pool.
      const double fits = std::floor((*fixed - short_by) / core::kGiBf) - 1;
      if (fits >= 1) {
        change = fmt::format("--kv-cache-memory-bytes {:.0f}G", fits);
        why = fmt::format(
            "the pool of {} was about {} short when it failed ({} allocated beside {} of weights, "
            "{} free); a GiB less again leaves room for the activations and CUDA graphs after it; "
            "--gpu-memory-utilization does not bound this flag",
            Gib(*fixed), Gib(short_by), Gib(*allocated - *w), Gib(*w), Gib(*free));
      }
    }
    AddFix(d, change, why);
    AddFix(d, "without --kv-cache-memory-bytes",
           "vLLM sizes the KV cache from --gpu-memory-utilization after its profile run");
    return;
  }
  // An OOM while the KV tensors were allocated (V0's CacheEngine._allocate_kv_cache under
  // initialize_cache, V1's initialize_kv_cache_tensors), not vLLM's own sizing error: the memory
  // profiling measured free was taken before the allocation (another process, or a trainer
  // sharing the process, as TRL's GRPO colocation does), so a larger budget would fail the same.
  const auto kv = f.get(Num::kKvCacheBytes);
  const auto blocks = f.get(Num::kGpuBlocks);
  if (!f.has(EventKind::kNoKvMemory) && !(kv && *kv <= 0) && !(blocks && *blocks <= 0) &&
      AnyFrame(f, {"_allocate_kv_cache", "allocate_kv_cache", "_init_cache_engine",
                   "initialize_cache", "initialize_kv_cache_tensors",
                   "_allocate_kv_cache_tensors"})) {
    const auto gmu = f.get(Num::kGpuMemoryUtilization);
    AddFix(d, gmu ? LowerUtilization(*gmu, 0.1) : std::string("--gpu-memory-utilization lower"),
           "the KV cache is sized from the free memory profiling saw; a smaller budget leaves "
           "room for what allocated on the GPU after it");
    AddFix(d, "run vLLM alone on its GPU (no other process, and no trainer's model beside it)",
           "whatever else holds memory on the card took what the KV tensors were sized for");
    return;
  }
  const double total = f.total;
  const auto w = f.get(Num::kWeightsBytes);
  const auto act = f.get(Num::kActivationPeakBytes);
  const auto nt = f.get(Num::kNonTorchBytes);
  if (w && act && total > 0) {
    const double used = *w + *act + nt.value_or(0);
    const double u = std::ceil((used + core::kGiBf) / total * 100) / 100;
    if (u <= 0.97) {
      AddFix(d, fmt::format("--gpu-memory-utilization {:.2f}", u),
             fmt::format("weights {} + activation {} + non-torch {} = {} of {}: this leaves "
                         "about 1 GiB for the KV cache",
                         Gib(*w), Gib(*act), Gib(nt.value_or(0)), Gib(used), Gib(total)));
    } else {
      AddFix(d, "a smaller checkpoint (4-bit AWQ/GPTQ) or --tensor-parallel-size 2",
             fmt::format("weights {} + activation {} leave no room in {}", Gib(*w), Gib(*act),
                         Gib(total)));
    }
    if (*act > 0.5 * core::kGiBf) {
      AddFix(d,
             "--max-num-batched-tokens 2048 (or lower --max-model-len where chunked prefill is "
             "off)",
             fmt::format("the profiled activation peak ({}) scales with the tokens of one step",
                         Gib(*act)));
    }
  } else if (const auto gmu = f.get(Num::kGpuMemoryUtilization); gmu && *gmu < 0.9) {
    // The budget is the fraction of the whole card (V0's worker.py and V1's gpu_worker.py):
    // a low setting from the log is what left no KV memory.
    AddFix(d, "--gpu-memory-utilization 0.90",
           fmt::format("the log's {:.2f} of the card holds the weights and activations but "
                       "leaves nothing for the KV cache",
                       *gmu));
    AddFix(d, "--max-model-len / --max-num-batched-tokens lower", "smaller profiled activations");
  } else {
    AddFix(d, "--gpu-memory-utilization 0.95",
           "a larger budget for weights, activations and the KV cache");
    AddFix(d, "--max-model-len / --max-num-batched-tokens lower", "smaller profiled activations");
  }
}

void WeightsFixes(const Facts& f, Diagnosis* d) {
  const double w = d->numbers.count("weights_estimate_bytes")
                       ? d->numbers["weights_estimate_bytes"] * static_cast<double>(f.tp)
                       : 0;
  // Loaded weights over the budget (rules.cc WeightsOverBudgetAtProfile) on a card that holds
  // them with 2 GiB to spare at 0.95: a larger budget is the cheapest way out, with a small KV
  // cache.
  const double per_rank = w / static_cast<double>(std::max<int64_t>(1, f.tp));
  if (d->stage == "profile" && w > 0 && f.total > 0 &&
      per_rank + 2 * core::kGiBf <= 0.95 * f.total) {
    AddFix(d, "--gpu-memory-utilization 0.95",
           fmt::format("a budget of {} holds the {} of weights with {} for activations and the "
                       "KV cache",
                       Gib(0.95 * f.total), Gib(per_rank), Gib(0.95 * f.total - per_rank)));
  }
  if (w > 0 && f.total > 0) {
    int64_t n = 1;
    while (n < 64 && w / static_cast<double>(n) > 0.8 * f.total) n *= 2;
    AddFix(d, fmt::format("--tensor-parallel-size {}", n),
           fmt::format("{} of weights over {} GPUs: {} each", Gib(w), n,
                       Gib(w / static_cast<double>(n))));
  } else {
    AddFix(d, "--tensor-parallel-size 2 (or more GPUs)", "the weights are split across the GPUs");
  }
  AddFix(d, "a 4-bit checkpoint (AWQ/GPTQ) or FP8", "a quarter or half of the 16-bit weight bytes");
  // One GPU, or no more to add: weights kept in host memory (config/offload.py, read at 0.22).
  // --cpu-offload-gb is GiB per GPU (UVA: read over PCIe every step); from 0.17 the prefetch
  // offloader keeps the last N of every G decoder layers there and copies each in ahead of use.
  const double per_gpu = w > 0 ? w / static_cast<double>(std::max<int64_t>(1, f.tp)) : 0;
  if (per_gpu > 0 && f.total > 0 && per_gpu > 0.8 * f.total) {
    const double over = per_gpu - 0.8 * f.total;
    // The fewest layers of each group that leave the rest in 80% of the card (the decoder layers
    // hold nearly all the weights), with a layer's GPU buffers back.
    std::string prefetch;
    for (const auto& [group, in_group] :
         {std::pair{8, 1}, {4, 1}, {8, 3}, {2, 1}, {8, 5}, {4, 3}, {8, 7}}) {
      if (per_gpu * in_group / group >= over * 1.1) {
        prefetch = in_group == 1 ? fmt::format("--offload-group-size {}", group)
                                 : fmt::format("--offload-group-size {} --offload-num-in-group {}",
                                               group, in_group);
        break;
      }
    }
    AddFix(d, fmt::format("--cpu-offload-gb {:.0f}", std::ceil(over / core::kGiBf) + 1),
           fmt::format("about {} of weights per GPU kept in host memory and read over PCIe every "
                       "step (much slower)",
                       Gib(over)));
    if (!prefetch.empty()) {
      AddFix(d, prefetch + " (vLLM 0.17+)",
             "those decoder layers kept in host memory, each copied in over PCIe ahead of use");
    }
  } else {
    AddFix(d, "--cpu-offload-gb N, or on vLLM 0.17+ --offload-group-size 2",
           "N GiB of weights per GPU (or every other decoder layer) kept in host memory and "
           "copied in over PCIe as each step needs them: slower, but the load fits");
  }
}

// --max-num-seqs at a quarter of the log's (EngineArgs' default 256 where the log names none,
// vllm/engine/arg_utils.py 0.6-0.10), not below `floor`: the sampler warm-up and V0's profile
// run both size their dummy batch by max_num_seqs. The reason names the count between `before`
// and `after`.
void QuarterOfSeqs(const Facts& f, int64_t floor, std::string_view before, std::string_view after,
                   Diagnosis* d) {
  const double seqs = f.get(Num::kMaxNumSeqs).value_or(256);
  AddFix(d,
         fmt::format("--max-num-seqs {}", std::max<int64_t>(floor, static_cast<int64_t>(seqs / 4))),
         fmt::format("{}{:.0f}{}", before, seqs, after));
}

// A frame in one of vLLM's model files (vllm/model_executor/models/NAME.py) among `names`.
bool ModelFileFrame(const Facts& f, std::initializer_list<std::string_view> names) {
  return std::any_of(f.frames.begin(), f.frames.end(), [&](const LogEvent* fr) {
    for (std::string_view n : names) {
      if (Has(fr->text, fmt::format("({}.py)", n))) return true;
    }
    return false;
  });
}

// V1 profiles the encoder with max(1, budget / one item's tokens) items of the largest size
// (capped by max_num_seqs x the items a prompt allows), the budget being the larger of
// max_num_batched_tokens and one item's tokens (vllm/v1/core/encoder_cache_manager.py
// compute_encoder_budget, gpu_model_runner.py profile_run, 0.8+), and says so: "Encoder cache
// will be initialized with a budget of N tokens, and profiled with M image items". With M > 1, a
// max_num_batched_tokens of about N / M profiles one item; with one, only a smaller item helps.
void EncoderBudgetFix(const Facts& f, bool audio, Diagnosis* d) {
  constexpr std::string_view kBudget = "Encoder cache will be initialized with a budget of ";
  const LogEvent* line = f.first_of(EventKind::kProfileBegin);
  const std::string_view t = line ? std::string_view(line->text) : std::string_view();
  const auto budget = NumberAfter(t, kBudget);
  const auto items = NumberAfter(t, "and profiled with ");
  if (!budget || !items || *items < 1) {
    AddFix(d, "--max-num-batched-tokens lower",
           "V1's encoder profile budget (and its dummy items) is the larger of "
           "max_num_batched_tokens and one item's tokens");
    return;
  }
  if (*items >= 2) {
    const int64_t per_item = static_cast<int64_t>(*budget / *items);
    AddFix(d, fmt::format("--max-num-batched-tokens {}", per_item),
           fmt::format("the profile encoded {:.0f} items of the largest size at once (a budget "
                       "of {:.0f} tokens); about one item's tokens profiles one",
                       *items, *budget));
    return;
  }
  AddFix(d,
         fmt::format("{}, or --skip-mm-profiling where the release has it and the items served "
                     "are known to be smaller",
                     audio ? "shorter audio clips" : "a lower max_pixels (--mm-processor-kwargs)"),
         fmt::format("the profile encoded one item of the largest size ({:.0f} tokens of "
                     "budget): fewer batched tokens do not shrink it",
                     *budget));
}

// The encoder's fixes in the model's own inputs: audio clips for the audio models (whisper,
// qwen2_audio, ultravox, granite_speech), max_pixels for the Qwen-VL processors (their
// smart_resize: 28 x 28 pixels a visual token), images otherwise. In the profile run the dummy
// inputs of V0 scale with max_num_seqs (V0's profile_run and the encoder-decoder runner's build
// one dummy sequence per max_num_seqs, each with the most items a prompt allows; EngineArgs'
// default 256, vllm/engine/arg_utils.py 0.6-0.10).
void MultimodalFixes(const Facts& f, Diagnosis* d) {
  const std::string& m = f.model_path;
  if (f.get(Num::kSkippedMmProfiling)) {
    AddFix(d, "without --skip-mm-profiling",
           "vLLM then profiles the encoder with the largest items and sizes the KV cache "
           "around it; this start skipped that profile, as its log says");
  }
  // V1's profile line names the modality it profiled ("profiled with 1 audio items").
  const LogEvent* profiled = f.first_of(EventKind::kProfileBegin);
  const bool audio = ModelFileFrame(f, {"whisper", "qwen2_audio", "ultravox", "granite_speech"}) ||
                     HasNoCase(m, "whisper") || HasNoCase(m, "audio") ||
                     (profiled && Has(profiled->text, " audio items of the maximum"));
  // The model as --model gave it (a catalog entry's repo), else as the log names it.
  const bool qwen_model =
      f.model && f.model->has_spec && f.model->spec.vision.kind != VisionKind::kNone &&
      (HasNoCase(f.model->model, "qwen") || HasNoCase(f.model->repo, "qwen"));
  const bool qwen_vl = ModelFileFrame(f, {"qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe"}) ||
                       (HasNoCase(m, "qwen") && VisionLanguageName(m)) || qwen_model;
  if (audio) {
    AddFix(d, "--limit-mm-per-prompt '{\"audio\": 1}'",
           "fewer audio clips a prompt: the encoder's batch and the profile shrink");
  } else {
    if (qwen_vl) {
      AddFix(d, "--mm-processor-kwargs '{\"max_pixels\": 1003520}'",
             "caps each image at 1280 visual tokens (Qwen-VL: 28 x 28 pixels a token); the "
             "encoder's activations grow with pixels");
    } else if (d->stage != "profile") {  // the profile run's dummy images are the largest
      AddFix(d, "smaller images (resized before they are sent)",
             "the vision encoder's activations grow with the image's pixels and tiles");
    }
    AddFix(d, "--limit-mm-per-prompt '{\"image\": 1}'",
           "fewer images a prompt: the encoder budget and the profile shrink");
  }
  // V1 profiles the encoder with as many of the largest items as its budget holds, the larger
  // of max_num_batched_tokens and one item's tokens (vllm/v1/core/encoder_cache_manager.py
  // compute_encoder_budget, 0.8+).
  if (d->stage == "profile" && f.has(EventKind::kVllmV1)) {
    EncoderBudgetFix(f, audio, d);
  } else if (d->stage == "profile") {
    QuarterOfSeqs(f, 1, "the profile run feeds the encoder dummy inputs for up to ",
                  " sequences; a quarter as many", d);
  }
  const auto requested = f.get(Num::kRequestedBytes);
  if (d->stage == "runtime" && requested && *requested > 0) {
    const auto gmu = f.get(Num::kGpuMemoryUtilization);
    const double by = f.total > 0 ? std::ceil(*requested / f.total * 100) / 100 : 0;
    AddFix(d,
           gmu && by > 0 ? LowerUtilization(*gmu, by)
                         : std::string("--gpu-memory-utilization lower by the failed allocation"),
           fmt::format("the encoder needed {} outside the KV pool", Gib(*requested)));
  }
}

// vLLM's flags for each cause; they are also the fixes of the engines without their own.
bool Fixes(Cause cause, const Facts& f, Diagnosis* d) {
  const double total = f.total;
  const auto gmu = f.get(Num::kGpuMemoryUtilization);
  switch (cause) {
    case Cause::kKvTooLongContext:
      // V0's scheduler found one request larger than the whole KV cache (Match): the cache,
      // not max_model_len, is the limit.
      if (const LogEvent* e = f.first_of(EventKind::kContextExceeded);
          e && e->text == "kv_capacity") {
        KvTooLongFixes(f, d);
        AddFix(d, "a shorter prompt (or --max-model-len no longer than the KV cache's tokens)",
               "start-up then checks that one --max-model-len request fits the cache");
        return true;
      }
      if (f.has(EventKind::kContextExceeded)) {
        ContextExceededFixes(f, d);
        return true;
      }
      KvTooLongFixes(f, d);
      return true;
    case Cause::kKvNoMemory:
      KvNoMemoryFixes(f, d);
      return true;
    case Cause::kSamplerWarmup: {
      QuarterOfSeqs(f, 8, "the sampler warms up ",
                    " requests' logits at once; a quarter of them needs a quarter of the memory",
                    d);
      if (gmu) {
        AddFix(d, LowerUtilization(*gmu, 0.05), "more headroom outside the budget for the warm-up");
      }
      return true;
    }
    case Cause::kKvTooManySequences: {
      if (f.has(EventKind::kVllmSwapExhausted)) {
        AddFix(d, "--max-num-seqs lower (e.g. half of the running sequences)",
               "fewer sequences fill the KV cache, so fewer are preempted and swapped out");
        AddFix(d, "--swap-space 16 (GiB a GPU; 4 by default)",
               "room in host memory for the sequences swapped out of a full KV cache");
        AddFix(d, "--preemption-mode recompute",
               "preempted sequences are recomputed instead of swapped to host memory");
        return true;
      }
      if (auto blocks = f.get(Num::kMambaBlocks); blocks && *blocks >= 1) {
        AddFix(d, fmt::format("--max-num-seqs {:.0f}", *blocks),
               fmt::format("{:.0f} Mamba state blocks are available: one per running sequence",
                           *blocks));
      } else {
        AddFix(d, "--max-num-seqs lower", "fewer sequences share the KV cache");
      }
      AddFix(d,
             gmu ? fmt::format("--gpu-memory-utilization {:.2f}", std::min(0.95, *gmu + 0.05))
                 : std::string("--gpu-memory-utilization higher"),
             "a larger KV budget gives more state blocks");
      AddFix(d, "--max-model-len lower", "shorter sequences leave blocks for more of them");
      return true;
    }
    case Cause::kKernelWarmup:
      // A Triton kernel autotuned on its first call while serving (rules.cc RuntimeAutotune).
      if (d->stage == "runtime") {
        AddFix(d,
               gmu ? LowerUtilization(*gmu, 0.05) : std::string("--gpu-memory-utilization lower"),
               "leaves the autotuner's benchmark buffers room outside the KV budget");
        AddFix(d, "a vLLM release that autotunes the kernel during the profile run",
               "its buffers are then counted before the KV cache is sized");
        return true;
      }
      // FlashInfer's own warm-up: its autotuner's trial tensors (flashinfer/autotuner.py,
      // which vLLM's kernel_warmup runs for the FlashInfer MoE and GEMM kernels, 0.10+), or the
      // attention backend's workspace made on its first warm-up batch (v1/attention/backends/
      // flashinfer.py _get_workspace_buffer). DeepGEMM's switch does nothing for these.
      if (AnyFrame(f, {"_create_tensor_like", "choose_one", "_profile_single_kernel",
                       "_get_workspace_buffer", "_get_prefill_wrapper", "_get_decode_wrapper"})) {
        AddFix(d,
               gmu ? LowerUtilization(*gmu, 0.03) : std::string("--gpu-memory-utilization lower"),
               "leaves FlashInfer's warm-up (its autotuner's trial tensors, its workspace) room "
               "outside the KV budget");
        AddFix(d, "--max-num-batched-tokens lower, or VLLM_ATTENTION_BACKEND=FLASH_ATTN",
               "the autotuner tries shapes up to the batched tokens; another attention backend "
               "needs no FlashInfer workspace");
        return true;
      }
      AddFix(d, "VLLM_DEEP_GEMM_WARMUP=skip (DeepGEMM) or VLLM_USE_DEEP_GEMM=0",
             "no JIT warm-up of the grouped GEMMs at start-up (the first requests compile them)");
      AddFix(d, gmu ? LowerUtilization(*gmu, 0.03) : std::string("--gpu-memory-utilization lower"),
             "leaves the warm-up's workspaces room outside the budget");
      return true;
    case Cause::kHostMemory: {
      // The swap-space check (MatchSourceLines): --swap-space is per GPU, in GiB; under 40% of
      // the host's memory it passes without the warning.
      const auto host_bytes = f.get(Num::kHostAvailableBytes);
      const auto swap = f.get(Num::kHostRequiredBytes);
      // The GiB a GPU that keeps the swap space of all GPUs under 40% of the host's memory.
      const auto under_40 = [&](double host) {
        return std::floor(0.4 * host / static_cast<double>(std::max<int64_t>(1, f.tp)) /
                          core::kGiBf);
      };
      // Ray's memory monitor killed a worker over the node's RAM threshold
      // (RAY_memory_usage_threshold, 0.95 by default): vLLM's Ray executor's workers share it.
      if (RayMemoryMonitorKill(f)) {
        AddFix(d, "more RAM on the Ray node, or --distributed-executor-backend mp on one node",
               "Ray kills the most recently scheduled worker once the node's memory use passes "
               "its threshold");
        AddFix(d, "fewer logprobs or prompt_logprobs per request, smaller batches per call",
               "the outputs the workers hand back are held in the node's memory");
        AddFix(d, "RAY_memory_usage_threshold=0.98 (or RAY_memory_monitor_refresh_ms=0 to turn "
                  "the monitor off) where the node has the memory",
               "the monitor's default threshold is 0.95 of the node's RAM");
        return true;
      }
      // LMCache's host buffer of KV chunks (facts.cc LmcacheHostBuffer).
      if (LmcacheHostBuffer(f)) {
        AddFix(d, "max_local_cpu_size higher in the LMCache config (LMCACHE_MAX_LOCAL_CPU_SIZE, "
                  "GB; 5.0 by default)",
               "a larger pinned buffer on the host holds the chunks of more requests at once");
        AddFix(d, "--max-num-seqs lower",
               "fewer requests storing and retrieving their KV chunks at once");
        AddFix(d, "a newer LMCache release",
               "a buffer that stays full under light load holds chunks never freed: LMCache's "
               "developers found such a leak in layerwise retrieval (LMCache issue 684)");
        return true;
      }
      // --cpu-offload-gb's pinned copies (rules.cc CpuOffloadPinned).
      if (PinnedFailureUnder(f, {"maybe_offload_to_cpu"})) {
        AddFix(d, "--cpu-offload-gb lower (GiB a GPU)",
               "less of the weights pinned in host memory, which cannot be paged out; the rest "
               "must then fit the GPU (more GPUs, a quantized checkpoint)");
        AddFix(d, "more host RAM (or a container memory limit above the offloaded GiB per GPU)",
               "every GPU's offloaded weights are pinned in the host's memory at once");
        return true;
      }
      // The KV offloading buffers' pinned allocation (rules.cc KvOffloadPinned).
      if (PinnedFailureUnder(f, {"kv_offload_pinned"})) {
        AddFix(d, "--kv-offloading-size lower (GiB of host memory for offloaded KV blocks)",
               "the offloaded blocks are pinned in host memory at start-up, all at once");
        AddFix(d, "more host RAM (or a container memory limit above the offloading size)",
               "pinned memory cannot be paged out");
        return true;
      }
      // The swap space's pinned allocation failing (rules.cc SwapSpacePinned).
      if (AnyFrame(f, {"allocate_cpu_cache"})) {
        if (host_bytes && *host_bytes >= 4 * core::kGiBf) {
          const double gib = under_40(*host_bytes);
          AddFix(d, fmt::format("--swap-space {:.0f}", gib),
                 fmt::format("{:.0f} GiB a GPU keeps the pinned swap space of all GPUs under 40% "
                             "of the host's {}", gib, Gib(*host_bytes)));
        } else {
          AddFix(d, "--swap-space 1 (GiB a GPU; 4 by default)",
                 "a smaller pinned swap space in host memory");
        }
        AddFix(d, "--preemption-mode recompute with --swap-space 0",
               "no swap space: preempted sequences are recomputed instead of swapped out");
        return true;
      }
      // The CPU backend's start-up check of host memory (MatchKvCache).
      if (const LogEvent* e = f.first_of(EventKind::kOllamaSystemMemory);
          e && e->text == "cpu_backend") {
        AddFix(d, "--gpu-memory-utilization lower (on the CPU backend, the fraction of the host's "
                  "memory vLLM reserves)",
               "the reservation must be free on the node when the worker starts");
        AddFix(d, "stop other processes on the host (or the NUMA node)",
               "they hold the memory the reservation needs");
        return true;
      }
      if (f.get(Num::kHostRamWarned)) {
        AddFix(d, "leave --safetensors-load-strategy at its default (not prefetch)",
               "the checkpoint is read shard by shard instead of into the page cache at once");
        AddFix(d, "more host RAM, or --tensor-parallel-size over more hosts",
               "the checkpoint's shards each worker reads must fit in the host's memory");
        return true;
      }
      if (f.has(EventKind::kOllamaSystemMemory) && host_bytes && swap) {
        const double host = *host_bytes;
        const double gib = under_40(host);
        AddFix(d, fmt::format("--swap-space {:.0f}", gib),
               fmt::format("the CPU swap space of all GPUs ({}) is over 70% of the host's {}; "
                           "{:.0f} GiB a GPU stays under 40%",
                           Gib(*swap), Gib(host), gib));
        return true;
      }
      AddFix(d, "more host RAM (or swap) for the worker, or --cpu-offload-gb lower",
             "the weights kept or converted in system memory did not fit in it");
      AddFix(d, "--tensor-parallel-size higher (or fewer weights offloaded)",
             "each rank holds less of the model on the host");
      return true;
    }
    case Cause::kCudagraphCapture:
      // The estimate's trial captures in the profile (rules.cc GraphEstimateCapture).
      // The card was full before the KV cache was sized, so a lower utilization frees nothing
      // for them.
      if (d->stage == "profile") {
        AddFix(d, "--enforce-eager",
               "no CUDA graphs: the estimate captures nothing (slower decoding)");
        AddFix(d, "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0",
               "the trial captures are skipped; the graphs are then captured after the KV cache, "
               "in what the budget leaves outside it");
        AddFix(d,
               "--max-num-seqs 64 (or -O '{\"cudagraph_capture_sizes\": [1, 2, 4, 8, 16, 32, "
               "64]}')",
               "fewer and smaller captured batch sizes");
        return true;
      }
      if (d->stage == "kv_cache") {
        AddFix(d, "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0",
               fmt::format("the {} estimate is not taken from the KV budget",
                           Gib(f.get(Num::kCudagraphBytes).value_or(0))));
      }
      AddFix(d, "--enforce-eager",
             "no CUDA graphs: the capture's pool is not allocated (slower decoding)");
      if (gmu) {
        AddFix(d, LowerUtilization(*gmu, 0.05),
               fmt::format("leaves {} more outside the budget for the graph pool",
                           total > 0 ? Gib(0.05 * total) : "5%"));
      }
      AddFix(d,
             "--max-num-seqs 64 (or -O '{\"cudagraph_capture_sizes\": [1, 2, 4, 8, 16, 32, 64]}')",
             "fewer and smaller captured batch sizes");
      return true;
    case Cause::kOtherProcess: {
      if (WakeUp(f)) {
        AddFix(d, "offload the trainer's parameters, gradients and optimizer states before the "
                  "engine wakes (the trainer's offload options), or a lower "
                  "gpu_memory_utilization for the rollout engine",
               "wake_up maps the engine's whole budget back; the colocated trainer must leave "
               "it free");
      }
      const auto free = f.get(Num::kFreeBytes);
      if (free && total > 0) {
        const double u = std::floor((*free / total - 0.01) * 100) / 100;
        if (u >= 0.3) {
          AddFix(d, fmt::format("--gpu-memory-utilization {:.2f}", u),
                 fmt::format("what is free ({} of {}) minus a margin", Gib(*free), Gib(total)));
        }
      }
      // Two instances on one GPU (the report says so, rules.cc OtherInstanceHeldTheCard): each
      // profiles with the other's memory moving, and V1's check compares the free memory at
      // start-up with its own --gpu-memory-utilization share of the whole card.
      if (f.has(EventKind::kOtherInstanceWords)) {
        AddFix(d, "start the second instance after the first reports its KV cache (\"GPU KV cache "
                  "size\"), with --gpu-memory-utilization fractions that sum to at most 0.9",
               "each instance profiles and sizes its pool alone, from the memory the other has "
               "settled on");
        AddFix(d, "--kv-cache-memory-bytes for each instance (vLLM 0.11+)",
               "a fixed KV pool, no profiling: the other instance's memory no longer moves this "
               "one's figures");
        return true;
      }
      // Memory no listed process holds (rules.cc UnlistedBytes): another container's jobs.
      if (d->numbers.count("unlisted_process_bytes")) {
        AddFix(d, "find the other jobs on this GPU with nvidia-smi on the host (a container "
                  "sees only its own processes) and stop them, or use another GPU",
               fmt::format("{} is in use by processes PyTorch could not list",
                           Gib(d->numbers["unlisted_process_bytes"])));
        return true;
      }
      AddFix(d, "stop the other processes on the GPU (nvidia-smi lists them), or use another GPU",
             d->numbers.count("other_process_bytes")
                 ? fmt::format("they hold {}", Gib(d->numbers["other_process_bytes"]))
                 : "vLLM's budget is a fraction of the total, not of what is free");
      // Met as the KV cache was allocated (rules.cc OthersOverVllmHeadroom): a budget that
      // leaves the others' memory out (a margin of 1% of the card) sizes the cache from the rest.
      if (f.stage == Stage::kKvCache && d->numbers.count("other_process_bytes") && total > 0) {
        const double others = d->numbers["other_process_bytes"];
        const double u = std::floor(((total - others) / total - 0.01) * 100) / 100;
        if (u >= 0.3 && (!gmu || u < *gmu)) {
          AddFix(d, fmt::format("--gpu-memory-utilization {:.2f}", u),
                 fmt::format("a budget of {} beside the {} the others hold: a smaller KV cache, "
                             "sized from the rest",
                             Gib(u * total), Gib(others)));
        }
      }
      return true;
    }
    case Cause::kFragmentation:
      if (WakeUp(f)) {
        AddFix(d, "torch.cuda.empty_cache() after the training step, before the engine's "
                  "wake_up()",
               "returns the trainer's cached blocks to the driver, where the sleep-mode "
               "allocator can map them (PYTORCH_CUDA_ALLOC_CONF=expandable_segments does not "
               "work with vLLM's sleep mode)");
      }
      if (gmu) AddFix(d, LowerUtilization(*gmu, 0.03), "more headroom for runtime peaks");
      return true;
    case Cause::kOffloadDequantized:
      AddFix(d,
             "--cpu-offload-gb 0 with --tensor-parallel-size 2 (or a vLLM release whose "
             "conversion keeps offloaded weights on the host)",
             "the converted copies of offloaded weights land on the GPU");
      return true;
    case Cause::kMultimodalEncoder:
      MultimodalFixes(f, d);
      return true;
    case Cause::kActivationPeak: {
      // V0 without chunked prefill refuses max_num_batched_tokens below max_model_len
      // (config.py SchedulerConfig._verify_args, 0.4-0.10): the step shrinks with it on.
      const std::string chunked =
          f.has(EventKind::kVllmV0) && !f.has(EventKind::kVllmV1) && f.engine == kEngine
              ? "--enable-chunked-prefill "
              : "";
      if (const auto step = f.get(Num::kPrefillTokens); step && *step > 4096) {
        int64_t n = 2048;
        while (2 * n < *step) n *= 2;
        AddFix(d, fmt::format("{}--max-num-batched-tokens {}", chunked, n),
               fmt::format("the failed step ran {:.0f} tokens at once; activations scale with "
                           "the tokens of one forward pass",
                           *step));
      } else {
        AddFix(d, chunked + "--max-num-batched-tokens 2048",
               "a smaller step: activations scale with the tokens of one forward pass");
      }
      if (gmu) AddFix(d, LowerUtilization(*gmu, 0.05), "more headroom for runtime peaks");
      return true;
    }
    case Cause::kWeightsTooLarge:
      WeightsFixes(f, d);
      return true;
    case Cause::kDequantizedCopy:
      // The Marlin repack (rules.cc RepackFrames): a packed copy, not a 16-bit one.
      if (MarlinRepackFrames(f)) {
        AddFix(d, "--tensor-parallel-size 2 (or more GPUs)",
               "each rank loads and repacks half of every sharded weight");
        const bool awq = AnyFrame(f, {"awq_marlin_repack", "awq_marlin_moe_repack"});
        AddFix(d,
               awq ? "--quantization awq (the AWQ kernel keeps the loaded layout)"
                   : "--quantization gptq (the GPTQ kernel shuffles the weights in place)",
               "no Marlin repack, so no second copy of each weight at load; slower kernels");
        return true;
      }
      // Online FP8 (rules.cc OnlineFp8Frames).
      if (AnyFrame(f, {"scaled_fp8_quant"})) {
        AddFix(d,
               "a checkpoint already quantized to FP8 (no --quantization fp8 over 16-bit "
               "weights)",
               "its weights load at 8 bits: no 16-bit copy on the GPU first");
        AddFix(d, "--tensor-parallel-size 2 (or more GPUs)",
               "each rank loads and quantizes half of every sharded weight");
        return true;
      }
      // A conversion after loading with no 16-bit size matched (load_copies.cc).
      if (!d->numbers.count("dequantized_bytes")) {
        AddFix(d, "--tensor-parallel-size 2 (or more GPUs)",
               "each rank loads and converts half of every sharded weight");
        AddFix(d,
               "a --quantization whose kernel keeps the checkpoint's layout (gptq or awq rather "
               "than their Marlin forms), or a GPU with more memory",
               "the conversion writes a new copy of each weight next to the loaded one");
        return true;
      }
      AddFix(d,
             "a kernel path that keeps the weights packed (--quantization awq_marlin / "
             "gptq_marlin on compute capability >= 7.5) or a vLLM release that repacks layer by "
             "layer",
             fmt::format("the 16-bit copy ({}) is what ran out",
                         Gib(d->numbers["dequantized_bytes"])));
      AddFix(d, "--tensor-parallel-size 2", "each rank dequantizes half of every sharded module");
      return true;
    case Cause::kUnshardedSlice:
      AddFix(d, "a vLLM release with native support for this model (not the Transformers backend)",
             "native implementations shard every weight across the tensor-parallel ranks");
      return true;
    case Cause::kFp16Fallback:
      // A dense linear layer built by the unquantized method (layers/linear.py create_weights,
      // the file's only one), not a MoE's experts: vLLM did not read the checkpoint's own
      // quantization at all.
      if (UnquantizedCreateByName(f) &&
          std::any_of(f.frames.begin(), f.frames.end(), [](const LogEvent* fr) {
            return fr->text == "create_weights (linear.py)";
          })) {
        AddFix(d, "an export of the model in a quantization vLLM reads (AWQ, GPTQ, "
                  "compressed-tensors, FP8), named by config.json's quantization_config",
               "vLLM does not read this checkpoint's own quantization format, so it builds every "
               "linear layer at 16 bits");
        AddFix(d, "--tensor-parallel-size 2 (or more GPUs), for the 16-bit model",
               "each GPU builds a share of the 16-bit layers");
        return true;
      }
      // A GGUF checkpoint given as a directory (or a GGUF vLLM's loader does not take): vLLM
      // reads GGUF only from a single .gguf file's path (model_loader gguf_loader.py), with the
      // tokenizer of the original repository.
      if (UnquantizedCreateByName(f) &&
          NameSaysGgufLevel(f.model_path)) {
        AddFix(d, "--model /path/to/model.gguf (one file: llama-gguf-split --merge the shards) "
                  "with --tokenizer set to the original repository, on a vLLM release whose GGUF "
                  "loader supports the architecture",
               "vLLM reads a GGUF only from a single file's path; a directory or an "
               "unsupported GGUF is built unquantized, at 16 bits");
        return true;
      }
      if (UnquantizedCreateInQuantizedRun(f)) {
        AddFix(d, "a --quantization whose MoE method keeps the experts quantized (moe_wna16; "
                  "awq_marlin or gptq_marlin on NVIDIA cards), or a vLLM release that does",
               "the experts then stay 4-bit instead of being created at 16 bits");
        AddFix(d, fmt::format("--tensor-parallel-size {} (or more GPUs)",
                              std::max<int64_t>(4, 2 * f.tp)),
               "each GPU builds a smaller share of the 16-bit layers");
        return true;
      }
      AddFix(d, "a vLLM release with native support for this architecture",
             "the Transformers fallback loaded quantized layers in 16 bits");
      return true;
    default:
      return false;
  }
}

// The log's lines are the V0 engine's: its plan is rebuilt with V0 rules.
void RunFlags(const Facts& f, FlagValues* flags, std::vector<std::string>* notes) {
  if (f.has(EventKind::kVllmV0) && !f.has(EventKind::kVllmV1)) {
    flags->push_back({"--v0-engine", ""});
    notes->push_back("the log's lines are the V0 engine's: planned with V0 rules");
  }
}

// The lines a vLLM server or engine prints once as it starts: the API server's "vLLM API server
// version X" (entrypoints/openai/api_server.py, 0.4+), the engine's "Initializing a V1 LLM
// engine (vX) with config" (v1/engine/core.py, 0.8+) and V0's "Initializing an LLM engine"
// (engine/llm_engine.py, 0.2-0.10).
bool BeginsRun(const Line& line) {
  const LineView s = line.view();
  return Has(s, "vLLM API server version") || Has(s, "Initializing a V1 LLM engine") ||
         Has(s, "Initializing an LLM engine");
}

}  // namespace

// The repacks (vllm/_custom_ops.py, 0.5+; SGLang's sgl_kernel has the same names) allocate the
// repacked tensor, every expert's for the MoE ones, while the loaded one is still held.
bool MarlinRepackFrames(const Facts& f) {
  return AnyFrame(f, {"gptq_marlin_repack", "awq_marlin_repack", "gptq_marlin_moe_repack",
                      "awq_marlin_moe_repack"});
}

const Reader& VllmReader() {
  static const Reader kReader = {
      .engine = kEngine,
      .match = Match,
      .milestones = {{EventKind::kLoadBegin, Stage::kLoad},
                     {EventKind::kConfig, Stage::kLoad},
                     {EventKind::kWeightsLoaded, Stage::kProfile},
                     {EventKind::kProfileBegin, Stage::kProfile},
                     {EventKind::kProfileBreakdown, Stage::kKvCache},
                     // 0.21+ profiles the CUDA graphs' memory (trial captures, "Profiling CUDA
                     // graph memory") before it sizes the KV cache: a KV line after it is the
                     // furthest phase (gpu_worker.py determine_available_memory).
                     {EventKind::kKvAvailable, Stage::kKvCache, false, Stage::kCudaGraph},
                     // "Estimated CUDA graph memory: X GiB total" closes the graphs' trial
                     // captures (0.19+; printed as advice before 0.20.2): the KV cache is sized
                     // and allocated next.
                     {EventKind::kGraphEstimate, Stage::kKvCache, false, Stage::kCudaGraph},
                     {EventKind::kProfileItem, Stage::kKvCache},
                     {EventKind::kBudget, Stage::kKvCache},
                     {EventKind::kProfileV1, Stage::kKvCache},
                     {EventKind::kKvTokens, Stage::kKvCache, false, Stage::kCudaGraph},
                     {EventKind::kGpuBlocks, Stage::kKvCache},
                     {EventKind::kMaxConcurrency, Stage::kKvCache, false, Stage::kCudaGraph},
                     {EventKind::kGraphBegin, Stage::kCudaGraph},
                     {EventKind::kKernelWarmup, Stage::kWarmup, true},
                     // V1 warms up the sampler and kernels after capture (a V0 log: runtime).
                     {EventKind::kGraphDone, Stage::kWarmup},
                     {EventKind::kServing, Stage::kRuntime},
                     {EventKind::kPrompt, Stage::kRuntime}},
      .frame_path = Num::kPathHasVllm,
      .frame_path_final = true,
      .kv_block_tokens = kBlockTokens,
      .fixes = Fixes,
      .words = Say,
      .run_flags = RunFlags,
      .is_default = true,
      .begins_run = BeginsRun,
  };
  return kReader;
}

}  // namespace vramfit::doctor
