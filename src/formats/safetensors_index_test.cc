// model.safetensors.index.json reader.
#include <gtest/gtest.h>

#include "vramfit/formats.h"

namespace vramfit {
namespace {

TEST(SafetensorsIndex, Parses) {
  auto r = ParseSafetensorsIndex(
      R"({"metadata":{"total_size":120,"total_parameters":60},)"
      R"("weight_map":{"a":"s1.safetensors","b":"s2.safetensors","c":"s1.safetensors"}})",
      "index.json");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->has_total_size);
  EXPECT_EQ(r->total_size, 120u);
  EXPECT_EQ(r->weight_map.size(), 3u);
  EXPECT_EQ(r->shards, (std::vector<std::string>{"s1.safetensors", "s2.safetensors"}));
  EXPECT_EQ(r->weight_map[2].tensor, "c");
  EXPECT_EQ(r->weight_map[2].shard, 0u);
}

TEST(SafetensorsIndex, FloatTotalSizeAndNullMetadata) {
  EXPECT_EQ(ParseSafetensorsIndex(R"({"metadata":{"total_size":1.0e3},"weight_map":{}})", "i")
                ->total_size,
            1000u);
  EXPECT_FALSE(ParseSafetensorsIndex(R"({"metadata":null,"weight_map":{}})", "i")->has_total_size);
}

TEST(SafetensorsIndex, Errors) {
  auto msg = [](const char* json) {
    return ParseSafetensorsIndex(json, "index.json").status().message();
  };
  EXPECT_EQ(msg(R"({"metadata":{}})"), "index.json: missing key \"weight_map\"");
  EXPECT_EQ(
      msg(R"({"weight_map":{"a":"../../etc/passwd"}})"),
      "index.json: \"weight_map\".\"a\": shard name \"../../etc/passwd\" is not a plain file name "
      "inside the checkpoint directory");
  EXPECT_EQ(
      msg(R"({"weight_map":{"a":3}})"),
      "index.json: \"weight_map\".\"a\": expected a shard file name (string), found a number");
  EXPECT_EQ(msg(R"({"weight_map":{"a":"x","a":"y"}})"),
            "index.json: \"weight_map\": duplicate tensor name \"a\"");
  EXPECT_EQ(msg(R"({"metadata":{"total_size":-5},"weight_map":{}})"),
            "index.json: \"metadata\".\"total_size\": must be a non-negative integer, found -5");
  EXPECT_EQ(msg(R"({"weight_map":[]})"),
            "index.json: \"weight_map\" must be an object, found an array");
  EXPECT_EQ(msg(""),
            "index.json: expected a JSON object, found no JSON at all (empty or only whitespace)");
}

}  // namespace
}  // namespace vramfit
