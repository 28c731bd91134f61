// The command-line fuzz targets' argv: the bytes split on NUL when they hold one, else on
// spaces (so a seed can be typed, and a word can still hold a space).
#ifndef VRAMFIT_FUZZ_FUZZ_ARGV_H_
#define VRAMFIT_FUZZ_FUZZ_ARGV_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vramfit::fuzz {

inline std::vector<std::string> SplitArgv(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const char sep = bytes.find('\0') != std::string_view::npos ? '\0' : ' ';
  std::vector<std::string> argv;
  for (size_t at = 0; at <= bytes.size();) {
    size_t end = bytes.find(sep, at);
    if (end == std::string_view::npos) end = bytes.size();
    argv.emplace_back(bytes.substr(at, end - at));
    at = end + 1;
  }
  return argv;
}

}  // namespace vramfit::fuzz

#endif  // VRAMFIT_FUZZ_FUZZ_ARGV_H_
