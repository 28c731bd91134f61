// llama.cpp's --fit, step by step as llama_params_fit_impl (src/llama.cpp, PR 16653) takes
// them. Its projections are llama.cpp's own dry-run allocations; here they are the plan of the
// same settings (model + KV/state + compute per device; the vision projector is not counted,
// as llama.cpp did not count it before PR 21489). "Free" is ggml_backend_dev_memory's free
// once the backends are up: the device's memory less its CUDA context and other processes.
#include "engines/llamacpp/fit.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/text.h"
#include "core/units.h"

namespace vramfit::llamacpp {
namespace {

using core::GroupDigits;
using core::kMiB;

// The 1024 MiB each device keeps by default (common/common.h fit_params_target).
constexpr int64_t kDefaultTargetMiB = 1024;
// llama_model_default_params' n_gpu_layers: -ngl 999 reads as unset (--fit compares with it).
constexpr int64_t kDefaultNgl = 999;

struct Projection {
  std::vector<int64_t> free, used, context;
};

Projection Project(const LlamaCppPlan& p) {
  Projection x;
  for (size_t d = 0; d < p.devices.size(); ++d) {
    const DeviceBuffers& b = p.devices[d];
    x.free.push_back(static_cast<int64_t>(p.gpus[d].budget_bytes));
    x.used.push_back(static_cast<int64_t>(b.model + b.kv + b.state + b.compute));
    x.context.push_back(static_cast<int64_t>(b.kv + b.state));
  }
  return x;
}

int64_t Margin(const LlamaCppSettings& s, size_t d) {
  const auto& t = s.fit_target_mib;
  const int64_t mib = t.empty() ? kDefaultTargetMiB : t.size() == 1 ? t[0]
                      : d < t.size() ? t[d] : kDefaultTargetMiB;
  return mib * static_cast<int64_t>(kMiB);
}

// The device with the least memory left over its target, and that amount (negative: short).
std::pair<size_t, int64_t> Worst(const Projection& x, const LlamaCppSettings& s) {
  std::pair<size_t, int64_t> w{0, INT64_MAX};
  for (size_t d = 0; d < x.free.size(); ++d) {
    const int64_t left = x.free[d] - x.used[d] - Margin(s, d);
    if (left < w.second) w = {d, left};
  }
  return w;
}

// "1,024 MiB on CUDA0" (the device named is the one shortest of its target), or "on each
// GPU" when several share one target.
std::string Target(const LlamaCppSettings& s, size_t d, size_t devices) {
  const std::string mib = GroupDigits(static_cast<uint64_t>(Margin(s, d) / kMiB));
  if (devices > 1 && s.fit_target_mib.size() <= 1) return mib + " MiB on each GPU";
  return fmt::format("{} MiB on CUDA{}", mib, d);
}

// The largest value in [lo, hi] for which `ok` holds (monotone, true at lo); lo - 1 if none.
template <typename F>
Result<int64_t> Largest(int64_t lo, int64_t hi, F ok) {
  auto first = ok(lo);
  if (!first.ok()) return first.status();
  if (!*first) return lo - 1;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    auto m = ok(mid);
    if (!m.ok()) return m.status();
    (*m ? lo : hi) = *m ? mid : mid - 1;
  }
  return lo;
}

// Step 2: the context, when the user left it unset (n_ctx 0: n_ctx_train), shrinks in
// proportion to the context memory (KV + recurrent state at n_ctx_train, over all devices),
// not below --fit-ctx. Returns the estimated surplus over all devices afterwards.
int64_t ReduceContext(const Inventory& inv, const Projection& x, size_t worst,
                      LlamaCppSettings* s, FitOutcome* out) {
  int64_t surplus = 0, context = 0;
  for (size_t d = 0; d < x.free.size(); ++d) {
    surplus += x.free[d] - x.used[d] - Margin(*s, d);
    context += x.context[d];
  }
  if (surplus >= 0) return surplus;
  const int64_t n_ctx_train = inv.spec.max_position_embeddings;
  if (s->max_model_len > 0) {
    out->notes.push_back(fmt::format("--fit: context size set by user to {}: not reduced",
                                     GroupDigits(static_cast<uint64_t>(s->max_model_len))));
    return surplus;
  }
  const int64_t per_token = n_ctx_train > 0 ? context / n_ctx_train : 0;
  if (n_ctx_train <= s->fit_ctx) {
    out->notes.push_back(fmt::format(
        "--fit: the model's context {} is not above --fit-ctx {}: not reduced",
        GroupDigits(static_cast<uint64_t>(std::max<int64_t>(n_ctx_train, 0))),
        GroupDigits(static_cast<uint64_t>(s->fit_ctx))));
    return surplus;
  }
  if (per_token <= 0) {
    out->notes.push_back("--fit: the context holds no GPU memory (-nkvo): not reduced");
    return surplus;
  }
  // llama.cpp: ctx_reduction = min(ceil(deficit / bytes_per_ctx), n_ctx_train - n_ctx_min).
  const int64_t reduction =
      std::min((-surplus + per_token - 1) / per_token, n_ctx_train - s->fit_ctx);
  s->max_model_len = n_ctx_train - reduction;
  out->notes.push_back(fmt::format(
      "--fit: context reduced from {} to {} to leave {} (the context memory, {} per token, "
      "scaled down; -c N or --fit off keeps a context)",
      GroupDigits(static_cast<uint64_t>(n_ctx_train)),
      GroupDigits(static_cast<uint64_t>(s->max_model_len)), Target(*s, worst, x.free.size()),
      core::FormatBytes(static_cast<uint64_t>(per_token))));
  return surplus + reduction * per_token;
}

// Why --fit may not move weights (it throws and llama.cpp loads the settings as they stand).
std::string UserSetWeights(const LlamaCppSettings& s, size_t devices, int n_layer) {
  if (s.n_gpu_layers >= 0 && s.n_gpu_layers != kDefaultNgl) {
    return fmt::format("n_gpu_layers already set by user to {}, abort", s.n_gpu_layers);
  }
  if (devices > 1) {
    for (double v : s.tensor_split) {
      if (v != 0) return "model_params::tensor_split already set by user, abort";
    }
    if (s.split_mode == "row") {
      return "changing weight allocation for LLAMA_SPLIT_MODE_ROW not implemented, abort";
    }
    if (static_cast<size_t>(n_layer) < 2 * devices) {
      return fmt::format("model has only {} layers but need at least {} to fit memory for {} "
                         "devices, abort", n_layer, 2 * devices, devices);
    }
  }
  if (!s.overrides.empty() || s.cpu_moe || s.n_cpu_moe > 0) {
    return "model_params::tensor_buft_overrides already set by user, abort";
  }
  return "";
}

// Step 4 on several GPUs: the layers are filled back to front, each device taking as many of
// those left as keep its target (llama.cpp's "filling dense layers back-to-front"), and written
// as -ngl (their sum) and -ts (the count of each device); the output layer follows when every
// repeating layer is placed and the last device keeps its target with it.
template <typename F>
Result<FitOutcome> SplitLayers(const LlamaCppSettings& base, size_t nd, int n_layer,
                               size_t worst, F fits, LlamaCppSettings* s, FitOutcome* out) {
  std::vector<double> counts(nd, 0);
  int64_t placed = 0;
  LlamaCppSettings v = base;
  auto with = [&](size_t id, int64_t k, int64_t extra) {
    std::vector<double> ts = counts;
    ts[id] = static_cast<double>(k);
    const int64_t ngl = placed + k + extra;
    v.n_gpu_layers = ngl;
    v.tensor_split = ngl > 0 ? ts : std::vector<double>{};
  };
  for (size_t id = nd; id-- > 0;) {
    auto k = Largest(0, n_layer - placed, [&](int64_t n) {
      with(id, n, 0);
      return fits(v);
    });
    if (!k.ok()) return k.status();
    const int64_t n = std::max<int64_t>(*k, 0);
    counts[id] = static_cast<double>(n);
    placed += n;
  }
  int64_t ngl = placed;
  if (placed == n_layer) {
    with(nd - 1, static_cast<int64_t>(counts[nd - 1]), 1);
    auto f = fits(v);
    if (!f.ok()) return f.status();
    if (*f) ++ngl;
  }
  s->n_gpu_layers = ngl;
  s->tensor_split = ngl > 0 ? counts : std::vector<double>{};
  std::string per;
  for (size_t d = 0; d < nd; ++d) {
    per += fmt::format("{}{}", d ? "," : "", static_cast<int64_t>(counts[d]));
  }
  out->notes.push_back(fmt::format(
      "--fit: -ngl {} of {} layers, filled back to front (-ts {}), to leave {}", ngl,
      n_layer + 1, per, Target(base, worst, nd)));
  return std::move(*out);
}

}  // namespace

