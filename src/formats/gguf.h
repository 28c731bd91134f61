// GGUF reader internals shared by its tests and the inventory: the ggml type table as a span
// and the `general.file_type` labels (llama.h enum llama_ftype). The public entry points are
// in vramfit/gguf.h.
#ifndef VRAMFIT_FORMATS_GGUF_H_
#define VRAMFIT_FORMATS_GGUF_H_

#include <cstdint>
#include <span>
#include <string_view>

#include "vramfit/gguf.h"

namespace vramfit::formats {

// Every known ggml type, in id order.
std::span<const GgmlType> GgmlTypes();

// `general.file_type` (llama.h enum llama_ftype, llama.cpp b6xxx-2026): its label
// ("Q4_K_M") and the type most of its projections are meant to have (Q4_K), or empty / null
// when the value is unknown.
struct FileTypeLabel {
  std::string_view label;
  Dtype main = Dtype::kF32;
  bool known = false;
};
FileTypeLabel GgufFileType(int64_t file_type);

// The largest tensor count read from one file (the checkpoint reader's cap).
inline constexpr uint64_t kGgufMaxTensors = 5'000'000;

}  // namespace vramfit::formats

#endif  // VRAMFIT_FORMATS_GGUF_H_
