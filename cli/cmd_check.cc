// `vramfit check [--gpu NAME] [--json] -- vllm serve MODEL [vLLM flags]`: reads the user's real
// vLLM command line and says whether it will start. Exit 0 fits, 1 predicted failure, 2 bad
// input. Also takes `python -m vllm.entrypoints.openai.api_server --model MODEL ...`.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <iterator>

#include "commands.h"
#include "vllm_flags.h"
#include "vramfit/advice.h"
#include "vramfit/gpu.h"
#include "vramfit/inventory.h"
#include "vramfit/report.h"

namespace vramfit::cli {

Result<GpuSpec> ResolveGpu(const std::string& name, const std::string& memory);  // cmd_plan.cc

namespace {
std::vector<std::string>& CheckCommand() {
  static std::vector<std::string> command;
  return command;
}
}  // namespace

void SetCheckCommand(std::vector<std::string> command) { CheckCommand() = std::move(command); }

std::function<int()> SetupCheck(CLI::App* app) {
  struct Flags {
    std::string gpu, gpu_memory, engine_version, other_memory;
    bool json = false;
  };
  auto f = std::make_shared<Flags>();
  app->add_option("--gpu", f->gpu, "GPU name or alias (see `vramfit gpus`)");
  app->add_option("--gpu-memory", f->gpu_memory, "GPU memory as CUDA reports it, e.g. 24GiB");
  app->add_option("--vllm-version", f->engine_version, "The vLLM release the command runs (default: newest modelled)");
  app->add_option("--other-memory", f->other_memory, "Memory other processes already hold on each GPU");
  app->add_flag("--json", f->json, "Print the plan as JSON (schema vramfit.plan/1)");
  app->footer("Give the vLLM command after --, e.g.\n  vramfit check --gpu 4090 -- vllm serve Qwen/Qwen3-8B --max-model-len 32768");
  return [f]() {
    auto fail = [](const std::string& m) {
      fmt::print(stderr, "vramfit check: {}\n", m);
      return kExitUsage;
    };
    std::vector<std::string> cmd = RewriteShortVllmFlags(CheckCommand());
    // Leading environment assignments (`VLLM_USE_V1=0 vllm serve ...`, or through `env`).
    bool v0 = false, allow_long = false;
    std::vector<std::string> env_ignored;
    if (!cmd.empty() && cmd[0] == "env") cmd.erase(cmd.begin());
    while (!cmd.empty() && cmd[0].find('=') != std::string::npos && cmd[0].rfind("-", 0) != 0) {
      const std::string name = cmd[0].substr(0, cmd[0].find('='));
      const std::string value = cmd[0].substr(cmd[0].find('=') + 1);
      if (name == "VLLM_USE_V1") v0 = value == "0";
      else if (name == "VLLM_ALLOW_LONG_MAX_MODEL_LEN") allow_long = value == "1" || value == "true";
      else if (name != "CUDA_VISIBLE_DEVICES") env_ignored.push_back(name);
      cmd.erase(cmd.begin());
    }
    if (!env_ignored.empty()) {
      fmt::print(stderr, "vramfit check: environment not modelled (ignored): {}\n", fmt::join(env_ignored, " "));
    }
    // Strip the launcher: vllm serve | python[3] -m vllm.entrypoints.openai.api_server.
    size_t at = 0;
    std::string model;
    if (cmd.size() >= 2 && cmd[0].ends_with("vllm") && cmd[1] == "serve") {
      at = 2;
      if (at < cmd.size() && cmd[at].rfind("-", 0) != 0) model = cmd[at++];
    } else if (cmd.size() >= 3 && cmd[0].find("python") != std::string::npos && cmd[1] == "-m" &&
               cmd[2].rfind("vllm.entrypoints", 0) == 0) {
      at = 3;
    } else {
      return fail("expected a vLLM command after --: `vllm serve MODEL ...` or `python -m "
                  "vllm.entrypoints.openai.api_server --model MODEL ...`");
    }
    CLI::App parser("vllm");
    parser.allow_extras();
    VllmFlags flags;
    AddVllmFlags(&parser, &flags);
    std::string model_flag;
    parser.add_option("--model", model_flag);
    std::vector<std::string> rest(cmd.begin() + static_cast<long>(at), cmd.end());
    std::reverse(rest.begin(), rest.end());
    try {
      parser.parse(rest);
    } catch (const CLI::ParseError& e) {
      return fail(fmt::format("the vLLM command line: {}", e.what()));
    }
    if (!model_flag.empty()) model = model_flag;
    if (model.empty()) return fail("the vLLM command names no model");
    // vLLM flags that do not change GPU memory are accepted silently; anything else is named.
    static const char* kNoMemoryEffect[] = {
        "--host", "--port", "--api-key", "--served-model-name", "--trust-remote-code", "--download-dir",
        "--tokenizer", "--revision", "--tokenizer-revision", "--chat-template", "--enable-auto-tool-choice",
        "--tool-call-parser", "--reasoning-parser", "--uvicorn-log-level", "--disable-log-requests",
        "--disable-log-stats", "--seed", "--dtype", "--load-format", "--generation-config", "--enable-prefix-caching",
        "--no-enable-prefix-caching", "--enable-chunked-prefill", "--disable-uvicorn-access-log", "--uds"};
    std::vector<std::string> unknown;
    for (const std::string& a : parser.remaining()) {
      if (a.rfind("--", 0) != 0) continue;
      const std::string name = a.substr(0, a.find('='));
      if (std::find(std::begin(kNoMemoryEffect), std::end(kNoMemoryEffect), name) == std::end(kNoMemoryEffect)) {
        unknown.push_back(name);
      }
    }
    if (!unknown.empty()) {
      fmt::print(stderr, "vramfit check: flags not modelled (ignored): {}\n", fmt::join(unknown, " "));
    }
    if (!f->engine_version.empty()) flags.settings.version = f->engine_version;
    flags.settings.v0_engine = flags.settings.v0_engine || v0;
    flags.settings.allow_long_max_model_len = flags.settings.allow_long_max_model_len || allow_long;
    VRAMFIT_CLI_CHECK(FinishVllmFlags(&flags));
    if (!f->other_memory.empty()) {
      auto b = ParseMemorySize(f->other_memory);
      if (!b.ok()) return fail(b.status().message());
      flags.settings.other_process_bytes = *b;
    }
    auto gpu = ResolveGpu(f->gpu, f->gpu_memory);
    if (!gpu.ok()) return fail(gpu.status().message());
    auto inv = InspectModel(model, {});
    if (!inv.ok()) return fail(inv.status().message());
    auto plan = PlanVllm(*inv, *gpu, flags.settings);
    if (!plan.ok()) return fail(plan.status().message());
    const auto advice = AdviseVllm(*inv, *gpu, flags.settings, *plan);
    const std::string out = f->json ? RenderPlanJson(*plan, advice, {}) : RenderPlanText(*plan, advice, {});
    std::fwrite(out.data(), 1, out.size(), stdout);
    return plan->fits ? kExitOk : kExitCheckFails;
  };
}

}  // namespace vramfit::cli
