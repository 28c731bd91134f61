// GGUF what-if (model/gguf_what_if.h): llama-quantize's per-tensor rules, worked by hand from
// src/llama-quant.cpp llama_tensor_get_type (ec98e2002), and the synthesized header read back
// as a GGUF file is.
#include "model/gguf_what_if.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "model/gguf_spec.h"
#include "testutil/catalog.h"
#include "vramfit/catalog.h"

namespace vramfit {
namespace {

GgufQuantModel Llama32() {
  GgufQuantModel m;
  m.arch = "llama";
  m.n_layer = 32;
  return m;
}

Dtype Type(const GgufQuantModel& m, GgufFtype ft, const std::string& name, Shape shape) {
  return GgufTensorType(m, ft, name, shape, shape.size() < 2 ? Dtype::kF32 : Dtype::kBF16);
}

// use_more_bits(i, n): i < n/8 || i >= 7n/8 || (i - n/8) % 3 == 2. For 32 layers: 0-3,
// 28-31, and 6, 9, ..., 27 between: 16 layers, the 16 Q6_K attn_v (and 16 ffn_down) that
// Llama-3-8B Q4_K_M logs show (validation/llamacpp r01: 33 q6_K tensors with output).
TEST(GgufTensorType, Q4KMGivesAttnVAndFfnDownMoreBitsOnSomeLayers) {
  const GgufQuantModel m = Llama32();
  int q6 = 0;
  for (int il = 0; il < 32; ++il) {
    const std::string p = "blk." + std::to_string(il) + ".";
    const Dtype v = Type(m, GgufFtype::kQ4_K_M, p + "attn_v.weight", {1024, 4096});
    const Dtype d = Type(m, GgufFtype::kQ4_K_M, p + "ffn_down.weight", {4096, 14336});
    EXPECT_EQ(v, d) << il;
    q6 += v == Dtype::kQ6_K;
    EXPECT_EQ(Type(m, GgufFtype::kQ4_K_M, p + "attn_q.weight", {4096, 4096}), Dtype::kQ4_K);
    EXPECT_EQ(Type(m, GgufFtype::kQ4_K_M, p + "ffn_up.weight", {14336, 4096}), Dtype::kQ4_K);
  }
  EXPECT_EQ(q6, 16);
  EXPECT_EQ(Type(m, GgufFtype::kQ4_K_M, "blk.5.attn_v.weight", {1024, 4096}), Dtype::kQ4_K);
  EXPECT_EQ(Type(m, GgufFtype::kQ4_K_M, "blk.6.attn_v.weight", {1024, 4096}), Dtype::kQ6_K);
  EXPECT_EQ(Type(m, GgufFtype::kQ5_K_M, "blk.6.attn_v.weight", {1024, 4096}), Dtype::kQ6_K);
  EXPECT_EQ(Type(m, GgufFtype::kQ5_K_M, "blk.5.ffn_down.weight", {4096, 14336}),
            Dtype::kQ5_K);
}

// A fused attn_qkv (Phi-3/Phi-4): Q5_K in Q4_K_M, Q6_K in Q5_K_M, the base type otherwise; the
// fused ffn_up keeps the base type (llama_tensor_get_type's attn_qkv branch).
TEST(GgufTensorType, FusedQkvTakesMoreBits) {
  GgufQuantModel m;
  m.arch = "phi3";
  m.n_layer = 40;
  EXPECT_EQ(Type(m, GgufFtype::kQ4_K_M, "blk.7.attn_qkv.weight", {7680, 5120}), Dtype::kQ5_K);
  EXPECT_EQ(Type(m, GgufFtype::kQ5_K_M, "blk.7.attn_qkv.weight", {7680, 5120}), Dtype::kQ6_K);
  EXPECT_EQ(Type(m, GgufFtype::kQ4_K_S, "blk.7.attn_qkv.weight", {7680, 5120}), Dtype::kQ4_K);
  EXPECT_EQ(Type(m, GgufFtype::kQ8_0, "blk.7.attn_qkv.weight", {7680, 5120}), Dtype::kQ8_0);
  EXPECT_EQ(Type(m, GgufFtype::kQ4_K_M, "blk.7.ffn_up.weight", {35840, 5120}), Dtype::kQ4_K);
}

// A Gated DeltaNet hybrid (Qwen3-Next, Qwen3.5): attn_v exists in every fourth layer only, so
// i_attention_wv is the full-attention layers before it while n_attention_wv (attn_v plus
// attn_qkv tensors) is n_layer; the linear layers' attn_qkv takes Q5_K in Q4_K_M; the conv
// kernel is never quantized.
TEST(GgufTensorType, HybridCountsAttnVAmongFullAttentionLayers) {
  GgufQuantModel m;
  m.arch = "qwen35moe";
  m.n_layer = 40;
  m.full_attention_interval = 4;
  // use_more_bits(i, 40): i < 5, or (i - 5) % 3 == 2: full-attention layers 3, 7, 11, 15, 19
  // (indices 0-4) and 31 (index 7); not layer 23 (index 5), nor 35 and 39 (8 and 9).
  for (int il : {3, 7, 11, 15, 19, 31}) {
    EXPECT_EQ(Type(m, GgufFtype::kQ4_K_M, "blk." + std::to_string(il) + ".attn_v.weight",
                   {512, 2048}), Dtype::kQ6_K) << il;
  }
  for (int il : {23, 27, 35, 39}) {
    EXPECT_EQ(Type(m, GgufFtype::kQ4_K_M, "blk." + std::to_string(il) + ".attn_v.weight",
                   {512, 2048}), Dtype::kQ4_K) << il;
  }
  // Q4_K_S: the first four attn_v tensors in Q5_K, layers 3 to 15.
  EXPECT_EQ(Type(m, GgufFtype::kQ4_K_S, "blk.15.attn_v.weight", {512, 2048}), Dtype::kQ5_K);
  EXPECT_EQ(Type(m, GgufFtype::kQ4_K_S, "blk.19.attn_v.weight", {512, 2048}), Dtype::kQ4_K);
  EXPECT_EQ(Type(m, GgufFtype::kQ4_K_M, "blk.0.attn_qkv.weight", {8192, 2048}), Dtype::kQ5_K);
  EXPECT_EQ(Type(m, GgufFtype::kQ4_K_M, "blk.0.attn_gate.weight", {4096, 2048}), Dtype::kQ4_K);
  EXPECT_EQ(GgufTensorType(m, GgufFtype::kQ4_K_M, "blk.0.ssm_conv1d.weight", {8192, 4},
                           Dtype::kF32),
            Dtype::kF32);
}

// output.weight: Q6_K unless the type is Q8_0; token_embd keeps the base type, or is the
// output's when the model is tied (has_output false).
TEST(GgufTensorType, OutputAndTokenEmbedding) {
  GgufQuantModel m = Llama32();
  const Shape out = {128256, 4096};
  EXPECT_EQ(Type(m, GgufFtype::kQ4_K_M, "output.weight", out), Dtype::kQ6_K);
  EXPECT_EQ(Type(m, GgufFtype::kQ4_0, "output.weight", out), Dtype::kQ6_K);
  EXPECT_EQ(Type(m, GgufFtype::kQ8_0, "output.weight", out), Dtype::kQ8_0);
  EXPECT_EQ(Type(m, GgufFtype::kQ4_K_M, "token_embd.weight", out), Dtype::kQ4_K);
  m.tied = true;
  EXPECT_EQ(Type(m, GgufFtype::kQ4_K_M, "token_embd.weight", out), Dtype::kQ6_K);
  // A row that is not whole 256-blocks: the output goes to Q8_0 (nx % qk_k != 0).
  EXPECT_EQ(Type(m, GgufFtype::kQ4_K_M, "output.weight", {201088, 2880}), Dtype::kQ8_0);
}

// 1-D tensors, norms and the MoE router are not quantized (tensor_allows_quantization).
TEST(GgufTensorType, NormsRouterAndBiasesKeepTheirType) {
  const GgufQuantModel m = Llama32();
  EXPECT_EQ(Type(m, GgufFtype::kQ4_K_M, "blk.0.attn_norm.weight", {4096}), Dtype::kF32);
  EXPECT_EQ(Type(m, GgufFtype::kQ4_K_M, "blk.0.attn_q.bias", {4096}), Dtype::kF32);
  EXPECT_EQ(GgufTensorType(m, GgufFtype::kQ4_K_M, "blk.0.ffn_gate_inp.weight", {128, 2048},
                           Dtype::kF32), Dtype::kF32);
  EXPECT_EQ(Type(m, GgufFtype::kF16, "blk.0.attn_q.weight", {4096, 4096}), Dtype::kF16);
  EXPECT_EQ(Type(m, GgufFtype::kF16, "blk.0.attn_norm.weight", {4096}), Dtype::kF32);
}

// The fallback: a row of 2880 (gpt-oss) is not whole 256-blocks: Q4_K -> Q5_0, Q6_K -> Q8_0,
// Q5_K -> Q5_1; 32-element types take it as it is.
TEST(GgufTensorType, RowsThatAreNotWholeKBlocksFallBack) {
  GgufQuantModel m;
  m.arch = "gpt-oss";
  m.n_layer = 24;
  m.n_expert = 32;
  EXPECT_EQ(Type(m, GgufFtype::kQ4_K_M, "blk.5.attn_q.weight", {4096, 2880}), Dtype::kQ5_0);
  EXPECT_EQ(Type(m, GgufFtype::kQ4_K_M, "blk.0.attn_v.weight", {512, 2880}), Dtype::kQ8_0);
  EXPECT_EQ(Type(m, GgufFtype::kQ5_K_M, "blk.5.attn_q.weight", {4096, 2880}), Dtype::kQ5_1);
  EXPECT_EQ(Type(m, GgufFtype::kQ4_0, "blk.5.attn_q.weight", {4096, 2880}), Dtype::kQ4_0);
  // The experts' down projection has rows of 2880 too; gate/up rows of 2880 as well.
  EXPECT_EQ(Type(m, GgufFtype::kQ4_K_M, "blk.5.ffn_up_exps.weight", {32, 2880, 2880}),
            Dtype::kQ5_0);
}

// MXFP4_MOE: 3-D expert tensors MXFP4, everything else quantizable Q8_0, output Q8_0.
TEST(GgufTensorType, Mxfp4Moe) {
  GgufQuantModel m;
  m.arch = "gpt-oss";
  m.n_layer = 24;
  m.n_expert = 32;
  EXPECT_EQ(Type(m, GgufFtype::kMxfp4Moe, "blk.0.ffn_down_exps.weight", {32, 2880, 2880}),
            Dtype::kMXFP4);
  EXPECT_EQ(Type(m, GgufFtype::kMxfp4Moe, "blk.0.attn_q.weight", {4096, 2880}), Dtype::kQ8_0);
  EXPECT_EQ(Type(m, GgufFtype::kMxfp4Moe, "token_embd.weight", {201088, 2880}), Dtype::kQ8_0);
  EXPECT_EQ(Type(m, GgufFtype::kMxfp4Moe, "output.weight", {201088, 2880}), Dtype::kQ8_0);
}

// Q4_K_S: attn_v of the first 4 layers and ffn_down of the first eighth in Q5_K. The 70B
// model's attn_v in Q5_K where Q4_K would be. The 8-expert model: attn_v and attn_k Q8_0,
// attn_output Q5_K.
TEST(GgufTensorType, Q4KSSeventyBAndEightExperts) {
  GgufQuantModel m = Llama32();
  EXPECT_EQ(Type(m, GgufFtype::kQ4_K_S, "blk.3.attn_v.weight", {1024, 4096}), Dtype::kQ5_K);
  EXPECT_EQ(Type(m, GgufFtype::kQ4_K_S, "blk.4.attn_v.weight", {1024, 4096}), Dtype::kQ4_K);
  EXPECT_EQ(Type(m, GgufFtype::kQ4_K_S, "blk.3.ffn_down.weight", {4096, 14336}), Dtype::kQ5_K);
  EXPECT_EQ(Type(m, GgufFtype::kQ4_K_S, "blk.4.ffn_down.weight", {4096, 14336}), Dtype::kQ4_K);
  GgufQuantModel big = m;
  big.n_layer = 80;
  big.type_70b = true;
  // 80 layers: n/8 = 10; layer 11 is (11 - 10) % 3 = 1, layer 12 is 2 (more bits).
  EXPECT_EQ(Type(big, GgufFtype::kQ4_K_M, "blk.11.attn_v.weight", {1024, 8192}), Dtype::kQ5_K);
  EXPECT_EQ(Type(big, GgufFtype::kQ4_K_M, "blk.12.attn_v.weight", {1024, 8192}), Dtype::kQ6_K);
  GgufQuantModel mixtral = m;
  mixtral.n_expert = 8;
  EXPECT_EQ(Type(mixtral, GgufFtype::kQ4_K_M, "blk.5.attn_v.weight", {1024, 4096}),
            Dtype::kQ8_0);
  EXPECT_EQ(Type(mixtral, GgufFtype::kQ4_K_M, "blk.5.attn_k.weight", {1024, 4096}),
            Dtype::kQ8_0);
  EXPECT_EQ(Type(mixtral, GgufFtype::kQ4_K_M, "blk.5.attn_output.weight", {4096, 4096}),
            Dtype::kQ5_K);
}

TEST(GgufFtype, Words) {
  ASSERT_NE(FindGgufFtype("q4_k_m"), nullptr);
  EXPECT_EQ(FindGgufFtype("Q4_K_M")->llama_ftype, 15);
  EXPECT_EQ(FindGgufFtype("bf16")->llama_ftype, 32);
  EXPECT_EQ(FindGgufFtype("q3_k_m"), nullptr);
  EXPECT_NE(GgufFtypeWords().find("q4_k_m"), std::string::npos);
}

ModelSpec Qwen3Moe() {
  auto s = ModelSpecFromConfigJson(
      R"({"architectures":["Qwen3MoeForCausalLM"],"model_type":"qwen3_moe","hidden_size":2048,
          "num_hidden_layers":4,"num_attention_heads":32,"num_key_value_heads":4,"head_dim":128,
          "intermediate_size":6144,"moe_intermediate_size":768,"num_experts":128,
          "num_experts_per_tok":8,"vocab_size":151936,"max_position_embeddings":40960,
          "torch_dtype":"bfloat16","tie_word_embeddings":false})",
      "config.json");
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return *s;
}

