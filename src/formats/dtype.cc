// safetensors element types: names and bit widths (reference: huggingface/safetensors
// `enum Dtype` and `Dtype::bitsize`, 2026-05; F8_*FNUZ added by PR #711), and the names of
// ggml's block types (ggml `ggml_type_name`, d99724f2) with the whole bits of a weight.
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

constexpr std::array<DtypeRow, kDtypeCount> kDtypes = {{
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
    {Dtype::kQ4_0, "Q4_0", 4},         {Dtype::kQ4_1, "Q4_1", 5},
    {Dtype::kQ5_0, "Q5_0", 5},         {Dtype::kQ5_1, "Q5_1", 6},
    {Dtype::kQ8_0, "Q8_0", 8},         {Dtype::kQ8_1, "Q8_1", 9},
    {Dtype::kQ2_K, "Q2_K", 2},         {Dtype::kQ3_K, "Q3_K", 3},
    {Dtype::kQ4_K, "Q4_K", 4},         {Dtype::kQ5_K, "Q5_K", 5},
    {Dtype::kQ6_K, "Q6_K", 6},         {Dtype::kQ8_K, "Q8_K", 9},
    {Dtype::kIQ2_XXS, "IQ2_XXS", 2},   {Dtype::kIQ2_XS, "IQ2_XS", 2},
    {Dtype::kIQ3_XXS, "IQ3_XXS", 3},   {Dtype::kIQ1_S, "IQ1_S", 1},
    {Dtype::kIQ4_NL, "IQ4_NL", 4},     {Dtype::kIQ3_S, "IQ3_S", 3},
    {Dtype::kIQ2_S, "IQ2_S", 2},       {Dtype::kIQ4_XS, "IQ4_XS", 4},
    {Dtype::kIQ1_M, "IQ1_M", 1},       {Dtype::kTQ1_0, "TQ1_0", 1},
    {Dtype::kTQ2_0, "TQ2_0", 2},       {Dtype::kMXFP4, "MXFP4", 4},
    {Dtype::kNVFP4, "NVFP4", 4},       {Dtype::kQ1_0, "Q1_0", 1},
    {Dtype::kQ2_0, "Q2_0", 2},
}};
static_assert(kDtypes[kDtypeCount - 1].dtype == Dtype::kQ2_0);

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
  for (int i = 0; i < kSafetensorsDtypeCount; ++i) {
    const DtypeRow& row = kDtypes[i];
    if (s == row.name) {
      *out = row.dtype;
      return true;
    }
  }
  return false;
}

bool IsGgmlBlockType(Dtype d) { return static_cast<int>(d) >= kSafetensorsDtypeCount; }

bool IsWideFloat(Dtype d) {
  return d == Dtype::kF16 || d == Dtype::kBF16 || d == Dtype::kF32 || d == Dtype::kF64;
}

}  // namespace vramfit
