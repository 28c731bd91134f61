// What-if inventories (InspectOptions::as_quantized) against the published quantized
// checkpoints of the same models: the catalog holds their config.json (Qwen's own AWQ, GPTQ
// and FP8 releases), whose layouts the hollow checkpoint tests match header for header. A
// what-if from the unquantized model must land within 0.5% of their bytes and keep the
// unquantized parameter count.
#include <gtest/gtest.h>

#include <cmath>

#include "vramfit/inspect.h"

namespace vramfit {
namespace {

struct Case {
  const char* base;
  const char* published;
  const char* method;
  int bits;
};

class WhatIfVsPublished : public ::testing::TestWithParam<Case> {};

TEST_P(WhatIfVsPublished, BytesWithinHalfAPercent) {
  const Case& c = GetParam();
  InspectOptions o;
  auto q = MakeWhatIfQuant(c.method, c.bits, -2, false);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  o.as_quantized = *q;
  auto what_if = InspectModel(c.base, o);
  ASSERT_TRUE(what_if.ok()) << what_if.status().ToString();
  auto base = InspectModel(c.base, {});
  auto published = InspectModel(c.published, {});
  ASSERT_TRUE(base.ok() && published.ok());
  EXPECT_EQ(what_if->what_if, WhatIfLabel(*q));
  EXPECT_EQ(what_if->parameters, base->parameters);
  EXPECT_EQ(what_if->quantization.method, published->quantization.method);
  EXPECT_EQ(what_if->audit.unquantized_linear, 0);
  const double got = static_cast<double>(what_if->total_bytes);
  const double want = static_cast<double>(published->total_bytes);
  const double err = 100.0 * (got - want) / want;
  RecordProperty("error_percent", std::to_string(err));
  EXPECT_LT(std::fabs(err), 0.5) << c.base << " as " << WhatIfLabel(*q) << ": " << got
                                 << " bytes, " << c.published << ": " << want;
}

INSTANTIATE_TEST_SUITE_P(
    Qwen, WhatIfVsPublished,
    ::testing::Values(Case{"qwen3-4b-instruct-2507", "qwen3-4b-instruct-2507-awq", "awq", 4},
                      Case{"qwen3-4b-instruct-2507", "qwen3-4b-instruct-2507-fp8", "fp8", 8},
                      Case{"qwen2.5-7b-instruct", "qwen2.5-7b-instruct-awq", "awq", 4},
                      Case{"qwen2.5-7b-instruct", "qwen2.5-7b-instruct-gptq-int4", "gptq", 4},
                      Case{"qwen3-30b-a3b", "qwen3-30b-a3b-gptq-int4", "gptq", 4},
                      Case{"qwen3-30b-a3b", "qwen3-30b-a3b-fp8", "fp8", 8},
                      Case{"qwen3-8b", "qwen3-8b-awq", "awq", 4},
                      Case{"qwen3-8b", "qwen3-8b-fp8", "fp8", 8},
                      Case{"qwen3-32b", "qwen3-32b-awq", "awq", 4},
                      Case{"qwen3-32b", "qwen3-32b-fp8", "fp8", 8}));

// The 3-bit count (issue 15): a GPTQ 3-bit Qwen3.6-35B-A3B was counted as 33.85B parameters
// (10 values an I32 instead of 32/3); every width counts the model's 35.95B.
TEST(WhatIf, GptqEveryWidthKeepsQwen36Parameters) {
  for (int bits : {2, 3, 4, 8}) {
    InspectOptions o;
    o.as_quantized = *MakeWhatIfQuant("gptq", bits, -2, false);
    auto inv = InspectModel("qwen3.6-35b-a3b", o);
    ASSERT_TRUE(inv.ok()) << inv.status().ToString();
    EXPECT_EQ(inv->parameters, 35'951'822'704u) << bits << "-bit";
  }
}

TEST(WhatIf, RefusesAQuantizedCheckpoint) {
  InspectOptions o;
  o.as_quantized = *MakeWhatIfQuant("gptq", 4, -2, false);
  auto inv = InspectModel("qwen3-8b-awq", o);
  ASSERT_FALSE(inv.ok());
  EXPECT_EQ(inv.status().message(),
            "--as-quantized: the checkpoint is already quantized (awq); give the unquantized "
            "model");
}

TEST(WhatIf, MoeRoutersAndHeadStayUnquantized) {
  InspectOptions o;
  o.as_quantized = *MakeWhatIfQuant("w8a8", 0, -2, false);
  auto inv = InspectModel("qwen3-30b-a3b", o);
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  int routers = 0;
  for (const TensorEntry& e : inv->tensors) {
    if (e.role == Role::kRouter || e.role == Role::kLmHead || e.role == Role::kEmbedding) {
      EXPECT_FALSE(e.quantized) << e.info.name;
      routers += e.role == Role::kRouter;
    }
  }
  EXPECT_EQ(routers, 48);
  EXPECT_EQ(inv->audit.unquantized_linear, 0);
}

}  // namespace
}  // namespace vramfit
