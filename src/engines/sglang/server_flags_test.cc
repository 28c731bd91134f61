// SGLang's server option lists: sorted, holding every flag vramfit reads; a flag SGLang does
// not have stops a command as SGLang's parser stops it, with the nearest real flags; an
// abbreviation of one option passes, of several is refused; each release by its own list.
#include "engines/sglang/server_flags.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>

#include "engines/sglang/command.h"
#include "engines/sglang/flags.h"
#include "engines/sglang/rules.h"

namespace vramfit::sglang {
namespace {

std::string Error(std::vector<std::string> given, const std::string& version = "") {
  Status s = CheckServerFlags(given, version);
  return s.ok() ? std::string() : s.message();
}

TEST(SglangServerFlags, ListIsSortedAndHoldsTheFlagsVramfitReads) {
  const auto& all = ServerFlags();
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return a.name < b.name;
  }));
  EXPECT_TRUE(std::adjacent_find(all.begin(), all.end(), [](const auto& a, const auto& b) {
                return a.name == b.name;
              }) == all.end());
  for (const ServerFlag& f : all) {
    ASSERT_EQ(f.arity.size(), std::size(kFlagListReleases)) << f.name;
    EXPECT_EQ(f.arity.find_first_not_of("-01?*+"), std::string_view::npos) << f.name;
    EXPECT_NE(f.arity.find_first_not_of('-'), std::string_view::npos) << f.name;
  }
  // Every flag of the plan's table is an option of the newest release, taking a value exactly
  // when the table's flag does.
  for (const FlagSpec& spec : Flags()) {
    const ServerFlag* f = FindServerFlag(spec.name, 1u << 2);
    ASSERT_NE(f, nullptr) << spec.name;
    EXPECT_EQ(f->name, spec.name);
    EXPECT_EQ(ReadingArity(*f) == '0', spec.type_name == nullptr) << spec.name;
  }
}

TEST(SglangServerFlags, UnknownFlagIsAnErrorWithTheNearest) {
  EXPECT_EQ(Error({"--context-length", "--mem-fraction-statc"}),
            "--mem-fraction-statc: SGLang 0.5.5 or 0.5.13 has no such flag (the server stops "
            "with \"unrecognized arguments\"); nearest: --mem-fraction-static, "
            "--lora-eviction-policy, --max-loras-per-batch");
  // vLLM's spelling names SGLang's.
  EXPECT_NE(Error({"--max-model-len=4096"})
                .find("--max-model-len: SGLang 0.5.5 or 0.5.13 has no such flag (the server "
                      "stops with \"unrecognized arguments\") (SGLang spells the nearest "
                      "setting --context-length); nearest: "),
            std::string::npos);
  EXPECT_NE(Error({"-q"}).find("-q: SGLang"), std::string::npos);
  EXPECT_EQ(Error({"--tp", "--mem-frac", "--ep", "--model", "-h", "--chunked-prefill-size"}),
            "");
}

// A release named beyond the newest option list read (0.5.13) may have added the flag.
TEST(SglangServerFlags, UnknownFlagOfALaterReleaseIsNotRefused) {
  EXPECT_TRUE(CheckServerFlags({"--some-new-flag"}, "0.6.0").ok());
  EXPECT_FALSE(CheckServerFlags({"--some-new-flag"}, "0.5.13").ok());
  EXPECT_FALSE(CheckServerFlags({"--some-new-flag"}, "").ok());
}

TEST(SglangServerFlags, AbbreviationOfSeveralIsAmbiguous) {
  // --pp begins only --pp-size at v0.4.10.post2; from v0.5 --pp-max-micro-batch-size too.
  EXPECT_EQ(Error({"--pp"}, "0.4.6"), "");
  EXPECT_EQ(Error({"--pp"}, "0.5.5"),
            "SGLang 0.5.5: ambiguous option: --pp could match "
            "--pp-max-micro-batch-size, --pp-size (the server stops with this error)");
  EXPECT_NE(Error({"--quant"}).find("ambiguous option: --quant could match --quantization, "
                                    "--quantization-param-path"),
            std::string::npos);
}

