// Deploy programs in Python (include/vramfit/script.h, ReadPythonScript): the engine loads a
// Python file makes, found without running it. A small tokenizer (strings, comments, brackets,
// `\` continuations) and a reader of the statements deploy code uses: `NAME = literal`,
// `def f(params):`, and calls. vLLM's `LLM(...)`, a model class's `from_pretrained(...)` /
// `from_quantized(...)`, and `subprocess`/`os.system` command lines become engine commands.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <unordered_map>

#include "core/text.h"
#include "vramfit/script.h"

namespace vramfit {
namespace {

constexpr size_t kMaxPythonBytes = 16u << 20;
constexpr int kMaxBrackets = 200;  // nesting of ( [ {
constexpr int kMaxResolve = 8;     // a name through assignments and call sites
constexpr size_t kMaxLaunches = 1000;          // engine loads in one program
constexpr uint64_t kMaxLookupSteps = 50'000'000;  // names compared, all lookups together

enum class Tok { kName, kNumber, kString, kOp, kNewline };

struct Token {
  Tok kind;
  std::string text;   // a string's value (decoded), a name, a number, an operator
  int line = 0;
  int indent = 0;     // the column of its logical line's first token
  bool fstring = false;  // an f-string with replacement fields: a value not known
};

Status Fail(const std::string& file, int line, const std::string& what) {
  return Status::InvalidArgument(fmt::format("{}:{}: {}", file, line, what));
}

bool NameStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool NameChar(char c) {
  return NameStart(c) || std::isdigit(static_cast<unsigned char>(c));
}

// Python's tokens as far as this reader needs them (the language reference, "Lexical
// analysis"): NEWLINE only outside brackets, strings with their escapes decoded.
Result<std::vector<Token>> Tokenize(std::string_view s, const std::string& file) {
  std::vector<Token> out;
  std::vector<int> open;  // lines of the open brackets
  int line = 1, indent = 0;
  bool line_start = true;
  size_t i = 0;
  auto push = [&](Tok k, std::string text, int at) {
    out.push_back({k, std::move(text), at, indent, false});
  };
  while (i < s.size()) {
    if (line_start && open.empty()) {
      // The indentation of a line that holds a token; blank and comment lines have none.
      int col = 0;
      while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\f')) {
        col = s[i] == '\t' ? (col / 8 + 1) * 8 : col + 1;
        ++i;
      }
      if (i >= s.size()) break;
      if (s[i] != '\n' && s[i] != '\r' && s[i] != '#') {
        indent = col;
        line_start = false;
      }
    }
    const char c = s[i];
    if (c == '\0') return Fail(file, line, "a NUL byte (not a text file)");
    if (c == '\n') {
      ++line;
      ++i;
      if (open.empty()) {
        if (!out.empty() && out.back().kind != Tok::kNewline) push(Tok::kNewline, "", line - 1);
        line_start = true;
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
      ++i;
      continue;
    }
    if (c == '#') {
      while (i < s.size() && s[i] != '\n') ++i;
      continue;
    }
    if (c == '\\' && i + 1 < s.size() && (s[i + 1] == '\n' || s[i + 1] == '\r')) {
      i += s[i + 1] == '\r' && i + 2 < s.size() && s[i + 2] == '\n' ? 3 : 2;
      ++line;
      continue;
    }
    std::string prefix;
    if (NameStart(c)) {
      size_t j = i;
      while (j < s.size() && NameChar(s[j])) ++j;
      std::string name(s.substr(i, j - i));
      std::string lower = name;
      for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      const bool is_prefix = lower.size() <= 2 &&
                             lower.find_first_not_of("rbuf") == std::string::npos;
      if (!(is_prefix && j < s.size() && (s[j] == '"' || s[j] == '\''))) {
        push(Tok::kName, std::move(name), line);
        i = j;
        continue;
      }
      prefix = lower;
      i = j;
    }
    if (s[i] == '"' || s[i] == '\'') {
      const char q = s[i];
      const bool triple = i + 2 < s.size() && s[i + 1] == q && s[i + 2] == q;
      const bool raw = prefix.find('r') != std::string::npos;
      const int at = line;
      i += triple ? 3 : 1;
      std::string value;
      bool closed = false;
      while (i < s.size()) {
        const char d = s[i];
        if (d == '\0') return Fail(file, line, "a NUL byte (not a text file)");
        if (d == q && (!triple || (i + 2 < s.size() && s[i + 1] == q && s[i + 2] == q))) {
          i += triple ? 3 : 1;
          closed = true;
          break;
        }
        if (d == '\n') {
          if (!triple) break;
          ++line;
        }
        if (d == '\\' && i + 1 < s.size()) {
          const char e = s[i + 1];
          if (e == '\n') ++line;
          if (raw) {
            value += d;
            value += e;
          } else if (e == 'n') {
            value += '\n';
          } else if (e == 't') {
            value += '\t';
          } else if (e == '\\' || e == '\'' || e == '"') {
            value += e;
          } else if (e != '\n') {
            value += d;
            value += e;
          }
          i += 2;
          continue;
        }
        value += d;
        ++i;
      }
      if (!closed) {
        return Fail(file, at, fmt::format("unterminated string {} (opened here)",
                                          std::string(triple ? 3 : 1, q)));
      }
      push(Tok::kString, std::move(value), at);
      if (prefix.find('f') != std::string::npos &&
          out.back().text.find('{') != std::string::npos) {
        out.back().fstring = true;
      }
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      size_t j = i;
      auto exponent_sign = [&](size_t k) {
        return (s[k] == '+' || s[k] == '-') && (s[k - 1] == 'e' || s[k - 1] == 'E');
      };
      while (j < s.size() && (NameChar(s[j]) || s[j] == '.' || exponent_sign(j))) ++j;
      push(Tok::kNumber, std::string(s.substr(i, j - i)), line);
      i = j;
      continue;
    }
    if (c == '(' || c == '[' || c == '{') {
      if (open.size() >= static_cast<size_t>(kMaxBrackets)) {
        return Fail(file, line, fmt::format("brackets nested more than {} deep", kMaxBrackets));
      }
      open.push_back(line);
    } else if (c == ')' || c == ']' || c == '}') {
      if (open.empty()) return Fail(file, line, fmt::format("unmatched '{}'", c));
      open.pop_back();
    }
    static constexpr std::string_view kTwo[] = {"==", "!=", "<=", ">=", "**", "//", "->", ":=",
                                                "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
                                                "<<", ">>", "@="};
    std::string op(1, c);
    for (std::string_view two : kTwo) {
      if (s.substr(i, 2) == two) op = std::string(two);
    }
    push(Tok::kOp, op, line);
    i += op.size();
  }
  if (!open.empty()) return Fail(file, open.back(), "a bracket opened here is never closed");
  if (!out.empty() && out.back().kind != Tok::kNewline) out.push_back({Tok::kNewline, "", line, 0});
  return out;
}

bool IsOp(const Token& t, std::string_view op) { return t.kind == Tok::kOp && t.text == op; }

// The index one past the bracket closing the one at `at`.
size_t Close(const std::vector<Token>& t, size_t at, size_t end) {
  int depth = 0;
  for (size_t j = at; j < end; ++j) {
    if (t[j].kind != Tok::kOp) continue;
    const std::string& o = t[j].text;
    if (o == "(" || o == "[" || o == "{") ++depth;
    if (o == ")" || o == "]" || o == "}") {
      if (--depth == 0) return j + 1;
    }
  }
  return end;
}

// Top-level comma-separated pieces of t[begin, end).
std::vector<std::pair<size_t, size_t>> Split(const std::vector<Token>& t, size_t begin,
                                             size_t end) {
  std::vector<std::pair<size_t, size_t>> parts;
  size_t start = begin;
  for (size_t j = begin; j < end;) {
    if (IsOp(t[j], "(") || IsOp(t[j], "[") || IsOp(t[j], "{")) {
      j = Close(t, j, end);
      continue;
    }
    if (IsOp(t[j], ",")) {
      if (j > start) parts.emplace_back(start, j);
      start = j + 1;
    }
    ++j;
  }
  if (end > start) parts.emplace_back(start, end);
  return parts;
}

struct Arg {
  std::string keyword;  // "" for a positional one
  size_t begin = 0, end = 0;
};

struct Call {
  std::string callee;   // dotted: "subprocess.run", "AutoModelForCausalLM.from_pretrained"
  std::vector<Arg> args;
  int line = 0;
  int scope = 0;        // index into scopes
  size_t at = 0;        // the token of its last name (`generate` of `model.generate(`)
};

struct Scope {
  std::string function;             // "" for the module and classes
  std::vector<std::string> params;
  int indent = -1;
  int parent = 0;
};

struct Assign {
  std::string name;
  int scope = 0;
  int line = 0;
  size_t begin = 0, end = 0;
};

// The quantization config classes whose keywords a from_pretrained(quantization_config=...)
// turns into flags (transformers/utils/quantization_config.py, v4.57).
constexpr std::string_view kQuantConfigs[] = {"BitsAndBytesConfig", "AwqConfig",
                                              "FbgemmFp8Config"};

// from_pretrained keywords that change no GPU memory: where the files come from and how they
// are fetched, remote code, and the CPU-side loading path (transformers/modeling_utils.py,
// v4.57).
constexpr std::string_view kNoGpuMemory[] = {
    "trust_remote_code", "low_cpu_mem_usage", "cache_dir", "token", "use_auth_token",
    "local_files_only", "force_download", "resume_download", "proxies", "use_safetensors"};

// The keywords a pipeline() passes on to each generate() call of its pipeline
// (pipelines/base.py Pipeline.__init__ keeps them as forward parameters; batch_size the
// inputs run together), read with the calls' own.
constexpr std::string_view kGenerateKeywords[] = {
    "max_new_tokens", "max_length", "num_beams", "num_return_sequences", "do_sample",
    "cache_implementation", "batch_size"};

// A value of an expression as far as literals and names carry it.
struct Value {
  enum Kind { kUnknown, kString, kNumber, kBool, kNone, kList, kDotted, kDict } kind = kUnknown;
  std::string text;           // a string, number, dotted name ("torch.float16"), or why unknown
  bool flag = false;          // a bool's value
  std::vector<Value> items;   // a list's or tuple's, a dict's values
  std::vector<std::string> keys;  // a dict's keys (strings or numbers), one per item
};

// A generate() call's prompt as the program shows it.
struct Prompt {
  bool known = false;
  int64_t tokens = 0;   // the longest prompt of the call, estimated
  int64_t batch = 1;    // prompts in the call
  int64_t cap = 0;      // the tokenizer's truncation=True with max_length=N: at most N tokens
  bool chat = false;    // a chat template's tokens are in `tokens`
  std::string what;     // how it was counted ("a 44-byte literal"), or why it is not known
};

// The arguments of the call whose "(" is at `open` and whose ")" is at end - 1.
std::vector<Arg> ArgsOf(const std::vector<Token>& t, size_t open, size_t end) {
  std::vector<Arg> args;
  for (auto [b, e] : Split(t, open + 1, end - 1)) {
    Arg a;
    if (e > b + 1 && t[b].kind == Tok::kName && IsOp(t[b + 1], "=")) {
      a.keyword = t[b].text;
      b += 2;
    }
    a.begin = b;
    a.end = e;
    args.push_back(a);
  }
  return args;
}

class Reader {
 public:
  Reader(std::vector<Token> tokens, std::string file, const ScriptOptions& options)
      : t_(std::move(tokens)), file_(std::move(file)), options_(options) {}

