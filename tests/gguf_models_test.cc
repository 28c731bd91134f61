// End-to-end GGUF: hollow GGUF files (real headers, sparse data) of Qwen3-8B, Qwen3-30B-A3B,
// a Qwen3.6-style hybrid (qwen35moe), DeepSeek-V2-Lite (MLA) and Gemma 3 4B (sliding window)
// are written by the test-side writer, inspected through the public entry point, and checked
// exactly: total bytes, bytes by ggml type, parameters (published counts where the tensor
// list is the real one), and the spec's layer kinds. Split sets, mmproj files, directories
// and the GGUF audit findings too.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <map>

#include "model/kv_state.h"
#include "testutil/gguf_writer.h"
#include "testutil/hollow.h"
#include "vramfit/inspect.h"

namespace vramfit {
namespace {

using testing::GgufWriter;
using testing::GgufTensorBytes;

// A model being written, with its expected totals summed independently of the reader.
struct Gen {
  GgufWriter w;
  uint64_t params = 0, bytes = 0;
  std::map<Dtype, uint64_t> by_type;
  void T(const std::string& name, Dtype t, std::vector<uint64_t> shape) {
    uint64_t n = 1;
    for (uint64_t d : shape) n *= d;
    params += n;
    const uint64_t b = GgufTensorBytes(t, shape);
    bytes += b;
    by_type[t] += b;
    w.Tensor(name, t, shape);
  }
  void Norm(const std::string& name, uint64_t n) { T(name, Dtype::kF32, {n}); }
};

std::string L(int i, const char* leaf) { return "blk." + std::to_string(i) + "." + leaf; }

void Common(Gen& g, const std::string& arch, uint32_t layers, uint32_t hidden, uint32_t ctx,
            uint32_t ftype) {
  g.w.Str("general.architecture", arch);
  g.w.Str("general.name", "test");
  g.w.U32("general.file_type", ftype);
  g.w.U32("general.quantization_version", 2);
  g.w.U32(arch + ".block_count", layers);
  g.w.U32(arch + ".embedding_length", hidden);
  g.w.U32(arch + ".context_length", ctx);
}

// The attention keys: head counts and head sizes.
void Heads(Gen& g, const std::string& arch, uint32_t heads, uint32_t kv, uint32_t head_dim) {
  g.w.U32(arch + ".attention.head_count", heads);
  g.w.U32(arch + ".attention.head_count_kv", kv);
  g.w.U32(arch + ".attention.key_length", head_dim);
  g.w.U32(arch + ".attention.value_length", head_dim);
}

// A layer's q, k, v, o (v in its own type, as Q4_K_M keeps it) and the q/k norms.
void Attention(Gen& g, int i, uint64_t hidden, uint64_t q_rows, uint64_t kv_rows, uint64_t o_cols,
               Dtype t, Dtype v, uint64_t head_dim) {
  g.T(L(i, "attn_q.weight"), t, {q_rows, hidden});
  g.T(L(i, "attn_k.weight"), t, {kv_rows, hidden});
  g.T(L(i, "attn_v.weight"), v, {kv_rows, hidden});
  g.T(L(i, "attn_output.weight"), t, {hidden, o_cols});
  g.Norm(L(i, "attn_q_norm.weight"), head_dim);
  g.Norm(L(i, "attn_k_norm.weight"), head_dim);
}

// One Qwen3-8B layer in a Q4_K_M-like mix (attn_v and half the ffn_down in Q6_K, as
// llama-quant does).
void Qwen3DenseLayer(Gen& g, int i) {
  g.Norm(L(i, "attn_norm.weight"), 4096);
  Attention(g, i, 4096, 4096, 1024, 4096, Dtype::kQ4_K, Dtype::kQ6_K, 128);
  g.Norm(L(i, "ffn_norm.weight"), 4096);
  g.T(L(i, "ffn_gate.weight"), Dtype::kQ4_K, {12288, 4096});
  g.T(L(i, "ffn_up.weight"), Dtype::kQ4_K, {12288, 4096});
  g.T(L(i, "ffn_down.weight"), i % 2 ? Dtype::kQ4_K : Dtype::kQ6_K, {4096, 12288});
}

// (arch: also the vision-language text file's "qwen3vl", the same blocks.)
void Qwen3DenseKeys(Gen& g, const std::string& arch = "qwen3") {
  Common(g, arch, 36, 4096, 40960, 15);
  g.w.U32(arch + ".feed_forward_length", 12288);
  Heads(g, arch, 32, 8, 128);
}

Gen Qwen3Dense(const std::string& arch = "qwen3") {
  Gen g;
  Qwen3DenseKeys(g, arch);
  g.w.StrArray("tokenizer.ggml.tokens", 151936);
  g.T("token_embd.weight", Dtype::kQ4_K, {151936, 4096});
  for (int i = 0; i < 36; ++i) Qwen3DenseLayer(g, i);
  g.Norm("output_norm.weight", 4096);
  g.T("output.weight", Dtype::kQ6_K, {151936, 4096});
  return g;
}

Gen Qwen3Moe() {
  Gen g;
  Common(g, "qwen3moe", 48, 2048, 40960, 15);
  g.w.U32("qwen3moe.feed_forward_length", 6144);
  Heads(g, "qwen3moe", 32, 4, 128);
  g.w.U32("qwen3moe.expert_count", 128);
  g.w.U32("qwen3moe.expert_used_count", 8);
  g.w.U32("qwen3moe.expert_feed_forward_length", 768);
  g.T("token_embd.weight", Dtype::kQ4_K, {151936, 2048});
  for (int i = 0; i < 48; ++i) {
    g.Norm(L(i, "attn_norm.weight"), 2048);
    Attention(g, i, 2048, 4096, 512, 4096, Dtype::kQ4_K, Dtype::kQ6_K, 128);
    g.Norm(L(i, "ffn_norm.weight"), 2048);
    g.T(L(i, "ffn_gate_inp.weight"), Dtype::kF32, {128, 2048});
    g.T(L(i, "ffn_gate_exps.weight"), Dtype::kQ4_K, {128, 768, 2048});
    g.T(L(i, "ffn_up_exps.weight"), Dtype::kQ4_K, {128, 768, 2048});
    g.T(L(i, "ffn_down_exps.weight"), Dtype::kQ6_K, {128, 2048, 768});
  }
  g.Norm("output_norm.weight", 2048);
  g.T("output.weight", Dtype::kQ6_K, {151936, 2048});
  return g;
}

// A Qwen3.6-35B-A3B-style hybrid: 40 layers, every 4th full attention (with an output gate:
// q projects to twice the heads), the others Gated DeltaNet; 256 experts and a shared one.
Gen Qwen35Moe() {
  Gen g;
  Common(g, "qwen35moe", 40, 2048, 262144, 15);
  Heads(g, "qwen35moe", 16, 2, 256);
  g.w.U32("qwen35moe.full_attention_interval", 4);
  g.w.U32("qwen35moe.ssm.conv_kernel", 4);
  g.w.U32("qwen35moe.ssm.state_size", 128);
  g.w.U32("qwen35moe.ssm.group_count", 16);
  g.w.U32("qwen35moe.ssm.time_step_rank", 32);
  g.w.U32("qwen35moe.ssm.inner_size", 4096);
  g.w.U32("qwen35moe.expert_count", 256);
  g.w.U32("qwen35moe.expert_used_count", 8);
  g.w.U32("qwen35moe.expert_feed_forward_length", 512);
  g.w.U32("qwen35moe.expert_shared_feed_forward_length", 512);
  g.T("token_embd.weight", Dtype::kQ4_K, {248320, 2048});
  for (int i = 0; i < 40; ++i) {
    g.Norm(L(i, "attn_norm.weight"), 2048);
    if ((i + 1) % 4 == 0) {
      Attention(g, i, 2048, 8192, 512, 4096, Dtype::kQ4_K, Dtype::kQ6_K, 256);
    } else {
      g.T(L(i, "attn_qkv.weight"), Dtype::kQ4_K, {8192, 2048});
      g.T(L(i, "attn_gate.weight"), Dtype::kQ4_K, {4096, 2048});
      g.T(L(i, "ssm_beta.weight"), Dtype::kQ8_0, {32, 2048});
      g.T(L(i, "ssm_alpha.weight"), Dtype::kQ8_0, {32, 2048});
      g.T(L(i, "ssm_conv1d.weight"), Dtype::kF32, {8192, 4});
      g.Norm(L(i, "ssm_a"), 32);
      g.Norm(L(i, "ssm_dt.bias"), 32);
      g.Norm(L(i, "ssm_norm.weight"), 128);
      g.T(L(i, "ssm_out.weight"), Dtype::kQ4_K, {2048, 4096});
    }
    g.Norm(L(i, "post_attention_norm.weight"), 2048);
    g.T(L(i, "ffn_gate_inp.weight"), Dtype::kF32, {256, 2048});
    g.T(L(i, "ffn_gate_exps.weight"), Dtype::kQ4_K, {256, 512, 2048});
    g.T(L(i, "ffn_up_exps.weight"), Dtype::kQ4_K, {256, 512, 2048});
    g.T(L(i, "ffn_down_exps.weight"), Dtype::kQ6_K, {256, 2048, 512});
    g.T(L(i, "ffn_gate_inp_shexp.weight"), Dtype::kF32, {2048});
    g.T(L(i, "ffn_gate_shexp.weight"), Dtype::kQ4_K, {512, 2048});
    g.T(L(i, "ffn_up_shexp.weight"), Dtype::kQ4_K, {512, 2048});
    g.T(L(i, "ffn_down_shexp.weight"), Dtype::kQ6_K, {2048, 512});
  }
  g.Norm("output_norm.weight", 2048);
  g.T("output.weight", Dtype::kQ6_K, {248320, 2048});
  return g;
}

// DeepSeek-V2-Lite (MLA, q_lora_rank 0): layer 0 dense, 26 MoE layers of 64 experts and two
// shared ones. 1408-wide tensors are not a whole number of 256-blocks: Q8_0, as converters do.
Gen Deepseek2() {
  Gen g;
  Common(g, "deepseek2", 27, 2048, 163840, 15);
  g.w.U32("deepseek2.feed_forward_length", 10944);
  g.w.U32("deepseek2.attention.head_count", 16);
  g.w.U32("deepseek2.attention.head_count_kv", 1);
  g.w.U32("deepseek2.attention.key_length", 576);
  g.w.U32("deepseek2.attention.value_length", 512);
  g.w.U32("deepseek2.attention.key_length_mla", 192);
  g.w.U32("deepseek2.attention.value_length_mla", 128);
  g.w.U32("deepseek2.attention.kv_lora_rank", 512);
  g.w.U32("deepseek2.rope.dimension_count", 64);
  g.w.U32("deepseek2.expert_count", 64);
  g.w.U32("deepseek2.expert_used_count", 6);
  g.w.U32("deepseek2.expert_shared_count", 2);
  g.w.U32("deepseek2.expert_feed_forward_length", 1408);
  g.w.U32("deepseek2.leading_dense_block_count", 1);
  g.T("token_embd.weight", Dtype::kQ4_K, {102400, 2048});
  for (int i = 0; i < 27; ++i) {
    g.Norm(L(i, "attn_norm.weight"), 2048);
    g.T(L(i, "attn_q.weight"), Dtype::kQ4_K, {3072, 2048});
    g.T(L(i, "attn_kv_a_mqa.weight"), Dtype::kQ4_K, {576, 2048});
    g.Norm(L(i, "attn_kv_a_norm.weight"), 512);
    g.T(L(i, "attn_kv_b.weight"), Dtype::kQ4_K, {4096, 512});
    g.T(L(i, "attn_output.weight"), Dtype::kQ4_K, {2048, 2048});
    g.Norm(L(i, "ffn_norm.weight"), 2048);
    if (i == 0) {
      g.T(L(i, "ffn_gate.weight"), Dtype::kQ8_0, {10944, 2048});
      g.T(L(i, "ffn_up.weight"), Dtype::kQ8_0, {10944, 2048});
      g.T(L(i, "ffn_down.weight"), Dtype::kQ8_0, {2048, 10944});
      continue;
    }
    g.T(L(i, "ffn_gate_inp.weight"), Dtype::kF32, {64, 2048});
    g.T(L(i, "ffn_gate_exps.weight"), Dtype::kQ4_K, {64, 1408, 2048});
    g.T(L(i, "ffn_up_exps.weight"), Dtype::kQ4_K, {64, 1408, 2048});
    g.T(L(i, "ffn_down_exps.weight"), Dtype::kQ8_0, {64, 2048, 1408});
    g.T(L(i, "ffn_gate_shexp.weight"), Dtype::kQ4_K, {2816, 2048});
    g.T(L(i, "ffn_up_shexp.weight"), Dtype::kQ4_K, {2816, 2048});
    g.T(L(i, "ffn_down_shexp.weight"), Dtype::kQ4_K, {2048, 2816});
  }
  g.Norm("output_norm.weight", 2048);
  g.T("output.weight", Dtype::kQ6_K, {102400, 2048});
  return g;
}

// Gemma 3 4B's text model: 34 layers, 5 local : 1 global with a 1024-token window, tied.
Gen Gemma3() {
  Gen g;
  Common(g, "gemma3", 34, 2560, 131072, 7);
  g.w.U32("gemma3.feed_forward_length", 10240);
  Heads(g, "gemma3", 8, 4, 256);
  g.w.U32("gemma3.attention.sliding_window", 1024);
  g.T("token_embd.weight", Dtype::kQ8_0, {262208, 2560});
  for (int i = 0; i < 34; ++i) {
    g.Norm(L(i, "attn_norm.weight"), 2560);
    Attention(g, i, 2560, 2048, 1024, 2048, Dtype::kQ8_0, Dtype::kQ8_0, 256);
    g.Norm(L(i, "post_attention_norm.weight"), 2560);
    g.Norm(L(i, "ffn_norm.weight"), 2560);
    g.T(L(i, "ffn_gate.weight"), Dtype::kQ8_0, {10240, 2560});
    g.T(L(i, "ffn_up.weight"), Dtype::kQ8_0, {10240, 2560});
    g.T(L(i, "ffn_down.weight"), Dtype::kQ8_0, {2560, 10240});
    g.Norm(L(i, "post_ffw_norm.weight"), 2560);
  }
  g.Norm("output_norm.weight", 2560);
  return g;
}

// Gemma 4 E2B's text model as llama.cpp's converter writes it: the full layers' head size in
// key_length (512), the sliding ones' in key_length_swa (256), the pattern as a per-layer bool
// array (4 sliding : 1 full), the last 20 layers sharing KV (shared_kv_layers), and the
// per-layer token embeddings (per_layer_token_embd, an input tensor like token_embd).
Gen Gemma4E2b() {
  Gen g;
  Common(g, "gemma4", 35, 1536, 131072, 7);
  g.w.U32("gemma4.feed_forward_length", 6144);
  g.w.U32("gemma4.attention.head_count", 8);
  g.w.U32("gemma4.attention.head_count_kv", 1);
  g.w.U32("gemma4.attention.key_length", 512);
  g.w.U32("gemma4.attention.value_length", 512);
  g.w.U32("gemma4.attention.key_length_swa", 256);
  g.w.U32("gemma4.attention.value_length_swa", 256);
  g.w.U32("gemma4.attention.sliding_window", 512);
  g.w.U32("gemma4.attention.shared_kv_layers", 20);
  std::vector<bool> pattern;
  for (int i = 0; i < 35; ++i) pattern.push_back((i + 1) % 5 != 0);
  g.w.BoolArray("gemma4.attention.sliding_window_pattern", pattern);
  g.T("token_embd.weight", Dtype::kQ8_0, {262144, 1536});
  g.T("per_layer_token_embd.weight", Dtype::kQ8_0, {262144, 35 * 256});
  for (int i = 0; i < 35; ++i) {
    const uint64_t hd = (i + 1) % 5 == 0 ? 512 : 256;
    g.Norm(L(i, "attn_norm.weight"), 1536);
    g.T(L(i, "attn_q.weight"), Dtype::kQ8_0, {8 * hd, 1536});
    if (i < 15) {
      g.T(L(i, "attn_k.weight"), Dtype::kQ8_0, {hd, 1536});
      g.T(L(i, "attn_v.weight"), Dtype::kQ8_0, {hd, 1536});
    }
    g.T(L(i, "attn_output.weight"), Dtype::kQ8_0, {1536, 8 * hd});
    const uint64_t ffn = i < 15 ? 6144 : 12288;
    g.T(L(i, "ffn_gate.weight"), Dtype::kQ8_0, {ffn, 1536});
    g.T(L(i, "ffn_up.weight"), Dtype::kQ8_0, {ffn, 1536});
    g.T(L(i, "ffn_down.weight"), Dtype::kQ8_0, {1536, ffn});
  }
  g.Norm("output_norm.weight", 1536);
  return g;
}

class GgufModels : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::MakeTempDir("gguf-models"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // Writes the model and inspects it; checks totals against the generator's sums.
  Inventory Check(const Gen& g, const std::string& name) {
    const std::string path = dir_ + "/" + name;
    g.w.WriteHollow(path);
    auto inv = InspectModel(path, {});
    EXPECT_TRUE(inv.ok()) << inv.status().ToString();
    if (!inv.ok()) return {};
    EXPECT_EQ(inv->total_bytes, g.bytes);
    EXPECT_EQ(inv->parameters, g.params);
    EXPECT_EQ(inv->tensors.size(), g.w.tensor_count());
    std::map<Dtype, uint64_t> by_type;
    for (const auto& d : inv->by_dtype) by_type[d.dtype] = d.bytes;
    EXPECT_EQ(by_type, g.by_type);
    EXPECT_TRUE(inv->has_spec);
    EXPECT_FALSE(inv->synthesized);
    return std::move(*inv);
  }
  bool HasFinding(const Inventory& inv, const std::string& code) {
    for (const auto& f : inv.audit.findings) {
      if (f.code == code) return true;
    }
    return false;
  }
  uint64_t ComponentBytes(const Inventory& inv, Component c) {
    for (const auto& t : inv.by_component) {
      if (t.component == c) return t.bytes;
    }
    return 0;
  }
  std::string dir_;
};

TEST_F(GgufModels, Qwen3DenseInspectsExactly) {
  const Inventory inv = Check(Qwen3Dense(), "Qwen3-8B-Q4_K_M.gguf");
  EXPECT_EQ(inv.parameters, 8190735360u);  // Qwen/Qwen3-8B, published
  EXPECT_EQ(inv.spec.family, "qwen3");
  ASSERT_EQ(inv.spec.layers.size(), 36u);
  EXPECT_EQ(inv.spec.layers[0].attention.num_kv_heads, 8);
  EXPECT_EQ(inv.spec.layers[0].attention.head_dim, 128);
  EXPECT_EQ(inv.spec.layers[0].mlp.intermediate_size, 12288);
  EXPECT_EQ(inv.spec.vocab_size, 151936);
  EXPECT_EQ(inv.spec.max_position_embeddings, 40960);
  EXPECT_FALSE(inv.spec.tie_word_embeddings);
  EXPECT_EQ(inv.quantization.method, "gguf");
  EXPECT_EQ(inv.quantization.format, "Q4_K_M");
  EXPECT_EQ(inv.audit.quantized_linear, 36 * 7);
  EXPECT_EQ(inv.audit.unquantized_linear, 0);
  EXPECT_TRUE(HasFinding(inv, "gguf-type-mix"));
  EXPECT_FALSE(HasFinding(inv, "gguf-file-type-mismatch"));
  EXPECT_FALSE(HasFinding(inv, "undeclared-quantization"));
  EXPECT_FALSE(HasFinding(inv, "missing-lm-head"));
}

// Qwen3-VL-8B's text GGUF (arch qwen3vl, llama.cpp's convert of Qwen3VLForConditionalGeneration):
// Qwen3-8B's blocks and sizes, read with qwen3's rules, not as a generic decoder.
TEST_F(GgufModels, Qwen3VlTextFileReadsAsQwen3) {
  Gen g = Qwen3Dense("qwen3vl");
  g.w.U32("qwen3vl.n_deepstack_layers", 3);
  const Inventory inv = Check(g, "Qwen3-VL-8B-Instruct-Q4_K_M.gguf");
  EXPECT_EQ(inv.parameters, 8190735360u);
  EXPECT_EQ(inv.spec.family, "qwen3");
  EXPECT_FALSE(inv.spec.generic);
  EXPECT_EQ(inv.spec.layers[0].attention.num_kv_heads, 8);
  EXPECT_TRUE(inv.spec.layers[0].attention.qk_norm);
}

TEST_F(GgufModels, Qwen3MoeInspectsExactly) {
  const Inventory inv = Check(Qwen3Moe(), "Qwen3-30B-A3B-Q4_K_M.gguf");
  EXPECT_EQ(inv.parameters, 30532122624u);  // Qwen/Qwen3-30B-A3B, published
  EXPECT_EQ(inv.spec.CountMoeLayers(), 48);
  EXPECT_EQ(inv.spec.layers[5].mlp.num_experts, 128);
  EXPECT_EQ(inv.spec.layers[5].mlp.experts_per_token, 8);
  EXPECT_EQ(inv.spec.layers[5].mlp.expert_intermediate_size, 768);
  EXPECT_EQ(ComponentBytes(inv, Component::kExperts),
            48 * (2 * GgufTensorBytes(Dtype::kQ4_K, {128, 768, 2048}) +
                  GgufTensorBytes(Dtype::kQ6_K, {128, 2048, 768})));
}

TEST_F(GgufModels, Qwen35HybridHasLinearLayersAndTheirState) {
  const Inventory inv = Check(Qwen35Moe(), "Qwen3.6-35B-A3B-Q4_K_M.gguf");
  const ModelSpec& s = inv.spec;
  EXPECT_EQ(s.family, "qwen3_5_moe");
  EXPECT_EQ(s.CountAttention(AttentionKind::kFull), 10);
  EXPECT_EQ(s.CountAttention(AttentionKind::kLinear), 30);
  EXPECT_EQ(s.layers[3].attention.kind, AttentionKind::kFull);
  EXPECT_EQ(s.layers[3].attention.num_kv_heads, 2);
  EXPECT_EQ(s.layers[3].attention.head_dim, 256);
  EXPECT_TRUE(s.layers[3].attention.output_gate);
  const AttentionSpec& lin = s.layers[0].attention;
  EXPECT_EQ(lin.kind, AttentionKind::kLinear);
  EXPECT_EQ(lin.linear_conv_kernel_dim, 4);
  EXPECT_EQ(lin.linear_num_key_heads, 16);
  EXPECT_EQ(lin.linear_num_value_heads, 32);
  EXPECT_EQ(lin.linear_key_head_dim, 128);
  EXPECT_EQ(lin.linear_value_head_dim, 128);
  EXPECT_EQ(s.ssm_state_dtype, Dtype::kF32);
  EXPECT_EQ(s.layers[0].mlp.num_shared_experts, 1);
  EXPECT_EQ(s.layers[0].mlp.shared_intermediate_size, 512);
  EXPECT_TRUE(s.layers[0].mlp.shared_expert_gate);
  // attn_qkv / attn_gate of the delta-net layers count as linear attention, not attention.
  const uint64_t linear = 30 * (GgufTensorBytes(Dtype::kQ4_K, {8192, 2048}) +
                                GgufTensorBytes(Dtype::kQ4_K, {4096, 2048}) +
                                2 * GgufTensorBytes(Dtype::kQ8_0, {32, 2048}) +
                                GgufTensorBytes(Dtype::kF32, {8192, 4}) + 4 * 32 + 4 * 32 +
                                4 * 128 + GgufTensorBytes(Dtype::kQ4_K, {2048, 4096}));
  EXPECT_EQ(ComponentBytes(inv, Component::kLinearAttention), linear);
  // KV only in the 10 full-attention layers (2 KV heads x 2 x 256 x 2 bytes a token each), and
  // a fixed state per sequence in the 30 delta-net ones: conv (2 x 16 x 128 + 32 x 128) x 3 in
  // F16, recurrent 32 x 128 x 128 in F32.
  uint64_t kv_per_token = 0, state = 0;
  for (const LayerSpec& l : s.layers) {
    if (l.attention.kind == AttentionKind::kFull) {
      kv_per_token += KvBytesPerToken(l.attention, 1, 2);
    } else {
      auto st = LinearAttentionState(l.attention, 1, 0, Dtype::kF16, s.ssm_state_dtype);
      ASSERT_TRUE(st.ok()) << st.status().ToString();
      state += st->total();
    }
  }
  EXPECT_EQ(kv_per_token, 10u * 2 * 2 * 256 * 2);
  EXPECT_EQ(state, 30u * ((2 * 16 * 128 + 32 * 128) * 3 * 2 + 32 * 128 * 128 * 4));
  for (const TensorEntry& e : inv.tensors) {
    if (e.info.name == "blk.0.attn_qkv.weight") {
      EXPECT_EQ(e.role, Role::kLinearAttnProj);
    }
    if (e.info.name == "blk.3.attn_q.weight") {
      EXPECT_EQ(e.role, Role::kAttnProj);
    }
  }
}

TEST_F(GgufModels, Deepseek2IsMla) {
  const Inventory inv = Check(Deepseek2(), "DeepSeek-V2-Lite-Q4_K_M.gguf");
  const ModelSpec& s = inv.spec;
  EXPECT_EQ(s.CountAttention(AttentionKind::kMla), 27);
  const AttentionSpec& a = s.layers[1].attention;
  EXPECT_EQ(a.kv_lora_rank, 512);
  EXPECT_EQ(a.qk_rope_head_dim, 64);
  EXPECT_EQ(a.qk_nope_head_dim, 128);
  EXPECT_EQ(a.v_head_dim, 128);
  EXPECT_EQ(a.q_lora_rank, 0);
  EXPECT_EQ(s.layers[0].mlp.kind, MlpKind::kDense);
  EXPECT_EQ(s.layers[0].mlp.intermediate_size, 10944);
  EXPECT_EQ(s.CountMoeLayers(), 26);
  EXPECT_EQ(s.layers[1].mlp.num_shared_experts, 2);
  EXPECT_EQ(s.layers[1].mlp.shared_intermediate_size, 2816);
  // Most projection bytes are Q4_K, as the Q4_K_M label says.
  EXPECT_FALSE(HasFinding(inv, "gguf-file-type-mismatch"));
}

TEST_F(GgufModels, Gemma3SlidesFiveLayersInSix) {
  const Inventory inv = Check(Gemma3(), "gemma-3-4b-it-Q8_0.gguf");
  const ModelSpec& s = inv.spec;
  EXPECT_EQ(s.CountAttention(AttentionKind::kSliding), 29);
  EXPECT_EQ(s.CountAttention(AttentionKind::kFull), 5);
  EXPECT_EQ(s.layers[0].attention.sliding_window, 1024);
  EXPECT_EQ(s.layers[5].attention.kind, AttentionKind::kFull);
  EXPECT_TRUE(s.tie_word_embeddings);
  EXPECT_EQ(s.vocab_size, 262208);  // the embedding's rows (no vocab key, no token list)
  EXPECT_TRUE(HasFinding(inv, "tied-embeddings"));
  EXPECT_EQ(inv.quantization.format, "Q8_0");
}

TEST_F(GgufModels, Gemma4HeadSizesByKindAndSharedKv) {
  const Inventory inv = Check(Gemma4E2b(), "gemma-4-E2B-it-Q8_0.gguf");
  const ModelSpec& s = inv.spec;
  EXPECT_EQ(s.family, "gemma4");
  EXPECT_EQ(s.CountAttention(AttentionKind::kFull), 7);
  EXPECT_EQ(s.layers[0].attention.head_dim, 256);
  EXPECT_EQ(s.layers[4].attention.head_dim, 512);
  EXPECT_EQ(s.layers[0].attention.sliding_window, 512);
  for (size_t i = 0; i < s.layers.size(); ++i)
    EXPECT_EQ(s.layers[i].attention.kv_shared, i >= 15) << i;
  // 12 sliding layers of 1 x 256 and 3 global ones of 1 x 512 hold the KV cache: 2 x (12 x 256
  // + 3 x 512) x 2 B = 18,432 B a token at f16, the shared 20 layers nothing.
  uint64_t per_token = 0;
  for (const LayerSpec& l : s.layers) {
    if (!l.attention.kv_shared)
      per_token += 2 * l.attention.num_kv_heads * l.attention.head_dim * 2;
  }
  EXPECT_EQ(per_token, 18432u);
}

TEST_F(GgufModels, PerLayerHeadCountArrays) {
  Gen g;
  Common(g, "llama", 4, 256, 4096, 1);
  g.w.I32Array("llama.attention.head_count", {4, 4, 8, 8});
  g.w.I32Array("llama.attention.head_count_kv", {1, 2, 0, 4});
  g.w.I32Array("llama.feed_forward_length", {512, 512, 1024, 1024});
  g.T("token_embd.weight", Dtype::kF16, {64, 256});
  const Inventory inv = Check(g, "arrays.gguf");
  ASSERT_EQ(inv.spec.layers.size(), 4u);
  EXPECT_EQ(inv.spec.layers[1].attention.num_kv_heads, 2);
  EXPECT_EQ(inv.spec.layers[2].attention.num_heads, 8);
  EXPECT_EQ(inv.spec.layers[2].attention.num_kv_heads, 0);
  EXPECT_EQ(inv.spec.layers[3].mlp.intermediate_size, 1024);
  EXPECT_EQ(inv.spec.layers[0].attention.head_dim, 64);  // 256 / 4
  EXPECT_EQ(inv.quantization.method, "none");
}

TEST_F(GgufModels, ASplitSetInspectsAsOneModel) {
  const Gen whole = Qwen3Dense();
  // The same tensors in three parts: part 1 holds the metadata and the first third.
  Gen a, b, c;
  Qwen3DenseKeys(a);
  a.w.Raw("split.no", 2, std::string("\0\0", 2));
  a.w.Raw("split.count", 2, std::string("\3\0", 2));
  b.w.Raw("split.no", 2, std::string("\1\0", 2));
  b.w.Raw("split.count", 2, std::string("\3\0", 2));
  c.w.Raw("split.no", 2, std::string("\2\0", 2));
  c.w.Raw("split.count", 2, std::string("\3\0", 2));
  a.w.I32("split.tensors.count", 36 * 11 + 3);
  a.T("token_embd.weight", Dtype::kQ4_K, {151936, 4096});
  for (int i = 0; i < 36; ++i) Qwen3DenseLayer(i < 12 ? a : i < 24 ? b : c, i);
  c.Norm("output_norm.weight", 4096);
  c.T("output.weight", Dtype::kQ6_K, {151936, 4096});
  a.w.WriteHollow(dir_ + "/Qwen3-8B-Q4_K_M-00001-of-00003.gguf");
  b.w.WriteHollow(dir_ + "/Qwen3-8B-Q4_K_M-00002-of-00003.gguf");
  c.w.WriteHollow(dir_ + "/Qwen3-8B-Q4_K_M-00003-of-00003.gguf");
  for (const std::string& model : {dir_ + "/Qwen3-8B-Q4_K_M-00002-of-00003.gguf", dir_}) {
    auto inv = InspectModel(model, {});
    ASSERT_TRUE(inv.ok()) << inv.status().ToString();
    EXPECT_EQ(inv->files.size(), 3u);
    EXPECT_EQ(inv->total_bytes, whole.bytes);
    EXPECT_EQ(inv->parameters, 8190735360u);
    EXPECT_EQ(inv->spec.layers.size(), 36u);
  }
  // A part missing is named.
  std::filesystem::remove(dir_ + "/Qwen3-8B-Q4_K_M-00003-of-00003.gguf");
  auto inv = InspectModel(dir_ + "/Qwen3-8B-Q4_K_M-00001-of-00003.gguf", {});
  ASSERT_FALSE(inv.ok());
  EXPECT_EQ(inv.status().code(), Code::kNotFound);
  EXPECT_NE(inv.status().message().find(
                "part 3 of 3 of the split set, Qwen3-8B-Q4_K_M-00003-of-00003.gguf, does not "
                "exist"),
            std::string::npos)
      << inv.status().message();
}

TEST_F(GgufModels, AnMmprojBesideTheModelIsItsVisionTower) {
  Gen g;
  Common(g, "gemma3", 1, 256, 4096, 1);
  g.w.U32("gemma3.attention.head_count", 4);
  g.T("token_embd.weight", Dtype::kF16, {64, 256});
  g.w.WriteHollow(dir_ + "/model-F16.gguf");
  Gen v;
  v.w.Str("general.architecture", "clip");
  v.T("v.patch_embd.weight", Dtype::kF16, {1152, 3, 14, 14});
  v.T("v.blk.0.attn_q.weight", Dtype::kF16, {1152, 1152});
  v.T("mm.input_projection.weight", Dtype::kF16, {256, 1152});
  v.w.WriteHollow(dir_ + "/mmproj-model-f16.gguf");
  auto inv = InspectModel(dir_, {});
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_EQ(inv->files.size(), 2u);
  EXPECT_EQ(ComponentBytes(*inv, Component::kVision), v.bytes);
  EXPECT_EQ(inv->total_bytes, g.bytes + v.bytes);
  // The mmproj file alone.
  auto alone = InspectModel(dir_ + "/mmproj-model-f16.gguf", {});
  ASSERT_TRUE(alone.ok()) << alone.status().ToString();
  EXPECT_EQ(alone->total_bytes, v.bytes);
  EXPECT_FALSE(alone->has_spec);
}

TEST_F(GgufModels, TwoModelsInOneDirectoryAreNamed) {
  Gen g;
  Common(g, "llama", 1, 256, 4096, 1);
  g.T("token_embd.weight", Dtype::kF16, {64, 256});
  g.w.WriteHollow(dir_ + "/a-F16.gguf");
  g.w.WriteHollow(dir_ + "/a-Q8_0.gguf");
  auto inv = InspectModel(dir_, {});
  ASSERT_FALSE(inv.ok());
  EXPECT_EQ(inv.status().message(),
            dir_ + ": holds 2 GGUF models (a-F16.gguf, a-Q8_0.gguf); name the file to inspect");
}

TEST_F(GgufModels, AuditNamesALabelTheMixBelies) {
  Gen g;
  Common(g, "llama", 2, 256, 4096, 15);  // says Q4_K_M
  g.w.U32("llama.attention.head_count", 4);
  g.w.Str("quantize.imatrix.file", "imatrix.dat");
  g.T("token_embd.weight", Dtype::kQ8_0, {64, 256});
  for (int i = 0; i < 2; ++i) {
    g.T(L(i, "attn_q.weight"), Dtype::kQ8_0, {256, 256});
    g.T(L(i, "ffn_up.weight"), Dtype::kIQ2_XXS, {512, 256});
    g.T(L(i, "ffn_down.weight"), Dtype::kQ8_0, {256, 512});
  }
  const Inventory inv = Check(g, "mislabelled.gguf");
  EXPECT_TRUE(HasFinding(inv, "gguf-file-type-mismatch"));
  EXPECT_TRUE(HasFinding(inv, "gguf-iq-types"));
  for (const auto& f : inv.audit.findings) {
    if (f.code == "gguf-file-type-mismatch") {
      EXPECT_EQ(f.message,
                "general.file_type 15 (Q4_K_M) names Q4_K as the main type, but most projection "
                "bytes are Q8_0 (86.1%; Q4_K holds 0.0%): the label is only a hint, the "
                "per-tensor types are what loads");
    }
    if (f.code == "gguf-iq-types") {
      EXPECT_NE(f.message.find("made with the imatrix the quantize.imatrix.* keys name"),
                std::string::npos);
    }
  }
}

TEST_F(GgufModels, AFifoIsRefusedNotWaitedOn) {
  const std::string path = dir_ + "/model.gguf";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  auto inv = InspectModel(path, {});
  ASSERT_FALSE(inv.ok());
  EXPECT_EQ(inv.status().message(), path + ": not a regular file");
}

}  // namespace
}  // namespace vramfit
