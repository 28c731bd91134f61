// `vramfit gpus`: the GPU catalog as a table and as JSON (see vramfit/report.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "core/units.h"
#include "report/json_text.h"
#include "vramfit/report.h"

namespace vramfit {

std::string RenderGpusJson(const std::vector<GpuSpec>& gpus) {
  nlohmann::ordered_json j;
  j["schema"] = "vramfit.gpus/1";
  j["gpus"] = nlohmann::ordered_json::array();
  for (const GpuSpec& g : gpus) {
    j["gpus"].push_back({{"id", g.id}, {"name", g.name}, {"aliases", g.aliases},
                         {"total_bytes", g.total_bytes}, {"nvidia_smi_mib", g.nvidia_smi_mib},
                         {"compute_capability", g.compute_capability}, {"fp8", g.fp8},
                         {"fp4", g.fp4}, {"unified_memory", g.unified_memory},
                         {"confidence", g.confidence}, {"source", g.source}, {"notes", g.notes}});
  }
  return report::JsonText(j);
}

std::string RenderGpusText(const std::vector<GpuSpec>& gpus, std::string_view engines) {
  std::string out = fmt::format("{:<12} {:<34} {:>11} {:>5} {:>4} {:>4}  {:<9} {}\n", "ID", "NAME",
                                "CUDA TOTAL", "CC", "FP8", "FP4", "SOURCE", "ALIASES");
  for (const GpuSpec& g : gpus) {
    out += fmt::format("{:<12} {:<34} {:>11} {:>5} {:>4} {:>4}  {:<9} {}\n", g.id, g.name,
                       core::FormatBytes(g.total_bytes), g.compute_capability,
                       g.fp8 ? "yes" : "no", g.fp4 ? "yes" : "no", g.confidence,
                       fmt::join(g.aliases, ", "));
  }
  out += fmt::format("CUDA TOTAL is what cudaMemGetInfo reports (as PyTorch, {} print it), not "
                     "the marketing size. ", engines);
  out += "SOURCE: direct (read from a log naming the card), weak (one source or unconfirmed "
         "variant), inferred/derived (not measured: give --gpu-memory if you know better). "
         "`--json` has each source.\n";
  return out;
}

}  // namespace vramfit
