#include "doctor/text_scan.h"

#include <gtest/gtest.h>

#include "core/string_set.h"  // VRAMFIT_HASH_WRAPS

namespace vramfit::doctor {
namespace {

TEST(TextScan, Numbers) {
  size_t end = 0;
  EXPECT_DOUBLE_EQ(*NumberAt("  = -1.05GiB", 0, &end), -1.05);
  EXPECT_EQ(end, 9u);
  EXPECT_DOUBLE_EQ(*NumberAfter("GPU KV cache size: 807,792 tokens", "size:"), 807792);
  EXPECT_DOUBLE_EQ(*NumberAfter("max seq len (29000), (6.66", "len ("), 29000);
  EXPECT_DOUBLE_EQ(*NumberAfter("(1,2,3)", "("), 1);  // a comma list is not a thousands separator
  EXPECT_FALSE(NumberAfter("took GB", "took").has_value());
  EXPECT_FALSE(NumberAfter("no key here", "missing").has_value());
  EXPECT_FALSE(NumberAt("", 0).has_value());
  EXPECT_FALSE(NumberAt("12", 5).has_value());
  // Digit runs beyond a double's range are not numbers.
  EXPECT_FALSE(NumberAt(std::string(400, '9'), 0).has_value());
  EXPECT_DOUBLE_EQ(*NumberAt(std::string(30, '1'), 0), 1.1111111111111111e29);
}

TEST(TextScan, Bytes) {
  EXPECT_DOUBLE_EQ(*BytesAfter("Tried to allocate 18.00 GiB (GPU 0", "allocate"),
                   18.0 * 1073741824.0);
  EXPECT_DOUBLE_EQ(*BytesAfter("of which 43.75 MiB is free", "of which"), 43.75 * 1048576.0);
  EXPECT_DOUBLE_EQ(*BytesAfter("took 14.9888 GB", "took"),
                   14.9888 * 1073741824.0);  // vLLM's GB are GiB
  EXPECT_DOUBLE_EQ(*BytesAfter("buffer of size 96566688256", "size"), 96566688256.0);
  EXPECT_DOUBLE_EQ(*BytesAfter("KV buffer size =   144.00 MiB", "size ="), 144.0 * 1048576.0);
}

TEST(TextScan, AnsiAndCase) {
  EXPECT_EQ(StripAnsi("\x1b[1;31mERROR\x1b[0m x"), "ERROR x");
  EXPECT_EQ(StripAnsi("^[[32mINFO^[[0m y"), "INFO y");
  EXPECT_EQ(StripAnsi("lone \x1b escape"), "lone  escape");
  EXPECT_EQ(StripAnsi("^[ not a code"), "^[ not a code");
  EXPECT_TRUE(HasNoCase("CUDA Out Of Memory", "out of memory"));
  EXPECT_FALSE(HasNoCase("short", "longer needle"));
  // ASCII alone is folded: UTF-8's bytes are compared as they are, '@' is not '`'.
  EXPECT_TRUE(HasNoCase("GPU \xC3\x89TAT", "gpu \xC3\x89tat"));
  EXPECT_FALSE(HasNoCase("GPU \xC3\x89TAT", "gpu \xC3\xA9tat"));
  EXPECT_FALSE(HasNoCase("a@b", "a`b"));
  EXPECT_TRUE(HasNoCase("[Z]", "[z]"));
}

// A literal's length comes from its type: the same answers as the string_view's, on a plain
// view and on a line with its runs, also for a needle that only a prefix of matches.
TEST(TextScan, LiteralNeedles) {
  const std::string_view plain = "ERROR 01-02 [core.py:1] ValueError: x";
  EXPECT_TRUE(Has(plain, "ValueError"));
  EXPECT_FALSE(Has(plain, "ValueErrors"));
  EXPECT_TRUE(Has(plain, ""));
  Bigrams runs;
  runs.Build(plain);
  const LineView view(plain, &runs);
  EXPECT_TRUE(Has(view, "core.py:1]"));
  EXPECT_FALSE(Has(view, "core.py:2]"));
  EXPECT_EQ(view.find("ValueError"), plain.find("ValueError"));
  EXPECT_EQ(view.find("E", 1), plain.find("E", 1));
  const std::string owned(plain);
  EXPECT_TRUE(Has(owned, "01-02"));  // a std::string haystack takes the string_view overload
}

std::string Plain(std::string s) {
  PlainTypography(&s);
  return s;
}

TEST(TextScan, PlainTypography) {
  // A blog's editor: curly quotes around a traceback's path, an en dash for "--", an ellipsis.
  EXPECT_EQ(Plain("File \u201c/x/vllm/worker.py\u201d, line 3, in \u2018f\u2019"),
            "File \"/x/vllm/worker.py\", line 3, in 'f'");
  EXPECT_EQ(Plain("vllm serve m \u2013max-model-len 8192 \u2014 then\u2026"),
            "vllm serve m --max-model-len 8192 - then...");
  // Spaces a web page or a chat client writes, zero-width marks, a byte-order mark.
  EXPECT_EQ(Plain("Tried\u00a0to\u202fallocate\u3000\u200b2.00\ufeff GiB"),
            "Tried to allocate 2.00 GiB");
  EXPECT_EQ(Plain("free \u22121"), "free -1");
  // Other UTF-8, and lead bytes without the rest of a character, are kept as they are.
  EXPECT_EQ(Plain("\u56fe\u7247 \u00e9 \u20ac"), "\u56fe\u7247 \u00e9 \u20ac");
  EXPECT_EQ(Plain("cut \xe2\x80"), "cut \xe2\x80");
  EXPECT_EQ(Plain("\xc2"), "\xc2");
  EXPECT_EQ(Plain("plain ascii"), "plain ascii");
}

}  // namespace
}  // namespace vramfit::doctor

namespace vramfit::doctor {
namespace {

// The pair index never hides a needle the line holds, and it rules out one it cannot hold.
// A 32-bit linear congruential step (Numerical Recipes' constants); it wraps by design.
VRAMFIT_HASH_WRAPS uint32_t NextRandom(uint32_t x) { return x * 1664525u + 1013904223u; }

TEST(TextScan, BytePairsNeverHideANeedle) {
  uint32_t x = 12345;
  for (int round = 0; round < 200; ++round) {
    std::string line;
    for (int i = 0; i < 120; ++i) {
      x = NextRandom(x);
      line += static_cast<char>(x >> 24);
    }
    Bigrams pairs;
    pairs.Build(line);
    const LineView view(line, &pairs);
    for (size_t b = 0; b + 1 < line.size(); b += 7) {
      for (size_t n = 1; n <= 12 && b + n <= line.size(); ++n) {
        EXPECT_TRUE(Has(view, std::string_view(line).substr(b, n)));
      }
    }
  }
  Bigrams pairs;
  pairs.Build("ERROR 01-02 [core.py:1] ValueError");
  const LineView view("ERROR 01-02 [core.py:1] ValueError", &pairs);
  EXPECT_FALSE(Has(view, "Tried to allocate"));
  EXPECT_TRUE(Has(view, "ValueError"));
}

}  // namespace
}  // namespace vramfit::doctor
