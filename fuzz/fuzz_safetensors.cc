// libFuzzer target: safetensors header parsing, then roles/parameters/audit over whatever
// tensors it accepted. Same entry points as the tool; no file system. Every input is also read
// by the full reader alone: the fast reader must give the same result or the same error.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "formats/safetensors_readers.h"
#include "vramfit/formats.h"
#include "vramfit/inventory.h"

namespace {

bool Same(const vramfit::Result<vramfit::SafetensorsFile>& a,
          const vramfit::Result<vramfit::SafetensorsFile>& b) {
  if (a.ok() != b.ok()) return false;
  if (!a.ok()) return a.status().message() == b.status().message();
  if (a->metadata != b->metadata || a->tensors.size() != b->tensors.size()) return false;
  for (size_t i = 0; i < a->tensors.size(); ++i) {
    const auto& x = a->tensors[i];
    const auto& y = b->tensors[i];
    if (x.name != y.name || x.dtype != y.dtype || !(x.shape == y.shape) || x.begin != y.begin ||
        x.end != y.end || x.elements != y.elements) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto file = vramfit::ParseSafetensors(bytes, size, "fuzz.safetensors");
  auto full = vramfit::formats::ParseSafetensorsWith(bytes, size, "fuzz.safetensors",
                                                     vramfit::formats::HeaderReader::kFullOnly);
  if (!Same(file, full)) std::abort();  // the two readers disagree
  if (!file.ok()) return 0;
  std::vector<vramfit::FileTensors> files(1);
  files[0].name = file->origin;
  files[0].tensors = std::move(file->tensors);
  vramfit::Inventory inv = vramfit::BuildInventory(nullptr, std::move(files));
  (void)inv;
  return 0;
}
