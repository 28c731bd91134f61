// What-if quantization (vramfit/model.h): the QuantScheme a quantizer would write into
// config.json for an unquantized model, with the modules it leaves unquantized by default, so
// that SynthesizeTensors lays out the checkpoint it would produce. Each method cites the
// quantizer whose output it imitates.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/text.h"

#include "model/gguf_what_if.h"
#include "vramfit/model.h"

namespace vramfit {
namespace {

struct MethodRule {
  const char* name;
  int default_bits;
  std::vector<int> bits;       // the widths the quantizer packs
  int64_t default_group;       // -2 where --group-size does not apply
};

// AutoAWQ: awq/modules/linear/gemm.py (v0.2.9) packs 4-bit only. GPTQModel / AutoGPTQ:
// gptqmodel/quantization/config.py (v2-v4) accept 2, 3, 4 and 8 bits, group size 128 by
// default. fp8 is Qwen's FP8 release format (quant_method "fp8", 128x128 blocks). w8a8 and
// nvfp4 are llm-compressor's W8A8 and NVFP4 presets (compressed_tensors/quantization/
// quant_scheme.py).
const MethodRule kMethods[] = {
    {"awq", 4, {4}, 128},
    {"gptq", 4, {2, 3, 4, 8}, 128},
    {"fp8", 8, {8}, -2},
    {"w8a8", 8, {8}, -2},
    {"nvfp4", 4, {4}, -2},
};

const MethodRule* FindMethod(std::string_view name) {
  for (const MethodRule& m : kMethods) {
    if (name == m.name) return &m;
  }
  return nullptr;
}

// llm-compressor's examples ignore lm_head, the MoE routers and gates and the vision tower
// (examples/quantization_w8a8_int8/llama3_example.py, examples/quantization_w4a4_fp4/
// qwen3_moe_example.py, examples/multimodal_vision/qwen_2_5_vl_example.py).
void LlmCompressorIgnores(const ModelSpec& base, QuantScheme* q) {
  q->ignore = {"lm_head", "re:.*\\.gate$", "re:.*\\.router$", "re:.*shared_expert_gate$"};
  if (!base.naming.vision.empty()) q->ignore.push_back("re:" + base.naming.vision + ".*");
  q->ignore.push_back("re:multi_modal_projector.*");
}

// Input widths a grouped quantizer must divide: the hidden size and every MLP width.
std::vector<int64_t> LinearInputs(const ModelSpec& s) {
  std::vector<int64_t> k = {s.hidden_size};
  for (const LayerSpec& l : s.layers) {
    if (l.mlp.intermediate_size > 0) k.push_back(l.mlp.intermediate_size);
    if (l.mlp.expert_intermediate_size > 0) k.push_back(l.mlp.expert_intermediate_size);
    if (l.mlp.shared_intermediate_size > 0) k.push_back(l.mlp.shared_intermediate_size);
  }
  std::sort(k.begin(), k.end());
  k.erase(std::unique(k.begin(), k.end()), k.end());
  return k;
}

}  // namespace

Result<WhatIfQuant> MakeWhatIfQuant(std::string_view method, int bits, int64_t group_size,
                                    bool desc_act) {
  std::string m = core::AsciiLower(method);
  if (m.rfind("gguf:", 0) == 0) m = m.substr(5);
  if (const GgufFtypeInfo* ft = FindGgufFtype(m); ft != nullptr) {
    if (bits != 0 || group_size != -2 || desc_act) {
      return Status::InvalidArgument(fmt::format(
          "--as-quantized {}: a GGUF file type fixes its own types (no --bits, --group-size "
          "or --desc-act)", m));
    }
    WhatIfQuant q;
    q.method = m;
    q.gguf = true;
    return q;
  }
  const MethodRule* rule = FindMethod(m);
  if (rule == nullptr) {
    return Status::InvalidArgument(fmt::format(
        "--as-quantized {}: expected awq, gptq, fp8, w8a8 or nvfp4, or a GGUF file type ({})",
        core::Printable(method), GgufFtypeWords()));
  }
  WhatIfQuant q;
  q.method = m;
  q.bits = bits == 0 ? rule->default_bits : bits;
  if (std::find(rule->bits.begin(), rule->bits.end(), q.bits) == rule->bits.end()) {
    std::string allowed;
    for (int b : rule->bits) allowed += fmt::format("{}{}", allowed.empty() ? "" : ", ", b);
    return Status::InvalidArgument(fmt::format(
        "--bits {}: {} packs {} bits only", q.bits, m, allowed));
  }
  if (group_size != -2 && rule->default_group == -2) {
    return Status::InvalidArgument(fmt::format(
        "--group-size: {} has no group size to choose (its scales are fixed by the format)", m));
  }
  if (group_size < -2 || group_size > (int64_t{1} << 20)) {
    return Status::InvalidArgument(
        fmt::format("--group-size {}: expected -1 (per channel) or a positive size", group_size));
  }
  q.group_size = group_size == -2 ? rule->default_group : group_size <= 0 ? 0 : group_size;
  if (desc_act && m != "gptq") {
    return Status::InvalidArgument(fmt::format("--desc-act: only gptq has act-order, not {}", m));
  }
  q.desc_act = desc_act;
  return q;
}

std::string WhatIfLabel(const WhatIfQuant& q) {
  std::string method = q.method;
  for (char& c : method) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (q.gguf) {
    const GgufFtypeInfo* ft = FindGgufFtype(q.method);
    return fmt::format("GGUF {}", ft != nullptr ? ft->name : method);
  }
  if (q.method == "fp8") return "FP8 block 128x128";
  if (q.method == "w8a8") return "W8A8 INT8 per channel";
  if (q.method == "nvfp4") return "NVFP4 g16";
  const std::string group = q.group_size > 0 ? fmt::format("g{}", q.group_size) : "per channel";
  return fmt::format("{} {}-bit {}{}", method, q.bits, group, q.desc_act ? " desc_act" : "");
}

Result<ModelSpec> WhatIfQuantizedSpec(const ModelSpec& base, const WhatIfQuant& w) {
  if (w.gguf) {
    return Status::InvalidArgument(fmt::format(
        "--as-quantized {}: a GGUF file type has no config.json scheme (SynthesizeGguf lays "
        "out the file)", w.method));
  }
  if (base.quant.quantized()) {
    return Status::InvalidArgument(fmt::format(
        "--as-quantized: the checkpoint is already quantized ({}); give the unquantized model",
        QuantMethodName(base.quant.method)));
  }
  ModelSpec s = base;
  QuantScheme& q = s.quant;
  q = QuantScheme{};
  q.bits = w.bits;
  if (w.method == "awq") {
    // AutoAWQ (awq/quantize/quantizer.py, v0.2.9) quantizes the nn.Linear modules inside the
    // decoder layers only (get_model_layers + get_named_linears): embeddings, lm_head, norms
    // and the vision tower stay in the model dtype. Its MoE classes leave the router out
    // (modules_to_not_convert = ["gate"] in awq/models/mixtral.py and qwen2_moe.py), as the
    // published Qwen MoE AWQ checkpoints do. It saves in float16 with the GEMM layout and
    // zero points.
    q.method = QuantMethod::kAwq;
    q.layout = QuantLayout::kAwqGemm;
    q.format = "gemm";
    q.group_size = w.group_size;
    q.symmetric = false;
    s.dtype = Dtype::kF16;
  } else if (w.method == "gptq") {
    // GPTQModel (gptqmodel/models/definitions/*.py, v2-v4) quantizes the decoder layers'
    // projections listed per family; the MoE router ("gate") is marked not to quantize,
    // lm_head only with lm_head=True (default False). Symmetric, float16, the gptq layout with
    // g_idx written whatever desc_act says.
    q.method = QuantMethod::kGptq;
    q.layout = QuantLayout::kGptq;
    q.format = "gptq";
    q.group_size = w.group_size;
    q.act_order = w.desc_act;
    s.dtype = Dtype::kF16;
  } else if (w.method == "fp8") {
    // Qwen's FP8 releases (Qwen3-*-FP8 config.json): quant_method fp8, e4m3 weights with a
    // float32 scale per 128x128 block, dynamic activations; modules_to_not_convert holds
    // lm_head, the norms and the MoE routers (the synthesizer keeps routers unquantized for
    // every method but compressed-tensors).
    q.method = QuantMethod::kFp8;
    q.layout = QuantLayout::kFp8Block;
    q.block_size = {128, 128};
    q.not_converted_substrings = {"lm_head"};
  } else if (w.method == "w8a8") {
    // llm-compressor's W8A8 preset: int8 weights with a scale per output channel, int8
    // activations quantized per token at run time ("int-quantized").
    q.method = QuantMethod::kCompressedTensors;
    q.layout = QuantLayout::kCtInt8;
    q.format = "int-quantized";
    q.strategy = "channel";
    q.quantized_activations = true;
    LlmCompressorIgnores(base, &q);
  } else if (w.method == "nvfp4") {
    // llm-compressor's NVFP4 preset: E2M1 weights two a byte, an E4M3 scale per 16 inputs, a
    // global scale per tensor, and W4A4 activations with their own global scale.
    q.method = QuantMethod::kCompressedTensors;
    q.layout = QuantLayout::kCtNvfp4;
    q.format = "nvfp4-pack-quantized";
    q.strategy = "tensor_group";
    q.group_size = 16;
    q.quantized_activations = true;
    LlmCompressorIgnores(base, &q);
  } else {
    return Status::InvalidArgument(fmt::format("--as-quantized {}: not a method", w.method));
  }
  q.method_text = QuantMethodName(q.method);
  if (s.naming.fused_experts) {
    s.warnings.push_back(
        "what-if: this family stores its experts fused; they are counted unquantized");
  }
  if (q.group_size > 0) {
    const std::vector<int64_t> inputs = LinearInputs(s);
    for (int64_t k : inputs) {
      if (k % q.group_size != 0) {
        // The largest power-of-two group that divides every width, the size such a checkpoint
        // would be quantized with instead (vLLM's AWQ and GPTQ kernels refuse a partition
        // whose input is not a multiple of the group).
        int64_t fits = q.group_size;
        while (fits > 1 && std::any_of(inputs.begin(), inputs.end(),
                                       [&](int64_t x) { return x % fits != 0; }))
          fits /= 2;
        s.warnings.push_back(fmt::format(
            "what-if: an input width of {} is not a multiple of group size {}; real "
            "checkpoints pad such widths (Qwen2.5-72B-AWQ: 29568 to 29696) or use a group that "
            "divides them{}",
            k, q.group_size,
            fits >= 32 ? fmt::format(" (--group-size {} divides every width here)", fits) : ""));
        break;
      }
    }
  }
  return s;
}

}  // namespace vramfit
