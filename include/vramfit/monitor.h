// `vramfit monitor`: watch a real engine start-up on the GPUs and compare it with the plan.
// NVML (the NVIDIA driver's management library) is loaded at run time, never linked, so the
// library and its tests run on machines without a driver; a missing driver is a Status.
//
//   NVML samples ─► Recorder (per-stage peaks + a downsampled timeline) ─► MonitorReport
//   engine log lines ─► the doctor's readers ─► stage marks ─┘
//
// Thread-safety: an Nvml handle and a Recorder are used from one thread at a time.
//
// Example:
//   auto nvml = vramfit::Nvml::Open();
//   if (!nvml.ok()) puts(nvml.status().message().c_str());  // "no NVIDIA driver: ..."
//   vramfit::MonitorOptions o;
//   o.command = {"vllm", "serve", "Qwen/Qwen3-8B"};
//   auto run = vramfit::MonitorCommand(**nvml, o);  // run->report.stages: peaks per stage
#ifndef VRAMFIT_MONITOR_H_
#define VRAMFIT_MONITOR_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vramfit/doctor.h"
#include "vramfit/plan.h"
#include "vramfit/status.h"

namespace vramfit {

// One GPU as the driver names it.
struct GpuInfo {
  uint32_t index = 0;
  std::string name;  // "NVIDIA H100 80GB HBM3"
  uint64_t total_bytes = 0;
};

// One process's memory on one GPU, as the driver reports it.
struct ProcessMemory {
  uint32_t pid = 0;
  uint64_t used_bytes = 0;
};

// One GPU at one instant: what nvidia-smi shows as memory.used / memory.total, and the compute
// processes on it.
struct GpuReading {
  uint64_t used_bytes = 0;
  uint64_t total_bytes = 0;
  std::vector<ProcessMemory> processes;
};

// Every GPU at one instant; `seconds` since the monitor started.
struct Reading {
  double seconds = 0;
  std::vector<GpuReading> gpus;
};

struct NvmlOptions {
  // The library to load. Empty: $VRAMFIT_NVML_LIBRARY when set, else "libnvidia-ml.so.1" (the
  // name the driver installs; the search follows dlopen's rules).
  std::string library;
  // Processes listed per GPU at most (the rest are counted in used_bytes only).
  uint32_t max_processes = 64;
};

// A loaded, initialised NVML. Open fails with kNotFound ("no NVIDIA driver: ...") when the
// library cannot be loaded and kUnsupported when it loads but does not initialise (the driver
// is not running) or lacks a function; the message names the library and NVML's own words.
class Nvml {
 public:
  static Result<std::unique_ptr<Nvml>> Open(const NvmlOptions& options = {});
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  // The GPUs found at Open, in NVML's index order.
  const std::vector<GpuInfo>& gpus() const;
  // Reads every GPU into `out` (sized to gpus()); reuses its vectors' storage.
  Status Read(Reading* out);

  struct Impl;

