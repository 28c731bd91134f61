// Byte units, in one place: the binary constants every room uses, the one reader of sizes a
// user types, and the formatting of sizes and counts for text output (GiB = 2^30, as the
// engines print them).
#ifndef VRAMFIT_CORE_UNITS_H_
#define VRAMFIT_CORE_UNITS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "vramfit/status.h"

namespace vramfit::core {

inline constexpr uint64_t kKiB = uint64_t{1} << 10;
inline constexpr uint64_t kMiB = uint64_t{1} << 20;
inline constexpr uint64_t kGiB = uint64_t{1} << 30;
inline constexpr uint64_t kTiB = uint64_t{1} << 40;
// The same as doubles, for arithmetic on measured or modelled sizes.
inline constexpr double kMiBf = static_cast<double>(kMiB);
inline constexpr double kGiBf = static_cast<double>(kGiB);

// A size a user typed (--gpu-memory, --other-memory, --kv-cache-memory-bytes): a number and a
// unit, spaces allowed, the unit's case ignored. Binary: GiB, Gi, G, MiB, Mi, M, TiB (2^30,
// 2^20, 2^40; "G" and "M" are binary as in nvidia-smi and PyTorch). Decimal: GB, MB, TB (10^9,
// 10^6, 10^12). A bare number, or "B", is bytes. Between 1 byte and 10^15 bytes.
// kInvalidArgument says what was expected.
//
// (Engine logs are read differently: vLLM, SGLang and llama.cpp divide by 2^30 and print
// "GB", so the doctor's log readers read a logged "GB" as GiB; see src/doctor/text_scan.h.)
//
// Example: ParseSize("80GB") == 80'000'000'000; ParseSize("24GiB") == 24 * kGiB.
Result<uint64_t> ParseSize(std::string_view text);

// "14.19 GiB", "512.00 MiB", "960 B": binary units, two decimals above bytes.
std::string FormatBytes(uint64_t bytes);
// "7.62B", "30.5M", "896": a parameter count with a short suffix.
std::string FormatCount(uint64_t count);
// "7,615,616,512": digits grouped by thousands.
std::string GroupDigits(uint64_t value);

}  // namespace vramfit::core

#endif  // VRAMFIT_CORE_UNITS_H_
