// The GPU catalog: every required card, lookups by alias, memory sizes.
#include "vramfit/gpu.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
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
  // The RTX PRO 6000's editions (Workstation, Max-Q, Server) carry the same 96 GB.
  EXPECT_EQ(FindGpu("RTX PRO 6000 Blackwell Max-Q")->id, "rtx-pro-6000");
  EXPECT_EQ(FindGpu("NVIDIA RTX PRO 6000 Blackwell Server Edition")->id, "rtx-pro-6000");
  // A laptop GPU is its own card, with less memory than the desktop one of the same number.
  for (const char* n : {"4090", "4080", "5090", "3070"}) {
    auto desktop = FindGpu(n);
    auto laptop = FindGpu(fmt::format("NVIDIA GeForce RTX {} Laptop GPU", n));
    ASSERT_TRUE(desktop.ok() && laptop.ok()) << n;
    EXPECT_EQ(laptop->id, fmt::format("rtx-{}-laptop", n));
    EXPECT_EQ(FindGpu(fmt::format("rtx {} laptop", n))->id, laptop->id);
    EXPECT_LT(laptop->total_bytes, desktop->total_bytes) << n;
    EXPECT_EQ(laptop->compute_capability, desktop->compute_capability) << n;
    EXPECT_TRUE(laptop->laptop) << n;  // left out of the searches over cards to buy
    EXPECT_FALSE(desktop->laptop) << n;
  }
  EXPECT_EQ(FindGpu("NVIDIA GeForce RTX 4050 Laptop GPU")->total_bytes, 6083706880ULL);
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
      {"h20", {"h20", "h20-141gb"}},
      {"3060", {"rtx-3060-12gb", "rtx-3060-8gb"}},
      {"RTX 3060", {"rtx-3060-12gb", "rtx-3060-8gb"}},
      {"NVIDIA GeForce RTX 3060", {"rtx-3060-12gb", "rtx-3060-8gb"}},
      {"3080", {"rtx-3080-10gb", "rtx-3080-12gb"}},
      {"NVIDIA GeForce RTX 3080", {"rtx-3080-10gb", "rtx-3080-12gb"}},
      {"4060 Ti", {"rtx-4060-ti-8gb", "rtx-4060-ti-16gb"}},
      {"rtx-4060-ti", {"rtx-4060-ti-8gb", "rtx-4060-ti-16gb"}},
      {"3080 laptop", {"rtx-3080-laptop-8gb", "rtx-3080-laptop-16gb"}},
      {"NVIDIA GeForce RTX 3080 Laptop GPU", {"rtx-3080-laptop-8gb", "rtx-3080-laptop-16gb"}}};
  for (const auto& [name, cards] : cases) {
    auto g = FindGpu(name);
    ASSERT_TRUE(g.ok()) << name;
    EXPECT_EQ(g->id, cards.front()) << name;
    EXPECT_EQ(g->also_named, std::vector<std::string>(cards.begin() + 1, cards.end())) << name;
  }
  for (const char* one : {"a100-40gb", "NVIDIA A100-SXM4-80GB", "h100-sxm", "h100 pcie",
                          "h20-96gb", "h200", "v100-32gb", "4090", "3060 Ti",
                          "rtx-3080-ti", "4060ti-16gb", "rtx-3060-8gb"}) {
    auto g = FindGpu(one);
    ASSERT_TRUE(g.ok()) << one;
    EXPECT_TRUE(g->also_named.empty()) << one;
  }
  EXPECT_EQ(FindGpu("h100 nvl")->marketing_gb, 94);
}

// Every card a user names by its id, an alias or the driver's name: each reaches that card
// (alone, or among the variants a shared name lists), and its flags follow its architecture
// (FP8 from Ada / Hopper / Blackwell / CDNA3, FP4 on Blackwell only).
TEST(Gpus, EveryNameOfACardReachesIt) {
  auto gpus = GpuCatalog();
  ASSERT_TRUE(gpus.ok()) << gpus.status().ToString();
  for (const GpuSpec& card : *gpus) {
    std::vector<std::string> names = card.aliases;
    names.push_back(card.id);
    names.push_back(card.name);
    for (const std::string& name : names) {
      auto g = FindGpu(name);
      ASSERT_TRUE(g.ok()) << name;
      // A name several cards share (the H20's driver name) reaches this card among the
      // variants it names.
      const auto& others = g->also_named;
      EXPECT_TRUE(g->id == card.id ||
                  std::find(others.begin(), others.end(), card.id) != others.end())
          << name << " reaches " << g->id;
    }
    const std::string& arch = card.architecture;
    EXPECT_EQ(card.fp8, arch == "Ada" || arch == "Hopper" || arch == "Blackwell" ||
                            arch == "CDNA3" || arch == "CDNA4")
        << card.id;
    EXPECT_EQ(card.fp4, arch == "Blackwell") << card.id;
    EXPECT_LT(card.total_bytes, static_cast<uint64_t>(card.marketing_gb) << 30) << card.id;
    EXPECT_GT(card.total_bytes, (static_cast<uint64_t>(card.marketing_gb) << 30) * 9 / 10)
        << card.id;
    if (card.nvidia_smi_mib) {
      EXPECT_LE(card.total_bytes, card.nvidia_smi_mib << 20) << card.id;
    }
    const std::vector<std::string> levels = {"direct", "weak", "inferred", "derived"};
    EXPECT_NE(std::find(levels.begin(), levels.end(), card.confidence), levels.end())
        << card.id << ": " << card.confidence;
  }
}

