// transformers stage-by-stage plan (see transformers.h): one function per stage over a Run
// that carries the resolved settings, the release's Rules and what each stage leaves for the
// next. Formulas and sources are in docs/engines/transformers.md; the constants named k* below
// are explained there.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/text.h"
#include "core/units.h"
#include "engines/transformers/command.h"
#include "engines/transformers/rules.h"
#include "engines/transformers/weights.h"
#include "model/kv_state.h"
#include "model/vision_tokens.h"

namespace vramfit::transformers {
namespace {

using core::FormatBytes;
using core::GroupDigits;
using core::kGiB;
using core::kMiB;

// CUDA context of a PyTorch process on one GPU (driver, cuBLAS handle and workspace): 300-600
// MiB in public reports; held outside torch's allocator.
constexpr uint64_t kCudaContext = 512 * kMiB;
// Logits processing per logit of the decode step, beyond the model's own logits:
//   sampling (_sample with the chat models' generation_config: temperature, top_k, top_p):
//     the fp32 copy (4), temperature (4), top-k's masked copy (4), top-p's sort values (4) and
//     indices (8), softmax (4), cumsum (4), scatter mask (1), masked fill (4), the final
//     softmax (4): 41 B;
//   greedy: the fp32 copy and the argmax: 4 B;
//   beam search (_beam_search): fp32 copy, log_softmax, beam scores added: 12 B.
constexpr uint64_t kSampleBytesPerLogit = 41;
constexpr uint64_t kGreedyBytesPerLogit = 4;
constexpr uint64_t kBeamBytesPerLogit = 12;
// Eager attention per score: the scores in the model dtype, softmax's float32 result and its
// cast back (modeling_llama.py eager_attention_forward: softmax(dtype=float32).to(q.dtype)).
constexpr uint64_t kEagerExtraBytesPerScore = 4 + 2;
// quanto's QuantizedCache: a scale and a zero point in the model dtype per group of 64 values
// (QuantizedCacheConfig q_group_size 64).
constexpr uint64_t kQuantGroup = 64;
// The spread of the plan's modelled terms: the CUDA context (300-600 MiB) and the allocator's
// reserve above what it holds allocated; docs/validation.md.
constexpr uint64_t kContextSpread = 256 * kMiB;

Status Invalid(std::string m) { return Status::InvalidArgument(std::move(m)); }

bool Is(const std::string& s, std::initializer_list<const char*> any) {
  for (const char* a : any) {
    if (s == a) return true;
  }
  return false;
}

struct PerGpu {
  uint64_t weights = 0, load_transient = 0, kv_full = 0, kv_static = 0, kv_prompt = 0;
  uint64_t prefill_act = 0, prefill_logits = 0, decode_act = 0, decode_logits = 0;
  uint64_t offload_stream = 0;  // an offloaded unit brought to the GPU for its forward
  uint64_t fused_load = 0, fused_run = 0;  // AutoAWQ fused caches at load (batch 1) and generate
  uint64_t encoder = 0, image_embeds = 0;  // the vision tower's pass, its outputs held
  uint64_t stage[kStageCount] = {};
  int units = 0;
};

struct Run {
  const Inventory& inv;
  const ModelSpec& spec;
  const GpuSpec& gpu;
  TransformersSettings s;
  Rules rules;
  TransformersPlan plan;
  int gpus = 1;
  Dtype dtype = Dtype::kBF16;
  uint64_t act = 2;
  Quantizer quantizer = Quantizer::kNone;
  std::string attn = "sdpa", cache = "dynamic";
  int64_t L = 0, P = 0, N = 0, cache_len = 0, batch = 1, seqs = 1;
  bool fused = false;          // AwqConfig(do_fuse=True): AutoAWQ's fused attention
  int64_t image_tokens = 0;    // per sequence, part of P and L
  int64_t image_max_pixels = 0;
  uint64_t free = 0;
  LoadedWeights w;
  std::vector<int> where;
  std::vector<PerGpu> g;
  std::vector<uint64_t> offloaded;  // bytes on cpu, disk

