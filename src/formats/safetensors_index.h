// The index reader behind ParseSafetensorsIndex (vramfit/formats.h), for the checkpoint reader
// that looks every shard tensor up in it, and for the tests that compare its two readers: a
// fast one for the shape writers emit (escape-free names and shard names, an integer
// total_size), which gives up on anything else, and the full simdjson one, which explains.
#ifndef VRAMFIT_FORMATS_SAFETENSORS_INDEX_H_
#define VRAMFIT_FORMATS_SAFETENSORS_INDEX_H_

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/string_set.h"
#include "vramfit/formats.h"

namespace vramfit::formats {

// Entry i's tensor name, for a table of the index's names.
struct IndexEntryName {
  const std::vector<SafetensorsIndex::Entry>* map = nullptr;
  std::string_view operator()(uint32_t i) const { return (*map)[i].tensor; }
};
using IndexNameTable = core::IndexedNames<IndexEntryName>;

// The index's tensor names for the reader's duplicate check and then the lookup of a shard's
// tensors. Writers (transformers) sort the names: while they come in strictly increasing byte
// order no name can repeat and a lookup is a binary search, with no table at all; at the first
// name out of order a hash table of the names is built and used from then on.
class IndexLookup {
 public:
  // Looks names up in `index`'s weight_map, which must stay where it is.
  explicit IndexLookup(const SafetensorsIndex* index)
      : map_(&index->weight_map), table_(0, IndexEntryName{map_}) {}

  // Before the first entry: `expected` entries are a first guess for a table's size.
  void Reset(size_t expected) {
    expected_ = expected;
    sorted_ = true;
    table_ = IndexNameTable(0, IndexEntryName{map_});
  }
  // Adds the entry just appended to the weight_map; false when its name is already there.
  bool Add() {
    const auto& map = *map_;
    const uint32_t i = static_cast<uint32_t>(map.size() - 1);
    if (sorted_ && (i == 0 || map[i - 1].tensor < map[i].tensor)) return true;
    if (sorted_) {
      sorted_ = false;
      table_ = IndexNameTable(std::max<size_t>(expected_, map.size()), IndexEntryName{map_});
      for (uint32_t k = 0; k < i; ++k) table_.Insert(k);  // increasing, so distinct
    }
    return table_.Insert(i);
  }
  // The entry named `name`, or false. `*at` comes in as a guess (the entry after the one
  // found before, say: a shard's tensors are mostly in the index's order) and is tried first.
  bool Find(std::string_view name, uint32_t* at) const {
    const auto& map = *map_;
    if (*at < map.size() && map[*at].tensor == name) return true;
    if (!sorted_) return table_.Find(name, at);
    const auto it = std::lower_bound(
        map.begin(), map.end(), name,
        [](const SafetensorsIndex::Entry& e, std::string_view n) { return e.tensor < n; });
    if (it == map.end() || it->tensor != name) return false;
    *at = static_cast<uint32_t>(it - map.begin());
    return true;
  }

 private:
  const std::vector<SafetensorsIndex::Entry>* map_;
  bool sorted_ = true;
  size_t expected_ = 0;
  IndexNameTable table_;
};

enum class IndexReader {
  kFastFirst,  // the fast reader, then the full one where the fast one gives up
  kFullOnly,   // the full reader alone
  kFastOnly,   // the fast reader alone: Code::kUnsupported where it gives up
};

// Reads an index into `index` and the lookup of its names into `lookup` (made for `index`;
// valid while `index` stays where it is, unchanged). Results and messages are those of
// ParseSafetensorsIndex, whichever reader is chosen.
Status ReadSafetensorsIndex(std::string_view json, std::string_view origin, IndexReader reader,
                            SafetensorsIndex* index, IndexLookup* lookup);

}  // namespace vramfit::formats

#endif  // VRAMFIT_FORMATS_SAFETENSORS_INDEX_H_
