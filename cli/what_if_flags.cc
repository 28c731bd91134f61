// --as-quantized METHOD [--bits N] [--group-size G] [--desc-act] for plan, fit and inspect: a
// what-if quantization of an unquantized model, read into InspectOptions (the library
// synthesizes the quantized checkpoint; see WhatIfQuantizedSpec in vramfit/model.h).
#include <fmt/format.h>

#include "commands.h"

namespace vramfit::cli {

void AddWhatIfFlags(CLI::App* app, WhatIfFlags* f) {
  app->add_option("--as-quantized", f->method,
                  "What if the (unquantized) model were quantized: awq, gptq, fp8, w8a8 or "
                  "nvfp4; the checkpoint the quantizer would write is synthesized, with the "
                  "modules it leaves unquantized by default");
  app->add_option("--bits", f->bits, "With --as-quantized: weight bits (gptq: 2, 3, 4 or 8)");
  app->add_option("--group-size", f->group_size,
                  "With --as-quantized awq|gptq: inputs per scale (default 128; -1 per channel)");
  app->add_flag("--desc-act", f->desc_act, "With --as-quantized gptq: act-order (same layout)");
}

Status ApplyWhatIfFlags(const WhatIfFlags& f, InspectOptions* options) {
  if (f.method.empty()) {
    if (f.bits != 0 || f.group_size != -2 || f.desc_act) {
      return Status::InvalidArgument(
          "--bits, --group-size and --desc-act go with --as-quantized METHOD");
    }
    return Status::Ok();
  }
  auto q = MakeWhatIfQuant(f.method, f.bits, f.group_size, f.desc_act);
  if (!q.ok()) return q.status();
  options->as_quantized = *q;
  return Status::Ok();
}

}  // namespace vramfit::cli
