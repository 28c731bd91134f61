// Ollama's flags, environment and command lines (see command.h). Variable names and defaults
// follow envconfig/config.go and api/types.go of Ollama v0.12.10.
#include "engines/ollama/command.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <string_view>

#include "core/text.h"
#include "core/units.h"

namespace vramfit::ollama {
namespace {

constexpr auto Bad = core::BadFlagValue;

// The prefix of a Hugging Face Hub model in `ollama run` and `ollama pull`.
constexpr std::string_view kHubHost = "hf.co/";

Result<int64_t> ReadInt(const std::string& flag, const std::string& text, int64_t lo) {
  return core::ReadFlagInt(flag, text, lo,
                           lo < 0 ? "an integer (-1: the estimate decides)" : "a whole number");
}

// The environment variables read, and the flag each one is.
struct EnvFlag {
  const char* variable;
  const char* flag;
};
constexpr EnvFlag kEnv[] = {
    {"OLLAMA_CONTEXT_LENGTH", "--num-ctx"},      {"OLLAMA_NUM_PARALLEL", "--num-parallel"},
    {"OLLAMA_KV_CACHE_TYPE", "--kv-cache-type"}, {"OLLAMA_FLASH_ATTENTION", "--flash-attention"},
    {"OLLAMA_GPU_OVERHEAD", "--gpu-overhead"},   {"OLLAMA_SCHED_SPREAD", "--sched-spread"},
};

size_t ProgramIndex(const std::vector<std::string>& argv) {
  size_t i = 0;
  if (i < argv.size() && argv[i] == "env") ++i;
  while (i < argv.size() && core::IsEnvAssignment(argv[i])) ++i;
  return i;
}

std::string Base(const std::string& a) {
  const size_t slash = a.rfind('/');
  return slash == std::string::npos ? a : a.substr(slash + 1);
}

}  // namespace

const std::vector<FlagSpec>& Flags() {
  static const std::vector<FlagSpec> kFlags = {
      {"--num-ctx", nullptr, "Ollama: PARAMETER num_ctx, tokens per request (default "
                             "OLLAMA_CONTEXT_LENGTH, 4096)", "INT"},
      {"--num-gpu", nullptr, "Ollama: PARAMETER num_gpu, layers on the GPUs (default: its "
                             "estimate)", "INT"},
      {"--num-batch", nullptr, "Ollama: PARAMETER num_batch (default 512)", "INT"},
      {"--num-parallel", nullptr, "Ollama: OLLAMA_NUM_PARALLEL, requests at once (default 1)",
       "INT"},
      {"--kv-cache-type", nullptr, "Ollama: OLLAMA_KV_CACHE_TYPE f16|q8_0|q4_0 (needs flash "
                                   "attention)", "TEXT"},
      {"--flash-attention", nullptr, "Ollama: OLLAMA_FLASH_ATTENTION 1|0 (default: the "
                                     "model's)", "TEXT"},
      {"--gpu-overhead", nullptr, "Ollama: OLLAMA_GPU_OVERHEAD, bytes kept free per GPU (or "
                                  "1GiB)", "TEXT"},
      {"--sched-spread", nullptr, "Ollama: OLLAMA_SCHED_SPREAD, spread over every GPU", nullptr},
      {"--num-gpus", nullptr, "GPUs the server sees (CUDA_VISIBLE_DEVICES)", "INT"},
  };
  return kFlags;
}

Result<OllamaSettings> ReadFlags(const FlagValues& given, OllamaSettings s) {
  for (const auto& [name, text] : given) {
    if (name == "--kv-cache-type") {
      s.kv_cache_dtype = text.empty() ? "auto" : text;
    } else if (name == "--flash-attention") {
      s.flash_attention = text;
    } else if (name == "--sched-spread") {
      s.sched_spread = text.empty() || (text != "0" && text != "false" && text != "FALSE" &&
                                        text != "False" && text != "f" && text != "F");
    } else if (name == "--gpu-overhead") {
      const bool digits = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return c >= '0' && c <= '9';
      });
      if (digits) {
        uint64_t v = 0;
        auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc() || v > (uint64_t{1} << 50)) {
          return Bad(name, text, "bytes (or a size such as 1GiB)");
        }
        s.gpu_overhead = v;
      } else {
        auto v = core::ParseSize(text);
        if (!v.ok()) return Bad(name, text, "bytes (or a size such as 1GiB)");
        s.gpu_overhead = *v;
      }
    } else if (name == "--num-ctx") {
      auto n = ParseTokenCount(name, text);
      if (!n.ok()) return n.status();
      s.max_model_len = *n;
    } else {
      auto n = ReadInt(name, text, name == "--num-gpu" ? -1 : 0);
      if (!n.ok()) return n.status();
      if (name == "--num-gpu") s.num_gpu = *n;
      if (name == "--num-batch") s.num_batch = *n;
      if (name == "--num-parallel") s.max_num_seqs = *n;
      if (name == "--num-gpus") {
        if (*n < 1 || *n > 64) return Bad(name, text, "1 to 64 GPUs");
        s.tensor_parallel_size = 1;
        s.pipeline_parallel_size = *n;
      }
    }
  }
  return s;
}

