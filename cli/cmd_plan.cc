// `vramfit plan MODEL --gpu NAME [--engine E] [engine flags] [--json] [--explain]`: an engine's
// start-up, stage by stage, on each GPU, with what fits when it does not.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <regex>

#include "commands.h"
#include "engine_flags.h"
#include "vramfit/advice.h"
#include "vramfit/catalog.h"
#include "vramfit/gpu.h"
#include "vramfit/inspect.h"
#include "vramfit/report.h"
#include "vramfit/report_html.h"
#include "vramfit/source.h"

namespace vramfit::cli {

Result<uint64_t> ReadMemoryFlag(const char* flag, const std::string& text) {
  const bool bare = !text.empty() && text.find_first_not_of("0123456789.") == std::string::npos;
  auto bytes = ParseMemorySize(bare ? text + "GiB" : text);
  if (!bytes.ok()) {
    std::string m(bytes.status().message());
    const std::string added = "\"" + text + "GiB\"";  // quote what was typed, not the unit added
    if (const size_t at = m.find(added); bare && at != std::string::npos) {
      m.replace(at, added.size(), "\"" + text + "\" (a bare number: GiB)");
    }
    return Status::InvalidArgument(std::string(flag) + ": " + m);
  }
  if (bare)
    fmt::print(Err(), "vramfit: {} {}: read as {} GiB (give a unit to say otherwise: {}GB)\n",
               flag, text, text, text);
  // GB and MB are powers of ten, as ParseMemorySize reads them: say what that comes to, since
  // GPU memory is counted in GiB (2^30) by CUDA, PyTorch and the engines.
  const size_t unit = text.find_first_not_of("0123456789. ");
  if (unit != std::string::npos) {
    std::string u = text.substr(unit);
    for (char& c : u) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (u == "gb" || u == "mb") {
      fmt::print(Err(), "vramfit: {} {}: read as {} bytes = {:.2f} GiB (GB and MB are powers of "
                 "ten; {}{} counts in powers of two)\n", flag, text, *bytes,
                 static_cast<double>(*bytes) / (1ULL << 30), text.substr(0, unit),
                 u == "gb" ? "GiB" : "MiB");
    }
  }
  return bytes;
}

std::vector<Advice> VariantAdvice(const Engine& engine, const Inventory& inv, const GpuSpec& gpu,
                                  const EngineSettings& settings, const Plan& plan) {
  if (plan.fits || inv.source.kind != ModelKind::kCatalog) return {};
  std::vector<Inventory> variants;
  for (const std::string& id : CatalogVariants(inv.source.id)) {
    auto v = InspectModel(id, {});
    if (v.ok() && v->has_spec) variants.push_back(std::move(*v));
  }
  std::vector<Alternative> alternatives;
  for (const Inventory& v : variants) {
    alternatives.push_back({v.repo.empty() ? v.source.id : v.repo, &v});
  }
  return AdviseAlternatives(engine, alternatives, gpu, settings, plan);
}

// FindGpu with a note on stderr when the name fits several cards: which one is read, and the
// ids that choose another.
Result<GpuSpec> FindGpuNoting(const std::string& name) {
  auto g = FindGpu(name);
  if (!g.ok()) {
    // "2x4090", "8xH100", "4090 x2", "4090,3090": a count or a list where one card is named.
    static const std::regex kCountFirst(R"(^\s*(\d+)\s*[xX*]\s*(\S.*)$)");
    static const std::regex kCountLast(R"(^(.*\S)\s*[xX*]\s*(\d+)\s*$)");
    std::smatch m;
    for (int last = 0; last < 2; ++last) {
      if (!std::regex_match(name, m, last ? kCountLast : kCountFirst)) continue;
      const std::string card = m[last ? 1 : 2].str(), count = m[last ? 2 : 1].str();
      if (FindGpu(card).ok()) {
        return Status::InvalidArgument(fmt::format(
            "--gpu \"{}\": --gpu names one card; give --gpu {} and the count as -tp {} "
            "(tensor parallel; -pp for pipeline parallel), or --gpus {} for fit",
            name, card, count, count));
      }
    }
    if (name.find('+') != std::string::npos) {
      return Status::InvalidArgument(fmt::format(
          "--gpu \"{}\": cards are separated by commas, one per vLLM pipeline stage (--gpu "
          "5070ti,5090d with -pp 2); other engines plan one card for every rank", name));
    }
    return g;
  }
  if (g->also_named.empty()) return g;
  std::string others;
  for (const std::string& id : g->also_named) {
    auto other = FindGpu(id);
    others += fmt::format("{}{} ({} GB)", others.empty() ? "" : ", ", id,
                          other.ok() ? other->marketing_gb : 0);
  }
  fmt::print(stderr,
             "vramfit: note: --gpu {} fits several cards; read as {} ({} GB); give --gpu {} "
             "for another\n",
             name, g->id, g->marketing_gb, others);
  return g;
}

void NoteCatalogByName(std::string_view model) {
  if (model.find('/') == std::string_view::npos) return;
  auto ref = ResolveModel(model);
  if (!ref.ok() || ref->kind != ModelKind::kCatalog) return;
  auto entry = FindCatalogModel(ref->id);
  auto same = [](std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) ==
                    std::tolower(static_cast<unsigned char>(y));
           });
  };
  if (!entry.ok() || same(entry->repo, model)) return;
  std::string shown(model);  // printed as given, control bytes shown as '?'
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  fmt::print(stderr,
             "vramfit: note: {} is neither a local path nor the catalog's repo: read as the "
             "catalog's {} ({}) by its name; a fine-tune of it plans the same, another checkpoint "
             "under that name (a quantized repack, another size) does not: give its directory "
             "(or with check, --model-as PATH=ID)\n",
             shown, entry->id, entry->repo);
}

