// vLLM's refusals before allocation, each as vLLM words it, and the advice that gets past them;
// the flags that change the weights (--dtype, --cpu-offload-gb) and the all-reduce buffers.
#include "engines/vllm/refusals.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "engines/vllm/command.h"
#include "engines/vllm/engine.h"
#include "engines/vllm/flags.h"
#include "engines/vllm/vllm.h"
#include "testutil/catalog.h"
#include "testutil/vllm_advice.h"
#include "vramfit/advice.h"
#include "vramfit/catalog.h"

namespace vramfit {
namespace {

using testutil::Catalog;
using testutil::Gpu;

using testutil::AdviseVllm;
using vllm::ReadFlags;

bool HasChange(const std::vector<Advice>& advice, const std::string& prefix) {
  return std::any_of(advice.begin(), advice.end(),
                     [&](const Advice& a) { return a.change.rfind(prefix, 0) == 0; });
}

TEST(Refusals, Fp8BlockExpertsCutByTensorParallelism) {
  // Qwen3-235B-A22B-FP8: moe_intermediate_size 1536 / 8 = 192, not a multiple of 128.
  const Inventory inv = Catalog("qwen3-235b-a22b-fp8");
  VllmSettings s;
  s.tensor_parallel_size = 8;
  auto p = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_FALSE(p->fits);
  EXPECT_EQ(p->failure_stage, Stage::kLoad);
  EXPECT_EQ(p->failure_message,
            "The output_size of gate's and up's weight = 192 is not divisible by weight "
            "quantization block_n = 128.");
  const auto advice = AdviseVllm(inv, Gpu("h100"), s, *p);
  EXPECT_TRUE(HasChange(advice, "--enable-expert-parallel")) << advice.size();
  for (const Advice& a : advice) EXPECT_TRUE(a.plan.fits) << a.change;
  // With expert parallelism the experts stay whole: 1536 % 128 == 0.
  s.enable_expert_parallel = true;
  EXPECT_TRUE(PlanVllm(inv, Gpu("h100"), s)->fits);
  // TP 4: 384 is a multiple of 128.
  s.enable_expert_parallel = false;
  s.tensor_parallel_size = 4;
  EXPECT_NE(PlanVllm(inv, Gpu("h100"), s)->failure_stage, Stage::kLoad);
}

TEST(Refusals, Fp8BlockAlsoForThirtyBOnFourCards) {
  // Qwen3-30B-A3B-FP8: 768 / 4 = 192.
  const Inventory inv = Catalog("qwen3-30b-a3b-fp8");
  VllmSettings s;
  s.tensor_parallel_size = 4;
  auto p = PlanVllm(inv, Gpu("4090"), s);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->failure_stage, Stage::kLoad);
  s.tensor_parallel_size = 2;  // 384
  EXPECT_NE(PlanVllm(inv, Gpu("4090"), s)->failure_stage, Stage::kLoad);
}

TEST(Refusals, AwqAndFp8NeedTuringOrAmpere) {
  auto awq = PlanVllm(Catalog("qwen3-32b-awq"), Gpu("v100-32gb"), {});
  ASSERT_TRUE(awq.ok());
  EXPECT_EQ(awq->failure_stage, Stage::kStartup);
  EXPECT_EQ(awq->failure_message,
            "The quantization method awq is not supported for the current GPU. Minimum "
            "capability: 75. Current capability: 70.");
  VllmSettings s;
  s.max_model_len = 8192;
  auto fp8 = PlanVllm(Catalog("qwen3-8b-fp8"), Gpu("t4"), s);
  ASSERT_TRUE(fp8.ok());
  EXPECT_TRUE(fp8->fits) << fp8->failure_message;  // FP8 Marlin on Turing from v0.14
  VllmSettings old = s;
  old.version = "0.13";
  auto fp8_old = PlanVllm(Catalog("qwen3-8b-fp8"), Gpu("t4"), old);
  EXPECT_EQ(fp8_old->failure_message,
            "The quantization method fp8 is not supported for the current GPU. Minimum "
            "capability: 80. Current capability: 75.");
}

TEST(Refusals, GptqOnVoltaRunsExllamaUntilTheConsolidation) {
  const Inventory inv = Catalog("qwen2.5-7b-instruct-gptq-int4");
  VllmSettings s;
  s.version = "0.21";
  s.max_model_len = 8192;
  EXPECT_TRUE(PlanVllm(inv, Gpu("v100-32gb"), s)->fits);
  s.version = "0.22";
  auto p = PlanVllm(inv, Gpu("v100-32gb"), s);
  EXPECT_EQ(p->failure_stage, Stage::kLoad);
  EXPECT_EQ(p->failure_message.rfind("Marlin does not support weight_bits = uint4b8.", 0), 0u);
}

// --enable-dbo micro-batches only over a DeepEP all-to-all (config/vllm.py, read at 0.22): the
// default backend is refused with vLLM's assertion; DeepEP's buffers are named as not counted.
TEST(Refusals, DualBatchOverlapNeedsDeepEp) {
  const Inventory inv = Catalog("qwen3-30b-a3b");
  VllmSettings s;
  s.tensor_parallel_size = 2;
  s.enable_expert_parallel = true;
  s.max_model_len = 32768;
  s.enable_dbo = true;
  auto p = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->failure_stage, Stage::kStartup);
  EXPECT_EQ(p->failure_message.rfind(
                "Microbatching currently only supports the deepep_low_latency and "
                "deepep_high_throughput all2all backend. allgather_reducescatter is not "
                "supported.",
                0),
            0u);
  const auto advice = AdviseVllm(inv, Gpu("h100"), s, *p);
  EXPECT_TRUE(HasChange(advice, "without --enable-dbo"));
  EXPECT_TRUE(HasChange(advice, "--all2all-backend deepep_low_latency"));
  s.all2all_backend = "deepep_high_throughput";
  auto deepep = PlanVllm(inv, Gpu("h100"), s);
  EXPECT_TRUE(deepep->fits) << deepep->failure_message;
  ASSERT_EQ(deepep->not_counted.size(), 1u);
  EXPECT_NE(deepep->not_counted[0].find("deepep_high_throughput"), std::string::npos);
  EXPECT_TRUE(deepep->low_confidence());
  // VLLM_ALL2ALL_BACKEND gives it too; the flag wins.
  auto cmd = vllm::ReadServeCommand({"env", "VLLM_ALL2ALL_BACKEND=deepep_low_latency", "vllm",
                                     "serve", "Qwen/Qwen3-30B-A3B", "--enable-dbo"});
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  EXPECT_TRUE(cmd->unmodelled_env.empty());
  auto read = ReadFlags(cmd->flags, ToVllmSettings(cmd->settings));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->all2all_backend, "deepep_low_latency");
  EXPECT_TRUE(read->enable_dbo);
  EXPECT_FALSE(ReadFlags({{"--all2all-backend", "deepep"}}, {}).ok());
}

