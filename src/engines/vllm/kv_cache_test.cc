// vLLM KV cache layout and capacity against the worked examples derived from vLLM's code
// (../shared/reference/vllm-memory.md §4): page sizes, hybrid block alignment, grouping,
// block counts, concurrency and the printed token count.
#include "engines/vllm/kv_cache.h"

#include <gtest/gtest.h>

#include "vramfit/catalog.h"

namespace vramfit {
namespace {

ModelSpec Spec(const char* id) {
  auto m = FindCatalogModel(id);
  EXPECT_TRUE(m.ok()) << id;
  auto s = ModelSpecFromConfigJson(m->config_json, id);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return *s;
}

KvCacheOptions Opts(int64_t len, int64_t tp = 1) {
  KvCacheOptions o;
  o.max_model_len = len;
  o.tensor_parallel_size = tp;
  return o;
}

TEST(KvCache, DenseFullAttentionIsOneGroup) {
  // Llama-3.1-8B: 32 layers x 2 x 8 KV heads x 128 x 2 B = 131,072 B per token.
  auto layout = PlanKvCache(Spec("llama-3.1-8b-instruct"), Opts(8192));
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->kv_bytes_per_token, 131072u);
  EXPECT_EQ(layout->groups.size(), 1u);
  EXPECT_EQ(layout->group_size, 32);
  EXPECT_EQ(layout->page_bytes, 16u * 4096);
  const auto cap = KvCapacity(*layout, 10ull << 30, Opts(8192));
  EXPECT_EQ(cap.num_blocks, 5120u);            // 10 GiB / 64 KiB / 32 layers
  EXPECT_EQ(cap.kv_cache_tokens, 81920u);      // 5120 x 16 (= 10 GiB / 128 KiB)
  EXPECT_EQ(cap.blocks_per_request, 512u);     // 8192 / 16
  EXPECT_DOUBLE_EQ(cap.max_concurrency, 10.0);
}

TEST(KvCache, TensorParallelShardsAndReplicatesKvHeads) {
  // Qwen3-30B-A3B has 4 KV heads: TP 2 halves them; TP 8 replicates to 1 per rank.
  const ModelSpec s = Spec("qwen3-30b-a3b");
  EXPECT_EQ(PlanKvCache(s, Opts(4096, 1))->kv_bytes_per_token, 98304u);
  EXPECT_EQ(PlanKvCache(s, Opts(4096, 2))->kv_bytes_per_token, 49152u);
  EXPECT_EQ(PlanKvCache(s, Opts(4096, 8))->kv_bytes_per_token, 24576u);
  auto bad = PlanKvCache(s, Opts(4096, 3));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "Total number of attention heads (32) must be divisible by tensor parallel size (3).");
}

TEST(KvCache, DecodeContextParallelKeepsATokenShardPerRank) {
  // DeepSeek-V2-Lite's MLA latent at TP 8: the pool's blocks are the same, each request needs
  // cdiv(len, dcp) tokens per rank (FullAttentionSpec.max_memory_usage_bytes), and the printed
  // size is 8 times larger under both print rules.
  const ModelSpec s = Spec("deepseek-v2-lite");
  for (int release : {1500, 2200}) {
    KvCacheOptions o = Opts(32768, 8);
    o.rules = vllm::RulesFor(release);
    KvCacheOptions o8 = o;
    o8.decode_context_parallel_size = 8;
    auto l = PlanKvCache(s, o);
    auto l8 = PlanKvCache(s, o8);
    ASSERT_TRUE(l.ok() && l8.ok());
    const auto c = KvCapacity(*l, 4ull << 30, o);
    const auto c8 = KvCapacity(*l8, 4ull << 30, o8);
    EXPECT_EQ(c.num_blocks, c8.num_blocks) << release;
    EXPECT_EQ(c.blocks_per_request, 8 * c8.blocks_per_request) << release;
    EXPECT_EQ(c8.kv_cache_tokens, 8 * c.kv_cache_tokens) << release;
  }
}

TEST(KvCache, Fp8HalvesKv) {
  KvCacheOptions o = Opts(4096);
  o.kv_cache_dtype = "fp8";
  EXPECT_EQ(PlanKvCache(Spec("qwen3-8b"), o)->kv_bytes_per_token, 36u * 2 * 8 * 128);
  o.kv_cache_dtype = "fp4";
  EXPECT_FALSE(PlanKvCache(Spec("qwen3-8b"), o).ok());
}

