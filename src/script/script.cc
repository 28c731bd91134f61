// Deploy scripts (include/vramfit/script.h): the shell reader's commands, seen through launch
// prefixes and containers, handed to the engine table. Nothing here names an engine: the
// table says which commands are engines' (`recognizes`) and which images run them (`images`).
#include "vramfit/script.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>

#include "core/text.h"
#include "script/shell.h"

namespace vramfit {
namespace {

using script::ShellCommand;
using script::ShellWord;

// The variable CUDA reads to number the GPUs a process sees (CUDA C Programming Guide, "CUDA
// Environment Variables"), and the one the NVIDIA Container Toolkit reads to pass GPUs into a
// container (nvidia-container-toolkit docs, "Environment variables (OCI spec)").
constexpr std::string_view kCudaDevices = "CUDA_VISIBLE_DEVICES";
constexpr std::string_view kNvidiaDevices = "NVIDIA_VISIBLE_DEVICES";

std::string_view Basename(std::string_view s) {
  const size_t slash = s.rfind('/');
  return slash == std::string_view::npos ? s : s.substr(slash + 1);
}

bool IsAssignment(std::string_view s) {
  const size_t eq = s.find('=');
  if (eq == 0 || eq == std::string_view::npos) return false;
  if (!std::isalpha(static_cast<unsigned char>(s[0])) && s[0] != '_') return false;
  return std::all_of(s.begin(), s.begin() + static_cast<long>(eq), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// GPUs a device list names: "0,1" -> 2, "all" -> -1 (no limit), "" or "none" -> 0.
int CountDevices(std::string_view list) {
  if (list == "all") return -1;
  if (list.empty() || list == "none" || list == "void") return 0;
  int n = 0;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string_view::npos) comma = list.size();
    if (comma > start) ++n;
    start = comma + 1;
  }
  return n;
}

// docker/podman `--gpus` (docs.docker.com, "docker container run", --gpus): "all", a count
// "2", or "device=0,1" (often written with inner quotes).
int CountGpusFlag(std::string value) {
  value.erase(std::remove(value.begin(), value.end(), '"'), value.end());
  if (value.rfind("device=", 0) == 0) return CountDevices(std::string_view(value).substr(7));
  if (value.rfind("count=", 0) == 0) value = value.substr(6);
  if (!value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      })) {
    return value.size() > 4 ? 9999 : std::stoi(value);
  }
  return -1;
}

// `docker run` options that take no value (docker container run reference); every other
// option takes the next word unless written --name=value. Short clusters of these letters
// (-it, -dit) take none either.
constexpr std::string_view kContainerBooleans[] = {
    "--detach", "--rm", "--interactive", "--tty", "--privileged", "--init", "--publish-all",
    "--read-only", "--no-healthcheck", "--oom-kill-disable", "--help", "--quiet", "--replace"};
constexpr std::string_view kContainerBooleanLetters = "ditPq";

// A release in an image tag: "v0.10.1", "0.10.1-cu128" -> "0.10.1"; "" for "latest".
std::string TagRelease(std::string_view tag) {
  if (!tag.empty() && (tag[0] == 'v' || tag[0] == 'V')) tag.remove_prefix(1);
  size_t n = 0, dots = 0;
  while (n < tag.size() && (std::isdigit(static_cast<unsigned char>(tag[n])) || tag[n] == '.')) {
    dots += tag[n] == '.';
    ++n;
  }
  if (n == 0 || dots == 0 || !std::isdigit(static_cast<unsigned char>(tag[0]))) return "";
  while (n > 0 && tag[n - 1] == '.') --n;
  return std::string(tag.substr(0, n));
}

// One command as an engine invocation, or nothing. Words used by the invocation are listed in
// *used (for their unknown values).
struct Seen {
  ScriptInvocation inv;
  std::vector<const ShellWord*> used;
  std::vector<std::string> notes;
};

class Analyzer {
 public:
  Analyzer(const ShellCommand& cmd, const std::vector<std::string>& environment,
           std::string_view file)
      : cmd_(cmd), w_(cmd.words), file_(file) {
    env_ = environment;
  }
  std::optional<Seen> Run();

