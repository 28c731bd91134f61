// GGUF header reader (vramfit/gguf.h). Follows ggml's reference reader, `src/gguf.cpp` and
// `docs/gguf.md` at ggml d99724f2 (2026-08-21); every count and length is checked against the
// bytes that exist before it is used, and nothing past the tensor infos is read.
//
//   byte 0      4          8               16              24
//   +-----------+----------+---------------+---------------+----------------------------+
//   | "GGUF"    | version  | tensor_count  | kv_count      | kv[kv_count]               |
//   | 47 47 55 46| u32: 2, 3| u64           | u64           |                            |
//   +-----------+----------+---------------+---------------+----------------------------+
//   kv          = string key, u32 value_type, value
//   string      = u64 byte length, bytes (UTF-8, no NUL)
//   value       = u8 i8 u16 i16 u32 i32 f32 bool(1 byte, 0 or 1) string u64 i64 f64
//                 (types 0-12), or array = u32 element type, u64 count, elements
//   +----------------------------+---------+--------------------------------------------+
//   | tensor_info[tensor_count]  | padding | data section (tensor bytes)                |
//   +----------------------------+---------+--------------------------------------------+
//   tensor_info = string name (< 64 bytes), u32 n_dims (<= 4), u64 ne[n_dims] (ne[0]
//                 innermost), u32 ggml_type, u64 offset (relative to the data section)
//   padding     = zeros up to a multiple of general.alignment (u32 power of two; default 32)
//   each tensor = ne[0]/block x bytes_per_block x ne[1] x ne[2] x ne[3] bytes at its offset;
//                 offset = the running total of the earlier tensors' sizes, each aligned up
//
// A big-endian file (s390x builds) has its version byte-swapped: (version & 0xFFFF) == 0.
#include "formats/gguf.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <unordered_set>

#include "core/checked.h"
#include "core/text.h"
#include "core/units.h"

