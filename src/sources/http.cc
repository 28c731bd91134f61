// The Hub source's HTTP client (see http.h) over libcurl's multi interface. One easy handle per
// attempt; the multi handle keeps the connections (and HTTP/2 sessions) between batches.
// Redirects are followed here rather than by libcurl, so the Authorization header is added per
// hop, only when the hop's origin is the endpoint's.
#include "sources/http.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>

namespace vramfit::http {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMaxRedirects = 10;
constexpr size_t kMaxErrorBody = 64 << 10;
constexpr int kMaxBackoffMs = 8'000;
constexpr const char* kUserAgent = "vramfit/0.1";

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

bool IEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' ||
                        s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

bool ParseU64(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 19) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = v;
  return true;
}

// "bytes FIRST-LAST/TOTAL" (RFC 9110 14.4); false for anything else ("*" totals included).
bool ParseContentRange(std::string_view v, uint64_t* first, uint64_t* last, uint64_t* total) {
  v = Trim(v);
  if (v.size() < 6 || !IEquals(v.substr(0, 6), "bytes ")) return false;
  v.remove_prefix(6);
  const size_t dash = v.find('-'), slash = v.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || slash < dash) {
    return false;
  }
  return ParseU64(Trim(v.substr(0, dash)), first) &&
         ParseU64(Trim(v.substr(dash + 1, slash - dash - 1)), last) &&
         ParseU64(Trim(v.substr(slash + 1)), total) && *first <= *last && *last < *total;
}

// One attempt at one request (one hop of its redirects).
struct Transfer {
  size_t index = 0;       // into the batch
  std::string url;        // this hop's URL
  int redirects = 0;
  int attempt = 0;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  Response response;
  std::string content_range;
  bool has_content_range = false;
  bool too_long = false;  // the body went past what was asked
  uint64_t cap = 0;       // most body bytes kept for a 2xx answer
  char error[CURL_ERROR_SIZE] = {};
};

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t len = size * n;
  std::string_view line(data, len);
  if (line.rfind("HTTP/", 0) == 0) {  // a new response (an interim 100 before it): start over
    t->response.error_code.clear();
    t->response.error_message.clear();
    t->response.retry_after.clear();
    t->content_range.clear();
    t->has_content_range = false;
    return len;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return len;
  const std::string_view key = Trim(line.substr(0, colon));
  const std::string_view value = Trim(line.substr(colon + 1));
  auto keep = [&](std::string* out) { *out = std::string(value.substr(0, 1024)); };
  if (IEquals(key, "Content-Range")) {
    keep(&t->content_range);
    t->has_content_range = true;
  } else if (IEquals(key, "X-Error-Code")) {
    keep(&t->response.error_code);
  } else if (IEquals(key, "X-Error-Message")) {
    keep(&t->response.error_message);
  } else if (IEquals(key, "Retry-After")) {
    keep(&t->response.retry_after);
  }
  return len;
}

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t len = size * n;
  long code = 0;
  curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &code);
  if (code >= 300 && code < 400) return len;  // a redirect's page: not kept
  const uint64_t cap = (code >= 200 && code < 300) ? t->cap : kMaxErrorBody;
  std::string& body = t->response.body;
  if (body.size() + len > cap) {
    if (code >= 200 && code < 300) {
      t->too_long = true;
      return 0;  // aborts the transfer (CURLE_WRITE_ERROR)
    }
    body.append(data, static_cast<size_t>(cap - body.size()));
    return len;
  }
  body.append(data, len);
  return len;
}

bool Retryable(CURLcode rc) {
  switch (rc) {
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_COULDNT_CONNECT:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
      return true;
    default:
      return false;
  }
}

bool RetryableStatus(long status) {
  return status == 500 || status == 502 || status == 503 || status == 504;
}

}  // namespace

