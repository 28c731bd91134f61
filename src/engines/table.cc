// The engine table (vramfit/engine.h): one line per engine. Adding an engine is a new room
// under src/engines/<engine>/ and one line here; nothing above the engines names it.
#include "engines/transformers/engine.h"
#include "engines/vllm/engine.h"
#include "vramfit/engine.h"

namespace vramfit {

const std::vector<const Engine*>& Engines() {
  static const std::vector<const Engine*> kEngines = {
      &vllm::VllmEngine(),
      &transformers::TransformersEngine(),
  };
  return kEngines;
}

}  // namespace vramfit
