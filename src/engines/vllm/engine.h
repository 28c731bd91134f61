// vLLM's row of the engine table (vramfit/engine.h).
#ifndef VRAMFIT_ENGINES_VLLM_ENGINE_H_
#define VRAMFIT_ENGINES_VLLM_ENGINE_H_

#include "vramfit/engine.h"

namespace vramfit::vllm {

const Engine& VllmEngine();

}  // namespace vramfit::vllm

#endif  // VRAMFIT_ENGINES_VLLM_ENGINE_H_
