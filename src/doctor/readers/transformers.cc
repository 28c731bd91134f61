// transformers' log reader (readers/reader.h): a static KV cache and device_map="auto" offload
// lines (the code lines calling from_pretrained/generate are read with PyTorch's frames). Its
// fixes: the static cache's, and PyTorch's for the rest (transformers runs on it).
#include "doctor/readers/reader.h"

namespace vramfit::doctor {
namespace {

constexpr char kEngine[] = "transformers";

void Match(const Line& line) {
  const std::string_view s = line.text;
  if (Has(s, "StaticCache") || Has(s, "cache_implementation=\"static\"") ||
      Has(s, "cache_implementation='static'")) {
    line.Emit(EventKind::kStaticCache, kEngine);
  }
  if (Has(s, "device_map=\"auto\"") || Has(s, "device_map='auto'") ||
      Has(s, "offloaded to the cpu") || Has(s, "Some parameters are on the meta device")) {
    line.Emit(EventKind::kOffload, kEngine);
  }
}

bool Fixes(Cause cause, const Facts& f, Diagnosis* d) {
  if (cause == Cause::kStaticCache) {
    AddFix(d, "cache_implementation=\"dynamic\" (or a smaller max_cache_len)",
           "a static cache reserves batch x max length of KV up front");
    return true;
  }
  return PytorchReader().fixes(cause, f, d);
}

}  // namespace

const Reader& TransformersReader() {
  static const Reader kReader = {
      .engine = kEngine,
      .match = Match,
      // A frame in transformers or accelerate names it unless a later frame names another.
      .frame_path = Num::kPathHasTransformers,
      .frame_path_final = false,
      .fixes = Fixes,
  };
  return kReader;
}

}  // namespace vramfit::doctor
