// `vramfit doctor` as text and JSON (vramfit.doctor/1).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "vramfit/report.h"

namespace vramfit {
namespace {

bool IsBytes(const std::string& key) {
  return key.size() > 6 && key.compare(key.size() - 6, 6, "_bytes") == 0;
}

std::string Value(const std::string& key, double v) {
  if (IsBytes(key)) return fmt::format("{:.2f} GiB", v / 1073741824.0);
  if (v == static_cast<double>(static_cast<int64_t>(v)))
    return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{:.2f}", v);
}

}  // namespace

std::string RenderDoctorText(const Diagnosis& d, const LogScan& scan) {
  std::string out;
  if (!d.found) {
    out += fmt::format(
        "nothing recognised in {} lines ({} bytes): no out-of-memory error, KV-cache error or "
        "memory profile of vLLM, SGLang, llama.cpp, Ollama, TGI, transformers or PyTorch\n",
        scan.lines, scan.bytes);
    for (const auto& u : scan.unplaced) out += fmt::format("  not placed: {}\n", u);
    for (const auto& n : d.notes) out += fmt::format("note: {}\n", n);
    return out;
  }
  out += fmt::format("engine: {}\nstage:  {}\ncause:  {}\n  {}\n",
                     d.engine.empty() ? "unknown" : d.engine, d.stage, d.cause, d.summary);
  if (!d.stage_evidence.empty()) out += fmt::format("  stage from: {}\n", d.stage_evidence);
  if (!d.numbers.empty()) {
    out += "numbers:\n";
    for (const auto& [k, v] : d.numbers) out += fmt::format("  {:<28} {}\n", k, Value(k, v));
  }
  if (!d.fixes.empty()) {
    out += "fixes:\n";
    for (const Fix& f : d.fixes) out += fmt::format("  {}\n      {}\n", f.change, f.effect);
  }
  if (!d.evidence.empty()) {
    out += "evidence:\n";
    for (const auto& e : d.evidence)
      out += fmt::format("  {}\n", e.size() > 220 ? e.substr(0, 220) + "..." : e);
  }
  for (const auto& n : d.notes) out += fmt::format("note: {}\n", n);
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
    if (IsBytes(k)) numbers[k] = static_cast<int64_t>(v);
    else numbers[k] = v;
  }
  j["numbers"] = std::move(numbers);
  nlohmann::ordered_json fixes = nlohmann::ordered_json::array();
  for (const Fix& f : d.fixes) fixes.push_back({{"change", f.change}, {"effect", f.effect}});
  j["fixes"] = std::move(fixes);
  j["evidence"] = d.evidence;
  j["notes"] = d.notes;
  j["log"] = {{"lines", scan.lines},           {"bytes", scan.bytes},
              {"long_lines", scan.long_lines}, {"binary_lines", scan.binary_lines},
              {"events", scan.events.size()},  {"unplaced", scan.unplaced}};
  return j.dump(2) + "\n";
}

}  // namespace vramfit