// The GGUF file of type `ft` the converter and quantizer would make of a catalog entry.
GgufFile CatalogGguf(const char* id, GgufFtype ft) {
  auto f = SynthesizeGguf(testutil::Catalog(id).spec, ft, std::string(id) + ".gguf");
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? *f : GgufFile{};
}

// The synthesized header reads back as the model: names, shapes and keys as a real file's.
TEST(SynthesizeGguf, ReadsBackAsTheModel) {
  const ModelSpec base = Qwen3Moe();
  auto f = SynthesizeGguf(base, GgufFtype::kQ4_K_M, "x-Q4_K_M.gguf");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->Architecture(), "qwen3moe");
  std::map<std::string, Dtype> types;
  for (const TensorInfo& t : f->tensors) types[t.name] = t.dtype;
  EXPECT_EQ(types.at("blk.0.ffn_gate_exps.weight"), Dtype::kQ4_K);
  // 4 layers: n/8 = 0 and 7n/8 = 3, so layer 3 and (i - 0) % 3 == 2 (layer 2) get more bits.
  EXPECT_EQ(types.at("blk.0.ffn_down_exps.weight"), Dtype::kQ4_K);
  EXPECT_EQ(types.at("blk.2.ffn_down_exps.weight"), Dtype::kQ6_K);
  EXPECT_EQ(types.at("blk.3.ffn_down_exps.weight"), Dtype::kQ6_K);
  EXPECT_EQ(types.at("blk.0.ffn_gate_inp.weight"), Dtype::kF32);
  EXPECT_EQ(types.at("blk.0.attn_k_norm.weight"), Dtype::kF32);
  EXPECT_EQ(types.at("output.weight"), Dtype::kQ6_K);
  EXPECT_EQ(f->tensors.size(), 3 + 4 * 12u);  // 12 a layer: norms, q/k/v/o, router, experts
  for (const TensorInfo& t : f->tensors) EXPECT_EQ(t.begin % 32, 0u) << t.name;
  auto spec = ModelSpecFromGguf(*f);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->layers.size(), 4u);
  EXPECT_EQ(spec->layers[0].mlp.num_experts, 128);
  EXPECT_EQ(spec->layers[0].mlp.expert_intermediate_size, 768);
  EXPECT_EQ(spec->layers[0].attention.num_kv_heads, 4);
  EXPECT_EQ(spec->layers[0].attention.head_dim, 128);
  EXPECT_EQ(spec->max_position_embeddings, 40960);
  EXPECT_EQ(spec->vocab_size, 151936);
}

