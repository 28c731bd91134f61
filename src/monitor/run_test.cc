// MonitorCommand end to end without a GPU: the fake NVML (tests/monitor/fake_nvml.cc) replays a
// scripted trace whose phase the fake engine (tests/monitor/fake_engine.sh) sets while it prints
// real vLLM, SGLang and llama.cpp start-up lines. Stage marks and per-stage peaks are checked
// exactly; also a crash, a timeout, Ctrl-C passed on, a command that cannot start, an attached
// pid, and the process-list fallback of an old driver.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "vramfit/monitor.h"

namespace vramfit {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kMiB = uint64_t{1} << 20;
const std::string kDir = std::string(VRAMFIT_SOURCE_DIR) + "/tests/monitor/";

// The fake NVML on `name`'s trace, its phase file fresh for this test.
std::unique_ptr<Nvml> FakeNvml(const std::string& name, const char* library = VRAMFIT_FAKE_NVML) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string phase = (std::filesystem::temp_directory_path() /
                             (std::string("vramfit-phase-") + info->name() + "-" +
                              std::to_string(getpid())))
                                .string();
  std::filesystem::remove(phase);
  setenv("VRAMFIT_FAKE_NVML_TRACE", (kDir + name + ".trace").c_str(), 1);
  setenv("VRAMFIT_FAKE_NVML_PHASE", phase.c_str(), 1);
  unsetenv("VRAMFIT_FAKE_NVML_INIT_ERROR");
  NvmlOptions o;
  o.library = library;
  auto n = Nvml::Open(o);
  EXPECT_TRUE(n.ok()) << n.status().message();
  return n.ok() ? std::move(*n) : nullptr;
}

MonitorOptions Engine(const std::string& schedule) {
  MonitorOptions o;
  o.command = {"bash", kDir + "fake_engine.sh", kDir + schedule + ".schedule"};
  o.interval_ms = 10;
  o.child_stdout_to = 2;  // keep the test's stdout clean
  return o;
}

std::vector<std::string> StagesMarked(const MonitorReport& r) {
  std::vector<std::string> v;
  for (const StageMark& m : r.marks) v.push_back(StageName(m.stage));
  return v;
}

uint64_t UsedPeak(const MonitorReport& r, Stage s, size_t gpu = 0) {
  return r.stages[static_cast<int>(s)].used_peak_bytes.at(gpu);
}
uint64_t ProcessPeak(const MonitorReport& r, Stage s, size_t gpu = 0) {
  return r.stages[static_cast<int>(s)].process_peak_bytes.at(gpu);
}

