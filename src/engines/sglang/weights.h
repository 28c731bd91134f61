// Weights on each GPU under SGLang: which tensors its parallel layers shard across
// tensor-parallel ranks and which every rank holds whole, what online FP8 quantization keeps
// and its 16-bit transient while loading, and the largest pipeline stage.
//
// Rules from SGLang's layers (python/sglang/srt/layers/linear.py, vocab_parallel_embedding.py,
// moe/fused_moe_triton/layer.py, quantization/fp8.py at v0.5.5), cited beside each in
// weights.cc. Checkpoint bytes come from the inventory (headers, never parameters x bits).
#ifndef VRAMFIT_ENGINES_SGLANG_WEIGHTS_H_
#define VRAMFIT_ENGINES_SGLANG_WEIGHTS_H_

#include <cstdint>
#include <string>

#include "vramfit/inventory.h"
#include "vramfit/status.h"

namespace vramfit::sglang {

struct WeightOptions {
  int64_t tensor_parallel_size = 1;
  int64_t attention_tp_size = 1;  // tp / dp with --enable-dp-attention, else tp
  int64_t pipeline_parallel_size = 1;
  std::string quantization;       // --quantization ("" = the checkpoint's)
};

struct SglangWeights {
  uint64_t bytes_per_rank = 0;     // "Load weight end. ... mem usage=X GB" on the largest rank
  uint64_t load_peak_per_rank = 0; // with the largest transient while loading
  std::string transient_reason;    // "online FP8: ..."
  // The checkpoint's MTP layers on one rank: not part of bytes_per_rank (the target model
  // skips them); NEXTN speculative decoding loads them as its draft model.
  uint64_t mtp_bytes = 0;
  std::string kernel;              // "fp8 (online)", "checkpoint's awq", "unquantized"
};

// kInvalidArgument for a --quantization SGLang would refuse for this checkpoint.
Result<SglangWeights> WeightsPerRank(const Inventory& inv, const WeightOptions& o);

}  // namespace vramfit::sglang

#endif  // VRAMFIT_ENGINES_SGLANG_WEIGHTS_H_
