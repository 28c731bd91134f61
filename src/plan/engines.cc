// Engine-neutral look-ups over the engine table and the stage names (vramfit/plan.h,
// vramfit/engine.h).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "core/tokens.h"
#include "core/units.h"
#include "vramfit/engine.h"
#include "vramfit/plan.h"

namespace vramfit {
namespace {

constexpr std::array<const char*, kStageCount> kStageNames = {
    "startup", "load", "profile", "kv_cache", "cudagraph", "warmup", "runtime"};

}  // namespace

const char* StageName(Stage s) { return kStageNames[static_cast<size_t>(s)]; }

std::optional<Stage> StageFromName(std::string_view name) {
  for (size_t i = 0; i < kStageNames.size(); ++i) {
    if (name == kStageNames[i]) return static_cast<Stage>(i);
  }
  return std::nullopt;
}

namespace {

bool SameLower(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

Result<EngineChoice> FindEngine(std::string_view spec) {
  const size_t at = spec.find('@');
  const std::string_view name = spec.substr(0, at);
  for (const Engine* e : Engines()) {
    // The name, or the engine's title as people write it ("llama.cpp", "SGLang"), any case.
    if (!SameLower(e->name, name) && !SameLower(e->title, name)) continue;
    EngineChoice c;
    c.engine = e;
    if (at != std::string_view::npos) {
      c.version = std::string(spec.substr(at + 1));
      // `vllm@` would otherwise plan the newest release's rules as if no version were given.
      if (c.version.empty()) {
        return Status::InvalidArgument(fmt::format(
            "--engine {}: no version after '@'; write {}@X.Y (e.g. {}@0.10), or {} alone for the "
            "newest modelled release",
            spec, e->name, e->name, e->name));
      }
    }
    return c;
  }
  std::string names;
  for (const Engine* e : Engines()) names += (names.empty() ? "" : ", ") + std::string(e->name);
  const bool one = Engines().size() == 1;
  return Status::Unsupported(fmt::format("--engine {}: only {} (or {}@X.Y) {} modelled so far",
                                         spec, names, one ? names : "NAME", one ? "is" : "are"));
}

Result<int64_t> ParseTokenCount(const std::string& flag, const std::string& text) {
  return core::ParseTokenCount(flag, text);
}

const Engine* EngineForCommand(const std::vector<std::string>& argv) {
  for (const Engine* e : Engines()) {
    if (e->recognizes(argv)) return e;
  }
  return nullptr;
}

void CarryWhatIf(const Inventory& inv, Plan* plan) {
  plan->what_if = inv.what_if;
  if (inv.what_if_lacks.empty()) return;
  // Left out, but bounded: where the headroom holds even the bound, the verdict stands and a
  // note says so; otherwise it is memory the plan cannot place (a low-confidence verdict).
  const uint64_t bound = inv.what_if_lacks_bytes;
  if (plan->fits && bound > 0 && plan->margin_bytes > 0 &&
      static_cast<uint64_t>(plan->margin_bytes) >= bound) {
    plan->notes.push_back(
        fmt::format("{}: at most {} at 16 bits, inside the {} of headroom", inv.what_if_lacks,
                    core::FormatBytes(bound),
                    core::FormatBytes(static_cast<uint64_t>(plan->margin_bytes))));
    return;
  }
  plan->not_counted.push_back(
      bound > 0 ? fmt::format("{}, up to {} at 16 bits", inv.what_if_lacks,
                              core::FormatBytes(bound))
                : inv.what_if_lacks);
}

}  // namespace vramfit
