// ResolveModel (vramfit/source.h): which kind of model a MODEL argument names. Local paths win
// over ids, so a directory called "qwen3-8b" is read rather than the catalog entry; catalog ids
// win over Hub repo ids, and "org/name@revision" or "org/name:file.gguf" is always the Hub.
#include <fmt/format.h>

#include <filesystem>

#include "sources/path_error.h"
#include "vramfit/catalog.h"
#include "vramfit/source.h"

namespace vramfit {

const char* ModelKindName(ModelKind kind) {
  switch (kind) {
    case ModelKind::kLocalDirectory: return "local-directory";
    case ModelKind::kLocalFile: return "local-file";
    case ModelKind::kCatalog: return "catalog";
    case ModelKind::kHub: return "hub";
  }
  return "";
}

Result<ModelRef> ResolveModel(std::string_view model_arg) {
  namespace fs = std::filesystem;
  const std::string model(model_arg);
  if (model.empty()) {
    return Status::InvalidArgument(
        "MODEL is empty: give a directory, a .safetensors file or a catalog id");
  }
  std::error_code ec;
  const fs::path path(model);
  // stat follows links: a FIFO, a device or a socket is a "file" here, and refused by the
  // local source without being opened; a link loop or an unreadable parent is an error of its
  // own, never "does not exist".
  const fs::file_status st = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory) {
    return Status::Io(fmt::format("{}: {}", model, LocalPathError(ec.value())));
  }
  if (fs::exists(st)) {
    return ModelRef{fs::is_directory(st) ? ModelKind::kLocalDirectory : ModelKind::kLocalFile,
                    model, "", ""};
  }
  // "org/name@revision" and "org/name:file" always name the Hub (no catalog id has an '@' or
  // a ':').
  if ((model.find('@') != std::string::npos || model.find(':') != std::string::npos) &&
      model.find('/') != std::string::npos) {
    return ParseHubId(model);
  }
  auto entry = FindCatalogModel(model);
  if (entry.ok()) return ModelRef{ModelKind::kCatalog, entry->id, "", ""};
  if (entry.status().code() != Code::kNotFound) return entry.status();
  if (model.find('/') != std::string::npos) {
    auto hub = ParseHubId(model);
    if (hub.ok()) return hub;
    return Status::NotFound(fmt::format("{}: no such file or directory, {} is not in the model "
                                        "catalog, and {}",
                                        model, model, hub.status().message()));
  }
  return Status::NotFound(
      fmt::format("{}: no such file or directory, and {}", model, entry.status().message()));
}

}  // namespace vramfit
