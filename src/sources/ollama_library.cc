// The Ollama library table (see vramfit/ollama_library.h): data/ollama/library.json, parsed
// once per process from the embedded bytes. Names are matched case-insensitively; a tag is
// split into its size/variant part and an optional file-type suffix (Ollama's tag grammar:
// "8b", "8b-instruct-q4_K_M", "32b-fp16").
#include "vramfit/ollama_library.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <mutex>
#include <vector>

#include "core/text.h"
#include "formats/json_util.h"
#include "sources/embedded.h"

namespace vramfit {
namespace {

constexpr std::string_view kPath = "ollama/library.json";
constexpr size_t kMaxName = 200;

struct Entry {
  std::string name, tag, model, type, source, note;
  bool latest = false;
};

struct Loaded {
  Status status;
  std::vector<Entry> entries;
};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

Status ParseTable(std::string_view bytes, Loaded* out) {
  const std::string origin = fmt::format("data/{}", kPath);
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  VRAMFIT_RETURN_IF_ERROR(formats::ParseJson(parser, bytes, origin, 0, &root));
  simdjson::dom::array list;
  if (root["models"].get_array().get(list)) {
    return Status::Corrupt(fmt::format("{}: \"models\" must be an array", origin));
  }
  size_t i = 0;
  for (simdjson::dom::element e : list) {
    Entry m;
    auto str = [&](const char* key, std::string* v, bool required) -> Status {
      std::string_view s;
      auto err = e[key].get_string().get(s);
      if (err && !required && err == simdjson::NO_SUCH_FIELD) return Status::Ok();
      if (err || (required && s.empty())) {
        return Status::Corrupt(
            fmt::format("{}: models[{}].{}: expected a non-empty string", origin, i, key));
      }
      *v = std::string(s);
      return Status::Ok();
    };
    VRAMFIT_RETURN_IF_ERROR(str("name", &m.name, true));
    VRAMFIT_RETURN_IF_ERROR(str("tag", &m.tag, true));
    VRAMFIT_RETURN_IF_ERROR(str("model", &m.model, true));
    VRAMFIT_RETURN_IF_ERROR(str("type", &m.type, true));
    VRAMFIT_RETURN_IF_ERROR(str("source", &m.source, true));
    VRAMFIT_RETURN_IF_ERROR(str("note", &m.note, false));
    bool latest = false;
    if (!e["latest"].get_bool().get(latest)) m.latest = latest;
    out->entries.push_back(std::move(m));
    ++i;
  }
  return Status::Ok();
}

const Loaded& Load() {
  static Loaded loaded;
  static std::once_flag once;
  std::call_once(once, [] {
    const embedded::File* file = embedded::Find(kPath);
    loaded.status = file ? ParseTable(file->bytes, &loaded)
                         : Status::Corrupt("data/ollama/library.json is not embedded");
  });
  return loaded;
}

// Ollama's type suffixes -> the GGUF file type words of --as-quantized.
struct Suffix {
  std::string_view tag;
  std::string_view type;
};
constexpr std::array<Suffix, 8> kSuffixes = {{
    {"q4_k_m", "q4_K_M"}, {"q4_k_s", "q4_K_S"}, {"q5_k_m", "q5_K_M"}, {"q6_k", "q6_K"},
    {"q8_0", "q8_0"},     {"q4_0", "q4_0"},     {"fp16", "f16"},      {"bf16", "bf16"},
}};
// Variant words a tag may carry between its size and its type.
constexpr std::array<std::string_view, 3> kVariants = {"-instruct", "-it", "-chat"};

std::string_view StripPrefix(std::string_view w) {
  for (std::string_view p : {"registry.ollama.ai/library/", "library/"}) {
    if (w.starts_with(p)) return w.substr(p.size());
  }
  return w;
}

std::vector<std::pair<size_t, std::string>> Scored(const Loaded& l, std::string_view word) {
  std::vector<std::pair<size_t, std::string>> near;
  for (const Entry& e : l.entries) {
    const std::string full = e.name + ":" + e.tag;
    near.emplace_back(core::EditDistance(word, full), full);
  }
  return near;
}

}  // namespace

bool LooksLikeOllamaLibraryName(std::string_view word) {
  if (word.empty() || word.size() > kMaxName) return false;
  word = StripPrefix(word);
  if (word.empty() || Lower(word).ends_with(".gguf")) return false;
  int colons = 0;
  for (char c : word) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == ':') {
      ++colons;
      continue;
    }
    if (!std::isalnum(u) && c != '.' && c != '-' && c != '_') return false;
  }
  return colons <= 1 && word.front() != ':' && word.back() != ':' && word.front() != '.';
}

Result<OllamaLibraryModel> FindOllamaLibraryModel(std::string_view given) {
  if (!LooksLikeOllamaLibraryName(given)) {
    return Status::InvalidArgument(fmt::format(
        "\"{}\": not an Ollama library name (NAME[:TAG], e.g. qwen3:32b)",
        core::Printable(given.substr(0, kMaxName))));
  }
  const Loaded& l = Load();
  if (!l.status.ok()) return l.status;
  const std::string word = Lower(StripPrefix(given));
  const size_t colon = word.find(':');
  const std::string name = word.substr(0, colon);
  std::string tag = colon == std::string::npos ? "latest" : word.substr(colon + 1);
  std::string type;
  for (const Suffix& s : kSuffixes) {
    const std::string dash = "-" + std::string(s.tag);
    if (tag.ends_with(dash)) {
      type = std::string(s.type);
      tag.resize(tag.size() - dash.size());
      break;
    }
  }
  for (std::string_view v : kVariants) {
    if (tag.ends_with(v)) tag.resize(tag.size() - v.size());
  }
  for (const Entry& e : l.entries) {
    if (Lower(e.name) != name) continue;
    if (Lower(e.tag) != tag && !(tag == "latest" && e.latest)) continue;
    OllamaLibraryModel m;
    m.name = e.name + ":" + e.tag;
    m.catalog_id = e.model;
    m.file_type = type.empty() ? e.type : type;
    m.source = e.source;
    m.note = e.note;
    return m;
  }
  return Status::NotFound(fmt::format(
      "\"{}\" is not in vramfit's table of Ollama library names; nearest: {}",
      core::Printable(given), NearestOllamaLibraryNames(word, 3)));
}

std::string NearestOllamaLibraryNames(std::string_view word, size_t n) {
  const Loaded& l = Load();
  if (!l.status.ok() || l.entries.empty()) return "";
  return core::NearestNames(Scored(l, Lower(StripPrefix(word.substr(0, kMaxName)))), n);
}

}  // namespace vramfit
