// Ollama's estimate, rule by rule, with the arithmetic written out: the KV cache and graph of
// GraphSize (llama rule, the GQA fallback, gemma3's sliding layers, the recurrent state), and
// estimateGPULayers's placement on one GPU, under num_gpu, and round robin over two.
#include <gtest/gtest.h>

#include "engines/ollama/ollama.h"

namespace vramfit::ollama {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;

// Llama-3-8B's shape: 32 layers, 4096 wide, 32 heads, 8 KV heads of 128, 128,256 tokens.
ModelFacts Llama8B() {
  ModelFacts f;
  f.arch = "llama";
  f.layer_bytes.assign(32, 0);
  f.heads.assign(32, 32);
  f.heads_kv.assign(32, 8);
  f.embedding = 4096;
  f.vocab = 128256;
  f.head_k = f.head_v = 128;
  return f;
}

TEST(OllamaEstimate, KvBytesPerElementFollowsTheCacheType) {
  EXPECT_EQ(KvBytesPerElement("f16"), 2);
  EXPECT_EQ(KvBytesPerElement(""), 2);
  EXPECT_EQ(KvBytesPerElement("q8_0"), 1);
  EXPECT_EQ(KvBytesPerElement("q4_0"), 0.5);
  EXPECT_EQ(KvBytesPerElement("f32"), 4);
}

// num_ctx 8192 x 2 sequences = 16,384 cells; num_batch 512.
//   kv per layer = 16384 x (128 + 128) x 8 heads x 2 bytes = 67,108,864 (64 MiB)
//   full    = max(4 x 512 x (1 + 4 x 4096 + 16384 x 33), 4 x 512 x (4096 + 128256))
//           = 2048 x 557,057 = 1,140,852,736
//   partial = 4 x 512 x 4096 + max(4 x 512 x (1 + 4096 + 16384) + 4096^2 x 9/16
//             + 4 x 16384 x (512 x 32 + 128 x 8), 4 x 512 x 132352 + 4096 x 128256 x 105/128)
//           = 8,388,608 + max(1,192,232,960, 701,997,056) = 1,200,621,568
TEST(OllamaEstimate, LlamaGraphAndKvArithmetic) {
  const GraphSize g = EstimateGraph(Llama8B(), 8192, 512, 2, "f16", false);
  ASSERT_EQ(g.kv.size(), 32u);
  EXPECT_EQ(g.kv[0], 64 * kMiB);
  EXPECT_EQ(g.kv[31], 64 * kMiB);
  EXPECT_EQ(g.full, 1140852736u);
  EXPECT_EQ(g.partial, 1200621568u);
  // q8_0 halves the cache (1 byte per element), q4_0 quarters it.
  EXPECT_EQ(EstimateGraph(Llama8B(), 8192, 512, 2, "q8_0", true).kv[0], 32 * kMiB);
  EXPECT_EQ(EstimateGraph(Llama8B(), 8192, 512, 2, "q4_0", true).kv[0], 16 * kMiB);
}

// An architecture without a graph rule (here "mistral3"-like "foo"): partial = GQA x kv / 6 =
// 32/8 x (32 x 64 MiB) / 6 = 4 x 2 GiB / 6 = 1,431,655,765; full takes partial's value.
TEST(OllamaEstimate, UnknownArchitectureTakesTheGqaFallback) {
  ModelFacts f = Llama8B();
  f.arch = "foo";
  f.layer_bytes.assign(32, 100 * kMiB);
  const GraphSize g = EstimateGraph(f, 8192, 512, 2, "f16", false);
  EXPECT_EQ(g.partial, 0u);
  const MemoryEstimate e = EstimateGpuLayers(f, g, {{80 * kGiB}, 0, -1, 0});
  EXPECT_EQ(e.graph_partial, 4 * (2 * kGiB) / 6);
  EXPECT_EQ(e.graph_full, e.graph_partial);
  EXPECT_EQ(e.kv, 2 * kGiB);
}

// gemma3: layers 0-4 of each 6 slide over (sequences x window + batch) cells:
// (1 x 1024 + 512) x (256 + 256) x 8 x 2 = 12,582,912; layer 5 holds num_ctx: 4096 x 512 x 16.
TEST(OllamaEstimate, Gemma3SlidingLayersHoldTheirWindow) {
  ModelFacts f = Llama8B();
  f.arch = "gemma3";
  f.layer_bytes.assign(6, 0);
  f.heads.assign(6, 16);
  f.heads_kv.assign(6, 8);
  f.head_k = f.head_v = 256;
  f.sliding_window = 1024;
  const GraphSize g = EstimateGraph(f, 4096, 512, 1, "f16", true);
  EXPECT_EQ(g.kv[0], 1536u * 512 * 16);
  EXPECT_EQ(g.kv[4], 1536u * 512 * 16);
  EXPECT_EQ(g.kv[5], 4096u * 512 * 16);
}

// A recurrent layer (no heads): (d_conv - 1) x (d_inner + 2 x groups x d_state) + d_state x
// d_inner F32 values, whatever the context: 3 x (4096 + 2 x 16 x 128) + 128 x 4096 = 24,576 +
// 524,288 = 548,864 values = 2,195,456 bytes.
TEST(OllamaEstimate, RecurrentLayerStateIgnoresContextAndSequences) {
  ModelFacts f = Llama8B();
  f.arch = "qwen3next";
  f.layer_bytes.assign(4, 0);
  f.heads = {0, 0, 0, 16};
  f.heads_kv = {0, 0, 0, 2};
  f.head_k = f.head_v = 256;
  f.ssm_conv = 4, f.ssm_inner = 4096, f.ssm_state = 128, f.ssm_groups = 16;
  const GraphSize a = EstimateGraph(f, 4096, 512, 1, "f16", false);
  const GraphSize b = EstimateGraph(f, 65536, 512, 4, "f16", false);
  EXPECT_EQ(a.kv[0], 2195456u);
  EXPECT_EQ(b.kv[0], 2195456u);
  EXPECT_EQ(a.kv[3], 4096u * 512 * 2 * 2);
}

// Ten layers of 900 MiB + 100 MiB of cache (1000 MiB each), an output layer of 500 MiB, a
// graph of 1000 MiB (full and partial), the 457 MiB minimum.
ModelFacts TenLayers() {
  ModelFacts f;
  f.arch = "test";
  f.layer_bytes.assign(10, 900 * kMiB);
  f.heads.assign(10, 8);
  f.heads_kv.assign(10, 8);
  f.output_bytes = 500 * kMiB;
  return f;
}
GraphSize TenLayersGraph() {
  GraphSize g;
  g.kv.assign(10, 100 * kMiB);
  g.partial = g.full = 1000 * kMiB;
  return g;
}

// 10 GiB: the GPU qualifies (10240 >= 1000 + 457 + 2 x 1000); it holds 457 + 1000 (one
// layer's buffer) = 1457 MiB, then takes layer k while 1457 + 1000 k + 1000 (graph) + 1000
// (the layer) < 10240: k = 0..6, seven layers. The other three and the output overflow.
TEST(OllamaEstimate, OneGpuTakesTheLayersThatFitFromTheLast) {
  const MemoryEstimate e = EstimateGpuLayers(TenLayers(), TenLayersGraph(), {{10 * kGiB}});
  EXPECT_EQ(e.layers, 7);
  EXPECT_EQ(e.layers_model, 11);
  EXPECT_FALSE(e.fully_loaded);
  EXPECT_EQ(e.allocations[0], (1457 + 7000 + 1000) * kMiB);  // with the partial graph
  EXPECT_EQ(e.vram, 9457 * kMiB);
  EXPECT_EQ(e.total, (9457 + 3000 + 500) * kMiB);
  EXPECT_EQ(e.kv, 1000 * kMiB);
  EXPECT_EQ(e.weights_repeating, 9000 * kMiB);
}

// 16 GiB: all ten (1457 + 9000 + 2000 < 16384 at the last) and the output layer (11457 + 1000
// + 500 < 16384): 11 of 11, with the full graph: 11457 + 500 + 1000 = 12957 MiB.
TEST(OllamaEstimate, OneGpuTakesEverythingWhenItFits) {
  const MemoryEstimate e = EstimateGpuLayers(TenLayers(), TenLayersGraph(), {{16 * kGiB}});
  EXPECT_EQ(e.layers, 11);
  EXPECT_TRUE(e.fully_loaded);
  EXPECT_EQ(e.vram, 12957 * kMiB);
  EXPECT_EQ(e.total, e.vram);
}

// num_gpu 3: three layers, then everything else overflows (the output layer too).
TEST(OllamaEstimate, NumGpuCapsTheLayers) {
  const MemoryEstimate e = EstimateGpuLayers(TenLayers(), TenLayersGraph(), {{16 * kGiB}, 0, 3});
  EXPECT_EQ(e.layers, 3);
  EXPECT_EQ(e.vram, (1457 + 3000 + 1000) * kMiB);
  EXPECT_EQ(e.total, e.vram + (7000 + 500) * kMiB);
}

// OLLAMA_GPU_OVERHEAD 2 GiB on 10 GiB: layer k while 1457 + 1000 k + 2000 + 2048 < 10240:
// k = 0..4, five layers.
TEST(OllamaEstimate, GpuOverheadIsKeptFree) {
  const MemoryEstimate e =
      EstimateGpuLayers(TenLayers(), TenLayersGraph(), {{10 * kGiB}, 2 * kGiB, -1});
  EXPECT_EQ(e.layers, 5);
}

// Two GPUs of 6 GiB: layer i goes to GPU (i mod 2) of those left: 9 -> 1, 8 -> 0, ... each
// takes three (1457 + 1000 k + 2000 < 6144 for k = 0..2); layer 3 finds neither.
TEST(OllamaEstimate, TwoGpusRoundRobinFromTheLastLayer) {
  const MemoryEstimate e =
      EstimateGpuLayers(TenLayers(), TenLayersGraph(), {{6 * kGiB, 6 * kGiB}});
  EXPECT_EQ(e.layers, 6);
  EXPECT_EQ(e.split, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(e.allocations[0], (1457 + 3000 + 1000) * kMiB);
}

// A GPU below the graph + minimum + two layers takes nothing: no layer anywhere.
TEST(OllamaEstimate, TooSmallAGpuTakesNoLayer) {
  const MemoryEstimate e = EstimateGpuLayers(TenLayers(), TenLayersGraph(), {{3 * kGiB}});
  EXPECT_EQ(e.layers, 0);
  EXPECT_EQ(e.vram, 0u);
  EXPECT_EQ(e.total, (10000 + 500) * kMiB);
}

}  // namespace
}  // namespace vramfit::ollama
