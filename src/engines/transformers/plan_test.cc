// The transformers room: the four reported cases with their arithmetic, placement, flags and
// the snippet.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/units.h"
#include "engines/transformers/command.h"
#include "engines/transformers/engine.h"
#include "engines/transformers/transformers.h"
#include "engines/transformers/weights.h"
#include "testutil/catalog.h"
#include "vramfit/advice.h"
#include "vramfit/catalog.h"

namespace vramfit::transformers {
namespace {

using core::kGiB;
using core::kMiB;
using testutil::Catalog;
using testutil::Gpu;

// The reported static case: bf16, a StaticCache of 262,144 tokens, a 1,024-token prompt and
// 1,024 new tokens.
TransformersSettings StaticCase() {
  TransformersSettings s;
  s.dtype = "bfloat16";
  s.cache_implementation = "static";
  s.max_cache_len = 262144;
  s.prompt_tokens = 1024;
  s.max_new_tokens = 1024;
  return s;
}

// Case 1: Qwen3-4B-Instruct-2507 in bf16 with a StaticCache of 262,144 tokens on one 24 GB card.
// KV per token: 36 layers x 8 KV heads x 128 x 2 (K and V) x 2 B = 147,456 B; the cache:
// 262,144 x 147,456 = 38,654,705,664 B = 36 GiB, reserved before the first token. The weights
// (tied embeddings) are 8.04 GB = 7.49 GiB; the RTX 4090 has 23.64 GiB as CUDA reports it, of
// which 23.14 GiB are free after the 512 MiB CUDA context: 7.49 + 36 = 43.49 GiB is 20.35 GiB
// short.
TEST(TransformersCases, Qwen3FourBStaticCacheOf262kFailsOnA24GbCard) {
  const Inventory inv = Catalog("qwen3-4b-instruct-2507");
  TransformersSettings s = StaticCase();
  auto p = PlanTransformers(inv, Gpu("4090"), s);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->kv_bytes_per_token, 147456u);
  EXPECT_EQ(p->gpus[0].kv_cache_bytes, 36 * kGiB);
  EXPECT_FALSE(p->fits);
  EXPECT_EQ(p->failure_stage, Stage::kKvCache);
  const uint64_t weights = p->gpus[0].weights_bytes;
  EXPECT_NEAR(static_cast<double>(weights) / kGiB, 7.49, 0.01);
  // Short by weights + cache - free.
  const uint64_t free = p->gpus[0].budget_bytes;
  const int64_t short_by = static_cast<int64_t>(weights + 36 * kGiB) - static_cast<int64_t>(free);
  EXPECT_EQ(p->margin_bytes, -short_by);
  EXPECT_NEAR(static_cast<double>(short_by) / kGiB, 20.35, 0.01);
  // The longest static cache that fits: what the prefill (73 MiB of activations and logits for
  // 1,024 tokens) leaves of 23.14 - 7.49 GiB, at 144 KiB a token: 15.58 GiB / 144 KiB = 113,421.
  EXPECT_EQ(p->estimated_max_cache_len, 113421);
  s.max_cache_len = p->estimated_max_cache_len;
  EXPECT_TRUE(PlanTransformers(inv, Gpu("4090"), s)->fits);
  s.max_cache_len += 1;
  EXPECT_FALSE(PlanTransformers(inv, Gpu("4090"), s)->fits);
}

// Case 2: the same model in AWQ with the dynamic cache: the longest prompt + generation. AWQ
// runs in float16 (quantizer_awq.py), the cache at 147,456 B/token; the weights are the packed
// 4-bit layers plus the 16-bit embeddings (2.5 GB in all).
TEST(TransformersCases, Qwen3FourBAwqDynamicCacheLongestSequence) {
  const Inventory inv = Catalog("qwen3-4b-instruct-2507-awq");
  const Engine& e = TransformersEngine();
  auto model = e.prepare(inv);
  ASSERT_TRUE(model.ok());
  TransformersSettings s;
  s.max_new_tokens = 1024;
  auto p = PlanTransformers(inv, Gpu("4090"), s);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->kv_bytes_per_token, 147456u);
  // At the model's 262,144 tokens the dynamic cache alone is 36 GiB: it fails while
  // generating, and the plan estimates the longest that fits.
  EXPECT_FALSE(p->fits);
  const int64_t longest = p->estimated_max_model_len;
  // 23.14 GiB free - 2.48 GiB of weights = 20.66 GiB; the prefill of (longest - 1,024) tokens
  // holds the prompt's KV (144 KiB a token) and one layer's activations (sdpa, linear in the
  // tokens: the residual stream 3 x 2,560 x 2 B and the 9,728-wide MLP x 3 x 2 B = 72 KiB a
  // token): 20.66 GiB / 216 KiB = 100.3k, the exact search gives 101,298.
  EXPECT_EQ(longest, 101298);
  s.max_model_len = longest;
  auto q = PlanTransformers(inv, Gpu("4090"), s);
  ASSERT_TRUE(q.ok());
  EXPECT_TRUE(q->fits) << q->failure_message;
  s.max_model_len = longest + 1;
  EXPECT_FALSE(PlanTransformers(inv, Gpu("4090"), s)->fits);
}

