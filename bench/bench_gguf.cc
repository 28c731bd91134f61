// GGUF header parsing next to the raw read of the same bytes: a 1,000-tensor header (36
// layers' names, shapes and types of a Qwen3-8B-like model), alone and with a 151,936-token
// vocabulary, parsed from memory against a memcpy of its bytes, and read from a hollow file
// (pread of the header plus the parse) against a bare pread of the same bytes.
// docs/benchmarks.md has the figures.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "sources/gguf_read.h"
#include "testutil/gguf_writer.h"
#include "testutil/hollow.h"
#include "vramfit/gguf.h"
#include "vramfit/source.h"

namespace {

using vramfit::Dtype;
using vramfit::testing::GgufWriter;

// 1,000 tensors: embeddings, output, and 111 layers of nine tensors (~ a 110-layer dense model).
GgufWriter Header1000(bool vocab) {
  GgufWriter w;
  w.Str("general.architecture", "qwen3");
  w.U32("qwen3.block_count", 111);
  w.U32("qwen3.embedding_length", 4096);
  if (vocab) w.StrArray("tokenizer.ggml.tokens", 151936);
  w.Tensor("token_embd.weight", Dtype::kQ4_K, {151936, 4096});
  for (int i = 0; i < 111; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    w.Tensor(b + "attn_norm.weight", Dtype::kF32, {4096});
    w.Tensor(b + "attn_q.weight", Dtype::kQ4_K, {4096, 4096});
    w.Tensor(b + "attn_k.weight", Dtype::kQ4_K, {1024, 4096});
    w.Tensor(b + "attn_v.weight", Dtype::kQ6_K, {1024, 4096});
    w.Tensor(b + "attn_output.weight", Dtype::kQ4_K, {4096, 4096});
    w.Tensor(b + "ffn_norm.weight", Dtype::kF32, {4096});
    w.Tensor(b + "ffn_gate.weight", Dtype::kQ4_K, {12288, 4096});
    w.Tensor(b + "ffn_up.weight", Dtype::kQ4_K, {12288, 4096});
    w.Tensor(b + "ffn_down.weight", Dtype::kQ6_K, {4096, 12288});
  }
  w.Tensor("output.weight", Dtype::kQ6_K, {151936, 4096});
  return w;
}

void BM_GgufParse(benchmark::State& state) {
  const GgufWriter w = Header1000(state.range(0) != 0);
  const std::string h = w.Header();
  for (auto _ : state) {
    auto f = vramfit::ParseGguf(h, w.FileSize(), "m.gguf");
    if (!f.ok()) state.SkipWithError(f.status().message().c_str());
    benchmark::DoNotOptimize(f);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * h.size()));
  state.counters["header_bytes"] = static_cast<double>(h.size());
}
BENCHMARK(BM_GgufParse)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

void BM_GgufMemcpy(benchmark::State& state) {
  const std::string h = Header1000(state.range(0) != 0).Header();
  std::string out(h.size(), '\0');
  for (auto _ : state) {
    std::memcpy(out.data(), h.data(), h.size());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * h.size()));
}
BENCHMARK(BM_GgufMemcpy)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// The same header in a hollow file (its data a sparse hole of ~100 GB).
struct File {
  std::string dir, name = "m.gguf";
  uint64_t header = 0;
  explicit File(bool vocab) : dir(vramfit::testing::MakeTempDir("bench-gguf")) {
    const GgufWriter w = Header1000(vocab);
    w.WriteHollow(dir + "/" + name);
    header = w.Header().size();
  }
  ~File() { std::filesystem::remove_all(dir); }
};

void BM_GgufReadHeaderFile(benchmark::State& state) {
  File f(state.range(0) != 0);
  auto src = vramfit::OpenLocalDirectory(f.dir);
  for (auto _ : state) {
    uint64_t read = 0;
    auto g = vramfit::ReadGgufHeader(**src, f.name, &read);
    if (!g.ok()) state.SkipWithError(g.status().message().c_str());
    benchmark::DoNotOptimize(g);
    state.counters["bytes_read"] = static_cast<double>(read);
  }
  state.counters["header_bytes"] = static_cast<double>(f.header);
}
BENCHMARK(BM_GgufReadHeaderFile)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

void BM_GgufPreadHeader(benchmark::State& state) {
  File f(state.range(0) != 0);
  const std::string path = f.dir + "/" + f.name;
  std::string buf(f.header, '\0');
  for (auto _ : state) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    const ssize_t r = ::pread(fd, buf.data(), buf.size(), 0);
    ::close(fd);
    if (r != static_cast<ssize_t>(buf.size())) state.SkipWithError("short read");
    benchmark::DoNotOptimize(buf.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * buf.size()));
}
BENCHMARK(BM_GgufPreadHeader)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace
