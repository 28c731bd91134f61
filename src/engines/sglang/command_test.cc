// SGLang command lines: the launch forms, quotes and JSON-valued flags, aliases, unknown flags
// named, environment prefixes, and the written command read back to the same settings.
#include "engines/sglang/command.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "engines/sglang/flags.h"

namespace vramfit::sglang {
namespace {

Result<SglangSettings> Settings(const EngineCommand& c) {
  return ReadFlags(c.flags, ToSglangSettings(c.settings));
}

TEST(SglangCommand, ReadsALaunchServerLine) {
  const std::vector<std::string> argv = {
      "CUDA_VISIBLE_DEVICES=0,1", "NCCL_DEBUG=INFO", "python3", "-m", "sglang.launch_server",
      "--model-path", "Qwen/Qwen3-8B", "--tp", "2", "--mem-fraction-static=0.85",
      "--json-model-override-args", R"({"max_position_embeddings": 65536, "rope_theta": 1e6})",
      "--host", "0.0.0.0", "--enable-hierarchical-cache", "--hicache-ratio", "2",
      "--chunked-prefill-size", "-1", "--disable-cuda-graph", "--tp", "4"};
  ASSERT_TRUE(IsLaunchCommand(argv));
  auto c = ReadLaunchCommand(argv);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->model, "Qwen/Qwen3-8B");
  // NCCL's logging holds nothing: read, named with the flags of no memory effect.
  EXPECT_TRUE(c->unmodelled_env.empty()) << c->unmodelled_env.front();
  EXPECT_NE(std::find(c->no_memory_flags.begin(), c->no_memory_flags.end(), "NCCL_DEBUG"),
            c->no_memory_flags.end());
  // Unknown flags are named, the harmless ones (--host) are not.
  EXPECT_EQ(c->unmodelled_flags,
            (std::vector<std::string>{"--enable-hierarchical-cache", "--hicache-ratio"}));
  auto s = Settings(*c);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->tensor_parallel_size, 4);  // the last --tp wins, as in argparse
  EXPECT_DOUBLE_EQ(s->gpu_memory_utilization, 0.85);
  EXPECT_EQ(s->override_context_len, 65536);
  EXPECT_EQ(s->max_num_batched_tokens, -1);
  EXPECT_TRUE(s->enforce_eager);
  // The printed command keeps every word the plan does not read, so pasting it starts the
  // same server: --host and the hierarchical cache flags with their values, NCCL_DEBUG.
  EXPECT_EQ(s->kept_args, (std::vector<std::string>{"--host", "0.0.0.0",
                                                    "--enable-hierarchical-cache",
                                                    "--hicache-ratio", "2"}));
  const std::string line = LaunchCommand("Qwen/Qwen3-8B", *s, *s);
  EXPECT_EQ(line.rfind("NCCL_DEBUG=INFO python -m sglang.launch_server", 0), 0u) << line;
  EXPECT_NE(line.find(" --host 0.0.0.0 --enable-hierarchical-cache --hicache-ratio 2"),
            std::string::npos) << line;
}