// vLLM's CUDA kernels start at compute capability 7.0 (CMakeLists.txt CUDA_SUPPORTED_ARCHS):
// a Pascal card is refused at start-up, with the way out named.
TEST(Refusals, PascalCardsHaveNoKernelImage) {
  VllmSettings s;
  s.max_model_len = 8192;
  for (const char* gpu : {"p40", "p100-16gb", "gtx-1080-ti"}) {
    auto p = PlanVllm(Catalog("qwen3-8b"), Gpu(gpu), s);
    ASSERT_TRUE(p.ok()) << gpu;
    EXPECT_EQ(p->failure_stage, Stage::kStartup) << gpu;
    EXPECT_EQ(p->failure_message.rfind("CUDA error: no kernel image is available", 0), 0u) << gpu;
  }
  EXPECT_TRUE(PlanVllm(Catalog("qwen3-8b"), Gpu("v100-32gb"), s)->fits);
}

TEST(Refusals, DecodeContextParallelAsVllmChecksIt) {
  auto plan = [](const char* model, const char* gpu, const char* version, int64_t tp,
                 int64_t dcp) {
    VllmSettings s;
    s.version = version;
    s.tensor_parallel_size = tp;
    s.decode_context_parallel_size = dcp;
    s.max_model_len = 32768;
    auto p = PlanVllm(Catalog(model), Gpu(gpu), s);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return *p;
  };
  // Before PR #23734 (v0.10.2) the flag does not exist: `vllm serve` stops at its parser.
  VllmSettings early;
  early.version = "0.10.1";
  early.tensor_parallel_size = 8;
  early.decode_context_parallel_size = 8;
  EXPECT_FALSE(PlanVllm(Catalog("deepseek-v3"), Gpu("h200"), early).ok());
  // MLA from v0.10.2: each rank keeps 1/8 of every request's latent cache.
  auto mla = plan("deepseek-v3", "h200", "0.10.2", 8, 8);
  auto mla1 = plan("deepseek-v3", "h200", "0.10.2", 8, 1);
  EXPECT_TRUE(mla.fits) << mla.failure_message;
  EXPECT_EQ(mla.kv_needed_bytes * 8, mla1.kv_needed_bytes);
  EXPECT_NEAR(mla.max_concurrency / mla1.max_concurrency, 8.0, 0.01);
  // ParallelConfig: the TP group is split into tp / dcp groups.
  EXPECT_EQ(plan("qwen3-30b-a3b", "h100", "0.22", 8, 3).failure_message,
            "tp_size=8 must be divisible bydcp_size=3.");
  // Grouped-query attention: refused at the KV cache before PR #24864, then ModelConfig's head
  // checks (Qwen3-30B-A3B: 32 query heads, 4 KV heads).
  auto gqa_early = plan("qwen3-30b-a3b", "h100", "0.11", 8, 2);
  EXPECT_EQ(gqa_early.failure_stage, Stage::kKvCache);
  EXPECT_EQ(gqa_early.failure_message.rfind("DCP requires attention impls to return the softmax "
                                            "lse for decode",
                                            0),
            0u);
  EXPECT_EQ(plan("qwen3-30b-a3b", "h100", "0.22", 4, 2).failure_message,
            "tensor parallel size 4 must be greater than total num kv heads 4 when enable "
            "decode context parallel for GQA/MQA");
  EXPECT_EQ(plan("qwen3-30b-a3b", "h100", "0.22", 8, 4).failure_message,
            "decode context parallel size must less than or equal to (tensor parallel size 8 // "
            "total num kv heads 4) = 2, but got 4");
  auto gqa = plan("qwen3-30b-a3b", "h100", "0.22", 8, 2);
  auto gqa1 = plan("qwen3-30b-a3b", "h100", "0.22", 8, 1);
  EXPECT_TRUE(gqa.fits) << gqa.failure_message;
  EXPECT_NEAR(static_cast<double>(gqa.kv_cache_tokens) / gqa1.kv_cache_tokens, 2.0, 0.01);
  // Layer kinds DCP does not shard.
  auto linear = plan("qwen3-next-80b-a3b-instruct", "h100", "0.22", 8, 2);
  EXPECT_EQ(linear.failure_stage, Stage::kKvCache);
  EXPECT_EQ(linear.failure_message, "DCP not support mamba now.");
  auto m = FindCatalogModel("gpt-oss-120b");
  ASSERT_TRUE(m.ok());
  auto spec = ModelSpecFromConfigJson(m->config_json, "gpt-oss-120b");
  ASSERT_TRUE(spec.ok());
  auto sliding = vllm::ContextParallelKvRefusal(*spec, vllm::RulesFor(2200), 2);
  ASSERT_TRUE(sliding.has_value());
  EXPECT_EQ(sliding->message, "DCP not support sliding window attn now.");
  EXPECT_FALSE(vllm::ContextParallelKvRefusal(*spec, vllm::RulesFor(2200), 1).has_value());
  // Advice for a KV cache too small for one request: DCP over the TP group, re-planned.
  VllmSettings lite;
  lite.tensor_parallel_size = 2;
  lite.max_model_len = 163840;
  auto short_kv = PlanVllm(Catalog("deepseek-v2-lite"), Gpu("l4"), lite);
  ASSERT_TRUE(short_kv.ok());
  EXPECT_EQ(short_kv->failure_stage, Stage::kKvCache);
  EXPECT_TRUE(HasChange(AdviseVllm(Catalog("deepseek-v2-lite"), Gpu("l4"), lite, *short_kv),
                        "--decode-context-parallel-size 2"));
}

