// Scores the llama.cpp planner against published start-up logs (validation/llamacpp/
// records.json) and writes docs/validation-llamacpp.md (the test fails when the committed
// table is stale; VRAMFIT_UPDATE_GOLDEN=1 rewrites it). Records carry the hyperparameters and
// settings the log printed, not the GGUF file: each model is rebuilt as a hollow GGUF by
// test_models.h and planned with the record's settings. The unit scored is one device of one
// record: the sum of the buffers the log printed for it (model, KV / recurrent state, compute)
// against the plan's same buffers, signed (positive: the plan is pessimistic, the safe side).
// The aim is within 3% or 100 MiB; odd record numbers are the development half, even ones the
// test half, and a floor per half keeps a regression from passing.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/units.h"
#include "engines/llamacpp/llamacpp.h"
#include "engines/llamacpp/test_models.h"
#include "testutil/hollow.h"
#include "testutil/json_fields.h"
#include "vramfit/inspect.h"

namespace vramfit::llamacpp {
namespace {

namespace fs = std::filesystem;
using simdjson::dom::element;

// Devices within the aim today, per half: raise when the planner improves, never lower.
constexpr int kFloorDev = 14;
constexpr int kFloorTest = 25;

using testutil::Int;
using testutil::Str;
bool Bool(element e, const char* key) {
  bool v = false;
  return e[key].get_bool().get(v) ? false : v;
}
Dtype TypeNamed(const std::string& name) {
  for (int i = 0; i < kDtypeCount; ++i) {
    if (DtypeName(static_cast<Dtype>(i)) == name) return static_cast<Dtype>(i);
  }
  ADD_FAILURE() << "unknown type " << name;
  return Dtype::kF16;
}

testing::Hparams ReadHparams(element r) {
  element h = r["hparams"];
  testing::Hparams p;
  p.arch = Str(h, "arch");
  auto u = [&](const char* k) { return static_cast<uint32_t>(Int(h, k)); };
  p.n_layer = u("n_layer"), p.n_embd = u("n_embd"), p.n_head = u("n_head");
  p.n_head_kv = u("n_head_kv"), p.head_k = u("head_k"), p.head_v = u("head_v");
  p.n_ff = u("n_ff"), p.n_vocab = u("n_vocab"), p.n_ctx_train = u("n_ctx_train");
  p.n_swa = u("n_swa"), p.n_expert = u("n_expert"), p.n_expert_used = u("n_expert_used");
  p.n_ff_exp = u("n_ff_exp"), p.n_ff_shexp = u("n_ff_shexp"), p.dense_lead = u("dense_lead");
  p.kv_lora = u("kv_lora"), p.q_lora = u("q_lora"), p.rope_dim = u("rope_dim");
  p.k_mla = u("k_mla"), p.v_mla = u("v_mla"), p.full_attn_interval = u("full_attn_interval");
  p.ssm_conv = u("ssm_conv"), p.ssm_state = u("ssm_state"), p.ssm_groups = u("ssm_groups");
  p.ssm_rank = u("ssm_rank"), p.ssm_inner = u("ssm_inner");
  p.tied = Bool(h, "tied");
  bool gated = true;
  if (!h["gated_ffn"].get_bool().get(gated)) p.gated_ffn = gated;
  element t;
  if (!r["types"].get(t)) {
    p.layer_type = TypeNamed(Str(t, "layer"));
    p.embd_type = TypeNamed(Str(t, "embd"));
    p.output_type = TypeNamed(Str(t, "output"));
    if (!Str(t, "attn").empty()) p.attn_type = TypeNamed(Str(t, "attn"));
  } else {
    p.layer_type = p.embd_type = p.output_type = Dtype::kF16;
  }
  double gib = 0;
  if (!r["file_size_gib"].get_double().get(gib)) {
    p.file_bytes = static_cast<uint64_t>(std::llround(gib * core::kGiBf));
  }
  return p;
}

LlamaCppSettings ReadSettings(element r) {
  element s = r["settings"];
  LlamaCppSettings x;
  x.version = Str(r, "build");
  x.program = Str(r, "program") == "llama-cli" ? Program::kCli : Program::kServer;
  x.max_model_len = Int(s, "n_ctx");
  x.n_ubatch = Int(s, "n_ubatch", 512);
  x.max_num_seqs = Int(s, "n_seq_max", 1);
  bool unified = false;
  x.kv_unified = s["kv_unified"].get_bool().get(unified) ? -1 : unified ? 1 : 0;
  x.flash_attn = Bool(s, "flash_attn") ? "on" : "off";
  x.kv_cache_dtype = Str(s, "type_k");
  x.cache_type_v = Str(s, "type_v");
  x.n_gpu_layers = Int(s, "n_gpu_layers", -1);
  x.pipeline_parallel_size = Int(s, "devices", 1);
  x.n_cpu_moe = Int(s, "n_cpu_moe");
  x.swa_full = Bool(s, "swa_full");
  x.mmap = !Bool(s, "no_mmap");
  const std::string mode = Str(s, "split_mode");
  if (!mode.empty()) x.split_mode = mode;
  simdjson::dom::array a;
  if (!s["tensor_split"].get_array().get(a)) {
    for (element v : a) {
      double d = 0;
      if (!v.get_double().get(d)) x.tensor_split.push_back(d);
    }
  }
  if (!s["overrides"].get_array().get(a)) {
    for (element v : a) {
      simdjson::dom::array pair;
      if (v.get_array().get(pair) || pair.size() != 2) continue;
      std::string_view p, b;
      if (pair.at(0).get_string().get(p) || pair.at(1).get_string().get(b)) continue;
      x.overrides.emplace_back(std::string(p), std::string(b));
    }
  }
  return x;
}

// The printed value of component `key` on device `d`, when the log shows it.
bool Reported(element r, const char* key, size_t d, double* mib) {
  simdjson::dom::array a;
  if (r["reported_mib"][key].get_array().get(a) || d >= a.size()) return false;
  return !a.at(d).get_double().get(*mib);
}

TEST(LlamaCppValidation, PublishedBuffersWithinTheFloor) {
  const fs::path root(VRAMFIT_SOURCE_DIR);
  simdjson::dom::parser parser;
  element doc;
  ASSERT_EQ(parser.load((root / "validation/llamacpp/records.json").string()).get(doc),
            simdjson::SUCCESS);
  simdjson::dom::array records;
  ASSERT_EQ(doc["records"].get_array().get(records), simdjson::SUCCESS);
  const std::string dir = vramfit::testing::MakeTempDir("llamacpp-validation");
  const GpuSpec big = CustomGpu(uint64_t{1} << 40);  // buffers are scored, not the verdict
  struct Half {
    int records = 0, devices = 0, within = 0;
    double sum_abs = 0, sum_signed = 0;
  };
  std::map<std::string, Half> halves;
  std::map<std::string, std::pair<int, int>> components;  // name -> scored, within
  std::ostringstream table;
  std::vector<std::string> unexplained;
  for (element r : records) {
    const std::string id = Str(r, "id");
    const int number = std::atoi(id.c_str() + 1);
    const std::string half = number % 2 == 1 ? "dev" : "test";
    const testing::Hparams h = ReadHparams(r);
    const std::string path = dir + "/" + id + ".gguf";
    testing::WriteModel(h, path);
    auto inv = InspectModel(path, {});
    ASSERT_TRUE(inv.ok()) << id << ": " << inv.status().ToString();
    auto p = PlanLlamaCpp(*inv, big, ReadSettings(r));
    ASSERT_TRUE(p.ok()) << id << ": " << p.status().ToString();
    ++halves[half].records;
    for (size_t d = 0; d < p->devices.size(); ++d) {
      const DeviceBuffers& b = p->devices[d];
      double reported = 0, planned = 0;
      std::string parts;
      auto add = [&](const char* key, uint64_t bytes) {
        double mib = 0;
        if (!Reported(r, key, d, &mib)) return;
        const double pl = static_cast<double>(bytes) / core::kMiBf;
        reported += mib;
        planned += pl;
        parts += fmt::format("{}{} {:.2f}/{:.2f}", parts.empty() ? "" : ", ", key, mib, pl);
        auto& c = components[key];
        ++c.first;
        c.second += std::fabs(pl - mib) <= std::max(0.03 * mib, 100.0);
      };
      add("model", b.model);
      add("kv", b.kv + b.state);
      add("context", b.kv + b.state);
      add("compute", b.compute);
      if (parts.empty()) continue;
      const double err = planned - reported;
      const bool within = std::fabs(err) <= std::max(0.03 * reported, 100.0);
      Half& hf = halves[half];
      ++hf.devices;
      hf.within += within;
      hf.sum_abs += std::fabs(err);
      hf.sum_signed += err;
      const std::string why = within ? "" : Str(r, "scoring_note");
      if (!within && why.empty()) unexplained.push_back(id);
      table << fmt::format("| {} | {} | {} | {} | {:.2f} | {:.2f} | {:+.2f} | {:+.1f}% | {} |\n",
                           id, half, d, parts, reported, planned, err,
                           reported > 0 ? 100 * err / reported : 0.0,
                           within ? "yes" : "no: " + why);
    }
  }
  fs::remove_all(dir);
  std::ostringstream out;
  out << "# Validation: llama.cpp\n\n"
      << "Generated by `src/engines/llamacpp/validation_test.cc` from "
         "`validation/llamacpp/records.json` (`VRAMFIT_UPDATE_GOLDEN=1` rewrites it).\n"
      << "Each record is one published llama.cpp start-up: the per-device buffer sizes it "
         "printed (`CUDA0 model buffer size`, `KV buffer size`, `compute buffer size`, or the "
         "memory breakdown's context column) with the settings and hyperparameters the same "
         "log printed. The model is rebuilt from those hyperparameters as a hollow GGUF file "
         "(its layers padded to the printed file size) and planned with the record's build "
         "rules. One row per device: the printed buffers summed against the plan's same "
         "buffers (cells: printed/planned MiB). Error is planned minus printed: positive is "
         "pessimistic, the safe side. Aim: within 3% or 100 MiB. Odd record numbers are the "
         "development half, even numbers the test half (a rule fixed before scoring).\n\n";
  for (const auto& [name, hf] : halves) {
    out << fmt::format("- {} half: {} records, {} devices, {} within the aim ({:.0f}%); mean "
                       "|error| {:.1f} MiB, mean signed error {:+.1f} MiB\n",
                       name, hf.records, hf.devices, hf.within,
                       hf.devices ? 100.0 * hf.within / hf.devices : 0.0,
                       hf.devices ? hf.sum_abs / hf.devices : 0.0,
                       hf.devices ? hf.sum_signed / hf.devices : 0.0);
  }
  out << "\nBy buffer (every device and half):";
  for (const auto& [name, c] : components) {
    out << fmt::format(" {} {}/{} within the aim;", name, c.second, c.first);
  }
  out << "\n\n| record | half | device | printed/planned MiB | printed MiB | planned MiB | "
         "error MiB | error | within |\n|---|---|---|---|---|---|---|---|---|\n"
      << table.str();
  const std::string text = out.str();
  const fs::path doc_path = root / "docs/validation-llamacpp.md";
  if (std::getenv("VRAMFIT_UPDATE_GOLDEN") != nullptr) std::ofstream(doc_path) << text;
  std::ifstream in(doc_path);
  std::stringstream committed;
  committed << in.rdbuf();
  EXPECT_EQ(committed.str(), text)
      << "docs/validation-llamacpp.md is stale: rerun with VRAMFIT_UPDATE_GOLDEN=1";
  EXPECT_GE(halves["dev"].within, kFloorDev);
  EXPECT_GE(halves["test"].within, kFloorTest);
  EXPECT_GE(halves["dev"].records + halves["test"].records, 30);
  EXPECT_TRUE(unexplained.empty()) << "misses without a scoring_note: " << unexplained.size()
                                   << ", first " << unexplained[0];
}

}  // namespace
}  // namespace vramfit::llamacpp
