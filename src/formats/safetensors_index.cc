// `model.safetensors.index.json` reader (the transformers sharded-checkpoint index):
//   { "metadata": { "total_size": <int>, ...advisory... },
//     "weight_map": { "<tensor name>": "<shard file name>", ... } }
// metadata is advisory (recomputed from headers by the caller); weight_map is the contract.
#include <fmt/format.h>

#include "core/string_set.h"

#include "formats/json_util.h"
#include "vramfit/formats.h"

namespace vramfit {
namespace {

using formats::JsonExcerpt;
using formats::JsonTypeName;

// A shard name must stay inside the checkpoint directory.
bool IsPlainFileName(std::string_view s) {
  if (s.empty() || s == "." || s == "..") return false;
  for (char c : s) {
    if (c == '/' || c == '\\' || c == '\0') return false;
  }
  return true;
}

}  // namespace

Result<SafetensorsIndex> ParseSafetensorsIndex(std::string_view json, std::string_view origin) {
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element root;
  VRAMFIT_RETURN_IF_ERROR(formats::ParseJson(parser, json, origin, 0, &root));
  simdjson::dom::object obj;
  if (root.get_object().get(obj)) {
    return Status::Corrupt(fmt::format("{}: expected a JSON object with \"weight_map\", found {}",
                                       origin, JsonTypeName(root)));
  }
  SafetensorsIndex index;
  index.origin = std::string(origin);
  bool seen_map = false, seen_meta = false;
  for (auto field : obj) {
    const std::string_view key = field.key;
    if (key == "metadata") {
      if (seen_meta) return Status::Corrupt(fmt::format("{}: duplicate key \"metadata\"", origin));
      seen_meta = true;
      if (field.value.is_null()) continue;
      simdjson::dom::object meta;
      if (field.value.get_object().get(meta)) {
        return Status::Corrupt(fmt::format("{}: \"metadata\" must be an object, found {}", origin,
                                           JsonTypeName(field.value)));
      }
      for (auto m : meta) {
        if (m.key != "total_size") continue;
        if (index.has_total_size) {
          return Status::Corrupt(
              fmt::format("{}: duplicate key \"metadata\".\"total_size\"", origin));
        }
        // Writers emit an integer; some emit a float with an integral value.
        if (m.value.is_uint64()) {
          index.total_size = m.value.get_uint64().value_unsafe();
        } else if (m.value.is_double() && m.value.get_double().value_unsafe() >= 0 &&
                   m.value.get_double().value_unsafe() < 1.8e19) {
          index.total_size = static_cast<uint64_t>(m.value.get_double().value_unsafe());
        } else {
          return Status::Corrupt(fmt::format(
              "{}: \"metadata\".\"total_size\": must be a non-negative integer, found {}", origin,
              JsonExcerpt(m.value)));
        }
        index.has_total_size = true;
      }
    } else if (key == "weight_map") {
      if (seen_map) return Status::Corrupt(fmt::format("{}: duplicate key \"weight_map\"", origin));
      seen_map = true;
      simdjson::dom::object map;
      if (field.value.get_object().get(map)) {
        return Status::Corrupt(fmt::format("{}: \"weight_map\" must be an object, found {}", origin,
                                           JsonTypeName(field.value)));
      }
      core::StringViewSet names(map.size());
      core::StringViewSet shard_names(64);
      size_t name_bytes = 0;
      for (auto w : map) name_bytes += w.key.size();
      index.names.reserve(name_bytes);  // never reallocated below: the views stay valid
      index.weight_map.reserve(map.size());
      // Entries of one shard come in runs: the shard of the entry before is checked and
      // numbered once.
      std::string_view last_shard;
      uint32_t last_at = 0;
      for (auto w : map) {
        std::string_view shard;
        if (w.value.get_string().get(shard)) {
          return Status::Corrupt(fmt::format(
              "{}: \"weight_map\".\"{}\": expected a shard file name (string), found {}", origin,
              w.key, JsonTypeName(w.value)));
        }
        const bool same_shard = !index.shards.empty() && shard == last_shard;
        if (!same_shard && !IsPlainFileName(shard)) {
          return Status::Corrupt(fmt::format(
              "{}: \"weight_map\".\"{}\": shard name \"{}\" is not a plain file name inside the "
              "checkpoint directory", origin, w.key, shard));
        }
        if (!names.Insert(w.key)) {
          return Status::Corrupt(
              fmt::format("{}: \"weight_map\": duplicate tensor name \"{}\"", origin, w.key));
        }
        uint32_t at = last_at;
        if (!same_shard) {
          at = static_cast<uint32_t>(index.shards.size());
          if (shard_names.Insert(shard, at, &at)) index.shards.emplace_back(shard);
          last_shard = shard;
          last_at = at;
        }
        const char* copy = index.names.data() + index.names.size();
        index.names.insert(index.names.end(), w.key.begin(), w.key.end());
        index.weight_map.push_back({std::string_view(copy, w.key.size()), at});
      }
    }
  }
  if (!seen_map) {
    return Status::Corrupt(fmt::format("{}: missing key \"weight_map\"", origin));
  }
  return index;
}

}  // namespace vramfit
