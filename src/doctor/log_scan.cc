// The log scanner (see vramfit/doctor.h): bytes in, events out. One pass, chunked reads, lines
// cut at a cap; each line is cleaned of ANSI colours, its rank read from the worker prefix, and
// handed to every reader of the readers table (readers/table.cc) in order, with the previous
// line's message joined to it (a message wrapped over two lines). What a collector or a paste
// put before each line (docker compose's service column, kubectl's and journald's headers, a
// quote, a code block's indent) is removed; the engine's own worker prefixes and timestamps are
// kept: the readers' matches are substring matches. The first lines are looked ahead at (at
// most 256 lines or 256 KiB), so that a terminal's wrap width that shows only later is applied
// to them too.
//
// The event cap never drops the failure: routine events (serving metrics, engine markers) are
// kept only for their first occurrences per rank, and past the cap the last failure events are
// kept in a bounded tail that is appended at the end.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <utility>

#include "core/text.h"
#include "doctor/facts.h"
#include "doctor/log_feed.h"
#include "doctor/paste.h"
#include "doctor/readers/reader.h"
#include "doctor/text_scan.h"
#include "vramfit/doctor.h"

namespace vramfit {

// Lists of literals are written "..."sv: their lengths are known when compiled (a list of
// pointers is measured with strlen on every pass of a loop, on every line of a log).
using std::string_view_literals::operator""sv;
namespace {

using doctor::Has;
using doctor::HasNoCase;

// Where `key` first occurs in `s` when that is before `limit`; npos otherwise (the search
// stops there).
size_t FindBefore(const doctor::LineView& s, std::string_view key, size_t limit) {
  if (s.bigrams && !s.bigrams->MayHave(key)) return std::string_view::npos;
  return s.substr(0, limit + key.size() - 1).find(key);
}

// The rank a worker prefix names: "(... rank=1 pid=..)", "(Worker_TP3 pid=..)", "[... TP0]",
// "(Worker_TP3_EP3 ..)", "[rank0]:". The engine's own worker label comes first: a launcher's
// "[rank0]: " put before it (torchrun's) may stand for a process that holds several of the
// engine's ranks, or be one rank's prefix pasted over all lines.
std::string RankOf(const doctor::LineView& s) {
  size_t at = FindBefore(s, "rank=", 80);
  if (at != std::string_view::npos) {
    size_t e = at + 5;
    while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) ++e;
    return "rank" + std::string(s.substr(at + 5, e - at - 5));
  }
  for (std::string_view key : {"_TP"sv, " TP"sv}) {
    at = FindBefore(s, key, 80);
    if (at != std::string_view::npos) {
      size_t e = at + key.size();
      while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) ++e;
      if (e > at + key.size())
        return "TP" + std::string(s.substr(at + key.size(), e - at - key.size()));
    }
  }
  at = FindBefore(s, "[rank", 80);
  if (at != std::string_view::npos) {
    size_t e = at + 5;
    while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) ++e;
    return "rank" + std::string(s.substr(at + 5, e - at - 5));
  }
  return "";
}

// The log prefix of a line: up to the end of the last "] " or "]: " within its first 160 bytes
// ("(EngineCore pid=1) ERROR 09-08 19:01:04 [core.py:700] ", "[rank0]: "); "" when none.
size_t PrefixEnd(std::string_view s) {
  const std::string_view head = s.substr(0, 160);
  size_t end = 0;
  for (size_t at = head.find(']'); at != std::string_view::npos; at = head.find(']', at + 1)) {
    if (at + 1 < s.size() && s[at + 1] == ' ') end = at + 2;
    if (at + 2 < s.size() && s[at + 1] == ':' && s[at + 2] == ' ') end = at + 3;
  }
  return end;
}

// Python's (3.11+) markers under a traceback's code line ("    ~~~~~~~~~~~~~~^^^^^^^^^^"), after
// the line's log prefix: only spaces, tildes and at least one caret. They say nothing of their
// own and stand between a code line and the error it raised.
bool CaretLine(std::string_view s) {
  // Most lines hold no caret: one byte search before the prefix is measured.
  if (s.find('^') == std::string_view::npos) return false;
  s.remove_prefix(PrefixEnd(s));
  bool caret = false;
  for (char c : s) {
    if (c == '^') {
      caret = true;
    } else if (c != '~' && c != ' ' && c != '\t') {
      return false;
    }
  }
  return caret;
}

