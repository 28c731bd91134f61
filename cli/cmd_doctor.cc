// `vramfit doctor LOGFILE|- [--model MODEL] [--gpu NAME] [--json]`: reads an out-of-memory log
// (streamed, bounded memory) and says the stage, the cause and the fixes. Exit 0 when it
// diagnosed, 2 when it recognised nothing (naming the lines it could not place) or on bad input.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "commands.h"
#include "vramfit/doctor.h"
#include "vramfit/gpu.h"
#include "vramfit/inspect.h"
#include "vramfit/report.h"
#include "vramfit/report_html.h"

namespace vramfit::cli {


std::function<int()> SetupDoctor(CLI::App* app) {
  struct Flags {
    std::string log, model, gpu, gpu_memory, html;
    int64_t tp = 0;
    bool json = false;
  };
  auto f = std::make_shared<Flags>();
  app->add_option(
         "LOGFILE", f->log,
         "The log (vLLM, SGLang, llama.cpp, Ollama, LM Studio, TGI, transformers, the GPTQ/AWQ "
         "quantizers, PyTorch, nvidia-smi), or - for stdin")
      ->required();
  app->add_option(
      "--model", f->model,
      "The model of the run (checkpoint or catalog id): rebuilds and calibrates its plan");
  app->add_option("--gpu", f->gpu, "The GPU of the run (see `vramfit gpus`)");
  app->add_option("--gpu-memory", f->gpu_memory, "GPU memory as CUDA reports it, e.g. 24GiB");
  app->add_option("--tensor-parallel-size,--tp", f->tp,
                  "Tensor-parallel size of the run (default: from the log)");
  app->add_flag("--json", f->json, "Print JSON (schema vramfit.doctor/1)");
  app->add_option("--html", f->html, "Also write a self-contained HTML report to FILE (-: stdout)");
  app->footer(
      "  vramfit doctor vllm.log\n  docker logs vllm 2>&1 | vramfit doctor - --model Qwen/Qwen3-8B "
      "--gpu 4090");
  return [f]() {
    auto fail = [](const std::string& m) {
      fmt::print(Err(), "vramfit doctor: {}\n", m);
      return kExitUsage;
    };
    std::ifstream file;
    std::istream* in = &In();
    if (f->log != "-") {
      std::error_code ec;
      if (std::filesystem::is_directory(f->log, ec)) {
        return fail(fmt::format("{}: a directory, not a log file (give the file the engine's "
                                "output went to, or - to read standard input)", f->log));
      }
      // A device (/dev/zero, /dev/urandom) never ends: refused rather than read forever.
      if (std::filesystem::is_character_file(f->log, ec) ||
          std::filesystem::is_block_file(f->log, ec)) {
        return fail(fmt::format("{}: a device, not a log file (give the file the engine's "
                                "output went to, or - to read standard input)", f->log));
      }
      file.open(f->log, std::ios::binary);
      if (!file)
        return fail(fmt::format("{}: cannot open the log (no such file or not readable)", f->log));
      in = &file;
    }
    auto scan = ScanLog(*in);
    if (!scan.ok()) return fail(fmt::format("{}: {}", f->log, scan.status().message()));
    if (scan->bytes == 0)
      return fail(fmt::format("{}: the log is empty", f->log == "-" ? "stdin" : f->log));
    DoctorContext ctx;
    std::optional<Inventory> inv;
    if (!f->model.empty()) {
      auto m = InspectModel(f->model, ModelOptions());
      if (!m.ok()) return fail(m.status().message());
      inv = std::move(*m);
      ctx.model = &*inv;
    }
    if (!f->gpu.empty() || !f->gpu_memory.empty()) {
      auto g = ResolveGpu(f->gpu, f->gpu_memory);
      if (!g.ok()) return fail(g.status().message());
      ctx.gpu = *g;
    }
    if (f->tp < 0) return fail("--tensor-parallel-size must be positive");
    ctx.tensor_parallel_size = f->tp;
    const Diagnosis d = Diagnose(*scan, ctx);
    if (!f->html.empty()) {
      Status s = WriteHtmlFile(f->html, RenderDoctorHtml(d, *scan));
      if (!s.ok()) return fail(s.message());
      if (f->html == "-") return d.found ? kExitOk : kExitUsage;
    }
    const std::string out = f->json ? RenderDoctorJson(d, *scan) : RenderDoctorText(d, *scan);
    if (!d.found && !f->json) {
      std::fwrite(out.data(), 1, out.size(), Err());
      return kExitUsage;
    }
    std::fwrite(out.data(), 1, out.size(), Out());
    return d.found ? kExitOk : kExitUsage;
  };
}

}  // namespace vramfit::cli
