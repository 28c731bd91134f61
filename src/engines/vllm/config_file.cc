// vLLM's `--config FILE` (see config_file.h).
#include "engines/vllm/config_file.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "engines/vllm/serve_flags.h"

namespace vramfit::vllm {
namespace {

// One YAML scalar as PyYAML's safe_load then vLLM's str() write it: quotes taken off; the
// booleans (true/yes/on, false/no/off in any of YAML 1.1's cases) as "true"/"false".
std::string YamlScalar(std::string v) {
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
    return v.substr(1, v.size() - 2);
  }
  for (const char* t : {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"}) {
    if (v == t) return "true";
  }
  for (const char* f : {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"}) {
    if (v == f) return "false";
  }
  return v;
}

}  // namespace

Result<std::vector<std::string>> ConfigFileFlags(std::string_view text, std::string_view file,
                                                 bool drop_model) {
  using Json = nlohmann::json;
  std::vector<std::pair<std::string, Json>> entries;  // key, value (string, bool, list, object)
  std::istringstream lines{std::string(text)};
  std::string line;
  int number = 0;
  auto bad = [&](const std::string& what) {
    return Status::InvalidArgument(fmt::format("--config {}:{}: {} (vramfit reads top-level "
                                               "`key: value` lines of vLLM's config file)",
                                               file, number, what));
  };
  while (std::getline(lines, line)) {
    ++number;
    if (JsonNesting(line) > kMaxJsonNesting) {
      return bad(fmt::format("a value nested deeper than {} levels", kMaxJsonNesting));
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t hash = line.find(" #");
    if (line.find_first_of("\"'") == std::string::npos && hash != std::string::npos) {
      line.erase(hash);
    }
    const size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos || line[first] == '#' || line == "---") continue;
    while (line.back() == ' ') line.pop_back();
    if (first > 0 || line.front() == '-') {
      // A block list item or a nested `k: v` under the last key, whose value was empty.
      if (entries.empty() || !(entries.back().second.is_array() ||
                               entries.back().second.is_object())) {
        return bad("an indented line that belongs to no key");
      }
      Json& v = entries.back().second;
      std::string item = line.substr(first);
      if (item.rfind("- ", 0) == 0 && (v.is_array() || v.empty())) {
        if (!v.is_array()) v = Json::array();
        v.push_back(YamlScalar(item.substr(2)));
        continue;
      }
      const size_t colon = item.find(": ");
      if (colon == std::string::npos || !(v.is_object() || v.empty())) {
        return bad("expected `- item` or `key: value` under the key");
      }
      if (!v.is_object()) v = Json::object();
      const std::string value = YamlScalar(item.substr(colon + 2));
      Json parsed = Json::parse(value, nullptr, false);
      v[item.substr(0, colon)] = parsed.is_discarded() ? Json(value) : parsed;
      continue;
    }
    const size_t colon = line.find(':');
    if (colon == std::string::npos || colon == 0 ||
        (colon + 1 < line.size() && line[colon + 1] != ' ')) {
      return bad("expected `key: value`");
    }
    std::string key = YamlScalar(line.substr(0, colon));
    const size_t from = line.find_first_not_of(' ', colon + 1);
    std::string value = from == std::string::npos ? "" : line.substr(from);
    if (value.empty()) {
      entries.emplace_back(key, Json::array());  // filled by the indented lines that follow
      continue;
    }
    if (value.front() == '{' || value.front() == '[') {
      Json parsed = Json::parse(value, nullptr, false);
      if (parsed.is_discarded()) {
        return bad(fmt::format("{}: a flow value that is not JSON (write keys and strings in "
                               "double quotes)", key));
      }
      entries.emplace_back(key, parsed);
      continue;
    }
    value = YamlScalar(value);
    entries.emplace_back(key, value == "true" ? Json(true) : value == "false" ? Json(false)
                                                                              : Json(value));
  }
  std::vector<std::string> words;
  for (const auto& [key, v] : entries) {
    if (drop_model && key == "model") continue;
    if (v.is_boolean()) {
      if (v.get<bool>()) words.push_back("--" + key);
    } else if (v.is_array()) {
      if (v.empty()) continue;
      words.push_back("--" + key);
      for (const Json& item : v) {
        words.push_back(item.is_string() ? item.get<std::string>() : item.dump());
      }
    } else if (v.is_object()) {
      words.push_back("--" + key);
      words.push_back(v.dump(-1, ' ', false, Json::error_handler_t::replace));
    } else {
      words.push_back("--" + key);
      words.push_back(v.get<std::string>());
    }
  }
  return words;
}

Result<std::vector<std::string>> WithConfigFile(const std::vector<std::string>& argv,
                                                const ReadFile& read_file) {
  size_t at = argv.size();
  std::string file;
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == "--config" && i + 1 < argv.size()) {
      at = i;
      file = argv[i + 1];
    } else if (argv[i].rfind("--config=", 0) == 0) {
      at = i;
      file = argv[i].substr(9);
    }
  }
  if (at == argv.size()) return argv;
  auto text = read_file(file);
  if (!text.ok()) {
    return Status::InvalidArgument(fmt::format(
        "--config {}: vLLM reads flags from this YAML file, which cannot be read here ({}); "
        "give its flags on the command line", file, text.status().message()));
  }
  std::vector<std::string> out(argv.begin(), argv.end());
  out.erase(out.begin() + static_cast<long>(at),
            out.begin() + static_cast<long>(at) + (argv[at] == "--config" ? 2 : 1));
  size_t place = 0;
  bool positional = false;  // `vllm serve MODEL`: the command line's model wins (cli/serve.py)
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].rfind("vllm.entrypoints", 0) == 0) {
      place = i + 1;
      break;
    }
    if (out[i] == "serve" && i > 0 && out[i - 1].ends_with("vllm")) {
      positional = i + 1 < out.size() && out[i + 1].rfind("-", 0) != 0;
      place = i + 1 + (positional ? 1 : 0);
      break;
    }
  }
  auto words = ConfigFileFlags(*text, file, positional);
  if (!words.ok()) return words.status();
  out.insert(out.begin() + static_cast<long>(place), words->begin(), words->end());
  return out;
}

}  // namespace vramfit::vllm
