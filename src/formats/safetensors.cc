// safetensors header reader. Reads the 8-byte length and the JSON header only, never the
// data region, and enforces the reference reader's validation (huggingface/safetensors
// `SafeTensors::read_metadata` and `Metadata::validate`, commit 24b0b28, 2026-05-12).
//
//   byte 0                8                     8+N                         file_size
//   +---------------------+---------------------+---------------------------+
//   | N: u64 little-endian| header: UTF-8 JSON   | data buffer               |
//   +---------------------+---------------------+---------------------------+
//   header = { "__metadata__": {str: str}?,  name: {"dtype": str, "shape": [u64...],
//              "data_offsets": [begin, end]} ... }   (JSON whitespace allowed on both sides)
//   offsets are relative to byte 8+N; sorted by offset the tensors must tile [0, last_end)
//   exactly, and 8 + N + last_end == file_size.
//
// The header is read with JsonReader (json_reader.h), which builds no document: memory is the
// header's bytes, the tensor list (TensorList, ~96 bytes a tensor) and 4-8 bytes a tensor of
// duplicate check, whatever the header holds.
#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>

#include "core/checked.h"
#include "core/string_set.h"
#include "core/text.h"
#include "formats/fast_json.h"
#include "formats/json_reader.h"
#include "formats/safetensors_readers.h"
#include "vramfit/formats.h"

