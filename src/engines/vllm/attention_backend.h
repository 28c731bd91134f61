// vLLM's --attention-backend (AttentionConfig.backend, vllm/config/attention.py; the flag from
// 0.13, PR #26315 of 2025-12-05, which replaced the VLLM_ATTENTION_BACKEND variable; read at 0.22):
// the names vLLM accepts, the checks a backend the user names must pass (it is refused, with no
// fallback, when one fails), and the KV block size it makes vLLM choose. Facts and sources:
// docs/engines/vllm.md, "Attention backends".
#ifndef VRAMFIT_ENGINES_VLLM_ATTENTION_BACKEND_H_
#define VRAMFIT_ENGINES_VLLM_ATTENTION_BACKEND_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engines/vllm/refusals.h"
#include "engines/vllm/vllm.h"
#include "vramfit/model.h"
#include "vramfit/status.h"

namespace vramfit::vllm {

// The backend as vLLM reads the flag: its enum name in upper case (AttentionBackendEnum, matched
// case-insensitively), "" for "auto"; an unknown name is vLLM's own ValueError.
Result<std::string> ReadAttentionBackend(const std::string& text);

// What a named backend is checked against (AttentionBackend.validate_configuration).
struct BackendQuery {
  int64_t head_size = 0;        // MLA: kv_lora_rank + qk_rope_head_dim
  Dtype dtype = Dtype::kBF16;   // the model's dtype as vLLM runs it
  std::string kv_cache_dtype = "auto";
  int64_t block_size = 0;       // --block-size; 0: not given (not checked)
  bool mla = false;
  bool sinks = false;
  int64_t qk_nope_head_dim = 0;
  int compute_capability = 0;   // 89 for 8.9; 0: unknown (not checked)
};

// The reasons vLLM lists for refusing `name` (its words, in its order); empty: the backend runs.
std::vector<std::string> AttentionBackendReasons(std::string_view name, const BackendQuery& q);

// The block size vLLM gives the KV cache for `name` when --block-size is not given
// (Platform.update_block_size_for_backend: 16 where the backend takes it, else its smallest).
int64_t BackendBlockSize(std::string_view name);

// The query for `spec` under the settings, and vLLM's refusal of the named backend, if any.
BackendQuery QueryFor(const ModelSpec& spec, const GpuSpec& gpu, const VllmSettings& s,
                      Dtype model_dtype);
std::optional<Refusal> AttentionBackendRefusal(const ModelSpec& spec, const GpuSpec& gpu,
                                               const VllmSettings& s, Dtype model_dtype);

}  // namespace vramfit::vllm

#endif  // VRAMFIT_ENGINES_VLLM_ATTENTION_BACKEND_H_
