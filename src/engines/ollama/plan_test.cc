// The Ollama plan over a GGUF file the test writes (Llama-3-8B in Q4_K_M, hollow): the layers
// offloaded and the bytes each GPU is charged, partial offload and its stage, a forced num_gpu
// that cannot load, the scheduler's fewest GPUs, flash attention and the KV cache type, the
// command reader, and remedies in Ollama's own words.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "engines/ollama/command.h"
#include "engines/ollama/engine.h"
#include "engines/ollama/ollama.h"
#include "testutil/gguf_writer.h"
#include "testutil/hollow.h"
#include "vramfit/advice.h"
#include "vramfit/inspect.h"

namespace vramfit::ollama {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;

class OllamaPlanTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = vramfit::testing::MakeTempDir("ollama-plan"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  Inventory Llama3(const std::string& arch = "llama") {
    const std::string path = dir_ + "/llama3-8b-" + arch + ".gguf";
    vramfit::testing::WriteLlama3Q4KM(path, arch);
    auto inv = InspectModel(path, {});
    EXPECT_TRUE(inv.ok()) << inv.status().ToString();
    return inv.ok() ? std::move(*inv) : Inventory{};
  }
  std::string dir_;
};

// What the estimate reads: 32 layers of their tensors' bytes, the output layer as output_norm
// + output (token_embd stays out: Ollama charges the output matrix instead).
TEST_F(OllamaPlanTest, FactsAreTheFileLayers) {
  const Inventory inv = Llama3();
  const ModelFacts f = FactsOf(inv);
  ASSERT_EQ(f.layer_bytes.size(), 32u);
  uint64_t blk0 = 0, out = 0;
  for (const TensorEntry& e : inv.tensors) {
    if (e.info.name.rfind("blk.0.", 0) == 0) blk0 += e.info.bytes();
    if (e.info.name.rfind("output", 0) == 0) out += e.info.bytes();
  }
  EXPECT_EQ(f.layer_bytes[0], blk0);
  EXPECT_EQ(f.output_bytes, out);
  EXPECT_EQ(f.vocab, 128256u);
  EXPECT_EQ(f.head_k, 128u);
  EXPECT_EQ(f.context_length, 8192u);
}

// A 24 GiB card holds all 33 at num_ctx 8192 x 2: KV 32 x 64 MiB = 2 GiB, the full graph of the
// llama rule (1,140,852,736 bytes, estimate_test), the 457 MiB minimum.
TEST_F(OllamaPlanTest, FullOffloadChargesWeightsKvGraphAndMinimum) {
  const Inventory inv = Llama3();
  OllamaSettings s;
  s.max_model_len = 8192;
  s.max_num_seqs = 2;
  auto p = PlanOllama(inv, CustomGpu(24 * kGiB), s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->fits);
  EXPECT_EQ(p->layers_on_gpu, 33);
  EXPECT_EQ(p->gpus[0].kv_cache_bytes, 2 * kGiB);
  EXPECT_EQ(p->gpus[0].activation_peak_bytes, 1140852736u);
  const ModelFacts f = FactsOf(inv);
  uint64_t weights = f.output_bytes;
  for (uint64_t b : f.layer_bytes) weights += b;
  EXPECT_EQ(p->gpus[0].weights_bytes, weights);
  EXPECT_EQ(p->gpus[0].device_used_bytes, weights + 2 * kGiB + 1140852736u + kMinimumMemory);
  EXPECT_EQ(p->host_bytes, 0u);
  EXPECT_EQ(p->kv_cache_tokens, 16384u);
  EXPECT_EQ(p->command, "OLLAMA_CONTEXT_LENGTH=8192 OLLAMA_NUM_PARALLEL=2 ollama run " +
                            dir_ + "/llama3-8b-llama.gguf");
}

// num_ctx past context_length is cut to it; the default is 4096 and one sequence.
TEST_F(OllamaPlanTest, NumCtxDefaultsAndIsCutToTheModel) {
  const Inventory inv = Llama3();
  auto d = PlanOllama(inv, CustomGpu(24 * kGiB), {});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->num_ctx, 4096);
  EXPECT_EQ(d->num_parallel, 1);
  EXPECT_EQ(d->gpus[0].kv_cache_bytes, 512 * kMiB);  // 4096 x 256 x 8 x 2 x 32
  OllamaSettings s;
  s.max_model_len = 100000;
  auto c = PlanOllama(inv, CustomGpu(24 * kGiB), s);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->num_ctx, 8192);
  // Hostile sizes are refused, not wrapped: 8192 x 1024 is fine, past 1024 sequences is not.
  s.max_num_seqs = 1025;
  EXPECT_FALSE(PlanOllama(inv, CustomGpu(24 * kGiB), s).ok());
}

