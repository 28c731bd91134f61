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
#include "vramfit/inspect.h"

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

// Gemma 4 E2B with a StaticCache of 32,768 tokens: only the 15 layers before the KV-shared tail
// get a cache layer, the 12 sliding ones holding their 512-token window: 3 x 32,768 x 2 x 512 x
// 2 B + 12 x 512 x 2 x 256 x 2 B = 198 MiB. Before transformers 5.5 the model type is unknown.
TEST(TransformersCases, Gemma4StaticCacheSkipsSharedLayersAndNeedsFiveFive) {
  const Inventory inv = Catalog("gemma-4-e2b-it");
  TransformersSettings s;
  s.dtype = "bfloat16";
  s.cache_implementation = "static";
  s.max_cache_len = 32768;
  s.prompt_tokens = 1024;
  s.max_new_tokens = 256;
  s.version = "5.5";
  auto p = PlanTransformers(inv, Gpu("4090"), s);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->gpus[0].kv_cache_bytes, 3u * 32768 * 2 * 512 * 2 + 12u * 512 * 2 * 256 * 2);
  EXPECT_TRUE(p->fits);
  s.version = "5.4";
  auto old = PlanTransformers(inv, Gpu("4090"), s);
  ASSERT_TRUE(old.ok());
  EXPECT_FALSE(old->fits);
  EXPECT_EQ(old->failure_stage, Stage::kLoad);
  EXPECT_NE(old->refusal.find("first in transformers 5.5.0"), std::string::npos);
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
  // from_pretrained's fetch and remote-code keywords are read, with no memory effect.
  auto quiet = ReadTransformersCommand({"transformers", "qwen3-8b", "--trust-remote-code",
                                        "--cache-dir", "/hf", "--low-cpu-mem-usage"});
  ASSERT_TRUE(quiet.ok());
  EXPECT_TRUE(quiet->unmodelled_flags.empty()) << quiet->unmodelled_flags.front();
  EXPECT_EQ(quiet->no_memory_flags, (std::vector<std::string>{"--trust-remote-code",
                                                              "--cache-dir",
                                                              "--low-cpu-mem-usage"}));
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

// A StaticCache given alone (no --max-length, no prompt and new tokens): the generation is
// the cache's length, so a shorter cache is a shorter generation and advice names it (before,
// the search kept the 262,144-token generation and nothing fit).
TEST(TransformersEngineRow, AStaticCacheAloneGetsAShorterCache) {
  const Inventory inv = Catalog("qwen3-4b-instruct-2507");
  const Engine& e = TransformersEngine();
  TransformersSettings s = StaticCase();
  s.prompt_tokens = 0;
  s.max_new_tokens = 0;
  auto p = PlanTransformers(inv, Gpu("4090"), s);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_FALSE(p->fits);
  ASSERT_GT(p->estimated_max_cache_len, 0);
  EXPECT_LT(p->estimated_max_cache_len, 262144);
  s.max_cache_len = p->estimated_max_cache_len;
  EXPECT_TRUE(PlanTransformers(inv, Gpu("4090"), s)->fits);
  s.max_cache_len = StaticCase().max_cache_len;
  auto model = e.prepare(inv);
  ASSERT_TRUE(model.ok());
  const EngineSettings es = ToEngineSettings(s);
  auto plan = (*model)->MakePlan(Gpu("4090"), es);
  ASSERT_TRUE(plan.ok());
  auto advice = Advise(e, **model, Gpu("4090"), es, *plan);
  ASSERT_FALSE(advice.empty());
  EXPECT_EQ(advice[0].change.rfind("--max-cache-len ", 0), 0u) << advice[0].change;
}

// AutoAWQ's fused modules (AwqConfig(do_fuse=True, fuse_max_seq_len=S)) on Llama-3.1-8B-Instruct
// quantized with AWQ 4-bit g128 (the what-if checkpoint AutoAWQ writes). Each of the 32 fused
// attention layers makes, at load: K and V [1, S, 8 KV heads, 4,096 / 32 = 128] in float16
// (2 x 8 x 128 x 2 B = 4,096 B a token) and RoPE's freqs_cis [S, 64] complex64 (512 B a token):
// 4,608 B a token a layer, 147,456 B a token for the model. S = 131,072 (max_position_embeddings,
// what AutoAWQ's from_quantized uses when max_seq_len is not given) is 18 GiB before generate.
Inventory LlamaAwq() {
  InspectOptions o;
  auto q = MakeWhatIfQuant("awq", 4, 128, false);
  EXPECT_TRUE(q.ok());
  o.as_quantized = *q;
  auto inv = InspectModel("llama-3.1-8b-instruct", o);
  EXPECT_TRUE(inv.ok());
  return inv.ok() ? *inv : Inventory();
}

// AwqConfig(do_fuse=True, fuse_max_seq_len=S) with a prompt and new tokens.
TransformersSettings Fused(int64_t S, int64_t prompt, int64_t new_tokens) {
  TransformersSettings s;
  s.do_fuse = true;
  s.fuse_max_seq_len = S;
  s.prompt_tokens = prompt;
  s.max_new_tokens = new_tokens;
  return s;
}

