// The vision projector (--mmproj) in the llama.cpp plan, over hollow mmproj headers the tests
// write: the header's keys, the tokens of one image per projector type, the encoder's compute
// estimate against a published warm-up line, and where the plan puts the projector.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "engines/llamacpp/command.h"
#include "engines/llamacpp/engine.h"
#include "engines/llamacpp/llamacpp.h"
#include "engines/llamacpp/mmproj.h"
#include "model/gguf_what_if.h"
#include "testutil/catalog.h"
#include "testutil/gguf_writer.h"
#include "testutil/hollow.h"
#include "vramfit/gguf.h"
#include "vramfit/inspect.h"

namespace vramfit::llamacpp {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

struct Tower {
  std::string type;
  uint32_t image = 896, patch = 14, hidden = 1152, ffn = 4304, layers = 27, heads = 16;
};

vramfit::testing::GgufWriter Writer(const Tower& t) {
  vramfit::testing::GgufWriter w;
  w.Str("general.architecture", "clip");
  w.Bool("clip.has_vision_encoder", true);
  w.Str("clip.projector_type", t.type);
  w.U32("clip.vision.image_size", t.image);
  w.U32("clip.vision.patch_size", t.patch);
  w.U32("clip.vision.embedding_length", t.hidden);
  w.U32("clip.vision.feed_forward_length", t.ffn);
  w.U32("clip.vision.block_count", t.layers);
  w.U32("clip.vision.attention.head_count", t.heads);
  // 400 MiB of F16 weights in one tensor (hollow: only the header is written).
  w.Tensor("v.blk.0.ffn_up.weight", Dtype::kF16, {200, 1024, 1024});
  return w;
}

GgufFile Header(const vramfit::testing::GgufWriter& w) {
  const std::string head = w.Header();
  auto f = ParseGguf(head, w.FileSize(), "mmproj-test.gguf");
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? std::move(*f) : GgufFile{};
}

// Gemma 3: 896 / 14 = 64 patches a side, merged 4 x 4: 256 tokens, decoded non-causally.
TEST(LlamaCppMmprojTest, Gemma3HeaderAndTokens) {
  auto p = ReadProjector(Header(Writer({"gemma3"})));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->merge, 4);
  EXPECT_EQ(p->image_tokens, 256);
  EXPECT_EQ(p->warmup_size, 896);
  EXPECT_EQ(p->warmup_patches, 4096);
  EXPECT_TRUE(p->non_causal);
  EXPECT_EQ(p->weight_bytes, 400 * kMiB);
  // T = 4096, d = 1152, f = 4304, h = 16, f32:
  //   flash:    3dT x 4 + 2fT x 4 = 56,623,104 + 141,033,472
  //   no flash: 3dT x 4 + (3dT x 4 + hT^2 x 4) = 56,623,104 x 2 + 1,073,741,824
  EXPECT_EQ(EncoderComputeBytes(*p, true), 197656576u);
  EXPECT_EQ(EncoderComputeBytes(*p, false), 1186988032u);
}

// Qwen-VL mergers: spatial merge 2, at most 4096 tokens an image, warm-up at 46 x 46 tokens.
// The published warm-up of Qwen3-VL-235B's mmproj (tests/doctor/corpus, ...-18181): image size
// 768, patch 16, n_embd 1152, 27 layers, "warmup with image size = 1472 x 1472" and a CUDA0
// buffer of 390,156,544 bytes (372.08 MiB). The estimate: T = 92^2 = 8464,
// 4 x 8464 x (3 x 1152 + 2 x 4304) = 408,438,784 bytes (389.51 MiB, +4.7%).
TEST(LlamaCppMmprojTest, QwenVlWarmupMatchesItsLog) {
  Tower t{"qwen3vl_merger"};
  t.image = 768, t.patch = 16;
  auto p = ReadProjector(Header(Writer(t)));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->merge, 2);
  EXPECT_EQ(p->warmup_size, 1472);
  EXPECT_EQ(p->warmup_patches, 8464);
  EXPECT_EQ(p->image_tokens, 4096);
  EXPECT_FALSE(p->non_causal);
  const uint64_t est = EncoderComputeBytes(*p, true);
  EXPECT_EQ(est, 408438784u);
  EXPECT_LT(static_cast<double>(est) / 390156544.0, 1.05);
  // Qwen2.5-VL adds its [T, T] f32 window mask and its f16 copy under flash attention.
  t.type = "qwen2.5vl_merger";
  auto q = ReadProjector(Header(Writer(t)));
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(EncoderComputeBytes(*q, true), 408438784u + uint64_t{8464} * 8464 * 6);
}

