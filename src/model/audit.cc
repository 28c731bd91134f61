// The quantization audit: what the headers say against what the config claims (fake or
// partial quantization, metadata overhead, tying, duplicates, MTP, layout mismatches).
// Finding codes are stable; docs/audit.md lists them with their severities.
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <unordered_map>

#include "core/checked.h"
#include "core/units.h"
#include "model/quant_rules.h"
#include "model/roles.h"
#include "vramfit/inventory.h"

namespace vramfit::model {
namespace {

struct ModuleAgg {
  Role role = Role::kOther;
  int64_t layer = -1;
  bool quantized = false;
  bool wide_weight = false;   // has a 16/32-bit "weight"
  bool packed_weight = false; // has qweight/weight_packed/_blocks or a low-bit weight
  Dtype weight_dtype = Dtype::kBF16;
  uint64_t value_bytes = 0;
  uint64_t meta_bytes = 0;
  uint64_t bias_bytes = 0;
  uint64_t params = 0;
  const TensorInfo* qweight = nullptr;
  const TensorInfo* scales = nullptr;
  const TensorInfo* g_idx = nullptr;
};

std::string Leaf(std::string_view module) {
  const size_t dot = module.rfind('.');
  std::string leaf(dot == std::string_view::npos ? module : module.substr(dot + 1));
  // Expert index segments are not informative: "experts.7.down_proj" -> "experts.down_proj".
  return leaf;
}

std::string KindLabel(std::string_view module, Role role) {
  std::string label = RoleName(role);
  label += ":";
  label += Leaf(module);
  return label;
}

void Add(Inventory* inv, Severity s, const char* code, std::string msg, uint64_t bytes) {
  inv->audit.findings.push_back({s, code, std::move(msg), bytes});
}

}  // namespace

void RunAudit(const ModelSpec* spec, Inventory* inv) {
  Audit& a = inv->audit;
  // Keyed by views into the entries' names (the entries do not move while the audit runs);
  // std::hash gives a string_view the hash of the equal string.
  std::unordered_map<std::string_view, ModuleAgg> mods;
  mods.reserve(inv->tensors.size());
  uint64_t mtp_bytes = 0, mtp_tensors = 0, embed_bytes = 0, lm_head_bytes = 0;
  int64_t embed_rows = -1;
  for (const TensorEntry& e : inv->tensors) {
    if (e.part == Part::kQuantMeta) a.quant_metadata_bytes += e.info.bytes();
    if (e.role == Role::kMtp) { mtp_bytes += e.info.bytes(); ++mtp_tensors; }
    if (e.role == Role::kEmbedding) {
      embed_bytes += e.info.bytes();
      if (e.part == Part::kWeight && !e.info.shape.empty())
        embed_rows = static_cast<int64_t>(e.info.shape[0]);
    }
    if (e.role == Role::kLmHead) lm_head_bytes += e.info.bytes();
    if (!IsCountedLinear(e.role) || e.layer < 0) continue;
    ModuleAgg& m = mods[e.module()];
    m.role = e.role;
    m.layer = e.layer;
    m.params += e.parameters;
    const std::string& n = e.info.name;
    switch (e.part) {
      case Part::kWeight:
        m.value_bytes += e.info.bytes();
        if (e.quantized) {
          m.quantized = true;
          m.packed_weight = true;
          if (n.ends_with("qweight")) m.qweight = &e.info;
        } else if (IsWideFloat(e.info.dtype)) {
          m.wide_weight = true;
          m.weight_dtype = e.info.dtype;
        }
        break;
      case Part::kBias: m.bias_bytes += e.info.bytes(); break;
      case Part::kQuantMeta:
        m.meta_bytes += e.info.bytes();
        if (n.ends_with(".scales")) m.scales = &e.info;
        if (n.ends_with(".g_idx")) m.g_idx = &e.info;
        break;
    }
  }

  // Counts, and unquantized projections grouped by kind.
  std::map<std::string, std::pair<int64_t, uint64_t>> unquant_kinds, uncovered_kinds;
  int64_t duplicates = 0;
  uint64_t duplicate_bytes = 0;
  std::map<std::string, int64_t> layout_mismatch;
  std::string first_mismatch;
  Dtype wide_dtype = Dtype::kBF16;
  for (const auto& [name, m] : mods) {
    const uint64_t bytes = m.value_bytes + m.meta_bytes + m.bias_bytes;
    if (m.quantized) {
      ++a.quantized_linear;
      a.quantized_linear_bytes += m.value_bytes + m.meta_bytes;
      a.quant_values_bytes += m.value_bytes;
      a.quant_parameters += m.params;
      if (m.wide_weight) { ++duplicates; duplicate_bytes += m.value_bytes; }
    } else {
      ++a.unquantized_linear;
      a.unquantized_linear_bytes += bytes;
      wide_dtype = m.weight_dtype;
      auto& k = unquant_kinds[KindLabel(name, m.role)];
      k.first += 1;
      k.second += bytes;
      if (spec && spec->quant.quantized() && QuantSchemeCovers(spec->quant, name)) {
        auto& u = uncovered_kinds[KindLabel(name, m.role)];
        u.first += 1;
        u.second += bytes;
      }
    }
    // Layout checks where the headers carry enough to solve for bits and group size.
    if (spec && m.quantized && m.qweight && m.scales && m.qweight->shape.size() == 2 &&
        m.scales->shape.size() == 2) {
      const QuantScheme& q = spec->quant;
      const uint64_t qr = m.qweight->shape[0], qc = m.qweight->shape[1];
      const uint64_t sr = m.scales->shape[0], sc = m.scales->shape[1];
      int64_t bits = 0, group = 0;
      uint64_t inputs = 0;
      if (q.layout == QuantLayout::kAwqGemm && sc > 0 && sr > 0) {
        bits = static_cast<int64_t>(qc * 32 / sc);   // qweight [K, N*b/32], scales [K/G, N]
        inputs = qr;
        group = static_cast<int64_t>(qr / sr);
      } else if (q.layout == QuantLayout::kGptq && m.g_idx && m.g_idx->shape.size() == 1 &&
                 m.g_idx->shape[0] > 0 && sr > 0) {
        inputs = m.g_idx->shape[0];                 // qweight [K*b/32, N], g_idx [K]
        bits = static_cast<int64_t>(qr * 32 / inputs);
        group = static_cast<int64_t>(inputs / sr);
      }
      // A GPTQModel `dynamic` or AutoRound `extra_config` override sets the module's own.
      const int want_bits = QuantSchemeBits(q, name);
      const int64_t declared_group = model::QuantSchemeGroupSize(q, name);
      const int64_t want_group = declared_group == 0 ? group : declared_group;
      const bool per_channel = declared_group == 0 && sr == 1;
      // A width that is not a multiple of the group ends in a shorter group: ceil(K / G) rows.
      const bool ragged = want_group > 0 && inputs % static_cast<uint64_t>(want_group) != 0 &&
                          sr == core::CeilDiv(inputs, static_cast<uint64_t>(want_group));
      if (ragged) group = want_group;
      if (bits != 0 && (bits != want_bits || (group != want_group && !per_channel))) {
        auto& n = layout_mismatch[KindLabel(name, m.role)];
        if (n++ == 0 && first_mismatch.empty()) {
          first_mismatch = fmt::format("{} holds {}-bit values in groups of {}", name, bits, group);
        }
      }
    }
  }

  const bool claims = spec && spec->quant.quantized();
  const std::string scheme =
      claims ? fmt::format("{} {}-bit", QuantMethodName(spec->quant.method), spec->quant.bits) : "";
  if (claims && a.quantized_linear == 0 && a.unquantized_linear > 0) {
    Add(inv, Severity::kError, "fake-quantization",
        fmt::format("config.json declares {} quantization, but all {} decoder projections are "
                    "stored as {} ({}): the weights are not quantized, and an engine will either "
                    "reject the checkpoint or load it at {} bits",
                    scheme, a.unquantized_linear, DtypeName(wide_dtype),
                    core::FormatBytes(a.unquantized_linear_bytes), DtypeBits(wide_dtype)),
        a.unquantized_linear_bytes);
  } else if (!claims && a.quantized_linear > 0) {
    Add(inv, Severity::kWarning, "undeclared-quantization",
        fmt::format("{} decoder projections are stored quantized, but config.json declares no "
                    "quantization_config: engines will not know how to load them",
                    a.quantized_linear),
        a.quantized_linear_bytes);
  } else if (a.quantized_linear > 0 && a.unquantized_linear > 0) {
    std::string list;
    for (const auto& [kind, v] : unquant_kinds) {
      if (!list.empty()) list += ", ";
      list += fmt::format("{} x{} ({})", kind, v.first, core::FormatBytes(v.second));
    }
    Add(inv, Severity::kInfo, "partial-quantization",
        fmt::format(
            "{} of {} decoder projections are quantized; {} stay unquantized, holding {}: {}",
            a.quantized_linear, a.quantized_linear + a.unquantized_linear, a.unquantized_linear,
            core::FormatBytes(a.unquantized_linear_bytes), list),
        a.unquantized_linear_bytes);
    if (!uncovered_kinds.empty()) {
      std::string ul;
      uint64_t ub = 0;
      int64_t un = 0;
      for (const auto& [kind, v] : uncovered_kinds) {
        if (!ul.empty()) ul += ", ";
        ul += fmt::format("{} x{}", kind, v.first);
        ub += v.second;
        un += v.first;
      }
      Add(inv, Severity::kWarning, "silent-fallback",
          fmt::format("{} projections that the config's own rules say are quantized are stored "
                      "unquantized ({}): {}", un, core::FormatBytes(ub), ul),
          ub);
    }
  }
  // GGUF block types carry their scales inside each block: there is no separate metadata.
  const bool gguf = spec && spec->quant.method_text == "gguf";
  if (a.quant_parameters > 0 && !gguf) {
    const double eff = static_cast<double>(a.quantized_linear_bytes) * 8.0 / a.quant_parameters;
    const double values = static_cast<double>(a.quant_values_bytes) * 8.0 / a.quant_parameters;
    const uint64_t meta = a.quantized_linear_bytes - a.quant_values_bytes;
    const double pct = a.quantized_linear_bytes ? 100.0 * meta / a.quantized_linear_bytes : 0.0;
    const bool heavy = eff >= values * 1.5;
    // Mixed widths (a MIXED_PRECISION export's 4- and 8-bit modules) average to a fraction.
    const std::string value_text =
        std::abs(values - std::round(values)) < 0.1
            ? fmt::format("{:.0f}-bit values", values)
            : fmt::format("{:.1f}-bit values on average (mixed widths)", values);
    Add(inv, heavy ? Severity::kWarning : Severity::kInfo, "group-overhead",
        fmt::format(
            "quantization metadata (scales, zero points, g_idx) adds {:.3f} bits per "
            "weight: {:.3f} effective bits over {} ({:.1f}% of the quantized "
            "projections' {}){}",
            eff - values, eff, value_text, pct, core::FormatBytes(a.quantized_linear_bytes),
            heavy ? "; this costs like a wider format: use a larger group size" : ""),
        meta);
  }
  if (duplicates > 0) {
    Add(inv, Severity::kWarning, "duplicate-weights",
        fmt::format("{} projections hold both a quantized and a 16/32-bit copy of their weight "
                    "({} of duplicates)", duplicates, core::FormatBytes(duplicate_bytes)),
        duplicate_bytes);
  }
  if (!layout_mismatch.empty()) {
    int64_t total = 0;
    for (const auto& [k, n] : layout_mismatch) total += n;
    Add(inv, Severity::kWarning, "scheme-mismatch",
        fmt::format(
            "{} quantized projections do not match the declared {} (group size {}): e.g. {}", total,
            scheme, spec->quant.group_size, first_mismatch),
        0);
  }
  if (spec) {
    if (spec->tie_word_embeddings && lm_head_bytes == 0 && embed_bytes > 0) {
      Add(inv, Severity::kInfo, "tied-embeddings",
          fmt::format("lm_head shares the input embedding ({}, counted once)",
                      core::FormatBytes(embed_bytes)),
          embed_bytes);
    } else if (spec->tie_word_embeddings && lm_head_bytes > 0) {
      Add(inv, Severity::kWarning, "tied-embeddings-stored",
          fmt::format(
              "config ties lm_head to the embedding, but the checkpoint also stores lm_head "
              "({}); engines that tie will not load it",
              core::FormatBytes(lm_head_bytes)),
          lm_head_bytes);
    } else if (!spec->tie_word_embeddings && lm_head_bytes == 0 && embed_bytes > 0 &&
               !inv->tensors.empty()) {
      Add(inv, Severity::kWarning, "missing-lm-head",
          "config does not tie embeddings, but no lm_head tensor was found", 0);
    }
    if (embed_rows >= 0 && embed_rows != spec->vocab_size) {
      Add(inv, Severity::kWarning, "vocab-mismatch",
          fmt::format("the embedding has {} rows, config.json says vocab_size {}", embed_rows,
                      spec->vocab_size),
          0);
    }
  }
  if (mtp_tensors > 0) {
    Add(inv, Severity::kInfo, "mtp-layers",
        fmt::format("{} multi-token-prediction tensors ({}) are in the checkpoint; engines load "
                    "them only for speculative decoding",
                    mtp_tensors, core::FormatBytes(mtp_bytes)),
        mtp_bytes);
  }
}

}  // namespace vramfit::model
