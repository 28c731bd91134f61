// The plan's figure per stage for the monitor's comparison (PredictStages), from a Plan or from
// `vramfit plan --json` output. One formula, cumulative over the plan's per-GPU terms, since
// PyTorch's caching allocator keeps what each stage reserved (the profile's activation blocks
// stay reserved, as the plan's device_used_bytes counts them).
#include <nlohmann/json.hpp>

#include <algorithm>

#include "vramfit/monitor.h"

namespace vramfit {
namespace {

struct Terms {
  uint64_t context = 0, load_peak = 0, weights = 0, non_torch = 0, activation = 0, kv = 0,
           graphs = 0, device_used = 0;
};

void Fill(const Terms& t, PredictedStages* p) {
  auto at = [&](Stage s) -> uint64_t& { return p->bytes[static_cast<int>(s)]; };
  at(Stage::kStartup) = t.context;
  at(Stage::kLoad) = t.context + t.load_peak;
  at(Stage::kProfile) = t.context + t.weights + t.non_torch + t.activation;
  at(Stage::kKvCache) = at(Stage::kProfile) + t.kv;
  at(Stage::kCudaGraph) = at(Stage::kKvCache) + t.graphs;
  at(Stage::kWarmup) = std::max(t.device_used, at(Stage::kCudaGraph));
  at(Stage::kRuntime) = at(Stage::kWarmup);
  // A plan that stops at a stage predicts nothing after it.
  if (p->failure_stage) {
    for (int s = static_cast<int>(*p->failure_stage) + 1; s < kStageCount; ++s) p->bytes[s] = 0;
  }
}

}  // namespace

PredictedStages PredictStages(const Plan& plan) {
  PredictedStages p;
  p.engine = plan.engine + (plan.modelled_version.empty() ? "" : "@" + plan.modelled_version);
  p.fits = plan.fits;
  p.failure_stage = plan.failure_stage;
  if (plan.gpus.empty()) return p;
  const GpuPlan& g = plan.gpus.front();
  p.total_bytes = g.total_bytes;
  Fill({g.cuda_context_bytes, g.load_peak_bytes, g.weights_bytes, g.non_torch_bytes,
        g.activation_peak_bytes, g.kv_cache_bytes, g.cudagraph_bytes, g.device_used_bytes},
       &p);
  return p;
}

Result<PredictedStages> ReadPlanJson(std::string_view json) {
  const nlohmann::json j = nlohmann::json::parse(json.begin(), json.end(), nullptr, false);
  if (j.is_discarded()) {
    return Status::Corrupt("the plan is not JSON (expected the output of `vramfit plan --json`)");
  }
  if (!j.is_object()) {
    return Status::Corrupt("the plan is not a JSON object (expected the output of `vramfit plan "
                           "--json`)");
  }
  auto schema = j.find("schema");
  if (schema == j.end() || !schema->is_string() ||
      schema->get<std::string>().rfind("vramfit.plan/", 0) != 0) {
    return Status::Corrupt("\"schema\": expected \"vramfit.plan/1\" (`vramfit plan --json`)");
  }
  auto gpus = j.find("gpus");
  if (gpus == j.end() || !gpus->is_array() || gpus->empty() || !gpus->front().is_object()) {
    return Status::Corrupt("\"gpus\": expected a non-empty array of objects");
  }
  const nlohmann::json& g = gpus->front();
  Terms t;
  uint64_t p_total = 0;
  Status bad;
  auto read = [&](const char* key, uint64_t* out) {
    auto v = g.find(key);
    if (v == g.end()) return;  // an engine without the term
    if (!v->is_number_unsigned() && !(v->is_number_integer() && v->get<int64_t>() >= 0)) {
      if (bad.ok()) {
        bad = Status::Corrupt(std::string("\"gpus\"[0].") + key +
                              ": expected a byte count (a non-negative integer)");
      }
      return;
    }
    *out = v->get<uint64_t>();
  };
  read("cuda_context_bytes", &t.context);
  read("load_peak_bytes", &t.load_peak);
  read("weights_bytes", &t.weights);
  read("non_torch_bytes", &t.non_torch);
  read("activation_peak_bytes", &t.activation);
  read("kv_cache_bytes", &t.kv);
  read("cudagraph_bytes", &t.graphs);
  read("device_used_bytes", &t.device_used);
  read("total_bytes", &p_total);
  if (!bad.ok()) return bad;
  PredictedStages p;
  if (auto e = j.find("engine"); e != j.end() && e->is_string()) p.engine = *e;
  if (auto v = j.find("modelled_version"); v != j.end() && v->is_string() && !p.engine.empty()) {
    p.engine += "@" + v->get<std::string>();
  }
  if (auto f = j.find("fits"); f != j.end() && f->is_boolean()) p.fits = *f;
  if (auto s = j.find("failure_stage"); s != j.end() && s->is_string()) {
    p.failure_stage = StageFromName(s->get<std::string>());
  }
  p.total_bytes = p_total;
  Fill(t, &p);
  return p;
}

}  // namespace vramfit
