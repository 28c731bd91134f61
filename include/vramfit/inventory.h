// Inventory: every tensor of a checkpoint with its role, its bytes and its logical
// parameters, the totals by dtype and by component, the quantization summary and the audit.
//
// An inventory is built the same way whether its tensors were read from safetensors
// headers (exact) or synthesized from a ModelSpec (marked `synthesized`): both go through
// BuildInventory. Parameters are the unquantized model's count: packed 4-bit containers are
// unpacked (an AWQ qweight I32 [K, N/8] is K x N parameters) and scales, zero points, g_idx
// and other quantization metadata are not parameters.
//
// Inventories are made by InspectModel (vramfit/inspect.h).
//
// Example:
//   auto inv = vramfit::InspectModel("Qwen3-8B", {});
//   if (inv.ok()) std::cout << inv->parameters << " parameters\n";
#ifndef VRAMFIT_INVENTORY_H_
#define VRAMFIT_INVENTORY_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vramfit/formats.h"
#include "vramfit/gguf.h"
#include "vramfit/model.h"
#include "vramfit/source.h"
#include "vramfit/status.h"

namespace vramfit {

// What a tensor is for.
enum class Role : uint8_t {
  kEmbedding, kLmHead, kAttnProj, kMlaProj, kLinearAttnProj, kLinearAttnState, kAttnSinks,
  kMlpProj, kExpertProj, kSharedExpertProj, kRouter, kSharedExpertGate, kNorm, kVision,
  kProjector, kMtp, kOther,
};
const char* RoleName(Role r);

// What part of its module a tensor is.
enum class Part : uint8_t {
  kWeight,     // plain or quantized weight values (qweight, weight_packed, *_blocks, F8 weight)
  kBias,
  kQuantMeta,  // scales, zero points, g_idx, weight_shape, global scales, absmax, ...
};

// Coarse groups for the by_component totals, in report order.
enum class Component : uint8_t {
  kEmbedding, kLmHead, kAttention, kLinearAttention, kMlp, kExperts, kSharedExperts, kRouter,
  kNorms, kVision, kAudio, kMtp, kOther,
};
inline constexpr int kComponentCount = 13;
const char* ComponentName(Component c);

// One tensor of an inventory: what the header says and what it is for. 128 bytes and the
// name's heap bytes (the module is a prefix of the name, not a string of its own).
struct TensorEntry {
  TensorInfo info;
  uint64_t parameters = 0;
  int64_t layer = -1;     // decoder layer index, -1 outside layers
  int file = 0;           // index into Inventory::files
  uint32_t module_size = 0;  // module() is the first module_size bytes of info.name
  Role role = Role::kOther;
  Part part = Part::kWeight;
  Component component = Component::kOther;
  bool quantized = false; // stored in a quantized form
  // The name without its last part: "model.layers.0.self_attn.q_proj" (a view into info.name).
  std::string_view module() const { return std::string_view(info.name).substr(0, module_size); }
};

struct DtypeTotal {
  Dtype dtype;
  uint64_t bytes = 0;
  uint64_t tensors = 0;
};

struct ComponentTotal {
  Component component;
  uint64_t bytes = 0;
  uint64_t parameters = 0;
  uint64_t tensors = 0;
};

enum class Severity { kInfo, kWarning, kError };
const char* SeverityName(Severity s);

// One audit result. Codes are stable (docs/audit.md lists them).
struct Finding {
  Severity severity = Severity::kInfo;
  std::string code;     // e.g. "fake-quantization"
  std::string message;
  uint64_t bytes = 0;   // bytes the finding is about
};

struct Audit {
  // Decoder projections (attention q/k/v/o in every form, MLA, linear attention, MLP and
  // expert projections). lm_head, embeddings, routers and vision are not counted here.
  int64_t quantized_linear = 0;
  int64_t unquantized_linear = 0;
  uint64_t quantized_linear_bytes = 0;    // values + metadata of quantized projections
  uint64_t unquantized_linear_bytes = 0;
  uint64_t quant_metadata_bytes = 0;      // scales, zeros, g_idx, ... (all tensors)
  uint64_t quant_values_bytes = 0;        // packed values of quantized projections
  uint64_t quant_parameters = 0;          // logical parameters stored quantized
  std::vector<Finding> findings;
};

struct QuantSummary {
  std::string method = "none";  // as declared by the config ("none" when unquantized)
  int bits = 16;
  int64_t group_size = 0;
  std::string format;           // layout/version/format string
  double effective_bits = 0;    // (values + metadata) x 8 / quantized parameters
};

struct Inventory {
  std::string model;            // what the user named
  ModelRef source;              // what was read: its kind and path or id
  std::string origin;           // as reports print it: the directory, file or "catalog:<id>"
  std::string repo;             // the Hugging Face repo id where known (catalog entries)
  bool synthesized = false;     // tensors derived from the config, not read from headers
  std::string what_if;          // a what-if quantization's label ("AWQ 4-bit g128"); "": none
  // What the what-if leaves out of the file it stands in for (Ollama's gemma3 files hold the
  // vision tower; the what-if is text only), in words; "": nothing known. A plan carries it in
  // Plan::not_counted.
  std::string what_if_lacks;
  uint64_t what_if_lacks_bytes = 0;  // at most this much (the tower at 16 bits); 0: unknown
  // The vision projector the what-if's file comes with, where that is laid out: llama.cpp's
  // -hf REPO:TAG fetches the repo's mmproj beside the model (the header SynthesizeMmproj
  // writes of the catalog entry's tower); null otherwise. A llama.cpp plan counts it as it
  // counts --mmproj FILE, unless the command says --mmproj or --no-mmproj.
  std::shared_ptr<const GgufFile> what_if_mmproj;
  bool has_spec = false;        // a config.json was found and understood
  ModelSpec spec;
  std::vector<std::string> files;  // shard file names (synthesized: one virtual name)
  uint64_t header_bytes = 0;       // JSON header bytes parsed
  std::deque<TensorEntry> tensors;  // blocks, as TensorList: see BuildInventory
  uint64_t total_bytes = 0;
  uint64_t parameters = 0;
  std::vector<DtypeTotal> by_dtype;          // non-empty dtypes, largest first
  std::vector<ComponentTotal> by_component;  // non-empty components, report order
  QuantSummary quantization;
  Audit audit;
  std::vector<std::string> notes;  // catalog source, ignored files, spec warnings
};

// One file's tensors as read (or synthesized), before roles are assigned.
struct FileTensors {
  std::string name;
  TensorList tensors;
  uint64_t header_bytes = 0;
};

// Assigns roles, counts parameters, totals and audits. `spec` may be null (no config.json):
// roles then come from names alone and the audit skips config checks. Each file's list is
// consumed front to back and freed block by block as its entries are made, and the entries
// are blocks too: memory the list gives back is reused, so a list and the inventory made of
// it are never both whole in memory.
Inventory BuildInventory(const ModelSpec* spec, std::vector<FileTensors> files);

// The tensors a checkpoint of this spec holds, per the family's naming and the declared
// quantization layout, as one virtual file with contiguous offsets.
Result<FileTensors> SynthesizeTensors(const ModelSpec& spec);

// The total bytes SynthesizeTensors would give, without building the list.
Result<uint64_t> SynthesizedBytes(const ModelSpec& spec);

}  // namespace vramfit

#endif  // VRAMFIT_INVENTORY_H_
