// A pull reader over JSON text (RFC 8259) that builds no document: the caller walks objects
// and arrays member by member, and every error names the byte offset, what was expected and
// what was found. It is what reads a safetensors header (a header of 100 MB would otherwise
// need a DOM of several times its size), and what explains why simdjson refused a config.json
// or an index (simdjson says "problem while parsing a number", not where).
//
// Strict as serde_json (what the reference readers use): no BOM, no trailing commas, no
// comments, no leading zeros, no raw control characters in strings, UTF-16 escapes in pairs,
// integers within 64 bits (signed or unsigned), numbers within a double's range, nesting at
// most kMaxJsonDepth deep. UTF-8 validity is the caller's check (one SIMD pass over the
// whole text, before the reader runs).
//
// Example:
//   JsonReader r(text, 8, "model.safetensors", "the end of the header");
//   VRAMFIT_RETURN_IF_ERROR(r.Enter('{'));
//   for (bool first = true, more = true;;) {
//     std::string_view key;
//     VRAMFIT_RETURN_IF_ERROR(r.Member(&first, &key, &more));
//     if (!more) break;
//     VRAMFIT_RETURN_IF_ERROR(r.Skip());
//   }
#ifndef VRAMFIT_FORMATS_JSON_READER_H_
#define VRAMFIT_FORMATS_JSON_READER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vramfit/status.h"

namespace vramfit::formats {

// serde_json's recursion limit.
inline constexpr int kMaxJsonDepth = 128;

class JsonReader {
 public:
  enum class Kind { kObject, kArray, kString, kNumber, kBool, kNull, kEnd, kOther };

  // `base`: the offset of text[0] in its file (messages give file offsets); `end_name`: how
  // messages call the end of the text ("the end of the header").
  JsonReader(std::string_view text, uint64_t base, std::string_view origin,
             std::string_view end_name);

  // The kind of the next value, after whitespace.
  Kind Peek();
  // "an object", "an array", "a string", "a number", "a boolean", "null", ...
  static const char* KindName(Kind k);
  // Position of the next unread byte in the text.
  size_t pos() const { return pos_; }

  // Consumes `open` ('{' or '['), after whitespace.
  Status Enter(char open);
  // The next member of the object entered last: its key (a view valid until the next key is
  // read) and the ':' after it; *more is false, and the '}' consumed, at the end. `first`
  // starts true and is the caller's per-object state.
  Status Member(bool* first, std::string_view* key, bool* more);
  // The same for arrays: positions the reader on the next element, or consumes ']'.
  Status Element(bool* first, bool* more);
  // A string value (a view valid until the next string value is read).
  Status String(std::string_view* out);
  // A number's text, checked against the grammar and the ranges above.
  Status Number(std::string_view* out);
  // Any value, checked and passed over.
  Status Skip();
  // Only whitespace may follow the top-level value.
  Status Finish();

  // What the value being read is, for messages: `name` quoted after `what` and a key, e.g.
  // tensor "a": "shape": byte 40: ... The views must outlive their use; empty clears.
  void SetContext(std::string_view what, std::string_view name, std::string_view key) {
    context_what_ = what;
    context_name_ = name;
    context_key_ = key;
  }

  // "<origin>: [context: ]byte <N>: <what>" for the byte at text position `at`.
  Status ErrorAt(size_t at, std::string_view what) const;
  // "invalid JSON: expected <what>, found <the next byte>" at the next byte.
  Status Expected(std::string_view what);
  // The text from position `from` to the current one without the whitespace between tokens,
  // cut at 60 characters: how messages quote a value.
  std::string Excerpt(size_t from) const;

 private:
  void SkipSpace();
  std::string Found(size_t at) const;
  Status ReadString(std::string* scratch, std::string_view* out);
  Status SkipValue();
  // Member's and Element's step: `close` ('}' or ']') consumed (*more false), or the ','
  // before any but the first member or element (*more true).
  Status Next(char close, bool* first, bool* more);

  std::string_view text_;
  uint64_t base_;
  std::string origin_;
  std::string end_name_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::string key_scratch_, value_scratch_;
  std::vector<std::string> path_;  // keys and [indices] of the value Skip is inside
  std::string_view context_what_, context_name_, context_key_;
};

// Reads `json` whole with JsonReader and returns the first thing serde_json would refuse, with
// its byte offset (plus `base`) and the key path it sits under; Ok when there is none.
Status DiagnoseJson(std::string_view json, uint64_t base, std::string_view origin);

}  // namespace vramfit::formats

#endif  // VRAMFIT_FORMATS_JSON_READER_H_
