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

// A release named beyond the newest whose flags were read (0.22.x) may have added the flag: it is
// not refused (the command parser lists it as not modelled). Without a release the 0.22 list
// refuses it and says how to name a later release; a 0.22 patch release is still read.
TEST(ServeFlags, UnknownFlagOfALaterReleaseIsNotRefused) {
  EXPECT_TRUE(vllm::CheckServeFlags({"--some-new-flag"}, "0.27.1").ok());
  EXPECT_FALSE(vllm::CheckServeFlags({"--some-new-flag"}, "0.22.1").ok());
  EXPECT_NE(Error({"--some-new-flag"}).find("name yours: --engine vllm@X.Y"), std::string::npos);
}

// A flag pasted from an SGLang or llama.cpp line says how vLLM spells the setting.
TEST(ServeFlags, DecodeContextParallelFromTheTenTwoPatch) {
  // PR #23734 added --decode-context-parallel-size / -dcp in v0.10.2, after the v0.10.0 list.
  EXPECT_EQ(vllm::CheckServeFlags({"-dcp"}, "0.10.2").ok(), true);
  EXPECT_EQ(vllm::CheckServeFlags({"--decode-context-parallel-size"}, "0.10.2").ok(), true);
  EXPECT_EQ(vllm::CheckServeFlags({"--decode-context-parallel-size"}, "0.10.1").ok(), false);
  EXPECT_EQ(vllm::CheckServeFlags({"-dcp"}, "0.9").ok(), false);
  EXPECT_EQ(vllm::CheckServeFlags({"-dcp"}, "0.15").ok(), true);
}

TEST(ServeFlags, AnotherEnginesSpellingNamesVllms) {
  EXPECT_EQ(Error({"--tp"}).substr(0, Error({"--tp"}).find("; nearest")),
            "--tp: vLLM 0.22 has no such flag (`vllm serve` stops with \"unrecognized "
            "arguments\") (vLLM spells the nearest setting --tensor-parallel-size (-tp))");
  EXPECT_NE(Error({"--context-length=8192"}).find("spells the nearest setting --max-model-len"),
            std::string::npos);
  EXPECT_EQ(Error({"--max-model-len"}), "");
}

TEST(ServeFlags, SpellingsArgparseAccepts) {
  EXPECT_EQ(Error({"--max_model_len", "--no-enable-prefix-caching", "-tp", "--max-model",
                   "--compilation-config.mode", "-1"}),
            "");
  EXPECT_NE(Error({"--max"}).find("ambiguous option: --max could match"), std::string::npos);
}

// Spellings vLLM accepts are read as the flag they stand for, not passed over as unknown.
TEST(ServeFlags, CanonicalArgsSpellEveryFlagInFull) {
  using V = std::vector<std::string>;
  EXPECT_EQ(CanonicalServeArgs({"--max_model_len", "8192", "--max-model=4096", "--gpu_memory_util",
                                "0.9", "-tp", "2", "--max", "1"},
                               {}),
            (V{"--max-model-len", "8192", "--max-model-len=4096", "--gpu-memory-utilization", "0.9",
               "-tp", "2", "--max", "1"}));
  // Dotted keys: one JSON object per flag, appended last, values JSON where they parse.
  EXPECT_EQ(CanonicalServeArgs({"--limit-mm-per-prompt.image", "4", "--enforce-eager",
                                "--limit_mm_per_prompt.video=0", "--speculative-config.method",
                                "mtp", "--compilation-config.cudagraph_capture_sizes+", "1,2"},
                               {}),
            (V{"--enforce-eager", "--limit-mm-per-prompt", R"({"image":4,"video":0})",
               "--speculative-config", R"({"method":"mtp"})", "--compilation-config",
               R"({"cudagraph_capture_sizes":["1","2"]})"}));
  EXPECT_EQ(CanonicalServeArgs({"--hf-overrides.rope_scaling.factor", "4.0"}, {}),
            (V{"--hf-overrides", R"({"rope_scaling":{"factor":4.0}})"}));
  // A '.' in the value only, a name the caller keeps, a dotted flag at the end without value.
  EXPECT_EQ(CanonicalServeArgs({"--model=Qwen/Qwen3.5-9B", "--v0-eng", "--hf-overrides.x"},
                               {"--v0-eng"}),
            (V{"--model=Qwen/Qwen3.5-9B", "--v0-eng", "--hf-overrides.x"}));
}

