// config.json -> ModelSpec. Each supported family is one row of kFamilies: its attention
// extras, how its sliding-window and MoE layers are placed, and how its tensors are named.
// Field meanings follow the transformers configuration classes of each family
// (configuration_<family>.py, transformers 4.57) and are listed in docs/formats/config.md.
#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <utility>

#include "formats/config.h"
#include "formats/json_util.h"
#include "model/kv_share.h"
#include "vramfit/model.h"

namespace vramfit {
namespace {

using formats::RawConfig;

enum class SwaRule {
  kNone,         // no sliding window
  kQwenFlag,     // only when use_sliding_window is true (Qwen2/2.5 carry an inactive window)
  kWhenSet,      // whenever sliding_window is set and non-zero (Mistral, Mixtral)
  kAlternate,    // even layers sliding, odd layers global (Gemma 2)
  kPattern,      // layer i global iff (i+1) % pattern == 0, default pattern 6 (Gemma 3)
};
enum class MoeRule { kNone, kQwen, kMixtral, kDeepseek, kGptOss, kGranite, kGemma4 };
enum class NameStyle {
  kDefault,
  kQwenVl2,
  kLanguageModel,
  kGemma3Mm,
  kGemma4Mm,
  kMixtral,
  kGptOss,
  kDeepseek
};

struct Family {
  const char* model_type;   // text model_type this row matches
  const char* family;
  bool qkv_bias;            // default when attention_bias is absent
  bool qk_norm;
  bool hybrid_linear;       // Gated DeltaNet layers (Qwen3-Next, Qwen3.5)
  bool mla;
  SwaRule swa;
  MoeRule moe;
  NameStyle names;
  bool tie_default;
  int64_t mtp_default;      // MTP layers in the checkpoint when the config does not say
};

// One row per text model_type. Order does not matter.
constexpr std::array<Family, 33> kFamilies = {{
    {"qwen2", "qwen2", true, false, false, false, SwaRule::kQwenFlag, MoeRule::kNone,
     NameStyle::kDefault, false, 0},
    {"qwen2_moe", "qwen2_moe", true, false, false, false, SwaRule::kQwenFlag, MoeRule::kQwen,
     NameStyle::kDefault, false, 0},
    {"qwen2_vl", "qwen2_vl", true, false, false, false, SwaRule::kQwenFlag, MoeRule::kNone,
     NameStyle::kQwenVl2, false, 0},
    {"qwen2_vl_text", "qwen2_vl", true, false, false, false, SwaRule::kQwenFlag, MoeRule::kNone,
     NameStyle::kQwenVl2, false, 0},
    {"qwen2_5_vl", "qwen2_5_vl", true, false, false, false, SwaRule::kQwenFlag, MoeRule::kNone,
     NameStyle::kQwenVl2, false, 0},
    {"qwen2_5_vl_text", "qwen2_5_vl", true, false, false, false, SwaRule::kQwenFlag, MoeRule::kNone,
     NameStyle::kQwenVl2, false, 0},
    {"qwen3", "qwen3", false, true, false, false, SwaRule::kQwenFlag, MoeRule::kNone,
     NameStyle::kDefault, false, 0},
    {"qwen3_moe", "qwen3_moe", false, true, false, false, SwaRule::kQwenFlag, MoeRule::kQwen,
     NameStyle::kDefault, false, 0},
    {"qwen3_vl_text", "qwen3_vl", false, true, false, false, SwaRule::kNone, MoeRule::kNone,
     NameStyle::kLanguageModel, false, 0},
    {"qwen3_vl_moe_text", "qwen3_vl_moe", false, true, false, false, SwaRule::kNone, MoeRule::kQwen,
     NameStyle::kLanguageModel, false, 0},
    {"qwen3_next", "qwen3_next", false, true, true, false, SwaRule::kNone, MoeRule::kQwen,
     NameStyle::kDefault, false, 1},
    {"qwen3_5_text", "qwen3_5", false, true, true, false, SwaRule::kNone, MoeRule::kQwen,
     NameStyle::kLanguageModel, false, 0},
    {"qwen3_5_moe_text", "qwen3_5_moe", false, true, true, false, SwaRule::kNone, MoeRule::kQwen,
     NameStyle::kLanguageModel, false, 0},
    {"llama", "llama", false, false, false, false, SwaRule::kNone, MoeRule::kNone,
     NameStyle::kDefault, false, 0},
    // Phi-3, Phi-3.5 and Phi-4 (Phi3ForCausalLM, transformers models/phi3): Llama's layer with
    // q/k/v fused into qkv_proj and gate/up into gate_up_proj (the same parameters; the roles
    // read both names). Its sliding_window is not applied (the KV cache charged for every
    // token: pessimistic where an engine windows it).
    {"phi3", "phi3", false, false, false, false, SwaRule::kNone, MoeRule::kNone,
     NameStyle::kDefault, false, 0},
    {"mistral", "mistral", false, false, false, false, SwaRule::kWhenSet, MoeRule::kNone,
     NameStyle::kDefault, false, 0},
    {"mixtral", "mixtral", false, false, false, false, SwaRule::kWhenSet, MoeRule::kMixtral,
     NameStyle::kMixtral, false, 0},
    {"deepseek_v2", "deepseek_v2", false, false, false, true, SwaRule::kNone, MoeRule::kDeepseek,
     NameStyle::kDeepseek, false, 0},
    {"deepseek_v3", "deepseek_v3", false, false, false, true, SwaRule::kNone, MoeRule::kDeepseek,
     NameStyle::kDeepseek, false, 0},
    // GLM-4.5 / 4.6 / 4.7 (Glm4MoeForCausalLM, transformers models/glm4_moe): DeepSeek-V3's MoE
    // layout (first_k_dense_replace dense layers, n_shared_experts, a router with
    // e_score_correction_bias, num_nextn_predict_layers MTP layers) over GQA attention with
    // biased q/k/v projections.
    {"glm4_moe", "glm4_moe", true, false, false, false, SwaRule::kNone, MoeRule::kDeepseek,
     NameStyle::kDeepseek, false, 0},
    {"gemma2", "gemma2", false, false, false, false, SwaRule::kAlternate, MoeRule::kNone,
     NameStyle::kDefault, true, 0},
    {"gemma3_text", "gemma3", false, true, false, false, SwaRule::kPattern, MoeRule::kNone,
     NameStyle::kDefault, true, 0},
    {"gemma3", "gemma3", false, true, false, false, SwaRule::kPattern, MoeRule::kNone,
     NameStyle::kGemma3Mm, true, 0},
    // Gemma 4 (Gemma4ForConditionalGeneration, transformers models/gemma4): Gemma 3's 5 local
    // : 1 global pattern with wider global heads (global_head_dim), optionally K = V on global
    // layers, a KV-shared tail, per-layer embeddings (E2B/E4B) and a MoE block beside the dense
    // MLP (26B-A4B). Read by ApplyGemma4 below.
    // Gemma 3n (Gemma3nForConditionalGeneration, transformers models/gemma3n): the KV-shared
    // tail and per-layer embeddings Gemma 4's E models inherit, one head size for all layers.
    {"gemma3n_text", "gemma3n", false, true, false, false, SwaRule::kPattern, MoeRule::kNone,
     NameStyle::kDefault, true, 0},
    {"gemma3n", "gemma3n", false, true, false, false, SwaRule::kPattern, MoeRule::kNone,
     NameStyle::kGemma4Mm, true, 0},
    {"gemma4_text", "gemma4", false, true, false, false, SwaRule::kPattern, MoeRule::kGemma4,
     NameStyle::kDefault, true, 0},
    {"gemma4", "gemma4", false, true, false, false, SwaRule::kPattern, MoeRule::kGemma4,
     NameStyle::kGemma4Mm, true, 0},
    {"gpt_oss", "gpt_oss", true, false, false, false, SwaRule::kNone, MoeRule::kGptOss,
     NameStyle::kGptOss, false, 0},
    {"qwen3_vl", "qwen3_vl", false, true, false, false, SwaRule::kNone, MoeRule::kNone,
     NameStyle::kLanguageModel, false, 0},
    {"qwen3_5_moe", "qwen3_5_moe", false, true, true, false, SwaRule::kNone, MoeRule::kQwen,
     NameStyle::kLanguageModel, false, 0},
    // MiniMax-M2, M2.1, M2.5 (MiniMaxM2ForCausalLM; vLLM model_executor/models/minimax_m2.py,
    // the checkpoint's modeling_minimax_m2.py): Mixtral's block_sparse_moe (a router "gate",
    // experts w1/w3/w2 of intermediate_size, no shared expert) with a sigmoid router's
    // e_score_correction_bias, full GQA attention in every layer, and RMSNorms over all the
    // q and all the k heads at once (qk_norm_type "per_layer").
    {"minimax_m2", "minimax_m2", false, true, false, false, SwaRule::kNone, MoeRule::kMixtral,
     NameStyle::kMixtral, false, 0},
    // Granite 4.0 hybrid (GraniteMoeHybridForCausalLM, transformers models/granitemoehybrid):
    // layer_types "mamba" (a Mamba2 mixer) or "attention"; every layer has the shared MLP
    // (shared_intermediate_size) and, with num_local_experts > 0, routed experts too.
    {"granitemoehybrid", "granitemoehybrid", false, false, false, false, SwaRule::kNone,
     MoeRule::kGranite, NameStyle::kDefault, true, 0},
    // Bamba (BambaForCausalLM, transformers models/bamba): Mamba2 mixers but at
    // attn_layer_indices, a dense MLP in every layer.
    {"bamba", "bamba", false, false, false, false, SwaRule::kNone, MoeRule::kNone,
     NameStyle::kDefault, false, 0},
}};

// The generic decoder: a Llama-shaped model.
constexpr Family kGeneric = {"", "generic", false, false, false, false, SwaRule::kWhenSet,
                             MoeRule::kQwen, NameStyle::kDefault, false, 0};

const Family* FindFamily(std::string_view model_type) {
  for (const Family& f : kFamilies) {
    if (model_type == f.model_type) return &f;
  }
  return nullptr;
}

// A config whose model_type has no row, but whose architecture class is one vLLM runs with a
// family's code: vLLM picks the model class by config.architectures (ModelRegistry,
// vllm/model_executor/models/registry.py: "DeepseekV3ForCausalLM" -> deepseek_v2.py for
// Kimi-K2's model_type "kimi_k2", and fine-tunes that rename model_type but keep the class).
// The text model_type of the family that class implements, or nullptr.
const Family* FindFamilyByArchitecture(std::string_view architecture) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 17> kByClass = {{
      {"DeepseekV3ForCausalLM", "deepseek_v3"},
      {"DeepseekV2ForCausalLM", "deepseek_v2"},
      {"Qwen2ForCausalLM", "qwen2"},
      {"Qwen2MoeForCausalLM", "qwen2_moe"},
      {"Qwen3ForCausalLM", "qwen3"},
      {"Qwen3MoeForCausalLM", "qwen3_moe"},
      {"Qwen3NextForCausalLM", "qwen3_next"},
      {"LlamaForCausalLM", "llama"},
      {"MistralForCausalLM", "mistral"},
      {"MixtralForCausalLM", "mixtral"},
      {"Phi3ForCausalLM", "phi3"},
      {"Gemma2ForCausalLM", "gemma2"},
      {"Gemma3ForCausalLM", "gemma3_text"},
      {"Glm4MoeForCausalLM", "glm4_moe"},
      {"GptOssForCausalLM", "gpt_oss"},
      {"GraniteMoeHybridForCausalLM", "granitemoehybrid"},
      {"MiniMaxM2ForCausalLM", "minimax_m2"},
  }};
  for (const auto& [cls, type] : kByClass) {
    if (architecture == cls) return FindFamily(type);
  }
  return nullptr;
}

bool ParseTorchDtype(std::string_view s, Dtype* out) {
  if (s == "bfloat16") { *out = Dtype::kBF16; return true; }
  if (s == "float16" || s == "half" || s == "fp16") { *out = Dtype::kF16; return true; }
  if (s == "float32" || s == "float" || s == "fp32") { *out = Dtype::kF32; return true; }
  return false;
}

// Reads a field from the text config, falling back to the top level.
template <typename T>
T Pick(const RawConfig& text, const RawConfig& top, T RawConfig::*m) {
  if (text.*m) return text.*m;
  return top.*m;
}

void ApplyNaming(NameStyle style, const Family& fam, ModelSpec* spec) {
  NamingSpec& n = spec->naming;
  switch (style) {
    case NameStyle::kDefault: break;
    case NameStyle::kQwenVl2: n.vision = "visual."; break;
    case NameStyle::kLanguageModel:
    case NameStyle::kGemma4Mm:
      // Gemma4ForConditionalGeneration: Gemma4Model holds language_model, vision_tower,
      // embed_vision (and audio_tower, embed_audio on E2B/E4B); lm_head is tied.
      n.layers = "model.language_model.layers.";
      n.embed = "model.language_model.embed_tokens.weight";
      n.final_norm = "model.language_model.norm.weight";
      n.vision = style == NameStyle::kGemma4Mm ? "model.vision_tower." : "model.visual.";
      break;
    case NameStyle::kGemma3Mm:
      n.layers = "language_model.model.layers.";
      n.embed = "language_model.model.embed_tokens.weight";
      n.final_norm = "language_model.model.norm.weight";
      n.lm_head = "language_model.lm_head.weight";
      n.vision = "vision_tower.vision_model.";
      break;
    case NameStyle::kMixtral:
      n.moe = "block_sparse_moe.";
      n.mixtral_expert_names = true;
      break;
    case NameStyle::kGptOss:
      n.router = "router";
      n.fused_experts = true;
      break;
    case NameStyle::kDeepseek:
      n.shared = "shared_experts.";
      break;
  }
  if (std::string_view(fam.family).rfind("gemma", 0) == 0) n.gemma_norms = true;
  // Qwen3-VL-MoE stores each layer's experts as two fused parameters (transformers
  // Qwen3VLMoeTextExperts: gate_up_proj [E, H, 2I], down_proj [E, I, H]).
  if (std::string_view(fam.family) == "qwen3_vl_moe") n.fused_experts = true;
}

Status Bad(std::string_view origin, std::string_view key, std::string_view msg) {
  return Status::Corrupt(fmt::format("{}: \"{}\": {}", origin, key, msg));
}

// Gemma 4's per-layer geometry (transformers modeling_gemma4.py Gemma4TextAttention and
// Gemma4TextDecoderLayer; vLLM models/gemma4.py reads the same fields):
//   - full-attention layers use global_head_dim (default 512); with attention_k_eq_v they have
//     num_global_key_value_heads KV heads (default num_key_value_heads) and no v_proj;
//   - the last num_kv_shared_layers layers reuse the K/V of the last earlier layer of their
//     kind (kv_sharing_target_layer_name in vLLM): no k/v projections, no cache of their own;
//   - use_double_wide_mlp doubles the MLP of those KV-shared layers;
//   - without layer_types the pattern is 5 sliding : 1 full with the last layer forced full.
// Gemma 3n (modeling_gemma3n.py) has the same KV-shared tail and per-layer embeddings, with one
// head size for every layer.
Status ApplyGemma4(const RawConfig& t, const RawConfig& top,
                   const std::vector<std::string>& layer_types, std::string_view origin,
                   ModelSpec* spec) {
  const int64_t n = static_cast<int64_t>(spec->layers.size());
  if (layer_types.empty() && n > 0) {
    LayerSpec& last = spec->layers.back();
    last.attention.kind = AttentionKind::kFull;
    last.attention.sliding_window = 0;
  }
  const auto global_dim = Pick(t, top, &RawConfig::global_head_dim);
  const auto k_eq_v = Pick(t, top, &RawConfig::attention_k_eq_v);
  const auto global_kv = Pick(t, top, &RawConfig::num_global_key_value_heads);
  const auto shared = Pick(t, top, &RawConfig::num_kv_shared_layers);
  const auto wide = Pick(t, top, &RawConfig::use_double_wide_mlp);
  const int64_t n_shared = shared ? *shared : 0;
  if (n_shared >= n && n_shared > 0) {
    return Bad(origin, "num_kv_shared_layers",
               fmt::format("{} shared layers leave no layer of the {} to hold a KV cache",
                           n_shared, n));
  }
  const int64_t first_shared = n - n_shared;
  for (int64_t i = 0; i < n; ++i) {
    AttentionSpec& a = spec->layers[static_cast<size_t>(i)].attention;
    if (a.kind == AttentionKind::kFull && spec->family == "gemma4") {
      a.head_dim = global_dim ? *global_dim : 512;
      if (k_eq_v && *k_eq_v) {
        a.k_eq_v = true;
        if (global_kv) a.num_kv_heads = *global_kv;
        if (a.num_kv_heads <= 0 || a.num_heads % a.num_kv_heads != 0) {
          return Bad(origin, "num_global_key_value_heads",
                     fmt::format("{} KV heads do not divide {} attention heads", a.num_kv_heads,
                                 a.num_heads));
        }
      }
    }
    if (n_shared > 0 && i >= first_shared) {
      a.kv_shared = true;
      // The target is the last non-shared layer of the same kind; a kind with none (a
      // malformed layer_types) has nothing to share.
      if (model::KvShareTarget(*spec, i) < 0) {
        return Bad(origin, "num_kv_shared_layers",
                   fmt::format("layer {} ({}) shares the KV of an earlier layer of its kind, "
                               "but no earlier layer has that kind",
                               i, AttentionKindName(a.kind)));
      }
      MlpSpec& m = spec->layers[static_cast<size_t>(i)].mlp;
      if (wide && *wide && m.kind == MlpKind::kDense) m.intermediate_size *= 2;
    }
  }
  const auto per_layer = Pick(t, top, &RawConfig::hidden_size_per_layer_input);
  if (per_layer && *per_layer > 0) {
    spec->per_layer_input_size = *per_layer;
    const auto v = Pick(t, top, &RawConfig::vocab_size_per_layer_input);
    spec->per_layer_vocab_size = v ? *v : spec->vocab_size;
  }
  return Status::Ok();
}

}  // namespace

