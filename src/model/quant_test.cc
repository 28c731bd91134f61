// quantization_config -> QuantScheme, and which modules each method's rule covers.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "vramfit/inventory.h"
#include "vramfit/model.h"

namespace vramfit {
namespace {

QuantScheme Scheme(const std::string& quant) {
  auto s = ModelSpecFromConfigJson(
      R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
          "intermediate_size":128,"vocab_size":100,"quantization_config":)" +
          quant + "}",
      "c");
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? s->quant : QuantScheme{};
}

TEST(Quant, AwqDefaultsAndSubstringExclusion) {
  QuantScheme q = Scheme(
      R"({"quant_method":"awq","bits":4,"group_size":128,"modules_to_not_convert":["visual"]})");
  EXPECT_EQ(q.layout, QuantLayout::kAwqGemm);
  EXPECT_FALSE(q.symmetric);
  EXPECT_TRUE(QuantSchemeCovers(q, "model.layers.0.self_attn.q_proj"));
  EXPECT_FALSE(QuantSchemeCovers(q, "visual.blocks.0.attn.qkv"));
}

TEST(Quant, GptqDynamicOverridesAndSkips) {
  QuantScheme q = Scheme(R"({"quant_method":"gptq","bits":4,"group_size":-1,"desc_act":true,
      "dynamic":{"+:.*down_proj":{"bits":8,"group_size":32},"-:.*layers\\.1\\..*":{}}})");
  EXPECT_EQ(q.group_size, 0);
  EXPECT_TRUE(q.act_order);
  EXPECT_EQ(QuantSchemeBits(q, "model.layers.0.mlp.down_proj"), 8);
  EXPECT_EQ(QuantSchemeBits(q, "model.layers.0.mlp.up_proj"), 4);
  EXPECT_FALSE(QuantSchemeCovers(q, "model.layers.1.mlp.up_proj"));
  EXPECT_TRUE(QuantSchemeCovers(q, "model.layers.0.mlp.up_proj"));
}

// A pattern std::regex would backtrack on without end (found by the config fuzz target: a
// GPTQ `dynamic` key `-:.*+ayers...` hung `plan`), or as the name's length to the power of
// three or more repeats, is ignored with a warning, never run; the shapes real checkpoints use
// still match.
TEST(Quant, PatternsThatBacktrackWithoutEndAreNeverRun) {
  auto spec = ModelSpecFromConfigJson(
      R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
          "intermediate_size":128,"vocab_size":100,"quantization_config":{"quant_method":"gptq",
          "bits":4,"group_size":128,"dynamic":{"-:.*+ayers\\.1\\..*":{},"-:(a+)+b":{},
          "-:(x|xy)*z":{},"-:a{2}*":{},"-:.*a.*b.*c":{},"+:.*?down_proj":{"bits":8},
          "-:.*\\.(q|k)_proj":{},"+:.*\\.1\\..*gate.*":{"bits":3}}}})",
      "c");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  const QuantScheme& q = spec->quant;
  int ignored = 0;
  for (const std::string& w : spec->warnings) {
    ignored += w.find("nests quantifiers") != std::string::npos;
  }
  EXPECT_EQ(ignored, 5);  // the four nested shapes and three unbounded repeats
  const std::string hostile = std::string(5000, 'a') + "!";
  EXPECT_TRUE(QuantSchemeCovers(q, hostile));  // past the subject cap: no pattern runs
  EXPECT_TRUE(QuantSchemeCovers(q, "model.layers.1.mlp.up_proj"));  // `.*+ayers` was dropped
  EXPECT_FALSE(QuantSchemeCovers(q, "model.layers.0.self_attn.q_proj"));
  EXPECT_EQ(QuantSchemeBits(q, "model.layers.0.mlp.down_proj"), 8);  // a lazy `*?` is fine
  // Two repeats once the trailing `.*` (a no-op under re.match) is dropped: kept.
  EXPECT_EQ(QuantSchemeBits(q, "model.layers.1.mlp.gate_proj"), 3);
}

