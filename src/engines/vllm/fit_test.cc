// The fit search with vLLM from the engine table: the reported scenarios, agreement with the plan,
// monotonicity, every goal and the "cannot be met" path.
#include "vramfit/fit.h"

#include "engines/vllm/engine.h"
#include "engines/vllm/vllm.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "testutil/catalog.h"

namespace vramfit {
namespace {

using testutil::Catalog;

FitRequest OneCard(const char* gpu, int count = 1) {
  FitRequest r;
  r.cards.push_back(*FindGpu(gpu));
  r.max_gpus = count;
  return r;
}

const FitOption* WithNothingGivenUp(const FitResult& r) {
  for (const FitOption& o : r.options) {
    if (o.given_up.empty()) return &o;
  }
  return nullptr;
}

TEST(Fit, Qwen3_4bAwqOn4090AgreesExactlyWithThePlan) {
  const Inventory inv = Catalog("qwen3-4b-instruct-2507-awq");
  auto r = Fit(vllm::VllmEngine(), {{"qwen3-4b-instruct-2507-awq", &inv}}, OneCard("4090"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->met);
  // With vLLM's defaults, the longest context is the plan's own estimate at the model's 262,144.
  VllmSettings s;
  s.max_model_len = 262144;
  auto at_max = PlanVllm(inv, *FindGpu("4090"), s);
  ASSERT_TRUE(at_max.ok());
  ASSERT_FALSE(at_max->fits);
  const FitOption* plain = WithNothingGivenUp(*r);
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(plain->context, at_max->estimated_max_model_len);
  // Every row is a plan that fits at exactly its settings, and one token more does not fit
  // where the row is limited by the KV cache.
  for (const FitOption& o : r->options) {
    auto again = PlanVllm(inv, o.gpu, ToVllmSettings(o.settings));
    ASSERT_TRUE(again.ok());
    EXPECT_TRUE(again->fits) << o.command;
    EXPECT_EQ(again->kv_cache_tokens, o.plan.kv_cache_tokens);
    if (o.context < 262144) {
      VllmSettings longer = ToVllmSettings(o.settings);
      longer.max_model_len = o.context + 1;
      EXPECT_FALSE(PlanVllm(inv, o.gpu, longer)->fits) << o.command;
    }
    EXPECT_NE(o.command.find(fmt::format("--max-model-len {}", o.context)), std::string::npos);
  }
  // The best row reaches the full context by giving something up (fp8 KV here).
  EXPECT_EQ(r->options[0].context, 262144);
  EXPECT_FALSE(r->options[0].given_up.empty());
}

TEST(Fit, Qwen35AwqOnTwo24GbCards) {
  const Inventory inv = Catalog("qwen3.5-35b-a3b-awq");
  FitRequest req = OneCard("4090", 2);
  req.goal = FitGoal::kConcurrency;
  req.min_context = 4096;
  auto r = Fit(vllm::VllmEngine(), {{"qwen3.5-35b-a3b-awq", &inv}}, req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->met);
  const FitOption* plain = WithNothingGivenUp(*r);
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(plain->gpus, 2);  // the weights do not fit one card
  EXPECT_EQ(plain->context, 4096);
  // The same as the plan of its own settings: TP 2, which serves more than two pipeline stages
  // here; a PP layout, which decodes one request no faster than one GPU, names that trade.
  auto p = PlanVllm(inv, *FindGpu("4090"), ToVllmSettings(plain->settings));
  ASSERT_TRUE(p.ok() && p->fits);
  EXPECT_DOUBLE_EQ(plain->concurrency, p->max_concurrency);
  EXPECT_EQ(plain->settings.tensor_parallel_size, 2);
  EXPECT_EQ(plain->settings.pipeline_parallel_size, 1);
  VllmSettings s;
  s.pipeline_parallel_size = 2;
  s.max_model_len = 4096;
  auto pp2 = PlanVllm(inv, *FindGpu("4090"), s);
  ASSERT_TRUE(pp2.ok() && pp2->fits);
  EXPECT_LT(pp2->max_concurrency, plain->concurrency);
  for (const FitOption& o : r->options) {
    if (o.settings.pipeline_parallel_size < 2) continue;
    ASSERT_FALSE(o.given_up.empty()) << o.command;
    EXPECT_EQ(o.given_up[0].rfind("--pipeline-parallel-size 2 (", 0), 0u) << o.given_up[0];
  }
  // Ranked by requests served: the best serves at least as many as every other row.
  for (const FitOption& o : r->options) EXPECT_GE(r->options[0].served + 1e-9, o.served);
}

// Qwen3-32B-AWQ on two RTX 4090s at its 40,960 tokens: two pipeline stages hold a little
// more KV than TP 2 (no all-reduce buffers), but the best row is TP 2, with nothing given up;
// the PP row names what it costs (each request's layers run stage after stage).
TEST(Fit, TensorParallelRanksBeforePipelineStagesThatHoldALittleMore) {
  const Inventory inv = Catalog("qwen3-32b-awq");
  auto r = Fit(vllm::VllmEngine(), {{"qwen3-32b-awq", &inv}}, OneCard("4090", 2));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->met);
  const FitOption& best = r->options[0];
  EXPECT_TRUE(best.given_up.empty());
  EXPECT_EQ(best.settings.tensor_parallel_size, 2);
  EXPECT_EQ(best.settings.pipeline_parallel_size, 1);
  VllmSettings s;
  s.pipeline_parallel_size = 2;
  s.max_model_len = best.context;
  auto pp2 = PlanVllm(inv, *FindGpu("4090"), s);
  ASSERT_TRUE(pp2.ok() && pp2->fits);
  EXPECT_GT(pp2->max_concurrency, best.concurrency);
  bool pp_row = false;
  for (const FitOption& o : r->options) {
    if (o.settings.pipeline_parallel_size < 2) continue;
    pp_row = true;
    EXPECT_NE(o.given_up.front().find("slower per request than tensor parallelism"),
              std::string::npos);
  }
  EXPECT_TRUE(pp_row);
}

TEST(Fit, MoreMemoryNeverGivesAShorterContext) {
  const Inventory inv = Catalog("qwen3-8b");
  int64_t previous = 0;
  double previous_conc = 0;
  for (uint64_t gib = 16; gib <= 96; gib += 8) {
    FitRequest req;
    req.cards.push_back(CustomGpu(gib << 30));
    req.min_concurrency = 2;
    auto r = Fit(vllm::VllmEngine(), {{"qwen3-8b", &inv}}, req);
    ASSERT_TRUE(r.ok());
    const int64_t best = r->met ? r->options[0].context : 0;
    EXPECT_GE(best, previous) << gib << " GiB";
    previous = best;
    FitRequest conc = req;
    conc.goal = FitGoal::kConcurrency;
    conc.min_context = 32768;
    conc.min_concurrency = 1;
    auto c = Fit(vllm::VllmEngine(), {{"qwen3-8b", &inv}}, conc);
    ASSERT_TRUE(c.ok());
    const double served = c->met ? c->options[0].served : 0;
    EXPECT_GE(served + 1e-9, previous_conc) << gib << " GiB";
    previous_conc = served;
  }
  EXPECT_EQ(previous, 40960);  // the model's maximum, reached with enough memory
}

TEST(Fit, FewestGpusFromTheCatalog) {
  const Inventory inv = Catalog("qwen3-30b-a3b");
  FitRequest req;
  req.goal = FitGoal::kGpus;
  req.max_gpus = 8;
  req.min_context = 32768;
  req.min_concurrency = 4;
  const auto catalog = GpuCatalog();
  ASSERT_TRUE(catalog.ok());
  for (const GpuSpec& g : *catalog) if (g.vendor == "nvidia") req.cards.push_back(g);
  auto r = Fit(vllm::VllmEngine(), {{"qwen3-30b-a3b", &inv}}, req);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->met);
  const FitOption& best = r->options[0];
  EXPECT_GE(best.context, 32768);
  EXPECT_GE(best.served, 4.0);
  for (const FitOption& o : r->options) EXPECT_GE(o.gpus, best.gpus);
  // No card type serves it with fewer cards than the best row uses.
  for (const GpuSpec& g : req.cards) {
    for (int n = 1; n < best.gpus; ++n) {
      for (int64_t tp : {1, 2, 4, 8}) {
        if (tp > n || n % tp) continue;
        VllmSettings s;
        s.tensor_parallel_size = tp;
        s.pipeline_parallel_size = n / tp;
        s.max_model_len = 32768;
        s.kv_cache_dtype = "fp8";
        s.enforce_eager = true;
        s.gpu_memory_utilization = 0.95;
        s.max_num_seqs = 64;
        auto p = PlanVllm(inv, g, s);
        if (p.ok()) EXPECT_FALSE(p->fits && p->max_concurrency >= 4) << g.id << " x" << n;
      }
    }
  }
}

TEST(Fit, NoEagerAndFixedFlagsAreRespected) {
  const Inventory inv = Catalog("qwen3-4b-instruct-2507-awq");
  FitRequest req = OneCard("4090");
  req.no_eager = true;
  req.base.kv_cache_dtype = "auto";
  req.fixed.kv_cache_dtype = true;
  auto r = Fit(vllm::VllmEngine(), {{"qwen3-4b-instruct-2507-awq", &inv}}, req);
  ASSERT_TRUE(r.ok() && r->met);
  for (const FitOption& o : r->options) {
    EXPECT_FALSE(o.settings.enforce_eager);
    EXPECT_EQ(o.settings.kv_cache_dtype, "auto");
  }
}

TEST(Fit, AGoalThatCannotBeMetSaysSoAndShowsTheNearest) {
  const Inventory inv = Catalog("qwen3-8b");
  FitRequest req = OneCard("4090");
  req.min_context = 40960;
  req.min_concurrency = 64;
  auto r = Fit(vllm::VllmEngine(), {{"qwen3-8b", &inv}}, req);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->met);
  EXPECT_TRUE(r->options.empty());
  ASSERT_TRUE(r->nearest.has_value());
  EXPECT_TRUE(r->nearest->plan.fits);
  EXPECT_NE(r->unmet.find("no context >= 40,960 tokens at 64x concurrency fits on 1 x rtx-4090"),
            std::string::npos)
      << r->unmet;
  // Without --min-context any context would do: the sentence names none.
  req.min_context = 0;
  req.min_concurrency = 1e9;
  auto any = Fit(vllm::VllmEngine(), {{"qwen3-8b", &inv}}, req);
  ASSERT_TRUE(any.ok());
  EXPECT_FALSE(any->met);
  EXPECT_EQ(any->unmet.rfind("no context at 1e+09x concurrency fits on 1 x rtx-4090; ", 0), 0u)
      << any->unmet;
  // A model that does not fit at all: nothing is the nearest.
  const Inventory big = Catalog("qwen2.5-72b-instruct");
  auto none = Fit(vllm::VllmEngine(), {{"qwen2.5-72b-instruct", &big}}, OneCard("t4"));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->met);
  EXPECT_FALSE(none->nearest.has_value());
  EXPECT_NE(none->unmet.find("nothing fits at all"), std::string::npos) << none->unmet;
  // Nothing fits because of a given setting, whatever the length: the sentence says which
  // stage fails and vLLM's reason (--skip-mm-profiling's encoder beside a 0.92 budget).
  const Inventory vl = Catalog("qwen2.5-vl-7b-instruct");
  FitRequest skip = OneCard("4090");
  VllmSettings skip_settings;
  skip_settings.skip_mm_profiling = true;
  skip.base = ToEngineSettings(skip_settings);
  auto unprofiled = Fit(vllm::VllmEngine(), {{"qwen2.5-vl-7b-instruct", &vl}}, skip);
  ASSERT_TRUE(unprofiled.ok());
  EXPECT_FALSE(unprofiled->met);
  EXPECT_NE(unprofiled->unmet.find("the given settings fail at runtime on rtx-4090"),
            std::string::npos)
      << unprofiled->unmet;
  // A release that refuses the model whatever the card: the sentence names the refusal and the
  // release to use, not "nothing fits".
  const Inventory llama31 = Catalog("llama-3.1-8b-instruct");
  FitRequest old = OneCard("h100");
  old.base.version = "0.4.3";
  auto refused = Fit(vllm::VllmEngine(), {{"llama-3.1-8b-instruct", &llama31}}, old);
  ASSERT_TRUE(refused.ok());
  EXPECT_FALSE(refused->met);
  EXPECT_NE(refused->unmet.find("use --engine vllm@0.5.3.post1 or newer"), std::string::npos)
      << refused->unmet;
  EXPECT_EQ(refused->unmet.find("nothing fits at all"), std::string::npos) << refused->unmet;
}

