// The llama.cpp plan over GGUF files the tests write (hollow headers, as tests/gguf_models_test.cc
// does): model buffers per device for -ngl / -sm / -ts / -ot / --cpu-moe, KV per layer kind
// and cache type, streams, the hybrid's recurrent state, the compute estimate against a
// published log, the command reader and the engine row's refusals and remedies.
#include <gtest/gtest.h>

#include <filesystem>

#include "engines/llamacpp/command.h"
#include "engines/llamacpp/engine.h"
#include "engines/llamacpp/llamacpp.h"
#include "engines/llamacpp/test_models.h"
#include "testutil/gguf_writer.h"
#include "testutil/hollow.h"
#include "vramfit/inspect.h"

namespace vramfit::llamacpp {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

class LlamaCppPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = vramfit::testing::MakeTempDir("llamacpp-plan");
    gpu_ = *FindGpu("4090");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Inventory Read(const std::string& name) {
    auto inv = InspectModel(dir_ + "/" + name, {});
    EXPECT_TRUE(inv.ok()) << inv.status().ToString();
    return inv.ok() ? std::move(*inv) : Inventory{};
  }
  Inventory Llama3() {
    vramfit::testing::WriteLlama3Q4KM(dir_ + "/llama3-8b-Q4_K_M.gguf");
    return Read("llama3-8b-Q4_K_M.gguf");
  }
  Inventory Model(const testing::Hparams& h, const std::string& name) {
    testing::WriteModel(h, dir_ + "/" + name);
    return Read(name);
  }
  static testing::Hparams Qwen35Moe() {
    testing::Hparams h;
    h.arch = "qwen35moe";
    h.n_layer = 40, h.n_embd = 2048, h.n_head = 16, h.n_head_kv = 2, h.head_k = 256;
    h.head_v = 256, h.n_ff = 512, h.n_vocab = 248320, h.n_ctx_train = 262144;
    h.n_expert = 256, h.n_expert_used = 8, h.n_ff_exp = 512, h.n_ff_shexp = 512;
    h.full_attn_interval = 4, h.ssm_conv = 4, h.ssm_state = 128, h.ssm_groups = 16;
    h.ssm_rank = 32, h.ssm_inner = 4096;
    return h;
  }
  Result<LlamaCppPlan> Plan(const Inventory& inv, LlamaCppSettings s) {
    return PlanLlamaCpp(inv, gpu_, s);
  }

  std::string dir_;
  GpuSpec gpu_;
};

// The published RTX 3070 log of this file (validation record r01): CUDA0 model 4403.49 MiB,
// CPU 281.81 MiB, KV 64.00 MiB, compute 258.50 MiB at -c 512, FA off.
TEST_F(LlamaCppPlanTest, Llama3FullOffloadMatchesItsLog) {
  const Inventory inv = Llama3();
  LlamaCppSettings s;
  s.program = Program::kCli;
  s.max_model_len = 512;
  s.flash_attn = "off";
  auto p = Plan(inv, s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->devices.size(), 1u);
  EXPECT_EQ(p->devices[0].model, 4617396224u);  // 4403.49 MiB
  EXPECT_EQ(p->host.model, 295501824u);         // token_embd, 281.81 MiB
  EXPECT_EQ(p->devices[0].kv, 64 * kMiB);
  EXPECT_EQ(p->devices[0].compute, 517 * kMiB / 2);  // 512 x (128256 + 4096) x 4
  EXPECT_EQ(p->devices[0].layers, 32);
  EXPECT_TRUE(p->devices[0].output);
  EXPECT_TRUE(p->fits);
}

// -ngl counts from the last layer; the output layer is layer n_layer, so -ngl 32 leaves it on
// the CPU and -ngl 33 brings it over.
TEST_F(LlamaCppPlanTest, GpuLayersCountFromTheLast) {
  const Inventory inv = Llama3();
  LlamaCppSettings s;
  s.max_model_len = 4096;
  s.n_gpu_layers = 32;
  auto p32 = Plan(inv, s);
  s.n_gpu_layers = 33;
  auto p33 = Plan(inv, s);
  s.n_gpu_layers = 10;
  auto p10 = Plan(inv, s);
  ASSERT_TRUE(p32.ok() && p33.ok() && p10.ok());
  EXPECT_FALSE(p32->devices[0].output);
  EXPECT_TRUE(p33->devices[0].output);
  EXPECT_EQ(p33->devices[0].model - p32->devices[0].model, 430940160u + 16384u);
  EXPECT_EQ(p10->devices[0].layers, 10);
  // KV follows the layers: 10 of 32 on the GPU, the rest in host memory.
  EXPECT_EQ(p10->devices[0].kv * 32, p33->devices[0].kv * 10);
  EXPECT_EQ(p10->host.kv * 32, p33->devices[0].kv * 22);
}

