// transformers' row of the engine table (vramfit/engine.h).
#ifndef VRAMFIT_ENGINES_TRANSFORMERS_ENGINE_H_
#define VRAMFIT_ENGINES_TRANSFORMERS_ENGINE_H_

#include "vramfit/engine.h"

namespace vramfit::transformers {

const Engine& TransformersEngine();

}  // namespace vramfit::transformers

#endif  // VRAMFIT_ENGINES_TRANSFORMERS_ENGINE_H_