const char* AttentionKindName(AttentionKind k) {
  switch (k) {
    case AttentionKind::kFull: return "full_attention";
    case AttentionKind::kSliding: return "sliding_attention";
    case AttentionKind::kMla: return "mla";
    case AttentionKind::kLinear: return "linear_attention";
  }
  return "?";
}

int64_t ModelSpec::CountAttention(AttentionKind k) const {
  return std::count_if(layers.begin(), layers.end(),
                       [k](const LayerSpec& l) { return l.attention.kind == k; });
}
int64_t ModelSpec::CountMoeLayers() const {
  return std::count_if(layers.begin(), layers.end(),
                       [](const LayerSpec& l) { return l.mlp.kind == MlpKind::kMoe; });
}

// Declared in src/model/quant.cc.
QuantScheme QuantSchemeFromRaw(const formats::RawQuantConfig& raw,
                               std::vector<std::string>* warnings);

Result<ModelSpec> ModelSpecFromRaw(const RawConfig& top, std::string_view origin) {
  const RawConfig& t = top.text_config ? *top.text_config : top;
  ModelSpec spec;
  spec.architecture = top.architectures.empty() ? "" : top.architectures.front();
  spec.model_type = !t.model_type.empty() ? t.model_type : top.model_type;

  const Family* fam = FindFamily(spec.model_type);
  if (fam == nullptr && top.text_config) fam = FindFamily(top.model_type);
  if (fam == nullptr) {
    fam = FindFamilyByArchitecture(spec.architecture);
    if (fam != nullptr) {
      spec.warnings.push_back(fmt::format(
          "model_type \"{}\" has no rules of its own: read by its architecture {} as the {} "
          "family (vLLM picks the model class by the architecture)",
          spec.model_type, spec.architecture, fam->family));
    }
  }
  if (fam == nullptr) {
    fam = &kGeneric;
    spec.generic = true;
    spec.warnings.push_back(fmt::format(
        "unknown architecture {} (model_type \"{}\"): read as a generic decoder (Llama-shaped "
        "attention and MLP); per-layer details may be wrong",
        spec.architecture.empty() ? "(none)" : spec.architecture, spec.model_type));
    // A hybrid block pattern (Nemotron-H) read as a generic decoder charges K/V in every block,
    // Mamba2 and MLP blocks included: far above the few attention blocks' cache.
    const std::string& pattern = !t.hybrid_override_pattern.empty()
                                     ? t.hybrid_override_pattern
                                     : top.hybrid_override_pattern;
    if (!pattern.empty()) {
      spec.warnings.push_back(fmt::format(
          "hybrid_override_pattern \"{}\": only its '*' blocks ({}) are attention, but the "
          "generic reading gives every block a K/V cache and no Mamba2 state; the KV cache is "
          "overstated (Nemotron-H blocks are not modelled)",
          pattern.size() > 64 ? pattern.substr(0, 64) + "..." : pattern,
          std::count(pattern.begin(), pattern.end(), '*')));
    }
  }
  spec.family = fam->family;
  // Gemma 3's multimodal wrapper names tensors differently from the text-only model.
  NameStyle names = fam->names;
  if (std::string_view(fam->family) == "gemma3" && top.model_type == "gemma3")
    names = NameStyle::kGemma3Mm;
  if (std::string_view(fam->family) == "gemma3" && top.model_type != "gemma3")
    names = NameStyle::kDefault;
  if (std::string_view(fam->family) == "gemma4" || std::string_view(fam->family) == "gemma3n") {
    names = top.model_type == "gemma4" || top.model_type == "gemma3n" ? NameStyle::kGemma4Mm
                                                                      : NameStyle::kDefault;
  }
  ApplyNaming(names, *fam, &spec);

  // Core dimensions.
  const auto hidden = Pick(t, top, &RawConfig::hidden_size);
  const auto layers = Pick(t, top, &RawConfig::num_hidden_layers);
  auto heads = Pick(t, top, &RawConfig::num_attention_heads);
  auto vocab = Pick(t, top, &RawConfig::vocab_size);
  // Google's sparse Gemma 3 configs (gemma-3-4b-it) leave out what equals Gemma3TextConfig's
  // defaults: 8 attention heads, 4 KV heads, head_dim 256 (transformers
  // models/gemma3/configuration_gemma3.py, Gemma3TextConfig.__init__).
  const bool gemma3_defaults = spec.family == "gemma3" && !heads;
  if (gemma3_defaults) {
    heads = 8;
    spec.warnings.push_back(
        "num_attention_heads, num_key_value_heads and head_dim absent: using Gemma3TextConfig's "
        "defaults 8, 4 and 256");
  }
  if (!hidden) return Bad(origin, "hidden_size", "missing: every decoder config must give it");
  if (!layers)
    return Bad(origin, "num_hidden_layers", "missing: every decoder config must give it");
  if (!heads && !fam->mla) return Bad(origin, "num_attention_heads", "missing");
  if (!vocab) {
    if (spec.family == "gemma3") {
      vocab = 262208;  // Gemma3TextConfig default (transformers configuration_gemma3.py)
      spec.warnings.push_back("vocab_size absent: using Gemma3TextConfig's default 262208");
    } else if (spec.family == "gemma4") {
      vocab = 262144;  // Gemma4TextConfig default (transformers configuration_gemma4.py)
      spec.warnings.push_back("vocab_size absent: using Gemma4TextConfig's default 262144");
    } else if (spec.family == "gemma3n") {
      vocab = 262400;  // Gemma3nTextConfig default (transformers configuration_gemma3n.py)
      spec.warnings.push_back("vocab_size absent: using Gemma3nTextConfig's default 262400");
    } else {
      return Bad(origin, "vocab_size", "missing");
    }
  }
  spec.hidden_size = *hidden;
  spec.vocab_size = *vocab;
  const auto max_pos = Pick(t, top, &RawConfig::max_position_embeddings);
  const bool gemma =
      spec.family == "gemma3" || spec.family == "gemma4" || spec.family == "gemma3n";
  spec.max_position_embeddings = max_pos ? *max_pos : (gemma ? 131072 : 0);
  {
    const auto& rs = t.rope_scaling.present ? t.rope_scaling : top.rope_scaling;
    spec.rope_scaling.type = rs.type;
    spec.rope_scaling.factor = rs.factor.value_or(0);
    spec.rope_scaling.original_max_position_embeddings =
        rs.original_max_position_embeddings.value_or(0);
  }
  const auto tie = Pick(t, top, &RawConfig::tie_word_embeddings);
  spec.tie_word_embeddings = tie ? *tie : fam->tie_default;

  const std::string& dtype_text = !t.dtype.empty() ? t.dtype : !top.dtype.empty() ? top.dtype
                                 : !t.torch_dtype.empty() ? t.torch_dtype : top.torch_dtype;
  if (dtype_text.empty()) {
    spec.warnings.push_back("config gives no dtype/torch_dtype: assuming bfloat16 weights");
  } else if (!ParseTorchDtype(dtype_text, &spec.dtype)) {
    return Bad(origin, "torch_dtype",
               fmt::format("expected bfloat16, float16 or float32, found \"{}\"", dtype_text));
  }
  spec.ssm_state_dtype = spec.dtype;
  const std::string& ssm = !t.mamba_ssm_dtype.empty() ? t.mamba_ssm_dtype : top.mamba_ssm_dtype;
  if (!ssm.empty() && !ParseTorchDtype(ssm, &spec.ssm_state_dtype)) {
    return Bad(origin, "mamba_ssm_dtype",
               fmt::format("expected bfloat16, float16 or float32, found \"{}\"", ssm));
  }

  // Attention shared by all layers.
  AttentionSpec base;
  base.num_heads = heads ? *heads : 0;
  auto kv = Pick(t, top, &RawConfig::num_key_value_heads);
  if (!kv && spec.family == "gemma3") kv = 4;  // Gemma3TextConfig default
  base.num_kv_heads = kv ? *kv : base.num_heads;
  auto head_dim = Pick(t, top, &RawConfig::head_dim);
  if (!head_dim && spec.family == "gemma3") head_dim = 256;  // Gemma3TextConfig default
  if (head_dim) {
    base.head_dim = *head_dim;
  } else if (base.num_heads > 0) {
    if (spec.hidden_size % base.num_heads != 0 && !fam->mla) {
      return Bad(origin, "num_attention_heads",
                 fmt::format("{} heads do not divide hidden_size {} and no head_dim is given",
                             base.num_heads, spec.hidden_size));
    }
    base.head_dim = spec.hidden_size / base.num_heads;
  }
  if (base.num_heads > 0 && base.num_kv_heads > base.num_heads) {
    return Bad(
        origin, "num_key_value_heads",
        fmt::format("{} KV heads exceed {} attention heads", base.num_kv_heads, base.num_heads));
  }
  if (base.num_heads > 0 && base.num_heads % base.num_kv_heads != 0) {
    return Bad(origin, "num_key_value_heads",
               fmt::format("{} KV heads do not divide {} attention heads", base.num_kv_heads,
                           base.num_heads));
  }
  const auto attn_bias = Pick(t, top, &RawConfig::attention_bias);
  base.qkv_bias = attn_bias ? *attn_bias : fam->qkv_bias;
  // GLM-4.5's attention_bias biases q, k and v only (transformers Glm4MoeAttention: o_proj
  // bias=False), as Qwen2's does.
  base.o_bias = attn_bias ? *attn_bias && spec.family != "qwen2" && spec.family != "glm4_moe"
                          : false;
  if (spec.family == "gpt_oss") { base.o_bias = base.qkv_bias; base.sinks = true; }
  // use_qk_norm where the config says it (GLM-4.5 true, GLM-4.5-Air false; MiniMax-M2), else
  // the family's rule.
  const auto use_qk_norm = Pick(t, top, &RawConfig::use_qk_norm);
  base.qk_norm = use_qk_norm ? *use_qk_norm : fam->qk_norm;
  base.qk_norm_whole = spec.family == "minimax_m2";
  const auto gate = Pick(t, top, &RawConfig::attn_output_gate);
  base.output_gate = gate ? *gate : spec.family == "qwen3_next";
  if (fam->mla) {
    base.kind = AttentionKind::kMla;
    const auto kvr = Pick(t, top, &RawConfig::kv_lora_rank);
    const auto rope = Pick(t, top, &RawConfig::qk_rope_head_dim);
    const auto nope = Pick(t, top, &RawConfig::qk_nope_head_dim);
    const auto vhd = Pick(t, top, &RawConfig::v_head_dim);
    if (!kvr || !rope || !nope || !vhd) {
      return Bad(origin,
                 !kvr    ? "kv_lora_rank"
                 : !rope ? "qk_rope_head_dim"
                 : !nope ? "qk_nope_head_dim"
                         : "v_head_dim",
                 "missing: MLA (DeepSeek) configs must give kv_lora_rank, qk_rope_head_dim, "
                 "qk_nope_head_dim and v_head_dim");
    }
    const auto qr = Pick(t, top, &RawConfig::q_lora_rank);
    base.q_lora_rank = qr ? *qr : 0;
    base.kv_lora_rank = *kvr;
    base.qk_rope_head_dim = *rope;
    base.qk_nope_head_dim = *nope;
    base.v_head_dim = *vhd;
    base.head_dim = *nope + *rope;
    base.num_kv_heads = base.num_heads;
  }

  // Which layers are which.
  const int64_t n = *layers;
  const bool mamba2 = spec.family == "granitemoehybrid" || spec.family == "bamba";
  std::vector<AttentionKind> kinds(n, base.kind);
  const std::vector<std::string>& layer_types =
      !t.layer_types.empty() ? t.layer_types : top.layer_types;
  const auto window = Pick(t, top, &RawConfig::sliding_window);
  if (!layer_types.empty()) {
    if (static_cast<int64_t>(layer_types.size()) != n) {
      return Bad(
          origin, "layer_types",
          fmt::format("lists {} layers, but num_hidden_layers is {}", layer_types.size(), n));
    }
    for (int64_t i = 0; i < n; ++i) {
      const std::string& lt = layer_types[i];
      if (lt == "full_attention" || lt == "attention") kinds[i] = base.kind;
      else if (lt == "sliding_attention" || lt == "chunked_attention")
        kinds[i] = AttentionKind::kSliding;
      else if (lt == "linear_attention" || (lt == "mamba" && mamba2))
        kinds[i] = AttentionKind::kLinear;
      else return Bad(origin, fmt::format("layer_types[{}]", i),
                      fmt::format("expected full_attention, sliding_attention, chunked_attention "
                                  "or linear_attention, found \"{}\"{}",
                                  lt, lt == "mamba" ? " (Mamba2 layers are read for the Granite "
                                                      "4.0 hybrid and Bamba families)"
                                                    : ""));
    }
  } else if (spec.family == "bamba") {
    const std::vector<int64_t>& attn =
        !t.attn_layer_indices.empty() ? t.attn_layer_indices : top.attn_layer_indices;
    for (int64_t i = 0; i < n; ++i) {
      kinds[i] = std::find(attn.begin(), attn.end(), i) != attn.end() ? base.kind
                                                                      : AttentionKind::kLinear;
    }
  } else if (fam->hybrid_linear) {
    const auto interval = Pick(t, top, &RawConfig::full_attention_interval);
    const int64_t every = interval ? *interval : 4;
    for (int64_t i = 0; i < n; ++i) {
      kinds[i] = (i + 1) % every == 0 ? AttentionKind::kFull : AttentionKind::kLinear;
    }
  } else {
    const auto use_swa = Pick(t, top, &RawConfig::use_sliding_window);
    const bool has_window = window && *window > 0;
    switch (fam->swa) {
      case SwaRule::kNone: break;
      case SwaRule::kQwenFlag:
        if (has_window && use_swa && *use_swa) {
          // Qwen2: layers at index >= max_window_layers use sliding window.
          const auto mwl = Pick(t, top, &RawConfig::max_window_layers);
          for (int64_t i = mwl ? *mwl : 0; i < n; ++i) kinds[i] = AttentionKind::kSliding;
        }
        break;
      case SwaRule::kWhenSet:
        if (has_window) std::fill(kinds.begin(), kinds.end(), AttentionKind::kSliding);
        break;
      case SwaRule::kAlternate:
        if (has_window) for (int64_t i = 0; i < n; i += 2) kinds[i] = AttentionKind::kSliding;
        break;
      case SwaRule::kPattern: {
        const auto pat = Pick(t, top, &RawConfig::sliding_window_pattern);
        const int64_t p = pat && *pat > 0 ? *pat : 6;
        for (int64_t i = 0; i < n; ++i) {
          kinds[i] = (i + 1) % p == 0 ? AttentionKind::kFull : AttentionKind::kSliding;
        }
        break;
      }
    }
  }
  if (std::find(kinds.begin(), kinds.end(), AttentionKind::kSliding) != kinds.end()) {
    if (!window || *window <= 0) {
      if (spec.family == "gemma3") {
        spec.warnings.push_back("sliding_window absent: using Gemma3TextConfig's default 4096");
      } else if (spec.family == "gemma4" || spec.family == "gemma3n") {
        spec.warnings.push_back("sliding_window absent: using the Gemma 4 / 3n default 512");
      } else {
        return Bad(origin, "sliding_window",
                   "sliding-attention layers are declared but no window is given");
      }
    }
  }

  // Linear attention fields.
  AttentionSpec lin = base;
  lin.kind = AttentionKind::kLinear;
  if (mamba2 && std::find(kinds.begin(), kinds.end(), AttentionKind::kLinear) != kinds.end()) {
    // MambaMixer2's widths (vLLM models/granitemoehybrid.py and bamba.py
    // get_mamba_state_shape_from_config, read at 0.22): intermediate = mamba_expand x hidden.
    const auto nh = Pick(t, top, &RawConfig::mamba_n_heads);
    const auto hd = Pick(t, top, &RawConfig::mamba_d_head);
    const auto st = Pick(t, top, &RawConfig::mamba_d_state);
    const auto ng = Pick(t, top, &RawConfig::mamba_n_groups);
    const auto ck = Pick(t, top, &RawConfig::mamba_d_conv);
    const auto ex = Pick(t, top, &RawConfig::mamba_expand);
    if (!nh || !hd || !st) {
      return Bad(origin, !nh ? "mamba_n_heads" : !hd ? "mamba_d_head" : "mamba_d_state",
                 "missing: Mamba2 layers need mamba_n_heads, mamba_d_head and mamba_d_state");
    }
    lin.mamba2 = true;
    lin.mamba_num_heads = *nh;
    lin.mamba_head_dim = *hd;
    lin.mamba_state_size = *st;
    lin.mamba_groups = ng ? *ng : 1;
    lin.linear_conv_kernel_dim = ck ? *ck : 4;
    lin.mamba_intermediate = (ex ? *ex : 2) * spec.hidden_size;
    if (lin.mamba_intermediate != lin.mamba_num_heads * lin.mamba_head_dim) {
      return Bad(origin, "mamba_n_heads",
                 fmt::format("{} heads of {} do not make the Mamba2 inner width {} (mamba_expand "
                             "x hidden_size)",
                             *nh, *hd, lin.mamba_intermediate));
    }
  } else if (std::find(kinds.begin(), kinds.end(), AttentionKind::kLinear) != kinds.end()) {
    const auto kh = Pick(t, top, &RawConfig::linear_num_key_heads);
    const auto vh = Pick(t, top, &RawConfig::linear_num_value_heads);
    const auto kd = Pick(t, top, &RawConfig::linear_key_head_dim);
    const auto vd = Pick(t, top, &RawConfig::linear_value_head_dim);
    const auto ck = Pick(t, top, &RawConfig::linear_conv_kernel_dim);
    if (!kh || !vh || !kd || !vd || !ck) {
      return Bad(origin,
                 !kh   ? "linear_num_key_heads"
                 : !vh ? "linear_num_value_heads"
                 : !kd ? "linear_key_head_dim"
                 : !vd ? "linear_value_head_dim"
                       : "linear_conv_kernel_dim",
                 "missing: linear-attention layers need linear_num_key_heads, "
                 "linear_num_value_heads, linear_key_head_dim, linear_value_head_dim and "
                 "linear_conv_kernel_dim");
    }
    if (*vh % *kh != 0) {
      return Bad(origin, "linear_num_value_heads",
                 fmt::format("{} value heads are not a multiple of {} key heads", *vh, *kh));
    }
    lin.linear_num_key_heads = *kh;
    lin.linear_num_value_heads = *vh;
    lin.linear_key_head_dim = *kd;
    lin.linear_value_head_dim = *vd;
    lin.linear_conv_kernel_dim = *ck;
  }

  // MLP placement.
  MlpSpec dense;
  dense.kind = MlpKind::kDense;
  const auto inter = Pick(t, top, &RawConfig::intermediate_size);
  dense.intermediate_size = inter ? *inter : 0;
  const auto mlp_bias = Pick(t, top, &RawConfig::mlp_bias);
  dense.bias = mlp_bias && *mlp_bias;
  if (fam->moe == MoeRule::kGranite) {
    // Without routed experts the shared MLP is the whole MLP.
    const auto shared = Pick(t, top, &RawConfig::shared_intermediate_size);
    const auto experts = Pick(t, top, &RawConfig::num_local_experts);
    if (shared && *shared > 0 && (!experts || *experts == 0)) dense.intermediate_size = *shared;
  }
  MlpSpec moe;
  moe.kind = MlpKind::kMoe;
  std::vector<bool> is_moe(n, false);
  auto first = [](std::initializer_list<std::optional<int64_t>> xs) -> int64_t {
    for (const auto& x : xs) if (x) return *x;
    return 0;
  };
  moe.num_experts =
      first({Pick(t, top, &RawConfig::num_experts), Pick(t, top, &RawConfig::num_local_experts),
             Pick(t, top, &RawConfig::n_routed_experts)});
  moe.experts_per_token = first({Pick(t, top, &RawConfig::num_experts_per_tok),
                                 Pick(t, top, &RawConfig::experts_per_token),
                                 Pick(t, top, &RawConfig::top_k_experts)});
  auto moe_inter = Pick(t, top, &RawConfig::moe_intermediate_size);
  if (!moe_inter) moe_inter = Pick(t, top, &RawConfig::expert_intermediate_size);
  moe.expert_intermediate_size = moe_inter ? *moe_inter : dense.intermediate_size;
  if (moe.num_experts > 0) {
    switch (fam->moe) {
      case MoeRule::kNone: break;
      case MoeRule::kQwen: {
        const auto step = Pick(t, top, &RawConfig::decoder_sparse_step);
        const int64_t s = step && *step > 0 ? *step : 1;
        const std::vector<int64_t>& only =
            !t.mlp_only_layers.empty() ? t.mlp_only_layers : top.mlp_only_layers;
        for (int64_t i = 0; i < n; ++i) {
          is_moe[i] = std::find(only.begin(), only.end(), i) == only.end() && (i + 1) % s == 0;
        }
        const auto shared = Pick(t, top, &RawConfig::shared_expert_intermediate_size);
        if (shared && *shared > 0) {
          moe.num_shared_experts = 1;
          moe.shared_intermediate_size = *shared;
          moe.shared_expert_gate = true;
        }
        break;
      }
      case MoeRule::kMixtral:
        std::fill(is_moe.begin(), is_moe.end(), true);
        // MiniMax-M2's sigmoid router adds a float32 e_score_correction_bias per expert.
        moe.router_score_bias = spec.family == "minimax_m2";
        break;
      case MoeRule::kGptOss:
        std::fill(is_moe.begin(), is_moe.end(), true);
        moe.router_bias = true;
        moe.bias = true;
        break;
      case MoeRule::kGranite: {
        // Routed experts of intermediate_size in every layer, beside the shared MLP.
        std::fill(is_moe.begin(), is_moe.end(), true);
        moe.expert_intermediate_size = dense.intermediate_size;
        const auto shared = Pick(t, top, &RawConfig::shared_intermediate_size);
        if (shared && *shared > 0) {
          moe.num_shared_experts = 1;
          moe.shared_intermediate_size = *shared;
        }
        break;
      }
      case MoeRule::kGemma4: {
        // enable_moe_block: every layer routes to experts and runs its dense MLP beside them,
        // the two outputs added (Gemma4TextDecoderLayer); the dense MLP is carried as one
        // ungated shared expert of intermediate_size.
        const auto on = Pick(t, top, &RawConfig::enable_moe_block);
        if (on && *on) {
          std::fill(is_moe.begin(), is_moe.end(), true);
          moe.num_shared_experts = 1;
          moe.shared_intermediate_size = dense.intermediate_size;
        }
        break;
      }
      case MoeRule::kDeepseek: {
        const auto k = Pick(t, top, &RawConfig::first_k_dense_replace);
        const auto freq = Pick(t, top, &RawConfig::moe_layer_freq);
        const int64_t f = freq && *freq > 0 ? *freq : 1;
        for (int64_t i = 0; i < n; ++i) is_moe[i] = i >= (k ? *k : 0) && i % f == 0;
        const auto ns = Pick(t, top, &RawConfig::n_shared_experts);
        if (ns && *ns > 0) {
          moe.num_shared_experts = *ns;
          moe.shared_intermediate_size = *ns * moe.expert_intermediate_size;
        }
        moe.router_score_bias = spec.family == "deepseek_v3" || spec.family == "glm4_moe";
        break;
      }
    }
    if (moe.experts_per_token <= 0 || moe.experts_per_token > moe.num_experts) {
      return Bad(origin, "num_experts_per_tok",
                 fmt::format("expected 1..{} experts per token, found {}", moe.num_experts,
                             moe.experts_per_token));
    }
    if (moe.expert_intermediate_size <= 0) {
      return Bad(origin, "moe_intermediate_size", "missing or zero for a mixture-of-experts model");
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    if (!is_moe[i] && dense.intermediate_size <= 0) {
      return Bad(origin, "intermediate_size",
                 fmt::format("missing or zero, but layer {} has a dense MLP", i));
    }
  }

  spec.layers.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    LayerSpec& l = spec.layers[i];
    l.attention = kinds[i] == AttentionKind::kLinear ? lin : base;
    l.attention.kind = kinds[i];
    if (kinds[i] == AttentionKind::kSliding)
      l.attention.sliding_window =
          window && *window > 0 ? *window
          : spec.family == "gemma4" || spec.family == "gemma3n" ? 512
                                                                : 4096;
    l.mlp = is_moe[i] ? moe : dense;
  }
  if (spec.family == "gemma4" || spec.family == "gemma3n")
    VRAMFIT_RETURN_IF_ERROR(ApplyGemma4(t, top, layer_types, origin, &spec));
  if (spec.family == "gemma3n") {
    spec.warnings.push_back(
        "Gemma 3n: AltUp and LAuReL's small per-layer weights and the MobileNet-V5 vision tower "
        "are not synthesized from config.json (a checkpoint's own headers count them)");
  }

  spec.mtp_layers = first({Pick(t, top, &RawConfig::num_nextn_predict_layers),
                           Pick(t, top, &RawConfig::mtp_num_hidden_layers)});
  if (!Pick(t, top, &RawConfig::num_nextn_predict_layers) &&
      !Pick(t, top, &RawConfig::mtp_num_hidden_layers)) {
    spec.mtp_layers = fam->mtp_default;
  }
  spec.dflash_target_layers = static_cast<int64_t>(top.dflash_target_layer_ids.size());

  // Vision tower.
  const formats::RawVisionConfig& v = top.vision_config;
  if (v.present) {
    VisionSpec& vs = spec.vision;
    vs.kind = spec.family == "qwen2_5_vl" ? VisionKind::kQwen25Vl
              : spec.family == "qwen2_vl" ? VisionKind::kQwen2Vl
              : (spec.family == "qwen3_vl" || spec.family == "qwen3_vl_moe" ||
                 spec.family == "qwen3_5" || spec.family == "qwen3_5_moe")
                  ? VisionKind::kQwen3Vl
              : spec.family == "gemma3" ? VisionKind::kSiglip
              : spec.family == "gemma4" ? VisionKind::kGemma4
              // Mistral Small 3.1/3.2, Magistral (Mistral3ForConditionalGeneration): Pixtral.
              : spec.family == "mistral" && top.model_type == "mistral3" ? VisionKind::kPixtral
                                        : VisionKind::kOther;
    vs.depth = v.depth ? *v.depth : (v.num_hidden_layers ? *v.num_hidden_layers : 0);
    vs.hidden_size = v.hidden_size ? *v.hidden_size : (v.embed_dim ? *v.embed_dim : 0);
    vs.intermediate_size = v.intermediate_size ? *v.intermediate_size : 0;
    vs.num_heads =
        v.num_heads ? *v.num_heads : (v.num_attention_heads ? *v.num_attention_heads : 0);
    vs.patch_size =
        v.patch_size ? *v.patch_size : (v.spatial_patch_size ? *v.spatial_patch_size : 14);
    vs.temporal_patch_size = v.temporal_patch_size ? *v.temporal_patch_size : 1;
    vs.spatial_merge_size = v.spatial_merge_size ? *v.spatial_merge_size : 1;
    vs.in_channels = v.in_channels ? *v.in_channels : (v.num_channels ? *v.num_channels : 3);
    vs.out_hidden_size = v.out_hidden_size ? *v.out_hidden_size : spec.hidden_size;
    vs.num_position_embeddings = v.num_position_embeddings ? *v.num_position_embeddings : 0;
    vs.image_size = v.image_size ? *v.image_size : 0;
    vs.deepstack_indexes = v.deepstack_visual_indexes;
    if (vs.kind == VisionKind::kSiglip) {
      // SigLIP-so400m defaults (transformers SiglipVisionConfig as used by Gemma 3).
      if (vs.depth == 0) vs.depth = 27;
      if (vs.hidden_size == 0) vs.hidden_size = 1152;
      if (vs.intermediate_size == 0) vs.intermediate_size = 4304;
      if (vs.image_size == 0) vs.image_size = 896;
    }
    if (vs.kind == VisionKind::kGemma4) {
      // Gemma4VisionConfig defaults (transformers configuration_gemma4.py): the E2B/E4B tower.
      if (vs.depth == 0) vs.depth = 16;
      if (vs.hidden_size == 0) vs.hidden_size = 768;
      if (vs.intermediate_size == 0) vs.intermediate_size = 3072;
      if (vs.num_heads == 0) vs.num_heads = 12;
      if (!v.patch_size) vs.patch_size = 16;
      vs.pooling_kernel_size = v.pooling_kernel_size.value_or(3);
      vs.soft_tokens_per_image = v.default_output_length.value_or(280);
    }
    if (vs.kind == VisionKind::kPixtral && !v.spatial_merge_size) {
      // Mistral3Config keeps spatial_merge_size at the top level, default 2 (transformers
      // models/mistral3/configuration_mistral3.py): the projector merges 2 x 2 patches.
      vs.spatial_merge_size = 2;
    }
    if (vs.kind == VisionKind::kQwen25Vl) {
      // Qwen2.5-VL-3B's published vision_config gives only the widths; the rest are the
      // defaults of transformers' Qwen25VisionConfig (models/qwen2_5_vl/configuration_qwen2_5_vl.py
      // @ aa0dc95), which vLLM reads the config through.
      if (vs.depth == 0) vs.depth = 32;
      if (vs.intermediate_size == 0) vs.intermediate_size = 3420;
      if (vs.num_heads == 0) vs.num_heads = 16;
      if (!v.spatial_merge_size) vs.spatial_merge_size = 2;
      if (!v.temporal_patch_size) vs.temporal_patch_size = 2;
    }
    if (vs.depth <= 0 || vs.hidden_size <= 0 || vs.intermediate_size <= 0) {
      spec.warnings.push_back("vision_config lacks depth, hidden_size or intermediate_size: the "
                              "vision tower is not modelled");
      vs.kind = VisionKind::kOther;
    }
  }

  const formats::RawVisionConfig& au = top.audio_config;
  if (au.present && (spec.family == "gemma4" || spec.family == "gemma3n")) {
    spec.audio.depth = au.num_hidden_layers.value_or(0);
    spec.audio.hidden_size = au.hidden_size.value_or(0);
    spec.audio.out_hidden_size = au.out_hidden_size.value_or(spec.audio.hidden_size);
  } else if (au.present) {
    spec.warnings.push_back("audio_config: the audio encoder of this family is not modelled");
  }

  const formats::RawQuantConfig& q = top.quantization_config.present ? top.quantization_config
                                                                      : t.quantization_config;
  spec.quant = QuantSchemeFromRaw(q, &spec.warnings);
  return spec;
}

