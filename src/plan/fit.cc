// The fit search (see vramfit/fit.h). Every candidate is a full plan of the engine; the longest
// context is found by binary search on the plan's own verdict, so the answer agrees exactly with
// what `vramfit plan` and `vramfit check` say of the emitted command.
#include "vramfit/fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/units.h"

namespace vramfit {
namespace {

// The context of the probe that says why nothing fits at all (a short request).
constexpr int64_t kShortProbeContext = 2048;

using core::GroupDigits;

// The knobs a row turns away from the engine's defaults: bit i for engine.knobs[i], the first
// knob the most significant (the order the search enumerates them).
using Knobs = uint32_t;

struct Layout {
  int64_t tp = 1, pp = 1;
};

// Searches one model; shares the request and the counters.
class Searcher {
 public:
  Searcher(const Engine& e, const FitModel& m, const std::string& first_model, const FitRequest& r,
           uint64_t* plans)
      : engine_(e), model_(m), first_model_(first_model), req_(r), plans_(plans) {
    auto prepared = e.prepare(*m.inventory);
    if (prepared.ok()) prepared_ = std::move(*prepared);
  }

  const PreparedModel* prepared() const { return prepared_.get(); }

  int64_t ModelMax() const { return engine_.model_max_len(model_.inventory->spec, req_.base); }

  std::vector<Layout> Layouts(int count, bool exact) const {
    std::vector<Layout> out;
    for (int64_t tp = 1; tp <= count; ++tp) {
      if (req_.fixed.tensor_parallel && tp != req_.base.tensor_parallel_size) continue;
      for (int64_t pp = 1; tp * pp <= count; ++pp) {
        if (req_.fixed.pipeline_parallel && pp != req_.base.pipeline_parallel_size) continue;
        if (exact && tp * pp != count) continue;
        if (pp > static_cast<int64_t>(model_.inventory->spec.layers.size())) continue;
        out.push_back({tp, pp});
      }
    }
    return out;
  }

  // Every combination of the knobs the request leaves free, in enumeration order.
  std::vector<Knobs> KnobGrid() const {
    const size_t n = engine_.knobs.size();
    Knobs free = 0;
    for (size_t i = 0; i < n; ++i) {
      const Setting s = engine_.knobs[i].setting;
      if (req_.fixed.Has(s) || (s == Setting::kEnforceEager && req_.no_eager)) continue;
      free |= Knobs{1} << (n - 1 - i);
    }
    std::vector<Knobs> out;
    for (Knobs k = 0; k < (Knobs{1} << n); ++k) {
      if ((k & ~free) == 0) out.push_back(k);
    }
    return out;
  }

  bool On(Knobs k, size_t i) const { return (k >> (engine_.knobs.size() - 1 - i)) & 1; }

  // Settings for a layout and knobs (max_model_len left to the caller). nullopt when a knob
  // changes nothing (e.g. a small batch where the default is already that small).
  std::optional<EngineSettings> Apply(const Layout& l, Knobs k, const GpuSpec& gpu) const {
    EngineSettings s = req_.base;
    s.tensor_parallel_size = l.tp;
    s.pipeline_parallel_size = l.pp;
    for (size_t i = 0; i < engine_.knobs.size(); ++i) {
      if (On(k, i) && !engine_.knobs[i].apply(gpu, &s)) return std::nullopt;
    }
    return s;
  }

  Result<Plan> PlanOn(const GpuSpec& gpu, const EngineSettings& s) {
    ++*plans_;
    return prepared_->MakePlan(gpu, s);
  }

  // Fits, and `concurrency` full-length requests fit in the KV cache and in max_num_seqs.
  bool Serves(const Plan& p, double concurrency) const {
    return p.fits && p.max_concurrency + 1e-9 >= concurrency &&
           static_cast<double>(p.resolved.max_num_seqs) + 1e-9 >= concurrency;
  }

