// The vramfit command line: one table of subcommands (each lives in cmd_<name>.cc), parsed and
// run by Run, which main() calls and the command-line fuzz target drives.
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.h"
#include "engine_flags.h"
#include "vramfit/engine.h"
#include "vramfit/suggest.h"

namespace vramfit::cli {
namespace {

// The subcommand table.
std::vector<Command> Commands() {
  const std::string engines = EngineTitles();
  return {
      {"inspect", "Read a checkpoint (or a catalog model) exactly: parameters, bytes by dtype and "
                  "component, quantization, audit", SetupInspect},
      {"models", "List the embedded model catalog", SetupModels},
      {"plan", fmt::format("Plan {}'s start-up stage by stage on a GPU: where it would run out of "
                           "memory, and what fits", engines), SetupPlan},
      {"check", fmt::format("Check a real {} command line: exit 0 if it will start, 1 if it will "
                            "fail (give it after --)", engines), SetupCheck},
      {"fit", fmt::format("Find the {} settings that fit: longest context, most concurrency or "
                          "fewest GPUs, as a command line", engines), SetupFit},
      {"doctor", "Read an out-of-memory log: the stage, the cause and the fixes, with numbers",
       SetupDoctor},
      {"serve", "A local web page: pick a model, GPUs and flags, see the plan and its pictures "
                "(127.0.0.1 only unless --bind)", SetupServe},
      {"gpus", "List the embedded GPU catalog (memory as CUDA reports it)", SetupGpus},
      {"kv", "KV cache (and linear-attention state) of a context and a batch, from a model or "
             "from raw dimensions", SetupKv},
      {"monitor", "Run an engine (give it after --) and watch its GPU memory stage by stage "
                  "against the plan (needs the NVIDIA driver)", SetupMonitor},
  };
}

thread_local FILE* t_out = nullptr;
thread_local FILE* t_err = nullptr;
thread_local std::istream* t_in = nullptr;

}  // namespace

std::string GpuCountWord(const std::string& value) {
  if (value.size() < 2 || (value.back() != 'x' && value.back() != 'X')) return "";
  const std::string n = value.substr(0, value.size() - 1);
  return std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; }) ? n : "";
}

std::string TypographicDashFlag(const std::vector<std::string>& words) {
  // UTF-8 of U+2014 (em dash), U+2013 (en dash), U+2212 (minus sign).
  static constexpr std::pair<std::string_view, std::string_view> kDashes[] = {
      {"\xE2\x80\x94", "an em dash (U+2014)"},
      {"\xE2\x80\x93", "an en dash (U+2013)"},
      {"\xE2\x88\x92", "a minus sign (U+2212)"}};
  for (const std::string& w : words) {
    for (const auto& [dash, name] : kDashes) {
      if (!w.starts_with(dash)) continue;
      std::string_view rest = std::string_view(w).substr(dash.size());
      const std::string_view flag = rest.substr(0, rest.find('='));
      const bool word = !flag.empty() && std::isalpha(static_cast<unsigned char>(flag[0])) &&
                        std::all_of(flag.begin(), flag.end(), [](char c) {
                          return std::isalnum(static_cast<unsigned char>(c)) || c == '-' ||
                                 c == '_';
                        });
      if (!word) continue;
      return fmt::format("{} starts with {}, not ASCII hyphens (a word processor or chat app "
                         "rewrote `--`); type it as --{}", w, name, rest);
    }
  }
  return "";
}