Result<ModelSpec> ModelSpecFromConfigJson(std::string_view json, std::string_view origin) {
  auto raw = formats::ParseConfigJson(json, origin);
  if (!raw.ok()) return raw.status();
  return ModelSpecFromRaw(*raw, origin);
}

// Qwen2-VL's image processor (transformers v4.57, models/qwen2_vl/image_processing_qwen2_vl.py,
// Qwen2VLImageProcessor.__init__; Qwen2.5-VL and Qwen3-VL reuse it) bounds an image by
// "max_pixels" when given, else by size["longest_edge"]; preprocessor_config.json files carry
// one or both. Other processors' keys are not read (their engines' defaults stay).
Status ApplyPreprocessorConfig(std::string_view json, std::string_view origin, ModelSpec* spec) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  VRAMFIT_RETURN_IF_ERROR(formats::ParseJson(parser, json, origin, 0, &root));
  simdjson::dom::object obj;
  if (root.get_object().get(obj)) {
    return Status::Corrupt(fmt::format("{}: expected a JSON object, found {}", origin,
                                       formats::JsonTypeName(root)));
  }
  const auto read = [&](simdjson::dom::element e, std::string_view key, int64_t* out) {
    if (e.is_null()) return Status::Ok();
    int64_t v = 0;
    if (e.get_int64().get(v) || v < 1 || v > (int64_t{1} << 40)) {
      return Status::Corrupt(fmt::format("{}: \"{}\": expected a pixel count from 1 to 2^40, "
                                         "found {}", origin, key, formats::JsonExcerpt(e)));
    }
    *out = v;
    return Status::Ok();
  };
  int64_t max_pixels = 0, longest_edge = 0;
  simdjson::dom::element e;
  if (!obj["max_pixels"].get(e)) VRAMFIT_RETURN_IF_ERROR(read(e, "max_pixels", &max_pixels));
  simdjson::dom::object size;
  if (!obj["size"].get(e) && !e.get_object().get(size) && !size["longest_edge"].get(e)) {
    VRAMFIT_RETURN_IF_ERROR(read(e, "size.longest_edge", &longest_edge));
  }
  const int64_t pixels = max_pixels > 0 ? max_pixels : longest_edge;
  if (pixels > 0 && spec->vision.kind != VisionKind::kNone) spec->vision.max_pixels = pixels;
  return Status::Ok();
}

