// Local checkpoints and the inspect entry point. Reads config.json and, from each
// safetensors file, only the 8-byte length and the header (pread; the data region is
// never touched, so hollow checkpoints with sparse data inspect exactly like real ones).
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <cstring>
#include <optional>
#include <set>

#include "core/string_set.h"
#include "core/units.h"
#include "vramfit/catalog.h"
#include "vramfit/inventory.h"

namespace vramfit {
namespace fs = std::filesystem;


namespace {

class File {
 public:
  explicit File(int fd) : fd_(fd) {}
  ~File() { if (fd_ >= 0) ::close(fd_); }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

Status ReadAt(int fd, uint64_t offset, size_t n, char* out, const std::string& path) {
  size_t done = 0;
  while (done < n) {
    const ssize_t r = ::pread(fd, out + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      return Status::Io(
          fmt::format("{}: read failed at byte {}: {}", path, offset + done, std::strerror(errno)));
    }
    if (r == 0) {
      return Status::Corrupt(fmt::format("{}: file ended at byte {} while reading {} bytes at {}",
                                         path, offset + done, n, offset));
    }
    done += static_cast<size_t>(r);
  }
  return Status::Ok();
}

// Opens a regular file for reading; *size gets its length.
Result<std::unique_ptr<File>> OpenRegular(const std::string& path, const std::string& label,
                                          uint64_t* size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Status::NotFound(fmt::format("{}: cannot open: {}", label, std::strerror(errno)));
  auto file = std::make_unique<File>(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0)
    return Status::Io(fmt::format("{}: cannot stat: {}", label, std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    return Status::InvalidArgument(fmt::format("{}: not a regular file", label));
  *size = static_cast<uint64_t>(st.st_size);
  return file;
}

Result<std::string> ReadSmallFile(const std::string& path, uint64_t limit) {
  uint64_t size = 0;
  auto f = OpenRegular(path, path, &size);
  if (!f.ok()) return f.status();
  if (size > limit) {
    return Status::Corrupt(
        fmt::format("{}: {} bytes is larger than the {} this kind of file may have", path, size,
                    core::FormatBytes(limit)));
  }
  std::string data(size, '\0');
  VRAMFIT_RETURN_IF_ERROR(ReadAt((*f)->fd(), 0, size, data.data(), path));
  return data;
}

// Reads the header of one safetensors file.
Result<SafetensorsFile> ReadSafetensorsHeader(const std::string& path, const std::string& label) {
  uint64_t size = 0;
  auto f = OpenRegular(path, label, &size);
  if (!f.ok()) return f.status();
  const int fd = (*f)->fd();
  char prefix[8] = {};
  const size_t first = size < 8 ? static_cast<size_t>(size) : 8;
  VRAMFIT_RETURN_IF_ERROR(ReadAt(fd, 0, first, prefix, label));
  auto n = ParseSafetensorsHeaderLength(std::string_view(prefix, first), size, label);
  if (!n.ok()) return n.status();
  std::string buf(8 + *n + kSafetensorsReadPadding, '\0');  // padding: parsed in place
  std::copy(prefix, prefix + 8, buf.begin());
  VRAMFIT_RETURN_IF_ERROR(ReadAt(fd, 8, *n, buf.data() + 8, label));
  return ParseSafetensors(std::string_view(buf.data(), 8 + *n), size, label, true);
}

FileTensors ToFileTensors(SafetensorsFile&& f) {
  FileTensors out;
  out.name = std::move(f.origin);
  out.tensors = std::move(f.tensors);
  out.header_bytes = f.header_length;
  return out;
}

struct Loaded {
  std::vector<FileTensors> files;
  std::vector<Finding> findings;
  std::vector<std::string> notes;
};

// A sharded checkpoint: the index, then every shard it names.
Result<Loaded> LoadSharded(const fs::path& dir, const std::string& index_name) {
  auto text = ReadSmallFile((dir / index_name).string(), 512ull << 20);
  if (!text.ok()) return text.status();
  auto index = ParseSafetensorsIndex(*text, index_name);
  if (!index.ok()) return index.status();
  Loaded out;
  for (size_t si = 0; si < index->shards.size(); ++si) {
    const std::string& shard = index->shards[si];
    const fs::path p = dir / shard;
    std::error_code ec;
    if (!fs::exists(p, ec)) {
      const auto n = std::count_if(index->weight_map.begin(), index->weight_map.end(),
                                   [&](const auto& e) { return e.shard == si; });
      return Status::NotFound(
          fmt::format("{}: names shard \"{}\" ({} tensors), which does not exist in {}", index_name,
                      shard, n, dir.string()));
    }
    auto file = ReadSafetensorsHeader(p.string(), shard);
    if (!file.ok()) return file.status();
    out.files.push_back(ToFileTensors(std::move(*file)));
  }
  // Every indexed tensor must be in its shard; tensors the index does not name are reported.
  size_t total = 0;
  uint64_t data = 0;
  for (const auto& f : out.files) total += f.tensors.size();
  core::StringViewSet where(total);  // tensor name -> shard index (first shard holding it)
  for (size_t i = 0; i < out.files.size(); ++i) {
    for (const auto& t : out.files[i].tensors) {
      where.Insert(t.name, static_cast<uint32_t>(i));
      data += t.bytes();
    }
  }
  for (const auto& e : index->weight_map) {
    uint32_t at = 0;
    if (!where.Find(e.tensor, &at) || at != e.shard) {
      bool in_shard = false;  // a name held by two shards: look in the right one
      for (const auto& t : out.files[e.shard].tensors) in_shard |= t.name == e.tensor;
      if (!in_shard) {
        return Status::Corrupt(
            fmt::format("{}: names tensor \"{}\" in shard \"{}\", but that shard's "
                        "header does not hold it",
                        index_name, e.tensor, index->shards[e.shard]));
      }
    }
  }
  if (total > index->weight_map.size()) {
    core::StringViewSet indexed(index->weight_map.size());
    for (const auto& e : index->weight_map) indexed.Insert(e.tensor, e.shard);
    uint64_t extra = 0, extra_bytes = 0;
    std::string first_extra;
    for (size_t i = 0; i < out.files.size(); ++i) {
      for (const auto& t : out.files[i].tensors) {
        uint32_t at = 0;
        if (indexed.Find(t.name, &at) && at == i) continue;
        if (extra++ == 0) first_extra = fmt::format("\"{}\" in {}", t.name, out.files[i].name);
        extra_bytes += t.bytes();
      }
    }
    out.findings.push_back(
        {Severity::kWarning, "unindexed-tensors",
         fmt::format("{} tensors ({}) are in shards but not in {} (first: {}); "
                     "loaders that follow the index skip them",
                     extra, core::FormatBytes(extra_bytes), index_name, first_extra),
         extra_bytes});
  }
  if (index->has_total_size && index->total_size != data) {
    const double pct = data ? 100.0 * (static_cast<double>(index->total_size) - data) / data : 0.0;
    out.findings.push_back(
        {Severity::kWarning, "index-total-size",
         fmt::format("{} says total_size {} but the shards' headers hold {} data "
                     "bytes ({:+.3f}%); the headers are what counts",
                     index_name, index->total_size, data, pct),
         data});
  }
  return out;
}

bool EndsWith(const std::string& s, std::string_view suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

Result<Loaded> LoadDirectory(const fs::path& dir, bool* has_weights) {
  Loaded out;
  std::error_code ec;
  if (fs::exists(dir / "model.safetensors.index.json", ec)) {
    *has_weights = true;
    auto l = LoadSharded(dir, "model.safetensors.index.json");
    if (!l.ok()) return l.status();
    out = std::move(*l);
  } else if (fs::exists(dir / "model.safetensors", ec)) {
    *has_weights = true;
    auto f = ReadSafetensorsHeader((dir / "model.safetensors").string(), "model.safetensors");
    if (!f.ok()) return f.status();
    out.files.push_back(ToFileTensors(std::move(*f)));
  } else {
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (entry.is_regular_file(ec) && EndsWith(name, ".safetensors") &&
          name.rfind("consolidated", 0) != 0) {
        found.push_back(name);
      }
    }
    std::sort(found.begin(), found.end());
    for (const auto& name : found) {
      *has_weights = true;
      auto f = ReadSafetensorsHeader((dir / name).string(), name);
      if (!f.ok()) return f.status();
      out.files.push_back(ToFileTensors(std::move(*f)));
    }
    if (found.size() > 1) {
      out.notes.push_back(fmt::format(
          "no model.safetensors.index.json: read all {} .safetensors files", found.size()));
    }
  }
  // Copies of the weights in other layouts are not part of the transformers checkpoint.
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if ((name == "original" && entry.is_directory(ec)) ||
        (name.rfind("consolidated", 0) == 0 && EndsWith(name, ".safetensors"))) {
      out.notes.push_back(fmt::format("ignored {}{}: a copy of the weights in another layout, not "
                                      "loaded by transformers-format engines", name,
                                      entry.is_directory(ec) ? "/" : ""));
    }
  }
  return out;
}

void AddSchemeCheck(const ModelSpec& spec, Inventory* inv) {
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

Result<Inventory> FromConfig(const std::string& config_json, const std::string& origin_label,
                             Result<ModelSpec>* spec_out) {
  *spec_out = ModelSpecFromConfigJson(config_json, origin_label);
  if (!spec_out->ok()) return spec_out->status();
  auto synth = SynthesizeTensors(**spec_out);
  if (!synth.ok()) return synth.status();
  std::vector<FileTensors> files;
  files.push_back(std::move(*synth));
  Inventory inv = BuildInventory(&**spec_out, std::move(files));
  inv.synthesized = true;
  inv.header_bytes = 0;
  return inv;
}

}  // namespace

Result<Inventory> InspectModel(std::string_view model_arg, const InspectOptions& options) {
  const std::string model(model_arg);
  if (model.empty())
    return Status::InvalidArgument(
        "MODEL is empty: give a directory, a .safetensors file or a catalog id");
  std::error_code ec;
  const fs::path path(model);
  if (fs::exists(path, ec)) {
    fs::path dir = fs::is_directory(path, ec) ? path : path.parent_path();
    if (dir.empty()) dir = ".";
    std::optional<std::string> config;
    const fs::path config_path = fs::is_directory(path, ec) ? dir / "config.json"
                                 : (EndsWith(model, ".json") ? path : dir / "config.json");
    if (fs::exists(config_path, ec)) {
      auto text = ReadSmallFile(config_path.string(), 64ull << 20);
      if (!text.ok()) return text.status();
      config = std::move(*text);
    }
    const std::string config_label = config_path.filename().string();
    Loaded loaded;
    bool has_weights = false;
    if (fs::is_directory(path, ec)) {
      if (!options.force_synthesize) {
        auto l = LoadDirectory(path, &has_weights);
        if (!l.ok()) return l.status();
        loaded = std::move(*l);
      }
    } else if (EndsWith(model, ".safetensors")) {
      auto f = ReadSafetensorsHeader(model, path.filename().string());
      if (!f.ok()) return f.status();
      loaded.files.push_back(ToFileTensors(std::move(*f)));
      has_weights = true;
    } else if (EndsWith(model, ".gguf")) {
      return Status::Unsupported(
          fmt::format("{}: GGUF files are not read yet; pass the safetensors "
                      "checkpoint directory or a catalog id",
                      model));
    } else if (!EndsWith(model, ".json")) {
      return Status::InvalidArgument(fmt::format(
          "{}: expected a checkpoint directory, a .safetensors file or a config.json", model));
    }
    if (!has_weights || options.force_synthesize) {
      if (!config) {
        return Status::NotFound(fmt::format(
            "{}: no safetensors files and no config.json: nothing to inspect", dir.string()));
      }
      Result<ModelSpec> spec = Status::NotFound("");
      auto inv = FromConfig(*config, config_label, &spec);
      if (!inv.ok()) return inv.status();
      inv->model = model;
      inv->origin = dir.string();
      inv->notes.insert(inv->notes.begin(),
                        "no safetensors weights read: tensors synthesized from config.json");
      return inv;
    }
    std::optional<ModelSpec> spec;
    if (config) {
      auto s = ModelSpecFromConfigJson(*config, config_label);
      if (!s.ok()) return s.status();
      spec = std::move(*s);
    }
    Inventory inv = BuildInventory(spec ? &*spec : nullptr, std::move(loaded.files));
    inv.model = model;
    inv.origin = fs::is_directory(path, ec) ? path.string() : model;
    for (auto& f : loaded.findings) inv.audit.findings.push_back(std::move(f));
    for (auto& n : loaded.notes) inv.notes.push_back(std::move(n));
    if (!config)
      inv.notes.push_back(
          "no config.json: roles from tensor names only; the config checks were skipped");
    if (spec) AddSchemeCheck(*spec, &inv);
    return inv;
  }
  auto entry = FindCatalogModel(model);
  if (!entry.ok()) {
    if (entry.status().code() != Code::kNotFound) return entry.status();
    std::string msg =
        fmt::format("{}: no such file or directory, and {}", model, entry.status().message());
    if (model.find('/') != std::string::npos) {
      msg +=
          "; reading Hugging Face Hub repos directly is not built yet: download config.json (and "
          "optionally the safetensors files) into a directory and pass that";
    }
    return Status::NotFound(msg);
  }
  Result<ModelSpec> spec = Status::NotFound("");
  auto inv = FromConfig(entry->config_json, "catalog:" + entry->id + " config", &spec);
  if (!inv.ok()) return inv.status();
  inv->model = model;
  inv->origin = "catalog:" + entry->id;
  // Only a real "owner/name" id (inferred entries describe their repo in words).
  if (entry->repo.find('/') != std::string::npos && entry->repo.find(' ') == std::string::npos &&
      entry->repo.find('(') == std::string::npos) {
    inv->repo = entry->repo;
  }
  inv->notes.insert(inv->notes.begin(), fmt::format("catalog entry {} ({}, {}): {}", entry->id,
                                                    entry->repo, entry->status, entry->source));
  if (entry->published_parameters > 0) {
    inv->notes.push_back(fmt::format("published parameter count: {} (as its source states it: {})",
                                     core::FormatCount(entry->published_parameters),
                                     entry->published_parameters_source));
  }
  return inv;
}

}  // namespace vramfit
