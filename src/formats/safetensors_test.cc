// safetensors header reader: the reference reader's rules, and the exact error texts.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "formats/safetensors_readers.h"
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

// Both readers on one image: the same result, or the same error, down to every byte of it.
void ExpectReadersAgree(const std::string& img, uint64_t file_size, const std::string& what) {
  using formats::HeaderReader;
  auto fast = formats::ParseSafetensorsWith(img, file_size, "m.safetensors",
                                            HeaderReader::kFastFirst);
  auto full = formats::ParseSafetensorsWith(img, file_size, "m.safetensors",
                                            HeaderReader::kFullOnly);
  ASSERT_EQ(fast.ok(), full.ok()) << what << "\n" << fast.status().ToString() << "\n"
                                  << full.status().ToString();
  if (!fast.ok()) {
    EXPECT_EQ(fast.status().code(), full.status().code()) << what;
    EXPECT_EQ(fast.status().message(), full.status().message()) << what;
    return;
  }
  EXPECT_EQ(fast->origin, full->origin) << what;
  EXPECT_EQ(fast->header_length, full->header_length) << what;
  EXPECT_EQ(fast->file_size, full->file_size) << what;
  EXPECT_EQ(fast->metadata, full->metadata) << what;
  ASSERT_EQ(fast->tensors.size(), full->tensors.size()) << what;
  for (size_t i = 0; i < fast->tensors.size(); ++i) {
    const TensorInfo& a = fast->tensors[i];
    const TensorInfo& b = full->tensors[i];
    EXPECT_EQ(a.name, b.name) << what;
    EXPECT_EQ(a.dtype, b.dtype) << what;
    EXPECT_EQ(a.shape, b.shape) << what;
    EXPECT_EQ(a.begin, b.begin) << what;
    EXPECT_EQ(a.end, b.end) << what;
    EXPECT_EQ(a.elements, b.elements) << what;
  }
}

// Headers as writers emit them take the fast reader (a slower reading of them is a regression
// no other test sees).
TEST(SafetensorsReaders, WritersHeadersTakeTheFastReader) {
  using formats::HeaderReader;
  const std::pair<std::string, uint64_t> headers[] = {
      {std::string(R"({"__metadata__":{"format":"pt"},"a":{"dtype":"BF16","shape":[2,3],)"
                   R"("data_offsets":[0,12]},"b.c":{"dtype":"I32","shape":[],)"
                   R"("data_offsets":[12,16]}})") + "      ", 16},
      {std::string(" {\n  \"b\": {\"shape\": [ 2 ], \"data_offsets\" : [4, 8], \"dtype\": "
                   "\"F16\"},\n  \"a\": {\"dtype\": \"F16\", \"shape\": [0, 7], "
                   "\"data_offsets\": [0, 0]}, \"z\": {\"dtype\": \"U8\", \"shape\": [4], "
                   "\"data_offsets\": [0, 4]}\n}\t"), 8},
      {std::string("{}"), 0},
  };
  for (const auto& [header, data] : headers) {
    const std::string img = Image(header, data);
    auto r = formats::ParseSafetensorsWith(img, img.size(), "m", HeaderReader::kFastOnly);
    EXPECT_TRUE(r.ok()) << header << ": " << r.status().ToString();
    ExpectReadersAgree(img, img.size(), header);
  }
  // A name with an escape: the fast reader gives up, the full one reads it.
  const std::string img = Image(R"({"a\u0041":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})",
                                1);
  EXPECT_EQ(formats::ParseSafetensorsWith(img, img.size(), "m", HeaderReader::kFastOnly)
                .status().code(), Code::kUnsupported);
  auto r = ParseSafetensors(img, img.size(), "m");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->tensors[0].name, "aA");
}

// Every one-byte change of valid headers (deleted, or replaced by a byte that matters to the
// grammar): the fast reader may give up, never differ.
TEST(SafetensorsReaders, AgreeOnEveryOneByteChange) {
  const std::string headers[] = {
      R"({"__metadata__":{"format":"pt","k":"v"},"w":{"dtype":"F16","shape":[2,3],)"
      R"("data_offsets":[0,12]},"x.0":{"dtype":"U8","shape":[4],"data_offsets":[12,16]}})",
      R"( {"s" : {"data_offsets":[0,8], "shape":[], "dtype":"F64"} , "t":{"dtype":"BOOL",)"
      R"("shape":[10,0],"data_offsets":[8,8]}} )",
      R"({"a":{"dtype":"I64","shape":[18446744073709551615,0],"data_offsets":[0,0]}})",
  };
  const std::string bytes = std::string("\"\\ 0123456789-+.eE,:[]{}\x01\t\n", 27) + "a";
  int cases = 0;
  for (const std::string& header : headers) {
    for (uint64_t data : {0, 8, 16}) {
      for (size_t i = 0; i <= header.size(); ++i) {
        std::string h = header;
        if (i < h.size()) h.erase(i, 1);
        const std::string img = Image(h, data);
        ExpectReadersAgree(img, img.size(), h);
        ++cases;
        if (i == header.size()) continue;
        for (char c : bytes) {
          h = header;
          h[i] = c;
          const std::string img2 = Image(h, data);
          ExpectReadersAgree(img2, img2.size(), h);
          ++cases;
        }
      }
    }
  }
  EXPECT_GT(cases, 10000);
}

// The broken files of the test suite and the fuzzer's seeds.
TEST(SafetensorsReaders, AgreeOnTheBrokenFilesAndTheFuzzSeeds) {
  namespace fs = std::filesystem;
  const fs::path root = VRAMFIT_SOURCE_DIR;
  int files = 0;
  for (const fs::path& dir : {root / "tests/bad", root / "fuzz/corpus/safetensors",
                             root / "tests/hostile/escape-names"}) {
    for (const auto& e : fs::directory_iterator(dir)) {
      if (dir == root / "tests/bad" && e.path().extension() != ".safetensors") continue;
      std::ifstream in(e.path(), std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      ExpectReadersAgree(ss.str(), ss.str().size(), e.path().string());
      ++files;
    }
  }
  EXPECT_GT(files, 20);
}

}  // namespace
}  // namespace vramfit
