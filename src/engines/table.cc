// The engine table (vramfit/engine.h): one line per engine. Adding an engine is a new room
// under src/engines/<engine>/ and one line here; nothing above the engines names it.
#include "engines/llamacpp/engine.h"
#include "engines/ollama/engine.h"
#include "engines/sglang/engine.h"
#include "engines/transformers/engine.h"
#include "engines/vllm/engine.h"
#include "vramfit/engine.h"

#include <string>

namespace vramfit {

Status CheckPlannable(const Inventory& inv, std::string_view engine_title) {
  if (!inv.has_spec) {
    return Status::InvalidArgument("planning needs the model's config.json (none was found)");
  }
  if (inv.quantization.method == "gguf") {
    // Its ggml block types load through paths these engines do not model; the llama.cpp
    // and Ollama engines (src/engines/llamacpp/, src/engines/ollama/) plan GGUF files.
    return Status::Unsupported("planning a GGUF file under " + std::string(engine_title) +
                               " is not modelled: plan it with --engine llamacpp (or ollama), or "
                               "plan the safetensors checkpoint it was converted from");
  }
  return Status::Ok();
}

const std::vector<const Engine*>& Engines() {
  static const std::vector<const Engine*> kEngines = {
      &vllm::VllmEngine(),
      &transformers::TransformersEngine(),
      &llamacpp::LlamaCppEngine(),
      &sglang::SglangEngine(),
      &ollama::OllamaEngine(),
  };
  return kEngines;
}

}  // namespace vramfit