TEST(Refusals, Dtypes) {
  const Inventory inv = Catalog("qwen3-8b");
  VllmSettings s;
  s.max_model_len = 8192;
  // bfloat16 below 8.0: refused when asked for; auto falls back to float16 and says so.
  s.dtype = "bfloat16";
  auto bf16 = PlanVllm(inv, Gpu("v100-32gb"), s);
  EXPECT_EQ(bf16->failure_stage, Stage::kStartup);
  EXPECT_EQ(bf16->failure_message.rfind("Bfloat16 is only supported on GPUs with compute "
                                        "capability of at least 8.0. Your Tesla V100-SXM2-32GB",
                                        0),
            0u);
  EXPECT_TRUE(HasChange(AdviseVllm(inv, Gpu("v100-32gb"), s, *bf16), "--dtype half"));
  s.dtype = "auto";
  auto fp16 = PlanVllm(inv, Gpu("v100-32gb"), s);
  EXPECT_TRUE(fp16->fits);
  EXPECT_TRUE(std::any_of(fp16->notes.begin(), fp16->notes.end(), [](const std::string& n) {
    return n.find("Falling back to torch.float16") != std::string::npos;
  }));
  // float32 doubles the 16-bit weights and the KV bytes per token.
  auto base = PlanVllm(inv, Gpu("h100"), VllmSettings{});
  s.dtype = "float32";
  auto f32 = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(base.ok() && f32.ok());
  EXPECT_NEAR(static_cast<double>(f32->gpus[0].weights_bytes) / base->gpus[0].weights_bytes, 2.0,
              0.01);
  EXPECT_FALSE(PlanVllm(inv, Gpu("4090"), s)->fits);  // 30.5 GiB of weights on 23.6
  EXPECT_EQ(PlanVllm(inv, Gpu("4090"), s)->failure_stage, Stage::kLoad);
  // float32 with a quantized checkpoint: the method's activation dtypes.
  auto awq = PlanVllm(Catalog("qwen3-8b-awq"), Gpu("h100"), s);
  EXPECT_EQ(awq->failure_message,
            "torch.float32 is not supported for quantization method awq_marlin. Supported "
            "dtypes: [torch.float16, torch.bfloat16]");
}

