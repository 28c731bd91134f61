// `vramfit doctor` as text and JSON (vramfit.doctor/1).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <cmath>

#include "core/text.h"
#include "report/json_text.h"
#include "vramfit/report.h"

namespace vramfit {
namespace {

bool IsBytes(const std::string& key) {
  return key.size() > 6 && key.compare(key.size() - 6, 6, "_bytes") == 0;
}

// Whether an int64_t holds `v` truncated (casting any other double is undefined), and whether
// it is a whole number.
bool FitsInt64(double v) { return std::isfinite(v) && std::fabs(v) < 9.0e18; }
bool IsWhole(double v) { return FitsInt64(v) && v == std::trunc(v); }

std::string Value(const std::string& key, double v) {
  if (IsBytes(key)) return fmt::format("{:.2f} GiB", v / 1073741824.0);
  if (IsWhole(v)) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{:.2f}", v);
}

}  // namespace

std::string RenderDoctorText(const Diagnosis& d, const LogScan& scan) {
  std::string out;
  if (!d.found && !d.engine.empty()) {
    out += fmt::format(
        "no failure recognised in {} lines ({} bytes): {}'s lines were read, with no "
        "out-of-memory error or KV-cache error among them\n",
        scan.lines, scan.bytes, d.engine);
  } else if (!d.found) {
    out += fmt::format(
        "nothing recognised in {} lines ({} bytes): no out-of-memory error, KV-cache error or "
        "memory profile of vLLM, SGLang, llama.cpp, Ollama, TGI, transformers or PyTorch\n",
        scan.lines, scan.bytes);
  }
  if (!d.found) {
    for (const auto& u : scan.unplaced) {
      out += fmt::format("  not placed: {}\n", core::Printable(u));
    }
    for (const auto& n : d.notes) out += fmt::format("note: {}\n", core::Printable(n));
    return out;
  }
  out += fmt::format("engine: {}\nstage:  {}\ncause:  {}\n  {}\n",
                     d.engine.empty() ? "unknown" : d.engine, d.stage, d.cause,
                     core::Printable(d.summary));
  if (!d.stage_evidence.empty()) {
    out += fmt::format("  stage from: {}\n", core::Printable(d.stage_evidence));
  }
  if (d.other_error) {
    out += fmt::format("error:  {} (line {}): {}\n", d.other_error->kind, d.other_error->line,
                       core::Printable(d.other_error->text));
  }
  if (!d.numbers.empty()) {
    out += "numbers:\n";
    for (const auto& [k, v] : d.numbers) out += fmt::format("  {:<28} {}\n", k, Value(k, v));
  }
  if (!d.fixes.empty()) {
    out += "fixes:\n";
    for (const Fix& f : d.fixes) {
      out += fmt::format("  {}\n      {}\n", core::Printable(f.change),
                         core::Printable(f.effect));
    }
  }
  if (!d.evidence.empty()) {
    out += "evidence:\n";
    for (const auto& e : d.evidence) {
      const std::string cut =
          e.size() > 220 ? std::string(core::Utf8Prefix(e, 220)) + "..." : e;
      out += fmt::format("  {}\n", core::Printable(cut));
    }
  }
  for (const auto& n : d.notes) out += fmt::format("note: {}\n", core::Printable(n));
  if (scan.long_lines || scan.binary_lines) {
    out += fmt::format("note: {} line(s) cut at the line limit, {} binary line(s) skipped\n",
                       scan.long_lines, scan.binary_lines);
  }
  return out;
}

std::string RenderDoctorJson(const Diagnosis& d, const LogScan& scan) {
  nlohmann::ordered_json j;
  j["schema"] = "vramfit.doctor/1";
  j["found"] = d.found;
  j["engine"] =
      d.engine.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(d.engine);
  j["stage"] = d.found ? nlohmann::ordered_json(d.stage) : nlohmann::ordered_json(nullptr);
  j["cause"] = d.found ? nlohmann::ordered_json(d.cause) : nlohmann::ordered_json(nullptr);
  j["summary"] = d.summary;
  j["stage_evidence"] = d.stage_evidence;
  nlohmann::ordered_json numbers = nlohmann::ordered_json::object();
  for (const auto& [k, v] : d.numbers) {
    if (IsBytes(k) && FitsInt64(v)) numbers[k] = static_cast<int64_t>(v);
    else numbers[k] = v;
  }
  j["numbers"] = std::move(numbers);
  nlohmann::ordered_json fixes = nlohmann::ordered_json::array();
  for (const Fix& f : d.fixes) fixes.push_back({{"change", f.change}, {"effect", f.effect}});
  j["fixes"] = std::move(fixes);
  j["evidence"] = d.evidence;
  j["notes"] = d.notes;
  if (d.other_error) {
    j["other_error"] = {{"kind", d.other_error->kind},
                        {"line", d.other_error->line},
                        {"text", d.other_error->text},
                        {"usual_cause", d.other_error->usual_cause}};
  } else {
    j["other_error"] = nullptr;
  }
  j["log"] = {{"lines", scan.lines},           {"bytes", scan.bytes},
              {"long_lines", scan.long_lines}, {"binary_lines", scan.binary_lines},
              {"events", scan.events.size()},  {"unplaced", scan.unplaced}};
  return report::JsonText(j);
}

}  // namespace vramfit
