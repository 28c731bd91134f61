// Every handcrafted broken input in tests/bad/ (written by tools/make-bad-inputs.py) gives
// a clear error: the right code, and a message naming the file, the byte offset or key,
// what was expected and what was found. The CLI maps these to exit code 2.
#include <gtest/gtest.h>

#include "vramfit/inspect.h"

namespace vramfit {
namespace {

struct Case {
  const char* path;  // under tests/bad/
  Code code;
  const char* message;  // exact text, the path of tests/bad written BAD
};

const Case kCases[] = {
    {"truncated.safetensors", Code::kCorrupt,
     "truncated.safetensors: tensors end at data byte 8, but the file holds 3 data bytes after its "
     "64-byte header: the file is truncated"},
    {"short.safetensors", Code::kCorrupt,
     "short.safetensors: file is 3 bytes, expected at least 8 (the little-endian header length)"},
    {"header-past-end.safetensors", Code::kCorrupt,
     "header-past-end.safetensors: byte 0: header length 1000 runs past the end of the file (10 "
     "bytes: "
     "at most 2 header bytes exist); the file is truncated or not safetensors"},
    {"header-2p63.safetensors", Code::kCorrupt,
     "header-2p63.safetensors: byte 0: header length 9223372036854775808 exceeds the "
     "100,000,000-byte "
     "limit of the reference reader (is this a safetensors file?)"},
    {"non-utf8.safetensors", Code::kCorrupt,
     "non-utf8.safetensors: byte 11: expected UTF-8 text, found byte 0xc3 that starts no valid "
     "sequence"},
    {"invalid-json.safetensors", Code::kCorrupt,
     "invalid-json.safetensors: byte 60: invalid JSON: expected ',' or '}', found the end of the "
     "header"},
    {"overlap.safetensors", Code::kCorrupt,
     "overlap.safetensors: tensor \"b\": data_offsets [2, 6]: begin 2 overlaps tensor \"a\" (ends "
     "at 4); "
     "expected begin 4"},
    {"gap.safetensors", Code::kCorrupt,
     "gap.safetensors: tensor \"b\": data_offsets [8, 12]: begin 8 leaves a gap of 4 bytes after "
     "tensor "
     "\"a\" (ends at 4); expected begin 4"},
    {"shape-overflow.safetensors", Code::kCorrupt,
     "shape-overflow.safetensors: tensor \"a\": shape [4294967296, 4294967296, 2] has more "
     "elements than "
     "fit in 64 bits"},
    {"unknown-dtype.safetensors", Code::kCorrupt,
     "unknown-dtype.safetensors: tensor \"a\": unknown dtype \"F12\" (expected one of BOOL, U8, "
     "I8, F8_E5M2, "
     "F8_E4M3, F8_E8M0, F8_E4M3FNUZ, F8_E5M2FNUZ, I16, U16, F16, BF16, I32, U32, F32, F64, I64, "
     "U64, C64, "
     "F4, F6_E2M3, F6_E3M2)"},
    {"metadata-not-string.safetensors", Code::kCorrupt,
     "metadata-not-string.safetensors: \"__metadata__\".\"format\": values must be strings, found "
     "an "
     "object ({\"nested\":1})"},
    {"duplicate-key.safetensors", Code::kCorrupt,
     "duplicate-key.safetensors: duplicate key \"a\" in the header"},
    {"trailing-bytes.safetensors", Code::kCorrupt,
     "trailing-bytes.safetensors: tensors end at data byte 8, but the file holds 12 data bytes "
     "after its "
     "64-byte header: trailing bytes follow the last tensor"},
    {"f4-odd.safetensors", Code::kCorrupt,
     "f4-odd.safetensors: tensor \"a\": shape [3] of F4 is 12 bits, not a whole number of bytes"},
    {"index-missing-shard", Code::kNotFound,
     "model.safetensors.index.json: names shard \"model-00001-of-00002.safetensors\" (1 tensors), "
     "which "
     "does not exist in BAD/index-missing-shard"},
    {"index-missing-tensor", Code::kCorrupt,
     "model.safetensors.index.json: names tensor \"b\" in shard \"s.safetensors\", but that "
     "shard's header "
     "does not hold it"},
    {"index-escapes-dir", Code::kCorrupt,
     "model.safetensors.index.json: \"weight_map\".\"a\": shard name \"../short.safetensors\" is "
     "not a plain "
     "file name inside the checkpoint directory"},
    {"config-missing-field", Code::kCorrupt,
     "BAD/config-missing-field/config.json: \"hidden_size\": missing: every decoder config must "
     "give it"},
    {"config-absurd", Code::kCorrupt,
     "BAD/config-absurd/config.json: \"num_hidden_layers\": expected an integer in [1, 4096], "
     "found -3"},
    {"config-huge-layers", Code::kCorrupt,
     "BAD/config-huge-layers/config.json: \"num_hidden_layers\": expected an integer in [1, "
     "4096], found 1000000000"},
    {"config-text-config-type", Code::kCorrupt,
     "BAD/config-text-config-type/config.json: \"text_config\": expected an object, found a "
     "string (\"qwen3\")"},
    {"config-not-json", Code::kCorrupt,
     "BAD/config-not-json/config.json: byte 0: invalid JSON: expected a value, found 'a'"},
    {"config-layer-types", Code::kCorrupt,
     "BAD/config-layer-types/config.json: \"layer_types[0]\": expected full_attention, "
     "sliding_attention, "
     "chunked_attention or "
     "linear_attention, found \"mamba\" (Mamba2 layers are read for the Granite 4.0 hybrid "
     "and Bamba families)"},
    {"config-wrong-quant", Code::kCorrupt,
     "BAD/config-wrong-quant/config.json: \"quantization_config\": expected an object, found an "
     "array ([\"awq\"])"},
    // Hostile JSON: the key or the byte offset, and what is wrong (issue 11).
    {"escape-name.safetensors", Code::kCorrupt,
     "escape-name.safetensors: tensor \"b\": data_offsets [8, 12]: begin 8 leaves a gap of 4 "
     "bytes after tensor \"\\x1b[2J\\x1b]0;owned\\x07\\n\" (ends at 4); expected begin 4"},
    {"bom.safetensors", Code::kCorrupt,
     "bom.safetensors: byte 8: a UTF-8 byte-order mark (EF BB BF) opens the header: JSON must "
     "not start with one (the reference reader refuses it)"},
    {"lone-surrogate.safetensors", Code::kCorrupt,
     "lone-surrogate.safetensors: byte 11: invalid JSON: lone surrogate \\ud800 in a string: a "
     "high surrogate must be followed by a low one (\\udc00..\\udfff)"},
    {"shape-2p64.safetensors", Code::kCorrupt,
     "shape-2p64.safetensors: tensor \"a\": \"shape\": byte 36: integer 18446744073709551616 "
     "does not fit in 64 bits (the largest is 18446744073709551615)"},
    {"config-bom", Code::kCorrupt,
     "BAD/config-bom/config.json: byte 0: a UTF-8 byte-order mark (EF BB BF) opens the text: JSON "
     "must not "
     "start with one (serde_json and Python's json.loads refuse it; save the file as UTF-8 "
     "without BOM)"},
    {"config-2p64", Code::kCorrupt,
     "BAD/config-2p64/config.json: \"vocab_size\": byte 187: integer 18446744073709551616 does "
     "not fit in 64 "
     "bits (the largest is 18446744073709551615)"},
    {"config-lone-surrogate", Code::kCorrupt,
     "BAD/config-lone-surrogate/config.json: \"model_type\": byte 188: invalid JSON: lone "
     "surrogate \\udc00 in a "
     "string: a low surrogate with no high one before it"},
    {"config-vision-patch-0", Code::kCorrupt,
     "BAD/config-vision-patch-0/config.json: \"vision_config\".\"patch_size\": expected an "
     "integer in [1, 1024], found 0"},
    {"config-vision-merge-0", Code::kCorrupt,
     "BAD/config-vision-merge-0/config.json: \"vision_config\".\"spatial_merge_size\": expected "
     "an integer in [1, 64], "
     "found 0"},
    {"index-2p64", Code::kCorrupt,
     "model.safetensors.index.json: \"metadata\".\"total_size\": byte 28: integer "
     "18446744073709551616 does not fit in 64 bits (the largest is 18446744073709551615)"},
};

TEST(BadInput, EveryFileGivesItsError) {
  const std::string bad = std::string(VRAMFIT_SOURCE_DIR) + "/tests/bad";
  for (const Case& c : kCases) {
    auto inv = InspectModel(bad + "/" + c.path, {});
    ASSERT_FALSE(inv.ok()) << c.path << " was accepted";
    EXPECT_EQ(inv.status().code(), c.code) << c.path << ": " << inv.status().ToString();
    std::string msg = inv.status().message();
    for (size_t at; (at = msg.find(bad)) != std::string::npos;) msg.replace(at, bad.size(), "BAD");
    EXPECT_EQ(msg, c.message) << c.path;
  }
}

}  // namespace
}  // namespace vramfit
