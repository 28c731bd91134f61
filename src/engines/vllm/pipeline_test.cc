// vLLM pipelines: the layer split (vLLM's default and VLLM_PP_LAYER_PARTITION), the cards of the
// stages, each stage's weights and KV memory, and the stage that binds the pool.
#include "engines/vllm/pipeline.h"

#include <gtest/gtest.h>

#include <numeric>

#include "engines/vllm/command.h"
#include "testutil/catalog.h"

namespace vramfit {
namespace {

using testutil::Catalog;
using testutil::Gpu;
using vllm::PipelinePartition;
using vllm::StageGpus;

std::vector<int64_t> Split(int64_t layers, int64_t stages, std::string_view text = "") {
  auto p = PipelinePartition(layers, stages, text);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : std::vector<int64_t>{};
}

std::string SplitError(int64_t layers, int64_t stages, std::string_view text) {
  auto p = PipelinePartition(layers, stages, text);
  EXPECT_FALSE(p.ok()) << text;
  return p.ok() ? "" : p.status().message();
}

TEST(VllmPipeline, DefaultSplitIsGetPpIndices) {
  // vllm/distributed/utils.py get_pp_indices: layers // stages each, then partitions[-i] += 1
  // for i in range(2, remainder + 2). Worked by hand from that loop:
  EXPECT_EQ(Split(48, 2), (std::vector<int64_t>{24, 24}));
  EXPECT_EQ(Split(7, 3), (std::vector<int64_t>{2, 3, 2}));      // remainder 1: [-2]
  EXPECT_EQ(Split(10, 4), (std::vector<int64_t>{2, 3, 3, 2}));  // [-2], [-3]
  EXPECT_EQ(Split(31, 4), (std::vector<int64_t>{8, 8, 8, 7}));  // all but the last
  EXPECT_EQ(Split(61, 8), (std::vector<int64_t>{7, 7, 8, 8, 8, 8, 8, 7}));
  EXPECT_EQ(Split(3, 4), (std::vector<int64_t>{1, 1, 1, 0}));   // fewer layers than stages
  EXPECT_EQ(Split(27, 1), (std::vector<int64_t>{27}));
  for (int64_t layers : {1, 28, 61, 94}) {
    for (int64_t stages : {2, 3, 5, 8}) {
      const auto p = Split(layers, stages);
      ASSERT_EQ(p.size(), static_cast<size_t>(stages));
      EXPECT_EQ(std::accumulate(p.begin(), p.end(), int64_t{0}), layers);
      EXPECT_EQ(p.back(), layers / stages) << "the last stage never takes a remainder layer";
    }
  }
}

TEST(VllmPipeline, ExplicitPartitionIsReadAsVllmReadsIt) {
  EXPECT_EQ(Split(48, 2, "16,32"), (std::vector<int64_t>{16, 32}));
  EXPECT_EQ(Split(48, 2, " 16, +32 "), (std::vector<int64_t>{16, 32}));  // Python int()
  EXPECT_EQ(Split(48, 3, "0,16,32"), (std::vector<int64_t>{0, 16, 32}));
}

TEST(VllmPipeline, BadPartitionsSayWhatVllmSays) {
  EXPECT_EQ(SplitError(48, 2, "16,31"),
            "VLLM_PP_LAYER_PARTITION=16,31: sum(partitions)=47 does not match "
            "num_hidden_layers=48.");
  EXPECT_EQ(SplitError(48, 2, "16,16,16"),
            "VLLM_PP_LAYER_PARTITION=16,16,16: len(partitions)=3 does not match pp_size=2.");
  EXPECT_NE(SplitError(48, 2, "16;32").find("Invalid partition string: 16;32"),
            std::string::npos);
  EXPECT_NE(SplitError(48, 2, "16,").find("Invalid partition string"), std::string::npos);
  EXPECT_NE(SplitError(48, 2, "-1,49").find("a stage of -1 layers"), std::string::npos);
  EXPECT_NE(SplitError(48, 2, "99999999999999999999,1").find("Invalid"), std::string::npos);
  EXPECT_FALSE(PipelinePartition(48, 0, "").ok());
  EXPECT_FALSE(PipelinePartition(48, 5000, "").ok());
}

TEST(VllmPipeline, StageCardsOnePerStageOrPerRank) {
  const GpuSpec small = Gpu("5070ti"), big = Gpu("5090d"), mid = Gpu("4090");
  auto all = StageGpus(mid, {}, 3, 2);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[2].id, mid.id);
  auto per_stage = StageGpus(mid, {small, big}, 2, 1);
  ASSERT_TRUE(per_stage.ok());
  EXPECT_EQ((*per_stage)[0].id, small.id);
  EXPECT_EQ((*per_stage)[1].id, big.id);
  // Per rank, stage-major: the smallest card of a stage's ranks stands for the stage.
  auto per_rank = StageGpus(mid, {big, small, big, big}, 2, 2);
  ASSERT_TRUE(per_rank.ok());
  EXPECT_EQ((*per_rank)[0].id, small.id);
  EXPECT_EQ((*per_rank)[1].id, big.id);
  auto wrong = StageGpus(mid, {small, big, mid}, 2, 2);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("--gpu names 3 cards"), std::string::npos);
}

