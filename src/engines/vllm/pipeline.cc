// vLLM pipeline stages (see pipeline.h): the layer split, the cards, and the stage plans
// combined into one as vLLM's engine core combines its workers' KV memories.
#include "engines/vllm/pipeline.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>
#include <utility>

#include "core/text.h"
#include "core/units.h"

namespace vramfit::vllm {
namespace {

using core::FormatBytes;
using core::GroupDigits;

// The most stages a pipeline may have (the flag reader's bound on parallel sizes).
constexpr int64_t kMaxStages = 4096;

Status Invalid(std::string m) { return Status::InvalidArgument(std::move(m)); }

// Python's int() of one comma-separated word: surrounding blanks and a sign allowed.
bool ReadPythonInt(std::string_view w, int64_t* out) {
  while (!w.empty() && (w.front() == ' ' || w.front() == '\t')) w.remove_prefix(1);
  while (!w.empty() && (w.back() == ' ' || w.back() == '\t')) w.remove_suffix(1);
  if (!w.empty() && w.front() == '+') w.remove_prefix(1);
  if (w.empty()) return false;
  const char* end = w.data() + w.size();
  auto [at, ec] = std::from_chars(w.data(), end, *out);
  return ec == std::errc() && at == end;
}

std::string Joined(const std::vector<int64_t>& v) { return fmt::format("{}", fmt::join(v, ",")); }

// The stage plans of one pipeline: each stage with its layers and card; stages after the first
// take the first stage's scheduler defaults, which vLLM resolves once for the whole engine.
Result<std::vector<VllmPlan>> PlanStages(const VllmSettings& base,
                                         const std::vector<int64_t>& parts,
                                         const std::vector<GpuSpec>& cards,
                                         const StagePlanner& plan_stage) {
  std::vector<VllmPlan> plans;
  int64_t first = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    VllmSettings s = base;
    s.pipeline_stage = static_cast<int64_t>(i);
    s.stage_first_layer = first;
    s.stage_layers = parts[i];
    s.stage_gpus.clear();
    if (i > 0) {
      s.max_num_seqs = plans[0].resolved.max_num_seqs;
      s.max_num_batched_tokens = plans[0].resolved.max_num_batched_tokens;
    }
    auto p = plan_stage(cards[i], s);
    if (!p.ok()) return p.status();
    plans.push_back(std::move(*p));
    first += parts[i];
  }
  return plans;
}

// One request of `len` tokens over every stage's layers: the whole model's KV, as the v0.14-v0.15
// check counts it.
uint64_t WholeModelKv(const std::vector<ModelSpec>& specs, const std::vector<VllmPlan>& plans,
                      int64_t len) {
  uint64_t sum = 0;
  for (size_t i = 0; i < plans.size(); ++i) {
    sum += KvBytesForLength(specs[i], plans[i].kv_options, len);
  }
  return sum;
}

// The longest length in [0, hi] whose whole-model request fits in `available`.
int64_t LongestWholeModel(const std::vector<ModelSpec>& specs, const std::vector<VllmPlan>& plans,
                          uint64_t available, int64_t hi) {
  int64_t lo = 0;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (WholeModelKv(specs, plans, mid) <= available) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

void AddNote(std::vector<std::string>* notes, const std::string& n) {
  if (std::find(notes->begin(), notes->end(), n) == notes->end()) notes->push_back(n);
}

}  // namespace

Result<std::vector<int64_t>> PipelinePartition(int64_t layers, int64_t stages,
                                               std::string_view partition) {
  if (stages < 1 || stages > kMaxStages) {
    return Invalid(fmt::format("--pipeline-parallel-size {}: expected 1 to {}", stages,
                               kMaxStages));
  }
  if (layers < 0) return Invalid("the model has a negative number of layers");
  std::vector<int64_t> parts;
  if (!partition.empty()) {
    // vllm/distributed/utils.py get_pp_indices (read at upstream 5a6541db, ~v0.10): int() of
    // each comma-separated word, then the count and the sum, in vLLM's words.
    const std::string shown = core::Printable(partition);
    size_t at = 0;
    while (true) {
      const size_t comma = partition.find(',', at);
      const std::string_view word = partition.substr(at, comma == std::string_view::npos
                                                             ? std::string_view::npos
                                                             : comma - at);
      int64_t n = 0;
      if (!ReadPythonInt(word, &n) || parts.size() >= static_cast<size_t>(kMaxStages)) {
        return Invalid(fmt::format("VLLM_PP_LAYER_PARTITION={}: Invalid partition string: {} "
                                   "(expected whole numbers of layers per stage, e.g. 16,32)",
                                   shown, shown));
      }
      parts.push_back(n);
      if (comma == std::string_view::npos) break;
      at = comma + 1;
    }
    if (static_cast<int64_t>(parts.size()) != stages) {
      return Invalid(fmt::format("VLLM_PP_LAYER_PARTITION={}: len(partitions)={} does not match "
                                 "pp_size={}.", shown, parts.size(), stages));
    }
    int64_t sum = 0;
    for (int64_t n : parts) {
      if (n < 0 || n > layers) {
        return Invalid(fmt::format("VLLM_PP_LAYER_PARTITION={}: a stage of {} layers (the model "
                                   "has {}); each stage holds 0 to {} layers",
                                   shown, n, layers, layers));
      }
      sum += n;
    }
    if (sum != layers) {
      return Invalid(fmt::format("VLLM_PP_LAYER_PARTITION={}: sum(partitions)={} does not match "
                                 "num_hidden_layers={}.", shown, sum, layers));
    }
    return parts;
  }
  // The default: layers // stages each, and the remainder one each to the stages before the
  // last, counting back from the second-to-last (partitions[-i] for i in 2..remainder+1): the
  // last stage holds the final norm and lm_head.
  parts.assign(static_cast<size_t>(stages), layers / stages);
  const int64_t remainder = layers % stages;
  for (int64_t i = 2; i < remainder + 2; ++i) ++parts[static_cast<size_t>(stages - i)];
  return parts;
}

Result<std::vector<GpuSpec>> StageGpus(const GpuSpec& gpu, const std::vector<GpuSpec>& cards,
                                       int64_t stages, int64_t tp) {
  if (stages < 1 || stages > kMaxStages || tp < 1 || tp > kMaxStages) {
    return Invalid("parallel sizes out of range: 1 to 4096");
  }
  const size_t n = cards.size(), s = static_cast<size_t>(stages), t = static_cast<size_t>(tp);
  if (n <= 1) return std::vector<GpuSpec>(s, n == 1 ? cards[0] : gpu);
  if (n == s) return cards;
  if (n == s * t) {
    std::vector<GpuSpec> out;
    for (size_t i = 0; i < s; ++i) {
      const auto first = cards.begin() + static_cast<std::ptrdiff_t>(i * t);
      out.push_back(*std::min_element(first, first + static_cast<std::ptrdiff_t>(t),
                                      [](const GpuSpec& a, const GpuSpec& b) {
                                        return a.total_bytes < b.total_bytes;
                                      }));
    }
    return out;
  }
  return Invalid(fmt::format(
      "--gpu names {} cards, but the deployment has {} pipeline stage(s) of {} tensor-parallel "
      "rank(s): give one card for all, one per stage ({}), or one per rank ({}), in rank order",
      n, stages, tp, stages, stages * tp));
}

ModelSpec StageSpec(const ModelSpec& spec, int64_t first_layer, int64_t layers, bool last_stage) {
  ModelSpec out = spec;
  const int64_t total = static_cast<int64_t>(spec.layers.size());
  const int64_t begin = std::clamp<int64_t>(first_layer, 0, total);
  const int64_t end = std::clamp<int64_t>(first_layer + layers, begin, total);
  out.layers.assign(spec.layers.begin() + begin, spec.layers.begin() + end);
  if (!last_stage) out.mtp_layers = 0;
  return out;
}

uint64_t KvBytesForLength(const ModelSpec& spec, KvCacheOptions options, int64_t len) {
  options.max_model_len = len;
  auto l = PlanKvCache(spec, options);
  if (!l.ok() || l->layers.empty()) return 0;
  return KvCapacity(*l, 0, options).blocks_per_request * l->page_bytes *
         (l->uniform_type ? 1 : static_cast<uint64_t>(l->group_size));
}

Result<VllmPlan> PlanPipeline(const ModelSpec& spec, const GpuSpec& gpu, const VllmSettings& in,
                              const StagePlanner& plan_stage) {
  const int64_t pp = in.pipeline_parallel_size;
  auto parts = PipelinePartition(static_cast<int64_t>(spec.layers.size()), pp,
                                 in.pp_layer_partition);
  if (!parts.ok()) return parts.status();
  auto cards = StageGpus(gpu, in.stage_gpus, pp, in.tensor_parallel_size);
  if (!cards.ok()) return cards.status();
  auto plans = PlanStages(in, *parts, *cards, plan_stage);
  if (!plans.ok()) return plans.status();
  std::vector<ModelSpec> specs;
  int64_t first = 0;
  for (size_t i = 0; i < parts->size(); ++i) {
    specs.push_back(StageSpec(spec, first, (*parts)[i], i + 1 == parts->size()));
    first += (*parts)[i];
  }
  const Rules rules = RulesFor(*ParseRelease((*plans)[0].modelled_version));
  const bool whole = rules.pp_kv_check_whole_model && !in.v0_engine;
  auto min_available = [&] {
    uint64_t m = UINT64_MAX;
    for (const VllmPlan& p : *plans) m = std::min(m, p.gpus[0].kv_cache_bytes);
    return m;
  };
  // --max-model-len auto: the longest length every stage holds (v0.16+: the smallest of the
  // stages' own fits; v0.14-v0.15: the whole model in the smallest stage's memory), then every
  // stage planned at it.
  if (in.max_model_len == -1) {
    int64_t fit = INT64_MAX;
    const int64_t derived = (*plans)[0].max_model_len;
    for (const VllmPlan& p : *plans) fit = std::min(fit, p.max_model_len);
    if (whole) fit = LongestWholeModel(specs, *plans, min_available(), fit);
    if (fit > 0 && fit < derived) {
      VllmSettings at = in;
      at.max_model_len = fit;
      auto again = PlanStages(at, *parts, *cards, plan_stage);
      if (!again.ok()) return again.status();
      *plans = std::move(*again);
      AddNote(&(*plans)[0].notes,
              fmt::format("--max-model-len auto: {} tokens, the longest that every pipeline stage "
                          "holds", GroupDigits(static_cast<uint64_t>(fit))));
    }
  }
  std::vector<VllmPlan>& st = *plans;
  // The binding stage: the fewest KV blocks, which every worker is then given
  // (v1/core/kv_cache_utils.py get_kv_cache_configs, read at upstream 001cabc: num_blocks = min
  // over workers, tensors shrunk to it since PR #25164).
  int64_t bind = -1;
  uint64_t fewest = 0;
  for (size_t i = 0; i < st.size(); ++i) {
    if (st[i].kv_layout.layers.empty()) continue;
    const uint64_t blocks =
        KvCapacity(st[i].kv_layout, st[i].gpus[0].kv_cache_bytes, st[i].kv_options).num_blocks;
    if (bind < 0 || blocks < fewest) {
      bind = static_cast<int64_t>(i);
      fewest = blocks;
    }
  }
  // The first failure in start-up order, then in stage order. Under the v0.14-v0.15 rule the
  // stages' own max-length checks give way to the whole-model one below.
  int64_t failed = -1;
  for (size_t i = 0; i < st.size(); ++i) {
    if (st[i].fits || !st[i].failure_stage) continue;
    if (whole && *st[i].failure_stage == Stage::kKvCache) continue;
    if (failed < 0 || *st[i].failure_stage < *st[static_cast<size_t>(failed)].failure_stage) {
      failed = static_cast<int64_t>(i);
    }
  }
  VllmPlan out = st[0];  // settings, command and notes are the first stage's
  const size_t decider = static_cast<size_t>(failed >= 0 ? failed : std::max<int64_t>(bind, 0));
  out.fits = failed < 0;
  out.failure_stage = failed >= 0 ? st[decider].failure_stage : std::nullopt;
  out.failure_message = failed >= 0 ? st[decider].failure_message : "";
  out.estimated_max_model_len = failed >= 0 ? st[decider].estimated_max_model_len : 0;
  out.kv_needed_bytes = st[decider].kv_needed_bytes;
  out.margin_bytes = st[decider].margin_bytes;
  out.uncertainty_bytes = st[decider].uncertainty_bytes;
  for (const VllmPlan& p : st) {  // the tightest margin of any stage
    if (p.margin_bytes - static_cast<int64_t>(p.uncertainty_bytes) <
        out.margin_bytes - static_cast<int64_t>(out.uncertainty_bytes)) {
      out.margin_bytes = p.margin_bytes;
      out.uncertainty_bytes = p.uncertainty_bytes;
    }
  }
  if (whole && bind >= 0) {
    // v0.14-v0.15 (PR #29431): one request of the whole model's layers against the smallest
    // worker's available memory (issues #32105, #34076; PR #33698 restored per-worker checks).
    const uint64_t available = min_available();
    const uint64_t needed = WholeModelKv(specs, st, out.max_model_len);
    out.kv_needed_bytes = needed;
    const int64_t margin = static_cast<int64_t>(available) - static_cast<int64_t>(needed);
    if (margin - static_cast<int64_t>(st[decider].uncertainty_bytes) <
        out.margin_bytes - static_cast<int64_t>(out.uncertainty_bytes)) {
      out.margin_bytes = margin;
      out.uncertainty_bytes = st[decider].uncertainty_bytes;
    }
    const bool earlier = failed >= 0 && *out.failure_stage < Stage::kKvCache;
    if (!earlier && (available == 0 || needed > available)) {
      out.fits = false;
      out.failure_stage = Stage::kKvCache;
      if (available == 0) {
        out.failure_message = "No available memory for the cache blocks. Try increasing "
                              "`gpu_memory_utilization` when initializing the engine.";
      } else {
        out.estimated_max_model_len =
            LongestWholeModel(specs, st, available, out.max_model_len);
        out.failure_message = fmt::format(
            "To serve at least one request with the model's max seq len ({}), ({:.2f} GiB KV "
            "cache is needed, which is larger than the available KV cache memory ({:.2f} GiB).{} "
            "Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
            "initializing the engine.", out.max_model_len,
            static_cast<double>(needed) / core::kGiB, static_cast<double>(available) / core::kGiB,
            out.estimated_max_model_len > 0
                ? fmt::format(" Based on the available memory, the estimated maximum model "
                              "length is {}.", out.estimated_max_model_len)
                : std::string());
      }
    }
  }
  const size_t shown = failed >= 0 || !out.fits ? decider : static_cast<size_t>(std::max<int64_t>(
                                                                bind, 0));
  out.gpu = (*cards)[shown];
  out.gpus = st[shown].gpus;
  out.stages = st[shown].stages;
  if (whole && bind >= 0) {
    for (StageLine& line : out.stages) {
      if (line.stage != Stage::kKvCache) continue;
      line.detail = fmt::format("available {}, one {}-token request of all layers needs {}",
                                FormatBytes(min_available()),
                                GroupDigits(static_cast<uint64_t>(out.max_model_len)),
                                FormatBytes(out.kv_needed_bytes));
    }
  }
  if (bind >= 0) {
    const VllmPlan& b = st[static_cast<size_t>(bind)];
    out.kv_cache_tokens = b.kv_cache_tokens;
    out.max_concurrency = b.max_concurrency;
    out.kv_layout = b.kv_layout;
    out.kv_options = b.kv_options;
    out.kv_block_size = b.kv_layout.block_size;
    out.kv_groups = b.kv_layout.groups.size();
  }
  // The settings as given for the whole pipeline.
  VllmSettings resolved = ToVllmSettings(out.resolved);
  resolved.pipeline_stage = -1;
  resolved.stage_first_layer = 0;
  resolved.stage_layers = 0;
  resolved.stage_gpus = in.stage_gpus;
  out.resolved = ToEngineSettings(resolved);
  out.binding_stage = bind;
  out.pipeline_stages.clear();
  first = 0;
  for (size_t i = 0; i < st.size(); ++i) {
    PipelineStage ps;
    ps.first_layer = first;
    ps.layers = (*parts)[i];
    ps.gpu = (*cards)[i];
    ps.per_gpu = st[i].gpus[0];
    ps.kv_cache_tokens = st[i].kv_cache_tokens;
    ps.kv_needed_bytes = st[i].kv_needed_bytes;
    ps.failure_stage = st[i].fits ? std::nullopt : st[i].failure_stage;
    if (whole && ps.failure_stage == Stage::kKvCache) ps.failure_stage.reset();  // checked above
    out.pipeline_stages.push_back(std::move(ps));
    first += (*parts)[i];
    for (const std::string& n : st[i].notes) AddNote(&out.notes, n);
  }
  AddNote(&out.notes,
          fmt::format("pipeline parallel: decoder layers per stage {} ({}); {}", Joined(*parts),
                      in.pp_layer_partition.empty()
                          ? "vLLM's default split: the remainder goes to the stages before the "
                            "last (get_pp_indices)"
                          : "VLLM_PP_LAYER_PARTITION",
                      VllmVocabOnEveryStage(spec.family)
                          ? "every stage holds the embedding, the final norm and lm_head (vLLM's "
                            "model of this family builds them on every rank)"
                          : "the first stage holds the embedding, the last the final norm and "
                            "lm_head"));
  if (bind >= 0) {
    AddNote(&out.notes,
            fmt::format("pipeline KV cache: every stage gets the fewest blocks of any stage; "
                        "stage {} ({}, {} available) binds, and vLLM's GPU KV cache size comes "
                        "from it; the max-length check {}",
                        bind, (*cards)[static_cast<size_t>(bind)].name,
                        FormatBytes(st[static_cast<size_t>(bind)].gpus[0].kv_cache_bytes),
                        whole ? "counts the whole model's layers against the smallest stage's "
                                "memory (v0.14-v0.15)"
                              : "runs per stage on its own layers and memory"));
  }
  return out;
}

}  // namespace vramfit::vllm
