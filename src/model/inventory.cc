// BuildInventory: roles, logical parameters and totals for a list of tensors (see
// vramfit/inventory.h). The audit lives in audit.cc.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "core/checked.h"
#include "model/roles.h"
#include "vramfit/inventory.h"

namespace vramfit {
namespace model {
void RunAudit(const ModelSpec* spec, Inventory* inv);
}  // namespace model

namespace {

bool IsLowBitDtype(Dtype d) {
  switch (d) {
    case Dtype::kI8: case Dtype::kU8: case Dtype::kF8_E4M3: case Dtype::kF8_E5M2:
    case Dtype::kF8_E4M3FNUZ: case Dtype::kF8_E5M2FNUZ: case Dtype::kF8_E8M0:
    case Dtype::kF4: case Dtype::kF6_E2M3: case Dtype::kF6_E3M2:
      return true;
    default:
      return IsGgmlBlockType(d);
  }
}

// Weight bits of a quantized module under the scheme (4 when there is no config).
int ModuleBits(const ModelSpec* spec, std::string_view module) {
  if (spec == nullptr) return 4;
  const int bits = QuantSchemeBits(spec->quant, module);
  return bits > 0 && bits < 16 ? bits : 4;
}

}  // namespace

const char* RoleName(Role r) {
  static constexpr std::array<const char*, 17> kNames = {
      "embedding", "lm_head", "attention", "mla", "linear_attention", "linear_attention_state",
      "attention_sinks", "mlp", "expert", "shared_expert", "router", "shared_expert_gate",
      "norm", "vision", "projector", "mtp", "other"};
  return kNames[static_cast<size_t>(r)];
}

const char* ComponentName(Component c) {
  static constexpr std::array<const char*, kComponentCount> kNames = {
      "embedding", "lm_head", "attention", "linear_attention", "mlp", "experts",
      "shared_experts", "router", "norms", "vision", "audio", "mtp", "other"};
  return kNames[static_cast<size_t>(c)];
}

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kError: return "error";
  }
  return "?";
}

