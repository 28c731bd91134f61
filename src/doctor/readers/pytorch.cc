// PyTorch's log reader (readers/reader.h): the CUDACachingAllocator's out-of-memory message in
// its 2.1+ and older forms, CUDA's own error, traceback frames (with the package their file lies
// in) and the code lines under them. Its fixes are for plain PyTorch programs.
#include <algorithm>
#include <cctype>

#include "doctor/readers/reader.h"

namespace vramfit::doctor {
namespace {

constexpr char kEngine[] = "pytorch";

// "Tried to allocate X ...": true when the line is one (no other PyTorch line is then read).
bool MatchAllocatorOom(const Line& line) {
  const std::string_view s = line.text;
  const size_t tried = s.find("Tried to allocate");
  if (tried == std::string_view::npos) return false;
  auto& e = line.Emit(EventKind::kTorchOom, kEngine);
  Set(e, Num::kRequestedBytes, BytesAfter(s, "Tried to allocate", tried));
  if (Has(s, "total capacity of")) {  // PyTorch >= 2.1
    Set(e, Num::kTotalBytes, BytesAfter(s, "total capacity of"));
    Set(e, Num::kFreeBytes, BytesAfter(s, "of which"));
    Set(e, Num::kProcessBytes, BytesAfter(s, "this process has"));
    Set(e, Num::kAllocatedBytes, BytesAfter(s, "Of the allocated memory"));
    Set(e, Num::kReservedUnallocatedBytes,
        BytesBefore(s, "reserved by PyTorch but unallocated", "and "));
    double others = 0;
    int processes = 0;
    for (size_t at = s.find("Process "); at != std::string_view::npos;
         at = s.find("Process ", at + 8)) {
      size_t end = 0;
      if (!NumberAt(s, at + 8, &end)) continue;
      if (s.substr(end, 5) != " has ") continue;
      if (auto b = BytesAfter(s, " has ", end)) {
        others += *b;
        ++processes;
      }
    }
    if (processes > 0) {
      Set(e, Num::kListedProcessBytes, others);
      Set(e, Num::kListedProcesses, processes);
    }
    Set(e, Num::kGpuIndex, NumberAfter(s, "GPU "));
  } else {
    // "(GPU 0; 23.69 GiB total capacity; 3.45 GiB already allocated; 17.23 GiB free; ...)"
    Set(e, Num::kGpuIndex, NumberAfter(s, "(GPU "));
    size_t semi = s.find(';', tried);
    if (semi != std::string_view::npos) Set(e, Num::kTotalBytes, BytesAfter(s, ";", semi));
    Set(e, Num::kAllocatedBytes, BytesBefore(s, "already allocated", ";"));
    Set(e, Num::kFreeBytes,
        Has(s, " free;") ? BytesBefore(s, " free;", ";") : BytesBefore(s, " free)", ";"));
    Set(e, Num::kReservedBytes, BytesBefore(s, "reserved in total by PyTorch", ";"));
    if (e.values.count(Num::kReservedBytes) && e.values.count(Num::kAllocatedBytes)) {
      Set(e, Num::kReservedUnallocatedBytes,
          std::max(0.0, e.values[Num::kReservedBytes] - e.values[Num::kAllocatedBytes]));
    }
  }
  return true;
}

void Match(const Line& line) {
  const std::string_view s = line.text;
  if (MatchAllocatorOom(line)) return;
  if (Has(s, "CUDA error: out of memory") || Has(s, "cudaErrorMemoryAllocation") ||
      (Has(s, "CUDA out of memory") && !Has(s, "warming up sampler")) ||
      Has(s, "HIP out of memory") || Has(s, "OutOfMemoryError")) {
    line.Emit(EventKind::kCudaOom, kEngine);
  }
  const size_t file = s.find("File \"");
  if (file != std::string_view::npos) {
    const size_t in = s.find(", in ", file);
    if (in != std::string_view::npos) {
      auto& e = line.Emit(EventKind::kFrame, kEngine);
      size_t b = in + 5, end = b;
      while (end < s.size() && end - b < 120 && s[end] != ' ' && s[end] != '\r') ++end;
      e.text = std::string(s.substr(b, end - b));
      const size_t q = s.find('"', file + 6);
      if (q != std::string_view::npos) {
        std::string_view path = s.substr(file + 6, q - file - 6);
        const size_t slash = path.rfind('/');
        e.values[Num::kPathHasSglang] = Has(path, "sglang") ? 1 : 0;
        e.values[Num::kPathHasVllm] = Has(path, "vllm/") ? 1 : 0;
        e.values[Num::kPathHasTransformers] =
            Has(path, "transformers/") || Has(path, "accelerate/") ? 1 : 0;
        e.text += " (" +
                  std::string(slash == std::string_view::npos ? path : path.substr(slash + 1)) +
                  ")";
      }
    }
  }
  if (Has(s, "Traceback (most recent call last)")) line.Emit(EventKind::kTraceback, kEngine);
  // "Exception in worker ... while processing method determine_num_available_blocks."
  if (Has(s, "while processing method ")) {
    size_t b = s.find("while processing method ") + 24, end = b;
    while (end < s.size() && end - b < 80 &&
           (std::isalnum(static_cast<unsigned char>(s[end])) || s[end] == '_'))
      ++end;
    auto& e = line.Emit(EventKind::kFrame, kEngine);
    e.text = std::string(s.substr(b, end - b));
  }
  // The code line under a frame: "model = AutoModelForCausalLM.from_pretrained(...)",
  // "model.generate(": a frame of transformers' API.
  if (file == std::string_view::npos) {
    for (const char* call : {".from_pretrained(", ".generate(", "load_checkpoint_and_dispatch("}) {
      if (Has(s, call)) {
        auto& e = line.Emit(EventKind::kFrame, "transformers");
        std::string fn = call;
        e.text = fn.substr(fn[0] == '.' ? 1 : 0, fn.size() - (fn[0] == '.' ? 2 : 1));
        e.values[Num::kPathHasTransformers] = 1;
      }
    }
  }
}

// A plain PyTorch program's fixes (transformers' too, which runs on it).
bool Fixes(Cause cause, const Facts& f, Diagnosis* d) {
  if (cause != Cause::kActivationPeak) return false;
  AddFix(d, "a smaller batch or shorter inputs (max_new_tokens, truncation)",
         "activations and logits grow with batch x length");
  return true;
}

}  // namespace

const Reader& PytorchReader() {
  static const Reader kReader = {
      .engine = kEngine,
      .match = Match,
      .fixes = Fixes,
  };
  return kReader;
}

}  // namespace vramfit::doctor
