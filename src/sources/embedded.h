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

// The embedded file at `path`; nullptr when data/ had none.
inline const File* Find(std::string_view path) {
  for (size_t i = 0; i < kFileCount; ++i) {
    if (kFiles[i].path == path) return &kFiles[i];
  }
  return nullptr;
}

}  // namespace vramfit::embedded

#endif  // VRAMFIT_SOURCES_EMBEDDED_H_
