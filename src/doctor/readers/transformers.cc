// transformers' log reader (readers/reader.h): a static KV cache and device_map="auto" offload
// lines (the code lines calling from_pretrained/generate are read with PyTorch's frames). Its
// fixes: the static cache's, and PyTorch's for the rest (transformers runs on it). With --model
// and --gpu the run is rebuilt by the transformers engine (run_flags).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "doctor/readers/reader.h"

namespace vramfit::doctor {

// Lists of literals are written "..."sv: their lengths are known when compiled (a list of
// pointers is measured with strlen on every pass of a loop, on every line of a log).
using std::string_view_literals::operator""sv;
namespace {

constexpr char kEngine[] = "transformers";

// Eager attention on the stack: its function's frame (4.48+), or its score matmul or softmax on
// a code line under a model's Attention.forward (the pytorch reader's "attn_weights" frame), or
// output_attentions=True, which forces it (MatchOutputAttentions below).
bool EagerAttention(const Facts& f) {
  return AnyFrame(f, {"eager_attention_forward", "attn_weights", "output_attentions"});
}

// Attention weights asked for: output_attentions=True in the code (not commented out), or the
// warning transformers prints when it falls back from SDPA for them ("... does not support
// `output_attentions=True`. Falling back to the manual attention implementation", each model's
// SdpaAttention, 4.36-4.47; "... Falling back to eager attention", 4.48+). Only the eager path
// returns the weights, so it runs, with its heads x length x length score matrix. A marker
// outside the frame table (no stage of its own).
void MatchOutputAttentions(const Line& line) {
  const LineView s = line.view();
  if (!Has(s, "output_attentions")) return;
  const bool warning = Has(s, "does not support `output_attentions=True`");
  const size_t at = line.text.find("output_attentions=True");
  const bool set =
      at != std::string_view::npos && line.text.substr(0, at).find('#') == std::string_view::npos;
  if (set || warning) {
    line.Emit(EventKind::kFrame, kEngine).text = "output_attentions (eager attention)";
  }
}

// The bar over the checkpoint's shards (modeling_utils.py, logging.tqdm(desc="Loading checkpoint
// shards"), 4.2x-4.5x), its last state on the line: part of the way, the load is running; whole,
// the weights are loaded and what fails next is generation (or a later move of the model, whose
// frames then say so). transformers 5 loads tensor by tensor under the bar "Loading weights:
// 48%|...| 162/339" (core_model_loading.py convert_and_load_state_dict_in_model, desc="Loading
// weights"; a dev build printed ", Materializing param=NAME" after it) and ends with
// "<Class> LOAD REPORT from: <path>" (the loading report, printed once the weights are in).
// (Also where a paste reflowed the bar after its description: "Loading checkpoint shards:" +
// "100%|####| 2/2", the state read on the line that holds it.)
void MatchShardsBar(const Line& line) {
  for (std::string_view desc : {"Loading checkpoint shards:"sv, "Loading weights:"sv}) {
    std::string_view t = line.text;
    size_t bar = t.rfind(desc);
    if (bar == std::string_view::npos && !line.joined.empty()) {
      t = line.joined;
      bar = t.rfind(desc);
      const std::string_view rest =
          bar == std::string_view::npos ? ""sv : Trimmed(t.substr(bar + desc.size()));
      if (rest.empty() || !Trimmed(line.text).ends_with(rest)) continue;
    }
    if (bar == std::string_view::npos) continue;
    size_t end = 0;
    const auto pct = NumberAt(t, bar + desc.size(), &end);
    // The older bar's percentage alone is enough; "Loading weights:" is a common phrase, so its
    // bar is read only with tqdm's "%|" after the number.
    const bool v5 = desc == "Loading weights:";
    if (!pct || t.substr(end, v5 ? 2 : 1) != (v5 ? "%|" : "%")) continue;
    line.Emit(*pct >= 100 ? EventKind::kWeightsLoaded : EventKind::kLoadBegin, kEngine);
    return;
  }
  if (Has(line.view(), " LOAD REPORT from: ")) line.Emit(EventKind::kWeightsLoaded, kEngine);
}

// transformers' generate warning about its inputs as it starts (generation/utils.py
// _prepare_special_tokens and _prepare_attention_mask_for_generation, 4.3x-4.5x): "Setting
// `pad_token_id` to `eos_token_id`:2 for open-end generation.", "The attention mask and the pad
// token id were not set. ...", "The attention mask is not set and cannot be inferred from input
// because pad token is same as eos token. ...": generation began.
// The text2text pipelines check a request's length right before they call generate
// (pipelines/text2text_generation.py Text2TextGenerationPipeline._forward -> check_inputs,
// 4.x): TranslationPipeline's "Your input_length: 1024 is bigger than 0.9 * max_length: 200.",
// SummarizationPipeline's "Your max_length is set to 142, but your input_length is only 56.";
// generate's own "Input length of input_ids is 300, but `max_length` is set to 20."
// (generation/utils.py _validate_generated_length, 4.3x-4.5x): a request being generated.
bool RequestLengthWarning(const LineView& s) {
  return (Has(s, "Your input_length:") && Has(s, "* max_length:")) ||
         Has(s, "but your input_length is only") ||
         (Has(s, "Input length of input_ids is") && Has(s, "max_length"));
}
void MatchGenerateWarning(const Line& line) {
  const LineView s = line.view();
  if (!Has(s, "for open-end generation") && !Has(s, "he attention mask and the pad token id") &&
      !Has(s, "he attention mask is not set and cannot be inferred") &&
      !RequestLengthWarning(s)) {
    return;
  }
  line.Emit(EventKind::kServing, kEngine);
}

// A prompt's length in tokens, as transformers prints it: the tokenizer's warning when an input
// is longer than the model's limit ("Token indices sequence length is longer than the specified
// maximum sequence length for this model (5193 > 4096). Running this sequence through the model
// will result in indexing errors", tokenization_utils_base.py
// _eventual_warn_about_too_long_sequence, 4.x) and generate's "Input length of input_ids is 300,
// but `max_length` is set to 20." (generation/utils.py _validate_generated_length, 4.3x-4.5x).
void MatchPromptLength(const Line& line) {
  const LineView s = line.view();
  std::optional<double> tokens;
  if (Has(s, "Token indices sequence length is longer than")) {
    tokens = NumberAfter(s, "for this model (");
  } else if (Has(s, "Input length of input_ids is")) {
    tokens = NumberAfter(s, "Input length of input_ids is");
  }
  if (!tokens) return;
  Set(line.Emit(EventKind::kPrompt, kEngine), Num::kPromptTokens, tokens);
}

// The caches generate allocates whole before the prefill, for max_length (prompt plus
// max_new_tokens) in every layer: the cache_implementation values with a cache class to set up
// (generation/configuration_utils.py NEED_SETUP_CACHE_CLASSES_MAPPING, 4.42-4.54: "static",
// "offloaded_static", "sliding_window", "hybrid", "hybrid_chunked"; from 4.56 the same names build
// a StaticCache of static or sliding layers, cache_utils.py) and their classes. "offloaded" and
// "quantized" grow with the sequence like the dynamic cache. Gemma 2 and 3 set "hybrid" in their
// generation_config.json, which generate reports as it applies it ("`generation_config` default
// values have been modified to match model-specific defaults: {'cache_implementation':
// 'hybrid', ...}", generation/utils.py _prepare_generation_config, 4.50+).
constexpr std::string_view kPreallocatedCaches[] = {"static", "offloaded_static",
                                                    "sliding_window", "hybrid", "hybrid_chunked"};
constexpr std::string_view kPreallocatedCacheClasses[] = {
    "StaticCache", "HybridCache", "SlidingWindowCache", "HybridChunkedCache"};

// A preallocated cache named on the line: a cache class, or cache_implementation set to one in any
// of the spellings a log shows it (a keyword argument, =" or =', a JSON field, a dict's repr), not
// where the code has it commented out. Also read across a terminal's wrap (the previous line's
// message and this one's, joined as wrapped: "{'cache_implementation': 'hybrid" + "', ...").
bool PreallocatedCacheIn(const LineView& s);

bool PreallocatedCache(const Line& line) {
  if (PreallocatedCacheIn(line.view())) return true;
  return !line.joined_tight.empty() && PreallocatedCacheIn(line.joined_tight);
}

bool PreallocatedCacheIn(const LineView& s) {
  for (std::string_view cls : kPreallocatedCacheClasses) {
    if (Has(s, cls)) return true;
  }
  const std::string_view t = s;
  const size_t key = t.find("cache_implementation");
  if (key == std::string_view::npos || t.substr(0, key).find('#') != std::string_view::npos) {
    return false;
  }
  size_t at = key + std::string_view("cache_implementation").size();
  auto skip = [&](std::string_view chars) {
    while (at < t.size() && chars.find(t[at]) != std::string_view::npos) ++at;
  };
  skip("\"' ");
  if (at >= t.size() || (t[at] != '=' && t[at] != ':')) return false;
  ++at;
  skip(" ");
  if (at >= t.size() || (t[at] != '"' && t[at] != '\'')) return false;
  const char quote = t[at++];
  const size_t end = t.find(quote, at);
  if (end == std::string_view::npos) return false;
  const std::string_view value = t.substr(at, end - at);
  return std::find(std::begin(kPreallocatedCaches), std::end(kPreallocatedCaches), value) !=
         std::end(kPreallocatedCaches);
}

// bitsandbytes refusing a device map that put quantized modules on the CPU or disk: "Some modules
// are dispatched on the CPU or the disk. Make sure you have enough GPU RAM to fit the quantized
// model." (transformers quantizers/quantizer_bnb_4bit.py and _8bit.py validate_environment,
// 4.36+; modeling_utils.py from_pretrained before; accelerate utils/bnb.py
// load_and_quantize_model). A machine without a GPU stops earlier ("No GPU found"), so the
// quantized weights did not fit the GPU memory device_map="auto" had for them: a load failure
// in memory's words (a failure event, and the from_pretrained that runs the check).
// The same for a device map with every module on the disk, which accelerate's
// infer_auto_device_map gives when max_memory leaves no GPU or CPU room for even one layer:
// "You are trying to offload the whole model to the disk. Please use the `disk_offload` function
// instead." (modeling_utils.py from_pretrained, 4.3x+).
// And a device map that sends layers to the disk with nowhere given to put them: what did not
// fit the GPU and the CPU's max_memory (accelerate big_modeling.py dispatch_model: "We need an
// `offload_dir` to dispatch this model according to this `device_map`, the following submodules
// need to be offloaded: ..."; transformers modeling_utils.py: "The current `device_map` had
// weights offloaded to the disk. Please provide an `offload_folder` for them.").
bool OffloadMoveRefusal(const LineView& s) {
  return Has(s, "You can't move a model that has some modules offloaded");
}
// The other refusals of a device map that offloaded what did not fit the GPU: bitsandbytes
// 8-bit's "If you want to offload some keys to `cpu` or `disk`, you need to set
// `llm_int8_enable_fp32_cpu_offload=True`" (quantizer_bnb_8bit.py validate_environment, 4.3x+);
// the quantizers that cannot run on the CPU, "You are attempting to load an AWQ model with a
// device_map that contains a CPU or disk device" (quantizer_awq.py; the FP8, FP4, EETQ and quanto
// quantizers word it alike, "a cpu/disk device" in some); and accelerate's "You can't move a
// model that has some modules offloaded to cpu or disk." (big_modeling.py dispatch_model,
// 0.2x+), raised when a program calls .to("cuda") on a model device_map="auto" spread to the
// CPU. (Not optimum's "Found modules on cpu/disk. Using Exllama or Exllamav2 backend requires
// all the modules to be on GPU" (gptq/quantizer.py post_init_model): a quantizing run keeps
// the model on the CPU by design and meets it after its last block, whatever fits.)
bool OffloadRefusalIn(const LineView& s) {
  return Has(s, "Some modules are dispatched on the CPU or the disk") ||
         Has(s, "offload the whole model to the disk") ||
         Has(s, "need an `offload_dir` to dispatch this model") ||
         Has(s, "Please provide an `offload_folder` for them") || OffloadMoveRefusal(s) ||
         Has(s, "offload some keys to `cpu` or `disk`") ||
         ((Has(s, "with a device_map that contains a CPU or disk device") ||
           Has(s, "with a device_map that contains a cpu/disk device")) &&
          Has(s, "You are attempting to load an"));
}
void MatchBnbDispatched(const Line& line) {
  const LineView s = line.view();
  // (Or the quantizers' long refusal reflowed over two lines.)
  if (!OffloadRefusalIn(s) &&
      Whole(line, "with a device_map that contains a CPU or disk device").empty() &&
      Whole(line, "with a device_map that contains a cpu/disk device").empty()) {
    return;
  }
  line.Emit(EventKind::kCudaOom, kEngine).text = std::string(line.text);
  line.Emit(EventKind::kFrame, kEngine).text = "from_pretrained";
}

// transformers 5's load report (utils/loading_report.py log_state_dict_report, called by
// from_pretrained after the weights): a row "<key> | CONVERSION | <the error's text>" for each
// weight whose conversion (core_model_loading.py convert_and_load_state_dict_in_model: merging,
// splitting, quantizing, moving it) raised, then from_pretrained raises "We encountered some
// issues during automatic conversion of the weights. For details look at the `CONVERSION`
// entries of the above report!". The failure is the load's, however late the report prints.
// (Also a row a paste reflowed after its status, "<key> | CONVERSION |" + "<the error>", and
// the message reflowed inside its words.)
void MatchConversionReport(const Line& line) {
  const LineView s = line.view();
  std::string_view t = line.text;
  while (!t.empty() && (t.back() == ' ' || t.back() == '\r')) t.remove_suffix(1);
  if (!Has(s, " | CONVERSION | ") && !t.ends_with(" | CONVERSION |") &&
      Whole(line, "issues during automatic conversion of the weights").empty()) {
    return;
  }
  line.Emit(EventKind::kFrame, kEngine).text = "convert_and_load_state_dict_in_model";
}

// Lines printed once the model is built and running, not loading: the Trainer's banners
// before its loops, "***** Running training *****" (trainer.py _inner_training_loop, 4.x; the
// Hugging Face example scripts, accelerate's and diffusers' print the same), "***** Running
// Evaluation *****" and "***** Running Prediction *****" (evaluation_loop), its log of a step,
// "{'loss': 1.93, 'grad_norm': ..., 'learning_rate': 2e-05, 'epoch': 0.1}" (Trainer.log through
// ProgressCallback.on_log); and generate's MaxLengthCriteria warning "This is a friendly
// reminder - the current text generation call will exceed the model's predefined maximum length"
// (generation/stopping_criteria.py, 4.3x+), printed while generating: the run is past its load.
void MatchRunning(const Line& line) {
  const LineView s = line.view();
  const bool banner =
      Has(s, "***** Running ") && (Has(s, "Running training *****") ||
                                   Has(s, "Running Evaluation *****") ||
                                   Has(s, "Running evaluation *****") ||
                                   Has(s, "Running Prediction *****"));
  const bool step_log = Has(s, "{'loss': ") && Has(s, "'learning_rate': ");
  // (The warning also where a paste reflowed it inside its words.)
  if (banner || step_log ||
      !Whole(line, "the current text generation call will exceed the model's predefined maximum")
           .empty()) {
    line.Emit(EventKind::kServing, kEngine);
  }
}

// The Trainer's report of its batch under the training banner (trainer.py _inner_training_loop,
// 4.x: "  Instantaneous batch size per device = 4", "  Gradient Accumulation steps = 8"), and
// generate's beams as the code or the generation config gives them ("num_beams=8", "'num_beams':
// 4"): the numbers the fixes halve.
void MatchRunSettings(const Line& line) {
  const LineView s = line.view();
  if (Has(s, "Instantaneous batch size per device =")) {
    Set(line.Emit(EventKind::kConfig, kEngine), Num::kTrainBatchPerDevice,
        NumberAfter(s, "Instantaneous batch size per device ="));
  }
  if (Has(s, "Gradient Accumulation steps =")) {
    Set(line.Emit(EventKind::kConfig, kEngine), Num::kGradAccumSteps,
        NumberAfter(s, "Gradient Accumulation steps ="));
  }
  for (std::string_view key : {"num_beams="sv, "'num_beams': "sv, "\"num_beams\": "sv}) {
    const size_t at = line.text.find(key);
    const bool commented =
        at != std::string_view::npos && line.text.substr(0, at).find('#') != std::string_view::npos;
    if (at == std::string_view::npos || commented) continue;
    const auto beams = NumberAt(line.text, at + key.size());
    if (beams && *beams >= 1) Set(line.Emit(EventKind::kConfig, kEngine), Num::kNumBeams, beams);
    break;
  }
}

// FastChat's launch (fastchat/serve/cli.py, model_worker.py, 0.2.x; the flags of
// fastchat/model/model_adapter.py add_model_args): "python3 -m fastchat.serve.cli --model-path
// lmsys/vicuna-7b-v1.5 [--load-8bit] [--num-gpus 2]". load_model places the whole model with
// transformers' from_pretrained, spread over --num-gpus cards (device_map="sequential" with an
// even max_memory), 8-bit with --load-8bit (its own compression.py, or bitsandbytes): the model's
// name (with " (--load-8bit)" where it loads in 8 bits, which NameBits reads) and the cards.
void MatchFastChatLaunch(const Line& line) {
  const LineView s = line.view();
  if (!Has(s, "fastchat.serve.") || !Has(s, "--model-path")) return;
  const std::string_view t = line.text;
  size_t b = t.find("--model-path") + 12;
  while (b < t.size() && (t[b] == ' ' || t[b] == '=')) ++b;
  size_t e = b;
  while (e < t.size() && e - b < 200 && t[e] != ' ' && t[e] != '*' && t[e] != '`') ++e;
  if (e == b) return;
  std::string name(t.substr(b, e - b));
  if (Has(s, "--load-8bit")) name += " (--load-8bit)";
  line.Emit(EventKind::kConfig, kEngine).text = name;
  if (Has(s, "--num-gpus")) {
    const auto gpus = NumberAfter(s, "--num-gpus");
    if (gpus && *gpus >= 1) {
      Set(line.Emit(EventKind::kConfig, kEngine), Num::kTensorParallelSize, gpus);
    }
  }
}

// The dtype a from_pretrained call loads the weights in: torch_dtype= (and dtype=, its name from
// 4.56), torch.float16 / torch.bfloat16 / "auto" (the checkpoint's own, 16 bits for the models
// this reads) against torch.float32 / torch.float. Read for the fix: a load that asked for 16 bits
// already is not told to.
void MatchLoadDtype(const Line& line) {
  const LineView s = line.view();
  if (!Has(s, "from_pretrained(")) return;
  for (std::string_view key : {"torch_dtype="sv, "dtype="sv}) {
    const size_t at = s.find(key);
    if (at == std::string_view::npos) continue;
    const std::string_view v = s.substr(at + key.size(), 24);
    const bool sixteen = v.starts_with("torch.float16") || v.starts_with("torch.bfloat16") ||
                         v.starts_with("torch.half") || v.starts_with("\"auto\"") ||
                         v.starts_with("'auto'") || v.starts_with("\"float16\"") ||
                         v.starts_with("\"bfloat16\"");
    const bool thirty_two = v.starts_with("torch.float32") || v.starts_with("torch.float)") ||
                            v.starts_with("torch.float,") || v.starts_with("\"float32\"");
    if (!sixteen && !thirty_two) return;
    auto& e = line.Emit(EventKind::kConfig, kEngine);
    e.text.clear();  // no model's name
    Set(e, Num::kLoadDtypeBits, sixteen ? 16 : 32);
    return;
  }
}

// bitsandbytes asked to quantize on load, in the program's code (not where it is commented
// out): BitsAndBytesConfig(load_in_4bit=True) / load_in_8bit=True, or the same keywords passed
// to from_pretrained before 4.3x.
void MatchBnbBits(const Line& line) {
  const LineView s = line.view();
  // Also the quantizer's frames on the traceback (quantizers/quantizer_bnb_4bit.py and
  // _8bit.py create_quantized_param, 4.36+; bitsandbytes' Params4bit / Int8Params as it moves a
  // quantized weight to the GPU).
  if (Has(s, "quantizer_bnb_4bit.py") || Has(s, "Params4bit(")) {
    line.Emit(EventKind::kConfig, kEngine).values[Num::kLoadQuantBits] = 4;
    return;
  }
  if (Has(s, "quantizer_bnb_8bit.py") || Has(s, "Int8Params(")) {
    line.Emit(EventKind::kConfig, kEngine).values[Num::kLoadQuantBits] = 8;
    return;
  }
  if (!Has(s, "load_in_")) return;
  for (const auto& [key, bits] : {std::pair{"load_in_4bit=True"sv, 4.0},
                                  std::pair{"load_in_8bit=True"sv, 8.0}}) {
    const size_t at = s.find(key);
    if (at == std::string_view::npos || s.substr(0, at).find('#') != std::string_view::npos) {
      continue;
    }
    line.Emit(EventKind::kConfig, kEngine).values[Num::kLoadQuantBits] = bits;
    return;
  }
}

// accelerate's find_executable_batch_size (utils/memory.py, 0.1x+, the Trainer's
// auto_find_batch_size): it halves the batch after each out-of-memory and raises "No executable
// batch size found, reached zero." once even a batch of one failed: an out-of-memory.
void MatchBatchSizeSearch(const Line& line) {
  const LineView s = line.view();
  if (Has(s, "raise ") || Whole(line, "No executable batch size found, reached zero").empty()) {
    return;
  }
  line.Emit(EventKind::kCudaOom, kEngine).text = std::string(line.text.substr(0, 300));
}

void Match(const Line& line) {
  const LineView s = line.view();
  MatchOutputAttentions(line);
  MatchBatchSizeSearch(line);
  MatchLoadDtype(line);
  MatchBnbBits(line);
  MatchBnbDispatched(line);
  if (Has(s, "CONVERSION") || Has(s, "automatic conversion")) MatchConversionReport(line);
  if (Has(s, "*****") || Has(s, "'loss': ") || Has(s, "friendly reminder") ||
      Has(line.joined, "friendly reminder")) {
    MatchRunning(line);
  }
  if (Has(s, "num_beams") || Has(s, " = ")) MatchRunSettings(line);
  if (Has(s, "Loading checkpoint shards:") || Has(s, "Loading weights:") ||
      Has(s, " LOAD REPORT from: ") || Has(line.joined, "Loading checkpoint shards:") ||
      Has(line.joined, "Loading weights:")) {
    MatchShardsBar(line);
  }
  // A quantizer's warning that it dequantizes the checkpoint as it loads it (quantizers/
  // quantizer_mxfp4.py validate_environment, 4.55+: "... we will default to dequantizing the
  // model to bf16" without the Triton kernels or on an older GPU; quantizer_finegrained_fp8.py the
  // same below compute capability 8.9): printed in from_pretrained before the weights are read
  // (load_copies.cc DequantizeOnLoad).
  // (Also wrapped or reflowed: the joined text. The event carries the warning's own sentence,
  // whatever a lost line end put before it: the quantizer's name and the words.)
  constexpr std::string_view kDequantizing = "default to dequantizing the model";
  for (const std::string_view t : {line.text, std::string_view(line.joined)}) {
    const size_t at = t.find(kDequantizing);
    if (at == std::string_view::npos) continue;
    const size_t from = at > 160 ? at - 160 : 0;
    line.Emit(EventKind::kLoadBegin, kEngine).text =
        std::string(t.substr(from, at + kDequantizing.size() + 16 - from));
    break;
  }
  // Unsloth's merged save (unsloth/save.py unsloth_save_model, save_method="merged_16bit"):
  // "Unsloth: Merging 4bit and LoRA weights to 16bit...", then a bar over the decoder layers,
  // each dequantized and merged on the GPU (load_copies.cc UnslothMerge).
  if (Has(s, "Merging 4bit and LoRA weights to 16bit")) {
    line.Emit(EventKind::kLoadBegin, kEngine).values[Num::kUnslothMerge] = 1;
  }
  MatchGenerateWarning(line);
  if (Has(s, "fastchat.serve.")) MatchFastChatLaunch(line);
  if (Has(s, "Token indices") || Has(s, "Input length of")) MatchPromptLength(line);
  if ((Has(s, "Cache") || Has(s, "cache_implementation") ||
       Has(line.joined_tight, "Cache") || Has(line.joined_tight, "cache_implementation")) &&
      PreallocatedCache(line)) {
    line.Emit(EventKind::kStaticCache, kEngine);
  }
  // AutoAWQ's fused modules (from_quantized(..., fuse_layers=True), AutoAWQ 0.1.6-0.2.x; the
  // same modules through transformers' AwqConfig(do_fuse=True)): awq/models/base.py fuses the
  // layers inside from_quantized, and awq/modules/fused/attn.py gives each fused attention a
  // WindowedCache of batch x max_seq_len allocated there (awq/modules/fused/cache.py). The
  // setting read where the code is shown; the rules use it only at the load stage.
  if (Has(s, "fuse_layers=True") || Has(s, "do_fuse=True")) {
    line.Emit(EventKind::kStaticCache, kEngine).text = "fused";
  }
  // A cap on the GPU's share of the weights, the rest kept on the CPU by accelerate's device map:
  // max_memory= in from_pretrained (not commented out); the front ends' flags that set it,
  // FastChat's --max-gpu-memory and --cpu-offloading (fastchat/model/model_adapter.py, 0.2.x:
  // "The maximum memory per gpu", "Offload excess weights to the CPU that don't fit on the
  // GPU") and text-generation-webui's --gpu-memory and --auto-devices (modules/shared.py,
  // 2023-2024). An offload event with the text "cap". Whether the offloaded layers are moved in
  // for each forward (accelerate's hooks) or run on the CPU (bitsandbytes' fp32 CPU offload) the
  // line does not say.
  const size_t max_memory =
      Has(s, "max_memory=") ? line.text.find("max_memory=") : std::string_view::npos;
  const bool capped =
      (max_memory != std::string_view::npos &&
       line.text.substr(0, max_memory).find('#') == std::string_view::npos) ||
      Has(s, "--max-gpu-memory") || Has(s, "--cpu-offloading") || Has(s, "--gpu-memory ") ||
      Has(s, "--gpu-memory=") || Has(s, "--auto-devices");
  // The setting (not where the code has it commented out), and accelerate's warning that the
  // load did offload weights to host memory (accelerate/utils/modeling.py, big_modeling.py),
  // also infer_auto_device_map's "Current model requires N bytes of buffer for offloaded
  // layers, which seems does not fit any GPU's remaining memory" (accelerate/utils/modeling.py,
  // 0.29+): layers were placed on the CPU or disk.
  const bool offloaded = Has(s, "offloaded to the cpu") ||
                         Has(s, "Some parameters are on the meta device") ||
                         Has(s, "of buffer for offloaded layers");
  if (!offloaded && capped) {
    line.Emit(EventKind::kOffload, kEngine).text = "cap";
  } else if (!offloaded && Has(s, "device_map=")) {
    for (std::string_view key : {"device_map=\"auto\""sv, "device_map='auto'"sv}) {
      const size_t at = line.text.find(key);
      if (at != std::string_view::npos &&
          line.text.substr(0, at).find('#') == std::string_view::npos) {
        line.Emit(EventKind::kOffload, kEngine);
      }
    }
  }
  if (offloaded) {
    line.Emit(EventKind::kOffload, kEngine);
    line.Emit(EventKind::kCpuOffload, kEngine);
  }
  // The pipeline factory, pipeline('<task>', model='<id>', ...) (transformers/pipelines/
  // __init__.py, every release since 2.x): the program is a transformers one, and the model's
  // id is the one it names.
  if ((Has(s, "pipeline('") || Has(s, "pipeline(\"")) && Has(s, "model=")) {
    const std::string_view t = line.text;
    size_t b = t.find("model=") + 6;
    if (b < t.size() && (t[b] == '\'' || t[b] == '"')) ++b;
    size_t e = b;
    while (e < t.size() && e - b < 200 && t[e] != '\'' && t[e] != '"' && t[e] != ',' &&
           t[e] != ')' && t[e] != ' ')
      ++e;
    line.Emit(EventKind::kConfig, kEngine).text = std::string(t.substr(b, e - b));
  }
}

// generate on the stack (generation/utils.py GenerationMixin.generate and its decoding loops).
bool GenerateFrames(const Facts& f) {
  return AnyFrame(f, {"generate", "_sample", "_beam_search", "sample", "greedy_search",
                      "_greedy_search", "beam_search"});
}

bool Fixes(Cause cause, const Facts& f, Diagnosis* d) {
  // A training run's optimizer states, or peft upcasting a loaded model: not the loading
  // advice below (readers/pytorch.cc).
  if (cause == Cause::kWeightsTooLarge && AddTrainingStateFixes(f, d)) return true;
  AddPerProcessCapFix(f, d);
  if (AddUnslothMergeFixes(cause, f, d)) return true;
  if (cause == Cause::kStaticCache) {
    if (d->stage == "load") {  // AutoAWQ's fused modules
      AddFix(d, "from_quantized(..., fuse_layers=False) or a smaller max_seq_len",
             "the fused modules' cache is batch x max_seq_len for every layer, allocated at load");
      return true;
    }
    AddFix(d, "cache_implementation=\"dynamic\", or a max_new_tokens (max_cache_len) that bounds "
              "the cache",
           "a static cache reserves batch x max length (prompt plus max_new_tokens) of KV in "
           "every layer up front");
    return true;
  }
  // Several ranks (torchrun's "[rankN]: " prefixes): data parallelism (DDP, the Trainer and
  // accelerate without FSDP or DeepSpeed) gives every process a whole copy of the model on its
  // own GPU, so more GPUs do not make room for it; FSDP and DeepSpeed ZeRO-3 shard the
  // parameters over the ranks (each holds 1/N).
  if (cause == Cause::kWeightsTooLarge && f.ranks.size() > 1) {
    AddFix(d, "shard the model over the ranks (FSDP, or DeepSpeed ZeRO-3, in the Trainer's / "
              "accelerate's config), or load it once over the GPUs in one process "
              "(from_pretrained(..., device_map=\"auto\"))",
           fmt::format("{} ranks each place a whole copy of the model on their own GPU",
                       f.ranks.size()));
  }
  // A quantizer's run, or a model whose name states more weights than the card holds.
  if (cause == Cause::kWeightsTooLarge && (QuantizerFrames(f) || NamedWeightsOverCard(f))) {
    return PytorchReader().fixes(cause, f, d);
  }
  const LogEvent* oom = f.first_of(EventKind::kCudaOom);
  if (cause == Cause::kWeightsTooLarge && oom && OffloadMoveRefusal(LineView(oom->text))) {
    AddFix(d, "no .to(\"cuda\") / .cuda() after from_pretrained(..., device_map=\"auto\")",
           "accelerate has already placed the model; the layers it put on the CPU are there "
           "because the model does not fit the GPU, and moving them by hand is refused");
    AddFix(d, "from_pretrained(..., quantization_config=BitsAndBytesConfig(load_in_4bit=True)), "
              "or a GPU with more memory",
           "the whole model then fits the GPU and nothing is offloaded");
    return true;
  }
  if (cause == Cause::kWeightsTooLarge && oom &&
      Has(oom->text, "with a device_map that contains")) {
    AddFix(d, "more GPU memory for the model (device_map=\"auto\" over more GPUs, a larger "
              "max_memory for the GPU), or a smaller checkpoint",
           "this quantization runs only on the GPU; the device map offloaded layers because they "
           "did not fit");
    AddFix(d, "BitsAndBytesConfig(load_in_4bit=True, llm_int8_enable_fp32_cpu_offload=True) on "
              "the 16-bit model",
           "bitsandbytes keeps the layers that do not fit on the CPU (slower)");
    return true;
  }
  if (cause == Cause::kWeightsTooLarge && oom &&
      (Has(oom->text, "Some modules are dispatched") ||
       Has(oom->text, "offload some keys to `cpu`"))) {
    AddFix(d, "BitsAndBytesConfig(load_in_4bit=True) instead of 8-bit, or a GPU with more memory",
           "the quantized weights did not fit the GPU memory the device map had for them");
    AddFix(d, "BitsAndBytesConfig(..., llm_int8_enable_fp32_cpu_offload=True) with a device_map "
              "that places the layers left over on the CPU",
           "bitsandbytes then keeps the CPU layers in 32 bits instead of refusing them (slower)");
    return true;
  }
  if (cause == Cause::kWeightsTooLarge && oom &&
      (Has(oom->text, "offload_dir") || Has(oom->text, "offload_folder"))) {
    AddFix(d, "from_pretrained(..., quantization_config=BitsAndBytesConfig(load_in_4bit=True))",
           "4-bit weights: about a quarter of the 16-bit model, more of it on the GPU and none "
           "left for the disk");
    AddFix(d, "from_pretrained(..., offload_folder=\"offload\")",
           "lets the layers that fit neither the GPU nor the CPU's max_memory go to the disk "
           "(much slower)");
    AddFix(d, "max_memory={0: \"...GiB\", \"cpu\": \"...GiB\"} with more CPU room",
           "the layers left over stay in RAM instead of the disk");
    return true;
  }
  if (cause == Cause::kWeightsTooLarge && oom && Has(oom->text, "whole model to the disk")) {
    AddFix(d, "max_memory with more room on the GPU and the CPU (or offload_folder=... to let "
              "the layers that do not fit go to disk)",
           "accelerate found no room for even one layer in the max_memory given, so it placed "
           "the whole model on the disk, which from_pretrained refuses");
  }
  // FSDP's full state dict at the save: the neutral fixes (diagnose.cc) gather it on the CPU.
  if (cause == Cause::kWeightsTooLarge && FsdpFullStateDict(f)) return true;
  if (cause == Cause::kWeightsTooLarge) {
    // The log's code already quantizes with bitsandbytes (MatchBnbBits): a smaller dtype is no
    // way out; offloading, 4 bits from 8, or more GPU memory is.
    if (const auto q = f.get(Num::kLoadQuantBits)) {
      if (*q > 4) {
        AddFix(d, "BitsAndBytesConfig(load_in_4bit=True) instead of 8-bit",
               "4-bit weights take about half the 8-bit ones");
      }
      AddFix(d, "device_map=\"auto\" with max_memory={0: \"...GiB\", \"cpu\": \"...GiB\"} and "
                "BitsAndBytesConfig(..., llm_int8_enable_fp32_cpu_offload=True)",
             fmt::format("the weights are already quantized to {:.0f} bits on load: the layers "
                         "that do not fit stay on the CPU (slower)", *q));
      AddFix(d, "more GPUs (device_map=\"auto\" spreads the layers), or a smaller model",
             "the quantized weights alone exceed the GPU's memory");
      return true;
    }
    // The dtype the log's from_pretrained asks for (MatchLoadDtype): 16 or 32 bits, or unknown.
    const auto bits = f.get(Num::kLoadDtypeBits);
    if (!bits) {
      AddFix(d, "from_pretrained(..., torch_dtype=torch.bfloat16) (not float32), a 4-/8-bit "
                "quantization_config, or device_map=\"auto\" with max_memory to offload layers",
             "the weights as loaded do not fit the GPU");
    } else if (*bits >= 32) {
      AddFix(d, "from_pretrained(..., torch_dtype=torch.bfloat16)",
             "the log loads the weights in float32: 16 bits halve them");
      AddFix(d, "a 4-/8-bit quantization_config, or device_map=\"auto\" with max_memory to "
                "offload layers",
             "if the 16-bit weights do not fit either");
    } else {
      AddFix(d, "from_pretrained(..., quantization_config=BitsAndBytesConfig(load_in_4bit=True)) "
                "or a 4-bit AWQ/GPTQ checkpoint, or device_map=\"auto\" with max_memory to "
                "offload layers",
             "the weights do not fit the GPU even in the 16 bits the log loads them in");
    }
    return true;
  }
  // MXFP4 experts dequantized to bf16 at load (integrations/mxfp4.py convert_moe_packed_tensors,
  // 4.55+): the Mxfp4 quantizer dequantizes when its Triton kernels cannot run (no
  // triton_kernels / `kernels` package, a GPU before compute capability 7.5-9.0) or when told to.
  if (cause == Cause::kDequantizedCopy &&
      (f.dequantize_warning ||
       AnyFrame(f, {"convert_moe_packed_tensors", "load_and_swizzle_mxfp4", "swizzle_mxfp4"}))) {
    if (f.dequantize_warning && Has(f.dequantize_warning->text, "FP8")) {
      AddFix(d, "a GPU of compute capability 8.9 or newer (L4, RTX 4090, H100), where the FP8 "
                "weights load as they are; or device_map=\"auto\" with max_memory to offload "
                "layers",
             "below it transformers loads the FP8 checkpoint dequantized to bf16, twice its size");
      return true;
    }
    AddFix(d, "install the `kernels` (triton_kernels) package on a GPU that runs them, so the "
              "MXFP4 experts load packed; or device_map=\"auto\" with max_memory to offload "
              "layers",
           "without the kernels transformers loads the experts dequantized to bf16, four times "
           "their packed size");
    return true;
  }
  if (cause == Cause::kOffloadDequantized) {
    AddFix(d, "max_memory={0: \"<less than the card>\", \"cpu\": \"...\"} in from_pretrained",
           "leaves room on the GPU for the offloaded layers moved in for each forward");
    AddFix(d, "a quantized checkpoint that fits on the GPU whole",
           "no offloaded layers to move in at generate time");
    return true;
  }
  // The run capped the weights' share of the card (the offload event "cap"): a lower cap leaves
  // generation more of it.
  const LogEvent* offload = f.first_of(EventKind::kOffload);
  if (cause == Cause::kActivationPeak && offload && offload->text == "cap") {
    const auto allocated = f.get(Num::kAllocatedBytes);
    AddFix(d, "a lower cap for the weights on the GPU (max_memory={0: ...} in from_pretrained; "
              "FastChat's --max-gpu-memory, text-generation-webui's --gpu-memory), the rest kept "
              "on the CPU",
           allocated && f.total > 0
               ? fmt::format("the capped weights and generation share the card: {} of its {} "
                             "was allocated when the request failed",
                             Gib(*allocated), Gib(f.total))
               : std::string("the capped weights and generation share the card"));
  }
  // AutoAWQ's fused attention (awq/modules/fused/attn.py, 0.1.6-0.2.x) computes a prompt's
  // scores as one matmul, batch x heads x length x length (no SDPA or flash attention), beside a
  // cache sized by max_seq_len: a serving failure under its frames or setting.
  const LogEvent* fused = f.first_of(EventKind::kStaticCache);
  if (cause == Cause::kActivationPeak && fused && fused->text == "fused") {
    AddFix(d, "from_quantized(..., fuse_layers=False), or a shorter prompt",
           "AutoAWQ's fused attention materialises the prompt's full score matrix; unfused, the "
           "model's own attention (SDPA) runs");
  }
  if (cause == Cause::kActivationPeak && AnyFrame(f, {"output_attentions"})) {
    AddFix(d, "output_attentions=False (or a shorter input)",
           "returning the attention weights forces eager attention, which keeps a heads x length "
           "x length score matrix per layer; SDPA and flash attention return none");
  } else if (cause == Cause::kActivationPeak && EagerAttention(f)) {
    AddFix(d, "attn_implementation=\"sdpa\" (or \"flash_attention_2\") in from_pretrained",
           "eager attention materialises the full heads x length x length score matrix; SDPA and "
           "flash attention do not");
  }
  // The prompt's length the log gives (MatchPromptLength): the prefill's activations and the
  // dynamic cache generate grows from it scale with it.
  if (const auto prompt = f.get(Num::kPromptTokens);
      cause == Cause::kActivationPeak && d->stage == "runtime" && prompt && *prompt > 0) {
    AddFix(d,
           fmt::format("a prompt shorter than its {:.0f} tokens (tokenizer(..., truncation=True, "
                       "max_length=...)) and a smaller max_new_tokens",
                       *prompt),
           "generate's prefill holds activations for every prompt token, and its dynamic KV "
           "cache grows from the prompt with each new token");
  }
  if (cause == Cause::kMultimodalEncoder) {
    // The Qwen2-VL / Qwen2.5-VL image processors resize each image to at most max_pixels
    // (image_processing_qwen2_vl.py smart_resize, 4.45+); other processors take a size.
    AddFix(d, "smaller images through the processor (AutoProcessor.from_pretrained(..., "
              "max_pixels=...) for Qwen2-VL / Qwen2.5-VL, a smaller size= for others) and fewer "
              "images or video frames a call",
           "the vision tower's activations grow with the image's patches");
    AddFix(d, "attn_implementation=\"sdpa\" (or \"flash_attention_2\") in from_pretrained",
           "the vision tower's eager attention builds a patches x patches score matrix per head");
    return true;
  }
  // Beam search runs num_beams sequences for each prompt (generation/utils.py
  // _expand_inputs_for_generation with expand_size=num_beams, then _beam_search; beam_search
  // before 4.42): their activations and dynamic KV cache grow with them.
  const auto beams = f.get(Num::kNumBeams);
  if (cause == Cause::kActivationPeak && d->stage == "runtime" &&
      ((beams && *beams >= 2) ||
       AnyFrame(f, {"_beam_search", "beam_search", "beam_sample", "group_beam_search"}))) {
    AddFix(d,
           beams && *beams >= 2
               ? fmt::format("num_beams={:.0f} (from {:.0f}) in generate",
                             std::max(1.0, std::floor(*beams / 2)), *beams)
               : std::string("fewer num_beams in generate"),
           "each beam is a sequence of its own: activations and the KV cache grow with the beams");
  }
  // generate compiles the forward itself when the cache is static (generation/utils.py, 4.47+:
  // GenerationConfig.compile_config, mode "reduce-overhead"); disable_compile turns that off
  // (generation/configuration_utils.py, 4.5x).
  if (cause == Cause::kCudagraphCapture && GenerateFrames(f)) {
    AddFix(d, "generation_config.disable_compile=True, if generate compiled the forward itself "
              "(a static cache)",
           "generate then runs the forward uncompiled, recording no CUDA graphs");
  }
  if (cause == Cause::kFragmentation) return false;
  if (PytorchReader().fixes(cause, f, d)) {
    // generate's dynamic cache grows on the GPU with every token; OffloadedCache keeps every
    // layer's KV in CPU memory but the one being computed (generation/configuration_utils.py
    // ALL_CACHE_IMPLEMENTATIONS "offloaded"; generation/utils.py builds OffloadedCache for it).
    if (cause == Cause::kActivationPeak && d->stage == "runtime" && GenerateFrames(f)) {
      AddFix(d, "model.generate(..., cache_implementation=\"offloaded\")",
             "the KV cache of every layer but the one being computed waits in CPU memory: "
             "slower decoding, but the cache no longer grows on the GPU");
    }
    return true;
  }
  AddFix(d, "a smaller batch, shorter inputs or device_map=\"auto\" with max_memory",
         "less on the GPU at once");
  return true;
}

// The transformers flags the log implies, for rebuilding its run through the engine table
// (src/engines/transformers/) when --model and --gpu are given.
void RunFlags(const Facts& f, FlagValues* flags, std::vector<std::string>* notes) {
  // The dtype is rarely in a log; float32 (transformers 4.x without dtype=) would double the
  // weights of most runs that reach an OOM report.
  flags->push_back({"--dtype", "auto"});
  notes->push_back("transformers run rebuilt at the checkpoint's own dtype (the log does not "
                   "say which dtype= was passed)");
  if (f.has(EventKind::kStaticCache)) {
    flags->push_back({"--cache-implementation", "static"});
    notes->push_back("the log names a static cache: planned with cache_implementation=\"static\"");
  }
  if (const auto prompt = f.get(Num::kPromptTokens); prompt && *prompt > 0) {
    flags->push_back({"--prompt-tokens", fmt::format("{:.0f}", *prompt)});
    notes->push_back(fmt::format("the log gives a {:.0f}-token prompt: planned with it", *prompt));
  }
  if (EagerAttention(f)) {
    flags->push_back({"--attn-implementation", "eager"});
    notes->push_back("the traceback runs eager attention: planned with attn_implementation="
                     "\"eager\"");
  }
}

}  // namespace

bool DeviceMapRefusal(std::string_view text) { return OffloadRefusalIn(LineView(text)); }

const Reader& TransformersReader() {
  static const Reader kReader = {
      .engine = kEngine,
      .match = Match,
      // The shards bar part of the way or whole, generate's warnings as it starts.
      .milestones = {{EventKind::kLoadBegin, Stage::kLoad},
                     {EventKind::kWeightsLoaded, Stage::kRuntime},
                     {EventKind::kServing, Stage::kRuntime}},
      // A frame in transformers or accelerate names it unless a later frame names another.
      .frame_path = Num::kPathHasTransformers,
      .frame_path_final = false,
      .fixes = Fixes,
      // torch.compile's words (the pytorch reader's): transformers runs on it.
      .words = [](Words rule, const Facts& f) { return PytorchReader().words(rule, f); },
      .run_flags = RunFlags,
  };
  return kReader;
}

}  // namespace vramfit::doctor
