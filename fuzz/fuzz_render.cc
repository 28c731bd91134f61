// libFuzzer target: the renderers on whatever a hostile input puts in their strings. The first
// byte chooses: even, the rest is a log (scan, diagnosis, doctor text and JSON); odd, the rest
// is a safetensors file (header, inventory, inspect text and JSON with every tensor). The
// bytes also become the inventory's model name and a note: not UTF-8, control characters,
// anything. No renderer may throw, the HTML ones included (nlohmann's dump throws on invalid
// UTF-8 unless told not to).
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

#include "vramfit/doctor.h"
#include "vramfit/formats.h"
#include "vramfit/inventory.h"
#include "vramfit/report.h"
#include "vramfit/report_html.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    std::istringstream in{std::string(bytes)};
    vramfit::ScanOptions o;
    o.max_line_bytes = 512;  // small, so the cut is reached often
    auto scan = vramfit::ScanLog(in, o);
    if (!scan.ok()) return 0;
    const vramfit::Diagnosis d = vramfit::Diagnose(*scan);
    (void)vramfit::RenderDoctorText(d, *scan);
    (void)vramfit::RenderDoctorJson(d, *scan);
    (void)vramfit::RenderDoctorHtml(d, *scan);
    return 0;
  }
  auto file = vramfit::ParseSafetensors(bytes, bytes.size(), "fuzz.safetensors");
  std::vector<vramfit::FileTensors> files(1);
  files[0].name = std::string(bytes.substr(0, 64));
  if (file.ok()) files[0].tensors = std::move(file->tensors);
  vramfit::Inventory inv = vramfit::BuildInventory(nullptr, std::move(files));
  inv.model = std::string(bytes.substr(0, 64));
  inv.notes.emplace_back(bytes.substr(bytes.size() > 64 ? bytes.size() - 64 : 0));
  (void)vramfit::RenderInspectText(inv, {true});
  (void)vramfit::RenderInspectJson(inv, {true});
  (void)vramfit::RenderInspectHtml(inv);
  return 0;
}
