// What from_pretrained puts in memory, unit by unit (a decoder layer, the embeddings, lm_head, a
// vision block): each tensor at the load dtype or as its quantizer keeps it, and where
// accelerate's device map sends each unit.
//
// Sizes (modeling_utils.py and quantizers/, transformers 4.57; integrations/accelerate.py 5.0):
//   16/32-bit tensors       elements x the load dtype (dtype / torch_dtype, "auto": the config's)
//   pre-quantized (AWQ, GPTQ, compressed-tensors, fp8, mxfp4, bnb)  as stored
//   load_in_4bit            decoder/vision linears: elements / 2 + one fp32 absmax per 64
//   load_in_8bit            elements + one fp32 scale per output row (SCB)
//   fbgemm_fp8              elements + one fp32 scale per output row
//   lm_head and embeddings  never converted (get_keys_to_not_convert, modules_to_not_convert)
//   MTP layers              not loaded (the model class has no place for them)
#ifndef VRAMFIT_ENGINES_TRANSFORMERS_WEIGHTS_H_
#define VRAMFIT_ENGINES_TRANSFORMERS_WEIGHTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/checked.h"
#include "engines/transformers/transformers.h"
#include "vramfit/inventory.h"
#include "vramfit/status.h"

namespace vramfit::transformers {

// Byte arithmetic that saturates instead of wrapping (hostile shapes stay finite).
inline uint64_t SatAdd(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  return core::CheckedAdd(a, b, &r) ? r : UINT64_MAX;
}
inline uint64_t SatMul(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  return core::CheckedMul(a, b, &r) ? r : UINT64_MAX;
}

// How the weights are made on load.
enum class Quantizer { kNone, kPrequantized, kBnb4, kBnb8, kFbgemmFp8 };

// One unit accelerate places whole (a no-split decoder layer, a leaf module).
struct Unit {
  std::string name;          // "model.layers.3"
  uint64_t bytes = 0;        // in memory after dtype and quantizer
  uint64_t largest_transient = 0;  // the biggest tensor quantized on the GPU while loading
  int64_t layer = -1;        // decoder layer index, -1 for the others
  bool vision = false;       // a unit of the vision tower or its projector
};

struct LoadedWeights {
  std::vector<Unit> units;   // in the model's module order (vision, embeddings, layers, norm,
                             // lm_head)
  uint64_t total = 0;
};

// Units of `inv` loaded with `quantizer`, float tensors at `dtype_bytes` per element.
LoadedWeights LoadWeights(const Inventory& inv, Quantizer quantizer, uint64_t dtype_bytes);

// The memory each device may take for weights (accelerate's max_memory after
// get_balanced_memory), for `gpus` GPUs of `free` bytes each.
struct MaxMemory {
  std::vector<uint64_t> gpu;          // by GPU index
  uint64_t cpu = UINT64_MAX;          // host RAM: unlimited unless given
  bool disk = true;
  std::vector<std::string> notes;
};

// Reads max_memory text: "0=6GiB,cpu=30GiB" or {"0": "6GiB", "cpu": "30GiB"} (accelerate's
// convert_file_size_to_int: GiB = 2^30, GB = 10^9). Missing GPUs: nullopt entries.
struct GivenMaxMemory {
  std::vector<std::pair<int, uint64_t>> gpu;
  bool has_cpu = false;
  uint64_t cpu = 0;
};
Result<GivenMaxMemory> ReadMaxMemory(const std::string& text);

// get_balanced_memory / get_max_memory for a device_map mode (auto, balanced, balanced_low_0,
// sequential) over `gpus` GPUs with `free` bytes each.
MaxMemory BalancedMemory(const LoadedWeights& w, const std::string& mode, int gpus, uint64_t free,
                         const GivenMaxMemory& given);

// infer_auto_device_map: units in order, each on the current device while it fits under that
// device's max memory (less the largest remaining unit on GPU 0 and the CPU, kept free for
// offloaded layers); else the next device (GPU 1 ... cpu, disk). Returns the device of each
// unit.
std::vector<int> InferDeviceMap(const LoadedWeights& w, const MaxMemory& m);

// An explicit device map: JSON {"model.layers.0": 0, "lm_head": "cpu", "": "cuda:0"}; each unit
// goes where its longest matching prefix says. kInvalidArgument for a unit no key covers.
Result<std::vector<int>> ExplicitDeviceMap(const LoadedWeights& w, const std::string& json,
                                           int gpus);

}  // namespace vramfit::transformers

#endif  // VRAMFIT_ENGINES_TRANSFORMERS_WEIGHTS_H_
