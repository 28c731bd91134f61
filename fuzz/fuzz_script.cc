// libFuzzer target: a deploy script, as `vramfit check --script` reads it. The bytes are the
// script; each engine command found is read by its engine (command reader, flag check, flag
// reader), as check does before planning.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "vramfit/engine.h"
#include "vramfit/script.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto read = vramfit::ReadDeployScript(text, "fuzz.sh", {});
  if (!read.ok()) return 0;
  for (const vramfit::ScriptInvocation& inv : read->invocations) {
    auto cmd = inv.engine->read_command(inv.argv);
    if (!cmd.ok()) continue;
    if (inv.engine->check_flags) (void)inv.engine->check_flags(*cmd, inv.version);
    auto settings = inv.engine->read_flags(cmd->flags, cmd->settings);
    (void)settings;
  }
  (void)vramfit::ReadEnvironmentFile(text, "fuzz.env");
  return 0;
}
