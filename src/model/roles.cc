// Tensor name -> role, part, module (see roles.h). Names are matched segment by segment;
// nothing here depends on the order tensors appear in.
#include "model/roles.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>

namespace vramfit::model {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool Contains(std::string_view s, std::string_view x) {
  return s.find(x) != std::string_view::npos;
}

bool OneOf(std::string_view s, std::initializer_list<std::string_view> xs) {
  for (auto x : xs) if (s == x) return true;
  return false;
}

constexpr std::array<std::string_view, 21> kMetaParts = {
    "qzeros", "scales", "g_idx", "weight_scale", "weight_zero_point", "weight_shape",
    "weight_g_idx", "weight_scale_inv", "input_scale", "weight_global_scale",
    "input_global_scale", "k_scale", "v_scale", "q_scale", "output_scale", "weight_scale_2",
    "SCB", "weight_format", "input_zero_point", "zeros", "prob_scale"};

// Finds "layers.<digits>." in the name; returns the index, where its digits start and where the
// in-layer path starts.
bool FindLayer(std::string_view name, int64_t* layer, size_t* digits, size_t* rest) {
  size_t from = 0;
  while (true) {
    const size_t at = name.find("layers.", from);
    if (at == std::string_view::npos) return false;
    if (at == 0 || name[at - 1] == '.') {
      const size_t d = at + 7;
      size_t e = d;
      while (e < name.size() && name[e] >= '0' && name[e] <= '9') ++e;
      if (e > d && e < name.size() && name[e] == '.' && e - d <= 9) {
        std::from_chars(name.data() + d, name.data() + e, *layer);
        *digits = d;
        *rest = e + 1;
        return true;
      }
    }
    from = at + 1;
  }
}

Role InLayerRole(std::string_view path, std::string_view leaf) {
  // path: the in-layer module path ("self_attn.q_proj"); leaf: its last segment.
  // A Mamba2 mixer (Granite 4.0 hybrid and Bamba "mamba."): its in and out projections, and the
  // rest of its state parameters.
  if (Contains(path, "mamba.")) {
    if (OneOf(leaf, {"in_proj", "out_proj"})) return Role::kLinearAttnProj;
    return Role::kLinearAttnState;  // conv1d, A_log, D, dt_bias, norm
  }
  if (Contains(path, "linear_attn.")) {
    if (OneOf(leaf, {"in_proj_qkvz", "in_proj_ba", "in_proj_qkv", "in_proj_z", "in_proj_b",
                     "in_proj_a", "out_proj"})) {
      return Role::kLinearAttnProj;
    }
    return Role::kLinearAttnState;  // conv1d, A_log, dt_bias, norm
  }
  if (Contains(path, "attn.") || Contains(path, "attention.")) {
    if (OneOf(leaf, {"q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "kv_a_proj"})) {
      return Role::kMlaProj;
    }
    if (OneOf(leaf, {"q_proj", "k_proj", "v_proj", "o_proj", "qkv_proj", "query_key_value",
                     "dense", "c_attn", "c_proj", "wq", "wk", "wv", "wo", "qkv", "proj"})) {
      return Role::kAttnProj;
    }
    if (leaf == "sinks") return Role::kAttnSinks;
    if (Contains(leaf, "norm")) return Role::kNorm;
    return Role::kOther;
  }
  if (leaf == "shared_expert_gate") return Role::kSharedExpertGate;
  if (Contains(path, "shared_expert.") || Contains(path, "shared_experts."))
    return Role::kSharedExpertProj;
  if (Contains(path, "experts.")) return Role::kExpertProj;
  if (OneOf(leaf, {"gate", "router", "e_score_correction_bias"}) &&
      (Contains(path, "mlp.") || Contains(path, "block_sparse_moe.") || Contains(path, "moe."))) {
    return Role::kRouter;
  }
  // Granite MoE: the experts fused in block_sparse_moe.input_linear / output_linear, the router
  // at block_sparse_moe.router.layer, the shared MLP at shared_mlp.input_linear / output_linear.
  if (Contains(path, "block_sparse_moe.")) {
    if (Contains(path, "router.")) return Role::kRouter;
    if (OneOf(leaf, {"input_linear", "output_linear"})) return Role::kExpertProj;
  }
  if (OneOf(leaf, {"input_linear", "output_linear"}) && Contains(path, "shared_mlp.")) {
    return Role::kSharedExpertProj;
  }
  if (OneOf(leaf, {"gate_proj", "up_proj", "down_proj", "gate_up_proj", "w1", "w2", "w3", "fc1",
                   "fc2", "c_fc", "dense_h_to_4h", "dense_4h_to_h"})) {
    return Role::kMlpProj;
  }
  if (Contains(leaf, "norm")) return Role::kNorm;
  return Role::kOther;
}

// GGUF names (llama.cpp llama-arch.cpp LLM_TENSOR_NAMES): "blk.<i>.<leaf>.<part>" inside
// layers, "token_embd", "output", "output_norm" outside; mmproj files "v.*" and "mm.*".
Role GgufLayerRole(std::string_view leaf) {
  if (leaf.starts_with("ssm_")) {
    if (OneOf(leaf, {"ssm_in", "ssm_out", "ssm_ba", "ssm_alpha", "ssm_beta"})) {
      return Role::kLinearAttnProj;
    }
    return Role::kLinearAttnState;  // ssm_conv1d, ssm_a, ssm_dt, ssm_d, ssm_norm
  }
  if (OneOf(leaf, {"attn_q_a", "attn_q_b", "attn_kv_a_mqa", "attn_kv_b", "attn_k_b", "attn_v_b"}))
    return Role::kMlaProj;
  if (OneOf(leaf, {"attn_q", "attn_k", "attn_v", "attn_output", "attn_qkv", "attn_gate"}))
    return Role::kAttnProj;
  if (leaf == "attn_sinks") return Role::kAttnSinks;
  if (leaf == "ffn_gate_inp_shexp") return Role::kSharedExpertGate;
  if (leaf == "ffn_gate_inp" || leaf == "exp_probs_b") return Role::kRouter;
  if (leaf.ends_with("_shexp")) return Role::kSharedExpertProj;
  if (leaf.ends_with("_exps")) return Role::kExpertProj;
  if (OneOf(leaf, {"ffn_gate", "ffn_up", "ffn_down"})) return Role::kMlpProj;
  if (leaf.starts_with("nextn")) return Role::kMtp;
  if (Contains(leaf, "norm")) return Role::kNorm;
  return Role::kOther;
}

bool IsGgufName(std::string_view name) {
  return name.starts_with("blk.") || name.starts_with("token_embd.") ||
         name.starts_with("output.") || name.starts_with("output_norm.") ||
         name.starts_with("v.") || name.starts_with("mm.");
}

TensorClass ClassifyGguf(std::string_view name, int64_t num_layers) {
  TensorClass c;
  // "<module>.weight" / ".bias"; a few names have no part ("blk.0.ssm_a": the whole name).
  const size_t dot = name.rfind('.');
  const std::string_view part = dot == std::string_view::npos ? name : name.substr(dot + 1);
  const bool has_part = part == "weight" || part == "bias";
  c.module = has_part ? name.substr(0, dot) : name;
  c.part = part == "bias" ? Part::kBias : Part::kWeight;
  const std::string_view m = c.module;
  if (name.starts_with("v.")) {
    c.role = Role::kVision;
  } else if (name.starts_with("mm.")) {
    c.role = Role::kProjector;
  } else if (name.starts_with("blk.")) {
    size_t e = 4;
    while (e < m.size() && m[e] >= '0' && m[e] <= '9') ++e;
    if (e > 4 && e - 4 <= 9 && e < m.size() && m[e] == '.') {
      std::from_chars(m.data() + 4, m.data() + e, c.layer);
      c.layer_at = 4;
      const std::string_view leaf = m.substr(e + 1);
      c.role = num_layers >= 0 && c.layer >= num_layers ? Role::kMtp : GgufLayerRole(leaf);
      // exp_probs_b is DeepSeek-V3's e_score_correction_bias: a router parameter.
      if (leaf == "exp_probs_b") c.part = Part::kBias;
    }
  } else if (m == "token_embd") {
    c.role = Role::kEmbedding;
  } else if (m == "output") {
    c.role = Role::kLmHead;
  } else if (m == "output_norm") {
    c.role = Role::kNorm;
  }
  c.component = ComponentOf(c.role);
  return c;
}

}  // namespace

Component ComponentOf(Role r) {
  switch (r) {
    case Role::kEmbedding: return Component::kEmbedding;
    case Role::kLmHead: return Component::kLmHead;
    case Role::kAttnProj: case Role::kMlaProj: case Role::kAttnSinks: return Component::kAttention;
    case Role::kLinearAttnProj: case Role::kLinearAttnState: return Component::kLinearAttention;
    case Role::kMlpProj: return Component::kMlp;
    case Role::kExpertProj: return Component::kExperts;
    case Role::kSharedExpertProj: case Role::kSharedExpertGate: return Component::kSharedExperts;
    case Role::kRouter: return Component::kRouter;
    case Role::kNorm: return Component::kNorms;
    case Role::kVision: case Role::kProjector: return Component::kVision;
    case Role::kMtp: return Component::kMtp;
    case Role::kOther: return Component::kOther;
  }
  return Component::kOther;
}

bool IsCountedLinear(Role r) {
  return r == Role::kAttnProj || r == Role::kMlaProj || r == Role::kLinearAttnProj ||
         r == Role::kMlpProj || r == Role::kExpertProj || r == Role::kSharedExpertProj;
}

TensorClass ClassifyTensor(std::string_view name, int64_t num_layers) {
  if (IsGgufName(name)) return ClassifyGguf(name, num_layers);
  TensorClass c;
  // Split module and part. bitsandbytes puts its state under "<module>.weight.<state>".
  std::string_view module = name, part;
  const size_t bnb = name.find(".weight.");
  if (bnb != std::string_view::npos) {
    module = name.substr(0, bnb);
    part = name.substr(bnb + 1);
    c.part = Part::kQuantMeta;
  } else {
    const size_t dot = name.rfind('.');
    if (dot != std::string_view::npos) {
      module = name.substr(0, dot);
      part = name.substr(dot + 1);
    } else {
      module = name;
      part = name;
    }
    if (part == "bias") {
      c.part = Part::kBias;
    } else if (part == "qweight" || part == "weight_packed") {
      c.part = Part::kWeight;
      c.packed_container = true;
    } else if (EndsWith(part, "_blocks")) {  // gpt-oss MXFP4 experts
      c.part = Part::kWeight;
      c.packed_container = true;
    } else if (EndsWith(part, "_scales") && Contains(module, "experts")) {
      c.part = Part::kQuantMeta;
    } else if (EndsWith(part, "_bias") && Contains(module, "experts")) {
      c.part = Part::kBias;
    } else if (std::find(kMetaParts.begin(), kMetaParts.end(), part) != kMetaParts.end()) {
      c.part = Part::kQuantMeta;
    } else {
      c.part = Part::kWeight;
    }
  }
  // gpt-oss fused expert tensors: the module is named after the projection.
  // The part follows the module and a dot, so the module stays a prefix of the name.
  std::string_view mod = module;
  if (Contains(module, "experts") && (EndsWith(part, "_blocks") || EndsWith(part, "_scales") ||
                                      EndsWith(part, "_bias") || part == "gate_up_proj" ||
                                      part == "down_proj")) {
    std::string_view proj = part;
    for (std::string_view suf : {"_blocks", "_scales", "_bias"}) {
      if (EndsWith(proj, suf)) { proj.remove_suffix(suf.size()); break; }
    }
    mod = name.substr(0, module.size() + 1 + proj.size());
  }
  c.module = mod;
  const std::string_view m = c.module;
  const size_t leaf_at = m.rfind('.');
  const std::string_view leaf = leaf_at == std::string_view::npos ? m : m.substr(leaf_at + 1);

  // An audio encoder (Gemma 3n/4's audio_tower and its embed_audio projection) is a
  // multimodal tower like the vision one, reported apart.
  const bool audio = Contains(name, "audio_tower.") || Contains(name, "embed_audio.");
  if (audio || Contains(name, "visual.") || Contains(name, "vision_tower.") ||
      Contains(name, "vision_model.") || Contains(name, "vision_encoder.") ||
      name.rfind("vision.", 0) == 0) {
    c.role = Role::kVision;
  } else if (Contains(name, "multi_modal_projector.") || Contains(name, "mm_projector.") ||
             Contains(name, "embed_vision.")) {
    c.role = Role::kProjector;
  } else if (name.rfind("mtp.", 0) == 0 || Contains(name, ".mtp.")) {
    c.role = Role::kMtp;
  } else {
    int64_t layer = -1;
    size_t digits = 0, rest = 0;
    if (FindLayer(m, &layer, &digits, &rest)) {
      c.layer = layer;
      c.layer_at = static_cast<uint32_t>(digits);
      if (num_layers >= 0 && layer >= num_layers) {
        c.role = Role::kMtp;
      } else {
        const std::string_view path = rest <= m.size() ? m.substr(rest) : std::string_view();
        std::string p(path);
        p += ".";
        c.role = part == "sinks" ? Role::kAttnSinks : InLayerRole(p, leaf);
      }
    } else if (Contains(m, "embed_tokens") || leaf == "wte" || leaf == "tok_embeddings" ||
               leaf == "word_embeddings") {
      c.role = Role::kEmbedding;
    } else if (Contains(m, "lm_head") || leaf == "output") {
      c.role = Role::kLmHead;
    } else if (Contains(leaf, "norm")) {
      c.role = Role::kNorm;
    }
  }
  c.component = audio ? Component::kAudio : ComponentOf(c.role);
  return c;
}

// What ClassifyTensor reads of a name's digits: a segment of 1-9 digits is a layer index only
// where "layers." or "blk." comes before it (FindLayer, ClassifyGguf: at most 9 digits, then a
// dot); every other test is a comparison with digit-free text or of a whole segment with text
// that is not all digits, which a masked segment passes or fails as its digits do. So names of
// one shape get the same role, part, component and container flag with num_layers -1, the
// layer index sits in the same masked segment, and the MTP rule (layer >= num_layers) is the
// only use of its value.
constexpr char kNumberMark = '\x01';  // a name holding it is not remembered
// Shapes remembered at most (a hostile header of distinct shapes costs no more memory).
constexpr size_t kMaxShapes = 4096;

TensorClass TensorClassifier::WithLayerRule(TensorClass c) const {
  if (num_layers_ >= 0 && c.layer >= num_layers_) {
    c.role = Role::kMtp;
    c.component = ComponentOf(c.role);
  }
  return c;
}

bool TensorClassifier::Learn(std::string_view name, const TensorClass& c, Learned* out) const {
  out->c = c;
  out->c.module = {};
  out->c.layer = -1;
  out->c.layer_at = 0;
  // The module is a prefix of the name ending at a dot, at the name's end, or inside a last
  // segment that holds letters: never inside a masked one (checked all the same).
  const size_t end = c.module.size();
  size_t shift = 0;
  out->module_numbers = 0;
  for (const Number& n : numbers_) {
    if (n.at + n.size <= end) {
      shift += n.size - 1;
      ++out->module_numbers;
    } else if (n.at < end) {
      return false;
    }
  }
  out->module_end = end - shift;
  out->layer_number = -1;
  if (c.layer >= 0) {
    for (size_t i = 0; i < numbers_.size(); ++i) {
      if (numbers_[i].at == c.layer_at) out->layer_number = static_cast<int>(i);
    }
    if (out->layer_number < 0) return false;
  }
  return true;
}

TensorClass TensorClassifier::Classify(std::string_view name) {
  if (name.size() >= std::numeric_limits<uint32_t>::max() ||
      name.find(kNumberMark) != std::string_view::npos) {
    return ClassifyTensor(name, num_layers_);
  }
  shape_.clear();
  numbers_.clear();
  for (size_t from = 0;;) {
    size_t dot = name.find('.', from);
    if (dot == std::string_view::npos) dot = name.size();
    const std::string_view segment = name.substr(from, dot - from);
    if (!segment.empty() && segment.size() <= 9 &&
        std::all_of(segment.begin(), segment.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      shape_ += kNumberMark;
      numbers_.push_back({static_cast<uint32_t>(from), static_cast<uint32_t>(segment.size())});
    } else {
      shape_ += segment;
    }
    if (dot == name.size()) break;
    shape_ += '.';
    from = dot + 1;
  }
  const auto it = learned_.find(shape_);
  if (it == learned_.end()) {
    const TensorClass c = ClassifyTensor(name, -1);
    Learned learned;
    if (learned_.size() < kMaxShapes && Learn(name, c, &learned)) {
      learned_.emplace(shape_, learned);
    }
    return WithLayerRule(c);
  }
  const Learned& l = it->second;
  TensorClass c = l.c;
  size_t module_size = l.module_end;
  for (size_t i = 0; i < l.module_numbers; ++i) module_size += numbers_[i].size - 1;
  c.module = name.substr(0, module_size);
  if (l.layer_number >= 0) {
    const Number& n = numbers_[static_cast<size_t>(l.layer_number)];
    std::from_chars(name.data() + n.at, name.data() + n.at + n.size, c.layer);
    c.layer_at = n.at;
  }
  return WithLayerRule(c);
}

}  // namespace vramfit::model