// Gemma 4 as llama.cpp's converter would write it and read back: the full and sliding head
// sizes, the KV-shared tail (no attn_k/attn_v there), the per-layer embeddings, and the
// 26B-A4B's dense FFN beside its experts.
TEST(SynthesizeGguf, Gemma4ReadsBack) {
  auto spec_of = [](const char* id) {
    auto m = FindCatalogModel(id);
    EXPECT_TRUE(m.ok());
    auto s = ModelSpecFromConfigJson(m->config_json, id);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return *s;
  };
  auto f = SynthesizeGguf(spec_of("gemma-4-e2b-it"), GgufFtype::kQ8_0, "e2b-Q8_0.gguf");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  std::map<std::string, Shape> shapes;
  for (const TensorInfo& t : f->tensors) shapes[t.name] = t.shape;
  EXPECT_TRUE(shapes.count("blk.14.attn_k.weight"));
  EXPECT_FALSE(shapes.count("blk.15.attn_k.weight"));
  EXPECT_EQ(shapes.at("per_layer_token_embd.weight"), (Shape{262144, 35 * 256}));
  // A published E2B Q4_K_M file's table: per_layer_token_embd Q6_K 1,926.8 MB, token_embd
  // Q6_K 330.3 MB.
  auto q4 = SynthesizeGguf(spec_of("gemma-4-e2b-it"), GgufFtype::kQ4_K_M, "e2b-Q4_K_M.gguf");
  ASSERT_TRUE(q4.ok());
  for (const TensorInfo& t : q4->tensors) {
    if (t.name == "per_layer_token_embd.weight") {
      EXPECT_EQ(t.dtype, Dtype::kQ6_K);
      EXPECT_EQ(t.bytes(), 1926758400u);
    }
    if (t.name == "token_embd.weight") EXPECT_EQ(t.bytes(), 330301440u);
  }
  auto back = ModelSpecFromGguf(*f);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->layers.size(), 35u);
  for (size_t i = 0; i < 35; ++i) {
    EXPECT_EQ(back->layers[i].attention.kv_shared, i >= 15) << i;
    EXPECT_EQ(back->layers[i].attention.head_dim, (i + 1) % 5 == 0 ? 512 : 256) << i;
  }
  auto moe = SynthesizeGguf(spec_of("gemma-4-26b-a4b-it"), GgufFtype::kQ4_K_M, "26b.gguf");
  ASSERT_TRUE(moe.ok()) << moe.status().ToString();
  auto m = ModelSpecFromGguf(*moe);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->layers[0].mlp.num_experts, 128);
  EXPECT_EQ(m->layers[0].mlp.expert_intermediate_size, 704);
  EXPECT_EQ(m->layers[0].mlp.shared_intermediate_size, 2112);
  EXPECT_EQ(m->layers[5].attention.num_kv_heads, 2);
  EXPECT_EQ(m->layers[5].attention.head_dim, 512);
  EXPECT_EQ(m->layers[0].attention.num_kv_heads, 8);
}