// The record of vllm-project/vllm#34076: Qwen3-Coder-30B-A3B FP8, an RTX 5070 Ti (16 layers) and
// an RTX 5090 D (32 layers), --gpu-memory-utilization 0.9, vLLM 0.15.2rc1.
VllmSettings Issue34076(const char* version) {
  VllmSettings s;
  s.version = version;
  s.pipeline_parallel_size = 2;
  s.gpu_memory_utilization = 0.9;
  s.pp_layer_partition = "16,32";
  s.stage_gpus = {Gpu("5070ti"), Gpu("5090d")};
  return s;
}

TEST(VllmPipeline, MixedCardsUnevenSplitBindsOnTheSmallCard) {
  const Inventory inv = Catalog("qwen3-coder-30b-a3b-instruct-fp8");
  auto p = PlanVllm(inv, Gpu("5070ti"), Issue34076("0.15"));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->pipeline_stages.size(), 2u);
  const PipelineStage& s0 = p->pipeline_stages[0];
  const PipelineStage& s1 = p->pipeline_stages[1];
  EXPECT_EQ(s0.first_layer, 0);
  EXPECT_EQ(s0.layers, 16);
  EXPECT_EQ(s1.first_layer, 16);
  EXPECT_EQ(s1.layers, 32);
  EXPECT_EQ(s0.gpu.id, "rtx-5070-ti");
  EXPECT_EQ(s1.gpu.id, "rtx-5090-d");
  // Each stage's budget is its own card's: 0.9 x total.
  EXPECT_LT(s0.per_gpu.budget_bytes, s1.per_gpu.budget_bytes / 2 + (1ull << 30));
  // The 5090 D holds twice the layers' weights.
  EXPECT_GT(s1.per_gpu.weights_bytes, s0.per_gpu.weights_bytes * 3 / 2);
  // The small card has the least KV memory for its layers: it binds, and the plan shows it.
  EXPECT_EQ(p->binding_stage, 0);
  EXPECT_LT(s0.kv_cache_tokens, s1.kv_cache_tokens);
  EXPECT_EQ(p->kv_cache_tokens, s0.kv_cache_tokens);
  EXPECT_EQ(p->gpu.id, "rtx-5070-ti");
  EXPECT_EQ(p->gpus[0].total_bytes, s0.per_gpu.total_bytes);
  // v0.15 checks one request of all 48 layers against the smallest stage's memory: the
  // 262,144-token default needs 24 GiB (48 x 2 x 4 heads x 128 x 2 B per token).
  EXPECT_FALSE(p->fits);
  EXPECT_EQ(p->failure_stage, Stage::kKvCache);
  EXPECT_EQ(p->kv_needed_bytes, 24ull << 30);
  EXPECT_NE(p->failure_message.find("24.00 GiB KV cache is needed"), std::string::npos);
  // The estimate is the longest whole-model request in stage 0's memory: 96 KiB a token, whole
  // blocks of 16 (vLLM printed 34,736 from 3.18 GiB).
  const uint64_t est = static_cast<uint64_t>(p->estimated_max_model_len);
  EXPECT_EQ(est % 16, 0u);
  EXPECT_LE(est * 98304, s0.per_gpu.kv_cache_bytes);
  EXPECT_GT((est + 16) * 98304, s0.per_gpu.kv_cache_bytes);
  // Qwen3-MoE builds the embedding and lm_head on every stage (models/qwen3_moe.py).
  const uint64_t vocab = 151936ull * 2048 * 2;
  EXPECT_GT(s0.per_gpu.weights_bytes, 2 * vocab);
  // Per-stage checks (v0.16+, PR #33698): stage 0 needs only its 16 layers, so its estimate is
  // three times the whole model's from the same memory.
  auto v16 = PlanVllm(inv, Gpu("5070ti"), Issue34076("0.16"));
  ASSERT_TRUE(v16.ok()) << v16.status().ToString();
  EXPECT_EQ(v16->binding_stage, 0);
  EXPECT_EQ(v16->kv_needed_bytes, 8ull << 30);
  const double ratio = static_cast<double>(v16->estimated_max_model_len) /
                       static_cast<double>(p->estimated_max_model_len);
  EXPECT_GT(ratio, 2.5);
  EXPECT_LT(ratio, 3.5);
}