bool HasNoMemoryEffect(std::string_view flag, bool* takes_value) {
  // `ollama run`'s own flags (cmd/cmd.go, v0.12.10): how the chat is shown, how long the model
  // stays loaded after it, the output format; none changes what one load holds. --think takes
  // its value only as --think=VALUE (a bool flag with an optional value).
  static constexpr std::string_view kRunFlags[] = {"--verbose",    "--keepalive",   "--format",
                                                   "--think",      "--hidethinking",
                                                   "--nowordwrap", "--insecure"};
  if (std::find(std::begin(kRunFlags), std::end(kRunFlags), flag) == std::end(kRunFlags)) {
    return false;
  }
  *takes_value = flag == "--keepalive" || flag == "--format";
  return true;
}

bool IsOllamaCommand(const std::vector<std::string>& argv) {
  const size_t i = ProgramIndex(argv);
  if (i + 1 >= argv.size() || Base(argv[i]) != "ollama") return false;
  // `ollama run MODEL`, or `ollama MODEL` as check --engine writes it; `ollama serve` loads no
  // model (its environment reaches the plan through the `ollama run` that follows it).
  const std::string& verb = argv[i + 1];
  if (verb == "run") return i + 2 < argv.size();
  return verb != "serve" && verb != "pull" && verb != "create" && verb.rfind("-", 0) != 0;
}

