// vLLM plans: the reported scenarios, each stage's failure, vLLM's own errors, advice that fits.
#include "engines/vllm/vllm.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

#include "engines/vllm/command.h"
#include "engines/vllm/engine.h"
#include "engines/vllm/flags.h"
#include "engines/vllm/rules.h"
#include "vramfit/advice.h"
#include "vramfit/gpu.h"

#include "testutil/catalog.h"
#include "testutil/vllm_advice.h"

namespace vramfit {
namespace {

using testutil::Catalog;

using testutil::Gpu;

using testutil::AdviseVllm;

TEST(Vllm, Qwen3_4bAwqAt256kFailsAtKvWithTheEstimate) {
  const Inventory inv = Catalog("qwen3-4b-instruct-2507-awq");
  VllmSettings s;
  s.max_model_len = 262144;
  auto p = PlanVllm(inv, Gpu("4090"), s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_FALSE(p->fits);
  EXPECT_EQ(p->failure_stage, Stage::kKvCache);
  // 36 layers x 2 x 8 KV heads x 128 x 2 B = 147,456 B per token: 36 GiB for 262,144 tokens.
  EXPECT_EQ(p->kv_needed_bytes, 36ull << 30);
  EXPECT_GT(p->estimated_max_model_len, 65536);
  EXPECT_LT(p->estimated_max_model_len, 262144);
  EXPECT_NE(p->failure_message.find("the estimated maximum model length is"), std::string::npos);
  // Every piece of advice fits when planned.
  const auto advice = AdviseVllm(inv, Gpu("4090"), s, *p);
  ASSERT_FALSE(advice.empty());
  for (const Advice& a : advice) EXPECT_TRUE(a.plan.fits) << a.change;
  EXPECT_EQ(advice[0].change.rfind("--max-model-len ", 0), 0u);
  // The estimate is exact: one token more no longer fits.
  VllmSettings at = s;
  at.max_model_len = p->estimated_max_model_len;
  EXPECT_TRUE(PlanVllm(inv, Gpu("4090"), at)->fits);
  at.max_model_len = p->estimated_max_model_len + 1;
  EXPECT_FALSE(PlanVllm(inv, Gpu("4090"), at)->fits);
}

// --kv-cache-memory-bytes: vLLM runs the profile, then returns the given bytes without measuring
// (gpu_worker.py determine_available_memory), so --gpu-memory-utilization bounds nothing. A pool
// that does not fit beside the weights fails as it is allocated; one that fits beside them but
// not beside the forward's activations fails in the warm-up; the advice is the largest whole GiB
// that leaves them and the graph pool room.
TEST(Vllm, FixedKvCacheBytesAreCheckedAgainstTheDevice) {
  const Inventory inv = Catalog("qwen3-32b");
  VllmSettings s;
  s.kv_cache_memory_bytes = 20ull << 30;  // 61 GiB of bf16 weights + 20 GiB > an H100's 79.19
  auto p = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_FALSE(p->fits);
  EXPECT_EQ(p->failure_stage, Stage::kKvCache);
  EXPECT_NE(p->failure_message.find("CUDA out of memory allocating the KV cache"),
            std::string::npos);
  EXPECT_EQ(p->gpus[0].kv_cache_bytes, 20ull << 30);
  const auto advice = AdviseVllm(inv, Gpu("h100"), s, *p);
  ASSERT_FALSE(advice.empty());
  EXPECT_EQ(advice[0].change, "--kv-cache-memory-bytes 13G");
  for (const Advice& a : advice) EXPECT_TRUE(a.plan.fits) << a.change;

  s.kv_cache_memory_bytes = 16ull << 30;  // fits beside the weights, not beside activations
  p = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->fits);
  EXPECT_EQ(p->failure_stage, Stage::kWarmup);
  // No graph pool, and model runner V2's own 6 B-a-logit warm-up under --enforce-eager: 16 GiB
  // fits, 17 GiB leaves 0.52 GiB for a 0.87 GiB sampler warm-up.
  s.enforce_eager = true;
  p = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->fits) << p->failure_message;
  s.kv_cache_memory_bytes = 17ull << 30;
  p = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->failure_stage, Stage::kWarmup);

  s.enforce_eager = false;
  s.kv_cache_memory_bytes = 13ull << 30;
  p = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->fits) << p->failure_message;
  EXPECT_EQ(p->gpus[0].kv_cache_bytes, 13ull << 30);
  // The pool is the flag's bytes whatever the utilization says.
  s.gpu_memory_utilization = 0.5;
  p = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->gpus[0].kv_cache_bytes, 13ull << 30);
}

// --no-enable-chunked-prefill: a prompt is prefilled whole, so vLLM's default batched-token
// budget becomes at least the length (arg_utils.py, read at 0.22), and the profile runs the
// forward over it: Qwen3-8B at 32,768 tokens on an RTX 4090 fits with chunked prefill and not
// without. An explicit budget below the length is refused (SchedulerConfig.verify_max_model_len).
TEST(Vllm, ChunkedPrefillOffProfilesTheWholeLength) {
  VllmSettings s;
  s.max_model_len = 32768;
  auto on = PlanVllm(Catalog("qwen3-8b"), Gpu("4090"), s);
  ASSERT_TRUE(on.ok());
  EXPECT_TRUE(on->fits) << on->failure_message;
  EXPECT_EQ(on->resolved.max_num_batched_tokens, 2048);
  VllmSettings off = s;
  off.enable_chunked_prefill = 0;
  auto p = PlanVllm(Catalog("qwen3-8b"), Gpu("4090"), off);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->resolved.max_num_batched_tokens, 32768);
  EXPECT_GT(p->gpus[0].activation_peak_bytes, on->gpus[0].activation_peak_bytes + (2ull << 30));
  EXPECT_FALSE(p->fits);
  EXPECT_EQ(p->failure_stage, Stage::kKvCache);
  off.max_num_batched_tokens = 8192;
  p = PlanVllm(Catalog("qwen3-8b"), Gpu("4090"), off);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->failure_stage, Stage::kStartup);
  EXPECT_EQ(p->failure_message.rfind("max_num_batched_tokens (8192) is smaller than "
                                     "max_model_len (32768).",
                                     0),
            0u);
  const auto advice = AdviseVllm(Catalog("qwen3-8b"), Gpu("4090"), off, *p);
  ASSERT_FALSE(advice.empty());
  EXPECT_EQ(advice[0].change, "without --no-enable-chunked-prefill");
}

// --disable-sliding-window (config/model.py, read at 0.22): the derived length is capped at the
// window, so gpt-oss-20b (128-token windows) defaults to 128 tokens and a longer --max-model-len
// is refused with the sliding_window key; every layer then caches the whole context.
TEST(Vllm, DisableSlidingWindowCapsTheLengthAtTheWindow) {
  const Inventory inv = Catalog("gpt-oss-20b");
  VllmSettings s;
  auto with = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(with.ok());
  VllmSettings off = s;
  off.disable_sliding_window = true;
  auto p = PlanVllm(inv, Gpu("h100"), off);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->max_model_len, 128);
  EXPECT_NE(p->command.find("--disable-sliding-window"), std::string::npos) << p->command;
  // No sliding-window group left in the KV layout: every layer pages full attention.
  ASSERT_FALSE(p->kv_layout.layers.empty());
  for (const auto& l : p->kv_layout.layers) {
    EXPECT_EQ(l.kind, KvLayerKind::kFull) << l.layer;
    EXPECT_EQ(l.sliding_window, 0) << l.layer;
  }
  EXPECT_TRUE(std::any_of(with->kv_layout.layers.begin(), with->kv_layout.layers.end(),
                          [](const KvLayerSpec& l) { return l.sliding_window > 0; }));
  off.max_model_len = 4096;
  auto refused = PlanVllm(inv, Gpu("h100"), off);
  ASSERT_TRUE(refused.ok()) << refused.status().ToString();
  EXPECT_EQ(refused->failure_stage, Stage::kStartup);
  EXPECT_NE(refused->failure_message.find("(sliding_window=128 in model's config.json)"),
            std::string::npos)
      << refused->failure_message;
  EXPECT_NE(refused->refusal.find("drop --disable-sliding-window"), std::string::npos)
      << refused->refusal;
}

TEST(Vllm, Qwen35AwqOnTwo24GbCardsAtTp2) {
  VllmSettings s;
  s.tensor_parallel_size = 2;
  s.max_model_len = 4096;
  auto p = PlanVllm(Catalog("qwen3.5-35b-a3b-awq"), Gpu("4090"), s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->fits) << p->failure_message;
  ASSERT_EQ(p->gpus.size(), 2u);
  const GpuPlan& g = p->gpus[0];
  EXPECT_GT(g.weights_bytes, 8ull << 30);
  EXPECT_LT(g.weights_bytes, 12ull << 30);
  EXPECT_GT(g.kv_cache_bytes, 0u);
  EXPECT_EQ(p->kv_layout.groups.size(), 4u);  // 10 attention + 30 GDN layers
  EXPECT_GT(p->kv_cache_tokens, 0u);
}

// An AutoRound checkpoint: `--quantization auto_round` (or auto-round, inc) matches its
// quant_method auto-round (INCConfig.override_quantization_method), another method does not;
// the plan names the per-layer kernel; the 4-bit weights fit two 24 GB cards at TP 2.
TEST(Vllm, AutoRoundIsPlannedAsItsGptqPacking) {
  VllmSettings s;
  s.tensor_parallel_size = 2;
  s.max_model_len = 32768;
  const Inventory inv = Catalog("qwen3.6-27b-int4-autoround");
  for (const char* flag : {"", "auto_round", "auto-round", "inc"}) {
    s.quantization = flag;
    auto p = PlanVllm(inv, Gpu("3090"), s);
    ASSERT_TRUE(p.ok()) << flag << ": " << p.status().ToString();
    EXPECT_TRUE(p->fits) << flag << ": " << p->failure_message;
    const GpuPlan& g = p->gpus[0];
    EXPECT_GT(g.weights_bytes, 8ull << 30);  // about 8.6 GiB per rank, MTP not loaded
    EXPECT_LT(g.weights_bytes, 10ull << 30);
    bool named = false;
    for (const std::string& n : p->notes) {
      named |= n.find("gptq_marlin kernel") != std::string::npos;
    }
    EXPECT_TRUE(named) << flag;
  }
  s.quantization = "gptq";
  EXPECT_FALSE(PlanVllm(inv, Gpu("3090"), s).ok());  // vLLM's method mismatch error
}

// --speculative-config method "mtp": the checkpoint's MTP layer is one more full-attention layer
// in the KV pool (qwen3_next_mtp.py), so 11 attention layers against 30 GDN ones: three GDN groups
// of 11 with 3 padding layers, as a Qwen3.6-35B-A3B MTP start logs ("Add 3 padding layers, may
// waste at most 10.00% KV cache memory"; validation record qwen3.6-35b-a3b-fp8-gb10x1-...).
TEST(Vllm, MtpLayerPagesInTheKvPool) {
  VllmSettings s;
  s.max_model_len = 65536;
  auto plain = PlanVllm(Catalog("qwen3.5-35b-a3b"), Gpu("h100"), s);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->kv_layout.group_size, 10);
  EXPECT_EQ(plain->kv_layout.layers.size(), 40u);
  s.speculative_method = "mtp";
  s.num_speculative_tokens = 3;
  auto mtp = PlanVllm(Catalog("qwen3.5-35b-a3b"), Gpu("h100"), s);
  ASSERT_TRUE(mtp.ok()) << mtp.status().ToString();
  EXPECT_EQ(mtp->kv_layout.layers.size(), 41u);
  EXPECT_EQ(mtp->kv_layout.group_size, 11);
  EXPECT_EQ(mtp->kv_layout.groups.size(), 4u);
  bool padding = false;
  for (const auto& n : mtp->kv_layout.notes)
    padding |= n.find("Add 3 padding layers, may waste at most 10.00%") != std::string::npos;
  EXPECT_TRUE(padding);
  EXPECT_LT(mtp->kv_cache_tokens, plain->kv_cache_tokens);
}

TEST(Vllm, AutoMaxModelLenFitsExactly) {
  VllmSettings s;
  s.max_model_len = -1;
  auto p = PlanVllm(Catalog("qwen3-8b"), Gpu("l4"), s);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->fits);
  EXPECT_LE(p->kv_needed_bytes, p->gpus[0].kv_cache_bytes);
  EXPECT_LE(p->max_model_len, 40960);
}

TEST(Vllm, StartupFailsWhenOthersHoldMemory) {
  VllmSettings s;
  s.max_model_len = 4096;
  s.other_process_bytes = 4ull << 30;
  auto p = PlanVllm(Catalog("qwen3-8b"), Gpu("4090"), s);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->failure_stage, Stage::kStartup);
  EXPECT_EQ(p->failure_message.rfind(
                "Free memory on device cuda:0 (19.14/23.64 GiB) on startup is less than desired "
                "GPU memory utilization (0.92, 21.75 GiB).",
                0),
            0u)
      << p->failure_message;
}

TEST(Vllm, LoadFailsForAModelLargerThanTheCard) {
  VllmSettings s;
  s.max_model_len = 4096;
  auto p = PlanVllm(Catalog("qwen3-32b"), Gpu("4090"), s);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->failure_stage, Stage::kLoad);
  EXPECT_NE(p->failure_message.find("--gpu-memory-utilization does not help a load-time OOM"),
            std::string::npos);
}

TEST(Vllm, VllmsOwnErrors) {
  VllmSettings s;
  s.max_model_len = 1 << 20;
  // Refused while the config is built: a startup failure, not an input error.
  auto long_len = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), s);
  ASSERT_TRUE(long_len.ok()) << long_len.status().ToString();
  EXPECT_EQ(long_len->failure_stage, Stage::kStartup);
  EXPECT_EQ(long_len->failure_message,
            "User-specified max_model_len (1048576) is greater than the derived max_model_len "
            "(max_position_embeddings=40960 in model's config.json). To allow overriding this "
            "maximum, set the env "
            "var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.");
  // Past Qwen's documented YaRN factor 4: the derived length and the env var only.
  EXPECT_EQ(long_len->refusal.find("--hf-overrides"), std::string::npos) << long_len->refusal;
  EXPECT_NE(long_len->refusal.find("--max-model-len 40960 "), std::string::npos)
      << long_len->refusal;
  VllmSettings tp;
  tp.tensor_parallel_size = 3;
  auto uneven = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), tp);
  ASSERT_TRUE(uneven.ok()) << uneven.status().ToString();
  EXPECT_EQ(uneven->failure_stage, Stage::kStartup);
  EXPECT_EQ(uneven->failure_message,
            "Total number of attention heads (32) must be divisible by tensor parallel size (3).");
  // The nearest powers of two that divide the 32 heads and the 8 KV heads.
  EXPECT_EQ(uneven->refusal,
            "--tensor-parallel-size 2, or --tensor-parallel-size 4 (32 attention heads: a TP size "
            "must divide them)");
  // Qwen2.5-7B: 28 heads, 4 KV heads; TP 8 -> TP 4 with two pipeline stages on the same GPUs.
  tp.tensor_parallel_size = 8;
  auto q25 = PlanVllm(Catalog("qwen2.5-7b-instruct"), Gpu("h100"), tp);
  ASSERT_TRUE(q25.ok()) << q25.status().ToString();
  EXPECT_EQ(q25->refusal,
            "--tensor-parallel-size 4 --pipeline-parallel-size 2 (the same 8 GPUs) (28 attention "
            "heads: a TP size must divide them)");
  VllmSettings q;
  q.quantization = "gptq";
  EXPECT_EQ(PlanVllm(Catalog("qwen3-8b-awq"), Gpu("h100"), q).status().message(),
            "Quantization method specified in the model config (awq) does not match the "
            "quantization method "
            "specified in the `quantization` argument (gptq).");
  VllmSettings u;
  u.gpu_memory_utilization = 1.5;
  EXPECT_FALSE(PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), u).ok());
  EXPECT_FALSE(ParseVllmVersion("0.1.2").ok());  // releases before 0.2 are not modelled
  EXPECT_EQ(*ParseVllmVersion("0.7.3"), 703);
  EXPECT_EQ(*ParseVllmVersion("0.10.2"), 1002);
  EXPECT_EQ(*ParseVllmVersion("v0.21"), 2100);
}

TEST(Vllm, ReleaseDefaults) {
  VllmSettings old;
  old.version = "0.10.1";
  old.max_model_len = 4096;
  auto a = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), old);
  ASSERT_TRUE(a.ok());
  EXPECT_DOUBLE_EQ(a->resolved.gpu_memory_utilization, 0.9);
  EXPECT_EQ(a->resolved.max_num_seqs, 1024);       // >= 70 GiB and not an A100
  EXPECT_EQ(a->resolved.max_num_batched_tokens, 8192);
  VllmSettings now;
  now.max_model_len = 4096;
  auto b = PlanVllm(Catalog("qwen3-8b"), Gpu("a100-80gb"), now);
  ASSERT_TRUE(b.ok());
  EXPECT_DOUBLE_EQ(b->resolved.gpu_memory_utilization, 0.92);
  EXPECT_EQ(b->resolved.max_num_seqs, 256);        // A100s get the small defaults
  EXPECT_EQ(b->resolved.max_num_batched_tokens, 2048);
  // GB10: 121.69 GiB as CUDA reports it, but NVML answers Not Supported for its memory, so
  // get_batch_defaults sees 0 bytes and keeps the small defaults.
  auto c = PlanVllm(Catalog("qwen3-8b"), Gpu("gb10"), now);
  ASSERT_TRUE(c.ok());
  EXPECT_GT(Gpu("gb10").total_bytes, 70ull << 30);
  EXPECT_EQ(c->resolved.max_num_seqs, 256);
  EXPECT_EQ(c->resolved.max_num_batched_tokens, 2048);
  // Its memory is the host's: what the host takes counts against the budget, unseen by the plan.
  EXPECT_TRUE(std::any_of(c->notes.begin(), c->notes.end(), [](const std::string& n) {
    return n.find("shares its memory with the CPU") != std::string::npos;
  }));
  // Its total follows the host's OS (119.63 and 121.69 GiB on published starts): the note says
  // which one the plan took and how to give another.
  EXPECT_TRUE(std::any_of(c->notes.begin(), c->notes.end(), [](const std::string& n) {
    return n.find("the plan takes 121.69 GiB: give --gpu-memory beside --gpu") != std::string::npos;
  }));
  EXPECT_TRUE(std::none_of(b->notes.begin(), b->notes.end(), [](const std::string& n) {
    return n.find("shares its memory with the CPU") != std::string::npos;
  }));
  // Integrated GPU: vLLM reads free memory from the host from v0.13, so start-up's host memory
  // is non-torch memory; the plan charges at least 2 GiB there, and not on GH200 (discrete
  // Hopper beside the CPU's memory) nor on GB10 with 0.10's rules.
  EXPECT_EQ(c->gpus[0].non_torch_bytes, 2ull << 30);
  EXPECT_LT(b->gpus[0].non_torch_bytes, 1ull << 30);
  auto gh = PlanVllm(Catalog("qwen3-8b"), Gpu("gh200-96gb"), now);
  ASSERT_TRUE(gh.ok());
  EXPECT_LT(gh->gpus[0].non_torch_bytes, 1ull << 30);
  VllmSettings ten = now;
  ten.version = "0.10";
  auto c10 = PlanVllm(Catalog("qwen3-8b"), Gpu("gb10"), ten);
  ASSERT_TRUE(c10.ok());
  EXPECT_LT(c10->gpus[0].non_torch_bytes, 1ull << 30);
}

