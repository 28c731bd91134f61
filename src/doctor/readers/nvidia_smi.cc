// nvidia-smi's table as a log reader (readers/reader.h): the per-GPU "used MiB / total MiB"
// cell and the rows of the process table. It names no fixes: the memory it lists is the
// evidence for other engines' diagnoses.
#include <cctype>

#include "core/units.h"
#include "doctor/readers/reader.h"

namespace vramfit::doctor {
namespace {

constexpr char kEngine[] = "nvidia-smi";

void Match(const Line& line) {
  const std::string_view s = line.text;
  // "|  0  NVIDIA A100 80GB...  On | 00000000:3B:00.0 Off | ... | 23458MiB / 24564MiB | 98%
  // Default |"
  const size_t slash = s.find("MiB / ");
  if (slash != std::string_view::npos && s.size() > 0 && (s[0] == '|' || Has(s, "| "))) {
    size_t start = slash;
    while (start > 0 && std::isdigit(static_cast<unsigned char>(s[start - 1]))) --start;
    auto used = NumberAt(s, start);
    auto total = NumberAt(s, slash + 6);
    if (used && total) {
      auto& e = line.Emit(EventKind::kSmiGpu, kEngine);
      Set(e, Num::kUsedBytes, *used * core::kMiBf);
      Set(e, Num::kTotalBytes, *total * core::kMiBf);
    }
    return;
  }
  // "|    0   N/A  N/A    123456    C   ...python3.10    18000MiB |"
  if (s.size() > 2 && s[0] == '|' && Has(s, "MiB |") &&
      (Has(s, "   C ") || Has(s, " C+G ") || Has(s, "   G "))) {
    const size_t mib = s.rfind("MiB");
    size_t start = mib;
    while (start > 0 && std::isdigit(static_cast<unsigned char>(s[start - 1]))) --start;
    if (auto n = NumberAt(s, start)) {
      auto& e = line.Emit(EventKind::kSmiProcess, kEngine);
      Set(e, Num::kUsedBytes, *n * core::kMiBf);
    }
  }
}

}  // namespace

const Reader& NvidiaSmiReader() {
  static const Reader kReader = {
      .engine = kEngine,
      .match = Match,
  };
  return kReader;
}

}  // namespace vramfit::doctor