std::string OriginOf(const std::string& url) {
  CURLU* u = curl_url();
  if (u == nullptr) return "";
  std::string out;
  if (curl_url_set(u, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK) {
    char *scheme = nullptr, *host = nullptr, *port = nullptr;
    if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK) {
      out = fmt::format("{}://{}:{}", scheme, host, port);
      std::transform(out.begin(), out.end(), out.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    }
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
  }
  curl_url_cleanup(u);
  return out;
}

std::string UrlEncode(std::string_view text, bool keep_slash) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

struct Client::State {
  Options o;
  CURLM* multi = nullptr;
  Clock::time_point start = Clock::now();
  Clock::time_point last_progress{};
  bool reported = false;
  uint64_t bytes = 0, done = 0, known = 0;

  double Seconds() const {
    return std::chrono::duration<double>(Clock::now() - start).count();
  }
  long RemainingMs() const {
    const auto spent =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    return static_cast<long>(o.total_timeout_ms) - static_cast<long>(spent);
  }
  void Progress(bool finished) {
    if (!o.progress) return;
    const auto now = Clock::now();
    if (!finished && Seconds() < 1.0) return;
    if (!finished && reported && now - last_progress < std::chrono::milliseconds(100)) return;
    if (finished && !reported) return;  // a fast fetch says nothing
    reported = true;
    last_progress = now;
    o.progress(done, known, bytes, Seconds(), finished);
  }
};

Client::Client(Options options) : s_(std::make_unique<State>()) {
  GlobalInit();
  s_->o = std::move(options);
  s_->o.max_connections = std::max(1, s_->o.max_connections);
  s_->multi = curl_multi_init();
  if (s_->multi != nullptr) {
    curl_multi_setopt(s_->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS,
                      static_cast<long>(s_->o.max_connections));
    curl_multi_setopt(s_->multi, CURLMOPT_MAX_HOST_CONNECTIONS,
                      static_cast<long>(s_->o.max_connections));
    curl_multi_setopt(s_->multi, CURLMOPT_PIPELINING, static_cast<long>(CURLPIPE_MULTIPLEX));
    // Keep every pooled connection between transfers (libcurl's default keeps 4 per easy
    // handle still added, and a batch's last handles are removed one by one).
    curl_multi_setopt(s_->multi, CURLMOPT_MAXCONNECTS, static_cast<long>(s_->o.max_connections));
  }
}

Client::~Client() {
  if (s_->multi != nullptr) curl_multi_cleanup(s_->multi);
}

void Client::Finish() { s_->Progress(true); }

uint64_t Client::bytes() const { return s_->bytes; }
uint64_t Client::requests() const { return s_->done; }

Status Client::Fetch(const std::vector<Request>& requests, std::vector<Response>* out) {
  out->assign(requests.size(), Response{});
  if (requests.empty()) return Status::Ok();
  if (s_->multi == nullptr) return Status::Io("cannot start libcurl (curl_multi_init failed)");
  State& s = *s_;
  s.known += requests.size();

  struct Waiting {
    std::unique_ptr<Transfer> t;
    Clock::time_point not_before;
  };
  std::deque<Waiting> queue;  // to start, in order (retries wait for their time)
  for (size_t i = 0; i < requests.size(); ++i) {
    auto t = std::make_unique<Transfer>();
    t->index = i;
    t->url = requests[i].url;
    queue.push_back({std::move(t), Clock::time_point{}});
  }
  std::vector<std::unique_ptr<Transfer>> running;
  Status failure = Status::Ok();

  auto cleanup = [&](Transfer* t) {
    if (t->easy != nullptr) {
      curl_multi_remove_handle(s.multi, t->easy);
      curl_easy_cleanup(t->easy);
      t->easy = nullptr;
    }
    if (t->headers != nullptr) {
      curl_slist_free_all(t->headers);
      t->headers = nullptr;
    }
  };
  auto start = [&](std::unique_ptr<Transfer> t) -> Status {
    const Request& r = requests[t->index];
    t->response = Response{};
    t->content_range.clear();
    t->has_content_range = false;
    t->too_long = false;
    t->error[0] = '\0';
    t->cap = r.range ? r.length : r.max_body;
    CURL* e = curl_easy_init();
    if (e == nullptr) return Status::Io("cannot start libcurl (curl_easy_init failed)");
    t->easy = e;
    const long remaining = s.RemainingMs();
    if (remaining <= 0) {
      return Status::Io(fmt::format("{}: the fetch took longer than its {} ms limit", t->url,
                                    s.o.total_timeout_ms));
    }
    curl_easy_setopt(e, CURLOPT_URL, t->url.c_str());
    curl_easy_setopt(e, CURLOPT_PRIVATE, t.get());
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
    if (t->url.rfind("https:", 0) == 0) curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    curl_easy_setopt(e, CURLOPT_USERAGENT, kUserAgent);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
                     std::min<long>(s.o.request_timeout_ms, remaining));
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                     std::min<long>(s.o.request_timeout_ms, remaining));
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, OnHeader);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, t.get());
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, OnBody);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, t.get());
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->error);
    if (r.range) {
      const std::string range = fmt::format("{}-{}", r.offset, r.offset + r.length - 1);
      curl_easy_setopt(e, CURLOPT_RANGE, range.c_str());  // copied by libcurl
    }
    // The token goes to the endpoint's own origin only: a redirect to a CDN (another host,
    // port or scheme) is asked without it.
    if (!s.o.token.empty() && !s.o.auth_origin.empty() && OriginOf(t->url) == s.o.auth_origin) {
      t->headers = curl_slist_append(nullptr, ("Authorization: Bearer " + s.o.token).c_str());
      curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->headers);
    }
    if (curl_multi_add_handle(s.multi, e) != CURLM_OK) {
      return Status::Io(fmt::format("{}: libcurl refused the request", t->url));
    }
    running.push_back(std::move(t));
    return Status::Ok();
  };
  auto retry_later = [&](std::unique_ptr<Transfer> t) {
    const long wait = std::min<long>(
        kMaxBackoffMs, static_cast<long>(s.o.backoff_ms) << std::min(t->attempt, 16));
    ++t->attempt;
    queue.push_back({std::move(t), Clock::now() + std::chrono::milliseconds(wait)});
  };
  // A finished transfer: done, a redirect to follow, a retry, or the batch's error.
  auto finish = [&](std::unique_ptr<Transfer> t, CURLcode rc) -> Status {
    const Request& r = requests[t->index];
    long status = 0;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
    char* redirect = nullptr;
    curl_easy_getinfo(t->easy, CURLINFO_REDIRECT_URL, &redirect);
    const std::string next = redirect != nullptr ? redirect : "";
    const std::string why = t->error[0] != '\0' ? t->error : curl_easy_strerror(rc);
    cleanup(t.get());
    if (t->too_long) {
      return Status::Corrupt(
          r.range ? fmt::format("{}: asked for {} bytes at {}, the server sent more", t->url,
                                r.length, r.offset)
                  : fmt::format("{}: larger than the {} bytes this file may have", t->url,
                                r.max_body));
    }
    if (rc != CURLE_OK) {
      if (Retryable(rc) && t->attempt < s.o.max_retries) {
        retry_later(std::move(t));
        return Status::Ok();
      }
      return Status::Io(fmt::format("{}: {}{}", t->url, why,
                                    t->attempt > 0 ? fmt::format(" ({} retries)", t->attempt)
                                                   : std::string()));
    }
    if (status >= 300 && status < 400 && status != 304) {
      if (next.empty()) {
        return Status::Corrupt(fmt::format("{}: HTTP {} without a Location", t->url, status));
      }
      if (++t->redirects > kMaxRedirects) {
        return Status::Io(fmt::format("{}: more than {} redirects", t->url, kMaxRedirects));
      }
      t->url = next;
      queue.push_front({std::move(t), Clock::time_point{}});
      return Status::Ok();
    }
    if (RetryableStatus(status) && t->attempt < s.o.max_retries) {
      retry_later(std::move(t));
      return Status::Ok();
    }
    Response& res = t->response;
    res.status = status;
    res.url = t->url;
    s.bytes += res.body.size();
    if (status >= 200 && status < 300) {
      if (r.range) {
        uint64_t first = 0, last = 0, total = 0;
        if (status == 200 && r.offset == 0 && res.body.size() <= r.length) {
          // The server ignored the range but the whole file fit in it.
          res.total_size = res.body.size();
        } else if (status != 206 || !t->has_content_range) {
          return Status::Corrupt(fmt::format(
              "{}: asked for bytes {}-{}, the server answered HTTP {} without a byte range",
              t->url, r.offset, r.offset + r.length - 1, status));
        } else if (!ParseContentRange(t->content_range, &first, &last, &total) ||
                   first != r.offset ||
                   (last != r.offset + r.length - 1 && !(last < r.offset + r.length - 1 &&
                                                         last + 1 == total))) {
          return Status::Corrupt(
              fmt::format("{}: asked for bytes {}-{}, the server answered Content-Range "
                          "\"{}\"",
                          t->url, r.offset, r.offset + r.length - 1, t->content_range));
        } else if (res.body.size() != last - first + 1) {
          return Status::Corrupt(
              fmt::format("{}: Content-Range \"{}\" announces {} bytes, the body has {}",
                          t->url, t->content_range, last - first + 1, res.body.size()));
        } else {
          res.total_size = total;
        }
      } else {
        res.total_size = res.body.size();
      }
    }
    ++s.done;
    s.Progress(false);
    (*out)[t->index] = std::move(res);
    return Status::Ok();
  };

  while (failure.ok() && (!queue.empty() || !running.empty())) {
    // Start what may start: the pool is bounded, and retries wait for their time.
    const auto now = Clock::now();
    for (size_t i = 0; i < queue.size() && failure.ok() &&
                       running.size() < static_cast<size_t>(s.o.max_connections);) {
      if (queue[i].not_before > now) {
        ++i;
        continue;
      }
      auto t = std::move(queue[i].t);
      queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(i));
      Transfer* raw = t.get();
      Status st = start(std::move(t));
      if (!st.ok()) {
        cleanup(raw);
        failure = st;
      }
    }
    if (!failure.ok()) break;
    if (s.RemainingMs() <= 0) {
      failure = Status::Io(fmt::format("{}: the fetch took longer than its {} ms limit",
                                       running.empty() ? requests[0].url : running[0]->url,
                                       s.o.total_timeout_ms));
      break;
    }
    int still = 0;
    curl_multi_perform(s.multi, &still);
    int left = 0;
    bool finished_any = false;
    while (CURLMsg* m = curl_multi_info_read(s.multi, &left)) {
      if (m->msg != CURLMSG_DONE) continue;
      Transfer* raw = nullptr;
      curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &raw);
      const CURLcode rc = m->data.result;
      auto it = std::find_if(running.begin(), running.end(),
                             [&](const auto& p) { return p.get() == raw; });
      if (it == running.end()) continue;
      std::unique_ptr<Transfer> t = std::move(*it);
      running.erase(it);
      finished_any = true;
      Status st = finish(std::move(t), rc);
      if (!st.ok() && failure.ok()) failure = st;
    }
    if (!failure.ok()) break;
    if (running.empty() && queue.empty()) break;
    if (finished_any) continue;  // start what waits behind them before waiting again
    int wait_ms = 100;
    if (running.empty()) {
      // Only retries waiting: sleep until the first may start.
      auto first = queue.front().not_before;
      for (const auto& w : queue) first = std::min(first, w.not_before);
      wait_ms = static_cast<int>(std::clamp<long>(
          std::chrono::duration_cast<std::chrono::milliseconds>(first - Clock::now()).count(),
          0, 100));
    }
    curl_multi_poll(s.multi, nullptr, 0, wait_ms, nullptr);
    s.Progress(false);
  }
  for (auto& t : running) cleanup(t.get());
  return failure;
}

}  // namespace vramfit::http
