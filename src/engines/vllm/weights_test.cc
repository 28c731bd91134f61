// vLLM per-rank weights: sharding, KV-head replication, vocab padding, Marlin drops, MTP.
#include "engines/vllm/weights.h"

#include <gtest/gtest.h>

#include "vramfit/inspect.h"

namespace vramfit {
namespace {

Inventory Catalog(const char* id) {
  auto inv = InspectModel(id, {});
  EXPECT_TRUE(inv.ok()) << id << ": " << inv.status().ToString();
  return *inv;
}

VllmWeightOptions Tp(int64_t tp) {
  VllmWeightOptions o;
  o.tensor_parallel_size = tp;
  return o;
}

TEST(VllmWeights, Tp1IsTheCheckpoint) {
  const Inventory inv = Catalog("qwen3-8b");
  auto w = VllmWeightsPerRank(inv, Tp(1));
  ASSERT_TRUE(w.ok());
  // The checkpoint plus the RoPE cos/sin table: 40,960 positions x 128 x 2 B.
  EXPECT_EQ(w->bytes_per_rank, inv.total_bytes + 40960u * 128 * 2);
  EXPECT_EQ(w->kernel, "unquantized");
  EXPECT_EQ(w->transient_bytes, 0u);
}

// Gemma 4 31B at TP 1: the checkpoint, the RoPE table (262,144 positions x the global head's
// 512 x 2 B) and, on each of the 10 K = V layers, the V slot vLLM fills with a copy of k_proj
// (4 KV heads x 512 x 5,376 x 2 B). E2B's 20 KV-shared layers each keep a whole qkv_proj: two
// copies of the k_proj of the layer they share with (1 KV head x 256 or 512 x 1,536 x 2 B).
TEST(VllmWeights, Gemma4KeepsVSlotsAndSharedProjections) {
  const Inventory big = Catalog("gemma-4-31b-it");
  auto w = VllmWeightsPerRank(big, Tp(1));
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->bytes_per_rank,
            big.total_bytes + 262144u * 512 * 2 + 10u * 4 * 512 * 5376 * 2);
  uint64_t tower = 0;
  for (const auto& e : big.tensors)
    if (e.role == Role::kVision || e.role == Role::kProjector) tower += e.info.bytes();
  ASSERT_GT(tower, 1000000000u);  // 27 x 1,152 layers: 1.1 GB
  auto tp2 = VllmWeightsPerRank(big, Tp(2));
  ASSERT_TRUE(tp2.ok());
  EXPECT_GE(tp2->bytes_per_rank, (w->bytes_per_rank - tower) / 2 + tower);
  const Inventory small = Catalog("gemma-4-e2b-it");
  auto e2b = VllmWeightsPerRank(small, Tp(1));
  ASSERT_TRUE(e2b.ok());
  EXPECT_EQ(e2b->bytes_per_rank, small.total_bytes + 131072u * 512 * 2 +
                                     2 * (16u * 256 + 4u * 512) * 1536 * 2);
}

TEST(VllmWeights, Tp2HalvesAllButReplicatedParts) {
  // Qwen3-8B: 8 KV heads split cleanly; norms (replicated) are the only whole tensors.
  const Inventory inv = Catalog("qwen3-8b");
  const uint64_t norms = [&] {
    uint64_t n = 0;
    for (const auto& e : inv.tensors) if (e.role == Role::kNorm) n += e.info.bytes();
    return n;
  }();
  auto w = VllmWeightsPerRank(inv, Tp(2));
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->bytes_per_rank, (inv.total_bytes - norms) / 2 + norms + 40960u * 128 * 2);
}

TEST(VllmWeights, KvHeadsReplicateWhenTpExceedsThem) {
  // Qwen3-30B-A3B has 4 KV heads: at TP 8 each rank keeps 1 head of k/v, not half of one.
  const Inventory inv = Catalog("qwen3-30b-a3b");
  uint64_t kv = 0;
  for (const auto& e : inv.tensors) {
    if (e.module().ends_with("k_proj") || e.module().ends_with("v_proj")) kv += e.info.bytes();
  }
  auto w4 = VllmWeightsPerRank(inv, Tp(4));
  auto w8 = VllmWeightsPerRank(inv, Tp(8));
  ASSERT_TRUE(w4.ok() && w8.ok());
  // From TP 4 to TP 8 the k/v share stays at one head per rank (kv/4).
  const uint64_t rest4 = w4->bytes_per_rank - kv / 4, rest8 = w8->bytes_per_rank - kv / 4;
  EXPECT_NEAR(static_cast<double>(rest8), static_cast<double>(rest4) / 2,
              static_cast<double>(rest4) * 0.002);
}

