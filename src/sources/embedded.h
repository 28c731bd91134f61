// The files of data/ compiled into the library by tools/embed.cmake.
#ifndef VRAMFIT_SOURCES_EMBEDDED_H_
#define VRAMFIT_SOURCES_EMBEDDED_H_

#include <cstddef>
#include <string_view>

namespace vramfit::embedded {

struct File {
  std::string_view path;   // relative to data/, e.g. "models/qwen3-8b.json"
  std::string_view bytes;
};
extern const File kFiles[];
extern const size_t kFileCount;

}  // namespace vramfit::embedded

#endif  // VRAMFIT_SOURCES_EMBEDDED_H_
