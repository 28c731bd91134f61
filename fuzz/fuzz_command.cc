// libFuzzer target: an engine command line, as `vramfit check -- ...` reads it. The bytes are
// split into argv on NUL when they hold one, else on spaces; each engine of the table that
// recognizes the words reads them (environment prefixes, launcher, flags in any spelling),
// its flag check holds the flags given against the engine's own option list (of the newest
// release and of a named one), and its flag reader turns what was read into settings.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engines/vllm/config_file.h"
#include "fuzz_argv.h"
#include "vramfit/engine.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> argv = vramfit::fuzz::SplitArgv(data, size);
  for (const vramfit::Engine* e : vramfit::Engines()) {
    if (!e->recognizes(argv)) continue;
    auto cmd = e->read_command(argv);
    if (!cmd.ok()) continue;
    if (e->check_flags != nullptr) {
      (void)e->check_flags(*cmd, "");
      (void)e->check_flags(*cmd, argv.empty() ? "0.5.6" : argv.back());
    }
    auto settings = e->read_flags(cmd->flags, cmd->settings);
    (void)settings;
  }
  // The same bytes as the YAML file of vLLM's `--config FILE`.
  auto config = vramfit::vllm::ConfigFileFlags(
      std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.yaml", false);
  (void)config;
  return 0;
}