void NoteGenericReading(const Inventory& inv) {
  if (!inv.has_spec || !inv.spec.generic) return;
  for (const std::string& w : inv.spec.warnings) {
    std::string shown = w;  // config text, control bytes shown as '?'
    for (char& c : shown) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    }
    fmt::print(stderr, "vramfit: note: {}\n", shown);
  }
}

void NotePlaceholderModels(const std::string& text) {
  auto entries = CatalogModels();
  if (!entries.ok()) return;
  for (const CatalogModel& e : *entries) {
    // Entries inferred from a base describe their repo in words: "(community AWQ of ...)".
    const bool real = e.repo.find('/') != std::string::npos &&
                      e.repo.find(' ') == std::string::npos &&
                      e.repo.find('(') == std::string::npos;
    if (real || text.find(" " + e.id + " ") == std::string::npos) continue;
    fmt::print(Out(), "note: {} in the command is a catalog entry with no published repo {}: put "
               "the path or Hub id of such a checkpoint in its place\n", e.id, e.repo);
  }
}

Result<GpuSpec> ResolveGpu(const std::string& name, const std::string& memory) {
  if (name.find(',') != std::string::npos || memory.find(',') != std::string::npos) {
    return Status::InvalidArgument(fmt::format(
        "--gpu {}{}{}: several cards (one per pipeline stage) are read by `plan` and `check` "
        "only; give one card here", name, name.empty() || memory.empty() ? "" : " --gpu-memory ",
        memory));
  }
  if (!memory.empty()) {
    auto bytes = ReadMemoryFlag("--gpu-memory", memory);
    if (!bytes.ok()) return bytes.status();
    if (name.empty()) return CustomGpu(*bytes);
    auto g = FindGpuNoting(name);
    if (!g.ok()) return g.status();
    g->total_bytes = *bytes;  // the card's capabilities with the user's memory figure
    g->confidence = "given";
    return g;
  }
  if (name.empty())
    return Status::InvalidArgument(
        "--gpu NAME or --gpu-memory SIZE is required (see `vramfit gpus`)");
  return FindGpuNoting(name);
}

