// The doctor's log readers: bytes per second over the public corpus concatenated, repeated.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "vramfit/doctor.h"

namespace {

std::string CorpusText() {
  std::string all;
  for (const auto& e : std::filesystem::directory_iterator(std::string(VRAMFIT_SOURCE_DIR) +
                                                           "/tests/doctor/corpus")) {
    if (e.path().extension() != ".log") continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    all += ss.str();
  }
  return all;
}

void BM_DoctorScanAndDiagnose(benchmark::State& state) {
  const std::string unit = CorpusText();
  std::string text;
  while (text.size() < (8u << 20)) text += unit;  // 8 MiB of real log lines
  for (auto _ : state) {
    std::istringstream in(text);
    auto scan = vramfit::ScanLog(in);
    auto d = vramfit::Diagnose(*scan);
    benchmark::DoNotOptimize(d);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_DoctorScanAndDiagnose)->Unit(benchmark::kMillisecond);

}  // namespace