// Case 3: Qwen2.5-7B-Instruct-AWQ, device_map="auto", an 8 GB card (8,188 MiB as CUDA reports
// it). Free after the context: 7.50 GiB; get_balanced_memory keeps 90% for weights (6.75
// GiB); infer_auto_device_map holds back the largest unit (lm_head: 152,064 x 3,584 x 2 B =
// 1.02 GiB) on GPU 0: 5.73 GiB for the 5.2 GiB of weights: everything on GPU 0.
TEST(TransformersCases, SevenBAwqDeviceMapAutoOnAnEightGbCard) {
  const Inventory inv = Catalog("qwen2.5-7b-instruct-awq");
  TransformersSettings s;
  s.prompt_tokens = 2048;
  s.max_new_tokens = 512;
  auto p = PlanTransformers(inv, CustomGpu(8188 * kMiB), s);
  ASSERT_TRUE(p.ok()) << p.status().message();
  for (const Placement& u : p->placement) EXPECT_EQ(u.device, 0) << u.module;
  const auto lm = std::find_if(p->placement.begin(), p->placement.end(),
                               [](const Placement& u) { return u.module == "lm_head"; });
  ASSERT_NE(lm, p->placement.end());
  EXPECT_EQ(lm->bytes, 152064ull * 3584 * 2);
  EXPECT_TRUE(p->fits) << p->failure_message;
  // The generate-time peak: weights + KV of 2,560 tokens (28 layers x 4 x 128 x 2 x 2 B =
  // 57,344 B a token: 140 MiB) + the prefill's widest layer (18,944-wide MLP) and logits.
  const GpuPlan& g = p->gpus[0];
  EXPECT_EQ(g.kv_cache_bytes, 2560ull * 57344);
  EXPECT_GT(g.peak_bytes, g.weights_bytes + g.kv_cache_bytes);
  EXPECT_LT(g.peak_bytes, g.weights_bytes + g.kv_cache_bytes + kGiB);
  // max_memory 4GiB on GPU 0 pushes layers to the CPU, which AWQ refuses at load.
  s.max_memory = "0=4GiB,cpu=30GiB";
  auto q = PlanTransformers(inv, CustomGpu(8188 * kMiB), s);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->failure_stage, Stage::kLoad);
  EXPECT_EQ(q->failure_message.rfind("You are attempting to load an AWQ model with a device_map "
                                     "that contains a CPU or disk device.", 0), 0u);
  EXPECT_EQ(q->placement.back().device, kCpu);
}

