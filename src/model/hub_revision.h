// The Hub revision an engine's command line must name for a model read from the Hugging Face
// Hub: engines load "org/name" at its default branch unless told otherwise (vLLM `--revision`,
// transformers `from_pretrained(..., revision=...)`), so a plan of "org/name@v2" prints it.
#ifndef VRAMFIT_MODEL_HUB_REVISION_H_
#define VRAMFIT_MODEL_HUB_REVISION_H_

#include <string>

#include "vramfit/inventory.h"
#include "vramfit/source.h"

namespace vramfit {

// "" for local, catalog and default-branch ("main") Hub models; the revision otherwise.
inline std::string HubRevision(const Inventory& inv) {
  if (inv.source.kind != ModelKind::kHub || inv.source.revision == "main") return "";
  return inv.source.revision;
}

}  // namespace vramfit

#endif  // VRAMFIT_MODEL_HUB_REVISION_H_
