// libFuzzer target: the vramfit command line itself, as a user types it: `plan`, `fit`,
// `check`, `gpus` and `models` with any options and values (--gpu, --gpu-memory, --context,
// --goal, --min-context, --gpus, --other-memory, engine flags, `check -- COMMAND ...`). The
// bytes are split into argv on NUL when they hold one, else on spaces; a first word that is
// not one of those subcommands is made `plan` (inspect and doctor read files: their parsers
// have targets of their own), and whole-catalog searches are skipped (below). Output goes to
// /dev/null; every exit code is fine, a crash, a sanitizer finding or a hang is not.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_argv.h"
#include "commands.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // A MODEL spelled org/name is a Hub id: the fuzzer never reaches the network, and an empty
  // cache answers offline.
  ::setenv("HF_HUB_OFFLINE", "1", 1);
  ::setenv("HF_HOME", "/nonexistent/vramfit-fuzz", 1);
  if (std::freopen("/dev/null", "w", stdout) == nullptr) return 0;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;  // a command line, not a file
  std::vector<std::string> argv = vramfit::fuzz::SplitArgv(data, size);
  static const std::vector<std::string> kAllowed = {"plan", "fit", "check", "gpus", "models"};
  bool allowed = false;
  for (const std::string& s : kAllowed) allowed = allowed || argv[0] == s;
  if (!allowed) argv.insert(argv.begin(), "plan");
  // Searches over the whole GPU catalog (`fit --goal gpus`, `--gpus-table`) plan a thousand
  // times (a second, ten under the sanitizers): bench/bench_fit.cc times them; here they
  // would only be timeouts.
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == "--gpus-table" || argv[i].rfind("--goal=g", 0) == 0) return 0;
    if (argv[i] == "--goal" && i + 1 < argv.size() && argv[i + 1].rfind("g", 0) == 0) return 0;
  }
  (void)vramfit::cli::Run(argv);
  return 0;
}
