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
  return f.has(EventKind::kSamplerOom) ||
         std::any_of(f.frames.begin(), f.frames.end(),
                     [](const LogEvent* fr) { return FrameIs(fr, {"_dummy_sampler_run"}); });
}

bool NoKvMemory(const Facts& f) {
  return f.has(EventKind::kNoKvMemory) || NegativeKv(f) || f.has(EventKind::kSglangNotEnough);
}

// llama.cpp's failures: its buffer, KV and compute failures decide; its reservation and load
// failures only in a log that is its own.
bool GgmlFailed(const Facts& f) {
  return f.has(EventKind::kGgmlAllocFail) || f.has(EventKind::kGgmlKvFail) ||
         f.has(EventKind::kGgmlComputeFail) || ByTheEngine(f, EventKind::kGgmlReserveFail) ||
         ByTheEngine(f, EventKind::kGgmlLoadFail);
}
bool GgmlKv(const Facts& f) { return GgmlFailed(f) && f.has(EventKind::kGgmlKvFail); }
bool GgmlCompute(const Facts& f) {
  return GgmlFailed(f) &&
         (f.has(EventKind::kGgmlComputeFail) || f.has(EventKind::kGgmlReserveFail));
}
bool GgmlComputeImage(const Facts& f) { return GgmlCompute(f) && f.has(EventKind::kImage); }
bool GgmlComputeDecode(const Facts& f) {
  if (!GgmlCompute(f)) return false;
  const LogEvent* c = f.first_of(EventKind::kGgmlComputeFail);
  if (!c) return false;
  auto it = c->values.find(Num::kDuringDecode);
  return it != c->values.end() && it->second > 0;
}
bool GgmlBuffer(const Facts& f) {
  return GgmlFailed(f) && (f.has(EventKind::kGgmlLoadFail) || f.has(EventKind::kGgmlAllocFail));
}
bool GgmlBufferImage(const Facts& f) { return GgmlBuffer(f) && f.has(EventKind::kImage); }

bool ProfileMultimodal(const Facts& f) { return f.stage == Stage::kProfile && f.multimodal; }

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
    singles.push_back({t.module, b16});
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
  return fmt::format("{} of weights per GPU at tensor parallel {} on a {} card", Gib(PerRank(f)),
                     f.tp, Gib(f.total));
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

// A model name that states its size: 16-bit weights per rank against the card.
double NamedPerRank(const Facts& f) {
  return ParamsFromName(f.model_path) * 2 / static_cast<double>(f.tp);
}
bool NameTooLarge(const Facts& f) {
  return f.stage == Stage::kLoad && ParamsFromName(f.model_path) > 0 && f.total > 0 &&
         !QuantizedName(f.model_path) && NamedPerRank(f) > f.total * 0.95;
}
std::string SayNameTooLarge(const Facts& f, std::map<std::string, double>* numbers) {
  (*numbers)["weights_estimate_bytes"] = NamedPerRank(f);
  return fmt::format(
      "the model's name says {:.0f}B parameters: about {} of 16-bit weights per GPU at tensor "
      "parallel {}, more than the card's {}",
      ParamsFromName(f.model_path) / 1e9, Gib(NamedPerRank(f)), f.tp, Gib(f.total));
}

// PyTorch's message lists other processes holding more than a quarter of the card.
double OthersBytes(const Facts& f) {
  return *f.get(Num::kListedProcessBytes) - *f.get(Num::kProcessBytes);
}
bool OthersAtLoad(const Facts& f) {
  return f.stage == Stage::kLoad && f.get(Num::kListedProcessBytes) && f.get(Num::kProcessBytes) &&
         f.total > 0 && OthersBytes(f) > 0.25 * f.total;
}
std::string SayOthers(const Facts& f, std::map<std::string, double>* numbers) {
  (*numbers)["other_process_bytes"] = OthersBytes(f);
  return fmt::format("other processes hold {} of the GPU's {}", Gib(OthersBytes(f)), Gib(f.total));
}

// At runtime PyTorch held at least max(requested, 512 MiB) reserved but unallocated.
bool Fragmented(const Facts& f) {
  const auto requested = f.get(Num::kRequestedBytes);
  const auto reserved_free = f.get(Num::kReservedUnallocatedBytes);
  return f.stage == Stage::kRuntime && requested && reserved_free && *requested > 0 &&
         *reserved_free >= std::max(*requested, 512.0 * core::kMiBf);
}
bool RuntimeStaticCache(const Facts& f) {
  return f.stage == Stage::kRuntime && f.has(EventKind::kStaticCache);
}
bool RuntimeMultimodal(const Facts& f) { return f.stage == Stage::kRuntime && f.multimodal; }

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

}  // namespace

