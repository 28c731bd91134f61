// The tokens an image brings into a language model's prompt, engine-neutral: the Qwen-VL image
// processors' resize rule and their default largest image. Every engine that feeds images
// through a Qwen-VL vision tower sizes its prompt and its encoder pass from these.
//
// Source: transformers models/qwen2_vl/image_processing_qwen2_vl.py smart_resize (4.57; the
// Qwen2.5-VL and Qwen3-VL processors reuse it): height and width are rounded to multiples of
// patch_size x spatial_merge_size (28 for Qwen2/2.5-VL, 32 for Qwen3-VL) with height x width at
// most max_pixels; the tower sees (h / patch) x (w / patch) patches, and the language model one
// token per spatial_merge_size^2 patches. Default max_pixels: 12,845,056 (3584 x 3584,
// Qwen2-VL and Qwen2.5-VL processors) and 16,777,216 (size.longest_edge of Qwen3-VL's
// preprocessor_config.json); a checkpoint's own preprocessor_config.json wins
// (VisionSpec::max_pixels).
#ifndef VRAMFIT_MODEL_VISION_TOKENS_H_
#define VRAMFIT_MODEL_VISION_TOKENS_H_

#include <algorithm>
#include <cstdint>

#include "vramfit/model.h"

namespace vramfit {

inline constexpr int64_t kQwen2VlDefaultMaxPixels = 12845056;
inline constexpr int64_t kQwen3VlDefaultMaxPixels = 16777216;

// Whether the image-token rule above describes the tower (the Qwen-VL families).
inline bool HasQwenVlImageRule(const VisionSpec& v) {
  return v.kind == VisionKind::kQwen2Vl || v.kind == VisionKind::kQwen25Vl ||
         v.kind == VisionKind::kQwen3Vl;
}

// The largest image in pixels: `given` (a processor argument) when positive, else the
// checkpoint's preprocessor_config.json, else the processor's default.
inline int64_t ImageMaxPixels(const VisionSpec& v, int64_t given) {
  if (given > 0) return given;
  if (v.max_pixels > 0) return v.max_pixels;
  return v.kind == VisionKind::kQwen3Vl ? kQwen3VlDefaultMaxPixels : kQwen2VlDefaultMaxPixels;
}

// Language-model tokens of one image at `max_pixels`: max_pixels / (patch x merge)^2, at least 1.
inline int64_t ImageTokens(const VisionSpec& v, int64_t max_pixels) {
  const int64_t unit = std::max<int64_t>(1, v.patch_size) *
                       std::max<int64_t>(1, v.spatial_merge_size);
  return std::max<int64_t>(1, max_pixels / std::max<int64_t>(1, unit * unit));
}

// Patches the vision tower runs for `tokens` language-model tokens (merge^2 each).
inline int64_t ImagePatches(const VisionSpec& v, int64_t tokens) {
  const int64_t m = std::max<int64_t>(1, v.spatial_merge_size);
  return tokens * m * m;
}

}  // namespace vramfit

#endif  // VRAMFIT_MODEL_VISION_TOKENS_H_
