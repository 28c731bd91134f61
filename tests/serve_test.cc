// `vramfit serve` (cli/serve.h) on an ephemeral loopback port, hit with httplib's client: the
// page and its files, the APIs answering with the JSON the commands print, and a MODEL that
// tries to leave the --root folders (../, %2e%2e, absolute paths, symlinks) refused before
// anything is read; bodies and Host headers bounded.
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "serve.h"

namespace vramfit::cli {
namespace {

namespace fs = std::filesystem;

class ServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() /
            ("vramfit_serve_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(base_);
    root_ = base_ / "root";
    fs::create_directories(root_ / "tiny");
    fs::create_directories(base_ / "outside");
    fs::copy_file(fs::path(VRAMFIT_SOURCE_DIR) / "tests/configs/qwen3-tiny-bnb4/config.json",
                  root_ / "tiny/config.json");
    fs::copy_file(fs::path(VRAMFIT_SOURCE_DIR) / "tests/configs/qwen3-tiny-bnb4/config.json",
                  base_ / "outside/config.json");
    fs::create_directory_symlink(base_ / "outside", root_ / "link-out");
    fs::create_directories(root_ / "leaky");
    fs::copy_file(root_ / "tiny/config.json", root_ / "leaky/config.json");
    fs::create_symlink(base_ / "outside/config.json", root_ / "leaky/model.safetensors");
    ServeOptions o;
    o.port = 0;
    o.roots = {root_.string()};
    o.max_body_bytes = 1 << 20;
    auto s = Server::Start(o);
    ASSERT_TRUE(s.ok()) << s.status().message();
    server_ = std::move(*s);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }
  void TearDown() override {
    client_.reset();
    server_.reset();
    fs::remove_all(base_);
  }
  httplib::Result Get(const std::string& path) { return client_->Get(path.c_str()); }

  fs::path base_, root_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(ServeTest, ServesThePageAndItsFilesOnly) {
  auto r = Get("/");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_NE(r->body.find("<script src=\"/app.js\">"), std::string::npos);
  EXPECT_EQ(Get("/app.js")->status, 200);
  EXPECT_EQ(Get("/report.css")->status, 200);
  EXPECT_EQ(Get("/../CMakeLists.txt")->status, 404);
  EXPECT_EQ(Get("/index.html/../../etc/passwd")->status, 404);
}

TEST_F(ServeTest, PlanAnswersWithTheJsonTheCommandPrints) {
  auto r = Get("/api/plan?model=qwen3-4b-instruct-2507-awq&gpu=4090&max-model-len=262144");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const Captured cli = RunCaptured({"plan", "qwen3-4b-instruct-2507-awq", "--gpu", "4090",
                                    "--max-model-len", "262144", "--json"});
  EXPECT_EQ(r->body, cli.out);
  EXPECT_EQ(nlohmann::json::parse(r->body)["failure_stage"], "kv_cache");
  auto html = Get("/api/plan?model=qwen3-4b-instruct-2507-awq&gpu=4090&format=html");
  ASSERT_TRUE(html);
  EXPECT_EQ(html->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(html->body.find("id=\"vramfit-json\""), std::string::npos);
}

TEST_F(ServeTest, FitInspectAndDoctorAnswer) {
  auto fit = Get("/api/fit?model=qwen3-4b-instruct-2507-awq&gpu=4090");
  ASSERT_TRUE(fit);
  EXPECT_EQ(fit->status, 200);
  EXPECT_EQ(nlohmann::json::parse(fit->body)["schema"], "vramfit.fit/1");
  auto inspect = Get("/api/inspect?model=tiny");
  ASSERT_TRUE(inspect);
  EXPECT_EQ(inspect->status, 200) << inspect->body;
  EXPECT_EQ(nlohmann::json::parse(inspect->body)["schema"], "vramfit.inspect/1");
  std::ifstream log(fs::path(VRAMFIT_SOURCE_DIR) /
                    "tests/doctor/corpus/vllm-kv-max-seq-len-29000-llama3.1-8b-3090-10517.log");
  const std::string text((std::istreambuf_iterator<char>(log)), {});
  auto doctor = client_->Post("/api/doctor?model=llama-3.1-8b-instruct&gpu=3090", text,
                              "text/plain");
  ASSERT_TRUE(doctor);
  ASSERT_EQ(doctor->status, 200) << doctor->body;
  EXPECT_EQ(nlohmann::json::parse(doctor->body)["stage"], "kv_cache");
}

TEST_F(ServeTest, ModelsOutsideTheRootsAreRefused) {
  for (const std::string model :
       {"../outside", "%2e%2e/outside", "%2E%2E%2Foutside", "tiny/../../outside", "link-out",
        "leaky", "/etc", "%2fetc", "..", "~/x", "-x", "./tiny/../.."}) {
    auto r = Get("/api/inspect?model=" + model);
    ASSERT_TRUE(r) << model;
    EXPECT_EQ(r->status, 400) << model << ": " << r->body;
    EXPECT_NE(r->body.find("\"error\""), std::string::npos) << model;
  }
  // The absolute path of a folder inside the root is fine.
  auto ok = Get("/api/inspect?model=" + (root_ / "tiny").string());
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
}

TEST_F(ServeTest, UnknownFlagsHostsAndLargeBodiesAreRefused) {
  auto flag = Get("/api/plan?model=qwen3-8b&gpu=4090&speculative-config=%7B%7D");
  ASSERT_TRUE(flag);
  EXPECT_EQ(flag->status, 400);
  EXPECT_NE(flag->body.find("speculative-config"), std::string::npos);
  httplib::Headers host = {{"Host", "evil.example:80"}};
  auto rebound = client_->Get("/api/gpus", host);
  ASSERT_TRUE(rebound);
  EXPECT_EQ(rebound->status, 403);
  auto big = client_->Post("/api/doctor", std::string(2 << 20, 'x'), "text/plain");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
  auto bad = Get("/api/plan?model=qwen3-8b&gpu=no-such-card");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("no-such-card"), std::string::npos);
}

}  // namespace
}  // namespace vramfit::cli
