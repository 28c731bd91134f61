// The engine-neutral KV calculator: K/V, sliding windows, MLA latents and linear-attention
// state summed over layers, checked against figures derived by hand; hostile dimensions are
// refused naming the flag, never wrapped.
#include <gtest/gtest.h>

#include "vramfit/catalog.h"
#include "vramfit/kv.h"
#include "vramfit/model.h"

namespace vramfit {
namespace {

KvEstimate Kv(const KvDimensions& d, int64_t context, int64_t batch = 1,
              const std::string& dtype = "auto") {
  auto spec = KvSpecFromDimensions(d);
  EXPECT_TRUE(spec.ok()) << spec.status().message();
  KvQuery q;
  q.context = context;
  q.batch = batch;
  q.kv_cache_dtype = dtype;
  auto kv = EstimateKv(*spec, q);
  EXPECT_TRUE(kv.ok()) << kv.status().message();
  return kv.ok() ? *kv : KvEstimate{};
}

TEST(KvEstimate, FullAttentionIsLayersTimesKAndVTimesTokens) {
  // 32 layers x 2 (K, V) x 8 heads x 128 dims x 2 bytes = 131,072 bytes per token; 131,072
  // tokens of it are 16 GiB, four sequences 64 GiB.
  const KvEstimate e = Kv({.layers = 32, .kv_heads = 8, .head_dim = 128}, 131072, 4);
  EXPECT_EQ(e.bytes_per_token, 131072u);
  EXPECT_EQ(e.bytes_per_sequence, 16ull << 30);
  EXPECT_EQ(e.total_bytes, 64ull << 30);
  EXPECT_EQ(e.full_layers, 32);
  EXPECT_EQ(Kv({.layers = 32, .kv_heads = 8, .head_dim = 128}, 131072, 1, "fp8")
                .bytes_per_sequence,
            8ull << 30);
}

TEST(KvEstimate, SlidingWindowsHoldAtMostTheWindow) {
  // 2 layers x 2 x 1 head x 4 dims x 2 bytes = 32 bytes a token; a 10-token window of a
  // 100-token context holds 10 tokens: 320 bytes.
  const KvEstimate e = Kv({.layers = 2, .kv_heads = 1, .head_dim = 4, .window = 10}, 100);
  EXPECT_EQ(e.bytes_per_token, 0u);
  EXPECT_EQ(e.sliding_bytes_per_sequence, 320u);
  EXPECT_EQ(e.bytes_per_sequence, 320u);
  EXPECT_EQ(Kv({.layers = 2, .kv_heads = 1, .head_dim = 4, .window = 10}, 5)
                .sliding_bytes_per_sequence,
            160u);
}

TEST(KvEstimate, MlaIsOneLatentPerToken) {
  // DeepSeek-V3: 61 layers x (512 + 64) x 2 bytes = 70,272 bytes per token.
  EXPECT_EQ(Kv({.layers = 61, .mla_rank = 512, .rope_dim = 64}, 1).bytes_per_token, 70272u);
}

TEST(KvEstimate, HostileDimensionsAreRefusedNamingTheFlag) {
  EXPECT_EQ(KvSpecFromDimensions({.layers = 0}).status().message(),
            "--layers 0: expected 1 to 100000");
  EXPECT_EQ(KvSpecFromDimensions({.layers = 1, .kv_heads = -1, .head_dim = 1}).status().message(),
            "--kv-heads -1: expected 1 to 100000");
  auto spec = KvSpecFromDimensions({.layers = 100000, .kv_heads = 100000, .head_dim = 1000000});
  ASSERT_TRUE(spec.ok());
  KvQuery q;
  q.context = int64_t{1} << 31;
  q.batch = 1000000;
  q.kv_cache_dtype = "float32";
  EXPECT_EQ(EstimateKv(*spec, q).status().message(),
            "the KV cache of these dimensions passes 2^64 bytes");
  q.kv_cache_dtype = "int3";
  EXPECT_NE(EstimateKv(*spec, q).status().message().find("--kv-cache-dtype \"int3\""),
            std::string::npos);
  q.kv_cache_dtype = "auto";
  q.context = 0;
  EXPECT_EQ(EstimateKv(*spec, q).status().message(), "--context 0: expected 1 to 2147483648");
}

// Gemma 4 E4B: only the 24 layers before the KV-shared tail cache, 20 sliding (2 x 256, window
// 512) and 4 global (2 x 512): 4 x 2 x 2 x 512 x 2 B = 16 KiB a token, 20 x 512 x 2 KiB = 20 MiB
// of windows a sequence.
TEST(KvEstimate, Gemma4SharedLayersHoldNoCache) {
  auto m = FindCatalogModel("gemma-4-e4b-it");
  ASSERT_TRUE(m.ok());
  auto spec = ModelSpecFromConfigJson(m->config_json, "e4b");
  ASSERT_TRUE(spec.ok());
  KvQuery q;
  q.context = 131072;
  auto e = EstimateKv(*spec, q);
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(e->shared_layers, 18);
  EXPECT_EQ(e->full_layers, 4);
  EXPECT_EQ(e->sliding_layers, 20);
  EXPECT_EQ(e->bytes_per_token, 16384u);
  EXPECT_EQ(e->sliding_bytes_per_sequence, 20u * 512 * 2 * 2 * 256 * 2);
}

}  // namespace
}  // namespace vramfit
