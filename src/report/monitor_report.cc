// `vramfit monitor`'s report as text (the stage table: measured peak vs the plan's figure, the
// stage marks, the failure lines) and as JSON (vramfit.monitor/1, integer bytes throughout).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "core/text.h"
#include "core/units.h"
#include "report/json_text.h"
#include "vramfit/monitor.h"
#include "vramfit/report.h"

namespace vramfit {
namespace {

std::string Gib(uint64_t bytes) {
  return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / core::kGiBf);
}

std::string SignedGib(int64_t bytes) {
  return fmt::format("{:+.2f} GiB", static_cast<double>(bytes) / core::kGiBf);
}

uint64_t MaxOf(const std::vector<uint64_t>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

std::string Ending(const MonitorRun& run) {
  if (run.attached) {
    if (run.timed_out) return "watched until the timeout";
    if (run.forwarded_signal) return "watched until interrupted";
    return "watched until the process ended";
  }
  if (run.timed_out) return "stopped at the timeout (exit 124)";
  if (run.exit_code > 128) return fmt::format("killed by signal {}", run.exit_code - 128);
  return fmt::format("exited {}", run.exit_code);
}

std::string MarkLine(const StageMark& m) {
  std::string text = m.text.size() > 160 ? std::string(core::Utf8Prefix(m.text, 160)) + "..."
                                         : m.text;
  return fmt::format("  {:>8.2f} s  {:<10} {} line {}: {}\n", m.seconds, StageName(m.stage),
                     m.engine, m.line, core::Printable(text));
}

}  // namespace

std::string RenderMonitorText(const MonitorRun& run, const PredictedStages* predicted,
                              const Diagnosis* diagnosis) {
  const MonitorReport& r = run.report;
  std::string out = fmt::format("monitor: {} after {:.1f} s ({} samples", Ending(run),
                                r.duration_seconds, r.samples);
  if (r.sample_errors) out += fmt::format(", {} failed", r.sample_errors);
  out += ")\n";
  for (size_t i = 0; i < r.gpus.size(); ++i) {
    uint64_t peak = 0;
    for (const StageMeasure& m : r.stages) {
      if (i < m.used_peak_bytes.size()) peak = std::max(peak, m.used_peak_bytes[i]);
    }
    const uint64_t base = i < r.baseline_used_bytes.size() ? r.baseline_used_bytes[i] : 0;
    out += fmt::format("GPU {}  {}  {} total, {} used before the start, {} at the most\n",
                       r.gpus[i].index, core::Printable(r.gpus[i].name), Gib(r.gpus[i].total_bytes),
                       Gib(base), Gib(peak));
  }
  const char* measured = r.processes_seen ? "engine peak" : "used - before";
  out += fmt::format("\n{:<10} {:>9} {:>8} {:>13} {:>13}", "stage", "from", "samples",
                     "GPU used peak", measured);
  if (predicted) out += fmt::format(" {:>13} {:>13}", "predicted", "difference");
  out += "\n";
  for (const StageMeasure& m : r.stages) {
    if (!m.reached) continue;
    const uint64_t got = r.MeasuredBytes(m.stage);
    out += fmt::format("{:<10} {:>7.2f} s {:>8} {:>13} {:>13}", StageName(m.stage),
                       m.start_seconds, m.samples, Gib(MaxOf(m.used_peak_bytes)), Gib(got));
    if (predicted) {
      const uint64_t want = predicted->bytes[static_cast<int>(m.stage)];
      if (want == 0) {
        out += fmt::format(" {:>13} {:>13}", "-", "-");
      } else {
        out += fmt::format(" {:>13} {:>13}", Gib(want),
                           SignedGib(static_cast<int64_t>(got) - static_cast<int64_t>(want)));
      }
    }
    out += "\n";
  }
  if (predicted) {
    out += fmt::format("(predicted: {} on a {} GPU; {})\n",
                       predicted->engine.empty() ? "the plan" : predicted->engine,
                       Gib(predicted->total_bytes),
                       predicted->fits ? "the plan said it fits"
                                       : fmt::format("the plan said it fails at {}",
                                                     predicted->failure_stage
                                                         ? StageName(*predicted->failure_stage)
                                                         : "an unknown stage"));
  }
  if (r.marks.empty()) {
    out += run.attached ? "\nno stage marks: an attached process's output is not read\n"
                        : "\nno stage marks: no start-up line of a known engine was seen\n";
  } else {
    out += "\nstage marks:\n";
    for (const StageMark& m : r.marks) out += MarkLine(m);
  }
  if (!r.errors.empty()) {
    out += "failures:\n";
    for (const StageMark& m : r.errors) out += MarkLine(m);
  }
  if (diagnosis && diagnosis->found) {
    out += "\ndiagnosis (vramfit doctor on the engine's output):\n";
    out += RenderDoctorText(*diagnosis, run.scan);
  }
  return out;
}

std::string RenderMonitorJson(const MonitorRun& run, const std::vector<std::string>& command,
                              const PredictedStages* predicted, const Diagnosis* diagnosis) {
  const MonitorReport& r = run.report;
  nlohmann::ordered_json j;
  j["schema"] = "vramfit.monitor/1";
  j["command"] = command;
  j["attached"] = run.attached;
  j["exit_code"] = run.exit_code;
  j["timed_out"] = run.timed_out;
  j["forwarded_signal"] = run.forwarded_signal;
  j["duration_seconds"] = r.duration_seconds;
  j["samples"] = r.samples;
  j["sample_errors"] = r.sample_errors;
  j["processes_seen"] = r.processes_seen;
  auto gpus = nlohmann::ordered_json::array();
  for (size_t i = 0; i < r.gpus.size(); ++i) {
    gpus.push_back({{"index", r.gpus[i].index},
                    {"name", r.gpus[i].name},
                    {"total_bytes", r.gpus[i].total_bytes},
                    {"baseline_used_bytes",
                     i < r.baseline_used_bytes.size() ? r.baseline_used_bytes[i] : 0}});
  }
  j["gpus"] = std::move(gpus);
  auto stages = nlohmann::ordered_json::array();
  for (const StageMeasure& m : r.stages) {
    nlohmann::ordered_json s;
    s["stage"] = StageName(m.stage);
    s["reached"] = m.reached;
    s["start_seconds"] = m.start_seconds;
    s["end_seconds"] = m.end_seconds;
    s["samples"] = m.samples;
    s["used_peak_bytes"] = m.used_peak_bytes;
    s["process_peak_bytes"] = m.process_peak_bytes;
    s["measured_bytes"] = r.MeasuredBytes(m.stage);
    const uint64_t want = predicted ? predicted->bytes[static_cast<int>(m.stage)] : 0;
    s["predicted_bytes"] = want ? nlohmann::ordered_json(want) : nlohmann::ordered_json();
    stages.push_back(std::move(s));
  }
  j["stages"] = std::move(stages);
  auto marks = [](const std::vector<StageMark>& v) {
    auto a = nlohmann::ordered_json::array();
    for (const StageMark& m : v) {
      a.push_back({{"seconds", m.seconds},
                   {"stage", StageName(m.stage)},
                   {"engine", m.engine},
                   {"event", m.event},
                   {"line", m.line},
                   {"text", m.text}});
    }
    return a;
  };
  j["marks"] = marks(r.marks);
  j["errors"] = marks(r.errors);
  nlohmann::ordered_json timeline;
  timeline["samples_per_point"] = r.timeline_step_samples;
  auto points = nlohmann::ordered_json::array();
  for (const TimelinePoint& p : r.timeline) {
    points.push_back({{"seconds", p.seconds}, {"used_bytes", p.used_bytes}});
  }
  timeline["points"] = std::move(points);
  j["timeline"] = std::move(timeline);
  if (predicted) {
    j["predicted"] = {{"engine", predicted->engine},
                      {"total_bytes", predicted->total_bytes},
                      {"fits", predicted->fits},
                      {"failure_stage", predicted->failure_stage
                                            ? nlohmann::ordered_json(
                                                  StageName(*predicted->failure_stage))
                                            : nlohmann::ordered_json()}};
  } else {
    j["predicted"] = nullptr;
  }
  if (diagnosis && diagnosis->found) {
    j["diagnosis"] = nlohmann::ordered_json::parse(RenderDoctorJson(*diagnosis, run.scan),
                                                   nullptr, false);
  } else {
    j["diagnosis"] = nullptr;
  }
  return report::JsonText(j);
}

}  // namespace vramfit
