// A small HTTP client over libcurl's multi interface, for the Hub source: a batch of GETs (whole
// small files, or byte ranges) run in parallel over a bounded pool of connections (HTTP/2
// streams where the server offers them, keep-alive otherwise), redirects followed by hand so
// that the token only ever goes to its own origin, retries with exponential backoff on 5xx and
// transport errors, a timeout per request and one for the client's whole life.
//
// Every answer is checked before it is returned: a range answer must be a 206 whose
// Content-Range names the bytes asked for (or the file's end) and whose body has exactly that
// many bytes; a whole-file answer may not exceed its cap. A server that breaks this is a
// kCorrupt error naming the URL. HTTP error statuses (4xx) are returned, not turned into
// errors here: the caller knows what a 404 means for the file it asked for.
#ifndef VRAMFIT_SOURCES_HTTP_H_
#define VRAMFIT_SOURCES_HTTP_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "vramfit/status.h"

namespace vramfit::http {

struct Request {
  std::string url;
  bool range = false;     // a byte range [offset, offset + length); else the whole file
  uint64_t offset = 0;
  uint64_t length = 0;    // range: at least 1
  uint64_t max_body = 0;  // whole file: the most bytes accepted (more is kCorrupt)
};

struct Response {
  long status = 0;            // the final HTTP status, after redirects
  std::string body;           // 2xx: the bytes; other statuses: up to 64 KiB of the message
  uint64_t total_size = 0;    // range: the file's length (Content-Range); else body.size()
  std::string url;            // the URL that gave the final answer
  std::string error_code;     // X-Error-Code (the Hub's RepoNotFound, GatedRepo, ...)
  std::string error_message;  // X-Error-Message
  std::string retry_after;    // Retry-After
};

struct Options {
  std::string token;        // sent as a Bearer token to `auth_origin` only
  std::string auth_origin;  // "scheme://host:port" (lower case, port always written)
  int max_connections = 16;
  int request_timeout_ms = 30'000;
  int total_timeout_ms = 300'000;
  int max_retries = 4;
  int backoff_ms = 250;
  // (requests done, requests known, body bytes, seconds since start, finished).
  std::function<void(uint64_t, uint64_t, uint64_t, double, bool)> progress;
};

// "scheme://host:port" of a URL, lower case, the default port written out; empty when the URL
// does not parse.
std::string OriginOf(const std::string& url);

// Percent-encodes everything but unreserved characters (RFC 3986) and, when keep_slash, '/'.
std::string UrlEncode(std::string_view text, bool keep_slash);

class Client {
 public:
  explicit Client(Options options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Runs `requests` in parallel; (*out)[i] answers requests[i]. An error when any request
  // fails for good (after retries) or breaks the contract above.
  Status Fetch(const std::vector<Request>& requests, std::vector<Response>* out);

  // Reports the end of the whole fetch to the progress callback (when it reported anything).
  void Finish();

  // Body bytes and requests answered over the client's life.
  uint64_t bytes() const;
  uint64_t requests() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace vramfit::http

#endif  // VRAMFIT_SOURCES_HTTP_H_