TEST(TransformersFusedAwq, CacheOfFuseMaxSeqLenIsChargedAtLoad) {
  const Inventory inv = LlamaAwq();
  TransformersSettings s = Fused(131072, 1024, 1024);
  auto p = PlanTransformers(inv, Gpu("4090"), s);
  ASSERT_TRUE(p.ok()) << p.status().message();
  const GpuPlan& g = p->gpus[0];
  // 147,456 B x 131,072 = 19,327,352,832 B = 18 GiB, at batch 1 both at load and in generate.
  EXPECT_EQ(g.kv_cache_bytes, 18 * kGiB);
  EXPECT_EQ(g.load_peak_bytes, g.weights_bytes + 18 * kGiB);
  // 5.4 GiB of weights + 18 GiB > the 23.14 GiB free on a 24 GB card: out of memory loading.
  EXPECT_FALSE(p->fits);
  EXPECT_EQ(p->failure_stage, Stage::kLoad);
  EXPECT_EQ(p->margin_bytes, static_cast<int64_t>(g.budget_bytes) -
                                 static_cast<int64_t>(g.weights_bytes + 18 * kGiB));
  EXPECT_EQ(p->kv_cache_tokens, 131072u);
  // The longest fused cache that fits the same generation, and one token more does not.
  const int64_t longest = p->estimated_fuse_max_seq_len;
  EXPECT_GT(longest, 2048);
  EXPECT_LT(longest, 131072);
  s.fuse_max_seq_len = longest;
  EXPECT_TRUE(PlanTransformers(inv, Gpu("4090"), s)->fits);
  s.fuse_max_seq_len = longest + 1;
  EXPECT_FALSE(PlanTransformers(inv, Gpu("4090"), s)->fits);
  // S = 4,096: 147,456 x 4,096 = 576 MiB at load; a batch of 4 regrows K and V on the first
  // forward: 32 x (4 x 4,096 + 512) B x 4,096 = 2,214,592,512 B, transformers' own cache empty.
  s.fuse_max_seq_len = 4096;
  s.prompt_tokens = 2048;
  s.max_new_tokens = 512;
  s.max_num_seqs = 4;
  auto q = PlanTransformers(inv, Gpu("4090"), s);
  ASSERT_TRUE(q.ok());
  EXPECT_TRUE(q->fits) << q->failure_message;
  EXPECT_EQ(q->gpus[0].load_peak_bytes, q->gpus[0].weights_bytes + 576 * kMiB);
  EXPECT_EQ(q->gpus[0].kv_cache_bytes, 2214592512u);
}

TEST(TransformersFusedAwq, LengthsAndRefusals) {
  const Inventory inv = LlamaAwq();
  TransformersSettings s = Fused(1024, 1000, 100);
  auto p = PlanTransformers(inv, Gpu("h100"), s);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->failure_stage, Stage::kRuntime);  // 1,100 tokens past a 1,024-token cache
  s.prompt_tokens = 2000;
  EXPECT_EQ(PlanTransformers(inv, Gpu("h100"), s)->failure_stage, Stage::kProfile);
  // AwqConfig's own check, and only an AWQ checkpoint of a mapped model type fuses.
  s.fuse_max_seq_len = 0;
  auto none = PlanTransformers(inv, Gpu("h100"), s);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("without specifying a `fuse_max_seq_len`"),
            std::string::npos);
  s.fuse_max_seq_len = 4096;
  auto qwen = PlanTransformers(Catalog("qwen2.5-7b-instruct-awq"), Gpu("h100"), s);
  ASSERT_FALSE(qwen.ok());
  EXPECT_NE(qwen.status().message().find("AWQ_FUSED_MAPPINGS"), std::string::npos);
  EXPECT_FALSE(PlanTransformers(Catalog("llama-3.1-8b-instruct"), Gpu("h100"), s).ok());
}

