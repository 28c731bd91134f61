// ModelSpec: what a model is made of, layer by layer, derived from config.json.
//
// A ModelSpec lists every decoder layer with its attention kind (full, sliding window, MLA,
// linear attention) and its MLP kind (dense or MoE), plus embeddings, vocabulary, tying,
// the vision tower and MTP heads, and the quantization scheme the config declares. It is a
// plain value: building one never touches a file or a GPU. Families (Qwen2/2.5, Qwen3,
// Qwen3-MoE, Qwen3-Next, Qwen3.5/3.6, Qwen-VL, Llama, Mistral/Mixtral, DeepSeek-V2/V3,
// Gemma 2/3/3n/4, gpt-oss, GLM-4.5, Granite 4.0 hybrid, Bamba) are rows of one table in
// src/model/model_spec.cc; an unknown
// architecture is read as a generic decoder, with a warning saying so.
//
// Example:
//   auto spec = vramfit::ModelSpecFromConfigJson(text, "config.json");
//   if (spec.ok()) std::cout << spec->layers.size() << " layers\n";
#ifndef VRAMFIT_MODEL_H_
#define VRAMFIT_MODEL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vramfit/formats.h"
#include "vramfit/status.h"

namespace vramfit {

enum class AttentionKind { kFull, kSliding, kMla, kLinear };
const char* AttentionKindName(AttentionKind k);  // "full_attention", "sliding_attention", ...

struct AttentionSpec {
  AttentionKind kind = AttentionKind::kFull;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;         // explicit head_dim when the config has one
  int64_t sliding_window = 0;   // kSliding only
  bool qkv_bias = false;        // bias on q/k/v projections
  bool o_bias = false;          // bias on the output projection
  bool qk_norm = false;         // per-head RMSNorm on q and k (Qwen3, Gemma 3)
  // The q and k norms span all heads (heads x head_dim and KV heads x head_dim), not one head:
  // MiniMax-M2's qk_norm_type "per_layer".
  bool qk_norm_whole = false;
  bool output_gate = false;     // q_proj also produces a gate (Qwen3-Next, Qwen3.5)
  bool sinks = false;           // learnable per-head sink logits (gpt-oss)
  // Gemma 4's last num_kv_shared_layers read the K/V of the last earlier layer of their kind:
  // no k/v projections and no cache of their own.
  bool kv_shared = false;
  // Gemma 4's attention_k_eq_v (full layers): no v_proj, V is K's projection normed without
  // RoPE; the cache still holds K and V.
  bool k_eq_v = false;
  // MLA (kMla): the latent cache holds kv_lora_rank + qk_rope_head_dim per token.
  int64_t q_lora_rank = 0;      // 0: q_proj is a plain projection (DeepSeek-V2-Lite)
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
  // Linear attention (kLinear, Gated DeltaNet): fixed per-sequence state.
  int64_t linear_num_key_heads = 0;
  int64_t linear_num_value_heads = 0;
  int64_t linear_key_head_dim = 0;
  int64_t linear_value_head_dim = 0;
  int64_t linear_conv_kernel_dim = 0;
  // A Mamba2 mixer in place of a Gated DeltaNet (kLinear with mamba2 set: Granite 4.0 hybrid,
  // Bamba): heads of mamba_head_dim, a state of mamba_state_size per head dimension, B and C in
  // mamba_groups groups, an inner width of mamba_intermediate, the conv kernel above.
  bool mamba2 = false;
  int64_t mamba_num_heads = 0;
  int64_t mamba_head_dim = 0;
  int64_t mamba_state_size = 0;
  int64_t mamba_groups = 0;
  int64_t mamba_intermediate = 0;
};

enum class MlpKind { kDense, kMoe };

struct MlpSpec {
  MlpKind kind = MlpKind::kDense;
  int64_t intermediate_size = 0;   // dense MLP width
  bool bias = false;
  int64_t num_experts = 0;         // kMoe
  int64_t experts_per_token = 0;
  int64_t expert_intermediate_size = 0;
  int64_t num_shared_experts = 0;  // DeepSeek n_shared_experts, Qwen shared_expert (1)
  int64_t shared_intermediate_size = 0;  // total width of the shared expert(s)
  bool shared_expert_gate = false;       // sigmoid gate on the shared expert (Qwen2-MoE style)
  bool router_bias = false;              // gpt-oss router bias
  bool router_score_bias = false;        // DeepSeek-V3 e_score_correction_bias
};

struct LayerSpec {
  AttentionSpec attention;
  MlpSpec mlp;
};

enum class VisionKind {
  kNone, kQwen2Vl, kQwen25Vl, kQwen3Vl, kSiglip, kGemma4, kPixtral, kOther
};

struct VisionSpec {
  VisionKind kind = VisionKind::kNone;
  int64_t depth = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_heads = 0;
  int64_t patch_size = 0;
  int64_t temporal_patch_size = 1;
  int64_t spatial_merge_size = 1;
  int64_t in_channels = 3;
  int64_t out_hidden_size = 0;
  int64_t num_position_embeddings = 0;
  int64_t image_size = 0;
  std::vector<int64_t> deepstack_indexes;
  // The image processor's largest image in pixels, from preprocessor_config.json (0: none
  // read; engines use the processor's default).
  int64_t max_pixels = 0;
  // Gemma 4: patches pooled pooling_kernel_size^2 to one soft token, default_output_length
  // soft tokens an image.
  int64_t pooling_kernel_size = 1;
  int64_t soft_tokens_per_image = 0;
};

// An audio encoder (Gemma 4 E2B/E4B's conformer, audio_config): its depth and width, and the
// width it hands the language model's projection.
struct AudioSpec {
  int64_t depth = 0;
  int64_t hidden_size = 0;
  int64_t out_hidden_size = 0;
};

// Quantization as the config declares it (the checkpoint's headers may disagree: see the
// audit in vramfit/inventory.h).
enum class QuantMethod {
  kNone, kAwq, kGptq, kCompressedTensors, kFp8, kMxfp4, kBitsAndBytes, kModelOpt, kOther,
};
const char* QuantMethodName(QuantMethod m);

// How one quantized linear is laid out on disk.
enum class QuantLayout {
  kNone,          // plain weight in the model dtype
  kAwqGemm,       // qweight I32 [K, N/8], qzeros I32 [K/G, N/8], scales F16 [K/G, N]
  kAwqGemv,       // qweight I32 [N, K/8], qzeros I32 [N, W], scales F16 [N, 8W]
  kAwqGemvFast,   // qweight I16 [N/4, K], scales/qzeros F16 [8W, N]
  kAwqMarlin,     // qweight I32 [K/16, 2N], scales F16 [K/G, N]
  kGptq,          // qweight I32 [K*b/32, N], qzeros I32 [ceil(K/G), N*b/32], scales, g_idx
  kCtPacked,      // weight_packed I32 [N, ceil(K*b/32)], weight_scale, weight_shape
  kCtInt8,        // weight I8 [N, K], weight_scale
  kCtFp8,         // weight F8_E4M3 [N, K], weight_scale
  kCtNvfp4,       // weight_packed U8 [N, K/2], weight_scale F8_E4M3 [N, K/16], global scale
  kCtMxfp4,       // weight_packed U8 [N, K/2], weight_scale U8 [N, K/32]
  kModelOptNvfp4, // weight U8 [N, K/2], weight_scale F8_E4M3 [N, K/16], weight_scale_2 F32,
                  // input_scale F32 (W4A4)
  kFp8Block,      // weight F8_E4M3 [N, K], weight_scale_inv F32 [ceil(N/bn), ceil(K/bk)]
  kFp8Tensor,     // weight F8_E4M3 [N, K], weight_scale F32, input_scale F32
  kMxfp4Blocks,   // gpt-oss experts: *_blocks U8 [E, N, K/32, 16], *_scales U8 [E, N, K/32]
  kBnb4,          // weight U8 [ceil(NK/2), 1] + absmax, quant_map, quant_state
  kBnb8,          // weight I8 [N, K] + SCB F32 [N]
};

struct QuantScheme {
  QuantMethod method = QuantMethod::kNone;
  QuantLayout layout = QuantLayout::kNone;
  std::string method_text;   // as written in the config
  std::string format;        // compressed-tensors format, awq version, gptq checkpoint_format
  int bits = 16;             // weight bits of quantized linears
  int64_t group_size = 0;    // 0 = per-channel or not grouped; -1 written as 0 here
  std::string strategy;      // compressed-tensors: tensor | channel | group | block | ...
  bool symmetric = true;
  bool act_order = false;    // GPTQ desc_act / compressed-tensors actorder
  bool static_input_scale = false;  // a stored per-tensor input scale (static activations)
  bool quantized_activations = false;  // compressed-tensors input_activations present (W4A4, W8A8)
  bool lm_head_quantized = false;
  std::vector<int64_t> block_size;     // fp8 block [bn, bk]
  // Modules left unquantized, with the config's own matching rule.
  std::vector<std::string> not_converted_substrings;  // awq/fp8/modelopt: substring match
  std::vector<std::string> not_converted_globs;       // mxfp4: '*' globs
  std::vector<std::string> ignore;                    // compressed-tensors: names or "re:" regex
  struct Dynamic { std::string regex; bool skip; int bits; int64_t group_size; };
  std::vector<Dynamic> dynamic;                       // GPTQModel per-module overrides
  bool bnb_double_quant = false;
  bool quantized() const { return method != QuantMethod::kNone; }
};

// Does the config's rule say the module named `module` (e.g.
// "model.layers.3.mlp.experts.7.down_proj") is quantized? Vision, embeddings and routers
// are the caller's business; this applies only the config's lists.
bool QuantSchemeCovers(const QuantScheme& q, std::string_view module);

// Weight bits of `module` under the scheme: a GPTQModel `dynamic` override when one
// matches, else the scheme's bits.
int QuantSchemeBits(const QuantScheme& q, std::string_view module);

// Name prefixes of the checkpoint's tensors, which vary by family and export version.
struct NamingSpec {
  std::string layers = "model.layers.";        // decoder layer i is layers + i + "."
  std::string embed = "model.embed_tokens.weight";
  std::string final_norm = "model.norm.weight";
  std::string lm_head = "lm_head.weight";
  std::string vision = "visual.";               // vision tower prefix
  std::string mtp = "mtp.";                     // Qwen3-Next/3.5 MTP prefix
  std::string attn = "self_attn.";
  std::string mlp = "mlp.";
  std::string moe = "mlp.";                     // Mixtral: "block_sparse_moe."
  std::string router = "gate";                  // gpt-oss: "router"
  std::string experts = "experts.";
  std::string shared = "shared_expert.";        // DeepSeek: "shared_experts."
  bool mixtral_expert_names = false;            // w1/w3/w2 instead of gate/up/down_proj
  bool fused_experts = false;                   // gpt-oss: one tensor per kind for all experts
  bool gemma_norms = false;                     // pre/post feedforward layernorms
};

struct ModelSpec {
  std::string architecture;  // first of "architectures"
  std::string model_type;    // of the language model (text_config's when nested)
  std::string family;        // vramfit's family name, e.g. "qwen3_moe"
  bool generic = false;      // read with the generic decoder rules
  std::vector<std::string> warnings;

