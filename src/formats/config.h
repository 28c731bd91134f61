// config.json reader: bytes in, a typed record of the fields vramfit uses out.
//
// Every field is optional here (families differ in which they write); each one that is
// present is type- and range-checked, and a wrong type or an absurd value is a kCorrupt
// error naming the key path (e.g. `config.json: "text_config"."num_hidden_layers": expected
// an integer in [1, 4096], found -3`). Unknown keys are ignored. Meaning (which family,
// which defaults) is decided later, in src/model/.
#ifndef VRAMFIT_FORMATS_CONFIG_H_
#define VRAMFIT_FORMATS_CONFIG_H_

#include <cstdint>
#include <memory>
#include <optional>

#include <simdjson.h>
#include <string>
#include <string_view>
#include <vector>

#include "vramfit/status.h"

namespace vramfit::formats {

// One group of a compressed-tensors `config_groups` entry.
struct RawQuantGroup {
  std::string name;
  std::vector<std::string> targets;
  std::optional<int64_t> num_bits;
  std::string type;      // "int" | "float"
  std::string strategy;  // "tensor" | "channel" | "group" | "tensor_group" | "block" | ...
  std::optional<int64_t> group_size;
  std::optional<bool> symmetric;
  std::string actorder;  // "" | "group" | "weight" | "static"
  std::vector<int64_t> block_structure;
  bool has_input_activations = false;
  std::optional<bool> input_dynamic;
  std::string format;
};

// A GPTQModel `dynamic` override: a module regex with its own bits/group_size, or "-:" skip.
struct RawDynamicRule {
  std::string pattern;  // without the "+:" / "-:" prefix
  bool skip = false;
  std::optional<int64_t> bits;
  std::optional<int64_t> group_size;
};

// One AutoRound `extra_config` entry: a module name (or a regex) with its own scheme; bits 16
// keeps the module unquantized.
struct RawExtraConfig {
  std::string name;
  std::optional<int64_t> bits;
  std::optional<int64_t> group_size;
  std::optional<bool> sym;
};

struct RawQuantConfig {
  bool present = false;
  std::string quant_method;  // "awq", "gptq", "compressed-tensors", "fp8", "mxfp4", ...
  std::string format;        // compressed-tensors format
  std::string version;       // awq: gemm | gemv | gemv_fast | marlin
  std::string checkpoint_format;  // gptq: gptq | gptq_v2 | marlin ...
  std::string fmt;                // fp8: e4m3
  std::string activation_scheme;  // fp8: dynamic | static
  std::string quant_algo;         // modelopt: FP8 | NVFP4 | MIXED_PRECISION | ...
  // modelopt MIXED_PRECISION: the distinct quant_algo values of quantized_layers (module ->
  // {quant_algo, group_size}), in first-seen order.
  std::vector<std::string> layer_quant_algos;
  std::string bnb_4bit_quant_type;
  std::string bnb_4bit_quant_storage;
  std::optional<int64_t> bits;
  std::optional<int64_t> group_size;
  std::optional<bool> zero_point;
  std::optional<bool> desc_act;
  std::optional<bool> sym;
  std::optional<bool> lm_head;
  std::optional<bool> load_in_4bit;
  std::optional<bool> load_in_8bit;
  std::optional<bool> bnb_4bit_use_double_quant;
  std::vector<int64_t> weight_block_size;
  std::vector<std::string> modules_to_not_convert;  // awq, fp8, mxfp4 (globs), modelopt
  std::vector<std::string> ignore;  // compressed-tensors ignore / ignored_layers / exclude_modules
  std::vector<std::string> skip_modules;            // bitsandbytes llm_int8_skip_modules
  std::vector<RawQuantGroup> config_groups;
  std::vector<RawDynamicRule> dynamic;
  bool has_kv_cache_scheme = false;
  // AutoRound (quant_method auto-round / intel/auto-round).
  std::string packing_format;  // auto_round:auto_gptq | auto_round:auto_awq | ...
  std::string data_type;       // int | fp | ...
  std::string backend;         // backend / vllm_backend
  std::vector<std::string> block_name_to_quantize;  // also to_quant_block_names; "a,b" split
  std::vector<RawExtraConfig> extra_config;
};

struct RawVisionConfig {
  bool present = false;
  std::string model_type;
  std::optional<int64_t> depth;             // Qwen-VL
  std::optional<int64_t> num_hidden_layers; // SigLIP, Qwen3-VL uses depth
  std::optional<int64_t> hidden_size;
  std::optional<int64_t> embed_dim;         // Qwen2-VL
  std::optional<int64_t> intermediate_size;
  std::optional<int64_t> num_heads;
  std::optional<int64_t> num_attention_heads;
  std::optional<int64_t> patch_size;
  std::optional<int64_t> spatial_patch_size;
  std::optional<int64_t> temporal_patch_size;
  std::optional<int64_t> spatial_merge_size;
  std::optional<int64_t> in_channels;
  std::optional<int64_t> num_channels;
  std::optional<int64_t> out_hidden_size;
  std::optional<int64_t> num_position_embeddings;
  std::optional<int64_t> image_size;
  std::optional<int64_t> window_size;
  std::optional<int64_t> pooling_kernel_size;    // Gemma 4: patches pooled k x k
  std::optional<int64_t> default_output_length;  // Gemma 4: soft tokens per image
  std::vector<int64_t> fullatt_block_indexes;
  std::vector<int64_t> deepstack_visual_indexes;
};

// `rope_scaling` (or transformers' newer `rope_parameters`): the context extension a
// checkpoint or an override declares.
struct RawRopeScaling {
  bool present = false;
  std::string type;                 // "rope_type" (or the older "type"): yarn, dynamic, ...
  std::optional<double> factor;
  std::optional<int64_t> original_max_position_embeddings;
};

// The fields of config.json (or of its nested `text_config`) that vramfit reads.
struct RawConfig {
  std::vector<std::string> architectures;
  std::string model_type;
  std::string dtype;            // "dtype" (transformers >= 4.56)
  std::string torch_dtype;      // "torch_dtype" (older transformers); "dtype" wins when both
  std::string mamba_ssm_dtype;  // Qwen3.5: "float32"
  // Nemotron-H's block pattern ("M-M-M-MM*-..."): 'M' Mamba2, '*' attention, '-' MLP, 'E' MoE.
  std::string hybrid_override_pattern;
  std::string hidden_act;

