// text-generation-inference's log reader (readers/reader.h): the launcher's, router's and
// server's lines, the warm-up that sizes the batch (the server's `warmup` runs a prefill of
// --max-batch-prefill-tokens and fails with "Not enough memory to handle N prefill tokens" or
// the router's "Unable to warmup model"), the phases they mark, TGI's words and its launcher
// flags as fixes.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "doctor/readers/reader.h"

namespace vramfit::doctor {

// Lists of literals are written "..."sv: their lengths are known when compiled (a list of
// pointers is measured with strlen on every pass of a loop, on every line of a log).
using std::string_view_literals::operator""sv;
namespace {

constexpr char kEngine[] = "tgi";

// The value after `key` up to the next space, quote or comma ("--model-id NAME",
// `model_id: "NAME"`); "" when none.
std::string_view ValueAfter(std::string_view t, std::string_view key) {
  size_t b = t.find(key);
  if (b == std::string_view::npos) return {};
  b += key.size();
  while (b < t.size() && (t[b] == ' ' || t[b] == '=' || t[b] == '"' || t[b] == '\\')) ++b;
  size_t e = b;
  while (e < t.size() && e - b < 200 && t[e] != ' ' && t[e] != '"' && t[e] != ',' &&
         t[e] != '\\' && t[e] != '`')
    ++e;
  return t.substr(b, e - b);
}

// How the server was launched: TGI's image ("ghcr.io/huggingface/text-generation-inference:3.2.1"
// in a docker run line or a pod spec) or its launcher command ("text-generation-launcher
// --model-id ..."), and the launcher's own record of its arguments ("Args { model_id: \"...\",
// ..., num_shard: Some(4), quantize: None, ..." (launcher/src/main.rs, 0.9+): the engine, the
// model's id and the shard count (TGI's tensor parallelism). The id is the model's name for the
// rules that read its size only when the line names no quantization (--quantize, `quantize:
// Some(..)`): the name's bits would then not be the weights'.
void MatchLaunch(const Line& line) {
  const LineView s = line.view();
  const bool image = Has(s, "huggingface/text-generation-inference:");
  const bool command = Has(s, "text-generation-launcher ");
  const bool args = Has(s, "Args {") && Has(s, "model_id:");
  if (!image && !command && !args) return;
  if (image || command) line.Emit(EventKind::kTgiMarker, kEngine);
  const std::string_view t = line.text;
  const std::string_view id = args ? ValueAfter(t, "model_id:") : ValueAfter(t, "--model-id");
  const bool quantized = Has(s, "--quantize") || Has(s, "quantize: Some(");
  if (!id.empty() && !quantized) {
    line.Emit(EventKind::kConfig, kEngine).text = std::string(id);
  }
  std::optional<double> shards;
  if (Has(s, "--num-shard")) shards = NumberAfter(s, "--num-shard");
  if (Has(s, "num_shard: Some(")) shards = NumberAfter(s, "num_shard: Some(");
  if (shards && *shards >= 1) {
    Set(line.Emit(EventKind::kConfig, kEngine), Num::kTensorParallelSize, shards);
  }
}

// Hugging Face's deployment code for Amazon SageMaker (a model page's "Deploy > Amazon
// SageMaker" snippet, the sagemaker SDK's HuggingFaceModel):
// - get_huggingface_llm_image_uri("huggingface", version=...) is the Hugging Face LLM container,
//   which runs TGI (as does its image, huggingface-pytorch-tgi-inference);
// - its environment names the model ('HF_MODEL_ID': 'org/name') and the shards
//   ('SM_NUM_GPUS': json.dumps(N), which the container's entrypoint passes to the launcher as
//   NUM_SHARD); 'HF_MODEL_QUANTIZE' quantizes it, so the name's bits are not the weights';
// - instance_type="ml.g5.2xlarge" names the machine: its GPUs (kInstanceFamilies).
// A 1-GPU instance, or the instance's GPUs where SM_NUM_GPUS is not a number the line gives,
// counts the shards (every GPU: the fewest bytes per shard, so a name read as too large for
// the card is too large for any split the machine allows).
struct InstanceFamily {
  std::string_view family;  // "g5" of "ml.g5.2xlarge"
  double gpu_bytes;         // one GPU as CUDA reports it (data/gpus.json's cuda_total_bytes)
  std::array<std::string_view, 3> four;   // the sizes with 4 GPUs
  std::array<std::string_view, 4> eight;  // the sizes with 8 GPUs
};
// AWS's accelerated-computing instance families (the EC2 instance-type pages: G4dn T4 16 GB,
// G5 A10G 24 GB, G6 L4 24 GB, G6e L40S 48 GB, P3 V100 16 GB, P3dn V100 32 GB, P4d A100 40 GB,
// P4de A100 80 GB, P5 H100 80 GB, P5e and P5en H200 141 GB); every other size has one GPU.
constexpr InstanceFamily kInstanceFamilies[] = {
    {"g4dn", 15634268160.0, {"12xlarge"}, {"metal"}},
    {"g5", 23684186112.0, {"12xlarge", "24xlarge"}, {"48xlarge"}},
    {"g6", 23675797504.0, {"12xlarge", "24xlarge"}, {"48xlarge"}},
    {"g6e", 47803531264.0, {"12xlarge", "24xlarge"}, {"48xlarge"}},
    {"p3", 16944988160.0, {"8xlarge"}, {"16xlarge"}},
    {"p3dn", 34057748480.0, {}, {"24xlarge"}},
    {"p4d", 42298834944.0, {}, {"24xlarge"}},
    {"p4de", 84975550464.0, {}, {"24xlarge"}},
    {"p5", 85027979264.0, {}, {"48xlarge", "4xlarge"}},
    {"p5e", 150109945856.0, {}, {"48xlarge"}},
    {"p5en", 150109945856.0, {}, {"48xlarge"}},
};

// The quoted value after `key` and its separator ("'HF_MODEL_ID': 'org/name'", "HF_MODEL_ID=
// org/name"); "" when none.
std::string_view QuotedAfter(std::string_view t, std::string_view key) {
  size_t b = t.find(key);
  if (b == std::string_view::npos) return {};
  b += key.size();
  while (b < t.size() && (t[b] == ' ' || t[b] == '=' || t[b] == ':' || t[b] == '"' ||
                          t[b] == '\'' || t[b] == '\\')) {
    ++b;
  }
  size_t e = b;
  while (e < t.size() && e - b < 200 && t[e] != ' ' && t[e] != '"' && t[e] != '\'' &&
         t[e] != ',' && t[e] != '\\' && t[e] != '}')
    ++e;
  return t.substr(b, e - b);
}

void MatchSageMaker(const Line& line) {
  const LineView s = line.view();
  if (Has(s, "get_huggingface_llm_image_uri(\"huggingface\"") ||
      Has(s, "get_huggingface_llm_image_uri('huggingface'") ||
      Has(s, "huggingface-pytorch-tgi-inference")) {
    line.Emit(EventKind::kTgiMarker, kEngine);
  }
  if (Has(s, "HF_MODEL_ID")) {
    const std::string_view id = QuotedAfter(line.text, "HF_MODEL_ID");
    if (id.find('/') != std::string_view::npos) {
      line.Emit(EventKind::kConfig, "any").text = std::string(id);
    }
  }
  if (Has(s, "HF_MODEL_QUANTIZE")) {
    line.Emit(EventKind::kConfig, "any").values[Num::kQuantizedRun] = 1;
  }
  if (Has(s, "SM_NUM_GPUS")) {
    const size_t at = line.text.find("SM_NUM_GPUS");
    std::string_view rest = line.text.substr(at + 11, 40);
    if (const size_t d = rest.find("dumps("); d != std::string_view::npos) {
      rest.remove_prefix(d + 6);
    }
    if (const auto n = NumberAfter(rest, ""); n && *n >= 1 && *n <= 64 && *n == std::floor(*n)) {
      Set(line.Emit(EventKind::kConfig, "any"), Num::kTensorParallelSize, n);
    }
  }
  // (Every "ml." of the line: "html." or "yaml." may come first.)
  const std::string_view t = line.text;
  for (size_t ml = t.find("ml."); ml != std::string_view::npos; ml = t.find("ml.", ml + 3)) {
    const std::string_view type = t.substr(ml + 3, 24);
    const size_t dot = type.find('.');
    if (dot == std::string_view::npos) continue;
    const std::string_view family = type.substr(0, dot);
    std::string_view size = type.substr(dot + 1);
    size = size.substr(0, size.find_first_not_of("0123456789abcdefghijklmnopqrstuvwxyz"));
    if (size.find("xlarge") == std::string_view::npos && size != "metal") continue;
    for (const InstanceFamily& fam : kInstanceFamilies) {
      if (fam.family != family) continue;
      // (Not TGI's alone: the instance and the model's id name the card and the weights for
      // any engine's deployment container.)
      auto& e = line.Emit(EventKind::kConfig, "any");
      e.values[Num::kInstanceGpuBytes] = fam.gpu_bytes;
      int gpus = 1;
      for (std::string_view f : fam.four) gpus = !f.empty() && f == size ? 4 : gpus;
      for (std::string_view f : fam.eight) gpus = !f.empty() && f == size ? 8 : gpus;
      e.values[Num::kInstanceGpus] = gpus;
      return;
    }
  }
}

// The warm-up's later phases and the router's check of what it found (the "Messages read" table
// of docs/doctor.md, TGI):
// - flash_causal_lm.py warmup (3.0+): "KV-cache blocks: 1234, size: 16" once the prefill is done
//   and before the blocks are allocated (init_kv_cache); "Cuda Graphs are enabled for sizes [1,
//   2, 4, 8, 16, 32]" (2.0+) before cuda_graph_warmup captures each size;
// - the router (router/src/main.rs 1.x, backends/v2|v3/src/lib.rs 2.x-3.x): "Inferred max batch
//   total tokens: N" and "Setting max batch total tokens to N" (the blocks x 16 the warm-up
//   left), or "Model does not support automatic max batch total tokens": the warm-up is over;
//   "Not enough memory to handle `max_total_tokens=N`" (2.2+, the NotEnoughMemory error) when one
//   request of --max-total-tokens needs more tokens than the KV cache holds;
// - the launcher (launcher/src/main.rs download_convert_model, 0.9+): "Starting download
//   process." / "Starting check and download process for MODEL" and "Successfully downloaded
//   weights.": the weights' download, the load's first phase.
void MatchWarmupPhases(const Line& line) {
  const LineView s = line.view();
  if (Has(s, "KV-cache blocks:")) {
    auto& e = line.Emit(EventKind::kKvTokens, kEngine);
    const auto blocks = NumberAfter(s, "KV-cache blocks:");
    const auto size = NumberAfter(s, "size:");
    if (blocks && size && *size > 0 && *size <= 4096) Set(e, Num::kKvCacheTokens, *blocks * *size);
  }
  if (Has(s, "Cuda Graphs are enabled for sizes")) line.Emit(EventKind::kGraphBegin, kEngine);
  // (Also where a paste reflowed the line inside its words: "Inferred max batch" + "total
  // tokens: 30816".)
  if (const LineView w = Whole(line, "Inferred max batch total tokens:"); !w.empty()) {
    Set(line.Emit(EventKind::kServing, kEngine), Num::kKvCacheTokens,
        NumberAfter(w, "Inferred max batch total tokens:"));
  }
  if (const LineView w = Whole(line, "Setting max batch total tokens to"); !w.empty()) {
    Set(line.Emit(EventKind::kServing, kEngine), Num::kKvCacheTokens,
        NumberAfter(w, "Setting max batch total tokens to"));
  }
  if (Has(s, "does not support automatic max batch total tokens")) {
    line.Emit(EventKind::kServing, kEngine);
  }
  if (const LineView w = Whole(line, "Not enough memory to handle `max_total_tokens=");
      !w.empty() || Has(s, "NotEnoughMemory(")) {
    auto& e = line.Emit(EventKind::kMaxLenError, kEngine);
    Set(e, Num::kMaxTotalTokens, w.empty() ? NumberAfter(s, "NotEnoughMemory(")
                                           : NumberAfter(w, "max_total_tokens="));
  }
  // The same refusal before 2.1 (router/src/main.rs, 1.0-2.0.4): after the warm-up, a
  // --max-total-tokens above the tokens it inferred fails as
  // "ArgumentValidation(\"`max_total_tokens` must be <= `max_batch_total_tokens`. Given: 32000
  // and 24336\")". The launcher's own check of
  // the arguments says the same before any warm-up (both figures the user's), so the event
  // says which it may be and rules.cc reads it only after "Warming up model".
  if (const LineView w = Whole(line, "must be <= `max_batch_total_tokens`. Given:");
      !w.empty() && Has(w, "`max_total_tokens`")) {
    auto& e = line.Emit(EventKind::kMaxLenError, kEngine);
    size_t end = 0;
    Set(e, Num::kMaxTotalTokens,
        NumberAfter(w, "must be <= `max_batch_total_tokens`. Given:", 0, &end));
    if (end) Set(e, Num::kKvCacheTokens, NumberAfter(w, "and", end));
    e.text = "argument_validation";
  }
  if (Has(s, "Starting download process") || Has(s, "Starting check and download process") ||
      Has(s, "Successfully downloaded weights")) {
    line.Emit(EventKind::kLoadBegin, kEngine);
  }
}

// The longest prompt the server accepts: --max-input-tokens (--max-input-length before 2.0),
// as a command line gives it, as the launcher's Args record prints it ("max_input_tokens:
// Some(30000)", 2.x-3.x; "max_input_length: 1024", 0.9-1.x) or as the router's warm-up span
// does ("warmup{max_input_length=Some(30000) ...}", "max_input_length=1024").
void MatchInputLimit(const Line& line) {
  const LineView s = line.view();
  if (!Has(s, "max_input_") && !Has(s, "max-input-")) return;
  for (const std::string_view key :
       {"max_input_tokens: Some", "max_input_tokens:", "max_input_length: Some",
        "max_input_length:", "max_input_length=Some", "max_input_length=", "--max-input-tokens",
        "--max-input-length"}) {
    // (The bare "max_input_length=N" only in the router's span: it is also a Python keyword
    // of GPTQ's exllama kernel, exllama_set_max_input_length(model, max_input_length=N).)
    if (key == "max_input_length=" && !Has(s, "warmup{")) continue;
    if (const auto n = NumberAfter(s, key); n && *n >= 1) {
      Set(line.Emit(EventKind::kConfig, kEngine), Num::kMaxInputTokens, n);
      return;
    }
  }
}

void Match(const Line& line) {
  const LineView s = line.view();
  MatchInputLimit(line);
  if (Has(s, "HF_MODEL") || Has(s, "SM_NUM_GPUS") || Has(s, "ml.") ||
      Has(s, "huggingface_llm_image_uri") || Has(s, "huggingface-pytorch-tgi")) {
    MatchSageMaker(line);
  }
  if (Has(s, "text_generation_launcher") || Has(s, "text_generation_router") ||
      Has(s, "text_generation_server") || Has(s, "text_generation_client")) {
    line.Emit(EventKind::kTgiMarker, kEngine);
  }
  if (Has(s, "text-generation") || Has(s, "model_id:")) MatchLaunch(line);
  // The model id cut by a wrap at the end of the previous line: read again from the two joined
  // mid-word (facts.cc takes the longer id that completes the first).
  if (!line.joined_tight.empty() && !s.starts_with("--") && !Has(s, "--model-id") &&
      Has(line.joined_tight, "--model-id") && !Has(line.joined_tight, "--quantize")) {
    const std::string_view id = ValueAfter(line.joined_tight, "--model-id");
    if (!id.empty()) line.Emit(EventKind::kConfig, kEngine).text = std::string(id);
  }
  // The first sentence alone is TGI's too: a paste that breaks the message after it ("...
  // 4096 prefill tokens." / "You need to decrease `--max-batch-prefill-tokens`").
  if (Has(s, "prefill tokens. You need to decrease") || Has(s, "Unable to warmup model") ||
      (Has(s, "Not enough memory to handle") && Has(s, "prefill tokens")) ||
      !Whole(line, "Unable to warmup the Python model shards").empty() ||
      !Whole(line, "Method Warmup encountered an error").empty() ||
      // The router's exit with the warm-up's error, as Rust's Debug prints main's Err:
      // "Error: Warmup(Generation(\"CUDA out of memory. ...\"))" (router/src/main.rs
      // RouterError::Warmup, 0.9.2-2.2), "Error: Backend(Warmup(Generation(\"...\")))" (the
      // backends' v2/v3 routers, 2.3+): whatever the shard's message, the warm-up failed.
      Has(s, "Error: Warmup(") || Has(s, "Error: Backend(Warmup(")) {
    auto& e = line.Emit(EventKind::kTgiWarmupFail, kEngine);
    // 0.9: "Not enough memory to handle {max_total_tokens} total tokens with {N} prefill
    // tokens. You need to decrease `--max-batch-total-tokens` or `--max-batch-prefill-tokens`";
    // 1.0-3.x: "Not enough memory to handle {N} prefill tokens. You need to decrease
    // `--max-batch-prefill-tokens`" (flash_causal_lm.py warmup).
    if (Has(s, "total tokens with")) {
      Set(e, Num::kPrefillTokens, NumberAfter(s, "total tokens with"));
      Set(e, Num::kMaxTotalTokens, NumberAfter(s, "Not enough memory to handle"));
    } else {
      Set(e, Num::kPrefillTokens, NumberAfter(s, "Not enough memory to handle"));
    }
  }
  // The router's client logs a shard's error inside its warm-up spans (client/src/
  // sharded_client.rs and client.rs `warmup`, #[instrument]; the error from client/src/lib.rs):
  // "warmup{max_input_length=.. max_prefill_tokens=..}:warmup: text_generation_client: ...
  // Server error: ..." (1.0-3.x): the Warmup call failed, whatever its message.
  // (The span and the error on two lines where a paste reflowed the record between them.)
  if (Has(s, "Server error") &&
      (Has(s, "}:warmup") || (!Has(s, "warmup") && !WholeBoth(line, "}:warmup", "Server error")
                                                         .empty()))) {
    line.Emit(EventKind::kTgiWarmupFail, kEngine);
  }
  MatchWarmupPhases(line);
  // The launcher's phases: shards start (load), are ready and warm up (profile), serve.
  if (Has(s, "Starting shard") || Has(s, "Waiting for shard")) {
    line.Emit(EventKind::kLoadBegin, kEngine);
  }
  // A shard that died before it was ready (launcher main.rs: "Shard N failed to start", then
  // "Error: ShardCannotStart"): the server was still in get_model (server.py serve), loading the
  // weights; the warm-up comes only after every shard is ready. Printed after the shard's
  // stderr, so it is read as that call's frame, not as a milestone.
  if ((Has(s, "Shard ") && Has(s, "failed to start")) || Has(s, "ShardCannotStart")) {
    line.Emit(EventKind::kFrame, kEngine).text = "get_model (a shard failed to start)";
  }
  // A shard or the weights' download (and conversion to safetensors) killed by SIGKILL before it
  // was ready: "Shard process was signaled to shutdown with signal 9", "Download process was
  // signaled to shutdown with signal 9: ..." (launcher main.rs shard_manager /
  // download_convert_model, 0.9-3.x). The kernel's and the container's OOM killers send it, while
  // the checkpoint is read into host memory.
  if (!Whole(line, "was signaled to shutdown with signal 9").empty()) {
    line.Emit(EventKind::kHostOomKill, kEngine);
  }
  // The shard's server catching what building its model raised (server.py serve_inner, 0.9-3.x:
  // `except Exception: logger.exception("Error when initializing model")` around get_model, 3.x
  // get_model_with_lora_adapters): the load, whatever frames loguru prints after it.
  if (!Whole(line, "Error when initializing model").empty()) {
    line.Emit(EventKind::kFrame, kEngine).text = "get_model (Error when initializing model)";
  }
  // The warm-up's CUDA-graph capture catching an OOM (server/text_generation_server/models/
  // flash_causal_lm.py warmup, 1.4-3.x: `except torch.cuda.OutOfMemoryError:
  // logger.exception("Decode cuda graph warmup failed")`): the traceback that follows is the
  // capture's, which loguru may print from the server's entry point down, so the message stands
  // for its cuda_graph_warmup frame.
  if (Has(s, "cuda graph warmup failed")) {
    line.Emit(EventKind::kFrame, kEngine).text =
        "cuda_graph_warmup (Decode cuda graph warmup failed)";
  }
  // The shard's server logs "Server started at unix:///tmp/text-generation-server-0" once its
  // model is built (server.py serve_inner, 0.9-3.x), before the launcher's "Shard ready".
  // The launcher's "Shard ready in T" (1.0-3.x; 0.9: "Shard N ready in T") and, once every
  // shard is ready, "Starting Webserver" (launcher/src/main.rs spawn_webserver): the router
  // starts and warms the shards up.
  if (Has(s, "Shard ready") || (Has(s, "Shard ") && Has(s, " ready in ")) ||
      Has(s, "Warming up model") || Has(s, "Server started at unix://") ||
      (Has(s, "Starting Webserver") && Has(s, "text_generation_launcher"))) {
    line.Emit(EventKind::kProfileBegin, kEngine);
  }
  if (Has(s, "Connected") && Has(s, "text_generation_router")) {
    line.Emit(EventKind::kServing, kEngine);
  }
  // A request's batch step failing: the server's gRPC interceptor logs the method by name
  // ("Method Prefill encountered an error.", "Method Decode encountered an error.";
  // server/text_generation_server/interceptor.py, 0.9-3.x), the router's client names the step in
  // its span ("batch{batch_size=1}:prefill:prefill{id=1 size=1}: text_generation_client: ...
  // Server error: ...", router/client/src/lib.rs prefill / decode), and the router's infer loop
  // reports the request ("Request failed during generation: Server error: ...", router/src/
  // infer.rs send_error). Requests were being served.
  // (Also where a paste reflowed the line: "... Method" + "Prefill encountered an error.".)
  if (!Whole(line, "Method Prefill encountered an error").empty() ||
      !Whole(line, "Method Decode encountered an error").empty() ||
      !Whole(line, "Request failed during generation").empty() ||
      (Has(s, "text_generation_client") && (Has(s, ":prefill{") || Has(s, ":decode{")))) {
    line.Emit(EventKind::kServing, kEngine);
  }
  // PyTorch's cudaMallocAsync backend, which TGI's 0.9 images ran, reports an OOM with the free
  // memory CUDA saw ("Free (according to CUDA): 3.06 MiB", c10/cuda/CUDAMallocAsyncAllocator.cpp
  // mallocAsync, also inside the router's one-line repr of the error); the pytorch reader reads
  // the message's other lines. What is neither free nor allocated to tensors is then the pool's
  // (rules.cc TgiAsyncPool).
  if (Has(s, "Free (according to CUDA)")) {
    auto& e = line.Emit(EventKind::kTgiMarker, kEngine);
    Set(e, Num::kFreeBytes, BytesAfter(s, "Free (according to CUDA):"));
  }
}

std::string Say(Words rule, const Facts& f) {
  if (rule == Words::kMaxLenCheck && f.engine == kEngine) {
    const auto need = f.get(Num::kMaxTotalTokens);
    return fmt::format(
        "TGI's router refused to start: one request of --max-total-tokens{} needs more KV tokens "
        "than the warm-up left for the cache{} (backends/v3/src/lib.rs NotEnoughMemory; "
        "router/src/main.rs ArgumentValidation before 2.1)",
        need ? fmt::format(" ({:.0f})", *need) : "",
        f.get(Num::kKvCacheTokens)
            ? fmt::format(", {:.0f} tokens", *f.get(Num::kKvCacheTokens))
            : std::string());
  }
  if (rule == Words::kGraphCapture) {
    return "TGI's warm-up captures a CUDA graph for each size of --cuda-graphs (default "
           "1,2,4,8,16,32) after allocating the KV blocks from the free memory x "
           "--cuda-memory-fraction x 0.95 (flash_causal_lm.py warmup, cuda_graph_warmup): the "
           "graphs did not fit in what the blocks left";
  }
  if (rule != Words::kWarmupPrefill) return "";
  const auto n = f.get(Num::kPrefillTokens);
  return fmt::format(
      "TGI's warm-up prefill{} did not fit next to the weights: the server runs one batch of "
      "--max-batch-prefill-tokens at start-up to size the KV cache",
      n ? fmt::format(" of {:.0f} tokens", *n) : "");
}

bool Fixes(Cause cause, const Facts& f, Diagnosis* d) {
  switch (cause) {
    case Cause::kActivationPeak: {
      // While serving, the warm-up's prefill had fit: the KV blocks it sized from the free
      // memory less (1 - --cuda-memory-fraction) x the card (utils/import_utils.py
      // get_cuda_free_memory, flash_causal_lm.py warmup, 1.x-3.x; default 1.0) left a batch too
      // little. Each 0.01 less keeps 1% of the card out of the blocks: the fraction that keeps
      // the failed request's shortfall (requested - free) out, a point more for margin.
      if (d->stage == "runtime") {
        const auto req = f.get(Num::kRequestedBytes), free = f.get(Num::kFreeBytes);
        std::string fraction = "--cuda-memory-fraction 0.9";
        if (req && free && f.total > 0 && *req > *free) {
          const double x = std::floor((1.0 - (*req - *free) / f.total) * 100) / 100 - 0.01;
          if (x >= 0.5) {
            fraction = fmt::format("--cuda-memory-fraction {:.2f} (from the default 1.0)", x);
          }
        }
        AddFix(d, fraction,
               "the KV blocks are sized from the free memory less (1 - fraction) x the card: a "
               "lower fraction leaves the batches' activations the room this one lacked");
      }
      // The launcher and the router refuse --max-batch-prefill-tokens below --max-input-tokens
      // (launcher/src/main.rs and router main.rs "Validate args", 0.9-3.x: "`max_batch_prefill_
      // tokens` must be >= `max_input_tokens`"): where half the prefill is below the prompt
      // limit the log gives, the limit comes down with it.
      const auto n = f.get(Num::kPrefillTokens);
      const auto input = f.get(Num::kMaxInputTokens);
      const double half = n ? std::floor(*n / 2) : 0;
      if (n && *n >= 512 && input && half < *input) {
        AddFix(d,
               fmt::format("--max-batch-prefill-tokens {0:.0f} --max-input-tokens {0:.0f}", half),
               fmt::format("halves the warm-up (and every) prefill batch; TGI refuses a prefill "
                           "budget below --max-input-tokens ({:.0f} now), so the longest prompt "
                           "comes down to {:.0f} tokens with it",
                           *input, half));
      } else {
        AddFix(d,
               n && *n >= 512 ? fmt::format("--max-batch-prefill-tokens {:.0f}", half)
                              : std::string("--max-batch-prefill-tokens lower"),
               "halves the warm-up (and every) prefill batch; keep it at least "
               "--max-input-tokens");
      }
      AddFix(d, "--max-input-tokens and --max-total-tokens lower",
             "shorter requests: a smaller prefill and KV budget");
      return true;
    }
    case Cause::kFragmentation: {
      // The cudaMallocAsync pool (rules.cc TgiAsyncPool): its cached memory is released to a
      // request only by the native caching allocator's rules, not the async pool's.
      if (f.get(Num::kReservedBytes) || f.get(Num::kReservedUnallocatedBytes) ||
          !f.get(Num::kFreeBytes)) {
        return false;
      }
      AddFix(d, "PYTORCH_CUDA_ALLOC_CONF=backend:native, or a TGI image after 0.9.3 (which uses "
                "PyTorch's native caching allocator)",
             "the cudaMallocAsync pool keeps freed memory cached between requests; the native "
             "allocator reuses it for the next request");
      AddFix(d, "restart the shard (the pool's cache is released with the process)",
             "until the allocator is changed");
      return true;
    }
    case Cause::kKvTooLongContext: {
      // The router's check (MatchWarmupPhases): --max-total-tokens against the tokens the KV
      // blocks hold ("KV-cache blocks: N, size: 16" or "Inferred max batch total tokens: N").
      const auto have = f.get(Num::kKvCacheTokens);
      const auto need = f.get(Num::kMaxTotalTokens);
      if (have && *have >= 2 && (!need || *have < *need)) {
        AddFix(d, fmt::format("--max-total-tokens {:.0f} --max-input-tokens {:.0f}", *have,
                              *have - 1),
               fmt::format("the KV cache holds {:.0f} tokens after the warm-up", *have));
      } else {
        AddFix(d, "--max-total-tokens and --max-input-tokens lower",
               "one request must fit in the KV blocks the warm-up leaves");
      }
      AddFix(d, "--max-batch-prefill-tokens lower, --num-shard 2, or --quantize",
             "a smaller warm-up peak or smaller weights leave more memory for KV blocks");
      return true;
    }
    case Cause::kCudagraphCapture:
      // launcher main.rs Args cuda_graphs ("--cuda-graphs", "0" disables, 2.0+); the blocks take
      // the free memory x CUDA_MEMORY_FRACTION x TGI_WIGGLE_ROOM (0.95, models/globals.py).
      AddFix(d, "--cuda-graphs 1,2,4,8 (or --cuda-graphs 0 to capture none)",
             "fewer and smaller captured batches");
      AddFix(d, "--cuda-memory-fraction 0.9",
             "the KV blocks take less of the free memory, leaving room for the graphs");
      return true;
    case Cause::kHostMemory:
      AddFix(d, "more system memory for the container (docker run --memory, the pod's "
                "resources.limits.memory) or the host",
             "the shard reads the checkpoint through host memory before it is on the GPU");
      AddFix(d, "a checkpoint already in safetensors",
             "TGI converts PyTorch .bin weights to safetensors first (download-weights), holding "
             "them in memory");
      return true;
    case Cause::kWeightsTooLarge:
      // On SageMaker the shards are SM_NUM_GPUS, up to the instance's GPUs: the fewest GPUs of
      // the instance's family whose memory holds the weights the name states with a fifth to
      // spare for the warm-up and the KV blocks, at the family's sizes (1, 4 or 8 GPUs).
      if (const auto card = f.get(Num::kInstanceGpuBytes)) {
        const auto per_rank = NamedWeightsPerRank(f);
        const double need = per_rank ? *per_rank * static_cast<double>(f.tp) / (0.8 * *card) : 0;
        if (need > 0 && need <= 8) {
          const int gpus = need <= 1 ? 1 : need <= 4 ? 4 : 8;
          AddFix(d, fmt::format("'SM_NUM_GPUS': json.dumps({}) on an instance with {} such GPUs",
                                gpus, gpus),
                 fmt::format("about {} of weights over {} GPUs of {}", Gib(per_rank.value() *
                             static_cast<double>(f.tp)), gpus, Gib(*card)));
        } else if (need > 8) {
          AddFix(d, "an instance of larger GPUs (ml.p4de.24xlarge: 8 x A100 80GB, "
                    "ml.p5.48xlarge: 8 x H100) or a quantized checkpoint",
                 "eight of this instance's GPUs do not hold the weights the name states");
        }
      }
      AddFix(d, "--num-shard 2 (or more GPUs)", "the weights are split across the GPUs");
      AddFix(d, "--quantize awq / gptq / fp8 (with a matching checkpoint)",
             "a quarter or half of the 16-bit weight bytes");
      return true;
    default:
      AddFix(d, "--cuda-memory-fraction 0.9",
             "leaves headroom on the GPU outside what TGI sizes its cache from");
      return true;
  }
}

// TGI's launcher prints its arguments once as it starts: "text_generation_launcher: Args {"
// (launcher/src/main.rs, 0.9+).
bool BeginsRun(const Line& line) {
  const LineView s = line.view();
  return Has(s, "text_generation_launcher: Args {");
}

}  // namespace

const Reader& TgiReader() {
  static const Reader kReader = {
      .engine = kEngine,
      .match = Match,
      .milestones = {{EventKind::kLoadBegin, Stage::kLoad},
                     {EventKind::kProfileBegin, Stage::kProfile},
                     // The warm-up prints its KV blocks before allocating them, then captures.
                     {EventKind::kKvTokens, Stage::kKvCache},
                     {EventKind::kGraphBegin, Stage::kCudaGraph},
                     {EventKind::kServing, Stage::kRuntime}},
      .fixes = Fixes,
      .words = Say,
      .begins_run = BeginsRun,
  };
  return kReader;
}

}  // namespace vramfit::doctor