// v0.28's third scheduler tier: a device of 160 GiB or more (B200, B300) gets an API-server
// budget of 16384 tokens; before v0.28, and below 160 GiB (H200), 8192.
TEST(Vllm, TheLargestCardsTakeTwiceTheBatchedTokensFromV028) {
  auto batched = [](const char* gpu, const char* version) {
    VllmSettings s;
    s.max_model_len = 8192;
    s.version = version;
    auto p = PlanVllm(Catalog("qwen3-8b"), Gpu(gpu), s);
    EXPECT_TRUE(p.ok()) << gpu << " " << version;
    return p.ok() ? p->resolved.max_num_batched_tokens : 0;
  };
  EXPECT_EQ(batched("b200", "0.28.0"), 16384);
  EXPECT_EQ(batched("b300", "0.29"), 16384);
  EXPECT_EQ(batched("b200", "0.27"), 8192);
  EXPECT_EQ(batched("h200", "0.28.0"), 8192);
  EXPECT_EQ(batched("a100-80gb", "0.28.0"), 2048);
}

// PR #38284 (2026-04-21): the CUDA-graph estimate in the budget and the default 0.92. The builds
// that say 0.20.2 carry it (their log lines are main's after 2026-04-28); v0.20.1 is planned
// without it.
TEST(Vllm, TheGraphEstimateAndTheDefaultUtilizationFromV0202) {
  for (const auto& [version, in_budget, util] :
       {std::tuple{"0.20.1", false, 0.9}, {"0.20.2", true, 0.92},
        {"0.20.2rc1.dev9+g01d4d1ad3", true, 0.92}, {"0.21.0", true, 0.92}}) {
    VllmSettings s;
    s.version = version;
    s.max_model_len = 4096;
    auto p = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), s);
    ASSERT_TRUE(p.ok()) << version << ": " << p.status().ToString();
    EXPECT_DOUBLE_EQ(p->resolved.gpu_memory_utilization, util) << version;
    EXPECT_EQ(vllm::RulesFor(*ParseVllmVersion(version)).cudagraph_in_budget, in_budget)
        << version;
  }
}

TEST(Vllm, MoreMemoryNeverShortensTheContext) {
  const Inventory inv = Catalog("qwen3-30b-a3b-gptq-int4");
  int64_t last = 0;
  for (const char* g : {"l4", "4090", "l40s", "a100-80gb", "h200"}) {
    VllmSettings s;
    s.max_model_len = -1;
    auto p = PlanVllm(inv, Gpu(g), s);
    ASSERT_TRUE(p.ok());
    const int64_t len = p->fits ? p->max_model_len : 0;
    EXPECT_GE(len, last) << g;
    last = len;
  }
}

TEST(Vllm, V0EngineProfilesTheWholeContextAsOnePrefill) {
  // V0 without chunked prefill (max_model_len <= 32768) profiles max_model_len tokens at once:
  // vLLM printed peak_torch_memory 17.98 GiB with 14.99 GiB of weights for Llama-3.1-8B at
  // 29,000 tokens on an RTX 3090, and failed its max-length check.
  const Inventory inv = Catalog("llama-3.1-8b-instruct");
  VllmSettings s;
  s.v0_engine = true;
  s.max_model_len = 29000;
  auto p = PlanVllm(inv, Gpu("3090"), s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->resolved.max_num_batched_tokens, 29000);
  EXPECT_EQ(p->modelled_version, "0.10");
  EXPECT_NEAR(p->gpus[0].activation_peak_bytes / 1073741824.0, 2.99, 0.03);
  EXPECT_FALSE(p->fits);
  EXPECT_EQ(p->failure_stage, Stage::kKvCache);
  EXPECT_EQ(p->failure_message.rfind(
                "The model's max seq len (29000) is larger than the maximum number of tokens", 0),
            0u);
  EXPECT_EQ(p->command.rfind("VLLM_USE_V1=0 vllm serve meta-llama/Llama-3.1-8B-Instruct", 0), 0u)
      << p->command;
  // Above 32K of context V0 turns chunked prefill on: 2048 tokens a step.
  s.max_model_len = 65536;
  EXPECT_EQ(PlanVllm(inv, Gpu("3090"), s)->resolved.max_num_batched_tokens, 2048);
  // V0 is gone from 0.11.
  s.version = "0.11";
  EXPECT_FALSE(PlanVllm(inv, Gpu("3090"), s).ok());
}

TEST(Vllm, DataParallelExpertParallelGathersTokensIntoTheMoe) {
  const Inventory inv = Catalog("qwen3-30b-a3b");
  VllmSettings s;
  s.version = "0.10";
  s.max_model_len = 8192;
  s.max_num_seqs = 16;  // a small sampler warm-up, so that the forward sets the peak
  s.enable_expert_parallel = true;
  auto one = PlanVllm(inv, Gpu("h100"), s);
  s.data_parallel_size = 4;
  auto four = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(one.ok() && four.ok());
  // Four DP ranks' tokens reach each MoE layer: the fused-MoE caches grow, capped by the chunk.
  EXPECT_GT(four->gpus[0].activation_peak_bytes, one->gpus[0].activation_peak_bytes);
  EXPECT_NE(four->command.find("--data-parallel-size 4 --enable-expert-parallel"),
            std::string::npos);
  EXPECT_EQ(four->gpu_count, 4);
}


TEST(Vllm, TheSamplerWarmUpCostsWhatTheReleasesTopKTopPPathCosts) {
  // Qwen3-8B on an H100 (1,024 sequences, 151,936-entry vocabulary): the warm-up sets the
  // activation peak. v0.11.1-v0.16 sort the whole vocabulary (39 B a logit); v0.17-v0.20 mask
  // in place with a Triton kernel (bf16 logits 2 + fp32 copy 4 + probabilities 4 + exponential
  // noise 4 = 14 B); v0.21+ sample with FlashInfer (22 B). Up to v0.11.0 the path depends on
  // whether FlashInfer is installed (vLLM's images: 14 B; the pip wheel: the sort), so without
  // VLLM_USE_FLASHINFER_SAMPLER the plan charges the sort; 0.8 and 0.9 plan with the 0.10 rules.
  const Inventory inv = Catalog("qwen3-8b");
  VllmSettings s;
  s.max_model_len = 16000;
  const uint64_t logits = 1024ull * 151936;
  EXPECT_EQ(logits * 14, 2178154496u);  // 2.03 GiB at v0.17-v0.20
  // {release, unset, VLLM_USE_FLASHINFER_SAMPLER=0, =1}: 0 is the native path (the sort, the
  // Triton kernel from v0.17), 1 FlashInfer's sampler.
  // The Triton kernel's scratch beside it: one fp32 row per program, min(SMs, requests) = the
  // H100's 132 rows (0.07 GiB).
  const uint64_t scratch = 132ull * 151936 * 4;
  struct Row {
    const char* release;
    uint64_t unset, off, on;
    bool triton_unset, triton_off;  // the Triton kernel's path
  };
  for (const Row& row : std::vector<Row>{{"0.8.5", 39, 39, 14, false, false},
                                         {"0.9.2", 39, 39, 14, false, false},
                                         {"0.10.2", 39, 39, 14, false, false},
                                         {"0.11.0", 39, 39, 14, false, false},
                                         {"0.11.1", 39, 39, 14, false, false},
                                         {"0.14", 39, 39, 14, false, false},
                                         {"0.16", 39, 39, 14, false, false},
                                         {"0.17", 14, 14, 14, true, true},
                                         {"0.20", 14, 14, 14, true, true},
                                         {"0.21", 22, 14, 22, false, true},
                                         {"0.22", 22, 14, 22, false, true}}) {
    s.version = row.release;
    for (const auto& [env, per_logit, triton] : std::vector<std::tuple<int, uint64_t, bool>>{
             {-1, row.unset, row.triton_unset}, {0, row.off, row.triton_off}, {1, row.on, false}}) {
      s.flashinfer_sampler = env;
      auto p = PlanVllm(inv, Gpu("h100"), s);
      ASSERT_TRUE(p.ok()) << row.release << ": " << p.status().ToString();
      EXPECT_EQ(p->gpus[0].activation_peak_bytes, logits * per_logit + (triton ? scratch : 0))
          << row.release << " VLLM_USE_FLASHINFER_SAMPLER " << env;
    }
  }
  // Fewer programs than SMs: the next power of two (100 requests: 128 rows); below 8 requests
  // the PyTorch path, no scratch.
  s.version = "0.17";
  s.flashinfer_sampler = -1;
  s.max_num_seqs = 100;
  auto hundred = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(hundred.ok());
  bool said = false;
  for (const auto& e : hundred->gpus[0].explain) {
    if (e.name != "sampler_topk_scratch") continue;
    said = true;
    EXPECT_EQ(e.bytes, 128ull * 151936 * 4);
  }
  EXPECT_TRUE(said);
  s.max_num_seqs = 4;
  auto four = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(four.ok());
  for (const auto& e : four->gpus[0].explain) EXPECT_NE(e.name, "sampler_topk_scratch");
}

TEST(Vllm, WhereTheInstallDecidesTheSamplerTheNotesSayWhatFlashInferWouldSave) {
  const Inventory inv = Catalog("qwen3-8b");
  VllmSettings s;
  s.max_model_len = 16000;
  s.gpu_memory_utilization = 0.3;  // a small budget, so that the KV check is the tightest
  const uint64_t logits = 1024ull * 151936;
  auto find = [](const VllmPlan& p, std::string_view what) {
    for (const std::string& n : p.notes) {
      if (n.find(what) != std::string::npos) return n;
    }
    return std::string();
  };
  // The advice note (the path depends on the install), and the note that the install decided.
  auto note = [&](const VllmPlan& p) { return find(p, "`--flashinfer-installed` plans that"); };
  auto said = [&](const VllmPlan& p) { return find(p, "since FlashInfer is installed"); };
  s.version = "0.10.2";
  auto unset = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(unset.ok());
  // The sort is charged; FlashInfer's 14 B would leave 1,024 x 151,936 x 25 B = 3.62 GiB.
  EXPECT_NE(note(*unset).find("3.62 GiB lower"), std::string::npos) << note(*unset);
  EXPECT_EQ(unset->uncertainty_bytes, uint64_t{256} << 20);  // non-torch only: no sampler spread
  // Set either way, the path is known: no note. With =1 FlashInfer may still be missing before
  // v0.11.1 (vLLM then sorts with a warning), so the spread to the sort stays.
  s.flashinfer_sampler = 1;
  auto on = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(on.ok());
  EXPECT_TRUE(note(*on).empty());
  EXPECT_EQ(on->uncertainty_bytes - unset->uncertainty_bytes, logits * 25);
  EXPECT_EQ(unset->gpus[0].activation_peak_bytes - on->gpus[0].activation_peak_bytes,
            logits * 25);
  s.flashinfer_sampler = 0;
  auto off = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(off.ok());
  EXPECT_TRUE(note(*off).empty());
  // FlashInfer installed (vLLM's image, `plan --flashinfer-installed`): VLLM_USE_FLASHINFER_SAMPLER
  // unset samples with it up to v0.11.0, at 14 B, and the path is known: no advice, and a note
  // says the install decided it (the sort's 25 B a logit more: 3.62 GiB).
  s.flashinfer_sampler = -1;
  s.flashinfer_installed = true;
  auto installed = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(installed.ok());
  EXPECT_TRUE(note(*installed).empty());
  EXPECT_NE(said(*installed).find("3.62 GiB more"), std::string::npos) << said(*installed);
  EXPECT_TRUE(said(*unset).empty());
  EXPECT_TRUE(said(*on).empty());
  EXPECT_EQ(installed->gpus[0].activation_peak_bytes, on->gpus[0].activation_peak_bytes);
  // =0 still sorts where FlashInfer is installed.
  s.flashinfer_sampler = 0;
  auto installed_off = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(installed_off.ok());
  EXPECT_EQ(installed_off->gpus[0].activation_peak_bytes, off->gpus[0].activation_peak_bytes);
  // From v0.11.1 FlashInfer's sampler is opt-in (PR #26859): installed or not, the release's
  // default path.
  s.flashinfer_sampler = -1;
  s.version = "0.14";
  auto opt_in = PlanVllm(inv, Gpu("h100"), s);
  s.flashinfer_installed = false;
  auto opt_in_pip = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(opt_in.ok() && opt_in_pip.ok());
  EXPECT_EQ(opt_in->gpus[0].activation_peak_bytes, opt_in_pip->gpus[0].activation_peak_bytes);
  // From v0.11.1 the default is the release's own: no note.
  s.flashinfer_sampler = -1;
  s.version = "0.11.1";
  auto later = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(later.ok());
  EXPECT_TRUE(note(*later).empty());
  // Where the forward outweighs the sampler (16 sequences), the path does not matter: no note.
  s.version = "0.10.2";
  s.max_num_seqs = 16;
  auto small = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(small.ok());
  EXPECT_TRUE(note(*small).empty());
}

TEST(Vllm, CheckReadsVllmUseFlashInferSampler) {
  // vllm/envs.py reads it as bool(int(value)).
  for (const auto& [text, want] : std::vector<std::pair<std::string, int>>{
           {"1", 1}, {"0", 0}, {"2", 1}}) {
    auto cmd = vllm::ReadServeCommand(
        {"VLLM_USE_FLASHINFER_SAMPLER=" + text, "vllm", "serve", "Qwen/Qwen3-8B"});
    ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
    EXPECT_TRUE(cmd->unmodelled_env.empty());
    EXPECT_EQ(ToVllmSettings(cmd->settings).flashinfer_sampler, want) << text;
  }
  auto none = vllm::ReadServeCommand({"vllm", "serve", "Qwen/Qwen3-8B"});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(ToVllmSettings(none->settings).flashinfer_sampler, -1);
  for (const char* bad : {"VLLM_USE_FLASHINFER_SAMPLER=yes", "VLLM_USE_FLASHINFER_SAMPLER=",
                          "VLLM_USE_FLASHINFER_SAMPLER=1x"}) {
    auto cmd = vllm::ReadServeCommand({bad, "vllm", "serve", "Qwen/Qwen3-8B"});
    ASSERT_FALSE(cmd.ok()) << bad;
    EXPECT_EQ(cmd.status().code(), Code::kInvalidArgument);
    EXPECT_NE(cmd.status().message().find("VLLM_USE_FLASHINFER_SAMPLER"), std::string::npos);
  }
  // The printed command carries it.
  VllmSettings s = ToVllmSettings(
      vllm::ReadServeCommand({"VLLM_USE_FLASHINFER_SAMPLER=1", "vllm", "serve", "m"})->settings);
  s.version = "0.10.2";
  s.max_model_len = 16000;
  auto p = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), s);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->command.rfind("VLLM_USE_FLASHINFER_SAMPLER=1 vllm serve", 0), 0u) << p->command;
}

// The printed command keeps every word the plan does not read, as given, so pasting it starts
// the same server: --port and --served-model-name with their values, a flag the table lacks,
// an environment variable not modelled.
TEST(Vllm, PrintedCommandKeepsFlagsItDoesNotRead) {
  auto cmd = vllm::ReadServeCommand({"HF_HOME=/data", "vllm", "serve", "Qwen/Qwen3-8B", "--port",
                                     "8001", "--served-model-name", "q", "--max-model-len",
                                     "16000", "--enable-prefix-caching"});
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  auto s = vllm::ReadFlags(cmd->flags, ToVllmSettings(cmd->settings));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto p = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), *s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->command.rfind("HF_HOME=/data vllm serve Qwen/Qwen3-8B", 0), 0u) << p->command;
  EXPECT_NE(p->command.find(" --port 8001"), std::string::npos) << p->command;
  EXPECT_NE(p->command.find(" --served-model-name q"), std::string::npos) << p->command;
  EXPECT_NE(p->command.find(" --enable-prefix-caching"), std::string::npos) << p->command;
}

