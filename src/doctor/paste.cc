// How pasted and collected logs wrap the engines' lines (paste.h).
#include "doctor/paste.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <iterator>
#include <utility>
#include <vector>

#include <simdjson.h>

#include "doctor/text_scan.h"

namespace vramfit::doctor {

// Lists of literals are written "..."sv: their lengths are known when compiled (a list of
// pointers is measured with strlen on every pass of a loop, on every line of a log).
using std::string_view_literals::operator""sv;
namespace {

// The keys a collector's JSON record keeps the line under: Docker's json-file driver
// ({"log":"...\n","stream":"stderr","time":"..."}), journald's JSON output ("MESSAGE"), Google
// Cloud Logging ("textPayload"), and the "message" of most others (Loki, Elasticsearch, AWS
// CloudWatch exports).
constexpr std::string_view kJsonKeys[] = {"log", "MESSAGE", "textPayload", "message"};

// A collector's record: the line kept under the first of kJsonKeys the object has (simdjson
// decodes its escapes). False for anything that is not one whole JSON object.
bool JsonRecord(std::string_view line, std::string* out) {
  size_t b = 0;
  while (b < line.size() && (line[b] == ' ' || line[b] == '\t')) ++b;
  if (b >= line.size() || line[b] != '{') return false;
  thread_local simdjson::dom::parser parser;
  simdjson::dom::object record;
  if (parser.parse(line.data() + b, line.size() - b).get(record) != simdjson::SUCCESS) {
    return false;
  }
  for (const std::string_view key : kJsonKeys) {
    std::string_view text;
    if (record[key].get(text) != simdjson::SUCCESS) continue;
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
    *out = std::string(text);
    return true;
  }
  return false;
}

// A Python traceback printed as a string (its repr, or a JSON error body): line ends written
// as the two characters backslash and n. Undone: \n, \t, \", \' and \\.
bool EscapedTraceback(std::string_view line, std::string* out) {
  if (!Has(line, "\\n")) return false;
  if (!Has(line, "Traceback (most recent call last):\\n") && !Has(line, "\\n  File \"") &&
      !Has(line, "\\n  File \\\"")) {
    return false;
  }
  std::string text;
  text.reserve(line.size());
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '\\' || i + 1 >= line.size()) {
      text += line[i];
      continue;
    }
    const char e = line[++i];
    switch (e) {
      case 'n': text += '\n'; break;
      case 't': text += '\t'; break;
      case '"': case '\'': case '\\': text += e; break;
      default: text += '\\'; text += e;
    }
  }
  *out = std::move(text);
  return true;
}

// HTML's escapes of the characters a log line holds (a log copied from a web page's source or a
// feed): &quot; &#39; &#x27; &apos; &lt; &gt; &amp;.
bool HtmlEscaped(std::string_view line, std::string* out) {
  if (!Has(line, "&quot;") && !Has(line, "&#39;") && !Has(line, "&#x27;") &&
      !Has(line, "&lt;") && !Has(line, "&gt;")) {
    return false;
  }
  constexpr std::pair<std::string_view, char> kEntities[] = {
      {"&quot;", '"'}, {"&#39;", '\''}, {"&#x27;", '\''}, {"&apos;", '\''},
      {"&lt;", '<'},   {"&gt;", '>'},   {"&amp;", '&'}};
  std::string text;
  text.reserve(line.size());
  for (size_t i = 0; i < line.size();) {
    bool done = false;
    if (line[i] == '&') {
      for (const auto& [entity, c] : kEntities) {
        if (line.compare(i, entity.size(), entity) == 0) {
          text += c;
          i += entity.size();
          done = true;
          break;
        }
      }
    }
    if (!done) text += line[i++];
  }
  *out = std::move(text);
  return true;
}

