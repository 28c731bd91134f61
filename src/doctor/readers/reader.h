// The doctor's log readers: one per engine (readers/<engine>.cc), each a row of one table
// (readers/table.cc) that says how to read the engine's lines, which start-up phase each of its
// events marks, and the engine's own words, fixes and flags. The rest of the doctor knows the
// engines only through these rows.
#ifndef VRAMFIT_DOCTOR_READERS_READER_H_
#define VRAMFIT_DOCTOR_READERS_READER_H_

#include <cctype>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "doctor/facts.h"
#include "doctor/text_scan.h"
#include "vramfit/doctor.h"
#include "vramfit/engine.h"
#include "vramfit/plan.h"

namespace vramfit::doctor {

// Where a line's events go (the scanner, log_scan.cc).
class EventSink {
 public:
  // A new event on the current line, its number, rank and trimmed text set; past the event
  // cap a scratch event that is not kept.
  virtual LogEvent& Emit(EventKind kind, const char* engine) = 0;

 protected:
  ~EventSink() = default;
};

// One line as a reader sees it.
struct Line {
  std::string_view text;  // cleaned of ANSI colours; never empty
  std::string_view rank;  // "rank1", "TP0" or "" (recorded on each event by the scanner)
  EventSink* sink;
  // The previous line's message and this one's, joined by a space, when this line may continue
  // it (the same log prefix, or none): a message wrapped by a terminal or a log collector.
  // Empty otherwise. Readers look here only for a message that neither line holds whole.
  // With the byte pairs of both lines and of the joint, for fast Has().
  LineView joined = {};
  // The previous line was a traceback frame (or this is an IPython "---->" line): a code line
  // here is part of the traceback, not of a notebook cell's source.
  bool after_frame = false;
  // The byte pairs of `text` (see view()); nullptr: none built.
  const Bigrams* bigrams = nullptr;
  // `joined` as a terminal wraps at its width, mid-word: the two parts with the spaces they had
  // and none added. Empty when `joined` is. Its byte pairs are `joined`'s.
  LineView joined_tight = {};
  // The previous line held PyTorch's allocator message or a part of it: this one may continue it
  // (a message wrapped over more than two lines).
  bool after_oom = false;
  // The program a log collector's prefix named for this line ("" when none): journald's unit
  // ("ollama" of "host ollama[4504]: "), docker compose's service ("ollama-1" of
  // "ollama-1  | "), kubectl --prefix's container. The prefix itself is not in `text`.
  std::string_view source = {};
  // `text` with a space at each joint between two letters where the scanner joined the pieces
  // of a line it took for a terminal's wrap (they may have been two words a reflow broke at the
  // same width); empty when it has no such joint. Readers look here last (Whole).
  LineView spaced = {};

  // `text` with its byte pairs, for fast Has().
  LineView view() const { return LineView(text, bigrams); }

