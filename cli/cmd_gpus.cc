// `vramfit gpus [--json]`: the embedded GPU catalog.
#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "core/units.h"
#include "vramfit/gpu.h"

namespace vramfit::cli {

std::function<int()> SetupGpus(CLI::App* app) {
  auto json = std::make_shared<bool>(false);
  app->add_flag("--json", *json, "Print JSON (schema vramfit.gpus/1)");
  return [json]() {
    auto gpus = GpuCatalog();
    if (!gpus.ok()) {
      fmt::print(stderr, "vramfit gpus: {}\n", gpus.status().message());
      return kExitUsage;
    }
    std::string out;
    if (*json) {
      nlohmann::ordered_json j;
      j["schema"] = "vramfit.gpus/1";
      j["gpus"] = nlohmann::ordered_json::array();
      for (const GpuSpec& g : *gpus) {
        j["gpus"].push_back({{"id", g.id}, {"name", g.name}, {"aliases", g.aliases},
                             {"total_bytes", g.total_bytes}, {"nvidia_smi_mib", g.nvidia_smi_mib},
                             {"compute_capability", g.compute_capability}, {"fp8", g.fp8}, {"fp4", g.fp4},
                             {"unified_memory", g.unified_memory}, {"confidence", g.confidence},
                             {"source", g.source}, {"notes", g.notes}});
      }
      out = j.dump(2) + "\n";
    } else {
      out = fmt::format("{:<12} {:<34} {:>11} {:>5} {:>4} {:>4}  {:<9} {}\n", "ID", "NAME", "CUDA TOTAL",
                        "CC", "FP8", "FP4", "SOURCE", "ALIASES");
      for (const GpuSpec& g : *gpus) {
        out += fmt::format("{:<12} {:<34} {:>11} {:>5} {:>4} {:>4}  {:<9} {}\n", g.id, g.name,
                           core::FormatBytes(g.total_bytes), g.compute_capability, g.fp8 ? "yes" : "no",
                           g.fp4 ? "yes" : "no", g.confidence, fmt::join(g.aliases, ", "));
      }
      out += "CUDA TOTAL is what cudaMemGetInfo, PyTorch and vLLM report, not the marketing size. SOURCE: "
             "direct (read from a log naming the card), weak (one source or unconfirmed variant), "
             "inferred/derived (not measured: give --gpu-memory if you know better). `--json` has each source.\n";
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    return kExitOk;
  };
}

}  // namespace vramfit::cli
