// Ollama's row of the engine table (vramfit/engine.h): GGUF files under `ollama run`, planned
// by Ollama's own layer-offload estimate.
#ifndef VRAMFIT_ENGINES_OLLAMA_ENGINE_H_
#define VRAMFIT_ENGINES_OLLAMA_ENGINE_H_

#include "vramfit/engine.h"

namespace vramfit::ollama {

const Engine& OllamaEngine();

}  // namespace vramfit::ollama

#endif  // VRAMFIT_ENGINES_OLLAMA_ENGINE_H_
