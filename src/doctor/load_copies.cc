// The load's converted copies (load_copies.h): which frames and lines say the weights were all
// loaded and a quantization method's conversion after loading failed.
#include "doctor/load_copies.h"

#include <string_view>

#include "doctor/text_scan.h"

namespace vramfit::doctor {

// vLLM's loader builds the model under the target device (initialize_model: every parameter is
// allocated as its layer is constructed), copies the checkpoint's tensors into those parameters
// (load_weights), then lets each layer's quantization method convert what was loaded
// (model_executor/model_loader/utils.py process_weights_after_loading, 0.8+; loader.py
// _process_weights_after_loading and DefaultModelLoader.load_model before; SGLang's
// model_loader/loader.py DefaultModelLoader.load_weights_and_postprocess, 0.4-0.5). What the
// methods call there writes a new tensor beside the loaded one:
// - the Marlin layouts: marlin_permute_scales, marlin_moe_permute_scales
//   (quantization/utils/marlin_utils.py, 0.5+), prepare_fp8_layer_for_marlin and its MoE form
//   (marlin_utils_fp8.py, 0.6+: FP8 weights on a GPU without FP8 compute), prepare_fp4_layer_for_
//   marlin and its MoE form (marlin_utils_fp4.py, 0.9+); the repacks themselves are
//   readers/vllm.cc MarlinRepackFrames;
// - MXFP4 experts swizzled for the Triton kernels (_swizzle_mxfp4, quantization/utils/
//   mxfp4_utils.py, 0.10.1+; SGLang's layers/quantization/mxfp4.py, 0.5);
// - FP8: per_tensor_dequantize and requantize_with_max_scale (quantization/utils/w8a8_utils.py,
//   0.5+: a fused module's shards dequantized to 16 bits and quantized again under one scale),
//   block_quant_to_tensor_quant and requant_weight_ue8m0_inplace (fp8_utils.py, 0.8+ / 0.10+:
//   block scales converted for DeepGEMM), normalize_e4m3fn_to_e4m3fnuz (ROCm's FP8 type).
// transformers' MXFP4 quantizer does the same as it loads each expert tensor
// (integrations/mxfp4.py, 4.55+): convert_moe_packed_tensors dequantizes the packed experts to
// bf16 on the GPU when the Triton kernels cannot run, load_and_swizzle_mxfp4 / swizzle_mxfp4
// lay them out for the kernels.
bool PostLoadConversion(const Facts& f) {
  return f.stage == Stage::kLoad &&
         AnyFrame(f, {"process_weights_after_loading", "_process_weights_after_loading",
                      "marlin_permute_scales", "marlin_moe_permute_scales",
                      "prepare_fp8_layer_for_marlin", "prepare_moe_fp8_layer_for_marlin",
                      "prepare_fp4_layer_for_marlin", "prepare_moe_fp4_layer_for_marlin",
                      "_swizzle_mxfp4", "per_tensor_dequantize", "requantize_with_max_scale",
                      "block_quant_to_tensor_quant", "requant_weight_ue8m0_inplace",
                      "normalize_e4m3fn_to_e4m3fnuz", "convert_moe_packed_tensors",
                      "load_and_swizzle_mxfp4", "swizzle_mxfp4"});
}

bool ShardsRead(const LogEvent& e) {
  if (e.kind != EventKind::kLoadBegin) return false;
  const std::string_view t = e.text;
  const size_t at = t.find(" checkpoint shards:");
  if (at == std::string_view::npos) return false;
  size_t end = 0;
  const auto pct = NumberAt(t, at + std::string_view(" checkpoint shards:").size(), &end);
  return pct && *pct >= 100 && t.substr(end, 1) == "%";
}

// The shard bar ("Loading safetensors checkpoint shards", model_loader/weight_utils.py
// safetensors_weights_iterator, tqdm over the files, shared by SGLang's copy) reaches 100% only
// once the last file's tensors were consumed by load_weights: the parameters had been allocated
// before the first file (above), so an allocation still under load_model after it is the
// conversion. Not when the traceback is in building the model or in a weight loader (another
// rank's bar, or a log of several ranks, may be ahead of the failing one).
bool ConvertedAfterShards(const Facts& f) {
  if (f.stage != Stage::kLoad || f.frame_stage != Stage::kLoad) return false;
  if (f.engine != "vllm" && f.engine != "sglang") return false;
  if (!f.shards_read || (f.oom_line && f.shards_read->line > f.oom_line)) return false;
  return !AnyFrame(f, {"initialize_model", "_initialize_model", "create_weights",
                       "weight_loader"});
}

// Unsloth's save_pretrained_merged(..., save_method="merged_16bit") (unsloth/save.py
// unsloth_save_model, 2024.x-2025.x): prints "Unsloth: Merging 4bit and LoRA weights to
// 16bit...", then for each decoder layer _merge_lora dequantizes every 4-bit weight
// (fast_dequantize), casts it to float32, adds the LoRA product (addmm_) and casts it back, and
// keeps the merged 16-bit layers on the GPU while its use stays under maximum_memory_usage of
// the card (0.9 in 2024.x, 0.75 later), then in RAM or on disk: the dequantized copies beside
// the resident 4-bit model.
bool UnslothMergeLine(const LogEvent& e) {
  return e.kind == EventKind::kLoadBegin && e.values.count(Num::kUnslothMerge) > 0;
}
bool UnslothMerge(const Facts& f) {
  return f.stage == Stage::kLoad &&
         (f.unsloth_merge ||
          AnyFrame(f, {"unsloth_save_model", "unsloth_save_pretrained_merged", "_merge_lora"}));
}

// device_loading_context (the same utils.py, loader.py before; SGLang's loader.py) moves a
// layer's parameters that live in host memory (--cpu-offload-gb, UVA offload) onto the GPU for
// process_weights_after_loading and moves them back after: the GPU holds the offloaded weights
// and their converted copies at once.
bool OffloadedForConversion(const Facts& f) {
  return f.stage == Stage::kLoad && AnyFrame(f, {"device_loading_context"});
}

// transformers' MXFP4 quantizer (quantizers/quantizer_mxfp4.py validate_environment, 4.55+)
// dequantizes the packed experts to bf16 while loading when the Triton kernels are missing or
// the GPU is older than compute capability 7.5, and says so: "... we will default to
// dequantizing the model to bf16"; the fine-grained FP8 quantizer (quantizer_finegrained_fp8.py)
// the same below compute capability 8.9. The load then places a 16-bit model: about four times
// the packed MXFP4 experts, twice the FP8 weights.
bool DequantizeWarning(const LogEvent& e) {
  return e.kind == EventKind::kLoadBegin && e.engine == "transformers" &&
         std::string_view(e.text).find("default to dequantizing the model") !=
             std::string_view::npos;
}
bool DequantizeOnLoad(const Facts& f) {
  return f.stage == Stage::kLoad && f.dequantize_warning &&
         (!f.oom_line || f.dequantize_warning->line < f.oom_line);
}

namespace {
// A quantization run's progress line (the pytorch reader's load-began event carrying
// online_quantization).
bool QuantizerProgressEvent(const LogEvent& e) {
  if (e.kind != EventKind::kLoadBegin) return false;
  auto q = e.values.find(Num::kOnlineQuantization);
  return q != e.values.end() && q->second > 0;
}
}  // namespace

// The quantizers' progress lines (readers/pytorch.cc QuantizerProgress, each a load-began event
// with online_quantization): AutoGPTQ's "Start quantizing layer 3/32" and "Quantizing
// self_attn.q_proj in layer 3/32..." (auto_gptq/modeling/_base.py quantize, 0.4-0.7),
// GPTQ-for-LLaMa's "Quantizing layer 3/32..", GPTQModel's "Quantizing layer 3 of 31"
// (looper/module_looper.py, 2.x-7.x), optimum's "Start quantizing block model.layers 3/32" and
// "Quantizing mlp.up_proj in block 3/32..." (optimum/gptq/quantizer.py quantize_model, 1.1x-1.2x),
// llm-compressor's "(3/41): Calibrating" (pipelines/sequential/pipeline.py, 0.5+), 0.3's
// "Compressing layer 3/40" and ExLlamaV2's " -- Layer: model.layers.2 (MLP)". Each moves one
// layer to the GPU, runs the calibration samples through it, quantizes it and moves on: past the
// first layer, a layer's weights had fitted, and what grows is what the run keeps on the GPU
// from layer to layer (the calibration inputs and outputs).
int QuantizerLayer(const LogEvent& e) {
  if (!QuantizerProgressEvent(e)) return 0;
  auto layer = e.values.find(Num::kQuantizerLayer);
  return layer == e.values.end() ? 0 : static_cast<int>(layer->second);
}

bool ModelOffloadedLine(const LogEvent& e) {
  return QuantizerProgressEvent(e) &&
         std::string_view(e.text).find("caching done") != std::string_view::npos;
}

bool QuantizerPackingLine(const LogEvent& e) {
  return QuantizerProgressEvent(e) &&
         std::string_view(e.text).find("Packing") != std::string_view::npos;
}

bool QuantizedExportLine(const LogEvent& e) {
  return QuantizerProgressEvent(e) && e.values.count(Num::kQuantizedExport) > 0;
}

bool QuantizedExport(const Facts& f) {
  return f.stage == Stage::kLoad &&
         (f.quantized_export ||
          AnyFrame(f, {"export_tensorrt_llm_checkpoint", "torch_to_tensorrt_llm_checkpoint",
                       "export_hf_checkpoint", "export_model_config"}));
}

bool QuantizerPastFirstLayer(const Facts& f) {
  if (f.stage != Stage::kLoad || f.quantizer_layer < 2) return false;
  // (Also a traceback that a cut excerpt stopped before its error, where nothing says the host
  // killed the run: the GPU's failure is what the doctor reads there.)
  if (!f.has(EventKind::kTorchOom) && !f.has(EventKind::kCudaOom) &&
      !(f.has(EventKind::kTraceback) && !f.has(EventKind::kHostOomKill))) {
    return false;
  }
  return !f.has(EventKind::kOffload);
}

}  // namespace vramfit::doctor