// A CPU layer's flash attention runs on CUDA0 beside its offloaded q projection (ubatch of 32
// or more), its host-buffer inputs copied in: the f32 KQ mask [n_kv, T] and the layer's K and
// V views. Llama 3 8B at -c 131072 -ub 1024: 512 MiB of mask and 128 + 128 MiB of K and V
// (8 KV heads x 128 x f16 over 131072 cells) beyond the same plan with every layer on the GPU;
// without flash attention, or with the layers on the GPU, no such copies.
TEST_F(LlamaCppPlanTest, CpuLayersFlashAttentionCopiesItsInputsToCuda0) {
  const Inventory inv = Llama3();
  LlamaCppSettings s;
  s.max_model_len = 131072;
  s.n_ubatch = 1024;
  s.max_num_batched_tokens = 1024;
  s.flash_attn = "on";
  s.fit = 0;
  GpuSpec big = *FindGpu("h100-sxm");
  s.n_gpu_layers = 99;
  auto all = PlanLlamaCpp(inv, big, s);
  s.n_gpu_layers = 16;
  auto part = PlanLlamaCpp(inv, big, s);
  ASSERT_TRUE(all.ok() && part.ok()) << part.status().ToString();
  const double mask_f16 = 131072.0 * 1024 * 2, rows = 4.0 * 4096 * 1024 * 4;
  const double copies = 131072.0 * 1024 * 4 + 2 * 131072.0 * 1024 * 2;
  // The layer term: mask and rows live, attention's rows plus the copies.
  EXPECT_EQ(part->devices[0].compute, static_cast<uint64_t>(mask_f16 + rows + rows + copies));
  EXPECT_LT(all->devices[0].compute, part->devices[0].compute - 700 * kMiB);
  // Without flash attention the scores [n_kv, T, n_head] are charged alike, no copies.
  s.flash_attn = "off";
  auto eager_part = PlanLlamaCpp(inv, big, s);
  s.n_gpu_layers = 99;
  auto eager_all = PlanLlamaCpp(inv, big, s);
  ASSERT_TRUE(eager_part.ok() && eager_all.ok());
  EXPECT_EQ(eager_part->devices[0].compute, eager_all->devices[0].compute);
}

// From b7650 -ngl offloads the output layer first: -ngl 32 is the output layer and layers 1-31.
TEST_F(LlamaCppPlanTest, NewerBuildsOffloadTheOutputLayerFirst) {
  const Inventory inv = Llama3();
  LlamaCppSettings s;
  s.max_model_len = 4096;
  s.n_gpu_layers = 32;
  s.version = "b7700";
  auto p = Plan(inv, s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->devices[0].output);
  EXPECT_EQ(p->devices[0].layers, 31);
  s.version = "b7450";
  auto old = Plan(inv, s);
  ASSERT_TRUE(old.ok());
  EXPECT_FALSE(old->devices[0].output);
  EXPECT_EQ(old->devices[0].layers, 32);
  s.version = "b12";
  EXPECT_FALSE(Plan(inv, s).ok());
}

// Hostile command lines and settings end in a message, never a crash or a hang.
TEST_F(LlamaCppPlanTest, HostileSettingsAreRefused) {
  const Inventory inv = Llama3();
  LlamaCppSettings s;
  s.pipeline_parallel_size = 100000;
  EXPECT_FALSE(Plan(inv, s).ok());
  s.pipeline_parallel_size = 2;
  s.tensor_split = {0, 0};
  EXPECT_FALSE(Plan(inv, s).ok());
  s.tensor_split = {1, 1, 1};
  EXPECT_FALSE(Plan(inv, s).ok());
  s.tensor_split.clear();
  s.overrides = {{std::string(2000, 'a'), "CPU"}};
  EXPECT_FALSE(Plan(inv, s).ok());
  s.overrides = {{"exps", "TPU0"}};
  EXPECT_FALSE(Plan(inv, s).ok());
  s.overrides.clear();
  s.max_model_len = int64_t{1} << 40;
  EXPECT_FALSE(Plan(inv, s).ok());
  s.max_model_len = (int64_t{1} << 31) - 1;
  s.max_num_seqs = 256;
  s.kv_unified = 0;
  s.fit = 0;  // (--fit would move every layer to the CPU)
  auto huge = Plan(inv, s);
  ASSERT_TRUE(huge.ok());
  EXPECT_FALSE(huge->fits);
  s.max_num_seqs = 100000;
  EXPECT_FALSE(Plan(inv, s).ok());
  std::vector<std::string> argv = {"CUDA_VISIBLE_DEVICES=" + std::string(5000, ','),
                                   "llama-server", "-m", "x.gguf"};
  auto cmd = ReadLlamaCppCommand(argv);
  ASSERT_TRUE(cmd.ok());
  EXPECT_FALSE(Plan(inv, ToLlamaCppSettings(cmd->settings)).ok());
  EXPECT_FALSE(ReadLlamaCppCommand({"llama-server", "-m", "a.gguf", "b.gguf"}).ok());
  EXPECT_FALSE(ReadFlags({{"--tensor-split", std::string(1000, '1') + ",1"}}, {}).ok());
  EXPECT_FALSE(ReadFlags({{"--n-gpu-layers", "99999999999"}}, {}).ok());
  EXPECT_FALSE(ReadFlags({{"--flash-attn", "maybe"}}, {}).ok());
  EXPECT_FALSE(ReadFlags({{"--device", ""}}, {}).ok());
}

