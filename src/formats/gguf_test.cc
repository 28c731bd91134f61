// GGUF reader: every value type, nested arrays and their cap, the ggml type table, the
// reversed dimension order, alignment, versions, a prefix that grows only as the header
// needs, split names, and a header read over a source that never reads the data.
#include "formats/gguf.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <set>

#include "sources/gguf_read.h"
#include "testutil/gguf_writer.h"
#include "testutil/hollow.h"
#include "vramfit/source.h"

namespace vramfit {
namespace {

using testing::GgufWriter;

std::string Le(uint64_t v, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return out;
}

Result<GgufFile> ParseImage(const GgufWriter& w) {
  const std::string image = w.Image();
  return ParseGguf(image, image.size(), "t.gguf");
}

TEST(Gguf, ReadsEveryValueType) {
  GgufWriter w;
  w.U8("u8", 200);
  w.Raw("i8", 1, Le(0xfe, 1));
  w.Raw("u16", 2, Le(65535, 2));
  w.Raw("i16", 3, Le(0x8000, 2));
  w.U32("u32", 4000000000u);
  w.I32("i32", -7);
  w.F32("f32", 0.5f);
  w.Bool("bool", true);
  w.Str("string", "qwen3");
  w.I32Array("array", {1, 2, 3});
  w.U64("u64", uint64_t{1} << 40);
  w.Raw("i64", 11, Le(static_cast<uint64_t>(-5), 8));
  w.F64("f64", 1e6);
  w.StrArray("tokens", 5);
  w.BoolArray("bools", {true, false});
  w.NestedArray("nested", 3);
  auto f = ParseImage(w);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  int64_t v = 0;
  EXPECT_TRUE(f->Int("u8", &v) && v == 200);
  EXPECT_TRUE(f->Int("i8", &v) && v == -2);
  EXPECT_TRUE(f->Int("u16", &v) && v == 65535);
  EXPECT_TRUE(f->Int("i16", &v) && v == -32768);
  EXPECT_TRUE(f->Int("u32", &v) && v == 4000000000);
  EXPECT_TRUE(f->Int("i32", &v) && v == -7);
  EXPECT_TRUE(f->Int("u64", &v) && v == int64_t{1} << 40);
  EXPECT_TRUE(f->Int("i64", &v) && v == -5);
  EXPECT_TRUE(f->Int("bool", &v) && v == 1);
  EXPECT_FALSE(f->Int("f32", &v));
  EXPECT_EQ(f->Find("f32")->f, 0.5);
  EXPECT_EQ(f->Find("f64")->f, 1e6);
  EXPECT_EQ(f->String("string"), "qwen3");
  EXPECT_EQ(f->Find("array")->ints, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_TRUE(f->Find("array")->IsIntArray());
  EXPECT_EQ(f->Find("tokens")->array_count, 5u);
  EXPECT_EQ(f->Find("tokens")->array_type, GgufType::kString);
  EXPECT_EQ(f->Find("bools")->ints, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(f->Find("nested")->array_type, GgufType::kArray);
  EXPECT_EQ(f->metadata.size(), 16u);
}

TEST(Gguf, NestingCapIsEightDeep) {
  GgufWriter ok;
  ok.NestedArray("n", 8);
  EXPECT_TRUE(ParseImage(ok).ok());
  GgufWriter deep;
  deep.NestedArray("n", 9);
  auto f = ParseImage(deep);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().message(),
            "t.gguf: byte 133: key \"n\": arrays nested more than 8 deep (an array nesting "
            "bomb?)");
}

TEST(Gguf, ShapesAreOutermostFirstAndBytesComeFromBlocks) {
  GgufWriter w;
  w.Tensor("blk.0.attn_q.weight", Dtype::kQ4_K, {4096, 2048});  // ne = [2048, 4096]
  w.Tensor("blk.0.attn_norm.weight", Dtype::kF32, {2048});
  w.Tensor("blk.0.ffn_down.weight", Dtype::kQ6_K, {2048, 6144});
  w.Tensor("blk.0.ffn_up_exps.weight", Dtype::kMXFP4, {8, 768, 2048});
  const std::string image = w.Image();
  // ne[0] of the first tensor is the innermost dimension: 2048, written first.
  const size_t at = image.find("blk.0.attn_q.weight") + 19;
  EXPECT_EQ(image.substr(at, 4), Le(2, 4));
  EXPECT_EQ(image.substr(at + 4, 8), Le(2048, 8));
  auto f = ParseGguf(image, image.size(), "t.gguf");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_EQ(f->tensors.size(), 4u);
  const TensorInfo& q = f->tensors[0];
  EXPECT_EQ(q.shape, (Shape{4096, 2048}));
  EXPECT_EQ(q.dtype, Dtype::kQ4_K);
  EXPECT_EQ(q.bytes(), 4096u * 2048 / 256 * 144);
  EXPECT_EQ(q.elements, 4096u * 2048);
  EXPECT_EQ(f->tensors[1].bytes(), 2048u * 4);
  EXPECT_EQ(f->tensors[1].begin, q.bytes());  // 4,718,592 is a multiple of 32
  EXPECT_EQ(f->tensors[2].bytes(), 2048u * 6144 / 256 * 210);
  EXPECT_EQ(f->tensors[3].bytes(), 8u * 768 * 2048 / 32 * 17);
  EXPECT_EQ(f->tensors[3].shape, (Shape{8, 768, 2048}));
  EXPECT_EQ(f->data_offset % 32, 0u);
  EXPECT_EQ(f->data_offset, w.Header().size());
  EXPECT_EQ(f->data_bytes, w.data_bytes());
}

TEST(Gguf, VersionTwoAndAnAlignmentOf64) {
  GgufWriter w(2);
  w.U32("general.alignment", 64);
  w.set_alignment(64);
  w.Tensor("a", Dtype::kF32, {3});  // 12 bytes, next at 64
  w.Tensor("b", Dtype::kF32, {3});
  auto f = ParseImage(w);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->version, 2u);
  EXPECT_EQ(f->alignment, 64u);
  EXPECT_EQ(f->tensors[1].begin, 64u);
  EXPECT_EQ(f->data_offset % 64, 0u);
}

TEST(Gguf, EveryTypeHasItsBlockAndSize) {
  std::set<uint32_t> ids;
  for (const GgmlType& t : formats::GgmlTypes()) {
    EXPECT_TRUE(ids.insert(t.id).second) << t.id;
    EXPECT_EQ(FindGgmlType(t.id), &t);
    EXPECT_EQ(GgmlTypeOf(t.dtype), &t);
    EXPECT_GT(t.block, 0u);
  }
  EXPECT_EQ(ids.size(), 35u);
  EXPECT_EQ(FindGgmlType(4), nullptr);   // Q4_2, removed
  EXPECT_EQ(FindGgmlType(43), nullptr);  // past GGML_TYPE_COUNT
  EXPECT_DOUBLE_EQ(GgmlBitsPerWeight(*FindGgmlType(12)), 4.5);     // Q4_K
  EXPECT_DOUBLE_EQ(GgmlBitsPerWeight(*FindGgmlType(14)), 6.5625);  // Q6_K
  EXPECT_DOUBLE_EQ(GgmlBitsPerWeight(*FindGgmlType(16)), 2.0625);  // IQ2_XXS
  EXPECT_STREQ(DtypeName(FindGgmlType(39)->dtype), "MXFP4");
  Dtype d;
  EXPECT_FALSE(ParseDtype("Q4_K", &d));  // not a safetensors dtype
}

TEST(Gguf, PrefixGrowsOnlyAsTheHeaderNeeds) {
  GgufWriter w;
  w.Str("general.architecture", "llama");
  w.StrArray("tokenizer.ggml.tokens", 1000);
  w.Tensor("a", Dtype::kF32, {1024, 1024});
  const std::string image = w.Image();
  const uint64_t header = w.Header().size();
  auto p = ParseGgufPrefix(std::string_view(image).substr(0, 64), image.size(), "t.gguf");
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->file);
  EXPECT_GT(p->need, 64u);
  EXPECT_LE(p->need, header);
  // The header's bytes are enough; the data is never needed.
  p = ParseGgufPrefix(std::string_view(image).substr(0, header), image.size(), "t.gguf");
  ASSERT_TRUE(p.ok() && p->file) << (p.ok() ? "needs more" : p.status().ToString());
  EXPECT_EQ(p->file->Find("tokenizer.ggml.tokens")->array_count, 1000u);
}

TEST(Gguf, SplitNames) {
  std::string prefix;
  int part = 0, count = 0;
  ASSERT_TRUE(ParseGgufSplitName("Qwen3-8B-Q4_K_M-00002-of-00003.gguf", &prefix, &part, &count));
  EXPECT_EQ(prefix, "Qwen3-8B-Q4_K_M");
  EXPECT_EQ(part, 2);
  EXPECT_EQ(count, 3);
  EXPECT_EQ(GgufSplitName(prefix, 1, 3), "Qwen3-8B-Q4_K_M-00001-of-00003.gguf");
  EXPECT_FALSE(ParseGgufSplitName("model-00004-of-00003.gguf", &prefix, &part, &count));
  EXPECT_FALSE(ParseGgufSplitName("model-00001-of-00003.safetensors", &prefix, &part, &count));
  EXPECT_FALSE(ParseGgufSplitName("-00001-of-00003.gguf", &prefix, &part, &count));
}

// A source that counts the bytes read.
class Counting : public ByteSource {
 public:
  explicit Counting(std::unique_ptr<ByteSource> s) : s_(std::move(s)) {}
  std::string Label() const override { return s_->Label(); }
  std::string Where(std::string_view f) const override { return s_->Where(f); }
  Result<std::vector<std::string>> List() const override { return s_->List(); }
  Result<uint64_t> Size(std::string_view f) const override { return s_->Size(f); }
  Status ReadAt(std::string_view f, uint64_t off, size_t n, char* out) const override {
    read += n;
    return s_->ReadAt(f, off, n, out);
  }
  mutable uint64_t read = 0;