namespace vramfit {
namespace {

using formats::JsonReader;
using Kind = formats::JsonReader::Kind;

constexpr std::string_view kBom = "\xEF\xBB\xBF";

uint64_t ReadLe64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

std::string ShapeText(const Shape& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

// A JSON number token that is a non-negative integer (the reference types these as usize).
// "-0" is 0, as serde_json reads it.
bool AsU64(std::string_view token, uint64_t* out) {
  if (token == "-0") {
    *out = 0;
    return true;
  }
  if (token.empty() || token.find_first_not_of("0123456789") != std::string_view::npos) {
    return false;
  }
  const auto r = std::from_chars(token.data(), token.data() + token.size(), *out);
  return r.ec == std::errc() && r.ptr == token.data() + token.size();
}

// Reads the non-object value at the reader (checked, passed over) for a message that names
// its kind and quotes it.
struct Seen {
  Kind kind;
  std::string excerpt;
};
Result<Seen> SeeValue(JsonReader& r) {
  Seen v{r.Peek(), ""};
  const size_t from = r.pos();
  VRAMFIT_RETURN_IF_ERROR(r.Skip());
  v.excerpt = r.Excerpt(from);
  return v;
}

// One of a tensor's arrays, "shape" or "data_offsets": each u64 element goes to `add`; what
// else was there is recorded for the message (the first element that is not a u64, the
// value quoted).
// The excerpts are made only when a message needs them: `from` is where the value starts, and
// the reader stays after it until the caller has reported.
struct U64Array {
  bool is_array = false;
  size_t count = 0;  // elements
  bool all_u64 = true;
  size_t bad_index = 0;
  std::string bad_excerpt;
  size_t from = 0;
};
template <typename Add>
Status ReadU64Array(JsonReader& r, U64Array* a, Add&& add) {
  a->from = r.pos();
  if (r.Peek() != Kind::kArray) return r.Skip();
  a->is_array = true;
  VRAMFIT_RETURN_IF_ERROR(r.Enter('['));
  size_t i = 0;
  for (bool first = true, more = true;; ++i) {
    VRAMFIT_RETURN_IF_ERROR(r.Element(&first, &more));
    if (!more) break;
    ++a->count;
    const size_t at = r.pos();
    uint64_t v = 0;
    std::string_view token;
    if (r.Peek() == Kind::kNumber) {
      VRAMFIT_RETURN_IF_ERROR(r.Number(&token));
    } else {
      VRAMFIT_RETURN_IF_ERROR(r.Skip());
    }
    if (!token.empty() && AsU64(token, &v)) {
      add(v);
    } else if (a->all_u64) {
      a->all_u64 = false;
      a->bad_index = i;
      a->bad_excerpt = r.Excerpt(at);
    }
  }
  return Status::Ok();
}

Status ParseTensorEntry(JsonReader& r, std::string_view origin, TensorInfo* t) {
  // The name as messages print it: made only on the way to an error.
  const auto name = [t] { return core::Printable(t->name); };
  r.SetContext("tensor", t->name, "");
  if (r.Peek() != Kind::kObject) {
    auto v = SeeValue(r);
    if (!v.ok()) return v.status();
    return Status::Corrupt(fmt::format(
        "{}: tensor \"{}\": expected an object with dtype, shape and data_offsets, found {}",
        origin, name(), JsonReader::KindName(v->kind)));
  }
  VRAMFIT_RETURN_IF_ERROR(r.Enter('{'));
  bool seen_dtype = false, seen_shape = false, seen_offsets = false;
  for (bool first = true, more = true;;) {
    std::string_view key;
    r.SetContext("tensor", t->name, "");
    VRAMFIT_RETURN_IF_ERROR(r.Member(&first, &key, &more));
    if (!more) break;
    // Literals, so that the context outlives the key's scratch buffer.
    r.SetContext("tensor", t->name, key == "dtype" ? "dtype" : key == "shape" ? "shape"
                                    : key == "data_offsets" ? "data_offsets" : "");
    if (key == "dtype") {
      if (seen_dtype) {
        return Status::Corrupt(
            fmt::format("{}: tensor \"{}\": duplicate key \"dtype\"", origin, name()));
      }
      seen_dtype = true;
      if (r.Peek() != Kind::kString) {
        auto v = SeeValue(r);
        if (!v.ok()) return v.status();
        return Status::Corrupt(
            fmt::format("{}: tensor \"{}\": \"dtype\" must be a string, found {}", origin, name(),
                        JsonReader::KindName(v->kind)));
      }
      std::string_view s;
      VRAMFIT_RETURN_IF_ERROR(r.String(&s));
      if (!ParseDtype(s, &t->dtype)) {
        return Status::Corrupt(fmt::format(
            "{}: tensor \"{}\": unknown dtype \"{}\" (expected one of BOOL, U8, I8, F8_E5M2, "
            "F8_E4M3, F8_E8M0, F8_E4M3FNUZ, F8_E5M2FNUZ, I16, U16, F16, BF16, I32, U32, F32, F64, "
            "I64, U64, C64, F4, F6_E2M3, F6_E3M2)", origin, name(), core::Printable(s)));
      }
    } else if (key == "shape") {
      if (seen_shape) {
        return Status::Corrupt(
            fmt::format("{}: tensor \"{}\": duplicate key \"shape\"", origin, name()));
      }
      seen_shape = true;
      const Kind kind = r.Peek();
      t->shape.clear();
      U64Array a;
      VRAMFIT_RETURN_IF_ERROR(ReadU64Array(r, &a, [&](uint64_t d) { t->shape.push_back(d); }));
      if (!a.is_array) {
        return Status::Corrupt(
            fmt::format("{}: tensor \"{}\": \"shape\" must be an array, found {}", origin, name(),
                        JsonReader::KindName(kind)));
      }
      if (!a.all_u64) {
        return Status::Corrupt(fmt::format(
            "{}: tensor \"{}\": shape[{}] must be a non-negative integer, found {}", origin,
            name(), a.bad_index, a.bad_excerpt));
      }
    } else if (key == "data_offsets") {
      if (seen_offsets) {
        return Status::Corrupt(
            fmt::format("{}: tensor \"{}\": duplicate key \"data_offsets\"", origin, name()));
      }
      seen_offsets = true;
      uint64_t offsets[2] = {0, 0};
      size_t n = 0;
      U64Array a;
      VRAMFIT_RETURN_IF_ERROR(ReadU64Array(r, &a, [&](uint64_t v) {
        if (n < 2) offsets[n] = v;
        ++n;
      }));
      if (!a.is_array || a.count != 2) {
        return Status::Corrupt(fmt::format(
            "{}: tensor \"{}\": \"data_offsets\" must be [begin, end], found {}", origin, name(),
            r.Excerpt(a.from)));
      }
      if (!a.all_u64) {
        return Status::Corrupt(fmt::format(
            "{}: tensor \"{}\": \"data_offsets\" must hold two non-negative integers, found {}",
            origin, name(), r.Excerpt(a.from)));
      }
      t->begin = offsets[0];
      t->end = offsets[1];
    } else {
      // Ignored, as the reference reader's serde struct does; named in a syntax error in it.
      const std::string ignored(key);
      r.SetContext("tensor", t->name, ignored);
      VRAMFIT_RETURN_IF_ERROR(r.Skip());
    }
  }
  const char* missing = !seen_dtype     ? "dtype"
                        : !seen_shape   ? "shape"
                        : !seen_offsets ? "data_offsets"
                                        : nullptr;
  if (missing != nullptr) {
    return Status::Corrupt(
        fmt::format("{}: tensor \"{}\": missing key \"{}\"", origin, name(), missing));
  }
  r.SetContext("", "", "");
  // Element count, with overflow checks (ValidationOverflow in the reference reader).
  uint64_t elements = 1;
  for (uint64_t d : t->shape) {
    if (!core::CheckedMul(elements, d, &elements)) {
      return Status::Corrupt(fmt::format(
          "{}: tensor \"{}\": shape {} has more elements than fit in 64 bits", origin, name(),
          ShapeText(t->shape)));
    }
  }
  t->elements = elements;
  return Status::Ok();
}

// `__metadata__`: an object of strings.
Status ParseMetadata(JsonReader& r, std::string_view origin, SafetensorsFile* file) {
  if (r.Peek() != Kind::kObject) {
    auto v = SeeValue(r);
    if (!v.ok()) return v.status();
    return Status::Corrupt(
        fmt::format("{}: \"__metadata__\" must be an object of strings, found {}", origin,
                    JsonReader::KindName(v->kind)));
  }
  VRAMFIT_RETURN_IF_ERROR(r.Enter('{'));
  for (bool first = true, more = true;;) {
    std::string_view k;
    r.SetContext("", "__metadata__", "");
    VRAMFIT_RETURN_IF_ERROR(r.Member(&first, &k, &more));
    if (!more) break;
    const std::string key(k);
    r.SetContext("", "__metadata__", key);
    if (r.Peek() != Kind::kString) {
      auto v = SeeValue(r);
      if (!v.ok()) return v.status();
      return Status::Corrupt(fmt::format(
          "{}: \"__metadata__\".\"{}\": values must be strings, found {} ({})", origin,
          core::Printable(key), JsonReader::KindName(v->kind), v->excerpt));
    }
    std::string_view value;
    VRAMFIT_RETURN_IF_ERROR(r.String(&value));
    if (!file->metadata.emplace(key, std::string(value)).second) {
      return Status::Corrupt(fmt::format("{}: \"__metadata__\": duplicate key \"{}\"", origin,
                                         core::Printable(key)));
    }
  }
  r.SetContext("", "", "");
  return Status::Ok();
}

// Sorts the list by (begin, end), ties in header order, in place: an index is sorted and the
// permutation applied by cycles, so no second list is ever made.
void SortByOffset(TensorList* tensors) {
  const auto before = [](const TensorInfo& a, const TensorInfo& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  };
  if (std::is_sorted(tensors->begin(), tensors->end(), before)) return;
  std::vector<uint32_t> order(tensors->size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const TensorInfo& x = (*tensors)[a];
    const TensorInfo& y = (*tensors)[b];
    return before(x, y) || (!before(y, x) && a < b);
  });
  for (uint32_t i = 0; i < order.size(); ++i) {
    if (order[i] == i) continue;
    TensorInfo held = std::move((*tensors)[i]);
    uint32_t j = i;
    while (true) {
      const uint32_t k = order[j];
      order[j] = j;
      if (k == i) {
        (*tensors)[j] = std::move(held);
        break;
      }
      (*tensors)[j] = std::move((*tensors)[k]);
      j = k;
    }
  }
}

// The fast reader. Writers (the reference one, PyTorch's, nlohmann's) emit one shape of header:
// names without escapes, plain non-negative integers, the three keys of a tensor and nothing
// else. FastHeader reads that shape only, in one pass with no Status values, and gives up
// (Read returns false) at the first byte outside it, whether the header is valid or not; the
// header is then read again by JsonReader, which accepts it or explains what is wrong. A header
// FastHeader accepts, JsonReader accepts with the same tensors and metadata
// (safetensors_test.cc and the fuzzer compare the two), so messages come from one place.
class FastHeader : private formats::FastJson {
 public:
  explicit FastHeader(std::string_view text) : FastJson(text) {}

