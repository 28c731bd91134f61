// The programs that run llama.cpp in their own process and name its settings their own way
// (KoboldCpp's launch options, llama-cpp-python's Llama arguments): one set of fixes and words
// for llama.cpp's failures, in each program's vocabulary (readers/koboldcpp.cc,
// readers/llama_cpp_python.cc).
#ifndef VRAMFIT_DOCTOR_READERS_GGML_FRONT_END_H_
#define VRAMFIT_DOCTOR_READERS_GGML_FRONT_END_H_

#include <optional>
#include <string>

#include "doctor/readers/reader.h"

namespace vramfit::doctor {

// How one program spells llama.cpp's settings.
struct GgmlVocabulary {
  const char* fewer_layers;     // fewer layers on the GPU ("--gpulayers lower ...")
  const char* context;          // a context length, "{0}" the new one and "{1}" the log's
  const char* lower_context;    // a lower context where the log gives none
  const char* quantized_kv;     // a q8_0 KV cache with flash attention
  const char* quantized_kv_why;
  const char* kv_off_gpu;       // the KV cache in host memory
  const char* smaller_batch;    // a smaller batch for the compute buffer
  const char* flash_attention;  // flash attention on
  const char* weights_words;    // the weights' buffer did not fit (Words::kWeightBuffer)
  const char* kv_words;         // the KV cache did not fit (Words::kKvBuffer)
};

// Half the log's context (n_ctx, Num::kMaxModelLen) rounded down to a multiple of `unit` (at
// least `unit`); none where the log gives no context of at least 1024 tokens.
std::optional<double> HalfContext(const Facts& f, double unit);

// The largest power-of-two context (2048 at least, below the log's n_ctx) whose KV cache fits
// one GPU's free memory beside its weights, from what the log printed: the KV buffer that failed
// for n_ctx tokens (its bytes per token), the device's free memory when the model was placed,
// and the weights' buffer on it; 1 GiB is kept for the compute buffers and the KV is counted a
// quarter larger (the compute buffer grows with the context too). None where the log lacks one
// of these, or shows several GPUs.
std::optional<double> ContextThatFits(const Facts& f);
// Its effect line: the KV cache at that context beside the weights in the free memory.
std::string ContextThatFitsWhy(const Facts& f, double context);

// The fixes for `cause` in `v`'s terms (the context halved from the log's n_ctx, rounded down
// to a multiple of 512); false for a cause these programs cannot change (fragmentation).
bool GgmlFrontEndFixes(const GgmlVocabulary& v, Cause cause, const Facts& f, Diagnosis* d);

// The summary for `rule` in `v`'s terms; "" for the rules llama.cpp's own words describe.
std::string GgmlFrontEndWords(const GgmlVocabulary& v, Words rule);

}  // namespace vramfit::doctor

#endif  // VRAMFIT_DOCTOR_READERS_GGML_FRONT_END_H_