Result<ModelSpec> ApplyConfigOverrides(const ModelSpec& spec, std::string_view json,
                                       std::string_view flag,
                                       std::vector<std::string>* not_applied) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(json);
  simdjson::dom::element root;
  simdjson::dom::object obj;
  if (parser.parse(padded).get(root) || root.get_object().get(obj)) {
    return Status::InvalidArgument(
        fmt::format("{}: expected a JSON object of config.json keys, found {}", flag, json));
  }
  ModelSpec out = spec;
  for (auto field : obj) {
    const std::string_view key = field.key;
    if (key == "rope_scaling" || key == "rope_parameters") {
      formats::RawRopeScaling rs;
      VRAMFIT_RETURN_IF_ERROR(formats::ParseRopeScaling(flag, key, field.value, &rs));
      out.rope_scaling = {rs.type, rs.factor.value_or(0),
                          rs.original_max_position_embeddings.value_or(0)};
    } else if (key == "max_position_embeddings") {
      int64_t n = 0;
      if (field.value.get_int64().get(n) || n < 1 || n > (int64_t{1} << 31) - 1) {
        return Status::InvalidArgument(fmt::format(
            "{}: \"max_position_embeddings\": expected 1 to 2147483647", flag));
      }
      out.max_position_embeddings = n;
    } else if (not_applied != nullptr) {
      not_applied->push_back(std::string(key));
    }
  }
  return out;
}

}  // namespace vramfit
