// What-if quantization (model/what_if.cc) and packed parameter counts for every width: the
// flags' checks, the scheme each method writes, and 2/3/4/8-bit checkpoints of a spec in both
// packing orders (GPTQ and AWQ) that count the unquantized model's parameters exactly.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "vramfit/catalog.h"
#include "vramfit/inventory.h"
#include "vramfit/model.h"

namespace vramfit {
namespace {

ModelSpec Dense() {
  auto s = ModelSpecFromConfigJson(
      R"({"architectures":["Qwen3ForCausalLM"],"model_type":"qwen3","hidden_size":1024,
          "num_hidden_layers":2,"num_attention_heads":8,"num_key_value_heads":4,"head_dim":128,
          "intermediate_size":3072,"vocab_size":4096,"torch_dtype":"bfloat16",
          "tie_word_embeddings":false})",
      "config.json");
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return *s;
}

Inventory Synth(const ModelSpec& s) {
  auto t = SynthesizeTensors(s);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  std::vector<FileTensors> files;
  files.push_back(std::move(*t));
  return BuildInventory(&s, std::move(files));
}

// Gemma 4 26B-A4B as AWQ: its experts are written one linear each (quantized), the widths
// 704 and 2,112 that 128 does not divide end in a shorter group without a scheme mismatch, and
// the warning names the group that divides every width.
TEST(WhatIfQuant, Gemma4MoeExpertsAreQuantized) {
  auto m = FindCatalogModel("gemma-4-26b-a4b-it");
  ASSERT_TRUE(m.ok());
  auto base = ModelSpecFromConfigJson(m->config_json, "c");
  ASSERT_TRUE(base.ok());
  auto q = MakeWhatIfQuant("awq", 0, -2, false);
  ASSERT_TRUE(q.ok());
  auto s = WhatIfQuantizedSpec(*base, *q);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const Inventory inv = Synth(*s);
  // 128 experts x 3 linears x 30 layers, the dense MLP's 3 and 4 attention projections each.
  EXPECT_EQ(inv.audit.quantized_linear, 30 * (128 * 3 + 3) + 25 * 4 + 5 * 3);
  EXPECT_EQ(inv.audit.unquantized_linear, 0);
  for (const Finding& f : inv.audit.findings) EXPECT_NE(f.code, "scheme-mismatch") << f.message;
  EXPECT_NEAR(static_cast<double>(inv.total_bytes) / (1ull << 30), 14.32, 0.01);
  bool named = false;
  for (const std::string& w : s->warnings)
    named |= w.find("--group-size 64 divides every width") != std::string::npos;
  EXPECT_TRUE(named);
}

