// ReadCheckpoint over in-memory sources (no disk): the layout rules, the index checks and the
// notes; and the local source's refusal of what is not a regular file, without blocking.
#include "sources/checkpoint.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace vramfit {
namespace {

// A safetensors file holding one U8 tensor of `n` bytes named `name`.
std::string OneTensor(const std::string& name, int n) {
  const std::string header = "{\"" + name + "\":{\"dtype\":\"U8\",\"shape\":[" +
                             std::to_string(n) + "],\"data_offsets\":[0," + std::to_string(n) +
                             "]}}";
  std::string out(8, '\0');
  uint64_t len = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((len >> (8 * i)) & 0xff);
  return out + header + std::string(n, '\0');
}

const char* kIndex = R"({"metadata":{"total_size":6},"weight_map":{"a":"s1.safetensors",)"
                     R"("b":"s2.safetensors"}})";

TEST(Checkpoint, ReadsTheShardsTheIndexNames) {
  auto src = MemorySource("mem", {{"model.safetensors.index.json", kIndex},
                                  {"s1.safetensors", OneTensor("a", 2)},
                                  {"s2.safetensors", OneTensor("b", 4)},
                                  {"stray.safetensors", OneTensor("c", 1)},
                                  {"config.json", "{}"}});
  auto ck = ReadCheckpoint(*src, {});
  ASSERT_TRUE(ck.ok()) << ck.status().ToString();
  EXPECT_TRUE(ck->has_weights);
  ASSERT_EQ(ck->files.size(), 2u);  // the index wins over the listing
  EXPECT_EQ(ck->files[0].origin, "s1.safetensors");
  EXPECT_EQ(ck->files[1].tensors[0].name, "b");
  EXPECT_EQ(*ck->config_json, "{}");
  EXPECT_TRUE(ck->findings.empty());
}

TEST(Checkpoint, IndexDisagreementsAreFindingsOrErrors) {
  const char* index = R"({"metadata":{"total_size":7},"weight_map":{"a":"s1.safetensors"}})";
  auto total = MemorySource(
      "mem", {{"model.safetensors.index.json", index}, {"s1.safetensors", OneTensor("a", 2)}});
  auto ck = ReadCheckpoint(*total, {});
  ASSERT_TRUE(ck.ok());
  ASSERT_EQ(ck->findings.size(), 1u);
  EXPECT_EQ(ck->findings[0].code, "index-total-size");

  auto missing = MemorySource("mem", {{"model.safetensors.index.json", kIndex},
                                      {"s1.safetensors", OneTensor("a", 2)}});
  EXPECT_EQ(ReadCheckpoint(*missing, {}).status().message(),
            "model.safetensors.index.json: names shard \"s2.safetensors\" (1 tensors), which "
            "does not exist in mem");
  auto wrong = MemorySource("mem", {{"model.safetensors.index.json", kIndex},
                                    {"s1.safetensors", OneTensor("a", 2)},
                                    {"s2.safetensors", OneTensor("x", 4)}});
  EXPECT_EQ(ReadCheckpoint(*wrong, {}).status().message(),
            "model.safetensors.index.json: names tensor \"b\" in shard \"s2.safetensors\", but "
            "that shard's header does not hold it");
}

TEST(Checkpoint, WithoutAnIndexEverySafetensorsFileButConsolidatedCopies) {
  auto src = MemorySource("mem", {{"b.safetensors", OneTensor("b", 1)},
                                  {"a.safetensors", OneTensor("a", 1)},
                                  {"consolidated.safetensors", OneTensor("z", 1)},
                                  {"original/", ""}});
  auto ck = ReadCheckpoint(*src, {});
  ASSERT_TRUE(ck.ok());
  ASSERT_EQ(ck->files.size(), 2u);
  EXPECT_EQ(ck->files[0].origin, "a.safetensors");
  EXPECT_FALSE(ck->config_json.has_value());
  ASSERT_EQ(ck->notes.size(), 3u);
  EXPECT_EQ(ck->notes[0], "no model.safetensors.index.json: read all 2 .safetensors files");
  EXPECT_EQ(ck->notes[1].rfind("ignored consolidated.safetensors: a copy of the weights", 0), 0u);
  EXPECT_EQ(ck->notes[2].rfind("ignored original/: ", 0), 0u);
}

TEST(Checkpoint, OneFileOrConfigOnly) {
  auto src = MemorySource("mem", {{"model.safetensors", OneTensor("w", 3)},
                                  {"x.safetensors", OneTensor("x", 1)},
                                  {"my.json", "{\"a\":1}"}});
  CheckpointRequest one;
  one.weights = CheckpointRequest::Weights::kOneFile;
  one.weights_file = "x.safetensors";
  auto ck = ReadCheckpoint(*src, one);
  ASSERT_TRUE(ck.ok());
  ASSERT_EQ(ck->files.size(), 1u);
  EXPECT_EQ(ck->files[0].tensors[0].name, "x");
  CheckpointRequest config;
  config.weights = CheckpointRequest::Weights::kNone;
  config.config_file = "my.json";
  ck = ReadCheckpoint(*src, config);
  ASSERT_TRUE(ck.ok());
  EXPECT_FALSE(ck->has_weights);
  EXPECT_EQ(*ck->config_json, "{\"a\":1}");
  EXPECT_EQ(ck->config_origin, "my.json");
}

TEST(Checkpoint, ATruncatedShardNamesItsFile) {
  std::string cut = OneTensor("a", 2);
  cut.resize(12);  // the length says more header than there is
  auto src = MemorySource("mem", {{"model.safetensors", cut}});
  auto ck = ReadCheckpoint(*src, {});
  ASSERT_FALSE(ck.ok());
  EXPECT_EQ(ck.status().code(), Code::kCorrupt);
  EXPECT_EQ(ck.status().message().rfind("model.safetensors: ", 0), 0u) << ck.status().message();
}

TEST(LocalSource, AFifoIsRefusedWithoutBlocking) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("vramfit-fifo-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  ASSERT_EQ(::mkfifo((dir / "model.safetensors").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((dir / "config.json").c_str(), 0600), 0);
  auto src = OpenLocalDirectory(dir.string());
  ASSERT_TRUE(src.ok());
  auto ck = ReadCheckpoint(**src, {});
  ASSERT_FALSE(ck.ok());
  EXPECT_EQ(ck.status().message(), (dir / "config.json").string() + ": not a regular file");
  EXPECT_EQ((*src)->ReadAt("model.safetensors", 0, 1, nullptr).code(), Code::kInvalidArgument);
  fs::remove_all(dir);
  EXPECT_EQ(OpenLocalDirectory(dir.string()).status().code(), Code::kNotFound);
}

TEST(LocalSource, ListsFilesAndFoldersSorted) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("vramfit-list-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "original");
  std::ofstream(dir / "b.json") << "{}";
  std::ofstream(dir / "a.safetensors") << OneTensor("a", 1);
  auto src = OpenLocalDirectory(dir.string());
  ASSERT_TRUE(src.ok());
  EXPECT_EQ(*(*src)->List(), (std::vector<std::string>{"a.safetensors", "b.json", "original/"}));
  EXPECT_EQ(*(*src)->Size("b.json"), 2u);
  EXPECT_EQ((*src)->Size("nope").status().code(), Code::kNotFound);
  EXPECT_EQ((*src)->Size("original").status().code(), Code::kInvalidArgument);
  char c = 0;
  EXPECT_EQ((*src)->ReadAt("b.json", 1, 2, &c).code(), Code::kCorrupt);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace vramfit
