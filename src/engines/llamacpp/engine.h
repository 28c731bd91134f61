// llama.cpp's row of the engine table (vramfit/engine.h): GGUF files under llama-server and
// llama-cli.
#ifndef VRAMFIT_ENGINES_LLAMACPP_ENGINE_H_
#define VRAMFIT_ENGINES_LLAMACPP_ENGINE_H_

#include "vramfit/engine.h"

namespace vramfit::llamacpp {

const Engine& LlamaCppEngine();

}  // namespace vramfit::llamacpp

#endif  // VRAMFIT_ENGINES_LLAMACPP_ENGINE_H_
