// The shell reader on the constructs deploy scripts use and on hostile text: quoting,
// continuations, comments, redirections, here-documents, assignments and expansions; every
// refusal names file:line.
#include "script/shell.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vramfit::script {
namespace {

std::vector<std::vector<std::string>> Commands(std::string_view text,
                                               std::vector<std::string>* notes = nullptr) {
  auto r = ReadShell(text, "t.sh", {}, [](const ShellCommand&) { return true; });
  EXPECT_TRUE(r.ok()) << r.status().message();
  std::vector<std::vector<std::string>> out;
  if (!r.ok()) return out;
  for (const ShellCommand& c : r->commands) {
    std::vector<std::string> words;
    for (const ShellWord& w : c.words) words.push_back(w.text);
    out.push_back(words);
  }
  if (notes) *notes = r->notes;
  return out;
}

std::string Error(std::string_view text) {
  auto r = ReadShell(text, "t.sh", {}, [](const ShellCommand&) { return true; });
  return r.ok() ? std::string() : r.status().message();
}

using Words = std::vector<std::vector<std::string>>;

TEST(Shell, QuotesAndEscapes) {
  EXPECT_EQ(Commands("a 'b c' \"d e\" f\\ g 'h'\"i\"j\n"),
            (Words{{"a", "b c", "d e", "f g", "hij"}}));
  EXPECT_EQ(Commands("echo \"a\\\"b\\$c\\n\"\n"), (Words{{"echo", "a\"b$c\\n"}}));
  EXPECT_EQ(Commands("echo $'a\\tb' ''\n"), (Words{{"echo", "a\tb", ""}}));
}

TEST(Shell, OperatorsAndRedirectionsSplitCommands) {
  EXPECT_EQ(Commands("a 1 && b 2 || c; d | e & f > log 2>&1 < in &> all\n"),
            (Words{{"a", "1"}, {"b", "2"}, {"c"}, {"d"}, {"e"}, {"f"}}));
  EXPECT_EQ(Commands("(cd dir && run x) >> out\n"), (Words{{"cd", "dir"}, {"run", "x"}}));
  EXPECT_EQ(Error("a >\n"), "t.sh:1: a redirection without a target");
}

TEST(Shell, ContinuationsAndComments) {
  EXPECT_EQ(Commands("run a \\\n  --b 1 \\\n  --c # note\nnext\n"),
            (Words{{"run", "a", "--b", "1", "--c"}, {"next"}}));
  // A comment line inside a continued command ends it in a shell; the flags after it are
  // what the author meant to pass, so the reader keeps them and says so.
  std::vector<std::string> notes;
  EXPECT_EQ(Commands("run a \\\n  --b 1 \\\n  # why\n  --c \\\n  > log\nnext\n", &notes),
            (Words{{"run", "a", "--b", "1", "--c"}, {"next"}}));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].rfind("t.sh:3: a comment inside a `\\`-continued command", 0), 0u);
  // `\ # comment`: blanks after the backslash, then a comment.
  EXPECT_EQ(Commands("run --a \\ # must\n  --b\n", &notes), (Words{{"run", "--a", "--b"}}));
  EXPECT_EQ(notes.size(), 1u);
  EXPECT_EQ(Commands("run --a \\  \n  --b\n", &notes), (Words{{"run", "--a", "--b"}}));
  EXPECT_EQ(notes.size(), 1u);
  // A script saved with Windows line endings: every `\` escapes a CR, which a shell reads as
  // the end of the command; read as meant, said once for the file.
  EXPECT_EQ(Commands("run a \\\r\n  --b 1 \\\r\n  --c\r\nnext\r\n", &notes),
            (Words{{"run", "a", "--b", "1", "--c"}, {"next"}}));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].rfind("t.sh:1: Windows line endings (CR LF)", 0), 0u) << notes[0];
  // cmd.exe's `^` continuation is not read as one, but said.
  EXPECT_EQ(Commands("run a ^\r\n  --b 1\r\n", &notes), (Words{{"run", "a", "^"}, {"--b", "1"}}));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].rfind("t.sh:1: `^` at the end of a line is cmd.exe's continuation", 0), 0u)
      << notes[0];
  // A comment after a complete command does not pull the next command in.
  EXPECT_EQ(Commands("run --a # c\n--not-a-flag-of-run\n"),
            (Words{{"run", "--a"}, {"--not-a-flag-of-run"}}));
  EXPECT_EQ(Commands("echo a#b\n"), (Words{{"echo", "a#b"}}));
}

