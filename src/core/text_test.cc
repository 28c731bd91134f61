// Terminal-safe text and UTF-8-aware cuts.
#include "core/text.h"

#include <gtest/gtest.h>

#include "vramfit/suggest.h"

namespace vramfit::core {
namespace {

TEST(Printable, EscapesWhatATerminalWouldActOn) {
  EXPECT_EQ(Printable("model.layers.0.weight"), "model.layers.0.weight");
  EXPECT_EQ(Printable(std::string("a\x1b[2Jb", 6)), "a\\x1b[2Jb");
  EXPECT_EQ(Printable(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(Printable("line\nforged: ok\r"), "line\\nforged: ok\\r");
  EXPECT_EQ(Printable("del\x7f"), "del\\x7f");
  EXPECT_EQ(Printable("tab\tkept"), "tab\tkept");
  // Valid UTF-8 passes; C1 controls and bytes that are not UTF-8 do not.
  EXPECT_EQ(Printable("模型 café"), "模型 café");
  EXPECT_EQ(Printable("\xc2\x9b" "31m"), "\\u009b31m");
  EXPECT_EQ(Printable("caf\xe9"), "caf\\xe9");
  EXPECT_EQ(Printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a UTF-8-encoded surrogate
}

TEST(Printable, IsItsOwnPrintable) {
  const std::string once = Printable(std::string("a\x1b\n\0\xff\\x", 7));
  EXPECT_EQ(Printable(once), once);
}

TEST(Utf8Prefix, NeverEndsInsideACharacter) {
  const std::string s = "ab模型";  // 2 + 3 + 3 bytes
  EXPECT_EQ(Utf8Prefix(s, 100), s);
  EXPECT_EQ(Utf8Prefix(s, 8), s);
  EXPECT_EQ(Utf8Prefix(s, 7), "ab模");
  EXPECT_EQ(Utf8Prefix(s, 6), "ab模");
  EXPECT_EQ(Utf8Prefix(s, 4), "ab");
  EXPECT_EQ(Utf8Prefix(s, 5), "ab模");
  EXPECT_EQ(Utf8Prefix(s, 3), "ab");
  EXPECT_EQ(Utf8Prefix(s, 2), "ab");
  EXPECT_EQ(Utf8Prefix("\xf0\x9f\x98\x80!", 3), "");  // inside a 4-byte emoji
  EXPECT_EQ(Utf8Prefix("caf\xe9 x", 4), "caf\xe9");   // Latin-1 bytes are cut anywhere
  for (size_t n = 0; n <= s.size(); ++n) {
    EXPECT_EQ(FirstInvalidUtf8(Utf8Prefix(s, n)), Utf8Prefix(s, n).size()) << n;
  }
}

TEST(FirstInvalidUtf8, PointsAtTheByte) {
  EXPECT_EQ(FirstInvalidUtf8("abc"), 3u);
  EXPECT_EQ(FirstInvalidUtf8("ab\xff"), 2u);
  EXPECT_EQ(FirstInvalidUtf8("a\xc0\x80"), 1u);      // overlong NUL
  EXPECT_EQ(FirstInvalidUtf8("x\xed\xa0\x80"), 1u);  // surrogate
  EXPECT_EQ(FirstInvalidUtf8("\xe6\xa8"), 0u);       // cut sequence
}

// The engines' command readers: a bounded whole number, and a shell's NAME=value prefix.
TEST(FlagWords, ReadFlagIntAndIsEnvAssignment) {
  EXPECT_EQ(*ReadFlagInt("--n", "42", 0, "a whole number"), 42);
  EXPECT_EQ(*ReadFlagInt("--n", "-1", -1, "x"), -1);
  EXPECT_FALSE(ReadFlagInt("--n", "-1", 0, "x").ok());
  EXPECT_FALSE(ReadFlagInt("--n", "2147483648", 0, "x").ok());
  EXPECT_EQ(ReadFlagInt("--n", "4x", 0, "a whole number").status().message(),
            "--n \"4x\": expected a whole number");
  EXPECT_TRUE(IsEnvAssignment("OLLAMA_NUM_PARALLEL=4"));
  EXPECT_TRUE(IsEnvAssignment("lower_case=1"));
  EXPECT_FALSE(IsEnvAssignment("=x"));
  EXPECT_FALSE(IsEnvAssignment("--num-ctx=4"));
  EXPECT_FALSE(IsEnvAssignment("ollama"));
}

}  // namespace
}  // namespace vramfit::core

namespace vramfit::core {
namespace {

TEST(EditDistance, ComparesOnlyANamesLengthOfAHugeWord) {
  EXPECT_EQ(EditDistance("--max-model-len", "--max-model"), 4u);
  // A 1 MiB word is compared on its first kEditDistanceMaxLength bytes: one matching letter.
  EXPECT_EQ(EditDistance(std::string(1 << 20, 'x'), "x"), kEditDistanceMaxLength - 1);
}

}  // namespace
}  // namespace vramfit::core

namespace vramfit {
namespace {

TEST(NearestName, SuggestsASlipAndNothingFarOff) {
  const std::vector<std::string> flags = {"--gpu", "--gpu-memory", "--max-model-len",
                                          "--max-num-seqs"};
  EXPECT_EQ(NearestName("--max-model-length", flags), "--max-model-len");  // a prefix
  EXPECT_EQ(NearestName("--max-num-seq", flags), "--max-num-seqs");       // one edit
  EXPECT_EQ(NearestName("--gpu-mem", flags), "--gpu-memory");
  EXPECT_EQ(NearestName("--banana", flags), "");
  EXPECT_EQ(NearestName("--gpu", flags), "");  // the name itself is no suggestion
  EXPECT_EQ(NearestName("", flags), "");
  EXPECT_EQ(NearestName(std::string(1 << 16, '-'), flags), "");
}

}  // namespace
}  // namespace vramfit
