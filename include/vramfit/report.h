// Renderers: inventories (and later plans and diagnoses) as text for people and JSON for
// scripts. JSON carries "schema": "vramfit.<command>/<major>"; sizes are integer bytes in
// JSON and GiB (2^30) in text.
#ifndef VRAMFIT_REPORT_H_
#define VRAMFIT_REPORT_H_

#include <string>
#include <string_view>
#include <vector>

#include "vramfit/advice.h"
#include "vramfit/catalog.h"
#include "vramfit/doctor.h"
#include "vramfit/fit.h"
#include "vramfit/inventory.h"
#include "vramfit/kv.h"

namespace vramfit {

struct InspectReportOptions {
  bool tensors = false;  // list every tensor (default: totals only)
};

// Text report of `vramfit inspect`.
std::string RenderInspectText(const Inventory& inv, const InspectReportOptions& options);
// JSON report of `vramfit inspect` (schema vramfit.inspect/1), newline-terminated.
std::string RenderInspectJson(const Inventory& inv, const InspectReportOptions& options);

// `vramfit models`: the catalog as a table, or JSON (schema vramfit.models/1).
std::string RenderModelsText(const std::vector<CatalogModel>& models);
std::string RenderModelsJson(const std::vector<CatalogModel>& models);

struct PlanReportOptions {
  bool explain = false;  // print each number's formula and inputs
};

// `vramfit plan` / `check`: the stage table, the verdict, the KV figures and the advice.
// What a what-if stands for, as one line ("what-if: GGUF Q4_K_M of Ollama's qwen3:8b, the GGUF
// file llama.cpp would make ..."): an Ollama library name, a .gguf file that is not here, or a
// checkpoint still to be quantized (Inventory::what_if); `model` is the model as given.
std::string WhatIfLine(const std::string& what_if, const std::string& model);

std::string RenderPlanText(const Plan& plan, const std::vector<Advice>& advice,
                           const PlanReportOptions& options);
// JSON (schema vramfit.plan/1) with the keys of docs/cli.md.
std::string RenderPlanJson(const Plan& plan, const std::vector<Advice>& advice,
                           const PlanReportOptions& options);

struct FitReportOptions {
  FitGoal goal = FitGoal::kContext;
};

// `vramfit fit`: the Pareto table, best first, and the chosen row's command; JSON (schema
// vramfit.fit/1) with best{}, options[] and nearest{} (when the goal cannot be met).
std::string RenderFitText(const FitResult& result, const FitReportOptions& options);
std::string RenderFitJson(const FitResult& result, const FitReportOptions& options);

// `vramfit fit MODEL --gpus-table`: longest context per catalog card and count.
struct GpusTableInfo {
  std::string model;          // as the user named it
  std::string engine_title;   // "vLLM"
  uint64_t plans = 0;         // plans evaluated
};
std::string RenderGpusTableText(const std::vector<GpusTableRow>& rows, const GpusTableInfo& info);
std::string RenderGpusTableJson(const std::vector<GpusTableRow>& rows, const GpusTableInfo& info);

// `vramfit gpus`: the GPU catalog as a table, or JSON (schema vramfit.gpus/1). `engines`: the
// modelled engines as people write them, named in the note on CUDA totals.
std::string RenderGpusText(const std::vector<GpuSpec>& gpus, std::string_view engines);
std::string RenderGpusJson(const std::vector<GpuSpec>& gpus);

// `vramfit kv`: what was asked (the model as the user named it, the engine "vllm@0.22" or ""
// for the engine-neutral figure) and the estimate.
struct KvReportInfo {
  std::string model;
  std::string engine;
  KvQuery query;
};
std::string RenderKvText(const KvEstimate& estimate, const KvReportInfo& info);
std::string RenderKvJson(const KvEstimate& estimate, const KvReportInfo& info);

// `vramfit doctor`: stage, cause, numbers, fixes and evidence; JSON (schema vramfit.doctor/1)
// with the keys of docs/cli.md (sizes in bytes).
std::string RenderDoctorText(const Diagnosis& diagnosis, const LogScan& scan);
std::string RenderDoctorJson(const Diagnosis& diagnosis, const LogScan& scan);

}  // namespace vramfit

#endif  // VRAMFIT_REPORT_H_
