// GGUF files over any ByteSource: one header read in bounded steps (a first read of
// kGgufFirstRead bytes, more only when the parser asks, the file's size from the listing), a
// split set's every part, and the mmproj (vision projector) files that sit beside a model.
// Nothing past a header is ever read.
#ifndef VRAMFIT_SOURCES_GGUF_READ_H_
#define VRAMFIT_SOURCES_GGUF_READ_H_

#include <string>
#include <string_view>
#include <vector>

#include "vramfit/gguf.h"
#include "vramfit/source.h"
#include "vramfit/status.h"

namespace vramfit {

// ReadGgufHeader (one file's header over a ByteSource) is declared in vramfit/gguf.h.

// A model in GGUF: its parts in order (one, or each file of a -NNNNN-of-MMMMM.gguf set, each
// checked against split.no / split.count / split.tensors.count), and its mmproj files.
struct GgufModel {
  std::vector<GgufFile> parts;
  std::vector<GgufFile> mmproj;
  std::vector<std::string> notes;
};

// Reads `file` (any part of a split set reads the whole set). With `listing` (the source's
// List()), mmproj files beside it are read too.
Result<GgufModel> ReadGgufModel(const ByteSource& src, std::string_view file,
                                const std::vector<std::string>* listing);

// The GGUF model a directory listing holds: the one .gguf file that is not an mmproj (the
// first part of a split set counts for its set). Empty when the listing holds no model file;
// kInvalidArgument naming them when it holds several.
Result<std::string> FindGgufModelFile(const std::vector<std::string>& listing,
                                      std::string_view label);

// True for a name that reads as a vision projector file ("mmproj-*.gguf", "*mmproj*.gguf").
bool IsMmprojName(std::string_view name);

}  // namespace vramfit

#endif  // VRAMFIT_SOURCES_GGUF_READ_H_
