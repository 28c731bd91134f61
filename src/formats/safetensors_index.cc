// `model.safetensors.index.json` reader (the transformers sharded-checkpoint index):
//   { "metadata": { "total_size": <int>, ...advisory... },
//     "weight_map": { "<tensor name>": "<shard file name>", ... } }
// metadata is advisory (recomputed from headers by the caller); weight_map is the contract.
#include "formats/safetensors_index.h"

#include <fmt/format.h>
#include <simdjson.h>

#include "core/string_set.h"
#include "formats/fast_json.h"
#include "formats/json_util.h"

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

// Numbers the distinct shard names in order of first appearance. Entries of one shard come in
// runs: the shard of the entry before is recognised without a lookup. The names viewed must
// outlive it.
class ShardNumbers {
 public:
  // Whether `shard` is the shard of the entry before (then already checked).
  bool Same(const SafetensorsIndex& index, std::string_view shard) const {
    return !index.shards.empty() && shard == last_;
  }
  // The number of a shard that is not the one before, adding it when new.
  uint32_t Number(std::string_view shard, SafetensorsIndex* index) {
    uint32_t at = static_cast<uint32_t>(index->shards.size());
    if (names_.Insert(shard, at, &at)) index->shards.emplace_back(shard);
    last_ = shard;
    last_at_ = at;
    return at;
  }
  uint32_t last() const { return last_at_; }

 private:
  core::StringViewSet names_{64};
  std::string_view last_;
  uint32_t last_at_ = 0;
};

// Appends entry (name, shard) to the index, its name copied into `names` (reserved by the
// caller, so no view moves), and to the lookup; false when the name is already there.
bool AddEntry(std::string_view name, uint32_t shard, SafetensorsIndex* index,
              formats::IndexLookup* lookup) {
  const char* copy = index->names.data() + index->names.size();
  index->names.insert(index->names.end(), name.begin(), name.end());
  index->weight_map.push_back({std::string_view(copy, name.size()), shard});
  return lookup->Add();
}

// The fast reader: {"metadata": {"total_size": <u64>, "<key>": <string or u64>, ...},
// "weight_map": {"<name>": "<shard>", ...}}, each key once, no other key, no escapes. Gives up
// (false) at the first byte outside that shape, valid or not, and on any error the full reader
// reports; an index it accepts, the full reader accepts with the same result. The text must be
// valid UTF-8.
class FastIndex : private formats::FastJson {
 public:
  explicit FastIndex(std::string_view text) : FastJson(text), size_(text.size()) {}

  bool Read(SafetensorsIndex* index, formats::IndexLookup* lookup) {
    if (!Eat('{')) return false;
    bool seen_map = false, seen_meta = false;
    do {
      std::string_view key;
      if (!Key(&key)) return false;
      if (key == "metadata" && !seen_meta) {
        seen_meta = true;
        if (!Metadata(index)) return false;
      } else if (key == "weight_map" && !seen_map) {
        seen_map = true;
        if (!WeightMap(index, lookup)) return false;
      } else {
        return false;
      }
    } while (Eat(','));
    return Eat('}') && seen_map && AtEnd();
  }

 private:
  bool Metadata(SafetensorsIndex* index) {
    if (!Eat('{')) return false;
    if (Eat('}')) return true;
    do {
      std::string_view key, s;
      uint64_t v = 0;
      if (!Key(&key)) return false;
      if (key == "total_size") {
        if (index->has_total_size || !U64(&index->total_size)) return false;
        index->has_total_size = true;
      } else if (!(Peek() == '"' ? String(&s) : U64(&v))) {
        return false;
      }
    } while (Eat(','));
    return Eat('}');
  }
  bool WeightMap(SafetensorsIndex* index, formats::IndexLookup* lookup) {
    if (!Eat('{')) return false;
    // The names are a part of the text: room for all of it keeps the views in place. An
    // entry is some 90 bytes: a first guess at the count sizes the list and the table.
    index->names.reserve(size_);
    index->weight_map.reserve(size_ / 64);
    lookup->Reset(size_ / 64);
    if (Eat('}')) return true;
    ShardNumbers shards;
    do {
      std::string_view name, shard;
      if (!Key(&name) || !String(&shard)) return false;
      uint32_t at = shards.last();
      if (!shards.Same(*index, shard)) {
        if (!IsPlainFileName(shard)) return false;
        at = shards.Number(shard, index);
      }
      if (!AddEntry(name, at, index, lookup)) return false;
    } while (Eat(','));
    return Eat('}');
  }

  size_t size_;
};

// The full reader: any valid index, and a message naming what is wrong with an invalid one.
Status ReadFull(std::string_view json, std::string_view origin, SafetensorsIndex* out,
                formats::IndexLookup* lookup) {
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element root;
  VRAMFIT_RETURN_IF_ERROR(formats::ParseJson(parser, json, origin, 0, &root));
  simdjson::dom::object obj;
  if (root.get_object().get(obj)) {
    return Status::Corrupt(fmt::format("{}: expected a JSON object with \"weight_map\", found {}",
                                       origin, JsonTypeName(root)));
  }
  SafetensorsIndex& index = *out;
  index = SafetensorsIndex();
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
      size_t name_bytes = 0;
      for (auto w : map) name_bytes += w.key.size();
      index.names.reserve(name_bytes);  // never reallocated below: the views stay valid
      index.weight_map.reserve(map.size());
      lookup->Reset(map.size());
      ShardNumbers shards;
      for (auto w : map) {
        std::string_view shard;
        if (w.value.get_string().get(shard)) {
          return Status::Corrupt(fmt::format(
              "{}: \"weight_map\".\"{}\": expected a shard file name (string), found {}", origin,
              w.key, JsonTypeName(w.value)));
        }
        const bool same_shard = shards.Same(index, shard);
        if (!same_shard && !IsPlainFileName(shard)) {
          return Status::Corrupt(fmt::format(
              "{}: \"weight_map\".\"{}\": shard name \"{}\" is not a plain file name inside the "
              "checkpoint directory", origin, w.key, shard));
        }
        const uint32_t at = same_shard ? shards.last() : shards.Number(shard, &index);
        if (!AddEntry(w.key, at, &index, lookup)) {
          return Status::Corrupt(
              fmt::format("{}: \"weight_map\": duplicate tensor name \"{}\"", origin, w.key));
        }
      }
    }
  }
  if (!seen_map) {
    return Status::Corrupt(fmt::format("{}: missing key \"weight_map\"", origin));
  }
  return Status::Ok();
}

}  // namespace

namespace formats {

Status ReadSafetensorsIndex(std::string_view json, std::string_view origin, IndexReader reader,
                            SafetensorsIndex* index, IndexLookup* lookup) {
  if (reader != IndexReader::kFullOnly) {
    *index = SafetensorsIndex();
    index->origin = std::string(origin);
    if (simdjson::validate_utf8(json.data(), json.size()) && FastIndex(json).Read(index, lookup)) {
      return Status::Ok();
    }
    if (reader == IndexReader::kFastOnly) {
      return Status::Unsupported(fmt::format("{}: the fast reader gives up", origin));
    }
  }
  return ReadFull(json, origin, index, lookup);
}

}  // namespace formats

Result<SafetensorsIndex> ParseSafetensorsIndex(std::string_view json, std::string_view origin) {
  SafetensorsIndex index;
  formats::IndexLookup lookup(&index);
  VRAMFIT_RETURN_IF_ERROR(formats::ReadSafetensorsIndex(
      json, origin, formats::IndexReader::kFastFirst, &index, &lookup));
  return index;
}

}  // namespace vramfit
