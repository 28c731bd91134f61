// Roles, logical parameters and the audit, on in-memory tensor lists (no files).
#include <gtest/gtest.h>

#include "model/roles.h"
#include "vramfit/catalog.h"
#include "vramfit/inventory.h"

namespace vramfit {
namespace {

TensorInfo T(const std::string& name, Dtype d, std::vector<uint64_t> shape) {
  TensorInfo t;
  t.name = name;
  t.dtype = d;
  t.shape = Shape(shape);
  uint64_t n = 1;
  for (auto x : shape) n *= x;
  t.elements = n;
  t.begin = 0;
  t.end = n * DtypeBits(d) / 8;
  return t;
}

ModelSpec Spec(const std::string& quant, bool tie = false) {
  auto s = ModelSpecFromConfigJson(
      R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":256,)"
      R"("num_hidden_layers":1,
          "num_attention_heads":2,"intermediate_size":512,"vocab_size":1000,"torch_dtype":"float16",
          "tie_word_embeddings":)" +
          std::string(tie ? "true" : "false") +
          (quant.empty() ? "" : ",\"quantization_config\":" + quant) + "}",
      "c");
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return *s;
}

Inventory Build(const ModelSpec* spec, TensorList tensors) {
  std::vector<FileTensors> files(1);
  files[0].name = "m.safetensors";
  files[0].tensors = std::move(tensors);
  return BuildInventory(spec, std::move(files));
}

const Finding* Find(const Inventory& inv, const std::string& code) {
  for (const auto& f : inv.audit.findings) if (f.code == code) return &f;
  return nullptr;
}

TEST(Roles, Classify) {
  using model::ClassifyTensor;
  EXPECT_EQ(ClassifyTensor("model.layers.3.self_attn.q_proj.qweight", 48).role, Role::kAttnProj);
  EXPECT_EQ(ClassifyTensor("model.layers.3.self_attn.q_proj.qweight", 48).layer, 3);
  EXPECT_EQ(ClassifyTensor("model.layers.3.mlp.experts.7.down_proj.scales", 48).part,
            Part::kQuantMeta);
  EXPECT_EQ(ClassifyTensor("model.layers.3.mlp.experts.7.down_proj.scales", 48).role,
            Role::kExpertProj);
  EXPECT_EQ(ClassifyTensor("model.layers.3.mlp.gate.weight", 48).role, Role::kRouter);
  EXPECT_EQ(ClassifyTensor("model.layers.3.mlp.shared_expert_gate.weight", 48).role,
            Role::kSharedExpertGate);
  EXPECT_EQ(ClassifyTensor("model.layers.3.mlp.shared_expert.up_proj.weight", 48).role,
            Role::kSharedExpertProj);
  EXPECT_EQ(ClassifyTensor("model.layers.0.linear_attn.in_proj_qkvz.weight", 48).role,
            Role::kLinearAttnProj);
  EXPECT_EQ(ClassifyTensor("model.layers.0.linear_attn.A_log", 48).role, Role::kLinearAttnState);
  EXPECT_EQ(ClassifyTensor("model.layers.0.self_attn.kv_a_proj_with_mqa.weight", 61).role,
            Role::kMlaProj);
  EXPECT_EQ(ClassifyTensor("model.layers.0.self_attn.kv_a_layernorm.weight", 61).role, Role::kNorm);
  EXPECT_EQ(ClassifyTensor("model.layers.61.mlp.experts.0.up_proj.weight", 61).role, Role::kMtp);
  EXPECT_EQ(ClassifyTensor("mtp.layers.0.mlp.gate.weight", 48).role, Role::kMtp);
  EXPECT_EQ(ClassifyTensor("model.visual.blocks.0.attn.qkv.weight", 48).role, Role::kVision);
  EXPECT_EQ(ClassifyTensor("vision_tower.vision_model.encoder.layers.0.mlp.fc1.weight", 48).role,
            Role::kVision);
  EXPECT_EQ(ClassifyTensor("multi_modal_projector.mm_input_projection_weight", 48).role,
            Role::kProjector);
  EXPECT_EQ(ClassifyTensor("model.language_model.embed_tokens.weight", 48).role, Role::kEmbedding);
  EXPECT_EQ(ClassifyTensor("lm_head.weight", 48).role, Role::kLmHead);
  EXPECT_EQ(ClassifyTensor("model.norm.weight", 48).role, Role::kNorm);
  EXPECT_EQ(ClassifyTensor("model.layers.0.self_attn.sinks", 24).role, Role::kAttnSinks);
  auto gpt = ClassifyTensor("model.layers.0.mlp.experts.gate_up_proj_blocks", 24);
  EXPECT_EQ(gpt.role, Role::kExpertProj);
  EXPECT_EQ(gpt.module, "model.layers.0.mlp.experts.gate_up_proj");
  EXPECT_TRUE(gpt.packed_container);
  auto bnb = ClassifyTensor("model.layers.0.mlp.up_proj.weight.absmax", 24);
  EXPECT_EQ(bnb.part, Part::kQuantMeta);
  EXPECT_EQ(bnb.module, "model.layers.0.mlp.up_proj");
}

// The remembering classifier against ClassifyTensor itself: every name of every catalog model's
// checkpoint, and names made to trip it (numbers of 10 digits, a leading zero, a name that is
// a number, numbers in the part, GGUF layers, the mark byte), at layer counts around theirs.
TEST(Roles, ClassifierGivesClassifyTensorsResultsNameForName) {
  std::vector<std::string> names = {
      "model.layers.5.mlp.experts.3.w1.weight", "model.layers.12.mlp.experts.40.w2.weight",
      "model.layers.1234567890.self_attn.q_proj.weight", "model.layers.123456789.mlp.fc1.bias",
      "model.layers.07.mlp.down_proj.weight", "5", "12", "a.5", "a.12", "x.weight.0",
      "x.weight.12", "layers.3.7", "layers.3.77.x", "blk.12.ffn_up_exps.weight",
      "blk.3.attn_q.weight", "blk.61.exp_probs_b", "blk.1234567890.attn_q.weight",
      "model.layers.3a.mlp.up_proj.weight", "model.layers..3.x", ".3.", "3..", "",
      std::string("model.layers.\x01.mlp.up_proj.weight"),
      std::string("model.layers.4.mlp.\x01.up_proj.weight"),
      "model.layers.0.mlp.experts.gate_up_proj_blocks",
      "model.layers.9.mlp.experts.down_proj_scales", "model.layers.2.self_attn.sinks",
      "model.layers.2.mlp.up_proj.weight.absmax", "model.layers.2.mlp.up_proj.weight.0",
      "model.layers.20.mlp.up_proj.weight.10", "mtp.layers.3.mlp.gate.weight",
      "model.visual.blocks.11.attn.qkv.weight", "model.layers.60.mlp.experts.255.up_proj.qweight",
      "model.layers.61.mlp.experts.255.up_proj.qweight"};
  auto catalog = CatalogModels();
  ASSERT_TRUE(catalog.ok());
  for (const CatalogModel& m : *catalog) {
    auto spec = ModelSpecFromConfigJson(m.config_json, m.id);
    if (!spec.ok()) continue;
    auto tensors = SynthesizeTensors(*spec);
    if (!tensors.ok()) continue;
    for (const TensorInfo& t : tensors->tensors) names.push_back(t.name);
  }
  ASSERT_GT(names.size(), 100000u);
  for (int64_t layers : {-1, 0, 4, 48, 61}) {
    model::TensorClassifier classifier(layers);
    for (const std::string& name : names) {
      const model::TensorClass want = model::ClassifyTensor(name, layers);
      const model::TensorClass got = classifier.Classify(name);
      ASSERT_EQ(got.role, want.role) << name << " " << layers;
      ASSERT_EQ(got.part, want.part) << name;
      ASSERT_EQ(got.component, want.component) << name;
      ASSERT_EQ(got.layer, want.layer) << name;
      ASSERT_EQ(got.module, want.module) << name;
      ASSERT_EQ(got.module.data(), want.module.data()) << name;
      ASSERT_EQ(got.packed_container, want.packed_container) << name;
    }
  }
}

TEST(Inventory, PackedParametersAreUnpacked) {
  ModelSpec s = Spec(R"({"quant_method":"awq","bits":4,"group_size":128})");
  Inventory inv = Build(&s, {T("model.layers.0.mlp.up_proj.qweight", Dtype::kI32, {256, 64}),
                             T("model.layers.0.mlp.up_proj.qzeros", Dtype::kI32, {2, 64}),
                             T("model.layers.0.mlp.up_proj.scales", Dtype::kF16, {2, 512})});
  EXPECT_EQ(inv.parameters, 256u * 512u);  // K x N, metadata excluded
  EXPECT_EQ(inv.audit.quantized_linear, 1);
  EXPECT_EQ(inv.total_bytes, 256u * 64 * 4 + 2 * 64 * 4 + 2 * 512 * 2);
}

TEST(Inventory, Mxfp4BlocksCountTwoPerByte) {
  Inventory inv = Build(
      nullptr, {T("model.layers.0.mlp.experts.down_proj_blocks", Dtype::kU8, {4, 2880, 90, 16}),
                T("model.layers.0.mlp.experts.down_proj_scales", Dtype::kU8, {4, 2880, 90})});
  EXPECT_EQ(inv.parameters, 4u * 2880 * 2880);
}

TEST(Audit, FakeQuantizationIsAnError) {
  ModelSpec s = Spec(R"({"quant_method":"awq","bits":4,"group_size":128})");
  Inventory inv = Build(&s, {T("model.layers.0.self_attn.q_proj.weight", Dtype::kF16, {256, 256}),
                             T("model.layers.0.mlp.up_proj.weight", Dtype::kF16, {512, 256})});
  const Finding* f = Find(inv, "fake-quantization");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_EQ(
      f->message,
      "config.json declares awq 4-bit quantization, but all 2 decoder projections are stored as "
      "F16 (384.00 KiB): the weights are not quantized, and an engine will either reject the "
      "checkpoint or load it at 16 bits");
  EXPECT_EQ(f->bytes, (256u * 256 + 512 * 256) * 2);
}

TEST(Audit, PartialAndSilentFallback) {
  ModelSpec s = Spec(R"({"quant_method":"compressed-tensors","format":"pack-quantized",
      "config_groups":{"g":{"targets":["Linear"],"weights":{"num_bits":4,"strategy":"group",)"
          R"("group_size":128}}},
      "ignore":["re:.*o_proj$"]})");
  Inventory inv =
      Build(&s, {T("model.layers.0.self_attn.q_proj.weight_packed", Dtype::kI32, {256, 32}),
                 T("model.layers.0.self_attn.q_proj.weight_scale", Dtype::kF16, {256, 2}),
                 T("model.layers.0.self_attn.o_proj.weight", Dtype::kF16, {256, 256}),
                 T("model.layers.0.mlp.down_proj.weight", Dtype::kF16, {256, 512})});
  EXPECT_EQ(inv.audit.quantized_linear, 1);
  EXPECT_EQ(inv.audit.unquantized_linear, 2);
  ASSERT_NE(Find(inv, "partial-quantization"), nullptr);
  const Finding* f = Find(inv, "silent-fallback");
  ASSERT_NE(f, nullptr);  // down_proj is covered by the rules but stored in F16; o_proj is ignored
  EXPECT_EQ(f->message, "1 projections that the config's own rules say are quantized are stored "
                        "unquantized (256.00 KiB): mlp:down_proj x1");
}

TEST(Audit, SmallGroupCostsLikeEightBit) {
  // 4-bit with group 16 and F32 scales + I32 zeros: values 4 bits, F32 scales + I32 zeros + g_idx
  // add 2.31 bits.
  ModelSpec s = Spec(R"({"quant_method":"gptq","bits":4,"group_size":16})");
  Inventory inv = Build(&s, {T("model.layers.0.mlp.up_proj.qweight", Dtype::kI32, {32, 512}),
                             T("model.layers.0.mlp.up_proj.qzeros", Dtype::kI32, {16, 64}),
                             T("model.layers.0.mlp.up_proj.scales", Dtype::kF32, {16, 512}),
                             T("model.layers.0.mlp.up_proj.g_idx", Dtype::kI32, {256})});
  const Finding* f = Find(inv, "group-overhead");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_NE(f->message.find("6.312 effective bits over 4-bit values"), std::string::npos)
      << f->message;
}

TEST(Audit, SchemeMismatchFromHeaders) {
  ModelSpec s = Spec(R"({"quant_method":"gptq","bits":4,"group_size":128})");
  // The headers hold 8-bit values in groups of 64.
  Inventory inv = Build(&s, {T("model.layers.0.mlp.up_proj.qweight", Dtype::kI32, {64, 512}),
                             T("model.layers.0.mlp.up_proj.qzeros", Dtype::kI32, {4, 128}),
                             T("model.layers.0.mlp.up_proj.scales", Dtype::kF16, {4, 512}),
                             T("model.layers.0.mlp.up_proj.g_idx", Dtype::kI32, {256})});
  const Finding* f = Find(inv, "scheme-mismatch");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("model.layers.0.mlp.up_proj holds 8-bit values in groups of 64"),
            std::string::npos)
      << f->message;
}

// A per-module override (GPTQModel `dynamic`, AutoRound `extra_config`) declares that
// module's bits and group size: the same 8-bit headers then match.
TEST(Audit, PerModuleOverridesAreTheDeclaredScheme) {
  for (const char* quant :
       {R"({"quant_method":"gptq","bits":4,"group_size":128,
            "dynamic":{"+:.*up_proj":{"bits":8,"group_size":64}}})",
        R"({"quant_method":"auto-round","bits":4,"group_size":128,"sym":true,
            "extra_config":{"model.layers.0.mlp.up_proj":{"bits":8,"group_size":64}}})"}) {
    ModelSpec s = Spec(quant);
    Inventory inv = Build(&s, {T("model.layers.0.mlp.up_proj.qweight", Dtype::kI32, {64, 512}),
                               T("model.layers.0.mlp.up_proj.qzeros", Dtype::kI32, {4, 128}),
                               T("model.layers.0.mlp.up_proj.scales", Dtype::kF16, {4, 512}),
                               T("model.layers.0.mlp.up_proj.g_idx", Dtype::kI32, {256})});
    EXPECT_EQ(Find(inv, "scheme-mismatch"), nullptr) << quant;
  }
}