bool Digits(std::string_view s, size_t at, size_t n) {
  if (at + n > s.size()) return false;
  for (size_t i = at; i < at + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

// What a collector or a paste puts before the engine's own line, and how long it is (0 when
// none): a GitHub reply's quote ("> ", also fairscale's own "> initializing ..." lines, which
// the readers match without it); docker compose's service column ("vllm-1  | ");
// kubectl --timestamps' RFC 3339 time ("2025-07-14T09:26:53.481734012Z ", one space after it:
// TGI's own tracing time has two before the level and is the engine's, kept); journald's
// syslog header ("Jul 14 09:26:53 host unit[123]: "). Readers then see the line as the engine
// wrote it, so that checks on how a line begins (a shell's "Killed", a prompt, a frame) hold
// under any capture.
size_t CapturePrefix(std::string_view s) {
  if (!s.empty() && s[0] == '>') {
    size_t n = 1;
    while (n < s.size() && s[n] == '>') ++n;
    return n < s.size() && s[n] == ' ' ? n + 1 : n;
  }
  // kubectl logs --prefix: "[pod/NAME/CONTAINER] " (the log source, a kind and two names).
  if (s.starts_with("[pod/")) {
    const size_t close = s.substr(0, 320).find("] ");
    if (close != std::string_view::npos && close > 5) {
      const std::string_view source = s.substr(5, close - 5);
      if (std::count(source.begin(), source.end(), '/') == 1 &&
          source.find(' ') == std::string_view::npos) {
        return close + 2;
      }
    }
  }
  // docker compose: NAME, spaces, '|', a space (or the line's end).
  size_t n = 0;
  while (n < s.size() && n <= 64 &&
         (std::isalnum(static_cast<unsigned char>(s[n])) || s[n] == '_' || s[n] == '-' ||
          s[n] == '.')) {
    ++n;
  }
  // A service's name has a lower-case letter or a digit ("vllm-1"): an upper-case word before a
  // column ("INFO  | gptq | 41 |", GPTQModel's table) is a log level.
  bool named = false;
  for (size_t i = 0; i < n; ++i) {
    named = named || std::islower(static_cast<unsigned char>(s[i])) ||
            std::isdigit(static_cast<unsigned char>(s[i]));
  }
  if (named && n <= 64 && n < s.size() && s[n] == ' ') {
    size_t m = n;
    while (m < s.size() && s[m] == ' ') ++m;
    if (m < s.size() && s[m] == '|' && (m + 1 == s.size() || s[m + 1] == ' ')) {
      return std::min(m + 2, s.size());
    }
  }
  // kubectl --timestamps: YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM) and one space.
  if (Digits(s, 0, 4) && s.size() > 20 && s[4] == '-' && Digits(s, 5, 2) && s[7] == '-' &&
      Digits(s, 8, 2) && s[10] == 'T' && Digits(s, 11, 2) && s[13] == ':' && Digits(s, 14, 2) &&
      s[16] == ':' && Digits(s, 17, 2)) {
    size_t e = 19;
    if (e < s.size() && s[e] == '.') {
      ++e;
      while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) ++e;
    }
    if (e < s.size() && s[e] == 'Z') {
      ++e;
    } else if (e + 6 <= s.size() && (s[e] == '+' || s[e] == '-') && Digits(s, e + 1, 2) &&
               s[e + 3] == ':' && Digits(s, e + 4, 2)) {
      e += 6;
    } else {
      return 0;
    }
    // An empty line keeps its stamp and the one space ("...Z "): it goes whole.
    if (e + 1 == s.size() && s[e] == ' ') return e + 1;
    if (!(e + 1 < s.size() && s[e] == ' ' && s[e + 1] != ' ')) return 0;
    // The container runtime's own log file (CRI, /var/log/pods: "TIME STREAM TAG LOG", the tag
    // F for a whole line, P for a part of one): its stream and tag go too.
    for (std::string_view stream : {"stdout "sv, "stderr "sv}) {
      const std::string_view rest = s.substr(e + 1);
      if (rest.size() > stream.size() + 2 && rest.substr(0, stream.size()) == stream &&
          (rest[stream.size()] == 'F' || rest[stream.size()] == 'P') &&
          rest[stream.size() + 1] == ' ') {
        return e + 1 + stream.size() + 2;
      }
    }
    return e + 1;
  }
  // journald: "Mon DD HH:MM:SS HOST UNIT[PID]: " (the day space-padded or not).
  static constexpr std::string_view kMonths = "JanFebMarAprMayJunJulAugSepOctNovDec";
  if (s.size() > 20 && std::isupper(static_cast<unsigned char>(s[0])) && s[3] == ' ' &&
      kMonths.find(s.substr(0, 3)) % 3 == 0 && kMonths.find(s.substr(0, 3)) != kMonths.npos) {
    size_t e = 4;
    if (s[e] == ' ') ++e;
    if (!Digits(s, e, 1)) return 0;
    e += Digits(s, e, 2) ? 2 : 1;
    if (!(e + 9 <= s.size() && s[e] == ' ' && Digits(s, e + 1, 2) && s[e + 3] == ':' &&
          Digits(s, e + 4, 2) && s[e + 6] == ':' && Digits(s, e + 7, 2))) {
      return 0;
    }
    // The host and the unit, then "]: " or ": " within the next 96 bytes.
    const size_t head_end = std::min(s.size(), e + 9 + 96);
    const size_t colon = s.substr(0, head_end).find(": ", e + 9);
    if (colon == std::string_view::npos) return 0;
    return colon + 2;
  }
  return 0;
}

// The program a collector's prefix (CapturePrefix, one piece) names: journald's unit, docker
// compose's service, kubectl --prefix's container; "" for a quote or a timestamp.
std::string_view CollectorSource(std::string_view piece) {
  if (piece.starts_with("[pod/")) {
    const size_t close = piece.find(']');
    const size_t slash = piece.rfind('/', close);
    return close != std::string_view::npos && slash != std::string_view::npos
               ? piece.substr(slash + 1, close - slash - 1)
               : std::string_view();
  }
  while (!piece.empty() && piece.back() == ' ') piece.remove_suffix(1);
  if (piece.ends_with("|")) return piece.substr(0, piece.find(' '));  // docker compose
  if (!piece.ends_with(":")) return {};
  piece.remove_suffix(1);  // journald: "... HOST UNIT[PID]:" or "... HOST UNIT:"
  if (piece.ends_with("]")) piece = piece.substr(0, piece.rfind('['));
  const size_t space = piece.rfind(' ');
  return space == std::string_view::npos ? std::string_view() : piece.substr(space + 1);
}

std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Events that only show the engine is running: kept for their first occurrences per rank.
bool Routine(EventKind k) {
  switch (k) {
    case EventKind::kServing:
    case EventKind::kVllmV1:
    case EventKind::kVllmV0:
    case EventKind::kPrompt:
    case EventKind::kConfig:
    case EventKind::kMmHint:
    case EventKind::kSglangMarker:
    case EventKind::kVllmMarker:
    case EventKind::kOllamaMarker:
    case EventKind::kTgiMarker:
    case EventKind::kTrtllmMarker:
    case EventKind::kRequest:
    // (Code and words that load or run a model: only whether one was seen is read, and a
    // server's metrics lines, "Avg generation throughput", repeat them.)
    case EventKind::kLoadCall:
    case EventKind::kRunCall:
      return true;
    default:
      return false;
  }
}
constexpr uint64_t kRoutinePerRank = 16;
// Failure events kept past the event cap (the last ones).
constexpr size_t kTailEvents = 512;

class Scanner final : public doctor::EventSink {
 public:
  Scanner(LogScan* out, const ScanOptions& o, bool live = false)
      : out_(out), opt_(o), looking_ahead_(!live), live_(live) {}

  // A line of the log. The first lines are held until the terminal width the log was wrapped
  // at (if any) shows or the look-ahead is full, so that the lines before the width shows are
  // joined as the later ones are.
  void Line(std::string_view raw, bool cut, bool binary) {
    if (!looking_ahead_) {
      Read(raw, cut, binary);
      return;
    }
    if (!binary) {
      ForEachPiece(raw, /*numbered=*/false, [this](std::string_view piece) {
        ObserveWidth(Columns(doctor::StripAnsi(piece)), piece);
      });
      ObserveGutter(raw);
      const bool blank = Blank(raw);
      if (!blank) {
        ++ahead_text_lines_;
        if (ahead_after_text_) ++ahead_text_after_text_;
      }
      ahead_after_text_ = !blank;
    }
    ahead_bytes_ += raw.size();
    ahead_.push_back({std::string(raw), cut, binary});
    // (A wrap that shows in the first lines ends the look-ahead, unless those lines look
    // reflowed instead: broken before a word that did not fit, mostly short of the width, which
    // takes more lines to tell.)
    if ((at_longest_ >= kWrappedLines && !MayBeReflowed()) || ahead_.size() >= kLookAheadLines ||
        ahead_bytes_ >= kLookAheadBytes) {
      EndLookAhead();
    }
  }

  void EndLookAhead() {
    looking_ahead_ = false;
    // Every line of the look-ahead numbered in order (at least kGutterLines of them): a paste
    // with its viewer's line numbers ("cat -n", "nl", an editor's or a CI page's gutter). The
    // numbers and the separator after them go from every line that has them.
    gutter_ = gutter_lines_ >= kGutterLines && gutter_lines_ + 1 >= ahead_.size() &&
              gutter_sep_ != SIZE_MAX;
    for (const Held& h : ahead_) {
      if (h.binary) continue;
      const std::string_view text = std::string_view(h.raw).substr(GutterEnd(h.raw));
      size_t spaces = 0;
      while (spaces < text.size() && text[spaces] == ' ') ++spaces;
      if (spaces < text.size()) common_indent_ = std::min(common_indent_, spaces);
      size_t tabs = 0;
      while (tabs < text.size() && text[tabs] == '\t') ++tabs;
      if (text.find_first_not_of(" \t\r") != std::string_view::npos) {
        common_tabs_ = std::min(common_tabs_, tabs);
      }
    }
    // Every line indented by at least kBlockIndent spaces: the log was pasted indented (a
    // Markdown code block); a traceback's own frames are indented by 2 and 4 within the log.
    if (common_indent_ != SIZE_MAX && common_indent_ >= kBlockIndent) indent_ = common_indent_;
    // Or every line indented by a tab at least (a paste from an editor that indents with tabs).
    if (common_tabs_ != SIZE_MAX && common_tabs_ >= 1) indent_ = common_tabs_, indent_char_ = '\t';
    // No line of text followed by another: a paste that put a blank line after each (a web
    // page's copy, a "\r\r\n" ending); the blank lines are then no breaks in the log. Two
    // lines of text are enough (an error line and its wrapped rest).
    double_spaced_ = ahead_text_lines_ >= kDoubleSpacedLines && ahead_text_after_text_ == 0;
    reflow_ = ReflowWidth();
    replaying_ = true;
    for (const Held& h : ahead_) Read(h.raw, h.cut, h.binary);
    replaying_ = false;
    ahead_.clear();
    ahead_bytes_ = 0;
  }

  // The width a mail client or a forum's editor reflowed the log at, 0 when it shows none. A
  // reflow breaks each line longer than W at its last space within W, so no line is longer
  // than W, and a line it broke is followed by one whose first word would not have fitted on
  // it (the line, a space and that word are wider than W) and that opens no record of its own
  // (doctor::OpensRecord). W is the look-ahead's longest line, between kReflowNarrowest and
  // kReflowWidest columns (an engine's out-of-memory message alone is longer, unbroken), shown
  // by kReflowBreaks such breaks at least, which are most of the lines near that width
  // followed by text, in a look-ahead of kReflowLines lines of text at least, or
  // kReflowShortLines where a break is inside a memory failure's message (a shorter excerpt is its
  // messages, which Gather joins across a reflow already; a kernel's few OOM-killer lines can
  // look broken).
  size_t ReflowWidth() const {
    const ReflowSigns r = Reflow();
    if (r.widest == 0 || r.lines < kReflowShortLines) return 0;
    if (r.lines < kReflowLines && !r.message) return 0;
    // (A terminal's hard wrap cuts every piece at exactly the width, where a word ends at it
    // only now and then: most breaks at the very width are a wrap's that showed no width yet.)
    return r.breaks >= kReflowBreaks && r.breaks * 3 >= r.near * 2 && r.exact * 2 < r.breaks
               ? r.widest
               : 0;
  }

  // The look-ahead's first lines may be a reflow's: looked at until kReflowAhead lines.
  bool MayBeReflowed() const {
    if (ahead_.size() >= kReflowAhead) return false;
    const ReflowSigns r = Reflow();
    return r.widest != 0 && r.breaks - r.exact >= std::max(2, r.exact);
  }

  // What the look-ahead's lines show of a reflow (ReflowWidth): the widest line (0 when it is
  // not a reflow's width), the lines of text, the lines near the width followed by text, those
  // of them a reflow broke, those exactly as wide, and whether a memory failure's message (as
  // CUDA, PyTorch and ggml word it, longer than any reflow's width as printed) is on either side
  // of a break.
  struct ReflowSigns {
    size_t widest = 0, lines = 0;
    int near = 0, breaks = 0, exact = 0;
    bool message = false;
  };
  ReflowSigns Reflow() const {
    ReflowSigns r;
    std::vector<std::string_view> lines;
    for (const Held& h : ahead_) {
      if (h.binary || h.cut) return {};
      std::string_view t = std::string_view(h.raw).substr(GutterEnd(h.raw));
      while (!t.empty() && (t.back() == '\r' || t.back() == ' ')) t.remove_suffix(1);
      lines.push_back(t);
      // (A line of one word longer than the width is left whole by a reflow.)
      const size_t text = t.find_first_not_of(' ');
      if (text != std::string_view::npos && t.find(' ', text) != std::string_view::npos) {
        r.widest = std::max(r.widest, Columns(t));
      }
    }
    r.lines = static_cast<size_t>(
        std::count_if(lines.begin(), lines.end(), [](std::string_view t) { return !t.empty(); }));
    if (r.widest < kReflowNarrowest || r.widest > kReflowWidest) return {};
    for (size_t i = 0; i + 1 < lines.size(); ++i) {
      const std::string_view line = lines[i], next = lines[i + 1];
      const size_t cols = Columns(line);
      if (next.empty() || line.empty() || cols + kReflowWord < r.widest) continue;
      ++r.near;
      if (!ReflowBroke(line, next, r.widest)) continue;
      ++r.breaks;
      r.exact += cols == r.widest;
      for (const std::string_view t : {line, next}) {
        r.message |= t.find("out of memory") != std::string_view::npos ||
                     t.find("Tried to allocate") != std::string_view::npos ||
                     t.find("failed to allocate") != std::string_view::npos;
      }
    }
    return r;
  }

  // The terminal width the log was wrapped at (0: none shows, or the log was reflowed at word
  // breaks instead, whose pieces may look like a wrap's: ReflowWidth).
  size_t Wrap() const { return reflow_ == 0 && at_longest_ >= kWrappedLines ? longest_ : 0; }

  // `next` continues `line` in a log reflowed at `width`: its first word did not fit, and it is
  // no record of its own (nor indented, as a traceback's frames are, nor opening with the bytes
  // `line` opens with, as the records of one source do), or `line` is a record's prefixes alone
  // (its message, an exception's line, moved to the next).
  static bool ReflowBroke(std::string_view line, std::string_view next, size_t width) {
    if (line.empty() || next.empty() || next.front() == ' ' || next.front() == '\t' ||
        next.substr(0, kSameRecordBytes) == line.substr(0, kSameRecordBytes)) {
      return false;
    }
    const std::string_view word = next.substr(0, next.find(' '));
    return Columns(line) + 1 + Columns(word) > width &&
           (!doctor::OpensRecord(next) || doctor::PrefixesOnly(line));
  }

  void Read(std::string_view raw, bool cut, bool binary) {
    ++out_->lines;
    ++number_;
    if (gutter_ && !binary) raw.remove_prefix(GutterEnd(raw));
    if (cut) ++out_->long_lines;
    if (double_spaced_ && !binary && Blank(raw)) {
      // The line before stays the previous one (a message wrapped across the blank joins).
      if (prev_number_ + 1 == number_) prev_number_ = number_;
      if (!held_.empty()) held_last_ = number_;
      if (!message_.empty() && held_.empty()) message_last_ = number_;
      return;
    }
    if (binary) {
      ++out_->binary_lines;
      held_prefixes_ = held_file_ = false;
      if (!held_.empty()) ProcessHeld();
      return;
    }
    // A string with escaped line ends (a traceback printed as a repr or inside a JSON body) that
    // a terminal wrapped: its pieces are joined before its escapes are undone, which needs the
    // whole string (a piece may end between a backslash and its letter).
    const size_t wrap = Wrap();
    const bool full = wrap != 0 && Columns(raw) == wrap;
    if (!escaped_held_.empty() || (full && Has(raw, "\\n"))) {
      escaped_held_.append(raw);
      if (!full || escaped_held_.size() >= opt_.max_line_bytes) ReadEscapedHeld();
      return;
    }
    ForEachPiece(raw, /*numbered=*/true, [this](std::string_view piece) { Piece(piece); });
  }

  // The pieces of a wrapped string with escaped line ends, joined: read as one log line.
  void ReadEscapedHeld() {
    const std::string joined = std::exchange(escaped_held_, std::string());
    ForEachPiece(joined, /*numbered=*/true, [this](std::string_view piece) { Piece(piece); });
  }

  // The text lines of one log line: a collector's record or an escaped paste gives its lines,
  // any other line itself. Each line after the first gets a number of its own when `numbered`
  // (LogEvent::line; the file's line is kept for citing it).
  template <typename F>
  void ForEachPiece(std::string_view raw, bool numbered, F&& fn) {
    std::string text;
    // (A coloured line is parted in its plain text: a notebook's traceback holds ANSI codes
    // inside its records' openings, "File \x1b[0;32m~/...", where each piece is read without
    // them anyway.)
    if (!doctor::Unwrap(raw.find('\x1b') == std::string_view::npos ? raw
                                                                   : doctor::StripAnsi(raw),
                        &text)) {
      fn(raw);
      return;
    }
    std::string_view rest = text;
    for (size_t end = rest.find('\n');; end = rest.find('\n')) {
      fn(rest.substr(0, end));
      if (end == std::string_view::npos) break;
      rest.remove_prefix(end + 1);
      if (!numbered) continue;
      // One entry for the file's line, its count of pieces raised as they come.
      if (shifts_.empty() || shifts_.back().file_line != out_->lines) {
        shifts_.push_back({number_, number_ - out_->lines, out_->lines, 0});
      }
      ++number_;
      ++shifts_.back().extra;
    }
  }

  // The file's line of a record numbered `n` (ForEachPiece).
  uint64_t FileLine(uint64_t n) const {
    const auto after =
        std::upper_bound(shifts_.begin(), shifts_.end(), n,
                         [](uint64_t v, const Shift& s) { return v < s.first; });
    if (after == shifts_.begin()) return n;
    const Shift& s = *std::prev(after);
    return n <= s.first + s.extra ? s.file_line : n - s.before - s.extra;
  }

  // One line of the engine's text: cleaned, and held while it is a piece a terminal wrapped.
  void Piece(std::string_view raw) {
    std::string clean = doctor::StripAnsi(raw);
    const size_t width = Columns(clean);  // the terminal's columns, before "--" for a dash
    doctor::PlainTypography(&clean);
    uint64_t first = number_;  // the line the logical one starts on
    if (!held_.empty()) {
      // A new record of the same source (its first bytes those of the held piece: a worker's
      // prefix, a timestamp's date) does not continue it; nor does an indented line after a
      // whole traceback frame (its code line: a terminal's continuation starts at column 0).
      // A frame line held for its own sake is continued only by the rest that makes it whole.
      const bool apart =
          held_reflow_ ? !ReflowBroke(held_tail_, clean, reflow_)
          : held_frame_ ? !FrameContinues(held_, clean)
          : held_file_ ? clean.empty() || clean.front() != '"'
          : held_prefixes_
              ? TrimSpaces(clean).empty() || doctor::OpensRecord(clean) ||
                    clean.compare(0, kSameRecordBytes, held_, 0, kSameRecordBytes) == 0
              : clean.compare(0, kSameRecordBytes, held_, 0, kSameRecordBytes) == 0 ||
                    (WholeFrameLine(held_) && !clean.empty() && clean[0] == ' ');
      held_frame_ = false;
      const bool prefixes_or_file =
          std::exchange(held_prefixes_, false) | std::exchange(held_file_, false);
      const bool reflowed =
          std::exchange(held_reflow_, false) || (prefixes_or_file && held_.back() != ' ');
      if (apart || held_.size() + clean.size() > opt_.max_line_bytes) {
        ProcessHeld();
      } else {
        if (reflowed || WordsOfOneMessage(held_, clean) || FrameReflowed(held_, clean)) {
          held_ += ' ';
        } else if (Letter(held_.back()) && !clean.empty() && Letter(clean.front())) {
          joints_.push_back(held_.size());  // between two letters: a word cut, or two words
        }
        held_ += clean;  // appended in place: a line of many pieces costs its length once
        clean.swap(held_);
        held_.clear();
        first = held_first_;
      }
    }
    if (!replaying_) ObserveWidth(width, raw);
    const size_t wrap = Wrap();
    // A line that opens one of the engines' long messages is gathered whole by Gather, which
    // decides each joint once the message is complete (JoinedParts): a line of exactly a
    // terminal's width may also be a reflow's, broken between two words.
    std::string_view closing;
    if (wrap != 0 && width == wrap && !TableRow(clean) && !LongMessageOpens(clean, &closing)) {
      held_ = std::move(clean);
      held_first_ = first;
      held_last_ = number_;
      return;
    }
    // In a reflowed log a line waits for the next, which may be its rest: a line near the width
    // before a short word, or a short one ("File") before a word that fills a line (a path).
    // ReflowBroke decides; the piece the reflow cut last is what is measured.
    if (reflow_ != 0 && wrap == 0 && width <= reflow_ && !clean.empty()) {
      held_tail_.assign(raw);
      held_ = std::move(clean);
      held_first_ = first;
      held_last_ = number_;
      held_reflow_ = true;
      return;
    }
    // A frame's "File" alone at a line's end, its path on the next line: a paste reflowed the
    // frame after the word (where no width shows). Joined to a next line that opens with the
    // path's quote; the frame line so made then waits for its rest as any other.
    if (EndsInFileWord(clean)) {
      held_ = std::move(clean);
      held_first_ = first;
      held_last_ = number_;
      held_file_ = true;
      return;
    }
    // A traceback frame line waits for the next line: a terminal may have cut it where no
    // width shows (a short excerpt with one or two long lines).
    if (clean.find("File \"") != std::string::npos) {
      held_ = std::move(clean);
      held_first_ = first;
      held_last_ = number_;
      held_frame_ = true;
      return;
    }
    // A record's prefixes alone ("(EngineCore_DP0 pid=1) ERROR 09-12 08:14:55 [core.py:708]"),
    // where no width shows: a paste reflowed the record after them and its message is the next
    // line, unless that opens a record of its own. (Most lines do not end in a bracket.)
    if (reflow_ == 0 && wrap == 0 && EndsInBracket(clean) && doctor::PrefixesOnly(clean)) {
      held_ = std::move(clean);
      held_first_ = first;
      held_last_ = number_;
      held_prefixes_ = true;
      return;
    }
    HandJoints(clean.size(), first, number_);
    Process(std::move(clean), first, number_);
  }

  // The held piece, processed (with the joints it was built with).
  void ProcessHeld() {
    HandJoints(held_.size(), held_first_, held_last_);
    Process(std::exchange(held_, std::string()), held_first_, held_last_);
  }

  // The joints of the logical line about to be processed, kept for Deliver (Spaced).
  void HandJoints(size_t size, uint64_t first, uint64_t last) {
    line_joints_.swap(joints_);
    joints_.clear();
    line_joints_size_ = size;
    line_joints_first_ = first;
    line_joints_last_ = last;
  }

  static bool Letter(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

  // The delivered line with a space put back at each joint between two letters where a
  // terminal's wrap seemed to cut it (Piece): where the "wrap" was a reflow at the same width
  // instead ("failed to allocate buffer" + "for kv cache" at exactly 100 columns), those joints
  // were spaces, and a message read whole needs them. Empty when the line had no such joint or
  // is not the one they were recorded for (`cut`: the capture prefix's bytes erased from it).
  void Spaced(std::string_view clean, size_t cut, uint64_t first, uint64_t last) {
    spaced_.clear();
    if (line_joints_.empty() || first != line_joints_first_ || last != line_joints_last_ ||
        cut + clean.size() != line_joints_size_) {
      return;
    }
    size_t from = 0;
    for (const size_t j : line_joints_) {
      if (j <= cut || j - cut > clean.size() || j - cut < from) {
        spaced_.clear();
        return;
      }
      spaced_.append(clean.substr(from, j - cut - from)).push_back(' ');
      from = j - cut;
    }
    spaced_.append(clean.substr(from));
    spaced_bigrams_.Build(spaced_);
  }

  // The line ends with a frame's indented "File" ("  File", after a prefix or none).
  static bool EndsInFileWord(std::string_view s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
    if (!s.ends_with("File")) return false;
    s.remove_suffix(4);
    return s.empty() || s.ends_with("  ") || s.ends_with(": ") || s.ends_with("] ");
  }

  static bool EndsInBracket(std::string_view s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
    return !s.empty() && s.back() == ']';
  }

  // A viewer's line number before a line: spaces, up to kGutterDigits digits, then a tab or
  // spaces, or the line's end (a blank line numbered). *sep is the separator's spaces (0 for a
  // tab or none). False when the line does not begin so.
  static bool GutterNumber(std::string_view raw, uint64_t* number, size_t* digits_end,
                           size_t* sep, bool* tab) {
    size_t i = 0;
    while (i < raw.size() && i < 8 && raw[i] == ' ') ++i;
    const size_t begin = i;
    uint64_t n = 0;
    while (i < raw.size() && i - begin < kGutterDigits &&
           std::isdigit(static_cast<unsigned char>(raw[i]))) {
      n = n * 10 + static_cast<uint64_t>(raw[i] - '0');
      ++i;
    }
    if (i == begin) return false;
    *number = n;
    *digits_end = i;
    *tab = i < raw.size() && raw[i] == '\t';
    size_t j = i;
    while (j < raw.size() && raw[j] == ' ') ++j;
    *sep = j - i;
    const bool line_end = i == raw.size() || raw.substr(i) == "\r";
    return *tab || *sep > 0 || line_end;
  }

  // A look-ahead line's gutter: numbered one more than the line before counts (the first any
  // number); the narrowest run of spaces after a number, among lines with text after it, is
  // the separator (the text's own indentation comes after it); a tab is one.
  void ObserveGutter(std::string_view raw) {
    uint64_t number = 0;
    size_t digits_end = 0, sep = 0;
    bool tab = false;
    if (!GutterNumber(raw, &number, &digits_end, &sep, &tab)) return;
    if (gutter_lines_ != 0 && number != gutter_last_ + 1) return;
    gutter_last_ = number;
    ++gutter_lines_;
    if (tab) {
      gutter_tab_ = true;
      gutter_sep_ = 0;
    } else if (!gutter_tab_ && sep > 0 && digits_end + sep < raw.size()) {
      gutter_sep_ = std::min(gutter_sep_ == SIZE_MAX ? sep : gutter_sep_, sep);
    } else if (!gutter_tab_ && gutter_sep_ == SIZE_MAX && sep == 0) {
      // A blank numbered line: no separator shows yet.
    }
  }

  // Where a line's text begins past the gutter the look-ahead found (0 when there is none or
  // this line lacks it).
  size_t GutterEnd(std::string_view raw) const {
    if (!gutter_) return 0;
    uint64_t number = 0;
    size_t digits_end = 0, sep = 0;
    bool tab = false;
    if (!GutterNumber(raw, &number, &digits_end, &sep, &tab)) return 0;
    if (digits_end == raw.size() || raw.substr(digits_end) == "\r") return raw.size();
    if (gutter_tab_) return tab ? digits_end + 1 : 0;
    return sep >= gutter_sep_ ? digits_end + gutter_sep_ : 0;
  }

  // `next` is the rest of the frame line `frame` a terminal cut: the two make a whole frame
  // line, and a frame that already looked whole was cut inside its function's name.
  static bool FrameContinues(std::string_view frame, std::string_view next) {
    if (next.empty() || frame.size() + next.size() > kWidestWrap * 4) return false;
    std::string joined(frame);
    joined.append(next);
    return (WholeFrameLine(joined) && (!WholeFrameLine(frame) || IdentifierRest(next))) ||
           FrameReflowed(frame, next);
  }
  // A frame line a paste reflowed at a space: `File "x.py", line 681,` + `in fn`, whole only
  // with the space put back (a terminal's cut, whole joined as it is, is not one).
  static bool FrameReflowed(std::string_view frame, std::string_view next) {
    if (WholeFrameLine(frame) || frame.empty() || next.empty() || frame.back() == ' ' ||
        next.front() == ' ') {
      return false;
    }
    std::string joined(frame);
    joined.append(next);
    if (WholeFrameLine(joined)) return false;
    joined.insert(frame.size(), 1, ' ');
    return WholeFrameLine(joined);
  }

  void Finish() {
    if (looking_ahead_) EndLookAhead();
    if (!escaped_held_.empty()) ReadEscapedHeld();
    if (!held_.empty()) ProcessHeld();
    EndCommand();
    EndMessage();
    // The last run shows no failure (a command pasted after the error, a start-up cut short):
    // it is read together with the run before it, as one.
    if (!failed_ && out_->earlier_runs > 0) {
      std::vector<LogEvent> events = std::move(earlier_.events);
      for (LogEvent& e : out_->events) events.push_back(std::move(e));
      out_->events = std::move(events);
      for (LogEvent& e : tail_) earlier_.tail.push_back(std::move(e));
      tail_ = std::move(earlier_.tail);
      for (const auto& [e, n] : earlier_.engines) engine_counts_[e] += n;
      out_->run_line = earlier_.run_line;
      --out_->earlier_runs;
    }
    for (LogEvent& e : tail_) out_->events.push_back(std::move(e));
    tail_.clear();
    // Timestamps that only went backwards (two steps at least, none forward): newest first.
    // Read in time order: the events reversed, each line numbered from the log's end.
    if (time_back_ >= 2 && time_forward_ == 0) {
      out_->newest_first = true;
      std::reverse(out_->events.begin(), out_->events.end());
      for (LogEvent& e : out_->events) {
        e.line = number_ + 1 - e.line;
        e.file_line = out_->lines + 1 - e.file_line;
      }
    }
    std::vector<std::pair<std::string, uint64_t>> v(engine_counts_.begin(), engine_counts_.end());
    std::stable_sort(v.begin(), v.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    for (const auto& [e, n] : v) out_->engines.push_back(e);
  }

 private:
  // The bytes two records of one source share at their start ("(VllmWorker rank=", "INFO 05-10",
  // "2025-03-01T10:").
  static constexpr size_t kSameRecordBytes = 12;
  // ObserveTime's last timestamp of each form (-1: none yet) and the steps seen.
  double last_time_[2] = {-1, -1};
  int time_forward_ = 0, time_back_ = 0;
  // A terminal wraps at no fewer columns than this, and at no more.
  static constexpr size_t kNarrowestWrap = 60;
  static constexpr size_t kWidestWrap = 512;
  // Different lines of the longest length that show the log was wrapped at that length.
  static constexpr int kWrappedLines = 3;
  // The narrowest width two lines in a row cut mid-word show a wrap at (see ObserveWidth).
  static constexpr size_t kPairWrap = 80;
  // A reflow at word breaks (ReflowWidth): its width between these, shown by this many breaks;
  // a line broken by it is within kReflowWord columns of the width (the next word did not fit).
  static constexpr size_t kReflowNarrowest = 40;
  static constexpr size_t kReflowWidest = 160;
  static constexpr int kReflowBreaks = 4;
  static constexpr size_t kReflowLines = 10;  // fewer: the engines' messages are joined anyway
  static constexpr size_t kReflowShortLines = 6;  // with an out-of-memory message broken
  static constexpr size_t kReflowAhead = 64;  // looked ahead at most once a wrap shows
  static constexpr size_t kReflowWord = 24;

  // Characters (UTF-8 lead bytes) of a cleaned line: a terminal wraps at a column count.
  // (Eight bytes at a time: a continuation byte, 10xxxxxx, has its top bit set and the next one
  // clear.)
  static size_t Columns(std::string_view s) {
    size_t continuations = 0, i = 0;
    for (; i + 8 <= s.size(); i += 8) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, sizeof w);
      // (One bit a byte moved to the byte's low bit, and the eight summed by one multiply:
      // the targets' baseline has no popcount instruction.)
      const uint64_t marks = (w & ~(w << 1) & uint64_t{0x8080808080808080}) >> 7;
      continuations += static_cast<size_t>((marks * uint64_t{0x0101010101010101}) >> 56);
    }
    for (; i < s.size(); ++i) continuations += (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80;
    return s.size() - continuations;
  }

  // The width a terminal wrapped the log at, 0 while none shows. A log pasted from a terminal
  // that wraps at W columns has its longer lines cut into pieces of exactly W characters: W is
  // the longest length seen, once kWrappedLines different lines had it. Lines past kWidestWrap
  // (a prompt, a dump) are no terminal's and do not count.
  // A whole traceback frame line is no evidence of a width: the frames of one file with line
  // numbers of as many digits ("  File \".../modeling_llama.py\", line 241, in forward") are
  // often equally long in a log no terminal wrapped.
  // Such a line is evidence once the next line shows it was cut inside the function's name:
  // the next line is nothing but the name's rest ("generate_" + "token"), where a whole frame
  // is followed by its indented code line, another frame or an exception's "Type: message".
  // Two lines in a row of one width of at least kPairWrap columns, cut mid-word (no blank on
  // either side of the cut) and not two records of one source, are a wrap too: one long message
  // a terminal cut into three pieces or more in an excerpt with no other long line.
  void ObserveWidth(size_t width, std::string_view raw) {
    const bool pair = width == last_width_ && width >= kPairWrap && last_word_end_ &&
                      !raw.empty() && WordChar(raw.front()) && !RecordStart(raw) &&
                      raw.substr(0, kSameRecordBytes) != last_head_;
    // One line of a terminal's usual width (80, 100, 120 or 200 columns) cut inside a word, the
    // next a shorter line that is nothing but that word's rest and plain words after it
    // ("...unable to alloc" + "ate CUDA0 buffer"): the one long message of an excerpt, wrapped by
    // the terminal. A record of its own starts otherwise (a capital, a bracket, a date, an
    // indent, "name: ...").
    if (TerminalWidth(last_width_) && last_word_end_ && width < last_width_ &&
        longest_ == last_width_ && WordRest(raw) && !RecordStart(raw)) {
      at_longest_ = std::max(at_longest_, kWrappedLines);
    }
    // In a log whose records share their first bytes (a worker's prefix), a line without them
    // after two records that had them continues the last one: its width counts, once for each
    // such cut (the cut pieces of equal frames are equal).
    if (last_shared_head_ && last_width_ >= kNarrowestWrap && last_width_ <= kWidestWrap &&
        !raw.empty() && WordChar(raw.front()) &&
        raw.substr(0, kSameRecordBytes) != last_head_) {
      CountWidth(last_width_, std::hash<std::string_view>()(raw) ^ ++continuations_);
    }
    last_shared_head_ = last_head_.size() == kSameRecordBytes &&
                        raw.substr(0, kSameRecordBytes) == last_head_;
    last_width_ = width;
    last_word_end_ = !raw.empty() && WordChar(raw.back());
    last_head_.assign(raw.substr(0, kSameRecordBytes));
    if (frame_width_ != 0) {
      const size_t w = std::exchange(frame_width_, 0);
      if (IdentifierRest(raw)) CountWidth(w, frame_hash_);
    }
    if (width < kNarrowestWrap || width > kWidestWrap) return;
    const size_t h = std::hash<std::string_view>()(raw);
    if (WholeFrameLine(raw)) {
      frame_width_ = width;
      frame_hash_ = h;
      return;
    }
    CountWidth(width, h);
    if (pair && width == longest_) at_longest_ = std::max(at_longest_, kWrappedLines);
  }

  static bool WordChar(char c) { return c != ' ' && c != '\t' && c != '\r'; }

  // The widths terminals are usually set to.
  static bool TerminalWidth(size_t w) { return w == 80 || w == 100 || w == 120 || w == 200; }

  // A timestamp at a line's start: "2024-02-02 21:44:03.976" (or with a 'T', or in '['), or a
  // level and vLLM's or SGLang's "INFO 02-03 03:43:49" (after a worker's "(...) " prefix). Each
  // form is compared with the last of its own form only (two clocks may differ by a time zone).
  void ObserveTime(std::string_view s) {
    // A paste's quote marks and indentation, kubectl --prefix's "[pod/NAME/CONTAINER] ", a
    // rank's "[rank0]: ".
    while (!s.empty() && (s[0] == '>' || s[0] == ' ')) s.remove_prefix(1);
    if (s.starts_with("[pod/")) {
      const size_t close = s.find("] ");
      if (close != std::string_view::npos && close < 120) s.remove_prefix(close + 2);
    }
    if (s.starts_with("[rank")) {
      const size_t close = s.find("]: ");
      if (close != std::string_view::npos && close < 16) s.remove_prefix(close + 3);
    }
    if (!s.empty() && s[0] == '(') {
      const size_t close = s.find(") ");
      if (close == std::string_view::npos || close > 80) return;
      s.remove_prefix(close + 2);
    }
    if (!s.empty() && s[0] == '[') s.remove_prefix(1);
    auto digits = [&](size_t at, size_t n) {
      if (at + n > s.size()) return -1.0;
      double v = 0;
      for (size_t i = at; i < at + n; ++i) {
        if (std::isdigit(static_cast<unsigned char>(s[i])) == 0) return -1.0;
        v = v * 10 + (s[i] - '0');
      }
      return v;
    };
    // HH:MM:SS at `at`, with any fraction after it, as seconds.
    auto clock = [&](size_t at) {
      const double h = digits(at, 2), m = digits(at + 3, 2), sec = digits(at + 6, 2);
      if (h < 0 || m < 0 || sec < 0 || s[at + 2] != ':' || s[at + 5] != ':') return -1.0;
      double frac = 0, scale = 0.1;
      for (size_t i = at + 9; at + 8 < s.size() && (s[at + 8] == '.' || s[at + 8] == ',') &&
                              i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]));
           ++i, scale /= 10) {
        frac += (s[i] - '0') * scale;
      }
      return h * 3600 + m * 60 + sec + frac;
    };
    int form = -1;
    double t = -1;
    if (digits(0, 4) >= 0 && s.size() > 19 && s[4] == '-' && s[7] == '-' &&
        (s[10] == ' ' || s[10] == 'T')) {
      const double year = digits(0, 4), month = digits(5, 2), day = digits(8, 2);
      const double c = clock(11);
      if (month >= 0 && day >= 0 && c >= 0) {
        form = 0;
        t = ((year * 13 + month) * 32 + day) * 86400 + c;
      }
    } else {
      size_t at = 0;
      while (at < s.size() && at < 8 && std::isupper(static_cast<unsigned char>(s[at]))) ++at;
      if (at >= 4 && at < s.size() && s[at] == ' ' && s.size() > at + 14 && s[at + 3] == '-' &&
          s[at + 6] == ' ') {
        const double month = digits(at + 1, 2), day = digits(at + 4, 2), c = clock(at + 7);
        if (month >= 0 && day >= 0 && c >= 0) form = 1, t = (month * 32 + day) * 86400 + c;
      }
    }
    if (form < 0) return;
    double& last = last_time_[form];
    if (last >= 0 && t > last) ++time_forward_;
    if (last >= 0 && t < last) ++time_back_;
    last = t;
  }

  // A word's rest then plain text: a lower-case letter first, and the first word letters and
  // digits only (no "name:", "module_function", "key=value" of a record of its own).
  static bool WordRest(std::string_view s) {
    if (s.empty() || std::islower(static_cast<unsigned char>(s[0])) == 0) return false;
    for (const char c : s.substr(0, s.find(' '))) {
      if (std::isalnum(static_cast<unsigned char>(c)) == 0) return false;
    }
    return true;
  }

  // How a log record begins, not a wrapped line's rest: a worker's "(..." or "[...", a level
  // ("INFO ", "ERROR:", "W1204"), a date or time ("2025-", "12-04 ", "10:18:11"), "time=".
  static bool RecordStart(std::string_view s) {
    if (s.empty()) return false;
    if (s[0] == '(' || s[0] == '[' || s[0] == '<' || s.starts_with("time=")) return true;
    auto digit = [&](size_t i) {
      return i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) != 0;
    };
    if (digit(0) && digit(1) && s.size() > 2 && (s[2] == '-' || s[2] == ':' || s[2] == '/')) {
      return true;
    }
    if (digit(0) && digit(1) && digit(2) && digit(3) && s.size() > 4 && s[4] == '-') return true;
    size_t upper = 0;
    while (upper < s.size() && std::isupper(static_cast<unsigned char>(s[upper]))) ++upper;
    return upper >= 3 && upper < s.size() && (s[upper] == ' ' || s[upper] == ':');
  }

  // The rest of a function's name: identifier characters only (trailing spaces aside), the first
  // a letter, digit or '_' (a quote's "> " is no name), the last maybe the '>' of "<module>".
  static bool IdentifierRest(std::string_view s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
    if (s.empty() || (!std::isalnum(static_cast<unsigned char>(s[0])) && s[0] != '_')) {
      return false;
    }
    for (const char c : s) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '>') return false;
    }
    return true;
  }

  void CountWidth(size_t width, size_t h) {
    if (width > longest_) {
      longest_ = width;
      at_longest_ = 1;
      longest_hash_ = h;
    } else if (width == longest_ && h != longest_hash_) {
      ++at_longest_;
      longest_hash_ = h;
    }
  }

  // Spaces, tabs and carriage returns only (or nothing).
  static bool Blank(std::string_view s) {
    return s.find_first_not_of(" \t\r") == std::string_view::npos;
  }

  // A Python traceback frame line that ends where a frame line ends: `File "PATH", line N, in
  // NAME`, NAME an identifier or `<module>` (CPython's traceback.py StackSummary.format, 2.x-3.x),
  // after any prefix.
  static bool WholeFrameLine(std::string_view s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
    const size_t file = s.find("File \"");
    if (file == std::string_view::npos) return false;
    const size_t line = s.find("\", line ", file);
    if (line == std::string_view::npos) return false;
    const size_t in = s.find(", in ", line);
    if (in == std::string_view::npos || in + 5 >= s.size()) return false;
    for (const char c : s.substr(in + 5)) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '<' && c != '>') {
        return false;
      }
    }
    return true;
  }

  // A row of a table drawn to one width (nvidia-smi's, a box of '|' and '+' or of the box-drawing
  // characters U+2500-U+257F): its rows are as long as a wrapped piece, and each is whole.
  static bool TableRow(std::string_view s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
    if (s.empty()) return false;
    if (s.back() == '|' || s.back() == '+') return true;
    return s.size() >= 3 && s[s.size() - 3] == '\xE2' &&
           (s[s.size() - 2] == '\x94' || s[s.size() - 2] == '\x95');
  }

  // A logical line (a physical line, or the pieces of one a terminal wrapped), or the piece of
  // one more: a shell command continued over lines, and then
  // PyTorch's allocator message (Gather), are read whole. Neither is held when following a live
  // log: a held line would show late.
  void Process(std::string clean, uint64_t first, uint64_t last) {
    // A shell command continued over lines ("vllm serve M \" and "  --max-model-len 8192 \"):
    // one line, as the shell reads it, so that its flags are read together. Ends at the first
    // line without the trailing backslash, at a blank line or a log record's own prefix.
    if (!command_.empty()) {
      // A collector's prefix on the next piece (docker compose's service column, journald's
      // header, a quote's '>') is the collector's, not the command's, where the command's first
      // line carried one too; on a command that began bare, a prefixed line is a record.
      const size_t captured = CaptureEnd(clean);
      const std::string_view piece = TrimSpaces(std::string_view(clean).substr(captured));
      // A command held for its dangling flag's value takes the next line only if that begins
      // with a value (else the flag was a switch, and the line is a record of its own).
      const bool takes = !command_wants_value_ || ValueFirst(piece);
      command_wants_value_ = false;
      if (takes && !piece.empty() && (captured == 0 || command_captured_) &&
          command_pieces_ < kCommandPieces &&
          command_.size() + piece.size() < opt_.max_line_bytes) {
        command_ += ' ';
        command_ += Continued(piece) ? WithoutBackslash(piece) : piece;
        command_last_ = last;
        ++command_pieces_;
        if (!Continued(piece)) EndCommand();
        return;
      }
      EndCommand();
    }
    if (!live_ && Continued(clean)) {
      command_captured_ = CaptureEnd(clean) > 0;
      command_ = std::string(WithoutBackslash(clean));
      command_first_ = first;
      command_last_ = last;
      command_pieces_ = 1;
      return;
    }
    // A launch line a paste reflowed between a flag and its value ("... --model-path" +
    // "./models/vicuna-7b --load-8bit"): held like a continued one, for one line that begins
    // with a value.
    if (!live_ && DanglingFlag(clean)) {
      command_captured_ = CaptureEnd(clean) > 0;
      command_ = std::string(TrimSpaces(clean));
      command_first_ = first;
      command_last_ = last;
      command_pieces_ = 1;
      command_wants_value_ = true;
      return;
    }
    Gather(std::move(clean), first, last);
  }

  // A program's launch line (a launcher's name in it) whose last word is a flag: "--name", or
  // llama.cpp's "-m" / "-c" / "-ngl".
  static bool DanglingFlag(std::string_view s) {
    s = TrimSpaces(s);
    const size_t space = s.rfind(' ');
    if (space == std::string_view::npos || s.size() > 2048) return false;
    const std::string_view last = s.substr(space + 1);
    const bool flag = (last.size() > 2 && last.starts_with("--") && last.find('=') ==
                       std::string_view::npos) ||
                      last == "-m" || last == "-c" || last == "-ngl" || last == "-ub";
    if (!flag) return false;
    for (std::string_view launcher :
         {"python"sv, "vllm serve"sv, "sglang"sv, "llama-server"sv, "llama-cli"sv, "torchrun"sv,
          "text-generation-launcher"sv, "lmdeploy"sv, "fastchat"sv, "accelerate launch"sv,
          "ollama"sv}) {
      if (s.find(launcher) != std::string_view::npos) return true;
    }
    return false;
  }
  // A line that begins with a flag's value: a number, a path or a model id (a '/' or '\\'), or
  // a model file.
  static bool ValueFirst(std::string_view s) {
    const std::string_view first = s.substr(0, s.find(' '));
    if (first.empty() || first[0] == '-') return false;
    if (std::all_of(first.begin(), first.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c)) || c == '.';
        })) {
      return true;
    }
    return first.find('/') != std::string_view::npos ||
           first.find('\\') != std::string_view::npos || first.ends_with(".gguf") ||
           first.ends_with(".bin") || first.ends_with(".safetensors");
  }

  // A line the shell continues on the next: it ends in " \" (spaces after it aside).
  static bool Continued(std::string_view s) {
    s = TrimSpaces(s);
    return s.size() >= 2 && s.back() == '\\' && s[s.size() - 2] == ' ';
  }
  static std::string_view WithoutBackslash(std::string_view s) {
    s = TrimSpaces(s);
    s.remove_suffix(1);
    return TrimSpaces(s);
  }
  void EndCommand() {
    if (command_.empty()) return;
    Gather(std::exchange(command_, std::string()), command_first_, command_last_);
  }

  // PyTorch's allocator message is one long line that a paste often reflows at spaces into
  // pieces of varying width, which the terminal-width rule (ObserveWidth) does not join: a line
  // that opens the message without its last sentence is held, and the lines after it that read
  // as nothing but the message's own words and figures (MessageContinues) are appended, until
  // its last sentence or any other line.
  // The engines' own long messages are gathered the same way (kLongMessages): a line that holds
  // one's opening words without its closing ones takes the lines after it that start no record
  // of their own (not the same source's prefix, no capture prefix, no traceback line), until the
  // closing words and something after them arrive.
  void Gather(std::string clean, uint64_t first, uint64_t last) {
    if (!message_.empty()) {
      const std::string_view piece = WithoutPrefixes(clean);
      const bool more = closing_.empty() ? MessageContinues(piece) : RecordContinues(piece);
      if (more && parts_.size() < kMessagePieces &&
          message_.size() + clean.size() < kMessageBytes) {
        parts_.emplace_back(piece);
        message_ += ' ';
        message_ += TrimSpaces(piece);  // provisional: the joins are decided at the end
        message_last_ = last;
        if (closing_.empty() ? MessageEnds(clean) : Closed(message_, closing_)) EndMessage();
        return;
      }
      EndMessage();
    }
    if (!live_ && clean.size() < kMessageBytes) {
      std::string_view closing;
      if (MessageOpens(clean) || LongMessageOpens(clean, &closing)) {
        message_ = clean;
        parts_.assign(1, std::move(clean));
        message_first_ = first;
        message_last_ = last;
        closing_ = closing;
        return;
      }
    }
    Deliver(std::move(clean), first, last);
  }

  // The gathered pieces joined as they were cut. A terminal cuts every piece but the last at one
  // width, the widest seen, inside a word or not ("gpu_memory_uti" + "lization"): joined as they
  // are. A reflow breaks at spaces, into pieces of varying width, and drops the space: put back.
  // Of the allocator's message, two whole words of it at a joint are a reflow's whatever the
  // width ("capacity" + "of"); a figure cut in two ("14." + "60 GiB") a cut at any width.
  std::string JoinedParts() const {
    const size_t width = Columns(parts_[0]);
    bool terminal = width >= kNarrowestWrap && width == longest_ && parts_.size() > 1;
    for (size_t i = 1; i + 1 < parts_.size() && terminal; ++i) {
      terminal = Columns(parts_[i]) == width;
    }
    std::string out = parts_[0];
    for (size_t i = 1; i < parts_.size(); ++i) {
      const std::string& piece = parts_[i];
      const size_t before = out.size() - (out.back() == '.' && out.size() > 1 ? 2 : 1);
      const bool figure = !piece.empty() &&
                          std::isdigit(static_cast<unsigned char>(piece.front())) &&
                          std::isdigit(static_cast<unsigned char>(out[before]));
      const bool cut =
          figure || (terminal && !WordsOfOneMessage(out, piece));
      if (cut) {
        out += piece;
        continue;
      }
      const std::string_view rest = TrimSpaces(piece);
      if (out.back() != ' ' && !rest.empty()) out += ' ';
      out += rest;
    }
    return out;
  }

  // An engine's message longer than a line that a paste may reflow: its opening words and the
  // words it closes with, each a message whose readers need it whole.
  struct LongMessage {
    std::string_view open, close;
  };
  static constexpr LongMessage kLongMessages[] = {
      // SGLang (srt/model_executor/model_runner.py load_model): "Load weight end. type=...,
      // dtype=..., avail mem=X GB, mem usage=Y GB."
      {"Load weight end.", "mem usage="},
      // vLLM's max-length check (v1/core/kv_cache_utils.py check_enough_kv_cache_memory; V0's
      // worker _check_if_gpu_supports... / cache engine), the cache-blocks and sampler errors,
      // and the start-up refusal (v1/worker/utils.py request_memory / gpu_worker.py).
      {"To serve at least one request with the model", "when initializing the engine"},
      {"The model's max seq len", "when initializing the engine"},
      {"No available memory for the cache blocks", "when initializing the engine"},
      {"warming up sampler with", "when initializing the engine"},
      {"Free memory on device", "other processes"},
      // SGLang's pool check (srt/model_executor/model_runner.py init_memory_pool).
      {"Not enough memory.", "mem-fraction-static"},
      // PyTorch's file mapping refused (aten/src/ATen/MapAllocator.cpp: "unable to mmap N bytes
      // from file <F>: Cannot allocate memory (12)"), whose path makes it long.
      {"unable to mmap ", "Cannot allocate memory"},
  };

  // `s` opens one of kLongMessages and does not hold its end; *closing: the words it ends with.
  static bool LongMessageOpens(std::string_view s, std::string_view* closing) {
    for (const LongMessage& m : kLongMessages) {
      if (s.find(m.open) != std::string_view::npos && !Closed(s, m.close)) {
        *closing = m.close;
        return true;
      }
    }
    return false;
  }

  // The closing words are in `s` with more after them (the figure or the full stop they lead to).
  static bool Closed(std::string_view s, std::string_view close) {
    const size_t at = s.find(close);
    return at != std::string_view::npos && !TrimSpaces(s.substr(at + close.size())).empty();
  }

  // A piece of a record's message reflowed at a space: not blank, and no record of its own (the
  // held message's source prefix, a capture's, a traceback's lines, another message).
  bool RecordContinues(std::string_view piece) const {
    const std::string_view t = TrimSpaces(piece);
    if (t.empty() || t.size() > 512 || CapturePrefix(piece) != 0) return false;
    if (piece.compare(0, kSameRecordBytes, message_, 0, kSameRecordBytes) == 0) return false;
    // The message's closing words in the piece: its rest, whatever it begins with (a terminal
    // may cut a path where its rest looks like a date, "model-0" + "0060-of-00135").
    // (Not a piece that holds a message's opening words too: the whole message again, as the
    // error line after its source line in a traceback.)
    const bool opens = std::any_of(std::begin(kLongMessages), std::end(kLongMessages),
                                   [&](const LongMessage& m) { return t.find(m.open) != t.npos; });
    if (t.find(closing_) != std::string_view::npos && !opens && !MessageOpens(t)) return true;
    // A record's start (RecordStart), where a parenthesis opening a figure is the message's own
    // ("(7.00 GiB KV cache is needed"), and so is an angle bracket opening a path (PyTorch's
    // "from file" + "</data/model-00060-of-00135.safetensors>: Cannot allocate memory (12)").
    const bool figure =
        t.size() > 1 && ((t[0] == '(' && std::isdigit(static_cast<unsigned char>(t[1]))) ||
                         (t[0] == '<' && (t[1] == '/' || t[1] == '.' || t[1] == '~')));
    if ((RecordStart(t) && !figure) || t.starts_with("File \"") || t.starts_with("Traceback") ||
        t.find("Error:") != std::string_view::npos) {
      return false;
    }
    std::string_view closing;
    return !MessageOpens(t) && !LongMessageOpens(t, &closing);
  }

  // `s` without the capture's own prefixes and the look-ahead's shared indentation (as Deliver
  // removes them).
  std::string_view WithoutPrefixes(std::string_view s) const { return s.substr(CaptureEnd(s)); }

  // Where the line's own text begins: past the capture's prefixes (up to three: a quoted kubectl
  // line), the indentation every line of the look-ahead shared (a Markdown code block, an
  // e-mail's indent), and the prefixes inside that indentation (a kubectl capture pasted as a
  // code block).
  // With `source`, also the program the first prefix that names one names (CollectorSource).
  size_t CaptureEnd(std::string_view s, std::string_view* source = nullptr) const {
    size_t cut = 0;
    auto prefixes = [&] {
      for (int i = 0; i < 3; ++i) {
        const size_t n = CapturePrefix(s.substr(cut));
        if (n == 0) break;
        if (source && source->empty()) *source = CollectorSource(s.substr(cut, n));
        cut += n;
      }
    };
    prefixes();
    const size_t before = cut;
    for (size_t i = 0; i < indent_ && cut < s.size() && s[cut] == indent_char_; ++i) ++cut;
    if (cut > before) prefixes();
    return cut;
  }

  void EndMessage() {
    if (message_.empty()) return;
    std::string whole = parts_.size() > 1 ? JoinedParts() : std::move(parts_[0]);
    message_.clear();
    parts_.clear();
    Deliver(std::move(whole), message_first_, message_last_);
  }

  // The allocator's message begins here ("CUDA out of memory. Tried to allocate 20.00 MiB" and
  // what follows of it) and does not end here.
  static bool MessageOpens(std::string_view s) {
    return s.size() < kMessageBytes &&
           (s.find("Tried to allocate") != std::string_view::npos ||
            s.ends_with("CUDA out of memory.") || s.ends_with("CUDA out of memory. Tried to") ||
            s.ends_with("CUDA out of memory. Tried")) &&
           !MessageEnds(s);
  }

  // The message's last sentence: "(https://pytorch.org/docs/stable/notes/cuda.html#environment-
  // variables)" (2.2+), "See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF"
  // (1.10-2.1), or the figures' closing parenthesis of releases before ("... reserved in total by
  // PyTorch)", 1.4+; "... cached)", 1.0-1.3) when nothing follows it.
  static bool MessageEnds(std::string_view s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\r' || s.back() == '.')) {
      s.remove_suffix(1);
    }
    return s.ends_with("environment-variables)") || s.ends_with("PYTORCH_CUDA_ALLOC_CONF") ||
           s.ends_with("reserved in total by PyTorch)") || s.ends_with(" cached)");
  }

  // Two pieces of the allocator's message that a paste reflowed at a space, which looks like a
  // terminal's cut when the two lines are of one width: the last word of `held` and the first of
  // `next` are each whole words of the message, or a figure and a word ("capacity" + "of 79.25",
  // "Process 156640" + "has"), where a terminal's cut inside a word leaves a part that is none
  // ("alloc" + "ated"). Two figures stay joined (a number cut in two).
  // `held` holds the message's head, or continues the one being gathered (Process). Also the
  // CPU allocator's ("DefaultCPUAllocator: can't allocate" + "memory: you tried to allocate N
  // bytes. Error code 12 (Cannot allocate memory)"; Windows' "not enough memory: ...").
  bool WordsOfOneMessage(std::string_view held, std::string_view next) const {
    if (held.empty() || next.empty() || held.back() == ' ' || next.front() == ' ') return false;
    // The message's head is in `held`, or was gathered already (Process) and `held` is more of it.
    if (message_.empty() && held.find("Tried to allocate") == std::string_view::npos &&
        held.find("out of memory") == std::string_view::npos &&
        held.find("DefaultCPUAllocator") == std::string_view::npos) {
      return false;
    }
    // One of the engines' long messages (kLongMessages) is read with its own words.
    const bool long_message = !closing_.empty();
    const size_t space = held.rfind(' ');
    const std::string_view last = held.substr(space == std::string_view::npos ? 0 : space + 1);
    const std::string_view first = next.substr(0, next.find(' '));
    const bool last_figure = std::isdigit(static_cast<unsigned char>(last.front()));
    const bool first_figure = std::isdigit(static_cast<unsigned char>(first.front()));
    if (last_figure && first_figure) return false;
    auto word = [&](std::string_view w) {
      return long_message ? LongMessageWord(w) : MessageWord(w);
    };
    return (last_figure || word(last)) && (first_figure || word(first));
  }

  // One word of the engines' long messages (kLongMessageWords), its punctuation aside.
  static bool LongMessageWord(std::string_view w) { return WordOf(w, kLongMessageWords); }

  // A word without the punctuation around it.
  static std::string_view Bare(std::string_view w) {
    constexpr std::string_view kOpen = "([\"'`", kClose = ")].,;:\"'`";
    while (!w.empty() && kOpen.find(w.front()) != std::string_view::npos) w.remove_prefix(1);
    while (!w.empty() && kClose.find(w.back()) != std::string_view::npos) w.remove_suffix(1);
    return w;
  }

  // One word of the allocator's message (MessageContinues' vocabulary), its punctuation aside;
  // a figure is not one.
  static bool MessageWord(std::string_view w) { return WordOf(w, kMessageWords); }

  // `w`, its punctuation aside and in lower case, is one of `words`; a figure is not one.
  template <size_t N>
  static bool WordOf(std::string_view w, const std::string_view (&words)[N]) {
    w = Bare(w);
    if (w.empty() || w.size() > 24) return false;
    const std::string lower = core::AsciiLower(w);
    return std::find(std::begin(words), std::end(words), lower) != std::end(words);
  }

  // A piece of the allocator's message: every word one of the message's own (its sentences of
  // PyTorch 1.x to 2.x), a figure, or its link, with at least two of them. A traceback line, a
  // log record or prose does not read so.
  static bool MessageContinues(std::string_view s) {
    // Another message's head is a new message.
    if (s.find("Tried to allocate") != std::string_view::npos ||
        s.find("out of memory") != std::string_view::npos) {
      return false;
    }
    size_t words = 0;
    size_t at = 0;
    while (at < s.size()) {
      while (at < s.size() && s[at] == ' ') ++at;
      size_t end = s.find(' ', at);
      if (end == std::string_view::npos) end = s.size();
      const std::string_view w = Bare(s.substr(at, end - at));
      at = end;
      if (w.empty()) continue;
      ++words;
      if (std::isdigit(static_cast<unsigned char>(w.front()))) continue;
      if (w.starts_with("https://pytorch.org/") || w.find("PYTORCH_CUDA_ALLOC_CONF") == 0) {
        continue;
      }
      if (!MessageWord(w)) return false;
    }
    return words >= 2;
  }

  // One logical line, read. `first`: the physical line it starts on (the previous logical line
  // may continue into it).
  void Deliver(std::string clean, uint64_t first, uint64_t last) {
    std::string_view source;
    const size_t cut = CaptureEnd(clean, &source);
    source_.assign(source);  // before the prefix it points into is erased
    if (cut > 0) clean.erase(0, cut);
    if (!line_joints_.empty() || !spaced_.empty()) Spaced(clean, cut, first, last);
    // A caret line is passed over as a blank line of a double-spaced log is: the line before
    // stays the previous one (its code line and the error after it read as neighbours).
    if (CaretLine(clean)) {
      if (prev_number_ + 1 == first) prev_number_ = last;
      return;
    }
    ObserveTime(clean);
    line_ = std::move(clean);
    first_number_ = first;
    last_number_ = last;
    bigrams().Build(line_);
    rank_ = RankOf(doctor::LineView(line_, &bigrams()));
    const uint64_t before = emitted_;
    framed_ = false;
    oomed_ = false;
    Match();
    if (emitted_ == before && LooksLikeAnError(doctor::LineView(line_, &bigrams())) &&
        out_->unplaced.size() < 8) {
      out_->unplaced.push_back(
          fmt::format("line {}: {}", FileLine(last_number_), Trim(line_, 160)));
    }
    prev_ = std::move(line_);
    current_ ^= 1;  // this line's pairs become the previous line's, without a copy
    prev_framed_ = framed_;
    prev_oomed_ = oomed_;
    prev_number_ = last_number_;
  }

  // A run begins after an earlier one failed: that one's events are set aside (kept, should
  // this run show no failure) and the log is read from here.
  void NewRun() {
    earlier_.events = std::move(out_->events);
    earlier_.tail = std::move(tail_);
    earlier_.engines = std::move(engine_counts_);
    earlier_.run_line = out_->run_line;
    out_->events.clear();
    tail_.clear();
    engine_counts_.clear();
    routine_.clear();
    out_->unplaced.clear();
    ++out_->earlier_runs;
    out_->run_line = FileLine(last_number_);
    failed_ = false;
    prev_.clear();
  }

  // At most `n` bytes of the line without its surrounding blanks, never cut inside a UTF-8
  // character (a Chinese line longer than the cut keeps whole characters).
  static std::string Trim(std::string_view s, size_t n) {
    size_t b = 0;
    while (b < s.size() && (s[b] == ' ' || s[b] == '\t')) ++b;
    s = s.substr(b);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
    return std::string(core::Utf8Prefix(s, n));
  }

  static bool LooksLikeAnError(const doctor::LineView& s) {
    return Has(s, "Error") || Has(s, "ERROR") || Has(s, "out of memory") ||
           Has(s, "Out of memory") || Has(s, "OUT OF MEMORY") || Has(s, "Traceback") ||
           Has(s, "failed to") || Has(s, "Failed to");
  }

  LogEvent& Emit(EventKind kind, const char* engine) override {
    // Found by its name before a key is made: no string built per event.
    auto counted = engine_counts_.find(std::string_view(engine));
    if (counted == engine_counts_.end()) counted = engine_counts_.emplace(engine, 0).first;
    ++counted->second;
    ++emitted_;
    if (kind == EventKind::kFrame || kind == EventKind::kTraceback) framed_ = true;
    if (kind == EventKind::kTorchOom) oomed_ = true;
    // A failure of either kind ends a run: an engine started again after it begins the next.
    if (doctor::IsFailureEvent(kind) || kind == EventKind::kOtherError) failed_ = true;
    // A routine event past its count per rank, or past the cap, is dropped before it is built.
    const bool full = out_->events.size() >= opt_.max_events;
    if (Routine(kind) &&
        (++routine_[{static_cast<int>(kind), rank_}] > kRoutinePerRank || full)) {
      ++out_->dropped_events;
      scratch_ = LogEvent();
      return scratch_;
    }
    LogEvent e;
    e.kind = kind;
    e.engine = engine;
    e.line = last_number_;
    e.file_line = FileLine(last_number_);
    e.rank = rank_;
    e.text = Trim(line_, 300);
    if (full) {
      ++out_->dropped_events;
      if (tail_.size() >= kTailEvents) tail_.pop_front();
      tail_.push_back(std::move(e));
      return tail_.back();
    }
    out_->events.push_back(std::move(e));
    return out_->events.back();
  }

  // The bytes around the joint of `a` and `b` joined by `sep`: the pairs and runs that cross it.
  static std::string Seam(std::string_view a, std::string_view sep, std::string_view b) {
    std::string seam(a.substr(a.size() - std::min<size_t>(a.size(), 3)));
    return seam.append(sep).append(b.substr(0, 3));
  }

  void Match() {
    if (line_.empty()) return;
    // The previous line's message and this one's, when this line has the same prefix or none.
    joined_.clear();
    joined_tight_.clear();
    if (!prev_.empty() && prev_number_ + 1 == first_number_) {
      const size_t p = PrefixEnd(prev_), c = PrefixEnd(line_);
      // The same prefix, or a shorter one that begins the previous line (journald's or
      // kubectl's before the engine's own header, which the wrapped part lacks).
      const bool same = c == 0 || (c <= p && prev_.compare(0, c, line_, 0, c) == 0);
      const std::string_view a = TrimSpaces(std::string_view(prev_).substr(p));
      const std::string_view b = TrimSpaces(std::string_view(line_).substr(same ? c : 0));
      if (same && !a.empty() && !b.empty()) {
        joined_.reserve(a.size() + b.size() + 1);
        joined_.append(a).append(" ").append(b);
        // Also as a terminal wraps at its width: mid-word, the spaces kept where they were.
        std::string_view ta = std::string_view(prev_).substr(p);
        while (!ta.empty() && (ta.front() == ' ' || ta.front() == '\t')) ta.remove_prefix(1);
        while (!ta.empty() && ta.back() == '\r') ta.remove_suffix(1);
        std::string_view tb = std::string_view(line_).substr(same ? c : 0);
        while (!tb.empty() && tb.back() == '\r') tb.remove_suffix(1);
        joined_tight_.reserve(ta.size() + tb.size());
        joined_tight_.append(ta).append(tb);
        joined_bigrams_.Join(prev_bigrams(), bigrams(),
                             {Seam(a, " ", b), Seam(ta, "", tb)});
      }
    }
    // IPython's current-line arrow: "----> 15" before IPython 8, "---> 15" since.
    const doctor::LineView view(line_, &bigrams());
    const bool ipython = Has(view, "--->") || Has(view, "Cell In[");
    const bool after_oom = prev_oomed_ && prev_number_ + 1 == first_number_;
    const doctor::LineView joined(joined_, &joined_bigrams_);
    const doctor::LineView joined_tight(joined_tight_, &joined_bigrams_);
    const doctor::LineView spaced(spaced_, &spaced_bigrams_);
    const doctor::Line line{line_,      rank_,        this,      joined, prev_framed_ || ipython,
                            &bigrams(), joined_tight, after_oom, source_, spaced};
    if (failed_) {
      for (const doctor::Reader* r : doctor::Readers()) {
        if (r->begins_run && r->begins_run(line)) {
          NewRun();
          break;
        }
      }
    }
    for (const doctor::Reader* r : doctor::Readers()) r->match(line);
  }

  LogScan* out_;
  ScanOptions opt_;
  std::string line_;
  std::string rank_;
  std::string prev_;    // the previous line (cleaned)
  std::string joined_;        // its message and this line's (see Match)
  std::string joined_tight_;  // the same without a space between (a wrap mid-word)
  uint64_t prev_number_ = 0;
  uint64_t first_number_ = 0;  // the line the current logical line starts on (LogEvent::line)
  uint64_t last_number_ = 0;   // and the one it ends on
  // The lines read, each piece of a file's line that held several counted (LogEvent::line), and
  // each such line of the file (FileLine): the number of its first piece, how many more numbers
  // than the file's lines were given before it, its line in the file and its pieces after the
  // first. One entry for each line of the file that held several records.
  uint64_t number_ = 0;
  struct Shift {
    uint64_t first, before, file_line, extra;
  };
  std::vector<Shift> shifts_;
  bool framed_ = false, prev_framed_ = false;
  bool oomed_ = false, prev_oomed_ = false;  // the line emitted (part of) an allocator message
  uint64_t emitted_ = 0;
  LogEvent scratch_;
  // The current line's pairs and the previous line's, in turn (Process flips current_).
  doctor::Bigrams line_bigrams_[2];
  int current_ = 0;
  doctor::Bigrams& bigrams() { return line_bigrams_[current_]; }
  const doctor::Bigrams& prev_bigrams() const { return line_bigrams_[current_ ^ 1]; }
  doctor::Bigrams joined_bigrams_;  // joined_'s and joined_tight_'s
  std::deque<LogEvent> tail_;
  std::map<std::pair<int, std::string>, uint64_t> routine_;
  std::map<std::string, uint64_t, std::less<>> engine_counts_;
  std::string held_;  // a piece of a line a terminal wrapped, waiting for the rest
  // Where held_'s pieces were joined between two letters (Piece), and those of the logical line
  // last handed on (HandJoints: with its size and lines); the delivered line with spaces there.
  std::vector<size_t> joints_, line_joints_;
  size_t line_joints_size_ = 0;
  uint64_t line_joints_first_ = 0, line_joints_last_ = 0;
  std::string spaced_;
  doctor::Bigrams spaced_bigrams_;
  std::string escaped_held_;  // raw pieces of a wrapped string with escaped line ends
  // The look-ahead's lines of text, those right after another, and whether the last was one.
  int ahead_text_lines_ = 0, ahead_text_after_text_ = 0;
  bool ahead_after_text_ = false;
  bool double_spaced_ = false;  // a blank line after every line of text (see EndLookAhead)
  static constexpr int kDoubleSpacedLines = 2;
  uint64_t held_first_ = 0;  // the physical line held_ starts on
  uint64_t held_last_ = 0;   // and the one it ends on
  bool held_frame_ = false;  // held_ is a traceback frame line waiting for its rest
  bool held_prefixes_ = false;  // held_ is a record's prefixes alone, waiting for its message
  bool held_file_ = false;      // held_ ends in a frame's "File", waiting for its path
  // The look-ahead: the first lines, held (at most kLookAheadLines lines or kLookAheadBytes
  // bytes) until the wrap width shows; their widths are observed as they arrive.
  static constexpr size_t kLookAheadLines = 256;
  static constexpr size_t kLookAheadBytes = 256 * 1024;
  struct Held {
    std::string raw;
    bool cut, binary;
  };
  std::vector<Held> ahead_;
  size_t ahead_bytes_ = 0;
  bool looking_ahead_;
  static constexpr size_t kBlockIndent = 4;
  // A gutter: at least kGutterLines look-ahead lines numbered in order, each number at most
  // kGutterDigits digits.
  static constexpr size_t kGutterLines = 4;
  static constexpr size_t kGutterDigits = 7;
  size_t gutter_lines_ = 0;
  uint64_t gutter_last_ = 0;
  size_t gutter_sep_ = SIZE_MAX;  // the separator's spaces (0 for a tab; SIZE_MAX: none seen)
  bool gutter_tab_ = false;
  bool gutter_ = false;
  size_t common_indent_ = SIZE_MAX;  // the fewest leading spaces of a look-ahead line
  size_t common_tabs_ = SIZE_MAX;    // the fewest leading tabs of a look-ahead line with text
  size_t indent_ = 0;                // the indentation removed from every line
  char indent_char_ = ' ';           // of spaces, or of tabs
  bool replaying_ = false;  // replaying the look-ahead: its widths are already observed
  size_t reflow_ = 0;       // the width the log was reflowed at (ReflowWidth), 0: none
  bool held_reflow_ = false;  // held_ is a line the reflow may have broken
  std::string held_tail_;     // its last piece, as the reflow left it
  size_t longest_ = 0, longest_hash_ = 0;
  size_t frame_width_ = 0, frame_hash_ = 0;
  // The last line's width, whether it ended in a letter or digit, and its first bytes.
  size_t last_width_ = 0;
  bool last_word_end_ = false;
  bool last_shared_head_ = false;  // the last line began as the one before it
  size_t continuations_ = 0;
  bool command_captured_ = false;  // the held command's first line had a collector's prefix
  std::string source_;  // the program the delivered line's collector prefix names (Line::source)
  std::string last_head_;  // a whole-looking frame line's, until the next line
  int at_longest_ = 0;
  bool failed_ = false;  // this run emitted a failure event
  // The allocator's message being gathered (Process), its lines and pieces.
  const bool live_;
  std::string message_;
  uint64_t message_first_ = 0, message_last_ = 0;
  static constexpr size_t kMessagePieces = 16;
  // The words that end the engine message being gathered; "": PyTorch's allocator message.
  std::string_view closing_;
  std::vector<std::string> parts_;  // its lines as they came
  // The shell command being joined (Process), its lines and pieces.
  std::string command_;
  uint64_t command_first_ = 0, command_last_ = 0;
  int command_pieces_ = 0;
  bool command_wants_value_ = false;  // held for a dangling flag's value (DanglingFlag)
  static constexpr int kCommandPieces = 64;
  // The words of the allocator's message (PyTorch 1.x to 2.x, and torch_npu's copy), lowercase.
  static constexpr std::string_view kMessageWords[] = {
      "gpu", "npu", "has", "a", "total", "capacity", "capacty", "of", "which", "is", "free",
      "process", "memory", "in", "use", "including", "non-pytorch", "this", "the", "allocated",
      "by", "pytorch", "and", "reserved", "but", "unallocated", "if", "large", "try", "setting",
      "to", "avoid", "fragmentation", "see", "documentation", "for", "management", "with",
      "private", "pools", "e.g", "cuda", "graphs", "allowed", "already", "current", "active",
      "cached", "tried", "allocate", "out", ">>", "gib", "mib", "kib", "gb", "mb", "kb", "bytes",
      "max_split_size_mb", "on", "device", "limit", "also", "set", "you",
      // The CPU allocator's own.
      "defaultcpuallocator", "can't", "cannot", "not", "enough", "error", "code"};
  // The words of kLongMessages' messages as the engines write them (SGLang's "Load weight end.
  // type=..., dtype=..., avail mem=... GB, mem usage=... GB." and "Not enough memory. Please try
  // to increase --mem-fraction-static."; vLLM's max-length, cache-block, sampler warm-up and
  // start-up messages, kv_cache_utils.py, gpu_model_runner.py, v1/worker/utils.py at 0.22), so a
  // joint between two of them is a reflow's break at a space, not a terminal's cut in a word.
  static constexpr std::string_view kLongMessageWords[] = {
      "load", "weight", "end", "type", "dtype", "avail", "mem", "usage", "gb", "not", "enough",
      "memory", "please", "try", "to", "increase", "--mem-fraction-static", "serve", "at",
      "least", "one", "request", "with", "the", "model's", "models's", "max", "seq", "len", "gib",
      "kv", "cache", "is", "needed", "which", "larger", "than", "available", "based", "on",
      "estimated", "maximum", "model", "length", "increasing", "gpu_memory_utilization", "or",
      "decreasing", "max_model_len", "when", "initializing", "engine", "number", "of", "tokens",
      "that", "can", "be", "stored", "in", "no", "for", "blocks", "cuda", "out", "occurred",
      "warming", "up", "sampler", "dummy", "requests", "lowering", "max_num_seqs", "free",
      "device", "startup", "less", "desired", "utilization", "decrease", "reduce", "used", "by",
      "other", "processes", "a", "and", "gpu"};
  static constexpr size_t kMessageBytes = 4096;
  struct Earlier {
    std::vector<LogEvent> events;
    std::deque<LogEvent> tail;
    std::map<std::string, uint64_t, std::less<>> engines;
    uint64_t run_line = 0;
  } earlier_;  // the last failed run before this one
};

}  // namespace

