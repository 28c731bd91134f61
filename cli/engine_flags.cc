// Engine flags on the command line (see engine_flags.h).
#include "engine_flags.h"

#include <fmt/format.h>

#include <filesystem>
#include <memory>

#include "commands.h"
#include "vramfit/gguf.h"
#include "vramfit/inspect.h"
#include "vramfit/source.h"

namespace vramfit::cli {

void AddEngineFlags(CLI::App* app, EngineFlagSlots* slots) {
  for (const Engine* e : Engines()) {
    for (const FlagSpec& f : e->flags) {
      bool known = false;
      for (const FlagSpec& s : slots->specs) known |= std::string_view(s.name) == f.name;
      if (!known) slots->specs.push_back(f);
    }
  }
  slots->values.resize(slots->specs.size());
  slots->set.resize(slots->specs.size(), false);
  for (size_t i = 0; i < slots->specs.size(); ++i) {
    const FlagSpec& f = slots->specs[i];
    std::string names = f.name;
    // One-letter short names are CLI11's own; longer ones (-tp) are rewritten by main.cc.
    if (f.short_name && std::string_view(f.short_name).size() == 2) {
      names += std::string(",") + f.short_name;
    }
    if (f.type_name) {
      slots->options.push_back(
          app->add_option(names, slots->values[i], f.help)->type_name(f.type_name));
    } else {
      slots->options.push_back(app->add_flag(names, slots->set[i], f.help));
    }
  }
}

Result<ChosenEngine> ReadEngineFlags(const std::string& engine_spec, const EngineFlagSlots& slots) {
  // No --engine: the first engine of the table.
  auto choice = FindEngine(engine_spec.empty() ? Engines().front()->name : engine_spec);
  if (!choice.ok()) return choice.status();
  const Engine& engine = *choice->engine;
  FlagValues given;
  for (size_t i = 0; i < slots.specs.size(); ++i) {
    if (slots.options[i]->count() == 0) continue;
    if (!slots.specs[i].type_name && !slots.set[i]) continue;
    bool has = false;
    for (const FlagSpec& f : engine.flags) has |= std::string_view(f.name) == slots.specs[i].name;
    if (!has) {
      // The engine's own refusal where it names the flag (it may say how it spells the
      // setting: SGLang's --context-length for --max-model-len).
      // Which engines take it, so `--num-gpus` on a vLLM plan says where it belongs.
      std::string takers;
      for (const Engine* e : Engines()) {
        for (const FlagSpec& f : e->flags) {
          if (std::string_view(f.name) != slots.specs[i].name) continue;
          takers += fmt::format("{}--engine {}", takers.empty() ? "" : ", ", e->name);
          break;
        }
      }
      const std::string where =
          takers.empty() ? "" : fmt::format(" (it is read with {})", takers);
      auto own = engine.read_flags({{slots.specs[i].name, slots.values[i]}}, EngineSettings());
      if (!own.ok() && own.status().message().find(slots.specs[i].name) != std::string::npos) {
        return Status(own.status().code(), std::string(own.status().message()) + where);
      }
      return Status::InvalidArgument(
          fmt::format("{} is not a flag of {}{}", slots.specs[i].name, engine.title, where));
    }
    given.emplace_back(slots.specs[i].name, slots.specs[i].type_name ? slots.values[i] : "");
  }
  EngineSettings base;
  base.version = choice->version;
  auto settings = engine.read_flags(given, base);
  if (!settings.ok()) return settings.status();
  return ChosenEngine{&engine, std::move(*settings)};
}

void ReadDraftModel(const char* command, EngineSettings* settings) {
  if (settings->draft_model.empty() || settings->draft_inventory) return;
  auto draft = InspectModel(settings->draft_model, {});
  if (!draft.ok()) {
    fmt::print(Err(), "vramfit {}: the speculative draft model could not be read ({}); its "
               "weights and KV cache are not modelled\n", command, draft.status().message());
    return;
  }
  settings->draft_inventory = std::make_shared<const Inventory>(std::move(*draft));
}

void ReadMmproj(const char* command, EngineSettings* settings) {
  if (settings->mmproj.empty() || settings->mmproj_header) return;
  const std::filesystem::path path(settings->mmproj);
  auto read = [&]() -> Result<GgufFile> {
    auto dir = OpenLocalDirectory(path.has_parent_path() ? path.parent_path().string() : ".");
    if (!dir.ok()) return dir.status();
    return ReadGgufHeader(**dir, path.filename().string());
  };
  auto header = read();
  if (!header.ok()) {
    fmt::print(Err(), "vramfit {}: the vision projector could not be read ({}); its weights "
               "and encoder are not modelled\n", command, header.status().message());
    return;
  }
  settings->mmproj_header = std::make_shared<const GgufFile>(std::move(*header));
}

void TakeWhatIfMmproj(const Engine& engine, bool refused, EngineSettings* settings,
                      Inventory* inv) {
  if (engine.name != "llamacpp" || inv->what_if_lacks.empty()) return;
  const bool named = !settings->mmproj.empty() || settings->mmproj_header != nullptr;
  if (!refused && !named && inv->what_if_mmproj) settings->mmproj_header = inv->what_if_mmproj;
  if (refused || named || inv->what_if_mmproj) {
    inv->what_if_lacks.clear();
    inv->what_if_lacks_bytes = 0;
  }
}

std::string EngineTitles() {
  std::string out;
  for (const Engine* e : Engines()) out += (out.empty() ? "" : ", ") + std::string(e->title);
  return out;
}

std::string EngineOptionHelp() {
  std::string names;
  for (const Engine* e : Engines()) names += (names.empty() ? "" : ", ") + std::string(e->name);
  const std::string at = Engines().size() == 1 ? names : std::string("NAME");
  return fmt::format("{} or {}@X.Y (default: the newest modelled release)", names, at);
}

}  // namespace vramfit::cli
