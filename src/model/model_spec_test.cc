// ModelSpec from config.json: per-layer kinds for every family, and bad configs.
#include <gtest/gtest.h>

#include "model/kv_state.h"
#include "vramfit/catalog.h"
#include "vramfit/model.h"

namespace vramfit {
namespace {

ModelSpec FromCatalog(const char* id) {
  auto m = FindCatalogModel(id);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  auto s = ModelSpecFromConfigJson(m->config_json, id);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : ModelSpec{};
}

TEST(ModelSpec, Qwen25IgnoresInactiveSlidingWindow) {
  ModelSpec s = FromCatalog("qwen2.5-7b-instruct");
  EXPECT_EQ(s.family, "qwen2");
  EXPECT_EQ(s.layers.size(), 28u);
  EXPECT_EQ(s.CountAttention(AttentionKind::kFull), 28);
  EXPECT_TRUE(s.layers[0].attention.qkv_bias);
  EXPECT_FALSE(s.layers[0].attention.o_bias);
  EXPECT_EQ(s.layers[0].attention.head_dim, 128);
}

TEST(ModelSpec, Qwen25VlShortVisionConfigTakesTransformersDefaults) {
  // The 3B file names only the vision widths; depth, FFN, heads, merge and temporal patch come
  // from transformers' Qwen25VisionConfig defaults, as when vLLM reads it.
  ModelSpec s = FromCatalog("qwen2.5-vl-3b-instruct");
  EXPECT_EQ(s.vision.kind, VisionKind::kQwen25Vl);
  EXPECT_EQ(s.vision.depth, 32);
  EXPECT_EQ(s.vision.hidden_size, 1280);
  EXPECT_EQ(s.vision.intermediate_size, 3420);
  EXPECT_EQ(s.vision.num_heads, 16);
  EXPECT_EQ(s.vision.spatial_merge_size, 2);
  EXPECT_EQ(s.vision.temporal_patch_size, 2);
  EXPECT_EQ(s.vision.out_hidden_size, 2048);
  for (const std::string& w : s.warnings) EXPECT_EQ(w.find("vision_config lacks"), w.npos) << w;
  // The 7B file states the same values itself.
  ModelSpec seven = FromCatalog("qwen2.5-vl-7b-instruct");
  EXPECT_EQ(seven.vision.depth, 32);
  EXPECT_EQ(seven.vision.intermediate_size, 3420);
}

TEST(ModelSpec, PreprocessorConfigSetsTheLargestImage) {
  ModelSpec s = FromCatalog("qwen2.5-vl-3b-instruct");
  ASSERT_TRUE(ApplyPreprocessorConfig(R"({"max_pixels": 1003520, "size": {"longest_edge": 7}})",
                                      "p.json", &s).ok());
  EXPECT_EQ(s.vision.max_pixels, 1003520);  // max_pixels wins over size.longest_edge
  ASSERT_TRUE(ApplyPreprocessorConfig(
      R"({"size": {"longest_edge": 16777216, "shortest_edge": 65536}})", "p.json", &s).ok());
  EXPECT_EQ(s.vision.max_pixels, 16777216);
  ASSERT_TRUE(ApplyPreprocessorConfig(R"({"do_resize": true, "max_pixels": null})", "p.json", &s)
                  .ok());
  EXPECT_EQ(s.vision.max_pixels, 16777216);  // nothing read: unchanged
  ModelSpec text = FromCatalog("qwen3-8b");
  ASSERT_TRUE(ApplyPreprocessorConfig(R"({"max_pixels": 1003520})", "p.json", &text).ok());
  EXPECT_EQ(text.vision.max_pixels, 0);  // no vision tower
  for (const char* bad : {"[1]", "{", R"({"max_pixels": -1})", R"({"max_pixels": "big"})",
                          R"({"size": {"longest_edge": 1e99}})"}) {
    const Status st = ApplyPreprocessorConfig(bad, "p.json", &s);
    EXPECT_EQ(st.code(), Code::kCorrupt) << bad;
    EXPECT_EQ(st.message().rfind("p.json", 0), 0u) << st.message();
  }
}

TEST(ModelSpec, Qwen3UsesExplicitHeadDim) {
  ModelSpec s = FromCatalog("qwen3-32b");
  EXPECT_EQ(s.layers[0].attention.head_dim, 128);  // 5120 / 64 would be 80
  EXPECT_TRUE(s.layers[0].attention.qk_norm);
}

TEST(ModelSpec, Qwen3NextHybridEveryFourthLayerFull) {
  ModelSpec s = FromCatalog("qwen3-next-80b-a3b-instruct");
  EXPECT_EQ(s.CountAttention(AttentionKind::kFull), 12);
  EXPECT_EQ(s.CountAttention(AttentionKind::kLinear), 36);
  EXPECT_EQ(s.layers[3].attention.kind, AttentionKind::kFull);
  EXPECT_EQ(s.layers[0].attention.linear_num_value_heads, 32);
  EXPECT_TRUE(s.layers[3].attention.output_gate);
  EXPECT_EQ(s.layers[0].mlp.num_experts, 512);
  EXPECT_EQ(s.layers[0].mlp.num_shared_experts, 1);
  EXPECT_EQ(s.mtp_layers, 1);
}

TEST(ModelSpec, Qwen35NestedTextConfigAndFp32State) {
  ModelSpec s = FromCatalog("qwen3.5-35b-a3b");
  EXPECT_EQ(s.layers.size(), 40u);
  EXPECT_EQ(s.CountAttention(AttentionKind::kFull), 10);
  EXPECT_EQ(s.ssm_state_dtype, Dtype::kF32);
  EXPECT_EQ(s.vocab_size, 248320);
  EXPECT_EQ(s.vision.kind, VisionKind::kQwen3Vl);
  EXPECT_EQ(s.mtp_layers, 1);
  EXPECT_EQ(s.naming.layers, "model.language_model.layers.");
}

TEST(ModelSpec, DeepseekMlaAndDenseFirstLayers) {
  ModelSpec s = FromCatalog("deepseek-v3");
  EXPECT_EQ(s.CountAttention(AttentionKind::kMla), 61);
  EXPECT_EQ(s.layers[0].attention.kv_lora_rank, 512);
  EXPECT_EQ(s.layers[0].attention.qk_rope_head_dim, 64);
  EXPECT_EQ(s.layers[2].mlp.kind, MlpKind::kDense);
  EXPECT_EQ(s.layers[3].mlp.kind, MlpKind::kMoe);
  EXPECT_EQ(s.CountMoeLayers(), 58);
  EXPECT_EQ(s.quant.layout, QuantLayout::kFp8Block);
  EXPECT_EQ(s.mtp_layers, 1);
}

TEST(ModelSpec, Glm4MoeDenseFirstLayerAndSharedExpert) {
  // GLM-4.5-Air's config.json fields (Glm4MoeForCausalLM): one dense layer first, then 128
  // routed experts of 1408 and one shared expert, a biased router, GQA with q/k/v biases.
  constexpr char kConfig[] = R"({"architectures":["Glm4MoeForCausalLM"],"model_type":"glm4_moe",
    "hidden_size":4096,"intermediate_size":10944,"moe_intermediate_size":1408,
    "n_routed_experts":128,"n_shared_experts":1,"num_experts_per_tok":8,
    "first_k_dense_replace":1,"num_hidden_layers":46,"num_attention_heads":96,
    "num_key_value_heads":8,"head_dim":128,"vocab_size":151552,"attention_bias":true,
    "max_position_embeddings":131072,"num_nextn_predict_layers":1,"torch_dtype":"bfloat16"})";
  auto s = ModelSpecFromConfigJson(kConfig, "glm.json");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->family, "glm4_moe");
  EXPECT_EQ(s->layers[0].mlp.kind, MlpKind::kDense);
  EXPECT_EQ(s->layers[0].mlp.intermediate_size, 10944);
  EXPECT_EQ(s->layers[1].mlp.kind, MlpKind::kMoe);
  EXPECT_EQ(s->CountMoeLayers(), 45);
  EXPECT_EQ(s->layers[1].mlp.num_shared_experts, 1);
  EXPECT_EQ(s->layers[1].mlp.shared_intermediate_size, 1408);
  EXPECT_TRUE(s->layers[1].mlp.router_score_bias);
  EXPECT_TRUE(s->layers[0].attention.qkv_bias);
  EXPECT_EQ(s->layers[0].attention.num_kv_heads, 8);
  EXPECT_EQ(s->mtp_layers, 1);
}

