// The log readers: each engine's lines become events with their numbers; hostile input stays
// bounded and never crashes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sstream>
#include <utility>
#include <vector>

#include "doctor/load_copies.h"
#include "doctor/log_feed.h"
#include "testutil/repeat_stream.h"
#include "vramfit/doctor.h"

namespace vramfit {
namespace {

LogScan Scan(const std::string& text, ScanOptions o = {}) {
  std::istringstream in(text);
  auto s = ScanLog(in, o);
  EXPECT_TRUE(s.ok());
  return *s;
}

const LogEvent* Find(const LogScan& s, EventKind kind) {
  for (const LogEvent& e : s.events) {
    if (e.kind == kind) return &e;
  }
  return nullptr;
}

// The frames read, in order ("function (file)").
std::vector<std::string> Frames(const LogScan& s) {
  std::vector<std::string> frames;
  for (const LogEvent& e : s.events) {
    if (e.kind == EventKind::kFrame) frames.push_back(e.text);
  }
  return frames;
}

TEST(LogScan, VllmLinesAcrossReleases) {
  const LogScan s = Scan(
      "(VllmWorker rank=1 pid=7) INFO 07-09 09:47:45 [gpu_worker.py:233] Available KV cache "
      "memory: -2.14 GiB\r\n"
      "INFO 07-09 [kv_cache_utils.py:716] GPU KV cache size: 807,792 tokens\n"
      "INFO [kv_cache_utils.py:720] Maximum concurrency for 1,024 tokens per request: 788.86x\n"
      "INFO worker.py:267] model weights take 5.20GiB; non_torch_memory takes 0.03GiB; PyTorch "
      "activation peak memory "
      "takes 1.42GiB; the rest of the memory reserved for KV Cache is -1.05GiB.\n"
      "ValueError: To serve at least one request with the models's max seq len (262144), (62.00 "
      "GiB KV cache is "
      "needed, which is larger than the available KV cache memory (48.66 GiB). Based on the "
      "available memory, the "
      "estimated maximum model length is 205728. Try increasing\n"
      "ValueError: Free memory on device (21.5/23.5 GiB) on startup is less than desired GPU "
      "memory utilization (0.95, "
      "22.33 GiB). Decrease GPU memory utilization or reduce GPU memory used by other "
      "processes.\n");
  const LogEvent* kv = Find(s, EventKind::kKvAvailable);
  ASSERT_NE(kv, nullptr);
  EXPECT_DOUBLE_EQ(kv->values.at(Num::kKvCacheBytes), -2.14 * 1073741824.0);
  EXPECT_EQ(kv->rank, "rank1");
  EXPECT_EQ(kv->line, 1u);  // CRLF is one line end
  EXPECT_DOUBLE_EQ(Find(s, EventKind::kKvTokens)->values.at(Num::kKvCacheTokens), 807792);
  EXPECT_DOUBLE_EQ(Find(s, EventKind::kMaxConcurrency)->values.at(Num::kMaxModelLen), 1024);
  EXPECT_DOUBLE_EQ(Find(s, EventKind::kMaxConcurrency)->values.at(Num::kMaxConcurrency), 788.86);
  const LogEvent* p = Find(s, EventKind::kProfileBreakdown);
  ASSERT_NE(p, nullptr);
  EXPECT_DOUBLE_EQ(p->values.at(Num::kActivationPeakBytes), 1.42 * 1073741824.0);
  EXPECT_DOUBLE_EQ(p->values.at(Num::kKvCacheBytes), -1.05 * 1073741824.0);
  const LogEvent* m = Find(s, EventKind::kMaxLenError);
  ASSERT_NE(m, nullptr);
  EXPECT_DOUBLE_EQ(m->values.at(Num::kMaxModelLen), 262144);
  EXPECT_DOUBLE_EQ(m->values.at(Num::kKvNeededBytes), 62.0 * 1073741824.0);
  EXPECT_DOUBLE_EQ(m->values.at(Num::kKvCacheBytes), 48.66 * 1073741824.0);
  EXPECT_DOUBLE_EQ(m->values.at(Num::kEstimatedMaxModelLen), 205728);
  const LogEvent* st = Find(s, EventKind::kStartupError);
  ASSERT_NE(st, nullptr);
  EXPECT_DOUBLE_EQ(st->values.at(Num::kFreeBytes), 21.5 * 1073741824.0);
  EXPECT_DOUBLE_EQ(st->values.at(Num::kTotalBytes), 23.5 * 1073741824.0);
  EXPECT_DOUBLE_EQ(st->values.at(Num::kGpuMemoryUtilization), 0.95);
  EXPECT_DOUBLE_EQ(st->values.at(Num::kBudgetBytes), 22.33 * 1073741824.0);
}

// PyTorch's message reflowed at spaces into lines of varying width (a paste, an e-mail): its
// pieces gathered into one message with the spaces put back, also where two pieces share a
// width and look like a terminal's cut ("capacity" / "of", "Process 156640" / "has"), and a
// terminal's cut inside a word ("alloc" / "ated") still joined without one.
TEST(LogScan, ReflowedPyTorchMessageIsReadWhole) {
  const std::string lines[] = {
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.66 GiB. GPU 0 has a total "
      "capacity",
      "of 79.25 GiB of which 1.57 GiB is free. Process 127117 has 16.98 GiB memory in use. Process "
      "156640",
      "has 59.89 GiB memory in use. Process 158007 has 816.00 MiB memory in use. Of the allocated",
      "memory 15.68 GiB is allocated by PyTorch, and 1.04 GiB is reserved by PyTorch but",
      "unallocated. If reserved but unallocated memory is large try setting",
      "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation "
      "for Memory Management",
      "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
      "Traceback (most recent call last):"};
  std::string text;
  for (const std::string& l : lines) text += l + "\n";
  const LogScan s = Scan(text);
  const LogEvent* oom = nullptr;
  for (const LogEvent& e : s.events) {
    if (e.kind == EventKind::kTorchOom && oom == nullptr) oom = &e;
  }
  ASSERT_NE(oom, nullptr);
  EXPECT_DOUBLE_EQ(oom->values.at(Num::kTotalBytes), 79.25 * 1073741824.0);
  EXPECT_DOUBLE_EQ(oom->values.at(Num::kListedProcesses), 3);
  EXPECT_NEAR(oom->values.at(Num::kListedProcessBytes) / 1073741824.0, 16.98 + 59.89 + 0.796875,
              1e-6);
  EXPECT_NEAR(oom->values.at(Num::kReservedUnallocatedBytes) / 1073741824.0, 1.04, 1e-9);
  const Diagnosis d = Diagnose(s);
  EXPECT_EQ(d.cause, "other_process");
  // A line of prose after an unfinished message is not taken into it.
  const LogScan prose = Scan(
      "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total "
      "capacity; 5.12 GiB already allocated; 13.81 MiB free\n"
      "I tried restarting the kernel but it did not help\n");
  EXPECT_EQ(prose.lines, 2u);
  int ooms = 0;
  for (const LogEvent& e : prose.events) {
    if (e.kind != EventKind::kTorchOom) continue;
    ++ooms;
    EXPECT_EQ(e.line, 1u);
    EXPECT_DOUBLE_EQ(e.values.at(Num::kAllocatedBytes), 5.12 * 1073741824.0);
  }
  EXPECT_EQ(ooms, 1);
}

TEST(LogScan, PyTorchMessagesOldAndNew) {
  const LogScan s = Scan(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 960.00 MiB. GPU 0 has a total "
      "capacity of 79.14 "
      "GiB of which 712.75 MiB is free. Process 854401 has 78.43 GiB memory in use. Of the "
      "allocated memory 74.40 GiB "
      "is allocated by PyTorch, and 2.22 GiB is reserved by PyTorch but unallocated. If reserved "
      "but unallocated memory "
      "is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n"
      "CUDA out of memory. Tried to allocate 18.00 GiB (GPU 0; 23.69 GiB total capacity; 3.45 GiB "
      "already allocated; "
      "17.23 GiB free; 3.45 GiB reserved in total by PyTorch)\n");
  ASSERT_EQ(s.events.size(), 2u);
  const LogEvent& a = s.events[0];
  EXPECT_DOUBLE_EQ(a.values.at(Num::kRequestedBytes), 960.0 * 1048576.0);
  EXPECT_DOUBLE_EQ(a.values.at(Num::kTotalBytes), 79.14 * 1073741824.0);
  EXPECT_DOUBLE_EQ(a.values.at(Num::kFreeBytes), 712.75 * 1048576.0);
  EXPECT_DOUBLE_EQ(a.values.at(Num::kAllocatedBytes), 74.40 * 1073741824.0);
  EXPECT_DOUBLE_EQ(a.values.at(Num::kReservedUnallocatedBytes), 2.22 * 1073741824.0);
  EXPECT_DOUBLE_EQ(a.values.at(Num::kListedProcessBytes), 78.43 * 1073741824.0);
  const LogEvent& b = s.events[1];
  EXPECT_DOUBLE_EQ(b.values.at(Num::kRequestedBytes), 18.0 * 1073741824.0);
  EXPECT_DOUBLE_EQ(b.values.at(Num::kTotalBytes), 23.69 * 1073741824.0);
  EXPECT_DOUBLE_EQ(b.values.at(Num::kAllocatedBytes), 3.45 * 1073741824.0);
  EXPECT_DOUBLE_EQ(b.values.at(Num::kFreeBytes), 17.23 * 1073741824.0);
  EXPECT_DOUBLE_EQ(b.values.at(Num::kReservedUnallocatedBytes), 0);
}

TEST(LogScan, SglangLlamaCppNvidiaSmiAndFrames) {
  const LogScan s = Scan(
      "[2025-03-29 18:18:34 TP0] Load weight end. type=Gemma3, dtype=torch.bfloat16, avail "
      "mem=3.64 GB, mem usage=18.82 GB.\n"
      "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9866.00 MiB on device 1: cudaMalloc "
      "failed: out of memory\n"
      "llama_kv_cache_update_impl: failed to allocate compute buffers\n"
      "|   0  NVIDIA A100 80GB...  On | 00000000:3B:00.0 Off | 0 | 23458MiB / 24564MiB | 98% "
      "Default |\n"
      "  File \"/usr/lib/python3/site-packages/vllm/v1/worker/gpu_model_runner.py\", line 3086, in "
      "capture_model\n");
  const LogEvent* w = Find(s, EventKind::kSglangWeights);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->rank, "TP0");
  EXPECT_DOUBLE_EQ(w->values.at(Num::kFreeBytes), 3.64 * 1073741824.0);
  EXPECT_DOUBLE_EQ(Find(s, EventKind::kGgmlAllocFail)->values.at(Num::kRequestedBytes),
                   9866.0 * 1048576.0);
  EXPECT_DOUBLE_EQ(Find(s, EventKind::kGgmlComputeFail)->values.at(Num::kDuringDecode), 1);
  EXPECT_DOUBLE_EQ(Find(s, EventKind::kSmiGpu)->values.at(Num::kUsedBytes), 23458.0 * 1048576.0);
  EXPECT_EQ(Find(s, EventKind::kFrame)->text, "capture_model (gpu_model_runner.py)");
}

TEST(LogScan, OldIpythonAndWindowsFrames) {
  // IPython 7's frame headers (plain and as Colab's links) and its short arrows; a Windows path.
  const LogScan s = Scan(
      "/usr/lib/python3.9/site-packages/transformers/generation/utils.py in generate(self, "
      "inputs)\n"
      "[/usr/lib/python3.10/site-packages/transformers/models/llama/modeling_llama.py]"
      "(https://localhost:8080/#) in forward(self, hidden_states)\n"
      "    350         # upcast attention to fp32\n"
      "--> 351         attn_weights = nn.functional.softmax(attn_weights, dim=-1)\n"
      "  File \"C:\\Users\\u\\site-packages\\awq\\quantize\\quantizer.py\", line 571, in "
      "_get_input_feat\n"
      "See model.py in forward(x) for the details\n");
  std::vector<std::string> frames = Frames(s);
  ASSERT_EQ(frames.size(), 4u);
  EXPECT_EQ(frames[0], "generate (utils.py)");
  EXPECT_EQ(frames[1], "forward (modeling_llama.py)");
  EXPECT_EQ(frames[2], "attn_weights (eager attention)");
  EXPECT_EQ(frames[3], "_get_input_feat (quantizer.py)");
  EXPECT_EQ(s.events.back().values.at(Num::kPathIsQuantizer), 2);
}

TEST(LogScan, LoadMilestonesOfTextgenAndTransformers) {
  auto kinds = [](const std::string& text) {
    std::vector<EventKind> out;
    for (const LogEvent& e : Scan(text).events) out.push_back(e.kind);
    return out;
  };
  using K = std::vector<EventKind>;
  // The model's name comes with the load's beginning, as a config event.
  const K load = {EventKind::kLoadBegin, EventKind::kConfig};
  EXPECT_EQ(kinds("INFO:Loading vicuna-13b-GPTQ-4bit-128g...\n"), load);
  EXPECT_EQ(kinds("12:00:01-123456 INFO     Loading \"Qwen2.5-7B-Instruct\"\n"), load);
  EXPECT_EQ(Find(Scan("INFO:Loading vicuna-13b-GPTQ-4bit-128g...\n"), EventKind::kConfig)->text,
            "vicuna-13b-GPTQ-4bit-128g");
  EXPECT_EQ(Find(Scan("INFO     Loading \"Qwen2.5-7B-Instruct\"\n"), EventKind::kConfig)->text,
            "Qwen2.5-7B-Instruct");
  EXPECT_EQ(kinds("INFO     Loaded \"Qwen2.5-7B-Instruct\" in 12.34 seconds.\n"),
            K{EventKind::kWeightsLoaded});
  // Its other "Loading" lines name no model.
  EXPECT_EQ(kinds("2023-07-31 14:51:25 INFO:Loading the extension \"gallery\"...\n"), K{});
  EXPECT_EQ(kinds("INFO:Loading settings from settings.yaml...\n"), K{});
  EXPECT_EQ(kinds("Loading dataset...\n"), K{});
  EXPECT_EQ(kinds("Loading checkpoint shards:  50%|#####     | 1/2 [00:03<00:03]\n"),
            K{EventKind::kLoadBegin});
  EXPECT_EQ(kinds("Loading checkpoint shards: 100%|##########| 2/2 [00:06<00:00]\n"),
            K{EventKind::kWeightsLoaded});
  EXPECT_EQ(kinds("Setting `pad_token_id` to `eos_token_id`:2 for open-end generation.\n"),
            K{EventKind::kServing});
}

// vLLM's and SGLang's shard bar begins the load; at 100% its event says every file was read.
TEST(LogScan, ShardBarAtWholeSaysShardsRead) {
  auto read = [](const std::string& text) {
    const LogScan scan = Scan(text);
    const LogEvent* e = Find(scan, EventKind::kLoadBegin);
    return e && doctor::ShardsRead(*e);
  };
  EXPECT_FALSE(read("Loading safetensors checkpoint shards:  50% Completed | 2/4 [00:04<00:04]\n"));
  EXPECT_TRUE(read("Loading safetensors checkpoint shards: 100% Completed | 4/4 [00:08<00:00]\n"));
  EXPECT_TRUE(read("Loading pt checkpoint shards: 100%|##########| 2/2 [00:06<00:00]\n"));
}

// The layer a quantizer's progress line names (1-based as printed), 0 for other lines.
TEST(LogScan, QuantizerProgressNamesItsLayer) {
  auto layer = [](const std::string& text) {
    const LogScan scan = Scan(text);
    const LogEvent* e = Find(scan, EventKind::kLoadBegin);
    return e ? doctor::QuantizerLayer(*e) : -1;
  };
  EXPECT_EQ(layer("INFO - Start quantizing layer 3/32\n"), 3);
  EXPECT_EQ(layer("INFO - Quantizing mlp.down_proj in layer 12/32...\n"), 12);
  EXPECT_EQ(layer("INFO  Quantizing layer 5 of 31\n"), 5);
  EXPECT_EQ(layer("(7/41): Calibrating: 100%|##########| 512/512 [00:31<00:00]\n"), 7);
  // optimum's bar counts the blocks done: the one running is the next.
  EXPECT_EQ(layer("Quantizing model.layers blocks : 0%|          | 0/32\n"), 1);
  EXPECT_EQ(layer("Quantizing model.layers blocks :  34%|###4      | 11/32 [03:02<05:48]\n"), 12);
  EXPECT_EQ(layer("2024-02-20 09:41:17,442 - optimum.gptq.quantizer - INFO - Start quantizing "
                  "block model.layers 14/32\n"),
            14);
  EXPECT_EQ(layer("INFO - Quantizing self_attn.k_proj in block 9/40...\n"), 9);
}

// MLX's allocator failures (Metal's per-buffer cap, its resource limit, the allocator's own
// "[malloc] Unable to allocate") read as out-of-memory events with the request, whatever program
// prints them; NumPy's host "Unable to allocate ... for an array" stays a host buffer.
TEST(LogScan, MlxAllocatorFailures) {
  const LogScan metal = Scan(
      "ERROR:root:generation failed: [metal::malloc] Attempting to allocate 21474836480 bytes "
      "which is greater than the maximum allowed buffer size of 17179869184 bytes.\n");
  ASSERT_NE(Find(metal, EventKind::kCudaOom), nullptr);
  EXPECT_DOUBLE_EQ(Find(metal, EventKind::kCudaOom)->values.at(Num::kRequestedBytes),
                   21474836480.0);
  const LogScan host = Scan("RuntimeError: [malloc] Unable to allocate 4294967296 bytes.\n");
  ASSERT_NE(Find(host, EventKind::kCudaOom), nullptr);
  EXPECT_DOUBLE_EQ(Find(host, EventKind::kCudaOom)->values.at(Num::kRequestedBytes),
                   4294967296.0);
  const LogScan limit = Scan("libc++abi: terminating due to uncaught exception of type "
                             "std::runtime_error: [metal::malloc] Resource limit (499000) "
                             "exceeded.\n");
  ASSERT_NE(Find(limit, EventKind::kCudaOom), nullptr);
  EXPECT_EQ(Find(limit, EventKind::kCudaOom)->values.count(Num::kRequestedBytes), 0u);
  const LogScan numpy = Scan(
      "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 62.6 GiB for an array with "
      "shape (131072, 128256) and data type float32\n");
  EXPECT_EQ(Find(numpy, EventKind::kCudaOom), nullptr);
  EXPECT_NE(Find(numpy, EventKind::kHostBufferFail), nullptr);
}

// The lines only a multimodal encoder runs tag the multimodal hint "encoder"; a language
// model's layer loop, a word with "ocr" inside it, and a general multimodal line do not.
TEST(LogScan, EncoderFramesTagTheHint) {
  const auto hint = [](const char* text) -> std::string {
    const LogScan scan = Scan(text);
    const LogEvent* e = Find(scan, EventKind::kMmHint);
    return !e ? "none" : e->text == "encoder" ? "hint:encoder" : "hint";
  };
  EXPECT_EQ(hint("    hidden_states = blk(hidden_states, cu_seqlens=cu_seqlens)\n"),
            "hint:encoder");
  EXPECT_EQ(hint("    image_embeds = self.visual(pixel_values, grid_thw=grid_thw)\n"),
            "hint:encoder");
  EXPECT_EQ(hint("  File \"/x/vllm/v1/worker/gpu_model_runner.py\", line 1004, in "
                 "_execute_mm_encoder\n"),
            "hint:encoder");
  EXPECT_EQ(hint("    embedding_per_req = data_embedding_func(embedding_items_per_req)\n"),
            "hint:encoder");
  EXPECT_EQ(hint("    hidden_states = layer(hidden_states, attention_mask)\n"), "none");
  EXPECT_EQ(hint("Encoder cache will be initialized with a budget of 16384 tokens\n"), "hint");
  EXPECT_EQ(hint("  File \"/srv/olmocr/pipeline.py\", line 88, in process_page\n"), "hint");
  EXPECT_EQ(hint("  File \"/srv/democracy/app.py\", line 88, in main\n"), "none");
}

// A launch line a reflow parted between a flag and its value is read whole; a switch at a
// line's end leaves the record after it alone.
TEST(LogScan, LaunchLineReflowedBetweenFlagAndValue) {
  const LogScan s = Scan(
      "vllm serve Qwen/Qwen3-32B --tensor-parallel-size 2 --max-model-len\n"
      "32768 --gpu-memory-utilization 0.9\n");
  const LogEvent* e = Find(s, EventKind::kConfig);
  ASSERT_NE(e, nullptr);
  EXPECT_DOUBLE_EQ(e->values.at(Num::kMaxModelLen), 32768);
  EXPECT_DOUBLE_EQ(e->values.at(Num::kTensorParallelSize), 2);
  const LogScan sw = Scan(
      "vllm serve Qwen/Qwen3-32B --max-model-len 8192 --enforce-eager\n"
      "INFO 05-01 10:00:00 [gpu_model_runner.py:1000] Model loading took 61.03 GiB and 20.1 "
      "seconds\n");
  const LogEvent* w = Find(sw, EventKind::kWeightsLoaded);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->line, 2u);
}

