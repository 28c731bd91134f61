// libFuzzer target: config.json -> ModelSpec -> synthesized tensors -> inventory and audit.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "vramfit/inventory.h"
#include "vramfit/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto spec = vramfit::ModelSpecFromConfigJson(std::string_view(reinterpret_cast<const char*>(data), size),
                                               "fuzz.config.json");
  if (!spec.ok()) return 0;
  auto tensors = vramfit::SynthesizeTensors(*spec);
  if (!tensors.ok()) return 0;
  std::vector<vramfit::FileTensors> files;
  files.push_back(std::move(*tensors));
  vramfit::Inventory inv = vramfit::BuildInventory(&*spec, std::move(files));
  (void)inv;
  return 0;
}
