// SGLang command lines (see command.h). The reader walks the words the way SGLang's argparse
// does: `--flag value` or `--flag=value`, the last of a repeated flag winning, every value taken
// whole (a JSON object is one shell word).
#include "engines/sglang/command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string_view>
#include <unordered_set>

#include "core/text.h"
#include "engines/sglang/flags.h"

namespace vramfit::sglang {
namespace {

using core::ShellWord;

// SGLang flags that do not change GPU memory: accepted silently by `check`.
constexpr const char* kNoMemoryEffect[] = {
    "--host", "--port", "--api-key", "--served-model-name", "--trust-remote-code",
    "--tokenizer-path", "--revision", "--chat-template", "--tool-call-parser",
    "--reasoning-parser", "--log-level", "--log-requests", "--random-seed", "--load-format",
    "--download-dir", "--enable-metrics", "--attention-backend", "--sampling-backend",
    "--grammar-backend", "--schedule-policy", "--disable-overlap-schedule", "--skip-tokenizer-init",
    "--enable-torch-compile", "--watchdog-timeout", "--device", "--nnodes", "--node-rank",
    "--dist-init-addr", "--base-gpu-id", "--show-time-cost", "--enable-cache-report"};

// Flags of the table that take no value.
bool Bare(const std::string& name) {
  for (const FlagSpec& f : Flags()) {
    if (name == f.name) return f.type_name == nullptr;
  }
  return false;
}

// SGLang's parser is a plain argparse.ArgumentParser (launch_server.py), whose allow_abbrev
// reads `--mem-frac 0.8` as the one flag it begins (CPython Lib/argparse.py,
// _get_option_tuples). For a written name that begins exactly one flag of the table: a note
// naming that flag, since vramfit does not read abbreviations (another SGLang flag may begin
// the same way, which makes argparse refuse it); "" otherwise.
std::string AbbreviationOf(const std::string& written) {
  std::string match;
  int n = 0;
  for (const FlagSpec& f : Flags()) {
    if (std::string_view(f.name).starts_with(written)) {
      match = f.name;
      ++n;
    }
  }
  if (n != 1) return "";
  return fmt::format(" (SGLang may read it as {}: write that for vramfit to plan it)", match);
}

constexpr std::string_view kEnvAllowLong = "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN";
constexpr std::string_view kEnvDevices = "CUDA_VISIBLE_DEVICES";
// The largest image SGLang's Qwen-VL processor resizes to (environ.py; see plan.cc).
constexpr std::string_view kEnvImagePixels = "SGLANG_IMAGE_MAX_PIXELS";

size_t SkipEnvironment(const std::vector<std::string>& cmd) {
  size_t at = !cmd.empty() && cmd[0] == "env" ? 1 : 0;
  while (at < cmd.size() && cmd[at].find('=') != std::string::npos && cmd[at].rfind("-", 0) != 0) {
    ++at;
  }
  return at;
}

// The index of the first flag after the launcher (0: not SGLang); *model is set for a
// positional model (`sglang serve MODEL`).
size_t AfterLauncher(const std::vector<std::string>& cmd, size_t at, std::string* model) {
  if (cmd.size() >= at + 2 && (cmd[at] == "sglang" || cmd[at].ends_with("/sglang")) &&
      cmd[at + 1] == "serve") {
    at += 2;
    if (at < cmd.size() && cmd[at].rfind("-", 0) != 0) *model = cmd[at++];
    return at;
  }
  if (cmd.size() >= at + 3 && cmd[at].find("python") != std::string::npos && cmd[at + 1] == "-m" &&
      (cmd[at + 2] == "sglang.launch_server" || cmd[at + 2] == "sglang_router.launch_server")) {
    return at + 3;
  }
  return 0;
}

}  // namespace

std::string LaunchCommand(const std::string& model, const SglangSettings& s,
                          const SglangSettings& in) {
  std::string c = "python -m sglang.launch_server --model-path " + ShellWord(model);
  if (s.tensor_parallel_size > 1) c += fmt::format(" --tp-size {}", s.tensor_parallel_size);
  if (s.pipeline_parallel_size > 1) c += fmt::format(" --pp-size {}", s.pipeline_parallel_size);
  if (s.data_parallel_size > 1) c += fmt::format(" --dp-size {}", s.data_parallel_size);
  if (s.enable_dp_attention) c += " --enable-dp-attention";
  if (s.ep_size > 1) c += fmt::format(" --ep-size {}", s.ep_size);
  if (!s.quantization.empty()) c += " --quantization " + ShellWord(s.quantization);
  if (s.dtype != "auto") c += " --dtype " + ShellWord(s.dtype);
  c += fmt::format(" --mem-fraction-static {} --context-length {}", s.gpu_memory_utilization,
                   s.max_model_len);
  if (!s.json_model_override_args.empty()) {
    c += " --json-model-override-args " + ShellWord(s.json_model_override_args);
  }
  if (s.kv_cache_dtype != "auto") {  // vLLM's "fp8" (advice's spelling) is SGLang's fp8_e4m3
    const std::string kv = s.kv_cache_dtype == "fp8" ? "fp8_e4m3" : s.kv_cache_dtype;
    c += " --kv-cache-dtype " + ShellWord(kv);
  }
  if (in.max_num_seqs) c += fmt::format(" --max-running-requests {}", s.max_num_seqs);
  if (in.max_num_batched_tokens) {
    c += fmt::format(" --chunked-prefill-size {}", s.max_num_batched_tokens);
  }
  if (s.enforce_eager) {
    c += " --disable-cuda-graph";
  } else if (in.cuda_graph_max_bs) {
    c += fmt::format(" --cuda-graph-max-bs {}", s.cuda_graph_max_bs);
  }
  if (s.max_total_tokens) c += fmt::format(" --max-total-tokens {}", s.max_total_tokens);
  if (in.page_size) c += fmt::format(" --page-size {}", s.page_size);
  if (!s.speculative_algorithm.empty()) {
    c += " --speculative-algorithm " + s.speculative_algorithm;
    if (!s.draft_model.empty()) {
      c += " --speculative-draft-model-path " + ShellWord(s.draft_model);
    }
    if (s.speculative_num_draft_tokens) {
      c += fmt::format(" --speculative-num-draft-tokens {}", s.speculative_num_draft_tokens);
    }
  }
  if (s.disable_radix_cache) c += " --disable-radix-cache";
  if (in.mamba_full_memory_ratio) {
    c += fmt::format(" --mamba-full-memory-ratio {}", s.mamba_full_memory_ratio);
  }
  if (in.swa_full_tokens_ratio) {
    c += fmt::format(" --swa-full-tokens-ratio {}", s.swa_full_tokens_ratio);
  }
  if (s.images_per_request >= 0) {
    c += " --limit-mm-data-per-request " +
         ShellWord(fmt::format("{{\"image\": {}}}", s.images_per_request));
  }
  if (!s.mm_attention_backend.empty()) c += " --mm-attention-backend " + s.mm_attention_backend;
  std::string env;
  if (s.image_max_pixels > 0) env += fmt::format("{}={} ", kEnvImagePixels, s.image_max_pixels);
  if (s.allow_long_max_model_len && in.max_model_len > 0) {
    env += std::string(kEnvAllowLong) + "=1 ";
  }
  return env + c;
}

bool IsLaunchCommand(const std::vector<std::string>& argv) {
  std::string model;
  return AfterLauncher(argv, SkipEnvironment(argv), &model) > 0;
}

Result<EngineCommand> ReadLaunchCommand(const std::vector<std::string>& cmd) {
  EngineCommand out;
  SglangSettings env;
  const size_t launcher = SkipEnvironment(cmd);
  std::unordered_set<std::string> seen;  // each name reported once, however often set
  for (size_t i = !cmd.empty() && cmd[0] == "env" ? 1 : 0; i < launcher; ++i) {
    const std::string name = cmd[i].substr(0, cmd[i].find('='));
    const std::string value = cmd[i].substr(cmd[i].find('=') + 1);
    if (name == kEnvAllowLong) {
      env.allow_long_max_model_len = value == "1" || value == "true" || value == "True";
    } else if (name == kEnvImagePixels) {
      int64_t v = 0;
      const char* end = value.data() + value.size();
      auto [p, ec] = std::from_chars(value.data(), end, v);
      if (ec != std::errc() || p != end || v < 1 || v > (int64_t{1} << 40)) {
        return Status::InvalidArgument(fmt::format(
            "the SGLang command line: {}={}: expected a whole number of pixels", kEnvImagePixels,
            core::Printable(value)));
      }
      env.image_max_pixels = v;
    } else if (name != kEnvDevices && seen.insert(name).second) {
      out.unmodelled_env.push_back(core::Printable(name));
    }
  }
  size_t at = AfterLauncher(cmd, launcher, &out.model);
  if (at == 0) {
    return Status::InvalidArgument(
        "expected an SGLang command after --: `python -m sglang.launch_server --model-path MODEL "
        "...` or `sglang serve --model-path MODEL ...`");
  }
  seen.clear();
  for (; at < cmd.size(); ++at) {
    const std::string& word = cmd[at];
    if (word.rfind("--", 0) != 0) {
      // A value of a flag not in the table, or a one-dash option (`-h`, `-q`), named as not
      // modelled; a negative number is a value.
      const bool option = word.size() > 1 && word[0] == '-' &&
                          !std::isdigit(static_cast<unsigned char>(word[1])) && word[1] != '.';
      const std::string written = word.substr(0, word.find('='));
      if (option && seen.insert(written).second) {
        out.unmodelled_flags.push_back(core::Printable(written));
      }
      continue;
    }
    const size_t eq = word.find('=');
    const std::string written = word.substr(0, eq);
    const std::string name = CanonicalFlag(written);
    if (name.empty()) {
      const bool quiet = std::find(std::begin(kNoMemoryEffect), std::end(kNoMemoryEffect),
                                   written) != std::end(kNoMemoryEffect);
      if (!quiet && seen.insert(written).second) {
        out.unmodelled_flags.push_back(core::Printable(written) + AbbreviationOf(written));
      }
      continue;
    }
    std::string value;
    if (Bare(name)) {
      if (eq != std::string::npos) {
        return Status::InvalidArgument(fmt::format(
            "the SGLang command line: {} takes no value", core::Printable(written)));
      }
    } else if (eq != std::string::npos) {
      value = word.substr(eq + 1);
    } else if (at + 1 < cmd.size()) {
      value = cmd[++at];
    } else {
      return Status::InvalidArgument(fmt::format(
          "the SGLang command line: {} expects a value", core::Printable(written)));
    }
    if (name == "--model-path") {
      out.model = value;
      continue;
    }
    // argparse keeps the last value of a repeated flag.
    auto old = std::find_if(out.flags.begin(), out.flags.end(),
                            [&](const auto& f) { return f.first == name; });
    if (old != out.flags.end()) out.flags.erase(old);
    out.flags.emplace_back(name, value);
  }
  if (out.model.empty()) {
    return Status::InvalidArgument("the SGLang command names no model (--model-path)");
  }
  out.settings = ToEngineSettings(env);
  return out;
}

}  // namespace vramfit::sglang