  void Fail(Stage stage, std::string msg) {
    if (!plan.fits) return;
    plan.fits = false;
    plan.failure_stage = stage;
    plan.failure_message = std::move(msg);
  }
  // The GPU a layer's activations and cache live on (offloaded layers run on GPU 0).
  int GpuOf(size_t unit) const { return where[unit] >= 0 ? where[unit] : 0; }
};

Dtype DtypeFromName(const std::string& n, Dtype fallback) {
  if (Is(n, {"bfloat16", "bf16", "torch.bfloat16"})) return Dtype::kBF16;
  if (Is(n, {"float16", "fp16", "half", "torch.float16"})) return Dtype::kF16;
  if (Is(n, {"float32", "fp32", "float", "torch.float32"})) return Dtype::kF32;
  return fallback;
}

// Images in each prompt (Qwen-VL processors, model/vision_tokens.h): their tokens join the
// prompt; the tower's pass is charged to the prefill (EncoderPass).
Status ResolveImages(Run& r) {
  const TransformersSettings& s = r.s;
  const VisionSpec& v = r.spec.vision;
  if (s.images_per_prompt <= 0) {
    if (s.max_pixels > 0) {
      r.plan.notes.push_back("--max-pixels without --images-per-prompt: no image is planned");
    }
    return Status::Ok();
  }
  if (v.kind == VisionKind::kNone) {
    return Invalid(fmt::format("--images-per-prompt {}: the model has no vision tower (no "
                               "vision_config in config.json)", s.images_per_prompt));
  }
  if (!HasQwenVlImageRule(v)) {
    r.plan.notes.push_back(fmt::format(
        "--images-per-prompt {}: images through this vision tower are not modelled (only the "
        "Qwen-VL processors' image tokens are); the plan holds text tokens only",
        s.images_per_prompt));
    return Status::Ok();
  }
  r.image_max_pixels = ImageMaxPixels(v, s.max_pixels);
  const int64_t per = ImageTokens(v, r.image_max_pixels);
  constexpr int64_t kMaxTokens = (int64_t{1} << 31) - 1;
  if (s.images_per_prompt > kMaxTokens / per) {
    return Invalid(fmt::format("--images-per-prompt {} at {} tokens an image is over 2^31 "
                               "tokens", s.images_per_prompt, per));
  }
  r.image_tokens = s.images_per_prompt * per;
  r.plan.image_tokens = r.image_tokens;
  r.plan.notes.push_back(fmt::format(
      "{} image(s) a prompt at max_pixels {}{}: {} tokens each ({} patches through the vision "
      "tower), {} tokens added to each prompt", s.images_per_prompt, r.image_max_pixels,
      s.max_pixels > 0 ? "" : v.max_pixels > 0 ? " (preprocessor_config.json)"
                                               : " (the processor's default)",
      per, ImagePatches(v, per), r.image_tokens));
  return Status::Ok();
}

// AutoAWQ's fused modules: AwqConfig's checks (utils/quantization_config.py AwqConfig.post_init)
// and the model types integrations/awq.py fuses (AWQ_FUSED_MAPPINGS, transformers 4.57).
Status ResolveFused(Run& r) {
  const TransformersSettings& s = r.s;
  if (!s.do_fuse) {
    if (s.fuse_max_seq_len > 0) {
      r.plan.notes.push_back("--fuse-max-seq-len without --do-fuse: AwqConfig fuses nothing "
                             "unless do_fuse=True (or modules_to_fuse) is given");
    }
    return Status::Ok();
  }
  if (r.spec.quant.method != QuantMethod::kAwq) {
    return Invalid(fmt::format("--do-fuse: AutoAWQ's fused modules need an AWQ checkpoint "
                               "(quant_method awq); this one is {}",
                               r.spec.quant.quantized() ? r.spec.quant.method_text
                                                        : std::string("not quantized")));
  }
  if (s.fuse_max_seq_len <= 0) {
    return Invalid("You cannot enable fused modules without specifying a `fuse_max_seq_len`, "
                   "make sure to pass a valid `fuse_max_seq_len` for your usecase");
  }
  const std::string& a = r.spec.architecture;
  if (!Is(a, {"LlamaForCausalLM", "MistralForCausalLM", "MixtralForCausalLM",
              "LlavaForConditionalGeneration"})) {
    return Invalid(fmt::format(
        "--do-fuse on {}: Fusing mapping not found either on the quantization config or the "
        "supported `AWQ_FUSED_MAPPINGS` (llama, mistral, mixtral, llava); transformers needs "
        "modules_to_fuse for this model, which vramfit does not model", core::Printable(a)));
  }
  r.fused = true;
  // The fused attention runs flash-attn (prefill) and flash_attn_with_kvcache (decode) over its
  // own cache; transformers' cache object stays empty (awq/modules/fused/attn.py, AutoAWQ
  // 0.2.9).
  r.attn = "awq_fused";
  const int64_t S = s.fuse_max_seq_len;
  if (r.P > S) {
    r.Fail(Stage::kProfile, fmt::format(
        "the fused AWQ cache holds {} tokens but the prompt has {}: the prefill's cache write "
        "fails (fuse_max_seq_len)", S, r.P));
  } else if (r.L > S) {
    r.Fail(Stage::kRuntime, fmt::format(
        "the fused AWQ cache holds {} tokens but generation needs {} (prompt {} + {} new): the "
        "cache write past fuse_max_seq_len fails", S, r.L, r.P, r.N));
  }
  return Status::Ok();
}

Status Resolve(Run& r) {
  TransformersSettings& s = r.s;
  int release = kDefaultRelease;
  if (!s.version.empty()) {
    auto v = ParseReleaseNumber(s.version);
    if (!v.ok()) return v.status();
    release = *v;
  }
  r.rules = RulesFor(release);
  r.plan.modelled_version = r.rules.text;
  if (s.version.empty()) {
    r.plan.notes.push_back(fmt::format(
        "transformers {}: the default modelled release (--engine transformers@5.0 for 5.x)",
        r.rules.text));
  }
  // Gemma 4 (model_type gemma4) came with transformers 5.5.0: an older AutoConfig does not
  // know the model type (models/auto/configuration_auto.py) and from_pretrained stops there.
  // Gemma 3n came with 4.53.0 (the release notes' new models).
  struct NewType { const char* family; const char* name; int first; const char* text; };
  static constexpr NewType kNewTypes[] = {{"gemma4", "Gemma 4", 50500, "5.5"},
                                          {"gemma3n", "Gemma 3n", 45300, "4.53"}};
  for (const NewType& t : kNewTypes) {
    if (r.spec.family != t.family || release >= t.first) continue;
    r.Fail(Stage::kLoad,
           fmt::format("The checkpoint you are trying to load has model type `{}` but "
                       "Transformers does not recognize this architecture. This could be because "
                       "of an issue with the checkpoint, or because your version of Transformers "
                       "is out of date.",
                       t.family));
    r.plan.refusal = fmt::format(
        "transformers {} does not have {} (model_type {}, first in transformers {}.0): no GPU "
        "or setting changes that; pip install 'transformers>={}.0' and plan with --engine "
        "transformers@{}",
        s.version.empty() ? r.rules.text : s.version, t.name, t.family, t.text, t.text, t.text);
  }
  if (s.tensor_parallel_size != 1 || s.data_parallel_size != 1) {
    return Invalid("transformers is planned on one process: device_map spreads layers over "
                   "--num-gpus GPUs (tp_plan tensor parallelism is not modelled)");
  }
  constexpr int64_t kMaxTokens = (int64_t{1} << 31) - 1;
  if (s.pipeline_parallel_size < 1 || s.pipeline_parallel_size > 64) {
    return Invalid("--num-gpus: expected 1 to 64");
  }
  r.gpus = static_cast<int>(s.pipeline_parallel_size);
  r.plan.gpu_count = r.gpus;
  for (int64_t v : {s.max_model_len, s.max_cache_len, s.max_new_tokens, s.prompt_tokens,
                    s.max_num_seqs, s.num_beams, s.num_return_sequences}) {
    if (v < -1 || v > kMaxTokens) {
      return Invalid("token counts, --batch-size, --num-beams and --num-return-sequences must "
                     "be 0 to 2147483647");
    }
  }
  if (s.num_beams < 1 || s.num_return_sequences < 1) {
    return Invalid("--num-beams and --num-return-sequences must be at least 1");
  }
  if (s.num_return_sequences > s.num_beams && !s.do_sample && s.num_beams > 1) {
    // generation/configuration_utils.py validate: greedy beam search cannot return more.
    return Invalid(fmt::format("`num_return_sequences` ({}) has to be smaller or equal to "
                               "`num_beams` ({}).", s.num_return_sequences, s.num_beams));
  }
  if (s.kv_cache_dtype != "auto") {
    return Invalid(fmt::format("--kv-cache-dtype {}: transformers has no KV dtype flag; use "
                               "--cache-implementation quantized (quanto int4/int2)",
                               core::Printable(s.kv_cache_dtype)));
  }
  if (s.load_in_4bit && s.load_in_8bit) {
    return Invalid("You can't pass `load_in_4bit`and `load_in_8bit` as kwargs at the same time");
  }
  // Quantizer (quantizers/auto.py): the checkpoint's config wins; bitsandbytes or fbgemm_fp8
  // quantize a 16-bit checkpoint on load.
  const bool online = s.load_in_4bit || s.load_in_8bit || !s.quantization.empty();
  if (!s.quantization.empty() && s.quantization != "fbgemm_fp8") {
    return Invalid(fmt::format("--quantization {}: transformers quantizes on load with "
                               "--load-in-4bit, --load-in-8bit or --quantization fbgemm_fp8",
                               core::Printable(s.quantization)));
  }
  if (r.spec.quant.quantized()) {
    r.quantizer = Quantizer::kPrequantized;
    if (online) {
      r.plan.notes.push_back(fmt::format(
          "the checkpoint is already quantized ({}): its quantization_config is used and the "
          "quantization_config argument is ignored (transformers warns)",
          r.spec.quant.method_text));
    }
  } else if (s.load_in_4bit) {
    r.quantizer = Quantizer::kBnb4;
  } else if (s.load_in_8bit) {
    r.quantizer = Quantizer::kBnb8;
  } else if (!s.quantization.empty()) {
    r.quantizer = Quantizer::kFbgemmFp8;
    if (r.gpu.vendor == "nvidia" && !r.gpu.fp8) {
      r.plan.notes.push_back("fbgemm_fp8 needs FP8 tensor cores (compute capability 9.0; "
                             "quantizer_fbgemm_fp8.py refuses older GPUs at load)");
    }
  }
  // dtype: not passed -> float32 before 5.0, the config's from 5.0; quantizers set float16
  // when none is given (quantizer_awq.py, quantizer_gptq.py, quantizer_bnb_4bit.py
  // update_torch_dtype). "auto" reads the config's dtype.
  const Dtype config_dtype = r.spec.dtype == Dtype::kF32 || r.spec.dtype == Dtype::kF16 ||
                                     r.spec.dtype == Dtype::kBF16
                                 ? r.spec.dtype
                                 : Dtype::kBF16;
  if (s.dtype.empty()) {
    if (r.quantizer != Quantizer::kNone && r.quantizer != Quantizer::kFbgemmFp8) {
      r.dtype = Dtype::kF16;
    } else if (r.rules.default_dtype_auto) {
      r.dtype = config_dtype;
    } else {
      r.dtype = Dtype::kF32;
      r.plan.notes.push_back(fmt::format(
          "no dtype given: transformers {} loads the weights in float32 (twice the {} "
          "checkpoint); pass dtype=\"auto\" or torch.bfloat16", r.rules.text,
          DtypeName(config_dtype)));
    }
  } else if (s.dtype == "auto") {
    r.dtype = config_dtype;
  } else {
    r.dtype = DtypeFromName(s.dtype, Dtype::kBool);
    if (r.dtype == Dtype::kBool) {
      return Invalid(fmt::format("--dtype {}: expected auto, bfloat16, float16 or float32",
                                 core::Printable(s.dtype)));
    }
  }
  if (r.spec.quant.method == QuantMethod::kAwq && r.dtype == Dtype::kBF16) {
    r.dtype = Dtype::kF16;  // quantizer_awq.py: bfloat16 is cast to float16 for the kernels
    r.plan.notes.push_back("AWQ: torch.bfloat16 is not supported by the AWQ CUDA kernels; "
                           "transformers casts to float16");
  }
  r.act = static_cast<uint64_t>(DtypeBits(r.dtype) / 8);
  // Attention: sdpa unless asked (modeling_utils.py _check_and_adjust_attn_implementation).
  r.attn = s.attn_implementation.empty() ? "sdpa" : s.attn_implementation;
  if (!Is(r.attn, {"eager", "sdpa", "flash_attention_2", "flash_attention_3", "flex_attention"})) {
    return Invalid(fmt::format("--attn-implementation {}: expected eager, sdpa, "
                               "flash_attention_2, flash_attention_3 or flex_attention",
                               core::Printable(r.attn)));
  }
  r.cache = s.cache_implementation.empty() ? "dynamic" : s.cache_implementation;
  if (!Is(r.cache, {"dynamic", "static", "offloaded", "offloaded_static", "quantized",
                    "sliding_window", "hybrid"})) {
    return Invalid(fmt::format(
        "--cache-implementation {}: expected dynamic, static, offloaded, offloaded_static, "
        "quantized, sliding_window or hybrid", core::Printable(r.cache)));
  }
  if (r.cache == "quantized" && s.cache_nbits != 2 && s.cache_nbits != 4) {
    return Invalid("--cache-nbits: quanto's QuantizedCache takes 2 or 4");
  }
  const bool is_static = r.cache == "static" || r.cache == "offloaded_static" ||
                         r.cache == "sliding_window" || r.cache == "hybrid";
  // Lengths: max_length = prompt + new tokens (generate's max_new_tokens wins over max_length).
  const int64_t model_max = r.spec.max_position_embeddings > 0 ? r.spec.max_position_embeddings
                                                               : 4096;
  int64_t L = s.max_model_len > 0 ? s.max_model_len : 0;
  if (L == 0 && is_static && s.max_cache_len > 0) L = s.max_cache_len;
  if (s.prompt_tokens > 0 && s.max_new_tokens > 0) {
    L = s.prompt_tokens + s.max_new_tokens;
  } else if (L == 0) {
    L = model_max;
  }
  r.N = s.max_new_tokens > 0 ? s.max_new_tokens
        : s.prompt_tokens > 0 ? L - s.prompt_tokens
                              : std::min<int64_t>(kDefaultNewTokens, std::max<int64_t>(1, L / 2));
  r.P = s.prompt_tokens > 0 ? s.prompt_tokens : L - r.N;
  if (r.P < 1 || r.N < 1) {
    return Invalid(fmt::format("--max-length {} leaves no room for a prompt and {} new tokens",
                               L, r.N));
  }
  const int64_t text_L = L;
  VRAMFIT_RETURN_IF_ERROR(ResolveImages(r));
  r.P += r.image_tokens;
  L += r.image_tokens;
  r.L = L;
  r.cache_len = is_static ? (s.max_cache_len > 0 ? s.max_cache_len : L) : 0;
  if (is_static && r.cache_len < L) {
    // cache_utils.py StaticLayer.update: index_copy_ past max_cache_len fails; generate checks
    // max_length against the cache first (generation/utils.py _prepare_cache_for_generation).
    r.Fail(Stage::kRuntime, fmt::format(
        "the static cache holds {} tokens but generation needs {} (prompt {} + {} new): "
        "generate raises before the first step", r.cache_len, L, r.P, r.N));
  }
  if (L > model_max) {
    r.plan.notes.push_back(fmt::format(
        "{} tokens is beyond max_position_embeddings ({}): transformers generates past it "
        "without refusing, with degraded output", L, model_max));
  }
  r.batch = s.max_num_seqs > 0 ? s.max_num_seqs : 1;
  // generate expands the inputs before the prefill (_expand_inputs_for_generation): beams, or
  // the sampled return sequences.
  r.seqs = r.batch * std::max(s.num_beams, s.do_sample ? s.num_return_sequences : 1);
  s.max_num_seqs = r.batch;
  s.max_model_len = text_L;
  return ResolveFused(r);
}

// Startup: a CUDA context on every GPU the map uses.
void Startup(Run& r) {
  const uint64_t total = r.gpu.total_bytes;
  const uint64_t held = kCudaContext + r.s.other_process_bytes;
  r.free = total > held ? total - held : 0;
  r.g.assign(static_cast<size_t>(r.gpus), PerGpu{});
  if (r.free == 0) {
    r.Fail(Stage::kStartup, fmt::format("{} is held by the CUDA context and other processes: "
                                        "nothing is free on {}", FormatBytes(held), r.gpu.name));
  }
}

// One fused attention layer's own buffers for `batch` sequences (awq/modules/fused/attn.py and
// cache.py, AutoAWQ 0.2.9): WindowedCache's K and V, each [batch, fuse_max_seq_len, kv heads,
// head_dim] in float16, batch AWQ_BATCH_SIZE (1) at load and regrown to the generate batch on the
// first forward (increase_batch_size); and RoPE's freqs_cis, [fuse_max_seq_len, head_dim / 2] in
// complex64 (8 B). head_dim is hidden_size / num_attention_heads: transformers passes no
// head_dim to QuantAttentionFused (integrations/awq.py _fuse_awq_attention_layers, 4.57).
uint64_t FusedLayerCache(const Run& r, const AttentionSpec& a, uint64_t batch) {
  if (a.kind == AttentionKind::kLinear) return 0;
  const uint64_t S = static_cast<uint64_t>(r.s.fuse_max_seq_len);
  const uint64_t heads = static_cast<uint64_t>(std::max<int64_t>(1, a.num_heads));
  const uint64_t kvh = a.num_kv_heads > 0 ? static_cast<uint64_t>(a.num_kv_heads) : heads;
  const uint64_t hd = static_cast<uint64_t>(std::max<int64_t>(0, r.spec.hidden_size)) / heads;
  const uint64_t kv = SatMul(SatMul(2 * batch, S), SatMul(kvh, SatMul(hd, 2)));
  return SatAdd(kv, SatMul(S, hd / 2 * 8));
}

// Load: units sized by dtype and quantizer, placed by the device map.
Status Load(Run& r) {
  r.w = LoadWeights(r.inv, r.quantizer, r.act);
  const std::string& dm = r.s.device_map;
  auto given = ReadMaxMemory(r.s.max_memory);
  if (!given.ok()) return given.status();
  if (Is(dm, {"auto", "balanced", "balanced_low_0", "sequential"})) {
    MaxMemory m = BalancedMemory(r.w, dm, r.gpus, r.free, *given);
    for (std::string& n : m.notes) r.plan.notes.push_back(std::move(n));
    r.where = InferDeviceMap(r.w, m);
  } else if (dm.find('{') != std::string::npos) {
    auto where = ExplicitDeviceMap(r.w, dm, r.gpus);
    if (!where.ok()) return where.status();
    r.where = std::move(*where);
  } else {
    // One device for everything: "cuda", "cuda:N", "N" (check_and_set_device_map).
    std::string d = dm;
    if (d == "cpu" || d == "disk") {
      return Invalid("--device-map cpu: nothing runs on the GPU, nothing to plan");
    }
    if (d == "cuda") d = "0";
    if (d.rfind("cuda:", 0) == 0) d = d.substr(5);
    int dev = -1;
    if (d.empty() || d.size() > 2 || d.find_first_not_of("0123456789") != std::string::npos ||
        (dev = std::stoi(d)) >= r.gpus) {
      return Invalid(fmt::format(
          "When passing device_map as a string, the value needs to be a device name (e.g. cpu, "
          "cuda:0) or 'auto', 'balanced', 'balanced_low_0', 'sequential' but found {}",
          core::Printable(dm)));
    }
    r.where.assign(r.w.units.size(), dev);
  }
  r.offloaded.assign(2, 0);
  uint64_t stream = 0;
  for (size_t i = 0; i < r.w.units.size(); ++i) {
    const Unit& u = r.w.units[i];
    const int d = r.where[i];
    if (d < 0) {
      r.offloaded[d == kCpu ? 0 : 1] = SatAdd(r.offloaded[d == kCpu ? 0 : 1], u.bytes);
      stream = std::max(stream, u.bytes);
      continue;
    }
    PerGpu& g = r.g[static_cast<size_t>(d)];
    g.weights = SatAdd(g.weights, u.bytes);
    g.load_transient = std::max(g.load_transient, u.largest_transient);
    ++g.units;
  }
  r.g[0].offload_stream = stream;
  const bool offloads = r.offloaded[0] + r.offloaded[1] > 0;
  if (offloads) {
    const QuantMethod m = r.spec.quant.method;
    if (m == QuantMethod::kAwq) {
      r.Fail(Stage::kLoad, "You are attempting to load an AWQ model with a device_map that "
                           "contains a CPU or disk device. This is not supported. Please remove "
                           "the CPU or disk device from the device_map.");
    } else if (r.quantizer == Quantizer::kBnb4 || r.quantizer == Quantizer::kBnb8 ||
               m == QuantMethod::kBitsAndBytes) {
      r.Fail(Stage::kLoad,
             "Some modules are dispatched on the CPU or the disk. Make sure you have enough GPU "
             "RAM to fit the quantized model. If you want to dispatch the model on the CPU or "
             "the disk while keeping these modules in 32-bit, you need to set "
             "`llm_int8_enable_fp32_cpu_offload=True` and pass a custom `device_map` to "
             "`from_pretrained`.");
    }
    r.plan.notes.push_back(fmt::format(
        "device_map offloads {} to the CPU and {} to disk: each offloaded unit is copied to "
        "GPU 0 for its forward (accelerate AlignDevicesHook), every step: slow",
        FormatBytes(r.offloaded[0]), FormatBytes(r.offloaded[1])));
  }
  // The declared-quantized checkpoint stored in 16 bits (the audit's fake-quantization).
  for (const Finding& f : r.inv.audit.findings) {
    if (f.code != "fake-quantization") continue;
    r.plan.notes.push_back(fmt::format(
        "the checkpoint declares {} but stores 16-bit projections: transformers builds the "
        "quantized layers from quantization_config (packed qweight/qzeros/scales, sized as "
        "planned), drops the checkpoint's .weight tensors as unexpected keys and leaves the "
        "packed ones newly initialized: it loads without error and generates garbage",
        r.spec.quant.method_text));
  }
  if (r.fused) {
    for (size_t i = 0; i < r.w.units.size(); ++i) {
      const Unit& u = r.w.units[i];
      if (u.layer < 0 || u.layer >= static_cast<int64_t>(r.spec.layers.size())) continue;
      const AttentionSpec& a = r.spec.layers[static_cast<size_t>(u.layer)].attention;
      PerGpu& g = r.g[static_cast<size_t>(r.GpuOf(i))];
      g.fused_load = SatAdd(g.fused_load, FusedLayerCache(r, a, 1));
      g.fused_run = SatAdd(g.fused_run, FusedLayerCache(r, a, static_cast<uint64_t>(r.seqs)));
    }
  }
  // The fused caches are made after the last weight (_process_model_after_weight_loading), when
  // the quantize-on-load transient is gone.
  for (PerGpu& g : r.g) {
    g.stage[static_cast<int>(Stage::kLoad)] = g.weights + std::max(g.load_transient, g.fused_load);
  }
  return Status::Ok();
}

// KV bytes per token of one layer in the cache's element size; MLA is cached decompressed
// (modeling_deepseek_v3.py stores key_states and value_states per head).
uint64_t KvPerToken(const AttentionSpec& a, uint64_t elem) {
  if (a.kind == AttentionKind::kLinear) return 0;
  if (a.kind == AttentionKind::kMla) {
    return static_cast<uint64_t>(a.num_heads) *
           static_cast<uint64_t>(a.qk_nope_head_dim + a.qk_rope_head_dim + a.v_head_dim) * elem;
  }
  return KvBytesPerToken(a, 1, elem);
}

// Tokens a layer's cache holds at length T.
uint64_t LayerTokens(const Run& r, const AttentionSpec& a, int64_t T, bool is_static) {
  const bool windowed = a.kind == AttentionKind::kSliding && a.sliding_window > 0 &&
                        (is_static || r.rules.dynamic_sliding_window);
  return static_cast<uint64_t>(windowed ? std::min<int64_t>(T, a.sliding_window) : T);
}

struct CacheBytes {
  uint64_t bytes = 0;        // held
  uint64_t transient = 0;    // the largest per-layer transient of an update
};

// The cache of `layers` (indices into spec.layers) at T tokens for r.seqs sequences.
CacheBytes Cache(const Run& r, const std::vector<int64_t>& layers, int64_t T, bool prefill) {
  CacheBytes c;
  const bool is_static = r.cache_len > 0;
  // Fused AWQ attention never writes transformers' dynamic cache (a static one is still made by
  // generate).
  if (r.fused && !is_static) return c;
  const uint64_t seqs = static_cast<uint64_t>(r.seqs);
  uint64_t largest_layer = 0;
  for (int64_t i : layers) {
    const AttentionSpec& a = r.spec.layers[static_cast<size_t>(i)].attention;
    // DynamicCache/StaticCache drop the config's last num_kv_shared_layers (cache_utils.py:
    // Gemma 3n and 4 read those layers' K/V from earlier ones).
    if (a.kv_shared) continue;
    uint64_t layer = 0;
    if (a.kind == AttentionKind::kLinear) {
      // Conv state keeps conv_kernel_size columns in transformers' cache (the dynamic cache of
      // Qwen3-Next), the recurrent state in the ssm dtype.
      auto st = LinearAttentionState(a, 1, 1, r.dtype, r.spec.ssm_state_dtype);
      layer = st.ok() ? SatMul(seqs, st->total()) : 0;
    } else {
      const uint64_t tokens = LayerTokens(r, a, is_static ? r.cache_len : T, is_static);
      const uint64_t per = KvPerToken(a, r.act);
      if (r.cache == "quantized") {
        // QuantizedLayer: up to residual_length tokens in the model dtype, the rest in nbits
        // with a scale and zero per group; each update dequantizes the layer's K and V whole.
        const uint64_t resid = std::min<uint64_t>(tokens, static_cast<uint64_t>(
                                                              r.s.residual_length));
        const uint64_t values = (tokens - resid) * per / r.act;
        const uint64_t q = values * static_cast<uint64_t>(r.s.cache_nbits) / 8 +
                           values / kQuantGroup * 2 * r.act;
        layer = SatMul(seqs, q + resid * per);
        c.transient = std::max(c.transient, SatMul(seqs, SatMul(tokens, per)));
      } else {
        layer = SatMul(seqs, SatMul(tokens, per));
        // DynamicLayer.update: torch.cat makes the longer K (then V) while the old one lives.
        if (!is_static && !prefill) c.transient = std::max(c.transient, layer / 2);
      }
    }
    largest_layer = std::max(largest_layer, layer);
    c.bytes = SatAdd(c.bytes, layer);
  }
  if (r.cache == "offloaded" || r.cache == "offloaded_static") {
    // OffloadedCache: the layer in use and the one prefetched stay on the GPU.
    c.bytes = std::min(c.bytes, SatMul(2, largest_layer));
  }
  return c;
}

// Activations of the prefill through one layer for T = seqs x P tokens.
uint64_t LayerActivation(const Run& r, const LayerSpec& l, bool any_sliding) {
  const ModelSpec& s = r.spec;
  const AttentionSpec& a = l.attention;
  const uint64_t P = static_cast<uint64_t>(r.P), seqs = static_cast<uint64_t>(r.seqs);
  const uint64_t T = SatMul(seqs, P), act = r.act;
  const uint64_t H = static_cast<uint64_t>(s.hidden_size);
  const uint64_t base = SatMul(SatMul(T, H), 3 * act);  // residual, normed input, block output
  uint64_t attn = 0;
  if (a.kind == AttentionKind::kLinear) {
    attn = SatMul(SatMul(T, act),
                  static_cast<uint64_t>(2 * (2 * a.linear_num_key_heads * a.linear_key_head_dim +
                                             a.linear_num_value_heads * a.linear_value_head_dim)));
  } else {
    const uint64_t nh = static_cast<uint64_t>(a.num_heads);
    const uint64_t nkv = a.kind == AttentionKind::kMla ? nh : std::max<int64_t>(1, a.num_kv_heads);
    const uint64_t hd = a.kind == AttentionKind::kMla
                            ? static_cast<uint64_t>(a.qk_nope_head_dim + a.qk_rope_head_dim)
                            : static_cast<uint64_t>(a.head_dim);
    // q, k, v, their rotated copies, the attention output.
    attn = SatMul(SatMul(T, act), (nh * (a.output_gate ? 2 : 1) + 2 * nkv + nh + nkv + nh) * hd);
    const uint64_t scores = SatMul(SatMul(seqs, nh), SatMul(P, P));
    if (r.attn == "eager") {
      // The scores (model dtype), float32 softmax and its cast, the 4D mask, repeat_kv's K/V.
      attn = SatAdd(attn, SatMul(scores, act + kEagerExtraBytesPerScore));
      attn = SatAdd(attn, SatMul(SatMul(seqs, SatMul(P, P)), act));
      attn = SatAdd(attn, SatMul(SatMul(T, act), 2 * nh * hd));
    } else if (r.attn == "sdpa" && any_sliding) {
      // A sliding layer cannot use is_causal: sdpa gets a boolean mask [seqs, 1, P, P].
      attn = SatAdd(attn, SatMul(seqs, SatMul(P, P)));
    }
  }
  uint64_t mlp = 0;
  if (l.mlp.kind == MlpKind::kDense) {
    mlp = SatMul(SatMul(T, act), 3 * static_cast<uint64_t>(l.mlp.intermediate_size));
  } else {
    // The eager MoE loop: router logits in float32, the output buffer, one expert's tokens at
    // a time (T x top_k / E on average, taken as twice that), the shared expert.
    const uint64_t E = std::max<int64_t>(1, l.mlp.num_experts);
    const uint64_t k = static_cast<uint64_t>(l.mlp.experts_per_token);
    const uint64_t expert_tokens = std::min(T, SatMul(T, 2 * k) / E + 1);
    mlp = SatAdd(SatMul(T, E * 4 + H * act),
                 SatMul(SatMul(expert_tokens, act),
                        3 * static_cast<uint64_t>(l.mlp.expert_intermediate_size)));
    mlp = SatAdd(mlp, SatMul(SatMul(T, act),
                             3 * static_cast<uint64_t>(l.mlp.shared_intermediate_size)));
  }
  return SatAdd(base, std::max(attn, mlp));
}

// The vision tower's pass in the prefill, for batch x images_per_prompt images at once
// (get_image_features runs every image of the call together), on the GPU of the tower.
// Per patch (models/qwen2_5_vl/modeling_qwen2_5_vl.py, 4.5x as read; models/qwen3_vl/
// modeling_qwen3_vl.py and Qwen2-VL alike but for their plain fc1/fc2 MLP): pixel_values in
// float32 from the processor and their cast to the tower's dtype (in_channels x
// temporal_patch x patch^2 values each); the rotary table, its cos and sin in
// float32 (3 x head_dim x 4 B); then the widest block: residual, normed input and output
// (3 x hidden) with the wider of attention (qkv 3 x hidden, rotated q and k 2 x hidden, the
// output and its concatenation 2 x hidden) and the MLP (Qwen2.5-VL gated: 3 x intermediate;
// Qwen2-VL and Qwen3-VL fc1 and its activation: 2 x intermediate). Attention splits the patches
// by cu_seqlens for eager and sdpa (one image, or one window, at a time): eager holds one
// image's heads x patches^2 scores at the eager cost; sdpa gets no mask (no score matrix);
// flash_attention_2 runs varlen. The text embeddings (batch x prompt x hidden) exist already.
// *held: what stays through the decoder's prefill: the merged image embeddings (tokens x the
// language model's hidden size) and Qwen3-VL's deepstack features (one more per index).
uint64_t EncoderPass(const Run& r, uint64_t* held) {
  *held = 0;
  const VisionSpec& v = r.spec.vision;
  if (r.image_tokens == 0 || !HasQwenVlImageRule(v)) return 0;
  const uint64_t act = r.act;
  const uint64_t images = SatMul(static_cast<uint64_t>(r.seqs),
                                 static_cast<uint64_t>(r.s.images_per_prompt));
  const uint64_t tok = static_cast<uint64_t>(ImageTokens(v, r.image_max_pixels));
  const uint64_t per_image = static_cast<uint64_t>(ImagePatches(v, static_cast<int64_t>(tok)));
  const uint64_t n = SatMul(images, per_image);
  const uint64_t H = static_cast<uint64_t>(v.hidden_size);
  const uint64_t I = static_cast<uint64_t>(v.intermediate_size);
  const uint64_t heads = static_cast<uint64_t>(std::max<int64_t>(1, v.num_heads));
  const uint64_t hd = H / heads;
  const uint64_t pixel_values = static_cast<uint64_t>(
      std::max<int64_t>(1, v.in_channels) * std::max<int64_t>(1, v.temporal_patch_size) *
      std::max<int64_t>(1, v.patch_size) * std::max<int64_t>(1, v.patch_size));
  uint64_t per_patch = pixel_values * (4 + act) + 3 * hd * 4;
  const uint64_t mlp = (v.kind == VisionKind::kQwen25Vl ? 3 : 2) * I;
  per_patch += (3 * H + std::max<uint64_t>(7 * H, mlp)) * act;
  uint64_t pass = SatMul(n, per_patch);
  const std::string attn = r.s.attn_implementation.empty() ? "sdpa" : r.s.attn_implementation;
  if (attn == "eager") {
    pass = SatAdd(pass, SatMul(SatMul(heads, SatMul(per_image, per_image)),
                               act + kEagerExtraBytesPerScore));
  }
  const uint64_t text_hidden = static_cast<uint64_t>(r.spec.hidden_size);
  pass = SatAdd(pass, SatMul(SatMul(static_cast<uint64_t>(r.seqs), static_cast<uint64_t>(r.P)),
                             text_hidden * act));
  const uint64_t stacks = 1 + v.deepstack_indexes.size();
  *held = SatMul(SatMul(SatMul(images, tok), text_hidden * act), stacks);
  return pass;
}

// Cache, activations and logits per GPU, and the stage totals.
void Generate(Run& r) {
  const ModelSpec& spec = r.spec;
  const bool is_static = r.cache_len > 0;
  bool any_sliding = false;
  for (const LayerSpec& l : spec.layers) any_sliding |= l.attention.kind == AttentionKind::kSliding;
  // Layers per GPU (a decoder unit's GPU; offloaded layers run and cache on GPU 0).
  std::vector<std::vector<int64_t>> layers(static_cast<size_t>(r.gpus));
  int lm_gpu = 0, vision_gpu = -1;
  for (size_t i = 0; i < r.w.units.size(); ++i) {
    const Unit& u = r.w.units[i];
    if (u.vision && vision_gpu < 0) vision_gpu = r.GpuOf(i);
    if (u.layer >= 0 && u.layer < static_cast<int64_t>(spec.layers.size())) {
      layers[static_cast<size_t>(r.GpuOf(i))].push_back(u.layer);
    }
    if (u.name == "lm_head" || (u.name == "model.embed_tokens" && spec.tie_word_embeddings)) {
      lm_gpu = r.GpuOf(i);
    }
  }
  const uint64_t seqs = static_cast<uint64_t>(r.seqs);
  const uint64_t vocab = static_cast<uint64_t>(spec.vocab_size);
  const uint64_t per_logit = r.s.num_beams > 1 ? kBeamBytesPerLogit
                             : r.s.do_sample   ? kSampleBytesPerLogit
                                               : kGreedyBytesPerLogit;
  const uint64_t decode_logits = SatMul(SatMul(seqs, vocab), r.act + per_logit);
  // The prefill's logits: the last token only (logits_to_keep=1), or every prompt token (and a
  // float32 upcast of all of them) before 4.45.
  const uint64_t prefill_logits =
      r.rules.prefill_last_logits_only
          ? SatMul(SatMul(seqs, vocab), r.act + 4)
          : SatMul(SatMul(SatMul(seqs, static_cast<uint64_t>(r.P)), vocab), r.act + 4);
  for (int gi = 0; gi < r.gpus; ++gi) {
    PerGpu& g = r.g[static_cast<size_t>(gi)];
    const std::vector<int64_t>& ls = layers[static_cast<size_t>(gi)];
    const CacheBytes full = Cache(r, ls, r.L, false);
    const CacheBytes prompt = Cache(r, ls, r.P, true);
    g.kv_full = full.bytes;
    g.kv_static = is_static ? full.bytes : 0;
    g.kv_prompt = is_static ? full.bytes : prompt.bytes;
    uint64_t widest = 0, decode = 0;
    for (int64_t i : ls) {
      const LayerSpec& l = spec.layers[static_cast<size_t>(i)];
      widest = std::max(widest, LayerActivation(r, l, any_sliding));
      if (r.attn == "eager" && l.attention.kind != AttentionKind::kLinear) {
        // One query against L keys: seqs x heads x L scores at the eager cost.
        decode = std::max(decode, SatMul(SatMul(seqs, static_cast<uint64_t>(
                                                          l.attention.num_heads)),
                                         SatMul(static_cast<uint64_t>(r.L),
                                                r.act + kEagerExtraBytesPerScore)));
      }
    }
    g.prefill_act = SatAdd(widest, prompt.transient);
    if (gi == std::max(vision_gpu, 0) && r.image_tokens > 0) {
      // The tower runs before the decoder layers; its outputs stay through them.
      g.encoder = EncoderPass(r, &g.image_embeds);
      g.prefill_act = SatAdd(std::max(g.prefill_act, g.encoder), g.image_embeds);
    }
    g.decode_act = SatAdd(decode, full.transient);
    if (gi == lm_gpu) {
      g.prefill_logits = prefill_logits;
      g.decode_logits = decode_logits;
    }
    const uint64_t base = SatAdd(SatAdd(g.weights, g.offload_stream), g.fused_run);
    g.stage[static_cast<int>(Stage::kKvCache)] =
        SatAdd(SatAdd(g.weights, g.fused_load), g.kv_static);
    g.stage[static_cast<int>(Stage::kProfile)] =
        SatAdd(SatAdd(base, g.kv_prompt), SatAdd(g.prefill_act, g.prefill_logits));
    g.stage[static_cast<int>(Stage::kRuntime)] =
        SatAdd(SatAdd(base, g.kv_full), SatAdd(g.decode_act, g.decode_logits));
  }
  uint64_t per_token = 0;
  for (const LayerSpec& l : spec.layers) per_token += KvPerToken(l.attention, r.act);
  r.plan.kv_bytes_per_token = per_token;
}

const Stage kOrder[] = {Stage::kStartup, Stage::kLoad, Stage::kKvCache, Stage::kProfile,
                        Stage::kRuntime};

const char* StageWords(Stage s) {
  switch (s) {
    case Stage::kLoad: return "loading the weights";
    case Stage::kKvCache: return "allocating the static cache";
    case Stage::kProfile: return "the prefill";
    case Stage::kRuntime: return "generation";
    default: return "start-up";
  }
}

// Verdict, margins and the neutral plan's numbers.
void Verdict(Run& r) {
  TransformersPlan& p = r.plan;
  // The margin: the tightest stage's headroom when it fits, the failing stage's shortfall when
  // it does not.
  int64_t margin = INT64_MAX, failing = INT64_MAX;
  for (Stage st : kOrder) {
    for (int gi = 0; gi < r.gpus; ++gi) {
      const uint64_t need = r.g[static_cast<size_t>(gi)].stage[static_cast<int>(st)];
      const int64_t left = static_cast<int64_t>(r.free) -
                           static_cast<int64_t>(std::min<uint64_t>(need, INT64_MAX / 2));
      margin = std::min(margin, left);
      if (left < 0 && (p.fits || p.failure_stage == st)) failing = std::min(failing, left);
      if (left < 0) {
        r.Fail(st, fmt::format(
            "torch.OutOfMemoryError: CUDA out of memory during {} on GPU {}: it needs {} with {} "
            "free after the CUDA context ({} short)",
            StageWords(st), gi, FormatBytes(need), FormatBytes(r.free),
            FormatBytes(static_cast<uint64_t>(-left))));
      }
    }
  }
  p.margin_bytes = failing != INT64_MAX ? failing : margin;
  const uint64_t total = r.gpu.total_bytes;
  for (int gi = 0; gi < r.gpus; ++gi) {
    const PerGpu& g = r.g[static_cast<size_t>(gi)];
    GpuPlan x;
    x.total_bytes = total;
    x.budget_bytes = r.free;
    x.cuda_context_bytes = kCudaContext;
    x.weights_bytes = g.weights;
    x.load_peak_bytes = g.stage[static_cast<int>(Stage::kLoad)];
    x.activation_peak_bytes = std::max(SatAdd(g.prefill_act, g.prefill_logits),
                                       SatAdd(g.decode_act, g.decode_logits));
    x.kv_cache_bytes = SatAdd(g.kv_full, g.fused_run);
    for (uint64_t v : g.stage) x.peak_bytes = std::max(x.peak_bytes, v);
    x.device_used_bytes = x.peak_bytes + kCudaContext;
    x.explain.push_back({"weights", g.weights, fmt::format(
        "{} units on this GPU at {} ({}); device_map {}", g.units, DtypeName(r.dtype),
        r.quantizer == Quantizer::kNone ? "no quantizer" : "quantized layers as stored or made",
        core::Printable(r.s.device_map))});
    x.explain.push_back({"kv_cache", g.kv_full, fmt::format(
        "{} cache: {} sequences x {} tokens x {} B/token (all layers)", r.cache, r.seqs,
        r.cache_len > 0 ? r.cache_len : r.L, r.plan.kv_bytes_per_token)});
    if (r.fused) {
      x.explain.push_back({"awq_fused_cache", g.fused_run, fmt::format(
          "AutoAWQ fused attention: K and V [{} x {} x kv heads x hidden/heads] in float16 + "
          "RoPE freqs_cis [{} x head_dim/2] complex64 per layer; {} at load (batch 1)",
          r.seqs, r.s.fuse_max_seq_len, r.s.fuse_max_seq_len, FormatBytes(g.fused_load))});
    }
    if (g.encoder > 0) {
      x.explain.push_back({"encoder", SatAdd(g.encoder, g.image_embeds), fmt::format(
          "{} x {} image(s) of {} tokens ({} max_pixels) through the vision tower ({}): pass {} "
          "+ image embeddings held {}", r.seqs, r.s.images_per_prompt,
          r.image_tokens / std::max<int64_t>(1, r.s.images_per_prompt), r.image_max_pixels,
          r.s.attn_implementation.empty() ? "sdpa" : r.s.attn_implementation,
          FormatBytes(g.encoder), FormatBytes(g.image_embeds))});
    }
    x.explain.push_back({"prefill", SatAdd(g.prefill_act, g.prefill_logits), fmt::format(
        "{} attention over {} x {} prompt tokens, widest layer + logits", r.attn, r.seqs, r.P)});
    x.explain.push_back({"decode", SatAdd(g.decode_act, g.decode_logits), fmt::format(
        "{} x {} logits at {} B + the cache's update transient", r.seqs, r.spec.vocab_size,
        r.act + (r.s.num_beams > 1 ? kBeamBytesPerLogit : r.s.do_sample ? kSampleBytesPerLogit
                                                                         : kGreedyBytesPerLogit))});
    p.gpus.push_back(std::move(x));
  }
  p.resolved = ToEngineSettings(r.s);
  p.resolved.gpu_memory_utilization =
      total > 0 ? static_cast<double>(r.free) / static_cast<double>(total) : 0;
  p.max_model_len = r.L - r.image_tokens;  // --max-length: the text's tokens
  p.kv_cache_tokens = SatMul(static_cast<uint64_t>(r.seqs),
                             static_cast<uint64_t>(r.fused          ? r.s.fuse_max_seq_len
                                                   : r.cache_len > 0 ? r.cache_len
                                                                     : r.L));
  p.kv_needed_bytes = SatMul(static_cast<uint64_t>(r.cache_len > 0 ? r.cache_len : r.L),
                             p.kv_bytes_per_token);
  // Sequences of this length that would fit: the batch scaled by what its variable bytes
  // (cache, activations, logits) leave at the tightest stage.
  if (p.fits) {
    const PerGpu& g0 = r.g[0];
    const uint64_t variable = std::max<uint64_t>(
        1, SatAdd(g0.kv_full, std::max(SatAdd(g0.prefill_act, g0.prefill_logits),
                                       SatAdd(g0.decode_act, g0.decode_logits))));
    p.max_concurrency = static_cast<double>(r.batch) *
                        static_cast<double>(variable + static_cast<uint64_t>(margin)) /
                        static_cast<double>(variable);
  }
  p.uncertainty_bytes = kContextSpread + p.gpus[0].activation_peak_bytes / 10;
  // The stage table, for the tightest GPU.
  size_t t = 0;
  for (size_t gi = 1; gi < r.g.size(); ++gi) {
    if (r.g[gi].stage[static_cast<int>(Stage::kRuntime)] >
        r.g[t].stage[static_cast<int>(Stage::kRuntime)]) {
      t = gi;
    }
  }
  const PerGpu& g = r.g[t];
  const std::string on = r.gpus > 1 ? fmt::format(" (GPU {})", t) : "";
  p.stages.push_back({Stage::kStartup, fmt::format("CUDA context {} on {} GPU(s)",
                                                   FormatBytes(kCudaContext), r.gpus)});
  std::string off;
  if (r.offloaded[0] + r.offloaded[1] > 0) {
    off = fmt::format(", {} cpu, {} disk", FormatBytes(r.offloaded[0]),
                      FormatBytes(r.offloaded[1]));
  }
  if (r.fused) {
    off += fmt::format(", fused AWQ cache {} ({} tokens, batch 1)", FormatBytes(g.fused_load),
                       GroupDigits(static_cast<uint64_t>(r.s.fuse_max_seq_len)));
  }
  p.stages.push_back({Stage::kLoad, fmt::format("weights {}{}{}, load peak {}", FormatBytes(
      g.weights), on, off, FormatBytes(g.stage[static_cast<int>(Stage::kLoad)]))});
  p.stages.push_back({Stage::kKvCache, r.fused && r.cache_len == 0
      ? fmt::format("fused AWQ cache {} at batch {} (transformers' {} cache stays empty)",
                    FormatBytes(g.fused_run), r.seqs, r.cache)
      : r.cache_len > 0
      ? fmt::format("{} cache {} reserved ({} x {} tokens)", r.cache, FormatBytes(g.kv_static),
                    r.seqs, GroupDigits(static_cast<uint64_t>(r.cache_len)))
      : fmt::format("{} cache: grows with the tokens, none reserved", r.cache)});
  p.stages.push_back({Stage::kProfile, fmt::format(
      "prefill {} x {}: activations {}, KV {}, peak {}", r.seqs, GroupDigits(
          static_cast<uint64_t>(r.P)), FormatBytes(g.prefill_act + g.prefill_logits),
      FormatBytes(g.kv_prompt), FormatBytes(g.stage[static_cast<int>(Stage::kProfile)]))});
  p.stages.push_back({Stage::kRuntime, fmt::format(
      "generate to {}: KV {}, logits {}, peak {}", GroupDigits(static_cast<uint64_t>(r.L)),
      FormatBytes(g.kv_full + g.fused_run), FormatBytes(g.decode_logits + g.decode_act),
      FormatBytes(g.stage[static_cast<int>(Stage::kRuntime)]))});
}

Result<TransformersPlan> PlanOnce(const Inventory& inv, const GpuSpec& gpu,
                                  const TransformersSettings& settings) {
  if (!inv.has_spec || inv.spec.layers.empty()) {
    return Invalid("planning needs the model's config.json (none was found)");
  }
  Run r{inv, inv.spec, gpu, settings};
  r.plan.engine = "transformers";
  r.plan.engine_title = "transformers";
  r.plan.gpu = gpu;
  r.plan.fits = true;
  if (Status st = Resolve(r); !st.ok()) return st;
  Startup(r);
  if (Status st = Load(r); !st.ok()) return st;
  Generate(r);
  Verdict(r);
  for (int gi = 0; gi < r.gpus; ++gi) {
    r.plan.placement.reserve(r.w.units.size());
  }
  for (size_t i = 0; i < r.w.units.size(); ++i) {
    r.plan.placement.push_back({r.w.units[i].name, r.w.units[i].bytes, r.where[i]});
  }
  // The command `vramfit check -- ...` reads back, and after a shell comment mark the same run
  // as one line of Python (a shell drops the comment; the command reader stops at it).
  TransformersSettings py = r.s;  // the snippet writes the resolved prompt and new tokens
  py.prompt_tokens = r.P - r.image_tokens;
  py.max_new_tokens = r.N;
  r.plan.command = CommandLine(inv, r.s) + "  # python: " + PythonSnippet(inv, py, r.rules);
  return std::move(r.plan);
}

// The longest length in [lo, hi) that `fits` accepts (monotone); 0 when none.
template <typename F>
int64_t Longest(int64_t lo, int64_t hi, F fits) {
  if (lo >= hi || !fits(lo)) return 0;
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace

Result<TransformersPlan> PlanTransformers(const Inventory& inv, const GpuSpec& gpu,
                                          const TransformersSettings& settings) {
  auto p = PlanOnce(inv, gpu, settings);
  if (!p.ok() || p->fits) return p;
  const Stage st = *p->failure_stage;
  const int64_t tokens = p->max_model_len + p->image_tokens;
  if (settings.do_fuse && settings.fuse_max_seq_len > tokens && st != Stage::kStartup) {
    // The shortest fused cache is the generation's length; the longest that fits is the advice.
    TransformersSettings s = settings;
    p->estimated_fuse_max_seq_len = Longest(tokens, settings.fuse_max_seq_len, [&](int64_t len) {
      s.fuse_max_seq_len = len;
      auto q = PlanOnce(inv, gpu, s);
      return q.ok() && q->fits;
    });
    return p;
  }
  if (st == Stage::kProfile && p->image_tokens > 0 && settings.images_per_prompt > 0) {
    // Smaller images: the largest max_pixels (whole merged patches) whose plan fits.
    const VisionSpec& v = inv.spec.vision;
    const int64_t unit = std::max<int64_t>(1, v.patch_size) *
                         std::max<int64_t>(1, v.spatial_merge_size);
    const int64_t tokens_now = p->image_tokens / settings.images_per_prompt;
    TransformersSettings s = settings;
    const int64_t best = Longest(1, tokens_now, [&](int64_t t) {
      s.max_pixels = t * unit * unit;
      auto q = PlanOnce(inv, gpu, s);
      return q.ok() && q->fits;
    });
    p->estimated_max_pixels = best * unit * unit;
  }
  if (st != Stage::kKvCache && st != Stage::kProfile && st != Stage::kRuntime) return p;
  const bool is_static = settings.max_cache_len > 0 &&
                         Is(settings.cache_implementation,
                            {"static", "offloaded_static", "sliding_window", "hybrid"});
  if (is_static) {
    // The longest static cache that fits the same generation; with no --max-length (nor
    // prompt and new tokens both) the generation is the cache's length and follows it down.
    TransformersSettings s = settings;
    const bool follows = settings.max_model_len <= 0 &&
                         !(settings.prompt_tokens > 0 && settings.max_new_tokens > 0);
    const int64_t need = follows ? std::max<int64_t>(settings.prompt_tokens, 0) +
                                       std::max<int64_t>(settings.max_new_tokens, 1) + 1
                                 : p->max_model_len;
    p->estimated_max_cache_len = Longest(need, settings.max_cache_len, [&](int64_t len) {
      s.max_cache_len = len;
      auto q = PlanOnce(inv, gpu, s);
      return q.ok() && q->fits;
    });
    return p;
  }
  // The longest max_length with the same prompt rule (advice's --max-length).
  TransformersSettings s = settings;
  s.max_model_len = 0;
  const int64_t floor_len = std::max<int64_t>(settings.prompt_tokens, 0) +
                            std::max<int64_t>(settings.max_new_tokens, 1) + 1;
  p->estimated_max_model_len = Longest(floor_len, p->max_model_len, [&](int64_t len) {
    s.max_model_len = len;
    if (settings.prompt_tokens > 0 && settings.max_new_tokens > 0) {
      s.max_new_tokens = len - settings.prompt_tokens;
    }
    auto q = PlanOnce(inv, gpu, s);
    return q.ok() && q->fits;
  });
  return p;
}

EngineSettings ToEngineSettings(const TransformersSettings& s) {
  EngineSettings e = static_cast<const EngineSettings&>(s);
  e.engine_options = std::make_shared<TransformersOptions>(
      static_cast<const TransformersOptions&>(s));
  return e;
}

TransformersSettings ToTransformersSettings(const EngineSettings& e) {
  TransformersSettings s;
  static_cast<EngineSettings&>(s) = e;
  s.engine_options.reset();
  if (auto* o = dynamic_cast<const TransformersOptions*>(e.engine_options.get())) {
    static_cast<TransformersOptions&>(s) = *o;
  }
  return s;
}

}  // namespace vramfit::transformers
