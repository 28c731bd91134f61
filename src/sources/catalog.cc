// The embedded model catalog (see vramfit/catalog.h). Entries are parsed from the bytes
// tools/embed.cmake compiled in, once per process.
#include "vramfit/catalog.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <mutex>

#include "core/text.h"
#include "formats/json_util.h"
#include "sources/embedded.h"

namespace vramfit {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return out;
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
  VRAMFIT_RETURN_IF_ERROR(
      str("published_parameters_source", &m->published_parameters_source, false));
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
        loaded.status = Status::Corrupt(
            fmt::format("data/models/{}.json: base \"{}\" is not a catalog entry without a base",
                        m.id, m.base));
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

// An entry as a source: one file, config.json, that parse errors name after the entry.
class EntrySource : public ByteSource {
 public:
  explicit EntrySource(const CatalogModel& m) : id_(m.id), config_(m.config_json) {}
  std::string Label() const override { return "catalog:" + id_; }
  std::string Where(std::string_view file) const override {
    return fmt::format("catalog:{} {}", id_, file);
  }
  std::string NameOf(std::string_view file) const override {
    return file == kConfig ? "catalog:" + id_ + " config" : Where(file);
  }
  Result<std::vector<std::string>> List() const override {
    return std::vector<std::string>{std::string(kConfig)};
  }
  Result<uint64_t> Size(std::string_view file) const override {
    if (file != kConfig) return Status::NotFound(fmt::format("{}: no such file", Where(file)));
    return static_cast<uint64_t>(config_.size());
  }
  Status ReadAt(std::string_view file, uint64_t offset, size_t n, char* out) const override {
    if (file != kConfig) return Status::NotFound(fmt::format("{}: no such file", Where(file)));
    if (offset > config_.size() || n > config_.size() - offset) {
      return Status::Corrupt(fmt::format("{}: read past the end", Where(file)));
    }
    std::copy_n(config_.data() + offset, n, out);
    return Status::Ok();
  }

 private:
  static constexpr std::string_view kConfig = "config.json";
  std::string id_;
  std::string config_;
};

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
    near.emplace_back(core::EditDistance(tail, m.id), m.id);
  }
  const std::string hint = core::NearestNames(std::move(near), 3);
  return Status::NotFound(fmt::format(
      "\"{}\" is not in the model catalog; nearest: {} (see `vramfit models`)", name, hint));
}

std::unique_ptr<ByteSource> CatalogSource(const CatalogModel& model) {
  return std::make_unique<EntrySource>(model);
}

std::vector<std::string> CatalogVariants(std::string_view id) {
  const Loaded& l = Load();
  auto me = FindCatalogModel(id);
  if (!l.status.ok() || !me.ok()) return {};
  // The family root: follow base links up.
  auto root_of = [&](const CatalogModel& m) {
    std::string root = m.id, base = m.base;
    for (int guard = 0; !base.empty() && guard < 8; ++guard) {
      auto b = std::find_if(l.models.begin(), l.models.end(),
                            [&](const CatalogModel& x) { return x.id == base; });
      if (b == l.models.end()) break;
      root = b->id;
      base = b->base;
    }
    return root;
  };
  const std::string root = root_of(*me);
  std::vector<std::string> out;
  for (const CatalogModel& m : l.models) {
    if (m.id != me->id && root_of(m) == root) out.push_back(m.id);
  }
  return out;
}

}  // namespace vramfit