namespace doctor {

// The log's text encoding, told by its first bytes. UTF-8 is the engines' own; UTF-16 is what a
// Windows user's log file often is (PowerShell's `>` and `Out-File` before PowerShell 6, Notepad's
// "Unicode"): its byte-order mark says which byte comes first, and without one, a NUL in every
// other byte of the first two characters (ASCII text) does. UTF-8's byte-order mark is dropped.
enum class Encoding : uint8_t { kUnknown, kUtf8, kUtf16Le, kUtf16Be };
// The bytes that decide it.
constexpr size_t kSniffBytes = 4;

// The byte loop of ScanLog, kept between calls: the encoding, line ends (LF, CR, CRLF, the pair
// split across two calls too), the line cap, the binary-line count.
struct LogFeed::State {
  State(const ScanOptions& o, bool live) : options(o), scanner(&scan, o, live) {
    line.reserve(4096);
  }
  ScanOptions options;
  LogScan scan;
  Scanner scanner;
  std::string line;
  bool cut = false, binary = false;
  uint64_t odd = 0;
  char prev = 0;
  Encoding encoding = Encoding::kUnknown;
  std::string head;          // the first bytes, while the encoding is unknown
  int half = -1;             // UTF-16: the first byte of a code unit split across two calls
  uint32_t high = 0;         // UTF-16: a high surrogate waiting for its low one