// A backreference or a repeat count with more digits than a long holds made std::regex
// overflow while compiling (found by the config fuzz target: `-:.*layers\\666...`); such
// patterns are refused with the same warning, before std::regex sees them.
TEST(Quant, PatternNumbersThatOverflowAreRefused) {
  auto spec = ModelSpecFromConfigJson(
      R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
          "intermediate_size":128,"vocab_size":100,"quantization_config":{"quant_method":"gptq",
          "bits":4,"group_size":128,"dynamic":{"-:.*layers\\66666666666666666666":{},
          "-:a{99999999999999999999}":{},"-:x\\1":{},"+:.*\\.1\\..*up_proj":{"bits":8}}}})",
      "c");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  int refused = 0;
  for (const std::string& w : spec->warnings) {
    refused += w.find("not a valid regex") != std::string::npos;
  }
  EXPECT_EQ(refused, 3);
  EXPECT_EQ(QuantSchemeBits(spec->quant, "model.layers.1.mlp.up_proj"), 8);
}

TEST(Quant, CompressedTensorsIgnoreRegexAnchoredAtStart) {
  QuantScheme q = Scheme(R"({"quant_method":"compressed-tensors","format":"pack-quantized",
      "config_groups":{"group_0":{"targets":["Linear"],"weights":{"num_bits":4,"type":"int",
      "strategy":"group","group_size":128,"symmetric":false,"actorder":"group"}}},
      "ignore":["lm_head","re:.*mlp.gate$","re:visual"]})");
  EXPECT_EQ(q.layout, QuantLayout::kCtPacked);
  EXPECT_FALSE(q.symmetric);
  EXPECT_TRUE(q.act_order);
  EXPECT_FALSE(QuantSchemeCovers(q, "lm_head"));
  EXPECT_FALSE(QuantSchemeCovers(q, "model.layers.3.mlp.gate"));
  EXPECT_TRUE(QuantSchemeCovers(q, "model.layers.3.mlp.gate_proj"));
  EXPECT_FALSE(QuantSchemeCovers(q, "visual.blocks.0.attn.qkv"));
  EXPECT_TRUE(QuantSchemeCovers(q, "model.visual_thing"));  // re.match anchors at the start
}

