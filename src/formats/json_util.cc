// JSON helpers shared by the format parsers (see json_util.h).
#include "formats/json_util.h"

#include <fmt/format.h>

#include "core/text.h"
#include "formats/json_reader.h"

namespace vramfit::formats {

Status ParseJson(simdjson::dom::parser& parser, std::string_view json, std::string_view origin,
                 uint64_t base_offset, simdjson::dom::element* out, bool padded) {
  auto err = parser.parse(json.data(), json.size(), !padded).get(*out);
  if (!err) return Status::Ok();
  if (err == simdjson::UTF8_ERROR) {
    const size_t at = core::FirstInvalidUtf8(json);
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
  // simdjson says what kind of problem, not where: the pull reader finds the byte and the key
  // (a number past 64 bits, a lone surrogate, a BOM, a trailing comma, ...).
  const Status where = DiagnoseJson(json, base_offset, origin);
  if (!where.ok()) return where;
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
