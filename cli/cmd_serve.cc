// `vramfit serve [--port N] [--bind ADDR] [--root DIR ...]`: the local web page (serve.h) on
// 127.0.0.1 unless an address is given, with a warning when it is not loopback.
#include <fmt/format.h>

#include "commands.h"
#include "serve.h"

namespace vramfit::cli {

std::function<int()> SetupServe(CLI::App* app) {
  auto o = std::make_shared<ServeOptions>();
  app->add_option("--port", o->port, "TCP port (default 8177; 0: any free port)")
      ->check(CLI::Range(0, 65535));
  app->add_option("--bind", o->bind,
                  "Address to listen on (default 127.0.0.1; any other is reachable by others)");
  app->add_option("--root", o->roots,
                  "A folder whose checkpoints the page may read (repeatable; default: none, "
                  "catalog and Hub ids only)");
  app->add_option("--max-seconds", o->max_seconds, "Longest a request may run (default 30)")
      ->check(CLI::Range(1, 3600));
  app->footer("  vramfit serve\n  vramfit serve --root ~/models --port 9000");
  return [o]() {
    const bool loopback = o->bind == "127.0.0.1" || o->bind == "::1" || o->bind == "localhost";
    if (!loopback) {
      fmt::print(Err(),
                 "vramfit serve: WARNING: listening on {}, not loopback: anyone who reaches this "
                 "address can plan with this machine's CPU and read the checkpoints' headers "
                 "under the --root folders\n",
                 o->bind);
    }
    auto server = Server::Start(*o);
    if (!server.ok()) {
      fmt::print(Err(), "vramfit serve: {}\n", server.status().message());
      return kExitUsage;
    }
    const bool v6 = o->bind.find(':') != std::string::npos;
    fmt::print(Err(), "vramfit serve: http://{}{}{}:{}/ (Ctrl-C to stop)\n", v6 ? "[" : "",
               o->bind, v6 ? "]" : "", (*server)->port());
    std::fflush(Err());
    (*server)->Wait();
    return kExitOk;
  };
}

}  // namespace vramfit::cli
