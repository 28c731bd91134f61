// llama.cpp flags, command lines and the plan's command (see command.h). Spellings follow
// common/arg.cpp of llama.cpp ec98e2002.
#include "engines/llamacpp/command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string_view>

#include "core/text.h"
#include "engines/llamacpp/rules.h"

namespace vramfit::llamacpp {
namespace {

constexpr auto Bad = core::BadFlagValue;

Result<int64_t> ReadInt(const std::string& flag, const std::string& text, int64_t lo) {
  return core::ReadFlagInt(flag, text, lo,
                           lo < 0 ? "an integer (-1 for the default)" : "a whole number");
}

Result<bool> ReadOnOff(const std::string& flag, const std::string& text) {
  if (text == "on" || text == "true" || text == "1" || text.empty()) return true;
  if (text == "off" || text == "false" || text == "0") return false;
  return Bad(flag, text, "on or off");
}

// "3,1" or "3/1" (arg.cpp splits --tensor-split on , and /).
// The items of `text` between any of `separators` (empty items kept).
std::vector<std::string> Items(const std::string& text, const char* separators) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= text.size()) {
    size_t end = text.find_first_of(separators, at);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

Result<std::vector<double>> ReadSplit(const std::string& flag, const std::string& text) {
  std::vector<double> out;
  for (const std::string& item : Items(text, ",/")) {
    double v = 0;
    auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || p != item.data() + item.size() || v < 0 ||
        !(v < 1e12) || out.size() >= 64) {
      return Bad(flag, text, "proportions such as 3,1 (at most 64)");
    }
    out.push_back(v);
  }
  return out;
}

// One name as the command gives it -> the FlagSpec name (llama.cpp's aliases).
struct Alias {
  const char* spelled;
  const char* name;
};
constexpr Alias kAliases[] = {
    {"-c", "--ctx-size"}, {"-ngl", "--n-gpu-layers"}, {"--gpu-layers", "--n-gpu-layers"},
    {"-b", "--batch-size"}, {"-ub", "--ubatch-size"}, {"-np", "--parallel"},
    {"-ctk", "--cache-type-k"}, {"-ctv", "--cache-type-v"}, {"-sm", "--split-mode"},
    {"-ts", "--tensor-split"}, {"-mg", "--main-gpu"}, {"-ot", "--override-tensor"},
    {"-cmoe", "--cpu-moe"}, {"-ncmoe", "--n-cpu-moe"}, {"-kvu", "--kv-unified"},
    {"-fa", "--flash-attn"}, {"-nkvo", "--no-kv-offload"}, {"-dev", "--device"},
    {"-mm", "--mmproj"}, {"-fit", "--fit"}, {"-fitt", "--fit-target"}, {"-fitc", "--fit-ctx"},
    // common/arg.cpp: {"--mmproj-auto"}, {"--no-mmproj", "--no-mmproj-auto"} are one switch.
    {"--no-mmproj-auto", "--no-mmproj"},
};

// Flags that change no device memory (server, sampling, threads, logging, and host memory:
// --mlock pins the model's host pages, --cache-ram sizes the prompt cache in RAM; common/arg.cpp):
// named by `check` in one line, as `vllm serve --host` is. Those that take a value, then the
// bare ones.
constexpr const char* kNoMemoryValued[] = {
    "--host", "--port", "-a", "--alias", "--api-key", "--api-key-file", "--chat-template",
    "--chat-template-file", "-t", "--threads", "-tb", "--threads-batch", "--threads-http",
    "--temp", "--top-k", "--top-p", "--min-p", "--repeat-penalty", "-s", "--seed",
    "--reasoning-format", "--reasoning-budget", "-to", "--timeout", "--log-file", "-lv",
    "--log-verbosity", "--path", "--ssl-key-file", "--ssl-cert-file", "-n", "--n-predict",
    "-p", "--prompt", "-f", "--file", "-sys", "--system-prompt", "--presence-penalty",
    "--frequency-penalty", "--repeat-last-n", "--grammar", "--grammar-file", "-j",
    "--json-schema", "--prio", "-cram", "--cache-ram"};
constexpr const char* kNoMemoryBare[] = {
    "--jinja", "--metrics", "--slots", "--no-slots", "--props", "--no-webui", "--log-disable",
    "-v", "--verbose", "--log-timestamps", "--log-prefix", "-cb", "--cont-batching", "-nocb",
    "--no-cont-batching", "--no-warmup", "-cnv", "--conversation", "-no-cnv",
    "--no-conversation", "-i", "--interactive", "-st", "--single-turn", "--color", "-sp",
    "--special", "--no-display-prompt", "--mlock"};

template <size_t N>
bool Listed(const char* const (&list)[N], const std::string& name) {
  return std::find_if(std::begin(list), std::end(list),
                      [&](const char* f) { return name == f; }) != std::end(list);
}

// llama.cpp reads a number flag with std::stoi (common/arg.cpp, common_params_parse_ex:
// `opt.handler_int(params, std::stoi(val))`, at ec98e2002 and still at 0017d6fb6), which
// stops at the first character that is not a digit: `-c 32k` runs with a 32-token context.
// vramfit's own flags read 32k as 32,000, so a number with a tail on the user's llama.cpp
// line is refused, saying what llama.cpp does.
// (-ngl takes the words all and auto too, and is read where its words are.)
Status CheckStoiValue(const FlagSpec& spec, const std::string& value) {
  if (spec.type_name == nullptr || std::string_view(spec.type_name) != "INT" ||
      std::string_view(spec.name) == "--n-gpu-layers") {
    return Status::Ok();
  }
  size_t digits = value.rfind('-', 0) == 0 ? 1 : 0;
  const size_t sign = digits;
  while (digits < value.size() && std::isdigit(static_cast<unsigned char>(value[digits]))) {
    ++digits;
  }
  if (digits == sign || digits == value.size()) return Status::Ok();  // read (and checked) later
  return Status::InvalidArgument(fmt::format(
      "{} {}: llama.cpp reads only the leading digits (std::stoi), so it would run with {}; "
      "write the whole number",
      spec.name, core::Printable(value), value.substr(0, digits)));
}

}  // namespace