// Two GPUs under -sm layer split 33 units at 1/2: layers 0-16 on CUDA0, 17-31 and the output
// on CUDA1; -ts 3,1 moves the split point to 3/4; -sm none keeps one GPU.
TEST_F(LlamaCppPlanTest, SplitModes) {
  const Inventory inv = Llama3();
  LlamaCppSettings s;
  s.max_model_len = 8192;
  s.pipeline_parallel_size = 2;
  auto even = Plan(inv, s);
  ASSERT_TRUE(even.ok());
  EXPECT_EQ(even->devices[0].layers, 17);
  EXPECT_EQ(even->devices[1].layers, 15);
  EXPECT_TRUE(even->devices[1].output);
  s.tensor_split = {3, 1};
  auto uneven = Plan(inv, s);
  ASSERT_TRUE(uneven.ok());
  EXPECT_EQ(uneven->devices[0].layers, 25);  // il / 33 < 0.75
  s.tensor_split.clear();
  s.split_mode = "none";
  auto none = Plan(inv, s);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->devices.size(), 1u);
  EXPECT_EQ(none->devices[0].model, even->devices[0].model + even->devices[1].model);
  s.split_mode = "row";
  auto row = Plan(inv, s);
  ASSERT_TRUE(row.ok());
  // Matrices halve; norms stay with the layer's device.
  const uint64_t total = row->devices[0].model + row->devices[1].model;
  EXPECT_NEAR(static_cast<double>(total),
              static_cast<double>(even->devices[0].model + even->devices[1].model), 8.0);
  EXPECT_NEAR(static_cast<double>(row->devices[0].model),
              static_cast<double>(row->devices[1].model), 5.0e8);  // the output layer's share
  s.split_mode = "diagonal";
  EXPECT_FALSE(Plan(inv, s).ok());
  s.split_mode = "none";
  s.main_gpu = 2;
  EXPECT_FALSE(Plan(inv, s).ok());
}

// -c pads to 256; streams of separate sequences hold the same cells in total; q8_0 is 34
// bytes per 32 values; a quantized V cache needs flash attention.
TEST_F(LlamaCppPlanTest, CacheSizesAndTypes) {
  const Inventory inv = Llama3();
  LlamaCppSettings s;
  s.program = Program::kCli;
  s.max_model_len = 1000;
  auto p = Plan(inv, s);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->n_ctx, 1024);
  EXPECT_EQ(p->devices[0].kv, 1024u * 32 * 1024 * 2 * 2);
  s.max_model_len = 8192;
  s.max_num_seqs = 4;
  auto streams = Plan(inv, s);
  ASSERT_TRUE(streams.ok());
  EXPECT_EQ(streams->devices[0].kv, 8192u * 32 * 1024 * 2 * 2);
  // -ctk alone quantizes K only: V stays f16 (common_params' own default for cache_type_v).
  s.kv_cache_dtype = "q8_0";
  auto k8 = Plan(inv, s);
  ASSERT_TRUE(k8.ok());
  EXPECT_EQ(k8->devices[0].kv, 8192u * 32 * (1024 / 32 * 34 + 1024 * 2));
  s.cache_type_v = "q8_0";
  auto q8 = Plan(inv, s);
  ASSERT_TRUE(q8.ok());
  EXPECT_EQ(q8->devices[0].kv, 8192u * 32 * (1024 / 32 * 34) * 2);
  s.cache_type_v = "q4_0";
  s.flash_attn = "off";
  auto bad = Plan(inv, s);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("requires flash_attn"), std::string::npos);
  s.kv_cache_dtype = "fp8";
  EXPECT_FALSE(Plan(inv, s).ok());
}

