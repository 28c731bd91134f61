// Edit distance and nearest-name lists (see text.h).
#include "core/text.h"

#include <algorithm>

namespace vramfit::core {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] =
          std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string NearestNames(std::vector<std::pair<size_t, std::string>> scored, size_t n) {
  std::sort(scored.begin(), scored.end());
  std::string out;
  for (size_t i = 0; i < scored.size() && i < n; ++i) {
    if (i) out += ", ";
    out += scored[i].second;
  }
  return out;
}

}  // namespace vramfit::core