// Ollama's new runner logs its load request with the KV size (num_ctx x parallel slots): the
// context its fixes shrink.
TEST(LogScan, OllamaLoadRequestKvSize) {
  const LogScan s = Scan(
      "time=2026-01-12T08:01:44.112Z level=INFO source=runner.go:1288 msg=load "
      "request=\"{Operation:commit LoraPath:[] Parallel:2 BatchSize:512 FlashAttention:Enabled "
      "KvSize:65536 KvCacheType:q8_0 NumThreads:8 GPULayers:49[ID:GPU-1 Layers:49(0..48)]}\"\n");
  const LogEvent* e = Find(s, EventKind::kOllamaMarker);
  ASSERT_NE(e, nullptr);
  EXPECT_DOUBLE_EQ(e->values.at(Num::kMaxModelLen), 65536);
}

// The ranks of worker prefixes across releases: "(VllmWorker rank=1 ..)", "[rank0]:", SGLang's
// "TP3]", vLLM's "(Worker_TP1 ..)" and, with pipeline parallelism, "(Worker_PP0_TP1 ..)".
TEST(LogScan, WorkerPrefixesGiveTheirRanks) {
  const LogScan s = Scan(
      "(Worker_PP0_TP1 pid=312) INFO 11-25 08:04:10 [gpu_worker.py:391] Available KV cache "
      "memory: 30.71 GiB\n"
      "(Worker_TP0 pid=311) INFO 11-25 08:04:12 [kv_cache_utils.py:1244] GPU KV cache size: "
      "1,341,040 tokens\n");
  EXPECT_EQ(Find(s, EventKind::kKvAvailable)->rank, "TP1");
  EXPECT_EQ(Find(s, EventKind::kKvTokens)->rank, "TP0");
  // A launcher's "[rank0]: " before the engine's own label: the engine's rank is read.
  const LogScan t = Scan(
      "[rank0]: (Worker_TP3_EP3 pid=35672) INFO 09-25 10:53:35 [gpu_worker.py:391] Available "
      "KV cache memory: 30.71 GiB\n");
  EXPECT_EQ(Find(t, EventKind::kKvAvailable)->rank, "TP3");
}

