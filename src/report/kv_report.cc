// `vramfit kv`: the KV cache estimate as text and as JSON (schema vramfit.kv/1; see
// vramfit/report.h). Sizes are bytes in JSON and GiB-style units in text, as everywhere.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/text.h"
#include "core/units.h"
#include "report/json_text.h"
#include "vramfit/report.h"

namespace vramfit {

std::string RenderKvJson(const KvEstimate& e, const KvReportInfo& info) {
  nlohmann::ordered_json j;
  j["schema"] = "vramfit.kv/1";
  j["model"] = info.model;
  j["engine"] = info.engine;
  j["context"] = info.query.context;
  j["batch"] = info.query.batch;
  j["tensor_parallel_size"] = info.query.tensor_parallel_size;
  j["kv_cache_dtype"] = info.query.kv_cache_dtype;
  j["elem_bytes"] = e.elem_bytes;
  j["layers"] = {{"total", e.layers},     {"full", e.full_layers},
                 {"sliding", e.sliding_layers}, {"mla", e.mla_layers},
                 {"linear", e.linear_layers}, {"kv_shared", e.shared_layers}};
  j["bytes_per_token"] = e.bytes_per_token;
  j["sliding_bytes_per_sequence"] = e.sliding_bytes_per_sequence;
  j["state_bytes_per_sequence"] = e.state_bytes_per_sequence;
  j["bytes_per_sequence"] = e.bytes_per_sequence;
  j["total_bytes"] = e.total_bytes;
  j["block_size"] = e.block_size;
  j["blocks_per_sequence"] = e.blocks_per_sequence;
  j["notes"] = e.notes;
  return report::JsonText(j);
}

std::string RenderKvText(const KvEstimate& e, const KvReportInfo& info) {
  const KvQuery& q = info.query;
  std::string out = fmt::format(
      "KV cache of {}{}: {} tokens x {} sequence{}, {} (--kv-cache-dtype {}), per "
      "GPU at tensor parallel {}\n",
      core::Printable(info.model),
      info.engine.empty() ? "" : fmt::format(" under {}", core::Printable(info.engine)),
      core::GroupDigits(static_cast<uint64_t>(q.context)), q.batch, q.batch == 1 ? "" : "s",
      e.elem_bytes > 0 ? fmt::format("{}-byte values", e.elem_bytes)
                       : std::string("the engine's packed layout"),
      core::Printable(q.kv_cache_dtype), q.tensor_parallel_size);
  std::string kinds;
  auto kind = [&](int64_t n, const char* name) {
    if (n > 0) kinds += fmt::format("{}{} {}", kinds.empty() ? "" : ", ", n, name);
  };
  kind(e.full_layers, "full attention");
  kind(e.sliding_layers, "sliding window");
  kind(e.mla_layers, "MLA");
  kind(e.linear_layers, "linear attention");
  kind(e.shared_layers, "sharing an earlier layer's KV");
  out += fmt::format("  layers                          {} ({})\n", e.layers,
                     kinds.empty() ? "no cache" : kinds);
  out += fmt::format("  per token (K/V, MLA latent)     {}\n",
                     core::FormatBytes(e.bytes_per_token));
  if (e.sliding_layers > 0) {
    out += fmt::format("  sliding windows, per sequence   {}\n",
                       core::FormatBytes(e.sliding_bytes_per_sequence));
  }
  if (e.linear_layers > 0) {
    out += fmt::format("  linear state, per sequence      {}\n",
                       core::FormatBytes(e.state_bytes_per_sequence));
  }
  out += fmt::format("  per sequence                    {}{}\n",
                     core::FormatBytes(e.bytes_per_sequence),
                     e.block_size > 0 ? fmt::format(" ({} blocks of {} tokens)",
                                                    core::GroupDigits(e.blocks_per_sequence),
                                                    e.block_size)
                                      : "");
  out += fmt::format("  {:<32}{}\n", fmt::format("total, {} x per sequence", q.batch),
                     core::FormatBytes(e.total_bytes));
  for (const std::string& n : e.notes) out += "note: " + n + "\n";
  return out;
}

}  // namespace vramfit
