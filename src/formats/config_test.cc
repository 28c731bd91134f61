// config.json reader: types, ranges and nested objects, with key paths in errors.
#include "formats/config.h"

#include <gtest/gtest.h>

namespace vramfit::formats {
namespace {

TEST(ConfigJson, ReadsNestedTextAndVisionAndQuant) {
  auto r = ParseConfigJson(R"({"architectures":["X"],"model_type":"qwen3_5_moe",
    "text_config":{"hidden_size":2048,"num_hidden_layers":40,"layer_types":["linear_attention"],)"
        R"("dtype":"bfloat16"},
    "vision_config":{"depth":27,"hidden_size":1152,"deepstack_visual_indexes":[]},
    "quantization_config":{"quant_method":"compressed-tensors","format":"pack-quantized",
      "config_groups":{"g":{"targets":["Linear"],"weights":{"num_bits":4,"strategy":"group",)"
          R"("group_size":128,"actorder":null}}},
      "ignore":["lm_head","re:.*visual.*"]}})",
                           "config.json");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->text_config);
  EXPECT_EQ(*r->text_config->hidden_size, 2048);
  EXPECT_EQ(r->text_config->dtype, "bfloat16");
  EXPECT_EQ(*r->vision_config.depth, 27);
  EXPECT_EQ(r->quantization_config.config_groups.size(), 1u);
  EXPECT_EQ(*r->quantization_config.config_groups[0].num_bits, 4);
  EXPECT_EQ(r->quantization_config.ignore.size(), 2u);
}

TEST(ConfigJson, IntegralFloatsAndNulls) {
  auto r = ParseConfigJson(
      R"({"hidden_size":4096.0,"sliding_window":null,"torch_dtype":"float16"})", "c");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r->hidden_size, 4096);
  EXPECT_FALSE(r->sliding_window.has_value());
  EXPECT_EQ(r->torch_dtype, "float16");
}

TEST(ConfigJson, ALaterListReplacesAnEarlierOne) {
  // A catalog entry over its base repeats keys; as with Python's json module, the later wins.
  auto r = ParseConfigJson(
      R"({"architectures":["Base"],"layer_types":["a","b"],"architectures":["Entry"],
    "layer_types":["c"]})",
      "c");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->architectures, std::vector<std::string>{"Entry"});
  EXPECT_EQ(r->layer_types, std::vector<std::string>{"c"});
}

TEST(ConfigJson, Errors) {
  auto msg = [](const char* json) {
    return ParseConfigJson(json, "config.json").status().message();
  };
  EXPECT_EQ(msg(R"({"num_hidden_layers":-3})"),
            "config.json: \"num_hidden_layers\": expected an integer in [1, 4096], found -3");
  EXPECT_EQ(msg(R"({"hidden_size":"4096"})"),
            "config.json: \"hidden_size\": expected an integer in [1, 16777216], found a string "
            "(\"4096\")");
  EXPECT_EQ(msg(R"({"text_config":"abc"})"),
            "config.json: \"text_config\": expected an object, found a string (\"abc\")");
  EXPECT_EQ(
      msg(R"({"text_config":{"vocab_size":1.5}})"),
      "config.json: \"text_config\".\"vocab_size\": expected an integer, found a number (1.5)");
  EXPECT_EQ(
      msg(R"({"tie_word_embeddings":"yes"})"),
      "config.json: \"tie_word_embeddings\": expected true or false, found a string (\"yes\")");
  EXPECT_EQ(msg(R"({"quantization_config":{"config_groups":{"g":{"weights":{"num_bits":99}}}}})"),
            "config.json: "
            "\"quantization_config\".\"config_groups\".\"g\".\"weights\".\"num_bits\": expected "
            "an integer in [1, 64], found 99");
  EXPECT_EQ(msg(R"({"layer_types":["full_attention", 3]})"),
            "config.json: \"layer_types[1]\": expected a string, found a number (3)");
  EXPECT_EQ(msg("[]"), "config.json: expected a JSON object, found an array");
  // simdjson says what, the pull reader where (and under which key).
  EXPECT_EQ(msg("{\"a\":"),
            "config.json: \"a\": byte 5: invalid JSON: expected a value, found the end of the "
            "text");
}

}  // namespace
}  // namespace vramfit::formats
