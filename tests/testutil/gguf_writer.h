// A test-side GGUF writer: real GGUF headers (versions 2 and 3, every value type, nested
// arrays, tensor infos at aligned offsets) written independently of the reader, for tests,
// the fuzz seeds and the benchmark. Files are hollow: the header, then the data section as a
// sparse hole (ftruncate), since the reader never reads tensor data.
#ifndef VRAMFIT_TESTS_TESTUTIL_GGUF_WRITER_H_
#define VRAMFIT_TESTS_TESTUTIL_GGUF_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "vramfit/formats.h"

namespace vramfit::testing {

class GgufWriter {
 public:
  explicit GgufWriter(uint32_t version = 3) : version_(version) {}

  // Metadata, in the order added. Value type ids are GGUF's (gguf.h enum gguf_type).
  void U8(const std::string& key, uint8_t v);
  void U32(const std::string& key, uint32_t v);
  void I32(const std::string& key, int32_t v);
  void U64(const std::string& key, uint64_t v);
  void F32(const std::string& key, float v);
  void F64(const std::string& key, double v);
  void Bool(const std::string& key, bool v);
  void Str(const std::string& key, const std::string& v);
  void I32Array(const std::string& key, const std::vector<int32_t>& v);
  void BoolArray(const std::string& key, const std::vector<bool>& v);
  void StrArray(const std::string& key, size_t n);  // "t0", "t1", ...
  // An array nested `depth` deep, the innermost holding one u8.
  void NestedArray(const std::string& key, int depth);
  // A key with raw value bytes after its type id (for broken files).
  void Raw(const std::string& key, uint32_t type, const std::string& value_bytes);

  // A tensor: its ggml type and its shape outermost first (written reversed, as ne).
  // The offset is the aligned running total unless `offset` is given.
  void Tensor(const std::string& name, Dtype type, const std::vector<uint64_t>& shape);
  void TensorAt(const std::string& name, Dtype type, const std::vector<uint64_t>& shape,
                uint64_t offset);
  void TensorRawType(const std::string& name, uint32_t type_id, const std::vector<uint64_t>& ne);

  void set_alignment(uint64_t a) { alignment_ = a; }
  // The counts written in the fixed header (default: the real ones).
  void override_counts(uint64_t tensors, uint64_t kvs) {
    tensors_override_ = tensors;
    kvs_override_ = kvs;
    overridden_ = true;
  }

  // Header bytes through the padding to the data section.
  std::string Header() const;
  // The whole file size: header plus the data the tensors take.
  uint64_t FileSize() const;
  // The whole image in memory (data as zeros): small models only.
  std::string Image() const;
  // Writes the header and makes the file FileSize() bytes long (sparse data).
  void WriteHollow(const std::string& path) const;

  uint64_t data_bytes() const { return data_end_; }
  size_t tensor_count() const { return tensors_; }

 private:
  uint32_t version_;
  uint64_t alignment_ = 32;
  std::string kv_;
  std::string infos_;
  uint64_t kvs_ = 0;
  uint64_t tensors_ = 0;
  uint64_t next_offset_ = 0;
  uint64_t data_end_ = 0;
  bool overridden_ = false;
  uint64_t tensors_override_ = 0, kvs_override_ = 0;
};

// Bytes of a tensor of a GGUF type and shape (outermost first): ne[0]/block x bytes x rest.
uint64_t GgufTensorBytes(Dtype type, const std::vector<uint64_t>& shape);

// Llama-3-8B as llama-quantize's Q4_K_M writes it (attn_v and ffn_down in Q6_K where
// use_more_bits(i, 32): layers 0-3, 28-31 and every third from 6; output Q6_K), hollow, under
// the architecture name `arch` (its keys prefixed with it).
void WriteLlama3Q4KM(const std::string& path, const std::string& arch = "llama");

}  // namespace vramfit::testing

#endif  // VRAMFIT_TESTS_TESTUTIL_GGUF_WRITER_H_
