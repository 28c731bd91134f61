// The wrappers a log's lines arrive in when they are not the engine's own output as printed:
// a log collector's JSON record around each line (Docker's json-file driver, `journalctl -o
// json`, a cloud logging export), a traceback pasted as a string with its line ends escaped
// ("Traceback (most recent call last):\n  File ..."), a web page's HTML escapes, and a log
// whose line ends were lost (its records joined by spaces on one long line). Each is undone to
// the text the engine printed; a line in none of them is left as it is. Linear in the line, no
// regular expressions.
#ifndef VRAMFIT_DOCTOR_PASTE_H_
#define VRAMFIT_DOCTOR_PASTE_H_

#include <string>
#include <string_view>

namespace vramfit::doctor {

// The text inside `line` when it is wrapped (the wrappers above), written to *out: the
// engine's lines, separated by '\n' when the wrapper held several. False, *out untouched, when
// `line` is in no wrapper.
bool Unwrap(std::string_view line, std::string* out);

// Whether `s` begins one of the records the line-end splitter knows (a traceback's header or
// frame, an exception's line, a logger's level and date, a worker's or rank's prefix, a
// timestamp, llama.cpp's function prefix, a panic, a shell's prompt...): the start of a line
// of its own, which a reflow does not make.
bool OpensRecord(std::string_view s);

// Whether `s` holds nothing but the prefixes that open a record (a rank, a worker's tag,
// timestamps, a logger's level and date with its "[file.py:N]"): a line whose message a reflow
// put on the next line.
bool PrefixesOnly(std::string_view s);

}  // namespace vramfit::doctor

#endif  // VRAMFIT_DOCTOR_PASTE_H_
