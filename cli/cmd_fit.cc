// `vramfit fit MODEL --gpu NAME [--goal context|concurrency|gpus] [engine flags]`: the settings
// that fit, as a Pareto table and the engine's command; `--gpus-table` for every catalog card.
// Flags given in the engine's spelling are kept fixed; everything else is searched.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <utility>

#include "commands.h"
#include "engine_flags.h"
#include "vramfit/catalog.h"
#include "vramfit/fit.h"
#include "vramfit/gpu.h"
#include "vramfit/inspect.h"
#include "vramfit/report.h"
#include "vramfit/report_html.h"

namespace vramfit::cli {


// An unquantized model whose goal cannot be met: would AWQ 4-bit (then GPTQ 3-bit) meet it?
// Says so in one line with the command that plans it.
void ProposeWhatIf(const Engine& engine, const std::string& model, const FitRequest& req) {
  for (auto [method, bits] : {std::pair{"awq", 4}, std::pair{"gptq", 3}}) {
    InspectOptions options;
    options.as_quantized = MakeWhatIfQuant(method, bits, -2, false).value();
    auto inv = InspectModel(model, options);
    if (!inv.ok()) return;
    auto fit = Fit(engine, {{model, &*inv}}, req);
    if (!fit.ok() || !fit->met || fit->options.empty()) continue;
    const FitOption& best = fit->options.front();
    fmt::print(Out(),
               "what-if: {} would fit {} tokens at {:.2f}x concurrency on {} x {} (vramfit fit "
               "{} --as-quantized {}{})\n",
               inv->what_if, best.context, best.concurrency, best.gpus, best.gpu.name, model,
               method, bits == 4 ? "" : fmt::format(" --bits {}", bits));
    return;
  }
}

std::function<int()> SetupFit(CLI::App* app) {
  struct Flags {
    std::string model, gpu, gpu_memory, engine, goal = "context", min_context, html;
    int gpus = 0;
    double min_concurrency = 1;
    bool no_eager = false, no_variants = false, gpus_table = false, json = false;
    EngineFlagSlots engine_flags;
    WhatIfFlags what_if;
  };
  auto f = std::make_shared<Flags>();
  app->add_option("MODEL", f->model,
                  "Checkpoint directory, config.json, .safetensors or catalog id")
      ->required();
  app->add_option(
      "--gpu", f->gpu,
      "GPU name or alias (see `vramfit gpus`); with --goal gpus, limits the search to it");
  app->add_option("--gpu-memory", f->gpu_memory, "GPU memory as CUDA reports it, e.g. 24GiB");
  app->add_option(
      "--gpus", f->gpus,
      "GPUs available (default 1); with --goal gpus or --gpus-table the most tried (default 8)");
  app->add_option("--goal", f->goal,
                  "context: longest context at --min-concurrency; concurrency: most requests at "
                  "--min-context; gpus: fewest cards serving --min-context x --min-concurrency")
      ->check(CLI::IsMember({"context", "concurrency", "gpus"}));
  app->add_option("--min-context", f->min_context,
                  "Context the answer must reach (tokens, 128k, 128K)");
  app->add_option("--min-concurrency", f->min_concurrency,
                  "Full-length requests served at once (default 1)");
  app->add_flag("--no-eager", f->no_eager,
                "Keep CUDA graphs: never propose --enforce-eager (speed matters)");
  app->add_flag("--no-variants", f->no_variants,
                "Do not try the catalog's other quantizations of the model");
  app->add_flag("--gpus-table", f->gpus_table,
                "For every catalog GPU and count up to --gpus (8): the longest context");
  app->add_option("--engine", f->engine, EngineOptionHelp());
  app->add_flag("--json", f->json, "Print JSON (schema vramfit.fit/1)");
  app->add_option("--html", f->html, "Also write a self-contained HTML report to FILE (-: stdout)");
  AddEngineFlags(app, &f->engine_flags);
  AddWhatIfFlags(app, &f->what_if);
  app->footer(
      EngineTitles() +
      " flags given here are kept fixed; the others are searched. Every row is a plan that fits, "
      "and the\n"
      "printed command passes `vramfit check`.\n"
      "  vramfit fit Qwen/Qwen3-8B --gpu 4090\n"
      "  vramfit fit qwen3-4b-instruct-2507-awq --gpu 4090 --goal concurrency --min-context 32768\n"
      "  vramfit fit qwen3-30b-a3b --goal gpus --min-context 128K --min-concurrency 4\n"
      "  vramfit fit qwen3-8b --gpus-table");
  return [f, app]() {
    auto fail = [](const Status& s) {
      fmt::print(Err(), "vramfit fit: {}\n", s.message());
      return kExitUsage;
    };
    auto chosen = ReadEngineFlags(f->engine, f->engine_flags);
    if (!chosen.ok()) return fail(chosen.status());
    const Engine& engine = *chosen->engine;
    FitRequest req;
    req.base = chosen->settings;
    ReadDraftModel("fit", &req.base);
    ReadMmproj("fit", &req.base);
    // A setting is fixed when its flag was given.
    auto given = [&](Setting s) {
      const CLI::Option* o = app->get_option_no_throw(engine.flag_name(s));
      return o != nullptr && o->count() > 0;
    };
    req.fixed.tensor_parallel = given(Setting::kTensorParallel);
    req.fixed.pipeline_parallel = given(Setting::kPipelineParallel);
    req.fixed.max_model_len = given(Setting::kMaxModelLen) && req.base.max_model_len > 0;
    req.fixed.kv_cache_dtype = given(Setting::kKvCacheDtype);
    req.fixed.enforce_eager = given(Setting::kEnforceEager);
    req.fixed.gpu_memory_utilization = given(Setting::kGpuMemoryUtilization);
    req.fixed.max_num_batched_tokens = given(Setting::kMaxNumBatchedTokens);
    req.fixed.max_num_seqs = given(Setting::kMaxNumSeqs);
    if (req.base.max_model_len == -1) req.base.max_model_len = 0;  // auto is what fit does anyway
    req.goal = f->goal == "gpus"          ? FitGoal::kGpus
               : f->goal == "concurrency" ? FitGoal::kConcurrency
                                          : FitGoal::kContext;
    req.no_eager = f->no_eager;
    req.min_concurrency = f->min_concurrency;
    if (!f->min_context.empty()) {
      auto n = ParseTokenCount("--min-context", f->min_context);
      if (!n.ok()) return fail(n.status());
      req.min_context = *n;
    }
    const bool search_cards = req.goal == FitGoal::kGpus || f->gpus_table;
    if (f->gpus < 0 || f->gpus > 64 || (f->gpus == 0 && app->count("--gpus") > 0))
      return fail(Status::InvalidArgument(fmt::format("--gpus {}: expected 1 to 64", f->gpus)));
    req.max_gpus = f->gpus > 0 ? f->gpus : search_cards ? 8 : 1;
    if (!f->gpu.empty() || !f->gpu_memory.empty()) {
      auto gpu = ResolveGpu(f->gpu, f->gpu_memory);
      if (!gpu.ok()) return fail(gpu.status());
      req.cards.push_back(*gpu);
    } else if (search_cards) {
      auto all = GpuCatalog();
      if (!all.ok()) return fail(all.status());
      // The planner models CUDA; a laptop's GPU is not a card one buys or stacks.
      for (const GpuSpec& g : *all) {
        if (g.vendor == "nvidia" && !g.laptop) req.cards.push_back(g);
      }
    } else {
      return fail(Status::InvalidArgument(
          "--gpu NAME or --gpu-memory SIZE is required (or --goal gpus to search the "
          "catalog; see `vramfit gpus`)"));
    }
    InspectOptions model_options = ModelOptions();
    if (Status s = ApplyWhatIfFlags(f->what_if, &model_options); !s.ok()) return fail(s);
    model_options.ollama_names = engine.name == "ollama";
    // A .gguf path that is not here: the what-if its file name spells (Qwen3-8B-Q4_K_M.gguf).
    model_options.gguf_names = engine.name == "llamacpp" || engine.name == "ollama";
    auto inv = InspectModel(f->model, model_options);
    if (!inv.ok()) return fail(inv.status());
    NoteCatalogByName(f->model);
    NoteGenericReading(*inv);
    // A what-if is named as one (its rows are a checkpoint still to be made).
    // A file name that spells its what-if names it already.
    const bool spelled = inv->what_if.find(" for the missing file ") != std::string::npos ||
                         inv->what_if.find(" for the Hub file ") != std::string::npos;
    const std::string name = inv->what_if.empty() || spelled
                                 ? f->model
                                 : fmt::format("{} as {}", f->model, inv->what_if);
    const auto started = std::chrono::steady_clock::now();
    if (f->gpus_table) {
      uint64_t plans = 0;
      auto rows = FitGpusTable(engine, *inv, req.cards, req.max_gpus, req.base, &plans);
      if (!rows.ok()) return fail(rows.status());
      const GpusTableInfo info{name, std::string(engine.title), plans};
      const std::string out =
          f->json ? RenderGpusTableJson(*rows, info) : RenderGpusTableText(*rows, info);
      std::fwrite(out.data(), 1, out.size(), Out());
      return kExitOk;
    }
    std::vector<Inventory> variants;
    if (!f->no_variants && inv->what_if.empty() && inv->source.kind == ModelKind::kCatalog) {
      for (const std::string& id : CatalogVariants(inv->source.id)) {
        auto v = InspectModel(id, {});
        if (v.ok() && v->has_spec) variants.push_back(std::move(*v));
      }
    }
    std::vector<FitModel> models = {{name, &*inv}};
    for (const Inventory& v : variants) models.push_back({v.source.id, &v});
    auto result = Fit(engine, models, req);
    if (!result.ok()) return fail(result.status());
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!f->json) {
      fmt::print(Err(), "searched {} model(s) on {} card type(s): {} plans in {:.2f} s\n",
                 models.size(), req.cards.size(), result->plans, secs);
    }
    FitReportOptions o;
    o.goal = req.goal;
    if (!f->html.empty()) {
      Status s = WriteHtmlFile(f->html, RenderFitHtml(*result, o));
      if (!s.ok()) return fail(s);
      if (f->html == "-") return result->met ? kExitOk : kExitCheckFails;
    }
    const std::string out = f->json ? RenderFitJson(*result, o) : RenderFitText(*result, o);
    std::fwrite(out.data(), 1, out.size(), Out());
    if (!f->json) NotePlaceholderModels(out);
    if (!inv->what_if.empty() && !f->json) {
      fmt::print(Out(), "{}\n", WhatIfLine(inv->what_if, f->model));
    }
    if (!result->met && !f->json && inv->what_if.empty() && inv->has_spec &&
        !inv->spec.quant.quantized()) {
      ProposeWhatIf(engine, f->model, req);
    }
    return result->met ? kExitOk : kExitCheckFails;
  };
}

}  // namespace vramfit::cli
