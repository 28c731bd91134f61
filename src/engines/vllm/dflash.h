// vLLM's DFlash drafter (--speculative-config '{"method": "dflash", "model": ...}'): the
// weights it keeps on each GPU. Its attention layers page in the target's KV pool like any
// draft model's (plan.cc appends them to the target's layers).
#ifndef VRAMFIT_ENGINES_VLLM_DFLASH_H_
#define VRAMFIT_ENGINES_VLLM_DFLASH_H_

#include <cstdint>

#include "vramfit/model.h"

namespace vramfit::vllm {

struct DflashWeights {
  uint64_t layers = 0;  // the decoder layers, sharded by TP
  uint64_t fc = 0;      // the context projection, whole on every rank
  uint64_t norms = 0;   // hidden_norm and the final norm
  uint64_t total() const { return layers + fc + norms; }
};

// Bytes per rank of DFlash drafter `draft` at tensor parallel `tp`, its parameters created in
// `dtype_bits` (the target's dtype). The drafter keeps no embedding and no lm_head of its own.
DflashWeights DflashWeightsPerRank(const ModelSpec& draft, int64_t tp, int dtype_bits);

}  // namespace vramfit::vllm

#endif  // VRAMFIT_ENGINES_VLLM_DFLASH_H_
