// The mock Hub (see mock_hub.h): two cpp-httplib servers on loopback, answering from local
// directories with pread, so hollow (sparse) shards of any size cost what their headers cost.
#include "testutil/mock_hub.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

namespace vramfit::testing {

namespace fs = std::filesystem;

void DropRanges(const httplib::Request& req) {
  // httplib hands handlers a const view of its own, non-const request; clearing the parsed
  // ranges keeps it from re-slicing the body and rewriting Content-Range.
  const_cast<httplib::Request&>(req).ranges.clear();
}

namespace {

// cpp-httplib 0.11 listens with a backlog of 5 (CPPHTTPLIB_LISTEN_BACKLOG, fixed when Debian
// built it): 16 connections opened at once would see SYNs dropped and retried a second later,
// which no real server does. listen() again on the bound socket widens its queue.
void WidenBacklog(int port) {
  for (int fd = 0; fd < 4096; ++fd) {
    int listening = 0;
    socklen_t len = sizeof listening;
    if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening) {
      continue;
    }
    sockaddr_in addr{};
    socklen_t alen = sizeof addr;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &alen) == 0 &&
        addr.sin_family == AF_INET && ntohs(addr.sin_port) == port) {
      ::listen(fd, 1024);
    }
  }
}

}  // namespace

MockHub::MockHub(int threads) {
  for (httplib::Server* s : {&hub_, &cdn_}) {
    s->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    s->set_keep_alive_max_count(100000);
    s->set_keep_alive_timeout(2);
    s->set_tcp_nodelay(true);  // as real servers: no Nagle delay between headers and body
  }
  hub_.Get(R"(/api/models/([^/]+/[^/]+)/revision/(.+))",
           [this](const httplib::Request& q, httplib::Response& r) {
             ++hub_requests;
             if (!Hooked(q, r)) Api(q, r);
           });
  hub_.Get(R"(/([^/]+/[^/]+)/(?:resolve|raw)/([^/]+)/(.+))",
           [this](const httplib::Request& q, httplib::Response& r) {
             ++hub_requests;
             if (!Hooked(q, r)) Resolve(q, r, false);
           });
  cdn_.Get(R"(/cdn/([^/]+/[^/]+)/([^/]+)/(.+))",
           [this](const httplib::Request& q, httplib::Response& r) {
             ++cdn_requests;
             if (!Hooked(q, r)) Resolve(q, r, true);
           });
  hub_port_ = hub_.bind_to_any_port("127.0.0.1");
  cdn_port_ = cdn_.bind_to_any_port("127.0.0.1");
  WidenBacklog(hub_port_);
  WidenBacklog(cdn_port_);
  hub_thread_ = std::thread([this] { hub_.listen_after_bind(); });
  cdn_thread_ = std::thread([this] { cdn_.listen_after_bind(); });
  // stop() before the accept loop runs would be lost: wait for both loops.
  while (!hub_.is_running() || !cdn_.is_running()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

MockHub::~MockHub() {
  hub_.stop();
  cdn_.stop();
  hub_thread_.join();
  cdn_thread_.join();
}

std::string MockHub::endpoint() const { return fmt::format("http://127.0.0.1:{}", hub_port_); }

void MockHub::AddRepo(const std::string& repo, const std::string& dir,
                      std::vector<std::string> extra_siblings) {
  Repo r;
  r.dir = dir;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) r.files.push_back(fs::relative(e.path(), dir).string());
  }
  std::sort(r.files.begin(), r.files.end());
  r.extra = std::move(extra_siblings);
  std::lock_guard<std::mutex> lock(mu_);
  repos_[repo] = std::move(r);
}

void MockHub::SetHook(Hook hook) {
  std::lock_guard<std::mutex> lock(mu_);
  hook_ = std::move(hook);
}

std::string MockHub::last_auth() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_auth_;
}

bool MockHub::Hooked(const httplib::Request& req, httplib::Response& res) {
  Hook hook;
  {
    std::lock_guard<std::mutex> lock(mu_);
    hook = hook_;
    if (req.has_header("Authorization")) last_auth_ = req.get_header_value("Authorization");
  }
  if (req.has_header("Authorization")) {
    ++(req.local_port == hub_port_ ? hub_auth : cdn_auth);
  }
  return hook && hook(req, res);
}

