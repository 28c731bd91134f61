// nvidia-smi's table as a log reader (readers/reader.h): the per-GPU "used MiB / total MiB"
// cell and the rows of the process table. It names no fixes: the memory it lists is the
// evidence for other engines' diagnoses.
#include <algorithm>
#include <cctype>
#include <vector>

#include "core/units.h"
#include "doctor/readers/reader.h"

namespace vramfit::doctor {
namespace {

constexpr char kEngine[] = "nvidia-smi";

// `--query-gpu=index,name,memory.used,memory.total --format=csv` rows ("0, NVIDIA A100, 1234
// MiB, 81920 MiB") and `--query-compute-apps=pid,process_name,used_memory` rows ("4242,
// python3, 20000 MiB"): comma-separated fields, the first an integer, sizes in MiB. Of a GPU
// row's sizes the largest is the total; with two, the other is what is used.
bool MatchCsv(const Line& line) {
  const LineView s = line.view();
  if (!Has(s, " MiB") || !Has(s, ", ") || Has(s, "|") || Has(s, "=") || Has(s, "[") ||
      s.size() > 400 || !std::isdigit(static_cast<unsigned char>(s[0]))) {
    return false;
  }
  std::vector<double> mib;
  size_t fields = 0, b = 0;
  while (b <= s.size()) {
    size_t e = s.find(',', b);
    if (e == std::string_view::npos) e = s.size();
    std::string_view field = s.substr(b, e - b);
    while (!field.empty() && field.front() == ' ') field.remove_prefix(1);
    while (!field.empty() && (field.back() == ' ' || field.back() == '\r')) field.remove_suffix(1);
    ++fields;
    if (field.size() > 4 && field.substr(field.size() - 4) == " MiB") {
      size_t end = 0;
      auto v = NumberAt(field, 0, &end);
      if (!v || end != field.size() - 4) return false;
      mib.push_back(*v);
    }
    b = e + 1;
  }
  size_t first_end = 0;
  if (fields < 2 || fields > 8 || mib.empty() || !NumberAt(s, 0, &first_end) ||
      (first_end < s.size() && s[first_end] != ',')) {
    return false;
  }
  if (mib.size() == 1 && fields >= 3) {
    auto& e = line.Emit(EventKind::kSmiProcess, kEngine);
    Set(e, Num::kUsedBytes, mib[0] * core::kMiBf);
    return true;
  }
  if (mib.size() < 2) return false;
  auto& e = line.Emit(EventKind::kSmiGpu, kEngine);
  const double total = *std::max_element(mib.begin(), mib.end());
  Set(e, Num::kSmiTotalBytes, total * core::kMiBf);
  if (mib.size() == 2) Set(e, Num::kUsedBytes, std::min(mib[0], mib[1]) * core::kMiBf);
  return true;
}

void Match(const Line& line) {
  const LineView s = line.view();
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
      Set(e, Num::kSmiTotalBytes, *total * core::kMiBf);
    }
    return;
  }
  if (MatchCsv(line)) return;
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