 private:
  explicit Nvml(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The predicted figure of each stage: what nvidia-smi would show for the engine's processes
// on its busiest GPU at the most during that stage (0: the plan does not say). Built from one
// GpuPlan's terms, cumulatively: startup = CUDA context; load = context + load peak;
// profile = context + weights + non-torch + activation peak; kv_cache = profile + KV cache;
// cudagraph = kv_cache + CUDA graphs; warmup and runtime = the plan's device_used_bytes.
struct PredictedStages {
  std::string engine;  // "vllm@0.22" when the plan says
  uint64_t bytes[kStageCount] = {};
  uint64_t total_bytes = 0;  // the plan's GPU
  bool fits = true;
  std::optional<Stage> failure_stage;
};
PredictedStages PredictStages(const Plan& plan);
// The same from `vramfit plan --json` output (schema vramfit.plan/1): the first entry of
// "gpus". Fails with kCorrupt naming the key when the text is not such a plan.
Result<PredictedStages> ReadPlanJson(std::string_view json);

// A stage reached (or a failure seen) on the engine's log.
struct StageMark {
  double seconds = 0;
  Stage stage = Stage::kStartup;
  std::string engine;  // the reader that recognised it ("vllm", "sglang", "llama.cpp", ...)
  uint64_t line = 0;   // 1-based line of the engine's output
  std::string event;   // the doctor's event name ("weights_loaded", "torch_oom", ...)
  std::string text;    // the line (trimmed, at most 300 bytes)
};

// What one stage held, per GPU.
struct StageMeasure {
  Stage stage = Stage::kStartup;
  bool reached = false;
  double start_seconds = 0, end_seconds = 0;
  uint64_t samples = 0;
  std::vector<uint64_t> used_peak_bytes;     // per GPU: the most memory.used showed
  std::vector<uint64_t> process_peak_bytes;  // per GPU: the most the engine's processes held
};

struct TimelinePoint {
  double seconds = 0;                  // the first sample the point covers
  std::vector<uint64_t> used_bytes;    // per GPU: the most memory.used showed over the point
};

struct RecorderOptions {
  // Points kept in the timeline. Past it, neighbours are merged two by two (each keeps the
  // larger reading) and the step doubles, so memory stays fixed however long the run.
  size_t max_points = 2048;
  // Failure lines kept (the first ones).
  size_t max_errors = 16;
};

struct MonitorReport {
  std::vector<GpuInfo> gpus;
  std::vector<uint64_t> baseline_used_bytes;  // per GPU: the first sample (before the engine)
  std::vector<StageMark> marks;               // stages in the order reached
  std::vector<StageMark> errors;              // failure lines (out of memory, ...)
  std::vector<StageMeasure> stages;           // kStageCount entries, in Stage order
  std::vector<TimelinePoint> timeline;        // at most max_points
  double timeline_step_samples = 1;           // samples per point
  uint64_t samples = 0, sample_errors = 0;
  double duration_seconds = 0;
  bool processes_seen = false;                // the engine's processes were listed by NVML
  // The measured figure of each stage on the busiest GPU: the engine's processes' peak when
  // NVML listed them, else memory.used's peak less the baseline.
  uint64_t MeasuredBytes(Stage stage) const;
};

// Joins samples and stage marks into per-stage peaks and a bounded timeline. The stage only
// moves forward: a mark of an earlier stage than the current one is recorded but changes
// nothing. Samples before the first mark count as `startup`.
class Recorder {
 public:
  Recorder(std::vector<GpuInfo> gpus, const RecorderOptions& options = {});
  // `engine_pids`: the processes whose memory counts as the engine's (empty: none listed).
  void AddSample(const Reading& reading, const std::vector<uint32_t>& engine_pids = {});
  void Mark(StageMark mark);
  void Error(StageMark mark);
  void SampleFailed() { ++report_.sample_errors; }
  Stage stage() const { return current_; }
  // Bytes the recorder holds on the heap now (its vectors' capacities).
  size_t MemoryBytes() const;
  MonitorReport Finish(double seconds);

 private:
  void Push(double seconds, const std::vector<uint64_t>& used);
  RecorderOptions options_;
  MonitorReport report_;
  Stage current_ = Stage::kStartup;
  size_t n_ = 0;                      // GPUs
  std::vector<double> point_seconds_;
  std::vector<uint64_t> point_used_;  // points x GPUs
  uint64_t step_ = 1, pending_ = 0;   // samples per point; samples in the open point
  std::vector<uint64_t> scratch_;
};

// How `vramfit monitor` runs: a command started as a child (fork/exec, its stdout and stderr
// passed through unchanged and read line by line), or a process attached by pid.
struct MonitorOptions {
  std::vector<std::string> command;  // argv of the engine; empty: attach to `pid`
  uint32_t pid = 0;
  uint32_t interval_ms = 500;        // between samples (at least 1)
  double timeout_seconds = 0;        // 0: none; past it the child is stopped (SIGTERM, SIGKILL)
  double kill_grace_seconds = 5;     // between SIGTERM and SIGKILL
  // The child's stdout goes here (1: our stdout; 2: our stderr, for `--json` on stdout).
  int child_stdout_to = 1;
  // A signal number stored here (by the caller's SIGINT/SIGTERM handler) is taken (reset to 0)
  // and sent to the child's process group; with `pid`, it ends the monitoring instead.
  std::atomic<int>* pending_signal = nullptr;
  // Called after each sample (the CSV writer), on the monitoring thread.
  std::function<void(const Reading&)> on_sample;
  RecorderOptions recorder;
  ScanOptions scan;
};

struct MonitorRun {
  MonitorReport report;
  LogScan scan;            // the engine's output as the doctor read it
  int exit_code = 0;       // the child's; 128+N for a death by signal N; 124 after the timeout
  bool timed_out = false;
  int forwarded_signal = 0;  // the last signal passed on (0: none)
  bool attached = false;
};

// Runs `options.command` (or watches `options.pid`) until it ends, sampling `nvml` every
// interval. Fails only when the command cannot be started (kNotFound naming it) or the pid
// does not exist. The child's output is written to this process's fd 1 and 2: a caller whose
// stdout may close early ignores SIGPIPE (the vramfit command does).
Result<MonitorRun> MonitorCommand(Nvml& nvml, const MonitorOptions& options);

// The doctor's diagnosis of a run that failed, with the measured numbers added to `numbers`
// (measured_peak_used_bytes, measured_stage_bytes, gpu_total_bytes); nullopt when the engine's
// output shows no failure.
std::optional<Diagnosis> DiagnoseRun(const MonitorRun& run, const DoctorContext& context = {});

// nvidia-smi's `--query-gpu=timestamp,index,name,memory.used,memory.total --format=csv`:
// the header line, and one line per GPU of a reading (local time, MiB), each ending in "\n".
std::string CsvHeader();
std::string CsvRows(const Reading& reading, const std::vector<GpuInfo>& gpus);

// The report as text (a table of measured vs predicted per stage) and as JSON
// (schema vramfit.monitor/1). `predicted` and `diagnosis` may be null.
std::string RenderMonitorText(const MonitorRun& run, const PredictedStages* predicted,
                              const Diagnosis* diagnosis);
std::string RenderMonitorJson(const MonitorRun& run, const std::vector<std::string>& command,
                              const PredictedStages* predicted, const Diagnosis* diagnosis);

}  // namespace vramfit

#endif  // VRAMFIT_MONITOR_H_
