// How pasted and collected logs wrap the engines' lines (paste.h).
#include "doctor/paste.h"

#include <cstring>
#include <utility>

#include <simdjson.h>

#include "doctor/text_scan.h"

namespace vramfit::doctor {
namespace {

// The keys a collector's JSON record keeps the line under: Docker's json-file driver
// ({"log":"...\n","stream":"stderr","time":"..."}), journald's JSON output ("MESSAGE"), Google
// Cloud Logging ("textPayload"), and the "message" of most others (Loki, Elasticsearch, AWS
// CloudWatch exports).
constexpr std::string_view kJsonKeys[] = {"log", "MESSAGE", "textPayload", "message"};

// A collector's record: the line kept under the first of kJsonKeys the object has (simdjson
// decodes its escapes). False for anything that is not one whole JSON object.
bool JsonRecord(std::string_view line, std::string* out) {
  size_t b = 0;
  while (b < line.size() && (line[b] == ' ' || line[b] == '\t')) ++b;
  if (b >= line.size() || line[b] != '{') return false;
  thread_local simdjson::dom::parser parser;
  simdjson::dom::object record;
  if (parser.parse(line.data() + b, line.size() - b).get(record) != simdjson::SUCCESS) {
    return false;
  }
  for (const std::string_view key : kJsonKeys) {
    std::string_view text;
    if (record[key].get(text) != simdjson::SUCCESS) continue;
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
    *out = std::string(text);
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
