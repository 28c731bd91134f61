// The engine table: every inference engine vramfit models (vLLM today; SGLang, llama.cpp,
// transformers, Ollama each become one more row) behind one interface. Everything above the
// engines (the fit search, advice, reports, `check`, the doctor) iterates this table and never
// names an engine.
//
// An engine gives: its flags (name, help, how the value reads) and the reader that turns the
// flags a user gave into EngineSettings; a reader of its own command lines (`vllm serve ...`);
// a planner (a model prepared once, then planned for any GPU and settings); the knobs the fit
// search may turn; and the spelling of its flags for advice.
//
// Example:
//   auto engine = vramfit::FindEngine("vllm@0.10");
//   auto model = engine->engine->Prepare(inventory);
//   auto plan = (*model)->Plan(gpu, settings);
#ifndef VRAMFIT_ENGINE_H_
#define VRAMFIT_ENGINE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vramfit/gpu.h"
#include "vramfit/inventory.h"
#include "vramfit/kv.h"
#include "vramfit/plan.h"
#include "vramfit/status.h"

namespace vramfit {

// The engine-neutral settings that advice and the fit search change; each engine spells them
// as its own flags (Engine::flag_name).
enum class Setting {
  kTensorParallel, kPipelineParallel, kMaxModelLen, kGpuMemoryUtilization, kKvCacheDtype,
  kMaxNumSeqs, kMaxNumBatchedTokens, kEnforceEager,
};

// One flag of an engine's command line.
struct FlagSpec {
  const char* name;        // "--max-model-len"
  const char* short_name;  // "-tp" (one dash, several letters), "--tp" (an abbreviation), nullptr
  const char* help;
  const char* type_name;   // "INT", "FLOAT", "TEXT"; nullptr for a flag without a value
};

// The flags a user gave, by FlagSpec name, with their text ("" for a flag without a value).
using FlagValues = std::vector<std::pair<std::string, std::string>>;

// One engine command line read from argv.
struct EngineCommand {
  std::string model;                          // the model it serves
  std::string revision;                       // the Hub revision it names ("": the default)
  EngineSettings settings;                    // what the environment prefix set
  FlagValues flags;                           // the engine's flags given (read_flags reads them)
  // Flags vramfit does not model (ignored), and environment variables likewise: the names
  // as printed, control and non-UTF-8 bytes escaped (\xNN), ready for a terminal.
  std::vector<std::string> unmodelled_flags;
  std::vector<std::string> unmodelled_env;
  // Flags read that have no memory effect (--host, --port, --api-key, logging): their names
  // once each, as printed, so that `check` can say in one line that they were read.
  std::vector<std::string> no_memory_flags;
  // Adds `flag` to no_memory_flags unless it is there already.
  void ReadWithoutMemoryEffect(std::string flag) {
    for (const std::string& f : no_memory_flags) {
      if (f == flag) return;
    }
    no_memory_flags.push_back(std::move(flag));
  }
  // Every flag name given, as written (`--name` or `-x`, no value): what check_flags checks.
  std::vector<std::string> given_flags;
  // The launcher as the engine names it ("vllm serve", "python -m
  // vllm.entrypoints.openai.api_server"); empty where the engine reads only one form.
  std::string launcher;
};

// A container image that runs an engine: `docker run [options] IMAGE ARGS...` runs the image's
// entrypoint followed by ARGS.
struct ContainerImage {
  std::string_view repository;  // "vllm/vllm-openai" (a registry host before it also matches)
  std::string_view entrypoint;  // "vllm serve": its words, one space apart
  // vramfit's own flags for what the image installs beside the engine, e.g. vLLM's
  // "--flashinfer-installed"; words one space apart; empty: none.
  std::string_view install_flags = {};
  // The tags this entrypoint belongs to, by their start ("server" for llama.cpp's
  // `:server-cuda`); empty: every tag.
  std::string_view tag_prefix = {};
};

// A change the engine proposes for a failed plan, in its own flags (advice re-plans it and
// keeps it only when it fits).
struct Remedy {
  std::string change;        // "--enable-expert-parallel", "--cpu-offload-gb 6"
  std::string cost;          // what is given up
  EngineSettings settings;   // the settings with the change applied
  int group = 0;             // remedies of one group > 0 are alternatives, in order of cost:
                             // advice keeps the first of them that fits
};

// One model made ready for one engine (its weights profiled once); planned many times.
// Holds a reference to the inventory it was prepared from, which must outlive it.
class PreparedModel {
 public:
  virtual ~PreparedModel() = default;
  // Plans a start-up on `gpu` with `settings`. Errors are for impossible settings (the engine's
  // own message where it has one); a start-up that would fail is a plan with fits == false.
  virtual Result<Plan> MakePlan(const GpuSpec& gpu, const EngineSettings& settings) const = 0;
  // The engine's own ways out of `plan` (made with `settings` on `gpu`), beyond the
  // engine-neutral ones advice tries itself: expert parallelism for a refused shard, CPU
  // offload or online quantization for a load that does not fit, another dtype. Default: none.
  virtual std::vector<Remedy> Remedies(const GpuSpec& gpu, const EngineSettings& settings,
                                       const Plan& plan) const {
    return {};
  }
};

// One setting the fit search may turn away from the engine's default, with what it costs.
struct Knob {
  Setting setting;
  const char* value;       // the value written after the flag ("fp8"; "" for a bare flag)
  const char* cost;        // "a small accuracy cost"
  // Applies the knob to `s` for `gpu`; false when it changes nothing there (the default is
  // already that value, or the user set the setting).
  bool (*apply)(const GpuSpec& gpu, EngineSettings* s);
};

struct Engine {
  std::string_view name;      // "vllm": --engine NAME[@VERSION], the JSON "engine" key
  std::string_view title;     // "vLLM": as people write it
  // Flags, in help order, and the reader of the values given (a base's fields are kept where
  // no flag changes them). kInvalidArgument names the flag.
  std::vector<FlagSpec> flags;
  Result<EngineSettings> (*read_flags)(const FlagValues& given, EngineSettings base);
  // "0.10" -> ok; kInvalidArgument for a release the engine's rules do not cover.
  Status (*check_version)(const std::string& version);
  // Its command lines: whether argv (after "--") is one, a hint of the forms it reads, and the
  // reader (environment prefixes, launcher, flags in any spelling the engine accepts).
  bool (*recognizes)(const std::vector<std::string>& argv);
  std::string_view command_forms;    // "`vllm serve MODEL ...` or ..."
  std::string_view command_example;  // "vllm serve Qwen/Qwen3-8B --max-model-len 32768"
  Result<EngineCommand> (*read_command)(const std::vector<std::string>& argv);
  // The planner.
  Result<std::unique_ptr<PreparedModel>> (*prepare)(const Inventory& inventory);
  // The longest context the engine derives from the model's config under `s` (vLLM reads its
  // --hf-overrides into the config first).
  int64_t (*model_max_len)(const ModelSpec& spec, const EngineSettings& s);
  // kInvalidArgument, in the engine's words, when a context `len` (named `what` in the
  // message, e.g. "--min-context 300000") exceeds that maximum under `s`.
  Status (*check_context)(const ModelSpec& spec, const EngineSettings& s, int64_t len,
                          std::string_view what);
  // The knobs the fit search turns, in the order the search enumerates them.
  std::vector<Knob> knobs;
  // The flag that sets a Setting, e.g. "--max-model-len".
  const char* (*flag_name)(Setting setting);
  // Optional entries (an engine without them leaves them out).
  // Whether the planner reads EngineSettings::stage_gpus (mixed cards across pipeline stages);
  // the commands refuse several cards for an engine that does not.
  bool plans_stage_gpus = false;
  // The images of the engine's official containers; a deploy script's `docker run IMAGE` and
  // `podman run IMAGE` are read as the entrypoint's command. An image tag that is a release
  // (`:v0.10.1`) names the engine version.
  std::vector<ContainerImage> images = {};
  // kInvalidArgument, with the nearest real flags, for a flag of `command` that the engine's
  // own parser at `version` ("" for the newest modelled) rejects; null: not checked.
  Status (*check_flags)(const EngineCommand& command, const std::string& version) = nullptr;
  // Flags the command reads from a file it names (vLLM's `--config FILE`): `argv` with the
  // file's flags put where the engine puts them, the file read with `read_file`; null: none.
  Result<std::vector<std::string>> (*expand_config)(
      const std::vector<std::string>& argv,
      const std::function<Result<std::string>(const std::string&)>& read_file) = nullptr;
  // `vramfit kv` under this engine: the neutral estimate with the engine's paging (block size,
  // whole blocks per sequence); null: the neutral estimate stands.
  Result<KvEstimate> (*kv_cache)(const ModelSpec& spec, const KvQuery& query) = nullptr;
  // Whether `flag` (as written, `--port`) is one of the engine's flags with no memory effect
  // (server, logging, sampling), and whether it takes a value: `plan` and `fit` read such a
  // pasted flag and say so, as `check` does. Null: none.
  bool (*no_memory_effect)(std::string_view flag, bool* takes_value) = nullptr;
  // A setting of the engine's own that derives a longer context from the model's config,
  // documented for this model (vLLM: the static YaRN Qwen's model cards give, as
  // --hf-overrides): applied to `s` where `len` is past model_max_len, with a line saying what
  // was added in `note`; false where there is none.
  bool (*stretch_context)(const ModelSpec& spec, int64_t len, EngineSettings* s,
                          std::string* note) = nullptr;
};

// Rewrites one-dash multi-letter flag names of `flags` (vLLM's -tp) in `args` to their long
// names, also in the -tp=2 form; argument parsers would read "-tp" as "-t -p".
inline std::vector<std::string> ExpandShortNames(const std::vector<FlagSpec>& flags,
                                                 std::vector<std::string> args) {
  for (std::string& a : args) {
    for (const FlagSpec& f : flags) {
      if (f.short_name == nullptr || std::string_view(f.short_name).size() <= 2) continue;
      const std::string s(f.short_name);
      if (a == s) {
        a = f.name;
      } else if (a.rfind(s + "=", 0) == 0) {
        a = std::string(f.name) + a.substr(s.size());
      }
    }
  }
  return args;
}

// A flag whose type ends in "..." takes several words, as argparse's nargs="+" does (vLLM's
// --cudagraph-capture-sizes 1 2 4 8): the words up to the next flag become one value, joined
// with commas, so that an argument parser gives the flag all of them.
inline std::vector<std::string> JoinListWords(const std::vector<FlagSpec>& flags,
                                              std::vector<std::string> args) {
  auto is_list = [&](const std::string& a) {
    for (const FlagSpec& f : flags) {
      if (f.type_name && std::string_view(f.type_name).ends_with("...") && a == f.name) {
        return true;
      }
    }
    return false;
  };
  auto is_value = [](const std::string& a) {
    return a.empty() || a[0] != '-' || (a.size() > 1 && a[1] >= '0' && a[1] <= '9');
  };
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    out.push_back(args[i]);
    if (!is_list(args[i]) || i + 1 >= args.size() || !is_value(args[i + 1])) continue;
    std::string joined = args[++i];
    while (i + 1 < args.size() && is_value(args[i + 1])) joined += "," + args[++i];
    out.push_back(joined);
  }
  return out;
}

