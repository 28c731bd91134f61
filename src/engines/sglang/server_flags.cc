// The SGLang server flag check (see server_flags.h). argparse's rules for options (CPython
// Lib/argparse.py, _parse_optional and _get_option_tuples: exact match, then unique prefix;
// negative numbers are values while no option looks like one, as none of SGLang's does), over
// the parser prepare_server_args builds (python/sglang/srt/server_args.py, a plain
// argparse.ArgumentParser at every listed release).
#include "engines/sglang/server_flags.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <iterator>

#include "core/text.h"
#include "engines/sglang/flags.h"
#include "engines/sglang/rules.h"

namespace vramfit::sglang {
namespace {

bool In(const ServerFlag& f, unsigned lists) {
  for (size_t i = 0; i < f.arity.size(); ++i) {
    if ((lists >> i & 1u) && f.arity[i] != '-') return true;
  }
  return false;
}

// argparse's negative-number pattern: ^-\d+$|^-\d*\.\d+$.
bool NegativeNumber(std::string_view w) {
  if (w.size() < 2 || w[0] != '-') return false;
  const std::string_view rest = w.substr(1);
  const size_t dot = rest.find('.');
  auto digits = [](std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
  };
  if (dot == std::string_view::npos) return digits(rest);
  return dot + 1 < rest.size() && digits(rest.substr(0, dot)) && digits(rest.substr(dot + 1));
}

// Every list, for reading a command before its release is known.
constexpr unsigned kAllLists = (1u << std::size(kFlagListReleases)) - 1;

}  // namespace

const ServerFlag* FindServerFlag(std::string_view written, unsigned lists,
                                 std::vector<std::string_view>* others) {
  const auto& all = ServerFlags();
  auto it = std::lower_bound(all.begin(), all.end(), written,
                             [](const ServerFlag& f, std::string_view n) { return f.name < n; });
  if (it != all.end() && it->name == written && In(*it, lists)) return &*it;
  // A prefix: only of long options, as argparse matches a written `--x` (a single-dash word is
  // an option only when it is one exactly: SGLang's only one is -h).
  if (written.size() < 3 || !written.starts_with("--")) return nullptr;
  const ServerFlag* match = nullptr;
  std::vector<std::string_view> matches;
  for (; it != all.end() && it->name.starts_with(written); ++it) {
    if (In(*it, lists)) {
      match = &*it;
      matches.push_back(it->name);
    }
  }
  if (matches.size() == 1) return match;
  if (others != nullptr && matches.size() > 1) *others = std::move(matches);
  return nullptr;
}

char ReadingArity(const ServerFlag& flag) {
  for (size_t i = flag.arity.size(); i-- > 0;) {
    if (flag.arity[i] != '-') return flag.arity[i];
  }
  return '0';
}

bool IsOptionWord(const std::string& word) {
  if (word.size() < 2 || word[0] != '-') return false;
  if (FindServerFlag(word.substr(0, word.find('=')), kAllLists) != nullptr) return true;
  return !NegativeNumber(word) && word.find(' ') == std::string::npos;
}

Status CheckServerFlags(const std::vector<std::string>& given, const std::string& version) {
  int release = 0;
  if (!version.empty()) {
    auto r = ParseRelease(version);
    if (!r.ok()) return r.status();
    release = *r;
  }
  const unsigned lists = FlagListsFor(release);
  std::string listed;  // the releases whose lists decide, for the message
  for (size_t i = 0; i < std::size(kFlagListNames); ++i) {
    if (lists >> i & 1u) {
      listed += (listed.empty() ? "" : " or ") + std::string(kFlagListNames[i]);
    }
  }
  const std::string release_text =
      version.empty() || version == listed
          ? listed
          : fmt::format("{} (by the option list of {})", core::Printable(version), listed);
  // A release named beyond the newest option list read may have added the flag: not refused
  // (the command parser names it among the flags not modelled).
  const bool beyond = release > kFlagListReleases[std::size(kFlagListReleases) - 1];
  for (const std::string& written : given) {
    const std::string name = written.substr(0, written.find('='));
    std::vector<std::string_view> several;
    if (FindServerFlag(name, lists, &several) != nullptr) continue;
    if (beyond && several.size() <= 1) continue;
    if (several.size() > 1) {
      std::string all;
      for (size_t i = 0; i < several.size() && i < 6; ++i) {
        all += (i ? ", " : "") + std::string(several[i]);
      }
      return Status::InvalidArgument(fmt::format(
          "SGLang {}: ambiguous option: {} could match {}{} (the server stops with this error)",
          release_text, core::Printable(name), all, several.size() > 6 ? ", ..." : ""));
    }
    std::vector<std::pair<size_t, std::string>> scored;
    for (const ServerFlag& f : ServerFlags()) {
      if (In(f, lists) && f.name.starts_with("--")) {
        scored.emplace_back(core::EditDistance(name, f.name), std::string(f.name));
      }
    }
    return Status::InvalidArgument(fmt::format(
        "{}: SGLang {} has no such flag (the server stops with \"unrecognized arguments\"){}; "
        "nearest: {}",
        core::Printable(name), release_text, SglangSpelling(name),
        core::NearestNames(std::move(scored), 3)));
  }
  return Status::Ok();
}

Status CheckCommandFlags(const EngineCommand& command, const std::string& version) {
  return CheckServerFlags(command.given_flags, version);
}

}  // namespace vramfit::sglang
