// The two readers behind ParseSafetensors (vramfit/formats.h), for the tests and the fuzzer
// that compare them: a fast one for the shape of header writers emit, which gives up on
// anything else, and the full JsonReader one, which accepts every valid header and explains
// every invalid one. ParseSafetensors is ParseSafetensorsWith(..., kFastFirst).
#ifndef VRAMFIT_FORMATS_SAFETENSORS_READERS_H_
#define VRAMFIT_FORMATS_SAFETENSORS_READERS_H_

#include <cstdint>
#include <string_view>

#include "vramfit/formats.h"

namespace vramfit::formats {

enum class HeaderReader {
  kFastFirst,  // the fast reader, then the full one where the fast one gives up
  kFullOnly,   // the full reader alone
  kFastOnly,   // the fast reader alone: Code::kUnsupported where it gives up
};

// ParseSafetensors with the reader chosen; results and messages are the same either way.
Result<SafetensorsFile> ParseSafetensorsWith(std::string_view bytes, uint64_t file_size,
                                             std::string_view origin, HeaderReader reader);

}  // namespace vramfit::formats

#endif  // VRAMFIT_FORMATS_SAFETENSORS_READERS_H_