TEST(Refusals, ArchitecturesNewerThanTheRelease) {
  const Inventory inv = Catalog("qwen3.6-35b-a3b");
  VllmSettings s;
  s.version = "0.16";
  auto p = PlanVllm(inv, Gpu("h200"), s);
  EXPECT_EQ(p->failure_stage, Stage::kStartup);
  EXPECT_EQ(p->failure_message.rfind("Model architectures ['Qwen3_5MoeForConditionalGeneration'] "
                                     "are not supported for now.",
                                     0),
            0u);
  s.version = "0.17";
  EXPECT_NE(PlanVllm(inv, Gpu("h200"), s)->failure_stage, Stage::kStartup);
  s.version = "0.10";  // gpt-oss arrived in 0.10.1
  EXPECT_EQ(PlanVllm(Catalog("gpt-oss-20b"), Gpu("h100"), s)->failure_stage, Stage::kStartup);
  s.version = "0.10.1";
  EXPECT_NE(PlanVllm(Catalog("gpt-oss-20b"), Gpu("h100"), s)->failure_stage, Stage::kStartup);
}

// The V0 releases before 0.8 are planned too: an architecture that arrived after 0.2 is refused
// under a release that predates it, not planned silently.
TEST(Refusals, ArchitecturesNewerThanAnOldV0Release) {
  VllmSettings s;
  s.max_model_len = 4096;
  const auto stage = [&](const char* model, const char* version) {
    s.version = version;
    return PlanVllm(Catalog(model), Gpu("h200"), s)->failure_stage;
  };
  EXPECT_EQ(stage("gemma-3-27b-it", "0.7.3"), Stage::kStartup);  // Gemma 3 arrived in 0.8.0
  s.version = "0.7.3";
  EXPECT_EQ(PlanVllm(Catalog("gemma-3-27b-it"), Gpu("h200"), s)->refusal,
            "vLLM 0.7.3 does not have Gemma3ForConditionalGeneration (first served by vLLM "
            "0.8.0): no GPU or setting changes that; use --engine vllm@0.8.0 or newer");
  EXPECT_NE(stage("gemma-3-27b-it", "0.8.0"), Stage::kStartup);
  EXPECT_EQ(stage("gemma-4-31b-it", "0.18.0"), Stage::kStartup);  // Gemma 4 in 0.19.0
  EXPECT_NE(stage("gemma-4-31b-it", "0.19.0"), Stage::kStartup);
  EXPECT_EQ(stage("phi-4", "0.4.1"), Stage::kStartup);  // Phi3ForCausalLM in 0.4.2
  EXPECT_NE(stage("phi-4", "0.4.2"), Stage::kStartup);
  EXPECT_EQ(stage("gemma-3-1b-it", "0.7.3"), Stage::kStartup);  // Gemma3ForCausalLM in 0.8.0
  EXPECT_EQ(stage("deepseek-v3", "0.6.5"), Stage::kStartup);  // DeepSeek-V3 in 0.6.6
  EXPECT_NE(stage("deepseek-v3", "0.6.6"), Stage::kStartup);
}

// The Mamba2 hybrids read from config.json: Granite 4.0 hybrid from 0.9.0 (PR #17497), Bamba
// from 0.7.3 (PR #10909).
TEST(Refusals, Mamba2HybridArchitecturesByRelease) {
  ModelSpec granite;
  granite.architecture = "GraniteMoeHybridForCausalLM";
  EXPECT_TRUE(vllm::ArchitectureRefusal(granite, 805).has_value());
  EXPECT_FALSE(vllm::ArchitectureRefusal(granite, 900).has_value());
  ModelSpec bamba;
  bamba.architecture = "BambaForCausalLM";
  EXPECT_TRUE(vllm::ArchitectureRefusal(bamba, 702).has_value());
  EXPECT_FALSE(vllm::ArchitectureRefusal(bamba, 703).has_value());
}

// MiniMax-M2: refused by 0.11.0 (MiniMax-AI/MiniMax-M2 issue #40), served from 0.11.1.
TEST(Refusals, MiniMaxM2From0111) {
  ModelSpec m2;
  m2.architecture = "MiniMaxM2ForCausalLM";
  const auto r = vllm::ArchitectureRefusal(m2, 1100);
  ASSERT_TRUE(r.has_value());
  EXPECT_NE(r->message.find("see MiniMax-AI/MiniMax-M2 #40"), std::string::npos) << r->message;
  EXPECT_FALSE(vllm::ArchitectureRefusal(m2, 1101).has_value());
}

