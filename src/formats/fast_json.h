// The scanning steps of the fast readers (the safetensors header's and the index's): JSON
// whitespace, one expected byte, a string without escapes or control characters (8 bytes a
// step), a plain non-negative integer. Each step says false at the first byte outside that
// narrow shape, valid JSON or not; the reader then gives up and the full reader explains.
// UTF-8 is not checked here: callers validate the whole text first.
#ifndef VRAMFIT_FORMATS_FAST_JSON_H_
#define VRAMFIT_FORMATS_FAST_JSON_H_

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/checked.h"
#include "core/string_set.h"

namespace vramfit::formats {

class FastJson {
 public:
  explicit FastJson(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  void SkipSpace() {
    while (p_ < end_ && IsSpace(*p_)) ++p_;
  }
  bool Eat(char c) {
    SkipSpace();
    if (p_ == end_ || *p_ != c) return false;
    ++p_;
    return true;
  }
  // The next byte after whitespace, or NUL at the end.
  char Peek() {
    SkipSpace();
    return p_ < end_ ? *p_ : '\0';
  }
  // Only whitespace is left.
  bool AtEnd() {
    SkipSpace();
    return p_ == end_;
  }
  // A string without escapes or control characters, as a view of the text.
  bool String(std::string_view* out) {
    SkipSpace();
    if (p_ == end_ || *p_ != '"') return false;
    const char* const begin = ++p_;
    const char* q = begin;
    if constexpr (std::endian::native == std::endian::little) {
      for (; end_ - q >= 8; q += 8) {
        uint64_t w;
        std::memcpy(&w, q, 8);
        if (const uint64_t stops = StringStops(w); stops != 0) {
          q += std::countr_zero(stops) / 8;
          break;
        }
      }
    }
    while (q < end_ && !IsStringStop(*q)) ++q;
    if (q == end_ || *q != '"') return false;
    *out = std::string_view(begin, static_cast<size_t>(q - begin));
    p_ = q + 1;
    return true;
  }
  bool Key(std::string_view* out) { return String(out) && Eat(':'); }
  // A non-negative integer within 64 bits, without fraction, exponent or leading zero.
  bool U64(uint64_t* out) {
    SkipSpace();
    if (p_ == end_ || !IsDigit(*p_)) return false;
    uint64_t v = 0;
    if (*p_ == '0') {
      ++p_;
    } else {
      // 19 digits never overflow; a 20th is checked.
      for (const char* const first = p_; p_ < end_ && IsDigit(*p_) && p_ - first < 19; ++p_) {
        v = v * 10 + static_cast<uint64_t>(*p_ - '0');
      }
      for (; p_ < end_ && IsDigit(*p_); ++p_) {
        if (!core::CheckedMul(v, 10, &v) || !core::CheckedAdd(v, *p_ - '0', &v)) return false;
      }
    }
    if (p_ < end_ && (IsDigit(*p_) || *p_ == '.' || *p_ == 'e' || *p_ == 'E')) return false;
    *out = v;
    return true;
  }

 private:
  static bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
  static bool IsDigit(char c) { return c >= '0' && c <= '9'; }
  // A byte that ends the fast scan of a string: '"', '\\' or a control character.
  static bool IsStringStop(char c) {
    return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20;
  }
  // The bytes of `w` that are '"', '\\' or below 0x20, as their high bits. Exact for the lowest
  // such byte (the borrows of the subtractions only mark bytes above a real one), which is all
  // the caller uses.
  VRAMFIT_HASH_WRAPS static uint64_t StringStops(uint64_t w) {
    constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
    const uint64_t quote = w ^ (kOnes * '"'), slash = w ^ (kOnes * '\\');
    return (((quote - kOnes) & ~quote) | ((slash - kOnes) & ~slash) | ((w - kOnes * 0x20) & ~w)) &
           kHigh;
  }

  const char* p_;
  const char* const end_;
};

}  // namespace vramfit::formats

#endif  // VRAMFIT_FORMATS_FAST_JSON_H_
