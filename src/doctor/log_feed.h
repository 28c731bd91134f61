// ScanLog's incremental form (vramfit/doctor.h): a log fed in pieces as it arrives (the monitor
// reads an engine's output while it runs) gives the same events as ScanLog of the whole text.
// Memory stays bounded by the same line and event caps.
#ifndef VRAMFIT_DOCTOR_LOG_FEED_H_
#define VRAMFIT_DOCTOR_LOG_FEED_H_

#include <memory>
#include <string_view>

#include "vramfit/doctor.h"

namespace vramfit::doctor {

class LogFeed {
 public:
  // `live`: the log is read while it is written (the monitor), so each line's events are
  // wanted as the line completes: no look-ahead (a terminal's wrap width is then applied only
  // from where it shows, as the scan of a whole log applies it from its first line).
  explicit LogFeed(const ScanOptions& options = {}, bool live = false);
  ~LogFeed();
  LogFeed(const LogFeed&) = delete;
  LogFeed& operator=(const LogFeed&) = delete;

  // Scans every line `bytes` completes; a partial line waits for the next call.
  void Feed(std::string_view bytes);
  // The scan so far: its events grow as lines complete (live), or once the look-ahead over the
  // first lines is done (otherwise); past the event cap, failure events wait in a tail that
  // Finish appends.
  const LogScan& scan() const;
  // Scans the partial last line and returns the whole scan, as ScanLog would.
  LogScan Finish();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace vramfit::doctor

#endif  // VRAMFIT_DOCTOR_LOG_FEED_H_
