// Every handcrafted broken GGUF in tests/bad/ (written by tools/make-bad-gguf.py) gives a
// kCorrupt error whose message names the file, the byte offset and what was expected. The CLI
// maps these to exit code 2 (tests/cli_test.cmake checks one end to end).
#include <gtest/gtest.h>

#include "vramfit/inspect.h"

namespace vramfit {
namespace {

struct Case {
  const char* path;  // under tests/bad/
  const char* message;
};

const Case kCases[] = {
    {"bad-magic.gguf",
     "bad-magic.gguf: byte 0: expected the magic \"GGUF\" (47 47 55 46), found 47 47 4d 4c: not a "
     "GGUF file"},
    {"version-1.gguf",
     "version-1.gguf: byte 4: GGUF version 1 (2023, 32-bit counts) is not read; expected version "
     "2 or 3: convert the model again with a current llama.cpp"},
    {"big-endian.gguf",
     "big-endian.gguf: byte 4: version reads 0x03000000, version 3 byte-swapped: this is a "
     "big-endian GGUF file; only little-endian files are read"},
    {"counts-past-end.gguf",
     "counts-past-end.gguf: byte 8: tensor count 1099511627776 needs at least 24 bytes a tensor, "
     "but the file holds 168 bytes after byte 24"},
    {"string-2p63.gguf",
     "string-2p63.gguf: byte 24: metadata key 0: string length 9223372036854775808 exceeds the "
     "1,073,741,824-byte cap of the reference reader"},
    {"unknown-value-type.gguf",
     "unknown-value-type.gguf: byte 45: key \"general.weird\": value type: unknown value type 13 "
     "(expected 0-12: u8, i8, u16, i16, u32, i32, f32, bool, string, array, u64, i64, f64)"},
    {"unknown-ggml-type.gguf",
     "unknown-ggml-type.gguf: byte 98: tensor \"a\": unknown ggml type 99 (expected one of the 35 "
     "types ggml knows, ids 0-42)"},
    {"removed-ggml-type.gguf",
     "removed-ggml-type.gguf: byte 98: tensor \"a\": removed ggml type 4 (expected one of the 35 "
     "types ggml knows, ids 0-42)"},
    {"misaligned.gguf",
     "misaligned.gguf: byte 102: tensor \"a\": data offset 8 is not a multiple of the alignment "
     "32; expected 0"},
    {"overlap.gguf",
     "overlap.gguf: byte 143: tensor \"b\": data offset 32 overlaps tensor \"a\" (data bytes [0, "
     "64)); expected 64"},
    {"gap.gguf",
     "gap.gguf: byte 143: tensor \"b\": data offset 128 leaves a gap of 64 bytes after tensor "
     "\"a\" (data bytes [0, 64)); expected 64"},
    {"truncated.gguf",
     "truncated.gguf: byte 143: tensor \"b\": data bytes [64, 128) end at file byte 288, past the "
     "end of the file (260 bytes): the file is truncated"},
    {"alignment-3.gguf",
     "alignment-3.gguf: byte 69: general.alignment must be a u32 power of two, found u32 3"},
    {"block-remainder.gguf",
     "block-remainder.gguf: byte 98: tensor \"a\": ne[0] = 33 is not a multiple of Q4_K's block "
     "of 256 elements"},
    {"too-many-dims.gguf",
     "too-many-dims.gguf: byte 78: tensor \"a\": 5 dimensions, expected at most 4"},
    {"bool-2.gguf",
     "bool-2.gguf: byte 48: key \"general.flag\": value: a bool must be 0 or 1, found 2"},
    {"duplicate-key.gguf",
     "duplicate-key.gguf: byte 69: duplicate key \"general.architecture\""},
    {"duplicate-tensor.gguf",
     "duplicate-tensor.gguf: byte 110: duplicate tensor name \"a\""},
    {"name-64.gguf",
     "name-64.gguf: byte 69: tensor "
     "\"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn\": name of 64 bytes, "
     "expected fewer than 64"},
    {"nesting-bomb.gguf",
     "nesting-bomb.gguf: byte 144: key \"general.bomb\": arrays nested more than 8 deep (an array "
     "nesting bomb?)"},
    {"array-past-end.gguf",
     "array-past-end.gguf: byte 59: key \"general.big\": array of 1073741824 u64 needs 8589934592 "
     "bytes, but the file ends at byte 192: the file is truncated or the count is wrong"},
    {"short.gguf",
     "short.gguf: file is 20 bytes, expected at least 24 (magic, version and the two counts)"},
};

TEST(BadGguf, EveryFileGivesItsError) {
  const std::string bad = std::string(VRAMFIT_SOURCE_DIR) + "/tests/bad";
  for (const Case& c : kCases) {
    auto inv = InspectModel(bad + "/" + c.path, {});
    ASSERT_FALSE(inv.ok()) << c.path << " was accepted";
    EXPECT_EQ(inv.status().code(), Code::kCorrupt) << c.path << ": " << inv.status().ToString();
    EXPECT_EQ(inv.status().message(), c.message) << c.path;
  }
}

}  // namespace
}  // namespace vramfit
