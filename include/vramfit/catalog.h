// The embedded model catalog: published config.json values of common models, each with a
// note of where the values were read (data/models/*.json, embedded at build time).
//
// An entry may name a `base` entry: its config is the base's with the entry's own keys on
// top (later keys win, as Python's json module does), which is how quantized repos whose
// published config differs only in `quantization_config` are recorded.
//
// Example:
//   auto m = vramfit::FindCatalogModel("qwen3-8b");
//   if (m.ok()) std::cout << m->repo << " from " << m->source << "\n";
#ifndef VRAMFIT_CATALOG_H_
#define VRAMFIT_CATALOG_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vramfit/source.h"
#include "vramfit/status.h"

namespace vramfit {

struct CatalogModel {
  std::string id;        // lower-case catalog id, e.g. "qwen3-30b-a3b-fp8"
  std::string repo;      // Hugging Face repo id
  std::string source;    // where the values were read
  std::string status;    // "verified" | "third-party" | "partial" | "inferred"
  std::string notes;
  std::string base;      // id of the entry this one extends, or empty
  std::string config_json;  // the config (with the base merged in)
  uint64_t published_parameters = 0;  // 0 when none was published
  std::string published_parameters_source;
};

// All entries, sorted by id. Fails only if the embedded data is malformed (a build defect,
// caught by the tests).
Result<std::vector<CatalogModel>> CatalogModels();

// Finds an entry by id or repo id, ignoring case ("Qwen/Qwen3-8B" finds "qwen3-8b").
// kNotFound names up to three near ids.
Result<CatalogModel> FindCatalogModel(std::string_view name);

// Ids of the same model in other weight formats (the entries sharing `id`'s `base` root), `id`
// itself excluded; empty for a name outside the catalog.
std::vector<std::string> CatalogVariants(std::string_view id);

// The entry as a ByteSource holding one file, config.json (parse errors name the entry:
// "catalog:qwen3-8b config").
std::unique_ptr<ByteSource> CatalogSource(const CatalogModel& model);

}  // namespace vramfit

#endif  // VRAMFIT_CATALOG_H_
