// The local web page's server (see serve.h) over cpp-httplib: the embedded web/ files, and the
// APIs, each a command run by RunCaptured on a thread of its own so that a request answers
// within ServeOptions::max_seconds whatever the command does.
#include "serve.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <string_view>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "vramfit/report_html.h"

namespace vramfit::cli {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxModelChars = 1024;
constexpr size_t kMaxValueChars = 256;
constexpr size_t kMaxFolderEntries = 100000;
constexpr int kMaxRunning = 4;  // commands running at once (a timed-out one still counts)

// The flags a request may give, as the commands spell them without "--"; nothing that names a
// file (a draft model, a config) is among them.
constexpr std::string_view kValueFlags[] = {
    "gpu", "gpu-memory", "other-memory", "engine", "tensor-parallel-size",
    "pipeline-parallel-size", "data-parallel-size", "max-model-len", "gpu-memory-utilization",
    "kv-cache-dtype", "max-num-seqs", "max-num-batched-tokens", "quantization", "dtype",
    "limit-mm-per-prompt", "goal", "min-context", "min-concurrency", "gpus"};
constexpr std::string_view kBoolFlags[] = {"enforce-eager", "enable-expert-parallel", "explain",
                                           "no-eager", "no-variants"};

bool Inside(const fs::path& path, const std::string& root) {
  const std::string p = path.string();
  return p == root || (p.size() > root.size() && p.compare(0, root.size(), root) == 0 &&
                       (root.back() == '/' || p[root.size()] == '/'));
}

std::string ErrorJson(const std::string& message) {
  nlohmann::ordered_json j = {{"schema", "vramfit.error/1"}, {"error", message}};
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

void Fail(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(ErrorJson(message), "application/json");
}

// The command line of one API request; kInvalidArgument names the parameter at fault.
Result<std::vector<std::string>> RequestArgs(const std::string& command,
                                             const httplib::Request& req,
                                             const std::vector<std::string>& roots,
                                             bool* html) {
  std::vector<std::string> args = {command};
  *html = false;
  std::string model;
  for (const auto& [name, value] : req.params) {
    if (value.size() > (name == "model" ? kMaxModelChars : kMaxValueChars) ||
        value.find('\0') != std::string::npos) {
      return Status::InvalidArgument(fmt::format("parameter {}: too long or not text", name));
    }
    if (name == "model") {
      model = value;
    } else if (name == "format") {
      if (value != "json" && value != "html")
        return Status::InvalidArgument("parameter format: expected json or html");
      *html = value == "html";
    } else if (std::find(std::begin(kValueFlags), std::end(kValueFlags), name) !=
               std::end(kValueFlags)) {
      if (!value.empty()) args.push_back(fmt::format("--{}={}", name, value));
    } else if (std::find(std::begin(kBoolFlags), std::end(kBoolFlags), name) !=
               std::end(kBoolFlags)) {
      if (value == "1" || value == "true" || value == "on") args.push_back("--" + name);
    } else {
      return Status::InvalidArgument(fmt::format("parameter {}: not one this API takes", name));
    }
  }
  if (command != "doctor") {
    if (model.empty()) return Status::InvalidArgument("parameter model: required");
    auto confined = ConfineModel(model, roots);
    if (!confined.ok()) return confined.status();
    args.insert(args.begin() + 1, *confined);
  } else {
    args.insert(args.begin() + 1, "-");
    if (!model.empty()) {
      auto confined = ConfineModel(model, roots);
      if (!confined.ok()) return confined.status();
      args.push_back("--model=" + *confined);
    }
  }
  args.push_back(*html ? "--html=-" : "--json");
  return args;
}

struct Job {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  Captured result;
};

}  // namespace

Result<std::string> ConfineModel(const std::string& model, const std::vector<std::string>& roots) {
  const auto refuse = [&](const std::string& why) {
    return Status::InvalidArgument(fmt::format("model {}: {}", model, why));
  };
  if (model.empty() || model.size() > kMaxModelChars || model.find('\0') != std::string::npos ||
      model[0] == '-') {
    return refuse("expected a catalog id, a Hub id or a path under a --root folder");
  }
  for (const std::string& root : roots) {
    const fs::path candidate =
        fs::path(model).is_absolute() ? fs::path(model) : root / fs::path(model);
    std::error_code ec;
    const fs::path real = fs::canonical(candidate, ec);
    if (ec) continue;
    if (!Inside(real, root)) return refuse("resolves outside the --root folders");
    const fs::path dir = fs::is_directory(real, ec) ? real : real.parent_path();
    size_t entries = 0;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (++entries > kMaxFolderEntries) return refuse("its folder has too many entries");
      if (!it->is_symlink(ec)) continue;
      std::error_code ec2;
      const fs::path target = fs::canonical(it->path(), ec2);
      if (ec2 || !Inside(target, root)) {
        return refuse(fmt::format("{} links outside the --root folders",
                                  it->path().filename().string()));
      }
    }
    return real.string();
  }
  // Not under a root: a catalog or Hub id, which must not name anything on this disk.
  std::error_code ec;
  const bool local = fs::exists(fs::symlink_status(model, ec));
  if (fs::path(model).is_absolute() || model[0] == '.' || model[0] == '~' ||
      model.find("..") != std::string::npos || model.find('\\') != std::string::npos || local) {
    return refuse("not under a --root folder (and not a catalog or Hub id)");
  }
  return model;
}

struct Server::Impl {
  ServeOptions options;
  std::vector<std::string> roots;  // canonical
  httplib::Server http;
  std::thread thread;
  int port = 0;
  // Commands running, shared with their threads (which may outlive a stopped server).
  std::shared_ptr<std::atomic<int>> running = std::make_shared<std::atomic<int>>(0);