bool FitApplies(const Rules& rules, const LlamaCppSettings& s) {
  return s.fit == 1 || (s.fit < 0 && rules.fit_default_on);
}

Result<FitOutcome> FitParams(const Inventory& inv, const FixedPlanner& plan,
                             LlamaCppSettings* s) {
  FitOutcome out;
  if (s->fit_ctx < 0) return Status::InvalidArgument("--fit-ctx: expected 0 or more tokens");
  for (int64_t t : s->fit_target_mib) {
    if (t < 0 || t > (int64_t{1} << 30)) {
      return Status::InvalidArgument("--fit-target: expected MiB per device, 0 or more");
    }
  }
  auto full = plan(*s);
  if (!full.ok()) return full.status();
  const Projection x = Project(*full);
  const size_t nd = x.free.size();
  if (nd == 0) return out;
  // Step 1: nothing to do when every device keeps its target.
  const auto [worst, left] = Worst(x, *s);
  if (left >= 0) return out;
  // Step 2: the context. One device stops as soon as the estimate fits (llama.cpp returns
  // there, measuring nothing again); several always go on to the weights (PR 18070).
  int64_t before = 0;
  for (size_t d = 0; d < nd; ++d) before += x.free[d] - x.used[d] - Margin(*s, d);
  const int64_t surplus = ReduceContext(inv, x, worst, s, &out);
  // What the context step expects to save (llama.cpp's global_memory_reduction_vs_full).
  const int64_t saved = std::max<int64_t>(surplus - before, 0);
  if (surplus >= 0 && nd == 1) return out;
  // Step 3: the weights, only where the user set none of -ngl, -ts, -sm row, -ot/--cpu-moe.
  const int n_layer = static_cast<int>(inv.spec.layers.size());
  out.failure = UserSetWeights(*s, nd, n_layer);
  if (!out.failure.empty()) {
    out.notes.push_back("--fit: failed to fit params to free device memory: " + out.failure);
    return out;
  }
  auto fits = [&](const LlamaCppSettings& v) -> Result<bool> {
    auto p = plan(v);
    if (!p.ok()) return p.status();
    return Worst(Project(*p), v).second >= 0;
  };
  bool moe = false;
  for (const LayerSpec& l : inv.spec.layers) moe |= l.mlp.kind == MlpKind::kMoe;
  if (moe) {
    // 3a/3b: with every expert on the CPU the dense weights must fit in total; then the
    // experts of the first layers leave (-ot blk.N.ffn_(up|down|gate)_(ch|)exps=CPU per layer,
    // the tensors of --n-cpu-moe N).
    LlamaCppSettings v = *s;
    v.cpu_moe = true;
    auto cpu = plan(v);
    if (!cpu.ok()) return cpu.status();
    const Projection y = Project(*cpu);
    int64_t dense_surplus = 0;
    for (size_t d = 0; d < nd; ++d) dense_surplus += y.free[d] - y.used[d] - Margin(*s, d);
    if (dense_surplus >= 0 && nd == 1) {
      // 3a, one device: llama.cpp interpolates between all experts on the GPU (the first
      // projection less the context step's saving) and none, per layer past the dense lead:
      // layers_full = surplus / diff_per_layer + n_dense_lead + 1 (the output counts as one),
      // and the experts of layers n_dense_lead .. n_layer - layers_full go to the CPU.
      int64_t lead = 0;
      while (lead < n_layer && inv.spec.layers[static_cast<size_t>(lead)].mlp.kind !=
                                   MlpKind::kMoe) {
        ++lead;
      }
      const int64_t per_layer = (x.used[0] - saved - y.used[0]) / std::max<int64_t>(
                                    n_layer - lead, 1);
      const int64_t full = per_layer > 0 ? dense_surplus / per_layer + lead + 1 : lead + 1;
      const int64_t n = std::clamp<int64_t>(n_layer + 1 - full, 0, n_layer);
      s->n_cpu_moe = n;
      out.notes.push_back(fmt::format(
          "--fit: experts of the first {} of {} layers moved to the CPU (--n-cpu-moe {}) to "
          "leave {}, interpolated at {} per layer", n, n_layer, n, Target(*s, worst, nd),
          core::FormatBytes(static_cast<uint64_t>(std::max<int64_t>(per_layer, 0)))));
      return out;
    }
    if (dense_surplus >= 0) {
      // 3b, several devices: the fewest layers whose experts leave for every device to keep
      // its target, with the default split (llama.cpp also moves layers between devices).
      v.cpu_moe = false;
      auto too_few = Largest(0, n_layer, [&](int64_t n) -> Result<bool> {
        v.n_cpu_moe = n;
        auto f = fits(v);
        if (!f.ok()) return f.status();
        return !*f;
      });
      if (!too_few.ok()) return too_few.status();
      const int64_t n = *too_few + 1;
      if (n <= n_layer) {
        s->n_cpu_moe = n;
        out.notes.push_back(fmt::format(
            "--fit: experts of the first {} of {} layers moved to the CPU (--n-cpu-moe {}) to "
            "leave {}", n, n_layer, n, Target(*s, worst, nd)));
        return out;
      }
    }
    out.notes.push_back(fmt::format(
        "--fit: with only dense weights on the GPUs there is still a deficit of {} MiB: "
        "fewer layers instead", GroupDigits(static_cast<uint64_t>(
                                    std::max<int64_t>(-dense_surplus, 0) / kMiB))));
  }
  if (nd > 1) return SplitLayers(*s, nd, n_layer, worst, fits, s, &out);
  // Step 4: fewer layers on the GPU (the output layer counts as one).
  LlamaCppSettings v = *s;
  auto best = Largest(0, n_layer + 1, [&](int64_t ngl) {
    v.n_gpu_layers = ngl;
    return fits(v);
  });
  if (!best.ok()) return best.status();
  s->n_gpu_layers = std::max<int64_t>(*best, 0);
  out.notes.push_back(
      *best >= 0
          ? fmt::format("--fit: -ngl {} of {} layers (the output layer counts as one) to leave "
                        "{}", *best, n_layer + 1, Target(*s, worst, nd))
          : fmt::format("--fit: even -ngl 0 leaves less than {}: every layer on the CPU",
                        Target(*s, worst, nd)));
  return out;
}

}  // namespace vramfit::llamacpp
