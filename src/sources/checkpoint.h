// ReadCheckpoint: any ByteSource in, the parsed pieces of a transformers-format checkpoint out
// (config.json's text, every safetensors header the layout names, and what the index and the
// listing say about them). Reads only headers: 8 bytes and the JSON header of each shard, never
// the data region, so a source's cost is its headers' cost whatever the weights weigh.
//
// Layout rules (as transformers' from_pretrained finds weights): model.safetensors.index.json
// and the shards it names; else model.safetensors; else every *.safetensors file at the root,
// sorted by name. Copies of the weights in other layouts (original/, consolidated*.safetensors)
// are noted and skipped.
#ifndef VRAMFIT_SOURCES_CHECKPOINT_H_
#define VRAMFIT_SOURCES_CHECKPOINT_H_

#include <optional>
#include <string>
#include <vector>

#include "vramfit/formats.h"
#include "vramfit/inventory.h"
#include "vramfit/source.h"
#include "vramfit/status.h"

namespace vramfit {

// Most tensors a checkpoint may hold in all its files (the largest real ones hold ~100,000;
// the cap matches SynthesizeTensors'). Headers are read one at a time and only the compact
// lists are kept (~100 bytes a tensor), so this bounds a checkpoint's memory near 0.5 GB
// plus the largest header (at most 100,000,000 bytes) whatever its shards claim.
inline constexpr uint64_t kMaxCheckpointTensors = 5'000'000;

struct CheckpointRequest {
  enum class Weights {
    kNone,     // config only (the inventory is synthesized from it)
    kLayout,   // the weights the directory layout names (see above)
    kOneFile,  // just `weights_file`
  };
  Weights weights = Weights::kLayout;
  std::string weights_file;                // for kOneFile
  std::string config_file = "config.json"; // read when present
  uint64_t max_tensors = kMaxCheckpointTensors;  // in all files; more is a kCorrupt error
};

struct Checkpoint {
  std::optional<std::string> config_json;  // absent when the source has no config file
  std::string config_origin;               // how parse errors name it (ByteSource::NameOf)
  // preprocessor_config.json (the image processor's settings), when the source has one.
  std::optional<std::string> preprocessor_json;
  std::string preprocessor_origin;
  bool has_weights = false;                // at least one safetensors file was read
  std::vector<SafetensorsFile> files;      // in layout order (the index's shard order)
  std::vector<Finding> findings;           // index disagreements (unindexed tensors, total_size)
  std::vector<std::string> notes;          // files read or skipped, and why
};

// Largest config.json and index accepted (a real one is tens of kilobytes / a few megabytes).
inline constexpr uint64_t kMaxConfigBytes = uint64_t{64} << 20;
inline constexpr uint64_t kMaxIndexBytes = uint64_t{512} << 20;

// Errors name the file (ByteSource::Where / NameOf), the offset or key, and what was expected.
Result<Checkpoint> ReadCheckpoint(const ByteSource& source, const CheckpointRequest& request);

}  // namespace vramfit

#endif  // VRAMFIT_SOURCES_CHECKPOINT_H_