TEST(VllmWeights, VocabIsPaddedTo64PerRank) {
  // vocab 1000 pads to 1024 rows: 256 per rank at TP 4 (not 250) for the embedding and lm_head.
  auto spec = ModelSpecFromConfigJson(
      R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":1,"num_attention_heads":4,
          "intermediate_size":128,"vocab_size":1000,"torch_dtype":"bfloat16"})", "c");
  ASSERT_TRUE(spec.ok());
  auto tensors = SynthesizeTensors(*spec);
  std::vector<FileTensors> files;
  files.push_back(std::move(*tensors));
  const Inventory inv = BuildInventory(&*spec, std::move(files));
  auto w = VllmWeightsPerRank(inv, Tp(4));
  ASSERT_TRUE(w.ok());
  uint64_t rest = 0;
  for (const auto& e : inv.tensors) {
    if (e.role == Role::kEmbedding || e.role == Role::kLmHead) continue;
    rest += e.role == Role::kNorm ? e.info.bytes() : e.info.bytes() / 4;
  }
  EXPECT_EQ(w->bytes_per_rank,
            rest + 2 * 256 * 64 * 2);  // no max_position_embeddings: no RoPE table
}

TEST(VllmWeights, GptqMarlinDropsSymmetricZerosAndGIdx) {
  const Inventory inv = Catalog("qwen3-30b-a3b-gptq-int4");
  uint64_t dropped = 0;
  for (const auto& e : inv.tensors) {
    if (e.info.name.ends_with(".qzeros") || e.info.name.ends_with(".g_idx"))
      dropped += e.info.bytes();
  }
  auto w = VllmWeightsPerRank(inv, Tp(1));
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->kernel, "gptq_marlin");
  EXPECT_EQ(w->dropped_bytes, dropped);
  EXPECT_EQ(w->bytes_per_rank, inv.total_bytes - dropped + 40960u * 128 * 2);
  EXPECT_GT(w->transient_bytes, 0u);  // one layer's expert stack repacked
  EXPECT_EQ(w->transient_reason,
            "Marlin repack of layer 0 experts (w13)");  // the largest repack unit
}

// An AutoRound checkpoint (GPTQ packing) is served by the same kernels per layer
// (quantization/auto_round.py apply_gptq_quant_layer; inc/inc.py): gptq_marlin drops its
// symmetric zero points and g_idx; the 16-bit in_proj_a/b and mtp.fc stay as stored.
TEST(VllmWeights, AutoRoundIsServedLikeGptqMarlin) {
  const Inventory inv = Catalog("qwen3.6-27b-int4-autoround");
  EXPECT_EQ(inv.spec.quant.method_text, "auto-round");
  uint64_t dropped = 0, mtp = 0;
  for (const auto& e : inv.tensors) {
    if (e.role == Role::kMtp) {
      mtp += e.info.bytes();
    } else if (e.info.name.ends_with(".qzeros") || e.info.name.ends_with(".g_idx")) {
      dropped += e.info.bytes();
    }
    if (e.info.name == "mtp.fc.weight") EXPECT_FALSE(e.quantized);
    if (e.info.name.find("in_proj_a") != std::string::npos ||
        e.info.name.find("in_proj_b") != std::string::npos) {
      EXPECT_FALSE(e.quantized) << e.info.name;
    }
    if (e.info.name.find("in_proj_qkv") != std::string::npos && e.part == Part::kWeight) {
      EXPECT_TRUE(e.quantized) << e.info.name;
    }
  }
  auto w = VllmWeightsPerRank(inv, Tp(1));
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->kernel, "auto-round (gptq_marlin)");
  EXPECT_EQ(w->dropped_bytes, dropped);
  EXPECT_EQ(w->skipped_bytes, mtp);  // the MTP module: loaded only for speculative decoding
  VllmWeightOptions plain = Tp(1);
  plain.marlin = false;  // before Ampere (or Turing): the plain GPTQ kernel keeps them
  EXPECT_EQ(VllmWeightsPerRank(inv, plain)->kernel, "auto-round (gptq)");
}

TEST(VllmWeights, MtpIsNotLoadedWithoutSpeculativeDecoding) {
  const Inventory inv = Catalog("qwen3-next-80b-a3b-instruct");
  auto w = VllmWeightsPerRank(inv, Tp(1));
  ASSERT_TRUE(w.ok());
  EXPECT_GT(w->skipped_bytes, 3ull << 30);  // 1,650,471,424 parameters in BF16
  EXPECT_EQ(w->bytes_per_rank + w->skipped_bytes, inv.total_bytes + 262144u * 256 * 2);
}

