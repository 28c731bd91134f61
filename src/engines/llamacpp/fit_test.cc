// llama.cpp's --fit in the plan: an unset context shrinks until the device keeps its target, a
// user's -c stays and the layers move instead, a MoE model's experts leave first, --fit off
// and builds before --fit take the settings as given, -fitt / -fitc change the target and the
// floor, and a user's -ngl makes --fit give up with its own message.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "core/units.h"
#include "engines/llamacpp/command.h"
#include "engines/llamacpp/llamacpp.h"
#include "engines/llamacpp/test_models.h"
#include "testutil/hollow.h"
#include "vramfit/inspect.h"

namespace vramfit::llamacpp {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

class LlamaCppFitTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = vramfit::testing::MakeTempDir("llamacpp-fit"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Inventory Model(const testing::Hparams& h, const std::string& name) {
    testing::WriteModel(h, dir_ + "/" + name);
    auto inv = InspectModel(dir_ + "/" + name, {});
    EXPECT_TRUE(inv.ok()) << inv.status().ToString();
    return inv.ok() ? std::move(*inv) : Inventory{};
  }
  // A Llama 3.1 8B shape at Q4_K: 128 KiB of f16 KV per token, 16 GiB at its 131,072.
  Inventory Dense() {
    testing::Hparams h;
    h.n_layer = 32, h.n_embd = 4096, h.n_head = 32, h.n_head_kv = 8, h.head_k = 128;
    h.head_v = 128, h.n_ff = 14336, h.n_vocab = 128256, h.n_ctx_train = 131072;
    return Model(h, "dense-128k.gguf");
  }
  Inventory Moe() {
    testing::Hparams h;
    h.arch = "qwen3moe";
    h.n_layer = 48, h.n_embd = 2048, h.n_head = 32, h.n_head_kv = 4, h.head_k = 128;
    h.head_v = 128, h.n_ff = 6144, h.n_vocab = 151936, h.n_ctx_train = 40960;
    h.n_expert = 128, h.n_expert_used = 8, h.n_ff_exp = 768;
    return Model(h, "moe.gguf");
  }
  // What the device keeps over the plan's buffers (the projection --fit makes).
  static int64_t Left(const LlamaCppPlan& p) {
    const DeviceBuffers& d = p.devices[0];
    return static_cast<int64_t>(p.gpus[0].budget_bytes) -
           static_cast<int64_t>(d.model + d.kv + d.state + d.compute);
  }
  static bool Noted(const LlamaCppPlan& p, const std::string& text) {
    for (const std::string& n : p.notes) {
      if (n.find(text) != std::string::npos) return true;
    }
    return false;
  }

  std::string dir_;
  const GpuSpec gpu16_ = CustomGpu(16ull << 30);
};

// The default context (n_ctx_train) does not fit 16 GiB; --fit (on in the modelled build)
// scales it down to leave 1,024 MiB, and the command carries the chosen -c.
TEST_F(LlamaCppFitTest, UnsetContextIsReducedToLeaveTheTarget) {
  const Inventory inv = Dense();
  LlamaCppSettings off;
  off.fit = 0;
  auto as_given = PlanLlamaCpp(inv, gpu16_, off);
  ASSERT_TRUE(as_given.ok());
  EXPECT_FALSE(as_given->fits);
  EXPECT_EQ(as_given->n_ctx, 131072);
  EXPECT_FALSE(Noted(*as_given, "--fit"));

  auto p = PlanLlamaCpp(inv, gpu16_, LlamaCppSettings{});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->fits) << p->failure_message;
  EXPECT_LT(p->n_ctx, 131072);
  EXPECT_GT(p->n_ctx, 65536);
  // llama.cpp's step: n_ctx_train - ceil(deficit / (context bytes / n_ctx_train)).
  const DeviceBuffers& full = as_given->devices[0];
  const int64_t per_token = static_cast<int64_t>(full.kv + full.state) / 131072;
  const int64_t deficit = 1024 * kMiB - Left(*as_given);
  const int64_t chosen = 131072 - (deficit + per_token - 1) / per_token;
  EXPECT_EQ(p->resolved.max_model_len, (chosen + 255) / 256 * 256);
  EXPECT_TRUE(Noted(*p, fmt::format("--fit: context reduced from 131,072 to {}",
                                    core::GroupDigits(static_cast<uint64_t>(chosen)))))
      << p->notes[0];
  EXPECT_NE(p->command.find(fmt::format(" -c {}", chosen)), std::string::npos) << p->command;
  EXPECT_TRUE(Noted(*p, "to leave 1,024 MiB on CUDA0"));
  // The context memory is linear here: what is left is the target, less the padding to 256
  // tokens (at most 256 x 128 KiB).
  EXPECT_LE(Left(*p), 1024 * kMiB);
  EXPECT_GE(Left(*p), 1024 * kMiB - 32 * kMiB);
  // The command says the chosen context, and reads back to the same plan.
  EXPECT_NE(p->command.find(" -c "), std::string::npos) << p->command;
  off.max_model_len = p->n_ctx;
  auto same = PlanLlamaCpp(inv, gpu16_, off);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->devices[0].total(), p->devices[0].total());
}

