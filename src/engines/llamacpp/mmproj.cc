// The vision projector's header, image tokens and encoder compute buffer (see mmproj.h). Each
// rule names the function of llama.cpp ec98e2002's tools/mtmd/clip.cpp it follows.
#include "engines/llamacpp/mmproj.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/text.h"

namespace vramfit::llamacpp {
namespace {

Status Invalid(std::string m) { return Status::InvalidArgument(std::move(m)); }

// The largest value a dimension key may hold here (a 2^20-pixel side, a 2^20-wide layer):
// real projectors are far below it, and products of these stay inside 64 bits.
constexpr int64_t kMaxDim = int64_t{1} << 20;

Status Dim(const GgufFile& f, const char* key, bool required, int64_t* out) {
  int64_t v = 0;
  if (!f.Int(key, &v)) {
    if (required) return Invalid(fmt::format("mmproj {}: no integer key {}", f.origin, key));
    return Status::Ok();
  }
  if (v < 1 || v > kMaxDim) {
    return Invalid(fmt::format("mmproj {}: {} = {} is out of range (1 to {})", f.origin, key, v,
                               kMaxDim));
  }
  *out = v;
  return Status::Ok();
}

bool HasTensor(const GgufFile& f, std::string_view part) {
  for (const TensorInfo& t : f.tensors) {
    if (t.name.find(part) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

Result<Projector> ReadProjector(const GgufFile& f) {
  if (f.Architecture() != "clip") {
    return Invalid(fmt::format("mmproj {}: general.architecture is \"{}\", not clip (a vision "
                               "projector file)", f.origin, core::Printable(f.Architecture())));
  }
  const GgufValue* has = f.Find("clip.has_vision_encoder");
  if (has != nullptr && has->type == GgufType::kBool && has->u == 0) {
    return Invalid(fmt::format("mmproj {}: no vision encoder (clip.has_vision_encoder is false)",
                               f.origin));
  }
  Projector p;
  // clip_model_loader: the projector type of the vision modality, else the file's.
  p.type = f.String("clip.vision.projector_type");
  if (p.type.empty()) p.type = f.String("clip.projector_type");
  if (p.type.empty()) p.type = "mlp";  // clip.cpp's default for files without the key
  p.weight_bytes = f.data_bytes;
  // load_hparams: the vision keys (KEY_N_EMBD, KEY_N_HEAD, KEY_N_FF, KEY_N_BLOCK,
  // KEY_IMAGE_SIZE, KEY_PATCH_SIZE with the "vision" prefix), all required.
  VRAMFIT_RETURN_IF_ERROR(Dim(f, "clip.vision.embedding_length", true, &p.hidden));
  VRAMFIT_RETURN_IF_ERROR(Dim(f, "clip.vision.attention.head_count", true, &p.heads));
  VRAMFIT_RETURN_IF_ERROR(Dim(f, "clip.vision.feed_forward_length", true, &p.ffn));
  VRAMFIT_RETURN_IF_ERROR(Dim(f, "clip.vision.block_count", true, &p.layers));
  VRAMFIT_RETURN_IF_ERROR(Dim(f, "clip.vision.image_size", true, &p.image_size));
  VRAMFIT_RETURN_IF_ERROR(Dim(f, "clip.vision.patch_size", true, &p.patch_size));
  if (p.patch_size > p.image_size) {
    return Invalid(fmt::format("mmproj {}: patch size {} is larger than the image size {}",
                               f.origin, p.patch_size, p.image_size));
  }
  // The default warm-up image is image_size square; the projector cases below change it.
  p.warmup_size = p.image_size;
  const std::string& t = p.type;
  const int64_t side = p.image_size / p.patch_size;  // patches per side of a fixed-size image
  // set_warmup_n_tokens(n): a square of sqrt(n) tokens per side, each patch x merge pixels.
  auto warmup_tokens = [&](int64_t per_side) { p.warmup_size = per_side * p.patch_size * p.merge; };
  if (t == "qwen2vl_merger" || t == "qwen2.5vl_merger" || t == "qwen3vl_merger" ||
      t == "glm4v") {
    // n_merge 2 unless clip.vision.spatial_merge_size; set_limit_image_tokens(8, 4096): the
    // preprocessor makes at most 4096 tokens; set_warmup_n_tokens(46 x 46) "to avoid OOM".
    p.merge = 2;
    VRAMFIT_RETURN_IF_ERROR(Dim(f, "clip.vision.spatial_merge_size", false, &p.merge));
    p.image_tokens = 4096;
    warmup_tokens(46);
    p.window_mask = t == "qwen2.5vl_merger";
  } else if (t == "gemma3") {
    // n_merge 4 (clip.vision.projector.scale_factor when given); a fixed-size image:
    // (image_size / patch)^2 / merge^2 tokens, 256 for Gemma 3's 896 px and 14 px patches.
    p.merge = 4;
    VRAMFIT_RETURN_IF_ERROR(Dim(f, "clip.vision.projector.scale_factor", false, &p.merge));
    p.image_tokens = side * side / (p.merge * p.merge);
    p.non_causal = true;
  } else if (t == "idefics3" || t == "internvl" || t == "llama4") {
    VRAMFIT_RETURN_IF_ERROR(Dim(f, "clip.vision.projector.scale_factor", false, &p.merge));
    p.image_tokens = side * side / (p.merge * p.merge);
    p.tiled = true;
  } else if (t == "pixtral" || t == "lightonocr" || t == "kimivl") {
    // set_limit_image_tokens(8, 1024), set_warmup_n_tokens(256); pixtral adds one
    // [IMG_BREAK] per row but the last (32 rows at 1024 tokens).
    const char* key = t == "kimivl" ? "clip.vision.projector.scale_factor"
                                    : "clip.vision.spatial_merge_size";
    VRAMFIT_RETURN_IF_ERROR(Dim(f, key, false, &p.merge));
    p.image_tokens = 1024;
    if (t != "kimivl" && HasTensor(f, "img_break")) p.image_tokens += 31;
    warmup_tokens(16);
  } else if (t == "lfm2") {
    // set_limit_image_tokens(64, 1024): the warm-up image is sqrt(image_max_pixels) wide.
    VRAMFIT_RETURN_IF_ERROR(Dim(f, "clip.vision.projector.scale_factor", false, &p.merge));
    p.image_tokens = 1024;
    warmup_tokens(32);
  } else if (t == "mlp" || t == "mlp_norm" || t == "janus_pro") {
    p.image_tokens = side * side;
    p.tiled = f.Find("clip.vision.image_grid_pinpoints") != nullptr;
  } else if (t == "ldp" || t == "ldpv2" || t == "adapter" || t == "cogvlm") {
    p.image_tokens = t == "cogvlm" ? side * side + 2
                                   : side * side / 4 + (HasTensor(f, "adapter.boi") ? 2 : 0);
  } else if (t == "resampler") {
    // MiniCPM-V: a fixed query count per slice (clip.minicpmv_query_num, else 64 for
    // versions 3 to 6 and 96 for version 2).
    int64_t version = 2;
    f.Int("clip.minicpmv_version", &version);
    p.image_tokens = version >= 3 ? 64 : 96;
    VRAMFIT_RETURN_IF_ERROR(Dim(f, "clip.minicpmv_query_num", false, &p.image_tokens));
    p.tiled = true;
  } else {
    // A projector type this plan does not know: the patches of one image, merged as its
    // scale factor says when it has one.
    VRAMFIT_RETURN_IF_ERROR(Dim(f, "clip.vision.projector.scale_factor", false, &p.merge));
    p.image_tokens = side * side / (p.merge * p.merge);
    p.known = false;
  }
  const int64_t per_side = p.warmup_size / p.patch_size;
  p.warmup_patches = per_side * per_side;
  p.image_tokens = std::max<int64_t>(p.image_tokens, 1);
  return p;
}

uint64_t EncoderComputeBytes(const Projector& p, bool flash) {
  const double t = static_cast<double>(p.warmup_patches);
  const double d = static_cast<double>(p.hidden);
  const double f = static_cast<double>(p.ffn);
  const double h = static_cast<double>(p.heads);
  const double rows = 3 * d * t * 4;
  const double attn = rows + (flash ? 0.0 : h * t * t * 4);
  const double ffn = 2 * f * t * 4;
  double total = rows + std::max(attn, ffn);
  if (p.window_mask) total += t * t * (flash ? 6 : 4);
  return static_cast<uint64_t>(std::min(total, 4.0e18));
}

}  // namespace vramfit::llamacpp