// Llama 3.1's rope_scaling names its type "rope_type": "llama3"; vLLM indexed
// rope_scaling["type"] until PR #6693 (v0.5.3.post1) and stops with KeyError: 'type'.
TEST(Refusals, Llama31RopeTypeBeforeV053Post1) {
  VllmSettings s;
  s.max_model_len = 8192;
  const auto plan = [&](const char* version) {
    s.version = version;
    auto p = PlanVllm(Catalog("llama-3.1-8b-instruct"), Gpu("a100-80gb"), s);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return *p;
  };
  const VllmPlan v044 = plan("0.4.3");
  EXPECT_EQ(v044.failure_stage, Stage::kStartup);
  EXPECT_EQ(v044.failure_message.rfind("KeyError: 'type' (vLLM 0.4.3 reads rope_scaling[\"type\"] "
                                       "in vllm/config.py _get_and_verify_max_len",
                                       0),
            0u)
      << v044.failure_message;
  // No card or knob lifts it: the plan says so and names the release that does.
  EXPECT_EQ(v044.refusal,
            "vLLM 0.4.3 cannot read this checkpoint's rope_scaling (\"rope_type\": \"llama3\"): "
            "no GPU or setting changes that; use --engine vllm@0.5.3.post1 or newer");
  EXPECT_EQ(plan("0.5.4").refusal, "");
  EXPECT_EQ(plan("0.2.1").failure_stage, Stage::kLoad);  // get_rope, when the model is built
  EXPECT_EQ(plan("0.5.3").failure_stage, Stage::kStartup);
  EXPECT_NE(plan("0.5.3.post1").failure_stage, Stage::kStartup);
  EXPECT_NE(plan("0.5.4").failure_stage, Stage::kStartup);
  // A checkpoint with the older "type" spelling, or none, is not refused.
  s.version = "0.4.3";
  EXPECT_NE(PlanVllm(Catalog("meta-llama-3-8b"), Gpu("a100-80gb"), s)->failure_stage,
            Stage::kStartup);
}

TEST(Refusals, DeclaredAwqOverSixteenBitProjectionsFailsAtLoad) {
  // The tensors of the unquantized model under a config that declares AWQ.
  auto plain = ModelSpecFromConfigJson(FindCatalogModel("qwen3-8b")->config_json, "c");
  auto awq = ModelSpecFromConfigJson(FindCatalogModel("qwen3-8b-awq")->config_json, "c");
  ASSERT_TRUE(plain.ok() && awq.ok());
  std::vector<FileTensors> files;
  files.push_back(*SynthesizeTensors(*plain));
  Inventory inv = BuildInventory(&*awq, std::move(files));
  ASSERT_TRUE(std::any_of(inv.audit.findings.begin(), inv.audit.findings.end(),
                          [](const Finding& f) { return f.code == "fake-quantization"; }));
  auto p = PlanVllm(inv, Gpu("h100"), VllmSettings{});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->failure_stage, Stage::kLoad);
  EXPECT_NE(p->failure_message.find("declares awq quantization but stores its decoder "
                                    "projections unquantized"),
            std::string::npos);
}

TEST(Refusals, CpuOffloadIsGibAndAdvisedForALoadThatDoesNotFit) {
  const Inventory inv = Catalog("qwen3-30b-a3b");  // 56.9 GiB of bf16 weights
  VllmSettings s;
  s.max_model_len = 4096;
  s.tensor_parallel_size = 2;
  auto p = PlanVllm(inv, Gpu("4090"), s);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->failure_stage, Stage::kLoad);
  const auto advice = AdviseVllm(inv, Gpu("4090"), s, *p);
  EXPECT_TRUE(HasChange(advice, "--cpu-offload-gb ")) << advice.size();
  // Prefetch offloading (v0.17+): the fewest layers of each group that fit.
  EXPECT_TRUE(HasChange(advice, "--offload-group-size ")) << advice.size();
  for (const Advice& a : advice) EXPECT_TRUE(a.plan.fits) << a.change;
  VllmSettings older = s;
  older.version = "0.16";
  auto p16 = PlanVllm(inv, Gpu("4090"), older);
  ASSERT_TRUE(p16.ok());
  EXPECT_FALSE(HasChange(AdviseVllm(inv, Gpu("4090"), older, *p16), "--offload-group-size "));
  // 10 GiB offloaded is 10 x 2^30 bytes less per GPU.
  s.cpu_offload_gb = 10;
  auto off = PlanVllm(inv, Gpu("4090"), s);
  EXPECT_EQ(p->gpus[0].weights_bytes - off->gpus[0].weights_bytes, 10ull << 30);
}

TEST(Refusals, AdviceCountsEveryGpuOfThePipeline) {
  const Inventory inv = Catalog("qwen3-32b");
  VllmSettings s;
  s.pipeline_parallel_size = 3;
  s.max_model_len = 32768;
  auto p = PlanVllm(inv, Gpu("4090"), s);
  ASSERT_TRUE(p.ok());
  ASSERT_FALSE(p->fits);
  for (const Advice& a : AdviseVllm(inv, Gpu("4090"), s, *p)) {
    if (a.change.rfind("--tensor-parallel-size", 0) != 0) continue;
    const int64_t n = a.settings.tensor_parallel_size * a.settings.pipeline_parallel_size;
    EXPECT_NE(a.change.find(fmt::format("({} GPUs", n)), std::string::npos) << a.change;
    EXPECT_EQ(a.cost.rfind(fmt::format("{} more GPU(s)", n - 3), 0), 0u) << a.cost;
  }
}

