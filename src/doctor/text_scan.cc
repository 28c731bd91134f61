#include "doctor/text_scan.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace vramfit::doctor {

// Lists of literals are written "..."sv: their lengths are known when compiled (a list of
// pointers is measured with strlen on every pass of a loop, on every line of a log).
using std::string_view_literals::operator""sv;

size_t Search(std::string_view s, std::string_view needle, size_t pos) {
  return s.find(needle, pos);
}

namespace {
// ASCII's upper-case letters as lower-case; every other byte as it is (std::tolower, without
// the call and the locale).
char AsciiFold(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c; }
}  // namespace

bool HasNoCase(std::string_view s, std::string_view needle) {
  if (needle.empty()) return true;
  if (needle.size() > s.size()) return false;
  for (size_t i = 0; i + needle.size() <= s.size(); ++i) {
    size_t k = 0;
    while (k < needle.size() && AsciiFold(s[i + k]) == AsciiFold(needle[k])) {
      ++k;
    }
    if (k == needle.size()) return true;
  }
  return false;
}

std::optional<double> NumberAt(std::string_view s, size_t pos, size_t* end) {
  while (pos < s.size() && (s[pos] == ' ' || s[pos] == '=' || s[pos] == ':' || s[pos] == '(' ||
                            s[pos] == '\'' || s[pos] == '"' || s[pos] == '\t')) {
    ++pos;
  }
  bool negative = false;
  if (pos < s.size() && (s[pos] == '-' || s[pos] == '+')) {
    negative = s[pos] == '-';
    ++pos;
  }
  double whole = 0, frac = 0, scale = 1;
  size_t digits = 0;
  size_t i = pos;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c >= '0' && c <= '9') {
      if (digits < 18) whole = whole * 10 + (c - '0');
      else whole *= 10;  // keep the magnitude, not the digits
      ++digits;
    } else if (c == ',' && digits > 0 && i + 3 < s.size() &&
               std::isdigit(static_cast<unsigned char>(s[i + 1])) &&
               std::isdigit(static_cast<unsigned char>(s[i + 2])) &&
               std::isdigit(static_cast<unsigned char>(s[i + 3])) &&
               (i + 4 >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i + 4])))) {
      continue;  // thousands separator: 1,024
    } else {
      break;
    }
  }
  if (digits == 0) return std::nullopt;
  if (i + 1 < s.size() && s[i] == '.' && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
    ++i;
    for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
      scale /= 10;
      frac += (s[i] - '0') * scale;
    }
  }
  if (end) *end = i;
  const double v = whole + frac;
  if (!std::isfinite(v)) return std::nullopt;
  return negative ? -v : v;
}

std::optional<double> NumberAfter(std::string_view s, std::string_view key, size_t from,
                                  size_t* end) {
  const size_t at = s.find(key, from);
  if (at == std::string_view::npos) return std::nullopt;
  return NumberAt(s, at + key.size(), end);
}

namespace {
// The first letters of a unit and nothing after them: a size cut where a terminal wrapped the
// line ("10.29 Gi" + "B already allocated"). Its number is no size in bytes.
bool TruncatedUnit(std::string_view rest) {
  for (std::string_view u : {"Gi"sv, "Mi"sv, "Ki"sv, "Ti"sv, "G"sv, "M"sv, "K"sv, "T"sv, "k"sv}) {
    if (rest.size() >= u.size() && rest.substr(0, u.size()) == u &&
        (rest.size() == u.size() || rest[u.size()] == ' ' || rest[u.size()] == '\r')) {
      return true;
    }
  }
  return false;
}
}  // namespace

std::optional<double> BytesAfter(std::string_view s, std::string_view key, size_t from,
                                 size_t* end) {
  size_t e = 0;
  auto n = NumberAfter(s, key, from, &e);
  if (!n) return std::nullopt;
  while (e < s.size() && s[e] == ' ') ++e;
  double mult = 1;
  auto unit = [&](std::string_view u) {
    if (s.substr(e, u.size()) != u) return false;
    e += u.size();
    return true;
  };
  if (unit("GiB") || unit("GB") || unit("G ")) mult = 1073741824.0;
  else if (unit("MiB") || unit("MB")) mult = 1048576.0;
  else if (unit("KiB") || unit("KB") || unit("kB")) mult = 1024.0;
  else if (unit("TiB") || unit("TB")) mult = 1099511627776.0;
  else if (unit("bytes") || unit("B")) mult = 1;
  else if (TruncatedUnit(s.substr(e))) return std::nullopt;
  if (end) *end = e;
  return *n * mult;
}

std::optional<double> SizeAfter(std::string_view s, std::string_view key, size_t from) {
  size_t end = 0;
  const auto n = NumberAfter(s, key, from, &end);
  if (!n) return std::nullopt;
  size_t unit_end = 0;
  const auto b = BytesAfter(s, key, from, &unit_end);
  size_t e = end;
  while (e < s.size() && s[e] == ' ') ++e;
  if (!b || unit_end == e) return std::nullopt;  // no unit read after the number
  return b;
}

namespace {
// Where the `sep` before `phrase` is; npos when either is missing.
size_t SepBefore(std::string_view s, std::string_view phrase, std::string_view sep) {
  const size_t at = s.find(phrase);
  return at == std::string_view::npos ? at : s.rfind(sep, at);
}
}  // namespace