// Granite 4.0 hybrid (GraniteMoeHybridForCausalLM; granite-4.0-h-small's config.json fields):
// layer_types "mamba" are Mamba2 mixers, "attention" GQA layers; routed experts and the shared
// MLP in every layer. Without routed experts (the Micro and Tiny dense variants) the shared MLP
// is the MLP. Bamba places its attention at attn_layer_indices. The Mamba2 state follows vLLM's
// mamba2_state_shape, groups replicated up to the TP size.
TEST(ModelSpec, GraniteHybridAndBambaMamba2Layers) {
  std::string types;
  for (int i = 0; i < 40; ++i) {
    types += std::string(types.empty() ? "" : ",") +
             (i % 10 == 5 ? "\"attention\"" : "\"mamba\"");
  }
  const std::string granite =
      R"({"architectures":["GraniteMoeHybridForCausalLM"],"model_type":"granitemoehybrid",
      "hidden_size":4096,"intermediate_size":1536,"shared_intermediate_size":1536,
      "num_local_experts":72,"num_experts_per_tok":10,"num_hidden_layers":40,
      "num_attention_heads":32,"num_key_value_heads":8,"vocab_size":100352,
      "max_position_embeddings":131072,"mamba_n_heads":128,"mamba_d_head":64,
      "mamba_d_state":128,"mamba_n_groups":1,"mamba_d_conv":4,"mamba_expand":2,
      "tie_word_embeddings":true,"torch_dtype":"bfloat16","layer_types":[)" +
      types + "]}";
  auto s = ModelSpecFromConfigJson(granite, "granite.json");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->CountAttention(AttentionKind::kFull), 4);
  EXPECT_EQ(s->CountAttention(AttentionKind::kLinear), 36);
  const AttentionSpec& m = s->layers[0].attention;
  EXPECT_TRUE(m.mamba2);
  EXPECT_EQ(m.mamba_intermediate, 8192);
  EXPECT_EQ(m.mamba_groups, 1);
  EXPECT_EQ(m.linear_conv_kernel_dim, 4);
  EXPECT_FALSE(s->layers[5].attention.mamba2);
  EXPECT_EQ(s->CountMoeLayers(), 40);
  EXPECT_EQ(s->layers[0].mlp.expert_intermediate_size, 1536);
  EXPECT_EQ(s->layers[0].mlp.shared_intermediate_size, 1536);
  // conv (8192 + 2 x 1 x 128) x 3 x 2 B, recurrent 128 x 64 x 128 x 2 B; at TP 2 the one group
  // is replicated to two: (8192 + 2 x 2 x 128) / 2 x 3 x 2 B, and half the heads.
  auto one = LinearAttentionState(m, 1, 0, Dtype::kBF16, Dtype::kBF16);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->conv_bytes, 8448u * 3 * 2);
  EXPECT_EQ(one->recurrent_bytes, 128u * 64 * 128 * 2);
  auto two = LinearAttentionState(m, 2, 0, Dtype::kBF16, Dtype::kF32);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->conv_bytes, 8704u / 2 * 3 * 2);
  EXPECT_EQ(two->recurrent_bytes, 64u * 64 * 128 * 4);
  EXPECT_FALSE(LinearAttentionState(m, 3, 0, Dtype::kBF16, Dtype::kBF16).ok());
  // The dense variant: no routed experts, the shared MLP's width.
  std::string dense = granite;
  dense.replace(dense.find("\"num_local_experts\":72"), 22, "\"num_local_experts\":0");
  dense.replace(dense.find("\"shared_intermediate_size\":1536"), 31,
                "\"shared_intermediate_size\":8192");
  auto d = ModelSpecFromConfigJson(dense, "granite-dense.json");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->CountMoeLayers(), 0);
  EXPECT_EQ(d->layers[0].mlp.intermediate_size, 8192);
  // Bamba: attention at the listed indices.
  auto b = ModelSpecFromConfigJson(
      R"({"architectures":["BambaForCausalLM"],"model_type":"bamba","hidden_size":4096,
      "intermediate_size":14336,"num_hidden_layers":32,"num_attention_heads":32,
      "num_key_value_heads":8,"vocab_size":128256,"attn_layer_indices":[9,18,27],
      "mamba_n_heads":128,"mamba_d_head":64,"mamba_d_state":128,"mamba_n_groups":1,
      "mamba_d_conv":4,"mamba_expand":2,"torch_dtype":"bfloat16"})",
      "bamba.json");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->CountAttention(AttentionKind::kFull), 3);
  EXPECT_EQ(b->layers[9].attention.kind, AttentionKind::kFull);
  EXPECT_TRUE(b->layers[0].attention.mamba2);
  // Heads that do not make the inner width, and "mamba" in a family without Mamba2 layers.
  std::string bad = granite;
  bad.replace(bad.find("\"mamba_d_head\":64"), 17, "\"mamba_d_head\":32");
  EXPECT_NE(ModelSpecFromConfigJson(bad, "g.json").status().message().find("mamba_n_heads"),
            std::string::npos);
  std::string llama = granite;
  llama.replace(llama.find("granitemoehybrid"), 16, "llama");
  EXPECT_NE(ModelSpecFromConfigJson(llama, "l.json").status().message().find("mamba"),
            std::string::npos);
}

