// llama.cpp's log reader (readers/reader.h): its lines as ggml-backend and llama-context print
// them (failed buffer allocations for the weights, the KV cache and the compute graph; n_ctx;
// buffer sizes; image encoding), the phase they mark, llama.cpp's words for its failures, and
// its flags as fixes.
#include <fmt/format.h>

#include <algorithm>

#include "doctor/readers/reader.h"
#include "vramfit/advice.h"

namespace vramfit::doctor {
namespace {

constexpr char kEngine[] = "llama.cpp";

void Match(const Line& line) {
  const std::string_view s = line.text;
  if (Has(s, "buffer_type_alloc_buffer:") && Has(s, "failed")) {
    auto& e = line.Emit(EventKind::kGgmlAllocFail, kEngine);
    Set(e, Num::kRequestedBytes, BytesAfter(s, "allocating"));
    if (!e.values.count(Num::kRequestedBytes)) {
      Set(e, Num::kRequestedBytes, BytesAfter(s, "buffer of size"));
    }
    e.values[Num::kHost] = Has(s, "cpu_buffer") ? 1 : 0;
  }
  if (Has(s, "alloc_tensor_range: failed") ||
      (Has(s, "llama_model_load") && Has(s, "unable to allocate"))) {
    line.Emit(EventKind::kGgmlLoadFail, kEngine);
  }
  if (Has(s, "failed to allocate buffer for kv cache") || Has(s, "llama_kv_cache_init() failed") ||
      Has(s, "failed to initialize the context: failed to allocate buffer for kv")) {
    line.Emit(EventKind::kGgmlKvFail, kEngine);
  }
  if (Has(s, "failed to allocate compute") || Has(s, "compute buffer allocation failed")) {
    auto& e = line.Emit(EventKind::kGgmlComputeFail, kEngine);
    e.values[Num::kDuringDecode] =
        Has(s, "kv_cache_update") || Has(s, "llama_decode") || Has(s, "decode:") ? 1 : 0;
  }
  if (Has(s, "gallocr_reserve") && Has(s, "failed")) {
    auto& e = line.Emit(EventKind::kGgmlReserveFail, kEngine);
    Set(e, Num::kRequestedBytes, BytesAfter(s, "buffer of size"));
  }
  if (Has(s, "n_ctx") && (Has(s, "n_ctx      =") || Has(s, "n_ctx =") || Has(s, "n_ctx_slot ="))) {
    auto& e = line.Emit(EventKind::kGgmlCtx, kEngine);
    Set(e, Num::kMaxModelLen,
        Has(s, "n_ctx_slot =") ? NumberAfter(s, "n_ctx_slot =") : NumberAfter(s, "="));
  }
  MatchOneValue(
      line, kEngine,
      {{"KV buffer size =", EventKind::kGgmlKvBuffer, Num::kKvCacheBytes, true},
       {"model buffer size =", EventKind::kGgmlModelBuffer, Num::kWeightsBytes, true},
       {"compute buffer size =", EventKind::kGgmlComputeBuffer, Num::kComputeBytes, true}});
  if (Has(s, "llama_new_context_with_model") || Has(s, "llama_init_from_model") ||
      Has(s, "sched_reserve") || Has(s, "graph_reserve")) {
    line.Emit(EventKind::kGgmlContextInit, kEngine);
  }
  if (Has(s, "processing image") || Has(s, "encoding image") || Has(s, "clip_model_load") ||
      Has(s, "mtmd")) {
    line.Emit(EventKind::kImage, kEngine);
  }
}

std::string Say(Words rule, const Facts&) {
  switch (rule) {
    case Words::kKvBuffer:
      return "llama.cpp could not allocate the KV cache for the context (-c / n_ctx)";
    case Words::kImageComputeBuffer:
      return "encoding an image (mtmd/clip) needed a compute buffer that does not fit";
    case Words::kDecodeComputeBuffer:
      return "llama.cpp could not grow a compute buffer while decoding";
    case Words::kContextComputeBuffer:
      return "llama.cpp could not reserve its compute buffers when creating the context (the "
             "worst-case graph for n_batch/n_ubatch)";
    case Words::kImageBuffer:
      return "encoding an image (mtmd/clip) needed a buffer that does not fit";
    case Words::kWeightBuffer:
      return "llama.cpp could not allocate the model's weight buffer on the GPU: the layers "
             "offloaded to it (-ngl) do not fit";
    default:
      return "";
  }
}

bool Fixes(Cause cause, const Facts& f, Diagnosis* d) {
  switch (cause) {
    case Cause::kKvTooLongContext: {
      const auto len = f.get(Num::kMaxModelLen);
      AddFix(
          d,
          len ? fmt::format("-c {}", std::max<int64_t>(
                                         4096, TidyContextLength(static_cast<int64_t>(*len / 4))))
              : "-c 32768",
          "a smaller context: the KV cache grows linearly with n_ctx (per slot with -np)");
      AddFix(d, "-ctk q8_0 -ctv q8_0 (with -fa)",
             "a quantized KV cache: about half the bytes per token");
      return true;
    }
    case Cause::kWeightsTooLarge:
      AddFix(d, "--fit on (or -ngl lower / --tensor-split)",
             "keeps the layers that do not fit in host memory");
      return true;
    case Cause::kComputeBuffer:
      AddFix(d, "-ub 256 (a smaller micro-batch) and -b 512",
             "the compute buffer grows with n_ubatch");
      AddFix(d, "-c lower or --no-kv-offload", "leaves more device memory for compute buffers");
      return true;
    default:
      return false;
  }
}

}  // namespace

const Reader& LlamaCppReader() {
  static const Reader kReader = {
      .engine = kEngine,
      .match = Match,
      .milestones = {{EventKind::kGgmlModelBuffer, Stage::kKvCache}},
      .fixes = Fixes,
      .words = Say,
  };
  return kReader;
}

}  // namespace vramfit::doctor
