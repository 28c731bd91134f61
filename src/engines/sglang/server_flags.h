// The complete option list of SGLang's server parser (server_flags_data.cc), how argparse reads
// a command line against it, and the check that refuses a flag SGLang's own parser refuses,
// before anything is planned: an unknown flag stops the server at once, whatever the memory
// would have been.
#ifndef VRAMFIT_ENGINES_SGLANG_SERVER_FLAGS_H_
#define VRAMFIT_ENGINES_SGLANG_SERVER_FLAGS_H_

#include <string>
#include <string_view>
#include <vector>

#include "vramfit/engine.h"
#include "vramfit/status.h"

namespace vramfit::sglang {

// One option string of the parser and how many words it takes at each listed release
// (rules.h kFlagListReleases), one character each: '0' none, '1' one, '?' an optional one,
// '*' any number, '+' at least one, '-' the release has no such option.
struct ServerFlag {
  std::string_view name;
  std::string_view arity;
};

// Every option of the listed releases, sorted by name.
const std::vector<ServerFlag>& ServerFlags();

// The option `written` (`--name`, before any `=VALUE`) stands for, as argparse finds it in the
// lists of `lists` (bits as in FlagListsFor): its exact name, else the one option it begins
// (argparse's allow_abbrev, which SGLang leaves on). nullptr when none does or several do;
// `*others` then gets the options it begins, when several.
const ServerFlag* FindServerFlag(std::string_view written, unsigned lists,
                                 std::vector<std::string_view>* others = nullptr);

// The words `flag` takes when read: the newest listed release's arity.
char ReadingArity(const ServerFlag& flag);

// Whether argparse reads `word` as an option rather than a value (Lib/argparse.py
// _parse_optional): it begins with '-', is longer than "-", and is not a negative number; a
// word with a space in it is a value unless it names an option.
bool IsOptionWord(const std::string& word);

// kInvalidArgument for the first flag of `given` (names as written, without a value) that
// SGLang of `version` ("" for the releases from the newest modelled one on) refuses, naming the
// nearest real flags, or argparse's complaint for an abbreviation of several.
Status CheckServerFlags(const std::vector<std::string>& given, const std::string& version);

// The Engine entry point: CheckServerFlags over a command's given flags.
Status CheckCommandFlags(const EngineCommand& command, const std::string& version);

}  // namespace vramfit::sglang

#endif  // VRAMFIT_ENGINES_SGLANG_SERVER_FLAGS_H_