// --kv-cache-dtype-skip-layers (PR #33695): listed layers, and every sliding-window layer under
// "sliding_window", keep the model's dtype under a quantized cache; without one it changes
// nothing.
TEST(KvCache, SkipLayersKeepTheModelsDtype) {
  KvCacheOptions o = Opts(4096);
  o.kv_cache_dtype = "fp8";
  o.kv_skip_layers = {"0", "1", "34", "35"};
  // Qwen3-8B: 32 layers of 8 KV heads x 128 in FP8 and 4 in BF16.
  EXPECT_EQ(PlanKvCache(Spec("qwen3-8b"), o)->kv_bytes_per_token,
            32u * 2 * 8 * 128 + 4u * 2 * 8 * 128 * 2);
  o.kv_skip_layers = {"sliding_window"};  // Qwen3-8B has none
  EXPECT_EQ(PlanKvCache(Spec("qwen3-8b"), o)->kv_bytes_per_token, 36u * 2 * 8 * 128);
  // gpt-oss-20b: 12 of its 24 layers slide (window 128).
  const ModelSpec oss = Spec("gpt-oss-20b");
  const uint64_t fp8 = PlanKvCache(oss, o)->kv_bytes_per_token;
  o.kv_skip_layers.clear();
  EXPECT_EQ(fp8, PlanKvCache(oss, o)->kv_bytes_per_token + 12u * 2 * 8 * 64);
  o.kv_cache_dtype = "auto";
  o.kv_skip_layers = {"0"};
  EXPECT_EQ(PlanKvCache(Spec("qwen3-8b"), o)->kv_bytes_per_token, 36u * 2 * 8 * 128 * 2);
}

TEST(KvCache, PerTokenHeadScalesShareThePage) {
  // PR #38378 (AttentionSpec.page_size_bytes, kv_cache_interface.py, v0.20): one byte per
  // value plus a float32 scale per token and KV head for K and V. Qwen3-8B: 36 layers x
  // (2 x 8 x 128 x 1 B + 2 x 8 x 4 B) = 36 x 2,112 B; at TP 2 half the heads.
  KvCacheOptions o = Opts(4096);
  o.kv_cache_dtype = "int8_per_token_head";
  EXPECT_EQ(PlanKvCache(Spec("qwen3-8b"), o)->kv_bytes_per_token, 36u * 2112);
  o.kv_cache_dtype = "fp8_per_token_head";
  o.tensor_parallel_size = 2;
  EXPECT_EQ(PlanKvCache(Spec("qwen3-8b"), o)->kv_bytes_per_token, 36u * 1056);
  // The hybrid block is sized on the page with its scales (Platform._align_hybrid_block_size):
  // Qwen3-Next, 2 x 2 x 256 x 1 + 2 x 2 x 4 = 1,040 B a token; 16 x cdiv(1,097,728, 16 x
  // 1,040) = 1,056 tokens.
  o.tensor_parallel_size = 1;
  EXPECT_EQ(PlanKvCache(Spec("qwen3-next-80b-a3b-instruct"), o)->block_size, 1056);
  // Before the PR vLLM rejects the choice.
  o.rules = vllm::RulesFor(1900);
  auto old = PlanKvCache(Spec("qwen3-8b"), o);
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.status().message(),
            "--kv-cache-dtype fp8_per_token_head: per-token-head KV quantization came with PR "
            "#38378 (2026-04-02), planned from vLLM 0.20");
}

