// llama-cpp-python's reader (readers/reader.h): the Python bindings run llama.cpp inside the
// program, so llama.cpp's buffer failures are read by that reader; this one says they came from
// a Python program on the bindings, and gives the fixes as the arguments of its Llama class
// (llama_cpp/llama.py Llama.__init__, 0.2.x-0.3.x): n_gpu_layers (-1: every layer), n_ctx,
// n_batch and n_ubatch, flash_attn, type_k / type_v (ggml type numbers: 8 is q8_0), offload_kqv
// (False keeps the KV cache in host memory). LangChain's LlamaCpp passes the same names.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "doctor/readers/ggml_front_end.h"
#include "doctor/readers/reader.h"

namespace vramfit::doctor {
namespace {

constexpr char kEngine[] = "llama-cpp-python";

// The bindings' own lines: a traceback through the package (site-packages/llama_cpp/llama.py,
// _internals.py), its import or constructor in the program's code, or its errors
// (_internals.py LlamaModel / LlamaContext: "Failed to load model from file: PATH", "Failed to
// create llama_context"; llama.py: "llama_decode returned N"), or a path in pip's build
// directory of the package ("/tmp/pip-install-x/llama-cpp-python_<hash>/vendor/llama.cpp/
// ggml-cuda.cu", where a source build's CUDA check names its file).
bool BindingsLine(const LineView& s) {
  if (!Has(s, "llama_cpp") && !Has(s, "Llama(") && !Has(s, "LlamaCpp(") &&
      !Has(s, "llama-cpp-python_") &&
      !Has(s, "create llama_context") && !Has(s, "load model from file") &&
      !Has(s, "llama_decode ret")) {
    return false;  // most lines stop here
  }
  return Has(s, "llama_cpp/") || Has(s, "llama_cpp_cuda/") || Has(s, "llama_cpp\\") ||
         Has(s, "from llama_cpp import") ||
         Has(s, "import llama_cpp") || Has(s, "Llama(model_path") || Has(s, "LlamaCpp(") ||
         Has(s, "Failed to create llama_context") || Has(s, "Failed to load model from file") ||
         Has(s, "llama_decode returned") || Has(s, "llama-cpp-python_");
}

void Match(const Line& line) {
  if (BindingsLine(line.view())) line.Emit(EventKind::kConfig, kEngine);
}

constexpr GgmlVocabulary kVocabulary = {
    .fewer_layers = "Llama(..., n_gpu_layers=...) lower than now (-1 puts every layer on the GPU)",
    .context = "Llama(..., n_ctx={0:.0f}) (now {1:.0f})",
    .lower_context = "Llama(..., n_ctx=...) lower",
    .quantized_kv = "Llama(..., flash_attn=True, type_k=8, type_v=8)",
    .quantized_kv_why = "a q8_0 KV cache (type 8; it needs flash attention): about half the "
                        "bytes per token",
    .kv_off_gpu = "Llama(..., offload_kqv=False)",
    .smaller_batch = "Llama(..., n_batch=256, n_ubatch=256)",
    .flash_attention = "Llama(..., flash_attn=True)",
    .weights_words = "the layers Llama(n_gpu_layers=...) put on the GPU do not fit in its memory",
    .kv_words = "the KV cache for the context (Llama(n_ctx=...)) did not fit after the weights",
};

std::string Say(Words rule, const Facts& f) {
  (void)f;
  return GgmlFrontEndWords(kVocabulary, rule);
}

bool Fixes(Cause cause, const Facts& f, Diagnosis* d) {
  const bool kv = cause == Cause::kKvTooLongContext || cause == Cause::kKvNoMemory ||
                  cause == Cause::kKvTooManySequences;
  if (kv && f.has(EventKind::kContextExceeded)) {
    // The context full (llama_decode returned 1), not an allocation: a larger one.
    const auto n = f.get(Num::kMaxModelLen);
    AddFix(d,
           n ? fmt::format("Llama(..., n_ctx={:.0f})", std::min(*n * 2, 1048576.0))
             : std::string("Llama(..., n_ctx=...) larger"),
           "the prompt and the tokens to generate must fit the context together");
    AddFix(d, "max_tokens lower, or a shorter prompt", "fewer tokens in the context");
    return true;
  }
  return GgmlFrontEndFixes(kVocabulary, cause, f, d);
}

}  // namespace

const Reader& LlamaCppPythonReader() {
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