// GLM-4.5-Air as the converter writes it (Glm4MoeModel): 46 decoder blocks and the NextN
// block 46 (a whole layer plus its nextn.* tensors), biased q/k/v, post_attention_norm, a
// dense block 0, a shared expert and the router's exp_probs_b. Public llama.cpp loads of
// GLM-4.5-Air files print what it must give: "model params = 110.469 B" for every full file
// (ik_llama.cpp threads, code-index files 39275681598, 39309540918), a file of 803 tensors
// ("done_getting_tensors: wrong number of tensors; expected 803, got 757" in a loader that
// did not yet read the 46 exp_probs_b) and, for a Q8_0 file with the three large nextn.*
// tensors removed, "model params = 109.194 B", "model size = 108.119 GiB" (file 39218284239).
TEST(SynthesizeGguf, Glm45AirAsTheConverterWritesIt) {
  const GgufFile gguf = CatalogGguf("glm-4.5-air", GgufFtype::kQ8_0);
  ASSERT_FALSE(gguf.tensors.empty());
  const GgufFile* f = &gguf;
  EXPECT_EQ(f->Architecture(), "glm4moe");
  EXPECT_EQ(f->tensors.size(), 803u);
  uint64_t params = 0, bytes = 0, nextn_params = 0, nextn_bytes = 0;
  std::map<std::string, Dtype> types;
  for (const TensorInfo& t : f->tensors) {
    types[t.name] = t.dtype;
    params += t.elements;
    bytes += t.bytes();
    if (t.name.find(".nextn.") != std::string::npos) {
      nextn_params += t.elements;
      nextn_bytes += t.bytes();
    }
  }
  EXPECT_EQ(params, 110468824832u);  // 110.469 B
  EXPECT_EQ((params - nextn_params + 500000) / 1000000, 109194u);
  // 108.119 GiB without the nextn tensors (the eh_proj, embed_tokens and shared_head_head
  // that the 109.194 B file dropped; its two small norms are within the print's rounding).
  EXPECT_NEAR((bytes - nextn_bytes) / 1073741824.0, 108.119, 0.001);
  EXPECT_EQ(types.at("blk.0.ffn_down.weight"), Dtype::kQ8_0);  // the dense block
  EXPECT_EQ(types.at("blk.1.exp_probs_b.bias"), Dtype::kF32);
  EXPECT_EQ(types.at("blk.1.attn_q.bias"), Dtype::kF32);
  EXPECT_TRUE(types.count("blk.46.ffn_gate_exps.weight"));
  EXPECT_TRUE(types.count("blk.46.nextn.eh_proj.weight"));
  EXPECT_TRUE(types.count("blk.45.post_attention_norm.weight"));
  EXPECT_FALSE(types.count("blk.45.ffn_norm.weight"));
  // Read back: 46 decoder layers (the NextN block has no KV cache and is not run), 128
  // experts from block 1, one shared expert of 1,408.
  auto back = ModelSpecFromGguf(*f);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_FALSE(back->generic);
  EXPECT_EQ(back->family, "glm4_moe");
  EXPECT_EQ(back->layers.size(), 46u);
  EXPECT_EQ(back->mtp_layers, 1);
  EXPECT_EQ(back->layers[0].mlp.kind, MlpKind::kDense);
  EXPECT_EQ(back->layers[1].mlp.num_experts, 128);
  EXPECT_EQ(back->layers[1].mlp.shared_intermediate_size, 1408);
  EXPECT_TRUE(back->layers[1].mlp.router_score_bias);
  EXPECT_TRUE(back->layers[1].attention.qkv_bias);
  EXPECT_EQ(back->layers[1].attention.num_kv_heads, 8);
  EXPECT_EQ(back->layers[1].attention.head_dim, 128);
}

// DeepSeek-V2-Lite as DeepseekV2Model writes it (MLA through kv_a_mqa, kv_b split into k_b
// and v_b) and quantized to Q4_0. A public load of a DeepSeek-V2-Lite-Chat Q4_0 file
// (code-index file 60665970451, a file of the older kv_b layout, whose Q4_0 bytes are the
// same: every row of k_b, v_b and kv_b is whole 32-blocks) prints "model params = 15.71 B",
// "file size = 8.29 GiB", 108 f32, 1 q6_K and 268 q4_0 tensors (295 once kv_b is split), and
// model buffers of 112.50 MiB (CPU_Mapped, token_embd) + 8376.26 MiB.
TEST(SynthesizeGguf, DeepSeekV2LiteMlaAsTheConverterWritesIt) {
  const GgufFile gguf = CatalogGguf("deepseek-v2-lite", GgufFtype::kQ4_0);
  ASSERT_FALSE(gguf.tensors.empty());
  const GgufFile* f = &gguf;
  EXPECT_EQ(f->Architecture(), "deepseek2");
  uint64_t params = 0, bytes = 0;
  std::map<Dtype, int> count;
  std::map<std::string, TensorInfo> by_name;
  for (const TensorInfo& t : f->tensors) {
    params += t.elements;
    bytes += t.bytes();
    ++count[t.dtype];
    by_name[t.name] = t;
  }
  EXPECT_EQ((params + 5000000) / 10000000, 1571u);  // 15.71 B
  EXPECT_NEAR(bytes / 1048576.0, 112.50 + 8376.26, 0.01);  // to the print's 0.01 MiB
  EXPECT_EQ(count[Dtype::kF32], 108);
  EXPECT_EQ(count[Dtype::kQ6_K], 1);
  EXPECT_EQ(count[Dtype::kQ4_0], 295);
  EXPECT_EQ(by_name.at("blk.1.attn_k_b.weight").shape, (Shape{16, 512, 128}));
  EXPECT_EQ(by_name.at("blk.1.attn_v_b.weight").shape, (Shape{16, 128, 512}));
  EXPECT_EQ(by_name.at("blk.1.attn_kv_a_mqa.weight").shape, (Shape{576, 2048}));
  // Q4_K_M: k_b's 128-wide rows are not whole 256-blocks and fall back to Q5_0.
  for (const TensorInfo& t : CatalogGguf("deepseek-v2-lite", GgufFtype::kQ4_K_M).tensors) {
    if (t.name == "blk.1.attn_k_b.weight") EXPECT_EQ(t.dtype, Dtype::kQ5_0);
    if (t.name == "blk.1.attn_v_b.weight") EXPECT_EQ(t.dtype, Dtype::kQ4_K);
  }
  // Read back as MLA: the latent of 512 + the 64-wide rope part per token.
  auto back = ModelSpecFromGguf(*f);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->family, "deepseek_v2");
  ASSERT_EQ(back->layers.size(), 27u);
  const AttentionSpec& a = back->layers[1].attention;
  EXPECT_EQ(a.kind, AttentionKind::kMla);
  EXPECT_EQ(a.kv_lora_rank, 512);
  EXPECT_EQ(a.qk_rope_head_dim, 64);
  EXPECT_EQ(a.qk_nope_head_dim, 128);
  EXPECT_EQ(a.v_head_dim, 128);
  EXPECT_EQ(back->layers[0].mlp.kind, MlpKind::kDense);
  EXPECT_EQ(back->layers[1].mlp.num_experts, 64);
  EXPECT_EQ(back->layers[1].mlp.num_shared_experts, 2);
  // DeepSeek-R1 from its FP8 checkpoint, Q4_K_M: "model params = 671.026 B"; a split-layout
  // file prints "model size = 376.710 GiB" (ik_llama.cpp logs, code-index files 17440668196,
  // 17690178283; a kv_b-layout file 376.650 GiB, its kv_b whole Q4_K where k_b falls back).
  uint64_t r1_params = 0, r1_bytes = 0;
  for (const TensorInfo& t : CatalogGguf("deepseek-r1", GgufFtype::kQ4_K_M).tensors) {
    r1_params += t.elements;
    r1_bytes += t.bytes();
  }
  EXPECT_EQ((r1_params + 500000) / 1000000, 671026u);
  EXPECT_NEAR(r1_bytes / 1073741824.0, 376.710, 0.001);
}