// Lines of the readers' newer families: LM Studio's estimate, ggml-vulkan's and ggml-metal's
// failed allocations, Ollama's layout search, SGLang's balance check and capture failure.
TEST(LogScan, EstimateBackendAndLayoutLines) {
  const LogScan s = Scan(
      "estimatedContextVramUsageBytes: 13.18 GiB\n"
      "  \"estimatedModelVramUsageBytes\": 18232520704,\n"
      "canLoad: true\n"
      "ggml_vulkan: Device memory allocation of size 1059303232 failed.\n"
      "ggml_metal_buffer_init: error: failed to allocate buffer, size = 7.33 MiB\n"
      "time=2025-10-01T10:00:02.000Z level=INFO source=sched.go:470 msg=\"Load failed\" "
      "error=\"memory layout cannot be allocated with num_gpu = 48\"\n"
      "[2025-08-11 12:00:05 TP1] ValueError: The memory capacity is unbalanced. Some GPUs may be "
      "occupied by other processes.\n"
      "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 1.02 GiB.\n");
  const LogEvent* est = Find(s, EventKind::kLoadEstimate);
  ASSERT_NE(est, nullptr);
  EXPECT_EQ(est->engine, "lm-studio");
  EXPECT_DOUBLE_EQ(est->values.at(Num::kKvCacheBytes), 13.18 * 1073741824.0);
  const LogEvent* model = nullptr;
  for (const LogEvent& e : s.events) {
    if (e.kind == EventKind::kLoadEstimate && e.values.count(Num::kWeightsBytes)) model = &e;
  }
  ASSERT_NE(model, nullptr);
  EXPECT_DOUBLE_EQ(model->values.at(Num::kWeightsBytes), 18232520704.0);
  int fits = 0, allocs = 0;
  for (const LogEvent& e : s.events) {
    if (e.kind == EventKind::kLoadEstimate && e.values.count(Num::kEstimateFits)) {
      fits += static_cast<int>(e.values.at(Num::kEstimateFits));
    }
    if (e.kind == EventKind::kGgmlAllocFail) ++allocs;
  }
  EXPECT_EQ(fits, 1);
  EXPECT_EQ(allocs, 2);
  EXPECT_DOUBLE_EQ(Find(s, EventKind::kGgmlAllocFail)->values.at(Num::kRequestedBytes),
                   1059303232.0);
  const LogEvent* layout = Find(s, EventKind::kGgmlLoadFail);
  ASSERT_NE(layout, nullptr);
  EXPECT_EQ(layout->engine, "ollama");
  EXPECT_DOUBLE_EQ(layout->values.at(Num::kOffloadLayers), 48);
  EXPECT_EQ(Find(s, EventKind::kStartupError)->engine, "sglang");
  EXPECT_EQ(Find(s, EventKind::kGraphBegin)->engine, "sglang");
}

TEST(LogScan, SglangServerArgumentsForTheRebuiltPlan) {
  // ServerArgs(...) as SGLang prints it: None is not a value, and "attn_tp_size" is not tp_size.
  const LogScan s = Scan(
      "[2025-11-24 09:12:03] server_args=ServerArgs(model_path='Qwen/Qwen3-8B', "
      "context_length=None, kv_cache_dtype='fp8_e5m2', mem_fraction_static=0.85, "
      "max_total_tokens=None, chunked_prefill_size=4096, attn_tp_size=8, tp_size=2, "
      "cuda_graph_max_bs=None)\n"
      "python -m sglang.launch_server --model-path m --tp 4 --context-length 32768 "
      "--kv-cache-dtype bf16 --cuda-graph-max-bs=16\n");
  std::vector<const LogEvent*> markers;
  for (const LogEvent& e : s.events) {
    if (e.kind == EventKind::kSglangMarker) markers.push_back(&e);
  }
  ASSERT_EQ(markers.size(), 2u);
  const auto& args = markers[0]->values;
  EXPECT_DOUBLE_EQ(args.at(Num::kMemFractionStatic), 0.85);
  EXPECT_DOUBLE_EQ(args.at(Num::kTensorParallelSize), 2);
  EXPECT_DOUBLE_EQ(args.at(Num::kChunkedPrefillSize), 4096);
  EXPECT_DOUBLE_EQ(args.at(Num::kKvCacheDtypeBits), 8);
  EXPECT_EQ(args.count(Num::kContextLength), 0u);
  EXPECT_EQ(args.count(Num::kMaxTotalTokens), 0u);
  EXPECT_EQ(args.count(Num::kCudaGraphMaxBs), 0u);
  const auto& line = markers[1]->values;
  EXPECT_DOUBLE_EQ(line.at(Num::kTensorParallelSize), 4);
  EXPECT_DOUBLE_EQ(line.at(Num::kContextLength), 32768);
  EXPECT_DOUBLE_EQ(line.at(Num::kCudaGraphMaxBs), 16);
  EXPECT_DOUBLE_EQ(line.at(Num::kKvCacheDtypeBits), 16);
}

TEST(LogScan, LongLinesAreCutAndBinaryIsSkipped) {
  ScanOptions o;
  o.max_line_bytes = 1024;
  std::string text = std::string(10 * 1024 * 1024, 'x') + " Tried to allocate 1.00 GiB\n";
  const char bin[] = "\0\1\2\3binary\0\0\0\0\0\0\0\0\0\0\0\n";
  text += std::string(bin, sizeof(bin) - 1);
  text += "last line without a newline";
  const LogScan s = Scan(text, o);
  EXPECT_EQ(s.lines, 3u);
  EXPECT_EQ(s.long_lines, 1u);
  EXPECT_EQ(s.binary_lines, 1u);
  EXPECT_TRUE(s.events.empty());  // the match was past the cut
  EXPECT_EQ(s.bytes, text.size());
}

using testing::RepeatBuf;

TEST(LogScan, AFloodOfMatchesStaysBounded) {
  const std::string unit = "INFO [gpu_worker.py:1] Available KV cache memory: 1.00 GiB\n";
  RepeatBuf buf(unit, 16ull << 20);  // 16 MiB, ~280,000 lines
  std::istream in(&buf);
  ScanOptions o;
  o.max_events = 1000;
  auto s = ScanLog(in, o);
  ASSERT_TRUE(s.ok());
  // The cap, then a bounded tail of the last failure-like events (512).
  EXPECT_EQ(s->events.size(), 1000u + 512u);
  EXPECT_GT(s->dropped_events, 100000u);
  EXPECT_EQ(s->bytes, 16ull << 20);
}

TEST(LogScan, RoutineLinesNeverEvictTheFailure) {
  // 50,000 serving-metrics lines, then the failure: the metrics keep their first occurrences
  // only, and the error is read and diagnosed under a small event cap.
  std::string log;
  for (int i = 0; i < 50000; ++i) {
    log +=
        "INFO 05-01 10:00:00 [loggers.py:123] Engine 000: Avg prompt throughput: 10.0 tokens/s, "
        "Avg generation throughput: 20.0 tokens/s, Running: 4 reqs\n";
  }
  log +=
      "ERROR 05-01 10:00:01 [core.py:700] torch.OutOfMemoryError: CUDA out of memory. Tried to "
      "allocate 2.00 GiB. GPU 0 has a total capacity of 79.14 GiB of which 1.00 GiB is free.\n";
  std::istringstream in(log);
  ScanOptions o;
  o.max_events = 100;
  auto s = ScanLog(in, o);
  ASSERT_TRUE(s.ok());
  EXPECT_LE(s->events.size(), 100u + 512u);
  bool oom = false;
  for (const LogEvent& e : s->events) oom = oom || e.kind == EventKind::kTorchOom;
  EXPECT_TRUE(oom);
  const Diagnosis d = Diagnose(*s);
  EXPECT_TRUE(d.found);
  EXPECT_EQ(d.stage, "runtime");
  // Under the default cap too, V1's metrics lines (behind the API server's prefix) stay a few
  // routine events each kind: none of their words ("generation") is kept once per line.
  std::string v1;
  for (int i = 0; i < 20000; ++i) {
    v1 +=
        "(APIServer pid=1) INFO 05-01 10:00:00 [loggers.py:123] Engine 000: Avg prompt "
        "throughput: 10.0 tokens/s, Avg generation throughput: 20.0 tokens/s, Running: 4 reqs\n";
  }
  std::istringstream again(v1);
  auto all = ScanLog(again);
  ASSERT_TRUE(all.ok());
  EXPECT_LE(all->events.size(), 100u);
}

TEST(LogScan, AMessageWrappedOverTwoLinesIsReadWhole) {
  std::istringstream in(
      "(EngineCore_DP0 pid=7) ERROR 01-02 03:04:05 [core.py:1] ValueError: To serve at least one "
      "request with the models's max seq len (1048576),\n"
      "(EngineCore_DP0 pid=7) ERROR 01-02 03:04:05 [core.py:1] (22.50 GiB KV cache is needed, "
      "which is larger than the available KV cache memory (17.39 GiB).\n");
  auto s = ScanLog(in);
  ASSERT_TRUE(s.ok());
  const Diagnosis d = Diagnose(*s);
  EXPECT_EQ(d.stage, "kv_cache");
  EXPECT_EQ(d.cause, "kv_too_long_context");
  EXPECT_DOUBLE_EQ(d.numbers.at("max_model_len"), 1048576);
  EXPECT_NEAR(d.numbers.at("kv_needed_bytes"), 22.5 * 1073741824.0, 1e6);
}

// vLLM's max-length message reflowed at 80 columns at spaces (an e-mail, a forum's editor): its
// first line is exactly 80 columns, a terminal's width, yet broken between two words ("of" +
// "tokens"). The message is gathered whole and its joints decided at its end, so the words stay
// apart and the figures are read.
TEST(LogScan, ALongMessageReflowedAtEightyKeepsTheSpaceAtAWordBreak) {
  const std::string log =
      " raise ValueError(\n"
      "ValueError: The model's max seq len (32768) is larger than the maximum number of\n"
      "tokens that can be stored in KV cache (7344). Try increasing\n"
      "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the\n"
      "engine.\n";
  ASSERT_EQ(log.find('\n', 19) - 19, 80u);  // the first message line is 80 columns
  const Diagnosis d = Diagnose(Scan(log));
  EXPECT_EQ(d.stage, "kv_cache");
  EXPECT_EQ(d.cause, "kv_too_long_context");
  EXPECT_DOUBLE_EQ(d.numbers.at("max_model_len"), 32768);
  EXPECT_DOUBLE_EQ(d.numbers.at("kv_cache_tokens"), 7344);
  // The same message cut short by the paste (no closing words): two pieces, the first of 80
  // columns; the joint is still between two of the message's words.
  const Diagnosis cut = Diagnose(Scan(
      "ValueError: The model's max seq len (32768) is larger than the maximum number of\n"
      "tokens that can be stored in KV cache (\n"));
  EXPECT_EQ(cut.stage, "kv_cache");
  EXPECT_EQ(cut.cause, "kv_too_long_context");
  // A terminal's cut inside a word of it is joined as cut ("increa" + "sing").
  const std::string whole =
      "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens "
      "that can be stored in KV cache (7344). Try increasing `gpu_memory_utilization` or "
      "decreasing `max_model_len` when initializing the engine.";
  std::string wrapped;
  for (size_t at = 0; at < whole.size(); at += 80) wrapped += whole.substr(at, 80) + "\n";
  const Diagnosis term = Diagnose(Scan(wrapped));
  EXPECT_EQ(term.cause, "kv_too_long_context");
  EXPECT_DOUBLE_EQ(term.numbers.at("kv_cache_tokens"), 7344);
}

