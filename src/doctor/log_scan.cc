// The log scanner (see vramfit/doctor.h): bytes in, events out. One pass, chunked reads, lines
// cut at a cap; each line is cleaned of ANSI colours, its rank read from the worker prefix, and
// handed to every reader of the readers table (readers/table.cc) in order. Worker prefixes and
// timestamps are not stripped: the readers' matches are substring matches.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

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
  for (std::string_view key : {"Worker_TP", " TP"}) {
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
    const std::string clean = doctor::StripAnsi(raw);
    line_ = clean;
    rank_ = RankOf(line_);
    const size_t before = out_->events.size() + out_->dropped_events;
    Match();
    if (out_->events.size() + out_->dropped_events == before && LooksLikeAnError(line_) &&
        out_->unplaced.size() < 8) {
      out_->unplaced.push_back(fmt::format("line {}: {}", out_->lines, Trim(line_, 160)));
    }
  }

  void Finish() {
    std::vector<std::pair<std::string, uint64_t>> v(engine_counts_.begin(), engine_counts_.end());
    std::stable_sort(v.begin(), v.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    for (const auto& [e, n] : v) out_->engines.push_back(e);
  }

 private:
  static std::string Trim(std::string_view s, size_t n) {
    size_t b = 0;
    while (b < s.size() && (s[b] == ' ' || s[b] == '\t')) ++b;
    s = s.substr(b);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
    return std::string(s.substr(0, n));
  }

  static bool LooksLikeAnError(std::string_view s) {
    return Has(s, "Error") || Has(s, "ERROR") || HasNoCase(s, "out of memory") ||
           Has(s, "Traceback") || HasNoCase(s, "failed to");
  }

  LogEvent& Emit(EventKind kind, const char* engine) override {
    ++engine_counts_[engine];
    if (out_->events.size() >= opt_.max_events) {
      ++out_->dropped_events;
      scratch_ = LogEvent();
      return scratch_;
    }
    LogEvent e;
    e.kind = kind;
    e.engine = engine;
    e.line = out_->lines;
    e.rank = rank_;
    e.text = Trim(line_, 300);
    out_->events.push_back(std::move(e));
    return out_->events.back();
  }

  void Match() {
    if (line_.empty()) return;
    const doctor::Line line{line_, rank_, this};
    for (const doctor::Reader* r : doctor::Readers()) r->match(line);
  }

  LogScan* out_;
  ScanOptions opt_;
  std::string line_;
  std::string rank_;
  LogEvent scratch_;
  std::map<std::string, uint64_t> engine_counts_;
};

}  // namespace

Result<LogScan> ScanLog(std::istream& in, const ScanOptions& options) {
  LogScan scan;
  Scanner scanner(&scan, options);
  std::string line;
  line.reserve(4096);
  bool cut = false, binary = false;
  uint64_t odd = 0;
  char prev = 0;
  std::vector<char> buf(64 * 1024);
  auto flush = [&]() {
    binary = binary || (line.size() > 16 && odd * 4 > line.size());
    scanner.Line(line, cut, binary);
    line.clear();
    cut = binary = false;
    odd = 0;
  };
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const std::streamsize n = in.gcount();
    if (n <= 0) break;
    scan.bytes += static_cast<uint64_t>(n);
    for (std::streamsize i = 0; i < n; ++i) {
      const char c = buf[static_cast<size_t>(i)];
      const char before = prev;
      prev = c;
      if (c == '\n' && before == '\r') continue;  // CRLF: one line end
      if (c == '\n' || c == '\r') {
        flush();
        continue;
      }
      if (c == '\0') binary = true;
      const unsigned char u = static_cast<unsigned char>(c);
      if (u < 0x20 && c != '\t' && c != '\x1b') ++odd;
      if (line.size() < options.max_line_bytes) line += c;
      else cut = true;
    }
  }
  if (in.bad()) return Status::InvalidArgument("the log could not be read (I/O error)");
  if (!line.empty()) flush();
  scanner.Finish();
  return scan;
}

}  // namespace vramfit
