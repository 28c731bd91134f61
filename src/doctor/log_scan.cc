// The log scanner (see vramfit/doctor.h): bytes in, events out. One pass, chunked reads, lines
// cut at a cap; each line is cleaned of ANSI colours, its rank read from the worker prefix, and
// handed to every reader of the readers table (readers/table.cc) in order, with the previous
// line's message joined to it (a message wrapped over two lines). Worker prefixes and
// timestamps are not stripped: the readers' matches are substring matches.
//
// The event cap never drops the failure: routine events (serving metrics, engine markers) are
// kept only for their first occurrences per rank, and past the cap the last failure events are
// kept in a bounded tail that is appended at the end.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <deque>
#include <map>

#include "core/text.h"
#include "doctor/log_feed.h"
#include "doctor/readers/reader.h"
#include "doctor/text_scan.h"
#include "vramfit/doctor.h"

namespace vramfit {
namespace {

using doctor::Has;
using doctor::HasNoCase;

// The rank a worker prefix names: "(... rank=1 pid=..)", "[rank0]:", "(Worker_TP3 pid=..)",
// "[... TP0]", "(Worker_TP3_EP3 ..)".
std::string RankOf(std::string_view s) {
  size_t at = s.find("rank=");
  if (at != std::string_view::npos && at < 80) {
    size_t e = at + 5;
    while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) ++e;
    return "rank" + std::string(s.substr(at + 5, e - at - 5));
  }
  at = s.find("[rank");
  if (at != std::string_view::npos && at < 20) {
    size_t e = at + 5;
    while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) ++e;
    return "rank" + std::string(s.substr(at + 5, e - at - 5));
  }
  for (std::string_view key : {"_TP", " TP"}) {
    at = s.find(key);
    if (at != std::string_view::npos && at < 80) {
      size_t e = at + key.size();
      while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) ++e;
      if (e > at + key.size())
        return "TP" + std::string(s.substr(at + key.size(), e - at - key.size()));
    }
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
    case EventKind::kOllamaMarker:
    case EventKind::kTgiMarker:
    case EventKind::kRequest:
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
  Scanner(LogScan* out, const ScanOptions& o) : out_(out), opt_(o) {}

  void Line(std::string_view raw, bool cut, bool binary) {
    ++out_->lines;
    if (cut) ++out_->long_lines;
    if (binary) {
      ++out_->binary_lines;
      return;
    }
    line_ = doctor::StripAnsi(raw);
    rank_ = RankOf(line_);
    const uint64_t before = emitted_;
    framed_ = false;
    oomed_ = false;
    Match();
    if (emitted_ == before && LooksLikeAnError(line_) && out_->unplaced.size() < 8) {
      out_->unplaced.push_back(fmt::format("line {}: {}", out_->lines, Trim(line_, 160)));
    }
    prev_ = std::move(line_);
    prev_framed_ = framed_;
    prev_oomed_ = oomed_;
    prev_number_ = out_->lines;
  }

