// vLLM command lines (see command.h). The reader parses flags with CLI11 over the flag table
// (flags.h), so `plan`, `fit` and `check` accept exactly the same spellings.
#include "engines/vllm/command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <deque>
#include <iterator>
#include <string_view>
#include <unordered_set>

#include "core/text.h"
#include "engines/vllm/flags.h"
#include "engines/vllm/rules.h"
#include "engines/vllm/serve_flags.h"

namespace vramfit::vllm {
namespace {

using core::ShellWord;

// vLLM flags that do not change GPU memory: `check` names them in one line, as read.
// --revision is not one of them: it chooses the checkpoint, which `check` reads at it (a Hub id
// as MODEL@REVISION) or names as not read so (a catalogued model, a local directory).
// --swap-space is CPU memory ("Size of the CPU swap space per GPU (in GiB)", CacheConfig in
// vllm/config/cache.py; V1 allocates none); --config-format chooses the reader of the same
// model's config (config.json or Mistral's params.json, ModelConfig.config_format);
// --distributed-executor-backend chooses how the workers are started (mp, ray, uni), not
// what each GPU holds (ParallelConfig.distributed_executor_backend, vllm/config/parallel.py).
// --enable-reasoning (0.7.1 to 0.9), --tool-server, --enable-prompt-tokens-details and
// --disable-frontend-multiprocessing are the OpenAI server's own options (entrypoints/openai/
// cli_args.py): how replies are parsed and where the server runs, not the engine.
// --rope-theta (0.5.1 to 0.10) sets the rotary base (config.update / hf_overrides "rope_theta"):
// no tensor's size and not the derived maximum length.
// --async-scheduling (0.10+; SchedulerConfig.async_scheduling, vllm/config/scheduler.py)
// overlaps the scheduling of step N+1 with step N: EngineCore.step_with_batch_queue keeps two
// batches in flight (vllm/v1/engine/core.py), the AsyncScheduler reserves the one token being
// sampled of each request in the same KV pool (num_output_placeholders,
// v1/core/sched/async_scheduler.py), and the GPU model runner copies the sampled token ids to
// pinned host memory on a side stream (AsyncGPUModelRunnerOutput, v1/worker/gpu_model_runner.py).
// The pool, the profile run and the CUDA graphs are the same; the only device tensor kept
// longer is the step's sampled ids (max_num_seqs x (1 + speculative tokens) ids), a few KiB.
// --dcp-kv-cache-interleave-size / --cp-kv-cache-interleave-size (ParallelConfig, v0.11+): how
// many consecutive tokens one DCP rank stores before the next takes over; it must divide the
// block size and moves tokens between ranks, not bytes (the pages and their count are the same).
// --prefix-caching-hash-algo chooses the host-side hash of a block's tokens (CacheConfig,
// sha256 / builtin); --override-generation-config sets the default sampling parameters
// (ModelConfig): neither sizes a device tensor at start-up. --scheduling-policy (fcfs /
// priority), --long-prefill-token-threshold, --max-num-partial-prefills and
// --max-long-partial-prefills (SchedulerConfig) order and admit requests within the same
// budgets; --stream-interval batches the API server's streamed tokens; --kv-events-config
// publishes block events from the host; --reasoning-config configures the reasoning parser.
// --lora-modules names adapters the server loads at start (entrypoints/openai/cli_args.py,
// LoRAParserAction) into the LoRA slots --max-loras and --max-lora-rank already size (the rest
// wait in the CPU cache), and --calculate-kv-scales (deprecated) computes a scalar scale per
// layer in the first forward: neither adds device memory.
// --enable-sleep-mode (0.7+) allocates the weights and the KV pool inside CuMemAllocator's
// pools (v1/worker/gpu_worker.py _maybe_get_memory_pool_context, initialize_from_config) so
// that they can be released and restored later; the same tensors, counted by the same torch
// statistics the profile reads, so the budget and the pool come out the same.
// --max-logprobs (default 20) caps what a request may ask for; the sampler warm-up runs with
// max_num_logprobs=None (gpu_model_runner.py _dummy_sampler_run), so it sizes nothing at
// start-up. (A request that asks for logprobs holds them in float32 for each logit while it
// samples, v1/sample/sampler.py Sampler.forward, 4 B x requests x vocabulary outside the
// profile: 0.15 GiB for 256 requests over Qwen3's 151,936 logits, inside the memory the
// utilization leaves.)
// The API server's own options (entrypoints/openai/cli_args.py FrontendArgs: CORS, TLS, h11
// limits, access logs, middleware, chat-template and tool-choice policies, extra endpoints,
// shutdown), logging and metrics (ObservabilityConfig: OTLP traces, iteration details, KV-cache
// residency and CUDA-graph metrics, sampled on the host), the host side of loading
// (LoadConfig: parallel loading threads, the safetensors read strategy and its prefetch, the
// progress bar), the processes' rendezvous and placement (master address and port, timeouts,
// nodes and node rank, the data-parallel addresses and ranks, headless engines, NUMA binding)
// and the multimodal processor's host caches (MultiModalConfig: mm_processor_cache_gb and its
// type, the shared-memory object size): none sizes a device tensor (read at 0.22).
// Also read at 0.22: --api-server-count and --grpc choose the front-end processes (and a gRPC
// server instead of HTTP, entrypoints/openai/cli_args.py), --tokens-only, --fingerprint-mode,
// --fingerprint-value and --enable-ssl-refresh the front end's endpoints and replies,
// --renderer-num-workers the host threads that tokenize and render prompts (ModelConfig),
// --interleave-mm-strings how a prompt's media placeholders are laid out (MultiModalConfig),
// --skip-tokenizer-init the host tokenizer, --scheduler-reserve-full-isl whether a request's
// whole input must fit the KV pool before it is admitted (SchedulerConfig: admission, not the
// pool), --data-parallel-backend, --data-parallel-external-lb and --data-parallel-hybrid-lb how
// data-parallel ranks are started and balanced (ParallelConfig; --data-parallel-size itself is
// modelled), --enable-layerwise-nvtx-tracing and --ray-workers-use-nsight profiling markers,
// --fail-on-environ-validation how unknown VLLM_ variables are reported. And:
// --profiler-config (ProfilerConfig: what a /start_profile call records, nothing at start-up),
// --ignore-patterns (LoadConfig: the checkpoint folder's files not read, by default Meta's
// duplicate original/**; the plan reads the weights vLLM loads), --disable-cascade-attn and
// --logprobs-mode (ModelConfig: a kernel choice for shared prefixes and what a request's
// logprobs hold; the profile requests neither), --disable-chunked-mm-input (SchedulerConfig:
// whether an image's tokens may be split across steps), --expert-placement-strategy
// (ParallelConfig: which experts each expert-parallel rank holds, as many either way).
constexpr const char* kNoMemoryEffect[] = {
    "--profiler-config", "--ignore-patterns", "--disable-cascade-attn", "--logprobs-mode",
    "--disable-chunked-mm-input", "--expert-placement-strategy",
    "--api-server-count", "-asc", "--grpc", "--tokens-only", "--fingerprint-mode",
    "--fingerprint-value", "--enable-ssl-refresh", "--renderer-num-workers",
    "--interleave-mm-strings", "--skip-tokenizer-init", "--scheduler-reserve-full-isl",
    "--data-parallel-backend", "--data-parallel-external-lb", "--data-parallel-hybrid-lb",
    "--enable-layerwise-nvtx-tracing", "--ray-workers-use-nsight", "--fail-on-environ-validation",
    "--allow-credentials", "--disable-access-log-for-endpoints", "--enable-log-deltas",
    "--middleware", "--ssl-cert-reqs", "--ssl-ciphers", "--h11-max-header-count",
    "--h11-max-incomplete-event-size", "--enable-tokenizer-info-endpoint",
    "--exclude-tools-when-tool-choice-none", "--default-chat-template-kwargs",
    "--trust-request-chat-template", "--enable-offline-docs", "--log-error-stack",
    "--shutdown-timeout", "--reasoning-parser-plugin", "--allowed-media-domains",
    "--aggregate-engine-logging", "--enable-logging-iteration-details", "--otlp-traces-endpoint",
    "--show-hidden-metrics-for-version", "--kv-cache-metrics", "--kv-cache-metrics-sample",
    "--cudagraph-metrics", "--enable-mfu-metrics", "--collect-detailed-traces",
    "--max-parallel-loading-workers", "--safetensors-load-strategy",
    "--safetensors-prefetch-block-size", "--safetensors-prefetch-num-threads",
    "--use-tqdm-on-load", "--master-addr", "--master-port", "--distributed-timeout-seconds",
    "--headless", "--nnodes", "--node-rank", "--data-parallel-address",
    "--data-parallel-rpc-port", "--data-parallel-rank", "--data-parallel-start-rank",
    "--data-parallel-size-local", "--numa-bind", "--numa-bind-nodes", "--numa-bind-cpus",
    "--mm-shm-cache-max-object-size-mb", "--mm-processor-cache-gb", "--mm-processor-cache-type",
    "--host", "--port", "--api-key", "--served-model-name", "--trust-remote-code",
    "--download-dir", "--tokenizer", "--tokenizer-revision", "--chat-template",
    "--enable-auto-tool-choice", "--tool-call-parser", "--reasoning-parser",
    "--uvicorn-log-level", "--disable-log-requests", "--disable-log-stats", "--seed",
    "--load-format", "--generation-config",
    "--disable-uvicorn-access-log",
    "--uds", "--max-log-len", "--enable-log-requests", "--enable-log-outputs",
    "--allowed-origins", "--allowed-methods", "--allowed-headers", "--ssl-keyfile",
    "--ssl-certfile", "--ssl-ca-certs", "--root-path", "--response-role", "--tokenizer-mode",
    "--chat-template-content-format", "--tool-parser-plugin", "--disable-fastapi-docs",
    "--enable-request-id-headers", "--enable-server-load-tracking",
    "--enable-force-include-usage", "--return-tokens-as-token-ids", "--allowed-local-media-path",
    "--log-config-file", "--hf-token", "--code-revision", "--swap-space", "--config-format",
    "--distributed-executor-backend", "--enable-reasoning", "--tool-server",
    "--enable-prompt-tokens-details", "--disable-frontend-multiprocessing", "--rope-theta",
    "--async-scheduling", "--dcp-kv-cache-interleave-size", "--cp-kv-cache-interleave-size",
    "--prefix-caching-hash-algo", "--override-generation-config", "--scheduling-policy",
    "--long-prefill-token-threshold", "--max-num-partial-prefills", "--max-long-partial-prefills",
    "--stream-interval", "--kv-events-config", "--reasoning-config", "--lora-modules",
    "--calculate-kv-scales", "--enable-sleep-mode", "--max-logprobs"};

// Flags of kNoMemoryEffect that take no value (store_true or BooleanOptionalAction).
constexpr std::string_view kSwitches[] = {
    "--disable-cascade-attn", "--disable-chunked-mm-input",
    "--grpc", "--tokens-only", "--enable-ssl-refresh", "--interleave-mm-strings",
    "--skip-tokenizer-init", "--scheduler-reserve-full-isl", "--data-parallel-external-lb",
    "--data-parallel-hybrid-lb", "--enable-layerwise-nvtx-tracing", "--ray-workers-use-nsight",
    "--fail-on-environ-validation",
    "--allow-credentials", "--enable-log-deltas", "--enable-tokenizer-info-endpoint",
    "--exclude-tools-when-tool-choice-none", "--trust-request-chat-template",
    "--enable-offline-docs", "--log-error-stack", "--aggregate-engine-logging",
    "--enable-logging-iteration-details", "--kv-cache-metrics", "--cudagraph-metrics",
    "--enable-mfu-metrics", "--use-tqdm-on-load", "--headless", "--numa-bind",
    "--trust-remote-code", "--enable-auto-tool-choice", "--disable-log-requests",
    "--disable-log-stats",
    "--disable-uvicorn-access-log", "--enable-log-requests", "--enable-log-outputs",
    "--disable-fastapi-docs", "--enable-request-id-headers", "--enable-server-load-tracking",
    "--enable-force-include-usage", "--return-tokens-as-token-ids", "--enable-reasoning",
    "--enable-prompt-tokens-details", "--disable-frontend-multiprocessing", "--async-scheduling",
    "--calculate-kv-scales", "--enable-sleep-mode"};

// Silent flags that take exactly one word (a plain `str` or `int` option; list options such
// as --served-model-name and --api-key take several, --hf-token none or one).
constexpr std::string_view kOneWord[] = {
    "--profiler-config", "--logprobs-mode", "--expert-placement-strategy",
    "--api-server-count", "-asc", "--fingerprint-mode", "--fingerprint-value",
    "--renderer-num-workers", "--data-parallel-backend",
    "--disable-access-log-for-endpoints", "--ssl-cert-reqs", "--ssl-ciphers",
    "--h11-max-header-count", "--h11-max-incomplete-event-size", "--default-chat-template-kwargs",
    "--shutdown-timeout", "--reasoning-parser-plugin", "--otlp-traces-endpoint",
    "--show-hidden-metrics-for-version", "--kv-cache-metrics-sample",
    "--max-parallel-loading-workers", "--safetensors-load-strategy",
    "--safetensors-prefetch-block-size", "--safetensors-prefetch-num-threads", "--master-addr",
    "--master-port", "--distributed-timeout-seconds", "--nnodes", "--node-rank",
    "--data-parallel-address", "--data-parallel-rpc-port", "--data-parallel-rank",
    "--data-parallel-start-rank", "--data-parallel-size-local",
    "--mm-shm-cache-max-object-size-mb", "--mm-processor-cache-gb", "--mm-processor-cache-type",
    "--dcp-kv-cache-interleave-size", "--cp-kv-cache-interleave-size",
    "--model", "--host", "--port", "--tokenizer", "--revision", "--tokenizer-revision",
    "--chat-template", "--download-dir", "--seed", "--load-format", "--generation-config",
    "--uvicorn-log-level", "--uds", "--max-log-len", "--root-path", "--ssl-keyfile",
    "--ssl-certfile", "--tokenizer-mode", "--reasoning-parser", "--tool-call-parser",
    "--response-role", "--code-revision", "--swap-space", "--config-format",
    "--distributed-executor-backend", "--tool-server", "--rope-theta",
    "--prefix-caching-hash-algo", "--override-generation-config", "--scheduling-policy",
    "--long-prefill-token-threshold", "--max-num-partial-prefills", "--max-long-partial-prefills",
    "--stream-interval", "--kv-events-config", "--reasoning-config", "--max-logprobs"};

// Environment variables `check` reads, or passes over silently.
constexpr std::string_view kEnvV1 = "VLLM_USE_V1";
constexpr std::string_view kEnvAllowLong = "VLLM_ALLOW_LONG_MAX_MODEL_LEN";
constexpr std::string_view kEnvDevices = "CUDA_VISIBLE_DEVICES";
constexpr std::string_view kEnvMxfp4Marlin = "VLLM_MXFP4_USE_MARLIN";
constexpr std::string_view kEnvFlashInferSampler = "VLLM_USE_FLASHINFER_SAMPLER";
constexpr std::string_view kEnvV2Runner = "VLLM_USE_V2_MODEL_RUNNER";
constexpr std::string_view kEnvPpPartition = "VLLM_PP_LAYER_PARTITION";
// The all-to-all backend before --all2all-backend (vllm/envs.py; the flag wins where both are).
constexpr std::string_view kEnvAll2All = "VLLM_ALL2ALL_BACKEND";

// Strips `env` and NAME=value words; returns the index of the launcher.
size_t SkipEnvironment(const std::vector<std::string>& cmd) {
  size_t at = 0;
  if (at < cmd.size() && cmd[at] == "env") ++at;
  while (at < cmd.size() && cmd[at].find('=') != std::string::npos && cmd[at].rfind("-", 0) != 0) {
    ++at;
  }
  return at;
}

// The index of the first flag after the launcher, or 0 when argv[at...] is not a vLLM server;
// *positional_model is set when `vllm serve MODEL` names it.
size_t AfterLauncher(const std::vector<std::string>& cmd, size_t at, std::string* model) {
  if (cmd.size() >= at + 2 && cmd[at].ends_with("vllm") && cmd[at + 1] == "serve") {
    at += 2;
    if (at < cmd.size() && cmd[at].rfind("-", 0) != 0) *model = cmd[at++];
    return at;
  }
  if (cmd.size() >= at + 3 && cmd[at].find("python") != std::string::npos && cmd[at + 1] == "-m" &&
      cmd[at + 2].rfind("vllm.entrypoints", 0) == 0) {
    return at + 3;
  }
  return 0;
}

}  // namespace

std::string ServeCommand(const std::string& model, const VllmSettings& s, const VllmSettings& in,
                         const std::string& revision) {
  // The launcher the release has (Rules::serve_cli); an unreadable version is the newest's.
  const Result<int> release = s.version.empty() ? Result<int>(kNewestModelled)
                                                : ParseRelease(s.version);
  const Rules rules = RulesFor(release.ok() ? *release : kNewestModelled);
  const bool serve_cli = rules.serve_cli;
  std::string c = serve_cli ? "vllm serve " + ShellWord(model)
                            : "python -m vllm.entrypoints.openai.api_server --model " +
                                  ShellWord(model);
  // The user's own --revision, where given, stays among the kept words instead.
  const bool kept_revision =
      std::find(s.kept_args.begin(), s.kept_args.end(), "--revision") != s.kept_args.end();
  if (!revision.empty() && !kept_revision) c += " --revision " + ShellWord(revision);
  if (s.tensor_parallel_size > 1) {
    c += fmt::format(" --tensor-parallel-size {}", s.tensor_parallel_size);
  }
  if (s.pipeline_parallel_size > 1) {
    c += fmt::format(" --pipeline-parallel-size {}", s.pipeline_parallel_size);
  }
  if (s.data_parallel_size > 1) c += fmt::format(" --data-parallel-size {}", s.data_parallel_size);
  if (s.decode_context_parallel_size > 1) {
    c += fmt::format(" --decode-context-parallel-size {}", s.decode_context_parallel_size);
  }
  if (s.enable_expert_parallel) c += " --enable-expert-parallel";
  if (!s.quantization.empty()) c += " --quantization " + ShellWord(s.quantization);
  c += fmt::format(" --max-model-len {} --gpu-memory-utilization {}", s.max_model_len,
                   s.gpu_memory_utilization);
  if (s.dtype != "auto") c += " --dtype " + ShellWord(s.dtype);
  if (!s.hf_overrides.empty()) c += " --hf-overrides " + ShellWord(s.hf_overrides);
  if (!s.speculative_config.empty()) {
    c += " --speculative-config " + ShellWord(s.speculative_config);
  }
  if (s.disable_custom_all_reduce && s.tensor_parallel_size > 1) {
    c += " --disable-custom-all-reduce";
  }
  if (s.kv_cache_dtype != "auto") c += " --kv-cache-dtype " + ShellWord(s.kv_cache_dtype);
  if (s.enforce_eager) c += " --enforce-eager";
  if (!s.compilation_config.empty()) {
    c += " --compilation-config " + ShellWord(s.compilation_config);
  }
  if (s.capture_sizes_from_flag) {
    c += " --cudagraph-capture-sizes";
    for (int64_t n : s.cudagraph_capture_sizes) c += fmt::format(" {}", n);
  }
  if (s.max_capture_from_flag) {
    c += fmt::format(" --max-cudagraph-capture-size {}", s.max_cudagraph_capture_size);
  }
  if (s.optimization_level >= 0) c += fmt::format(" -O{}", s.optimization_level);
  if (s.enable_lora) {
    c += " --enable-lora";
    if (s.max_loras != 1) c += fmt::format(" --max-loras {}", s.max_loras);
    if (s.max_lora_rank != 16) c += fmt::format(" --max-lora-rank {}", s.max_lora_rank);
    if (s.max_cpu_loras > 0) c += fmt::format(" --max-cpu-loras {}", s.max_cpu_loras);
    if (s.lora_dtype != "auto") c += " --lora-dtype " + ShellWord(s.lora_dtype);
    if (s.fully_sharded_loras) c += " --fully-sharded-loras";
    if (!s.lora_target_modules.empty()) {
      c += " --lora-target-modules";
      for (const std::string& m : s.lora_target_modules) c += " " + ShellWord(m);
    }
    if (s.lora_extra_vocab_size >= 0) {
      c += fmt::format(" --lora-extra-vocab-size {}", s.lora_extra_vocab_size);
    }
  }
  if (in.max_num_seqs) c += fmt::format(" --max-num-seqs {}", s.max_num_seqs);
  if (in.max_num_batched_tokens) {
    c += fmt::format(" --max-num-batched-tokens {}", s.max_num_batched_tokens);
  }
  if (in.block_size) c += fmt::format(" --block-size {}", s.block_size);
  if (s.enable_eplb) c += " --enable-eplb";
  if (s.enable_dbo) c += " --enable-dbo";
  if (!s.all2all_backend.empty() && !s.all2all_from_env) {
    c += " --all2all-backend " + s.all2all_backend;
  }
  if (s.num_redundant_experts > 0) {
    c += fmt::format(" --eplb-config '{{\"num_redundant_experts\": {}}}'",
                     s.num_redundant_experts);
  }
  if (s.num_gpu_blocks_override > 0) {
    c += fmt::format(" --num-gpu-blocks-override {}", s.num_gpu_blocks_override);
  }
  if (s.kv_cache_memory_bytes) {
    c += fmt::format(" --kv-cache-memory-bytes {}", s.kv_cache_memory_bytes);
  }
  if (s.cpu_offload_gb > 0) c += fmt::format(" --cpu-offload-gb {}", s.cpu_offload_gb);
  if (!s.cpu_offload_params.empty()) {
    c += " --cpu-offload-params";
    for (const std::string& p : s.cpu_offload_params) c += " " + ShellWord(p);
  }
  if (!s.offload_backend.empty()) c += " --offload-backend " + s.offload_backend;
  if (s.offload_group_size > 0) {
    c += fmt::format(" --offload-group-size {}", s.offload_group_size);
    if (s.offload_num_in_group != 1) {
      c += fmt::format(" --offload-num-in-group {}", s.offload_num_in_group);
    }
    if (s.offload_prefetch_step != 1) {
      c += fmt::format(" --offload-prefetch-step {}", s.offload_prefetch_step);
    }
  }
  if (!s.offload_params.empty()) {
    c += " --offload-params";
    for (const std::string& p : s.offload_params) c += " " + ShellWord(p);
  }
  if (s.kv_offloading_gib > 0) {
    c += fmt::format(" --kv-offloading-size {}", s.kv_offloading_gib);
  }
  if (!s.kv_offloading_backend.empty()) {
    c += " --kv-offloading-backend " + ShellWord(s.kv_offloading_backend);
  }
  // --language-model-only before v0.16 is written as what it means there, a limit of 0 per
  // modality (plan.cc plans it so); the limits as the release reads them (Rules::limit_mm_json).
  const bool lm_only_flag = s.language_model_only && rules.language_model_only_flag;
  const bool lm_only_limits = s.language_model_only && !rules.language_model_only_flag;
  const int64_t images = lm_only_limits ? 0 : s.limit_images;
  const int64_t videos = lm_only_limits ? 0 : s.limit_videos;
  if (images >= 0 || videos >= 0) {
    auto limit = [&](const char* modality, int64_t n) {
      return rules.limit_mm_json ? fmt::format("\"{}\":{}", modality, n)
                                 : fmt::format("{}={}", modality, n);
    };
    std::string limits;
    if (images >= 0) limits += limit("image", images);
    if (videos >= 0) limits += (limits.empty() ? "" : ",") + limit("video", videos);
    c += " --limit-mm-per-prompt " + ShellWord(rules.limit_mm_json ? "{" + limits + "}" : limits);
  }
  if (lm_only_flag) c += " --language-model-only";
  if (s.mm_encoder_tp_data) c += " --mm-encoder-tp-mode data";
  if (s.skip_mm_profiling) c += " --skip-mm-profiling";
  if (s.disable_hybrid_kv_cache_manager) c += " --disable-hybrid-kv-cache-manager";
  if (s.keep_hybrid_kv_cache_manager) c += " --no-disable-hybrid-kv-cache-manager";
  if (s.enable_prefix_caching == 1) c += " --enable-prefix-caching";
  if (s.enable_prefix_caching == 0) c += " --no-enable-prefix-caching";
  if (s.disable_sliding_window) c += " --disable-sliding-window";
  if (s.enable_chunked_prefill == 1) c += " --enable-chunked-prefill";
  if (s.enable_chunked_prefill == 0) c += " --no-enable-chunked-prefill";
  if (!s.mamba_cache_mode.empty()) c += " --mamba-cache-mode " + s.mamba_cache_mode;
  if (s.mamba_block_size > 0) c += fmt::format(" --mamba-block-size {}", s.mamba_block_size);
  if (!s.performance_mode.empty()) c += " --performance-mode " + s.performance_mode;
  if (!s.attention_backend.empty()) c += " --attention-backend " + s.attention_backend;
  if (!s.kv_skip_layers.empty()) {
    c += " --kv-cache-dtype-skip-layers";
    for (const std::string& l : s.kv_skip_layers) c += " " + ShellWord(l);
  }
  if (!s.mamba_cache_dtype.empty()) c += " --mamba-cache-dtype " + s.mamba_cache_dtype;
  if (!s.mamba_ssm_cache_dtype.empty()) {
    c += " --mamba-ssm-cache-dtype " + s.mamba_ssm_cache_dtype;
  }
  if (!s.kv_transfer_config.empty()) {
    c += " --kv-transfer-config " + ShellWord(s.kv_transfer_config);
  }
  if (s.max_pixels > 0) {
    c += " --mm-processor-kwargs " + ShellWord(fmt::format("{{\"max_pixels\":{}}}", s.max_pixels));
  }
  for (const std::string& w : s.kept_args) c += " " + ShellWord(w);
  std::string env;
  for (const std::string& w : s.kept_env) env += ShellWord(w) + " ";
  // Releases before 0.8 run V0 without the variable (the plan sets v0_engine for them).
  if (s.v0_engine && in.v0_engine) env += std::string(kEnvV1) + "=0 ";
  if (s.allow_long_max_model_len && in.max_model_len > 0) env += std::string(kEnvAllowLong) + "=1 ";
  if (s.mxfp4_use_marlin) env += std::string(kEnvMxfp4Marlin) + "=1 ";
  if (s.all2all_from_env) env += std::string(kEnvAll2All) + "=" + s.all2all_backend + " ";
  if (s.flashinfer_sampler >= 0) {
    env += fmt::format("{}={} ", kEnvFlashInferSampler, s.flashinfer_sampler);
  }
  if (s.use_v2_model_runner >= 0) {
    env += fmt::format("{}={} ", kEnvV2Runner, s.use_v2_model_runner);
  }
  if (!s.pp_layer_partition.empty() && s.pipeline_parallel_size > 1) {
    env += std::string(kEnvPpPartition) + "=" + ShellWord(s.pp_layer_partition) + " ";
  }
  return env + c;
}

std::string RopeScalingOverride(const std::string& json) {
  return "{\"rope_scaling\": " + json + "}";
}

bool HasNoMemoryEffect(std::string_view flag, bool* takes_value) {
  if (std::find(std::begin(kNoMemoryEffect), std::end(kNoMemoryEffect), flag) ==
      std::end(kNoMemoryEffect)) {
    return false;
  }
  *takes_value = std::find(std::begin(kSwitches), std::end(kSwitches), flag) == std::end(kSwitches);
  return true;
}

std::vector<std::string> RewriteShortFlags(std::vector<std::string> args) {
  // `-cc.cudagraph_mode=FULL`: the dotted form of -cc (--compilation-config), which the
  // FlexibleArgumentParser also reads (vllm/utils/argparse_utils.py, v0.12+).
  // `-O3`, `-O=3` and `-O 3`: the optimization level (vllm/utils/argparse_utils.py
  // FlexibleArgumentParser.parse_args rewrites them to --optimization-level from v0.12; before,
  // to --compilation-config's level, which the plan reads from the same setting by release).
  // `-O.KEY` is --compilation-config's dotted form (-O was its short name, PR #10437).
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    if (a.rfind("-cc.", 0) == 0) a = "--compilation-config" + a.substr(3);
    if (a.rfind("-O.", 0) == 0) a = "--compilation-config" + a.substr(2);
    const bool digit = a.size() >= 3 && a.rfind("-O", 0) == 0 &&
                       std::isdigit(static_cast<unsigned char>(a[a[2] == '=' ? 3 : 2]));
    if (digit && (a[2] == '=' ? a.size() > 3 : true)) {
      out.push_back("--optimization-level");
      out.push_back(a.substr(a[2] == '=' ? 3 : 2));
      continue;
    }
    if (a == "-O" && i + 1 < args.size() && !args[i + 1].empty() &&
        std::isdigit(static_cast<unsigned char>(args[i + 1][0]))) {
      out.push_back("--optimization-level");
      continue;
    }
    if (a == "-O" && i + 1 < args.size()) a = "--compilation-config";  // -O '{"level": 3}'
    out.push_back(a);
  }
  args = std::move(out);
  return JoinListWords(Flags(), ExpandShortNames(Flags(), std::move(args)));
}

