// MonitorCommand (vramfit/monitor.h): the engine started as a child (fork/exec, POSIX) in its
// own process group with stdin from /dev/null, its stdout and stderr read through two pipes,
// written on unchanged and split into lines for the doctor's readers (LogFeed), whose
// milestones mark the stages; NVML sampled on a fixed clock in between. One thread: poll() waits
// for output until the next sample is due. Signals the caller records are passed to the
// child's group; past the timeout the group gets SIGTERM, then SIGKILL after the grace period.
#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>

#include "doctor/facts.h"
#include "doctor/log_feed.h"
#include "doctor/readers/reader.h"
#include "vramfit/monitor.h"

namespace vramfit {
namespace {

double Now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void WriteAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    const ssize_t w = write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;  // our own output is gone (a closed pipe): the child still runs
    data += w;
    n -= static_cast<size_t>(w);
  }
}

// The parent of `pid` from /proc/<pid>/stat ("pid (comm) state ppid ..."; comm may hold
// spaces and parentheses, so the last ')' ends it). 0 when unreadable.
uint32_t ParentOf(uint32_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string s;
  if (!std::getline(f, s)) return 0;
  const size_t close = s.rfind(')');
  if (close == std::string::npos || close + 4 >= s.size()) return 0;
  const char* p = s.c_str() + close + 4;  // past ") S "
  return static_cast<uint32_t>(std::strtoul(p, nullptr, 10));
}

// Which listed GPU processes are `root` or descend from it (the engine's workers). Answers are
// cached per pid; the cache is bounded.
class Family {
 public:
  explicit Family(uint32_t root) : root_(root) {}
  uint32_t root() const { return root_; }
  bool Contains(uint32_t pid) {
    if (pid == root_) return true;
    auto it = cache_.find(pid);
    if (it != cache_.end()) return it->second;
    if (cache_.size() > 4096) cache_.clear();
    bool mine = false;
    uint32_t p = pid;
    for (int depth = 0; depth < 64 && p > 1; ++depth) {
      p = ParentOf(p);
      if (p == root_) {
        mine = true;
        break;
      }
    }
    cache_[pid] = mine;
    return mine;
  }
  void Collect(const Reading& r, std::vector<uint32_t>* out) {
    out->clear();
    for (const GpuReading& g : r.gpus) {
      for (const ProcessMemory& p : g.processes) {
        if (std::find(out->begin(), out->end(), p.pid) == out->end() && Contains(p.pid)) {
          out->push_back(p.pid);
        }
      }
    }
  }

 private:
  uint32_t root_;
  std::map<uint32_t, bool> cache_;
};

// One of the child's output streams: passed on, and cut into lines for the log feed (a line
// longer than the scanner's cap is cut there; the rest until its end is passed on only).
struct Stream {
  int fd = -1;
  int out_fd = 1;
  std::string line;
  bool cut = false;
};

class Session {
 public:
  Session(Nvml& nvml, const MonitorOptions& o)
      : nvml_(nvml), o_(o), recorder_(nvml.gpus(), o.recorder), feed_(o.scan, /*live=*/true) {}

  Result<MonitorRun> Run();

 private:
  Status Start();
  void Sample();
  void ReadStream(Stream& s);
  void FeedLine(std::string_view line);
  void TakeEvents();
  bool ProcessAlive() const;
  void Signal(int sig);
  double Elapsed() const { return Now() - t0_; }

  Nvml& nvml_;
  const MonitorOptions& o_;
  Recorder recorder_;
  doctor::LogFeed feed_;
  size_t events_seen_ = 0;
  Reading reading_;
  std::vector<uint32_t> pids_;
  std::optional<Family> family_;
  double t0_ = 0;
  pid_t child_ = -1;
  Stream out_, err_;
  MonitorRun run_;
};

