// vLLM's LoRA slots (see lora.h). Read at upstream main of 2026 (vllm/lora/layers/
// base_linear.py, column_parallel_linear.py, row_parallel_linear.py, vocab_parallel_embedding.py,
// logits_processor.py); v0.10 keeps the same classes in one file, lora/layers.py, with
// lora_bias_stacked beside them under --enable-lora-bias (not modelled).
#include "engines/vllm/lora.h"

#include <fmt/format.h>

#include <algorithm>

namespace vramfit::vllm {
namespace {

// Bytes of one wrapped linear's stacks, `slices` output slices of `out` rows each (already the
// rank's shard), input `in` (the rank's input: the whole hidden size for a column-parallel
// layer, the shard for a row-parallel one): lora_a slices x L x rank_a x in, lora_b slices x L x
// out x rank (base_linear.py create_lora_weights; MergedColumnParallelLinearWithLoRA per slice).
uint64_t Stacks(uint64_t slices, uint64_t loras, uint64_t rank_a, uint64_t rank, uint64_t in,
                uint64_t out, uint64_t bytes) {
  return slices * loras * (rank_a * in + out * rank) * bytes;
}

// --lora-target-modules (LoRAConfig.target_modules; lora/utils.py is_in_target_modules, read at
// 0.22): a module gets slots where no list is given, where its suffix is listed, or where one of
// the checkpoint names packed into it is (packed_modules_mapping: qkv_proj from q_proj, k_proj,
// v_proj; gate_up_proj from gate_proj, up_proj).
bool Targeted(const std::vector<std::string>& targets, std::string_view module,
              std::initializer_list<std::string_view> packed = {}) {
  if (targets.empty()) return true;
  auto listed = [&](std::string_view name) {
    return std::find(targets.begin(), targets.end(), name) != targets.end();
  };
  if (listed(module)) return true;
  return std::any_of(packed.begin(), packed.end(), listed);
}

}  // namespace

bool LoraWrapsEmbeddings(const std::string& architecture, const Rules& rules) {
  if (architecture == "LlamaForCausalLM" || architecture == "MistralForCausalLM") return true;
  return architecture == "Qwen3ForCausalLM" && rules.qwen3_lora_embeddings;
}

LoraSlots LoraSlotBytes(const ModelSpec& spec, const LoraOptions& o, const Rules& rules) {
  LoraSlots out;
  const uint64_t tp = static_cast<uint64_t>(std::max<int64_t>(1, o.tensor_parallel_size));
  const uint64_t loras = static_cast<uint64_t>(std::max<int64_t>(1, o.max_loras));
  const uint64_t rank = static_cast<uint64_t>(std::max<int64_t>(1, o.max_lora_rank));
  // --fully-sharded-loras: a column-parallel layer's lora_a holds rank / tp rows, a row-parallel
  // layer's lora_b output / tp (divide(): the rank must split evenly, checked by the plan).
  const uint64_t rank_col = o.fully_sharded ? rank / tp : rank;
  const uint64_t b = o.dtype_bytes;
  const uint64_t hidden = static_cast<uint64_t>(spec.hidden_size);
  const uint64_t hidden_row_out = o.fully_sharded ? hidden / tp : hidden;
  size_t skipped_attn = 0, skipped_moe = 0, moe_layers = 0;
  uint64_t moe_bytes = 0;
  std::string moe_formula;
  uint64_t widest_slices = 0;
  std::string first;
  for (const LayerSpec& l : spec.layers) {
    const AttentionSpec& a = l.attention;
    uint64_t layer = 0;
    if ((a.kind == AttentionKind::kFull || a.kind == AttentionKind::kSliding) &&
        !a.output_gate && a.num_heads > 0) {
      // qkv_proj (MergedQKVParallelLinearWithLoRA, three slices: the rank's q heads and KV heads,
      // KV heads replicated when TP exceeds them) and o_proj (RowParallelLinearWithLoRA: input
      // the rank's heads, output the hidden size).
      const uint64_t hd = static_cast<uint64_t>(a.head_dim);
      const uint64_t q = static_cast<uint64_t>(a.num_heads) / tp * hd;
      const uint64_t kv = std::max<uint64_t>(1, static_cast<uint64_t>(a.num_kv_heads) / tp) * hd;
      const uint64_t qkv = loras * (3 * rank_col * hidden + (q + 2 * kv) * rank) * b;
      const uint64_t o_proj = Stacks(1, loras, rank, rank, q, hidden_row_out, b);
      if (Targeted(o.target_modules, "qkv_proj", {"q_proj", "k_proj", "v_proj"})) layer += qkv;
      if (Targeted(o.target_modules, "o_proj")) layer += o_proj;
      widest_slices = std::max<uint64_t>(widest_slices, 3);
      if (first.empty()) {
        first = fmt::format("qkv {} x ({} x {} x {} + ({} + 2 x {}) x {}) + o {} x ({} x {} + "
                            "{} x {})",
                            loras, 3, rank_col, hidden, q, kv, rank, loras, rank, q,
                            hidden_row_out, rank);
      }
    } else {
      ++skipped_attn;
    }
    if (l.mlp.kind == MlpKind::kDense && l.mlp.intermediate_size > 0) {
      // gate_up_proj (MergedColumnParallelLinearWithLoRA, two slices of I / tp) and down_proj
      // (RowParallelLinearWithLoRA: input I / tp, output the hidden size).
      const uint64_t i = static_cast<uint64_t>(l.mlp.intermediate_size) / tp;
      if (Targeted(o.target_modules, "gate_up_proj", {"gate_proj", "up_proj"})) {
        layer += Stacks(2, loras, rank_col, rank, hidden, i, b);
      }
      if (Targeted(o.target_modules, "down_proj")) {
        layer += Stacks(1, loras, rank, rank, i, hidden_row_out, b);
      }
      widest_slices = std::max<uint64_t>(widest_slices, 2);
      if (first.find("gate_up") == std::string::npos && !first.empty()) {
        first += fmt::format(" + gate_up 2 x {} x ({} x {} + {} x {}) + down {} x ({} x {} + {} "
                             "x {})",
                             loras, rank_col, hidden, i, rank, loras, rank, i, hidden_row_out,
                             rank);
      }
    } else if (l.mlp.kind == MlpKind::kMoe) {
      // The routed experts (FusedMoEWithLoRA.create_lora_weights, fused_moe.py): every expert
      // on every rank (expert parallelism is refused with LoRA), the intermediate size split by
      // TP. w13: two slices (gate, up) of lora_a max_loras x E x rank_a x hidden and lora_b
      // max_loras x E x I/tp x rank (FusedMoE3DWithLoRA: one slice of 2 x I/tp, the same
      // bytes); w2: lora_a max_loras x E x rank x I/tp, lora_b max_loras x E x hidden_out x rank.
      const uint64_t i = static_cast<uint64_t>(l.mlp.expert_intermediate_size) / tp;
      const uint64_t e = static_cast<uint64_t>(l.mlp.num_experts);
      // The experts' module is ".experts"; a list naming their projections counts them too (the
      // safe side where a model's packing maps them there).
      const bool experts_targeted =
          Targeted(o.target_modules, "experts",
                   {"gate_proj", "up_proj", "down_proj", "gate_up_proj", "w1", "w2", "w3"});
      if (rules.lora_fused_moe && i > 0 && e > 0) {
        const uint64_t experts =
            experts_targeted ? e * (Stacks(2, loras, rank_col, rank, hidden, i, b) +
                                    Stacks(1, loras, rank, rank, i, hidden_row_out, b))
                             : 0;
        layer += experts;
        moe_bytes += experts;
        if (moe_formula.empty()) {
          moe_formula = fmt::format(
              " + experts {} x (gate_up 2 x {} x ({} x {} + {} x {}) + down {} x ({} x {} + {} "
              "x {})) in {{}} MoE layers",
              e, loras, rank_col, hidden, i, rank, loras, rank, i, hidden_row_out, rank);
        }
        ++moe_layers;
      } else {
        ++skipped_moe;
      }
      // A shared expert is a plain MLP (gate_up_proj and down_proj), wrapped like a dense one.
      if (l.mlp.num_shared_experts > 0 && l.mlp.shared_intermediate_size > 0) {
        const uint64_t si = static_cast<uint64_t>(l.mlp.shared_intermediate_size) / tp;
        if (Targeted(o.target_modules, "gate_up_proj", {"gate_proj", "up_proj"})) {
          layer += Stacks(2, loras, rank_col, rank, hidden, si, b);
        }
        if (Targeted(o.target_modules, "down_proj")) {
          layer += Stacks(1, loras, rank, rank, si, hidden_row_out, b);
        }
      }
    }
    out.decoder += layer;
  }
  out.formula = fmt::format("{} layers x [{}] x {} B", spec.layers.size(),
                            first.empty() ? std::string("none") : first, b);
  if (moe_layers > 0) {
    out.formula += fmt::format(fmt::runtime(moe_formula), moe_layers) +
                   fmt::format(" ({} in all)", moe_bytes);
  }
  if (skipped_attn > 0) {
    out.not_modelled.push_back(fmt::format(
        "the LoRA buffers of {} attention layers that are not plain q/k/v/o projections (MLA, "
        "linear attention, gated queries)",
        skipped_attn));
  }
  if (skipped_moe > 0) {
    out.not_modelled.push_back(fmt::format(
        "the LoRA buffers of the experts of {} MoE layers (vllm/lora/layers/fused_moe.py, "
        "from 0.11.1)",
        skipped_moe));
  }
  if (LoraWrapsEmbeddings(spec.architecture, rules)) {
    const uint64_t vocab = static_cast<uint64_t>(spec.vocab_size);
    if (rules.lora_extra_vocab) {
      out.not_modelled.push_back(
          "the embedding and LM head LoRA buffers and the extra vocabulary rows "
          "(--lora-extra-vocab-size x --max-loras) of this release");
    } else {
      // VocabParallelEmbeddingWithLoRA: lora_a max_loras x vocab x rank, lora_b max_loras x
      // hidden x rank; LogitsProcessorWithLoRA: lora_a max_loras x rank x hidden, lora_b
      // max_loras x vocab x rank. Whole on every rank.
      const uint64_t wrapped = (Targeted(o.target_modules, "embed_tokens") ? 1 : 0) +
                               (Targeted(o.target_modules, "lm_head") ? 1 : 0);
      out.embeddings = wrapped * loras * (vocab + hidden) * rank * b;
      out.formula += fmt::format(" + embed_tokens and lm_head {} x {} x ({} + {}) x {} x {} B",
                                 wrapped, loras, vocab, hidden, rank, b);
    }
  }
  // The profile forward with the dummy LoRAs active: the shrink output of the widest wrapped
  // projection, fp32 (n_slices x tokens x rank_a; column_parallel_linear.py _mcp_apply and
  // punica_wrapper add_lora_linear), and with --fully-sharded-loras its all-gather (rank).
  out.profile_bytes = widest_slices * o.batched_tokens * 4 *
                      (rank_col + (o.fully_sharded && tp > 1 ? rank : 0));
  return out;
}

}  // namespace vramfit::vllm
