// Small, allocation-free matchers for log lines: substring search and the numbers that follow
// a key ("took 14.99 GB", "(29000)", "of which 43.75 MiB is free"). No regular expressions:
// lines can be 64 KiB of hostile text, and every matcher here is linear in the line.
#ifndef VRAMFIT_DOCTOR_TEXT_SCAN_H_
#define VRAMFIT_DOCTOR_TEXT_SCAN_H_

#include <concepts>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

namespace vramfit::doctor {

inline bool Has(std::string_view s, std::string_view needle) {
  return s.find(needle) != std::string_view::npos;
}
// A literal needle's length from its type. In a function of a hundred needles the compiler stops
// inlining string_view's constructor from a pointer, and each call would count the literal's
// bytes again (strlen was 4% of the doctor's time).
template <class S, size_t N>
  requires std::same_as<S, std::string_view>
inline bool Has(const S& s, const char (&needle)[N]) {
  return s.find(std::string_view(needle, N - 1)) != std::string_view::npos;
}

// The byte pairs and the 4-byte runs a line holds, each hashed into a set of bits (built once
// per line by the scanner): a needle with a pair or a run the line lacks is not in it, which most
// of the ~130 needles the readers ask of every line are not. A needle of 4 bytes or more is
// checked by its runs (which rule out more needles than pairs, and sooner), a shorter one by its
// pairs. False positives only cost the search.
class Bigrams {
 public:
  void Build(std::string_view s) {
    for (uint64_t& w : pairs_) w = 0;
    for (uint64_t& w : runs_) w = 0;
    for (size_t i = 1; i < s.size(); ++i) Set(pairs_, PairHash(s[i - 1], s[i]));
    for (size_t i = 3; i < s.size(); ++i) Set(runs_, RunHash(s.data() + i - 3));
  }
  // The pairs and runs of a text joined from parts: those of `a` and `b` (built on texts that
  // hold the parts) and those of each seam in `seams` (the bytes around a joint, 3 either side).
  void Join(const Bigrams& a, const Bigrams& b, std::initializer_list<std::string_view> seams) {
    for (size_t i = 0; i < std::size(pairs_); ++i) pairs_[i] = a.pairs_[i] | b.pairs_[i];
    for (size_t i = 0; i < std::size(runs_); ++i) runs_[i] = a.runs_[i] | b.runs_[i];
    for (std::string_view s : seams) {
      for (size_t i = 1; i < s.size(); ++i) Set(pairs_, PairHash(s[i - 1], s[i]));
      for (size_t i = 3; i < s.size(); ++i) Set(runs_, RunHash(s.data() + i - 3));
    }
  }
  // Inlined at each call (GCC, Clang): a literal needle's hashes become constants.
  [[gnu::always_inline]] bool MayHave(std::string_view needle) const {
    if (needle.size() >= 4) {
      for (size_t i = 3; i < needle.size(); ++i) {
        if (!Get(runs_, RunHash(needle.data() + i - 3))) return false;
      }
      return true;
    }
    for (size_t i = 1; i < needle.size(); ++i) {
      if (!Get(pairs_, PairHash(needle[i - 1], needle[i]))) return false;
    }
    return true;
  }

 private:
  static constexpr unsigned kPairBits = 4096, kRunBits = 8192;
  static unsigned PairHash(char a, char b) {
    return ((static_cast<unsigned char>(a) * 67u) ^ static_cast<unsigned char>(b)) &
           (kPairBits - 1);
  }
  // The 4 bytes at `p` as one number, mixed (Fibonacci hashing) into the run set's bit range.
  static unsigned RunHash(const char* p) {
    uint32_t v;
    std::memcpy(&v, p, sizeof v);
    return (v * 2654435769u) >> (32 - 13);
  }
  static_assert(kRunBits == 1u << 13);
  template <size_t N>
  static void Set(uint64_t (&bits)[N], unsigned h) {
    bits[h >> 6] |= uint64_t{1} << (h & 63);
  }
  template <size_t N>
  static bool Get(const uint64_t (&bits)[N], unsigned h) {
    return (bits[h >> 6] >> (h & 63)) & 1;
  }
  uint64_t pairs_[kPairBits / 64] = {};
  uint64_t runs_[kRunBits / 64] = {};
};

// std::string_view::find, out of line (LineView::find's search).
size_t Search(std::string_view s, std::string_view needle, size_t pos);

// A line with its byte pairs and runs: Has() and find() on it skip the search for needles it
// cannot hold.
struct LineView : std::string_view {
  LineView(std::string_view s = {}, const Bigrams* pairs = nullptr)
      : std::string_view(s), bigrams(pairs) {}
  using std::string_view::find;  // a character, a pointer and a length
  // Inlined, as MayHave: the search itself is out of line.
  [[gnu::always_inline]] size_t find(std::string_view needle, size_t pos = 0) const {
    if (bigrams && !bigrams->MayHave(needle)) return npos;
    return Search(*this, needle, pos);
  }
  [[gnu::always_inline]] size_t find(const char* needle, size_t pos = 0) const {
    return find(std::string_view(needle), pos);
  }
  template <size_t N>
  [[gnu::always_inline]] size_t find(const char (&needle)[N], size_t pos = 0) const {
    return find(std::string_view(needle, N - 1), pos);
  }
  const Bigrams* bigrams;
};
[[gnu::always_inline]] inline bool Has(const LineView& s, std::string_view needle) {
  return s.find(needle) != std::string_view::npos;
}
template <size_t N>
[[gnu::always_inline]] inline bool Has(const LineView& s, const char (&needle)[N]) {
  return s.find(std::string_view(needle, N - 1)) != std::string_view::npos;
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

// BytesAfter with the unit required: nullopt for a bare number (a size a terminal's wrap cut from
// its unit, "memory 1" + "36.20 GiB"), for messages that always print one (PyTorch's allocator).
std::optional<double> SizeAfter(std::string_view s, std::string_view key, size_t from = 0);

// The size just before `phrase`, read after the last `sep` that precedes it:
// BytesBefore("..., 1.59 GiB for peak activation", "for peak activation", ", ").
std::optional<double> BytesBefore(std::string_view s, std::string_view phrase,
                                  std::string_view sep);

// BytesBefore with the unit required (see SizeAfter).
std::optional<double> SizeBefore(std::string_view s, std::string_view phrase, std::string_view sep);

// Removes ANSI escape sequences (ESC [ ... final byte) and their caret spelling ("^[[0m").
std::string StripAnsi(std::string_view s);

// Turns the typography a web page, a blog's editor or a chat client puts into a pasted log back
// into the ASCII the engines print: no-break, thin and ideographic spaces become spaces; curly
// quotes and primes straight quotes; hyphens, figure dashes and the minus sign '-'; an en or em
// dash before a letter "--" (an editor's "--max-model-len"), elsewhere '-'; the ellipsis "...";
// zero-width characters, direction marks and a byte-order mark are dropped. Other UTF-8 is kept.
void PlainTypography(std::string* s);

// IPython's arrow at a frame's failing source line ("---> 3 out = model.generate(...)", "-> 2455
// outputs = ...": as many dashes as the frame's line numbers are wide), after any spaces, with
// at least `min_dashes` dashes.
bool IpythonArrow(std::string_view s, size_t min_dashes = 1);

}  // namespace vramfit::doctor

#endif  // VRAMFIT_DOCTOR_TEXT_SCAN_H_
