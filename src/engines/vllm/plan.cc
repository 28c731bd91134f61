// vLLM stage-by-stage plan (see vllm.h): one function per stage over a Run that carries the
// resolved settings, the release's Rules and the numbers each stage leaves for the next.
// Formulas and their sources are listed in docs/engines/vllm.md; the measured terms
// (activation peak, non-torch memory, CUDA context, graph pool) use the constants named k*
// below, each explained there.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

#include "core/checked.h"
#include "core/units.h"
#include "engines/vllm/attention_backend.h"
#include "engines/vllm/command.h"
#include "engines/vllm/defaults.h"
#include "engines/vllm/dflash.h"
#include "engines/vllm/flags.h"
#include "engines/vllm/lora.h"
#include "engines/vllm/pipeline.h"
#include "engines/vllm/refusals.h"
#include "engines/vllm/serve_flags.h"
#include "engines/vllm/v0_legacy.h"
#include "engines/vllm/vllm.h"
#include "model/auto_round.h"
#include "model/hub_revision.h"

namespace vramfit {
namespace {

using core::CeilDiv;
using core::FormatBytes;

using core::kGiB;
using core::kMiB;
// Whether any of the model's layers attends in this way.
bool HasAttention(const ModelSpec& spec, AttentionKind kind) {
  return std::any_of(spec.layers.begin(), spec.layers.end(),
                     [&](const LayerSpec& l) { return l.attention.kind == kind; });
}

// CUDA context of one process (driver, cuBLAS handles): 300-600 MiB in public logs; B200's
// measured 612 MiB (unsloth PR #9362). Held before vLLM's first snapshot, so never charged
// to the budget, but device memory all the same (the startup check and the graph stage).
constexpr uint64_t kCudaContext = 512 * kMiB;
// NCCL communicators and custom all-reduce buffers per rank when TP > 1: created before the
// snapshot, outside the budget like the context.
constexpr uint64_t kNcclPerRank = 384 * kMiB;
// Non-torch growth during the profile run (cuBLAS/cuBLASLt workspaces, kernel images), which
// vLLM charges to the budget. Calibrated: the median of the four TP=1 values vLLM printed in
// the validation set (0.03, 0.10, 0.35, 1.79 GiB -> 0.23 GiB); see docs/validation.md.
constexpr uint64_t kNonTorchBase = 256 * kMiB;
// The same growth in the V1 worker from v0.11, whose snapshot follows the distributed set-up
// (PR #25359): the single-GPU V1 starts of the development half print 0.13, 0.13, 0.13 and
// 0.14 GiB of non-torch memory (gpt-oss-120b, Qwen3-0.6B twice, Llama-3.3-70B FP8 on H100,
// ~v0.14); the largest, 144 MiB.
constexpr uint64_t kNonTorchBaseV1 = 144 * kMiB;
// An integrated GPU (GB10, Jetson: CUDA's is_integrated; compute capability 12.1, 11.0, 8.7):
// MemorySnapshot.measure (vllm/utils/mem_utils.py, read at v0.13 and v0.22) takes free memory
// from psutil's available host memory there, so what the process takes on the host between the
// worker's first snapshot and the end of the profile counts as non-torch memory. Calibrated on
// the development half's GB10 starts, which imply 2.01 GiB (Qwen3-30B-A3B-FP8, v0.13) and 2.23
// GiB (Qwen3-0.6B, v0.27.1) of it; the test half's Qwen3.8-27B start printed 4.64 GiB. The
// lower, 2 GiB, is the least the plan charges there.
constexpr uint64_t kIntegratedNonTorchFloor = 2 * kGiB;
// The GPUs one host holds on an HGX / DGX board (8): a model instance over more spans hosts.
constexpr int64_t kGpusPerHost = 8;
// Extra non-torch growth with TP > 1 in the V0 worker (all-reduce workspaces appearing during
// the profile run): the TP>1 values V0 printed were 0.25, 0.30, 0.38 GiB, median 0.30 = base
// + 48 MiB.
constexpr uint64_t kNonTorchTpExtra = 48 * kMiB;
// Sampler warm-up bytes per logit. V0: its profile run samples with top-p 0.99 and top-k
// vocab-1 (worker/model_runner.py profile_run's SamplingParams), so the sampler sorts the whole
// vocabulary (model_executor/layers/sampler.py _apply_top_k_top_p: logits.sort, softmax, cumsum,
// scatter back; FlashInfer's sampler only with VLLM_USE_FLASHINFER_SAMPLER=1), the sort below
// (39 B); only the driver samples at TP > 1 (VllmPlan::non_sampling_activation_bytes). The
// development half's V0 peaks agree: Llama-3-8B's driver printed 1.26 GiB at TP 1 and TP 2
// (256 x 128,256 logits: 41 B; the forward is 0.84 and 0.55 GiB), DeepSeek-R1-Distill-Qwen-14B's
// driver at TP 2 kept about 1.2 GiB less than its worker (0.19 GiB of forward), 39 B over 256 x
// 152,064 logits; Qwen2.5-32B's driver at TP 2 printed its 10,000-token forward (1.26 GiB) with
// the sort at 1.41 GiB planned (0.15 GiB pessimistic). V1
// (_dummy_sampler_run: top-p 0.9 and top-k vocab-1 over min(max_num_seqs, batched tokens)
// requests) depends on the release's top-k/top-p path (Rules::sampler_sorts):
// - the full-vocab PyTorch sort (v0.11.1 to v0.16): the bf16 logits, their fp32 copy, the
//   sorted fp32 values and int64 indices, the sort's own buffers, the softmax and the scatter
//   back: 39 B, the median of the seven sampler-bound peaks of one H100 benchmark suite
//   (38.5-39.6 B, vLLM of January 2026) and above PR #32558's measurement of the sort
//   (1.25 GB for 256 x 131,072 logits: 37.3 B);
// - the Triton top-k/top-p kernel of v0.17-v0.20 (PR #33538; v1/sample/ops/topk_topp_sampler.py
//   apply_top_k_top_p for 8 or more requests, FlashInfer opt-in until PR #40376): the kernel
//   masks the fp32 logits in place, so the warm-up holds the bf16 logits compute_logits returned
//   (2; _dummy_sampler_run keeps them), their fp32 copy (4; v1/sample/sampler.py Sampler.forward;
//   the temperature divides in place), the softmax probabilities (4; forward_native) and the
//   exponential noise of random_sample (4; q = empty_like(probs), divided into probs in place):
//   14 B. Checked on the development half's v0.17.1 RTX 3090 starts (Llama-3.1-8B, 256 x 128,256
//   logits, and Qwen2.5-7B, 256 x 152,064): vLLM left 0.52-0.54 and 0.56-0.62 GiB for activation
//   and non-torch memory together, which 14 B fills with 0.43 and 0.51 GiB and leaves 0.05-0.11
//   GiB of non-torch growth for both models alike (0.01-0.07 beside the kernel's scratch,
//   TritonTopkScratch); the 22 B below left none (0.67 and 0.80 GiB).
// - FlashInfer's sampler (VLLM_USE_FLASHINFER_SAMPLER=1 before v0.21). The warm-up passes top-p
//   0.9 and top-k vocab-1 since PR #13594 (v0.8.0), and forward_cuda hands them to FlashInfer:
//   in v0.8 only below FlashInfer 0.2.3 (PR #14815), which v0.8's image installs (0.2.1.post2:
//   softmax probabilities, then top_k_renorm_probs into a second fp32 tensor); from PR #15777
//   the 0.2.3 API, and from PR #18608 (2025-05-23) top_k_top_p_sampling_from_logits
//   (top_k_mask_logits into a new fp32 tensor, then its softmax). Either way the warm-up holds
//   the bf16 logits (2), their fp32 copy (4, temperature in place) and two fp32 tensors (8):
//   14 B (v1/sample/ops/topk_topp_sampler.py forward_cuda, flashinfer_sample). The development
//   half's four v0.10.1.1 starts whose logs print "Using FlashInfer for top-p & top-k sampling"
//   (Qwen2-7B on one and two A100s) are 0.2-0.5 GiB pessimistic with it.
// - V1 up to v0.11.0 without VLLM_USE_FLASHINFER_SAMPLER (Rules::sampler_flashinfer_if_installed):
//   FlashInfer's sampler where FlashInfer imports (vLLM's Docker images), the sort where it does
//   not: the pip wheel had no FlashInfer (PR #21389 added it after v0.10.0 and PR #21959,
//   2025-07-30, moved it to the `vllm[flashinfer]` extra; a default only from PR #26443,
//   2025-10-08, v0.11.1), and VLLM_USE_FLASHINFER_SAMPLER=0 sorts too. The log says which
//   ("Using FlashInfer for top-p & top-k sampling" or "FlashInfer is not available. Falling
//   back to the PyTorch-native implementation"); so does the install: where the user says
//   FlashInfer is installed (VllmOptions::flashinfer_installed: `--flashinfer-installed`, or
//   `check -- docker run ... vllm/vllm-openai:TAG`, whose vllm-base stage installs FlashInfer:
//   docker/Dockerfile FLASHINFER_WHEEL, every platform but linux/arm64 in the 0.9 line) the plan
//   charges FlashInfer's 14 B. v0.8's TopKTopPSampler takes FlashInfer below 0.2.3 (PR #14815),
//   which v0.8's image installs; from PR #15777 (0.9) at 0.2.3 and above ("FlashInfer version >=
//   0.2.3 required. Falling back"), which the later images install. Without either the plan
//   charges the sort (39 B) and its notes say what FlashInfer's 14 B would leave. The development
//   half's V1 starts of
//   v0.8-v0.11.0 whose sampler warm-up sets the activation peak are ten, from eight sources:
//   the logs of two print the fallback (Qwen3-235B-A22B FP8 on 8 x L40S, v0.10.2: 1.40 GiB
//   printed for 1.41 at 39 B; Qwen3-8B on an A100 40GB, v0.9.2: KV within 1% at 39 B, +4% at
//   14 B), four (one source) print FlashInfer (above), and four print neither: two fit the sort
//   (gpt-oss-120b on an H100 at v0.11.0, 7.41 GiB left for 7.48; Qwen3-235B FP8 on 4 x H100,
//   still 1.75 GiB optimistic at 39 B), one FlashInfer (Qwen3-30B-A3B on 4 x A10, v0.8.5, a
//   docker compose log from vLLM's image layout: 19% pessimistic at 39 B, +0.8% with the image's
//   FlashInfer) and one either. Split evidence, and a wrong "fits" costs more than a pessimistic
//   plan: without the install the sort is the default.
// - otherwise (FlashInfer's sampler again from v0.21): 22 B, the median per source of those
//   releases' published peaks (19.5 B on a v0.2x fork, 23.9 B at v0.26.0); the development
//   half's v0.28 L4 and L40S starts are already optimistic by 0.3-0.6 GiB with it, so it is not
//   lowered.
// VLLM_USE_FLASHINFER_SAMPLER=0 selects the native path (forward_native's apply_top_k_top_p)
// in every V1 release: the sort before v0.17 and the Triton kernel from it
// (Rules::sampler_native_triton); =1 selects FlashInfer's sampler (v0.8-v0.11.0: where it
// imports, else the sort with a warning; from v0.11.1 forward_cuda unconditionally).
constexpr uint64_t kSamplerBytesPerLogitTriton = 14;
constexpr uint64_t kSamplerBytesPerLogitFlashInfer = 14;
constexpr uint64_t kSamplerBytesPerLogit = 22;
constexpr uint64_t kSamplerBytesPerLogitSort = 39;
// Model runner V2's warm-up (vllm/v1/worker/gpu/model_runner.py _dummy_sampler_run, then
// sample/sampler.py Sampler.sample): the bf16 logits compute_logits returns (2) and their fp32
// copy (4); penalties, temperature and min-p work in place, the profile's dummy requests skip
// top-k/top-p, and the Gumbel-max kernel writes one token a row. Charged only where the profile
// compiles nothing (Run::v2_profile): Qwen3-8B on an RTX 4090 at v0.27.1 with a warm compile
// cache peaked at 0.19 GiB, the forward over 2,048 tokens, where 256 x 151,936 logits x 6 B
// give 0.22 GiB (test-half record ...-mrv2-warm-compile-cache-runpod-recon).
constexpr uint64_t kSamplerBytesPerLogitV2 = 6;
// The rest of the measured terms' spread (docs/validation.md, signed errors per component):
// non-torch memory within 0.25 GiB at TP 1 and 0.5 GiB above it; the graph pool within 0.5
// GiB (published v0.19-v0.26 logs: 0.40 GiB median, up to 1.2 GiB under the plan).
constexpr uint64_t kNonTorchSpread = 256 * kMiB;
constexpr uint64_t kNonTorchTpSpread = 512 * kMiB;
constexpr uint64_t kGraphSpread = 512 * kMiB;
// A first start on model runner V2 compiles inside the profile run, and what that costs beside
// V1's charges (which the plan takes for it) follows no rule read in vLLM's source: on the
// published first starts the available KV memory came out between 2.56 GiB pessimistic and
// 2.00 GiB optimistic (docs/engines/vllm.md, model runner V2). 2 GiB, the largest optimistic
// error of the development half's V2 first starts (Qwen3-32B-AWQ and Qwen3-14B-AWQ on an RTX
// 5090 at v0.28.0: +2.00 and +1.92 GiB), joins the KV check's spread, so a verdict inside it is
// said to be unsure.
constexpr uint64_t kV2FirstStartSpread = 2 * kGiB;
// All-reduce buffers that appear during the profile run with tensor parallelism (V1 from
// v0.11, where NCCL's communicators and the custom all-reduce's own buffers are made before the
// snapshot, PR #25359): NCCL's lazily allocated channel buffers in every such release, and from
// v0.17 (Rules::tp_profile_workspaces) the FlashInfer all-reduce fusion's IPC workspace
// (512 MiB at TP 2 on Hopper) and what ~v0.18's CUDA-graph memory profiling leaves, where the
// fusion runs (AllReduceFusionRuns: SM 9.0 or 10.x, peer access). Source reading:
// docs/engines/vllm-multimodal-and-allreduce.md, part B. Calibrated: 2-GPU H100 runs of ~v0.14
// print 0.54-0.55 GiB of non-torch memory (base + NCCL = 0.5 GiB), published TP>1 logs
// of v0.19-v0.26 on Hopper about 2 GiB, a TP 4 run with custom all-reduce disabled 0.13 GiB:
// NCCL 368 MiB (with the V1 base, the 0.5 GiB of the ~v0.14 runs), the v0.17+ workspaces
// 1.5 GiB, so that no TP>1 plan is optimistic on them.
// Where the fusion does not run (Ampere, Ada, the SM 12.x Blackwell workstation cards) nothing
// of it appears: two PCIe L4s at TP 2 on v0.28 left 1.25 GiB for activation, non-torch memory
// and graphs together (validation record qwen3-14b-awq-l4x2-tp2-pcie, development half).
constexpr uint64_t kNcclLazyBuffers = 368 * kMiB;
constexpr uint64_t kTpProfileWorkspaces = 1536 * kMiB;
// Graph pool per captured graph (piecewise or full), on top of the activations of the largest
// captured size. Calibrated on the two graph estimates vLLM printed for models in reach:
// Qwen3-8B, 86 graphs: (0.52 GiB - 48 MiB) / 86 = 5.6 MiB; Qwen3.6-27B TP 2, 86 graphs:
// (0.49 GiB - 40 MiB) / 86 = 5.4 MiB. The cost does not follow the layer count (36 vs 64).
constexpr uint64_t kGraphBytesPerGraph = 5632 * 1024;  // 5.5 MiB
// MoE layers cost more per captured graph: each holds the routing, expert alignment and grouped
// GEMM kernels (fused_moe), several nodes more than a dense MLP. vLLM's own estimate
// (v1/worker/gpu_model_runner.py profile_cudagraph_memory, v0.21+) extrapolates from the second
// capture of each mode, so the cost counts once per graph. Calibrated on the three MoE records
// of the development half that print their graph pool, 102 graphs each, per MoE layer per graph
// above the dense cost: gpt-oss-120b (36 MoE layers, 1.03 GiB taken) 0.120 MiB, Qwen3-30B-A3B
// FP8 on GB10 (48 layers, 1.28 GiB) 0.145 MiB, Qwen3.5-35B-A3B at TP 4 (40 layers, 1.32 GiB
// estimated) 0.188 MiB; the median, 0.145 MiB.
constexpr uint64_t kGraphBytesPerMoeLayer = 148 * 1024;
// Qwen-VL image processors' default max_pixels (preprocessor_config.json): Qwen3-VL 16,777,216
// (4096 x 4096), Qwen2/2.5-VL 12,845,056 (3584 x 3584).
constexpr uint64_t kQwen3VlMaxPixels = 16777216;
constexpr uint64_t kQwen2VlMaxPixels = 12845056;
// --limit-mm-per-prompt unset: vLLM profiles as many items as the budget holds.
constexpr uint64_t kUnlimitedItems = 999;
// Qwen3-VL's video processor, video_preprocessor_config.json of the Qwen3-VL checkpoints (and
// transformers' Qwen3VLVideoProcessor): size.longest_edge 25,165,824 (24,576 x 32 x 32) pixels
// for all frames together, shortest_edge 4,096. Its fps (2), min_frames (4) and max_frames
// (768) only sample real videos; the dummy video is made at its frame count.
constexpr uint64_t kQwen3VlVideoMaxPixels = 25165824;
constexpr uint64_t kQwen3VlVideoMinPixels = 4096;
// qwen3_vl.py _MAX_FRAMES_PER_VIDEO, the dummy video's frame cap up to v0.14.
constexpr uint64_t kQwen3VlMaxDummyFrames = 24576;

// Whether vLLM's custom all-reduce runs on `gpu` at tensor-parallel size `tp`
// (distributed/device_communicators/custom_all_reduce.py CustomAllreduce.__init__): only for 2,
// 4, 6 or 8 ranks; beyond two ranks only when NVLink connects them all; and only where GPU peer
// access works, which GeForce drivers disable. NVLink parts of the GPU catalog: the SXM boards
// (V100, A100, A800, H100, H200, H20, B200) and GH200.
bool CustomAllReduceRuns(const GpuSpec& gpu, int64_t tp) {
  if (tp != 2 && tp != 4 && tp != 6 && tp != 8) return false;
  if (gpu.name.find("GeForce") != std::string::npos) return false;
  static const char* kNvlink[] = {"v100-16gb", "v100-32gb", "a100-40gb", "a100-80gb",
                                  "a800-80gb", "h20",       "h20-141gb", "h100-sxm",
                                  "h200",      "b200",      "gh200-96gb"};
  const bool nvlink = std::find_if(std::begin(kNvlink), std::end(kNvlink), [&](const char* id) {
                        return gpu.id == id;
                      }) != std::end(kNvlink);
  return nvlink || tp == 2 || gpu.custom;  // a GPU given by size: assume it runs (pessimistic)
}

// Whether vLLM's FlashInfer all-reduce + RMSNorm fusion runs, creating its IPC workspace inside
// the profile run (config/vllm.py enable_allreduce_rms_fusion, default at -O2 from v0.17, PR
// #34299): TP > 1 on CUDA with FlashInfer (a dependency of the CUDA wheel) and compute capability
// 9.0 or the 10.x family; not on Ampere (8.0/8.6), Ada (8.9) or the SM 12.x cards (RTX 50, RTX PRO
// Blackwell, GB10). v0.17-v0.20 also required DP = PP = 1 (Rules::allreduce_fusion_single_dp_pp).
// A GPU given by size without a capability: assume it runs (pessimistic).
bool AllReduceFusionRuns(const GpuSpec& gpu, const VllmSettings& s, const vllm::Rules& rules) {
  if (s.tensor_parallel_size < 2) return false;
  if (rules.allreduce_fusion_single_dp_pp &&
      (s.data_parallel_size > 1 || s.pipeline_parallel_size > 1)) {
    return false;
  }
  const std::string& cc = gpu.compute_capability;
  if (gpu.custom && cc.empty()) return true;
  return cc == "9.0" || cc.rfind("10.", 0) == 0;
}

// torch.compile and the CUDA graphs vLLM resolves for V1 from --enforce-eager, -O and
// --compilation-config (config/vllm.py VllmConfig.__post_init__).
struct Compilation {
  bool compiles = true;      // the profile run compiles (CompilationMode other than NONE)
  std::string graph_mode;    // CUDAGraphMode: NONE, PIECEWISE, FULL, FULL_DECODE_ONLY, ...
  bool fusion_passes = true; // the -O2/-O3 fusion passes (fuse_allreduce_rms) can run
  std::string why;           // what decided it, for the notes ("" where nothing was given)
};
Compilation ResolveCompilation(const vllm::Rules& rules, const VllmSettings& s) {
  Compilation c;
  const char* const release_default =
      rules.full_and_piecewise_graphs ? "FULL_AND_PIECEWISE" : "PIECEWISE";
  if (s.v0_engine) {
    // The V0 model runner captures its own graphs unless --enforce-eager, whatever the level.
    c.graph_mode = s.enforce_eager ? "NONE" : "PIECEWISE";
    return c;
  }
  if (s.enforce_eager) {
    // "Enforce eager set, overriding optimization level to -O0": mode NONE and cudagraph_mode
    // NONE whatever was asked (v0.12+; before, enforce_eager turned the graphs off and the
    // compile with them).
    c = {false, "NONE", false, "--enforce-eager"};
    return c;
  }
  int mode = 3;
  if (rules.optimization_levels) {
    // PR #26847: OPTIMIZATION_LEVEL_TO_CONFIG fills only what the user left unset; the mode is
    // VLLM_COMPILE above O0, NONE at O0.
    const int level = s.optimization_level >= 0 ? s.optimization_level : 2;
    mode = s.compilation_mode >= 0 ? s.compilation_mode : level > 0 ? 3 : 0;
    c.graph_mode = !s.cudagraph_mode.empty() ? s.cudagraph_mode
                   : level == 0              ? "NONE"
                   : level == 1              ? "PIECEWISE"
                                             : "FULL_AND_PIECEWISE";
    c.fusion_passes = level >= 2 && mode == 3;
    if (s.optimization_level >= 0) c.why = fmt::format("-O{}", level);
    if (s.compilation_mode >= 0) {
      c.why += (c.why.empty() ? "" : ", ") + fmt::format("compilation mode {}", mode);
    }
    // "Cudagraph mode ... is not compatible with compilation mode ... Overriding to NONE."
    if ((c.graph_mode == "PIECEWISE" || c.graph_mode == "FULL_AND_PIECEWISE") && mode != 3) {
      c.graph_mode = "NONE";
      c.why += (c.why.empty() ? "" : ", ") +
               std::string("piecewise graphs need compilation mode 3 (VLLM_COMPILE)");
    }
  } else {
    // Before v0.12 -O N is --compilation-config's level N (PR #10437); V1 captures graphs by
    // default only at level 3, PIECEWISE (v0.10 gpu_model_runner.py use_cuda_graph; v0.11
    // VllmConfig.__post_init__: cudagraph_mode NONE unless the level is PIECEWISE).
    mode = s.compilation_mode >= 0    ? s.compilation_mode
           : s.optimization_level >= 0 ? s.optimization_level
                                       : 3;
    c.graph_mode = !s.cudagraph_mode.empty() ? s.cudagraph_mode
                   : mode == 3               ? release_default
                                             : "NONE";
    if (s.compilation_mode >= 0 || s.optimization_level >= 0) {
      c.why = fmt::format("compilation level {}", mode);
    }
  }
  c.compiles = mode != 0;
  return c;
}

std::string ReleaseText(int v) { return fmt::format("{}.{}", v / 10000, (v / 100) % 100); }

// The flags of a command ServeCommand wrote (`--name`, as written before any `=`): after the
// launcher, the words that start with `-` outside single quotes, ShellWord's only quoting.
std::vector<std::string> CommandFlags(const std::string& command) {
  std::vector<std::string> out;
  bool quoted = false, word_start = true;
  constexpr std::string_view kApiServer = "-m vllm.entrypoints.openai.api_server";
  const size_t launcher = command.find(kApiServer);
  for (size_t i = launcher == std::string::npos ? 0 : launcher + kApiServer.size();
       i < command.size(); ++i) {
    const char c = command[i];
    if (!quoted && c == '\\') {  // `\'` between two quoted parts
      ++i;
      word_start = false;
      continue;
    }
    if (c == '\'') quoted = !quoted;
    if (!quoted && c == ' ') {
      word_start = true;
      continue;
    }
    if (word_start && c == '-') {
      const size_t end = command.find_first_of(" =", i);
      out.push_back(command.substr(i, end == std::string::npos ? std::string::npos : end - i));
    }
    word_start = false;
  }
  return out;
}

// CUDA-graph capture sizes (VllmConfig._set_cudagraph_sizes): all sizes, ascending.
// `decode_query_len` is 1 + num_speculative_tokens where the rules scale by it (v0.13+).
// The user's compilation config replaces the default: cudagraph_capture_sizes as given (each
// once, those above max_num_batched_tokens dropped), or the default list up to
// max_cudagraph_capture_size (at most max_num_batched_tokens).
std::vector<int64_t> CaptureSizes(const vllm::Rules& rules, const VllmSettings& s,
                                  int64_t decode_query_len) {
  const int64_t max_num_seqs = s.max_num_seqs, mnbt = s.max_num_batched_tokens;
  if (!s.cudagraph_capture_sizes.empty()) {
    std::vector<int64_t> sizes;
    for (int64_t n : s.cudagraph_capture_sizes) {
      if (n <= mnbt) sizes.push_back(n);
    }
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    return sizes;
  }
  if (!rules.capture_sizes_per_decode_query) decode_query_len = 1;
  int64_t max_capture = s.max_cudagraph_capture_size > 0 ? s.max_cudagraph_capture_size
                        : rules.capture_to_512_by_tokens && !s.v0_engine
                            ? 512
                            : std::min<int64_t>(max_num_seqs * decode_query_len * 2, 512);
  max_capture = std::min(max_capture, mnbt);
  std::vector<int64_t> sizes;
  // --performance-mode interactivity: every size up to min(max, 32), then the usual steps.
  const int64_t first_step = s.performance_mode == "interactivity"
                                 ? std::min<int64_t>(max_capture, 32)
                                 : 4;
  for (int64_t n = 1; n <= first_step; n = first_step == 4 ? n * 2 : n + 1) {
    if (n <= max_capture) sizes.push_back(n);
  }
  if (rules.capture_step16_from_256) {  // PR #26016: step 8 up to 256, then step 16
    for (int64_t n = 8; n < std::min<int64_t>(max_capture + 1, 256); n += 8) sizes.push_back(n);
    for (int64_t n = 256; n <= max_capture; n += 16) sizes.push_back(n);
  } else {
    for (int64_t n = 8; n <= max_capture; n += 8) sizes.push_back(n);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

// Bytes of activations for `tokens` tokens through one decoder layer's widest point, per rank.
// MoE layers: fused_moe's intermediate caches are made for at most VLLM_FUSED_MOE_CHUNK_SIZE
// tokens M at a time. The plan charges M x topk x (3I + H) values: the gate/up output
// [M, topk, 2I], the activation output [M x topk, I] and the down output [M, topk, H] apart.
// vLLM shares one buffer of M x topk x max(2I, H) between the first and the last ("cache13",
// model_executor/layers/fused_moe/fused_moe.py fused_experts_impl, v0.8 to v0.2x), so its
// workspace is M x topk x (max(2I, H) + I); the larger charge is kept because the development
// records where the MoE sets the peak (Qwen3-Coder-480B-FP8, DP 8 + EP, v0.10.1) are 1.5 GiB
// optimistic with it already (their all-to-all buffers are not modelled) and 4 GiB with the
// shared buffer (docs/engines/vllm.md). With data parallel + expert parallel the naive dispatch
// gathers the tokens of all DP ranks first (FusedMoE naive prepare/finalize), so the MoE sees
// T x dp tokens. Layers [begin, end) only: a pipeline stage's.
uint64_t ForwardActivation(const ModelSpec& s, uint64_t tokens, uint64_t tp, bool ep, uint64_t dp,
                           const vllm::Rules& rules, uint64_t act, size_t begin = 0,
                           size_t end = SIZE_MAX) {
  const uint64_t chunk = rules.fused_moe_chunk_tokens;
  const uint64_t moe_tokens = ep && dp > 1 ? tokens * dp : tokens;
  uint64_t widest_attn = 0, widest_mlp = 0;
  end = std::min(end, s.layers.size());
  for (size_t i = begin; i < end; ++i) {
    const LayerSpec& l = s.layers[i];
    const AttentionSpec& a = l.attention;
    uint64_t attn = 0;
    if (a.kind == AttentionKind::kLinear) {
      attn = (2 * a.linear_num_key_heads * a.linear_key_head_dim +
              2 * a.linear_num_value_heads * a.linear_value_head_dim) / tp;
    } else if (a.kind == AttentionKind::kMla) {
      attn = a.num_heads * (a.qk_nope_head_dim + a.qk_rope_head_dim + a.v_head_dim) / tp +
             a.kv_lora_rank + a.qk_rope_head_dim;
    } else {
      attn = (a.num_heads * (a.output_gate ? 2 : 1) + 2 * std::max<int64_t>(1, a.num_kv_heads)) *
             a.head_dim / tp;
    }
    widest_attn = std::max(widest_attn, tokens * act * attn);
    uint64_t mlp = 0;
    if (l.mlp.kind == MlpKind::kDense) {
      // gate_up output + activation
      mlp = tokens * act * 3 * static_cast<uint64_t>(l.mlp.intermediate_size) / tp;
    } else {
      const uint64_t ie = ep ? l.mlp.expert_intermediate_size : l.mlp.expert_intermediate_size / tp;
      mlp = std::min(moe_tokens, chunk) * act * l.mlp.experts_per_token * (3 * ie + s.hidden_size) +
            tokens * act * 3 * l.mlp.shared_intermediate_size / tp;
      if (moe_tokens > tokens) mlp += moe_tokens * act * s.hidden_size;  // the gathered states
    }
    widest_mlp = std::max(widest_mlp, mlp);
  }
  // residual + normed input + output of the block, then the wider of attention and MLP. With
  // TP > 1 the row-parallel down projection's partial sums are all-reduced into a new tensor
  // (Rules::all_reduce_out_of_place, v0.6.5+): the reduced output sits beside them, one more
  // hidden-wide tensor at the MLP's widest point (gate_up and the activation are still held).
  const uint64_t blocks = tp > 1 && rules.all_reduce_out_of_place ? 4 : 3;
  return tokens * act * blocks * static_cast<uint64_t>(s.hidden_size) +
         std::max(widest_attn, widest_mlp);
}

Status Invalid(std::string m) { return Status::InvalidArgument(std::move(m)); }

// --kv-offloading-size / --kv-offloading-backend (vllm/config/cache.py CacheConfig, PR #27621;
// vllm/config/vllm.py turns them into a kv_transfer_config). The native backend's
// OffloadingConnector sets cpu_bytes_to_use to the size in bytes; its worker
// (v1/kv_offload/worker/cpu_gpu.py CpuGpuOffloadingHandler) allocates the host tensors with
// pin_memory and copies blocks with ops.swap_blocks straight between the GPU KV tensors and
// them on two CUDA streams (the block-id map is a host tensor): no GPU buffer, no change to the
// profile run, so the GPU pool is planned as without it. The connector does turn the hybrid KV
// cache manager off where the release's VllmConfig.__post_init__ does so for any
// kv_transfer_config; for models with sliding-window layers that is named, not planned.
void KvOffloadingNotes(const ModelSpec& spec, const VllmSettings& s, Plan* plan) {
  if (s.kv_offloading_gib <= 0) {
    if (!s.kv_offloading_backend.empty()) {
      plan->without_effect.push_back(fmt::format(
          "--kv-offloading-backend {}: no host KV tier without --kv-offloading-size",
          s.kv_offloading_backend));
    }
    return;
  }
  const bool sliding = HasAttention(spec, AttentionKind::kSliding);
  const std::string hma =
      sliding ? "; with a KV connector vLLM may turn the hybrid KV cache manager off "
                "(vllm/config/vllm.py), so that sliding-window layers cost the full context: "
                "not modelled here"
              : "";
  if (s.kv_offloading_backend == "lmcache") {
    plan->notes.push_back(fmt::format(
        "--kv-offloading-size {} --kv-offloading-backend lmcache: LMCache's connector "
        "(LMCacheConnectorV1) holds the host KV tier; the GPU KV pool is planned unchanged, "
        "and LMCache's GPU staging chunk is charged outside the budget{}",
        s.kv_offloading_gib, hma));
    return;
  }
  plan->notes.push_back(fmt::format(
      "--kv-offloading-size {}: a host KV tier of {} GiB (pinned CPU memory, summed over {} "
      "tensor-parallel rank{}) holds blocks offloaded by vLLM's OffloadingConnector (native "
      "backend, the default from PR #32421; before it --kv-offloading-backend native was "
      "needed); blocks are copied straight between it and the GPU KV cache, so the GPU pool "
      "is planned unchanged{}",
      s.kv_offloading_gib, s.kv_offloading_gib, s.tensor_parallel_size,
      s.tensor_parallel_size == 1 ? "" : "s", hma));
}

// The planned pipeline stage's share of the profile run (the whole model without PP).
struct StageActivation {
  int64_t stage = 0;      // 0-based
  size_t layers = 0;      // decoder layers the stage holds (and caches)
  uint64_t forward = 0;   // the dummy forward through the stage's layers
  uint64_t received = 0;  // the buffer for the previous stage's hidden states and residual
  uint64_t draft_aux = 0; // a DFlash drafter's tapped target hidden states (under its forward)
  bool samples = false;   // the last stage: logits and the sampler warm-up
  uint64_t peak = 0;
};

// One start-up being planned: the inputs, the resolved settings and rules, and what each stage
// leaves for the next.
struct Run {
  const Inventory& inv;
  const ModelSpec& spec;
  const VllmWeightProfile& profile;
  const GpuSpec& gpu;
  const VllmSettings& in;   // as the user gave them
  VllmSettings s;           // resolved
  vllm::Rules rules;
  bool auto_len = false;
  Dtype model_dtype = Dtype::kBF16;  // --dtype resolved
  uint64_t act_bytes = 2;            // bytes of one activation value in that dtype
  VllmPlan plan;
  GpuPlan g;
  uint64_t tp = 1;
  bool encoder_tp_data = false;   // --mm-encoder-tp-mode data, in effect (EncoderTpMode)
  bool nccl_in_budget = false;
  uint64_t ctx = 0;               // CUDA context (+ NCCL outside the budget)
  uint64_t requested = 0;         // the budget
  uint64_t free_at_start = 0;
  VllmWeights w;
  uint64_t weights = 0;
  uint64_t activation = 0;
  uint64_t graph = 0;
  uint64_t sampler_spread = 0;    // the sampler's share of the plan's uncertainty
  uint64_t graph_in_budget = 0;
  // Model runner V2 before v0.29: profile_cudagraph_memory returns 0 (vllm/v1/worker/gpu/
  // model_runner.py; its own graph profiling is a v0.29.0 feature), so vLLM reserves none of the
  // graph pool in the budget and captures the graphs on top of it (issue #49224). The plan still
  // charges V1's estimate to the KV memory (see ResolveSettings), but not to the device check.
  bool graphs_outside_budget = false;
  // LMCache's GPU buffers, made after vLLM sized the KV cache and outside the budget (see
  // KvConnectorBuffers).
  uint64_t connector_bytes = 0;
  // --skip-mm-profiling: the encoder's profile left out of the budget (SkipEncoderProfile),
  // needed beside the pool at the first request with as many items.
  uint64_t skipped_encoder = 0;
  std::string connector_name;  // whose buffers they are
  // Model runner V2 whose profile run compiles nothing: --enforce-eager (config/vllm.py
  // VllmConfig.__post_init__ sets compilation_config.mode NONE and logs "Enforce eager set,
  // disabling torch.compile and CUDAGraphs", as v0.19.1 and later print) or a warm compile
  // cache (VllmOptions::compile_cache_warm). V2's own profile is then what vLLM measures: the 6 B
  // sampler warm-up, no graph estimate before v0.29 and no pipeline receive buffer (made at load).
  // A first compiled start compiles inside the profile and the plan charges V1's profile for it.
  bool v2_profile = false;
  // Model runner V2 whose profile run compiles (a first start): charged V1's profile, with
  // kV2FirstStartSpread in the KV check's spread.
  bool v2_first_start = false;
  // What vLLM resolves from --enforce-eager, -O and --compilation-config (ResolveCompilation):
  // whether the profile run compiles with torch.compile, the CUDA-graph mode, and whether the
  // all-reduce + RMSNorm fusion pass is on (-O2 and -O3 under VLLM_COMPILE).
  bool compiles = true;
  std::string graph_mode;
  std::string graph_why;
  bool fusion_passes = true;
  // --enable-lora: the slots' buffers (made at load, inside r.weights) and the profile's
  // shrink buffer (inside the forward).
  uint64_t lora = 0;
  uint64_t lora_profile = 0;
  KvCacheOptions ko;
  uint64_t available = 0;
  StageActivation act;  // the profile run of the planned stage
  // A separate draft model (--speculative-config "model", read by the caller): its spec, and
  // the target's layers followed by the draft's, which page in one KV pool.
  const ModelSpec* draft = nullptr;
  std::optional<ModelSpec> with_draft;
  // Before v0.7.1 DeepSeek's MLA layers cache full K and V (v0_legacy.h LegacyKvSpec).
  std::optional<ModelSpec> legacy_kv;
  const ModelSpec& kv_spec() const {
    return legacy_kv ? *legacy_kv : with_draft ? *with_draft : spec;
  }
  // One pipeline stage planned alone (pipeline.h): `spec` holds only its layers. Every plan
  // with pipeline stages is made so (PlanVllm hands PP > 1 to PlanPipeline), so a Run's
  // weights, layers and KV pool are never divided among stages.
  bool stage() const { return in.pipeline_stage >= 0; }

  // The first failure wins: later stages still compute their numbers.
  void Fail(Stage stage, std::string msg) {
    if (!plan.fits) return;
    plan.fits = false;
    plan.failure_stage = stage;
    plan.failure_message = std::move(msg);
  }
  // A refusal of the flags themselves, whatever the card and the memory: the failure, and the
  // change that lifts it as the plan's way out (Plan::refusal: the reports say it instead of
  // "other cards" when no re-planned change fits).
  void Refuse(Stage stage, std::string msg, std::string way_out) {
    if (!plan.fits) return;
    Fail(stage, std::move(msg));
    if (plan.refusal.empty()) plan.refusal = std::move(way_out);
  }
};

// --mm-encoder-tp-mode data (MultiModalConfig.mm_encoder_tp_mode, vllm/config/multimodal.py):
// where the model class declares supports_encoder_tp_data (Qwen2VL, Qwen2_5_VL, Qwen3VL and the
// classes built on them) the vision tower and projector are built with disable_tp, whole on
// every rank, and run_dp_sharded_mrope_vision_model (vision.py) gives each rank a share of the
// items, the outputs all-gathered; elsewhere ModelConfig falls back to "weights" with a warning.
// Under TP 1 the two modes are the same.
void EncoderTpMode(Run& r) {
  const VllmSettings& s = r.s;
  if (!s.mm_encoder_tp_data) return;
  const VisionKind kind = r.spec.vision.kind;
  if (kind == VisionKind::kNone || s.language_model_only) {
    r.plan.without_effect.push_back(
        "--mm-encoder-tp-mode data: no vision encoder is built (a text-only model, or "
        "--language-model-only)");
  } else if (r.tp <= 1) {
    r.plan.without_effect.push_back(
        "--mm-encoder-tp-mode data: under TP 1 the encoder is whole on the one GPU either way");
  } else if (kind != VisionKind::kQwen2Vl && kind != VisionKind::kQwen25Vl &&
             kind != VisionKind::kQwen3Vl) {
    r.plan.notes.push_back(fmt::format(
        "--mm-encoder-tp-mode data: not modelled for this model's encoder ({}); planned as "
        "weights, the encoder sharded over the {} ranks (vLLM falls back to weights where the "
        "model does not support data; where it does, the encoder is whole on every rank)",
        r.spec.architecture.empty() ? "its vision tower" : r.spec.architecture, r.tp));
  } else {
    r.encoder_tp_data = true;
    r.plan.notes.push_back(fmt::format(
        "--mm-encoder-tp-mode data: the vision tower and projector whole on each of the {} "
        "ranks (built with disable_tp), each rank encoding its share of the profile's items "
        "with all the encoder's heads",
        r.tp));
  }
}

// The release, the flag checks and vLLM's defaults.
Status ResolveSettings(Run& r) {
  VllmSettings& s = r.s;
  VllmPlan& plan = r.plan;
  int version = vllm::kNewestModelled;
  if (!s.version.empty()) {
    auto v = vllm::ParseRelease(s.version);
    if (!v.ok()) return v.status();
    version = *v;
  }
  if (s.v0_engine) {
    // VLLM_USE_V1=0: the V0 engine, default until 0.8 and removed in 0.11 (vllm/worker/worker.py).
    if (s.version.empty()) {
      version = vllm::kOldestModelled;
      plan.notes.push_back("V0 engine (VLLM_USE_V1=0): planned with vLLM 0.10's V0 worker, the "
                           "last release that has it");
    } else if (!vllm::RulesFor(version).has_v0_engine) {
      return Invalid(fmt::format("VLLM_USE_V1=0: the V0 engine was removed in vLLM 0.11; vLLM {} "
                                 "has only V1", s.version));
    }
  }
  r.rules = vllm::RulesFor(version);
  plan.modelled_version = r.rules.text;
  if (r.rules.v0_only && !s.v0_engine) {
    s.v0_engine = true;
    plan.notes.push_back(fmt::format("vLLM {} runs the V0 engine (vllm/worker/worker.py; V1 became "
                                     "the default in 0.8)",
                                     r.rules.text));
  }
  if (s.version.empty() && s.v0_engine) {
  } else if (s.version.empty()) {
    plan.notes.push_back(fmt::format("vLLM {}: the newest release whose source was read; later "
                                     "releases are assumed unchanged (--engine vllm@X.Y to choose)",
                                     plan.modelled_version));
  } else if (r.rules.release != version) {
    plan.notes.push_back(fmt::format("vLLM {} is planned with the rules of {}, the nearest "
                                     "modelled release", ReleaseText(version),
                                     plan.modelled_version));
  }
  // One model instance over more than the 8 GPUs of an HGX host spans hosts: vLLM's custom
  // all-reduce stays off for a group that spans nodes (distributed/device_communicators/
  // custom_all_reduce.py, "spans across nodes", read at 0.22), so its collectives run on NCCL's
  // network transport, whose buffers the plan charges as for one host (validation record
  // deepseek-r1-h800x16-2node-tp16-ep-ray-len32768-mns256-mnbt32768-v0.8.4-issue16692).
  if (const int64_t instance = s.tensor_parallel_size * s.pipeline_parallel_size;
      instance > kGpusPerHost) {
    plan.notes.push_back(fmt::format(
        "{} GPUs per model instance (TP {} x PP {}) span more than one {}-GPU host: vLLM's "
        "custom all-reduce does not cross hosts, so collectives run on NCCL's network transport, "
        "whose buffers are not modelled; a published two-host start (TP 16 over two 8-GPU "
        "nodes) held about 2 GiB per GPU more than the plan: keep that headroom",
        instance, s.tensor_parallel_size, s.pipeline_parallel_size, kGpusPerHost));
  }
  if (r.gpu.unified_memory) {
    // MemorySnapshot.measure (vllm/utils/mem_utils.py, read at 0.13) takes free memory from
    // psutil's available system memory on the parts that share it with the CPU, and the non-torch
    // increase runs from the worker's first snapshot to the end of the profile.
    plan.notes.push_back(fmt::format(
        "{} shares its memory with the CPU: vLLM reads free memory from the host's available "
        "memory, so other processes, the page cache and what start-up takes on the host count "
        "against the budget; the plan cannot see them (free host memory before launch, or lower "
        "--gpu-memory-utilization). The total CUDA reports follows the host's memory and OS{}; "
        "the plan takes {}: give --gpu-memory beside --gpu with the total your vLLM prints "
        "('Free memory on device (free/total GiB)')",
        r.gpu.name,
        r.gpu.name.find("GB10") != std::string::npos
            ? " (published GB10 starts print 119.63 to 121.69 GiB)"
            : "",
        FormatBytes(r.gpu.total_bytes)));
  }
  // Model runner V2 (vllm/v1/worker/gpu/model_runner.py), the default for some models from
  // v0.22: its source profiles less than V1 (the sampler warm-up holds the bf16 logits and their
  // fp32 copy, 6 B a logit; profile_cudagraph_memory returns 0 before v0.29). That is what a start
  // with a warm torch.compile cache pays (Qwen3-8B on an RTX 4090 at v0.27.1: a 0.19 GiB peak,
  // the forward's), but a first start compiles inside the profile run and paid about 1 GiB more
  // there (1.18 GiB), about what V1's charges give; the plan keeps V1's charges
  // (docs/engines/vllm.md, "Model runner V2").
  // LoRA sizes without --enable-lora: LoRAConfig is not made (EngineArgs.create_lora_config
  // returns None), so they change nothing.
  const bool lora_sizes = s.max_loras != 1 || s.max_lora_rank != 16 || s.max_cpu_loras > 0 ||
                          s.lora_dtype != "auto" || s.fully_sharded_loras ||
                          s.lora_extra_vocab_size >= 0;
  if (!s.enable_lora && lora_sizes) {
    plan.without_effect.push_back("--max-loras, --max-lora-rank, --max-cpu-loras, --lora-dtype, "
                                  "--fully-sharded-loras: vLLM makes no LoRA slots without "
                                  "--enable-lora");
  }
  if (s.enable_lora && s.fully_sharded_loras && s.max_lora_rank % s.tensor_parallel_size != 0) {
    return Invalid(fmt::format(
        "--fully-sharded-loras: --max-lora-rank {} is not divisible by --tensor-parallel-size {} "
        "(vLLM's divide() in create_lora_weights asserts it)",
        s.max_lora_rank, s.tensor_parallel_size));
  }
  if (s.enable_lora && s.max_cpu_loras > 0) {
    plan.notes.push_back(fmt::format("--max-cpu-loras {}: adapters cached in host memory, no GPU "
                                     "memory",
                                     s.max_cpu_loras));
  }
  KvOffloadingNotes(r.spec, s, &plan);
  const Compilation comp = ResolveCompilation(r.rules, s);
  r.compiles = comp.compiles;
  r.graph_mode = comp.graph_mode;
  r.graph_why = comp.why;
  r.fusion_passes = comp.fusion_passes;
  if (s.optimization_level >= 0 && !s.v0_engine) {
    plan.notes.push_back(
        r.rules.optimization_levels
            ? fmt::format("-O{}: vLLM's optimization level (config/vllm.py, PR #26847): {}, "
                          "CUDA graphs {}{}",
                          s.optimization_level,
                          comp.compiles ? "torch.compile runs in the profile run"
                                        : "no torch.compile",
                          comp.graph_mode,
                          s.enforce_eager ? " (--enforce-eager overrides it to -O0)" : "")
            : fmt::format("-O{}: before vLLM 0.12 -O is --compilation-config's level (PR "
                          "#10437): {}, CUDA graphs {}{}",
                          s.optimization_level,
                          comp.compiles ? "torch.compile runs in the profile run"
                                        : "no torch.compile",
                          comp.graph_mode,
                          s.enforce_eager ? " (--enforce-eager turns both off)" : ""));
  } else if (s.optimization_level >= 0) {
    plan.without_effect.push_back(fmt::format(
        "-O{}: the V0 engine captures its own CUDA graphs whatever the compilation level",
        s.optimization_level));
  }
  const bool quantized = r.spec.quant.method != QuantMethod::kNone || !s.quantization.empty();
  const bool v2_default = vllm::ModelRunnerV2ByDefault(r.rules, r.spec.architecture,
                                                       r.spec.CountMoeLayers() > 0, quantized);
  // What V2 does not support yet falls back to V1 where V2 is the default, and is refused where
  // VLLM_USE_V2_MODEL_RUNNER=1 asks for it (config/vllm.py _get_v2_model_runner_unsupported_
  // features, read at the 0.22-era source: "Model runner v2 does not yet support %s; using the v1
  // model runner instead", and _validate_v2_model_runner's ValueError). Modelled: hybrid and Mamba
  // models (model_config.has_inner_state: linear-attention layers) and speculative methods other
  // than eagle, eagle3 and mtp. A 0.26.0 start of the hybrid Qwen3.8-27B at TP 4 logs V1's
  // gpu_model_runner.py (test-half record ...-dfch-llmops-tp4-rerun).
  std::string v2_unsupported;
  if (std::any_of(r.spec.layers.begin(), r.spec.layers.end(), [](const LayerSpec& l) {
        return l.attention.kind == AttentionKind::kLinear;
      })) {
    v2_unsupported = "hybrid/mamba models";
  } else if (!s.speculative_method.empty() && s.speculative_method != "eagle" &&
             s.speculative_method != "eagle3" && s.speculative_method != "mtp" &&
             s.speculative_method.find("_mtp") == std::string::npos) {
    v2_unsupported = s.speculative_method == "ngram" || s.speculative_method == "ngram_gpu"
                         ? "ngram/ngram_gpu speculative decoding"
                         : fmt::format("speculative method '{}'", s.speculative_method);
  }
  if (!s.v0_engine && s.use_v2_model_runner < 0 && v2_default && !v2_unsupported.empty()) {
    plan.notes.push_back(fmt::format(
        "vLLM {} would run {} on model runner V2 by default, but V2 does not yet support {}: "
        "vLLM logs \"Model runner v2 does not yet support {}; using the v1 model runner "
        "instead\" and the plan charges V1",
        ReleaseText(version), r.spec.architecture.empty() ? "this model" : r.spec.architecture,
        v2_unsupported, v2_unsupported));
  }
  if (!s.v0_engine && (s.use_v2_model_runner == 1 ||
                       (s.use_v2_model_runner < 0 && v2_default && v2_unsupported.empty()))) {
    r.graphs_outside_budget = version < 2900;
    r.v2_profile = !r.compiles || s.compile_cache_warm;
    r.v2_first_start = !r.v2_profile;
    const std::string arch = r.spec.architecture.empty() ? "this model" : r.spec.architecture;
    plan.notes.push_back(fmt::format(
        "{}: {}{}",
        s.use_v2_model_runner == 1
            ? fmt::format("VLLM_USE_V2_MODEL_RUNNER=1 runs {} on model runner V2", arch)
            : fmt::format("vLLM {} runs {} on model runner V2 by default "
                          "(VLLM_USE_V2_MODEL_RUNNER=0 selects V1)",
                          ReleaseText(version), arch),
        !r.v2_profile
            ? "the plan charges model runner V1's profile run (V2's source charges less, what a "
              "start with a warm torch.compile cache pays; a first start compiles during the "
              "profile and the published ones paid about what V1's charges give)"
            : !r.compiles
            ? fmt::format("with {} nothing is compiled, so the plan charges V2's own profile run",
                          s.enforce_eager ? "--enforce-eager" : r.graph_why)
            : "with a warm torch.compile cache the profile compiles nothing, so the plan charges "
              "V2's own profile run",
        r.graphs_outside_budget ? "; before v0.29 V2 reserves no CUDA-graph memory, so it "
                                  "captures the graphs on top of the budget"
                                : ""));
  } else if (s.compile_cache_warm) {
    // The warm cache changes only model runner V2's charges (above); V1 and V0 are charged
    // their profile run either way, so the flag is named rather than silently dropped.
    plan.without_effect.push_back(fmt::format(
        "--compile-cache-warm: vLLM {} runs {} on {}, whose profile run the "
        "plan charges the same with a warm or a cold torch.compile cache (a warm cache is "
        "modelled for model runner V2 only)",
        ReleaseText(version),
        r.spec.architecture.empty() ? "this model" : r.spec.architecture,
        s.v0_engine || r.rules.v0_only ? "the V0 engine" : "model runner V1"));
  }
  // Flags (vLLM's own checks where it has them).
  VRAMFIT_RETURN_IF_ERROR(vllm::CheckKvCacheDtypeChoice(r.rules, s.kv_cache_dtype, s.version));
  if (s.tensor_parallel_size < 1 || s.pipeline_parallel_size < 1 || s.data_parallel_size < 1) {
    return Invalid("--tensor-parallel-size, --pipeline-parallel-size and --data-parallel-size must "
                   "be >= 1");
  }
  if (s.gpu_memory_utilization < 0 || s.gpu_memory_utilization > 1) {
    return Invalid(fmt::format("--gpu-memory-utilization {} must be in (0, 1]",
                               s.gpu_memory_utilization));
  }
  // The ranges the flag reader enforces, for callers of the library that skip it: every product
  // of these stays inside 64 bits.
  constexpr int64_t kMaxTokens = (int64_t{1} << 31) - 1, kMaxParallel = 4096;
  if (s.tensor_parallel_size > kMaxParallel || s.pipeline_parallel_size > kMaxParallel ||
      s.data_parallel_size > kMaxParallel || s.max_model_len > kMaxTokens ||
      s.max_num_seqs > kMaxTokens || s.max_num_batched_tokens > kMaxTokens ||
      s.block_size > kMaxTokens || !std::isfinite(s.cpu_offload_gb) ||
      s.cpu_offload_gb > (1 << 20) || !std::isfinite(s.gpu_memory_utilization)) {
    return Invalid("settings out of range: parallel sizes up to 4096, token counts up to "
                   "2147483647, --cpu-offload-gb up to 1048576, finite fractions");
  }
  if (s.max_model_len < -1) {
    return Invalid(fmt::format("--max-model-len {} must be positive (or auto)", s.max_model_len));
  }
  if (s.max_num_seqs < 0 || s.max_num_batched_tokens < 0 || s.block_size < 0 ||
      s.cpu_offload_gb < 0) {
    return Invalid("--max-num-seqs, --max-num-batched-tokens, --block-size and --cpu-offload-gb "
                   "must be positive");
  }
  if (!s.quantization.empty()) {
    const QuantScheme& q = r.spec.quant;
    const std::string& m = s.quantization;
    const std::string base = m.substr(0, m.find("_marlin"));  // awq_marlin -> awq
    if (q.quantized()) {
      const std::string cfg = q.method_text;
      // AutoRound: the config's auto-round / intel/auto-round and the flag's auto-round,
      // auto_round or inc name one method (INCConfig.override_quantization_method).
      const bool auto_round = model::IsAutoRoundMethod(cfg) &&
                              (model::IsAutoRoundMethod(m) || m == "inc");
      if (base != cfg && !(base == "fp8" && cfg == "fp8") && !auto_round) {
        // vllm/config/model.py _verify_quantization.
        return Invalid(fmt::format("Quantization method specified in the model config ({}) does "
                                   "not match the quantization method specified in the "
                                   "`quantization` argument ({}).", cfg, m));
      }
    } else if (m != "fp8" && m != "bitsandbytes") {
      return Invalid(fmt::format("--quantization {} needs a checkpoint already quantized with {}; "
                                 "this one is not quantized (vLLM quantizes online only to fp8, "
                                 "or bitsandbytes; `--as-quantized {}` plans the checkpoint a "
                                 "quantizer would write)", m, base,
                                 base == "awq" || base == "gptq" ? base : "awq|gptq|fp8"));
    }
  }
  r.tp = static_cast<uint64_t>(s.tensor_parallel_size);
  plan.gpu_count = s.tensor_parallel_size * s.pipeline_parallel_size * s.data_parallel_size;
  if (s.gpu_memory_utilization == 0) {
    s.gpu_memory_utilization = r.rules.default_gpu_memory_utilization;
  }
  int64_t derived = vllm::DerivedMaxModelLen(r.spec);
  // --disable-sliding-window caps the derived length at the window (_get_and_verify_max_len:
  // "If sliding window is manually disabled, max_length should be less than the sliding window
  // length in the model config").
  const bool window_capped = s.sliding_window_cap > 0 && s.sliding_window_cap < derived;
  if (window_capped) derived = s.sliding_window_cap;
  if (s.sliding_window_cap > 0) {
    plan.notes.push_back(fmt::format(
        "--disable-sliding-window: every sliding-window layer caches the whole context, and vLLM "
        "caps the derived maximum length at the window ({} tokens{})",
        core::GroupDigits(static_cast<uint64_t>(s.sliding_window_cap)),
        window_capped ? "" : ", above the model's own maximum here"));
  }
  if (s.max_model_len == -1) {
    r.auto_len = true;
    s.max_model_len = derived;
  } else if (s.max_model_len == 0) {
    s.max_model_len = derived;
  }
  // A length past the derived one is refused while the config is built (ValueError from
  // _get_and_verify_max_len), before anything is allocated: a startup failure, the rest of
  // the plan computed at the length asked for.
  const bool too_long = s.max_model_len > derived && !s.allow_long_max_model_len;
  vllm::ApplySchedulerDefaults(r.rules, r.gpu, &s);
  const vllm::ModelDtype md = vllm::ResolveModelDtype(r.spec, r.gpu, s.dtype);
  r.model_dtype = md.dtype;
  r.act_bytes = static_cast<uint64_t>(DtypeBits(md.dtype) / 8);
  if (!md.note.empty()) plan.notes.push_back(md.note);
  r.plan.fits = true;
  if (too_long) {
    r.Refuse(Stage::kStartup,
             vllm::MaxLenError(s.max_model_len, derived,
                               window_capped ? "sliding_window" : "max_position_embeddings"),
             vllm::MaxLenWayOut(r.spec, s.max_model_len, derived, window_capped));
  }
  // Attention heads that TP does not divide (config/model.py verify_with_parallel_config,
  // while the engine's config is built): the TP sizes that divide them, the same GPUs as
  // pipeline stages where one does.
  if (const int64_t heads = vllm::AttentionHeads(r.spec);
      heads > 0 && heads % s.tensor_parallel_size != 0) {
    r.Refuse(Stage::kStartup,
             fmt::format("Total number of attention heads ({}) must be divisible by tensor "
                         "parallel size ({}).",
                         heads, s.tensor_parallel_size),
             vllm::HeadsWayOut(r.spec, s.tensor_parallel_size, s.pipeline_parallel_size));
    r.ko.allow_uneven_heads = true;
  }
  if (auto refusal = vllm::ArchitectureRefusal(r.spec, version)) {
    r.Fail(refusal->stage, refusal->message);
    r.plan.refusal = refusal->change;
  }
  if (auto refusal = vllm::RopeScalingRefusal(r.spec, r.rules, s.version)) {
    r.Fail(refusal->stage, refusal->message);
    if (r.plan.refusal.empty()) r.plan.refusal = refusal->change;
  }
  if (md.refusal) r.Fail(md.refusal->stage, md.refusal->message);
  // Chunked prefill off with a batched-token budget below the length: SchedulerConfig.
  // verify_max_model_len raises it (config/scheduler.py, read at 0.22; V0's scheduler config
  // checked the same).
  if (s.enable_chunked_prefill == 0 && s.max_num_batched_tokens < s.max_model_len) {
    r.Refuse(Stage::kStartup,
             fmt::format("max_num_batched_tokens ({}) is smaller than max_model_len ({}). This "
                         "effectively limits the maximum sequence length to "
                         "max_num_batched_tokens and makes vLLM reject longer sequences. Please "
                         "increase max_num_batched_tokens or decrease max_model_len.",
                         s.max_num_batched_tokens, s.max_model_len),
             fmt::format("with chunked prefill off, --max-num-batched-tokens {} (at least "
                         "--max-model-len), a --max-model-len of at most {}, or chunked prefill "
                         "back on (drop --no-enable-chunked-prefill)",
                         s.max_model_len, s.max_num_batched_tokens));
  }
  if (!s.v0_engine && s.use_v2_model_runner == 1 && !v2_unsupported.empty()) {
    r.Fail(Stage::kStartup,
           fmt::format("VLLM_USE_V2_MODEL_RUNNER does not yet support: {}", v2_unsupported));
    if (r.plan.refusal.empty()) {
      r.plan.refusal = fmt::format("vLLM's model runner V2 does not yet support {}; drop "
                                   "VLLM_USE_V2_MODEL_RUNNER=1 (vLLM then runs model runner V1)",
                                   v2_unsupported);
    }
  }
  // vLLM's CUDA kernels are built for compute capability 7.0 and up (CMakeLists.txt
  // CUDA_SUPPORTED_ARCHS: "7.0;7.5;8.0;..." for CUDA before 12.8, from 7.5 with 12.8+; read at
  // 0.22): on a Pascal card (6.x) its first custom kernel has no image to run.
  if (const int gpu_cc = vllm::ComputeCapability(r.gpu); gpu_cc > 0 && gpu_cc < 70) {
    r.Fail(Stage::kStartup,
           fmt::format("CUDA error: no kernel image is available for execution on the device "
                       "(vLLM's kernels are built for compute capability 7.0 and up; the {} is "
                       "{}.{}: a GPU of 7.0 or newer, or llama.cpp / Ollama / transformers, which "
                       "run on Pascal)",
                       r.gpu.name, gpu_cc / 10, gpu_cc % 10));
  }
  if (s.speculative_aliases && !r.rules.spec_alias_flags) {
    r.Refuse(Stage::kStartup,
             fmt::format("vllm serve: error: unrecognized arguments: --spec-method/--spec-model/"
                         "--spec-tokens (vLLM {} has no such flags; they came with 0.22, PR "
                         "#42476)",
                         r.rules.text),
             fmt::format("--speculative-config '{}' instead of the --spec-* flags (vLLM {} has "
                         "no such flags)",
                         s.speculative_config, r.rules.text));
  }
  if (auto refusal =
          vllm::ConfigRefusal(r.spec, r.gpu, r.rules, s.quantization, r.model_dtype)) {
    r.Fail(refusal->stage, refusal->message);
  }
  if (auto refusal = vllm::ContextParallelConfigRefusal(
          r.spec, r.rules, s.tensor_parallel_size, s.decode_context_parallel_size);
      refusal && r.plan.fits) {
    r.Fail(refusal->stage, refusal->message);
    r.plan.refusal = refusal->change;
  }
  // EPLB (vllm/config/parallel.py ParallelConfig.__post_init__, read at 0.22): config-time
  // ValueErrors.
  if (r.plan.fits && s.enable_eplb && !s.enable_expert_parallel) {
    r.Refuse(Stage::kStartup, "enable_expert_parallel must be True to use EPLB.",
             "add --enable-expert-parallel, or drop --enable-eplb");
  } else if (r.plan.fits && s.enable_eplb &&
             s.tensor_parallel_size * s.data_parallel_size <= 1) {
    r.Refuse(Stage::kStartup,
             fmt::format("EPLB requires tensor_parallel_size or data_parallel_size to be "
                         "greater than 1, but got TP={},DP={}.",
                         s.tensor_parallel_size, s.data_parallel_size),
             "drop --enable-eplb (one rank has no experts to balance), or run on more GPUs");
  } else if (r.plan.fits && !s.enable_eplb && s.num_redundant_experts != 0) {
    r.Refuse(Stage::kStartup,
             fmt::format("num_redundant_experts is set to {} but EPLB is not enabled. Either "
                         "enable EPLB or unset num_redundant_experts.",
                         s.num_redundant_experts),
             "add --enable-eplb, or drop --num-redundant-experts");
  }
  // The NVFP4 KV cache is read only by FlashInfer's trtllm-gen kernels on SM100 at these
  // releases (PR #40177: "end-to-end NVFP4 KV cache inference works through FlashInfer on
  // Blackwell (SM100)"; SM8x and SM12x paths were still open PRs, #46963 and #49011, in
  // 2026-06/07): no attention backend takes it elsewhere.
  const int cc = vllm::ComputeCapability(r.gpu);
  if (s.kv_cache_dtype == "nvfp4" && cc != 0 && cc / 10 != 10 && r.plan.fits) {
    r.Fail(Stage::kStartup,
           fmt::format("--kv-cache-dtype nvfp4 needs FlashInfer's trtllm-gen attention on a "
                       "compute capability 10.x GPU (B200, GB200, B300); the {} is {}.{}: no "
                       "attention backend vLLM selects reads an NVFP4 KV cache there",
                       r.gpu.name, cc / 10, cc % 10));
  }
  // --enable-dbo (PR #23693, 0.11): micro-batching asserts a DeepEP all-to-all
  // (config/vllm.py VllmConfig.__post_init__, read at 0.22; deepep_high_throughput accepted from
  // PR #30120, 2025-12-16).
  const std::string a2a =
      s.all2all_backend.empty() ? std::string("allgather_reducescatter") : s.all2all_backend;
  if (s.enable_dbo && r.plan.fits && a2a != "deepep_low_latency" &&
      a2a != "deepep_high_throughput") {
    r.Refuse(Stage::kStartup,
             fmt::format("Microbatching currently only supports the deepep_low_latency and "
                         "deepep_high_throughput all2all backend. {} is not supported. To fix "
                         "use --all2all-backend=deepep_low_latency or "
                         "--all2all-backend=deepep_high_throughput and install the DeepEP "
                         "kernels.",
                         a2a),
             "--all2all-backend deepep_low_latency (with the DeepEP kernels installed), or drop "
             "--enable-dbo");
  }
  // The all-to-all kernels other than the default keep their own buffers (DeepEP's NVSHMEM
  // buffers, pplx's, FlashInfer's workspaces), which the plan does not size.
  if (a2a != "allgather_reducescatter" && a2a != "naive") {
    r.plan.not_counted.push_back(fmt::format(
        "the {} all-to-all backend's communication buffers (--all2all-backend{})", a2a,
        s.enable_dbo ? "; with --enable-dbo, the second micro-batch's" : ""));
  }
  // --attention-backend: a flag from 0.13 (argparse refuses it before); a backend the user names
  // is validated against the model and the GPU and refused with no fallback when a check fails
  // (attention_backend.cc).
  if (!s.attention_backend.empty() && r.plan.fits && !r.rules.attention_backend_flag) {
    r.Refuse(Stage::kStartup,
             fmt::format("vllm serve: error: unrecognized arguments: --attention-backend {} "
                         "(vLLM {} chooses the backend with VLLM_ATTENTION_BACKEND={}; the flag "
                         "came with 0.13)",
                         s.attention_backend, r.rules.text, s.attention_backend),
             fmt::format("VLLM_ATTENTION_BACKEND={} in the environment instead of "
                         "--attention-backend (the flag came with vLLM 0.13)",
                         s.attention_backend));
  } else if (r.plan.fits) {
    if (auto refusal = vllm::AttentionBackendRefusal(r.spec, r.gpu, s, r.model_dtype)) {
      r.Fail(refusal->stage, refusal->message);
    }
  }
  // fp8_ds_mla is the packed layout of the sparse MLA backends only (FLASHMLA_SPARSE and
  // B12X_MLA_SPARSE list it in supported_kv_cache_dtypes; mla_attention.py converts fp8 to it
  // for them): a model with dense attention or dense MLA, all the plan models, gets no backend.
  if (s.kv_cache_dtype == "fp8_ds_mla" && r.plan.fits) {
    r.Refuse(Stage::kStartup,
             "--kv-cache-dtype fp8_ds_mla is read only by the sparse MLA attention backends "
             "(FLASHMLA_SPARSE, B12X_MLA_SPARSE) of DeepSeek V3.2-style models: no attention "
             "backend vLLM selects for this model takes it; --kv-cache-dtype fp8 is the FP8 "
             "cache it reads",
             "--kv-cache-dtype fp8 instead of fp8_ds_mla");
  }
  return Status::Ok();
}

// Stage 0: startup. requested = ceil(total x utilization) against free memory.
void Startup(Run& r) {
  const VllmSettings& s = r.s;
  const uint64_t total = r.gpu.total_bytes;
  // NCCL is outside the budget from v0.11 (snapshot after NCCL init, PR #25359) and in the V0
  // worker; V1 before v0.11 took the snapshot first, so NCCL fell into non-torch memory.
  // Ranks with NCCL communicators: TP > 1, or data parallel with expert parallelism, whose EP
  // group spans the DP ranks (distributed/parallel_state.py initialize_model_parallel: every
  // group of more than one rank gets a device communicator).
  const bool nccl = r.tp > 1 || (s.data_parallel_size > 1 && s.enable_expert_parallel);
  r.nccl_in_budget =
      nccl && (s.v0_engine ? vllm::LegacyNcclInBudget(r.rules) : r.rules.nccl_in_budget);
  r.ctx = kCudaContext + (nccl && !r.nccl_in_budget ? kNcclPerRank : 0);
  r.requested = static_cast<uint64_t>(
      std::ceil(static_cast<double>(total) * s.gpu_memory_utilization));
  r.free_at_start = total > r.ctx + s.other_process_bytes ? total - r.ctx - s.other_process_bytes
                                                          : 0;
  r.g.total_bytes = total;
  r.g.budget_bytes = r.requested;
  r.g.cuda_context_bytes = r.ctx;
  r.g.explain.push_back({"budget", r.requested,
                         fmt::format("ceil(total {} x gpu_memory_utilization {})",
                                     FormatBytes(total), s.gpu_memory_utilization)});
  if (r.free_at_start < r.requested) {
    r.Fail(Stage::kStartup,
           fmt::format("Free memory on device cuda:0 ({:.2f}/{:.2f} GiB) on startup is less than "
                       "desired GPU memory utilization ({}, {:.2f} GiB). Decrease GPU memory "
                       "utilization or reduce GPU memory used by other processes.",
                       static_cast<double>(r.free_at_start) / kGiB,
                       static_cast<double>(total) / kGiB, s.gpu_memory_utilization,
                       static_cast<double>(r.requested) / kGiB));
  }
}

// Stage 1: load. Weights per rank and the load transient.
// --enable-lora's slots on one rank (lora.h): the buffers, what the release leaves unmodelled,
// and the profile's shrink buffer.
void LoraSlots(Run& r) {
  const VllmSettings& s = r.s;
  vllm::LoraOptions o;
  o.max_loras = s.max_loras;
  o.max_lora_rank = s.max_lora_rank;
  o.tensor_parallel_size = s.tensor_parallel_size;
  o.fully_sharded = s.fully_sharded_loras;
  o.dtype_bytes = s.lora_dtype == "auto" ? r.act_bytes : 2;
  o.batched_tokens = static_cast<uint64_t>(s.max_num_batched_tokens);
  o.target_modules = s.lora_target_modules;
  const vllm::LoraSlots slots = vllm::LoraSlotBytes(r.spec, o, r.rules);
  r.lora = slots.total();
  r.lora_profile = slots.profile_bytes;
  r.g.lora_bytes = r.lora;
  r.g.explain.push_back(
      {"lora", r.lora,
       fmt::format("--max-loras {} x --max-lora-rank {} slots{}: {}", s.max_loras,
                   s.max_lora_rank, s.fully_sharded_loras ? " (fully sharded)" : "",
                   slots.formula)});
  for (const std::string& n : slots.not_modelled) {
    r.plan.notes.push_back("--enable-lora: " + n + " are not modelled");
    r.plan.not_counted.push_back("LoRA: " + n);
  }
  r.plan.notes.push_back(fmt::format(
      "--enable-lora: {} of adapter slots per GPU, made at load with the weights (vLLM's "
      "\"Model loading took\" includes them); the profile run adds {} of LoRA shrink buffers",
      FormatBytes(r.lora), FormatBytes(r.lora_profile)));
  // FusedMoEWithLoRA (lora/layers/fused_moe.py, read at upstream main of 2026) asserts that
  // expert parallelism is off and that the experts run on the Triton kernel (Marlin only for
  // MXFP4 weights): a 4-bit AWQ/GPTQ or another quantized MoE may be refused at start-up. The
  // releases that assert it were not read one by one: named, not planned.
  const bool moe = std::any_of(r.spec.layers.begin(), r.spec.layers.end(),
                               [](const LayerSpec& l) { return l.mlp.kind == MlpKind::kMoe; });
  const QuantMethod q = r.spec.quant.method;
  if (moe && r.rules.lora_fused_moe &&
      (s.enable_expert_parallel || (q != QuantMethod::kNone && q != QuantMethod::kMxfp4))) {
    const std::string why =
        s.enable_expert_parallel
            ? "with --enable-expert-parallel (\"EP support for Fused MoE LoRA is not implemented "
              "yet\")"
            : fmt::format("on {} experts (the LoRA path needs the Triton experts kernel)",
                          QuantMethodName(q));
    r.plan.notes.push_back("--enable-lora: vLLM may refuse LoRA on this MoE model " + why +
                           "; not modelled");
    r.plan.not_counted.push_back("LoRA on a MoE model " + why + ": vLLM may refuse to start");
  }
}

// Weight offloading (OffloadConfig, vllm/config/offload.py; model_executor/offloader/, read at
// 0.22): the backend is --offload-backend, or with "auto" prefetch where --offload-group-size is
// set, else UVA where --cpu-offload-gb is; the other backend's settings are ignored. The bytes
// each takes off the GPU, net of what it puts back there.
//  - UVA: --cpu-offload-gb is GiB (set_cpu_offload_max_bytes(int(gb * 1024**3))).
//  - Prefetch (PR #29941, merged 2026-02-25, from v0.17): make_layers hands each rank's decoder
//    layers to PrefetchOffloader.wrap_modules, which moves to CPU the layers whose index on the
//    rank, modulo the group size, is among the group's last `num_in_group` (group 8, 2 in the
//    group: layers 6, 7, 14, 15, ...); post_init then allocates a StaticBufferPool holding
//    `prefetch_step` copies of each distinct offloaded parameter (name, shape, stride, dtype), so
//    layers of one kind share the buffers: step x one layer of each kind (layer kinds are told
//    apart by their bytes here, which counts two kinds that share a parameter twice).
Result<uint64_t> WeightOffload(Run& r, const VllmWeightOptions& wo) {
  const VllmSettings& s = r.s;
  std::string backend = s.offload_backend;
  if (backend.empty()) {
    backend = s.offload_group_size > 0 ? "prefetch" : s.cpu_offload_gb > 0 ? "uva" : "";
  }
  const uint64_t uva = static_cast<uint64_t>(s.cpu_offload_gb * static_cast<double>(kGiB));
  if (backend == "uva" || backend.empty()) {
    if (uva > 0 && !s.cpu_offload_params.empty()) {
      r.plan.notes.push_back(
          "--cpu-offload-params: vLLM offloads only the parameters it names, up to "
          "--cpu-offload-gb; the plan takes the whole --cpu-offload-gb off the GPU (where the "
          "named parameters hold less, the GPU keeps more)");
    }
    if (s.offload_group_size > 0 && backend == "uva") {
      r.plan.notes.push_back("--offload-backend uva: the prefetch settings are ignored");
    }
    return uva;
  }
  // Prefetch.
  if (!r.rules.prefetch_offload) {
    r.Refuse(Stage::kStartup,
             fmt::format("vllm serve: error: unrecognized arguments: {} (vLLM {} has no "
                         "prefetch weight offloading; it came with 0.17, PR #29941: "
                         "--cpu-offload-gb offloads weights there)",
                         s.offload_backend == "prefetch" ? "--offload-backend"
                                                         : "--offload-group-size",
                         r.rules.text),
             fmt::format("--cpu-offload-gb instead of the prefetch offloading flags (vLLM {} has "
                         "no prefetch offloading; it came with 0.17)",
                         r.rules.text));
    return uint64_t{0};
  }
  if (uva > 0) {
    r.plan.notes.push_back(
        "--cpu-offload-gb is ignored: vLLM selects the prefetch offloader (UVA settings are "
        "ignored with it)");
  }
  if (s.offload_num_in_group > s.offload_group_size) {
    r.Refuse(Stage::kStartup,
             fmt::format("ValueError: offload_num_in_group ({}) must be <= offload_group_size "
                         "({})",
                         s.offload_num_in_group, s.offload_group_size),
             fmt::format("--offload-num-in-group of at most --offload-group-size ({})",
                         s.offload_group_size));
    return uint64_t{0};
  }
  if (s.offload_prefetch_step < 1) {
    r.Refuse(Stage::kStartup,
             fmt::format("ValueError: offload_prefetch_step ({}) must be >= 1 when prefetch "
                         "offloading is enabled (offload_group_size > 0)",
                         s.offload_prefetch_step),
             "--offload-prefetch-step 1 or more");
    return uint64_t{0};
  }
  if (!s.offload_params.empty()) {
    r.plan.notes.push_back(
        "--offload-params: not modelled (the plan cannot tell which bytes of each layer the "
        "named parameters hold); planned without the prefetch offloading, all weights on the "
        "GPU");
    return uint64_t{0};
  }
  const int64_t total_layers = static_cast<int64_t>(r.spec.layers.size());
  const int64_t first = wo.layers >= 0 ? wo.first_layer : 0;
  const int64_t count = wo.layers >= 0 ? wo.layers : total_layers;
  const int64_t group = s.offload_group_size, in_group = s.offload_num_in_group;
  uint64_t moved = 0;
  int64_t layers_moved = 0;
  std::vector<uint64_t> kinds;  // one layer's bytes of each kind moved
  for (int64_t k = 0; k < count && first + k < total_layers; ++k) {
    if (k % group < group - in_group) continue;
    VllmWeightOptions one = wo;
    one.first_layer = first + k;
    one.layers = 1;
    one.first_stage = false;
    one.last_stage = false;
    auto lw = VllmWeightsPerRank(r.profile, one);
    if (!lw.ok()) return lw.status();
    moved += lw->bytes_per_rank;
    ++layers_moved;
    if (std::find(kinds.begin(), kinds.end(), lw->bytes_per_rank) == kinds.end()) {
      kinds.push_back(lw->bytes_per_rank);
    }
  }
  uint64_t pool = 0;
  for (const uint64_t b : kinds) pool += b * static_cast<uint64_t>(s.offload_prefetch_step);
  pool = std::min(pool, moved);
  r.g.explain.push_back(
      {"prefetch_offload", moved - pool,
       fmt::format("{} of {} decoder layers in CPU memory (the last {} of every {}): {} moved, "
                   "{} of GPU buffers for {} layer(s) in flight",
                   layers_moved, count, in_group, group, FormatBytes(moved), FormatBytes(pool),
                   s.offload_prefetch_step)});
  r.plan.notes.push_back(fmt::format(
      "prefetch offloading: {} decoder layers in CPU memory ({}), each copied in over PCIe "
      "every forward, {} layer(s) ahead of use; {} of GPU buffers hold the layers in flight",
      layers_moved, FormatBytes(moved), s.offload_prefetch_step, FormatBytes(pool)));
  return moved - pool;
}

Status Load(Run& r) {
  const VllmSettings& s = r.s;
  const GpuSpec& gpu = r.gpu;
  VllmWeightOptions wo;
  wo.tensor_parallel_size = s.tensor_parallel_size;
  wo.enable_expert_parallel = s.enable_expert_parallel;
  wo.data_parallel_size = s.data_parallel_size;
  wo.num_redundant_experts = s.enable_eplb ? s.num_redundant_experts : 0;
  for (const LayerSpec& l : r.spec.layers) {
    wo.num_routed_experts = std::max<int64_t>(wo.num_routed_experts, l.mlp.num_experts);
  }
  const int cc = vllm::ComputeCapability(gpu);
  wo.marlin = gpu.vendor == "nvidia" && (cc == 0 || cc >= (r.rules.marlin_on_turing ? 75 : 80));
  if (r.model_dtype != r.spec.dtype) wo.model_dtype_bits = DtypeBits(r.model_dtype);
  // Speculative decoding with the checkpoint's own MTP layers loads them (Qwen3-Next/3.5,
  // DeepSeek: vllm/config/speculative.py maps "mtp" to the model's MTP module).
  const std::string& spec_method = s.speculative_method;
  wo.load_speculative_mtp = vllm::SpeculativeUsesOwnLayers(spec_method);
  const bool separate_draft = !spec_method.empty() && !wo.load_speculative_mtp &&
                              spec_method != "ngram" && spec_method != "suffix";
  if (separate_draft && (!s.draft_inventory || !s.draft_inventory->has_spec)) {
    r.plan.notes.push_back(fmt::format(
        "--speculative-config {}: the draft model{}{} was not read, so its weights and KV cache "
        "are not modelled; add them (a draft of D parameters costs about 2 x D bytes per GPU in "
        "16 bits)",
        spec_method, s.draft_model.empty() ? "" : " ", s.draft_model));
    r.plan.not_counted.push_back(fmt::format(
        "the speculative draft model{}{} (not read): its weights and KV cache",
        s.draft_model.empty() ? "" : " ", s.draft_model));
  } else if (separate_draft) {
    r.draft = &s.draft_inventory->spec;
  }
  wo.quantization = s.quantization;
  wo.rules = r.rules;
  wo.language_model_only = s.language_model_only;
  EncoderTpMode(r);
  wo.encoder_replicated = r.encoder_tp_data;
  if (s.language_model_only && !r.rules.language_model_only_flag) {
    if (!r.rules.limit_mm_flag) {
      return Invalid(fmt::format(
          "--language-model-only: vLLM {} has neither it (added in 0.16, PR #34120) nor "
          "--limit-mm-per-prompt (0.5.5, PR #7126), so a text-only start cannot be asked for",
          r.rules.text));
    }
    r.plan.notes.push_back(fmt::format(
        "--language-model-only: vLLM {} does not have it (added in 0.16, PR #34120) and refuses "
        "the line; planned as text only, and the command says so as that release does: "
        "--limit-mm-per-prompt {}",
        r.rules.text, r.rules.limit_mm_json ? "'{\"image\":0,\"video\":0}'" : "image=0,video=0"));
  }
  wo.mxfp4_backend = VllmMxfp4Backend(cc, r.rules);
  // VLLM_MXFP4_USE_MARLIN=1: get_mxfp4_backend (v0.14) checks it after the SM100 FlashInfer
  // branches, so it moves only the Triton choice to Marlin.
  if (s.mxfp4_use_marlin && wo.mxfp4_backend == "triton") wo.mxfp4_backend = "marlin";
  if (r.stage()) {
    wo.first_layer = s.stage_first_layer;
    wo.layers = s.stage_layers;
    wo.first_stage = s.pipeline_stage == 0;
    wo.last_stage = s.pipeline_stage == s.pipeline_parallel_size - 1;
  }
  if (auto refusal = vllm::LayerRefusal(r.inv, gpu, r.rules, s.tensor_parallel_size,
                                        s.enable_expert_parallel, s.quantization)) {
    r.Fail(refusal->stage, refusal->message);
  }
  auto w = VllmWeightsPerRank(r.profile, wo);
  if (!w.ok()) return w.status();
  r.w = *w;
  if (r.spec.family == "gemma4" && r.spec.per_layer_input_size > 0 &&
      s.max_num_batched_tokens > 0) {
    // Gemma 4 E2B/E4B (models/gemma4_mm.py, read at 0.19): the model keeps a zeroed buffer of
    // max_num_batched_tokens x layers x hidden_size_per_layer_input for the per-layer inputs,
    // made with the model, in its dtype.
    // Saturating: a hostile config's widths can multiply past 64 bits.
    uint64_t ple = static_cast<uint64_t>(s.max_num_batched_tokens);
    for (uint64_t f : {static_cast<uint64_t>(r.spec.layers.size()),
                       static_cast<uint64_t>(r.spec.per_layer_input_size),
                       static_cast<uint64_t>(DtypeBits(r.model_dtype) / 8)}) {
      if (!core::CheckedMul(ple, f, &ple)) ple = UINT64_MAX;
    }
    for (uint64_t* x : {&r.w.bytes_per_rank, &r.w.load_peak_per_rank}) {
      if (!core::CheckedAdd(*x, ple, x)) *x = UINT64_MAX;
    }
  }
  if (r.spec.quant.layout == QuantLayout::kMxfp4Blocks) {
    const std::string& be = wo.mxfp4_backend;
    r.plan.notes.push_back(fmt::format(
        "MXFP4 MoE experts: vLLM's {} backend ({}); {}",
        be == "triton"   ? "Triton (triton_kernels)"
        : be == "marlin" ? "Marlin"
                         : "FlashInfer TRT-LLM",
        cc > 0 ? fmt::format("compute capability {}.{}, vLLM {}", cc / 10, cc % 10, r.rules.text)
               : "compute capability unknown",
        be == "triton"
            ? "VLLM_MXFP4_USE_MARLIN=1 would select Marlin, whose padded layout is larger"
        : s.mxfp4_use_marlin && cc == 90 && r.rules.mxfp4_triton_kernels
            ? "VLLM_MXFP4_USE_MARLIN=1 (Triton otherwise, with smaller weights)"
        : be == "marlin" && cc == 90
            ? "before 0.12 vLLM picks Triton (smaller weights) only where triton_kernels was "
              "installed by hand"
            : "as vLLM's get_mxfp4_backend picks it"));
  }
  if (model::IsAutoRoundMethod(r.spec.quant.method_text) && w->kernel.rfind("auto-round", 0) == 0) {
    // quantization/auto_round.py (0.11-0.20), quantization/inc/inc.py (0.21+).
    r.plan.notes.push_back(fmt::format(
        "weights: {} checkpoint served by vLLM's AutoRound/INC config with the {} kernel per "
        "layer; modules its extra_config keeps at 16 bits, and those outside "
        "block_name_to_quantize, load unquantized",
        r.spec.quant.method_text, w->kernel.substr(12, w->kernel.size() - 13)));
  }
  uint64_t weights = w->bytes_per_rank;
  if (r.draft != nullptr) {
    // The draft loads inside the target's "Model loading took" (gpu_model_runner.py load_model:
    // drafter.load_model in the same DeviceMemoryProfiler block), sharded at the target's TP
    // (v1/spec_decode/draft_model.py refuses another TP; EAGLE heads use the target's parallel
    // config), in the target's dtype, with its own quantization. Its embedding and lm_head are
    // counted as stored: vLLM shares them with the target only when the checkpoint has none
    // or they are equal (_maybe_share_embeddings, from #28549), which headers cannot tell.
    // docs/engines/vllm-speculative.md has the reading (v0.16.0 and main).
    uint64_t draft_bytes = 0;
    if (spec_method == "dflash") {
      // DFlash: its layers and a replicated fc in the target's dtype, the target's embedding
      // and lm_head shared (dflash.cc has the shapes, qwen3_dflash.py).
      draft_bytes = vllm::DflashWeightsPerRank(*r.draft, r.tp, DtypeBits(r.model_dtype)).total();
      if (r.draft->quant.quantized()) {
        r.plan.notes.push_back(fmt::format(
            "--speculative-config dflash: the drafter's {} quantization is not modelled; its "
            "weights are counted in {} bits",
            r.draft->quant.method_text, DtypeBits(r.model_dtype)));
      }
    } else {
      VllmWeightOptions dwo = wo;
      dwo.load_speculative_mtp = false;
      dwo.quantization.clear();
      dwo.model_dtype_bits =
          r.model_dtype != r.draft->dtype ? DtypeBits(r.model_dtype) : 0;
      auto dw = VllmWeightsPerRank(*s.draft_inventory, dwo);
      if (!dw.ok()) return dw.status();
      draft_bytes = dw->bytes_per_rank;
    }
    weights += draft_bytes;
    r.plan.notes.push_back(fmt::format(
        "--speculative-config {}: draft model {} adds {} of weights per GPU (TP {}) and its {} "
        "layer(s) page in the same KV cache pool",
        spec_method, s.draft_model.empty() ? "(given)" : s.draft_model,
        FormatBytes(draft_bytes), r.tp, r.draft->layers.size()));
    if (s.pipeline_parallel_size > 1) {
      r.plan.notes.push_back("pipeline parallel with a draft model: the whole draft is charged "
                             "to the planned stage and its layers to its KV pool");
    }
    r.with_draft = r.spec;
    for (const LayerSpec& l : r.draft->layers) r.with_draft->layers.push_back(l);
  }
  if (wo.load_speculative_mtp && r.draft == nullptr && r.spec.mtp_layers > 0) {
    // The checkpoint's own MTP layers are decoder layers of layer_type "full_attention" (MLA for
    // DeepSeek) whose Attention registers a KV cache spec like any decoder layer
    // (vllm/model_executor/models/qwen3_next_mtp.py, Qwen3NextMultiTokenPredictor: main
    // 055e47c2; deepseek_mtp.py likewise), so they page in the same KV pool: one more attention
    // layer per MTP layer, which changes the hybrid grouping (a Qwen3.6-35B-A3B MTP start logs
    // "Add 3 padding layers": 11 attention layers against 30 linear ones).
    const LayerSpec* attn = nullptr;
    for (const LayerSpec& l : r.spec.layers) {
      if (l.attention.kind == AttentionKind::kFull || l.attention.kind == AttentionKind::kMla)
        attn = &l;
    }
    if (attn != nullptr) {
      r.with_draft = r.spec;
      for (int64_t k = 0; k < r.spec.mtp_layers; ++k) r.with_draft->layers.push_back(*attn);
    }
  }
  auto offload = WeightOffload(r, wo);
  if (!offload.ok()) return offload.status();
  weights = weights > *offload ? weights - *offload : 0;
  r.g.weights_bytes = weights;
  // --enable-lora: the slots' buffers, made after the weights are loaded and post-processed
  // (the load transient is gone by then) and inside the load's DeviceMemoryProfiler, so vLLM's
  // "Model loading took" and the KV budget count them with the weights.
  if (s.enable_lora) LoraSlots(r);
  r.weights = weights + r.lora;
  r.g.load_peak_bytes = weights + std::max(w->transient_bytes, r.lora);
  r.g.explain.push_back(
      {"weights", weights,
       fmt::format("checkpoint tensors sharded for TP {} ({} kernel){}{}", r.tp, w->kernel,
                   w->dropped_bytes ? fmt::format(", {} of quantization metadata freed",
                                                  FormatBytes(w->dropped_bytes))
                                    : "",
                   w->skipped_bytes ? fmt::format(", {} of MTP layers not loaded",
                                                  FormatBytes(w->skipped_bytes))
                                    : "",
                   w->tower_skipped_bytes
                       ? fmt::format(", {} of vision tower not loaded (--language-model-only)",
                                     FormatBytes(w->tower_skipped_bytes))
                       : "")});
  r.g.explain.push_back(
      {"load_peak", r.g.load_peak_bytes,
       w->transient_bytes ? fmt::format("weights + {} ({})", FormatBytes(w->transient_bytes),
                                        w->transient_reason)
                          : std::string("weights (no transient on this path)")});
  if (r.plan.fits && r.g.load_peak_bytes > r.free_at_start) {
    r.Fail(Stage::kLoad,
           fmt::format("CUDA out of memory while loading weights: the load needs {} per GPU ({} of "
                       "weights + {} {}) but {} is free. --gpu-memory-utilization does not "
                       "help a load-time OOM; use more tensor parallelism, a smaller quantization, "
                       "{}or --cpu-offload-gb.",
                       FormatBytes(r.g.load_peak_bytes), FormatBytes(weights),
                       FormatBytes(std::max(w->transient_bytes, r.lora)),
                       r.lora > w->transient_bytes ? "of LoRA slots" : "transient",
                       FormatBytes(r.free_at_start),
                       r.lora > 0 ? "fewer or smaller LoRA slots (--max-loras, --max-lora-rank), "
                                  : ""));
  }
  return Status::Ok();
}

// The side of the Qwen-VL processors' largest square image under `max_pixels`: transformers'
// image smart_resize of vLLM's 9,999,999 x 9,999,999 probe (qwen2_vl.py
// get_image_size_with_most_features), floor(side / beta / unit) x unit, in the same order of
// floating-point operations.
uint64_t Qwen3VlImageSide(uint64_t max_pixels, uint64_t unit) {
  const double probe = 9999999.0;
  const double beta = std::sqrt(probe * probe / static_cast<double>(max_pixels));
  const double side = std::floor(probe / beta / static_cast<double>(unit));
  return std::max<uint64_t>(1, static_cast<uint64_t>(side)) * unit;
}

// One Qwen3-VL video of `frames` square frames of `side` pixels, as vLLM counts it
// (qwen3_vl.py _get_vision_info, v0.11 to ~v0.22): the video processor's smart_resize
// (transformers models/qwen3_vl/video_processing_qwen3_vl.py) shrinks the frames so that the
// frames rounded to the temporal patch (Python's round, halves to even) times height times width
// stay under longest_edge, or grows them over shortest_edge; then frames are padded to the
// temporal patch, and the tower sees grid_t x (h / patch)^2 patches, the language model one
// embedding per merge^2 of them.
struct VideoItem {
  uint64_t frames = 0, side = 0, patches = 0, embeds = 0;
};
VideoItem Qwen3VlVideo(const VisionSpec& v, uint64_t frames, uint64_t side) {
  const uint64_t patch = static_cast<uint64_t>(std::max<int64_t>(1, v.patch_size));
  const uint64_t merge = static_cast<uint64_t>(std::max<int64_t>(1, v.spatial_merge_size));
  const uint64_t tp = static_cast<uint64_t>(std::max<int64_t>(1, v.temporal_patch_size));
  const double f = static_cast<double>(patch * merge);
  const double px = static_cast<double>(frames) * static_cast<double>(side * side);
  const uint64_t t_bar = static_cast<uint64_t>(std::nearbyint(static_cast<double>(frames) /
                                                               static_cast<double>(tp))) * tp;
  uint64_t h = side;
  if (t_bar * side * side > kQwen3VlVideoMaxPixels) {
    const double beta = std::sqrt(px / static_cast<double>(kQwen3VlVideoMaxPixels));
    h = std::max(patch * merge, static_cast<uint64_t>(std::floor(side / beta / f) * f));
  } else if (t_bar * side * side < kQwen3VlVideoMinPixels) {
    const double beta = std::sqrt(static_cast<double>(kQwen3VlVideoMinPixels) / px);
    h = static_cast<uint64_t>(std::ceil(side * beta / f) * f);
  }
  VideoItem item;
  item.frames = frames;
  item.side = h;
  const uint64_t grid_t = std::max<uint64_t>(1, (frames + frames % tp) / tp);
  item.patches = grid_t * (h / patch) * (h / patch);
  item.embeds = item.patches / (merge * merge);
  return item;
}

// Qwen3-VL's dummy video at `rules`' release for a `max_model_len` of `len` and an image of
// `image_pixels` at most (docs/engines/vllm-multimodal-and-allreduce.md, A.4). Up to v0.14
// (get_num_frames_with_most_features, _get_max_video_frames from 2 frames): the most frames,
// counting up one at a time while the video's embeddings stay within max_model_len, at most
// 24,576, each frame starting at the largest image's size. From v0.15: 2 frames at the largest
// image of longest_edge / temporal_patch_size pixels.
VideoItem Qwen3VlDummyVideo(const VisionSpec& v, const vllm::Rules& rules, uint64_t len,
                            uint64_t image_pixels) {
  const uint64_t unit = static_cast<uint64_t>(std::max<int64_t>(1, v.patch_size) *
                                              std::max<int64_t>(1, v.spatial_merge_size));
  if (rules.qwen3vl_video_two_frames) {
    const uint64_t tp = static_cast<uint64_t>(std::max<int64_t>(1, v.temporal_patch_size));
    return Qwen3VlVideo(v, 2, Qwen3VlImageSide(kQwen3VlVideoMaxPixels / tp, unit));
  }
  const uint64_t side = Qwen3VlImageSide(image_pixels, unit);
  uint64_t frames = 2;
  while (frames < kQwen3VlMaxDummyFrames && Qwen3VlVideo(v, frames + 1, side).embeds <= len) {
    ++frames;
  }
  return Qwen3VlVideo(v, frames, side);
}

// The vision tower's activation bytes per patch at its peak, for vision hidden size h,
// intermediate size i and tp ranks. The MLP: the residual, the normed input and the block
// output, and the gate/up and activation outputs at 1/tp: 2 B x (3h + 3i / tp). On v0.11.0
// (Rules::vision_rotary_fp32_qk) the attention peaks higher, per patch with a = h / tp (the
// heads of one rank; qwen2_5_vl.py Qwen2_5_VisionAttention.forward and
// apply_rotary_pos_emb_vision, 2025-09-14 to 2025-11-16): the block input and the normed input
// the block passes in (2h + 2h B), the qkv output (6a), contiguous q, k, v (6a), q and k
// concatenated (4a), their fp32 copy (8a), the fp32 rotary output (8a) and its bf16 cast (4a):
// 4h + 36a B. With tp > 1 split_qkv first all-gathers the qkv (all_gather_interleave: tp
// zero-filled shards and their interleaved concatenation, 6h B each) beside the local qkv:
// 16h + 6a B.
uint64_t VisionTowerBytesPerPatch(const VisionSpec& v, const vllm::Rules& rules, uint64_t tp) {
  const uint64_t h = static_cast<uint64_t>(v.hidden_size);
  const uint64_t mlp = 2 * (3 * h + 3 * static_cast<uint64_t>(v.intermediate_size) / tp);
  if (!rules.vision_rotary_fp32_qk) return mlp;
  const uint64_t a = h / tp;
  return std::max({mlp, 4 * h + 36 * a, tp > 1 ? 16 * h + 6 * a : 0});
}

// The multimodal encoder's profile: the most items of the dummy modality the token budget
// holds, through the ViT (`vit`), and their embeddings, which vLLM stores (`stored`; Qwen-VL
// families).
struct EncoderProfile {
  uint64_t vit = 0;     // the tower's activations over every patch of every item
  uint64_t stored = 0;  // the items' output embeddings, cached through the profile
  uint64_t peak() const { return vit + stored; }
};
EncoderProfile EncoderActivation(Run& r, uint64_t mnbt, uint64_t reqs) {
  const VllmSettings& s = r.s;
  const VisionSpec& v = r.spec.vision;
  if (v.kind != VisionKind::kQwen25Vl && v.kind != VisionKind::kQwen3Vl &&
      v.kind != VisionKind::kQwen2Vl) {
    if (v.kind == VisionKind::kGemma4 && !s.language_model_only) {
      // The encoder's dummy batch runs before the language model's and its activations are
      // freed before it; the E4B start in the validation set left 1.20 GiB more KV memory
      // than this plan, so there the text model's peak bounds it.
      r.plan.notes.push_back(
          "Gemma 4's vision encoder profile (vLLM's dummy images or video frames, 280 soft "
          "tokens an image) is not charged on its own: it runs and frees its activations before "
          "the language model's dummy batch, whose peak the plan charges (a measured E4B start "
          "left 1.20 GiB more KV memory than planned; docs/validation.md); "
          "--language-model-only skips it");
    } else if (v.kind != VisionKind::kNone && !s.language_model_only) {
      // Pixtral (Mistral 3), SigLIP (Gemma 3) and the towers read as "other": the profile
      // run's dummy images through the encoder are not charged on their own (said, not
      // silently left out); the language model's dummy batch is.
      r.plan.notes.push_back(fmt::format(
          "the vision encoder's profile ({}: vLLM's dummy images of the largest size the "
          "processor allows, --limit-mm-per-prompt of them) is not charged on its own: the plan "
          "charges the language model's dummy batch, and the encoder's activations for many "
          "large images may exceed it; --language-model-only skips the encoder",
          r.spec.architecture.empty() ? "this model's tower" : r.spec.architecture));
    }
    return {};
  }
  // --language-model-only: no modality is active, so profile_run skips the encoder
  // (supports_mm_inputs is false; v1/worker/gpu_model_runner.py).
  if (s.language_model_only) return {};
  const uint64_t unit = static_cast<uint64_t>(v.patch_size * v.spatial_merge_size);
  const uint64_t merge2 = static_cast<uint64_t>(v.spatial_merge_size * v.spatial_merge_size);
  // --mm-processor-kwargs first, then the checkpoint's preprocessor_config.json, then the
  // processor's default.
  const uint64_t max_pixels = s.max_pixels > 0 ? static_cast<uint64_t>(s.max_pixels)
                              : v.max_pixels > 0 ? static_cast<uint64_t>(v.max_pixels)
                              : v.kind == VisionKind::kQwen3Vl ? kQwen3VlMaxPixels
                                                               : kQwen2VlMaxPixels;
  const uint64_t tok_image = std::max<uint64_t>(1, max_pixels / (unit * unit));
  const uint64_t len = static_cast<uint64_t>(std::max<int64_t>(s.max_model_len, 0));
  // Videos (V1; docs/engines/vllm-multimodal-and-allreduce.md, part A). vLLM profiles one
  // modality, the active one (limit > 0, or unset) with the most tokens per item, counted for
  // one item whatever the limit (MultiModalBudget, get_modality_with_max_tokens). Qwen2-VL and
  // Qwen2.5-VL (qwen2_vl.py, same from v0.11 to ~v0.22) make the dummy video of frames at the
  // image size, two frames to a temporal patch, as many as max_model_len holds up to 14:
  // n x max(1, min(max_model_len / n, 7)) tokens for n tokens an image; a tie goes to the
  // image before v0.17, to video from v0.17 (Rules::mm_tie_prefers_video).
  // Qwen3-VL: Qwen3VlDummyVideo. Up to v0.12 its budget counts 12.5 tokens per embedding
  // (int(embeddings x 12.5)), so its video wins over any image; from v0.13 the embeddings
  // themselves, fewer than an image's at the processors' default sizes.
  uint64_t tok_video = 0;
  VideoItem clip;
  if (!s.v0_engine && s.limit_videos != 0) {
    if (v.kind == VisionKind::kQwen3Vl) {
      clip = Qwen3VlDummyVideo(v, r.rules, len, max_pixels);
      tok_video = r.rules.qwen3vl_video_timestamps ? clip.embeds * 25 / 2 : clip.embeds;
    } else {
      tok_video = tok_image * std::clamp<uint64_t>(len / tok_image, 1, 7);
      clip.frames = 2 * tok_video / tok_image;
      clip.embeds = tok_video;
      clip.patches = tok_video * merge2;
    }
  } else if (s.limit_videos > 0) {
    r.plan.notes.push_back(fmt::format(
        "--limit-mm-per-prompt video={}: the V0 encoder profile is modelled for images only "
        "(videos not modelled)", s.limit_videos));
  }
  const bool video =
      tok_video > 0 && (s.limit_images == 0 || tok_video > tok_image ||
                        (tok_video == tok_image && r.rules.mm_tie_prefers_video));
  if (!video && s.limit_images == 0) return {};
  const uint64_t tok_item = video ? tok_video : tok_image;
  const uint64_t budget = std::max(mnbt, tok_item);
  const int64_t limit = video ? s.limit_videos : s.limit_images;
  const uint64_t per_prompt = limit > 0 ? static_cast<uint64_t>(limit) : kUnlimitedItems;
  const uint64_t items = std::max<uint64_t>(
      1, std::min(budget / tok_item,
                  reqs * std::min<uint64_t>(per_prompt, s.max_model_len / tok_item + 1)));
  // The tower runs every patch of every item; each item's output is cached through the text
  // dummy run: Qwen3-VL's rows carry the merger's output and one more per deepstack layer side
  // by side (qwen3_vl.py Qwen3_VisionTransformer.forward, v0.11 to ~v0.22), and v0.11 pads each
  // output to the budget's rows (Rules::mm_outputs_padded_to_budget).
  const uint64_t embeds = video ? clip.embeds : tok_image;
  // Data mode: this rank encodes its share of the items (the largest share, whole items) with
  // every head of the tower; the outputs are all-gathered, so every rank stores them all.
  const uint64_t encoded = r.encoder_tp_data ? (items + r.tp - 1) / r.tp : items;
  const uint64_t patches = encoded * (video ? clip.patches : tok_image * merge2);
  const uint64_t vit =
      patches * VisionTowerBytesPerPatch(v, r.rules, r.encoder_tp_data ? 1 : r.tp);
  const uint64_t rows = r.rules.mm_outputs_padded_to_budget ? std::max(budget, embeds) : embeds;
  const uint64_t width =
      static_cast<uint64_t>(v.out_hidden_size > 0 ? v.out_hidden_size : r.spec.hidden_size) *
      (1 + v.deepstack_indexes.size());
  const uint64_t stored = items * rows * width * 2;
  std::string shape;
  if (video) {
    shape = clip.side > 0 ? fmt::format(", {} frames of {}x{}: {} embeddings, {} patches",
                                        clip.frames, clip.side, clip.side, clip.embeds,
                                        clip.patches)
                          : fmt::format(", {} frames", clip.frames);
  }
  r.g.explain.push_back(
      {"encoder", vit + stored,
       fmt::format("{} {} of {} tokens ({} max_pixels{}): ViT activations {} + stored "
                   "embeddings {}{}",
                   items, video ? "video(s)" : "image(s)", tok_item, max_pixels, shape,
                   FormatBytes(vit), FormatBytes(stored),
                   rows > embeds ? fmt::format(" (padded to the budget's {} rows)", rows) : "")});
  return {vit, stored};
}

// The activation peak of the planned pipeline stage (the whole model without PP). Per stage
// (v1/worker/gpu_model_runner.py profile_run and _dummy_run, 0.10 to ~0.22; V0
// worker/model_runner.py profile_run alike):
// - every stage runs the dummy forward over max_num_batched_tokens through its own layers;
// - only the last stage computes logits and runs the sampler warm-up (`if
//   get_pp_group().is_last_rank: ... _dummy_sampler_run`; model runner V2,
//   v1/worker/gpu/model_runner.py, `if self.is_last_pp_rank`); the drafter of speculative
//   decoding is made on the last stage only too;
// - every stage after the first receives the hidden states and residual of max_num_batched_tokens
//   tokens into a buffer _dummy_run makes during the profile and keeps
//   (make_empty_intermediate_tensors), so the buffer is under that stage's whole peak.
// The forward's activations are freed before the sampler runs; the encoder profile is charged to
// every stage. V1 runs the encoder first and keeps its outputs in `encoder_cache` through the
// text dummy run and the sampler warm-up, clearing it only after both
// (v1/worker/gpu_model_runner.py profile_run: `self.encoder_cache["tmp"] = ...` before
// `_dummy_run`, `self.encoder_cache.clear()` after `_dummy_sampler_run`; the same order in the
// source of April 2025 (0.8), October 2025 (0.11.0) and May 2026), so the stored embeddings add
// to the larger of the tower, the forward and the sampler; V0 runs the encoder inside its one
// dummy forward and is charged the larger of the three. Under tensor parallelism nothing of the
// sampler is divided: V1 all-gathers the lm_head's vocabulary shards on every rank
// (platforms/interface.py use_all_gather: true under VLLM_USE_V1 in 0.10, always from 0.11), and
// each rank runs the warm-up over the full vocabulary; only the forward's sharded intermediates
// are per rank (ForwardActivation). The V0 engine gathers the logits to the driver (TP rank 0)
// alone, which alone samples; its pool is the smallest over the workers too, so the driver binds
// and the plan charges every rank as it.
StageActivation PipelineStageActivation(const Run& r, uint64_t mnbt, uint64_t sampler,
                                        const EncoderProfile& encoder) {
  const VllmSettings& s = r.s;
  const uint64_t dp = static_cast<uint64_t>(s.data_parallel_size);
  StageActivation st;
  st.stage = r.stage() ? s.pipeline_stage : 0;
  st.samples = !r.stage() || s.pipeline_stage == s.pipeline_parallel_size - 1;
  st.layers = r.spec.layers.size();
  st.forward = ForwardActivation(r.spec, mnbt, r.tp, s.enable_expert_parallel, dp, r.rules,
                                 r.act_bytes, 0, st.layers);
  st.forward += r.lora_profile;  // the dummy LoRAs' shrink buffers (LoraSlots)
  if (r.draft != nullptr && st.samples) {
    // profile_run then runs the drafter's dummy forward over the same tokens, after the
    // target's activations are freed (gpu_model_runner.py _dummy_run -> drafter.dummy_run,
    // v0.16.0): the peak is the larger of the two. A DFlash drafter reads the hidden states of
    // the target layers its fc takes (dflash_config.target_layer_ids): the target returns them
    // beside its output (use_aux_hidden_state_outputs), and _dummy_run keeps that `outputs`
    // tuple alive through drafter.dummy_run (`hidden_states, _ = outputs`), so those layers'
    // states, taps x tokens x hidden in the model dtype on every rank, sit under the drafter's
    // forward.
    if (s.speculative_method == "dflash") {
      const uint64_t taps = r.draft->dflash_target_layers > 0
                                ? static_cast<uint64_t>(r.draft->dflash_target_layers)
                                : r.draft->layers.size();
      st.draft_aux = taps * mnbt * static_cast<uint64_t>(r.spec.hidden_size) * r.act_bytes;
    }
    st.forward = std::max(st.forward, st.draft_aux + ForwardActivation(*r.draft, mnbt, r.tp,
                                                                       s.enable_expert_parallel,
                                                                       dp, r.rules, r.act_bytes));
  }
  // Model runner V2 makes the receive buffer at load, outside the profile (Run::v2_profile).
  st.received = st.stage > 0 && !r.v2_profile
                    ? 2 * mnbt * static_cast<uint64_t>(r.spec.hidden_size) * r.act_bytes
                    : 0;
  const uint64_t samples = st.samples ? sampler : 0;
  st.peak = st.received + (s.v0_engine ? std::max({st.forward, samples, encoder.peak()})
                                       : encoder.stored +
                                             std::max({st.forward, samples, encoder.vit}));
  return st;
}

// The sampler warm-up's top-k/top-p path (see kSamplerBytesPerLogit*).
struct SamplerPath {
  uint64_t per_logit = 0;
  bool install_dependent = false;  // v0.8-v0.11.0 with VLLM_USE_FLASHINFER_SAMPLER unset
  bool installed = false;          // the same, with FlashInfer said to be installed
  bool triton = false;             // the Triton top-k/top-p kernel (TritonTopkScratch)
};
SamplerPath ChooseSamplerPath(const VllmSettings& s, const vllm::Rules& rules) {
  if (s.v0_engine) return {kSamplerBytesPerLogitSort};
  const SamplerPath native = rules.sampler_native_triton
                                 ? SamplerPath{kSamplerBytesPerLogitTriton, false, false, true}
                                 : SamplerPath{kSamplerBytesPerLogitSort};
  // FlashInfer's sampler: the default again from v0.21, charged at those releases' 22 B.
  const bool flashinfer_default =
      !rules.sampler_flashinfer_if_installed && !rules.sampler_sorts && !rules.sampler_triton;
  const uint64_t flashinfer =
      flashinfer_default ? kSamplerBytesPerLogit : kSamplerBytesPerLogitFlashInfer;
  if (s.flashinfer_sampler == 0) return native;
  if (s.flashinfer_sampler == 1) return {flashinfer};
  // FlashInfer installed (VllmOptions::flashinfer_installed): TopKTopPSampler takes
  // forward_cuda where flashinfer imports and VLLM_USE_FLASHINFER_SAMPLER is not False.
  if (rules.sampler_flashinfer_if_installed && s.flashinfer_installed) {
    return {kSamplerBytesPerLogitFlashInfer, false, true};
  }
  if (rules.sampler_flashinfer_if_installed) return {kSamplerBytesPerLogitSort, true};
  return flashinfer_default ? SamplerPath{flashinfer} : native;
}

// The Triton top-k/top-p kernel's scratch (v1/sample/ops/topk_topp_triton.py
// apply_top_k_top_p_triton, PR #33538, v0.17+; topk_topp_sampler.py apply_top_k_top_p takes the
// kernel for 8 or more requests): one fp32 vocabulary row per Triton program,
// min(next_power_of_2(min(SMs, requests)), SMs) rows, allocated by the sampler warm-up and kept
// in _TRITON_BUFFER_CACHE. 82 rows of 128,256 logits on an RTX 3090 (0.04 GiB), 132 of 151,936
// on an H100 (0.07 GiB). A card the catalog has no SM count for (--gpu-memory) is charged
// kUnknownSms rows, the H100's.
constexpr uint64_t kUnknownSms = 132;
uint64_t TritonTopkScratch(const GpuSpec& gpu, uint64_t requests, uint64_t vocab) {
  constexpr uint64_t kFewestRequests = 8;
  if (requests < kFewestRequests) return 0;
  const uint64_t sms = gpu.sm_count > 0 ? static_cast<uint64_t>(gpu.sm_count) : kUnknownSms;
  const uint64_t programs = std::min(sms, requests);
  uint64_t rows = 1;
  while (rows < programs) rows *= 2;
  return std::min(rows, sms) * vocab * 4;
}

// --skip-mm-profiling (V1, gpu_model_runner.py profile_run, read at 0.22: "Skipping memory
// profiling for multimodal encoder and encoder cache."): the encoder's profile is not charged
// to the budget, so the KV pool takes its memory; MultiModalConfig's help puts the encoder's
// peak on the user. The first request with as many items as the profile would have run needs
// it beside the pool, in what the budget leaves on the card.
void SkipEncoderProfile(Run& r, EncoderProfile* enc) {
  if (!r.s.skip_mm_profiling) return;
  if (enc->peak() == 0) {
    r.plan.notes.push_back(
        "--skip-mm-profiling: no multimodal encoder is profiled for this model and settings; "
        "nothing changes");
    return;
  }
  if (r.s.v0_engine) {
    r.plan.notes.push_back(
        "--skip-mm-profiling: not modelled for the V0 engine (its profile run is planned with "
        "the encoder)");
    return;
  }
  r.plan.notes.push_back(fmt::format(
      "--skip-mm-profiling: the encoder's profile ({}: the vision tower's activations and the "
      "items' embeddings) is not charged to the budget, so the KV cache takes it; vLLM needs it "
      "beside the pool at the first request with as many items (the plan's runtime check)",
      FormatBytes(enc->peak())));
  r.skipped_encoder = enc->peak();
  r.g.explain.push_back({"encoder_at_first_request", enc->peak(),
                         "the encoder's profile that --skip-mm-profiling kept out of the budget, "
                         "allocated beside the pool at the first request with as many items"});
  *enc = {};
}

// Stage 2: profile (activation peak, sampler, encoder, non-torch growth).
void Profile(Run& r) {
  const VllmSettings& s = r.s;
  const uint64_t mnbt = static_cast<uint64_t>(s.max_num_batched_tokens);
  const uint64_t reqs = static_cast<uint64_t>(std::min(s.max_num_seqs, s.max_num_batched_tokens));
  const SamplerPath path =
      r.v2_profile ? SamplerPath{kSamplerBytesPerLogitV2} : ChooseSamplerPath(s, r.rules);
  const uint64_t per_logit = path.per_logit;
  // One logits row per request (gpu_model_runner.py _dummy_run's logits_indices: the last
  // token of each), over the whole vocabulary (PipelineStageActivation: on the last stage, on
  // every TP rank).
  const uint64_t vocab = static_cast<uint64_t>(r.spec.vocab_size);
  const uint64_t scratch =
      path.triton && !r.v2_profile ? TritonTopkScratch(r.gpu, reqs, vocab) : 0;
  const uint64_t sampler = reqs * vocab * per_logit + scratch;
  if (scratch > 0) {
    r.g.explain.push_back(
        {"sampler_topk_scratch", scratch,
         fmt::format("the Triton top-k/top-p kernel's scratch: one fp32 row of {} logits per "
                     "program, {} programs ({} SMs{}), kept after the warm-up (in the sampler's "
                     "peak)",
                     vocab, scratch / (vocab * 4),
                     r.gpu.sm_count > 0 ? r.gpu.sm_count : static_cast<int>(kUnknownSms),
                     r.gpu.sm_count > 0 ? "" : ", the H100's: the card's count is not known")});
  }
  EncoderProfile enc = EncoderActivation(r, mnbt, reqs);
  SkipEncoderProfile(r, &enc);
  // What the sampler competes with for the peak: V1 keeps the stored embeddings under all three
  // (PipelineStageActivation), so only the tower; V0 the whole encoder profile.
  const uint64_t encoder = s.v0_engine ? enc.peak() : enc.vit;
  const uint64_t under = s.v0_engine ? 0 : enc.stored;
  r.act = PipelineStageActivation(r, mnbt, sampler, enc);
  if (r.act.draft_aux > 0) {
    r.g.explain.push_back(
        {"draft_aux_states", r.act.draft_aux,
         fmt::format("the DFlash drafter's tapped target hidden states, {} tokens x hidden {} "
                     "per layer read, alive under its dummy forward (in the forward below)",
                     mnbt, r.spec.hidden_size)});
  }
  const uint64_t deq = r.w.largest_dequantized_layer;
  r.act.peak = s.measured_activation_bytes > 0 ? s.measured_activation_bytes : r.act.peak + deq;
  const StageActivation* top = &r.act;
  r.activation = top->peak;
  const uint64_t fwd = top->forward;
  if (!s.v0_engine && !r.v2_profile && s.measured_activation_bytes == 0 && top->samples &&
      sampler >= std::max(fwd, encoder)) {
    // The spread up to the sort's cost (none where the release sorts).
    r.sampler_spread = reqs * static_cast<uint64_t>(r.spec.vocab_size) *
                       (kSamplerBytesPerLogitSort - per_logit);
  }
  if (path.install_dependent && s.measured_activation_bytes == 0 && top->samples &&
      sampler > std::max(fwd, encoder)) {
    const uint64_t flashinfer =
        reqs * static_cast<uint64_t>(r.spec.vocab_size) * kSamplerBytesPerLogitFlashInfer;
    r.plan.notes.push_back(fmt::format(
        "sampler warm-up: charged at the PyTorch sort's {} B per logit, what vLLM {} runs "
        "without FlashInfer (a pip install; the log says \"FlashInfer is not available\"). With "
        "FlashInfer installed (vLLM's Docker image, `pip install vllm[flashinfer]` or "
        "flashinfer-python beside the wheel) it samples with FlashInfer at {} B per logit and the "
        "activation peak is {} lower: `--flashinfer-installed` plans that, as `check -- docker "
        "run ... vllm/vllm-openai:TAG ...` does (VLLM_USE_FLASHINFER_SAMPLER=0 forces the sort)",
        kSamplerBytesPerLogitSort, r.rules.text, kSamplerBytesPerLogitFlashInfer,
        FormatBytes(sampler - std::max({fwd, encoder, flashinfer}))));
  }
  if (path.installed && s.measured_activation_bytes == 0 && top->samples &&
      sampler > std::max(fwd, encoder)) {
    // Said, since it lowers the peak: the user's image or flag decided it, not the release.
    r.plan.notes.push_back(fmt::format(
        "sampler warm-up: charged at FlashInfer's {} B per logit ({}), since FlashInfer is "
        "installed (`--flashinfer-installed`, or vLLM's own image in the command); a pip "
        "install without it sorts at {} B per logit, {} more",
        kSamplerBytesPerLogitFlashInfer, FormatBytes(sampler),
        kSamplerBytesPerLogitSort,
        FormatBytes(reqs * static_cast<uint64_t>(r.spec.vocab_size) *
                    (kSamplerBytesPerLogitSort - kSamplerBytesPerLogitFlashInfer))));
  }
  r.g.activation_peak_bytes = r.activation;
  r.plan.non_sampling_activation_bytes =
      s.v0_engine && r.tp > 1 && s.measured_activation_bytes == 0
          ? std::min(r.activation, top->received + std::max(fwd, encoder) + deq)
          : r.activation;
  const int64_t pp = s.pipeline_parallel_size;
  r.g.explain.push_back(
      {"activation_peak", r.activation,
       fmt::format(
           "{}{}max(forward {} at {} tokens, sampler {}{}, encoder{} {}){}",
           pp > 1 ? fmt::format("pipeline stage {} of {}, the largest peak: received hidden "
                                "states + residual {} + ",
                                top->stage + 1, pp, FormatBytes(top->received))
                  : std::string(),
           under > 0 ? fmt::format("stored encoder outputs {} (kept through the forward and "
                                   "the sampler) + ",
                                   FormatBytes(under))
                     : std::string(),
           FormatBytes(fwd), mnbt, top->samples ? FormatBytes(sampler) : std::string("none"),
           top->samples ? fmt::format(" = {} requests x vocab {} x {} B", reqs,
                                      r.spec.vocab_size, per_logit)
                        : std::string(" (the last stage samples)"),
           under > 0 ? " tower" : "", FormatBytes(encoder),
           deq ? fmt::format(" + one layer dequantized by plain awq {}", FormatBytes(deq)) : "")});
  // V1 from v0.11 with TP > 1: NCCL's lazy buffers, and from v0.17 the all-reduce workspaces.
  const bool v1_tp = r.tp > 1 && !r.nccl_in_budget && !s.v0_engine;
  const bool custom_ar =
      !s.disable_custom_all_reduce && CustomAllReduceRuns(r.gpu, s.tensor_parallel_size);
  // -O0/-O1 and --enforce-eager (which sets -O0) leave fuse_allreduce_rms off
  // (OPTIMIZATION_LEVEL_00/01), and without graphs nothing is profiled for them.
  const bool workspaces = custom_ar && r.rules.tp_profile_workspaces && r.fusion_passes &&
                          AllReduceFusionRuns(r.gpu, s, r.rules);
  const uint64_t all_reduce =
      v1_tp ? kNcclLazyBuffers + (workspaces ? kTpProfileWorkspaces : 0) : 0;
  const uint64_t base = s.v0_engine || r.rules.nccl_in_budget ? kNonTorchBase : kNonTorchBaseV1;
  r.g.non_torch_bytes = base + all_reduce +
                        (r.nccl_in_budget          ? kNcclPerRank
                         : r.tp > 1 && s.v0_engine ? kNonTorchTpExtra
                                                   : 0);
  // Releases before v0.6.5: what their V0 worker charges instead (v0_legacy.h).
  const auto legacy = s.v0_engine ? vllm::LegacyV0NonTorch(
                                        r.rules, {kCudaContext, r.nccl_in_budget ? kNcclPerRank : 0,
                                                  kNonTorchBase, s.other_process_bytes})
                                  : std::nullopt;
  if (legacy) r.g.non_torch_bytes = legacy->bytes;
  const bool host_counted = r.rules.integrated_free_from_host && !s.v0_engine &&
                            vllm::IntegratedGpu(r.gpu) &&
                            r.g.non_torch_bytes < kIntegratedNonTorchFloor;
  if (host_counted) r.g.non_torch_bytes = kIntegratedNonTorchFloor;
  if (s.measured_non_torch_bytes > 0) r.g.non_torch_bytes = s.measured_non_torch_bytes;
  r.g.explain.push_back(
      {"non_torch", r.g.non_torch_bytes,
       host_counted && s.measured_non_torch_bytes == 0
           ? fmt::format("at least {}: on an integrated GPU vLLM reads free memory from the host, "
                         "so what start-up takes on the host counts as non-torch memory (the "
                         "development half's GB10 starts: 2.01 and 2.23 GiB)",
                         FormatBytes(kIntegratedNonTorchFloor))
       : legacy ? legacy->why
       : r.nccl_in_budget ? "cuBLAS workspaces and kernel images + NCCL buffers (V1 before v0.11)"
       : r.tp > 1 && s.v0_engine ? "cuBLAS workspaces and kernel images + V0 all-reduce workspaces"
       : v1_tp ? fmt::format("cuBLAS workspaces and kernel images {} + NCCL buffers {}{}",
                             FormatBytes(base), FormatBytes(kNcclLazyBuffers),
                             !custom_ar ? std::string(" (no custom all-reduce: disabled, or no "
                                                      "peer access on this GPU and size)")
                             : !r.rules.tp_profile_workspaces
                                 ? std::string(" (before v0.17 no all-reduce workspace grows in "
                                               "the profile)")
                             : !r.fusion_passes
                                 ? std::string(" (no all-reduce fusion workspace: the fusion "
                                               "passes run at -O2 and -O3 only)")
                             : !workspaces
                                 ? std::string(" (no all-reduce fusion workspace: it runs on "
                                               "compute capability 9.0 and 10.x only" +
                                               std::string(r.rules.allreduce_fusion_single_dp_pp
                                                               ? ", and before v0.21 only "
                                                                 "without DP or PP)"
                                                               : ")"))
                                 : " + all-reduce fusion and graph-profiling workspaces (v0.17+) " +
                                       FormatBytes(kTpProfileWorkspaces))
               : "cuBLAS workspaces and kernel images"});
  if (r.plan.fits && r.weights + r.activation + r.g.non_torch_bytes > r.free_at_start) {
    r.Fail(Stage::kProfile,
           fmt::format("CUDA out of memory during the profile run: weights {} + activation peak {} "
                       "+ non-torch {} exceed the {} free", FormatBytes(r.weights),
                       FormatBytes(r.activation), FormatBytes(r.g.non_torch_bytes),
                       FormatBytes(r.free_at_start)));
  }
}

// The CUDA-graph pool. From v0.11 the default mode is FULL_AND_PIECEWISE: piecewise graphs for
// every capture size plus full graphs for uniform-decode batches up to max_num_seqs
// ("PIECEWISE=51 (largest=512), FULL=35 (largest=256)"); V0 and v0.10 capture one graph per
// size.
void SizeCudaGraphs(Run& r) {
  const VllmSettings& s = r.s;
  if (!s.compilation_keys_not_modelled.empty()) {
    std::string keys;
    for (const std::string& k : s.compilation_keys_not_modelled) {
      keys += (keys.empty() ? "" : ", ") + k;
    }
    r.plan.notes.push_back(fmt::format(
        "--compilation-config: read for its CUDA-graph keys (cudagraph_mode, "
        "cudagraph_capture_sizes, max_cudagraph_capture_size); not modelled: {}",
        keys));
  }
  if (!s.enforce_eager) {
    // Speculative decoding verifies 1 + k tokens a request: a uniform decode batch of n requests
    // is n x (1 + k) tokens (gpu_model_runner.py uniform_decode_query_len).
    const int64_t q =
        r.rules.capture_sizes_per_decode_query ? 1 + std::max<int64_t>(0, s.num_speculative_tokens)
                                               : 1;
    const std::vector<int64_t> sizes = CaptureSizes(r.rules, s, q);
    // The graphs of each mode (CUDAGraphMode, vllm/config/compilation.py; the dispatcher's keys,
    // v1/cudagraph_dispatcher.py initialize_cudagraph_keys): PIECEWISE and FULL one per size
    // (FULL's for mixed batches too), FULL_DECODE_ONLY full graphs of uniform decode batches
    // only (n = requests x q for up to max_num_seqs requests), FULL_AND_PIECEWISE both.
    // Without the key: the release's default (FULL_AND_PIECEWISE from v0.11; V0 and v0.10
    // capture one graph per size).
    const std::string& mode = r.graph_mode;
    auto is_decode = [&](int64_t n) { return n >= q && n <= s.max_num_seqs * q; };
    const int64_t decode =
        static_cast<int64_t>(std::count_if(sizes.begin(), sizes.end(), is_decode));
    int64_t graphs = mode == "NONE"               ? 0
                     : mode == "FULL_DECODE_ONLY" ? decode
                     : mode == "FULL_AND_PIECEWISE"
                         ? static_cast<int64_t>(sizes.size()) + decode
                         : static_cast<int64_t>(sizes.size());
    // LoRA: separate graphs with and without active adapters (cudagraph_specialize_lora,
    // default True; v1/cudagraph_dispatcher.py keys each batch descriptor by has_lora).
    const bool lora_twice = s.enable_lora && r.rules.lora_graphs_specialized;
    if (lora_twice) graphs *= 2;
    int64_t max_capture = sizes.empty() || graphs == 0 ? 0 : sizes.back();
    if (mode == "FULL_DECODE_ONLY") {
      max_capture = 0;
      for (int64_t n : sizes) {
        if (is_decode(n)) max_capture = n;
      }
    }
    // MoE layers of the planned stage (a pipeline stage's spec holds its own layers).
    const uint64_t moe_layers =
        static_cast<uint64_t>(std::count_if(r.spec.layers.begin(), r.spec.layers.end(),
                                            [](const LayerSpec& l) {
                                              return l.mlp.kind == MlpKind::kMoe;
                                            }));
    const uint64_t per_graph = kGraphBytesPerGraph + moe_layers * kGraphBytesPerMoeLayer;
    r.graph = graphs == 0 ? 0
                          : ForwardActivation(r.spec, static_cast<uint64_t>(max_capture), r.tp,
                                              s.enable_expert_parallel,
                                              static_cast<uint64_t>(s.data_parallel_size),
                                              r.rules, r.act_bytes) +
                                static_cast<uint64_t>(graphs) * per_graph;
    r.g.explain.push_back(
        {"cudagraph", r.graph,
         fmt::format("{} graphs over {} capture sizes up to {} ({}{}): activations of the "
                     "largest + {} x {}{}",
                     graphs, sizes.size(), max_capture, mode,
                     lora_twice ? ", with and without active LoRA adapters" : "", graphs,
                     FormatBytes(per_graph),
                     moe_layers ? fmt::format(" ({} + {} MoE layers x {})",
                                              FormatBytes(kGraphBytesPerGraph), moe_layers,
                                              FormatBytes(kGraphBytesPerMoeLayer))
                                : "")});
  }
  r.g.cudagraph_bytes = r.graph;
  r.graph_in_budget = r.rules.cudagraph_in_budget && !s.v0_engine ? r.graph : 0;
}

// With --kv-cache-memory-bytes the pool is allocated whole after the profile run, beside the
// weights, the non-torch memory and the CUDA context; the profile's activations are cached
// blocks the allocator releases and retries with before it fails. A pool that does not fit
// beside them fails at the allocation (torch.zeros in the KV-cache initialisation).
void FixedKvFitsDevice(Run& r, uint64_t pool, const std::string& given) {
  const uint64_t beside =
      r.ctx + r.weights + r.g.non_torch_bytes + r.s.other_process_bytes;
  if (beside + pool <= r.gpu.total_bytes) return;
  const uint64_t room = r.gpu.total_bytes > beside ? r.gpu.total_bytes - beside : 0;
  r.Fail(Stage::kKvCache,
         fmt::format("CUDA out of memory allocating the KV cache: {} {} "
                     "beside the weights {}, non-torch memory {} and the CUDA context {}{} "
                     "exceeds the GPU's {} (with this flag vLLM does not size the pool from its "
                     "memory profiling or --gpu-memory-utilization); at most {} fits before "
                     "activations and CUDA graphs",
                     given, FormatBytes(pool), FormatBytes(r.weights),
                     FormatBytes(r.g.non_torch_bytes), FormatBytes(r.ctx),
                     r.s.other_process_bytes
                         ? fmt::format(" and other processes' {}",
                                       FormatBytes(r.s.other_process_bytes))
                         : std::string(),
                     FormatBytes(r.gpu.total_bytes), FormatBytes(room)));
}

// Bytes one request of `len` tokens needs: blocks x page (x group size).
uint64_t KvNeeded(const Run& r, int64_t len) {
  return vllm::KvBytesForLength(r.kv_spec(), r.ko, len);
}

// The longest context in [0, hi] whose one request fits in the available KV memory.
int64_t LongestFitting(const Run& r, int64_t hi) {
  int64_t lo = 0;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (KvNeeded(r, mid) <= r.available) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

// Prefix caching on a hybrid model (linear-attention layers): MambaModelConfig.
// verify_and_update_config (vllm/model_executor/models/config.py) resolves mamba_cache_mode
// "none" to "all" where the model supports Mamba prefix caching, else to "align", and falls
// back from "all" to "align" for a model that does not; prefix caching off resets any mode to
// "none". "align" keeps two state pages per request in each linear-attention group
// (MambaSpec.max_memory_usage_bytes). Qwen3-Next and Qwen3.5 (Qwen3.6, 3.8) do not support
// "all" (their model classes refuse it); another hybrid family's "all" is not modelled.
void MambaPrefixCaching(Run& r) {
  const ModelSpec& spec = r.kv_spec();
  if (!HasAttention(spec, AttentionKind::kLinear) || r.s.v0_engine) return;
  const std::string& mode = r.s.mamba_cache_mode;
  const bool by_default = r.s.enable_prefix_caching == -1;
  const bool on = by_default ? r.rules.hybrid_prefix_caching_default
                             : r.s.enable_prefix_caching == 1;
  if (!on) {
    if (!mode.empty() && mode != "none") {
      r.plan.notes.push_back(fmt::format(
          "--mamba-cache-mode {}: prefix caching is off, so vLLM sets the mode back to 'none' "
          "(one state page per request)",
          mode));
    }
    return;
  }
  if (!r.rules.mamba_align_mode) {
    r.plan.not_counted.push_back(fmt::format(
        "prefix caching on a hybrid model before vLLM 0.16 (Mamba prefix caching's 'align' "
        "mode came with PR #30877, 2026-01); planned with one state page per request ({})",
        r.rules.text));
    return;
  }
  r.ko.mamba_pages_per_request = 2;
  const bool no_all = spec.family == "qwen3_next" || spec.family == "qwen3_5" ||
                      spec.family == "qwen3_5_moe";
  const std::string& model = spec.architecture.empty() ? spec.family : spec.architecture;
  r.plan.notes.push_back(fmt::format(
      "prefix caching is on ({}): vLLM caches the linear-attention state in 'align' mode, two "
      "state pages per request in each linear-attention group (--no-enable-prefix-caching: "
      "one)",
      by_default ? "vLLM's default for hybrid models from 0.28, PR #50991"
                 : "--enable-prefix-caching"));
  if (no_all && mode == "all") {
    r.plan.notes.push_back(fmt::format(
        "--mamba-cache-mode all: {} does not support it; vLLM falls back to 'align'", model));
  } else if (!no_all && mode != "align") {
    r.plan.not_counted.push_back(fmt::format(
        "Mamba prefix caching in 'all' mode (a state page per block of each request), which "
        "vLLM picks for a hybrid model that supports it; planned as 'align' ({})",
        model));
  }
}

// --mamba-block-size (read at 0.22). VllmConfig.validate_mamba_block_size (vllm/config/vllm.py)
// raises for a value other than max_model_len when prefix caching is off, on any model; prefix
// caching is resolved before it (EngineArgs._set_default_chunked_prefill_and_prefix_caching_args:
// on by default for decoder-only models, off for hybrid ones before 0.28). With prefix caching on
// a hybrid model, "align" mode sets the Mamba block size to the attention block size
// (Platform's hybrid page-size check, platforms/interface.py): the value changes nothing the
// plan counts; "all" mode aligns the attention block to it, not modelled (as "all" itself).
void MambaBlockSize(Run& r) {
  const VllmSettings& s = r.s;
  if (s.mamba_block_size <= 0 || s.v0_engine) return;
  if (!r.rules.mamba_block_size_flag) {
    r.Refuse(Stage::kStartup,
             fmt::format("vllm serve: error: unrecognized arguments: --mamba-block-size {} "
                         "(vLLM {} has no such flag; it came with 0.11.1, PR #27289)",
                         s.mamba_block_size, r.rules.text),
             fmt::format("drop --mamba-block-size (vLLM {} has no such flag)", r.rules.text));
    return;
  }
  const bool hybrid = HasAttention(r.kv_spec(), AttentionKind::kLinear);
  const bool on = s.enable_prefix_caching == -1
                      ? (hybrid ? r.rules.hybrid_prefix_caching_default : true)
                      : s.enable_prefix_caching == 1;
  if (!on && s.mamba_block_size != s.max_model_len) {
    r.Refuse(Stage::kStartup,
             fmt::format("ValueError: --mamba-block-size can only be set with "
                         "--enable-prefix-caching (prefix caching is off{})",
                         s.enable_prefix_caching == 0 ? ": --no-enable-prefix-caching"
                                                      : ", vLLM's default for hybrid models "
                                                        "before 0.28"),
             "add --enable-prefix-caching, or drop --mamba-block-size");
    return;
  }
  if (!hybrid) {
    r.plan.without_effect.push_back(fmt::format(
        "--mamba-block-size {}: the model has no linear-attention (Mamba) layers",
        s.mamba_block_size));
  } else if (!on) {
    r.plan.without_effect.push_back(fmt::format(
        "--mamba-block-size {}: equal to --max-model-len, the value vLLM sets itself without "
        "prefix caching",
        s.mamba_block_size));
  } else {
    const ModelSpec& spec = r.kv_spec();
    const bool no_all = spec.family == "qwen3_next" || spec.family == "qwen3_5" ||
                        spec.family == "qwen3_5_moe";
    if (no_all || s.mamba_cache_mode == "align") {
      r.plan.without_effect.push_back(fmt::format(
          "--mamba-block-size {}: in 'align' mode vLLM sets the Mamba block size to the "
          "attention block size",
          s.mamba_block_size));
    } else {
      r.plan.not_counted.push_back(fmt::format(
          "--mamba-block-size {} in Mamba prefix caching's 'all' mode (vLLM aligns the "
          "attention block to it)",
          s.mamba_block_size));
    }
  }
}

// --disable-hybrid-kv-cache-manager: KVCacheCoordinator without the hybrid manager needs one KV
// spec for every layer, so unify_hybrid_kv_cache_specs (v1/core/kv_cache_utils.py) turns each
// SlidingWindowSpec into a FullAttentionSpec where full-attention layers are present ("Hybrid KV
// cache manager is disabled for this hybrid model ... dropping the KV cache outside the sliding
// window" is lost): those layers cache the whole context. A model of one layer type is already
// uniform (nothing changes); one with linear-attention (Mamba-style) layers is not unified
// this way, and is named as not modelled.
//
// A KV connector (--kv-transfer-config) turns the manager off too: VllmConfig.__post_init__
// (vllm/config/vllm.py) sets disable_hybrid_kv_cache_manager whenever kv_transfer_config is set
// (PR #17996, v0.9.1; in effect from v0.9.2, PR #19383), with the warning "Turning off hybrid kv
// cache manager because `--kv-transfer-config` is set"; from v0.13 (PR #29805, the field
// bool | None) only where the user gave no preference, so --no-disable-hybrid-kv-cache-manager
// keeps it, and the connector factory then refuses a connector that does not subclass
// SupportsHMA ("Connector ... does not support HMA but HMA is enabled"; LMCacheConnectorV1 does
// not in any release read, up to v0.25). Checking SupportsHMA before turning it off came with
// PR #41847 (v0.23), after the newest release planned. A model with linear-attention layers has
// specs unify_hybrid_kv_cache_specs cannot make one type, and vLLM stops at start-up ("Hybrid KV
// cache manager is disabled but failed to convert the KV cache specs to one unified type.",
// v1/core/kv_cache_utils.py; printed by Qwen3.5 with LMCache on v0.19.1, v0.21.0 and v0.22.1).
void HybridKvManager(Run& r) {
  const bool connector = !r.s.kv_transfer_config.empty() && !r.s.v0_engine;
  const bool kept = r.s.keep_hybrid_kv_cache_manager && r.rules.release >= 1300;
  const std::string who =
      r.s.kv_connector.empty() ? "the KV connector" : "the KV connector " + r.s.kv_connector;
  if (connector && r.s.keep_hybrid_kv_cache_manager && !kept) {
    r.plan.without_effect.push_back(fmt::format(
        "--no-disable-hybrid-kv-cache-manager: vLLM {} turns the hybrid KV cache manager off "
        "for any KV connector all the same (the preference counts from 0.13)",
        r.rules.text));
  }
  if (connector && kept) {
    if (r.s.kv_connector == "LMCacheConnectorV1") {
      if (r.plan.fits) r.plan.refusal = "drop --no-disable-hybrid-kv-cache-manager";
      r.Fail(Stage::kStartup,
             "vLLM refuses to start: LMCacheConnectorV1 does not subclass SupportsHMA, and "
             "--no-disable-hybrid-kv-cache-manager keeps the hybrid KV cache manager on "
             "(\"Connector LMCacheConnectorV1 does not support HMA but HMA is enabled\"); drop "
             "--no-disable-hybrid-kv-cache-manager");
    } else {
      r.plan.notes.push_back(fmt::format(
          "--no-disable-hybrid-kv-cache-manager with {}: planned with the hybrid KV cache "
          "manager; vLLM refuses to start if the connector does not subclass SupportsHMA",
          who));
    }
    return;
  }
  const bool by_connector = connector && !r.s.disable_hybrid_kv_cache_manager;
  if (!r.s.disable_hybrid_kv_cache_manager && !by_connector) return;
  const std::string why =
      by_connector ? fmt::format("--kv-transfer-config ({}): vLLM turns the hybrid KV cache "
                                 "manager off for a KV connector",
                                 who)
                   : "--disable-hybrid-kv-cache-manager";
  const ModelSpec& spec = r.with_draft ? *r.with_draft : r.spec;
  auto has = [&](AttentionKind k) { return HasAttention(spec, k); };
  const bool sliding = has(AttentionKind::kSliding);
  if (has(AttentionKind::kLinear)) {
    // The same unify_hybrid_kv_cache_specs raises whichever way the manager was turned off.
    std::string way_out =
        !by_connector ? "drop --disable-hybrid-kv-cache-manager"
        : r.rules.release >= 1300
            ? "drop --kv-transfer-config, or add --no-disable-hybrid-kv-cache-manager with a KV "
              "connector that subclasses SupportsHMA"
            : "drop --kv-transfer-config (vLLM before 0.13 turns the hybrid KV cache manager off "
              "for any KV connector)";
    if (r.plan.fits) r.plan.refusal = way_out;
    r.Fail(Stage::kStartup,
           fmt::format("vLLM refuses to start: {}, and this model's linear-attention layers "
                       "cannot share one KV cache type with its attention layers (\"Hybrid KV "
                       "cache manager is disabled but failed to convert the KV cache specs to "
                       "one unified type.\"); {}",
                       why, way_out));
    return;
  }
  if (by_connector && !sliding) {
    r.plan.notes.push_back(why + ": every layer already has one KV cache type, nothing changes");
    return;
  }
  if (sliding && has(AttentionKind::kMla)) {
    r.plan.notes.push_back(
        why + ": not modelled for a model with MLA layers beside sliding-window ones (vLLM "
              "unifies sliding-window and full-attention specs); planned with the hybrid "
              "manager");
  } else if (sliding && has(AttentionKind::kFull)) {
    r.ko.disable_hybrid_kv_cache_manager = true;
    r.plan.notes.push_back(
        why + ": the sliding-window layers cache the whole context like the full-attention "
              "ones (unify_hybrid_kv_cache_specs), so a token costs every layer's KV" +
        (by_connector && r.rules.release >= 1300
             ? "; --no-disable-hybrid-kv-cache-manager keeps the manager where the connector "
               "supports it"
             : ""));
  } else {
    r.plan.without_effect.push_back(
        "--disable-hybrid-kv-cache-manager: every layer already has one KV cache type");
  }
}

// A hybrid model's linear-attention (Mamba-style) layers hold one state block per running
// sequence, from the same pool as the KV blocks; with full CUDA graphs the decode graphs are
// captured for max_num_seqs sequences, each needing a block, so vLLM stops before capture:
// "max_num_seqs (1024) exceeds available Mamba cache blocks (635). Each decode sequence requires
// one Mamba cache block, so CUDA graph capture cannot proceed. Please lower max_num_seqs to at
// most 635 or increase gpu_memory_utilization." Seen from vLLM's own CI in March 2026 (issue
// #38632, Qwen3.5 on B200) through 0.25.1 and 0.28.0 (the doctor corpus); its first release was
// not read, so before 0.18 the plan names it instead of failing. vLLM compares max_num_seqs with
// kv_cache_config.num_blocks, the pool's blocks, null block included (v1/worker/
// gpu_model_runner.py from PR #34571, 2026-03-04; vllm/config/compilation.py from PR #32936,
// 2026-04-10).
void MambaBlocksForGraphs(Run& r, uint64_t num_blocks) {
  const ModelSpec& spec = r.with_draft ? *r.with_draft : r.spec;
  if (!HasAttention(spec, AttentionKind::kLinear) || r.s.v0_engine || r.s.enforce_eager ||
      num_blocks == 0) {
    return;
  }
  if (r.graph_mode.find("FULL") == std::string::npos) return;
  const uint64_t blocks = num_blocks;
  const int64_t seqs = r.s.max_num_seqs;
  if (seqs <= 0 || static_cast<uint64_t>(seqs) <= blocks) return;
  const std::string msg = fmt::format(
      "max_num_seqs ({}) exceeds available Mamba cache blocks ({}). Each decode sequence requires "
      "one Mamba cache block, so CUDA graph capture cannot proceed. Please lower max_num_seqs to "
      "at most {} or increase gpu_memory_utilization.",
      seqs, blocks, blocks);
  if (r.rules.release >= 1800) {
    if (r.plan.fits) r.Fail(Stage::kKvCache, msg);
  } else {
    r.plan.notes.push_back("vLLM releases with the Mamba block check (seen from 0.18) stop: " +
                           msg);
    r.plan.not_counted.push_back(fmt::format(
        "the Mamba block check: max_num_seqs {} against {} blocks (vLLM 0.18+ refuses it)", seqs,
        blocks));
  }
}

// Stage 3: KV cache: the layout, the available memory, auto length and the max-length checks.
Status KvCache(Run& r) {
  VllmSettings& s = r.s;
  VllmPlan& plan = r.plan;
  r.ko.tensor_parallel_size = s.tensor_parallel_size;
  r.ko.pipeline_parallel_size = 1;  // `spec` holds the planned stage's layers only
  r.ko.block_size = s.block_size;
  // A named backend sets the block size when --block-size does not: 16 where it takes it, else
  // its smallest (FlashInfer-MLA 32, FlashMLA 64, CUTLASS MLA 128).
  if (!s.attention_backend.empty()) {
    r.ko.mla_block_size = vllm::BackendBlockSize(s.attention_backend);
  }
  r.ko.kv_cache_dtype = s.kv_cache_dtype;
  r.ko.kv_skip_layers = s.kv_skip_layers;
  if (!s.mamba_cache_dtype.empty()) r.ko.mamba_cache_dtype = s.mamba_cache_dtype;
  if (!s.mamba_ssm_cache_dtype.empty()) r.ko.mamba_ssm_cache_dtype = s.mamba_ssm_cache_dtype;
  if (s.kv_cache_dtype == "auto" && r.model_dtype != r.spec.dtype) {  // auto follows --dtype
    r.ko.kv_cache_dtype = r.model_dtype == Dtype::kF32   ? "float32"
                          : r.model_dtype == Dtype::kF16 ? "float16"
                                                         : "bfloat16";
  }
  r.ko.max_model_len = s.max_model_len;
  r.ko.max_num_batched_tokens = s.max_num_batched_tokens;
  r.ko.num_speculative_tokens = s.num_speculative_tokens;
  r.ko.decode_context_parallel_size = s.decode_context_parallel_size;
  r.ko.rules = r.rules;
  if (auto refusal = vllm::ContextParallelKvRefusal(r.kv_spec(), r.rules,
                                                    s.decode_context_parallel_size);
      refusal && r.plan.fits) {
    r.Fail(refusal->stage, refusal->message);
    r.plan.refusal = refusal->change;
  }
  HybridKvManager(r);
  MambaBlockSize(r);
  MambaPrefixCaching(r);
  r.legacy_kv = vllm::LegacyKvSpec(r.rules, r.with_draft ? *r.with_draft : r.spec);
  if (r.legacy_kv) {
    plan.notes.push_back(fmt::format("vLLM {} caches DeepSeek's MLA layers as full K and V for "
                                     "every head (the latent cache came with v0.7.1, PR #12601)",
                                     r.rules.text));
  }
  auto layout = PlanKvCache(r.kv_spec(), r.ko);
  if (!layout.ok()) return layout.status();
  plan.kv_options = r.ko;
  plan.kv_layout = *layout;
  for (const auto& n : layout->notes) plan.notes.push_back("vLLM will log: " + n);
  // vLLM then gives every stage the fewest blocks of any (pipeline.cc).
  // V1's graph estimate stands in for a first V2 start's compile; V2's own profile reserves none
  // before v0.29.
  // --kv-cache-memory-bytes (gpu_worker.py determine_available_memory, v0.11+): vLLM still runs
  // the profile run, then returns the given bytes before it measures anything, so no CUDA-graph
  // estimate is reserved and --gpu-memory-utilization does not bound the pool.
  if (s.kv_cache_memory_bytes > 0) r.graph_in_budget = 0;
  const uint64_t graph = r.v2_profile && r.graphs_outside_budget ? 0 : r.graph_in_budget;
  const uint64_t used = r.weights + r.g.non_torch_bytes + graph + r.act.peak;
  r.available = r.requested > used ? r.requested - used : 0;
  if (s.kv_cache_memory_bytes > 0) {
    r.available = s.kv_cache_memory_bytes;
    FixedKvFitsDevice(r, r.available, "--kv-cache-memory-bytes");
  } else if (s.num_gpu_blocks_override > 0 && !layout->layers.empty()) {
    // kv_cache_utils.py get_num_blocks (V1, read at 0.22): "Overriding num_gpu_blocks=N with
    // num_gpu_blocks_override=M" replaces the count the profile left, with no check against the
    // budget; the pool is M blocks of one page per layer of a group.
    const uint64_t block = KvBlockBytes(*layout);
    plan.notes.push_back(fmt::format(
        "vLLM will log: Overriding num_gpu_blocks={} with num_gpu_blocks_override={}",
        block > 0 ? r.available / block : 0, s.num_gpu_blocks_override));
    r.available = block * static_cast<uint64_t>(s.num_gpu_blocks_override);
    FixedKvFitsDevice(r, r.available,
                      fmt::format("--num-gpu-blocks-override {} ({} a block)",
                                  s.num_gpu_blocks_override, FormatBytes(block)));
  }
  r.g.kv_cache_bytes = r.available;
  const StageActivation& bound = r.act;
  r.g.explain.push_back(
      {"kv_cache", r.available,
       s.kv_cache_memory_bytes ? std::string("--kv-cache-memory-bytes")
       : s.num_gpu_blocks_override > 0
           ? fmt::format("--num-gpu-blocks-override {}", s.num_gpu_blocks_override)
           : fmt::format("budget {} - weights - activation - non-torch{}{}",
                         FormatBytes(r.requested),
                         !graph ? ""
                         : r.graphs_outside_budget
                             ? " - V1's CUDA graph estimate (model runner V2 reserves none before "
                               "v0.29)"
                             : " - CUDA graph estimate (v0.20.2+)",
                         s.pipeline_parallel_size > 1
                             ? fmt::format(", on pipeline stage {} of {} (activation {}, {} "
                                           "layers)",
                                           bound.stage + 1, s.pipeline_parallel_size,
                                           FormatBytes(bound.peak), bound.layers)
                             : std::string())});
  if (plan.fits && r.available == 0 && !layout->layers.empty()) {
    r.Fail(Stage::kKvCache, "No available memory for the cache blocks. Try increasing "
                            "`gpu_memory_utilization` when initializing the engine.");
  }
  if (r.auto_len && plan.fits) {
    const int64_t fit = LongestFitting(r, s.max_model_len);
    if (fit <= 0) {
      r.Fail(Stage::kKvCache, "Cannot auto-fit max_model_len: not enough GPU memory available to "
                              "serve even a single token.");
    } else {
      if (fit < s.max_model_len) {
        plan.notes.push_back(
            fmt::format("vLLM will log: Auto-fit max_model_len: reduced from {} to "
                        "{} to fit in available GPU memory ({:.2f} GiB available "
                        "for KV cache)",
                        s.max_model_len, fit, static_cast<double>(r.available) / kGiB));
      }
      s.max_model_len = fit;
      r.ko.max_model_len = fit;
      auto l2 = PlanKvCache(r.kv_spec(), r.ko);
      if (l2.ok()) plan.kv_layout = *l2;
      plan.kv_options = r.ko;
    }
  }
  plan.max_model_len = s.max_model_len;
  plan.kv_needed_bytes = KvNeeded(r, s.max_model_len);
  if (plan.kv_layout.layers.empty()) return Status::Ok();
  const auto cap = KvCapacity(plan.kv_layout, r.available, r.ko);
  plan.kv_cache_tokens = cap.kv_cache_tokens;
  plan.max_concurrency = cap.max_concurrency;
  MambaBlocksForGraphs(r, cap.num_blocks);
  if (plan.fits && s.v0_engine && static_cast<uint64_t>(s.max_model_len) > plan.kv_cache_tokens) {
    // V0: raise_if_cache_size_invalid (vllm/worker/worker.py) compares against the whole pool.
    plan.estimated_max_model_len = static_cast<int64_t>(plan.kv_cache_tokens);
    r.Fail(Stage::kKvCache,
           fmt::format("The model's max seq len ({}) is larger than the maximum number of tokens "
                       "that can be stored in KV cache ({}). Try increasing "
                       "`gpu_memory_utilization` or decreasing `max_model_len` when initializing "
                       "the engine.", s.max_model_len, plan.kv_cache_tokens));
  } else if (plan.fits && !s.v0_engine && plan.kv_needed_bytes > r.available) {
    plan.estimated_max_model_len = LongestFitting(r, s.max_model_len);
    r.Fail(Stage::kKvCache,
           fmt::format("To serve at least one request with the model's max seq len ({}), ({:.2f} "
                       "GiB KV cache is needed, which is larger than the available KV cache memory "
                       "({:.2f} GiB).{} Try increasing `gpu_memory_utilization` or decreasing "
                       "`max_model_len` when initializing the engine.", s.max_model_len,
                       static_cast<double>(plan.kv_needed_bytes) / kGiB,
                       static_cast<double>(r.available) / kGiB,
                       plan.estimated_max_model_len > 0
                           ? fmt::format(" Based on the available memory, the estimated maximum "
                                         "model length is {}.", plan.estimated_max_model_len)
                           : std::string()));
  }
  return Status::Ok();
}

// LMCache's own GPU memory beside vLLM's KV cache (LMCache 0.3-0.5 with vLLM's V1 connectors):
// - LMCacheConnectorV1 builds its engine in the connector's constructor, and the default GPU
//   connector (lmcache/v1/gpu_connector.py VLLMPagedMemGPUConnectorV2, use_gpu unless enable_pd)
//   allocates one staging chunk, torch.empty((2, layers, chunk_size, kv_heads_per_rank x
//   head_size)) in the KV dtype (1 instead of 2 for MLA latents), chunk_size 256 by default
//   (LMCACHE_CHUNK_SIZE): chunk_size x the KV bytes of a token on this rank.
// - LMCacheMPConnector keeps no LMCache tensor in vLLM's worker; the LMCache server process
//   allocates on each GPU when vLLM registers its KV cache (GPUCacheContext): a CUDA context of
//   its own (about 0.5 GiB, LMCache issue #4287), the same staging chunk and a slot map of 8 B a
//   KV slot.
// vLLM makes the connector in Worker.initialize_from_config, after determine_available_memory
// sized the KV cache (PR #25712, v0.11); in 0.9.2-0.10 in init_device, after the memory snapshot
// but before the peak's reset, where no term of the profile counts it (vllm/utils memory
// profiling: weights, torch peak increase, non-torch increase). Either way the buffers are not
// in "Available KV cache memory": they come out of the memory --gpu-memory-utilization leaves.
// (0.8.0-0.9.1 counted the in-process chunk in the profiled peak, a few tens of MiB; planned
// with 0.10's rules like the rest of those releases.) Other connectors' buffers (NIXL, P2P NCCL,
// Mooncake) are named as not modelled.
constexpr uint64_t kLmcacheChunkTokens = 256;
void KvConnectorBuffers(Run& r) {
  // --kv-offloading-backend lmcache makes vLLM build LMCacheConnectorV1 itself (config/
  // cache.py, the offloading backends).
  const bool offload = r.s.kv_offloading_gib > 0 && r.s.kv_offloading_backend == "lmcache";
  if (r.s.v0_engine || (r.s.kv_transfer_config.empty() && !offload) ||
      r.plan.kv_layout.layers.empty()) {
    return;
  }
  const std::string c = offload ? std::string("LMCacheConnectorV1") : r.s.kv_connector;
  const bool in_process = c == "LMCacheConnectorV1";
  const bool server = c == "LMCacheMPConnector";
  if (!in_process && !server) {
    r.plan.notes.push_back(fmt::format(
        "--kv-transfer-config: the GPU buffers of {} are not modelled (only LMCache's are); "
        "the plan charges none",
        c.empty() ? std::string("the KV connector") : c));
    return;
  }
  r.connector_name = c;
  const uint64_t chunk = kLmcacheChunkTokens * r.plan.kv_layout.kv_bytes_per_token;
  const uint64_t slots = server ? r.plan.kv_cache_tokens * 8 : 0;
  r.connector_bytes = chunk + slots + (server ? kCudaContext : 0);
  r.g.explain.push_back(
      {"kv_connector", r.connector_bytes,
       server ? fmt::format("LMCache server on this GPU: CUDA context {} + staging chunk {} "
                            "(256 tokens x {} a token) + slot map {} (8 B x {} KV slots), "
                            "outside the budget",
                            FormatBytes(kCudaContext), FormatBytes(chunk),
                            FormatBytes(r.plan.kv_layout.kv_bytes_per_token),
                            FormatBytes(slots), core::GroupDigits(r.plan.kv_cache_tokens))
              : fmt::format("LMCache staging chunk: 256 tokens x {} a token, outside the "
                            "budget",
                            FormatBytes(r.plan.kv_layout.kv_bytes_per_token))});
  r.plan.notes.push_back(fmt::format(
      "{}: {} {} on each GPU after vLLM sized the KV cache; vLLM does not count it, so it "
      "comes out of what --gpu-memory-utilization leaves free (the plan's device check "
      "includes it)",
      c, server ? "LMCache's server process holds" : "LMCache allocates",
      FormatBytes(r.connector_bytes)));
}

// The part of the graph pool vLLM reserved inside the budget.
uint64_t GraphReserved(const Run& r) { return r.graphs_outside_budget ? 0 : r.graph_in_budget; }

// What the device holds beside the graph pool: the CUDA context, the budget (or what the run took
// past it), LMCache's buffers and other processes; DeviceHeld adds the pool outside the budget.
// With --kv-cache-memory-bytes the budget bounds nothing: the run holds the weights, the
// serving forward's activations (the profile's peak, which the warm-up runs again), the
// non-torch memory and the fixed pool.
uint64_t HeldBesideGraphs(const Run& r) {
  const uint64_t run = r.weights + r.activation + r.g.non_torch_bytes;
  return r.ctx +
         (r.s.kv_cache_memory_bytes > 0 ? run + r.s.kv_cache_memory_bytes
                                        : std::max(r.requested, run)) +
         r.connector_bytes + r.s.other_process_bytes;
}
uint64_t DeviceHeld(const Run& r) { return HeldBesideGraphs(r) + r.graph - GraphReserved(r); }

// Stage 4: CUDA graph capture, after the KV cache. Before v0.20.2 the pool comes on top of the
// budget; from v0.20.2 (PR #38284) its estimate was reserved inside it.
void CaptureCudaGraphs(Run& r) {
  if (!r.plan.fits) return;
  if (r.connector_bytes > 0 && HeldBesideGraphs(r) > r.gpu.total_bytes) {
    r.Fail(Stage::kKvCache,
           fmt::format("CUDA out of memory as the KV cache is set up: the budget {}, the CUDA "
                       "context {} and {}'s GPU buffers {} exceed the GPU's {}; lower "
                       "--gpu-memory-utilization",
                       FormatBytes(r.requested), FormatBytes(r.ctx), r.connector_name,
                       FormatBytes(r.connector_bytes), FormatBytes(r.gpu.total_bytes)));
    return;
  }
  if (r.s.kv_cache_memory_bytes > 0 && HeldBesideGraphs(r) > r.gpu.total_bytes) {
    // The warm-up (compile_or_warm_up_model) runs the forward over max_num_batched_tokens again,
    // now beside the pool, before any graph is captured.
    r.Fail(Stage::kWarmup,
           fmt::format("CUDA out of memory in the warm-up: the weights {}, the forward's "
                       "activations {}, non-torch memory {}, the CUDA context {} and "
                       "--kv-cache-memory-bytes {} exceed the GPU's {}; lower "
                       "--kv-cache-memory-bytes",
                       FormatBytes(r.weights), FormatBytes(r.activation),
                       FormatBytes(r.g.non_torch_bytes), FormatBytes(r.ctx),
                       FormatBytes(r.s.kv_cache_memory_bytes), FormatBytes(r.gpu.total_bytes)));
    return;
  }
  if (r.graph == 0) return;
  if (DeviceHeld(r) > r.gpu.total_bytes) {
    r.Fail(
        Stage::kCudaGraph,
        fmt::format("CUDA out of memory during CUDA graph capture: the budget {} plus the graph "
                    "pool {} and the CUDA context {}{} exceed the GPU's {}; add --enforce-eager or "
                    "lower --gpu-memory-utilization",
                    FormatBytes(r.requested), FormatBytes(r.graph), FormatBytes(r.ctx),
                    r.connector_bytes ? fmt::format(" and {}'s GPU buffers {}", r.connector_name,
                                                    FormatBytes(r.connector_bytes))
                                      : std::string(),
                    FormatBytes(r.gpu.total_bytes)));
  }
}

// Runtime, --skip-mm-profiling: the first request with as many items as the encoder's profile
// would have run allocates its activations and embeddings beside everything start-up left on
// the card (the budget, the graph pool outside it, the CUDA context).
void EncoderAtFirstRequest(Run& r) {
  if (!r.plan.fits || r.skipped_encoder == 0) return;
  const uint64_t held = DeviceHeld(r);
  if (held + r.skipped_encoder <= r.gpu.total_bytes) return;
  r.Fail(Stage::kRuntime,
         fmt::format("CUDA out of memory in the multimodal encoder at the first request with the "
                     "most items: its {} comes on top of the {} start-up left on the card "
                     "(--skip-mm-profiling kept it out of the budget), over the GPU's {}; drop "
                     "--skip-mm-profiling, or lower --limit-mm-per-prompt, the images' "
                     "max_pixels or --gpu-memory-utilization",
                     FormatBytes(r.skipped_encoder), FormatBytes(held),
                     FormatBytes(r.gpu.total_bytes)));
}

// Peaks, the tightest margin and the spread of the measured terms.
void Confidence(Run& r) {
  GpuPlan& g = r.g;
  g.peak_bytes = std::max(g.load_peak_bytes, r.weights + r.activation + g.kv_cache_bytes + r.graph);
  g.device_used_bytes = g.cuda_context_bytes + g.non_torch_bytes + g.peak_bytes +
                        (r.connector_name == "LMCacheConnectorV1" ? r.connector_bytes : 0);
  auto diff = [](uint64_t a, uint64_t b) {
    return static_cast<int64_t>(a) - static_cast<int64_t>(b);  // both far below 2^63
  };
  // Each check with the spread of the terms it rests on; the tightest (least margin beyond its
  // spread) is the plan's. Load: the weights are exact to about 2% (docs/validation.md). KV: the
  // measured terms charged to the budget. Device: the graph pool outside the budget's estimate.
  struct Check {
    int64_t margin;
    uint64_t spread;
  };
  std::vector<Check> checks = {{diff(r.free_at_start, g.load_peak_bytes), r.weights / 50}};
  if (!r.plan.kv_layout.layers.empty()) {
    checks.push_back({diff(r.available, r.plan.kv_needed_bytes),
                      kNonTorchSpread + (r.tp > 1 ? kNonTorchTpSpread : 0) + r.sampler_spread +
                          (r.graph_in_budget > 0 ? kGraphSpread : 0) +
                          (r.v2_first_start ? kV2FirstStartSpread : 0)});
  }
  checks.push_back({diff(r.gpu.total_bytes, DeviceHeld(r)), r.graph > 0 ? kGraphSpread : 0});
  const Check* tight = &checks[0];
  for (const Check& c : checks) {
    if (c.margin - static_cast<int64_t>(c.spread) <
        tight->margin - static_cast<int64_t>(tight->spread)) {
      tight = &c;
    }
  }
  r.plan.margin_bytes = tight->margin;
  r.plan.uncertainty_bytes = tight->spread;
}

// The stage table as people read it.
std::vector<StageLine> StageLines(const Run& r) {
  using core::GroupDigits;
  const GpuPlan& g = r.g;
  return {
      {Stage::kStartup,
       fmt::format("CUDA context {}, {} requested", FormatBytes(g.cuda_context_bytes),
                   FormatBytes(g.budget_bytes))},
      {Stage::kLoad,
       g.lora_bytes > 0
           ? fmt::format("weights {} + LoRA slots {}, load peak {}", FormatBytes(g.weights_bytes),
                         FormatBytes(g.lora_bytes), FormatBytes(g.load_peak_bytes))
           : fmt::format("weights {}, load peak {}", FormatBytes(g.weights_bytes),
                         FormatBytes(g.load_peak_bytes))},
      {Stage::kProfile,
       fmt::format("activation peak {}, non-torch {}", FormatBytes(g.activation_peak_bytes),
                   FormatBytes(g.non_torch_bytes))},
      {Stage::kKvCache,
       fmt::format("available {}, one {}-token request needs {}", FormatBytes(g.kv_cache_bytes),
                   GroupDigits(static_cast<uint64_t>(r.plan.max_model_len)),
                   FormatBytes(r.plan.kv_needed_bytes))},
      {Stage::kCudaGraph,
       r.s.enforce_eager ? std::string("none (--enforce-eager)")
       : r.graph_mode == "NONE" && !r.s.v0_engine
           ? fmt::format("none (cudagraph_mode NONE{})",
                         r.graph_why.empty() ? "" : ": " + r.graph_why)
           : fmt::format("graph pool {}", FormatBytes(g.cudagraph_bytes))},
  };
}

}  // namespace

EngineSettings ToEngineSettings(const VllmSettings& s) {
  EngineSettings e = s;
  e.engine_options = std::make_shared<VllmOptions>(static_cast<const VllmOptions&>(s));
  return e;
}

VllmSettings ToVllmSettings(const EngineSettings& e) {
  VllmSettings v;
  static_cast<EngineSettings&>(v) = e;
  v.engine_options = nullptr;
  if (const auto* o = dynamic_cast<const VllmOptions*>(e.engine_options.get())) {
    static_cast<VllmOptions&>(v) = *o;
  }
  return v;
}

Result<int> ParseVllmVersion(const std::string& text) { return vllm::ParseRelease(text); }

Result<VllmPlan> PlanVllm(const Inventory& inv, const GpuSpec& gpu, const VllmSettings& settings) {
  if (!inv.has_spec) return Invalid("planning needs the model's config.json (none was found)");
  return PlanVllm(inv, *ProfileVllmWeights(inv), gpu, settings);
}

Result<VllmPlan> PlanVllm(const Inventory& inv, const VllmWeightProfile& profile,
                          const GpuSpec& gpu, const VllmSettings& in) {
  if (!inv.has_spec) return Invalid("planning needs the model's config.json (none was found)");
  // --hf-overrides: the plan uses the overridden config.
  std::optional<ModelSpec> overridden;
  std::vector<std::string> not_applied;
  if (!in.hf_overrides.empty()) {
    auto o = ApplyConfigOverrides(inv.spec, in.hf_overrides, "--hf-overrides", &not_applied);
    if (!o.ok()) return o.status();
    overridden = std::move(*o);
  }
  if (!in.rope_scaling.empty()) {  // after --hf-overrides, as vLLM applies it
    auto o = ApplyConfigOverrides(overridden ? *overridden : inv.spec,
                                  vllm::RopeScalingOverride(in.rope_scaling), "--rope-scaling",
                                  &not_applied);
    if (!o.ok()) return o.status();
    overridden = std::move(*o);
  }
  // --disable-sliding-window (config/model.py, read at 0.22): hf_text_config.sliding_window is
  // set to None after the length is derived, so every sliding-window layer is a full-attention
  // one (its KV cache the whole context); the derived length is capped at the window.
  std::optional<VllmSettings> windowless;  // `in` with the window's cap, where one applies
  if (in.disable_sliding_window && in.sliding_window_cap == 0) {
    ModelSpec m = overridden ? *overridden : inv.spec;
    int64_t window = 0;
    for (LayerSpec& l : m.layers) {
      if (l.attention.kind != AttentionKind::kSliding || l.attention.sliding_window <= 0) continue;
      window = window ? std::min(window, l.attention.sliding_window) : l.attention.sliding_window;
      l.attention.kind = AttentionKind::kFull;
      l.attention.sliding_window = 0;
    }
    if (window > 0) {
      overridden = std::move(m);
      windowless = in;
      windowless->sliding_window_cap = window;
    }
  }
  const VllmSettings& run_in = windowless ? *windowless : in;
  const ModelSpec& model = overridden ? *overridden : inv.spec;
  if (in.pipeline_parallel_size > 1 && in.pipeline_stage < 0) {
    return vllm::PlanPipeline(model, gpu, in, [&](const GpuSpec& card, const VllmSettings& s) {
      return PlanVllm(inv, profile, card, s);
    });
  }
  if (!in.pp_layer_partition.empty() && in.pipeline_parallel_size == 1) {
    // get_pp_indices reads it at any pipeline size (make_layers).
    auto one = vllm::PipelinePartition(static_cast<int64_t>(model.layers.size()), 1,
                                       in.pp_layer_partition);
    if (!one.ok()) return one.status();
  }
  if (!in.stage_gpus.empty() && in.pipeline_stage < 0) {  // cards of tensor-parallel ranks
    auto cards = vllm::StageGpus(gpu, in.stage_gpus, 1, in.tensor_parallel_size);
    if (!cards.ok()) return cards.status();
    VllmSettings one = in;
    one.stage_gpus.clear();
    auto p = PlanVllm(inv, profile, cards->front(), one);
    if (p.ok() && in.stage_gpus.size() > 1) {
      p->notes.push_back(fmt::format("mixed cards without pipeline stages: every rank holds the "
                                     "same shard, so the smallest card ({}) is planned",
                                     cards->front().name));
    }
    return p;
  }
  std::optional<ModelSpec> staged;  // one pipeline stage: its decoder layers only
  if (in.pipeline_stage >= 0) {
    staged = vllm::StageSpec(model, in.stage_first_layer, in.stage_layers,
                             in.pipeline_stage == in.pipeline_parallel_size - 1);
  }
  Run r{inv, staged ? *staged : model, profile, gpu, run_in, run_in};
  for (const std::string& k : not_applied) {
    r.plan.notes.push_back(fmt::format("--hf-overrides: \"{}\" is not modelled (the plan keeps "
                                       "the checkpoint's value)",
                                       k));
  }
  r.plan.engine = "vllm";
  r.plan.engine_title = "vLLM";
  r.plan.gpu = gpu;
  VRAMFIT_RETURN_IF_ERROR(ResolveSettings(r));
  Startup(r);
  VRAMFIT_RETURN_IF_ERROR(Load(r));
  Profile(r);
  SizeCudaGraphs(r);
  VRAMFIT_RETURN_IF_ERROR(KvCache(r));
  r.plan.resolved = ToEngineSettings(r.s);  // after vLLM's defaults and the auto length
  KvConnectorBuffers(r);
  CaptureCudaGraphs(r);
  EncoderAtFirstRequest(r);
  Confidence(r);
  r.plan.gpus.assign(static_cast<size_t>(r.tp), r.g);
  r.plan.kv_block_size = r.plan.kv_layout.block_size;
  r.plan.kv_groups = r.plan.kv_layout.groups.size();
  r.plan.stages = StageLines(r);
  r.plan.command =
      vllm::ServeCommand(inv.repo.empty() ? inv.model : inv.repo, r.s, in, HubRevision(inv));
  // The command must run on the release: a setting its parser does not have (--kv-cache-dtype
  // before 0.3, --cpu-offload-gb before 0.5.3, ...) is an error, as vLLM's argparse makes it.
  VRAMFIT_RETURN_IF_ERROR(vllm::CheckServeFlags(CommandFlags(r.plan.command), in.version));
  return std::move(r.plan);
}

}  // namespace vramfit
