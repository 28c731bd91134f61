// libFuzzer target: any bytes as a log through the readers and the diagnosis rules.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "vramfit/doctor.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  vramfit::ScanOptions o;
  o.max_line_bytes = 4096;
  auto scan = vramfit::ScanLog(in, o);
  if (scan.ok()) {
    const vramfit::Diagnosis d = vramfit::Diagnose(*scan);
    (void)d;
  }
  return 0;
}
