// The pull JSON reader (see json_reader.h): one pass, no document, offsets in every error.
#include "formats/json_reader.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "core/text.h"

namespace vramfit::formats {
namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";
constexpr std::string_view kMaxUint64 = "18446744073709551615";
constexpr std::string_view kMinInt64Magnitude = "9223372036854775808";

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decimal digit strings without leading zeros: is `a` larger than `b`?
bool Larger(std::string_view a, std::string_view b) {
  return a.size() != b.size() ? a.size() > b.size() : a > b;
}

}  // namespace

JsonReader::JsonReader(std::string_view text, uint64_t base, std::string_view origin,
                       std::string_view end_name)
    : text_(text), base_(base), origin_(origin), end_name_(end_name) {}

void JsonReader::SkipSpace() {
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') break;
    ++pos_;
  }
}

JsonReader::Kind JsonReader::Peek() {
  SkipSpace();
  if (pos_ == text_.size()) return Kind::kEnd;
  const char c = text_[pos_];
  switch (c) {
    case '{': return Kind::kObject;
    case '[': return Kind::kArray;
    case '"': return Kind::kString;
    case 't': case 'f': return Kind::kBool;
    case 'n': return Kind::kNull;
    default: return c == '-' || IsDigit(c) ? Kind::kNumber : Kind::kOther;
  }
}

const char* JsonReader::KindName(Kind k) {
  switch (k) {
    case Kind::kObject: return "an object";
    case Kind::kArray: return "an array";
    case Kind::kString: return "a string";
    case Kind::kNumber: return "a number";
    case Kind::kBool: return "a boolean";
    case Kind::kNull: return "null";
    case Kind::kEnd: return "nothing";
    case Kind::kOther: break;
  }
  return "a value";
}

std::string JsonReader::Found(size_t at) const {
  if (at >= text_.size()) return end_name_;
  const auto c = static_cast<unsigned char>(text_[at]);
  if (c > 0x20 && c < 0x7F) return fmt::format("'{}'", static_cast<char>(c));
  return fmt::format("byte 0x{:02x}", c);
}

Status JsonReader::ErrorAt(size_t at, std::string_view what) const {
  std::string where;
  if (!context_name_.empty()) {
    where = fmt::format("{}{}\"{}\"", context_what_, context_what_.empty() ? "" : " ",
                        core::Printable(context_name_));
    if (!context_key_.empty()) where += fmt::format(": \"{}\"", core::Printable(context_key_));
    if (!path_.empty()) where += ": ";
  }
  constexpr size_t kShown = 6;  // a path 128 levels deep is not read by anyone
  for (size_t i = 0; i < path_.size() && i < kShown; ++i) {
    where += (i == 0 || path_[i][0] == '[' ? "" : ".") + path_[i];
  }
  if (path_.size() > kShown) where += "...";
  return Status::Corrupt(fmt::format("{}: {}{}byte {}: {}", origin_, where,
                                     where.empty() ? "" : ": ", base_ + at, what));
}

Status JsonReader::Expected(std::string_view what) {
  return ErrorAt(pos_, fmt::format("invalid JSON: expected {}, found {}", what, Found(pos_)));
}

Status JsonReader::Enter(char open) {
  SkipSpace();
  if (pos_ >= text_.size() || text_[pos_] != open) {
    return Expected(open == '{' ? "'{'" : "'['");
  }
  if (++depth_ > kMaxJsonDepth) {
    return ErrorAt(pos_, fmt::format("JSON nests deeper than {} levels (serde_json's limit)",
                                     kMaxJsonDepth));
  }
  ++pos_;
  return Status::Ok();
}

Status JsonReader::Next(char close, bool* first, bool* more) {
  SkipSpace();
  const bool was_first = *first;
  *first = false;
  if (pos_ < text_.size() && text_[pos_] == close) {
    ++pos_;
    --depth_;
    *more = false;
    return Status::Ok();
  }
  if (!was_first) {
    if (pos_ >= text_.size() || text_[pos_] != ',') {
      return Expected(close == '}' ? "',' or '}'" : "',' or ']'");
    }
    ++pos_;
    SkipSpace();
  }
  *more = true;
  return Status::Ok();
}

Status JsonReader::Member(bool* first, std::string_view* key, bool* more) {
  const bool after_comma = !*first;
  VRAMFIT_RETURN_IF_ERROR(Next('}', first, more));
  if (!*more) return Status::Ok();
  if (pos_ >= text_.size() || text_[pos_] != '"') {
    return Expected(after_comma ? "a key (a string)" : "a key (a string) or '}'");
  }
  VRAMFIT_RETURN_IF_ERROR(ReadString(&key_scratch_, key));
  SkipSpace();
  if (pos_ >= text_.size() || text_[pos_] != ':') return Expected("':' after the key");
  ++pos_;
  return Status::Ok();
}