// A load that fails on one GPU and loads on two, where the two then fail at a later stage (a
// hybrid model's Mamba blocks below max_num_seqs at TP 2): the two GPUs with the change that
// fits there, beside the larger layout that fits alone.
TEST(Refusals, LoadFailureAdvisesMoreGpusWithTheChangeThatFitsThere) {
  const Inventory inv = Catalog("qwen3.6-35b-a3b-fp8");
  VllmSettings s;
  s.max_model_len = 65536;
  auto p = PlanVllm(inv, Gpu("4090"), s);
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->failure_stage, Stage::kLoad);
  VllmSettings two = s;
  two.tensor_parallel_size = 2;
  auto p2 = PlanVllm(inv, Gpu("4090"), two);
  ASSERT_TRUE(p2.ok());
  ASSERT_FALSE(p2->fits);
  ASSERT_NE(p2->failure_stage, Stage::kLoad);
  bool combined = false, alone = false;
  for (const Advice& a : AdviseVllm(inv, Gpu("4090"), s, *p)) {
    EXPECT_TRUE(a.plan.fits) << a.change;
    if (a.change.rfind("--tensor-parallel-size 2 --", 0) == 0) {
      combined = true;
      EXPECT_EQ(a.settings.tensor_parallel_size, 2) << a.change;
      EXPECT_NE(a.change.find("(2 GPUs)"), std::string::npos) << a.change;
      EXPECT_EQ(a.cost.rfind("1 more GPU(s); ", 0), 0u) << a.cost;
    }
    if (a.change.rfind("--tensor-parallel-size 4 (4 GPUs)", 0) == 0) alone = true;
  }
  EXPECT_TRUE(combined);
  EXPECT_TRUE(alone);
}

TEST(Refusals, CustomAllReduceOnlyWherePeerAccessWorks) {
  const Inventory inv = Catalog("qwen3-32b");
  VllmSettings s;
  s.tensor_parallel_size = 2;
  const uint64_t h100 = PlanVllm(inv, Gpu("h100"), s)->gpus[0].non_torch_bytes;
  const uint64_t geforce = PlanVllm(inv, Gpu("4090"), s)->gpus[0].non_torch_bytes;
  EXPECT_EQ(h100 - geforce, 1536ull << 20);
  s.disable_custom_all_reduce = true;
  EXPECT_EQ(PlanVllm(inv, Gpu("h100"), s)->gpus[0].non_torch_bytes, geforce);
  // Beyond two ranks only on NVLink: four L40S over PCIe run NCCL only.
  s.disable_custom_all_reduce = false;
  s.tensor_parallel_size = 4;
  EXPECT_EQ(PlanVllm(inv, Gpu("l40s"), s)->gpus[0].non_torch_bytes, geforce);
}

TEST(Confidence, AThinMarginIsSaidAndAdvisedAway) {
  const Inventory inv = Catalog("qwen3-8b");
  VllmSettings s;
  s.max_model_len = 35000;  // one request needs all but ~0.1 GiB of the KV memory
  auto thin = PlanVllm(inv, Gpu("4090"), s);
  ASSERT_TRUE(thin.ok() && thin->fits);
  EXPECT_TRUE(thin->low_confidence());
  EXPECT_GT(thin->margin_bytes, 0);
  EXPECT_LT(static_cast<uint64_t>(thin->margin_bytes), thin->uncertainty_bytes);
  const auto advice = AdviseVllm(inv, Gpu("4090"), s, *thin);
  ASSERT_TRUE(HasChange(advice, "--max-model-len "));
  for (const Advice& a : advice) EXPECT_TRUE(a.plan.fits) << a.change;
  s.max_model_len = 8192;
  auto wide = PlanVllm(inv, Gpu("4090"), s);
  EXPECT_FALSE(wide->low_confidence());
  // A failing plan's margin is how much it falls short.
  s.max_model_len = 40000;
  auto fail = PlanVllm(inv, Gpu("4090"), s);
  ASSERT_FALSE(fail->fits);
  EXPECT_EQ(fail->margin_bytes, static_cast<int64_t>(fail->gpus[0].kv_cache_bytes) -
                                    static_cast<int64_t>(fail->kv_needed_bytes));
}

TEST(Advice, AQuantizedVariantForALoadThatDoesNotFit) {
  const Inventory bf16 = Catalog("qwen3-30b-a3b");
  const Inventory gptq = Catalog("qwen3-30b-a3b-gptq-int4");
  VllmSettings s;
  s.max_model_len = 8192;
  auto p = PlanVllm(bf16, Gpu("4090"), s);
  ASSERT_EQ(p->failure_stage, Stage::kLoad);
  const auto advice =
      AdviseAlternatives(vllm::VllmEngine(), {{"Qwen/Qwen3-30B-A3B-GPTQ-Int4", &gptq}}, Gpu("4090"),
                         ToEngineSettings(s), *p);
  ASSERT_EQ(advice.size(), 1u);
  EXPECT_EQ(advice[0].change, "Qwen/Qwen3-30B-A3B-GPTQ-Int4 (gptq 4-bit weights)");
  EXPECT_TRUE(advice[0].plan.fits);
  // A plan that fits gets none.
  EXPECT_TRUE(AdviseAlternatives(vllm::VllmEngine(), {{"x", &gptq}}, Gpu("h100"),
                                 ToEngineSettings(s), *PlanVllm(bf16, Gpu("h100"), s))
                  .empty());
}