// The one long line of an excerpt, cut by an 80-column terminal inside a word: the rest is
// joined back. An 80-column line followed by a record of its own (llama.cpp's "name: ...") is not.
TEST(LogScan, AnExcerptsOneLongLineWrappedAtEightyIsReadWhole) {
  const std::string error =
      "Error: llama runner process has terminated: error loading model: unable to allocate CUDA0 "
      "buffer";
  const std::string log = "$ ollama run deepseek-r1:671b\n" + error.substr(0, 80) + "\n" +
                          error.substr(80) + "\nllama_load_model_from_file: failed to load model\n";
  const Diagnosis d = Diagnose(Scan(log));
  EXPECT_EQ(d.stage, "load");
  EXPECT_EQ(d.cause, "weights_too_large");
  // At 100 columns too (a terminal's other usual widths: 120, 200): "...unable to allo" + "cate".
  const std::string longer =
      "Error: llama runner process (ollama 0.5.7 pid 4) has terminated: error loading model: "
      "unable to allocate CUDA0 buffer";
  const Diagnosis at100 = Diagnose(Scan("$ ollama run deepseek-r1:671b\n" + longer.substr(0, 100) +
                                        "\n" + longer.substr(100) + "\n"));
  const Diagnosis whole = Diagnose(Scan("$ ollama run deepseek-r1:671b\n" + longer + "\n"));
  EXPECT_EQ(at100.stage + "/" + at100.cause, whole.stage + "/" + whole.cause);
  EXPECT_NE(at100.stage_evidence.find("ggml_load_fail"), std::string::npos) << at100.stage_evidence;
  const std::string line80(80, 'x');
  const LogScan apart = Scan("A" + line80.substr(1) +
                             "\nllama_model_load: error loading model: unable to allocate CUDA0 "
                             "buffer\n");
  ASSERT_FALSE(apart.events.empty());
  for (const LogEvent& e : apart.events) EXPECT_EQ(e.line, 2u) << e.text;  // not joined to line 1
}

// A console or log viewer that lists the newest line first (timestamps only going backwards):
// read in time order, so the milestones before the error are the ones below it. A log in time
// order, or with one step back among steps forward, is left as it is.
TEST(LogScan, ANewestFirstLogIsReadInTimeOrder) {
  const std::string log =
      "2024-02-02 21:44:03.976\n"
      "Error initializing vLLM engine: CUDA out of memory. Tried to allocate 112.00 MiB. GPU 0 "
      "has a total capacity of 44.35 GiB of which 53.38 MiB is free.\n"
      "2024-02-02 21:43:49.554\n"
      "INFO 02-03 03:43:49 model_runner.py:625] Capturing the model for CUDA graphs. This may "
      "lead to unexpected consequences if the model is not static.\n"
      "2024-02-02 21:43:48.339\n"
      "INFO 02-03 03:43:48 llm_engine.py:316] # GPU blocks: 7754, # CPU blocks: 2048\n";
  const LogScan s = Scan(log);
  EXPECT_TRUE(s.newest_first);
  const Diagnosis d = Diagnose(s);
  EXPECT_EQ(d.stage, "cudagraph") << d.stage_evidence;
  EXPECT_NE(d.stage_evidence.find("line 3: INFO 02-03 03:43:49"), std::string::npos)
      << d.stage_evidence;
  bool noted = false;
  for (const std::string& n : d.notes) noted |= n.find("newest first") != std::string::npos;
  EXPECT_TRUE(noted);
  // The same lines oldest first: as they are.
  std::string forward;
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  for (size_t i = lines.size(); i >= 2; i -= 2) {
    forward += lines[i - 2] + "\n" + lines[i - 1] + "\n";
  }
  const LogScan f = Scan(forward);
  EXPECT_FALSE(f.newest_first);
  EXPECT_EQ(Diagnose(f).stage, "cudagraph");
  // Collected again by kubectl --timestamps, an empty line included ("TIME " and nothing
  // after it): the collector's stamps go, the log's own still run backwards.
  std::string stamped;
  for (const std::string& l : lines) stamped += "2026-12-05T01:02:03.123456789Z " + l + "\n";
  stamped += "2026-12-05T01:02:04.000000001Z \n";
  const LogScan k = Scan(stamped);
  EXPECT_TRUE(k.newest_first);
  EXPECT_EQ(Diagnose(k).stage, "cudagraph");
  // One step back among steps forward (two sources interleaved): not newest first.
  EXPECT_FALSE(Scan("2024-02-02 10:00:00 a\n2024-02-02 10:00:05 b\n2024-02-02 10:00:01 c\n"
                    "2024-02-02 10:00:09 d\n")
                   .newest_first);
}

// A log saved by Windows tools is often UTF-16: PowerShell's `>` (before PowerShell 6) writes
// it little-endian with a byte-order mark, and some editors without one. Read as the UTF-8 it
// stands for, in any cut of the bytes.
std::string Utf16(std::string_view utf8, bool little, bool bom) {
  std::string out;
  if (bom) out += little ? "\xFF\xFE" : "\xFE\xFF";
  auto unit = [&](uint32_t u) {
    const char hi = static_cast<char>(u >> 8), lo = static_cast<char>(u & 0xFF);
    out += little ? lo : hi;
    out += little ? hi : lo;
  };
  for (size_t i = 0; i < utf8.size();) {  // ASCII, and one 4-byte character (an emoji)
    const unsigned char c = static_cast<unsigned char>(utf8[i]);
    if (c < 0x80) {
      unit(c);
      ++i;
    } else {
      unit(0xD83D);
      unit(0xDE00);
      i += 4;
    }
  }
  return out;
}

TEST(LogFeed, Utf16LogsAreReadAsText) {
  const std::string text =
      "INFO 03-02 10:11:12 [gpu_worker.py:298] Available KV cache memory: 17.39 GiB "
      "\xF0\x9F\x98\x80\r\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.02 GiB. GPU 0 has a "
      "total capacity of 23.52 GiB of which 115.69 MiB is free.\r\n";
  const LogScan whole = Scan(text);
  ASSERT_GE(whole.events.size(), 2u);
  for (const bool little : {true, false}) {
    for (const bool bom : {true, false}) {
      const std::string bytes = Utf16(text, little, bom);
      for (size_t piece : {1, 3, 1000}) {
        doctor::LogFeed feed;
        for (size_t at = 0; at < bytes.size(); at += piece) {
          feed.Feed(std::string_view(bytes).substr(at, piece));
        }
        const LogScan s = feed.Finish();
        EXPECT_EQ(s.binary_lines, 0u) << little << bom << piece;
        EXPECT_EQ(s.bytes, bytes.size());
        ASSERT_EQ(s.events.size(), whole.events.size()) << little << bom << piece;
        for (size_t i = 0; i < s.events.size(); ++i) {
          EXPECT_EQ(s.events[i].text, whole.events[i].text) << i;
          EXPECT_EQ(s.events[i].values, whole.events[i].values) << i;
        }
      }
    }
  }
  // A lone surrogate, and one the text ends on, are U+FFFD; an odd last byte is dropped.
  const LogScan odd = Scan(std::string("\xFF\xFE" "a\0\x00\xDC" "b\0\x00\xD8", 10) + "x");
  EXPECT_EQ(odd.lines, 1u);
  EXPECT_EQ(odd.binary_lines, 0u);
}

// A compressed log, an archive or a screenshot given as the log is refused by what it is, not
// read as binary lines that say nothing; a text that begins like one of them is still read.
TEST(LogScan, CompressedArchivesAndImagesAreRefusedByName) {
  const auto refused = [](std::string bytes) {
    std::istringstream in(bytes);
    auto s = ScanLog(in);
    return s.ok() ? std::string() : std::string(s.status().message());
  };
  EXPECT_NE(refused(std::string("\x1F\x8B\x08\0\0\0\0\0", 8)).find("gzip"), std::string::npos);
  EXPECT_NE(refused("\x28\xB5\x2F\xFD....").find("zstd"), std::string::npos);
  EXPECT_NE(refused(std::string("\xFD" "7zXZ\0\0", 7)).find("xz"), std::string::npos);
  EXPECT_NE(refused("BZh91AY&SY....").find("bzip2"), std::string::npos);
  EXPECT_NE(refused("PK\x03\x04....").find("zip"), std::string::npos);
  EXPECT_NE(refused("\x89PNG\r\n\x1A\n").find("PNG image"), std::string::npos);
  EXPECT_NE(refused("\xFF\xD8\xFF\xE0").find("JPEG image"), std::string::npos);
  EXPECT_NE(refused("%PDF-1.7\n").find("PDF"), std::string::npos);
  EXPECT_EQ(refused("BZh is how this line begins\n"), "");
  EXPECT_EQ(refused("PK is not a zip\n"), "");
}

TEST(LogScan, ByteOrderMarksAreDropped) {
  // UTF-8's mark at the start, and at a line's start where a second file was appended.
  const LogScan s = Scan(
      "\xEF\xBB\xBF" "Traceback (most recent call last):\n"
      "\xEF\xBB\xBF"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a "
      "total capacity of 23.52 GiB of which 115.69 MiB is free.\n");
  ASSERT_FALSE(s.events.empty());
  EXPECT_EQ(s.events[0].kind, EventKind::kTraceback);
  EXPECT_EQ(s.events[0].text, "Traceback (most recent call last):");
  EXPECT_EQ(s.events.back().text.rfind("torch.OutOfMemoryError", 0), 0u);
}

// Pasted from a terminal that wraps at 80 columns: each longer line is cut into pieces of exactly
// 80 characters, the message too (Ollama's system-memory refusal here), and read whole again.
TEST(LogScan, ALogWrappedByATerminalIsReadWhole) {
  std::string log;
  const std::string lines[] = {
      "time=2025-02-11T08:30:00.001Z level=INFO source=routes.go:1246 msg=\"Listening on "
      "127.0.0.1:11434 (version 0.5.7)\"",
      "time=2025-02-11T08:31:02.500Z level=WARN source=server.go:136 msg=\"model request too "
      "large for system\" requested=\"45.2 GiB\" available=30012345678 total=\"31.3 GiB\"",
      "time=2025-02-11T08:31:02.500Z level=INFO source=sched.go:428 msg=\"NewLlamaServer failed\" "
      "model=/root/.ollama/models/blobs/sha256-abc error=\"model requires more system memory "
      "(45.2 GiB) than is available (27.9 GiB)\""};
  for (const std::string& l : lines) {
    for (size_t at = 0; at < l.size(); at += 80) log += l.substr(at, 80) + "\n";
  }
  const LogScan s = Scan(log);
  const LogEvent* e = Find(s, EventKind::kOllamaSystemMemory);
  ASSERT_NE(e, nullptr);
  EXPECT_NEAR(e->values.at(Num::kHostRequiredBytes), 45.2 * 1073741824.0, 1e6);
  const Diagnosis d = Diagnose(s);
  EXPECT_EQ(d.stage, "startup");
  EXPECT_EQ(d.cause, "host_memory");
  // Lines of one length that are records of their own (the same first bytes: a worker's prefix)
  // are not joined: each rank's line is read.
  std::string ranks;
  for (int r = 0; r < 4; ++r) {
    ranks += fmt::format(
        "(VllmWorker rank={} pid=10{}) INFO 06-02 08:11:20 [gpu_model_runner.py:1595] Model "
        "loading took 17.1234 GiB\n", r, r);
  }
  const LogScan k = Scan(ranks);
  ASSERT_EQ(k.events.size(), 12u);  // each rank: vLLM's logger, the V1 marker and the load
  EXPECT_EQ(k.events[11].rank, "rank3");
}

