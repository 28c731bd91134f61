// LM Studio's log reader (readers/reader.h): the estimate it makes before loading a model
// (estimateModelUsage: the model's and the context's VRAM, and whether it can load), and fixes
// in LM Studio's vocabulary: the model's load settings (Context Length, GPU Offload, Flash
// Attention, K/V Cache Quantization Type) and `lms load` flags. LM Studio runs llama.cpp: the
// buffer failures are read by the llama.cpp reader and diagnosed in LM Studio's terms here
// (Reader::wraps).
#include <fmt/format.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "doctor/readers/ggml_front_end.h"
#include "doctor/readers/reader.h"

namespace vramfit::doctor {
namespace {

constexpr char kEngine[] = "lm-studio";

// LM Studio's own lines, which make it the log's engine (a llama.cpp failure among them is
// diagnosed in LM Studio's settings): its Developer Logs' "[LM Studio] ..." records (0.3.x-0.4.x:
// "[LM Studio] GPU Configuration:", "[LM Studio] Model load size estimate ..."), the engine's
// "lmstudio-llama-cpp: failed to load model", the app's toasts (its emoji and "Failed to load
// the model", "The model has crashed without additional information", "(Exit code: N). Unknown
// error. Try a different model and/or config."), the 0.2.x error JSON's
// "vram_recommended_capacity", and a
// model path under LM Studio's models folder (~/.cache/lm-studio/models, ~/.lmstudio/models).
bool LmStudioLine(const LineView& s) {
  if (!Has(s, "LM Studio") && !Has(s, "lmstudio") && !Has(s, "lm-studio") &&
      !Has(s, "Failed to load the") && !Has(s, "crashed without") && !Has(s, "and/or config") &&
      !Has(s, "vram_recommended")) {
    return false;  // most lines stop here
  }
  return Has(s, "[LM Studio]") || Has(s, "lmstudio-llama-cpp") ||
         Has(s, "\xf0\x9f\xa5\xb2 Failed to load the model") ||
         Has(s, "The model has crashed without additional information") ||
         Has(s, "Try a different model and/or config") || Has(s, "\"vram_recommended_capacity\"") ||
         Has(s, "lm-studio/models") || Has(s, "lm-studio\\models") || Has(s, ".lmstudio/models") ||
         Has(s, ".lmstudio\\models");
}

void Match(const Line& line) {
  const LineView s = line.view();
  if (LmStudioLine(s)) line.Emit(EventKind::kConfig, kEngine);
  // "estimatedModelVramUsageBytes:   16.98 GiB", "estimatedContextVramUsageBytes: 13.18 GiB"
  // (a plain number is bytes), "canLoad: true".
  constexpr std::pair<std::string_view, Num> kEstimates[] = {
      {"estimatedModelVramUsageBytes", Num::kWeightsBytes},
      {"estimatedContextVramUsageBytes", Num::kKvCacheBytes},
  };
  for (const auto& [key, value] : kEstimates) {
    if (!Has(s, key)) continue;
    auto& e = line.Emit(EventKind::kLoadEstimate, kEngine);
    // As JSON ("key": 18232520704, bytes) or as text (key: 16.98 GiB).
    Set(e, value, BytesAfter(s, std::string(key) + "\""));
    if (!e.values.count(value)) Set(e, value, BytesAfter(s, key));
  }
  // llama-cpp-python's own errors (llama_cpp/llama.py Llama.__init__, 0.1-0.2;
  // llama_cpp/_internals.py LlamaModel / LlamaContext, 0.2.2x-0.3): "Failed to load model from
  // file: PATH" when llama_load_model_from_file returned NULL (the load), "Failed to create
  // llama_context" when llama_new_context_with_model did (the KV cache and the compute buffers
  // at context creation). Neither says why (a missing file fails the same way): llama.cpp's own
  // lines before them do, and these only mark the phase, as llama.cpp's events.
  if (Has(s, "Failed to load model from file")) line.Emit(EventKind::kLoadBegin, "llama.cpp");
  if (Has(s, "Failed to create llama_context")) {
    line.Emit(EventKind::kGgmlModelBuffer, "llama.cpp");
  }
  // LM Studio's load guardrail refusing a model before loading it: "Model loading aborted due to
  // insufficient system resources. Overloading the system will likely cause it to freeze. If you
  // believe this is a mistake, you can try to change the model loading guardrails in the
  // settings." (0.3.x); from 0.3.30 "Model loading was stopped due to insufficient system
  // resources. Under the current settings, this model requires approximately 273.25 GB of
  // memory, and continuing to load it would likely overload your system ...": its estimate of
  // the model and its context exceeds the memory it allows, the same refusal as Ollama's
  // system-memory check, read as that event (with the estimate where the line gives it).
  // 0.4.x's loader panel says the same refusal without a figure: "Not enough resources to load
  // the model with the current settings", "It appears your system does not have enough memory
  // to load this model." (its guardrail, before anything is allocated).
  if (!Whole(line, "Not enough resources to load the model").empty() ||
      !Whole(line, "does not have enough memory to load this model").empty()) {
    line.Emit(EventKind::kOllamaSystemMemory, kEngine);
  }
  // The context length its estimate was made for ("[LM Studio] Model load size estimate with raw
  // num offload layers 'max' and context length '131072':", 0.3.x-0.4.x), and the one the model
  // is loaded with where the estimate used a shorter one ("... Original context length:
  // '131072'."): the Context Length setting.
  if (Has(s, "[LM Studio]")) {
    for (std::string_view key : {"Original context length: '", "and context length '"}) {
      if (const auto n = NumberAfter(s, key); n && *n >= 256) {
        Set(line.Emit(EventKind::kConfig, kEngine), Num::kMaxModelLen, n);
        break;
      }
    }
  }
  if (!WholeBoth(line, "Model loading ", "due to insufficient system resources").empty()) {
    auto& e = line.Emit(EventKind::kOllamaSystemMemory, kEngine);
    Set(e, Num::kHostRequiredBytes, BytesAfter(s, "requires approximately "));
  }
  // llama-cpp-python's LlamaContext.decode (_internals.py, 0.2.x-0.3.x) raises "llama_decode
  // returned N" for llama.cpp's code: 1 is "could not find a KV slot for the batch" (llama.h),
  // the context (n_ctx) full: a request longer than the context, not a failed allocation.
  if (const size_t at = s.find("llama_decode returned 1");
      at != std::string_view::npos &&
      (at + 23 >= s.size() || !std::isdigit(static_cast<unsigned char>(s[at + 23])))) {
    line.Emit(EventKind::kContextExceeded, "llama.cpp").text = "llama-cpp-python";
  }
  if (Has(s, "canLoad")) {
    const std::string_view rest = s.substr(s.find("canLoad"));
    const bool yes = rest.substr(0, 16).find("true") != std::string_view::npos;
    const bool no = rest.substr(0, 16).find("false") != std::string_view::npos;
    if (yes || no) line.Emit(EventKind::kLoadEstimate, kEngine).values[Num::kEstimateFits] = yes;
  }
}

// `pattern` with the size in GiB in place of its "{}", or "" where the log gave no size.
std::string SizeIn(std::optional<double> bytes, std::string_view pattern) {
  return bytes ? fmt::format(fmt::runtime(pattern), Gib(*bytes)) : "";
}

std::string Say(Words rule, const Facts& f) {
  switch (rule) {
    case Words::kKvBuffer: {
      if (f.get(Num::kEstimateFits).value_or(0) <= 0) {
        return "the buffer for the context (its KV cache) did not fit after the weights";
      }
      return "LM Studio's estimate let the model load" +
             SizeIn(f.get(Num::kKvCacheBytes), " (the context estimated at {})") +
             ", but after the weights the buffer for the context (its KV cache) did not fit: the "
             "estimate leaves too little margin for the driver's own memory";
    }
    case Words::kHostMemory:
      return "LM Studio's loading guardrail refused the model before loading it: its estimate for "
             "the model and its context at these settings (GPU Offload, Context Length)" +
             SizeIn(f.get(Num::kHostRequiredBytes), ", {},") + " exceeds the system's memory";
    case Words::kWeightBuffer:
      return "the layers LM Studio offloaded to the GPU (GPU Offload) do not fit in its memory";
    default:
      return "";
  }
}

// A lower Context Length: half the one the log gives, else unnamed.
std::string LowerContext(const Facts& f) {
  const auto half = HalfContext(f, 1024);
  if (!half) {
    return "a lower Context Length in the model's load settings (lms load --context-length)";
  }
  return fmt::format("Context Length {0:.0f} in the model's load settings (lms load "
                     "--context-length {0:.0f}; now {1:.0f})",
                     *half, *f.get(Num::kMaxModelLen));
}

bool Fixes(Cause cause, const Facts& f, Diagnosis* d) {
  switch (cause) {
    case Cause::kKvTooLongContext:
    case Cause::kKvNoMemory:
      AddFix(d, LowerContext(f), "the KV cache grows linearly with the context");
      AddFix(d, "Flash Attention on, with K Cache and V Cache Quantization Type q8_0",
             "a quantized KV cache: about half the bytes per token");
      return true;
    case Cause::kComputeBuffer:
      // llama.cpp's compute buffer holds a batch's attention scores against the whole context
      // where flash attention is off: it grows with the context and the batch.
      AddFix(d, "Flash Attention on", "the attention's compute buffer no longer holds a batch's "
                                      "scores against the whole context");
      AddFix(d, LowerContext(f), "the compute buffer and the KV cache grow with the context");
      AddFix(d, "a lower GPU Offload (fewer layers on the GPU; lms load --gpu 0.8)",
             "the layers left on the CPU free GPU memory for the buffers");
      return true;
    case Cause::kFragmentation:
      return false;
    case Cause::kHostMemory:
      AddFix(d, "a lower Context Length in the model's load settings, or a smaller quantization "
                "of the model",
             "the estimate the guardrail checks shrinks with the context and the weights");
      AddFix(d, "the guardrail (Settings > Model loading guardrails) set to relaxed",
             "loads anyway; the system may swap or freeze when the memory is really short");
      return true;
    default:
      AddFix(d, "a lower GPU Offload (fewer layers on the GPU; lms load --gpu 0.8)",
             "the layers left on the CPU free GPU memory for the rest");
      AddFix(d, "a lower Context Length in the model's load settings",
             "a smaller KV cache and compute buffer");
      return true;
  }
}

}  // namespace

const Reader& LmStudioReader() {
  static const Reader kReader = {
      .engine = kEngine,
      .match = Match,
      .milestones = {{EventKind::kLoadEstimate, Stage::kLoad}},
      .fixes = Fixes,
      .words = Say,
      .wraps = "llama.cpp",
  };
  return kReader;
}

}  // namespace vramfit::doctor