// A context the user set is kept; the layers leave the GPU instead (-ngl N).
TEST_F(LlamaCppFitTest, UserContextIsKeptAndLayersMove) {
  const Inventory inv = Dense();
  LlamaCppSettings s;
  s.max_model_len = 131072;
  auto p = PlanLlamaCpp(inv, gpu16_, s);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->fits) << p->failure_message;
  EXPECT_EQ(p->n_ctx, 131072);
  EXPECT_TRUE(Noted(*p, "--fit: context size set by user to 131,072: not reduced"));
  EXPECT_TRUE(Noted(*p, "--fit: -ngl "));
  const int64_t ngl = ToLlamaCppSettings(p->resolved).n_gpu_layers;
  EXPECT_GT(ngl, 0);
  EXPECT_LT(ngl, 33);
  EXPECT_NE(p->command.find(fmt::format("-ngl {}", ngl)), std::string::npos) << p->command;
  EXPECT_GE(Left(*p), 1024 * kMiB);
  // One layer more would not leave the target.
  s.fit = 0;
  s.n_gpu_layers = ngl + 1;
  auto more = PlanLlamaCpp(inv, gpu16_, s);
  ASSERT_TRUE(more.ok());
  EXPECT_LT(Left(*more), 1024 * kMiB);
}

// Two GPUs: the layers are filled back to front, each GPU as full as its target allows, and
// the command carries -ngl and the -ts of each GPU's count.
TEST_F(LlamaCppFitTest, SeveralGpusGetALayerSplit) {
  const Inventory inv = Dense();
  LlamaCppSettings s;
  s.max_model_len = 131072;
  s.pipeline_parallel_size = 2;
  const GpuSpec gpu = CustomGpu(10ull << 30);
  auto p = PlanLlamaCpp(inv, gpu, s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->fits) << p->failure_message;
  const LlamaCppSettings chosen = ToLlamaCppSettings(p->resolved);
  ASSERT_EQ(chosen.tensor_split.size(), 2u);
  const int64_t first = static_cast<int64_t>(chosen.tensor_split[0]);
  const int64_t last = static_cast<int64_t>(chosen.tensor_split[1]);
  EXPECT_EQ(chosen.n_gpu_layers, first + last);
  EXPECT_LT(chosen.n_gpu_layers, 33);
  EXPECT_EQ(p->devices[0].layers, first);
  EXPECT_EQ(p->devices[1].layers, last);
  EXPECT_TRUE(Noted(*p, fmt::format("-ts {},{}", first, last))) << p->notes[1];
  EXPECT_NE(p->command.find(fmt::format("-ngl {}", first + last)), std::string::npos);
  for (size_t d = 0; d < 2; ++d) {
    const DeviceBuffers& b = p->devices[d];
    EXPECT_GE(static_cast<int64_t>(p->gpus[d].budget_bytes - b.model - b.kv - b.state -
                                   b.compute), 1024 * kMiB);
  }
  // The last GPU is full: one more layer there would not leave the target.
  s.fit = 0;
  s.n_gpu_layers = first + last + 1;
  s.tensor_split = {static_cast<double>(first), static_cast<double>(last + 1)};
  auto more = PlanLlamaCpp(inv, gpu, s);
  ASSERT_TRUE(more.ok());
  const DeviceBuffers& b = more->devices[1];
  EXPECT_LT(static_cast<int64_t>(more->gpus[1].budget_bytes - b.model - b.kv - b.state -
                                 b.compute), 1024 * kMiB);
}

