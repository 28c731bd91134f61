// The `vllm serve` flag check (see serve_flags.h). argparse's rules for long options
// (CPython Lib/argparse.py, _parse_optional and _get_option_tuples: exact match, then unique
// prefix) and vLLM's own (vllm/utils/argparse_utils.py FlexibleArgumentParser.parse_args at
// 9aaf83ef5, vllm/utils/__init__.py at v0.10.0: `_` read as `-`, dotted config keys).
#include "engines/vllm/serve_flags.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>

#include "core/text.h"
#include "engines/vllm/rules.h"

namespace vramfit::vllm {
namespace {

// Another engine's spelling of a vLLM setting (SGLang's server flags, llama.cpp's), as pasted
// into a `vllm serve` line: " (vLLM spells the nearest setting ...)", or "".
std::string VllmSpelling(std::string_view flag) {
  static constexpr std::pair<std::string_view, std::string_view> kNames[] = {
      {"--tp", "--tensor-parallel-size (-tp)"}, {"--tp-size", "--tensor-parallel-size (-tp)"},
      {"--pp-size", "--pipeline-parallel-size (-pp)"}, {"--dp", "--data-parallel-size (-dp)"},
      {"--dp-size", "--data-parallel-size (-dp)"}, {"--context-length", "--max-model-len"},
      {"--ctx-size", "--max-model-len"}, {"--mem-fraction-static", "--gpu-memory-utilization"},
      {"--max-running-requests", "--max-num-seqs"},
      {"--chunked-prefill-size", "--max-num-batched-tokens"},
      {"--disable-cuda-graph", "--enforce-eager"}, {"--page-size", "--block-size"},
      {"--model-path", "the model: `vllm serve MODEL` or --model"},
      {"--n-gpu-layers", "nothing: vLLM keeps every layer on the GPU (--cpu-offload-gb moves "
                         "weights to the CPU)"}};
  for (const auto& [other, vllm] : kNames) {
    if (flag == other) return fmt::format(" (vLLM spells the nearest setting {})", vllm);
  }
  return "";
}

// What took the place of a flag the 0.10 parser had and the 0.22 parser has not (both lists
// read from vllm/engine/arg_utils.py add_cli_args): the model config's rope fields moved into
// --hf-overrides, and request logging became opt-in (--enable-log-requests).
std::string Replacement(std::string_view flag) {
  static constexpr std::pair<std::string_view, std::string_view> kNow[] = {
      {"--rope-scaling", "--hf-overrides '{\"rope_scaling\": {...}}' sets it"},
      {"--rope-theta", "--hf-overrides '{\"rope_theta\": N}' sets it"},
      {"--disable-log-requests", "requests are not logged unless --enable-log-requests"}};
  for (const auto& [gone, now] : kNow) {
    if (flag == gone) return fmt::format(" ({})", now);
  }
  return "";
}

bool Has(const std::vector<std::string_view>& list, std::string_view name) {
  return std::binary_search(list.begin(), list.end(), name);
}

// What the release's parser makes of names beyond its option strings (see serve_flags.h).
struct Syntax {
  bool any_negation = true;  // `--no-NAME` of every flag (0.8+)
  bool dotted_keys = true;   // `--name.key` (0.9+)
};

// Whether `name` is accepted by the parser whose options are `list`; `why` gets argparse's
// complaint for an ambiguous prefix.
bool Accepts(const std::vector<std::string_view>& list, const std::string& name,
             std::string* why, Syntax syntax = {}) {
  if (Has(list, name)) return true;
  if (syntax.any_negation && name.rfind("--no-", 0) == 0 && Has(list, "--" + name.substr(5))) {
    return true;
  }
  const size_t dot = name.find('.');
  if (syntax.dotted_keys && dot != std::string::npos && Has(list, name.substr(0, dot))) {
    return true;
  }
  if (name.rfind("--", 0) != 0) {
    // vLLM rewrites `-O3`, `-O 3`, `-O=3` and `-O.key` before argparse sees them: into
    // `-O.level` at 0.10 (whose list has `-O`), into `--optimization-level` or `-O.mode` at
    // 0.22 (whose list has `--optimization-level`).
    if (name.rfind("-O", 0) == 0 && (Has(list, "-O") || Has(list, "--optimization-level"))) {
      return true;
    }
    // Any other one-letter option with its value attached (`-qawq`): argparse reads `-q`
    // then the rest as its value.
    return name.size() > 2 && Has(list, name.substr(0, 2));
  }
  std::vector<std::string_view> matches;
  for (std::string_view f : list) {
    if (f.rfind("--", 0) == 0 && f.rfind(name, 0) == 0) matches.push_back(f);
  }
  if (matches.size() == 1) return true;
  if (matches.size() > 1) {
    std::string all;
    for (size_t i = 0; i < matches.size() && i < 6; ++i) {
      all += (i ? ", " : "") + std::string(matches[i]);
    }
    *why = fmt::format("ambiguous option: {} could match {}{}", name, all,
                       matches.size() > 6 ? ", ..." : "");
  }
  return false;
}


// The one long flag of either list that `name` abbreviates, or "" (argparse's unique-prefix
// rule, _get_option_tuples; the newest list first).
std::string ExpandPrefix(const std::string& name) {
  for (const auto* list : {&ServeFlagsV022(), &ServeFlagsV010()}) {
    if (Has(*list, name)) return name;
  }
  for (const auto* list : {&ServeFlagsV022(), &ServeFlagsV010()}) {
    std::string_view only;
    int matches = 0;
    for (std::string_view f : *list) {
      if (f.rfind("--", 0) == 0 && f.rfind(name, 0) == 0) {
        only = f;
        ++matches;
      }
    }
    if (matches == 1) return std::string(only);
    if (matches > 1) return "";
  }
  return "";
}

}  // namespace

std::vector<std::string> CanonicalServeArgs(const std::vector<std::string>& args,
                                            const std::vector<std::string_view>& keep) {
  // vllm/utils/argparse_utils.py FlexibleArgumentParser.parse_args at 9aaf83ef5 (v0.22-dev;
  // vllm/utils/__init__.py at v0.10.0): names get `-` for `_` between `--` and the first
  // `.`; then every `--name.key[.key...][+] VALUE` (or `=VALUE`) is taken out, its value
  // json.loads'd (else kept as text; `+` splits it at commas into a list), merged into one
  // dict per name, and each dict is appended as `--name JSON` after the other words.
  std::vector<std::string> out;
  std::vector<std::pair<std::string, nlohmann::json>> dicts;  // in first-seen order
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() < 3 || a.rfind("--", 0) != 0) {
      out.push_back(a);
      continue;
    }
    const size_t eq = a.find('=');
    std::string name = a.substr(0, eq);
    const size_t dot = name.find('.');
    std::replace(name.begin() + 2, dot == std::string::npos ? name.end() : name.begin() + dot,
                 '_', '-');
    if (dot != std::string::npos) {
      std::string value;
      if (eq != std::string::npos) {
        value = a.substr(eq + 1);
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        out.push_back(a);  // argparse's "expected one argument" follows
        continue;
      }
      std::string path = name.substr(dot + 1);
      nlohmann::json v = JsonNesting(value) > kMaxJsonNesting
                             ? nlohmann::json(nlohmann::json::value_t::discarded)
                             : nlohmann::json::parse(value, nullptr, false);
      if (!path.empty() && path.back() == '+') {
        path.pop_back();
        v = nlohmann::json::array();
        for (size_t at = 0; at <= value.size();) {
          const size_t comma = std::min(value.find(',', at), value.size());
          v.push_back(value.substr(at, comma - at));
          at = comma + 1;
        }
      } else if (v.is_discarded()) {
        v = value;
      }
      std::string base = name.substr(0, dot);
      if (std::find(keep.begin(), keep.end(), base) == keep.end()) {
        const std::string full = ExpandPrefix(base);
        if (!full.empty()) base = full;
      }
      auto it = std::find_if(dicts.begin(), dicts.end(),
                             [&](const auto& d) { return d.first == base; });
      if (it == dicts.end()) it = dicts.insert(dicts.end(), {base, nlohmann::json::object()});
      nlohmann::json* at = &it->second;
      for (size_t from = 0;;) {
        const size_t next = path.find('.', from);
        const std::string key = path.substr(from, next - from);
        if (next == std::string::npos) {
          (*at)[key] = v;
          break;
        }
        if (!(*at)[key].is_object()) (*at)[key] = nlohmann::json::object();
        at = &(*at)[key];
        from = next + 1;
      }
      continue;
    }
    if (std::find(keep.begin(), keep.end(), name) == keep.end()) {
      const std::string full = ExpandPrefix(name);
      if (!full.empty()) name = full;
    }
    out.push_back(eq == std::string::npos ? name : name + a.substr(eq));
  }
  for (auto& [name, dict] : dicts) {
    out.push_back(name);
    out.push_back(dict.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  return out;
}

std::vector<std::string_view> ServeFlagsBefore010(int release) {
  std::vector<std::string_view> out;
  for (const FlagSpan& f : ServeFlagSpansBefore010()) {
    if (release >= f.first && (f.until == 0 || release < f.until)) out.push_back(f.flag);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Flags a 0.10.x patch release added after the v0.10.0 list (ServeFlagsV010) that the v0.22
// list also has: from that patch release on, a 0.10 release accepts them. PR #23734 (merged
// 2025-09-06, in v0.10.2) added --decode-context-parallel-size with its alias -dcp
// (vllm/engine/arg_utils.py add_cli_args).
namespace {
bool AddedInPatch010(const std::string& name, int release) {
  static const std::pair<std::string_view, int> kAdded[] = {
      {"--decode-context-parallel-size", 1002},
      {"-dcp", 1002},
  };
  for (const auto& [flag, first] : kAdded) {
    if (name == flag && release >= first) return true;
  }
  return false;
}
}  // namespace

Status CheckServeFlags(const std::vector<std::string>& given, const std::string& version) {
  int release = kNewestModelled;
  if (!version.empty()) {
    auto r = ParseRelease(version);
    if (!r.ok()) return r.status();
    release = *r;
  }
  // Before 0.10 the release's own list (serve_flags_history.cc) and its parser's rules: `_` read
  // as `-` from 0.5.1 (vllm/utils.py FlexibleArgumentParser, PR #5718, 2024-06-20), `--no-NAME`
  // of every flag from 0.8 (arg_utils.py get_kwargs: bool fields as BooleanOptionalAction),
  // dotted config keys from 0.9 (v0.10.0 has them; main on 2025-05-07 had not).
  const bool legacy = release < kOldestModelled;
  const std::vector<std::string_view> own =
      legacy ? ServeFlagsBefore010(release) : std::vector<std::string_view>{};
  const Syntax syntax{.any_negation = release >= 800, .dotted_keys = release >= 900};
  const bool oldest = release <= kOldestModelled + 99;  // any 0.10.x, and the older ones
  const bool newest = release >= kNewestModelled;
  // A release named beyond the newest whose parser was read (0.22.x): a flag missing from the
  // 0.22 list may be one it added, so it is not refused; the command parser lists it among the
  // flags not modelled.
  const bool beyond = !version.empty() && release > kNewestModelled + 99;
  const Rules rules = RulesFor(release);
  const std::string launcher =
      rules.serve_cli ? "vllm serve" : "python -m vllm.entrypoints.openai.api_server";
  for (const std::string& written : given) {
    if (written.size() < 2 || written[0] != '-') continue;
    // A negative number is a value, not a flag.
    if (std::isdigit(static_cast<unsigned char>(written[1])) || written[1] == '.') continue;
    std::string name = written.substr(0, written.find('='));
    if (name.rfind("--", 0) == 0 && release >= 501) {
      std::replace(name.begin() + 2, name.end(), '_', '-');
    }
    std::string why;
    if (legacy) {
      if (Accepts(own, name, &why, syntax)) continue;
    } else {
      const bool old_ok =
          !newest && (Accepts(ServeFlagsV010(), name, &why) || AddedInPatch010(name, release));
      const bool new_ok = !oldest && Accepts(ServeFlagsV022(), name, &why);
      if (old_ok || new_ok) continue;
    }
    const std::string release_text = version.empty() ? rules.text : version;
    if (beyond && why.empty()) continue;
    if (!why.empty()) {
      return Status::InvalidArgument(fmt::format("vLLM {}: {} (`{}` stops with this error)",
                                                 release_text, core::Printable(why), launcher));
    }
    // A flag the 0.10 list has and the 0.22 list has not left vLLM in between: say so, and how
    // to plan a release that still takes it, rather than guess a respelling.
    if (!legacy && newest && Accepts(ServeFlagsV010(), name, &why) && why.empty()) {
      return Status::InvalidArgument(fmt::format(
          "{}: vLLM {} no longer has this flag (`{}` stops with \"unrecognized arguments\"); "
          "0.10 had it, and it was removed in a release between 0.10 and {}{}: drop it, or plan "
          "the release you run with --engine vllm@X.Y",
          core::Printable(written.substr(0, written.find('='))), release_text, launcher,
          rules.text, Replacement(name)));
    }
    std::vector<std::pair<size_t, std::string>> scored;
    for (std::string_view f : legacy               ? own
                              : newest || !oldest ? ServeFlagsV022()
                                                  : ServeFlagsV010()) {
      if (f.rfind("--", 0) == 0) scored.emplace_back(core::EditDistance(name, f), f);
    }
    return Status::InvalidArgument(fmt::format(
        "{}: vLLM {} has no such flag (`{}` stops with \"unrecognized arguments\"){}; "
        "nearest: {}{}",
        core::Printable(written.substr(0, written.find('='))), release_text, launcher,
        VllmSpelling(name), core::NearestNames(std::move(scored), 3),
        version.empty() ? fmt::format(" (vLLM {} is the newest release whose flags were read; "
                                      "for a flag a later release added, name yours: "
                                      "--engine vllm@X.Y)",
                                      rules.text)
                        : ""));
  }
  return Status::Ok();
}

Status CheckCommandFlags(const EngineCommand& command, const std::string& version) {
  if (command.launcher == "vllm serve" && !version.empty()) {
    // The `vllm` command (vllm/scripts.py, PR #5090) came with v0.5.2; before it the package
    // installs no console script, so the shell finds no `vllm`.
    auto r = ParseRelease(version);
    if (!r.ok()) return r.status();
    if (!RulesFor(*r).serve_cli) {
      return Status::InvalidArgument(fmt::format(
          "`vllm serve`: vLLM {} has no `vllm` command (it came in 0.5.2, vllm/scripts.py, PR "
          "#5090); that release starts its server with `python -m "
          "vllm.entrypoints.openai.api_server --model MODEL ...`",
          core::Printable(version)));
    }
  }
  return CheckServeFlags(command.given_flags, version);
}

size_t JsonNesting(std::string_view text) {
  size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

}  // namespace vramfit::vllm