TEST(WhatIfQuant, FlagsAreChecked) {
  auto awq = MakeWhatIfQuant("AWQ", 0, -2, false);
  ASSERT_TRUE(awq.ok());
  EXPECT_EQ(awq->bits, 4);
  EXPECT_EQ(awq->group_size, 128);
  EXPECT_EQ(WhatIfLabel(*awq), "AWQ 4-bit g128");
  EXPECT_EQ(MakeWhatIfQuant("awq", 3, -2, false).status().message(),
            "--bits 3: awq packs 4 bits only");
  EXPECT_EQ(MakeWhatIfQuant("gptq", 5, -2, false).status().message(),
            "--bits 5: gptq packs 2, 3, 4, 8 bits only");
  auto g3 = MakeWhatIfQuant("gptq", 3, -1, true);
  ASSERT_TRUE(g3.ok());
  EXPECT_EQ(WhatIfLabel(*g3), "GPTQ 3-bit per channel desc_act");
  EXPECT_EQ(MakeWhatIfQuant("fp8", 0, 64, false).status().message(),
            "--group-size: fp8 has no group size to choose (its scales are fixed by the format)");
  EXPECT_EQ(MakeWhatIfQuant("awq", 0, -2, true).status().message(),
            "--desc-act: only gptq has act-order, not awq");
  EXPECT_EQ(MakeWhatIfQuant("int3", 0, -2, false).status().message(),
            "--as-quantized int3: expected awq, gptq, fp8, w8a8 or nvfp4, or a GGUF file type "
            "(q4_k_m, q4_k_s, q5_k_m, q6_k, q8_0, q4_0, f16, bf16, mxfp4_moe, mxfp4)");
  auto gguf = MakeWhatIfQuant("gguf:Q4_K_M", 0, -2, false);
  ASSERT_TRUE(gguf.ok());
  EXPECT_TRUE(gguf->gguf);
  EXPECT_EQ(WhatIfLabel(*gguf), "GGUF Q4_K_M");
  EXPECT_EQ(MakeWhatIfQuant("q8_0", 8, -2, false).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(WhatIfLabel(*MakeWhatIfQuant("fp8", 0, -2, false)), "FP8 block 128x128");
}

TEST(WhatIfQuant, RefusesAQuantizedModel) {
  ModelSpec s = Dense();
  auto q = WhatIfQuantizedSpec(s, *MakeWhatIfQuant("awq", 0, -2, false));
  ASSERT_TRUE(q.ok());
  auto again = WhatIfQuantizedSpec(*q, *MakeWhatIfQuant("gptq", 0, -2, false));
  EXPECT_EQ(again.status().message(),
            "--as-quantized: the checkpoint is already quantized (awq); give the unquantized "
            "model");
}

// Every method keeps the parameter count and quantizes exactly the decoder projections.
TEST(WhatIfQuant, EveryMethodKeepsTheParameters) {
  const ModelSpec base = Dense();
  const Inventory plain = Synth(base);
  for (const char* m : {"awq", "gptq", "fp8", "w8a8", "nvfp4"}) {
    SCOPED_TRACE(m);
    auto spec = WhatIfQuantizedSpec(base, *MakeWhatIfQuant(m, 0, -2, false));
    ASSERT_TRUE(spec.ok()) << spec.status().ToString();
    const Inventory inv = Synth(*spec);
    EXPECT_EQ(inv.parameters, plain.parameters);
    EXPECT_EQ(inv.audit.quantized_linear, 2 * 7);  // q k v o gate up down, two layers
    EXPECT_EQ(inv.audit.unquantized_linear, 0);
    EXPECT_LT(inv.total_bytes, plain.total_bytes);
    for (const TensorEntry& e : inv.tensors) {
      if (e.role == Role::kLmHead || e.role == Role::kEmbedding) {
        EXPECT_FALSE(e.quantized);
      }
    }
  }
}

// 2, 3, 4 and 8 bits in both packing orders: GPTQ's qweight [K*b/32, N] and AWQ's GEMM layout
// [K, N*b/32] with qzeros [K/G, N*b/32] (AutoAWQ awq/modules/linear/gemm.py, v0.2.9, writes
// 4-bit only; the width is set on the scheme by hand, the header layout being the same). Each
// unpacks to K x N parameters whatever b divides 32 or not (3-bit was counted as 10 values an
// I32, not 32/3), and the bytes are the layout's closed form (g_idx: GPTQ only).
TEST(WhatIfQuant, EveryWidthAndPackingCountsAndSizesExactly) {
  const ModelSpec base = Dense();
  const Inventory plain = Synth(base);
  const uint64_t h = 1024, q = 8 * 128, kv = 4 * 128, ff = 3072, g = 128;
  struct Lin { uint64_t n, k; };
  const Lin lins[] = {{q, h}, {kv, h}, {kv, h}, {h, q}, {ff, h}, {ff, h}, {h, ff}};
  for (const char* method : {"gptq", "awq"}) {
    const bool awq = std::string_view(method) == "awq";
    for (int bits : {2, 3, 4, 8}) {
      SCOPED_TRACE(std::string(method) + " " + std::to_string(bits));
      auto spec = WhatIfQuantizedSpec(base, *MakeWhatIfQuant(method, awq ? 4 : bits, -2, false));
      ASSERT_TRUE(spec.ok());
      ASSERT_EQ(spec->quant.layout, awq ? QuantLayout::kAwqGemm : QuantLayout::kGptq);
      spec->quant.bits = bits;
      const Inventory inv = Synth(*spec);
      EXPECT_EQ(inv.parameters, plain.parameters);
      EXPECT_EQ(inv.audit.quantized_linear, 2 * 7);
      uint64_t quantized = 0, plain_linear = 0;
      for (const Lin& l : lins) {
        const uint64_t b = static_cast<uint64_t>(bits);
        const uint64_t qweight = awq ? l.k * (l.n * b / 32) : l.k * b / 32 * l.n;
        quantized += qweight * 4                      // qweight
                     + l.k / g * (l.n * b / 32) * 4   // qzeros
                     + l.k / g * l.n * 2              // scales F16
                     + (awq ? 0 : l.k * 4);           // g_idx
        plain_linear += l.n * l.k * 2;
      }
      EXPECT_EQ(inv.total_bytes, plain.total_bytes - 2 * plain_linear + 2 * quantized);
    }
  }
}

}  // namespace
}  // namespace vramfit
