// `vramfit check [--gpu NAME] [--json] -- COMMAND...`: reads the user's real engine command line
// (any engine of the table that recognizes it) and says whether it will start. Exit 0 fits, 1
// predicted failure, 2 bad input.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <iterator>

#include <fmt/ranges.h>

#include <deque>

#include "commands.h"
#include "engine_flags.h"
#include "vramfit/advice.h"
#include "vramfit/engine.h"
#include "vramfit/gpu.h"
#include "vramfit/inspect.h"
#include "vramfit/report.h"
#include "vramfit/report_html.h"

namespace vramfit::cli {


namespace {
std::vector<std::string>& CheckCommand() {
  thread_local std::vector<std::string> command;  // per thread: RunCaptured
  return command;
}
}  // namespace

void SetCheckCommand(std::vector<std::string> command) { CheckCommand() = std::move(command); }

std::function<int()> SetupCheck(CLI::App* app) {
  struct Flags {
    std::string gpu, gpu_memory, other_memory, engine, model, html;
    std::deque<std::string> engine_versions;  // --<engine>-version, one per engine
    bool json = false;
  };
  auto f = std::make_shared<Flags>();
  app->add_option("--gpu", f->gpu, "GPU name or alias (see `vramfit gpus`)");
  app->add_option("--gpu-memory", f->gpu_memory, "GPU memory as CUDA reports it, e.g. 24GiB");
  f->engine_versions.resize(Engines().size());
  for (size_t i = 0; i < Engines().size(); ++i) {
    const Engine& e = *Engines()[i];
    app->add_option(fmt::format("--{}-version", e.name), f->engine_versions[i],
                    fmt::format("The {} release the command runs (default: newest modelled)",
                                e.title));
  }
  app->add_option("--other-memory", f->other_memory,
                  "Memory other processes already hold on each GPU");
  app->add_flag("--json", f->json, "Print the plan as JSON (schema vramfit.plan/1)");
  app->add_option("--html", f->html, "Also write a self-contained HTML report to FILE (-: stdout)");
  // `check --engine E MODEL [E's flags]`: the same as `check -- E MODEL [flags]` for an engine
  // whose command line is its name and the model (transformers).
  app->add_option("--engine", f->engine, "With MODEL and the engine's flags instead of -- COMMAND");
  app->add_option("MODEL", f->model, "The model, with --engine");
  app->allow_extras();
  std::string examples;
  for (const Engine* e : Engines()) {
    examples += fmt::format("\n  vramfit check --gpu 4090 -- {}", e->command_example);
  }
  app->footer(fmt::format("Give the {} command after --, e.g.{}", EngineTitles(), examples));
  return [f, app]() {
    auto fail = [](const std::string& m) {
      fmt::print(stderr, "vramfit check: {}\n", m);
      return kExitUsage;
    };
    std::vector<std::string> argv = CheckCommand();
    std::vector<std::string> extras = app->remaining();
    if (!f->engine.empty() || !f->model.empty()) {
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
      return fail(fmt::format("{} argument(s) before -- that check does not take (engine flags "
                              "go after -- with the command, or after --engine E MODEL)",
                              extras.size()));
    }
    const Engine* engine = EngineForCommand(argv);
    if (engine == nullptr) {
      std::string forms;
      for (const Engine* e : Engines())
        forms += (forms.empty() ? "" : " or ") + std::string(e->command_forms);
      return fail(fmt::format("expected a {} command after --: {}", EngineTitles(), forms));
    }
    auto cmd = engine->read_command(argv);
    if (!cmd.ok()) return fail(cmd.status().message());
    if (!cmd->unmodelled_env.empty()) {
      fmt::print(stderr, "vramfit check: environment not modelled (ignored): {}\n",
                 fmt::join(cmd->unmodelled_env, " "));
    }
    if (!cmd->unmodelled_flags.empty()) {
      fmt::print(stderr, "vramfit check: flags not modelled (ignored): {}\n",
                 fmt::join(cmd->unmodelled_flags, " "));
    }
    EngineSettings base = cmd->settings;
    for (size_t i = 0; i < Engines().size(); ++i) {
      if (Engines()[i] == engine && !f->engine_versions[i].empty())
        base.version = f->engine_versions[i];
    }
    auto settings = engine->read_flags(cmd->flags, base);
    VRAMFIT_CLI_CHECK(settings.status());
    if (!f->other_memory.empty()) {
      auto b = ReadMemoryFlag("--other-memory", f->other_memory);
      if (!b.ok()) return fail(b.status().message());
      settings->other_process_bytes = *b;
    }
    ReadDraftModel("check", &*settings);
    auto gpu = ResolveGpu(f->gpu, f->gpu_memory);
    if (!gpu.ok()) return fail(gpu.status().message());
    auto inv = InspectModel(cmd->model, ModelOptions());
    if (!inv.ok()) return fail(inv.status().message());
    auto model = engine->prepare(*inv);
    if (!model.ok()) return fail(model.status().message());
    auto plan = (*model)->MakePlan(*gpu, *settings);
    if (!plan.ok()) return fail(plan.status().message());
    auto advice = Advise(*engine, **model, *gpu, *settings, *plan);
    for (Advice& a : VariantAdvice(*engine, *inv, *gpu, *settings, *plan)) {
      advice.push_back(std::move(a));
    }
    if (!f->html.empty()) {
      Status s = WriteHtmlFile(f->html, RenderPlanHtml(*plan, advice));
      if (!s.ok()) return fail(s.message());
      if (f->html == "-") return plan->fits ? kExitOk : kExitCheckFails;
    }
    const std::string out =
        f->json ? RenderPlanJson(*plan, advice, {}) : RenderPlanText(*plan, advice, {});
    std::fwrite(out.data(), 1, out.size(), stdout);
    return plan->fits ? kExitOk : kExitCheckFails;
  };
}

}  // namespace vramfit::cli
