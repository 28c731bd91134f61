// quantization_config -> QuantScheme, and the rule that says which modules a scheme covers.
// Layouts per method are those of docs/formats/quantized.md (AutoAWQ 88e4c76, AutoGPTQ
// 9f7d370 / GPTQModel f4c327a1, compressed-tensors ac8e2ba8, gpt-oss MXFP4, DeepSeek FP8).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <regex>
#include <unordered_map>

#include "formats/config.h"
#include "model/auto_round.h"
#include "model/quant_rules.h"
#include "vramfit/model.h"

namespace vramfit {
namespace {

// Full '*' wildcard match (greedy with one backtrack point: O(|pat| x |s|) at worst).
bool WildcardMatch(std::string_view pat, std::string_view s) {
  size_t p = 0, i = 0, star = std::string_view::npos, mark = 0;
  while (i < s.size()) {
    if (p < pat.size() && pat[p] == '*') {
      star = p++;
      mark = i;
    } else if (p < pat.size() && pat[p] == s[i]) {
      ++p;
      ++i;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      i = ++mark;
    } else {
      return false;
    }
  }
  while (p < pat.size() && pat[p] == '*') ++p;
  return p == pat.size();
}

// A glob names a module and everything below it ("model.layers.*.self_attn" covers
// "model.layers.3.self_attn.q_proj").
bool GlobPrefixMatch(std::string_view pat, std::string_view s) {
  for (size_t cut = 0; cut <= s.size(); ++cut) {
    if ((cut == s.size() || s[cut] == '.') && WildcardMatch(pat, s.substr(0, cut))) return true;
  }
  return false;
}

// Whether std::regex (a backtracking matcher, recursive in libstdc++) runs `pattern` in
// bounded time on a module name. Refused: a quantifier directly on another (`.*+`, `a{2}*`; a
// lazy `?` after one is fine), a quantified group holding a quantifier or an alternation
// (`(a+)+`, `(a|ab)*`): both backtrack exponentially (a config.json holding `.*+ayers` as a
// GPTQ `dynamic` key hung `plan`, found by the config fuzz target); and more than two unbounded
// repeats (`*`, `+`, `{n,}`), which backtrack as the name's length to their number on a name
// that does not match (`.*.*.*.*.*x`: 12 s on one 120-character name). Two cost at most about
// a millisecond on a 256-character name. Real patterns (`.*\.mlp\..*`, `.*\.(q|k)_proj`,
// `.*\.18\..*gate.*`) stay within that once their trailing `.*`, a no-op under re.match, is
// dropped (MatchablePattern).
bool BacktrackSafe(std::string_view pat) {
  struct Group {
    bool risky = false;  // holds a quantifier or an alternation
  };
  std::vector<Group> open;
  bool prev_quantifier = false;  // the last atom was itself quantified
  bool closed_risky = false;     // the last atom was a group that holds a quantifier
  int unbounded = 0;             // `*`, `+` and `{n,}` repeats
  // Backreferences (`\1`) have no use in a module pattern, and std::regex reads their digits
  // (and a repeat's `{n}`) into a long without an overflow check: refuse both kinds of number
  // where they could overflow (found by fuzz_config).
  for (size_t i = 0; i + 1 < pat.size(); ++i) {
    if (pat[i] == '\\' && std::isdigit(static_cast<unsigned char>(pat[i + 1]))) return false;
    if (pat[i] == '\\') ++i;
  }
  for (size_t i = 0, run = 0; i < pat.size(); ++i) {
    run = std::isdigit(static_cast<unsigned char>(pat[i])) ? run + 1 : 0;
    if (run > 6) return false;
  }
  for (size_t i = 0; i < pat.size(); ++i) {
    const char c = pat[i];
    const bool quantifier = c == '*' || c == '+' || c == '?' || c == '{';
    if (quantifier) {
      if (c == '?' && prev_quantifier && i > 0 && pat[i - 1] != '?') continue;  // lazy
      if (prev_quantifier || closed_risky) return false;
      if (c == '{') {
        const size_t end = pat.find('}', i);
        if (end == std::string_view::npos) return false;
        if (pat[end - 1] == ',') ++unbounded;
        i = end;
      } else if (c != '?' && ++unbounded > 2) {
        return false;
      }
      for (Group& g : open) g.risky = true;
      prev_quantifier = true;
      closed_risky = false;
      continue;
    }
    prev_quantifier = false;
    closed_risky = false;
    if (c == '\\') {
      ++i;  // the escaped character is one atom
    } else if (c == '[') {
      size_t j = i + 1;
      if (j < pat.size() && pat[j] == '^') ++j;
      if (j < pat.size() && pat[j] == ']') ++j;
      while (j < pat.size() && pat[j] != ']') j += pat[j] == '\\' ? 2 : 1;
      i = j;
    } else if (c == '(') {
      open.push_back({});
    } else if (c == ')') {
      if (open.empty()) return false;
      closed_risky = open.back().risky;
      open.pop_back();
    } else if (c == '|') {
      for (Group& g : open) g.risky = true;
    }
  }
  return unbounded <= 2;
}

// The pattern as matched: trailing `.*`s dropped (re.match anchors only the start, so they
// match anything and only cost backtracking).
std::string MatchablePattern(std::string pattern) {
  while (pattern.size() >= 2 && pattern.compare(pattern.size() - 2, 2, ".*") == 0 &&
         (pattern.size() == 2 || pattern[pattern.size() - 3] != '\\')) {
    pattern.resize(pattern.size() - 2);
  }
  return pattern;
}

// Module names are short (the longest real ones are under 100 characters); libstdc++'s
// matcher recurses once a character, and two repeats cost the square of the length, so longer
// names are never fed to it.
constexpr size_t kMaxRegexSubject = 256;

// Python's re.match: anchored at the start, not the end. Patterns longer than 1,000
// characters, that do not compile or that could backtrack exponentially (BacktrackSafe) never
// match (and the scheme warns once).
// An exact name written as a regex (metacharacters escaped, `$` last: AutoRound's extra_config
// names) is compared as text, without compiling a regex: a config may list thousands.
enum class Literal { kNot, kMatch, kNoMatch };
Literal LiteralMatch(std::string_view pat, std::string_view s) {
  static constexpr std::string_view kMeta = "\\^$.|?*+()[]{}";
  if (pat.empty() || pat.back() != '$') return Literal::kNot;
  pat.remove_suffix(1);
  size_t i = 0;
  bool equal = true;
  for (size_t p = 0; p < pat.size(); ++p, ++i) {
    char c = pat[p];
    if (c == '\\') {
      if (p + 1 >= pat.size() || kMeta.find(pat[p + 1]) == std::string_view::npos) {
        return Literal::kNot;
      }
      c = pat[++p];
    } else if (kMeta.find(c) != std::string_view::npos) {
      return Literal::kNot;
    }
    equal = equal && i < s.size() && s[i] == c;
  }
  return equal && i == s.size() ? Literal::kMatch : Literal::kNoMatch;
}

bool RegexMatchStart(const std::string& pattern, std::string_view s) {
  if (const Literal l = LiteralMatch(pattern, s); l != Literal::kNot) return l == Literal::kMatch;
  if (s.size() > kMaxRegexSubject) return false;
  // Compiled patterns are cached per thread: a scheme asks about every module.
  thread_local std::unordered_map<std::string, std::optional<std::regex>> cache;
  auto it = cache.find(pattern);
  if (it == cache.end()) {
    std::optional<std::regex> re;
    const std::string matchable = MatchablePattern(pattern);
    if (pattern.size() <= 1000 && BacktrackSafe(matchable)) {
      try {
        re.emplace(matchable, std::regex::ECMAScript | std::regex::optimize);
      } catch (const std::regex_error&) {
        re.reset();
      }
    }
    if (cache.size() > 256) cache.clear();
    it = cache.emplace(pattern, std::move(re)).first;
  }
  if (!it->second) return false;
  try {
    return std::regex_search(s.begin(), s.end(), *it->second,
                             std::regex_constants::match_continuous);
  } catch (const std::regex_error&) {
    return false;  // e.g. error_complexity on a pathological pattern
  }
}

bool ValidRegex(const std::string& pattern) {
  if (pattern.size() > 1000 || !BacktrackSafe(MatchablePattern(pattern))) return false;
  try {
    std::regex re(pattern);
    return true;
  } catch (const std::regex_error&) {
    return false;
  }
}

// `text` with the regex metacharacters escaped.
std::string RegexEscape(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

// Intel AutoRound's export (auto_round/export/export_to_autoround/export.py; the
// "auto_round:auto_gptq" packing is AutoGPTQ's QuantLinear: qweight, qzeros, scales, g_idx;
// "auto_round:auto_awq" is AutoAWQ's GEMM layout). vLLM (quantization/auto_round.py
// AutoRoundConfig, ~0.11-0.20; quantization/inc/inc.py INCConfig from ~0.21, which claims
// quant_method auto-round and auto_round) serves the GPTQ packing through gptq_marlin (4/8-bit
// symmetric) or gptq, the AWQ packing through awq_marlin or awq, and reads, per layer:
// `extra_config` by exact module name, else by regex (keys holding a regex character,
// re.search); bits 16 keeps the module unquantized; only modules under `block_name_to_quantize`
// are quantized; the lm_head only when extra_config names it.
void AutoRoundScheme(const formats::RawQuantConfig& raw, QuantScheme* q,
                     std::vector<std::string>* warnings) {
  const bool awq = raw.packing_format.find("awq") != std::string::npos ||
                   (raw.packing_format.empty() && raw.backend.find("awq") != std::string::npos);
  const std::string data_type = raw.data_type.empty() ? "int" : raw.data_type;
  q->bits = static_cast<int>(raw.bits.value_or(4));
  q->group_size = raw.group_size ? (*raw.group_size < 0 ? 0 : *raw.group_size) : 128;
  q->symmetric = raw.sym.value_or(true);
  if (data_type != "int" || q->bits >= 16) {
    // AutoRound's FP8 / MXFP / NVFP exports, or a 16-bit "scheme": nothing modelled.
    q->method = QuantMethod::kOther;
    q->layout = QuantLayout::kNone;
    warnings->push_back(fmt::format(
        "auto-round data_type \"{}\" with {} bits is not modelled (only the integer GPTQ and "
        "AWQ packings are): weights are counted from headers, nothing is synthesized for it",
        data_type, q->bits));
    return;
  }
  if (awq) {
    q->method = QuantMethod::kAwq;
    q->layout = QuantLayout::kAwqGemm;
    q->format = "gemm";
  } else {
    q->method = QuantMethod::kGptq;
    q->layout = QuantLayout::kGptq;
    q->format = "gptq";
    q->act_order = false;  // AutoRound never reorders columns (vLLM passes desc_act=False)
  }
  if (!raw.packing_format.empty() && raw.packing_format != "auto_round:auto_gptq" &&
      raw.packing_format != "auto_round:auto_awq") {
    warnings->push_back(fmt::format(
        "auto-round packing_format \"{}\": modelled with the {} layout (vLLM accepts only "
        "auto_round:auto_gptq and auto_round:auto_awq)",
        raw.packing_format, awq ? "AWQ GEMM" : "GPTQ"));
  }
  // extra_config: exact names first (vLLM's step 1), then regex keys (re.search: unanchored).
  static constexpr std::string_view kRegexChars = "*+?^$()[]{}|\\";
  std::vector<QuantScheme::Dynamic> exact, patterns;
  // Every module is checked against every entry: a config of more entries than any export
  // writes is read up to the limit, with a warning.
  constexpr size_t kMaxExtraConfig = 20000;
  if (raw.extra_config.size() > kMaxExtraConfig) {
    warnings->push_back(fmt::format("auto-round extra_config has {} entries: only the first {} "
                                    "are applied",
                                    raw.extra_config.size(), kMaxExtraConfig));
  }
  for (size_t n = 0; n < raw.extra_config.size() && n < kMaxExtraConfig; ++n) {
    const formats::RawExtraConfig& e = raw.extra_config[n];
    const bool regex = e.name.find_first_of(kRegexChars) != std::string::npos;
    const int bits = static_cast<int>(e.bits.value_or(q->bits));
    const int64_t group =
        e.group_size ? (*e.group_size < 0 ? 0 : *e.group_size) : q->group_size;
    if (e.name == "lm_head" || (e.name.size() > 8 &&
                                e.name.compare(e.name.size() - 8, 8, ".lm_head") == 0)) {
      q->lm_head_quantized = bits < 16;
      continue;
    }
    std::string pattern = regex ? ".*(?:" + e.name + ")" : RegexEscape(e.name) + "$";
    if (regex && !ValidRegex(pattern)) {
      warnings->push_back(fmt::format(
          "auto-round extra_config pattern \"{}\" is not a valid regex (or nests quantifiers "
          "or repeats more than twice, which would backtrack without end): ignored",
          e.name));
      continue;
    }
    (regex ? patterns : exact).push_back({std::move(pattern), bits >= 16, bits, group});
  }
  q->dynamic = std::move(exact);
  q->dynamic.insert(q->dynamic.end(), patterns.begin(), patterns.end());
  // Outside block_name_to_quantize nothing is quantized. Without the key, AutoRound quantized
  // the transformers model's blocks, which hold no MTP modules.
  if (!raw.block_name_to_quantize.empty()) {
    std::string alternatives;
    for (const std::string& b : raw.block_name_to_quantize) {
      alternatives += (alternatives.empty() ? "" : "|") + RegexEscape(b);
    }
    q->ignore.push_back("re:(?!" + alternatives + ")");
  } else {
    q->ignore.push_back("re:mtp\\.");
  }
}

}  // namespace

const char* QuantMethodName(QuantMethod m) {
  switch (m) {
    case QuantMethod::kNone:
      return "none";
    case QuantMethod::kAwq:
      return "awq";
    case QuantMethod::kGptq:
      return "gptq";
    case QuantMethod::kCompressedTensors:
      return "compressed-tensors";
    case QuantMethod::kFp8:
      return "fp8";
    case QuantMethod::kMxfp4:
      return "mxfp4";
    case QuantMethod::kBitsAndBytes:
      return "bitsandbytes";
    case QuantMethod::kModelOpt:
      return "modelopt";
    case QuantMethod::kOther:
      return "other";
  }
  return "?";
}

QuantScheme QuantSchemeFromRaw(const formats::RawQuantConfig& raw,
                               std::vector<std::string>* warnings) {
  QuantScheme q;
  if (!raw.present) return q;
  q.method_text = raw.quant_method;
  const std::string& m = raw.quant_method;
  auto group = [&](int64_t dflt) {
    const int64_t g = raw.group_size ? *raw.group_size : dflt;
    return g < 0 ? 0 : g;
  };
  if (m == "awq") {
    q.method = QuantMethod::kAwq;
    q.bits = static_cast<int>(raw.bits.value_or(4));
    q.group_size = group(128);
    q.symmetric = !raw.zero_point.value_or(true);
    q.format = raw.version.empty() ? "gemm" : raw.version;
    if (q.format == "gemm")
      q.layout = QuantLayout::kAwqGemm;
    else if (q.format == "gemv")
      q.layout = QuantLayout::kAwqGemv;
    else if (q.format == "gemv_fast")
      q.layout = QuantLayout::kAwqGemvFast;
    else if (q.format == "marlin")
      q.layout = QuantLayout::kAwqMarlin;
    else {
      q.layout = QuantLayout::kAwqGemm;
      warnings->push_back(
          fmt::format("awq version \"{}\" is unknown: assuming the gemm layout", q.format));
    }
    q.not_converted_substrings = raw.modules_to_not_convert;
    q.lm_head_quantized = raw.lm_head.value_or(false);
  } else if (m == "gptq") {
    q.method = QuantMethod::kGptq;
    q.layout = QuantLayout::kGptq;
    q.bits = static_cast<int>(raw.bits.value_or(4));
    q.group_size = group(128);
    q.symmetric = raw.sym.value_or(true);
    q.act_order = raw.desc_act.value_or(false);
    q.format = raw.checkpoint_format.empty() ? "gptq" : raw.checkpoint_format;
    if (q.format != "gptq" && q.format != "gptq_v2") {
      warnings->push_back(fmt::format(
          "gptq checkpoint_format \"{}\": only gptq/gptq_v2 layouts are modelled exactly",
          q.format));
    }
    q.lm_head_quantized = raw.lm_head.value_or(false);
    for (const auto& d : raw.dynamic) {
      if (!ValidRegex(d.pattern)) {
        warnings->push_back(fmt::format(
            "gptq dynamic pattern \"{}\" is not a valid regex (or nests quantifiers or repeats "
            "more than twice, which would backtrack without end): ignored",
            d.pattern));
        continue;
      }
      q.dynamic.push_back({d.pattern, d.skip, static_cast<int>(d.bits.value_or(q.bits)),
                           d.group_size ? (*d.group_size < 0 ? 0 : *d.group_size) : q.group_size});
    }
    q.not_converted_substrings = raw.modules_to_not_convert;
  } else if (model::IsAutoRoundMethod(m)) {
    AutoRoundScheme(raw, &q, warnings);
  } else if (m == "compressed-tensors") {
    q.method = QuantMethod::kCompressedTensors;
    q.format = raw.format;
    q.ignore = raw.ignore;
    for (const std::string& s : q.ignore) {
      if (s.rfind("re:", 0) == 0 && !ValidRegex(s.substr(3))) {
        warnings->push_back(fmt::format(
            "compressed-tensors ignore pattern \"{}\" is not a valid regex (or nests "
            "quantifiers or repeats more than twice, which would backtrack without end)",
            s));
      }
    }
    const formats::RawQuantGroup* g = nullptr;
    for (const auto& cg : raw.config_groups) {
      if (cg.num_bits) {
        g = &cg;
        break;
      }
    }
    if (raw.config_groups.size() > 1) {
      warnings->push_back(
          fmt::format("compressed-tensors: {} config_groups; modelled with the "
                      "first group's scheme",
                      raw.config_groups.size()));
    }
    if (g == nullptr) {
      warnings->push_back("compressed-tensors config without a weights scheme: treated as dense");
      q.layout = QuantLayout::kNone;
      return q;
    }
    if (q.format.empty() || q.format == "mixed-precision") q.format = g->format;
    q.bits = static_cast<int>(*g->num_bits);
    q.symmetric = g->symmetric.value_or(true);
    q.act_order = g->actorder == "group";
    q.group_size =
        (g->strategy == "group" || g->strategy == "tensor_group") ? g->group_size.value_or(128) : 0;
    if (q.group_size < 0) q.group_size = 0;
    q.block_size = g->block_structure;
    q.strategy = g->strategy;
    q.static_input_scale = g->has_input_activations && !g->input_dynamic.value_or(false);
    q.quantized_activations = g->has_input_activations;
    const std::string& f = q.format;
    if (f == "pack-quantized")
      q.layout = QuantLayout::kCtPacked;
    else if (f == "float-quantized")
      q.layout = QuantLayout::kCtFp8;
    else if (f == "int-quantized" || f == "naive-quantized")
      q.layout = g->type == "float" ? QuantLayout::kCtFp8 : QuantLayout::kCtInt8;
    else if (f == "nvfp4-pack-quantized") {
      q.layout = QuantLayout::kCtNvfp4;
      if (q.group_size == 0) q.group_size = 16;
    } else if (f == "mxfp4-pack-quantized") {
      q.layout = QuantLayout::kCtMxfp4;
      if (q.group_size == 0) q.group_size = 32;
    } else {
      q.layout = q.bits < 8 ? QuantLayout::kCtPacked : QuantLayout::kCtFp8;
      warnings->push_back(
          fmt::format("compressed-tensors format \"{}\" is not modelled exactly", f));
    }
  } else if (m == "fp8") {
    q.method = QuantMethod::kFp8;
    q.bits = 8;
    q.block_size = raw.weight_block_size;
    q.layout = q.block_size.size() == 2 ? QuantLayout::kFp8Block : QuantLayout::kFp8Tensor;
    q.static_input_scale = raw.activation_scheme == "static";
    q.not_converted_substrings = raw.modules_to_not_convert;
    for (const auto& s : raw.ignore) q.not_converted_substrings.push_back(s);
  } else if (m == "mxfp4") {
    q.method = QuantMethod::kMxfp4;
    q.layout = QuantLayout::kMxfp4Blocks;
    q.bits = 4;
    q.group_size = 32;
    q.not_converted_globs = raw.modules_to_not_convert;
  } else if (m == "bitsandbytes") {
    q.method = QuantMethod::kBitsAndBytes;
    if (raw.load_in_4bit.value_or(false)) {
      q.layout = QuantLayout::kBnb4;
      q.bits = 4;
      q.group_size = 64;
    } else {
      q.layout = QuantLayout::kBnb8;
      q.bits = 8;
    }
    q.format = raw.bnb_4bit_quant_type;
    q.bnb_double_quant = raw.bnb_4bit_use_double_quant.value_or(false);
    q.not_converted_substrings = raw.skip_modules;
  } else if (m == "modelopt") {
    q.method = QuantMethod::kModelOpt;
    q.format = raw.quant_algo;
    if (raw.quant_algo == "FP8") {
      q.layout = QuantLayout::kFp8Tensor;
      q.bits = 8;
      q.static_input_scale = true;
    } else if (raw.quant_algo == "NVFP4" || raw.quant_algo == "W4A16_NVFP4") {
      // TensorRT Model Optimizer's NVFP4 export (modelopt/torch/export/quant_utils.py): two
      // E2M1 values a byte, an E4M3 scale per 16 inputs, a per-tensor FP32 scale
      // (weight_scale_2) and, for W4A4, a static input scale.
      q.layout = QuantLayout::kModelOptNvfp4;
      q.bits = 4;
      q.group_size = raw.group_size && *raw.group_size > 0 ? *raw.group_size : 16;
      q.quantized_activations = raw.quant_algo == "NVFP4";
    } else if (raw.quant_algo == "MIXED_PRECISION" && !raw.layer_quant_algos.empty()) {
      // Per-module algorithms (NVIDIA's NVFP4 exports: NVFP4 experts, FP8 attention): counted
      // from the headers (a U8 weight beside an E4M3 weight_scale is NVFP4's packing); the
      // smallest width is the bits named, the algorithms the format.
      q.layout = QuantLayout::kNone;
      q.bits = 8;
      std::vector<std::string> sorted = raw.layer_quant_algos;
      std::sort(sorted.begin(), sorted.end());
      std::string algos;
      for (const std::string& a : sorted) {
        if (a.find("FP4") != std::string::npos || a.find("INT4") != std::string::npos ||
            a.find("W4A") != std::string::npos) {
          q.bits = 4;
        }
        algos += (algos.empty() ? "" : ", ") + a;
      }
      q.format = fmt::format("MIXED_PRECISION: {}", algos);
      warnings->push_back(fmt::format(
          "modelopt MIXED_PRECISION ({}): layout not synthesized from config.json; the "
          "checkpoint's headers are counted exactly", algos));
    } else {
      q.layout = QuantLayout::kNone;
      q.bits = raw.quant_algo.find("FP4") != std::string::npos ? 4 : 8;
      warnings->push_back(
          fmt::format("modelopt quant_algo \"{}\": layout not synthesized; parsed "
                      "checkpoints are still counted exactly",
                      raw.quant_algo));
    }
    // exclude_modules are fnmatch patterns ("model.layers.*.mlp.gate"); plain names match as
    // substrings, as for the other methods.
    for (const auto& s : raw.ignore) {
      (s.find('*') != std::string::npos ? q.not_converted_globs : q.not_converted_substrings)
          .push_back(s);
    }
    for (const auto& s : raw.modules_to_not_convert) q.not_converted_substrings.push_back(s);
  } else {
    q.method = QuantMethod::kOther;
    q.layout = QuantLayout::kNone;
    warnings->push_back(
        fmt::format("quant_method \"{}\" is not modelled: weights are counted from "
                    "headers, nothing is synthesized for it",
                    m));
  }
  return q;
}

int QuantSchemeBits(const QuantScheme& q, std::string_view module) {
  for (const auto& d : q.dynamic) {
    if (!d.skip && RegexMatchStart(d.regex, module)) return d.bits;
  }
  return q.bits;
}

int64_t model::QuantSchemeGroupSize(const QuantScheme& q, std::string_view module) {
  for (const auto& d : q.dynamic) {
    if (!d.skip && RegexMatchStart(d.regex, module)) return d.group_size;
  }
  return q.group_size;
}

bool QuantSchemeCovers(const QuantScheme& q, std::string_view module) {
  if (!q.quantized() || q.layout == QuantLayout::kNone) return false;
  for (const std::string& s : q.not_converted_substrings) {
    if (!s.empty() && module.find(s) != std::string_view::npos) return false;
  }
  for (const std::string& g : q.not_converted_globs) {
    if (GlobPrefixMatch(g, module)) return false;
  }
  for (const std::string& s : q.ignore) {
    if (s.rfind("re:", 0) == 0) {
      if (RegexMatchStart(s.substr(3), module)) return false;
    } else if (s == module) {
      return false;
    } else if (module.size() > s.size() && module.substr(module.size() - s.size()) == s &&
               module[module.size() - s.size() - 1] == '.') {
      return false;  // "lm_head" also names "model.lm_head"
    }
  }
  for (const auto& d : q.dynamic) {
    if (d.skip && RegexMatchStart(d.regex, module)) return false;
  }
  return true;
}

}  // namespace vramfit
