// What a monitored run gives besides its report: nvidia-smi's CSV lines (so scripts written
// for `nvidia-smi --query-gpu=... --format=csv -l` keep working) and, when the engine failed,
// the doctor's diagnosis of its output with the measured figures added.
#include <fmt/format.h>
#include <time.h>

#include <algorithm>

#include "core/units.h"
#include "vramfit/monitor.h"

namespace vramfit {

// nvidia-smi --query-gpu=timestamp,index,name,memory.used,memory.total --format=csv prints
// this header, then "2026/12/02 10:23:45.123, 0, NVIDIA H100 80GB HBM3, 1234 MiB, 81559 MiB"
// per GPU: local time with milliseconds, whole MiB.
std::string CsvHeader() {
  return "timestamp, index, name, memory.used [MiB], memory.total [MiB]\n";
}

std::string CsvRows(const Reading& reading, const std::vector<GpuInfo>& gpus) {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  tm local{};
  localtime_r(&ts.tv_sec, &local);
  char when[32];
  strftime(when, sizeof when, "%Y/%m/%d %H:%M:%S", &local);
  const long ms = ts.tv_nsec / 1000000;
  std::string out;
  for (size_t i = 0; i < reading.gpus.size(); ++i) {
    const GpuReading& g = reading.gpus[i];
    const std::string name = i < gpus.size() ? gpus[i].name : "";
    const uint32_t index = i < gpus.size() ? gpus[i].index : static_cast<uint32_t>(i);
    out += fmt::format("{}.{:03d}, {}, {}, {} MiB, {} MiB\n", when, ms, index, name,
                       g.used_bytes / core::kMiB, g.total_bytes / core::kMiB);
  }
  return out;
}

std::optional<Diagnosis> DiagnoseRun(const MonitorRun& run, const DoctorContext& context) {
  if (run.report.errors.empty()) return std::nullopt;
  Diagnosis d = Diagnose(run.scan, context);
  const MonitorReport& r = run.report;
  uint64_t peak = 0, total = 0;
  for (const StageMeasure& m : r.stages) {
    for (size_t i = 0; i < m.used_peak_bytes.size(); ++i) {
      if (m.used_peak_bytes[i] >= peak) {
        peak = m.used_peak_bytes[i];
        total = i < r.gpus.size() ? r.gpus[i].total_bytes : 0;
      }
    }
  }
  d.numbers["measured_peak_used_bytes"] = static_cast<double>(peak);
  d.numbers["measured_gpu_total_bytes"] = static_cast<double>(total);
  // The stage the output had reached when it failed, as the monitor marked it.
  const Stage at = r.errors.front().stage;
  d.numbers["measured_stage_bytes"] = static_cast<double>(r.MeasuredBytes(at));
  d.notes.push_back(fmt::format(
      "measured by vramfit monitor: the busiest GPU peaked at {:.2f} GiB of {:.2f} GiB; the "
      "engine held {:.2f} GiB at the most during {} (the stage its output had reached)",
      static_cast<double>(peak) / core::kGiB, static_cast<double>(total) / core::kGiB,
      static_cast<double>(r.MeasuredBytes(at)) / core::kGiB, StageName(at)));
  return d;
}

}  // namespace vramfit