// A `vllm serve` of 8,192 tokens and 256 sequences with `flags` on one RTX PRO 6000, for the
// catalog's `model` under the rules of `version`.
VllmPlan PlanEightThousandOnRtxPro6000(const std::string& model, const std::string& version,
                                       std::vector<std::string> flags) {
  std::vector<std::string> argv = {"vllm", "serve", "Qwen/Qwen3.8-27B", "--max-model-len", "8192",
                                   "--max-num-seqs", "256"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  auto cmd = vllm::ReadServeCommand(argv);
  EXPECT_TRUE(cmd.ok()) << cmd.status().ToString();
  auto s = vllm::ReadFlags(cmd->flags, ToVllmSettings(cmd->settings));
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  s->version = version;
  auto p = PlanVllm(Catalog(model.c_str()), Gpu("rtx-pro-6000"), *s);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return *p;
}

// Prefix caching on a hybrid model: vLLM's default from 0.28 (PR #50991), --enable-prefix-caching
// before. Its "align" mode holds two linear-attention state pages per request per group, so the
// same pool serves fewer requests; --no-enable-prefix-caching gives the one page back. A model
// without linear-attention layers is unchanged.
TEST(Vllm, PrefixCachingOnAHybridModelHoldsTwoStatePages) {
  const auto plan = PlanEightThousandOnRtxPro6000;
  auto noted = [](const VllmPlan& p, std::string_view what) {
    return std::any_of(p.notes.begin(), p.notes.end(),
                       [&](const std::string& n) { return n.find(what) != std::string::npos; });
  };
  const VllmPlan before = plan("qwen3.8-27b", "0.27.1", {});
  const VllmPlan from = plan("qwen3.8-27b", "0.28.0", {});
  const VllmPlan off = plan("qwen3.8-27b", "0.28.0", {"--no-enable-prefix-caching"});
  const VllmPlan on = plan("qwen3.8-27b", "0.27.1", {"--enable-prefix-caching"});
  EXPECT_EQ(before.kv_options.mamba_pages_per_request, 1);
  EXPECT_EQ(from.kv_options.mamba_pages_per_request, 2);
  EXPECT_EQ(off.kv_options.mamba_pages_per_request, 1);
  EXPECT_EQ(on.kv_options.mamba_pages_per_request, 2);
  // One request: 11 attention blocks and 3 groups x 1 or 2 state pages: 14 or 17 blocks.
  EXPECT_NEAR(before.max_concurrency / from.max_concurrency, 17.0 / 14.0, 0.01);
  EXPECT_EQ(off.kv_cache_tokens, before.kv_cache_tokens);
  EXPECT_TRUE(noted(from, "PR #50991"));
  EXPECT_TRUE(noted(on, "(--enable-prefix-caching)"));
  EXPECT_FALSE(noted(before, "align"));
  EXPECT_NE(off.command.find("--no-enable-prefix-caching"), std::string::npos) << off.command;
  // "all" is refused by Qwen3.5-family classes: vLLM falls back to "align".
  const VllmPlan all = plan("qwen3.8-27b", "0.28.0", {"--mamba-cache-mode", "all"});
  EXPECT_EQ(all.kv_options.mamba_pages_per_request, 2);
  EXPECT_TRUE(noted(all, "falls back to 'align'"));
  // With prefix caching off the mode goes back to "none".
  const VllmPlan reset =
      plan("qwen3.8-27b", "0.27.1", {"--mamba-cache-mode", "align"});
  EXPECT_EQ(reset.kv_options.mamba_pages_per_request, 1);
  EXPECT_TRUE(noted(reset, "back to 'none'"));
  // Before the align mode existed: named as not counted, one page.
  const VllmPlan early = plan("qwen3.8-27b", "0.14.1", {"--enable-prefix-caching"});
  EXPECT_EQ(early.kv_options.mamba_pages_per_request, 1);
  EXPECT_TRUE(std::any_of(early.not_counted.begin(), early.not_counted.end(),
                          [](const std::string& n) { return n.find("PR #30877") != n.npos; }));
  // A dense model: nothing changes.
  const VllmPlan dense = plan("qwen3-8b", "0.28.0", {});
  EXPECT_EQ(dense.kv_options.mamba_pages_per_request, 1);
  EXPECT_EQ(dense.kv_cache_tokens, plan("qwen3-8b", "0.27.1", {}).kv_cache_tokens);
}

// --mamba-block-size: refused with prefix caching off (VllmConfig.validate_mamba_block_size),
// which is a hybrid model's default before 0.28; in 'align' mode vLLM replaces it with the
// attention block size, so the plan is unchanged; refused by argparse before 0.11.1; no effect
// on a model without linear-attention layers.
TEST(Vllm, MambaBlockSizeNeedsPrefixCaching) {
  const auto plan = PlanEightThousandOnRtxPro6000;
  const std::vector<std::string> size = {"--mamba-block-size", "256"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), size.begin(), size.end());
    return more;
  };
  const VllmPlan off = plan("qwen3.8-27b", "0.22.0", size);
  EXPECT_FALSE(off.fits);
  EXPECT_EQ(off.failure_stage, Stage::kStartup);
  EXPECT_NE(off.failure_message.find("can only be set with --enable-prefix-caching"),
            std::string::npos)
      << off.failure_message;
  EXPECT_EQ(off.refusal, "add --enable-prefix-caching, or drop --mamba-block-size");
  EXPECT_FALSE(plan("qwen3.8-27b", "0.28.0", with({"--no-enable-prefix-caching"})).fits);
  // On (asked for, or 0.28's default): the same plan as without the flag.
  const VllmPlan on = plan("qwen3.8-27b", "0.22.0", with({"--enable-prefix-caching"}));
  EXPECT_TRUE(on.fits) << on.failure_message;
  EXPECT_EQ(on.kv_cache_tokens,
            plan("qwen3.8-27b", "0.22.0", {"--enable-prefix-caching"}).kv_cache_tokens);
  ASSERT_EQ(on.without_effect.size(), 1u);
  EXPECT_NE(on.without_effect[0].find("'align' mode"), std::string::npos);
  EXPECT_TRUE(plan("qwen3.8-27b", "0.28.0", size).fits);
  // The value vLLM sets itself without prefix caching passes the check.
  EXPECT_TRUE(plan("qwen3.8-27b", "0.22.0", {"--mamba-block-size", "8192"}).fits);
  // Before the flag.
  const VllmPlan early = plan("qwen3-8b", "0.11.0", size);
  EXPECT_FALSE(early.fits);
  EXPECT_NE(early.failure_message.find("unrecognized arguments: --mamba-block-size"),
            std::string::npos);
  // A dense model: prefix caching is on by default, and the flag does nothing.
  const VllmPlan dense = plan("qwen3-8b", "0.22.0", size);
  EXPECT_TRUE(dense.fits);
  ASSERT_EQ(dense.without_effect.size(), 1u);
  EXPECT_NE(dense.without_effect[0].find("no linear-attention"), std::string::npos);
  // Not a positive number.
  auto cmd = vllm::ReadServeCommand(
      {"vllm", "serve", "Qwen/Qwen3-8B", "--mamba-block-size", "0"});
  ASSERT_TRUE(cmd.ok());
  EXPECT_FALSE(vllm::ReadFlags(cmd->flags, ToVllmSettings(cmd->settings)).ok());
}

// --spec-method/--spec-tokens plan as the --speculative-config they stand for from 0.22, and are
// refused by argparse before, with the JSON that older releases take as the way out.
TEST(Vllm, SpeculativeAliasesFromVllm022) {
  const std::vector<std::string> aliases = {"--spec-method", "mtp", "--spec-tokens", "2"};
  const VllmPlan now = PlanEightThousandOnRtxPro6000("qwen3.8-27b", "0.22.0", aliases);
  const VllmPlan json = PlanEightThousandOnRtxPro6000(
      "qwen3.8-27b", "0.22.0",
      {"--speculative-config", "{\"method\": \"mtp\", \"num_speculative_tokens\": 2}"});
  EXPECT_TRUE(now.fits) << now.failure_message;
  EXPECT_EQ(now.kv_cache_tokens, json.kv_cache_tokens);
  EXPECT_GT(now.gpus[0].weights_bytes, 0u);
  EXPECT_EQ(now.gpus[0].weights_bytes, json.gpus[0].weights_bytes);
  const VllmPlan before = PlanEightThousandOnRtxPro6000("qwen3.8-27b", "0.21.0", aliases);
  EXPECT_FALSE(before.fits);
  EXPECT_EQ(before.failure_stage, Stage::kStartup);
  EXPECT_EQ(before.refusal,
            "--speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 2}' "
            "instead of the --spec-* flags (vLLM 0.21 has no such flags)");
}

TEST(Vllm, ModelRunnerV2IsTheDefaultForTheModelsOfItsRelease) {
  // VllmConfig.use_v2_model_runner without VLLM_USE_V2_MODEL_RUNNER: Qwen3ForCausalLM neither MoE
  // nor quantized from v0.22 (PR #39337), Llama and Mistral too from v0.23 (PR #43458), their
  // quantized checkpoints and three MoE architectures from v0.24 (PRs #44446, #42667, #45461),
  // every model that is not MoE from v0.25 (PR #44443), every model from v0.29. The rule reads
  // the stated release, not the clamped one.
  using vllm::ModelRunnerV2ByDefault;
  using vllm::RulesFor;
  const std::string qwen3 = "Qwen3ForCausalLM", llama = "LlamaForCausalLM";
  EXPECT_FALSE(ModelRunnerV2ByDefault(RulesFor(2104), qwen3, false, false));
  EXPECT_TRUE(ModelRunnerV2ByDefault(RulesFor(2200), qwen3, false, false));
  EXPECT_FALSE(ModelRunnerV2ByDefault(RulesFor(2200), qwen3, false, true));
  EXPECT_FALSE(ModelRunnerV2ByDefault(RulesFor(2200), "Qwen3MoeForCausalLM", true, false));
  EXPECT_FALSE(ModelRunnerV2ByDefault(RulesFor(2200), llama, false, false));
  EXPECT_TRUE(ModelRunnerV2ByDefault(RulesFor(2300), llama, false, false));
  EXPECT_TRUE(ModelRunnerV2ByDefault(RulesFor(2300), "MistralForCausalLM", false, false));
  EXPECT_FALSE(ModelRunnerV2ByDefault(RulesFor(2301), llama, false, true));
  EXPECT_FALSE(ModelRunnerV2ByDefault(RulesFor(2301), "Qwen2MoeForCausalLM", true, false));
  EXPECT_TRUE(ModelRunnerV2ByDefault(RulesFor(2401), llama, false, true));
  EXPECT_TRUE(ModelRunnerV2ByDefault(RulesFor(2400), "Qwen2MoeForCausalLM", true, false));
  EXPECT_TRUE(ModelRunnerV2ByDefault(RulesFor(2400), "DeepseekV2ForCausalLM", true, true));
  EXPECT_FALSE(ModelRunnerV2ByDefault(RulesFor(2401), "Gemma3ForCausalLM", false, false));
  EXPECT_FALSE(ModelRunnerV2ByDefault(RulesFor(2401), "Qwen3MoeForCausalLM", true, false));
  EXPECT_TRUE(ModelRunnerV2ByDefault(RulesFor(2500), "Gemma3ForCausalLM", false, true));
  EXPECT_TRUE(ModelRunnerV2ByDefault(RulesFor(2801), "GraniteMoeForCausalLM", true, false));
  EXPECT_FALSE(ModelRunnerV2ByDefault(RulesFor(2801), "GptOssForCausalLM", true, false));
  EXPECT_TRUE(ModelRunnerV2ByDefault(RulesFor(2900), "GptOssForCausalLM", true, false));

  // The plan names the runner in a note and keeps model runner V1's charges: Qwen3-8B on an
  // H100 pays the same 22 B a logit warm-up at v0.21 (V1) and v0.22 (V2).
  VllmSettings s;
  s.max_model_len = 16000;
  auto note = [](const VllmPlan& p) {
    for (const std::string& n : p.notes) {
      if (n.find("model runner V2") != n.npos) return n;
    }
    return std::string();
  };
  s.version = "0.21";
  auto v021 = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), s);
  s.version = "0.22";
  auto v022 = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), s);
  auto awq = PlanVllm(Catalog("qwen3-14b-awq"), Gpu("h100"), s);
  s.version = "0.25";
  auto awq025 = PlanVllm(Catalog("qwen3-14b-awq"), Gpu("h100"), s);
  ASSERT_TRUE(v021.ok() && v022.ok() && awq.ok() && awq025.ok());
  EXPECT_EQ(note(*v021), "");
  EXPECT_EQ(note(*v022),
            "vLLM 0.22 runs Qwen3ForCausalLM on model runner V2 by default "
            "(VLLM_USE_V2_MODEL_RUNNER=0 selects V1): the plan charges model runner V1's profile "
            "run (V2's source charges less, what a start with a warm torch.compile cache pays; a "
            "first start compiles during the profile and the published ones paid about what V1's "
            "charges give); before v0.29 V2 reserves no CUDA-graph memory, so it captures the "
            "graphs on top of the budget");
  EXPECT_EQ(note(*awq), "");
  EXPECT_NE(note(*awq025).find("vLLM 0.25 runs Qwen3ForCausalLM on model runner V2"),
            std::string::npos);
  EXPECT_EQ(v022->gpus[0].activation_peak_bytes, v021->gpus[0].activation_peak_bytes);
  EXPECT_EQ(v022->gpus[0].activation_peak_bytes, 1024ull * 151936 * 22);

  // `check` reads VLLM_USE_V2_MODEL_RUNNER: 0 keeps model runner V1 (no note), 1 forces V2 on
  // any model and release; the printed command keeps the variable. Other values are named as not
  // modelled.
  auto off = vllm::ReadServeCommand({"VLLM_USE_V2_MODEL_RUNNER=0", "vllm", "serve", "m"});
  auto on = vllm::ReadServeCommand({"VLLM_USE_V2_MODEL_RUNNER=1", "vllm", "serve", "m"});
  auto odd = vllm::ReadServeCommand({"VLLM_USE_V2_MODEL_RUNNER=yes", "vllm", "serve", "m"});
  ASSERT_TRUE(off.ok() && on.ok() && odd.ok());
  VllmSettings v1 = ToVllmSettings(off->settings), v2 = ToVllmSettings(on->settings);
  EXPECT_EQ(v1.use_v2_model_runner, 0);
  EXPECT_EQ(v2.use_v2_model_runner, 1);
  EXPECT_EQ(ToVllmSettings(odd->settings).use_v2_model_runner, -1);
  EXPECT_EQ(odd->unmodelled_env, std::vector<std::string>{"VLLM_USE_V2_MODEL_RUNNER"});
  v1.version = "0.22";
  v1.max_model_len = 16000;
  auto forced_v1 = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), v1);
  v2.version = "0.21";
  v2.max_model_len = 16000;
  auto forced_v2 = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), v2);
  ASSERT_TRUE(forced_v1.ok() && forced_v2.ok());
  EXPECT_EQ(note(*forced_v1), "");
  EXPECT_EQ(forced_v1->command.rfind("VLLM_USE_V2_MODEL_RUNNER=0 vllm serve Qwen/Qwen3-8B", 0),
            0u)
      << forced_v1->command;
  EXPECT_EQ(note(*forced_v2).rfind("VLLM_USE_V2_MODEL_RUNNER=1 runs Qwen3ForCausalLM on model "
                                   "runner V2: the plan charges model runner V1's profile run",
                                   0),
            0u)
      << note(*forced_v2);
  EXPECT_EQ(forced_v2->gpus[0].activation_peak_bytes, v021->gpus[0].activation_peak_bytes);
}

TEST(Vllm, ModelRunnerV2CapturesItsGraphsOnTopOfTheBudgetBeforeV029) {
  // profile_cudagraph_memory returns 0 in vllm/v1/worker/gpu/model_runner.py until v0.29, so the
  // KV cache takes the whole budget and the graphs are captured beyond it (issue #49224: capture
  // out of memory once dense models defaulted to V2). At --gpu-memory-utilization 0.99 on an
  // H100, Qwen3-8B fits at v0.21 (V1 reserves its estimate) and with VLLM_USE_V2_MODEL_RUNNER=0,
  // runs out of memory at capture on V2 at v0.22, and fits again at v0.29 (V2's graph profiling).
  VllmSettings s;
  s.max_model_len = 16000;
  s.gpu_memory_utilization = 0.99;
  auto plan = [&](const char* version, int v2) {
    VllmSettings t = s;
    t.version = version;
    t.use_v2_model_runner = v2;
    return PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), t);
  };
  auto v1 = plan("0.21", -1), v2 = plan("0.22", -1), off = plan("0.22", 0), v029 = plan("0.29", -1);
  ASSERT_TRUE(v1.ok() && v2.ok() && off.ok() && v029.ok());
  EXPECT_TRUE(v1->fits);
  EXPECT_TRUE(off->fits);
  EXPECT_TRUE(v029->fits);
  EXPECT_FALSE(v2->fits);
  EXPECT_EQ(v2->failure_stage, Stage::kCudaGraph);
  // The KV memory is the same: V1's charges stand in for V2's first start.
  EXPECT_EQ(v2->gpus[0].kv_cache_bytes, v1->gpus[0].kv_cache_bytes);
}

TEST(Vllm, ModelRunnerV2FallsBackToV1ForHybridModels) {
  // config/vllm.py _get_v2_model_runner_unsupported_features: hybrid and Mamba models
  // (has_inner_state) run on V1 where V2 is the default ("Model runner v2 does not yet support
  // hybrid/mamba models; using the v1 model runner instead"), and VLLM_USE_V2_MODEL_RUNNER=1
  // is refused (_validate_v2_model_runner). The hybrid Qwen3.8-27B at 0.26 with a warm compile
  // cache is charged V1's profile (22 B a logit), as a 0.26.0 start logged gpu_model_runner.py.
  VllmSettings s;
  s.version = "0.26";
  s.tensor_parallel_size = 4;
  s.max_model_len = 8192;
  s.max_num_seqs = 512;
  s.compile_cache_warm = true;
  auto hybrid = PlanVllm(Catalog("qwen3.8-27b"), Gpu("rtx-pro-6000"), s);
  ASSERT_TRUE(hybrid.ok()) << hybrid.status().ToString();
  EXPECT_TRUE(hybrid->fits) << hybrid->failure_message;
  EXPECT_GE(hybrid->gpus[0].activation_peak_bytes, 512ull * 248320 * 22);
  EXPECT_TRUE(std::any_of(hybrid->notes.begin(), hybrid->notes.end(), [](const std::string& n) {
    return n.find("does not yet support hybrid/mamba models") != std::string::npos;
  }));
  // A dense model at the same settings stays on V2: the warm cache charges V2's own profile.
  auto dense = PlanVllm(Catalog("qwen3-32b"), Gpu("rtx-pro-6000"), s);
  ASSERT_TRUE(dense.ok());
  EXPECT_LT(dense->gpus[0].activation_peak_bytes, 512ull * 151936 * 22);
  // n-gram speculative decoding is not supported by V2 either: V1's profile again.
  VllmSettings ngram = s;
  ngram.speculative_config = R"({"method": "ngram", "num_speculative_tokens": 4})";
  ngram.speculative_method = "ngram";
  ngram.num_speculative_tokens = 4;
  auto spec = PlanVllm(Catalog("qwen3-32b"), Gpu("rtx-pro-6000"), ngram);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_GE(spec->gpus[0].activation_peak_bytes, 512ull * 151936 * 22);
  // Asked for by the variable: refused at start-up.
  s.use_v2_model_runner = 1;
  auto forced = PlanVllm(Catalog("qwen3.8-27b"), Gpu("rtx-pro-6000"), s);
  ASSERT_TRUE(forced.ok());
  EXPECT_FALSE(forced->fits);
  EXPECT_EQ(forced->failure_stage, Stage::kStartup);
  EXPECT_EQ(forced->failure_message,
            "VLLM_USE_V2_MODEL_RUNNER does not yet support: hybrid/mamba models");
  EXPECT_NE(forced->refusal.find("drop VLLM_USE_V2_MODEL_RUNNER=1"), std::string::npos);
}

