// SGLang's row of the engine table (vramfit/engine.h).
#ifndef VRAMFIT_ENGINES_SGLANG_ENGINE_H_
#define VRAMFIT_ENGINES_SGLANG_ENGINE_H_

#include "vramfit/engine.h"

namespace vramfit::sglang {

const Engine& SglangEngine();

}  // namespace vramfit::sglang

#endif  // VRAMFIT_ENGINES_SGLANG_ENGINE_H_
