// libFuzzer target: config.json -> ModelSpec -> synthesized tensors -> inventory and audit.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "vramfit/inventory.h"
#include "vramfit/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto spec = vramfit::ModelSpecFromConfigJson(
      std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.config.json");
  if (!spec.ok()) return 0;
  // Keep each input fast: synthesis of real-size MoE models (tens of thousands of tensors)
  // adds no coverage over small ones. SynthesizeTensors' own cap is tested in the unit tests.
  int64_t experts = 0;
  for (const auto& l : spec->layers) experts += l.mlp.num_experts;
  if (experts > 4096 || spec->vision.depth > 64) return 0;
  auto tensors = vramfit::SynthesizeTensors(*spec);
  if (!tensors.ok()) return 0;
  std::vector<vramfit::FileTensors> files;
  files.push_back(std::move(*tensors));
  vramfit::Inventory inv = vramfit::BuildInventory(&*spec, std::move(files));
  (void)inv;
  return 0;
}