  std::optional<int64_t> hidden_size, intermediate_size, num_hidden_layers, num_attention_heads,
      num_key_value_heads, head_dim, vocab_size, max_position_embeddings, sliding_window,
      max_window_layers, sliding_window_pattern, full_attention_interval;
  std::optional<bool> tie_word_embeddings, use_sliding_window, attention_bias, attn_output_gate,
      mlp_bias, qkv_bias;
  std::vector<std::string> layer_types;

  // MoE
  std::optional<int64_t> num_experts, num_local_experts, n_routed_experts, num_experts_per_tok,
      experts_per_token, moe_intermediate_size, shared_expert_intermediate_size,
      n_shared_experts, decoder_sparse_step, first_k_dense_replace, moe_layer_freq;
  std::vector<int64_t> mlp_only_layers;

  // MLA (DeepSeek-V2/V3)
  std::optional<int64_t> q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim,
      v_head_dim;
  bool q_lora_rank_null = false;  // "q_lora_rank": null (DeepSeek-V2-Lite)

  // Linear attention (Gated DeltaNet)
  std::optional<int64_t> linear_num_key_heads, linear_num_value_heads, linear_key_head_dim,
      linear_value_head_dim, linear_conv_kernel_dim;

  // Mamba2 mixers (Granite 4.0 hybrid, Bamba: transformers configuration_granitemoehybrid.py,
  // configuration_bamba.py): heads, head width, state size, groups, conv kernel, expansion.
  std::optional<int64_t> mamba_n_heads, mamba_d_head, mamba_d_state, mamba_n_groups, mamba_d_conv,
      mamba_expand, shared_intermediate_size;
  std::vector<int64_t> attn_layer_indices;  // Bamba: the attention layers; the rest are Mamba2

  // MTP
  std::optional<int64_t> num_nextn_predict_layers, mtp_num_hidden_layers;

  // Gemma 4 (transformers configuration_gemma4.py): full layers' head size and KV heads, the
  // KV-shared tail, per-layer embeddings, the MoE block beside the dense MLP.
  std::optional<int64_t> global_head_dim, num_global_key_value_heads, num_kv_shared_layers,
      hidden_size_per_layer_input, vocab_size_per_layer_input, top_k_experts,
      expert_intermediate_size;
  std::optional<bool> attention_k_eq_v, enable_moe_block, use_double_wide_mlp;
  // GLM-4.5 / 4.6 and MiniMax-M2: RMSNorms on q and k (GLM-4.5-Air sets it false).
  std::optional<bool> use_qk_norm;

  // DFlash drafter: dflash_config.target_layer_ids, the target layers whose hidden states it
  // reads (vLLM's fc input is their count x the hidden size).
  std::vector<int64_t> dflash_target_layer_ids;

  RawRopeScaling rope_scaling;

  std::shared_ptr<RawConfig> text_config;  // nested LM config, when present
  RawVisionConfig vision_config;
  RawVisionConfig audio_config;  // Gemma 4 E2B/E4B: hidden_size, num_hidden_layers, output dims
  RawQuantConfig quantization_config;
};

// Parses a `rope_scaling` object (also the value of vLLM's --hf-overrides key); `origin` and
// `key` name it in errors. A null value leaves `out` absent.
Status ParseRopeScaling(std::string_view origin, std::string_view key,
                        const simdjson::dom::element& value, RawRopeScaling* out);

// Parses config.json text. `origin` is used as the message prefix.
Result<RawConfig> ParseConfigJson(std::string_view json, std::string_view origin);

}  // namespace vramfit::formats

#endif  // VRAMFIT_FORMATS_CONFIG_H_
