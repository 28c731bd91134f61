// Unit formatting.
#include "core/units.h"

#include <gtest/gtest.h>

#include "core/checked.h"

namespace vramfit::core {
namespace {

TEST(Units, Bytes) {
  EXPECT_EQ(FormatBytes(960), "960 B");
  EXPECT_EQ(FormatBytes(1536), "1.50 KiB");
  EXPECT_EQ(FormatBytes(15231233024ULL), "14.19 GiB");
}

TEST(Units, Counts) {
  EXPECT_EQ(FormatCount(896), "896");
  EXPECT_EQ(FormatCount(7615616512ULL), "7.62B");
  EXPECT_EQ(GroupDigits(7615616512ULL), "7,615,616,512");
  EXPECT_EQ(GroupDigits(12), "12");
}

TEST(Checked, Overflow) {
  uint64_t out = 0;
  EXPECT_FALSE(CheckedMul(uint64_t{1} << 32, uint64_t{1} << 32, &out));
  EXPECT_TRUE(CheckedMul(uint64_t{1} << 31, uint64_t{1} << 32, &out));
  EXPECT_FALSE(CheckedAdd(~uint64_t{0}, 1, &out));
  EXPECT_EQ(CeilDiv(129, 128), 2u);
}

}  // namespace
}  // namespace vramfit::core
