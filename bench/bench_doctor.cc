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

// The timed work of each benchmark: scan `text` and diagnose it, reporting bytes a second;
// returns the events the last scan kept.
size_t ScanAndDiagnose(benchmark::State& state, const std::string& text) {
  size_t events = 0;
  for (auto _ : state) {
    std::istringstream in(text);
    auto scan = vramfit::ScanLog(in);
    events = scan->events.size();
    auto d = vramfit::Diagnose(*scan);
    benchmark::DoNotOptimize(d);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text.size()));
  return events;
}

void BM_DoctorScanAndDiagnose(benchmark::State& state) {
  const std::string unit = CorpusText();
  std::string text;
  while (text.size() < (8u << 20)) text += unit;  // 8 MiB of real log lines
  ScanAndDiagnose(state, text);
}
BENCHMARK(BM_DoctorScanAndDiagnose)->Unit(benchmark::kMillisecond);

// A serving log: 8 MiB of routine metrics lines, then the failure (the event cap keeps the
// error; the routine events are kept only for their first occurrences).
void BM_DoctorServingLogFlood(benchmark::State& state) {
  const std::string unit =
      "(APIServer pid=1) INFO 05-01 10:00:00 [loggers.py:123] Engine 000: Avg prompt "
      "throughput: 1024.0 tokens/s, Avg generation throughput: 512.0 tokens/s, Running: 8 reqs, "
      "Waiting: 0 reqs, GPU KV cache usage: 41.0%, Prefix cache hit rate: 12.0%\n";
  std::string text;
  while (text.size() < (8u << 20)) text += unit;
  text += "ERROR 05-01 10:00:01 [core.py:700] torch.OutOfMemoryError: CUDA out of memory. Tried "
          "to allocate 2.00 GiB. GPU 0 has a total capacity of 79.14 GiB of which 1.00 GiB is "
          "free.\n";
  state.counters["events_kept"] = static_cast<double>(ScanAndDiagnose(state, text));
}
BENCHMARK(BM_DoctorServingLogFlood)->Unit(benchmark::kMillisecond);

// A log whose line ends were lost, at its worst for the splitter (paste.cc Flattened): one
// 64 KiB line of launcher prefixes and traceback frames, each record opening with the same
// "[rank0]: " (every space a candidate, every prefix chain walked), then the error. Lines of
// a 4 MiB log, so that the time per byte shows.
void BM_DoctorFlattenedLines(benchmark::State& state) {
  std::string line;
  while (line.size() < (64u << 10)) {
    line += "[rank0]: [rank0]: File \"/w/sft.py\", line 61, in <module> [rank0]: model = "
            "model.to(\"cuda\") ";
  }
  line += "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 224.00 MiB.\n";
  std::string text;
  while (text.size() < (4u << 20)) text += line;
  ScanAndDiagnose(state, text);
}
BENCHMARK(BM_DoctorFlattenedLines)->Unit(benchmark::kMillisecond);

}  // namespace