// Short excerpts where no width shows: a frame line a terminal cut inside its path or inside
// its function's name is joined with its rest; the frames of a worker-prefixed log whose cut
// pieces are all alike show the width by the unprefixed rests that follow them.
TEST(LogScan, AFrameLineCutByATerminalIsReadWhole) {
  const LogScan s = Scan(
      "Traceback (most recent call last):\n"
      "  File \"/opt/conda/lib/python3.10/site-packages/text_generation_server/models/flash_causal_"
      "lm.py\",\n"
      " line 1251, in warmup\n"
      "    _, batch, _ = self.generate_token(batch)\n"
      "  File \"/home/u/vllm/vllm/v1/worker/gpu_model_runner.py\", line 1292, in _dummy_s\n"
      "ampler_run\n"
      "    sampler_output = self.model.sample(\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.93 GiB.\n");
  std::vector<std::string> frames = Frames(s);
  EXPECT_EQ(frames, (std::vector<std::string>{"warmup (flash_causal_lm.py)",
                                              "_dummy_sampler_run (gpu_model_runner.py)"}));
  // A whole frame followed by its code line, another frame or a quote's "> " stays as it is.
  const LogScan whole = Scan(
      "> File \"/x/vllm/model_executor/model_loader/utils.py\", line 112, in process_weights\n"
      "> \n");
  ASSERT_NE(Find(whole, EventKind::kFrame), nullptr);
  EXPECT_EQ(Find(whole, EventKind::kFrame)->text, "process_weights (utils.py)");
  std::string prefixed;
  for (const char* fn : {"run_worker", "compile_or_warm_up_model", "capture_model"}) {
    const std::string frame = fmt::format(
        "(Worker_TP2 pid=99) ERROR 04-09 20:31:10 [multiproc_executor.py:949]   File "
        "\"/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_worker.py\", line 4, in {}",
        fn);
    prefixed += frame.substr(0, 120) + "\n" + frame.substr(120) + "\n";
  }
  const LogScan p = Scan(prefixed);
  frames = Frames(p);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[2], "capture_model (gpu_worker.py)");
  EXPECT_EQ(Find(p, EventKind::kFrame)->line, 2u);  // the line the frame ends on
}

// A mail client's reflow at word breaks: a frame line cut after "line N," continues on a line of
// its own with "in fn", the space between them gone; the frame is read whole with it.
TEST(LogScan, FrameReflowedAtASpaceIsReadWhole) {
  const LogScan s = Scan(
      "Traceback (most recent call last):\n"
      "  File \"/root/tts/GPT_SoVITS/AR/models/t2s_model.py\", line 681,\n"
      "in infer_panel_batch_infer\n"
      "    xy_dec, k_cache, v_cache =\n"
      "self.t2s_transformer.decode_next_token(xy_pos, k_cache, v_cache,\n"
      "  File \"/root/tts/GPT_SoVITS/AR/models/t2s_model.py\", line 259,\n"
      "in decode_next_token\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB.\n");
  EXPECT_EQ(Frames(s), (std::vector<std::string>{"infer_panel_batch_infer (t2s_model.py)",
                                                 "decode_next_token (t2s_model.py)"}));
}