 private:
  std::unique_ptr<ByteSource> s_;
};

TEST(GgufRead, A200GbFileCostsItsHeader) {
  GgufWriter w;
  w.Str("general.architecture", "llama");
  // 228 GB of Q8_0: 25 tensors of [2^18, 2^15], 2^18 x 2^15 / 32 x 34 bytes each.
  for (int i = 0; i < 25; ++i) {
    w.Tensor("blk." + std::to_string(i) + ".ffn_up.weight", Dtype::kQ8_0,
             {uint64_t{1} << 18, uint64_t{1} << 15});
  }
  const std::string dir = testing::MakeTempDir("gguf-200g");
  w.WriteHollow(dir + "/big.gguf");
  auto local = OpenLocalDirectory(dir);
  ASSERT_TRUE(local.ok());
  Counting src(std::move(*local));
  uint64_t bytes = 0;
  auto f = ReadGgufHeader(src, "big.gguf", &bytes);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_GT(f->file_size, uint64_t{200} << 30);
  EXPECT_EQ(src.read, bytes);
  EXPECT_EQ(bytes, kGgufFirstRead);  // one read of the first MiB
  std::filesystem::remove_all(dir);
}

TEST(GgufRead, ALargeHeaderIsReadInGrowingSteps) {
  GgufWriter w;
  w.Str("general.architecture", "llama");
  w.StrArray("tokenizer.ggml.tokens", 600000);  // ~7 MB of strings
  w.Tensor("a", Dtype::kF32, {16});
  auto src = MemorySource("mem", {{"m.gguf", w.Image()}});
  Counting counting(std::move(src));
  uint64_t bytes = 0;
  auto f = ReadGgufHeader(counting, "m.gguf", &bytes);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(counting.read, bytes);
  EXPECT_GE(bytes, w.Header().size() - 32);
  EXPECT_LE(bytes, 2 * w.Header().size());
}

}  // namespace
}  // namespace vramfit
