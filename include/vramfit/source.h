// Where a checkpoint's bytes come from. A ByteSource is a flat set of named files that can be
// listed, sized and read at an offset; everything above it (the header checks, the inventory)
// is the same whatever the source is. A ModelRef names what a user asked for: a local
// directory or file, an embedded catalog entry, or a Hugging Face Hub repository at a revision
// (read with HTTP range requests: config files and safetensors headers, never the weights).
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
#include <functional>
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
  kHub,             // a Hugging Face Hub repository ("org/name", at `revision`)
};
// "local-directory", "local-file", "catalog", "hub".
const char* ModelKindName(ModelKind kind);

// A model's identity: its kind, the path or id, and a revision where the kind has one.
struct ModelRef {
  ModelKind kind = ModelKind::kLocalDirectory;
  std::string id;        // the path as given, or the catalog id ("qwen3-8b"), or "org/name"
  std::string revision;  // Hub revision ("main", a commit); empty elsewhere
  // One file of a Hub repo to read as the model ("org/name:Q4_K_M/model.gguf": a GGUF file
  // where the repo holds several); empty: the repo's checkpoint.
  std::string file;
};

// Which ModelRef a MODEL argument is. Precedence: an existing local path (directory or file)
// wins; then a catalog id or a catalog entry's repo id ("qwen3-8b", "Qwen/Qwen3-8B"); then a
// Hugging Face Hub repo id, "org/name" or "org/name@revision" (revision "main" when absent; an
// "@revision" always names the Hub, never the catalog). kNotFound otherwise, naming the nearest
// catalog ids.
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
  // A hint that the safetensors headers of `files` (8 bytes, then the header they announce)
  // are read next: a remote source fetches them all at once, in parallel, and answers the
  // reads from memory. Errors are the ones the reads would give. Default: nothing to do.
  virtual Status PrefetchHeaders(const std::vector<std::string>& files) const {
    return Status::Ok();
  }
};

// The files of a local directory (only its top level is listed). kNotFound / kInvalidArgument
// when `dir` is not a readable directory.
Result<std::unique_ptr<ByteSource>> OpenLocalDirectory(std::string_view dir);

// Files held in memory, named `label` in messages: for tests, and for callers that already
// have the bytes.
std::unique_ptr<ByteSource> MemorySource(std::string label,
                                         std::map<std::string, std::string> files);

// How far a Hub fetch has come, for a progress line. Reported only once a fetch has taken
// more than a second, then at most every 100 ms, and once more with `done` set.
struct HubProgress {
  std::string repo;            // "org/name"
  uint64_t requests_done = 0;  // HTTP requests answered so far
  uint64_t requests_total = 0; // known so far (grows as headers announce their lengths)
  uint64_t bytes = 0;          // body bytes received
  double seconds = 0;          // since the fetch began
  bool done = false;
};

// Where and how the Hub is read. Every field states its default; HubOptionsFromEnvironment()
// fills them the way huggingface_hub reads its environment.
struct HubOptions {
  std::string endpoint = "https://huggingface.co";  // HF_ENDPOINT; no trailing '/'
  // Sent as "Authorization: Bearer" to the endpoint's own scheme, host and port only: never
  // across a redirect to another host (the CDN), never in a message. HF_TOKEN, else the file
  // $HF_HOME/token that `huggingface-cli login` writes. Empty: anonymous.
  std::string token;
  // Configs and safetensors headers already fetched, keyed by commit ($HF_HOME/vramfit);
  // empty: no cache.
  std::string cache_dir;
  bool offline = false;               // HF_HUB_OFFLINE=1: the cache only, no request at all
  int max_connections = 16;           // parallel requests (HTTP/2 streams or keep-alive)
  int request_timeout_ms = 30'000;    // one request, connection included
  int total_timeout_ms = 300'000;     // the whole fetch
  int max_retries = 4;                // on 5xx, timeouts and dropped connections
  int backoff_ms = 250;               // first retry's wait; doubled each time, at most 8 s
  std::function<void(const HubProgress&)> progress;  // called on the fetching thread
};

// The defaults above with HF_ENDPOINT, HF_TOKEN (or $HF_HOME/token), HF_HOME (default
// $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface) and HF_HUB_OFFLINE applied.
HubOptions HubOptionsFromEnvironment();

// A Hub repository at ref.revision as a ByteSource: resolves the revision to its commit (the
// API's `sha`) and lists the repo (`siblings`), then fetches config.json and the index in
// parallel; safetensors headers come with PrefetchHeaders. Messages name the URL read.
// Errors: kNotFound (repo, revision or file; "gated" repos say how to get access),
// kIo (network, timeouts, rate limits with their Retry-After), kCorrupt (a server whose
// lengths disagree with what it sent), kUnsupported (offline with nothing cached).
Result<std::unique_ptr<ByteSource>> OpenHubRepo(const ModelRef& ref, const HubOptions& options);

// "org/name" or "org/name@revision" as a ModelRef of kind kHub, or kInvalidArgument saying
// why it is not a repo id (names: letters, digits, '-', '_', '.', at most 96 characters).
Result<ModelRef> ParseHubId(std::string_view text);

}  // namespace vramfit

#endif  // VRAMFIT_SOURCE_H_
