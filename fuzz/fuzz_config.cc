// libFuzzer target: config.json -> ModelSpec -> synthesized tensors -> inventory and audit.
#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)vramfit::fuzz::SynthesizedInventory(data, size);
  return 0;
}
