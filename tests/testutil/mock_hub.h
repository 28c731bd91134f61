// A mock Hugging Face Hub for tests and benchmarks, served with cpp-httplib on loopback only:
// the API's revision answer ({"sha", "siblings"}) and /resolve/ with byte ranges, over the files
// of local directories (the hollow checkpoints the inspect tests write), plus a second server,
// the "CDN", on another host name and port that /resolve/ can redirect to. A hook lets a test
// answer any request itself (errors, slow or lying answers); counters say what was asked.
#ifndef VRAMFIT_TESTS_TESTUTIL_MOCK_HUB_H_
#define VRAMFIT_TESTS_TESTUTIL_MOCK_HUB_H_

#include <httplib.h>

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace vramfit::testing {

inline constexpr const char* kMockCommit = "0123456789abcdef0123456789abcdef01234567";

class MockHub {
 public:
  // Starts both servers on 127.0.0.1 (the CDN is named "localhost": another host to a client).
  explicit MockHub(int threads = 64);
  ~MockHub();
  MockHub(const MockHub&) = delete;
  MockHub& operator=(const MockHub&) = delete;

  // "http://127.0.0.1:PORT", for HubOptions::endpoint.
  std::string endpoint() const;
  // Serves the regular files of `dir` (recursively, by relative path) as repo "org/name" at
  // kMockCommit, reachable as revision "main" or the commit. Extra names may be listed in the
  // API's siblings without a file behind them.
  void AddRepo(const std::string& repo, const std::string& dir,
               std::vector<std::string> extra_siblings = {});

  // /resolve/ answers with a 302 to the CDN server (the default: serve directly).
  std::atomic<bool> redirect_to_cdn{false};
  // Called first for every request to either server; true when it answered.
  using Hook = std::function<bool(const httplib::Request&, httplib::Response&)>;
  void SetHook(Hook hook);

  // What was asked: requests per server, body bytes sent, and the requests that carried an
  // Authorization header, per server.
  std::atomic<uint64_t> hub_requests{0}, cdn_requests{0}, bytes_sent{0};
  std::atomic<uint64_t> hub_auth{0}, cdn_auth{0};
  std::string last_auth() const;

  // Answers `req` from `path` with its Range, as the real servers do: 206 and Content-Range for
  // a range, the whole file otherwise (refused over 64 MiB: hollow shards are huge).
  void ServeFile(const httplib::Request& req, httplib::Response& res, const std::string& path);

 private:
  struct Repo {
    std::string dir;
    std::vector<std::string> files;
    std::vector<std::string> extra;
  };
  bool Hooked(const httplib::Request& req, httplib::Response& res);
  void Api(const httplib::Request& req, httplib::Response& res);
  void Resolve(const httplib::Request& req, httplib::Response& res, bool cdn);

  httplib::Server hub_, cdn_;
  int hub_port_ = 0, cdn_port_ = 0;
  std::thread hub_thread_, cdn_thread_;
  mutable std::mutex mu_;
  std::map<std::string, Repo> repos_;
  Hook hook_;
  std::string last_auth_;
};

// The same request, answered without httplib's own range handling (so a test can send a
// Content-Range of its choosing): clears the parsed ranges of a request being answered.
void DropRanges(const httplib::Request& req);

}  // namespace vramfit::testing

#endif  // VRAMFIT_TESTS_TESTUTIL_MOCK_HUB_H_
