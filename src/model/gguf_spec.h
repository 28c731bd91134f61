// ModelSpec from a GGUF header's metadata (`{arch}.*` keys, llama.cpp gguf-py constants.py and
// the loader's llama-model.cpp): the layers with their attention kind (full, sliding, MLA,
// linear), per-layer head counts and feed-forward widths, experts, and the quantization the
// file's type mix shows. What a GGUF file does not say (the vision tower of an mmproj file) is
// left empty and noted.
#ifndef VRAMFIT_MODEL_GGUF_SPEC_H_
#define VRAMFIT_MODEL_GGUF_SPEC_H_

#include "vramfit/gguf.h"
#include "vramfit/inventory.h"
#include "vramfit/model.h"
#include "vramfit/status.h"

namespace vramfit {

// kCorrupt naming the key when a required key (general.architecture, {arch}.block_count,
// {arch}.embedding_length) is missing or out of range, or a per-layer array has the wrong
// length. An architecture vramfit has no row for is read as a generic decoder, with a warning.
Result<ModelSpec> ModelSpecFromGguf(const GgufFile& file);

// The GGUF findings of an inventory built from GGUF tensors: the per-tensor type mix of the
// decoder projections, `general.file_type` against that mix, and IQ / imatrix types.
// docs/audit.md lists the codes.
void AuditGguf(const GgufFile& file, Inventory* inv);

}  // namespace vramfit

#endif  // VRAMFIT_MODEL_GGUF_SPEC_H_