const std::vector<FlagSpec>& Flags() {
  static const std::vector<FlagSpec> kFlags = {
      {"--ctx-size", "-c", "llama.cpp: context tokens, all sequences (0: the model's)", "INT"},
      {"--n-gpu-layers", "-ngl", "llama.cpp: layers on the GPUs, counted from the last "
                                 "(default all)", "INT"},
      {"--batch-size", nullptr, "llama.cpp -b: logical batch (default 2048)", "INT"},
      {"--ubatch-size", "-ub", "llama.cpp: physical batch (default 512)", "INT"},
      {"--parallel", "-np", "llama.cpp: sequences (llama-server default 4, unified)", "INT"},
      {"--cache-type-k", "-ctk", "llama.cpp: K cache type f16|bf16|f32|q8_0|q4_0|q4_1|iq4_nl|"
                                 "q5_0|q5_1", "TEXT"},
      {"--cache-type-v", "-ctv", "llama.cpp: V cache type (quantized needs -fa)", "TEXT"},
      {"--split-mode", "-sm", "llama.cpp: none|layer|row", "TEXT"},
      {"--tensor-split", "-ts", "llama.cpp: proportions per GPU, e.g. 3,1", "TEXT"},
      {"--main-gpu", "-mg", "llama.cpp: the GPU of -sm none", "INT"},
      {"--override-tensor", "-ot", "llama.cpp: PATTERN=CPU|CUDAn[,...]", "TEXT"},
      {"--cpu-moe", nullptr, "llama.cpp: every layer's experts on the CPU", nullptr},
      {"--n-cpu-moe", "-ncmoe", "llama.cpp: experts of the first N layers on the CPU", "INT"},
      {"--kv-unified", "-kvu", "llama.cpp: one KV buffer shared by all sequences", nullptr},
      {"--no-kv-unified", nullptr, "llama.cpp: one KV stream per sequence", nullptr},
      {"--swa-full", nullptr, "llama.cpp: full-size cache for sliding-window layers", nullptr},
      {"--flash-attn", "-fa", "llama.cpp: on|off|auto (default auto)", "TEXT"},
      {"--no-kv-offload", "-nkvo", "llama.cpp: KV cache on the CPU", nullptr},
      {"--no-mmap", nullptr, "llama.cpp: read the model into memory instead of mapping it",
       nullptr},
      {"--device", "-dev", "llama.cpp: the GPUs used, e.g. CUDA0,CUDA1 (default one)", "TEXT"},
      {"--mmproj", "-mm", "llama.cpp: the vision projector GGUF (read for its weights, "
                          "encoder and image tokens)", "FILE"},
      {"--no-mmproj-offload", nullptr, "llama.cpp: the vision projector stays on the CPU",
       nullptr},
      {"--no-mmproj", nullptr, "llama.cpp: no vision projector (-hf fetches the repo's unless "
                               "given)", nullptr},
      {"--mmproj-auto", nullptr, "llama.cpp: -hf fetches the repo's vision projector (the "
                                 "default)", nullptr},
      // common/arg.cpp since PR 16653 (on by default): -fit, -fitt (MiB, default 1024; a list
      // per device since PR 18679), -fitc (default 4096).
      {"--fit", "-fit", "llama.cpp: on|off, fit unset -c, -ngl, experts to free memory "
                        "(default on since b7410)", "TEXT"},
      {"--fit-target", "-fitt", "llama.cpp: MiB --fit leaves free per GPU (default 1024)",
       "TEXT"},
      {"--fit-ctx", "-fitc", "llama.cpp: the smallest context --fit reduces to (default 4096)",
       "INT"},
  };
  return kFlags;
}

