// GGUF headers (llama.cpp / ggml model files), read exactly and only as far as the header.
//
// The parser takes a prefix of the file's bytes and the file's real size (from the listing,
// never by reading the data) and returns the metadata and the tensor list, or says how many
// bytes of prefix it needs to go on: a caller reads a bounded first chunk and more only when
// asked, so a 200 GB file costs what its header costs. It enforces ggml's reference reader
// (`src/gguf.cpp`, ggml d99724f2, 2026-08): versions 2 and 3 only (version 1 and big-endian
// files refused and named), strings and arrays capped at 2^30, every ggml type known with
// ne[0] a whole number of blocks, at most 4 dimensions, tensor names under 64 bytes, unique
// keys and names, `general.alignment` a power of two, and each tensor's offset exactly the
// aligned running total of the ones before it, inside the file. Every error is a
// Code::kCorrupt Status naming the origin, the byte offset and what was expected.
//
// Tensors come out as TensorInfo (vramfit/formats.h) in file order, their shape outermost
// first (GGUF writes ne[0], the innermost dimension, first: a PyTorch [N, K] weight is
// ne = [K, N] in the file and shape [N, K] here), begin/end relative to the data section.
//
// Example:
//   auto p = vramfit::ParseGgufPrefix(first_mib, file_size, "model.gguf");
//   if (p.ok() && p->need > 0) { /* read p->need bytes and parse again */ }
#ifndef VRAMFIT_GGUF_H_
#define VRAMFIT_GGUF_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vramfit/formats.h"
#include "vramfit/status.h"

namespace vramfit {

// Metadata value types (gguf.h enum gguf_type).
enum class GgufType : uint32_t {
  kU8 = 0, kI8 = 1, kU16 = 2, kI16 = 3, kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7,
  kString = 8, kArray = 9, kU64 = 10, kI64 = 11, kF64 = 12,
};
// "u8", "i32", "string", "array", ...
const char* GgufTypeName(GgufType t);

// One metadata value. Scalars are held whole; arrays keep their element type and count, and
// their elements when they are numbers or bools and at most kGgufKeptArray of them (per-layer
// head counts are; a tokenizer's 150,000 token strings are counted, not kept).
struct GgufValue {
  GgufType type = GgufType::kU8;
  uint64_t offset = 0;      // absolute byte offset of the key's length field
  uint64_t u = 0;           // unsigned integers and bool
  int64_t i = 0;            // signed integers
  double f = 0;             // f32, f64
  std::string str;          // string
  GgufType array_type = GgufType::kU8;  // arrays: the element type
  uint64_t array_count = 0;
  std::vector<int64_t> ints;   // integer and bool elements, when kept
  std::vector<double> floats;  // float elements, when kept
  // Any integer type or bool whose value fits an int64 (readers must accept any integer
  // width for integer keys: writers differ).
  bool AsInt(int64_t* out) const;
  bool IsIntArray() const;  // an array of integers or bools whose elements were kept
};

// ggml tensor types: id, block size and bytes per block (ggml.h enum ggml_type and
// ggml.c type_traits, ggml d99724f2). Removed ids (4, 5, 31-33, 36-38) are not listed.
struct GgmlType {
  uint32_t id;
  Dtype dtype;
  uint32_t block;  // elements per block
  uint32_t bytes;  // bytes per block
};
// The type with that id, or null when the id is unknown or removed.
const GgmlType* FindGgmlType(uint32_t id);
// The ggml type of a Dtype, or null when GGUF has none (U16, the F8 types, ...).
const GgmlType* GgmlTypeOf(Dtype d);
// Bits per weight of a type: bytes x 8 / block (4.5 for Q4_K).
double GgmlBitsPerWeight(const GgmlType& t);

// A parsed GGUF header.
struct GgufFile {
  std::string origin;            // file name as given to the parser
  uint32_t version = 0;
  uint64_t file_size = 0;
  uint64_t alignment = 32;       // general.alignment, 32 when absent
  uint64_t header_bytes = 0;     // end of the tensor infos
  uint64_t data_offset = 0;      // start of the data section: header_bytes aligned up
  uint64_t data_bytes = 0;       // end of the last tensor, relative to data_offset
  std::map<std::string, GgufValue, std::less<>> metadata;
  TensorList tensors;            // file order (= offset order)