// The Qwen3.6-style hybrid: K/V only in the 10 full-attention layers, F32 conv and delta-net
// state per sequence in the 30 others; separate streams give every sequence n_ctx cells.
TEST_F(LlamaCppPlanTest, HybridKvOnlyForFullLayersPlusStatePerSequence) {
  const Inventory inv = Model(Qwen35Moe(), "qwen35moe.gguf");
  LlamaCppSettings s;
  s.max_model_len = 32768;
  s.max_num_seqs = 4;
  s.kv_unified = 1;
  auto unified = Plan(inv, s);
  ASSERT_TRUE(unified.ok()) << unified.status().ToString();
  const uint64_t kv_layer = 32768u * 2 * 256 * 2 * 2;  // cells x kv heads x head x K,V x f16
  EXPECT_EQ(unified->devices[0].kv, 10 * kv_layer);
  // conv: (4 - 1) x (32 x 128 + 2 x 16 x 128) + state: 128 x 32 x 128, F32, x 4 sequences.
  const uint64_t state_layer = (3u * (4096 + 4096) + 128u * 4096) * 4 * 4;
  EXPECT_EQ(unified->devices[0].state, 30 * state_layer);
  s.kv_unified = 0;
  auto split = Plan(inv, s);
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(split->devices[0].kv, 4 * 10 * kv_layer);
  EXPECT_EQ(split->devices[0].state, unified->devices[0].state);
}

// The verdict's "maximum concurrency for N tokens per request": a unified cache lets one
// request fill all n_ctx cells (1x at n_ctx); separate streams, and builds before them, give
// each slot n_ctx / n_seq tokens, the longest request, at n_seq requests.
TEST_F(LlamaCppPlanTest, ConcurrencyIsAtTheLongestRequestASlotTakes) {
  const Inventory inv = Llama3();
  LlamaCppSettings s;
  s.max_model_len = 32768;
  s.max_num_seqs = 4;
  s.kv_unified = 1;
  auto unified = Plan(inv, s);
  ASSERT_TRUE(unified.ok()) << unified.status().ToString();
  EXPECT_EQ(unified->max_model_len, 32768);
  EXPECT_EQ(unified->max_concurrency, 1.0);
  s.kv_unified = 0;
  auto split = Plan(inv, s);
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(split->kv_cache_tokens, 32768u);
  EXPECT_EQ(split->max_model_len, 8192);
  EXPECT_EQ(split->max_concurrency, 4.0);
}

// Gemma 3: sliding layers hold pad256(window + ubatch) cells, all of n_ctx with --swa-full
// (and before the build that brought the window cache).
TEST_F(LlamaCppPlanTest, SlidingWindowLayers) {
  testing::Hparams h;
  h.arch = "gemma3";
  h.n_layer = 12, h.n_embd = 1152, h.n_head = 4, h.n_head_kv = 1, h.head_k = 256;
  h.head_v = 256, h.n_ff = 6912, h.n_vocab = 262144, h.n_ctx_train = 32768, h.n_swa = 512;
  h.tied = true, h.layer_type = Dtype::kQ8_0, h.embd_type = Dtype::kQ8_0;
  const Inventory inv = Model(h, "gemma3.gguf");
  LlamaCppSettings s;
  s.program = Program::kCli;
  s.max_model_len = 8192;
  auto p = Plan(inv, s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->swa_cells, 1024u);
  const uint64_t row = 256 * 2 * 2;  // K and V, one head of 256, f16
  EXPECT_EQ(p->devices[0].kv, (10 * 1024u + 2 * 8192u) * row);
  // Tied: the output layer's copy of token_embd is on the GPU too.
  EXPECT_EQ(p->host.model, 262144u * 1152 / 32 * 34);
  s.swa_full = true;
  auto full = Plan(inv, s);
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->devices[0].kv, 12 * 8192u * row);
  s.swa_full = false;
  s.version = "b4879";
  auto old = Plan(inv, s);
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(old->devices[0].kv, full->devices[0].kv);
}

