// The files of web/ (the reports' stylesheet and script, the local page) compiled into the
// library by tools/embed.cmake, looked up by their path relative to web/.
#ifndef VRAMFIT_REPORT_WEB_FILES_H_
#define VRAMFIT_REPORT_WEB_FILES_H_

#include <cstddef>
#include <string_view>

namespace vramfit::web {

struct File {
  std::string_view path;   // relative to web/, e.g. "report.css"
  std::string_view bytes;
};
extern const File kFiles[];
extern const size_t kFileCount;

// The bytes of web/<path>; empty when there is no such file.
std::string_view WebFile(std::string_view path);

}  // namespace vramfit::web

#endif  // VRAMFIT_REPORT_WEB_FILES_H_