TEST(VllmPipeline, AnEvenSplitOnOneCardBindsOnTheStageWithMoreLayers) {
  VllmSettings s;
  s.pipeline_parallel_size = 2;
  s.max_model_len = 8192;
  s.pp_layer_partition = "12,24";
  const Inventory inv = Catalog("qwen3-8b");
  auto p = PlanVllm(inv, Gpu("4090"), s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->fits) << p->failure_message;
  EXPECT_EQ(p->binding_stage, 1);
  EXPECT_EQ(p->pipeline_stages[1].gpu.id, "rtx-4090");
  EXPECT_GT(p->pipeline_stages[0].kv_cache_tokens, p->pipeline_stages[1].kv_cache_tokens);
  // The stages' weights add up to the whole model's, with the RoPE cache on each stage.
  VllmSettings one = s;
  one.pipeline_parallel_size = 1;
  one.pp_layer_partition.clear();
  auto whole = PlanVllm(inv, Gpu("a100-80gb"), one);
  ASSERT_TRUE(whole.ok());
  const uint64_t sum = p->pipeline_stages[0].per_gpu.weights_bytes +
                       p->pipeline_stages[1].per_gpu.weights_bytes;
  EXPECT_GE(sum, whole->gpus[0].weights_bytes);
  EXPECT_LT(sum - whole->gpus[0].weights_bytes, 64ull << 20);
  // The command carries the partition as the environment prefix vLLM reads.
  EXPECT_EQ(p->command.rfind("VLLM_PP_LAYER_PARTITION=12,24 vllm serve ", 0), 0u) << p->command;
}

TEST(VllmPipeline, TiedEmbeddingsLoadOnTheLastStageToo) {
  // Qwen3-0.6B ties lm_head to the embedding: the last stage builds its own copy (llama.py).
  VllmSettings s;
  s.pipeline_parallel_size = 2;
  s.max_model_len = 4096;
  const Inventory inv = Catalog("qwen3-0.6b");
  ASSERT_TRUE(inv.spec.tie_word_embeddings);
  auto p = PlanVllm(inv, Gpu("4090"), s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  VllmSettings one = s;
  one.pipeline_parallel_size = 1;
  auto whole = PlanVllm(inv, Gpu("4090"), one);
  ASSERT_TRUE(whole.ok());
  const uint64_t embedding = static_cast<uint64_t>(inv.spec.vocab_size) *
                             static_cast<uint64_t>(inv.spec.hidden_size) * 2;
  const uint64_t sum = p->pipeline_stages[0].per_gpu.weights_bytes +
                       p->pipeline_stages[1].per_gpu.weights_bytes;
  EXPECT_GT(sum, whole->gpus[0].weights_bytes + embedding * 9 / 10);
}

TEST(VllmPipeline, WrongCardCountAndBadPartitionAreErrors) {
  const Inventory inv = Catalog("qwen3-8b");
  VllmSettings s;
  s.pipeline_parallel_size = 2;
  s.stage_gpus = {Gpu("4090"), Gpu("4090"), Gpu("4090")};
  auto p = PlanVllm(inv, Gpu("4090"), s);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), Code::kInvalidArgument);
  s.stage_gpus.clear();
  s.pp_layer_partition = "18,19";
  p = PlanVllm(inv, Gpu("4090"), s);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("sum(partitions)=37"), std::string::npos);
  // vLLM reads the variable at any pipeline size.
  s.pipeline_parallel_size = 1;
  p = PlanVllm(inv, Gpu("4090"), s);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("len(partitions)=2 does not match pp_size=1."),
            std::string::npos);
}

TEST(VllmPipeline, CheckReadsThePartitionFromTheEnvironment) {
  auto cmd = vllm::ReadServeCommand({"VLLM_PP_LAYER_PARTITION=16,32", "vllm", "serve", "m",
                                     "--pipeline-parallel-size", "2"});
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  EXPECT_TRUE(cmd->unmodelled_env.empty());
  EXPECT_EQ(ToVllmSettings(cmd->settings).pp_layer_partition, "16,32");
}

}  // namespace
}  // namespace vramfit
