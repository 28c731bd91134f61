// The Hub source against a mock Hub on loopback (tests/testutil/mock_hub.h): hollow checkpoints
// read over HTTP give the same inventory as the same files read locally, tensor for tensor;
// the cache answers later and offline runs; the token never leaves its host; every way a
// server can fail or lie is an error naming the URL.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "testutil/hollow.h"
#include "testutil/mock_hub.h"
#include "vramfit/catalog.h"
#include "vramfit/inspect.h"
#include "vramfit/model.h"
#include "vramfit/report.h"

namespace vramfit {
namespace {

namespace fs = std::filesystem;
using testing::HollowTensor;
using testing::MockHub;

// A checkpoint shaped like a catalog model: its config.json, and the tensors vramfit would
// synthesize for it, written as hollow shards.
void WriteCatalogCheckpoint(const std::string& dir, const std::string& id, int shards) {
  auto entry = FindCatalogModel(id);
  ASSERT_TRUE(entry.ok()) << entry.status().message();
  auto spec = ModelSpecFromConfigJson(entry->config_json, "config.json");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  auto synth = SynthesizeTensors(*spec);
  ASSERT_TRUE(synth.ok()) << synth.status().message();
  std::vector<HollowTensor> tensors;
  for (const TensorInfo& t : synth->tensors) {
    tensors.push_back({t.name, t.dtype, std::vector<uint64_t>(t.shape.begin(), t.shape.end())});
  }
  testing::WriteHollowCheckpoint(dir, tensors, shards);
  testing::WriteText(dir + "/config.json", entry->config_json);
}

// The inventory as `inspect --json --tensors` prints it, without the keys that name where it
// was read.
nlohmann::json Answer(const Inventory& inv) {
  InspectReportOptions ro;
  ro.tensors = true;
  auto j = nlohmann::json::parse(RenderInspectJson(inv, ro));
  for (const char* key : {"model", "origin", "source", "repo"}) j.erase(key);
  return j;
}

uint64_t DirBytes(const std::string& dir) {
  uint64_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.file_size();
  return n;
}

class HubTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::MakeTempDir("hub");
    dir_ = root_ + "/ckpt";
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  HubOptions Options() const {
    HubOptions o;
    o.endpoint = hub_.endpoint();
    o.cache_dir = root_ + "/cache";
    o.max_retries = 2;
    o.backoff_ms = 5;
    o.request_timeout_ms = 5000;
    return o;
  }
  Result<Inventory> Read(const std::string& id, HubOptions o) {
    auto ref = ParseHubId(id);
    if (!ref.ok()) return ref.status();
    InspectOptions io;
    io.hub = std::move(o);
    return InspectModel(*ref, io);
  }
  Result<Inventory> Read(const std::string& id) { return Read(id, Options()); }
  Inventory Local() {
    auto inv = InspectModel(ModelRef{ModelKind::kLocalDirectory, dir_, "", ""}, {});
    EXPECT_TRUE(inv.ok()) << inv.status().message();
    return std::move(*inv);
  }
  std::string Error(const std::string& id, HubOptions o) {
    auto inv = Read(id, std::move(o));
    EXPECT_FALSE(inv.ok());
    return inv.ok() ? "" : inv.status().message();
  }
  std::string Error(const std::string& id) { return Error(id, Options()); }
  // Serves a checkpoint of `shards` shards as org/model.
  void Serve(int shards, const std::string& id = "qwen3-8b") {
    WriteCatalogCheckpoint(dir_, id, shards);
    hub_.AddRepo("org/model", dir_);
  }

