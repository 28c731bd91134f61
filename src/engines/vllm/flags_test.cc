// vLLM's flag reader on hostile numbers and words: every value in range or exit 2 with the flag
// named, never a wrapped number; choices as vLLM's argparse has them; emitted commands quoted.
#include "engines/vllm/flags.h"

#include <gtest/gtest.h>

#include "engines/vllm/command.h"
#include "engines/vllm/rules.h"

namespace vramfit::vllm {
namespace {

std::string Error(const FlagValues& given) {
  auto s = ReadFlags(given, VllmSettings{});
  return s.ok() ? std::string() : s.status().message();
}

TEST(VllmFlags, NumbersBeyondWhatVllmPlansAreRefused) {
  EXPECT_EQ(Error({{"--max-num-batched-tokens", "4611686018427387904"}}),
            "--max-num-batched-tokens 4611686018427387904: expected 1 to 2147483647 (token "
            "counts are int32 in vLLM)");
  EXPECT_EQ(Error({{"--max-model-len", "4503599627370496"}}).rfind("--max-model-len ", 0), 0u);
  EXPECT_NE(Error({{"--max-num-seqs", "9223372036854775807"}}), "");
  EXPECT_NE(Error({{"--max-num-seqs", "9223372036854775808"}}), "");  // beyond int64
  EXPECT_EQ(Error({{"--tensor-parallel-size", "4611686018427387904"},
                   {"--pipeline-parallel-size", "4"}}),
            "--tensor-parallel-size 4611686018427387904: expected 1 to 4096 (GPUs in one "
            "deployment)");
  EXPECT_NE(Error({{"--tensor-parallel-size", "0"}}), "");
  EXPECT_NE(Error({{"--block-size", "-16"}}), "");
  EXPECT_NE(Error({{"--gpu-memory-utilization", "nan"}}), "");
  EXPECT_NE(Error({{"--gpu-memory-utilization", "1.5"}}), "");
  EXPECT_NE(Error({{"--cpu-offload-gb", "nan"}}), "");
  EXPECT_NE(Error({{"--cpu-offload-gb", "1e300"}}), "");
  EXPECT_NE(Error({{"--cpu-offload-gb", "-1"}}), "");
  EXPECT_NE(Error({{"--offload-group-size", "-1"}}), "");
  EXPECT_NE(Error({{"--offload-group-size", "x"}}), "");
  EXPECT_NE(Error({{"--offload-num-in-group", "0"}}), "");
  EXPECT_NE(Error({{"--offload-prefetch-step", "-2"}}), "");
  EXPECT_NE(Error({{"--offload-backend", "disk"}}), "");
  EXPECT_EQ(Error({{"--offload-backend", "prefetch"}, {"--offload-group-size", "8"}}), "");
  EXPECT_EQ(Error({{"--max-model-len", "131072"}, {"--max-num-seqs", "2147483647"}}), "");
  EXPECT_EQ(Error({{"--decode-context-parallel-size", "0"}}),
            "--decode-context-parallel-size 0: expected 1 to 4096 (ranks of the tensor-parallel "
            "group)");
  auto dcp = ReadFlags({{"--decode-context-parallel-size", "8"}}, VllmSettings{});
  ASSERT_TRUE(dcp.ok());
  EXPECT_EQ(dcp->decode_context_parallel_size, 8);
}

TEST(VllmFlags, HumanReadableIntsAsVllmReadsThem) {
  auto s = ReadFlags({{"--max-num-batched-tokens", "16k"}, {"--kv-cache-memory-bytes", "10g"}},
                     VllmSettings{});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->max_num_batched_tokens, 16000);
  EXPECT_EQ(s->kv_cache_memory_bytes, 10000000000u);
  s = ReadFlags({{"--max-num-batched-tokens", "8K"}, {"--kv-cache-memory-bytes", "10G"}},
                VllmSettings{});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->max_num_batched_tokens, 8192);
  EXPECT_EQ(s->kv_cache_memory_bytes, 10737418240u);
  s = ReadFlags({{"--kv-cache-memory-bytes", "10GiB"}}, VllmSettings{});  // vramfit's spelling
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->kv_cache_memory_bytes, 10737418240u);
  EXPECT_NE(Error({{"--max-num-batched-tokens", "1.5K"}}), "");  // binary: whole numbers only
}

