// Size and count formatting (see units.h).
#include "core/units.h"

#include <fmt/format.h>

namespace vramfit::core {

std::string FormatBytes(uint64_t bytes) {
  constexpr double kKiB = 1024.0;
  const double b = static_cast<double>(bytes);
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (b < kKiB * kKiB) return fmt::format("{:.2f} KiB", b / kKiB);
  if (b < kKiB * kKiB * kKiB) return fmt::format("{:.2f} MiB", b / (kKiB * kKiB));
  if (b < kKiB * kKiB * kKiB * kKiB) return fmt::format("{:.2f} GiB", b / (kKiB * kKiB * kKiB));
  return fmt::format("{:.2f} TiB", b / (kKiB * kKiB * kKiB * kKiB));
}

std::string FormatCount(uint64_t count) {
  const double c = static_cast<double>(count);
  if (count < 1000) return fmt::format("{}", count);
  if (count < 1000000) return fmt::format("{:.1f}K", c / 1e3);
  if (count < 1000000000) return fmt::format("{:.1f}M", c / 1e6);
  if (count < 1000000000000ULL) return fmt::format("{:.2f}B", c / 1e9);
  return fmt::format("{:.2f}T", c / 1e12);
}

std::string GroupDigits(uint64_t value) {
  std::string digits = std::to_string(value);
  std::string out;
  const size_t n = digits.size();
  for (size_t i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

}  // namespace vramfit::core