// Flags named as not modelled (EAGLE's steps and top-k) stay in the printed command as given.
// Host-side options (TLS, logging, tokenizer workers, queue limits, default sampling) are read
// with no memory effect, each with its own arity, and kept in the printed command.
TEST(SglangCommand, HostSideOptionsAreReadWithoutMemoryEffect) {
  auto c = ReadLaunchCommand({"python", "-m", "sglang.launch_server", "--model-path",
                              "Qwen/Qwen3-8B", "--tokenizer-mode", "auto", "--stream-interval",
                              "2", "--ssl-keyfile", "k.pem", "--max-queued-requests", "100",
                              "--tokenizer-worker-num", "4"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->unmodelled_flags.empty());
  EXPECT_EQ(c->no_memory_flags.size(), 5u);
  EXPECT_EQ(c->model, "Qwen/Qwen3-8B");
}

TEST(SglangCommand, PrintedCommandKeepsSpeculativeFlagsItDoesNotModel) {
  auto c = ReadLaunchCommand({"python", "-m", "sglang.launch_server", "--model-path", "m",
                              "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
                              "--speculative-eagle-topk=4", "--speculative-num-draft-tokens",
                              "8"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto s = Settings(*c);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const std::string line = LaunchCommand("m", *s, *s);
  EXPECT_NE(line.find(" --speculative-num-steps 3 --speculative-eagle-topk=4"),
            std::string::npos) << line;
  EXPECT_NE(line.find(" --speculative-num-draft-tokens 8"), std::string::npos) << line;
}

// Nothing written is passed over unnamed: an abbreviation argparse expands to one option is
// read as that option (planned when the plan reads it, named when not); a word that is no
// option of SGLang's is kept for the flag check, its value with it (a negative number is a
// value, not an option).
TEST(SglangCommand, ReadsAbbreviationsAndKeepsUnknownFlagsForTheCheck) {
  auto c = ReadLaunchCommand({"python", "-m", "sglang.launch_server", "--model-path", "m",
                              "--mem-frac", "0.8", "-q", "fp8", "--foo-bar", "-1",
                              "--chunked-prefill-size", "-1", "--context", "4096",
                              "--enable-hier"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->unmodelled_flags,
            (std::vector<std::string>{"-q", "--foo-bar",
                                      "--enable-hier (SGLang reads it as "
                                      "--enable-hierarchical-cache)"}));
  EXPECT_EQ(c->given_flags,
            (std::vector<std::string>{"--model-path", "--mem-frac", "-q", "--foo-bar",
                                      "--chunked-prefill-size", "--context", "--enable-hier"}));
  auto s = Settings(*c);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_DOUBLE_EQ(s->gpu_memory_utilization, 0.8);
  EXPECT_EQ(s->max_model_len, 4096);
  EXPECT_EQ(s->max_num_batched_tokens, -1);
}

// Each option takes the words it takes in SGLang: none after a switch (the next word is never
// its value), one, or a list; `--flag=value` is one word.
TEST(SglangCommand, SwitchesAndValuedFlagsByTheOptionList) {
  auto c = ReadLaunchCommand(
      {"python", "-m", "sglang.launch_server", "--disable-cuda-graph", "--cuda-graph-bs", "1",
       "2", "4", "--model-path=org/m", "--enable-metrics", "--context-length=8192",
       "--lora-paths", "a", "b", "--tp", "2"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->model, "org/m");
  EXPECT_EQ(c->unmodelled_flags, (std::vector<std::string>{"--cuda-graph-bs", "--lora-paths"}));
  auto s = Settings(*c);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(s->enforce_eager);
  EXPECT_EQ(s->max_model_len, 8192);
  EXPECT_EQ(s->tensor_parallel_size, 2);
  // A word after a switch is no value of it: SGLang's parser stops on it.
  auto stray = ReadLaunchCommand({"sglang", "serve", "--model-path", "m",
                                  "--disable-cuda-graph", "true"});
  ASSERT_FALSE(stray.ok());
  EXPECT_EQ(stray.status().message(),
            "the SGLang command line: true is neither a flag nor a flag's value (the server "
            "stops with \"unrecognized arguments\")");
  auto explicit_value = ReadLaunchCommand({"sglang", "serve", "--model-path", "m",
                                           "--disable-radix-cache=1"});
  ASSERT_FALSE(explicit_value.ok());
  EXPECT_NE(explicit_value.status().message().find("--disable-radix-cache takes no value"),
            std::string::npos);
  // A flag followed by another flag has no value.
  auto missing = ReadLaunchCommand({"sglang", "serve", "--model-path", "m", "--tp", "--dp", "2"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "the SGLang command line: --tp expects a value (the server stops with \"argument "
            "--tp: expected one argument\")");
  EXPECT_FALSE(ReadLaunchCommand({"sglang", "serve", "--model-path", "m", "--cuda-graph-bs"})
                   .ok());
  // `sglang serve` reads the model from --model-path only.
  auto positional = ReadLaunchCommand({"sglang", "serve", "Qwen/Qwen3-8B", "--tp", "2"});
  ASSERT_FALSE(positional.ok());
  EXPECT_NE(positional.status().message().find("reads the model from --model-path MODEL"),
            std::string::npos);
  EXPECT_FALSE(ReadLaunchCommand({"sglang", "serve", "--model-path", "m", "--", "x"}).ok());
}

// vLLM's spelling of a setting SGLang has is refused naming SGLang's flag.
TEST(SglangFlags, RefusesVllmSpellingsNamingSglangs) {
  auto s = ReadFlags({{"--max-model-len", "4096"}}, {});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "--max-model-len is not a flag of SGLang (SGLang spells the nearest setting "
            "--context-length)");
  EXPECT_EQ(ReadFlags({{"--lora-rank", "8"}}, {}).status().message(),
            "--lora-rank is not a flag of SGLang");
}

TEST(SglangCommand, ReadsSglangServeAndItsAliases) {
  const std::vector<std::string> argv = {
      "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1", "sglang", "serve", "--model-path",
      "deepseek-ai/DeepSeek-V3", "--tensor-parallel-size", "8", "--dp", "8",
      "--enable-dp-attention", "--kv-cache-dtype", "fp8_e4m3", "--context-length", "200000"};
  auto c = ReadLaunchCommand(argv);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto s = Settings(*c);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->allow_long_max_model_len);
  EXPECT_EQ(s->tensor_parallel_size, 8);
  EXPECT_EQ(s->data_parallel_size, 8);
  EXPECT_TRUE(s->enable_dp_attention);
  EXPECT_EQ(s->kv_cache_dtype, "fp8_e4m3");
  EXPECT_EQ(s->max_model_len, 200000);
}

TEST(SglangCommand, RefusesWhatSglangWouldRefuse) {
  auto no_model = ReadLaunchCommand({"python", "-m", "sglang.launch_server", "--tp", "2"});
  EXPECT_FALSE(no_model.ok());
  auto no_value = ReadLaunchCommand({"sglang", "serve", "--model-path", "m", "--tp"});
  ASSERT_FALSE(no_value.ok());
  EXPECT_NE(no_value.status().message().find("--tp expects a value"), std::string::npos);
  EXPECT_FALSE(IsLaunchCommand({"vllm", "serve", "m"}));
  auto c = ReadLaunchCommand({"sglang", "serve", "--model-path", "m", "--json-model-override-args",
                              "{not json", "--mem-fraction-static", "1.5"});
  ASSERT_TRUE(c.ok());
  auto s = Settings(*c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("--json-model-override-args: expected a JSON object"),
            std::string::npos);
  FlagValues bad = {{"--mem-fraction-static", "1.5"}};
  EXPECT_FALSE(ReadFlags(bad, {}).ok());
  FlagValues choice = {{"--kv-cache-dtype", "int4"}};
  auto k = ReadFlags(choice, {});
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.status().message().find("invalid choice: 'int4'"), std::string::npos);
}

TEST(SglangCommand, WrittenCommandReadsBack) {
  SglangSettings s;
  s.tensor_parallel_size = 2;
  s.gpu_memory_utilization = 0.8;
  s.max_model_len = 32768;
  s.kv_cache_dtype = "fp8_e4m3";
  s.json_model_override_args = R"({"max_position_embeddings": 32768})";
  s.override_context_len = 32768;
  s.max_num_seqs = 64;
  SglangSettings in = s;
  const std::string line = LaunchCommand("org/model", s, in);
  EXPECT_EQ(line,
            "python -m sglang.launch_server --model-path org/model --tp-size 2 "
            "--mem-fraction-static 0.8 --context-length 32768 --json-model-override-args "
            "'{\"max_position_embeddings\": 32768}' --kv-cache-dtype fp8_e4m3 "
            "--max-running-requests 64");
  // Split as a shell would (the one quoted word kept whole).
  const std::vector<std::string> argv = {
      "python", "-m", "sglang.launch_server", "--model-path", "org/model", "--tp-size", "2",
      "--mem-fraction-static", "0.8", "--context-length", "32768", "--json-model-override-args",
      R"({"max_position_embeddings": 32768})", "--kv-cache-dtype", "fp8_e4m3",
      "--max-running-requests", "64"};
  auto c = ReadLaunchCommand(argv);
  ASSERT_TRUE(c.ok());
  auto back = Settings(*c);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->tensor_parallel_size, 2);
  EXPECT_DOUBLE_EQ(back->gpu_memory_utilization, 0.8);
  EXPECT_EQ(back->max_model_len, 32768);
  EXPECT_EQ(back->override_context_len, 32768);
  EXPECT_EQ(back->max_num_seqs, 64);
}

TEST(SglangCommand, ReadsImageSettings) {
  const std::vector<std::string> argv = {
      "SGLANG_IMAGE_MAX_PIXELS=1003520", "python", "-m", "sglang.launch_server", "--model-path",
      "Qwen/Qwen2.5-VL-7B-Instruct", "--limit-mm-data-per-request", R"({"image": 3, "video": 1})",
      "--mm-attention-backend", "sdpa"};
  auto c = ReadLaunchCommand(argv);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->unmodelled_env.empty());
  auto s = Settings(*c);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->image_max_pixels, 1003520);
  EXPECT_EQ(s->images_per_request, 3);
  EXPECT_EQ(s->mm_attention_backend, "sdpa");
  // Written back: the same settings.
  EXPECT_NE(LaunchCommand("m", *s, *s).find("SGLANG_IMAGE_MAX_PIXELS=1003520 python -m "
                                            "sglang.launch_server"),
            std::string::npos);
  EXPECT_NE(LaunchCommand("m", *s, *s).find(
                R"(--limit-mm-data-per-request '{"image": 3}' --mm-attention-backend sdpa)"),
            std::string::npos);
  // Refused values name the flag.
  EXPECT_FALSE(ReadLaunchCommand({"SGLANG_IMAGE_MAX_PIXELS=big", "sglang", "serve", "m"}).ok());
  EXPECT_EQ(ReadFlags({{"--limit-mm-data-per-request", R"({"image": -1})"}}, {}).status()
                .message(),
            "--limit-mm-data-per-request: \"image\" must be a whole number of images, 0 to "
            "65536");
  EXPECT_FALSE(ReadFlags({{"--limit-mm-data-per-request", "image=2"}}, {}).ok());
  EXPECT_FALSE(ReadFlags({{"--mm-attention-backend", "flash"}}, {}).ok());
}

}  // namespace
}  // namespace vramfit::sglang
