// A terminal's hard wrap, as the doctor's shape tests capture logs: a line break every `width`
// columns. A UTF-8 character is never cut, and a colour's escape sequence ("\x1b[0;32m") takes
// no column and is copied whole.
#ifndef VRAMFIT_TESTS_TERMINAL_WRAP_H_
#define VRAMFIT_TESTS_TERMINAL_WRAP_H_

#include <string>
#include <string_view>

namespace vramfit::testing {

inline std::string WrapColumns(std::string_view line, size_t width) {
  std::string out;
  size_t col = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '[') {
      const size_t end = line.find_first_of("ABCDGHJKmsu", i + 2);
      const size_t stop = end == std::string_view::npos ? line.size() : end + 1;
      out.append(line.substr(i, stop - i));
      i = stop - 1;
      continue;
    }
    const auto c = static_cast<unsigned char>(line[i]);
    if (col >= width && (c & 0xC0) != 0x80) {
      out += '\n';
      col = 0;
    }
    out += line[i];
    if ((c & 0xC0) != 0x80) ++col;
  }
  return out;
}

}  // namespace vramfit::testing

#endif  // VRAMFIT_TESTS_TERMINAL_WRAP_H_
