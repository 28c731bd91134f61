// `vramfit gpus`: the GPU catalog as a table and as JSON (see vramfit/report.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

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
                         {"compute_capability", g.compute_capability},
                         {"sm_count", g.sm_count}, {"fp8", g.fp8},
                         {"fp4", g.fp4}, {"unified_memory", g.unified_memory}, {"laptop", g.laptop},
                         {"confidence", g.confidence}, {"source", g.source}, {"notes", g.notes}});
  }
  return report::JsonText(j);
}

std::string RenderGpusText(const std::vector<GpuSpec>& gpus, std::string_view engines) {
  // The id, name and capability columns are as wide as their longest entry ("rtx-4070-ti-super",
  // AMD's "gfx1100"), so every row lines up.
  size_t id_width = 12, name_width = 34, cc_width = 5;
  for (const GpuSpec& g : gpus) {
    id_width = std::max(id_width, g.id.size());
    name_width = std::max(name_width, g.name.size());
    cc_width = std::max(cc_width, g.compute_capability.size());
  }
  auto row = [&](std::string_view id, std::string_view name, std::string_view total,
                 std::string_view cc, std::string_view fp8, std::string_view fp4,
                 std::string_view source, std::string_view aliases) {
    return fmt::format("{:<{}} {:<{}} {:>11} {:>{}} {:>4} {:>4}  {:<9} {}\n", id, id_width, name,
                       name_width, total, cc, cc_width, fp8, fp4, source, aliases);
  };
  std::string out = row("ID", "NAME", "CUDA TOTAL", "CC", "FP8", "FP4", "SOURCE", "ALIASES");
  for (const GpuSpec& g : gpus) {
    out += row(g.id, g.name, core::FormatBytes(g.total_bytes), g.compute_capability,
               g.fp8 ? "yes" : "no", g.fp4 ? "yes" : "no", g.confidence,
               fmt::format("{}", fmt::join(g.aliases, ", ")));
  }
  out += fmt::format("CUDA TOTAL is what cudaMemGetInfo reports (as PyTorch, {} print it), not "
                     "the marketing size. ", engines);
  out += "SOURCE: direct (read from a log naming the card), weak (one source or unconfirmed "
         "variant), inferred/derived (not measured: give --gpu-memory if you know better). "
         "`--json` has each source.\n";
  return out;
}

}  // namespace vramfit
