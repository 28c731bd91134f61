// Deploy scripts read through the engine table: launch prefixes, environment, containers and
// the GPUs they make visible; an engine command that uses an unset variable is refused with
// file:line.
#include "vramfit/script.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vramfit {
namespace {

ScriptRead Read(std::string_view text, ScriptOptions options = {}) {
  auto r = ReadDeployScript(text, "deploy.sh", options);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : ScriptRead{};
}

std::string Error(std::string_view text) {
  auto r = ReadDeployScript(text, "deploy.sh", {});
  return r.ok() ? std::string() : r.status().message();
}

using Argv = std::vector<std::string>;

TEST(DeployScript, LaunchPrefixesAndVariables) {
  const ScriptRead r = Read(
      "#!/bin/bash\n"
      "MODEL=/srv/qwen\n"
      "mkdir -p $LOGS\n"  // not an engine command: its unset variable does not matter
      "nohup env CUDA_VISIBLE_DEVICES=0,1 vllm serve $MODEL \\\n"
      "  --tensor-parallel-size 2 > log 2>&1 &\n"
      "echo started\n");
  ASSERT_EQ(r.invocations.size(), 1u);
  const ScriptInvocation& inv = r.invocations[0];
  EXPECT_EQ(inv.where, "deploy.sh:4");
  EXPECT_EQ(inv.engine->name, "vllm");
  EXPECT_EQ(inv.argv, (Argv{"CUDA_VISIBLE_DEVICES=0,1", "vllm", "serve", "/srv/qwen",
                            "--tensor-parallel-size", "2"}));
  EXPECT_EQ(inv.gpus_visible, 2);
  EXPECT_EQ(inv.gpus_from, "CUDA_VISIBLE_DEVICES=0,1");
}

// uv's runners and `docker exec` into a running container are launch prefixes too.
TEST(DeployScript, UvRunAndDockerExecAreLaunchers) {
  const ScriptRead r = Read(
      "uv run --with vllm --frozen vllm serve a --max-model-len 8192\n"
      "uvx --from 'sglang[all]' python -m sglang.launch_server --model-path b\n"
      "docker exec -it -e X=1 ollama ollama run c.gguf\n");
  ASSERT_EQ(r.invocations.size(), 3u);
  EXPECT_EQ(r.invocations[0].argv, (Argv{"vllm", "serve", "a", "--max-model-len", "8192"}));
  EXPECT_EQ(r.invocations[1].engine->name, "sglang");
  EXPECT_EQ(r.invocations[2].argv, (Argv{"ollama", "run", "c.gguf"}));
  EXPECT_TRUE(Read("uv pip install vllm\ndocker exec ollama ls\n").invocations.empty());
}

TEST(DeployScript, ExportedVariablesReachTheCommand) {
  const ScriptRead r = Read("export CUDA_VISIBLE_DEVICES=3\nexec python3 -m "
                            "vllm.entrypoints.openai.api_server --model m\n");
  ASSERT_EQ(r.invocations.size(), 1u);
  EXPECT_EQ(r.invocations[0].argv.front(), "CUDA_VISIBLE_DEVICES=3");
  EXPECT_EQ(r.invocations[0].gpus_visible, 1);
}

TEST(DeployScript, EveryEngineCommandIsOneInvocation) {
  const ScriptRead r = Read("vllm serve a\nfor x in 1; do vllm serve b; done\n");
  ASSERT_EQ(r.invocations.size(), 2u);
  EXPECT_EQ(r.invocations[1].where, "deploy.sh:2");
  EXPECT_TRUE(Read("echo vllm serve\nls\n").invocations.empty());
}

TEST(DeployScript, ContainersRunTheImagesEntrypoint) {
  const ScriptRead r = Read(
      "docker run --rm -it --gpus '\"device=0,1\"' -e HF_TOKEN=x -p 8000:8000 \\\n"
      "  --ipc=host -v ~/.cache:/root/.cache vllm/vllm-openai:v0.10.1 \\\n"
      "  --model Qwen/Qwen3-8B -tp 2\n"
      "podman run --device nvidia.com/gpu=all docker.io/vllm/vllm-openai --model m\n");
  ASSERT_EQ(r.invocations.size(), 2u);
  EXPECT_EQ(r.invocations[0].argv, (Argv{"HF_TOKEN=x", "vllm", "serve", "--model",
                                         "Qwen/Qwen3-8B", "-tp", "2"}));
  EXPECT_EQ(r.invocations[0].version, "0.10.1");
  EXPECT_EQ(r.invocations[0].image, "vllm/vllm-openai:v0.10.1");
  EXPECT_EQ(r.invocations[0].gpus_visible, 2);
  EXPECT_EQ(r.invocations[1].version, "");
  EXPECT_EQ(r.invocations[1].gpus_visible, -1);
  // vLLM's image installs FlashInfer beside the engine: its install flag, for the caller to read
  // after the user's own flags were checked, on every tag and registry host.
  EXPECT_EQ(r.invocations[0].install_flags, (Argv{"--flashinfer-installed"}));
  EXPECT_EQ(r.invocations[1].install_flags, (Argv{"--flashinfer-installed"}));
  // llama.cpp's images by tag: `server*` run llama-server, `light*` llama-cli, `full*` a
  // script (the command after the image, not an engine's).
  const ScriptRead l = Read(
      "docker run --gpus all ghcr.io/ggml-org/llama.cpp:server-cuda -m /m/x.gguf -ngl 99\n"
      "docker run --gpus all ghcr.io/ggerganov/llama.cpp:light-cuda -m /m/x.gguf -p hi\n"
      "docker run --gpus all ghcr.io/ggml-org/llama.cpp:full-cuda --run -m /m/x.gguf\n");
  ASSERT_EQ(l.invocations.size(), 2u);
  EXPECT_EQ(l.invocations[0].argv, (Argv{"llama-server", "-m", "/m/x.gguf", "-ngl", "99"}));
  EXPECT_EQ(l.invocations[0].version, "");
  EXPECT_EQ(l.invocations[1].argv, (Argv{"llama-cli", "-m", "/m/x.gguf", "-p", "hi"}));
  // Another image is not an engine's.
  EXPECT_TRUE(Read("docker run -d nginx:latest\n").invocations.empty());
  EXPECT_TRUE(Read("docker run -d nginx:latest nginx -g 'daemon off;'\n").invocations.empty());
}

TEST(DeployScript, ContainersRunTheEngineCommandWrittenAfterTheImage) {
  const ScriptRead r = Read(
      "docker run --gpus all --shm-size 32g -p 30000:30000 -e HF_TOKEN=x \\\n"
      "  lmsysorg/sglang:latest \\\n"
      "  python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp 2\n");
  ASSERT_EQ(r.invocations.size(), 1u);
  EXPECT_EQ(r.invocations[0].argv, (Argv{"HF_TOKEN=x", "python3", "-m", "sglang.launch_server",
                                         "--model-path", "Qwen/Qwen3-8B", "--tp", "2"}));
  EXPECT_EQ(r.invocations[0].engine->name, "sglang");
  EXPECT_TRUE(r.invocations[0].install_flags.empty());
  EXPECT_EQ(r.invocations[0].image, "lmsysorg/sglang:latest");
  EXPECT_EQ(r.invocations[0].version, "");
}

TEST(DeployScript, UnsetVariableOfAnEngineCommandNamesFileAndLine) {
  EXPECT_EQ(Error("P=1\nvllm serve \\\n  $MODEL_PATH\n"),
            "deploy.sh:3: $MODEL_PATH is not set, in the vLLM command of line 2 (set it in the "
            "script, or give its value with --env FILE)");
  EXPECT_EQ(Error("D=$(ls)\nvllm serve $D\n").rfind("deploy.sh:1: $(...) is a command", 0), 0u);
  ScriptOptions env;
  env.environment = {{"MODEL_PATH", "/m"}};
  EXPECT_EQ(Read("vllm serve $MODEL_PATH\n", env).invocations[0].argv.back(), "/m");
}

// A secret the checker is not given, in a flag that changes no memory, does not stop the
// check: it is said, and the command is planned without it. Anywhere else it still does.
TEST(DeployScript, UnsetVariableInAFlagWithNoMemoryEffectIsSaid) {
  const ScriptRead r = Read(
      "vllm serve m --max-model-len 8192 --api-key \"$VLLM_API_KEY\" --port=$PORT\n"
      "python -m sglang.launch_server --model-path m --api-key $KEY --port 1\n");
  ASSERT_EQ(r.invocations.size(), 2u);
  // The unquoted value that vanished is an empty word, not the next flag.
  EXPECT_EQ(r.invocations[1].argv, (Argv{"python", "-m", "sglang.launch_server", "--model-path",
                                         "m", "--api-key", "", "--port", "1"}));
  ASSERT_EQ(r.notes.size(), 3u);
  EXPECT_EQ(r.notes[0], "deploy.sh:1: $VLLM_API_KEY is not set, in --api-key, which has no "
                        "memory effect: checked without it");
  EXPECT_EQ(r.notes[1].rfind("deploy.sh:1: $PORT is not set, in --port,", 0), 0u) << r.notes[1];
  EXPECT_EQ(r.notes[2].rfind("deploy.sh:2: $KEY is not set, in --api-key,", 0), 0u);
  EXPECT_EQ(Error("vllm serve m --max-model-len $LEN --api-key k\n"),
            "deploy.sh:1: $LEN is not set, in the vLLM command of line 1 (set it in the script, "
            "or give its value with --env FILE)");
}

TEST(DeployScript, EnvironmentFile) {
  auto vars = ReadEnvironmentFile("# models\nMODEL=/m\nexport PORT=\"80\"\n", "prod.env");
  ASSERT_TRUE(vars.ok());
  EXPECT_EQ(*vars, (std::vector<std::pair<std::string, std::string>>{{"MODEL", "/m"},
                                                                      {"PORT", "80"}}));
  EXPECT_EQ(ReadEnvironmentFile("A='x\n", "prod.env").status().message(),
            "prod.env:1: unterminated ' (opened here)");
}

}  // namespace
}  // namespace vramfit
