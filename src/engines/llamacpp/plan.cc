// The llama.cpp plan (see llamacpp.h): one function per stage over a run struct. Each rule
// cites the file of llama.cpp ec98e2002 (the tree Ollama v0.24.0 vendors) it follows.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <regex>

#include "core/text.h"
#include "core/units.h"
#include "engines/llamacpp/command.h"
#include "engines/llamacpp/fit.h"
#include "engines/llamacpp/llamacpp.h"
#include "engines/llamacpp/mmproj.h"
#include "engines/llamacpp/rules.h"
#include "model/kv_state.h"
#include "vramfit/gguf.h"

namespace vramfit::llamacpp {
namespace {

using core::FormatBytes;
using core::kMiB;

Status Invalid(std::string m) { return Status::InvalidArgument(std::move(m)); }

constexpr int kHost = -1;  // the CPU, as a device index
constexpr uint64_t kCap = uint64_t{1} << 62;

uint64_t Clamp(double v) {
  return v <= 0 ? 0 : v >= static_cast<double>(kCap) ? kCap : static_cast<uint64_t>(v);
}
int64_t Pad(int64_t n, int64_t p) { return (n + p - 1) / p * p; }

struct Run {
  const Inventory& inv;
  const ModelSpec& spec;
  const GpuSpec& gpu;
  LlamaCppSettings s;
  Rules rules = {};
  LlamaCppPlan plan = {};
  int gpus = 1;               // devices the model uses (1 under -sm none)
  int n_layer = 0;
  int64_t ngl = 999;
  std::vector<double> splits = {};  // cumulative split points, as load_tensors makes them
  std::vector<int> layer_dev = {};  // device of each repeating layer (kHost: the CPU)
  int output_dev = kHost;
  bool flash = true;
  int64_t n_ubatch = 512, n_batch = 2048, n_seq = 1;
  bool unified = false;
  std::string type_k = "f16", type_v = "f16";
  std::vector<std::string> notes = {};
  // Per device (index 0..gpus-1): the largest layer weight that sits on the CPU; a ubatch of
  // 32 tokens or more runs its matmul on the first GPU with a copy of the weight in the
  // compute buffer (ggml-cuda.cu offload_op, min_batch_size 32; op_offload on).
  std::vector<uint64_t> cpu_weight_copy = {};
  std::string image_fail = {};  // the image-token budget's failure (mmproj), "" when none
};

DeviceBuffers& On(Run& r, int dev) {
  return dev == kHost ? r.plan.host : r.plan.devices[static_cast<size_t>(dev)];
}

// Settings as llama.cpp resolves them: defaults of common.h (n_batch 2048, n_ubatch 512,
// flash_attn auto), llama-server's 4 slots over a unified cache (tools/server, since b6800),
// llama-context.cpp's n_ctx rules, and the device list (llama.cpp: -sm none keeps main_gpu).
Status Resolve(Run& r) {
  LlamaCppSettings& s = r.s;
  auto rules = RulesFor(s.version);
  if (!rules.ok()) return rules.status();
  r.rules = *rules;
  r.n_layer = static_cast<int>(r.spec.layers.size());
  if (r.n_layer == 0) return Invalid("the GGUF file has no layers to plan");
  // The GPUs the process sees: vramfit's tensor x pipeline sizes (llama.cpp has neither; it
  // uses every visible device).
  const int64_t devices = std::max<int64_t>(1, s.tensor_parallel_size) *
                          std::max<int64_t>(1, s.pipeline_parallel_size);
  if (devices > 64) return Invalid("llama.cpp: at most 64 GPUs are modelled");
  if (s.main_gpu < 0 || s.main_gpu >= devices) {
    return Invalid(fmt::format("llama.cpp: invalid value for main_gpu: {} (available devices: "
                               "{})", s.main_gpu, devices));
  }
  if (s.split_mode != "layer" && s.split_mode != "row" && s.split_mode != "none") {
    return Invalid(fmt::format("--split-mode {}: expected none, layer or row",
                               core::Printable(s.split_mode)));
  }
  r.gpus = s.split_mode == "none" ? 1 : static_cast<int>(devices);
  r.ngl = s.n_gpu_layers < 0 ? 999 : s.n_gpu_layers;
  r.n_batch = s.max_num_batched_tokens > 0 ? s.max_num_batched_tokens : 2048;
  r.n_ubatch = s.n_ubatch > 0 ? s.n_ubatch : s.n_ubatch == kUbatchAsBatch ? r.n_batch : 512;
  // llama-server: --parallel -1 (auto) is 4 slots with a unified cache; llama-cli has one.
  const bool server_auto = s.program == Program::kServer && s.max_num_seqs == 0 &&
                           r.rules.server_four_slots;
  r.n_seq = s.max_num_seqs > 0 ? s.max_num_seqs : server_auto ? 4 : 1;
  if (r.n_seq > 256) return Invalid("--parallel: llama.cpp allows at most 256 sequences");
  r.unified = !r.rules.kv_streams || (s.kv_unified >= 0 ? s.kv_unified == 1 : server_auto);
  r.type_k = s.kv_cache_dtype.empty() || s.kv_cache_dtype == "auto" ? "f16" : s.kv_cache_dtype;
  // -ctk and -ctv are two settings, each f16 unless given: `-ctk q8_0` alone leaves V in f16
  // (common/common.h, common_params: cache_type_k and cache_type_v both GGML_TYPE_F16;
  // common/arg.cpp: --cache-type-k sets only cache_type_k).
  r.type_v = s.cache_type_v.empty() ? "f16" : s.cache_type_v;
  // Flash attention: auto is on where the device runs the FA kernel for every layer (CUDA
  // and ROCm builds do: llama-context.cpp resolves auto by the device of each FA node).
  r.flash = s.flash_attn != "off" && s.flash_attn != "false" && s.flash_attn != "0";
  // Before -fa took on|off|auto it was a switch, off unless given (Rules::fa_takes_value).
  if (!r.rules.fa_takes_value && s.flash_attn == "auto") r.flash = false;
  VRAMFIT_RETURN_IF_ERROR(CacheRowBytes(r.type_k, 32, "--cache-type-k").status());
  VRAMFIT_RETURN_IF_ERROR(CacheRowBytes(r.type_v, 32, "--cache-type-v").status());
  if (!r.flash && r.type_v != "f16" && r.type_v != "bf16" && r.type_v != "f32") {
    return Invalid("llama.cpp: V cache quantization requires flash_attn (-fa on), "
                   "llama-context.cpp llama_init_from_model");
  }
  // Context: 0 is n_ctx_train; padded to 256; with separate streams each sequence's share
  // is padded too and n_ctx becomes share x sequences (llama-context.cpp constructor).
  int64_t n_ctx = s.max_model_len > 0 ? s.max_model_len : r.spec.max_position_embeddings;
  if (n_ctx <= 0) n_ctx = 4096;
  if (n_ctx > (int64_t{1} << 31) - 1) return Invalid("-c: at most 2147483647 tokens");
  // Before the 256 rule: the KV cache's padding, 256 with flash attention and 32 without.
  const int64_t pad = r.rules.pad_256_always || r.flash ? kCtxPad : 32;
  n_ctx = Pad(n_ctx, pad);
  int64_t n_ctx_seq = n_ctx;
  if (!r.unified) {
    n_ctx_seq = Pad(n_ctx / r.n_seq, pad);
    n_ctx = n_ctx_seq * r.n_seq;
  }
  r.plan.n_ctx = n_ctx;
  r.plan.n_seq_max = r.n_seq;
  // The batch is at most the context (causal attention), the ubatch at most the batch.
  r.n_batch = std::min(r.n_batch, n_ctx);
  r.n_ubatch = std::min(r.n_ubatch, r.n_batch);
  // Split points: -ts normalized, else equal (load_tensors splits by free memory, equal on
  // equal cards).
  std::vector<double> w(static_cast<size_t>(r.gpus), 1.0);
  if (!s.tensor_split.empty() && s.split_mode != "none") {
    if (s.tensor_split.size() > static_cast<size_t>(r.gpus)) {
      return Invalid(fmt::format("--tensor-split has {} values for {} GPU(s)",
                                 s.tensor_split.size(), r.gpus));
    }
    std::fill(w.begin(), w.end(), 0.0);
    std::copy(s.tensor_split.begin(), s.tensor_split.end(), w.begin());
  }
  double sum = 0;
  for (double& x : w) x = (sum += x);
  if (sum <= 0) return Invalid("--tensor-split: the proportions add up to zero");
  for (double& x : w) x /= sum;
  r.splits = w;
  r.plan.devices.assign(static_cast<size_t>(r.gpus), DeviceBuffers{});
  r.cpu_weight_copy.assign(static_cast<size_t>(r.gpus), 0);
  return Status::Ok();
}

// The device of repeating layer il (il == n_layer: the output layer): layers from
// n_layer - ngl on go to the GPUs (n_layer + 1 - ngl under rules.ngl_output_first), act =
// min(ngl, n_layer + 1) of them, each GPU taking the share its split point gives
// (llama-model.cpp load_tensors, get_layer_buft_list).
int LayerDevice(const Run& r, int il) {
  const int64_t first = r.rules.ngl_output_first ? r.n_layer + 1 - r.ngl : r.n_layer - r.ngl;
  const int64_t start = std::max<int64_t>(first, 0);
  const int64_t act = std::min<int64_t>(r.ngl, r.n_layer + 1);
  if (il < start || il - start >= act || act <= 0) return kHost;
  const double at = static_cast<double>(il - start) / static_cast<double>(act);
  const auto it = std::upper_bound(r.splits.begin(), r.splits.end(), at);
  return std::min<int>(static_cast<int>(it - r.splits.begin()), r.gpus - 1);
}

// The -ot patterns, compiled, with the device each sends a tensor to (kHost or a GPU).
struct Override {
  std::regex re;
  int dev;
};
Result<std::vector<Override>> Overrides(const Run& r) {
  std::vector<Override> out;
  auto add = [&](const std::string& pattern, const std::string& buffer) -> Status {
    if (pattern.size() > 1000) return Invalid("-ot: a pattern of more than 1000 characters");
    int dev = kHost;
    std::string b = buffer;
    std::transform(b.begin(), b.end(), b.begin(), ::toupper);
    if (b.rfind("CUDA", 0) == 0 || b.rfind("ROCM", 0) == 0 || b.rfind("GPU", 0) == 0) {
      const size_t digits = b.find_first_of("0123456789");
      dev = digits == std::string::npos ? 0 : std::atoi(b.c_str() + digits);
      if (dev >= r.gpus) {
        return Invalid(fmt::format("-ot {}={}: no such device (the plan has {} GPU(s))",
                                   core::Printable(pattern), core::Printable(buffer), r.gpus));
      }
    } else if (b.rfind("CPU", 0) != 0) {
      return Invalid(fmt::format("-ot {}={}: unknown buffer type (expected CPU or CUDAn)",
                                 core::Printable(pattern), core::Printable(buffer)));
    }
    try {
      out.push_back({std::regex(pattern), dev});
    } catch (const std::regex_error&) {
      return Invalid(fmt::format("-ot {}: not a regular expression", core::Printable(pattern)));
    }
    return Status::Ok();
  };
  for (const auto& [p, b] : r.s.overrides) VRAMFIT_RETURN_IF_ERROR(add(p, b));
  return out;
}

// --cpu-moe and --n-cpu-moe N: common/arg.cpp appends "\.ffn_(up|down|gate|gate_up)_(ch|)exps"
// to the CPU (for --n-cpu-moe, prefixed with "blk\.i" for each i < N) after -ot's patterns.
// Matched here by the layer index, with one regex for the expert names.
bool ExpertsToCpu(const Run& r, const TensorEntry& e) {
  static const std::regex kExperts("\\.ffn_(up|down|gate|gate_up)_(ch|)exps");
  if (!r.s.cpu_moe && (e.layer < 0 || e.layer >= r.s.n_cpu_moe)) return false;
  return std::regex_search(e.info.name, kExperts);
}

// True for a tensor of an mmproj file read beside the model (inspect lists its tensors with
// the model's): the projector is planned from --mmproj's header, never as model weights.
bool IsMmprojFile(const Inventory& inv, const TensorEntry& e) {
  if (e.file < 0 || static_cast<size_t>(e.file) >= inv.files.size() || e.file == 0) return false;
  std::string name = inv.files[static_cast<size_t>(e.file)];
  std::transform(name.begin(), name.end(), name.begin(), ::tolower);
  return name.find("mmproj") != std::string::npos;
}

// load: every tensor on its layer's device. token_embd is the input layer, always on the CPU;
// output / output_norm are the output layer; a tied model duplicates token_embd onto the
// output layer's device (TENSOR_DUPLICATED). Row split spreads the 2-D matrices of a layer
// over all GPUs by the split proportions (the CUDA split buffer type); NextN (MTP) layers are
// not loaded (TENSOR_SKIP). With mmap the CPU's share is the file's pages (CPU_Mapped).
Status Load(Run& r) {
  r.layer_dev.resize(static_cast<size_t>(r.n_layer));
  for (int il = 0; il < r.n_layer; ++il) {
    r.layer_dev[static_cast<size_t>(il)] = LayerDevice(r, il);
    if (r.layer_dev[static_cast<size_t>(il)] != kHost) {
      On(r, r.layer_dev[static_cast<size_t>(il)]).layers++;
    }
  }
  r.output_dev = LayerDevice(r, r.n_layer);
  if (r.output_dev != kHost) On(r, r.output_dev).output = true;
  auto ov = Overrides(r);
  if (!ov.ok()) return ov.status();
  const bool row = r.s.split_mode == "row" && r.gpus > 1;
  bool tied = true;
  uint64_t embd = 0, skipped = 0, overridden = 0, beside = 0;
  for (const TensorEntry& e : r.inv.tensors) {
    const std::string& name = e.info.name;
    const uint64_t bytes = e.info.bytes();
    if (IsMmprojFile(r.inv, e)) {
      beside += bytes;  // a projector found beside the model: llama.cpp loads it only by flag
      continue;
    }
    if (name == "output.weight") tied = false;
    int dev = r.output_dev;
    if (e.layer >= r.n_layer) {
      skipped += bytes;
      continue;
    }
    if (e.layer >= 0) {
      dev = r.layer_dev[static_cast<size_t>(e.layer)];
    } else if (name.rfind("token_embd", 0) == 0 || name.rfind("per_layer_token_embd", 0) == 0) {
      // Gemma 3n/4's per-layer token embeddings are input-layer tensors too (GET_ROWS).
      dev = kHost;
      if (name == "token_embd.weight") embd = bytes;
    }
    bool by_override = false;
    for (const Override& o : *ov) {
      if (std::regex_search(name, o.re)) {
        if (dev != o.dev) overridden += bytes;
        dev = o.dev;
        by_override = true;
        break;
      }
    }
    if (!by_override && ExpertsToCpu(r, e)) {
      if (dev != kHost) overridden += bytes;
      dev = kHost;
      by_override = true;
    }
    if (row && !by_override && dev != kHost && e.layer >= 0 && e.info.shape.size() == 2) {
      for (int g = 0; g < r.gpus; ++g) {
        const double lo = g == 0 ? 0.0 : r.splits[static_cast<size_t>(g - 1)];
        On(r, g).model += Clamp(static_cast<double>(bytes) * (r.splits[static_cast<size_t>(g)] -
                                                              lo));
      }
      continue;
    }
    On(r, dev).model += bytes;
    if (dev == kHost && e.layer >= 0 && e.info.shape.size() >= 2 && r.n_ubatch >= 32) {
      // The scheduler offloads the matmul to its first GPU backend (CUDA0), whichever device
      // holds the rest of the layer (ggml-backend.cpp, ggml_backend_sched_backend_id_from_cur).
      r.cpu_weight_copy[0] = std::max(r.cpu_weight_copy[0], bytes);
    }
  }
  if (tied && embd > 0 && r.output_dev != kHost) {
    On(r, r.output_dev).model += embd;
    r.notes.push_back(fmt::format("tied embeddings: the output layer's copy of token_embd ({}) "
                                  "is on the GPU with the output layer", FormatBytes(embd)));
  }
  if (beside > 0 && r.s.mmproj.empty()) {
    r.notes.push_back(fmt::format(
        "a vision projector ({}) sits beside the model: llama-server loads it only with "
        "--mmproj FILE (or -hf); plan with --mmproj to count it", FormatBytes(beside)));
  }
  if (skipped > 0) {
    r.notes.push_back(fmt::format("{} of NextN (MTP) layers are not loaded by llama.cpp",
                                  FormatBytes(skipped)));
  }
  if (overridden > 0) {
    r.notes.push_back(fmt::format("overrides (-ot / --cpu-moe / --n-cpu-moe) moved {}",
                                  FormatBytes(overridden)));
  }
  return Status::Ok();
}

// K or V width of one token in one layer, as llama-hparams.cpp n_embd_k_gqa / n_embd_v_gqa
// give it: heads_kv x head size; MLA caches the latent plus the rope part as K (one head) and
// the latent as V (llama-model.cpp deepseek2: n_embd_head_k = kv_lora_rank + n_rot).
std::pair<uint64_t, uint64_t> KvWidth(const AttentionSpec& a, const Rules& rules) {
  if (a.kind == AttentionKind::kMla && !rules.mla_latent_cache) {
    const uint64_t h = static_cast<uint64_t>(a.num_heads);
    return {h * static_cast<uint64_t>(a.qk_nope_head_dim + a.qk_rope_head_dim),
            h * static_cast<uint64_t>(a.v_head_dim)};
  }
  if (a.kind == AttentionKind::kMla) {
    return {static_cast<uint64_t>(a.kv_lora_rank + a.qk_rope_head_dim),
            static_cast<uint64_t>(a.kv_lora_rank)};
  }
  const uint64_t w = static_cast<uint64_t>(a.num_kv_heads) * static_cast<uint64_t>(a.head_dim);
  return {w, w};
}

// kv_cache: the attention layers' K and V (llama-kv-cache.cpp: one [n_embd_gqa, kv_size,
// n_stream] tensor each, on the layer's device unless -nkvo), and the recurrent layers' r and
// s states, F32, one row per sequence (llama-memory-recurrent.cpp, n_embd_r / n_embd_s of
// llama-hparams.cpp).
//   cells, full layers: n_ctx (unified: one stream of n_ctx; else n_seq streams of n_ctx_seq)
//   cells, hybrid models: n_ctx per stream (llama-model.cpp create_memory passes cparams.n_ctx
//                         to the hybrid memory), so separate streams hold n_ctx x n_seq
//   cells, SWA layers: min(n_ctx_seq, pad256(n_swa x (unified ? n_seq : 1) + n_ubatch)) per
//                      stream, n_ctx_seq with --swa-full (llama-kv-cache-iswa.cpp)
Status KvCache(Run& r) {
  const int64_t streams = r.unified ? 1 : r.n_seq;
  const int64_t n_ctx_seq = r.plan.n_ctx / streams;
  bool hybrid = false;
  for (const LayerSpec& l : r.spec.layers) hybrid |= l.attention.kind == AttentionKind::kLinear;
  const int64_t full_per_stream = hybrid ? r.plan.n_ctx : n_ctx_seq;
  r.plan.kv_cells = static_cast<uint64_t>(full_per_stream * streams);
  for (int il = 0; il < r.n_layer; ++il) {
    const AttentionSpec& a = r.spec.layers[static_cast<size_t>(il)].attention;
    // Layers past n_layer_kv_from_start (Gemma 3n/4's shared KV) get no cache: has_kv(il)
    // in the llama_kv_cache constructor.
    if (a.kv_shared) continue;
    const int dev = r.s.no_kv_offload ? kHost : r.layer_dev[static_cast<size_t>(il)];
    if (a.kind == AttentionKind::kLinear) {
      const uint64_t hk = static_cast<uint64_t>(a.linear_num_key_heads);
      const uint64_t hv = static_cast<uint64_t>(a.linear_num_value_heads);
      const uint64_t dk = static_cast<uint64_t>(a.linear_key_head_dim);
      const uint64_t dv = static_cast<uint64_t>(a.linear_value_head_dim);
      const uint64_t conv = static_cast<uint64_t>(std::max<int64_t>(a.linear_conv_kernel_dim - 1,
                                                                    0));
      const uint64_t n_embd_r = conv * (hv * dv + 2 * hk * dk);
      const uint64_t n_embd_s = dk * hv * dv;
      On(r, dev).state += (n_embd_r + n_embd_s) * 4 * static_cast<uint64_t>(r.n_seq);
      continue;
    }
    int64_t cells = full_per_stream;
    if (a.kind == AttentionKind::kSliding && a.sliding_window > 0 && !r.s.swa_full &&
        r.rules.swa_window_cache) {
      cells = std::min(n_ctx_seq,
                       Pad(a.sliding_window * (r.unified ? r.n_seq : 1) + r.n_ubatch, kCtxPad));
      r.plan.swa_cells = static_cast<uint64_t>(cells * streams);
    }
    const auto [wk, wv] = KvWidth(a, r.rules);
    const uint64_t n = static_cast<uint64_t>(cells * streams);
    auto k = CacheRowBytes(r.type_k, wk, "--cache-type-k");
    auto v = CacheRowBytes(r.type_v, wv, "--cache-type-v");
    if (!k.ok()) return k.status();
    if (!v.ok()) return v.status();
    On(r, dev).kv += Clamp(static_cast<double>(*k + *v) * static_cast<double>(n));
  }
  return Status::Ok();
}

// profile: the compute buffer ggml's scheduler reserves on each device for the worst ubatch
// (llama-context.cpp: graph_reserve(T = min(n_ctx, n_ubatch) tokens, every one an output)).
// The graph allocator reuses memory, so a buffer is close to the graph's widest moment:
//   output layer  logits [n_vocab, T] + the normed hidden state [n_embd, T], f32
//   a layer       the KQ mask [n_kv, T] (f32; f16 under flash attention) and kLiveRows rows
//                 [d, T] f32 (d = max(n_embd, n_head x head_dim)) live across the layer, plus
//                 the widest of: attention (without FA the scores [n_kv, T, n_head] f32; with
//                 FA kLiveRows more rows) and the FFN (gate and up [n_ff active, T] f32, plus
//                 the copy of a CPU-resident weight its matmul runs with)
// An estimate, scored against published buffer sizes (docs/validation.md).
constexpr double kLiveRows = 4;
void Compute(Run& r) {
  const double t = static_cast<double>(std::min<int64_t>(r.plan.n_ctx, r.n_ubatch));
  const double vocab = static_cast<double>(std::max<int64_t>(r.spec.vocab_size, 0));
  const double embd = static_cast<double>(r.spec.hidden_size);
  const double out_term = t * (vocab + embd) * 4;
  const int64_t streams = r.unified ? 1 : r.n_seq;
  for (int g = -1; g < r.gpus; ++g) {
    const double copy = g >= 0 ? static_cast<double>(r.cpu_weight_copy[static_cast<size_t>(g)])
                               : 0.0;
    double layer_term = 0;
    bool any = false;
    for (int il = 0; il < r.n_layer; ++il) {
      // A GPU with a weight copy runs that layer's matmul even when the layer is elsewhere.
      if (r.layer_dev[static_cast<size_t>(il)] != g && !(copy > 0)) continue;
      any = true;
      const LayerSpec& l = r.spec.layers[static_cast<size_t>(il)];
      const AttentionSpec& a = l.attention;
      double n_kv = static_cast<double>(r.plan.kv_cells) / static_cast<double>(streams);
      if (a.kind == AttentionKind::kSliding && r.plan.swa_cells > 0) {
        n_kv = static_cast<double>(r.plan.swa_cells) / static_cast<double>(streams);
      }
      const double d = std::max(embd, static_cast<double>(a.num_heads * a.head_dim));
      const double live = n_kv * t * (r.flash ? 2 : 4) + kLiveRows * d * t * 4;
      double attn = 0;
      if (a.kind != AttentionKind::kLinear) {
        attn = r.flash ? kLiveRows * d * t * 4
                       : n_kv * t * static_cast<double>(std::max<int64_t>(a.num_heads, 1)) * 4;
        // A CPU layer's flash attention on the GPU that runs its offloaded matmuls: the
        // scheduler's expansion puts FLASH_ATTN_EXT there beside its q projection, so its
        // inputs that live in host buffers are copied in at the split's start: the layer's K
        // and V views over the cells ([n_kv] rows each) and, at the first such layer, the
        // f32 KQ mask [n_kv, T] the shared f16 cast is made from (ggml-backend.cpp
        // ggml_backend_sched_split_graph, expand-up pass and input copies; llama-graph.cpp
        // build_attn_mha, b8586). A rebuild of b8586's scheduler over a Qwen3.5-27B file with
        // 26 of 65 layers on CUDA0 gives its logged 1401.75 MiB: 512 MiB of f32 mask, 256 + 256
        // of K and V, the 256 MiB cast and 122 MiB of rows (docs/engines/llamacpp.md).
        if (r.flash && g >= 0 && copy > 0 && r.layer_dev[static_cast<size_t>(il)] == kHost &&
            !a.kv_shared) {
          const auto [wk, wv] = KvWidth(a, r.rules);
          auto k = CacheRowBytes(r.type_k, wk, "--cache-type-k");
          auto v = CacheRowBytes(r.type_v, wv, "--cache-type-v");
          if (k.ok() && v.ok()) {
            attn += n_kv * t * 4 + n_kv * static_cast<double>(*k + *v);
          }
        }
      }
      const double ff = static_cast<double>(l.mlp.kind == MlpKind::kMoe
          ? l.mlp.expert_intermediate_size * std::max<int64_t>(l.mlp.experts_per_token, 1)
          : l.mlp.intermediate_size);
      layer_term = std::max(layer_term, live + std::max(attn, copy + 2 * ff * t * 4));
    }
    if (!any) layer_term = 0;
    const double total = std::max(layer_term, g == r.output_dev ? out_term : 0.0);
    On(r, g).compute = Clamp(total);
  }
}

// warmup: the vision projector llama-server loads after the text model and its context
// (tools/server: mtmd_init_from_file once the model is up), on the first GPU clip finds
// ("clip_ctx: CLIP using CUDA0 backend") unless --no-mmproj-offload keeps it on the CPU:
//   projector  the file's tensor bytes (clip_model_loader::load_tensors)
//   encoder    the compute buffer clip_model_loader::warmup reserves for its warm-up image
//              (flash attention as -fa resolves it; an estimate, EncoderComputeBytes)
// and the image-token budget: an image's tokens (clip_n_output_tokens) count against the
// request's context, and a non-causal projector's (Gemma 3) must fit one ubatch
// (llama-context.cpp decode: "non-causal attention requires n_ubatch >= n_tokens").
Status Mmproj(Run& r) {
  if (r.s.mmproj.empty() && !r.s.mmproj_header) return Status::Ok();
  if (!r.s.mmproj_header) {
    r.notes.push_back(fmt::format("the vision projector {} was not read: its weights and "
                                  "encoder compute buffer are not modelled",
                                  core::Printable(r.s.mmproj)));
    r.plan.not_counted.push_back(fmt::format(
        "the vision projector {} (not read): its weights and encoder compute buffer",
        core::Printable(r.s.mmproj)));
    return Status::Ok();
  }
  auto p = ReadProjector(*r.s.mmproj_header);
  if (!p.ok()) return p.status();
  DeviceBuffers& d = On(r, r.s.mmproj_offload ? 0 : kHost);
  d.projector = p->weight_bytes;
  d.encoder = EncoderComputeBytes(*p, r.flash);
  r.plan.image_tokens = p->image_tokens;
  const int64_t n_ctx_seq = r.unified ? r.plan.n_ctx : r.plan.n_ctx / r.n_seq;
  r.plan.images_per_request = n_ctx_seq / p->image_tokens;
  r.notes.push_back(fmt::format(
      "vision projector {} ({}): weights {}, encoder {} layers x {} hidden, warm-up image "
      "{} x {} px = {} patches; an image is at most {} tokens{}, {} per request at -c {}{}",
      p->type,
      r.s.mmproj.empty() ? r.s.mmproj_header->origin : core::Printable(r.s.mmproj),
      FormatBytes(p->weight_bytes), p->layers,
      p->hidden, p->warmup_size, p->warmup_size, p->warmup_patches, p->image_tokens,
      p->tiled ? " per tile" : "", r.plan.images_per_request, n_ctx_seq,
      p->known ? "" : " (an unmodelled projector type: tokens are its patches / merge^2)"));
  if (p->warmup_patches < p->image_tokens * p->merge * p->merge) {
    r.notes.push_back("the warm-up image is smaller than the largest image: encoding a larger "
                      "one grows the encoder's compute buffer at the first such request");
  }
  if (p->non_causal && p->image_tokens > r.n_ubatch) {
    r.image_fail = fmt::format(
        "GGML_ASSERT((cparams.causal_attn || cparams.n_ubatch >= n_tokens_all) && \"non-causal "
        "attention requires n_ubatch >= n_tokens\") failed: an image is {} tokens decoded "
        "non-causally, more than -ub {}; raise -ub (and -b) to at least {}",
        p->image_tokens, r.n_ubatch, p->image_tokens);
  } else if (p->image_tokens > n_ctx_seq) {
    r.image_fail = fmt::format(
        "an image is {} tokens, more than a request's context of {} (-c {} over {} slot(s)): "
        "no request with an image fits", p->image_tokens, n_ctx_seq, r.plan.n_ctx, r.n_seq);
  }
  return Status::Ok();
}

// The verdict: the buffers in llama.cpp's allocation order (model, KV/state, compute) against
// each GPU's memory after its CUDA context and other processes.
void Verdict(Run& r) {
  LlamaCppPlan& p = r.plan;
  const uint64_t other = r.s.other_process_bytes;
  const uint64_t total = r.gpu.total_bytes;
  const uint64_t budget = total > other + kCudaContextBytes ? total - other - kCudaContextBytes
                                                             : 0;
  p.fits = true;
  int64_t margin = INT64_MAX;
  for (int g = 0; g < r.gpus; ++g) {
    const DeviceBuffers& d = p.devices[static_cast<size_t>(g)];
    const uint64_t text = d.model + d.kv + d.state + d.compute;
    const uint64_t at[5] = {d.model, d.model + d.kv + d.state, text, text + d.projector,
                            d.total()};
    const Stage stage[5] = {Stage::kLoad, Stage::kKvCache, Stage::kProfile, Stage::kWarmup,
                            Stage::kWarmup};
    const char* what[5] = {"model", "KV cache", "compute", "vision projector (mmproj)",
                           "vision encoder compute"};
    for (int i = 0; i < 5; ++i) {
      if (i >= 3 && at[i] == at[i - 1]) continue;
      const int64_t left = static_cast<int64_t>(budget) - static_cast<int64_t>(at[i]);
      if (left < 0 && p.fits) {
        p.fits = false;
        p.failure_stage = stage[i];
        p.failure_message = fmt::format(
            "ggml_backend_cuda_buffer_type_alloc_buffer: allocating {} on device {}: "
            "cudaMalloc failed: out of memory (the {} buffer; {} of {} free after the CUDA "
            "context{})", FormatBytes(at[i] - (i == 0 ? 0 : at[i - 1])), g, what[i],
            FormatBytes(budget > (i == 0 ? 0 : at[i - 1]) ? budget - (i == 0 ? 0 : at[i - 1])
                                                          : 0),
            FormatBytes(total), other > 0 ? " and other processes" : "");
        margin = left;
      } else if (p.fits) {
        margin = std::min(margin, left);
      }
    }
  }
  p.margin_bytes = margin == INT64_MAX ? 0 : margin;
  if (p.fits && !r.image_fail.empty()) {
    p.fits = false;
    p.failure_stage = Stage::kRuntime;
    p.failure_message = r.image_fail;
  }
  for (int g = 0; g < r.gpus; ++g) {
    const DeviceBuffers& d = p.devices[static_cast<size_t>(g)];
    GpuPlan x;
    x.total_bytes = total;
    x.budget_bytes = budget;
    x.cuda_context_bytes = kCudaContextBytes;
    x.weights_bytes = d.model;
    x.load_peak_bytes = d.model;
    x.activation_peak_bytes = d.compute + d.encoder;
    x.kv_cache_bytes = d.kv + d.state;
    x.peak_bytes = d.total();
    x.device_used_bytes = d.total() + kCudaContextBytes;
    x.explain.push_back({"model", d.model, fmt::format(
        "{} of {} repeating layers{} (-ngl {}, -sm {})", d.layers, r.n_layer,
        d.output ? " and the output layer" : "", r.ngl, r.s.split_mode)});
    x.explain.push_back({"kv", d.kv, fmt::format(
        "{} cells x (K {} + V {}) per attention layer here", p.kv_cells, r.type_k, r.type_v)});
    if (d.state > 0) {
      x.explain.push_back({"state", d.state, fmt::format(
          "recurrent r + s in F32 x {} sequence(s) per linear layer here", r.n_seq)});
    }
    x.explain.push_back({"compute", d.compute, fmt::format(
        "estimate: widest of logits, attention ({}) and FFN for a {}-token ubatch",
        r.flash ? "flash" : "scores", std::min<int64_t>(p.n_ctx, r.n_ubatch))});
    if (d.projector + d.encoder > 0) {
      x.explain.push_back({"mmproj", d.projector, "the vision projector file's tensor bytes"});
      x.explain.push_back({"encoder", d.encoder, fmt::format(
          "estimate: 3 rows + widest of attention ({}) and FFN over the warm-up image's "
          "patches, f32", r.flash ? "flash" : "scores")});
    }
    p.gpus.push_back(std::move(x));
  }
  // The encoder's estimate is looser (one published warm-up line; a 2026 build logged 4x more
  // for the same tower): half of it counts as uncertain.
  p.uncertainty_bytes = 100 * kMiB + p.devices.front().compute / 5 +
                        p.devices.front().encoder / 2;
  // The longest request and how many of that length run at once. A unified cache (builds
  // with KV streams) is one stream of n_ctx cells every slot may fill, so one request of n_ctx
  // tokens fills it; separate streams give each of the n_seq slots n_ctx / n_seq cells
  // (llama-context.cpp n_ctx_seq), and builds before KV streams split n_ctx between the slots
  // the same way (tools/server/server.cpp n_ctx_slot = n_ctx / n_parallel): a longer prompt
  // is refused by its slot.
  const bool shared = r.unified && r.rules.kv_streams;
  p.max_model_len = shared ? p.n_ctx : p.n_ctx / r.n_seq;
  p.kv_cache_tokens = p.kv_cells;
  p.max_concurrency = shared ? 1.0 : static_cast<double>(r.n_seq);
  p.kv_block_size = 0;
  for (const GpuPlan& g : p.gpus) p.kv_needed_bytes += g.kv_cache_bytes;
  // The stage table, for GPU 0 (the main GPU holds the most under default splits).
  size_t t = 0;
  for (size_t g = 1; g < p.devices.size(); ++g) {
    if (p.devices[g].total() > p.devices[t].total()) t = g;
  }
  const DeviceBuffers& d = p.devices[t];
  const std::string on = r.gpus > 1 ? fmt::format(" (CUDA{})", t) : "";
  p.stages.push_back({Stage::kStartup, fmt::format("CUDA context {} on {} GPU(s)",
                                                   FormatBytes(kCudaContextBytes), r.gpus)});
  p.stages.push_back({Stage::kLoad, fmt::format(
      "model buffer {}{}: {} of {} layers{}; CPU {}", FormatBytes(d.model), on, d.layers,
      r.n_layer, d.output ? " + output" : "", FormatBytes(p.host.model))});
  p.stages.push_back({Stage::kKvCache, fmt::format(
      "KV buffer {}{} ({} cells, K {}, V {}, {} seq{}){}", FormatBytes(d.kv), on,
      core::GroupDigits(p.kv_cells), r.type_k, r.type_v, r.n_seq,
      r.unified ? ", unified" : "",
      d.state > 0 ? fmt::format(", recurrent state {}", FormatBytes(d.state)) : "")});
  p.stages.push_back({Stage::kProfile, fmt::format(
      "compute buffer {}{} (estimate, ubatch {}, flash attention {})", FormatBytes(d.compute),
      on, r.n_ubatch, r.flash ? "on" : "off")});
  if (p.image_tokens > 0) {
    const bool gpu = r.s.mmproj_offload;
    const DeviceBuffers& v = gpu ? p.devices.front() : p.host;
    p.stages.push_back({Stage::kWarmup, fmt::format(
        "vision projector {} + encoder compute {} (estimate) on {}; an image is {} tokens, "
        "{} per request", FormatBytes(v.projector), FormatBytes(v.encoder),
        gpu ? "CUDA0" : "the CPU (--no-mmproj-offload)", p.image_tokens,
        p.images_per_request)});
  }
  p.stages.push_back({Stage::kRuntime, fmt::format("total {}{} of {} after the CUDA context",
                                                   FormatBytes(d.total()), on,
                                                   FormatBytes(budget))});
  const uint64_t host = p.host.total();
  if (host > 0) {
    r.notes.push_back(fmt::format(
        "host memory: model {}{}, KV {}, state {}, compute {}{}", FormatBytes(p.host.model),
        r.s.mmap ? " (mmap: file pages, CPU_Mapped)" : " (--no-mmap: resident)",
        FormatBytes(p.host.kv), FormatBytes(p.host.state), FormatBytes(p.host.compute),
        p.host.projector + p.host.encoder > 0
            ? fmt::format(", vision projector {} + encoder {}", FormatBytes(p.host.projector),
                          FormatBytes(p.host.encoder))
            : std::string()));
  }
}

}  // namespace

Result<uint64_t> CacheRowBytes(const std::string& type, uint64_t n, const char* flag) {
  // ggml.c type_traits: block size and bytes per block.
  struct Row { const char* name; uint64_t block, bytes; };
  static constexpr Row kRows[] = {
      {"f32", 1, 4}, {"f16", 1, 2}, {"bf16", 1, 2}, {"q8_0", 32, 34}, {"q4_0", 32, 18},
      {"q4_1", 32, 20}, {"iq4_nl", 32, 18}, {"q5_0", 32, 22}, {"q5_1", 32, 24},
  };
  for (const Row& row : kRows) {
    if (type == row.name) return (n + row.block - 1) / row.block * row.bytes;
  }
  return Invalid(fmt::format("{} {}: expected f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0 "
                             "or q5_1 (llama.cpp's allowed cache types)", flag,
                             core::Printable(type)));
}

namespace {

// The plan of fixed settings: what llama.cpp loads once --fit (if any) has chosen them.
Result<LlamaCppPlan> PlanFixed(const Inventory& inv, const GpuSpec& gpu,
                               const LlamaCppSettings& settings,
                               const std::vector<std::string>& fit_notes = {}) {
  Run r{inv, inv.spec, gpu, settings};
  r.plan.engine = "llamacpp";
  r.plan.engine_title = "llama.cpp";
  r.plan.modelled_version = "ec98e2002";
  r.plan.gpu = gpu;
  VRAMFIT_RETURN_IF_ERROR(Resolve(r));
  if (r.rules.build != kModelledBuild) {
    r.plan.modelled_version = fmt::format("b{}", r.rules.build);
    r.notes.push_back(fmt::format("llama.cpp b{}: the rules of ec98e2002 with this build's "
                                  "differences (docs/engines/llamacpp.md)", r.rules.build));
  }
  r.plan.gpu_count = r.gpus;
  VRAMFIT_RETURN_IF_ERROR(Load(r));
  VRAMFIT_RETURN_IF_ERROR(KvCache(r));
  Compute(r);
  VRAMFIT_RETURN_IF_ERROR(Mmproj(r));
  Verdict(r);
  LlamaCppSettings resolved = r.s;
  resolved.max_model_len = r.plan.n_ctx;
  resolved.max_num_seqs = r.n_seq;
  resolved.tensor_parallel_size = 1;
  resolved.pipeline_parallel_size = r.gpus;
  resolved.gpu_memory_utilization =
      gpu.total_bytes > 0 ? static_cast<double>(r.plan.gpus.front().budget_bytes) /
                                static_cast<double>(gpu.total_bytes)
                          : 0;
  r.plan.resolved = ToEngineSettings(resolved);
  r.plan.notes = fit_notes;
  r.plan.notes.insert(r.plan.notes.end(), r.notes.begin(), r.notes.end());
  r.plan.notes.push_back("compute buffers are an estimate (the graph allocator's peak); model "
                         "and KV buffers follow llama.cpp's allocation rules exactly");
  r.plan.command = CommandLine(inv, r.s);
  return std::move(r.plan);
}

}  // namespace

Result<LlamaCppPlan> PlanLlamaCpp(const Inventory& inv, const GpuSpec& gpu,
                                  const LlamaCppSettings& settings) {
  auto rules = RulesFor(settings.version);
  if (!rules.ok()) return rules.status();
  if (!FitApplies(*rules, settings)) return PlanFixed(inv, gpu, settings);
  // --fit chooses the settings first (common_init_result, before the model loads).
  LlamaCppSettings s = settings;
  auto fit = FitParams(inv, [&](const LlamaCppSettings& v) { return PlanFixed(inv, gpu, v); },
                       &s);
  if (!fit.ok()) return fit.status();
  auto p = PlanFixed(inv, gpu, s, fit->notes);
  if (!p.ok() || p->fits || fit->failure.empty()) return p;
  p->failure_message = fmt::format("llama_params_fit: failed to fit params to free device "
                                   "memory: {}; then {}", fit->failure, p->failure_message);
  return p;
}

EngineSettings ToEngineSettings(const LlamaCppSettings& s) {
  EngineSettings e = static_cast<const EngineSettings&>(s);
  e.engine_options = std::make_shared<LlamaCppOptions>(static_cast<const LlamaCppOptions&>(s));
  return e;
}

LlamaCppSettings ToLlamaCppSettings(const EngineSettings& e) {
  LlamaCppSettings s;
  static_cast<EngineSettings&>(s) = e;
  s.engine_options.reset();
  if (auto* o = dynamic_cast<const LlamaCppOptions*>(e.engine_options.get())) {
    static_cast<LlamaCppOptions&>(s) = *o;
  }
  return s;
}

}  // namespace vramfit::llamacpp
