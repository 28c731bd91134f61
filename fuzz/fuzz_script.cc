// libFuzzer target: a deploy script, as `vramfit check --script` reads it. The bytes are the
// script, read as shell and as Python (script/python.cc); each engine command found is read by
// its engine (command reader, flag check, flag reader), as check does before planning.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "vramfit/engine.h"
#include "vramfit/script.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (std::string_view name : {"fuzz.sh", "fuzz.py"}) {
    auto read = vramfit::ReadDeployScript(text, name, {});
    if (!read.ok()) continue;
    for (const vramfit::ScriptInvocation& inv : read->invocations) {
      auto cmd = inv.engine->read_command(inv.argv);
      if (!cmd.ok()) continue;
      if (inv.engine->check_flags) (void)inv.engine->check_flags(*cmd, inv.version);
      auto settings = inv.engine->read_flags(cmd->flags, cmd->settings);
      (void)settings;
    }
  }
  (void)vramfit::ReadEnvironmentFile(text, "fuzz.env");
  return 0;
}