Result<LlamaCppSettings> ReadFlags(const FlagValues& given, LlamaCppSettings s) {
  for (const auto& [name, text] : given) {
    if (name == "--cache-type-k") {
      s.kv_cache_dtype = text;
    } else if (name == "--cache-type-v") {
      s.cache_type_v = text;
    } else if (name == "--split-mode") {
      s.split_mode = text;
    } else if (name == "--tensor-split") {
      auto v = ReadSplit(name, text);
      if (!v.ok()) return v.status();
      s.tensor_split = *v;
      s.pipeline_parallel_size = std::max<int64_t>(s.pipeline_parallel_size,
                                                   static_cast<int64_t>(v->size()));
    } else if (name == "--override-tensor") {
      // PATTERN=BUFFER[,PATTERN=BUFFER...] (arg.cpp splits on ',' then on the last '=').
      for (const std::string& item : Items(text, ",")) {
        const size_t eq = item.rfind('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
          return Bad(name, text, "PATTERN=BUFFER (e.g. \"\\.ffn_.*_exps\\.=CPU\")");
        }
        s.overrides.emplace_back(item.substr(0, eq), item.substr(eq + 1));
      }
    } else if (name == "--cpu-moe") {
      s.cpu_moe = true;
    } else if (name == "--kv-unified") {
      s.kv_unified = 1;
    } else if (name == "--no-kv-unified") {
      s.kv_unified = 0;
    } else if (name == "--swa-full") {
      s.swa_full = true;
    } else if (name == "--no-kv-offload") {
      s.no_kv_offload = true;
    } else if (name == "--no-mmap") {
      s.mmap = false;
    } else if (name == "--mmproj") {
      if (text.empty()) return Bad(name, text, "a GGUF file");
      s.mmproj = text;
      s.mmproj_header.reset();
    } else if (name == "--no-mmproj-offload") {
      s.mmproj_offload = false;
    } else if (name == "--no-mmproj") {
      s.mmproj.clear();
      s.mmproj_header.reset();
    } else if (name == "--mmproj-auto") {
      // The default: a projector -hf finds is fetched (the what-if says what it leaves out).
    } else if (name == "--flash-attn") {
      if (text.empty()) {
        // A bare -fa: on in builds whose -fa was a switch; from kFaValueBuild llama.cpp reads
        // the next word as the value, or stops at the end of the line (rules.h).
        auto rules = RulesFor(s.version);
        if (!rules.ok()) return rules.status();
        if (rules->fa_takes_value) {
          return Status::InvalidArgument(fmt::format(
              "-fa (--flash-attn) needs a value: on, off or auto (llama.cpp from about b{} "
              "reads the word after it as its value and stops, with \"expected value for "
              "argument\" at the end of the line or \"unknown value for --flash-attn\" before "
              "another flag; an older build's bare -fa is on: write -fa on, or give that build "
              "with --llamacpp-version bNNNN)", kFaValueBuild));
        }
        s.flash_attn = "on";
      } else if (text == "auto") {
        s.flash_attn = "auto";
      } else {
        auto b = ReadOnOff(name, text);
        if (!b.ok()) return b.status();
        s.flash_attn = *b ? "on" : "off";
      }
    } else if (name == "--fit") {
      // common/arg.cpp: is_truthy / is_falsey, else "unknown value for --fit".
      if (text == "on" || text == "enabled" || text == "true" || text == "1") {
        s.fit = 1;
      } else if (text == "off" || text == "disabled" || text == "false" || text == "0") {
        s.fit = 0;
      } else {
        return Bad(name, text, "on or off");
      }
    } else if (name == "--fit-target") {
      // MiB0,MiB1,... split on , and /; one value is every device's.
      s.fit_target_mib.clear();
      for (const std::string& item : Items(text, ",/")) {
        auto n = ReadInt(name, item, 0);
        if (!n.ok() || *n > (int64_t{1} << 30) || s.fit_target_mib.size() >= 64) {
          return Bad(name, text, "MiB per GPU, such as 1024 or 2048,1024");
        }
        s.fit_target_mib.push_back(*n);
      }
    } else if (name == "--device") {
      if (text == "none") {
        s.n_gpu_layers = 0;
        continue;
      }
      const int64_t n = 1 + std::count(text.begin(), text.end(), ',');
      if (text.empty() || n > 64) return Bad(name, text, "a list such as CUDA0,CUDA1");
      s.pipeline_parallel_size = n;
    } else if (name == "--ctx-size") {
      auto n = text == "0" ? Result<int64_t>(int64_t{0}) : ParseTokenCount(name, text);
      if (!n.ok()) return n.status();
      s.max_model_len = *n;
    } else if (name == "--n-gpu-layers" && (text == "all" || text == "auto")) {
      // Builds since the --fit change spell the count `all` (every layer) or `auto` (the
      // default); the modelled build's default offloads every layer, so both read as -1.
      s.n_gpu_layers = -1;
    } else {
      auto n = ReadInt(name, text, name == "--n-gpu-layers" || name == "--parallel" ? -1 : 0);
      if (!n.ok()) return n.status();
      if (name == "--n-gpu-layers") s.n_gpu_layers = *n;
      if (name == "--batch-size") s.max_num_batched_tokens = *n;
      // -ub 0 is "as -b" (llama-context.cpp: n_ubatch = min(n_batch, n_ubatch == 0 ? n_batch
      // : n_ubatch)), not the default 512.
      if (name == "--ubatch-size") s.n_ubatch = *n == 0 ? kUbatchAsBatch : *n;
      if (name == "--parallel") s.max_num_seqs = *n < 0 ? 0 : *n;
      if (name == "--main-gpu") s.main_gpu = *n;
      if (name == "--n-cpu-moe") s.n_cpu_moe = *n;
      if (name == "--fit-ctx") s.fit_ctx = *n;
    }
  }
  return s;
}

