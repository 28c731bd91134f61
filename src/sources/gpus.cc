// The embedded GPU catalog (see vramfit/gpu.h), read once from data/gpus.json.
#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <mutex>

#include "core/units.h"
#include "core/text.h"
#include "formats/json_util.h"
#include "sources/embedded.h"
#include "vramfit/gpu.h"

namespace vramfit {
namespace {

// "NVIDIA GeForce RTX 4090" -> "rtx4090".
std::string Normalize(std::string_view s) {
  std::string out;
  for (char c : s) {
    const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (l == ' ' || l == '-' || l == '_') continue;
    out.push_back(l);
  }
  for (std::string_view word : {"nvidia", "geforce", "tesla"}) {
    const size_t at = out.find(word);
    if (at != std::string::npos) out.erase(at, word.size());
  }
  return out;
}


// More streaming multiprocessors than any GPU has (B300: 160, RTX PRO 6000: 188).
constexpr int64_t kMostSms = 1024;

Status ParseGpu(const simdjson::dom::element& e, size_t i, GpuSpec* g) {
  const std::string where = fmt::format("data/gpus.json: gpus[{}]", i);
  auto str = [&](const char* key, std::string* out) -> Status {
    std::string_view v;
    if (e[key].get_string().get(v))
      return Status::Corrupt(fmt::format("{}: \"{}\" must be a string", where, key));
    *out = std::string(v);
    return Status::Ok();
  };
  VRAMFIT_RETURN_IF_ERROR(str("id", &g->id));
  VRAMFIT_RETURN_IF_ERROR(str("name", &g->name));
  VRAMFIT_RETURN_IF_ERROR(str("compute_capability", &g->compute_capability));
  VRAMFIT_RETURN_IF_ERROR(str("architecture", &g->architecture));
  VRAMFIT_RETURN_IF_ERROR(str("vendor", &g->vendor));
  VRAMFIT_RETURN_IF_ERROR(str("confidence", &g->confidence));
  VRAMFIT_RETURN_IF_ERROR(str("source", &g->source));
  VRAMFIT_RETURN_IF_ERROR(str("notes", &g->notes));
  if (e["cuda_total_bytes"].get_uint64().get(g->total_bytes) || g->total_bytes == 0) {
    return Status::Corrupt(
        fmt::format("{}: \"cuda_total_bytes\" must be a positive integer", where));
  }
  uint64_t smi = 0;
  if (!e["nvidia_smi_total_mib"].get_uint64().get(smi)) g->nvidia_smi_mib = smi;
  int64_t gb = 0;
  if (!e["marketing_gb"].get_int64().get(gb)) g->marketing_gb = static_cast<int>(gb);
  if (int64_t sm = 0; !e["sm_count"].get_int64().get(sm)) {
    if (sm <= 0 || sm > kMostSms) {
      return Status::Corrupt(
          fmt::format("{}: \"sm_count\" must be 1 to {}, found {}", where, kMostSms, sm));
    }
    g->sm_count = static_cast<int>(sm);
  }
  bool b = false;
  if (!e["fp8"].get_bool().get(b)) g->fp8 = b;
  if (!e["fp4"].get_bool().get(b)) g->fp4 = b;
  if (!e["unified_memory"].get_bool().get(b)) g->unified_memory = b;
  if (!e["nvml_memory_unsupported"].get_bool().get(b)) g->nvml_memory_unsupported = b;
  if (!e["laptop"].get_bool().get(b)) g->laptop = b;
  simdjson::dom::array aliases;
  if (!e["aliases"].get_array().get(aliases)) {
    for (auto a : aliases) {
      std::string_view s;
      if (a.get_string().get(s))
        return Status::Corrupt(fmt::format("{}: aliases must be strings", where));
      g->aliases.emplace_back(s);
    }
  }
  return Status::Ok();
}

// A name that several catalog cards answer to ("a100": 40 and 80 GB): FindGpu reads it as the
// first card and names the others.
struct AmbiguousName {
  std::string key;  // Normalize(name)
  std::vector<std::string> cards;
};

struct Loaded {
  Status status;
  std::vector<GpuSpec> gpus;
  std::vector<AmbiguousName> ambiguous;
};

const GpuSpec* ById(const std::vector<GpuSpec>& gpus, std::string_view id) {
  for (const GpuSpec& g : gpus) {
    if (g.id == id) return &g;
  }
  return nullptr;
}

// "ambiguous_names": [{"name": "a100", "cards": ["a100-80gb", "a100-40gb"], "why": ...}]:
// every card an id of the catalog, at least two of them.
Status ParseAmbiguous(const simdjson::dom::element& root, Loaded* loaded) {
  simdjson::dom::array list;
  if (root["ambiguous_names"].get_array().get(list)) return Status::Ok();
  size_t i = 0;
  for (auto e : list) {
    const std::string where = fmt::format("data/gpus.json: ambiguous_names[{}]", i++);
    std::string_view name;
    simdjson::dom::array cards;
    if (e["name"].get_string().get(name) || e["cards"].get_array().get(cards)) {
      return Status::Corrupt(where + ": expected \"name\" and \"cards\"");
    }
    AmbiguousName a{Normalize(name), {}};
    for (auto c : cards) {
      std::string_view id;
      if (c.get_string().get(id) || ById(loaded->gpus, id) == nullptr) {
        return Status::Corrupt(where + ": \"cards\" must name catalog ids");
      }
      a.cards.emplace_back(id);
    }
    if (a.cards.size() < 2) return Status::Corrupt(where + ": fewer than two cards");
    loaded->ambiguous.push_back(std::move(a));
  }
  return Status::Ok();
}

const Loaded& Load() {
  static Loaded loaded;
  static std::once_flag once;
  std::call_once(once, [] {
    const embedded::File* file = embedded::Find("gpus.json");
    if (!file) {
      loaded.status = Status::Corrupt("data/gpus.json is not embedded");
      return;
    }
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    loaded.status = formats::ParseJson(parser, file->bytes, "data/gpus.json", 0, &root);
    if (!loaded.status.ok()) return;
    simdjson::dom::array list;
    if (root["gpus"].get_array().get(list)) {
      loaded.status = Status::Corrupt("data/gpus.json: \"gpus\" must be an array");
      return;
    }
    size_t n = 0;
    for (auto e : list) {
      GpuSpec g;
      loaded.status = ParseGpu(e, n++, &g);
      if (!loaded.status.ok()) return;
      loaded.gpus.push_back(std::move(g));
    }
    loaded.status = ParseAmbiguous(root, &loaded);
  });
  return loaded;
}

}  // namespace

Result<std::vector<GpuSpec>> GpuCatalog() {
  const Loaded& l = Load();
  if (!l.status.ok()) return l.status;
  return l.gpus;
}

Result<GpuSpec> FindGpu(std::string_view name) {
  const Loaded& l = Load();
  if (!l.status.ok()) return l.status;
  const std::string key = Normalize(name);
  if (key.empty()) return Status::InvalidArgument("empty GPU name (see `vramfit gpus`)");
  for (const AmbiguousName& a : l.ambiguous) {
    if (a.key != key) continue;
    GpuSpec g = *ById(l.gpus, a.cards.front());
    g.also_named.assign(a.cards.begin() + 1, a.cards.end());
    return g;
  }
  std::vector<std::pair<size_t, std::string>> near;
  for (const GpuSpec& g : l.gpus) {
    if (Normalize(g.id) == key || Normalize(g.name) == key) return g;
    size_t best = core::EditDistance(key, Normalize(g.id));
    for (const std::string& a : g.aliases) {
      if (Normalize(a) == key) return g;
      best = std::min(best, core::EditDistance(key, Normalize(a)));
    }
    near.emplace_back(best, g.id);
  }
  const std::string hint = core::NearestNames(std::move(near), 3);
  return Status::NotFound(
      fmt::format("unknown GPU \"{}\"; nearest: {} (see `vramfit gpus`, or give "
                  "--gpu-memory SIZE)",
                  name, hint));
}

Result<uint64_t> ParseMemorySize(std::string_view text) { return core::ParseSize(text); }

GpuSpec CustomGpu(uint64_t total_bytes) {
  GpuSpec g;
  g.id = "custom";
  g.name = fmt::format("GPU with {}", core::FormatBytes(total_bytes));
  g.total_bytes = total_bytes;
  g.vendor = "nvidia";
  g.confidence = "given";
  g.source = "--gpu-memory";
  g.custom = true;
  return g;
}

int NvidiaComputeCapability(const GpuSpec& gpu) {
  if (gpu.vendor != "nvidia" || gpu.compute_capability.empty()) return 0;
  const std::string& c = gpu.compute_capability;
  int major = 0, minor = 0;
  const size_t dot = c.find('.');
  if (dot == std::string::npos) return 0;
  auto a = std::from_chars(c.data(), c.data() + dot, major);
  auto b = std::from_chars(c.data() + dot + 1, c.data() + c.size(), minor);
  if (a.ec != std::errc() || b.ec != std::errc()) return 0;
  return major * 10 + minor;
}

}  // namespace vramfit
