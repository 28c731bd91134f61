// `vramfit inspect|plan|check|fit org/name` over a mock Hub on loopback give the same answers,
// byte for byte, as the same commands over the same files on disk, and again offline from the
// cache. The command line runs in-process (cli::Run), with HF_ENDPOINT and HF_HOME pointing at
// the mock and a temporary cache, as a user's environment would.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "commands.h"
#include "testutil/gguf_writer.h"
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

// A hollow checkpoint of a catalog model's synthesized tensors in `shards` files, with its
// config.json, written into `dir`.
bool WriteCatalogCheckpoint(const std::string& id, const std::string& dir, int shards) {
  auto entry = FindCatalogModel(id);
  if (!entry.ok()) return false;
  auto spec = ModelSpecFromConfigJson(entry->config_json, "config.json");
  if (!spec.ok()) return false;
  auto synth = SynthesizeTensors(*spec);
  if (!synth.ok()) return false;
  std::vector<testing::HollowTensor> tensors;
  for (const TensorInfo& t : synth->tensors) {
    tensors.push_back({t.name, t.dtype, t.shape.ToVector()});
  }
  testing::WriteHollowCheckpoint(dir, tensors, shards);
  testing::WriteText(dir + "/config.json", entry->config_json);
  return true;
}

TEST(HubCliTest, CommandsGiveTheSameAnswersOverTheHubAsLocallyAndOffline) {
  const std::string root = testing::MakeTempDir("hub-cli");
  const std::string dir = root + "/qwen3-8b-awq";
  fs::create_directories(dir);
  ASSERT_TRUE(WriteCatalogCheckpoint("qwen3-8b-awq", dir, 2));

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

// A small Llama-shaped GGUF file (two layers, Q4_K linears) written as llama.cpp lays it out;
// `tokens` vocabulary strings make its header larger than the first fetch (1 MiB).
void WriteTinyGguf(const std::string& path, size_t tokens = 0) {
  testing::GgufWriter w;
  if (tokens > 0) w.StrArray("tokenizer.ggml.tokens", tokens);
  w.Str("general.architecture", "llama");
  w.Str("general.name", "tiny");
  w.U32("general.file_type", 15);  // MOSTLY_Q4_K_M
  w.U32("llama.block_count", 2);
  w.U32("llama.context_length", 4096);
  w.U32("llama.embedding_length", 512);
  w.U32("llama.feed_forward_length", 1024);
  w.U32("llama.attention.head_count", 8);
  w.U32("llama.attention.head_count_kv", 2);
  w.F32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.U32("llama.vocab_size", 1024);
  w.Tensor("token_embd.weight", Dtype::kQ4_K, {1024, 512});
  for (int i = 0; i < 2; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    w.Tensor(b + "attn_norm.weight", Dtype::kF32, {512});
    w.Tensor(b + "attn_q.weight", Dtype::kQ4_K, {512, 512});
    w.Tensor(b + "attn_k.weight", Dtype::kQ4_K, {128, 512});
    w.Tensor(b + "attn_v.weight", Dtype::kQ6_K, {128, 512});
    w.Tensor(b + "attn_output.weight", Dtype::kQ4_K, {512, 512});
    w.Tensor(b + "ffn_norm.weight", Dtype::kF32, {512});
    w.Tensor(b + "ffn_gate.weight", Dtype::kQ4_K, {1024, 512});
    w.Tensor(b + "ffn_up.weight", Dtype::kQ4_K, {1024, 512});
    w.Tensor(b + "ffn_down.weight", Dtype::kQ6_K, {512, 1024});
  }
  w.Tensor("output_norm.weight", Dtype::kF32, {512});
  w.Tensor("output.weight", Dtype::kQ6_K, {1024, 512});
  w.WriteHollow(path);
}

struct HubEnv {
  explicit HubEnv(const std::string& root) {
    ::setenv("HF_ENDPOINT", hub.endpoint().c_str(), 1);
    ::setenv("HF_HOME", (root + "/hf").c_str(), 1);
    ::unsetenv("HF_TOKEN");
    ::unsetenv("HF_HUB_OFFLINE");
  }
  ~HubEnv() {
    ::unsetenv("HF_HUB_OFFLINE");
    ::unsetenv("HF_ENDPOINT");
    ::unsetenv("HF_HOME");
  }
  testing::MockHub hub;
};

// "org/name:FILE.gguf" reads one GGUF file of a repo by range requests, as the same file on
// disk reads, and again offline; a repo of one GGUF model reads it without the file named; a
// repo of several says which to name.
TEST(HubCliTest, AGgufFileOfARepoReadsAsTheLocalFile) {
  const std::string root = testing::MakeTempDir("hub-gguf");
  const std::string one = root + "/one", two = root + "/two";
  fs::create_directories(one);
  fs::create_directories(two);
  WriteTinyGguf(one + "/tiny-Q4_K_M.gguf", 300'000);  // a 3.4 MB header: four range requests
  WriteTinyGguf(two + "/tiny-Q4_K_M.gguf");
  WriteTinyGguf(two + "/tiny-Q8_0.gguf");
  HubEnv env(root);
  env.hub.AddRepo("org/one-GGUF", one);
  env.hub.AddRepo("org/two-GGUF", two);
  const std::string file = one + "/tiny-Q4_K_M.gguf";
  const Output local = RunCli({"inspect", file, "--json"});
  ASSERT_EQ(local.rc, 0) << local.out;
  for (const bool offline : {false, true}) {
    if (offline) ::setenv("HF_HUB_OFFLINE", "1", 1);
    for (const std::string id : {"org/one-GGUF:tiny-Q4_K_M.gguf", "org/one-GGUF"}) {
      const Output remote = RunCli({"inspect", id, "--json"});
      EXPECT_EQ(remote.rc, 0) << id << remote.out;
      // The report names the model as given and the file read.
      const std::string expected = ReplaceAll(
          ReplaceAll(local.out, "\"model\": \"" + file, "\"model\": \"" + id),
          "\"origin\": \"" + file, "\"origin\": \"org/one-GGUF@main:tiny-Q4_K_M.gguf");
      EXPECT_EQ(remote.out, expected) << id << (offline ? " offline" : "");
    }
  }
  ::unsetenv("HF_HUB_OFFLINE");
  EXPECT_EQ(RunCli({"inspect", "org/two-GGUF:tiny-Q8_0.gguf"}).rc, 0);
  EXPECT_EQ(RunCli({"inspect", "org/two-GGUF"}).rc, 2);  // two models: name one
  EXPECT_EQ(RunCli({"inspect", "org/two-GGUF:missing.gguf"}).rc, 2);
  EXPECT_EQ(RunCli({"inspect", "org/two-GGUF:../x.gguf"}).rc, 2);
  std::error_code ec;
  fs::remove_all(root, ec);
}

// preprocessor_config.json's max_pixels sets the image the vLLM encoder profile uses, as
// --mm-processor-kwargs does; read from disk and from the Hub alike. A plan of "org/name@REV"
// prints `--revision REV` (the mock serves one commit; a branch name is printed the same way).
TEST(HubCliTest, PreprocessorConfigAndRevisionReachThePlan) {
  const std::string root = testing::MakeTempDir("hub-vl");
  const std::string dir = root + "/vl";
  fs::create_directories(dir);
  ASSERT_TRUE(WriteCatalogCheckpoint("qwen2.5-vl-3b-instruct", dir, 1));
  const std::vector<std::string> plan = {"plan", dir, "--gpu", "a100-80gb", "--json"};
  const Output base = RunCli(plan);
  ASSERT_EQ(base.rc, 0) << base.out;
  const Output kwargs = RunCli({"check", "--gpu", "a100-80gb", "--json", "--", "vllm", "serve",
                                dir, "--mm-processor-kwargs", R"({"max_pixels": 1003520})"});
  testing::WriteText(dir + "/preprocessor_config.json",
                     R"({"min_pixels": 3136, "max_pixels": 1003520, "patch_size": 14})");
  const Output small = RunCli(plan);
  ASSERT_EQ(small.rc, 0) << small.out;
  const auto peak = [](const std::string& json) {
    const size_t at = json.find("\"activation_peak_bytes\"");
    return at == std::string::npos ? std::string() : json.substr(at, 48);
  };
  EXPECT_NE(peak(small.out), "");
  EXPECT_NE(peak(small.out), peak(base.out));
  EXPECT_EQ(peak(small.out), peak(kwargs.out));
  HubEnv env(root);
  env.hub.AddRepo("org/vl", dir);
  const Output remote =
      RunCli({"plan", std::string("org/vl@") + testing::kMockCommit, "--gpu", "a100-80gb",
              "--json"});
  ASSERT_EQ(remote.rc, 0) << remote.out;
  EXPECT_EQ(peak(remote.out), peak(small.out));
  EXPECT_NE(remote.out.find("vllm serve org/vl --revision " + std::string(testing::kMockCommit)),
            std::string::npos);
  // vLLM's --revision in a checked command reads the Hub id at that revision: the same plan,
  // the flag kept as given; a revision the Hub does not have fails as vLLM's download would.
  const Output checked = RunCli({"check", "--gpu", "a100-80gb", "--json", "--", "vllm", "serve",
                                 "org/vl", "--revision", testing::kMockCommit});
  ASSERT_EQ(checked.rc, 0) << checked.out;
  EXPECT_EQ(peak(checked.out), peak(small.out));
  EXPECT_NE(checked.out.find("--revision " + std::string(testing::kMockCommit)),
            std::string::npos);
  EXPECT_EQ(checked.out.find("--revision " + std::string(testing::kMockCommit) + " --revision"),
            std::string::npos);
  EXPECT_EQ(RunCli({"check", "--gpu", "a100-80gb", "--", "vllm", "serve", "org/vl", "--revision",
                    "no-such-branch"})
                .rc,
            2);
  // SGLang's --revision likewise; a plan of org/vl@REV prints it.
  const Output sglang =
      RunCli({"check", "--gpu", "a100-80gb", "--json", "--", "python", "-m",
              "sglang.launch_server", "--model-path", "org/vl", "--revision",
              testing::kMockCommit});
  ASSERT_EQ(sglang.rc, 0) << sglang.out;
  EXPECT_NE(sglang.out.find("--revision " + std::string(testing::kMockCommit)),
            std::string::npos);
  const Output sglang_plan =
      RunCli({"plan", std::string("org/vl@") + testing::kMockCommit, "--engine", "sglang", "--gpu",
              "a100-80gb", "--json"});
  ASSERT_EQ(sglang_plan.rc, 0) << sglang_plan.out;
  EXPECT_NE(sglang_plan.out.find("--model-path org/vl --revision " +
                                 std::string(testing::kMockCommit)),
            std::string::npos);
  std::error_code ec;
  fs::remove_all(root, ec);
}

}  // namespace
}  // namespace vramfit
