// Small, allocation-free matchers for log lines: substring search and the numbers that follow
// a key ("took 14.99 GB", "(29000)", "of which 43.75 MiB is free"). No regular expressions:
// lines can be 64 KiB of hostile text, and every matcher here is linear in the line.
#ifndef VRAMFIT_DOCTOR_TEXT_SCAN_H_
#define VRAMFIT_DOCTOR_TEXT_SCAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vramfit::doctor {

inline bool Has(std::string_view s, std::string_view needle) {
  return s.find(needle) != std::string_view::npos;
}

// The byte pairs a line holds, hashed into 4096 bits (built once per line by the scanner): a
// needle with a pair the line lacks is not in it, which most of the ~130 needles the readers ask
// of every line are not. False positives only cost the search.
class Bigrams {
 public:
  void Build(std::string_view s) {
    for (uint64_t& w : bits_) w = 0;
    for (size_t i = 1; i < s.size(); ++i) Set(Hash(s[i - 1], s[i]));
  }
  bool MayHave(std::string_view needle) const {
    for (size_t i = 1; i < needle.size(); ++i) {
      if (!Get(Hash(needle[i - 1], needle[i]))) return false;
    }
    return true;
  }

 private:
  static unsigned Hash(char a, char b) {
    return ((static_cast<unsigned char>(a) * 67u) ^ static_cast<unsigned char>(b)) & 4095u;
  }
  void Set(unsigned h) { bits_[h >> 6] |= uint64_t{1} << (h & 63); }
  bool Get(unsigned h) const { return (bits_[h >> 6] >> (h & 63)) & 1; }
  uint64_t bits_[64] = {};
};

// A line with its byte pairs: Has() on it skips the search for needles it cannot hold.
struct LineView : std::string_view {
  LineView(std::string_view s, const Bigrams* pairs) : std::string_view(s), bigrams(pairs) {}
  const Bigrams* bigrams;
};
inline bool Has(const LineView& s, std::string_view needle) {
  if (s.bigrams && !s.bigrams->MayHave(needle)) return false;
  return s.find(needle) != std::string_view::npos;
}

// Case-insensitive ASCII search.
bool HasNoCase(std::string_view s, std::string_view needle);

// A number at `pos` after optional spaces, '=', ':', '(' and quotes: "-1.05", "1,024", "12.5".
// Sets *end past it.
std::optional<double> NumberAt(std::string_view s, size_t pos, size_t* end = nullptr);

// The number after the first occurrence of `key` (searching from `from`).
std::optional<double> NumberAfter(std::string_view s, std::string_view key, size_t from = 0,
                                  size_t* end = nullptr);

// A size after `key`: a number and a unit (GiB, GB, MiB, MB, KiB, KB, B, bytes; none: bytes).
// GB/MB are read as GiB/MiB: the engines divide by 2^30 / 2^20 and print "GB".
std::optional<double> BytesAfter(std::string_view s, std::string_view key, size_t from = 0,
                                 size_t* end = nullptr);

// The size just before `phrase`, read after the last `sep` that precedes it:
// BytesBefore("..., 1.59 GiB for peak activation", "for peak activation", ", ").
std::optional<double> BytesBefore(std::string_view s, std::string_view phrase,
                                  std::string_view sep);

// Removes ANSI escape sequences (ESC [ ... final byte) and their caret spelling ("^[[0m").
std::string StripAnsi(std::string_view s);

}  // namespace vramfit::doctor

#endif  // VRAMFIT_DOCTOR_TEXT_SCAN_H_
