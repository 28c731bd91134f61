// KoboldCpp's reader (readers/reader.h): KoboldCpp runs llama.cpp inside one Python program
// (koboldcpp.py and its packaged koboldcpp.exe), so its buffer failures are llama.cpp's and are
// read by that reader; this one says they came from KoboldCpp, and gives the fixes in its own
// launch options (koboldcpp.py argparse, 1.6x-1.10x): --gpulayers (-1 lets it estimate),
// --contextsize, --blasbatchsize (the batch llama.cpp's compute buffer is sized for, default
// 512), --flashattention with --quantkv 1|2 (a q8 or q4 KV cache; it needs flash attention),
// --usecublas lowvram (the KV cache and scratch buffers kept off the GPU), --tensor_split.
#include <string>

#include "doctor/readers/ggml_front_end.h"
#include "doctor/readers/reader.h"

namespace vramfit::doctor {
namespace {

constexpr char kEngine[] = "koboldcpp";

// KoboldCpp's own lines: its banner ("Welcome to KoboldCpp - Version 1.79.1", koboldcpp.py
// main), its loader's "[Threads: 7, BlasThreads: 7, SmartContext: False, ContextShift: True]",
// a traceback through koboldcpp.py, or the launch command (koboldcpp.exe, koboldcpp.py,
// koboldcpp_cu12.exe, ...). KoboldAI (the older transformers program) is not KoboldCpp.
bool KoboldCppLine(const LineView& s) {
  if (!Has(s, "oboldcpp") && !Has(s, "oboldCpp") && !Has(s, "BlasThreads:")) return false;
  return Has(s, "KoboldCpp") || Has(s, "koboldcpp") || Has(s, "BlasThreads:");
}

void Match(const Line& line) {
  const LineView s = line.view();
  if (KoboldCppLine(s)) line.Emit(EventKind::kConfig, kEngine);
  // A request's prompt and generation (gpttype_adapter.cpp gpttype_generate: "Processing
  // Prompt [BLAS] (1536 / 13804 tokens)", "Processing Prompt (12 / 12 tokens)", "Generating
  // (12 / 300 tokens)", 1.4x+): the model is serving, as llama-server's slot lines say (the
  // llama.cpp reader's request milestone).
  if ((Has(s, "Processing Prompt") || Has(s, "Generating (")) && Has(s, " tokens)")) {
    line.Emit(EventKind::kRequest, "llama.cpp");
  }
  // Its start-up check of the card (koboldcpp.py, 1.6x+: "Note: KoboldCpp has detected that a
  // significant amount of GPU VRAM (5014.0 MB) is currently used by another application."):
  // other programs held that much of the card before the model was placed.
  // (Also reflowed over two lines.)
  if (const LineView w = Whole(line, "is currently used by another application"); !w.empty()) {
    auto& e = line.Emit(EventKind::kOtherInstanceWords, kEngine);
    if (const auto mb = NumberAfter(w, "GPU VRAM (")) Set(e, Num::kUsedBytes, *mb * 1024 * 1024);
  }
}

constexpr GgmlVocabulary kVocabulary = {
    .fewer_layers = "--gpulayers lower (or -1: KoboldCpp estimates the layers that fit)",
    .context = "--contextsize {0:.0f} (now {1:.0f})",
    .lower_context = "--contextsize lower",
    .quantized_kv = "--flashattention --quantkv 1",
    .quantized_kv_why = "a q8 KV cache (--quantkv needs flash attention): about half the bytes "
                        "per token",
    .kv_off_gpu = "--usecublas lowvram",
    .smaller_batch = "--blasbatchsize 256",
    .flash_attention = "--flashattention",
    .weights_words = "the layers KoboldCpp offloaded to the GPU (--gpulayers) do not fit in its "
                     "memory",
    .kv_words = "the KV cache for the context (--contextsize) did not fit after the weights",
};

std::string Say(Words rule, const Facts& f) {
  (void)f;
  return GgmlFrontEndWords(kVocabulary, rule);
}

bool Fixes(Cause cause, const Facts& f, Diagnosis* d) {
  return GgmlFrontEndFixes(kVocabulary, cause, f, d);
}

}  // namespace

const Reader& KoboldCppReader() {
  static const Reader kReader = {
      .engine = kEngine,
      .match = Match,
      .fixes = Fixes,
      .words = Say,
      .wraps = "llama.cpp",
  };
  return kReader;
}

}  // namespace vramfit::doctor