// An 8 GiB card at num_ctx 8192 x 4 (4 GiB of KV): some layers stay on the CPU. The weights
// (4.6 GiB) would fit alone, so the failure is the KV cache's, and the longest num_ctx that
// brings every layer back is estimated.
TEST_F(OllamaPlanTest, PartialOffloadFailsAtTheKvCache) {
  const Inventory inv = Llama3();
  OllamaSettings s;
  s.max_model_len = 8192;
  s.max_num_seqs = 4;
  auto p = PlanOllama(inv, CustomGpu(8 * kGiB), s);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->fits);
  EXPECT_LT(p->layers_on_gpu, 33);
  EXPECT_GT(p->layers_on_gpu, 0);
  EXPECT_EQ(p->failure_stage, Stage::kKvCache);
  EXPECT_GT(p->host_bytes, 0u);
  EXPECT_NE(p->failure_message.find("offloaded"), std::string::npos);
  auto model = OllamaEngine().prepare(inv);
  ASSERT_TRUE(model.ok());
  auto plan = (*model)->MakePlan(CustomGpu(8 * kGiB), ToEngineSettings(s));
  ASSERT_TRUE(plan.ok());
  EXPECT_GT(plan->estimated_max_model_len, 0);
  EXPECT_LT(plan->estimated_max_model_len, 8192);
  OllamaSettings shorter = s;
  shorter.max_model_len = plan->estimated_max_model_len;
  EXPECT_TRUE(PlanOllama(inv, CustomGpu(8 * kGiB), shorter)->fits);
  // The remedies speak Ollama: a quantized cache with flash attention, one request at a time.
  const auto remedies = (*model)->Remedies(CustomGpu(8 * kGiB), ToEngineSettings(s), *plan);
  ASSERT_GE(remedies.size(), 2u);
  EXPECT_EQ(remedies[0].change, "OLLAMA_FLASH_ATTENTION=1 OLLAMA_KV_CACHE_TYPE=q8_0");
  EXPECT_EQ(remedies[1].change, "OLLAMA_NUM_PARALLEL=1");
}

// More GPUs, as advice spells them for Ollama (every GPU it sees, one count): with two cards
// visible already, the next step is four, and the change says four, not the doubling factor.
TEST_F(OllamaPlanTest, MoreGpusAdviceSaysTheGpuCount) {
  const Inventory inv = Llama3();
  OllamaSettings s;
  s.max_model_len = 8192;
  s.pipeline_parallel_size = 2;  // CUDA_VISIBLE_DEVICES=0,1
  auto model = OllamaEngine().prepare(inv);
  ASSERT_TRUE(model.ok());
  const GpuSpec gpu = CustomGpu(3 * kGiB);
  auto plan = (*model)->MakePlan(gpu, ToEngineSettings(s));
  ASSERT_TRUE(plan.ok());
  ASSERT_FALSE(plan->fits);
  EXPECT_EQ(plan->gpu_count, 2);
  bool more = false;
  for (const Advice& a : Advise(OllamaEngine(), **model, gpu, ToEngineSettings(s), *plan)) {
    if (a.change.rfind("GPUs:", 0) != 0) continue;
    more = true;
    EXPECT_EQ(a.change, fmt::format("GPUs: {} ({} GPUs)", a.plan.gpu_count, a.plan.gpu_count));
    EXPECT_EQ(a.plan.gpu_count, 4);
  }
  EXPECT_TRUE(more);
}