TEST(Quant, NvfpAndMxfpFormats) {
  QuantScheme n = Scheme(R"({"quant_method":"compressed-tensors","format":"nvfp4-pack-quantized",
      "config_groups":{"g":{"targets":["Linear"],"weights":{"num_bits":4,"type":"float",)"
                         R"("strategy":"tensor_group","group_size":16}}}})");
  EXPECT_EQ(n.layout, QuantLayout::kCtNvfp4);
  EXPECT_EQ(n.group_size, 16);
  QuantScheme m =
      Scheme(R"({"quant_method":"mxfp4","modules_to_not_convert":["model.layers.*.self_attn",)"
             R"("lm_head"]})");
  EXPECT_EQ(m.layout, QuantLayout::kMxfp4Blocks);
  EXPECT_FALSE(QuantSchemeCovers(m, "model.layers.7.self_attn.q_proj"));
  EXPECT_TRUE(QuantSchemeCovers(m, "model.layers.7.mlp.experts.down_proj"));
  EXPECT_FALSE(QuantSchemeCovers(m, "model.layers.7.self_attn_other.x") && false);
}

TEST(Quant, ModelOptNvfp4IsFourBitsWithItsOwnNames) {
  QuantScheme q = Scheme(R"({"quant_method":"modelopt","quant_algo":"NVFP4","group_size":16,)"
                         R"("exclude_modules":["lm_head","model.layers.*.mlp.gate"]})");
  EXPECT_EQ(q.layout, QuantLayout::kModelOptNvfp4);
  EXPECT_EQ(q.bits, 4);
  EXPECT_EQ(q.group_size, 16);
  EXPECT_TRUE(q.quantized_activations);
  EXPECT_FALSE(QuantSchemeCovers(q, "lm_head"));
  EXPECT_FALSE(QuantSchemeCovers(q, "model.layers.5.mlp.gate"));  // the fnmatch pattern
  EXPECT_TRUE(QuantSchemeCovers(q, "model.layers.5.mlp.experts.3.up_proj"));
  EXPECT_FALSE(
      Scheme(R"({"quant_method":"modelopt","quant_algo":"W4A16_NVFP4"})").quantized_activations);
}

TEST(Quant, ModelOptNvfp4BytesAndParameters) {
  // One 64 x 64 projection: 64 x 32 bytes of values, 64 x 4 E4M3 scales, two FP32 scalars;
  // 4,096 parameters (two a byte), not 2,048.
  auto s = ModelSpecFromConfigJson(
      R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":1,"num_attention_heads":4,)"
      R"("intermediate_size":128,"vocab_size":100,"tie_word_embeddings":true,)"
      R"("quantization_config":{"quant_method":"modelopt","quant_algo":"NVFP4","group_size":16,)"
      R"("exclude_modules":["lm_head"]}})",
      "c");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto files = SynthesizeTensors(*s);
  ASSERT_TRUE(files.ok());
  std::vector<FileTensors> v;
  v.push_back(*files);
  const Inventory inv = BuildInventory(&*s, std::move(v));
  uint64_t q_bytes = 0, q_params = 0;
  for (const auto& e : inv.tensors) {
    if (e.module() != "model.layers.0.self_attn.q_proj") continue;
    q_bytes += e.info.bytes();
    q_params += e.parameters;
  }
  EXPECT_EQ(q_bytes, 64u * 32 + 64 * 4 + 4 + 4);
  EXPECT_EQ(q_params, 4096u);
  EXPECT_EQ(inv.audit.unquantized_linear, 0);
  for (const auto& f : inv.audit.findings) EXPECT_NE(f.code, "fake-quantization");
}

// NVIDIA's MIXED_PRECISION exports (NVFP4 experts, FP8 attention): no layout to synthesize,
// but the headers count exactly: a U8 weight beside an E4M3 weight_scale holds two values a
// byte, the bits named are the narrowest algorithm's, and no byte count is implied.
TEST(Quant, ModelOptMixedPrecisionCountsFromHeaders) {
  auto s = ModelSpecFromConfigJson(
      R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":1,"num_attention_heads":4,)"
      R"("intermediate_size":128,"vocab_size":100,"tie_word_embeddings":true,)"
      R"("quantization_config":{"quant_method":"modelopt","quant_algo":"MIXED_PRECISION",)"
      R"("quantized_layers":{"model.layers.0.self_attn.q_proj":{"quant_algo":"FP8"},)"
      R"("model.layers.0.mlp.up_proj":{"quant_algo":"NVFP4","group_size":16}}}})",
      "c");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->quant.method, QuantMethod::kModelOpt);
  EXPECT_EQ(s->quant.layout, QuantLayout::kNone);
  EXPECT_EQ(s->quant.bits, 4);
  EXPECT_EQ(s->quant.format, "MIXED_PRECISION: FP8, NVFP4");
  auto t = [](const char* name, Dtype d, Shape shape) {
    TensorInfo x;
    x.name = name;
    x.dtype = d;
    x.shape = shape;
    x.elements = 1;
    for (uint64_t v : shape) x.elements *= v;
    x.end = x.elements * DtypeBits(d) / 8;
    return x;
  };
  std::vector<FileTensors> files(1);
  files[0].name = "m.safetensors";
  files[0].tensors = {
      t("model.layers.0.self_attn.q_proj.weight", Dtype::kF8_E4M3, {64, 64}),
      t("model.layers.0.self_attn.q_proj.weight_scale", Dtype::kF32, {}),
      t("model.layers.0.mlp.up_proj.weight", Dtype::kU8, {128, 32}),
      t("model.layers.0.mlp.up_proj.weight_scale", Dtype::kF8_E4M3, {128, 4}),
      t("model.layers.0.mlp.up_proj.weight_scale_2", Dtype::kF32, {})};
  const Inventory inv = BuildInventory(&*s, std::move(files));
  EXPECT_EQ(inv.parameters, 64u * 64 + 128 * 64);  // the U8 weight: two values a byte
  EXPECT_EQ(inv.audit.quantized_linear, 2);
}

TEST(Quant, Fp8BlockAndTensor) {
  EXPECT_EQ(Scheme(R"({"quant_method":"fp8","weight_block_size":[128,128]})").layout,
            QuantLayout::kFp8Block);
  QuantScheme t =
      Scheme(R"({"quant_method":"fp8","activation_scheme":"static","ignored_layers":["lm_head"]})");
  EXPECT_EQ(t.layout, QuantLayout::kFp8Tensor);
  EXPECT_TRUE(t.static_input_scale);
  EXPECT_FALSE(QuantSchemeCovers(t, "lm_head"));
}

TEST(Quant, UnknownMethodWarns) {
  auto s = ModelSpecFromConfigJson(
      R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
          "intermediate_size":128,"vocab_size":100,"quantization_config":{"quant_method":"hqq"}})",
      "c");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->quant.method, QuantMethod::kOther);
  EXPECT_NE(s->warnings.back().find("quant_method \"hqq\" is not modelled"), std::string::npos);
}

