// Formatting of sizes and counts for text output: GiB (2^30) as the engines print them.
#ifndef VRAMFIT_CORE_UNITS_H_
#define VRAMFIT_CORE_UNITS_H_

#include <cstdint>
#include <string>

namespace vramfit::core {

// "14.19 GiB", "512.00 MiB", "960 B": binary units, two decimals above bytes.
std::string FormatBytes(uint64_t bytes);
// "7.62B", "30.5M", "896": a parameter count with a short suffix.
std::string FormatCount(uint64_t count);
// "7,615,616,512": digits grouped by thousands.
std::string GroupDigits(uint64_t value);

}  // namespace vramfit::core

#endif  // VRAMFIT_CORE_UNITS_H_
