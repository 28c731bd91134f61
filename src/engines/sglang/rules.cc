// SGLang's release rules (see rules.h): the one place its release numbers are compared.
#include "engines/sglang/rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <iterator>

namespace vramfit::sglang {

Result<int> ParseRelease(const std::string& text) {
  // Digits and dots up to the first other character (".post1", "rc2" and the like end it).
  const Status bad = Status::InvalidArgument(
      fmt::format("SGLang version \"{}\": expected MAJOR.MINOR[.PATCH], e.g. 0.5.5", text));
  int parts[3] = {0, 0, 0};
  int n = 0;
  size_t i = (!text.empty() && (text[0] == 'v' || text[0] == 'V')) ? 1 : 0;
  while (n < 3 && i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    int v = 0;
    for (int digits = 0; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]));
         ++i) {
      if (++digits > 2) return bad;
      v = v * 10 + (text[i] - '0');
    }
    parts[n++] = v;
    if (i >= text.size() || text[i] != '.') break;
    ++i;
  }
  if (n < 2 || parts[0] > 9) return bad;
  const int v = parts[0] * 10000 + parts[1] * 100 + parts[2];
  if (v < kOldestModelled) {
    return Status::InvalidArgument(
        fmt::format("SGLang version \"{}\": releases before 0.4 are not modelled", text));
  }
  return v;
}

Rules RulesFor(int release) {
  Rules r;
  r.release = std::clamp(release, kOldestModelled, kNewestModelled);
  r.text = fmt::format("{}.{}.{}", r.release / 10000, (r.release / 100) % 100, r.release % 100);
  r.fraction_from_reserve = r.release >= 500;
  r.graph_bs_by_gpu = r.release >= 500;
  r.chunk_by_gpu_steps = r.release >= 500;
  r.mamba_pool = r.release >= 500;
  return r;
}

unsigned FlagListsFor(int release) {
  constexpr int n = static_cast<int>(std::size(kFlagListReleases));
  if (release == 0) {
    unsigned mask = 0;
    for (int i = 0; i < n; ++i) {
      if (kFlagListReleases[i] >= kNewestModelled) mask |= 1u << i;
    }
    return mask;
  }
  if (release <= kFlagListReleases[0]) return 1u;
  for (int i = 0; i < n; ++i) {
    if (release == kFlagListReleases[i]) return 1u << i;
    if (i + 1 < n && release < kFlagListReleases[i + 1]) return 3u << i;
  }
  return 1u << (n - 1);
}

}  // namespace vramfit::sglang
