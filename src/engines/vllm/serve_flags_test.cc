// The `vllm serve` flag list: flags vLLM does not have stop a command as vLLM's parser stops
// it, with the nearest real flags; spellings argparse accepts pass.
#include "engines/vllm/serve_flags.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace vramfit::vllm {
namespace {

std::string Error(std::vector<std::string> given, const std::string& version = "") {
  Status s = CheckServeFlags(given, version);
  return s.ok() ? std::string() : s.message();
}

TEST(ServeFlags, ListsAreSortedAndHoldTheFlagsVramfitReads) {
  for (const auto* list : {&ServeFlagsV010(), &ServeFlagsV022()}) {
    EXPECT_TRUE(std::is_sorted(list->begin(), list->end()));
    EXPECT_TRUE(std::binary_search(list->begin(), list->end(), "--max-model-len"));
    EXPECT_TRUE(std::binary_search(list->begin(), list->end(), "-tp"));
  }
}

TEST(ServeFlags, UnknownFlagIsAnErrorWithTheNearest) {
  EXPECT_EQ(Error({"--max-model-len", "--enable-flash-attn"}),
            "--enable-flash-attn: vLLM 0.22 has no such flag (`vllm serve` stops with "
            "\"unrecognized arguments\"); nearest: " +
                Error({"--enable-flash-attn"}).substr(Error({"--enable-flash-attn"}).rfind(
                                                          "nearest: ") + 9));
  EXPECT_NE(Error({"--enable-flash-attn"}).find("nearest: --"), std::string::npos);
  EXPECT_NE(Error({"--max-modle-len"}).find("--max-model-len"), std::string::npos);
}

TEST(ServeFlags, SpellingsArgparseAccepts) {
  EXPECT_EQ(Error({"--max_model_len", "--no-enable-prefix-caching", "-tp", "--max-model",
                   "--compilation-config.mode", "-1"}),
            "");
  EXPECT_NE(Error({"--max"}).find("ambiguous option: --max could match"), std::string::npos);
}

TEST(ServeFlags, OptimizationLevelShorthandInEveryRelease) {
  for (const char* release : {"0.10", "0.22"}) {
    EXPECT_EQ(Error({"-O3", "-O", "-O=2", "-O.mode"}, release), "") << release;
  }
  EXPECT_EQ(Error({"-qawq"}), "");  // argparse: `-q` with its value attached
  EXPECT_NE(Error({"-Z3"}), "");
}

TEST(ServeFlags, PerRelease) {
  // --swap-space left vLLM before 0.22; --kv-cache-memory-bytes came after 0.10.
  EXPECT_EQ(Error({"--swap-space"}, "0.10"), "");
  EXPECT_NE(Error({"--swap-space"}, "0.22"), "");
  EXPECT_EQ(Error({"--swap-space"}, "0.15"), "");
  EXPECT_NE(Error({"--kv-cache-memory-bytes"}, "0.10.1"), "");
  EXPECT_EQ(Error({"--kv-cache-memory-bytes"}, "0.22"), "");
}

}  // namespace
}  // namespace vramfit::vllm