TEST(Audit, TiedEmbeddingsAndDuplicates) {
  ModelSpec tied = Spec("", true);
  Inventory a = Build(&tied, {T("model.embed_tokens.weight", Dtype::kF16, {1000, 256})});
  ASSERT_NE(Find(a, "tied-embeddings"), nullptr);
  Inventory b = Build(&tied, {T("model.embed_tokens.weight", Dtype::kF16, {1000, 256}),
                              T("lm_head.weight", Dtype::kF16, {1000, 256})});
  ASSERT_NE(Find(b, "tied-embeddings-stored"), nullptr);
  ModelSpec q = Spec(R"({"quant_method":"awq"})");
  Inventory c = Build(&q, {T("model.layers.0.mlp.up_proj.qweight", Dtype::kI32, {256, 64}),
                           T("model.layers.0.mlp.up_proj.weight", Dtype::kF16, {512, 256})});
  ASSERT_NE(Find(c, "duplicate-weights"), nullptr);
  Inventory d = Build(&tied, {T("model.embed_tokens.weight", Dtype::kF16, {999, 256})});
  ASSERT_NE(Find(d, "vocab-mismatch"), nullptr);
}

TEST(Audit, UndeclaredQuantization) {
  ModelSpec s = Spec("");
  Inventory inv = Build(&s, {T("model.layers.0.mlp.up_proj.qweight", Dtype::kI32, {256, 64})});
  ASSERT_NE(Find(inv, "undeclared-quantization"), nullptr);
}