// With speculative decoding the MTP module loads and splits by TP like the decoder
// (qwen3_next_mtp.py: fc is a ColumnParallelLinear, the layers are decoder layers); its norms
// stay whole on every rank.
TEST(VllmWeights, MtpLinearsSplitByTp) {
  const Inventory inv = Catalog("qwen3.6-27b-int4-autoround");
  uint64_t matrices = 0, vectors = 0;
  for (const auto& e : inv.tensors) {
    if (e.role != Role::kMtp) continue;
    const bool dropped = e.info.name.ends_with(".qzeros") || e.info.name.ends_with(".g_idx");
    if (dropped) continue;  // gptq_marlin frees them
    (e.info.shape.size() >= 2 ? matrices : vectors) += e.info.bytes();
  }
  VllmWeightOptions o = Tp(2), with_mtp = Tp(2);
  with_mtp.load_speculative_mtp = true;
  auto w = VllmWeightsPerRank(inv, o);
  auto m = VllmWeightsPerRank(inv, with_mtp);
  ASSERT_TRUE(w.ok() && m.ok());
  EXPECT_GT(matrices, 0u);
  EXPECT_NEAR(static_cast<double>(m->bytes_per_rank - w->bytes_per_rank),
              static_cast<double>(matrices / 2 + vectors), 64.0);  // rounding per tensor
}

TEST(VllmWeights, ExpertParallelSplitsWholeExperts) {
  const Inventory inv = Catalog("qwen3-30b-a3b");
  VllmWeightOptions ep = Tp(2);
  ep.enable_expert_parallel = true;
  auto a = VllmWeightsPerRank(inv, Tp(2));
  auto b = VllmWeightsPerRank(inv, ep);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->bytes_per_rank, b->bytes_per_rank);  // same share, cut differently
}

TEST(VllmWeights, GptOssMxfp4ExpertsArePaddedForMarlin) {
  // Intermediate 2880 -> 2944 (multiple of 128), hidden 2880 -> 3072 (256); published loads:
  // gpt-oss-120b 65.97 GiB on one H100, gpt-oss-20b 13.72 GiB on one A100.
  auto big = VllmWeightsPerRank(Catalog("gpt-oss-120b"), Tp(1));
  auto small = VllmWeightsPerRank(Catalog("gpt-oss-20b"), Tp(1));
  ASSERT_TRUE(big.ok() && small.ok());
  EXPECT_NEAR(static_cast<double>(big->bytes_per_rank) / (1 << 30), 65.97, 0.05);
  EXPECT_NEAR(static_cast<double>(small->bytes_per_rank) / (1 << 30), 13.72, 0.05);
}

VllmWeightOptions Mxfp4(int64_t tp, const char* backend) {
  VllmWeightOptions o = Tp(tp);
  o.mxfp4_backend = backend;
  return o;
}

TEST(VllmWeights, GptOssMxfp4OnTritonKeepsBothScaleCopies) {
  // Triton (Hopper, v0.12+): values as stored, swizzled scales with rows padded to 256, the
  // checkpoint-layout scales kept, fp32 biases. Published v0.14 loads on one H100: gpt-oss-120b
  // 64.38 GiB (issue 33155, the llm-d table), gpt-oss-20b 13.47 GiB (llm-d table).
  auto big = VllmWeightsPerRank(Catalog("gpt-oss-120b"), Mxfp4(1, "triton"));
  auto small = VllmWeightsPerRank(Catalog("gpt-oss-20b"), Mxfp4(1, "triton"));
  ASSERT_TRUE(big.ok() && small.ok());
  EXPECT_NEAR(static_cast<double>(big->bytes_per_rank) / (1 << 30), 64.38, 0.06);
  EXPECT_NEAR(static_cast<double>(small->bytes_per_rank) / (1 << 30), 13.47, 0.05);
  EXPECT_EQ(big->kernel, "mxfp4 (Triton, triton_kernels)");
  EXPECT_EQ(big->transient_reason, "Triton swizzle of a layer's MXFP4 experts (w13)");
}

TEST(VllmWeights, GptOssMxfp4BytesPerBackend) {
  // Expert bytes of gpt-oss-120b (36 layers x 128 experts, hidden 2880, intermediate 2880)
  // against Marlin's (I to 128, H to 256, bf16 biases), per rank:
  // - TRT-LLM (I and H to 256, fp32 biases) at TP 1: I 2880 -> 3072 against Marlin's 2944;
  // - Triton at TP 2: I 1440 -> 1472 (64), H 2880 unpadded, scale rows 2944 -> 3072 and 2880 ->
  //   3072, the checkpoint's scales kept, fp32 biases.
  const Inventory inv = Catalog("gpt-oss-120b");
  auto marlin1 = VllmWeightsPerRank(inv, Mxfp4(1, "marlin"));
  auto trt1 = VllmWeightsPerRank(inv, Mxfp4(1, "flashinfer-trtllm"));
  auto marlin2 = VllmWeightsPerRank(inv, Mxfp4(2, "marlin"));
  auto triton2 = VllmWeightsPerRank(inv, Mxfp4(2, "triton"));
  ASSERT_TRUE(marlin1.ok() && trt1.ok() && marlin2.ok() && triton2.ok());
  EXPECT_EQ(trt1->bytes_per_rank - marlin1->bytes_per_rank, 2975072256u);
  EXPECT_EQ(marlin2->bytes_per_rank - triton2->bytes_per_rank, 1543569408u);
  EXPECT_EQ(trt1->kernel, "mxfp4 (FlashInfer TRT-LLM)");
  EXPECT_EQ(marlin1->kernel, "mxfp4 (Marlin)");
  EXPECT_EQ(trt1->transient_bytes, 0u);  // no Marlin repack
  EXPECT_GT(marlin1->transient_bytes, 0u);
}