namespace {

// After "unexpected argument(s)": for each word that looks like a flag, the subcommand's flag
// it was probably meant to be ("; --max-model-length: did you mean --max-model-len?"), and for
// the usual ways of asking for a GPU count, how vramfit asks for it.
std::string FlagHints(const CLI::App& app, const std::vector<std::string>& words) {
  static constexpr std::string_view kGpuCount[] = {"--gpus", "--num-gpus", "--num-gpu",
                                                   "--n-gpus", "--ngpus", "--gpu-count"};
  std::vector<std::string> names;
  bool has_tp = false;
  for (const CLI::App* sub : app.get_subcommands()) {
    for (const CLI::Option* o : sub->get_options()) {
      for (const std::string& l : o->get_lnames()) {
        names.push_back("--" + l);
        has_tp |= l == "tensor-parallel-size";
      }
    }
  }
  std::string out;
  for (const std::string& w : words) {
    if (!w.starts_with("--")) continue;
    const std::string flag = w.substr(0, w.find('='));
    if (std::find(std::begin(kGpuCount), std::end(kGpuCount), flag) != std::end(kGpuCount) &&
        has_tp) {
      out += fmt::format("; {}: the GPU count is --tensor-parallel-size N (and "
                         "--pipeline-parallel-size N for stages) beside one --gpu NAME", flag);
      continue;
    }
    if (std::string near = NearestName(flag, names); !near.empty()) {
      out += fmt::format("; {}: did you mean {}?", flag, near);
    }
  }
  return out;
}

// `plan` and `fit` with an engine flag pasted from a server command that changes no memory
// (`--host 0.0.0.0`, `--port 8000`, `--trust-remote-code`): the flag and its value are taken
// out of `args` before parsing, and their names returned, to be said in one line as `check`
// says them. The engine is --engine's (the table's first without one); a flag of `sub` itself
// is never taken.
std::vector<std::string> TakeNoMemoryFlags(const CLI::App& sub, std::vector<std::string>* args) {
  std::string spec;
  for (size_t i = 1; i < args->size(); ++i) {
    const std::string& w = (*args)[i];
    if (w == "--engine" && i + 1 < args->size()) spec = (*args)[i + 1];
    if (w.starts_with("--engine=")) spec = w.substr(9);
  }
  auto choice = FindEngine(spec.empty() ? Engines().front()->name : std::string_view(spec));
  std::vector<std::string> taken;
  if (!choice.ok() || choice->engine->no_memory_effect == nullptr) return taken;
  std::vector<std::string> kept = {std::move(args->front())};
  for (size_t i = 1; i < args->size(); ++i) {
    std::string& w = (*args)[i];
    const size_t eq = w.find('=');
    const std::string name = w.substr(0, eq);
    bool valued = false;
    if (w.size() < 2 || w[0] != '-' || sub.get_option_no_throw(name) != nullptr ||
        !choice->engine->no_memory_effect(name, &valued)) {
      kept.push_back(std::move(w));
      continue;
    }
    if (valued && eq == std::string::npos && i + 1 < args->size()) ++i;  // its value
    if (std::find(taken.begin(), taken.end(), name) == taken.end()) taken.push_back(name);
  }
  *args = std::move(kept);
  return taken;
}

}  // namespace

FILE* Out() { return t_out != nullptr ? t_out : stdout; }
FILE* Err() { return t_err != nullptr ? t_err : stderr; }
std::istream& In() { return t_in != nullptr ? *t_in : std::cin; }

Captured RunCaptured(std::vector<std::string> args, std::string_view input) {
  char* out_buf = nullptr;
  char* err_buf = nullptr;
  size_t out_len = 0, err_len = 0;
  FILE* out = open_memstream(&out_buf, &out_len);
  FILE* err = open_memstream(&err_buf, &err_len);
  Captured c;
  if (out == nullptr || err == nullptr) {
    if (out != nullptr) std::fclose(out);
    if (err != nullptr) std::fclose(err);
    std::free(out_buf);
    std::free(err_buf);
    c.exit_code = kExitUsage;
    c.err = "cannot capture the command's output";
    return c;
  }
  std::istringstream in{std::string(input)};
  t_out = out;
  t_err = err;
  t_in = &in;
  c.exit_code = Run(std::move(args));
  t_out = nullptr;
  t_err = nullptr;
  t_in = nullptr;
  std::fclose(out);
  std::fclose(err);
  c.out.assign(out_buf, out_len);
  c.err.assign(err_buf, err_len);
  std::free(out_buf);
  std::free(err_buf);
  return c;
}

InspectOptions ModelOptions() {
  InspectOptions o;
  o.hub_progress = [](const HubProgress& p) {
    fmt::print(stderr,
               "\rvramfit: reading {} from the Hugging Face Hub: {}/{} requests, {:.1f} MB, "
               "{:.1f} s{}",
               p.repo, p.requests_done, p.requests_total, static_cast<double>(p.bytes) / 1e6,
               p.seconds, p.done ? "\n" : "");
    std::fflush(stderr);
  };
  return o;
}

