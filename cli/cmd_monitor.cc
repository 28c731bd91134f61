// `vramfit monitor [--interval MS] [--plan PLAN.json | --model M --gpu G [engine flags]]
// [--json] [--csv FILE] [--timeout S] (-- COMMAND... | --pid N)`: runs the engine (or watches a
// process), samples NVML, marks the stages its output reaches, and compares each stage's peak
// with the plan. The exit code is the command's (128+N for a death by signal N, 124 after
// --timeout); 2 for a usage error or no NVIDIA driver.
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>

#include "commands.h"
#include "engine_flags.h"
#include "vramfit/gpu.h"
#include "vramfit/inspect.h"
#include "vramfit/monitor.h"

namespace vramfit::cli {
namespace {

std::vector<std::string>& MonitorTail() {
  thread_local std::vector<std::string> command;  // per thread: RunCaptured
  return command;
}

std::atomic<int> g_pending_signal{0};

// A plan's JSON is a few KiB; --explain's formulas and the advice stay far below this.
constexpr off_t kMaxPlanBytes = 16 << 20;

extern "C" void OnSignal(int sig) { g_pending_signal.store(sig); }

// SIGINT and SIGTERM recorded for the monitor loop (no SA_RESTART: poll wakes at once), SIGPIPE
// ignored (a closed stdout must not end the monitor before its child); restored on scope exit.
class SignalScope {
 public:
  SignalScope() {
    struct sigaction sa {};
    sa.sa_handler = OnSignal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old_pipe_);
  }
  ~SignalScope() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
    sigaction(SIGPIPE, &old_pipe_, nullptr);
  }

 private:
  struct sigaction old_int_ {}, old_term_ {}, old_pipe_ {};
};

}  // namespace

void SetMonitorCommand(std::vector<std::string> command) { MonitorTail() = std::move(command); }