  // The longest max_model_len in [1, hi] whose plan fits and serves `concurrency` full-length
  // requests; 0 when none. Monotone: a longer context needs more KV and leaves less concurrency.
  int64_t Longest(const GpuSpec& gpu, EngineSettings s, int64_t hi, double concurrency,
                  std::optional<Plan>* out) {
    auto ok = [&](int64_t len, std::optional<Plan>* keep) {
      s.max_model_len = len;
      auto p = PlanOn(gpu, s);
      if (!p.ok() || !Serves(*p, concurrency)) return false;
      *keep = std::move(*p);
      return true;
    };
    s.max_model_len = hi;
    auto first = PlanOn(gpu, s);
    if (!first.ok()) return 0;
    if (Serves(*first, concurrency)) {
      *out = std::move(*first);
      return hi;
    }
    // Start-up and load failures do not depend on the context.
    if (!first->fits &&
        (first->failure_stage == Stage::kStartup || first->failure_stage == Stage::kLoad)) {
      return 0;
    }
    int64_t lo = 0, top = hi - 1;
    if (first->estimated_max_model_len > 0) {
      // The engine's own estimate bounds the answer; for one request it is the answer.
      top = std::min<int64_t>(top, first->estimated_max_model_len);
      if (ok(top, out)) return top;
      --top;
    }
    while (lo < top) {
      const int64_t mid = lo + (top - lo + 1) / 2;
      std::optional<Plan> p;
      if (ok(mid, &p)) {
        lo = mid;
        *out = std::move(p);
      } else {
        top = mid - 1;
      }
    }
    if (lo > 0 && (!*out || (*out)->max_model_len != lo)) ok(lo, out);
    return lo;
  }

  FitOption Make(const GpuSpec& gpu, const Layout& l, Knobs k, Plan plan) const {
    FitOption o;
    o.model = model_.name;
    o.gpu = gpu;
    o.gpus = static_cast<int>(l.tp * l.pp);
    o.settings = plan.resolved;
    o.context = plan.max_model_len;
    o.concurrency = plan.max_concurrency;
    o.served = std::min(plan.max_concurrency, static_cast<double>(plan.resolved.max_num_seqs));
    o.command = plan.command;
    if (model_.name != first_model_) o.given_up.push_back("model variant " + model_.name);
    // Pipeline stages where the engine also offers tensor parallelism (vLLM, SGLang): a
    // request's layers run stage after stage, so one request decodes no faster than on one GPU,
    // where TP splits every layer across the GPUs (vLLM's docs: TP within a node, PP across
    // nodes). Named, so that a TP layout as good on the goal ranks first.
    const std::string tp_flag = engine_.flag_name(Setting::kTensorParallel);
    const std::string pp_flag = engine_.flag_name(Setting::kPipelineParallel);
    if (l.pp > 1 && !tp_flag.empty() && !pp_flag.empty() && tp_flag != pp_flag) {
      o.given_up.push_back(fmt::format("{} {} (slower per request than tensor parallelism)",
                                       pp_flag, l.pp));
    }
    for (size_t i = 0; i < engine_.knobs.size(); ++i) {
      if (!On(k, i)) continue;
      const Knob& knob = engine_.knobs[i];
      // A setting spelled as an environment assignment ("NAME=") takes its value unspaced.
      const std::string flag = engine_.flag_name(knob.setting);
      const std::string value = !*knob.value ? std::string()
                                : flag.ends_with('=') ? std::string(knob.value)
                                                      : std::string(" ") + knob.value;
      o.given_up.push_back(fmt::format("{}{} ({})", flag, value, knob.cost));
    }
    o.plan = std::move(plan);
    return o;
  }