// A MoE model that does not fit 8 GiB: the experts of the first layers go to the CPU, as
// few as leave the target (--n-cpu-moe N); the layers and the KV stay.
TEST_F(LlamaCppFitTest, MoeExpertsMoveToTheCpu) {
  const Inventory inv = Moe();
  const GpuSpec gpu = CustomGpu(8ull << 30);
  LlamaCppSettings s;
  s.max_model_len = 8192;
  auto p = PlanLlamaCpp(inv, gpu, s);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->fits) << p->failure_message;
  const LlamaCppSettings chosen = ToLlamaCppSettings(p->resolved);
  const int64_t n = chosen.n_cpu_moe;
  EXPECT_GT(n, 0);
  EXPECT_LT(n, 48);
  EXPECT_EQ(chosen.n_gpu_layers, -1);
  EXPECT_TRUE(Noted(*p, fmt::format("--fit: experts of the first {} of 48 layers moved to the "
                                    "CPU (--n-cpu-moe {})", n, n)));
  EXPECT_NE(p->command.find(fmt::format("--n-cpu-moe {}", n)), std::string::npos);
  EXPECT_GE(Left(*p), 1024 * kMiB);
  EXPECT_GT(p->host.model, 0u);
  // llama.cpp's interpolation, from the plans of all experts on the GPU and none:
  // n = n_layer + 1 - (surplus / per_layer + 1), per_layer the experts' share of one layer.
  s.fit = 0;
  auto all = PlanLlamaCpp(inv, gpu, s);
  s.cpu_moe = true;
  auto none = PlanLlamaCpp(inv, gpu, s);
  ASSERT_TRUE(all.ok() && none.ok());
  s.cpu_moe = false;
  const auto used = [](const LlamaCppPlan& q) {
    const DeviceBuffers& d = q.devices[0];
    return static_cast<int64_t>(d.model + d.kv + d.state + d.compute);
  };
  const int64_t per_layer = (used(*all) - used(*none)) / 48;
  EXPECT_EQ(n, 48 - (Left(*none) - 1024 * kMiB) / per_layer);
  EXPECT_TRUE(Noted(*p, "interpolated at "));
  s.n_cpu_moe = n - 1;
  auto fewer = PlanLlamaCpp(inv, gpu, s);
  ASSERT_TRUE(fewer.ok());
  EXPECT_LT(Left(*fewer), 1024 * kMiB);
}

// --fit off, and a build before --fit, plan the settings as given; `--fit on` applies it to
// any build.
TEST_F(LlamaCppFitTest, OffAndOlderBuildsTakeTheSettingsAsGiven) {
  const Inventory inv = Dense();
  LlamaCppSettings s;
  s.version = "b7000";
  auto old = PlanLlamaCpp(inv, gpu16_, s);
  ASSERT_TRUE(old.ok());
  EXPECT_FALSE(old->fits);
  EXPECT_EQ(old->n_ctx, 131072);
  s.fit = 1;
  auto forced = PlanLlamaCpp(inv, gpu16_, s);
  ASSERT_TRUE(forced.ok());
  EXPECT_TRUE(forced->fits);
  EXPECT_LT(forced->n_ctx, 131072);
  EXPECT_NE(forced->command.find("--fit on"), std::string::npos);
  s.version = "b7450";
  s.fit = 0;
  auto off = PlanLlamaCpp(inv, gpu16_, s);
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->fits);
  EXPECT_NE(off->command.find("--fit off"), std::string::npos);
}

