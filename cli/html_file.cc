// `--html FILE` of plan, check, fit, inspect and doctor: writes the command's self-contained
// HTML report (vramfit/report_html.h) beside its usual output, and says so on stderr; `--html -`
// prints the report on stdout instead of the usual output.
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "commands.h"

namespace vramfit::cli {

Status WriteHtmlFile(const std::string& path, const std::string& html) {
  if (path == "-") {
    std::fwrite(html.data(), 1, html.size(), Out());
    return Status::Ok();
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    return Status::Io(
        fmt::format("--html {}: cannot write the report ({})", path, std::strerror(errno)));
  }
  out.write(html.data(), static_cast<std::streamsize>(html.size()));
  out.close();
  if (!out) {
    return Status::Io(
        fmt::format("--html {}: writing the report failed ({})", path, std::strerror(errno)));
  }
  fmt::print(Err(), "vramfit: wrote {} ({} bytes)\n", path, html.size());
  return Status::Ok();
}

}  // namespace vramfit::cli
