// Scores the doctor on the public corpus (tests/doctor/corpus: real log excerpts with their
// source and the expected stage and cause) and writes docs/doctor-corpus.md; the test fails on
// any wrong diagnosis or a stale table (VRAMFIT_UPDATE_GOLDEN=1 rewrites it).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "vramfit/doctor.h"

namespace vramfit {
namespace {

namespace fs = std::filesystem;

TEST(DoctorCorpus, EveryExcerptGetsTheExpectedStageAndCause) {
  const fs::path dir = fs::path(VRAMFIT_SOURCE_DIR) / "tests/doctor/corpus";
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 14 && name.compare(name.size() - 14, 14, ".expected.json") == 0)
      cases.push_back(e.path());
  }
  std::sort(cases.begin(), cases.end());
  ASSERT_GE(cases.size(), 30u);
  simdjson::dom::parser parser;
  int right = 0;
  std::map<std::string, std::pair<int, int>> by_engine;
  std::string rows;
  for (const fs::path& p : cases) {
    const std::string name = p.filename().string();
    const std::string id = name.substr(0, name.size() - 14);
    simdjson::dom::element want;
    ASSERT_EQ(parser.load(p.string()).get(want), simdjson::SUCCESS) << p;
    std::string_view stage, cause, engine, source;
    ASSERT_EQ(want["stage"].get_string().get(stage), simdjson::SUCCESS) << id;
    ASSERT_EQ(want["cause"].get_string().get(cause), simdjson::SUCCESS) << id;
    ASSERT_EQ(want["engine"].get_string().get(engine), simdjson::SUCCESS) << id;
    ASSERT_EQ(want["source"].get_string().get(source), simdjson::SUCCESS) << id;
    std::ifstream log(dir / (id + ".log"), std::ios::binary);
    ASSERT_TRUE(log) << id;
    auto scan = ScanLog(log);
    ASSERT_TRUE(scan.ok()) << id;
    const Diagnosis d = Diagnose(*scan);
    const bool ok = d.found && d.stage == stage && d.cause == cause;
    EXPECT_TRUE(ok) << id << ": expected " << stage << "/" << cause << ", got " << d.stage << "/"
                    << d.cause;
    right += ok;
    auto& e = by_engine[std::string(engine)];
    e.first += ok;
    e.second += 1;
    rows += fmt::format("| {} | {} | {} / {} | {} / {} | {} |\n", id, engine, stage, cause, d.stage,
                        d.cause, ok ? "right" : "WRONG");
  }
  std::string doc = "# vramfit doctor on the public corpus\n\n";
  doc +=
      "Written by `tests/doctor_corpus_test.cc` from `tests/doctor/corpus/` (real log excerpts "
      "from public issues of "
      "vLLM, SGLang, llama.cpp, transformers and Qwen's repositories, each with its source and the "
      "expected stage and "
      "cause; see its README). The doctor sees only the excerpt, with no model or GPU given.\n\n";
  doc += fmt::format("**Right stage and cause: {} of {}.**", right, cases.size());
  for (const auto& [engine, n] : by_engine)
    doc += fmt::format(" {}: {}/{}.", engine, n.first, n.second);
  doc += "\n\n| excerpt | engine | expected | diagnosed | |\n|---|---|---|---|---|\n" + rows;
  fmt::print("doctor corpus: {} of {} right\n", right, cases.size());
  const fs::path out = fs::path(VRAMFIT_SOURCE_DIR) / "docs/doctor-corpus.md";
  if (std::getenv("VRAMFIT_UPDATE_GOLDEN") != nullptr) std::ofstream(out) << doc;
  std::ifstream in(out);
  std::stringstream committed;
  committed << in.rdbuf();
  EXPECT_EQ(committed.str(), doc)
      << "docs/doctor-corpus.md is stale: rerun with VRAMFIT_UPDATE_GOLDEN=1";
}

}  // namespace
}  // namespace vramfit