  void Run(const std::string& command, const httplib::Request& req, httplib::Response& res,
           std::string input) {
    bool html = false;
    auto args = RequestArgs(command, req, roots, &html);
    if (!args.ok()) return Fail(res, 400, args.status().message());
    if (running->fetch_add(1) >= kMaxRunning) {
      running->fetch_sub(1);
      return Fail(res, 503, "busy: too many requests running; try again");
    }
    auto job = std::make_shared<Job>();
    std::thread([running = running, job, a = *args, in = std::move(input)]() mutable {
      Captured c = RunCaptured(std::move(a), in);
      std::lock_guard<std::mutex> lock(job->m);
      job->result = std::move(c);
      job->done = true;
      running->fetch_sub(1);
      job->cv.notify_all();
    }).detach();
    std::unique_lock<std::mutex> lock(job->m);
    if (!job->cv.wait_for(lock, std::chrono::seconds(options.max_seconds),
                          [&] { return job->done; })) {
      return Fail(res, 503, fmt::format("the {} did not finish in {} s", command,
                                        options.max_seconds));
    }
    const Captured& c = job->result;
    const char* type = html ? "text/html; charset=utf-8" : "application/json";
    if (c.exit_code != kExitUsage && !c.out.empty()) {
      res.set_content(c.out, type);
    } else if (!c.out.empty()) {
      res.status = 422;  // doctor: a log nothing recognised, reported as usual
      res.set_content(c.out, type);
    } else {
      std::string err = c.err;
      while (!err.empty() && err.back() == '\n') err.pop_back();
      Fail(res, 400, err.empty() ? "the command failed" : err);
    }
  }
};

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() { Stop(); }
int Server::port() const { return impl_->port; }

void Server::Wait() {
  if (impl_->thread.joinable()) impl_->thread.join();
}

void Server::Stop() {
  impl_->http.stop();
  Wait();
}

Result<std::unique_ptr<Server>> Server::Start(const ServeOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  for (const std::string& r : options.roots) {
    std::error_code ec;
    const fs::path real = fs::canonical(r, ec);
    if (ec || !fs::is_directory(real, ec)) {
      return Status::InvalidArgument(fmt::format("--root {}: not a folder", r));
    }
    impl->roots.push_back(real.string());
  }
  Impl* s = impl.get();
  httplib::Server& http = s->http;
  http.set_payload_max_length(options.max_body_bytes);
  http.set_read_timeout(10, 0);
  http.set_write_timeout(10, 0);
  http.new_task_queue = [] { return new httplib::ThreadPool(8); };
  // A loopback server answers only requests addressed to loopback (no DNS rebinding).
  const bool loopback = options.bind == "127.0.0.1" || options.bind == "::1" ||
                        options.bind == "localhost";
  http.set_pre_routing_handler([s, loopback](const httplib::Request& req,
                                             httplib::Response& res) {
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Content-Security-Policy",
                   "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' "
                   "'unsafe-inline'; img-src 'self' data:");
    if (!loopback) return httplib::Server::HandlerResponse::Unhandled;
    std::string host = req.get_header_value("Host");
    const size_t colon = host.rfind(':');
    if (colon != std::string::npos && host.find(']', colon) == std::string::npos)
      host.resize(colon);
    if (host == "127.0.0.1" || host == "localhost" || host == "[::1]")
      return httplib::Server::HandlerResponse::Unhandled;
    Fail(res, 403, "this server answers requests to 127.0.0.1 or localhost only");
    return httplib::Server::HandlerResponse::Handled;
  });
  struct Page {
    const char* url;
    const char* file;
    const char* type;
  };
  static constexpr Page kPages[] = {{"/", "index.html", "text/html; charset=utf-8"},
                                    {"/app.js", "app.js", "text/javascript"},
                                    {"/report.css", "report.css", "text/css"},
                                    {"/report.js", "report.js", "text/javascript"}};
  for (const Page& p : kPages) {
    http.Get(p.url, [p](const httplib::Request&, httplib::Response& res) {
      const std::string_view bytes = WebAsset(p.file);
      res.set_content(std::string(bytes), p.type);
    });
  }
  for (const char* command : {"plan", "fit", "inspect"}) {
    http.Get(fmt::format("/api/{}", command),
             [s, command](const httplib::Request& req, httplib::Response& res) {
               s->Run(command, req, res, "");
             });
  }
  http.Post("/api/doctor", [s](const httplib::Request& req, httplib::Response& res) {
    std::string log = req.has_file("log") ? req.get_file_value("log").content : req.body;
    if (log.empty()) return Fail(res, 400, "the log: POST it as the body or as a 'log' file");
    s->Run("doctor", req, res, std::move(log));
  });
  for (const char* list : {"gpus", "models"}) {
    http.Get(fmt::format("/api/{}", list),
             [list](const httplib::Request&, httplib::Response& res) {
               const Captured c = RunCaptured({list, "--json"});
               res.set_content(c.out, "application/json");
             });
  }
  const int port = options.port == 0 ? http.bind_to_any_port(options.bind)
                   : http.bind_to_port(options.bind, options.port) ? options.port
                                                                   : -1;
  if (port <= 0) {
    return Status::Io(fmt::format("cannot listen on {}:{} (in use, or not an address here)",
                                  options.bind, options.port));
  }
  s->port = port;
  s->thread = std::thread([s] { s->http.listen_after_bind(); });
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

}  // namespace vramfit::cli
