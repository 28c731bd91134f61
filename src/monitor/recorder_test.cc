// The monitor's pure parts without a process or a driver: the Recorder's per-stage peaks,
// marks and bounded timeline on synthetic readings, the plan's per-stage figures (from a Plan's
// JSON), the nvidia-smi CSV lines, and NVML's absence as a Status.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "vramfit/monitor.h"

namespace vramfit {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

Reading At(double seconds, std::vector<uint64_t> used) {
  Reading r;
  r.seconds = seconds;
  for (uint64_t u : used) r.gpus.push_back({u, 80 * kGiB, {}});
  return r;
}

StageMark MarkOf(double seconds, Stage stage) {
  StageMark m;
  m.seconds = seconds;
  m.stage = stage;
  m.engine = "vllm";
  return m;
}

std::vector<GpuInfo> TwoGpus() { return {{0, "A", 80 * kGiB}, {1, "B", 80 * kGiB}}; }

TEST(MonitorRecorder, PeaksPerStageAndGpu) {
  Recorder rec(TwoGpus());
  rec.AddSample(At(0.0, {1 * kGiB, 2 * kGiB}));
  rec.AddSample(At(0.1, {3 * kGiB, 2 * kGiB}));
  rec.Mark(MarkOf(0.15, Stage::kLoad));
  rec.AddSample(At(0.2, {9 * kGiB, 2 * kGiB}));
  rec.AddSample(At(0.3, {7 * kGiB, 5 * kGiB}));
  rec.Mark(MarkOf(0.35, Stage::kKvCache));
  rec.Mark(MarkOf(0.36, Stage::kLoad));  // an earlier stage: recorded, changes nothing
  rec.AddSample(At(0.4, {8 * kGiB, 2 * kGiB}));
  const MonitorReport r = rec.Finish(0.5);
  ASSERT_EQ(r.stages.size(), static_cast<size_t>(kStageCount));
  const StageMeasure& startup = r.stages[0];
  EXPECT_EQ(startup.samples, 2u);
  EXPECT_EQ(startup.used_peak_bytes, (std::vector<uint64_t>{3 * kGiB, 2 * kGiB}));
  const StageMeasure& load = r.stages[static_cast<int>(Stage::kLoad)];
  EXPECT_TRUE(load.reached);
  EXPECT_DOUBLE_EQ(load.start_seconds, 0.15);
  EXPECT_DOUBLE_EQ(load.end_seconds, 0.35);
  EXPECT_EQ(load.used_peak_bytes, (std::vector<uint64_t>{9 * kGiB, 5 * kGiB}));
  EXPECT_FALSE(r.stages[static_cast<int>(Stage::kProfile)].reached);
  const StageMeasure& kv = r.stages[static_cast<int>(Stage::kKvCache)];
  EXPECT_EQ(kv.samples, 1u);
  EXPECT_EQ(kv.used_peak_bytes[0], 8 * kGiB);
  EXPECT_DOUBLE_EQ(kv.end_seconds, 0.5);
  EXPECT_EQ(r.marks.size(), 3u);
  EXPECT_EQ(r.baseline_used_bytes, (std::vector<uint64_t>{1 * kGiB, 2 * kGiB}));
  // No process listed: the measured figure is memory.used's peak less the baseline, busiest GPU.
  EXPECT_FALSE(r.processes_seen);
  EXPECT_EQ(r.MeasuredBytes(Stage::kLoad), 8 * kGiB);
}

TEST(MonitorRecorder, EngineProcessesCountedByPid) {
  Recorder rec({{0, "A", 80 * kGiB}});
  Reading r = At(0, {10 * kGiB});
  r.gpus[0].processes = {{100, 6 * kGiB}, {101, 2 * kGiB}, {200, 1 * kGiB}};
  rec.AddSample(r, {100, 101});
  const MonitorReport rep = rec.Finish(1);
  EXPECT_TRUE(rep.processes_seen);
  EXPECT_EQ(rep.stages[0].process_peak_bytes[0], 8 * kGiB);
  EXPECT_EQ(rep.MeasuredBytes(Stage::kStartup), 8 * kGiB);
}

// Ten points at most: 100 samples merge into points of 16 samples (100 / 16 = 7 points), each
// the largest reading of its samples, timed by its first.
TEST(MonitorRecorder, TimelineMergesToTheCapExactly) {
  RecorderOptions o;
  o.max_points = 10;
  Recorder rec({{0, "A", 80 * kGiB}}, o);
  for (int i = 0; i < 100; ++i) rec.AddSample(At(i * 0.1, {static_cast<uint64_t>(i % 37)}));
  const MonitorReport r = rec.Finish(10);
  EXPECT_EQ(r.timeline_step_samples, 16);
  ASSERT_EQ(r.timeline.size(), 7u);
  for (size_t k = 0; k < r.timeline.size(); ++k) {
    uint64_t want = 0;
    for (size_t i = k * 16; i < std::min<size_t>(100, (k + 1) * 16); ++i) {
      want = std::max<uint64_t>(want, i % 37);
    }
    EXPECT_EQ(r.timeline[k].used_bytes[0], want) << "point " << k;
    EXPECT_DOUBLE_EQ(r.timeline[k].seconds, static_cast<double>(k * 16) * 0.1);
  }
}

// An hour at 100 ms holds what the first few thousand samples held.
TEST(MonitorRecorder, HourAt100msIsBounded) {
  Recorder rec(TwoGpus());
  size_t after_4096 = 0;
  for (int i = 0; i < 36000; ++i) {
    rec.AddSample(At(i * 0.1, {static_cast<uint64_t>(i), 1}));
    if (i == 4095) after_4096 = rec.MemoryBytes();
  }
  EXPECT_EQ(rec.MemoryBytes(), after_4096);
  EXPECT_LT(rec.MemoryBytes(), 64u * 1024);
  const MonitorReport r = rec.Finish(3600);
  EXPECT_LE(r.timeline.size(), 2048u);
  EXPECT_EQ(r.samples, 36000u);
  EXPECT_EQ(r.stages[0].used_peak_bytes[0], 35999u);
}

TEST(MonitorPredict, StagesFromPlanJson) {
  std::ifstream in(std::string(VRAMFIT_SOURCE_DIR) + "/tests/golden/plan_qwen3-8b_h100_auto.json");
  std::stringstream text;
  text << in.rdbuf();
  auto p = ReadPlanJson(text.str());
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->engine, "vllm@0.22");
  EXPECT_TRUE(p->fits);
  EXPECT_EQ(p->total_bytes, 85027979264u);
  const uint64_t ctx = 536870912, weights = 16391956480, act = 3422814208, non_torch = 150994944,
                 kv = 57621392507, graphs = 638582784;
  EXPECT_EQ(p->bytes[static_cast<int>(Stage::kStartup)], ctx);
  EXPECT_EQ(p->bytes[static_cast<int>(Stage::kLoad)], ctx + 16391956480u);
  EXPECT_EQ(p->bytes[static_cast<int>(Stage::kProfile)], ctx + weights + non_torch + act);
  EXPECT_EQ(p->bytes[static_cast<int>(Stage::kKvCache)], ctx + weights + non_torch + act + kv);
  EXPECT_EQ(p->bytes[static_cast<int>(Stage::kCudaGraph)],
            ctx + weights + non_torch + act + kv + graphs);
  // The plan's device_used_bytes is the same sum.
  EXPECT_EQ(p->bytes[static_cast<int>(Stage::kRuntime)], 78762611835u);
}

