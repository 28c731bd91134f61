// libFuzzer target: an engine command line, as `vramfit check -- ...` reads it. The bytes are
// split into argv on NUL when they hold one, else on spaces; each engine of the table that
// recognizes the words reads them (environment prefixes, launcher, flags in any spelling),
// and its flag reader turns what was read into settings.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vramfit/engine.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const char sep = bytes.find('\0') != std::string_view::npos ? '\0' : ' ';
  std::vector<std::string> argv;
  for (size_t at = 0; at <= bytes.size();) {
    size_t end = bytes.find(sep, at);
    if (end == std::string_view::npos) end = bytes.size();
    argv.emplace_back(bytes.substr(at, end - at));
    at = end + 1;
  }
  for (const vramfit::Engine* e : vramfit::Engines()) {
    if (!e->recognizes(argv)) continue;
    auto cmd = e->read_command(argv);
    if (!cmd.ok()) continue;
    auto settings = e->read_flags(cmd->flags, cmd->settings);
    (void)settings;
  }
  return 0;
}
