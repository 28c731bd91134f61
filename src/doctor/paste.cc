// How pasted and collected logs wrap the engines' lines (paste.h).
#include "doctor/paste.h"

#include <cstdint>
#include <cstring>
#include <utility>

#include "core/text.h"
#include "doctor/text_scan.h"

namespace vramfit::doctor {
namespace {

// The keys a collector's JSON record keeps the line under: Docker's json-file driver
// ({"log":"...\n","stream":"stderr","time":"..."}), journald's JSON output ("MESSAGE"), Google
// Cloud Logging ("textPayload"), and the "message" of most others (Loki, Elasticsearch, AWS
// CloudWatch exports).
constexpr std::string_view kJsonKeys[] = {"\"log\":", "\"MESSAGE\":", "\"textPayload\":",
                                          "\"message\":"};

// Four hex digits at `s[at]`; -1 when they are not.
int32_t Hex4(std::string_view s, size_t at) {
  if (at + 4 > s.size()) return -1;
  int32_t v = 0;
  for (size_t i = at; i < at + 4; ++i) {
    const char c = s[i];
    const int d = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

// A JSON string's text from just after its opening quote to its closing one (RFC 8259 escapes;
// a lone surrogate is U+FFFD). False when the string does not end on the line.
bool JsonString(std::string_view s, size_t at, std::string* out) {
  std::string text;
  while (at < s.size()) {
    const char c = s[at++];
    if (c == '"') {
      *out = std::move(text);
      return true;
    }
    if (c != '\\') {
      text += c;
      continue;
    }
    if (at >= s.size()) return false;
    const char e = s[at++];
    switch (e) {
      case 'n': text += '\n'; break;
      case 't': text += '\t'; break;
      case 'r': text += '\r'; break;
      case 'b': text += '\b'; break;
      case 'f': text += '\f'; break;
      case 'u': {
        int32_t cp = Hex4(s, at);
        if (cp < 0) return false;
        at += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF && at + 1 < s.size() && s[at] == '\\' &&
            s[at + 1] == 'u') {
          const int32_t low = Hex4(s, at + 2);
          if (low >= 0xDC00 && low <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            at += 6;
          }
        }
        if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;
        core::AppendUtf8(static_cast<uint32_t>(cp), &text);
        break;
      }
      default: text += e;  // \" \\ \/
    }
  }
  return false;
}

bool JsonRecord(std::string_view line, std::string* out) {
  size_t b = 0;
  while (b < line.size() && (line[b] == ' ' || line[b] == '\t')) ++b;
  if (b >= line.size() || line[b] != '{') return false;
  for (const std::string_view key : kJsonKeys) {
    size_t at = line.find(key, b);
    if (at == std::string_view::npos) continue;
    at += key.size();
    while (at < line.size() && line[at] == ' ') ++at;
    if (at >= line.size() || line[at] != '"') continue;
    std::string text;
    if (!JsonString(line, at + 1, &text)) continue;
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    *out = std::move(text);
    return true;
  }
  return false;
}

// A Python traceback printed as a string (its repr, or a JSON error body): line ends written
// as the two characters backslash and n. Undone: \n, \t, \", \' and \\.
bool EscapedTraceback(std::string_view line, std::string* out) {
  if (!Has(line, "\\n")) return false;
  if (!Has(line, "Traceback (most recent call last):\\n") && !Has(line, "\\n  File \"") &&
      !Has(line, "\\n  File \\\"")) {
    return false;
  }
  std::string text;
  text.reserve(line.size());
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '\\' || i + 1 >= line.size()) {
      text += line[i];
      continue;
    }
    const char e = line[++i];
    switch (e) {
      case 'n': text += '\n'; break;
      case 't': text += '\t'; break;
      case '"': case '\'': case '\\': text += e; break;
      default: text += '\\'; text += e;
    }
  }
  *out = std::move(text);
  return true;
}

// HTML's escapes of the characters a log line holds (a log copied from a web page's source or a
// feed): &quot; &#39; &#x27; &apos; &lt; &gt; &amp;.
bool HtmlEscaped(std::string_view line, std::string* out) {
  if (!Has(line, "&quot;") && !Has(line, "&#39;") && !Has(line, "&#x27;") &&
      !Has(line, "&lt;") && !Has(line, "&gt;")) {
    return false;
  }
  constexpr std::pair<std::string_view, char> kEntities[] = {
      {"&quot;", '"'}, {"&#39;", '\''}, {"&#x27;", '\''}, {"&apos;", '\''},
      {"&lt;", '<'},   {"&gt;", '>'},   {"&amp;", '&'}};
  std::string text;
  text.reserve(line.size());
  for (size_t i = 0; i < line.size();) {
    bool done = false;
    if (line[i] == '&') {
      for (const auto& [entity, c] : kEntities) {
        if (line.compare(i, entity.size(), entity) == 0) {
          text += c;
          i += entity.size();
          done = true;
          break;
        }
      }
    }
    if (!done) text += line[i++];
  }
  *out = std::move(text);
  return true;
}

}  // namespace

bool Unwrap(std::string_view line, std::string* out) {
  // Every wrapper holds one of these bytes; most lines hold none and stop here.
  const size_t open = line.find_first_not_of(" \t");
  if ((open == std::string_view::npos || line[open] != '{') &&
      std::memchr(line.data(), '\\', line.size()) == nullptr &&
      std::memchr(line.data(), '&', line.size()) == nullptr) {
    return false;
  }
  std::string text;
  bool unwrapped = JsonRecord(line, &text);
  if (unwrapped) line = text;
  std::string more;
  if (EscapedTraceback(line, &more) || HtmlEscaped(line, &more)) {
    text = std::move(more);
    unwrapped = true;
  }
  if (unwrapped) *out = std::move(text);
  return unwrapped;
}

}  // namespace vramfit::doctor
