// The doctor on hand-written logs, one per case named in the doctor's issue list (wrapped
// messages, Mamba blocks, kernel and sampler warm-ups, graph capture and its estimate, SGLang's
// EAGLE drafts and online FP8, Ollama's estimate and vocabulary, llama.cpp's --fit, transformers
// notebooks, offload and eager attention, AutoAWQ's fused cache, fragmentation, TGI's warm-up,
// nvidia-smi, failures that are not out-of-memory): tests/doctor/cases/<id>.log in the engine's
// real format, with <id>.expected.json giving the stage and cause, and optionally the engine,
// substrings some fix must contain or no fix may contain, numbers, notes and the other error's
// kind (docs/doctor.md).
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "vramfit/doctor.h"

namespace vramfit {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> Cases() {
  std::vector<std::string> ids;
  const fs::path dir = fs::path(VRAMFIT_SOURCE_DIR) / "tests/doctor/cases";
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    const std::string suffix = ".expected.json";
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      ids.push_back(name.substr(0, name.size() - suffix.size()));
    }
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

class DoctorCase : public ::testing::TestWithParam<std::string> {};

TEST_P(DoctorCase, IsDiagnosedAsExpected) {
  const fs::path dir = fs::path(VRAMFIT_SOURCE_DIR) / "tests/doctor/cases";
  const std::string id = GetParam();
  simdjson::dom::parser parser;
  simdjson::dom::element want;
  ASSERT_EQ(parser.load((dir / (id + ".expected.json")).string()).get(want), simdjson::SUCCESS);
  std::ifstream log(dir / (id + ".log"), std::ios::binary);
  ASSERT_TRUE(log);
  auto scan = ScanLog(log);
  ASSERT_TRUE(scan.ok());
  const Diagnosis d = Diagnose(*scan);
  std::string all_fixes, all_notes;
  for (const Fix& f : d.fixes) all_fixes += f.change + "\n";
  for (const std::string& n : d.notes) all_notes += n + "\n";
  const std::string seen = "stage " + d.stage + ", cause " + d.cause + ", engine " + d.engine +
                           "\nfixes:\n" + all_fixes + "notes:\n" + all_notes;
  bool found = true;
  if (!want["found"].get_bool().get(found)) {
    EXPECT_EQ(d.found, found) << seen;
  }
  if (found) {
    ASSERT_TRUE(d.found) << seen;
    std::string_view stage, cause, engine;
    ASSERT_EQ(want["stage"].get_string().get(stage), simdjson::SUCCESS);
    ASSERT_EQ(want["cause"].get_string().get(cause), simdjson::SUCCESS);
    EXPECT_EQ(d.stage, stage) << seen;
    EXPECT_EQ(d.cause, cause) << seen;
    EXPECT_FALSE(d.stage_evidence.empty()) << seen;
    if (!want["engine"].get_string().get(engine)) {
      EXPECT_EQ(d.engine, engine) << seen;
    }
  }
  // "other_error": the kind of the failure that is not out-of-memory (the diagnosis's when the
  // cause is not_out_of_memory, else the one mentioned beside the out-of-memory); null: none.
  simdjson::dom::element other;
  if (!want["other_error"].get(other)) {
    std::string_view kind;
    if (other.is_null()) {
      EXPECT_FALSE(d.other_error.has_value()) << "other error " << d.other_error->kind << "\n"
                                              << seen;
    } else {
      ASSERT_EQ(other.get_string().get(kind), simdjson::SUCCESS);
      ASSERT_TRUE(d.other_error.has_value()) << "no other error\n" << seen;
      EXPECT_EQ(d.other_error->kind, kind) << seen;
      EXPECT_GT(d.other_error->line, 0u);
      EXPECT_FALSE(d.other_error->text.empty());
    }
  }
  simdjson::dom::array list;
  // The lists are arrays: a string there would be passed over without a check.
  for (const char* key : {"fix_contains", "fix_excludes", "notes_contains"}) {
    simdjson::dom::element v;
    if (!want[key].get(v)) {
      EXPECT_TRUE(v.is_array()) << key << " is not an array\n" << seen;
    }
  }
  if (!want["fix_contains"].get_array().get(list)) {
    for (auto item : list) {
      std::string_view s;
      ASSERT_EQ(item.get_string().get(s), simdjson::SUCCESS);
      EXPECT_NE(all_fixes.find(std::string(s)), std::string::npos) << "no fix has " << s << "\n"
                                                                   << seen;
    }
  }
  if (!want["fix_excludes"].get_array().get(list)) {
    for (auto item : list) {
      std::string_view s;
      ASSERT_EQ(item.get_string().get(s), simdjson::SUCCESS);
      for (const Fix& f : d.fixes) {
        EXPECT_EQ(f.change.find(std::string(s)), std::string::npos)
            << "a fix has " << s << ": " << f.change << "\n"
            << seen;
      }
    }
  }
  if (!want["notes_contains"].get_array().get(list)) {
    for (auto item : list) {
      std::string_view s;
      ASSERT_EQ(item.get_string().get(s), simdjson::SUCCESS);
      EXPECT_NE(all_notes.find(std::string(s)), std::string::npos) << "no note has " << s << "\n"
                                                                   << seen;
    }
  }
  simdjson::dom::object numbers;
  if (!want["numbers"].get_object().get(numbers)) {
    for (auto [key, value] : numbers) {
      double v = 0;
      ASSERT_EQ(value.get_double().get(v), simdjson::SUCCESS);
      auto it = d.numbers.find(std::string(key));
      ASSERT_NE(it, d.numbers.end()) << "no number " << key << "\n" << seen;
      EXPECT_NEAR(it->second, v, std::max(1.0, std::abs(v) * 1e-4)) << key << "\n" << seen;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, DoctorCase, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace vramfit