// A 4 GiB card cannot hold the weights: the failure is at load.
TEST_F(OllamaPlanTest, WeightsPastTheGpuFailAtLoad) {
  auto p = PlanOllama(Llama3(), CustomGpu(4 * kGiB), {});
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->fits);
  EXPECT_EQ(p->failure_stage, Stage::kLoad);
}

// num_gpu 33 on the 8 GiB card: the runner loads every layer whatever the estimate said, and
// the card's free memory is exceeded: the cudaMalloc failure Ollama users meet.
TEST_F(OllamaPlanTest, ForcedNumGpuPastTheEstimateFailsToLoad) {
  const Inventory inv = Llama3();
  OllamaSettings s;
  s.max_model_len = 8192;
  s.max_num_seqs = 4;
  s.num_gpu = 33;
  auto p = PlanOllama(inv, CustomGpu(8 * kGiB), s);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->fits);
  EXPECT_EQ(p->failure_stage, Stage::kLoad);
  EXPECT_NE(p->failure_message.find("num_gpu 33"), std::string::npos) << p->failure_message;
  EXPECT_NE(p->failure_message.find("cudaMalloc failed"), std::string::npos);
  auto model = OllamaEngine().prepare(inv);
  const auto remedies = (*model)->Remedies(CustomGpu(8 * kGiB), ToEngineSettings(s), *p);
  ASSERT_FALSE(remedies.empty());
  EXPECT_EQ(remedies[0].change, "remove PARAMETER num_gpu (Ollama's estimate decides)");
  // num_gpu 0: the CPU only.
  s.num_gpu = 0;
  auto cpu = PlanOllama(inv, CustomGpu(8 * kGiB), s);
  EXPECT_EQ(cpu->layers_on_gpu, 0);
  EXPECT_EQ(cpu->gpus[0].weights_bytes, 0u);
}

// Two 24 GiB cards and a model that fits one: the scheduler takes one (the fewest);
// OLLAMA_SCHED_SPREAD takes both, with the partial graph on each.
TEST_F(OllamaPlanTest, SchedulerTakesTheFewestGpusUnlessSpread) {
  const Inventory inv = Llama3();
  OllamaSettings s;
  s.pipeline_parallel_size = 2;
  auto one = PlanOllama(inv, CustomGpu(24 * kGiB), s);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->gpus_used, 1);
  EXPECT_EQ(one->gpus[1].weights_bytes, 0u);
  s.sched_spread = true;
  auto both = PlanOllama(inv, CustomGpu(24 * kGiB), s);
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->gpus_used, 2);
  EXPECT_GT(both->gpus[0].weights_bytes, 0u);
  EXPECT_GT(both->gpus[1].weights_bytes, 0u);
  EXPECT_EQ(both->gpus[0].activation_peak_bytes, both->estimate.graph_partial);
}

// Flash attention is off for llama unless asked; a KV cache type needs it (else f16 with a
// note); qwen3 turns it on by default, and is placed by Ollama's own engine (a note).
TEST_F(OllamaPlanTest, KvCacheTypeNeedsFlashAttention) {
  const Inventory inv = Llama3();
  OllamaSettings s;
  s.kv_cache_dtype = "q8_0";
  auto off = PlanOllama(inv, CustomGpu(24 * kGiB), s);
  EXPECT_EQ(off->kv_type, "f16");
  EXPECT_EQ(off->gpus[0].kv_cache_bytes, 512 * kMiB);
  s.flash_attention = "1";
  auto on = PlanOllama(inv, CustomGpu(24 * kGiB), s);
  EXPECT_EQ(on->kv_type, "q8_0");
  EXPECT_EQ(on->gpus[0].kv_cache_bytes, 256 * kMiB);
  s.kv_cache_dtype = "q5_1";
  auto bad = PlanOllama(inv, CustomGpu(24 * kGiB), s);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("f16, q8_0 or q4_0"), std::string::npos);
  OllamaSettings q;
  q.kv_cache_dtype = "q4_0";
  auto qwen = PlanOllama(Llama3("qwen3"), CustomGpu(24 * kGiB), q);
  EXPECT_TRUE(qwen->flash);
  EXPECT_EQ(qwen->kv_type, "q4_0");
  bool engine_note = false;
  for (const std::string& n : qwen->notes) engine_note |= n.find("own engine") != std::string::npos;
  EXPECT_TRUE(engine_note);
}

