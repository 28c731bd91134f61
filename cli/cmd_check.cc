// `vramfit check [--gpu NAME] [--json] -- COMMAND...` or `--script deploy.sh`: reads the user's
// real engine command lines (any engine of the table that recognizes them; a script's every
// one) and says whether each will start. Exit 0 all fit, 1 a predicted failure, 2 bad input.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iterator>

#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "engine_flags.h"
#include "vramfit/advice.h"
#include "vramfit/catalog.h"
#include "vramfit/engine.h"
#include "vramfit/gpu.h"
#include "vramfit/inspect.h"
#include "vramfit/ollama_library.h"
#include "vramfit/report.h"
#include "vramfit/report_html.h"
#include "vramfit/script.h"
#include "vramfit/source.h"
#include "vramfit/suggest.h"

namespace vramfit::cli {


namespace {
std::vector<std::string>& CheckCommand() {
  thread_local std::vector<std::string> command;  // per thread: RunCaptured
  return command;
}

// What one `check` prints and needs besides the invocation.
struct CheckRun {
  std::string gpu, gpu_memory, other_memory;
  std::vector<std::pair<std::string, std::string>> model_as;  // PATH, ID
  bool json = false;
  bool headers = false;  // a line naming each command (several, or from a script)
  std::string html;      // --html FILE ("-": the page on stdout instead of the report)
};

// A JSON string literal of `s` (invalid UTF-8 replaced, as every report writes it).
std::string JsonString(std::string_view s) {
  return nlohmann::json(std::string(s)).dump(-1, ' ', false,
                                             nlohmann::json::error_handler_t::replace);
}

// The most a deploy script or --env file may hold: far beyond any real one, and a bound on what
// an endless input (/dev/zero, `yes |`) can make vramfit hold in memory.
constexpr size_t kMaxTextFile = size_t{16} << 20;

// Reads at most kMaxTextFile bytes of `in`; kInvalidArgument past that.
Result<std::string> ReadBounded(std::istream& in, const std::string& shown) {
  std::string text(kMaxTextFile + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxTextFile) {
    return Status::InvalidArgument(fmt::format(
        "{}: more than {} MiB: not a deploy script or environment file", shown,
        kMaxTextFile >> 20));
  }
  return text;
}

Result<std::string> ReadTextFile(const std::string& path) {
  if (path == "-") return ReadBounded(std::cin, "standard input");
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Status::InvalidArgument(fmt::format("{}: a directory, not a file", path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(fmt::format("{}: cannot read the file", path));
  return ReadBounded(in, path);
}

// `w` as one shell word that expands nothing: in single quotes, a quote written '\''.
std::string SingleQuoted(const std::string& w) {
  std::string q = "'";
  for (char c : w) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The words as one shell line that reads back as the same words: each quoted, but a leading
// NAME=value keeps its name bare, so that a shell (and the script reader) still sees an
// assignment in front of the command.
std::string ShellLine(const std::vector<std::string>& argv) {
  std::string line;
  bool leading = true;
  for (const std::string& w : argv) {
    const size_t eq = w.find('=');
    leading = leading && eq != std::string::npos && eq > 0 &&
              std::all_of(w.begin(), w.begin() + static_cast<long>(eq), [](char c) {
                return c == '_' || std::isalnum(static_cast<unsigned char>(c));
              }) && !std::isdigit(static_cast<unsigned char>(w[0]));
    line += line.empty() ? "" : " ";
    line += leading ? w.substr(0, eq + 1) + SingleQuoted(w.substr(eq + 1)) : SingleQuoted(w);
  }
  return line;
}

// The engine commands to check: a script's (--script), a whole command given as one word
// after --, or the words after -- themselves.
Result<std::vector<ScriptInvocation>> Invocations(const std::string& script,
                                                  const std::vector<std::string>& env_files,
                                                  const std::vector<std::string>& argv,
                                                  int64_t prompt_tokens) {
  ScriptOptions options;
  options.prompt_tokens = prompt_tokens;
  for (const std::string& file : env_files) {
    auto text = ReadTextFile(file);
    if (!text.ok()) return text.status();
    auto vars = ReadEnvironmentFile(*text, file);
    if (!vars.ok()) return vars.status();
    options.environment.insert(options.environment.end(), vars->begin(), vars->end());
  }
  std::string forms;
  for (const Engine* e : Engines()) {
    forms += (forms.empty() ? "" : " or ") + std::string(e->command_forms);
  }
  if (!script.empty() || (argv.size() == 1 && argv[0].find(' ') != std::string::npos)) {
    if (!script.empty() && !argv.empty()) return Status::InvalidArgument(
        "give either --script FILE or a command after --");
    const std::string name = script.empty() ? "the command" : script == "-" ? "stdin" : script;
    std::string text = argv.empty() ? "" : argv[0];
    if (!script.empty()) {
      auto read = ReadTextFile(script);
      if (!read.ok()) return read.status();
      text = std::move(*read);
    }
    if (name.ends_with(".bat") || name.ends_with(".cmd") || name.ends_with(".ps1")) {
      fmt::print(stderr, "vramfit check: {}: a Windows script, read as a POSIX shell script: "
                 "cmd.exe's `set NAME=value` and `^`, PowerShell's `$env:NAME = ...` are not "
                 "read (CUDA_VISIBLE_DEVICES set that way does not count)\n", name);
    }
    // A compose file's `command:` is the container entrypoint's arguments, not a shell line:
    // read as a script its YAML (`command: >`) only gives shell errors.
    const bool yaml = name.ends_with(".yml") || name.ends_with(".yaml");
    const bool services =
        text.rfind("services:", 0) == 0 || text.find("\nservices:") != std::string::npos;
    if (yaml && services) {
      return Status::InvalidArgument(fmt::format(
          "{}: a docker compose file, which check does not read: give the service's command as "
          "the shell line it runs, e.g. `vramfit check --gpu GPU -- docker run IMAGE ARGS` "
          "(the image and its `command:` words) or `-- vllm serve MODEL ...`",
          name));
    }
    auto read = ReadDeployScript(text, name, options);
    if (!read.ok()) return read.status();
    for (const std::string& note : read->notes) fmt::print(stderr, "vramfit check: {}\n", note);
    if (read->invocations.empty()) {
      return Status::InvalidArgument(fmt::format(
          "{}: no {} command in it (looked for {}){}", name, EngineTitles(), forms,
          yaml ? "; a YAML file (docker compose) is not read: give the service's command as "
                 "the shell line it runs, e.g. `docker run IMAGE ARGS` or `vllm serve MODEL ...`"
               : ""));
    }
    return std::move(read->invocations);
  }
  // `-- python infer.py ...`, `-- torchrun ... train.py`: a Python program, which no engine's
  // command reader takes; its file is read as --script reads one.
  if (!argv.empty() && EngineForCommand(argv) == nullptr) {
    for (const std::string& word : argv) {
      if (word.ends_with(".py") && std::filesystem::is_regular_file(word)) {
        fmt::print(stderr, "vramfit check: {}: a Python program, read as --script {}\n", word,
                   word);
        return Invocations(word, env_files, {}, prompt_tokens);
      }
    }
  }
  if (!options.environment.empty()) {
    return Status::InvalidArgument("--env FILE sets a script's variables: give --script FILE");
  }
  if (prompt_tokens > 0) {
    return Status::InvalidArgument(
        "--prompt-tokens N sets the prompt length of a Python script's generate() calls: give "
        "--script FILE (a transformers command takes its own --prompt-tokens after --)");
  }
  ScriptInvocation inv;
  inv.engine = EngineForCommand(argv);
  if (inv.engine == nullptr && argv.size() > 1) {
    // A launch line the engines do not read as words (`docker run ... vllm/vllm-openai ...`,
    // `nohup vllm serve ...`, `sudo -E ...`): read it as the one shell line it was, as
    // --script reads one, with each word quoted so nothing in it expands.
    auto read = ReadDeployScript(ShellLine(argv), "the command", options);
    if (read.ok() && !read->invocations.empty()) {
      for (const std::string& note : read->notes) fmt::print(stderr, "vramfit check: {}\n", note);
      return std::move(read->invocations);
    }
  }
  if (inv.engine == nullptr) {
    // Two launch lines that start an engine but name no model vramfit can read: say which.
    std::string hint;
    for (size_t i = 0; i + 1 < argv.size(); ++i) {
      if (argv[i].ends_with("ollama") && argv[i + 1] == "serve") {
        hint = " (`ollama serve` loads no model: check the `ollama run MODEL` that loads one)";
      }
      if (argv[i + 1].ends_with(".py") && !std::filesystem::is_regular_file(argv[i + 1])) {
        hint = fmt::format(" ({}: no such file here to read as a Python program; give its path, "
                           "or --script FILE)",
                           argv[i + 1]);
      }
      if ((argv[i].ends_with("docker") || argv[i].ends_with("podman")) && argv[i + 1] == "run") {
        hint = " (a container whose image vramfit does not know runs its own entrypoint: write "
               "the engine command after the image, or give that command itself)";
      }
    }
    return Status::InvalidArgument(
        fmt::format("expected a {} command after --: {}{}", EngineTitles(), forms, hint));
  }
  inv.argv = argv;
  // A CUDA_VISIBLE_DEVICES prefix limits the GPUs as it does in a script: the script reader
  // counts them (a command that needs more exits 2 below, as vLLM stops with "World size ...
  // is larger than the number of available GPUs").
  const bool limits = std::any_of(argv.begin(), argv.end(), [](const std::string& w) {
    return w.rfind("CUDA_VISIBLE_DEVICES=", 0) == 0 || w.rfind("NVIDIA_VISIBLE_DEVICES=", 0) == 0;
  });
  if (limits) {
    auto read = ReadDeployScript(ShellLine(argv), "the command", options);
    if (read.ok() && read->invocations.size() == 1) {
      inv.gpus_visible = read->invocations[0].gpus_visible;
      inv.gpus_from = read->invocations[0].gpus_from;
    }
  }
  return std::vector<ScriptInvocation>{std::move(inv)};
}

// For a model path that is not here whose last component is a catalog entry's id or repo
// name: that entry as a ready --model-as flag; "" otherwise (a nearest guess could mislead).
std::string ModelAsSuggestion(const std::string& path) {
  std::string_view p = path;
  while (p.size() > 1 && p.back() == '/') p.remove_suffix(1);
  const std::string_view base = p.substr(p.rfind('/') + 1);
  if (base.empty()) return "";
  auto found = FindCatalogModel(base);
  if (!found.ok()) return "";
  return fmt::format(": the catalog has {}, so --model-as {}={} if that is the model", found->id,
                     std::string(p), found->id);
}

// For a model that only a downloader resolves, what to pass instead: an Ollama library name
// (`ollama run qwen3:8b`; Ollama pulls it from its registry, which vramfit does not read) or a
// llama.cpp `-hf ORG/REPO[:QUANT]` whose Hub read failed. "" for other engines and names.
std::string DownloadedModelHint(const Engine& engine, const std::string& model) {
  if (engine.name == "ollama" && model.find('/') == std::string::npos &&
      !model.ends_with(".gguf")) {
    // A NAME:TAG's own error names the nearest already (vramfit/ollama_library.h).
    const std::string near =
        model.find(':') == std::string::npos ? NearestOllamaLibraryNames(model, 3) : "";
    return fmt::format(
        " (\"{}\" is an Ollama library name, which vramfit does not download: give the GGUF "
        "file Ollama pulled, the blob on the FROM line of `ollama show --modelfile {}` (under "
        "~/.ollama/models/blobs/), or a Hub GGUF as hf.co/ORG/REPO:QUANT{})",
        model, model,
        near.empty() ? "" : "; the library names vramfit plans without a file nearest to it: " +
                                near);
  }
  if (engine.name == "llamacpp" && model.find('/') != std::string::npos &&
      model.find('/') != 0 && !model.ends_with(".gguf")) {
    return " (llama.cpp's -hf downloads a .gguf file from the Hub: without a network, give that "
           "file as -m FILE.gguf)";
  }
  return "";
}

// check's exit code is a deploy gate: 0 only for a plain "fits". A plan that fits only without
// memory it could not count (an unread draft model or projector: `not_counted`, verdict
// UNCERTAIN) exits 1 like a predicted failure, since the launch may still run out of memory.
int CheckExit(const Plan& plan) {
  return plan.fits && plan.not_counted.empty() ? kExitOk : kExitCheckFails;
}

// A refused command that carries one of check's own options after -- (`-- vllm serve M --gpu
// h100`, where vLLM reads --gpu as its --gpu-memory-utilization): the hint that the option
// goes before --, or "".
std::string OwnOptionAfterDashes(const std::vector<std::string>& argv) {
  static constexpr std::string_view kOwn[] = {"--gpu",  "--gpu-memory", "--other-memory",
                                              "--json", "--html",       "--model-as"};
  for (const std::string& w : argv) {
    const std::string_view name = std::string_view(w).substr(0, w.find('='));
    for (std::string_view o : kOwn) {
      if (name == o) {
        return fmt::format(" ({} after -- belongs to the engine's command; vramfit check's own "
                           "{} goes before --)", o, o);
      }
    }
  }
  return "";
}

// Checks one engine command: prints its diagnostics, puts its report in *out, returns its
// exit code. `version` is the --<engine>-version given ("" for none).
int CheckOne(const CheckRun& run, const ScriptInvocation& inv, std::string version,
             std::string* out) {
  const Engine* engine = inv.engine;
  const std::string where = inv.where.empty() ? "" : inv.where + ": ";
  auto fail = [&](const std::string& m) {
    fmt::print(stderr, "vramfit check: {}{}{}\n", where, m, OwnOptionAfterDashes(inv.argv));
    return kExitUsage;
  };
  if (const std::string dash = TypographicDashFlag(inv.argv); !dash.empty()) return fail(dash);
  auto argv = engine->expand_config != nullptr ? engine->expand_config(inv.argv, ReadTextFile)
                                                : Result<std::vector<std::string>>(inv.argv);
  if (!argv.ok()) return fail(argv.status().message());
  auto cmd = engine->read_command(*argv);
  if (!cmd.ok()) return fail(cmd.status().message());
  if (version.empty() && !inv.version.empty()) {
    const Status s = engine->check_version(inv.version);
    if (s.ok()) {
      version = inv.version;
    } else {
      fmt::print(stderr, "vramfit check: {}image {}: {}; planned with the newest modelled {}\n",
                 where, inv.image, s.message(), engine->title);
    }
  }
  std::string mapped;
  for (const auto& [path, id] : run.model_as) {
    std::string_view m = cmd->model, p = path;
    while (m.size() > 1 && m.back() == '/') m.remove_suffix(1);
    while (p.size() > 1 && p.back() == '/') p.remove_suffix(1);
    if (m == p) mapped = id;
  }
  if (run.headers) {
    std::string line;
    for (const std::string& w : inv.argv) line += (line.empty() ? "" : " ") + w;
    fmt::print(run.json ? stderr : stdout, "{}{}{}\n", where, line,
               mapped.empty() ? "" : fmt::format("  (model read as {})", mapped));
  }
  const std::string launched = cmd->model;
  if (!mapped.empty()) cmd->model = mapped;
  // The Hub revision the command names: a Hub id is read at it; a catalogued model (read
  // offline, as catalogued) and a local directory are not, and say so.
  if (!cmd->revision.empty()) {
    auto ref = ResolveModel(cmd->model);
    if (ref.ok() && ref->kind == ModelKind::kHub && cmd->model.find('@') == std::string::npos) {
      cmd->model += "@" + cmd->revision;
    } else if (ref.ok() && ref->kind != ModelKind::kHub) {
      cmd->unmodelled_flags.push_back(fmt::format(
          "--revision {} (the model is read {}, not at that revision)", cmd->revision,
          ref->kind == ModelKind::kCatalog ? "as the catalog holds it" : "from its path"));
    }
  }
  if (!cmd->unmodelled_env.empty()) {
    fmt::print(stderr, "vramfit check: {}environment not modelled (ignored): {}\n", where,
               fmt::join(cmd->unmodelled_env, " "));
  }
  // A known image's entrypoint stands in for the launcher its tag has: not the user's word.
  if (!inv.version.empty()) cmd->launcher.clear();
  if (engine->check_flags != nullptr) {
    const Status s = engine->check_flags(*cmd, version);
    if (!s.ok()) return fail(s.message());
  }
  // Flags (-x, --name) and environment variables (NAME) of no memory effect, a line each.
  std::vector<std::string> no_memory_flags, no_memory_env;
  for (const std::string& n : cmd->no_memory_flags) {
    (n.starts_with("-") ? no_memory_flags : no_memory_env).push_back(n);
  }
  if (!no_memory_flags.empty()) {
    fmt::print(stderr, "vramfit check: {}flags read, no memory effect: {}\n", where,
               fmt::join(no_memory_flags, " "));
  }
  if (!no_memory_env.empty()) {
    fmt::print(stderr, "vramfit check: {}environment read, no memory effect: {}\n", where,
               fmt::join(no_memory_env, " "));
  }
  if (!cmd->unmodelled_flags.empty()) {
    fmt::print(stderr, "vramfit check: {}flags not modelled (ignored): {}\n", where,
               fmt::join(cmd->unmodelled_flags, " "));
  }
  // What the engine's image installs beside it (vLLM's: FlashInfer), read as vramfit's flags
  // after the user's own were checked against the engine's parser.
  for (const std::string& f : inv.install_flags) cmd->flags.emplace_back(f, "");
  EngineSettings base = cmd->settings;
  if (!version.empty()) base.version = version;
  auto settings = engine->read_flags(cmd->flags, base);
  if (!settings.ok()) return fail(settings.status().message());
  const int64_t world = settings->tensor_parallel_size * settings->pipeline_parallel_size *
                        settings->data_parallel_size;
  if (inv.gpus_visible >= 0 && world > inv.gpus_visible) {
    return fail(fmt::format("{} leaves {} GPU(s) visible; the command needs {} (tensor "
                            "parallel {} x pipeline parallel {} x data parallel {})",
                            inv.gpus_from, inv.gpus_visible, world,
                            settings->tensor_parallel_size, settings->pipeline_parallel_size,
                            settings->data_parallel_size));
  }
  if (!run.other_memory.empty()) {
    auto b = ReadMemoryFlag("--other-memory", run.other_memory);
    if (!b.ok()) return fail(b.status().message());
    settings->other_process_bytes = *b;
  }
  ReadDraftModel("check", &*settings);
  ReadMmproj("check", &*settings);
  auto gpus = ResolveGpus(run.gpu, run.gpu_memory);
  if (!gpus.ok()) return fail(gpus.status().message());
  if (Status s = ApplyStageGpus(*engine, *gpus, &*settings); !s.ok()) return fail(s.message());
  const GpuSpec* gpu = &gpus->front();
  InspectOptions model_options = ModelOptions();
  model_options.ollama_names = engine->name == "ollama";  // `ollama run qwen3` is qwen3:latest
  // A .gguf path that is not here: the what-if its file name spells (Qwen3-8B-Q4_K_M.gguf).
  model_options.gguf_names = engine->name == "llamacpp" || engine->name == "ollama";
  auto inv_model = InspectModel(cmd->model, model_options);
  if (!inv_model.ok()) {
    std::string hint;
    std::error_code ec;  // a path that is here but unreadable needs no hint about elsewhere
    const std::string& m = cmd->model;
    const bool path = !m.empty() && (m[0] == '/' || m.starts_with("./") ||
                                     m.starts_with("../") || m.starts_with("~/"));
    if (path && run.model_as.empty() && !std::filesystem::exists(m, ec)) {
      hint = " (a path on the serving machine? --model-as PATH=ID reads it as a Hub or catalog "
             "model" + ModelAsSuggestion(cmd->model) + ")";
    } else if (run.model_as.empty() && !std::filesystem::exists(cmd->model, ec)) {
      hint = DownloadedModelHint(*engine, cmd->model);
    }
    return fail(inv_model.status().message() + hint);
  }
  if (!mapped.empty()) {
    // --model-as PATH=ID: the numbers are ID's, the command names PATH, what the user launches.
    inv_model->model = launched;
    inv_model->repo.clear();
  } else {
    NoteCatalogByName(cmd->model);
  }
  NoteGenericReading(*inv_model);
  TakeWhatIfMmproj(*engine, std::any_of(cmd->flags.begin(), cmd->flags.end(),
                                        [](const auto& f) { return f.first == "--no-mmproj"; }),
                   &*settings, &*inv_model);
  auto model = engine->prepare(*inv_model);
  if (!model.ok()) return fail(model.status().message());
  auto plan = (*model)->MakePlan(*gpu, *settings);
  if (!plan.ok()) return fail(plan.status().message());
  CarryWhatIf(*inv_model, &*plan);
  for (const std::string& w : plan->without_effect) {
    fmt::print(stderr, "vramfit check: without effect here (not modelled): {}\n", w);
  }
  auto advice = Advise(*engine, **model, *gpu, *settings, *plan);
  for (Advice& a : VariantAdvice(*engine, *inv_model, *gpu, *settings, *plan)) {
    advice.push_back(std::move(a));
  }
  if (!run.html.empty()) {
    const Status s = WriteHtmlFile(run.html, RenderPlanHtml(*plan, advice));
    if (!s.ok()) return fail(s.message());
    if (run.html == "-") return CheckExit(*plan);
  }
  *out = run.json ? RenderPlanJson(*plan, advice, {}) : RenderPlanText(*plan, advice, {});
  if (run.json && run.headers && !out->empty() && out->back() == '\n') out->pop_back();
  return CheckExit(*plan);
}
}  // namespace

void SetCheckCommand(std::vector<std::string> command) { CheckCommand() = std::move(command); }

std::function<int()> SetupCheck(CLI::App* app) {
  struct Flags {
    std::string gpu, gpu_memory, other_memory, engine, model, script, html, prompt_tokens;
    std::deque<std::string> engine_versions;  // --<engine>-version, one per engine
    std::vector<std::string> env_files, model_as;
    bool json = false;
  };
  auto f = std::make_shared<Flags>();
  app->add_option("--gpu", f->gpu, kGpuListHelp);
  app->add_option("--gpu-memory", f->gpu_memory,
                  "GPU memory as CUDA reports it, e.g. 24GiB (comma-separated: one per card)");
  f->engine_versions.resize(Engines().size());
  for (size_t i = 0; i < Engines().size(); ++i) {
    const Engine& e = *Engines()[i];
    app->add_option(fmt::format("--{}-version", e.name), f->engine_versions[i],
                    fmt::format("The {} release the command runs (default: newest modelled)",
                                e.title));
  }
  app->add_option("--other-memory", f->other_memory,
                  "Memory other processes already hold on each GPU");
  app->add_flag("--json", f->json, "Print the plan as JSON (schema vramfit.plan/1; with --script "
                                   "or a command as one word, vramfit.check-script/1)");
  app->add_option("--html", f->html,
                  "Also write a self-contained HTML report to FILE (-: stdout; one command)");
  // `check --engine E MODEL [E's flags]`: the same as `check -- E MODEL [flags]` for an engine
  // whose command line is its name and the model (transformers).
  app->add_option("--engine", f->engine, "With MODEL and the engine's flags instead of -- COMMAND");
  app->add_option("MODEL", f->model, "The model, with --engine");
  app->add_option("--script", f->script,
                  "A deploy script (shell): check every engine command it starts (- for stdin)");
  app->add_option("--prompt-tokens", f->prompt_tokens,
                  "Tokens in each prompt of a Python script's generate() / pipeline calls "
                  "(default: estimated from literal prompts; the whole context for prompts "
                  "read at run time)")
      ->type_name("N");
  app->add_option("--env", f->env_files,
                  "An environment file (NAME=value lines) the script's variables come from");
  app->add_option("--model-as", f->model_as,
                  "PATH=ID: read the model at PATH (on the serving machine) as Hub or catalog "
                  "ID");
  app->allow_extras();
  std::string examples;
  for (const Engine* e : Engines()) {
    examples += fmt::format("\n  vramfit check --gpu 4090 -- {}", e->command_example);
  }
  app->footer(fmt::format("Give the {} command after --, e.g.{}\n  vramfit check --gpu 4090 "
                          "--script deploy.sh --model-as /srv/qwen=Qwen/Qwen3-8B",
                          EngineTitles(), examples));
  return [f, app]() {
    auto fail = [](const std::string& m) {
      fmt::print(stderr, "vramfit check: {}\n", m);
      return kExitUsage;
    };
    std::vector<std::string> argv = CheckCommand();
    std::vector<std::string> extras = app->remaining();
    if (f->engine.empty() && !f->model.empty() && !argv.empty()) {
      // `check --gpus 2 -- vllm serve ...`: the 2 was read as MODEL; it is a stray word.
      extras.push_back(f->model);
      f->model.clear();
    }
    if (!f->engine.empty() && f->model.empty() && !argv.empty()) {
      // `--engine E -- COMMAND`: the engine named twice, which is fine when both agree.
      auto choice = FindEngine(f->engine);
      if (!choice.ok()) return fail(choice.status().message());
      const Engine* of_command = EngineForCommand(argv);
      if (of_command != nullptr && of_command != choice->engine) {
        return fail(fmt::format("--engine {}, but the command after -- is for {} (leave --engine "
                                "out: the command names its engine)",
                                choice->engine->name, of_command->title));
      }
      if (!choice->version.empty()) {
        for (size_t i = 0; i < Engines().size(); ++i) {
          if (Engines()[i] == choice->engine) f->engine_versions[i] = choice->version;
        }
      }
    } else if (f->engine.empty() && !f->model.empty() && f->script.empty() &&
               (f->model.ends_with(".sh") || f->model.ends_with(".py") ||
                f->model.ends_with(".bash")) &&
               std::filesystem::is_regular_file(f->model)) {
      // `check deploy.sh` / `check infer.py`: a script given as the model. Read as --script.
      fmt::print(stderr, "vramfit check: {}: read as --script {}\n", f->model, f->model);
      f->script = f->model;
      f->model.clear();
    } else if (f->engine.empty() && !f->model.empty()) {
      return fail(fmt::format(
          "{}: which engine runs it? give --engine vllm (or transformers, llamacpp, sglang, "
          "ollama) with the model, or the whole command after --, e.g. `vramfit check --gpu GPU "
          "-- vllm serve {} ...`",
          f->model, f->model));
    } else if (!f->engine.empty() || !f->model.empty()) {
      auto choice = FindEngine(f->engine);
      if (!choice.ok()) return fail(choice.status().message());
      if (!argv.empty()) return fail("give either --engine with MODEL or a command after --");
      argv = {std::string(choice->engine->name), f->model};
      argv.insert(argv.end(), extras.begin(), extras.end());
      extras.clear();
      if (!choice->engine->recognizes(argv)) {
        return fail(fmt::format("--engine {}: give its command after -- ({})",
                                choice->engine->name, choice->engine->command_forms));
      }
      if (!choice->version.empty()) {
        for (size_t i = 0; i < Engines().size(); ++i) {
          if (Engines()[i] == choice->engine) f->engine_versions[i] = choice->version;
        }
      }
    }
    if (!extras.empty()) {
      std::vector<std::string> names;
      for (const CLI::Option* o : app->get_options()) {
        for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
      }
      std::string hints;
      // "--gpu 2x rtx3090": a count written before the card, the card then a stray word.
      if (const std::string n = GpuCountWord(f->gpu); !n.empty()) {
        hints += fmt::format("; --gpu {} {}: --gpu names one card (--gpu {}); the GPU count is "
                             "the command's own flag after -- (vLLM -tp {}, SGLang --tp-size {})",
                             f->gpu, extras[0], extras[0], n, n);
      }
      for (const std::string& w : extras) {
        const std::string flag = w.substr(0, w.find('='));
        if (flag == "--gpus" || flag == "--num-gpus" || flag == "--gpu-count") {
          hints += fmt::format("; {}: the GPU count is the command's own flag after -- (vLLM "
                               "-tp 2, SGLang --tp-size 2)", flag);
        } else if (std::string near = flag.starts_with("--") ? NearestName(flag, names) : "";
                   !near.empty()) {
          hints += fmt::format("; {}: did you mean {}?", flag, near);
        }
      }
      return fail(fmt::format("{} before -- {} not check's (engine flags go after -- with the "
                              "command, or after --engine E MODEL){}",
                              fmt::join(extras, " "), extras.size() == 1 ? "is" : "are", hints));
    }
    int64_t prompt_tokens = 0;
    if (!f->prompt_tokens.empty()) {
      auto n = ParseTokenCount("--prompt-tokens", f->prompt_tokens);
      if (!n.ok()) return fail(n.status().message());
      if (*n < 1 || *n > (int64_t{1} << 31) - 1) {
        return fail(fmt::format("--prompt-tokens {}: expected 1 to 2147483647",
                                f->prompt_tokens));
      }
      prompt_tokens = *n;
    }
    auto invocations = Invocations(f->script, f->env_files, argv, prompt_tokens);
    if (!invocations.ok()) return fail(invocations.status().message());
    CheckRun run;
    run.gpu = f->gpu;
    run.gpu_memory = f->gpu_memory;
    run.other_memory = f->other_memory;
    run.json = f->json;
    run.headers = invocations->size() > 1 || !f->script.empty() || argv.size() == 1;
    run.html = f->html;
    if (!run.html.empty() && invocations->size() > 1) {
      return fail(fmt::format("--html draws one command; the script starts {}",
                              invocations->size()));
    }
    for (const std::string& m : f->model_as) {
      const size_t eq = m.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == m.size()) {
        return fail(fmt::format("--model-as \"{}\": expected PATH=ID", m));
      }
      run.model_as.emplace_back(m.substr(0, eq), m.substr(eq + 1));
    }
    int worst = kExitOk;
    std::vector<std::string> json;
    for (const ScriptInvocation& inv : *invocations) {
      std::string version;
      for (size_t i = 0; i < Engines().size(); ++i) {
        if (Engines()[i] == inv.engine) version = f->engine_versions[i];
      }
      std::string out;
      const int rc = CheckOne(run, inv, version, &out);
      worst = std::max(worst, rc);
      if (rc == kExitUsage) continue;
      if (run.json && run.headers) {
        json.push_back(fmt::format("{{\"where\": {}, \"exit\": {}, \"plan\": {}}}",
                                   JsonString(inv.where), rc, out));
      } else {
        std::fwrite(out.data(), 1, out.size(), stdout);
      }
    }
    if (run.json && run.headers) {
      fmt::print("{{\"schema\": \"vramfit.check-script/1\", \"exit\": {}, \"invocations\": "
                 "[{}]}}\n",
                 worst, fmt::join(json, ", "));
    }
    return worst;
  };
}

}  // namespace vramfit::cli