// --cpu-moe and --n-cpu-moe keep expert tensors on the CPU; -ot does the same by pattern.
TEST_F(LlamaCppPlanTest, ExpertsToTheCpu) {
  const Inventory inv = Model(Qwen35Moe(), "qwen35moe.gguf");
  LlamaCppSettings s;
  s.max_model_len = 8192;
  auto all = Plan(inv, s);
  s.cpu_moe = true;
  auto cpu = Plan(inv, s);
  ASSERT_TRUE(all.ok() && cpu.ok());
  // gate, up and down of 256 experts x 512 x 2048 in Q4_K, 40 layers.
  const uint64_t experts = uint64_t{40} * 3 * 256 * 512 * 2048 / 256 * 144;
  EXPECT_EQ(all->devices[0].model - cpu->devices[0].model, experts);
  s.cpu_moe = false;
  s.n_cpu_moe = 10;
  auto ten = Plan(inv, s);
  ASSERT_TRUE(ten.ok());
  EXPECT_EQ(all->devices[0].model - ten->devices[0].model, experts / 4);
  s.n_cpu_moe = 0;
  s.overrides = {{"blk\\.[0-9]\\.ffn_.*_exps", "CPU"}};
  auto ot = Plan(inv, s);
  ASSERT_TRUE(ot.ok());
  EXPECT_EQ(ot->devices[0].model, ten->devices[0].model);
  s.overrides = {{"blk\\.(", "CPU"}};
  EXPECT_FALSE(Plan(inv, s).ok());
  s.overrides = {{"exps", "CUDA7"}};
  EXPECT_FALSE(Plan(inv, s).ok());
}

// llama.cpp reads a number flag with std::stoi: `-c 32k` would run with 32 tokens, so the
// user's line is refused saying so; plain numbers, and -ngl's words, are read as before.
TEST(LlamaCppCommandTest, RefusesNumbersWithATail) {
  auto c = ReadLlamaCppCommand({"llama-server", "-m", "x.gguf", "-c", "32k"});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "--ctx-size 32k: llama.cpp reads only the leading digits (std::stoi), so it would "
            "run with 32; write the whole number");
  EXPECT_FALSE(ReadLlamaCppCommand({"llama-server", "-m", "x.gguf", "-np=4x"}).ok());
  EXPECT_TRUE(ReadLlamaCppCommand({"llama-server", "-m", "x.gguf", "-c", "32768"}).ok());
  EXPECT_TRUE(ReadLlamaCppCommand({"llama-server", "-m", "x.gguf", "-ngl", "all"}).ok());
  EXPECT_TRUE(ReadLlamaCppCommand({"llama-server", "-m", "x.gguf", "-ngl", "-1"}).ok());
}

// `-ub 0` is the logical batch, not the default 512 (llama-context.cpp: n_ubatch =
// min(n_batch, n_ubatch == 0 ? n_batch : n_ubatch)); the command writes it back as -ub 0.
TEST_F(LlamaCppPlanTest, UbatchZeroIsTheBatch) {
  auto cmd = ReadLlamaCppCommand({"llama-server", "-m", "x.gguf", "-c", "8192", "-ub", "0"});
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  auto s = ReadFlags(cmd->flags, ToLlamaCppSettings(cmd->settings));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->n_ubatch, kUbatchAsBatch);
  const Inventory inv = Llama3();
  auto zero = Plan(inv, *s);
  LlamaCppSettings b = *s;
  b.n_ubatch = 2048;
  auto batch = Plan(inv, b);
  b.n_ubatch = 0;
  auto dflt = Plan(inv, b);
  ASSERT_TRUE(zero.ok() && batch.ok() && dflt.ok());
  EXPECT_EQ(zero->devices[0].compute, batch->devices[0].compute);
  EXPECT_GT(zero->devices[0].compute, dflt->devices[0].compute);
  EXPECT_NE(zero->command.find(" -ub 0"), std::string::npos) << zero->command;
}

// The printed command keeps what the plan does not read, as given: --port and its value, a
// flag vramfit does not know with its value, and an environment assignment.
TEST_F(LlamaCppPlanTest, PrintedCommandKeepsFlagsItDoesNotRead) {
  auto cmd = ReadLlamaCppCommand({"LLAMA_CACHE=/models", "llama-server", "-m", "x.gguf", "-c",
                                  "8192", "--port", "8081", "--some-new-flag", "7", "--jinja"});
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  auto s = ReadFlags(cmd->flags, ToLlamaCppSettings(cmd->settings));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto p = Plan(Llama3(), *s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->command.rfind("LLAMA_CACHE=/models llama-server -m ", 0), 0u) << p->command;
  EXPECT_NE(p->command.find(" --port 8081"), std::string::npos) << p->command;
  EXPECT_NE(p->command.find(" --some-new-flag 7"), std::string::npos) << p->command;
  EXPECT_NE(p->command.find(" --jinja"), std::string::npos) << p->command;
}