TEST(KvCache, TurboQuantSlotsAndBoundaryLayers) {
  // turboquant/config.py (0.22): one slot per token and KV head, key (FP8: head_dim bytes; else
  // ceil(d x bits / 8) + 2) plus value (ceil(d x bits / 8) + 4), rounded up to even. A dense
  // model keeps its first and last two layers in the model dtype. Llama-3.1-8B (32 layers,
  // 8 KV heads of 128): 28 x 8 x slot + 4 x 8 x 512 B.
  KvCacheOptions o = Opts(2048);
  const ModelSpec llama = Spec("llama-3.1-8b-instruct");
  o.kv_cache_dtype = "turboquant_4bit_nc";  // 66 + 68 = 134
  EXPECT_EQ(PlanKvCache(llama, o)->kv_bytes_per_token, 28u * 8 * 134 + 4 * 8 * 512);
  o.kv_cache_dtype = "turboquant_k8v4";  // 128 + 68 = 196
  EXPECT_EQ(PlanKvCache(llama, o)->kv_bytes_per_token, 28u * 8 * 196 + 4 * 8 * 512);
  o.kv_cache_dtype = "turboquant_3bit_nc";  // 50 + 52 = 102
  EXPECT_EQ(PlanKvCache(llama, o)->kv_bytes_per_token, 28u * 8 * 102 + 4 * 8 * 512);
  // The published start-up (validation record ...turboquant-4bit-nc-v0.25.0-v025-smoke) holds
  // 103,488 tokens against the same source's 36,640 in bf16: 2.82x, as 131,072 / 46,400 B.
  // A hybrid model skips no layer (PR #39931): Qwen3-Next's 12 attention layers of 2 KV heads
  // of 256 take 2 x (130 + 132) = 524 B a token, and the block holds a GDN state page:
  // 16 x cdiv(1,097,728, 16 x 524) = 2,096 tokens.
  o.kv_cache_dtype = "turboquant_4bit_nc";
  auto next = PlanKvCache(Spec("qwen3-next-80b-a3b-instruct"), o);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(next->kv_bytes_per_token, 12u * 524);
  EXPECT_EQ(next->block_size, 2096);
  // Before PR #39931 a hybrid model is refused, before PR #38479 every model.
  o.rules = vllm::RulesFor(2001);
  EXPECT_FALSE(PlanKvCache(Spec("qwen3-next-80b-a3b-instruct"), o).ok());
  EXPECT_TRUE(PlanKvCache(llama, o).ok());
  o.rules = vllm::RulesFor(1900);
  EXPECT_FALSE(PlanKvCache(llama, o).ok());
  // MLA's latent is not planned in TurboQuant slots.
  o.rules = vllm::RulesFor(2200);
  EXPECT_FALSE(PlanKvCache(Spec("deepseek-v3"), o).ok());
}

TEST(KvCache, Nvfp4PacksValuesAndScales) {
  // nvfp4_kv_cache_full_dim (vllm/utils/torch_utils.py): d / 2 bytes of FP4 values and d / 16
  // FP8 scales, for K and V. Llama-3.1-8B: 32 x 8 x 2 x (64 + 8) B; from 0.21 (PR #40177).
  KvCacheOptions o = Opts(2048);
  o.kv_cache_dtype = "nvfp4";
  EXPECT_EQ(PlanKvCache(Spec("llama-3.1-8b-instruct"), o)->kv_bytes_per_token,
            32u * 8 * 2 * 72);
  o.rules = vllm::RulesFor(2001);
  EXPECT_FALSE(PlanKvCache(Spec("llama-3.1-8b-instruct"), o).ok());
}

TEST(KvCache, Fp8DsMlaIsDeepSeeksSparseLayout) {
  // MLAAttentionSpec.real_page_size_bytes (0.22): 656 B a token and layer for fp8_ds_mla;
  // DeepSeek-V3's 61 MLA layers: 61 x 656 B (the plan refuses it for a dense model: plan.cc).
  KvCacheOptions o = Opts(4096);
  o.kv_cache_dtype = "fp8_ds_mla";
  EXPECT_EQ(PlanKvCache(Spec("deepseek-v3"), o)->kv_bytes_per_token, 61u * 656);
}

TEST(KvCache, MambaCacheDtypesSizeTheLinearAttentionState) {
  // Qwen3-Next (bf16, no mamba_ssm_dtype in its config): conv 49,152 B + recurrent 1,048,576 B a
  // layer. --mamba-ssm-cache-dtype float32 doubles the recurrent state (2,146,304 B: block
  // 16 x cdiv(2,146,304, 16 x 2,048) = 1,056); --mamba-cache-dtype float32 doubles the conv
  // state and, the recurrent one being "auto", that too (2,195,456 B: block 1,072).
  const ModelSpec next = Spec("qwen3-next-80b-a3b-instruct");
  KvCacheOptions o = Opts(32768);
  o.mamba_ssm_cache_dtype = "float32";
  auto ssm = PlanKvCache(next, o);
  ASSERT_TRUE(ssm.ok());
  EXPECT_EQ(ssm->state_bytes_per_sequence, 36u * (49152 + 2 * 1048576));
  EXPECT_EQ(ssm->block_size, 1056);
  o.mamba_ssm_cache_dtype = "auto";
  o.mamba_cache_dtype = "float32";
  auto both = PlanKvCache(next, o);
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->state_bytes_per_sequence, 36u * (2 * 49152 + 2 * 1048576));
  EXPECT_EQ(both->block_size, 1072);
  // Qwen3.5 names a float32 recurrent state in its config: "auto" keeps it, bfloat16 halves it.
  const ModelSpec q35 = Spec("qwen3.5-27b");
  KvCacheOptions d = Opts(32768);
  auto cfg = PlanKvCache(q35, d);
  d.mamba_ssm_cache_dtype = "bfloat16";
  auto half = PlanKvCache(q35, d);
  ASSERT_TRUE(cfg.ok() && half.ok());
  EXPECT_GT(cfg->state_bytes_per_sequence, half->state_bytes_per_sequence);
}