// MiniMax-M2 as MiniMaxM2Model writes it: q/k norms over all heads, 256 experts, exp_probs_b;
// llama-bench rows of MiniMax-M2.x files print "228.69 B" params (code-index file
// 63638050291, an Unsloth Dynamic file, so its size is not llama-quantize's mix).
TEST(SynthesizeGguf, MiniMaxM2WholeHeadNorms) {
  const GgufFile gguf = CatalogGguf("minimax-m2", GgufFtype::kQ4_K_M);
  ASSERT_FALSE(gguf.tensors.empty());
  const GgufFile* f = &gguf;
  EXPECT_EQ(f->Architecture(), "minimax-m2");
  uint64_t params = 0;
  std::map<std::string, Shape> shapes;
  for (const TensorInfo& t : f->tensors) {
    params += t.elements;
    shapes[t.name] = t.shape;
  }
  EXPECT_EQ((params + 5000000) / 10000000, 22869u);
  EXPECT_EQ(shapes.at("blk.0.attn_q_norm.weight"), (Shape{48 * 128}));
  EXPECT_EQ(shapes.at("blk.0.attn_k_norm.weight"), (Shape{8 * 128}));
  EXPECT_TRUE(shapes.count("blk.0.exp_probs_b.bias"));
  auto back = ModelSpecFromGguf(*f);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->family, "minimax_m2");
  EXPECT_FALSE(back->generic);
}

