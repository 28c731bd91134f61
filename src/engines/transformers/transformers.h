// Hugging Face transformers, stage by stage: what `from_pretrained(...)` followed by
// `generate(...)` does with GPU memory on each GPU of the device map, which stage fails first,
// and by how much.
//
// Stages (docs/engines/transformers.md has each rule with its upstream file and release):
//   startup   the CUDA context on every GPU the device map uses
//   load      weights per GPU as accelerate's infer_auto_device_map places them (dtype and
//             quantizer sizes), plus the quantize-on-load transient
//   kv_cache  a StaticCache reserved up front (max_cache_len x batch); other caches grow later
//   profile   the prefill: the whole prompt through the model at once (per-layer activations,
//             eager attention's score matrix, the prompt's KV, the prefill logits)
//   runtime   generate at the last token: the full KV, the decode step's logits in fp32 and the
//             logits processors, the cache's own transients, offloaded layers streamed in
//
// This is the room's own API (its tests use it); everything above the engines reaches it
// through the engine table (engine.cc here).
#ifndef VRAMFIT_ENGINES_TRANSFORMERS_TRANSFORMERS_H_
#define VRAMFIT_ENGINES_TRANSFORMERS_TRANSFORMERS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "vramfit/gpu.h"
#include "vramfit/inventory.h"
#include "vramfit/plan.h"
#include "vramfit/status.h"

namespace vramfit::transformers {

// The from_pretrained and generate arguments vramfit models, beyond the engine-neutral
// settings (EngineSettings::max_model_len is generate's max_length, the tokens per sequence;
// max_num_seqs is the batch size; pipeline_parallel_size is the GPUs device_map spreads over;
// quantization "fbgemm_fp8" is FbgemmFp8Config() on a 16-bit checkpoint).
struct TransformersOptions : EngineOptions {
  std::string device_map = "auto";       // auto | balanced | balanced_low_0 | sequential |
                                         // cuda | cuda:N | N | a JSON {module: device} map
  std::string max_memory;                // as given: "0=6GiB,cpu=30GiB" or a JSON object
  std::string dtype;                     // "" (not passed) | auto | bfloat16 | float16 | float32
  std::string attn_implementation;       // "" (the model's default: sdpa) | eager | sdpa |
                                         // flash_attention_2 | flash_attention_3
  std::string cache_implementation;      // "" (dynamic) | dynamic | static | offloaded |
                                         // offloaded_static | quantized | sliding_window | hybrid
  int64_t max_cache_len = 0;             // StaticCache(max_cache_len=...); 0: max_length
  int64_t max_new_tokens = 0;            // 0: vramfit's default (kDefaultNewTokens)
  int64_t prompt_tokens = 0;             // 0: max_length - max_new_tokens
  int64_t num_beams = 1;
  int64_t num_return_sequences = 1;
  bool do_sample = true;                 // the logits processors' cost (most chat models' config)
  bool load_in_4bit = false;             // BitsAndBytesConfig(load_in_4bit=True)
  bool load_in_8bit = false;
  int64_t cache_nbits = 4;               // QuantizedCache nbits (quanto: 2 or 4)
  int64_t residual_length = 128;         // QuantizedCache residual_length
  bool do_fuse = false;                  // AwqConfig(do_fuse=True): AutoAWQ's fused modules
  int64_t fuse_max_seq_len = 0;          // AwqConfig(fuse_max_seq_len=N): their cache length
  int64_t images_per_prompt = 0;         // images in each prompt (Qwen-VL processors)
  int64_t max_pixels = 0;                // the processor's max_pixels (0: preprocessor_config.json
                                         // or the processor's default)
};

// The settings as one struct: the neutral part and transformers' own.
struct TransformersSettings : EngineSettings, TransformersOptions {};

// The neutral form (transformers' part carried as engine_options) and back.
EngineSettings ToEngineSettings(const TransformersSettings& s);
TransformersSettings ToTransformersSettings(const EngineSettings& s);

// Tokens generated when --max-new-tokens is not given (generate's own default, max_length 20,
// is no use for planning).
inline constexpr int64_t kDefaultNewTokens = 256;

// Where one unit of the model (a decoder layer, the embeddings, lm_head, a vision block) goes.
struct Placement {
  std::string module;     // "model.layers.3", "lm_head"
  uint64_t bytes = 0;     // on the device, after dtype and quantizer
  int device = 0;         // GPU index, or kCpu / kDisk
};
inline constexpr int kCpu = -1;
inline constexpr int kDisk = -2;

// A transformers plan: the neutral plan and where every unit went.
struct TransformersPlan : Plan {
  std::vector<Placement> placement;
  uint64_t kv_bytes_per_token = 0;  // one sequence, all layers, at the cache's element size
  int64_t estimated_max_cache_len = 0;  // static cache: the longest that fits (0: n/a or fits)
  int64_t estimated_fuse_max_seq_len = 0;  // fused AWQ cache: the longest that fits (0: n/a)
  int64_t image_tokens = 0;  // per sequence: images x tokens per image, in the prompt
  int64_t estimated_max_pixels = 0;  // images: the largest max_pixels that fits (0: n/a)
};

// Plans `inv` on `gpu` (each of the pipeline_parallel_size GPUs alike) with `settings`. Errors
// are for impossible settings (kInvalidArgument with transformers' message where it has one);
// a run that would fail is a plan with fits == false.
Result<TransformersPlan> PlanTransformers(const Inventory& inv, const GpuSpec& gpu,
                                          const TransformersSettings& settings);

// "4.57.1" -> 45701, "5.0" -> 50000; kInvalidArgument for releases before 4.40 or text that is
// not a version.
Result<int> ParseRelease(const std::string& text);

}  // namespace vramfit::transformers

#endif  // VRAMFIT_ENGINES_TRANSFORMERS_TRANSFORMERS_H_