  void Flush() {
    binary = binary || (line.size() > 16 && odd * 4 > line.size());
    // A byte-order mark starting a line: a second file's, the two concatenated.
    if (line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
    // The line holds one byte past the cap when it was cut: the cut then never splits a
    // UTF-8 character (the character the cap falls in is dropped whole).
    if (line.size() > options.max_line_bytes) {
      cut = true;
      line.resize(core::Utf8Prefix(line, options.max_line_bytes).size());
    }
    scanner.Line(line, cut, binary);
    line.clear();
    cut = binary = false;
    odd = 0;
  }

  // One byte of UTF-8 text.
  void Byte(char c) {
    const char before = prev;
    prev = c;
    if (c == '\n' && before == '\r') return;  // CRLF: one line end
    if (c == '\n' || c == '\r') {
      Flush();
      return;
    }
    if (c == '\0') binary = true;
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 && c != '\t' && c != '\x1b') ++odd;
    if (line.size() <= options.max_line_bytes)
      line += c;
    else
      cut = true;
  }

  // One character of UTF-16 text, as UTF-8 (a byte-order mark inside the text is dropped).
  void CodePoint(uint32_t cp) {
    if (cp == 0xFEFF) return;
    if (cp < 0x80) {
      Byte(static_cast<char>(cp));
      return;
    }
    std::string utf8;
    core::AppendUtf8(cp, &utf8);
    for (const char c : utf8) Byte(c);
  }