// -fitt raises the memory kept; -fitc is the floor of the context, below which the layers
// move instead.
TEST_F(LlamaCppFitTest, TargetAndMinimumContextAreRead) {
  const Inventory inv = Dense();
  auto cmd = ReadLlamaCppCommand({"llama-server", "-m", "x.gguf", "-fitt", "4096", "-fitc",
                                  "120000", "-fit", "on"});
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  const auto given = ReadFlags(cmd->flags, ToLlamaCppSettings(cmd->settings));
  ASSERT_TRUE(given.ok());
  EXPECT_EQ(given->fit, 1);
  EXPECT_EQ(given->fit_target_mib, std::vector<int64_t>{4096});
  EXPECT_EQ(given->fit_ctx, 120000);

  LlamaCppSettings s;
  s.fit_target_mib = {4096};
  auto wide = PlanLlamaCpp(inv, gpu16_, s);
  auto usual = PlanLlamaCpp(inv, gpu16_, LlamaCppSettings{});
  ASSERT_TRUE(wide.ok() && usual.ok());
  EXPECT_TRUE(wide->fits);
  EXPECT_LT(wide->n_ctx, usual->n_ctx);
  EXPECT_GE(Left(*wide), 4096 * kMiB - 32 * kMiB);
  EXPECT_TRUE(Noted(*wide, "to leave 4,096 MiB on CUDA0"));
  EXPECT_NE(wide->command.find("-fitt 4096"), std::string::npos);

  s = *given;
  auto floor = PlanLlamaCpp(inv, gpu16_, s);
  ASSERT_TRUE(floor.ok());
  EXPECT_TRUE(floor->fits) << floor->failure_message;
  EXPECT_EQ(floor->n_ctx, 120064);  // 120,000 padded to 256
  EXPECT_TRUE(Noted(*floor, "--fit: context reduced from 131,072 to 120,000"));
  EXPECT_TRUE(Noted(*floor, "--fit: -ngl "));
  EXPECT_GE(Left(*floor), 4096 * kMiB);

  EXPECT_FALSE(ReadFlags({{"--fit", "maybe"}}, LlamaCppSettings{}).ok());
  EXPECT_FALSE(ReadFlags({{"--fit-target", "1024,x"}}, LlamaCppSettings{}).ok());
  EXPECT_FALSE(ReadFlags({{"--fit-ctx", "-5"}}, LlamaCppSettings{}).ok());
  EXPECT_FALSE(ReadFlags({{"--fit-target", "99999999999"}}, LlamaCppSettings{}).ok());
  s = LlamaCppSettings{};
  s.fit_target_mib = {-1};
  EXPECT_FALSE(PlanLlamaCpp(inv, gpu16_, s).ok());
  s.fit_target_mib.clear();
  s.fit_ctx = -1;
  EXPECT_FALSE(PlanLlamaCpp(inv, gpu16_, s).ok());
}

// A user's -ngl stops --fit after the context step (llama_params_fit throws and llama.cpp
// loads what it has): the context stays at -fitc, the load fails, and the failure says why.
TEST_F(LlamaCppFitTest, NothingFitsAfterTheContextSaysWhy) {
  const Inventory inv = Dense();
  LlamaCppSettings s;
  s.n_gpu_layers = 99;
  auto p = PlanLlamaCpp(inv, CustomGpu(4ull << 30), s);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->fits);
  EXPECT_EQ(p->n_ctx, 4096);
  EXPECT_EQ(p->failure_stage, Stage::kLoad);
  EXPECT_EQ(p->failure_message.rfind("llama_params_fit: failed to fit params to free device "
                                     "memory: n_gpu_layers already set by user to 99, abort; "
                                     "then ", 0), 0u) << p->failure_message;
  EXPECT_TRUE(Noted(*p, "--fit: context reduced from 131,072 to 4,096"));
  // -ngl 999 is llama.cpp's default, so --fit may still move the layers.
  s.n_gpu_layers = 999;
  auto dflt = PlanLlamaCpp(inv, CustomGpu(4ull << 30), s);
  ASSERT_TRUE(dflt.ok());
  EXPECT_TRUE(dflt->fits) << dflt->failure_message;
  EXPECT_LT(ToLlamaCppSettings(dflt->resolved).n_gpu_layers, 33);
}

}  // namespace
}  // namespace vramfit::llamacpp
