// Edit distance, nearest-name lists, terminal-safe text, shell words and UTF-8-aware cuts
// (see text.h).
#include "core/text.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cstdint>

#include "vramfit/suggest.h"

namespace vramfit::core {
namespace {

// Length of the valid UTF-8 sequence at s[i] (1..4), or 0 when none starts there: a stray
// continuation byte, a truncated sequence, an overlong form, a surrogate or past U+10FFFF.
size_t Utf8SequenceAt(std::string_view s, size_t i, uint32_t* cp) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const unsigned char c = p[i];
  size_t len = 0;
  uint32_t v = 0;
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  if ((c & 0xE0) == 0xC0) {
    len = 2;
    v = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3;
    v = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4;
    v = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((p[i + k] & 0xC0) != 0x80) return 0;
    v = (v << 6) | (p[i + k] & 0x3F);
  }
  if ((len == 2 && v < 0x80) || (len == 3 && v < 0x800) || (len == 4 && v < 0x10000) ||
      (v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF) {
    return 0;
  }
  *cp = v;
  return len;
}

constexpr char kHex[] = "0123456789abcdef";

void AppendHexByte(std::string* out, unsigned char b) {
  *out += "\\x";
  *out += kHex[b >> 4];
  *out += kHex[b & 0xF];
}

}  // namespace

size_t EditDistance(std::string_view a, std::string_view b) {
  // Names to suggest are short; a hostile 64 KiB word would cost its length times each name's.
  a = a.substr(0, kEditDistanceMaxLength);
  b = b.substr(0, kEditDistanceMaxLength);
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] =
          std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string NearestNames(std::vector<std::pair<size_t, std::string>> scored, size_t n) {
  std::sort(scored.begin(), scored.end());
  std::string out;
  for (size_t i = 0; i < scored.size() && i < n; ++i) {
    if (i) out += ", ";
    out += scored[i].second;
  }
  return out;
}

Status BadFlagValue(const std::string& flag, const std::string& text, const char* expected) {
  return Status::InvalidArgument(flag + " \"" + Printable(text) + "\": expected " + expected);
}

Result<int64_t> ReadFlagInt(const std::string& flag, const std::string& text, int64_t lo,
                            const char* expected) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || v < lo || v > (int64_t{1} << 31) - 1) {
    return BadFlagValue(flag, text, expected);
  }
  return v;
}

Status CheckHubRevision(std::string_view engine, std::string_view revision) {
  for (const char c : revision) {
    if (static_cast<unsigned char>(c) < 0x21 || c == 0x7f) {
      return Status::InvalidArgument(fmt::format(
          "the {} command line: --revision {}: not a Hub revision (a branch, tag or commit)",
          engine, Printable(revision)));
    }
  }
  return Status::Ok();
}

bool EnvWithoutMemoryEffect(std::string_view name) {
  static constexpr std::string_view kNames[] = {
      "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HOME", "HF_HUB_OFFLINE", "HF_ENDPOINT",
      "HF_HUB_ENABLE_HF_TRANSFER", "HF_HUB_CACHE", "TRANSFORMERS_CACHE", "TRANSFORMERS_OFFLINE",
      "VLLM_LOGGING_LEVEL", "VLLM_CONFIGURE_LOGGING", "VLLM_NO_USAGE_STATS", "DO_NOT_TRACK",
      "VLLM_DO_NOT_TRACK", "NCCL_DEBUG", "OLLAMA_DEBUG", "VLLM_API_KEY", "VLLM_HOST_IP",
      "VLLM_PORT", "OLLAMA_HOST", "OLLAMA_ORIGINS", "OLLAMA_MODELS", "VLLM_RPC_TIMEOUT",
      "VLLM_ENGINE_ITERATION_TIMEOUT_S", "OMP_NUM_THREADS", "TOKENIZERS_PARALLELISM",
      "PYTHONUNBUFFERED", "PYTHONPATH", "PATH", "TZ", "HOME", "VLLM_USE_MODELSCOPE",
      "SGLANG_LOG_LEVEL"};
  for (std::string_view n : kNames) {
    if (n == name) return true;
  }
  return false;
}