// Qwen3.5-27B as Qwen3_5TextModel converts it (fc0fe4004) and llama-quantize makes Q4_K_S of
// it. A public llama-server load of such a file (validation/llamacpp r42, code-index file
// 58671331675) prints: 851 tensors, "type f32: 353 tensors, q4_K: 485, q5_K: 12, q6_K: 1",
// "model params = 26.90 B" and model buffers of 8740.26 + 6096.65 MiB.
TEST(SynthesizeGguf, Qwen35HybridAsTheConverterWritesIt) {
  const GgufFile f = CatalogGguf("qwen3.5-27b", GgufFtype::kQ4_K_S);
  std::map<Dtype, int> count;
  std::map<std::string, const TensorInfo*> by_name;
  uint64_t bytes = 0, params = 0;
  for (const TensorInfo& t : f.tensors) {
    ++count[t.dtype];
    by_name[t.name] = &t;
    bytes += t.bytes();
    params += t.elements;
  }
  EXPECT_EQ(f.tensors.size(), 851u);
  EXPECT_EQ(count[Dtype::kF32], 353);
  EXPECT_EQ(count[Dtype::kQ4_K], 485);
  EXPECT_EQ(count[Dtype::kQ5_K], 12);
  EXPECT_EQ(count[Dtype::kQ6_K], 1);
  EXPECT_NEAR(static_cast<double>(bytes) / 1048576.0, 8740.26 + 6096.65, 0.01);
  EXPECT_NEAR(static_cast<double>(params) / 1e9, 26.90, 0.005);
  ASSERT_TRUE(by_name.count("blk.0.attn_qkv.weight"));
  // q and k of 16 heads x 128, v of 48 heads x 128; the gated q of 24 heads x 256 x 2.
  EXPECT_EQ(by_name["blk.0.attn_qkv.weight"]->shape, (Shape{10240, 5120}));
  EXPECT_EQ(by_name["blk.0.ssm_conv1d.weight"]->shape, (Shape{10240, 4}));
  EXPECT_EQ(by_name["blk.0.ssm_conv1d.weight"]->dtype, Dtype::kF32);
  EXPECT_EQ(by_name["blk.0.ssm_beta.weight"]->shape, (Shape{48, 5120}));
  EXPECT_EQ(by_name["blk.3.attn_q.weight"]->shape, (Shape{12288, 5120}));
  EXPECT_FALSE(by_name.count("blk.3.attn_qkv.weight"));
  EXPECT_FALSE(by_name.count("blk.0.attn_v.weight"));
  auto back = ModelSpecFromGguf(f);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->layers.size(), 64u);
  EXPECT_EQ(back->layers[0].attention.kind, AttentionKind::kLinear);
  EXPECT_EQ(back->layers[0].attention.linear_num_value_heads, 48);
  EXPECT_EQ(back->layers[0].attention.linear_value_head_dim, 128);
  EXPECT_EQ(back->layers[3].attention.kind, AttentionKind::kFull);
  EXPECT_EQ(back->layers[3].attention.num_kv_heads, 4);
  EXPECT_EQ(back->layers[3].attention.head_dim, 256);
  EXPECT_TRUE(back->warnings.empty()) << back->warnings.front();
}

