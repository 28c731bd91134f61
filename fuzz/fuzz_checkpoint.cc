// libFuzzer target: a sharded checkpoint over a MemorySource, read by ReadCheckpoint as any
// source is (the index, every shard it names, the index checked against the headers), then
// the inventory. The bytes are files: each part, split on "\n\x01\n", is a file name line and
// the file's bytes; "model.safetensors.index.json" selects the sharded layout.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "sources/checkpoint.h"
#include "vramfit/inventory.h"
#include "vramfit/source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  constexpr std::string_view kSep = "\n\x01\n";
  std::map<std::string, std::string> files;
  for (size_t at = 0; at < bytes.size();) {
    size_t end = bytes.find(kSep, at);
    if (end == std::string_view::npos) end = bytes.size();
    const std::string_view part = bytes.substr(at, end - at);
    const size_t nl = part.find('\n');
    if (nl != std::string_view::npos) files[std::string(part.substr(0, nl))] = part.substr(nl + 1);
    at = end + kSep.size();
  }
  const auto source = vramfit::MemorySource("fuzz", std::move(files));
  auto ck = vramfit::ReadCheckpoint(*source, {});
  if (!ck.ok()) return 0;
  std::vector<vramfit::FileTensors> parts;
  for (auto& f : ck->files) {
    vramfit::FileTensors t;
    t.name = f.origin;
    t.tensors = std::move(f.tensors);
    parts.push_back(std::move(t));
  }
  const vramfit::Inventory inv = vramfit::BuildInventory(nullptr, std::move(parts));
  (void)inv;
  return 0;
}