TEST(SglangServerFlags, EachReleaseByItsList) {
  // --limit-mm-data-per-request came with v0.5.7, --mamba-full-memory-ratio with v0.5.
  EXPECT_NE(Error({"--limit-mm-data-per-request"}, "0.5.5"), "");
  EXPECT_EQ(Error({"--limit-mm-data-per-request"}, "0.5.6"), "");  // between 0.5.5 and 0.5.13
  EXPECT_EQ(Error({"--limit-mm-data-per-request"}, "0.5.13"), "");
  EXPECT_EQ(Error({"--limit-mm-data-per-request"}), "");
  EXPECT_NE(Error({"--mamba-full-memory-ratio"}, "0.4.6.post1"), "");
  EXPECT_EQ(Error({"--mamba-full-memory-ratio"}, "0.5.5"), "");
  EXPECT_NE(Error({"--foo"}, "0.5.6").find("--foo: SGLang 0.5.6 (by the option list of 0.5.5 "
                                           "or 0.5.13) has no such flag"),
            std::string::npos);
  EXPECT_NE(Error({"--tp"}, "not-a-version"), "");
  EXPECT_EQ(FlagListsFor(0), 6u);
  EXPECT_EQ(FlagListsFor(406), 1u);
  EXPECT_EQ(FlagListsFor(410), 1u);
  EXPECT_EQ(FlagListsFor(500), 3u);
  EXPECT_EQ(FlagListsFor(505), 2u);
  EXPECT_EQ(FlagListsFor(510), 6u);
  EXPECT_EQ(FlagListsFor(513), 4u);
  EXPECT_EQ(FlagListsFor(600), 4u);
}

TEST(SglangServerFlags, OptionWordsAsArgparseReadsThem) {
  EXPECT_TRUE(IsOptionWord("--tp"));
  EXPECT_TRUE(IsOptionWord("--no-such"));
  EXPECT_TRUE(IsOptionWord("-q"));
  EXPECT_FALSE(IsOptionWord("-1"));
  EXPECT_FALSE(IsOptionWord("-.5"));
  EXPECT_FALSE(IsOptionWord("-"));
  EXPECT_FALSE(IsOptionWord(""));
  EXPECT_FALSE(IsOptionWord("-x y"));           // a value with a space in it
  EXPECT_TRUE(IsOptionWord("--tp-size=a b"));  // an option, whatever its value
  EXPECT_TRUE(IsOptionWord("-1e5"));
}

// The check names the first unknown flag of a whole command line, as `check` runs it.
TEST(SglangServerFlags, CommandCheck) {
  auto c = ReadLaunchCommand({"python", "-m", "sglang.launch_server", "--model-path", "m",
                              "--enable-flash-attn", "--tp", "2"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  Status s = CheckCommandFlags(*c, "");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--enable-flash-attn: SGLang 0.5.5 or 0.5.13 has no such flag"),
            std::string::npos);
  // The router's own options and `sglang serve --model-type` are not the server parser's.
  auto r = ReadLaunchCommand({"python", "-m", "sglang_router.launch_server", "--model-path", "m",
                              "--router-policy", "cache_aware", "--dp", "2"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(CheckCommandFlags(*r, "").ok());
  EXPECT_EQ(r->unmodelled_flags, (std::vector<std::string>{"--router-policy"}));
  auto t = ReadLaunchCommand({"sglang", "serve", "--model-type", "llm", "--model-path", "m"});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_TRUE(CheckCommandFlags(*t, "").ok());
}

// Hostile words: never a crash, an error or a reading.
TEST(SglangServerFlags, HostileWords) {
  const std::vector<std::string> words = {"",    "-",     "--",   "---", "=",    "--=",
                                          "-=",  "--=x",  "-\x1b", "--\xff", "--tp=", "'",
                                          "--tp-size=", "--json-model-override-args="};
  for (const std::string& w : words) {
    auto c = ReadLaunchCommand({"sglang", "serve", "--model-path", "m", w});
    if (c.ok()) (void)CheckCommandFlags(*c, "");
    (void)Error({w});
  }
  EXPECT_FALSE(ReadLaunchCommand({"sglang", "serve", "--model-path", "m", "--"}).ok());
}

}  // namespace
}  // namespace vramfit::sglang