TEST(Vllm, ModelRunnerV2FirstStartWidensTheKvCheckSpread) {
  // A first V2 start is charged V1's profile; what its compile costs beyond that follows no rule
  // (published first starts: 2.56 GiB pessimistic to 2.00 GiB optimistic), so the KV check's
  // spread grows by kV2FirstStartSpread (2 GiB) and a KV pool that holds one request with less
  // headroom than that is said to be unsure. Same charges with VLLM_USE_V2_MODEL_RUNNER=0.
  VllmSettings s;
  s.version = "0.28";
  s.gpu_memory_utilization = 0.6;
  s.max_model_len = 40960;  // 6.25 GiB of KV for one request against about 8 GiB available
  auto plan = [&](int v2) {
    VllmSettings t = s;
    t.use_v2_model_runner = v2;
    return PlanVllm(Catalog("qwen3-14b-awq"), Gpu("rtx-5090"), t);
  };
  auto v2 = plan(-1), v1 = plan(0);
  ASSERT_TRUE(v2.ok() && v1.ok());
  EXPECT_TRUE(v2->fits && v1->fits);
  EXPECT_EQ(v2->gpus[0].kv_cache_bytes, v1->gpus[0].kv_cache_bytes);
  EXPECT_EQ(v2->uncertainty_bytes, v1->uncertainty_bytes + (2ull << 30));
  EXPECT_TRUE(v2->low_confidence());
  EXPECT_FALSE(v1->low_confidence());
}

TEST(Vllm, ModelRunnerV2ChargesItsOwnProfileWhereNothingIsCompiled) {
  // A first compiled V2 start compiles inside the profile run, and the plan charges model runner
  // V1's profile for it (22 B a logit and V1's graph estimate). Where the profile compiles
  // nothing, V2's source is what vLLM measures: --enforce-eager (torch.compile off) or a warm
  // compile cache. Qwen3-8B on an H100 at v0.22: 1,024 requests x 151,936 logits x 6 B (the bf16
  // logits and their fp32 copy), above the forward over 8,192 tokens (0.75 GiB); no graph
  // estimate before v0.29.
  VllmSettings s;
  s.max_model_len = 16000;
  s.version = "0.22";
  auto cold = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), s);
  VllmSettings w = s;
  w.compile_cache_warm = true;
  auto warm = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), w);
  VllmSettings e = s;
  e.enforce_eager = true;
  auto eager = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), e);
  ASSERT_TRUE(cold.ok() && warm.ok() && eager.ok());
  const uint64_t v2_sampler = 1024ull * 151936 * 6;
  EXPECT_EQ(cold->gpus[0].activation_peak_bytes, 1024ull * 151936 * 22);
  EXPECT_EQ(warm->gpus[0].activation_peak_bytes, v2_sampler);
  EXPECT_EQ(eager->gpus[0].activation_peak_bytes, v2_sampler);
  ASSERT_GT(cold->gpus[0].cudagraph_bytes, 0u);
  EXPECT_EQ(warm->gpus[0].kv_cache_bytes,
            cold->gpus[0].kv_cache_bytes + 1024ull * 151936 * 16 + cold->gpus[0].cudagraph_bytes);
  EXPECT_EQ(eager->gpus[0].kv_cache_bytes, warm->gpus[0].kv_cache_bytes);
  bool named = false;
  for (const std::string& n : warm->notes) {
    named = named || n.find("with a warm torch.compile cache the profile compiles nothing, so "
                            "the plan charges V2's own profile run") != std::string::npos;
  }
  EXPECT_TRUE(named);

  // Model runner V1 compiles the same way but its source is what the plan charges already: a warm
  // cache or --enforce-eager leaves its 22 B warm-up (v0.21, or VLLM_USE_V2_MODEL_RUNNER=0).
  w.version = "0.21";
  e.version = "0.21";
  auto w021 = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), w);
  auto e021 = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), e);
  w.version = "0.22";
  w.use_v2_model_runner = 0;
  auto w_v1 = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), w);
  ASSERT_TRUE(w021.ok() && e021.ok() && w_v1.ok());
  EXPECT_EQ(w021->gpus[0].activation_peak_bytes, 1024ull * 151936 * 22);
  EXPECT_EQ(e021->gpus[0].activation_peak_bytes, 1024ull * 151936 * 22);
  EXPECT_EQ(w_v1->gpus[0].activation_peak_bytes, 1024ull * 151936 * 22);
  // ... and the flag is named as without effect there, never dropped silently.
  for (const auto* p : {&w021, &w_v1}) {
    bool without_effect = false;
    for (const std::string& n : (*p)->without_effect) {
      without_effect = without_effect || n.rfind("--compile-cache-warm: vLLM 0.2", 0) == 0;
    }
    EXPECT_TRUE(without_effect);
  }
  EXPECT_TRUE(warm->without_effect.empty());

  // At PP 2 V2 makes the second stage's receive buffer at load (make_empty_intermediate_tensors
  // at the end of load_model), so a warm start's last stage is charged its forward and sampler
  // only, where a first start keeps V1's 8,192 x 2 x 4,096 x 2 B buffer under both.
  VllmSettings pp = s;
  pp.pipeline_parallel_size = 2;
  VllmSettings pp_warm = pp;
  pp_warm.compile_cache_warm = true;
  auto pp_cold_plan = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), pp);
  auto pp_warm_plan = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), pp_warm);
  ASSERT_TRUE(pp_cold_plan.ok() && pp_warm_plan.ok());
  ASSERT_EQ(pp_cold_plan->pipeline_stages.size(), 2u);
  ASSERT_EQ(pp_warm_plan->pipeline_stages.size(), 2u);
  const uint64_t received = 8192ull * 2 * 4096 * 2;
  EXPECT_EQ(pp_cold_plan->pipeline_stages[1].per_gpu.activation_peak_bytes,
            received + 1024ull * 151936 * 22);
  EXPECT_EQ(pp_warm_plan->pipeline_stages[1].per_gpu.activation_peak_bytes, v2_sampler);

  // From v0.29 V2 profiles its graphs (PR #53682) and reserves the estimate: a warm start keeps it.
  s.version = "0.29";
  w = s;
  w.compile_cache_warm = true;
  auto cold029 = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), s);
  auto warm029 = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), w);
  ASSERT_TRUE(cold029.ok() && warm029.ok());
  EXPECT_EQ(warm029->gpus[0].kv_cache_bytes,
            cold029->gpus[0].kv_cache_bytes + 1024ull * 151936 * 16);
}

// The activation peak one H100 of the plan charges (0, and a failure, when planning fails).
uint64_t H100ActivationPeak(const Inventory& inv, const VllmSettings& s) {
  auto p = PlanVllm(inv, Gpu("h100"), s);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? p->gpus[0].activation_peak_bytes : 0;
}

TEST(Vllm, TheForwardIsShardedByTpButTheSampledLogitsAreNot) {
  // Qwen3-32B (hidden 5,120, MLP 25,600, 64 + 2 x 8 heads of 128) on H100s at 8,192 batched
  // tokens. The profile's forward holds, per rank, the residual, the normed input and the block
  // output (3 x hidden) and the wider of the QKV output and the MLP's gate/up + activation
  // outputs, the sharded ones at 1/TP (attention is skipped in the profile run); with TP > 1
  // also the all-reduced copy of the down projection's output (a fourth hidden-wide tensor):
  // TP 1: 8192 x 2 B x (15,360 + 76,800) = 1,509,949,440 B; TP 2: 8192 x 2 x (20,480 + 38,400).
  const Inventory inv = Catalog("qwen3-32b");
  VllmSettings s;
  s.version = "0.17";
  s.max_model_len = 16000;
  s.max_num_seqs = 8;  // 8 x 151,936 x 14 B = 17 MB of sampler: the forward sets the peak
  EXPECT_EQ(H100ActivationPeak(inv, s), 1509949440u);
  s.tensor_parallel_size = 2;
  EXPECT_EQ(H100ActivationPeak(inv, s), 964689920u);
  // The sampler warm-up: the lm_head's vocab shards are gathered on every rank, so each rank
  // samples 1,024 x 151,936 logits whatever the TP size (v0.14: 39 B a logit; the llm-d H100
  // runs printed the same 5.64 GiB activation peak at TP 1 and TP 2). Under pipeline
  // parallelism only the last stage samples, on top of the buffer it receives the previous
  // stage's hidden states and residual in (2 x 8,192 x 5,120 x 2 B).
  s.version = "0.14";
  s.max_num_seqs = 0;
  const uint64_t sampler = 1024ull * 151936 * 39;
  EXPECT_EQ(H100ActivationPeak(inv, s), sampler);
  s.tensor_parallel_size = 1;
  EXPECT_EQ(H100ActivationPeak(inv, s), sampler);
  s.pipeline_parallel_size = 2;
  EXPECT_EQ(H100ActivationPeak(inv, s), sampler + 2ull * 8192 * 5120 * 2);
}

TEST(Vllm, V0SortsTheWholeVocabularyOnTheDriverAlone) {
  // V0's profile run samples with top-p 0.99 and top-k vocab-1, so _apply_top_k_top_p sorts
  // (model_executor/layers/sampler.py): the sort's 39 B a logit over 256 x 128,256 logits, on
  // the driver, which alone gathers the logits at TP > 1; the other ranks hold the forward
  // alone (Llama-3-8B, 8,192 tokens: 8192 x 2 B x (4 x 4,096 + 3 x 14,336 / 2) at TP 2).
  const Inventory inv = Catalog("llama-3.1-8b-instruct");
  VllmSettings s;
  s.v0_engine = true;
  s.version = "0.6.6";
  s.max_model_len = 8192;
  const uint64_t sampler = 256ull * 128256 * 39;
  auto one = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->gpus[0].activation_peak_bytes, sampler);
  EXPECT_EQ(one->non_sampling_activation_bytes, sampler);
  s.tensor_parallel_size = 2;
  auto two = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  EXPECT_EQ(two->gpus[0].activation_peak_bytes, sampler);
  EXPECT_EQ(two->non_sampling_activation_bytes, 8192ull * 2 * (4 * 4096 + 3 * 14336 / 2));
  // V1 all-gathers the logits: every rank samples.
  s.v0_engine = false;
  s.version = "0.14";
  auto v1 = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  EXPECT_EQ(v1->non_sampling_activation_bytes, v1->gpus[0].activation_peak_bytes);
}

TEST(Vllm, TheTpAllReduceWritesANewTensorFromV065) {
  // PR #10121 (v0.6.5) made the NCCL all-reduce, the path of a profile-sized tensor, out of
  // place: the reduced output sits beside the down projection's partial sums, so a TP 2 forward
  // holds one more tokens x hidden tensor than before it; at TP 1 nothing is all-reduced.
  // Qwen2.5-32B (hidden 5,120) on V0 at 10,000 tokens, 8 sequences so that the forward binds.
  const Inventory inv = Catalog("qwen2.5-32b-instruct");
  VllmSettings s;
  s.v0_engine = true;
  s.max_model_len = 10000;
  s.max_num_seqs = 8;
  s.tensor_parallel_size = 2;
  s.version = "0.6.4";
  const uint64_t in_place = H100ActivationPeak(inv, s);
  s.version = "0.6.5";
  EXPECT_EQ(H100ActivationPeak(inv, s), in_place + 10000ull * 5120 * 2);
  s.version = "0.10";
  EXPECT_EQ(H100ActivationPeak(inv, s), in_place + 10000ull * 5120 * 2);
  s.tensor_parallel_size = 1;
  const uint64_t tp1 = H100ActivationPeak(inv, s);
  s.version = "0.6.4";
  EXPECT_EQ(H100ActivationPeak(inv, s), tp1);
  EXPECT_FALSE(vllm::RulesFor(604).all_reduce_out_of_place);
  EXPECT_TRUE(vllm::RulesFor(605).all_reduce_out_of_place);
}

// The explanation line of `name` in the first GPU's plan ("" when there is none).
std::string Explanation(const VllmPlan& p, const std::string& name) {
  for (const Explained& e : p.gpus[0].explain) {
    if (e.name == name) return e.formula;
  }
  return "";
}

// Under pipeline parallelism each stage profiles alone (gpu_model_runner.py profile_run): every
// stage runs the forward through its own layers, the stages after the first receive the
// previous one's hidden states and residual, and the last alone samples. vLLM gives every stage
// the smallest pool in blocks (kv_cache_utils.py get_kv_cache_configs), so the stage that binds
// is the one with the least free memory per layer it caches.
TEST(Vllm, EachPipelineStageProfilesItsOwnShare) {
  // Qwen3-32B on H100s at v0.14, 64 layers in two stages of 32. The forward sets the peak with
  // 8 sequences (8 x 151,936 x 39 B = 47 MB of sampler): every stage's forward is the same
  // widest layer, and the last stage adds the 8,192-token buffer it receives, so it binds.
  const Inventory inv = Catalog("qwen3-32b");
  VllmSettings s;
  s.version = "0.14";
  s.max_model_len = 16000;
  s.max_num_seqs = 8;
  const uint64_t forward = 1509949440u, received = 2ull * 8192 * 5120 * 2;
  VllmSettings pp2 = s;
  pp2.pipeline_parallel_size = 2;
  auto one = PlanVllm(inv, Gpu("h100"), s);
  auto two = PlanVllm(inv, Gpu("h100"), pp2);
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_EQ(one->gpus[0].activation_peak_bytes, forward);
  EXPECT_EQ(two->gpus[0].activation_peak_bytes, forward + received);
  EXPECT_NE(Explanation(*two, "activation_peak").find("pipeline stage 2 of 2"),
            std::string::npos);
  EXPECT_NE(Explanation(*two, "kv_cache").find("on pipeline stage 2 of 2"), std::string::npos);
  // The KV memory is the last stage's: the budget less its weights, peak and non-torch memory.
  const GpuPlan& g = two->gpus[0];
  EXPECT_EQ(g.kv_cache_bytes, g.budget_bytes - g.weights_bytes - (forward + received) -
                                  g.non_torch_bytes);
  // Without the sampler at all in the first stage, a larger warm-up moves only the last
  // stage's peak: at the default 1,024 sequences the last stage binds with the sampler.
  pp2.max_num_seqs = 0;
  auto sampling = PlanVllm(inv, Gpu("h100"), pp2);
  ASSERT_TRUE(sampling.ok());
  EXPECT_EQ(sampling->gpus[0].activation_peak_bytes, 1024ull * 151936 * 39 + received);
}

TEST(Vllm, AStageWithMoreLayersCanBindThoughTheLastOneSamples) {
  // DeepSeek-V2-Lite's 27 layers in two stages: vLLM's split (get_pp_indices) gives the first
  // 14 and the last 13. At v0.10 on 24 GB L4s (2,048 batched tokens, 256 sequences) the last
  // stage samples 256 x 102,400 logits at 14 B (0.34 GiB) above a forward of under 0.1 GiB,
  // yet its free memory over 13 layers holds more blocks than the first stage's over 14: the
  // first stage binds, as the PR 20665 run shows (12.13 GiB on the first stage, 11.33 GiB on
  // the last, and the first stage's pool).
  const Inventory inv = Catalog("deepseek-v2-lite");
  VllmSettings s;
  s.version = "0.10";
  s.max_model_len = 1024;
  s.enforce_eager = true;
  s.tensor_parallel_size = 2;
  s.pipeline_parallel_size = 2;
  auto p = PlanVllm(inv, Gpu("l4"), s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->binding_stage, 0);
  EXPECT_NE(Explanation(*p, "kv_cache").find("on pipeline stage 1 of 2"), std::string::npos)
      << Explanation(*p, "kv_cache");
  // The sampling stage has the larger peak and the less free memory, yet more blocks.
  ASSERT_EQ(p->pipeline_stages.size(), 2u);
  const GpuPlan& first = p->pipeline_stages[0].per_gpu;
  const GpuPlan& last = p->pipeline_stages[1].per_gpu;
  EXPECT_GE(last.activation_peak_bytes, 256ull * 102400 * 14);
  EXPECT_GT(last.activation_peak_bytes, first.activation_peak_bytes);
  EXPECT_LT(last.kv_cache_bytes, first.kv_cache_bytes);
  // With 8 sequences (a sampler of 11 MB) the last stage's peak is its forward and received
  // buffer: the first stage, one layer more, still binds.
  s.max_num_seqs = 8;
  auto few = PlanVllm(inv, Gpu("l4"), s);
  ASSERT_TRUE(few.ok());
  EXPECT_NE(Explanation(*few, "kv_cache").find("on pipeline stage 1 of 2"), std::string::npos);
}

TEST(Vllm, TheFusedMoeWorkspaceIsChunked) {
  // Qwen3-30B-A3B (hidden 2,048, 128 experts of 768, top 8; 32 + 2 x 4 heads of 128) at 16
  // sequences, v0.10 on an H100 (8,192 batched tokens, VLLM_FUSED_MOE_CHUNK_SIZE 32,768):
  // 8192 x 2 B x (3 x 2,048 + 8 x (3 x 768 + 2,048)) = 671,088,640 B; the sampler (16 x 151,936
  // x 14 B) is smaller. From v0.11 the chunk is 16,384 tokens: 20,000 batched tokens charge the
  // caches for 16,384 and the rest for 20,000.
  const Inventory inv = Catalog("qwen3-30b-a3b");
  VllmSettings s;
  s.version = "0.10";
  s.max_model_len = 8192;
  s.max_num_seqs = 16;
  EXPECT_EQ(H100ActivationPeak(inv, s), 671088640u);
  s.version = "0.11";
  s.max_num_batched_tokens = 20000;
  EXPECT_EQ(H100ActivationPeak(inv, s),
            20000ull * 2 * 3 * 2048 + 16384ull * 2 * 8 * (3 * 768 + 2048));
}

TEST(Vllm, GptOss120bOnOneH100FollowsTheMxfp4BackendOfTheRelease) {
  // The llm-d H100 run (~v0.14, --max-model-len 16000, --block-size 128): weights 64.38 GiB,
  // peak activation 7.38, non-torch 0.13, available KV 3.33 GiB, which add up to a 0.95 budget.
  // v0.14 runs the Triton MXFP4 backend on Hopper; at 0.9 nothing would be left for the cache.
  const Inventory inv = Catalog("gpt-oss-120b");
  VllmSettings s;
  s.version = "0.14";
  s.max_model_len = 16000;
  s.block_size = 128;
  s.gpu_memory_utilization = 0.95;
  auto p = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->fits) << p->failure_message;
  EXPECT_NEAR(p->gpus[0].weights_bytes / 1073741824.0, 64.38, 0.06);
  EXPECT_NEAR(p->gpus[0].kv_cache_bytes / 1073741824.0, 3.33, 0.05 * 3.33);
  bool named = false;
  for (const std::string& n : p->notes) named |= n.find("Triton (triton_kernels)") != n.npos;
  EXPECT_TRUE(named);
  s.gpu_memory_utilization = 0.9;
  auto tight = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(tight.ok());
  EXPECT_EQ(tight->failure_stage, Stage::kKvCache);
  // v0.11 (no triton_kernels in the wheel): Marlin's padded layout, 65.97 GiB in an August 2025
  // H100 log (issue 23278).
  s.version = "0.11";
  auto old = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(old.ok());
  EXPECT_NEAR(old->gpus[0].weights_bytes / 1073741824.0, 65.97, 0.05);
}

