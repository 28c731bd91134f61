// SGLang stage-by-stage plan (see sglang.h): one function per stage over a Run that carries the
// resolved settings, the release's Rules and the numbers each stage leaves for the next. The
// token-pool formula is SGLang's own; the terms SGLang measures at run time use the constants
// named k* below, each explained in docs/engines/sglang.md.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/checked.h"
#include "core/units.h"
#include "engines/sglang/command.h"
#include "engines/sglang/defaults.h"
#include "engines/sglang/rules.h"
#include "engines/sglang/sglang.h"
#include "engines/sglang/weights.h"
#include "model/hub_revision.h"
#include "model/kv_state.h"
#include "model/vision_tokens.h"

namespace vramfit::sglang {
namespace {

using core::FormatBytes;
using core::kGiB;
using core::kGiBf;
using core::kMiB;

// CUDA context of one process (driver, cuBLAS handles), held before init_torch_distributed
// measures the free memory: 300-600 MiB in public logs (the same figure the vLLM room uses).
constexpr uint64_t kCudaContext = 512 * kMiB;
// NCCL communicators and the custom all-reduce's buffers per rank with TP > 1, made in
// initialize_model_parallel before the free memory is measured. Published "Init torch
// distributed ends. mem usage=" lines (and load-begin free memory against the card): PCIe cards
// 0.13 GiB (4 x L4) and 0.19 GiB (2 x RTX 4090); NVLink boards 0.8 GiB at TP 2 (H20), 1.6 at
// TP 4 (B200), 1.25 and 1.96 at TP 8 (H100, H200): the custom all-reduce's IPC buffers and
// NCCL's NVLink channels grow with the ranks. Charged: PCIe 256 MiB; NVLink 1 GiB at TP 2,
// 1.5 GiB at TP 4, 2 GiB from TP 8 (the larger of each pair: the safe side).
constexpr uint64_t kDistributedPcie = 256 * kMiB;
uint64_t DistributedInit(const GpuSpec& gpu, int64_t tp) {
  if (tp <= 1) return 0;
  // The NVLink (SXM and superchip) boards of the GPU catalog; a GPU given by size is assumed
  // to have NVLink (the larger charge).
  static const char* kNvlink[] = {"v100-16gb", "v100-32gb", "a100-40gb", "a100-80gb",
                                  "a800-80gb", "h20",       "h20-141gb", "h100-sxm",
                                  "h200",      "b200",      "gh200-96gb"};
  bool nvlink = gpu.custom;
  for (const char* id : kNvlink) nvlink |= gpu.id == id;
  if (!nvlink) return kDistributedPcie;
  return tp >= 8 ? 2 * kGiB : tp >= 4 ? 1536 * kMiB : kGiB;
}
// What "Load weight end ... mem usage" shows beyond the checkpoint's bytes (rotary caches,
// sampler and logits buffers made with the model).
constexpr uint64_t kLoadOverhead = 128 * kMiB;
// The attention backend's workspace, made after the memory pool (FlashInfer's
// flashinfer_workspace_size, 384 MiB in global_config.py; other backends less: the safe side).
constexpr uint64_t kAttentionWorkspace = 384 * kMiB;
// Decode graphs (cuda_graph_runner.py): one graph per captured batch size, sharing one pool;
// per graph and decoder layer. Calibrated to the 0.3-0.5 GB "Capture cuda graph end ... mem
// usage" of 32-layer models capturing 36 sizes (docs/engines/sglang.md).
constexpr uint64_t kGraphBytesPerBatchLayer = 256 * 1024;
constexpr uint64_t kGraphBase = 32 * kMiB;
// Prefill activations beyond the formula's tensors (allocator rounding, attention kernels'
// scratch).
constexpr uint64_t kActivationBase = 256 * kMiB;
// max_prefill_tokens (server_args.py default): the prefill size when chunking is disabled.
constexpr int64_t kMaxPrefillTokens = 16384;
// The spread of the modelled terms (load overhead, workspace, graphs, activations): a margin
// inside it is a low-confidence verdict.
constexpr uint64_t kSpread = 768 * kMiB;

uint64_t Sat(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

// Bytes of one KV element (ModelRunner.configure_kv_cache_dtype): auto is the model's dtype
// (16 bits: SGLang runs float32 configs in 16 bits unless --dtype float32), fp8_e4m3 and
// fp8_e5m2 one byte.
Result<uint64_t> KvElementBytes(const SglangSettings& s) {
  const std::string& d = s.kv_cache_dtype;
  if (d == "auto") return s.dtype == "float32" || s.dtype == "float" ? 4 : 2;
  if (d == "fp8_e4m3" || d == "fp8_e5m2" || d == "fp8") return 1;
  if (d == "bf16" || d == "bfloat16" || d == "float16" || d == "fp16") return 2;
  return Status::Unsupported(fmt::format(
      "--kv-cache-dtype {}: not modelled for SGLang (auto, fp8_e4m3, fp8_e5m2, bf16 are)", d));
}

// Hybrid sliding-window pools (model_config.py is_hybrid_swa_model): gpt-oss, Llama 4 and
// MiMo-V2; Gemma 2/3 run every layer in the full pool (server_args.py disables hybrid SWA
// memory for them).
bool HybridSwa(const ModelSpec& spec) {
  const std::string& a = spec.architecture;
  return (a == "GptOssForCausalLM" || a == "Llama4ForConditionalGeneration" ||
          a == "MiMoV2FlashForCausalLM") &&
         spec.CountAttention(AttentionKind::kSliding) > 0;
}

int64_t AttentionTp(const SglangSettings& s) {
  if (!s.enable_dp_attention || s.data_parallel_size <= 1) return s.tensor_parallel_size;
  return std::max<int64_t>(1, s.tensor_parallel_size / s.data_parallel_size);
}

struct Cells {
  uint64_t full = 0;       // per token over the full (and MLA) layers of the largest stage
  uint64_t swa = 0;        // per token over its sliding layers (hybrid SWA models)
  uint64_t mamba_per_req = 0;  // linear-attention state per sequence
};

Result<Cells> CellSizes(const ModelSpec& spec, const SglangSettings& s) {
  auto elem = KvElementBytes(s);
  if (!elem.ok()) return elem.status();
  const int64_t layers = static_cast<int64_t>(spec.layers.size());
  const int64_t pp = std::max<int64_t>(1, s.pipeline_parallel_size);
  const int64_t stage = (layers + pp - 1) / pp;
  const uint64_t atp = static_cast<uint64_t>(AttentionTp(s));
  const bool swa = HybridSwa(spec);
  Cells c;
  for (int64_t i = 0; i < stage; ++i) {
    const AttentionSpec& a = spec.layers[static_cast<size_t>(i)].attention;
    switch (a.kind) {
      case AttentionKind::kMla:  // (kv_lora_rank + qk_rope_head_dim) x dtype, not sharded
        c.full += MlaBytesPerToken(a, *elem);
        break;
      case AttentionKind::kLinear: {
        // mamba2_cache_params: conv state in the model dtype, temporal state in float32
        // (SGLANG_MAMBA_SSM_DTYPE's default).
        auto st = LinearAttentionState(a, atp, 0, Dtype::kBF16, Dtype::kF32);
        if (!st.ok()) return st.status();
        c.mamba_per_req += st->total();
        break;
      }
      case AttentionKind::kSliding:
        (swa ? c.swa : c.full) += KvBytesPerToken(a, atp, *elem);
        break;
      case AttentionKind::kFull:
        c.full += KvBytesPerToken(a, atp, *elem);
        break;
    }
  }
  return c;
}

struct Run {
  const Inventory& inv;
  const GpuSpec& gpu;
  SglangSettings s;
  Rules rules;
  bool auto_len = false;
  Plan plan;
  GpuPlan g;
  uint64_t others = 0;       // context, NCCL and other processes before the measurement
  uint64_t free0 = 0;        // F: free memory init_torch_distributed measures
  SglangWeights w;
  uint64_t after_load = 0;   // free after the load
  TokenPool pool;
  int64_t rows = 0;          // request table rows
  uint64_t req_table = 0;
  uint64_t draft = 0;        // draft model weights, KV and graphs (speculative decoding)
  std::string draft_what;
  uint64_t left = 0;         // free after each stage that draws on the reserve
  uint64_t activation = 0;   // the first prefill's peak: max(decoder, encoder) + embeddings
  uint64_t decoder_activation = 0;
  uint64_t offloaded = 0;    // --cpu-offload-gb: weights kept on the host
  uint64_t onload = 0;       // one offloaded layer's weights copied in for its forward
  // Images through a Qwen-VL tower (ResolveImages): one request's, encoded at once.
  int64_t images = 0;
  int64_t image_pixels = 0;  // the largest image
  int64_t image_tokens = 0;  // one image's prompt tokens
  uint64_t encoder = 0;      // the tower's pass over the request's images
  uint64_t image_embeds = 0; // their embeddings, held through the decoder's forward
};

void Fail(Run& r, Stage st, std::string message, int64_t margin) {
  r.plan.fits = false;
  r.plan.failure_stage = st;
  r.plan.failure_message = std::move(message);
  r.plan.margin_bytes = margin;
}

// startup: F = total - CUDA context - NCCL (TP > 1) - other processes.
bool Startup(Run& r) {
  const uint64_t dist = DistributedInit(r.gpu, r.s.tensor_parallel_size);
  r.others = kCudaContext + r.s.other_process_bytes + dist;
  r.g.cuda_context_bytes = kCudaContext;
  r.g.non_torch_bytes = dist;
  if (r.others >= r.gpu.total_bytes) {
    Fail(r, Stage::kStartup,
         fmt::format("CUDA out of memory at start-up: the CUDA context, NCCL and other processes "
                     "hold {} of {}", FormatBytes(r.others), FormatBytes(r.gpu.total_bytes)),
         -static_cast<int64_t>(r.others - r.gpu.total_bytes));
    return false;
  }
  r.free0 = r.gpu.total_bytes - r.others;
  if (r.s.measured_free_before_load_bytes > 0) {
    // Calibrated on a log: F as the run measured it (what held memory before is then known).
    r.free0 = std::min(r.s.measured_free_before_load_bytes, r.gpu.total_bytes);
    r.others = r.gpu.total_bytes - r.free0;
  }
  r.g.budget_bytes = static_cast<uint64_t>(static_cast<double>(r.free0) *
                                           r.s.gpu_memory_utilization);
  return true;
}

// A measured load (free before minus free after) stands for settings whose weights it matches:
// within a quarter of the modelled load, or 512 MiB for a small model. Settings that change the
// weights (another TP size, a quantization) are planned with the modelled load on the measured
// F, and so is a log of another model than the one given.
constexpr uint64_t kLeastLoadTolerance = 512 * kMiB;
bool MeasuredLoadApplies(Run& r) {
  const uint64_t after = r.s.measured_free_after_load_bytes;
  if (after == 0 || after > r.free0) return false;
  const double measured = static_cast<double>(r.free0 - after);
  const double modelled = static_cast<double>(r.w.bytes_per_rank + kLoadOverhead);
  const double tolerance =
      std::max(0.25 * modelled, static_cast<double>(kLeastLoadTolerance));
  if (std::abs(measured - modelled) <= tolerance) return true;
  r.plan.notes.push_back(fmt::format(
      "the measured load ({}) is not these settings' weights ({}): the load is modelled",
      FormatBytes(r.free0 - after), FormatBytes(r.w.bytes_per_rank)));
  return false;
}

// load: the rank's weights (and online FP8's 16-bit transient) must fit in F.
Status Load(Run& r, bool* ok) {
  // ModelRunner.load_model (srt/model_executor/model_runner.py): below compute capability 8.0
  // SGLang runs float16 ("Compute capability below sm80. Use float16 due to lack of bfloat16
  // support.": the same bytes), and where the minor number is below 5 as well it raises before
  // any weight is read, so Volta (7.0), Xavier (7.2) and Pascal (6.x) never load.
  if (const int cc = NvidiaComputeCapability(r.gpu); cc > 0 && cc < 80 && cc % 10 < 5) {
    Fail(r, Stage::kLoad,
         fmt::format("RuntimeError: SGLang only supports sm75 and above. ({} is compute "
                     "capability {}.{}; {}llama.cpp and transformers run there)",
                     r.gpu.name, cc / 10, cc % 10, cc >= 70 ? "vLLM, " : ""),
         0);
    *ok = false;
    return Status::Ok();
  }
  WeightOptions o;
  o.tensor_parallel_size = r.s.tensor_parallel_size;
  o.attention_tp_size = AttentionTp(r.s);
  o.pipeline_parallel_size = r.s.pipeline_parallel_size;
  o.quantization = r.s.quantization;
  auto w = WeightsPerRank(r.inv, o);
  if (!w.ok()) return w.status();
  r.w = *w;
  // Online quantization other than FP8 (w8a8_int8, bitsandbytes, ...) of a 16-bit checkpoint
  // is not modelled: the weights are planned as the checkpoint holds them (the larger side).
  if (!o.quantization.empty() && o.quantization != "fp8" && !r.inv.spec.quant.quantized()) {
    r.plan.notes.push_back(fmt::format(
        "--quantization {} of a 16-bit checkpoint is not modelled: its weights are planned "
        "as the checkpoint holds them", o.quantization));
  }
  // --cpu-offload-gb: the model runner's set_cpu_offload_max_bytes(int(gb * 1024**3)); the
  // decoder layers' parameters are moved to pinned host memory one by one as the layers are
  // made (make_layers -> maybe_offload_to_cpu, srt/utils; srt/offloader.py's OffloaderV1 from
  // 0.5), until that many bytes are on the host: the rank's weights less that, and each
  // offloaded layer copied back to the GPU for its forward (one layer's share at a time).
  if (r.s.cpu_offload_gb > 0) {
    const uint64_t want = static_cast<uint64_t>(r.s.cpu_offload_gb * static_cast<double>(kGiB));
    const uint64_t off = std::min(want, r.w.bytes_per_rank);
    const int64_t layers = std::max<int64_t>(1, static_cast<int64_t>(r.inv.spec.layers.size()));
    r.offloaded = off;
    r.onload = std::min(off, r.w.bytes_per_rank / static_cast<uint64_t>(layers));
    r.w.bytes_per_rank -= off;
    r.w.load_peak_per_rank -= std::min(off, r.w.load_peak_per_rank);
  }
  r.g.weights_bytes = r.w.bytes_per_rank;
  r.g.load_peak_bytes = r.w.load_peak_per_rank + kLoadOverhead;
  r.g.explain.push_back({"weights", r.w.bytes_per_rank,
                         fmt::format("checkpoint bytes on one rank ({}), TP {} PP {}{}",
                                     r.w.kernel, r.s.tensor_parallel_size,
                                     r.s.pipeline_parallel_size,
                                     r.offloaded > 0
                                         ? fmt::format(", less {} kept on the host "
                                                       "(--cpu-offload-gb)",
                                                       FormatBytes(r.offloaded))
                                         : std::string())});
  if (MeasuredLoadApplies(r)) {
    // Calibrated on a log whose load ended with these weights: the free memory it measured.
    r.after_load = r.s.measured_free_after_load_bytes;
    r.g.explain.push_back({"free after load", r.after_load, "measured (the log's load-end line)"});
    *ok = true;
    return Status::Ok();
  }
  *ok = r.g.load_peak_bytes <= r.free0;
  if (!*ok) {
    Fail(r, Stage::kLoad,
         fmt::format("CUDA out of memory while loading the weights: {} per GPU{} with {} free",
                     FormatBytes(r.g.load_peak_bytes),
                     r.w.transient_reason.empty() ? "" : " (" + r.w.transient_reason + ")",
                     FormatBytes(r.free0)),
         static_cast<int64_t>(r.free0) - static_cast<int64_t>(r.g.load_peak_bytes));
    return Status::Ok();
  }
  r.after_load = r.free0 - r.w.bytes_per_rank - kLoadOverhead;
  return Status::Ok();
}

// kv_cache: profile_max_num_token and init_memory_pool.
Status KvCache(Run& r, bool* ok) {
  auto pool = ProfileTokenPool(r.inv.spec, r.s, static_cast<double>(r.free0) / kGiBf,
                               static_cast<double>(r.after_load) / kGiBf);
  if (!pool.ok()) return pool.status();
  r.pool = *pool;
  r.plan.kv_cache_tokens = r.pool.tokens > 0 ? static_cast<uint64_t>(r.pool.tokens) : 0;
  if (r.pool.tokens <= 0) {
    // rest = F x fraction - weights: the fraction that gives one request of the context.
    const double need = static_cast<double>(r.free0 - r.after_load) +
                        static_cast<double>(r.pool.cell_bytes) *
                            static_cast<double>(r.s.max_model_len);
    const double up = std::ceil(need / static_cast<double>(r.free0) * 100) / 100;
    // A fraction of 1 or more leaves nothing for the graphs and the first prefill, which
    // run from the rest (the runtime stage): then no fraction is the fix.
    const std::string hold =
        up < 1 ? fmt::format("{} would hold one {}-token request", up, r.s.max_model_len)
               : fmt::format("no fraction below 1 holds one {}-token request: the weights and "
                             "its KV need {} of the {} free; more GPUs or smaller weights",
                             r.s.max_model_len, FormatBytes(static_cast<uint64_t>(need)),
                             FormatBytes(r.free0));
    Fail(r, Stage::kKvCache,
         fmt::format("Not enough memory. Please try to increase --mem-fraction-static. Current "
                     "value: {} (the weights take {} of the {} the fraction allows; {})",
                     r.s.gpu_memory_utilization, FormatBytes(r.w.bytes_per_rank),
                     FormatBytes(r.g.budget_bytes), hold),
         r.pool.tokens * static_cast<int64_t>(r.pool.cell_bytes));
    *ok = false;
    return Status::Ok();
  }
  r.g.kv_cache_bytes = r.pool.kv_bytes + r.pool.mamba_bytes;
  r.g.explain.push_back(
      {"kv_cache", r.g.kv_cache_bytes,
       fmt::format("rest = free after load {} - F {} x (1 - {}) ; {} tokens x {} B per token{}",
                   FormatBytes(r.after_load), FormatBytes(r.free0), r.s.gpu_memory_utilization,
                   r.pool.tokens, r.pool.cell_bytes,
                   r.pool.mamba_slots ? fmt::format(" + {} mamba slots", r.pool.mamba_slots)
                                      : std::string())});
  // The request-to-token table (ReqToTokenPool): rows x (context_len + 4 + draft tokens) int32.
  r.rows = r.s.max_num_seqs > 0 ? r.s.max_num_seqs
                                : DefaultRequestRows(r.pool.tokens, r.s.max_model_len);
  r.req_table = static_cast<uint64_t>(r.rows + 1) *
                static_cast<uint64_t>(r.s.max_model_len + 4 + r.s.speculative_num_draft_tokens) *
                4;
  r.left = Sat(r.after_load, r.g.kv_cache_bytes);
  *ok = r.req_table <= r.left;
  if (!*ok) {
    Fail(r, Stage::kKvCache,
         fmt::format("CUDA out of memory allocating the request table ({} rows x {} tokens: {}) "
                     "with {} left by --mem-fraction-static {}",
                     r.rows + 1, r.s.max_model_len + 4, FormatBytes(r.req_table),
                     FormatBytes(r.left), r.s.gpu_memory_utilization),
         static_cast<int64_t>(r.left) - static_cast<int64_t>(r.req_table));
    return Status::Ok();
  }
  r.left -= r.req_table;
  return Status::Ok();
}

// `rows`: the request table's, which caps the captured sizes.
uint64_t GraphBytes(const ModelSpec& spec, const SglangSettings& s, int64_t layers,
                    int64_t rows) {
  if (s.enforce_eager) return 0;
  const auto sizes =
      CaptureBatchSizes(s.cuda_graph_max_bs, !s.speculative_algorithm.empty(), rows);
  return kGraphBase + static_cast<uint64_t>(sizes.size()) * static_cast<uint64_t>(layers) *
                          kGraphBytesPerBatchLayer;
}

// The draft of speculative decoding (EAGLEWorker): its weights, its own KV pool of the target's
// token count and its graphs are made after the target's pool, out of the reserve.
void Draft(Run& r) {
  const std::string& alg = r.s.speculative_algorithm;
  if (alg.empty() || alg == "NGRAM") return;
  const ModelSpec& spec = r.inv.spec;
  uint64_t weights = 0, cell = 0;
  int64_t layers = 1;
  if (r.s.draft_inventory) {
    WeightOptions o;
    o.tensor_parallel_size = r.s.tensor_parallel_size;
    o.attention_tp_size = AttentionTp(r.s);
    auto w = WeightsPerRank(*r.s.draft_inventory, o);
    if (w.ok()) weights = w->bytes_per_rank;
    SglangSettings d = r.s;
    d.pipeline_parallel_size = 1;
    auto c = CellSizes(r.s.draft_inventory->spec, d);
    if (c.ok()) cell = c->full + c->swa;
    layers = static_cast<int64_t>(r.s.draft_inventory->spec.layers.size());
    r.draft_what = "draft " + r.s.draft_model;
  } else if (spec.mtp_layers > 0 && !spec.layers.empty()) {
    // NEXTN / EAGLE on the checkpoint's MTP layers: those weights, one layer's cache.
    weights = r.w.mtp_bytes;
    SglangSettings one = r.s;
    one.pipeline_parallel_size = static_cast<int64_t>(spec.layers.size());
    auto c = CellSizes(spec, one);
    if (c.ok()) cell = c->full + c->swa;
    layers = spec.mtp_layers;
    r.draft_what = fmt::format("{} MTP layer(s) as the draft", spec.mtp_layers);
  } else {
    r.plan.notes.push_back("speculative decoding: the draft model was not read; its weights and "
                           "KV cache are not modelled");
    r.plan.not_counted.push_back(fmt::format(
        "the speculative draft model{}{} (not read): its weights, KV cache and graphs",
        r.s.draft_model.empty() ? "" : " ", r.s.draft_model));
    return;
  }
  r.draft = weights + static_cast<uint64_t>(r.pool.tokens) * cell +
            GraphBytes(spec, r.s, layers, r.rows);
}

// cudagraph: the attention workspace, the draft and the decode graphs from what is left.
bool CudaGraphs(Run& r) {
  const int64_t layers = static_cast<int64_t>(r.inv.spec.layers.size());
  const int64_t pp = std::max<int64_t>(1, r.s.pipeline_parallel_size);
  r.g.cudagraph_bytes = GraphBytes(r.inv.spec, r.s, (layers + pp - 1) / pp, r.rows);
  Draft(r);
  const uint64_t need = kAttentionWorkspace + r.draft + r.g.cudagraph_bytes;
  if (need > r.left) {
    const double down =
        std::floor((1.0 - static_cast<double>(r.req_table + need + r.activation) /
                              static_cast<double>(r.free0)) * 100) / 100;
    Fail(r, Stage::kCudaGraph,
         fmt::format("CUDA out of memory capturing CUDA graphs: the attention workspace {}{}, "
                     "graphs {} with {} left by --mem-fraction-static {} (lower it to {:.2f}, "
                     "or lower --cuda-graph-max-bs)",
                     FormatBytes(kAttentionWorkspace),
                     r.draft ? ", " + r.draft_what + " " + FormatBytes(r.draft) : "",
                     FormatBytes(r.g.cudagraph_bytes), FormatBytes(r.left),
                     r.s.gpu_memory_utilization, down),
         static_cast<int64_t>(r.left) - static_cast<int64_t>(need));
    return false;
  }
  r.left -= need;
  return true;
}

// Prefill activations of the largest chunk: per token the hidden states (residual, normed,
// attention output: 3 x hidden), the MLP's gate/up and activated outputs (3 x intermediate /
// tp), or for MoE the fused kernel's caches per routed token (top-k x (3 x expert
// intermediate / tp + hidden)), in 16 bits; and the logits of the largest decode batch in
// float32.
uint64_t Activation(const ModelSpec& spec, const SglangSettings& s) {
  const int64_t tokens = s.max_num_batched_tokens > 0
                             ? s.max_num_batched_tokens
                             : std::max<int64_t>(kMaxPrefillTokens, s.max_model_len);
  const uint64_t tp = static_cast<uint64_t>(s.tensor_parallel_size);
  uint64_t per_token = 0;
  for (const LayerSpec& l : spec.layers) {
    uint64_t b = 3 * static_cast<uint64_t>(spec.hidden_size);
    if (l.mlp.kind == MlpKind::kMoe) {
      b += static_cast<uint64_t>(l.mlp.experts_per_token) *
           (3 * static_cast<uint64_t>(l.mlp.expert_intermediate_size) / tp +
            static_cast<uint64_t>(spec.hidden_size));
    } else {
      b += 3 * static_cast<uint64_t>(l.mlp.intermediate_size) / tp;
    }
    per_token = std::max(per_token, b);
  }
  const uint64_t logits = static_cast<uint64_t>(s.cuda_graph_max_bs) *
                          static_cast<uint64_t>(spec.vocab_size) / tp * 4;
  return kActivationBase + static_cast<uint64_t>(tokens) * per_token * 2 + logits;
}

// The vision tower's pass over `images` images of `tokens` prompt tokens each, run at once:
// mm_utils.py _get_chunked_prefill_embedding (v0.5.5) hands all of one request's images to the
// model's get_image_feature together, whatever part of them the chunk covers, and keeps the
// whole embedding (cached per request) for the chunks after; requests run one after another.
// Per patch (models/qwen2_5_vl.py, qwen2_vl.py, qwen3_vl.py get_image_feature and the vision
// blocks): pixel_values as the processor made them (float32) and their cast to the tower's
// dtype, the rotary cos and sin in float32, then the widest block: residual, normed input and
// output (3 x hidden) with the wider of attention (qkv, rotated q and k, output: 7 x hidden)
// and the MLP (Qwen2.5-VL gated: 3 x intermediate; Qwen2-VL, Qwen3-VL: 2 x), counted whole
// on every rank (the tower's TP sharding is the safe side's omission). Attention
// (layers/attention/vision.py VisionAttention): the default backend on CUDA is fa3 on Hopper
// and triton_attn elsewhere, both variable-length kernels over cu_seqlens with no score
// matrix; --mm-attention-backend sdpa builds a boolean mask over all the patches of the call
// (patches^2 bytes), charged here (the kernel PyTorch picks behind it is not modelled).
// *held: the merged embeddings (tokens x the language model's hidden, Qwen3-VL's deepstack
// features one more each).
uint64_t EncoderPass(const ModelSpec& spec, const std::string& backend, int64_t images,
                     int64_t tokens, uint64_t* held) {
  const VisionSpec& v = spec.vision;
  const uint64_t n = static_cast<uint64_t>(images) *
                     static_cast<uint64_t>(ImagePatches(v, tokens));
  const uint64_t act = 2;
  const uint64_t H = static_cast<uint64_t>(std::max<int64_t>(0, v.hidden_size));
  const uint64_t I = static_cast<uint64_t>(std::max<int64_t>(0, v.intermediate_size));
  const uint64_t heads = static_cast<uint64_t>(std::max<int64_t>(1, v.num_heads));
  const uint64_t pixel_values = static_cast<uint64_t>(
      std::max<int64_t>(1, v.in_channels) * std::max<int64_t>(1, v.temporal_patch_size) *
      std::max<int64_t>(1, v.patch_size) * std::max<int64_t>(1, v.patch_size));
  const uint64_t mlp = (v.kind == VisionKind::kQwen25Vl ? 3 : 2) * I;
  const uint64_t per_patch = pixel_values * (4 + act) + 3 * (H / heads) * 4 +
                             (3 * H + std::max<uint64_t>(7 * H, mlp)) * act;
  uint64_t pass = n * per_patch;
  if (backend == "sdpa") pass += n * n;
  const uint64_t stacks = 1 + v.deepstack_indexes.size();
  *held = static_cast<uint64_t>(images) * static_cast<uint64_t>(tokens) *
          static_cast<uint64_t>(spec.hidden_size) * act * stacks;
  return pass;
}

// The images of one request, their tokens and the tower's pass (Qwen-VL towers; other towers
// get a note). Image tokens are part of the prompt: the processor expands each image's pad
// into `tokens` ids of input_ids, which the context-length check and the chunks count.
void ResolveImages(Run& r) {
  const VisionSpec& v = r.inv.spec.vision;
  if (v.kind == VisionKind::kNone || r.s.images_per_request == 0) return;
  if (!HasQwenVlImageRule(v)) {
    if (r.s.images_per_request > 0 || r.s.image_max_pixels > 0) {
      r.plan.notes.push_back(
          "images through this vision tower are not modelled (only the Qwen-VL towers are): the "
          "plan holds text tokens only");
    }
    return;
  }
  r.images = r.s.images_per_request > 0 ? r.s.images_per_request : 1;
  const int64_t sglang_max = r.s.image_max_pixels > 0 ? r.s.image_max_pixels
                                                      : kImageMaxPixels;
  r.image_pixels = std::min(sglang_max, ImageMaxPixels(v, 0));
  r.image_tokens = ImageTokens(v, r.image_pixels);
  r.encoder = EncoderPass(r.inv.spec, r.s.mm_attention_backend, r.images, r.image_tokens,
                          &r.image_embeds);
  r.plan.notes.push_back(fmt::format(
      "{} image(s) a request{} at {} pixels (SGLANG_IMAGE_MAX_PIXELS {}, the processor's "
      "max_pixels {}): {} prompt tokens each, {} patches through the vision tower ({}), its pass "
      "{} in the first prefill",
      r.images, r.s.images_per_request > 0 ? "" : " (planned: give --limit-mm-data-per-request)",
      r.image_pixels, sglang_max, ImageMaxPixels(v, 0), r.image_tokens,
      ImagePatches(v, r.image_tokens),
      r.s.mm_attention_backend.empty() ? "attention fa3 or triton_attn by GPU"
                                       : "attention " + r.s.mm_attention_backend,
      FormatBytes(r.encoder + r.image_embeds)));
}

// The fixes of a request whose images do not fit in `room`: the largest image (as
// SGLANG_IMAGE_MAX_PIXELS) and the most images whose pass fits, "" when none.
std::string ImageFixes(const Run& r, uint64_t room) {
  const ModelSpec& spec = r.inv.spec;
  auto fits = [&](int64_t images, int64_t tokens) {
    uint64_t held = 0;
    const uint64_t pass = EncoderPass(spec, r.s.mm_attention_backend, images, tokens, &held);
    return std::max(pass, r.decoder_activation) + held <= room;
  };
  std::string out;
  int64_t lo = 0, hi = r.image_tokens;  // fits(lo) holds (lo = 0: none), fits(hi) does not
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (fits(r.images, mid) ? lo : hi) = mid;
  }
  if (lo > 0) {
    const int64_t unit = std::max<int64_t>(1, spec.vision.patch_size) *
                         std::max<int64_t>(1, spec.vision.spatial_merge_size);
    out += fmt::format("; or SGLANG_IMAGE_MAX_PIXELS={} ({} tokens an image)", lo * unit * unit,
                       lo);
  }
  int64_t k = r.images - 1;
  while (k > 0 && !fits(k, r.image_tokens)) --k;
  if (k > 0) out += fmt::format("; or --limit-mm-data-per-request '{{\"image\": {}}}'", k);
  if (r.s.mm_attention_backend == "sdpa") {
    out += "; or --mm-attention-backend triton_attn (fa3 on Hopper): no patches^2 mask";
  }
  return out;
}

// runtime: what is left after the graphs must hold the largest prefill, and with images the
// vision tower's pass over one request's images.
void Runtime(Run& r) {
  r.g.activation_peak_bytes = r.activation;
  const int64_t margin = static_cast<int64_t>(r.left) - static_cast<int64_t>(r.activation);
  r.plan.margin_bytes = margin;
  const double down_any =
      std::floor((1.0 - static_cast<double>(r.req_table + kAttentionWorkspace + r.draft +
                                            r.g.cudagraph_bytes + r.activation) /
                            static_cast<double>(r.free0)) * 100) / 100;
  if (margin < 0 && r.encoder > r.decoder_activation) {
    const std::string down =
        down_any > 0 ? fmt::format("lower --mem-fraction-static to {:.2f}", down_any)
                     : std::string("no --mem-fraction-static leaves room");
    Fail(r, Stage::kRuntime,
         fmt::format("CUDA out of memory in the vision tower: {} image(s) of {} pixels ({} "
                     "patches) need {} (pass {}, embeddings {}) and {} is left after the CUDA "
                     "graphs ({}{})",
                     r.images, r.image_pixels,
                     r.images * ImagePatches(r.inv.spec.vision, r.image_tokens),
                     FormatBytes(r.activation), FormatBytes(r.encoder),
                     FormatBytes(r.image_embeds), FormatBytes(r.left), down,
                     ImageFixes(r, r.left)),
         margin);
    return;
  }
  if (margin < 0) {
    const double down = down_any;
    Fail(r, Stage::kRuntime,
         fmt::format("CUDA out of memory in the first {}-token prefill: its activations need {} "
                     "and {} is left after the CUDA graphs (lower --mem-fraction-static to "
                     "{:.2f}, or lower --chunked-prefill-size)",
                     r.s.max_num_batched_tokens, FormatBytes(r.activation), FormatBytes(r.left),
                     down),
         margin);
  }
}

std::vector<StageLine> StageLines(const Run& r) {
  std::vector<StageLine> out;
  const std::optional<Stage> f = r.plan.failure_stage;
  auto reached = [&](Stage s) { return !f || *f >= s; };
  out.push_back({Stage::kStartup,
                 r.s.measured_free_before_load_bytes > 0
                     ? fmt::format("free before load {} (measured); --mem-fraction-static {}",
                                   FormatBytes(r.free0), r.s.gpu_memory_utilization)
                     : fmt::format(
                           "free before load {} (CUDA context {}{}); --mem-fraction-static {}",
                           FormatBytes(r.free0), FormatBytes(kCudaContext),
                           r.g.non_torch_bytes > 0 ? ", NCCL " + FormatBytes(r.g.non_torch_bytes)
                                                   : std::string(),
                           r.s.gpu_memory_utilization)});
  if (!reached(Stage::kLoad)) return out;
  out.push_back({Stage::kLoad,
                 r.s.measured_free_after_load_bytes > 0 &&
                         r.s.measured_free_after_load_bytes == r.after_load
                     ? fmt::format("weights {}, free after load {} (measured)",
                                   FormatBytes(r.g.weights_bytes), FormatBytes(r.after_load))
                     : fmt::format("weights {}, load peak {} ({})", FormatBytes(r.g.weights_bytes),
                                   FormatBytes(r.g.load_peak_bytes), r.w.kernel)});
  if (!reached(Stage::kKvCache) || r.after_load == 0) return out;
  out.push_back({Stage::kKvCache,
                 fmt::format("max_total_num_tokens={} ({} per token), KV {}, request table {}",
                             r.pool.tokens, r.pool.cell_bytes, FormatBytes(r.g.kv_cache_bytes),
                             FormatBytes(r.req_table))});
  if (!reached(Stage::kCudaGraph) || r.pool.tokens <= 0) return out;
  out.push_back({Stage::kCudaGraph,
                 r.s.enforce_eager ? std::string("--disable-cuda-graph: none captured")
                                   : fmt::format("decode graphs to batch {}: {}",
                                                 r.rows > 0 ? std::min(r.s.cuda_graph_max_bs,
                                                                       r.rows)
                                                            : r.s.cuda_graph_max_bs,
                                                 FormatBytes(r.g.cudagraph_bytes))});
  if (!reached(Stage::kRuntime) || r.activation == 0) return out;
  out.push_back({Stage::kRuntime,
                 r.images > 0
                     ? fmt::format("prefill chunk {} tokens: activations {}; vision tower {} "
                                   "image(s): pass {}, embeddings {}; {} left",
                                   r.s.max_num_batched_tokens,
                                   FormatBytes(r.decoder_activation), r.images,
                                   FormatBytes(r.encoder), FormatBytes(r.image_embeds),
                                   FormatBytes(r.left))
                     : fmt::format("prefill chunk {} tokens: activations {}, {} left",
                                   r.s.max_num_batched_tokens, FormatBytes(r.activation),
                                   FormatBytes(r.left))});
  return out;
}

}  // namespace

Result<TokenPool> ProfileTokenPool(const ModelSpec& spec, const SglangSettings& s,
                                   double free_before_load_gib, double free_after_load_gib) {
  auto cells = CellSizes(spec, s);
  if (!cells.ok()) return cells.status();
  TokenPool p;
  p.cell_bytes = cells->full + cells->swa;
  // model_runner_kv_cache_mixin.py profile_max_num_token (v0.5.5; model_runner.py before):
  // rest = available after load - total x (1 - mem_fraction_static), in GiB.
  double rest = free_after_load_gib - free_before_load_gib * (1 - s.gpu_memory_utilization);
  if (cells->mamba_per_req > 0) {
    // handle_max_mamba_cache: the state pool takes ratio / (1 + ratio) of the rest (0.9 by
    // default), or max_running_requests slots without a radix cache.
    const double per = static_cast<double>(cells->mamba_per_req);
    if (s.disable_radix_cache && s.max_num_seqs > 0) {
      p.mamba_slots = s.max_num_seqs;
    } else if (rest > 0) {
      const double r = s.mamba_full_memory_ratio > 0 ? s.mamba_full_memory_ratio : 0.9;
      p.mamba_slots = static_cast<int64_t>(rest * r / (1 + r) * kGiBf / per);
    }
    p.mamba_bytes = static_cast<uint64_t>(p.mamba_slots) * cells->mamba_per_req;
    rest -= static_cast<double>(p.mamba_bytes) / kGiBf;
  }
  if (p.cell_bytes == 0) return p;  // attention-free: no token pool
  const double bytes = std::trunc(rest * kGiBf);
  int64_t tokens = static_cast<int64_t>(std::floor(bytes / static_cast<double>(p.cell_bytes)));
  if (s.max_total_tokens > 0) tokens = std::min(tokens, s.max_total_tokens);
  const int64_t page = std::max<int64_t>(1, s.page_size);
  tokens = tokens >= 0 ? tokens / page * page : tokens;
  if (cells->swa > 0 && tokens > 0) {
    // set_num_tokens_hybrid_swa: full = tokens x (F + S) / (F + ratio x S), swa = ratio x full.
    const double ratio = s.swa_full_tokens_ratio > 0 ? s.swa_full_tokens_ratio : 0.8;
    const double total = static_cast<double>(tokens) * static_cast<double>(p.cell_bytes);
    const int64_t full = static_cast<int64_t>(
        total / (static_cast<double>(cells->full) + ratio * static_cast<double>(cells->swa)));
    p.swa_tokens = static_cast<int64_t>(static_cast<double>(full) * ratio) / page * page;
    tokens = full / page * page;
    p.kv_bytes = static_cast<uint64_t>(tokens) * cells->full +
                 static_cast<uint64_t>(p.swa_tokens) * cells->swa;
  } else if (tokens > 0) {
    p.kv_bytes = static_cast<uint64_t>(tokens) * p.cell_bytes;
  }
  p.tokens = tokens;
  return p;
}

EngineSettings ToEngineSettings(const SglangSettings& s) {
  EngineSettings e = s;
  e.engine_options = std::make_shared<SglangOptions>(static_cast<const SglangOptions&>(s));
  return e;
}

SglangSettings ToSglangSettings(const EngineSettings& e) {
  SglangSettings v;
  static_cast<EngineSettings&>(v) = e;
  v.engine_options = nullptr;
  if (const auto* o = dynamic_cast<const SglangOptions*>(e.engine_options.get())) {
    static_cast<SglangOptions&>(v) = *o;
  }
  return v;
}

Result<Plan> PlanSglang(const Inventory& inv, const GpuSpec& gpu, const SglangSettings& in) {
  Rules rules = RulesFor(kNewestModelled);
  if (!in.version.empty()) {
    auto v = ParseRelease(in.version);
    if (!v.ok()) return v.status();
    rules = RulesFor(*v);
  }
  const ModelSpec& spec = inv.spec;
  Run r{inv, gpu, in, rules};
  r.auto_len = in.max_model_len < 0;
  if (r.s.tensor_parallel_size < 1 || r.s.pipeline_parallel_size < 1 ||
      r.s.data_parallel_size < 1) {
    return Status::InvalidArgument("--tp-size, --pp-size and --dp-size must be at least 1");
  }
  if (r.s.enable_dp_attention && r.s.tensor_parallel_size % r.s.data_parallel_size != 0) {
    return Status::InvalidArgument(fmt::format(
        "--enable-dp-attention: --dp-size {} must divide --tp-size {}", r.s.data_parallel_size,
        r.s.tensor_parallel_size));
  }
  // The attention layers split the query heads over the attention TP group
  // (layers/radix_attention.py via QKVParallelLinear: total_num_heads % tp_size == 0).
  // Both refusals come while the model config is built, before anything is allocated: a
  // plan that fails at startup, with SGLang's message and the way out.
  std::string refused, way_out;
  const int64_t atp = AttentionTp(r.s);
  for (const LayerSpec& l : spec.layers) {
    const int64_t heads = l.attention.kind == AttentionKind::kLinear
                              ? l.attention.linear_num_value_heads
                              : l.attention.num_heads;
    if (heads > 0 && heads % atp != 0) {
      refused = fmt::format(
          "Total number of attention heads ({}) must be divisible by tensor parallel size ({})",
          heads, atp);
      int64_t below = 1;
      for (int64_t d = 2; d < atp; d *= 2) {
        if (heads % d == 0) below = d;
      }
      way_out = fmt::format("--tp-size {} ({} heads: the attention TP size must divide them)",
                            below * r.s.tensor_parallel_size / atp, heads);
      break;
    }
  }
  const int64_t derived = r.s.override_context_len > 0 ? r.s.override_context_len
                                                       : DerivedContextLen(spec);
  if (refused.empty() && r.s.max_model_len > derived && !r.s.allow_long_max_model_len) {
    refused = ContextLenError(r.s.max_model_len, derived);
    way_out = fmt::format("--context-length {} (the longest SGLang derives here), or "
                          "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 (positions past {} were "
                          "never trained unless the config's rope_scaling stretches them)",
                          derived, derived);
  }
  ApplyDefaults(rules, gpu, spec, &r.s);
  if (r.s.gpu_memory_utilization <= 0 || r.s.gpu_memory_utilization > 1) {
    return Status::InvalidArgument(
        in.gpu_memory_utilization == 0
            ? fmt::format("SGLang's default --mem-fraction-static for a {:.0f} MiB GPU is {} (its "
                          "reserve for activations and graphs exceeds the GPU): give "
                          "--mem-fraction-static and smaller --chunked-prefill-size and "
                          "--cuda-graph-max-bs",
                          GpuMemMib(gpu), r.s.gpu_memory_utilization)
            : fmt::format("--mem-fraction-static {}: expected a fraction in (0, 1]",
                          r.s.gpu_memory_utilization));
  }
  r.plan.engine = "sglang";
  r.plan.engine_title = "SGLang";
  r.plan.modelled_version = rules.text;
  r.plan.gpu = gpu;
  r.plan.gpu_count = r.s.tensor_parallel_size * r.s.pipeline_parallel_size *
                     (r.s.enable_dp_attention ? 1 : r.s.data_parallel_size);
  r.plan.fits = true;
  r.g.total_bytes = gpu.total_bytes;
  if (in.gpu_memory_utilization == 0) {
    r.plan.notes.push_back(fmt::format(
        "--mem-fraction-static {} (SGLang's default for {:.0f} MiB, chunked prefill {}, graphs to "
        "batch {})", r.s.gpu_memory_utilization, GpuMemMib(gpu), r.s.max_num_batched_tokens,
        r.s.cuda_graph_max_bs));
  }
  if (!rules.mamba_pool && spec.CountAttention(AttentionKind::kLinear) > 0) {
    return Status::Unsupported(fmt::format(
        "SGLang {} does not serve linear-attention models (from 0.5)", rules.text));
  }
  bool ok = Startup(r);
  if (!refused.empty()) {  // the startup line keeps its numbers
    Fail(r, Stage::kStartup, refused, 0);
    r.plan.refusal = way_out;
    ok = false;
  }
  if (ok) VRAMFIT_RETURN_IF_ERROR(Load(r, &ok));
  if (ok) VRAMFIT_RETURN_IF_ERROR(KvCache(r, &ok));
  ResolveImages(r);
  if (ok) {
    r.decoder_activation = Activation(spec, r.s);
    r.activation = std::max(r.decoder_activation, r.encoder) + r.image_embeds + r.onload;
    if (r.onload > 0) {
      r.g.explain.push_back({"offload_onload", r.onload,
                             "one offloaded layer's weights copied to the GPU for its forward"});
    }
    ok = CudaGraphs(r);
  }
  if (ok) Runtime(r);
  // The numbers SGLang prints about the pool.
  const int64_t tokens = std::max<int64_t>(0, r.pool.tokens);
  if (r.auto_len && tokens > 0) r.s.max_model_len = std::min(r.s.max_model_len, tokens);
  r.plan.max_model_len = r.s.max_model_len;
  // The request's images are prompt tokens (ResolveImages): SGLang refuses an input of the
  // context length or more (tokenizer_manager.py _validate_one_request) and the scheduler caps
  // inputs at max_req_input_len = min(context_len, max_total_num_tokens) - 1 (scheduler.py).
  if (r.plan.fits && r.images > 0 && tokens > 0) {
    const int64_t image_tokens = r.images * r.image_tokens;
    const int64_t max_input = std::min(r.s.max_model_len, tokens) - 1;
    if (image_tokens > max_input) {
      const VisionSpec& v = spec.vision;
      const int64_t unit = std::max<int64_t>(1, v.patch_size) *
                           std::max<int64_t>(1, v.spatial_merge_size);
      const int64_t per = max_input / r.images;
      Fail(r, Stage::kRuntime,
           fmt::format("a request's {} image(s) of {} pixels are {} prompt tokens, more than "
                       "the {} an input may hold (min(context length {}, token pool {}) - 1){}",
                       r.images, r.image_pixels, image_tokens, max_input, r.s.max_model_len,
                       tokens,
                       per > 0 ? fmt::format(": SGLANG_IMAGE_MAX_PIXELS={} ({} tokens an image)",
                                             per * unit * unit, per)
                               : std::string()),
           -(image_tokens - max_input) * static_cast<int64_t>(r.pool.cell_bytes));
    }
  }
  r.plan.kv_needed_bytes = r.pool.cell_bytes * static_cast<uint64_t>(r.s.max_model_len);
  r.plan.kv_block_size = r.s.page_size;
  r.plan.max_concurrency =
      static_cast<double>(tokens) / static_cast<double>(std::max<int64_t>(1, r.s.max_model_len));
  if (tokens > 0 && tokens < r.s.max_model_len) {
    r.plan.estimated_max_model_len = tokens;
    r.plan.notes.push_back(fmt::format(
        "the token pool ({} tokens) is shorter than the context length {}: SGLang starts, and "
        "refuses longer requests (max_req_input_len = {})",
        tokens, r.s.max_model_len, tokens - 1));
  }
  // The resolved settings carry what the scheduler runs at once (max_running_requests).
  SglangSettings resolved = r.s;
  if (r.rows > 0) {
    resolved.max_num_seqs = RunningRequests(r.s, tokens, r.rows);
    r.plan.notes.push_back(fmt::format(
        "SGLang will log max_running_requests={}: the requests it runs at once, the smaller of "
        "{} and the request table's {} rows",
        resolved.max_num_seqs,
        r.s.max_num_seqs > 0 ? fmt::format("--max-running-requests {}", r.s.max_num_seqs)
                             : fmt::format("half the token pool ({})", tokens / 2),
        r.rows));
  }
  GpuPlan& g = r.g;
  g.peak_bytes = g.weights_bytes + g.kv_cache_bytes + r.req_table + kAttentionWorkspace +
                 r.draft + g.cudagraph_bytes + g.activation_peak_bytes;
  if (r.plan.failure_stage && *r.plan.failure_stage <= Stage::kLoad) {
    g.peak_bytes = g.load_peak_bytes;
  }
  g.device_used_bytes = g.cuda_context_bytes + g.non_torch_bytes + g.peak_bytes;
  r.plan.uncertainty_bytes = kSpread;
  r.plan.resolved = ToEngineSettings(resolved);
  r.plan.gpus.assign(static_cast<size_t>(r.s.tensor_parallel_size), g);
  r.plan.stages = StageLines(r);
  r.plan.command =
      LaunchCommand(inv.repo.empty() ? inv.model : inv.repo, r.s, in, HubRevision(inv));
  return std::move(r.plan);
}

}  // namespace vramfit::sglang
