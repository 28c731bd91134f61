// safetensors header reader: the reference reader's rules, and the exact error texts.
#include <gtest/gtest.h>

#include "testutil/hollow.h"
#include "vramfit/formats.h"

namespace vramfit {
namespace {

// A file image: 8-byte little-endian length + header + `data` zero bytes.
constexpr auto Image = testing::SafetensorsImage;

Result<SafetensorsFile> Parse(const std::string& header, uint64_t data) {
  const std::string img = Image(header, data);
  return ParseSafetensors(img, img.size(), "m.safetensors");
}

std::string Error(const std::string& header, uint64_t data) {
  auto r = Parse(header, data);
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.status().message();
}

TEST(Safetensors, ParsesTensorsSortedByOffset) {
  auto r = Parse(
      R"({"b":{"dtype":"F16","shape":[2,3],"data_offsets":[8,20]},)"
      R"("a":{"dtype":"I32","shape":[2],"data_offsets":[0,8]},"__metadata__":{"format":"pt"}})",
      20);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->tensors.size(), 2u);
  EXPECT_EQ(r->tensors[0].name, "a");
  EXPECT_EQ(r->tensors[1].name, "b");
  EXPECT_EQ(r->tensors[1].elements, 6u);
  EXPECT_EQ(r->tensors[1].bytes(), 12u);
  EXPECT_EQ(r->metadata.at("format"), "pt");
  EXPECT_EQ(r->data_bytes(), 20u);
}

TEST(Safetensors, AcceptsWhitespaceOnBothSides) {
  auto r = Parse(" \n\t{\"x\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[0,3]}}    ", 3);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->tensors[0].bytes(), 3u);
}

TEST(Safetensors, ScalarAndEmptyTensors) {
  auto r = Parse(R"({"s":{"dtype":"F32","shape":[],"data_offsets":[0,4]},)"
                 R"("z":{"dtype":"F32","shape":[0,7],"data_offsets":[4,4]}})", 4);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->tensors[0].elements, 1u);
}

TEST(Safetensors, SubByteDtypes) {
  // F4: 2 elements per byte; F6: 4 elements per 3 bytes.
  EXPECT_TRUE(Parse(R"({"f":{"dtype":"F4","shape":[4,2],"data_offsets":[0,4]}})", 4).ok());
  EXPECT_TRUE(Parse(R"({"f":{"dtype":"F6_E2M3","shape":[8],"data_offsets":[0,6]}})", 6).ok());
  EXPECT_EQ(Error(R"({"f":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})", 2),
            "m.safetensors: tensor \"f\": shape [3] of F4 is 12 bits, not a whole number of bytes");
}