TEST(LlamaCppCommandTest, ReadsLlamaServerLines) {
  const std::vector<std::string> argv = {
      "CUDA_VISIBLE_DEVICES=0,1", "/opt/llama.cpp/build/bin/llama-server", "-m", "x.gguf",
      "-ngl", "99", "-c", "32000", "-fa", "on", "-ctk", "q8_0", "--n-cpu-moe", "3", "--jinja",
      "--port", "8080", "-ot", "exps=CPU,attn=CUDA1", "-t", "8", "--no-such-flag", "3"};
  ASSERT_TRUE(IsLlamaCppCommand(argv));
  auto cmd = ReadLlamaCppCommand(argv);
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  EXPECT_EQ(cmd->model, "x.gguf");
  auto s = ReadFlags(cmd->flags, ToLlamaCppSettings(cmd->settings));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->pipeline_parallel_size, 2);
  EXPECT_EQ(s->n_gpu_layers, 99);
  EXPECT_EQ(s->max_model_len, 32000);
  EXPECT_EQ(s->flash_attn, "on");
  EXPECT_EQ(s->kv_cache_dtype, "q8_0");
  EXPECT_EQ(s->n_cpu_moe, 3);
  ASSERT_EQ(s->overrides.size(), 2u);
  EXPECT_EQ(s->overrides[1].second, "CUDA1");
  // Server, sampling and thread flags change no device memory: named once each as read.
  EXPECT_EQ(cmd->unmodelled_flags, (std::vector<std::string>{"--no-such-flag 3"}));
  EXPECT_EQ(cmd->no_memory_flags, (std::vector<std::string>{"--jinja", "--port", "-t"}));
  EXPECT_TRUE(IsLlamaCppCommand({"llama-cli", "-m", "a.gguf"}));
  EXPECT_FALSE(IsLlamaCppCommand({"vllm", "serve", "a"}));
  // A prompt, and llama-cli's conversation switches, hold no device memory of their own.
  auto chat = ReadLlamaCppCommand({"llama-cli", "-m", "a.gguf", "-p", "hello world", "-n", "128",
                                   "-cnv", "-sys", "be brief", "--color", "-f", "prompt.txt"});
  ASSERT_TRUE(chat.ok());
  EXPECT_TRUE(chat->unmodelled_flags.empty()) << chat->unmodelled_flags.front();
  // Host memory only: --mlock pins the model's pages, --cache-ram sizes the RAM prompt cache.
  auto host = ReadLlamaCppCommand({"llama-server", "-m", "a.gguf", "--mlock", "-cram", "8192"});
  ASSERT_TRUE(host.ok());
  EXPECT_TRUE(host->unmodelled_flags.empty()) << host->unmodelled_flags.front();
  EXPECT_EQ(host->no_memory_flags, (std::vector<std::string>{"--mlock", "-cram"}));
  auto cli = ReadLlamaCppCommand({"llama-cli", "-m", "a.gguf", "-fa", "off"});
  ASSERT_TRUE(cli.ok());
  EXPECT_EQ(ToLlamaCppSettings(cli->settings).program, Program::kCli);
  EXPECT_FALSE(ReadLlamaCppCommand({"llama-server", "-c", "4096"}).ok());
  // -hf REPO with -hff FILE, in either order, is the Hub id REPO:FILE.
  using Words = std::vector<std::string>;
  for (const Words& words : {Words{"llama-server", "-hf", "o/r", "-hff", "x.gguf"},
                             Words{"llama-server", "--hf-file", "x.gguf", "--hf-repo", "o/r"}}) {
    auto hf = ReadLlamaCppCommand(words);
    ASSERT_TRUE(hf.ok()) << hf.status().ToString();
    EXPECT_EQ(hf->model, "o/r:x.gguf");
    EXPECT_TRUE(hf->unmodelled_flags.empty());
  }
  // Newer builds' -ngl all / auto: every layer, as the modelled build's default.
  for (const char* n : {"all", "auto"}) {
    auto all = ReadLlamaCppCommand({"llama-server", "-m", "a.gguf", "-ngl", n});
    ASSERT_TRUE(all.ok());
    auto flags = ReadFlags(all->flags, ToLlamaCppSettings(all->settings));
    ASSERT_TRUE(flags.ok()) << flags.status().ToString();
    EXPECT_EQ(flags->n_gpu_layers, -1);
  }
  EXPECT_FALSE(ReadLlamaCppCommand({"llama-server", "-m"}).ok());
  auto bad = ReadFlags({{"--ctx-size", "lots"}}, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--ctx-size"), std::string::npos);
  EXPECT_FALSE(ReadFlags({{"--override-tensor", "noequals"}}, {}).ok());
  EXPECT_FALSE(ReadFlags({{"--tensor-split", "1,-1"}}, {}).ok());
}

