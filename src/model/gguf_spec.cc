// ModelSpec from GGUF metadata (see gguf_spec.h). Keys are those of llama.cpp's gguf-py
// `constants.py` (Keys.LLM / Keys.Attention / Keys.SSM, @0024aa74), read the way the loader
// (`src/llama-model.cpp` load_hparams, same build) reads them: integer keys of any width,
// head counts and feed-forward widths as a scalar or a per-layer array, key/value lengths
// defaulting to embedding_length / head_count, block_count including the NextN (MTP) layers.
#include "model/gguf_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>

#include "core/units.h"
#include "formats/gguf.h"

namespace vramfit {
namespace {

// GGUF architecture -> vramfit family (the names model_spec.cc gives config.json models).
struct ArchRow {
  std::string_view arch;
  std::string_view family;
  bool qk_norm;
  bool hybrid;       // Gated DeltaNet layers, placed by full_attention_interval
  bool output_gate;  // q_proj also yields a gate (Qwen3-Next, Qwen3.5)
  int swa_period;    // llama.cpp's fixed sliding pattern: layer i global iff (i+1) % p == 0
};
constexpr std::array<ArchRow, 20> kArchs = {{
    {"llama", "llama", false, false, false, 0},
    {"qwen2", "qwen2", false, false, false, 0},
    {"qwen2moe", "qwen2_moe", false, false, false, 0},
    {"qwen3", "qwen3", true, false, false, 0},
    {"qwen3moe", "qwen3_moe", true, false, false, 0},
    // The vision-language models' text files (llama-arch.cpp LLM_ARCH_QWEN2VL, QWEN3VL,
    // QWEN3VLMOE): the same blocks as qwen2 / qwen3 / qwen3moe (M-RoPE and Qwen3-VL's deepstack
    // inputs change no weight or KV cache); the vision tower is the separate mmproj file.
    {"qwen2vl", "qwen2", false, false, false, 0},
    {"qwen3vl", "qwen3", true, false, false, 0},
    {"qwen3vlmoe", "qwen3_moe", true, false, false, 0},
    {"qwen3next", "qwen3_next", true, true, true, 0},
    {"qwen35", "qwen3_5", true, true, true, 0},
    {"qwen35moe", "qwen3_5_moe", true, true, true, 0},
    {"deepseek2", "deepseek_v2", false, false, false, 0},
    // GLM-4.5/4.6 (LLM_ARCH_GLM4_MOE): biased q/k/v, optional q/k norms (read by tensor),
    // leading dense blocks, a shared expert, the router's exp_probs_b, NextN blocks last.
    {"glm4moe", "glm4_moe", false, false, false, 0},
    // MiniMax-M2 (LLM_ARCH_MINIMAX_M2): q/k norms over all heads, the router's exp_probs_b.
    {"minimax-m2", "minimax_m2", true, false, false, 0},
    // llama-model.cpp: gemma2 alternates (set_swa_pattern(2)), gemma3 is 5 local : 1 global.
    {"gemma2", "gemma2", false, false, false, 2},
    {"gemma3", "gemma3", true, false, false, 6},
    // gemma4: the converter writes the pattern as a per-layer array (sliding_window_pattern).
    {"gemma4", "gemma4", true, false, false, 6},
    // gemma3n: 4 local : 1 global (set_swa_pattern(5)), KV shared from n_layer_kv_from_start.
    {"gemma3n", "gemma3n", true, false, false, 5},
    {"gpt-oss", "gpt_oss", false, false, false, 2},
    // Phi-3/Phi-4: fused attn_qkv and ffn_up; every layer's KV cache charged in full (a
    // sliding window some Phi-3 files declare is not applied: pessimistic).
    {"phi3", "phi3", false, false, false, 0},
}};

// qwen3next/qwen35 loaders default full_attention_interval to 4 when the key is absent.
constexpr int64_t kDefaultFullAttentionInterval = 4;

Status Bad(const GgufFile& f, std::string_view key, std::string_view msg) {
  return Status::Corrupt(fmt::format("{}: key \"{}\": {}", f.origin, key, msg));
}

// A scalar-or-per-layer key: n values (0 where absent and no default).
Status PerLayer(const GgufFile& f, const std::string& key, size_t n, int64_t fallback,
                std::vector<int64_t>* out) {
  out->assign(n, fallback);
  const GgufValue* v = f.Find(key);
  if (v == nullptr) return Status::Ok();
  int64_t s = 0;
  if (v->AsInt(&s)) {
    if (s < 0) return Bad(f, key, fmt::format("expected a count, found {}", s));
    out->assign(n, s);
    return Status::Ok();
  }
  if (!v->IsIntArray()) {
    return Bad(f, key, fmt::format("expected an integer or an array of integers, found {}",
                                   GgufTypeName(v->type)));
  }
  if (v->ints.size() < n) {
    return Bad(f, key, fmt::format("a per-layer array of {} values for {} layers",
                                   v->ints.size(), n));
  }
  for (size_t i = 0; i < n; ++i) {
    if (v->ints[i] < 0) return Bad(f, key, fmt::format("layer {}: {}", i, v->ints[i]));
    (*out)[i] = v->ints[i];
  }
  return Status::Ok();
}

int64_t IntOr(const GgufFile& f, const std::string& key, int64_t fallback) {
  int64_t v = 0;
  return f.Int(key, &v) && v >= 0 ? v : fallback;
}

bool HasTensor(const GgufFile& f, std::string_view name) {
  return std::any_of(f.tensors.begin(), f.tensors.end(),
                     [&](const TensorInfo& t) { return t.name == name; });
}
bool HasTensorSuffix(const GgufFile& f, std::string_view suffix) {
  return std::any_of(f.tensors.begin(), f.tensors.end(),
                     [&](const TensorInfo& t) { return t.name.ends_with(suffix); });
}

// Which layers slide: a per-layer bool/int array, a period, or the architecture's pattern.
std::vector<bool> SlidingLayers(const GgufFile& f, const std::string& a, const ArchRow* row,
                                size_t n) {
  std::vector<bool> out(n, false);
  if (IntOr(f, a + ".attention.sliding_window", 0) <= 0) return out;
  const GgufValue* p = f.Find(a + ".attention.sliding_window_pattern");
  int64_t period = row ? row->swa_period : 0;
  if (p != nullptr && p->IsIntArray() && p->ints.size() >= n) {
    for (size_t i = 0; i < n; ++i) out[i] = p->ints[i] != 0;
    return out;
  }
  if (p != nullptr) p->AsInt(&period);
  if (period <= 0) return out;
  for (size_t i = 0; i < n; ++i) out[i] = (i + 1) % static_cast<size_t>(period) != 0;
  return out;
}

QuantScheme SchemeOf(const GgufFile& f, std::vector<std::string>* warnings) {
  QuantScheme q;
  int64_t ft = -1;
  f.Int("general.file_type", &ft);
  const formats::FileTypeLabel label = formats::GgufFileType(ft);
  // The real mix decides: quantized when any tensor is a ggml block type.
  const bool any_block = std::any_of(f.tensors.begin(), f.tensors.end(), [](const TensorInfo& t) {
    return IsGgmlBlockType(t.dtype) || t.dtype == Dtype::kI8;
  });
  if (!any_block) return q;
  q.method = QuantMethod::kOther;
  q.method_text = "gguf";
  q.format = label.known ? std::string(label.label) : "";
  q.bits = label.known && IsGgmlBlockType(label.main) ? DtypeBits(label.main) : 4;
  return q;
}

}  // namespace

Result<ModelSpec> ModelSpecFromGguf(const GgufFile& f) {
  ModelSpec spec;
  const std::string a = f.Architecture();
  if (a.empty()) return Bad(f, "general.architecture", "missing: every GGUF model gives it");
  spec.architecture = a;
  spec.model_type = a;
  const ArchRow* row = nullptr;
  for (const ArchRow& r : kArchs) {
    if (r.arch == a) row = &r;
  }
  if (row == nullptr) {
    spec.family = "generic";
    spec.generic = true;
    spec.warnings.push_back(fmt::format(
        "unknown GGUF architecture \"{}\": read as a generic decoder from its {}.* keys; "
        "per-layer details may be wrong", a, a));
  } else {
    spec.family = std::string(row->family);
  }
  int64_t blocks = 0, hidden = 0;
  if (!f.Int(a + ".block_count", &blocks) || blocks <= 0 || blocks > 100000) {
    return Bad(f, a + ".block_count", "missing or out of range (expected 1-100,000 layers)");
  }
  if (!f.Int(a + ".embedding_length", &hidden) || hidden <= 0 || hidden > (int64_t{1} << 24)) {
    return Bad(f, a + ".embedding_length", "missing or out of range");
  }
  spec.hidden_size = hidden;
  spec.mtp_layers = std::min<int64_t>(IntOr(f, a + ".nextn_predict_layers", 0), blocks - 1);
  const size_t total = static_cast<size_t>(blocks);
  const size_t n = static_cast<size_t>(blocks - spec.mtp_layers);

  // Vocabulary: the key, else the tokenizer's token count, else the embedding's rows.
  spec.vocab_size = IntOr(f, a + ".vocab_size", 0);
  if (spec.vocab_size == 0) {
    if (const GgufValue* tok = f.Find("tokenizer.ggml.tokens");
        tok != nullptr && tok->type == GgufType::kArray) {
      spec.vocab_size = static_cast<int64_t>(tok->array_count);
    }
  }
  for (const TensorInfo& t : f.tensors) {
    if (spec.vocab_size == 0 && t.name == "token_embd.weight" && !t.shape.empty())
      spec.vocab_size = static_cast<int64_t>(t.shape[0]);
  }
  spec.max_position_embeddings = IntOr(f, a + ".context_length", 0);
  spec.rope_scaling.type = f.String(a + ".rope.scaling.type");
  if (const GgufValue* v = f.Find(a + ".rope.scaling.factor"); v && v->type == GgufType::kF32)
    spec.rope_scaling.factor = v->f;
  spec.rope_scaling.original_max_position_embeddings =
      IntOr(f, a + ".rope.scaling.original_context_length", 0);
  spec.tie_word_embeddings = !HasTensor(f, "output.weight");
  // Weights' float type: the embedding's when it is a float, else F16 (llama.cpp's default
  // KV and compute type).
  spec.dtype = Dtype::kF16;
  for (const TensorInfo& t : f.tensors) {
    if (t.name == "token_embd.weight" && (t.dtype == Dtype::kBF16 || t.dtype == Dtype::kF32))
      spec.dtype = t.dtype;
  }
  // llama.cpp keeps recurrent (SSM / delta-net) state in F32 (llama-model.cpp create_memory:
  // the recurrent memory's r and s types are GGML_TYPE_F32).
  spec.ssm_state_dtype = Dtype::kF32;

  // Per-layer attention.
  std::vector<int64_t> heads, kv_heads, ffn;
  VRAMFIT_RETURN_IF_ERROR(PerLayer(f, a + ".attention.head_count", total, 0, &heads));
  std::vector<int64_t> heads_n(heads.begin(), heads.begin() + n);
  // llama.cpp's default head size divides by the first layer's head count (n_head(0)).
  const int64_t head0 =
      heads[0] > 0 ? heads[0] : *std::max_element(heads.begin(), heads.end());
  VRAMFIT_RETURN_IF_ERROR(PerLayer(f, a + ".attention.head_count_kv", total, -1, &kv_heads));
  VRAMFIT_RETURN_IF_ERROR(PerLayer(f, a + ".feed_forward_length", total, 0, &ffn));
  const int64_t key_len =
      IntOr(f, a + ".attention.key_length", head0 > 0 ? hidden / head0 : 0);
  const int64_t value_len = IntOr(f, a + ".attention.value_length", key_len);
  const int64_t key_len_swa = IntOr(f, a + ".attention.key_length_swa", key_len);
  const int64_t shared_kv = IntOr(f, a + ".attention.shared_kv_layers", 0);
  if (shared_kv < 0 || (shared_kv > 0 && static_cast<size_t>(shared_kv) >= n)) {
    return Bad(f, a + ".attention.shared_kv_layers",
               fmt::format("{} shared layers of {}: expected 0 to {}", shared_kv, n, n - 1));
  }
  const int64_t window = IntOr(f, a + ".attention.sliding_window", 0);
  const std::vector<bool> sliding = SlidingLayers(f, a, row, n);
  const int64_t kv_lora = IntOr(f, a + ".attention.kv_lora_rank", 0);
  const bool hybrid = (row && row->hybrid) || f.Find(a + ".full_attention_interval") != nullptr;
  const int64_t interval =
      IntOr(f, a + ".full_attention_interval", hybrid ? kDefaultFullAttentionInterval : 0);
  if (row && row->hybrid && f.Find(a + ".full_attention_interval") == nullptr) {
    spec.warnings.push_back(fmt::format("{}.full_attention_interval absent: every {}th layer "
                                        "taken as full attention, as llama.cpp does", a,
                                        kDefaultFullAttentionInterval));
  }
  const bool qkv_bias = HasTensorSuffix(f, ".attn_q.bias");
  const bool o_bias = HasTensorSuffix(f, ".attn_output.bias");
  const bool qk_norm = HasTensorSuffix(f, ".attn_q_norm.weight") || (row && row->qk_norm);

  // Experts.
  const int64_t experts = IntOr(f, a + ".expert_count", 0);
  const int64_t used = IntOr(f, a + ".expert_used_count", 0);
  const int64_t expert_ffn = IntOr(f, a + ".expert_feed_forward_length", 0);
  const int64_t shared_count = IntOr(f, a + ".expert_shared_count", 0);
  const int64_t shared_ffn = IntOr(f, a + ".expert_shared_feed_forward_length", 0);
  const int64_t leading_dense = IntOr(f, a + ".leading_dense_block_count", 0);
  const bool shared_gate = HasTensorSuffix(f, ".ffn_gate_inp_shexp.weight");

  spec.layers.resize(n);
  for (size_t i = 0; i < n; ++i) {
    AttentionSpec& at = spec.layers[i].attention;
    at.num_heads = heads[i];
    at.num_kv_heads = kv_heads[i] >= 0 ? kv_heads[i] : heads[i];
    at.head_dim = key_len;
    at.qkv_bias = qkv_bias;
    at.o_bias = o_bias;
    at.qk_norm = qk_norm;
    at.output_gate = row && row->output_gate;
    if (hybrid && interval > 0 && (i + 1) % static_cast<size_t>(interval) != 0) {
      at.kind = AttentionKind::kLinear;
      at.linear_conv_kernel_dim = IntOr(f, a + ".ssm.conv_kernel", 0);
      at.linear_key_head_dim = IntOr(f, a + ".ssm.state_size", 0);
      at.linear_num_key_heads = IntOr(f, a + ".ssm.group_count", 0);
      at.linear_num_value_heads = IntOr(f, a + ".ssm.time_step_rank", 0);
      const int64_t inner = IntOr(f, a + ".ssm.inner_size", 0);
      at.linear_value_head_dim =
          at.linear_num_value_heads > 0 ? inner / at.linear_num_value_heads : 0;
    } else if (kv_lora > 0) {
      // MLA: the cache holds kv_lora_rank + the rope part per token. key_length_mla /
      // value_length_mla are the per-head sizes before compression (newer converters; older
      // ones wrote them as key_length / value_length).
      at.kind = AttentionKind::kMla;
      at.kv_lora_rank = kv_lora;
      at.q_lora_rank = IntOr(f, a + ".attention.q_lora_rank", 0);
      at.qk_rope_head_dim = IntOr(f, a + ".rope.dimension_count", 0);
      const int64_t k_mla = IntOr(f, a + ".attention.key_length_mla", key_len);
      at.qk_nope_head_dim = std::max<int64_t>(0, k_mla - at.qk_rope_head_dim);
      at.v_head_dim = IntOr(f, a + ".attention.value_length_mla", value_len);
      at.head_dim = k_mla;
      at.num_kv_heads = at.num_heads;
    } else if (sliding[i]) {
      at.kind = AttentionKind::kSliding;
      at.sliding_window = window;
      // Gemma 4: sliding layers have their own head size (n_embd_head_k_swa, llama-hparams).
      at.head_dim = key_len_swa;
    }
    // Gemma 3n/4: layers from n_layer_kv_from_start on reuse earlier layers' KV (has_kv).
    at.kv_shared = shared_kv > 0 && i >= n - static_cast<size_t>(shared_kv);
    MlpSpec& m = spec.layers[i].mlp;
    m.intermediate_size = ffn[i];
    if (experts > 0 && static_cast<int64_t>(i) >= leading_dense) {
      m.kind = MlpKind::kMoe;
      m.num_experts = experts;
      m.experts_per_token = used;
      m.expert_intermediate_size = expert_ffn > 0 ? expert_ffn : ffn[i];
      m.num_shared_experts = shared_count > 0 ? shared_count : (shared_ffn > 0 ? 1 : 0);
      m.shared_intermediate_size =
          shared_ffn > 0 ? shared_ffn * std::max<int64_t>(1, shared_count)
                         : m.num_shared_experts * m.expert_intermediate_size;
      m.shared_expert_gate = shared_gate;
      m.router_score_bias = HasTensorSuffix(f, ".exp_probs_b.bias");
      if (row && row->family == "gemma4") {
        // Gemma 4's dense FFN (feed_forward_length) runs beside the experts.
        m.num_shared_experts = 1;
        m.shared_intermediate_size = ffn[i];
      }
    }
  }
  if (value_len != key_len && kv_lora == 0) {
    spec.warnings.push_back(fmt::format(
        "{}.attention.value_length {} differs from key_length {}: ModelSpec holds one head "
        "size (the key's)", a, value_len, key_len));
  }

  NamingSpec& nm = spec.naming;
  nm.layers = "blk.";
  nm.embed = "token_embd.weight";
  nm.final_norm = "output_norm.weight";
  nm.lm_head = "output.weight";
  nm.vision = "v.";
  nm.mtp = "nextn.";
  spec.quant = SchemeOf(f, &spec.warnings);
  return spec;
}

void AuditGguf(const GgufFile& f, Inventory* inv) {
  // The decoder projections' types, by bytes.
  std::map<Dtype, std::pair<uint64_t, uint64_t>> mix;  // bytes, tensors
  uint64_t proj_bytes = 0;
  std::map<Dtype, uint64_t> iq;
  for (const TensorEntry& e : inv->tensors) {
    const Dtype d = e.info.dtype;
    const std::string_view name = DtypeName(d);
    if (name.starts_with("IQ")) iq[d] += e.info.bytes();
    if (e.layer < 0 || e.part != Part::kWeight) continue;
    if (e.role != Role::kAttnProj && e.role != Role::kMlaProj && e.role != Role::kLinearAttnProj &&
        e.role != Role::kMlpProj && e.role != Role::kExpertProj &&
        e.role != Role::kSharedExpertProj) {
      continue;
    }
    mix[d].first += e.info.bytes();
    mix[d].second += 1;
    proj_bytes += e.info.bytes();
  }
  std::vector<std::pair<Dtype, std::pair<uint64_t, uint64_t>>> sorted(mix.begin(), mix.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& x, const auto& y) { return x.second.first > y.second.first; });
  int64_t ft = -1;
  const bool has_ft = f.Int("general.file_type", &ft);
  const formats::FileTypeLabel label = formats::GgufFileType(ft);
  const std::string label_text =
      !has_ft ? "no general.file_type"
              : label.known ? fmt::format("general.file_type {} ({})", ft, label.label)
                            : fmt::format("general.file_type {} (unknown)", ft);
  if (!sorted.empty()) {
    std::string list;
    for (const auto& [d, v] : sorted) {
      if (!list.empty()) list += ", ";
      list += fmt::format("{} x{} ({}, {:.1f}%)", DtypeName(d), v.second,
                          core::FormatBytes(v.first), 100.0 * v.first / proj_bytes);
    }
    inv->audit.findings.push_back(
        {Severity::kInfo, "gguf-type-mix",
         fmt::format("{}; the decoder projections hold {}", label_text, list), proj_bytes});
    if (label.known && sorted.front().first != label.main) {
      const auto it = mix.find(label.main);
      const uint64_t held = it == mix.end() ? 0 : it->second.first;
      inv->audit.findings.push_back(
          {Severity::kWarning, "gguf-file-type-mismatch",
           fmt::format("{} names {} as the main type, but most projection bytes are {} ({:.1f}%; "
                       "{} holds {:.1f}%): the label is only a hint, the per-tensor types are "
                       "what loads", label_text, DtypeName(label.main),
                       DtypeName(sorted.front().first),
                       100.0 * sorted.front().second.first / proj_bytes, DtypeName(label.main),
                       100.0 * held / proj_bytes),
           held});
    }
  }
  if (!iq.empty()) {
    uint64_t bytes = 0;
    std::string list;
    for (const auto& [d, b] : iq) {
      bytes += b;
      list += (list.empty() ? "" : ", ") + std::string(DtypeName(d));
    }
    const bool imatrix = f.Find("quantize.imatrix.file") != nullptr ||
                         f.Find("quantize.imatrix.dataset") != nullptr;
    inv->audit.findings.push_back(
        {Severity::kInfo, "gguf-iq-types",
         fmt::format("{} ({}) are importance-matrix (IQ) types{}; their kernels are not on every "
                     "GPU backend: check that the one that will run them supports them",
                     list, core::FormatBytes(bytes),
                     imatrix ? ", made with the imatrix the quantize.imatrix.* keys name"
                             : "; the file names no imatrix (no quantize.imatrix.* keys)"),
         bytes});
  }
}

}  // namespace vramfit
