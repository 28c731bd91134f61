// Flat open-addressing sets of names, for duplicate detection over up to millions of names
// without a heap node per entry: StringViewSet holds views (which must outlive it),
// IndexedNames holds 32-bit indices into a container the caller owns (4 bytes a slot).
#ifndef VRAMFIT_CORE_STRING_SET_H_
#define VRAMFIT_CORE_STRING_SET_H_

#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

namespace vramfit::core {

// Unsigned wrap-around is the point of a multiplicative hash: the sanitizer build checks
// unsigned overflow everywhere else (CMakePresets.json, "ubsan"), not in the hashes.
#if defined(__clang__)
#define VRAMFIT_HASH_WRAPS __attribute__((no_sanitize("unsigned-integer-overflow")))
#else
#define VRAMFIT_HASH_WRAPS
#endif

// A fast 64-bit hash of short strings (8 bytes a step, multiply-xorshift mixing). Not
// cryptographic: a hostile header can only make probing slower, never wrong.
VRAMFIT_HASH_WRAPS inline uint64_t HashName(std::string_view s) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ s.size();
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
  }
  uint64_t tail = 0;
  if (i < s.size()) std::memcpy(&tail, s.data() + i, s.size() - i);
  h = (h ^ tail) * 0x94D049BB133111EBull;
  return h ^ (h >> 31);
}

class StringViewSet {
 public:
  // `expected`: how many names will be inserted (the table is sized to stay half empty).
  explicit StringViewSet(size_t expected) {
    size_t cap = 16;
    while (cap < expected * 2) cap <<= 1;
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    keys_.reserve(expected);
  }

  // Inserts `s` with `value`; returns false (and the stored value through `existing`) when
  // it was already present.
  bool Insert(std::string_view s, uint32_t value = 0, uint32_t* existing = nullptr) {
    if ((keys_.size() + 1) * 2 > slots_.size()) Grow();
    const uint64_t h = HashName(s);
    const uint32_t tag = static_cast<uint32_t>(h >> 32) | 1;  // 0 marks an empty slot
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (slot.tag == 0) {
        slot = {tag, static_cast<uint32_t>(keys_.size())};
        keys_.push_back({s, value});
        return true;
      }
      if (slot.tag == tag && keys_[slot.key].first == s) {
        if (existing) *existing = keys_[slot.key].second;
        return false;
      }
    }
  }

  // The value stored with `s`, or false when absent.
  bool Find(std::string_view s, uint32_t* value) const {
    const uint64_t h = HashName(s);
    const uint32_t tag = static_cast<uint32_t>(h >> 32) | 1;
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (slot.tag == 0) return false;
      if (slot.tag == tag && keys_[slot.key].first == s) {
        *value = keys_[slot.key].second;
        return true;
      }
    }
  }

  size_t size() const { return keys_.size(); }

 private:
  // 8 bytes a slot: the table of a 100,000-tensor header stays in cache.
  struct Slot {
    uint32_t tag = 0;
    uint32_t key = 0;  // index into keys_
  };
  void Grow() {
    slots_.assign(slots_.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    for (uint32_t k = 0; k < keys_.size(); ++k) {
      const uint64_t h = HashName(keys_[k].first);
      const uint32_t tag = static_cast<uint32_t>(h >> 32) | 1;
      size_t i = h & mask_;
      while (slots_[i].tag != 0) i = (i + 1) & mask_;
      slots_[i] = {tag, k};
    }
  }
  std::vector<Slot> slots_;
  std::vector<std::pair<std::string_view, uint32_t>> keys_;
  size_t mask_ = 0;
};

// A set of names that live elsewhere, the elements of a caller's container, stored as the
// elements' 32-bit indices beside 32 bits of each name's hash, so that a probe compares a name
// only when the hashes agree: `name_of(i)` gives element i's name and must keep giving it while
// the set is used. Half empty at most, so a million names cost 16 MB of slots.
template <class NameOf>
class IndexedNames {
 public:
  IndexedNames(size_t expected, NameOf name_of) : name_of_(std::move(name_of)) {
    size_t cap = 16;
    while (cap < expected * 2) cap <<= 1;
    slots_.assign(cap, Slot{});
  }

  // Adds element `i`. False when an element of the same name is already present (its index
  // through `existing`); the set is then unchanged.
  bool Insert(uint32_t i, uint32_t* existing = nullptr) {
    if ((size_ + 1) * 2 > slots_.size()) Grow();
    const std::string_view name = name_of_(i);
    const uint64_t h = HashName(name);
    const uint32_t tag = Tag(h);
    for (size_t at = h & (slots_.size() - 1);; at = (at + 1) & (slots_.size() - 1)) {
      Slot& slot = slots_[at];
      if (slot.index == kEmpty) {
        slot = {tag, i};
        ++size_;
        return true;
      }
      if (slot.tag == tag && name_of_(slot.index) == name) {
        if (existing) *existing = slot.index;
        return false;
      }
    }
  }

  // The index of the element named `name`, or false when none is.
  bool Find(std::string_view name, uint32_t* index) const {
    const uint64_t h = HashName(name);
    const uint32_t tag = Tag(h);
    for (size_t at = h & (slots_.size() - 1);; at = (at + 1) & (slots_.size() - 1)) {
      const Slot& slot = slots_[at];
      if (slot.index == kEmpty) return false;
      if (slot.tag == tag && name_of_(slot.index) == name) {
        *index = slot.index;
        return true;
      }
    }
  }

  size_t size() const { return size_; }

 private:
  static constexpr uint32_t kEmpty = 0xFFFFFFFF;
  struct Slot {
    uint32_t tag = 0;
    uint32_t index = kEmpty;
  };
  static uint32_t Tag(uint64_t h) { return static_cast<uint32_t>(h >> 32); }
  void Grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    for (const Slot& s : old) {
      if (s.index == kEmpty) continue;
      size_t at = HashName(name_of_(s.index)) & (slots_.size() - 1);
      while (slots_[at].index != kEmpty) at = (at + 1) & (slots_.size() - 1);
      slots_[at] = s;
    }
  }
  NameOf name_of_;
  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace vramfit::core

#endif  // VRAMFIT_CORE_STRING_SET_H_