TEST(Flags, HfOverridesYarnRaisesTheDerivedLength) {
  const Inventory inv = Catalog("qwen3-8b");  // max_position_embeddings 40960
  VllmSettings s;
  s.max_model_len = 131072;
  // Beyond the derived maximum: refused at startup, Qwen's YaRN named as a way out.
  auto refused = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(refused.ok()) << refused.status().ToString();
  EXPECT_EQ(refused->failure_stage, Stage::kStartup);
  EXPECT_NE(refused->refusal.find(R"(--hf-overrides '{"rope_scaling": {"rope_type": "yarn", )"
                                  R"("factor": 4.0, "original_max_position_embeddings": 32768}}')"),
            std::string::npos)
      << refused->refusal;
  // Qwen's documented YaRN: original 32768 x factor 4 = 131072.
  s.hf_overrides = R"({"rope_scaling": {"rope_type": "yarn", "factor": 4.0,)"
                   R"( "original_max_position_embeddings": 32768}, "foo": 1})";
  auto p = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->max_model_len, 131072);
  EXPECT_TRUE(std::any_of(p->notes.begin(), p->notes.end(), [](const std::string& n) {
    return n.find("--hf-overrides: \"foo\" is not modelled") != std::string::npos;
  }));
  EXPECT_NE(p->command.find("--hf-overrides '"), std::string::npos);
  // The advice re-plans both ways out: the derived length, and the YaRN override.
  VllmSettings plain;
  plain.max_model_len = 131072;
  const auto advice = testutil::AdviseVllm(inv, Gpu("h100"), plain, *refused);
  std::vector<std::string> changes;
  for (const auto& a : advice) {
    if (a.plan.fits) changes.push_back(a.change);
  }
  EXPECT_NE(std::find(changes.begin(), changes.end(), "--max-model-len 40960"), changes.end());
  EXPECT_TRUE(std::any_of(changes.begin(), changes.end(), [](const std::string& c) {
    return c.starts_with("--hf-overrides '{\"rope_scaling\"");
  })) << ::testing::PrintToString(changes);
  s.max_model_len = 131073;
  EXPECT_EQ(PlanVllm(inv, Gpu("h100"), s)->failure_stage, Stage::kStartup);
  s.hf_overrides = "[1]";
  EXPECT_FALSE(PlanVllm(inv, Gpu("h100"), s).ok());
}

TEST(Flags, SpeculativeMtpLoadsTheMtpLayers) {
  const Inventory inv = Catalog("qwen3.5-35b-a3b-awq");
  VllmSettings s;
  s.tensor_parallel_size = 2;
  s.max_model_len = 4096;
  auto plain = PlanVllm(inv, Gpu("4090"), s);
  s.speculative_method = "mtp";
  s.num_speculative_tokens = 2;
  auto mtp = PlanVllm(inv, Gpu("4090"), s);
  ASSERT_TRUE(plain.ok() && mtp.ok());
  EXPECT_GT(mtp->gpus[0].weights_bytes, plain->gpus[0].weights_bytes);
  EXPECT_LT(mtp->kv_cache_tokens, plain->kv_cache_tokens);
}