void MockHub::Api(const httplib::Request& req, httplib::Response& res) {
  const std::string repo = req.matches[1], rev = req.matches[2];
  std::lock_guard<std::mutex> lock(mu_);
  auto it = repos_.find(repo);
  if (it == repos_.end()) {
    res.status = 404;
    res.set_header("X-Error-Code", "RepoNotFound");
    res.set_content(R"({"error":"Repository not found"})", "application/json");
    return;
  }
  if (rev != "main" && rev != kMockCommit) {
    res.status = 404;
    res.set_header("X-Error-Code", "RevisionNotFound");
    res.set_content(R"({"error":"Invalid rev id"})", "application/json");
    return;
  }
  nlohmann::json j;
  j["id"] = repo;
  j["sha"] = kMockCommit;
  j["siblings"] = nlohmann::json::array();
  for (const auto& f : it->second.files) j["siblings"].push_back({{"rfilename", f}});
  for (const auto& f : it->second.extra) j["siblings"].push_back({{"rfilename", f}});
  res.set_content(j.dump(), "application/json");
}

void MockHub::Resolve(const httplib::Request& req, httplib::Response& res, bool cdn) {
  const std::string repo = req.matches[1], rev = req.matches[2], file = req.matches[3];
  std::string path;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = repos_.find(repo);
    if (it == repos_.end()) {
      res.status = 404;
      res.set_header("X-Error-Code", "RepoNotFound");
      return;
    }
    if (rev != "main" && rev != kMockCommit) {
      res.status = 404;
      res.set_header("X-Error-Code", "RevisionNotFound");
      return;
    }
    if (!std::binary_search(it->second.files.begin(), it->second.files.end(), file)) {
      res.status = 404;
      res.set_header("X-Error-Code", "EntryNotFound");
      return;
    }
    path = (fs::path(it->second.dir) / file).string();
  }
  if (!cdn && redirect_to_cdn) {
    res.status = 302;
    res.set_header("Location", fmt::format("http://localhost:{}/cdn/{}/{}/{}", cdn_port_, repo,
                                           kMockCommit, file));
    return;
  }
  res.set_header("X-Repo-Commit", kMockCommit);
  // The Hub's ETag of a file (its LFS sha256 for weights); clients check it is there.
  res.set_header("ETag", fmt::format("\"{:016x}\"", std::hash<std::string>{}(repo + file)));
  ServeFile(req, res, path);
}

void MockHub::ServeFile(const httplib::Request& req, httplib::Response& res,
                        const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    if (fd >= 0) ::close(fd);
    res.status = 404;
    return;
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  uint64_t first = 0, last = size == 0 ? 0 : size - 1;
  const bool range = req.ranges.size() == 1;
  if (range) {
    const auto [a, b] = req.ranges[0];
    first = a < 0 ? 0 : static_cast<uint64_t>(a);
    last = b < 0 ? size - 1 : std::min<uint64_t>(static_cast<uint64_t>(b), size - 1);
    if (first >= size) {
      ::close(fd);
      DropRanges(req);
      res.status = 416;
      res.set_header("Content-Range", fmt::format("bytes */{}", size));
      return;
    }
  } else if (size > (uint64_t{64} << 20)) {
    ::close(fd);
    res.status = 500;
    res.set_content("the mock refuses whole reads of large files", "text/plain");
    return;
  }
  std::string body(size == 0 ? 0 : last - first + 1, '\0');
  const ssize_t got = ::pread(fd, body.data(), body.size(), static_cast<off_t>(first));
  ::close(fd);
  body.resize(got < 0 ? 0 : static_cast<size_t>(got));
  bytes_sent += body.size();
  DropRanges(req);
  if (range) {
    res.status = 206;
    res.set_header("Content-Range", fmt::format("bytes {}-{}/{}", first, last, size));
  }
  res.set_content(std::move(body), "application/octet-stream");
}

}  // namespace vramfit::testing
