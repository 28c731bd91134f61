// libFuzzer target: model.safetensors.index.json parsing. The fast reader (where it does not
// give up) and the full one must agree: the same entries, shards and total_size, every name
// found where it is, or the same message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "formats/safetensors_index.h"
#include "vramfit/formats.h"

namespace {

using vramfit::formats::IndexReader;

struct Read {
  vramfit::SafetensorsIndex index;
  vramfit::formats::IndexLookup lookup{&index};
  vramfit::Status status;
  Read(std::string_view json, IndexReader reader)
      : status(vramfit::formats::ReadSafetensorsIndex(json, "fuzz.index.json", reader, &index,
                                                      &lookup)) {}
};

bool Same(const Read& a, const Read& b) {
  if (a.status.ok() != b.status.ok()) return false;
  if (!a.status.ok()) return a.status.message() == b.status.message();
  if (a.index.has_total_size != b.index.has_total_size ||
      a.index.total_size != b.index.total_size || a.index.shards != b.index.shards ||
      a.index.weight_map.size() != b.index.weight_map.size()) {
    return false;
  }
  for (size_t i = 0; i < a.index.weight_map.size(); ++i) {
    const auto& x = a.index.weight_map[i];
    const auto& y = b.index.weight_map[i];
    if (x.tensor != y.tensor || x.shard != y.shard) return false;
    uint32_t at = 0, bt = 0;
    if (!a.lookup.Find(x.tensor, &at) || at != i || !b.lookup.Find(x.tensor, &bt) || bt != i) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  const Read first(json, IndexReader::kFastFirst);
  const Read full(json, IndexReader::kFullOnly);
  if (!Same(first, full)) std::abort();  // the two readers disagree
  return 0;
}
