// KoboldCpp's reader (readers/reader.h): KoboldCpp runs llama.cpp inside one Python program
// (koboldcpp.py and its packaged koboldcpp.exe), so its buffer failures are llama.cpp's and are
// read by that reader; this one says they came from KoboldCpp, and gives the fixes in its own
// launch options (koboldcpp.py argparse, 1.6x-1.10x): --gpulayers (-1 lets it estimate),
// --contextsize, --blasbatchsize (the batch llama.cpp's compute buffer is sized for, default
// 512), --flashattention with --quantkv 1|2 (a q8 or q4 KV cache; it needs flash attention),
// --usecublas lowvram (the KV cache and scratch buffers kept off the GPU), --tensor_split.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>

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
  if (KoboldCppLine(line.view())) line.Emit(EventKind::kConfig, kEngine);
}

std::string Say(Words rule, const Facts& f) {
  (void)f;
  switch (rule) {
    case Words::kWeightBuffer:
      return "the layers KoboldCpp offloaded to the GPU (--gpulayers) do not fit in its memory";
    case Words::kKvBuffer:
      return "the KV cache for the context (--contextsize) did not fit after the weights";
    default:
      return "";
  }
}

// Half the context, as KoboldCpp's own list of sizes has them (512 up to 131072).
std::string HalfContext(const Facts& f) {
  const auto n = f.get(Num::kMaxModelLen);
  if (!n || *n < 1024) return "--contextsize lower";
  return fmt::format("--contextsize {:.0f}", std::max(512.0, std::floor(*n / 2 / 512) * 512));
}

bool Fixes(Cause cause, const Facts& f, Diagnosis* d) {
  switch (cause) {
    case Cause::kWeightsTooLarge:
      AddFix(d, "--gpulayers lower (or -1: KoboldCpp estimates the layers that fit)",
             "the layers left on the CPU free GPU memory for the rest");
      AddFix(d, "a smaller quantization of the model", "smaller layers, more of them on the GPU");
      return true;
    case Cause::kKvTooLongContext:
    case Cause::kKvNoMemory:
    case Cause::kKvTooManySequences:
      AddFix(d, HalfContext(f), "the KV cache grows linearly with the context");
      AddFix(d, "--flashattention --quantkv 1",
             "a q8 KV cache (--quantkv needs flash attention): about half the bytes per token");
      AddFix(d, "--usecublas lowvram",
             "keeps the KV cache in system RAM (slower), leaving the GPU to the layers");
      return true;
    case Cause::kComputeBuffer:
      AddFix(d, "--blasbatchsize 256 (the default is 512)",
             "the compute buffer is sized for the batch llama.cpp processes at once");
      AddFix(d, "--flashattention", "a smaller attention compute buffer");
      AddFix(d, HalfContext(f) + ", or --gpulayers lower",
             "the compute buffer grows with the context too; fewer layers leave it room");
      return true;
    case Cause::kFragmentation:
      return false;
    default:
      AddFix(d, "--gpulayers lower", "the layers left on the CPU free GPU memory for the rest");
      AddFix(d, HalfContext(f), "a smaller KV cache and compute buffer");
      return true;
  }
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