// A size cut from its unit or its digits by a wrap is not read as bytes: the message is read
// from the two pieces joined as the terminal cut them.
TEST(LogScan, ASizeCutByAWrapIsReadFromBothPieces) {
  const LogScan old = Scan(
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 108.00 MiB (GPU 0; 11.00 "
      "GiB total capacity; 10.29 Gi\n"
      "B already allocated; 0 bytes free; 10.29 GiB reserved in total by PyTorch)\n");
  double allocated = -1;
  for (const LogEvent& e : old.events) {
    if (e.kind == EventKind::kTorchOom && e.values.count(Num::kAllocatedBytes)) {
      allocated = e.values.at(Num::kAllocatedBytes);
    }
  }
  EXPECT_NEAR(allocated, 10.29 * 1073741824.0, 1e6);
  EXPECT_NE(Diagnose(old).cause, "fragmentation");
  const LogScan now = Scan(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.75 GiB. GPU 3 has a total "
      "capacity of 139.72 GiB of whic\n"
      "h 813.06 MiB is free. Including non-PyTorch memory, this process has 138.92 GiB memory in "
      "use. Of the allocated memory 1\n"
      "36.20 GiB is allocated by PyTorch, and 270.23 MiB is reserved by PyTorch but\n");
  std::vector<double> seen;
  for (const LogEvent& e : now.events) {
    if (e.kind == EventKind::kTorchOom && e.values.count(Num::kAllocatedBytes)) {
      seen.push_back(e.values.at(Num::kAllocatedBytes));
    }
  }
  ASSERT_FALSE(seen.empty());
  for (const double v : seen) EXPECT_NEAR(v, 136.20 * 1073741824.0, 1e6);
  // One long line cut into three pieces in a log with no other long line.
  const std::string mlx =
      "Error: 500 Internal Server Error: mlx runner failed: panic: mlx: [metal::malloc] Attempting "
      "to allocate 133872076800 bytes which is greater than the maximum allowed buffer size of "
      "30150672384 bytes. at /Users/runner/work/ollama/mlx/c/transforms.cpp:73";
  const LogScan m = Scan(mlx.substr(0, 100) + "\n" + mlx.substr(100, 100) + "\n" +
                         mlx.substr(200) + "\n");
  EXPECT_TRUE(Diagnose(m).found);
  // Lines cut where no width shows, each read whole: Gemma's generation config applying a
  // preallocated cache (the value cut), llama.cpp's and Ollama's host buffer (its name cut), a
  // request's cache slot and the buffer allocation failing after its size, a multimodal tool's
  // command line cut before its --image.
  const std::pair<const char*, EventKind> kCut[] = {
      {"`generation_config` default values have been modified to match model-specific defaults: "
       "{'cache_implementation': 'hybrid\n"
       "', 'bos_token_id': 2}. If this is not desired, please set these values explicitly.\n",
       EventKind::kStaticCache},
      {"Error: llama runner process has terminated: error loading model: unable to allocate CU\n"
       "DA_Host buffer\n",
       EventKind::kHostBufferFail},
      {"time=2025-05-18T08:36:01.003Z level=DEBUG source=cache.go:136 msg=\"loading cache\n"
       " slot\" id=0 cache=57 prompt=1227 used=20 remaining=1207\n",
       EventKind::kRequest},
      {"llama-qwen2vl-cli -m Qwen2-VL-7B-Instruct-Q4_K_M.gguf --mmproj mmproj-f32.gguf -p "
       "\"Describe this im\n"
       "age\" --image \"facture_1.png\"\n",
       EventKind::kMmHint},
  };
  for (const auto& [text, kind] : kCut) EXPECT_NE(Find(Scan(text), kind), nullptr) << text;
  // A size read from the pieces: llama.cpp's allocation failing after the size was printed,
  // SGLang's load milestone cut before its memory figures.
  struct Sized {
    const char* text;
    EventKind kind;
    Num key;
    double bytes;
  };
  const Sized kSized[] = {
      {"ggml_backend_cuda_buffer_type_alloc_buffer: allocating 1953.40 MiB on device 1: \n"
       "cudaMalloc failed: out of memory\n",
       EventKind::kGgmlAllocFail, Num::kRequestedBytes, 1953.40 * 1048576.0},
      {"[2025-03-29 18:18:34 TP0] Load weight end. type=Gemma3ForConditionalGeneration, "
       "dtype=torch.bfloat16\n"
       ", avail mem=3.64 GB, mem usage=18.82 GB.\n",
       EventKind::kSglangWeights, Num::kFreeBytes, 3.64 * 1073741824.0},
  };
  for (const Sized& c : kSized) {
    const LogScan scan = Scan(c.text);
    const LogEvent* e = Find(scan, c.kind);
    ASSERT_NE(e, nullptr) << c.text;
    EXPECT_NEAR(e->values.at(c.key), c.bytes, 1e4) << c.text;
  }
  // PyTorch's list of other processes: cut over two pieces (read whole), or cut before this
  // process's share (the failing one is at most the largest listed, the others hold the rest).
  const char* const kOthers[] = {
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.66 GiB. GPU 0 has a total "
      "capacity of 79.25 GiB of which 1.57 GiB is free. Process 127117 has 16.98 GiB memory in "
      "use. Process 156640 ha\n"
      "s 59.89 GiB memory in use. Process 158007 has 816.00 MiB memory in use. Of the allocated "
      "memory 15.68 GiB is allocated by PyTorch, and 270.23 MiB is reserved by PyTorch but "
      "unallocated.\n",
      "ERROR 05-21 13:04:20 engine.py:389]   File \"/usr/local/lib/python3.10/dist-packages/vllm/"
      "worker/cache_engine.py\", line 103, in _allocate_kv_cache\n"
      "ERROR 05-21 13:04:20 engine.py:389] torch.OutOfMemoryError: CUDA out of memory. Tried to "
      "allocate 418.00 MiB. GPU 0 has a total capacity of 23.69 GiB of which 193.25 MiB is free. "
      "Process 1254 has 3.70 GiB memory in use. Process 1243 has 2.96 GiB memory in use. Process "
      "2167142 has 14.90 GiB memory in use. Of the allocated memory 14\n"};
  for (const char* text : kOthers) EXPECT_EQ(Diagnose(Scan(text)).cause, "other_process") << text;
  EXPECT_EQ(Diagnose(Scan(kOthers[1])).stage, "kv_cache");
}

// A paste with a blank line after every line (a web page's copy, "\r\r\n" endings) reads as
// the log without them: a message wrapped across a blank line is joined.
TEST(LogScan, ABlankLineAfterEachLineIsNoBreak) {
  const std::string lines[] = {
      "INFO 03-14 02:45:05 [gpu_model_runner.py:1434] Graph capturing finished in 22 secs",
      "ERROR 03-14 02:45:06 [core.py:337] EngineCore hit an exception: Traceback (most recent "
      "call last):",
      "ERROR 03-14 02:45:06 [core.py:337]   File \"/v/vllm/v1/worker/gpu_model_runner.py\", line "
      "1292, in _dummy_sampler_run",
      "ERROR 03-14 02:45:06 [core.py:337]     sampler_output = self.model.sample(",
      "ERROR 03-14 02:45:06 [core.py:337] torch.OutOfMemoryError: CUDA out of memory. Tried to "
      "allocate 1.74 GiB. GPU 0 has a total capacity of 23.55 GiB of which 1.01 GiB is free."};
  std::string doubled, crcrlf;
  for (const std::string& l : lines) {
    doubled += l + "\n\n";
    crcrlf += l + "\r\r\n";
  }
  for (const std::string& text : {doubled, crcrlf}) {
    const Diagnosis d = Diagnose(Scan(text));
    EXPECT_EQ(d.stage, "warmup");
    EXPECT_EQ(d.cause, "sampler_warmup");
  }
  // PyTorch's message wrapped mid-word, a blank line between its pieces: its sizes read whole.
  const Diagnosis d = Diagnose(Scan(
      "generator = pipeline('text-generation', model='gpt2', device=0)\n\n"
      "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 47.46 GiB total "
      "capacity; 148.00 MiB already alloc\n\n"
      "ated; 22.31 MiB free; 148.00 MiB reserved in total by PyTorch)\n\n"
      "Traceback (most recent call last):\n\n"
      "  File \"app.py\", line 3, in <module>\n\n"));
  EXPECT_EQ(d.cause, "other_process");
  // Two lines only, the second the rest of the first (llama.cpp's allocation cut before
  // "cudaMalloc failed"), a blank line after each: still one message.
  const Diagnosis two = Diagnose(Scan(
      "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 2493.32 MiB on device 0:\n\n"
      "cudaMalloc failed: out of memory\n\n"));
  EXPECT_EQ(two.engine, "llama.cpp");
  EXPECT_EQ(two.stage, "load");
}

// A paste with its viewer's line numbers ("cat -n", "nl", an editor's gutter): the numbers and
// their separator go, so the lines read as the program printed them (a shell's "Killed" that
// begins a line, PyTorch's message wrapped over two lines).
TEST(LogScan, ALinesNumbersFromAViewerAreNotTheLog) {
  const std::vector<std::string> lines = {
      "Loading checkpoint shards:   0%|          | 0/2 [00:00<?, ?it/s]",
      "Traceback (most recent call last):",
      "  File \"ppl.py\", line 40, in <module>",
      "    loss = model(ids, labels=ids).loss",
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
      "capacity of 79.15 GiB of which 1.91 GiB is free. Of the allocated memory 51.75 GiB is",
      "allocated by PyTorch, and 6.05 GiB is reserved by PyTorch but unallocated.",
      "",
      "Killed"};
  for (const char* format : {"{:6d}\t{}", "{:4d}  {}", "{:d} {}"}) {
    std::string text;
    for (size_t i = 0; i < lines.size(); ++i) {
      text += fmt::format(fmt::runtime(format), i + 17, lines[i]) + "\n";
    }
    const LogScan s = Scan(text);
    const LogEvent* oom = Find(s, EventKind::kTorchOom);
    ASSERT_NE(oom, nullptr) << format;
    EXPECT_EQ(oom->values.at(Num::kReservedUnallocatedBytes), 6.05 * (1ull << 30)) << format;
    EXPECT_NE(Find(s, EventKind::kHostOomKill), nullptr) << format;
    EXPECT_EQ(Frames(s).front(), "<module> (ppl.py)") << format;
  }
  // Numbers that do not follow one another are the log's own (a table's first column).
  const LogScan table = Scan("3 Killed\n9 Killed\n4 Killed\n12 Killed\n1 Killed\n");
  EXPECT_EQ(Find(table, EventKind::kHostOomKill), nullptr);
}

// A short log wrapped by a terminal: its first wrapped line comes before the width shows (three
// pieces of one length), and is joined all the same (the scanner looks ahead).
TEST(LogScan, TheFirstLinesOfAWrappedLogAreJoinedToo) {
  const std::string frames[] = {
      "  File \"/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py\", line 1160, "
      "in convert",
      "    return t.to(",
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.69 "
      "GiB total capacity; 20.10 GiB already allocated; 1.20 GiB free; 20.30 GiB reserved in "
      "total by PyTorch) If reserved memory is >> allocated memory try setting "
      "max_split_size_mb to avoid fragmentation."};
  std::string whole, wrapped;
  for (const std::string& l : frames) {
    whole += l + "\n";
    for (size_t at = 0; at < l.size(); at += 80) wrapped += l.substr(at, 80) + "\n";
  }
  const Diagnosis a = Diagnose(Scan(whole));
  const Diagnosis b = Diagnose(Scan(wrapped));
  EXPECT_EQ(a.stage, "load");
  EXPECT_EQ(b.stage, a.stage);
  EXPECT_EQ(b.cause, a.cause);
}

// A log a mail client or a forum's editor reflowed at word breaks (no line longer than the
// width, each broken line followed by a word that would not have fitted on it): its records are
// read as printed, so a milestone broken over two lines ("Server" / "started at ...") still
// counts, while records of their own (a prefix's next line, an exception's line, an indented
// frame) stay apart. A short kernel excerpt, and a terminal's hard wrap (its pieces at exactly
// the width), are not read as a reflow.
TEST(LogScan, ALogReflowedAtWordBreaksIsReadAsPrinted) {
  const std::string lines[] = {
      "2024-03-01T10:00:00.000000Z  INFO text_generation_launcher: Args { model_id: "
      "\"meta-llama/Llama-2-13b-chat-hf\", revision: None, sharded: None }",
      "2024-03-01T10:00:00.000000Z  INFO text_generation_launcher: Starting shard rank=0",
      "2024-03-01T10:00:30.000000Z  INFO text_generation_launcher: Waiting for shard to be "
      "ready... rank=0",
      "2024-03-01T10:00:41.000000Z  INFO text_generation_launcher: Shard ready in 41.2s rank=0",
      "2024-03-01T10:00:41.000000Z  INFO text_generation_launcher: Server started at "
      "unix:///tmp/text-generation-server-0",
      "2024-03-01T10:00:43.000000Z ERROR text_generation_launcher: Method Prefill encountered "
      "an error.",
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
      "total capacity of 23.65 GiB of which 1.10 GiB is free. Process 990 has 22.54 GiB memory "
      "in use. Of the allocated memory 21.90 GiB is allocated by PyTorch, and 210.00 MiB is "
      "reserved by PyTorch but unallocated."};
  std::string whole, reflowed;
  for (const std::string& l : lines) {
    whole += l + "\n";
    std::string_view rest = l;
    while (rest.size() > 72) {
      const size_t cut = rest.rfind(' ', 72);
      reflowed += std::string(rest.substr(0, cut)) + "\n";
      rest.remove_prefix(cut + 1);
    }
    reflowed += std::string(rest) + "\n";
  }
  const Diagnosis a = Diagnose(Scan(whole));
  const Diagnosis b = Diagnose(Scan(reflowed));
  EXPECT_EQ(a.stage, "runtime");
  EXPECT_EQ(b.stage, a.stage) << b.stage_evidence;
  EXPECT_EQ(b.cause, a.cause);
  // The milestone's line is one record again.
  const LogScan s = Scan(reflowed);
  bool started = false;
  for (const LogEvent& e : s.events) {
    started |= e.text.find("Server started at") != std::string::npos;
  }
  EXPECT_TRUE(started);
  // A short excerpt is one too where the reflow broke its out-of-memory message: TGI's
  // arguments, broken after "Args {", still name the 70B model whose weights outgrow the card.
  const Diagnosis args = Diagnose(Scan(
      "2023-09-05T10:12:01.000000Z  INFO text_generation_launcher: Args {\n"
      "model_id: \"meta-llama/Llama-2-70b-chat-hf\", revision: None,\n"
      "validation_workers: 2, sharded: None, num_shard: Some(1), quantize:\n"
      "None, dtype: None, trust_remote_code: false, max_concurrent_requests:\n"
      "128 }\n"
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate\n"
      "448.00 MiB (GPU 0; 23.69 GiB total capacity; 22.91 GiB already\n"
      "allocated; 120.00 MiB free; 22.95 GiB reserved in total by PyTorch)\n"));
  EXPECT_EQ(args.stage, "load") << args.stage_evidence;
  EXPECT_EQ(args.cause, "weights_too_large");
  // A short kernel excerpt whose lines happen to end near the longest one: left as it is (its
  // OOM-killer record stays on its own line).
  const LogScan kernel = Scan(
      "NVRM: nvCheckOkFailedNoLog: Check failed: Out of memory [NV_ERR_NO_MEMORY]\n"
      "returned from _memdescAllocInternal(pMemDesc) @ mem_desc.c:1359\n"
      "VLLM::Worker_TP invoked oom-killer: gfp_mask=0x102cc2(GFP_HIGHUSER)\n"
      "oom_kill_process+0x1f8/0x3f0\n"
      "sysmemAllocResources+0xa8/0x2a0 [nvidia]\n"
      "VLLM::Worker_TP invoked oom-killer: gfp_mask=0x80dc0(GFP_KERNEL|__GFP_ZERO)\n"
      "phys_mem_allocate+0x14c/0x230\n");
  const LogEvent* kill = Find(kernel, EventKind::kHostOomKill);
  ASSERT_NE(kill, nullptr);
  EXPECT_EQ(kill->line, 3u);
}

// What a collector or a paste puts before each line is not the engine's: docker compose's service
// column, kubectl's --timestamps, journald's header, a GitHub reply's quote and a Markdown code
// block's indentation (of spaces, or of tabs). A log level before a table's column is the
// engine's own.
TEST(LogScan, CapturePrefixesAreNotTheEngines) {
  const std::string lines[] = {"Loading checkpoint shards:  40%|####      | 2/5",
                               "Killed"};
  for (const char* prefix :
       {"vllm-server-1  | ", "2025-07-14T09:26:53.481734012Z ", "2025-07-14T09:26:53+02:00 ",
        "Jul 14 09:26:53 gpu-node-3 python3[48211]: ", "Jul  4 09:26:53 node serve.sh[7]: ",
        "> ", "    ", "\t", "2025-07-14T09:26:53.481734012Z stderr F ",
        "2025-07-14T09:26:53.481734012+00:00 stdout F "}) {
    std::string log;
    for (const std::string& l : lines) log += prefix + l + "\n";
    const LogScan s = Scan(log);
    EXPECT_NE(Find(s, EventKind::kHostOomKill), nullptr) << prefix;
  }
  // torchrun's rank after kubectl's time: the rank is still read.
  const LogScan r = Scan(
      "2025-07-14T09:26:53.481734012Z [rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried "
      "to allocate 2.00 GiB. GPU 3 has a total capacity of 79.15 GiB of which 1.00 GiB is free.\n");
  ASSERT_FALSE(r.events.empty());
  EXPECT_EQ(r.events.back().rank, "rank3");
  // The same line from the container runtime's file (stream and tag after the time).
  const LogScan cri = Scan(
      "2025-07-14T09:26:53.481734012Z stderr F [rank3]: torch.OutOfMemoryError: CUDA out of "
      "memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.15 GiB of which 1.00 "
      "GiB is free.\n");
  ASSERT_FALSE(cri.events.empty());
  EXPECT_EQ(cri.events.back().rank, "rank3");
  // GPTQModel's table: "INFO  | gptq | 41 |" is not a compose service's column.
  const LogScan t = Scan("INFO  | gptq    | 41    | self_attn.q_proj     | 0.0003114012 |\n"
                         "Killed\n");
  EXPECT_NE(Find(t, EventKind::kHostOomKill), nullptr);
}

// Two runs in one log (the engine started again after a failure, or two logs concatenated): the
// last one is read; a last run with no failure (the command pasted after the error) is read
// together with the one before.
TEST(LogScan, TheLastOfSeveralRunsIsRead) {
  const std::string first =
      "INFO 05-10 10:12:04 [api_server.py:1043] vLLM API server version 0.8.5\n"
      "ERROR 05-10 10:12:40 [core.py:396] ValueError: To serve at least one request with the "
      "models's max seq len (131072), (7.00 GiB KV cache is needed, which is larger than the "
      "available KV cache memory (5.12 GiB).\n";
  const std::string second =
      "INFO 05-10 11:00:00 [api_server.py:1043] vLLM API server version 0.8.5\n"
      "ERROR 05-10 11:00:40 [core.py:396] ValueError: No available memory for the cache blocks. "
      "Try increasing `gpu_memory_utilization` when initializing the engine.\n";
  const LogScan s = Scan(first + second);
  EXPECT_EQ(s.earlier_runs, 1u);
  EXPECT_EQ(s.run_line, 3u);
  EXPECT_EQ(Find(s, EventKind::kMaxLenError), nullptr);
  EXPECT_NE(Find(s, EventKind::kNoKvMemory), nullptr);
  const Diagnosis d = Diagnose(s);
  EXPECT_EQ(d.cause, "kv_no_memory");
  ASSERT_FALSE(d.notes.empty());
  EXPECT_EQ(d.notes[0], "the log holds 2 runs: the last one is read (from line 3), the earlier "
                        "ones failed before it");
  // The banner with no failure after it: one run, both read.
  const LogScan one =
      Scan(first +
           "INFO 05-10 11:00:00 [api_server.py:1043] vLLM API server version 0.8.5\n"
           "$ python -m vllm.entrypoints.openai.api_server\n");
  EXPECT_EQ(one.earlier_runs, 0u);
  EXPECT_EQ(one.run_line, 0u);
  EXPECT_NE(Find(one, EventKind::kMaxLenError), nullptr);
  // A shell prompt launching a program after a traceback begins the next run; a comment in a
  // code line does not.
  const std::string oom =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total "
      "capacity of 23.52 GiB of which 115.69 MiB is free.\n";
  EXPECT_EQ(Scan(oom + "user@host:~/app$ CUDA_VISIBLE_DEVICES=0 python run.py\n" + oom)
                .earlier_runs, 1u);
  EXPECT_EQ(Scan(oom + "(venv) PS C:\\app> python app.py\n" + oom).earlier_runs, 1u);
  EXPECT_EQ(Scan(oom + "    x = f()  # python fallback\n" + oom).earlier_runs, 0u);
}

// Lines a log collector or a web page wrapped: each record's text is read as the engine's line.
TEST(LogScan, CollectedAndEscapedLinesAreUnwrapped) {
  const LogScan s = Scan(
      R"({"log":"Traceback (most recent call last):\n","stream":"stderr","time":"t"})" "\n"
      R"({"log":"  File \"/venv/lib/python3.11/site-packages/transformers/generation/utils.py\",)"
      R"( line 2465, in generate\n","stream":"stderr","time":"t"})" "\n"
      "  File &quot;/venv/lib/python3.11/site-packages/transformers/models/llama/"
      "modeling_llama.py&quot;, line 855, in forward\n");
  std::vector<std::string> frames = Frames(s);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0], "generate (utils.py)");
  EXPECT_EQ(frames[1], "forward (modeling_llama.py)");
  EXPECT_EQ(s.events[0].kind, EventKind::kTraceback);
  // A traceback sent as a string, its line ends escaped: one line, read as its lines.
  const LogScan t = Scan(
      R"(Error: {"error": "Traceback (most recent call last):\n  File \"/a/transformers/)"
      R"(generation/utils.py\", line 2465, in generate\ntorch.OutOfMemoryError: CUDA out of )"
      R"(memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 23.52 GiB of which )"
      R"(115.69 MiB is free."})" "\n");
  EXPECT_EQ(t.lines, 1u);
  EXPECT_NE(Find(t, EventKind::kTorchOom), nullptr);
  EXPECT_NE(Find(t, EventKind::kFrame), nullptr);
  // Each of its lines numbered in reading order (the frame before the error), each cited as
  // the file's line 1.
  EXPECT_LT(Find(t, EventKind::kFrame)->line, Find(t, EventKind::kTorchOom)->line);
  EXPECT_EQ(Find(t, EventKind::kFrame)->shown_line(), 1u);
  EXPECT_EQ(Find(t, EventKind::kTorchOom)->shown_line(), 1u);
  // A log whose line ends were lost: its records in order, the lines after it cited as the
  // file's.
  const LogScan flat = Scan(
      "llama_context: n_ctx = 131072 llama_kv_cache: CUDA0 KV buffer size = 8192.00 MiB "
      "common_init_from_params: warming up the model with an empty run - please wait ... "
      "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 5120.00 MiB on device 0: "
      "cudaMalloc failed: out of memory llama_decode: failed to decode, ret = -3\n"
      "llama_kv_cache:      CUDA0 KV buffer size =  4096.00 MiB\n");
  ASSERT_NE(Find(flat, EventKind::kGgmlKvBuffer), nullptr);
  ASSERT_NE(Find(flat, EventKind::kGgmlAllocFail), nullptr);
  const LogEvent* kv = Find(flat, EventKind::kGgmlKvBuffer);
  const LogEvent* fail = Find(flat, EventKind::kGgmlAllocFail);
  EXPECT_LT(kv->line, fail->line);
  EXPECT_EQ(fail->shown_line(), 1u);
  EXPECT_EQ(flat.events.back().kind, EventKind::kGgmlKvBuffer);  // the file's next line
  EXPECT_EQ(flat.events.back().shown_line(), 2u);
  EXPECT_GT(flat.events.back().line, fail->line);
  // The same kind of string in a saved report, wrapped by a terminal at 80 columns (a piece may
  // end inside an escape or a frame's name): the pieces are joined before the escapes are
  // undone, so the frames and the error are read as in the unwrapped line.
  const std::string body =
      R"(  "traceback": "Traceback (most recent call last):\n  File \"/srv/app/loader.py\", )"
      R"(line 88, in load\n    self.model = AutoModelForCausalLM.from_pretrained(name, )"
      R"(device_map=\"auto\")\n  File \"/venv/lib/python3.12/site-packages/transformers/)"
      R"(modeling_utils.py\", line 4246, in from_pretrained\n    model = cls(config)\n)"
      R"(torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a )"
      R"(total capacity of 15.47 GiB of which 1.02 GiB is free.\n",)";
  std::string wrapped = "{\n  \"ok\": false,\n";
  for (size_t at = 0; at < body.size(); at += 80) wrapped += body.substr(at, 80) + "\n";
  wrapped += "}\n";
  const LogScan w = Scan(wrapped);
  const std::vector<std::string> names = Frames(w);
  // The two frames and the failing code line under the first, as in the line unwrapped.
  EXPECT_EQ(names, Frames(Scan("{\n  \"ok\": false,\n" + body + "\n}\n")));
  ASSERT_EQ(names.size(), 3u) << ::testing::PrintToString(names);
  EXPECT_EQ(names.front(), "load (loader.py)");
  EXPECT_EQ(names.back(), "from_pretrained (modeling_utils.py)");
  EXPECT_NE(Find(w, EventKind::kTorchOom), nullptr);
}

