// transformers' release rules (see rules.h).
#include "engines/transformers/rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "core/text.h"
#include "engines/transformers/transformers.h"

namespace vramfit::transformers {

Result<int> ParseReleaseNumber(const std::string& text) {
  std::string_view t = text;
  if (!t.empty() && (t[0] == 'v' || t[0] == 'V')) t.remove_prefix(1);
  int part[3] = {0, 0, 0};
  size_t i = 0;
  for (int n = 0; n < 3; ++n) {
    const char* b = t.data() + i;
    const char* e = t.data() + t.size();
    auto [p, ec] = std::from_chars(b, e, part[n]);
    if (ec != std::errc() || p == b || part[n] > 99 || part[n] < 0) break;
    i = static_cast<size_t>(p - t.data());
    if (i == t.size()) {
      i = t.size() + 1;
      break;
    }
    if (t[i] != '.') break;
    ++i;
  }
  const bool whole = i == t.size() + 1;
  const int v = part[0] * 10000 + part[1] * 100 + part[2];
  if (!whole || part[0] == 0) {
    return Status::InvalidArgument(fmt::format(
        "--engine transformers@{}: expected a release such as 4.57 or 5.0", core::Printable(text)));
  }
  if (v < kOldestModelled) {
    return Status::InvalidArgument(fmt::format(
        "transformers {} is older than the oldest modelled release (4.40, the first with cache "
        "objects in generate)", core::Printable(text)));
  }
  return v;
}

Result<int> ParseRelease(const std::string& text) { return ParseReleaseNumber(text); }

Rules RulesFor(int release) {
  Rules r;
  r.release = std::clamp(release, kOldestModelled, kNewestModelled);
  r.text = fmt::format("{}.{}", r.release / 10000, (r.release / 100) % 100);
  r.default_dtype_auto = r.release >= 50000;
  r.prefill_last_logits_only = r.release >= 44500;
  r.dynamic_sliding_window = r.release >= 45600;
  return r;
}

}  // namespace vramfit::transformers