// A dotted value nested past what is parsed stays text (a reader of the flag refuses it).
TEST(ServeFlags, CanonicalArgsKeepADeepValueAsText) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const auto out = CanonicalServeArgs({"--hf-overrides.x", deep}, {});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1], "{\"x\":\"" + deep + "\"}");
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
  // Refused as a flag that left vLLM, with the way to plan an older release, not a respelling.
  const std::string gone = Error({"--swap-space"}, "0.22");
  EXPECT_NE(gone.find("no longer has this flag"), std::string::npos) << gone;
  EXPECT_NE(gone.find("--engine vllm@X.Y"), std::string::npos) << gone;
  EXPECT_EQ(gone.find("nearest"), std::string::npos) << gone;
  EXPECT_NE(Error({"--kv-cache-memory-bytes"}, "0.10.1"), "");
  EXPECT_EQ(Error({"--kv-cache-memory-bytes"}, "0.22"), "");
}

// Releases before 0.10 are checked against their own flag lists (serve_flags_history.cc), as
// each release's argparse checks them, not against 0.10's.
TEST(ServeFlags, ReleasesBefore010HaveTheirOwnLists) {
  const auto& spans = ServeFlagSpansBefore010();
  EXPECT_TRUE(std::is_sorted(spans.begin(), spans.end(), [](const auto& a, const auto& b) {
    return a.flag < b.flag || (a.flag == b.flag && a.first < b.first);
  }));
  for (const FlagSpan& f : spans) {
    EXPECT_TRUE(f.until == 0 || f.until > f.first) << f.flag;
  }
  for (const char* release : {"0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9"}) {
    EXPECT_EQ(Error({"--max-model-len", "--gpu-memory-utilization", "-tp", "--max-num-seqs"},
                    release),
              "")
        << release;
  }
  // --kv-cache-dtype came with the FP8 E5M2 KV cache (PR #2279) in 0.3.0; 0.2.7 stops.
  EXPECT_EQ(Error({"--kv-cache-dtype"}, "0.2.7"),
            "--kv-cache-dtype: vLLM 0.2.7 has no such flag (`python -m "
            "vllm.entrypoints.openai.api_server` stops with \"unrecognized arguments\"); "
            "nearest: " +
                Error({"--kv-cache-dtype"}, "0.2.7").substr(
                    Error({"--kv-cache-dtype"}, "0.2.7").rfind("nearest: ") + 9));
  EXPECT_EQ(Error({"--kv-cache-dtype"}, "0.3.0"), "");
  // --enforce-eager came with CUDA graphs in 0.2.6; --cpu-offload-gb in 0.5.3;
  // --enable-expert-parallel in 0.8.0; --kv-cache-memory-bytes after 0.10.
  EXPECT_NE(Error({"--enforce-eager"}, "0.2.5"), "");
  EXPECT_EQ(Error({"--enforce-eager"}, "0.2.6"), "");
  EXPECT_NE(Error({"--cpu-offload-gb", "4"}, "0.5.2"), "");
  EXPECT_EQ(Error({"--cpu-offload-gb", "4"}, "0.5.3"), "");
  EXPECT_NE(Error({"--enable-expert-parallel"}, "0.7.3"), "");
  EXPECT_EQ(Error({"--enable-expert-parallel"}, "0.8.0"), "");
  EXPECT_NE(Error({"--kv-cache-memory-bytes", "1"}, "0.9.2"), "");
  // Flags the releases had and 0.10 has not pass there: --engine-use-ray until 0.6.1,
  // --speculative-model until 0.8.2.
  EXPECT_EQ(Error({"--engine-use-ray"}, "0.5.4"), "");
  EXPECT_NE(Error({"--engine-use-ray"}, "0.6.2"), "");
  EXPECT_EQ(Error({"--speculative-model", "m"}, "0.6.6"), "");
  EXPECT_NE(Error({"--speculative-model", "m"}, "0.8.5"), "");
  // The nearest names come from the release's own list.
  EXPECT_NE(Error({"--enable-expert-parallel"}, "0.7.3").find("nearest: --"), std::string::npos);
  // The parser's rules: `_` for `-` from 0.5.1 (FlexibleArgumentParser), an abbreviation in
  // every release, --no-NAME of any flag from 0.8 only, dotted keys from 0.9 only.
  EXPECT_NE(Error({"--max_model_len"}, "0.5.0"), "");
  EXPECT_EQ(Error({"--max_model_len"}, "0.5.1"), "");
  EXPECT_EQ(Error({"--max-model", "8192"}, "0.2.0"), "");
  EXPECT_NE(Error({"--no-enforce-eager"}, "0.7.3"), "");
  EXPECT_EQ(Error({"--no-enforce-eager"}, "0.8.0"), "");
  EXPECT_NE(Error({"--limit-mm-per-prompt.image", "2"}, "0.8.5"), "");
  EXPECT_EQ(Error({"--limit-mm-per-prompt.image", "2"}, "0.9"), "");
}

}  // namespace
}  // namespace vramfit::vllm
