// HTML renderers: each report of `plan`, `check`, `fit`, `inspect` and `doctor` as one
// self-contained page (inline CSS, script and SVG drawn here; nothing fetched, works from
// file://). Every picture is drawn from the JSON the same command prints with --json, which the
// page carries in <script type="application/json" id="vramfit-json">, and every bar names the
// JSON number it draws (data-key) and its bytes (data-bytes), so a reader or a test can check
// one against the other. Strings from inputs (model names, log lines) are HTML-escaped.
#ifndef VRAMFIT_REPORT_HTML_H_
#define VRAMFIT_REPORT_HTML_H_

#include <string>
#include <string_view>
#include <vector>

#include "vramfit/advice.h"
#include "vramfit/doctor.h"
#include "vramfit/fit.h"
#include "vramfit/inventory.h"
#include "vramfit/plan.h"
#include "vramfit/report.h"

namespace vramfit {

// `plan` / `check`: per-GPU stacked stage bars against the budget and total lines, the
// start-up step chart, the stage table, the formulas (--explain) in a table and on hover, and
// the advice. Embeds the JSON of `plan --json --explain`.
std::string RenderPlanHtml(const Plan& plan, const std::vector<Advice>& advice);

// `fit`: the context-vs-concurrency curve of the options with the chosen one marked, and the
// options' table with their commands. Embeds the JSON of `fit --json`.
std::string RenderFitHtml(const FitResult& result, const FitReportOptions& options);

// `inspect`: bytes by component and by dtype, the quantization and the audit's findings.
// Embeds the JSON of `inspect --json`.
std::string RenderInspectHtml(const Inventory& inv);

// `doctor`: the stage and cause, the log's memory numbers against the plan's, the fixes and
// the evidence lines. Embeds the JSON of `doctor --json`.
std::string RenderDoctorHtml(const Diagnosis& diagnosis, const LogScan& scan);

// The files of web/ embedded at build time (the reports' report.css and report.js, the local
// page's index.html and app.js), by their path under web/; empty for any other path.
std::string_view WebAsset(std::string_view path);

}  // namespace vramfit

#endif  // VRAMFIT_REPORT_HTML_H_