TEST(OllamaCommand, ReadsEnvironmentRunAndFlags) {
  EXPECT_TRUE(IsOllamaCommand({"ollama", "run", "x.gguf"}));
  EXPECT_TRUE(IsOllamaCommand({"OLLAMA_NUM_PARALLEL=4", "ollama", "run", "x.gguf"}));
  EXPECT_TRUE(IsOllamaCommand({"ollama", "x.gguf", "--num-ctx", "8192"}));
  EXPECT_FALSE(IsOllamaCommand({"ollama", "serve"}));
  EXPECT_FALSE(IsOllamaCommand({"ollama", "run"}));
  EXPECT_FALSE(IsOllamaCommand({"llama-server", "-m", "x.gguf"}));
  auto c = ReadOllamaCommand({"env", "CUDA_VISIBLE_DEVICES=0,1", "OLLAMA_CONTEXT_LENGTH=16000",
                              "OLLAMA_KV_CACHE_TYPE=q8_0", "OLLAMA_FLASH_ATTENTION=1",
                              "OLLAMA_GPU_OVERHEAD=1073741824", "OLLAMA_HOST=0.0.0.0",
                              "ollama", "run", "x.gguf", "--verbose", "--keepalive", "5m",
                              "hello"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->model, "x.gguf");
  // The server's address holds nothing: read, named with the flags of no memory effect.
  EXPECT_TRUE(c->unmodelled_env.empty()) << c->unmodelled_env.front();
  // `ollama run`'s display and keep-alive flags hold nothing: named once as read.
  EXPECT_TRUE(c->unmodelled_flags.empty()) << c->unmodelled_flags.front();
  EXPECT_EQ(c->no_memory_flags,
            (std::vector<std::string>{"OLLAMA_HOST", "--verbose", "--keepalive"}));
  auto s = ReadFlags(c->flags, ToOllamaSettings(c->settings));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->max_model_len, 16000);
  EXPECT_EQ(s->pipeline_parallel_size, 2);
  EXPECT_EQ(s->kv_cache_dtype, "q8_0");
  EXPECT_EQ(s->flash_attention, "1");
  EXPECT_EQ(s->gpu_overhead, kGiB);
  EXPECT_FALSE(ReadOllamaCommand({"ollama", "run", "x.gguf", "--num-ctx"}).ok());
  // envconfig reads these with strconv.ParseUint: 16k would give Ollama's default, not 16,000.
  auto k = ReadOllamaCommand({"OLLAMA_CONTEXT_LENGTH=16k", "ollama", "run", "x.gguf"});
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().message(),
            "OLLAMA_CONTEXT_LENGTH=16k: Ollama reads only digits here (strconv.ParseUint) and "
            "would use its default instead; write the whole number");
  EXPECT_FALSE(ReadOllamaCommand({"OLLAMA_GPU_OVERHEAD=1GiB", "ollama", "run", "x.gguf"}).ok());
  // A value the setting refuses is named as the variable it was written as.
  auto huge = ReadOllamaCommand({"OLLAMA_GPU_OVERHEAD=99999999999999999999999", "ollama", "run",
                                 "x.gguf"});
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().message(), "OLLAMA_GPU_OVERHEAD=99999999999999999999999: expected "
                                     "bytes (or a size such as 1GiB)");
  auto ctx = ReadOllamaCommand({"OLLAMA_CONTEXT_LENGTH=0", "ollama", "run", "x.gguf"});
  ASSERT_FALSE(ctx.ok());
  EXPECT_TRUE(ctx.status().message().starts_with("OLLAMA_CONTEXT_LENGTH=0: "))
      << ctx.status().message();
  EXPECT_FALSE(ReadFlags({{"--num-gpu", "-2"}}, {}).ok());
  EXPECT_FALSE(ReadFlags({{"--gpu-overhead", "lots"}}, {}).ok());
  auto g = ReadFlags({{"--gpu-overhead", "2GiB"}, {"--num-gpu", "-1"}}, {});
  EXPECT_EQ(g->gpu_overhead, 2 * kGiB);
}