  int64_t hidden_size = 0;
  int64_t vocab_size = 0;
  int64_t max_position_embeddings = 0;
  // rope_scaling, where the config declares one (type empty: none).
  struct RopeScaling {
    std::string type;            // yarn, dynamic, linear, llama3, longrope, mrope, default, ...
    double factor = 0;           // 0: none given
    int64_t original_max_position_embeddings = 0;
  } rope_scaling;
  bool tie_word_embeddings = false;
  Dtype dtype = Dtype::kBF16;           // weights' float dtype (config "dtype"/"torch_dtype")
  Dtype ssm_state_dtype = Dtype::kBF16; // mamba_ssm_dtype for linear-attention state
  std::vector<LayerSpec> layers;
  int64_t mtp_layers = 0;               // MTP / NextN layers stored in the checkpoint
  // A DFlash drafter (dflash_config.target_layer_ids): how many target layers' hidden states
  // its fc projection reads; 0 when the config has none.
  int64_t dflash_target_layers = 0;
  // Gemma 4's per-layer embeddings (hidden_size_per_layer_input > 0, the E2B/E4B models): a
  // second table of per_layer_vocab_size x (layers x per_layer_input_size), its projection
  // from the hidden state and, in every layer, a gate and a projection of that width.
  int64_t per_layer_input_size = 0;
  int64_t per_layer_vocab_size = 0;
  VisionSpec vision;
  AudioSpec audio;
  QuantScheme quant;
  NamingSpec naming;