  // One UTF-16 code unit; a surrogate without its pair is U+FFFD.
  void Unit(uint32_t u) {
    if (high != 0) {
      const uint32_t h = high;
      high = 0;
      if (u >= 0xDC00 && u <= 0xDFFF) {
        CodePoint(0x10000 + ((h - 0xD800) << 10) + (u - 0xDC00));
        return;
      }
      CodePoint(0xFFFD);
    }
    if (u >= 0xD800 && u <= 0xDBFF) {
      high = u;
    } else if (u >= 0xDC00 && u <= 0xDFFF) {
      CodePoint(0xFFFD);
    } else {
      CodePoint(u);
    }
  }

  // UTF-8 text: each run of bytes between line ends counted and appended at once, as Byte()
  // would one at a time.
  void Utf8(std::string_view bytes) {
    size_t lf = bytes.find('\n');  // the next LF, searched again only once passed
    for (size_t i = 0; i < bytes.size();) {
      const char c = bytes[i];
      if (c == '\n' || c == '\r') {
        Byte(c);
        ++i;
        continue;
      }
      if (lf < i) lf = bytes.find('\n', i);
      const size_t end = std::min(lf, bytes.substr(0, lf).find('\r', i));
      const std::string_view run = bytes.substr(i, end - i);
      // Control bytes are rare: the run's lowest byte says whether to count them.
      unsigned char lowest = 0xFF;
      for (const char b : run) lowest = std::min(lowest, static_cast<unsigned char>(b));
      if (lowest < 0x20) {
        for (const char b : run) {
          const unsigned char u = static_cast<unsigned char>(b);
          if (u == 0) binary = true;
          if (u < 0x20 && u != '\t' && u != 0x1b) ++odd;
        }
      }
      // The line keeps one byte past the cap (see Flush); the rest is cut.
      const size_t room =
          line.size() <= options.max_line_bytes ? options.max_line_bytes + 1 - line.size() : 0;
      line.append(run.substr(0, room));
      if (run.size() > room) cut = true;
      prev = run.back();
      i += run.size();
    }
  }