namespace {

// The program's name without a directory: "llama-server", "llama-cli".
std::string Base(const std::string& a) {
  const size_t slash = a.rfind('/');
  return slash == std::string::npos ? a : a.substr(slash + 1);
}

size_t ProgramIndex(const std::vector<std::string>& argv) {
  size_t i = 0;
  if (i < argv.size() && argv[i] == "env") ++i;
  while (i < argv.size() && core::IsEnvAssignment(argv[i])) ++i;
  return i;
}

}  // namespace

bool HasNoMemoryEffect(std::string_view flag, bool* takes_value) {
  const std::string name(flag);
  if (!Listed(kNoMemoryValued, name) && !Listed(kNoMemoryBare, name)) return false;
  *takes_value = Listed(kNoMemoryValued, name);
  return true;
}

bool IsLlamaCppCommand(const std::vector<std::string>& argv) {
  const size_t i = ProgramIndex(argv);
  if (i >= argv.size()) return false;
  const std::string b = Base(argv[i]);
  return b == "llama-server" || b == "llama-cli" || b == "llamacpp";
}

// llama.cpp's environment variables for the flags the plan reads (common/arg.cpp, set_env on
// each option; common_params_parse_ex applies them before the command line's own flags).
struct EnvFlag {
  const char* env;
  const char* flag;
  bool is_switch;
};
constexpr EnvFlag kEnvFlags[] = {
    {"LLAMA_ARG_MODEL", "--model", false},        {"LLAMA_ARG_CTX_SIZE", "--ctx-size", false},
    {"LLAMA_ARG_BATCH", "--batch-size", false},   {"LLAMA_ARG_UBATCH", "--ubatch-size", false},
    {"LLAMA_ARG_N_PARALLEL", "--parallel", false},
    {"LLAMA_ARG_N_GPU_LAYERS", "--n-gpu-layers", false},
    {"LLAMA_ARG_CACHE_TYPE_K", "--cache-type-k", false},
    {"LLAMA_ARG_CACHE_TYPE_V", "--cache-type-v", false},
    {"LLAMA_ARG_FLASH_ATTN", "--flash-attn", false}, {"LLAMA_ARG_N_CPU_MOE", "--n-cpu-moe", false},
    {"LLAMA_ARG_FIT", "--fit", false},            {"LLAMA_ARG_SWA_FULL", "--swa-full", true},
    {"LLAMA_ARG_KV_UNIFIED", "--kv-unified", true},
};

