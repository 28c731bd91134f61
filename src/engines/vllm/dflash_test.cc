#include "engines/vllm/dflash.h"

#include <gtest/gtest.h>

#include <memory>

#include "engines/vllm/kv_cache.h"
#include "engines/vllm/rules.h"
#include "engines/vllm/vllm.h"
#include "vramfit/gpu.h"
#include "vramfit/inspect.h"
#include "vramfit/model.h"

namespace vramfit {
namespace {

// A DFlash drafter of two layers read from its config.json: every shape counted by hand.
TEST(VllmDflash, WeightsByHand) {
  auto spec = ModelSpecFromConfigJson(R"({
    "architectures": ["DFlashDraftModel"], "model_type": "qwen3", "dtype": "bfloat16",
    "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 128, "vocab_size": 1000,
    "dflash_config": {"mask_token_id": 999, "target_layer_ids": [1, 5, 9]}})",
                                      "test");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->dflash_target_layers, 3);
  auto w1 = vllm::DflashWeightsPerRank(*spec, 1, 16);
  // q 4x16, kv 2x16 each: qkv 64x128, o 64x64, q/k norms 16 each, MLP 3x64x128, 2 norms.
  const uint64_t layer = 64 * 128 + 64 * 64 + 2 * 16 + 3 * 64 * 128 + 2 * 64;
  EXPECT_EQ(w1.layers, 2 * layer * 2);
  EXPECT_EQ(w1.fc, 3u * 64 * 64 * 2);  // 3 target layers x 64 -> 64, no vocabulary
  EXPECT_EQ(w1.norms, 2u * 64 * 2);
  // TP 2: the layers split (q 2 heads, kv 1 head a rank), the fc stays whole.
  auto w2 = vllm::DflashWeightsPerRank(*spec, 2, 16);
  const uint64_t layer2 = 64 * (32 + 32) + 32 * 64 + 2 * 16 + 3 * 64 * 64 + 2 * 64;
  EXPECT_EQ(w2.layers, 2 * layer2 * 2);
  EXPECT_EQ(w2.fc, w1.fc);
}

// Without target_layer_ids vLLM's fc reads as many target layers as the drafter has.
TEST(VllmDflash, FcDefaultsToTheDrafterLayerCount) {
  auto spec = ModelSpecFromConfigJson(R"({
    "architectures": ["DFlashDraftModel"], "model_type": "qwen3", "hidden_size": 32,
    "num_hidden_layers": 4, "num_attention_heads": 2, "num_key_value_heads": 1,
    "head_dim": 16, "intermediate_size": 64, "vocab_size": 100})",
                                      "test");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->dflash_target_layers, 0);
  EXPECT_EQ(vllm::DflashWeightsPerRank(*spec, 1, 16).fc, 4u * 32 * 32 * 2);
}

// A malformed dflash_config is a clear error, not a crash.
TEST(VllmDflash, MalformedTargetLayersIsAnError) {
  auto spec = ModelSpecFromConfigJson(R"({"model_type": "qwen3", "hidden_size": 32,
    "num_hidden_layers": 1, "num_attention_heads": 2, "vocab_size": 10,
    "dflash_config": {"target_layer_ids": "1,2"}})",
                                      "test");
  EXPECT_FALSE(spec.ok());
}

// The catalog's z-lab Qwen3.6-27B drafter: 1.73 B parameters, 3.46 GB in BF16 at TP 1, as
// the downloads of z-lab/Qwen3.6-27B-DFlash measure.
TEST(VllmDflash, Qwen36DrafterFromTheCatalog) {
  auto inv = InspectModel("qwen3.6-27b-dflash", {});
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_EQ(inv->spec.dflash_target_layers, 5);
  const auto w = vllm::DflashWeightsPerRank(inv->spec, 1, 16);
  EXPECT_NEAR(static_cast<double>(w.total()) / 1e9, 3.46, 0.01);
  // TP 2: the fc (25600 x 5120) is whole on both ranks.
  EXPECT_EQ(vllm::DflashWeightsPerRank(inv->spec, 2, 16).fc, 25600ull * 5120 * 2);
}

// The drafter's KV layers group apart from the target's (other head count and size, same
// page): Qwen3.6-35B-A3B's 10 attention and 30 linear layers beside the drafter's 8 give
// groups of 8 and the two padding warnings vLLM 0.20.2 printed (issue #46462).
TEST(VllmDflash, DrafterLayersFormTheirOwnKvGroup) {
  auto target = InspectModel("qwen3.6-35b-a3b-fp8", {});
  auto draft = InspectModel("qwen3.6-35b-a3b-dflash", {});
  ASSERT_TRUE(target.ok() && draft.ok());
  ModelSpec both = target->spec;
  for (const LayerSpec& l : draft->spec.layers) both.layers.push_back(l);
  KvCacheOptions o;
  o.max_model_len = 8192;
  o.num_speculative_tokens = 6;
  o.rules = vllm::RulesFor(*ParseVllmVersion("0.20.2"));
  auto layout = PlanKvCache(both, o);
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->group_size, 8);
  std::string notes;
  for (const auto& n : layout->notes) notes += n + "\n";
  EXPECT_NE(notes.find("Add 2 padding layers, may waste at most 6.67%"), std::string::npos)
      << notes;
  EXPECT_NE(notes.find("Add 6 padding layers, may waste at most 60.00%"), std::string::npos)
      << notes;
}

// The profile run keeps the target's `outputs` tuple, with the hidden states of the layers a
// DFlash drafter taps, alive through drafter.dummy_run (gpu_model_runner.py _dummy_run): the
// drafter's forward sits on top of 5 x 8,192 tokens x 5,120 x 2 B for Qwen3.6-27B's drafter
// (target_layer_ids 1, 16, 31, 46, 61). Text only, so no encoder profile competes.
TEST(VllmDflash, TappedTargetStatesSitUnderTheDrafterForward) {
  auto target = InspectModel("qwen3.6-27b", {});
  auto draft = InspectModel("qwen3.6-27b-dflash", {});
  auto gpu = FindGpu("rtx-3090");
  ASSERT_TRUE(target.ok() && draft.ok() && gpu.ok());
  VllmSettings s;
  s.version = "0.20.2";
  s.tensor_parallel_size = 2;
  s.max_model_len = 32768;
  s.max_num_seqs = 1;
  s.max_num_batched_tokens = 8192;
  s.language_model_only = true;
  s.speculative_config = R"({"method": "dflash", "num_speculative_tokens": 5})";
  s.speculative_method = "dflash";
  s.num_speculative_tokens = 5;
  s.draft_inventory = std::make_shared<const Inventory>(std::move(*draft));
  auto p = PlanVllm(*target, *gpu, s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  uint64_t aux = 0;
  for (const Explained& e : p->gpus[0].explain) {
    if (e.name == "draft_aux_states") aux = e.bytes;
  }
  EXPECT_EQ(aux, 5ull * 8192 * 5120 * 2);
  EXPECT_GT(p->gpus[0].activation_peak_bytes, aux);
}

}  // namespace
}  // namespace vramfit