  MockHub hub_;
  std::string root_, dir_;
};

TEST_F(HubTest, ShardedRepoReadsAsTheSameFilesLocally) {
  Serve(4);
  auto inv = Read("org/model");
  ASSERT_TRUE(inv.ok()) << inv.status().message();
  EXPECT_EQ(Answer(*inv), Answer(Local()));
  EXPECT_FALSE(inv->synthesized);
  EXPECT_EQ(inv->source.kind, ModelKind::kHub);
  EXPECT_EQ(inv->origin, "org/model@main");
  // The API, config.json and the index, then 8 bytes and the header of each shard.
  EXPECT_EQ(hub_.hub_requests.load(), 1u + 2u + 2u * 4u);
  // Only headers: under a thousandth of the checkpoint.
  EXPECT_LT(hub_.bytes_sent.load() * 1000, DirBytes(dir_));
}

TEST_F(HubTest, SingleFileRepoReadsAsTheSameFileLocally) {
  Serve(1);
  auto inv = Read("org/model@main");
  ASSERT_TRUE(inv.ok()) << inv.status().message();
  EXPECT_EQ(Answer(*inv), Answer(Local()));
}

TEST_F(HubTest, AQuantizedRepoAtACommitReadsAsTheSameFilesLocally) {
  Serve(3, "qwen3-8b-awq");
  auto inv = Read("org/model@" + std::string(testing::kMockCommit));
  ASSERT_TRUE(inv.ok()) << inv.status().message();
  EXPECT_EQ(Answer(*inv), Answer(Local()));
}

TEST_F(HubTest, RedirectToTheCdnIsFollowedWithoutTheToken) {
  Serve(2);
  hub_.redirect_to_cdn = true;
  HubOptions o = Options();
  o.token = "hf_secret_token";
  auto inv = Read("org/model", o);
  ASSERT_TRUE(inv.ok()) << inv.status().message();
  EXPECT_EQ(Answer(*inv), Answer(Local()));
  EXPECT_GT(hub_.cdn_requests.load(), 0u);
  EXPECT_EQ(hub_.cdn_auth.load(), 0u) << "the token crossed to another host";
  EXPECT_EQ(hub_.hub_auth.load(), hub_.hub_requests.load());
  EXPECT_EQ(hub_.last_auth(), "Bearer hf_secret_token");
}

TEST_F(HubTest, LaterRunsAndOfflineRunsReadTheCache) {
  Serve(2);
  auto first = Read("org/model");
  ASSERT_TRUE(first.ok()) << first.status().message();
  const uint64_t asked = hub_.hub_requests.load();
  // Online again: the revision is resolved (one request), everything else is cached.
  auto second = Read("org/model");
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ(hub_.hub_requests.load(), asked + 1);
  // Offline, at the branch and at the commit: no request at all.
  HubOptions o = Options();
  o.offline = true;
  o.endpoint = "http://127.0.0.1:9";  // nothing listens there
  for (const std::string& id :
       {std::string("org/model"), "org/model@" + std::string(testing::kMockCommit)}) {
    auto inv = Read(id, o);
    ASSERT_TRUE(inv.ok()) << id << ": " << inv.status().message();
    EXPECT_EQ(Answer(*inv), Answer(*first));
  }
  EXPECT_EQ(hub_.hub_requests.load(), asked + 1);
}

TEST_F(HubTest, OfflineWithAnEmptyCacheSaysSo) {
  HubOptions o = Options();
  o.offline = true;
  const std::string msg = Error("org/model", o);
  EXPECT_NE(msg.find("offline (HF_HUB_OFFLINE is set)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("run once online"), std::string::npos) << msg;
  EXPECT_EQ(hub_.hub_requests.load(), 0u);
}

TEST_F(HubTest, MissingRepoRevisionAndFileAreNamed) {
  Serve(2);
  std::string msg = Error("org/qwen3-8x");
  EXPECT_NE(msg.find("org/qwen3-8x: no such repo on " + hub_.endpoint()), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("HTTP 404"), std::string::npos) << msg;
  EXPECT_NE(msg.find("nearest: qwen3-8b"), std::string::npos) << msg;
  msg = Error("org/model@v9");
  EXPECT_NE(msg.find("no revision \"v9\""), std::string::npos) << msg;
  // A shard the index names that the repo does not have.
  fs::remove(dir_ + "/model-00002-of-00002.safetensors");
  hub_.AddRepo("org/model", dir_);
  msg = Error("org/model");
  EXPECT_NE(msg.find("\"model-00002-of-00002.safetensors\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("does not exist in org/model@main"), std::string::npos) << msg;
}

TEST_F(HubTest, GatedRepoSaysWhereToAcceptTheLicenseAndNeverPrintsTheToken) {
  Serve(1);
  hub_.SetHook([](const httplib::Request& q, httplib::Response& r) {
    if (q.path.find("/resolve/") == std::string::npos) return false;
    r.status = q.has_header("Authorization") ? 403 : 401;
    r.set_header("X-Error-Code", "GatedRepo");
    r.set_header("X-Error-Message", "Access to model org/model is restricted.");
    return true;
  });
  std::string msg = Error("org/model");
  EXPECT_NE(msg.find("accept the license at " + hub_.endpoint() + "/org/model"),
            std::string::npos) << msg;
  EXPECT_NE(msg.find("set HF_TOKEN"), std::string::npos) << msg;
  EXPECT_NE(msg.find("HTTP 401"), std::string::npos) << msg;
  HubOptions o = Options();
  o.token = "hf_very_secret";
  msg = Error("org/model", o);
  EXPECT_NE(msg.find("the token given has no access"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("hf_very_secret"), std::string::npos) << msg;
}

TEST_F(HubTest, RateLimitGivesItsRetryAfter) {
  Serve(1);
  hub_.SetHook([](const httplib::Request&, httplib::Response& r) {
    r.status = 429;
    r.set_header("Retry-After", "17");
    return true;
  });
  const std::string msg = Error("org/model");
  EXPECT_NE(msg.find("rate limited"), std::string::npos) << msg;
  EXPECT_NE(msg.find("retry after 17 s"), std::string::npos) << msg;
  EXPECT_EQ(hub_.hub_requests.load(), 1u) << "a 429 is not retried";
}

TEST_F(HubTest, ServerErrorsAreRetriedWithBackoff) {
  Serve(2);
  auto fails = std::make_shared<std::atomic<int>>(0);
  hub_.SetHook([fails](const httplib::Request& q, httplib::Response& r) {
    if (q.path.find(".safetensors") == std::string::npos || ++*fails > 2) return false;
    r.status = 500;
    return true;
  });
  auto inv = Read("org/model");
  ASSERT_TRUE(inv.ok()) << inv.status().message();
  EXPECT_EQ(Answer(*inv), Answer(Local()));
  // Always failing: an error after the retries, naming the URL.
  hub_.SetHook([](const httplib::Request& q, httplib::Response& r) {
    if (q.path.find("config.json") == std::string::npos) return false;
    r.status = 503;
    return true;
  });
  fs::remove_all(root_ + "/cache");
  const std::string msg = Error("org/model");
  EXPECT_NE(msg.find("HTTP 503 from " + hub_.endpoint() + "/org/model/resolve/" +
                     testing::kMockCommit + "/config.json"),
            std::string::npos) << msg;
}

TEST_F(HubTest, ASlowAnswerTimesOut) {
  Serve(1);
  hub_.SetHook([](const httplib::Request& q, httplib::Response&) {
    if (q.path.find(".safetensors") != std::string::npos) {
      std::this_thread::sleep_for(std::chrono::milliseconds(600));
    }
    return false;
  });
  HubOptions o = Options();
  o.request_timeout_ms = 150;
  o.max_retries = 1;
  const auto start = std::chrono::steady_clock::now();
  const std::string msg = Error("org/model", o);
  EXPECT_NE(msg.find("model.safetensors: "), std::string::npos) << msg;
  EXPECT_NE(msg.find("imed out"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(1 retries)"), std::string::npos) << msg;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  // The whole fetch's limit, too.
  o.request_timeout_ms = 5000;
  o.total_timeout_ms = 200;
  const std::string total = Error("org/model", o);
  EXPECT_NE(total.find("took longer than its 200 ms limit"), std::string::npos) << total;
}

TEST_F(HubTest, ProgressIsReportedWhenAFetchTakesMoreThanASecond) {
  Serve(2);
  hub_.SetHook([](const httplib::Request& q, httplib::Response&) {
    if (q.path.find("00002-of") != std::string::npos) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    }
    return false;
  });
  std::vector<HubProgress> seen;
  InspectOptions io;
  io.hub = Options();
  io.hub_progress = [&](const HubProgress& p) { seen.push_back(p); };
  auto inv = InspectModel(*ParseHubId("org/model"), io);
  ASSERT_TRUE(inv.ok()) << inv.status().message();
  ASSERT_FALSE(seen.empty());
  EXPECT_TRUE(seen.back().done);
  EXPECT_EQ(seen.back().repo, "org/model");
  EXPECT_EQ(seen.back().requests_done, 1u + 2u + 4u);
  EXPECT_GE(seen.back().seconds, 1.0);
}

// Answers the first 8 bytes of model.safetensors with `answer`; false for other requests.
MockHub::Hook OnPrefix(std::function<void(httplib::Response&)> answer) {
  return [answer](const httplib::Request& q, httplib::Response& r) {
    if (q.path.find("model.safetensors") == std::string::npos ||
        q.get_header_value("Range") != "bytes=0-7") {
      return false;
    }
    testing::DropRanges(q);
    answer(r);
    return true;
  };
}

TEST_F(HubTest, LyingServersAreErrorsNamingTheUrl) {
  Serve(1);
  const std::string url =
      hub_.endpoint() + "/org/model/resolve/" + testing::kMockCommit + "/model.safetensors";
  struct Case {
    const char* what;
    std::function<void(httplib::Response&)> answer;
    const char* expected;
  } cases[] = {
      {"another range", [](httplib::Response& r) {
         r.status = 206;
         r.set_header("Content-Range", "bytes 8-15/100000");
         r.set_content(std::string(8, 'x'), "application/octet-stream");
       }, "asked for bytes 0-7, the server answered Content-Range \"bytes 8-15/100000\""},
      {"more than asked", [](httplib::Response& r) {
         r.status = 206;
         r.set_header("Content-Range", "bytes 0-7/100000");
         r.set_content(std::string(16, 'x'), "application/octet-stream");
       }, "asked for 8 bytes at 0, the server sent more"},
      {"less than announced", [](httplib::Response& r) {
         r.status = 206;
         r.set_header("Content-Range", "bytes 0-7/100000");
         r.set_content(std::string(4, 'x'), "application/octet-stream");
       }, "announces 8 bytes, the body has 4"},
      {"no range at all", [](httplib::Response& r) {
         r.status = 200;
         r.set_content(std::string(4096, 'x'), "application/octet-stream");
       }, "the server sent more"},
      {"a 206 without Content-Range", [](httplib::Response& r) {
         r.status = 206;
         r.set_content(std::string(8, 'x'), "application/octet-stream");
       }, "answered HTTP 206 without a byte range"},
      {"an unreadable Content-Range", [](httplib::Response& r) {
         r.status = 206;
         r.set_header("Content-Range", "bytes 0-7/*");
         r.set_content(std::string(8, 'x'), "application/octet-stream");
       }, "answered Content-Range \"bytes 0-7/*\""},
  };
  for (const Case& c : cases) {
    hub_.SetHook(OnPrefix(c.answer));
    fs::remove_all(root_ + "/cache");
    const std::string msg = Error("org/model");
    EXPECT_NE(msg.find(url + ": "), std::string::npos) << c.what << ": " << msg;
    EXPECT_NE(msg.find(c.expected), std::string::npos) << c.what << ": " << msg;
  }
}

TEST_F(HubTest, NoNetworkSaysWhatTheReadNeedsAndWhatWorksOffline) {
  HubOptions o = Options();
  o.endpoint = "http://127.0.0.1:1";  // nothing listens there: the connection is refused
  o.max_retries = 0;
  const std::string msg = Error("Qwen/Qwen3-8B-Instruct", o);
  EXPECT_NE(msg.find("http://127.0.0.1:1/api/models/Qwen/Qwen3-8B-Instruct"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("read over the network from http://127.0.0.1:1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("a local directory holding config.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("nearest: "), std::string::npos) << msg;  // catalog ids
  EXPECT_NE(msg.find("HF_HUB_OFFLINE=1"), std::string::npos) << msg;
}

TEST_F(HubTest, ATruncatedBodyIsAnErrorAfterItsRetries) {
  Serve(1);
  hub_.SetHook(OnPrefix([](httplib::Response& r) {
    r.status = 206;
    r.set_header("Content-Range", "bytes 0-7/100000");
    // Content-Length 8, then 3 bytes and the connection closes.
    r.set_content_provider(8, "application/octet-stream",
                           [](size_t, size_t, httplib::DataSink& sink) {
                             sink.write("abc", 3);
                             return false;
                           });
  }));
  const std::string msg = Error("org/model");
  EXPECT_NE(msg.find("/model.safetensors: "), std::string::npos) << msg;
  EXPECT_NE(msg.find("(2 retries)"), std::string::npos) << msg;
}

TEST_F(HubTest, AHeaderOverTheCapIsRefusedBeforeItIsFetched) {
  // 8 bytes announcing a 200,000,000-byte header, in a file that would hold it.
  const std::string path = dir_ + "/model.safetensors";
  std::string prefix(8, '\0');
  const uint64_t n = 200'000'000;
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  testing::WriteText(path, prefix);
  fs::resize_file(path, 8 + n + 64);
  hub_.AddRepo("org/model", dir_);
  const std::string msg = Error("org/model");
  auto local = InspectModel(ModelRef{ModelKind::kLocalFile, path, "", ""}, {});
  ASSERT_FALSE(local.ok());
  // The same words as the local reader's, after the file's name.
  const std::string local_msg = local.status().message();
  EXPECT_NE(msg.find(local_msg.substr(local_msg.find("model.safetensors"))), std::string::npos)
      << msg << "\n" << local_msg;
  EXPECT_LT(hub_.bytes_sent.load(), 64u);
}

TEST_F(HubTest, ARepoWithoutSafetensorsListsWhatItHas) {
  testing::WriteText(dir_ + "/config.json", "{}");
  testing::WriteText(dir_ + "/model.h5", "x");
  testing::WriteText(dir_ + "/pytorch_model.bin", "x");
  hub_.AddRepo("org/model", dir_);
  const std::string msg = Error("org/model");
  EXPECT_NE(msg.find("no .safetensors or .gguf files"), std::string::npos) << msg;
  EXPECT_NE(msg.find("config.json, model.h5, pytorch_model.bin"), std::string::npos) << msg;
}

// A repo whose one model is GGUF is read as GGUF (here a broken one: its header's error).
TEST_F(HubTest, ARepoOfOneGgufFileReadsIt) {
  testing::WriteText(dir_ + "/model-q4_k_m.gguf", "GGUF");
  hub_.AddRepo("org/model", dir_);
  const std::string msg = Error("org/model");
  EXPECT_NE(msg.find("model-q4_k_m.gguf: file is 4 bytes, expected at least 24"),
            std::string::npos) << msg;
}

TEST(HubIdTest, RepoIdsAndPrecedence) {
  auto ref = ParseHubId("Qwen/Qwen3-8B@refs/pr/1");
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(ref->id, "Qwen/Qwen3-8B");
  EXPECT_EQ(ref->revision, "refs/pr/1");
  EXPECT_EQ(ParseHubId("org/name")->revision, "main");
  ref = ParseHubId("org/name-GGUF@v1:Q4_K_M/m-00001-of-00002.gguf");
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(ref->id, "org/name-GGUF");
  EXPECT_EQ(ref->revision, "v1");
  EXPECT_EQ(ref->file, "Q4_K_M/m-00001-of-00002.gguf");
  EXPECT_EQ(ResolveModel("org/name:m.gguf")->file, "m.gguf");
  for (const char* bad : {"org/name:", "org/name:../m.gguf", "org/name:/m.gguf", "org/name:a//b",
                          "org/name:a b.gguf", "org/name:dir/"}) {
    EXPECT_FALSE(ParseHubId(bad).ok()) << bad;
  }
  for (const char* bad : {"org", "org/", "/name", "a/b/c", "org/na me", "org/..", "org/a--b",
                          "org/name@", "org/name@a b"}) {
    EXPECT_FALSE(ParseHubId(bad).ok()) << bad;
  }
  // Catalog entries win over the Hub, except with an explicit revision.
  EXPECT_EQ(ResolveModel("Qwen/Qwen3-8B")->kind, ModelKind::kCatalog);
  EXPECT_EQ(ResolveModel("Qwen/Qwen3-8B@main")->kind, ModelKind::kHub);
  EXPECT_EQ(ResolveModel("someorg/not-in-the-catalog")->kind, ModelKind::kHub);
  EXPECT_FALSE(ResolveModel("no/such/path").ok());
}

}  // namespace
}  // namespace vramfit