 private:
  bool Launcher();
  bool Container(Seen* seen);
  std::string Lookup(std::string_view name) const {
    for (auto it = env_.rbegin(); it != env_.rend(); ++it) {
      if (it->size() > name.size() && it->compare(0, name.size(), name) == 0 &&
          (*it)[name.size()] == '=') {
        return it->substr(name.size() + 1);
      }
    }
    return "";
  }
  void Gpus(const std::vector<std::string>& env, Seen* seen) const {
    for (const std::string& e : env) {
      for (std::string_view name : {kCudaDevices, kNvidiaDevices}) {
        if (e.rfind(std::string(name) + "=", 0) != 0) continue;
        const int n = CountDevices(std::string_view(e).substr(name.size() + 1));
        if (n < 0) continue;
        if (seen->inv.gpus_visible < 0 || n < seen->inv.gpus_visible) {
          seen->inv.gpus_visible = n;
          seen->inv.gpus_from = e;
        }
      }
    }
  }

  const ShellCommand& cmd_;
  const std::vector<ShellWord>& w_;
  std::string_view file_;
  std::vector<std::string> env_;  // NAME=value the command starts with
  size_t k_ = 0;
  std::vector<const ShellWord*> used_;
};

// Steps over one launch prefix at k_ (nohup, exec, time, setsid, nice, sudo, env, stdbuf,
// command, uv run, uvx, docker exec); false when there is none.
bool Analyzer::Launcher() {
  const std::string_view w = Basename(w_[k_].text);
  auto skip_options = [&](std::initializer_list<std::string_view> with_value) {
    while (k_ < w_.size() && w_[k_].text.size() > 1 && w_[k_].text[0] == '-') {
      const std::string& o = w_[k_].text;
      ++k_;
      if (o == "--") break;
      if (std::find(with_value.begin(), with_value.end(), o) != with_value.end()) ++k_;
    }
  };
  if (w == "nohup" || w == "setsid" || w == "command" || w == "time" || w == "exec" ||
      w == "stdbuf") {
    ++k_;
    skip_options({"-a"});
    return true;
  }
  if (w == "nice") {
    ++k_;
    skip_options({"-n"});
    return true;
  }
  // `uv run [options] COMMAND` and `uvx [options] TOOL ...` run the command in a project's or
  // a tool's environment (uv's documentation, `uv run --help`: the options that take a value).
  if (w == "uvx" || (w == "uv" && k_ + 1 < w_.size() && w_[k_ + 1].text == "run")) {
    k_ += w == "uv" ? 2 : 1;
    skip_options({"--with", "-w", "--python", "-p", "--project", "--directory", "--env-file",
                  "--group", "--extra", "--index", "--default-index", "--package", "--from",
                  "--with-requirements", "--with-editable", "--config-file", "--cache-dir"});
    return true;
  }
  // `docker exec [options] CONTAINER COMMAND`: the command runs in a container that is already
  // up (its engine server, for `ollama run`, reads the container's own environment).
  if ((w == "docker" || w == "podman") && k_ + 1 < w_.size() && w_[k_ + 1].text == "exec") {
    k_ += 2;
    skip_options({"-e", "--env", "-u", "--user", "-w", "--workdir", "--env-file",
                  "--detach-keys"});
    if (k_ < w_.size()) ++k_;  // the container
    return true;
  }
  if (w == "sudo") {
    ++k_;
    skip_options({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"});
    return true;
  }
  if (w == "env") {
    ++k_;
    while (k_ < w_.size()) {
      const std::string& o = w_[k_].text;
      if (o == "-i" || o == "--ignore-environment" || o == "-") {
        env_.clear();
        ++k_;
      } else if (o == "-u" || o == "--unset") {
        k_ += 2;
      } else if (o == "--") {
        ++k_;
      } else if (IsAssignment(o)) {
        env_.push_back(o);
        used_.push_back(&w_[k_]);
        ++k_;
      } else {
        break;
      }
    }
    return true;
  }
  return false;
}

// `docker run` / `podman run` at k_: the image and its arguments, as the entrypoint's command.
bool Analyzer::Container(Seen* seen) {
  const std::string_view tool = Basename(w_[k_].text);
  if (tool != "docker" && tool != "podman" && tool != "nvidia-docker") return false;
  size_t at = k_ + 1;
  if (at < w_.size() && w_[at].text == "container") ++at;
  if (at >= w_.size() || w_[at].text != "run") return false;
  ++at;
  std::vector<std::string> env;  // a container starts with only the variables it is given
  std::vector<const ShellWord*> used;
  std::string entrypoint;
  int gpus = 0;
  std::string gpus_from;
  bool runtime = false;
  while (at < w_.size() && w_[at].text.size() > 1 && w_[at].text[0] == '-') {
    const std::string& o = w_[at].text;
    const size_t eq = o.find('=');
    const bool long_opt = o.rfind("--", 0) == 0;
    const std::string name = long_opt ? o.substr(0, eq) : o;
    bool takes_value = long_opt ? eq == std::string::npos &&
                                      std::find(std::begin(kContainerBooleans),
                                                std::end(kContainerBooleans), name) ==
                                          std::end(kContainerBooleans)
                                : o.find_first_not_of(kContainerBooleanLetters, 1) !=
                                      std::string::npos;
    if (name == "--") {
      ++at;
      break;
    }
    std::string value;
    if (long_opt && eq != std::string::npos) {
      value = o.substr(eq + 1);
    } else if (takes_value && at + 1 < w_.size()) {
      value = w_[at + 1].text;
      used.push_back(&w_[at + 1]);
    }
    if (name == "-e" || name == "--env") {
      if (IsAssignment(value)) {
        env.push_back(value);
      } else if (!value.empty()) {
        env.push_back(value + "=" + Lookup(value));
      }
    } else if (name == "--gpus") {
      gpus = CountGpusFlag(value);
      gpus_from = "--gpus " + value;
    } else if (name == "--runtime" && value == "nvidia") {
      runtime = true;
    } else if (name == "--device" && value.rfind("nvidia.com/gpu=", 0) == 0) {
      gpus = value.substr(15) == "all" ? -1 : std::max(gpus, 0) + 1;
      gpus_from = "--device " + value;
    } else if (name == "--entrypoint") {
      entrypoint = value;
    } else if (name == "--env-file") {
      seen->notes.push_back(fmt::format("{}:{}: {} {} is not read (give vramfit --env {})",
                                        file_, w_[at].line, name, core::Printable(value),
                                        core::Printable(value)));
    }
    at += takes_value && (!long_opt || eq == std::string::npos) ? 2 : 1;
  }
  if (at >= w_.size()) return false;
  const std::string image = w_[at].text;
  used.push_back(&w_[at]);
  std::string_view ref = image;
  ref = ref.substr(0, ref.find('@'));
  const size_t colon = ref.rfind(':');
  const bool has_tag = colon != std::string_view::npos && ref.find('/', colon) == ref.npos;
  const std::string_view repository = has_tag ? ref.substr(0, colon) : ref;
  const std::string_view tag = has_tag ? ref.substr(colon + 1) : std::string_view();
  std::vector<std::string> command;
  if (!entrypoint.empty()) command.push_back(entrypoint);
  for (const Engine* e : Engines()) {
    if (!entrypoint.empty()) break;
    for (const ContainerImage& img : e->images) {
      const bool match = repository == img.repository ||
                         (repository.size() > img.repository.size() &&
                          repository.ends_with(img.repository) &&
                          repository[repository.size() - img.repository.size() - 1] == '/');
      if (!match || !tag.starts_with(img.tag_prefix)) continue;
      std::string_view ep = img.entrypoint;
      while (!ep.empty()) {
        const size_t sp = ep.find(' ');
        command.emplace_back(ep.substr(0, sp));
        ep = sp == ep.npos ? std::string_view() : ep.substr(sp + 1);
      }
      seen->inv.version = TagRelease(tag);
      for (std::string_view f = img.install_flags; !f.empty();) {
        const size_t sp = f.find(' ');
        seen->inv.install_flags.emplace_back(f.substr(0, sp));
        f = sp == f.npos ? std::string_view() : f.substr(sp + 1);
      }
      break;
    }
    if (!command.empty()) break;
  }
  // An image no engine lists (`lmsysorg/sglang`, a local build) runs the command written after
  // it, as `docker run IMAGE COMMAND...` does: that command is read when it is an engine's.
  if (command.empty() && at + 1 >= w_.size()) return false;
  for (size_t a = at + 1; a < w_.size(); ++a) {
    command.push_back(w_[a].text);
    used.push_back(&w_[a]);
  }
  seen->inv.argv = env;
  seen->inv.argv.insert(seen->inv.argv.end(), command.begin(), command.end());
  seen->inv.image = image;
  seen->inv.gpus_visible = gpus_from.empty() ? -1 : gpus;
  seen->inv.gpus_from = gpus_from;
  if (gpus_from.empty() && !runtime) {
    seen->notes.push_back(fmt::format("{}:{}: `{} run` without --gpus: the container sees GPUs "
                                      "only where nvidia is the default runtime; read as all",
                                      file_, w_[k_].line, tool));
  }
  Gpus(env, seen);
  used_.insert(used_.end(), used.begin(), used.end());
  return true;
}

std::optional<Seen> Analyzer::Run() {
  Seen seen;
  while (k_ < w_.size() && w_[k_].assignment) {
    env_.push_back(w_[k_].text);
    used_.push_back(&w_[k_]);
    ++k_;
  }
  while (k_ < w_.size() && Launcher()) {
  }
  if (k_ >= w_.size()) return std::nullopt;
  if (!Container(&seen)) {
    seen.inv.argv = env_;
    for (size_t a = k_; a < w_.size(); ++a) {
      seen.inv.argv.push_back(w_[a].text);
      used_.push_back(&w_[a]);
    }
    Gpus(env_, &seen);
  }
  seen.inv.engine = EngineForCommand(seen.inv.argv);
  if (seen.inv.engine == nullptr) return std::nullopt;
  seen.inv.where = fmt::format("{}:{}", file_, cmd_.line);
  seen.used = std::move(used_);
  return seen;
}

// The flag `w` (a word of `c`) is the value of, or carries as --flag=VALUE, when that flag has
// no memory effect under `engine` and takes a value; "" otherwise.
std::string NoMemoryFlagOf(const ShellCommand& c, const ShellWord* w, const Engine& engine) {
  if (engine.no_memory_effect == nullptr || c.words.empty() || w < c.words.data() ||
      w >= c.words.data() + c.words.size()) {
    return "";
  }
  const size_t at = static_cast<size_t>(w - c.words.data());
  bool valued = false;
  const size_t eq = w->text.find('=');
  if (w->text.starts_with("-") && eq != std::string::npos) {
    // A name the unknown part left out (`--$X=1`) is no flag of the list.
    const std::string flag = w->text.substr(0, eq);
    return engine.no_memory_effect(flag, &valued) && valued ? flag : "";
  }
  // `--api-key $KEY`: an unquoted value that expanded to nothing marks the flag before it.
  if (w->text.starts_with("-") && engine.no_memory_effect(w->text, &valued) && valued) {
    return w->text;
  }
  if (at == 0) return "";
  const std::string& prev = c.words[at - 1].text;
  if (prev.starts_with("-") && prev.find('=') == std::string::npos && !c.words[at - 1].unknown &&
      engine.no_memory_effect(prev, &valued) && valued) {
    return prev;
  }
  return "";
}

}  // namespace

Result<ScriptRead> ReadDeployScript(std::string_view text, std::string_view file,
                                    const ScriptOptions& options) {
  if (IsPythonScript(text, file)) return ReadPythonScript(text, file, options);
  const std::string name = core::Printable(file);
  auto shell = script::ReadShell(text, name, options.environment, [&](const ShellCommand& c) {
    return Analyzer(c, {}, name).Run().has_value();
  });
  if (!shell.ok()) return shell.status();
  ScriptRead out;
  out.notes = std::move(shell->notes);
  for (const ShellCommand& c : shell->commands) {
    std::optional<Seen> seen = Analyzer(c, c.environment, name).Run();
    if (!seen) continue;
    for (const ShellWord* w : seen->used) {
      if (!w->unknown) continue;
      if (const std::string flag = NoMemoryFlagOf(c, w, *seen->inv.engine); !flag.empty()) {
        // `--api-key "$API_KEY"`: a secret CI does not give the checker, in a flag that
        // changes no memory; the plan does not depend on it.
        out.notes.push_back(fmt::format(
            "{}:{}: {}, in {}, which has no memory effect: checked without it", name,
            w->unknown->line, core::Printable(w->unknown->what), flag));
        if (w->text == flag) {
          // Its value vanished from the words: an empty one stands in, so that the flag does
          // not take the next flag as its value.
          std::vector<std::string>& argv = seen->inv.argv;
          for (size_t i = 0; i < argv.size(); ++i) {
            if (argv[i] == flag && (i + 1 == argv.size() || argv[i + 1].starts_with("-"))) {
              argv.insert(argv.begin() + static_cast<long>(i) + 1, "");
              break;
            }
          }
        }
        continue;
      }
      return Status::InvalidArgument(fmt::format(
          "{}:{}: {}, in the {} command of line {} (set it in the script, or give its value "
          "with --env FILE)",
          name, w->unknown->line, core::Printable(w->unknown->what), seen->inv.engine->title,
          c.line));
    }
    out.notes.insert(out.notes.end(), seen->notes.begin(), seen->notes.end());
    out.invocations.push_back(std::move(seen->inv));
  }
  return out;
}

Result<std::vector<std::pair<std::string, std::string>>> ReadEnvironmentFile(
    std::string_view text, std::string_view file) {
  auto shell = script::ReadShell(text, core::Printable(file), {}, nullptr);
  if (!shell.ok()) return shell.status();
  return std::move(shell->variables);
}

}  // namespace vramfit
