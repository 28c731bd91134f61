// vLLM's --attention-backend, as read at 0.22 (attention_backend.h). Each backend's checks follow
// its class in vllm/v1/attention/backends/ (supports_head_size, supported_dtypes,
// supported_kv_cache_dtypes, get_supported_kernel_block_sizes, is_mla, supports_sink,
// supports_compute_capability, supports_combination), run in the order of
// AttentionBackend.validate_configuration (vllm/v1/attention/backend.py); a backend the user names
// and that fails one is refused by CudaPlatformBase.get_attn_backend_cls (vllm/platforms/cuda.py)
// with "Selected backend ... is not valid for this configuration. Reason: [...]".
#include "engines/vllm/attention_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <initializer_list>

#include "core/text.h"

namespace vramfit::vllm {
namespace {

// AttentionBackendEnum's members (vllm/v1/attention/backends/registry.py), in its order.
constexpr std::string_view kBackends[] = {
    "FLASH_ATTN", "FLASH_ATTN_DIFFKV", "TRITON_ATTN", "ROCM_ATTN", "ROCM_AITER_MLA",
    "ROCM_AITER_TRITON_MLA", "ROCM_AITER_FA", "ROCM_AITER_MLA_SPARSE", "XPU_MLA_SPARSE",
    "TORCH_SDPA", "FLASHINFER", "FLASHINFER_MLA", "TOKENSPEED_MLA", "FLASHINFER_MLA_SPARSE",
    "TRITON_MLA", "CUTLASS_MLA", "FLASHMLA", "FLASHMLA_SPARSE", "B12X_MLA_SPARSE",
    "FLASH_ATTN_MLA", "NO_ATTENTION", "FLEX_ATTENTION", "ROCM_AITER_UNIFIED_ATTN", "CPU_ATTN",
    "TURBOQUANT", "CUSTOM"};

// One backend's checks. Block sizes: `multiple` > 0 takes any multiple of it, else `blocks`.
struct Backend {
  std::string_view name;
  bool mla = false;
  bool sparse = false;
  bool fp32 = false;                          // float32 among its dtypes (else fp16, bf16)
  std::initializer_list<std::string_view> kv;  // kv_cache_dtypes beyond auto/float16/bfloat16
  std::initializer_list<int64_t> heads;        // empty: any (see head_rule)
  int64_t multiple = 0;
  std::initializer_list<int64_t> blocks;
  int cc_min = 0, cc_max = 999;               // compute capability range, 89 for 8.9
  std::initializer_list<int> majors;          // empty: the range alone
};

// The CUDA backends. FLASH_ATTN's head sizes, fp8 cache and sinks depend on the FlashAttention
// version (AttentionBackendReasons); TRITON_ATTN takes head sizes from 32.
const Backend kCuda[] = {
    {"FLASH_ATTN", false, false, false, {}, {}, 16, {}, 80, 999, {}},
    {"FLASH_ATTN_DIFFKV", false, false, false, {}, {}, 16, {}, 80, 999, {}},
    {"FLASHINFER", false, false, false, {"fp8", "fp8_e4m3", "fp8_e5m2", "nvfp4"}, {64, 128, 256},
     0, {16, 32, 64}, 75, 121, {}},
    {"TRITON_ATTN", false, false, true,
     {"fp8", "fp8_e4m3", "fp8_e5m2", "int8_per_token_head", "fp8_per_token_head"}, {}, 16, {}, 0,
     999, {}},
    {"FLEX_ATTENTION", false, false, true, {}, {}, 16, {}, 0, 999, {}},
    {"TURBOQUANT", false, false, false,
     {"turboquant_k8v4", "turboquant_4bit_nc", "turboquant_k3v4_nc", "turboquant_3bit_nc"}, {},
     0, {16, 32, 64, 128}, 0, 999, {}},
    {"FLASH_ATTN_MLA", true, false, false, {}, {320, 576}, 16, {}, 0, 999, {9}},
    {"FLASHMLA", true, false, false, {"fp8", "fp8_e4m3"}, {320, 576}, 0, {64}, 0, 999, {9, 10}},
    {"FLASHMLA_SPARSE", true, true, false, {"fp8", "fp8_ds_mla"}, {512, 576}, 0, {64}, 0, 999,
     {9, 10}},
    {"FLASHINFER_MLA", true, false, false, {"fp8", "fp8_e4m3"}, {320, 576}, 0, {32, 64}, 0, 999,
     {10}},
    {"FLASHINFER_MLA_SPARSE", true, true, false, {"fp8", "fp8_e4m3"}, {576}, 0, {32, 64}, 0,
     999, {10}},
    {"CUTLASS_MLA", true, false, false, {"fp8", "fp8_e4m3"}, {320, 576}, 0, {128}, 0, 999, {10}},
    {"TRITON_MLA", true, false, false, {"fp8", "fp8_e4m3"}, {}, 16, {}, 0, 999, {}},
    {"TOKENSPEED_MLA", true, false, false, {"fp8", "fp8_e4m3"}, {320, 576}, 0, {32, 64}, 0, 999,
     {10}},
    {"B12X_MLA_SPARSE", true, true, false, {"fp8", "fp8_e4m3", "fp8_ds_mla"}, {576}, 0, {64}, 0,
     999, {12}},
};

const Backend* Find(std::string_view name) {
  for (const Backend& b : kCuda) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

bool In(std::initializer_list<std::string_view> list, std::string_view v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

// An attention layer's head size: the config's head_dim, else hidden_size / heads.
int64_t HeadSize(const ModelSpec& spec, const AttentionSpec& a) {
  return a.head_dim > 0 ? a.head_dim : a.num_heads > 0 ? spec.hidden_size / a.num_heads : 0;
}

bool TakesBlock(const Backend& b, int64_t block) {
  if (b.multiple > 0) return block % b.multiple == 0;
  // A fixed size also takes its multiples (supports_block_size: hybrid blocks).
  return std::any_of(b.blocks.begin(), b.blocks.end(), [&](int64_t k) { return block % k == 0; });
}

}  // namespace

Result<std::string> ReadAttentionBackend(const std::string& text) {
  std::string upper = text;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper == "AUTO") return std::string();
  for (std::string_view b : kBackends) {
    if (upper == b) return upper;
  }
  std::string valid;
  for (std::string_view b : kBackends) valid += (valid.empty() ? "" : ", ") + std::string(b);
  // _AttentionBackendEnumMeta.__getitem__ (registry.py), raised by
  // AttentionConfig.validate_backend_before in EngineArgs.create_engine_config.
  return Status::InvalidArgument(
      fmt::format("--attention-backend: Unknown attention backend: '{}'. Valid options are: {} "
                  "(or auto)",
                  core::Printable(text), valid));
}

std::vector<std::string> AttentionBackendReasons(std::string_view name, const BackendQuery& q) {
  const Backend* b = Find(name);
  if (b == nullptr) return {};
  const int cc = q.compute_capability;
  const int major = cc / 10;
  // FlashAttention's version on this card (fa_utils.py get_flash_attn_version): FA3 on 9.x,
  // FA4 on 10.x, FA2 elsewhere; FA4 is built for 9.x, 10.x and 11.x (flash_attn_interface.py).
  const bool fa = name == "FLASH_ATTN" || name == "FLASH_ATTN_DIFFKV";
  const int fa_version = major == 9 ? 3 : major == 10 ? 4 : 2;
  const bool fa4_built = major == 9 || major == 10 || major == 11;
  std::vector<std::string> reasons;
  // Head size.
  bool head_ok = true;
  if (fa) {
    head_ok = q.head_size % 8 == 0 && (q.head_size <= 256 || (fa4_built && q.head_size <= 512));
  } else if (name == "TRITON_ATTN") {
    head_ok = q.head_size >= 32;
  } else if (b->heads.size() > 0) {
    head_ok = std::find(b->heads.begin(), b->heads.end(), q.head_size) != b->heads.end();
  }
  if (q.head_size > 0 && !head_ok) reasons.emplace_back("head_size not supported");
  if (q.dtype == Dtype::kF32 && !b->fp32) reasons.emplace_back("dtype not supported");
  // KV cache dtype: every backend takes auto, float16 and bfloat16, except TokenSpeed MLA
  // (fp8 only); FlashAttention's fp8 cache needs FA3 on Hopper; FLASHMLA_SPARSE takes bf16.
  const std::string& kv = q.kv_cache_dtype;
  bool kv_ok = kv == "auto" || kv == "float16" || kv == "bfloat16" || In(b->kv, kv);
  if (name == "TOKENSPEED_MLA") kv_ok = In(b->kv, kv);
  if (fa && (kv == "fp8" || kv == "fp8_e4m3")) kv_ok = fa_version == 3;
  if (name == "FLASHMLA_SPARSE" && kv == "float16") kv_ok = false;
  if (!kv_ok) reasons.emplace_back("kv_cache_dtype not supported");
  if (q.block_size > 0 && !TakesBlock(*b, q.block_size)) {
    reasons.emplace_back("block_size not supported");
  }
  if (q.mla != b->mla) reasons.emplace_back(q.mla ? "MLA not supported" : "non-MLA not supported");
  // Sinks: FlashAttention 3 and 4, Triton, FlashInfer with TRT-LLM attention (SM100).
  const bool sinks_ok = fa ? (fa_version == 3 || fa_version == 4)
                           : name == "TRITON_ATTN" || (name == "FLASHINFER" && major == 10);
  if (q.sinks && !sinks_ok) reasons.emplace_back("attention sinks not supported");
  // The sparse MLA backends serve DeepSeek V3.2-style indexers only; the plan's models are dense.
  if (b->sparse) reasons.emplace_back("non-sparse not supported");
  if (cc > 0) {
    const bool in_range = cc >= b->cc_min && cc <= b->cc_max;
    const bool major_ok =
        b->majors.size() == 0 || std::find(b->majors.begin(), b->majors.end(), major) !=
                                     b->majors.end();
    if (!in_range || !major_ok) reasons.emplace_back("compute capability not supported");
  }
  // supports_combination.
  if (fa && q.sinks && cc > 0 && cc < 90) {
    reasons.emplace_back("sink not supported on compute capability < 9.0");
  }
  if (name == "FLASH_ATTN_MLA" && cc > 0 && major != 9) {
    reasons.emplace_back("FlashAttention MLA not supported on this device");
  }
  if (name == "FLASHMLA" && cc > 0 && major != 9) {
    reasons.emplace_back("FlashMLA Dense is only supported on Hopper devices.");
  }
  if (name == "FLASHINFER_MLA" && q.mla && q.qk_nope_head_dim != 64 && q.qk_nope_head_dim != 128 &&
      q.qk_nope_head_dim != 192) {
    reasons.emplace_back(fmt::format(
        "FlashInfer MLA kernel requires qk_nope_head_dim in [64, 128, 192], but got {}",
        q.qk_nope_head_dim));
  }
  return reasons;
}

int64_t BackendBlockSize(std::string_view name) {
  const Backend* b = Find(name);
  if (b == nullptr || TakesBlock(*b, 16)) return 16;
  return *std::min_element(b->blocks.begin(), b->blocks.end());
}

BackendQuery QueryFor(const ModelSpec& spec, const GpuSpec& gpu, const VllmSettings& s,
                      Dtype model_dtype) {
  BackendQuery q;
  q.dtype = model_dtype;
  q.kv_cache_dtype = s.kv_cache_dtype.empty() ? "auto" : s.kv_cache_dtype;
  q.block_size = s.block_size;
  q.compute_capability = ComputeCapability(gpu);
  for (const LayerSpec& l : spec.layers) {
    const AttentionSpec& a = l.attention;
    if (a.kind == AttentionKind::kLinear) continue;
    q.sinks = q.sinks || a.sinks;
    if (q.head_size > 0) continue;
    if (a.kind == AttentionKind::kMla) {
      q.mla = true;
      q.head_size = a.kv_lora_rank + a.qk_rope_head_dim;
      q.qk_nope_head_dim = a.qk_nope_head_dim;
    } else {
      q.head_size = HeadSize(spec, a);
    }
  }
  return q;
}

std::optional<Refusal> AttentionBackendRefusal(const ModelSpec& spec, const GpuSpec& gpu,
                                               const VllmSettings& s, Dtype model_dtype) {
  const std::string& name = s.attention_backend;
  if (name.empty()) return std::nullopt;
  if (gpu.vendor != "nvidia") return std::nullopt;
  Refusal r;
  r.stage = Stage::kStartup;
  if (name == "TORCH_SDPA" || name == "CUSTOM") {
    // AttentionBackendEnum.get_path: no class registered under these names.
    r.message = fmt::format("Backend {0} must be registered before use. Use "
                            "register_backend(Backend.{0}, 'your.module.YourClass')",
                            name);
    return r;
  }
  std::vector<std::string> reasons;
  if (Find(name) == nullptr) {
    // ROCm, XPU and CPU backends, and NO_ATTENTION, whose module this tree lacks: their classes
    // do not import on a CUDA build (get_attn_backend_cls turns the ImportError into a reason).
    reasons.emplace_back("ImportError");
  } else {
    // Each attention layer asks for its backend with its own head size (Gemma 4's global
    // layers have larger heads than its sliding ones): the first layer refused stops the start.
    BackendQuery q = QueryFor(spec, gpu, s, model_dtype);
    for (const LayerSpec& l : spec.layers) {
      const AttentionSpec& a = l.attention;
      if (a.kind == AttentionKind::kLinear || a.kind == AttentionKind::kMla) continue;
      const int64_t head = HeadSize(spec, a);
      if (head <= 0 || head == q.head_size) continue;
      BackendQuery other = q;
      other.head_size = head;
      reasons = AttentionBackendReasons(name, other);
      if (!reasons.empty()) break;
    }
    if (reasons.empty()) reasons = AttentionBackendReasons(name, q);
  }
  if (reasons.empty()) return std::nullopt;
  std::string list;
  for (const std::string& x : reasons) list += (list.empty() ? "'" : ", '") + x + "'";
  r.message = fmt::format(
      "Selected backend AttentionBackendEnum.{} is not valid for this configuration. Reason: "
      "[{}]",
      name, list);
  return r;
}

}  // namespace vramfit::vllm