Status Session::Start() {
  int out[2], err[2], status_pipe[2];
  if (pipe2(out, O_CLOEXEC) != 0) return Status::Io("pipe: " + std::string(strerror(errno)));
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return Status::Io("pipe: " + std::string(strerror(errno)));
  }
  if (pipe2(status_pipe, O_CLOEXEC) != 0) {
    for (int fd : {out[0], out[1], err[0], err[1]}) close(fd);
    return Status::Io("pipe: " + std::string(strerror(errno)));
  }
  std::vector<char*> argv;
  for (const std::string& a : o_.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {out[0], out[1], err[0], err[1], status_pipe[0], status_pipe[1]}) close(fd);
    return Status::Io("fork: " + std::string(strerror(errno)));
  }
  if (pid == 0) {
    // The child: its own process group (Ctrl-C reaches it through us), no terminal input.
    setpgid(0, 0);
    const int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    execvp(argv[0], argv.data());
    const int e = errno;
    ssize_t ignored = write(status_pipe[1], &e, sizeof e);
    (void)ignored;
    _exit(127);
  }
  setpgid(pid, pid);  // both sides, so the group exists before either signals it
  close(out[1]);
  close(err[1]);
  close(status_pipe[1]);
  int e = 0;
  ssize_t n;
  do {
    n = read(status_pipe[0], &e, sizeof e);
  } while (n < 0 && errno == EINTR);
  close(status_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof e)) {
    waitpid(pid, nullptr, 0);
    close(out[0]);
    close(err[0]);
    return Status::NotFound(fmt::format("cannot run {}: {}", o_.command[0], strerror(e)));
  }
  child_ = pid;
  out_.fd = out[0];
  out_.out_fd = o_.child_stdout_to == 2 ? 2 : 1;
  err_.fd = err[0];
  err_.out_fd = 2;
  return Status::Ok();
}

void Session::Sample() {
  Status s = nvml_.Read(&reading_);
  reading_.seconds = Elapsed();
  if (!s.ok()) {
    recorder_.SampleFailed();
    return;
  }
  const uint32_t root = child_ > 0 ? static_cast<uint32_t>(child_) : o_.pid;
  if (root == 0) {
    pids_.clear();
  } else {
    if (!family_ || family_->root() != root) family_.emplace(root);
    family_->Collect(reading_, &pids_);
  }
  recorder_.AddSample(reading_, pids_);
  if (o_.on_sample) o_.on_sample(reading_);
}

void Session::TakeEvents() {
  const std::vector<LogEvent>& events = feed_.scan().events;
  for (; events_seen_ < events.size(); ++events_seen_) {
    const LogEvent& e = events[events_seen_];
    StageMark mark;
    mark.seconds = Elapsed();
    mark.engine = e.engine;
    mark.line = e.shown_line();
    mark.event = EventKindName(e.kind);
    mark.text = e.text;
    if (doctor::IsFailureEvent(e.kind)) {
      mark.stage = recorder_.stage();
      recorder_.Error(std::move(mark));
      continue;
    }
    const doctor::Reader* r = doctor::FindReader(e.engine);
    if (!r) continue;
    for (const doctor::Milestone& m : r->milestones) {
      if (m.kind != e.kind || m.stage <= recorder_.stage()) continue;
      mark.stage = m.stage;
      recorder_.Mark(std::move(mark));
      break;
    }
  }
}

void Session::FeedLine(std::string_view line) {
  feed_.Feed(line);
  feed_.Feed("\n");
  TakeEvents();
}

void Session::ReadStream(Stream& s) {
  char buf[16384];
  ssize_t n;
  do {
    n = read(s.fd, buf, sizeof buf);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) {
    if (!s.line.empty() || s.cut) FeedLine(s.line);
    s.line.clear();
    close(s.fd);
    s.fd = -1;
    return;
  }
  WriteAll(s.out_fd, buf, static_cast<size_t>(n));
  const size_t cap = o_.scan.max_line_bytes;
  for (ssize_t i = 0; i < n; ++i) {
    const char c = buf[i];
    if (c == '\n') {
      FeedLine(s.line);
      s.line.clear();
      s.cut = false;
    } else if (s.line.size() < cap) {
      s.line += c;
    } else {
      s.cut = true;
    }
  }
}

// The attached process exists and has not ended (a zombie waiting for its parent has).
bool Session::ProcessAlive() const {
  if (kill(static_cast<pid_t>(o_.pid), 0) != 0 && errno != EPERM) return false;
  std::ifstream f("/proc/" + std::to_string(o_.pid) + "/stat");
  std::string s;
  if (!std::getline(f, s)) return true;  // no /proc: kill's answer stands
  const size_t close = s.rfind(')');
  return close == std::string::npos || close + 2 >= s.size() || s[close + 2] != 'Z';
}