const std::vector<Rule>& Rules() {
  using C = Cause;
  using S = Stage;
  using E = EventKind;
  static const std::vector<Rule> kRules = {
      // The engine's own error text.
      Worded(C::kKvTooLongContext, S::kKvCache, Seen<E::kMaxLenError>, Words::kMaxLenCheck),
      Worded(C::kOtherProcess, S::kStartup, Seen<E::kStartupError>, Words::kStartupFreeMemory),
      Worded(C::kSamplerWarmup, S::kProfile, SamplerOom, Words::kSamplerWarmup),
      Text(C::kKvNoMemory, S::kKvCache, NoKvMemory,
           "nothing is left for the KV cache: the weights and the profiled activation peak use the "
           "whole --gpu-memory-utilization budget"),
      Text(C::kKvTooLongContext, S::kKvCache, KvTooSmall,
           "the KV cache holds fewer tokens than one --max-model-len request (# GPU blocks x 16 "
           "tokens)"),
      // llama.cpp's failed allocations.
      Worded(C::kKvTooLongContext, S::kKvCache, GgmlKv, Words::kKvBuffer),
      Worded(C::kMultimodalEncoder, S::kRuntime, GgmlComputeImage, Words::kImageComputeBuffer),
      Worded(C::kComputeBuffer, S::kRuntime, GgmlComputeDecode, Words::kDecodeComputeBuffer),
      Worded(C::kComputeBuffer, S::kProfile, GgmlCompute, Words::kContextComputeBuffer),
      Worded(C::kMultimodalEncoder, S::kRuntime, GgmlBufferImage, Words::kImageBuffer),
      Worded(C::kWeightsTooLarge, S::kLoad, GgmlBuffer, Words::kWeightBuffer),
      // SGLang's token pool.
      Worded(C::kKvTooManySequences, S::kRuntime, Seen<E::kSglangTokenOom>, Words::kTokenPool),
      // By stage.
      Worded(C::kCudagraphCapture, S::kCudaGraph, At<S::kCudaGraph>, Words::kGraphCapture),
      Text(C::kKvNoMemory, S::kKvCache, At<S::kKvCache>,
           "allocating the KV cache ran out of memory: what was measured as free at profiling was "
           "no longer there"),
      Worded(C::kMultimodalEncoder, S::kProfile, ProfileMultimodal, Words::kProfileEncoder),
      Text(C::kActivationPeak, S::kProfile, At<S::kProfile>,
           "the profile run ran out of memory: a forward pass over max_num_batched_tokens tokens "
           "does not fit next to the weights"),
      Worded(C::kUnshardedSlice, S::kLoad, BackendSharded, Words::kBackendUnsharded),
      Worded(C::kFp16Fallback, S::kLoad, Backend, Words::kBackendUnquantized),
      Said(C::kDequantizedCopy, S::kLoad, DequantizedCopy, SayDequantized),
      Said(C::kUnshardedSlice, S::kLoad, WholeTensor, SayWholeTensor),
      Said(C::kWeightsTooLarge, S::kLoad, ModelTooLarge, SayModelTooLarge),
      Said(C::kFp16Fallback, S::kLoad, ModelUnquantized, SayModelUnquantized),
      Said(C::kWeightsTooLarge, S::kLoad, NameTooLarge, SayNameTooLarge),
      Said(C::kOtherProcess, S::kLoad, OthersAtLoad, SayOthers),
      Text(C::kWeightsTooLarge, S::kLoad, At<S::kLoad>,
           "loading the weights ran out of memory: the weights (and their load-time copies) do not "
           "fit on each GPU"),
      Text(C::kOtherProcess, S::kStartup, At<S::kStartup>,
           "start-up ran out of memory before loading: something else holds memory on the GPU"),
      // What is left is at runtime.
      Text(C::kFragmentation, S::kRuntime, Fragmented,
           "a runtime allocation failed although PyTorch held more reserved-but-unallocated memory "
           "than it asked for: fragmentation of the caching allocator"),
      Text(C::kStaticCache, S::kRuntime, RuntimeStaticCache,
           "generation with a static cache reserves the whole max length for every sequence up "
           "front"),
      Text(C::kMultimodalEncoder, S::kRuntime, RuntimeMultimodal,
           "a request's images ran the vision encoder out of memory (the encoder's activations "
           "grow with the image's pixels); not the KV cache, which was allocated at start-up"),
      Text(C::kActivationPeak, S::kRuntime, Always,
           "a runtime allocation for activations failed (a long prompt or a large batch); not the "
           "KV cache, which a paged engine allocates at start-up"),
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
  d->stage = StageName(match->stage);
  d->cause = CauseName(match->cause);
  d->summary = match->summary ? std::string(match->summary)
               : match->say   ? match->say(f, &d->numbers)
                              : EngineWords(match->words, f);
  return *match;
}

}  // namespace vramfit::doctor
