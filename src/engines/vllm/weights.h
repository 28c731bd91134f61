// Weights on each GPU under vLLM: how vLLM shards every tensor of a checkpoint across
// tensor-parallel (and expert-parallel) ranks, what its quantization path keeps, drops or
// repacks after loading, and the transient peak of loading.
//
// Rules from vLLM's model executor (vocab_parallel_embedding.py, linear.py, fused_moe/layer.py,
// quantization/{awq_marlin,gptq_marlin,fp8}.py), as restated in
// ../shared/reference/vllm-memory.md §5 and cited beside each rule in
// src/engines/vllm/weights.cc.
#ifndef VRAMFIT_ENGINES_VLLM_WEIGHTS_H_
#define VRAMFIT_ENGINES_VLLM_WEIGHTS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engines/vllm/rules.h"
#include "vramfit/inventory.h"
#include "vramfit/status.h"

namespace vramfit {

struct VllmWeightOptions {
  int64_t tensor_parallel_size = 1;
  bool enable_expert_parallel = false;  // --enable-expert-parallel: experts split, not sliced
  int64_t data_parallel_size = 1;       // with expert parallel, ep = tp x dp
  // EPLB's redundant experts: each EP rank holds (E + R) / ep physical experts of the E routed
  // ones (fused_moe/layer.py: num_physical_experts = num_experts + num_redundant_experts).
  int64_t num_redundant_experts = 0;
  int64_t num_routed_experts = 0;
  bool marlin = true;                   // Marlin kernels apply (compute capability >= 7.5)
  bool load_speculative_mtp = false;    // MTP layers are loaded only for speculative decoding
  // --language-model-only: the vision tower and projector are not built (their modules are made
  // under _mark_tower_model, model_executor/models/interfaces.py, PR #32605), so not loaded.
  bool language_model_only = false;
  // --mm-encoder-tp-mode data on a model that supports it: the vision tower and projector are
  // built with disable_tp (qwen2_vl.py, qwen2_5_vl.py, qwen3_vl.py use_data_parallel), whole on
  // every rank.
  bool encoder_replicated = false;
  // --dtype when it differs from the config's: tensors stored in the config's dtype load in
  // this many bits (params are created in the model dtype). 0: as stored.
  int model_dtype_bits = 0;
  std::string quantization;  // --quantization ("" = from the checkpoint), e.g. "fp8", "awq"
  // gpt-oss MXFP4 experts: "marlin", "triton" or "flashinfer-trtllm" (VllmMxfp4Backend).
  std::string mxfp4_backend = "marlin";
  vllm::Rules rules = vllm::RulesFor(vllm::kNewestModelled);  // the release's rules
  // One pipeline stage: its decoder layers [first_layer, first_layer + layers) (layers -1: all),
  // and whether it is the first stage (the input embedding and every other tensor outside the
  // decoder layers) and the last (the final norm and lm_head, or the embedding again when the
  // checkpoint ties them).
  int64_t first_layer = 0;
  int64_t layers = -1;
  bool first_stage = true;
  bool last_stage = true;
};

struct VllmWeights {
  uint64_t bytes_per_rank = 0;       // what "Model loading took X GiB" reports on one rank
  uint64_t load_peak_per_rank = 0;   // bytes_per_rank + the largest transient while loading
  uint64_t transient_bytes = 0;      // that transient
  std::string transient_reason;      // "Marlin repack of model.layers.0.mlp.experts (w13)"...
  uint64_t dropped_bytes = 0;        // checkpoint bytes vLLM frees after loading (g_idx, zeros)
  uint64_t skipped_bytes = 0;        // checkpoint bytes not loaded at all (MTP without spec decode)
  uint64_t tower_skipped_bytes = 0;  // the vision tower and projector, under --language-model-only
  uint64_t largest_dequantized_layer = 0;  // plain-awq, bitsandbytes: one layer dequantized to
                                           // 16 bits at run time
  std::string kernel;                // "awq_marlin", "gptq_marlin", "fp8", "unquantized", ...
};

// How each tensor of an inventory shards under vLLM, computed once per model so that many
// plans (advice, fit searches) cost no more than a pass over a compact array.
struct VllmWeightProfile;

// Builds the profile of `inv`. The inventory must outlive nothing: the profile is self-contained.
std::shared_ptr<const VllmWeightProfile> ProfileVllmWeights(const Inventory& inv);

// Per-rank weights under vLLM from a profile.
Result<VllmWeights> VllmWeightsPerRank(const VllmWeightProfile& profile,
                                       const VllmWeightOptions& options);

// Per-rank weights for `inv` (parsed or synthesized) under vLLM (profiles it first).
Result<VllmWeights> VllmWeightsPerRank(const Inventory& inv, const VllmWeightOptions& options);

// Whether vLLM's model of `family` builds the embedding, the final norm and lm_head on every
// pipeline stage (not only the first or the last, as models/llama.py does).
bool VllmVocabOnEveryStage(const std::string& family);

// The MoE backend vLLM picks for MXFP4 (gpt-oss) experts on a GPU of compute capability `cc`
// (major x 10 + minor; 0 when unknown): "flashinfer-trtllm", "triton" or "marlin".
std::string VllmMxfp4Backend(int cc, const vllm::Rules& rules);

}  // namespace vramfit

#endif  // VRAMFIT_ENGINES_VLLM_WEIGHTS_H_
