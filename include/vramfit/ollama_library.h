// Ollama library names (`ollama run qwen3:32b`): the embedded table (data/ollama/library.json)
// that maps a library NAME:TAG to the catalog entry with the same shapes and the GGUF file
// type the tag ships. vramfit never downloads a library file: a name found here is planned as
// the GGUF what-if of its catalog entry in that file type (InspectModel does this).
//
// Example:
//   auto m = vramfit::FindOllamaLibraryModel("qwen3:32b");
//   if (m.ok()) std::cout << m->catalog_id << " " << m->file_type << "\n";  // qwen3-32b q4_K_M
#ifndef VRAMFIT_OLLAMA_LIBRARY_H_
#define VRAMFIT_OLLAMA_LIBRARY_H_

#include <string>
#include <string_view>

#include "vramfit/status.h"

namespace vramfit {

struct OllamaLibraryModel {
  std::string name;        // "qwen3:32b": the table's NAME:TAG the given name resolved to
  std::string catalog_id;  // "qwen3-32b"
  std::string file_type;   // "q4_K_M", or the tag's own suffix ("q8_0", "f16", ...)
  std::string source;      // where the entry's facts come from
  std::string note;        // how the entry relates to its catalog model ("" when plain)
};

// True for a word shaped like a library name: no path separator but an optional leading
// "library/" (or "registry.ollama.ai/library/"), no ".gguf", NAME[:TAG] of letters, digits
// and ".-_". Says nothing about the table.
bool LooksLikeOllamaLibraryName(std::string_view word);

// NAME[:TAG] -> the table's entry. TAG is "latest" when absent; "SIZE", "SIZE-VARIANT"
// ("8b-instruct") and either with a type suffix ("32b-q8_0", "7b-instruct-fp16") are read,
// the suffix choosing the file type (q4_K_M, q4_K_S, q5_K_M, q6_K, q8_0, q4_0, fp16, bf16).
// kNotFound, naming the nearest names of the table, when the name is not there;
// kInvalidArgument for a word that is not a library name.
Result<OllamaLibraryModel> FindOllamaLibraryModel(std::string_view name);

// "qwen3:32b, qwen3:14b, qwen2.5:32b": the `n` names of the table nearest to `word`.
std::string NearestOllamaLibraryNames(std::string_view word, size_t n);

}  // namespace vramfit

#endif  // VRAMFIT_OLLAMA_LIBRARY_H_