static Result<EngineCommand> ReadWords(const std::vector<std::string>& args, size_t first,
                                       EngineCommand out, LlamaCppSettings base);

Result<EngineCommand> ReadLlamaCppCommand(const std::vector<std::string>& argv) {
  EngineCommand out;
  LlamaCppSettings base;
  const size_t first = ProgramIndex(argv);
  std::vector<std::string> env_words;                       // LLAMA_ARG_* as flags
  std::vector<std::pair<std::string, std::string>> env_origin;  // flag word -> NAME=value
  for (size_t i = 0; i < first; ++i) {
    const std::string& a = argv[i];
    if (a == "env") continue;
    const size_t eq = a.find('=');
    const std::string key = a.substr(0, eq), value = a.substr(eq + 1);
    const EnvFlag* env = nullptr;
    for (const EnvFlag& e : kEnvFlags) {
      if (key == e.env) env = &e;
    }
    if (key == "CUDA_VISIBLE_DEVICES" || key == "HIP_VISIBLE_DEVICES") {
      if (value.empty() || value == "-1") {
        base.n_gpu_layers = 0;
      } else {
        base.pipeline_parallel_size = 1 + std::count(value.begin(), value.end(), ',');
      }
    } else if (env != nullptr && eq != std::string::npos) {
      // common_params_parse_ex reads these before the command line, whose flags then win: the
      // flag goes first. A switch's variable counts when is_truthy (true, 1, on, enabled).
      if (!env->is_switch) {
        env_words.push_back(std::string(env->flag) + "=" + value);
        env_origin.emplace_back(env_words.back(), a);
      } else if (value == "1" || value == "true" || value == "on" || value == "enabled") {
        env_words.push_back(env->flag);
      }
    } else {
      if (core::EnvWithoutMemoryEffect(key)) {
        out.ReadWithoutMemoryEffect(key);
      } else {
        out.unmodelled_env.push_back(core::Printable(a));
      }
      base.kept_env.push_back(a);
    }
  }
  if (first < argv.size() && Base(argv[first]) == "llama-cli") base.program = Program::kCli;
  std::vector<std::string> args(argv.begin(), argv.begin() + std::min(first + 1, argv.size()));
  args.insert(args.end(), env_words.begin(), env_words.end());
  if (first + 1 < argv.size()) args.insert(args.end(), argv.begin() + first + 1, argv.end());
  auto read = ReadWords(args, first, std::move(out), std::move(base));
  if (read.ok()) return read;
  // An error in a value that came from the environment names the variable.
  for (const auto& [word, assignment] : env_origin) {
    if (read.status().message().find(word.substr(word.find('=') + 1)) != std::string::npos) {
      return Status::InvalidArgument(fmt::format("{} (from {})", read.status().message(),
                                                 core::Printable(assignment)));
    }
  }
  return read;
}

