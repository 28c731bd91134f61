// Small text helpers for messages: edit distance and "did you mean" lists, text made safe to
// print on a terminal, code points written as UTF-8, and cuts that never split a UTF-8
// character.
#ifndef VRAMFIT_CORE_TEXT_H_
#define VRAMFIT_CORE_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vramfit/status.h"

namespace vramfit::core {

// Levenshtein distance (insertions, deletions, substitutions) of the first
// kEditDistanceMaxLength bytes of each: it ranks names to suggest, and a longer word is no name.
inline constexpr size_t kEditDistanceMaxLength = 128;
size_t EditDistance(std::string_view a, std::string_view b);

// "a, b, c": the `n` names of `scored` (distance, name) with the smallest distance.
std::string NearestNames(std::vector<std::pair<size_t, std::string>> scored, size_t n);

// `s` with its ASCII letters in lower case (other bytes unchanged): for matching words in text
// whatever their case.
std::string AsciiLower(std::string_view s);

// `s` as a terminal may show it: every byte a terminal could act on is written as an escape,
// so a hostile tensor name, log line or key cannot move the cursor, clear the screen or forge
// a line of its own. Newline, carriage return and the other C0 controls, DEL and bytes that
// are not UTF-8 become \n, \r, \xNN; the C1 controls (U+0080..U+009F) become \u0085 and
// the like. Tab and valid UTF-8 pass unchanged. Backslashes are not doubled, so the result
// of Printable is its own Printable: a message escaped where it was made and again where it
// is printed reads the same.
//
// Example:
//   Printable("w\x1b[2J\n")  // the ten characters  w \ x 1 b [ 2 J \ n
std::string Printable(std::string_view s);

// kInvalidArgument for a flag value that does not read, in the one form every engine's flag
// reader uses: `FLAG "TEXT": expected EXPECTED`, the text made printable.
Status BadFlagValue(const std::string& flag, const std::string& text, const char* expected);

// A flag's whole-number value in [lo, 2^31 - 1]; else BadFlagValue with `expected`.
Result<int64_t> ReadFlagInt(const std::string& flag, const std::string& text, int64_t lo,
                            const char* expected);

// A Hub revision (branch, tag or commit) as an engine's --revision names it: kInvalidArgument,
// "the ENGINE command line: --revision X: not a Hub revision ...", for a word with a blank or
// control byte, which no revision the Hub serves has.
Status CheckHubRevision(std::string_view engine, std::string_view revision);

// Whether an environment variable is one an engine reads with no effect on GPU memory: Hub
// access and caches (HF_TOKEN, HUGGING_FACE_HUB_TOKEN, HF_HOME, HF_HUB_OFFLINE, HF_ENDPOINT,
// HF_HUB_ENABLE_HF_TRANSFER, TRANSFORMERS_CACHE), logging and telemetry (VLLM_LOGGING_LEVEL,
// VLLM_CONFIGURE_LOGGING, VLLM_NO_USAGE_STATS, DO_NOT_TRACK, NCCL_DEBUG, OLLAMA_DEBUG), the
// server's address and key (VLLM_API_KEY, VLLM_HOST_IP, VLLM_PORT, OLLAMA_HOST,
// OLLAMA_ORIGINS), timeouts (VLLM_RPC_TIMEOUT, VLLM_ENGINE_ITERATION_TIMEOUT_S), the host's
// threads and paths (OMP_NUM_THREADS, TOKENIZERS_PARALLELISM, PYTHONUNBUFFERED, PYTHONPATH,
// PATH, TZ, HOME). `check` names them as read, not as ignored.
bool EnvWithoutMemoryEffect(std::string_view name);

// Whether a command word is a shell's NAME=value prefix assignment (a name of letters, digits
// and underscores before the '='), as engine command lines carry their environment.
bool IsEnvAssignment(std::string_view word);

// A word as a POSIX shell reads it back: as is when it holds only [A-Za-z0-9_./:=,@+-], else
// in single quotes (a quote inside written '\''). Engines' command lines use it.
std::string ShellWord(const std::string& w);

// Byte offset of the first invalid UTF-8 sequence in `s` (a stray continuation byte, a cut
// sequence, an overlong form, a surrogate, a value past U+10FFFF), or s.size() when valid.
size_t FirstInvalidUtf8(std::string_view s);

// Appends code point `cp` (at most U+10FFFF, not a surrogate) to *out as UTF-8.
void AppendUtf8(uint32_t cp, std::string* out);

// The longest prefix of `s` of at most `n` bytes that does not end inside a UTF-8 sequence
// (a lead byte without all its continuation bytes). Cutting valid UTF-8 keeps it valid.
std::string_view Utf8Prefix(std::string_view s, size_t n);

}  // namespace vramfit::core

#endif  // VRAMFIT_CORE_TEXT_H_
