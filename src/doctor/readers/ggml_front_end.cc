// One set of fixes for the programs that run llama.cpp in their own process
// (readers/ggml_front_end.h).
#include "doctor/readers/ggml_front_end.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/units.h"

namespace vramfit::doctor {
namespace {

// Half the log's context, rounded down to a multiple of 512 (KoboldCpp's sizes and llama.cpp's
// padding both are): the vocabulary's own spelling, or its "lower" where the log gives none.
std::string HalfContext(const GgmlVocabulary& v, const Facts& f) {
  const auto half = HalfContext(f, 512);
  if (!half) return v.lower_context;
  return fmt::format(fmt::runtime(v.context), *half, *f.get(Num::kMaxModelLen));
}

}  // namespace

std::optional<double> HalfContext(const Facts& f, double unit) {
  const auto n = f.get(Num::kMaxModelLen);
  if (!n || *n < 1024) return std::nullopt;
  return std::max(unit, std::floor(*n / 2 / unit) * unit);
}

std::optional<double> ContextThatFits(const Facts& f) {
  const auto n = f.get(Num::kMaxModelLen), kv = f.get(Num::kRequestedBytes),
             weights = f.get(Num::kWeightsBytes);
  const Facts::DeviceMemory* gpu = LoneGpu(f);
  if (!n || *n < 4096 || !kv || *kv <= 0 || !weights || !gpu ||
      !f.has(EventKind::kGgmlKvFail)) {
    return std::nullopt;
  }
  const double per_token = *kv / *n;
  const double room = gpu->free - *weights - core::kGiBf;
  if (room <= 0) return std::nullopt;
  const double tokens = room / (1.25 * per_token);
  double context = 2048;
  while (context * 2 <= tokens) context *= 2;
  if (context > tokens || context >= *n) return std::nullopt;
  return context;
}

std::string ContextThatFitsWhy(const Facts& f, double context) {
  const double per_token = *f.get(Num::kRequestedBytes) / *f.get(Num::kMaxModelLen);
  return fmt::format(
      "{:.2f} GiB of KV cache beside the {:.2f} GiB of weights, in the {:.2f} GiB the log shows "
      "free on the GPU, with room left for the compute buffers",
      context * per_token / core::kGiBf, *f.get(Num::kWeightsBytes) / core::kGiBf,
      LoneGpu(f)->free / core::kGiBf);
}

bool GgmlFrontEndFixes(const GgmlVocabulary& v, Cause cause, const Facts& f, Diagnosis* d) {
  switch (cause) {
    case Cause::kWeightsTooLarge:
      AddFix(d, v.fewer_layers, "the layers left on the CPU free GPU memory for the rest");
      AddFix(d, "a smaller quantization of the model", "smaller layers, more of them on the GPU");
      return true;
    case Cause::kKvTooLongContext:
    case Cause::kKvNoMemory:
    case Cause::kKvTooManySequences:
      if (const auto fits = ContextThatFits(f)) {
        AddFix(d,
               fmt::format(fmt::runtime(v.context), *fits, *f.get(Num::kMaxModelLen)),
               ContextThatFitsWhy(f, *fits));
      } else {
        AddFix(d, HalfContext(v, f), "the KV cache grows linearly with the context");
      }
      AddFix(d, v.quantized_kv, v.quantized_kv_why);
      AddFix(d, v.kv_off_gpu,
             "keeps the KV cache in host memory (slower), leaving the GPU to the layers");
      return true;
    case Cause::kComputeBuffer:
      AddFix(d, v.smaller_batch,
             "the compute buffer is sized for the batch llama.cpp processes at once (512 by "
             "default)");
      AddFix(d, v.flash_attention, "a smaller attention compute buffer");
      AddFix(d, HalfContext(v, f), "the compute buffer grows with the context too");
      return true;
    case Cause::kFragmentation:
      return false;
    case Cause::kOtherProcess:
      AddOthersHeldFixes(d, "close the other programs on the GPU (nvidia-smi lists them), then "
                            "start again",
                         v.fewer_layers, "fits the layers to the memory the others leave");
      return true;
    default:
      AddFix(d, v.fewer_layers, "the layers left on the CPU free GPU memory for the rest");
      AddFix(d, HalfContext(v, f), "a smaller KV cache and compute buffer");
      return true;
  }
}

std::string GgmlFrontEndWords(const GgmlVocabulary& v, Words rule) {
  switch (rule) {
    case Words::kWeightBuffer:
      return v.weights_words;
    case Words::kKvBuffer:
      return v.kv_words;
    default:
      return "";
  }
}

}  // namespace vramfit::doctor