// The mmproj what-if (-hf's projector, SynthesizeMmproj) reads as a real file of its type does:
// Qwen3.6's tower as qwen3vl_merger (1152 wide, 27 blocks, patch 16: the warm-up of 8,464
// patches and its 408 MB estimate, as the Qwen3-VL file above), its weights the tower at 16
// bits; Gemma 3's SigLIP as gemma3 (256 tokens an image, non-causal). A tower without a laid-out
// projector type, or no tower, is refused.
TEST(LlamaCppMmprojTest, WhatIfHeadersReadAsTheirType) {
  auto spec_of = [](const char* id) { return vramfit::testutil::Catalog(id).spec; };
  auto q = SynthesizeMmproj(spec_of("qwen3.6-35b-a3b"), 893146496, "q.mmproj");
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  auto p = ReadProjector(*q);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->type, "qwen3vl_merger");
  EXPECT_EQ(p->weight_bytes, 893146496u);
  EXPECT_EQ(p->hidden, 1152);
  EXPECT_EQ(p->layers, 27);
  EXPECT_EQ(p->warmup_patches, 8464);
  EXPECT_EQ(EncoderComputeBytes(*p, true), 408438784u);
  auto g = SynthesizeMmproj(spec_of("gemma-3-27b-it"), 846120672, "g.mmproj");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  auto gp = ReadProjector(*g);
  ASSERT_TRUE(gp.ok()) << gp.status().ToString();
  EXPECT_EQ(gp->type, "gemma3");
  EXPECT_EQ(gp->image_tokens, 256);
  EXPECT_TRUE(gp->non_causal);
  EXPECT_EQ(SynthesizeMmproj(spec_of("qwen3-8b"), 1, "x").status().code(), Code::kUnsupported);
  EXPECT_EQ(SynthesizeMmproj(spec_of("gemma-4-31b-it"), 1, "x").status().code(),
            Code::kUnsupported);
}

TEST(LlamaCppMmprojTest, OtherProjectorTypes) {
  Tower llava{"mlp"};
  llava.image = 336;  // CLIP ViT-L/14-336: 24 x 24 patches, one token each
  EXPECT_EQ(ReadProjector(Header(Writer(llava)))->image_tokens, 576);
  Tower ldp{"ldpv2"};
  ldp.image = 336;
  EXPECT_EQ(ReadProjector(Header(Writer(ldp)))->image_tokens, 144);
  auto pixtral = ReadProjector(Header(Writer({"pixtral"})));
  EXPECT_EQ(pixtral->image_tokens, 1024);
  EXPECT_EQ(pixtral->warmup_size, 16 * 14);
  EXPECT_TRUE(ReadProjector(Header(Writer({"resampler"})))->tiled);
  auto unknown = ReadProjector(Header(Writer({"someday_vl"})));
  ASSERT_TRUE(unknown.ok());
  EXPECT_FALSE(unknown->known);
  EXPECT_EQ(unknown->image_tokens, 4096);
}

TEST(LlamaCppMmprojTest, HostileHeadersAreRefused) {
  vramfit::testing::GgufWriter model;
  model.Str("general.architecture", "llama");
  EXPECT_FALSE(ReadProjector(Header(model)).ok());
  vramfit::testing::GgufWriter missing;
  missing.Str("general.architecture", "clip");
  missing.U32("clip.vision.image_size", 896);
  auto m = ReadProjector(Header(missing));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("clip.vision.embedding_length"), std::string::npos);
  Tower zero{"gemma3"};
  zero.patch = 0;
  EXPECT_FALSE(ReadProjector(Header(Writer(zero))).ok());
  Tower huge{"gemma3"};
  huge.image = 4000000000u;
  EXPECT_FALSE(ReadProjector(Header(Writer(huge))).ok());
  Tower wide{"gemma3"};
  wide.patch = 1000, wide.image = 500;
  EXPECT_FALSE(ReadProjector(Header(Writer(wide))).ok());
}

class LlamaCppMmprojPlanTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = vramfit::testing::MakeTempDir("llamacpp-mmproj"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  Inventory Llama3() {
    vramfit::testing::WriteLlama3Q4KM(dir_ + "/llama3-8b-Q4_K_M.gguf");
    auto inv = InspectModel(dir_ + "/llama3-8b-Q4_K_M.gguf", {});
    EXPECT_TRUE(inv.ok()) << inv.status().ToString();
    return inv.ok() ? std::move(*inv) : Inventory{};
  }
  static LlamaCppSettings WithGemma3() {
    LlamaCppSettings s;
    s.max_model_len = 4096;
    s.mmproj = "mmproj-gemma3.gguf";
    s.mmproj_header = std::make_shared<const GgufFile>(Header(Writer({"gemma3"})));
    return s;
  }
  std::string dir_;
};

// The projector and its encoder go on CUDA0 after the text model's buffers, as the warm-up
// stage; --no-mmproj-offload keeps both on the CPU.
TEST_F(LlamaCppMmprojPlanTest, ProjectorOnCuda0AfterTheTextModel) {
  const Inventory inv = Llama3();
  LlamaCppSettings text;
  text.max_model_len = 4096;
  auto base = PlanLlamaCpp(inv, *FindGpu("4090"), text);
  auto p = PlanLlamaCpp(inv, *FindGpu("4090"), WithGemma3());
  ASSERT_TRUE(base.ok() && p.ok()) << p.status().ToString();
  const DeviceBuffers& d = p->devices[0];
  EXPECT_EQ(d.model, base->devices[0].model);
  EXPECT_EQ(d.projector, 400 * kMiB);
  EXPECT_EQ(d.encoder, 197656576u);
  EXPECT_EQ(d.total(), base->devices[0].total() + 400 * kMiB + 197656576u);
  EXPECT_EQ(p->image_tokens, 256);
  EXPECT_EQ(p->images_per_request, 16);  // 4096 cells, one unified stream, 256 an image
  EXPECT_TRUE(p->fits);
  bool warmup = false;
  for (const StageLine& l : p->stages) warmup |= l.stage == Stage::kWarmup;
  EXPECT_TRUE(warmup);
  EXPECT_NE(p->command.find("--mmproj mmproj-gemma3.gguf"), std::string::npos);

  LlamaCppSettings cpu = WithGemma3();
  cpu.mmproj_offload = false;
  auto c = PlanLlamaCpp(inv, *FindGpu("4090"), cpu);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->devices[0].total(), base->devices[0].total());
  EXPECT_EQ(c->host.projector, 400 * kMiB);
  EXPECT_NE(c->command.find("--no-mmproj-offload"), std::string::npos);
}

// A device with room for the text model but not the projector fails at warm-up, naming it.
TEST_F(LlamaCppMmprojPlanTest, NoRoomForTheProjectorFailsAtWarmup) {
  const Inventory inv = Llama3();
  LlamaCppSettings text;
  text.max_model_len = 4096;
  GpuSpec gpu = *FindGpu("4090");
  auto base = PlanLlamaCpp(inv, gpu, text);
  ASSERT_TRUE(base.ok());
  gpu.total_bytes = base->devices[0].total() + kCudaContextBytes + 200 * kMiB;
  // --fit does not count the projector (llama.cpp before PR 21489): with -fitt 0 it sees
  // room for the text model, changes nothing, and the projector fails at warm-up.
  LlamaCppSettings s = WithGemma3();
  s.fit_target_mib = {0};
  auto p = PlanLlamaCpp(inv, gpu, s);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->fits);
  EXPECT_EQ(p->failure_stage, Stage::kWarmup);
  EXPECT_NE(p->failure_message.find("vision projector"), std::string::npos);
  EXPECT_EQ(p->margin_bytes, -200 * static_cast<int64_t>(kMiB));
  // The first remedy keeps the projector on the CPU.
  auto model = LlamaCppEngine().prepare(inv);
  ASSERT_TRUE(model.ok());
  auto remedies = (*model)->Remedies(gpu, ToEngineSettings(s), *p);
  ASSERT_FALSE(remedies.empty());
  EXPECT_EQ(remedies[0].change, "--no-mmproj-offload");
  // Beside it: text only, and a --fit target that leaves the projector and its encoder room
  // (the first 256 MiB step past -fitt 0 whose plan fits: --fit then moves whole layers off
  // the GPU, each more than the step).
  std::vector<std::string> changes;
  for (const Remedy& r : remedies) changes.push_back(r.change);
  EXPECT_NE(std::find(changes.begin(), changes.end(), "--no-mmproj"), changes.end());
  const auto fitt = std::find_if(changes.begin(), changes.end(), [](const std::string& c) {
    return c.starts_with("--fit-target ");
  });
  ASSERT_NE(fitt, changes.end());
  EXPECT_EQ(*fitt, "--fit-target 256");
  for (const Remedy& r : remedies) {
    auto q = PlanLlamaCpp(inv, gpu, ToLlamaCppSettings(r.settings));
    ASSERT_TRUE(q.ok());
    EXPECT_TRUE(q->fits) << r.change;
  }
}