bool IsServeCommand(const std::vector<std::string>& argv) {
  std::string model;
  return AfterLauncher(argv, SkipEnvironment(argv), &model) > 0;
}

Result<EngineCommand> ReadServeCommand(const std::vector<std::string>& argv) {
  const std::vector<std::string> cmd = RewriteShortFlags(argv);
  EngineCommand out;
  VllmSettings env;
  const size_t launcher = SkipEnvironment(cmd);
  std::unordered_set<std::string> unmodelled;  // each name reported once, however often set
  for (size_t i = cmd.empty() || cmd[0] != "env" ? 0 : 1; i < launcher; ++i) {
    const std::string name = cmd[i].substr(0, cmd[i].find('='));
    const std::string value = cmd[i].substr(cmd[i].find('=') + 1);
    if (name == kEnvV1) {
      env.v0_engine = value == "0";
    } else if (name == kEnvAllowLong) {
      env.allow_long_max_model_len = value == "1" || value == "true";
    } else if (name == kEnvAll2All && !value.empty()) {
      env.all2all_backend = value;
      env.all2all_from_env = true;
    } else if (name == kEnvMxfp4Marlin) {
      // vllm/envs.py reads it as a boolean: "1" or "true" (any case).
      const std::string v = core::AsciiLower(value);
      env.mxfp4_use_marlin = v == "1" || v == "true";
    } else if (name == kEnvFlashInferSampler) {
      // vllm/envs.py reads it as bool(int(value)): 0 off, any other integer on.
      int64_t n = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc() || end != value.data() + value.size()) {
        return Status::InvalidArgument(fmt::format(
            "{}={}: vLLM reads it as an integer (0: the native top-k/top-p sampler, 1: "
            "FlashInfer's)",
            kEnvFlashInferSampler, core::Printable(value)));
      }
      env.flashinfer_sampler = n != 0 ? 1 : 0;
    } else if (name == kEnvV2Runner && (value == "0" || value == "1")) {
      // config/vllm.py use_v2_model_runner: set, it decides the runner; 0 or 1 are read here.
      env.use_v2_model_runner = value == "1" ? 1 : 0;
    } else if (name == kEnvPpPartition) {
      // vllm/envs.py reads it as text; get_pp_indices splits it (checked by the plan, which
      // knows the layer count).
      env.pp_layer_partition = value;
    } else if (name != kEnvDevices) {
      env.kept_env.push_back(cmd[i]);
      if (core::EnvWithoutMemoryEffect(name)) {
        out.ReadWithoutMemoryEffect(name);
      } else if (unmodelled.insert(name).second) {
        out.unmodelled_env.push_back(core::Printable(name));
      }
    }
  }
  const size_t at = AfterLauncher(cmd, launcher, &out.model);
  if (at == 0) {
    return Status::InvalidArgument("expected a vLLM command after --: `vllm serve MODEL ...` or "
                                   "`python -m vllm.entrypoints.openai.api_server --model MODEL "
                                   "...`");
  }
  CLI::App parser("vllm");
  parser.allow_extras();
  const auto& flags = Flags();
  std::deque<std::string> values(flags.size());
  std::deque<bool> set(flags.size(), false);
  std::vector<CLI::Option*> options;
  for (size_t i = 0; i < flags.size(); ++i) {
    std::string names = flags[i].name;
    if (flags[i].short_name && std::string_view(flags[i].short_name).size() == 2) {
      names += std::string(",") + flags[i].short_name;
    }
    options.push_back(flags[i].type_name ? parser.add_option(names, values[i])
                                         : parser.add_flag(names, set[i]));
    // vLLM reads its flags with argparse, where a flag given twice takes the last value.
    options.back()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
  std::string model_flag, revision_flag;
  parser.add_option("--model", model_flag)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  parser.add_option("--revision", revision_flag)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  std::vector<std::string> rest(cmd.begin() + static_cast<long>(at), cmd.end());
  // `-O3` was rewritten to --optimization-level above; the release's parser is asked about the
  // spelling the user gave (-O exists from 0.6.5, --optimization-level from 0.12).
  const bool long_level = std::any_of(argv.begin(), argv.end(), [](const std::string& w) {
    return w.rfind("--optimization-level", 0) == 0 || w.rfind("--optimization_level", 0) == 0;
  });
  for (const std::string& a : rest) {
    if (a.size() <= 1 || a[0] != '-') continue;
    const std::string name = a.substr(0, a.find('='));
    out.given_flags.push_back(name == "--optimization-level" && !long_level ? "-O" : name);
  }
  std::vector<std::string_view> keep = {"--model", "--revision"};
  for (const auto& f : flags) keep.push_back(f.name);
  rest = CanonicalServeArgs(rest, keep);
  // Switches (no value): vramfit's own table's and the silent ones that vLLM declares as
  // store_true or BooleanOptionalAction (vllm/engine/arg_utils.py, entrypoints/openai/
  // cli_args.py). argparse refuses a word after the model that no option takes ("unrecognized
  // arguments: true" for `--enforce-eager true`) and a switch given `=value`; `--no-NAME` of
  // a switch is BooleanOptionalAction's off, the default, so it undoes an earlier `--NAME`.
  const bool serve_form = cmd[launcher].ends_with("vllm");
  out.launcher = serve_form ? "vllm serve" : "python -m vllm.entrypoints.openai.api_server";
  auto is_switch = [&](std::string_view name) {
    for (const auto& f : flags) {
      if (f.type_name == nullptr && name == f.name) return true;
    }
    return std::find(std::begin(kSwitches), std::end(kSwitches), name) != std::end(kSwitches);
  };
  // Flags known to take exactly one word: the table's valued ones and the silent ones that
  // are not switches.
  auto takes_one = [&](std::string_view name) {
    for (const auto& f : flags) {
      if (f.type_name != nullptr && name == f.name) return true;
    }
    return std::find(std::begin(kOneWord), std::end(kOneWord), name) != std::end(kOneWord);
  };
  auto is_flag = [](const std::string& w) {
    return w.size() > 1 && w[0] == '-' && !std::isdigit(static_cast<unsigned char>(w[1])) &&
           w[1] != '.';
  };
  std::vector<std::string> off_forms;  // --no-X of silent switches (kept, named)
  for (size_t i = 0; i < rest.size(); ++i) {
    const std::string& w = rest[i];
    const bool flag = is_flag(w);
    const bool after_switch = i > 0 && is_switch(rest[i - 1]);
    // A word where no option of known arity takes it: argparse's positional slot.
    const bool after_value =
        (i >= 2 && !is_flag(rest[i - 1]) && takes_one(rest[i - 2])) ||
        (i >= 1 && is_flag(rest[i - 1]) && rest[i - 1].find('=') != std::string::npos &&
         takes_one(rest[i - 1].substr(0, rest[i - 1].find('='))));
    if (!flag && (i == 0 || after_switch || after_value) && serve_form && out.model.empty()) {
      // `vllm serve --enforce-eager MODEL`: argparse reads the optional positional model_tag
      // wherever it stands.
      out.model = w;
      rest.erase(rest.begin() + static_cast<long>(i--));
      continue;
    }
    if (!flag && (i == 0 || after_switch || after_value)) {
      return Status::InvalidArgument(fmt::format(
          "the vLLM command line: {}{} is neither a flag nor a flag's value (`vllm serve` "
          "stops with \"unrecognized arguments: {}\")",
          core::Printable(w),
          after_switch ? " (after " + rest[i - 1] + ", a switch that takes no value)" : "",
          core::Printable(w)));
    }
    const size_t eq = w.find('=');
    if (flag && eq != std::string::npos && is_switch(w.substr(0, eq))) {
      return Status::InvalidArgument(fmt::format(
          "the vLLM command line: {} takes no value (`vllm serve` stops with \"argument {}: "
          "ignored explicit argument\"); write {} alone, or --no-{} for off",
          core::Printable(w), core::Printable(w.substr(0, eq)), core::Printable(w.substr(0, eq)),
          core::Printable(w.substr(2, eq - 2))));
    }
    // A "--no-" switch read as one of its own (a preference the plan uses) stays, and of it
    // and its "on" form the last given counts (argparse's BooleanOptionalAction).
    // The other form: "--X" for "--no-X", "--no-X" for "--X", when both are switches.
    const std::string other = !flag || !is_switch(w)         ? std::string()
                              : w.rfind("--no-", 0) == 0     ? "--" + w.substr(5)
                              : w.rfind("--", 0) == 0        ? "--no-" + w.substr(2)
                                                             : std::string();
    if (!other.empty() && is_switch(other)) {
      const auto end = rest.begin() + static_cast<long>(i);
      const long before = std::count(rest.begin(), end, other);
      rest.erase(std::remove(rest.begin(), end, other), end);
      i -= static_cast<size_t>(before);
      continue;
    }
    if (flag && w.rfind("--no-", 0) == 0 && is_switch("--" + w.substr(5))) {
      const std::string on = "--" + w.substr(5);
      // The off form of a silent switch whose default is on (--no-enable-log-deltas): read
      // with no memory effect and kept in the printed command, like the on form.
      bool valued = false;
      if (HasNoMemoryEffect(on, &valued) &&
          std::find(off_forms.begin(), off_forms.end(), w) == off_forms.end()) {
        off_forms.push_back(w);
      }
      rest.erase(std::remove(rest.begin(), rest.begin() + static_cast<long>(i), on),
                 rest.begin() + static_cast<long>(i));
      i = static_cast<size_t>(std::find(rest.begin(), rest.end(), w) - rest.begin());
      rest.erase(rest.begin() + static_cast<long>(i));
      --i;
    }
  }
  std::reverse(rest.begin(), rest.end());
  try {
    parser.parse(rest);
  } catch (const CLI::ArgumentMismatch& e) {
    // A flag at the end without its value: argparse's own words for it.
    const std::string what = e.what();
    const size_t colon = what.find(": ");
    return Status::InvalidArgument(fmt::format(
        "the vLLM command line: {} needs a value (`vllm serve` stops with \"argument {}: "
        "expected one argument\")",
        core::Printable(what.substr(0, colon)), core::Printable(what.substr(0, colon))));
  } catch (const CLI::ParseError& e) {
    return Status::InvalidArgument(fmt::format("the vLLM command line: {}", e.what()));
  }
  if (!model_flag.empty()) out.model = model_flag;
  if (out.model.empty()) return Status::InvalidArgument("the vLLM command names no model");
  // --revision: the Hub revision vLLM downloads (ModelConfig.revision), for `check` to read.
  VRAMFIT_RETURN_IF_ERROR(core::CheckHubRevision("vLLM", revision_flag));
  out.revision = revision_flag;
  for (size_t i = 0; i < flags.size(); ++i) {
    if (options[i]->count() == 0) continue;
    if (flags[i].type_name) {
      out.flags.emplace_back(flags[i].name, values[i]);
    } else if (set[i]) {
      out.flags.emplace_back(flags[i].name, "");
    }
  }
  // What the parser left (flags the table lacks, with their values) stays in the printed
  // command as given (ServeCommand).
  env.kept_args = parser.remaining();
  if (!revision_flag.empty()) {
    env.kept_args.push_back("--revision");
    env.kept_args.push_back(revision_flag);
  }
  for (const std::string& w : off_forms) {
    env.kept_args.push_back(w);
    out.ReadWithoutMemoryEffect(w);
  }
  const std::vector<std::string> left = parser.remaining();
  for (size_t i = 0; i < left.size(); ++i) {
    const std::string& a = left[i];
    // A long flag, or a short one such as `-O3` (a negative number is a value).
    if (a.size() < 2 || a[0] != '-' ||
        (a[1] != '-' && !std::isalpha(static_cast<unsigned char>(a[1])))) {
      continue;
    }
    const std::string name = a.substr(0, a.find('='));
    bool valued = false;
    // The flag's value: after `=`, else the next word.
    const size_t eq = a.find('=');
    const std::string value = eq != std::string::npos ? a.substr(eq + 1)
                              : i + 1 < left.size()   ? left[i + 1]
                                                      : "";
    if (name == "--rope-scaling") {
      // Releases 0.4.3 to 0.10 (the flag is refused where it is not): vLLM sets the config's
      // rope_scaling to the JSON (config.py ModelConfig, 0.6.4+: hf_overrides_kw.update(
      // {"rope_scaling": ...}) after --hf-overrides; before, transformers_utils/config.py
      // get_config config.update), so the plan reads it as that override.
      std::vector<std::string> ignored;
      auto checked = ApplyConfigOverrides(ModelSpec{}, RopeScalingOverride(value),
                                          "--rope-scaling", &ignored);
      if (!checked.ok()) {
        return Status::InvalidArgument(fmt::format(
            "--rope-scaling: expected a JSON object of rope_scaling keys, e.g. '{{\"rope_type\": "
            "\"yarn\", \"factor\": 4.0, \"original_max_position_embeddings\": 32768}}', "
            "found {}",
            core::Printable(value)));
      }
      env.rope_scaling = value;
    } else if (HasNoMemoryEffect(name, &valued)) {
      out.ReadWithoutMemoryEffect(name);
    } else {
      out.unmodelled_flags.push_back(core::Printable(name));
    }
  }
  out.settings = ToEngineSettings(env);
  return out;
}

}  // namespace vramfit::vllm
