// `vramfit inspect|plan|check|fit org/name` over a mock Hub on loopback give the same answers,
// byte for byte, as the same commands over the same files on disk, and again offline from the
// cache. The command line runs in-process (cli::Run), with HF_ENDPOINT and HF_HOME pointing at
// the mock and a temporary cache, as a user's environment would.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "commands.h"
#include "testutil/hollow.h"
#include "testutil/mock_hub.h"
#include "vramfit/catalog.h"
#include "vramfit/inventory.h"
#include "vramfit/model.h"

namespace vramfit {
namespace {

namespace fs = std::filesystem;

struct Output {
  int rc = 0;
  std::string out;
};

Output RunCli(std::vector<std::string> args) {
  ::testing::internal::CaptureStdout();
  Output o;
  o.rc = cli::Run(std::move(args));
  std::fflush(stdout);
  o.out = ::testing::internal::GetCapturedStdout();
  return o;
}

std::string ReplaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

TEST(HubCliTest, CommandsGiveTheSameAnswersOverTheHubAsLocallyAndOffline) {
  const std::string root = testing::MakeTempDir("hub-cli");
  const std::string dir = root + "/qwen3-8b-awq";
  fs::create_directories(dir);
  auto entry = FindCatalogModel("qwen3-8b-awq");
  ASSERT_TRUE(entry.ok());
  auto spec = ModelSpecFromConfigJson(entry->config_json, "config.json");
  ASSERT_TRUE(spec.ok());
  auto synth = SynthesizeTensors(*spec);
  ASSERT_TRUE(synth.ok());
  std::vector<testing::HollowTensor> tensors;
  for (const TensorInfo& t : synth->tensors) {
    tensors.push_back({t.name, t.dtype, t.shape.ToVector()});
  }
  testing::WriteHollowCheckpoint(dir, tensors, 2);
  testing::WriteText(dir + "/config.json", entry->config_json);

  testing::MockHub hub;
  hub.AddRepo("org/model", dir);
  ::setenv("HF_ENDPOINT", hub.endpoint().c_str(), 1);
  ::setenv("HF_HOME", (root + "/hf").c_str(), 1);
  ::unsetenv("HF_TOKEN");
  const std::string id = "org/model@main";
  const std::vector<std::vector<std::string>> commands = {
      {"inspect", "M", "--json", "--tensors"},
      {"inspect", "M"},
      {"plan", "M", "--gpu", "4090", "--max-model-len", "auto", "--json"},
      {"check", "--gpu", "4090", "--json", "--", "vllm", "serve", "M", "--max-model-len", "32768"},
      {"fit", "M", "--gpu", "4090", "--json"},
  };
  auto with = [](std::vector<std::string> args, const std::string& model) {
    for (auto& a : args) {
      if (a == "M") a = model;
    }
    return args;
  };
  for (const bool offline : {false, true}) {
    if (offline) {
      ::setenv("HF_HUB_OFFLINE", "1", 1);
    } else {
      ::unsetenv("HF_HUB_OFFLINE");
    }
    const uint64_t asked = hub.hub_requests;
    for (const auto& c : commands) {
      const Output local = RunCli(with(c, dir));
      const Output remote = RunCli(with(c, id));
      EXPECT_EQ(remote.rc, local.rc) << c[0];
      EXPECT_FALSE(remote.out.empty()) << c[0];
      // Commands name the repo as vLLM takes it ("org/model"); reports name what was read.
      const std::string expected =
          ReplaceAll(ReplaceAll(local.out, "serve " + dir, "serve org/model"), dir, id);
      EXPECT_EQ(remote.out, expected) << c[0] << (offline ? " offline" : "");
    }
    if (offline) EXPECT_EQ(hub.hub_requests, asked) << "an offline run asked the Hub";
  }
  ::unsetenv("HF_HUB_OFFLINE");
  ::unsetenv("HF_ENDPOINT");
  ::unsetenv("HF_HOME");
  std::error_code ec;
  fs::remove_all(root, ec);
}

}  // namespace
}  // namespace vramfit
