// InspectModel (vramfit/inspect.h): a ModelRef picks its ByteSource, ReadCheckpoint reads the
// headers, and the model room turns them into an Inventory (or synthesizes one from
// config.json). The only place that knows which kinds of model reference exist.
#include "vramfit/inspect.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <memory>
#include <optional>
#include <regex>

#include "core/text.h"
#include "core/units.h"
#include "model/gguf_spec.h"
#include "model/gguf_what_if.h"
#include "sources/checkpoint.h"
#include "sources/gguf_read.h"
#include "vramfit/catalog.h"
#include "vramfit/ollama_library.h"

namespace vramfit {
namespace {

namespace fs = std::filesystem;

bool EndsWith(std::string_view s, std::string_view suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

// Where to read, what to read, and how reports name what was read.
struct ReadPlan {
  std::unique_ptr<ByteSource> source;
  CheckpointRequest request;
  std::string weights_origin;  // origin when weights are read
  std::string config_origin;   // origin when the inventory is synthesized
  std::optional<CatalogModel> entry;
  std::string gguf_file;       // a GGUF model to read instead of a transformers checkpoint
};

Result<ReadPlan> PlanLocal(const ModelRef& ref, const InspectOptions& o) {
  ReadPlan p;
  const fs::path path(ref.id);
  const bool dir = ref.kind == ModelKind::kLocalDirectory;
  fs::path root = dir ? path : path.parent_path();
  if (root.empty()) root = ".";
  auto src = OpenLocalDirectory(root.string());
  if (!src.ok()) return src.status();
  p.source = std::move(*src);
  p.weights_origin = dir ? path.string() : ref.id;
  p.config_origin = root.string();
  if (dir) {
    p.request.weights = o.force_synthesize ? CheckpointRequest::Weights::kNone
                                           : CheckpointRequest::Weights::kLayout;
    // A directory of GGUF files (no safetensors, no config.json) holds a GGUF model.
    auto listing = p.source->List();
    if (!listing.ok()) return listing.status();
    const bool transformers = std::any_of(listing->begin(), listing->end(), [](const auto& n) {
      return EndsWith(n, ".safetensors") || n == "config.json";
    });
    if (!transformers) {
      auto gguf = FindGgufModelFile(*listing, p.source->Label());
      if (!gguf.ok()) return gguf.status();
      p.gguf_file = std::move(*gguf);
    }
    return p;
  }
  const std::string name = path.filename().string();
  if (EndsWith(ref.id, ".safetensors")) {
    p.request.weights = o.force_synthesize ? CheckpointRequest::Weights::kNone
                                           : CheckpointRequest::Weights::kOneFile;
    p.request.weights_file = name;
  } else if (EndsWith(ref.id, ".gguf")) {
    p.gguf_file = name;
  } else if (EndsWith(ref.id, ".json")) {
    p.request.weights = CheckpointRequest::Weights::kNone;
    p.request.config_file = name;
  } else {
    return Status::InvalidArgument(fmt::format(
        "{}: expected a checkpoint directory, a .safetensors file or a config.json", ref.id));
  }
  return p;
}

// A Hub repo: its config.json and the headers of the weights its layout names, over HTTP.
Result<ReadPlan> PlanHub(const ModelRef& ref, const InspectOptions& o) {
  HubOptions hub = o.hub ? *o.hub : HubOptionsFromEnvironment();
  if (o.hub_progress) hub.progress = o.hub_progress;
  auto src = OpenHubRepo(ref, hub);
  if (!src.ok()) return src.status();
  ReadPlan p;
  p.source = std::move(*src);
  p.weights_origin = p.config_origin = p.source->Label();
  p.request.weights = o.force_synthesize ? CheckpointRequest::Weights::kNone
                                         : CheckpointRequest::Weights::kLayout;
  auto listing = p.source->List();
  if (!listing.ok()) return listing.status();
  // "org/name:FILE.gguf" names one GGUF model of the repo (its size request checks it exists).
  if (!ref.file.empty()) {
    if (!EndsWith(ref.file, ".gguf")) {
      return Status::InvalidArgument(fmt::format(
          "{}: \"{}\": only a GGUF file is chosen inside a repo (org/name:FILE.gguf); a "
          "safetensors checkpoint is read whole as org/name", p.source->Label(),
          core::Printable(ref.file)));
    }
    auto size = p.source->Size(ref.file);
    if (!size.ok()) return size.status();
    p.gguf_file = ref.file;
    p.weights_origin = p.source->Label() + ":" + ref.file;
    return p;
  }
  const bool has_safetensors =
      std::any_of(listing->begin(), listing->end(),
                  [](const std::string& f) { return EndsWith(f, ".safetensors"); });
  if (!has_safetensors && !o.force_synthesize) {
    // A repo of GGUF files: its one model is read; several are listed to choose from.
    auto gguf = FindGgufModelFile(*listing, p.source->Label());
    if (!gguf.ok()) {
      return Status(gguf.status().code(),
                    gguf.status().message() + fmt::format(" as {}:FILE.gguf", ref.id));
    }
    if (!gguf->empty()) {
      p.gguf_file = std::move(*gguf);
      p.weights_origin = p.source->Label() + ":" + p.gguf_file;
      return p;
    }
    std::string files;
    for (const auto& f : *listing) {
      if (files.size() > 400) {
        files += ", ...";
        break;
      }
      files += (files.empty() ? "" : ", ") + core::Printable(f);
    }
    return Status::Unsupported(fmt::format(
        "{}: no .safetensors or .gguf files at the repo's top level (it has: {}); a GGUF file "
        "in a folder is read as org/name:FOLDER/FILE.gguf, and `--synthesize` plans from "
        "config.json alone",
        p.source->Label(), files.empty() ? "no files" : files));
  }
  return p;
}

Result<ReadPlan> PlanFor(const ModelRef& ref, const InspectOptions& o) {
  switch (ref.kind) {
    case ModelKind::kLocalDirectory:
    case ModelKind::kLocalFile:
      return PlanLocal(ref, o);
    case ModelKind::kCatalog: {
      auto entry = FindCatalogModel(ref.id);
      if (!entry.ok()) return entry.status();
      ReadPlan p;
      p.source = CatalogSource(*entry);
      p.request.weights = CheckpointRequest::Weights::kNone;
      p.config_origin = p.weights_origin = "catalog:" + entry->id;
      p.entry = std::move(*entry);
      return p;
    }
    case ModelKind::kHub:
      return PlanHub(ref, o);
  }
  return Status::InvalidArgument(fmt::format("{}: unknown kind of model reference", ref.id));
}

void AddSchemeCheck(const ModelSpec& spec, Inventory* inv) {
  // A declared method whose layout is not synthesized (modelopt MIXED_PRECISION, an unknown
  // quant_method) implies no byte count to hold the headers to.
  if (spec.quant.quantized() && spec.quant.layout == QuantLayout::kNone) return;
  auto bytes = SynthesizedBytes(spec);
  if (!bytes.ok()) return;
  const uint64_t implied = *bytes;
  if (implied == 0 || inv->total_bytes == 0) return;
  const double diff = (static_cast<double>(inv->total_bytes) - implied) / implied;
  if (diff > 0.005 || diff < -0.005) {
    inv->audit.findings.push_back(
        {Severity::kWarning, "scheme-bytes-mismatch",
         fmt::format(
             "the headers hold {} but config.json's architecture and declared quantization "
             "imply {} ({:+.1f}%): {}",
             core::FormatBytes(inv->total_bytes), core::FormatBytes(implied), diff * 100.0,
             diff > 0
                 ? "more is stored than declared (unquantized or duplicated modules, extra heads)"
                 : "less is stored than declared (missing modules or stronger quantization)"),
         inv->total_bytes > implied ? inv->total_bytes - implied : implied - inv->total_bytes});
  }
}

// A catalog entry's notes: where its values were read, and its published parameter count.
void AddCatalogNotes(const CatalogModel& entry, Inventory* inv) {
  // Only a real "owner/name" id (inferred entries describe their repo in words).
  if (entry.repo.find('/') != std::string::npos && entry.repo.find(' ') == std::string::npos &&
      entry.repo.find('(') == std::string::npos) {
    inv->repo = entry.repo;
  }
  inv->notes.insert(inv->notes.begin(),
                    fmt::format("catalog entry {} ({}, {}): {}", entry.id, entry.repo,
                                entry.status, entry.source));
  if (entry.published_parameters > 0) {
    inv->notes.push_back(fmt::format("published parameter count: {} (as its source states it: {})",
                                     core::FormatCount(entry.published_parameters),
                                     entry.published_parameters_source));
  }
}

Result<Inventory> Synthesized(const ReadPlan& p, const Checkpoint& ck) {
  if (!ck.config_json) {
    return Status::NotFound(fmt::format(
        "{}: no safetensors files and no config.json: nothing to inspect", p.config_origin));
  }
  auto spec = ModelSpecFromConfigJson(*ck.config_json, ck.config_origin);
  if (!spec.ok()) return spec.status();
  if (ck.preprocessor_json) {
    VRAMFIT_RETURN_IF_ERROR(
        ApplyPreprocessorConfig(*ck.preprocessor_json, ck.preprocessor_origin, &*spec));
  }
  auto synth = SynthesizeTensors(*spec);
  if (!synth.ok()) return synth.status();
  std::vector<FileTensors> files;
  files.push_back(std::move(*synth));
  Inventory inv = BuildInventory(&*spec, std::move(files));
  inv.synthesized = true;
  inv.header_bytes = 0;
  inv.origin = p.config_origin;
  if (p.entry) {
    AddCatalogNotes(*p.entry, &inv);
  } else {
    inv.notes.insert(inv.notes.begin(),
                     "no safetensors weights read: tensors synthesized from config.json");
  }
  return inv;
}

// One file's tensors, moved out of its parsed header for BuildInventory.
FileTensors TakeTensors(std::string& name, TensorList& tensors, uint64_t header_bytes) {
  FileTensors t;
  t.name = std::move(name);
  t.tensors = std::move(tensors);
  t.header_bytes = header_bytes;
  return t;
}

Result<Inventory> FromHeaders(const ReadPlan& p, Checkpoint&& ck) {
  std::optional<ModelSpec> spec;
  if (ck.config_json) {
    auto s = ModelSpecFromConfigJson(*ck.config_json, ck.config_origin);
    if (!s.ok()) return s.status();
    if (ck.preprocessor_json) {
      VRAMFIT_RETURN_IF_ERROR(
          ApplyPreprocessorConfig(*ck.preprocessor_json, ck.preprocessor_origin, &*s));
    }
    spec = std::move(*s);
  }
  std::vector<FileTensors> files;
  files.reserve(ck.files.size());
  for (SafetensorsFile& f : ck.files) {
    files.push_back(TakeTensors(f.origin, f.tensors, f.header_length));
  }
  Inventory inv = BuildInventory(spec ? &*spec : nullptr, std::move(files));
  inv.origin = p.weights_origin;
  for (auto& f : ck.findings) inv.audit.findings.push_back(std::move(f));
  for (auto& n : ck.notes) inv.notes.push_back(std::move(n));
  if (!ck.config_json) {
    inv.notes.push_back(
        "no config.json: roles from tensor names only; the config checks were skipped");
  }
  if (spec) AddSchemeCheck(*spec, &inv);
  return inv;
}

// A GGUF model: its parts (and mmproj files) as the inventory's files, the spec from the
// first part's metadata, and the GGUF audit.
Result<Inventory> FromGguf(const ReadPlan& p) {
  auto listing = p.source->List();
  if (!listing.ok()) return listing.status();
  auto model = ReadGgufModel(*p.source, p.gguf_file, &*listing);
  if (!model.ok()) return model.status();
  const GgufFile& first = model->parts.front();
  std::optional<ModelSpec> spec;
  std::vector<std::string> notes;
  if (first.Architecture() == "clip") {
    notes.push_back("a vision projector (mmproj) file: its tensors are the vision encoder");
  } else if (model->parts.size() == 1) {
    auto s = ModelSpecFromGguf(first);
    if (!s.ok()) return s.status();
    spec = std::move(*s);
  } else {
    // A split set: the first part's metadata, every part's tensors (output.weight, say, may
    // be in the last part, and the spec asks whether it exists).
    GgufFile all;
    all.origin = first.origin;
    all.metadata = first.metadata;
    for (const GgufFile& part : model->parts) {
      all.tensors.insert(all.tensors.end(), part.tensors.begin(), part.tensors.end());
    }
    auto s = ModelSpecFromGguf(all);
    if (!s.ok()) return s.status();
    spec = std::move(*s);
  }
  // The audit's metadata: the first part (split parts after it hold only split.* keys).
  GgufFile meta;
  meta.origin = first.origin;
  meta.metadata = first.metadata;
  std::vector<FileTensors> files;
  for (auto* group : {&model->parts, &model->mmproj}) {
    for (GgufFile& f : *group) files.push_back(TakeTensors(f.origin, f.tensors, f.header_bytes));
  }
  Inventory inv = BuildInventory(spec ? &*spec : nullptr, std::move(files));
  inv.origin = p.weights_origin;
  if (spec && spec->quant.quantized()) {
    inv.quantization.method = "gguf";
    inv.quantization.format = spec->quant.format;
  }
  AuditGguf(meta, &inv);
  for (auto& n : model->notes) inv.notes.push_back(std::move(n));
  for (auto& n : notes) inv.notes.push_back(std::move(n));
  return inv;
}

// A what-if inventory of `read`: synthesized, labelled, with the model and where it came from.
void MarkWhatIf(const Inventory& read, const WhatIfQuant& w, Inventory* inv) {
  inv->synthesized = true;
  inv->what_if = WhatIfLabel(w);
  inv->model = read.model;
  inv->source = read.source;
  inv->origin = read.origin;
  inv->repo = read.repo;
}

// The GGUF what-if of `read`: the header llama.cpp's converter and quantizer would write
// (SynthesizeGguf), read back the way a GGUF file from disk is (ModelSpecFromGguf, the GGUF
// audit), so that the llama.cpp and Ollama planners take it as they take a real file.
Result<Inventory> GgufWhatIf(const Inventory& read, const WhatIfQuant& w) {
  const GgufFtypeInfo* ft = FindGgufFtype(w.method);
  if (ft == nullptr) return Status::InvalidArgument("--as-quantized: not a GGUF file type");
  std::string stem = read.model.empty() ? "model" : read.model;
  if (const size_t slash = stem.find_last_of('/'); slash != std::string::npos) {
    stem = stem.substr(slash + 1);
  }
  auto file = SynthesizeGguf(read.spec, ft->ftype,
                             fmt::format("(what-if) {}-{}.gguf", stem, ft->name));
  if (!file.ok()) return file.status();
  auto spec = ModelSpecFromGguf(*file);
  if (!spec.ok()) return spec.status();
  GgufFile meta;
  meta.origin = file->origin;
  meta.metadata = file->metadata;
  std::vector<FileTensors> files;
  files.push_back(TakeTensors(file->origin, file->tensors, 0));
  Inventory inv = BuildInventory(&*spec, std::move(files));
  MarkWhatIf(read, w, &inv);
  inv.quantization.method = "gguf";
  inv.quantization.format = std::string(ft->name);
  AuditGguf(meta, &inv);
  inv.notes.insert(
      inv.notes.begin(),
      fmt::format("what-if: the GGUF file llama.cpp's convert_hf_to_gguf.py and llama-quantize "
                  "({}) would make of {} ({} parameters, {} bytes as read): per-tensor types "
                  "by llama.cpp's rules, the tokenizer header not counted{}",
                  ft->name, read.origin, read.parameters, read.total_bytes,
                  read.spec.vision.kind != VisionKind::kNone
                      ? "; the vision tower is left out (llama.cpp keeps it in an mmproj file)"
                      : ""));
  return inv;
}

// The what-if inventory of `read`: its spec quantized as `w` asks, synthesized (the quantizer
// writes every tensor anew), with where it came from.
Result<Inventory> WhatIf(const Inventory& read, const WhatIfQuant& w) {
  if (!read.has_spec || read.quantization.method == "gguf") {
    return Status::InvalidArgument(fmt::format(
        "--as-quantized: {} has no config.json to quantize from (a safetensors checkpoint or "
        "a catalog id is needed)",
        read.origin));
  }
  if (w.gguf) return GgufWhatIf(read, w);
  auto spec = WhatIfQuantizedSpec(read.spec, w);
  if (!spec.ok()) return spec.status();
  auto synth = SynthesizeTensors(*spec);
  if (!synth.ok()) return synth.status();
  synth->name = "(what-if)";
  std::vector<FileTensors> files;
  files.push_back(std::move(*synth));
  Inventory inv = BuildInventory(&*spec, std::move(files));
  MarkWhatIf(read, w, &inv);
  inv.notes.insert(inv.notes.begin(),
                   fmt::format("what-if: {} of {} ({} parameters, {} bytes as read); the modules "
                               "the quantizer leaves unquantized by default stay {}",
                               inv.what_if, read.origin, read.parameters, read.total_bytes,
                               DtypeName(spec->dtype)));
  return inv;
}

Result<Inventory> Inspect(const ModelRef& ref, std::string_view name, const InspectOptions& o) {
  if (o.as_quantized) {
    InspectOptions plain = o;
    plain.as_quantized.reset();
    auto read = Inspect(ref, name, plain);
    if (!read.ok()) return read.status();
    return WhatIf(*read, *o.as_quantized);
  }
  auto plan = PlanFor(ref, o);
  if (!plan.ok()) return plan.status();
  if (!plan->gguf_file.empty()) {
    auto inv = FromGguf(*plan);
    if (!inv.ok()) return inv.status();
    inv->model = std::string(name);
    inv->source = ref;
    return inv;
  }
  auto ck = ReadCheckpoint(*plan->source, plan->request);
  if (!ck.ok()) return ck.status();
  if (ref.kind == ModelKind::kLocalDirectory || ref.kind == ModelKind::kLocalFile) {
    // A local config that does not parse is named by its path: the user has several
    // checkpoints on disk and "config.json" alone does not say which one is broken.
    ck->config_origin = plan->source->Where(plan->request.config_file);
    if (!ck->preprocessor_origin.empty()) {
      ck->preprocessor_origin = plan->source->Where(ck->preprocessor_origin);
    }
  }
  auto inv = ck->has_weights ? FromHeaders(*plan, std::move(*ck)) : Synthesized(*plan, *ck);
  if (!inv.ok()) return inv.status();
  inv->model = std::string(name);
  inv->source = ref;
  if (ref.kind == ModelKind::kHub) inv->repo = ref.id;
  return inv;
}

// Catalog entry `id` as it is, without a what-if: its spec and its vision tower.
Result<Inventory> InspectCatalogPlain(const std::string& id, const InspectOptions& o) {
  InspectOptions plain = o;
  plain.as_quantized.reset();
  plain.ollama_names = false;
  plain.gguf_names = false;
  return Inspect(ModelRef{ModelKind::kCatalog, id, "", ""}, id, plain);
}

// The vision tower at 16 bits (0: none): the most a file that holds it beside a text-only
// what-if (Ollama's gemma3 blob, llama.cpp's mmproj) can add.
uint64_t VisionTowerBytes16(const Inventory& full) {
  for (const ComponentTotal& c : full.by_component) {
    if (c.component == Component::kVision) return c.parameters * 2;
  }
  return 0;
}

// An Ollama library name: the GGUF what-if of its catalog entry in the tag's file type, named
// as the user gave it.
Result<Inventory> InspectLibrary(const OllamaLibraryModel& lib, std::string_view name,
                                 const InspectOptions& o) {
  if (o.as_quantized) {
    return Status::InvalidArgument(fmt::format(
        "--as-quantized: \"{}\" is an Ollama library name, whose tag fixes the file type (give "
        "it as {}-q8_0, {}-fp16, ...)", core::Printable(name), lib.name, lib.name));
  }
  auto q = MakeWhatIfQuant(lib.file_type, 0, -2, false);
  if (!q.ok()) return q.status();
  InspectOptions with = o;
  with.as_quantized = *q;
  auto inv = Inspect(ModelRef{ModelKind::kCatalog, lib.catalog_id, "", ""}, lib.catalog_id,
                     with);
  if (!inv.ok()) return inv.status();
  inv->model = std::string(name);
  inv->what_if = fmt::format("{} of Ollama's {}", inv->what_if, lib.name);
  // A part of the library's file the what-if does not hold (the vision tower of Ollama's
  // gemma3 files) is said where the plan prints its what-if, not only in inspect's notes.
  if (lib.note.find("vision tower") != std::string::npos) {
    inv->what_if += fmt::format(" ({})", lib.note);
    inv->what_if_lacks = fmt::format("the vision tower Ollama's {} file also holds (the what-if "
                                     "is its text model only)", lib.name);
    // Its size at 16 bits, from the catalog entry's own tower: the most it can take.
    if (auto full = InspectCatalogPlain(lib.catalog_id, o); full.ok()) {
      inv->what_if_lacks_bytes = VisionTowerBytes16(*full);
    }
  }
  inv->notes.insert(
      inv->notes.begin(),
      fmt::format("Ollama library {}: planned as the GGUF what-if of catalog entry {} in {}, "
                  "not the library's file itself (vramfit does not download it; its size "
                  "error against published GGUF files is in docs/engines/ollama.md){}. Source: "
                  "{}", lib.name, lib.catalog_id, lib.file_type,
                  lib.note.empty() ? "" : "; " + lib.note, lib.source));
  return inv;
}

// A .gguf file that is not here, read by its name: "<model>-<file type>.gguf" (bartowski's and
// Qwen's "Qwen3-8B-Q4_K_M.gguf", TheBloke's "llama-2-7b.Q4_K_M.gguf", a split file's
// "-00001-of-00003" dropped), the model a catalog id or the name part of a catalog repo. The
// GGUF what-if of that entry in that file type stands in for the file; nullopt where the name
// does not spell both.
std::string AsciiLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<Result<Inventory>> InspectGgufName(std::string_view model, const InspectOptions& o) {
  std::string stem(std::filesystem::path(std::string(model)).filename().string());
  if (stem.size() <= 5 || AsciiLower(stem.substr(stem.size() - 5)) != ".gguf") {
    return std::nullopt;
  }
  stem.resize(stem.size() - 5);
  static const std::regex kShard(R"(-\d{5}-of-\d{5}$)");
  stem = std::regex_replace(stem, kShard, "");
  const size_t cut = stem.find_last_of("-.");
  if (cut == std::string::npos || cut == 0) return std::nullopt;
  const std::string type = stem.substr(cut + 1);
  if (FindGgufFtype(type) == nullptr) return std::nullopt;
  const std::string name = stem.substr(0, cut);
  const std::string key = AsciiLower(name);
  std::optional<CatalogModel> entry;
  for (const std::string& candidate : {key, key.rfind("meta-", 0) == 0 ? key.substr(5) : key}) {
    if (auto e = FindCatalogModel(candidate); e.ok()) {
      entry = *e;
      break;
    }
    auto all = CatalogModels();
    if (!all.ok()) return all.status();
    for (const CatalogModel& m : *all) {
      const size_t slash = m.repo.find('/');
      if (slash != std::string::npos && AsciiLower(m.repo.substr(slash + 1)) == candidate) {
        entry = m;
        break;
      }
    }
    if (entry) break;
  }
  if (!entry) return std::nullopt;
  if (o.as_quantized) {
    return Status::InvalidArgument(fmt::format(
        "--as-quantized: {} names its file type ({}) already", core::Printable(model), type));
  }
  auto q = MakeWhatIfQuant(AsciiLower(type), 0, -2, false);
  if (!q.ok()) return q.status();
  InspectOptions with = o;
  with.as_quantized = *q;
  auto inv = Inspect(ModelRef{ModelKind::kCatalog, entry->id, "", ""}, entry->id, with);
  if (!inv.ok()) return inv.status();
  inv->model = std::string(model);
  inv->what_if = fmt::format("{} for the missing file {}", inv->what_if,
                             core::Printable(std::filesystem::path(std::string(model))
                                                 .filename()
                                                 .string()));
  inv->notes.insert(inv->notes.begin(),
                    fmt::format("{} is not here: planned as the GGUF what-if of catalog entry {} "
                                "in {} (the file its name spells; give the file's path to read "
                                "the file itself)",
                                core::Printable(model), entry->id, AsciiLower(type)));
  return inv;
}

}  // namespace

Result<Inventory> InspectModel(std::string_view model, const InspectOptions& options) {
  auto ref = ResolveModel(model);
  if (!ref.ok()) {
    // NAME:TAG (no catalog or Hub id has a ':' without a '/'), or a bare NAME where the
    // caller runs Ollama: the library table.
    const bool tagged = model.find(':') != std::string_view::npos;
    if (ref.status().code() == Code::kNotFound && LooksLikeOllamaLibraryName(model) &&
        (tagged || options.ollama_names)) {
      auto lib = FindOllamaLibraryModel(model);
      if (lib.ok()) return InspectLibrary(*lib, model, options);
      if (tagged) return lib.status();
    }
    if (ref.status().code() == Code::kNotFound && options.gguf_names) {
      if (auto inv = InspectGgufName(model, options)) return std::move(*inv);
    }
    return ref.status();
  }
  auto inv = Inspect(*ref, model, options);
  // llama.cpp's -hf org/Name-GGUF:Q4_K_M where the Hub cannot be reached (no network): the
  // what-if the file name Name-Q4_K_M.gguf spells, saying why.
  if (!inv.ok() && inv.status().code() == Code::kIo && options.gguf_names &&
      ref->kind == ModelKind::kHub && !ref->file.empty()) {
    std::string repo = ref->id.substr(ref->id.find('/') + 1);
    if (repo.size() > 5 && AsciiLower(repo.substr(repo.size() - 5)) == "-gguf") {
      repo.resize(repo.size() - 5);
    }
    std::string tag = ref->file.substr(0, ref->file.find('/'));
    if (tag.ends_with(".gguf")) tag = std::filesystem::path(tag).stem().string();
    const std::string spelled = tag.find(repo) == 0 ? tag + ".gguf" : repo + "-" + tag + ".gguf";
    if (auto named = InspectGgufName(spelled, options); named && named->ok()) {
      Inventory out = std::move(**named);
      out.model = std::string(model);
      // The transfer's own words, without the long advice that follows them.
      std::string why = inv.status().message();
      why = why.substr(0, std::min<size_t>(why.find(" ("), 160));
      out.what_if = fmt::format("{} for the Hub file {} (the Hub was not reached: {})",
                                out.what_if.substr(0, out.what_if.find(" for the missing file ")),
                                core::Printable(model), core::Printable(why));
      // -hf REPO:TAG (not a file named by -hff) also fetches the vision projector the Hub's
      // manifest names for the repo (common/arg.cpp common_params_handle_model at ec98e2002:
      // an mmprojFile, used unless --no-mmproj or --mmproj FILE) and llama-server loads it.
      // A model with a vision tower has one in the usual GGUF repos; the what-if is text only.
      auto full = !ref->file.ends_with(".gguf") && out.source.kind == ModelKind::kCatalog
                      ? InspectCatalogPlain(out.source.id, options)
                      : Result<Inventory>(Status::NotFound("no catalog entry"));
      if (const uint64_t tower = full.ok() ? VisionTowerBytes16(*full) : 0; tower > 0) {
        out.what_if_lacks =
            "the vision projector (mmproj) -hf also fetches and loads where the repo has one "
            "(its encoder's compute buffer is not bounded here: --mmproj FILE counts both, "
            "--no-mmproj leaves both out)";
        out.what_if_lacks_bytes = tower;
        // Where its projector type is laid out, the plan counts it instead: weights and the
        // encoder's warm-up compute buffer, as for --mmproj FILE.
        auto mm = SynthesizeMmproj(
            full->spec, tower,
            fmt::format("the mmproj -hf fetches with {} (what-if: the catalog model's vision "
                        "tower at 16 bits)", core::Printable(model)));
        if (mm.ok()) out.what_if_mmproj = std::make_shared<const GgufFile>(std::move(*mm));
      }
      return out;
    }
  }
  return inv;
}

Result<Inventory> InspectModel(const ModelRef& ref, const InspectOptions& options) {
  return Inspect(ref, ref.id, options);
}

}  // namespace vramfit
