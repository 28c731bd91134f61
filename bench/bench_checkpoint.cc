// Benchmarks for hostile checkpoints, over in-memory sources (no disk): 100,000 tensor names
// held by two shards (the index check used to scan the right shard per name: 41 s), one
// header of 1,000,000 tensors (the header reader builds no document), and 100,000
// environment words before a vLLM command line. docs/testing.md has the figures.
#include <benchmark/benchmark.h>

#include <map>
#include <string>

#include "sources/checkpoint.h"
#include "testutil/hollow.h"
#include "vramfit/engine.h"
#include "vramfit/formats.h"
#include "vramfit/source.h"

namespace {

void BM_NamesInTwoShards(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const auto src = vramfit::MemorySource("mem", vramfit::testing::NamesInTwoShards(n));
  for (auto _ : state) {
    auto ck = vramfit::ReadCheckpoint(*src, {});
    if (!ck.ok()) state.SkipWithError(ck.status().message().c_str());
    benchmark::DoNotOptimize(ck);
  }
  state.counters["names"] = static_cast<double>(n);
}
BENCHMARK(BM_NamesInTwoShards)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);

void BM_ParseLargeHeader(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const std::string img = vramfit::testing::OneByteTensorsImage(n);
  for (auto _ : state) {
    auto f = vramfit::ParseSafetensors(img, img.size(), "big.safetensors");
    if (!f.ok()) state.SkipWithError(f.status().message().c_str());
    benchmark::DoNotOptimize(f);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * img.size()));
}
BENCHMARK(BM_ParseLargeHeader)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

void BM_EnvironmentWords(benchmark::State& state) {
  std::vector<std::string> argv(static_cast<size_t>(state.range(0)), "X=1");
  for (const char* w : {"vllm", "serve", "qwen3-8b", "--max-model-len", "4096"}) argv.push_back(w);
  for (auto _ : state) {
    const vramfit::Engine* e = vramfit::EngineForCommand(argv);
    auto cmd = e->read_command(argv);
    benchmark::DoNotOptimize(cmd);
  }
}
BENCHMARK(BM_EnvironmentWords)->Arg(100'000)->Unit(benchmark::kMillisecond);

}  // namespace