TEST(Vllm, Mxfp4UseMarlinMovesHopperBackToMarlin) {
  // `check -- VLLM_MXFP4_USE_MARLIN=1 vllm serve ...` reads the variable, the plan takes
  // Marlin's layout on Hopper, and the printed command carries it.
  auto cmd = vllm::ReadServeCommand({"VLLM_MXFP4_USE_MARLIN=1", "vllm", "serve",
                                     "openai/gpt-oss-120b", "--max-model-len", "16000"});
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  EXPECT_TRUE(cmd->unmodelled_env.empty());
  VllmSettings s = ToVllmSettings(cmd->settings);
  EXPECT_TRUE(s.mxfp4_use_marlin);
  s.version = "0.14";
  s.max_model_len = 16000;
  auto p = PlanVllm(Catalog("gpt-oss-120b"), Gpu("h100"), s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_NEAR(p->gpus[0].weights_bytes / 1073741824.0, 65.97, 0.05);
  EXPECT_EQ(p->command.rfind("VLLM_MXFP4_USE_MARLIN=1 vllm serve openai/gpt-oss-120b", 0), 0u)
      << p->command;
  auto off = vllm::ReadServeCommand({"VLLM_MXFP4_USE_MARLIN=0", "vllm", "serve", "m"});
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(ToVllmSettings(off->settings).mxfp4_use_marlin);
}

// Non-torch memory at TP 2 (qwen3-8b, 0.22 rules): cuBLAS workspaces 144 MiB + NCCL's lazy
// buffers 368 MiB everywhere; the all-reduce fusion's workspaces (1,536 MiB) only where vLLM's
// FlashInfer all-reduce + RMSNorm fusion runs: compute capability 9.0 or 10.x with peer access,
// from v0.17, and before v0.21 only without PP or DP.
TEST(Vllm, NonTorchAtTp2FollowsTheAllReduceFusion) {
  const Inventory inv = Catalog("qwen3-8b");
  VllmSettings s;
  s.tensor_parallel_size = 2;
  s.max_model_len = 8192;
  auto non_torch = [&](const char* gpu) {
    auto p = PlanVllm(inv, Gpu(gpu), s);
    EXPECT_TRUE(p.ok()) << gpu;
    return p.ok() ? p->gpus[0].non_torch_bytes : 0;
  };
  const uint64_t base = 512ull << 20, fused = 2048ull << 20;
  EXPECT_EQ(non_torch("h100"), fused);   // 9.0
  EXPECT_EQ(non_torch("b200"), fused);   // 10.0
  EXPECT_EQ(non_torch("l40s"), base);    // 8.9: custom all-reduce at TP 2, no fusion
  EXPECT_EQ(non_torch("l4"), base);      // 8.9
  EXPECT_EQ(non_torch("a100-80gb"), base);  // 8.0, NVLink: no fusion either
  EXPECT_EQ(non_torch("4090"), base);    // GeForce: no peer access
  // A GPU given by size: the fusion assumed, unless its capability is known.
  GpuSpec sized = CustomGpu(95ull << 30);
  EXPECT_EQ(PlanVllm(inv, sized, s)->gpus[0].non_torch_bytes, fused);
  sized.compute_capability = "12.0";
  EXPECT_EQ(PlanVllm(inv, sized, s)->gpus[0].non_torch_bytes, base);
  s.version = "0.16";
  EXPECT_EQ(non_torch("h100"), base);    // the fusion is default from v0.17 (PR #34299)
  // PP 2: refused by v0.17-v0.20, re-enabled in v0.21 (PR #41458).
  s.pipeline_parallel_size = 2;
  s.version = "0.20";
  EXPECT_EQ(non_torch("h100"), base);
  s.version = "0.21";
  EXPECT_EQ(non_torch("h100"), fused);
}

// V1 before v0.11 took its memory snapshot before the distributed groups were made, so the NCCL
// communicators of data parallel with expert parallelism (its EP group spans the DP ranks) count
// in the budget: 256 MiB + 384 MiB; from v0.11 they are outside it, with the CUDA context, and
// the non-torch growth is the V1 base (144 MiB).
TEST(Vllm, DataParallelExpertParallelNcclByRelease) {
  const Inventory inv = Catalog("qwen3-30b-a3b");
  VllmSettings s;
  s.version = "0.10";
  s.max_model_len = 8192;
  s.data_parallel_size = 4;
  auto p = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->gpus[0].non_torch_bytes, 256ull << 20);  // DP alone: no EP group
  s.enable_expert_parallel = true;
  p = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->gpus[0].non_torch_bytes, 640ull << 20);
  EXPECT_EQ(p->gpus[0].cuda_context_bytes, 512ull << 20);
  s.version = "0.11";
  p = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->gpus[0].non_torch_bytes, 144ull << 20);  // the V1 base from v0.11
  EXPECT_EQ(p->gpus[0].cuda_context_bytes, 896ull << 20);
}

// The graph pool of an MoE model: each graph costs 5.5 MiB + 148 KiB per MoE layer. Qwen3-30B-A3B
// (48 MoE layers, hidden 2,048, 32 query and 4 KV heads of 128, 8 of 128 experts of 768) at one
// sequence: capture sizes 1 and 2, full graphs for size 1, so 3 graphs of 5,632 + 48 x 148 =
// 12,736 KiB; the largest size's activations: 2 tokens x 2 B x (3 x 2,048 residual streams +
// the MoE's 8 x (3 x 768 + 2,048)) = 24,576 + 139,264 B.
// Speculative decoding verifies 1 + k tokens a request, so from v0.13 (PR #30330) the largest
// capture size is max_num_seqs x (1 + k) x 2 and the FULL decode graphs run from 1 + k to
// max_num_seqs x (1 + k) tokens. 24 sequences with 6 speculative tokens (issue #46462 prints
// "PIECEWISE=38 (largest=336), FULL=22 (largest=168)"): sizes 1, 2, 4, 8 to 248 by 8 and 256 to
// 336 by 16 (40), FULL 8 to 168 (21). Before v0.13: up to 24 x 2 = 48, FULL up to 24.
std::string GraphFormula(const std::string& version, int64_t spec_tokens) {
  VllmSettings s;
  s.version = version;
  s.max_model_len = 8192;
  s.max_num_seqs = 24;
  if (spec_tokens > 0) {
    s.speculative_method = "mtp";
    s.num_speculative_tokens = spec_tokens;
  }
  auto p = PlanVllm(Catalog("qwen3.5-35b-a3b"), Gpu("h100"), s);
  if (!p.ok()) return p.status().ToString();
  for (const Explained& e : p->gpus[0].explain) {
    if (e.name == "cudagraph") return e.formula;
  }
  return "";
}

TEST(Vllm, SpeculativeTokensScaleTheCaptureSizes) {
  EXPECT_NE(GraphFormula("0.22", 6).find("61 graphs over 40 capture sizes up to 336"),
            std::string::npos)
      << GraphFormula("0.22", 6);
  EXPECT_NE(GraphFormula("0.22", 0).find("15 graphs over 9 capture sizes up to 48"),
            std::string::npos)
      << GraphFormula("0.22", 0);
  EXPECT_NE(GraphFormula("0.12", 6).find("15 graphs over 9 capture sizes up to 48"),
            std::string::npos)
      << GraphFormula("0.12", 6);
}

// The compilation config's CUDA-graph keys: 24 sequences at v0.22 capture 1, 2, 4, 8 to 48 by
// 8 (9 sizes; 48 = 2 x 24) and full decode graphs of 1 to 24 requests (6 of the 9).
// The graph formula under `flags` at `version` ("": the newest), Qwen3.5-35B-A3B on an H100 at
// 24 sequences; "no graphs" without a graph line (--enforce-eager).
std::string LevelFormula(const FlagValues& flags, const std::string& version = "") {
  VllmSettings s;
  s.version = version;
  s.max_model_len = 8192;
  s.max_num_seqs = 24;
  auto r = vllm::ReadFlags(flags, s);
  if (!r.ok()) return r.status().ToString();
  auto p = PlanVllm(Catalog("qwen3.5-35b-a3b"), Gpu("h100"), *r);
  if (!p.ok()) return p.status().ToString();
  for (const Explained& e : p->gpus[0].explain) {
    if (e.name == "cudagraph") return e.formula;
  }
  return "no graphs";
}

std::string ModeFormula(const std::string& json, int64_t max_capture = 0) {
  FlagValues f = {{"--compilation-config", json}};
  if (max_capture > 0) f.emplace_back("--max-cudagraph-capture-size", std::to_string(max_capture));
  return LevelFormula(f);
}

TEST(Vllm, CompilationConfigChoosesTheGraphs) {
  auto has = [](const std::string& formula, const std::string& part) {
    EXPECT_NE(formula.find(part), std::string::npos) << formula;
  };
  has(ModeFormula(R"({"cudagraph_mode": "PIECEWISE"})"),
      "9 graphs over 9 capture sizes up to 48");
  has(ModeFormula(R"({"cudagraph_mode": "full"})"),
      "9 graphs over 9 capture sizes up to 48 (FULL)");
  // Decode graphs only: the largest one captured is 24 requests' batch.
  has(ModeFormula(R"({"cudagraph_mode": "FULL_DECODE_ONLY"})"),
      "6 graphs over 9 capture sizes up to 24");
  has(ModeFormula(R"({"cudagraph_mode": "NONE"})"), "0 graphs over 9");
  has(ModeFormula(R"({"cudagraph_capture_sizes": [4, 1, 4, 16]})"),
      "6 graphs over 3 capture sizes up to 16 (FULL_AND_PIECEWISE)");
  has(ModeFormula(R"({"max_cudagraph_capture_size": 16})"),
      "10 graphs over 5 capture sizes up to 16");
  // The flag wins over the key (EngineArgs copies it into the compilation config, v0.2x).
  has(ModeFormula(R"({"max_cudagraph_capture_size": 16})", 8), "over 4 capture sizes up to 8");
  // A bare level (releases before 0.11) sets no graph key.
  has(ModeFormula("3"), "15 graphs over 9 capture sizes up to 48");
}

// -O N from v0.12 (PR #26847, config/vllm.py OPTIMIZATION_LEVEL_00..03): O0 no graphs, O1
// PIECEWISE, O2 (the default) and O3 FULL_AND_PIECEWISE; an explicit cudagraph_mode wins, a
// piecewise mode without compilation is NONE, --enforce-eager wins over everything.
TEST(Vllm, OptimizationLevelsChooseTheGraphs) {
  auto has = [](const std::string& formula, const std::string& part) {
    EXPECT_NE(formula.find(part), std::string::npos) << formula;
  };
  const std::string v = "0.22";
  has(LevelFormula({{"--optimization-level", "0"}}, v), "0 graphs over 9");
  has(LevelFormula({{"--optimization-level", "1"}}, v), "9 graphs over 9 capture sizes up to 48 "
                                                        "(PIECEWISE)");
  has(LevelFormula({{"--optimization-level", "2"}}, v), "15 graphs over 9");
  has(LevelFormula({{"--optimization-level", "3"}}, v), "15 graphs over 9");
  has(LevelFormula({{"--optimization-level", "0"},
                    {"--compilation-config", R"({"cudagraph_mode": "FULL"})"}},
                   v),
      "9 graphs over 9 capture sizes up to 48 (FULL)");
  has(LevelFormula({{"--optimization-level", "1"}, {"--compilation-config", R"({"mode": 0})"}},
                   v),
      "0 graphs over 9");
  has(LevelFormula({{"--optimization-level", "3"}, {"--enforce-eager", ""}}, v), "no graphs");
  // Before v0.12, -O N is the compilation level: graphs only at level 3 (the default).
  has(LevelFormula({{"--optimization-level", "3"}}, "0.11"), "15 graphs over 9");
  has(LevelFormula({{"--optimization-level", "1"}}, "0.11"), "0 graphs over 9");
  has(LevelFormula({{"--compilation-config", R"({"level": 0})"}}, "0.11"), "0 graphs over 9");
  EXPECT_NE(LevelFormula({{"--optimization-level", "4"}}, v).find("expected 0 to 3"),
            std::string::npos);
}

// -O0 compiles nothing: on model runner V2 (Qwen3-8B at v0.22) the plan charges V2's own
// profile run, as with --enforce-eager; the graph pool is gone and the KV memory grows by it.
// -O1 keeps the compile but not the all-reduce fusion.
TEST(Vllm, OptimizationLevelZeroProfilesLikeEnforceEager) {
  VllmSettings s;
  s.version = "0.22";
  s.max_model_len = 8192;
  auto o2 = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), s);
  VllmSettings eager = s;
  eager.enforce_eager = true;
  auto e = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), eager);
  VllmSettings zero = s;
  zero.optimization_level = 0;
  auto z = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), zero);
  ASSERT_TRUE(o2.ok() && e.ok() && z.ok());
  EXPECT_EQ(z->gpus[0].activation_peak_bytes, e->gpus[0].activation_peak_bytes);
  EXPECT_LT(z->gpus[0].activation_peak_bytes, o2->gpus[0].activation_peak_bytes);
  EXPECT_EQ(z->gpus[0].cudagraph_bytes, 0u);
  EXPECT_EQ(z->gpus[0].kv_cache_bytes, e->gpus[0].kv_cache_bytes);
  EXPECT_NE(z->command.find(" -O0"), std::string::npos) << z->command;
  bool noted = false;
  for (const std::string& n : z->notes) noted |= n.find("with -O0 nothing is compiled") != n.npos;
  EXPECT_TRUE(noted);
  // The all-reduce + RMSNorm fusion runs at -O2 and -O3 only (OPTIMIZATION_LEVEL_01 sets
  // fuse_allreduce_rms False), so -O1 on two H100s charges no fusion workspace.
  VllmSettings tp2 = s;
  tp2.tensor_parallel_size = 2;
  auto tp2_o2 = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), tp2);
  tp2.optimization_level = 1;
  auto tp2_o1 = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), tp2);
  ASSERT_TRUE(tp2_o1.ok() && tp2_o2.ok());
  EXPECT_EQ(tp2_o2->gpus[0].non_torch_bytes - tp2_o1->gpus[0].non_torch_bytes, 1536ull << 20);
}


TEST(Vllm, CompilationConfigFewerGraphsLeaveMoreKv) {
  VllmSettings s;
  s.max_model_len = 8192;
  auto full = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), s);
  auto r = vllm::ReadFlags({{"--compilation-config", R"({"cudagraph_mode":"NONE"})"}}, s);
  ASSERT_TRUE(full.ok() && r.ok());
  auto none = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), *r);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->gpus[0].cudagraph_bytes, 0u);
  EXPECT_GT(full->gpus[0].cudagraph_bytes, 0u);
  EXPECT_GE(none->kv_cache_tokens, full->kv_cache_tokens);
}

// V1 in 0.8.0 to 0.9.1 captures [1, 2, 4] + 8..512 step 8 up to max_num_batched_tokens
// whatever max_num_seqs is (config.py _set_cudagraph_sizes at 0.8.5); from 0.10.0 (PR #20628)
// up to min(max_num_seqs x 2, 512).
TEST(Vllm, GraphSizesBefore010IgnoreMaxNumSeqs) {
  auto formula = [](const std::string& version) {
    VllmSettings s;
    s.version = version;
    s.max_model_len = 1024;
    s.max_num_seqs = 1;
    auto p = PlanVllm(Catalog("qwen3-8b"), Gpu("a100-80gb"), s);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    if (!p.ok()) return std::string();
    for (const Explained& e : p->gpus[0].explain) {
      if (e.name == "cudagraph") return e.formula;
    }
    return std::string();
  };
  EXPECT_NE(formula("0.8.5").find("67 graphs over 67 capture sizes up to 512"), std::string::npos)
      << formula("0.8.5");
  EXPECT_NE(formula("0.9.1").find("over 67 capture sizes up to 512"), std::string::npos);
  EXPECT_NE(formula("0.10.0").find("2 graphs over 2 capture sizes up to 2"), std::string::npos)
      << formula("0.10.0");
}

TEST(Vllm, MoeGraphsCostMorePerGraph) {
  const Inventory inv = Catalog("qwen3-30b-a3b");
  VllmSettings s;
  s.max_model_len = 8192;
  s.max_num_seqs = 1;
  auto p = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->gpus[0].cudagraph_bytes, 24576ull + 139264ull + 3ull * 12736 * 1024);
}

// Qwen3-VL's dummy video against vLLM's own count (qwen3_vl.py get_max_video_tokens with
// transformers' Qwen3-VL video smart_resize; docs/engines/vllm-multimodal-and-allreduce.md,
// A.4), video longest_edge 25,165,824, patch 16, merge 2, temporal patch 2.
std::string Qwen3VlEncoder(const std::string& version, int64_t len, int64_t images,
                           int64_t videos, uint64_t* bytes = nullptr,
                           int64_t max_pixels = 0) {
  VllmSettings s;
  s.version = version;
  s.max_pixels = max_pixels;
  s.tensor_parallel_size = 4;
  s.max_model_len = len;
  s.limit_images = images;
  s.limit_videos = videos;
  auto p = PlanVllm(Catalog("qwen3-vl-30b-a3b-instruct"), Gpu("h100"), s);
  if (!p.ok()) return p.status().ToString();
  for (const Explained& e : p->gpus[0].explain) {
    if (e.name != "encoder") continue;
    if (bytes != nullptr) *bytes = e.bytes;
    return e.formula;
  }
  return "";
}

