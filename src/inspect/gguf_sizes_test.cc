// GGUF what-ifs (InspectOptions::as_quantized with a GGUF file type) against real GGUF files:
// the synthesized tensor bytes beside (1) the sum of the model buffers llama.cpp printed at
// load (CPU_Mapped + CUDA model buffers: every tensor of the file, exact), from the records of
// validation/llamacpp/records.json, and (2) file sizes as published (llama.cpp's "file size"
// line, two decimals of GiB; Hugging Face listings in decimal GB), which hold the header too
// (a few MB of tokenizer). Each case prints its signed error; docs/engines/llamacpp.md lists
// them. The tolerance is the rounding of the published figure plus kSlack.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "vramfit/inspect.h"
#include "vramfit/ollama_library.h"

namespace vramfit {
namespace {

constexpr double kMiB = 1048576.0, kGiB = 1073741824.0;
// The header (tokenizer, metadata) that file sizes hold and the synthesis does not: at most
// ~12 MB for a 150k-token vocabulary with its merges.
constexpr double kHeaderMax = 12e6;

struct Case {
  const char* model;
  const char* type;
  double published;     // bytes
  double rounding;      // half the published figure's last unit, bytes
  bool file_size;       // a file size (holds the header), else tensor bytes
  double tolerance;     // |signed error| allowed beyond rounding, as a fraction
  const char* source;
};

double Synthesized(const char* model, const char* type) {
  InspectOptions o;
  auto q = MakeWhatIfQuant(type, 0, -2, false);
  EXPECT_TRUE(q.ok()) << q.status().ToString();
  o.as_quantized = *q;
  auto inv = InspectModel(model, o);
  EXPECT_TRUE(inv.ok()) << model << ": " << inv.status().ToString();
  return inv.ok() ? static_cast<double>(inv->total_bytes) : 0;
}

void Check(const Case& c) {
  const double got = Synthesized(c.model, c.type);
  const double want = c.published - (c.file_size ? kHeaderMax / 2 : 0);
  const double err = (got - want) / want;
  std::printf("gguf size %-30s %-9s synthesized %.3f GiB, published %.3f GiB: %+.3f%% (%s)\n",
              c.model, c.type, got / kGiB, c.published / kGiB,
              100 * (got - c.published) / c.published, c.source);
  const double allowed = c.tolerance + (c.rounding + (c.file_size ? kHeaderMax / 2 : 0)) / want;
  EXPECT_LE(std::abs(err), allowed) << c.model << " " << c.type << ": " << 100 * err << "%";
}

// Dense models (Llama 3, Qwen2.5, Qwen3).
TEST(GgufWhatIfSize, DenseModelsMatchPublishedFiles) {
  const Case cases[] = {
      {"meta-llama-3-8b", "q4_k_m", (4403.49 + 281.81) * kMiB, 0.01 * kMiB, false, 0.002,
       "validation/llamacpp r01, model buffers"},
      {"llama-3.1-8b-instruct", "q4_k_m", (4403.49 + 281.81) * kMiB, 0.01 * kMiB, false, 0.002,
       "validation/llamacpp r29, model buffers"},
      // r11: 225 q4_0 tensors are 32 x 7 + token_embd; output.weight is Q6_K, as the rule.
      {"llama-3.1-8b-instruct", "q4_0", (4155.99 + 281.81) * kMiB, 0.01 * kMiB, false, 0.002,
       "validation/llamacpp r11, model buffers"},
      {"qwen3-14b", "q8_0", (14177.36 + 788.24) * kMiB, 0.01 * kMiB, false, 0.002,
       "validation/llamacpp r30, model buffers"},
      {"deepseek-r1-distill-qwen-14b", "q4_k_m", (3621.44 + 4944.6) * kMiB, 0.01 * kMiB, false,
       0.002, "validation/llamacpp r35, model buffers"},
      {"qwen2.5-32b-instruct", "q4_k_m",
       (4844.72 + 2 * 4366.53 + 4930.57 + 417.66) * kMiB, 0.01 * kMiB, false, 0.002,
       "validation/llamacpp r28 (R1-Distill-Qwen-32B), model buffers"},
      // Phi-4's fused attn_qkv (Q5_K in Q4_K_M) and ffn_up: Ollama's phi4:latest, a Q4_K_M
      // file of 9,053,116,391 bytes in an /api/tags response captured in a public repository
      // (code-index file 9967510016).
      {"phi-4", "q4_k_m", 9053116391.0, 0.5, true, 0.002,
       "Ollama phi4:latest, /api/tags size"},
      {"qwen3-32b", "q8_0", 34.82e9, 0.005e9, true, 0.002,
       "bartowski/Qwen_Qwen3-32B-GGUF listing, Q8_0"},
      {"qwen3-32b", "bf16", 65.53e9, 0.005e9, true, 0.002,
       "bartowski/Qwen_Qwen3-32B-GGUF listing, bf16"},
  };
  for (const Case& c : cases) Check(c);
}

// MoE models (Qwen3-30B-A3B, Qwen3-235B-A22B, gpt-oss-20b).
TEST(GgufWhatIfSize, MoeModelsMatchPublishedFiles) {
  const Case cases[] = {
      {"qwen3-30b-a3b", "q4_k_m", 17.28 * kGiB, 0.005 * kGiB, true, 0.002,
       "validation/llamacpp r08, file size"},
      {"qwen3-235b-a22b", "q8_0", 232.77 * kGiB, 0.005 * kGiB, true, 0.002,
       "validation/llamacpp r07, file size"},
      {"qwen3-235b-a22b", "q6_k", 179.75 * kGiB, 0.005 * kGiB, true, 0.002,
       "validation/llamacpp r06, file size"},
      // r13's buffers (12191 MiB) exceed its own file (11.27 GiB) under --n-cpu-moe: the
      // file size is the figure of the file.
      {"gpt-oss-20b", "mxfp4_moe", 11.27 * kGiB, 0.005 * kGiB, true, 0.002,
       "validation/llamacpp r13, file size"},
  };
  for (const Case& c : cases) Check(c);
}

// Gated DeltaNet hybrids (Qwen3.5, Qwen3.6): the converter of fc0fe4004 on, MTP left out.
TEST(GgufWhatIfSize, HybridModelsMatchPublishedFiles) {
  const Case cases[] = {
      {"qwen3.5-27b", "q4_k_s", (8740.26 + 6096.65) * kMiB, 0.01 * kMiB, false, 0.002,
       "validation/llamacpp r42, model buffers"},
      // A Qwen3.6-35B-A3B-Q4_K_M.gguf of 21,166,757,920 bytes, llama-bench reading 19.70 GiB
      // of tensors (a benchmark note, code-index file 71032795908); a copy elsewhere is
      // 21,166,757,888 bytes (file 56139585468).
      {"qwen3.6-35b-a3b", "q4_k_m", 21166757920.0, 0.5, true, 0.002,
       "a published Qwen3.6-35B-A3B-Q4_K_M.gguf, file size"},
  };
  for (const Case& c : cases) Check(c);
}

// An Ollama library name is the what-if of its catalog entry in its tag's type.
TEST(GgufWhatIfSize, LibraryNameIsTheWhatIfOfItsEntry) {
  auto lib = InspectModel("qwen3:32b", {});
  ASSERT_TRUE(lib.ok()) << lib.status().ToString();
  EXPECT_EQ(lib->what_if, "GGUF Q4_K_M of Ollama's qwen3:32b");
  EXPECT_EQ(lib->model, "qwen3:32b");
  EXPECT_EQ(static_cast<double>(lib->total_bytes), Synthesized("qwen3-32b", "q4_k_m"));
  ASSERT_FALSE(lib->notes.empty());
  EXPECT_NE(lib->notes.front().find("not the library's file itself"), std::string::npos);
  auto q8 = InspectModel("qwen3:32b-q8_0", {});
  ASSERT_TRUE(q8.ok());
  EXPECT_EQ(static_cast<double>(q8->total_bytes), Synthesized("qwen3-32b", "q8_0"));
  // A bare name is the library's only for the commands that run Ollama.
  EXPECT_FALSE(InspectModel("qwen3", {}).ok());
  InspectOptions o;
  o.ollama_names = true;
  auto bare = InspectModel("qwen3", o);
  ASSERT_TRUE(bare.ok()) << bare.status().ToString();
  EXPECT_EQ(bare->what_if, "GGUF Q4_K_M of Ollama's qwen3:8b");
  // A part of the library's file the what-if lacks (gemma3's vision tower) is in the label
  // the plan prints, not only in inspect's notes.
  auto gemma = InspectModel("gemma3:27b", o);
  ASSERT_TRUE(gemma.ok()) << gemma.status().ToString();
  EXPECT_NE(gemma->what_if.find("vision tower"), std::string::npos) << gemma->what_if;
  // ... with the tower's size at 16 bits, which a plan's headroom must hold.
  EXPECT_EQ(gemma->what_if_lacks_bytes, 423060336u * 2);
  // The tag fixes the type: --as-quantized is refused with it.
  o.as_quantized = *MakeWhatIfQuant("q8_0", 0, -2, false);
  EXPECT_EQ(InspectModel("qwen3:32b", o).status().code(), Code::kInvalidArgument);
}

// A .gguf file that is not here, for the commands that run llama.cpp: the what-if its name
// spells, in bartowski's and Qwen's "-Q4_K_M" and TheBloke's ".Q4_K_M" forms, split files too.
TEST(GgufWhatIfSize, AMissingGgufFileIsTheWhatIfItsNameSpells) {
  InspectOptions o;
  EXPECT_EQ(InspectModel("Qwen3-8B-Q4_K_M.gguf", o).status().code(), Code::kNotFound);
  o.gguf_names = true;
  auto named = InspectModel("Qwen3-8B-Q4_K_M.gguf", o);
  ASSERT_TRUE(named.ok()) << named.status().ToString();
  EXPECT_EQ(named->what_if, "GGUF Q4_K_M for the missing file Qwen3-8B-Q4_K_M.gguf");
  EXPECT_EQ(named->model, "Qwen3-8B-Q4_K_M.gguf");
  EXPECT_EQ(static_cast<double>(named->total_bytes), Synthesized("qwen3-8b", "q4_k_m"));
  auto dotted = InspectModel("/models/qwen2.5-7b-instruct.Q8_0.gguf", o);
  ASSERT_TRUE(dotted.ok()) << dotted.status().ToString();
  EXPECT_EQ(static_cast<double>(dotted->total_bytes),
            Synthesized("qwen2.5-7b-instruct", "q8_0"));
  auto split = InspectModel("Qwen3-32B-Q6_K-00001-of-00002.gguf", o);
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  EXPECT_EQ(static_cast<double>(split->total_bytes), Synthesized("qwen3-32b", "q6_k"));
  // A file type vramfit does not lay out, or a model not in the catalog: the file's own error.
  EXPECT_EQ(InspectModel("Qwen3-8B-UD-Q4_K_XL.gguf", o).status().code(), Code::kNotFound);
  EXPECT_EQ(InspectModel("NoSuchModel-7B-Q4_K_M.gguf", o).status().code(), Code::kNotFound);
  EXPECT_EQ(InspectModel("Q4_K_M.gguf", o).status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace vramfit
