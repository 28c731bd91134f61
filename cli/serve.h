// `vramfit serve`: the local web page (web/index.html and its files, embedded) and JSON APIs
// that answer with what the commands print: /api/plan, /api/fit, /api/inspect, /api/doctor
// (a log upload), /api/gpus, /api/models; ?format=html gives the report page instead. Each
// request runs the command itself (RunCaptured) with flags from a fixed list, a MODEL that is a
// catalog or Hub id or a path under the --root folders (nothing else on disk is read), a body
// and a running time that are bounded.
#ifndef VRAMFIT_CLI_SERVE_H_
#define VRAMFIT_CLI_SERVE_H_

#include <memory>
#include <string>
#include <vector>

#include "vramfit/status.h"

namespace vramfit::cli {

struct ServeOptions {
  std::string bind = "127.0.0.1";          // the address listened on
  int port = 8177;                         // 0: any free port (Server::port() tells which)
  std::vector<std::string> roots;          // folders whose checkpoints the page may read
  size_t max_body_bytes = 32 * 1024 * 1024;  // the largest request body (a log upload)
  int max_seconds = 30;                    // a request still running then answers 503
};

class Server {
 public:
  // Binds and starts serving on a thread of its own. kInvalidArgument for a root that is not
  // a folder, kIo when the address cannot be bound.
  static Result<std::unique_ptr<Server>> Start(const ServeOptions& options);
  ~Server();
  int port() const;
  // Blocks until Stop() (or the process ends).
  void Wait();
  void Stop();

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// MODEL as a request names it, made safe to read: a path (relative to a root, or absolute)
// that resolves, symlinks followed, inside one of `roots` (canonical folders), with no entry
// of its folder linking outside; or a catalog / Hub id that names no local path. Anything else
// is kInvalidArgument.
Result<std::string> ConfineModel(const std::string& model, const std::vector<std::string>& roots);

}  // namespace vramfit::cli

#endif  // VRAMFIT_CLI_SERVE_H_
