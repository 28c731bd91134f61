// The GPU catalog: every required card, lookups by alias, memory sizes.
#include "vramfit/gpu.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace vramfit {
namespace {

TEST(Gpus, CatalogHasTheCommonCards) {
  auto gpus = GpuCatalog();
  ASSERT_TRUE(gpus.ok()) << gpus.status().ToString();
  for (const char* id :
       {"t4",        "v100-16gb", "a10",       "a10g",       "l4",        "l20",
        "l40",       "l40s",      "rtx-3090",  "rtx-4090",   "rtx-4090d", "rtx-5090",
        "rtx-a6000", "a100-40gb", "a100-80gb", "a800-80gb",  "h20",       "h100-pcie",
        "h100-sxm",  "h200",      "b200",      "gh200-96gb", "mi300x"}) {
    auto g = FindGpu(id);
    ASSERT_TRUE(g.ok()) << id;
    // CUDA's total is always below the marketing size and above 90% of it.
    EXPECT_LT(g->total_bytes, static_cast<uint64_t>(g->marketing_gb) << 30) << id;
    EXPECT_GT(g->total_bytes, (static_cast<uint64_t>(g->marketing_gb) << 30) * 9 / 10) << id;
    if (g->nvidia_smi_mib) {
      EXPECT_LE(g->total_bytes, g->nvidia_smi_mib << 20) << id;
    }
  }
}

TEST(Gpus, FindsByAliasAndDriverName) {
  EXPECT_EQ(FindGpu("4090")->id, "rtx-4090");
  EXPECT_EQ(FindGpu("NVIDIA GeForce RTX 4090")->id, "rtx-4090");
  EXPECT_EQ(FindGpu("A100-80GB")->id, "a100-80gb");
  EXPECT_EQ(FindGpu("rtx_5090")->total_bytes, 33677180928ULL);  // deviceQuery's byte count
  EXPECT_EQ(FindGpu("H200")->total_bytes, 143156ULL << 20);
  EXPECT_TRUE(FindGpu("L40S")->fp8);
  EXPECT_FALSE(FindGpu("a100-40gb")->fp8);
  EXPECT_TRUE(FindGpu("a100-80gb")->also_named.empty());
  EXPECT_TRUE(FindGpu("b200")->fp4);
  auto miss = FindGpu("rtx 4080 ti");
  ASSERT_FALSE(miss.ok());
  EXPECT_NE(miss.status().message().find("nearest: "), std::string::npos);
}

// A name several cards answer to is read as the first card listed for it in
// data/gpus.json, with the others named for the caller (the CLI prints them on stderr);
// the ids, aliases and driver names of one card name no others.
TEST(Gpus, AmbiguousNamesNameTheOtherCards) {
  const std::vector<std::pair<const char*, std::vector<std::string>>> cases = {
      {"a100", {"a100-80gb", "a100-40gb"}},
      {"A100", {"a100-80gb", "a100-40gb"}},
      {"NVIDIA H100", {"h100-sxm", "h100-pcie", "h100-nvl"}},
      {"v100", {"v100-16gb", "v100-32gb"}},
      {"h20", {"h20", "h20-141gb"}}};
  for (const auto& [name, cards] : cases) {
    auto g = FindGpu(name);
    ASSERT_TRUE(g.ok()) << name;
    EXPECT_EQ(g->id, cards.front()) << name;
    EXPECT_EQ(g->also_named, std::vector<std::string>(cards.begin() + 1, cards.end())) << name;
  }
  for (const char* one : {"a100-40gb", "NVIDIA A100-SXM4-80GB", "h100-sxm", "h100 pcie",
                          "h20-96gb", "h200", "v100-32gb", "4090"}) {
    auto g = FindGpu(one);
    ASSERT_TRUE(g.ok()) << one;
    EXPECT_TRUE(g->also_named.empty()) << one;
  }
  EXPECT_EQ(FindGpu("h100 nvl")->marketing_gb, 94);
}

TEST(Gpus, MemorySizes) {
  EXPECT_EQ(*ParseMemorySize("24GiB"), 24ULL << 30);
  EXPECT_EQ(*ParseMemorySize("24 GiB"), 24ULL << 30);
  EXPECT_EQ(*ParseMemorySize("22.5GiB"), (45ULL << 30) / 2);
  EXPECT_EQ(*ParseMemorySize("24576MiB"), 24ULL << 30);
  EXPECT_EQ(*ParseMemorySize("80GB"), 80000000000ULL);
  EXPECT_EQ(*ParseMemorySize("1024"), 1024u);
  EXPECT_EQ(ParseMemorySize("24 apples").status().message(),
            "memory size \"24 apples\": expected a number with a unit (GiB, MiB, GB, MB) or a byte "
            "count, e.g. 24GiB");
  EXPECT_FALSE(ParseMemorySize("").ok());
  EXPECT_FALSE(ParseMemorySize("-5GiB").ok());
  EXPECT_FALSE(ParseMemorySize("1.2.3GiB").ok());
  EXPECT_FALSE(ParseMemorySize("0GiB").ok());
  EXPECT_FALSE(ParseMemorySize("9e99GiB").ok());
  EXPECT_EQ(CustomGpu(24ULL << 30).name, "GPU with 24.00 GiB");
}

}  // namespace
}  // namespace vramfit