TEST(Vllm, Qwen3VlDummyVideoBeforeTwoFrames) {
  // v0.11, max_model_len 65,536: frames count up while the video's embeddings stay within
  // 65,536, capped at 24,576; 24,576 frames of 4096 x 4096 shrink by sqrt(24,576 x 4096^2 /
  // 25,165,824) = 128 to 32 x 32: 12,288 temporal patches of 2 x 2 patches, 12,288 embeddings,
  // and the budget counts int(12,288 x 12.5) = 153,600 tokens (the record's log: "a budget of
  // 153600 tokens, and profiled with 1 video items").
  uint64_t bytes = 0;
  const std::string f = Qwen3VlEncoder("0.11.0", 65536, -1, -1, &bytes);
  EXPECT_NE(f.find("1 video(s) of 153600 tokens (16777216 max_pixels, 24576 frames of 32x32: "
                   "12288 embeddings, 49152 patches)"),
            std::string::npos) << f;
  // Stored: padded to the budget's rows, 2048 x (1 + 3 deepstack levels) wide, in 16 bits.
  EXPECT_NE(f.find("padded to the budget's 153600 rows"), std::string::npos) << f;
  // ViT over 49,152 patches at TP 4, at v0.11.0's peak: the all-gathered qkv beside the local
  // one, 16 x 1152 + 6 x 288 B each (VisionTowerBytesPerPatch), above the MLP's 2 x (3 x 1152 +
  // 3 x 4304 / 4) and the fp32 rotary's 4 x 1152 + 36 x 288.
  EXPECT_EQ(bytes, 153600ull * 2048 * 4 * 2 + 49152ull * (16 * 1152 + 6 * 288));
  // 8,192 tokens: 3 frames would be 16,200 embeddings, so 2 frames, shrunk by sqrt(4 / 3) from
  // 4096 to 3520: 220 x 220 patches, 12,100 embeddings, int(12,100 x 12.5) = 151,250 tokens.
  EXPECT_NE(Qwen3VlEncoder("0.12.0", 8192, -1, -1)
                .find("1 video(s) of 151250 tokens (16777216 max_pixels, 2 frames of 3520x3520: "
                      "12100 embeddings, 48400 patches)"),
            std::string::npos) << Qwen3VlEncoder("0.12.0", 8192, -1, -1);
  // --mm-processor-kwargs max_pixels 1,003,520 starts the frames at the image of 992 x 992; the
  // 24,576 frames still end at 32 x 32, under the video processor's own longest_edge.
  const std::string small = Qwen3VlEncoder("0.11.0", 65536, -1, -1, nullptr, 1003520);
  EXPECT_NE(small.find("of 153600 tokens (1003520 max_pixels, 24576 frames of 32x32"),
            std::string::npos) << small;
  // v0.13-v0.14 count the embeddings alone: 12,288 < an image's 16,384, so the image is
  // profiled unless images are off.
  EXPECT_NE(Qwen3VlEncoder("0.14.0", 65536, -1, -1).find("1 image(s) of 16384 tokens"),
            std::string::npos);
  EXPECT_NE(Qwen3VlEncoder("0.14.0", 65536, 0, 1).find("1 video(s) of 12288 tokens"),
            std::string::npos) << Qwen3VlEncoder("0.14.0", 65536, 0, 1);
}

TEST(Vllm, Qwen3VlTwoFrameVideoAndVideosOff) {
  // From v0.15: two frames at the largest image of 25,165,824 / 2 pixels, 3520 x 3520 (sqrt
  // 12,582,912 = 3547.2, floored to 32s): 12,100 embeddings whatever max_model_len.
  for (int64_t len : {8192, 262144}) {
    const std::string f = Qwen3VlEncoder("0.15.0", len, 0, -1);
    EXPECT_NE(f.find("1 video(s) of 12100 tokens (16777216 max_pixels, 2 frames of 3520x3520: "
                     "12100 embeddings, 48400 patches)"),
              std::string::npos) << f;
  }
  EXPECT_NE(Qwen3VlEncoder("0.15.0", 65536, -1, -1).find("image(s) of 16384 tokens"),
            std::string::npos);
  // "video": 0 leaves the image at v0.11, where the video would win, and stores no padding
  // (the image fills the budget); with images off too, no encoder profile at all.
  const std::string image = Qwen3VlEncoder("0.11.0", 65536, 1, 0);
  EXPECT_NE(image.find("1 image(s) of 16384 tokens"), std::string::npos) << image;
  EXPECT_EQ(image.find("padded"), std::string::npos) << image;
  EXPECT_EQ(Qwen3VlEncoder("0.11.0", 65536, 0, 0), "");
}

// v0.11.0's Qwen-VL vision attention rotates q and k through an fp32 copy (qwen2_5_vl.py,
// PR #24511 in, PR #28769 out): at TP 1 its peak per patch is 4h + 36h B, above the MLP's
// 2 x (3h + 3i). Qwen2.5-VL-3B (vision hidden 1,280, intermediate 3,420) on an L4 at 8,192 tokens:
// one image of 16,384 tokens, 65,536 patches; 0.11.1 is back to the MLP's peak.
TEST(Vllm, V0110VisionAttentionHoldsAnFp32CopyOfQAndK) {
  auto encoder = [](const char* version) -> uint64_t {
    VllmSettings s;
    s.version = version;
    s.max_model_len = 8192;
    auto p = PlanVllm(Catalog("qwen2.5-vl-3b-instruct"), Gpu("l4"), s);
    if (!p.ok()) return 0;
    for (const Explained& e : p->gpus[0].explain) {
      if (e.name == "encoder") return e.bytes;
    }
    return 0;
  };
  const uint64_t stored = 16384ull * 2048 * 2;  // padded to the budget's 16,384 rows
  EXPECT_EQ(encoder("0.11.0"), stored + 65536ull * (4 * 1280 + 36 * 1280));
  EXPECT_EQ(encoder("0.11.1"), stored + 65536ull * 2 * (3 * 1280 + 3 * 3420));
}

// Mistral Small 3.2: the Pixtral tower is in the weights (0.82 GiB), and its profile, which the
// plan does not charge on its own, is named; --language-model-only drops both and the note.
TEST(Vllm, PixtralTowerIsWeighedAndItsProfileNamed) {
  const Inventory inv = Catalog("mistral-small-3.2-24b-instruct-2506");
  VllmSettings s;
  s.max_model_len = 16384;
  auto p = PlanVllm(inv, Gpu("h100-sxm"), s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const auto named = [](const VllmPlan& plan) {
    for (const std::string& n : plan.notes) {
      if (n.rfind("the vision encoder's profile (Mistral3ForConditionalGeneration", 0) == 0) {
        return true;
      }
    }
    return false;
  };
  EXPECT_TRUE(named(*p));
  s.language_model_only = true;
  auto text = PlanVllm(inv, Gpu("h100-sxm"), s);
  ASSERT_TRUE(text.ok());
  EXPECT_FALSE(named(*text));
  EXPECT_EQ(p->gpus[0].weights_bytes - text->gpus[0].weights_bytes, 438958080ULL * 2);
}

// --language-model-only (PR #34120, v0.16): every modality's limit is 0, so vLLM builds neither
// the vision tower nor the projector (_mark_tower_model) and profiles no encoder. Qwen2.5-VL-3B
// on an L4 at v0.20: the weights lose exactly the vision component, the encoder term goes, and
// the flag reaches the printed command. Before v0.16 vLLM refuses the flag; the plan says so.
TEST(Vllm, LanguageModelOnlyLoadsNoVisionTowerAndProfilesNoEncoder) {
  const Inventory inv = Catalog("qwen2.5-vl-3b-instruct");
  uint64_t vision = 0;
  for (const ComponentTotal& c : inv.by_component) {
    if (c.component == Component::kVision) vision = c.bytes;
  }
  ASSERT_GT(vision, 0u);
  VllmSettings s;
  s.version = "0.20.0";
  s.max_model_len = 8192;
  auto with = PlanVllm(inv, Gpu("l4"), s);
  s.language_model_only = true;
  auto without = PlanVllm(inv, Gpu("l4"), s);
  ASSERT_TRUE(with.ok() && without.ok());
  EXPECT_EQ(with->gpus[0].weights_bytes - without->gpus[0].weights_bytes, vision);
  auto has_encoder = [](const VllmPlan& p) {
    for (const Explained& e : p.gpus[0].explain) {
      if (e.name == "encoder") return true;
    }
    return false;
  };
  EXPECT_TRUE(has_encoder(*with));
  EXPECT_FALSE(has_encoder(*without));
  EXPECT_NE(without->command.find(" --language-model-only"), std::string::npos);
  s.version = "0.15.0";
  auto old = PlanVllm(inv, Gpu("l4"), s);
  ASSERT_TRUE(old.ok());
  bool said = false;
  for (const std::string& n : old->notes) {
    said = said || n.rfind("--language-model-only: vLLM 0.15 does not have it", 0) == 0;
  }
  EXPECT_TRUE(said);
  // ... and its command runs there: the limits the flag stands for, in the release's own form
  // (a JSON object from 0.8.5, PR #16789; `image=0,video=0` before), never the flag itself.
  EXPECT_EQ(old->command.find("--language-model-only"), std::string::npos);
  EXPECT_NE(old->command.find(R"( --limit-mm-per-prompt '{"image":0,"video":0}')"),
            std::string::npos)
      << old->command;
  s.version = "0.6.6";
  auto v066 = PlanVllm(inv, Gpu("l4"), s);
  ASSERT_TRUE(v066.ok()) << v066.status().ToString();
  EXPECT_NE(v066->command.find(" --limit-mm-per-prompt image=0,video=0"), std::string::npos)
      << v066->command;
  // Before --limit-mm-per-prompt (0.5.5, PR #7126) a text-only start cannot be asked for.
  s.version = "0.5.4";
  auto v054 = PlanVllm(inv, Gpu("l4"), s);
  ASSERT_FALSE(v054.ok());
  EXPECT_NE(v054.status().message().find("has neither it"), std::string::npos);
  // `check` reads it from a serve line as a modelled flag.
  auto cmd = vllm::ReadServeCommand(
      {"vllm", "serve", "Qwen/Qwen2.5-VL-3B-Instruct", "--language-model-only"});
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  EXPECT_TRUE(cmd->unmodelled_flags.empty());
  auto read = vllm::ReadFlags(cmd->flags, VllmSettings{});
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_TRUE(read->language_model_only);
}

// Image and video tie at 16,384 tokens for Qwen2.5-VL at 8,192 tokens (the video's frames clamp
// to one temporal patch): the first listed, the image, wins before v0.17 (the ~0.11 record's log:
// "profiled with 1 image items"), video from v0.17 (PR #34533 keys the max on the name too).
TEST(Vllm, AnEncoderProfileTieGoesToTheImageBeforeV017) {
  auto encoder = [](const char* version) {
    VllmSettings s;
    s.version = version;
    s.max_model_len = 8192;
    auto p = PlanVllm(Catalog("qwen2.5-vl-3b-instruct"), Gpu("l4"), s);
    if (!p.ok()) return p.status().ToString();
    for (const Explained& e : p->gpus[0].explain) {
      if (e.name == "encoder") return e.formula;
    }
    return std::string();
  };
  EXPECT_EQ(encoder("0.11.0").rfind("1 image(s) of 16384 tokens", 0), 0u) << encoder("0.11.0");
  EXPECT_EQ(encoder("0.17.0").rfind("1 video(s) of 16384 tokens", 0), 0u) << encoder("0.17.0");
}

// V1's profile_run keeps the dummy encoder outputs in its encoder cache through the text dummy
// run and the sampler warm-up (v1/worker/gpu_model_runner.py, cleared after both): the stored
// embeddings add to the sampler's peak instead of competing with it. Qwen3-VL-30B-A3B at v0.11,
// TP 4 on H100s, 65,536 tokens: the padded video outputs (153,600 rows x 2,048 x 4 values x 2 B)
// under the sampler's sort over 1,024 requests x 151,936 logits at 39 B, which alone exceeds the
// tower and the forward.
TEST(Vllm, StoredEncoderOutputsStayUnderTheSamplerWarmUp) {
  VllmSettings s;
  s.version = "0.11.0";
  s.tensor_parallel_size = 4;
  s.max_model_len = 65536;
  auto p = PlanVllm(Catalog("qwen3-vl-30b-a3b-instruct"), Gpu("h100"), s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const uint64_t stored = 153600ull * 2048 * 4 * 2;
  const uint64_t sampler = 1024ull * 151936 * 39;
  EXPECT_EQ(p->gpus[0].activation_peak_bytes, stored + sampler);
  bool said = false;
  for (const Explained& e : p->gpus[0].explain) {
    if (e.name == "activation_peak") {
      said = e.formula.find("stored encoder outputs") != std::string::npos;
    }
  }
  EXPECT_TRUE(said);
}

// --async-scheduling is read as free of GPU memory (command.cc): named as read, never as not
// modelled, and the printed command keeps it; --no-async-scheduling likewise.
TEST(Vllm, AsyncSchedulingIsReadWithoutMemoryEffect) {
  for (const char* flag : {"--async-scheduling", "--no-async-scheduling"}) {
    auto cmd = vllm::ReadServeCommand({"vllm", "serve", "Qwen/Qwen3-8B", flag, "--max-model-len",
                                 "8192"});
    ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
    EXPECT_TRUE(cmd->unmodelled_flags.empty()) << flag;
    EXPECT_EQ(cmd->model, "Qwen/Qwen3-8B") << flag;
  }
  auto cmd = vllm::ReadServeCommand({"vllm", "serve", "Qwen/Qwen3-8B", "--async-scheduling"});
  ASSERT_TRUE(cmd.ok());
  ASSERT_EQ(cmd->no_memory_flags.size(), 1u);
  EXPECT_EQ(cmd->no_memory_flags[0], "--async-scheduling");
  // The DCP interleave sizes move tokens between ranks, not bytes; -dcp itself is modelled and
  // the communication backend is named as not modelled. Their values are consumed.
  auto dcp = vllm::ReadServeCommand({"vllm", "serve", "deepseek-v2-lite", "-tp", "2", "-dcp", "2",
                                     "--dcp-kv-cache-interleave-size", "16", "--dcp-comm-backend",
                                     "a2a", "--max-model-len", "8192"});
  ASSERT_TRUE(dcp.ok()) << dcp.status().ToString();
  ASSERT_EQ(dcp->no_memory_flags.size(), 1u);
  EXPECT_EQ(dcp->no_memory_flags[0], "--dcp-kv-cache-interleave-size");
  ASSERT_EQ(dcp->unmodelled_flags.size(), 1u);
  EXPECT_EQ(dcp->unmodelled_flags[0], "--dcp-comm-backend");
}

// --enable-sleep-mode allocates the same weights and pool in CuMemAllocator's pools; the
// sampler warm-up runs without logprobs, so --max-logprobs sizes nothing at start-up. The
// switch takes no value (the model after it is the positional one) and --max-logprobs one.
TEST(Vllm, SleepModeAndMaxLogprobsAreReadWithoutMemoryEffect) {
  auto cmd = vllm::ReadServeCommand({"vllm", "serve", "--enable-sleep-mode", "Qwen/Qwen3-8B",
                                     "--max-logprobs", "5", "--max-model-len", "8192"});
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  EXPECT_EQ(cmd->model, "Qwen/Qwen3-8B");
  EXPECT_TRUE(cmd->unmodelled_flags.empty());
  ASSERT_EQ(cmd->no_memory_flags.size(), 2u);
  EXPECT_EQ(cmd->no_memory_flags[0], "--enable-sleep-mode");
  EXPECT_EQ(cmd->no_memory_flags[1], "--max-logprobs");
  // A value given to the switch is argparse's "ignored explicit argument".
  EXPECT_FALSE(vllm::ReadServeCommand({"vllm", "serve", "Qwen/Qwen3-8B",
                                       "--enable-sleep-mode=1"}).ok());
}

// The API server's, logging's, loading's and rendezvous' host-side options are read with no
// memory effect, each consuming what it takes: a switch nothing, a plain option one word, a
// list option the words up to the next flag.
TEST(Vllm, HostSideOptionsAreReadWithoutMemoryEffect) {
  auto cmd = vllm::ReadServeCommand(
      {"vllm", "serve", "--headless", "Qwen/Qwen3-8B", "--middleware", "a.b", "c.d", "--nnodes",
       "2", "--node-rank", "1", "--master-addr", "10.0.0.1", "--safetensors-load-strategy",
       "prefetch", "--kv-cache-metrics", "--otlp-traces-endpoint", "http://otel:4317",
       "--mm-processor-cache-gb", "0", "--max-model-len", "8192"});
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  EXPECT_EQ(cmd->model, "Qwen/Qwen3-8B");
  EXPECT_TRUE(cmd->unmodelled_flags.empty()) << cmd->unmodelled_flags[0];
  EXPECT_EQ(cmd->no_memory_flags.size(), 9u);
  // A switch given a value is argparse's error, as for the others.
  EXPECT_FALSE(vllm::ReadServeCommand({"vllm", "serve", "Qwen/Qwen3-8B", "--headless=1"}).ok());
  // The front end's processes and endpoints, admission and data-parallel balancing (0.22): a
  // switch before the model leaves the model positional, -asc is --api-server-count.
  auto front = vllm::ReadServeCommand(
      {"vllm", "serve", "--grpc", "Qwen/Qwen3-8B", "-asc", "4", "--renderer-num-workers", "8",
       "--no-scheduler-reserve-full-isl", "--data-parallel-backend", "ray",
       "--data-parallel-hybrid-lb", "--tokens-only", "--fingerprint-mode", "hash",
       "--max-model-len", "8192"});
  ASSERT_TRUE(front.ok()) << front.status().ToString();
  EXPECT_EQ(front->model, "Qwen/Qwen3-8B");
  EXPECT_TRUE(front->unmodelled_flags.empty()) << front->unmodelled_flags[0];
  EXPECT_EQ(front->no_memory_flags.size(), 8u);
  // Profiling, the checkpoint's ignored files (a list), kernel and scheduling choices.
  auto more = vllm::ReadServeCommand(
      {"vllm", "serve", "Qwen/Qwen3-8B", "--ignore-patterns", "original/**/*", "*.pt",
       "--no-disable-cascade-attn", "--logprobs-mode", "processed_logprobs",
       "--disable-chunked-mm-input", "--expert-placement-strategy", "round_robin",
       "--profiler-config", "{}", "--max-model-len", "8192"});
  ASSERT_TRUE(more.ok()) << more.status().ToString();
  EXPECT_TRUE(more->unmodelled_flags.empty()) << more->unmodelled_flags[0];
  EXPECT_EQ(more->no_memory_flags.size(), 6u);
  // The off form of one whose default is on is named and kept too.
  auto off = vllm::ReadServeCommand({"vllm", "serve", "Qwen/Qwen3-8B", "--no-enable-log-deltas"});
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_TRUE(off->unmodelled_flags.empty());
  EXPECT_EQ(off->no_memory_flags, (std::vector<std::string>{"--no-enable-log-deltas"}));
}

// --kv-cache-dtype-skip-layers takes the words up to the next flag (nargs "+"), printed back.
TEST(Vllm, KvCacheDtypeSkipLayersAreReadAndPlanned) {
  auto cmd = vllm::ReadServeCommand({"vllm", "serve", "qwen3-8b", "--kv-cache-dtype", "fp8",
                                     "--kv-cache-dtype-skip-layers", "0", "1", "34", "35",
                                     "--max-model-len", "32768"});
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  EXPECT_TRUE(cmd->unmodelled_flags.empty());
  auto s = vllm::ReadFlags(cmd->flags, ToVllmSettings(cmd->settings));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->kv_skip_layers, (std::vector<std::string>{"0", "1", "34", "35"}));
  EXPECT_EQ(s->max_model_len, 32768);
  auto skipped = PlanVllm(Catalog("qwen3-8b"), Gpu("4090"), *s);
  s->kv_skip_layers.clear();
  auto all = PlanVllm(Catalog("qwen3-8b"), Gpu("4090"), *s);
  ASSERT_TRUE(skipped.ok() && all.ok());
  // 36 FP8 layers' bytes against 32 FP8 and 4 BF16: 36/40 of the tokens.
  EXPECT_NEAR(static_cast<double>(skipped->kv_cache_tokens) /
                  static_cast<double>(all->kv_cache_tokens),
              0.9, 0.002);
  EXPECT_NE(skipped->command.find("--kv-cache-dtype-skip-layers 0 1 34 35"), std::string::npos);
}

// --kv-offloading-size: a host tier (vllm/v1/kv_offload/worker/cpu_gpu.py copies blocks
// straight between it and the GPU pool), so the GPU plan is the same and a note names the tier.
TEST(Vllm, KvOffloadingSizeLeavesTheGpuPoolAndNamesTheHostTier) {
  auto cmd = vllm::ReadServeCommand({"vllm", "serve", "qwen3-8b", "--max-model-len", "32768",
                               "--kv-offloading-size=24"});
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  EXPECT_TRUE(cmd->unmodelled_flags.empty());
  auto read = vllm::ReadFlags(cmd->flags, ToVllmSettings(cmd->settings));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  VllmSettings s = *read;
  EXPECT_DOUBLE_EQ(s.kv_offloading_gib, 24);
  EXPECT_TRUE(s.kv_offloading_backend.empty());
  s.max_model_len = 32768;
  VllmSettings plain = s;
  plain.kv_offloading_gib = 0;
  const Inventory inv = Catalog("qwen3-8b");
  auto with = PlanVllm(inv, Gpu("h100"), s);
  auto without = PlanVllm(inv, Gpu("h100"), plain);
  ASSERT_TRUE(with.ok() && without.ok());
  EXPECT_EQ(with->kv_cache_tokens, without->kv_cache_tokens);
  EXPECT_EQ(with->fits, without->fits);
  auto note = [](const Plan& p, const std::string& text) {
    for (const std::string& n : p.notes) {
      if (n.find(text) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(note(*with, "a host KV tier of 24 GiB"));
  EXPECT_FALSE(note(*with, "hybrid KV cache manager"));  // Qwen3-8B has no sliding layers
  EXPECT_FALSE(note(*without, "host KV tier"));
  // The printed command keeps the flag, so that pasting it starts the same server.
  EXPECT_NE(vllm::ServeCommand("qwen3-8b", s, s).find("--kv-offloading-size 24"),
            std::string::npos);
  // A model with sliding-window layers: the connector's effect on the hybrid manager is named.
  VllmSettings oss;
  oss.max_model_len = 8192;
  oss.kv_offloading_gib = 8;
  auto p = PlanVllm(Catalog("gpt-oss-20b"), Gpu("h100"), oss);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(note(*p, "hybrid KV cache manager"));
  // LMCache's backend is named as such; a backend without a size changes nothing.
  oss.kv_offloading_backend = "lmcache";
  EXPECT_TRUE(note(*PlanVllm(Catalog("gpt-oss-20b"), Gpu("h100"), oss), "LMCache"));
  plain.kv_offloading_backend = "native";
  auto alone = PlanVllm(inv, Gpu("h100"), plain);
  ASSERT_TRUE(alone.ok());
  ASSERT_FALSE(alone->without_effect.empty());
  EXPECT_NE(alone->without_effect.back().find("without --kv-offloading-size"),
            std::string::npos);
}

TEST(Vllm, KvOffloadingRefusesMalformedValues) {
  auto error = [](std::vector<std::string> tail) {
    std::vector<std::string> argv = {"vllm", "serve", "qwen3-8b"};
    argv.insert(argv.end(), tail.begin(), tail.end());
    auto cmd = vllm::ReadServeCommand(argv);
    if (!cmd.ok()) return std::string(cmd.status().message());
    auto read = vllm::ReadFlags(cmd->flags, ToVllmSettings(cmd->settings));
    return read.ok() ? std::string() : std::string(read.status().message());
  };
  for (const char* bad : {"abc", "-1", "0", "nan", "inf", "24GiB", "1e300"}) {
    const std::string e = error({std::string("--kv-offloading-size=") + bad});
    EXPECT_NE(e.find("--kv-offloading-size"), std::string::npos) << bad;
    EXPECT_NE(e.find("expected a size in GiB"), std::string::npos) << bad;
  }
  EXPECT_NE(error({"--kv-offloading-size="}).find("needs a value"), std::string::npos);
  EXPECT_NE(error({"--kv-offloading-backend", "disk"}).find("expected native or lmcache"),
            std::string::npos);
  EXPECT_EQ(error({"--kv-offloading-size", "0.5", "--kv-offloading-backend", "native"}), "");
}

// --cudagraph-capture-sizes N [N ...] (argparse nargs="+", v0.11.1+): the sizes replace the
// default list as compilation_config's key does; both together are refused as vLLM refuses them.
TEST(Vllm, CudagraphCaptureSizesFlagIsTheCompilationConfigsList) {
  auto settings = [](std::vector<std::string> tail) -> Result<VllmSettings> {
    std::vector<std::string> argv = {"vllm", "serve", "qwen3-8b", "--max-model-len", "8192"};
    argv.insert(argv.end(), tail.begin(), tail.end());
    auto cmd = vllm::ReadServeCommand(argv);
    if (!cmd.ok()) return cmd.status();
    return vllm::ReadFlags(cmd->flags, ToVllmSettings(cmd->settings));
  };
  auto words = settings({"--cudagraph-capture-sizes", "1", "2", "4", "8", "--max-num-seqs", "8"});
  ASSERT_TRUE(words.ok()) << words.status().ToString();
  EXPECT_EQ(words->cudagraph_capture_sizes, (std::vector<int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(words->max_num_seqs, 8);  // the list stops at the next flag
  auto commas = settings({"--cudagraph-capture-sizes=1,2,4,8"});
  ASSERT_TRUE(commas.ok());
  EXPECT_EQ(commas->cudagraph_capture_sizes, words->cudagraph_capture_sizes);
  auto config = settings({"--compilation-config", R"({"cudagraph_capture_sizes": [1, 2, 4, 8]})"});
  ASSERT_TRUE(config.ok());
  VllmSettings a = *commas, b = *config;
  a.max_model_len = b.max_model_len = 8192;
  auto pa = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), a);
  auto pb = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), b);
  VllmSettings defaults;
  defaults.max_model_len = 8192;
  auto plain = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), defaults);
  ASSERT_TRUE(pa.ok() && pb.ok() && plain.ok());
  EXPECT_EQ(pa->gpus[0].cudagraph_bytes, pb->gpus[0].cudagraph_bytes);
  EXPECT_LT(pa->gpus[0].cudagraph_bytes, plain->gpus[0].cudagraph_bytes / 4);
  // The printed command gives the sizes back as the flag.
  EXPECT_NE(vllm::ServeCommand("qwen3-8b", a, a).find("--cudagraph-capture-sizes 1 2 4 8"),
            std::string::npos);
  auto both = settings({"--cudagraph-capture-sizes", "1", "2", "--compilation-config",
                        R"({"cudagraph_capture_sizes": [4]})"});
  ASSERT_FALSE(both.ok());
  EXPECT_NE(std::string(both.status().message()).find("mutually exclusive"), std::string::npos);
  for (const char* bad : {"0", "x", "-3", "1,,2", "99999999999"}) {
    auto r = settings({std::string("--cudagraph-capture-sizes=") + bad});
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(std::string(r.status().message()).find("--cudagraph-capture-sizes"),
              std::string::npos)
        << bad;
  }
}

