// `vramfit gpus [--json]`: the embedded GPU catalog.
#include <fmt/format.h>

#include <cstdio>

#include "commands.h"
#include "engine_flags.h"
#include "vramfit/gpu.h"
#include "vramfit/report.h"

namespace vramfit::cli {

std::function<int()> SetupGpus(CLI::App* app) {
  auto json = std::make_shared<bool>(false);
  app->add_flag("--json", *json, "Print JSON (schema vramfit.gpus/1)");
  return [json]() {
    auto gpus = GpuCatalog();
    if (!gpus.ok()) {
      fmt::print(Err(), "vramfit gpus: {}\n", gpus.status().message());
      return kExitUsage;
    }
    const std::string out = *json ? RenderGpusJson(*gpus) : RenderGpusText(*gpus, EngineTitles());
    std::fwrite(out.data(), 1, out.size(), Out());
    return kExitOk;
  };
}

}  // namespace vramfit::cli