  Result<ScriptRead> Run();

 private:
  void Statements();
  void Calls(size_t begin, size_t end, int scope);
  Value Eval(size_t begin, size_t end, int scope, int line, int depth) const;
  Value Lookup(const std::string& name, int scope, int line, int depth) const;
  const Assign* AssignIn(const std::string& name, int scope, int line) const;
  Value ArgValue(const Call& c, size_t position,
                 std::initializer_list<std::string_view> keywords, int depth) const;
  Status Launch(const Call& c, ScriptRead* out);
  Prompt PromptOf(size_t begin, size_t end, int scope, int line, int depth) const;
  Prompt CallPrompt(size_t begin, size_t open, size_t end, int scope, int line, int depth) const;
  bool Tokenizer(const std::string& name, int scope, int line) const;
  bool Mutated(const std::string& name, int scope) const;
  std::vector<const Call*> GenerateCalls(const Call& load, bool pipeline) const;
  void GenerationFlags(const Call& load, bool pipeline,
                       const std::vector<std::pair<std::string, Value>>& load_keywords,
                       std::vector<std::string>* argv, std::vector<std::string>* notes) const;

  std::vector<Token> t_;
  std::string file_;
  const ScriptOptions& options_;
  std::vector<Scope> scopes_ = {Scope{}};
  std::vector<Assign> assigns_;
  std::vector<Call> calls_;
  mutable uint64_t steps_ = 0;  // work spent resolving names (a hostile program's bound)
  // The `.generate(` calls by receiver ("model", "self.model"), and whether the program loads
  // one transformers model and no vLLM one (then a generate() of any receiver is that model's).
  std::unordered_map<std::string, std::vector<size_t>> calls_by_callee_;  // into calls_
  std::vector<size_t> generates_;  // every `X.generate(` call, in order
  bool one_transformers_load_ = false;
};

void Reader::Statements() {
  std::vector<int> stack = {0};
  size_t i = 0;
  while (i < t_.size()) {
    size_t end = i;
    while (end < t_.size() && t_[end].kind != Tok::kNewline) ++end;
    if (end == i) {
      ++i;
      continue;
    }
    const int indent = t_[i].indent;
    while (stack.size() > 1 && indent <= scopes_[stack.back()].indent) stack.pop_back();
    const int scope = stack.back();
    if (t_[i].kind == Tok::kName && t_[i].text == "async" && i + 1 < end) ++i;
    const Token& first = t_[i];
    if (first.kind == Tok::kName && (first.text == "def" || first.text == "class") &&
        i + 1 < end && t_[i + 1].kind == Tok::kName) {
      Scope s;
      s.indent = indent;
      s.parent = scope;
      if (first.text == "def") {
        s.function = t_[i + 1].text;
        if (i + 2 < end && IsOp(t_[i + 2], "(")) {
          const size_t close = Close(t_, i + 2, end);
          for (auto [b, e] : Split(t_, i + 3, close - 1)) {
            while (b < e && (IsOp(t_[b], "*") || IsOp(t_[b], "**"))) ++b;
            if (b < e && t_[b].kind == Tok::kName) s.params.push_back(t_[b].text);
          }
        }
      }
      scopes_.push_back(std::move(s));
      stack.push_back(static_cast<int>(scopes_.size()) - 1);
      i = end + 1;
      continue;
    }
    // NAME = value, NAME: type = value; a dotted target (self.model = ...) is kept under its
    // dotted name, which no plain name's lookup meets.
    if (first.kind == Tok::kName && i + 1 < end) {
      size_t eq = i + 1;
      std::string target = first.text;
      while (eq + 1 < end && IsOp(t_[eq], ".") && t_[eq + 1].kind == Tok::kName) {
        target += "." + t_[eq + 1].text;
        eq += 2;
      }
      if (eq < end && IsOp(t_[eq], ":")) {
        while (eq < end && !IsOp(t_[eq], "=")) ++eq;
      }
      if (eq < end && IsOp(t_[eq], "=")) assigns_.push_back({target, scope, first.line,
                                                             eq + 1, end});
    }
    Calls(i, end, scope);
    i = end + 1;
  }
}

void Reader::Calls(size_t begin, size_t end, int scope) {
  for (size_t j = begin; j + 1 < end; ++j) {
    if (t_[j].kind != Tok::kName || !IsOp(t_[j + 1], "(")) continue;
    std::string callee = t_[j].text;
    for (size_t k = j; k >= begin + 2 && IsOp(t_[k - 1], ".") && t_[k - 2].kind == Tok::kName;
         k -= 2) {
      callee = t_[k - 2].text + "." + callee;
    }
    Call c;
    c.callee = callee;
    c.line = t_[j].line;
    c.scope = scope;
    c.at = j;
    const size_t close = Close(t_, j + 1, end);
    c.args = ArgsOf(t_, j + 1, close);
    calls_.push_back(std::move(c));
  }
}

std::string Spell(const std::vector<Token>& t, size_t begin, size_t end) {
  std::string s;
  for (size_t j = begin; j < end && s.size() < 80; ++j) {
    s += t[j].kind == Tok::kString ? "\"" + t[j].text + "\"" : t[j].text;
  }
  return s;
}

Value Unknown(std::string why) {
  Value v;
  v.text = std::move(why);
  return v;
}

Value Reader::Eval(size_t b, size_t e, int scope, int line, int depth) const {
  if (depth > kMaxResolve) return Unknown("a value passed through too many names");
  if (b >= e) return Unknown("an empty expression");
  const Token& f = t_[b];
  if (f.kind == Tok::kString) {
    Value v;
    v.kind = Value::kString;
    for (size_t j = b; j < e; ++j) {
      if (t_[j].kind != Tok::kString) return Unknown("`" + Spell(t_, b, e) + "`");
      if (t_[j].fstring) return Unknown("the f-string `" + Spell(t_, b, e) + "`");
      v.text += t_[j].text;
    }
    return v;
  }
  if (e == b + 1 && f.kind == Tok::kNumber) {
    Value v;
    v.kind = Value::kNumber;
    v.text = f.text;
    return v;
  }
  if (e == b + 2 && IsOp(f, "-") && t_[b + 1].kind == Tok::kNumber) {
    Value v;
    v.kind = Value::kNumber;
    v.text = "-" + t_[b + 1].text;
    return v;
  }
  if ((IsOp(f, "[") || IsOp(f, "(")) && Close(t_, b, e) == e) {
    Value v;
    v.kind = Value::kList;
    for (auto [ib, ie] : Split(t_, b + 1, e - 1)) v.items.push_back(Eval(ib, ie, scope, line,
                                                                         depth + 1));
    if (IsOp(f, "(") && v.items.size() == 1 && !IsOp(t_[e - 2], ",")) return v.items[0];
    return v;
  }
  // {KEY: VALUE, ...} with constant keys, dict(NAME=VALUE, ...), and a quantization config's
  // construction (transformers.BitsAndBytesConfig(load_in_4bit=True)): its keywords as a dict,
  // the class in `text`.
  size_t name_at = b;
  while (name_at + 2 < e && t_[name_at].kind == Tok::kName && IsOp(t_[name_at + 1], ".")) {
    name_at += 2;
  }
  const bool named_call = t_[name_at].kind == Tok::kName && name_at + 1 < e &&
                          IsOp(t_[name_at + 1], "(") && Close(t_, name_at + 1, e) == e;
  const bool call_dict =
      named_call && ((t_[name_at].text == "dict" && name_at == b) ||
                     std::find(std::begin(kQuantConfigs), std::end(kQuantConfigs),
                               t_[name_at].text) != std::end(kQuantConfigs));
  if ((IsOp(f, "{") && Close(t_, b, e) == e) || call_dict) {
    Value v;
    v.kind = Value::kDict;
    if (call_dict && t_[name_at].text != "dict") v.text = t_[name_at].text;
    const size_t from = call_dict ? name_at + 2 : b + 1;
    for (auto [ib, ie] : Split(t_, from, e - 1)) {
      size_t sep = ib;
      while (sep < ie && !IsOp(t_[sep], call_dict ? "=" : ":")) ++sep;
      if (sep == ib || sep == ie) return Unknown("`" + Spell(t_, b, e) + "`");
      const Value key = call_dict && sep == ib + 1 && t_[ib].kind == Tok::kName
                            ? Value{Value::kString, t_[ib].text, false, {}, {}}
                            : Eval(ib, sep, scope, line, depth + 1);
      if (key.kind != Value::kString && key.kind != Value::kNumber) {
        return Unknown("`" + Spell(t_, b, e) + "`");
      }
      v.keys.push_back(key.text);
      v.items.push_back(Eval(sep + 1, ie, scope, line, depth + 1));
    }
    return v;
  }
  if (f.kind == Tok::kName && e == b + 1) {
    if (f.text == "True" || f.text == "False") {
      Value v;
      v.kind = Value::kBool;
      v.flag = f.text == "True";
      return v;
    }
    if (f.text == "None") {
      Value v;
      v.kind = Value::kNone;
      return v;
    }
    return Lookup(f.text, scope, line, depth + 1);
  }
  // os.environ.get("X", default), os.getenv("X", default), os.environ["X"]
  auto at = [&](size_t k, std::string_view text) {
    return b + k < e && t_[b + k].text == text && t_[b + k].kind != Tok::kString;
  };
  size_t open = 0;
  bool get = false;
  if (at(0, "os") && at(1, ".") && at(2, "environ") && at(3, ".") && at(4, "get") &&
      at(5, "(")) {
    open = b + 5, get = true;
  } else if (at(0, "os") && at(1, ".") && at(2, "getenv") && at(3, "(")) {
    open = b + 3, get = true;
  } else if (at(0, "os") && at(1, ".") && at(2, "environ") && at(3, "[")) {
    open = b + 3;
  }
  if (open != 0 && Close(t_, open, e) == e) {
    const auto parts = Split(t_, open + 1, e - 1);
    const Value name = parts.empty() ? Value{}
                                     : Eval(parts[0].first, parts[0].second, scope, line,
                                            depth + 1);
    if (name.kind == Value::kString) {
      for (const auto& [k, value] : options_.environment) {
        if (k != name.text) continue;
        Value v;
        v.kind = Value::kString;
        v.text = value;
        return v;
      }
      if (get && parts.size() > 1) {
        return Eval(parts[1].first, parts[1].second, scope, line, depth + 1);
      }
      return Unknown("$" + name.text + " is not set");
    }
  }
  bool dotted = f.kind == Tok::kName && (e - b) % 2 == 1;
  for (size_t j = b; dotted && j < e; ++j) {
    dotted = (j - b) % 2 == 0 ? t_[j].kind == Tok::kName : IsOp(t_[j], ".");
  }
  if (dotted) {
    Value v;
    v.kind = Value::kDotted;
    v.text = Spell(t_, b, e);
    return v;
  }
  return Unknown("`" + Spell(t_, b, e) + "`");
}

// The assignment of `name` that `line` of scope `s` reads: the last before the line; at module
// level, else the last of all (a function defined above a constant it reads runs after the
// constant is set). nullptr when `s` assigns none.
const Assign* Reader::AssignIn(const std::string& name, int s, int line) const {
  const Assign* best = nullptr;
  const Assign* any = nullptr;
  for (const Assign& a : assigns_) {
    if (a.scope != s || a.name != name) continue;
    any = &a;
    if (a.line <= line) best = &a;
  }
  return best == nullptr && s == 0 ? any : best;
}

// A name's value where it is read on `line` in `scope`: the function's own assignment, the
// function's parameter as its call sites pass it, or the module's last assignment before.
Value Reader::Lookup(const std::string& name, int scope, int line, int depth) const {
  steps_ += assigns_.size() + calls_.size();
  if (steps_ > kMaxLookupSteps) return Unknown(fmt::format("`{}`: the program is past what "
                                                           "the reader follows", name));
  for (int s = scope;; s = scopes_[s].parent) {
    if (const Assign* best = AssignIn(name, s, line)) {
      return Eval(best->begin, best->end, s, best->line, depth + 1);
    }
    const Scope& sc = scopes_[s];
    const auto p = std::find(sc.params.begin(), sc.params.end(), name);
    if (p != sc.params.end()) {
      const size_t position = static_cast<size_t>(p - sc.params.begin());
      for (const Call& c : calls_) {
        const std::string_view callee = c.callee;
        const bool to_it = callee == sc.function ||
                           (callee.size() > sc.function.size() && callee.ends_with(sc.function) &&
                            callee[callee.size() - sc.function.size() - 1] == '.');
        if (!to_it || c.scope == s) continue;
        const bool method = callee != sc.function && !sc.params.empty() &&
                            sc.params[0] == "self";
        if (method && position == 0) continue;
        return ArgValue(c, position - (method ? 1 : 0), {name}, depth + 1);
      }
      return Unknown(fmt::format("`{}` is an argument of {}(), and no call of {}() passes it",
                                 name, sc.function, sc.function));
    }
    if (s == 0) break;
  }
  return Unknown(fmt::format("`{}` is not set", name));
}

Value Reader::ArgValue(const Call& c, size_t position,
                       std::initializer_list<std::string_view> keywords, int depth) const {
  size_t n = 0;
  for (const Arg& a : c.args) {
    for (std::string_view k : keywords) {
      if (a.keyword == k) return Eval(a.begin, a.end, c.scope, c.line, depth);
    }
  }
  for (const Arg& a : c.args) {
    if (!a.keyword.empty()) continue;
    if (n++ == position) return Eval(a.begin, a.end, c.scope, c.line, depth);
  }
  Value none;
  none.kind = Value::kNone;
  return none;
}

// The transformers flags of a quantization config read as a dict (v.text: its class); keys
// with no flag and a memory effect go to *ignored as "quantization_config.KEY".
void QuantizationFlags(const Value& v, std::vector<std::string>* argv,
                       std::vector<std::string>* ignored) {
  // Keys that store nothing different: the compute dtype, nf4 or fp4 (both 4 bits), the
  // 4-bit storage container, the int8 outlier threshold.
  static constexpr std::string_view kNoBytes[] = {
      "bnb_4bit_compute_dtype", "bnb_4bit_quant_type", "bnb_4bit_quant_storage",
      "llm_int8_threshold"};
  if (v.text == "FbgemmFp8Config") argv->insert(argv->end(), {"--quantization", "fbgemm_fp8"});
  for (size_t i = 0; i < v.keys.size(); ++i) {
    const std::string& k = v.keys[i];
    const Value& item = v.items[i];
    const bool on = item.kind == Value::kBool && item.flag;
    const bool is_bool = item.kind == Value::kBool;
    if (v.text == "BitsAndBytesConfig" && (k == "load_in_4bit" || k == "load_in_8bit") &&
        is_bool) {
      if (on) argv->push_back(k == "load_in_4bit" ? "--load-in-4bit" : "--load-in-8bit");
    } else if (v.text == "BitsAndBytesConfig" &&
               std::find(std::begin(kNoBytes), std::end(kNoBytes), k) != std::end(kNoBytes)) {
      continue;
    } else if (v.text == "AwqConfig" && k == "do_fuse" && is_bool) {
      if (on) argv->push_back("--do-fuse");
    } else if (v.text == "AwqConfig" && k == "fuse_max_seq_len" &&
               item.kind == Value::kNumber) {
      argv->insert(argv->end(), {"--fuse-max-seq-len", item.text});
    } else if (v.text == "AwqConfig" && k != "modules_to_fuse" && k != "exllama_config") {
      // The checkpoint's own quantization_config wins for everything else: transformers takes
      // only the loading attributes from the one given (quantizers/auto.py,
      // merge_quantization_configs, v4.57: AwqConfig.get_loading_attributes).
      continue;
    } else {
      ignored->push_back("quantization_config." + k);
    }
  }
}

std::string Last(std::string_view dotted) {
  const size_t dot = dotted.rfind('.');
  return std::string(dot == dotted.npos ? dotted : dotted.substr(dot + 1));
}

// A model class whose from_pretrained loads weights (transformers' Auto*/ *For* classes,
// AutoAWQ's AutoAWQForCausalLM, AutoGPTQ's AutoGPTQForCausalLM), not a tokenizer or config.
bool ModelClass(std::string_view name) {
  if (name.find("Tokenizer") != name.npos || name.find("Processor") != name.npos ||
      name.find("Config") != name.npos || name.find("Extractor") != name.npos) {
    return false;
  }
  return name.rfind("AutoModel", 0) == 0 || name.find("For") != name.npos;
}

// A word for a shell command line, quoted where a shell would split or expand it.
std::string ShellWord(const std::string& w) {
  if (!w.empty() && w.find_first_of(" \t\n'\"\\$`*?[]#~;&|<>(){}") == std::string::npos) {
    return w;
  }
  std::string q = "'";
  for (char c : w) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// A constant value as JSON text (strings escaped, True/False/None as JSON's words); *bad gets
// the first part that is not a constant.
std::string JsonText(const Value& v, const Value** bad) {
  auto quoted = [](const std::string& text) {
    std::string q = "\"";
    for (char ch : text) {
      if (ch == '"' || ch == '\\') q += '\\';
      if (static_cast<unsigned char>(ch) < 0x20) {
        q += fmt::format("\\u{:04x}", static_cast<unsigned char>(ch));
        continue;
      }
      q += ch;
    }
    return q + "\"";
  };
  switch (v.kind) {
    case Value::kString: return quoted(v.text);
    case Value::kNumber: return v.text;
    case Value::kBool: return v.flag ? "true" : "false";
    case Value::kNone: return "null";
    case Value::kList:
    case Value::kDict: {
      std::string out = v.kind == Value::kList ? "[" : "{";
      for (size_t i = 0; i < v.items.size(); ++i) {
        if (i > 0) out += ",";
        if (v.kind == Value::kDict) out += quoted(v.keys[i]) + ":";
        out += JsonText(v.items[i], bad);
      }
      return out + (v.kind == Value::kList ? "]" : "}");
    }
    default:
      if (*bad == nullptr) *bad = &v;
      return "";
  }
}

// --- The sequence length a program generates with (transformers' generate and pipelines) ---

// A prompt's tokens from its text, leaning to more: 3 UTF-8 bytes a token. English BPE
// vocabularies (Llama 3's 128k, Qwen's 151k) average about 4 characters a token on English
// prose, and CJK text about one token a character (3 bytes in UTF-8); 3 is above both. Plus
// the special tokens a tokenizer call adds (BOS, and EOS for some vocabularies).
constexpr int64_t kBytesPerToken = 3;
constexpr int64_t kSpecialTokens = 2;
// A chat template's own tokens, an allowance: per message its role header and end marker
// (Qwen's `<|im_start|>user\n ... <|im_end|>\n` is 5, Llama 3's header 4 and `<|eot_id|>` 1);
// per conversation the generation prompt (Qwen3's `<|im_start|>assistant\n` 3, plus an empty
// `<think>\n\n</think>\n\n` 4 with enable_thinking=False) and the default system text some
// templates add when none is given (Qwen2.5's "You are Qwen, created by Alibaba Cloud..."
// about 20, Llama 3.1's knowledge-cutoff and date lines about 30), in the models'
// tokenizer_config.json chat_template.
constexpr int64_t kChatPerMessage = 8;
constexpr int64_t kChatPerConversation = 64;
// transformers' default lengths: GenerationConfig.max_length 20, which generate() reads as 20
// new tokens when neither max_new_tokens nor max_length is given
// (generation/configuration_utils.py GenerationConfig.__init__; generation/utils.py
// _prepare_generated_length, "by default let's always generate 20 new tokens", 4.57); the
// pipelines that call generate default to max_new_tokens=256 (their _default_generation_config,
// pipelines/text_generation.py, from 4.53: PR #38129), which also wins over a max_length alone
// (issue #40751).
constexpr int64_t kGenerateDefaultNew = 20;
constexpr int64_t kPipelineDefaultNew = 256;
constexpr size_t kMaxGenerateCalls = 64;  // generate() calls read per load
constexpr int kMaxPromptDepth = 32;       // names and calls a prompt passes through
constexpr int64_t kMaxCount = (int64_t{1} << 31) - 1;

int64_t TextTokens(uint64_t bytes) {
  return static_cast<int64_t>(std::min<uint64_t>(bytes / kBytesPerToken + 1, kMaxCount / 2));
}

Prompt UnknownPrompt(std::string why) {
  Prompt p;
  p.what = std::move(why);
  return p;
}

// A non-negative integer literal, or -1.
int64_t Count(const Value& v) {
  if (v.kind != Value::kNumber || v.text.empty() || v.text.size() > 10 ||
      v.text.find_first_not_of("0123456789_") != std::string::npos) {
    return -1;
  }
  int64_t n = 0;
  for (char c : v.text) {
    if (c != '_') n = n * 10 + (c - '0');
  }
  return n > kMaxCount ? -1 : n;
}

// One chat (a list of {"role": ..., "content": ...}) as its tokens.
Prompt ChatPrompt(const Value& chat) {
  uint64_t bytes = 0;
  for (const Value& m : chat.items) {
    if (m.kind != Value::kDict) return UnknownPrompt("a chat message that is not a dict");
    const Value* content = nullptr;
    for (size_t k = 0; k < m.keys.size(); ++k) {
      if (m.keys[k] == "content") content = &m.items[k];
    }
    if (content == nullptr) return UnknownPrompt("a chat message without \"content\"");
    if (content->kind == Value::kString) {
      bytes += content->text.size();
      continue;
    }
    if (content->kind != Value::kList) {
      return UnknownPrompt(content->kind == Value::kUnknown ? content->text
                                                            : "a chat message's content");
    }
    // [{"type": "text", "text": ...}, {"type": "image", ...}]: only text parts are counted.
    for (const Value& part : content->items) {
      const Value* text = nullptr;
      for (size_t k = 0; part.kind == Value::kDict && k < part.keys.size(); ++k) {
        if (part.keys[k] == "text") text = &part.items[k];
        if (part.keys[k] == "type" && part.items[k].kind == Value::kString &&
            part.items[k].text != "text") {
          return UnknownPrompt(fmt::format("a chat with an {} part (its tokens are the "
                                           "processor's)", part.items[k].text));
        }
      }
      if (text == nullptr || text->kind != Value::kString) {
        return UnknownPrompt(text != nullptr && text->kind == Value::kUnknown
                                 ? text->text : "a chat message's content part");
      }
      bytes += text->text.size();
    }
  }
  Prompt p;
  p.known = true;
  p.chat = true;
  const int64_t n = static_cast<int64_t>(chat.items.size());
  p.tokens = std::min(kMaxCount / 2, TextTokens(bytes) + kChatPerMessage * n +
                                         kChatPerConversation);
  p.what = fmt::format("a chat of {} message(s), {} bytes of text", n, bytes);
  return p;
}

// A value as a prompt: a string, a list of strings, a chat, a list of chats.
Prompt ValuePrompt(const Value& v) {
  if (v.kind == Value::kString) {
    Prompt p;
    p.known = true;
    p.tokens = TextTokens(v.text.size()) + kSpecialTokens;
    p.what = fmt::format("a {}-byte literal", v.text.size());
    return p;
  }
  if (v.kind == Value::kUnknown) return UnknownPrompt(v.text);
  if (v.kind != Value::kList) return UnknownPrompt("not a text the reader can count");
  if (v.items.empty()) return UnknownPrompt("an empty list, filled at run time");
  if (v.items[0].kind == Value::kDict) return ChatPrompt(v);
  Prompt all;
  all.known = true;
  all.batch = 0;
  for (const Value& item : v.items) {
    const Prompt p = item.kind == Value::kList ? ChatPrompt(item) : ValuePrompt(item);
    if (!p.known) return p;
    all.tokens = std::max(all.tokens, p.tokens);
    all.chat = all.chat || p.chat;
    all.batch += p.batch;
  }
  all.what = fmt::format("{} prompts, the longest counted", all.batch);
  return all;
}

// The index of the bracket opening the one that closes at `close`; `close` when none in
// [begin, close).
size_t Open(const std::vector<Token>& t, size_t close, size_t begin) {
  int depth = 0;
  for (size_t j = close + 1; j-- > begin;) {
    if (t[j].kind != Tok::kOp) continue;
    const std::string& o = t[j].text;
    if (o == ")" || o == "]" || o == "}") ++depth;
    if (o == "(" || o == "[" || o == "{") {
      if (--depth == 0) return j;
    }
  }
  return close;
}


// The argument given as one of `keywords` or at `position` (0-based, among the positional
// ones that are not `*x` / `**x`); nullptr when none.
const Arg* FindArg(const std::vector<Token>& t, const std::vector<Arg>& args, size_t position,
                   std::initializer_list<std::string_view> keywords) {
  for (const Arg& a : args) {
    for (std::string_view k : keywords) {
      if (a.keyword == k) return &a;
    }
  }
  size_t n = 0;
  for (const Arg& a : args) {
    if (!a.keyword.empty() || a.begin >= a.end || IsOp(t[a.begin], "*") ||
        IsOp(t[a.begin], "**")) {
      continue;
    }
    if (n++ == position) return &a;
  }
  return nullptr;
}

// Whether `name` holds a tokenizer or processor: assigned from a *Tokenizer* / *Processor*
// class's from_pretrained or a pipeline's `.tokenizer`, or named like one where the reader
// cannot see where it comes from (a function's return value).
bool Reader::Tokenizer(const std::string& name, int scope, int line) const {
  for (int s = scope;; s = scopes_[s].parent) {
    if (const Assign* a = AssignIn(name, s, line)) {
      for (size_t j = a->begin; j < a->end; ++j) {
        const std::string& w = t_[j].text;
        if (t_[j].kind == Tok::kName &&
            (w.find("Tokenizer") != w.npos || w.find("Processor") != w.npos ||
             w == "tokenizer" || w == "processor")) {
          return true;
        }
      }
      return false;
    }
    if (s == 0) break;
  }
  const std::string lower = core::AsciiLower(name);
  return lower.find("tok") != lower.npos || lower.find("processor") != lower.npos;
}

// Whether the program adds to the list `name` of scope `s` after building it (append,
// extend, insert): its literal is not what generate() sees.
bool Reader::Mutated(const std::string& name, int s) const {
  for (std::string_view method : {".append", ".extend", ".insert"}) {
    const auto it = calls_by_callee_.find(name + std::string(method));
    if (it == calls_by_callee_.end()) continue;
    for (size_t i : it->second) {
      if (calls_[i].scope == s) return true;
    }
  }
  return false;
}

// The prompt an expression passes to generate(): through names, `.to(device)`, `.cuda()`,
// `["input_ids"]` / `.input_ids`, a tokenizer's call or apply_chat_template, lists of prompts
// (`[text] * 4` too), to literal strings and chats.
Prompt Reader::PromptOf(size_t b, size_t e, int scope, int line, int depth) const {
  if (depth > kMaxPromptDepth) return UnknownPrompt("a value passed through too many names");
  steps_ += assigns_.size() + 1;
  if (steps_ > kMaxLookupSteps) return UnknownPrompt("past what the reader follows");
  for (;;) {
    if (e >= b + 4 && IsOp(t_[e - 1], ")")) {
      const size_t open = Open(t_, e - 1, b);
      if (open >= b + 3 && open < e - 1 && t_[open - 1].kind == Tok::kName &&
          (t_[open - 1].text == "to" || t_[open - 1].text == "cuda") &&
          IsOp(t_[open - 2], ".")) {
        e = open - 2;
        continue;
      }
    }
    if (e >= b + 3 && t_[e - 1].kind == Tok::kName && t_[e - 1].text == "input_ids" &&
        IsOp(t_[e - 2], ".")) {
      e -= 2;
      continue;
    }
    if (e >= b + 4 && IsOp(t_[e - 1], "]") && t_[e - 2].kind == Tok::kString &&
        t_[e - 2].text == "input_ids" && IsOp(t_[e - 3], "[")) {
      e -= 3;
      continue;
    }
    break;
  }
  if (b >= e) return UnknownPrompt("an empty expression");
  if (e == b + 1 && t_[b].kind == Tok::kName) {
    const std::string& name = t_[b].text;
    for (int s = scope;; s = scopes_[s].parent) {
      if (const Assign* a = AssignIn(name, s, line)) {
        if (Mutated(name, s)) {
          return UnknownPrompt(fmt::format("`{}`, built up at run time ({}.append)", name,
                                           name));
        }
        return PromptOf(a->begin, a->end, s, a->line, depth + 1);
      }
      const auto& params = scopes_[s].params;
      if (s == 0 || std::find(params.begin(), params.end(), name) != params.end()) break;
    }
    return ValuePrompt(Eval(b, e, scope, line, 0));
  }
  // [prompt] * N
  if (e >= b + 3 && IsOp(t_[e - 2], "*") && IsOp(t_[b], "[") && Close(t_, b, e) == e - 2) {
    const int64_t n = Count(Value{Value::kNumber, t_[e - 1].text, false, {}, {}});
    if (n < 0 || t_[e - 1].kind != Tok::kNumber) {
      return UnknownPrompt("`" + Spell(t_, b, e) + "` (a count the reader cannot read)");
    }
    Prompt p = PromptOf(b, e - 2, scope, line, depth + 1);
    p.batch = std::min(kMaxCount, p.batch * std::max<int64_t>(n, 0));
    return p;
  }
  // "text" * N or N * "text": a literal repeated, counted as its bytes times N.
  if (e >= b + 3 && (IsOp(t_[e - 2], "*") || IsOp(t_[b + 1], "*"))) {
    const bool count_last = IsOp(t_[e - 2], "*") && t_[e - 1].kind == Tok::kNumber;
    const bool count_first = !count_last && IsOp(t_[b + 1], "*") && t_[b].kind == Tok::kNumber;
    if (count_last || count_first) {
      const Token& count = count_last ? t_[e - 1] : t_[b];
      const Value text = count_last ? Eval(b, e - 2, scope, line, 0)
                                    : Eval(b + 2, e, scope, line, 0);
      const int64_t n = Count(Value{Value::kNumber, count.text, false, {}, {}});
      if (text.kind == Value::kString && n >= 0) {
        Prompt p;
        p.known = true;
        const uint64_t cap = uint64_t{kMaxCount} * kBytesPerToken;
        const uint64_t size = text.text.size();
        const uint64_t bytes =
            size == 0 ? 0 : static_cast<uint64_t>(n) > cap / size ? cap : n * size;
        p.tokens = TextTokens(bytes) + kSpecialTokens;
        p.what = fmt::format("a {}-byte literal repeated {} times", text.text.size(), n);
        return p;
      }
    }
  }
  if ((IsOp(t_[b], "[") || IsOp(t_[b], "(")) && Close(t_, b, e) == e) {
    const auto items = Split(t_, b + 1, e - 1);
    if (items.empty()) return UnknownPrompt("an empty list, filled at run time");
    if (IsOp(t_[items[0].first], "{") ||
        (t_[items[0].first].kind == Tok::kName && t_[items[0].first].text == "dict")) {
      return ValuePrompt(Eval(b, e, scope, line, 0));  // one chat
    }
    if (IsOp(t_[b], "(") && items.size() == 1 && !IsOp(t_[e - 2], ",")) {
      return PromptOf(items[0].first, items[0].second, scope, line, depth + 1);
    }
    Prompt all;
    all.known = true;
    all.batch = 0;
    for (auto [ib, ie] : items) {
      const Prompt p = PromptOf(ib, ie, scope, line, depth + 1);
      if (!p.known) return p;
      all.tokens = std::max(all.tokens, p.tokens);
      all.cap = std::max(all.cap, p.cap);
      all.chat = all.chat || p.chat;
      all.batch = std::min(kMaxCount, all.batch + p.batch);
      all.what = p.what;
    }
    if (all.batch > 1) all.what = fmt::format("{} prompts, the longest counted", all.batch);
    return all;
  }
  if (IsOp(t_[e - 1], ")")) {
    const size_t open = Open(t_, e - 1, b);
    if (open < e - 1 && open > b) return CallPrompt(b, open, e, scope, line, depth);
  }
  return ValuePrompt(Eval(b, e, scope, line, 0));
}

// A call's prompt: a tokenizer's (tok(text), tok.encode(text), ...) or apply_chat_template's.
Prompt Reader::CallPrompt(size_t b, size_t open, size_t e, int scope, int line,
                          int depth) const {
  bool dotted = (open - b) % 2 == 1;
  for (size_t j = b; dotted && j < open; ++j) {
    dotted = (j - b) % 2 == 0 ? t_[j].kind == Tok::kName : IsOp(t_[j], ".");
  }
  const std::string callee = Spell(t_, b, open);
  if (!dotted) return UnknownPrompt("`" + Spell(t_, b, e) + "`");
  const std::string method = Last(callee);
  const std::string base = callee.size() > method.size()
                               ? callee.substr(0, callee.size() - method.size() - 1) : "";
  const bool chat_template = method == "apply_chat_template";
  const bool encode = method == "encode" || method == "encode_plus" ||
                      method == "batch_encode_plus" || method == "__call__";
  const bool tokenizer_call = base.empty() ? Tokenizer(method, scope, line)
                              : chat_template || encode
                                  ? true
                                  : base.ends_with("tokenizer") || base.ends_with("processor");
  if (!tokenizer_call) {
    return UnknownPrompt(fmt::format("the result of {}(...), a call the reader does not follow",
                                     callee));
  }
  const std::vector<Arg> args = ArgsOf(t_, open, e);
  for (const Arg& a : args) {
    if (a.keyword == "images" || a.keyword == "videos" || a.keyword == "audio") {
      return UnknownPrompt(fmt::format("{}(..., {}=...): the {}' tokens are the processor's",
                                       callee, a.keyword, a.keyword));
    }
  }
  const Arg* text = FindArg(t_, args, 0, chat_template ? std::initializer_list<std::string_view>{
                                                             "conversation"}
                                                       : std::initializer_list<std::string_view>{
                                                             "text"});
  if (text == nullptr) {
    return UnknownPrompt(fmt::format("{}(...) without a text the reader follows", callee));
  }
  Prompt p = PromptOf(text->begin, text->end, scope, line, depth + 1);
  // truncation=True with max_length=N keeps at most N tokens (tokenization_utils_base.py
  // __call__ / apply_chat_template: truncation and max_length).
  const Arg* truncation = FindArg(t_, args, 99, {"truncation"});
  const Arg* max_length = FindArg(t_, args, 99, {"max_length"});
  if (truncation != nullptr && max_length != nullptr) {
    const Value on = Eval(truncation->begin, truncation->end, scope, line, 0);
    const int64_t n = Count(Eval(max_length->begin, max_length->end, scope, line, 0));
    if (n > 0 && ((on.kind == Value::kBool && on.flag) ||
                  (on.kind == Value::kString && on.text != "do_not_truncate"))) {
      p.cap = p.cap > 0 ? std::min(p.cap, n) : n;
    }
  }
  return p;
}

// The calls that generate with a load: `TARGET.generate(...)` of the name the load is assigned
// to (any receiver's when the program loads one transformers model), or `TARGET(...)` of a
// pipeline.
std::vector<const Call*> Reader::GenerateCalls(const Call& load, bool pipeline) const {
  // The statement the load is in: assignments are in token order.
  std::string target;
  const auto after = std::upper_bound(assigns_.begin(), assigns_.end(), load.at,
                                      [](size_t at, const Assign& a) { return at < a.begin; });
  if (after != assigns_.begin() && load.at < std::prev(after)->end) {
    target = std::prev(after)->name;
  }
  std::vector<const Call*> out;
  auto add = [&](const std::vector<size_t>& indices) {
    for (size_t i : indices) {
      if (out.size() > kMaxGenerateCalls) break;
      out.push_back(&calls_[i]);
    }
  };
  if (!pipeline && one_transformers_load_) {
    add(generates_);
  } else if (!target.empty()) {
    const auto it = calls_by_callee_.find(pipeline ? target : target + ".generate");
    if (it != calls_by_callee_.end()) add(it->second);
  }
  return out;
}

// The flags of the sequence length the load generates with, read from its generate() or
// pipeline calls (generation/utils.py generate, 4.57): max_length = prompt + max_new_tokens
// (_prepare_generated_length); batch x num_beams, or x num_return_sequences when sampling,
// sequences (_expand_inputs_for_generation). Several calls: the longest prompt, the longest
// total and the largest batch, each the worst of any call.
void Reader::GenerationFlags(const Call& load, bool pipeline,
                             const std::vector<std::pair<std::string, Value>>& load_keywords,
                             std::vector<std::string>* argv,
                             std::vector<std::string>* notes) const {
  const std::string where = fmt::format("{}:{}", file_, load.line);
  const std::vector<const Call*> calls = GenerateCalls(load, pipeline);
  const std::string verb = pipeline ? "pipeline call" : "generate()";
  if (calls.empty()) {
    if (!pipeline) {
      notes->push_back(fmt::format(
          "{}: no generate() call of this model read: planned as before, the prompt filling "
          "the context (max_position_embeddings)", where));
    }
    return;
  }
  if (calls.size() > kMaxGenerateCalls) {
    notes->push_back(fmt::format("{}: more than {} generate() calls: the lengths are not "
                                 "read; planned with the whole context", where,
                                 kMaxGenerateCalls));
    return;
  }
  int64_t prompt = 0, total = 0, batch = 1, beams = 1, returns = 1, new_only = 0, max_len = 0;
  bool all_known = true, greedy = true, lengths = true;
  std::string cache, unknown_why, first_note;
  int unknown_line = 0;
  for (const Call* c : calls) {
    // `**kwargs` of a dict the reader sees gives its keys; any other `**X` is the inputs (a
    // tokenizer's BatchEncoding) when no inputs are given otherwise, and a second one could
    // hold max_new_tokens: the lengths are then not known.
    const Arg* input = pipeline ? FindArg(t_, c->args, 0, {"text_inputs", "inputs"})
                                : FindArg(t_, c->args, 0, {"input_ids", "inputs"});
    std::vector<std::pair<std::string, Value>> spread;
    std::string opaque;
    for (const Arg& a : c->args) {
      if (!a.keyword.empty() || a.begin + 1 >= a.end || !IsOp(t_[a.begin], "**")) continue;
      const Value d = Eval(a.begin + 1, a.end, c->scope, c->line, 0);
      if (d.kind == Value::kDict) {
        for (size_t k = 0; k < d.keys.size(); ++k) spread.emplace_back(d.keys[k], d.items[k]);
      } else if (input == nullptr && !pipeline) {
        input = &a;
      } else if (opaque.empty()) {
        opaque = "`" + Spell(t_, a.begin, a.end) + "`, whose keys the reader cannot see";
      }
    }
    for (const Arg& a : c->args) {
      if (a.keyword == "generation_config" && opaque.empty()) {
        opaque = "generation_config=" + Spell(t_, a.begin, a.end) + " (not read)";
      }
    }
    auto keyword = [&](std::string_view k) {
      for (const Arg& a : c->args) {
        if (a.keyword == k) return Eval(a.begin, a.end, c->scope, c->line, 0);
      }
      for (const auto& [name, v] : spread) {
        if (name == k) return v;
      }
      for (const auto& [name, v] : load_keywords) {
        if (pipeline && name == k) return v;
      }
      Value none;
      none.kind = Value::kNone;
      return none;
    };
    if (!opaque.empty()) {
      lengths = false;
      unknown_why = opaque;
      unknown_line = c->line;
      continue;
    }
    Prompt p = input == nullptr
                   ? UnknownPrompt("not passed in a form the reader follows")
                   : PromptOf(input->begin + (IsOp(t_[input->begin], "**") ? 1 : 0), input->end,
                              c->scope, c->line, 0);
    std::string how = p.what;
    if (options_.prompt_tokens > 0) {
      p.known = true;
      p.tokens = options_.prompt_tokens;
      how = "check --prompt-tokens";
    } else if (p.cap > 0 && (!p.known || p.tokens > p.cap)) {
      p.known = true;
      p.tokens = p.cap;
      how = "the tokenizer's truncation to max_length";
    }
    const Value mnt = keyword("max_new_tokens");
    const Value ml = keyword("max_length");
    const int64_t n_new = Count(mnt), n_len = Count(ml);
    if ((mnt.kind != Value::kNone && n_new < 1) || (ml.kind != Value::kNone && n_len < 1)) {
      lengths = false;
      unknown_why = fmt::format("max_new_tokens/max_length is {}",
                                mnt.kind != Value::kNone && n_new < 1 ? mnt.text : ml.text);
      unknown_line = c->line;
      continue;
    }
    int64_t n = n_new > 0 ? n_new : pipeline || n_len < 1 ? (pipeline ? kPipelineDefaultNew
                                                                      : kGenerateDefaultNew)
                                                          : 0;
    if (!p.known) {
      all_known = false;
      if (unknown_why.empty()) {
        unknown_why = "the prompt is not known (" + p.what + ")";
        unknown_line = c->line;
      }
      if (n > 0) new_only = std::max(new_only, n);
      if (n_len > 0 && n_new < 1) max_len = std::max(max_len, n_len);
    } else {
      // max_length alone bounds prompt + new tokens; a pipeline's max_new_tokens=256 default
      // still wins over it, so the longer of the two.
      const int64_t t = n_new > 0 ? p.tokens + n_new
                        : n > 0     ? std::max(p.tokens + n, n_len)
                                    : std::max(n_len, p.tokens + 1);
      prompt = std::max(prompt, p.tokens);
      total = std::max(total, t);
      if (first_note.empty()) {
        first_note = fmt::format(
            "{}: {} on line {}: prompt about {} tokens ({}{}{}), {}",
            where, verb, c->line, p.tokens, how,
            how == p.what ? ": 3 bytes a token, more than English BPE's 4 characters" : "",
            how == p.what && p.chat ? fmt::format(", + {} a message and {} for the chat "
                                                  "template", kChatPerMessage,
                                                  kChatPerConversation) : "",
            n_new > 0 ? fmt::format("max_new_tokens={}", n_new)
            : n_len > 0 && !pipeline ? fmt::format("max_length={} (prompt + new tokens)", n_len)
            : pipeline ? fmt::format("{} new tokens (the pipeline's default max_new_tokens)",
                                     kPipelineDefaultNew)
                       : fmt::format("{} new tokens (transformers' default max_length 20 "
                                     "reads as 20 new; a generation_config.json max_length or "
                                     "max_new_tokens is not read)", kGenerateDefaultNew));
      }
    }
    int64_t b = p.known || p.batch > 1 ? p.batch : 1;
    if (pipeline) {
      // Pipeline.__call__ runs the inputs batch_size at a time (default 1; pipelines/base.py).
      const int64_t size = Count(keyword("batch_size"));
      b = std::min(b, size > 0 ? size : 1);
    }
    batch = std::max(batch, b);
    beams = std::max(beams, std::max<int64_t>(1, Count(keyword("num_beams"))));
    returns = std::max(returns, std::max<int64_t>(1, Count(keyword("num_return_sequences"))));
    const Value sample = keyword("do_sample");
    greedy = greedy && sample.kind == Value::kBool && !sample.flag;
    const Value ci = keyword("cache_implementation");
    if (ci.kind == Value::kString && (cache.empty() || ci.text == "static")) cache = ci.text;
  }
  if (!lengths) {
    notes->push_back(fmt::format(
        "{}: {} on line {}: {}: planned as before, the prompt filling the context "
        "(max_position_embeddings)", where, verb, unknown_line, unknown_why));
    return;
  }
  if (all_known) {
    argv->insert(argv->end(), {"--prompt-tokens", std::to_string(prompt), "--max-new-tokens",
                               std::to_string(std::max<int64_t>(1, total - prompt))});
    notes->push_back(first_note + (calls.size() > 1
                                           ? fmt::format("; {} calls: planned for the longest, "
                                                         "{} tokens", calls.size(), total)
                                           : fmt::format(": planned for {} tokens", total)));
  } else {
    if (max_len > 0 && new_only == 0) {
      argv->insert(argv->end(), {"--max-length", std::to_string(std::max(max_len, total))});
    } else if (new_only > 0) {
      argv->insert(argv->end(), {"--max-new-tokens",
                                 std::to_string(std::max(new_only, total - prompt))});
    }
    notes->push_back(fmt::format(
        "{}: {} on line {}: {}: planned as before, the prompt filling {}; give its length "
        "with `vramfit check --prompt-tokens N`", where, verb, unknown_line, unknown_why,
        max_len > 0 && new_only == 0 ? "max_length" : "the context (max_position_embeddings)"));
  }
  if (batch > 1) argv->insert(argv->end(), {"--batch-size", std::to_string(batch)});
  if (beams > 1) argv->insert(argv->end(), {"--num-beams", std::to_string(beams)});
  if (returns > 1) {
    argv->insert(argv->end(), {"--num-return-sequences", std::to_string(returns)});
  }
  if (greedy) argv->insert(argv->end(), {"--do-sample", "false"});
  if (!cache.empty()) argv->insert(argv->end(), {"--cache-implementation", cache});
}

Status Reader::Launch(const Call& c, ScriptRead* out) {
  const std::string last = Last(c.callee);
  const std::string where = fmt::format("{}:{}", file_, c.line);
  auto unknown = [&](const Value& v, std::string_view what) {
    return Status::InvalidArgument(fmt::format(
        "{}: {}, in the {} of line {} (set it in the script, or give its value with --env "
        "FILE)", where, v.text, what, c.line));
  };
  std::vector<std::string> argv;
  std::vector<std::string> ignored;
  std::vector<std::string> no_memory;  // keywords read that change no GPU memory
  std::vector<std::string> generation_notes;  // how the sequence length was read
  std::string what;
  // The call's keywords in order, `**NAME` of a dict the reader can see giving each of its
  // keys; any other `**` is unknown (its keys could be anything). Positional args are left out.
  std::vector<std::pair<std::string, Value>> keywords;
  Value opaque;
  auto read_keywords = [&] {
    for (const Arg& a : c.args) {
      if (a.keyword.empty() && a.begin < a.end && IsOp(t_[a.begin], "**")) {
        const Value d = Eval(a.begin + 1, a.end, c.scope, c.line, 0);
        if (d.kind != Value::kDict) {
          opaque = d.kind == Value::kUnknown ? d : Unknown("`" + Spell(t_, a.begin, a.end) + "`");
          opaque.kind = Value::kUnknown;
          break;
        }
        for (size_t k = 0; k < d.keys.size(); ++k) keywords.emplace_back(d.keys[k], d.items[k]);
      } else if (!a.keyword.empty()) {
        keywords.emplace_back(a.keyword, Eval(a.begin, a.end, c.scope, c.line, 0));
      }
    }
  };
  // One from_pretrained keyword as the transformers flags it sets (shared by pipeline()).
  auto load_keyword = [&](const std::string& keyword, const Value& v) -> Status {
    const Arg a{keyword, 0, 0};
    if (a.keyword == "pretrained_model_name_or_path" || a.keyword == "quant_path" ||
        a.keyword == "model_name_or_path") {
      return Status::Ok();
    }
    if (a.keyword == "device_map" && v.kind == Value::kString) {
      argv.insert(argv.end(), {"--device-map", v.text});
    } else if ((a.keyword == "torch_dtype" || a.keyword == "dtype") &&
               (v.kind == Value::kString || v.kind == Value::kDotted)) {
      argv.insert(argv.end(), {a.keyword == "dtype" ? "--dtype" : "--torch-dtype",
                               Last(v.text)});
    } else if (a.keyword == "attn_implementation" && v.kind == Value::kString) {
      argv.insert(argv.end(), {"--attn-implementation", v.text});
    } else if ((a.keyword == "load_in_4bit" || a.keyword == "load_in_8bit") &&
               v.kind == Value::kBool) {
      if (v.flag) argv.push_back(a.keyword == "load_in_4bit" ? "--load-in-4bit"
                                                             : "--load-in-8bit");
    } else if (a.keyword == "quantization_config" && v.kind == Value::kDict &&
               !v.text.empty()) {
      QuantizationFlags(v, &argv, &ignored);
    } else if (std::find(std::begin(kNoGpuMemory), std::end(kNoGpuMemory), a.keyword) !=
               std::end(kNoGpuMemory)) {
      no_memory.push_back(a.keyword);
    } else if (a.keyword == "max_memory" && v.kind == Value::kDict) {
      // {0: "20GiB", "cpu": "64GiB"}: --max-memory reads the same object as JSON.
      const Value* bad = nullptr;
      const std::string json = JsonText(v, &bad);
      if (bad != nullptr) return unknown(*bad, what);
      argv.insert(argv.end(), {"--max-memory", json});
    } else {
      ignored.push_back(a.keyword);
    }
    return Status::Ok();
  };
  if (last == "LLM") {
    // vllm/entrypoints/llm.py (v0.10-v0.22): LLM(model, **kwargs) builds EngineArgs from the
    // same names `vllm serve` takes as --kebab-case flags.
    what = "vLLM LLM(...) call";
    const Value model = ArgValue(c, 0, {"model"}, 0);
    if (model.kind == Value::kNone) return Status::Ok();
    if (model.kind != Value::kString) return unknown(model, what);
    argv = {"vllm", "serve", model.text};
    auto add = [&](const std::string& keyword, const Value& v) -> Status {
      if (keyword == "model") return Status::Ok();
      std::string flag = "--" + keyword;
      std::replace(flag.begin(), flag.end(), '_', '-');
      if (v.kind == Value::kBool) {
        if (v.flag) argv.push_back(flag);
      } else if (v.kind == Value::kString || v.kind == Value::kNumber) {
        argv.push_back(flag);
        argv.push_back(v.text);
      } else if (v.kind == Value::kDict || v.kind == Value::kList) {
        // A dict (limit_mm_per_prompt={"image": 2}) is the flag's JSON, as EngineArgs takes
        // the dict itself.
        const Value* bad = nullptr;
        const std::string json = JsonText(v, &bad);
        if (bad != nullptr) return unknown(*bad, what);
        argv.push_back(flag);
        argv.push_back(json);
      } else if (v.kind != Value::kNone) {
        return unknown(v, what);
      }
      return Status::Ok();
    };
    read_keywords();
    if (!opaque.text.empty()) return unknown(opaque, what);
    for (const auto& [keyword, v] : keywords) VRAMFIT_RETURN_IF_ERROR(add(keyword, v));
  } else if ((last == "from_pretrained" || last == "from_quantized") &&
             c.callee.find('.') != std::string::npos &&
             ModelClass(Last(c.callee.substr(0, c.callee.rfind('.'))))) {
    what = fmt::format("{}(...) call", c.callee);
    // transformers names the path pretrained_model_name_or_path, AutoAWQ quant_path
    // (awq/models/auto.py), AutoGPTQ model_name_or_path (auto_gptq/modeling/auto.py).
    const Value model =
        ArgValue(c, 0, {"pretrained_model_name_or_path", "quant_path", "model_name_or_path"}, 0);
    if (model.kind != Value::kString) return unknown(model, what);
    argv = {"transformers", model.text};
    read_keywords();
    if (!opaque.text.empty()) return unknown(opaque, what);
    for (const auto& [keyword, v] : keywords) VRAMFIT_RETURN_IF_ERROR(load_keyword(keyword, v));
    GenerationFlags(c, false, keywords, &argv, &generation_notes);
    if (last == "from_quantized") {
      out->notes.push_back(fmt::format(
          "{}: {}: the quantizer's own loader, read as transformers loading the same "
          "checkpoint", where, c.callee));
    }
  } else if (last == "pipeline" &&
             (c.callee == "pipeline" || c.callee == "transformers.pipeline")) {
    // transformers' pipeline(task, model, ..., device, device_map, torch_dtype/dtype,
    // model_kwargs) (pipelines/__init__.py, 4.57): device_map and the dtype join model_kwargs,
    // which go to the task's Auto class from_pretrained; the generating tasks are planned.
    const Value task = ArgValue(c, 0, {"task"}, 0);
    if (task.kind != Value::kNone &&
        !(task.kind == Value::kString &&
          (task.text == "text-generation" || task.text == "image-text-to-text" ||
           task.text == "text2text-generation"))) {
      return Status::Ok();
    }
    what = "pipeline(...) call";
    const Value model = ArgValue(c, 1, {"model"}, 0);
    if (model.kind == Value::kNone) return Status::Ok();  // the task's default model
    if (model.kind != Value::kString) return unknown(model, what);
    argv = {"transformers", model.text};
    read_keywords();
    if (!opaque.text.empty()) return unknown(opaque, what);
    for (const auto& [keyword, v] : keywords) {
      if (keyword == "task" || keyword == "model" || keyword == "tokenizer" ||
          keyword == "config" || keyword == "processor" || keyword == "framework" ||
          std::find(std::begin(kGenerateKeywords), std::end(kGenerateKeywords), keyword) !=
              std::end(kGenerateKeywords)) {
        continue;
      }
      if (keyword == "model_kwargs" && v.kind == Value::kDict) {
        for (size_t k = 0; k < v.keys.size(); ++k) {
          VRAMFIT_RETURN_IF_ERROR(load_keyword(v.keys[k], v.items[k]));
        }
      } else if (keyword == "device" && (v.kind == Value::kNumber || v.kind == Value::kString)) {
        // The whole model on one device: 0, "cuda", "cuda:1"; -1 and "cpu" are the CPU.
        if (v.text == "-1" || v.text == "cpu") {
          out->notes.push_back(fmt::format("{}: pipeline(device={}) runs on the CPU: not "
                                           "planned", where, v.text));
          return Status::Ok();
        }
        argv.insert(argv.end(), {"--device-map", v.kind == Value::kNumber ? "cuda:" + v.text
                                                 : v.text == "cuda" ? "cuda:0" : v.text});
      } else {
        VRAMFIT_RETURN_IF_ERROR(load_keyword(keyword, v));
      }
    }
    if (task.kind == Value::kString && task.text == "image-text-to-text") {
      generation_notes.push_back(fmt::format(
          "{}: an image-text-to-text pipeline: its images' tokens are not read from the script: "
          "planned as before, the prompt filling the context", where));
    } else {
      GenerationFlags(c, true, keywords, &argv, &generation_notes);
    }
  } else if (c.callee == "os.system" || c.callee == "os.popen" ||
             c.callee.rfind("subprocess.", 0) == 0) {
    const Value v = ArgValue(c, 0, {"args", "command"}, 0);
    std::string text;
    if (v.kind == Value::kString) {
      text = v.text;
    } else if (v.kind == Value::kList) {
      for (const Value& item : v.items) {
        if (item.kind != Value::kString && item.kind != Value::kNumber) {
          // Not an engine command unless its known words say so.
          return Status::Ok();
        }
        text += (text.empty() ? "" : " ") + ShellWord(item.text);
      }
    } else {
      return Status::Ok();
    }
    if (text.rfind("#!", 0) == 0) return Status::Ok();  // never a Python program again
    auto read = ReadDeployScript(text, "command", options_);
    if (!read.ok()) {
      return Status::InvalidArgument(fmt::format("{}: {}", where, read.status().message()));
    }
    for (ScriptInvocation& inv : read->invocations) {
      inv.where = where;
      out->invocations.push_back(std::move(inv));
    }
    return Status::Ok();
  } else {
    return Status::Ok();
  }
  if (!no_memory.empty()) {
    std::string list;
    for (const std::string& k : no_memory) list += (list.empty() ? "" : ", ") + k + "=";
    out->notes.push_back(fmt::format("{}: {}: read, no memory effect: {}", where, c.callee,
                                     list));
  }
  if (!ignored.empty()) {
    std::string list;
    for (const std::string& k : ignored) list += (list.empty() ? "" : ", ") + k + "=";
    out->notes.push_back(fmt::format("{}: {}: not modelled (ignored): {}", where, c.callee,
                                     list));
  }
  out->notes.insert(out->notes.end(), generation_notes.begin(), generation_notes.end());
  ScriptInvocation inv;
  inv.where = where;
  inv.engine = EngineForCommand(argv);
  if (inv.engine == nullptr) return Status::Ok();
  inv.argv = std::move(argv);
  for (const ScriptInvocation& seen : out->invocations) {
    if (seen.argv == inv.argv) {
      out->notes.push_back(fmt::format("{}: the same {} as {} (another branch); checked once",
                                       where, inv.engine->title, seen.where));
      return Status::Ok();
    }
  }
  out->invocations.push_back(std::move(inv));
  return Status::Ok();
}

Result<ScriptRead> Reader::Run() {
  Statements();
  int loads = 0;
  bool vllm = false;
  for (size_t i = 0; i < calls_.size(); ++i) {
    const std::string& callee = calls_[i].callee;
    const size_t dot = callee.rfind('.');
    const std::string last = Last(callee);
    calls_by_callee_[callee].push_back(i);
    if (last == "generate" && dot != std::string::npos) generates_.push_back(i);
    vllm = vllm || last == "LLM";
    if (((last == "from_pretrained" || last == "from_quantized") && dot != std::string::npos &&
         ModelClass(Last(callee.substr(0, dot)))) ||
        callee == "pipeline" || callee == "transformers.pipeline") {
      ++loads;
    }
  }
  one_transformers_load_ = loads == 1 && !vllm;
  ScriptRead out;
  for (const Call& c : calls_) {
    const Status s = Launch(c, &out);
    if (!s.ok()) return s;
    if (out.invocations.size() > kMaxLaunches) {
      return Fail(file_, c.line, fmt::format("more than {} engine launches", kMaxLaunches));
    }
  }
  return out;
}

}  // namespace

bool IsPythonScript(std::string_view text, std::string_view file) {
  if (file.ends_with(".py")) return true;
  const std::string_view first = text.substr(0, text.find('\n'));
  return first.rfind("#!", 0) == 0 && first.find("python") != first.npos;
}

Result<ScriptRead> ReadPythonScript(std::string_view text, std::string_view file,
                                    const ScriptOptions& options) {
  const std::string name = core::Printable(file);
  if (text.size() > kMaxPythonBytes) {
    return Status::InvalidArgument(fmt::format("{}: {} bytes, past the {} MiB a deploy program "
                                               "may have", name, text.size(),
                                               kMaxPythonBytes >> 20));
  }
  auto tokens = Tokenize(text, name);
  if (!tokens.ok()) return tokens.status();
  return Reader(std::move(*tokens), name, options).Run();
}

}  // namespace vramfit