// Gemma 4's synthesized checkpoints against the parameter counts their shapes give by hand:
// E2B's per-layer embeddings (262,144 x 35 x 256 = 2.35 B) dominate; 26B-A4B's text model is
// 25.2 B (the experts 128 x 3 x 2,816 x 704 a layer).
TEST(Synthesize, Gemma4ParameterCounts) {
  auto count = [](const char* id, std::string_view prefix) {
    auto m = FindCatalogModel(id);
    EXPECT_TRUE(m.ok());
    auto spec = ModelSpecFromConfigJson(m->config_json, id);
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
    auto t = SynthesizeTensors(*spec);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    uint64_t n = 0;
    for (const TensorInfo& x : t->tensors)
      if (x.name.rfind(prefix, 0) == 0) n += x.elements;
    return n;
  };
  const uint64_t ple = count("gemma-4-e2b-it", "model.language_model.embed_tokens_per_layer");
  EXPECT_EQ(ple, uint64_t{262144} * 35 * 256);
  // The E2B text model: embeddings, per-layer inputs, 15 caching and 20 shared layers.
  const uint64_t e2b_text = count("gemma-4-e2b-it", "model.language_model.");
  EXPECT_NEAR(static_cast<double>(e2b_text) / 1e9, 4.63, 0.02);
  EXPECT_NEAR(static_cast<double>(count("gemma-4-e2b-it", "model.audio_tower.")) / 1e6, 305, 3);
  EXPECT_NEAR(static_cast<double>(count("gemma-4-e2b-it", "model.vision_tower.")) / 1e6, 167, 3);
  EXPECT_NEAR(static_cast<double>(count("gemma-4-26b-a4b-it", "model.language_model.")) / 1e9,
              25.2, 0.1);
  // The audio tower and its projection are their own component (no norms or other left behind).
  {
    auto em = FindCatalogModel("gemma-4-e2b-it");
    auto es = ModelSpecFromConfigJson(em->config_json, "e2b");
    auto et = SynthesizeTensors(*es);
    ASSERT_TRUE(et.ok());
    std::vector<FileTensors> files;
    files.push_back(std::move(*et));
    const Inventory inv = BuildInventory(&*es, std::move(files));
    uint64_t audio = 0;
    for (const ComponentTotal& c : inv.by_component)
      if (c.component == Component::kAudio) audio = c.parameters;
    EXPECT_EQ(audio, count("gemma-4-e2b-it", "model.audio_tower.") +
                         count("gemma-4-e2b-it", "model.embed_audio."));
  }
  // 31B: no v_proj on the 10 K = V layers.
  auto m = FindCatalogModel("gemma-4-31b-it");
  auto spec = ModelSpecFromConfigJson(m->config_json, "31b");
  auto t = SynthesizeTensors(*spec);
  ASSERT_TRUE(t.ok());
  int v_proj = 0, k_proj = 0;
  for (const TensorInfo& x : t->tensors) {
    if (x.name.rfind("model.language_model.", 0) != 0) continue;  // not the vision tower's
    v_proj += x.name.find("self_attn.v_proj") != std::string::npos;
    k_proj += x.name.find("self_attn.k_proj") != std::string::npos;
  }
  EXPECT_EQ(k_proj, 60);
  EXPECT_EQ(v_proj, 50);
}

TEST(Synthesize, RefusesAbsurdTensorCounts) {
  auto s = ModelSpecFromConfigJson(
      R"({"model_type":"qwen3_moe","hidden_size":64,"num_hidden_layers":4096,)"
      R"("num_attention_heads":4,
          "intermediate_size":128,"vocab_size":100,"num_experts":65536,"num_experts_per_tok":8,
          "moe_intermediate_size":64})",
      "c");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto t = SynthesizeTensors(*s);
  ASSERT_FALSE(t.ok());
  // 4096 layers x (3 x 65536 experts + 11 linears) x 7 tensors + 8 per layer + 24 = 5,637,492,760.
  EXPECT_EQ(
      t.status().message(),
      "config.json: these dimensions imply about 5637492760 tensors, more than any real checkpoint "
      "(limit 5000000): check num_hidden_layers, num_experts and the vision depth");
}

}  // namespace
}  // namespace vramfit
