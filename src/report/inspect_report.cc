// Text and JSON renderers for inventories and the catalog (see vramfit/report.h).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "core/text.h"
#include "core/units.h"
#include "model/auto_round.h"
#include "report/json_text.h"
#include "vramfit/report.h"

namespace vramfit {
namespace {

using core::FormatBytes;
using core::FormatCount;
using core::GroupDigits;
using nlohmann::ordered_json;

std::string LayerSummary(const ModelSpec& s) {
  std::vector<std::string> parts;
  const struct { AttentionKind k; const char* label; } kinds[] = {
      {AttentionKind::kFull, "full attention"}, {AttentionKind::kSliding, "sliding window"},
      {AttentionKind::kMla, "MLA"}, {AttentionKind::kLinear, "linear attention (Gated DeltaNet)"}};
  for (const auto& k : kinds) {
    const int64_t n = s.CountAttention(k.k);
    if (n == 0) continue;
    const bool mamba2 = k.k == AttentionKind::kLinear &&
                        std::any_of(s.layers.begin(), s.layers.end(), [](const LayerSpec& l) {
                          return l.attention.kind == AttentionKind::kLinear && l.attention.mamba2;
                        });
    std::string p = fmt::format("{} {}", n, mamba2 ? "linear attention (Mamba2)" : k.label);
    if (k.k == AttentionKind::kSliding) {
      for (const auto& l : s.layers) {
        if (l.attention.kind == AttentionKind::kSliding) {
          p += fmt::format(" ({})", l.attention.sliding_window);
          break;
        }
      }
    }
    parts.push_back(p);
  }
  std::string out = fmt::format("{} layers: {}", s.layers.size(), fmt::join(parts, ", "));
  const int64_t moe = s.CountMoeLayers();
  if (moe > 0) {
    for (const auto& l : s.layers) {
      if (l.mlp.kind != MlpKind::kMoe) continue;
      out += fmt::format(
          "; {} MoE ({} experts, top-{}{})", moe, l.mlp.num_experts, l.mlp.experts_per_token,
          l.mlp.num_shared_experts > 0 ? fmt::format(", {} shared", l.mlp.num_shared_experts) : "");
      break;
    }
  }
  if (s.mtp_layers > 0) out += fmt::format("; {} MTP", s.mtp_layers);
  const int64_t shared = std::count_if(s.layers.begin(), s.layers.end(),
                                       [](const LayerSpec& l) { return l.attention.kv_shared; });
  if (shared > 0) out += fmt::format("; the last {} share earlier layers' KV", shared);
  if (s.per_layer_input_size > 0)
    out += fmt::format("; per-layer embeddings ({} a layer)", s.per_layer_input_size);
  return out;
}

std::string QuantText(const Inventory& inv) {
  const QuantSummary& q = inv.quantization;
  if (q.method == "none") {
    return inv.audit.quantized_linear > 0 ? "none declared (but quantized tensors found)" : "none";
  }
  // An AutoRound checkpoint is modelled with its packing's scheme: both are named.
  const std::string& text = inv.spec.quant.method_text;
  std::string s = model::IsAutoRoundMethod(text)
                      ? fmt::format("{} ({} packing) {}-bit", text, q.method, q.bits)
                      : fmt::format("{} {}-bit", q.method, q.bits);
  if (q.group_size > 0) s += fmt::format(", group {}", q.group_size);
  if (!q.format.empty()) s += fmt::format(" ({})", q.format);
  if (q.effective_bits > 0)
    s += fmt::format("; {:.2f} effective bits per quantized weight", q.effective_bits);
  return s;
}

}  // namespace

std::string RenderInspectText(const Inventory& inv, const InspectReportOptions& options) {
  std::string out;
  auto line = [&](std::string_view key, const std::string& value) {
    out += fmt::format("  {:<13} {}\n", key, value);
  };
  out += fmt::format(
      "{}  [{}]\n", core::Printable(inv.model),
      !inv.what_if.empty() ? "what-if " + core::Printable(inv.what_if) + ", synthesized"
      : inv.synthesized    ? "synthesized from config.json"
      : std::any_of(inv.files.begin(), inv.files.end(),
                    [](const std::string& f) { return f.ends_with(".gguf"); })
          ? "read from GGUF headers"
          : "read from safetensors headers");
  if (inv.has_spec) {
    const ModelSpec& s = inv.spec;
    line("architecture",
         fmt::format("{} ({}{})", s.architecture.empty() ? "?" : core::Printable(s.architecture),
                     core::Printable(s.model_type), s.generic ? ", generic reading" : ""));
    line("layers", LayerSummary(s));
    line("dims",
         fmt::format("hidden {}, vocab {}, {} embeddings, dtype {}", s.hidden_size, s.vocab_size,
                     s.tie_word_embeddings ? "tied" : "untied", DtypeName(s.dtype)));
  }
  line("parameters",
       fmt::format("{} ({})", GroupDigits(inv.parameters), FormatCount(inv.parameters)));
  line("weights", fmt::format("{} ({} bytes) in {} tensors{}", FormatBytes(inv.total_bytes),
                              GroupDigits(inv.total_bytes), GroupDigits(inv.tensors.size()),
                              inv.synthesized ? "" : fmt::format(", {} files", inv.files.size())));
  line("quantization", QuantText(inv));
  out += "by dtype\n";
  for (const auto& d : inv.by_dtype) {
    out += fmt::format("  {:<13} {:>12}  {:>7} tensors\n", DtypeName(d.dtype), FormatBytes(d.bytes),
                       d.tensors);
  }
  out += "by component\n";
  for (const auto& c : inv.by_component) {
    out +=
        fmt::format("  {:<16} {:>12}  {:>16} params  {:>7} tensors\n", ComponentName(c.component),
                    FormatBytes(c.bytes), GroupDigits(c.parameters), c.tensors);
  }
  const Audit& a = inv.audit;
  out += fmt::format("audit: {} quantized, {} unquantized decoder projections\n",
                     a.quantized_linear, a.unquantized_linear);
  for (const Finding& f : a.findings) {
    out += fmt::format("  [{}] {}: {}\n", SeverityName(f.severity), f.code,
                       core::Printable(f.message));
  }
  if (!inv.notes.empty()) {
    out += "notes\n";
    for (const auto& n : inv.notes) out += fmt::format("  - {}\n", core::Printable(n));
  }
  if (options.tensors) {
    out += "tensors\n";
    for (const TensorEntry& e : inv.tensors) {
      out +=
          fmt::format("  {:<64} {:<8} [{}] {} {}{}\n", core::Printable(e.info.name),
                      DtypeName(e.info.dtype),
                      fmt::join(e.info.shape, ", "), FormatBytes(e.info.bytes()), RoleName(e.role),
                      e.part == Part::kQuantMeta ? " (quantization metadata)"
                      : e.quantized              ? " (quantized)"
                                                 : "");
    }
  }
  return out;
}

std::string RenderInspectJson(const Inventory& inv, const InspectReportOptions& options) {
  ordered_json j;
  j["schema"] = "vramfit.inspect/1";
  j["model"] = inv.model;
  j["origin"] = inv.origin;
  j["synthesized"] = inv.synthesized;
  if (!inv.what_if.empty()) j["what_if"] = inv.what_if;  // only on what-if inventories
  if (inv.has_spec) {
    const ModelSpec& s = inv.spec;
    ordered_json m;
    m["architecture"] = s.architecture;
    m["model_type"] = s.model_type;
    m["family"] = s.family;
    m["generic"] = s.generic;
    m["hidden_size"] = s.hidden_size;
    m["vocab_size"] = s.vocab_size;
    m["tie_word_embeddings"] = s.tie_word_embeddings;
    m["dtype"] = DtypeName(s.dtype);
    m["max_position_embeddings"] = s.max_position_embeddings;
    m["num_layers"] = s.layers.size();
    m["full_attention_layers"] = s.CountAttention(AttentionKind::kFull);
    m["sliding_attention_layers"] = s.CountAttention(AttentionKind::kSliding);
    m["mla_layers"] = s.CountAttention(AttentionKind::kMla);
    m["linear_attention_layers"] = s.CountAttention(AttentionKind::kLinear);
    m["moe_layers"] = s.CountMoeLayers();
    m["mtp_layers"] = s.mtp_layers;
    ordered_json layers = ordered_json::array();
    for (const LayerSpec& l : s.layers) {
      ordered_json x;
      x["attention"] = AttentionKindName(l.attention.kind);
      if (l.attention.kind == AttentionKind::kSliding)
        x["sliding_window"] = l.attention.sliding_window;
      if (l.attention.kv_shared) x["kv_shared"] = true;
      x["mlp"] = l.mlp.kind == MlpKind::kMoe ? "moe" : "dense";
      layers.push_back(std::move(x));
    }
    m["layers"] = std::move(layers);
    j["spec"] = std::move(m);
  } else {
    j["spec"] = nullptr;
  }
  j["parameters"] = inv.parameters;
  j["total_bytes"] = inv.total_bytes;
  j["tensor_count"] = inv.tensors.size();
  j["header_bytes"] = inv.header_bytes;
  j["files"] = inv.files;
  ordered_json by_dtype = ordered_json::object();
  for (const auto& d : inv.by_dtype)
    by_dtype[DtypeName(d.dtype)] = {{"bytes", d.bytes}, {"tensors", d.tensors}};
  j["by_dtype"] = std::move(by_dtype);
  ordered_json by_comp = ordered_json::object();
  for (const auto& c : inv.by_component) {
    by_comp[ComponentName(c.component)] = {
        {"bytes", c.bytes}, {"parameters", c.parameters}, {"tensors", c.tensors}};
  }
  j["by_component"] = std::move(by_comp);
  const QuantSummary& q = inv.quantization;
  j["quantization"] = {{"method", q.method}, {"bits", q.bits}, {"group_size", q.group_size},
                       {"format", q.format}, {"effective_bits", q.effective_bits}};
  const Audit& a = inv.audit;
  ordered_json findings = ordered_json::array();
  for (const Finding& f : a.findings) {
    findings.push_back({{"severity", SeverityName(f.severity)},
                        {"code", f.code},
                        {"message", f.message},
                        {"bytes", f.bytes}});
  }
  j["audit"] = {{"quantized_linear", a.quantized_linear},
                {"unquantized_linear", a.unquantized_linear},
                {"quantized_linear_bytes", a.quantized_linear_bytes},
                {"unquantized_linear_bytes", a.unquantized_linear_bytes},
                {"quant_metadata_bytes", a.quant_metadata_bytes},
                {"findings", std::move(findings)}};
  j["notes"] = inv.notes;
  if (options.tensors) {
    ordered_json ts = ordered_json::array();
    for (const TensorEntry& e : inv.tensors) {
      ts.push_back({{"name", e.info.name},
                    {"dtype", DtypeName(e.info.dtype)},
                    {"shape", e.info.shape.ToVector()},
                    {"bytes", e.info.bytes()},
                    {"parameters", e.parameters},
                    {"role", RoleName(e.role)},
                    {"part", e.part == Part::kWeight ? "weight"
                             : e.part == Part::kBias ? "bias"
                                                     : "quant_metadata"},
                    {"quantized", e.quantized},
                    {"file", inv.files.empty() ? "" : inv.files[e.file]}});
    }
    j["tensors"] = std::move(ts);
  }
  return report::JsonText(j);
}

std::string RenderModelsText(const std::vector<CatalogModel>& models) {
  std::string out = fmt::format("{:<36} {:<44} {}\n", "ID", "REPO", "STATUS");
  for (const auto& m : models) {
    out += fmt::format("{:<36} {:<44} {}{}\n", m.id, m.repo, m.status,
                       m.base.empty() ? "" : " (base " + m.base + ")");
  }
  out += fmt::format(
      "{} models. `vramfit inspect ID` synthesizes an entry's tensors from its config.\n",
      models.size());
  return out;
}

std::string RenderModelsJson(const std::vector<CatalogModel>& models) {
  ordered_json j;
  j["schema"] = "vramfit.models/1";
  ordered_json list = ordered_json::array();
  for (const auto& m : models) {
    ordered_json x = {{"id", m.id}, {"repo", m.repo}, {"status", m.status}, {"source", m.source}};
    if (!m.base.empty()) x["base"] = m.base;
    if (m.published_parameters) x["published_parameters"] = m.published_parameters;
    list.push_back(std::move(x));
  }
  j["models"] = std::move(list);
  return report::JsonText(j);
}

}  // namespace vramfit
