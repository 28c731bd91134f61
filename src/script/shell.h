// A reader of POSIX shell scripts as deploy scripts use them: it lexes the text (quotes,
// `\` continuations, comments, operators, redirections, here-documents), runs the script's own
// variable assignments and `export`s in order, and expands `$VAR`/`${VAR...}` in each simple
// command. It runs nothing: a command substitution or a positional parameter is a value it
// cannot know, recorded on the word, never guessed. It names no program; the script room
// (script.cc) decides which commands matter.
#ifndef VRAMFIT_SCRIPT_SHELL_H_
#define VRAMFIT_SCRIPT_SHELL_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vramfit/status.h"

namespace vramfit::script {

// Limits against hostile scripts: the text, any one expanded word or variable, all expanded
// words together, and `${...}` nesting.
inline constexpr size_t kMaxScriptBytes = 16u << 20;
inline constexpr size_t kMaxWordBytes = 1u << 20;
inline constexpr uint64_t kMaxExpandedBytes = 64u << 20;
inline constexpr int kMaxNesting = 32;

// An expansion whose value the reader cannot know (an unset variable, a command substitution,
// a positional parameter): where it is and what it was, e.g. "$MODEL_PATH is not set".
struct Unknown {
  int line = 0;
  std::string what;
};

// One word of a command after expansion and field splitting.
struct ShellWord {
  std::string text;
  int line = 0;
  bool assignment = false;            // NAME=value, NAME unquoted (a prefix of the command)
  std::optional<Unknown> unknown;     // the first expansion that could not be known
};

// One simple command (words between operators and newlines), redirections removed.
struct ShellCommand {
  int line = 0;                          // the line of its first word
  std::vector<ShellWord> words;          // prefix assignments, then the command and arguments
  // The variables exported when the command runs (`export`, and those given to ReadShell
  // as the environment), NAME=value, in the order they were first exported.
  std::vector<std::string> environment;
};

struct ShellRead {
  std::vector<ShellCommand> commands;    // the kept ones
  // What a shell would do otherwise and the reader did on purpose ("deploy.sh:14: ...").
  std::vector<std::string> notes;
  // Every variable set at the end, NAME=value, exported or not (an environment file's values).
  std::vector<std::pair<std::string, std::string>> variables;
};

// Which commands to keep: called with each command (its words, no environment yet); a kept
// one gets its environment and is returned. At most kMaxKept are kept.
using KeepCommand = std::function<bool(const ShellCommand&)>;
inline constexpr size_t kMaxKept = 1000;
inline constexpr size_t kMaxExported = 4096;

// Reads `text`, named `file` in messages. `environment` holds exported variables known before
// the script starts (NAME, value). kInvalidArgument "file:line: what" for text a shell would
// refuse or that passes the limits above (an unterminated quote names the line it opens on).
Result<ShellRead> ReadShell(std::string_view text, std::string_view file,
                            const std::vector<std::pair<std::string, std::string>>& environment,
                            const KeepCommand& keep);

}  // namespace vramfit::script

#endif  // VRAMFIT_SCRIPT_SHELL_H_