// Granite 4.0 hybrid's Mamba2 layers page like Qwen3.5's linear attention: a state of
// 50,688 B of conv ((8192 + 2 x 128) x 3 x 2 B) and 2,097,152 B of SSM (128 x 64 x 128 x 2 B)
// against 4,096 B of K/V per token in the attention layers, so vLLM raises the attention block
// to 16 x cdiv(2,147,840, 16 x 4,096) = 528 tokens and pads the state by 0.69%.
TEST(KvCache, GraniteHybridMamba2StatePagesWithTheAttention) {
  std::string types;
  for (int i = 0; i < 40; ++i) {
    types += std::string(types.empty() ? "" : ",") +
             (i % 10 == 5 ? "\"attention\"" : "\"mamba\"");
  }
  auto spec = ModelSpecFromConfigJson(
      R"({"architectures":["GraniteMoeHybridForCausalLM"],"model_type":"granitemoehybrid",
      "hidden_size":4096,"intermediate_size":1536,"shared_intermediate_size":1536,
      "num_local_experts":72,"num_experts_per_tok":10,"num_hidden_layers":40,
      "num_attention_heads":32,"num_key_value_heads":8,"vocab_size":100352,
      "mamba_n_heads":128,"mamba_d_head":64,"mamba_d_state":128,"mamba_n_groups":1,
      "mamba_d_conv":4,"mamba_expand":2,"torch_dtype":"bfloat16","layer_types":[)" +
          types + "]}",
      "granite.json");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  auto layout = PlanKvCache(*spec, Opts(32768));
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->state_bytes_per_sequence, 36u * (50688 + 2097152));
  EXPECT_EQ(layout->block_size, 528);
}

TEST(KvCache, MlaLatentIsNotShardedAndHasNoFactorTwo) {
  // DeepSeek-V3: (512 + 64) x 2 B = 1,152 B per layer per token, 61 layers = 70,272 B, at any TP.
  const ModelSpec s = Spec("deepseek-v3");
  auto tp1 = PlanKvCache(s, Opts(32768, 1));
  auto tp8 = PlanKvCache(s, Opts(32768, 8));
  ASSERT_TRUE(tp1.ok() && tp8.ok());
  EXPECT_EQ(tp1->kv_bytes_per_token, 70272u);
  EXPECT_EQ(tp8->kv_bytes_per_token, 70272u);
  EXPECT_EQ(tp1->block_size, 64);  // FlashMLA
  EXPECT_EQ(tp1->page_bytes, 64u * 1152);
}

TEST(KvCache, Qwen3NextHybridAlignment) {
  // attention page per token = 2 KV heads x 2 x 256 x 2 B = 2,048 B; GDN state = 49,152 +
  // 1,048,576 = 1,097,728 B; block = 16 x cdiv(1,097,728, 16 x 2,048) = 544 tokens.
  const ModelSpec s = Spec("qwen3-next-80b-a3b-instruct");
  auto layout = PlanKvCache(s, Opts(32768));
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->state_bytes_per_sequence, 36u * 1097728);
  EXPECT_EQ(layout->block_size, 544);
  EXPECT_EQ(layout->page_bytes, 1114112u);
  EXPECT_EQ(layout->groups.size(), 4u);  // 1 attention group + 3 GDN groups of 12 layers
  EXPECT_EQ(layout->group_size, 12);
  ASSERT_EQ(layout->notes.size(), 2u);
  EXPECT_EQ(layout->notes[0],
            "Setting attention block size to 544 tokens to ensure that attention page size "
            "is >= mamba page size.");
  EXPECT_EQ(layout->notes[1],
            "Padding mamba page size by 1.49% to ensure that mamba page size and attention "
            "page size are exactly equal.");
  const auto cap = KvCapacity(*layout, 20ull << 30, Opts(32768));
  EXPECT_EQ(cap.blocks_per_request, 61u + 3u);  // cdiv(32768, 544) + one page per GDN group
  EXPECT_EQ(cap.num_blocks, (20ull << 30) / 1114112 / 12);
  // TP 4: 1 KV head and a quarter of the state: block 16 x cdiv(274,432, 16 x 1,024) = 272.
  EXPECT_EQ(PlanKvCache(s, Opts(32768, 4))->block_size, 272);
}