namespace vramfit {
namespace {

// ggml.h enum ggml_type and ggml.c type_traits (blck_size, type_size), ggml d99724f2.
constexpr std::array<GgmlType, 35> kGgmlTypes = {{
    {0, Dtype::kF32, 1, 4},        {1, Dtype::kF16, 1, 2},        {2, Dtype::kQ4_0, 32, 18},
    {3, Dtype::kQ4_1, 32, 20},     {6, Dtype::kQ5_0, 32, 22},     {7, Dtype::kQ5_1, 32, 24},
    {8, Dtype::kQ8_0, 32, 34},     {9, Dtype::kQ8_1, 32, 36},     {10, Dtype::kQ2_K, 256, 84},
    {11, Dtype::kQ3_K, 256, 110},  {12, Dtype::kQ4_K, 256, 144},  {13, Dtype::kQ5_K, 256, 176},
    {14, Dtype::kQ6_K, 256, 210},  {15, Dtype::kQ8_K, 256, 292},  {16, Dtype::kIQ2_XXS, 256, 66},
    {17, Dtype::kIQ2_XS, 256, 74}, {18, Dtype::kIQ3_XXS, 256, 98}, {19, Dtype::kIQ1_S, 256, 50},
    {20, Dtype::kIQ4_NL, 32, 18},  {21, Dtype::kIQ3_S, 256, 110}, {22, Dtype::kIQ2_S, 256, 82},
    {23, Dtype::kIQ4_XS, 256, 136}, {24, Dtype::kI8, 1, 1},       {25, Dtype::kI16, 1, 2},
    {26, Dtype::kI32, 1, 4},       {27, Dtype::kI64, 1, 8},       {28, Dtype::kF64, 1, 8},
    {29, Dtype::kIQ1_M, 256, 56},  {30, Dtype::kBF16, 1, 2},      {34, Dtype::kTQ1_0, 256, 54},
    {35, Dtype::kTQ2_0, 256, 66},  {39, Dtype::kMXFP4, 32, 17},   {40, Dtype::kNVFP4, 64, 36},
    {41, Dtype::kQ1_0, 128, 18},   {42, Dtype::kQ2_0, 64, 18},
}};
constexpr uint32_t kGgmlTypeCount = 43;  // GGML_TYPE_COUNT at d99724f2
static_assert(kGgmlTypes.back().id == kGgmlTypeCount - 1);

constexpr std::array<uint32_t, 8> kRemovedTypes = {4, 5, 31, 32, 33, 36, 37, 38};

// Fixed sizes of the scalar value types (string and array: 0).
constexpr std::array<uint8_t, 13> kValueSize = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

// Smallest encodings, for counts checked against the bytes left: a kv is an empty key (8), a
// type (4) and a one-byte value; a tensor info an empty name (8), n_dims (4), a type (4) and
// an offset (8).
constexpr uint64_t kMinKv = 13;
constexpr uint64_t kMinTensorInfo = 24;
constexpr uint64_t kFixedHeader = 24;

uint64_t Le(const char* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

bool IsPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// A read position over the prefix. A read that runs past the prefix (but not past the file
// or the header cap) sets `need` and fails with a placeholder status the caller never shows.
class Cursor {
 public:
  Cursor(std::string_view prefix, uint64_t file_size, std::string_view origin)
      : p_(prefix), size_(file_size), origin_(origin) {}

  uint64_t pos = 0;
  uint64_t need = 0;

  const std::string& origin() const { return origin_; }
  uint64_t file_size() const { return size_; }

  Status Error(uint64_t at, std::string_view what) const {
    return Status::Corrupt(fmt::format("{}: byte {}: {}", origin_, at, what));
  }

  // n bytes at pos exist in the prefix. `what` (a callable returning the words that name the
  // bytes) is called only for a message, so the common path formats nothing.
  template <class W>
  Status Have(uint64_t n, const W& what) {
    uint64_t end = 0;
    if (!core::CheckedAdd(pos, n, &end) || end > size_) {
      return Error(pos, fmt::format("{} needs {} bytes, but the file ends at byte {}: the "
                                    "file is truncated or the count is wrong",
                                    what(), n, size_));
    }
    if (end > kGgufMaxHeader) {
      return Error(pos, fmt::format("{} ({} bytes) takes the header past {}, more than any "
                                    "real GGUF header; the file is refused",
                                    what(), n, core::FormatBytes(kGgufMaxHeader)));
    }
    if (end > p_.size()) {
      need = end;
      return Status::Corrupt("needs more bytes");
    }
    return Status::Ok();
  }

  template <class W>
  Status U32(const W& what, uint32_t* out) {
    VRAMFIT_RETURN_IF_ERROR(Have(4, what));
    *out = static_cast<uint32_t>(Le(p_.data() + pos, 4));
    pos += 4;
    return Status::Ok();
  }
  template <class W>
  Status U64(const W& what, uint64_t* out) {
    VRAMFIT_RETURN_IF_ERROR(Have(8, what));
    *out = Le(p_.data() + pos, 8);
    pos += 8;
    return Status::Ok();
  }
  // A gguf string: u64 length (capped), then the bytes.
  template <class W>
  Status String(const W& what, std::string* out) {
    const uint64_t at = pos;
    uint64_t n = 0;
    VRAMFIT_RETURN_IF_ERROR(U64(what, &n));
    if (n > kGgufMaxString) {
      return Error(at, fmt::format("{}: string length {} exceeds the {}-byte cap of the "
                                   "reference reader", what(), n,
                                   core::GroupDigits(kGgufMaxString)));
    }
    VRAMFIT_RETURN_IF_ERROR(Have(n, what));
    if (out) out->assign(p_.data() + pos, n);
    pos += n;
    return Status::Ok();
  }
  // Fixed-size scalar of value type t at pos into v (numbers only; bool checked).
  template <class W>
  Status Scalar(GgufType t, const W& what, GgufValue* v) {
    const uint64_t n = kValueSize[static_cast<uint32_t>(t)];
    VRAMFIT_RETURN_IF_ERROR(Have(n, what));
    const uint64_t raw = Le(p_.data() + pos, static_cast<int>(n));
    switch (t) {
      case GgufType::kU8: case GgufType::kU16: case GgufType::kU32: case GgufType::kU64:
        v->u = raw;
        break;
      case GgufType::kI8: v->i = static_cast<int8_t>(raw); break;
      case GgufType::kI16: v->i = static_cast<int16_t>(raw); break;
      case GgufType::kI32: v->i = static_cast<int32_t>(raw); break;
      case GgufType::kI64: v->i = static_cast<int64_t>(raw); break;
      case GgufType::kBool:
        if (raw > 1) {
          return Error(pos, fmt::format("{}: a bool must be 0 or 1, found {}", what(), raw));
        }
        v->u = raw;
        break;
      case GgufType::kF32: {
        float f;
        const uint32_t r32 = static_cast<uint32_t>(raw);
        std::memcpy(&f, &r32, 4);
        v->f = f;
        break;
      }
      case GgufType::kF64: {
        double d;
        std::memcpy(&d, &raw, 8);
        v->f = d;
        break;
      }
      default: break;
    }
    pos += n;
    return Status::Ok();
  }

 private:
  std::string_view p_;
  uint64_t size_;
  std::string origin_;
};

template <class W>
Status ValueType(Cursor& c, const W& what, GgufType* out) {
  const uint64_t at = c.pos;
  uint32_t t = 0;
  VRAMFIT_RETURN_IF_ERROR(c.U32(what, &t));
  if (t > static_cast<uint32_t>(GgufType::kF64)) {
    return c.Error(at, fmt::format("{}: unknown value type {} (expected 0-12: u8, i8, u16, i16, "
                                   "u32, i32, f32, bool, string, array, u64, i64, f64)",
                                   what(), t));
  }
  *out = static_cast<GgufType>(t);
  return Status::Ok();
}

bool IsIntType(GgufType t) {
  switch (t) {
    case GgufType::kU8: case GgufType::kI8: case GgufType::kU16: case GgufType::kI16:
    case GgufType::kU32: case GgufType::kI32: case GgufType::kU64: case GgufType::kI64:
    case GgufType::kBool:
      return true;
    default:
      return false;
  }
}
bool IsSigned(GgufType t) {
  return t == GgufType::kI8 || t == GgufType::kI16 || t == GgufType::kI32 ||
         t == GgufType::kI64;
}

// One value of type t at the cursor; arrays recurse to `depth` levels.
Status ReadValue(Cursor& c, GgufType t, const std::string& key, uint32_t depth, GgufValue* v) {
  const auto value = [&key] { return fmt::format("key \"{}\": value", key); };
  if (t == GgufType::kString) return c.String(value, &v->str);
  if (t != GgufType::kArray) return c.Scalar(t, value, v);
  const uint64_t at = c.pos;
  if (depth >= kGgufMaxNesting) {
    return c.Error(at, fmt::format("key \"{}\": arrays nested more than {} deep (an array "
                                   "nesting bomb?)", key, kGgufMaxNesting));
  }
  const auto what = [&key] { return fmt::format("key \"{}\": array", key); };
  VRAMFIT_RETURN_IF_ERROR(ValueType(c, what, &v->array_type));
  const uint64_t count_at = c.pos;
  VRAMFIT_RETURN_IF_ERROR(c.U64(what, &v->array_count));
  const uint64_t n = v->array_count;
  if (n > kGgufMaxArray) {
    return c.Error(count_at, fmt::format("{}: {} elements exceed the {}-element cap of the "
                                         "reference reader", what(), n,
                                         core::GroupDigits(kGgufMaxArray)));
  }
  const GgufType et = v->array_type;
  const uint64_t size = kValueSize[static_cast<uint32_t>(et)];
  if (size > 0) {
    // Fixed-size elements: all of them exist before any is read.
    VRAMFIT_RETURN_IF_ERROR(c.Have(
        n * size, [&] { return fmt::format("{} of {} {}", what(), n, GgufTypeName(et)); }));
    const bool keep = n <= kGgufKeptArray;
    if (!keep && et != GgufType::kBool) {  // not kept, nothing to check: passed over whole
      c.pos += n * size;
      return Status::Ok();
    }
    if (keep && (IsIntType(et) || et == GgufType::kF32 || et == GgufType::kF64)) {
      if (IsIntType(et)) {
        v->ints.reserve(n);
      } else {
        v->floats.reserve(n);
      }
    }
    for (uint64_t i = 0; i < n; ++i) {
      GgufValue e;
      VRAMFIT_RETURN_IF_ERROR(c.Scalar(et, what, &e));
      if (!keep) continue;
      if (IsIntType(et)) {
        v->ints.push_back(IsSigned(et) ? e.i : static_cast<int64_t>(e.u));
      } else {
        v->floats.push_back(e.f);
      }
    }
    return Status::Ok();
  }
  for (uint64_t i = 0; i < n; ++i) {
    if (et == GgufType::kString) {
      VRAMFIT_RETURN_IF_ERROR(
          c.String([&] { return fmt::format("{} element {}", what(), i); }, nullptr));
    } else {
      GgufValue inner;
      VRAMFIT_RETURN_IF_ERROR(ReadValue(c, GgufType::kArray, key, depth + 1, &inner));
    }
  }
  return Status::Ok();
}

// The header's fixed part: magic, version, counts.
Status ReadFixed(Cursor& c, GgufFile* f, uint64_t* n_tensors, uint64_t* n_kv) {
  if (c.file_size() < kFixedHeader) {
    return Status::Corrupt(fmt::format(
        "{}: file is {} bytes, expected at least {} (magic, version and the two counts)",
        c.origin(), c.file_size(), kFixedHeader));
  }
  uint32_t magic = 0;
  VRAMFIT_RETURN_IF_ERROR(c.U32([] { return std::string("magic"); }, &magic));
  if (magic != kGgufMagic) {
    return c.Error(0, fmt::format("expected the magic \"GGUF\" (47 47 55 46), found {:02x} {:02x} "
                                  "{:02x} {:02x}: not a GGUF file",
                                  magic & 0xff, (magic >> 8) & 0xff, (magic >> 16) & 0xff,
                                  magic >> 24));
  }
  VRAMFIT_RETURN_IF_ERROR(c.U32([] { return std::string("version"); }, &f->version));
  const uint32_t v = f->version;
  if (v != 0 && (v & 0xFFFF) == 0) {
    return c.Error(4, fmt::format("version reads 0x{:08x}, version {} byte-swapped: this is a "
                                  "big-endian GGUF file; only little-endian files are read",
                                  v, v >> 24));
  }
  if (v == 1) {
    return c.Error(4, "GGUF version 1 (2023, 32-bit counts) is not read; expected version 2 or "
                      "3: convert the model again with a current llama.cpp");
  }
  if (v != 2 && v != 3) return c.Error(4, fmt::format("expected version 2 or 3, found {}", v));
  VRAMFIT_RETURN_IF_ERROR(c.U64([] { return std::string("tensor count"); }, n_tensors));
  VRAMFIT_RETURN_IF_ERROR(c.U64([] { return std::string("metadata count"); }, n_kv));
  const uint64_t left = c.file_size() - kFixedHeader;
  if (*n_kv > left / kMinKv) {
    return c.Error(16, fmt::format("metadata count {} needs at least {} bytes a pair, but the "
                                   "file holds {} bytes after byte {}",
                                   *n_kv, kMinKv, left, kFixedHeader));
  }
  if (*n_tensors > left / kMinTensorInfo ||
      *n_kv * kMinKv + *n_tensors * kMinTensorInfo > left) {
    return c.Error(8, fmt::format("tensor count {} needs at least {} bytes a tensor, but the "
                                  "file holds {} bytes after byte {}",
                                  *n_tensors, kMinTensorInfo, left, kFixedHeader));
  }
  if (*n_tensors > formats::kGgufMaxTensors) {
    return c.Error(8, fmt::format("tensor count {} is more than the {} a file may hold",
                                  *n_tensors, core::GroupDigits(formats::kGgufMaxTensors)));
  }
  return Status::Ok();
}

Status ReadMetadata(Cursor& c, uint64_t n_kv, GgufFile* f) {
  for (uint64_t k = 0; k < n_kv; ++k) {
    const uint64_t at = c.pos;
    std::string key;
    VRAMFIT_RETURN_IF_ERROR(
        c.String([k] { return fmt::format("metadata key {}", k); }, &key));
    GgufValue v;
    v.offset = at;
    const std::string shown = core::Printable(key);
    VRAMFIT_RETURN_IF_ERROR(
        ValueType(c, [&] { return fmt::format("key \"{}\": value type", shown); }, &v.type));
    VRAMFIT_RETURN_IF_ERROR(ReadValue(c, v.type, shown, 0, &v));
    if (f->metadata.count(key) > 0) {
      return c.Error(at, fmt::format("duplicate key \"{}\"", core::Printable(key)));
    }
    f->metadata.emplace(std::move(key), std::move(v));
  }
  if (const GgufValue* a = f->Find("general.alignment")) {
    if (a->type != GgufType::kU32 || !IsPowerOfTwo(a->u)) {
      return c.Error(a->offset, fmt::format(
          "general.alignment must be a u32 power of two, found {} {}", GgufTypeName(a->type),
          a->type == GgufType::kU32 ? std::to_string(a->u) : "(wrong type)"));
    }
    f->alignment = a->u;
  }
  return Status::Ok();
}

constexpr std::array<std::string_view, kGgufMaxDims> kNe = {"ne[0]", "ne[1]", "ne[2]", "ne[3]"};

struct InfoAt {
  uint64_t offset_at = 0;  // absolute byte of the tensor info's offset field
};

Status ReadTensorInfos(Cursor& c, uint64_t n, GgufFile* f, std::vector<InfoAt>* where) {
  std::unordered_set<std::string_view> names;
  names.reserve(n);
  for (uint64_t ti = 0; ti < n; ++ti) {
    const uint64_t at = c.pos;
    TensorInfo t;
    VRAMFIT_RETURN_IF_ERROR(
        c.String([ti] { return fmt::format("tensor info {}: name", ti); }, &t.name));
    const auto name = [&t] { return core::Printable(t.name); };  // for messages only
    const auto field = [&](std::string_view f) {
      return [&name, f] { return fmt::format("tensor \"{}\": {}", name(), f); };
    };
    if (t.name.size() >= kGgufMaxName) {
      return c.Error(at, fmt::format("tensor \"{}\": name of {} bytes, expected fewer than {}",
                                     name(), t.name.size(), kGgufMaxName));
    }
    const uint64_t dims_at = c.pos;
    uint32_t n_dims = 0;
    VRAMFIT_RETURN_IF_ERROR(c.U32(field("n_dims"), &n_dims));
    if (n_dims > kGgufMaxDims) {
      return c.Error(dims_at, fmt::format("tensor \"{}\": {} dimensions, expected at most {}",
                                          name(), n_dims, kGgufMaxDims));
    }
    std::array<uint64_t, kGgufMaxDims> ne = {1, 1, 1, 1};
    for (uint32_t d = 0; d < n_dims; ++d) {
      const uint64_t ne_at = c.pos;
      VRAMFIT_RETURN_IF_ERROR(c.U64(field(kNe[d]), &ne[d]));
      if (ne[d] > static_cast<uint64_t>(INT64_MAX)) {
        return c.Error(ne_at, fmt::format("tensor \"{}\": ne[{}] = {} is negative as the "
                                          "int64 ggml reads it", name(), d, ne[d]));
      }
    }
    const uint64_t type_at = c.pos;
    uint32_t type_id = 0;
    VRAMFIT_RETURN_IF_ERROR(c.U32(field("type"), &type_id));
    const GgmlType* type = FindGgmlType(type_id);
    if (type == nullptr) {
      const bool removed =
          std::find(kRemovedTypes.begin(), kRemovedTypes.end(), type_id) != kRemovedTypes.end();
      return c.Error(type_at, fmt::format(
          "tensor \"{}\": {} ggml type {} (expected one of the {} types ggml knows, ids 0-{})",
          name(), removed ? "removed" : "unknown", type_id, kGgmlTypes.size(),
          kGgmlTypeCount - 1));
    }
    if (ne[0] % type->block != 0) {
      return c.Error(type_at, fmt::format(
          "tensor \"{}\": ne[0] = {} is not a multiple of {}'s block of {} elements", name(),
          ne[0], DtypeName(type->dtype), type->block));
    }
    uint64_t elements = 1, bytes = ne[0] / type->block * type->bytes;
    bool ok = true;
    for (uint32_t d = 0; d < kGgufMaxDims; ++d) {
      ok = ok && core::CheckedMul(elements, ne[d], &elements) && elements <= INT64_MAX;
      if (d > 0) ok = ok && core::CheckedMul(bytes, ne[d], &bytes);
    }
    if (!ok) {
      return c.Error(dims_at, fmt::format("tensor \"{}\": ne [{}] has more elements or bytes "
                                          "than fit in 64 bits", name(),
                                          fmt::join(ne.begin(), ne.begin() + n_dims, ", ")));
    }
    InfoAt w;
    w.offset_at = c.pos;
    uint64_t offset = 0;
    VRAMFIT_RETURN_IF_ERROR(c.U64(field("offset"), &offset));
    t.dtype = type->dtype;
    for (uint32_t d = n_dims; d-- > 0;) t.shape.push_back(ne[d]);  // outermost first
    t.elements = elements;
    t.begin = offset;
    t.end = offset + bytes;  // may wrap: checked with the offsets below
    if (offset > UINT64_MAX - bytes) t.end = UINT64_MAX;
    f->tensors.push_back(std::move(t));
    if (!names.insert(f->tensors.back().name).second) {
      return c.Error(at, fmt::format("duplicate tensor name \"{}\"",
                                     core::Printable(f->tensors.back().name)));
    }
    where->push_back(w);
  }
  return Status::Ok();
}

// Offsets: each one the aligned end of the one before, and every tensor inside the file.
Status CheckOffsets(const Cursor& c, GgufFile* f, const std::vector<InfoAt>& where) {
  const uint64_t align = f->alignment;
  uint64_t data = 0;
  if (!core::CheckedAdd(f->header_bytes, align - 1, &data)) {
    return c.Error(f->header_bytes, "the data section's start does not fit in 64 bits");
  }
  f->data_offset = data / align * align;
  uint64_t expected = 0;
  const TensorInfo* prev = nullptr;
  for (size_t i = 0; i < f->tensors.size(); ++i) {
    TensorInfo& t = f->tensors[i];
    const auto name = [&t] { return core::Printable(t.name); };
    const uint64_t at = where[i].offset_at;
    if (t.begin % align != 0) {
      return c.Error(at, fmt::format("tensor \"{}\": data offset {} is not a multiple of the "
                                     "alignment {}; expected {}", name(), t.begin, align,
                                     expected));
    }
    if (t.begin != expected) {
      const std::string before =
          prev ? fmt::format("tensor \"{}\" (data bytes [{}, {}))", core::Printable(prev->name),
                             prev->begin, prev->end)
               : std::string("the start of the data section");
      return c.Error(at, fmt::format(
          "tensor \"{}\": data offset {} {} {}; expected {}", name(), t.begin,
          t.begin < expected ? "overlaps" : fmt::format("leaves a gap of {} bytes after",
                                                        t.begin - expected),
          before, expected));
    }
    uint64_t end_abs = 0;
    if (!core::CheckedAdd(f->data_offset, t.end, &end_abs) || t.end == UINT64_MAX ||
        end_abs > f->file_size) {
      return c.Error(at, fmt::format(
          "tensor \"{}\": data bytes [{}, {}) end at file byte {}, past the end of the file "
          "({} bytes): the file is truncated", name(), t.begin, t.end,
          t.end == UINT64_MAX ? std::string("2^64 or more") : std::to_string(end_abs),
          f->file_size));
    }
    uint64_t next = 0;
    if (!core::CheckedAdd(t.end, align - 1, &next)) {
      return c.Error(at, "tensor data end does not fit in 64 bits");
    }
    expected = next / align * align;
    f->data_bytes = t.end;
    prev = &t;
  }
  return Status::Ok();
}

Status Parse(Cursor& c, GgufFile* f) {
  uint64_t n_tensors = 0, n_kv = 0;
  VRAMFIT_RETURN_IF_ERROR(ReadFixed(c, f, &n_tensors, &n_kv));
  VRAMFIT_RETURN_IF_ERROR(ReadMetadata(c, n_kv, f));
  std::vector<InfoAt> where;
  where.reserve(std::min<uint64_t>(n_tensors, 1u << 20));
  VRAMFIT_RETURN_IF_ERROR(ReadTensorInfos(c, n_tensors, f, &where));
  f->header_bytes = c.pos;
  return CheckOffsets(c, f, where);
}

}  // namespace

const char* GgufTypeName(GgufType t) {
  static constexpr std::array<const char*, 13> kNames = {
      "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64",
      "f64"};
  const auto i = static_cast<uint32_t>(t);
  return i < kNames.size() ? kNames[i] : "?";
}

bool GgufValue::AsInt(int64_t* out) const {
  if (!IsIntType(type)) return false;
  if (IsSigned(type)) {
    *out = i;
    return true;
  }
  if (u > static_cast<uint64_t>(INT64_MAX)) return false;
  *out = static_cast<int64_t>(u);
  return true;
}

bool GgufValue::IsIntArray() const {
  return type == GgufType::kArray && IsIntType(array_type) && ints.size() == array_count;
}

const GgmlType* FindGgmlType(uint32_t id) {
  for (const GgmlType& t : kGgmlTypes) {
    if (t.id == id) return &t;
  }
  return nullptr;
}

const GgmlType* GgmlTypeOf(Dtype d) {
  for (const GgmlType& t : kGgmlTypes) {
    if (t.dtype == d) return &t;
  }
  return nullptr;
}

double GgmlBitsPerWeight(const GgmlType& t) { return t.bytes * 8.0 / t.block; }

const GgufValue* GgufFile::Find(std::string_view key) const {
  auto it = metadata.find(key);
  return it == metadata.end() ? nullptr : &it->second;
}

bool GgufFile::Int(std::string_view key, int64_t* out) const {
  const GgufValue* v = Find(key);
  return v != nullptr && v->AsInt(out);
}

std::string GgufFile::String(std::string_view key) const {
  const GgufValue* v = Find(key);
  return v != nullptr && v->type == GgufType::kString ? v->str : std::string();
}

Result<GgufParse> ParseGgufPrefix(std::string_view prefix, uint64_t file_size,
                                  std::string_view origin) {
  Cursor c(prefix, file_size, origin);
  GgufFile f;
  f.origin = std::string(origin);
  f.file_size = file_size;
  Status s = Parse(c, &f);
  if (c.need > 0) return GgufParse{std::nullopt, c.need};
  if (!s.ok()) return s;
  return GgufParse{std::move(f), 0};
}

Result<GgufFile> ParseGguf(std::string_view bytes, uint64_t file_size, std::string_view origin) {
  auto p = ParseGgufPrefix(bytes, file_size, origin);
  if (!p.ok()) return p.status();
  if (p->need > 0) {
    return Status::Corrupt(fmt::format("{}: the header needs {} bytes, {} were given", origin,
                                       p->need, bytes.size()));
  }
  return std::move(*p->file);
}

bool ParseGgufSplitName(std::string_view name, std::string* prefix, int* part, int* count) {
  // <prefix>-NNNNN-of-MMMMM.gguf
  constexpr std::string_view kExt = ".gguf";
  constexpr size_t kTail = 1 + 5 + 4 + 5;  // -NNNNN-of-MMMMM
  if (name.size() < kTail + kExt.size() + 1 || !name.ends_with(kExt)) return false;
  const std::string_view tail = name.substr(name.size() - kExt.size() - kTail, kTail);
  if (tail[0] != '-' || tail.substr(6, 4) != "-of-") return false;
  int a = 0, b = 0;
  for (size_t i = 1; i < 6; ++i) {
    if (tail[i] < '0' || tail[i] > '9' || tail[i + 9] < '0' || tail[i + 9] > '9') return false;
    a = a * 10 + (tail[i] - '0');
    b = b * 10 + (tail[i + 9] - '0');
  }
  if (a < 1 || b < 1 || a > b) return false;
  *prefix = std::string(name.substr(0, name.size() - kExt.size() - kTail));
  *part = a;
  *count = b;
  return true;
}

std::string GgufSplitName(std::string_view prefix, int part, int count) {
  return fmt::format("{}-{:05d}-of-{:05d}.gguf", prefix, part, count);
}

namespace formats {

std::span<const GgmlType> GgmlTypes() { return kGgmlTypes; }

FileTypeLabel GgufFileType(int64_t file_type) {
  struct Row {
    int64_t id;
    std::string_view label;
    Dtype main;
  };
  // llama.h enum llama_ftype (llama.cpp, 2026): the label and its projections' base type.
  static constexpr Row kRows[] = {
      {0, "F32", Dtype::kF32},          {1, "F16", Dtype::kF16},
      {2, "Q4_0", Dtype::kQ4_0},        {3, "Q4_1", Dtype::kQ4_1},
      {7, "Q8_0", Dtype::kQ8_0},        {8, "Q5_0", Dtype::kQ5_0},
      {9, "Q5_1", Dtype::kQ5_1},        {10, "Q2_K", Dtype::kQ2_K},
      {11, "Q3_K_S", Dtype::kQ3_K},     {12, "Q3_K_M", Dtype::kQ3_K},
      {13, "Q3_K_L", Dtype::kQ3_K},     {14, "Q4_K_S", Dtype::kQ4_K},
      {15, "Q4_K_M", Dtype::kQ4_K},     {16, "Q5_K_S", Dtype::kQ5_K},
      {17, "Q5_K_M", Dtype::kQ5_K},     {18, "Q6_K", Dtype::kQ6_K},
      {19, "IQ2_XXS", Dtype::kIQ2_XXS}, {20, "IQ2_XS", Dtype::kIQ2_XS},
      {21, "Q2_K_S", Dtype::kQ2_K},     {22, "IQ3_XS", Dtype::kIQ3_S},
      {23, "IQ3_XXS", Dtype::kIQ3_XXS}, {24, "IQ1_S", Dtype::kIQ1_S},
      {25, "IQ4_NL", Dtype::kIQ4_NL},   {26, "IQ3_S", Dtype::kIQ3_S},
      {27, "IQ3_M", Dtype::kIQ3_S},     {28, "IQ2_S", Dtype::kIQ2_S},
      {29, "IQ2_M", Dtype::kIQ2_S},     {30, "IQ4_XS", Dtype::kIQ4_XS},
      {31, "IQ1_M", Dtype::kIQ1_M},     {32, "BF16", Dtype::kBF16},
      {36, "TQ1_0", Dtype::kTQ1_0},     {37, "TQ2_0", Dtype::kTQ2_0},
      {38, "MXFP4_MOE", Dtype::kMXFP4}, {39, "NVFP4", Dtype::kNVFP4},
      {40, "Q1_0", Dtype::kQ1_0},
  };
  for (const Row& r : kRows) {
    if (r.id == file_type) return {r.label, r.main, true};
  }
  return {};
}

}  // namespace formats
}  // namespace vramfit