Status JsonReader::Element(bool* first, bool* more) {
  const bool after_comma = !*first;
  VRAMFIT_RETURN_IF_ERROR(Next(']', first, more));
  if (*more && after_comma && (Peek() == Kind::kEnd || Peek() == Kind::kOther)) {
    return Expected("a value");
  }
  return Status::Ok();
}

Status JsonReader::String(std::string_view* out) {
  if (Peek() != Kind::kString) return Expected("a string");
  return ReadString(&value_scratch_, out);
}

Status JsonReader::ReadString(std::string* scratch, std::string_view* out) {
  const size_t open = pos_++;
  const size_t begin = pos_;
  // Fast path: no escape before the closing quote, the value is a view of the text.
  size_t i = begin;
  for (; i < text_.size(); ++i) {
    const auto c = static_cast<unsigned char>(text_[i]);
    if (c == '"' || c == '\\' || c < 0x20) break;
  }
  if (i < text_.size() && text_[i] == '"') {
    *out = text_.substr(begin, i - begin);
    pos_ = i + 1;
    return Status::Ok();
  }
  scratch->assign(text_.substr(begin, i - begin));
  while (true) {
    if (i >= text_.size()) {
      return ErrorAt(text_.size(), fmt::format("invalid JSON: the string opened at byte {} is "
                                               "not closed before {}", base_ + open, end_name_));
    }
    const auto c = static_cast<unsigned char>(text_[i]);
    if (c == '"') break;
    if (c < 0x20) {
      return ErrorAt(i, fmt::format("invalid JSON: control character 0x{:02x} inside a string "
                                    "(JSON writes it as an escape)", c));
    }
    if (c != '\\') {
      *scratch += static_cast<char>(c);
      ++i;
      continue;
    }
    const size_t esc = i;
    if (i + 1 >= text_.size()) {
      ++i;
      continue;  // reported as the unclosed string above
    }
    const char e = text_[i + 1];
    i += 2;
    switch (e) {
      case '"': *scratch += '"'; continue;
      case '\\': *scratch += '\\'; continue;
      case '/': *scratch += '/'; continue;
      case 'b': *scratch += '\b'; continue;
      case 'f': *scratch += '\f'; continue;
      case 'n': *scratch += '\n'; continue;
      case 'r': *scratch += '\r'; continue;
      case 't': *scratch += '\t'; continue;
      case 'u': break;
      default:
        return ErrorAt(esc, fmt::format("invalid JSON: unknown escape \\{} in a string",
                                        core::Printable(std::string_view(&e, 1))));
    }
    auto hex4 = [&](size_t at, uint32_t* v) {
      if (at + 4 > text_.size()) return false;
      *v = 0;
      for (size_t k = 0; k < 4; ++k) {
        const int h = HexValue(text_[at + k]);
        if (h < 0) return false;
        *v = *v * 16 + static_cast<uint32_t>(h);
      }
      return true;
    };
    uint32_t cp = 0;
    if (!hex4(i, &cp)) {
      return ErrorAt(esc, "invalid JSON: \\u must be followed by four hex digits");
    }
    i += 4;
    if (cp >= 0xDC00 && cp <= 0xDFFF) {
      return ErrorAt(esc, fmt::format("invalid JSON: lone surrogate \\u{:04x} in a string: a "
                                      "low surrogate with no high one before it", cp));
    }
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      uint32_t lo = 0;
      if (i + 1 >= text_.size() || text_[i] != '\\' || text_[i + 1] != 'u' ||
          !hex4(i + 2, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
        return ErrorAt(esc, fmt::format("invalid JSON: lone surrogate \\u{:04x} in a string: a "
                                        "high surrogate must be followed by a low one "
                                        "(\\udc00..\\udfff)", cp));
      }
      i += 6;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    core::AppendUtf8(cp, scratch);
  }
  *out = *scratch;
  pos_ = i + 1;
  return Status::Ok();
}

Status JsonReader::Number(std::string_view* out) {
  SkipSpace();
  const size_t begin = pos_;
  auto digits = [&]() {
    const size_t from = pos_;
    while (pos_ < text_.size() && IsDigit(text_[pos_])) ++pos_;
    return pos_ > from;
  };
  const bool negative = pos_ < text_.size() && text_[pos_] == '-';
  if (negative) ++pos_;
  if (pos_ < text_.size() && text_[pos_] == '0') {
    ++pos_;
    if (pos_ < text_.size() && IsDigit(text_[pos_])) {
      return ErrorAt(pos_ - 1, "invalid JSON: a number must not start with 0 and a digit");
    }
  } else if (!digits()) {
    return Expected("a digit");
  }
  const size_t int_end = pos_;
  bool integer = true;
  if (pos_ < text_.size() && text_[pos_] == '.') {
    ++pos_;
    integer = false;
    if (!digits()) return Expected("a digit after '.'");
  }
  if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
    ++pos_;
    integer = false;
    if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
    if (!digits()) return Expected("a digit in the exponent");
  }
  *out = text_.substr(begin, pos_ - begin);
  const std::string_view shown = core::Utf8Prefix(*out, 40);
  const char* more = shown.size() < out->size() ? "..." : "";
  if (integer) {
    const std::string_view magnitude = text_.substr(begin + negative, int_end - begin - negative);
    if (negative ? Larger(magnitude, kMinInt64Magnitude) : Larger(magnitude, kMaxUint64)) {
      return ErrorAt(begin, fmt::format("integer {}{} does not fit in 64 bits (the {} is {}{})",
                                        shown, more, negative ? "smallest" : "largest",
                                        negative ? "-" : "",
                                        negative ? kMinInt64Magnitude : kMaxUint64));
    }
    return Status::Ok();
  }
  const std::string copy(*out);
  errno = 0;
  const double v = std::strtod(copy.c_str(), nullptr);
  if (errno == ERANGE && std::isinf(v)) {
    return ErrorAt(begin, fmt::format("number {}{} is out of the range of a double", shown, more));
  }
  return Status::Ok();
}