  LogEvent& Emit(EventKind kind, const char* engine) const { return sink->Emit(kind, engine); }
};

// `s` without the spaces, tabs and carriage returns around it.
inline std::string_view Trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// The text that holds `key` whole: the line, else the previous line's message and this one's
// joined (at a space, or mid-word as a terminal wraps), else the line with spaces put back where
// the scanner joined a wrap between two letters (Line::spaced); "" when none does. A message the
// previous line held whole is found there again: its event repeats, and the first one's values
// stand.
// The joined texts' pairs and runs are those of this line, the previous one and the seams
// together: a key they cannot hold is in none of the three texts, which one test says.
inline bool NoneCanHold(const Line& line, std::string_view key) {
  return !line.joined.empty() && line.joined.bigrams && !line.joined.bigrams->MayHave(key);
}
inline LineView Whole(const Line& line, std::string_view key) {
  if (!NoneCanHold(line, key)) {
    if (Has(line.view(), key)) return line.view();
    if (Has(line.joined, key)) return line.joined;
    if (Has(line.joined_tight, key)) return line.joined_tight;
  }
  if (!line.spaced.empty() && Has(line.spaced, key)) return line.spaced;
  return {};
}

// A literal key's length from its type (see Has), and the tests that rule most lines out made
// here, where the key's hashes are constants: the line's alone when it continues none, else the
// joined texts'.
template <size_t N>
inline LineView Whole(const Line& line, const char (&key)[N]) {
  const std::string_view k(key, N - 1);
  if (line.joined.empty()) {
    if (Has(line.view(), k)) return line.view();
  } else if (!line.joined.bigrams || line.joined.bigrams->MayHave(k)) {
    return Whole(line, k);
  }
  if (line.spaced.empty()) [[likely]] return {};
  return Has(line.spaced, k) ? line.spaced : LineView();
}

// The text that holds both `first` and the `later` part of one message: the line, else the
// previous line's message and this one's joined as a terminal wraps (mid-word), else joined at
// a space (a paste reflowed at word breaks), when the wrap fell between them or inside `later`
// (this line holds the end of `later` and not `first`; the previous line alone held neither
// whole). "" when neither does.
inline LineView WholeBoth(const Line& line, std::string_view first, std::string_view later) {
  if (NoneCanHold(line, first)) return {};
  const LineView s = line.view();
  if (Has(s, first) && Has(s, later)) return s;
  if (Has(s, first)) return {};
  for (const LineView& j : {line.joined_tight, line.joined}) {
    if (!Has(j, first)) continue;
    // The first `later` after `first` in the joined text ends in this line's part (its last
    // s.size() bytes).
    const size_t at = j.find(later, j.find(first));
    if (at != std::string_view::npos && at + later.size() + s.size() > j.size()) return j;
  }
  return {};
}

template <size_t A, size_t B>
inline LineView WholeBoth(const Line& line, const char (&first)[A], const char (&later)[B]) {
  const std::string_view f(first, A - 1), l(later, B - 1);
  if (line.joined.empty()) {
    return Has(line.view(), f) && Has(line.view(), l) ? line.view() : LineView();
  }
  if (line.joined.bigrams && !line.joined.bigrams->MayHave(f)) return {};
  return WholeBoth(line, f, l);
}

// Sets `key` of `e`. Numbers beyond 10^15 (a petabyte, a quadrillion tokens) are not read: no
// engine prints them, and every later use stays within integer range.
inline void Set(LogEvent& e, Num key, std::optional<double> v) {
  if (v && std::isfinite(*v) && std::abs(*v) <= 1e15) e.values[key] = *v;
}

// Lines that carry one number after a fixed key: an event of `kind` for each key found. A size
// at the line's very end without its unit ("Estimated CUDA graph memory: 118.25" + "GiB total",
// a paste reflowed at that space; "118.2" + "5 GiB", a terminal's cut) is read on the next
// line, from the two joined; a key cut in two is read there too.
struct OneValue {
  std::string_view key;
  EventKind kind;
  Num value;
  bool bytes;
};
// The size after `key` in `t` has its unit (a number without one at the text's end may be cut).
inline std::optional<double> SizeWithUnit(std::string_view t, std::string_view key) {
  size_t end = 0;
  const auto b = BytesAfter(t, key, 0, &end);
  if (!b) return std::nullopt;
  const bool unit = end > 0 && std::isalpha(static_cast<unsigned char>(t[end - 1]));
  size_t last = t.size();
  while (last > 0 && (t[last - 1] == ' ' || t[last - 1] == '\r')) --last;
  return unit || end < last ? b : std::nullopt;
}
inline void MatchOneValue(const Line& line, const char* engine,
                          std::initializer_list<OneValue> table) {
  const LineView s = line.view();
  for (const OneValue& t : table) {
    if (Has(s, t.key)) {
      const auto v = t.bytes ? SizeWithUnit(line.text, t.key) : NumberAfter(line.text, t.key);
      // (A size cut from its unit waits for the next line; a key with no figure is an event.)
      if (t.bytes && !v && NumberAfter(line.text, t.key)) continue;
      Set(line.Emit(t.kind, engine), t.value, v);
      continue;
    }
    if (NoneCanHold(line, t.key)) continue;
    for (const LineView* j : {&line.joined_tight, &line.joined}) {
      if (j->size() <= line.text.size() || !Has(*j, t.key)) continue;
      // The previous line's own event, unless its size waited for its unit.
      const std::string_view before = j->substr(0, j->size() - line.text.size());
      if (Has(before, t.key) && (!t.bytes || SizeWithUnit(before, t.key) ||
                                 !NumberAfter(before, t.key))) {
        break;
      }
      const auto v = t.bytes ? SizeWithUnit(*j, t.key) : NumberAfter(*j, t.key);
      if (!v) continue;
      Set(line.Emit(t.kind, engine), t.value, v);
      break;
    }
  }
}

inline void MatchMethodFrame(const Line& line, const char* engine, std::string_view key) {
  const std::string_view s = line.text;
  const size_t at = s.find(key);
  if (at == std::string_view::npos) return;
  size_t b = at + key.size();
  if (b < s.size() && (s[b] == '\'' || s[b] == '"')) ++b;  // the name quoted (repr)
  size_t end = b;
  while (end < s.size() && end - b < 80 &&
         (std::isalnum(static_cast<unsigned char>(s[end])) || s[end] == '_'))
    ++end;
  line.Emit(EventKind::kFrame, engine).text = std::string(s.substr(b, end - b));
}

// An event that shows a start-up phase was reached.
struct Milestone {
  EventKind kind;
  Stage stage;
  // A capture may follow the phase although its stage sorts after capture (vLLM's kernel warm-up
  // runs before capture; SGLang's EAGLE draft captures its graphs after the target's): a capture
  // line after it, from the same rank, is the furthest phase.
  bool capture_may_follow = false;
  // The phase this one follows in the engine's own order although its stage sorts earlier
  // (llama.cpp reserves its compute graphs, the profile stage, after allocating the KV cache):
  // seen while the furthest phase is that one, it is the furthest.
  std::optional<Stage> follows = std::nullopt;
};

struct Reader {
  // The engine its events name ("vllm", the engine table's name where it has a row; "any" for
  // the engine-neutral hints).
  const char* engine;
  // Emits the events of one line, in order (the table's order is the events' order).
  void (*match)(const Line& line);
  // The phase each event naming this engine shows was reached (the stage of a log that stops).
  std::vector<Milestone> milestones = {};
  // A traceback frame whose file path has this key set (Num::kPathHas...) names the engine;
  // `frame_path_final`: such a frame settles it (a later frame does not change it).
  std::optional<Num> frame_path = std::nullopt;
  bool frame_path_final = false;
  // Tokens per KV block in the engine's "# GPU blocks" line (0: it prints none).
  int64_t kv_block_tokens = 0;
  // Writes its fixes for `cause` into d->fixes; false when it has none for that cause.
  bool (*fixes)(Cause cause, const Facts& f, Diagnosis* d) = nullptr;
  // Its words for a rule that describes its behaviour ("" when it has none).
  std::string (*words)(Words rule, const Facts& f) = nullptr;
  // The engine's own flags the log implies, for rebuilding the run's plan through the engine
  // table (with a note for each); nullptr: the doctor does not rebuild its runs.
  void (*run_flags)(const Facts& f, FlagValues* flags, std::vector<std::string>* notes) = nullptr;
  // The measured terms its log lines give that the engine's planner takes in place of its own
  // estimates (EngineSettings::measured_*), written into `s`; returns the words for them ("free
  // memory before the load X and after it Y, from line N"), "" when the log has none. nullptr:
  // the doctor's engine-neutral calibration alone (activation and non-torch memory).
  std::string (*measured)(const Facts& f, EngineSettings* s) = nullptr;
  // Its fixes and words serve the engines without their own, and it rebuilds the plan of a log
  // whose engine is not recognised (vLLM's, as before the table).
  bool is_default = false;
  // Whether a line is one the engine prints once as it starts (its version banner, its
  // arguments): after a failure, a new run of the log, read in place of the earlier one.
  // nullptr: the engine prints none.
  bool (*begins_run)(const Line& line) = nullptr;
  // The engine it runs on (Ollama runs llama.cpp): a log with this reader's events is this
  // engine's even where the wrapped engine's lines are more.
  const char* wraps = nullptr;
};

// Every reader, in the order each line is matched.
const std::vector<const Reader*>& Readers();
// The reader whose events name `engine`; nullptr when none.
const Reader* FindReader(std::string_view engine);
// The reader marked is_default.
const Reader& DefaultReader();
// The readers to ask for `engine`'s fixes and words, in order: its own, the default one, then
// every other in table order.
std::vector<const Reader*> ReadersFor(std::string_view engine);

// A refusal of a device map that offloaded what did not fit the GPU (bitsandbytes, accelerate,
// the quantizers, optimum: readers/transformers.cc), which the transformers reader reads as the
// load's memory failure.
bool DeviceMapRefusal(std::string_view text);
// A frame of a quantizer (AutoAWQ, AutoGPTQ, GPTQModel, llm-compressor) converting weights.
bool QuantizerFrames(const Facts& f);
// The name of the quantizer a Num::kQuantizerTool value indexes ("autogptq", "gptqmodel",
// "gptq-for-llama", "optimum", "llm-compressor", "auto-round", "autoawq"); "" for none.
std::string_view QuantizerToolName(double index);
// A Marlin repack's frame (gptq_marlin_repack, awq_marlin_repack and their MoE variants: vLLM's
// _custom_ops.py, SGLang's sgl_kernel), which writes a new packed copy of a loaded weight.
bool MarlinRepackFrames(const Facts& f);
// PyTorch's per-process cap ("X allowed;" in the allocator's message, budget_bytes) refused a
// request the card had room for: a fix raising the cap (readers/pytorch.cc).
void AddPerProcessCapFix(const Facts& f, Diagnosis* d);
// A training run's model states out of memory where the weights were already placed: the
// optimizer's step or its states' set-up (OptimizerFrames), or peft upcasting a loaded model
// to float32 (prepare_model_for_kbit_training). Adds their fixes; false when neither is on the
// stack (readers/pytorch.cc).
bool AddTrainingStateFixes(const Facts& f, Diagnosis* d);
// Another program's share of a llama.cpp card (rules.cc GgmlOthersHeldTheCard): `free_it`, with
// what the others held as the model was placed, then `fewer`, whose effect is `fewer_effect`
// (readers/llama_cpp.cc; llama.cpp's and Ollama's words).
void AddOthersHeldFixes(Diagnosis* d, const std::string& free_it, const std::string& fewer,
                        const std::string& fewer_effect);
// Unsloth's merged save out of memory (load_copies.h UnslothMerge): its own setting and the
// merge done elsewhere. False when the log is not one (readers/pytorch.cc).
bool AddUnslothMergeFixes(Cause cause, const Facts& f, Diagnosis* d);

// PyTorch's caching allocator asserting on NVML as it writes its out-of-memory message
// ("NVML_SUCCESS == r INTERNAL ASSERT FAILED"): the out-of-memory, in an assert's words
// (readers/pytorch.cc).
bool NvmlAssertOom(const LineView& s);

// A class of failure that is not an out-of-memory (readers/errors.cc): its name (the JSON
// `other_error.kind`), its words, what usually causes it ("" when nothing general can be said)
// and the steps that find or remove that cause (none of them memory settings).
struct OtherErrorFix {
  const char* change = nullptr;
  const char* effect = nullptr;
};
struct OtherErrorClass {
  const char* name;
  const char* words;
  const char* usual;
  OtherErrorFix fixes[2];
  // The phase such an error strikes in, when no frame or milestone of the log places it (a
  // model's download is its load; a missing driver or module stops the program as it starts).
  std::optional<Stage> unplaced_stage = std::nullopt;
  // The line says a process ended without saying whether memory ended it: the diagnosis says
  // it cannot tell (cause "undetermined"), and a named error or an out-of-memory elsewhere in
  // the log is read instead.
  bool undecided = false;
  // The error's own words name the phase it struck in (SGLang's "other ranks that didn't finish
  // loading"): unplaced_stage is the stage whatever milestone the log reached before it.
  bool stage_stated = false;
  // The limit that stopped the run is a length the program was set up for (a buffer or cache
  // sized at load), not the GPU's memory: a length setting is what to change.
  bool length_setting = false;
};
// The class an other_error event carries; nullptr for any other event.
const OtherErrorClass* OtherErrorOf(const LogEvent& e);
// The class of a Python exception named by nothing more specific, or one that is undecided.
bool IsGenericError(const OtherErrorClass& c);

// The rows, one per file.
const Reader& VllmReader();
const Reader& PytorchReader();
const Reader& SglangReader();
const Reader& LlamaCppReader();
const Reader& TransformersReader();
const Reader& NvidiaSmiReader();
const Reader& OllamaReader();
const Reader& LmStudioReader();
const Reader& KoboldCppReader();
const Reader& LlamaCppPythonReader();
const Reader& TgiReader();
const Reader& TrtllmReader();
const Reader& HintsReader();
const Reader& ErrorsReader();

}  // namespace vramfit::doctor

#endif  // VRAMFIT_DOCTOR_READERS_READER_H_
