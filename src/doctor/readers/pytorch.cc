// PyTorch's log reader (readers/reader.h): the CUDACachingAllocator's out-of-memory message in
// its 2.1+ and older forms, CUDA's own error, traceback frames (with the package their file lies
// in) and the code lines under them. Its fixes are for plain PyTorch programs.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <string_view>

#include "core/text.h"
#include "core/units.h"
#include "doctor/load_copies.h"
#include "doctor/readers/reader.h"

namespace vramfit::doctor {

// Lists of literals are written "..."sv: their lengths are known when compiled (a list of
// pointers is measured with strlen on every pass of a loop, on every line of a log).
using std::string_view_literals::operator""sv;
namespace {

constexpr char kEngine[] = "pytorch";

// The parts of the allocator's message that may follow "Tried to allocate" on a wrapped line.
bool ContinuesOom(const LineView& s) {
  // "but unallocated": also the tail of a message wrapped inside "... is reserved by PyTorch
  // but unallocated", read with the line before (ReadJoined).
  return Has(s, "Of the allocated memory") || Has(s, "but unallocated") ||
         Has(s, "memory in use") || Has(s, "total capacity") || Has(s, "total capacty") ||
         Has(s, "already allocated") || Has(s, "reserved in total by PyTorch") ||
         Has(s, "is allocated by PyTorch") || Has(s, "this process has") || Has(s, " free;") ||
         // The rest of "GPU 0 has a total capacity of T of which F is free" wrapped after
         // "total" or "capacity": its figures read with the line before.
         (Has(s, " of which ") && Has(s, " is free")) || Has(s, "reserved by PyTorch");
}

// The MPS allocator's message (aten/src/ATen/mps/MPSAllocator.mm, PyTorch 1.13+): "MPS backend
// out of memory (MPS allocated: 18.10 GB, other allocations: 40.00 KB, max allowed: 18.13 GB).
// Tried to allocate 256.00 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 ..."
// (sizes in base 1024, "GB" before 2.3 and "GiB" after). The high-watermark limit stands for the
// card's total (unified memory: the allocator's share of it), what Metal and PyTorch hold for the
// allocated memory.
void ReadMpsOom(const LineView& s, LogEvent& e) {
  Set(e, Num::kTotalBytes, BytesAfter(s, "max allowed:"));
  const auto own = BytesAfter(s, "MPS allocated:");
  const auto other = BytesAfter(s, "other allocations:");
  if (own) Set(e, Num::kAllocatedBytes, *own + other.value_or(0.0));
}

// The other processes PyTorch 2.1+ lists: "Process N has X memory in use" each.
struct ProcessList {
  int count = 0;
  double bytes = 0, largest = 0;
};
ProcessList ListedProcesses(const LineView& s) {
  ProcessList out;
  for (size_t at = s.find("Process "); at != std::string_view::npos;
       at = s.find("Process ", at + 8)) {
    size_t end = 0;
    if (!NumberAt(s, at + 8, &end)) continue;
    if (s.substr(end, 5) != " has ") continue;
    if (auto b = SizeAfter(s, " has ", end)) {
      out.bytes += *b;
      out.largest = std::max(out.largest, *b);
      ++out.count;
    }
  }
  return out;
}

// The caching allocator's message without its "CUDA out of memory. Tried to allocate" head (a
// paste that kept the figures only): "GPU 0 has a total capacity of 22.03 GiB of which 17.06 MiB
// is free." is printed by that message alone (c10/cuda/CUDACachingAllocator.cpp, 2.1+).
// More text before an out-of-memory message than any prefix a collector or an engine puts before
// a record (a worker's and a logger's header, a timestamp, a docker or kubectl column): the line
// holds earlier records, its line ends lost.
constexpr size_t kJoinedPrefix = 120;

bool HeadlessOom(const LineView& s) {
  return Has(s, "has a total capacity of") && Has(s, " of which ") && Has(s, " is free");
}

// A message wrapped after "Tried to allocate": the two lines joined, read again. True when the
// join is the message (it holds the request, or this is a later line of one already read), with
// `out` and `out_tried` set to the join's; false leaves them.
bool ReadJoined(const Line& line, LineView* out, size_t* out_tried) {
  LineView s = line.joined;
  // Wrapped mid-word (a terminal's width), the two parts read whole only without a space:
  // the join that reads more of the message's sizes ("10.29 Gi" + "B already allocated"
  // reads one only without it).
  auto keys = [](const LineView& t) {
    int n = 0;
    for (std::string_view k :
         {"total capacity of"sv, "total capacty of"sv, "of which"sv, "this process has"sv,
          "Of the allocated memory"sv, "reserved by PyTorch but unallocated"sv,
          "already allocated"sv, "reserved in total by PyTorch"sv}) {
      n += Has(t, k) ? 1 : 0;
    }
    for (std::string_view k :
         {"total capacity of"sv, "total capacty of"sv, "of which"sv, "this process has"sv,
          "Of the allocated memory"sv, "Tried to allocate"sv}) {
      n += SizeAfter(t, k).has_value() ? 1 : 0;
    }
    for (std::string_view k :
         {"already allocated"sv, "reserved in total by PyTorch"sv, " free;"sv}) {
      n += SizeBefore(t, k, ";").has_value() ? 1 : 0;
    }
    n += SizeBefore(t, "reserved by PyTorch but unallocated", "and ").has_value() ? 1 : 0;
    return n + ListedProcesses(t).count;
  };
  if (!line.joined_tight.empty() &&
      (keys(line.joined_tight) > keys(s) ||
       (!Has(s, "Tried to allocate") && Has(line.joined_tight, "Tried to allocate")))) {
    s = line.joined_tight;
  }
  const size_t tried = s.find("Tried to allocate");
  // The third or a later line of a message wrapped over several: its keys, without the
  // request the first line gave.
  if (tried == std::string_view::npos && !line.after_oom) return false;
  *out = s;
  *out_tried = tried;
  return true;
}

// "Tried to allocate X ...": true when the line is one (no other PyTorch line is then read).
// A message wrapped after "Tried to allocate" is read again from the two lines joined.
bool MatchAllocatorOom(const Line& line) {
  LineView s = line.view();
  size_t tried = s.find("Tried to allocate");
  // The MPS message broken after its first sentence: its request ("... on private pool") read
  // with the line before, which holds the allocator's figures.
  if (tried != std::string_view::npos && Has(s, "on private pool") && !Has(s, "MPS allocated:") &&
      !line.joined.empty() && Has(line.joined, "MPS allocated:")) {
    s = line.joined;
    tried = s.find("Tried to allocate");
  }
  if (tried == std::string_view::npos) {
    // The figures alone (a paste that kept them without the message's head), not a later line
    // of a message: read as the message, without its request.
    const bool headless = !line.after_oom && HeadlessOom(s);
    if (line.joined.empty() || !ContinuesOom(s)) {
      if (!headless) return false;
    } else {
      if (!ReadJoined(line, &s, &tried) && !headless) return false;
    }
  }
  auto& e = line.Emit(EventKind::kTorchOom, kEngine);
  if (tried != std::string_view::npos) {
    Set(e, Num::kRequestedBytes, SizeAfter(s, "Tried to allocate", tried));
  }
  // PyTorch >= 2.1; 2.1.x spells it "total capacty of" (c10/cuda/CUDACachingAllocator.cpp,
  // corrected in 2.2).
  const bool capacty = Has(s, "total capacty of");
  const bool continued_new = tried == std::string_view::npos &&
                             (Has(s, "reserved by PyTorch but unallocated") ||
                              Has(s, "Of the allocated memory") || Has(s, "memory in use"));
  if (capacty || Has(s, "total capacity of") || continued_new) {
    Set(e, Num::kTotalBytes, SizeAfter(s, capacty ? "total capacty of" : "total capacity of"));
    Set(e, Num::kFreeBytes, SizeAfter(s, "of which"));
    Set(e, Num::kProcessBytes, SizeAfter(s, "this process has"));
    Set(e, Num::kAllocatedBytes, SizeAfter(s, "Of the allocated memory"));
    Set(e, Num::kPrivatePoolBytes, SizeBefore(s, "allocated in private pools", "with "));
    Set(e, Num::kBudgetBytes, SizeBefore(s, " allowed;", ". "));
    Set(e, Num::kReservedUnallocatedBytes,
        SizeBefore(s, "reserved by PyTorch but unallocated", "and "));
    const ProcessList listed = ListedProcesses(s);
    if (listed.count > 0) {
      Set(e, Num::kListedProcessBytes, listed.bytes);
      Set(e, Num::kListedProcesses, listed.count);
      Set(e, Num::kLargestListedProcessBytes, listed.largest);
    }
    Set(e, Num::kGpuIndex, NumberAfter(s, "GPU "));
  } else if (Has(s, "MPS allocated:")) {
    ReadMpsOom(s, e);
  } else {
    // "(GPU 0; 23.69 GiB total capacity; 3.45 GiB already allocated; 17.23 GiB free; ...)";
    // torch_npu's copy of it, "(NPU 0; T total capacity; A already allocated; A current active;
    // F free; R reserved in total by PyTorch)" (torch_npu/csrc/core/npu/NPUCachingAllocator.cpp).
    Set(e, Num::kGpuIndex, NumberAfter(s, Has(s, "(NPU ") ? "(NPU " : "(GPU "));
    size_t semi = s.find(';', tried);
    if (semi != std::string_view::npos) Set(e, Num::kTotalBytes, SizeAfter(s, ";", semi));
    Set(e, Num::kAllocatedBytes, SizeBefore(s, "already allocated", ";"));
    Set(e, Num::kFreeBytes,
        Has(s, " free;") ? SizeBefore(s, " free;", ";") : SizeBefore(s, " free)", ";"));
    Set(e, Num::kReservedBytes, SizeBefore(s, "reserved in total by PyTorch", ";"));
    Set(e, Num::kBudgetBytes, SizeBefore(s, " allowed;", ";"));
    // PyTorch 1.0-1.3 named the reserved memory "cached" ("...; 3.50 MiB free; 10.33 GiB
    // cached)"; renamed "reserved in total by PyTorch" in 1.4 with memory_cached ->
    // memory_reserved), and not always as the same amount: 1.0's c10/cuda/
    // CUDACachingAllocator.cpp malloc printed amount_cached - amount_allocated, the cached
    // memory not allocated, where other 1.x builds print the whole cache. Where allocated +
    // free + cached fits in the card, the figure is read as 1.0's (the cache is allocated plus
    // it); where it cannot (a cache larger than the card less what is allocated and free), as
    // the whole cache.
    if (!e.values.count(Num::kReservedBytes) && Has(s, " cached)")) {
      Set(e, Num::kReservedBytes, SizeBefore(s, " cached)", ";"));
      auto total = e.values.find(Num::kTotalBytes);
      auto allocated = e.values.find(Num::kAllocatedBytes);
      auto free = e.values.find(Num::kFreeBytes);
      auto cached = e.values.find(Num::kReservedBytes);
      if (total != e.values.end() && allocated != e.values.end() && free != e.values.end() &&
          cached != e.values.end() &&
          allocated->second + free->second + cached->second <= total->second) {
        cached->second += allocated->second;
      }
    }
    if (e.values.count(Num::kReservedBytes) && e.values.count(Num::kAllocatedBytes)) {
      Set(e, Num::kReservedUnallocatedBytes,
          std::max(0.0, e.values[Num::kReservedBytes] - e.values[Num::kAllocatedBytes]));
    }
    // The new message abridged by a reporter to its figures: "Tried to allocate 320.00 MiB.
    // 177.38 MiB free, 26.44 GiB reserved but unallocated."
    if (!e.values.count(Num::kReservedUnallocatedBytes) && Has(s, " reserved but unallocated")) {
      Set(e, Num::kReservedUnallocatedBytes, SizeBefore(s, " reserved but unallocated", ", "));
      if (!e.values.count(Num::kFreeBytes)) Set(e, Num::kFreeBytes, SizeBefore(s, " free,", ". "));
    }
  }
  return true;
}

// The layer-by-layer quantizers a log can name (Num::kQuantizerTool indexes this table from 1).
enum Tool : int {
  kNoTool,
  kAutoGptq,       // AutoGPTQ (auto_gptq)
  kGptqModel,      // GPTQModel (gptqmodel)
  kGptqForLlama,   // GPTQ-for-LLaMa (its llama.py / opt.py / ... scripts)
  kOptimum,        // optimum's GPTQQuantizer (optimum.gptq), behind transformers' GPTQConfig
  kLlmCompressor,  // llm-compressor (llmcompressor)
  kAutoRound,      // auto-round (auto_round)
  kAutoAwq,        // AutoAWQ (awq)
  kExLlamaV2,      // ExLlamaV2's convert.py (the EXL2 quantizer)
  kDeepCompressor,  // MIT HAN Lab's deepcompressor (QServe's and SVDQuant's PTQ pipelines)
  kLmdeploy,        // lmdeploy's lite quantization (calibrate, auto_awq, smooth_quant)
  kToolCount,
};
constexpr std::string_view kToolNames[kToolCount] = {
    "", "autogptq", "gptqmodel", "gptq-for-llama", "optimum", "llm-compressor", "auto-round",
    "autoawq", "exllamav2", "deepcompressor", "lmdeploy"};

// The quantizer whose package a frame's file lies in.
Tool ToolOfPath(const LineView& path) {
  if (Has(path, "auto_gptq/")) return kAutoGptq;
  if (Has(path, "gptqmodel/")) return kGptqModel;
  if (Has(path, "optimum/gptq/")) return kOptimum;
  if (Has(path, "llmcompressor/")) return kLlmCompressor;
  if (Has(path, "auto_round/")) return kAutoRound;
  if (Has(path, "GPTQ-for-LLaMa/")) return kGptqForLlama;
  if (Has(path, "exllamav2/conversion/")) return kExLlamaV2;
  if (Has(path, "deepcompressor/")) return kDeepCompressor;
  if (Has(path, "lmdeploy/lite/")) return kLmdeploy;
  // AutoAWQ's package (awq/models, awq/quantize, awq/modules); MIT's llm-awq, whose package is
  // also awq/, runs from awq/entry.py and awq/quantize/pre_quant.py, and is not AutoAWQ.
  if (Has(path, "/awq/") && !Has(path, "llm-awq") && !Has(path, "awq/entry.py") &&
      !Has(path, "pre_quant.py")) {
    return kAutoAwq;
  }
  return kNoTool;
}

bool GptqModelStats(std::string_view t);
bool NamesDecoderLayer(std::string_view word);

// ExLlamaV2's convert.py, the EXL2 quantizer, measuring and then quantizing the model one module
// at a time (exllamav2/conversion/measure.py and quantize.py, 0.0.x-0.3): its own lines begin
// " -- " and name the module, " -- Layer: model.layers.31 (MLP)" and " -- Linear:
// model.layers.1.mlp.up_proj", or the pass, " -- Measuring quantization impact..." and
// " -- Quantizing..." (convert.py). Each module's calibration states are read from and written
// to the job's work directory (input_states.safetensors, output_states.safetensors).
// Read anywhere in the line (after a collector's or a rank's prefix too), after a space.
bool ExLlamaConvertLine(std::string_view t) {
  for (size_t at = t.find("-- "); at != std::string_view::npos; at = t.find("-- ", at + 3)) {
    if (at > 0 && t[at - 1] != ' ' && t[at - 1] != '`') continue;
    const std::string_view rest = t.substr(at + 3);
    if (rest.starts_with("Measuring quantization impact") || rest.starts_with("Quantizing...")) {
      return true;
    }
    for (std::string_view key : {"Layer: "sv, "Linear: "sv}) {
      if (!rest.starts_with(key)) continue;
      const std::string_view name = rest.substr(key.size());
      if (NamesDecoderLayer(name.substr(0, name.find(' ')))) return true;
    }
  }
  return false;
}

// The quantizer a line names: a logger's or module's name ("[auto_gptq.modeling._base]",
// "optimum.gptq.quantizer", "from gptqmodel import"), the class a script builds it with
// (AutoGPTQForCausalLM, GPTQModel.load, GPTQQuantizer, GPTQConfig with a dataset, GPTQModifier or
// oneshot, AutoRound, AutoAWQForCausalLM), or a line only it prints: llm-compressor's lifecycle
// and pipeline lines, auto-round's tuning lines, GPTQModel's statistics, GPTQ-for-LLaMa's
// weight_error table, AutoGPTQ's "Start quantizing layer N/M" and "truly offloading",
// optimum's block lines, AutoAWQ's "AWQ:" bar (the sources as in QuantizerProgress below).
Tool ToolOfLine(const Line& line, bool progress, bool setup) {
  const LineView s = line.view();
  if (Has(s, "auto_gptq") || Has(s, "AutoGPTQForCausalLM") ||
      Has(s, "Start quantizing layer ") || Has(s, "truly offloading ")) {
    return kAutoGptq;
  }
  if (Has(s, "gptqmodel") || Has(s, "GPTQModel.") ||
      ((Has(s, "process") || Has(s, "gptq") || Has(s, "awq")) && GptqModelStats(line.text))) {
    return kGptqModel;
  }
  if (Has(s, "optimum.gptq") || Has(s, "GPTQQuantizer") || Has(s, "uantizing block ") ||
      Has(s, " in block ") || (setup && Has(s, "GPTQConfig("))) {
    return kOptimum;
  }
  if (Has(s, "llmcompressor") || Has(s, "GPTQModifier") || Has(s, "Compression lifecycle") ||
      Has(s, "SequentialPipeline") || Has(s, "Sequential pipeline ran out of memory") ||
      (setup && Has(s, "oneshot(")) || (progress && Has(s, "): Calibrating"))) {
    return kLlmCompressor;
  }
  if (Has(s, "auto_round") || Has(s, "auto-round") || Has(s, "AutoRound(") ||
      Has(s, "for quantization tuning") || Has(s, "start to cache block inputs") ||
      Has(s, "quantization tuning time ") || (progress && Has(s, "caching done"))) {
    return kAutoRound;
  }
  if (Has(s, "fp_inp_SNR")) return kGptqForLlama;
  if (Has(s, "AutoAWQForCausalLM") || Has(s, "from awq import") ||
      (progress && Has(s, "AWQ:"))) {
    return kAutoAwq;
  }
  if (Has(s, "exllamav2/conversion") || (progress && ExLlamaConvertLine(line.text))) {
    return kExLlamaV2;
  }
  // deepcompressor's entry points: "python -m deepcompressor.app.llm.ptq CONFIG" (QServe's
  // W4A8) and "deepcompressor.app.diffusion.ptq" (SVDQuant), or a frame in its package.
  if (Has(s, "deepcompressor")) return kDeepCompressor;
  // lmdeploy's command ("lmdeploy lite auto_awq MODEL ...") or its calibration lines.
  if (Has(s, "lmdeploy lite") || (progress && Has(s, ", samples: "))) return kLmdeploy;
  return kNoTool;
}

// Whether `name` in the path is the package's directory and not a Python environment's named
// after it (conda's "envs/vllm/lib/python3.12/site-packages/transformers/trainer.py", a venv's
// "sglang-env/lib/...", Windows' "envs/vllm/Lib/site-packages/..."): a directory whose next one
// is the environment's lib/, bin/ or include/ holds the environment, whatever runs in it.
bool NamesPackage(std::string_view path, std::string_view name) {
  for (size_t at = path.find(name); at != std::string_view::npos;
       at = path.find(name, at + 1)) {
    // A whole directory's name: not "nanovllm/" or "nano-vllm/" (other projects' packages).
    if (at > 0 && path[at - 1] != '/') continue;
    const size_t slash = path.find('/', at);
    if (slash == std::string_view::npos) return true;
    const std::string_view next = path.substr(slash + 1);
    if (next.starts_with("lib/") || next.starts_with("lib64/") || next.starts_with("Lib/") ||
        next.starts_with("bin/") || next.starts_with("include/")) {
      continue;
    }
    return true;
  }
  return false;
}

// The package a frame's file lies in, and the phases only some files run.
void TagPath(const LineView& path, LogEvent& e) {
  e.values[Num::kPathHasSglang] = NamesPackage(path, "sglang") ? 1 : 0;
  e.values[Num::kPathHasVllm] = NamesPackage(path, "vllm/") ? 1 : 0;
  e.values[Num::kPathHasTransformers] =
      Has(path, "transformers/") || Has(path, "accelerate/") || Has(path, "/awq/") ? 1 : 0;
  // torch/cuda/graphs.py allocates only while capturing (replay allocates nothing); vLLM's
  // compilation backends are not tagged: they also run uncaptured shapes while serving.
  if (Has(path, "torch/cuda/graphs.py")) e.values[Num::kPathIsGraphCapture] = 1;
  // vLLM's kernel warm-ups (DeepGEMM, FlashInfer autotuning) run from compile_or_warm_up_model.
  if (Has(path, "model_executor/warmup/")) e.values[Num::kPathIsKernelWarmup] = 1;
  // SGLang's DeepGEMM JIT warm-up (layers/deep_gemm_wrapper/compile_utils.py
  // _compile_deep_gemm_one_type_all -> _BaseWarmupExecutor, 0.4.x-0.5): the kernels compiled and
  // run for every M with buffers of their own, on the first use of each GEMM shape (inside the
  // graphs' capture, whose frames then say so, or the first batch).
  if (Has(path, "deep_gemm_wrapper/compile_utils.py")) e.values[Num::kPathIsKernelWarmup] = 1;
  if (Has(path, "vllm/v1/sample/") || Has(path, "v1/worker/gpu/sample/")) {
    e.values[Num::kPathIsSampler] = 1;
  }
  // V0's sampler (vllm/model_executor/layers/sampler.py, removed in 0.11 with V0): V0 has no
  // sampler warm-up (its worker only captures graphs after the KV cache, worker.py
  // _warm_up_model), so 2 marks a sampler that runs in the profile run or serving.
  if (Has(path, "vllm/model_executor/layers/sampler.py")) e.values[Num::kPathIsSampler] = 2;
  // The quantizers convert a 16-bit checkpoint layer by layer with calibration data: AutoAWQ's
  // awq/quantize/ (AwqQuantizer, 0.2.x), AutoGPTQ's auto_gptq/quantization/ (GPTQ.fasterquant,
  // 0.7.x), GPTQModel's gptqmodel/quantization/ and gptqmodel/looper/ (ModuleLooper, 2.x-5.x),
  // llm-compressor's modifiers, optimum's GPTQQuantizer (optimum/gptq/quantizer.py quantize_model,
  // which transformers' GPTQConfig(dataset=...) runs inside from_pretrained, 1.1x), ExLlamaV2's
  // exllamav2/conversion/ (measure.py, quantize.py: one module at a time). Their frames
  // are the load stage (converting weights); 2 marks the quantizer's own per-layer code (1, set
  // below, only its entry point).
  if (Has(path, "/awq/quantize/") || Has(path, "auto_gptq/quantization/") ||
      Has(path, "gptqmodel/quantization/") || Has(path, "gptqmodel/looper/") ||
      Has(path, "llmcompressor/") || Has(path, "optimum/gptq/") ||
      Has(path, "exllamav2/conversion/")) {
    e.values[Num::kPathIsQuantizer] = 2;
  }
  // auto-round (intel/auto-round): its scheme search, auto_round/auto_scheme/ (delta_loss.py
  // runs each block over the calibration data to score the schemes, 0.8+), is per-layer
  // calibration work (2); its compressors (auto_round/compressors/, autoround.py before 0.6)
  // both place the model (dispatch_model with device_map) and tune the blocks, so their frames
  // only say a quantization run (1). Its wrapper.py and data_type/ also run in a quantized
  // model's QDQ evaluation and are not tagged.
  if (const Tool tool = ToolOfPath(path)) e.values[Num::kQuantizerTool] = tool;
  // deepcompressor (0.0.2) calibrates one block at a time on its cached activations: the
  // calib/ package (smoothing, rotation, low-rank, range search), the apps' quant/ passes
  // (app/llm/quant/, app/diffusion/quant/: smooth.py, rotate.py, weight.py, activation.py) and
  // the calibration loaders that feed them (iter_layer_activations in app/diffusion/dataset/
  // calib.py and app/llm/quant/dataset.py) are that per-layer pass (2); its other files load,
  // build and evaluate the model around it (1).
  if (Has(path, "deepcompressor/")) {
    const bool per_layer = Has(path, "deepcompressor/calib/") || Has(path, "/quant/") ||
                           Has(path, "dataset/calib.py");
    e.values[Num::kPathIsQuantizer] = per_layer ? 2 : 1;
  }
  if (Has(path, "auto_round/auto_scheme/")) {
    e.values[Num::kPathIsQuantizer] = 2;
  } else if (Has(path, "auto_round/compressors/") || Has(path, "auto_round/autoround.py")) {
    e.values[Num::kPathIsQuantizer] = 1;
  }
}

// A file that only a vision encoder runs: its frame on the stack puts the failure in the encoder.
//  - torchtune (0.3-0.6): modules/vision_transformer.py (the CLIP-style VisionTransformer),
//    models/llama3_2_vision/_encoder.py, and modules/layer_norm.py, whose Fp32LayerNorm only the
//    vision encoders build (models/clip/_component_builders.py clip_vision_encoder,
//    llama3_2_vision/_component_builders.py, vision_transformer.py ln_pre / ln_post); the text
//    decoders normalise with RMSNorm. torchchat runs Llama 3.2 Vision through these modules.
//  - transformers: the vision towers' own model files (models/clip, siglip, siglip2, pixtral;
//    InternVL's remote-code modeling_intern_vit.py).
//  - SGLang: layers/attention/vision.py, whose VisionAttention (and its SDPA, Triton and flash
//    backends) only the vision towers build (models/qwen2_vl.py, qwen2_5_vl.py, qwen3_vl.py,
//    dots_vlm_vit.py, ..., 0.4.x-0.5); the language models attend through the radix backends.
bool VisionEncoderFile(const LineView& path) {
  for (std::string_view key :
       {"torchtune/modules/vision_transformer.py"sv, "torchtune/modules/layer_norm.py"sv,
        "llama3_2_vision/_encoder.py"sv, "/modeling_clip.py"sv, "/modeling_siglip.py"sv,
        "/modeling_siglip2.py"sv, "/modeling_pixtral.py"sv, "/modeling_intern_vit.py"sv,
        "sglang/srt/layers/attention/vision.py"sv}) {
    if (Has(path, key)) return true;
  }
  return false;
}

// vLLM's vision and audio models: a frame in one of their files (vllm/model_executor/models/
// NAME.py, the module names of the registry's _MULTIMODAL_MODELS, registry.py 0.6-0.10, and the
// vision towers they build) is a multimodal model's forward.
bool VllmMultimodalModelFile(std::string_view path) {
  constexpr std::string_view kDir = "vllm/model_executor/models/";
  const size_t at = path.find(kDir);
  if (at == std::string_view::npos) return false;
  std::string_view file = path.substr(at + kDir.size());
  if (file.size() < 4 || file.substr(file.size() - 3) != ".py") return false;
  file.remove_suffix(3);
  for (std::string_view name :
       {"aria"sv, "aya_vision"sv, "blip"sv, "blip2"sv, "chameleon"sv, "clip"sv, "deepseek_vl2"sv,
        "florence2"sv, "fuyu"sv, "gemma3_mm"sv, "glm4v"sv, "granite_speech"sv, "h2ovl"sv,
        "idefics2_vision_model"sv, "idefics3"sv, "intern_vit"sv, "internvl"sv, "kimi_vl"sv,
        "llava"sv, "llava_next"sv, "llava_next_video"sv, "llava_onevision"sv, "minicpmo"sv,
        "minicpmv"sv, "mistral3"sv, "mllama"sv, "mllama4"sv, "molmo"sv, "nvlm_d"sv, "paligemma"sv,
        "phi3v"sv, "phi4mm"sv, "pixtral"sv, "qwen2_5_omni_thinker"sv, "qwen2_5_vl"sv,
        "qwen2_audio"sv, "qwen2_vl"sv, "qwen_vl"sv, "siglip"sv, "skyworkr1v"sv, "smolvlm"sv,
        "ultravox"sv, "whisper"sv,
        // Added to _MULTIMODAL_MODELS since (registry.py on main, late 2025), and the vision
        // towers they build (moonvit for Kimi-VL, siglip2navit, radio, aimv2, deepencoder).
        "audioflamingo3"sv, "bagel"sv, "bee"sv, "cohere2_vision"sv, "deepseek_ocr"sv, "dots_ocr"sv,
        "ernie45_vl"sv, "gemma3n_mm"sv, "glmasr"sv, "glm4_1v"sv, "hunyuan_vision"sv,
        "nano_nemotron_vl"sv, "opencua"sv, "interns1"sv, "isaac"sv, "keye"sv, "keye_vl1_5"sv,
        "rvl"sv, "kimi_audio"sv, "lightonocr"sv, "nemotron_vl"sv, "midashenglm"sv,
        "minimax_vl_01"sv, "ovis"sv, "ovis2_5"sv, "paddleocr_vl"sv, "qwen3_omni_moe_thinker"sv,
        "qwen3_vl"sv, "qwen3_vl_moe"sv, "step3_vl"sv, "tarsier"sv, "voxtral"sv,
        "voxtral_streaming"sv, "moonvit"sv, "siglip2navit"sv, "radio"sv, "aimv2"sv,
        "deepencoder"sv}) {
    if (file == name) return true;
  }
  return false;
}

// transformers' vision-language and audio models (transformers/models/NAME/modeling_NAME.py,
// 4.3x-4.5x; the same file names in remote code): a frame in one is a multimodal model's forward.
// Files that also hold a text-only model in common use (Gemma 3, Llama 4) are left out.
bool TransformersMultimodalModelFile(std::string_view path) {
  const size_t at = path.rfind("/modeling_");
  if (at == std::string_view::npos) return false;
  std::string_view file = path.substr(at + 10);
  if (file.size() < 4 || file.substr(file.size() - 3) != ".py") return false;
  file.remove_suffix(3);
  for (
      std::string_view name :
      {"llava"sv,        "llava_next"sv, "llava_next_video"sv, "llava_onevision"sv, "video_llava"sv,
       "vipllava"sv,     "idefics"sv,    "idefics2"sv,         "idefics3"sv,        "blip_2"sv,
       "instructblip"sv, "mllama"sv,     "paligemma"sv,        "whisper"sv,         "chameleon"sv,
       "fuyu"sv,         "kosmos2"sv,    "internvl"sv,         "internvl_chat"sv,   "mistral3"sv,
       "qwen2_audio"sv,  "aria"sv,       "smolvlm"sv,          "aya_vision"sv,      "got_ocr2"sv,
       "emu3"sv,         "janus"sv,      "minicpmv"sv,         "florence2"sv}) {
    if (file == name) return true;
  }
  return false;
}

// IPython's frame header before IPython 8, as Colab and Jupyter notebooks paste it:
// "/usr/lib/python3.10/site-packages/transformers/modeling_utils.py in from_pretrained(cls, ...)",
// in Colab since 2023 with the path as a link, "[/usr/.../modeling_llama.py](https://localhost
// :8080/#) in forward(self, ...)" (IPython/core/ultratb.py VerboseTB, 7.x). Sets the path's bounds
// and where the function's name begins; false when the line is not one.
bool OldIpythonFrame(std::string_view s, size_t* path_at, size_t* path_end, size_t* fn_at) {
  size_t b = 0;
  while (b < s.size() && s[b] == ' ') ++b;
  // A launcher's rank before it ("[rank0]: ", torchrun's --tee / a distributed notebook).
  if (s.substr(b, 5) == "[rank") {
    const size_t close = s.find("]:", b);
    if (close != std::string_view::npos && close < b + 12) b = close + 2;
    while (b < s.size() && s[b] == ' ') ++b;
  }
  const bool link = b < s.size() && s[b] == '[';
  if (link) ++b;
  if (b >= s.size() || (s[b] != '/' && s[b] != '~')) return false;
  const size_t py = s.find(link ? ".py](" : ".py in ", b);
  if (py == std::string_view::npos) return false;
  const size_t in = link ? s.find(") in ", py) : py + 2;  // the character before " in "
  if (in == std::string_view::npos || s.find(' ', b) < py) return false;
  *path_at = b;
  *path_end = py + 3;
  *fn_at = in + 5;
  return *fn_at < s.size() && s.find('(', *fn_at) != std::string_view::npos;
}


// A traceback frame: Python's `File "path", line N, in fn` (also wrapped, the path's tail
// starting the line), IPython's `File path:N, in Class.fn(args)` and its older `path in fn(args)`.
bool MatchFrame(const Line& line) {
  LineView s = line.view();
  // A frame a paste reflowed at spaces ("File" / "\"PATH\"," / "line N, in NAME", or its last
  // words alone on the next line): its tail piece read with the line before.
  const std::string_view lead = Trimmed(s);
  const std::string_view joined = Trimmed(line.joined);
  if (!lead.empty() && !line.joined.empty() && !Has(s, ".py\", line ") && !Has(s, "File \"") &&
      (Has(line.joined, ".py\", line ") || Has(line.joined, "File \""))) {
    // (One word, or one word and what a collector appends to a line: Ray's "[repeated 3x
    // across cluster]".)
    const bool one_word = lead.find(' ') == std::string_view::npos ||
                          lead.substr(lead.find(' ')).starts_with(" [repeated ");
    const bool tail_piece =
        // "line N, in NAME" or "N, in NAME" (the cut after "line")
        ((lead.starts_with("line ") || std::isdigit(static_cast<unsigned char>(lead[0]))) &&
         Has(lead, ", in ")) ||
        // "in NAME"
        (lead.starts_with("in ") && lead.find(' ', 3) == std::string_view::npos) ||
        // "NAME" after a line that ended in ", in"
        (one_word && joined.size() > lead.size() + 5 &&
         joined.substr(joined.size() - lead.size() - 5, 5) == ", in " && joined.ends_with(lead));
    if (tail_piece) s = line.joined;
  }
  // IPython's older header reflowed after its path ("/.../modeling_gemma4.py" + "in forward(self,
  // input_ids, ..."): the path ends the line before.
  if (!lead.empty() && !line.joined.empty() && !Has(s, ".py") && Has(line.joined, ".py")) {
    const std::string_view pre =
        joined.ends_with(lead) ? joined.substr(0, joined.size() - lead.size()) : ""sv;
    const size_t paren = lead.find('(');
    const bool header =
        (lead.starts_with("in ") && (pre.ends_with(".py ") || pre.ends_with("#) "))) ||
        ((pre.ends_with(".py in ") || pre.ends_with("#) in ")) && paren != lead.npos &&
         paren < lead.find(' '));
    if (header) s = line.joined;
  }
  // IPython 8's header reflowed after its path ("File" / "~/.../base.py:93," / "in
  // Class.fn(self, ..."): the path and its line number end the line before.
  bool ipython_tail = false;
  if (!lead.empty() && !line.joined.empty() && lead.starts_with("in ") && !Has(s, ".py:") &&
      joined.ends_with(lead)) {
    std::string_view pre = Trimmed(joined.substr(0, joined.size() - lead.size()));
    if (pre.ends_with(",")) {
      pre.remove_suffix(1);
      size_t d = pre.size();
      while (d > 0 && std::isdigit(static_cast<unsigned char>(pre[d - 1]))) --d;
      if (d < pre.size() && pre.substr(0, d).ends_with(".py:")) {
        s = line.joined;
        ipython_tail = true;
      }
    }
  }
  size_t path_at = std::string_view::npos, path_end = std::string_view::npos;
  size_t fn_at = std::string_view::npos;
  size_t file = s.find("File \"");
  if (file != std::string_view::npos) {
    path_at = file + 6;
    path_end = s.find('"', path_at);
  } else if (size_t tail = s.find(".py\", line "); tail != std::string_view::npos) {
    const size_t b = s.rfind(' ', tail);
    path_at = b == std::string_view::npos ? 0 : b + 1;
    path_end = tail + 3;
  } else if (size_t ip = s.find("File "); ip != std::string_view::npos && Has(s, ".py:")) {
    path_at = ip + 5;
    path_end = s.find(".py:", path_at);
    if (path_end != std::string_view::npos) path_end += 3;
  } else if (ipython_tail) {
    path_end = s.find(".py:") + 3;
    const size_t b = s.rfind(' ', path_end);
    path_at = b == std::string_view::npos ? 0 : b + 1;
  } else if (const size_t box = s.find("\xe2\x94\x82 ");  // "│ "
             box != std::string_view::npos && Has(s, ".py:") && Has(s, " in ") &&
             s.find(".py:", box) != std::string_view::npos) {
    // rich's traceback (rich/traceback.py, which typer, DeepSpeed's and other programs' handlers
    // install): "│ /path/to/engine.py:1494 in _configure_zero_optimizer   │" in a box, a long
    // path wrapped onto the box's lines before (its tail then starts this one).
    path_at = box + 4;
    path_end = s.find(".py:", path_at) + 3;
    size_t digits = path_end + 1;
    while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
    if (digits == path_end + 1 || s.substr(digits, 4) != " in ") return false;
    fn_at = digits + 4;
  } else if (Has(s, ".py") && Has(s, " in ")) {
    // Read from the path on where a reflow put the header after the code line before it
    // ("-> 2455 outputs = self.model(" + "/.../modeling_gemma4.py" + "in forward(self, ...").
    const std::string_view t = s;
    size_t header_at = 0;
    if (const size_t py = t.find(".py in "); py != std::string_view::npos) {
      const size_t space = t.rfind(' ', py);
      if (space != std::string_view::npos && space + 1 < t.size() &&
          (t[space + 1] == '/' || t[space + 1] == '~') &&
          !OldIpythonFrame(t, &path_at, &path_end, &fn_at)) {
        header_at = space + 1;
      }
    }
    if (!OldIpythonFrame(t.substr(header_at), &path_at, &path_end, &fn_at)) return false;
    path_at += header_at, path_end += header_at, fn_at += header_at;
  }
  if (path_at == std::string_view::npos || path_end == std::string_view::npos) return false;
  if (fn_at == std::string_view::npos) {
    const size_t in = s.find(", in ", path_end);
    if (in == std::string_view::npos) return false;
    fn_at = in + 5;
  }
  size_t b = fn_at, end = b;
  while (end < s.size() && end - b < 120 && s[end] != ' ' && s[end] != '\r' && s[end] != '(') ++end;
  std::string_view fn = s.substr(b, end - b);
  if (end < s.size() && s[end] == '(') {  // IPython: "GenerationMixin.generate(self, ..."
    if (size_t dot = fn.rfind('.'); dot != std::string_view::npos) fn.remove_prefix(dot + 1);
  }
  // TorchScript's own traceback names a scripted module's method "<forward op>" (torch/jit,
  // "Traceback of TorchScript"): the model's forward.
  if (fn == "<forward" && s.substr(end, 4) == " op>") fn = "forward";
  auto& e = line.Emit(EventKind::kFrame, kEngine);
  e.text = std::string(fn);
  // Windows paths ("C:\Python310\site-packages\transformers\generation\utils.py", also with
  // the backslashes doubled) read with forward slashes, as the keys below are written.
  // (The path's needles are ruled out by the line's byte pairs, which hold the path's, unless
  // its backslashes were replaced.)
  const std::string_view raw = s.substr(path_at, path_end - path_at);
  std::string slashed(raw);
  std::replace(slashed.begin(), slashed.end(), '\\', '/');
  const LineView path(slashed, raw.find('\\') == std::string_view::npos ? s.bigrams : nullptr);
  TagPath(path, e);
  // The quantizers' entry points: BaseAWQForCausalLM.quantize (awq/models/base.py),
  // BaseGPTQForCausalLM.quantize (auto_gptq/modeling/_base.py), BaseQModel.quantize
  // (gptqmodel/models/base.py).
  if (fn == "quantize" && !e.values.count(Num::kPathIsQuantizer) &&
      (Has(path, "/awq/") || Has(path, "auto_gptq/") || Has(path, "gptqmodel/"))) {
    e.values[Num::kPathIsQuantizer] = 1;
  }
  // auto-round's block loop inside those compressors is per-block calibration work (2): each
  // block moved to the GPU and tuned over the cached calibration inputs (auto_round/autoround.py
  // quant_blocks, quant_block, get_block_outputs, 0.4-0.5; compressors/orchestrator.py
  // _quantize_blocks, quantize_block, 0.9); quant_block's own dispatch_model only spreads that
  // one block over the devices.
  if (e.values.count(Num::kPathIsQuantizer) && Has(path, "auto_round/") &&
      (fn == "quant_blocks" || fn == "quant_block" || fn == "_quantize_blocks" ||
       fn == "quantize_blocks" || fn == "quantize_block" || fn == "_quantize_block" ||
       fn == "get_block_outputs" || fn == "_get_block_outputs")) {
    e.values[Num::kPathIsQuantizer] = 2;
  }
  // A second-order quantizer's statistics: GPTQ and the methods built on it (SparseGPT, QuIP,
  // AQLM, the research compressors that copy its loop) accumulate each layer's Hessian from the
  // calibration inputs in a function named for it (add_batch's forms: "log_to_hessian_",
  // "accumulate_hessian", "compute_hessian", "update_hessian"), one layer on the GPU: the
  // per-layer calibration work (2). A Hessian-vector product (training's second-order
  // methods, influence functions) is not one.
  if (!e.values.count(Num::kPathIsQuantizer) && fn.find("hessian") != std::string_view::npos &&
      fn.find("vector") == std::string_view::npos && fn.find("hvp") == std::string_view::npos) {
    e.values[Num::kPathIsQuantizer] = 2;
  }
  // GPTQ-for-LLaMa's per-layer pass, a script of its own rather than a package (llama.py
  // llama_sequential, neox.py neox_sequential, opt.py opt_sequential): each layer's calibration
  // forward and GPTQ, one layer on the GPU.
  // Its other architectures' scripts name theirs the same way (bloom.py bloom_sequential,
  // gptj.py gptj_sequential, falcon.py falcon_sequential, and the forks that add more).
  constexpr std::string_view kSequential = "_sequential";
  const std::string script =
      fn.size() > kSequential.size() && fn.substr(fn.size() - kSequential.size()) == kSequential
          ? std::string(fn.substr(0, fn.size() - kSequential.size())) + ".py"
          : std::string();
  if (!script.empty() && path.size() >= script.size() &&
      path.substr(path.size() - script.size()) == script) {
    e.values[Num::kPathIsQuantizer] = 2;
    e.values[Num::kQuantizerTool] = kGptqForLlama;
  }
  const std::string_view file_name = path.substr(path.rfind('/') + 1);  // (npos + 1 is 0)
  e.text += " (" + std::string(file_name) + ")";
  if (VisionEncoderFile(path) || VllmMultimodalModelFile(path) ||
      TransformersMultimodalModelFile(path)) {
    // After `e` is done; a vision tower's own file places the failure in the encoder. A vLLM
    // multimodal model's file holds the language model and the tower together: its hint is
    // marked, for the code line under it to tell which (MatchCodeLine, facts.cc).
    line.Emit(EventKind::kMmHint, kEngine).text = VisionEncoderFile(path)         ? "encoder"
                                                  : VllmMultimodalModelFile(path) ? "vllm_mm_model"
                                                                                  : "";
  }
  // The engines' generic Transformers backend, used for an architecture without a native
  // implementation: SGLang's sglang/srt/models/transformers.py (TransformersForCausalLM, 0.4.6+)
  // and vLLM's vllm/model_executor/models/transformers.py (0.8+; a package of that name from
  // 0.11). Its frame says the fallback as its log line does.
  // AutoAWQ's fused modules (awq/modules/fused/: the fused attention and its WindowedCache, built
  // by fuse_layers): their frame says the fused setting as the code line does (readers/
  // transformers.cc), where the excerpt starts below from_quantized.
  if (Has(path, "awq/modules/fused/")) {
    line.Emit(EventKind::kStaticCache, "transformers").text = "fused";
  }
  if (Has(path, "sglang/srt/models/transformers.py")) {
    line.Emit(EventKind::kTransformersBackend, "sglang");
  } else if (Has(path, "vllm/model_executor/models/transformers")) {
    line.Emit(EventKind::kTransformersBackend, "vllm");
  }
  return true;
}

// The caching allocator's limit message (a per-process memory fraction), one key a line or
// all on one: "Allocation on device 0 would exceed allowed memory. (out of memory)",
// "Currently allocated     : 16.08 GiB", "Requested               : 4.83 GiB",
// "Device limit            : 22.20 GiB".
bool MatchAllocatorLimit(const Line& line) {
  const LineView s = line.view();
  const bool head = Has(s, "would exceed allowed memory");
  const bool item = Has(s, "Currently allocated") || Has(s, "Requested  ") ||
                    Has(s, "Device limit") || Has(s, "Requested :");
  if (!head && !item) return false;
  auto& e = line.Emit(EventKind::kTorchOom, kEngine);
  Set(e, Num::kAllocatedBytes, BytesAfter(s, "Currently allocated"));
  if (size_t at = s.find("Requested"); at != std::string_view::npos) {
    Set(e, Num::kRequestedBytes, BytesAfter(s, ":", at));
  }
  if (size_t at = s.find("Device limit"); at != std::string_view::npos) {
    Set(e, Num::kTotalBytes, BytesAfter(s, ":", at));
  }
  return true;
}

// Code that is commented out where `key` appears ("#device_map=...") sets nothing.
bool CommentedOut(std::string_view s, std::string_view key) {
  const size_t at = s.find(key);
  return at != std::string_view::npos && s.substr(0, at).find('#') != std::string_view::npos;
}

// A quantization run's setup in the pasted code, anywhere in the log: AutoGPTQ's and GPTQModel's
// BaseQuantizeConfig / QuantizeConfig (auto_gptq/modeling/_base.py 0.7, gptqmodel 1.x-5.x), a
// model.quantize(...) call (the three quantizers' entry point), AutoAWQ's from_pretrained (AutoAWQ
// 0.2 loads a 16-bit checkpoint only to quantize it; from_quantized is its inference loader).
// Also the other layer-by-layer quantizers' constructors, which exist only to quantize: optimum's
// GPTQQuantizer (optimum/gptq/quantizer.py, 1.1x), llm-compressor's GPTQModifier recipe
// (llmcompressor/modifiers/quantization/gptq, 0.3+), auto-round's AutoRound (auto_round/
// autoround.py, 0.4+); and transformers' GPTQConfig given a calibration dataset, which quantizes
// inside from_pretrained (without one it only describes a GPTQ checkpoint to load).
bool QuantizerSetup(const Line& line) {
  const LineView s = line.view();
  if (!Has(s, "uantize") && !Has(s, "AutoAWQ") && !Has(s, "GPTQ") && !Has(s, "AutoRound(")) {
    return false;  // most lines stop here
  }
  for (std::string_view key : {"BaseQuantizeConfig"sv, "QuantizeConfig("sv, ".quantize("sv,
                               "AutoAWQForCausalLM.from_pretrained("sv, "GPTQQuantizer("sv,
                               "GPTQModifier("sv, "AutoRound("sv}) {
    if (Has(s, key) && !CommentedOut(line.text, key)) return true;
  }
  return Has(s, "GPTQConfig(") && Has(s, "dataset") && !CommentedOut(line.text, "GPTQConfig(");
}

// The cells of a table row printed with '|' borders ("INFO  | gptq | 56 | self_attn.k_proj |"),
// trimmed; empty when the line has no two borders.
std::vector<std::string_view> TableCells(std::string_view t) {
  std::vector<std::string_view> cells;
  size_t at = t.find('|');
  while (at != std::string_view::npos) {
    const size_t next = t.find('|', at + 1);
    if (next == std::string_view::npos) break;
    std::string_view cell = t.substr(at + 1, next - at - 1);
    while (!cell.empty() && cell.front() == ' ') cell.remove_prefix(1);
    while (!cell.empty() && cell.back() == ' ') cell.remove_suffix(1);
    cells.push_back(cell);
    at = next;
  }
  return cells;
}

// GPTQModel's statistics of each quantized module (the keys of gptqmodel/models/writer.py,
// PROCESS_LOG_NAME "process", PROCESS_LOG_LAYER "layer", PROCESS_LOG_MODULE "module", ...,
// PROCESS_MAX_MEMORY "max_vram"; logged per module by the looper's processors, 1.x-5.x): one JSON
// object a module in the early releases ("process": "gptq", "layer": 13, ...), a table row in the
// later ones ("| gptq | 56 | self_attn.k_proj | 0.0001644955 | ..." under "| process | layer |
// module | ..."). The processes: gptq, awq, qqq, eora.
bool GptqModelStats(std::string_view t) {
  if (Has(t, "\"process\": \"")) {
    for (std::string_view p : {"\"process\": \"gptq\""sv, "\"process\": \"awq\""sv,
                               "\"process\": \"qqq\""sv, "\"process\": \"eora\""sv}) {
      if (Has(t, p)) return true;
    }
    return false;
  }
  if (t.find('|') == std::string_view::npos) return false;
  const std::vector<std::string_view> cells = TableCells(t);
  if (cells.size() < 3) return false;
  if (cells[0] == "process" && cells[1] == "layer" && cells[2] == "module") return true;
  const bool process = cells[0] == "gptq" || cells[0] == "awq" || cells[0] == "qqq" ||
                       cells[0] == "eora";
  return process && !cells[1].empty() &&
         std::all_of(cells[1].begin(), cells[1].end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// A module path naming a decoder layer ("model.layers.39.mlp.down_proj",
// "model.language_model.layers.0:"): ".layers." or "layers." followed by a digit.
bool NamesDecoderLayer(std::string_view word) {
  for (size_t at = word.find("layers."); at != std::string_view::npos;
       at = word.find("layers.", at + 7)) {
    if (at + 7 < word.size() && std::isdigit(static_cast<unsigned char>(word[at + 7]))) {
      return true;
    }
  }
  return false;
}

// llm-compressor's and auto-round's progress through the layers:
//  - llm-compressor (vllm-project/llm-compressor): GPTQModifier's "Quantizing
//    model.layers.39.mlp.down_proj using 128 samples" (modifiers/quantization/gptq/base.py
//    compress_modules, 0.4+), the sequential pipeline's bars "(3/41): Calibrating" and
//    "(3/41): Propagating" (pipelines/sequential/pipeline.py, 0.5+), the 0.3 layer-compressor's
//    "===== Compressing layer 40/40 =====" and "Calibrating model.layers.39..."; and the
//    sequential pipeline's own out-of-memory message, "Sequential pipeline ran out of memory"
//    (pipelines/sequential/helpers.py, re-raised from a layer's calibration forward).
//  - auto-round (intel/auto-round): "start to quantize <model>" (auto_round/__main__.py, llm.py),
//    "start to cache block inputs" / "caching done" and "using torch.bfloat16 for quantization
//    tuning" (auto_round/compressors/base.py, 0.5+), the bar "Quantizing model.layers.24:".
bool CompressorProgress(const LineView& s, std::string_view t) {
  // Packing the quantized layers, the run's last step, in host memory: AutoGPTQ's "Packing
  // model..." and "Packing model.layers.0.self_attn.k_proj..." (auto_gptq/modeling/_utils.py
  // pack_model, 0.4-0.7), GPTQModel's the same (gptqmodel/utils/model.py pack_model).
  if (Has(s, "Sequential pipeline ran out of memory") || Has(s, "start to cache block inputs") ||
      Has(s, "caching done") || Has(s, "for quantization tuning") || Has(s, "Compressing layer ") ||
      Has(s, "Packing model")) {
    return true;
  }
  if (Has(t, "start to quantize ") || Has(t, "start to compute imatrix")) return true;
  // llm-compressor 0.3's per-module line, "compress | INFO - Compressing
  // model.layers.11.mlp.down_proj..." (modifiers/quantization/gptq/utils/gptq_wrapper.py), and
  // GPTQModel's replay of a layer's calibration inputs, "Forward replay (layer=`model.layers.11`,
  // batches=128, rows=...)" (looper/module_looper.py, 5.x+).
  if ((Has(t, "Compressing model.") || Has(t, "Forward replay (layer=")) &&
      Has(t, "layers.")) {
    return true;
  }
  // auto-round tuning several blocks at once (nblocks > 1): "Quantizing [1-4]/36"
  // (auto_round/compressors/orchestrator.py, its bar's description); "start to compute imatrix"
  // (auto_scheme/delta_loss.py, the scheme search's calibration pass).
  if (const size_t q = t.find("Quantizing ["); q != std::string_view::npos) {
    size_t end = 0;
    const std::string_view rest = t.substr(q + 12);
    if (NumberAt(rest, 0, &end) && rest.substr(end, 1) == "-" &&
        rest.find("]/") != std::string_view::npos) {
      return true;
    }
  }
  for (std::string_view bar : {"): Calibrating"sv, "): Propagating"sv}) {
    const size_t at = t.find(bar);
    if (at == std::string_view::npos) continue;
    const size_t open = t.rfind('(', at);
    if (open != std::string_view::npos && Has(t.substr(open, at - open), "/")) return true;
  }
  for (std::string_view key : {"Quantizing "sv, "Calibrating "sv}) {
    const size_t at = t.find(key);
    if (at == std::string_view::npos) continue;
    const size_t b = at + key.size();
    size_t end = b;
    while (end < t.size() && t[end] != ' ' && t[end] != ':' && t[end] != '\r') ++end;
    if (NamesDecoderLayer(t.substr(b, end - b))) return true;
  }
  return false;
}

bool ModelOptExportLine(const LineView& s) {
  return Has(s, "Cannot export model to the model_config");
}

// A tqdm bar of this description at its line's start (after spaces or a prefix's backquote):
// "Packing:  40%|" (the number and "%|" after the description).
bool TqdmBar(std::string_view t, std::string_view desc) {
  const size_t at = t.find(desc);
  if (at == std::string_view::npos || t.find_first_not_of(" `") != at) return false;
  size_t end = 0;
  return NumberAt(t, at + desc.size(), &end) && t.substr(end, 2) == "%|";
}

// A quantizer's progress through the layers: AutoGPTQ's "Start quantizing layer 3/32" and
// "Quantizing self_attn.q_proj in layer 3/32..." (auto_gptq/modeling/_base.py quantize, 0.4-0.7),
// GPTQ-for-LLaMa's "Quantizing layer 3/32.." (llama.py, neox.py) and "Quantizing fc2 in layer
// 8/48..." (opt.py), GPTQModel's progress titles "Quantizing layer 3 of 31" and "Quantizing
// mlp.down_proj in layer" (gptqmodel/looper/module_looper.py, gptq_processor.py, 2.x-7.x),
// optimum's bars "Quantizing model.layers blocks" and "Quantizing layers inside the block" and
// its logger's "Start quantizing block model.layers 3/32" and "Quantizing mlp.up_proj in block
// 3/32..." (optimum/gptq/quantizer.py quantize_model, 1.1x-1.2x; the quantizer behind
// transformers' GPTQConfig), AutoAWQ's "AWQ:  40%|" and "Packing:  40%|"
// bars (awq/quantize/quantizer.py quantize and pack, 0.2). The run converts the weights layer by
// layer.
bool QuantizerProgress(const Line& line) {
  const LineView s = line.view();
  if (Has(s, "process") || Has(s, "gptq") || Has(s, "awq")) {
    if (GptqModelStats(line.text)) return true;
  }
  if (Has(s, "alibrating") || Has(s, "ropagating") || Has(s, "Sequential pipeline") ||
      Has(s, "start to") || Has(s, "caching done") || Has(s, "quantization tuning") ||
      Has(s, "Compressing model.") || Has(s, "Forward replay (layer=") ||
      Has(s, "Compressing layer") || Has(s, "Quantizing ") || Has(s, "Packing model")) {
    if (CompressorProgress(s, line.text)) return true;
  }
  if (Has(s, "Packing:") && TqdmBar(line.text, "Packing:")) return true;
  // llm-awq's search, AutoAWQ's ancestor (mit-han-lab/llm-awq awq/quantize/pre_quant.py run_awq:
  // tqdm over the decoder layers, desc "Running AWQ..."), each layer's scales searched on the GPU
  // with the calibration inputs.
  // (Its description is llm-awq's own: read wherever it stands, behind a rank's prefix too.)
  if (Has(s, "Running AWQ...:")) {
    const size_t at = line.text.find("Running AWQ...:");
    size_t end = 0;
    if (NumberAt(line.text, at + 15, &end) && line.text.substr(end, 2) == "%|") return true;
  }
  if (Has(s, "-- ") && ExLlamaConvertLine(line.text)) return true;
  // TensorRT-LLM's quantize.py over NVIDIA's Model Optimizer (AMMO before 0.11): "Quantization
  // done. Total time used: S s." once calibration ends (tensorrt_llm/quantization/
  // quantize_by_modelopt.py, 0.9+), and the export's own message when writing the quantized
  // checkpoint fails, "Cannot export model to the model_config. The AMMO optimized model
  // state_dict ..." (ammo/torch/export/model_config_export.py; "modelopt-optimized" in
  // modelopt/torch/export/, 0.11+), followed by "Detailed export error: <the exception>".
  if (ModelOptExportLine(s) || Has(s, "Quantization done. Total time used")) return true;
  // lmdeploy's calibration pass (`lmdeploy lite calibrate`, and `lite auto_awq`, which runs it
  // before its AWQ search): "model.layers.12, samples: 128, max gpu memory: 10.18 GB" for each
  // layer, as its tutorials print it, after "Move model.layers.0 to CPU." for each layer it keeps
  // in host memory while the others are calibrated.
  if (Has(s, ", samples: ") && Has(s, "max gpu memory:")) return true;
  if (Has(s, "Move model.") && (Has(s, " to CPU.") || Has(s, " to GPU."))) return true;
  if (!Has(s, "uantizing") && !Has(s, "AWQ:")) return false;  // most lines stop here
  // auto-round before its compressors (autoround.py quantize_blocks, 0.2-0.3): "quantizing
  // 12/32, model.layers.11".
  if (Has(s, "quantizing ") && Has(s, ", model.") && Has(s, "layers.")) return true;
  if (Has(s, "uantizing layer") || Has(s, "uantizing block ") ||
      (Has(s, "Quantizing ") &&
       (Has(s, " in layer") || Has(s, " blocks") || Has(s, " in block ")))) {
    return true;
  }
  const std::string_view t = line.text;
  const size_t awq = t.find("AWQ:");
  return awq != std::string_view::npos && t.find_first_not_of(" `") == awq && Has(s, "%|");
}

// The layer a quantizer's progress line names, counted from 1 as printed ("layer 3/32", "layer 3 of
// 31", "(3/41): Calibrating") or from a 0-based index (a module path, GPTQModel's rows); 0 when
// the line names none. Read from the whole line (an event keeps a trimmed copy).
int ProgressLayer(std::string_view t) {
  auto number_then = [&](size_t at, std::string_view sep) -> int {
    size_t end = 0;
    const auto n = NumberAt(t, at, &end);
    if (!n || *n < 0 || *n > 100000 || t.substr(end, sep.size()) != sep) return 0;
    return static_cast<int>(*n);
  };
  for (std::string_view key : {"layer "sv, "Compressing layer "sv}) {
    const size_t at = t.find(key);
    if (at == std::string_view::npos) continue;
    if (int n = number_then(at + key.size(), "/")) return n;
    if (int n = number_then(at + key.size(), " of ")) return n;
  }
  // optimum names the block list before the number ("block model.layers 3/32"), or not ("in
  // block 3/32").
  for (std::string_view key : {"uantizing block "sv, " in block "sv}) {
    const size_t at = t.find(key);
    if (at == std::string_view::npos) continue;
    const size_t b = at + key.size();
    const size_t space = t.find(' ', b);
    if (int n = number_then(b, "/")) return n;
    if (space != std::string_view::npos) {
      if (int n = number_then(space + 1, "/")) return n;
    }
  }
  // ExLlamaV2's convert.py names the module, numbered from 0: " -- Layer: model.layers.12
  // (Attention)", " -- Linear: model.layers.12.mlp.up_proj" (exllamav2/conversion/).
  for (std::string_view key : {"-- Layer: "sv, "-- Linear: "sv}) {
    const size_t at = t.find(key);
    if (at == std::string_view::npos) continue;
    const size_t layers = t.find("layers.", at + key.size());
    if (layers == std::string_view::npos) continue;
    if (int n = number_then(layers + 7, " ")) return n + 1;
    if (int n = number_then(layers + 7, ".")) return n + 1;
    // Layer 0 ("layers.0 (MLP)"): the first.
    if (t.substr(layers + 7, 2) == "0 " || t.substr(layers + 7, 2) == "0.") return 1;
  }
  // The layer-by-layer bars of llm-awq and AutoAWQ ("Running AWQ...:  41%|####  | 13/32 [",
  // "AWQ:  40%|####  | 13/32 ["): tqdm counts the layers done, so the one running is the next.
  for (std::string_view desc : {"Running AWQ...:"sv, "AWQ:"sv}) {
    const size_t at = t.find(desc);
    if (at == std::string_view::npos) continue;
    const size_t pct = t.find("%|", at);
    const size_t bar = pct == std::string_view::npos ? pct : t.find('|', pct + 2);
    if (bar == std::string_view::npos) continue;
    if (int n = number_then(bar + 1, "/")) return n + 1;
    if (t.substr(bar + 1, 3) == " 0/") return 1;
  }
  // lmdeploy's calibration also numbers the module from 0: "model.layers.12, samples: 128, max
  // gpu memory: 10.18 GB" (the last on the line: a paste that lost its line ends holds them all).
  if (const size_t at = t.rfind(", samples: "); at != std::string_view::npos) {
    const size_t layers = t.rfind("layers.", at);
    if (layers != std::string_view::npos) {
      if (int n = number_then(layers + 7, ",")) return n + 1;
      if (t.substr(layers + 7, 2) == "0,") return 1;
    }
  }
  // llm-compressor's sequential pipeline, each subgraph calibrated then propagated: "(3/41):
  // Calibrating", "(3/41): Propagating".
  for (std::string_view bar : {"): Calibrating"sv, "): Propagating"sv}) {
    const size_t cal = t.find(bar);
    if (cal == std::string_view::npos) continue;
    const size_t open = t.rfind('(', cal);
    if (open != std::string_view::npos) return number_then(open + 1, "/");
  }
  // auto-round tuning several blocks at once, "Quantizing [13-14]/32": the first of them.
  if (const size_t q = t.find("Quantizing ["); q != std::string_view::npos) {
    if (int n = number_then(q + 12, "-")) return n;
  }
  // GPTQModel's progress titles with the layer bracketed, "Quantizing mlp.down_proj in layer [11
  // of 31]" (its log bar's title, 5.x+).
  if (const size_t at = t.find("layer ["); at != std::string_view::npos) {
    if (int n = number_then(at + 7, " of ")) return n;
  }
  // optimum's bar over the blocks, "Quantizing model.layers blocks :  34%|###4      | 11/32 [":
  // tqdm counts the blocks done, so the one running is the next.
  if (const size_t at = t.find(" blocks :"); at != std::string_view::npos) {
    const size_t pct = t.find("%|", at);
    const size_t bar = pct == std::string_view::npos ? pct : t.find('|', pct + 2);
    if (bar != std::string_view::npos) {
      if (int n = number_then(bar + 1, "/")) return n + 1;
      if (t.substr(bar + 1, 3) == " 0/") return 1;
    }
  }
  // GPTQModel's per-module statistics, the layer numbered from 0: a JSON object's "layer": 13,
  // or a table row's second cell, "| gptq | 56 | self_attn.k_proj |" (gptqmodel/models/writer.py
  // PROCESS_LOG_LAYER).
  if (const size_t key = t.find("\"layer\": "); key != std::string_view::npos) {
    if (int n = number_then(key + 9, ",")) return n + 1;
    if (t.substr(key + 9, 2) == "0,") return 1;
  }
  for (std::string_view process : {"| gptq "sv, "| awq "sv, "| qqq "sv, "| eora "sv}) {
    const size_t at = t.find(process);
    if (at == std::string_view::npos) continue;
    const size_t bar = t.find('|', at + 1);
    if (bar == std::string_view::npos) break;
    size_t end = 0;
    const auto n = NumberAt(t, bar + 1, &end);
    if (n && *n >= 0 && *n < 100000 && t.find('|', end) != std::string_view::npos &&
        t.substr(end, t.find('|', end) - end).find_first_not_of(' ') == std::string_view::npos) {
      return static_cast<int>(*n) + 1;
    }
  }
  // A module path in a progress line, numbered from 0: llm-compressor's "Quantizing
  // model.layers.39.mlp.down_proj using 128 samples", auto-round's "Quantizing model.layers.0:"
  // (not a packing line's: packing follows the last layer).
  if (t.find("Packing") != std::string_view::npos) return 0;
  for (size_t at = t.find("layers."); at != std::string_view::npos;
       at = t.find("layers.", at + 7)) {
    size_t end = 0;
    const auto n = NumberAt(t, at + 7, &end);
    if (!n || *n < 0 || *n >= 100000 || end == at + 7) continue;
    if (!std::isdigit(static_cast<unsigned char>(t[at + 7]))) continue;
    // (Also at the line's end, "quantizing 12/32, model.layers.11", or quoted, "layer=`model.
    // layers.11`".)
    if (end >= t.size() || t[end] == '.' || t[end] == ':' || t[end] == ' ' || t[end] == '`' ||
        t[end] == ',' || t[end] == '\r') {
      return static_cast<int>(*n) + 1;
    }
  }
  return 0;
}

// The engines' calls of a worker method by name, on the code line under a traceback frame: the
// method is where the failure is (a frame of its own, for the stage). vLLM V1's executors call
// every worker method through collective_rpc("name", ...) (vllm/v1/executor/abstract.py,
// multiproc_executor.py, 0.8+; initialize_from_config there runs the worker's
// initialize_from_config and then compile_or_warm_up_model), V0's through
// _run_workers("name", ...) (vllm/executor/*.py, 0.4-0.10).
void MatchRpcCall(const Line& line, std::string_view key) {
  const std::string_view s = line.text;
  const size_t at = s.find(key);
  if (at == std::string_view::npos) return;
  const size_t b = at + key.size();
  if (b >= s.size() || (s[b] != '"' && s[b] != '\'')) return;
  size_t end = b + 1;
  while (end < s.size() && end - b < 80 &&
         (std::isalnum(static_cast<unsigned char>(s[end])) || s[end] == '_'))
    ++end;
  if (end == b + 1 || end >= s.size() || s[end] != s[b]) return;
  line.Emit(EventKind::kFrame, kEngine).text =
      std::string(s.substr(b + 1, end - b - 1)) + " (by name)";
}

// "<key>NAME(": a call of an engine component's method on a code line, as a frame "NAME
// (suffix)". The frame table maps such a frame by its name alone (never by a file), so a method
// that calls several phases gets no row and the milestones decide.
void MatchMethodCall(const Line& line, std::string_view key, std::string_view suffix) {
  const std::string_view s = line.text;
  const size_t at = s.find(key);
  if (at == std::string_view::npos) return;
  const size_t b = at + key.size();
  size_t end = b;
  while (end < s.size() && end - b < 80 &&
         (std::isalnum(static_cast<unsigned char>(s[end])) || s[end] == '_'))
    ++end;
  if (end == b || end >= s.size() || s[end] != '(') return;
  const std::string_view name = s.substr(b, end - b);
  if (name == "_dummy_sampler_run") return;  // read below, by who calls it
  auto& e = line.Emit(EventKind::kFrame, kEngine);
  e.text = std::string(name) + " (" + std::string(suffix) + ")";
}

// The code line under a traceback frame.
void MatchCodeLine(const Line& line) {
  const LineView s = line.view();
  if (Has(s, "collective_rpc(")) MatchRpcCall(line, "collective_rpc(");
  if (Has(s, "_run_workers(")) MatchRpcCall(line, "_run_workers(");
  // vLLM 0.1-0.3's LLMEngine._init_cache (engine/llm_engine.py) names the method on the next
  // line: "num_blocks = self._run_workers(" + "profile_num_available_blocks", ...; its result,
  // the block count, is what only the profile returns.
  if (Has(s, "num_blocks = self._run_workers(")) {
    line.Emit(EventKind::kFrame, kEngine).text = "profile_num_available_blocks (by name)";
  }
  // The engine calling its executor, and a worker calling its model runner: vLLM's
  // LLMEngine._initialize_kv_caches (V0, vllm/engine/llm_engine.py) calls
  // model_executor.determine_num_available_blocks() and then initialize_cache(); V1's
  // EngineCore._initialize_kv_caches (vllm/v1/engine/core.py) calls
  // model_executor.determine_available_memory(), then initialize_from_config() (the KV cache and
  // the warm-up: no row, the milestones decide); the workers call model_runner.profile_run(),
  // capture_model(), initialize_kv_cache() (gpu_worker.py, worker.py). The code line says which
  // callee failed where the callee's own frame is cut from the excerpt.
  if (Has(s, "self.model_executor.")) MatchMethodCall(line, "self.model_executor.", "executor");
  if (Has(s, "self.model_runner.")) MatchMethodCall(line, "self.model_runner.", "by name");
  // Meta's reference model (llama/model.py of LLaMA 1, Llama 2 and Llama 3, Code Llama): each
  // Attention.__init__ allocates its KV cache, self.cache_k / self.cache_v = torch.zeros(
  // (max_batch_size, max_seq_len, heads, head_dim)).cuda(), while Llama.build constructs the
  // model: a cache for the maximum batch and length, reserved at load.
  if (Has(s, "self.cache_k = torch.zeros(") || Has(s, "self.cache_v = torch.zeros(")) {
    line.Emit(EventKind::kStaticCache, kEngine).text = "cache_k";
  }
  // A KVCache module allocating its buffers for the maximum batch and length: gpt-fast's
  // model.py KVCache.__init__ (and the projects built on it), self.register_buffer("k_cache",
  // torch.zeros(cache_shape, dtype=dtype)), which setup_caches builds for every layer.
  if (Has(s, "\"k_cache\", torch.zeros(") || Has(s, "\"v_cache\", torch.zeros(")) {
    line.Emit(EventKind::kFrame, kEngine).text = "kv_cache_buffer (KVCache.__init__)";
  }
  // A vision encoder's patch embedding on the stack: nn.Conv2d / nn.Conv3d (CLIP, SigLIP and ViT
  // towers; Qwen2-VL's Conv3d over frames) and nn.Unfold (vLLM's mllama.py) run their functional
  // call under torch/nn/modules/conv.py _conv_forward ("return F.conv2d(input, weight, ...") and
  // fold.py forward ("return F.unfold(input, ..."), F.unfold its "torch._C._nn.im2col(" (torch
  // 1.x-2.x). A language model's layers run none of them (Mamba's causal convolution is 1-D); a
  // diffusion pipeline's VAE and UNet run them throughout (facts.cc reads the hint so only where
  // no diffusion pipeline runs, MatchDiffusionRun).
  if (Has(s, "F.conv2d(") || Has(s, "F.conv3d(") || Has(s, "F.unfold(") ||
      Has(s, "_nn.im2col(")) {
    line.Emit(EventKind::kMmHint, kEngine).text = "conv";
  }
  // An attention computed by a direct kernel call: torch's F.scaled_dot_product_attention,
  // flash-attn's flash_attn_varlen_func, xformers' memory_efficient_attention. In a vLLM model's
  // file only the vision (or audio) tower calls one: vLLM's language models attend through its
  // Attention layer and backends (attention/layer.py, v1/attention/backends/), while the towers'
  // attention called these kernels in the models' files (qwen2_vl.py, qwen2_5_vl.py, glm4v.py
  // ... Qwen2VisionAttention.forward, 0.6-0.10; the ViT wrappers, attention/ops/
  // vit_attn_wrappers.py, from 0.11). facts.cc pairs it with the frame above it.
  if (line.after_frame &&
      (Has(s, "scaled_dot_product_attention(") || Has(s, "flash_attn_varlen_func(") ||
       Has(s, "memory_efficient_attention("))) {
    line.Emit(EventKind::kMmHint, kEngine).text = "attention_call";
  }
  // DeepSpeed ZeRO-3's context that all-gathers partitioned parameters whole onto every rank
  // ("with deepspeed.zero.GatheredParameters(params, modifier_rank=0):",
  // runtime/zero/partition_parameters.py): a frame of its own, where its __enter__ is cut.
  if (Has(s, "GatheredParameters(")) {
    line.Emit(EventKind::kFrame, kEngine).text = "GatheredParameters (code line)";
  }
  // transformers' eager attention materialising the scores, batch x heads x length x length, and
  // their float32 softmax: eager_attention_forward (4.48+) and, before it, each model's
  // Attention.forward (models/llama/modeling_llama.py 4.3x-4.47: "attn_weights =
  // torch.matmul(query_states, key_states.transpose(2, 3))", "attn_weights =
  // nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32)"). A frame of its own, for
  // the fix (attn_implementation), where the frame's function is only "forward".
  if (Has(s, "attn_weights = torch.matmul(") || Has(s, "softmax(attn_weights")) {
    line.Emit(EventKind::kFrame, kEngine).text = "attn_weights (eager attention)";
  }
}

// text-generation-webui's load_model (modules/models.py): "Loading vicuna-13b-GPTQ-4bit-128g..."
// (2023), "Loading \"Qwen2.5-7B-Instruct\"" (2024+), at the line's start or after the logger's
// level ("INFO:", "INFO     "); one name, which excludes its "Loading the extension ..." and
// "Loading settings from ..." lines. The model's name, or "" when the line is none.
std::string_view TextgenLoading(std::string_view t) {
  const size_t at = t.find("Loading ");
  if (at == std::string_view::npos || (at > 0 && t[at - 1] != ' ' && t[at - 1] != ':')) {
    return {};
  }
  std::string_view rest = t.substr(at + 8);
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\r')) rest.remove_suffix(1);
  if (rest.size() < 3 || rest.find(' ') != std::string_view::npos) return {};
  if (rest.front() == '"') {
    return rest.back() == '"' ? rest.substr(1, rest.size() - 2) : std::string_view();
  }
  if (rest.size() <= 3 || rest.substr(rest.size() - 3) != "...") return {};
  // A model's name ("vicuna-13b-GPTQ-4bit-128g", "facebook_opt-6.7b"), not another script's
  // "Loading dataset..." or "Loading model...".
  const std::string_view name = rest.substr(0, rest.size() - 3);
  const bool named = std::any_of(name.begin(), name.end(), [](char c) {
    return c == '-' || c == '_' || c == '/' || std::isdigit(static_cast<unsigned char>(c));
  });
  return named ? name : std::string_view();
}
// Its end of the load, since 2024: "Loaded \"NAME\" in 12.34 seconds." (modules/models.py).
bool TextgenLoaded(std::string_view t) {
  const size_t at = t.find("Loaded \"");
  if (at == std::string_view::npos) return false;
  const size_t in = t.find("\" in ", at + 8);
  size_t end = 0;
  return in != std::string_view::npos && NumberAt(t, in + 5, &end) &&
         t.substr(end, 8).find("sec") <= 2;
}

// The start-up prints of plain PyTorch inference programs: the model is being loaded, the load
// finished (what fails after it is generation), a generation finished.
//  - Meta's reference code: LLaMA 1 example.py load() and Llama 2/3 / Code Llama generation.py
//    Llama.build print "Loaded in {t:.2f} seconds" after load_state_dict (the caches are built
//    with the model, before it); fairscale's "> initializing model parallel with size N" comes
//    before the checkpoint is read.
//  - gpt-fast and torchchat generate.py: "Loading model ...", then "Time to load model: {t}
//    seconds"; each run prints "Compilation time: ..." (the compile warm-up) or "Time for
//    inference N: ..." (torchtune's generate recipe: "Time for inference: ...").
//  - litgpt / lit-gpt generate/base.py: "Loading model '<path>' with {config}", then
//    "Time to load the model weights: {t} seconds." (lit-llama: "Time to load model: ...").
//  - text-generation-webui modules/models.py: "Loaded the model in {t} seconds." (2023), and
//    TextgenLoading / TextgenLoaded above.
// A line whose own words say loading the model failed: an application's "ERROR: Failed to load
// model - not enough GPU memory.", "Error loading model", "could not load the model". Where no
// frame or milestone places the failure, it is the load (facts.cc DecideStage). llama.cpp's
// server says "failed to load model" also for a context it could not create, and Ollama's runner
// relays llama.cpp's words: their lines are their readers'.
bool LoadFailedWords(const LineView& s) {
  if (!Has(s, "oad") ||
      !(Has(s, "ailed") || Has(s, "rror") || Has(s, "RROR") || Has(s, "nable") ||
        Has(s, "ould not")) ||
      Has(s, "llama") || Has(s, "load_model:") || Has(s, "common_init") || Has(s, "gguf") ||
      Has(s, "ollama") || s.size() > 600) {
    return false;
  }
  const std::string lower = core::AsciiLower(s.substr(0, 600));
  for (std::string_view words :
       {"failed to load model"sv, "failed to load the model"sv, "error loading model"sv,
        "error loading the model"sv, "could not load model"sv, "could not load the model"sv,
        "unable to load model"sv, "unable to load the model"sv, "model failed to load"sv,
        "failed to load model weights"sv, "error while loading the model"sv}) {
    if (lower.find(words) != std::string::npos) return true;
  }
  return false;
}

// A sentence of prose lower-cased, with the marks in `drop` (Markdown's emphasis and code
// marks, quotes) taken out, for the phrase readers below.
std::string ProseLower(std::string_view t, std::string_view drop) {
  std::string lower = core::AsciiLower(t);
  std::erase_if(lower, [&](char c) { return drop.find(c) != std::string_view::npos; });
  return lower;
}

// The reporter's own words placing an out-of-memory in the load ("the OOM occurred during model
// load", "OOM while loading the model", Chinese "model loading" followed by "OOM"): a phrase of
// the load's phase beside a word of running out, in prose (not a traceback's source line), read
// as the load's failure where nothing else places the phase (facts.cc, as LoadFailedWords), at
// any length (a paste that lost its line ends holds the prose and the error on one line).
bool LoadPhaseWords(const Line& line) {
  const LineView s = line.view();
  // The rarer needles first (a long needle's byte runs rule most lines out unsearched).
  if (!Has(s, "out of memory") && !Has(s, "OOM") && !Has(s, "ran out") && !Has(s, "oom")) {
    return false;
  }
  if (!Has(s, "\xe5\x8a\xa0\xe8\xbd\xbd") && !Has(s, "oad")) return false;  // 加载, "load"
  const std::string_view t = line.text;
  if (t.find("File \"") != std::string_view::npos) return false;
  // Lower case, without Markdown's emphasis and code marks ("during **model load**").
  const std::string lower = ProseLower(t, "*`_");
  if (lower.find("oom") == std::string::npos && lower.find("out of memory") == std::string::npos &&
      lower.find("ran out") == std::string::npos) {
    return false;
  }
  for (std::string_view words :
       {"during model load"sv, "during the model load"sv, "during model loading"sv,
        "during loading"sv, "during weight loading"sv, "while loading the model"sv,
        "while loading model"sv, "when loading the model"sv, "when loading model"sv,
        "at model load"sv, "at load time"sv, "load-time oom"sv, "oom at load"sv,
        "oom on load"sv, "oom during load"sv, "oom while loading"sv, "oom when loading"sv,
        "\xe6\xa8\xa1\xe5\x9e\x8b\xe5\x8a\xa0\xe8\xbd\xbd"sv,    // 模型加载, "model loading"
        "\xe5\x8a\xa0\xe8\xbd\xbd\xe6\xa8\xa1\xe5\x9e\x8b"sv}) {  // 加载模型, "load the model"
    if (lower.find(words) != std::string::npos) return true;
  }
  return false;
}

// A sentence before an out-of-memory message on its line that names the loading call
// (from_pretrained) and no word of running the model: the reporter places the failure there.
// Not the failing statement a traceback prints (indented code, an IPython arrow).
// A sentence: short, and holding no log record or traceback (a paste that lost its line ends
// joins a program's code and its error on one line).
constexpr size_t kSentenceBytes = 320;
bool LoaderNamedBefore(std::string_view t) {
  if (t.size() > kSentenceBytes || t.find("from_pretrained") == std::string_view::npos ||
      t.starts_with(" ") || t.starts_with("\t") || t.find("File \"") != std::string_view::npos ||
      t.find("Traceback") != std::string_view::npos || t.find("INFO") != std::string_view::npos ||
      t.find("Error") != std::string_view::npos || IpythonArrow(t)) {
    return false;
  }
  const std::string lower = core::AsciiLower(t);
  // ("training", not "train": from_pretrained holds that.)
  for (std::string_view ran : {"generat"sv, "infer"sv, "training"sv, ".train("sv, "fine-tun"sv,
                               "finetun"sv, "forward"sv, "predict"sv, "chat("sv, "pipeline("sv,
                               "\xe6\x8e\xa8\xe7\x90\x86"sv}) {  // 推理, "inference"
    if (lower.find(ran) != std::string::npos) return false;
  }
  return true;
}

// The reporter's words placing an out-of-memory in a quantization run, which is the load (its
// calibration converts the weights before anything is served): "unable to quantize this model
// ... due to CUDA out of memory", "OOM while quantizing". The verb's forms beside a word of
// running out, in prose, on this line or across the previous one (a paste reflowed between
// them); "quantized" names a model already converted and is not one.
bool QuantizeRunWords(const Line& line) {
  for (const LineView& t : {line.view(), line.joined}) {
    if (t.empty() || !Has(t, "uantiz")) continue;
    if (!Has(t, "out of memory") && !Has(t, "OOM") && !Has(t, "oom") && !Has(t, "ran out")) {
      continue;
    }
    if (t.find("File \"") != std::string_view::npos) continue;
    const std::string lower = ProseLower(t, "*`_");
    if (lower.find("oom") == std::string::npos &&
        lower.find("out of memory") == std::string::npos &&
        lower.find("ran out") == std::string::npos) {
      continue;
    }
    for (std::string_view words :
         {"to quantize "sv, "quantizing"sv, "during quantization"sv, "quantization process"sv,
          "quantization run"sv, "quantization script"sv}) {
      if (lower.find(words) != std::string::npos) return true;
    }
  }
  return false;
}

// The reporter's words that another instance of the engine shared the GPU: "one of the two
// vLLM replicas exits", "a second instance on the same card", "two containers", Chinese "the
// same card started at the same time". Prose only (not a traceback's source
// line); read where an engine's own failure (no memory left for the KV cache, a profile or a
// load that failed) does not say who held the rest.
bool OtherInstanceWords(const Line& line) {
  const LineView s = line.view();
  constexpr std::string_view kSame = "\xe5\x90\x8c";  // 同, "same"
  if (!Has(s, "two ") && !Has(s, "Two ") && !Has(s, "second ") && !Has(s, "another ") &&
      !Has(s, "multiple ") && !Has(s, "both ") && !Has(s, kSame)) {
    return false;
  }
  const std::string_view t = line.text;
  if (t.find("File \"") != std::string_view::npos) return false;
  const std::string lower = ProseLower(t, "*`_");
  for (std::string_view words :
       {"two vllm"sv, "two sglang"sv, "two instances"sv, "second instance"sv,
        "another instance"sv, "multiple instances"sv, "both instances"sv, "two replicas"sv,
        "second replica"sv, "two containers"sv, "second container"sv, "another container"sv,
        "two engines"sv, "second engine"sv, "two servers on"sv, "second server on"sv}) {
    if (lower.find(words) != std::string::npos) return true;
  }
  // "The same card" (four spellings) with "at the same time", or "two on each card".
  for (std::string_view card :
       {"\xe5\x90\x8c\xe4\xb8\x80\xe5\xbc\xa0\xe5\x8d\xa1"sv,
        "\xe5\x90\x8c\xe4\xb8\x80\xe5\x9d\x97\xe5\x8d\xa1"sv,
        "\xe5\x90\x8c\xe4\xb8\x80\xe5\xbc\xa0\xe6\x98\xbe\xe5\x8d\xa1"sv,
        "\xe5\x90\x8c\xe4\xb8\x80\xe4\xb8\xaagpu"sv}) {
    if (lower.find(card) != std::string::npos &&
        lower.find("\xe5\x90\x8c\xe6\x97\xb6") != std::string::npos) {
      return true;
    }
  }
  return lower.find("\xe6\xaf\x8f\xe5\x8d\xa1 2 \xe4\xb8\xaa") != std::string::npos ||
         lower.find("\xe6\xaf\x8f\xe5\x8d\xa1" "2" "\xe4\xb8\xaa") != std::string::npos ||
         lower.find("\xe6\xaf\x8f\xe5\xbc\xa0\xe5\x8d\xa1\xe4\xb8\xa4\xe4\xb8\xaa") !=
             std::string::npos;
}

// The reporter's own words placing the failure after the model ran: a training run's steps
// ("during training", "after the step 0", "after 120 steps") or requests served ("during
// inference", "while generating", "stops midway", "after a few runs"). A line of prose beside the
// pasted error, read only where nothing else places the phase (facts.cc): it tells a card that
// filled while running from one that filled while the weights were placed. Not a log record's
// own text (a traceback's source line, a logger's message): those are read as what they are.
bool RuntimeWords(const Line& line) {
  const std::string_view t = line.text;
  if (t.size() > 400 || t.find("File \"") != std::string_view::npos) return false;
  // A cheap test first (every line of a long log passes here): each phrase below holds one of
  // these pieces in either case.
  const LineView s = line.view();
  // The same in Chinese and Japanese: "asked the second question" (问第二个,
  // 第二个问题), "the second round" (第二轮, 第二次提问, 第二次对话), "during
  // inference" (推理时, 推理过程中, 推理的时候, 推論中, 推論時), "during
  // training" (训练时, 训练过程中, 训练的时候, 学習中), "while generating"
  // (生成时, 生成中), "multi-turn chat" (多轮对话, 几轮对话), "after running a
  // while" (运行一段时间, 跑了一段时间).
  // (The first character of each, as literal byte pairs, rules most lines out before any search:
  // 问 第 推 训 学 生 多 几 运 跑.)
  if (Has(s, "\xe9\x97") || Has(s, "\xe7\xac") || Has(s, "\xe6\x8e") || Has(s, "\xe8\xae") ||
      Has(s, "\xe5\xad") || Has(s, "\xe7\x94") || Has(s, "\xe5\xa4") || Has(s, "\xe5\x87") ||
      Has(s, "\xe8\xbf") || Has(s, "\xe8\xb7")) {
    for (std::string_view words :
         {"\xe9\x97\xae\xe7\xac\xac\xe4\xba\x8c\xe4\xb8\xaa"sv,
          "\xe7\xac\xac\xe4\xba\x8c\xe4\xb8\xaa\xe9\x97\xae\xe9\xa2\x98"sv,
          "\xe7\xac\xac\xe4\xba\x8c\xe8\xbd\xae"sv,
          "\xe7\xac\xac\xe4\xba\x8c\xe6\xac\xa1\xe6\x8f\x90\xe9\x97\xae"sv,
          "\xe7\xac\xac\xe4\xba\x8c\xe6\xac\xa1\xe5\xaf\xb9\xe8\xaf\x9d"sv,
          "\xe6\x8e\xa8\xe7\x90\x86\xe6\x97\xb6"sv,
          "\xe6\x8e\xa8\xe7\x90\x86\xe8\xbf\x87\xe7\xa8\x8b\xe4\xb8\xad"sv,
          "\xe6\x8e\xa8\xe7\x90\x86\xe7\x9a\x84\xe6\x97\xb6\xe5\x80\x99"sv,
          "\xe6\x8e\xa8\xe8\xab\x96\xe4\xb8\xad"sv,
          "\xe6\x8e\xa8\xe8\xab\x96\xe6\x99\x82"sv,
          "\xe8\xae\xad\xe7\xbb\x83\xe6\x97\xb6"sv,
          "\xe8\xae\xad\xe7\xbb\x83\xe8\xbf\x87\xe7\xa8\x8b\xe4\xb8\xad"sv,
          "\xe8\xae\xad\xe7\xbb\x83\xe7\x9a\x84\xe6\x97\xb6\xe5\x80\x99"sv,
          "\xe5\xad\xa6\xe7\xbf\x92\xe4\xb8\xad"sv,
          "\xe7\x94\x9f\xe6\x88\x90\xe6\x97\xb6"sv,
          "\xe7\x94\x9f\xe6\x88\x90\xe4\xb8\xad"sv,
          "\xe5\xa4\x9a\xe8\xbd\xae\xe5\xaf\xb9\xe8\xaf\x9d"sv,
          "\xe5\x87\xa0\xe8\xbd\xae\xe5\xaf\xb9\xe8\xaf\x9d"sv,
          "\xe8\xbf\x90\xe8\xa1\x8c\xe4\xb8\x80\xe6\xae\xb5\xe6\x97\xb6\xe9\x97\xb4"sv,
          "\xe8\xb7\x91\xe4\xba\x86\xe4\xb8\x80\xe6\xae\xb5\xe6\x97\xb6\xe9\x97\xb4"sv}) {
      if (Has(s, words)) return true;
    }
  }
  if (!Has(s, "uring") && !Has(s, "hile") && !Has(s, "hen ") && !Has(s, "fter ") &&
      !Has(s, "idway") && !Has(s, "id-way") && !Has(s, "iddle") && !Has(s, "raining") &&
      !Has(s, "econd ") && !Has(s, "ine for ")) {
    return false;
  }
  const std::string lower = core::AsciiLower(t);
  // The second question, request or turn failed (the first one ran), or the program ran for a
  // while before failing.
  for (std::string_view second : {"second question"sv, "second request"sv, "second prompt"sv,
                                  "second message"sv, "second query"sv, "second turn"sv,
                                  "second generation"sv, "second inference"sv}) {
    if (lower.find(second) != std::string::npos) return true;
  }
  for (std::string_view fine : {"works fine for "sv, "worked fine for "sv, "ran fine for "sv,
                                "runs fine for "sv, "running fine for "sv}) {
    if (lower.find(fine) != std::string::npos) return true;
  }
  for (std::string_view words : {"during training"sv,
                                 "while training"sv,
                                 "when training"sv,
                                 "during fine-tuning"sv,
                                 "during finetuning"sv,
                                 "while fine-tuning"sv,
                                 "while finetuning"sv,
                                 "in the middle of training"sv,
                                 "mid-training"sv,
                                 "after the step "sv,
                                 "after step "sv,
                                 "after a few steps"sv,
                                 "after some steps"sv,
                                 "after the first step"sv,
                                 "after the first epoch"sv,
                                 "after the first iteration"sv,
                                 "during inference"sv,
                                 "during generation"sv,
                                 "while generating"sv,
                                 "when generating"sv,
                                 "midway"sv,
                                 "mid-way"sv,
                                 "after a few runs"sv,
                                 "after a few requests"sv,
                                 "after a few turns"sv,
                                 "after a few rounds"sv,
                                 "after a few prompts"sv,
                                 "after a few messages"sv,
                                 "after a few generations"sv,
                                 "after a while"sv,
                                 "after some time"sv,
                                 "after running for"sv,
                                 "after several requests"sv,
                                 "after several questions"sv,
                                 "after several turns"sv,
                                 "after a couple of"sv,
                                 "after the first request"sv,
                                 "after the first question"sv,
                                 "after the first prompt"sv,
                                 "after some requests"sv,
                                 "in the middle of generation"sv,
                                 "in the middle of inference"sv,
                                 "in the middle of a conversation"sv}) {
    if (lower.find(words) != std::string::npos) return true;
  }
  // "after 120 steps", "after 3 iterations", "after 2 epochs"
  for (size_t at = lower.find("after "); at != std::string::npos;
       at = lower.find("after ", at + 6)) {
    size_t i = at + 6;
    const size_t digits = i;
    while (i < lower.size() && std::isdigit(static_cast<unsigned char>(lower[i]))) ++i;
    if (i == digits || i >= lower.size() || lower[i] != ' ') continue;
    const std::string_view rest = std::string_view(lower).substr(i + 1, 10);
    if (rest.substr(0, 4) == "step" || rest.substr(0, 9) == "iteration" ||
        rest.substr(0, 5) == "epoch") {
      return true;
    }
  }
  return false;
}

// The reporter's own words placing the failure in CUDA graph capture ("the worker died during
// CUDA-graph capture", "dies in graph capture"): read, like RuntimeWords, only where nothing
// else places the phase (facts.cc), never from a traceback's source line, and at any length (a
// paste that lost its line ends holds the prose and the error on one line). Not vLLM V0's own
// advice as capture begins ("If out-of-memory error occurs during cudagraph capture, consider
// ...", worker/model_runner.py capture_model), which is its capture milestone.
bool CaptureWords(const Line& line) {
  const LineView s = line.view();
  if (!Has(s, "apture") && !Has(s, "APTURE")) return false;
  const std::string_view t = line.text;
  if (t.find("File \"") != std::string_view::npos ||
      t.find("If out-of-memory error occurs") != std::string_view::npos) {
    return false;
  }
  // Most lines that hold "capture" are the engines' own capture lines, with none of the words
  // that place something in it.
  if (!Has(s, "during ") && !Has(s, "uring ") && !Has(s, "in ") && !Has(s, "hile ") &&
      !Has(s, "at ")) {
    return false;
  }
  const std::string lower = core::AsciiLower(t);
  for (std::string_view graph :
       {"cuda graph capture"sv, "cuda-graph capture"sv, "cudagraph capture"sv,
        "cuda graphs capture"sv, "graph capture"sv, "capturing cuda graph"sv,
        "capturing the cuda graph"sv, "capturing cudagraph"sv}) {
    for (size_t at = lower.find(graph); at != std::string::npos; at = lower.find(graph, at + 1)) {
      std::string_view before = std::string_view(lower).substr(0, at);
      if (before.ends_with("the ")) before.remove_suffix(4);
      for (std::string_view place : {"during "sv, "in "sv, "while "sv, "at "sv}) {
        if (before.ends_with(place)) return true;
      }
    }
  }
  return false;
}

// A line of the program's own code (a notebook cell, a script pasted beside the error; not a
// traceback's source line, which its frame places) that loads a model
// (AutoModelForCausalLM.from_pretrained(, LlavaForConditionalGeneration.from_pretrained(, ...;
// not a tokenizer's, processor's or config's), or one that runs one (generate, a pipeline's call,
// a forward, a training or evaluation loop). Read only where nothing else places the failure: code
// that loads and shows no call that runs the model failed where it stops, in the load.
bool CodeLine(const Line& line) {
  if (line.after_frame) return false;
  std::string_view t = line.text;
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
  // IPython's source lines ("----> 1 model = ...", "   3375 model = cls(...") and Python's
  // frames.
  if (t.starts_with("-->") || t.starts_with("---->") || t.starts_with("File ")) return false;
  if (!t.empty() && std::isdigit(static_cast<unsigned char>(t.front()))) return false;
  return !t.starts_with("#");
}
void MatchProgramCalls(const Line& line) {
  const LineView s = line.view();
  if (!Has(s, "(") || !CodeLine(line)) return;
  const std::string_view t = line.text;
  // (Each call on the line: a tokenizer's is often loaded first, on the same line once a paste
  // lost its line ends. The line's byte pairs rule most lines out first.)
  const size_t first = Has(s, ".from_pretrained(") ? t.find(".from_pretrained(") : t.npos;
  for (size_t at = first; at != std::string_view::npos;
       at = t.find(".from_pretrained(", at + 1)) {
    const std::string_view cls = t.substr(0, at);
    const size_t start = cls.find_last_of(" =(\t");
    const std::string_view name = start == std::string_view::npos ? cls : cls.substr(start + 1);
    if (name.find("Model") != std::string_view::npos ||
        name.find("ForCausalLM") != std::string_view::npos ||
        name.find("ForConditionalGeneration") != std::string_view::npos ||
        name.find("Vision2Seq") != std::string_view::npos) {
      line.Emit(EventKind::kLoadCall, "transformers");
      break;
    }
  }
  // (Also the words around the code, "generating a long answer", "during inference": any of
  // them keeps the failure from being read as the load's.)
  for (std::string_view call :
       {"generat"sv, "pipe("sv, "pipeline("sv, "model("sv, "forward"sv, " train"sv, ".train("sv,
        "training"sv, ".chat("sv, ".stream_chat("sv, ".encode("sv, "predict"sv, "evaluat"sv,
        ".fit("sv, "infer"sv, ".backward("sv, "Trainer("sv, ".step("sv, "outputs = "sv,
        "output = "sv}) {
    if (Has(s, call)) {
      line.Emit(EventKind::kRunCall, kEngine);
      return;
    }
  }
}

void MatchMilestone(const Line& line) {
  const LineView s = line.view();
  if (OtherInstanceWords(line)) line.Emit(EventKind::kOtherInstanceWords, kEngine);
  // (The sentence's words before the message, on its line or across the previous one.)
  bool loader_named = false;
  if (Has(s, "memory") && (Has(s, "from_pretrained") || Has(line.joined, "from_pretrained"))) {
    for (const std::string_view t : {line.text, std::string_view(line.joined)}) {
      const size_t at = t.find("out of memory");
      loader_named =
          loader_named || (at != std::string_view::npos && LoaderNamedBefore(t.substr(0, at)));
    }
  }
  if (LoadFailedWords(s) || LoadPhaseWords(line) || QuantizeRunWords(line) || loader_named) {
    line.Emit(EventKind::kLoadFailedWords, kEngine);
  }
  // A generation call in the pasted code, outside any traceback ("outputs = pipe(prompt,
  // max_new_tokens=...)", "model.generate(**inputs, max_new_tokens=512)"): the program was
  // written to generate after it loaded, which makes a card found full at a small request a
  // running one's more likely than one still being filled (only that guess reads it).
  if (RuntimeWords(line) ||
      (!line.after_frame && Has(s, "max_new_tokens="))) {
    line.Emit(EventKind::kRuntimeWords, kEngine);
  }
  if (CaptureWords(line)) line.Emit(EventKind::kCaptureWords, kEngine);
  MatchProgramCalls(line);
  // AutoAWQ loading a quantized checkpoint: from_quantized swaps each layer's linears for its
  // quantized modules under the bar "Replacing layers...:  40%|" (awq/models/base.py
  // _load_quantized_modules, 0.1.x-0.2.x), before the weights are read: the load.
  if (Has(s, "Replacing layers...:") && TqdmBar(line.text, "Replacing layers...:")) {
    line.Emit(EventKind::kLoadBegin, kEngine);
    return;
  }
  if (!Has(s, "oad") && !Has(s, "Time ") && !Has(s, "model parallel")) return;
  const std::string_view t = line.text;
  auto seconds_after = [&](std::string_view key) {
    const size_t at = t.find(key);
    if (at == std::string_view::npos) return false;
    size_t end = 0;
    return NumberAt(t, at + key.size(), &end) && t.substr(end, 8).find("sec") <= 2;
  };
  if (seconds_after("Loaded in ") || seconds_after("Loaded the model in ") ||
      seconds_after("Time to load model: ") || seconds_after("Time to load the model weights: ")) {
    line.Emit(EventKind::kWeightsLoaded, kEngine);
    return;
  }
  if (seconds_after("Compilation time: ") || Has(s, "Time for inference")) {
    line.Emit(EventKind::kServing, kEngine);
    return;
  }
  if (TextgenLoaded(t)) {
    line.Emit(EventKind::kWeightsLoaded, kEngine);
    return;
  }
  const bool lit = Has(s, "Loading model '") && Has(s, "' with {");
  const size_t dots = t.find("Loading model ...");
  const bool fast = dots != std::string_view::npos && t.size() - dots <= 18;
  const std::string_view textgen = TextgenLoading(t);
  if (lit || fast || !textgen.empty() || Has(s, "initializing model parallel with size")) {
    line.Emit(EventKind::kLoadBegin, kEngine);
  }
  // The model text-generation-webui loads, by its folder's name (which states its size and often
  // its quantization: "vicuna-13b-GPTQ-4bit-128g").
  if (!textgen.empty()) line.Emit(EventKind::kConfig, kEngine).text = std::string(textgen);
}

// A training loop's report of a step done, with its loss: nanoGPT's train.py "iter 0: loss
// 10.8765, time 1234.56ms, mfu -100.00%" and "step 0: train loss 10.8765, val loss 10.8819"
// (karpathy/nanoGPT, and the loops written after it), "Epoch 1 ... loss", "Step 10 ... loss";
// torchtune's recipes' bar "1|10|Loss: 0.9358" (recipes/*.py train: f"{curr_epoch + 1}|
// {self.global_step}|Loss: {loss_to_log}", 0.2-0.6). A step ran: the program is past its load.
// torchtitan's and the trainers written after it put the step after their logger's prefix, with a
// colon and padding: "[rank0]:[titan] 2025-01-01 10:00:00,000 - root - INFO - step:  1  loss:
// 12.2674  memory: 240.17GiB(95.31%)  tps: 531" (torchtitan/train.py, f"step: {step:2}  loss:
// ..."), so the word may also follow a space or a ']' and take a colon and spaces before its
// digits.
bool TrainingStepLine(std::string_view t) {
  const size_t b = t.find_first_not_of(' ');
  if (b == std::string_view::npos) return false;
  t.remove_prefix(b);
  const bool loss =
      t.find("loss") != std::string_view::npos || t.find("Loss") != std::string_view::npos;
  for (std::string_view word :
       {"iter "sv, "step "sv, "Step "sv, "Iter "sv, "Epoch "sv, "epoch "sv}) {
    if (t.substr(0, word.size()) != word || t.size() <= word.size() ||
        !std::isdigit(static_cast<unsigned char>(t[word.size()]))) {
      continue;
    }
    return loss;
  }
  // The same after other words on the line (the line ends of a paste lost: "tokens per
  // iteration will be: 491,520 step 0: train loss 10.9865, ..."): the word after a space, its
  // digits and a colon, the loss after them.
  for (std::string_view word : {" iter "sv, " step "sv, " Step "sv, " Iter "sv}) {
    for (size_t at = t.find(word); at != std::string_view::npos; at = t.find(word, at + 1)) {
      size_t k = at + word.size();
      const size_t digits = k;
      while (k < t.size() && std::isdigit(static_cast<unsigned char>(t[k]))) ++k;
      if (k == digits || k >= t.size() || t[k] != ':') continue;
      const std::string_view after = t.substr(k);
      if (after.find("loss") != std::string_view::npos ||
          after.find("Loss") != std::string_view::npos) {
        return true;
      }
    }
  }
  if (loss) {
    for (std::string_view word : {"step:"sv, "iter:"sv, "Step:"sv, "Iter:"sv}) {
      for (size_t at = t.find(word); at != std::string_view::npos; at = t.find(word, at + 1)) {
        if (at > 0 && t[at - 1] != ' ' && t[at - 1] != ']') continue;
        size_t k = at + word.size();
        while (k < t.size() && t[k] == ' ') ++k;
        if (k < t.size() && std::isdigit(static_cast<unsigned char>(t[k]))) return true;
      }
    }
  }
  // torchtune: digits '|' digits "|Loss: ", at the line's start or after a space.
  for (size_t at = t.find("|Loss: "); at != std::string_view::npos;
       at = t.find("|Loss: ", at + 1)) {
    size_t j = at;
    while (j > 0 && std::isdigit(static_cast<unsigned char>(t[j - 1]))) --j;
    if (j == at || j == 0 || t[j - 1] != '|') continue;
    size_t i = j - 1;
    while (i > 0 && std::isdigit(static_cast<unsigned char>(t[i - 1]))) --i;
    if (i < j - 1 && (i == 0 || t[i - 1] == ' ')) return true;
  }
  return false;
}

// The cache's shape as the reference scripts take it: Meta's llama example.py (LLaMA 1) and
// example_text_completion.py / example_chat_completion.py (Llama 2, Llama 3), run through
// fire, main(..., max_seq_len, max_batch_size) passed on to Llama.build, which sizes every
// Attention's cache_k / cache_v with them (llama-int8's example.py the same): "--max_seq_len
// 512 --max_batch_size 6". Read for the static cache's fix (Fixes below).
void MatchCacheFlags(const Line& line) {
  const LineView s = line.view();
  if (Has(s, "--max_batch_size") || Has(s, "--max_seq_len")) {
    auto& e = line.Emit(EventKind::kConfig, kEngine);
    e.text.clear();  // no model's name
    Set(e, Num::kMaxNumSeqs, NumberAfter(s, "--max_batch_size"));
    Set(e, Num::kMaxModelLen, NumberAfter(s, "--max_seq_len"));
  }
}

// The command line launching one of Meta's reference scripts: "torchrun --nproc_per_node MP
// <script>.py --ckpt_dir DIR --tokenizer_path FILE ..." (fire's flags). LLaMA 1's example.py
// (main -> load), Llama 2/3's example_text_completion.py and example_chat_completion.py and Code
// Llama's example_completion.py, example_instructions.py, example_infilling.py (main ->
// Llama.build) build the model (weights and every Attention's cache_k / cache_v) before anything
// else and print "Loaded in N seconds" after it (meta-llama/llama example.py at the v1 release,
// llama/generation.py of Llama 2): the launch begins the load.
void MatchReferenceLaunch(const Line& line) {
  const LineView s = line.view();
  if (!Has(s, "--ckpt_dir") || !Has(s, "--tokenizer_path") || !Has(s, ".py")) return;
  const std::string_view t = line.text;
  const size_t py = t.find(".py");
  size_t name = py;
  while (name > 0 && t[name - 1] != ' ' && t[name - 1] != '/' && t[name - 1] != '`') --name;
  if (t.substr(name, py - name).substr(0, 7) != "example") return;
  line.Emit(EventKind::kLoadBegin, kEngine);
}

// A training loop's progress past its first step: a tqdm bar described as training ("Training:
// 18%|█▊  | 1935/10920 [17:45<1:13:32, 2.04it/s, loss=0.081]", "Train:", "train:") with a
// done count above 0, any tqdm bar whose postfix reports a loss ("loss=0.081": a step was
// taken), or transformers' Trainer logging a step's metrics ("{'loss': 0.81, 'grad_norm': ...").
// A tqdm bar (its "%|" at `bar`) whose description names training steps or epochs: verl's
// "Training Progress:  3%|" (verl/trainer/ppo/ray_trainer.py fit, 0.3+), EasyR1's "Running step
// 0:   7%|" (its fork of that trainer), the diffusers training examples' "Steps:  40%|"
// (examples/*/train_*.py, desc="Steps"), Lightning's "Epoch 2:  45%|" (TQDMProgressBar's
// training bar). The description (with an optional step or epoch number) ends right before the
// percentage and starts the line, or follows a Ray worker's prefix ("(pid=22967) ", "(TaskRunner
// pid=1, ip=10.0.0.2) ") or a logger's "] ", also where a paste ran lines together.
bool StepsBar(std::string_view t, size_t bar) {
  size_t pct = bar;
  while (pct > 0 && (std::isdigit(static_cast<unsigned char>(t[pct - 1])) || t[pct - 1] == '.')) {
    --pct;
  }
  if (pct == bar) return false;
  std::string_view desc = t.substr(0, pct);
  while (!desc.empty() && desc.back() == ' ') desc.remove_suffix(1);
  if (desc.empty() || desc.back() != ':') return false;
  desc.remove_suffix(1);
  while (!desc.empty() && std::isdigit(static_cast<unsigned char>(desc.back()))) {
    desc.remove_suffix(1);
  }
  while (!desc.empty() && desc.back() == ' ') desc.remove_suffix(1);
  for (std::string_view word : {"Training Progress"sv, "Running step"sv, "Steps"sv, "Epoch"sv}) {
    if (!desc.ends_with(word)) continue;
    std::string_view before = desc.substr(0, desc.size() - word.size());
    const size_t lead = before.find_first_not_of(" `");
    if (lead == std::string_view::npos || before.ends_with("] ")) return true;
    if (!before.ends_with(") ")) continue;
    const size_t open = before.rfind('(');
    if (open != std::string_view::npos &&
        before.substr(open).find("pid=") != std::string_view::npos) {
      return true;
    }
  }
  return false;
}

bool TrainingProgress(const LineView& s, std::string_view t) {
  if (Has(s, "{'loss': ")) return t.find_first_not_of(" `") == t.find("{'loss': ");
  const size_t bar = t.find("%|");
  if (bar == std::string_view::npos) return false;
  if (t.find("loss=", bar) != std::string_view::npos) return true;
  bool described = false;
  for (std::string_view desc : {"Training:"sv, "Train:"sv, "train:"sv}) {
    described = described || TqdmBar(t, desc);
  }
  if (!described && !StepsBar(t, bar)) return false;
  const size_t close = t.find('|', bar + 2);
  if (close == std::string_view::npos) return false;
  const size_t count = t.find_first_not_of(' ', close + 1);
  if (count == std::string_view::npos) return false;
  size_t end = 0;
  const auto done = NumberAt(t, count, &end);
  return done && *done > 0 && t.substr(end, 1) == "/";
}

// A command line that starts a training run: a launcher (python, torchrun, accelerate launch,
// deepspeed, torchtune's tune run, litgpt, a shell running a script) with a training script or
// a training loop's flags: nanoGPT-style and litgpt's --max_iters and --micro_batch_size,
// transformers' TrainingArguments (--num_train_epochs, --per_device_train_batch_size,
// --gradient_accumulation_steps, --learning_rate, --gradient_checkpointing),
// --checkpoint_activations, or a script named for training (train.py, train.sh, finetune,
// pretrain, sft). Its steps hold gradients, optimizer states and activations beside the weights
// (facts.cc reads a full card with no phase's evidence so).
// So does a line that names a training loop's call in code or words: transformers' and TRL's
// trainers (SFTTrainer, DPOTrainer, ...; `trainer.train(`), "the .train() method".
void MatchTrainingLaunch(const Line& line) {
  const LineView s = line.view();
  // DeepSpeed building its ZeRO optimizer as the engine is set up (deepspeed/runtime/engine.py
  // _configure_zero_optimizer: "Creating torch.bfloat16 ZeRO stage 2 optimizer", 0.5+; then
  // stage_1_and_2.py / stage3.py allocate the fp32 partitions and the optimizer states): the
  // model's setup, before a step; a step's progress after it is the furthest phase.
  if (Has(s, "Creating ") && Has(s, " ZeRO stage ") && Has(s, " optimizer")) {
    line.Emit(EventKind::kLoadBegin, kEngine);
  }
  if (Has(s, "%|") || Has(s, "{'loss': ")) {
    if (TrainingProgress(s, line.text)) {
      auto& e = line.Emit(EventKind::kConfig, kEngine);
      e.text.clear();
      Set(e, Num::kTrainingLaunch, 2);  // 2: steps were taken (facts.cc)
      return;
    }
  }
  if (Has(s, "trainer.train(") || Has(s, ".train() method") || Has(s, "SFTTrainer") ||
      Has(s, "DPOTrainer") || Has(s, "GRPOTrainer") || Has(s, "PPOTrainer") ||
      Has(s, "ORPOTrainer") || Has(s, "KTOTrainer") || Has(s, "Seq2SeqTrainer")) {
    auto& e = line.Emit(EventKind::kConfig, kEngine);
    e.text.clear();
    Set(e, Num::kTrainingLaunch, 1);
    return;
  }
  // The trainers' own command-line tools count as launchers: LLaMA-Factory's "llamafactory-cli
  // train" (0.7+), ms-swift's "swift sft" / "swift pt" / "swift rlhf", axolotl's "axolotl train"
  // (0.8+).
  const bool launcher = Has(s, "python") || Has(s, "torchrun") || Has(s, "accelerate launch") ||
                        Has(s, "deepspeed ") || Has(s, "tune run ") || Has(s, "litgpt ") ||
                        Has(s, "bash ") || Has(s, "sh ") || Has(s, "llamafactory-cli train") ||
                        Has(s, "swift sft") || Has(s, "swift pt ") || Has(s, "swift rlhf") ||
                        Has(s, "axolotl train");
  if (!launcher) return;
  const bool training =
      Has(s, "--max_iters") || Has(s, "--micro_batch_size") || Has(s, "--num_train_epochs") ||
      Has(s, "--per_device_train_batch_size") || Has(s, "--gradient_accumulation_steps") ||
      Has(s, "--learning_rate") || Has(s, "--gradient_checkpointing") ||
      Has(s, "--checkpoint_activations") || Has(s, "train.py") || Has(s, "train.sh") ||
      Has(s, "finetune") ||
      Has(s, "pretrain") || Has(s, "sft.py") || Has(s, "_sft ") || Has(s, " sft ") ||
      Has(s, "llamafactory-cli train") || Has(s, "swift rlhf") || Has(s, "axolotl train");
  if (!training) return;
  auto& e = line.Emit(EventKind::kConfig, kEngine);
  e.text.clear();  // no model's name
  Set(e, Num::kTrainingLaunch, 1);
}

// A command line running LLaMA-Factory's export: "python src/export_model.py --model_name_or_path
// ... --adapter_name_or_path ... --export_dir ..." (src/export_model.py, 0.5-0.7) or
// "llamafactory-cli export ..." (0.7+), both tuner.py export_model: it loads the base model,
// merges the LoRA adapters into it (peft merge_and_unload) and saves the result, and never
// generates or trains: the launch begins the load.
void MatchExportLaunch(const Line& line) {
  const LineView s = line.view();
  if (Has(s, "llamafactory-cli export") ||
      (Has(s, "export_model.py") && Has(s, "--model_name_or_path"))) {
    line.Emit(EventKind::kLoadBegin, kEngine);
  }
}

// A shell's report that the program it ran was ended by SIGKILL, with no error of the program's
// own: bash's "Killed" (its strsignal text, alone on the line for a foreground job, or as a job's
// status: "[1]+  Killed    python x.py"), zsh's "zsh: killed     python x.py" and, with
// job control, "[1]    2334 killed     python x.py" or "[1]  + 2334 killed     python x.py" (zsh
// jobs.c). The kernel's OOM killer is what usually sends a process SIGKILL unasked.
bool ShellJobKilled(std::string_view t) {
  // Quoted in a sentence ('the error message is "... 1.39s/it]Killed."'): the quote and the
  // sentence's full stop are the poster's.
  while (!t.empty() && (t.back() == ' ' || t.back() == '\r' || t.back() == '.' ||
                        t.back() == '"' || t.back() == '\'' || t.back() == '`')) {
    t.remove_suffix(1);
  }
  size_t b = t.find_first_not_of(' ');
  if (b == std::string_view::npos) return false;
  t.remove_prefix(b);
  if (t == "Killed" || t.substr(0, 12) == "zsh: killed ") return true;
  // After a progress bar that ended without a newline ("... 20.31s/it]Killed").
  if (t.size() > 7 && t.substr(t.size() - 7) == "]Killed") return true;
  // A progress bar cut by "^C" with no error after it ("Loading checkpoint shards:  62% 5/8
  // [00:43<00:26,  8.83s/it]^C"): a notebook's shell cell (Colab's "!python ...") whose process
  // the runtime killed for memory prints the terminal's ^C there. A user's own Ctrl-C prints the
  // same, but a run posted as a failure that stopped mid-bar with no error of its own is read as
  // that kill (the rules then place it by the bar: the load, host memory).
  if (t.size() > 3 && t.substr(t.size() - 3) == "]^C" &&
      (Has(t, "s/it]") || Has(t, "it/s]") || Has(t, "?it/s]"))) {
    return true;
  }
  if (t.empty() || t[0] != '[') return false;
  size_t i = 1;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
  if (i == 1 || i >= t.size() || t[i] != ']') return false;
  ++i;
  auto spaces = [&] {
    const size_t from = i;
    while (i < t.size() && t[i] == ' ') ++i;
    return i > from;
  };
  if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;  // bash: "[1]+"
  if (!spaces()) return false;
  if (i < t.size() && (t[i] == '+' || t[i] == '-')) {  // zsh: "[1]  + 2334"
    ++i;
    if (!spaces()) return false;
  }
  if (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) {  // zsh's pid
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
    if (!spaces()) return false;
  }
  const std::string_view word = t.substr(i, 6);
  if (word != "killed" && word != "Killed") return false;
  i += 6;
  return spaces() && i < t.size();
}

// A shell or container runtime reporting its program ended by SIGKILL, which the kernel's OOM
// killer sends: bash's "Killed" (strsignal(SIGKILL); in a script "run.sh: line 3: 1234 Killed
// python run.py"), zsh's "zsh: killed     python run.py", fish's "terminated by signal SIGKILL",
// Docker Compose's "vllm-1 exited with code 137" (128 + SIGKILL); also the job reports above.
bool ShellKilled(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
  // A line pasted as Markdown inline code ("`Killed`"), also after a collector's prefix.
  const bool inline_code = !s.empty() && s.back() == '`';
  if (inline_code) s.remove_suffix(1);
  // Exit code 137 as the runtimes write it: Docker Compose's "exited with code 137", a job
  // runner's or notebook platform's "exited with exit code 137 (SIGKILL)", Python's
  // subprocess "returned non-zero exit status 137", Kubernetes' "exitCode: 137".
  bool compose = false;
  for (std::string_view key : {"exited with code 137"sv, "exit code 137"sv, "exit code: 137"sv,
                               "exit status 137"sv, "exitCode: 137"sv}) {
    const size_t code = s.find(key);
    compose = compose || (code != std::string_view::npos &&
                          (code + key.size() == s.size() ||
                           !std::isdigit(static_cast<unsigned char>(s[code + key.size()]))));
  }
  if (ShellJobKilled(s) || Has(s, "zsh: killed ") || Has(s, "terminated by signal SIGKILL") ||
      compose)
    return true;
  // bash's job report inside a longer line (a paste that lost its line ends joins the session
  // into one): "[2]+  Killed                  python3", its job mark and padding as bash writes
  // them (jobs.c pretty_print_job), which prose does not.
  for (std::string_view job : {"]+  Killed "sv, "]-  Killed "sv}) {
    for (size_t at = s.find(job); at != std::string_view::npos; at = s.find(job, at + 1)) {
      size_t d = at;
      while (d > 0 && std::isdigit(static_cast<unsigned char>(s[d - 1]))) --d;
      if (d < at && d > 0 && s[d - 1] == '[') return true;
    }
  }
  // (Also the shell's notice as a post retyped it, in lower case, alone.)
  size_t killed = s.rfind("Killed");
  const bool lower = killed == std::string_view::npos;
  if (lower) killed = s.rfind("killed");
  if (killed == std::string_view::npos) return false;
  // "Killed" alone (after a collector's prefix: "name | ", "host: ", kubectl's "[pod/...] "), or
  // in a script's job report.
  std::string_view before = s.substr(0, killed);
  if (inline_code && before.ends_with("`")) before.remove_suffix(1);
  // (Or right after a progress bar the kill left unfinished, "Loading checkpoint shards:   0%|
  // | 0/7 [00:00<?, ?it/s]Killed": tqdm redraws its line without ending it.)
  const std::string_view bar = Trimmed(before);
  const bool after_bar = Has(bar, "%") && (bar.ends_with("]") || bar.ends_with("%") ||
                                           bar.ends_with("%|") || bar.ends_with("|"));
  const bool alone = killed + 6 == s.size() &&
                     (before.empty() || before.ends_with("| ") || before.ends_with(": ") ||
                      before.ends_with("] ") || after_bar);
  const bool job = Has(before, ": line ") && before.ends_with(" ") &&
                   (killed + 6 == s.size() || s[killed + 6] == ' ');
  // (Or after a progress line's ellipsis, "Loading model ... Killed", where a paste that lost its
  // line ends put the shell's word after the program's last words.)
  const bool after_ellipsis =
      !lower && (bar.ends_with("...") || bar.ends_with("\xe2\x80\xa6")) &&
      (killed + 6 == s.size() || s[killed + 6] == ' ');
  return alone || (job && !lower) || after_ellipsis;
}

// A sentence saying the process was killed ("with message `killed`", "it gets killed", "the
// process was killed"), not a traceback's source line or a log record's: see its caller.
bool ProseKilled(const Line& line) {
  const LineView s = line.view();
  // (被, the passive's mark of the Chinese forms: "程序被kill掉", "进程被杀".)
  if (!Has(s, "illed") && !Has(s, "ILLED") && !Has(s, "\xe8\xa2\xab")) return false;
  // Also across a reflow's break ("... with message" + "`killed`."): with the line before.
  const std::string_view t =
      line.joined.empty() ? std::string_view(line.text) : std::string_view(line.joined);
  if (t.size() > 2048 || t.find("File \"") != std::string_view::npos) return false;
  const std::string lower = ProseLower(t, "*`\"'");
  // The word alone, quoted ("`killed`." on a line of its own, the end of a sentence a reflow
  // broke before it).
  std::string_view alone = lower;
  while (!alone.empty() && (alone.back() == ' ' || alone.back() == '.' || alone.back() == '\r')) {
    alone.remove_suffix(1);
  }
  while (!alone.empty() && alone.front() == ' ') alone.remove_prefix(1);
  if (alone == "killed") return true;
  for (std::string_view words :
       {"message killed"sv, "gets killed"sv, "got killed"sv, "get killed"sv, "getting killed"sv,
        "was killed"sv, "were killed"sv, "process killed"sv, "says killed"sv, "shows killed"sv,
        "prints killed"sv, "printed killed"sv, "just killed"sv, "ends with killed"sv,
        // Chinese: "was killed" (被kill掉, 被 killed, 被杀), "only killed" (只有killed), "is
        // killed" (也是killed), "shows killed" (提示killed, 显示killed).
        "\xe8\xa2\xabkill"sv, "\xe8\xa2\xab kill"sv, "\xe8\xa2\xab\xe6\x9d\x80"sv,
        "\xe5\x8f\xaa\xe6\x9c\x89killed"sv, "\xe6\x98\xafkilled"sv,
        "\xe6\x8f\x90\xe7\xa4\xbakilled"sv, "\xe6\x98\xbe\xe7\xa4\xbakilled"sv}) {
    const size_t at = lower.find(words);
    // Not "was killed by me", "got killed with Ctrl-C" (a person's kill, not the kernel's), nor
    // a question ("Process was Killed?").
    if (at != std::string::npos && lower.find("ctrl", at) == std::string::npos &&
        lower.find("by me", at) == std::string::npos &&
        lower.find("manually", at) == std::string::npos &&
        lower.find('?', at) == std::string::npos) {
      return true;
    }
  }
  return false;
}

// PyTorch's out-of-memory reports outside the caching allocator's message: THC's check failing
// with cudaErrorMemoryAllocation, "THCudaCheck FAIL file=.../THCStorage.cu line=58 error=2 : out
// of memory" (torch/lib/THC/THCGeneral.c __THCudaCheck, PyTorch 0.2-1.x; error 2 is
// cudaErrorMemoryAllocation) and the exception it raises, "RuntimeError: cuda runtime error (2) :
// out of memory at .../THCStorage.cu:58" (THCudaCheck -> THError, 0.3-1.0); and fairseq's trainer
// catching it, "| WARNING: ran out of memory, skipping batch" (fairseq/trainer.py train_step, 0.x;
// "on GPU #N" in its multi-GPU trainer), "attempting to recover from OOM in forward/backward
// pass" (0.9+).
bool OldCudaOom(const LineView& s) {
  return (Has(s, "THCudaCheck FAIL") && Has(s, "error=2 : out of memory")) ||
         Has(s, "cuda runtime error (2) : out of memory") ||
         (Has(s, "ran out of memory") && Has(s, "skipping batch")) ||
         Has(s, "attempting to recover from OOM");
}

// PyTorch's CPU allocator failing (c10/core/impl/alloc_cpu.cpp alloc_cpu, 1.x-2.x): "[enforce
// fail at alloc_cpu.cpp:83] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to
// allocate 536870912 bytes. Error code 12 (Cannot allocate memory)" (posix_memalign) and, on
// Windows, "DefaultCPUAllocator: not enough memory: you tried to allocate N bytes." (its size
// in bytes, no unit); the OS refusing memory to Python or Rust, "OSError: [Errno 12] Cannot
// allocate memory" (a fork, an mmap) and safetensors' "Cannot allocate memory (os error 12)":
// host memory, the checkpoint read into RAM or a tensor built on the CPU.
// Shared memory (/dev/shm, a container's 64 MB by default) exhausted: PyTorch's DataLoader
// workers, which pass batches through it ("DataLoader worker (pid N) is killed by signal: Bus
// error. It is possible that dataloader's workers are out of shared memory. Please try to raise
// your shared memory limit.", torch/utils/data/_utils/signal_handling.py; "ERROR: Unexpected bus
// error encountered in worker. This might be caused by insufficient shared memory (shm).",
// torch/csrc/DataLoader.cpp), and NCCL's intra-node buffers ("Error while creating shared memory
// segment /dev/shm/nccl-X (size N)", "failed to extend /dev/shm/nccl-X to N bytes",
// src/misc/shmutils.cc, 2.x). The event's text keeps those words (facts.cc SharedMemory).
void MatchSharedMemory(const Line& line) {
  const LineView s = line.view();
  if (!Has(s, "shared memory") && !Has(s, "/dev/shm")) return;
  if (Has(s, "workers are out of shared memory") || Has(s, "insufficient shared memory") ||
      Has(s, "Error while creating shared memory segment") ||
      (Has(s, "failed to extend /dev/shm/") && Has(s, "bytes"))) {
    line.Emit(EventKind::kHostBufferFail, kEngine).values[Num::kHost] = 1;
  }
}

// The text on which `says` holds: the line's own, else the previous line and this one joined as
// a terminal or a post's editor cut them mid-word (Line::joined_tight: "DefaultCPUAllocator:
// can" + "'t allocate memory: you") or a reflow broke them at a space (Line::joined:
// "DefaultCPUAllocator: can't allocate" + "memory: you") where the previous line alone did not
// say it, so the piece that completes a message reads it once. `says` takes a LineView (its byte
// pairs rule most lines out without a search) or a plain view.
template <typename Says>
std::optional<std::string_view> SaidAcrossCut(const Line& line, Says says) {
  const LineView s = line.view();
  if (says(s)) return std::string_view(s);
  // (Cut mid-word as a terminal wraps, or at a space as a paste reflows.)
  for (const LineView* joined : {&line.joined_tight, &line.joined}) {
    if (joined->size() <= line.text.size() || !says(*joined)) continue;
    const std::string_view before =
        std::string_view(*joined).substr(0, joined->size() - line.text.size());
    if (says(before)) return std::nullopt;
    return std::string_view(*joined);
  }
  return std::nullopt;
}

void MatchHostAllocFail(const Line& line) {
  const LineView s = line.view();
  MatchSharedMemory(line);
  // (Also its Windows words quoted without the allocator's name: "not enough memory: you tried
  // to allocate 283115520 bytes".)
  const auto cpu_allocator = SaidAcrossCut(line, [](const auto& t) {
    return (Has(t, "DefaultCPUAllocator") &&
            (Has(t, "not enough memory") || Has(t, "can't allocate memory"))) ||
           Has(t, "not enough memory: you tried to allocate");
  });
  // PyTorch's file mapping (aten/src/ATen/MapAllocator.cpp, 1.x-2.x: "unable to mmap N bytes
  // from file <F>: Cannot allocate memory (12)"), which torch.load(mmap=True) and shared CPU
  // storages use: the host refused the mapping (ENOMEM: address space or overcommit limits).
  const auto map = SaidAcrossCut(line, [](const auto& t) {
    return Has(t, "unable to mmap ") && Has(t, "Cannot allocate memory (12");
  });
  // Windows refusing a commit past its limit (ERROR_COMMIT_LIMIT, 1455: "OSError: [WinError
  // 1455] The paging file is too small for this operation to complete"): RAM and the page file
  // together exhausted, as torch's DLLs load in each spawned DataLoader worker or a checkpoint is
  // read into host memory.
  const bool commit_limit = Has(s, "paging file is too small") || Has(s, "[WinError 1455]");
  if (!cpu_allocator && !map && !commit_limit && !Has(s, "[Errno 12] Cannot allocate memory") &&
      !Has(s, "Cannot allocate memory (os error 12)")) {
    return;
  }
  auto& e = line.Emit(EventKind::kHostBufferFail, kEngine);
  if (cpu_allocator) {
    Set(e, Num::kRequestedBytes, NumberAfter(*cpu_allocator, "you tried to allocate "));
  }
  if (map) Set(e, Num::kRequestedBytes, NumberAfter(*map, "unable to mmap "));
}

// The device's own out-of-memory errors, outside the caching allocator's message: ROCm builds'
// C10_CUDA_CHECK, "HIP error: out of memory" (hipified c10/cuda/CUDAException.h, "CUDA" read
// "HIP"); the driver API's check, "CUDA driver error: out of memory" (C10_CUDA_DRIVER_CHECK,
// c10/cuda/driver_api.h, 2.1+: expandable segments' cuMemCreate, IPC); cuDNN failing to allocate
// its workspace or state, "cuDNN error: CUDNN_STATUS_ALLOC_FAILED" (aten/src/ATen/cudnn/
// Exceptions.h AT_CUDNN_CHECK; cuDNN 9: CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED),
// bitsandbytes' CUDA checks, and the other CUDA libraries' allocation statuses (cuFFT's
// CUFFT_ALLOC_FAILED in torch.stft and audio front ends, cuSOLVER's, cuSPARSE's); cuBLAS
// failing to create its handle at a first matrix multiply,
// "CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`" (aten/src/ATen/cuda/
// CublasHandlePool.cpp: cublasCreate allocates the handle's device memory, and on a card with
// none left returns NOT_INITIALIZED); Intel GPUs' Level Zero and Unified Runtime (PyTorch's XPU
// backend, IPEX, vLLM and llama.cpp's SYCL builds): "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
// "UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"; XLA's allocator (torch_xla, JAX, vLLM on TPU):
// "RESOURCE_EXHAUSTED: Out of memory while trying to allocate N bytes", "RESOURCE_EXHAUSTED:
// Error allocating device buffer: Attempting to allocate X. That was not possible."; a CUDA
// program's own check, "CUDA Error: out of memory at FILE:LINE" (vLLM's sleep-mode allocator,
// csrc/cumem_allocator.cpp, raising it from create_and_map as its pages are mapped: the KV cache
// at start-up, the weights and cache again at wake_up), and ggml's ROCm and MUSA builds'
// "ROCm error: out of memory", "MUSA error: out of memory" (ggml-cuda's ggml_cuda_error names
// its backend).
// `words` parted between the previous line and this one (Line::joined holds them whole, and
// their end falls on this line).
bool CutAcrossLines(const Line& line, std::string_view words) {
  const std::string_view joined = line.joined;
  if (joined.size() <= line.text.size()) return false;
  const size_t at = joined.rfind(words);
  return at != std::string_view::npos && at < joined.size() - line.text.size() &&
         at + words.size() > joined.size() - line.text.size();
}

bool OtherDeviceOom(const LineView& s) {
  return Has(s, "HIP error: out of memory") || Has(s, "CUDA driver error: out of memory") ||
         Has(s, "CUDA Error: out of memory") || Has(s, "ROCm error: out of memory") ||
         Has(s, "MUSA error: out of memory") ||
         Has(s, "CUDNN_STATUS_ALLOC_FAILED") || Has(s, "CUFFT_ALLOC_FAILED") ||
         // cuDNN 9's hierarchical status for the same (cudnn_graph.h).
         Has(s, "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED") ||
         // bitsandbytes' own CUDA checks: "Error out of memory at line 384 in file
         // /src/csrc/pythonInterface.cpp" (CUDA_CHECK_RETURN around cudaMallocManaged for a paged
         // optimizer's state, csrc/ops.cuh, 0.39-0.49; BNB_CHECK_RETURN 0.50+) and "cuda API
         // failed with status 2: out of memory" (its kernel wrappers' check).
         (Has(s, "Error out of memory at line") && Has(s, " in file ")) ||
         (Has(s, "API failed with status") && Has(s, "out of memory")) ||
         Has(s, "CUSOLVER_STATUS_ALLOC_FAILED") || Has(s, "CUSPARSE_STATUS_ALLOC_FAILED") ||
         (Has(s, "CUBLAS_STATUS_NOT_INITIALIZED") && Has(s, "cublasCreate")) ||
         Has(s, "_RESULT_ERROR_OUT_OF_DEVICE_MEMORY") ||
         (Has(s, "RESOURCE_EXHAUSTED") &&
          (Has(s, "Out of memory") || Has(s, "Error allocating device buffer"))) ||
         // The driver API's and HIP's names for the same status (cuda.h CUDA_ERROR_OUT_OF_MEMORY,
         // hip_runtime_api.h hipErrorOutOfMemory), as CuPy, Numba, cuda-python and ROCm's
         // libraries print them.
         Has(s, "CUDA_ERROR_OUT_OF_MEMORY") || Has(s, "hipErrorOutOfMemory") ||
         // The NVIDIA kernel driver failing a memory allocation for the GPU, in the kernel log
         // (dmesg: "NVRM: nvCheckOkFailedNoLog: Check failed: Out of memory [NV_ERR_NO_MEMORY]
         // ... returned from _memdescAllocInternal"): the process sees CUDA's out-of-memory; on a
         // unified-memory part (GB10, Jetson) the memory it draws from is the host's.
         Has(s, "[NV_ERR_NO_MEMORY]");
}

// The MPS allocator refusing one buffer above Metal's largest ("Invalid buffer size: 36.00 GB",
// aten/src/ATen/mps/MPSAllocator.mm alloc_buffer_block, the device's maxBufferLength, 2.0+): one
// allocation larger than the device gives, the request in the message.
void MatchMpsBufferSize(const Line& line) {
  const LineView s = line.view();
  if (!Has(s, "Invalid buffer size: ")) return;
  const auto bytes = BytesAfter(s, "Invalid buffer size: ");
  if (bytes) Set(line.Emit(EventKind::kCudaOom, kEngine), Num::kRequestedBytes, bytes);
}

// A quantizer's own line saying the conversion finished: llm-compressor's "Compression lifecycle
// finalized for N modifiers" (llmcompressor/core/lifecycle.py finalize, 0.3+), auto-round's
// "quantization tuning time S" (auto_round/autoround.py quantize 0.4, compressors/base.py 0.5+),
// AutoGPTQ's and GPTQModel's "Model packed." (auto_gptq/modeling/_utils.py pack_model 0.4-0.7,
// gptqmodel/utils/model.py pack_model). A log that ends after it ran to the end of the
// quantization: the run's end, not a silent kill in its progress. (Also where a paste reflowed
// the line inside those words.)
bool QuantizerFinished(const Line& line) {
  return !Whole(line, "Compression lifecycle finalized for").empty() ||
         !Whole(line, "quantization tuning time ").empty() || !Whole(line, "Model packed.").empty();
}

// A diffusion pipeline in the log: diffusers' package (its paths, "from diffusers import"), the
// pipelines' call argument num_inference_steps, its VAE and UNet classes (AutoencoderKL and its
// video variants, UNet2DConditionModel) and pipeline base class (DiffusionPipeline), a VAE's
// decode or encode call.
void MatchDiffusionRun(const Line& line) {
  const LineView s = line.view();
  if (Has(s, "diffusers") || Has(s, "num_inference_steps") || Has(s, "AutoencoderKL") ||
      Has(s, "UNet2DConditionModel") || Has(s, "UNet3DConditionModel") ||
      Has(s, "DiffusionPipeline") || Has(s, "vae.decode(") || Has(s, "vae.encode(")) {
    auto& e = line.Emit(EventKind::kConfig, kEngine);
    e.text.clear();  // no model's name
    Set(e, Num::kDiffusionRun, 1);
  }
  // A pipeline's call is what passes num_inference_steps=: the pipeline runs (also where the
  // line is a frame's source or a paste ran lines together).
  if (Has(s, "num_inference_steps=")) line.Emit(EventKind::kRunCall, kEngine);
}

void Match(const Line& line) {
  const LineView s = line.view();
  MatchReferenceLaunch(line);
  MatchDiffusionRun(line);
  if (Has(s, "oss") && TrainingStepLine(line.text)) line.Emit(EventKind::kServing, kEngine);
  MatchExportLaunch(line);
  MatchTrainingLaunch(line);
  MatchCacheFlags(line);
  // A quantization run's setup or progress, carried as online_quantization (the weights
  // converted while loading), the key SGLang's --quantization on a 16-bit checkpoint also sets.
  // Its progress is also a milestone: the run reached the conversion (the load stage), so a log
  // that stops there with no error line is diagnosed where it stopped.
  const bool progress = QuantizerProgress(line);
  const bool setup = !progress && QuantizerSetup(line);
  const Tool tool = ToolOfLine(line, progress, setup);
  if (progress || setup || tool) {
    LogEvent& e = line.Emit(EventKind::kConfig, kEngine);
    if (progress || setup) Set(e, Num::kOnlineQuantization, 1);
    if (tool) Set(e, Num::kQuantizerTool, tool);
  }
  if (progress) {
    LogEvent& e = line.Emit(EventKind::kLoadBegin, kEngine);
    Set(e, Num::kOnlineQuantization, 1);
    if (int layer = ProgressLayer(line.text)) Set(e, Num::kQuantizerLayer, layer);
    if (ModelOptExportLine(s)) Set(e, Num::kQuantizedExport, 1);
  }
  if (QuantizerFinished(line)) {
    Set(line.Emit(EventKind::kServing, kEngine), Num::kOnlineQuantization, 1);
  }
  // llm-compressor's sequential pipeline re-raises a layer's out-of-memory with its own message
  // (pipelines/sequential/helpers.py handle_sequential_oom, 0.5+; its advice, a smaller
  // sequential target and, from 0.12, max_seq_length / num_calibration_samples, is the
  // calibration pass's): that pass as a frame, where the excerpt holds the message alone.
  if (Has(s, "Sequential pipeline ran out of memory")) {
    auto& e = line.Emit(EventKind::kFrame, kEngine);
    e.text = "handle_sequential_oom (llm-compressor's message)";
    e.values[Num::kPathIsQuantizer] = 2;
  }
  // ExLlama's autosplit loader running out of the memory its split allows for the model and its
  // cache, which it places together: exllamav2's "Insufficient VRAM for model and cache"
  // (exllamav2/model.py load_autosplit_gen) and exllamav3's "Insufficient VRAM in split for model
  // and cache" (exllamav3's split planner, raised before or while the modules are loaded; TabbyAPI
  // prints it as the load's error). The split as a frame of the KV stage (facts.cc): the loader
  // places each module with its slice of the cache, sized for every token of the cache's length,
  // and the message is its answer to the two together, not to a module's weights (a CUDA error
  // under load_autosplit_gen is those); its fixes are ExLlama's (a smaller cache, a quantized
  // cache, a larger split, fewer bits).
  // ExLlama's own CUDA check on its extension's calls: exllamav2's cuda_check -> gpu_assert prints
  // "CUDA error: <cudaGetErrorString> <file> <line>" (exllamav2_ext/cuda/util.cuh), exllamav3's
  // "GPU assert: out of memory exllamav3_ext/graph.cu 51" (the corpus's TabbyAPI log). In its
  // graph.cu, where exllamav3 captures a decode batch's CUDA graph the first time a batch size
  // is seen, the failure is that capture.
  if (Has(s, "GPU assert: out of memory")) {
    line.Emit(EventKind::kCudaOom, kEngine);
    if (Has(s, "graph.cu")) {
      line.Emit(EventKind::kFrame, kEngine).text = "capture (exllamav3's graph.cu)";
    }
  }
  // AUTOMATIC1111's split cross-attention checking the free memory before it slices the score
  // matrix, "RuntimeError: Not enough memory, use lower resolution (max approx. 1152x1152).
  // Need: 1.9GB free, Have:1.2GB free" (modules/sd_hijack_optimizations.py
  // split_cross_attention_forward, 2022-2024, its "GB" 1024^3 bytes): a generation's attention,
  // the image too large.
  if (Has(s, "Not enough memory, use lower resolution")) {
    auto& e = line.Emit(EventKind::kCudaOom, kEngine);
    if (const auto need = NumberAfter(s, "Need:")) {
      e.values[Num::kRequestedBytes] = *need * core::kGiBf;
    }
  }
  if (!WholeBoth(line, "Insufficient VRAM", "for model and cache").empty()) {
    line.Emit(EventKind::kCudaOom, kEngine);
    line.Emit(EventKind::kFrame, kEngine).text = "split_for_model_and_cache (ExLlama's split)";
  }
  // A milestone on the out-of-memory's own line came before it: a paste that lost its line ends
  // puts the whole log on one line (the milestones' own words are never in the message).
  // (The pairs' test first: most lines hold neither.)
  const bool oomish = line.text.size() > kJoinedPrefix &&
                      (Has(s, "OutOfMemoryError") || Has(s, "out of memory"));
  const bool milestone_first =
      oomish && std::min(line.text.find("OutOfMemoryError"), line.text.find("out of memory")) >
                    kJoinedPrefix;
  if (milestone_first) MatchMilestone(line);
  // KoboldAI's API answering a generation request that ran out of memory: aiserver.py's
  // api_catch_out_of_memory_errors wraps the API's endpoints and raises KoboldOutOfMemoryError
  // ("KoboldAI ran out of memory: " + PyTorch's message, type "out_of_memory.gpu.cuda", the 507
  // response of api_out_of_memory_response, 1.19+): the model was loaded and serving. Front ends
  // (SillyTavern, TavernAI) show that JSON as the error.
  if (oomish && Has(s, "KoboldAI ran out of memory")) {
    line.Emit(EventKind::kRuntimeWords, kEngine);
  }
  if (MatchAllocatorOom(line)) {
    // A program's words before the message on its line: "ERROR: Failed to load model - not
    // enough GPU memory. GPU 0 has a total capacity of ...", "Failed to load model: CUDA out of
    // memory. ...".
    // Also a sentence that names the loading call before the message ("... at model =
    // AutoModelForCausalLM.from_pretrained(...) I hit CUDA out of memory").
    if (!milestone_first && (Has(s, "oad") || Has(s, "from_pretrained"))) {
      const std::string_view t = line.text;
      const size_t message =
          std::min({t.find("OutOfMemoryError"), t.find("out of memory"),
                    t.find("Tried to allocate"), t.find(" has a total capacity of ")});
      if (message != std::string_view::npos && message > 0 &&
          (LoadFailedWords(LineView(t.substr(0, message))) ||
           LoaderNamedBefore(t.substr(0, message)))) {
        line.Emit(EventKind::kLoadFailedWords, kEngine);
      }
    }
    // V0's worker relaying the message after the method it ran ("Exception in worker
    // VllmWorkerProcess while processing method determine_num_available_blocks: CUDA out of
    // memory. Tried to allocate ..."; executor/multiproc_worker_utils.py): the method is the
    // outermost frame, as on a line of its own below.
    if (Has(s, "while processing method ")) {
      MatchMethodFrame(line, kEngine, "while processing method ");
    }
    return;
  }
  if (MatchAllocatorLimit(line)) return;
  if (!milestone_first) MatchMilestone(line);
  // Python's and NumPy's host allocations: "MemoryError", "Unable to allocate 62.6 GiB for an
  // array with shape (131072, 128256)" (llama-cpp-python's logits array of n_ctx x vocab).
  if ((Has(s, "Unable to allocate") && Has(s, "for an array")) || Has(s, "_ArrayMemoryError")) {
    auto& e = line.Emit(EventKind::kHostBufferFail, kEngine);
    Set(e, Num::kRequestedBytes, BytesAfter(s, "Unable to allocate"));
  }
  // Python's own, raised where the interpreter's malloc failed (Objects/obmalloc.c,
  // PyErr_NoMemory): the exception's line, "MemoryError" alone or with its message, also as the
  // first of a chain a later exception hides ("During handling of the above exception").
  if (Has(s, "MemoryError")) {
    std::string_view t = line.text;
    while (!t.empty() && (t.front() == ' ' || t.front() == '`')) t.remove_prefix(1);
    while (!t.empty() && (t.back() == ' ' || t.back() == '\r' || t.back() == '`')) {
      t.remove_suffix(1);
    }
    // After a log prefix ("[rank0]: ", a worker's tag) or a code line a paste joined to it (a
    // word of its own), never inside another name ("torch.OutOfMemoryError", NumPy's
    // "_ArrayMemoryError").
    const size_t at = t.rfind("MemoryError");
    const std::string_view before = t.substr(0, at), after = t.substr(at + 11);
    const bool starts = before.empty() || before.back() == ' ';
    if (starts && (after.empty() || after.front() == ':')) {
      line.Emit(EventKind::kHostBufferFail, kEngine);
    }
  }
  MatchHostAllocFail(line);
  // The kernel's OOM killer (host memory): "Out of memory: Killed process 1234 (python)".
  // torchrun's elastic agent reporting a worker ended by SIGKILL, "failed (exitcode: -9)"
  // (torch/distributed/elastic/multiprocessing/api.py, torch 1.10+): the worker printed no error
  // of its own, and the kernel's OOM killer is what usually sends it.
  // Slurm's cgroup plugin: "Detected 1 oom_kill event in StepId=4242.batch. Some of the step
  // tasks have been OOM Killed." (22.05+; before, "Detected 1 oom-kill event(s) in step 42.0
  // cgroup"); Kubernetes' container status "OOMKilled" (kubectl describe, events): the job's or
  // container's memory limit, host memory. systemd on a service's process the kernel killed:
  // "ollama.service: A process of this unit has been killed by the OOM killer." and "Failed with
  // result 'oom-kill'." (systemd's unit log, src/core/unit.c, and the unit's oom-kill result).
  // A "Killed" right after an engine's own shutdown is the engine killing its process tree
  // (SIGKILL, itself included), not the OOM killer: vLLM V1's front end on a worker's fatal signal
  // ("Got fatal signal from worker processes, shutting down", v1/engine/core_client.py
  // sigusr1_handler -> kill_process_tree, 0.8-0.9) and SGLang's on a child's ("Received sigquit
  // from a child process", srt/entrypoints/engine.py sigquit_handler -> kill_process_tree).
  // (Where a paste reflowed that message, the line before "Killed" holds its end: "... for root
  // cause" + "issue.", "... It usually" + "means the child failed.")
  std::string_view before = std::string_view(line.joined).substr(
      0, line.joined.size() > line.text.size() ? line.joined.size() - line.text.size() : 0);
  while (!before.empty() && before.back() == ' ') before.remove_suffix(1);
  const bool self_killed = Has(line.joined, "Got fatal signal from worker processes") ||
                           Has(line.joined, "Received sigquit from a child process") ||
                           before.ends_with("cause issue.") || before == "issue." ||
                           before.ends_with("means the child failed.") ||
                           before == "child failed.";
  // The report's own words for the same end: "fails on `Loading checkpoint shards: 52%` with
  // message `killed`", "the process gets killed": with no GPU out-of-memory in the excerpt
  // (rules.cc HostOomKill), the kernel's OOM killer, which prints nothing of its own.
  if (ProseKilled(line)) line.Emit(EventKind::kHostOomKill, kEngine);
  // (A cgroup's limit, a container's: "Memory cgroup out of memory: Killed process 483 (...)",
  // mm/oom_kill.c, Linux 4.x+.)
  // (DeepSpeed's launcher on a rank killed by a signal: "exits with return code = -9",
  // launcher/launch.py sigkill_handler, 0.5+.)
  if (Has(s, "Out of memory: Killed process") || Has(s, "out of memory: Killed process") ||
      Has(s, "exits with return code = -9") ||
      // (SGLang's watchdog on a child ended by SIGKILL: "Subprocess scheduler_0 (pid=N) crashed
      // with exit code -9. Triggering SIGQUIT for cleanup...", utils/watchdog.py, 0.5.10.)
      !Whole(line, "crashed with exit code -9").empty() ||
      Has(s, "oom-kill:") ||
      Has(s, "invoked oom-killer") || !Whole(line, "(exitcode: -9)").empty() ||
      Has(s, "oom_kill event") ||
      Has(s, "killed by the OOM killer") || Has(s, "with result 'oom-kill'") ||
      Has(s, "oom-kill event") || Has(s, "OOMKilled") ||
      // A DataLoader worker ended by SIGKILL (torch/utils/data/_utils/signal_handling.py:
      // "DataLoader worker (pid N) is killed by signal: Killed."): the kernel's OOM killer.
      Has(s, "is killed by signal: Killed") ||
      // Ray's memory monitor killing a worker over the node's memory usage threshold (0.95 of
      // the host's RAM by default): the raylet's "N Workers (tasks / actors) killed due to
      // memory pressure (OOM)" (src/ray/raylet/node_manager.cc, 2.x) and the task's
      // ray.exceptions.OutOfMemoryError, "Task was killed due to the node running low on
      // memory." (python/ray/exceptions.py): host memory, also where a paste wrapped them.
      !Whole(line, "killed due to memory pressure").empty() ||
      !Whole(line, "running low on memory").empty() ||
      ((Has(s, "illed") || Has(s, " 137") || Has(s, "SIGKILL") || Has(s, "]^C")) && !self_killed &&
       ShellKilled(line.text))) {
    line.Emit(EventKind::kHostOomKill, kEngine);
  }
  if (!Whole(line, "CUDA error: out of memory").empty() || Has(s, "cudaErrorMemoryAllocation") ||
      (Has(s, "CUDA out of memory") && !Has(s, "warming up sampler")) ||
      // (Or its words parted by a reflow, "... CUDA" + "out of memory".)
      (Has(s, "memory") && !Has(s, "CUDA out of memory") &&
       CutAcrossLines(line, "CUDA out of memory") && !Has(line.joined, "warming up sampler")) ||
      Has(s, "HIP out of memory") ||
      (Has(s, "OutOfMemoryError") && !Has(s, "ray.exceptions.OutOfMemoryError") &&
       !Has(s, "running low on memory")) ||
      OldCudaOom(s) ||
      !Whole(line, "attempting to recover from OOM").empty() ||
      OtherDeviceOom(s) || HeadlessOom(s) || NvmlAssertOom(s)) {
    auto& e = line.Emit(EventKind::kCudaOom, kEngine);
    // XLA's request, in bytes ("Out of memory while trying to allocate 17179869184 bytes").
    if (Has(s, "RESOURCE_EXHAUSTED")) {
      Set(e, Num::kRequestedBytes, NumberAfter(s, "trying to allocate "));
    }
  }
  MatchMpsBufferSize(line);
  const bool frame = MatchFrame(line);
  if (Has(s, "Traceback (most recent call last)")) line.Emit(EventKind::kTraceback, kEngine);
  // "Exception in worker ... while processing method determine_num_available_blocks."
  if (Has(s, "while processing method "))
    MatchMethodFrame(line, kEngine, "while processing method ");
  // Ray names the remote call that raised: RayTaskError's header "ray::Class.method() (pid=...",
  // also in a test runner's one-line summary ("RayTaskError(OutOfMemoryError): ray::
  // FSDPPolicyWorkerBase.init_model() ..."; ray/exceptions.py RayTaskError, 2.x): the method is
  // the outermost frame of the worker's traceback.
  if (const size_t at = s.find("ray::"); at != std::string_view::npos) {
    size_t b = at + 5, end = b, dot = std::string_view::npos;
    while (end < s.size() && end - b < 120 &&
           (std::isalnum(static_cast<unsigned char>(s[end])) || s[end] == '_' || s[end] == '.')) {
      if (s[end] == '.') dot = end;
      ++end;
    }
    if (dot != std::string_view::npos && end < s.size() && s[end] == '(' && end > dot + 1) {
      line.Emit(EventKind::kFrame, kEngine).text = std::string(s.substr(dot + 1, end - dot - 1));
    }
  }
  // The code line under a frame: "model = AutoModelForCausalLM.from_pretrained(...)",
  // "model.generate(": a frame of transformers' API. Only inside a traceback: a notebook cell's
  // source pasted above it says what ran, not where it failed.
  // PyTorch's own source under a Module.to()/.cuda()/.half() frame (torch/nn/modules/module.py:
  // "return self._apply(lambda t: t.cuda(device))", "module._apply(fn)", and Module.to's inner
  // convert, "return t.to(device, dtype if t.is_floating_point() or t.is_complex() else None,
  // non_blocking)", 1.x-2.x): moving a model's parameters onto the GPU, also when the frame's
  // own line was cut from the excerpt.
  if (!frame && (Has(s, "return self._apply(") || Has(s, "module._apply(fn)") ||
                 Has(s, "return t.to(device, dtype if t.is_floating_point()"))) {
    line.Emit(EventKind::kFrame, kEngine).text = "_apply";
  }
  // Meta's reference code loads with Llama.build (llama/generation.py of the Llama 2 and 3
  // releases: it builds the Transformer on the GPU and load_state_dict's the whole checkpoint).
  if (!frame && line.after_frame && Has(s, "Llama.build(")) {
    line.Emit(EventKind::kFrame, kEngine).text = "Llama.build";
  }
  // IPython before 8 marks the failing line with an arrow as long as the line numbers are wide
  // ("--> 351", "---> 78": IPython/core/debugger.py make_arrow); the scanner takes the longest.
  const bool code = line.after_frame || IpythonArrow(line.text);
  if (!frame && code) MatchCodeLine(line);
  // A loader called by name on the failing line ("model = inseq.load_model(name, ...)",
  // text-generation-webui's "shared.model, shared.tokenizer = load_model(...)"): the frame
  // below it, cut from the excerpt, is that loader's.
  if (!frame && code && Has(s, "load_model(") && !Has(s, "self.model_runner.")) {
    line.Emit(EventKind::kFrame, kEngine).text = "load_model (its call)";
  }
  if (!frame && code) {
    for (const std::string_view call :
         {".from_pretrained("sv, ".generate("sv, "load_checkpoint_and_dispatch("sv}) {
      if (Has(s, call)) {
        auto& e = line.Emit(EventKind::kFrame, "transformers");
        std::string fn(call);
        e.text = fn.substr(fn[0] == '.' ? 1 : 0, fn.size() - (fn[0] == '.' ? 2 : 1));
        e.values[Num::kPathHasTransformers] = 1;
      }
    }
  }
}

// Each quantizer's own settings for what filled the memory, from its source:
//  - AutoGPTQ (auto_gptq/modeling/_base.py, 0.4-0.7): quantize(examples, batch_size=1,
//    cache_examples_on_gpu=True, autotune_warmup_after_quantized=False); from_pretrained(...,
//    max_memory=None) loads the 16-bit model on the CPU and quantize() moves one layer to cuda:0;
//  - GPTQModel (gptqmodel/models/base.py quantize(calibration, batch_size=1, ...);
//    quantization/config.py QuantizeConfig: offload_to_disk 5.0+, auto_forward_data_parallel
//    5.7+, calibration_data_device 6.0+; quantize(..., calibration_enable_gpu_cache=True) in
//    1.x-4.x; models/loader.py keeps the model on the CPU);
//  - GPTQ-for-LLaMa (llama.py / opt.py arguments: --nsamples, 128 by default);
//  - optimum (optimum/gptq/quantizer.py GPTQQuantizer, transformers' GPTQConfig: dataset,
//    model_seqlen, batch_size; without a device_map quantize_model moves one block at a time);
//  - llm-compressor (src/llmcompressor/args/dataset_arguments.py: num_calibration_samples,
//    max_seq_length, pipeline, sequential_targets; the sequential pipeline onloads one layer of a
//    model loaded without a device_map and offloads the activations to the CPU);
//  - auto-round (auto_round/cli/parser.py, script/llm.py before 0.6: --low_gpu_mem_usage,
//    --low_cpu_mem_usage, --nsamples, --seqlen, --batch_size with --gradient_accumulate_steps,
//    --device_map);
//  - AutoAWQ (awq/models/base.py quantize, 0.2.6+: max_calib_samples, max_calib_seq_len,
//    n_parallel_calib_samples, max_chunk_memory; from_pretrained loads on the CPU without a
//    device_map).
struct ToolFix {
  std::string_view tool;
  Cause cause;
  const char* change;
  const char* effect;
};
constexpr ToolFix kToolFixes[] = {
    {"autogptq", Cause::kActivationPeak, "model.quantize(examples, cache_examples_on_gpu=False)",
     "AutoGPTQ then keeps the calibration inputs between layers in CPU memory"},
    {"autogptq", Cause::kActivationPeak,
     "fewer or shorter calibration samples in model.quantize(examples, batch_size=1)",
     "each layer's inputs and outputs are samples x length x hidden"},
    {"autogptq", Cause::kWeightsTooLarge,
     "AutoGPTQForCausalLM.from_pretrained(model, quantize_config) with the 16-bit model loaded "
     "on the CPU (no device_map or max_memory), and autotune_warmup_after_quantized=False",
     "quantize() moves one layer at a time to cuda:0; a model placed on the GPU (or moved there "
     "whole for the Triton warm-up) leaves no room"},
    {"gptqmodel", Cause::kActivationPeak,
     "fewer or shorter calibration samples, model.quantize(calibration, batch_size=1)",
     "the inputs kept for each layer grow with samples x length"},
    {"gptqmodel", Cause::kActivationPeak,
     "model.quantize(calibration, calibration_enable_gpu_cache=False) (GPTQModel 1.x-4.x); on "
     "several GPUs QuantizeConfig(auto_forward_data_parallel=False) (5.7+) and "
     "calibration_data_device=\"balanced\" (6.0+)",
     "the layers' calibration inputs are kept off the GPU (before 5.x); later releases spread "
     "them over the cards and copy no layer to each of them"},
    {"gptqmodel", Cause::kWeightsTooLarge,
     "GPTQModel.load(model_id, quant_config) without device or device_map, the model loaded on "
     "the CPU",
     "GPTQModel moves one layer at a time to the GPU"},
    {"gptqmodel", Cause::kHostMemory, "QuantizeConfig(offload_to_disk=True)",
     "finished modules are written to disk instead of held in RAM"},
    {"gptq-for-llama", Cause::kActivationPeak,
     "a smaller --nsamples (fewer calibration samples; 128 by default)",
     "the script holds nsamples x seqlen x hidden inputs on the GPU"},
    {"optimum", Cause::kActivationPeak,
     "fewer or shorter calibration samples: GPTQConfig(..., dataset=<fewer texts>, "
     "model_seqlen=N, batch_size=1) (GPTQQuantizer's arguments)",
     "the block inputs cached on the GPU are samples x model_seqlen x hidden"},
    {"optimum", Cause::kWeightsTooLarge,
     "from_pretrained(..., quantization_config=GPTQConfig(...)) without device_map, the model "
     "loaded on the CPU",
     "quantize_model then moves one block at a time to the GPU"},
    {"llm-compressor", Cause::kActivationPeak,
     "fewer or shorter calibration samples: oneshot(..., num_calibration_samples=N, "
     "max_seq_length=N)",
     "the calibration activations and GPTQ's Hessians grow with samples x length"},
    {"llm-compressor", Cause::kActivationPeak,
     "the sequential pipeline (not pipeline=\"basic\") with a smaller sequential_targets, e.g. "
     "the decoder layer's class",
     "one subgraph's activations and statistics on the GPU at a time"},
    {"llm-compressor", Cause::kWeightsTooLarge,
     "from_pretrained(model_id, torch_dtype=\"auto\") without device_map, the model loaded on "
     "the CPU",
     "oneshot's sequential pipeline onloads one layer at a time"},
    {"llm-compressor", Cause::kHostMemory,
     "fewer or shorter calibration samples: oneshot(..., num_calibration_samples=N, "
     "max_seq_length=N)",
     "the sequential pipeline offloads every batch's activations to CPU memory"},
    {"auto-round", Cause::kActivationPeak,
     "--low_gpu_mem_usage (AutoRound(low_gpu_mem_usage=True))",
     "block inputs and outputs are kept in CPU memory, moved in per step"},
    {"auto-round", Cause::kActivationPeak,
     "fewer or shorter calibration samples (--nsamples, --seqlen), or a smaller --batch_size with "
     "--gradient_accumulate_steps, and --device_map over several cards",
     "the tuned block's activations and gradients grow with batch x length"},
    {"auto-round", Cause::kWeightsTooLarge,
     "--device_map over several cards, or the model left on the CPU with --low_gpu_mem_usage",
     "auto-round tunes one block at a time"},
    {"auto-round", Cause::kHostMemory, "--low_cpu_mem_usage",
     "the model's weights are loaded and offloaded as the blocks need them"},
    {"autoawq", Cause::kActivationPeak,
     "fewer or shorter calibration samples: model.quantize(tokenizer, quant_config, "
     "max_calib_samples=..., max_calib_seq_len=..., n_parallel_calib_samples=...)",
     "the calibration inputs run through each layer at once grow with samples x length"},
    {"autoawq", Cause::kActivationPeak, "a smaller max_chunk_memory in model.quantize",
     "the scale search's loss and means are computed in smaller chunks"},
    {"autoawq", Cause::kWeightsTooLarge,
     "AutoAWQForCausalLM.from_pretrained(model_path) without device_map, the model loaded on "
     "the CPU",
     "AwqQuantizer moves one layer at a time to the GPU"},
    {"autoawq", Cause::kHostMemory, "from_pretrained(model_path, low_cpu_mem_usage=True)",
     "the checkpoint is loaded without a second copy in RAM"},
    {"exllamav2", Cause::kActivationPeak,
     "fewer or shorter calibration rows: convert.py -mr / -ml for the measurement pass (16 rows "
     "of 2,048 tokens by default) and -r / -l for the quantization pass (100 rows)",
     "each module runs the calibration rows x length on the GPU"},
    {"exllamav2", Cause::kActivationPeak,
     "convert.py without -hsol (0 by default: no hidden states kept on the GPU), with -fst",
     "-hsol N keeps N layers' hidden and target states in VRAM; -fst loads the 16-bit layers "
     "with fast_safetensors, which convert.py's help says eases some out-of-memory failures"},
    {"lmdeploy", Cause::kActivationPeak,
     "fewer or shorter calibration samples: lmdeploy lite auto_awq MODEL --calib-samples N "
     "--calib-seqlen N (and --batch-size 1 where the release has it)",
     "each layer is calibrated on the inputs of every sample at once, samples x length x hidden"},
    {"deepcompressor", Cause::kActivationPeak,
     "a smaller quant.calib.batch_size (16 in the FLUX configs, 256 in PixArt's and Sana's) or "
     "quant.calib.num_samples (128 by default) in the config, or a smaller "
     "quant.wgts.calib_range.element_batch_size",
     "each block is calibrated on the activations cached for every calibration sample "
     "(examples/diffusion/configs, deepcompressor 0.0.2)"},
};
// The named quantizer's fixes for `cause`; false when it has none.
bool AddToolFixes(Cause cause, const Facts& f, Diagnosis* d) {
  bool any = false;
  for (const ToolFix& t : kToolFixes) {
    if (t.tool != f.quantizer || t.cause != cause) continue;
    AddFix(d, t.change, t.effect);
    any = true;
  }
  return any;
}

// A plain PyTorch program's fixes (transformers' too, which runs on it).
// torch.compile's CUDA graphs (mode="reduce-overhead"): torch/_inductor/cudagraph_trees.py
// records a graph for each new input shape (CUDAGraphTreeManager.record_function ->
// CUDAGraphNode._record, 2.1+) and keeps its outputs and intermediates in the trees' private
// pool for replay (facts.cc's frame rows).
bool CompiledGraphs(const Facts& f) {
  return std::any_of(f.frames.begin(), f.frames.end(), [](const LogEvent* fr) {
    return Has(fr->text, "(cudagraph_trees.py)");
  });
}

std::string Say(Words rule, const Facts& f) {
  if (rule != Words::kGraphCapture) return "";
  if (!CompiledGraphs(f)) {
    return "CUDA graph capture ran out of memory (torch.cuda.graph): the graph's private memory "
           "pool, kept for its replays, did not fit beside the model's tensors";
  }
  return "torch.compile (mode=\"reduce-overhead\") recorded a CUDA graph for a new input shape "
         "(torch/_inductor/cudagraph_trees.py record_function): the graph's private memory pool, "
         "kept for its replays beside the weights, did not fit";
}

// A training run's step or its evaluation, from its frames or its lines: transformers' Trainer
// (trainer.py train -> _inner_training_loop -> training_step, evaluate -> evaluation_loop ->
// prediction_step, 4.x; its banners "***** Running training *****" / "***** Running Evaluation
// *****" and "{'loss': ...}" logs), a plain loop's backward and optimizer step (torch/_tensor.py
// backward, torch/optim/ _init_group), a loop's "step 10 ... loss" report.
enum class RunKind { kNone, kTraining, kEvaluation };
RunKind TrainingRun(const Facts& f) {
  if (AnyFrame(f, {"evaluation_loop", "prediction_step"})) return RunKind::kEvaluation;
  if (AnyFrame(f, {"_inner_training_loop", "training_step", "backward", "_engine_run_backward",
                   "_init_group", "_multi_tensor_adamw", "_single_tensor_adamw", "_fused_adamw",
                   "_multi_tensor_adam", "_single_tensor_adam", "_fused_adam"})) {
    return RunKind::kTraining;
  }
  if (!f.frames.empty()) return RunKind::kNone;  // frames that show neither
  const LogEvent* s = f.first_of(EventKind::kServing);
  if (!s) return RunKind::kNone;
  if (Has(s->text, "Running Evaluation") || Has(s->text, "Running evaluation") ||
      Has(s->text, "Running Prediction")) {
    return RunKind::kEvaluation;
  }
  if (Has(s->text, "Running training") || Has(s->text, "'loss': ") ||
      TrainingStepLine(s->text)) {
    return RunKind::kTraining;
  }
  return RunKind::kNone;
}

// The Trainer's own run: a frame in transformers' trainer.py, or its banner.
bool TrainerRun(const Facts& f) {
  const LogEvent* s = f.first_of(EventKind::kServing);
  return std::any_of(f.frames.begin(), f.frames.end(),
                     [](const LogEvent* fr) { return Has(fr->text, "(trainer.py)"); }) ||
         (s && Has(s->text, "***** Running ")) || f.get(Num::kTrainBatchPerDevice).has_value();
}

// A training step's activations (forward and backward) grow with the per-device batch x the
// sequence length; an evaluation also gathers every batch's predictions (the Trainer keeps them
// on the GPU until eval_accumulation_steps moves them, trainer.py evaluation_loop, 4.x). The
// Trainer's arguments (training_args.py TrainingArguments: per_device_train_batch_size,
// gradient_accumulation_steps, gradient_checkpointing, per_device_eval_batch_size,
// eval_accumulation_steps; Trainer(preprocess_logits_for_metrics=...), 4.x), else a plain loop's
// means (torch.utils.checkpoint.checkpoint, 1.x-2.x). False when the run is neither.
bool TrainingFixes(const Facts& f, Diagnosis* d) {
  const RunKind run = TrainingRun(f);
  if (run == RunKind::kNone) return false;
  const bool trainer = TrainerRun(f);
  if (run == RunKind::kEvaluation) {
    AddFix(d, trainer ? "eval_accumulation_steps=8 and a smaller per_device_eval_batch_size in "
                        "TrainingArguments"
                      : "a smaller evaluation batch, with each batch's outputs moved to the CPU",
           "the evaluation keeps every batch's predictions (logits over the vocabulary) on the "
           "GPU until they are moved off");
    if (trainer) {
      AddFix(d, "Trainer(..., preprocess_logits_for_metrics=...) returning logits.argmax(-1)",
             "keeps one id a token instead of vocabulary-wide logits");
    }
    return true;
  }
  const auto batch = f.get(Num::kTrainBatchPerDevice);
  const double accum = f.get(Num::kGradAccumSteps).value_or(1);
  if (trainer && batch && *batch >= 2 && accum >= 1) {
    AddFix(d,
           fmt::format("per_device_train_batch_size={:.0f} with gradient_accumulation_steps="
                       "{:.0f} (from {:.0f} and {:.0f})",
                       std::floor(*batch / 2), accum * 2, *batch, accum),
           "half the activations of a step, the same effective batch");
  } else {
    AddFix(d, trainer ? "a smaller per_device_train_batch_size with gradient_accumulation_steps "
                        "raised to keep the effective batch (or a shorter max sequence length)"
                      : "a smaller batch per step, with gradients accumulated over micro-batches "
                        "to keep the effective batch (or shorter sequences)",
           "a step's activations grow with the batch x the sequence length");
  }
  AddFix(d, trainer ? "gradient_checkpointing=True in TrainingArguments"
                    : "activation checkpointing (torch.utils.checkpoint.checkpoint around the "
                      "model's blocks)",
         "recomputes each layer's activations in the backward instead of keeping them (slower)");
  return true;
}

bool Fixes(Cause cause, const Facts& f, Diagnosis* d) {
  AddPerProcessCapFix(f, d);
  if (AddUnslothMergeFixes(cause, f, d)) return true;
  if (cause == Cause::kDequantizedCopy && QuantizedExport(f)) {
    // TensorRT-LLM's examples/quantization/quantize.py --device (0.10+), which places the model
    // for calibration and export (tensorrt_llm/quantization/quantize_by_modelopt.py).
    AddFix(d, "TensorRT-LLM's quantize.py --device cpu (or a card with more free memory)",
           "the model stays in host memory while Model Optimizer calibrates and exports it "
           "(slower); the failure came after calibration, so fewer calibration samples "
           "(--calib_size) do not help");
    return true;
  }
  // AutoGPTQ's fused modules built at load (rules.cc AutoGptqFusedInject); text-generation-
  // webui's AutoGPTQ loader passes its --no_inject_fused_attention and --no_inject_fused_mlp.
  if (cause == Cause::kDequantizedCopy && AnyFrame(f, {"inject_to_model"})) {
    AddFix(d, "AutoGPTQForCausalLM.from_quantized(..., inject_fused_attention=False, "
              "inject_fused_mlp=False) (text-generation-webui: --no_inject_fused_attention "
              "--no_inject_fused_mlp)",
           "the layers keep their separate projections: no concatenated copy is made (slower "
           "attention)");
    return true;
  }
  // HQQ's prepare_for_inference repacking for a kernel backend (rules.cc HqqRepackFrames).
  if (cause == Cause::kDequantizedCopy &&
      AnyFrame(f, {"patch_hqq_to_aoint4", "patch_hqq_to_marlin", "patch_hqq_to_bitblas",
                   "patch_hqq_to_gemlite"})) {
    AddFix(d, "prepare_for_inference(model) with the default backend (no backend=...)",
           "the HQQ layers run as they are: no backend copy is made");
    AddFix(d, "an hqq release whose backend patch frees each HQQ layer once it is repacked, "
              "or a card with more memory",
           "the peak is the old and the new copy of the layers side by side");
    return true;
  }
  if (cause == Cause::kCudagraphCapture && !CompiledGraphs(f)) {
    AddFix(d, "capture fewer or smaller graphs (a smaller static batch or input shape), or run "
              "that part uncaptured",
           "each captured graph keeps its inputs, outputs and intermediates in its pool");
    return true;
  }
  if (cause == Cause::kCudagraphCapture) {
    // torch.compile's modes (torch/__init__.py compile, 2.x): "default" and
    // "max-autotune-no-cudagraphs" compile without CUDA graphs.
    AddFix(d, "torch.compile(..., mode=\"default\") (or \"max-autotune-no-cudagraphs\")",
           "compiled kernels without CUDA graphs: no private pool kept for each recorded shape");
    AddFix(d, "fewer distinct input shapes (pad inputs to a few lengths, a fixed batch)",
           "each new shape records another graph with its own outputs in the pool");
    return true;
  }
  if (cause == Cause::kWeightsTooLarge && AddTrainingStateFixes(f, d)) return true;
  if (cause == Cause::kUnshardedSlice) {
    // A sharding wrapper's set-up (rules.cc ShardingGathersWhole). FSDP's auto_wrap_policy
    // (torch.distributed.fsdp.wrap.transformer_auto_wrap_policy, or accelerate's
    // fsdp_auto_wrap_policy TRANSFORMER_BASED_WRAP, Lightning's FSDPStrategy(
    // auto_wrap_policy=...)); ZeRO-3 under transformers: zero.Init through the Trainer's
    // DeepSpeed config, a checkpoint with every weight present (no missing keys to initialise).
    const bool zero3 = AnyFrame(f, {"GatheredParameters"});
    const bool fsdp = FsdpFlattenFrames(f);
    if (fsdp) {
      AddFix(d, "wrap per decoder layer: an FSDP auto_wrap_policy (transformer_auto_wrap_policy "
                "with the model's layer class; accelerate fsdp_auto_wrap_policy: "
                "TRANSFORMER_BASED_WRAP), so each layer is flattened and sharded on its own",
             "with no wrap policy FSDP flattens the whole model into one tensor on each rank "
             "before sharding it");
    }
    if (zero3) {
      AddFix(d, "under ZeRO-3, keep the gather small: initialise the model's weights from the "
                "checkpoint (no missing keys), or gather and initialise a few parameters at a "
                "time",
             "GatheredParameters materialises every listed parameter whole on every rank");
    }
    if (fsdp || zero3) return true;
  }
  if (cause == Cause::kWeightsTooLarge && QuantizerFrames(f) && AddToolFixes(cause, f, d)) {
    return true;
  }
  if (cause == Cause::kWeightsTooLarge && QuantizerFrames(f)) {
    AddFix(d, "quantize with the 16-bit model loaded on the CPU (no device_map or max_memory "
              "placing it on the GPU)",
           "the quantizers move one layer at a time to the GPU; a model already placed there "
           "leaves no room for the layer's calibration pass");
    AddFix(d, "fewer or shorter calibration samples (AutoAWQ max_calib_samples / "
              "max_calib_seq_len, GPTQ's calibration dataset size)",
           "the calibration inputs stay on the GPU from layer to layer");
    return true;
  }
  if ((cause == Cause::kWeightsTooLarge && AnyFrame(f, {"load_autosplit_gen"})) ||
      (cause == Cause::kKvTooLongContext && AnyFrame(f, {"split_for_model_and_cache"}))) {
    // TabbyAPI's config.yml (model: cache_size, cache_mode, gpu_split, autosplit_reserve) and
    // exllamav2/v3's own arguments (ExLlamaV2Cache(max_seq_len=...), Cache(max_num_tokens=...),
    // the Q4/Q6/Q8 caches).
    AddFix(d, "a smaller cache: cache_size / max_seq_len in TabbyAPI's config.yml (ExLlama's "
              "Cache(model, max_num_tokens=N) / ExLlamaV2Cache(model, max_seq_len=N))",
           "the split must hold the weights and the whole cache, which is allocated at load for "
           "every token it can hold");
    AddFix(d, "a quantized cache: cache_mode Q4, Q6 or Q8 (or 8,4: 8-bit keys, 4-bit values)",
           "a 4-bit cache takes about a quarter of an FP16 cache's bytes");
    AddFix(d, "more room in the split (gpu_split per card, a smaller autosplit_reserve, another "
              "GPU) or a lower-bpw quantization of the model",
           "the loader stops at the first module that no card of the split has room for");
    return true;
  }
  // AutoGPTQ's exllama kernels allocate, after the weights, temp_state (max_input_length x the
  // largest layer dimension, fp16; 2048 rows by default with act-order) and temp_dq per device
  // (auto_gptq/modeling/_utils.py autogptq_post_init, utils/exllama_utils.py
  // exllama_set_max_input_length, 0.4-0.7); exllama v2 a fixed scratch space.
  if (cause == Cause::kWeightsTooLarge &&
      AnyFrame(f, {"autogptq_post_init", "exllama_set_max_input_length", "gptqmodel_post_init",
                   "hf_gptqmodel_post_init"})) {
    AddFix(d, "a smaller max_input_length for the exllama buffers (exllama_set_max_input_length("
              "model, N)), or another kernel (from_quantized(..., disable_exllama=True, "
              "disable_exllamav2=True))",
           "the kernels' scratch buffers are allocated after the weights, on top of them");
  }
  if (cause == Cause::kWeightsTooLarge && NamedWeightsOverCard(f)) {
    // The size the model's name states (facts.h NamedWeightsPerRank): no setting of the same
    // model at those bits fits; fewer bits, offload or a larger card do.
    const double weights = *NamedWeightsPerRank(f);
    const int bits = NameBits(f.model_path);
    AddFix(d, fmt::format("a GPU with more than {} of memory (or the model split over several), "
                          "or a smaller model",
                          Gib(weights)),
           fmt::format("the name {} states {} parameters at {} bits: about {} of weights, "
                       "more than the card's {}",
                       f.model_path, NamedParamsWords(f.model_path), bits, Gib(weights),
                       Gib(f.total)));
    if (bits > 4) {
      const double four = weights * 4 / bits;
      AddFix(d, "a 4-bit checkpoint of the model (AWQ, GPTQ) or BitsAndBytesConfig("
                "load_in_4bit=True) in from_pretrained",
             fmt::format("about {} of weights at 4 bits, {} the card's {}", Gib(four),
                         four < 0.9 * f.total ? "within" : "still more than", Gib(f.total)));
    }
    AddFix(d, "device_map=\"auto\" with max_memory={0: \"<below the card>\", \"cpu\": "
              "\"<host RAM>\"} in from_pretrained",
           "accelerate keeps the layers that do not fit on the CPU and runs them from there "
           "(slower)");
    return true;
  }
  // FSDP's full state dict at the save: the neutral fixes (diagnose.cc) gather it on the CPU.
  if (cause == Cause::kWeightsTooLarge && FsdpFullStateDict(f)) return true;
  if (cause == Cause::kWeightsTooLarge) {
    AddFix(d, "load the weights in 16 bits (not float32) or quantized (8-/4-bit), or on a card "
              "with more memory",
           "a plain PyTorch program places the whole model on one GPU before it generates");
    return true;
  }
  if (cause == Cause::kHostMemory && QuantizerFrames(f)) {
    const bool own = AddToolFixes(cause, f, d);
    AddFix(d, "more host RAM or swap for the quantization run (dmesg shows the OOM killer's line)",
           "the quantizers hold the 16-bit model in CPU memory while they convert it (GPTQModel "
           "about twice its size), llm-compressor's sequential pipeline its calibration "
           "activations too, and packing builds the quantized copy there");
    if (own) return true;
    AddFix(d, "fewer or shorter calibration samples (llm-compressor num_calibration_samples / "
              "max_seq_length, GPTQModel's calibration dataset, AutoAWQ max_calib_samples)",
           "the inputs kept for each layer grow with samples x length");
    return true;
  }
  if (cause == Cause::kHostMemory &&
      FailureSays(f, {"paging file is too small", "WinError 1455"})) {
    AddFix(d, "a larger page file (System > Advanced system settings > Performance > Virtual "
              "memory: system managed, on a drive with free space), or more RAM",
           "Windows refuses a commit past RAM plus the page file (error 1455); loading torch's "
           "CUDA libraries and the checkpoint commit several GB each");
    AddFix(d, "DataLoader(num_workers=0) (or fewer workers) where the error comes from workers",
           "each spawned worker on Windows imports torch and its CUDA DLLs again, committing "
           "their size once more");
    return true;
  }
  // A pinned (page-locked) host allocation (rules.cc PinnedHostAlloc).
  if (cause == Cause::kHostMemory && PinnedFailureUnder(f, {"pin_memory", "_pin_memory_loop"})) {
    AddFix(d, "no pinned memory where it is optional: DeepSpeed \"offload_optimizer\" / "
              "\"offload_param\": {\"pin_memory\": false}, DataLoader(pin_memory=False)",
           "pageable host memory can be swapped; page-locked memory must all be resident");
    AddFix(d, "more host RAM (WSL: memory= in .wslconfig; a container's memory limit)",
           "the page-locked buffers take the host's physical memory at once");
    return true;
  }
  // Ray's memory monitor (readers' host kill): it kills a worker once the node's memory use
  // passes RAY_memory_usage_threshold (0.95 by default, ray/_private/ray_constants.py), before
  // the kernel would.
  if (cause == Cause::kHostMemory && RayMemoryMonitorKill(f)) {
    AddFix(d, "more RAM on the Ray node, or fewer workers or tasks on it",
           "Ray kills the most recently scheduled worker once the node's memory use passes its "
           "threshold");
    AddFix(d, "smaller host-side results (return fewer logits or prompt_logprobs, smaller "
              "batches per call)",
           "what a worker hands back to the driver is held in the node's memory");
    AddFix(d, "RAY_memory_usage_threshold=0.98 (or RAY_memory_monitor_refresh_ms=0 to turn the "
              "monitor off) when the node has the memory",
           "the monitor's default threshold is 0.95 of the node's RAM");
    return true;
  }
  if (cause == Cause::kHostMemory && FailureSays(f, {"is killed by signal: Killed"})) {
    AddFix(d, "fewer DataLoader workers (num_workers) and a smaller prefetch_factor",
           "each worker holds its own copy of the dataset's Python objects (copy-on-write pages "
           "touched by reference counting) and its prefetched batches");
    AddFix(d, "more host RAM or swap (dmesg shows the OOM killer's line)",
           "the main process, its pinned buffers and every worker share the host's memory");
    return true;
  }
  if (cause == Cause::kHostMemory) {
    // torch.load's mmap=True (torch/serialization.py, 2.1+) maps the file instead of reading it.
    AddFix(d, "more host RAM or swap for the process (check dmesg for the OOM killer's line)",
           "a plain PyTorch program reads its checkpoint into system memory before moving it to "
           "the GPU");
    AddFix(d, "load the checkpoint memory-mapped or shard by shard (torch.load(..., mmap=True), "
              "safetensors, transformers' low_cpu_mem_usage=True)",
           "the whole state dict is then never held in RAM at once");
    return true;
  }
  if (cause == Cause::kKernelWarmup) {
    // rules.cc RuntimeTritonLoad: the driver's memory for a kernel's first use comes from outside
    // the caching allocator, which keeps what it reserved (torch.cuda.empty_cache returns it).
    AddFix(d, "call the Triton kernels once (a warm-up with small inputs) before the large "
              "buffers are allocated, or torch.cuda.empty_cache() before their first call",
           "a kernel's binary and launch resources come from the driver, outside PyTorch's "
           "caching allocator, which otherwise keeps the free memory reserved");
    return true;
  }
  if (cause == Cause::kOtherProcess) {
    // Memory no listed process holds (rules.cc UnlistedBytes): another container's or user's
    // processes, which only the host's nvidia-smi shows.
    if (d->numbers.count("unlisted_process_bytes")) {
      AddFix(d, "find the other jobs on this GPU with nvidia-smi on the host (a container sees "
                "only its own processes) and stop them, or run on a free card "
                "(CUDA_VISIBLE_DEVICES)",
             fmt::format("{:.2f} GiB is in use by processes PyTorch could not list, {:.2f} GiB "
                         "by those it listed",
                         d->numbers["unlisted_process_bytes"] / (1 << 30),
                         d->numbers["other_process_bytes"] / (1 << 30)));
      return true;
    }
    AddFix(d, "stop the other processes on the GPU (nvidia-smi lists them), or run on a free "
              "card (CUDA_VISIBLE_DEVICES)",
           d->numbers.count("other_process_bytes")
               ? fmt::format("they hold {:.2f} GiB", d->numbers["other_process_bytes"] / (1 << 30))
               : std::string("memory held outside this process is not available to it"));
    return true;
  }
  if (cause == Cause::kStaticCache) {
    // The log's flags (Match above), halved: the cache is linear in each.
    const auto batch = f.get(Num::kMaxNumSeqs);
    const auto len = f.get(Num::kMaxModelLen);
    if (batch && *batch >= 2) {
      AddFix(d,
             fmt::format("--max_batch_size {:.0f} (from {:.0f})", std::floor(*batch / 2), *batch),
             "the cache is max_batch_size x max_seq_len x layers of K and V: half the batch, half "
             "the cache");
    }
    if (len && *len >= 256) {
      AddFix(d, fmt::format("--max_seq_len {:.0f} (from {:.0f}), or what the prompts need",
                            std::floor(*len / 2), *len),
             "half the length, half the cache");
    }
    if (AnyFrame(f, {"create_state_tensors"})) {
      // exllamav2: ExLlamaV2Cache(model, max_seq_len=..., batch_size=...); its example scripts'
      // -l / --length; the Q4/Q8 caches (ExLlamaV2Cache_Q4, the scripts' -cq4 / -cq8).
      AddFix(d, "ExLlamaV2Cache(model, max_seq_len=N) with N what the prompts need (the example "
                "scripts' -l N)",
             "the cache is allocated for max_seq_len, which defaults to the model config's "
             "length (131,072 tokens for Llama 3.1), before the first token");
      AddFix(d, "ExLlamaV2Cache_Q4 (the scripts' -cq4)",
             "a 4-bit cache: about a quarter of the FP16 cache's bytes");
      return true;
    }
    AddFix(d, "a smaller maximum batch and length for the preallocated cache (setup_caches(batch, "
              "..., decoder_max_seq_len=...), max_batch_size / max_seq_len of the script)",
           "the cache is batch x max length x layers of K and V, reserved before the first token");
    return true;
  }
  if (cause == Cause::kKvNoMemory || cause == Cause::kKvTooLongContext ||
      cause == Cause::kKvTooManySequences) {
    // A program of its own (no serving engine's lines): its KV cache is what its code sizes,
    // batch x length x layers of K and V, wherever it keeps it.
    AddFix(d, "a smaller batch and a shorter maximum length for the program's KV cache (its own "
              "batch-size and max-length settings)",
           "the cache is batch x length x layers of K and V");
    AddFix(d, "a KV cache in 8 bits, or the part kept off the GPU kept smaller (where the "
              "program offers them)",
           "fewer bytes per cached token");
    return true;
  }
  if (cause == Cause::kMultimodalEncoder) {
    if (f.get(Num::kTrainingLaunch)) {
      // The trainers' own caps on an image's pixels: LLaMA-Factory's image_max_pixels (0.9+),
      // ms-swift's MAX_PIXELS environment variable (Qwen2-VL family), the processor's
      // max_pixels elsewhere.
      AddFix(d, "fewer pixels per image (LLaMA-Factory --image_max_pixels, ms-swift MAX_PIXELS, "
                "or the processor's max_pixels) and a smaller per-device batch, with gradient "
                "checkpointing on",
             "the vision tower's activations, kept for the backward pass, grow with the patches "
             "per image and the images per batch");
    } else {
      AddFix(d, "fewer or smaller images a request (resize them before the model's image "
                "transform: fewer tiles and patches)",
             "the vision encoder's activations grow with the image's pixels");
    }
    // A model already named 4-bit gains nothing from fewer bits.
    AddFix(d,
           NameBits(f.model_path) > 4 ? "the weights in fewer bits (int8 / int4) or a GPU with "
                                        "more memory"
                                      : "a GPU with more memory",
           "the encoder runs in what the weights leave free");
    return true;
  }
  if (cause != Cause::kActivationPeak) return false;
  // AutoGPTQ's entry (auto_gptq/modeling/_base.py quantize, 0.4-0.7) keeps every layer's
  // calibration inputs and outputs on the GPU unless told otherwise (cache_examples_on_gpu=True,
  // its default).
  const bool autogptq = std::any_of(f.frames.begin(), f.frames.end(), [](const LogEvent* fr) {
    return fr->text == "quantize (_base.py)";
  });
  if (QuantizerFrames(f) && AddToolFixes(cause, f, d)) {
    AddFix(d, "a GPU with more memory for the quantization run",
           "one layer with its calibration data must fit at once");
    return true;
  }
  if (QuantizerFrames(f) && autogptq) {
    AddFix(d, "model.quantize(examples, cache_examples_on_gpu=False)",
           "AutoGPTQ then keeps the calibration inputs between layers in CPU memory");
  }
  if (QuantizerFrames(f)) {
    AddFix(d, "fewer or shorter calibration samples (AutoAWQ max_calib_samples / "
              "max_calib_seq_len, GPTQ --nsamples or a smaller calibration dataset)",
           "the calibration activations, and the statistics built from them, grow with samples "
           "x length");
    AddFix(d, "a GPU with more memory for the quantization run",
           "one layer with its calibration data must fit at once");
    return true;
  }
  if (TrainingFixes(f, d)) return true;
  const auto requested = f.get(Num::kRequestedBytes);
  const auto free = f.get(Num::kFreeBytes);
  // max_new_tokens and truncation are transformers' (generate, the tokenizer): a plain PyTorch
  // program's own forward has neither.
  const bool generating = f.engine != "pytorch" || AnyFrame(f, {"generate", "_sample"});
  AddFix(d,
         generating ? "a smaller batch or shorter inputs (max_new_tokens, truncation)"
                    : "a smaller batch or shorter inputs",
         requested && free
             ? fmt::format("activations and logits grow with batch x length: {} {} allocation "
                           "failed with {} free",
                           Article(core::FormatBytes(
                               static_cast<uint64_t>(std::max(0.0, *requested)))),
                           core::FormatBytes(static_cast<uint64_t>(std::max(0.0, *requested))),
                           core::FormatBytes(static_cast<uint64_t>(std::max(0.0, *free))))
             : std::string("activations and logits grow with batch x length"));
  return true;
}

}  // namespace

// The caching allocator failing while it composes its out-of-memory message: the message's
// per-process lines come from NVML (c10/cuda/CUDACachingAllocator.cpp reportProcessMemoryInfo,
// 2.1+, called only on the out-of-memory path), whose calls it asserts, so where NVML cannot
// answer (Jetson's integrated GPUs, some containers and WSL set-ups) the out-of-memory surfaces
// as "RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at ".../CUDACachingAllocator.cpp"
// (also the nvmlInit_v2_ and nvmlDeviceGetHandleByPciBusId_v2_ asserts before it). PyTorch asserts
// on NVML nowhere else, so the assert names the allocator's out-of-memory with or without the
// path (often cut onto the next line).
bool NvmlAssertOom(const LineView& s) {
  return Has(s, "NVML_SUCCESS ==") && Has(s, "INTERNAL ASSERT FAILED");
}

// torch.cuda.set_per_process_memory_fraction(F) caps what the caching allocator may reserve
// (1.8+); the message then names the cap, "...; 5.00 GiB allowed; ..." before 2.1 and
// "... is free. [processes] 17.69 GiB allowed; Of the allocated memory ..." after
// (c10/cuda/CUDACachingAllocator.cpp malloc, allowed_info). When the card had the request free,
// the cap refused it: the fraction that holds what PyTorch reserved plus the request.
void AddPerProcessCapFix(const Facts& f, Diagnosis* d) {
  const auto cap = f.get(Num::kBudgetBytes);
  const auto requested = f.get(Num::kRequestedBytes);
  const auto free = f.get(Num::kFreeBytes);
  if (!cap || !requested || !free || f.total <= 0 || *free < *requested || *cap >= f.total) {
    return;
  }
  const double held = f.get(Num::kAllocatedBytes).value_or(0.0) +
                      f.get(Num::kReservedUnallocatedBytes).value_or(0.0);
  const double need = std::min(1.0, std::ceil((held + *requested) / f.total * 100.0) / 100.0);
  AddFix(d,
         fmt::format("torch.cuda.set_per_process_memory_fraction({:.2f}) or higher (or no cap)",
                     need),
         fmt::format("PyTorch stopped at its per-process cap of {} while the card had {} free; "
                     "{} held plus the {} request needs {:.0f}% of the card's {}",
                     Gib(*cap), Gib(*free), Gib(held), Gib(*requested), need * 100,
                     Gib(f.total)));
}

bool AddUnslothMergeFixes(Cause cause, const Facts& f, Diagnosis* d) {
  if (cause != Cause::kDequantizedCopy || !UnslothMerge(f)) return false;
  // unsloth/save.py unsloth_save_model: merged layers stay on the GPU while its use is under
  // maximum_memory_usage x the card (asserted to be at most 0.95), then go to RAM or disk.
  AddFix(d, "model.save_pretrained_merged(..., save_method=\"merged_16bit\", "
            "maximum_memory_usage=0.5)",
         "the merged 16-bit layers leave the GPU sooner (for RAM or disk) instead of filling it "
         "up to the default share");
  AddFix(d, "model.save_pretrained(\"lora_adapter\") (the adapter only), then merge it into the "
            "16-bit base model on the CPU or a larger GPU (peft's merge_and_unload)",
         "the merge needs the 16-bit weights; the 4-bit training GPU does not have to hold them");
  return true;
}

bool AddTrainingStateFixes(const Facts& f, Diagnosis* d) {
  if (AnyFrame(f, {"prepare_model_for_kbit_training"})) {
    // peft/utils/other.py prepare_model_for_kbit_training (0.4+): meant for a model loaded in 4
    // or 8 bits (bitsandbytes, GPTQ), whose few unquantized parameters it upcasts.
    AddFix(d, "call prepare_model_for_kbit_training only on a model loaded in 4 or 8 bits "
              "(from_pretrained(..., quantization_config=BitsAndBytesConfig(load_in_4bit=True))); "
              "for a 16-bit model use model.gradient_checkpointing_enable() and "
              "model.enable_input_require_grads() instead",
           "it casts every parameter that is not quantized to float32: on a 16-bit model that "
           "is all of them, twice the weights' bytes");
    return true;
  }
  if (OptimizerFrames(f)) {
    // DeepSpeed's ZeRO stages (zero_optimization.stage, offload_optimizer), PyTorch's FSDP
    // (ShardingStrategy.FULL_SHARD), bitsandbytes' 8-bit and paged optimizers (bnb.optim.AdamW8bit,
    // transformers' optim="adamw_8bit" / "paged_adamw_8bit").
    AddFix(d, "shard the optimizer states over the data-parallel ranks: DeepSpeed ZeRO stage 2 "
              "or 3 (\"zero_optimization\": {\"stage\": 3}), or FSDP with FULL_SHARD",
           "Adam's two fp32 moments are 8 bytes per trained parameter on every rank unless "
           "sharded; ZeRO divides them by the data-parallel size (with one rank there is nothing "
           "to divide)");
    AddFix(d, "offload them to host memory (ZeRO \"offload_optimizer\": {\"device\": "
              "\"cpu\"}), or an 8-bit optimizer (bitsandbytes AdamW8bit; transformers "
              "optim=\"adamw_8bit\" or \"paged_adamw_8bit\")",
           "an 8-bit optimizer keeps its moments in 2 bytes per parameter instead of 8");
    AddFix(d, "train fewer parameters (LoRA/QLoRA adapters, frozen layers) or more GPUs",
           "the states exist only for the parameters that require gradients");
    return true;
  }
  return false;
}

std::string_view QuantizerToolName(double index) {
  const int i = static_cast<int>(index);
  return i > 0 && i < kToolCount ? kToolNames[i] : std::string_view();
}

bool QuantizerFrames(const Facts& f) {
  // The run's setup (QuantizerSetup), where no frame shows it: a quantizer's frames, or with no
  // frame the setup's online_quantization in a PyTorch or transformers log.
  if (f.get(Num::kOnlineQuantization) && (f.engine == "pytorch" || f.engine == "transformers")) {
    return true;
  }
  return std::any_of(f.frames.begin(), f.frames.end(), [](const LogEvent* fr) {
    auto it = fr->values.find(Num::kPathIsQuantizer);
    return (it != fr->values.end() && it->second > 0) || FrameIs(fr, {"fasterquant"});
  });
}

const Reader& PytorchReader() {
  static const Reader kReader = {
      .engine = kEngine,
      .match = Match,
      // The prints of plain PyTorch programs (MatchMilestone): the load began, the load (with
      // any cache built with the model) finished, a generation finished.
      .milestones = {{EventKind::kLoadBegin, Stage::kLoad},
                     {EventKind::kWeightsLoaded, Stage::kRuntime},
                     {EventKind::kServing, Stage::kRuntime}},
      .fixes = Fixes,
      .words = Say,
  };
  return kReader;
}

}  // namespace vramfit::doctor