// A separate draft model (--speculative-config "model"): its weights load with the target's,
// sharded at the target's TP, and its layers page in the same KV pool
// (docs/engines/vllm-speculative.md).
TEST(Flags, SpeculativeDraftModelAddsItsWeightsAndKvLayers) {
  const Inventory target = Catalog("llama-3.3-70b-instruct-fp8-dynamic");
  auto draft = std::make_shared<const Inventory>(Catalog("llama-3.1-8b-instruct"));
  VllmSettings s;
  s.tensor_parallel_size = 2;
  s.max_model_len = 16384;
  auto plain = PlanVllm(target, Gpu("h100"), s);
  auto read = ReadFlags({{"--speculative-config",
                          R"({"model": "llama-3.1-8b-instruct", "num_speculative_tokens": 3})"}},
                         s);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->speculative_method, "draft_model");
  EXPECT_EQ(read->draft_model, "llama-3.1-8b-instruct");
  VllmSettings d = *read;
  auto unread = PlanVllm(target, Gpu("h100"), d);  // the caller did not read the draft
  d.draft_inventory = draft;
  auto with = PlanVllm(target, Gpu("h100"), d);
  ASSERT_TRUE(plain.ok() && unread.ok() && with.ok());
  const auto said = [](const Plan& p, const char* text) {
    for (const std::string& n : p.notes)
      if (n.find(text) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(said(*unread, "was not read"));
  EXPECT_EQ(unread->gpus[0].weights_bytes, plain->gpus[0].weights_bytes);
  EXPECT_TRUE(said(*with, "adds"));
  // Weights: the target's share plus the draft's at TP 2 (8.03 B bf16 parameters: ~7.5 GiB).
  VllmWeightOptions wo;
  wo.tensor_parallel_size = 2;
  const uint64_t draft_rank = VllmWeightsPerRank(*draft, wo)->bytes_per_rank;
  EXPECT_GT(draft_rank, 7ull << 30);
  EXPECT_EQ(with->gpus[0].weights_bytes, plain->gpus[0].weights_bytes + draft_rank);
  // KV: 80 target + 32 draft layers, all 8 KV heads x 128 (4 per rank): one group of 112
  // layers, 112 x 2 x 4 x 128 x 2 B = 229,376 B per token and rank.
  EXPECT_EQ(with->kv_layout.layers.size(), 112u);
  EXPECT_EQ(with->kv_layout.groups.size(), 1u);
  const uint64_t blocks = with->gpus[0].kv_cache_bytes / (16 * 2048) / 112;
  EXPECT_EQ(with->kv_cache_tokens, blocks * 16);
  EXPECT_LT(with->kv_cache_tokens, plain->kv_cache_tokens * 80 / 112);
  // The MTP methods draft with the target's own layers: "model" names no separate draft.
  auto mtp = ReadFlags({{"--speculative-config",
                         R"({"method": "mtp", "model": "x", "num_speculative_tokens": 1})"}},
                       s);
  ASSERT_TRUE(mtp.ok());
  EXPECT_EQ(mtp->draft_model, "");
}

// The encoder profile's dummy modality (docs/engines/vllm-multimodal-and-allreduce.md, part A):
// Qwen2.5-VL's dummy video holds max_model_len / 16,384 temporal patches (up to 7) of 16,384
// tokens, and wins over a 16,384-token image from 32,768 tokens on; "video": 0 leaves the image.
TEST(Flags, Qwen25VlProfilesTheDummyVideoUnlessVideosAreOff) {
  const Inventory inv = Catalog("qwen2.5-vl-7b-instruct");
  const auto encoder = [&](int64_t len, int64_t images, int64_t videos) -> std::string {
    VllmSettings s;
    s.max_model_len = len;
    s.max_num_batched_tokens = 8192;
    s.limit_images = images;
    s.limit_videos = videos;
    auto p = PlanVllm(inv, Gpu("h100"), s);
    if (!p.ok()) return p.status().ToString();
    for (const Explained& e : p->gpus[0].explain)
      if (e.name == "encoder") return e.formula;
    return "";
  };
  EXPECT_NE(encoder(32768, 1, 1).find("1 video(s) of 32768 tokens (12845056 max_pixels, 4 frames)"),
            std::string::npos) << encoder(32768, 1, 1);
  EXPECT_NE(encoder(32768, 1, 0).find("1 image(s) of 16384 tokens"), std::string::npos);
  // 128,000 tokens hold 7 temporal patches: 14 frames, 114,688 tokens.
  EXPECT_NE(encoder(128000, -1, -1).find("of 114688 tokens"), std::string::npos);
  // Below two images' length the counts tie and video is profiled (vLLM's tie rule).
  EXPECT_NE(encoder(16384, 1, 1).find("1 video(s) of 16384 tokens"), std::string::npos);
  // Images off, video on: the video.
  EXPECT_NE(encoder(32768, 0, 1).find("video(s)"), std::string::npos);
  EXPECT_EQ(encoder(32768, 0, 0), "");
}

}  // namespace
}  // namespace vramfit

namespace vramfit::vllm {
namespace {

// vLLM 0.3.0-0.4.0 read --kv-cache-dtype from choices ['auto', 'fp8_e5m2'] (arg_utils.py, PR
// #2279): the refusal names the release the user gave, and the fit knob and advice spell the
// FP8 cache as those releases do.
TEST(Refusals, KvCacheDtypeChoicesOfOldReleases) {
  const Rules v042 = RulesFor(402);
  const Status bad = CheckKvCacheDtypeChoice(v042, "fp8_e4m3", "0.4.2");
  EXPECT_EQ(bad.message(),
            "argument --kv-cache-dtype: invalid choice: 'fp8_e4m3' (choose from 'auto', 'fp8') "
            "(vLLM 0.4.2)");
  const Engine& engine = VllmEngine();
  const auto kv = std::find_if(engine.knobs.begin(), engine.knobs.end(),
                               [](const Knob& k) { return k.setting == Setting::kKvCacheDtype; });
  ASSERT_NE(kv, engine.knobs.end());
  const auto spelled = [&](const char* version) {
    EngineSettings s;
    s.version = version;
    EXPECT_TRUE(kv->apply(*FindGpu("a10"), &s));
    return s.kv_cache_dtype;
  };
  EXPECT_EQ(spelled("0.3.0"), "fp8_e5m2");
  EXPECT_EQ(spelled("0.4.0"), "fp8_e5m2");
  EXPECT_EQ(spelled("0.4.1"), "fp8");
  EXPECT_EQ(spelled(""), "fp8");
  EXPECT_TRUE(CheckKvCacheDtypeChoice(RulesFor(300), spelled("0.3.0"), "0.3.0").ok());
}

}  // namespace
}  // namespace vramfit::vllm
