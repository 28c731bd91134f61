// Token counts (see tokens.h).
#include "core/tokens.h"

#include <fmt/format.h>

#include <algorithm>

namespace vramfit::core {

Result<int64_t> ParseTokenCount(const std::string& flag, const std::string& text) {
  // vLLM's human_readable_int (vllm/engine/arg_utils.py): lower-case suffixes are decimal
  // (25.6k = 25,600), upper-case binary (16K = 16,384, whole numbers only).
  auto bad = [&]() {
    return Status::InvalidArgument(fmt::format(
        "{} \"{}\": expected a positive whole number of tokens, e.g. 32768, 128k (128,000) or "
        "128K (131,072)", flag, text));
  };
  if (text.empty() || text.size() > 24) return bad();
  std::string num = text;
  double mult = 1;
  bool binary = false;
  switch (num.back()) {
    case 'k': mult = 1e3; break;
    case 'm': mult = 1e6; break;
    case 'g': mult = 1e9; break;
    case 'K': mult = 1024; binary = true; break;
    case 'M': mult = 1048576; binary = true; break;
    case 'G': mult = 1073741824; binary = true; break;
    default: break;
  }
  if (mult != 1) num.pop_back();
  const bool has_dot = num.find('.') != std::string::npos;
  if (num.empty() || (has_dot && (binary || mult == 1)) ||
      num.find_first_not_of("0123456789.") != std::string::npos || num.front() == '.' ||
      num.back() == '.' || std::count(num.begin(), num.end(), '.') > 1) {
    return bad();
  }
  const double v = std::stod(num) * mult;
  if (!(v >= 1) || v > 9e15) return bad();
  return static_cast<int64_t>(v);
}

}  // namespace vramfit::core
