// The shell reader (see shell.h): one pass over the text, a command at a time, so that each
// command expands with the variables the lines before it set. Quoting and expansion follow
// POSIX sh (XCU 2.2 quoting, 2.6 word expansions, 2.7 redirection) as bash runs them.
#include "script/shell.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "core/text.h"

namespace vramfit::script {
namespace {

constexpr size_t kMaxLineBytes = 256u << 10;

bool IsNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
bool IsValidName(std::string_view s) {
  return !s.empty() && IsNameStart(s[0]) && std::all_of(s.begin(), s.end(), IsNameChar);
}

// Words a shell reads as grammar at the start of a command, not as the command.
constexpr std::string_view kReserved[] = {"if", "then", "else", "elif", "fi", "do", "done",
                                          "while", "until", "!", "{", "}", "esac"};

// Commands whose NAME=value arguments are assignments.
constexpr std::string_view kDeclarations[] = {"export", "readonly", "declare", "typeset",
                                              "local"};

struct Var {
  std::string value;
  bool exported = false;
  std::optional<Unknown> unknown;
  size_t order = 0;  // when first exported
};

// A word being built: its bytes, which of them came from an unquoted expansion (field
// splitting applies to those), whether any quoting was seen, the first unknown expansion.
struct Built {
  std::string text;
  std::vector<bool> split;
  bool quoted = false;
  std::optional<Unknown> unknown;

  void Add(std::string_view s, bool splittable) {
    text.append(s);
    split.insert(split.end(), s.size(), splittable);
  }
  void Mark(Unknown u) {
    if (!unknown) unknown = std::move(u);
  }
  void Merge(const Built& b, bool splittable) {
    text += b.text;
    for (bool f : b.split) split.push_back(f && splittable);
    quoted = quoted || b.quoted;
    if (b.unknown) Mark(*b.unknown);
  }
};

enum class Ctx { kTop, kBrace };

class Reader {
 public:
  Reader(std::string_view text, std::string_view file, const KeepCommand& keep)
      : s_(text), file_(core::Printable(file)), keep_(keep) {}

  Status Run(const std::vector<std::pair<std::string, std::string>>& environment,
             ShellRead* out);

 private:
  Status Fail(int line, const std::string& what) const {
    return Status::InvalidArgument(fmt::format("{}:{}: {}", file_, line, what));
  }
  bool Eof() const { return i_ >= s_.size(); }
  char Peek(size_t k = 0) const { return i_ + k < s_.size() ? s_[i_ + k] : '\0'; }
  void Advance() {
    if (s_[i_] == '\n') ++line_;
    ++i_;
  }
  void Note(int line, const std::string& what) {
    out_->notes.push_back(fmt::format("{}:{}: {}", file_, line, what));
  }

  Status CheckLines() const;
  bool NextLineIsFlag() const;
  Status ReadWord(std::vector<ShellWord>* words);
  Status ReadBody(Built* b, Ctx ctx, int depth);
  // A character of a word that is not a quote or an escape: an expansion, a command
  // substitution or itself; then the word's size is checked.
  Status ReadUnit(Built* b, bool quoted, int depth, int line);
  Status ReadDouble(Built* b, int depth);
  Status ReadDollar(Built* b, bool quoted, int depth);
  Status ReadBraced(Built* b, bool quoted, int depth, int line);
  Status SkipSubstitution(Built* b, int line);
  Status ReadRedirection();
  Status SkipHeredocs();
  Status Emit(const std::string& text, bool splittable, Built* b);
  Status Finish(std::vector<ShellWord> words);
  void Set(const std::string& name, const std::string& value, std::optional<Unknown> unknown,
           bool exported);