TEST(KvCache, Qwen35Fp32RecurrentState) {
  // Qwen3.5 keeps the recurrent state in float32 (mamba_ssm_dtype): 49,152 + 2,097,152 B.
  auto layout = PlanKvCache(Spec("qwen3.5-35b-a3b"), Opts(4096));
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->state_bytes_per_sequence, 30u * (49152 + 2097152));
  EXPECT_EQ(layout->kv_bytes_per_token, 10u * 2 * 2 * 256 * 2);
}

TEST(KvCache, SlidingWindowUsesWindowPlusBatchedTokens) {
  // gpt-oss-20b: 12 full + 12 sliding (window 128) layers, same page: two groups of 12.
  auto layout = PlanKvCache(Spec("gpt-oss-20b"), Opts(131072));
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->groups.size(), 2u);
  EXPECT_EQ(layout->group_size, 12);
  const uint64_t page = 16u * 8 * 2 * 64 * 2;
  uint64_t sliding_usage = 0, full_usage = 0;
  for (const auto& l : layout->layers) {
    (l.kind == KvLayerKind::kSliding ? sliding_usage : full_usage) = l.max_usage_bytes;
  }
  EXPECT_EQ(sliding_usage, ((127u + 8192 + 15) / 16 + 1) * page);  // (cdiv(W-1+8192, 16) + 1) pages
  EXPECT_EQ(full_usage, 131072u / 16 * page);
  KvCacheOptions no_hybrid = Opts(131072);
  no_hybrid.disable_hybrid_kv_cache_manager = true;
  EXPECT_EQ(PlanKvCache(Spec("gpt-oss-20b"), no_hybrid)->groups.size(), 1u);
}

TEST(KvCache, UnevenBucketsArePadded) {
  // Gemma-3-27B: 10 global + 52 sliding layers: groups of 10, the sliding bucket split into 6
  // groups with 8 padding layers; vLLM rates the waste as 8 / 52 of that bucket.
  auto layout = PlanKvCache(Spec("gemma-3-27b-it"), Opts(8192));
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->group_size, 10);
  EXPECT_EQ(layout->groups.size(), 7u);
  ASSERT_FALSE(layout->notes.empty());
  EXPECT_EQ(layout->notes.back(), "Add 8 padding layers, may waste at most 15.38% KV cache memory");
}

// Gemma 4 31B: sliding pages of 16 KV heads x 256 (262,144 B a 16-token block) and global ones
// of 4 KV heads x 512 (131,072 B) are unified by doubling the global block to 32 tokens; the 50
// sliding layers split into 5 groups of 10 beside the 10 global ones.
TEST(KvCache, Gemma4UnifiesSlidingAndGlobalPages) {
  auto layout = PlanKvCache(Spec("gemma-4-31b-it"), Opts(32768));
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->layers.size(), 60u);
  EXPECT_EQ(layout->page_bytes, 262144u);
  EXPECT_EQ(layout->group_size, 10);
  EXPECT_EQ(layout->groups.size(), 6u);
  for (const auto& l : layout->layers) {
    EXPECT_EQ(l.block_size, l.kind == KvLayerKind::kSliding ? 16 : 32) << l.layer;
  }
  // K and V both cached on the K = V layers: 10 x 2 x 4 x 512 x 2 B a token.
  EXPECT_EQ(layout->kv_bytes_per_token, 10u * 2 * 4 * 512 * 2 + 50u * 2 * 16 * 256 * 2);
}

// Gemma 4 E2B: the 20 KV-shared layers get no KV cache spec (gpu_model_runner.py skips a layer
// with kv_sharing_target_layer_name); 12 sliding and 3 global layers remain.
TEST(KvCache, Gemma4SharedLayersHoldNoCache) {
  auto layout = PlanKvCache(Spec("gemma-4-e2b-it"), Opts(32768));
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  ASSERT_EQ(layout->layers.size(), 15u);
  EXPECT_EQ(layout->layers.back().layer, 14);
  EXPECT_EQ(layout->group_size, 3);
  EXPECT_EQ(layout->groups.size(), 5u);
  EXPECT_EQ(layout->page_bytes, 32768u);  // a global layer's 16 tokens x 2 x 512 x 2 B
}