TEST(VllmFlags, ZeroIsRefusedNotReadAsTheDefault) {
  EXPECT_EQ(Error({{"--gpu-memory-utilization", "0"}}),
            "--gpu-memory-utilization 0: expected a fraction in (0, 1]");
  EXPECT_EQ(Error({{"--max-num-seqs", "0"}}),
            "--max-num-seqs 0: expected 1 or more (leave the flag out for vLLM's default)");
  EXPECT_NE(Error({{"--max-num-batched-tokens", "0"}}), "");
  EXPECT_NE(Error({{"--block-size", "0"}}), "");
  EXPECT_EQ(Error({{"--cpu-offload-gb", "0"}}), "");  // 0 GiB offloaded is a real setting
}

TEST(VllmFlags, MultimodalCountsPixelsAndDraftTokensAreRangeChecked) {
  EXPECT_EQ(Error({{"--limit-mm-per-prompt", "{\"image\": 9223372036854775807}"}}),
            "--limit-mm-per-prompt image 9223372036854775807: expected 0 to 2147483647 (items "
            "per prompt)");
  EXPECT_NE(Error({{"--limit-mm-per-prompt", "video=-1"}}), "");
  EXPECT_EQ(Error({{"--limit-mm-per-prompt", "{\"image\": 2, \"video\": 0}"}}), "");
  EXPECT_EQ(Error({{"--mm-processor-kwargs", "{\"max_pixels\": 9223372036854775807}"}}),
            "--mm-processor-kwargs max_pixels 9223372036854775807: expected 1 to 2147483647 "
            "(pixels per image)");
  EXPECT_NE(Error({{"--mm-processor-kwargs", "{\"max_pixels\": 0}"}}), "");
  const std::string mtp = "{\"method\": \"mtp\", \"num_speculative_tokens\": ";
  EXPECT_EQ(Error({{"--speculative-config", mtp + "1e300}"}}),
            "--speculative-config num_speculative_tokens: expected a whole number 1 to 64");
  EXPECT_EQ(Error({{"--speculative-config", mtp + "2}"}}), "");
}

// --spec-method, --spec-model and --spec-tokens are --speculative-config's keys: merged into its
// JSON as vLLM merges them, and refused beside the same key there.
TEST(VllmFlags, SpeculativeAliasesAreTheConfigsKeys) {
  auto s = ReadFlags({{"--spec-method", "eagle3"},
                      {"--spec-model", "RedHatAI/Qwen3-8B-speculator.eagle3"},
                      {"--spec-tokens", "3"}},
                     VllmSettings{});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->speculative_method, "eagle3");
  EXPECT_EQ(s->draft_model, "RedHatAI/Qwen3-8B-speculator.eagle3");
  EXPECT_EQ(s->num_speculative_tokens, 3);
  EXPECT_TRUE(s->speculative_aliases);
  EXPECT_EQ(s->speculative_config,
            "{\"method\": \"eagle3\", \"model\": \"RedHatAI/Qwen3-8B-speculator.eagle3\", "
            "\"num_speculative_tokens\": 3}");
  // Beside the JSON: its other keys stay, the same key is refused.
  auto both = ReadFlags({{"--speculative-config", "{\"method\": \"mtp\"}"}, {"--spec-tokens", "2"}},
                        VllmSettings{});
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ(both->speculative_method, "mtp");
  EXPECT_EQ(both->num_speculative_tokens, 2);
  EXPECT_EQ(both->speculative_config, "{\"method\": \"mtp\", \"num_speculative_tokens\": 2}");
  EXPECT_EQ(Error({{"--speculative-config", "{\"method\": \"mtp\"}"}, {"--spec-method", "mtp"}}),
            "--spec-method and --speculative-config['method'] are mutually exclusive (vLLM "
            "refuses the two together); give it once");
  EXPECT_NE(Error({{"--spec-tokens", "three"}}), "");
  EXPECT_NE(Error({{"--spec-tokens", "0"}}), "");
  EXPECT_NE(Error({{"--speculative-config", "[1]"}, {"--spec-tokens", "2"}}), "");
  EXPECT_FALSE(ReadFlags({{"--speculative-config", "{\"method\": \"mtp\"}"}}, VllmSettings{})
                   ->speculative_aliases);
}

