// Benchmarks for reading checkpoints. The fixture is a hollow checkpoint (real headers,
// sparse data) of a Qwen3-MoE-shaped AWQ model with 256 experts: 111,283 tensors in 160
// shards. Reported: the whole `inspect` (files, parse, roles, audit), the header parser on
// in-memory bytes, and simdjson's raw DOM parse of the same bytes (the practical limit).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <simdjson.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "formats/safetensors_readers.h"
#include "testutil/hollow.h"
#include "vramfit/gpu.h"
#include "vramfit/inspect.h"
#include "engines/vllm/vllm.h"

namespace {

constexpr int kShards = 160;

struct Fixture {
  std::string dir;
  std::vector<std::string> headers;  // each file's first 8 + N bytes
  std::vector<uint64_t> sizes;
  uint64_t header_bytes = 0;
  size_t tensors = 0;
};

const Fixture& GetFixture() {
  static Fixture f = [] {
    Fixture x;
    const std::string config = R"({"architectures":["Qwen3MoeForCausalLM"],"model_type":"qwen3_moe",
      "hidden_size":2048,"intermediate_size":6144,"num_hidden_layers":48,"num_attention_heads":32,
      "num_key_value_heads":4,"head_dim":128,"vocab_size":151936,"tie_word_embeddings":false,
      "num_experts":256,"num_experts_per_tok":8,"moe_intermediate_size":768,"torch_dtype":"float16",
      "quantization_config":{"quant_method":"awq","bits":4,"group_size":128,"version":"gemm",)"
          R"("zero_point":true}})";
    auto spec = vramfit::ModelSpecFromConfigJson(config, "bench config");
    auto synth = vramfit::SynthesizeTensors(*spec);
    std::vector<vramfit::testing::HollowTensor> tensors;
    for (const auto& t : synth->tensors) tensors.push_back({t.name, t.dtype, t.shape.ToVector()});
    x.tensors = tensors.size();
    x.dir = vramfit::testing::MakeTempDir("bench");
    vramfit::testing::WriteHollowCheckpoint(x.dir, tensors, kShards);
    vramfit::testing::WriteText(x.dir + "/config.json", config);
    for (const auto& e : std::filesystem::directory_iterator(x.dir)) {
      if (e.path().extension() != ".safetensors") continue;
      std::ifstream in(e.path(), std::ios::binary);
      char len[8];
      in.read(len, 8);
      uint64_t n = 0;
      for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(len[i]);
      std::string h(8 + n, '\0');
      std::copy(len, len + 8, h.begin());
      in.read(h.data() + 8, static_cast<std::streamsize>(n));
      x.headers.push_back(std::move(h));
      x.sizes.push_back(std::filesystem::file_size(e.path()));
      x.header_bytes += n;
    }
    return x;
  }();
  return f;
}

void BM_InspectHollowCheckpoint(benchmark::State& state) {
  const Fixture& f = GetFixture();
  for (auto _ : state) {
    auto inv = vramfit::InspectModel(f.dir, {});
    if (!inv.ok()) state.SkipWithError(inv.status().message().c_str());
    benchmark::DoNotOptimize(inv);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * f.header_bytes));
  state.counters["tensors"] = static_cast<double>(f.tensors);
  state.counters["shards"] = kShards;
}
BENCHMARK(BM_InspectHollowCheckpoint)->Unit(benchmark::kMillisecond);

void BM_ParseSafetensorsHeaders(benchmark::State& state) {
  const Fixture& f = GetFixture();
  for (auto _ : state) {
    for (size_t i = 0; i < f.headers.size(); ++i) {
      auto r = vramfit::ParseSafetensors(f.headers[i], f.sizes[i], "shard");
      benchmark::DoNotOptimize(r);
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * f.header_bytes));
}
BENCHMARK(BM_ParseSafetensorsHeaders)->Unit(benchmark::kMillisecond);

// The same with the full JsonReader alone (what ParseSafetensors falls back to, and what it
// was before the fast reader).
void BM_ParseSafetensorsHeadersFullReader(benchmark::State& state) {
  const Fixture& f = GetFixture();
  for (auto _ : state) {
    for (size_t i = 0; i < f.headers.size(); ++i) {
      auto r = vramfit::formats::ParseSafetensorsWith(f.headers[i], f.sizes[i], "shard",
                                                      vramfit::formats::HeaderReader::kFullOnly);
      benchmark::DoNotOptimize(r);
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * f.header_bytes));
}
BENCHMARK(BM_ParseSafetensorsHeadersFullReader)->Unit(benchmark::kMillisecond);

void BM_SimdjsonRawParse(benchmark::State& state) {
  const Fixture& f = GetFixture();
  std::vector<simdjson::padded_string> padded;
  for (const auto& h : f.headers)
    padded.emplace_back(h.substr(8));
  simdjson::dom::parser parser;
  for (auto _ : state) {
    for (const auto& p : padded) {
      simdjson::dom::element e;
      auto err = parser.parse(p).get(e);
      benchmark::DoNotOptimize(err);
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * f.header_bytes));
}
BENCHMARK(BM_SimdjsonRawParse)->Unit(benchmark::kMillisecond);

void BM_SynthesizeCatalogDeepSeekV3(benchmark::State& state) {
  for (auto _ : state) {
    auto inv = vramfit::InspectModel("deepseek-v3", {});
    benchmark::DoNotOptimize(inv);
  }
}
BENCHMARK(BM_SynthesizeCatalogDeepSeekV3)->Unit(benchmark::kMillisecond);

// One vLLM plan (all stages, no advice) from an inventory and weight profile already built.
void BM_PlanVllm(benchmark::State& state, const char* model, const char* gpu,
                 int64_t max_model_len) {
  const auto inv = vramfit::InspectModel(model, {});
  const auto g = vramfit::FindGpu(gpu);
  vramfit::VllmSettings s;
  s.max_model_len = max_model_len;
  const auto profile = vramfit::ProfileVllmWeights(*inv);
  for (auto _ : state) {
    auto plan = vramfit::PlanVllm(*inv, *profile, *g, s);
    benchmark::DoNotOptimize(plan);
  }
  state.counters["plans_per_second"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK_CAPTURE(BM_PlanVllm, qwen3_8b_h100, "qwen3-8b", "h100", 32768)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_PlanVllm, qwen3_30b_a3b_gptq_4090, "qwen3-30b-a3b-gptq-int4", "4090", 32768)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_PlanVllm, qwen3_4b_awq_4090_fails_kv, "qwen3-4b-instruct-2507-awq", "4090",
                  262144)
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