std::optional<double> SizeBefore(std::string_view s, std::string_view phrase,
                                 std::string_view sep) {
  const size_t start = SepBefore(s, phrase, sep);
  if (start == std::string_view::npos) return std::nullopt;
  return SizeAfter(s, sep, start);
}

std::optional<double> BytesBefore(std::string_view s, std::string_view phrase,
                                  std::string_view sep) {
  const size_t start = SepBefore(s, phrase, sep);
  if (start == std::string_view::npos) return std::nullopt;
  return BytesAfter(s, sep, start);
}

std::string StripAnsi(std::string_view s) {
  // Both kinds of sequence begin with ESC or '^': the bytes before the first of them are copied
  // whole (most lines hold neither).
  const size_t first = std::min(s.find('\x1b'), s.find('^'));
  if (first == std::string_view::npos) return std::string(s);
  std::string out;
  out.reserve(s.size());
  out.append(s.substr(0, first));
  for (size_t i = first; i < s.size();) {
    size_t skip = 0;
    if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[') skip = 2;
    else if (s[i] == '^' && i + 2 < s.size() && s[i + 1] == '[' && s[i + 2] == '[') skip = 3;
    if (skip) {
      size_t j = i + skip;
      while (j < s.size() && j - i < 32 &&
             (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == ';' || s[j] == '?'))
        ++j;
      if (j < s.size() && std::isalpha(static_cast<unsigned char>(s[j]))) {
        i = j + 1;
        continue;
      }
    }
    if (s[i] == '\x1b') {  // a lone ESC
      ++i;
      continue;
    }
    out += s[i++];
  }
  return out;
}

namespace {
// What PlainTypography writes for the three-byte character E2 80 xx (General Punctuation,
// U+2000-U+203F); nullptr keeps it. "\x01" marks the dashes that depend on the next byte.
const char* GeneralPunctuation(unsigned char low) {
  if (low >= 0x80 && low <= 0x8a) return " ";                 // U+2000-200A spaces
  if (low >= 0x8b && low <= 0x8f) return "";                  // zero-width, LRM, RLM
  if (low >= 0x90 && low <= 0x92) return "-";                 // hyphens, figure dash
  if (low == 0x93 || low == 0x94) return "\x01";              // en dash, em dash
  if (low >= 0x98 && low <= 0x9b) return "'";                 // single quotes
  if (low >= 0x9c && low <= 0x9f) return "\"";                // double quotes
  if (low == 0xa6) return "...";                              // ellipsis
  if (low == 0xaf) return " ";                                // narrow no-break space
  if (low == 0xb2) return "'";                                // prime
  if (low == 0xb3) return "\"";                               // double prime
  return nullptr;
}
}  // namespace

void PlainTypography(std::string* s) {
  // Every character it changes starts with one of these lead bytes; most lines are ASCII (a
  // branch-free test the compiler vectorizes) and stop here.
  unsigned char high = 0;
  for (const char ch : *s) high |= static_cast<unsigned char>(ch);
  if (high < 0x80) return;
  size_t i = 0;
  while (i < s->size()) {
    const unsigned char c = static_cast<unsigned char>((*s)[i]);
    if (c == 0xc2 || c == 0xe2 || c == 0xe3 || c == 0xef) break;
    ++i;
  }
  if (i == s->size()) return;
  std::string out;
  out.reserve(s->size());
  out.append(*s, 0, i);
  const auto at = [&](size_t k) {
    return k < s->size() ? static_cast<unsigned char>((*s)[k]) : 0;
  };
  while (i < s->size()) {
    const unsigned char c = at(i);
    const char* put = nullptr;
    size_t len = 0;
    if (c == 0xc2 && at(i + 1) == 0xa0) {
      put = " ";  // no-break space
      len = 2;
    } else if (c == 0xe2 && at(i + 1) == 0x80) {
      put = GeneralPunctuation(at(i + 2));
      len = 3;
    } else if (c == 0xe2 && at(i + 1) == 0x81 && (at(i + 2) == 0x9f || at(i + 2) == 0xa0)) {
      put = at(i + 2) == 0x9f ? " " : "";  // medium space, word joiner
      len = 3;
    } else if (c == 0xe2 && at(i + 1) == 0x88 && at(i + 2) == 0x92) {
      put = "-";  // minus sign
      len = 3;
    } else if (c == 0xe3 && at(i + 1) == 0x80 && at(i + 2) == 0x80) {
      put = " ";  // ideographic space
      len = 3;
    } else if (c == 0xef && at(i + 1) == 0xbb && at(i + 2) == 0xbf) {
      put = "";  // byte-order mark, zero-width no-break space
      len = 3;
    }
    if (put == nullptr) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (put[0] == '\x01') put = std::isalpha(at(i + len)) ? "--" : "-";
    out += put;
    i += len;
  }
  s->swap(out);
}

bool IpythonArrow(std::string_view s, size_t min_dashes) {
  size_t b = 0;
  while (b < s.size() && s[b] == ' ') ++b;
  size_t dashes = b;
  while (dashes < s.size() && s[dashes] == '-') ++dashes;
  return dashes - b >= min_dashes && dashes > b && s.substr(dashes, 2) == "> " &&
         dashes + 2 < s.size() && std::isdigit(static_cast<unsigned char>(s[dashes + 2]));
}

}  // namespace vramfit::doctor