TEST(MonitorRun, VllmStagesAndPeaks) {
  auto nvml = FakeNvml("vllm");
  ASSERT_TRUE(nvml);
  ASSERT_EQ(nvml->gpus().size(), 2u);
  EXPECT_EQ(nvml->gpus()[1].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(nvml->gpus()[0].total_bytes, 85520809984u);
  uint64_t sampled = 0;
  MonitorOptions o = Engine("vllm");
  o.on_sample = [&](const Reading& r) {
    ++sampled;
    EXPECT_EQ(r.gpus.size(), 2u);
  };
  auto run = MonitorCommand(*nvml, o);
  ASSERT_TRUE(run.ok()) << run.status().message();
  const MonitorReport& r = run->report;
  EXPECT_EQ(run->exit_code, 0);
  EXPECT_FALSE(run->timed_out);
  EXPECT_EQ(StagesMarked(r), (std::vector<std::string>{"load", "profile", "kv_cache",
                                                       "cudagraph", "warmup", "runtime"}));
  EXPECT_EQ(r.marks[0].event, "load_begin");
  EXPECT_EQ(r.marks[0].line, 2u);
  EXPECT_EQ(r.marks[2].event, "kv_available");  // read from stderr
  EXPECT_EQ(sampled, r.samples);
  EXPECT_EQ(r.baseline_used_bytes, (std::vector<uint64_t>{512 * kMiB, 1536 * kMiB}));
  EXPECT_EQ(UsedPeak(r, Stage::kStartup), 512 * kMiB);
  EXPECT_EQ(UsedPeak(r, Stage::kLoad), 16 * kGiB);
  EXPECT_EQ(UsedPeak(r, Stage::kProfile), 20 * kGiB);
  EXPECT_EQ(UsedPeak(r, Stage::kKvCache), 38 * kGiB);
  EXPECT_EQ(UsedPeak(r, Stage::kCudaGraph), 39 * kGiB);
  EXPECT_EQ(UsedPeak(r, Stage::kWarmup), 39 * kGiB + 512 * kMiB);
  // Runtime holds the warm-up's level until the engine's memory settles.
  EXPECT_EQ(UsedPeak(r, Stage::kRuntime), 39 * kGiB + 512 * kMiB);
  // The engine's own processes: the child on GPU 0; GPU 1's process is someone else's.
  EXPECT_TRUE(r.processes_seen);
  EXPECT_EQ(ProcessPeak(r, Stage::kStartup), 0u);
  EXPECT_EQ(ProcessPeak(r, Stage::kLoad), 15 * kGiB + 512 * kMiB);
  EXPECT_EQ(ProcessPeak(r, Stage::kKvCache), 37 * kGiB + 512 * kMiB);
  EXPECT_EQ(ProcessPeak(r, Stage::kWarmup), 39 * kGiB);
  for (int s = 0; s < kStageCount; ++s) {
    EXPECT_EQ(r.stages[s].used_peak_bytes[1], 1536 * kMiB);
    EXPECT_EQ(r.stages[s].process_peak_bytes[1], 0u);
  }
  EXPECT_EQ(r.MeasuredBytes(Stage::kCudaGraph), 38 * kGiB + 512 * kMiB);
  // The timeline holds every sample (far below the cap): each scripted level of GPU 0 in order.
  ASSERT_EQ(r.timeline.size(), r.samples);
  std::vector<uint64_t> levels;
  for (const TimelinePoint& p : r.timeline) {
    if (levels.empty() || levels.back() != p.used_bytes[0]) levels.push_back(p.used_bytes[0]);
  }
  EXPECT_EQ(levels, (std::vector<uint64_t>{512 * kMiB, 16 * kGiB, 20 * kGiB, 38 * kGiB,
                                           39 * kGiB, 39 * kGiB + 512 * kMiB,
                                           39 * kGiB + 256 * kMiB}));
  EXPECT_TRUE(r.errors.empty());
  EXPECT_FALSE(DiagnoseRun(*run).has_value());
  EXPECT_EQ(run->scan.engines.front(), "vllm");
}

TEST(MonitorRun, SglangStagesAndPeaks) {
  auto nvml = FakeNvml("sglang");
  ASSERT_TRUE(nvml);
  auto run = MonitorCommand(*nvml, Engine("sglang"));
  ASSERT_TRUE(run.ok()) << run.status().message();
  const MonitorReport& r = run->report;
  EXPECT_EQ(run->exit_code, 0);
  // The doctor's SGLang milestones: "Load weight begin" opens load; weights loaded opens
  // kv_cache; "KV Cache is allocated" opens cudagraph; the capture's end opens runtime.
  EXPECT_EQ(StagesMarked(r),
            (std::vector<std::string>{"load", "kv_cache", "cudagraph", "runtime"}));
  EXPECT_EQ(UsedPeak(r, Stage::kStartup), 512 * kMiB);  // the CUDA context before the load
  EXPECT_EQ(UsedPeak(r, Stage::kLoad), 62 * kGiB);
  EXPECT_EQ(UsedPeak(r, Stage::kKvCache), 71 * kGiB);
  EXPECT_EQ(UsedPeak(r, Stage::kCudaGraph), 72 * kGiB);
  EXPECT_EQ(UsedPeak(r, Stage::kRuntime), 72 * kGiB);
  EXPECT_EQ(ProcessPeak(r, Stage::kCudaGraph), 71 * kGiB + 512 * kMiB);
}

TEST(MonitorRun, LlamaCppStagesAndPeaks) {
  auto nvml = FakeNvml("llama_cpp");
  ASSERT_TRUE(nvml);
  auto run = MonitorCommand(*nvml, Engine("llama_cpp"));
  ASSERT_TRUE(run.ok()) << run.status().message();
  const MonitorReport& r = run->report;
  EXPECT_EQ(StagesMarked(r), (std::vector<std::string>{"load", "kv_cache", "runtime"}));
  EXPECT_EQ(UsedPeak(r, Stage::kStartup), 300 * kMiB);
  EXPECT_EQ(UsedPeak(r, Stage::kLoad), 5 * kGiB + 512 * kMiB);
  EXPECT_EQ(UsedPeak(r, Stage::kKvCache), 7 * kGiB + 512 * kMiB);
  EXPECT_EQ(UsedPeak(r, Stage::kRuntime), 8 * kGiB);
  EXPECT_EQ(ProcessPeak(r, Stage::kRuntime), 7 * kGiB + 768 * kMiB);
}

TEST(MonitorRun, CrashAfterOomIsDiagnosedWithTheMeasuredNumbers) {
  auto nvml = FakeNvml("crash");
  ASSERT_TRUE(nvml);
  auto run = MonitorCommand(*nvml, Engine("crash"));
  ASSERT_TRUE(run.ok()) << run.status().message();
  const MonitorReport& r = run->report;
  EXPECT_EQ(run->exit_code, 128 + SIGSEGV);
  EXPECT_EQ(StagesMarked(r), (std::vector<std::string>{"load", "profile"}));
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].event, "torch_oom");
  EXPECT_EQ(r.errors[0].stage, Stage::kProfile);
  const uint64_t peak = static_cast<uint64_t>(23.4 * kGiB);  // as the fake reads "23.4GiB"
  EXPECT_EQ(UsedPeak(r, Stage::kProfile), peak);
  auto d = DiagnoseRun(*run);
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(d->found);
  EXPECT_EQ(d->stage, "profile");
  EXPECT_EQ(d->numbers.at("measured_peak_used_bytes"), static_cast<double>(peak));
  EXPECT_EQ(d->numbers.at("measured_stage_bytes"), static_cast<double>(23 * kGiB));
  EXPECT_EQ(d->numbers.at("measured_gpu_total_bytes"), 25255149568.0);
  const std::string text = RenderMonitorText(*run, nullptr, &*d);
  EXPECT_NE(text.find("killed by signal 11"), std::string::npos) << text;
  EXPECT_NE(text.find("diagnosis (vramfit doctor on the engine's output):"), std::string::npos);
}