TEST(ModelSpec, GptOssAlternatesSlidingFromLayerZero) {
  ModelSpec s = FromCatalog("gpt-oss-20b");
  EXPECT_EQ(s.layers[0].attention.kind, AttentionKind::kSliding);
  EXPECT_EQ(s.layers[0].attention.sliding_window, 128);
  EXPECT_EQ(s.layers[1].attention.kind, AttentionKind::kFull);
  EXPECT_EQ(s.CountAttention(AttentionKind::kSliding), 12);
  EXPECT_EQ(s.layers[0].attention.head_dim, 64);
  EXPECT_EQ(s.quant.method, QuantMethod::kMxfp4);
}

TEST(ModelSpec, Gemma3FiveSlidingToOneGlobal) {
  ModelSpec s = FromCatalog("gemma-3-27b-it");
  EXPECT_EQ(s.layers.size(), 62u);
  EXPECT_EQ(s.CountAttention(AttentionKind::kFull), 10);
  EXPECT_EQ(s.layers[5].attention.kind, AttentionKind::kFull);
  EXPECT_EQ(s.layers[0].attention.kind, AttentionKind::kSliding);
  EXPECT_TRUE(s.tie_word_embeddings);
}

// Gemma 4 (transformers modeling_gemma4.py): global layers take global_head_dim and, under
// attention_k_eq_v, num_global_key_value_heads; the KV-shared tail holds no cache.
TEST(ModelSpec, Gemma4GlobalHeadsAndKEqV) {
  ModelSpec s = FromCatalog("gemma-4-31b-it");
  ASSERT_EQ(s.layers.size(), 60u);
  EXPECT_EQ(s.family, "gemma4");
  EXPECT_FALSE(s.generic);
  EXPECT_EQ(s.CountAttention(AttentionKind::kFull), 10);
  const AttentionSpec& sliding = s.layers[0].attention;
  const AttentionSpec& global = s.layers[5].attention;
  EXPECT_EQ(sliding.kind, AttentionKind::kSliding);
  EXPECT_EQ(sliding.sliding_window, 1024);
  EXPECT_EQ(sliding.head_dim, 256);
  EXPECT_EQ(sliding.num_kv_heads, 16);
  EXPECT_FALSE(sliding.k_eq_v);
  EXPECT_EQ(global.kind, AttentionKind::kFull);
  EXPECT_EQ(global.head_dim, 512);
  EXPECT_EQ(global.num_kv_heads, 4);
  EXPECT_TRUE(global.k_eq_v);
  EXPECT_EQ(s.per_layer_input_size, 0);
  EXPECT_EQ(s.vision.kind, VisionKind::kGemma4);
  EXPECT_EQ(s.vision.depth, 27);
  EXPECT_EQ(s.vision.soft_tokens_per_image, 280);
  EXPECT_EQ(s.audio.depth, 0);
  EXPECT_EQ(s.naming.layers, "model.language_model.layers.");
}

