// vLLM's LoRA slots: the buffers per wrapped module, worked by hand from the formulas of
// lora.cc (docs/engines/vllm.md, "LoRA slots"), and how a plan charges them.
#include "engines/vllm/lora.h"

#include <gtest/gtest.h>

#include "engines/vllm/command.h"
#include "engines/vllm/engine.h"
#include "engines/vllm/flags.h"
#include "engines/vllm/rules.h"
#include "engines/vllm/vllm.h"
#include "testutil/catalog.h"

namespace vramfit {
namespace {

using testutil::Catalog;
using testutil::Gpu;

vllm::LoraOptions Options(int64_t loras, int64_t rank, int64_t tp, bool fully_sharded = false) {
  vllm::LoraOptions o;
  o.max_loras = loras;
  o.max_lora_rank = rank;
  o.tensor_parallel_size = tp;
  o.fully_sharded = fully_sharded;
  o.dtype_bytes = 2;
  o.batched_tokens = 8192;
  return o;
}

// Qwen3-8B: 36 layers, hidden 4,096, 32 heads and 8 KV heads of 128, intermediate 12,288,
// vocab 151,936. TP 1, rank 64, 4 slots, bf16, at v0.22 (embedding and LM head wrapped, v0.16+):
//   qkv     4 x (3 x 64 x 4,096 + (4,096 + 2 x 1,024) x 64) x 2 =  9,437,184
//   o       4 x (64 x 4,096 + 4,096 x 64) x 2                    =  4,194,304
//   gate_up 2 x 4 x (64 x 4,096 + 12,288 x 64) x 2               = 16,777,216
//   down    4 x (64 x 12,288 + 4,096 x 64) x 2                   =  8,388,608
//   a layer 38,797,312; 36 layers 1,396,703,232
//   embed_tokens + lm_head 2 x 4 x (151,936 + 4,096) x 64 x 2    = 159,776,768
// 1,556,480,000 B in all. The profile's shrink buffer: 3 x 8,192 x 4 x 64 = 6,291,456.
TEST(VllmLora, Qwen3_8bRank64FourSlots) {
  const ModelSpec& spec = Catalog("qwen3-8b").spec;
  const auto slots = vllm::LoraSlotBytes(spec, Options(4, 64, 1), vllm::RulesFor(2200));
  EXPECT_EQ(slots.decoder, 1396703232u);
  EXPECT_EQ(slots.embeddings, 159776768u);
  EXPECT_EQ(slots.total(), 1556480000u);
  EXPECT_EQ(slots.profile_bytes, 6291456u);
  EXPECT_TRUE(slots.not_modelled.empty());
  // Before v0.16 Qwen3 declares no embedding_modules: the decoder's linears only.
  const auto v15 = vllm::LoraSlotBytes(spec, Options(4, 64, 1), vllm::RulesFor(1500));
  EXPECT_EQ(v15.total(), 1396703232u);
}

// --lora-target-modules keeps the slots to the listed suffixes, a packed module counted where
// one of its parts is listed (is_in_target_modules): q_proj and v_proj give qkv_proj's stacks
// (9,437,184 a layer above), gate_proj gives gate_up_proj (16,777,216); lm_head alone is one of
// the two vocabulary wrappers (4 x (151,936 + 4,096) x 64 x 2 = 79,888,384).
TEST(VllmLora, TargetModulesKeepTheSlotsToTheListedModules) {
  const ModelSpec& spec = Catalog("qwen3-8b").spec;
  vllm::LoraOptions o = Options(4, 64, 1);
  o.target_modules = {"q_proj", "v_proj"};
  auto qv = vllm::LoraSlotBytes(spec, o, vllm::RulesFor(2200));
  EXPECT_EQ(qv.decoder, 36u * 9437184u);
  EXPECT_EQ(qv.embeddings, 0u);
  o.target_modules = {"gate_proj", "o_proj", "lm_head"};
  auto mixed = vllm::LoraSlotBytes(spec, o, vllm::RulesFor(2200));
  EXPECT_EQ(mixed.decoder, 36u * (16777216u + 4194304u));
  EXPECT_EQ(mixed.embeddings, 79888384u);
  // Read from the command line (a list, nargs "+") and printed back.
  auto cmd = vllm::ReadServeCommand({"vllm", "serve", "Qwen/Qwen3-8B", "--enable-lora",
                                     "--lora-target-modules", "q_proj", "v_proj",
                                     "--max-model-len", "8192"});
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  EXPECT_TRUE(cmd->unmodelled_flags.empty());
  auto s = vllm::ReadFlags(cmd->flags, ToVllmSettings(cmd->settings));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->lora_target_modules, (std::vector<std::string>{"q_proj", "v_proj"}));
}

// Qwen3-8B, rank 16, one slot, TP 2 (q 16 x 128 = 2,048, kv 4 x 128 = 512, I 6,144):
//   qkv     1 x (3 x 16 x 4,096 + (2,048 + 2 x 512) x 16) x 2 = 491,520
//   o       (16 x 2,048 + 4,096 x 16) x 2                     = 196,608
//   gate_up 2 x (16 x 4,096 + 6,144 x 16) x 2                 = 655,360
//   down    (16 x 6,144 + 4,096 x 16) x 2                     = 327,680
//   a layer 1,671,168; 36 layers 60,162,048
//   embed_tokens + lm_head 2 x 1 x (151,936 + 4,096) x 16 x 2 =   9,986,048 (whole on each rank)
// 70,148,096 B a rank.
TEST(VllmLora, Qwen3_8bRank16OneSlotTp2) {
  const ModelSpec& spec = Catalog("qwen3-8b").spec;
  const auto slots = vllm::LoraSlotBytes(spec, Options(1, 16, 2), vllm::RulesFor(2200));
  EXPECT_EQ(slots.decoder, 60162048u);
  EXPECT_EQ(slots.total(), 70148096u);
  // Fully sharded: lora_a of the column layers at rank 8, lora_b of the row layers at 2,048:
  //   qkv (3 x 8 x 4,096 + 3,072 x 16) x 2 = 294,912; o (16 x 2,048 + 2,048 x 16) x 2 = 131,072
  //   gate_up 2 x (8 x 4,096 + 6,144 x 16) x 2 = 524,288; down (16 x 6,144 + 2,048 x 16) x 2 =
  //   262,144; a layer 1,212,416, 36 layers 43,646,976.
  const auto sharded = vllm::LoraSlotBytes(spec, Options(1, 16, 2, true), vllm::RulesFor(2200));
  EXPECT_EQ(sharded.decoder, 43646976u);
  // Its profile buffers: the shard's shrink (3 x 8,192 x 4 x 8) and the gathered rank (x 16).
  EXPECT_EQ(sharded.profile_bytes, 3u * 8192 * 4 * (8 + 16));
}

// Llama-3.1-8B (32 layers, I 14,336, vocab 128,256), rank 16, one slot, TP 1:
//   qkv (3 x 16 x 4,096 + 6,144 x 16) x 2 = 589,824; o (16 x 4,096 + 4,096 x 16) x 2 = 262,144
//   gate_up 2 x (16 x 4,096 + 14,336 x 16) x 2 = 1,179,648; down (16 x 14,336 + 4,096 x 16) x 2
//   = 589,824; a layer 2,621,440, 32 layers 83,886,080; embed_tokens + lm_head
//   2 x (128,256 + 4,096) x 16 x 2 = 8,470,528: 92,356,608 B.
TEST(VllmLora, Llama31_8bWrapsItsEmbeddingsInEveryRelease) {
  const ModelSpec& spec = Catalog("llama-3.1-8b-instruct").spec;
  const auto v22 = vllm::LoraSlotBytes(spec, Options(1, 16, 1), vllm::RulesFor(2200));
  EXPECT_EQ(v22.decoder, 83886080u);
  EXPECT_EQ(v22.total(), 92356608u);
  // Before v0.12 the embeddings carry the extra vocabulary: named, not counted.
  const auto v11 = vllm::LoraSlotBytes(spec, Options(1, 16, 1), vllm::RulesFor(1100));
  EXPECT_EQ(v11.total(), 83886080u);
  ASSERT_EQ(v11.not_modelled.size(), 1u);
  EXPECT_NE(v11.not_modelled[0].find("extra vocabulary"), std::string::npos);
}

// The routed experts' stacks (FusedMoEWithLoRA, 0.11.1+): Qwen3-30B-A3B, rank 16, one slot:
// 128 experts x (gate_up 2 x (16 x 2048 + 768 x 16) + down (16 x 768 + 2048 x 16)) x 2 B =
// 34,603,008 B a layer, 48 layers. Before 0.11.1 vLLM gave the experts no LoRA: named.
TEST(VllmLora, MoeExpertsFromTheReleaseThatWrapsThem) {
  const ModelSpec& spec = Catalog("qwen3-30b-a3b").spec;
  const auto v22 = vllm::LoraSlotBytes(spec, Options(1, 16, 1), vllm::RulesFor(2200));
  const auto v11 = vllm::LoraSlotBytes(spec, Options(1, 16, 1), vllm::RulesFor(1100));
  EXPECT_GT(v11.decoder, 0u);  // the attention projections
  ASSERT_FALSE(v11.not_modelled.empty());
  EXPECT_NE(v11.not_modelled.back().find("48 MoE layers"), std::string::npos);
  EXPECT_EQ(v22.decoder - v11.decoder, 48u * 34603008u);
  for (const std::string& n : v22.not_modelled) EXPECT_EQ(n.find("MoE layers"), std::string::npos);
  // TP 2 halves the experts' intermediate size, not the hidden size of their lora_a.
  const auto tp2 = vllm::LoraSlotBytes(spec, Options(1, 16, 2), vllm::RulesFor(2200));
  const uint64_t half = 128ull * (2 * (16 * 2048 + 384 * 16) + (16 * 384 + 2048 * 16)) * 2;
  EXPECT_EQ(tp2.decoder - vllm::LoraSlotBytes(spec, Options(1, 16, 2), vllm::RulesFor(1100))
                              .decoder,
            48u * half);
}

// The plan: the slots load with the weights, the KV memory loses them, graphs double (v0.11+).
TEST(VllmLora, PlanChargesTheSlotsAtLoadAndInTheBudget) {
  const Inventory inv = Catalog("qwen3-8b");
  VllmSettings s;
  s.max_model_len = 8192;
  auto base = PlanVllm(inv, Gpu("h100"), s);
  auto flags = vllm::ReadFlags(
      {{"--enable-lora", ""}, {"--max-loras", "4"}, {"--max-lora-rank", "64"}}, s);
  ASSERT_TRUE(flags.ok()) << flags.status().ToString();
  auto lora = PlanVllm(inv, Gpu("h100"), *flags);
  ASSERT_TRUE(base.ok() && lora.ok());
  const GpuPlan& a = base->gpus[0];
  const GpuPlan& b = lora->gpus[0];
  EXPECT_EQ(a.lora_bytes, 0u);
  EXPECT_EQ(b.lora_bytes, 1556480000u);
  EXPECT_EQ(b.weights_bytes, a.weights_bytes);
  EXPECT_EQ(b.load_peak_bytes, a.weights_bytes + b.lora_bytes);  // no transient in bf16
  EXPECT_EQ(a.activation_peak_bytes, b.activation_peak_bytes);  // the sampler sets the peak
  EXPECT_GT(b.cudagraph_bytes, a.cudagraph_bytes);
  EXPECT_EQ(a.kv_cache_bytes - b.kv_cache_bytes,
            b.lora_bytes + (b.cudagraph_bytes - a.cudagraph_bytes));
  EXPECT_NE(lora->command.find("--enable-lora --max-loras 4 --max-lora-rank 64"),
            std::string::npos);
}

TEST(VllmLora, SizesWithoutEnableLoraChangeNothing) {
  VllmSettings s;
  s.max_model_len = 8192;
  auto flags = vllm::ReadFlags({{"--max-loras", "4"}}, s);
  ASSERT_TRUE(flags.ok());
  auto p = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), *flags);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->gpus[0].lora_bytes, 0u);
  ASSERT_FALSE(p->without_effect.empty());
  EXPECT_NE(p->without_effect[0].find("without --enable-lora"), std::string::npos);
}