TEST(VllmWeights, Mxfp4BackendByCapabilityAndRelease) {
  const vllm::Rules v011 = vllm::RulesFor(1100), v012 = vllm::RulesFor(1200),
                    v014 = vllm::RulesFor(1401);
  EXPECT_EQ(VllmMxfp4Backend(90, v011), "marlin");  // triton_kernels not bundled before 0.12
  EXPECT_EQ(VllmMxfp4Backend(90, v012), "triton");
  EXPECT_EQ(VllmMxfp4Backend(90, v014), "triton");
  EXPECT_EQ(VllmMxfp4Backend(80, v014), "marlin");   // Ampere
  EXPECT_EQ(VllmMxfp4Backend(89, v014), "marlin");   // Ada
  EXPECT_EQ(VllmMxfp4Backend(100, v011), "flashinfer-trtllm");
  EXPECT_EQ(VllmMxfp4Backend(103, v014), "flashinfer-trtllm");
  EXPECT_EQ(VllmMxfp4Backend(120, v014), "marlin");  // SM120: neither FlashInfer TRT-LLM nor Triton
  EXPECT_EQ(VllmMxfp4Backend(121, v014), "marlin");
  EXPECT_EQ(VllmMxfp4Backend(0, v014), "marlin");    // unknown card: the largest common layout
}

TEST(VllmWeights, OnlineFp8BeforeV016PeaksAtTheFullModel) {
  const Inventory inv = Catalog("qwen3-8b");
  VllmWeightOptions o = Tp(1);
  o.quantization = "fp8";
  o.rules = vllm::RulesFor(1200);
  auto w = VllmWeightsPerRank(inv, o);
  ASSERT_TRUE(w.ok());
  EXPECT_LT(w->bytes_per_rank, inv.total_bytes * 6 / 10);
  EXPECT_GE(w->load_peak_per_rank, inv.total_bytes * 9 / 10);
  o.rules = vllm::RulesFor(2000);
  auto w2 = VllmWeightsPerRank(inv, o);
  EXPECT_LT(w2->load_peak_per_rank, inv.total_bytes * 7 / 10);
}

TEST(VllmWeights, InFlightBitsandbytesPacksEveryLinearToNf4) {
  // --quantization bitsandbytes on Qwen3-8B (36 layers, hidden 4096, 32 x 128 query heads,
  // 8 x 128 KV heads, MLP 12288, vocab 151936, untied): each decoder linear is quantized on its
  // own by quantize_4bit(compress_statistics=True, quant_type="nf4"), values two per byte, a
  // uint8 absmax per 64 values and a float32 one per 256 of those; the embedding, lm_head and
  // norms stay bf16.
  const Inventory inv = Catalog("qwen3-8b");
  VllmWeightOptions o = Tp(1);
  o.quantization = "bitsandbytes";
  auto w = VllmWeightsPerRank(inv, o);
  ASSERT_TRUE(w.ok());
  auto nf4 = [](uint64_t n, uint64_t k) {
    const uint64_t e = n * k, blocks = (e + 63) / 64;
    return e / 2 + blocks + 4 * ((blocks + 255) / 256);
  };
  const uint64_t layer = 2 * nf4(4096, 4096) + 2 * nf4(1024, 4096) + 3 * nf4(12288, 4096) +
                         2 * 4096 * 2 + 2 * 128 * 2;  // two RMSNorms, q_norm and k_norm
  const uint64_t rotary = 40960 * 128 * 2;  // cos_sin_cache: max positions x head dim, bf16
  EXPECT_EQ(w->bytes_per_rank, 36 * layer + 2 * 151936ull * 4096 * 2 + 4096 * 2 + rotary);
  EXPECT_EQ(w->transient_bytes, 12288u * 4096 * 2);  // one MLP projection in bf16
  EXPECT_EQ(w->largest_dequantized_layer, 12288u * 4096 * 2);  // matmul_4bit's dequantized copy
  EXPECT_EQ(w->kernel, "bitsandbytes (NF4, quantized while loading)");
}

}  // namespace
}  // namespace vramfit