Result<EngineCommand> ReadOllamaCommand(const std::vector<std::string>& argv) {
  EngineCommand out;
  const size_t first = ProgramIndex(argv);
  for (size_t i = 0; i < first; ++i) {
    const std::string& a = argv[i];
    if (a == "env") continue;
    const size_t eq = a.find('=');
    const std::string key = a.substr(0, eq), value = a.substr(eq + 1);
    if (key == "CUDA_VISIBLE_DEVICES" || key == "HIP_VISIBLE_DEVICES" ||
        key == "ROCR_VISIBLE_DEVICES") {
      if (value.empty() || value == "-1") {
        out.flags.emplace_back("--num-gpu", "0");
      } else {
        const int64_t n = 1 + std::count(value.begin(), value.end(), ',');
        out.flags.emplace_back("--num-gpus", std::to_string(std::min<int64_t>(n, 65)));
      }
      continue;
    }
    const EnvFlag* hit = nullptr;
    for (const EnvFlag& e : kEnv) {
      if (key == e.variable) hit = &e;
    }
    if (hit == nullptr) {
      if (core::EnvWithoutMemoryEffect(key)) {
        out.ReadWithoutMemoryEffect(key);
      } else {
        out.unmodelled_env.push_back(core::Printable(a));
      }
      continue;
    }
    // envconfig's Uint and Uint64 read plain digits (strconv.ParseUint); anything else is
    // logged "invalid environment variable, using default" and the default is used, so
    // OLLAMA_CONTEXT_LENGTH=16k does not give 16,000 tokens. Refused, saying so.
    const bool uint_env = key == "OLLAMA_CONTEXT_LENGTH" || key == "OLLAMA_NUM_PARALLEL" ||
                          key == "OLLAMA_GPU_OVERHEAD";
    if (uint_env && (value.empty() || value.find_first_not_of("0123456789") != std::string::npos)) {
      return Status::InvalidArgument(fmt::format(
          "{}: Ollama reads only digits here (strconv.ParseUint) and would use its default "
          "instead; write the whole number",
          core::Printable(a)));
    }
    // A value the flag refuses is named as written: the variable, not vramfit's flag.
    if (auto read = ReadFlags({{hit->flag, value}}, {}); !read.ok()) {
      std::string m(read.status().message());
      for (const std::string& said : {fmt::format("{} \"{}\"", hit->flag, core::Printable(value)),
                                      fmt::format("{} {}", hit->flag, core::Printable(value)),
                                      std::string(hit->flag)}) {
        if (m.starts_with(said)) {
          m.erase(0, said.size());
          break;
        }
      }
      while (!m.empty() && (m[0] == ' ' || m[0] == ':')) m.erase(0, 1);
      return Status::InvalidArgument(fmt::format("{}: {}", core::Printable(a), m));
    }
    out.given_flags.push_back(hit->flag);
    out.flags.emplace_back(hit->flag, value);
  }
  size_t i = first + 1;
  if (i < argv.size() && argv[i] == "run") ++i;
  for (; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.rfind("#", 0) == 0) break;
    if (a.rfind("-", 0) != 0) {
      // The model, then a prompt (not a setting).
      if (out.model.empty()) out.model = a;
      continue;
    }
    const size_t eq = a.find('=');
    const std::string name = a.substr(0, eq);
    const FlagSpec* spec = nullptr;
    for (const FlagSpec& f : Flags()) {
      if (name == f.name) spec = &f;
    }
    if (spec == nullptr) {
      bool valued = false;
      if (HasNoMemoryEffect(name, &valued)) {
        if (eq == std::string::npos && valued && i + 1 < argv.size()) ++i;
        out.ReadWithoutMemoryEffect(name);
        continue;
      }
      out.unmodelled_flags.push_back(core::Printable(a));
      continue;
    }
    out.given_flags.push_back(name);
    if (spec->type_name == nullptr) {
      out.flags.emplace_back(spec->name, eq == std::string::npos ? "" : a.substr(eq + 1));
      continue;
    }
    if (eq != std::string::npos) {
      out.flags.emplace_back(spec->name, a.substr(eq + 1));
    } else if (i + 1 < argv.size()) {
      out.flags.emplace_back(spec->name, argv[++i]);
    } else {
      return Status::InvalidArgument(fmt::format("{} needs a value", core::Printable(a)));
    }
  }
  if (out.model.empty()) {
    return Status::InvalidArgument("Ollama: no model given (ollama run MODEL.gguf)");
  }
  // `ollama run hf.co/ORG/REPO[:QUANT]` pulls a GGUF repository of the Hugging Face Hub
  // (Ollama's docs/import.md and the Hub's "Use Ollama with any GGUF model" page): read as the
  // Hub id ORG/REPO[:QUANT]; CommandLine writes the prefix back.
  for (std::string_view host : {kHubHost, std::string_view("huggingface.co/")}) {
    if (out.model.starts_with(host) && out.model.size() > host.size()) {
      out.model.erase(0, host.size());
    }
  }
  out.settings = ToEngineSettings(OllamaSettings{});
  return out;
}

std::string CommandLine(const Inventory& inv, const OllamaSettings& s) {
  std::string c;
  const int64_t gpus = std::max<int64_t>(1, s.tensor_parallel_size) *
                       std::max<int64_t>(1, s.pipeline_parallel_size);
  if (gpus > 1) {
    std::string ids;
    for (int64_t i = 0; i < gpus; ++i) ids += (i ? "," : "") + std::to_string(i);
    c += "CUDA_VISIBLE_DEVICES=" + ids + " ";
  }
  if (s.max_model_len > 0) c += fmt::format("OLLAMA_CONTEXT_LENGTH={} ", s.max_model_len);
  if (s.max_num_seqs > 0) c += fmt::format("OLLAMA_NUM_PARALLEL={} ", s.max_num_seqs);
  if (!s.flash_attention.empty()) {
    c += "OLLAMA_FLASH_ATTENTION=" + core::ShellWord(s.flash_attention) + " ";
  }
  if (!s.kv_cache_dtype.empty() && s.kv_cache_dtype != "auto") {
    c += "OLLAMA_KV_CACHE_TYPE=" + core::ShellWord(s.kv_cache_dtype) + " ";
  }
  if (s.gpu_overhead > 0) c += fmt::format("OLLAMA_GPU_OVERHEAD={} ", s.gpu_overhead);
  if (s.sched_spread) c += "OLLAMA_SCHED_SPREAD=1 ";
  const std::string& model = inv.model.empty() ? inv.origin : inv.model;
  const bool hub = inv.source.kind == ModelKind::kHub && !model.starts_with(kHubHost);
  c += "ollama run " + core::ShellWord(hub ? std::string(kHubHost) + model : model);
  return c;
}

}  // namespace vramfit::ollama