int Run(std::vector<std::string> args) {
  CLI::App app{"vramfit: will this model fit on these GPUs, where would it run out of memory, "
               "and what makes it fit.\nExit codes: 0 ok, 1 check predicts a failure, 2 usage "
               "error or invalid input."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "vramfit 0.1.0");
  std::map<CLI::App*, std::function<int()>> runners;
  for (const auto& c : Commands()) {
    CLI::App* sub = app.add_subcommand(c.name, c.summary);
    runners[sub] = c.setup(sub);
  }
  // Engines spell some flags with one dash and several letters (-tp); CLI11 would read them as
  // bundled short flags.
  // `check ... -- COMMAND...`: everything after "--" is the user's engine command.
  const auto dashdash = std::find(args.begin(), args.end(), "--");
  SetCheckCommand(dashdash == args.end() ? std::vector<std::string>{}
                                         : std::vector<std::string>(dashdash + 1, args.end()));
  SetMonitorCommand(dashdash == args.end() ? std::vector<std::string>{}
                                           : std::vector<std::string>(dashdash + 1, args.end()));
  if (dashdash != args.end()) args.erase(dashdash, args.end());
  for (const Engine* e : Engines()) {
    args = ExpandShortNames(e->flags, std::move(args));
    args = JoinListWords(e->flags, std::move(args));
  }
  std::vector<std::string> no_memory;
  if (!args.empty() && (args.front() == "plan" || args.front() == "fit")) {
    no_memory = TakeNoMemoryFlags(*app.get_subcommand(args.front()), &args);
  }
  if (!args.empty() && !args.front().empty() && args.front()[0] != '-') {
    // A first word that is no subcommand: CLI11 would only say one is required.
    std::string names;
    bool known = false;
    for (const auto& c : Commands()) {
      known |= args.front() == c.name;
      names += (names.empty() ? "" : ", ") + std::string(c.name);
    }
    if (!known) {
      fmt::print(Err(), "vramfit: unknown subcommand \"{}\"; the subcommands: {} (`vramfit "
                 "--help` says what each does)\n", args.front(), names);
      return kExitUsage;
    }
  }
  const std::vector<std::string> given = args;  // CLI11's parse consumes `args`
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments in reverse order
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ExtrasError& e) {
    // Words no flag of the subcommand takes: name them and the subcommand, and where its
    // flags are listed (CLI11's own text names neither and lists the words backwards).
    std::string sub = "vramfit", words;
    for (const CLI::App* s : app.get_subcommands()) sub += " " + s->get_name();
    std::vector<std::string> left;
    for (const CLI::App* s : app.get_subcommands()) left = s->remaining();
    for (const std::string& w : left) words += (words.empty() ? "" : " ") + w;
    if (words.empty()) words = e.what();
    if (const std::string dash = TypographicDashFlag(left); !dash.empty()) {
      fmt::print(Err(), "{}: {}\n", sub, dash);
      return kExitUsage;
    }
    // "--gpu 2x rtx3090": a count written before the card, which became a stray word.
    std::string count_hint;
    for (size_t i = 0; i + 2 < given.size(); ++i) {
      const std::string& v = given[i + 1];
      const std::string n = given[i] == "--gpu" ? GpuCountWord(v) : "";
      if (n.empty()) continue;
      count_hint = fmt::format("; --gpu {} {}: --gpu names one card (--gpu {}); the count is -tp "
                               "{} (tensor parallel; -pp for pipeline parallel), or --gpus {} "
                               "for fit",
                               v, given[i + 2], given[i + 2], n, n);
      break;
    }
    fmt::print(Err(), "{}: unexpected argument(s): {} (not a flag of `{}`, or a value without "
               "its flag; `{} --help` lists the flags){}{}\n", sub, words, sub, sub,
               FlagHints(app, left), count_hint);
    return kExitUsage;
  } catch (const CLI::ParseError& e) {
    // CLI11's words, headed by the subcommand they are about (`vramfit fit: --goal: banana
    // not in {context,concurrency,gpus}`), and where its flags are listed; a flag given
    // without its value says so in plain words (CLI11: "--gpu: 1 required TEXT missing").
    std::string sub = "vramfit", what = e.what();
    for (const CLI::App* s : app.get_subcommands()) sub += " " + s->get_name();
    const size_t colon = what.find(": 1 required ");
    if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr && colon != std::string::npos &&
        what.ends_with(" missing")) {
      const size_t type_at = colon + std::string_view(": 1 required ").size();
      what = fmt::format("{} needs a value ({})", what.substr(0, colon),
                         what.substr(type_at, what.size() - type_at - 8));
    }
    if (sub == "vramfit") {
      fmt::print(Err(), "vramfit: {} (`vramfit --help` lists the subcommands)\n", what);
    } else {
      fmt::print(Err(), "{}: {} (`{} --help` lists the flags)\n", sub, what, sub);
    }
    return kExitUsage;
  }
  for (auto& [sub, run] : runners) {
    if (!sub->parsed()) continue;
    if (!no_memory.empty()) {
      fmt::print(Err(), "vramfit {}: flags read, no memory effect: {}\n", sub->get_name(),
                 fmt::join(no_memory, " "));
    }
    return run();
  }
  return kExitUsage;
}

}  // namespace vramfit::cli
