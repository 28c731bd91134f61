// The embedded model catalog (see vramfit/catalog.h). Entries are parsed from the bytes
// tools/embed.cmake compiled in, once per process.
#include "vramfit/catalog.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <mutex>

#include "formats/json_util.h"

namespace vramfit {
namespace embedded {
struct File {
  std::string_view path;
  std::string_view bytes;
};
extern const File kFiles[];
extern const size_t kFileCount;
}  // namespace embedded

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

Status ParseEntry(std::string_view path, std::string_view bytes, CatalogModel* m) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  const std::string origin = fmt::format("data/{}", path);
  VRAMFIT_RETURN_IF_ERROR(formats::ParseJson(parser, bytes, origin, 0, &root));
  auto str = [&](const char* key, std::string* out, bool required) -> Status {
    std::string_view v;
    auto err = root[key].get_string().get(v);
    if (err) {
      if (!required && err == simdjson::NO_SUCH_FIELD) return Status::Ok();
      return Status::Corrupt(fmt::format("{}: \"{}\" must be a string", origin, key));
    }
    *out = std::string(v);
    return Status::Ok();
  };
  VRAMFIT_RETURN_IF_ERROR(str("id", &m->id, true));
  VRAMFIT_RETURN_IF_ERROR(str("repo", &m->repo, true));
  VRAMFIT_RETURN_IF_ERROR(str("source", &m->source, true));
  VRAMFIT_RETURN_IF_ERROR(str("status", &m->status, true));
  VRAMFIT_RETURN_IF_ERROR(str("notes", &m->notes, false));
  VRAMFIT_RETURN_IF_ERROR(str("base", &m->base, false));
  VRAMFIT_RETURN_IF_ERROR(str("published_parameters_source", &m->published_parameters_source, false));
  uint64_t params = 0;
  if (!root["published_parameters"].get_uint64().get(params)) m->published_parameters = params;
  simdjson::dom::object config;
  if (root["config"].get_object().get(config)) {
    return Status::Corrupt(fmt::format("{}: \"config\" must be an object", origin));
  }
  m->config_json = simdjson::minify(config);
  return Status::Ok();
}

struct Loaded {
  Status status;
  std::vector<CatalogModel> models;
};

const Loaded& Load() {
  static Loaded loaded;
  static std::once_flag once;
  std::call_once(once, [] {
    for (size_t i = 0; i < embedded::kFileCount; ++i) {
      const auto& f = embedded::kFiles[i];
      if (f.path.rfind("models/", 0) != 0) continue;
      CatalogModel m;
      Status s = ParseEntry(f.path, f.bytes, &m);
      if (!s.ok()) { loaded.status = s; return; }
      loaded.models.push_back(std::move(m));
    }
    std::sort(loaded.models.begin(), loaded.models.end(),
              [](const CatalogModel& a, const CatalogModel& b) { return a.id < b.id; });
    // Merge bases: "{base keys..., entry keys...}"; the config reader lets later keys win.
    for (CatalogModel& m : loaded.models) {
      if (m.base.empty()) continue;
      auto it = std::find_if(loaded.models.begin(), loaded.models.end(),
                             [&](const CatalogModel& b) { return b.id == m.base; });
      if (it == loaded.models.end() || !it->base.empty()) {
        loaded.status = Status::Corrupt(fmt::format(
            "data/models/{}.json: base \"{}\" is not a catalog entry without a base", m.id, m.base));
        return;
      }
      const std::string& b = it->config_json;
      const std::string& own = m.config_json;
      const bool own_empty = own == "{}";
      m.config_json = b.substr(0, b.size() - 1) + (own_empty ? "}" : "," + own.substr(1));
    }
  });
  return loaded;
}

}  // namespace

Result<std::vector<CatalogModel>> CatalogModels() {
  const Loaded& l = Load();
  if (!l.status.ok()) return l.status;
  return l.models;
}

Result<CatalogModel> FindCatalogModel(std::string_view name) {
  const Loaded& l = Load();
  if (!l.status.ok()) return l.status;
  const std::string key = Lower(name);
  std::vector<std::pair<size_t, std::string>> near;
  for (const CatalogModel& m : l.models) {
    if (m.id == key || Lower(m.repo) == key) return m;
    const size_t slash = key.find('/');
    const std::string tail = slash == std::string::npos ? key : key.substr(slash + 1);
    if (m.id == tail) return m;
    near.emplace_back(EditDistance(tail, m.id), m.id);
  }
  std::sort(near.begin(), near.end());
  std::string hint;
  for (size_t i = 0; i < near.size() && i < 3; ++i) hint += (i ? ", " : "") + near[i].second;
  return Status::NotFound(fmt::format("\"{}\" is not in the model catalog; nearest: {} (see `vramfit models`)",
                                      name, hint));
}

}  // namespace vramfit
