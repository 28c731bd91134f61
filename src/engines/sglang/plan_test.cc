// SGLang plans: its defaults by GPU, the token-pool formula, each stage's failure with the
// direction to move --mem-fraction-static, the MLA and hybrid pools, and advice that fits.
#include "engines/sglang/sglang.h"

#include <gtest/gtest.h>

#include "engines/sglang/defaults.h"
#include "engines/sglang/engine.h"
#include "engines/sglang/flags.h"
#include "engines/sglang/rules.h"
#include "testutil/catalog.h"
#include "vramfit/advice.h"

namespace vramfit::sglang {
namespace {

using testutil::Catalog;
using testutil::Gpu;

std::vector<Advice> AdviseSglang(const Inventory& inv, const GpuSpec& gpu,
                                 const SglangSettings& s, const Plan& p) {
  auto model = SglangEngine().prepare(inv);
  EXPECT_TRUE(model.ok());
  return Advise(SglangEngine(), **model, gpu, ToEngineSettings(s), p);
}

TEST(SglangDefaults, FractionChunkAndGraphsByGpu) {
  const Rules rules;
  SglangSettings s;
  ApplyDefaults(rules, Gpu("H100"), ModelSpec{}, &s);
  // 81,559 MiB: chunk 8192, graphs to 256; reserve 512 + 8192 x 1.5 + 256 x 2 + 1024 / 8 =
  // 13,440 MB (above the 10 GB floor): (81,559 - 13,440) / 81,559 = 0.835.
  EXPECT_EQ(s.max_num_batched_tokens, 8192);
  EXPECT_EQ(s.cuda_graph_max_bs, 256);
  EXPECT_DOUBLE_EQ(s.gpu_memory_utilization, 0.835);
  SglangSettings small;
  ApplyDefaults(rules, Gpu("4090"), ModelSpec{}, &small);
  EXPECT_EQ(small.max_num_batched_tokens, 2048);
  EXPECT_EQ(small.cuda_graph_max_bs, 24);
  // v0.4: the table by TP size.
  SglangSettings old;
  old.tensor_parallel_size = 4;
  ApplyDefaults(RulesFor(406), Gpu("H100"), ModelSpec{}, &old);
  EXPECT_DOUBLE_EQ(old.gpu_memory_utilization, 0.85);
  EXPECT_EQ(old.cuda_graph_max_bs, 160);
}

// --cpu-offload-gb (ServerArgs.cpu_offload_gb, whole GiB): that much of each rank's weights
// stays on the host, the pool grows by it, and one offloaded layer is copied in per forward; a
// load that does not fit gets the smallest offload that does as advice.
TEST(SglangOffload, CpuOffloadKeepsWeightsOnTheHost) {
  const Inventory inv = Catalog("qwen3-14b");
  SglangSettings s;
  s.max_model_len = 8192;
  auto full = PlanSglang(inv, Gpu("4090"), s);
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ(full->failure_stage, Stage::kLoad);
  const auto advice = AdviseSglang(inv, Gpu("4090"), s, *full);
  ASSERT_FALSE(advice.empty());
  EXPECT_EQ(advice[0].change.rfind("--cpu-offload-gb ", 0), 0u);
  EXPECT_TRUE(advice[0].plan.fits);
  s.cpu_offload_gb = 12;
  auto off = PlanSglang(inv, Gpu("4090"), s);
  ASSERT_TRUE(off.ok());
  EXPECT_TRUE(off->fits) << off->failure_message;
  EXPECT_EQ(full->gpus[0].weights_bytes - off->gpus[0].weights_bytes, 12ull << 30);
  EXPECT_NE(off->command.find("--cpu-offload-gb 12"), std::string::npos);
  // The pool grows by the offload, less one layer's onload nothing else takes.
  s.cpu_offload_gb = 14;
  auto more = PlanSglang(inv, Gpu("4090"), s);
  EXPECT_GT(more->kv_cache_tokens, off->kv_cache_tokens);
  EXPECT_FALSE(ReadFlags({{"--cpu-offload-gb", "1.5"}}, {}).ok());  // an int in ServerArgs
}

TEST(SglangDefaults, CaptureSizes) {
  EXPECT_EQ(CaptureBatchSizes(256, false).size(), 36u);  // 1 2 4 8 12, 16..256 step 8
  EXPECT_EQ(CaptureBatchSizes(8, false), (std::vector<int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(CaptureBatchSizes(512, false).back(), 512);
  // A request table smaller than the list: sizes up to rows - 2, then rows - 1 and rows.
  EXPECT_EQ(CaptureBatchSizes(256, false, 10), (std::vector<int64_t>{1, 2, 4, 8, 9, 10}));
  EXPECT_EQ(CaptureBatchSizes(256, false, 8), (std::vector<int64_t>{1, 2, 4, 7, 8}));
  EXPECT_EQ(CaptureBatchSizes(256, false, 1), (std::vector<int64_t>{1}));
  // A table at least as large as the largest size changes nothing.
  EXPECT_EQ(CaptureBatchSizes(256, false, 256), CaptureBatchSizes(256, false));
  EXPECT_EQ(CaptureBatchSizes(256, true, 4096), CaptureBatchSizes(256, true));
}

TEST(SglangRules, ParsesReleases) {
  EXPECT_EQ(*ParseRelease("0.5.5"), 505);
  EXPECT_EQ(*ParseRelease("v0.4.6.post1"), 406);
  EXPECT_EQ(*ParseRelease("0.5.3rc2"), 503);
  EXPECT_FALSE(ParseRelease("0.3.6").ok());
  EXPECT_FALSE(ParseRelease("latest").ok());
  EXPECT_FALSE(ParseRelease("0.123.1").ok());
  EXPECT_EQ(RulesFor(900).release, kNewestModelled);
}

TEST(SglangPool, ProfileMaxNumTokenFormula) {
  // Llama-3.1-8B: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 B = 131,072 B per token.
  const Inventory inv = Catalog("llama-3.1-8b-instruct");
  SglangSettings s;
  s.gpu_memory_utilization = 0.85;
  s.page_size = 1;
  // rest = 64 - 79 x 0.15 = 52.15 GiB -> 52.15 x 8192 = 427,212.8 tokens.
  auto p = ProfileTokenPool(inv.spec, s, 79.0, 64.0);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->cell_bytes, 131072u);
  EXPECT_EQ(p->tokens, 427212);
  s.page_size = 64;
  EXPECT_EQ(ProfileTokenPool(inv.spec, s, 79.0, 64.0)->tokens, 427200);
  s.max_total_tokens = 100000;
  EXPECT_EQ(ProfileTokenPool(inv.spec, s, 79.0, 64.0)->tokens, 99968);
  s.kv_cache_dtype = "fp8_e4m3";
  EXPECT_EQ(ProfileTokenPool(inv.spec, s, 79.0, 64.0)->cell_bytes, 65536u);
  // TP 2 halves the KV heads.
  s.kv_cache_dtype = "auto";
  s.tensor_parallel_size = 2;
  EXPECT_EQ(ProfileTokenPool(inv.spec, s, 79.0, 64.0)->cell_bytes, 65536u);
}

TEST(SglangPool, MlaLatentPerToken) {
  // DeepSeek-V2-Lite: 27 layers x (512 + 64) x 2 B = 31,104 B, not divided by TP.
  const Inventory inv = Catalog("deepseek-v2-lite");
  SglangSettings s;
  s.gpu_memory_utilization = 0.8;
  s.tensor_parallel_size = 2;
  auto p = ProfileTokenPool(inv.spec, s, 40, 30);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->cell_bytes, 31104u);
}

TEST(SglangPool, HybridLinearAttentionSplitsTheRest) {
  // Qwen3-Next: 12 full-attention layers hold the token pool; the 36 linear-attention layers'
  // state takes 0.9 / 1.9 of the rest.
  const Inventory inv = Catalog("qwen3-next-80b-a3b-instruct-fp8");
  SglangSettings s;
  s.gpu_memory_utilization = 0.9;
  s.tensor_parallel_size = 2;
  auto p = ProfileTokenPool(inv.spec, s, 79, 40);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->cell_bytes, 12u * 1 * 256 * 2 * 2);  // 2 KV heads / 2 ranks, head_dim 256
  EXPECT_GT(p->mamba_slots, 0);
  const double rest = (40 - 79 * 0.1) * (1ull << 30);
  EXPECT_NEAR(static_cast<double>(p->mamba_bytes) / rest, 0.9 / 1.9, 0.01);
}

TEST(SglangPool, GptOssKeepsASlidingPool) {
  const Inventory inv = Catalog("gpt-oss-20b");
  SglangSettings s;
  s.gpu_memory_utilization = 0.8;
  auto p = ProfileTokenPool(inv.spec, s, 79, 60);
  ASSERT_TRUE(p.ok());
  EXPECT_GT(p->swa_tokens, 0);
  EXPECT_NEAR(static_cast<double>(p->swa_tokens) / static_cast<double>(p->tokens), 0.8, 0.001);
}

TEST(Sglang, Llama8bOnH100Fits) {
  SglangSettings s;
  auto p = PlanSglang(Catalog("llama-3.1-8b-instruct"), Gpu("H100"), s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->fits) << p->failure_message;
  EXPECT_EQ(p->engine, "sglang");
  EXPECT_EQ(p->max_model_len, 131072);
  // About (79.2 - 0.5) x 0.835 - 15 GiB of KV: ~50 GiB, ~400k tokens.
  EXPECT_GT(p->kv_cache_tokens, 380000u);
  EXPECT_LT(p->kv_cache_tokens, 430000u);
  EXPECT_NE(p->command.find("--mem-fraction-static 0.835"), std::string::npos) << p->command;
  ASSERT_EQ(p->stages.size(), 5u);
  EXPECT_EQ(p->stages[2].stage, Stage::kKvCache);
}

TEST(Sglang, FewRunningRequestsCaptureFewerGraphs) {
  // H100: --cuda-graph-max-bs 256 (36 sizes); --max-running-requests 8 leaves 1, 2, 4, 7, 8.
  SglangSettings wide, few;
  few.max_num_seqs = 8;
  auto a = PlanSglang(Catalog("llama-3.1-8b-instruct"), Gpu("H100"), wide);
  auto b = PlanSglang(Catalog("llama-3.1-8b-instruct"), Gpu("H100"), few);
  ASSERT_TRUE(a.ok() && b.ok());
  const uint64_t per_graph = 32 * 256 * 1024;  // 32 layers x 256 KiB
  EXPECT_EQ(a->gpus.at(0).cudagraph_bytes - b->gpus.at(0).cudagraph_bytes, (36 - 5) * per_graph);
}

TEST(Sglang, NoFractionBelowOneIsNotAdvised) {
  // Qwen3-Next-80B in 16 bits at TP 2 on H100s: 74 GiB of weights a rank and 3 GiB of KV for
  // one 262,144-token request pass the 77.7 GiB free: no --mem-fraction-static holds it, and
  // the message says so instead of naming a fraction of 1 or more.
  SglangSettings s;
  s.gpu_memory_utilization = 0.85;
  s.tensor_parallel_size = 2;
  s.max_model_len = 262144;
  auto p = PlanSglang(Catalog("qwen3-next-80b-a3b-instruct"), Gpu("H100"), s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->failure_stage, Stage::kKvCache);
  EXPECT_NE(p->failure_message.find("no fraction below 1 holds one 262144-token request"),
            std::string::npos)
      << p->failure_message;
  EXPECT_EQ(p->failure_message.find(" would hold"), std::string::npos) << p->failure_message;
}

TEST(Sglang, WeightsAboveTheFractionAskForAHigherFraction) {
  // Qwen3-32B in 16 bits (61 GiB) on an H100 at 0.7: F x 0.7 is 55 GiB, below the weights:
  // SGLang's "Not enough memory" error, and the way out is a higher fraction.
  SglangSettings s;
  s.gpu_memory_utilization = 0.7;
  s.max_model_len = 8192;
  const Inventory inv = Catalog("qwen3-32b");
  auto p = PlanSglang(inv, Gpu("H100"), s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_FALSE(p->fits);
  EXPECT_EQ(p->failure_stage, Stage::kKvCache);
  EXPECT_EQ(p->failure_message.rfind("Not enough memory. Please try to increase "
                                     "--mem-fraction-static. Current value: 0.7", 0), 0u)
      << p->failure_message;
  const auto advice = AdviseSglang(inv, Gpu("H100"), s, *p);
  bool raised = false;
  for (const Advice& a : advice) {
    EXPECT_TRUE(a.plan.fits) << a.change;
    if (a.change.rfind("--mem-fraction-static 0.", 0) == 0) {
      raised = true;
      EXPECT_GT(a.settings.gpu_memory_utilization, 0.7);
    }
  }
  EXPECT_TRUE(raised);
}

TEST(Sglang, MeasuredFreeMemoryCalibratesThePool) {
  // The QwQ-32B record (validation/sglang): 4 x L4, TP 4, fraction 0.85; the log's load began
  // with 21.63 GiB free and ended with 6.09 (15.54 loaded). Fed those, the plan's pool is the
  // formula's: rest = 6.09 - 21.63 x 0.15 = 2.8455 GiB over 64 layers x 2 x 2 KV heads x 128 x
  // 2 B = 65,536 B per token: 46,620 tokens (the log: 46,611).
  const Inventory inv = Catalog("qwen2.5-32b-instruct");
  SglangSettings s;
  s.tensor_parallel_size = 4;
  s.gpu_memory_utilization = 0.85;
  s.max_num_batched_tokens = 2048;
  s.cuda_graph_max_bs = 80;
  s.measured_free_before_load_bytes = static_cast<uint64_t>(21.63 * (1ull << 30));
  s.measured_free_after_load_bytes = static_cast<uint64_t>(6.09 * (1ull << 30));
  auto p = PlanSglang(inv, Gpu("l4"), s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto pool = ProfileTokenPool(inv.spec, s, 21.63, 6.09);
  ASSERT_TRUE(pool.ok());
  EXPECT_EQ(pool->cell_bytes, 65536u);
  EXPECT_NEAR(static_cast<double>(p->kv_cache_tokens), 46620, 1);
  EXPECT_NEAR(static_cast<double>(p->kv_cache_tokens), static_cast<double>(pool->tokens), 1);
  EXPECT_NE(p->stages[0].detail.find("(measured)"), std::string::npos) << p->stages[0].detail;
  // Another TP size loads other weights: the measured load no longer stands for it (a note),
  // and the load is modelled on the measured free memory.
  s.tensor_parallel_size = 2;
  auto tp2 = PlanSglang(inv, Gpu("l4"), s);
  ASSERT_TRUE(tp2.ok());
  bool noted = false;
  for (const std::string& n : tp2->notes) noted |= n.find("the load is modelled") != n.npos;
  EXPECT_TRUE(noted);
}

TEST(Sglang, TooHighAFractionFailsInGraphCaptureAndAsksForALowerOne) {
  SglangSettings s;
  s.gpu_memory_utilization = 0.99;
  const Inventory inv = Catalog("qwen3-8b");
  auto p = PlanSglang(inv, Gpu("H100"), s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_FALSE(p->fits);
  EXPECT_EQ(p->failure_stage, Stage::kCudaGraph) << p->failure_message;
  const auto advice = AdviseSglang(inv, Gpu("H100"), s, *p);
  bool lowered = false;
  for (const Advice& a : advice) {
    EXPECT_TRUE(a.plan.fits) << a.change;
    if (a.change.rfind("--mem-fraction-static", 0) == 0) {
      lowered = true;
      EXPECT_LT(a.settings.gpu_memory_utilization, 0.99);
    }
  }
  EXPECT_TRUE(lowered);
  // Without graphs the first 8,192-token prefill is what runs out.
  s.enforce_eager = true;
  s.gpu_memory_utilization = 0.98;
  auto eager = PlanSglang(inv, Gpu("H100"), s);
  ASSERT_TRUE(eager.ok());
  EXPECT_EQ(eager->failure_stage, Stage::kRuntime) << eager->failure_message;
}

TEST(Sglang, LoadFailureAndOnlineFp8) {
  // Llama-3.3-70B in 16 bits on one H100: the load fails; online FP8 still loads 16 bits first.
  SglangSettings s;
  s.max_model_len = 8192;
  auto p = PlanSglang(Catalog("llama-3.3-70b-instruct"), Gpu("H100"), s);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->failure_stage, Stage::kLoad);
  s.quantization = "fp8";
  auto fp8 = PlanSglang(Catalog("llama-3.3-70b-instruct"), Gpu("H100"), s);
  ASSERT_TRUE(fp8.ok());
  EXPECT_EQ(fp8->failure_stage, Stage::kLoad);
  EXPECT_LT(fp8->gpus[0].weights_bytes, 70ull << 30);
  EXPECT_GT(fp8->gpus[0].load_peak_bytes, 120ull << 30);
  // Qwen3-8B with online FP8 on an H100 fits with ~8 GiB of weights.
  auto small = PlanSglang(Catalog("qwen3-8b"), Gpu("H100"), s);
  ASSERT_TRUE(small.ok());
  EXPECT_TRUE(small->fits) << small->failure_message;
  EXPECT_LT(small->gpus[0].weights_bytes, 10ull << 30);
}

TEST(Sglang, ContextBeyondTheModelIsRefusedAsSglangDoes) {
  SglangSettings s;
  s.max_model_len = 1 << 20;
  auto p = PlanSglang(Catalog("qwen3-8b"), Gpu("H100"), s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->failure_stage, Stage::kStartup);
  EXPECT_NE(p->failure_message.find("User-specified context_length (1048576) is greater than "
                                    "the derived context_length (40960)"),
            std::string::npos)
      << p->failure_message;
  EXPECT_NE(p->refusal.find("--context-length 40960 "), std::string::npos) << p->refusal;
  s.override_context_len = 1 << 20;  // --json-model-override-args max_position_embeddings
  auto stretched = PlanSglang(Catalog("qwen3-8b"), Gpu("H100"), s);
  ASSERT_TRUE(stretched.ok());
  EXPECT_NE(stretched->failure_stage, Stage::kStartup) << stretched->failure_message;
  // Heads that the attention TP size does not divide: refused at startup too.
  SglangSettings tp3;
  tp3.tensor_parallel_size = 3;
  auto uneven = PlanSglang(Catalog("qwen3-8b"), Gpu("H100"), tp3);
  ASSERT_TRUE(uneven.ok());
  EXPECT_EQ(uneven->failure_stage, Stage::kStartup);
  EXPECT_EQ(uneven->refusal, "--tp-size 2 (32 heads: the attention TP size must divide them)");
}

TEST(Sglang, TensorParallelShardsWeightsAndHeads) {
  // Qwen2.5-72B in 16 bits: 67.7 GiB per rank at TP 2, above the default 0.834 of an H100's
  // free memory (65 GiB): "Not enough memory"; at TP 4 half that, and it fits.
  SglangSettings two, four;
  two.tensor_parallel_size = 2;
  four.tensor_parallel_size = 4;
  const Inventory inv = Catalog("qwen2.5-72b-instruct");
  auto p2 = PlanSglang(inv, Gpu("H100"), two);
  ASSERT_TRUE(p2.ok());
  EXPECT_EQ(p2->failure_stage, Stage::kKvCache) << p2->failure_message;
  EXPECT_GT(p2->gpus[0].weights_bytes, 66ull << 30);
  EXPECT_LT(p2->gpus[0].weights_bytes, 70ull << 30);
  auto p4 = PlanSglang(inv, Gpu("H100"), four);
  ASSERT_TRUE(p4.ok());
  EXPECT_TRUE(p4->fits) << p4->failure_message;
  EXPECT_EQ(p4->gpus.size(), 4u);
}

TEST(Sglang, SpeculativeDraftComesOutOfTheReserve) {
  // DeepSeek-V3 at TP 8 on H200s with NEXTN on its own MTP layer: the default fraction keeps
  // 2 GB more (EAGLE-type drafts), and the draft's weights, pool and graphs are charged after
  // the target's pool, with the graphs.
  const Inventory inv = Catalog("deepseek-v3");
  SglangSettings plain, nextn;
  plain.tensor_parallel_size = nextn.tensor_parallel_size = 8;
  nextn.speculative_algorithm = "NEXTN";
  auto a = PlanSglang(inv, Gpu("H200"), plain);
  auto b = PlanSglang(inv, Gpu("H200"), nextn);
  ASSERT_TRUE(a.ok() && b.ok());
  const double with = b->resolved.gpu_memory_utilization;
  const double without = a->resolved.gpu_memory_utilization;
  EXPECT_NEAR(without - with, 2048.0 / 143771, 0.001);
  EXPECT_TRUE(b->fits) << b->failure_message;
  EXPECT_GT(b->gpus[0].peak_bytes, a->gpus[0].peak_bytes);
  // MLA: the same latent per token on every rank, 61 layers x 576 x 2 B.
  EXPECT_EQ(a->kv_needed_bytes / static_cast<uint64_t>(a->max_model_len), 61u * 576 * 2);
}

// EAGLE with a draft model that could not be read (offline): its weights and KV are left out,
// so the plan may not call it a plain fit; the same model and card with the draft read (here
// NEXTN on the checkpoint's own layers) is a high-confidence fit.
TEST(Sglang, UnreadDraftIsNotCountedAndNotAPlainFit) {
  const Inventory inv = Catalog("qwen3-8b");
  SglangSettings s;
  s.max_model_len = 8192;
  const auto plain = PlanSglang(inv, Gpu("H100"), s);
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->not_counted.empty());
  EXPECT_FALSE(plain->low_confidence());
  s.speculative_algorithm = "EAGLE";
  s.draft_model = "some-org/unreadable-draft";
  const auto p = PlanSglang(inv, Gpu("H100"), s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->not_counted.size(), 1u);
  EXPECT_EQ(p->not_counted[0],
            "the speculative draft model some-org/unreadable-draft (not read): its weights, KV "
            "cache and graphs");
  EXPECT_TRUE(p->low_confidence());
}

// Qwen2.5-VL-7B, one image at SGLang's default 12,845,056 pixels (= the processor's): 16,384
// prompt tokens, 65,536 patches (2 x 2 merge). Per patch: pixel_values 3 x 2 x 14 x 14 = 1,176
// values in float32 and bf16 (7,056 B), rotary cos and sin 3 x 80 x 4 = 960 B, the widest
// block (3 x 1,280 + max(7 x 1,280, 3 x 3,420)) x 2 = 28,200 B: 36,216 B, x 65,536 = 2.21 GiB
// for the pass; the embeddings 16,384 x 3,584 x 2 = 112 MiB.
constexpr uint64_t kQwen25Vl7bPass = 36216ull * 65536;
constexpr uint64_t kQwen25Vl7bEmbeds = 16384ull * 3584 * 2;

bool HasNote(const Plan& p, const std::string& text) {
  for (const std::string& n : p.notes) {
    if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(SglangImages, OneDefaultImageOnA24GbAndAn80GbCard) {
  const Inventory inv = Catalog("qwen2.5-vl-7b-instruct");
  for (const char* gpu : {"4090", "H100"}) {
    SglangSettings s;
    auto p = PlanSglang(inv, Gpu(gpu), s);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_TRUE(p->fits) << gpu << ": " << p->failure_message;
    // The tower's pass outweighs the decoder's chunk: the first prefill's peak is the pass plus
    // the embeddings.
    EXPECT_EQ(p->gpus[0].activation_peak_bytes, kQwen25Vl7bPass + kQwen25Vl7bEmbeds) << gpu;
    EXPECT_TRUE(HasNote(*p, "1 image(s) a request (planned: give --limit-mm-data-per-request) at "
                            "12845056 pixels"))
        << gpu;
    EXPECT_TRUE(HasNote(*p, "16384 prompt tokens each, 65536 patches")) << gpu;
    EXPECT_NE(p->stages.back().detail.find("vision tower 1 image(s)"), std::string::npos)
        << p->stages.back().detail;
  }
  // --limit-mm-data-per-request '{"image": 0}': a text-only server, no tower pass.
  SglangSettings none;
  none.images_per_request = 0;
  auto text = PlanSglang(inv, Gpu("4090"), none);
  ASSERT_TRUE(text.ok());
  EXPECT_LT(text->gpus[0].activation_peak_bytes, 1ull << 30);
}

TEST(SglangImages, ATooHighFractionFailsInTheVisionTowerWithFixes) {
  // A 24 GB card at --mem-fraction-static 0.9: the decoder's 2,048-token chunk fits, the tower
  // does not; the message gives the fraction, the largest SGLANG_IMAGE_MAX_PIXELS and (with two
  // images) the fewer images that fit.
  const Inventory inv = Catalog("qwen2.5-vl-7b-instruct");
  SglangSettings s;
  s.gpu_memory_utilization = 0.9;
  s.images_per_request = 2;
  auto p = PlanSglang(inv, Gpu("4090"), s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_FALSE(p->fits);
  EXPECT_EQ(p->failure_stage, Stage::kRuntime);
  const std::string& m = p->failure_message;
  EXPECT_EQ(m.rfind("CUDA out of memory in the vision tower: 2 image(s) of 12845056 pixels "
                    "(131072 patches)", 0), 0u) << m;
  EXPECT_NE(m.find("lower --mem-fraction-static to 0."), std::string::npos) << m;
  EXPECT_NE(m.find("; or SGLANG_IMAGE_MAX_PIXELS="), std::string::npos) << m;
  const auto advice = AdviseSglang(inv, Gpu("4090"), s, *p);
  bool pixels = false;
  for (const Advice& a : advice) {
    EXPECT_TRUE(a.plan.fits) << a.change;
    pixels |= a.change.rfind("SGLANG_IMAGE_MAX_PIXELS=", 0) == 0;
  }
  EXPECT_TRUE(pixels);
  // One image: 2.32 GiB against the 904 MiB left; 0.83 leaves room, or 6,235-token images.
  s.images_per_request = 1;
  auto one = PlanSglang(inv, Gpu("4090"), s);
  ASSERT_TRUE(one.ok());
  EXPECT_NE(one->failure_message.find("(lower --mem-fraction-static to 0.83; or "
                                      "SGLANG_IMAGE_MAX_PIXELS=4888240 (6235 tokens an image))"),
            std::string::npos) << one->failure_message;
  s.gpu_memory_utilization = 0.83;
  auto lowered = PlanSglang(inv, Gpu("4090"), s);
  ASSERT_TRUE(lowered.ok());
  EXPECT_TRUE(lowered->fits) << lowered->failure_message;
  s.images_per_request = 2;
  // sdpa adds the boolean mask over the request's patches: 131,072^2 B = 16 GiB.
  s.gpu_memory_utilization = 0;
  s.mm_attention_backend = "sdpa";
  auto sdpa = PlanSglang(inv, Gpu("H100"), s);
  ASSERT_TRUE(sdpa.ok());
  EXPECT_EQ(sdpa->gpus[0].activation_peak_bytes,
            2 * (kQwen25Vl7bPass + kQwen25Vl7bEmbeds) + 131072ull * 131072);
}

TEST(SglangImages, ImageTokensCountTowardTheRequestsLength) {
  // --context-length 16384 holds at most 16,383 input tokens: one 16,384-token image is refused;
  // SGLANG_IMAGE_MAX_PIXELS = 16,383 x 784 fits it.
  const Inventory inv = Catalog("qwen2.5-vl-7b-instruct");
  SglangSettings s;
  s.max_model_len = 16384;
  auto p = PlanSglang(inv, Gpu("H100"), s);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->fits);
  EXPECT_EQ(p->failure_stage, Stage::kRuntime);
  EXPECT_NE(p->failure_message.find("are 16384 prompt tokens, more than the 16383 an input may "
                                    "hold"), std::string::npos) << p->failure_message;
  EXPECT_NE(p->failure_message.find("SGLANG_IMAGE_MAX_PIXELS=12844272 (16383 tokens an image)"),
            std::string::npos) << p->failure_message;
  s.image_max_pixels = 12844272;
  auto smaller = PlanSglang(inv, Gpu("H100"), s);
  ASSERT_TRUE(smaller.ok());
  EXPECT_TRUE(smaller->fits) << smaller->failure_message;
}

// ModelRunner.load_model refuses compute capability below 7.5 whose minor number is below 5
// too ("SGLang only supports sm75 and above."): Volta and Pascal never load; Turing (T4) does,
// in float16.
TEST(Sglang, CardsBelowSm75AreRefusedAtLoad) {
  SglangSettings s;
  s.max_model_len = 4096;
  for (const char* gpu : {"v100-32gb", "p40"}) {
    auto p = PlanSglang(Catalog("qwen3-0.6b"), Gpu(gpu), s);
    ASSERT_TRUE(p.ok()) << gpu;
    EXPECT_FALSE(p->fits) << gpu;
    ASSERT_TRUE(p->failure_stage.has_value()) << gpu;
    EXPECT_EQ(*p->failure_stage, Stage::kLoad) << gpu;
    EXPECT_EQ(p->failure_message.rfind("RuntimeError: SGLang only supports sm75 and above.", 0),
              0u)
        << p->failure_message;
  }
  auto t4 = PlanSglang(Catalog("qwen3-0.6b"), Gpu("t4"), s);
  ASSERT_TRUE(t4.ok());
  EXPECT_TRUE(t4->fits) << t4->failure_message;
}

}  // namespace
}  // namespace vramfit::sglang
