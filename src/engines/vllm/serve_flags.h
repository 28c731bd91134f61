// The complete flag list of `vllm serve` (serve_flags_data.cc) and the check that refuses a
// flag vLLM's own parser refuses, before anything is planned: an unknown flag stops `vllm
// serve` at once, whatever the memory would have been.
#ifndef VRAMFIT_ENGINES_VLLM_SERVE_FLAGS_H_
#define VRAMFIT_ENGINES_VLLM_SERVE_FLAGS_H_

#include <string>
#include <string_view>
#include <vector>

#include "vramfit/engine.h"
#include "vramfit/status.h"

namespace vramfit::vllm {

// Every option string of the serve parser at v0.10.0 and at v0.22-dev, sorted.
const std::vector<std::string_view>& ServeFlagsV010();
const std::vector<std::string_view>& ServeFlagsV022();

// A flag of the releases before 0.10 (serve_flags_history.cc): present in releases
// [first, until), until 0 when 0.9 still has it; releases as major*10000 + minor*100 + patch.
struct FlagSpan {
  std::string_view flag;
  int first = 0;
  int until = 0;
};
const std::vector<FlagSpan>& ServeFlagSpansBefore010();

// The option strings of release `release` (before 0.10), sorted.
std::vector<std::string_view> ServeFlagsBefore010(int release);

// kInvalidArgument for the first flag of `given` (names as written, `--name` or `-x`, without
// a value) that `vllm serve` of `version` ("" for the newest modelled) rejects, naming the
// nearest real flags. Accepted as argparse and vLLM's FlexibleArgumentParser accept them:
// `_` for `-`, `--no-NAME` of a flag, `--name.key` of a flag (JSON config keys), and a
// prefix of exactly one long flag (argparse's allow_abbrev, which vLLM leaves on); a prefix
// of several is refused as ambiguous. Between the two listed releases a flag is refused only
// when neither has it. Before 0.10 the release's own list decides, with its parser's rules:
// `_` for `-` from 0.5.1 (FlexibleArgumentParser, PR #5718), `--no-NAME` of any flag from 0.8
// (bool config fields became BooleanOptionalAction) and only the listed ones before, dotted
// config keys from 0.9.
Status CheckServeFlags(const std::vector<std::string>& given, const std::string& version);

// The words after the launcher as vLLM's parser reads them, with every long flag in its full
// spelling, so that a reader of the full names misses none: `_` in a name read as `-`
// (`--max_model_len`), a prefix of exactly one long flag of either listed release expanded
// (`--max-model 8192`, argparse's allow_abbrev), and dotted config keys gathered into one
// JSON object per flag, appended at the end as vLLM appends them (`--limit-mm-per-prompt.image
// 4` is `--limit-mm-per-prompt '{"image":4}'`; a value is JSON where it parses, else a string;
// `--name.key+ a,b` is a list). Words that are not long flags, and names `keep` holds
// exactly, pass unchanged; an ambiguous or unknown name is left for CheckServeFlags.
std::vector<std::string> CanonicalServeArgs(const std::vector<std::string>& args,
                                            const std::vector<std::string_view>& keep);

// The deepest nesting of `[` and `{` in `text`, outside strings: a value nested deeper than
// kMaxJsonNesting is not parsed (copying such a document recurses once per level).
inline constexpr size_t kMaxJsonNesting = 512;
size_t JsonNesting(std::string_view text);

// The Engine entry point: CheckServeFlags over a command's given flags.
Status CheckCommandFlags(const EngineCommand& command, const std::string& version);

}  // namespace vramfit::vllm

#endif  // VRAMFIT_ENGINES_VLLM_SERVE_FLAGS_H_
