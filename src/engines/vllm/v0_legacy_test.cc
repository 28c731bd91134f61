// Releases before 0.8: the V0 worker's eras of memory accounting and DeepSeek's pre-MLA cache.
#include "engines/vllm/v0_legacy.h"

#include <gtest/gtest.h>

#include "core/units.h"
#include "engines/vllm/rules.h"
#include "engines/vllm/vllm.h"
#include "testutil/catalog.h"

namespace vramfit::vllm {
namespace {

using core::kMiB;
using testutil::Catalog;
using testutil::Gpu;

TEST(VllmV0Legacy, ErasByRelease) {
  EXPECT_EQ(RulesFor(204).v0_profiling, V0Profiling::kTorchPeak);
  EXPECT_EQ(RulesFor(205).v0_profiling, V0Profiling::kDeviceUsed);
  EXPECT_EQ(RulesFor(300).v0_profiling, V0Profiling::kDeviceUsed);
  EXPECT_EQ(RulesFor(301).v0_profiling, V0Profiling::kSinceInit);
  EXPECT_EQ(RulesFor(603).v0_profiling, V0Profiling::kSinceInit);
  EXPECT_EQ(RulesFor(604).v0_profiling, V0Profiling::kTorchPeakPlusNonTorch);
  EXPECT_EQ(RulesFor(605).v0_profiling, V0Profiling::kSnapshot);
  EXPECT_EQ(RulesFor(1000).v0_profiling, V0Profiling::kSnapshot);
  // Releases before 0.8 keep their own number (V0 only); 0.8 and 0.9 take 0.10's rules.
  EXPECT_EQ(RulesFor(503).text, "0.5");
  EXPECT_TRUE(RulesFor(799).v0_only);
  EXPECT_FALSE(RulesFor(800).v0_only);
  EXPECT_EQ(RulesFor(900).release, kOldestModelled);
  EXPECT_EQ(RulesFor(100).release, kOldestV0Modelled);
  EXPECT_FALSE(RulesFor(700).mla_latent_cache);
  EXPECT_TRUE(RulesFor(701).mla_latent_cache);
  EXPECT_FALSE(RulesFor(503).v0_long_context_chunked_prefill);
  EXPECT_TRUE(RulesFor(504).v0_long_context_chunked_prefill);
  EXPECT_EQ(RulesFor(604).v0_chunked_prefill_tokens, 512);
  EXPECT_EQ(RulesFor(703).v0_chunked_prefill_tokens, 2048);
  EXPECT_EQ(RulesFor(1000).v0_chunked_prefill_tokens, 2048);
  EXPECT_EQ(RulesFor(501).fused_moe_chunk_tokens, 65536u);
  EXPECT_EQ(RulesFor(600).fused_moe_chunk_tokens, 32768u);
}

TEST(VllmV0Legacy, ChargesPerEra) {
  const LegacyDeviceMemory m{512 * kMiB, 384 * kMiB, 256 * kMiB, 1024 * kMiB};
  EXPECT_EQ(LegacyV0NonTorch(RulesFor(204), m)->bytes, 0u);
  EXPECT_EQ(LegacyV0NonTorch(RulesFor(300), m)->bytes, (512 + 384 + 256 + 1024) * kMiB);
  EXPECT_EQ(LegacyV0NonTorch(RulesFor(500), m)->bytes, (384 + 256) * kMiB);
  EXPECT_EQ(LegacyV0NonTorch(RulesFor(604), m)->bytes, (512 + 384 + 256 + 1024) * kMiB);
  EXPECT_FALSE(LegacyV0NonTorch(RulesFor(605), m).has_value());
  EXPECT_FALSE(LegacyNcclInBudget(RulesFor(204)));
  EXPECT_TRUE(LegacyNcclInBudget(RulesFor(500)));
  EXPECT_FALSE(LegacyNcclInBudget(RulesFor(700)));
}

TEST(VllmV0Legacy, ReleaseSelectsTheWorkersCharge) {
  // Qwen1.5-7B GPTQ on an RTX 3090: vLLM 0.3.0 charges the CUDA context (total - free),
  // 0.3.1 does not (init_gpu_memory), 0.2.4 charges nothing outside PyTorch.
  const Inventory inv = Catalog("qwen1.5-7b-chat-gptq-int4");
  VllmSettings s;
  s.version = "0.3.1";
  auto since_init = PlanVllm(inv, Gpu("rtx-3090"), s);
  ASSERT_TRUE(since_init.ok()) << since_init.status().message();
  s.version = "0.3.0";
  auto device_used = PlanVllm(inv, Gpu("rtx-3090"), s);
  s.version = "0.2.4";
  auto torch_peak = PlanVllm(inv, Gpu("rtx-3090"), s);
  ASSERT_TRUE(device_used.ok() && torch_peak.ok());
  EXPECT_EQ(torch_peak->gpus[0].non_torch_bytes, 0u);
  EXPECT_GT(device_used->gpus[0].non_torch_bytes, since_init->gpus[0].non_torch_bytes);
  EXPECT_LT(device_used->kv_cache_tokens, since_init->kv_cache_tokens);
  EXPECT_LT(since_init->kv_cache_tokens, torch_peak->kv_cache_tokens);
  EXPECT_EQ(device_used->modelled_version, "0.3");
  // No chunked prefill before v0.5.4: the profile runs the whole 32,768-token context.
  EXPECT_EQ(device_used->resolved.max_num_batched_tokens, 32768);
}

TEST(VllmV0Legacy, DeepSeekBeforeTheLatentCache) {
  // DeepSeek-Coder-V2-Lite (27 layers, 16 heads, qk_head_dim 128 + 64) at TP 2: before v0.7.1
  // each rank caches K and V for its 8 heads, padded to 256 dims before v0.7.0:
  // 27 x 2 x 8 x 256 x 2 B a token; v0.7.0 caches 192.
  const Inventory inv = Catalog("deepseek-coder-v2-lite-instruct");
  VllmSettings s;
  s.tensor_parallel_size = 2;
  s.max_model_len = 8192;
  s.version = "0.5";
  auto old = PlanVllm(inv, Gpu("l40"), s);
  ASSERT_TRUE(old.ok()) << old.status().message();
  EXPECT_EQ(old->kv_layout.kv_bytes_per_token, 27u * 2 * 8 * 256 * 2);
  EXPECT_EQ(old->kv_block_size, 16);
  s.version = "0.7.0";
  auto unpadded = PlanVllm(inv, Gpu("l40"), s);
  ASSERT_TRUE(unpadded.ok());
  EXPECT_EQ(unpadded->kv_layout.kv_bytes_per_token, 27u * 2 * 8 * 192 * 2);
  s.version = "0.7.1";
  auto latent = PlanVllm(inv, Gpu("l40"), s);
  ASSERT_TRUE(latent.ok());
  EXPECT_EQ(latent->kv_layout.kv_bytes_per_token, 27u * (512 + 64) * 2);
}

TEST(VllmV0Legacy, ArchitectureTheReleasePredates) {
  // Qwen2.5-VL came with v0.7.2 (PR #12604): vLLM 0.7.1 refuses it at start-up.
  const Inventory inv = Catalog("qwen2.5-vl-7b-instruct");
  VllmSettings s;
  s.max_model_len = 8192;
  s.version = "0.7.1";
  auto old = PlanVllm(inv, Gpu("rtx-3090"), s);
  ASSERT_TRUE(old.ok()) << old.status().message();
  EXPECT_FALSE(old->fits);
  EXPECT_EQ(old->failure_stage, Stage::kStartup);
  s.version = "0.7.2";
  auto known = PlanVllm(inv, Gpu("rtx-3090"), s);
  ASSERT_TRUE(known.ok());
  EXPECT_NE(known->failure_stage, Stage::kStartup);
}

TEST(VllmV0Legacy, CommandUsesTheReleasesLauncher) {
  // `vllm serve` arrived in v0.5.2 (PR #5090): an older release's command is the OpenAI server's
  // module, which `check` reads back.
  const auto command = [](const char* version) {
    VllmSettings s;
    s.max_model_len = 4096;
    s.version = version;
    auto p = PlanVllm(Catalog("qwen1.5-7b-chat-gptq-int4"), Gpu("rtx-3090"), s);
    return p.ok() ? p->command : p.status().message();
  };
  EXPECT_EQ(command("0.4.3").rfind("python -m vllm.entrypoints.openai.api_server --model ", 0), 0u)
      << command("0.4.3");
  EXPECT_EQ(command("0.5.2").rfind("vllm serve ", 0), 0u) << command("0.5.2");
}

}  // namespace
}  // namespace vramfit::vllm
