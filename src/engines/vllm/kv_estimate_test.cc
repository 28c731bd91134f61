// `vramfit kv --engine vllm`: a sequence holds whole 16-token blocks, so a context that is not
// a multiple of the block costs the rest of its last block in every layer.
#include "engines/vllm/kv_estimate.h"

#include <gtest/gtest.h>

namespace vramfit::vllm {
namespace {

TEST(VllmKvEstimate, SequencesHoldWholeBlocks) {
  auto spec = KvSpecFromDimensions({.layers = 36, .kv_heads = 8, .head_dim = 128});
  ASSERT_TRUE(spec.ok());
  KvQuery q;
  q.context = 1000;
  q.batch = 2;
  auto kv = EstimateKvPaged(*spec, q);
  ASSERT_TRUE(kv.ok()) << kv.status().message();
  // 36 x 2 x 8 x 128 x 2 = 147,456 bytes a token; ceil(1000 / 16) = 63 blocks of 16 tokens:
  // 63 x 16 x 147,456 = 148,635,648 bytes (the neutral figure is 147,456,000).
  EXPECT_EQ(kv->block_size, 16);
  EXPECT_EQ(kv->blocks_per_sequence, 63u);
  EXPECT_EQ(kv->bytes_per_sequence, 148635648u);
  EXPECT_EQ(kv->total_bytes, 2u * 148635648u);
  q.version = "0.1";
  EXPECT_FALSE(EstimateKvPaged(*spec, q).ok());
}

// A cache type only vLLM has: the per-token bytes come from its layout (TurboQuant 4bit_nc over
// 32 layers of 8 KV heads of 128, the first and last two kept in bf16: 28 x 8 x 134 + 4 x 8 x
// 512 = 46,400 B), and a type no engine knows is still an error.
TEST(VllmKvEstimate, VllmOnlyCacheTypesFromItsLayout) {
  auto spec = KvSpecFromDimensions({.layers = 32, .kv_heads = 8, .head_dim = 128});
  ASSERT_TRUE(spec.ok());
  KvQuery q;
  q.context = 1024;
  q.kv_cache_dtype = "turboquant_4bit_nc";
  auto kv = EstimateKvPaged(*spec, q);
  ASSERT_TRUE(kv.ok()) << kv.status().message();
  EXPECT_EQ(kv->bytes_per_token, 46400u);
  EXPECT_EQ(kv->elem_bytes, 0u);
  EXPECT_EQ(kv->bytes_per_sequence, 64u * 16 * 46400);
  q.kv_cache_dtype = "bogus";
  EXPECT_FALSE(EstimateKvPaged(*spec, q).ok());
}

}  // namespace
}  // namespace vramfit::vllm