TEST(Fit, BadRequests) {
  const Inventory inv = Catalog("qwen3-8b");
  FitRequest req = OneCard("4090");
  req.min_context = 1 << 20;  // beyond max_position_embeddings without the override
  EXPECT_FALSE(Fit(vllm::VllmEngine(), {{"qwen3-8b", &inv}}, req).ok());
  req = OneCard("4090");
  req.min_concurrency = 0;
  EXPECT_FALSE(Fit(vllm::VllmEngine(), {{"qwen3-8b", &inv}}, req).ok());
  req = OneCard("4090");
  req.base.tensor_parallel_size = 3;  // vLLM's own refusal: nothing fits, its ways out said
  req.fixed.tensor_parallel = true;
  auto r = Fit(vllm::VllmEngine(), {{"qwen3-8b", &inv}}, req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->options.empty());
  EXPECT_NE(r->unmet.find("--tensor-parallel-size 2"), std::string::npos) << r->unmet;
  req = FitRequest();
  EXPECT_FALSE(Fit(vllm::VllmEngine(), {{"qwen3-8b", &inv}}, req).ok());  // no card
}

TEST(Fit, AContextPastQwensLengthIsSearchedWithItsDocumentedYarn) {
  // Qwen3-8B derives 40,960 tokens; Qwen's model card stretches it with static YaRN (factor 4
  // over 32,768): the search adds the override, says so, and every command carries it.
  const Inventory inv = Catalog("qwen3-8b");
  FitRequest req = OneCard("h100");
  req.min_context = 131072;
  auto r = Fit(vllm::VllmEngine(), {{"qwen3-8b", &inv}}, req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->met) << r->unmet;
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_NE(r->notes[0].find("Qwen's documented static YaRN"), std::string::npos) << r->notes[0];
  for (const FitOption& o : r->options) {
    EXPECT_GE(o.context, 131072);
    EXPECT_NE(o.command.find(R"(--hf-overrides '{"rope_scaling": {"rope_type": "yarn", )"
                             R"("factor": 4.0,)"),
              std::string::npos)
        << o.command;
  }
  // Past factor 4, and for a family whose cards give no such setting: vLLM's own refusal.
  req.min_context = 262144;
  EXPECT_FALSE(Fit(vllm::VllmEngine(), {{"qwen3-8b", &inv}}, req).ok());
  const Inventory llama = Catalog("llama-3.1-8b-instruct");
  req.min_context = 262144;
  EXPECT_FALSE(Fit(vllm::VllmEngine(), {{"llama", &llama}}, req).ok());
}

TEST(Fit, GpusTableGrowsWithTheCount) {
  const Inventory inv = Catalog("qwen3-8b");
  uint64_t plans = 0;
  auto rows = FitGpusTable(vllm::VllmEngine(), inv, {*FindGpu("t4"), *FindGpu("4090")}, 4,
                           EngineSettings(), &plans);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].longest[0], 0);  // 16 GB of bf16 weights on a T4: nothing fits
  for (const GpusTableRow& row : *rows) {
    for (size_t i = 1; i < row.longest.size(); ++i)
      EXPECT_GE(row.longest[i], row.longest[i - 1]) << row.gpu.id;
  }
  EXPECT_GT(plans, 0u);
}

}  // namespace
}  // namespace vramfit
