// What was being allocated at load beyond the weights themselves: the copies vLLM's, SGLang's
// and transformers' quantization code writes when it converts the loaded weights (repacked,
// swizzled, dequantized, quantized again), on the GPU or, for weights offloaded to host memory,
// moved onto it for the conversion; and, in a quantization run, how far its layer-by-layer pass
// got. Predicates over the gathered facts, for the rule table (rules.cc).
#ifndef VRAMFIT_DOCTOR_LOAD_COPIES_H_
#define VRAMFIT_DOCTOR_LOAD_COPIES_H_

#include "doctor/facts.h"

namespace vramfit::doctor {

// The loader's shard bar at 100% (a load-began event of vLLM's reader): every checkpoint file
// was read into the model.
bool ShardsRead(const LogEvent& e);

// transformers' quantizer warning that it dequantizes the checkpoint to bf16 as it loads it (a
// load-began event of the transformers reader).
bool DequantizeWarning(const LogEvent& e);

// At the load stage, after that warning: the 16-bit copy of a quantized checkpoint.
bool DequantizeOnLoad(const Facts& f);

// A frame of the conversion after loading (process_weights_after_loading or one of its helpers)
// at the load stage.
bool PostLoadConversion(const Facts& f);

// vLLM or SGLang at the load stage whose shard bar reached 100% before the failure, the
// traceback in load_model and not in building the model: the weights were all in place.
bool ConvertedAfterShards(const Facts& f);

// Unsloth's "Merging 4bit and LoRA weights to 16bit" (a load-began event of the transformers
// reader).
bool UnslothMergeLine(const LogEvent& e);

// Unsloth's merged save at the load stage: its frames (unsloth_save_model, _merge_lora), or its
// "Merging 4bit and LoRA weights to 16bit" line before the failure.
bool UnslothMerge(const Facts& f);

// The loaders' device_loading_context on the stack at the load stage: offloaded weights moved
// onto the GPU for their conversion.
bool OffloadedForConversion(const Facts& f);

// The layer a quantizer's progress line says it is working on, counted from 1 (the value the
// pytorch reader read from the whole line, readers/pytorch.cc ProgressLayer); 0 when none.
int QuantizerLayer(const LogEvent& e);

// auto-round's "caching done" (a load-began event of the pytorch reader): it prints the line
// once it has cached the first block's calibration inputs and moved the whole model back to the
// CPU (auto_round/compressors/base.py try_cache_inter_data_gpucpu -> mv_module_from_gpu, 0.5-0.8;
// compressors/orchestrator.py, which also removes accelerate's dispatch hooks first, 0.9+); its
// block loop then moves one block (or --nblocks of them) at a time to the GPU.
bool ModelOffloadedLine(const LogEvent& e);

// A quantizer's packing progress (AutoGPTQ's "Packing model...", AutoAWQ's "Packing:" bar): the
// run's last step, after every layer was quantized.
bool QuantizerPackingLine(const LogEvent& e);
// NVIDIA Model Optimizer's export failing (readers/pytorch.cc ModelOptExportLine: "Cannot export
// model to the model_config"), a quantizer progress line; and the load stage's failure in that
// export (the line, or the export's frames): TensorRT-LLM's quantize.py builds each quantized
// weight (FP8, INT4 AWQ, INT8 SmoothQuant) and its scales on the GPU while the calibrated 16-bit
// model is still resident there, so the export peaks above the model.
bool QuantizedExportLine(const LogEvent& e);
bool QuantizedExport(const Facts& f);

// A quantization run that had finished its first layer before the failure (a progress line of a
// later layer), with the model not placed on the GPU whole: the calibration's, not the weights'.
bool QuantizerPastFirstLayer(const Facts& f);

}  // namespace vramfit::doctor

#endif  // VRAMFIT_DOCTOR_LOAD_COPIES_H_