// `ollama run hf.co/ORG/REPO:QUANT` names a Hub GGUF repo: read as the Hub id, and the
// command written back carries the prefix Ollama needs.
TEST(OllamaCommand, ReadsHubModelsAsHubIds) {
  for (const char* name : {"hf.co/Qwen/Qwen3-8B-GGUF:Q4_K_M",
                           "huggingface.co/Qwen/Qwen3-8B-GGUF:Q4_K_M"}) {
    auto c = ReadOllamaCommand({"ollama", "run", name});
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->model, "Qwen/Qwen3-8B-GGUF:Q4_K_M") << name;
  }
  EXPECT_EQ(ReadOllamaCommand({"ollama", "run", "qwen3:8b"})->model, "qwen3:8b");
  Inventory inv;
  inv.model = "Qwen/Qwen3-8B-GGUF:Q4_K_M";
  inv.source.kind = ModelKind::kHub;
  EXPECT_EQ(CommandLine(inv, {}), "ollama run hf.co/Qwen/Qwen3-8B-GGUF:Q4_K_M");
  inv.source.kind = ModelKind::kLocalFile;
  inv.model = "/m/x.gguf";
  EXPECT_EQ(CommandLine(inv, {}), "ollama run /m/x.gguf");
}

TEST(OllamaEngineRow, RefusesSafetensorsAndOtherReleases) {
  Inventory inv;
  inv.has_spec = true;
  inv.files = {"model.safetensors"};
  auto p = OllamaEngine().prepare(inv);
  EXPECT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("Ollama runs GGUF files"), std::string::npos);
  EXPECT_TRUE(OllamaEngine().check_version("0.12.10").ok());
  EXPECT_FALSE(OllamaEngine().check_version("0.13.0").ok());
  EXPECT_STREQ(OllamaEngine().flag_name(Setting::kMaxModelLen), "PARAMETER num_ctx");
}

// A library what-if that lacks part of the library's file (gemma3's vision tower): the plan
// keeps its verdict where the headroom holds the part at 16 bits, and counts it as memory it
// could not place (a low-confidence verdict, exit 1 in check) where it does not.
TEST(OllamaPlan, ALibraryWhatIfThatLacksTheVisionTowerIsBoundedByIt) {
  InspectOptions o;
  o.ollama_names = true;
  auto inv = InspectModel("gemma3:27b", o);
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  ASSERT_GT(inv->what_if_lacks_bytes, 800u << 20);  // SigLIP's 423M parameters at 16 bits
  auto prepared = OllamaEngine().prepare(*inv);
  ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
  auto roomy = (*prepared)->MakePlan(*FindGpu("rtx-4090"), EngineSettings{});
  ASSERT_TRUE(roomy.ok() && roomy->fits);
  CarryWhatIf(*inv, &*roomy);
  EXPECT_TRUE(roomy->not_counted.empty());
  EXPECT_NE(roomy->notes.back().find("inside the"), std::string::npos) << roomy->notes.back();
  EXPECT_NE(roomy->what_if.find("vision tower"), std::string::npos);
  Plan tight = *roomy;
  tight.notes.clear();
  tight.margin_bytes = static_cast<int64_t>(inv->what_if_lacks_bytes / 2);
  CarryWhatIf(*inv, &tight);
  ASSERT_EQ(tight.not_counted.size(), 1u);
  EXPECT_NE(tight.not_counted[0].find("at 16 bits"), std::string::npos);
  EXPECT_TRUE(tight.low_confidence());
}

}  // namespace
}  // namespace vramfit::ollama