// The image-token budget: Gemma 3's 256 tokens are decoded non-causally, so -ub 128 aborts at
// the first image; a context smaller than one image holds none.
TEST_F(LlamaCppMmprojPlanTest, ImageTokensAgainstUbatchAndContext) {
  const Inventory inv = Llama3();
  LlamaCppSettings s = WithGemma3();
  s.n_ubatch = 128;
  auto p = PlanLlamaCpp(inv, *FindGpu("h100"), s);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->fits);
  EXPECT_EQ(p->failure_stage, Stage::kRuntime);
  EXPECT_NE(p->failure_message.find("non-causal attention requires n_ubatch"),
            std::string::npos);
  s.n_ubatch = 256;
  EXPECT_TRUE(PlanLlamaCpp(inv, *FindGpu("h100"), s)->fits);
  // Four slots over separate streams of 256 cells: an image just fits one slot.
  s.max_model_len = 1024;
  s.kv_unified = 0;
  auto q = PlanLlamaCpp(inv, *FindGpu("h100"), s);
  ASSERT_TRUE(q.ok());
  EXPECT_TRUE(q->fits);
  EXPECT_EQ(q->images_per_request, 1);
  s.max_num_seqs = 8;  // 8 streams of 256 (1024 / 8 = 128, padded to 256): still one
  EXPECT_TRUE(PlanLlamaCpp(inv, *FindGpu("h100"), s)->fits);
}

// A projector named but not read is said; one beside the model is not counted as weights.
TEST_F(LlamaCppMmprojPlanTest, UnreadAndBesideTheModel) {
  const Inventory inv = Llama3();
  LlamaCppSettings s;
  s.max_model_len = 4096;
  auto base = PlanLlamaCpp(inv, *FindGpu("4090"), s);
  s.mmproj = "missing.gguf";
  auto p = PlanLlamaCpp(inv, *FindGpu("4090"), s);
  ASSERT_TRUE(base.ok() && p.ok());
  EXPECT_EQ(p->devices[0].total(), base->devices[0].total());
  bool said = false;
  for (const std::string& n : p->notes) said |= n.find("missing.gguf was not read") != n.npos;
  EXPECT_TRUE(said);

  Writer({"gemma3"}).WriteHollow(dir_ + "/mmproj-llama3-f16.gguf");
  auto with = InspectModel(dir_ + "/llama3-8b-Q4_K_M.gguf", {});
  ASSERT_TRUE(with.ok()) << with.status().ToString();
  ASSERT_EQ(with->files.size(), 2u);
  LlamaCppSettings t;
  t.max_model_len = 4096;
  auto q = PlanLlamaCpp(*with, *FindGpu("4090"), t);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->devices[0].model, base->devices[0].model);
  EXPECT_EQ(q->host.model, base->host.model);
  bool noted = false;
  for (const std::string& n : q->notes) noted |= n.find("--mmproj FILE") != n.npos;
  EXPECT_TRUE(noted);
}

TEST(LlamaCppMmprojFlagsTest, FlagsAndCommands) {
  auto s = ReadFlags({{"--mmproj", "v.gguf"}, {"--no-mmproj-offload", ""}}, {});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->mmproj, "v.gguf");
  EXPECT_FALSE(s->mmproj_offload);
  EXPECT_FALSE(ReadFlags({{"--mmproj", ""}}, {}).ok());
  auto cmd = ReadLlamaCppCommand({"llama-server", "-m", "x.gguf", "-mm", "y.gguf"});
  ASSERT_TRUE(cmd.ok());
  EXPECT_TRUE(cmd->unmodelled_flags.empty());
  ASSERT_EQ(cmd->flags.size(), 1u);
  EXPECT_EQ(cmd->flags[0].first, "--mmproj");
  EXPECT_EQ(cmd->flags[0].second, "y.gguf");
}

}  // namespace
}  // namespace vramfit::llamacpp