  // Totals over layers.
  int64_t CountAttention(AttentionKind k) const;
  int64_t CountMoeLayers() const;
};

// A what-if quantization: the checkpoint a quantizer would write from an unquantized one, with
// the quantizer's defaults for what it leaves unquantized (see src/model/what_if.cc).
struct WhatIfQuant {
  std::string method;        // awq | gptq | fp8 | w8a8 | nvfp4, or a GGUF file type (q4_k_m)
  int bits = 0;              // 0: the method's default (awq, gptq, nvfp4: 4; fp8, w8a8: 8)
  int64_t group_size = -2;   // -2: the method's default (awq, gptq: 128); -1 or 0: per channel
  bool desc_act = false;     // GPTQ act-order (the layout is the same either way)
  // A GGUF file type (q4_k_m, q4_k_s, q5_k_m, q6_k, q8_0, q4_0, f16, bf16, mxfp4_moe,
  // mxfp4): the file llama.cpp's converter and quantizer would write, for llama.cpp and
  // Ollama (src/model/gguf_what_if.h). method holds the type in lower case.
  bool gguf = false;
};

// Reads --as-quantized METHOD with --bits, --group-size and --desc-act; checks the combination
// (AutoAWQ packs only 4-bit, GPTQ 2/3/4/8, ...). A GGUF file type ("q4_k_m", also written
// "gguf:Q4_K_M") takes none of the three. Errors (kInvalidArgument) name the flag.
Result<WhatIfQuant> MakeWhatIfQuant(std::string_view method, int bits, int64_t group_size,
                                    bool desc_act);

// "AWQ 4-bit g128", "GPTQ 3-bit g128 desc_act", "FP8 block 128x128", "GGUF Q4_K_M", ...
std::string WhatIfLabel(const WhatIfQuant& q);

// The spec of `base` quantized by q's quantizer: base must be unquantized. The scheme is the
// one the quantizer writes into config.json, with the modules it leaves unquantized by default
// (lm_head, embeddings, MoE routers and gates, vision tower); SynthesizeTensors lays it out.
Result<ModelSpec> WhatIfQuantizedSpec(const ModelSpec& base, const WhatIfQuant& q);

// The spec with config.json keys overridden from a JSON object (vLLM's --hf-overrides, named
// `flag` in errors). The keys that change a plan are applied: rope_scaling / rope_parameters
// and max_position_embeddings; the names of the others go to *not_applied.
Result<ModelSpec> ApplyConfigOverrides(const ModelSpec& spec, std::string_view json,
                                       std::string_view flag,
                                       std::vector<std::string>* not_applied);

// Reads preprocessor_config.json text (the image processor's settings) into `spec`'s vision
// tower: its largest image (VisionSpec::max_pixels). A file without one changes nothing; a
// malformed file is kCorrupt naming `origin`.
Status ApplyPreprocessorConfig(std::string_view json, std::string_view origin, ModelSpec* spec);

// Builds a ModelSpec from config.json text. Errors (kCorrupt) name the key; unknown
// architectures succeed with `generic` set and a warning.
Result<ModelSpec> ModelSpecFromConfigJson(std::string_view json, std::string_view origin);

}  // namespace vramfit

#endif  // VRAMFIT_MODEL_H_