  void Decode(std::string_view bytes) {
    if (encoding == Encoding::kUtf8) {
      Utf8(bytes);
      return;
    }
    const bool le = encoding == Encoding::kUtf16Le;
    for (const char c : bytes) {
      const int b = static_cast<unsigned char>(c);
      if (half < 0) {
        half = b;
        continue;
      }
      Unit(static_cast<uint32_t>(le ? (half | b << 8) : (half << 8 | b)));
      half = -1;
    }
  }

  // Decides the encoding from `head` (all of it, or the whole log when shorter) and reads it.
  void Decide() {
    const auto at = [this](size_t i) { return i < head.size() ? head[i] : '\x01'; };
    size_t skip = 0;
    if (head.compare(0, 2, "\xFF\xFE") == 0) {
      encoding = Encoding::kUtf16Le;
      skip = 2;
    } else if (head.compare(0, 2, "\xFE\xFF") == 0) {
      encoding = Encoding::kUtf16Be;
      skip = 2;
    } else if (head.compare(0, 3, "\xEF\xBB\xBF") == 0) {
      encoding = Encoding::kUtf8;
      skip = 3;
    } else if (head.size() == kSniffBytes && at(0) != 0 && at(1) == 0 && at(2) != 0 &&
               at(3) == 0) {
      encoding = Encoding::kUtf16Le;
    } else if (head.size() == kSniffBytes && at(0) == 0 && at(1) != 0 && at(2) == 0 &&
               at(3) != 0) {
      encoding = Encoding::kUtf16Be;
    } else {
      encoding = Encoding::kUtf8;
    }
    const std::string first = std::move(head);
    head.clear();
    Decode(std::string_view(first).substr(std::min(skip, first.size())));
  }
};

LogFeed::LogFeed(const ScanOptions& options, bool live)
    : s_(std::make_unique<State>(options, live)) {}
LogFeed::~LogFeed() = default;

void LogFeed::Feed(std::string_view bytes) {
  State& st = *s_;
  st.scan.bytes += bytes.size();
  if (st.encoding == Encoding::kUnknown) {
    const size_t take = std::min(bytes.size(), kSniffBytes - st.head.size());
    st.head.append(bytes.substr(0, take));
    bytes.remove_prefix(take);
    if (st.head.size() < kSniffBytes) return;
    st.Decide();
  }
  st.Decode(bytes);
}

const LogScan& LogFeed::scan() const { return s_->scan; }

LogScan LogFeed::Finish() {
  State& st = *s_;
  if (st.encoding == Encoding::kUnknown) st.Decide();
  if (st.high != 0) {  // a high surrogate the text ended on
    st.high = 0;
    st.CodePoint(0xFFFD);
  }
  if (!st.line.empty()) st.Flush();
  st.scanner.Finish();
  return std::move(st.scan);
}

}  // namespace doctor