// The settings a `vllm serve x WORDS...` command line gives (its flags read as vLLM reads them).
VllmSettings ServeSettings(const std::vector<std::string>& words) {
  std::vector<std::string> argv = {"vllm", "serve", "x"};
  argv.insert(argv.end(), words.begin(), words.end());
  auto cmd = vllm::ReadServeCommand(argv);
  EXPECT_TRUE(cmd.ok()) << cmd.status().ToString();
  auto s = vllm::ReadFlags(cmd->flags, ToVllmSettings(cmd->settings));
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : VllmSettings{};
}

// --num-gpu-blocks-override (kv_cache_utils.py get_num_blocks): the pool is that many blocks
// whatever the profile left (Qwen3-8B: 16 tokens x 36 layers x 8 KV heads x 128 x 2 x 2 B =
// 2.25 MiB a block), and a count the device cannot hold beside the weights fails at kv_cache.
TEST(Vllm, NumGpuBlocksOverrideFixesThePool) {
  VllmSettings s;
  s.max_model_len = 8192;
  s.num_gpu_blocks_override = 1000;
  auto p = PlanVllm(Catalog("qwen3-8b"), Gpu("rtx-4090"), s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->fits);
  EXPECT_EQ(p->kv_cache_tokens, 16000u);
  EXPECT_EQ(p->gpus[0].kv_cache_bytes, 1000u * 16 * 36 * 8 * 128 * 2 * 2);
  s.num_gpu_blocks_override = 100000;
  auto over = PlanVllm(Catalog("qwen3-8b"), Gpu("rtx-4090"), s);
  ASSERT_TRUE(over.ok());
  EXPECT_FALSE(over->fits);
  EXPECT_EQ(over->failure_stage, Stage::kKvCache);
  EXPECT_NE(over->command.find("--num-gpu-blocks-override 100000"), std::string::npos);
}

// EPLB (vllm/config/parallel.py, fused_moe/layer.py, read at 0.22): R redundant experts make
// E + R physical ones over the EP ranks (Qwen3-30B-A3B, 128 experts of 54 GiB in bf16: 27 GiB a
// rank at EP 2, 33.75 GiB with 32 redundant); its config checks are start-up refusals.
TEST(Vllm, EplbRedundantExpertsAndItsRefusals) {
  VllmSettings s;
  s.max_model_len = 8192;
  s.tensor_parallel_size = 2;
  s.enable_expert_parallel = true;
  auto base = PlanVllm(Catalog("qwen3-30b-a3b"), Gpu("h100"), s);
  s.enable_eplb = true;
  s.num_redundant_experts = 32;
  auto eplb = PlanVllm(Catalog("qwen3-30b-a3b"), Gpu("h100"), s);
  ASSERT_TRUE(base.ok() && eplb.ok());
  const double extra = static_cast<double>(eplb->gpus[0].weights_bytes) -
                       static_cast<double>(base->gpus[0].weights_bytes);
  EXPECT_NEAR(extra / (1ull << 30), 6.75, 0.02);
  EXPECT_NE(eplb->command.find("--enable-eplb"), std::string::npos);
  s.enable_expert_parallel = false;
  auto no_ep = PlanVllm(Catalog("qwen3-30b-a3b"), Gpu("h100"), s);
  ASSERT_TRUE(no_ep.ok());
  EXPECT_EQ(no_ep->failure_stage, Stage::kStartup);
  EXPECT_EQ(no_ep->failure_message, "enable_expert_parallel must be True to use EPLB.");
  s.enable_expert_parallel = true;
  s.enable_eplb = false;
  auto no_eplb = PlanVllm(Catalog("qwen3-30b-a3b"), Gpu("h100"), s);
  ASSERT_TRUE(no_eplb.ok());
  EXPECT_EQ(no_eplb->failure_stage, Stage::kStartup);
  s.enable_eplb = true;
  s.num_redundant_experts = 0;
  s.tensor_parallel_size = 1;
  auto one = PlanVllm(Catalog("qwen3-30b-a3b"), Gpu("h100"), s);
  ASSERT_TRUE(one.ok());
  EXPECT_NE(one->failure_message.find("EPLB requires tensor_parallel_size or "
                                      "data_parallel_size to be greater than 1"),
            std::string::npos);
}

// --performance-mode (VllmConfig, read at 0.22): throughput doubles the scheduler defaults the
// user left (H100: 1,024 sequences and 8,192 batched tokens become 2,048 and 16,384; a given
// value stays); interactivity captures every batch size from 1 to 32 before the usual steps.
TEST(Vllm, PerformanceModeDoublesDefaultsOrCapturesSmallBatches) {
  auto plan = [](std::vector<std::string> tail) {
    tail.insert(tail.begin(), {"--max-model-len", "8192"});
    auto p = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), ServeSettings(tail));
    EXPECT_TRUE(p.ok());
    return *p;
  };
  const auto balanced = plan({});
  const auto throughput = plan({"--performance-mode", "throughput"});
  EXPECT_EQ(throughput.resolved.max_num_seqs, 2 * balanced.resolved.max_num_seqs);
  EXPECT_EQ(throughput.resolved.max_num_batched_tokens,
            2 * balanced.resolved.max_num_batched_tokens);
  EXPECT_GT(throughput.gpus[0].activation_peak_bytes, balanced.gpus[0].activation_peak_bytes);
  const auto given = plan({"--performance-mode", "throughput", "--max-num-seqs", "64"});
  EXPECT_EQ(given.resolved.max_num_seqs, 64);
  EXPECT_EQ(given.resolved.max_num_batched_tokens, throughput.resolved.max_num_batched_tokens);
  const auto interactive = plan({"--performance-mode", "interactivity"});
  EXPECT_GT(interactive.gpus[0].cudagraph_bytes, balanced.gpus[0].cudagraph_bytes);
  EXPECT_NE(interactive.command.find("--performance-mode interactivity"), std::string::npos);
  VllmSettings s;
  EXPECT_FALSE(vllm::ReadFlags({{"--performance-mode", "fast"}}, s).ok());
}

// --mm-encoder-tp-mode data (qwen2_5_vl.py use_data_parallel: the tower's linears built with
// disable_tp; vision.py run_dp_sharded_mrope_vision_model: each rank a share of the items): the
// encoder's weights whole on every rank, its profile over ceil(items / TP) items with every head.
TEST(Vllm, EncoderDataModeKeepsTheTowerWholeOnEveryRank) {
  VllmSettings s;
  s.tensor_parallel_size = 4;
  s.max_model_len = 32768;
  VllmSettings data = s;
  data.mm_encoder_tp_data = true;
  const Inventory inv = Catalog("qwen2.5-vl-72b-instruct");
  auto sharded = PlanVllm(inv, Gpu("h100"), s);
  auto whole = PlanVllm(inv, Gpu("h100"), data);
  ASSERT_TRUE(sharded.ok() && whole.ok()) << whole.status().ToString();
  // The tower and merger: the checkpoint's vision tensors, 3/4 of them more on each rank.
  const uint64_t vision = [&] {
    for (const ComponentTotal& c : inv.by_component) {
      if (c.component == Component::kVision) return c.bytes;
    }
    return uint64_t{0};
  }();
  ASSERT_GT(vision, 1ull << 30);
  const double more = static_cast<double>(whole->gpus[0].weights_bytes) -
                      static_cast<double>(sharded->gpus[0].weights_bytes);
  EXPECT_NEAR(more, 0.75 * static_cast<double>(vision), 0.02 * static_cast<double>(vision));
  // The one profiled video runs whole on one rank: a larger encoder peak, a smaller KV pool.
  EXPECT_GT(whole->gpus[0].activation_peak_bytes, sharded->gpus[0].activation_peak_bytes);
  EXPECT_LT(whole->kv_cache_tokens, sharded->kv_cache_tokens);
  auto has = [](const std::vector<std::string>& v, const std::string& text) {
    return std::any_of(v.begin(), v.end(),
                       [&](const std::string& n) { return n.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(has(whole->notes, "whole on each of the 4 ranks"));
  // TP 1 and a text-only model: the same plan, the flag listed as without effect.
  s.tensor_parallel_size = data.tensor_parallel_size = 1;
  auto one = PlanVllm(inv, Gpu("h100"), data);
  auto one_plain = PlanVllm(inv, Gpu("h100"), s);
  ASSERT_TRUE(one.ok() && one_plain.ok());
  EXPECT_EQ(one->kv_cache_tokens, one_plain->kv_cache_tokens);
  EXPECT_TRUE(has(one->without_effect, "--mm-encoder-tp-mode data"));
  data.tensor_parallel_size = 2;
  data.max_model_len = 8192;
  auto text = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), data);
  ASSERT_TRUE(text.ok());
  EXPECT_TRUE(has(text->without_effect, "no vision encoder"));
  // The flag's values are vLLM's MMEncoderTPMode.
  auto cmd = vllm::ReadServeCommand({"vllm", "serve", "qwen3-8b", "--mm-encoder-tp-mode", "x"});
  ASSERT_TRUE(cmd.ok());
  EXPECT_FALSE(vllm::ReadFlags(cmd->flags, ToVllmSettings(cmd->settings)).ok());
}

// --disable-hybrid-kv-cache-manager (v1/core/kv_cache_utils.py unify_hybrid_kv_cache_specs):
// beside full-attention layers the sliding-window ones become full attention, so a token costs
// every layer's KV; a model of one layer type is unchanged; linear-attention hybrids are refused.
TEST(Vllm, DisabledHybridKvManagerCachesSlidingLayersWhole) {
  VllmSettings s;
  s.max_model_len = 131072;
  VllmSettings off = s;
  off.disable_hybrid_kv_cache_manager = true;
  auto has = [](const std::vector<std::string>& v, const std::string& text) {
    return std::any_of(v.begin(), v.end(),
                       [&](const std::string& n) { return n.find(text) != std::string::npos; });
  };
  const Inventory oss = Catalog("gpt-oss-20b");
  auto hybrid = PlanVllm(oss, Gpu("h100"), s);
  auto unified = PlanVllm(oss, Gpu("h100"), off);
  ASSERT_TRUE(hybrid.ok() && unified.ok()) << unified.status().ToString();
  // Half of gpt-oss's layers slide over 128 tokens: unified, each token pays all 24 layers, so
  // the pool of the same size holds about half the tokens (the hybrid manager's sliding
  // reservations keep it a little above half).
  const double ratio = static_cast<double>(unified->kv_cache_tokens) /
                       static_cast<double>(hybrid->kv_cache_tokens);
  EXPECT_GT(ratio, 0.45);
  EXPECT_LT(ratio, 0.6);
  EXPECT_TRUE(has(unified->notes, "cache the whole context"));
  // One layer type: nothing to unify.
  off.max_model_len = s.max_model_len = 32768;
  auto dense = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), off);
  auto dense_plain = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), s);
  ASSERT_TRUE(dense.ok() && dense_plain.ok());
  EXPECT_EQ(dense->kv_cache_tokens, dense_plain->kv_cache_tokens);
  EXPECT_TRUE(has(dense->without_effect, "already has one KV cache type"));
  // Linear-attention layers beside full ones cannot be unified: vLLM stops at start-up.
  off.tensor_parallel_size = 4;
  auto next = PlanVllm(Catalog("qwen3-next-80b-a3b-instruct"), Gpu("h100"), off);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_FALSE(next->fits);
  EXPECT_EQ(next->failure_stage, Stage::kStartup);
  EXPECT_EQ(next->refusal, "drop --disable-hybrid-kv-cache-manager");
}