TEST(MonitorRun, TimeoutStopsANeverEndingChild) {
  auto nvml = FakeNvml("vllm");
  ASSERT_TRUE(nvml);
  MonitorOptions o = Engine("hang");
  o.timeout_seconds = 0.4;
  o.kill_grace_seconds = 0.5;
  const auto t0 = std::chrono::steady_clock::now();
  auto run = MonitorCommand(*nvml, o);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_TRUE(run->timed_out);
  EXPECT_EQ(run->exit_code, 124);
  EXPECT_LT(took, 1.5);
  EXPECT_EQ(StagesMarked(run->report), (std::vector<std::string>{"load"}));
}

TEST(MonitorRun, InterruptIsPassedToTheChild) {
  auto nvml = FakeNvml("vllm");
  ASSERT_TRUE(nvml);
  std::atomic<int> pending{0};
  MonitorOptions o = Engine("interrupt");
  o.pending_signal = &pending;
  o.timeout_seconds = 5;  // a safety net: the test fails on 124, never hangs
  std::thread press([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    pending.store(SIGINT);
  });
  auto run = MonitorCommand(*nvml, o);
  press.join();
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->forwarded_signal, SIGINT);
  EXPECT_FALSE(run->timed_out);
  EXPECT_EQ(run->exit_code, 42);  // the child's own exit code on SIGINT
}

TEST(MonitorRun, CommandThatCannotStart) {
  auto nvml = FakeNvml("vllm");
  ASSERT_TRUE(nvml);
  MonitorOptions o;
  o.command = {"/nonexistent/vllm", "serve"};
  auto run = MonitorCommand(*nvml, o);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().message(), "cannot run /nonexistent/vllm: No such file or directory");
}

TEST(MonitorRun, AttachWatchesAPidUntilItEnds) {
  auto nvml = FakeNvml("vllm");
  ASSERT_TRUE(nvml);
  const pid_t pid = fork();
  if (pid == 0) {
    execlp("sleep", "sleep", "0.3", static_cast<char*>(nullptr));
    _exit(127);
  }
  MonitorOptions o;
  o.pid = static_cast<uint32_t>(pid);
  o.interval_ms = 20;
  o.timeout_seconds = 3;
  auto run = MonitorCommand(*nvml, o);
  waitpid(pid, nullptr, 0);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_TRUE(run->attached);
  EXPECT_FALSE(run->timed_out);
  EXPECT_TRUE(run->report.marks.empty());
  EXPECT_GE(run->report.samples, 5u);
  MonitorOptions gone;
  gone.pid = 4194303;  // above any pid the kernel hands out by default
  EXPECT_EQ(MonitorCommand(*nvml, gone).status().message(), "--pid 4194303: no such process");
}

TEST(MonitorNvml, OldDriverListsProcessesWithTheV1Call) {
  auto nvml = FakeNvml("sglang", VRAMFIT_FAKE_NVML_V1);
  ASSERT_TRUE(nvml);
  auto run = MonitorCommand(*nvml, Engine("sglang"));
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(ProcessPeak(run->report, Stage::kCudaGraph), 71 * kGiB + 512 * kMiB);
}

TEST(MonitorNvml, DriverThatDoesNotInitialise) {
  setenv("VRAMFIT_FAKE_NVML_INIT_ERROR", "9", 1);
  NvmlOptions o;
  o.library = VRAMFIT_FAKE_NVML;
  auto n = Nvml::Open(o);
  unsetenv("VRAMFIT_FAKE_NVML_INIT_ERROR");
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), Code::kUnsupported);
  EXPECT_EQ(n.status().message(), std::string("no NVIDIA driver: ") + VRAMFIT_FAKE_NVML +
                                      " loaded but did not initialise: Driver Not Loaded "
                                      "(NVML error 9)");
}

TEST(MonitorNvml, LibraryFromTheEnvironment) {
  setenv("VRAMFIT_NVML_LIBRARY", "/nonexistent/nvml-from-env.so", 1);
  auto n = Nvml::Open();
  unsetenv("VRAMFIT_NVML_LIBRARY");
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("/nonexistent/nvml-from-env.so"), std::string::npos);
}

}  // namespace
}  // namespace vramfit