// Qwen3.6-35B-A3B (qwen35moe) and Qwen3-Next-80B-A3B (qwen3next, its beta and alpha as one
// ssm_ba): the parameters llama.cpp counts in published files, ggml-org's Qwen3.6-35B-A3B
// Q4_K_M "n_params 34660610688" (a run record, code-index file 71607234183) and llama-bench's
// "79.67 B" for every Qwen3-Next Q4_K_M file (code-index files 71040152892, 60407381838).
TEST(SynthesizeGguf, Qwen36MoeAndQwen3NextHybrids) {
  auto params_of = [](const GgufFile& f) {
    uint64_t n = 0;
    for (const TensorInfo& t : f.tensors) n += t.elements;
    return n;
  };
  const GgufFile moe = CatalogGguf("qwen3.6-35b-a3b", GgufFtype::kQ4_K_M);
  EXPECT_EQ(params_of(moe), 34660610688u);
  std::map<std::string, Dtype> types;
  for (const TensorInfo& t : moe.tensors) types[t.name] = t.dtype;
  EXPECT_EQ(types.at("blk.0.attn_qkv.weight"), Dtype::kQ5_K);
  EXPECT_EQ(types.at("blk.3.attn_v.weight"), Dtype::kQ6_K);
  EXPECT_EQ(types.at("blk.23.attn_v.weight"), Dtype::kQ4_K);
  EXPECT_EQ(types.at("blk.0.ffn_gate_inp_shexp.weight"), Dtype::kF32);
  EXPECT_EQ(types.at("blk.0.ffn_down_exps.weight"), Dtype::kQ6_K);
  const GgufFile next = CatalogGguf("qwen3-next-80b-a3b-instruct", GgufFtype::kQ4_K_M);
  EXPECT_NEAR(static_cast<double>(params_of(next)) / 1e9, 79.67, 0.005);
  bool ba = false;
  for (const TensorInfo& t : next.tensors) {
    if (t.name == "blk.0.ssm_ba.weight") ba = t.shape == Shape{64, 2048};
  }
  EXPECT_TRUE(ba);
  auto back = ModelSpecFromGguf(next);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->layers[47].attention.kind, AttentionKind::kFull);
  EXPECT_EQ(back->layers[46].attention.kind, AttentionKind::kLinear);
  EXPECT_EQ(back->layers[0].mlp.num_experts, 512);
  EXPECT_TRUE(back->layers[0].mlp.shared_expert_gate);
}

// The vision-language models convert their text half only (the visual.* tensors go to the
// mmproj file): Qwen2.5-VL-7B's text model has Qwen2.5-7B's shapes, so the same bytes.
TEST(SynthesizeGguf, VisionLanguageModelsConvertTheirTextHalf) {
  auto bytes_of = [](const GgufFile& f) {
    uint64_t n = 0;
    for (const TensorInfo& t : f.tensors) n += t.bytes();
    return n;
  };
  const GgufFile vl = CatalogGguf("qwen2.5-vl-7b-instruct", GgufFtype::kQ4_K_M);
  EXPECT_EQ(vl.Architecture(), "qwen2vl");
  EXPECT_EQ(bytes_of(vl), bytes_of(CatalogGguf("qwen2.5-7b-instruct", GgufFtype::kQ4_K_M)));
  for (const TensorInfo& t : vl.tensors) EXPECT_TRUE(t.name.find("visual") == t.name.npos);
  const GgufFile moe = CatalogGguf("qwen3-vl-30b-a3b-instruct", GgufFtype::kQ4_K_M);
  EXPECT_EQ(moe.Architecture(), "qwen3vlmoe");
  auto back = ModelSpecFromGguf(moe);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->family, "qwen3_moe");
  EXPECT_EQ(back->layers[0].mlp.num_experts, 128);
}

TEST(SynthesizeGguf, RefusesWhatItCannotLayOut) {
  ModelSpec s = Qwen3Moe();
  s.family = "ernie4_5_moe";  // a family with no converter layout here
  EXPECT_EQ(SynthesizeGguf(s, GgufFtype::kQ4_K_M, "x").status().code(), Code::kUnsupported);
  ModelSpec q = Qwen3Moe();
  q.quant.method = QuantMethod::kAwq;
  EXPECT_EQ(SynthesizeGguf(q, GgufFtype::kQ4_K_M, "x").status().code(),
            Code::kInvalidArgument);
  // MXFP4 (kept experts) needs a checkpoint that ships them.
  EXPECT_EQ(SynthesizeGguf(Qwen3Moe(), GgufFtype::kMxfp4, "x").status().code(),
            Code::kUnsupported);
}

}  // namespace
}  // namespace vramfit