TEST(ModelSpec, Gemma4SharedKvTailAndPerLayerInputs) {
  ModelSpec s = FromCatalog("gemma-4-e2b-it");
  ASSERT_EQ(s.layers.size(), 35u);
  int64_t cached = 0;
  for (size_t i = 0; i < s.layers.size(); ++i) {
    const AttentionSpec& a = s.layers[i].attention;
    EXPECT_EQ(a.kv_shared, i >= 15) << i;
    if (!a.kv_shared) ++cached;
    // Without attention_k_eq_v the global layers keep num_key_value_heads.
    EXPECT_EQ(a.num_kv_heads, 1);
    EXPECT_EQ(a.head_dim, a.kind == AttentionKind::kFull ? 512 : 256) << i;
    // use_double_wide_mlp doubles only the shared layers' MLP.
    EXPECT_EQ(s.layers[i].mlp.intermediate_size, i >= 15 ? 12288 : 6144) << i;
  }
  EXPECT_EQ(cached, 15);
  EXPECT_EQ(s.per_layer_input_size, 256);
  EXPECT_EQ(s.per_layer_vocab_size, 262144);
  EXPECT_EQ(s.audio.depth, 12);
  EXPECT_EQ(s.audio.hidden_size, 1024);
  EXPECT_EQ(s.audio.out_hidden_size, 1536);
}