// Case 4: a checkpoint whose config declares AWQ but whose projections are stored in 16 bits.
// transformers builds the AWQ layers from the config, drops the .weight tensors and leaves the
// packed ones uninitialised: it loads, at the packed size, and generates garbage.
TEST(TransformersCases, DeclaredAwqStoredSixteenBitLoadsAtThePackedSize) {
  auto plain = ModelSpecFromConfigJson(FindCatalogModel("qwen3-8b")->config_json, "c");
  auto awq = ModelSpecFromConfigJson(FindCatalogModel("qwen3-8b-awq")->config_json, "c");
  ASSERT_TRUE(plain.ok() && awq.ok());
  std::vector<FileTensors> files;
  files.push_back(*SynthesizeTensors(*plain));
  Inventory fake = BuildInventory(&*awq, std::move(files));
  auto p = PlanTransformers(fake, Gpu("4090"), TransformersSettings{});
  ASSERT_TRUE(p.ok());
  const bool noted = std::any_of(p->notes.begin(), p->notes.end(), [](const std::string& n) {
    return n.find("generates garbage") != std::string::npos;
  });
  EXPECT_TRUE(noted);
  // The memory: the packed layers the config describes (4-bit values, a zero and a scale per
  // 128-group), as for a genuine AWQ checkpoint, not the 16.4 GB of 16-bit projections stored.
  const Inventory real = Catalog("qwen3-8b-awq");
  auto r = PlanTransformers(real, Gpu("4090"), TransformersSettings{});
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(static_cast<double>(p->gpus[0].weights_bytes),
              static_cast<double>(r->gpus[0].weights_bytes), 0.02 * r->gpus[0].weights_bytes);
  EXPECT_LT(p->gpus[0].weights_bytes, fake.total_bytes / 2);
}

TEST(TransformersPlacement, BalancedOverTwoGpusAndLowZero) {
  const Inventory inv = Catalog("qwen3-8b");
  TransformersSettings s;
  s.dtype = "bfloat16";
  s.pipeline_parallel_size = 2;
  s.max_new_tokens = 256;
  s.prompt_tokens = 1024;
  auto p = PlanTransformers(inv, Gpu("4090"), s);
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->gpus.size(), 2u);
  EXPECT_GT(p->gpus[0].weights_bytes, 0u);
  EXPECT_GT(p->gpus[1].weights_bytes, 0u);
  s.device_map = "balanced_low_0";
  auto q = PlanTransformers(inv, Gpu("4090"), s);
  ASSERT_TRUE(q.ok());
  EXPECT_LT(q->gpus[0].weights_bytes, p->gpus[0].weights_bytes);
}

TEST(TransformersPlacement, ExplicitMapAndMaxMemoryText) {
  auto m = ReadMaxMemory("0=6GiB,cpu=30GB");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->gpu[0].second, 6 * kGiB);
  EXPECT_EQ(m->cpu, 30'000'000'000u);
  auto j = ReadMaxMemory("{\"cuda:0\": \"5GiB\"}");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(j->gpu[0].second, 5 * kGiB);
  EXPECT_FALSE(ReadMaxMemory("gpu=5GiB").ok());
  const Inventory inv = Catalog("qwen3-4b-instruct-2507");
  TransformersSettings s;
  s.dtype = "bfloat16";
  s.device_map = "{\"model\": 0, \"lm_head\": \"cpu\"}";
  s.prompt_tokens = 512;
  s.max_new_tokens = 512;
  auto p = PlanTransformers(inv, Gpu("4090"), s);
  ASSERT_TRUE(p.ok()) << p.status().message();
  s.device_map = "{\"model.layers\": 0}";
  EXPECT_FALSE(PlanTransformers(inv, Gpu("4090"), s).ok());
}

TEST(TransformersRules, Float32DefaultBefore5AndEagerScores) {
  const Inventory inv = Catalog("qwen3-4b-instruct-2507");
  TransformersSettings s;
  s.prompt_tokens = 4096;
  s.max_new_tokens = 256;
  auto f32 = PlanTransformers(inv, Gpu("4090"), s);
  s.version = "5.0";
  auto v5 = PlanTransformers(inv, Gpu("4090"), s);
  ASSERT_TRUE(f32.ok() && v5.ok());
  EXPECT_EQ(f32->gpus[0].weights_bytes, 2 * v5->gpus[0].weights_bytes);
  // Eager attention: 32 heads x 4,096^2 scores x (2 + 4 + 2) B = 4 GiB more than sdpa.
  s.attn_implementation = "eager";
  auto eager = PlanTransformers(inv, Gpu("4090"), s);
  ASSERT_TRUE(eager.ok());
  // (less the sdpa layer's MLP, which the score matrix replaces as the widest point).
  EXPECT_GT(eager->gpus[0].activation_peak_bytes,
            v5->gpus[0].activation_peak_bytes + 35 * kGiB / 10);
}

