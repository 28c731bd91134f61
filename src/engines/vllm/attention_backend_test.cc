// --attention-backend as vLLM 0.22 reads it: the names, each backend's checks against the model
// and the card (vLLM's reasons, in its order), the block size a backend sets, and the plan's
// start-up refusal with the advice that gets past it.
#include "engines/vllm/attention_backend.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "engines/vllm/engine.h"
#include "testutil/catalog.h"
#include "testutil/vllm_advice.h"
#include "vramfit/advice.h"

namespace vramfit {
namespace {

using testutil::Catalog;
using testutil::Gpu;
using vllm::AttentionBackendReasons;
using vllm::BackendQuery;
using Reasons = std::vector<std::string>;

TEST(AttentionBackend, NamesAreReadCaseInsensitivelyAndAutoIsNone) {
  EXPECT_EQ(*vllm::ReadAttentionBackend("flashinfer"), "FLASHINFER");
  EXPECT_EQ(*vllm::ReadAttentionBackend("Triton_MLA"), "TRITON_MLA");
  EXPECT_EQ(*vllm::ReadAttentionBackend("auto"), "");
  EXPECT_EQ(*vllm::ReadAttentionBackend("AUTO"), "");
  const auto bad = vllm::ReadAttentionBackend("flash_atn");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind(
                "--attention-backend: Unknown attention backend: 'flash_atn'. Valid options are: "
                "FLASH_ATTN, FLASH_ATTN_DIFFKV, TRITON_ATTN,",
                0),
            0u);
  // Removed from vLLM before 0.22 (TREE_ATTN 2026-05-08, XFORMERS 2025-11-23).
  EXPECT_FALSE(vllm::ReadAttentionBackend("XFORMERS").ok());
  EXPECT_FALSE(vllm::ReadAttentionBackend("TREE_ATTN").ok());
}

BackendQuery Dense(int cc, int64_t head = 128) {
  BackendQuery q;
  q.head_size = head;
  q.compute_capability = cc;
  return q;
}

BackendQuery Mla(int cc) {
  BackendQuery q;
  q.mla = true;
  q.head_size = 576;  // kv_lora_rank 512 + qk_rope_head_dim 64
  q.qk_nope_head_dim = 128;
  q.compute_capability = cc;
  return q;
}

TEST(AttentionBackend, ReasonsFollowEachBackendsChecks) {
  // FlashMLA: Hopper and Blackwell by capability, dense mode Hopper only.
  EXPECT_EQ(AttentionBackendReasons("FLASHMLA", Mla(80)),
            (Reasons{"compute capability not supported",
                     "FlashMLA Dense is only supported on Hopper devices."}));
  EXPECT_TRUE(AttentionBackendReasons("FLASHMLA", Mla(90)).empty());
  EXPECT_EQ(AttentionBackendReasons("FLASHMLA", Mla(100)),
            (Reasons{"FlashMLA Dense is only supported on Hopper devices."}));
  // FlashAttention from 8.0; its FP8 cache only with FA3 on Hopper.
  EXPECT_EQ(AttentionBackendReasons("FLASH_ATTN", Dense(75)),
            (Reasons{"compute capability not supported"}));
  BackendQuery fp8 = Dense(89);
  fp8.kv_cache_dtype = "fp8";
  EXPECT_EQ(AttentionBackendReasons("FLASH_ATTN", fp8), (Reasons{"kv_cache_dtype not supported"}));
  fp8.compute_capability = 90;
  EXPECT_TRUE(AttentionBackendReasons("FLASH_ATTN", fp8).empty());
  fp8.compute_capability = 89;
  EXPECT_TRUE(AttentionBackendReasons("FLASHINFER", fp8).empty());
  // Head sizes: FlashInfer 64/128/256; FlashAttention up to 256 with FA2, 512 with FA4.
  EXPECT_EQ(AttentionBackendReasons("FLASHINFER", Dense(89, 80)),
            (Reasons{"head_size not supported"}));
  EXPECT_EQ(AttentionBackendReasons("FLASH_ATTN", Dense(80, 512)),
            (Reasons{"head_size not supported"}));
  EXPECT_TRUE(AttentionBackendReasons("FLASH_ATTN", Dense(90, 512)).empty());
  EXPECT_TRUE(AttentionBackendReasons("TRITON_ATTN", Dense(80, 512)).empty());
  // FlashInfer runs from Turing to 12.1; not on Volta.
  EXPECT_EQ(AttentionBackendReasons("FLASHINFER", Dense(70)),
            (Reasons{"compute capability not supported"}));
  // MLA backends on a dense model and the reverse.
  EXPECT_EQ(AttentionBackendReasons("TRITON_MLA", Dense(90)),
            (Reasons{"non-MLA not supported"}));
  EXPECT_EQ(AttentionBackendReasons("FLASHINFER", Mla(90)),
            (Reasons{"head_size not supported", "MLA not supported"}));
  // Sinks (gpt-oss): FlashAttention 3 and 4 only.
  BackendQuery sinks = Dense(80, 64);
  sinks.sinks = true;
  EXPECT_EQ(AttentionBackendReasons("FLASH_ATTN", sinks),
            (Reasons{"attention sinks not supported",
                     "sink not supported on compute capability < 9.0"}));
  EXPECT_TRUE(AttentionBackendReasons("TRITON_ATTN", sinks).empty());
  // float32 runs on Triton and Flex only; a --block-size the backend's kernels cannot take.
  BackendQuery f32 = Dense(89);
  f32.dtype = Dtype::kF32;
  EXPECT_EQ(AttentionBackendReasons("FLASHINFER", f32), (Reasons{"dtype not supported"}));
  EXPECT_TRUE(AttentionBackendReasons("FLEX_ATTENTION", f32).empty());
  BackendQuery block = Mla(90);
  block.block_size = 16;
  EXPECT_EQ(AttentionBackendReasons("FLASHMLA", block), (Reasons{"block_size not supported"}));
  block.block_size = 128;  // a multiple of 64
  EXPECT_TRUE(AttentionBackendReasons("FLASHMLA", block).empty());
  // The sparse MLA backends serve indexer models only.
  const Reasons sparse = AttentionBackendReasons("FLASHMLA_SPARSE", Mla(90));
  EXPECT_NE(std::find(sparse.begin(), sparse.end(), "non-sparse not supported"), sparse.end());
}

// Each layer is checked with its own head size: sliding layers of 256 and global ones of 512
// (Gemma 4's shape) are refused by FlashAttention 2 for the global ones.
TEST(AttentionBackend, EveryLayersHeadSizeIsChecked) {
  ModelSpec spec;
  spec.hidden_size = 4096;
  LayerSpec sliding, global;
  sliding.attention.kind = AttentionKind::kSliding;
  sliding.attention.head_dim = 256;
  sliding.attention.num_heads = 16;
  global.attention.kind = AttentionKind::kFull;
  global.attention.head_dim = 512;
  global.attention.num_heads = 16;
  spec.layers = {sliding, sliding, global};
  VllmSettings s;
  s.attention_backend = "FLASH_ATTN";
  const auto a100 = vllm::AttentionBackendRefusal(spec, Gpu("a100-80gb"), s, Dtype::kBF16);
  ASSERT_TRUE(a100.has_value());
  EXPECT_NE(a100->message.find("'head_size not supported'"), std::string::npos);
  EXPECT_FALSE(vllm::AttentionBackendRefusal(spec, Gpu("h100"), s, Dtype::kBF16).has_value());
  s.attention_backend = "TRITON_ATTN";
  EXPECT_FALSE(vllm::AttentionBackendRefusal(spec, Gpu("a100-80gb"), s, Dtype::kBF16));
}

TEST(AttentionBackend, BlockSizeIsSixteenOrTheBackendsSmallest) {
  EXPECT_EQ(vllm::BackendBlockSize("FLASH_ATTN"), 16);
  EXPECT_EQ(vllm::BackendBlockSize("TRITON_MLA"), 16);
  EXPECT_EQ(vllm::BackendBlockSize("FLASHINFER_MLA"), 32);
  EXPECT_EQ(vllm::BackendBlockSize("FLASHMLA"), 64);
  EXPECT_EQ(vllm::BackendBlockSize("CUTLASS_MLA"), 128);
}

TEST(AttentionBackend, PlanRefusesAtStartupAndAdvisesVllmsChoice) {
  const Inventory inv = Catalog("deepseek-v2-lite");
  VllmSettings s;
  s.max_model_len = 16384;
  s.attention_backend = "FLASHMLA";
  auto a100 = PlanVllm(inv, Gpu("a100-80gb"), s);
  ASSERT_TRUE(a100.ok()) << a100.status().ToString();
  EXPECT_FALSE(a100->fits);
  EXPECT_EQ(a100->failure_stage, Stage::kStartup);
  EXPECT_EQ(a100->failure_message,
            "Selected backend AttentionBackendEnum.FLASHMLA is not valid for this configuration. "
            "Reason: ['compute capability not supported', 'FlashMLA Dense is only supported on "
            "Hopper devices.']");
  const auto advice = testutil::AdviseVllm(inv, Gpu("a100-80gb"), s, *a100);
  ASSERT_FALSE(advice.empty());
  EXPECT_EQ(advice[0].change, "without --attention-backend");
  EXPECT_TRUE(advice[0].plan.fits);
  // On Hopper it runs, with FlashMLA's 64-token blocks; Triton MLA takes vLLM's 16.
  auto h100 = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(h100.ok());
  EXPECT_TRUE(h100->fits) << h100->failure_message;
  EXPECT_EQ(h100->kv_block_size, 64);
  s.attention_backend = "TRITON_MLA";
  EXPECT_EQ(PlanVllm(inv, Gpu("h100"), s)->kv_block_size, 16);
  // Before 0.13 the flag does not exist.
  s.version = "0.11";
  auto old = PlanVllm(inv, Gpu("h100"), s);
  EXPECT_EQ(old->failure_stage, Stage::kStartup);
  EXPECT_NE(old->failure_message.find("unrecognized arguments: --attention-backend"),
            std::string::npos);
}

TEST(AttentionBackend, SinksOfGptOssNeedHopperForFlashAttention) {
  const Inventory inv = Catalog("gpt-oss-20b");
  VllmSettings s;
  s.max_model_len = 8192;
  s.attention_backend = "FLASH_ATTN";
  auto a100 = PlanVllm(inv, Gpu("a100-80gb"), s);
  ASSERT_TRUE(a100.ok());
  EXPECT_EQ(a100->failure_stage, Stage::kStartup);
  EXPECT_NE(a100->failure_message.find("'attention sinks not supported'"), std::string::npos);
  EXPECT_TRUE(PlanVllm(inv, Gpu("h100"), s)->fits);
  s.attention_backend = "TRITON_ATTN";
  EXPECT_TRUE(PlanVllm(inv, Gpu("a100-80gb"), s)->fits);
}

}  // namespace
}  // namespace vramfit