// AutoRound (quant_method auto-round): the GPTQ packing is the GPTQ scheme, symmetric, no
// act-order; extra_config by exact name, bits 16 keeps a module unquantized, other bits override
// it; regex keys match anywhere in the name (re.search); nothing outside block_name_to_quantize
// is quantized; the method's own spelling stays in method_text.
TEST(Quant, AutoRoundGptqPackingWithExtraConfigAndBlocks) {
  QuantScheme q = Scheme(R"({"quant_method":"auto-round","bits":4,"group_size":128,"sym":true,
      "data_type":"int","packing_format":"auto_round:auto_gptq",
      "block_name_to_quantize":"model.layers,mtp.layers",
      "extra_config":{"model.layers.0.linear_attn.in_proj_a":{"bits":16,"data_type":"fp"},
                      "model.layers.1.mlp.down_proj":{"bits":8,"group_size":32},
                      ".*shared_expert_gate":{"bits":16}}})");
  EXPECT_EQ(q.method, QuantMethod::kGptq);
  EXPECT_EQ(q.layout, QuantLayout::kGptq);
  EXPECT_EQ(q.method_text, "auto-round");
  EXPECT_EQ(q.bits, 4);
  EXPECT_EQ(q.group_size, 128);
  EXPECT_TRUE(q.symmetric);
  EXPECT_FALSE(q.act_order);
  EXPECT_FALSE(q.lm_head_quantized);
  EXPECT_FALSE(QuantSchemeCovers(q, "model.layers.0.linear_attn.in_proj_a"));
  EXPECT_TRUE(QuantSchemeCovers(q, "model.layers.0.linear_attn.in_proj_b"));
  EXPECT_TRUE(QuantSchemeCovers(q, "model.layers.10.linear_attn.in_proj_a"));  // exact names
  EXPECT_EQ(QuantSchemeBits(q, "model.layers.1.mlp.down_proj"), 8);
  EXPECT_EQ(QuantSchemeBits(q, "model.layers.11.mlp.down_proj"), 4);
  EXPECT_FALSE(QuantSchemeCovers(q, "model.layers.3.mlp.shared_expert_gate"));
  EXPECT_TRUE(QuantSchemeCovers(q, "mtp.layers.0.mlp.up_proj"));
  EXPECT_FALSE(QuantSchemeCovers(q, "mtp.fc"));                   // outside the blocks
  EXPECT_FALSE(QuantSchemeCovers(q, "model.visual.blocks.0.attn.qkv"));
}