// The command line after the program, with the environment's flags in front.
static Result<EngineCommand> ReadWords(const std::vector<std::string>& args, size_t first,
                                       EngineCommand out, LlamaCppSettings base) {
  std::string hf_file;  // -hff FILE, joined to the -hf repo whichever comes first
  for (size_t i = first + 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("#", 0) == 0) break;
    if (a.rfind("-", 0) != 0) {
      if (!out.model.empty()) {
        return Status::InvalidArgument(fmt::format("llama.cpp: a second model \"{}\" after {}",
                                                   core::Printable(a),
                                                   core::Printable(out.model)));
      }
      out.model = a;
      continue;
    }
    const size_t eq = a.find('=');
    std::string name = a.substr(0, eq);
    for (const Alias& al : kAliases) {
      if (name == al.spelled) name = al.name;
    }
    auto value = [&]() -> Result<std::string> {
      if (eq != std::string::npos) return a.substr(eq + 1);
      if (i + 1 < args.size()) return args[++i];
      return Status::InvalidArgument(fmt::format("{} needs a value", core::Printable(a)));
    };
    if (name == "-m" || name == "--model" || name == "-hf" || name == "--hf-repo") {
      auto v = value();
      if (!v.ok()) return v.status();
      out.model = *v;
      if ((name == "-hf" || name == "--hf-repo") && !hf_file.empty()) {
        out.model += ":" + hf_file;
      }
      continue;
    }
    if (name == "-hff" || name == "--hf-file") {
      // The file of the -hf repo: read as the Hub id org/name:FILE.
      auto v = value();
      if (!v.ok()) return v.status();
      hf_file = *v;
      if (!out.model.empty() && out.model.find(':') == std::string::npos &&
          out.model.find('/') != std::string::npos && !out.model.ends_with(".gguf")) {
        out.model += ":" + hf_file;
      }
      continue;
    }
    if (name == "--no-kv-unified" || name == "-no-kvu") {
      out.flags.emplace_back("--no-kv-unified", "");
      continue;
    }
    if (name == "--flash-attn") {
      // Since the on|off|auto change (Rules::fa_takes_value) the flag takes a value, and the
      // word after it is that value whatever it is (common/arg.cpp: a value hint
      // "[on|off|auto]"; "unknown value for --flash-attn: '-ctk'" for `-fa -ctk q8_0`); before,
      // it was a switch. A bare -fa (last, or before another flag) is read as "" and ReadFlags
      // decides by the build; any other word that is not a value stops every build.
      static const char* kWords[] = {"on", "off", "auto", "true", "false", "1", "0"};
      if (eq == std::string::npos &&
          (i + 1 >= args.size() || (args[i + 1].rfind("-", 0) == 0 &&
                                    args[i + 1].find_first_not_of("-0123456789") !=
                                        std::string::npos))) {
        out.flags.emplace_back(name, "");
        continue;
      }
      const std::string v = eq != std::string::npos ? a.substr(eq + 1) : args[++i];
      if (std::find(std::begin(kWords), std::end(kWords), v) == std::end(kWords)) {
        return Status::InvalidArgument(fmt::format(
            "{} {}: expected on, off or auto (llama-server reads the word after {} as its "
            "value and stops with \"unknown value for --flash-attn: '{}'\"; an older build's "
            "bare {} is {} on)",
            core::Printable(a.substr(0, eq)), core::Printable(v), core::Printable(a.substr(0, eq)),
            core::Printable(v), core::Printable(a.substr(0, eq)),
            core::Printable(a.substr(0, eq))));
      }
      out.flags.emplace_back(name, v);
      continue;
    }
    const FlagSpec* spec = nullptr;
    for (const FlagSpec& f : Flags()) {
      if (name == f.name) spec = &f;
    }
    bool valued = false;
    // Flags the plan does not read stay in the printed command as given (CommandLine).
    if (spec == nullptr && HasNoMemoryEffect(name, &valued)) {
      base.kept_args.push_back(a);
      if (valued && eq == std::string::npos && i + 1 < args.size()) {
        base.kept_args.push_back(args[++i]);
      }
      out.ReadWithoutMemoryEffect(name);
      continue;
    }
    if (spec == nullptr) {
      std::string shown = core::Printable(a);
      base.kept_args.push_back(a);
      if (eq == std::string::npos && i + 1 < args.size() && args[i + 1].rfind("-", 0) != 0) {
        base.kept_args.push_back(args[i + 1]);
        shown += " " + core::Printable(args[++i]);
      }
      out.unmodelled_flags.push_back(std::move(shown));
      continue;
    }
    if (spec->type_name == nullptr) {
      out.flags.emplace_back(spec->name, "");
      continue;
    }
    auto v = value();
    if (!v.ok()) return v.status();
    VRAMFIT_RETURN_IF_ERROR(CheckStoiValue(*spec, *v));
    out.flags.emplace_back(spec->name, *v);
  }
  if (out.model.empty()) {
    return Status::InvalidArgument("llama.cpp: no model given (llama-server -m MODEL.gguf ...)");
  }
  out.settings = ToEngineSettings(base);
  return out;
}

