// libFuzzer target: safetensors header parsing, then roles/parameters/audit over whatever
// tensors it accepted. Same entry points as the tool; no file system.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "vramfit/formats.h"
#include "vramfit/inventory.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto file = vramfit::ParseSafetensors(bytes, size, "fuzz.safetensors");
  if (!file.ok()) return 0;
  std::vector<vramfit::FileTensors> files(1);
  files[0].name = file->origin;
  files[0].tensors = std::move(file->tensors);
  vramfit::Inventory inv = vramfit::BuildInventory(nullptr, std::move(files));
  (void)inv;
  return 0;
}