bool IsEnvAssignment(std::string_view a) {
  const size_t eq = a.find('=');
  if (eq == std::string_view::npos || eq == 0) return false;
  return std::all_of(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(eq), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

std::string ShellWord(const std::string& w) {
  const bool plain = !w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("_./:=,@+-").find(c) != std::string_view::npos;
  });
  if (plain) return w;
  std::string out = "'";
  for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string AsciiLower(std::string_view s) {
  std::string lower(s);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

std::string Printable(std::string_view s) {
  // Fast path: plain printable ASCII (almost every name and message).
  const bool plain = std::all_of(s.begin(), s.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return (c >= 0x20 && c < 0x7F) || c == '\t';
  });
  if (plain) return std::string(s);
  std::string out;
  out.reserve(s.size() + 16);
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    const size_t len = Utf8SequenceAt(s, i, &cp);
    const auto b = static_cast<unsigned char>(s[i]);
    if (len == 0) {
      AppendHexByte(&out, b);  // not UTF-8 (a Latin-1 byte, a cut sequence)
      ++i;
    } else if (len == 1 && b == '\n') {
      out += "\\n";
      ++i;
    } else if (len == 1 && b == '\r') {
      out += "\\r";
      ++i;
    } else if (len == 1 && ((b < 0x20 && b != '\t') || b == 0x7F)) {
      AppendHexByte(&out, b);
      ++i;
    } else if (cp >= 0x80 && cp <= 0x9F) {
      out += "\\u00";
      out += kHex[cp >> 4];
      out += kHex[cp & 0xF];
      i += len;
    } else {
      out.append(s.substr(i, len));
      i += len;
    }
  }
  return out;
}

size_t FirstInvalidUtf8(std::string_view s) {
  uint32_t cp = 0;
  for (size_t i = 0; i < s.size();) {
    const size_t len = Utf8SequenceAt(s, i, &cp);
    if (len == 0) return i;
    i += len;
  }
  return s.size();
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xC0 | (cp >> 6));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *out += static_cast<char>(0xE0 | (cp >> 12));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (cp >> 18));
    *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string_view Utf8Prefix(std::string_view s, size_t n) {
  if (n >= s.size()) return s;
  // s[n] is the first byte cut off; when it continues a sequence, cut before that sequence's
  // lead byte (at most 3 bytes back: s[n] is then its 2nd, 3rd or 4th byte).
  size_t end = n;
  const auto cont = [&](size_t i) { return (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80; };
  if (cont(end)) {
    size_t k = end;
    while (k > 0 && end - k < 2 && cont(k - 1)) --k;
    if (k > 0 && static_cast<unsigned char>(s[k - 1]) >= 0xC0) end = k - 1;
  }
  return s.substr(0, end);
}

}  // namespace vramfit::core

namespace vramfit {

std::string NearestName(std::string_view word, const std::vector<std::string>& names) {
  if (word.empty() || word.size() > core::kEditDistanceMaxLength) return "";
  const size_t limit = std::max<size_t>(2, word.size() / 3);
  std::string best;
  size_t best_distance = limit + 1;
  for (const std::string& name : names) {
    if (name.empty() || name == word) continue;
    size_t d = core::EditDistance(word, name);
    const std::string_view shorter = name.size() < word.size() ? std::string_view(name) : word;
    const std::string_view longer = name.size() < word.size() ? word : std::string_view(name);
    // "--max-model" for "--max-model-len": a prefix is as good as the slip limit allows.
    if (shorter.size() >= 6 && longer.starts_with(shorter)) d = std::min(d, limit);
    if (d < best_distance) {
      best_distance = d;
      best = name;
    }
  }
  return best;
}

}  // namespace vramfit
