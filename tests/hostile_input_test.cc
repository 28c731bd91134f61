// Hostile inputs, one class a test (docs/testing.md lists them): logs that are not UTF-8 and
// lines cut inside a character, strings no renderer may throw on, config divisors of zero,
// names made of terminal escapes, numbers past 64 bits, lone surrogates, byte-order marks,
// symlink loops, FIFOs, a flag given twice, a command line of 100,000 environment words,
// and checkpoints built to be slow or large. Each was a crash, a hang or a quadratic path.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/text.h"
#include "sources/checkpoint.h"
#include "testutil/hollow.h"
#include "vramfit/doctor.h"
#include "vramfit/engine.h"
#include "vramfit/formats.h"
#include "vramfit/inspect.h"
#include "vramfit/inventory.h"
#include "vramfit/model.h"
#include "vramfit/report.h"
#include "vramfit/report_html.h"
#include "vramfit/source.h"

namespace vramfit {
namespace {

namespace fs = std::filesystem;

bool IsUtf8(std::string_view s) { return core::FirstInvalidUtf8(s) == s.size(); }

bool HasRawControl(std::string_view s) {  // anything a terminal acts on, newlines aside
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7F) return true;
  }
  return false;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

using testing::SafetensorsImage;
constexpr auto Image = SafetensorsImage;

std::string Error(const std::string& header, uint64_t data) {
  const std::string img = Image(header, data);
  auto r = ParseSafetensors(img, img.size(), "m.safetensors");
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.status().message();
}

// The message of a config.json and of an index that must be refused.
std::string ConfigError(std::string_view json) {
  auto spec = ModelSpecFromConfigJson(json, "config.json");
  EXPECT_FALSE(spec.ok()) << json;
  return spec.ok() ? "" : spec.status().message();
}
std::string IndexError(std::string_view json, std::string_view origin) {
  auto index = ParseSafetensorsIndex(json, origin);
  EXPECT_FALSE(index.ok()) << json;
  return index.ok() ? "" : index.status().message();
}

LogScan Scan(const std::string& text, size_t max_line = 64 * 1024) {
  std::istringstream in(text);
  ScanOptions o;
  o.max_line_bytes = max_line;
  auto scan = ScanLog(in, o);
  EXPECT_TRUE(scan.ok());
  return scan.ok() ? *scan : LogScan{};
}

// Wall seconds `f` takes. The linear-time tests bound it far above the linear path under the
// sanitizers on a busy machine and far below the quadratic one they replaced.
template <typename F>
double Seconds(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// --- logs that are not UTF-8, and cuts inside a character --------------------------------

TEST(HostileLog, Latin1LineRendersAsJsonWithoutThrowing) {
  const std::string log =
      ReadFile(std::string(VRAMFIT_SOURCE_DIR) + "/tests/doctor/hostile/latin1-kv-error.log");
  ASSERT_NE(log.find("caf\xe9"), std::string::npos);
  const LogScan scan = Scan(log);
  const Diagnosis d = Diagnose(scan);
  ASSERT_TRUE(d.found);
  std::string json;
  ASSERT_NO_THROW(json = RenderDoctorJson(d, scan));
  EXPECT_TRUE(IsUtf8(json));
  EXPECT_NE(json.find("caf\xef\xbf\xbd"), std::string::npos) << json;  // U+FFFD
  EXPECT_TRUE(IsUtf8(RenderDoctorText(d, scan)));
}

TEST(HostileLog, LongChineseLinesAreCutBetweenCharacters) {
  const std::string log = ReadFile(std::string(VRAMFIT_SOURCE_DIR) +
                                   "/tests/doctor/hostile/chinese-long-lines.log");
  for (size_t cap : {size_t{64} * 1024, size_t{301}, size_t{100}, size_t{7}}) {
    const LogScan scan = Scan(log, cap);
    for (const LogEvent& e : scan.events) {
      EXPECT_TRUE(IsUtf8(e.text)) << cap << ": " << e.text;
      EXPECT_LE(e.text.size(), 300u);
    }
    for (const std::string& u : scan.unplaced) EXPECT_TRUE(IsUtf8(u)) << cap << ": " << u;
    const Diagnosis d = Diagnose(scan);
    std::string json;
    ASSERT_NO_THROW(json = RenderDoctorJson(d, scan));
    EXPECT_EQ(json.find("\xef\xbf\xbd"), std::string::npos) << "a character was cut: " << json;
  }
}

// --- renderers on any string ---------------------------------------------------------------

TEST(HostileStrings, NoRendererThrowsOnBytesThatAreNotUtf8) {
  const std::string bad = std::string("caf\xe9 \xff\xfe \x1b[2J \0 end", 18);
  Inventory inv;
  inv.model = bad;
  inv.origin = bad;
  inv.notes = {bad};
  inv.files = {bad};
  inv.audit.findings.push_back({Severity::kWarning, "x", bad, 0});
  TensorEntry e;
  e.info.name = bad;
  inv.tensors.push_back(e);
  std::string text, json;
  ASSERT_NO_THROW(json = RenderInspectJson(inv, {true}));
  ASSERT_NO_THROW(text = RenderInspectText(inv, {true}));
  EXPECT_TRUE(IsUtf8(json));
  EXPECT_FALSE(HasRawControl(text)) << text;
  EXPECT_NE(text.find("caf\\xe9 \\xff\\xfe \\x1b[2J \\x00 end"), std::string::npos) << text;

  Plan plan;
  plan.command = bad;
  plan.failure_message = bad;
  plan.notes = {bad};
  ASSERT_NO_THROW(json = RenderPlanJson(plan, {}, {}));
  ASSERT_NO_THROW(text = RenderPlanText(plan, {}, {}));
  EXPECT_TRUE(IsUtf8(json));
  EXPECT_FALSE(HasRawControl(text)) << text;

  FitResult fit;
  fit.unmet = bad;
  ASSERT_NO_THROW(json = RenderFitJson(fit, {}));
  ASSERT_NO_THROW(text = RenderFitText(fit, {}));
  EXPECT_TRUE(IsUtf8(json));
  EXPECT_FALSE(HasRawControl(text));

  LogScan scan;
  scan.unplaced = {bad};
  Diagnosis d;
  d.found = true;
  d.summary = bad;
  d.evidence = {bad};
  d.notes = {bad};
  d.numbers["requested_bytes"] = 1e300;  // no int64_t holds it: casting it would be undefined
  d.numbers["free_bytes"] = -1.0 / 0.0;
  ASSERT_NO_THROW(json = RenderDoctorJson(d, scan));
  ASSERT_NO_THROW(text = RenderDoctorText(d, scan));
  EXPECT_TRUE(IsUtf8(json));
  EXPECT_FALSE(HasRawControl(text)) << text;

  // The HTML pages: valid UTF-8, no raw control byte, ESC escaped as in text (bytes that are
  // not UTF-8 are U+FFFD where a page shows its JSON's strings).
  plan.gpus.resize(1);
  for (const std::string& html : {RenderInspectHtml(inv), RenderPlanHtml(plan, {}),
                                  RenderFitHtml(fit, {}), RenderDoctorHtml(d, scan)}) {
    EXPECT_TRUE(IsUtf8(html));
    EXPECT_FALSE(HasRawControl(html));
    EXPECT_NE(html.find("\\x1b[2J"), std::string::npos);
  }
}

// --- names made of terminal escapes --------------------------------------------------------

TEST(HostileNames, EscapesAndNulsInTensorNamesAreEscapedInMessagesAndReports) {
  // JSON may spell ESC, NUL and a newline in a key; the header is valid.
  const std::string a =
      R"({"a\u001b[2J\u0000\nb":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)";
  EXPECT_EQ(Error(a + R"("c":{"dtype":"U8","shape":[2],"data_offsets":[4,6]}})", 6),
            "m.safetensors: tensor \"c\": data_offsets [4, 6]: begin 4 leaves a gap of 2 bytes "
            "after tensor \"a\\x1b[2J\\x00\\nb\" (ends at 2); expected begin 2");
  EXPECT_EQ(Error(a + R"("a\u001b[2J\u0000\nb":{}})", 2),
            "m.safetensors: duplicate key \"a\\x1b[2J\\x00\\nb\" in the header");
  const std::string img = Image(a + R"("c":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}})", 4);
  auto file = ParseSafetensors(img, img.size(), "m.safetensors");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->tensors[0].name, std::string("a\x1b[2J\0\nb", 8));
  std::vector<FileTensors> files(1);
  files[0].name = "m.safetensors";
  files[0].tensors = std::move(file->tensors);
  const Inventory inv = BuildInventory(nullptr, std::move(files));
  const std::string text = RenderInspectText(inv, {true});
  EXPECT_FALSE(HasRawControl(text)) << text;
  EXPECT_NE(text.find("a\\x1b[2J\\x00\\nb"), std::string::npos) << text;
}

TEST(HostileNames, IndexAndCheckpointMessagesEscapeNames) {
  auto src = MemorySource(
      "mem", {{"model.safetensors.index.json",
               R"({"weight_map":{"x\u001b]0;pwned\u0007":"s.safetensors"}})"},
              {"s.safetensors", Image(R"({"y":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})",
                                      1)}});
  auto ck = ReadCheckpoint(*src, {});
  ASSERT_FALSE(ck.ok());
  EXPECT_EQ(ck.status().message(),
            "model.safetensors.index.json: names tensor \"x\\x1b]0;pwned\\x07\" in shard "
            "\"s.safetensors\", but that shard's header does not hold it");
}

// --- numbers past 64 bits, lone surrogates, byte-order marks: the key and the byte ---------

TEST(HostileJson, NumbersPast64BitsNameTheKeyAndTheByte) {
  EXPECT_EQ(Error(R"({"a":{"dtype":"U8","shape":[18446744073709551616],"data_offsets":[0,1]}})",
                  1),
            "m.safetensors: tensor \"a\": \"shape\": byte 36: integer 18446744073709551616 does "
            "not fit in 64 bits (the largest is 18446744073709551615)");
  EXPECT_EQ(ConfigError(R"({"model_type":"llama","hidden_size":18446744073709551616})"),
            "config.json: \"hidden_size\": byte 36: integer 18446744073709551616 does not fit in "
            "64 bits (the largest is 18446744073709551615)");
  EXPECT_EQ(ConfigError(R"({"text_config":{"vocab_size":-9223372036854775809}})"),
            "config.json: \"text_config\".\"vocab_size\": byte 29: integer -9223372036854775809 "
            "does not fit in 64 bits (the smallest is -9223372036854775808)");
  EXPECT_EQ(IndexError(R"({"metadata":{"total_size":1e999},"weight_map":{}})",
                       "model.safetensors.index.json"),
            "model.safetensors.index.json: \"metadata\".\"total_size\": byte 26: number 1e999 "
            "is out of the range of a double");
}

TEST(HostileJson, LoneSurrogatesNameTheByte) {
  EXPECT_EQ(Error(R"({"a\ud800":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 1),
            "m.safetensors: byte 11: invalid JSON: lone surrogate \\ud800 in a string: a high "
            "surrogate must be followed by a low one (\\udc00..\\udfff)");
  EXPECT_EQ(ConfigError(R"({"model_type":"q\udc00"})"),
            "config.json: \"model_type\": byte 16: invalid JSON: lone surrogate \\udc00 in a "
            "string: a low surrogate with no high one before it");
  // A pair is one character.
  const std::string img =
      Image(R"({"\ud83d\ude00":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 1);
  auto ok = ParseSafetensors(img, img.size(), "m.safetensors");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->tensors[0].name, "\xf0\x9f\x98\x80");
}

TEST(HostileJson, ByteOrderMarksAreNamed) {
  EXPECT_EQ(Error("\xEF\xBB\xBF{}", 0),
            "m.safetensors: byte 8: a UTF-8 byte-order mark (EF BB BF) opens the header: JSON "
            "must not start with one (the reference reader refuses it)");
  EXPECT_EQ(ConfigError("\xEF\xBB\xBF{\"model_type\":\"llama\"}").substr(0, 76),
            "config.json: byte 0: a UTF-8 byte-order mark (EF BB BF) opens the text: JSON");
  EXPECT_EQ(IndexError("\xEF\xBB\xBF{\"weight_map\":{}}", "i.json").rfind(
                "i.json: byte 0: a UTF-8 byte-order mark", 0),
            0u);
}

TEST(HostileJson, SyntaxErrorsNameTheByte) {
  EXPECT_EQ(Error(R"({"a":{"dtype":"U8","shape":[1,],"data_offsets":[0,1]}})", 1),
            "m.safetensors: tensor \"a\": \"shape\": byte 38: invalid JSON: expected a value, "
            "found ']'");
  EXPECT_EQ(Error(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}} x)", 1),
            "m.safetensors: byte 62: invalid JSON: expected the end of the header after the "
            "value, found 'x'");
  EXPECT_EQ(Error(R"({"a":{"dtype":"U8","shape":[01],"data_offsets":[0,1]}})", 1),
            "m.safetensors: tensor \"a\": \"shape\": byte 36: invalid JSON: a number must not "
            "start with 0 and a digit");
  EXPECT_EQ(Error(std::string("{\"a\x01\":1}"), 0),
            "m.safetensors: byte 11: invalid JSON: control character 0x01 inside a string (JSON "
            "writes it as an escape)");
  std::string deep(200, '[');
  EXPECT_EQ(Error(R"({"a":{"x":)" + deep + "}}", 0),
            "m.safetensors: tensor \"a\": \"x\": [0][0][0][0][0][0]...: byte 144: JSON nests "
            "deeper than 128 levels (serde_json's limit)");
}

// --- config divisors of zero ---------------------------------------------------------------

TEST(HostileConfig, EveryVisionDivisorIsRangeChecked) {
  const std::string base =
      ReadFile(std::string(VRAMFIT_SOURCE_DIR) + "/tests/configs/qwen2.5-vl-tiny-ct-nvfp4/"
                                                 "config.json");
  for (const auto& [key, range] : std::vector<std::pair<std::string, std::string>>{
           {"patch_size", "[1, 1024]"},
           {"spatial_merge_size", "[1, 64]"},
           {"temporal_patch_size", "[1, 64]"},
           {"in_chans", "[1, 64]"}}) {
    std::string config = base;
    const size_t at = config.find("\"" + key + "\": ");
    ASSERT_NE(at, std::string::npos) << key;
    const size_t value = at + key.size() + 4;
    config.replace(value, config.find(',', value) - value, "0");
    EXPECT_EQ(ConfigError(config), "config.json: \"vision_config\".\"" + key +
                                           "\": expected an integer in " + range + ", found 0");
  }
}

// --- checkpoints built to be slow or large -------------------------------------------------

std::string Shard(size_t n) { return testing::OneByteTensorsImage(n); }

TEST(HostileCheckpoint, NamesHeldByTwoShardsAreCheckedInLinearTime) {
  // Shard a holds "first" and copies of 100,000 names the index puts in shard b: each lookup
  // is now one hash probe (it was a scan of shard b per name: 41 s, 2 min on a busy machine).
  // bench/bench_checkpoint.cc times it; tools/make-hostile-checkpoints.py writes it to disk.
  auto src = MemorySource("mem", testing::NamesInTwoShards(100'000));
  Result<Checkpoint> ck = Status::Ok();
  EXPECT_LT(Seconds([&] { ck = ReadCheckpoint(*src, {}); }), 20.0);
  ASSERT_TRUE(ck.ok()) << ck.status().ToString();
  ASSERT_EQ(ck->files.size(), 2u);
  ASSERT_EQ(ck->findings.size(), 1u);
  EXPECT_EQ(ck->findings[0].message,
            "100000 tensors (97.66 KiB) are in shards but not in model.safetensors.index.json "
            "(first: \"t0\" in a.safetensors); loaders that follow the index skip them");
}

TEST(HostileCheckpoint, AShardHoldingCopiesOfIndexedNamesIsReported) {
  std::string index = R"({"weight_map":{"t0":"b.safetensors","t1":"b.safetensors"}})";
  auto src = MemorySource("mem", {{"model.safetensors.index.json", index},
                                  {"b.safetensors", Shard(3)}});
  auto ck = ReadCheckpoint(*src, {});
  ASSERT_TRUE(ck.ok());
  ASSERT_EQ(ck->findings.size(), 1u);
  EXPECT_EQ(ck->findings[0].message,
            "1 tensors (1 B) are in shards but not in model.safetensors.index.json (first: "
            "\"t2\" in b.safetensors); loaders that follow the index skip them");
}

TEST(HostileCheckpoint, TheWholeCheckpointIsCapped) {
  auto src = MemorySource("mem", {{"a.safetensors", Shard(3)}, {"b.safetensors", Shard(3)}});
  CheckpointRequest request;
  request.max_tensors = 5;
  auto ck = ReadCheckpoint(*src, request);
  ASSERT_FALSE(ck.ok());
  EXPECT_EQ(ck.status().message(),
            "b.safetensors: the checkpoint holds more than 5 tensors with this file (6 in all); "
            "no real model has that many, and reading more would cost gigabytes");
  EXPECT_EQ(CheckpointRequest{}.max_tensors, 5'000'000u);
}

TEST(HostileCheckpoint, TheTensorListIsCompact) {
  static_assert(sizeof(Shape) == 32);
  static_assert(sizeof(TensorInfo) <= 96);
  static_assert(sizeof(TensorEntry) <= 128);
  // Up to three dims inline, more on the heap; copies and moves keep the dims.
  Shape s{1, 2, 3, 4, 5, 6, 7};
  Shape copy = s;
  Shape moved = std::move(copy);
  EXPECT_EQ(moved.ToVector(), (std::vector<uint64_t>{1, 2, 3, 4, 5, 6, 7}));
  EXPECT_TRUE(copy.empty());
  copy = moved;
  copy.push_back(8);
  EXPECT_EQ(copy.size(), 8u);
  EXPECT_EQ(moved.size(), 7u);
  Shape small{9};
  small = moved;
  EXPECT_EQ(small, moved);
  // The inventory's module is a view into the name.
  std::vector<FileTensors> files(1);
  files[0].tensors.push_back({"model.layers.0.mlp.experts.gate_up_proj_blocks", Dtype::kU8,
                              Shape{2}, 0, 2, 2});
  const Inventory inv = BuildInventory(nullptr, std::move(files));
  EXPECT_EQ(inv.tensors[0].module(), "model.layers.0.mlp.experts.gate_up_proj");
}

// --- symlink loops and FIFOs ---------------------------------------------------------------

TEST(HostilePaths, ASymlinkLoopSaysSo) {
  const std::string dir = testing::MakeTempDir("loop");
  fs::create_symlink(dir + "/b", dir + "/a");
  fs::create_symlink(dir + "/a", dir + "/b");
  auto ref = ResolveModel(dir + "/a");
  ASSERT_FALSE(ref.ok());
  EXPECT_EQ(ref.status().code(), Code::kIo);
  EXPECT_EQ(ref.status().message(),
            dir + "/a: symlink loop (too many levels of symbolic links, ELOOP)");
  // A shard and a config.json that are loops.
  const std::string ck = dir + "/ck";
  fs::create_directory(ck);
  fs::create_symlink(ck + "/model.safetensors", ck + "/model.safetensors");
  auto inv = InspectModel(ck, {});
  ASSERT_FALSE(inv.ok());
  EXPECT_EQ(inv.status().message(),
            ck + "/model.safetensors: cannot open: symlink loop (too many levels of symbolic "
                 "links, ELOOP)");
  fs::remove(ck + "/model.safetensors");
  fs::create_symlink(ck + "/config.json", ck + "/config.json");
  inv = InspectModel(ck, {});
  ASSERT_FALSE(inv.ok());
  EXPECT_NE(inv.status().message().find("config.json: cannot open: symlink loop"),
            std::string::npos) << inv.status().message();
  fs::remove_all(dir);
}

TEST(HostilePaths, AFifoNamedAsTheModelIsRefusedWithoutBlocking) {
  const std::string dir = testing::MakeTempDir("fifo");
  for (const char* name : {"model", "config.json", "w.safetensors"}) {
    const std::string path = dir + "/" + name;
    ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
    auto inv = InspectModel(path, {});
    ASSERT_FALSE(inv.ok()) << name;
    EXPECT_EQ(inv.status().code(), std::string_view(name) == "model" ? Code::kInvalidArgument
                                                                      : Code::kInvalidArgument);
    EXPECT_NE(inv.status().message().find(name), std::string::npos) << inv.status().message();
    fs::remove(path);
  }
  fs::remove_all(dir);
}

// --- command lines -------------------------------------------------------------------------

TEST(HostileCommand, AFlagGivenTwiceTakesTheLastValueAsArgparseDoes) {
  const std::vector<std::string> argv = {"vllm", "serve", "qwen3-8b", "-tp", "2", "-tp", "1",
                                         "--max-model-len", "4096", "--max-model-len=8192"};
  const Engine* e = EngineForCommand(argv);
  ASSERT_NE(e, nullptr);
  auto cmd = e->read_command(argv);
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  auto s = e->read_flags(cmd->flags, cmd->settings);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->tensor_parallel_size, 1);
  EXPECT_EQ(s->max_model_len, 8192);
}

TEST(HostileCommand, ManyEnvironmentWordsAreReadInLinearTime) {
  std::vector<std::string> argv(100'000, "X=1");
  for (const char* w : {"vllm", "serve", "qwen3-8b", "--max-model-len", "4096"}) argv.push_back(w);
  const Engine* e = EngineForCommand(argv);
  ASSERT_NE(e, nullptr);
  Result<EngineCommand> cmd = Status::Ok();
  EXPECT_LT(Seconds([&] { cmd = e->read_command(argv); }), 5.0);  // it was 17.8 s
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  EXPECT_EQ(cmd->model, "qwen3-8b");
  EXPECT_EQ(cmd->unmodelled_env, std::vector<std::string>{"X"});  // each name once
}

}  // namespace
}  // namespace vramfit
