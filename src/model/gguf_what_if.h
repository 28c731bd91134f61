// GGUF what-if: the header of the GGUF file llama.cpp would make from an unquantized model
// (convert_hf_to_gguf.py, then llama-quantize to a file type), synthesized from its ModelSpec:
// the metadata keys the loader reads ({arch}.block_count, context_length, head counts, ...)
// and every tensor with its GGUF name, shape and ggml type. The per-tensor types follow
// llama.cpp's quantizer (src/llama-quant.cpp llama_tensor_get_type, ec98e2002), one function
// per rule (GgufTensorType), so that the file reads like a real one: ModelSpecFromGguf and the
// llama.cpp / Ollama planners take it as they take a file from disk.
#ifndef VRAMFIT_MODEL_GGUF_WHAT_IF_H_
#define VRAMFIT_MODEL_GGUF_WHAT_IF_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "vramfit/gguf.h"
#include "vramfit/model.h"
#include "vramfit/status.h"

namespace vramfit {

// The file types modelled, with llama.h's llama_ftype id (written as general.file_type).
enum class GgufFtype {
  kF16, kBF16, kQ8_0, kQ4_0, kQ4_K_S, kQ4_K_M, kQ5_K_M, kQ6_K,
  kMxfp4Moe,  // llama-quantize MXFP4_MOE: 3-D expert tensors MXFP4, the rest Q8_0
  kMxfp4,     // the converter's output of a model that ships MXFP4 experts (gpt-oss): the
              // experts kept MXFP4, the rest in the model's float type
};

struct GgufFtypeInfo {
  GgufFtype ftype;
  std::string_view name;  // "Q4_K_M", as llama-quantize and the Hub's file names spell it
  int64_t llama_ftype;    // general.file_type
  Dtype base;             // the type a quantizable tensor gets before the per-tensor rules
};

// The row of a --as-quantized word ("q4_k_m", "Q8_0", "bf16", case-insensitive); null when it
// names no modelled GGUF file type.
const GgufFtypeInfo* FindGgufFtype(std::string_view word);
// "q4_k_m, q4_k_s, ...": the words FindGgufFtype accepts, for messages.
std::string GgufFtypeWords();

// What the quantizer knows of the model when it picks a tensor's type (quantize_state_impl
// and the model's hparams in llama-quant.cpp).
struct GgufQuantModel {
  std::string arch;         // general.architecture
  int64_t n_layer = 0;      // hparams.n_layer (n_attention_wv, n_ffn_down)
  int64_t n_expert = 0;     // hparams.n_expert
  bool tied = false;        // no output.weight: token_embd is quantized as the output
  bool type_70b = false;    // llama-model.cpp sets LLM_TYPE_70B (llama and qwen2, 80 layers)
  // Hybrid models (qwen3next, qwen35, qwen35moe): layer i is full attention iff (i + 1) is a
  // multiple of this; 0 for models whose every layer has attention.
  int64_t full_attention_interval = 0;
};

// The ggml type llama-quantize writes for one tensor of the converted file (`converted`: the
// converter's type for it; `shape` outermost first, so ne[0] is shape.back()). Tensors the
// quantizer leaves alone keep `converted`.
Dtype GgufTensorType(const GgufQuantModel& m, GgufFtype ft, std::string_view name,
                     const Shape& shape, Dtype converted);

// The header of the GGUF file of `base` (an unquantized model) in file type `ft`: metadata
// and tensors with offsets as the writer aligns them (32 bytes). kUnsupported for a family
// the synthesizer has no tensor layout for (MLA, linear attention, vision-only) and for
// MXFP4 types on a model without MoE experts; kInvalidArgument for a quantized base.
// `origin` becomes the file's name.
Result<GgufFile> SynthesizeGguf(const ModelSpec& base, GgufFtype ft, std::string origin);

// The header of the vision projector file (mmproj) llama.cpp's converter writes beside the
// text model (convert_hf_to_gguf.py --mmproj), as far as clip.cpp's loader reads it: the clip
// architecture, the projector type and the clip.vision.* sizes of `base`'s tower, its tensors
// as `tower_bytes` of data (the tower at 16 bits: mmproj files are F16 or BF16). For the towers
// whose llama.cpp projector type the planner's rules cover: Qwen2-VL, Qwen2.5-VL, Qwen3-VL and
// Qwen3.5/3.6 (qwen2vl_merger, qwen2.5vl_merger, qwen3vl_merger) and Gemma 3's SigLIP
// (gemma3); kUnsupported for any other tower or none.
Result<GgufFile> SynthesizeMmproj(const ModelSpec& base, uint64_t tower_bytes,
                                  std::string origin);

}  // namespace vramfit

#endif  // VRAMFIT_MODEL_GGUF_WHAT_IF_H_