// Images: Qwen2.5-VL-7B-Instruct, one image a prompt. At max_pixels 1,003,520 the processor
// makes 1,003,520 / 28^2 = 1,280 tokens (5,120 patches of 14 x 14 through the tower); they
// join the prompt, so the cache holds 256 + 1,280 + 256 tokens x 57,344 B (28 layers x 4 KV heads
// x 128 x 2 x 2 B).
TEST(TransformersImages, ImageTokensJoinThePromptAndTheTowerRunsInThePrefill) {
  const Inventory inv = Catalog("qwen2.5-vl-7b-instruct");
  TransformersSettings s;
  s.dtype = "bfloat16";
  s.prompt_tokens = 256;
  s.max_new_tokens = 256;
  s.images_per_prompt = 1;
  s.max_pixels = 1003520;
  auto p = PlanTransformers(inv, Gpu("h100"), s);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->image_tokens, 1280);
  EXPECT_EQ(p->max_model_len, 512);  // --max-length stays the text's
  EXPECT_EQ(p->gpus[0].kv_cache_bytes, (256u + 1280 + 256) * 57344);
  // The tower's pass, per patch: pixel_values 3 x 2 x 14 x 14 = 1,176 values in float32 and
  // bfloat16 (7,056 B), the rotary cos/sin/table 3 x 80 x 4 B (960 B), the widest block
  // (3 x 1,280 + the gated MLP 3 x 3,420) x 2 B (28,200 B): 36,216 B x 5,120 patches =
  // 185,425,920 B, with the prompt's text embeddings 1,536 x 3,584 x 2 B = 11,010,048 B; held
  // after it: 1,280 image embeddings x 3,584 x 2 B = 9,175,040 B.
  const auto& ex = p->gpus[0].explain;
  const auto enc = std::find_if(ex.begin(), ex.end(), [](const auto& e) {
    return e.name == "encoder";
  });
  ASSERT_NE(enc, ex.end());
  EXPECT_EQ(enc->bytes, 185425920u + 11010048u + 9175040u);
  // Eager attention over the processor's default largest image (12,845,056 pixels: 16,384
  // tokens, 65,536 patches) holds one image's 16 heads x 65,536^2 scores at 8 B: 512 GiB.
  s.max_pixels = 0;
  s.attn_implementation = "eager";
  auto eager = PlanTransformers(inv, Gpu("h100"), s);
  ASSERT_TRUE(eager.ok());
  EXPECT_EQ(eager->image_tokens, 16384);
  EXPECT_FALSE(eager->fits);
  EXPECT_EQ(eager->failure_stage, Stage::kProfile);
  EXPECT_GT(eager->gpus[0].activation_peak_bytes, 512 * kGiB);
  // The largest images eager fits: whole 28 x 28 merged patches, one more does not fit.
  const int64_t px = eager->estimated_max_pixels;
  EXPECT_GT(px, 0);
  EXPECT_EQ(px % 784, 0);
  s.max_pixels = px;
  EXPECT_TRUE(PlanTransformers(inv, Gpu("h100"), s)->fits);
  s.max_pixels = px + 784;
  EXPECT_FALSE(PlanTransformers(inv, Gpu("h100"), s)->fits);
  s.max_pixels = 0;
  s.attn_implementation = "sdpa";
  EXPECT_TRUE(PlanTransformers(inv, Gpu("h100"), s)->fits);
  // A model without a vision tower refuses images.
  EXPECT_FALSE(PlanTransformers(Catalog("qwen3-8b"), Gpu("h100"), s).ok());
}

TEST(TransformersFlags, FuseImagesAndTpPlan) {
  FlagValues given = {{"--do-fuse", ""}, {"--fuse-max-seq-len", "4096"},
                      {"--images-per-prompt", "2"}, {"--max-pixels", "1003520"}};
  auto s = ReadFlags(given, TransformersSettings{});
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->do_fuse);
  EXPECT_EQ(s->fuse_max_seq_len, 4096);
  EXPECT_EQ(s->images_per_prompt, 2);
  EXPECT_EQ(s->max_pixels, 1003520);
  const Inventory inv = Catalog("qwen3-8b");
  const std::string py = PythonSnippet(inv, *s, RulesFor(45700));
  EXPECT_NE(py.find("AwqConfig(bits=4, do_fuse=True, fuse_max_seq_len=4096)"),
            std::string::npos) << py;
  EXPECT_NE(py.find("AutoProcessor.from_pretrained(\"Qwen/Qwen3-8B\", max_pixels=1003520)"),
            std::string::npos) << py;
  const std::string cmd = CommandLine(inv, *s);
  EXPECT_NE(cmd.find("--do-fuse --fuse-max-seq-len 4096 --images-per-prompt 2 "
                     "--max-pixels 1003520"), std::string::npos) << cmd;
  // tp_plan is not modelled: named, never ignored.
  auto tp = ReadFlags({{"--tp-plan", "auto"}}, TransformersSettings{});
  ASSERT_FALSE(tp.ok());
  EXPECT_NE(tp.status().message().find("--tp-plan auto: tp_plan tensor parallelism"),
            std::string::npos);
}

TEST(TransformersHostile, HugeImagesAndFusedCachesSaturate) {
  TransformersSettings s;
  s.images_per_prompt = (int64_t{1} << 31) - 1;
  EXPECT_FALSE(PlanTransformers(Catalog("qwen2.5-vl-7b-instruct"), Gpu("h100"), s).ok());
  s.images_per_prompt = 1;
  s.max_pixels = (int64_t{1} << 31) - 1;
  s.max_num_seqs = (int64_t{1} << 31) - 1;
  s.attn_implementation = "eager";
  auto p = PlanTransformers(Catalog("qwen2.5-vl-7b-instruct"), Gpu("h100"), s);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_FALSE(p->fits);
  TransformersSettings f = Fused((int64_t{1} << 31) - 1, 0, 0);
  f.max_num_seqs = (int64_t{1} << 31) - 1;
  f.num_beams = (int64_t{1} << 31) - 1;
  auto q = PlanTransformers(LlamaAwq(), Gpu("h100"), f);
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_FALSE(q->fits);
}

}  // namespace
}  // namespace vramfit::transformers
