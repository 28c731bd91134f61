// Where a checkpoint's bytes come from. A ByteSource is a flat set of named files that can be
// listed, sized and read at an offset; everything above it (the header checks, the inventory)
// is the same whatever the source is. A ModelRef names what a user asked for: a local
// directory or file, an embedded catalog entry, or (once that source exists) a Hugging Face Hub
// repository at a revision.
//
// Sources are read-only and their methods are safe to call from several threads at once.
//
// Example:
//   auto ref = vramfit::ResolveModel("Qwen3-8B");          // local path first, then the catalog
//   auto src = vramfit::OpenLocalDirectory("/models/Qwen3-8B");
//   auto size = (*src)->Size("model.safetensors");
#ifndef VRAMFIT_SOURCE_H_
#define VRAMFIT_SOURCE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vramfit/status.h"

namespace vramfit {

// What kind of thing a MODEL argument named.
enum class ModelKind {
  kLocalDirectory,  // a checkpoint directory (config.json, safetensors files, an index)
  kLocalFile,       // one .safetensors file, or a config.json named directly
  kCatalog,         // an entry of the embedded model catalog (vramfit/catalog.h)
  kHub,             // a Hugging Face Hub repository (not read yet)
};
// "local-directory", "local-file", "catalog", "hub".
const char* ModelKindName(ModelKind kind);

// A model's identity: its kind, the path or id, and a revision where the kind has one.
struct ModelRef {
  ModelKind kind = ModelKind::kLocalDirectory;
  std::string id;        // the path as given, or the catalog id ("qwen3-8b"), or "org/name"
  std::string revision;  // Hub revision ("main", a commit); empty elsewhere
};

// Which ModelRef a MODEL argument is. Precedence: an existing local path (directory or file)
// wins; then a catalog id or repo id ("qwen3-8b", "Qwen/Qwen3-8B"). kNotFound otherwise, naming
// the nearest catalog ids.
Result<ModelRef> ResolveModel(std::string_view model);

// A flat set of files. Names are relative to the source's root ("config.json",
// "model-00001-of-00004.safetensors"); folders are listed with a trailing '/'.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // The whole source, as messages name it: "/models/Qwen3-8B", "catalog:qwen3-8b".
  virtual std::string Label() const = 0;
  // One file's full location for messages about reading it: "/models/Qwen3-8B/config.json".
  virtual std::string Where(std::string_view file) const = 0;
  // The name parse errors start with (the file name; a catalog entry says which entry).
  virtual std::string NameOf(std::string_view file) const { return std::string(file); }
  // The root's entries, sorted by name; folders end in '/'.
  virtual Result<std::vector<std::string>> List() const = 0;
  // A file's length in bytes. kNotFound when absent; kInvalidArgument when the name is not a
  // regular file (a folder, a FIFO, a device): nothing is opened that could block.
  virtual Result<uint64_t> Size(std::string_view file) const = 0;
  // Reads exactly `n` bytes at `offset` into `out`; kCorrupt when the file ends first.
  virtual Status ReadAt(std::string_view file, uint64_t offset, size_t n, char* out) const = 0;
};

// The files of a local directory (only its top level is listed). kNotFound / kInvalidArgument
// when `dir` is not a readable directory.
Result<std::unique_ptr<ByteSource>> OpenLocalDirectory(std::string_view dir);

// Files held in memory, named `label` in messages: for tests, and for callers that already
// have the bytes.
std::unique_ptr<ByteSource> MemorySource(std::string label,
                                         std::map<std::string, std::string> files);

}  // namespace vramfit

#endif  // VRAMFIT_SOURCE_H_