Status JsonReader::Skip() { return SkipValue(); }

Status JsonReader::SkipValue() {
  switch (Peek()) {
    case Kind::kObject: {
      VRAMFIT_RETURN_IF_ERROR(Enter('{'));
      for (bool first = true, more = true;;) {
        std::string_view key;
        VRAMFIT_RETURN_IF_ERROR(Member(&first, &key, &more));
        if (!more) break;
        path_.push_back(fmt::format("\"{}\"", core::Printable(key)));
        VRAMFIT_RETURN_IF_ERROR(SkipValue());
        path_.pop_back();
      }
      return Status::Ok();
    }
    case Kind::kArray: {
      VRAMFIT_RETURN_IF_ERROR(Enter('['));
      size_t index = 0;
      for (bool first = true, more = true;;) {
        VRAMFIT_RETURN_IF_ERROR(Element(&first, &more));
        if (!more) break;
        path_.push_back(fmt::format("[{}]", index++));
        VRAMFIT_RETURN_IF_ERROR(SkipValue());
        path_.pop_back();
      }
      return Status::Ok();
    }
    case Kind::kString: {
      std::string_view s;
      return ReadString(&value_scratch_, &s);
    }
    case Kind::kNumber: {
      std::string_view n;
      return Number(&n);
    }
    case Kind::kBool:
    case Kind::kNull:
      for (std::string_view word : {"true", "false", "null"}) {
        if (text_.substr(pos_, word.size()) == word) {
          pos_ += word.size();
          return Status::Ok();
        }
      }
      return Expected("true, false or null");
    case Kind::kEnd:
    case Kind::kOther:
      break;
  }
  return Expected("a value");
}

Status JsonReader::Finish() {
  SkipSpace();
  if (pos_ != text_.size()) return Expected(fmt::format("{} after the value", end_name_));
  return Status::Ok();
}

std::string JsonReader::Excerpt(size_t from) const {
  std::string out;
  bool in_string = false;
  for (size_t i = from; i < pos_ && i < text_.size() && out.size() <= 60; ++i) {
    const char c = text_[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < pos_) {
        out += text_[++i];
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
      out += c;
      in_string = c == '"';
    }
  }
  if (out.size() > 60) out = std::string(core::Utf8Prefix(out, 57)) + "...";
  return out;
}

Status DiagnoseJson(std::string_view json, uint64_t base, std::string_view origin) {
  JsonReader r(json, base, origin, "the end of the text");
  if (json.substr(0, kBom.size()) == kBom) {
    return r.ErrorAt(0, "a UTF-8 byte-order mark (EF BB BF) opens the text: JSON must not "
                        "start with one (serde_json and Python's json.loads refuse it; save the "
                        "file as UTF-8 without BOM)");
  }
  VRAMFIT_RETURN_IF_ERROR(r.Skip());
  return r.Finish();
}

}  // namespace vramfit::formats