std::function<int()> SetupMonitor(CLI::App* app) {
  struct Flags {
    int64_t interval_ms = 500;
    double timeout = 0;
    int64_t pid = 0;
    std::string plan, model, gpu, gpu_memory, engine, csv, html;
    bool json = false;
    EngineFlagSlots engine_flags;
  };
  auto f = std::make_shared<Flags>();
  app->add_option("--interval", f->interval_ms, "Milliseconds between samples (default 500)");
  app->add_option("--plan", f->plan, "A plan to compare with (`vramfit plan ... --json` output)");
  app->add_option("--model", f->model,
                  "The model the command serves: plans it (with --gpu and the engine flags) "
                  "and gives the doctor the model on a failure");
  app->add_option("--gpu", f->gpu, "The GPU of the run (see `vramfit gpus`), with --model");
  app->add_option("--gpu-memory", f->gpu_memory, "GPU memory as CUDA reports it, e.g. 24GiB");
  app->add_option("--engine", f->engine, EngineOptionHelp());
  app->add_flag("--json", f->json,
                "Print the report as JSON on stdout (schema vramfit.monitor/1); the command's "
                "stdout then goes to stderr");
  app->add_option("--csv", f->csv,
                  "Append every sample to FILE in nvidia-smi's --query-gpu CSV format "
                  "(timestamp, index, name, memory.used, memory.total)");
  app->add_option("--timeout", f->timeout,
                  "Seconds before the command is stopped (SIGTERM, then SIGKILL); exit 124");
  app->add_option("--pid", f->pid, "Watch a running process (and its children) instead");
  app->add_option("--html", f->html, "Not available yet (the HTML reports do not exist)");
  AddEngineFlags(app, &f->engine_flags);
  app->footer(
      "  vramfit monitor --model Qwen/Qwen3-8B --gpu h100 -- vllm serve Qwen/Qwen3-8B\n"
      "  vramfit monitor --plan plan.json --csv gpu.csv -- python -m sglang.launch_server ...\n"
      "  vramfit monitor --pid 4242 --timeout 600\n"
      "Needs the NVIDIA driver (libnvidia-ml.so.1; VRAMFIT_NVML_LIBRARY names another path).");
  return [f]() {
    auto fail = [](const std::string& m) {
      fmt::print(stderr, "vramfit monitor: {}\n", m);
      return kExitUsage;
    };
    const std::vector<std::string> command = MonitorTail();
    if (!f->html.empty()) {
      return fail("--html is not available yet (no HTML reports exist); use --json or --csv");
    }
    if (f->pid != 0 && !command.empty()) {
      return fail("give either --pid N or a command after --, not both");
    }
    if (f->pid == 0 && command.empty()) {
      return fail("no command: give the engine's command after -- (vramfit monitor -- vllm "
                  "serve MODEL ...), or --pid N to watch a running process");
    }
    if (f->pid < 0 || f->pid > 4194304) return fail(fmt::format("--pid {}: not a pid", f->pid));
    if (f->interval_ms < 1 || f->interval_ms > 3600000) {
      return fail(fmt::format("--interval {}: expected 1 to 3600000 milliseconds",
                              f->interval_ms));
    }
    if (!(f->timeout >= 0) || f->timeout > 1e7) {
      return fail("--timeout: expected a number of seconds (0: none)");
    }
    if (!f->plan.empty() && !f->model.empty()) {
      return fail("give either --plan PLAN.json or --model with --gpu, not both");
    }
    // The prediction: a plan file, or the plan of --model on --gpu with the engine flags.
    std::optional<PredictedStages> predicted;
    std::optional<Inventory> inv;
    DoctorContext ctx;
    if (!f->plan.empty()) {
      // A regular file of plan size only: a FIFO or a device would block or never end.
      struct stat st {};
      if (stat(f->plan.c_str(), &st) != 0) {
        return fail(fmt::format("{}: cannot open the plan", f->plan));
      }
      if (!S_ISREG(st.st_mode) || st.st_size > kMaxPlanBytes) {
        return fail(fmt::format("{}: not a plan (expected a `vramfit plan --json` file of at "
                                "most {} bytes)",
                                f->plan, kMaxPlanBytes));
      }
      std::ifstream in(f->plan, std::ios::binary);
      if (!in) return fail(fmt::format("{}: cannot open the plan", f->plan));
      std::ostringstream text;
      text << in.rdbuf();
      auto p = ReadPlanJson(text.str());
      if (!p.ok()) return fail(fmt::format("{}: {}", f->plan, p.status().message()));
      predicted = *p;
    } else if (!f->model.empty()) {
      auto chosen = ReadEngineFlags(f->engine, f->engine_flags);
      if (!chosen.ok()) return fail(chosen.status().message());
      auto gpu = ResolveGpu(f->gpu, f->gpu_memory);
      if (!gpu.ok()) return fail(gpu.status().message());
      auto m = InspectModel(f->model, {});
      if (!m.ok()) return fail(m.status().message());
      inv = std::move(*m);
      auto model = chosen->engine->prepare(*inv);
      if (!model.ok()) return fail(model.status().message());
      auto plan = (*model)->MakePlan(*gpu, chosen->settings);
      if (!plan.ok()) return fail(plan.status().message());
      predicted = PredictStages(*plan);
      ctx.model = &*inv;
      ctx.gpu = *gpu;
      ctx.tensor_parallel_size = chosen->settings.tensor_parallel_size;
    } else if (!f->gpu.empty() || !f->gpu_memory.empty()) {
      return fail("--gpu needs --model (or give --plan PLAN.json)");
    }
    auto nvml = Nvml::Open();
    if (!nvml.ok()) return fail(nvml.status().message());
    std::FILE* csv = nullptr;
    if (!f->csv.empty()) {
      csv = std::fopen(f->csv.c_str(), "ae");  // "e": close-on-exec, the engine never holds it
      if (!csv) return fail(fmt::format("{}: cannot open for writing", f->csv));
      const std::string header = CsvHeader();
      std::fwrite(header.data(), 1, header.size(), csv);
    }
    MonitorOptions o;
    o.command = command;
    o.pid = static_cast<uint32_t>(f->pid);
    o.interval_ms = static_cast<uint32_t>(f->interval_ms);
    o.timeout_seconds = f->timeout;
    o.child_stdout_to = f->json ? 2 : 1;
    o.pending_signal = &g_pending_signal;
    const std::vector<GpuInfo> gpus = (*nvml)->gpus();
    if (csv) {
      o.on_sample = [csv, &gpus](const Reading& r) {
        const std::string rows = CsvRows(r, gpus);
        std::fwrite(rows.data(), 1, rows.size(), csv);
        std::fflush(csv);
      };
    }
    std::fflush(stdout);
    g_pending_signal.store(0);
    Result<MonitorRun> run = Status::Ok();
    {
      SignalScope signals;
      run = MonitorCommand(**nvml, o);
    }
    if (csv) std::fclose(csv);
    if (!run.ok()) return fail(run.status().message());
    const std::optional<Diagnosis> diagnosis = DiagnoseRun(*run, ctx);
    const PredictedStages* p = predicted ? &*predicted : nullptr;
    const Diagnosis* d = diagnosis ? &*diagnosis : nullptr;
    if (f->json) {
      const std::string out = RenderMonitorJson(*run, command, p, d);
      std::fwrite(out.data(), 1, out.size(), stdout);
    } else {
      // The command's own output holds stdout; the report goes to stderr after it.
      const std::string out = RenderMonitorText(*run, p, d);
      std::fwrite(out.data(), 1, out.size(), stderr);
    }
    return run->exit_code;
  };
}

}  // namespace vramfit::cli
