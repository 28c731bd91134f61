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
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "core/checked.h"
#include "core/string_set.h"
#include "formats/json_util.h"
#include "vramfit/formats.h"

namespace vramfit {
namespace {

using formats::JsonExcerpt;
using formats::JsonTypeName;

uint64_t ReadLe64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

std::string ShapeText(const Shape& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

// Reads a non-negative integer that fits in u64 (the reference types these as usize).
bool GetU64(const simdjson::dom::element& e, uint64_t* out) {
  return e.get_uint64().get(*out) == simdjson::SUCCESS;
}

Status ParseTensorEntry(std::string_view origin, std::string_view name,
                        const simdjson::dom::element& value, TensorInfo* t) {
  simdjson::dom::object obj;
  if (value.get_object().get(obj)) {
    return Status::Corrupt(fmt::format(
        "{}: tensor \"{}\": expected an object with dtype, shape and data_offsets, found {}",
        origin, name, JsonTypeName(value)));
  }
  bool seen_dtype = false, seen_shape = false, seen_offsets = false;
  for (auto field : obj) {
    const std::string_view key = field.key;
    if (key == "dtype") {
      if (seen_dtype) {
        return Status::Corrupt(
            fmt::format("{}: tensor \"{}\": duplicate key \"dtype\"", origin, name));
      }
      seen_dtype = true;
      std::string_view s;
      if (field.value.get_string().get(s)) {
        return Status::Corrupt(
            fmt::format("{}: tensor \"{}\": \"dtype\" must be a string, found {}", origin, name,
                        JsonTypeName(field.value)));
      }
      if (!ParseDtype(s, &t->dtype)) {
        return Status::Corrupt(fmt::format(
            "{}: tensor \"{}\": unknown dtype \"{}\" (expected one of BOOL, U8, I8, F8_E5M2, "
            "F8_E4M3, F8_E8M0, F8_E4M3FNUZ, F8_E5M2FNUZ, I16, U16, F16, BF16, I32, U32, F32, F64, "
            "I64, U64, C64, F4, F6_E2M3, F6_E3M2)", origin, name, s));
      }
    } else if (key == "shape") {
      if (seen_shape) {
        return Status::Corrupt(
            fmt::format("{}: tensor \"{}\": duplicate key \"shape\"", origin, name));
      }
      seen_shape = true;
      simdjson::dom::array arr;
      if (field.value.get_array().get(arr)) {
        return Status::Corrupt(
            fmt::format("{}: tensor \"{}\": \"shape\" must be an array, found {}", origin, name,
                        JsonTypeName(field.value)));
      }
      t->shape.clear();
      size_t i = 0;
      for (auto d : arr) {
        uint64_t v = 0;
        if (!GetU64(d, &v)) {
          return Status::Corrupt(fmt::format(
              "{}: tensor \"{}\": shape[{}] must be a non-negative integer, found {}", origin,
              name, i, JsonExcerpt(d)));
        }
        t->shape.push_back(v);
        ++i;
      }
    } else if (key == "data_offsets") {
      if (seen_offsets) {
        return Status::Corrupt(
            fmt::format("{}: tensor \"{}\": duplicate key \"data_offsets\"", origin, name));
      }
      seen_offsets = true;
      simdjson::dom::array arr;
      if (field.value.get_array().get(arr) || arr.size() != 2) {
        return Status::Corrupt(fmt::format(
            "{}: tensor \"{}\": \"data_offsets\" must be [begin, end], found {}", origin, name,
            JsonExcerpt(field.value)));
      }
      auto it = arr.begin();
      if (!GetU64(*it, &t->begin) || !GetU64(*++it, &t->end)) {
        return Status::Corrupt(fmt::format(
            "{}: tensor \"{}\": \"data_offsets\" must hold two non-negative integers, found {}",
            origin, name, JsonExcerpt(field.value)));
      }
    }
    // Other keys are ignored, as the reference reader's serde struct ignores them.
  }
  const char* missing = !seen_dtype     ? "dtype"
                        : !seen_shape   ? "shape"
                        : !seen_offsets ? "data_offsets"
                                        : nullptr;
  if (missing != nullptr) {
    return Status::Corrupt(
        fmt::format("{}: tensor \"{}\": missing key \"{}\"", origin, name, missing));
  }
  // Element count, with overflow checks (ValidationOverflow in the reference reader).
  uint64_t elements = 1;
  for (uint64_t d : t->shape) {
    if (!core::CheckedMul(elements, d, &elements)) {
      return Status::Corrupt(fmt::format(
          "{}: tensor \"{}\": shape {} has more elements than fit in 64 bits", origin, name,
          ShapeText(t->shape)));
    }
  }
  t->elements = elements;
  t->name = std::string(name);
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

Result<SafetensorsFile> ParseSafetensors(std::string_view bytes, uint64_t file_size,
                                         std::string_view origin, bool padded) {
  static_assert(kSafetensorsReadPadding >= simdjson::SIMDJSON_PADDING);
  auto len = ParseSafetensorsHeaderLength(bytes, file_size, origin);
  if (!len.ok()) return len.status();
  const uint64_t n = *len;
  if (bytes.size() - kSafetensorsPrefix < n) {
    return Status::Corrupt(fmt::format("{}: only {} of the {} header bytes could be read", origin,
                                       bytes.size() - kSafetensorsPrefix, n));
  }
  const std::string_view header = bytes.substr(kSafetensorsPrefix, n);

  thread_local simdjson::dom::parser parser;
  simdjson::dom::element root;
  // The header is followed by the rest of `bytes` (or the caller's padding): parse in place
  // when enough readable bytes follow it.
  const bool in_place =
      padded || bytes.size() - kSafetensorsPrefix - n >= simdjson::SIMDJSON_PADDING;
  VRAMFIT_RETURN_IF_ERROR(
      formats::ParseJson(parser, header, origin, kSafetensorsPrefix, &root, in_place));
  simdjson::dom::object obj;
  if (root.get_object().get(obj)) {
    return Status::Corrupt(
        fmt::format("{}: byte 8: expected the header to be a JSON object, found {}", origin,
                    JsonTypeName(root)));
  }

  SafetensorsFile file;
  file.origin = std::string(origin);
  file.header_length = n;
  file.file_size = file_size;
  std::vector<TensorInfo> tensors;
  tensors.reserve(obj.size());
  core::StringViewSet names(obj.size());
  bool seen_metadata = false;
  for (auto field : obj) {
    const std::string_view key = field.key;
    if (!names.Insert(key) || (key == "__metadata__" && seen_metadata)) {
      return Status::Corrupt(fmt::format("{}: duplicate key \"{}\" in the header", origin, key));
    }
    if (key == "__metadata__") {
      seen_metadata = true;
      simdjson::dom::object meta;
      if (field.value.get_object().get(meta)) {
        return Status::Corrupt(
            fmt::format("{}: \"__metadata__\" must be an object of strings, found {}", origin,
                        JsonTypeName(field.value)));
      }
      for (auto m : meta) {
        std::string_view v;
        if (m.value.get_string().get(v)) {
          return Status::Corrupt(fmt::format(
              "{}: \"__metadata__\".\"{}\": values must be strings, found {} ({})", origin,
              m.key, JsonTypeName(m.value), JsonExcerpt(m.value)));
        }
        if (!file.metadata.emplace(std::string(m.key), std::string(v)).second) {
          return Status::Corrupt(
              fmt::format("{}: \"__metadata__\": duplicate key \"{}\"", origin, m.key));
        }
      }
      continue;
    }
    tensors.emplace_back();
    VRAMFIT_RETURN_IF_ERROR(ParseTensorEntry(origin, key, field.value, &tensors.back()));
  }

  // The reference reader sorts by offsets before it validates: key order carries no meaning.
  // Writers usually emit offset order already; sort (an index, not the structs) only if not.
  const auto before = [](const TensorInfo& a, const TensorInfo& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  };
  if (std::is_sorted(tensors.begin(), tensors.end(), before)) {
    file.tensors = std::move(tensors);
  } else {
    std::vector<uint32_t> order(tensors.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](uint32_t a, uint32_t b) { return before(tensors[a], tensors[b]); });
    file.tensors.reserve(tensors.size());
    for (uint32_t i : order) file.tensors.push_back(std::move(tensors[i]));
  }
  uint64_t start = 0;
  const TensorInfo* prev = nullptr;
  for (const TensorInfo& t : file.tensors) {
    if (t.begin != start || t.end < t.begin) {
      std::string why;
      if (t.end < t.begin) {
        why = fmt::format("end {} is before begin {}", t.end, t.begin);
      } else if (t.begin > start) {
        why = fmt::format("begin {} leaves a gap of {} bytes after {}", t.begin, t.begin - start,
                          prev ? fmt::format("tensor \"{}\" (ends at {})", prev->name, start)
                               : std::string("the start of the data buffer"));
      } else {
        why = fmt::format("begin {} overlaps tensor \"{}\" (ends at {})", t.begin,
                          prev ? prev->name : std::string(), start);
      }
      return Status::Corrupt(fmt::format("{}: tensor \"{}\": data_offsets [{}, {}]: {}; expected "
                                         "begin {}", origin, t.name, t.begin, t.end, why, start));
    }
    uint64_t nbits = 0;
    if (!core::CheckedMul(t.elements, static_cast<uint64_t>(DtypeBits(t.dtype)), &nbits)) {
      return Status::Corrupt(fmt::format("{}: tensor \"{}\": shape {} x {} bits overflows 64 bits",
                                         origin, t.name, ShapeText(t.shape), DtypeBits(t.dtype)));
    }
    if (nbits % 8 != 0) {
      return Status::Corrupt(fmt::format(
          "{}: tensor \"{}\": shape {} of {} is {} bits, not a whole number of bytes", origin,
          t.name, ShapeText(t.shape), DtypeName(t.dtype), nbits));
    }
    if (t.end - t.begin != nbits / 8) {
      return Status::Corrupt(fmt::format(
          "{}: tensor \"{}\": data_offsets [{}, {}] cover {} bytes, expected {} (shape {} of {})",
          origin, t.name, t.begin, t.end, t.end - t.begin, nbits / 8, ShapeText(t.shape),
          DtypeName(t.dtype)));
    }
    start = t.end;
    prev = &t;
  }
  const uint64_t data_bytes = file_size - kSafetensorsPrefix - n;  // n <= file_size - 8, checked
  if (start != data_bytes) {
    return Status::Corrupt(fmt::format(
        "{}: tensors end at data byte {}, but the file holds {} data bytes after its {}-byte "
        "header: {}", origin, start, data_bytes, n,
        start > data_bytes ? "the file is truncated" : "trailing bytes follow the last tensor"));
  }
  return file;
}

}  // namespace vramfit
