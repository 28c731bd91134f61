// vLLM releases before 0.8 (see v0_legacy.h).
#include "engines/vllm/v0_legacy.h"

#include <fmt/format.h>

#include "core/units.h"

namespace vramfit::vllm {

using core::FormatBytes;

bool LegacyNcclInBudget(const Rules& rules) {
  return rules.v0_profiling == V0Profiling::kDeviceUsed ||
         rules.v0_profiling == V0Profiling::kSinceInit ||
         rules.v0_profiling == V0Profiling::kTorchPeakPlusNonTorch;
}

namespace {

// Everything on the device outside PyTorch: the CUDA context, NCCL, cuBLAS workspaces and kernel
// images, and other processes; `how` says which release's measurement charges it.
LegacyCharge WholeDevice(const LegacyDeviceMemory& m, const std::string& how) {
  LegacyCharge c;
  c.bytes = m.cuda_context + m.nccl + m.growth + m.other_processes;
  c.why = fmt::format("CUDA context {} + NCCL {} + cuBLAS workspaces and kernel images {}{}: {}",
                      FormatBytes(m.cuda_context), FormatBytes(m.nccl), FormatBytes(m.growth),
                      m.other_processes ? " + other processes " + FormatBytes(m.other_processes)
                                        : "",
                      how);
  return c;
}

}  // namespace

std::optional<LegacyCharge> LegacyV0NonTorch(const Rules& rules, const LegacyDeviceMemory& m) {
  LegacyCharge c;
  switch (rules.v0_profiling) {
    case V0Profiling::kSnapshot:
      return std::nullopt;
    case V0Profiling::kTorchPeak:
      // worker.py profile_num_available_blocks (v0.2.0-v0.2.4): peak_memory =
      // torch.cuda.max_memory_allocated() after the profile run, so only PyTorch's allocations
      // (the weights and the activations) are charged.
      c.why = fmt::format("nothing: vLLM {} charges torch.cuda.max_memory_allocated() only "
                          "(worker.py profile_num_available_blocks, before PR #2031)",
                          rules.text);
      return c;
    case V0Profiling::kDeviceUsed:
      // worker.py profile_num_available_blocks (v0.2.5-v0.3.0, PR #2031): peak_memory =
      // total - free after the profile run (torch.cuda.mem_get_info): the CUDA context, NCCL and
      // other processes are all charged, with the allocator's cached activation blocks (no
      // empty_cache before the measurement).
      return WholeDevice(m, fmt::format("vLLM {} charges total - free after the profile run "
                                        "(worker.py profile_num_available_blocks, PR #2031)",
                                        rules.text));
    case V0Profiling::kSinceInit:
      // worker.py (v0.3.1-v0.6.3, PR #2863): init_device records free memory after
      // torch.cuda.set_device (the context exists) and before the distributed set-up;
      // peak_memory = init_gpu_memory - free after the profile run.
      c.bytes = m.nccl + m.growth;
      c.why = fmt::format(
          "NCCL {} + cuBLAS workspaces and kernel images {}: vLLM {} charges the free memory at "
          "init_device minus the free memory after the profile run (worker.py, PR #2863), which "
          "leaves out the CUDA context and other processes",
          FormatBytes(m.nccl), FormatBytes(m.growth), rules.text);
      return c;
    case V0Profiling::kTorchPeakPlusNonTorch:
      // worker.py determine_num_available_blocks (v0.6.4, PR #9352): peak_memory =
      // memory_stats()["allocated_bytes.all.peak"] + (total - free - allocated_bytes.all.current
      // after empty_cache): everything outside PyTorch on the device, context included.
      return WholeDevice(m, fmt::format("vLLM {} adds the device's used memory outside PyTorch "
                                        "to the torch peak (worker.py "
                                        "determine_num_available_blocks, PR #9352)",
                                        rules.text));
  }
  return std::nullopt;
}

std::optional<ModelSpec> LegacyKvSpec(const Rules& rules, const ModelSpec& spec) {
  if (rules.mla_latent_cache || spec.CountAttention(AttentionKind::kMla) == 0) return std::nullopt;
  ModelSpec out = spec;
  for (LayerSpec& l : out.layers) {
    AttentionSpec& a = l.attention;
    if (a.kind != AttentionKind::kMla) continue;
    a.kind = AttentionKind::kFull;
    a.num_kv_heads = a.num_heads;
    a.head_dim = rules.deepseek_heads_padded_256 ? 256 : a.qk_nope_head_dim + a.qk_rope_head_dim;
  }
  return out;
}

}  // namespace vramfit::vllm