TEST(KvCache, PrintedTokensByRelease) {
  const ModelSpec s = Spec("qwen3-next-80b-a3b-instruct");
  KvCacheOptions old = Opts(32768);
  old.rules = vllm::RulesFor(1100);
  auto layout = PlanKvCache(s, old);
  const auto a = KvCapacity(*layout, 20ull << 30, old);
  EXPECT_EQ(a.kv_cache_tokens, a.num_blocks / 4 * 544);  // divided by all 4 groups before 0.20.1
  KvCacheOptions now = Opts(32768);
  now.rules = vllm::RulesFor(2300);
  const auto b = KvCapacity(*layout, 20ull << 30, now);
  EXPECT_EQ(b.kv_cache_tokens, static_cast<uint64_t>(b.max_concurrency * 32768));
  // PR #41069 (2026-04-28) is in v0.20.1 (its log prints the size and the concurrency on
  // adjacent lines, kv_cache_utils.py:1708-1709), not in v0.20.0.
  KvCacheOptions v2000 = Opts(32768), v2001 = Opts(32768);
  v2000.rules = vllm::RulesFor(2000);
  v2001.rules = vllm::RulesFor(2001);
  EXPECT_EQ(KvCapacity(*layout, 20ull << 30, v2000).kv_cache_tokens, a.kv_cache_tokens);
  EXPECT_EQ(KvCapacity(*layout, 20ull << 30, v2001).kv_cache_tokens, b.kv_cache_tokens);
}

// Prefix caching on a hybrid model ("align" mode) keeps two state pages per request in each
// linear-attention group. Qwen3.8-27B on one RTX PRO 6000 at vLLM 0.29.0 (prefix caching on by
// default) printed 314,187 tokens and 38.35x for 8,192-token requests from 31.24 GiB: 652 blocks
// of 3,211,264 B x 16 layers, a request 11 attention blocks + 3 groups x 2 state pages = 17.
TEST(KvCache, MambaAlignModeHoldsTwoStatePagesPerRequest) {
  const ModelSpec s = Spec("qwen3.8-27b");
  KvCacheOptions none = Opts(8192);
  none.rules = vllm::RulesFor(2900);
  auto layout = PlanKvCache(s, none);
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->block_size, 784);
  const uint64_t memory = static_cast<uint64_t>(31.24 * 1073741824.0);
  const auto one = KvCapacity(*layout, memory, none);
  EXPECT_EQ(one.num_blocks, 652u);
  EXPECT_EQ(one.kv_cache_tokens, 381513u);  // 652 / 14
  KvCacheOptions align = none;
  align.mamba_pages_per_request = 2;
  auto aligned = PlanKvCache(s, align);
  ASSERT_TRUE(aligned.ok());
  const auto two = KvCapacity(*aligned, memory, align);
  EXPECT_EQ(two.num_blocks, 652u);  // the pool is the same; a request takes more of it
  EXPECT_NEAR(two.max_concurrency, 38.35, 0.005);
  EXPECT_EQ(two.kv_cache_tokens, 314187u);
}

TEST(KvCache, PipelineStagesCacheTheirOwnLayers) {
  // DeepSeek-V2-Lite at PP 2: the first stage holds ceil(27 / 2) = 14 MLA layers of 1,152 B.
  KvCacheOptions o = Opts(1024);
  o.pipeline_parallel_size = 2;
  auto layout = PlanKvCache(Spec("deepseek-v2-lite"), o);
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->layers.size(), 14u);
  EXPECT_EQ(layout->kv_bytes_per_token, 14u * 1152);
}

TEST(KvCache, BadOptions) {
  const ModelSpec s = Spec("qwen3-8b");
  EXPECT_EQ(PlanKvCache(s, Opts(0)).status().message(), "--max-model-len must be positive, got 0");
  EXPECT_FALSE(PlanKvCache(s, Opts(4096, 0)).ok());
  EXPECT_EQ(PlanKvCache(Spec("qwen3-next-80b-a3b-instruct"), Opts(4096, 32)).status().code(),
            Code::kInvalidArgument);
}

}  // namespace
}  // namespace vramfit
