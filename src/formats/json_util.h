// Shared helpers for the JSON-based formats (safetensors header, index, config.json):
// parsing with simdjson into a DOM, and error text that says where and what.
#ifndef VRAMFIT_FORMATS_JSON_UTIL_H_
#define VRAMFIT_FORMATS_JSON_UTIL_H_

#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "vramfit/status.h"

namespace vramfit::formats {

// Parses `json` with `parser` (whose buffers are reused across calls). On failure returns a
// kCorrupt status: "<origin>: <what>", with the byte offset (plus `base_offset`, the position
// of `json` inside its file) of invalid UTF-8 when that is the cause.
// `padded`: at least simdjson::SIMDJSON_PADDING readable bytes follow `json`, so it is parsed
// in place instead of being copied into a padded buffer first.
Status ParseJson(simdjson::dom::parser& parser, std::string_view json, std::string_view origin,
                 uint64_t base_offset, simdjson::dom::element* out, bool padded = false);

// Name of a DOM element's type for messages: "object", "array", "string", "number", ...
const char* JsonTypeName(const simdjson::dom::element& e);

// A short excerpt of an element for messages (at most ~60 characters).
std::string JsonExcerpt(const simdjson::dom::element& e);

}  // namespace vramfit::formats

#endif  // VRAMFIT_FORMATS_JSON_UTIL_H_