// The plan's command reads back to the same plan.
TEST_F(LlamaCppPlanTest, CommandRoundTrips) {
  const Inventory inv = Llama3();
  LlamaCppSettings s;
  s.max_model_len = 16384;
  s.n_gpu_layers = 20;
  s.kv_cache_dtype = "q8_0";
  s.max_num_seqs = 2;
  s.kv_unified = 0;
  s.pipeline_parallel_size = 2;
  auto p = Plan(inv, s);
  ASSERT_TRUE(p.ok());
  std::vector<std::string> argv;
  std::string word;
  for (char c : p->command + " ") {
    if (c == ' ') {
      if (!word.empty()) argv.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  auto cmd = ReadLlamaCppCommand(argv);
  ASSERT_TRUE(cmd.ok()) << p->command;
  auto back = ReadFlags(cmd->flags, ToLlamaCppSettings(cmd->settings));
  ASSERT_TRUE(back.ok());
  auto again = Plan(inv, *back);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->command, p->command);
  EXPECT_EQ(again->devices[1].total(), p->devices[1].total());
}

// The row: safetensors refused with the way to a GGUF file; a plan that does not load gets
// -ngl (and, for a MoE model, --n-cpu-moe) remedies; a long context gets the longest -c.
TEST_F(LlamaCppPlanTest, EngineRowRefusesAndRemedies) {
  const Engine& e = LlamaCppEngine();
  Inventory st;
  st.files = {"model.safetensors"};
  st.has_spec = true;
  auto refused = e.prepare(st);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("GGUF"), std::string::npos);
  EXPECT_FALSE(e.check_version("latest").ok());
  EXPECT_TRUE(e.check_version("b6699").ok());

  const Inventory inv = Model(Qwen35Moe(), "qwen35moe.gguf");
  auto model = e.prepare(inv);
  ASSERT_TRUE(model.ok());
  GpuSpec small = CustomGpu(8ull << 30);
  LlamaCppSettings s;
  s.max_model_len = 8192;
  s.fit = 0;  // --fit off: the settings as given, and the remedies --fit would choose
  auto plan = (*model)->MakePlan(small, ToEngineSettings(s));
  ASSERT_TRUE(plan.ok());
  EXPECT_FALSE(plan->fits);
  EXPECT_EQ(plan->failure_stage, Stage::kLoad);
  auto remedies = (*model)->Remedies(small, ToEngineSettings(s), *plan);
  ASSERT_EQ(remedies.size(), 2u);
  EXPECT_EQ(remedies[0].change.rfind("--n-cpu-moe ", 0), 0u);
  EXPECT_EQ(remedies[1].change.rfind("-ngl ", 0), 0u);
  for (const Remedy& r : remedies) {
    auto p = (*model)->MakePlan(small, r.settings);
    ASSERT_TRUE(p.ok());
    EXPECT_TRUE(p->fits) << r.change;
  }
  // A context too long for the KV cache: the plan says the longest that fits.
  s.max_model_len = 262144;
  s.max_num_seqs = 1;
  auto big = PlanLlamaCpp(inv, *FindGpu("h100"), s);
  ASSERT_TRUE(big.ok());
  auto via_row = (*model)->MakePlan(CustomGpu(24ull << 30), ToEngineSettings(s));
  ASSERT_TRUE(via_row.ok());
  if (!via_row->fits && via_row->failure_stage == Stage::kKvCache) {
    EXPECT_GT(via_row->estimated_max_model_len, 0);
    EXPECT_EQ(via_row->estimated_max_model_len % kCtxPad, 0);
  }
}

}  // namespace
}  // namespace vramfit::llamacpp

