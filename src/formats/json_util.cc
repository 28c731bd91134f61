// JSON helpers shared by the format parsers (see json_util.h).
#include "formats/json_util.h"

#include <fmt/format.h>

namespace vramfit::formats {

size_t FirstInvalidUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    size_t len = 0;
    uint32_t cp = 0;
    if (c < 0x80) { ++i; continue; }
    if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; }
    else return i;
    if (i + len > n) return i;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are invalid.
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
      return i;
    }
    i += len;
  }
  return n;
}

Status ParseJson(simdjson::dom::parser& parser, std::string_view json, std::string_view origin,
                 uint64_t base_offset, simdjson::dom::element* out, bool padded) {
  auto err = parser.parse(json.data(), json.size(), !padded).get(*out);
  if (!err) return Status::Ok();
  if (err == simdjson::UTF8_ERROR) {
    const size_t at = FirstInvalidUtf8(json);
    const unsigned byte = at < json.size() ? static_cast<unsigned char>(json[at]) : 0;
    return Status::Corrupt(fmt::format(
        "{}: byte {}: expected UTF-8 text, found byte 0x{:02x} that starts no valid sequence",
        origin, base_offset + at, byte));
  }
  if (err == simdjson::CAPACITY) {
    return Status::Corrupt(fmt::format("{}: JSON of {} bytes is larger than the parser allows",
                                       origin, json.size()));
  }
  if (err == simdjson::DEPTH_ERROR) {
    return Status::Corrupt(fmt::format("{}: JSON nests deeper than {} levels", origin,
                                       simdjson::DEFAULT_MAX_DEPTH));
  }
  if (err == simdjson::EMPTY) {
    return Status::Corrupt(fmt::format("{}: expected a JSON object, found no JSON at all "
                                       "(empty or only whitespace)", origin));
  }
  return Status::Corrupt(fmt::format("{}: invalid JSON (bytes {}..{}): {}", origin, base_offset,
                                     base_offset + json.size(), simdjson::error_message(err)));
}

const char* JsonTypeName(const simdjson::dom::element& e) {
  switch (e.type()) {
    case simdjson::dom::element_type::ARRAY: return "an array";
    case simdjson::dom::element_type::OBJECT: return "an object";
    case simdjson::dom::element_type::INT64:
    case simdjson::dom::element_type::UINT64:
    case simdjson::dom::element_type::DOUBLE: return "a number";
    case simdjson::dom::element_type::STRING: return "a string";
    case simdjson::dom::element_type::BOOL: return "a boolean";
    case simdjson::dom::element_type::NULL_VALUE: return "null";
  }
  return "a value";
}

std::string JsonExcerpt(const simdjson::dom::element& e) {
  std::string s = simdjson::minify(e);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

}  // namespace vramfit::formats