TEST(Shell, VariablesAndDefaults) {
  EXPECT_EQ(Commands("M=/m/x\nP=8000 Q=\"a b\"\nrun $M ${P} \"$Q\" $Q ${U:-d} ${M:+set} ${U-}\n"),
            (Words{{"run", "/m/x", "8000", "a b", "a", "b", "d", "set"}}));
  EXPECT_EQ(Commands("A=\nrun ${A:-x} ${A-y} ${B:=z} $B\n"), (Words{{"run", "x", "z", "z"}}));
  EXPECT_EQ(Commands("export G=0,1\nG=2 run\n"), (Words{{"G=2", "run"}}));
  auto r = ReadShell("X=1\nexport Y=2\nrun\n", "t.sh", {{"Z", "3"}},
                     [](const ShellCommand&) { return true; });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->commands[0].environment, (std::vector<std::string>{"Z=3", "Y=2"}));
}

TEST(Shell, UnknownValuesAreMarkedNotGuessed) {
  auto r = ReadShell("D=$(date)\nrun \"$NOPE\" \"${D}\" \"$1\" `x` $NOPE\n", "t.sh", {},
                     [](const ShellCommand&) { return true; });
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->commands.size(), 1u);
  const auto& w = r->commands[0].words;
  ASSERT_EQ(w.size(), 4u);  // `x` and $NOPE, unquoted, expand to no word: marked on the last
  EXPECT_FALSE(w[0].unknown);
  EXPECT_EQ(w[1].unknown->what, "$NOPE is not set");
  EXPECT_EQ(w[2].unknown->line, 1);
  EXPECT_EQ(w[2].unknown->what.rfind("$(...) is a command substitution", 0), 0u);
  EXPECT_EQ(w[3].unknown->what, "$1 is a parameter set when the script runs");
}

TEST(Shell, HeredocsAndGrammarAreSkipped) {
  EXPECT_EQ(Commands("cat <<EOF > f\nrun $NOT_READ\nEOF\nif [ -x a ]; then\n  run b\nfi\n"),
            (Words{{"cat"}, {"[", "-x", "a", "]"}, {"run", "b"}}));
}

TEST(Shell, HostileScriptsAreRefusedWithFileAndLine) {
  EXPECT_EQ(Error("a\nb 'open\n\n"), "t.sh:2: unterminated ' (opened here)");
  EXPECT_EQ(Error("a \"x\ny\n"), "t.sh:1: unterminated \" (opened here)");
  EXPECT_EQ(Error("a $(b\n"), "t.sh:1: unterminated $( (opened here)");
  EXPECT_EQ(Error("a ${B:-x\n"), "t.sh:1: unterminated ${ (opened here)");
  EXPECT_EQ(Error(std::string("a\nb\0c\n", 6)), "t.sh:2: a NUL byte (a shell script is text)");
  EXPECT_EQ(Error(std::string("x\n") + std::string(1 << 20, 'a') + "\n"),
            "t.sh:2: a line of 1048576 bytes (lines past 262144 bytes are not read)");
  std::string deep = "run ";
  for (int i = 0; i < 10000; ++i) deep += "${A:-";
  EXPECT_EQ(Error(deep + "\n"), "t.sh:1: ${...} nested more than 32 deep");
  // Doubling a variable: refused past the expansion limit, not after exhausting memory.
  std::string doubling = "A=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n";
  for (int i = 0; i < 40; ++i) doubling += "A=$A$A\n";
  EXPECT_NE(Error(doubling).find("past"), std::string::npos);
}

}  // namespace
}  // namespace vramfit::script