namespace vramfit::llamacpp {
namespace {

// The modelled build reads the word after -fa as its value: a bare -fa before another flag,
// or at the end, stops llama-server, and so does a word that is not on, off or auto. Builds
// before the on|off|auto change read a bare -fa as on, and default to off (Rules).
TEST(LlamaCppCommandTest, FlashAttnTakesTheNextWordAsItsValue) {
  auto bare = ReadLlamaCppCommand({"llama-server", "-m", "x.gguf", "-fa", "-ctk", "q8_0"});
  ASSERT_TRUE(bare.ok()) << bare.status().ToString();
  EXPECT_EQ(bare->flags.front(), (std::pair<std::string, std::string>{"--flash-attn", ""}));
  auto refused = ReadFlags(bare->flags, LlamaCppSettings{});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("-fa (--flash-attn) needs a value: on, off or "
                                            "auto (llama.cpp from about b6325"),
            std::string::npos) << refused.status().message();
  LlamaCppSettings old;
  old.version = "b6194";
  auto on = ReadFlags(bare->flags, old);
  ASSERT_TRUE(on.ok()) << on.status().ToString();
  EXPECT_EQ(on->flash_attn, "on");
  EXPECT_EQ(on->kv_cache_dtype, "q8_0");
  EXPECT_TRUE(CommandLine(Inventory{}, *on).ends_with(" -ctk q8_0 -fa"))
      << CommandLine(Inventory{}, *on);
  EXPECT_FALSE(ReadFlags(bare->flags, [] {
                 LlamaCppSettings s;
                 s.version = "b6325";
                 return s;
               }()).ok());
  auto typo = ReadLlamaCppCommand({"llama-server", "-m", "x.gguf", "-fa", "onn"});
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("-fa onn: expected on, off or auto"), std::string::npos)
      << typo.status().message();
  auto last = ReadLlamaCppCommand({"llama-server", "-m", "x.gguf", "--flash-attn"});
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  EXPECT_FALSE(ReadFlags(last->flags, LlamaCppSettings{}).ok());
  for (const char* v : {"on", "off", "auto"}) {
    auto ok = ReadLlamaCppCommand({"llama-server", "-m", "x.gguf", "-fa", v, "-c", "4096"});
    ASSERT_TRUE(ok.ok()) << v << ": " << ok.status().ToString();
    EXPECT_EQ(ok->flags.front(), (std::pair<std::string, std::string>{"--flash-attn", v}));
  }
  EXPECT_TRUE(ReadLlamaCppCommand({"llama-server", "-m", "x.gguf", "--flash-attn=off"}).ok());
}

}  // namespace
}  // namespace vramfit::llamacpp

namespace vramfit::llamacpp {
namespace {

// LLAMA_ARG_* variables are flags read before the command line (common/arg.cpp,
// common_params_parse_ex), whose own flags win; a switch's counts when truthy.
TEST(LlamaCppCommandTest, EnvironmentFlagsGoBeforeTheCommandLine) {
  auto cmd = ReadLlamaCppCommand({"LLAMA_ARG_CTX_SIZE=32768", "LLAMA_ARG_MODEL=m.gguf",
                                  "LLAMA_ARG_KV_UNIFIED=0", "LLAMA_ARG_SWA_FULL=true",
                                  "LLAMA_ARG_N_GPU_LAYERS=20", "llama-server", "-c", "8192"});
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  EXPECT_EQ(cmd->model, "m.gguf");
  EXPECT_TRUE(cmd->unmodelled_env.empty());
  auto s = ReadFlags(cmd->flags, ToLlamaCppSettings(cmd->settings));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->max_model_len, 8192);
  EXPECT_EQ(s->n_gpu_layers, 20);
  EXPECT_TRUE(s->swa_full);
  EXPECT_EQ(s->kv_unified, -1);
  auto bad = ReadLlamaCppCommand({"LLAMA_ARG_CTX_SIZE=32k", "llama-server", "-m", "m.gguf"});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().message().ends_with("(from LLAMA_ARG_CTX_SIZE=32k)"))
      << bad.status().message();
  auto other = ReadLlamaCppCommand({"LLAMA_ARG_THREADS=8", "llama-server", "-m", "m.gguf"});
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->unmodelled_env, std::vector<std::string>{"LLAMA_ARG_THREADS=8"});
}

// The printed command keeps the model's form: a Hub repository as -hf, a file as -m (also a
// Windows path with a drive letter).
TEST(LlamaCppCommandLine, EchoesAHubRepositoryAsHf) {
  Inventory hub;
  hub.model = "unsloth/Qwen3-30B-A3B-GGUF:Q4_K_M";
  EXPECT_NE(CommandLine(hub, LlamaCppSettings{}).find(" -hf unsloth/Qwen3-30B-A3B-GGUF:Q4_K_M"),
            std::string::npos);
  Inventory file;
  file.model = "/models/qwen3-8b-q4_k_m.gguf";
  EXPECT_NE(CommandLine(file, LlamaCppSettings{}).find(" -m /models/qwen3-8b-q4_k_m.gguf"),
            std::string::npos);
  file.model = "C:/models/qwen3-8b-q4_k_m.gguf";
  EXPECT_NE(CommandLine(file, LlamaCppSettings{}).find(" -m C:/models/"), std::string::npos);
}

}  // namespace
}  // namespace vramfit::llamacpp