// --revision is read for `check` (which reads a Hub id at it) and kept in the printed command;
// a word no Hub revision can be is refused.
TEST(VllmFlags, RevisionIsReadAndKept) {
  auto cmd = ReadServeCommand({"vllm", "serve", "org/model", "--revision", "v2.1"});
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  EXPECT_EQ(cmd->revision, "v2.1");
  EXPECT_EQ(cmd->model, "org/model");
  EXPECT_TRUE(cmd->unmodelled_flags.empty());
  auto s = ReadFlags(cmd->flags, ToVllmSettings(cmd->settings));
  ASSERT_TRUE(s.ok());
  EXPECT_NE(ServeCommand("org/model", *s, *s, "v2.1").find("--revision v2.1"), std::string::npos);
  EXPECT_EQ(ServeCommand("org/model", *s, *s, "v2.1").find("--revision v2.1 --revision"),
            std::string::npos);
  EXPECT_FALSE(ReadServeCommand({"vllm", "serve", "org/model", "--revision", "a\nb"}).ok());
  EXPECT_EQ(ReadServeCommand({"vllm", "serve", "org/model"})->revision, "");
}

TEST(VllmFlags, CompilationConfigGraphKeys) {
  const std::string cc = "--compilation-config";
  EXPECT_EQ(Error({{cc, R"({"cudagraph_mode": "full_decode_only"})"}}), "");
  EXPECT_EQ(Error({{cc, "3"}}), "");  // a bare level
  EXPECT_EQ(Error({{cc, R"({"cudagraph_capture_sizes": ["1", "2", "4"]})"}}), "");
  EXPECT_NE(Error({{cc, R"({"cudagraph_mode": "FAST"})"}}).find("invalid choice: 'FAST'"),
            std::string::npos);
  EXPECT_NE(Error({{cc, R"({"cudagraph_mode": )"}}).find("expected a JSON object"),
            std::string::npos);
  EXPECT_NE(Error({{cc, R"({"cudagraph_capture_sizes": []})"}}).find("an empty list"),
            std::string::npos);
  EXPECT_NE(Error({{cc, R"({"cudagraph_capture_sizes": [0]})"}}), "");
  EXPECT_NE(Error({{cc, R"({"cudagraph_capture_sizes": ["x"]})"}}), "");
  EXPECT_NE(Error({{cc, R"({"max_cudagraph_capture_size": 1e300})"}}), "");
  EXPECT_NE(Error({{"--max-cudagraph-capture-size", "0"}}), "");
  EXPECT_NE(Error({{"--max-cudagraph-capture-size", "big"}}), "");
  auto s = vllm::ReadFlags({{cc, R"({"level": 3, "custom_ops": [],
                                     "cudagraph_mode": "PIECEWISE"})"},
                            {"--max-cudagraph-capture-size", "64"}},
                           VllmSettings{});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->cudagraph_mode, "PIECEWISE");
  EXPECT_EQ(s->max_cudagraph_capture_size, 64);
  EXPECT_EQ(s->compilation_mode, 3);  // "level" (or "mode"): the compilation mode
  EXPECT_EQ(s->compilation_keys_not_modelled, std::vector<std::string>{"custom_ops"});
  EXPECT_EQ(vllm::ReadFlags({{cc, R"({"mode": "none"})"}}, VllmSettings{})->compilation_mode, 0);
  EXPECT_EQ(vllm::ReadFlags({{cc, "0"}}, VllmSettings{})->compilation_mode, 0);
  EXPECT_NE(Error({{cc, R"({"mode": 7})"}}), "");
  EXPECT_NE(Error({{cc, R"({"mode": "FAST"})"}}).find("invalid choice"), std::string::npos);
}