void Session::Signal(int sig) {
  if (child_ > 0) {
    if (kill(-child_, sig) != 0) kill(child_, sig);
  }
}

Result<MonitorRun> Session::Run() {
  const bool attach = o_.command.empty();
  run_.attached = attach;
  if (attach && (o_.pid == 0 || !ProcessAlive())) {
    return Status::NotFound(fmt::format("--pid {}: no such process", o_.pid));
  }
  t0_ = Now();
  Sample();  // the baseline, before the engine starts
  if (!attach) VRAMFIT_RETURN_IF_ERROR(Start());
  const double interval = std::max<uint32_t>(1, o_.interval_ms) / 1000.0;
  double next_sample = interval;
  double exited_at = -1, term_at = -1;
  bool killed = false;
  int status = 0;
  while (true) {
    // Signals recorded by the caller's handler.
    if (o_.pending_signal) {
      if (const int sig = o_.pending_signal->exchange(0); sig != 0) {
        run_.forwarded_signal = sig;
        if (attach) break;
        Signal(sig);
      }
    }
    const double now = Elapsed();
    if (now >= next_sample) {
      Sample();
      next_sample += interval;
      if (next_sample <= now) next_sample = now + interval;  // a late sample does not bunch up
    }
    // The timeout: SIGTERM to the group, SIGKILL after the grace period.
    if (o_.timeout_seconds > 0 && now >= o_.timeout_seconds && exited_at < 0) {
      if (attach) {
        run_.timed_out = true;
        break;
      }
      if (term_at < 0) {
        run_.timed_out = true;
        term_at = now;
        Signal(SIGTERM);
      } else if (!killed && now >= term_at + o_.kill_grace_seconds) {
        killed = true;
        Signal(SIGKILL);
      }
    }
    if (attach) {
      if (!ProcessAlive()) break;
    } else if (exited_at < 0) {
      const pid_t w = waitpid(child_, &status, WNOHANG);
      if (w == child_) exited_at = Elapsed();
    }
    // After the child's exit, its output is read to the end (a worker it left may hold the
    // pipes: at most half a second more).
    if (exited_at >= 0 && ((out_.fd < 0 && err_.fd < 0) || Elapsed() > exited_at + 0.5)) break;
    pollfd fds[2];
    nfds_t nfds = 0;
    for (Stream* s : {&out_, &err_}) {
      if (s->fd >= 0) fds[nfds++] = {s->fd, POLLIN, 0};
    }
    double wait = std::min(next_sample - Elapsed(), 0.05);
    if (exited_at >= 0) wait = std::min(wait, 0.01);
    const int ms = std::max(0, static_cast<int>(wait * 1000));
    if (nfds == 0) {
      if (ms > 0) poll(nullptr, 0, ms);
      continue;
    }
    if (poll(fds, nfds, ms) <= 0) continue;
    for (nfds_t k = 0; k < nfds; ++k) {
      if (fds[k].revents == 0) continue;
      ReadStream(fds[k].fd == out_.fd ? out_ : err_);
    }
  }
  for (Stream* s : {&out_, &err_}) {
    if (s->fd < 0) continue;
    if (!s->line.empty()) FeedLine(s->line);
    close(s->fd);
    s->fd = -1;
  }
  if (!attach && exited_at < 0) {  // stopped early: the child must not outlive us unseen
    Signal(SIGKILL);
    waitpid(child_, &status, 0);
  }
  Sample();  // the state at the end
  if (!attach) {
    if (WIFEXITED(status)) run_.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) run_.exit_code = 128 + WTERMSIG(status);
    if (run_.timed_out) run_.exit_code = 124;
  }
  run_.report = recorder_.Finish(Elapsed());
  run_.scan = feed_.Finish();
  return std::move(run_);
}

}  // namespace

Result<MonitorRun> MonitorCommand(Nvml& nvml, const MonitorOptions& options) {
  Session s(nvml, options);
  return s.Run();
}

}  // namespace vramfit
