// libFuzzer target: GGUF header parsing (the whole input as the file, and as a prefix of a
// file twice its size, so "needs more bytes" and the past-the-end checks are both reached),
// then the spec, roles, parameters and the GGUF audit over whatever it accepted. Same entry
// points as the tool; no file system.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "model/gguf_spec.h"
#include "vramfit/gguf.h"
#include "vramfit/inventory.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto prefix = vramfit::ParseGgufPrefix(bytes, uint64_t{2} * size + 64, "fuzz.gguf");
  (void)prefix;
  auto file = vramfit::ParseGguf(bytes, size, "fuzz.gguf");
  if (!file.ok()) return 0;
  auto spec = vramfit::ModelSpecFromGguf(*file);
  // Keep each input quick: the spec's layer count comes from the input.
  if (spec.ok() && spec->layers.size() > 4096) return 0;
  vramfit::GgufFile meta;
  meta.origin = file->origin;
  meta.metadata = file->metadata;
  std::vector<vramfit::FileTensors> files(1);
  files[0].name = file->origin;
  files[0].tensors = std::move(file->tensors);
  vramfit::Inventory inv =
      vramfit::BuildInventory(spec.ok() ? &*spec : nullptr, std::move(files));
  vramfit::AuditGguf(meta, &inv);
  return 0;
}