namespace {

// "a,b" -> {"a", "b"}; "" -> {}. An empty word is an error naming `flag`.
Result<std::vector<std::string>> CommaList(const char* flag, const std::string& text) {
  std::vector<std::string> out;
  if (text.empty()) return out;
  size_t at = 0;
  while (true) {
    const size_t comma = text.find(',', at);
    std::string word = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    while (!word.empty() && word.front() == ' ') word.erase(word.begin());
    while (!word.empty() && word.back() == ' ') word.pop_back();
    if (word.empty()) {
      return Status::InvalidArgument(fmt::format(
          "{} \"{}\": an empty entry; give one card per pipeline stage, comma-separated, "
          "e.g. {} 5070ti,5090d", flag, text, flag));
    }
    out.push_back(std::move(word));
    if (comma == std::string::npos) return out;
    at = comma + 1;
  }
}

}  // namespace

Result<std::vector<GpuSpec>> ResolveGpus(const std::string& names, const std::string& memories) {
  auto n = CommaList("--gpu", names);
  if (!n.ok()) return n.status();
  auto m = CommaList("--gpu-memory", memories);
  if (!m.ok()) return m.status();
  if (n->size() > 1 && m->size() > 1 && n->size() != m->size()) {
    return Status::InvalidArgument(fmt::format(
        "--gpu names {} cards but --gpu-memory gives {} sizes: give one size for all, or one per "
        "card", n->size(), m->size()));
  }
  const size_t count = std::max<size_t>({n->size(), m->size(), 1});
  constexpr size_t kMaxCards = 4096;  // the most ranks a deployment plans
  if (count > kMaxCards) {
    return Status::InvalidArgument(fmt::format("--gpu: {} cards; at most {}", count, kMaxCards));
  }
  std::vector<GpuSpec> out;
  std::vector<std::pair<std::string, std::string>> read;  // each card's words, read once
  for (size_t i = 0; i < count; ++i) {
    const std::string name = n->empty() ? "" : (*n)[n->size() == 1 ? 0 : i];
    const std::string memory = m->empty() ? "" : (*m)[m->size() == 1 ? 0 : i];
    // A card named again is the same card: its notes on stderr are said once.
    const auto same = std::find(read.begin(), read.end(), std::pair(name, memory));
    if (same != read.end()) {
      out.push_back(out[static_cast<size_t>(same - read.begin())]);
      read.emplace_back(name, memory);
      continue;
    }
    auto g = ResolveGpu(name, memory);
    if (!g.ok()) return g.status();
    out.push_back(std::move(*g));
    read.emplace_back(name, memory);
  }
  return out;
}

Status ApplyStageGpus(const Engine& engine, const std::vector<GpuSpec>& gpus,
                      EngineSettings* settings) {
  if (gpus.size() <= 1) return Status::Ok();
  if (!engine.plans_stage_gpus) {
    const bool alike = std::all_of(gpus.begin(), gpus.end(), [&](const GpuSpec& g) {
      return g.id == gpus.front().id && g.total_bytes == gpus.front().total_bytes;
    });
    if (alike) {
      return Status::InvalidArgument(fmt::format(
          "--gpu names {} {} cards: give the card once; {} takes the number of GPUs from the "
          "command (its parallel-size flags, or CUDA_VISIBLE_DEVICES=0,1,... before it)",
          gpus.size(), gpus.front().id, engine.title));
    }
    std::string which;
    for (const Engine* e : Engines()) {
      if (e->plans_stage_gpus) which += (which.empty() ? "" : ", ") + std::string(e->title);
    }
    return Status::InvalidArgument(fmt::format(
        "--gpu names {} cards: mixed cards (one per pipeline stage) are planned for {} only; {} "
        "is planned with one card for every rank", gpus.size(), which, engine.title));
  }
  settings->stage_gpus = gpus;
  return Status::Ok();
}