TEST(MonitorPredict, BadPlansNameTheProblem) {
  EXPECT_EQ(ReadPlanJson("not json").status().message(),
            "the plan is not JSON (expected the output of `vramfit plan --json`)");
  EXPECT_EQ(ReadPlanJson("[[[]]]").status().message(),
            "the plan is not a JSON object (expected the output of `vramfit plan --json`)");
  EXPECT_EQ(ReadPlanJson(R"({"schema":"vramfit.doctor/1"})").status().message(),
            "\"schema\": expected \"vramfit.plan/1\" (`vramfit plan --json`)");
  EXPECT_EQ(ReadPlanJson(R"({"schema":"vramfit.plan/1","gpus":[]})").status().message(),
            "\"gpus\": expected a non-empty array of objects");
  EXPECT_EQ(ReadPlanJson(R"({"schema":"vramfit.plan/1","gpus":[{"weights_bytes":-1}]})")
                .status()
                .message(),
            "\"gpus\"[0].weights_bytes: expected a byte count (a non-negative integer)");
}

TEST(MonitorPredict, FailingPlanPredictsNothingPastItsStage) {
  Plan plan;
  plan.engine = "vllm";
  plan.fits = false;
  plan.failure_stage = Stage::kKvCache;
  GpuPlan g;
  g.cuda_context_bytes = 1;
  g.weights_bytes = 10;
  g.kv_cache_bytes = 5;
  g.cudagraph_bytes = 2;
  plan.gpus.push_back(g);
  const PredictedStages p = PredictStages(plan);
  EXPECT_EQ(p.bytes[static_cast<int>(Stage::kKvCache)], 16u);
  EXPECT_EQ(p.bytes[static_cast<int>(Stage::kCudaGraph)], 0u);
  EXPECT_EQ(p.bytes[static_cast<int>(Stage::kRuntime)], 0u);
}

TEST(MonitorCsv, NvidiaSmiColumns) {
  EXPECT_EQ(CsvHeader(), "timestamp, index, name, memory.used [MiB], memory.total [MiB]\n");
  Reading r = At(0, {1536 * (uint64_t{1} << 20) + 5});
  r.gpus[0].total_bytes = 81559 * (uint64_t{1} << 20);
  const std::string rows = CsvRows(r, {{0, "NVIDIA H100 80GB HBM3", 0}});
  EXPECT_TRUE(std::regex_match(
      rows, std::regex(R"(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{3}, 0, NVIDIA H100 80GB HBM3, )"
                       R"(1536 MiB, 81559 MiB\n)")))
      << rows;
}

TEST(MonitorNvml, MissingLibraryIsNoDriver) {
  NvmlOptions o;
  o.library = "/nonexistent/libnvidia-ml.so.1";
  auto n = Nvml::Open(o);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), Code::kNotFound);
  EXPECT_EQ(n.status().message().rfind("no NVIDIA driver: /nonexistent/libnvidia-ml.so.1 could "
                                       "not be loaded (",
                                       0),
            0u)
      << n.status().message();
}

}  // namespace
}  // namespace vramfit