 private:
  const Engine& engine_;
  const FitModel& model_;
  std::string first_model_;
  const FitRequest& req_;
  uint64_t* plans_;
  std::unique_ptr<PreparedModel> prepared_;
};

// a dominates b: no worse on context, requests served, GPUs (and their memory) and the number
// of things given up, better on one.
bool Dominates(const FitOption& a, const FitOption& b) {
  const uint64_t ma = a.gpu.total_bytes * static_cast<uint64_t>(a.gpus);
  const uint64_t mb = b.gpu.total_bytes * static_cast<uint64_t>(b.gpus);
  const bool no_worse = a.context >= b.context && a.served + 1e-9 >= b.served && a.gpus <= b.gpus &&
                        ma <= mb && a.given_up.size() <= b.given_up.size();
  const bool better = a.context > b.context || a.served > b.served + 1e-9 || a.gpus < b.gpus ||
                      ma < mb || a.given_up.size() < b.given_up.size();
  return no_worse && better;
}

std::vector<FitOption> Pareto(std::vector<FitOption> all) {
  std::vector<FitOption> out;
  for (size_t i = 0; i < all.size(); ++i) {
    bool dominated = false;
    for (size_t j = 0; j < all.size() && !dominated; ++j) {
      if (i == j) continue;
      dominated =
          Dominates(all[j], all[i]) ||
          // identical rows: keep the first
          (j < i && !Dominates(all[i], all[j]) && all[j].context == all[i].context &&
           std::abs(all[j].served - all[i].served) < 1e-9 && all[j].gpus == all[i].gpus &&
           all[j].gpu.total_bytes == all[i].gpu.total_bytes && all[j].given_up == all[i].given_up);
    }
    if (!dominated) out.push_back(all[i]);
  }
  return out;
}

std::string CardText(const FitOption& o) { return fmt::format("{} x {}", o.gpus, o.gpu.id); }

}  // namespace

bool FitFixed::Has(Setting s) const {
  switch (s) {
    case Setting::kTensorParallel: return tensor_parallel;
    case Setting::kPipelineParallel: return pipeline_parallel;
    case Setting::kMaxModelLen: return max_model_len;
    case Setting::kGpuMemoryUtilization: return gpu_memory_utilization;
    case Setting::kKvCacheDtype: return kv_cache_dtype;
    case Setting::kMaxNumSeqs: return max_num_seqs;
    case Setting::kMaxNumBatchedTokens: return max_num_batched_tokens;
    case Setting::kEnforceEager: return enforce_eager;
  }
  return false;
}

Result<FitResult> Fit(const Engine& engine, const std::vector<FitModel>& models,
                      const FitRequest& request) {
  if (models.empty() || models[0].inventory == nullptr)
    return Status::InvalidArgument("fit: no model to search");
  // A --min-context past what the engine derives, where the engine has a documented setting
  // that derives it (Engine::stretch_context): searched with that setting, said in the notes.
  FitRequest req = request;
  std::string stretched;
  if (engine.stretch_context != nullptr && req.min_context > 0 &&
      !req.base.allow_long_max_model_len &&
      req.min_context > engine.model_max_len(models[0].inventory->spec, req.base) &&
      !engine.stretch_context(models[0].inventory->spec, req.min_context, &req.base,
                              &stretched)) {
    stretched.clear();
  }
  if (req.cards.empty())
    return Status::InvalidArgument("fit: no GPU to search (--gpu NAME, or --goal gpus)");
  if (req.max_gpus < 1 || req.max_gpus > 64) {
    return Status::InvalidArgument(fmt::format("--gpus {}: expected 1 to 64", req.max_gpus));
  }
  if (req.min_concurrency <= 0 || !std::isfinite(req.min_concurrency)) {
    return Status::InvalidArgument(
        fmt::format("--min-concurrency {}: expected a positive number", req.min_concurrency));
  }
  if (req.min_context < 0)
    return Status::InvalidArgument(
        fmt::format("--min-context {}: must be positive", req.min_context));
  for (const FitModel& m : models) {
    if (!m.inventory->has_spec)
      return Status::InvalidArgument(fmt::format("{}: fit needs the model's config.json", m.name));
  }
  // The searchers, one per model (each prepares its model once).
  FitResult result;
  if (!stretched.empty()) result.notes.push_back(stretched);
  result.engine = std::string(engine.name);
  result.engine_title = std::string(engine.title);
  std::vector<std::unique_ptr<Searcher>> searchers;
  for (const FitModel& m : models) {
    searchers.push_back(std::make_unique<Searcher>(engine, m, models[0].name, req, &result.plans));
    if (searchers.back()->prepared() == nullptr) {
      auto p = engine.prepare(*m.inventory);
      return p.ok() ? Status::InvalidArgument(m.name + ": could not be prepared") : p.status();
    }
  }
  std::string refusal;  // the release refuses the model whatever the card (Plan::refusal)

  // The requested settings must be plannable at all (the engine's own errors, e.g. a TP that
  // does not divide the heads), or the search would silently answer a different question.
  {
    EngineSettings probe = req.base;
    if (probe.max_model_len <= 0) probe.max_model_len = 0;
    auto p = searchers[0]->prepared()->MakePlan(req.cards[0], probe);
    if (!p.ok()) return p.status();
    refusal = p->refusal;
  }
  VRAMFIT_RETURN_IF_ERROR(engine.check_context(models[0].inventory->spec, req.base,
                                               req.min_context,
                                               fmt::format("--min-context {}", req.min_context)));
  std::vector<FitOption> met, any;
  const double conc = req.min_concurrency;
  for (auto& searcher : searchers) {
    Searcher& s = *searcher;
    const int64_t model_max = s.ModelMax();
    // The context the other goals must serve: --max-model-len, else --min-context, else the
    // model's.
    int64_t target = req.fixed.max_model_len && req.base.max_model_len > 0 ? req.base.max_model_len
                     : req.min_context > 0                                 ? req.min_context
                                                                           : model_max;
    if (target > model_max && !req.base.allow_long_max_model_len) target = model_max;
    for (const GpuSpec& gpu : req.cards) {
      if (req.goal == FitGoal::kGpus) {
        for (int count = 1; count <= req.max_gpus; ++count) {
          bool found = false;
          for (const Layout& l : s.Layouts(count, true)) {
            for (Knobs k : s.KnobGrid()) {
              auto settings = s.Apply(l, k, gpu);
              if (!settings) continue;
              settings->max_model_len = target;
              auto p = s.PlanOn(gpu, *settings);
              if (!p.ok()) break;  // layout rejected by the engine's rules: no knob changes that
              if (p->fits) {
                FitOption o = s.Make(gpu, l, k, *p);
                if (s.Serves(*p, conc)) {
                  met.push_back(o);
                  found = true;
                } else {
                  any.push_back(o);
                }
              } else if (p->failure_stage == Stage::kKvCache && p->estimated_max_model_len > 0) {
                settings->max_model_len = p->estimated_max_model_len;
                auto q = s.PlanOn(gpu, *settings);
                if (q.ok() && q->fits) any.push_back(s.Make(gpu, l, k, *q));
              }
            }
          }
          if (found) break;  // fewer cards of this kind already serve it
        }
        continue;
      }
      for (const Layout& l : s.Layouts(req.max_gpus, false)) {
        for (Knobs k : s.KnobGrid()) {
          auto settings = s.Apply(l, k, gpu);
          if (!settings) continue;
          if (req.goal == FitGoal::kContext) {
            const int64_t hi = req.fixed.max_model_len && req.base.max_model_len > 0
                                   ? req.base.max_model_len
                                   : model_max;
            std::optional<Plan> plan;
            const int64_t len = s.Longest(gpu, *settings, hi, conc, &plan);
            if (len > 0 && plan) {
              FitOption o = s.Make(gpu, l, k, std::move(*plan));
              (o.context >= req.min_context ? met : any).push_back(std::move(o));
            } else {
              std::optional<Plan> one;
              if (s.Longest(gpu, *settings, hi, 1, &one) > 0 && one)
                any.push_back(s.Make(gpu, l, k, std::move(*one)));
            }
          } else {  // concurrency at the target context
            settings->max_model_len = target;
            auto p = s.PlanOn(gpu, *settings);
            if (!p.ok()) break;
            if (p->fits) {
              FitOption o = s.Make(gpu, l, k, *p);
              (s.Serves(*p, conc) ? met : any).push_back(std::move(o));
            } else {
              std::optional<Plan> one;
              if (s.Longest(gpu, *settings, target, 1, &one) > 0 && one)
                any.push_back(s.Make(gpu, l, k, std::move(*one)));
            }
          }
        }
      }
    }
  }

  auto rank = [&](std::vector<FitOption>* v) {
    std::stable_sort(v->begin(), v->end(), [&](const FitOption& a, const FitOption& b) {
      const uint64_t ma = a.gpu.total_bytes * static_cast<uint64_t>(a.gpus);
      const uint64_t mb = b.gpu.total_bytes * static_cast<uint64_t>(b.gpus);
      switch (req.goal) {
        case FitGoal::kContext:
          if (a.context != b.context) return a.context > b.context;
          break;
        case FitGoal::kConcurrency:
          if (std::abs(a.served - b.served) > 1e-9) return a.served > b.served;
          break;
        case FitGoal::kGpus:
          if (a.gpus != b.gpus) return a.gpus < b.gpus;
          if (ma != mb) return ma < mb;
          break;
      }
      if (a.given_up.size() != b.given_up.size()) return a.given_up.size() < b.given_up.size();
      if (a.gpus != b.gpus) return a.gpus < b.gpus;
      if (ma != mb) return ma < mb;
      if (std::abs(a.concurrency - b.concurrency) > 1e-9) return a.concurrency > b.concurrency;
      return a.context > b.context;
    });
  };
  if (!met.empty()) {
    result.met = true;
    result.options = Pareto(std::move(met));
    rank(&result.options);
    if (result.options.size() > req.max_options) result.options.resize(req.max_options);
    return result;
  }
  // Not met: say so, with the nearest thing that fits.
  std::string card = req.goal == FitGoal::kGpus
                         ? fmt::format("up to {} of any catalog card", req.max_gpus)
                         : fmt::format("{} x {}", req.max_gpus, req.cards[0].id);
  if (req.cards.size() == 1 && req.goal == FitGoal::kGpus)
    card = fmt::format("up to {} x {}", req.max_gpus, req.cards[0].id);
  if (!any.empty()) {
    FitGoal g = req.goal;
    std::stable_sort(any.begin(), any.end(), [&](const FitOption& a, const FitOption& b) {
      if (g != FitGoal::kConcurrency && a.context != b.context) return a.context > b.context;
      if (g == FitGoal::kConcurrency && std::abs(a.served - b.served) > 1e-9)
        return a.served > b.served;
      if (a.given_up.size() != b.given_up.size()) return a.given_up.size() < b.given_up.size();
      if (a.gpus != b.gpus) return a.gpus < b.gpus;
      return a.served > b.served;
    });
    result.nearest = any[0];
  }
  // Nothing fits at all: why the given settings fail with a short context on the first card,
  // where it is not the length (which the search shortened already).
  std::string probe_failure;
  if (!result.nearest && refusal.empty()) {
    EngineSettings probe = req.base;
    probe.max_model_len = std::min<int64_t>(kShortProbeContext, searchers[0]->ModelMax());
    auto p = searchers[0]->prepared()->MakePlan(req.cards[0], probe);
    if (p.ok() && !p->fits && p->failure_stage && *p->failure_stage != Stage::kKvCache) {
      probe_failure = fmt::format("with a {}-token context the given settings fail at {} on {}: "
                                  "{}",
                                  GroupDigits(static_cast<uint64_t>(probe.max_model_len)),
                                  StageName(*p->failure_stage), req.cards[0].id,
                                  p->failure_message);
    }
  }
  const std::string nearest =
      result.nearest
          ? fmt::format("{} tokens at {:.2f}x concurrency on {} is the nearest that fits",
                        GroupDigits(static_cast<uint64_t>(result.nearest->context)),
                        result.nearest->concurrency, CardText(*result.nearest))
          : !refusal.empty() ? refusal
          : !probe_failure.empty()
              ? "nothing fits at all, not even one short request; " + probe_failure
              : std::string("nothing fits at all, not even one short request");
  switch (req.goal) {
    case FitGoal::kContext:
      // Without --min-context, any context would do: "no context fits", not ">= 0 tokens".
      result.unmet = fmt::format(
          "no context{}{} fits on {}; {}",
          req.min_context > 0
              ? fmt::format(" >= {} tokens", GroupDigits(static_cast<uint64_t>(req.min_context)))
              : "",
          conc > 1 ? fmt::format(" at {:g}x concurrency", conc) : "", card, nearest);
      break;
    case FitGoal::kConcurrency:
      result.unmet = fmt::format(
          "no setting serves {:g}x concurrency at {} tokens on {}; {}", conc,
          GroupDigits(static_cast<uint64_t>(req.fixed.max_model_len && req.base.max_model_len > 0
                                                ? req.base.max_model_len
                                            : req.min_context > 0 ? req.min_context
                                                                  : 0)),
          card, nearest);
      break;
    case FitGoal::kGpus:
      result.unmet =
          fmt::format("no GPU count serves {} tokens at {:g}x concurrency on {}; {}",
                      req.min_context > 0 ? GroupDigits(static_cast<uint64_t>(req.min_context))
                                          : std::string("the model's full context"),
                      conc, card, nearest);
      break;
  }
  return result;
}

Result<std::vector<GpusTableRow>> FitGpusTable(const Engine& engine, const Inventory& inv,
                                               const std::vector<GpuSpec>& cards, int max_count,
                                               const EngineSettings& base, uint64_t* plans) {
  if (!inv.has_spec) return Status::InvalidArgument("--gpus-table needs the model's config.json");
  if (max_count < 1 || max_count > 64) {
    return Status::InvalidArgument(fmt::format("--gpus {}: expected 1 to 64", max_count));
  }
  auto model = engine.prepare(inv);
  if (!model.ok()) return model.status();
  std::vector<GpusTableRow> rows;
  for (const GpuSpec& gpu : cards) {
    GpusTableRow row;
    row.gpu = gpu;
    for (int count = 1; count <= max_count; ++count) {
      int64_t best = -1;
      std::string best_layout;
      // Tensor parallel over all cards, else stages: tp x pp = count, tp as large as is valid.
      for (int64_t tp = count; tp >= 1; --tp) {
        if (count % tp != 0) continue;
        EngineSettings s = base;
        s.tensor_parallel_size = tp;
        s.pipeline_parallel_size = count / tp;
        s.max_model_len = -1;  // the engine's own auto-fit: the longest context that fits
        ++*plans;
        auto p = (*model)->MakePlan(gpu, s);
        if (!p.ok()) continue;
        const int64_t len = p->fits ? p->max_model_len : 0;
        if (len > best) {
          best = len;
          best_layout = s.pipeline_parallel_size > 1
                            ? fmt::format("tp{} pp{}", tp, s.pipeline_parallel_size)
                            : fmt::format("tp{}", tp);
        }
        if (best > 0) break;  // the widest valid tensor-parallel layout that fits
      }
      row.longest.push_back(best);
      row.layout.push_back(best_layout);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace vramfit
