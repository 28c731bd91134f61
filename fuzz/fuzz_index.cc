// libFuzzer target: model.safetensors.index.json parsing.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "vramfit/formats.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto index = vramfit::ParseSafetensorsIndex(
      std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.index.json");
  (void)index;
  return 0;
}
