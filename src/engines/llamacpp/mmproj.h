// The vision projector (mmproj) llama.cpp's multimodal library (tools/mtmd) loads beside a
// model with --mmproj: what its GGUF header says (the clip.vision.* keys), the tokens one image
// becomes, and the encoder's compute buffer that clip's warm-up reserves. Rules of llama.cpp
// ec98e2002, tools/mtmd/clip.cpp and mtmd.cpp; docs/engines/llamacpp.md lists them.
#ifndef VRAMFIT_ENGINES_LLAMACPP_MMPROJ_H_
#define VRAMFIT_ENGINES_LLAMACPP_MMPROJ_H_

#include <cstdint>
#include <string>

#include "vramfit/gguf.h"
#include "vramfit/status.h"

namespace vramfit::llamacpp {

struct Projector {
  std::string type;           // clip.projector_type: "gemma3", "qwen2.5vl_merger", ...
  uint64_t weight_bytes = 0;  // the file's tensor data ("load_hparams: model size")
  int64_t image_size = 0, patch_size = 0;
  int64_t hidden = 0, heads = 0, layers = 0, ffn = 0;
  int64_t merge = 1;          // patches merged per side into one token (n_merge)
  // clip's warm-up image (load_hparams: warmup_image_size) and the patches it makes, the
  // tokens the encoder attends over.
  int64_t warmup_size = 0;
  int64_t warmup_patches = 0;
  // Tokens the largest image becomes in the text model (clip_n_output_tokens of the largest
  // image the preprocessor makes); for tiled projectors, per tile.
  int64_t image_tokens = 0;
  bool tiled = false;         // llava-uhd / idefics3 / llama4 / minicpmv: several tiles an image
  bool window_mask = false;   // Qwen2.5-VL: a [patches, patches] f32 window mask is an input
  // The image's tokens are decoded with non-causal attention (mtmd.cpp
  // mtmd_decode_use_non_causal: Gemma 3), so all of them must fit one ubatch.
  bool non_causal = false;
  bool known = true;          // a projector type whose token rule is modelled
};

// Reads a projector's header. kInvalidArgument when the file is not a vision projector (no
// clip architecture, no vision encoder) or a needed key is missing or out of range.
Result<Projector> ReadProjector(const GgufFile& f);

// The encoder's compute buffer for its warm-up image, an estimate of the graph allocator's
// peak over one encoder layer (T patches, d hidden, f feed-forward, h heads, f32):
//   3 rows [d, T] live across the layer (residual, normed input, output), plus the wider of
//   attention (Q, K, V rows; without flash attention the scores [T, T, h]) and the FFN (up
//   and its activation [f, T]); Qwen2.5-VL adds its [T, T] f32 window mask (and its f16 copy
//   under flash attention).
uint64_t EncoderComputeBytes(const Projector& p, bool flash);

}  // namespace vramfit::llamacpp

#endif  // VRAMFIT_ENGINES_LLAMACPP_MMPROJ_H_
