// llama.cpp's log reader (readers/reader.h): its lines as ggml-backend and llama-context print
// them (failed buffer allocations for the weights, the KV cache and the compute graph; n_ctx;
// buffer sizes; image encoding), the phase they mark, llama.cpp's words for its failures, and
// its flags as fixes.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/units.h"
#include "doctor/readers/ggml_front_end.h"
#include "doctor/readers/reader.h"
#include "vramfit/advice.h"

namespace vramfit::doctor {

// Lists of literals are written "..."sv: their lengths are known when compiled (a list of
// pointers is measured with strlen on every pass of a loop, on every line of a log).
using std::string_view_literals::operator""sv;
namespace {

constexpr char kEngine[] = "llama.cpp";

// More than one sequence shares the context's KV cells: llama-server's "initializing slots,
// n_slots = 4", llama_context's "n_seq_max = 4", -np / --parallel above 1 on a command line, or
// a slot line of a slot after the first ("slot update_slots: id  1 | task 5 | ...", llama-box's
// "update_slots: rid ... | id 01 | task 44 | ...").
bool ParallelSequences(const LineView& s) {
  for (std::string_view key : {"n_slots ="sv, "n_seq_max"sv, " --parallel "sv, " -np "sv}) {
    const size_t at = s.find(key);
    if (at == std::string_view::npos) continue;
    if (auto n = NumberAt(s, at + key.size()); n && *n > 1) return true;
  }
  for (size_t task = s.find("| task "); task != std::string_view::npos;
       task = s.find("| task ", task + 1)) {
    const size_t id = s.substr(0, task).rfind(" id ");
    if (id == std::string_view::npos) continue;
    size_t end = 0;
    const auto n = NumberAt(s, id + 4, &end);
    if (n && *n >= 1 && end <= task &&
        s.substr(end, task - end).find_first_not_of(' ') == std::string_view::npos) {
      return true;
    }
  }
  return false;
}

// The GGUF file a line names ("-m models/Llama-3.2-1B-Instruct-IQ3_M.gguf", the loader's
// "loaded meta data ... from /models/x.gguf", a sentence "running x.gguf"): the file's base
// name, which carries the model's size ("1B") for the rules that weigh a failed buffer against
// the model (rules.cc GgmlBufferOverNamedModel). Not a vision projector's file (mmproj) or a
// tokenizer-only vocabulary file (ggml-vocab-*), which name no model's size.
std::string GgufName(std::string_view t) {
  const size_t dot = t.find(".gguf");
  if (dot == std::string_view::npos) return {};
  size_t b = dot;
  while (b > 0 && t[b - 1] != ' ' && t[b - 1] != '/' && t[b - 1] != '\\' && t[b - 1] != '"' &&
         t[b - 1] != '\'' && t[b - 1] != '`' && t[b - 1] != '=' && t[b - 1] != '(' &&
         t[b - 1] != ':') {
    --b;
  }
  const std::string_view name = t.substr(b, dot - b);
  if (name.empty() || name.size() > 160 || HasNoCase(name, "mmproj") ||
      name.starts_with("ggml-vocab")) {
    return {};
  }
  return std::string(name);
}

// A device's memory as llama.cpp prints it, its name the event's text:
//  - "using device CUDA0 (NVIDIA GeForce RTX 4090) - 23012 MiB free" as it places the model
//    (llama_model_load_from_file_impl, llama_prepare_model_devices; 2025+);
//  - common_params' device list, "  - Vulkan0 : Intel(R) Arc(TM) B390 GPU (37060 MiB, 47865 MiB
//    free)";
//  - the memory breakdown's row, "|   - ROCm0 ((TM) Pro VII) | 16368 =  233 + (8404 = ...) +
//    7729 |" (llama_memory_breakdown_print, the total first).
void MatchDeviceMemory(const Line& line, const LineView& s) {
  const std::string_view t = line.text;
  // The device's name: the word after `at` in `in`, up to a space or a parenthesis.
  const auto device_in = [](std::string_view in, size_t at) {
    while (at < in.size() && in[at] == ' ') ++at;
    size_t end = at;
    while (end < in.size() && in[end] != ' ' && in[end] != '(' && in[end] != ':') ++end;
    return std::string(in.substr(at, end - at));
  };
  const auto device_at = [&](size_t at) { return device_in(t, at); };
  // Also where a paste reflowed the line between the device's name and its free memory
  // ("using device CUDA0 (NVIDIA GeForce RTX" + "4090) - 14120 MiB free").
  if (const LineView u = WholeBoth(line, "using device ", " MiB free"); !u.empty()) {
    // (The last on the line: a paste that lost its line ends holds every start's.)
    const size_t at = u.rfind("using device ");
    const size_t free_at = at == std::string_view::npos ? at : u.find(" MiB free", at);
    const size_t dash = free_at == std::string_view::npos ? free_at : u.rfind(" - ", free_at);
    const auto free = dash == std::string_view::npos || dash < at
                          ? std::nullopt
                          : NumberAfter(u, " - ", dash);
    if (free) {
      auto& e = line.Emit(EventKind::kDeviceMemory, kEngine);
      e.text = device_in(u, at + 13);
      Set(e, Num::kDeviceFreeBytes, *free * core::kMiBf);
    }
  }
  if (Has(s, " MiB free)") && Has(s, " MiB, ")) {
    const size_t dash = t.find("- ");
    const size_t open = t.rfind('(', t.find(" MiB, "));
    const bool listed = dash != std::string_view::npos && open != std::string_view::npos &&
                        open > dash;
    const auto total = listed ? NumberAfter(t, "(", open) : std::nullopt;
    const auto free = listed ? NumberAfter(t, " MiB, ", open) : std::nullopt;
    if (total && free) {
      auto& e = line.Emit(EventKind::kDeviceMemory, kEngine);
      e.text = device_at(dash + 2);
      Set(e, Num::kDeviceTotalBytes, *total * core::kMiBf);
      Set(e, Num::kDeviceFreeBytes, *free * core::kMiBf);
    }
  }
  if (Has(s, "memory_breakdown_print:") && Has(s, "|   - ")) {
    const size_t dash = t.find("|   - ");
    const size_t bar = t.find('|', dash + 6);
    if (bar == std::string_view::npos || t.find(" = ", bar) == std::string_view::npos) return;
    const auto total = NumberAfter(t, "|", bar);
    if (!total) return;
    auto& e = line.Emit(EventKind::kDeviceMemory, kEngine);
    e.text = device_at(dash + 6);
    Set(e, Num::kDeviceTotalBytes, *total * core::kMiBf);
  }
}

// ggml-cuda.cu's check before 2024 as its file and line end it: "ggml-cuda.cu:4856: out of
// memory" (CUDA_CHECK's "CUDA error %d at %s:%d: %s").
bool CudaCheckOom(std::string_view t) {
  const size_t at = t.find("ggml-cuda.cu:");
  if (at == std::string_view::npos) return false;
  size_t i = at + 13;
  const size_t digits = i;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
  return i > digits && t.substr(i).starts_with(": out of memory");
}

// "KV buffer size = 16604.75 MiB CUDA error: out of memory": the size and ggml-cuda's abort with
// nothing between them (one line where a paste lost the line end).
bool KvSizeThenCudaOom(std::string_view s) {
  const size_t kv = s.find("KV buffer size =");
  if (kv == std::string_view::npos) return false;
  const size_t from = kv + 16;
  const size_t err = s.find("CUDA error: out of memory", from);
  if (err == std::string_view::npos || err - from > 24) return false;
  std::string_view size = s.substr(from, err - from);
  while (!size.empty() && size.front() == ' ') size.remove_prefix(1);
  while (!size.empty() && size.back() == ' ') size.remove_suffix(1);
  return !size.empty() && std::isdigit(static_cast<unsigned char>(size.front())) &&
         size.ends_with("MiB");
}

// llama.cpp's build, as its tools print it ("build: 7001 (802cef44b) with cc ... for x86_64",
// common.cpp; "main: build = 1234 (abc)" in 2023): a fix names only the flags that build has.
void MatchBuild(const Line& line) {
  const LineView s = line.view();
  if (!Has(s, "build")) return;
  for (const std::string_view key : {"build: "sv, "main: build = "sv}) {
    const size_t at = line.text.find(key);
    if (at == std::string_view::npos || (at > 0 && key == "build: "sv &&
                                         line.text[at - 1] != ' ' && line.text[at - 1] != ']')) {
      continue;
    }
    size_t end = 0;
    const auto n = NumberAt(line.text, at + key.size(), &end);
    if (n && *n >= 1 && *n < 1e6 && line.text.substr(end, 2) == " (") {
      Set(line.Emit(EventKind::kConfig, kEngine), Num::kGgmlBuild, n);
      return;
    }
  }
}

// ik_llama.cpp's --fit refusing a model (src/llama.cpp, 2026-03+; see Match).
bool IkAutoFitWords(std::string_view s) {
  return Has(s, "Unable to auto-fit model") ||
         (Has(s, "Required memory") && Has(s, "is still greater than available memory")) ||
         (Has(s, "No MoE tensors in model and required memory") && Has(s, "greater than")) ||
         (Has(s, "Not enough memory in device") && Has(s, "to offload the output layer"));
}

// Whether the buffer a "<type> ... buffer size =" line names before `key` is host memory: the
// CPU's types ("CPU", "CPU_Mapped", "CPU_REPACK") or a GPU backend's pinned one ("CUDA_Host").
bool HostBufferType(std::string_view s, std::string_view key) {
  std::string_view before = s.substr(0, s.find(key));
  while (!before.empty() && before.back() == ' ') before.remove_suffix(1);
  const size_t cut = before.find_last_of(" \t:");
  const std::string_view name = cut == std::string_view::npos ? before : before.substr(cut + 1);
  return name.starts_with("CPU") || name.ends_with("_Host");
}

// A llama.cpp tool's own line: its command line (llama-server, llama-cli, the 2023 tools'
// ./main and ./server), llama-server's logger prefixes ("main: ", "srv  ", "slot ",
// tools/server/server.cpp and utils.hpp), the tools' "system_info: n_threads" (common.cpp).
bool FrontEndLine(const LineView& s, std::string_view t) {
  if (Has(s, "llama-server") || Has(s, "llama-cli") || Has(s, "./main ") ||
      Has(s, "./server ") || Has(s, "system_info: n_threads")) {
    return true;
  }
  const size_t b = t.find_first_not_of(" `");
  if (b == std::string_view::npos) return false;
  const std::string_view rest = t.substr(b);
  return rest.starts_with("main: ") || rest.starts_with("srv ") || rest.starts_with("slot ");
}

void Match(const Line& line) {
  MatchBuild(line);
  const LineView s = line.view();
  if (FrontEndLine(s, line.text)) {
    auto& e = line.Emit(EventKind::kConfig, kEngine);
    e.text.clear();  // no model's name
    Set(e, Num::kGgmlFrontEnd, 1);
  }
  // ggml-cuda listing its devices as the backend starts, before any model is read
  // (ggml-cuda.cu ggml_init_cublas, 2023-2024, and ggml_cuda_init since: "found N CUDA devices:",
  // "found N ROCm devices:" in HIP builds).
  if (Has(s, " devices:") && (Has(s, "ggml_init_cublas: found ") ||
                               Has(s, "ggml_cuda_init: found "))) {
    line.Emit(EventKind::kGgmlDeviceList, kEngine);
  }
  if (Has(s, "MiB") || Has(s, "breakdown_print:")) MatchDeviceMemory(line, s);
  if (Has(s, ".gguf")) {
    if (std::string name = GgufName(line.text); !name.empty()) {
      line.Emit(EventKind::kConfig, kEngine).text = std::move(name);
    }
  }
  // The line whole, or its two pieces where a terminal cut it before "failed" ("allocating
  // 1953.40 MiB on device 1: " + "cudaMalloc failed: out of memory").
  // ggml-cuda prints "allocating N MiB on device D" only when cudaMalloc failed
  // (ggml-cuda.cu ggml_backend_cuda_buffer_type_alloc_buffer, every release since 2024): its
  // head alone, the rest cut off, is the failure too.
  LineView alloc = WholeBoth(line, "buffer_type_alloc_buffer:", "failed");
  if (alloc.empty()) {
    alloc = WholeBoth(line, "cuda_buffer_type_alloc_buffer: allocating ", " on device ");
  }
  // The message's tail on a line of its own ("cudaMalloc failed: out of memory", where a paste
  // kept only that, or a terminal cut it from its head a line above no longer shown).
  // (Not inside Ollama's report of its runner, "... process has terminated: cudaMalloc failed:
  // out of memory", which its reader reads, also where a reflow parted it.)
  const bool tail = alloc.empty() && Has(s, "cudaMalloc failed: out of memory") &&
                    !Has(s, "terminated") && !Has(s, "no longer running") &&
                    !Has(line.joined, "runner process") && !Has(line.joined, "server process");
  if (tail) line.Emit(EventKind::kGgmlAllocFail, kEngine).values[Num::kHost] = 0;
  if (!alloc.empty()) {
    const LineView& s = alloc;
    auto& e = line.Emit(EventKind::kGgmlAllocFail, kEngine);
    Set(e, Num::kRequestedBytes, BytesAfter(s, "allocating"));
    if (!e.values.count(Num::kRequestedBytes)) {
      Set(e, Num::kRequestedBytes, BytesAfter(s, "buffer of size"));
    }
    // ggml-metal: "ggml_backend_metal_buffer_type_alloc_buffer: error: failed to allocate buffer,
    // size = 16384.00 MiB".
    if (!e.values.count(Num::kRequestedBytes)) {
      Set(e, Num::kRequestedBytes, BytesAfter(s, "size ="));
    }
    e.values[Num::kHost] = Has(s, "cpu_buffer") ? 1 : 0;
  }
  // ggml-metal's buffer (ggml-metal.m, later ggml-metal-device.m ggml_metal_buffer_init / _map):
  // "error: failed to allocate buffer, size = 16384.00 MiB".
  if (Has(s, "ggml_metal_buffer_") && Has(s, "failed to allocate buffer")) {
    auto& e = line.Emit(EventKind::kGgmlAllocFail, kEngine);
    Set(e, Num::kRequestedBytes, BytesAfter(s, "size ="));
    e.values[Num::kHost] = 0;
  }
  // ggml-metal before its buffers were split (ggml-metal.m ggml_metal_add_buffer, mid-2023): the
  // model's mapped 'data' buffer over the device's largest buffer, "ggml_metal_add_buffer: buffer
  // 'data' size 9763717120 is larger than buffer maximum of 8589934592", then
  // "llama_init_from_file: failed to add buffer".
  if (const LineView m = WholeBoth(line, "ggml_metal_add_buffer", "than buffer maximum");
      !m.empty()) {
    auto& e = line.Emit(EventKind::kGgmlAllocFail, kEngine);
    Set(e, Num::kRequestedBytes, NumberAfter(m, "size "));
    e.values[Num::kHost] = 0;
  }
  // Vulkan's own result through ggml-vulkan's C++ bindings (vulkan.hpp throws
  // vk::OutOfDeviceMemoryError: "vk::Device::allocateMemory: ErrorOutOfDeviceMemory", also as the
  // loader's "error loading model: ..."): a device allocation; ErrorOutOfHostMemory, the host's.
  // Not a buffer's where the call is vk::Device::createDescriptorPool: ggml-vulkan makes its
  // descriptor pools as a graph's operations request descriptor sets
  // (ggml_pipeline_request_descriptor_sets -> ggml_pipeline_allocate_descriptor_sets, called
  // while a graph is built and computed, ggml-vulkan.cpp 2024-2026), so the device ran out while
  // computing a graph (the warm-up's empty run is the first), not while a buffer was placed.
  if (Has(s, "ErrorOutOfDeviceMemory") && Has(s, "createDescriptorPool")) {
    line.Emit(EventKind::kGgmlComputeFail, kEngine).values[Num::kDuringDecode] = 1;
  } else if (Has(s, "ErrorOutOfDeviceMemory")) {
    line.Emit(EventKind::kGgmlAllocFail, kEngine).values[Num::kHost] = 0;
    if (Has(s, "error loading model")) line.Emit(EventKind::kGgmlLoadFail, kEngine);
  } else if (Has(s, "ErrorOutOfHostMemory")) {
    line.Emit(EventKind::kHostBufferFail, kEngine).values[Num::kHost] = 1;
  }
  // ggml-vulkan's staging and preallocated buffers, made as a graph is computed
  // (ggml_vk_preallocate_buffers: "ggml_vulkan: Memory allocation of size N failed.", b2014+).
  if (Has(s, "ggml_vulkan: Memory allocation of size") && Has(s, "failed")) {
    auto& e = line.Emit(EventKind::kGgmlComputeFail, kEngine);
    e.values[Num::kDuringDecode] = 1;
    Set(e, Num::kRequestedBytes, NumberAfter(s, "allocation of size"));
  }
  // Other backends' and older builds' buffer failures (from a catalog of ggml's messages across
  // builds): ggml-metal before its buffers were split ("ggml_metal_add_buffer:
  // error: failed to allocate 'data' buffer, size = X MB", to b1860); ggml-sycl's device buffer
  // ("ggml_backend_sycl_buffer_type_alloc_buffer: can't malloc N Bytes memory on device",
  // b3702-b4238; "can't allocate N Bytes of memory on device" later) and its pool ("dpct_malloc:
  // out of memory for virtual memory pool"); the loader's own line where the backend printed
  // none ("llama_model_load: error loading model: failed to allocate buffer", b1843-b6789).
  if ((Has(s, "ggml_metal_add_buffer") && Has(s, "failed to allocate")) ||
      (Has(s, "sycl_buffer_type_alloc_buffer") && Has(s, "on device")) ||
      Has(s, "dpct_malloc: out of memory")) {
    auto& e = line.Emit(EventKind::kGgmlAllocFail, kEngine);
    Set(e, Num::kRequestedBytes, BytesAfter(s, "size"));
    if (!e.values.count(Num::kRequestedBytes)) {
      Set(e, Num::kRequestedBytes, NumberAfter(s, "malloc"));
    }
    e.values[Num::kHost] = 0;
    // Those Metal buffers are named by what they hold (llama.cpp llama_new_context_with_model,
    // 2023: 'data' the mapped weights, 'kv' the KV cache, 'eval', 'alloc' and 'scr0' the
    // compute buffers), all added as the context is created, after the KV's size is printed.
    if (Has(s, "ggml_metal_add_buffer")) {
      const size_t q = line.text.find("failed to allocate '");
      const std::string_view name =
          q == std::string_view::npos ? ""sv : Trimmed(line.text.substr(q + 20, 16));
      if (name.starts_with("data")) line.Emit(EventKind::kGgmlLoadFail, kEngine);
      if (name.starts_with("kv")) line.Emit(EventKind::kGgmlKvFail, kEngine);
    }
  } else if (Has(s, "sycl_buffer_type_alloc_buffer") && Has(s, "on host")) {
    line.Emit(EventKind::kHostBufferFail, kEngine).values[Num::kHost] = 1;
  } else if (Has(s, "error loading model: failed to allocate buffer") &&
             !Has(s, "for kv") && !Has(s, "for rs")) {
    line.Emit(EventKind::kGgmlAllocFail, kEngine).values[Num::kHost] = 0;
  }
  // ggml's host allocations (ggml.c ggml_calloc / ggml_malloc, b2019+: "ggml_calloc: failed to
  // allocate 1024.00 MB"): system RAM.
  if ((Has(s, "ggml_calloc: failed to allocate") || Has(s, "ggml_malloc: failed to allocate")) &&
      Has(s, "MB")) {
    line.Emit(EventKind::kHostBufferFail, kEngine).values[Num::kHost] = 1;
  }
  // ggml-vulkan's own failure (ggml-vulkan.cpp: "Device memory allocation of size N failed.").
  if (Has(s, "Device memory allocation of size") && Has(s, "failed")) {
    auto& e = line.Emit(EventKind::kGgmlAllocFail, kEngine);
    Set(e, Num::kRequestedBytes, BytesAfter(s, "allocation of size"));
    e.values[Num::kHost] = 0;
  }
  // --fit giving up, a warning: the model then loads as given (common_fit_params /
  // llama_params_fit catch common_params_fit_exception, 2026: "failed to fit params to free
  // device memory: n_gpu_layers already set by user to 999, abort"). Its projection did not fit,
  // and the -ngl the user set kept --fit from moving layers to the CPU: a failure that follows
  // is fixed by leaving -ngl to --fit.
  if (Has(s, "failed to fit params to free device memory") &&
      Has(s, "n_gpu_layers already set by user to")) {
    auto& e = line.Emit(EventKind::kConfig, kEngine);
    e.text.clear();  // no model's name
    Set(e, Num::kFitAbortedLayers, NumberAfter(s, "n_gpu_layers already set by user to"));
  }
  // ik_llama.cpp's --fit (src/llama.cpp, 2026-03+) refusing before it allocates anything: the
  // model's tensors and its KV cache at the full context, summed per layer, exceed the free
  // memory of every device less its compute buffer even with every MoE tensor overridden to the
  // CPU ("Required memory 30412 MiB is still greater than available memory 22528 MiB after
  // overriding all MoE tensors to CPU"; a dense model: "No MoE tensors in model and required
  // memory ..."), or the output layer alone does not fit ("Not enough memory in device 0 to
  // offload the output layer"); the loader then fails with "error loading model: Unable to
  // auto-fit model". A load failure: what it placed is the weights and the cache together.
  if (IkAutoFitWords(s)) {
    auto& e = line.Emit(EventKind::kGgmlLoadFail, kEngine);
    if (const auto need = NumberAfter(s, "equired memory "); need && *need > 0) {
      e.values[Num::kRequestedBytes] = *need * 1024.0 * 1024.0;
    }
  }
  // ggml-sycl's own failure (ggml-sycl.cpp ggml_backend_sycl_buffer_type_alloc_buffer: "can't
  // allocate N Bytes of memory on device").
  if (Has(s, "Bytes of memory on device") && Has(s, "allocate")) {
    auto& e = line.Emit(EventKind::kGgmlAllocFail, kEngine);
    Set(e, Num::kRequestedBytes, NumberAfter(s, "allocate "));
    e.values[Num::kHost] = 0;
  }
  // ggml-alloc.c's "failed to allocate DEV buffer of size N" quoted without the function that
  // printed it (alloc_tensor_range, ggml_gallocr_reserve_n; read below with it): a device's
  // buffer failed, whose phase the log's milestones tell. A host buffer's (CPU, CUDA_Host) is
  // read below as the host's; the output buffer above.
  if (const LineView b = Whole(line, " buffer of size");
      !b.empty() && Has(b, "failed to allocate ") && !Has(b, "gallocr") &&
      !Has(b, "alloc_tensor_range") && !Has(b, "output buffer") && !Has(b, "CPU buffer") &&
      !Has(b, "Host buffer") && !Has(b, "cpu_buffer")) {
    auto& e = line.Emit(EventKind::kGgmlAllocFail, kEngine);
    Set(e, Num::kRequestedBytes, BytesAfter(b, "buffer of size"));
    e.values[Num::kHost] = 0;
  }
  // ggml-alloc.c alloc_tensor_range fails for any context's tensors: the model loader's
  // (llama-model.cpp load_tensors) and the KV cache's (llama-kv-cache.cpp) alike. Only the
  // loader's own error says the weights.
  if (Has(s, "alloc_tensor_range: failed")) {
    auto& e = line.Emit(EventKind::kGgmlAllocFail, kEngine);
    e.text = "alloc_tensor_range";
    Set(e, Num::kRequestedBytes, BytesAfter(s, "buffer of size"));
    e.values[Num::kHost] = Has(s, "CPU buffer") || Has(s, "CUDA_Host buffer") ? 1 : 0;
  }
  // Also where a reflow or a wrap put "unable to allocate" on the next line.
  // (The line holds the message's end, "allocate", wherever the break fell: a cheap test first.)
  if (Has(s, "allocate") &&
      (!WholeBoth(line, "llama_model_load", "unable to allocate").empty() ||
       !WholeBoth(line, "error loading model", "unable to allocate").empty() ||
       !WholeBoth(line, "load_tensors", "unable to allocate").empty())) {
    line.Emit(EventKind::kGgmlLoadFail, kEngine);
  }
  // Mesa's amdgpu winsys out of memory for a command submission ("radv/amdgpu: Not enough memory
  // for command submission.", src/amd/vulkan/winsys/amdgpu), which ggml-vulkan sees as a lost
  // device: while the loader uploads the tensors its error names the load ("llama_model_load:
  // error loading model: vk::Queue::submit: ErrorDeviceLost" on the next line), a load failure;
  // elsewhere a device allocation that failed.
  if (Has(s, "Not enough memory for command submission")) {
    auto& e = line.Emit(EventKind::kGgmlAllocFail, kEngine);
    e.values[Num::kHost] = 0;
  }
  constexpr std::string_view kSubmission = "Not enough memory for command";
  if (Has(s, "error loading model") && (Has(s, kSubmission) || Has(line.joined, kSubmission))) {
    line.Emit(EventKind::kGgmlLoadFail, kEngine);
  }
  // The KV and compute buffers' failures, also wrapped by a terminal over two lines (Whole).
  // (Also the GGML-era "llama_kv_cache_init: failed to allocate memory for kv cache", to b1842,
  // and the context's wrapper of b4880-b5260, "failed to initialize the context: failed to
  // initialize self-attention cache".)
  if (!Whole(line, "failed to allocate buffer for kv cache").empty() ||
      Has(s, "llama_kv_cache_init() failed") ||
      Has(s, "failed to initialize the context: failed to allocate buffer for kv") ||
      Has(s, "failed to allocate memory for kv cache") ||
      Has(s, "failed to initialize the context: failed to initialize self-attention cache")) {
    line.Emit(EventKind::kGgmlKvFail, kEngine);
  }
  // The recurrent-state cache of Mamba and linear-attention layers (src/llama-memory-recurrent.cpp
  // llama_memory_recurrent: "failed to allocate buffer for rs cache", b5700+; hybrid models make
  // it beside the KV cache of their attention layers, after it): one state per sequence (-np).
  if (!Whole(line, "failed to allocate buffer for rs cache").empty()) {
    Set(line.Emit(EventKind::kGgmlKvFail, kEngine), Num::kRecurrentState, 1);
  }
  // llama_kv_cache logs a buffer's size and then clears it (ggml_backend_buffer_clear, a memset
  // under CUDA_CHECK; src/llama-kv-cache.cpp since the 2025 rewrite): ggml-cuda's abort with "CUDA
  // error: out of memory" on the very next line is that KV buffer not being backed (a driver
  // that over-commits device memory, WDDM's fallback to shared memory).
  // (Or right after the size on one line, where a paste lost the line end between them.)
  if (Has(s, "CUDA error: out of memory") &&
      ((Has(line.joined, "KV buffer size =") && !Has(s, "KV buffer size =")) ||
       KvSizeThenCudaOom(s))) {
    line.Emit(EventKind::kGgmlKvFail, kEngine);
  }
  if (const std::string_view w = !Whole(line, "failed to allocate compute").empty()
                                     ? Whole(line, "failed to allocate compute")
                                     : Whole(line, "compute buffer allocation failed");
      !w.empty()) {
    auto& e = line.Emit(EventKind::kGgmlComputeFail, kEngine);
    // (Also the KV cache's own update shifting the cached keys when the context is full:
    // "update: failed to allocate compute graph for K-shift", llama-kv-cache.cpp
    // llama_kv_cache::update, 2025+: a context shift happens only while decoding.)
    e.values[Num::kDuringDecode] = Has(w, "kv_cache_update") || Has(w, "llama_decode") ||
                                           Has(w, "decode:") || Has(w, "for K-shift")
                                       ? 1
                                       : 0;
  }
  // ggml-cuda's CUDA_CHECK on failure names the function ("CUDA error: out of memory" then
  // "  current device: 0, in function ggml_cuda_pool_malloc_vmm at .../ggml-cuda.cu:394",
  // ggml-cuda.cu 2024+): the memory pool and the matrix-multiplication paths grow while a graph
  // is computed, outside the buffers reserved at context creation.
  // ggml_cuda_error prints the CUDA error's message on the line before ("CUDA error: an illegal
  // memory access was encountered"): another error there is no allocation failure.
  // (Or before it on the same line, where a paste lost the line end between them.)
  // (cuBLAS's CUBLAS_STATUS_ALLOC_FAILED in CUDA 12's words, cublasGetStatusString: "the
  // resource allocation failed", which ggml-cuda prints as "CUDA error: the resource
  // allocation failed", common.cuh cublas_get_error_str.)
  const bool other_error =
      (Has(line.joined, "error: ") && !Has(line.joined, "out of memory") &&
       !Has(line.joined, "ALLOC_FAILED") && !Has(line.joined, "resource allocation failed")) ||
      (Has(s, "current device:") && !Has(s, "out of memory") && !Has(s, "ALLOC_FAILED") &&
       !Has(s, "resource allocation failed") && s.find("error: ") < s.find("current device:"));
  // Also cuBLAS's handle, made on the first matrix multiplication a graph runs (ggml-cuda
  // common.cuh cublas_handle -> cublasCreate_v2): CUBLAS_STATUS_ALLOC_FAILED there is the
  // first graph's compute (the warm-up decode) finding the card full.
  if (!other_error && Has(s, "current device:") &&
      ((Has(s, "in function ggml_cuda_") &&
        (Has(s, "ggml_cuda_pool_malloc") || Has(s, "ggml_cuda_op_") ||
         Has(s, "ggml_cuda_mul_mat") || Has(s, "ggml_cuda_compute_forward"))) ||
       Has(s, "in function cublas_handle"))) {
    line.Emit(EventKind::kGgmlComputeFail, kEngine).values[Num::kDuringDecode] = 1;
  }
  // ggml-cuda capturing the decode graph as a CUDA graph and instantiating it
  // (ggml-cuda.cu ggml_cuda_graph_update_executable, update_cuda_graph_executable in 2025:
  // "cudaGraphInstantiate(&graph->instance, ...)"; ggml_cuda_graph_evaluate_and_capture:
  // cudaStreamEndCapture): the graph's instantiation ran out, not a compute buffer.
  if (!other_error && Has(s, "current device:") &&
      (Has(s, "graph_update_executable") || Has(s, "update_cuda_graph_executable") ||
       Has(s, "graph_evaluate_and_capture"))) {
    line.Emit(EventKind::kGgmlComputeFail, kEngine).values[Num::kDuringDecode] = 1;
    line.Emit(EventKind::kFrame, kEngine).text = "cuda_graph_instantiate (ggml-cuda)";
  }
  // ggml-cuda's free-memory query failing before anything of llama.cpp's is allocated: no CUDA
  // context fits (ggml_cuda_init: "failed to initialize CUDA: out of memory"; ggml-cuda.cu
  // ggml_backend_cuda_device_get_memory's CUDA_CHECK of cudaMemGetInfo, "... returning 0/0" in
  // its 2026 warning): other processes hold the card.
  if (Has(s, "failed to initialize CUDA: out of memory") ||
      (!other_error && Has(s, "current device:") &&
       Has(s, "ggml_backend_cuda_device_get_memory")) ||
      (Has(s, "cudaMemGetInfo failed (out of memory)"))) {
    line.Emit(EventKind::kStartupError, kEngine);
  }
  // ggml-metal's graph compute checking its command buffers (ggml-metal.m
  // ggml_metal_graph_compute, 2023-2025: "command buffer %d failed with status %lu", then for
  // MTLCommandBufferStatusError (5) the buffer's error, "error: Insufficient Memory
  // (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)"): a graph computed past what Metal
  // could make resident. A timeout's status 5 names kIOGPUCommandBufferCallbackErrorTimeout.
  if ((Has(s, "command buffer") && Has(s, "failed with status 5") && !Has(s, "Timeout")) ||
      Has(s, "kIOGPUCommandBufferCallbackErrorOutOfMemory")) {
    line.Emit(EventKind::kGgmlComputeFail, kEngine).values[Num::kDuringDecode] = 1;
  }
  // ggml's fixed-size contexts of the GGML-era llama.cpp (2023, before the graph allocator;
  // llama.cpp at 6e7cca404): llama_eval_internal built each evaluation's graph in buf_compute
  // and the scratch buffers, sized at load from the model type and n_ctx (MEM_REQ_EVAL,
  // MEM_REQ_SCRATCH0: "empirical scaling, still a guess") for the batches of at most 512 its own
  // tools allowed (examples/common.cpp caps -b at 512), and ggml_new_object stopped when a graph
  // outgrew them ("not enough space in the context's memory pool (needed N, available M)", or
  // the scratch memory pool's; then an assert or a segfault). llama.cpp's compute buffer
  // overflowing, with device memory to spare: the batch is what to cut.
  // (The scratch buffers' overflow reads "not enough space in the scratch memory pool".)
  if (const LineView p = WholeBoth(line, "not enough space in the", "memory pool (needed");
      !p.empty()) {
    auto& e = line.Emit(EventKind::kGgmlComputeFail, kEngine);
    e.values[Num::kDuringDecode] = 1;
    Set(e, Num::kRequestedBytes, NumberAfter(p, "(needed"));
  }
  // A graph computed with a buffer its backend could not allocate: ggml_backend_sched_graph_compute
  // returning GGML_STATUS_ALLOC_FAILED (-2, ggml/include/ggml.h enum ggml_status), as the vision
  // encoder reports it ("clip_image_batch_encode: ggml_backend_sched_graph_compute failed with
  // error -2", tools/mtmd/clip.cpp) and llama's decode ("graph_compute: ggml_backend_sched_graph_
  // compute_async failed with error -2"). -1 is a failure of another kind.
  if (!WholeBoth(line, "graph_compute", "failed with error -2").empty()) {
    line.Emit(EventKind::kGgmlComputeFail, kEngine).values[Num::kDuringDecode] = 1;
  }
  // The scheduler's and the context's words for a graph that did not fit its compute buffers
  // while a batch was decoded: "ggml_backend_sched_alloc_splits: failed to allocate graph"
  // (ggml-backend.c, b2129+; not its ", reserving" note, which retries), "process_ubatch: failed
  // to allocate graph" (llama-context.cpp, b5549+), "llama_decode: failed to decode, ret = -2"
  // (-2: an allocation failed, b1283+); the graph allocator's reserve at context creation,
  // "graph allocation: failed to reserve memory" (ggml-alloc.c, b6567+).
  if ((Has(s, "sched_alloc_splits: failed to allocate graph") && !Has(s, "reserving")) ||
      Has(s, "process_ubatch: failed to allocate graph") ||
      (Has(s, "failed to decode, ret = -2"))) {
    line.Emit(EventKind::kGgmlComputeFail, kEngine).values[Num::kDuringDecode] = 1;
  }
  if (Has(s, "graph allocation: failed to reserve memory")) {
    line.Emit(EventKind::kGgmlComputeFail, kEngine).values[Num::kDuringDecode] = 0;
  }
  // The legacy pool (ggml_cuda_pool_leg::alloc in ggml-cuda.cu, the pool of builds and devices
  // without virtual memory management: ROCm/HIP, older cards) grows by look_ahead_size = 1.05 x
  // the request while a graph is computed; its CUDA_CHECK names the method and the statement:
  // "current device: 0, in function alloc at .../ggml-cuda.cu:291" then
  // "ggml_cuda_device_malloc(&ptr, look_ahead_size, device)" ("cudaMalloc((void **) &ptr,
  // look_ahead_size)" before 2024).
  // (ggml_cuda_error's "current device: %d, in function %s at %s:%d" is ggml-cuda's own: the
  // path after "at" is not needed, and a terminal may have cut it.)
  if (!other_error && (Has(s, "look_ahead_size") ||
                       (Has(s, "current device:") && Has(s, "in function alloc at")))) {
    line.Emit(EventKind::kGgmlComputeFail, kEngine).values[Num::kDuringDecode] = 1;
  }
  // The CUDA check of ggml-cuda.cu before 2024: "CUDA error 2 at ggml-cuda.cu:359: out of memory"
  // (2: cudaErrorMemoryAllocation), the failing allocation unnamed.
  // Right after the loader's "mem required = X MB (+ Y MB per state)" (llama.cpp
  // llama_model_load_internal, April-May 2023), the allocation is the model's context buffer:
  // in cuBLAS builds llama_ctx_buffer::resize (llama-util.h) took it from ggml_cuda_host_malloc,
  // pinned host memory (cudaMallocHost under CUDA_CHECK, which aborted with this line until a
  // fallback to pageable memory replaced the abort in late May 2023). Host memory, then (WSL
  // caps pinned memory); GGML_CUDA_NO_PINNED=1 turns it off.
  // Also where a paste's reflow put "out of memory" on a line of its own.
  // (Not ggml_cuda_host_malloc's warning, "failed to allocate 1900.00 MiB of pinned memory: out
  // of memory" (ggml-cuda.cu, mid-2023+): it falls back to pageable memory and goes on.)
  // (Or reflowed over three lines, "CUDA error 2 at" / the path / "out of memory": the last two
  // joined hold "ggml-cuda.cu:4856: out of memory", which only that check prints.)
  if (const LineView c = Has(s, "memory") ? WholeBoth(line, "CUDA error 2 at", "out of memory")
                                          : LineView();
      (!c.empty() && Has(c, "ggml-cuda.cu")) ||
      (Has(s, "out of memory") && !Has(s, "ggml-cuda.cu") && !Has(s, "of pinned memory") &&
       CudaCheckOom(line.joined))) {
    auto& e = line.Emit(EventKind::kGgmlAllocFail, kEngine);
    // (Or its end, "per state)", where a paste reflowed that line.)
    const bool pinned =
        Has(line.joined, "mem required  =") || Has(line.joined, "state) CUDA error 2 at");
    e.values[Num::kHost] = pinned ? 1 : 0;
    e.values[Num::kUnnamedCudaCheck] = 1;
    if (pinned) line.Emit(EventKind::kHostBufferFail, kEngine);
  }
  // llama_decode returning an error (llama.h: 1 is "no KV slot", negative values are errors;
  // "llama_decode: failed to decode, ret = -3" from the tools and server): right after a failed
  // graph reservation, the reservation was the one a decode made for its batch's graph.
  if (Has(s, "failed to decode, ret = -")) line.Emit(EventKind::kGgmlDecodeFailed, kEngine);
  // Also where a terminal cut the line between the two, or inside the function's name.
  if (const LineView r = WholeBoth(line, "gallocr_reserve", "failed"); !r.empty()) {
    auto& e = line.Emit(EventKind::kGgmlReserveFail, kEngine);
    Set(e, Num::kRequestedBytes, BytesAfter(r, "buffer of size"));
    // A graph's buffer in host memory: "failed to allocate CUDA_Host buffer" (pinned), "CPU".
    e.values[Num::kHost] = Has(r, "CUDA_Host buffer") || Has(r, "CPU buffer") ? 1 : 0;
  } else if (!line.text.empty() && line.text[0] >= '0' && line.text[0] <= '9' &&
             Has(line.joined, "gallocr_reserve") && Has(line.joined, "buffer of size")) {
    // The size a reflow put on the next line ("... CPU buffer of size" + "64424509440").
    auto& e = line.Emit(EventKind::kConfig, kEngine);
    e.text.clear();  // no model's name
    Set(e, Num::kRequestedBytes, BytesAfter(line.joined, "buffer of size"));
  }
  // The context's flash attention (llama-context.cpp: "%s: flash_attn    = %d" before the
  // on/off/auto flag, "= %s" with llama_flash_attn_type_name after it; "auto" is decided later).
  if (Has(s, "flash_attn")) {
    const std::string_view t = line.text;
    const size_t at = t.find("flash_attn");
    size_t eq = at + 10;
    while (eq < t.size() && t[eq] == ' ') ++eq;
    if (eq < t.size() && t[eq] == '=') {
      std::string_view v = t.substr(eq + 1);
      while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
      const int value = v.starts_with("0")          ? 0
                        : v.starts_with("1")        ? 1
                        : v.starts_with("disabled") ? 2
                        : v.starts_with("enabled")  ? 3
                                                    : -1;
      if (value >= 0) line.Emit(EventKind::kConfig, kEngine).values[Num::kFlashAttention] = value;
    }
  }
  // "n_ctx      = 4096" (llama_new_context_with_model, its width varying by release:
  // "llama_context: n_ctx         = 131072" since 2025), "n_ctx_slot = N" (llama-server's slot);
  // not n_ctx_train, n_ctx_per_seq or n_ctx_orig. Not the GGML era's "llama_model_load_internal:
  // n_ctx = 2048" either: that loader printed the context among the model's hyperparameters
  // before it loaded a tensor (llama.cpp llama_model_load_internal, 2023, to the GGUF switch).
  if (Has(s, "n_ctx") && !Has(s, "llama_model_load_internal")) {
    const std::string_view t = line.text;
    const size_t at = t.find("n_ctx");
    size_t eq = at + 5;
    while (eq < t.size() && t[eq] == ' ') ++eq;
    const bool plain = eq < t.size() && t[eq] == '=';
    if (plain || Has(s, "n_ctx_slot =")) {
      auto& e = line.Emit(EventKind::kGgmlCtx, kEngine);
      Set(e, Num::kMaxModelLen,
          Has(s, "n_ctx_slot =") ? NumberAfter(s, "n_ctx_slot =") : NumberAt(t, eq + 1));
    }
  }
  // A model with sliding-window layers creates its two caches in turn, the full-length one first
  // (llama-kv-cache-iswa.cpp: "llama_kv_cache_iswa: creating non-SWA KV cache, size = N cells",
  // 2025+; llama_kv_cache_unified_iswa before): context creation reached its KV cache, whose
  // cells are the context, where an excerpt cut its "n_ctx = N" line.
  if (Has(s, "creating non-SWA KV cache")) {
    auto& e = line.Emit(EventKind::kGgmlCtx, kEngine);
    Set(e, Num::kMaxModelLen, NumberAfter(s, "size ="));
  }
  // A buffer line names its buffer type before the words: a device's ("CUDA0 model buffer
  // size", "ROCm0", "Metal_Mapped", "Vulkan0") or host memory's ("CPU_Mapped model buffer
  // size", "CPU KV buffer size", "CUDA_Host compute buffer size": the CPU's types and a GPU
  // backend's pinned host type). Partial offload prints the host's first; the figures the
  // doctor compares with the device are the device's, so a host buffer's line is its event
  // only.
  bool host_line = false;
  for (std::string_view key : {"KV buffer size ="sv, "model buffer size ="sv,
                               "compute buffer size ="sv}) {
    if (Has(s, key)) host_line |= HostBufferType(s, key);
  }
  // Before b4000 or so (llama.cpp of 2024, and the Ollama runners built from it) the loader
  // printed its weight buffers without the word "model": "llm_load_tensors:      CUDA0 buffer
  // size =  3820.93 MiB", "llm_load_tensors:        CPU buffer size =   281.81 MiB" (llama.cpp
  // llm_load_tensors, after allocating every one of them): the weights are on the device.
  if (Has(s, "llm_load_tensors") && Has(s, " buffer size =") && !Has(s, "model buffer size") &&
      !Has(s, "KV buffer") && !Has(s, "compute buffer") && !Has(s, "output buffer") &&
      !Has(s, "LoRA buffer")) {
    if (HostBufferType(s, " buffer size =")) {
      line.Emit(EventKind::kGgmlModelBuffer, kEngine);
    } else {
      MatchOneValue(line, kEngine,
                    {{"buffer size =", EventKind::kGgmlModelBuffer, Num::kWeightsBytes, true}});
    }
  }
  if (host_line) {
    if (Has(s, "KV buffer size =")) line.Emit(EventKind::kGgmlKvBuffer, kEngine);
    if (Has(s, "model buffer size =")) line.Emit(EventKind::kGgmlModelBuffer, kEngine);
    if (Has(s, "compute buffer size =")) line.Emit(EventKind::kGgmlComputeBuffer, kEngine);
  } else {
    MatchOneValue(
        line, kEngine,
        {{"KV buffer size =", EventKind::kGgmlKvBuffer, Num::kKvCacheBytes, true},
         {"model buffer size =", EventKind::kGgmlModelBuffer, Num::kWeightsBytes, true},
         {"compute buffer size =", EventKind::kGgmlComputeBuffer, Num::kComputeBytes, true}});
  }
  // The KV cache allocated: llama_kv_cache_init (llama.cpp 2024) and llama_kv_cache's
  // constructor (2025+) print the total after allocating it ("llama_new_context_with_model: KV
  // self size  =  640.00 MiB, K (f16): ...", "llama_kv_cache: size = 1224.00 MiB ( 16384 cells,
  // ..."). Context creation (llama_new_context_with_model, later llama_context's constructor)
  // then allocates the small output buffer and reserves the compute graphs (graph_reserve): a
  // failure after this line is past the KV cache.
  // (2023's builds in lower case: "llama_new_context_with_model: kv self size  = 1600.00 MB".)
  if (Has(s, "KV self size") || Has(s, "kv self size") ||
      (Has(s, "llama_kv_cache") && Has(s, ": size ="))) {
    line.Emit(EventKind::kGgmlKvTotal, kEngine);
    auto& e = line.Emit(EventKind::kGgmlKvBuffer, kEngine);
    // Its cells are the context (n_ctx, all slots together): "( 28160 cells, 104 layers, ...".
    if (const size_t at = s.find(" cells,"); at != std::string_view::npos) {
      const size_t open = s.substr(0, at).rfind('(');
      if (open != std::string_view::npos) Set(e, Num::kMaxModelLen, NumberAt(s, open + 1));
    }
  }
  // llama-server has loaded the model and created its context: "main: model loaded",
  // "main: server is listening on http://..." (tools/server/server.cpp).
  if (Has(s, "main: model loaded") || Has(s, "server is listening on")) {
    line.Emit(EventKind::kServing, kEngine);
  }
  // Also the warm-up that follows context creation (common_init_from_params: "warming up the
  // model with an empty run - please wait ... (--no-warmup to disable)").
  if (Has(s, "llama_new_context_with_model") || Has(s, "llama_init_from_model") ||
      Has(s, "sched_reserve") || Has(s, "graph_reserve") ||
      Has(s, "warming up the model with an empty run")) {
    line.Emit(EventKind::kGgmlContextInit, kEngine);
  }
  // The compute graphs' reservation begun, after the KV cache (llama-context.cpp's
  // sched_reserve: "sched_reserve: reserving ...", 2026; graph_reserve: "graph_reserve:
  // reserving a graph for ubatch ...", 2025): a device buffer failing after it is the compute
  // buffer's.
  if (Has(s, "sched_reserve: reserving") || Has(s, "graph_reserve: reserving")) {
    line.Emit(EventKind::kGgmlReserveBegin, kEngine);
  }
  // A host buffer (system RAM, pinned CUDA_Host memory) that could not be allocated, also
  // where a terminal's wrap cut the buffer's name ("unable to allocate CU" + "DA_Host buffer")
  // or a reflow put the buffer on the next line ("unable to" + "allocate CUDA_Host buffer").
  for (std::string_view buffer : {"CPU buffer"sv, "CUDA_Host buffer"sv, "cpu_buffer_type"sv}) {
    const LineView t = Whole(line, buffer);
    if ((!t.empty() && (Has(t, "failed to allocate") || Has(t, "unable to allocate"))) ||
        (!t.empty() && (!WholeBoth(line, "unable to allocate", buffer).empty() ||
                        !WholeBoth(line, "failed to allocate", buffer).empty()))) {
      line.Emit(EventKind::kHostBufferFail, kEngine);
      break;
    }
  }
  // The context's output buffer, the logits (n_vocab floats) and embeddings of each output
  // token, always in host memory: the output device's host buffer type (pinned CUDA_Host) or
  // the CPU's (llama-context.cpp output_reserve: "failed to allocate output buffer of size
  // %.2f MiB", b4000-b6000 and since). The context reserves it for n_seq_max outputs when it
  // is created ("failed to reserve initial output buffer"), and llama_decode/encode grow it to
  // a batch's outputs ("could not reserve space for batch with N outputs": every token of an
  // embedding or perplexity batch is an output); rules.cc GgmlOutputBuffer.
  // The event's text is the message from those words on (what rules.cc reads, wherever the
  // message stands in a line that a lost line end made long).
  for (std::string_view key :
       {"failed to allocate output buffer"sv, "failed to reserve initial output buffer"sv}) {
    const LineView o = Whole(line, key);
    if (o.empty()) continue;
    auto& e = line.Emit(EventKind::kHostBufferFail, kEngine);
    Set(e, Num::kRequestedBytes, BytesAfter(o, "buffer of size"));
    e.values[Num::kHost] = 1;
    e.text = std::string(o.substr(o.find(key), 160));
    break;
  }
  if (!Whole(line, "could not reserve space for batch with").empty()) {
    line.Emit(EventKind::kGgmlDecodeFailed, kEngine);
  }
  // The CPU backend's buffers come from ggml_aligned_malloc (ggml.c: posix_memalign, or
  // _aligned_malloc on Windows), which logs a refusal of host RAM in its own words before the
  // buffer type's "failed to allocate buffer of size": "ggml_aligned_malloc: insufficient memory
  // (attempted to allocate 32768.00 MB)" (ENOMEM; the figure is size / 2^20; ggml.c, 2024+).
  if (const LineView a = Whole(line, "ggml_aligned_malloc: insufficient memory"); !a.empty()) {
    auto& e = line.Emit(EventKind::kHostBufferFail, kEngine);
    if (const auto mb = NumberAfter(a, "attempted to allocate "); mb && *mb > 0) {
      e.values[Num::kRequestedBytes] = *mb * 1024.0 * 1024.0;
    }
    e.values[Num::kHost] = 1;
    e.text = std::string(a.substr(a.find("ggml_aligned_malloc"), 120));
  }
  // ggml_init's own context memory, allocated in host RAM (ggml.c ggml_init: mem_buffer =
  // GGML_ALIGNED_MALLOC(mem_size), then GGML_ASSERT(ctx->mem_buffer != NULL), 2023-2024): the
  // malloc of a context that, in the ggml model loaders of 2023 (gptj_model_load, llama.cpp
  // before its backends), held the weights themselves ("ggml ctx size = 5401.45 MB").
  // Also where a paste reflowed the assertion over three lines ("GGML_ASSERT:", its path
  // "/.../ggml.c:4465:", "ctx->mem_buffer != NULL"): the check after ggml.c's own line.
  if (Has(s, "NULL")) {
    LineView t = WholeBoth(line, "GGML_ASSERT", "mem_buffer != NULL");
    if (t.empty()) t = WholeBoth(line, "ggml.c:", "mem_buffer != NULL");
    // (The quote whole: the fixes read it.)
    if (!t.empty()) line.Emit(EventKind::kHostBufferFail, kEngine).text = t.substr(0, 300);
  }
  // An image of a request being encoded, against the projector's start-up (load, warm-up).
  if (Has(s, "processing image") || Has(s, "encoding image") || Has(s, "image slice") ||
      Has(s, "image/slice") || Has(s, "encode_image") || Has(s, "image_batch_encode") ||
      Has(s, "mtmd_helper_eval")) {
    line.Emit(EventKind::kImage, kEngine);
  } else if (Has(s, "clip_model_load") || Has(s, "clip_model_loader") || Has(s, "mtmd_init") ||
             Has(s, "alloc_compute_meta") || Has(s, "loaded multimodal model") ||
             (Has(s, "warmup") && (Has(s, "clip") || Has(s, "mtmd") || Has(s, "projector")))) {
    line.Emit(EventKind::kMmWarmup, kEngine);
  }
  // The vision projector's tensor loader on a native backtrace (ggml_abort prints one through
  // ggml_print_backtrace after GGML_ASSERT(buffer) fails): mtmd_init_from_file -> clip_init ->
  // clip_model_loader::load_tensors (tools/mtmd/clip.cpp, 2025+), mangled as glibc's
  // backtrace_symbols prints it ("libmtmd.so.0(_ZN17clip_model_loader12load_tensorsER8clip_ctx
  // +0x9b86)") or demangled by gdb. llama-server loads the projector after the model's layers
  // (server_context load_model), so its weight buffer meets a card the layers already filled.
  // Also the projector's size, which its loader prints just before it allocates the weights
  // ("load_hparams: model size: 818.01 MiB", clip.cpp 2025+; "clip_model_load: model size:
  // 595.50 MB", 2024): a device buffer that fails next is theirs.
  if (Has(s, "clip_model_loader12load_tensors") || Has(s, "clip_model_loader::load_tensors") ||
      Has(s, "(_Z9clip_initPKc") || Has(s, " clip_init(") ||
      Has(s, "load_hparams: model size:") || Has(s, "clip_model_load: model size:")) {
    line.Emit(EventKind::kMmprojLoadFrame, kEngine);
  }
  // A multimodal command-line tool given an image: "llama-qwen2vl-cli -m ... --mmproj ...
  // --image facture_1.png" (examples/llava/*-cli.cpp, 2024-2025; tools/mtmd/mtmd-cli.cpp,
  // 2025+). The tool encodes the image after creating its context (rules.cc
  // GgmlReserveForImageArg). Also a command line a terminal cut before its --image.
  const LineView cli = WholeBoth(line, " -m ", " --image ");
  if (!cli.empty() && Has(cli, "-cli")) {
    line.Emit(EventKind::kMmHint, kEngine).text = "--image";
  }
  // A request being served: llama-server's slots (also Ollama's runner).
  // update_slots also clears a slot's cache past the reused prefix before it processes the
  // prompt: "kv cache rm [p0, end)" (server.cpp SLT_INF, 2024-2025, and ik_llama.cpp's
  // "kv cache rm [p0, end) p0=N"), "memory_seq_rm [p0, end)" after the memory API rename.
  // The slot's progress lines ("prompt processing progress, n_past = ...", "prompt processing
  // done"), not a setting's name ("Batch size for prompt processing: 1024", a front end's).
  if (Has(s, "launch_slot_") || Has(s, "slot update_slots") ||
      Has(s, "prompt processing progress") || Has(s, "prompt processing done") ||
      Has(s, "new prompt, n_ctx_slot") || Has(s, "kv cache rm [") || Has(s, "memory_seq_rm [") ||
      // Any slot line about a task (server.cpp's SLT_INF / SLT_WRN: "slot %12s: id %2d | task
      // %d | ...", e.g. "slot create_check: id  0 | task 9827 | created context checkpoint"):
      // a slot only has a task while it serves one.
      (Has(s, "slot ") && Has(s, ": id ") && Has(s, " | task "))) {
    line.Emit(EventKind::kRequest, kEngine);
  }
  // A generation already finished: llama.cpp's timings, which llama_print_timings (2023-2024,
  // "llama_print_timings:        load time = ...") and llama_perf_context_print (its successor)
  // print once a completion is done (llama-cpp-python's _create_completion when verbose, the
  // server's print_timings, llama-cli at its end); and llama-cpp-python's "Llama.generate:
  // prefix-match hit" (llama.py generate, verbose), printed when a prompt shares its start with
  // tokens the context already evaluated: an earlier request ran.
  if (Has(s, "llama_print_timings:") || Has(s, "llama_perf_context_print:") ||
      Has(s, "print_timings: prompt eval time") || Has(s, "Llama.generate: prefix-match hit") ||
      (Has(s, "Llama.generate: ") && Has(s, " prefix-match hit"))) {
    line.Emit(EventKind::kRequest, kEngine);
  }
  // llama-cli's generation set up after the context (tools/main/main.cpp, examples/main before
  // 2025: "sampler seed: ...", "sampler chain: ...", "generate: n_ctx = 4096, n_batch = 2048,
  // ..."): printed after common_init_from_params, whose warm-up decode is therefore done.
  if (Has(s, "generate: n_ctx =") || Has(s, "sampler seed:") || Has(s, "sampler chain:") ||
      Has(s, "== Running in interactive mode. ==")) {
    line.Emit(EventKind::kRequest, kEngine);
  }
  // ggml-metal's check after each buffer it allocates (ggml-metal.m ggml_metal_add_buffer,
  // 2023; ggml_backend_metal_log_allocated_size, 2024+): "warning: current allocated size is
  // greater than the recommended max working set size": the buffers allocated so far exceed the
  // memory Metal keeps resident for the GPU (recommendedMaxWorkingSetSize).
  // (Also where a paste reflowed it: "... is greater than the" + "recommended max working set".)
  if (!Whole(line, "greater than the recommended max working set size").empty()) {
    line.Emit(EventKind::kMetalOverWorkingSet, kEngine);
  }
  // The model's file being read: loading began.
  if (Has(s, "llama_model_loader: loaded meta data")) line.Emit(EventKind::kLoadBegin, kEngine);
  // --fit: the parameters fitted to free device memory (the projector is not counted).
  // "llama_params_fit_impl: context size reduced from 262144 to 16384 -> need ... MiB less";
  // since the fitting moved to common/fit.cpp (2026), "common_params_fit_impl: ..." and
  // "common_fit_params: ...".
  if (Has(s, "llama_params_fit") || Has(s, "common_params_fit") ||
      Has(s, "common_fit_params") || Has(s, "fitting params to device memory")) {
    auto& e = line.Emit(EventKind::kFitAdjust, kEngine);
    if (Has(s, "context size reduced from")) {
      size_t end = 0;
      Set(e, Num::kMaxModelLen, NumberAfter(s, "context size reduced from", 0, &end));
      if (end) Set(e, Num::kEstimatedMaxModelLen, NumberAfter(s, " to ", end));
    }
  }
  // A batch that found no free cells in the KV cache: not an allocation, the cache is full
  // (llama-context.cpp decode: "failed to find KV cache slot for ubatch of size N" to mid 2025,
  // "failed to find a memory slot for batch of size N" after the memory API; llama_decode's
  // "failed to decode, ret = 1"; server.cpp before 2025: "failed to find free space in the KV
  // cache, retrying with smaller batch size").
  if (Has(s, "failed to find KV cache slot") || Has(s, "failed to find a memory slot") ||
      Has(s, "failed to find free space in the KV cache") ||
      (Has(s, "llama_decode") && Has(s, "failed to decode, ret = 1"))) {
    line.Emit(EventKind::kKvCellsFull, kEngine);
  }
  if (ParallelSequences(s)) line.Emit(EventKind::kParallelSequences, kEngine);
  // node-llama-cpp (a Node.js binding of llama.cpp) checks its own estimate against the free
  // memory before it allocates, and refuses (withcatai/node-llama-cpp at ea8d904,
  // src/gguf/insights/utils/resolveContextContextSizeOption.ts; resolveModelGpuLayersOption.ts at
  // f538c45): "InsufficientMemoryError: A context size of 4096 with 4 sequences is too large
  // for the available VRAM" (or "RAM", "VRAM and RAM", "resources"; "with N sequences" above
  // one only), and for a model's layers "Not enough VRAM to fit the model with the specified
  // settings".
  // (The two in that order only: a line holding them the other way round is not the message.)
  const LineView c = WholeBoth(line, "A context size of ", " too large for the available");
  const size_t at = c.empty() ? std::string_view::npos : c.find("A context size of ");
  if (at != std::string_view::npos &&
      c.find(" too large for the available", at) != std::string_view::npos) {
    auto& e = line.Emit(EventKind::kGgmlKvFail, kEngine);
    // The quote is the message whole where a wrap or a reflow parted it (the rules read it).
    if (c.data() != line.text.data()) e.text = std::string(c.substr(at, 300));
    Set(e, Num::kMaxModelLen, NumberAfter(c, "A context size of ", at));
    const size_t end = c.find(" too large for the available", at);
    const std::string_view said = std::string_view(c).substr(at, end - at);
    // (" sequences" alone: the text joined as a terminal wraps reads "sequencesis" where a
    // reflow parted the line at that space.)
    if (said.find(" sequences") != std::string_view::npos) {
      Set(e, Num::kMaxNumSeqs, NumberAfter(said, " with "));
    }
    const std::string_view where = std::string_view(c).substr(end);
    e.values[Num::kHost] = where.find("available VRAM") == std::string_view::npos &&
                                   where.find("available resources") == std::string_view::npos
                               ? 1
                               : 0;
  }
  if (Has(s, "Not enough VRAM to fit the model")) line.Emit(EventKind::kGgmlLoadFail, kEngine);
  // llama-server's decode failing with -2, GGML_STATUS_ALLOC_FAILED (llama_context::decode: a
  // graph's buffer could not be allocated while serving; tools/server "Compute error. ... ret =
  // -2", 2025+; Ollama's runner: "failed to decode batch: llama_decode failed with code -2").
  if ((Has(s, "Compute error.") && Has(s, "ret = -2")) ||
      Has(s, "llama_decode failed with code -2")) {
    line.Emit(EventKind::kGgmlComputeFail, kEngine).values[Num::kDuringDecode] = 1;
  }
  // The 2024 server's decode finding the cells full: "failed to decode the batch: KV cache is
  // full - try increasing it via the context size, i = 0, n_batch = 1, ret = 1" (ret 1: no KV
  // slot), and what it sends the client: "Input prompt is too big compared to KV size. Please
  // try increasing KV size." (examples/server/server.cpp update_slots, 2024-08 to early 2025).
  if (Has(s, "KV cache is full - try increasing it") && Has(s, "ret = 1")) {
    line.Emit(EventKind::kKvCellsFull, kEngine);
  }
  if (Has(s, "Input prompt is too big compared to KV size")) {
    line.Emit(EventKind::kContextExceeded, kEngine);
  }
  // A LoRA adapter's tensors get a weight buffer of their own, after the context
  // (llama-adapter.cpp llama_adapter_lora_init_impl: "failed to allocate buffer for lora
  // adapter", 2024-08+); and -sm row's split weights allocated on each GPU as the loader places
  // them (ggml-cuda.cu ggml_backend_cuda_split_buffer_init_tensor's CUDA check, until 2026-07):
  // weights, in the load.
  if (Has(s, "failed to allocate buffer for lora adapter") ||
      (Has(s, "current device:") && Has(s, "split_buffer_init_tensor"))) {
    line.Emit(EventKind::kGgmlLoadFail, kEngine);
    line.Emit(EventKind::kGgmlAllocFail, kEngine).values[Num::kHost] = 0;
  }
  // ggml-vulkan's dequantization or split-k buffer for one matrix multiplication larger than the
  // device's largest storage buffer (ggml-vulkan.cpp ggml_vk_mul_mat_q_f16 and its siblings:
  // GGML_ABORT "Requested preallocation size is too large"): a compute buffer, growing with the
  // micro-batch.
  if (Has(s, "Requested preallocation size is too large")) {
    line.Emit(EventKind::kGgmlComputeFail, kEngine).values[Num::kDuringDecode] = 1;
  }
  // The model file's mapping refused by the host (llama-mmap.cpp: "mmap failed: Cannot allocate
  // memory", Windows' "MapViewOfFile failed: Not enough memory resources are available"), and
  // the CPU backend's repacked weight buffers (ggml-cpu's CPU_REPACK, CPU_AARCH64, AMX and
  // CPU_KLEIDIAI buffer types): host memory while loading.
  if ((Has(s, "mmap failed") && Has(s, "Cannot allocate memory")) ||
      (Has(s, "MapViewOfFile failed") && Has(s, "Not enough memory"))) {
    line.Emit(EventKind::kHostBufferFail, kEngine).values[Num::kHost] = 1;
  }
  if (Has(s, "allocate") && (Has(s, "CPU_REPACK buffer") || Has(s, "CPU_AARCH64 buffer") ||
                             Has(s, "AMX buffer") || Has(s, "CPU_KLEIDIAI buffer"))) {
    line.Emit(EventKind::kHostBufferFail, kEngine).values[Num::kHost] = 1;
  }
  // The context refused once the model had loaded (common.cpp common_init_from_params: "failed
  // to create context with model"; the 2026 server's "failed to create_context with model";
  // Ollama's runner: "unable to create llama context"): the KV cache and the compute buffers
  // are next, as llama-cpp-python's "Failed to create llama_context" (the LM Studio reader).
  // (Also where a reflow parted the words.)
  if (!Whole(line, "failed to create context with model").empty() ||
      !Whole(line, "failed to create_context with model").empty() ||
      !Whole(line, "unable to create llama context").empty()) {
    line.Emit(EventKind::kGgmlModelBuffer, kEngine);
  }
  // llama-server's answer to a prompt longer than its context, and its decode finding the
  // context full with no room to shift ("Context size has been exceeded.", tools/server 2026
  // builds, where the slot's context reached n_ctx).
  if (Has(s, "exceeds the available context size") || Has(s, "exceed_context_size_error") ||
      Has(s, "Context size has been exceeded")) {
    auto& e = line.Emit(EventKind::kContextExceeded, kEngine);
    Set(e, Num::kPromptTokens, NumberAfter(s, "n_prompt_tokens\":"));
  }
}

// ik_llama.cpp's --fit refusal (see Match): the load failure is one of its lines.
bool IkAutoFitRefused(const Facts& f) {
  const LogEvent* load = f.first_of(EventKind::kGgmlLoadFail);
  return load && IkAutoFitWords(load->text);
}

std::string Say(Words rule, const Facts& f) {
  switch (rule) {
    case Words::kStartupFreeMemory:
      return "ggml-cuda could not create its CUDA context or read the GPU's free memory (\"failed "
             "to initialize CUDA: out of memory\", cudaMemGetInfo), before anything of the "
             "model was allocated: other processes hold the GPU's memory";
    case Words::kKvBuffer:
      if (const LogEvent* kv = f.first_of(EventKind::kGgmlKvFail);
          kv && Has(kv->text, "A context size of")) {
        return "node-llama-cpp refused the context before allocating it: its estimate of the KV "
               "cache and buffers for that context size is more than the free VRAM";
      }
      return "llama.cpp could not allocate the KV cache for the context (-c / n_ctx)";
    case Words::kImageComputeBuffer:
      return "encoding an image (mtmd/clip) needed a compute buffer that does not fit";
    case Words::kDecodeComputeBuffer:
      return "llama.cpp could not grow a compute buffer while decoding";
    case Words::kWarmupComputeBuffer:
      return "llama.cpp's warm-up decode (an empty run right after the context is created) could "
             "not grow a compute buffer: the first graph needs more than the context left";
    case Words::kMetalWorkingSet:
      return "the model's Metal buffers exceed the GPU's recommended working set (ggml-metal "
             "warned as it allocated them), and the first graph computed over them failed: the "
             "weights do not fit what macOS lets the GPU keep resident";
    case Words::kContextComputeBuffer:
      return "llama.cpp could not reserve its compute buffers when creating the context (the "
             "worst-case graph for n_batch/n_ubatch)";
    case Words::kImageBuffer:
      return "encoding an image (mtmd/clip) needed a buffer that does not fit";
    case Words::kProjectorWarmup:
      return f.has(EventKind::kFitAdjust)
                 ? "--fit sized the model and context to the free memory without the vision "
                   "projector; the projector's buffers (its warm-up) then did not fit"
                 : "the vision projector's start-up buffers (its warm-up reservation) do not "
                   "fit next to the model and the context";
    case Words::kProjectorLoad:
      return "the vision projector's weights (the mmproj file, which llama-server loads after "
             "the model's layers) did not fit on the GPU beside the layers already offloaded";
    case Words::kContextExceeded: {
      const auto from = f.get(Num::kMaxModelLen), to = f.get(Num::kEstimatedMaxModelLen);
      if (f.has(EventKind::kFitAdjust) && from && to) {
        return fmt::format(
            "--fit reduced the context from {:.0f} to {:.0f} tokens to fit the free memory; a "
            "request longer than that is refused",
            *from, *to);
      }
      return "a request is longer than the server's context (-c / n_ctx, per slot with -np)";
    }
    case Words::kKvCellsFull:
      return f.has(EventKind::kParallelSequences)
                 ? "the KV cache ran out of cells while serving: its n_ctx cells are shared by "
                   "the sequences decoding at once (-np slots), and together they filled it (no "
                   "allocation failed: llama_decode found no room for the batch)"
                 : "the KV cache ran out of cells while serving: the prompt and the tokens "
                   "generated need more than its n_ctx cells (no allocation failed: "
                   "llama_decode found no room for the batch)";
    case Words::kHostMemory:
      return "a host buffer (system RAM or pinned CUDA_Host memory) could not be allocated for "
             "the part of the model kept on the CPU";
    case Words::kWeightBuffer:
      if (IkAutoFitRefused(f)) {
        return "ik_llama.cpp's --fit refused the model before loading it: its tensors and the "
               "KV cache for the whole context need more than the free memory of the GPUs less "
               "their compute buffers (--fit moves only MoE tensors to the CPU)";
      }
      if (const LogEvent* load = f.first_of(EventKind::kGgmlLoadFail);
          load && Has(load->text, "Not enough VRAM to fit the model")) {
        return "node-llama-cpp refused the model before loading it: the layers it was asked to "
               "put on the GPU (gpuLayers) do not fit the free VRAM by its estimate";
      }
      return "llama.cpp could not allocate the model's weight buffer on the GPU: the layers "
             "offloaded to it (-ngl) do not fit";
    default:
      return "";
  }
}

// node-llama-cpp's own refusals (Match): its options, not llama.cpp's flags
// (LlamaModel.createContext's contextSize and sequences, getLlama().loadModel's gpuLayers).
bool NodeLlamaCppFixes(Cause cause, const Facts& f, Diagnosis* d) {
  const LogEvent* kv = f.first_of(EventKind::kGgmlKvFail);
  const LogEvent* load = f.first_of(EventKind::kGgmlLoadFail);
  const bool node = (kv && Has(kv->text, "A context size of")) ||
                    (load && Has(load->text, "Not enough VRAM to fit the model"));
  if (!node) return false;
  const auto len = f.get(Num::kMaxModelLen);
  const std::string smaller =
      len ? fmt::format("createContext({{contextSize: {}}})",
                        std::max<int64_t>(512, TidyContextLength(static_cast<int64_t>(*len / 2))))
          : std::string("createContext({contextSize: \"auto\"})");
  switch (cause) {
    case Cause::kKvTooManySequences:
      AddFix(d, "createContext({sequences: 1}) (or fewer than now)",
             "each sequence adds its own context's KV cache to the estimate");
      AddFix(d, smaller, "a smaller context per sequence");
      return true;
    case Cause::kKvTooLongContext:
      AddFix(d, smaller, "the KV cache grows linearly with the context size");
      AddFix(d, "createContext({contextSize: \"auto\"})",
             "node-llama-cpp picks the largest context the free memory holds");
      return true;
    case Cause::kHostMemory:
      AddFix(d, smaller + ", or free system RAM",
             "what node-llama-cpp keeps in host memory grows with the context");
      return true;
    case Cause::kWeightsTooLarge:
      AddFix(d, "loadModel({gpuLayers: \"auto\"}) (or a lower number)",
             "keeps the layers that do not fit in host memory");
      AddFix(d, "a smaller quantization of the model", "smaller layers");
      return true;
    default:
      return false;
  }
}

// A larger context for a request longer than it: twice n_ctx, or the prompt's tokens rounded up
// to 1024 where the log gives more; fewer tokens to generate; a quantized cache.
void LargerContextFixes(const Facts& f, Diagnosis* d) {
  const auto n = f.get(Num::kMaxModelLen), prompt = f.get(Num::kPromptTokens);
  double want = n ? *n * 2 : 0;
  if (prompt && *prompt > want) want = std::ceil(*prompt / 1024.0) * 1024.0;
  AddFix(d, want > 0 ? fmt::format("-c {:.0f}", std::min(want, 1048576.0)) : "-c larger",
         "more KV cells: the prompt and the tokens to generate must fit them together");
  AddFix(d, "-n lower (max_tokens), or a shorter prompt", "fewer tokens in the cache");
  AddFix(d, "-ctk q8_0 -ctv q8_0 (with -fa on)",
         "a quantized KV cache: about twice the cells in the same memory");
}

// A context to try below the log's n_ctx: a quarter of it, at least 4,096 tokens, and at most
// half of it (a context of 4,096 or less is halved: never a larger one than the log's).
int64_t LowerContext(double n_ctx) {
  const auto len = static_cast<int64_t>(n_ctx);
  return std::max<int64_t>(std::min<int64_t>(4096, len / 2), TidyContextLength(len / 4));
}

// `with_fit` where the log's build has --fit (common/arg.cpp, b7407+) or shows no build, else
// `without`.
const char* Fit(const Facts& f, const char* with_fit, const char* without) {
  const auto build = f.get(Num::kGgmlBuild);
  return !build || *build >= 7407 ? with_fit : without;
}

bool FixesFor(Cause cause, const Facts& f, Diagnosis* d);

// The fixes, and where the log shows llama.cpp's library lines but neither a build banner nor a
// llama.cpp tool's own line, Ollama's names for the same settings: Ollama's runner prints these
// lines without any of its own in the excerpts its users paste (0.1-0.5), and its users set
// num_ctx, num_batch and num_gpu, not -c, -ub and -ngl.
bool Fixes(Cause cause, const Facts& f, Diagnosis* d) {
  if (!FixesFor(cause, f, d)) return false;
  if (!f.get(Num::kGgmlBuild) && !f.get(Num::kGgmlFrontEnd) && cause != Cause::kFragmentation &&
      !d->fixes.empty()) {
    AddFix(d,
           "under Ollama, the same settings by its names: PARAMETER num_ctx, num_batch, num_gpu "
           "(layers on the GPU) in a Modelfile, or those keys in the API's \"options\"",
           "the log shows llama.cpp's lines and no llama.cpp tool's own; Ollama's runner prints "
           "them the same way");
  }
  return true;
}

bool FixesFor(Cause cause, const Facts& f, Diagnosis* d) {
  if (NodeLlamaCppFixes(cause, f, d)) return true;
  switch (cause) {
    case Cause::kKvTooManySequences:
      if (ValueOf(f.first_of(EventKind::kGgmlKvFail), Num::kRecurrentState)) {
        AddFix(d, "-np 1 (or fewer slots than now)",
               "the recurrent state is kept per slot: each slot costs its own copy");
        AddFix(d, "-c lower", "the attention layers' KV cache, allocated before it, grows with -c");
        AddFix(d, Fit(f, "--fit on (or -ngl lower)", "-ngl lower"),
               "fewer layers on the GPU leave room for the caches");
        return true;
      }
      if (!f.has(EventKind::kKvCellsFull)) return false;
      AddFix(d, "-np 1 (or fewer slots than now)",
             "fewer sequences share the cells: each slot gets more of -c");
      AddFix(d,
             f.get(Num::kMaxModelLen)
                 ? fmt::format("-c {:.0f} with the same -np",
                               std::min(*f.get(Num::kMaxModelLen) * 4, 1048576.0))
                 : std::string("-c larger with the same -np"),
             "more KV cells for the slots together (the KV buffer grows with -c)");
      AddFix(d, "-ctk q8_0 -ctv q8_0 (with -fa on)",
             "a quantized KV cache: about twice the cells in the same memory");
      return true;
    case Cause::kKvTooLongContext: {
      // The cache full as the request or its generation grew (no free cells), or a context no
      // --fit line shows was cut: the request is longer than the context the command set.
      // (llama-cpp-python's own words below.)
      const LogEvent* exceeded = f.first_of(EventKind::kContextExceeded);
      if (f.has(EventKind::kKvCellsFull) ||
          (exceeded && exceeded->text != "llama-cpp-python" && !f.has(EventKind::kFitAdjust))) {
        LargerContextFixes(f, d);
        return true;
      }
      // llama-cpp-python's "llama_decode returned 1" (readers/lm_studio.cc): its Llama(n_ctx=).
      if (const LogEvent* e = f.first_of(EventKind::kContextExceeded);
          e && e->text == "llama-cpp-python") {
        const auto n = f.get(Num::kMaxModelLen);
        AddFix(d, n ? fmt::format("Llama(n_ctx={:.0f})", *n * 2) : "Llama(n_ctx=...) larger",
               "the prompt and the tokens to generate must fit the context together");
        AddFix(d, "max_tokens lower, or a shorter prompt", "fewer tokens in the context");
        return true;
      }
      if (f.has(EventKind::kContextExceeded)) {
        const auto from = f.get(Num::kMaxModelLen);
        AddFix(d, from ? fmt::format("--fit-ctx {:.0f}", *from) : std::string("--fit-ctx N"),
               "the least context --fit may set: it moves layers to the CPU instead");
        AddFix(d, "-ctk q8_0 -ctv q8_0 (with -fa on)",
               "a quantized KV cache: about twice the context in the same memory");
        AddFix(d, "-np 1", "one slot gets the whole context");
        return true;
      }
      const auto len = f.get(Num::kMaxModelLen);
      if (const auto fits = ContextThatFits(f)) {
        AddFix(d, fmt::format("-c {:.0f}", *fits), ContextThatFitsWhy(f, *fits));
      } else {
        AddFix(d,
               len ? fmt::format("-c {}", LowerContext(*len))
                   : "-c lower (a quarter of n_ctx)",
               "a smaller context: the KV cache grows linearly with n_ctx (per slot with -np)");
      }
      AddFix(d, "-ctk q8_0 -ctv q8_0 (with -fa on)",
             "a quantized KV cache: about half the bytes per token");
      return true;
    }
    case Cause::kWeightsTooLarge:
      // ik_llama.cpp's --fit refused (see Match): it counts the KV cache at the full -c with the
      // tensors, and has already put every MoE tensor on the CPU.
      if (IkAutoFitRefused(f)) {
        AddFix(d, "-c lower", "the KV cache --fit places with the layers is sized for the whole "
                              "context");
        AddFix(d, "a smaller quantization of the model", "smaller layers and experts");
        AddFix(d, "-ngl lower without --fit (layers on the CPU)",
               "--fit only moves MoE tensors to the CPU; fewer offloaded layers leave the rest "
               "in host memory");
        return true;
      }
      if (const auto ngl = f.get(Num::kFitAbortedLayers)) {
        AddFix(d, fmt::format("drop -ngl {:.0f} (keep --fit on)", *ngl),
               "--fit gave up because -ngl was set by hand; left to it, it keeps the layers "
               "that do not fit in host memory");
        AddFix(d, "a smaller quantization of the model", "smaller layers, more of them on the GPU");
        return true;
      }
      if (f.has(EventKind::kMetalOverWorkingSet)) {
        // Apple's GPU keeps at most recommendedMaxWorkingSetSize resident (about two thirds to
        // three quarters of the RAM); macOS 14+ lets the wired limit be raised (iogpu sysctl).
        AddFix(d, "-ngl lower, or a smaller quantization of the model",
               "fewer or smaller weight buffers on the GPU, inside its working set");
        AddFix(d, "sudo sysctl iogpu.wired_limit_mb=<MiB> (macOS 14+), where the RAM holds the "
                  "model with room for the system",
               "raises the memory the GPU may keep resident above the default working set");
        return true;
      }
      AddFix(d,
             Fit(f, "--fit on (or -ngl lower / --tensor-split)", "-ngl lower (or --tensor-split)"),
             "keeps the layers that do not fit in host memory");
      return true;
    case Cause::kMultimodalEncoder:
      if (d->stage == "load") {
        AddFix(d, "--no-mmproj-offload", "keeps the vision projector's weights on the CPU");
        AddFix(d, "--no-mmproj", "text-only: llama-server loads no projector (-hf fetches one "
                                 "by default)");
        AddFix(d, "-ngl lower", "fewer layers on the GPU leave room for the projector");
      } else if (d->stage == "profile") {
        AddFix(d, "--no-mmproj-offload", "keeps the vision projector on the CPU");
        if (f.has(EventKind::kFitAdjust)) {
          const double need = f.get(Num::kRequestedBytes).value_or(1024.0 * 1024 * 1024);
          AddFix(d, fmt::format("--fit-target {:.0f}", 1024 + std::ceil(need / (1 << 20))),
                 "a larger free-memory margin per device (MiB) for what --fit does not count");
        } else {
          AddFix(d, "-ngl lower", "fewer layers on the GPU leave room for the projector");
        }
      } else {
        AddFix(d, "smaller images (--image-max-tokens lower where supported) or -ngl lower",
               "the encoder's buffers grow with the image's pixels");
      }
      return true;
    case Cause::kHostMemory:
      // The output buffer (rules.cc GgmlOutputBuffer): n_vocab floats per output token.
      if (const LogEvent* host = f.first_of(EventKind::kHostBufferFail);
          host && Has(host->text, "output buffer")) {
        if (d->stage == "runtime") {
          AddFix(d, "-b lower (a smaller logical batch)",
                 "fewer output tokens per batch (in an embedding or all-logits run every token "
                 "is one): each holds its logits or embedding in the output buffer");
        } else {
          AddFix(d, "-np lower (fewer parallel sequences)",
                 "the context reserves one output row per sequence when it is created");
        }
        AddFix(d, "GGML_CUDA_NO_PINNED=1",
               "plain host memory instead of pinned CUDA_Host buffers (WSL2 and containers cap "
               "pinned memory)");
        AddFix(d, "free system RAM (close other programs, raise the container's memory limit)",
               "the output buffer lives in host memory");
        return true;
      }
      if (d->stage == "profile") {
        AddFix(d, "-ub 256 (a smaller micro-batch) and -c lower",
               "the host-side compute buffer grows with n_ubatch and the context");
        AddFix(d, "GGML_CUDA_NO_PINNED=1",
               "plain host memory instead of pinned CUDA_Host buffers");
        return true;
      }
      // ggml's own context allocated in host RAM and held the whole model: no GPU to move it to.
      if (f.first_of(EventKind::kHostBufferFail) &&
          Has(f.first_of(EventKind::kHostBufferFail)->text, "mem_buffer != NULL")) {
        AddFix(d, "free system RAM (close other programs, raise the container's memory limit), "
                  "or a smaller or more quantized model",
               "ggml's context holds the whole model in host memory");
        return true;
      }
      // Killed while serving, no buffer failing: what llama-server grows in host RAM per request
      // is its prompt cache (--cache-ram, MiB, 8192 by default since late 2025; 0 disables it)
      // and each slot's context checkpoints (--ctx-checkpoints, a count per slot, each the size
      // of the slot's recurrent/SWA state; tools/server/server.cpp, common/arg.cpp).
      if (d->stage == "runtime" && f.has(EventKind::kHostOomKill) &&
          !f.has(EventKind::kHostBufferFail)) {
        AddFix(d, "--cache-ram 0 (or a lower limit in MiB) and --ctx-checkpoints fewer",
               "the server's prompt cache and each slot's context checkpoints grow in host RAM "
               "as requests are served");
        AddFix(d, "-np lower (fewer slots)", "each slot keeps its own checkpoints");
      }
      AddFix(d, "free system RAM (or keep mmap on: no --no-mmap), or -ngl higher",
             "less of the model held in host memory");
      AddFix(d, "GGML_CUDA_NO_PINNED=1", "plain host memory instead of pinned CUDA_Host buffers");
      return true;
    case Cause::kComputeBuffer: {
      // The GGML-era fixed pool (the reader's "memory pool" overflow): a batch larger than the
      // evaluation buffer, sized at load for batches up to 512 tokens (MEM_REQ_EVAL, and the
      // scratch buffers), with device memory to spare.
      if (const LogEvent* c = f.first_of(EventKind::kGgmlComputeFail);
          c && Has(c->text, "memory pool (needed")) {
        AddFix(d, "-b 512 or lower (n_batch; llama-cpp-python: n_batch=512)",
               "the GGML-era evaluation buffers were sized at load for the batches of at most "
               "512 that llama.cpp's own tools allowed; a larger batch outgrows them");
        AddFix(d, "a current llama.cpp (GGUF builds, from August 2023)",
               "its graph allocator sizes the compute buffers from the graph itself");
        return true;
      }
      // Without flash attention the compute buffer holds a micro-batch's attention scores
      // against the whole context; flash attention computes them in tiles.
      if (const auto fa = f.get(Num::kFlashAttention); fa && (*fa == 0 || *fa == 2)) {
        // -fa takes on|off|auto from about b6325, the builds that print the setting as a
        // word; before, it is a switch and the setting prints as a number.
        AddFix(d, *fa == 2 ? "-fa on" : "-fa",
               "the log shows flash attention off: with it the compute buffer holds no "
               "n_ubatch x n_ctx attention scores");
      }
      AddFix(d, "-ub 256 (a smaller micro-batch) and -b 512",
             "the compute buffer grows with n_ubatch");
      // The log's n_ctx, a quarter of it (as for the KV cache above).
      const auto len = f.get(Num::kMaxModelLen);
      AddFix(d,
             len ? fmt::format("-c {} (from n_ctx {:.0f}) or --no-kv-offload", LowerContext(*len),
                               *len)
                 : std::string("-c lower or --no-kv-offload"),
             "leaves more device memory for compute buffers, whose attention part grows with "
             "the context");
      return true;
    }
    case Cause::kFragmentation:
      return false;
    case Cause::kCudagraphCapture:
      // ggml-cuda's CUDA graphs (rules.cc GgmlCudaGraph): GGML_CUDA_DISABLE_GRAPHS (ggml-cuda.cu,
      // 2024+) turns them off.
      AddFix(d, "GGML_CUDA_DISABLE_GRAPHS=1",
             "the decode graph runs without being captured and instantiated as a CUDA graph");
      AddFix(d, "-c lower or -ngl lower", "more free memory for the graph's instantiation");
      return true;
    case Cause::kOtherProcess:
      AddOthersHeldFixes(d, "stop the other programs on the GPU (nvidia-smi / rocm-smi lists them)",
                         Fit(f, "--fit on (without a fixed -ngl), or -ngl lower", "-ngl lower"),
                         "fits the layers and context to the memory actually free");
      return true;
    default:
      AddFix(d, Fit(f, "-ngl lower (or --fit on)", "-ngl lower"),
             "fewer layers on the GPU leave room for the rest");
      AddFix(d, "-c lower", "a smaller KV cache and compute buffer");
      return true;
  }
}

}  // namespace

void AddOthersHeldFixes(Diagnosis* d, const std::string& free_it, const std::string& fewer,
                        const std::string& fewer_effect) {
  // What the other programs held as the model was placed (rules.cc SayGgmlOthers).
  const auto held = d->numbers.find("other_process_bytes");
  AddFix(d, free_it,
         held != d->numbers.end()
             ? fmt::format("they held {:.2f} GiB of the card as the model was placed",
                           held->second / core::kGiBf)
             : std::string("they hold memory the model was to use"));
  AddFix(d, fewer, fewer_effect);
}

namespace {

// llama.cpp's tools print their build once as they start: "build: N (hash) with CC for TARGET"
// (common/common.cpp, b3000+; llama-server, llama-cli) and the older "main: build = N (hash)"
// (examples/main, 2023).
bool BeginsRun(const Line& line) {
  const LineView s = line.view();
  if (Has(s, "main: build = ")) return true;
  const size_t at = line.text.find("build: ");
  return at != std::string_view::npos && Has(s, ") with ") &&
         (at == 0 || line.text[at - 1] == ' ' || line.text[at - 1] == ']');
}

}  // namespace

const Reader& LlamaCppReader() {
  static const Reader kReader = {
      .engine = kEngine,
      .match = Match,
      .milestones = {{EventKind::kLoadBegin, Stage::kLoad},
                     {EventKind::kGgmlModelBuffer, Stage::kKvCache},
                     {EventKind::kGgmlKvBuffer, Stage::kProfile, false, Stage::kKvCache},
                     {EventKind::kServing, Stage::kRuntime},
                     {EventKind::kRequest, Stage::kRuntime}},
      .fixes = Fixes,
      .words = Say,
      .begins_run = BeginsRun,
  };
  return kReader;
}

}  // namespace vramfit::doctor
