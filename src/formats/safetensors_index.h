// The index reader behind ParseSafetensorsIndex (vramfit/formats.h), for the checkpoint reader
// that looks every shard tensor up in it, and for the tests that compare its two readers: a
// fast one for the shape writers emit (escape-free names and shard names, an integer
// total_size), which gives up on anything else, and the full simdjson one, which explains.
#ifndef VRAMFIT_FORMATS_SAFETENSORS_INDEX_H_
#define VRAMFIT_FORMATS_SAFETENSORS_INDEX_H_

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
// The index's tensor names, as indices into its weight_map: the reader's duplicate check,
// and then the lookup of a shard's tensors.
using IndexNameTable = core::IndexedNames<IndexEntryName>;

enum class IndexReader {
  kFastFirst,  // the fast reader, then the full one where the fast one gives up
  kFullOnly,   // the full reader alone
  kFastOnly,   // the fast reader alone: Code::kUnsupported where it gives up
};

// Reads an index into `index` and the table of its names into `table` (whose names are
// `index->weight_map`'s: the table is valid while `index` stays where it is and unchanged).
// Results and messages are those of ParseSafetensorsIndex, whichever reader is chosen.
Status ReadSafetensorsIndex(std::string_view json, std::string_view origin, IndexReader reader,
                            SafetensorsIndex* index, IndexNameTable* table);

}  // namespace vramfit::formats

#endif  // VRAMFIT_FORMATS_SAFETENSORS_INDEX_H_
