// The vramfit command line: one table of subcommands (each lives in cmd_<name>.cc), parsed and
// run by Run, which main() calls and the command-line fuzz target drives.
#include <cstdio>
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "engine_flags.h"
#include "vramfit/engine.h"

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
      {"gpus", "List the embedded GPU catalog (memory as CUDA reports it)", SetupGpus},
      {"kv", "KV cache (and linear-attention state) of a context and a batch, from a model or "
             "from raw dimensions", SetupKv},
      {"monitor", "Run an engine (give it after --) and watch its GPU memory stage by stage "
                  "against the plan (needs the NVIDIA driver)", SetupMonitor},
  };
}

}  // namespace

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
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments in reverse order
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  for (auto& [sub, run] : runners) {
    if (sub->parsed()) return run();
  }
  return kExitUsage;
}

}  // namespace vramfit::cli
