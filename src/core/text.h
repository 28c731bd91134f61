// Small text helpers for messages: edit distance and "did you mean" lists.
#ifndef VRAMFIT_CORE_TEXT_H_
#define VRAMFIT_CORE_TEXT_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vramfit::core {

// Levenshtein distance (insertions, deletions, substitutions).
size_t EditDistance(std::string_view a, std::string_view b);

// "a, b, c": the `n` names of `scored` (distance, name) with the smallest distance.
std::string NearestNames(std::vector<std::pair<size_t, std::string>> scored, size_t n);

}  // namespace vramfit::core

#endif  // VRAMFIT_CORE_TEXT_H_