std::function<int()> SetupPlan(CLI::App* app) {
  struct Flags {
    std::string model, gpu, gpu_memory, engine, other_memory, html;
    bool json = false, explain = false;
    EngineFlagSlots engine_flags;
    WhatIfFlags what_if;
  };
  auto f = std::make_shared<Flags>();
  app->add_option("MODEL", f->model,
                  "Checkpoint directory, config.json, .safetensors or catalog id")
      ->required();
  app->add_option("--gpu", f->gpu, kGpuListHelp);
  app->add_option("--gpu-memory", f->gpu_memory,
                  "GPU memory as CUDA reports it, e.g. 24GiB (overrides the catalog; "
                  "comma-separated, one per card of --gpu)");
  app->add_option("--engine", f->engine, EngineOptionHelp());
  app->add_option("--other-memory", f->other_memory,
                  "Memory other processes already hold on each GPU, e.g. 2GiB");
  app->add_flag("--json", f->json, "Print JSON (schema vramfit.plan/1)");
  app->add_flag("--explain", f->explain, "Print each number's formula and inputs");
  app->add_option("--html", f->html, "Also write a self-contained HTML report to FILE (-: stdout)");
  AddEngineFlags(app, &f->engine_flags);
  AddWhatIfFlags(app, &f->what_if);
  return [f]() {
    auto fail = [](const Status& s) {
      fmt::print(Err(), "vramfit plan: {}\n", s.message());
      return kExitUsage;
    };
    auto chosen = ReadEngineFlags(f->engine, f->engine_flags);
    if (!chosen.ok()) return fail(chosen.status());
    EngineSettings& settings = chosen->settings;
    if (!f->other_memory.empty()) {
      auto b = ReadMemoryFlag("--other-memory", f->other_memory);
      if (!b.ok()) return fail(b.status());
      settings.other_process_bytes = *b;
    }
    ReadDraftModel("plan", &settings);
    ReadMmproj("plan", &settings);
    auto gpus = ResolveGpus(f->gpu, f->gpu_memory);
    if (!gpus.ok()) return fail(gpus.status());
    if (Status s = ApplyStageGpus(*chosen->engine, *gpus, &settings); !s.ok()) return fail(s);
    const GpuSpec* gpu = &gpus->front();
    InspectOptions model_options = ModelOptions();
    if (Status s = ApplyWhatIfFlags(f->what_if, &model_options); !s.ok()) return fail(s);
    model_options.ollama_names = chosen->engine->name == "ollama";
    // A .gguf path that is not here: the what-if its file name spells (Qwen3-8B-Q4_K_M.gguf).
    model_options.gguf_names =
        chosen->engine->name == "llamacpp" || chosen->engine->name == "ollama";
    auto inv = InspectModel(f->model, model_options);
    if (!inv.ok()) return fail(inv.status());
    NoteCatalogByName(f->model);
    NoteGenericReading(*inv);
    bool no_mmproj = false;
    for (size_t i = 0; i < f->engine_flags.specs.size(); ++i) {
      no_mmproj |= f->engine_flags.set[i] &&
                   std::string_view(f->engine_flags.specs[i].name) == "--no-mmproj";
    }
    TakeWhatIfMmproj(*chosen->engine, no_mmproj, &settings, &*inv);
    auto model = chosen->engine->prepare(*inv);
    if (!model.ok()) return fail(model.status());
    auto plan = (*model)->MakePlan(*gpu, settings);
    if (!plan.ok()) return fail(plan.status());
    CarryWhatIf(*inv, &*plan);
    for (const std::string& w : plan->without_effect) {
      fmt::print(Err(), "vramfit plan: without effect here (not modelled): {}\n", w);
    }
    auto advice = Advise(*chosen->engine, **model, *gpu, settings, *plan);
    for (Advice& a : VariantAdvice(*chosen->engine, *inv, *gpu, settings, *plan)) {
      advice.push_back(std::move(a));
    }
    if (!f->html.empty()) {
      Status s = WriteHtmlFile(f->html, RenderPlanHtml(*plan, advice));
      if (!s.ok()) return fail(s);
      if (f->html == "-") return kExitOk;
    }
    PlanReportOptions o;
    o.explain = f->explain;
    const std::string out =
        f->json ? RenderPlanJson(*plan, advice, o) : RenderPlanText(*plan, advice, o);
    std::fwrite(out.data(), 1, out.size(), Out());
    if (!f->json) NotePlaceholderModels(out);
    return kExitOk;
  };
}

}  // namespace vramfit::cli
