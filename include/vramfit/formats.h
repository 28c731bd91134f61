// Checkpoint file formats: safetensors headers and the sharded index, read exactly.
//
// These parsers take bytes and return plain structs; they never touch the file system
// (reading files is the job of vramfit/checkpoint.h). They enforce the reference reader's
// rules (huggingface/safetensors `tensor.rs`): the 100,000,000-byte header cap, JSON
// whitespace on both sides, offsets contiguous from 0 with no gap or overlap, byte length =
// elements x dtype bits / 8 with overflow checks, the file length covered exactly,
// `__metadata__` values strings only, and duplicate keys rejected. Every error is a
// Code::kCorrupt Status whose message starts with the origin (usually the file name) and
// names the byte offset or key, what was expected and what was found.
//
// Example:
//   auto file = vramfit::ParseSafetensors(bytes, file_size, "model.safetensors");
//   if (!file.ok()) { std::cerr << file.status().message(); }
#ifndef VRAMFIT_FORMATS_H_
#define VRAMFIT_FORMATS_H_

#include <algorithm>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "vramfit/status.h"

namespace vramfit {

// Element types of safetensors (enum Dtype of the reference reader, 2026-05), then the block
// types of ggml that only GGUF files hold (Q4_K, IQ2_XXS, ...: vramfit/gguf.h has their block
// sizes). GGUF's plain types (F32, F16, BF16, F64, I8-I64) are the safetensors members.
enum class Dtype : uint8_t {
  kBool, kU8, kI8, kF8_E5M2, kF8_E4M3, kF8_E8M0, kF8_E4M3FNUZ, kF8_E5M2FNUZ,
  kI16, kU16, kF16, kBF16, kI32, kU32, kF32, kF64, kI64, kU64, kC64,
  kF4, kF6_E2M3, kF6_E3M2,
  // ggml block types (ggml.h enum ggml_type, ggml d99724f2, 2026-08).
  kQ4_0, kQ4_1, kQ5_0, kQ5_1, kQ8_0, kQ8_1, kQ2_K, kQ3_K, kQ4_K, kQ5_K, kQ6_K, kQ8_K,
  kIQ2_XXS, kIQ2_XS, kIQ3_XXS, kIQ1_S, kIQ4_NL, kIQ3_S, kIQ2_S, kIQ4_XS, kIQ1_M,
  kTQ1_0, kTQ2_0, kMXFP4, kNVFP4, kQ1_0, kQ2_0,
};
// Members of Dtype; the first kSafetensorsDtypeCount are the safetensors ones.
inline constexpr int kDtypeCount = 49;
inline constexpr int kSafetensorsDtypeCount = 22;

// Bits per element (4 for F4, 6 for F6_*). ggml block types have fractional bits (Q4_K: 4.5)
// and give the whole part here; their exact sizes are in vramfit/gguf.h.
int DtypeBits(Dtype d);
// The safetensors spelling: "BF16", "F8_E4M3", ...; ggml's for block types: "Q4_K".
const char* DtypeName(Dtype d);
// Parses a safetensors dtype string; false when unknown (ggml block type names included: a
// safetensors file cannot hold them).
bool ParseDtype(std::string_view s, Dtype* out);
// True for the ggml block types (kQ4_0 and after).
bool IsGgmlBlockType(Dtype d);
// True for floating types of 16 bits or more (F16, BF16, F32, F64): "unquantized" storage.
bool IsWideFloat(Dtype d);

// A tensor's dimensions. Up to three are stored inline (every real LLM tensor but gpt-oss's
// MXFP4 expert blocks and a vision tower's patch embedding has at most three), more on the
// heap; it behaves like a small vector of uint64_t. 32 bytes, so a header of a million
// tensors costs 32 MB of shapes.
class Shape {
 public:
  using value_type = uint64_t;
  using const_iterator = const uint64_t*;
  Shape() = default;
  Shape(std::initializer_list<uint64_t> dims) { for (uint64_t d : dims) push_back(d); }
  explicit Shape(const std::vector<uint64_t>& dims) { for (uint64_t d : dims) push_back(d); }
  Shape(const Shape& o) { Assign(o); }
  Shape(Shape&& o) noexcept { Steal(o); }
  Shape& operator=(const Shape& o) {
    if (this != &o) {
      Release();
      Assign(o);
    }
    return *this;
  }
  Shape& operator=(Shape&& o) noexcept {
    if (this != &o) {
      Release();
      Steal(o);
    }
    return *this;
  }
  ~Shape() { Release(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const uint64_t* data() const { return OnHeap() ? heap_ : inline_; }
  const uint64_t* begin() const { return data(); }
  const uint64_t* end() const { return data() + size_; }
  uint64_t operator[](size_t i) const { return data()[i]; }
  void clear() { size_ = 0; }
  void push_back(uint64_t d) {
    if (size_ == capacity_) Grow();
    (OnHeap() ? heap_ : inline_)[size_++] = d;
  }
  std::vector<uint64_t> ToVector() const { return {begin(), end()}; }
  friend bool operator==(const Shape& a, const Shape& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator<(const Shape& a, const Shape& b) {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  static constexpr uint32_t kInline = 3;
  bool OnHeap() const { return capacity_ > kInline; }
  void Grow() {
    const uint32_t cap = capacity_ * 2;
    uint64_t* dims = new uint64_t[cap];
    std::copy(data(), data() + size_, dims);
    Release();
    heap_ = dims;
    capacity_ = cap;
  }
  void Release() {
    if (OnHeap()) delete[] heap_;
    capacity_ = kInline;
    inline_[0] = 0;  // inline_ is the active member again
  }
  void Assign(const Shape& o) {  // *this is empty and inline
    size_ = 0;
    for (uint64_t d : o) push_back(d);
  }
  void Steal(Shape& o) {  // *this is empty and inline
    size_ = o.size_;
    if (o.OnHeap()) {
      heap_ = o.heap_;
      capacity_ = o.capacity_;
      o.capacity_ = kInline;
      o.inline_[0] = 0;
    } else {
      std::copy(o.inline_, o.inline_ + o.size_, inline_);
    }
    o.size_ = 0;
  }

  uint32_t size_ = 0;
  uint32_t capacity_ = kInline;  // above kInline: the dims are on the heap
  union {
    uint64_t inline_[kInline] = {};
    uint64_t* heap_;
  };
};

// One tensor as the header declares it. Offsets are relative to the data buffer (which
// starts at absolute byte 8 + header_length of the file). 96 bytes plus the name's heap
// bytes when it is longer than the string's inline buffer (15 characters).
struct TensorInfo {
  std::string name;
  Dtype dtype = Dtype::kF32;
  Shape shape;                  // empty = scalar
  uint64_t begin = 0;           // data_offsets[0]
  uint64_t end = 0;             // data_offsets[1]
  uint64_t elements = 0;        // product of shape (1 for a scalar)
  uint64_t bytes() const { return end - begin; }
};

// A file's tensors. A deque, never one block: a list of a million tensors grows without
// copying itself, and whoever consumes it front to back (BuildInventory) frees it as it goes,
// so a list and what is built from it are never both whole in memory.
using TensorList = std::deque<TensorInfo>;

// A parsed safetensors header.
struct SafetensorsFile {
  std::string origin;                           // file name as given to the parser
  uint64_t header_length = 0;                   // N, the JSON byte count
  uint64_t file_size = 0;                       // 8 + N + data bytes
  TensorList tensors;                           // sorted by data offset
  std::map<std::string, std::string> metadata;  // __metadata__
  uint64_t data_bytes() const { return file_size - 8 - header_length; }
};

// Largest header the reference reader accepts (MAX_HEADER_SIZE).
inline constexpr uint64_t kMaxSafetensorsHeader = 100'000'000;
// Size of the little-endian u64 that opens the file.
inline constexpr uint64_t kSafetensorsPrefix = 8;

// Reads the header length N from the first bytes of a file of `file_size` bytes and checks
// that 8 + N fits in the file and under the cap. `prefix` needs at least 8 bytes.
Result<uint64_t> ParseSafetensorsHeaderLength(std::string_view prefix, uint64_t file_size,
                                              std::string_view origin);

// Parses a safetensors file from its first bytes. `bytes` must hold at least the 8-byte
// length and the whole header (it may hold more, or the whole file); `file_size` is the real
// length of the file, used for the coverage check. The data region is never read, and the
// header is read in place: memory is the tensor list, not a document of the header.
Result<SafetensorsFile> ParseSafetensors(std::string_view bytes, uint64_t file_size,
                                         std::string_view origin);

// `model.safetensors.index.json`: which shard holds which tensor.
struct SafetensorsIndex {
  std::string origin;
  bool has_total_size = false;
  uint64_t total_size = 0;                        // metadata.total_size, advisory
  struct Entry {
    std::string_view tensor;  // into `names`
    uint32_t shard = 0;       // index into `shards`
  };
  std::vector<Entry> weight_map;    // in file order; names are unique
  std::vector<std::string> shards;  // distinct shard names, in order of first appearance
  // The tensor names' bytes, one block for all (a vector: its buffer survives moves, so the
  // views stay valid; a copy of the index would not carry them, hence no copies).
  std::vector<char> names;
  SafetensorsIndex() = default;
  SafetensorsIndex(SafetensorsIndex&&) = default;
  SafetensorsIndex& operator=(SafetensorsIndex&&) = default;
  SafetensorsIndex(const SafetensorsIndex&) = delete;
  SafetensorsIndex& operator=(const SafetensorsIndex&) = delete;
};

// Parses an index. Shard names must be plain file names inside the checkpoint directory
// (no '/', no "..", no NUL): an index is hostile input like any other.
Result<SafetensorsIndex> ParseSafetensorsIndex(std::string_view json, std::string_view origin);

}  // namespace vramfit

#endif  // VRAMFIT_FORMATS_H_