// The cards users commonly serve models on at home and in small labs, by the names they type,
// with the totals their sources print (MiB as CUDA reports them).
TEST(Gpus, ConsumerAndWorkstationCards) {
  struct Case {
    const char* name;
    const char* id;
    uint64_t mib;
    const char* cc;
  };
  for (const Case& c : std::vector<Case>{
           {"rtx-3060-ti", "rtx-3060-ti", 7844, "8.6"},
           {"3070", "rtx-3070", 7967, "8.6"},
           {"rtx3080ti", "rtx-3080-ti", 11911, "8.6"},
           {"3080-12gb", "rtx-3080-12gb", 11911, "8.6"},
           {"rtx-3060-12gb", "rtx-3060-12gb", 11911, "8.6"},
           {"4060ti-16gb", "rtx-4060-ti-16gb", 15923, "8.9"},
           {"NVIDIA GeForce RTX 4070", "rtx-4070", 11873, "8.9"},
           {"NVIDIA GeForce RTX 4070 SUPER", "rtx-4070-super", 11873, "8.9"},
           {"4070ti", "rtx-4070-ti", 12011, "8.9"},
           {"NVIDIA GeForce RTX 4070 Ti SUPER", "rtx-4070-ti-super", 15974, "8.9"},
           {"rtx-4080", "rtx-4080", 16049, "8.9"},
           {"rtx 4080 super", "rtx-4080-super", 15974, "8.9"},
           {"5070", "rtx-5070", 11774, "12.0"},
           {"rtx5080", "rtx-5080", 15841, "12.0"},
           {"NVIDIA RTX A4000", "rtx-a4000", 15985, "8.6"},
           {"a4500", "rtx-a4500", 20079, "8.6"},
           {"NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada", 45496, "8.9"},
           {"NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000", 97290, "12.0"},
           {"rtx pro 6000", "rtx-pro-6000", 97290, "12.0"},
           {"A40", "a40", 45416, "8.6"},
           {"a30", "a30", 24064, "8.0"},
           {"mi250x", "mi250x", 65516, "gfx90a"},
           {"MI325X", "mi325x", 262124, "gfx942"},
           {"AMD Radeon RX 7900 XTX", "rx-7900-xtx", 24556, "gfx1100"},
           {"7900xt", "rx-7900-xt", 20460, "gfx1100"}}) {
    auto g = FindGpu(c.name);
    ASSERT_TRUE(g.ok()) << c.name << ": " << g.status().ToString();
    EXPECT_EQ(g->id, c.id) << c.name;
    EXPECT_EQ(g->total_bytes, c.mib << 20) << c.name;
    EXPECT_EQ(g->compute_capability, c.cc) << c.name;
  }
  EXPECT_EQ(FindGpu("rx-7900-xtx")->vendor, "amd");
  EXPECT_TRUE(FindGpu("mi325x")->fp8);
  EXPECT_FALSE(FindGpu("3070")->fp8);
  EXPECT_TRUE(FindGpu("4060ti-8gb")->fp8);
  EXPECT_TRUE(FindGpu("rtx-pro-6000")->fp4);
  EXPECT_FALSE(FindGpu("rtx-6000-ada")->fp4);
  // Streaming multiprocessors: every NVIDIA card has its count, AMD's none.
  EXPECT_EQ(FindGpu("h100-sxm")->sm_count, 132);
  EXPECT_EQ(FindGpu("h100-pcie")->sm_count, 114);
  EXPECT_EQ(FindGpu("rtx-3090")->sm_count, 82);
  EXPECT_EQ(FindGpu("mi300x")->sm_count, 0);
  for (const GpuSpec& g : *GpuCatalog()) {
    if (g.vendor == "nvidia") EXPECT_GT(g.sm_count, 0) << g.id;
  }
  // "rtx 6000" alone is a Turing Quadro, an Ada card or a Blackwell card: not guessed.
  EXPECT_FALSE(FindGpu("rtx 6000").ok());
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
