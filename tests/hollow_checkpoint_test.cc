// End-to-end: hollow checkpoints (real headers, sparse data) of Qwen2.5-7B and
// Qwen3-30B-A3B in bf16, AWQ, GPTQ, AutoRound (GPTQ packing), compressed-tensors W4A16 and FP8
// are written by an independent generator in this file, inspected through the public entry
// point, and
// checked against (a) the published parameter counts, (b) byte totals computed in closed
// form from the layer dimensions, and (c) the synthesized inventory, tensor for tensor.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <tuple>

#include "testutil/hollow.h"
#include "vramfit/inspect.h"

namespace vramfit {
namespace {

using testing::HollowTensor;

enum class Fmt { kBf16, kAwq, kGptq, kCtW4A16, kFp8, kAutoRound };

struct Dims {
  const char* name;
  uint64_t hidden, layers, heads, kv, head_dim, inter, vocab;
  bool qkv_bias, qk_norm;
  uint64_t experts, moe_inter, top_k;
  uint64_t published_parameters;  // Hugging Face model page (safetensors metadata)
};

// Qwen/Qwen2.5-7B-Instruct: 7,615,616,512 parameters; Qwen/Qwen3-30B-A3B: 30,532,122,624.
constexpr Dims kQwen25_7B = {"qwen2.5-7b", 3584, 28,    28, 4, 128, 18944,
                             152064,       true, false, 0,  0, 0,   7615616512ULL};
constexpr Dims kQwen3_30B = {"qwen3-30b-a3b", 2048,  48,   32,  4,   128, 6144,
                             151936,          false, true, 128, 768, 8,   30532122624ULL};

struct Generated {
  std::vector<HollowTensor> tensors;
  uint64_t linear_nk = 0;        // sum of N*K over quantizable decoder linears
  uint64_t linear_bias = 0;      // elements of their biases
  uint64_t other_params = 0;     // everything else (embeddings, norms, router, lm_head)
  uint64_t fp8_scale_elems = 0;  // block scales (FP8 only)
};

Dtype FloatOf(Fmt f) {
  return (f == Fmt::kAwq || f == Fmt::kGptq || f == Fmt::kAutoRound) ? Dtype::kF16 : Dtype::kBF16;
}

void Linear(Generated* g, Fmt f, const std::string& m, uint64_t n, uint64_t k, bool bias) {
  const Dtype d = FloatOf(f);
  auto add = [&](const std::string& part, Dtype dt, std::vector<uint64_t> shape) {
    g->tensors.push_back({m + "." + part, dt, std::move(shape)});
  };
  switch (f) {
    case Fmt::kBf16: add("weight", d, {n, k}); break;
    case Fmt::kAwq:
      add("qweight", Dtype::kI32, {k, n / 8});
      add("qzeros", Dtype::kI32, {k / 128, n / 8});
      add("scales", Dtype::kF16, {k / 128, n});
      break;
    case Fmt::kGptq:
    case Fmt::kAutoRound:  // "auto_round:auto_gptq" packs AutoGPTQ's QuantLinear
      add("qweight", Dtype::kI32, {k / 8, n});
      add("qzeros", Dtype::kI32, {k / 128, n / 8});
      add("scales", Dtype::kF16, {k / 128, n});
      add("g_idx", Dtype::kI32, {k});
      break;
    case Fmt::kCtW4A16:
      add("weight_packed", Dtype::kI32, {n, k / 8});
      add("weight_scale", Dtype::kBF16, {n, k / 128});
      add("weight_shape", Dtype::kI64, {2});
      break;
    case Fmt::kFp8:
      add("weight", Dtype::kF8_E4M3, {n, k});
      add("weight_scale_inv", Dtype::kF32, {(n + 127) / 128, (k + 127) / 128});
      g->fp8_scale_elems += ((n + 127) / 128) * ((k + 127) / 128);
      break;
  }
  if (bias) add("bias", d, {n});
  g->linear_nk += n * k;
  if (bias) g->linear_bias += n;
}

Generated Generate(const Dims& m, Fmt f) {
  Generated g;
  const Dtype d = FloatOf(f);
  auto plain = [&](const std::string& name, std::vector<uint64_t> shape) {
    uint64_t n = 1;
    for (auto x : shape) n *= x;
    g.other_params += n;
    g.tensors.push_back({name, d, std::move(shape)});
  };
  plain("model.embed_tokens.weight", {m.vocab, m.hidden});
  for (uint64_t i = 0; i < m.layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    plain(p + "input_layernorm.weight", {m.hidden});
    plain(p + "post_attention_layernorm.weight", {m.hidden});
    Linear(&g, f, p + "self_attn.q_proj", m.heads * m.head_dim, m.hidden, m.qkv_bias);
    Linear(&g, f, p + "self_attn.k_proj", m.kv * m.head_dim, m.hidden, m.qkv_bias);
    Linear(&g, f, p + "self_attn.v_proj", m.kv * m.head_dim, m.hidden, m.qkv_bias);
    Linear(&g, f, p + "self_attn.o_proj", m.hidden, m.heads * m.head_dim, false);
    if (m.qk_norm) {
      plain(p + "self_attn.q_norm.weight", {m.head_dim});
      plain(p + "self_attn.k_norm.weight", {m.head_dim});
    }
    if (m.experts == 0) {
      Linear(&g, f, p + "mlp.gate_proj", m.inter, m.hidden, false);
      Linear(&g, f, p + "mlp.up_proj", m.inter, m.hidden, false);
      Linear(&g, f, p + "mlp.down_proj", m.hidden, m.inter, false);
    } else {
      plain(p + "mlp.gate.weight", {m.experts, m.hidden});  // router, left unquantized
      for (uint64_t e = 0; e < m.experts; ++e) {
        const std::string x = p + "mlp.experts." + std::to_string(e) + ".";
        Linear(&g, f, x + "gate_proj", m.moe_inter, m.hidden, false);
        Linear(&g, f, x + "up_proj", m.moe_inter, m.hidden, false);
        Linear(&g, f, x + "down_proj", m.hidden, m.moe_inter, false);
      }
    }
  }
  plain("model.norm.weight", {m.hidden});
  plain("lm_head.weight", {m.vocab, m.hidden});
  return g;
}

std::string ConfigJson(const Dims& m, Fmt f) {
  nlohmann::ordered_json c;
  const bool moe = m.experts > 0;
  c["architectures"] = {moe ? "Qwen3MoeForCausalLM" : "Qwen2ForCausalLM"};
  c["model_type"] = moe ? "qwen3_moe" : "qwen2";
  c["hidden_size"] = m.hidden;
  c["intermediate_size"] = m.inter;
  c["num_hidden_layers"] = m.layers;
  c["num_attention_heads"] = m.heads;
  c["num_key_value_heads"] = m.kv;
  if (m.qk_norm) c["head_dim"] = m.head_dim;
  c["vocab_size"] = m.vocab;
  c["tie_word_embeddings"] = false;
  c["max_position_embeddings"] = moe ? 40960 : 32768;
  c["sliding_window"] = 131072;
  c["use_sliding_window"] = false;
  c["torch_dtype"] = FloatOf(f) == Dtype::kF16 ? "float16" : "bfloat16";
  if (moe) {
    c["num_experts"] = m.experts;
    c["num_experts_per_tok"] = m.top_k;
    c["moe_intermediate_size"] = m.moe_inter;
    c["decoder_sparse_step"] = 1;
    c["mlp_only_layers"] = nlohmann::json::array();
  }
  switch (f) {
    case Fmt::kBf16: break;
    case Fmt::kAwq:
      c["quantization_config"] = {{"quant_method", "awq"}, {"bits", 4},
                                  {"group_size", 128},     {"zero_point", true},
                                  {"version", "gemm"},     {"modules_to_not_convert", nullptr}};
      break;
    case Fmt::kGptq:
      c["quantization_config"] = {{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 128},
                                  {"desc_act", false}, {"sym", true}};
      break;
    case Fmt::kAutoRound:
      // AutoRound's export (auto_round/export/export_to_autoround/export.py): the blocks it
      // quantized, and extra_config for modules whose scheme differs (here lm_head, 16-bit).
      c["quantization_config"] = {{"quant_method", "auto-round"},
                                  {"bits", 4},
                                  {"group_size", 128},
                                  {"sym", true},
                                  {"data_type", "int"},
                                  {"packing_format", "auto_round:auto_gptq"},
                                  {"block_name_to_quantize", "model.layers"},
                                  {"extra_config", {{"lm_head", {{"bits", 16}}}}}};
      break;
    case Fmt::kCtW4A16:
      c["quantization_config"] = {{"quant_method", "compressed-tensors"},
                                  {"format", "pack-quantized"},
                                  {"config_groups",
                                   {{"group_0",
                                     {{"targets", {"Linear"}},
                                      {"weights",
                                       {{"num_bits", 4},
                                        {"type", "int"},
                                        {"strategy", "group"},
                                        {"group_size", 128},
                                        {"symmetric", true}}}}}}},
                                  {"ignore", {"lm_head", "re:.*mlp.gate$"}}};
      break;
    case Fmt::kFp8:
      c["quantization_config"] = {{"quant_method", "fp8"},
                                  {"fmt", "e4m3"},
                                  {"activation_scheme", "dynamic"},
                                  {"weight_block_size", {128, 128}}};
      break;
  }
  return c.dump(2);
}

// Closed-form bytes: per quantized linear, bytes per N*K element of each layout.
uint64_t ExpectedBytes(const Generated& g, Fmt f) {
  const uint64_t nk = g.linear_nk;
  const uint64_t float_bytes = 2 * (g.other_params + g.linear_bias);
  switch (f) {
    case Fmt::kBf16: return float_bytes + 2 * nk;
    // qweight nk/2 + qzeros nk/(128*8)*4 = nk/256 + scales nk/128*2 = nk/64
    case Fmt::kAwq: return float_bytes + nk / 2 + nk / 256 + nk / 64;
    case Fmt::kGptq:
    case Fmt::kAutoRound: {
      uint64_t k_total = 0;  // g_idx: 4 bytes per input channel of every linear
      for (const auto& t : g.tensors) if (t.name.ends_with(".g_idx")) k_total += t.shape[0];
      return float_bytes + nk / 2 + nk / 256 + nk / 64 + 4 * k_total;
    }
    case Fmt::kCtW4A16: {
      uint64_t linears = 0;
      for (const auto& t : g.tensors) if (t.name.ends_with(".weight_shape")) ++linears;
      return float_bytes + nk / 2 + nk / 64 + 16 * linears;  // + BF16 scales, I64[2] shapes
    }
    case Fmt::kFp8: return float_bytes + nk + 4 * g.fp8_scale_elems;
  }
  return 0;
}

using Key = std::tuple<std::string, Dtype, std::vector<uint64_t>>;
std::vector<Key> Keys(const Inventory& inv) {
  std::vector<Key> out;
  for (const auto& e : inv.tensors)
    out.emplace_back(e.info.name, e.info.dtype, e.info.shape.ToVector());
  std::sort(out.begin(), out.end());
  return out;
}

class HollowCheckpointTest : public ::testing::TestWithParam<std::tuple<const Dims*, Fmt>> {};

TEST_P(HollowCheckpointTest, InspectsExactly) {
  const Dims& m = *std::get<0>(GetParam());
  const Fmt f = std::get<1>(GetParam());
  const std::string dir = testing::MakeTempDir(m.name);
  const Generated g = Generate(m, f);
  // AWQ is written sharded with an index; the rest as one file.
  testing::WriteHollowCheckpoint(dir, g.tensors, f == Fmt::kAwq ? 4 : 1);
  testing::WriteText(dir + "/config.json", ConfigJson(m, f));

  auto inv = InspectModel(dir, {});
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_FALSE(inv->synthesized);
  EXPECT_EQ(inv->parameters, m.published_parameters);
  EXPECT_EQ(inv->total_bytes, ExpectedBytes(g, f));
  EXPECT_EQ(inv->tensors.size(), g.tensors.size());
  const int64_t linears = static_cast<int64_t>(m.layers * (4 + (m.experts ? 3 * m.experts : 3)));
  if (f == Fmt::kBf16) {
    EXPECT_EQ(inv->audit.quantized_linear, 0);
    EXPECT_EQ(inv->audit.unquantized_linear, linears);
  } else {
    EXPECT_EQ(inv->audit.quantized_linear, linears);
    EXPECT_EQ(inv->audit.unquantized_linear, 0);
  }
  for (const Finding& x : inv->audit.findings) {
    EXPECT_NE(x.severity, Severity::kError) << x.code << ": " << x.message;
    EXPECT_NE(x.code, "scheme-bytes-mismatch") << x.message;
  }

  InspectOptions synth;
  synth.force_synthesize = true;
  auto s = InspectModel(dir, synth);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(s->synthesized);
  EXPECT_EQ(s->parameters, inv->parameters);
  EXPECT_EQ(s->total_bytes, inv->total_bytes);
  EXPECT_EQ(Keys(*s), Keys(*inv));
  std::filesystem::remove_all(dir);
}

std::string CaseName(const ::testing::TestParamInfo<std::tuple<const Dims*, Fmt>>& info) {
  static const char* kFmt[] = {"bf16", "awq", "gptq", "ct_w4a16", "fp8", "autoround"};
  std::string n = std::string(std::get<0>(info.param)->name) + "_" +
                  kFmt[static_cast<int>(std::get<1>(info.param))];
  for (char& c : n) if (c == '.' || c == '-') c = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Models, HollowCheckpointTest,
                         ::testing::Combine(::testing::Values(&kQwen25_7B, &kQwen3_30B),
                                            ::testing::Values(Fmt::kBf16, Fmt::kAwq, Fmt::kGptq,
                                                              Fmt::kCtW4A16, Fmt::kFp8,
                                                              Fmt::kAutoRound)),
                         CaseName);

TEST(HollowCheckpoint, IndexTotalSizeMismatchIsReported) {
  const std::string dir = testing::MakeTempDir("total");
  const Generated g = Generate(kQwen25_7B, Fmt::kBf16);
  testing::WriteHollowCheckpoint(dir, g.tensors, 3);
  testing::WriteText(dir + "/config.json", ConfigJson(kQwen25_7B, Fmt::kBf16));
  const std::string index_path = dir + "/model.safetensors.index.json";
  auto index = nlohmann::json::parse(std::ifstream(index_path));
  index["metadata"]["total_size"] = index["metadata"]["total_size"].get<uint64_t>() + 1000;
  testing::WriteText(index_path, index.dump());
  auto inv = InspectModel(dir, {});
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  auto it = std::find_if(inv->audit.findings.begin(), inv->audit.findings.end(),
                         [](const Finding& f) { return f.code == "index-total-size"; });
  ASSERT_NE(it, inv->audit.findings.end());
  EXPECT_NE(it->message.find("but the shards' headers hold 15231233024 data bytes"),
            std::string::npos)
      << it->message;
  std::filesystem::remove_all(dir);
}

TEST(HollowCheckpoint, OriginalCopiesAreNotCounted) {
  const std::string dir = testing::MakeTempDir("original");
  const Generated g = Generate(kQwen25_7B, Fmt::kBf16);
  testing::WriteHollowCheckpoint(dir, g.tensors, 2);
  testing::WriteText(dir + "/config.json", ConfigJson(kQwen25_7B, Fmt::kBf16));
  testing::WriteHollowSafetensors(dir + "/consolidated.safetensors", g.tensors);
  std::filesystem::create_directories(dir + "/original");
  auto inv = InspectModel(dir, {});
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_EQ(inv->parameters, kQwen25_7B.published_parameters);
  EXPECT_EQ(std::count_if(inv->notes.begin(), inv->notes.end(),
                          [](const std::string& n) { return n.rfind("ignored ", 0) == 0; }), 2);
  std::filesystem::remove_all(dir);
}

// A ModelOpt MIXED_PRECISION export (NVIDIA's NVFP4 checkpoints: NVFP4 experts, FP8 attention)
// read from its headers: every U8 weight beside an E4M3 weight_scale is two values a byte, the
// summary names the algorithms, and config.json implies no byte count to warn against.
TEST(HollowCheckpoint, ModelOptMixedPrecisionIsCountedFromItsHeaders) {
  const std::string dir = testing::MakeTempDir("mixed");
  const uint64_t h = 256, e = 4, ff = 128, vocab = 1000;
  std::vector<testing::HollowTensor> t = {{"model.embed_tokens.weight", Dtype::kBF16, {vocab, h}},
                                          {"lm_head.weight", Dtype::kBF16, {vocab, h}},
                                          {"model.norm.weight", Dtype::kBF16, {h}}};
  nlohmann::json layers = nlohmann::json::object();
  uint64_t params = 2 * vocab * h + h;
  for (int l = 0; l < 2; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    using Proj = std::tuple<std::string, uint64_t, uint64_t>;
    for (const auto& [n, rows, cols] :
         std::vector<Proj>{{"self_attn.q_proj", 256, h}, {"self_attn.k_proj", 128, h},
                           {"self_attn.v_proj", 128, h}, {"self_attn.o_proj", h, 256}}) {
      t.push_back({p + n + ".weight", Dtype::kF8_E4M3, {rows, cols}});
      t.push_back({p + n + ".weight_scale", Dtype::kF32, {}});
      t.push_back({p + n + ".input_scale", Dtype::kF32, {}});
      layers[p + n] = {{"quant_algo", "FP8"}};
      params += rows * cols;
    }
    for (const char* n : {"self_attn.q_norm", "self_attn.k_norm"}) {
      t.push_back({p + n + ".weight", Dtype::kBF16, {64}});
      params += 64;
    }
    for (const char* n : {"input_layernorm", "post_attention_layernorm"}) {
      t.push_back({p + n + ".weight", Dtype::kBF16, {h}});
      params += h;
    }
    t.push_back({p + "mlp.gate.weight", Dtype::kBF16, {e, h}});
    params += e * h;
    for (uint64_t x = 0; x < e; ++x) {
      for (const auto& [n, rows, cols] :
           std::vector<Proj>{{"gate_proj", ff, h}, {"up_proj", ff, h}, {"down_proj", h, ff}}) {
        const std::string m = p + "mlp.experts." + std::to_string(x) + "." + n;
        t.push_back({m + ".weight", Dtype::kU8, {rows, cols / 2}});
        t.push_back({m + ".weight_scale", Dtype::kF8_E4M3, {rows, cols / 16}});
        t.push_back({m + ".weight_scale_2", Dtype::kF32, {}});
        t.push_back({m + ".input_scale", Dtype::kF32, {}});
        layers[m] = {{"quant_algo", "NVFP4"}, {"group_size", 16}};
        params += rows * cols;
      }
    }
  }
  testing::WriteHollowCheckpoint(dir, t, 1);
  nlohmann::json config = {
      {"architectures", {"Qwen3MoeForCausalLM"}}, {"model_type", "qwen3_moe"},
      {"hidden_size", h}, {"intermediate_size", 512}, {"moe_intermediate_size", ff},
      {"num_experts", e}, {"num_experts_per_tok", 2}, {"num_attention_heads", 4},
      {"num_key_value_heads", 2}, {"head_dim", 64}, {"num_hidden_layers", 2},
      {"vocab_size", vocab}, {"max_position_embeddings", 4096}, {"torch_dtype", "bfloat16"},
      {"tie_word_embeddings", false},
      {"quantization_config", {{"quant_method", "modelopt"}, {"quant_algo", "MIXED_PRECISION"},
                               {"kv_cache_quant_algo", "FP8"}, {"quantized_layers", layers}}}};
  testing::WriteText(dir + "/config.json", config.dump());
  auto inv = InspectModel(dir, {});
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_EQ(inv->parameters, params);
  EXPECT_EQ(inv->quantization.bits, 4);
  EXPECT_EQ(inv->quantization.format, "MIXED_PRECISION: FP8, NVFP4");
  EXPECT_EQ(inv->audit.quantized_linear, 2 * (4 + 3 * 4));
  for (const Finding& x : inv->audit.findings) {
    EXPECT_NE(x.code, "scheme-bytes-mismatch") << x.message;
    EXPECT_NE(x.severity, Severity::kError) << x.code << ": " << x.message;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vramfit
