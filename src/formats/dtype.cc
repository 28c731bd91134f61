// safetensors element types: names and bit widths (reference: huggingface/safetensors
// `enum Dtype` and `Dtype::bitsize`, 2026-05; F8_*FNUZ added by PR #711).
#include <array>
#include <string_view>

#include "vramfit/formats.h"

namespace vramfit {
namespace {

struct DtypeRow {
  Dtype dtype;
  std::string_view name;
  int bits;
};

constexpr std::array<DtypeRow, 22> kDtypes = {{
    {Dtype::kBool, "BOOL", 8},         {Dtype::kU8, "U8", 8},
    {Dtype::kI8, "I8", 8},             {Dtype::kF8_E5M2, "F8_E5M2", 8},
    {Dtype::kF8_E4M3, "F8_E4M3", 8},   {Dtype::kF8_E8M0, "F8_E8M0", 8},
    {Dtype::kF8_E4M3FNUZ, "F8_E4M3FNUZ", 8}, {Dtype::kF8_E5M2FNUZ, "F8_E5M2FNUZ", 8},
    {Dtype::kI16, "I16", 16},          {Dtype::kU16, "U16", 16},
    {Dtype::kF16, "F16", 16},          {Dtype::kBF16, "BF16", 16},
    {Dtype::kI32, "I32", 32},          {Dtype::kU32, "U32", 32},
    {Dtype::kF32, "F32", 32},          {Dtype::kF64, "F64", 64},
    {Dtype::kI64, "I64", 64},          {Dtype::kU64, "U64", 64},
    {Dtype::kC64, "C64", 64},          {Dtype::kF4, "F4", 4},
    {Dtype::kF6_E2M3, "F6_E2M3", 6},   {Dtype::kF6_E3M2, "F6_E3M2", 6},
}};

}  // namespace

int DtypeBits(Dtype d) { return kDtypes[static_cast<size_t>(d)].bits; }
const char* DtypeName(Dtype d) { return kDtypes[static_cast<size_t>(d)].name.data(); }

bool ParseDtype(std::string_view s, Dtype* out) {
  // The common weight dtypes first; then the whole table.
  for (Dtype d :
       {Dtype::kBF16, Dtype::kI32, Dtype::kF16, Dtype::kF32, Dtype::kF8_E4M3, Dtype::kU8}) {
    if (s == kDtypes[static_cast<size_t>(d)].name) {
      *out = d;
      return true;
    }
  }
  for (const DtypeRow& row : kDtypes) {
    if (s == row.name) {
      *out = row.dtype;
      return true;
    }
  }
  return false;
}

bool IsWideFloat(Dtype d) {
  return d == Dtype::kF16 || d == Dtype::kBF16 || d == Dtype::kF32 || d == Dtype::kF64;
}

}  // namespace vramfit
