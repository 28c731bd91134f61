// GgufWriter (see gguf_writer.h): writes the layout of ggml's docs/gguf.md byte by byte, with
// its own table of type ids and block sizes (ggml.h / ggml.c type_traits), kept apart from
// the reader's so a test compares two readings of the spec.
#include "testutil/gguf_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <stdexcept>

namespace vramfit::testing {
namespace {

struct TypeRow {
  Dtype dtype;
  uint32_t id, block, bytes;
};
constexpr TypeRow kTypes[] = {
    {Dtype::kF32, 0, 1, 4},      {Dtype::kF16, 1, 1, 2},       {Dtype::kBF16, 30, 1, 2},
    {Dtype::kQ4_0, 2, 32, 18},   {Dtype::kQ8_0, 8, 32, 34},    {Dtype::kQ4_K, 12, 256, 144},
    {Dtype::kQ5_K, 13, 256, 176}, {Dtype::kQ6_K, 14, 256, 210}, {Dtype::kQ3_K, 11, 256, 110},
    {Dtype::kQ2_K, 10, 256, 84}, {Dtype::kIQ2_XXS, 16, 256, 66}, {Dtype::kIQ4_XS, 23, 256, 136},
    {Dtype::kMXFP4, 39, 32, 17}, {Dtype::kI32, 26, 1, 4},
};

const TypeRow& Row(Dtype d) {
  for (const TypeRow& r : kTypes) {
    if (r.dtype == d) return r;
  }
  throw std::invalid_argument("GgufWriter: no row for this type");
}

void Put(std::string* out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void PutStr(std::string* out, const std::string& s) {
  Put(out, s.size(), 8);
  *out += s;
}

}  // namespace

uint64_t GgufTensorBytes(Dtype type, const std::vector<uint64_t>& shape) {
  const TypeRow& r = Row(type);
  uint64_t bytes = shape.empty() ? r.bytes : shape.back() / r.block * r.bytes;
  for (size_t i = 0; i + 1 < shape.size(); ++i) bytes *= shape[i];
  return bytes;
}

void GgufWriter::U8(const std::string& k, uint8_t v) { Raw(k, 0, std::string(1, char(v))); }
void GgufWriter::U32(const std::string& k, uint32_t v) {
  std::string b;
  Put(&b, v, 4);
  Raw(k, 4, b);
}
void GgufWriter::I32(const std::string& k, int32_t v) {
  std::string b;
  Put(&b, static_cast<uint32_t>(v), 4);
  Raw(k, 5, b);
}
void GgufWriter::U64(const std::string& k, uint64_t v) {
  std::string b;
  Put(&b, v, 8);
  Raw(k, 10, b);
}
void GgufWriter::F32(const std::string& k, float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  std::string b;
  Put(&b, bits, 4);
  Raw(k, 6, b);
}
void GgufWriter::F64(const std::string& k, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  std::string b;
  Put(&b, bits, 8);
  Raw(k, 12, b);
}
void GgufWriter::Bool(const std::string& k, bool v) { Raw(k, 7, std::string(1, v ? 1 : 0)); }
void GgufWriter::Str(const std::string& k, const std::string& v) {
  std::string b;
  PutStr(&b, v);
  Raw(k, 8, b);
}
void GgufWriter::I32Array(const std::string& k, const std::vector<int32_t>& v) {
  std::string b;
  Put(&b, 5, 4);
  Put(&b, v.size(), 8);
  for (int32_t x : v) Put(&b, static_cast<uint32_t>(x), 4);
  Raw(k, 9, b);
}
void GgufWriter::BoolArray(const std::string& k, const std::vector<bool>& v) {
  std::string b;
  Put(&b, 7, 4);
  Put(&b, v.size(), 8);
  for (bool x : v) b.push_back(x ? 1 : 0);
  Raw(k, 9, b);
}
void GgufWriter::StrArray(const std::string& k, size_t n) {
  std::string b;
  Put(&b, 8, 4);
  Put(&b, n, 8);
  for (size_t i = 0; i < n; ++i) PutStr(&b, "t" + std::to_string(i));
  Raw(k, 9, b);
}
void GgufWriter::NestedArray(const std::string& k, int depth) {
  // depth arrays, each holding one element; the innermost an array of one u8.
  std::string inner;
  Put(&inner, 0, 4);
  Put(&inner, 1, 8);
  inner.push_back(7);
  for (int d = 1; d < depth; ++d) {
    std::string outer;
    Put(&outer, 9, 4);
    Put(&outer, 1, 8);
    outer += inner;
    inner = outer;
  }
  Raw(k, 9, inner);
}
void GgufWriter::Raw(const std::string& k, uint32_t type, const std::string& value) {
  PutStr(&kv_, k);
  Put(&kv_, type, 4);
  kv_ += value;
  ++kvs_;
}

void GgufWriter::Tensor(const std::string& name, Dtype type, const std::vector<uint64_t>& shape) {
  TensorAt(name, type, shape, next_offset_);
}

void GgufWriter::TensorAt(const std::string& name, Dtype type,
                          const std::vector<uint64_t>& shape, uint64_t offset) {
  PutStr(&infos_, name);
  Put(&infos_, shape.size(), 4);
  for (size_t i = shape.size(); i-- > 0;) Put(&infos_, shape[i], 8);
  Put(&infos_, Row(type).id, 4);
  Put(&infos_, offset, 8);
  const uint64_t end = offset + GgufTensorBytes(type, shape);
  data_end_ = std::max(data_end_, end);
  next_offset_ = (end + alignment_ - 1) / alignment_ * alignment_;
  ++tensors_;
}

void GgufWriter::TensorRawType(const std::string& name, uint32_t type_id,
                               const std::vector<uint64_t>& ne) {
  PutStr(&infos_, name);
  Put(&infos_, ne.size(), 4);
  for (uint64_t d : ne) Put(&infos_, d, 8);
  Put(&infos_, type_id, 4);
  Put(&infos_, next_offset_, 8);
  ++tensors_;
}

std::string GgufWriter::Header() const {
  std::string out = "GGUF";
  Put(&out, version_, 4);
  Put(&out, overridden_ ? tensors_override_ : tensors_, 8);
  Put(&out, overridden_ ? kvs_override_ : kvs_, 8);
  out += kv_;
  out += infos_;
  out.resize((out.size() + alignment_ - 1) / alignment_ * alignment_, '\0');
  return out;
}

uint64_t GgufWriter::FileSize() const { return Header().size() + data_end_; }

std::string GgufWriter::Image() const {
  std::string out = Header();
  out.resize(out.size() + data_end_, '\0');
  return out;
}

void GgufWriter::WriteHollow(const std::string& path) const {
  const std::string h = Header();
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(h.data(), static_cast<std::streamsize>(h.size()));
  }
  if (::truncate(path.c_str(), static_cast<off_t>(h.size() + data_end_)) != 0) {
    throw std::runtime_error("truncate failed: " + path);
  }
}

void WriteLlama3Q4KM(const std::string& path, const std::string& arch) {
  GgufWriter w;
  w.Str("general.architecture", arch);
  w.U32("general.file_type", 15);
  w.U32(arch + ".block_count", 32);
  w.U32(arch + ".embedding_length", 4096);
  w.U32(arch + ".context_length", 8192);
  w.U32(arch + ".feed_forward_length", 14336);
  w.U32(arch + ".attention.head_count", 32);
  w.U32(arch + ".attention.head_count_kv", 8);
  w.Tensor("token_embd.weight", Dtype::kQ4_K, {128256, 4096});
  for (int i = 0; i < 32; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    const bool more = i < 4 || i >= 28 || (i - 4) % 3 == 2;
    const Dtype big = more ? Dtype::kQ6_K : Dtype::kQ4_K;
    w.Tensor(p + "attn_norm.weight", Dtype::kF32, {4096});
    w.Tensor(p + "attn_q.weight", Dtype::kQ4_K, {4096, 4096});
    w.Tensor(p + "attn_k.weight", Dtype::kQ4_K, {1024, 4096});
    w.Tensor(p + "attn_v.weight", big, {1024, 4096});
    w.Tensor(p + "attn_output.weight", Dtype::kQ4_K, {4096, 4096});
    w.Tensor(p + "ffn_norm.weight", Dtype::kF32, {4096});
    w.Tensor(p + "ffn_gate.weight", Dtype::kQ4_K, {14336, 4096});
    w.Tensor(p + "ffn_up.weight", Dtype::kQ4_K, {14336, 4096});
    w.Tensor(p + "ffn_down.weight", big, {4096, 14336});
  }
  w.Tensor("output_norm.weight", Dtype::kF32, {4096});
  w.Tensor("output.weight", Dtype::kQ6_K, {128256, 4096});
  w.WriteHollow(path);
}

}  // namespace vramfit::testing