  const GgufValue* Find(std::string_view key) const;
  // An integer key of any width; false when absent or not an integer.
  bool Int(std::string_view key, int64_t* out) const;
  // A string key; empty when absent or not a string.
  std::string String(std::string_view key) const;
  std::string Architecture() const { return String("general.architecture"); }
};

// Caps of the reference reader (gguf.cpp GGUF_MAX_STRING_LENGTH / GGUF_MAX_ARRAY_ELEMENTS,
// GGML_MAX_NAME, GGML_MAX_DIMS), and vramfit's own on nesting and on the header's size.
inline constexpr uint64_t kGgufMaxString = uint64_t{1} << 30;
inline constexpr uint64_t kGgufMaxArray = uint64_t{1} << 30;
inline constexpr uint64_t kGgufMaxName = 64;  // a tensor name has fewer bytes than this
inline constexpr uint32_t kGgufMaxDims = 4;
inline constexpr uint32_t kGgufMaxNesting = 8;  // arrays of arrays, this deep at most
inline constexpr uint64_t kGgufKeptArray = 65536;
// The largest header read: real ones are a few MB to ~30 MB (a 256k-token vocabulary with its
// merges); past this the file is refused rather than read into memory.
inline constexpr uint64_t kGgufMaxHeader = uint64_t{512} << 20;
// The first read: a header without a vocabulary whole; one with a 150,000-token vocabulary
// and its merges (~5 MB) takes three more reads, each twice the last.
inline constexpr uint64_t kGgufFirstRead = uint64_t{1} << 20;
inline constexpr uint32_t kGgufMagic = 0x46554747;  // "GGUF" as a little-endian u32

// What ParseGgufPrefix found: the file, or (need > 0) the prefix length it needs to go on.
struct GgufParse {
  std::optional<GgufFile> file;
  uint64_t need = 0;  // bytes of prefix needed (> prefix size, <= file_size)
};

// Parses the header from `prefix`, the first bytes of a file of `file_size` bytes (prefix may
// be the whole file). When the header runs past the prefix, returns need > 0: call again with
// at least that many bytes. A header past kGgufMaxHeader is an error.
Result<GgufParse> ParseGgufPrefix(std::string_view prefix, uint64_t file_size,
                                  std::string_view origin);

class ByteSource;  // vramfit/source.h

// One file's header read from `src` in bounded steps: a first read of kGgufFirstRead bytes,
// more only when the parser asks (never past the header). `bytes_read`, when given, receives
// the bytes read. Nothing past the header is read.
Result<GgufFile> ReadGgufHeader(const ByteSource& src, std::string_view file,
                                uint64_t* bytes_read = nullptr);

// Parses a header that must be whole in `bytes` (the fuzz target's and tests' entry point):
// ParseGgufPrefix with a "needs more" answer turned into an error.
Result<GgufFile> ParseGguf(std::string_view bytes, uint64_t file_size, std::string_view origin);

// A split file's name parts: "Qwen3-8B-Q4_K_M-00001-of-00003.gguf" is prefix
// "Qwen3-8B-Q4_K_M", part 1, count 3 (llama.cpp's llama_split_path pattern
// "%s-%05d-of-%05d.gguf"). False for a name that is not one.
bool ParseGgufSplitName(std::string_view name, std::string* prefix, int* part, int* count);
std::string GgufSplitName(std::string_view prefix, int part, int count);

}  // namespace vramfit

#endif  // VRAMFIT_GGUF_H_