// A shell's or Docker Compose's report that its program was ended by SIGKILL (the kernel's OOM
// killer), and a job scheduler's or Kubernetes' OOM kill, read as the OOM killer; "Killed"
// inside a message does not.
TEST(LogScan, ShellReportsOfSigkillAreTheOomKiller) {
  for (const char* line :
       {"Killed", "zsh: killed     python run.py", "vllm-1  | Killed",
        "./run.sh: line 3:  4242 Killed                  python run.py",
        "fish: Job 1, 'python run.py' terminated by signal SIGKILL (Forced quit)",
        "vllm-1 exited with code 137",
        "The Python process exited with exit code 137 (SIGKILL). This may have been cause by OOM "
        "error.",
        "subprocess.CalledProcessError: Command '['python', 'serve.py']' returned non-zero exit "
        "status 137.",
        "    exitCode: 137",
        // A batch job's or a container's memory limit: Slurm's cgroup, Kubernetes.
        "slurmstepd: error: Detected 1 oom_kill event in StepId=4242.batch. Some of the step "
        "tasks have been OOM Killed.",
        "      Reason:       OOMKilled",
        // A paste that lost its line ends: the shell's word after a progress line's ellipsis.
        "Loading llama-30b... Loading model ... Killed Windows 10 WSL Ubuntu 22.04.2 LTS",
        "INFO:Loading lmsys_vicuna-7b-delta-v1.1... Killed"}) {
    EXPECT_NE(Find(Scan(std::string(line) + "\n"), EventKind::kHostOomKill), nullptr) << line;
  }
  for (const char* line : {"INFO worker Killed by the scheduler after 10 s", "Process was Killed?",
                           "exited with code 1370", "exit status 1371",
                           "Loading model ... Killed9", "Loading model ... killed it myself"}) {
    EXPECT_EQ(Find(Scan(std::string(line) + "\n"), EventKind::kHostOomKill), nullptr) << line;
  }
}

// The engines' own shutdown kills its process tree with SIGKILL after a child failed: the shell's
// "Killed" right after vLLM's or SGLang's shutdown line is that, not the OOM killer.
TEST(LogScan, KilledAfterAnEnginesOwnShutdownIsNotTheOomKiller) {
  for (const char* before :
       {"CRITICAL 03-18 16:02:46 [core_client.py:269] Got fatal signal from worker processes, "
        "shutting down. See stack trace above for root cause issue.",
        "[2025-05-12 10:04:17] Received sigquit from a child process. It usually means the child "
        "failed."}) {
    EXPECT_EQ(Find(Scan(std::string(before) + "\nKilled\n"), EventKind::kHostOomKill), nullptr)
        << before;
  }
  EXPECT_NE(Find(Scan("INFO 03-18 16:02:46 [core.py:1] Loading weights\nKilled\n"),
                 EventKind::kHostOomKill),
            nullptr);
}

