// Token counts as engines' command lines write them (vLLM's human_readable_int): 32768, 25.6k
// (decimal: 25,600), 16K (binary: 16,384, whole numbers only).
#ifndef VRAMFIT_CORE_TOKENS_H_
#define VRAMFIT_CORE_TOKENS_H_

#include <cstdint>
#include <string>

#include "vramfit/status.h"

namespace vramfit::core {

// kInvalidArgument names `flag` and shows the accepted forms.
Result<int64_t> ParseTokenCount(const std::string& flag, const std::string& text);

}  // namespace vramfit::core

#endif  // VRAMFIT_CORE_TOKENS_H_
