// config.json reader (see config.h). Table-driven: each known key names its member, its
// type and, for integers, the range a real model can have; anything else is an error that
// names the key path.
#include "formats/config.h"

#include <fmt/format.h>

#include <limits>

#include "formats/json_util.h"

namespace vramfit::formats {
namespace {

using simdjson::dom::element;
using simdjson::dom::object;

constexpr int64_t kMaxDim = int64_t{1} << 24;  // 16,777,216: above any real width/vocab

struct Ctx {
  std::string_view origin;
  std::string path;  // e.g. "\"text_config\"."
  std::string Key(std::string_view k) const { return fmt::format("{}\"{}\"", path, k); }
};

Status TypeError(const Ctx& c, std::string_view key, std::string_view expected, const element& v) {
  return Status::Corrupt(fmt::format("{}: {}: expected {}, found {} ({})", c.origin, c.Key(key),
                                     expected, JsonTypeName(v), JsonExcerpt(v)));
}

// Integers: JSON integers, or floats with an integral value (some writers emit 4096.0).
Status GetInt(const Ctx& c, std::string_view key, const element& v, int64_t lo, int64_t hi,
              std::optional<int64_t>* out) {
  int64_t x = 0;
  if (v.is_int64()) {
    x = v.get_int64().value_unsafe();
  } else if (v.is_double()) {
    const double d = v.get_double().value_unsafe();
    // Range first: casting a double an int64_t cannot hold is undefined.
    if (d > 9.0e18 || d < -9.0e18 || d != static_cast<double>(static_cast<int64_t>(d))) {
      return TypeError(c, key, "an integer", v);
    }
    x = static_cast<int64_t>(d);
  } else if (v.is_null()) {
    out->reset();
    return Status::Ok();
  } else {
    return Status::Corrupt(fmt::format("{}: {}: expected an integer in [{}, {}], found {} ({})",
                                       c.origin, c.Key(key), lo, hi, JsonTypeName(v),
                                       JsonExcerpt(v)));
  }
  if (x < lo || x > hi) {
    return Status::Corrupt(fmt::format("{}: {}: expected an integer in [{}, {}], found {}",
                                       c.origin, c.Key(key), lo, hi, x));
  }
  *out = x;
  return Status::Ok();
}

Status GetBool(const Ctx& c, std::string_view key, const element& v, std::optional<bool>* out) {
  if (v.is_null()) return Status::Ok();
  if (!v.is_bool()) return TypeError(c, key, "true or false", v);
  *out = v.get_bool().value_unsafe();
  return Status::Ok();
}

Status GetString(const Ctx& c, std::string_view key, const element& v, std::string* out) {
  if (v.is_null()) return Status::Ok();
  std::string_view s;
  if (v.get_string().get(s)) return TypeError(c, key, "a string", v);
  *out = std::string(s);
  return Status::Ok();
}

// A list of strings; a single string is accepted as a one-element list.
// A key given twice (a catalog entry over its base) replaces the list: later keys win.
Status GetStringList(const Ctx& c, std::string_view key, const element& v,
                     std::vector<std::string>* out) {
  out->clear();
  if (v.is_null()) return Status::Ok();
  std::string_view one;
  if (!v.get_string().get(one)) {
    out->emplace_back(one);
    return Status::Ok();
  }
  simdjson::dom::array arr;
  if (v.get_array().get(arr)) return TypeError(c, key, "a list of strings", v);
  size_t i = 0;
  for (element e : arr) {
    std::string_view s;
    if (e.get_string().get(s)) {
      return TypeError(c, fmt::format("{}[{}]", key, i), "a string", e);
    }
    out->emplace_back(s);
    ++i;
  }
  return Status::Ok();
}

Status GetIntList(const Ctx& c, std::string_view key, const element& v, int64_t lo, int64_t hi,
                  std::vector<int64_t>* out) {
  out->clear();
  if (v.is_null()) return Status::Ok();
  simdjson::dom::array arr;
  if (v.get_array().get(arr)) return TypeError(c, key, "a list of integers", v);
  size_t i = 0;
  for (element e : arr) {
    std::optional<int64_t> x;
    VRAMFIT_RETURN_IF_ERROR(GetInt(c, fmt::format("{}[{}]", key, i), e, lo, hi, &x));
    if (x) out->push_back(*x);
    ++i;
  }
  return Status::Ok();
}

// A config integer: its key, where it goes, and the range it must lie in.
template <typename Raw>
struct IntField {
  const char* key;
  std::optional<int64_t> Raw::*member;
  int64_t lo, hi;
};
struct BoolField {
  const char* key;
  std::optional<bool> RawConfig::*member;
};

// Ranges: zero is allowed where a real config writes 0 (e.g. n_shared_experts 0).
const IntField<RawConfig> kIntFields[] = {
    {"hidden_size", &RawConfig::hidden_size, 1, kMaxDim},
    {"intermediate_size", &RawConfig::intermediate_size, 0, kMaxDim},
    {"num_hidden_layers", &RawConfig::num_hidden_layers, 1, 4096},
    {"num_attention_heads", &RawConfig::num_attention_heads, 1, 65536},
    {"num_key_value_heads", &RawConfig::num_key_value_heads, 1, 65536},
    {"head_dim", &RawConfig::head_dim, 1, 65536},
    {"vocab_size", &RawConfig::vocab_size, 1, kMaxDim},
    {"max_position_embeddings", &RawConfig::max_position_embeddings, 1, int64_t{1} << 40},
    {"sliding_window", &RawConfig::sliding_window, 0, int64_t{1} << 40},
    {"max_window_layers", &RawConfig::max_window_layers, 0, 4096},
    {"sliding_window_pattern", &RawConfig::sliding_window_pattern, 0, 4096},
    {"_sliding_window_pattern", &RawConfig::sliding_window_pattern, 0, 4096},
    {"full_attention_interval", &RawConfig::full_attention_interval, 1, 4096},
    {"num_experts", &RawConfig::num_experts, 0, 65536},
    {"num_local_experts", &RawConfig::num_local_experts, 0, 65536},
    {"n_routed_experts", &RawConfig::n_routed_experts, 0, 65536},
    {"num_experts_per_tok", &RawConfig::num_experts_per_tok, 0, 65536},
    {"experts_per_token", &RawConfig::experts_per_token, 0, 65536},
    {"moe_intermediate_size", &RawConfig::moe_intermediate_size, 0, kMaxDim},
    {"shared_expert_intermediate_size", &RawConfig::shared_expert_intermediate_size, 0, kMaxDim},
    {"n_shared_experts", &RawConfig::n_shared_experts, 0, 65536},
    {"decoder_sparse_step", &RawConfig::decoder_sparse_step, 0, 4096},
    {"first_k_dense_replace", &RawConfig::first_k_dense_replace, 0, 4096},
    {"moe_layer_freq", &RawConfig::moe_layer_freq, 0, 4096},
    {"q_lora_rank", &RawConfig::q_lora_rank, 1, kMaxDim},
    {"kv_lora_rank", &RawConfig::kv_lora_rank, 1, kMaxDim},
    {"qk_nope_head_dim", &RawConfig::qk_nope_head_dim, 0, 65536},
    {"qk_rope_head_dim", &RawConfig::qk_rope_head_dim, 0, 65536},
    {"v_head_dim", &RawConfig::v_head_dim, 1, 65536},
    {"linear_num_key_heads", &RawConfig::linear_num_key_heads, 1, 65536},
    {"linear_num_value_heads", &RawConfig::linear_num_value_heads, 1, 65536},
    {"linear_key_head_dim", &RawConfig::linear_key_head_dim, 1, 65536},
    {"linear_value_head_dim", &RawConfig::linear_value_head_dim, 1, 65536},
    {"linear_conv_kernel_dim", &RawConfig::linear_conv_kernel_dim, 1, 1024},
    {"mamba_n_heads", &RawConfig::mamba_n_heads, 1, 65536},
    {"mamba_d_head", &RawConfig::mamba_d_head, 1, 65536},
    {"mamba_d_state", &RawConfig::mamba_d_state, 1, 65536},
    {"mamba_n_groups", &RawConfig::mamba_n_groups, 1, 65536},
    {"mamba_d_conv", &RawConfig::mamba_d_conv, 1, 1024},
    {"mamba_expand", &RawConfig::mamba_expand, 1, 64},
    {"shared_intermediate_size", &RawConfig::shared_intermediate_size, 0, kMaxDim},
    {"num_nextn_predict_layers", &RawConfig::num_nextn_predict_layers, 0, 64},
    {"mtp_num_hidden_layers", &RawConfig::mtp_num_hidden_layers, 0, 64},
    {"global_head_dim", &RawConfig::global_head_dim, 1, 65536},
    {"num_global_key_value_heads", &RawConfig::num_global_key_value_heads, 1, 65536},
    {"num_kv_shared_layers", &RawConfig::num_kv_shared_layers, 0, 4096},
    {"hidden_size_per_layer_input", &RawConfig::hidden_size_per_layer_input, 0, kMaxDim},
    {"vocab_size_per_layer_input", &RawConfig::vocab_size_per_layer_input, 0, kMaxDim},
    {"top_k_experts", &RawConfig::top_k_experts, 0, 65536},
    {"expert_intermediate_size", &RawConfig::expert_intermediate_size, 0, kMaxDim},
};
const BoolField kBoolFields[] = {
    {"tie_word_embeddings", &RawConfig::tie_word_embeddings},
    {"use_sliding_window", &RawConfig::use_sliding_window},
    {"attention_bias", &RawConfig::attention_bias},
    {"attn_output_gate", &RawConfig::attn_output_gate},
    {"mlp_bias", &RawConfig::mlp_bias},
    {"qkv_bias", &RawConfig::qkv_bias},
    {"attention_k_eq_v", &RawConfig::attention_k_eq_v},
    {"enable_moe_block", &RawConfig::enable_moe_block},
    {"use_double_wide_mlp", &RawConfig::use_double_wide_mlp},
    {"use_qk_norm", &RawConfig::use_qk_norm},
};

// Also reads Gemma 4's audio_config (key "audio_config"): its widths share these fields.
Status ParseVision(const Ctx& c, const element& v, RawVisionConfig* out,
                   std::string_view name = "vision_config") {
  object obj;
  if (v.is_null()) return Status::Ok();
  if (v.get_object().get(obj)) return TypeError(c, name, "an object", v);
  out->present = true;
  Ctx sub{c.origin, fmt::format("{}\"{}\".", c.path, name)};
  // Ranges as for the text fields: a divisor (patch and merge sizes: the encoder's tokens per
  // image are max_pixels / (patch x merge)^2) is at least 1, and no range lets a product of
  // two of them overflow.
  static const IntField<RawVisionConfig> kFields[] = {
      {"depth", &RawVisionConfig::depth, 0, 1024},
      {"num_hidden_layers", &RawVisionConfig::num_hidden_layers, 0, 1024},
      {"hidden_size", &RawVisionConfig::hidden_size, 0, kMaxDim},
      {"embed_dim", &RawVisionConfig::embed_dim, 0, kMaxDim},
      {"intermediate_size", &RawVisionConfig::intermediate_size, 0, kMaxDim},
      {"num_heads", &RawVisionConfig::num_heads, 0, 65536},
      {"num_attention_heads", &RawVisionConfig::num_attention_heads, 0, 65536},
      {"patch_size", &RawVisionConfig::patch_size, 1, 1024},
      {"spatial_patch_size", &RawVisionConfig::spatial_patch_size, 1, 1024},
      {"temporal_patch_size", &RawVisionConfig::temporal_patch_size, 1, 64},
      {"spatial_merge_size", &RawVisionConfig::spatial_merge_size, 1, 64},
      {"in_channels", &RawVisionConfig::in_channels, 1, 64},
      {"in_chans", &RawVisionConfig::in_channels, 1, 64},
      {"num_channels", &RawVisionConfig::num_channels, 1, 64},
      {"out_hidden_size", &RawVisionConfig::out_hidden_size, 0, kMaxDim},
      {"num_position_embeddings", &RawVisionConfig::num_position_embeddings, 0, kMaxDim},
      {"image_size", &RawVisionConfig::image_size, 0, int64_t{1} << 20},
      {"window_size", &RawVisionConfig::window_size, 0, int64_t{1} << 20},
      {"pooling_kernel_size", &RawVisionConfig::pooling_kernel_size, 1, 64},
      {"default_output_length", &RawVisionConfig::default_output_length, 1, int64_t{1} << 20},
      {"output_proj_dims", &RawVisionConfig::out_hidden_size, 0, kMaxDim},
  };
  for (auto field : obj) {
    const std::string_view key = field.key;
    if (key == "model_type") {
      VRAMFIT_RETURN_IF_ERROR(GetString(sub, key, field.value, &out->model_type));
      continue;
    }
    if (key == "fullatt_block_indexes") {
      VRAMFIT_RETURN_IF_ERROR(
          GetIntList(sub, key, field.value, 0, 4096, &out->fullatt_block_indexes));
      continue;
    }
    if (key == "deepstack_visual_indexes") {
      VRAMFIT_RETURN_IF_ERROR(
          GetIntList(sub, key, field.value, 0, 4096, &out->deepstack_visual_indexes));
      continue;
    }
    for (const IntField<RawVisionConfig>& f : kFields) {
      if (key == f.key) {
        VRAMFIT_RETURN_IF_ERROR(GetInt(sub, key, field.value, f.lo, f.hi, &(out->*f.member)));
        break;
      }
    }
  }
  return Status::Ok();
}

Status ParseQuantGroup(const Ctx& c, std::string_view name, const element& v, RawQuantGroup* g) {
  object obj;
  if (v.get_object().get(obj)) return TypeError(c, name, "an object", v);
  Ctx sub{c.origin, fmt::format("{}\"{}\".", c.path, name)};
  g->name = std::string(name);
  for (auto field : obj) {
    const std::string_view key = field.key;
    if (key == "targets") {
      VRAMFIT_RETURN_IF_ERROR(GetStringList(sub, key, field.value, &g->targets));
    } else if (key == "format") {
      VRAMFIT_RETURN_IF_ERROR(GetString(sub, key, field.value, &g->format));
    } else if (key == "input_activations") {
      if (field.value.is_null()) continue;
      object in;
      if (field.value.get_object().get(in))
        return TypeError(sub, key, "an object or null", field.value);
      g->has_input_activations = true;
      for (auto f : in) {
        if (f.key == "dynamic") {
          // true/false, or "local" (NVFP4: dynamic per-group scales under a static global one).
          std::string_view mode;
          if (!f.value.get_string().get(mode) && mode == "local") {
            g->input_dynamic = true;
          } else {
            VRAMFIT_RETURN_IF_ERROR(
                GetBool(sub, "input_activations.dynamic", f.value, &g->input_dynamic));
          }
        }
      }
    } else if (key == "weights") {
      if (field.value.is_null()) continue;
      object w;
      if (field.value.get_object().get(w))
        return TypeError(sub, key, "an object or null", field.value);
      Ctx ws{c.origin, sub.path + "\"weights\"."};
      for (auto f : w) {
        const std::string_view k = f.key;
        if (k == "num_bits") {
          VRAMFIT_RETURN_IF_ERROR(GetInt(ws, k, f.value, 1, 64, &g->num_bits));
        } else if (k == "type") {
          VRAMFIT_RETURN_IF_ERROR(GetString(ws, k, f.value, &g->type));
        } else if (k == "strategy") {
          VRAMFIT_RETURN_IF_ERROR(GetString(ws, k, f.value, &g->strategy));
        } else if (k == "group_size") {
          VRAMFIT_RETURN_IF_ERROR(GetInt(ws, k, f.value, -1, kMaxDim, &g->group_size));
        } else if (k == "symmetric") {
          VRAMFIT_RETURN_IF_ERROR(GetBool(ws, k, f.value, &g->symmetric));
        } else if (k == "actorder") {
          if (f.value.is_bool()) {
            g->actorder = f.value.get_bool().value_unsafe() ? "group" : "";
          } else {
            VRAMFIT_RETURN_IF_ERROR(GetString(ws, k, f.value, &g->actorder));
          }
        } else if (k == "block_structure") {
          VRAMFIT_RETURN_IF_ERROR(GetIntList(ws, k, f.value, 1, kMaxDim, &g->block_structure));
        }
      }
    }
  }
  return Status::Ok();
}

Status ParseQuant(const Ctx& c, const element& v, RawQuantConfig* q) {
  if (v.is_null()) return Status::Ok();
  object obj;
  if (v.get_object().get(obj)) return TypeError(c, "quantization_config", "an object", v);
  q->present = true;
  Ctx sub{c.origin, c.path + "\"quantization_config\"."};
  for (auto field : obj) {
    const std::string_view key = field.key;
    const element& val = field.value;
    if (key == "quant_method") VRAMFIT_RETURN_IF_ERROR(GetString(sub, key, val, &q->quant_method));
    else if (key == "format") VRAMFIT_RETURN_IF_ERROR(GetString(sub, key, val, &q->format));
    else if (key == "version") VRAMFIT_RETURN_IF_ERROR(GetString(sub, key, val, &q->version));
    else if (key == "checkpoint_format")
      VRAMFIT_RETURN_IF_ERROR(GetString(sub, key, val, &q->checkpoint_format));
    else if (key == "fmt") VRAMFIT_RETURN_IF_ERROR(GetString(sub, key, val, &q->fmt));
    else if (key == "activation_scheme")
      VRAMFIT_RETURN_IF_ERROR(GetString(sub, key, val, &q->activation_scheme));
    else if (key == "quant_algo") VRAMFIT_RETURN_IF_ERROR(GetString(sub, key, val, &q->quant_algo));
    else if (key == "bnb_4bit_quant_type")
      VRAMFIT_RETURN_IF_ERROR(GetString(sub, key, val, &q->bnb_4bit_quant_type));
    else if (key == "bnb_4bit_quant_storage")
      VRAMFIT_RETURN_IF_ERROR(GetString(sub, key, val, &q->bnb_4bit_quant_storage));
    else if (key == "bits" || key == "w_bit")
      VRAMFIT_RETURN_IF_ERROR(GetInt(sub, key, val, 1, 64, &q->bits));
    else if (key == "group_size" && val.is_array()) {
      // AutoRound's block-FP8 export writes a 2-D group ([128, 128]), as weight_block_size.
      VRAMFIT_RETURN_IF_ERROR(GetIntList(sub, key, val, 1, kMaxDim, &q->weight_block_size));
    } else if (key == "group_size" || key == "q_group_size")
      VRAMFIT_RETURN_IF_ERROR(GetInt(sub, key, val, -1, kMaxDim, &q->group_size));
    else if (key == "zero_point") VRAMFIT_RETURN_IF_ERROR(GetBool(sub, key, val, &q->zero_point));
    else if (key == "desc_act") VRAMFIT_RETURN_IF_ERROR(GetBool(sub, key, val, &q->desc_act));
    else if (key == "sym") VRAMFIT_RETURN_IF_ERROR(GetBool(sub, key, val, &q->sym));
    else if (key == "lm_head") VRAMFIT_RETURN_IF_ERROR(GetBool(sub, key, val, &q->lm_head));
    else if (key == "load_in_4bit")
      VRAMFIT_RETURN_IF_ERROR(GetBool(sub, key, val, &q->load_in_4bit));
    else if (key == "load_in_8bit")
      VRAMFIT_RETURN_IF_ERROR(GetBool(sub, key, val, &q->load_in_8bit));
    else if (key == "bnb_4bit_use_double_quant")
      VRAMFIT_RETURN_IF_ERROR(GetBool(sub, key, val, &q->bnb_4bit_use_double_quant));
    else if (key == "weight_block_size")
      VRAMFIT_RETURN_IF_ERROR(GetIntList(sub, key, val, 1, kMaxDim, &q->weight_block_size));
    else if (key == "modules_to_not_convert")
      VRAMFIT_RETURN_IF_ERROR(GetStringList(sub, key, val, &q->modules_to_not_convert));
    else if (key == "ignore" || key == "ignored_layers" || key == "exclude_modules") {
      // Three spellings of one list (compressed-tensors, fp8, modelopt): they add up.
      std::vector<std::string> more;
      VRAMFIT_RETURN_IF_ERROR(GetStringList(sub, key, val, &more));
      q->ignore.insert(q->ignore.end(), more.begin(), more.end());
    } else if (key == "llm_int8_skip_modules")
      VRAMFIT_RETURN_IF_ERROR(GetStringList(sub, key, val, &q->skip_modules));
    else if (key == "kv_cache_scheme") q->has_kv_cache_scheme = !val.is_null();
    else if (key == "quantized_layers") {
      // modelopt MIXED_PRECISION: {"model.layers.0.mlp.experts.0.down_proj": {"quant_algo":
      // "NVFP4", "group_size": 16}, ...}; the algorithms it names are kept.
      if (val.is_null()) continue;
      object layers;
      if (val.get_object().get(layers)) return TypeError(sub, key, "an object", val);
      for (auto l : layers) {
        object o;
        if (l.value.get_object().get(o)) {
          return TypeError(sub, fmt::format("quantized_layers\".\"{}", l.key), "an object",
                           l.value);
        }
        std::string_view algo;
        if (o["quant_algo"].get_string().get(algo)) continue;
        if (std::find(q->layer_quant_algos.begin(), q->layer_quant_algos.end(), algo) ==
                q->layer_quant_algos.end() &&
            q->layer_quant_algos.size() < 16) {
          q->layer_quant_algos.emplace_back(algo);
        }
      }
    }
    else if (key == "config_groups") {
      if (val.is_null()) continue;
      object groups;
      if (val.get_object().get(groups)) return TypeError(sub, key, "an object", val);
      Ctx gs{c.origin, sub.path + "\"config_groups\"."};
      for (auto g : groups) {
        RawQuantGroup group;
        VRAMFIT_RETURN_IF_ERROR(ParseQuantGroup(gs, g.key, g.value, &group));
        q->config_groups.push_back(std::move(group));
      }
    } else if (key == "packing_format") {
      VRAMFIT_RETURN_IF_ERROR(GetString(sub, key, val, &q->packing_format));
    } else if (key == "data_type") {
      VRAMFIT_RETURN_IF_ERROR(GetString(sub, key, val, &q->data_type));
    } else if (key == "backend" || key == "vllm_backend") {
      if (val.is_string()) VRAMFIT_RETURN_IF_ERROR(GetString(sub, key, val, &q->backend));
    } else if (key == "block_name_to_quantize" || key == "to_quant_block_names") {
      // A list, or one comma-separated string (AutoRound writes either).
      std::vector<std::string> names;
      VRAMFIT_RETURN_IF_ERROR(GetStringList(sub, key, val, &names));
      q->block_name_to_quantize.clear();
      for (const std::string& n : names) {
        size_t start = 0;
        while (start <= n.size()) {
          const size_t comma = std::min(n.find(',', start), n.size());
          std::string one = n.substr(start, comma - start);
          while (!one.empty() && one.front() == ' ') one.erase(0, 1);
          while (!one.empty() && one.back() == ' ') one.pop_back();
          if (!one.empty()) q->block_name_to_quantize.push_back(std::move(one));
          start = comma + 1;
        }
      }
    } else if (key == "extra_config") {
      if (val.is_null()) continue;
      object extra;
      if (val.get_object().get(extra)) return TypeError(sub, key, "an object", val);
      q->extra_config.clear();
      for (auto m : extra) {
        RawExtraConfig e;
        e.name = std::string(m.key);
        object o;
        if (m.value.get_object().get(o)) {
          return TypeError(sub, fmt::format("extra_config\".\"{}", m.key), "an object", m.value);
        }
        Ctx es{c.origin, fmt::format("{}\"extra_config\".\"{}\".", sub.path, m.key)};
        for (auto f : o) {
          if (f.key == "bits") VRAMFIT_RETURN_IF_ERROR(GetInt(es, f.key, f.value, 1, 64, &e.bits));
          if (f.key == "group_size")
            VRAMFIT_RETURN_IF_ERROR(GetInt(es, f.key, f.value, -1, kMaxDim, &e.group_size));
          if (f.key == "sym") VRAMFIT_RETURN_IF_ERROR(GetBool(es, f.key, f.value, &e.sym));
        }
        q->extra_config.push_back(std::move(e));
      }
    } else if (key == "dynamic") {
      if (val.is_null()) continue;
      object dyn;
      if (val.get_object().get(dyn)) return TypeError(sub, key, "an object", val);
      for (auto d : dyn) {
        RawDynamicRule rule;
        std::string_view pat = d.key;
        if (pat.substr(0, 2) == "-:") { rule.skip = true; pat.remove_prefix(2); }
        else if (pat.substr(0, 2) == "+:") { pat.remove_prefix(2); }
        rule.pattern = std::string(pat);
        object o;
        if (!d.value.get_object().get(o)) {
          Ctx ds{c.origin, fmt::format("{}\"dynamic\".\"{}\".", sub.path, d.key)};
          for (auto f : o) {
            if (f.key == "bits")
              VRAMFIT_RETURN_IF_ERROR(GetInt(ds, f.key, f.value, 1, 64, &rule.bits));
            if (f.key == "group_size")
              VRAMFIT_RETURN_IF_ERROR(GetInt(ds, f.key, f.value, -1, kMaxDim, &rule.group_size));
          }
        }
        q->dynamic.push_back(std::move(rule));
      }
    }
  }
  return Status::Ok();
}

Status ParseObject(const Ctx& c, const object& obj, int depth, RawConfig* out) {
  for (auto field : obj) {
    const std::string_view key = field.key;
    const element& v = field.value;
    bool handled = false;
    for (const IntField<RawConfig>& f : kIntFields) {
      if (key == f.key) {
        VRAMFIT_RETURN_IF_ERROR(GetInt(c, key, v, f.lo, f.hi, &(out->*f.member)));
        if (key == "q_lora_rank" && v.is_null()) out->q_lora_rank_null = true;
        handled = true;
        break;
      }
    }
    if (handled) continue;
    for (const BoolField& f : kBoolFields) {
      if (key == f.key) {
        VRAMFIT_RETURN_IF_ERROR(GetBool(c, key, v, &(out->*f.member)));
        handled = true;
        break;
      }
    }
    if (handled) continue;
    if (key == "architectures") {
      VRAMFIT_RETURN_IF_ERROR(GetStringList(c, key, v, &out->architectures));
    } else if (key == "model_type") {
      VRAMFIT_RETURN_IF_ERROR(GetString(c, key, v, &out->model_type));
    } else if (key == "dtype") {
      VRAMFIT_RETURN_IF_ERROR(GetString(c, key, v, &out->dtype));
    } else if (key == "torch_dtype") {
      VRAMFIT_RETURN_IF_ERROR(GetString(c, key, v, &out->torch_dtype));
    } else if (key == "mamba_ssm_dtype") {
      VRAMFIT_RETURN_IF_ERROR(GetString(c, key, v, &out->mamba_ssm_dtype));
    } else if (key == "hybrid_override_pattern") {
      VRAMFIT_RETURN_IF_ERROR(GetString(c, key, v, &out->hybrid_override_pattern));
    } else if (key == "hidden_act" || key == "hidden_activation") {
      VRAMFIT_RETURN_IF_ERROR(GetString(c, key, v, &out->hidden_act));
    } else if (key == "layer_types") {
      VRAMFIT_RETURN_IF_ERROR(GetStringList(c, key, v, &out->layer_types));
    } else if (key == "mlp_only_layers") {
      VRAMFIT_RETURN_IF_ERROR(GetIntList(c, key, v, 0, 4096, &out->mlp_only_layers));
    } else if (key == "attn_layer_indices") {
      VRAMFIT_RETURN_IF_ERROR(GetIntList(c, key, v, 0, 4096, &out->attn_layer_indices));
    } else if (key == "vision_config") {
      VRAMFIT_RETURN_IF_ERROR(ParseVision(c, v, &out->vision_config));
    } else if (key == "audio_config") {
      VRAMFIT_RETURN_IF_ERROR(ParseVision(c, v, &out->audio_config, "audio_config"));
    } else if (key == "dflash_config") {
      if (v.is_null()) continue;
      object sub;
      if (v.get_object().get(sub)) return TypeError(c, key, "an object", v);
      Ctx dc{c.origin, c.path + "\"dflash_config\"."};
      for (auto field : sub) {
        if (field.key == "target_layer_ids") {
          VRAMFIT_RETURN_IF_ERROR(GetIntList(dc, field.key, field.value, 0, 4096,
                                             &out->dflash_target_layer_ids));
        }
      }
    } else if (key == "rope_scaling" || key == "rope_parameters") {
      if (!out->rope_scaling.present) {
        VRAMFIT_RETURN_IF_ERROR(ParseRopeScaling(c.origin, c.Key(key), v, &out->rope_scaling));
      }
    } else if (key == "quantization_config" || key == "compression_config") {
      if (!out->quantization_config.present) {
        VRAMFIT_RETURN_IF_ERROR(ParseQuant(c, v, &out->quantization_config));
      }
    } else if (key == "text_config" || key == "llm_config") {
      if (v.is_null()) continue;
      object sub;
      if (v.get_object().get(sub)) return TypeError(c, key, "an object", v);
      if (depth > 0) {
        return Status::Corrupt(fmt::format("{}: {}: text_config nested inside text_config",
                                           c.origin, c.Key(key)));
      }
      auto text = std::make_shared<RawConfig>();
      Ctx tc{c.origin, c.path + fmt::format("\"{}\".", key)};
      VRAMFIT_RETURN_IF_ERROR(ParseObject(tc, sub, depth + 1, text.get()));
      out->text_config = std::move(text);
    }
  }
  return Status::Ok();
}

}  // namespace

Status ParseRopeScaling(std::string_view origin, std::string_view key, const element& value,
                        RawRopeScaling* out) {
  if (value.is_null()) return Status::Ok();
  object obj;
  if (value.get_object().get(obj)) {
    return Status::Corrupt(fmt::format("{}: {}: expected an object, found {}", origin, key,
                                       JsonTypeName(value)));
  }
  out->present = true;
  for (auto field : obj) {
    const std::string_view k = field.key;
    if (k == "rope_type" || (k == "type" && out->type.empty())) {
      std::string_view t;
      if (field.value.get_string().get(t)) {
        return Status::Corrupt(fmt::format("{}: {}.\"{}\": expected a string, found {}", origin,
                                           key, k, JsonTypeName(field.value)));
      }
      out->type = std::string(t);
    } else if (k == "factor") {
      double f = 0;
      if (field.value.get_double().get(f)) {  // integers read as doubles too
        return Status::Corrupt(fmt::format("{}: {}.\"factor\": expected a number, found {}",
                                           origin, key, JsonTypeName(field.value)));
      }
      if (!(f >= 1 && f <= 1024)) {
        return Status::Corrupt(fmt::format("{}: {}.\"factor\": expected 1 to 1024, found {}",
                                           origin, key, f));
      }
      out->factor = f;
    } else if (k == "original_max_position_embeddings") {
      int64_t n = 0;
      if (field.value.get_int64().get(n) || n < 1 || n > (int64_t{1} << 26)) {
        return Status::Corrupt(fmt::format(
            "{}: {}.\"original_max_position_embeddings\": expected 1 to 67108864", origin, key));
      }
      out->original_max_position_embeddings = n;
    }
  }
  return Status::Ok();
}

Result<RawConfig> ParseConfigJson(std::string_view json, std::string_view origin) {
  thread_local simdjson::dom::parser parser;
  element root;
  VRAMFIT_RETURN_IF_ERROR(ParseJson(parser, json, origin, 0, &root));
  object obj;
  if (root.get_object().get(obj)) {
    return Status::Corrupt(
        fmt::format("{}: expected a JSON object, found {}", origin, JsonTypeName(root)));
  }
  RawConfig config;
  Ctx c{origin, ""};
  VRAMFIT_RETURN_IF_ERROR(ParseObject(c, obj, 0, &config));
  return config;
}

}  // namespace vramfit::formats
