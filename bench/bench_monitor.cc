// The monitor's costs: CPU time per sample (NVML read through the fake libnvidia-ml of
// tests/monitor/, eight GPUs with two processes each, then the Recorder), and the memory the
// Recorder holds after an hour of samples at 100 ms (36,000 samples fed synthetically).
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include "vramfit/monitor.h"

namespace {

std::unique_ptr<vramfit::Nvml> BenchNvml() {
  setenv("VRAMFIT_FAKE_NVML_TRACE",
         (std::string(VRAMFIT_SOURCE_DIR) + "/tests/monitor/bench.trace").c_str(), 1);
  unsetenv("VRAMFIT_FAKE_NVML_PHASE");  // one phase: no file read per call
  vramfit::NvmlOptions o;
  o.library = VRAMFIT_FAKE_NVML;
  auto n = vramfit::Nvml::Open(o);
  return n.ok() ? std::move(*n) : nullptr;
}

// One NVML read of every GPU (memory and the process list), the fake's own cost included.
void BM_MonitorNvmlRead(benchmark::State& state) {
  auto nvml = BenchNvml();
  if (!nvml) {
    state.SkipWithError("the fake NVML did not open");
    return;
  }
  vramfit::Reading r;
  for (auto _ : state) {
    vramfit::Status s = nvml->Read(&r);
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(BM_MonitorNvmlRead);

// A whole sample as the monitor takes it: read, then the Recorder (peaks, engine processes,
// timeline).
void BM_MonitorSample(benchmark::State& state) {
  auto nvml = BenchNvml();
  if (!nvml) {
    state.SkipWithError("the fake NVML did not open");
    return;
  }
  vramfit::Recorder rec(nvml->gpus());
  const std::vector<uint32_t> engine = {1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007};
  vramfit::Reading r;
  double t = 0;
  for (auto _ : state) {
    vramfit::Status s = nvml->Read(&r);
    benchmark::DoNotOptimize(s);
    r.seconds = t += 0.1;
    rec.AddSample(r, engine);
  }
  state.counters["recorder_bytes"] = static_cast<double>(rec.MemoryBytes());
}
BENCHMARK(BM_MonitorSample);

// An hour at 100 ms on eight GPUs: 36,000 samples into a Recorder, with seven stage marks.
void BM_MonitorRecorderHour(benchmark::State& state) {
  std::vector<vramfit::GpuInfo> gpus;
  for (uint32_t i = 0; i < 8; ++i) gpus.push_back({i, "GPU", 80ull << 30});
  vramfit::Reading r;
  r.gpus.resize(8);
  for (auto& g : r.gpus) g.processes = {{1000, 0}, {2000, 1ull << 30}};
  const std::vector<uint32_t> engine = {1000};
  size_t held = 0, points = 0;
  for (auto _ : state) {
    vramfit::Recorder rec(gpus);
    for (int i = 0; i < 36000; ++i) {
      if (i % 5000 == 0 && i / 5000 < vramfit::kStageCount) {
        vramfit::StageMark m;
        m.seconds = i * 0.1;
        m.stage = static_cast<vramfit::Stage>(i / 5000);
        m.text = "a start-up line of about sixty bytes, as engines print them....";
        rec.Mark(std::move(m));
      }
      r.seconds = i * 0.1;
      for (auto& g : r.gpus) {
        g.used_bytes = static_cast<uint64_t>(i) << 20;
        g.processes[0].used_bytes = g.used_bytes;
      }
      rec.AddSample(r, engine);
    }
    held = rec.MemoryBytes();
    auto report = rec.Finish(3600);
    points = report.timeline.size();
    benchmark::DoNotOptimize(report);
  }
  state.counters["held_bytes"] = static_cast<double>(held);
  state.counters["timeline_points"] = static_cast<double>(points);
  state.counters["samples"] = 36000;
}
BENCHMARK(BM_MonitorRecorderHour)->Unit(benchmark::kMillisecond);

}  // namespace
