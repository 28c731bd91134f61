#include "doctor/text_scan.h"

#include <gtest/gtest.h>

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
}

}  // namespace
}  // namespace vramfit::doctor