TEST(VllmFlags, CompilationConfigShortAndDottedForms) {
  // -cc is --compilation-config's alias, and `-cc.KEY VALUE` its dotted form (vLLM's
  // FlexibleArgumentParser; tests/utils_/test_argparse_utils.py test_dict_args).
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{"vllm", "serve", "m", "-cc.cudagraph_mode=FULL_DECODE_ONLY"},
        std::vector<std::string>{"vllm", "serve", "m", "-cc.cudagraph_mode", "FULL_DECODE_ONLY"},
        std::vector<std::string>{"vllm", "serve", "m", "-cc",
                                 R"({"cudagraph_mode":"FULL_DECODE_ONLY"})"}}) {
    auto cmd = ReadServeCommand(argv);
    ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
    EXPECT_TRUE(cmd->unmodelled_flags.empty()) << argv.back();
    auto s = ReadFlags(cmd->flags, VllmSettings{});
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ(s->cudagraph_mode, "FULL_DECODE_ONLY") << argv.back();
  }
}

// --enable-chunked-prefill and --no-enable-chunked-prefill are read (the last given counts, as
// argparse's BooleanOptionalAction takes it), neither dropped nor named as without effect.
TEST(VllmFlags, ChunkedPrefillSwitchesAreRead) {
  for (const auto& [argv, want] : std::vector<std::pair<std::vector<std::string>, int>>{
           {{"vllm", "serve", "m", "--no-enable-chunked-prefill"}, 0},
           {{"vllm", "serve", "m", "--enable-chunked-prefill"}, 1},
           {{"vllm", "serve", "m", "--enable-chunked-prefill", "--no-enable-chunked-prefill"}, 0},
           {{"vllm", "serve", "m", "--no-enable-chunked-prefill", "--enable-chunked-prefill"}, 1},
           {{"vllm", "serve", "m"}, -1}}) {
    auto cmd = ReadServeCommand(argv);
    ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
    EXPECT_TRUE(cmd->unmodelled_flags.empty()) << argv.back();
    auto s = ReadFlags(cmd->flags, VllmSettings{});
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ(s->enable_chunked_prefill, want) << argv.back();
  }
}

TEST(VllmFlags, ReleasesOutsideTheVersionGrammar) {
  EXPECT_FALSE(ParseRelease("214749.0").ok());
  EXPECT_EQ(ParseRelease("214749.0").status().message().find("releases before 0.8"),
            std::string::npos);
  EXPECT_FALSE(ParseRelease("0.999").ok());
  EXPECT_FALSE(ParseRelease("99999999999999999999.1").ok());
  EXPECT_EQ(*ParseRelease("0.10.2"), 1002);
}

TEST(VllmFlags, ChoicesAsArgparseHasThem) {
  EXPECT_EQ(Error({{"--quantization", "awq_marlin$(touch /tmp/x)"}})
                .rfind("argument --quantization/-q: invalid choice: 'awq_marlin$(touch /tmp/x)'",
                       0),
            0u);
  EXPECT_EQ(Error({{"--quantization", "awq_marlin"}}), "");
  EXPECT_NE(Error({{"--kv-cache-dtype", "fp8;rm -rf /"}}), "");
  // A value echoed in a message is escaped: a terminal never sees the ESC.
  const std::string echoed = Error({{"--quantization", "fp8\x1b[2J"}});
  EXPECT_EQ(echoed.rfind("argument --quantization/-q: invalid choice: 'fp8\\x1b[2J'", 0), 0u);
  EXPECT_EQ(echoed.find('\x1b'), std::string::npos);
  EXPECT_EQ(Error({{"--max-num-seqs", "1\x1b[2J"}}),
            "--max-num-seqs \"1\\x1b[2J\": expected a whole number");
  EXPECT_NE(Error({{"--dtype", "float64"}}), "");
}

TEST(VllmFlags, EmittedCommandsQuoteWhatTheShellWouldRead) {
  VllmSettings s;
  s.max_model_len = 4096;
  s.gpu_memory_utilization = 0.9;
  EXPECT_EQ(ServeCommand("org/model name$(x)", s, s),
            "vllm serve 'org/model name$(x)' --max-model-len 4096 --gpu-memory-utilization 0.9");
  s.quantization = "it's";
  EXPECT_NE(ServeCommand("m", s, s).find("--quantization 'it'\\''s'"), std::string::npos);
}

}  // namespace
}  // namespace vramfit::vllm
