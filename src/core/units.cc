// Size and count formatting (see units.h).
#include "core/units.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace vramfit::core {

Result<uint64_t> ParseSize(std::string_view text) {
  std::string s;
  for (char c : text) {
    if (c != ' ') s.push_back(c);
  }
  size_t unit_at = 0;
  while (unit_at < s.size() &&
         (std::isdigit(static_cast<unsigned char>(s[unit_at])) || s[unit_at] == '.')) {
    ++unit_at;
  }
  const std::string number = s.substr(0, unit_at);
  std::string unit = s.substr(unit_at);
  std::transform(unit.begin(), unit.end(), unit.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  const auto bad = [&] {
    return Status::InvalidArgument(fmt::format(
        "memory size \"{}\": expected a number with a unit (GiB, MiB, GB, MB) or a byte count, "
        "e.g. 24GiB",
        text));
  };
  if (number.empty() || std::count(number.begin(), number.end(), '.') > 1) return bad();
  double scale = 0;
  if (unit.empty() || unit == "b") {
    scale = 1;
  } else if (unit == "gib" || unit == "g" || unit == "gi") {
    scale = static_cast<double>(kGiB);
  } else if (unit == "mib" || unit == "m" || unit == "mi") {
    scale = static_cast<double>(kMiB);
  } else if (unit == "tib") {
    scale = static_cast<double>(kTiB);
  } else if (unit == "gb") {
    scale = 1e9;
  } else if (unit == "mb") {
    scale = 1e6;
  } else if (unit == "tb") {
    scale = 1e12;
  } else {
    return bad();
  }
  const double value = std::strtod(number.c_str(), nullptr) * scale;
  if (!(value >= 1) || value > 1.0e15) {
    return Status::InvalidArgument(
        fmt::format("memory size \"{}\": expected between 1 byte and 1 PB", text));
  }
  return static_cast<uint64_t>(std::llround(value));
}

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