Inventory BuildInventory(const ModelSpec* spec, std::vector<FileTensors> files) {
  Inventory inv;
  inv.has_spec = spec != nullptr;
  if (spec) inv.spec = *spec;
  const int64_t num_layers = spec ? static_cast<int64_t>(spec->layers.size()) : -1;

  // Modules whose weight is stored by bitsandbytes (a "<module>.weight.absmax" sibling).
  std::vector<std::string> bnb_modules;
  model::TensorClassifier classifier(num_layers);
  for (size_t fi = 0; fi < files.size(); ++fi) {
    inv.files.push_back(files[fi].name);
    inv.header_bytes += files[fi].header_bytes;
    // Front to back, each tensor freed from the file's list once its entry holds it.
    for (TensorList& list = files[fi].tensors; !list.empty(); list.pop_front()) {
      TensorInfo& t = list.front();
      TensorEntry e;
      model::TensorClass c = classifier.Classify(t.name);
      // Names that do not tell linear attention from attention (GGUF's attn_qkv and attn_gate
      // in a Qwen3.5 delta-net layer): the spec's layer kind does.
      if (c.role == Role::kAttnProj && c.layer >= 0 && c.layer < num_layers &&
          spec->layers[static_cast<size_t>(c.layer)].attention.kind == AttentionKind::kLinear) {
        c.role = Role::kLinearAttnProj;
        c.component = model::ComponentOf(c.role);
      }
      e.role = c.role;
      e.part = c.part;
      e.component = c.component;
      e.layer = c.layer;
      e.module_size = static_cast<uint32_t>(c.module.size());
      e.file = static_cast<int>(fi);
      if (e.part == Part::kQuantMeta && t.name.find(".weight.absmax") != std::string::npos) {
        bnb_modules.emplace_back(c.module);
      }
      e.quantized = e.part == Part::kWeight &&
                    (c.packed_container || IsLowBitDtype(t.dtype));
      e.info = std::move(t);
      inv.tensors.push_back(std::move(e));
    }
  }
  std::sort(bnb_modules.begin(), bnb_modules.end());

  std::array<ComponentTotal, kComponentCount> comps{};
  std::array<DtypeTotal, kDtypeCount> dtypes{};
  for (size_t i = 0; i < comps.size(); ++i) comps[i].component = static_cast<Component>(i);
  for (size_t i = 0; i < dtypes.size(); ++i) dtypes[i].dtype = static_cast<Dtype>(i);

  // ModelOpt NVFP4 stores its packed values as a plain U8 `weight` (two E2M1 values a byte),
  // beside an E4M3 `weight_scale` per 16 inputs: so is every such module of a MIXED_PRECISION
  // export, whatever config.json declares for the whole.
  const bool nvfp4_weights = spec && spec->quant.layout == QuantLayout::kModelOptNvfp4;
  std::vector<std::string> e4m3_scaled;  // modules with an F8_E4M3 weight_scale
  for (const TensorEntry& e : inv.tensors) {
    if (e.info.dtype == Dtype::kF8_E4M3 && e.info.shape.size() >= 2 &&
        e.info.name.ends_with(".weight_scale")) {
      e4m3_scaled.emplace_back(e.module());
    }
  }
  std::sort(e4m3_scaled.begin(), e4m3_scaled.end());
  for (TensorEntry& e : inv.tensors) {
    const TensorInfo& t = e.info;
    uint64_t params = 0;
    if (e.part == Part::kBias) {
      params = t.elements;
    } else if (e.part == Part::kWeight) {
      params = t.elements;
      const std::string_view name = t.name;
      const bool blocks = name.size() > 7 && name.substr(name.size() - 7) == "_blocks";
      if (blocks && t.dtype == Dtype::kU8) {
        params = t.elements * 2;  // two E2M1 values per byte
      } else if (e.quantized && (t.dtype == Dtype::kI32 || t.dtype == Dtype::kI16 ||
                                 t.dtype == Dtype::kU32)) {
        // Packed values: container bits / value bits each, which for 3-bit GPTQ is 32/3 per
        // I32 (qweight [3K/32, N] holds K x N); dividing the widths first gave 10 per I32 and
        // undercounted 3-bit checkpoints by 1/16 of their quantized parameters.
        const uint64_t bits = static_cast<uint64_t>(ModuleBits(spec, e.module()));
        uint64_t packed_bits = 0;
        if (core::CheckedMul(t.elements, static_cast<uint64_t>(DtypeBits(t.dtype)),
                             &packed_bits)) {
          params = packed_bits / bits;
        }
      } else if (t.dtype == Dtype::kU8 &&
                 (name.ends_with("weight_packed") || nvfp4_weights ||
                  std::binary_search(e4m3_scaled.begin(), e4m3_scaled.end(), e.module()) ||
                  std::binary_search(bnb_modules.begin(), bnb_modules.end(), e.module()))) {
        params = t.elements * 2;  // 4-bit values, two per byte (NVFP4/MXFP4/bnb nf4)
      }
    }
    e.parameters = params;
    inv.parameters += params;
    inv.total_bytes += t.bytes();
    ComponentTotal& c = comps[static_cast<size_t>(e.component)];
    c.bytes += t.bytes();
    c.parameters += params;
    c.tensors += 1;
    DtypeTotal& d = dtypes[static_cast<size_t>(t.dtype)];
    d.bytes += t.bytes();
    d.tensors += 1;
  }
  for (const auto& c : comps) if (c.tensors > 0) inv.by_component.push_back(c);
  for (const auto& d : dtypes) if (d.tensors > 0) inv.by_dtype.push_back(d);
  std::stable_sort(inv.by_dtype.begin(), inv.by_dtype.end(),
                   [](const DtypeTotal& a, const DtypeTotal& b) { return a.bytes > b.bytes; });

  if (spec && spec->quant.quantized()) {
    inv.quantization.method = QuantMethodName(spec->quant.method);
    inv.quantization.bits = spec->quant.bits;
    inv.quantization.group_size = spec->quant.group_size;
    inv.quantization.format = spec->quant.format;
  }
  model::RunAudit(spec, &inv);
  if (inv.audit.quant_parameters > 0) {
    inv.quantization.effective_bits =
        static_cast<double>(inv.audit.quantized_linear_bytes) * 8.0 / inv.audit.quant_parameters;
  }
  if (spec) {
    for (const auto& w : spec->warnings) inv.notes.push_back(w);
  }
  return inv;
}

}  // namespace vramfit
