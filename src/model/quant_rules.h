// Per-module scheme lookups beyond the public QuantSchemeBits (vramfit/model.h): the group size
// a GPTQModel `dynamic` or AutoRound `extra_config` override gives one module. Internal to the
// model code (the audit checks each module's layout against it).
#ifndef VRAMFIT_MODEL_QUANT_RULES_H_
#define VRAMFIT_MODEL_QUANT_RULES_H_

#include <cstdint>
#include <string_view>

#include "vramfit/model.h"

namespace vramfit::model {

// Group size of `module` under the scheme (0 = per channel): the first override that matches,
// else the scheme's.
int64_t QuantSchemeGroupSize(const QuantScheme& q, std::string_view module);

}  // namespace vramfit::model

#endif  // VRAMFIT_MODEL_QUANT_RULES_H_