TEST(Safetensors, EveryDtypeName) {
  for (const char* d :
       {"BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "F8_E8M0", "F8_E4M3FNUZ", "F8_E5M2FNUZ", "I16",
        "U16", "F16", "BF16", "I32", "U32", "F32", "F64", "I64", "U64", "C64"}) {
    Dtype dt;
    ASSERT_TRUE(ParseDtype(d, &dt)) << d;
    EXPECT_STREQ(DtypeName(dt), d);
    const uint64_t bytes = DtypeBits(dt) / 8 * 2;
    auto r = Parse(std::string(R"({"t":{"dtype":")") + d + R"(","shape":[2],"data_offsets":[0,)" +
                       std::to_string(bytes) + "]}}", bytes);
    EXPECT_TRUE(r.ok()) << d << ": " << r.status().ToString();
  }
}

TEST(Safetensors, Errors) {
  EXPECT_EQ(
      Error(
          R"({"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]},"b":{"dtype":"F16",)"
          R"("shape":[2],"data_offsets":[6,10]}})",
          10),
      "m.safetensors: tensor \"b\": data_offsets [6, 10]: begin 6 leaves a gap of 2 bytes after "
      "tensor \"a\" (ends at 4); expected begin 4");
  EXPECT_EQ(
      Error(
          R"({"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]},"b":{"dtype":"F16",)"
          R"("shape":[2],"data_offsets":[2,6]}})",
          6),
      "m.safetensors: tensor \"b\": data_offsets [2, 6]: begin 2 overlaps tensor \"a\" (ends at "
      "4); "
      "expected begin 4");
  EXPECT_EQ(Error(R"({"a":{"dtype":"F16","shape":[3],"data_offsets":[0,4]}})", 4),
            "m.safetensors: tensor \"a\": data_offsets [0, 4] cover 4 bytes, expected 6 (shape [3] "
            "of F16)");
  EXPECT_EQ(Error(R"({"a":{"dtype":"F12","shape":[3],"data_offsets":[0,4]}})", 4).substr(0, 48),
            "m.safetensors: tensor \"a\": unknown dtype \"F12\" (");
  EXPECT_EQ(
      Error(R"({"a":{"dtype":"F16","shape":[4294967296,4294967296,16],"data_offsets":[0,4]}})", 4),
      "m.safetensors: tensor \"a\": shape [4294967296, 4294967296, 16] has more elements than fit "
      "in 64 bits");
  EXPECT_EQ(Error(R"({"a":{"dtype":"F16","shape":[-1],"data_offsets":[0,4]}})", 4),
            "m.safetensors: tensor \"a\": shape[0] must be a non-negative integer, found -1");
  EXPECT_EQ(Error(R"({"__metadata__":{"n":1}})", 0),
            "m.safetensors: \"__metadata__\".\"n\": values must be strings, found a number (1)");
  EXPECT_EQ(
      Error(
          R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],)"
          R"("data_offsets":[1,2]}})",
          2),
      "m.safetensors: duplicate key \"a\" in the header");
  EXPECT_EQ(Error(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 3),
            "m.safetensors: tensors end at data byte 1, but the file holds 3 data bytes after its "
            "53-byte header: trailing bytes follow the last tensor");
  EXPECT_EQ(Error(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})", 2),
            "m.safetensors: tensors end at data byte 4, but the file holds 2 data bytes after its "
            "53-byte header: the file is truncated");
  EXPECT_EQ(Error(R"([1,2])", 0),
            "m.safetensors: byte 8: expected the header to be a JSON object, found an array");
  EXPECT_EQ(Error(R"({"a":{"shape":[1],"data_offsets":[0,1]}})", 1),
            "m.safetensors: tensor \"a\": missing key \"dtype\"");
  EXPECT_EQ(Error(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0]}})", 1),
            "m.safetensors: tensor \"a\": \"data_offsets\" must be [begin, end], found [0]");
}

TEST(Safetensors, NonUtf8NamesTheByte) {
  std::string header = "{\"a\xff\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}";
  EXPECT_EQ(
      Error(header, 1),
      "m.safetensors: byte 11: expected UTF-8 text, found byte 0xff that starts no valid sequence");
}

TEST(Safetensors, HeaderLengthChecks) {
  EXPECT_EQ(ParseSafetensors("abc", 3, "m").status().message(),
            "m: file is 3 bytes, expected at least 8 (the little-endian header length)");
  std::string img(8, '\0');
  img[7] = static_cast<char>(0x80);  // 2^63
  EXPECT_EQ(
      ParseSafetensors(img, 100, "m").status().message(),
      "m: byte 0: header length 9223372036854775808 exceeds the 100,000,000-byte limit of the "
      "reference reader (is this a safetensors file?)");
  std::string img2(8, '\0');
  img2[0] = 100;
  EXPECT_EQ(
      ParseSafetensors(img2 + "{}", 10, "m").status().message(),
      "m: byte 0: header length 100 runs past the end of the file (10 bytes: at most 2 header "
      "bytes exist); the file is truncated or not safetensors");
  // The caller may pass only the header prefix; the real file size drives coverage.
  const std::string full = Image(R"({"a":{"dtype":"U8","shape":[5],"data_offsets":[0,5]}})", 0);
  auto r = ParseSafetensors(full, full.size() + 5, "m");
  EXPECT_TRUE(r.ok()) << r.status().ToString();
}

}  // namespace
}  // namespace vramfit