// A hybrid model's decode graphs need one Mamba state block per sequence: max_num_seqs above
// the pool's blocks (kv_cache_config.num_blocks) stops vLLM before capture (0.18+ here); eager
// mode captures nothing, and before 0.18 the check is named, not failed.
TEST(Vllm, MambaBlocksForTheDecodeGraphs) {
  const Inventory inv = Catalog("qwen3.8-27b");
  VllmSettings s;
  s.max_model_len = 8192;
  s.max_num_seqs = 1024;
  s.gpu_memory_utilization = 0.9;
  auto p = PlanVllm(inv, Gpu("rtx-pro-6000"), s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_FALSE(p->fits);
  EXPECT_EQ(p->failure_stage, Stage::kKvCache);
  EXPECT_NE(p->failure_message.find("exceeds available Mamba cache blocks"), std::string::npos);
  // The blocks it names are the pool's, null block included, as vLLM's kv_cache_config has them.
  const uint64_t pool =
      KvCapacity(p->kv_layout, p->gpus.front().kv_cache_bytes, p->kv_options).num_blocks;
  EXPECT_NE(p->failure_message.find(fmt::format("Mamba cache blocks ({})", pool)),
            std::string::npos)
      << p->failure_message << " against " << pool;
  VllmSettings fewer = s;
  fewer.max_num_seqs = 256;
  auto ok = PlanVllm(inv, Gpu("rtx-pro-6000"), fewer);
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(ok->fits);
  VllmSettings eager = s;
  eager.enforce_eager = true;
  auto e = PlanVllm(inv, Gpu("rtx-pro-6000"), eager);
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e->fits);
  VllmSettings older = s;
  older.version = "0.17";
  auto o = PlanVllm(inv, Gpu("rtx-pro-6000"), older);
  ASSERT_TRUE(o.ok());
  EXPECT_NE(o->failure_stage, Stage::kKvCache);
  EXPECT_FALSE(o->not_counted.empty());
  // A dense model has no state blocks.
  auto dense = PlanVllm(Catalog("qwen3-8b"), Gpu("rtx-pro-6000"), s);
  ASSERT_TRUE(dense.ok());
  EXPECT_TRUE(dense->fits);
}

// LMCache's GPU memory: LMCacheConnectorV1's staging chunk (256 tokens of KV) and the
// LMCacheMPConnector server's CUDA context, chunk and slot map, made after vLLM sized the KV
// cache: not in "Available KV cache memory", but on the device beside the budget.
TEST(Vllm, LmcacheBuffersComeOutOfTheHeadroom) {
  auto settings = [](std::vector<std::string> words) {
    words.insert(words.begin(), {"--max-model-len", "8192"});
    return ServeSettings(words);
  };
  auto connector = [](const GpuPlan& g) {
    for (const Explained& e : g.explain) {
      if (e.name == "kv_connector") return e.bytes;
    }
    return uint64_t{0};
  };
  const std::string v1 = R"({"kv_connector": "LMCacheConnectorV1", "kv_role": "kv_both"})";
  const std::string mp = R"({"kv_connector": "LMCacheMPConnector", "kv_role": "kv_both"})";
  const Inventory qwen = Catalog("qwen3-8b");
  auto plain = PlanVllm(qwen, Gpu("rtx4090"), settings({}));
  auto in_process = PlanVllm(qwen, Gpu("rtx4090"), settings({"--kv-transfer-config", v1}));
  auto server = PlanVllm(qwen, Gpu("rtx4090"), settings({"--kv-transfer-config", mp}));
  ASSERT_TRUE(plain.ok() && in_process.ok() && server.ok());
  // 36 layers x 8 KV heads x 128 x K and V x 2 B = 144 KiB a token; 256 tokens: 36 MiB.
  EXPECT_EQ(connector(in_process->gpus[0]), 256ull * 36 * 8 * 128 * 2 * 2);
  EXPECT_EQ(in_process->kv_cache_tokens, plain->kv_cache_tokens);
  EXPECT_EQ(connector(server->gpus[0]),
            512ull * 1024 * 1024 + 256ull * 36 * 8 * 128 * 2 * 2 + server->kv_cache_tokens * 8);
  EXPECT_TRUE(server->fits);
  EXPECT_LT(server->margin_bytes, plain->margin_bytes);
  // At 0.97 of a 4090 the server's 0.5 GiB no longer fits beside the budget.
  auto high = PlanVllm(qwen, Gpu("rtx4090"),
                       settings({"--kv-transfer-config", mp, "--gpu-memory-utilization", "0.97",
                                 "--enforce-eager"}));
  ASSERT_TRUE(high.ok());
  EXPECT_FALSE(high->fits);
  EXPECT_EQ(high->failure_stage, Stage::kKvCache);
  EXPECT_NE(high->failure_message.find("LMCacheMPConnector's GPU buffers"), std::string::npos);
  auto high_plain = PlanVllm(
      qwen, Gpu("rtx4090"), settings({"--gpu-memory-utilization", "0.97", "--enforce-eager"}));
  ASSERT_TRUE(high_plain.ok());
  EXPECT_TRUE(high_plain->fits);
}

// A KV connector (--kv-transfer-config) turns the hybrid KV cache manager off (vllm/config/
// vllm.py VllmConfig.__post_init__): sliding-window layers then cache the whole context; a
// linear-attention hybrid cannot be unified and vLLM refuses to start. From 0.13 the explicit
// --no-disable-hybrid-kv-cache-manager keeps the manager, and LMCacheConnectorV1 (no SupportsHMA)
// then refuses; before 0.13 the preference has no effect.
TEST(Vllm, KvConnectorTurnsTheHybridKvManagerOff) {
  auto has = [](const std::vector<std::string>& v, const std::string& text) {
    return std::any_of(v.begin(), v.end(),
                       [&](const std::string& n) { return n.find(text) != std::string::npos; });
  };
  auto settings = ServeSettings;
  const std::string lmcache = R"({"kv_connector": "LMCacheConnectorV1", "kv_role": "kv_both"})";
  const std::string nixl = R"({"kv_connector": "NixlConnector", "kv_role": "kv_both"})";
  const Inventory oss = Catalog("gpt-oss-20b");
  auto plain = PlanVllm(oss, Gpu("h100"), settings({"--max-model-len", "65536"}));
  auto with = PlanVllm(
      oss, Gpu("h100"), settings({"--max-model-len", "65536", "--kv-transfer-config", lmcache}));
  ASSERT_TRUE(plain.ok() && with.ok());
  EXPECT_TRUE(with->fits);
  EXPECT_LT(static_cast<double>(with->kv_cache_tokens),
            0.6 * static_cast<double>(plain->kv_cache_tokens));
  EXPECT_TRUE(has(with->notes, "turns the hybrid KV cache manager off"));
  // The preference keeps it from 0.13 (a connector that may support it: planned, and named).
  auto kept = PlanVllm(oss, Gpu("h100"),
                       settings({"--max-model-len", "65536", "--kv-transfer-config", nixl,
                                 "--no-disable-hybrid-kv-cache-manager"}));
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->kv_cache_tokens, plain->kv_cache_tokens);
  EXPECT_TRUE(has(kept->notes, "SupportsHMA"));
  // The last of the two forms wins, as argparse's BooleanOptionalAction has it.
  VllmSettings last = settings({"--no-disable-hybrid-kv-cache-manager",
                                "--disable-hybrid-kv-cache-manager"});
  EXPECT_TRUE(last.disable_hybrid_kv_cache_manager);
  EXPECT_FALSE(last.keep_hybrid_kv_cache_manager);
  // LMCacheConnectorV1 does not subclass SupportsHMA: vLLM refuses the preference.
  auto refused = PlanVllm(oss, Gpu("h100"),
                          settings({"--kv-transfer-config", lmcache,
                                    "--no-disable-hybrid-kv-cache-manager"}));
  ASSERT_TRUE(refused.ok());
  EXPECT_FALSE(refused->fits);
  EXPECT_EQ(refused->failure_stage, Stage::kStartup);
  EXPECT_NE(refused->failure_message.find("does not support HMA"), std::string::npos);
  // Before 0.13 the preference has no effect against a connector.
  VllmSettings old = settings({"--max-model-len", "65536", "--kv-transfer-config", nixl,
                               "--no-disable-hybrid-kv-cache-manager"});
  old.version = "0.12";
  auto v012 = PlanVllm(oss, Gpu("h100"), old);
  ASSERT_TRUE(v012.ok());
  EXPECT_TRUE(has(v012->without_effect, "counts from 0.13"));
  EXPECT_TRUE(has(v012->notes, "turns the hybrid KV cache manager off"));
  // Linear-attention layers cannot be unified: vLLM stops at start-up.
  VllmSettings next_s = settings({"--kv-transfer-config", lmcache});
  next_s.tensor_parallel_size = 4;
  auto next = PlanVllm(Catalog("qwen3-next-80b-a3b-instruct"), Gpu("h100"), next_s);
  ASSERT_TRUE(next.ok());
  EXPECT_FALSE(next->fits);
  EXPECT_EQ(next->failure_stage, Stage::kStartup);
  EXPECT_NE(next->failure_message.find("one unified type"), std::string::npos);
  EXPECT_NE(next->refusal.find("drop --kv-transfer-config"), std::string::npos);
  // One layer type: nothing changes.
  auto dense = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"),
                        settings({"--max-model-len", "32768", "--kv-transfer-config", lmcache}));
  auto dense_plain = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"),
                              settings({"--max-model-len", "32768"}));
  ASSERT_TRUE(dense.ok() && dense_plain.ok());
  EXPECT_EQ(dense->kv_cache_tokens, dense_plain->kv_cache_tokens);
  // Hostile values: not a JSON object, a connector that is not a name.
  for (const char* bad : {"nope", R"({"kv_connector": 3})", "[1]"}) {
    auto cmd = vllm::ReadServeCommand({"vllm", "serve", "x", "--kv-transfer-config", bad});
    ASSERT_TRUE(cmd.ok());
    EXPECT_FALSE(vllm::ReadFlags(cmd->flags, ToVllmSettings(cmd->settings)).ok()) << bad;
  }
}

// A model instance over more than one 8-GPU host: custom all-reduce stays off across hosts and
// NCCL's network buffers are not modelled, which the plan says; within one host it does not.
TEST(Vllm, AnInstanceOverMoreThanOneHostSaysItsNetworkBuffersAreNotModelled) {
  auto spans = [](const VllmPlan& p) {
    return std::any_of(p.notes.begin(), p.notes.end(), [](const std::string& n) {
      return n.find("span more than one 8-GPU host") != std::string::npos;
    });
  };
  VllmSettings s;
  s.max_model_len = 4096;
  s.tensor_parallel_size = 8;
  auto one_host = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), s);
  ASSERT_TRUE(one_host.ok());
  EXPECT_FALSE(spans(*one_host));
  s.pipeline_parallel_size = 2;
  auto two_hosts = PlanVllm(Catalog("qwen3-8b"), Gpu("h100"), s);
  ASSERT_TRUE(two_hosts.ok());
  EXPECT_TRUE(spans(*two_hosts));
}

// --skip-mm-profiling: the encoder's profile leaves the budget, so the KV cache takes it; the
// first request with as many images needs it beside the pool, which a 24 GB card at 0.92 cannot
// hold (a runtime failure, with the flag dropped or a lower utilization as what fits) and an
// 80 GB card at 0.8 can. A text-only model has no encoder profile: nothing changes.
TEST(Vllm, SkipMmProfilingMovesTheEncoderPeakToTheFirstRequest) {
  auto plan = [](const char* gpu, double util, bool skip) {
    VllmSettings s;
    s.max_model_len = 32768;
    s.gpu_memory_utilization = util;
    s.skip_mm_profiling = skip;
    return PlanVllm(Catalog("qwen2.5-vl-7b-instruct"), Gpu(gpu), s);
  };
  auto profiled = plan("rtx-4090", 0.92, false);
  auto skipped = plan("rtx-4090", 0.92, true);
  ASSERT_TRUE(profiled.ok() && skipped.ok());
  EXPECT_TRUE(profiled->fits);
  EXPECT_GT(skipped->gpus[0].kv_cache_bytes, profiled->gpus[0].kv_cache_bytes + (1ull << 30));
  EXPECT_FALSE(skipped->fits);
  ASSERT_TRUE(skipped->failure_stage.has_value());
  EXPECT_EQ(*skipped->failure_stage, Stage::kRuntime);
  EXPECT_NE(skipped->failure_message.find("multimodal encoder at the first request"),
            std::string::npos);
  auto roomy = plan("h100", 0.8, true);
  ASSERT_TRUE(roomy.ok());
  EXPECT_TRUE(roomy->fits);
  VllmSettings text;
  text.max_model_len = 8192;
  text.skip_mm_profiling = true;
  auto plain = PlanVllm(Catalog("qwen3-8b"), Gpu("rtx-4090"), text);
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->fits);
  EXPECT_TRUE(std::any_of(plain->notes.begin(), plain->notes.end(), [](const std::string& n) {
    return n.find("--skip-mm-profiling: no multimodal encoder is profiled") != std::string::npos;
  }));
  // Read from a command line, and written back in the printed one.
  auto cmd = vllm::ReadServeCommand({"vllm", "serve", "Qwen/Qwen2.5-VL-7B-Instruct",
                                     "--skip-mm-profiling", "--max-model-len", "32768"});
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  EXPECT_TRUE(cmd->unmodelled_flags.empty());
}

// Prefetch weight offloading (v0.17+): of every --offload-group-size decoder layers the last
// --offload-num-in-group live in CPU memory, and one set of GPU buffers per layer kind holds the
// --offload-prefetch-step layers in flight. Qwen3-32B's 64 identical layers at group 4, two in
// the group: 32 layers moved, one layer's buffers back.
TEST(Vllm, PrefetchOffloadingMovesTheGroupsLastLayersToTheHost) {
  auto plan = [](int64_t group, int64_t in_group, int64_t step, const char* version) {
    VllmSettings s;
    s.max_model_len = 8192;
    s.version = version;
    s.offload_group_size = group;
    s.offload_num_in_group = in_group;
    s.offload_prefetch_step = step;
    return PlanVllm(Catalog("qwen3-32b"), Gpu("h100"), s);
  };
  auto none = plan(0, 1, 1, "0.22");
  auto half = plan(4, 2, 1, "0.22");
  auto two_ahead = plan(4, 2, 2, "0.22");
  ASSERT_TRUE(none.ok() && half.ok() && two_ahead.ok());
  const double full = static_cast<double>(none->gpus[0].weights_bytes);
  const double layer = full / 64;  // about: the embedding and lm_head are outside the layers
  EXPECT_NEAR(static_cast<double>(none->gpus[0].weights_bytes - half->gpus[0].weights_bytes),
              31 * layer, 0.05 * layer * 31);
  EXPECT_NEAR(static_cast<double>(two_ahead->gpus[0].weights_bytes -
                                  half->gpus[0].weights_bytes),
              layer, 0.1 * layer);
  // vLLM's own checks (OffloadConfig.validate_offload_config), and the release it came with.
  auto too_many = plan(2, 3, 1, "0.22");
  ASSERT_TRUE(too_many.ok());
  EXPECT_FALSE(too_many->fits);
  EXPECT_EQ(too_many->failure_message,
            "ValueError: offload_num_in_group (3) must be <= offload_group_size (2)");
  auto no_step = plan(4, 1, 0, "0.22");
  ASSERT_TRUE(no_step.ok());
  EXPECT_NE(no_step->failure_message.find("offload_prefetch_step (0) must be >= 1"),
            std::string::npos);
  auto old = plan(4, 1, 1, "0.16");
  ASSERT_TRUE(old.ok());
  EXPECT_FALSE(old->fits);
  EXPECT_NE(old->failure_message.find("unrecognized arguments: --offload-group-size"),
            std::string::npos);
  // --offload-params: which bytes it names is not known: planned without the offloading.
  VllmSettings named;
  named.max_model_len = 8192;
  named.offload_group_size = 4;
  named.offload_params = {"experts"};
  auto filtered = PlanVllm(Catalog("qwen3-32b"), Gpu("h100"), named);
  ASSERT_TRUE(filtered.ok());
  EXPECT_EQ(filtered->gpus[0].weights_bytes, none->gpus[0].weights_bytes);
  // Read from a command line (the auto backend picks prefetch and ignores --cpu-offload-gb),
  // and printed back.
  auto cmd = vllm::ReadServeCommand({"vllm", "serve", "Qwen/Qwen3-32B", "--offload-group-size",
                                     "4", "--offload-num-in-group", "2", "--cpu-offload-gb", "10",
                                     "--max-model-len", "8192"});
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  EXPECT_TRUE(cmd->unmodelled_flags.empty());
  auto read = vllm::ReadFlags(cmd->flags, ToVllmSettings(cmd->settings));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  auto both = PlanVllm(Catalog("qwen3-32b"), Gpu("h100"), *read);
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->gpus[0].weights_bytes, half->gpus[0].weights_bytes);
  EXPECT_NE(both->command.find("--offload-group-size 4 --offload-num-in-group 2"),
            std::string::npos);
  // A 16-bit 32B on one 24 GB card fails at load; prefetch offloading is among what fits.
  VllmSettings small;
  small.max_model_len = 8192;
  auto fails = PlanVllm(Catalog("qwen3-32b"), Gpu("rtx-4090"), small);
  ASSERT_TRUE(fails.ok());
  ASSERT_FALSE(fails->fits);
  EXPECT_EQ(*fails->failure_stage, Stage::kLoad);
}

}  // namespace
}  // namespace vramfit
