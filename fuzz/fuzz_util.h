// What the config-driven fuzz targets share: config.json bytes to the inventory InspectModel
// would synthesize for them, or nothing when the config is refused or too big to be quick.
#ifndef VRAMFIT_FUZZ_FUZZ_UTIL_H_
#define VRAMFIT_FUZZ_FUZZ_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "vramfit/inventory.h"
#include "vramfit/model.h"

namespace vramfit::fuzz {

inline std::optional<Inventory> SynthesizedInventory(const uint8_t* data, size_t size) {
  auto spec = ModelSpecFromConfigJson(
      std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.config.json");
  if (!spec.ok()) return std::nullopt;
  // Keep each input fast: synthesis of real-size MoE models (tens of thousands of tensors)
  // adds no coverage over small ones. SynthesizeTensors' own cap is tested in the unit tests.
  int64_t experts = 0;
  for (const auto& l : spec->layers) experts += l.mlp.num_experts;
  if (experts > 4096 || spec->vision.depth > 64 || spec->layers.size() > 256) return std::nullopt;
  auto tensors = SynthesizeTensors(*spec);
  if (!tensors.ok()) return std::nullopt;
  std::vector<FileTensors> files;
  files.push_back(std::move(*tensors));
  Inventory inv = BuildInventory(&*spec, std::move(files));
  inv.synthesized = true;
  inv.model = "fuzz";
  return inv;
}

}  // namespace vramfit::fuzz

#endif  // VRAMFIT_FUZZ_FUZZ_UTIL_H_