// A token count as engine command lines write it: 32768, 128k (128,000), 128K (131,072).
// kInvalidArgument names `flag`.
Result<int64_t> ParseTokenCount(const std::string& flag, const std::string& text);

// What every engine's `prepare` asks of an inventory first: its config (a spec), and a format the
// engine models (a GGUF file waits for the llama.cpp engine). Messages name `engine_title`.
Status CheckPlannable(const Inventory& inv, std::string_view engine_title);

// The inventory's what-if onto its plan: the label, and what the what-if leaves out of the file
// it stands in for (Inventory::what_if_lacks): a note where the plan's headroom holds even its
// bound, else memory the plan does not count (Plan::not_counted: a low-confidence verdict).
void CarryWhatIf(const Inventory& inv, Plan* plan);

// Every engine, in table order.
const std::vector<const Engine*>& Engines();

// "vllm" or "vllm@0.10": the engine and the version text after '@' ("" for none).
// kUnsupported names the engines that are modelled.
struct EngineChoice {
  const Engine* engine = nullptr;
  std::string version;
};
Result<EngineChoice> FindEngine(std::string_view spec);

// The engine whose command line argv is; nullptr when none recognizes it.
const Engine* EngineForCommand(const std::vector<std::string>& argv);

}  // namespace vramfit

#endif  // VRAMFIT_ENGINE_H_
