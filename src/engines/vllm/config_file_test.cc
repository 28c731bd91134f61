// vLLM's `--config FILE`: the YAML file's flags as vLLM writes them into its arguments, placed
// before the command line's own flags so that those win.
#include "engines/vllm/config_file.h"

#include <gtest/gtest.h>

namespace vramfit::vllm {
namespace {

using Words = std::vector<std::string>;

TEST(ConfigFile, EachYamlFormBecomesTheFlagsVllmWrites) {
  auto words = ConfigFileFlags(
      "# served on two cards\n"
      "model: Qwen/Qwen3-8B\n"
      "tensor-parallel-size: 2\n"
      "enforce-eager: true\n"
      "enable-prefix-caching: off\n"
      "served-model-name: 'qwen'\n"
      "limit-mm-per-prompt: {\"image\": 2}\n"
      "middleware:\n"
      "  - a\n"
      "  - b\n"
      "hf-overrides:\n"
      "  max_position_embeddings: 65536\n",
      "cfg.yaml", false);
  ASSERT_TRUE(words.ok()) << words.status().message();
  EXPECT_EQ(*words, (Words{"--model", "Qwen/Qwen3-8B", "--tensor-parallel-size", "2",
                           "--enforce-eager", "--served-model-name", "qwen",
                           "--limit-mm-per-prompt", "{\"image\":2}", "--middleware", "a", "b",
                           "--hf-overrides", "{\"max_position_embeddings\":65536}"}));
  // The command line's positional model wins: the file's is left out.
  auto without = ConfigFileFlags("model: a\nmax-model-len: 8192\n", "cfg.yaml", true);
  ASSERT_TRUE(without.ok());
  EXPECT_EQ(*without, (Words{"--max-model-len", "8192"}));
}

TEST(ConfigFile, WhatIsNotReadNamesTheFileAndLine) {
  for (const char* text : {"max-model-len 8192\n", "  - orphan\n",
                           "limit-mm-per-prompt: {image: 2}\n", ":\n"}) {
    auto words = ConfigFileFlags(text, "cfg.yaml", false);
    ASSERT_FALSE(words.ok()) << text;
    EXPECT_NE(words.status().message().find("cfg.yaml:1"), std::string::npos)
        << words.status().message();
  }
  const std::string deep = "x: " + std::string(600, '[') + std::string(600, ']') + "\n";
  EXPECT_FALSE(ConfigFileFlags(deep, "cfg.yaml", false).ok());
}

TEST(ConfigFile, TheFileGoesBeforeTheCommandLinesFlags) {
  auto read = [](const std::string& path) -> Result<std::string> {
    if (path != "cfg.yaml") return Status::NotFound(path + ": cannot read the file");
    return std::string("max-model-len: 4096\nmodel: from-file\n");
  };
  auto serve = WithConfigFile({"vllm", "serve", "m", "--config", "cfg.yaml",
                               "--max-model-len", "8192"}, read);
  ASSERT_TRUE(serve.ok());
  EXPECT_EQ(*serve, (Words{"vllm", "serve", "m", "--max-model-len", "4096", "--max-model-len",
                           "8192"}));
  auto module = WithConfigFile({"python", "-m", "vllm.entrypoints.openai.api_server",
                                "--config=cfg.yaml"}, read);
  ASSERT_TRUE(module.ok());
  EXPECT_EQ(*module, (Words{"python", "-m", "vllm.entrypoints.openai.api_server",
                            "--max-model-len", "4096", "--model", "from-file"}));
  auto missing = WithConfigFile({"vllm", "serve", "m", "--config", "none.yaml"}, read);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("--config none.yaml"), std::string::npos);
  const Words plain = {"vllm", "serve", "m"};
  EXPECT_EQ(*WithConfigFile(plain, read), plain);
}

}  // namespace
}  // namespace vramfit::vllm