TEST(TransformersHostile, HugeCountsSaturateAndFail) {
  const Inventory inv = Catalog("qwen3-8b");
  TransformersSettings s;
  s.max_num_seqs = (int64_t{1} << 31) - 1;
  s.num_beams = (int64_t{1} << 31) - 1;
  s.prompt_tokens = (int64_t{1} << 30);
  s.max_new_tokens = (int64_t{1} << 30);
  s.attn_implementation = "eager";
  s.cache_implementation = "quantized";
  auto p = PlanTransformers(inv, Gpu("4090"), s);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_FALSE(p->fits);
  s.device_map = "{\"\": \"cuda:7\"}";
  EXPECT_FALSE(PlanTransformers(inv, Gpu("4090"), s).ok());
  s.device_map = "cuda:99";
  EXPECT_FALSE(PlanTransformers(inv, Gpu("4090"), s).ok());
  s.device_map = "auto";
  s.max_memory = std::string(5000, '0');
  EXPECT_FALSE(PlanTransformers(inv, Gpu("4090"), s).ok());
}

TEST(TransformersFlags, ReadAndSnippet) {
  FlagValues given = {{"--dtype", "bfloat16"},          {"--cache-implementation", "static"},
                      {"--max-cache-len", "32k"},        {"--prompt-tokens", "1000"},
                      {"--max-new-tokens", "200"},       {"--batch-size", "2"},
                      {"--load-in-4bit", ""},            {"--device-map", "sequential"}};
  auto s = ReadFlags(given, TransformersSettings{});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->max_cache_len, 32000);
  EXPECT_EQ(s->max_model_len, 1200);
  EXPECT_EQ(s->max_num_seqs, 2);
  EXPECT_FALSE(ReadFlags({{"--num-beams", "x"}}, TransformersSettings{}).ok());
  const Inventory inv = Catalog("qwen3-8b");
  Rules r = RulesFor(45700);
  const std::string py = PythonSnippet(inv, *s, r);
  EXPECT_NE(py.find("dtype=\"bfloat16\""), std::string::npos) << py;
  EXPECT_NE(py.find("device_map=\"sequential\""), std::string::npos);
  EXPECT_NE(py.find("BitsAndBytesConfig(load_in_4bit=True)"), std::string::npos);
  EXPECT_NE(py.find("StaticCache(config=model.config, max_cache_len=32000)"), std::string::npos);
  EXPECT_NE(py.find("max_new_tokens=200"), std::string::npos);
  auto cmd = ReadTransformersCommand({"transformers", "qwen3-8b", "--num-beams", "4", "--foo",
                                      "1", "--dtype=float16"});
  ASSERT_TRUE(cmd.ok());
  EXPECT_EQ(cmd->model, "qwen3-8b");
  ASSERT_EQ(cmd->flags.size(), 2u);
  ASSERT_EQ(cmd->unmodelled_flags.size(), 1u);
  EXPECT_EQ(cmd->unmodelled_flags[0], "--foo 1");
}

TEST(TransformersEngineRow, AdviceForAFailingStaticCacheNamesTheLongestLength) {
  const Inventory inv = Catalog("qwen3-4b-instruct-2507");
  const Engine& e = TransformersEngine();
  TransformersSettings s = StaticCase();
  auto model = e.prepare(inv);
  ASSERT_TRUE(model.ok());
  const EngineSettings es = ToEngineSettings(s);
  auto plan = (*model)->MakePlan(Gpu("4090"), es);
  ASSERT_TRUE(plan.ok());
  auto advice = Advise(e, **model, Gpu("4090"), es, *plan);
  ASSERT_FALSE(advice.empty());
  EXPECT_EQ(advice[0].change.rfind("--max-cache-len 113421", 0), 0u) << advice[0].change;
}

}  // namespace
}  // namespace vramfit::transformers