TEST(ModelSpec, Gemma4MoeBlockBesideTheDenseMlp) {
  ModelSpec s = FromCatalog("gemma-4-26b-a4b-it");
  ASSERT_EQ(s.layers.size(), 30u);
  EXPECT_EQ(s.CountMoeLayers(), 30);
  const MlpSpec& m = s.layers[0].mlp;
  EXPECT_EQ(m.num_experts, 128);
  EXPECT_EQ(m.experts_per_token, 8);
  EXPECT_EQ(m.expert_intermediate_size, 704);
  EXPECT_EQ(m.num_shared_experts, 1);
  EXPECT_EQ(m.shared_intermediate_size, 2112);
  EXPECT_FALSE(m.shared_expert_gate);
  EXPECT_EQ(s.layers[5].attention.num_kv_heads, 2);
}

// Without layer_types the pattern is 5 sliding : 1 full with the last layer forced full; a KV
// sharing count that leaves no layer to share with is refused.
TEST(ModelSpec, Gemma4DefaultsAndBadSharing) {
  auto s = ModelSpecFromConfigJson(
      R"({"model_type":"gemma4_text","hidden_size":64,"num_hidden_layers":8,)"
      R"("num_attention_heads":4,"num_key_value_heads":2,"head_dim":16,"intermediate_size":128})",
      "c");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->layers[5].attention.kind, AttentionKind::kFull);
  EXPECT_EQ(s->layers[6].attention.kind, AttentionKind::kSliding);
  EXPECT_EQ(s->layers[7].attention.kind, AttentionKind::kFull);
  EXPECT_EQ(s->layers[0].attention.sliding_window, 512);
  EXPECT_EQ(s->layers[7].attention.head_dim, 512);
  EXPECT_EQ(s->vocab_size, 262144);
  EXPECT_EQ(s->naming.layers, "model.layers.");
  auto bad = ModelSpecFromConfigJson(
      R"({"model_type":"gemma4_text","hidden_size":64,"num_hidden_layers":4,)"
      R"("num_attention_heads":4,"head_dim":16,"intermediate_size":128,"vocab_size":10,)"
      R"("num_kv_shared_layers":4})",
      "config.json");
  EXPECT_EQ(bad.status().message(),
            "config.json: \"num_kv_shared_layers\": 4 shared layers leave no layer of the 4 to "
            "hold a KV cache");
  auto lonely = ModelSpecFromConfigJson(
      R"({"model_type":"gemma4_text","hidden_size":64,"num_hidden_layers":4,)"
      R"("num_attention_heads":4,"head_dim":16,"intermediate_size":128,"vocab_size":10,)"
      R"("layer_types":["sliding_attention","sliding_attention","sliding_attention",)"
      R"("full_attention"],"num_kv_shared_layers":1})",
      "config.json");
  EXPECT_EQ(lonely.status().message(),
            "config.json: \"num_kv_shared_layers\": layer 3 (full_attention) shares the KV of an "
            "earlier layer of its kind, but no earlier layer has that kind");
}

