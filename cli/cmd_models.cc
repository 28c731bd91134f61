// `vramfit models [--json]`: the embedded model catalog.
#include <fmt/format.h>

#include <cstdio>

#include "commands.h"
#include "vramfit/catalog.h"
#include "vramfit/report.h"

namespace vramfit::cli {

std::function<int()> SetupModels(CLI::App* app) {
  auto json = std::make_shared<bool>(false);
  app->add_flag("--json", *json, "Print JSON (schema vramfit.models/1)");
  return [json]() {
    auto models = CatalogModels();
    if (!models.ok()) {
      fmt::print(Err(), "vramfit models: {}\n", models.status().message());
      return kExitUsage;
    }
    const std::string out = *json ? RenderModelsJson(*models) : RenderModelsText(*models);
    std::fwrite(out.data(), 1, out.size(), Out());
    return kExitOk;
  };
}

}  // namespace vramfit::cli
