// SGLang command lines (see command.h). The reader walks the words the way SGLang's argparse
// does, over the full option list (server_flags.h): `--flag value` or `--flag=value`, each
// option taking as many words as it takes in SGLang (none for a switch, so a word after one is
// never read as its value), an abbreviation of one option read as that option, the last of a
// repeated flag winning, every value taken whole (a JSON object is one shell word).
#include "engines/sglang/command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string_view>
#include <unordered_set>

#include "core/text.h"
#include "engines/sglang/flags.h"
#include "engines/sglang/server_flags.h"

namespace vramfit::sglang {
namespace {

using core::ShellWord;

// SGLang flags that do not change GPU memory: `check` names them in one line, as read. Every
// other flag of the option list that the plan does not read is named as not modelled.
constexpr const char* kNoMemoryEffect[] = {
    "--host", "--port", "--api-key", "--served-model-name", "--trust-remote-code",
    "--tokenizer-path", "--chat-template", "--tool-call-parser",
    "--reasoning-parser", "--log-level", "--log-requests", "--random-seed", "--load-format",
    "--download-dir", "--enable-metrics", "--sampling-backend", "--grammar-backend",
    "--schedule-policy", "--skip-tokenizer-init", "--watchdog-timeout", "--nnodes", "--node-rank",
    "--dist-init-addr", "--base-gpu-id", "--show-time-cost", "--enable-cache-report",
    // The HTTP server's TLS, paths, keys and templates; logging, metrics and tracing; the
    // tokenizer's and detokenizer's processes; timeouts, queue limits and default sampling
    // parameters; the rendezvous port; host threads that prefetch weight files (server_args.py,
    // v0.5.13): none sizes a device tensor.
    "--tokenizer-mode", "--stream-interval", "--ssl-keyfile", "--ssl-certfile", "--ssl-ca-certs",
    "--ssl-keyfile-password", "--otlp-traces-endpoint", "--log-level-http",
    "--log-requests-level", "--log-requests-format", "--decode-log-interval",
    "--fastapi-root-path", "--admin-api-key", "--dist-timeout", "--nccl-port",
    "--tokenizer-worker-num", "--detokenizer-worker-num", "--crash-dump-folder",
    "--export-metrics-to-file-dir", "--extra-metric-labels", "--gc-warning-threshold-secs",
    "--soft-watchdog-timeout", "--hf-chat-template-name", "--completion-template",
    "--tool-server", "--file-storage-path", "--max-queued-requests", "--default-priority-value",
    "--sampling-defaults", "--preferred-sampling-params", "--constrained-json-whitespace-pattern",
    "--weight-version", "--weight-loader-prefetch-num-threads", "--custom-sigquit-handler",
    "--kv-events-config", "--tokenizer-metrics-custom-labels-header", "--grpc-http-sidecar-port",
    "--dynamic-batch-tokenizer-batch-size", "--dynamic-batch-tokenizer-batch-timeout"};

bool Quiet(std::string_view name) {
  return std::find(std::begin(kNoMemoryEffect), std::end(kNoMemoryEffect), name) !=
         std::end(kNoMemoryEffect);
}

// The router's launcher adds its own options after SGLang's, all spelled `--router-...`
// (sgl-router/py_src/sglang_router/launch_server.py, RouterArgs.add_cli_args with
// use_router_prefix, v0.5.5).
constexpr std::string_view kRouterPrefix = "--router-";
// `sglang serve` takes --model-type before the server parser sees the line
// (python/sglang/cli/serve.py _extract_model_type_override, v0.5.13).
constexpr std::string_view kServeModelType = "--model-type";

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

enum class Launcher { kNone, kServe, kLaunchServer, kRouter };

// The launcher at cmd[at] and, through *next, the index of the first word after it.
Launcher LauncherAt(const std::vector<std::string>& cmd, size_t at, size_t* next) {
  if (cmd.size() >= at + 2 && (cmd[at] == "sglang" || cmd[at].ends_with("/sglang")) &&
      cmd[at + 1] == "serve") {
    *next = at + 2;
    return Launcher::kServe;
  }
  if (cmd.size() >= at + 3 && cmd[at].find("python") != std::string::npos && cmd[at + 1] == "-m" &&
      (cmd[at + 2] == "sglang.launch_server" || cmd[at + 2] == "sglang_router.launch_server")) {
    *next = at + 3;
    return cmd[at + 2] == "sglang.launch_server" ? Launcher::kLaunchServer : Launcher::kRouter;
  }
  return Launcher::kNone;
}

// The words after cmd[*at] that an option of arity `arity` takes as its values (argparse:
// the following words that are not options, as many as the arity allows); *at moves past them.
// kInvalidArgument, in argparse's words, when too few follow.
Status TakeValues(const std::vector<std::string>& cmd, const std::string& written, char arity,
                  size_t* at, std::vector<std::string>* values) {
  while (*at + 1 < cmd.size() && cmd[*at + 1] != "--" && !IsOptionWord(cmd[*at + 1])) {
    if (arity == '0' || ((arity == '1' || arity == '?') && !values->empty())) break;
    values->push_back(cmd[++*at]);
  }
  if (values->empty() && (arity == '1' || arity == '+')) {
    return Status::InvalidArgument(fmt::format(
        "the SGLang command line: {} expects {} (the server stops with \"argument {}: "
        "expected {}\")",
        core::Printable(written), arity == '1' ? "a value" : "at least one value",
        core::Printable(written), arity == '1' ? "one argument" : "at least one argument"));
  }
  return Status::Ok();
}

}  // namespace

std::string LaunchCommand(const std::string& model, const SglangSettings& s,
                          const SglangSettings& in, const std::string& revision) {
  std::string c = "python -m sglang.launch_server --model-path " + ShellWord(model);
  const bool kept_revision =
      std::find(s.kept_args.begin(), s.kept_args.end(), "--revision") != s.kept_args.end();
  if (!revision.empty() && !kept_revision) c += " --revision " + ShellWord(revision);
  if (s.tensor_parallel_size > 1) c += fmt::format(" --tp-size {}", s.tensor_parallel_size);
  if (s.pipeline_parallel_size > 1) c += fmt::format(" --pp-size {}", s.pipeline_parallel_size);
  if (s.data_parallel_size > 1) c += fmt::format(" --dp-size {}", s.data_parallel_size);
  if (s.enable_dp_attention) c += " --enable-dp-attention";
  if (s.cpu_offload_gb > 0) c += fmt::format(" --cpu-offload-gb {:.0f}", s.cpu_offload_gb);
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
  for (const std::string& w : s.kept_args) c += " " + ShellWord(w);
  std::string env;
  for (const std::string& w : s.kept_env) env += ShellWord(w) + " ";
  if (s.image_max_pixels > 0) env += fmt::format("{}={} ", kEnvImagePixels, s.image_max_pixels);
  if (s.allow_long_max_model_len && in.max_model_len > 0) {
    env += std::string(kEnvAllowLong) + "=1 ";
  }
  return env + c;
}

bool HasNoMemoryEffect(std::string_view flag, bool* takes_value) {
  const ServerFlag* f = FindServerFlag(flag, ~0u);
  if (f == nullptr || !Quiet(f->name)) return false;
  *takes_value = ReadingArity(*f) != '0';
  return true;
}

bool IsLaunchCommand(const std::vector<std::string>& argv) {
  size_t next = 0;
  return LauncherAt(argv, SkipEnvironment(argv), &next) != Launcher::kNone;
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
        return Status::InvalidArgument(
            fmt::format("the SGLang command line: {}={}: expected a whole number of pixels",
                        kEnvImagePixels, core::Printable(value)));
      }
      env.image_max_pixels = v;
    } else if (name != kEnvDevices) {
      env.kept_env.push_back(cmd[i]);
      if (core::EnvWithoutMemoryEffect(name)) {
        out.ReadWithoutMemoryEffect(name);
      } else if (seen.insert(name).second) {
        out.unmodelled_env.push_back(core::Printable(name));
      }
    }
  }
  size_t at = 0;
  const Launcher kind = LauncherAt(cmd, launcher, &at);
  if (kind == Launcher::kNone) {
    return Status::InvalidArgument(
        "expected an SGLang command after --: `python -m sglang.launch_server --model-path MODEL "
        "...` or `sglang serve --model-path MODEL ...`");
  }
  seen.clear();
  auto name_once = [&](const std::string& shown) {
    if (seen.insert(shown).second) out.unmodelled_flags.push_back(shown);
  };
  const size_t first = at;
  for (; at < cmd.size(); ++at) {
    const std::string& word = cmd[at];
    if (word == "--" || !IsOptionWord(word)) {
      // argparse reads it as a positional argument, which SGLang's parser has none of.
      const std::string hint =
          kind == Launcher::kServe && at == first
              ? "; `sglang serve` reads the model from --model-path MODEL (it stops with "
                "\"--model-path is required\")"
              : "";
      return Status::InvalidArgument(fmt::format(
          "the SGLang command line: {} is neither a flag nor a flag's value (the server stops "
          "with \"unrecognized arguments\"){}",
          ShellWord(core::Printable(word)), hint));
    }
    const size_t eq = word.find('=');
    const std::string written = word.substr(0, eq);
    // Words that are not the server parser's: `sglang serve --model-type`, the router's
    // options, and any the lists lack (check_flags refuses those, an abbreviation of several
    // included). Named, their values with them.
    // The words of a flag the plan does not read, kept for the printed command.
    auto keep = [&](const std::vector<std::string>& values) {
      env.kept_args.push_back(word);
      if (eq == std::string::npos) {
        env.kept_args.insert(env.kept_args.end(), values.begin(), values.end());
      }
    };
    const bool serve_own = kind == Launcher::kServe && written == kServeModelType;
    const bool router_own = kind == Launcher::kRouter && written.starts_with(kRouterPrefix);
    const ServerFlag* flag = serve_own || router_own ? nullptr : FindServerFlag(written, ~0u);
    if (flag == nullptr) {
      if (!serve_own && !router_own) out.given_flags.push_back(written);
      std::vector<std::string> values;
      if (eq == std::string::npos) {
        VRAMFIT_RETURN_IF_ERROR(TakeValues(cmd, written, serve_own ? '1' : '*', &at, &values));
      }
      name_once(core::Printable(written));
      // The printed command is launch_server's: the launcher's own options stay with it.
      if (!serve_own && !router_own) keep(values);
      continue;
    }
    out.given_flags.push_back(written);
    const char arity = ReadingArity(*flag);
    std::vector<std::string> values;
    if (eq != std::string::npos) {
      if (arity == '0') {
        return Status::InvalidArgument(fmt::format(
            "the SGLang command line: {} takes no value (the server stops with \"argument {}: "
            "ignored explicit argument\")",
            core::Printable(written), std::string(flag->name)));
      }
      values.push_back(word.substr(eq + 1));
    } else {
      VRAMFIT_RETURN_IF_ERROR(TakeValues(cmd, written, arity, &at, &values));
    }
    const std::string real(flag->name);
    const std::string name = CanonicalFlag(real);
    if (name == "--model-path") {
      out.model = values.empty() ? std::string() : values.front();
      continue;
    }
    // --revision (ServerArgs.revision): the Hub revision the model is downloaded at, for
    // `check` to read the model at; kept in the printed command.
    if (real == "--revision" && !values.empty()) {
      VRAMFIT_RETURN_IF_ERROR(core::CheckHubRevision("SGLang", values.front()));
      out.revision = values.front();
      keep(values);
      continue;
    }
    if (name.empty()) {
      if (!Quiet(real)) {
        name_once(core::Printable(written) +
                  (written == real ? "" : fmt::format(" (SGLang reads it as {})", real)));
      } else {
        out.ReadWithoutMemoryEffect(std::string(real));
      }
      keep(values);
      continue;
    }
    // argparse keeps the last value of a repeated flag.
    auto old = std::find_if(out.flags.begin(), out.flags.end(),
                            [&](const auto& f) { return f.first == name; });
    if (old != out.flags.end()) out.flags.erase(old);
    out.flags.emplace_back(name, values.empty() ? std::string() : values.front());
  }
  if (out.model.empty()) {
    return Status::InvalidArgument("the SGLang command names no model (--model-path)");
  }
  out.settings = ToEngineSettings(env);
  return out;
}

}  // namespace vramfit::sglang