TEST(VllmLora, FlagValuesAsVllmChecksThem) {
  auto bad = [](FlagValues f) {
    auto r = vllm::ReadFlags(f, VllmSettings{});
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_NE(bad({{"--max-lora-rank", "24"}}).find("invalid choice: '24'"), std::string::npos);
  EXPECT_NE(bad({{"--lora-dtype", "float32"}}).find("invalid choice"), std::string::npos);
  EXPECT_NE(bad({{"--max-loras", "4"}, {"--max-cpu-loras", "2"}}).find("must be >="),
            std::string::npos);
  EXPECT_EQ(bad({{"--max-lora-rank", "320"}, {"--lora-dtype", "bfloat16"}}), "");
  // --fully-sharded-loras needs the rank to split across TP.
  VllmSettings s;
  s.enable_lora = true;
  s.fully_sharded_loras = true;
  s.max_lora_rank = 1;
  s.tensor_parallel_size = 2;
  s.max_model_len = 4096;
  auto p = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), s);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("not divisible"), std::string::npos);
}

}  // namespace
// A plan failing at load for its LoRA slots is advised fewer slots or a lower rank.
TEST(VllmLora, AdviceForSlotsThatDoNotFit) {
  auto flags = vllm::ReadFlags({{"--enable-lora", ""}, {"--max-loras", "4"},
                                {"--max-lora-rank", "64"}, {"--max-model-len", "8192"}},
                               VllmSettings{});
  ASSERT_TRUE(flags.ok()) << flags.status().ToString();
  const Inventory inv = Catalog("qwen3-30b-a3b");
  auto plan = PlanVllm(inv, Gpu("h100"), *flags);
  ASSERT_TRUE(plan.ok());
  EXPECT_FALSE(plan->fits);
  EXPECT_EQ(plan->failure_stage, Stage::kLoad);
  EXPECT_NE(plan->failure_message.find("--max-loras"), std::string::npos);
  auto prepared = vllm::VllmEngine().prepare(inv);
  ASSERT_TRUE(prepared.ok());
  const auto remedies =
      (*prepared)->Remedies(Gpu("h100"), ToEngineSettings(*flags), *plan);
  bool loras = false, rank = false;
  for (const Remedy& r : remedies) {
    loras = loras || r.change == "--max-loras 1";
    rank = rank || r.change.rfind("--max-lora-rank ", 0) == 0;
  }
  EXPECT_TRUE(loras);
  EXPECT_TRUE(rank);
}

}  // namespace vramfit