  void Finish() {
    for (LogEvent& e : tail_) out_->events.push_back(std::move(e));
    tail_.clear();
    std::vector<std::pair<std::string, uint64_t>> v(engine_counts_.begin(), engine_counts_.end());
    std::stable_sort(v.begin(), v.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    for (const auto& [e, n] : v) out_->engines.push_back(e);
  }

 private:
  // At most `n` bytes of the line without its surrounding blanks, never cut inside a UTF-8
  // character (a Chinese line longer than the cut keeps whole characters).
  static std::string Trim(std::string_view s, size_t n) {
    size_t b = 0;
    while (b < s.size() && (s[b] == ' ' || s[b] == '\t')) ++b;
    s = s.substr(b);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
    return std::string(core::Utf8Prefix(s, n));
  }

  static bool LooksLikeAnError(std::string_view s) {
    return Has(s, "Error") || Has(s, "ERROR") || Has(s, "out of memory") ||
           Has(s, "Out of memory") || Has(s, "OUT OF MEMORY") || Has(s, "Traceback") ||
           Has(s, "failed to") || Has(s, "Failed to");
  }

  LogEvent& Emit(EventKind kind, const char* engine) override {
    ++engine_counts_[engine];
    ++emitted_;
    if (kind == EventKind::kFrame || kind == EventKind::kTraceback) framed_ = true;
    if (kind == EventKind::kTorchOom) oomed_ = true;
    LogEvent e;
    e.kind = kind;
    e.engine = engine;
    e.line = out_->lines;
    e.rank = rank_;
    e.text = Trim(line_, 300);
    if (Routine(kind) && ++routine_[{static_cast<int>(kind), rank_}] > kRoutinePerRank) {
      ++out_->dropped_events;
      scratch_ = LogEvent();
      return scratch_;
    }
    if (out_->events.size() >= opt_.max_events) {
      ++out_->dropped_events;
      if (Routine(kind)) {
        scratch_ = LogEvent();
        return scratch_;
      }
      if (tail_.size() >= kTailEvents) tail_.pop_front();
      tail_.push_back(std::move(e));
      return tail_.back();
    }
    out_->events.push_back(std::move(e));
    return out_->events.back();
  }

  void Match() {
    if (line_.empty()) return;
    // The previous line's message and this one's, when this line has the same prefix or none.
    joined_.clear();
    joined_tight_.clear();
    if (!prev_.empty() && prev_number_ + 1 == out_->lines) {
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
      }
    }
    // IPython's current-line arrow: "----> 15" before IPython 8, "---> 15" since.
    const bool ipython = Has(line_, "--->") || Has(line_, "Cell In[");
    bigrams_.Build(line_);
    const bool after_oom = prev_oomed_ && prev_number_ + 1 == out_->lines;
    const doctor::Line line{line_,     rank_,         this,     joined_, prev_framed_ || ipython,
                            &bigrams_, joined_tight_, after_oom};
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
  bool framed_ = false, prev_framed_ = false;
  bool oomed_ = false, prev_oomed_ = false;  // the line emitted (part of) an allocator message
  uint64_t emitted_ = 0;
  LogEvent scratch_;
  doctor::Bigrams bigrams_;
  std::deque<LogEvent> tail_;
  std::map<std::pair<int, std::string>, uint64_t> routine_;
  std::map<std::string, uint64_t> engine_counts_;
};

}  // namespace

namespace doctor {

// The byte loop of ScanLog, kept between calls: line ends (LF, CR, CRLF, the pair split across
// two calls too), the line cap, the binary-line count.
struct LogFeed::State {
  explicit State(const ScanOptions& o) : options(o), scanner(&scan, o) { line.reserve(4096); }
  ScanOptions options;
  LogScan scan;
  Scanner scanner;
  std::string line;
  bool cut = false, binary = false;
  uint64_t odd = 0;
  char prev = 0;

  void Flush() {
    binary = binary || (line.size() > 16 && odd * 4 > line.size());
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
};

LogFeed::LogFeed(const ScanOptions& options) : s_(std::make_unique<State>(options)) {}
LogFeed::~LogFeed() = default;

void LogFeed::Feed(std::string_view bytes) {
  State& st = *s_;
  st.scan.bytes += bytes.size();
  for (const char c : bytes) {
    const char before = st.prev;
    st.prev = c;
    if (c == '\n' && before == '\r') continue;  // CRLF: one line end
    if (c == '\n' || c == '\r') {
      st.Flush();
      continue;
    }
    if (c == '\0') st.binary = true;
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 && c != '\t' && c != '\x1b') ++st.odd;
    if (st.line.size() <= st.options.max_line_bytes)
      st.line += c;
    else
      st.cut = true;
  }
}

const LogScan& LogFeed::scan() const { return s_->scan; }

LogScan LogFeed::Finish() {
  State& st = *s_;
  if (!st.line.empty()) st.Flush();
  st.scanner.Finish();
  return std::move(st.scan);
}

}  // namespace doctor

Result<LogScan> ScanLog(std::istream& in, const ScanOptions& options) {
  doctor::LogFeed feed(options);
  std::vector<char> buf(64 * 1024);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const std::streamsize n = in.gcount();
    if (n <= 0) break;
    feed.Feed(std::string_view(buf.data(), static_cast<size_t>(n)));
  }
  if (in.bad()) return Status::InvalidArgument("the log could not be read (I/O error)");
  return feed.Finish();
}

}  // namespace vramfit
