// SGLang's defaults (see defaults.h), each citing the upstream function it restates.
#include "engines/sglang/defaults.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/units.h"

namespace vramfit::sglang {

int64_t DerivedContextLen(const ModelSpec& spec) {
  if (spec.max_position_embeddings <= 0) return kFallbackContextLen;
  const auto& r = spec.rope_scaling;
  double factor = r.factor > 0 ? r.factor : 1;
  if (r.original_max_position_embeddings > 0 || r.type == "llama3") factor = 1;
  return static_cast<int64_t>(factor * static_cast<double>(spec.max_position_embeddings));
}

std::string ContextLenError(int64_t requested, int64_t derived) {
  return fmt::format(
      "User-specified context_length ({}) is greater than the derived context_length ({}). "
      "This may lead to incorrect model outputs or CUDA errors. Set "
      "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 to allow it",
      requested, derived);
}

double GpuMemMib(const GpuSpec& gpu) {
  return gpu.nvidia_smi_mib > 0 ? static_cast<double>(gpu.nvidia_smi_mib)
                                : static_cast<double>(gpu.total_bytes) / core::kMiBf;
}

int64_t DefaultChunkedPrefillSize(const Rules& rules, const GpuSpec& gpu) {
  const double mem = GpuMemMib(gpu);
  if (!rules.chunk_by_gpu_steps) return mem < 25000 ? 2048 : 8192;  // v0.4.x
  if (mem < 35 * 1024) return 2048;
  if (mem < 60 * 1024) return 4096;
  if (mem < 160 * 1024) return 8192;
  return 16384;
}

int64_t DefaultCudaGraphMaxBs(const Rules& rules, const GpuSpec& gpu, int64_t tp) {
  const double mem = GpuMemMib(gpu);
  if (!rules.graph_bs_by_gpu) return mem < 25000 ? 8 : 160;  // v0.4.x
  if (mem < 20 * 1024) return 8;                      // T4, 4080
  if (mem < 35 * 1024) return tp < 4 ? 24 : 80;       // A10, 4090, 5090
  if (mem < 60 * 1024) return tp < 4 ? 32 : 160;      // A100 40GB, L40
  if (mem < 160 * 1024) return tp < 4 ? 256 : 512;    // H100, A100 80GB, H20, H200
  return 512;                                         // B200, MI300
}

std::vector<int64_t> CaptureBatchSizes(int64_t max_bs, bool speculative, int64_t rows) {
  std::vector<int64_t> bs;
  auto range = [&](int64_t from, int64_t to, int64_t step) {
    for (int64_t b = from; b <= std::min(to, max_bs); b += step) bs.push_back(b);
  };
  if (speculative) {
    range(1, 8, 1);
    range(10, 32, 2);
    range(40, 64, 4);
    range(72, 256, 8);
    range(272, max_bs, 16);
  } else {
    for (int64_t b : {1, 2, 4, 8, 12}) {
      if (b <= max_bs) bs.push_back(b);
    }
    range(16, 256, 8);
    range(272, 511, 16);
    range(512, max_bs, 32);
  }
  if (rows > 0 && !bs.empty() && bs.back() > rows) {
    std::erase_if(bs, [rows](int64_t b) { return b >= rows - 1; });
    if (rows > 1) bs.push_back(rows - 1);
    bs.push_back(rows);
  }
  return bs;
}

double DefaultMemFractionStatic(const Rules& rules, const GpuSpec& gpu, const ModelSpec& spec,
                                const SglangSettings& s) {
  const double mem = GpuMemMib(gpu);
  double fraction = 0;
  if (!rules.fraction_from_reserve) {
    const int64_t tp = s.tensor_parallel_size;
    fraction = tp >= 16 ? 0.79 : tp >= 8 ? 0.81 : tp >= 4 ? 0.85 : tp >= 2 ? 0.87 : 0.88;
  } else {
    // reserved_mem in MB: 512 of metadata, 1.5 MB per prefill token, 2 MB per graph batch,
    // 1 GB per 8 ranks; DP attention 3 MB per batch and rank (4.5 above 300); at least 10 GB
    // on GPUs above 60 GB; EAGLE's draft 2 GB, a standalone draft 6 GB.
    double reserved = 512;
    reserved += static_cast<double>(std::max<int64_t>(s.max_num_batched_tokens, 2048)) * 1.5;
    reserved += static_cast<double>(s.cuda_graph_max_bs) * 2;
    reserved += static_cast<double>(s.tensor_parallel_size * s.pipeline_parallel_size) / 8 * 1024;
    if (s.enable_dp_attention) {
      const double bs_dp = static_cast<double>(s.cuda_graph_max_bs * s.data_parallel_size);
      reserved += bs_dp * 3;
      if (s.cuda_graph_max_bs > 300) reserved += bs_dp * 1.5;
    }
    if (mem > 60 * 1024) reserved = std::max(reserved, 10.0 * 1024);
    if (s.speculative_algorithm == "STANDALONE") {
      reserved += 6 * 1024;
    } else if (!s.speculative_algorithm.empty() && s.speculative_algorithm != "NGRAM") {
      reserved += 2 * 1024;
    }
    fraction = std::round((mem - reserved) / mem * 1000) / 1000;
  }
  // adjust_mem_fraction_for_vlm: x 0.95 x clamp(1 - 0.1 x (complexity - 1), 0.8, 1.05), where
  // complexity is layers x hidden^2 of the tower over ViT-L/14's 24 x 1024^2. The Qwen-VL
  // towers' configs name their layers `depth`, which the getattr misses: 24 is used.
  if (spec.vision.kind != VisionKind::kNone && spec.vision.hidden_size > 0) {
    const bool qwen = spec.vision.kind == VisionKind::kQwen2Vl ||
                      spec.vision.kind == VisionKind::kQwen25Vl ||
                      spec.vision.kind == VisionKind::kQwen3Vl;
    const double layers = qwen || spec.vision.depth <= 0 ? 24 : spec.vision.depth;
    const double h = static_cast<double>(spec.vision.hidden_size);
    const double ratio = layers * h * h / (24.0 * 1024 * 1024);
    fraction *= 0.95 * std::clamp(1.0 - 0.1 * (ratio - 1.0), 0.8, 1.05);
  }
  return fraction;
}

int64_t DefaultRequestRows(int64_t tokens, int64_t context_len) {
  const double rows = static_cast<double>(tokens) / static_cast<double>(context_len) * 512;
  return std::clamp<int64_t>(static_cast<int64_t>(rows), 2048, 4096);
}

int64_t RunningRequests(const SglangSettings& s, int64_t tokens, int64_t rows) {
  if (s.max_num_seqs > 0) return std::min(s.max_num_seqs, rows);
  return std::min(tokens / 2, rows);
}

void ApplyDefaults(const Rules& rules, const GpuSpec& gpu, const ModelSpec& spec,
                   SglangSettings* s) {
  if (s->max_model_len <= 0) {
    s->max_model_len = s->override_context_len > 0 ? s->override_context_len
                                                   : DerivedContextLen(spec);
  }
  if (s->max_num_batched_tokens == 0) {
    s->max_num_batched_tokens = DefaultChunkedPrefillSize(rules, gpu);
  }
  if (s->cuda_graph_max_bs == 0) {
    s->cuda_graph_max_bs = DefaultCudaGraphMaxBs(rules, gpu, s->tensor_parallel_size);
  }
  if (s->page_size == 0) s->page_size = 1;
  if (s->mamba_full_memory_ratio == 0) s->mamba_full_memory_ratio = 0.9;
  if (s->swa_full_tokens_ratio == 0) s->swa_full_tokens_ratio = 0.8;
  if (s->gpu_memory_utilization == 0) {
    s->gpu_memory_utilization = DefaultMemFractionStatic(rules, gpu, spec, *s);
  }
}

}  // namespace vramfit::sglang
