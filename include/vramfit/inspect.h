// Inspect: a model (a local checkpoint, a catalog entry) in, its Inventory out. The one
// orchestration over the rooms below it: a ModelRef picks the ByteSource, the checkpoint's
// headers are read and checked, and the inventory is built from them, or synthesized from
// config.json when no weights are there (catalog entries, config-only directories).
//
// Example:
//   auto inv = vramfit::InspectModel("Qwen3-8B", {});
//   if (inv.ok()) std::cout << inv->parameters << " parameters\n";
#ifndef VRAMFIT_INSPECT_H_
#define VRAMFIT_INSPECT_H_

#include <functional>
#include <optional>
#include <string_view>

#include "vramfit/inventory.h"
#include "vramfit/source.h"
#include "vramfit/status.h"

namespace vramfit {

struct InspectOptions {
  // Build the inventory from config.json even when safetensors files are present (for
  // comparing the synthesized inventory with the real one). Default: false.
  bool force_synthesize = false;
  // How Hugging Face Hub ids are read. Default (empty): HubOptionsFromEnvironment().
  std::optional<HubOptions> hub;
  // Progress of a Hub fetch (replaces hub->progress when set). Default: none.
  std::function<void(const HubProgress&)> hub_progress;
  // A what-if: the inventory the unquantized checkpoint would have once quantized this way
  // (MakeWhatIfQuant), synthesized from its config and marked in Inventory::what_if. Default:
  // none.
  std::optional<WhatIfQuant> as_quantized;
  // Read a bare NAME that is no path or id as the Ollama library's NAME:latest too (a
  // NAME:TAG always is; vramfit/ollama_library.h). For commands that run Ollama. Default:
  // false.
  bool ollama_names = false;
  // Read a .gguf path that is not here as the GGUF what-if its file name spells
  // (Qwen3-8B-Q4_K_M.gguf: catalog model qwen3-8b in Q4_K_M), said in Inventory::what_if. For
  // commands that run llama.cpp. Default: false.
  bool gguf_names = false;
};

// MODEL is a local directory, a .safetensors file, a config.json, a catalog id or a Hugging
// Face Hub repo id "org/name[@revision]" (local paths win, then catalog ids; see ResolveModel).
// Directories with only config.json, and catalog ids, give a synthesized inventory. An
// Ollama library name (qwen3:32b) gives the GGUF what-if of its catalog entry in the file
// type its tag ships (vramfit/ollama_library.h).
// Inventory::model is MODEL as given.
Result<Inventory> InspectModel(std::string_view model, const InspectOptions& options);

// The same for a resolved reference (Inventory::model is ref.id).
Result<Inventory> InspectModel(const ModelRef& ref, const InspectOptions& options);

}  // namespace vramfit

#endif  // VRAMFIT_INSPECT_H_