// A log whose line ends were lost (a web page's text without its <pre>, a chat message, a form
// that joins lines with spaces): one long line holding several of the engines' records. The
// records are split apart again where one of them begins after a space: a traceback's header
// or frame, a logger's level and date (vLLM's "INFO 03-10 08:07:20"), a worker's or rank's
// prefix, an ISO or bracketed timestamp, Ollama's "time=", llama.cpp's "llama_..: " function
// prefixes, and the exception lines PyTorch and Python print. Only a line of kFlatLineBytes or
// more where one kind of beginning comes kFlatRepeats times, that holds a traceback, or whose
// exception line follows words of prose (ProseBefore) is split: an engine's own long line (a
// config dump, PyTorch's out-of-memory message) holds them only in its prefixes.
constexpr size_t kFlatLineBytes = 160;
constexpr int kFlatRepeats = 3;

bool Digits(std::string_view s, size_t at, size_t n) {
  if (at + n > s.size()) return false;
  for (size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

// "2026-12-05" at `at`.
bool IsoDate(std::string_view s, size_t at) {
  return Digits(s, at, 4) && at + 10 <= s.size() && s[at + 4] == '-' && Digits(s, at + 5, 2) &&
         s[at + 7] == '-' && Digits(s, at + 8, 2);
}

// An exception's line: a (dotted) name ending in "Error" or "Exception" and a colon
// ("torch.OutOfMemoryError:", "ValueError:", "ray.exceptions.RayTaskError(...)"). Not the bare
// word, which a message holds in its middle ("CUDA Error: out of memory at ...", vLLM's sleep-mode
// allocator; "HIP Error: ...") as often as a line begins with it.
bool ExceptionLine(std::string_view r) {
  size_t e = 0;
  while (e < r.size() && (std::isalnum(static_cast<unsigned char>(r[e])) || r[e] == '_' ||
                          r[e] == '.')) {
    ++e;
  }
  const std::string_view name = r.substr(0, e);
  if (e >= r.size() || (r[e] != ':' && r[e] != '(')) return false;
  return (name.ends_with("Error") && name.size() > 5) ||
         (name.ends_with("Exception") && name.size() > 9);
}

// llama.cpp's lines open with their function's name and ": " (llama_model_loader:,
// llm_load_tensors:, ggml_cuda_init:, load_tensors:, print_info:, graph_reserve:,
// clip_model_loader:): a lower-case name of its families with an underscore.
bool FunctionPrefix(std::string_view r) {
  static constexpr std::string_view kFamilies[] = {"llama", "llm_", "ggml_", "load_", "print_",
                                                   "clip_", "graph_", "sched_", "common_"};
  if (std::none_of(std::begin(kFamilies), std::end(kFamilies),
                   [&](std::string_view f) { return r.substr(0, f.size()) == f; })) {
    return false;
  }
  size_t e = 0;
  while (e < r.size() && ((r[e] >= 'a' && r[e] <= 'z') || (r[e] >= '0' && r[e] <= '9') ||
                          r[e] == '_')) {
    ++e;
  }
  return e + 1 < r.size() && r[e] == ':' && r[e + 1] == ' ';
}

// The kinds of record RecordBegins tells apart, so that a kind repeated along one line shows
// the line ends were lost. The first eight follow kOpeners' order.
enum Kind : int {
  kNoRecord,
  kTracebackHeader,
  kFrame,
  kDuringHandling,
  kDirectCause,
  kPanic,
  kGoroutine,
  kShardsBar,
  kCell,
  kArrow,
  kException,
  kFunction,
  kLevelDate,
  kWorker,
  kRank,
  kIsoTime,
  kBracketTime,
  kOllamaTime,
  kShellPrompt,
  kIpythonFrame,
  kAfterEnd,
  kGoFrame,
  kLevelDash,
  kPythonDict,
  kRecordKinds
};

// The kinds that open a record of their own wherever they stand (not a prefix of every line):
// after words of prose they show a line end lost even where none repeats (Flattened).
constexpr bool Opens(int kind) {
  return kind == kTracebackHeader || kind == kDuringHandling || kind == kDirectCause ||
         kind == kPanic || kind == kShardsBar || kind == kException || kind == kShellPrompt;
}

// (IPython prints its header without the colon, after the exception's name: "OutOfMemoryError
// <spaces> Traceback (most recent call last)"; its frames open "Cell In[7], line 3" from 8.0.)
constexpr std::string_view kOpeners[] = {
    "Traceback (most recent call last)", "File \"", "During handling of the above",
    "The above exception was", "panic: ", "goroutine ", "Loading checkpoint shards:", "Cell In["};

// Where the source line a Python frame prints under itself begins, when the line ends were lost
// and it follows the frame's `File "PATH", line N, in NAME` on the same line (npos: it does
// not). NAME is one word (an identifier, "<module>", "<lambda>"); the code begins after it.
size_t FrameCodeAt(std::string_view s, size_t at) {
  const size_t line = s.find("\", line ", at);
  if (line == std::string_view::npos || line - at > 512) return std::string_view::npos;
  size_t i = line + 8;
  if (!Digits(s, i, 1)) return std::string_view::npos;
  while (Digits(s, i, 1)) ++i;
  if (s.substr(i, 5) != ", in ") return std::string_view::npos;
  i = s.find(' ', i + 5);  // past the function's name
  while (i < s.size() && s[i] == ' ') ++i;
  return i < s.size() ? i : std::string_view::npos;
}

// A record's end just before the space at `at - 1`, after which the program printed a line of
// its own: a progress bar's (tqdm's rate in brackets, "[01:01<00:00, 133.63it/s]" or
// "20.31s/it]") or PyTorch's out-of-memory message's (its last words: "See documentation for
// Memory Management and PYTORCH_CUDA_ALLOC_CONF", from 2.2 "... Management
// (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)").
bool AfterEnd(std::string_view s, size_t at) {
  if (at < 8) return false;
  const std::string_view before = s.substr(0, at - 1);
  return (before.back() == ']' &&
          (s.substr(at - 6, 4) == "it/s" || s.substr(at - 6, 4) == "s/it")) ||
         before.ends_with("PYTORCH_CUDA_ALLOC_CONF") || before.ends_with("#environment-variables)");
}

// The kind of record that begins at `at` (kNoRecord: none).
int RecordBegins(std::string_view s, size_t at) {
  const std::string_view r = s.substr(at);
  if (r.empty()) return kNoRecord;
  const auto starts = [&](std::string_view p) { return r.substr(0, p.size()) == p; };
  // Told apart by the first byte: a long line has a candidate after each of its spaces.
  const char c = r[0];
  if (c == 'T' || c == 'F' || c == 'D' || c == 'p' || c == 'g' || c == 'L' || c == 'C') {
    for (size_t k = 0; k < std::size(kOpeners); ++k) {
      if (starts(kOpeners[k])) return kTracebackHeader + static_cast<int>(k);
    }
  }
  if (c == 'I' || c == 'W' || c == 'E' || c == 'D' || c == 'C') {
    // Python's logging with the format "%(levelname)s - %(message)s" (AutoGPTQ's "INFO - Start
    // quantizing layer 1/32").
    for (std::string_view level : {"INFO - "sv, "WARNING - "sv, "ERROR - "sv, "DEBUG - "sv}) {
      if (starts(level)) return kLevelDash;
    }
    // vLLM's logger: the level, then the month and day ("INFO 03-10 08:07:20").
    for (std::string_view level :
         {"INFO "sv, "WARNING "sv, "ERROR "sv, "DEBUG "sv, "CRITICAL "sv}) {
      if (starts(level)) {
        const size_t d = level.size();
        const bool dated = Digits(r, d, 2) && d + 5 < r.size() && r[d + 2] == '-' &&
                           Digits(r, d + 3, 2) && r[d + 5] == ' ';
        return dated ? kLevelDate : kNoRecord;
      }
    }
  }
  // A Go stack's frame (a goroutine's trace under a panic: Ollama's runner): the function,
  // "github.com/ollama/ollama/ml/backend/ggml.(*Context).Reserve(0xc000a36000)" or "created by
  // ...", then its file, "/go/src/github.com/.../ggml.go:811 +0x345".
  if (starts("github.com/") || starts("created by ")) return kGoFrame;
  if (c == '/') {
    const size_t go = r.substr(0, 300).find(".go:");
    if (go != std::string_view::npos && Digits(r, go + 4, 1)) {
      const size_t plus = r.find(" +0x", go);
      if (plus != std::string_view::npos && plus < go + 12) return kGoFrame;
    }
  }
  // IPython 8's frame: "File ~/venv/.../utils.py:2390, in GenerationMixin.generate(self, ...)".
  if (c == 'F' && starts("File ") && r.size() > 6 && (r[5] == '~' || r[5] == '/')) {
    const size_t py = r.substr(0, 400).find(".py:");
    return py != std::string_view::npos && Digits(r, py + 4, 1) &&
                   r.find(", in ", py) < py + 16
               ? kIpythonFrame
               : kNoRecord;
  }
  // A Python dict printed as a line: the logs of transformers' Trainer ("{'loss': 1.9312,
  // 'grad_norm': 0.8127, ...}").
  if (c == '{' && r.size() > 4 && r[1] == '\'') {
    size_t e = 2;
    while (e < r.size() && e < 40 &&
           (std::isalnum(static_cast<unsigned char>(r[e])) || r[e] == '_')) {
      ++e;
    }
    return e > 2 && r.substr(e, 3) == "': " ? kPythonDict : kNoRecord;
  }
  // (Two dashes at least: IPython's "---> 3" arrow, not an arrow in prose.)
  if (c == '-' && IpythonArrow(r, 2)) return kArrow;
  if (std::isalpha(static_cast<unsigned char>(c)) && ExceptionLine(r)) return kException;
  if (c >= 'a' && c <= 'z' && FunctionPrefix(r)) return kFunction;
  // A worker's prefix ("(EngineCore_DP0 pid=812)", "(VllmWorker rank=1 pid=903752)") or a
  // launcher's rank ("[rank0]:"), looked for in the first bytes only.
  if (c == '(') {
    const std::string_view head = r.substr(0, 64);
    const size_t pid = head.find(" pid=");
    return pid < 48 && head.find(')', pid) != std::string_view::npos ? kWorker : kNoRecord;
  }
  if (c == '[') {
    if (starts("[rank") && Digits(r, 5, 1)) return kRank;
    return IsoDate(r, 1) ? kBracketTime : kNoRecord;
  }
  // Timestamps: ISO ("2026-12-05 18:00:00", "2026-12-05T18:00:00"), Ollama's "time=2026-...".
  if (c >= '0' && c <= '9') {
    const bool iso = IsoDate(r, 0) && r.size() > 13 && (r[10] == ' ' || r[10] == 'T') &&
                     Digits(r, 11, 2) && r[13] == ':';
    return iso ? kIsoTime : kNoRecord;
  }
  // A shell's prompt before the command typed at it ("$ python run.py", "$ ./main -m ...").
  if (c == '$') {
    return r.size() > 2 && r[1] == ' ' && ((r[2] >= 'a' && r[2] <= 'z') || r.substr(2, 2) == "./")
               ? kShellPrompt
               : kNoRecord;
  }
  return c == 't' && starts("time=") && IsoDate(r, 5) ? kOllamaTime : kNoRecord;
}

// Past the prefixes that open a record at `at` (a rank, a worker's tag, timestamps, vLLM's level
// and date with its "[file.py:N]"), and the spaces after them.
size_t PrefixesEnd(std::string_view s, size_t at) {
  for (;;) {
    while (at < s.size() && s[at] == ' ') ++at;
    const size_t was = at;
    switch (at < s.size() ? RecordBegins(s, at) : kNoRecord) {
      case kLevelDate:  // "INFO 03-10 08:07:20 [core.py:302]"
        at = s.find(' ', at);  // past the level, then the date, then the time
        if (at != std::string_view::npos) at = s.find(' ', at + 1);
        if (at != std::string_view::npos) at = s.find(' ', at + 1);
        if (at != std::string_view::npos && at + 1 < s.size() && s[at + 1] == '[' &&
            s.find(']', at) != std::string_view::npos) {
          at = s.find(']', at) + 1;
        }
        break;
      case kWorker:  // "(EngineCore_DP0 pid=812)"
        at = s.find(')', at) + 1;
        break;
      case kRank:  // "[rank0]:"
        at = s.find(']', at);
        if (at != std::string_view::npos) at += at + 1 < s.size() && s[at + 1] == ':' ? 2 : 1;
        break;
      case kIsoTime:  // "2026-12-05 18:00:00,123" or "2026-12-05T18:00:00.1Z"
        at = s[at + 10] == ' ' ? s.find(' ', at + 11) : s.find(' ', at);
        break;
      case kBracketTime:  // "[2026-12-05 18:00:00 TP0]"
        at = s.find(']', at);
        at = at == std::string_view::npos ? s.size() : at + 1;
        break;
      case kOllamaTime:  // "time=2026-12-05T18:00:00.000Z"
        at = s.find(' ', at);
        break;
      default:
        return at;
    }
    if (at == std::string_view::npos || at > s.size()) return s.size();
    if (at == was) return at;
  }
}

// Prose before an exception's line on one line: the lines a program printed before its error,
// joined to it (a training loop's step, a loader's message), not the prefix a collector or a
// launcher puts before every line (a rank's "[rank1]:", journald's "Jul 14 09:26:53 node-3
// serve[48211]:", docker compose's "name-1  |", a timestamp, a logger's level, a terminal's
// colour code). Told apart by words: four or more of letters alone (a quote or parenthesis
// around them, a comma, stop or colon after them allowed), which no prefix holds; or by a
// Python statement a traceback prints as a frame's source ("return self._apply(lambda t:
// t.cuda(device))"), which opens with a keyword and ends in a bracket.
bool ProseBefore(std::string_view before) {
  int words = 0;
  size_t i = 0;
  while (i < before.size() && words < 4) {
    while (i < before.size() && before[i] == ' ') ++i;
    if (i < before.size() && (before[i] == '"' || before[i] == '\'' || before[i] == '(')) ++i;
    const size_t b = i;
    while (i < before.size() && std::isalpha(static_cast<unsigned char>(before[i]))) ++i;
    const size_t letters = i - b;
    if (i < before.size() && std::strchr(",.;:!?", before[i]) != nullptr) ++i;
    if (i < before.size() && std::strchr("\"')", before[i]) != nullptr) ++i;
    const bool word = letters >= 2 && (i == before.size() || before[i] == ' ');
    while (i < before.size() && before[i] != ' ') ++i;
    words += word;
  }
  if (words >= 4) return true;
  while (!before.empty() && before.back() == ' ') before.remove_suffix(1);
  return !before.empty() && (before.back() == ')' || before.back() == ']') &&
         (before.starts_with("return ") || before.starts_with("raise ") ||
          before.starts_with("yield ") || before.starts_with("await "));
}

bool Flattened(std::string_view line, std::string* out) {
  if (line.size() < kFlatLineBytes) return false;
  // Where records begin after a space, and how often each kind does (the line's first record
  // counted too).
  std::vector<size_t> begins;
  std::vector<size_t> code;  // those of them that are a frame's source line
  int seen[kRecordKinds] = {};
  const size_t text_from = line.find_first_not_of(" \t");  // past the indentation
  if (text_from == std::string_view::npos) return false;
  // A cheap test before the scan: a word of a record that opens a line wherever it stands (a
  // traceback's frame or exception, a progress bar's or PyTorch message's end, a prompt, a Go
  // stack's offsets, a Trainer's dict, llama.cpp's functions), or the line's first bytes (its
  // records' common opening: a timestamp's year, a worker's tag, a level) twice more further
  // on. A serving log's long lines (vLLM's metrics) hold none of them.
  const auto npos = std::string_view::npos;
  // (A needle in the line's first word after its prefixes is that record's own, as printed:
  // "[rank0]: torch.OutOfMemoryError: ...", a bar that opens the line. Each needle is looked
  // for past it by its first byte, which libc's memchr finds a vector at a time.)
  static constexpr std::string_view kNeedles[] = {
      "File ", "--> ", "Error", "Exception", "Loading checkpoint shards:", "$ ", "/s] ",
      "/it] ", "_CONF ", "-variables) ", "+0x", "{'", "INFO - ", "llama_", "ggml_", "Cell In["};
  const size_t first_word_end = line.find(' ', PrefixesEnd(line, text_from));
  const auto found = [&] {
    return first_word_end != npos &&
           std::any_of(std::begin(kNeedles), std::end(kNeedles),
                       [&](std::string_view n) { return line.find(n, first_word_end) != npos; });
  };
  // (Or a worker's tag, a rank, a timestamp or a level three times, wherever the line begins.)
  static constexpr std::string_view kRepeated[] = {" pid=", "[rank", "time=", "INFO ",
                                                   "WARNING ", "ERROR "};
  const auto thrice = [&](std::string_view n) {
    size_t at = line.find(n);
    for (int k = 1; k < kFlatRepeats && at != npos; ++k) at = line.find(n, at + n.size());
    return at != npos;
  };
  if (!found() && std::none_of(std::begin(kRepeated), std::end(kRepeated), thrice)) {
    const std::string_view opening = line.substr(text_from, 6);
    const size_t again = line.find(opening, text_from + opening.size());
    if (opening.size() < 6 || again == npos ||
        line.find(opening, again + opening.size()) == npos) {
      return false;
    }
  }
  bool repeated = false;
  size_t first_opening = npos;  // the first record that Opens after the line's first one
  bool after_end = false;  // a record after a progress bar's or PyTorch message's end
  ++seen[RecordBegins(line, text_from)];
  for (size_t i = text_from + 1; i < line.size(); ++i) {
    if (line[i - 1] != ' ' || line[i] == ' ') continue;
    int kind = RecordBegins(line, i);
    const bool ended = AfterEnd(line, i);
    if (kind == kNoRecord && ended) kind = kAfterEnd;
    if (kind == kNoRecord) continue;
    after_end |= ended;
    begins.push_back(i);
    repeated |= ++seen[kind] >= kFlatRepeats;
    if (Opens(kind) && first_opening == npos) first_opening = i;
    // A frame's source line after it is a record of its own.
    if (kind == kFrame) code.push_back(FrameCodeAt(line, i));
  }
  if (RecordBegins(line, text_from) == kFrame) code.push_back(FrameCodeAt(line, text_from));
  // (Not where a record begins anyway: a rank's prefix before the code keeps it a line of its
  // own, as printed.)
  std::erase_if(code, [&](size_t c) {
    return c == std::string_view::npos || RecordBegins(line, c) != kNoRecord;
  });
  // One line of an engine holds each of these at most twice (a collector's timestamp before
  // the program's own, nested workers' tags); a frame (Python's, IPython's cell, arrow or
  // frame) after a traceback's header or before an exception is a traceback laid on one line,
  // as a panic and a goroutine are a Go program's crash; nothing follows a bar's or PyTorch
  // message's end on its own line, nor an opening record prose on its line.
  const bool framed =
      seen[kFrame] > 0 || seen[kCell] > 0 || seen[kArrow] > 0 || seen[kIpythonFrame] > 0;
  if (!repeated && !after_end &&
      !(framed && (seen[kTracebackHeader] > 0 || seen[kException] > 0)) &&
      !(seen[kPanic] > 0 && seen[kGoroutine] > 0) &&
      !(first_opening != npos &&
        ProseBefore(line.substr(text_from, first_opening - text_from)))) {
    return false;
  }
  begins.insert(begins.end(), code.begin(), code.end());
  std::sort(begins.begin(), begins.end());
  begins.erase(std::unique(begins.begin(), begins.end()), begins.end());
  std::string text;
  size_t from = 0;
  size_t prefixes_end = PrefixesEnd(line, from);  // worked out once for each record
  for (const size_t i : begins) {
    size_t end = i - 1;  // drop the spaces that stood for the line end
    while (end > from && line[end - 1] == ' ') --end;
    // Prefixes alone (a rank, a worker's tag, a timestamp before the logger's level) stay with
    // the record they open.
    if (prefixes_end >= end) continue;
    text.append(line.substr(from, end - from));
    text += '\n';
    // A frame's source line indented as Python prints it: read as the frame's code, not as the
    // rest of a frame line a terminal cut.
    if (std::find(code.begin(), code.end(), i) != code.end()) text += "    ";
    from = i;
    prefixes_end = PrefixesEnd(line, from);
  }
  text.append(line.substr(from));
  *out = std::move(text);
  return true;
}

}  // namespace

bool OpensRecord(std::string_view s) { return RecordBegins(s, 0) != kNoRecord; }

bool PrefixesOnly(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
  return !s.empty() && RecordBegins(s, 0) != kNoRecord && PrefixesEnd(s, 0) >= s.size();
}

// Lost line ends, read in the plain characters a web page's typesetting stands for (no-break
// spaces, curly quotes: text_scan.h PlainTypography), which the records' own marks are written
// in ("File \"", a prefix's spaces).
bool FlattenedPlain(std::string_view line, std::string* out) {
  // (Only where such a character is there: a no-break space, or general punctuation's curly
  // quotes, not the block characters of a progress bar.)
  unsigned char high = 0;
  for (const char ch : line) high |= static_cast<unsigned char>(ch);
  bool typeset = false;
  for (size_t i = 0; high >= 0x80 && !typeset && i + 1 < line.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(line[i]);
    const unsigned char n = static_cast<unsigned char>(line[i + 1]);
    typeset = (c == 0xc2 && n == 0xa0) || (c == 0xe2 && n == 0x80);
  }
  if (typeset) {
    std::string plain(line);
    PlainTypography(&plain);
    if (plain != line) return Flattened(plain, out);
  }
  return Flattened(line, out);
}

bool Unwrap(std::string_view line, std::string* out) {
  // Every wrapper holds one of these bytes; most lines hold none and stop here, or, when long,
  // are only looked at for lost line ends.
  const size_t open = line.find_first_not_of(" \t");
  if ((open == std::string_view::npos || line[open] != '{') &&
      std::memchr(line.data(), '\\', line.size()) == nullptr &&
      std::memchr(line.data(), '&', line.size()) == nullptr) {
    return line.size() >= kFlatLineBytes && FlattenedPlain(line, out);
  }
  std::string text;
  bool unwrapped = JsonRecord(line, &text);
  if (unwrapped) line = text;
  std::string more;
  if (EscapedTraceback(line, &more) || HtmlEscaped(line, &more)) {
    text = std::move(more);
    line = text;
    unwrapped = true;
  }
  // (Typeset too: a Windows traceback's backslashes bring a curly-quoted flattened one here.)
  if (FlattenedPlain(line, &more)) {
    text = std::move(more);
    unwrapped = true;
  }
  if (unwrapped) *out = std::move(text);
  return unwrapped;
}

}  // namespace vramfit::doctor