namespace {

// What a file that is not text is, told by its first bytes (the formats' magic numbers): a
// compressed log or an archive of logs (gzip, zstd, xz, bzip2, zip, 7z), or a screenshot of one
// (PNG, JPEG) or a document (PDF). Read as text, each is only binary lines and "nothing
// recognised", which says nothing of why. Empty when none matches.
std::string NotTextKind(std::string_view head) {
  struct Magic {
    std::string_view bytes;
    const char* what;
  };
  static constexpr Magic kMagics[] = {
      {"\x1F\x8B", "a gzip-compressed file; decompress it first (zcat FILE | vramfit doctor -)"},
      {"\x28\xB5\x2F\xFD", "a zstd-compressed file; decompress it first (zstdcat FILE | "
                           "vramfit doctor -)"},
      {std::string_view("\xFD" "7zXZ\0", 6), "an xz-compressed file; decompress it first "
                                           "(xzcat FILE | vramfit doctor -)"},
      {"BZh", "a bzip2-compressed file; decompress it first (bzcat FILE | vramfit doctor -)"},
      {"PK\x03\x04", "a zip archive; extract the log from it first (unzip -p FILE LOG | vramfit "
                     "doctor -)"},
      {"7z\xBC\xAF\x27\x1C", "a 7z archive; extract the log from it first"},
      {"\x89PNG\r\n", "a PNG image (a screenshot?); the doctor reads the log's text: copy the "
                       "text into a file"},
      {"\xFF\xD8\xFF", "a JPEG image (a screenshot?); the doctor reads the log's text: copy the "
                        "text into a file"},
      {"%PDF-", "a PDF document; copy the log's text out of it into a file"},
  };
  for (const Magic& m : kMagics) {
    if (!head.starts_with(m.bytes)) continue;
    // bzip2's "BZh" is also how a text could begin: its block size digit and block magic too.
    if (m.bytes == "BZh" && (head.size() < 10 || head[3] < '1' || head[3] > '9' ||
                             head.substr(4, 6) != "1AY&SY")) {
      continue;
    }
    return m.what;
  }
  return "";
}

}  // namespace

Result<LogScan> ScanLog(std::istream& in, const ScanOptions& options) {
  doctor::LogFeed feed(options);
  std::vector<char> buf(64 * 1024);
  bool first = true;
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const std::streamsize n = in.gcount();
    if (n <= 0) break;
    const std::string_view chunk(buf.data(), static_cast<size_t>(n));
    if (first) {
      first = false;
      if (const std::string kind = NotTextKind(chunk); !kind.empty()) {
        return Status::InvalidArgument("not a text log but " + kind);
      }
    }
    feed.Feed(chunk);
  }
  if (in.bad()) return Status::InvalidArgument("the log could not be read (I/O error)");
  return feed.Finish();
}

}  // namespace vramfit