std::string CommandLine(const Inventory& inv, const LlamaCppSettings& s) {
  const auto word = core::ShellWord;
  std::string c;
  const int64_t gpus = std::max<int64_t>(1, s.tensor_parallel_size) *
                       std::max<int64_t>(1, s.pipeline_parallel_size);
  if (gpus > 1) {
    std::string ids;
    for (int64_t i = 0; i < gpus; ++i) {
      ids += (i ? "," : "") + std::to_string(i);
    }
    c = "CUDA_VISIBLE_DEVICES=" + ids + " ";
  }
  c += s.program == Program::kCli ? "llama-cli" : "llama-server";
  // A Hub repository (-hf org/Name-GGUF[:QUANT]) is echoed as one; a file as -m.
  const std::string& m = inv.model.empty() ? inv.origin : inv.model;
  const bool hub = inv.source.kind == ModelKind::kHub ||
                   (m.find('/') != std::string::npos && m.find(':') > m.find('/') &&
                    m.find(':') != std::string::npos && !m.starts_with('/') &&
                    !m.starts_with('.') && !m.starts_with('~'));
  c += (hub ? " -hf " : " -m ") + word(m);
  if (s.max_model_len > 0) c += fmt::format(" -c {}", s.max_model_len);
  if (s.n_gpu_layers >= 0) c += fmt::format(" -ngl {}", s.n_gpu_layers);
  if (s.cpu_moe) c += " --cpu-moe";
  if (s.n_cpu_moe > 0) c += fmt::format(" --n-cpu-moe {}", s.n_cpu_moe);
  for (const auto& [p, b] : s.overrides) c += " -ot " + word(p + "=" + b);
  if (s.split_mode != "layer") c += " -sm " + word(s.split_mode);
  if (!s.tensor_split.empty()) {
    std::string ts;
    for (double v : s.tensor_split) ts += fmt::format("{}{}", ts.empty() ? "" : ",", v);
    c += " -ts " + ts;
  }
  if (s.main_gpu != 0) c += fmt::format(" -mg {}", s.main_gpu);
  if (s.max_num_seqs > 0) c += fmt::format(" -np {}", s.max_num_seqs);
  if (s.kv_unified == 1) c += " -kvu";
  if (s.kv_unified == 0) c += " --no-kv-unified";
  if (!s.kv_cache_dtype.empty() && s.kv_cache_dtype != "auto" && s.kv_cache_dtype != "f16") {
    c += " -ctk " + word(s.kv_cache_dtype);
  }
  if (!s.cache_type_v.empty() && s.cache_type_v != "f16") c += " -ctv " + word(s.cache_type_v);
  // Builds whose -fa is a switch (Rules::fa_takes_value false) are off unless it is given.
  auto rules = RulesFor(s.version);
  if (rules.ok() && !rules->fa_takes_value) {
    if (s.flash_attn == "on") c += " -fa";
  } else if (s.flash_attn != "auto") {
    c += " -fa " + word(s.flash_attn);
  }
  if (s.max_num_batched_tokens > 0) c += fmt::format(" -b {}", s.max_num_batched_tokens);
  if (s.n_ubatch > 0) c += fmt::format(" -ub {}", s.n_ubatch);
  if (s.n_ubatch == kUbatchAsBatch) c += " -ub 0";
  if (s.swa_full) c += " --swa-full";
  if (s.no_kv_offload) c += " -nkvo";
  if (!s.mmap) c += " --no-mmap";
  if (!s.mmproj.empty()) c += " --mmproj " + word(s.mmproj);
  if (!s.mmproj_offload) c += " --no-mmproj-offload";
  if (s.fit >= 0) c += s.fit ? " --fit on" : " --fit off";
  if (!s.fit_target_mib.empty()) {
    std::string t;
    for (int64_t v : s.fit_target_mib) t += fmt::format("{}{}", t.empty() ? "" : ",", v);
    c += " -fitt " + t;
  }
  if (s.fit_ctx != 4096) c += fmt::format(" -fitc {}", s.fit_ctx);
  for (const std::string& w : s.kept_args) c += " " + word(w);
  std::string env;
  for (const std::string& w : s.kept_env) env += word(w) + " ";
  return env + c;
}

}  // namespace vramfit::llamacpp