  std::string_view s_;
  std::string file_;
  const KeepCommand& keep_;
  size_t i_ = 0;
  int line_ = 1;
  bool continued_ = false;  // the current command crossed a `\` continuation
  bool crlf_noted_ = false;  // a `\` before a Windows line ending was said once
  bool caret_noted_ = false;  // a cmd.exe `^` continuation was said once
  std::map<std::string, Var> vars_;
  size_t exports_ = 0;
  uint64_t expanded_ = 0;
  struct Heredoc {
    std::string delimiter;
    bool strip_tabs = false;
    int line = 0;
  };
  std::vector<Heredoc> heredocs_;
  ShellRead* out_ = nullptr;
};

Status Reader::CheckLines() const {
  if (s_.size() > kMaxScriptBytes) {
    return Status::InvalidArgument(
        fmt::format("{}: {} bytes: scripts past {} bytes are not read", file_, s_.size(),
                    kMaxScriptBytes));
  }
  int line = 1;
  size_t start = 0;
  for (size_t k = 0; k <= s_.size(); ++k) {
    if (k < s_.size() && s_[k] == '\0') return Fail(line, "a NUL byte (a shell script is text)");
    if (k == s_.size() || s_[k] == '\n') {
      if (k - start > kMaxLineBytes) {
        return Fail(line, fmt::format("a line of {} bytes (lines past {} bytes are not read)",
                                      k - start, kMaxLineBytes));
      }
      ++line;
      start = k + 1;
    }
  }
  return Status::Ok();
}

void Reader::Set(const std::string& name, const std::string& value,
                 std::optional<Unknown> unknown, bool exported) {
  Var& v = vars_[name];
  v.value = value;
  v.unknown = std::move(unknown);
  if (exported && !v.exported) {
    v.exported = true;
    v.order = exports_++;
  }
}

// After a comment that ends a `\`-continued command: whether the next line that is not a
// comment starts with a flag, i.e. the author meant the command to go on.
bool Reader::NextLineIsFlag() const {
  size_t j = i_;
  while (j < s_.size()) {
    if (s_[j] == '\n') ++j;
    while (j < s_.size() && IsBlank(s_[j])) ++j;
    if (j < s_.size() && s_[j] == '#') {
      while (j < s_.size() && s_[j] != '\n') ++j;
      continue;
    }
    return j < s_.size() && s_[j] == '-';
  }
  return false;
}

Status Reader::Emit(const std::string& text, bool splittable, Built* b) {
  expanded_ += text.size();
  if (expanded_ > kMaxExpandedBytes) {
    return Fail(line_, fmt::format("expansions pass {} bytes in all", kMaxExpandedBytes));
  }
  b->Add(text, splittable);
  return Status::Ok();
}

Status Reader::SkipSubstitution(Built* b, int line) {
  // At the opening ` or (; the loop counts the ( itself.
  const bool backquote = Peek() == '`';
  if (backquote) Advance();
  int depth = 0;
  while (true) {
    if (Eof()) {
      return Fail(line, backquote ? "unterminated ` (opened here)"
                                  : "unterminated $( (opened here)");
    }
    const char c = Peek();
    if (c == '\\') {
      Advance();
      if (!Eof()) Advance();
      continue;
    }
    if (backquote) {
      Advance();
      if (c == '`') break;
      continue;
    }
    if (c == '\'' || c == '"') {
      Advance();
      while (!Eof() && Peek() != c) {
        if (c == '"' && Peek() == '\\') Advance();
        if (!Eof()) Advance();
      }
      if (Eof()) return Fail(line, "unterminated $( (opened here)");
      Advance();
      continue;
    }
    Advance();
    if (c == '(') ++depth;
    if (c == ')' && --depth == 0) break;
  }
  b->Mark({line, backquote ? "`...` is a command substitution (its output is known only when "
                             "the script runs)"
                           : "$(...) is a command substitution (its output is known only when "
                             "the script runs)"});
  return Status::Ok();
}

Status Reader::ReadBraced(Built* b, bool quoted, int depth, int line) {
  if (depth > kMaxNesting) return Fail(line, fmt::format("${{...}} nested more than {} deep",
                                                         kMaxNesting));
  bool length = false;
  if (Peek() == '#' && Peek(1) != '}') {
    length = true;
    Advance();
  }
  std::string name;
  if (IsNameStart(Peek())) {
    while (IsNameChar(Peek())) {
      name += Peek();
      Advance();
    }
  } else if (std::isdigit(static_cast<unsigned char>(Peek()))) {
    while (std::isdigit(static_cast<unsigned char>(Peek()))) {
      name += Peek();
      Advance();
    }
  } else if (Peek() != '\0' && std::string_view("@*#?$!-").find(Peek()) != std::string::npos) {
    name += Peek();
    Advance();
  }
  if (name.empty()) return Fail(line, "bad substitution: expected a name after ${");
  const bool special = !IsNameStart(name[0]);
  auto it = special ? vars_.end() : vars_.find(name);
  const bool is_set = it != vars_.end();
  const std::optional<Unknown> var_unknown =
      special ? std::optional<Unknown>(
                    Unknown{line, fmt::format("${} is a parameter set when the script runs", name)})
              : is_set ? it->second.unknown : std::nullopt;
  const std::string value = is_set ? it->second.value : "";
  auto emit_value = [&]() -> Status {
    if (var_unknown) {
      b->Mark(*var_unknown);
      return Status::Ok();
    }
    if (!is_set) {
      b->Mark({line, fmt::format("${} is not set", name)});
      return Status::Ok();
    }
    return Emit(length ? std::to_string(value.size()) : value, !quoted, b);
  };
  if (Peek() == '}') {
    Advance();
    return emit_value();
  }
  if (length) return Fail(line, fmt::format("bad substitution: ${{#{}{}", name, Peek()));
  const bool colon = Peek() == ':';
  if (colon) Advance();
  const char op = Peek();
  const bool known_op = op != '\0' && std::string_view("-=+?").find(op) != std::string::npos;
  if (known_op) Advance();
  Built arg;
  VRAMFIT_RETURN_IF_ERROR(ReadBody(&arg, Ctx::kBrace, depth));
  if (Peek() != '}') return Fail(line, "unterminated ${ (opened here)");
  Advance();
  if (!known_op) {
    b->Mark({line, fmt::format("${{{}{}...}}: only ${{NAME}}, ${{NAME:-word}}, ${{NAME:=word}}, "
                               "${{NAME:+word}} and ${{NAME:?word}} are read",
                               name, colon ? ":" : std::string(1, op))});
    return Status::Ok();
  }
  if (var_unknown && op != '+') {
    b->Mark(*var_unknown);
    return Status::Ok();
  }
  const bool nonempty = is_set && !value.empty();
  const bool use_word = op == '+' ? (colon ? nonempty : is_set) : (colon ? !nonempty : !is_set);
  if (op == '+') {
    if (use_word) b->Merge(arg, !quoted);
    return Status::Ok();
  }
  if (!use_word) return emit_value();
  if (op == '?') {
    b->Mark({line, fmt::format("${} is not set (${{{}{}?}} stops the script)", name, name,
                               colon ? ":" : "")});
    return Status::Ok();
  }
  if (op == '=' && !special) Set(name, arg.text, arg.unknown, false);
  expanded_ += arg.text.size();
  b->Merge(arg, !quoted);
  return Status::Ok();
}

Status Reader::ReadDollar(Built* b, bool quoted, int depth) {
  const int line = line_;
  const char n = Peek(1);
  if (n == '{') {
    Advance();
    Advance();
    return ReadBraced(b, quoted, depth + 1, line);
  }
  if (n == '(') {
    Advance();
    return SkipSubstitution(b, line);
  }
  if (n == '\'' && !quoted) {  // $'...': ANSI-C quoting
    Advance();
    Advance();
    b->quoted = true;
    while (true) {
      if (Eof()) return Fail(line, "unterminated $' (opened here)");
      char c = Peek();
      Advance();
      if (c == '\'') break;
      if (c == '\\' && !Eof()) {
        const char e = Peek();
        Advance();
        c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
      }
      b->Add(std::string_view(&c, 1), false);
    }
    return Status::Ok();
  }
  if (n == '"' && !quoted) {  // $"...": a double-quoted string
    Advance();
    return Status::Ok();
  }
  if (IsNameStart(n)) {
    Advance();
    std::string name;
    while (IsNameChar(Peek())) {
      name += Peek();
      Advance();
    }
    auto it = vars_.find(name);
    if (it == vars_.end()) {
      b->Mark({line, fmt::format("${} is not set", name)});
      return Status::Ok();
    }
    if (it->second.unknown) {
      b->Mark(*it->second.unknown);
      return Status::Ok();
    }
    return Emit(it->second.value, !quoted, b);
  }
  if (n != '\0' && (std::isdigit(static_cast<unsigned char>(n)) ||
                    std::string_view("@*#?$!-").find(n) != std::string::npos)) {
    Advance();
    Advance();
    b->Mark({line, fmt::format("${} is a parameter set when the script runs", n)});
    return Status::Ok();
  }
  Advance();
  b->Add("$", false);
  return Status::Ok();
}

Status Reader::ReadUnit(Built* b, bool quoted, int depth, int line) {
  const char c = Peek();
  if (c == '$') {
    VRAMFIT_RETURN_IF_ERROR(ReadDollar(b, quoted, depth));
  } else if (c == '`') {
    VRAMFIT_RETURN_IF_ERROR(SkipSubstitution(b, line_));
  } else {
    b->Add(std::string_view(&c, 1), false);
    Advance();
  }
  if (b->text.size() > kMaxWordBytes) {
    return Fail(line, fmt::format("a word past {} bytes", kMaxWordBytes));
  }
  return Status::Ok();
}

Status Reader::ReadDouble(Built* b, int depth) {
  const int line = line_;
  Advance();
  b->quoted = true;
  while (true) {
    if (Eof()) return Fail(line, "unterminated \" (opened here)");
    const char c = Peek();
    if (c == '"') {
      Advance();
      return Status::Ok();
    }
    if (c == '\\') {
      const char n = Peek(1);
      Advance();
      if (n == '\n') {
        Advance();
      } else if (n != '\0' && std::string_view("$`\"\\").find(n) != std::string::npos) {
        b->Add(std::string_view(&n, 1), false);
        Advance();
      } else {
        b->Add("\\", false);
      }
      continue;
    }
    VRAMFIT_RETURN_IF_ERROR(ReadUnit(b, true, depth, line));
  }
}

Status Reader::ReadBody(Built* b, Ctx ctx, int depth) {
  const int line = line_;
  while (!Eof()) {
    const char c = Peek();
    if (ctx == Ctx::kTop && (IsBlank(c) || c == '\n' ||
                             std::string_view(";&|()<>").find(c) != std::string::npos)) {
      break;
    }
    if (ctx == Ctx::kBrace && c == '}') break;
    if (c == '\\') {
      Advance();
      if (Eof()) {
        b->Add("\\", false);
      } else if (Peek() == '\n') {
        Advance();
      } else {
        const char e = Peek();
        b->Add(std::string_view(&e, 1), false);
        b->quoted = true;
        Advance();
      }
    } else if (c == '\'') {
      const int open = line_;
      Advance();
      const size_t start = i_;
      while (!Eof() && Peek() != '\'') Advance();
      if (Eof()) return Fail(open, "unterminated ' (opened here)");
      b->Add(s_.substr(start, i_ - start), false);
      b->quoted = true;
      Advance();
    } else if (c == '"') {
      VRAMFIT_RETURN_IF_ERROR(ReadDouble(b, depth));
    } else {
      VRAMFIT_RETURN_IF_ERROR(ReadUnit(b, false, depth, line));
    }
    if (b->text.size() > kMaxWordBytes) {
      return Fail(line, fmt::format("a word past {} bytes", kMaxWordBytes));
    }
  }
  return Status::Ok();
}

Status Reader::ReadWord(std::vector<ShellWord>* words) {
  const int line = line_;
  // NAME= at the start: an assignment (a prefix of the command while only assignments precede
  // it, and an argument of export/readonly/...); its value is not split into fields.
  size_t j = i_;
  while (j < s_.size() && IsNameChar(s_[j])) ++j;
  const bool assign_shape = IsNameStart(Peek()) && j < s_.size() && s_[j] == '=';
  bool prefix = std::all_of(words->begin(), words->end(),
                            [](const ShellWord& w) { return w.assignment; });
  const bool declaration =
      !words->empty() && !words->front().assignment &&
      std::find(std::begin(kDeclarations), std::end(kDeclarations), words->front().text) !=
          std::end(kDeclarations);
  Built b;
  if (assign_shape && (prefix || declaration)) {
    const std::string name(s_.substr(i_, j - i_));
    while (i_ <= j) Advance();
    b.Add(name + "=", false);
    if (Peek() == '(') {  // NAME=(...): a bash array, skipped as a whole
      Built skip;
      VRAMFIT_RETURN_IF_ERROR(SkipSubstitution(&skip, line));
      b.Mark({line, fmt::format("${} is an array (arrays are not read)", name)});
    }
    VRAMFIT_RETURN_IF_ERROR(ReadBody(&b, Ctx::kTop, 0));
    words->push_back({std::move(b.text), line, prefix, std::move(b.unknown)});
    return Status::Ok();
  }
  VRAMFIT_RETURN_IF_ERROR(ReadBody(&b, Ctx::kTop, 0));
  // Field splitting: unquoted expansions split on blanks; an unquoted empty word vanishes.
  std::string field;
  bool any = b.quoted, has_field = false;
  for (size_t k = 0; k < b.text.size(); ++k) {
    const char c = b.text[k];
    if (b.split[k] && (c == ' ' || c == '\t' || c == '\n')) {
      if (has_field || !field.empty()) {
        words->push_back({std::move(field), line, false, b.unknown});
        field.clear();
      }
      has_field = false;
      any = false;
      continue;
    }
    field += c;
    has_field = true;
  }
  if (has_field || any || (b.unknown && words->empty())) {
    words->push_back({std::move(field), line, false, b.unknown});
  } else if (b.unknown && !words->empty() && !words->back().unknown) {
    words->back().unknown = b.unknown;  // an unknown that expanded to nothing still counts
  }
  return Status::Ok();
}

Status Reader::ReadRedirection() {
  const int line = line_;
  bool heredoc = false, strip_tabs = false;
  if (Peek() == '&') {  // &> and &>>
    Advance();
    Advance();
    if (Peek() == '>') Advance();
  } else if (Peek() == '<') {
    Advance();
    if (Peek() == '<') {
      Advance();
      if (Peek() == '<') {
        Advance();  // <<< here-string
      } else {
        heredoc = true;
        if (Peek() == '-') {
          strip_tabs = true;
          Advance();
        }
      }
    } else if (Peek() == '&' || Peek() == '>') {
      Advance();
    }
  } else {
    Advance();
    if (Peek() == '>' || Peek() == '&' || Peek() == '|') Advance();
  }
  while (!Eof() && IsBlank(Peek())) Advance();
  if (Eof() || Peek() == '\n' || std::string_view(";&|()<>").find(Peek()) != std::string::npos) {
    return Fail(line, "a redirection without a target");
  }
  Built target;
  VRAMFIT_RETURN_IF_ERROR(ReadBody(&target, Ctx::kTop, 0));
  if (heredoc) heredocs_.push_back({target.text, strip_tabs, line});
  return Status::Ok();
}

Status Reader::SkipHeredocs() {
  for (const Heredoc& h : heredocs_) {
    bool found = false;
    while (!Eof() && !found) {
      const size_t start = i_;
      while (!Eof() && Peek() != '\n') Advance();
      std::string_view l = s_.substr(start, i_ - start);
      if (!Eof()) Advance();
      if (h.strip_tabs) {
        while (!l.empty() && l.front() == '\t') l.remove_prefix(1);
      }
      if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
      found = l == h.delimiter;
    }
    if (!found) {
      Note(h.line, fmt::format("the here-document runs to the end of the file (no line "
                               "\"{}\")", core::Printable(h.delimiter)));
    }
  }
  heredocs_.clear();
  return Status::Ok();
}

Status Reader::Finish(std::vector<ShellWord> words) {
  continued_ = false;
  size_t first = 0;
  while (first < words.size() && !words[first].assignment &&
         std::find(std::begin(kReserved), std::end(kReserved), words[first].text) !=
             std::end(kReserved)) {
    ++first;
  }
  words.erase(words.begin(), words.begin() + static_cast<long>(first));
  if (words.empty()) return Status::Ok();
  size_t k = 0;
  while (k < words.size() && words[k].assignment) ++k;
  auto assign = [&](const ShellWord& w, bool exported) {
    const size_t eq = w.text.find('=');
    const std::string name = w.text.substr(0, eq);
    auto it = vars_.find(name);
    Set(name, w.text.substr(eq + 1), w.unknown,
        exported || (it != vars_.end() && it->second.exported));
  };
  if (k == words.size()) {
    for (const ShellWord& w : words) assign(w, false);
    return Status::Ok();
  }
  const std::string& verb = words[k].text;
  if (std::find(std::begin(kDeclarations), std::end(kDeclarations), verb) !=
      std::end(kDeclarations)) {
    bool exported = verb == "export";
    for (size_t a = k + 1; a < words.size(); ++a) {
      const std::string& t = words[a].text;
      if (t.rfind('-', 0) == 0) {
        exported = exported || (verb != "export" && t.find('x') != std::string::npos);
        continue;
      }
      const size_t eq = t.find('=');
      if (eq != std::string::npos && IsValidName(std::string_view(t).substr(0, eq))) {
        assign(words[a], exported);
      } else if (exported && IsValidName(t) && vars_.count(t) && !vars_[t].exported) {
        vars_[t].exported = true;
        vars_[t].order = exports_++;
      }
    }
    if (exports_ > kMaxExported) {
      return Fail(words[k].line, fmt::format("more than {} exported variables", kMaxExported));
    }
    return Status::Ok();
  }
  if (verb == "unset") {
    for (size_t a = k + 1; a < words.size(); ++a) vars_.erase(words[a].text);
    return Status::Ok();
  }
  ShellCommand cmd;
  cmd.line = words.front().line;
  cmd.words = std::move(words);
  if (!keep_ || !keep_(cmd)) return Status::Ok();
  if (out_->commands.size() >= kMaxKept) {
    return Fail(cmd.line, fmt::format("more than {} commands to check", kMaxKept));
  }
  std::vector<std::pair<size_t, std::string>> env;
  for (const auto& [name, v] : vars_) {
    if (v.exported && !v.unknown) env.emplace_back(v.order, name + "=" + v.value);
  }
  std::sort(env.begin(), env.end());
  for (auto& e : env) cmd.environment.push_back(std::move(e.second));
  out_->commands.push_back(std::move(cmd));
  return Status::Ok();
}

Status Reader::Run(const std::vector<std::pair<std::string, std::string>>& environment,
                   ShellRead* out) {
  out_ = out;
  VRAMFIT_RETURN_IF_ERROR(CheckLines());
  for (const auto& [name, value] : environment) Set(name, value, std::nullopt, true);
  std::vector<ShellWord> words;
  while (!Eof()) {
    const char c = Peek();
    if (IsBlank(c)) {
      Advance();
      continue;
    }
    if (c == '\\' && Peek(1) == '\n') {
      Advance();
      Advance();
      continued_ = true;
      continue;
    }
    if (c == '\\' && IsBlank(Peek(1))) {
      // `\` then blanks before the end of the line or a comment: the continuation the author
      // meant (a shell would read an escaped blank and end the command at the newline).
      size_t j = i_ + 1;
      while (j < s_.size() && IsBlank(s_[j])) ++j;
      if (j == s_.size() || s_[j] == '\n' || s_[j] == '#') {
        const bool crlf = j == i_ + 2 && s_[i_ + 1] == '\r' && j < s_.size() && s_[j] == '\n';
        if (crlf && !crlf_noted_) {
          crlf_noted_ = true;
          Note(line_, "Windows line endings (CR LF): a shell reads `\\` as escaping the CR "
                      "and ends the command at each such line; read on as the script means "
                      "(dos2unix converts the file)");
        } else if (!crlf && (j == s_.size() || s_[j] == '\n')) {
          // Before a comment, the comment says it.
          Note(line_, "blanks after a `\\` continuation: a shell ends the command at this "
                      "line; read on as the script means");
        }
        while (i_ < j) Advance();
        if (!Eof() && Peek() == '\n') Advance();
        continued_ = true;
        continue;
      }
    }
    if (c == '\n') {
      if (!words.empty() && words.back().text == "^" && !caret_noted_) {
        // cmd.exe's continuation, pasted from a Windows guide: not a shell's.
        caret_noted_ = true;
        Note(line_, "`^` at the end of a line is cmd.exe's continuation; this is read as a "
                    "shell script, where `\\` continues a line");
      }
      Advance();
      VRAMFIT_RETURN_IF_ERROR(SkipHeredocs());
      VRAMFIT_RETURN_IF_ERROR(Finish(std::move(words)));
      words.clear();
      continue;
    }
    if (c == '#') {
      const int line = line_;
      while (!Eof() && Peek() != '\n') Advance();
      if (continued_ && !words.empty() && NextLineIsFlag()) {
        Note(line, "a comment inside a `\\`-continued command ends the command in a shell "
                   "(the next line would run on its own); read as one command, as the script "
                   "means");
        Advance();
      }
      continue;
    }
    if ((c == '&' && Peek(1) != '>') || std::string_view(";|()").find(c) != std::string::npos) {
      Advance();
      if ((c == '&' || c == '|' || c == ';') && Peek() == c) {
        Advance();
      } else if (c == '|' && Peek() == '&') {
        Advance();
      }
      VRAMFIT_RETURN_IF_ERROR(Finish(std::move(words)));
      words.clear();
      continue;
    }
    size_t j = i_;
    while (j < s_.size() && std::isdigit(static_cast<unsigned char>(s_[j]))) ++j;
    if ((j < s_.size() && (s_[j] == '<' || s_[j] == '>')) || (c == '&' && Peek(1) == '>')) {
      while (i_ < j) Advance();
      VRAMFIT_RETURN_IF_ERROR(ReadRedirection());
      continue;
    }
    VRAMFIT_RETURN_IF_ERROR(ReadWord(&words));
  }
  VRAMFIT_RETURN_IF_ERROR(SkipHeredocs());
  VRAMFIT_RETURN_IF_ERROR(Finish(std::move(words)));
  for (const auto& [name, v] : vars_) {
    if (!v.unknown) out->variables.emplace_back(name, v.value);
  }
  return Status::Ok();
}

}  // namespace

Result<ShellRead> ReadShell(std::string_view text, std::string_view file,
                            const std::vector<std::pair<std::string, std::string>>& environment,
                            const KeepCommand& keep) {
  ShellRead out;
  Reader reader(text, file, keep);
  VRAMFIT_RETURN_IF_ERROR(reader.Run(environment, &out));
  return out;
}

}  // namespace vramfit::script