// Gemma 3n E4B's text model (Gemma3nTextConfig fields as its config.json writes them): the
// last 15 of 35 layers share KV, every layer keeps head_dim 256 (no global_head_dim), per-layer
// embeddings of 256.
TEST(ModelSpec, Gemma3nSharedKvWithOneHeadSize) {
  std::string types;
  for (int i = 0; i < 35; ++i)
    types += std::string(i ? "," : "") + ((i + 1) % 5 == 0 ? "\"full_attention\""
                                                             : "\"sliding_attention\"");
  auto s = ModelSpecFromConfigJson(
      R"({"architectures":["Gemma3nForConditionalGeneration"],"model_type":"gemma3n",)"
      R"("text_config":{"model_type":"gemma3n_text","hidden_size":2048,"num_hidden_layers":35,)"
      R"("num_attention_heads":8,"num_key_value_heads":2,"head_dim":256,)"
      R"("intermediate_size":16384,"vocab_size":262400,"sliding_window":512,)"
      R"("num_kv_shared_layers":15,"hidden_size_per_layer_input":256,)"
      R"("vocab_size_per_layer_input":262144,"layer_types":[)" + types + "]}}",
      "config.json");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->family, "gemma3n");
  EXPECT_FALSE(s->generic);
  int cached = 0;
  for (size_t i = 0; i < s->layers.size(); ++i) {
    EXPECT_EQ(s->layers[i].attention.head_dim, 256) << i;
    EXPECT_EQ(s->layers[i].attention.kv_shared, i >= 20) << i;
    cached += s->layers[i].attention.kv_shared ? 0 : 1;
  }
  EXPECT_EQ(cached, 20);
  EXPECT_EQ(s->per_layer_input_size, 256);
  EXPECT_EQ(s->naming.layers, "model.language_model.layers.");
}

TEST(ModelSpec, MixtralMoe) {
  ModelSpec s = FromCatalog("mixtral-8x7b-instruct-v0.1");
  EXPECT_EQ(s.CountMoeLayers(), 32);
  EXPECT_EQ(s.layers[0].mlp.num_experts, 8);
  EXPECT_EQ(s.layers[0].mlp.experts_per_token, 2);
}

TEST(ModelSpec, UnknownArchitectureIsGenericWithWarning) {
  auto s = ModelSpecFromConfigJson(R"({"architectures":["FooForCausalLM"],"model_type":"foo",
      "hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,)"
          R"("vocab_size":100})",
                                   "c");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(s->generic);
  ASSERT_FALSE(s->warnings.empty());
  EXPECT_NE(s->warnings[0].find("unknown architecture FooForCausalLM"), std::string::npos);
}

// A model_type without a row whose class is one vLLM runs with a family's code: the family's
// rules, and a note saying how it was read.
TEST(ModelSpec, UnknownModelTypeIsReadByItsArchitecture) {
  auto s = ModelSpecFromConfigJson(R"({"architectures":["Qwen3ForCausalLM"],
      "model_type":"my_finetune","hidden_size":64,"num_hidden_layers":2,
      "num_attention_heads":4,"num_key_value_heads":2,"head_dim":16,"intermediate_size":128,)"
                                       R"("vocab_size":100})",
                                   "c");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_FALSE(s->generic);
  EXPECT_EQ(s->family, "qwen3");
  EXPECT_EQ(s->model_type, "my_finetune");
  ASSERT_FALSE(s->warnings.empty());
  EXPECT_NE(s->warnings[0].find("read by its architecture Qwen3ForCausalLM"), std::string::npos)
      << s->warnings[0];
}

TEST(ModelSpec, BadConfigs) {
  auto msg = [](const char* json) {
    return ModelSpecFromConfigJson(json, "config.json").status().message();
  };
  EXPECT_EQ(msg(R"({"model_type":"llama","num_hidden_layers":2})"),
            "config.json: \"hidden_size\": missing: every decoder config must give it");
  EXPECT_EQ(
      msg(R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
                   "num_key_value_heads":3,"intermediate_size":8,"vocab_size":10})"),
      "config.json: \"num_key_value_heads\": 3 KV heads do not divide 4 attention heads");
  EXPECT_EQ(
      msg(R"({"model_type":"qwen3","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
                   "intermediate_size":8,"vocab_size":10,"layer_types":["full_attention"]})"),
      "config.json: \"layer_types\": lists 1 layers, but num_hidden_layers is 2");
  EXPECT_EQ(
      msg(R"({"model_type":"qwen3_moe","hidden_size":64,"num_hidden_layers":2,)"
      R"("num_attention_heads":4,
                   "intermediate_size":8,"vocab_size":10,"num_experts":8,)"
                       R"("num_experts_per_tok":9,"moe_intermediate_size":4})"),
      "config.json: \"num_experts_per_tok\": expected 1..8 experts per token, found 9");
  EXPECT_EQ(
      msg(R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
                   "intermediate_size":8,"vocab_size":10,"torch_dtype":"float8"})"),
      "config.json: \"torch_dtype\": expected bfloat16, float16 or float32, found \"float8\"");
}

}  // namespace
}  // namespace vramfit
