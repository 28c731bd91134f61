// `vramfit inspect MODEL [--json] [--tensors] [--synthesize]`: what a checkpoint holds.
#include <fmt/format.h>

#include <cstdio>

#include "commands.h"
#include "vramfit/inspect.h"
#include "vramfit/report.h"
#include "vramfit/report_html.h"

namespace vramfit::cli {

std::function<int()> SetupInspect(CLI::App* app) {
  struct Flags {
    std::string model, html;
    bool json = false;
    bool tensors = false;
    bool synthesize = false;
    WhatIfFlags what_if;
  };
  auto f = std::make_shared<Flags>();
  app->add_option("MODEL", f->model,
                  "A checkpoint directory (config.json + safetensors), a .safetensors file, a "
                  "config.json, a catalog id (see `vramfit models`), or a Hugging Face Hub repo "
                  "org/name[@revision]; local paths win, then catalog ids")
      ->required();
  app->add_flag("--json", f->json, "Print JSON (schema vramfit.inspect/1) instead of text");
  app->add_option("--html", f->html, "Also write a self-contained HTML report to FILE (-: stdout)");
  app->add_flag("--tensors", f->tensors,
                "Also list every tensor with its dtype, shape, bytes and role");
  app->add_flag(
      "--synthesize", f->synthesize,
      "Build the inventory from config.json alone even when safetensors files are present");
  AddWhatIfFlags(app, &f->what_if);
  return [f]() {
    InspectOptions options = ModelOptions();
    options.force_synthesize = f->synthesize;
    if (Status s = ApplyWhatIfFlags(f->what_if, &options); !s.ok()) {
      fmt::print(stderr, "vramfit inspect: {}\n", s.message());
      return kExitUsage;
    }
    auto inv = InspectModel(f->model, options);
    if (!inv.ok()) {
      fmt::print(Err(), "vramfit inspect: {}\n", inv.status().message());
      return kExitUsage;
    }
    if (!f->html.empty()) {
      Status s = WriteHtmlFile(f->html, RenderInspectHtml(*inv));
      if (!s.ok()) {
        fmt::print(Err(), "vramfit inspect: {}\n", s.message());
        return kExitUsage;
      }
      if (f->html == "-") return kExitOk;
    }
    InspectReportOptions report;
    report.tensors = f->tensors;
    const std::string out =
        f->json ? RenderInspectJson(*inv, report) : RenderInspectText(*inv, report);
    std::fwrite(out.data(), 1, out.size(), Out());
    return kExitOk;
  };
}

}  // namespace vramfit::cli