// Lines that name a failure other than out-of-memory carry their class; the same messages said
// with "out of memory" are the out-of-memory; a handled error in a warning is nothing.
TEST(LogScan, FailuresThatAreNotOutOfMemoryCarryTheirClass) {
  const std::pair<const char*, double> kLines[] = {
      {"RuntimeError: CUDA error: an illegal memory access was encountered", 0},
      {"(EngineCore_DP0 pid=1) ERROR 10-14 08:12:40 [core.py:708] RuntimeError: CUDA error: "
       "misaligned address",
       0},
      {"Memory access fault by GPU node-2 (Agent handle: 0x55d0) on address 0x7f00. Reason: Page "
       "not present or supervisor privilege.",
       0},
      {"RuntimeError: CUDA error: device-side assert triggered", 1},
      {"../aten/src/ATen/native/cuda/Indexing.cu:1289: indexSelectLargeIndex: block: [3,0,0], "
       "thread: [64,0,0] Assertion `srcIndex < srcSelectDimSize` failed.",
       1},
      {"RuntimeError: CUDA error: no kernel image is available for execution on the device", 2},
      {"ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. "
       "Your Tesla T4 GPU has compute capability 7.5.",
       3},
      {"RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)", 4},
      {"[rank1]: torch.distributed.DistBackendError: NCCL error in: "
       "../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, ncclInternalError: Internal check "
       "failed.",
       4},
      {"triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 131072, "
       "Hardware limit: 98304.",
       5},
      {"RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered", 0},
      {"RuntimeError: Found no NVIDIA driver on your system.", 6},
      {"Segmentation fault (core dumped)", 7},
      {"Fatal Python error: Segmentation fault", 7},
      {"SIGSEGV: segmentation violation", 7},
      {"huggingface_hub.errors.GatedRepoError: 401 Client Error.", 8},
      {"OSError: We couldn't connect to 'https://huggingface.co' to load this file.", 8},
      {"ModuleNotFoundError: No module named 'flash_attn'", 9},
      {"ImportError: /opt/venv/lib/python3.12/site-packages/vllm/_C.abi3.so: undefined symbol: "
       "_ZN3c104cuda9SetDeviceEi",
       9},
      {"RuntimeError: CUDA error: operation not permitted when stream is capturing", 10},
      {"RuntimeError: CUDA error: CUBLAS_STATUS_INVALID_VALUE when calling `cublasGemmEx(...)`",
       10},
      {"ValueError: Invalid quantization method: awqq", 11},
      {"(EngineCore_DP0 pid=1) ERROR 10-14 [core.py:708] KeyError: 'model.layers.0.mlp.gate'", 11},
      {"AssertionError", 11},
      {"Aborted (core dumped)", 12},
      {"/app/ggml/src/ggml-cuda/mmq.cuh:3056: GGML_ASSERT(ne00 % ggml_blck_size(src0->type) == 0) "
       "failed",
       12},
      {"run.sh: line 3: 48211 Aborted                 (core dumped) python serve.py", 12},
      {"SIGABRT: abort", 12},
      {"terminate called without an active exception", 12},
      {"  what():  unordered_map::at", 12},
      {"  what():  CUDA error: an illegal memory access was encountered", 0},
      {"llama_model_load: error loading model: error loading model architecture: unknown model "
       "architecture: 'gemma3'",
       13},
      {"Error: llama runner process has terminated: exit status 2", 14},
      {"time=2025-03-10T14:02:19.874Z level=ERROR source=sched.go:455 msg=\"error loading llama "
       "server\" error=\"llama runner process has terminated: CUDA error\"",
       14},
      {"(EngineCore_DP0 pid=200) ERROR 05-10 10:01:12 [core.py:708] ValueError: Hybrid KV cache "
       "manager is disabled but failed to convert the KV cache specs to one unified type.",
       15},
      {"ValueError: Connector LMCacheConnectorV1 does not support HMA but HMA is enabled. Please "
       "set `--disable-hybrid-kv-cache-manager`.",
       15},
  };
  for (const auto& [line, kind] : kLines) {
    const LogScan s = Scan(std::string(line) + "\n");
    const LogEvent* e = Find(s, EventKind::kOtherError);
    ASSERT_NE(e, nullptr) << line;
    EXPECT_EQ(e->values.at(Num::kErrorClass), kind) << line;
    EXPECT_EQ(Find(s, EventKind::kCudaOom), nullptr) << line;
  }
  for (const char* line :
       {"RuntimeError: CUDA error: out of memory",
        "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
        "host:4101:4101 [1] include/alloc.h:114 NCCL WARN Cuda failure 'out of memory'",
        "RuntimeError: Triton Error [CUDA]: out of memory", "  what():  CUDA error: out of memory",
        "Error: llama runner process has terminated: cudaMalloc failed: out of memory"}) {
    const LogScan s = Scan(std::string(line) + "\n");
    EXPECT_EQ(Find(s, EventKind::kOtherError), nullptr) << line;
    EXPECT_NE(Find(s, EventKind::kCudaOom), nullptr) << line;
  }
  for (const char* line :
       {"WARNING 01-15 09:10:02 _custom_ops.py:20] Failed to import from vllm._C with "
        "ModuleNotFoundError(\"No module named 'vllm._C'\")",
        "RuntimeError: Engine core initialization failed. See root cause above. Failed core "
        "proc(s): {'EngineCore_DP0': 1}",
        "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack "
        "trace (above) for the root cause.",
        "ValueError: No available memory for the cache blocks. Try increasing "
        "`gpu_memory_utilization` when initializing the engine.",
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling "
        "`cublasCreate(handle)`",
        "HTTPError                                 Traceback (most recent call last)",
        "the run raised an error: see the log", "INFO 01-15 [x.py:1] No error here",
        "terminate called after throwing an instance of 'c10::Error'", "  what():  ",
        "INFO 05-06 12:00:00 [async_llm.py:430] Aborted request cmpl-1a2b.",
        "Error: llama runner process has terminated: error loading model: unable to allocate "
        "CUDA0 buffer",
        "Error", ": Error",
        "ValueError:x"}) {
    EXPECT_EQ(Find(Scan(std::string(line) + "\n"), EventKind::kOtherError), nullptr) << line;
  }
}

// std::bad_alloc, as libstdc++'s terminate handler or a Python binding reports it, is a failed
// allocation of host memory: the host-memory failure, not a crash of another kind.
TEST(LogScan, BadAllocIsHostMemory) {
  for (const char* line : {"terminate called after throwing an instance of 'std::bad_alloc'",
                           "  what():  std::bad_alloc", "MemoryError: std::bad_alloc"}) {
    const LogScan s = Scan(std::string(line) + "\n");
    EXPECT_NE(Find(s, EventKind::kHostBufferFail), nullptr) << line;
    EXPECT_EQ(Find(s, EventKind::kOtherError), nullptr) << line;
  }
}

// Every cut of an error line (a log truncated mid-line, a pasted fragment) is read without
// reading past its end: each prefix scans, the class of a whole needle or none.
TEST(LogScan, TruncatedErrorLinesAreSafe) {
  for (const std::string& line :
       {std::string("(EngineCore_DP0 pid=1) ERROR 10-14 08:12:40 [core.py:708] RuntimeError: "
                    "CUDA error: an illegal memory access was encountered"),
        std::string("huggingface_hub.errors.GatedRepoError: 401 Client Error."),
        std::string("  current device: 0, in function ggml_cuda_mul_mat_id at ggml-cuda.cu:2112"),
        std::string("ValueError: Invalid quantization method: awqq"),
        std::string("Fatal Python error: Segmentation fault")}) {
    for (size_t n = 0; n <= line.size(); ++n) {
      const LogScan s = Scan("CUDA error: an illegal memory access\n" + line.substr(0, n));
      EXPECT_LE(s.events.size(), 8u) << n;
    }
  }
}

TEST(LogScan, EventKindsAndValueKeysHaveTheirNames) {
  EXPECT_STREQ(EventKindName(EventKind::kTorchOom), "torch_oom");
  EXPECT_STREQ(EventKindName(EventKind::kMaxLenError), "max_len_error");
  EXPECT_STREQ(EventKindName(EventKind::kPrompt), "prompt");
  EXPECT_STREQ(NumName(Num::kWeightsBytes), "weights_bytes");
  EXPECT_STREQ(NumName(Num::kKvCacheBytes), "kv_cache_bytes");
  EXPECT_STREQ(NumName(Num::kPromptTokens), "prompt_tokens");
  EXPECT_STREQ(EventKindName(EventKind::kOtherError), "other_error");
  EXPECT_STREQ(NumName(Num::kErrorClass), "error_class");
}

TEST(LogScan, VllmsLoggerFormatNamesTheEngine) {
  // vLLM's logger prefix alone (no file of either engine core named) makes the log vLLM's: its
  // fixes are vLLM's flags, not a plain PyTorch program's.
  const LogScan s = Scan(
      "ERROR 05-02 10:11:12 [core.py:396] RuntimeError: CUDA error: out of memory\n");
  EXPECT_NE(Find(s, EventKind::kVllmMarker), nullptr);
  const Diagnosis d = Diagnose(s);
  EXPECT_EQ(d.engine, "vllm");
  ASSERT_FALSE(d.fixes.empty());
  EXPECT_NE(d.fixes[0].change.find("--"), std::string::npos) << d.fixes[0].change;
  // Before 0.6, without the bracket; after a worker's prefix.
  EXPECT_NE(Find(Scan("(VllmWorkerProcess pid=42) INFO 08-01 10:00:00 worker.py:211] x\n"),
                 EventKind::kVllmMarker),
            nullptr);
  // Other loggers' dates and levels are not vLLM's.
  for (const char* other : {"2025-05-02 10:11:12,003 - ERROR - x.py:3] CUDA out of memory\n",
                            "[2025-05-02 10:11:12] ERROR 05-02 oops\n",
                            "INFO 05-02 10:11:12 the model is loaded\n"}) {
    EXPECT_EQ(Find(Scan(other), EventKind::kVllmMarker), nullptr) << other;
  }
}

TEST(LogScan, AFramesSignatureIsNoMultimodalInput) {
  // IPython prints the whole signature of a multimodal model's forward: its pixel_values
  // parameter is no image given.
  EXPECT_EQ(Find(Scan("/usr/lib/python3/dist-packages/transformers/models/gemma4/modeling_gemma4"
                      ".py in forward(self, input_ids, pixel_values, pixel_values_videos)\n"),
                 EventKind::kMmHint),
            nullptr);
  // A call that passes them still is.
  EXPECT_NE(Find(Scan("    outputs = model(input_ids, pixel_values=pixel_values)\n"),
                 EventKind::kMmHint),
            nullptr);
}

TEST(LogScan, EmptyInput) {
  const LogScan s = Scan("");
  EXPECT_EQ(s.lines, 0u);
  EXPECT_TRUE(s.events.empty());
}

}  // namespace
}  // namespace vramfit

namespace vramfit {
namespace {

// The monitor feeds an engine's output as it arrives: any cut of the bytes (a CRLF split
// between two pieces too) gives the events ScanLog gives for the whole.
TEST(LogFeed, PiecesGiveTheEventsOfTheWhole) {
  const std::string text =
      "INFO 07-02 09:00:01 [gpu_model_runner.py:1770] Starting to load model Qwen/Qwen3-14B...\r\n"
      "INFO 05-06 12:00:00 [gpu_model_runner.py:1843] Model loading took 15.63 GiB and 6.2 s\r\n"
      "INFO 03-02 10:11:12 [gpu_worker.py:298] Available KV cache memory: 17.39 GiB\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.02 GiB. GPU 0 has a "
      "total capacity of 23.52 GiB of which 115.69 MiB is free.";
  const LogScan whole = Scan(text);
  for (size_t piece : {1, 2, 7, 64, 100000}) {
    doctor::LogFeed feed;
    for (size_t at = 0; at < text.size(); at += piece) {
      feed.Feed(std::string_view(text).substr(at, piece));
    }
    const LogScan s = feed.Finish();
    EXPECT_EQ(s.lines, whole.lines) << piece;
    EXPECT_EQ(s.bytes, whole.bytes) << piece;
    ASSERT_EQ(s.events.size(), whole.events.size()) << piece;
    for (size_t i = 0; i < s.events.size(); ++i) {
      EXPECT_EQ(s.events[i].kind, whole.events[i].kind) << piece << " event " << i;
      EXPECT_EQ(s.events[i].line, whole.events[i].line) << piece << " event " << i;
      EXPECT_EQ(s.events[i].values, whole.events[i].values) << piece << " event " << i;
    }
  }
}

}  // namespace
}  // namespace vramfit
