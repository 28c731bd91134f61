// "Did you mean": the name a mistyped word was most likely meant to be, for messages about
// flags and names a user typed.
#ifndef VRAMFIT_SUGGEST_H_
#define VRAMFIT_SUGGEST_H_

#include <string>
#include <string_view>
#include <vector>

namespace vramfit {

// The name of `names` nearest to `word` by edit distance, when it is near enough to be a
// slip (at most 2 edits, or a third of the word's length for long words) or when one is a
// prefix of the other at least six characters long (dashes included); "" when none is.
// Ties keep the first.
//
// Example:
//   NearestName("--max-model-length", {"--max-model-len"})  // "--max-model-len"
//   NearestName("--banana", {"--max-model-len"})            // ""
std::string NearestName(std::string_view word, const std::vector<std::string>& names);

}  // namespace vramfit

#endif  // VRAMFIT_SUGGEST_H_