TEST(Quant, AutoRoundSpellingsPackingsAndUnmodelledTypes) {
  // The older export's spelling; without block names, MTP modules (which the transformers
  // model AutoRound quantized does not hold) stay unquantized; extra_config can quantize lm_head.
  QuantScheme old = Scheme(R"({"quant_method":"intel/auto-round","bits":4,"group_size":128,
      "sym":true,"backend":"auto_round:gptq:exllamav2","extra_config":{"lm_head":{"bits":4}}})");
  EXPECT_EQ(old.method, QuantMethod::kGptq);
  EXPECT_EQ(old.method_text, "intel/auto-round");
  EXPECT_TRUE(old.lm_head_quantized);
  EXPECT_TRUE(QuantSchemeCovers(old, "model.layers.0.mlp.up_proj"));
  EXPECT_FALSE(QuantSchemeCovers(old, "mtp.layers.0.mlp.up_proj"));
  // The AWQ packing: AutoAWQ's GEMM layout; sym false keeps zero points.
  QuantScheme awq = Scheme(R"({"quant_method":"auto-round","bits":4,"group_size":128,
      "sym":false,"packing_format":"auto_round:auto_awq"})");
  EXPECT_EQ(awq.method, QuantMethod::kAwq);
  EXPECT_EQ(awq.layout, QuantLayout::kAwqGemm);
  EXPECT_FALSE(awq.symmetric);
  EXPECT_EQ(awq.method_text, "auto-round");
  // FP8 / MX / NV float exports are not modelled, and say so.
  auto fp = ModelSpecFromConfigJson(
      R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
          "intermediate_size":128,"vocab_size":100,"quantization_config":{
          "quant_method":"auto-round","bits":8,"group_size":[128,128],"data_type":"fp",
          "packing_format":"auto_round:fp8"}})",
      "c");
  ASSERT_TRUE(fp.ok()) << fp.status().ToString();  // a 2-D group_size is read, not refused
  EXPECT_EQ(fp->quant.layout, QuantLayout::kNone);
  EXPECT_NE(fp->warnings.back().find("auto-round data_type \"fp\""), std::string::npos);
  auto nv = ModelSpecFromConfigJson(
      R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
          "intermediate_size":128,"vocab_size":100,"quantization_config":{
          "quant_method":"auto-round","bits":4,"group_size":16,"data_type":"nv_fp"}})",
      "c");
  ASSERT_TRUE(nv.ok()) << nv.status().ToString();
  EXPECT_EQ(nv->quant.layout, QuantLayout::kNone);
  EXPECT_NE(nv->warnings.back().find("auto-round data_type \"nv_fp\""), std::string::npos);
}

// Exact names are compared as text (no regex is compiled for them), and a config listing more
// entries than any export writes is read up to a limit, with a warning.
TEST(Quant, AutoRoundManyExactNamesStayCheap) {
  std::string extra;
  for (int i = 0; i < 25000; ++i) {
    extra += fmt::format("{}\"model.layers.{}.mlp.experts.{}.down_proj\":{{\"bits\":16}}",
                         i ? "," : "", i / 1000, i % 1000);
  }
  auto spec = ModelSpecFromConfigJson(
      R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
          "intermediate_size":128,"vocab_size":100,"quantization_config":{
          "quant_method":"auto-round","bits":4,"group_size":128,"extra_config":{)" +
          extra + "}}}",
      "c");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_NE(spec->warnings.back().find("only the first 20000"), std::string::npos);
  const QuantScheme& q = spec->quant;
  for (int i = 0; i < 50; ++i) {  // 50 x 2 x 20,000 text comparisons
    EXPECT_FALSE(QuantSchemeCovers(q, "model.layers.0.mlp.experts.7.down_proj"));
    EXPECT_TRUE(QuantSchemeCovers(q, "model.layers.0.mlp.experts.7.up_proj"));
  }
  EXPECT_TRUE(QuantSchemeCovers(q, "model.layers.24.mlp.experts.999.down_proj"));  // past it
}

TEST(Quant, AutoRoundHostileExtraConfigIsRefusedOrIgnored) {
  // A non-object entry is a type error naming the key; a pattern that would backtrack without
  // end is ignored with a warning.
  auto bad = ModelSpecFromConfigJson(
      R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
          "intermediate_size":128,"vocab_size":100,"quantization_config":{
          "quant_method":"auto-round","bits":4,"group_size":128,"extra_config":{"x":3}}})",
      "c");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("extra_config"), std::string::npos);
  auto hang = ModelSpecFromConfigJson(
      R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
          "intermediate_size":128,"vocab_size":100,"quantization_config":{
          "quant_method":"auto-round","bits":4,"group_size":128,
          "extra_config":{"(a+)+b":{"bits":16}}}})",
      "c");
  ASSERT_TRUE(hang.ok()) << hang.status().ToString();
  EXPECT_NE(hang->warnings.back().find("(a+)+b"), std::string::npos);
  EXPECT_TRUE(QuantSchemeCovers(hang->quant, std::string(300, 'a') + "b"));
}

}  // namespace
}  // namespace vramfit