  // Fills `file`'s tensors (in header order) and metadata; false: read it with JsonReader.
  bool Read(uint64_t header_length, SafetensorsFile* file) {
    if (!Eat('{')) return false;
    TensorList& tensors = file->tensors;
    const auto name_of = [&tensors](uint32_t i) { return std::string_view(tensors[i].name); };
    core::IndexedNames<decltype(name_of)> names(static_cast<size_t>(header_length / 64), name_of);
    bool seen_metadata = false;
    if (!Eat('}')) {
      do {
        std::string_view key;
        if (!Key(&key)) return false;
        if (key == "__metadata__") {
          if (seen_metadata || !Metadata(&file->metadata)) return false;
          seen_metadata = true;
          continue;
        }
        if (tensors.size() >= std::numeric_limits<uint32_t>::max() - 1) return false;
        TensorInfo& t = tensors.emplace_back();
        t.name.assign(key);
        if (!names.Insert(static_cast<uint32_t>(tensors.size() - 1))) return false;
        if (!Entry(&t)) return false;
      } while (Eat(','));
      if (!Eat('}')) return false;
    }
    return AtEnd();
  }

 private:
  // [u64, ...], each element given to `add`; returns the element count, or -1.
  template <typename Add>
  int64_t U64Array(Add&& add) {
    if (!Eat('[')) return -1;
    if (Eat(']')) return 0;
    int64_t n = 0;
    do {
      uint64_t v = 0;
      if (!U64(&v)) return -1;
      add(v);
      ++n;
    } while (Eat(','));
    return Eat(']') ? n : -1;
  }
  // {"dtype": ..., "shape": [...], "data_offsets": [begin, end]} in any order, each once.
  bool Entry(TensorInfo* t) {
    if (!Eat('{')) return false;
    bool dtype = false, shape = false, offsets = false;
    do {
      std::string_view key;
      if (!Key(&key)) return false;
      if (key == "dtype" && !dtype) {
        std::string_view s;
        if (!String(&s) || !ParseDtype(s, &t->dtype)) return false;
        dtype = true;
      } else if (key == "shape" && !shape) {
        if (U64Array([t](uint64_t d) { t->shape.push_back(d); }) < 0) return false;
        shape = true;
      } else if (key == "data_offsets" && !offsets) {
        uint64_t at[2] = {0, 0};
        size_t n = 0;
        const auto add = [&](uint64_t v) {
          if (n < 2) at[n] = v;
          ++n;
        };
        if (U64Array(add) != 2) return false;
        t->begin = at[0];
        t->end = at[1];
        offsets = true;
      } else {
        return false;
      }
    } while (Eat(','));
    if (!Eat('}') || !dtype || !shape || !offsets) return false;
    uint64_t elements = 1;
    for (uint64_t d : t->shape) {
      if (!core::CheckedMul(elements, d, &elements)) return false;
    }
    t->elements = elements;
    return true;
  }
  // {"key": "value", ...}: strings only, keys unique.
  bool Metadata(std::map<std::string, std::string>* out) {
    if (!Eat('{')) return false;
    if (Eat('}')) return true;
    do {
      std::string_view key, value;
      if (!Key(&key) || !String(&value)) return false;
      if (!out->emplace(std::string(key), std::string(value)).second) return false;
    } while (Eat(','));
    return Eat('}');
  }

};

// The reference reader's coverage rule over the sorted list.
Status CheckOffsets(const SafetensorsFile& file, std::string_view origin) {
  uint64_t start = 0;
  const TensorInfo* prev = nullptr;
  for (const TensorInfo& t : file.tensors) {
    if (t.begin != start || t.end < t.begin) {
      const std::string prev_name = prev ? core::Printable(prev->name) : std::string();
      std::string why;
      if (t.end < t.begin) {
        why = fmt::format("end {} is before begin {}", t.end, t.begin);
      } else if (t.begin > start) {
        why = fmt::format("begin {} leaves a gap of {} bytes after {}", t.begin, t.begin - start,
                          prev ? fmt::format("tensor \"{}\" (ends at {})", prev_name, start)
                               : std::string("the start of the data buffer"));
      } else {
        why = fmt::format("begin {} overlaps tensor \"{}\" (ends at {})", t.begin, prev_name,
                          start);
      }
      return Status::Corrupt(fmt::format("{}: tensor \"{}\": data_offsets [{}, {}]: {}; expected "
                                         "begin {}", origin, core::Printable(t.name), t.begin,
                                         t.end, why, start));
    }
    uint64_t nbits = 0;
    if (!core::CheckedMul(t.elements, static_cast<uint64_t>(DtypeBits(t.dtype)), &nbits)) {
      return Status::Corrupt(fmt::format("{}: tensor \"{}\": shape {} x {} bits overflows 64 bits",
                                         origin, core::Printable(t.name), ShapeText(t.shape),
                                         DtypeBits(t.dtype)));
    }
    if (nbits % 8 != 0) {
      return Status::Corrupt(fmt::format(
          "{}: tensor \"{}\": shape {} of {} is {} bits, not a whole number of bytes", origin,
          core::Printable(t.name), ShapeText(t.shape), DtypeName(t.dtype), nbits));
    }
    if (t.end - t.begin != nbits / 8) {
      return Status::Corrupt(fmt::format(
          "{}: tensor \"{}\": data_offsets [{}, {}] cover {} bytes, expected {} (shape {} of {})",
          origin, core::Printable(t.name), t.begin, t.end, t.end - t.begin, nbits / 8,
          ShapeText(t.shape), DtypeName(t.dtype)));
    }
    start = t.end;
    prev = &t;
  }
  const uint64_t data_bytes = file.data_bytes();  // n <= file_size - 8, checked
  if (start != data_bytes) {
    return Status::Corrupt(fmt::format(
        "{}: tensors end at data byte {}, but the file holds {} data bytes after its {}-byte "
        "header: {}", origin, start, data_bytes, file.header_length,
        start > data_bytes ? "the file is truncated" : "trailing bytes follow the last tensor"));
  }
  return Status::Ok();
}

}  // namespace

Result<uint64_t> ParseSafetensorsHeaderLength(std::string_view prefix, uint64_t file_size,
                                              std::string_view origin) {
  if (file_size < kSafetensorsPrefix || prefix.size() < kSafetensorsPrefix) {
    return Status::Corrupt(fmt::format(
        "{}: file is {} bytes, expected at least 8 (the little-endian header length)", origin,
        std::min<uint64_t>(file_size, prefix.size())));
  }
  const uint64_t n = ReadLe64(prefix.data());
  if (n > kMaxSafetensorsHeader) {
    return Status::Corrupt(fmt::format(
        "{}: byte 0: header length {} exceeds the 100,000,000-byte limit of the reference "
        "reader (is this a safetensors file?)", origin, n));
  }
  if (n > file_size - kSafetensorsPrefix) {
    return Status::Corrupt(fmt::format(
        "{}: byte 0: header length {} runs past the end of the file ({} bytes: at most {} "
        "header bytes exist); the file is truncated or not safetensors",
        origin, n, file_size, file_size - kSafetensorsPrefix));
  }
  return n;
}

namespace formats {

Result<SafetensorsFile> ParseSafetensorsWith(std::string_view bytes, uint64_t file_size,
                                             std::string_view origin, HeaderReader reader) {
  auto len = ParseSafetensorsHeaderLength(bytes, file_size, origin);
  if (!len.ok()) return len.status();
  const uint64_t n = *len;
  if (bytes.size() - kSafetensorsPrefix < n) {
    return Status::Corrupt(fmt::format("{}: only {} of the {} header bytes could be read", origin,
                                       bytes.size() - kSafetensorsPrefix, n));
  }
  const std::string_view header = bytes.substr(kSafetensorsPrefix, n);
  if (!simdjson::validate_utf8(header.data(), header.size())) {
    const size_t at = core::FirstInvalidUtf8(header);
    return Status::Corrupt(fmt::format(
        "{}: byte {}: expected UTF-8 text, found byte 0x{:02x} that starts no valid sequence",
        origin, kSafetensorsPrefix + at, static_cast<unsigned char>(header[at])));
  }
  if (reader != HeaderReader::kFullOnly) {
    SafetensorsFile file;
    file.origin = std::string(origin);
    file.header_length = n;
    file.file_size = file_size;
    if (FastHeader(header).Read(n, &file)) {
      SortByOffset(&file.tensors);
      VRAMFIT_RETURN_IF_ERROR(CheckOffsets(file, origin));
      return file;
    }
    if (reader == HeaderReader::kFastOnly) {
      return Status::Unsupported(fmt::format("{}: the fast reader gives up", origin));
    }
  }
  JsonReader r(header, kSafetensorsPrefix, origin, "the end of the header");
  if (header.substr(0, kBom.size()) == kBom) {
    return r.ErrorAt(0, "a UTF-8 byte-order mark (EF BB BF) opens the header: JSON must not "
                        "start with one (the reference reader refuses it)");
  }
  const Kind top = r.Peek();
  if (top == Kind::kEnd) {
    return Status::Corrupt(fmt::format("{}: expected a JSON object, found no JSON at all "
                                       "(empty or only whitespace)", origin));
  }
  if (top != Kind::kObject) {
    auto v = SeeValue(r);
    if (!v.ok()) return v.status();
    VRAMFIT_RETURN_IF_ERROR(r.Finish());
    return Status::Corrupt(
        fmt::format("{}: byte 8: expected the header to be a JSON object, found {}", origin,
                    JsonReader::KindName(top)));
  }

  SafetensorsFile file;
  file.origin = std::string(origin);
  file.header_length = n;
  file.file_size = file_size;
  TensorList& tensors = file.tensors;
  // A header entry is at least 50 bytes: a first guess at the count sizes the duplicate check.
  const auto name_of = [&tensors](uint32_t i) { return std::string_view(tensors[i].name); };
  core::IndexedNames<decltype(name_of)> names(static_cast<size_t>(n / 64), name_of);
  bool seen_metadata = false;
  VRAMFIT_RETURN_IF_ERROR(r.Enter('{'));
  for (bool first = true, more = true;;) {
    std::string_view key;
    VRAMFIT_RETURN_IF_ERROR(r.Member(&first, &key, &more));
    if (!more) break;
    if (key == "__metadata__") {
      if (seen_metadata) {
        return Status::Corrupt(
            fmt::format("{}: duplicate key \"__metadata__\" in the header", origin));
      }
      seen_metadata = true;
      VRAMFIT_RETURN_IF_ERROR(ParseMetadata(r, origin, &file));
      continue;
    }
    if (tensors.size() >= std::numeric_limits<uint32_t>::max() - 1) {
      return Status::Corrupt(fmt::format("{}: more than 4 billion tensors", origin));
    }
    tensors.emplace_back();
    tensors.back().name = std::string(key);
    if (!names.Insert(static_cast<uint32_t>(tensors.size() - 1))) {
      return Status::Corrupt(fmt::format("{}: duplicate key \"{}\" in the header", origin,
                                         core::Printable(key)));
    }
    VRAMFIT_RETURN_IF_ERROR(ParseTensorEntry(r, origin, &tensors.back()));
  }
  VRAMFIT_RETURN_IF_ERROR(r.Finish());

  // The reference reader sorts by offsets before it validates: key order carries no meaning.
  SortByOffset(&tensors);
  VRAMFIT_RETURN_IF_ERROR(CheckOffsets(file, origin));
  return file;
}

}  // namespace formats

Result<SafetensorsFile> ParseSafetensors(std::string_view bytes, uint64_t file_size,
                                         std::string_view origin) {
  return formats::ParseSafetensorsWith(bytes, file_size, origin,
                                       formats::HeaderReader::kFastFirst);
}

}  // namespace vramfit
