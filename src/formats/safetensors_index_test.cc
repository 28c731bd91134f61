// model.safetensors.index.json reader.
#include <gtest/gtest.h>

#include "formats/safetensors_index.h"
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

using formats::IndexReader;

// Reads `json` with `reader`; a Status, or the index written out with a check of the table.
std::string ReadWith(const std::string& json, IndexReader reader) {
  SafetensorsIndex index;
  formats::IndexLookup lookup(&index);
  const Status st = formats::ReadSafetensorsIndex(json, "i", reader, &index, &lookup);
  if (!st.ok()) return st.ToString();
  std::string out = std::to_string(index.has_total_size) + " " +
                    std::to_string(index.total_size) + "\n";
  for (const auto& s : index.shards) out += s + "\n";
  for (uint32_t i = 0; i < index.weight_map.size(); ++i) {
    const auto& e = index.weight_map[i];
    for (uint32_t guess : {0u, i, i + 1}) {  // right, wrong or past the end
      uint32_t at = guess;
      EXPECT_TRUE(lookup.Find(e.tensor, &at) && at == i) << e.tensor;
    }
    uint32_t at = i;
    EXPECT_FALSE(lookup.Find(std::string(e.tensor) + "~", &at));
    out += std::string(e.tensor) + " " + std::to_string(e.shard) + "\n";
  }
  return out;
}

// The fast reader reads the indexes writers emit (names in order or not), and agrees with the
// full one on every one-byte change of them: it may give up, never differ; messages come from
// the full reader.
TEST(SafetensorsIndexReaders, AgreeOnEveryOneByteChange) {
  const std::string indexes[] = {
      R"({"metadata":{"total_size":120,"format":"pt"},)"
      R"("weight_map":{"a":"s1.safetensors","b.0":"s2.safetensors","c":"s1.safetensors"}})",
      "{\n  \"weight_map\": {\n    \"x\": \"m.safetensors\"\n  },\n  \"metadata\" : "
      "{ \"total_size\" : 0 }\n}\n",
      R"({"weight_map":{}})",
      // Not in name order: the lookup is a hash table from the first name out of order.
      R"({"weight_map":{"a":"s","c":"s","b":"t","d":"s","a.b":"t"}})",
  };
  for (const std::string& json : indexes) {
    EXPECT_EQ(ReadWith(json, IndexReader::kFastOnly), ReadWith(json, IndexReader::kFullOnly));
  }
  const std::string bytes = std::string("\"\\ 0123456789-+.eE,:[]{}/\x01\t\n", 28) + "a";
  int cases = 0;
  for (const std::string& json : indexes) {
    for (size_t i = 0; i <= json.size(); ++i) {
      std::string j = json;
      if (i < j.size()) j.erase(i, 1);
      EXPECT_EQ(ReadWith(j, IndexReader::kFastFirst), ReadWith(j, IndexReader::kFullOnly)) << j;
      ++cases;
      if (i == json.size()) continue;
      for (char c : bytes) {
        j = json;
        j[i] = c;
        EXPECT_EQ(ReadWith(j, IndexReader::kFastFirst), ReadWith(j, IndexReader::kFullOnly))
            << j;
        ++cases;
      }
    }
  }
  EXPECT_GT(cases, 5000);
  // Escapes, a float total_size, null metadata, another key: the fast reader gives up.
  for (const char* json :
       {"{\"weight_map\":{\"a\\u0041\":\"s\"}}",
        R"({"metadata":{"total_size":1.0},"weight_map":{}})",
        R"({"metadata":null,"weight_map":{}})", R"({"weight_map":{},"x":1})"}) {
    EXPECT_EQ(ReadWith(json, IndexReader::kFastOnly), "unsupported: i: the fast reader gives up")
        << json;
    EXPECT_EQ(ReadWith(json, IndexReader::kFastFirst), ReadWith(json, IndexReader::kFullOnly));
  }
}

}  // namespace
}  // namespace vramfit
