// `vramfit doctor`: read an out-of-memory log (vLLM, SGLang, llama.cpp, Ollama, TGI,
// transformers, PyTorch, nvidia-smi), say at which stage it broke, why, and what fixes it, with
// numbers.
//
//   log bytes ─► ScanLog (streaming, bounded lines) ─► LogScan{events, engines, stats}
//             ─► Diagnose (+ the model and GPU when given: a plan calibrated on the log)
//             ─► Diagnosis{stage, cause, numbers, fixes, evidence}
//
// Stages (vLLM's order): startup, load, profile, kv_cache, cudagraph, warmup, runtime. Causes:
// see docs/doctor.md (weights_too_large, dequantized_copy, unsharded_slice, kv_too_long_context,
// kv_too_many_sequences, kv_no_memory, cudagraph_capture, multimodal_encoder, static_cache,
// activation_peak, sampler_warmup, kernel_warmup, other_process, fragmentation, fp16_fallback,
// offload_dequantized, compute_buffer, host_memory), not_out_of_memory: the log's failure is
// another error (Diagnosis::other_error), and undetermined: the log does not say which.
#ifndef VRAMFIT_DOCTOR_H_
#define VRAMFIT_DOCTOR_H_

#include <cstdint>
#include <istream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vramfit/doctor_events.h"
#include "vramfit/gpu.h"
#include "vramfit/inventory.h"
#include "vramfit/status.h"

namespace vramfit {

// One recognised line. `kind` says what it is (EventKind::kTorchOom, kKvAvailable,
// kMaxLenError, kFrame, ...; vramfit/doctor_events.h); `values` holds its numbers (bytes for
// sizes, plain counts and ratios otherwise) under fixed keys (Num; docs/doctor.md).
struct LogEvent {
  EventKind kind{};
  std::string engine;  // vllm | sglang | llama.cpp | ollama | tgi | transformers | pytorch | ...
  // The record's place in reading order, 1-based: the file's line, except where one line of
  // the file held several records (a log whose line ends were lost, a traceback pasted as a
  // string with escaped line ends): each of them then has a number of its own, so that their
  // order and adjacency read as they would on lines of their own.
  uint64_t line = 0;
  uint64_t file_line = 0;  // the file's line the record is on (0: `line`)
  std::string rank;        // "rank=1", "TP0", "Worker_TP1", ... ("" when none)
  std::map<Num, double> values;
  std::string text;  // frame function name, error text (trimmed, at most 300 bytes)

  // The line to cite to the reader: the file's.
  uint64_t shown_line() const { return file_line ? file_line : line; }
};

struct ScanOptions {
  size_t max_line_bytes = 64 * 1024;  // longer lines are cut here (and counted)
  uint64_t max_events = 100000;       // a flood of matches stops being recorded (counted)
};

struct LogScan {
  std::vector<LogEvent> events;
  uint64_t lines = 0, bytes = 0;
  uint64_t long_lines = 0;    // cut at max_line_bytes
  uint64_t binary_lines = 0;  // lines with NUL or mostly non-text bytes
  uint64_t dropped_events = 0;
  std::vector<std::string> unplaced;  // error-looking lines no rule recognised (first 8)
  std::vector<std::string> engines;   // engines seen, most events first
  // A log of several runs (an engine started again after a failure, two logs concatenated):
  // the events are the last run's; a last run that shows no failure is read with the one
  // before it.
  uint64_t earlier_runs = 0;  // runs that began, and failed, before the one read
  uint64_t run_line = 0;      // the line the run read begins at (0: the log's first)
  // The log was pasted newest first (a console or log viewer that lists the latest line at the
  // top): its line-start timestamps only go backwards. The events are then in time order, each
  // line numbered from the log's last line (1) up.
  bool newest_first = false;
};

// Reads `in` to the end in chunks; memory stays bounded by the line cap and the event cap.
// Fails only on a read error.
Result<LogScan> ScanLog(std::istream& in, const ScanOptions& options = {});

struct Fix {
  std::string
      change;  // "--max-model-len 98304", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
  std::string effect;  // with the numbers it rests on
};

// A failure the log shows that is not an out-of-memory: a CUDA fault, a kernel not built for
// the card, an NCCL or Triton error, a crash, a download, import or Python error.
struct OtherError {
  std::string kind;         // illegal_memory_access | device_assert | ... (docs/doctor.md)
  uint64_t line = 0;        // 1-based
  std::string text;         // the line (trimmed, at most 300 bytes)
  std::string usual_cause;  // what usually causes it; "" when nothing general can be said
};

struct Diagnosis {
  bool found = false;  // something was recognised and diagnosed
  std::string engine;
  std::string stage;  // startup | load | profile | kv_cache | cudagraph | warmup | runtime
  std::string cause;
  std::string summary;         // one sentence
  std::string stage_evidence;  // what decided the stage (the error text, a frame, ...)
  std::map<std::string, double>
      numbers;  // the figures the diagnosis rests on (bytes, tokens, ratios)
  std::vector<Fix> fixes;
  std::vector<std::string> evidence;  // "line 12: ..." for the lines it rests on
  std::vector<std::string> notes;     // plan comparisons, caveats
  // The error when the cause is not_out_of_memory; with an out-of-memory cause, another error
  // the log also shows (mentioned in a note: the out-of-memory wins).
  std::optional<OtherError> other_error;
};

// Optional knowledge of the run: the model (catalog id or checkpoint) and the GPU; with both,
// the run's plan is rebuilt through the engine table from the settings the log shows, compared
// with each reported number and calibrated on what the log measured (the activation and
// non-torch memory; the free memory before and after the load where the engine's reader reads
// it, as SGLang's load-end line gives it: then the model alone suffices, the GPU taken from it).
struct DoctorContext {
  const Inventory* model = nullptr;
  std::optional<GpuSpec> gpu;
  int64_t tensor_parallel_size = 0;  // 0: from the log (ranks seen)
};

Diagnosis Diagnose(const LogScan& scan, const DoctorContext& context = {});

}  // namespace vramfit

#endif  // VRAMFIT_DOCTOR_H_
