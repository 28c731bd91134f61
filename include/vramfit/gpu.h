// The embedded GPU catalog (data/gpus.json): each card's total memory as CUDA reports it
// (cudaMemGetInfo / torch "total capacity" / vLLM total_gpu_memory, not the marketing size),
// its compute capability and whether it has FP8 / FP4 tensor cores, with the source of each
// figure and how sure it is.
//
// Example:
//   auto gpu = vramfit::FindGpu("4090");   // also "RTX 4090", "NVIDIA GeForce RTX 4090"
//   if (gpu.ok()) std::cout << gpu->total_bytes << "\n";
#ifndef VRAMFIT_GPU_H_
#define VRAMFIT_GPU_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vramfit/status.h"

namespace vramfit {

struct GpuSpec {
  std::string id;                 // "rtx-4090"
  std::string name;               // as the driver names it
  std::vector<std::string> aliases;
  uint64_t total_bytes = 0;       // as CUDA reports it
  uint64_t nvidia_smi_mib = 0;    // nvidia-smi total (0: not known)
  int marketing_gb = 0;
  std::string compute_capability; // "8.9"; AMD: "gfx942"
  std::string architecture;       // "Ada"
  // Streaming multiprocessors (torch.cuda.get_device_properties().multi_processor_count; 0: not
  // known). Kernels that size a buffer per SM read it (vLLM's Triton top-k/top-p sampler).
  int sm_count = 0;
  bool fp8 = false;               // FP8 tensor cores (sm_89+)
  bool fp4 = false;               // FP4 tensor cores (sm_100 / sm_120)
  std::string vendor;             // "nvidia" | "amd"
  bool unified_memory = false;    // memory shared with the CPU (GH200)
  // NVML answers Not Supported for the memory (nvidia-smi prints [N/A]: GB10): programs that
  // size themselves from NVML see no total.
  bool nvml_memory_unsupported = false;
  // A laptop's GPU (RTX 4090 Laptop GPU: 16 GB, not the desktop card's 24): one per machine,
  // so a search over cards to buy or stack (fit --goal gpus, --gpus-table) leaves it out.
  bool laptop = false;
  std::string confidence;         // direct | weak | inferred | derived
  std::string source;
  std::string notes;
  bool custom = false;            // made from --gpu-memory, not the catalog
  // Set by FindGpu for a name several cards answer to ("a100": the 80 GB card is read, and
  // this holds {"a100-40gb"}): the ids of the other cards, for the caller to name. Empty for
  // an id, alias or driver name of one card.
  std::vector<std::string> also_named;
};

// Every catalog GPU, in catalog order.
Result<std::vector<GpuSpec>> GpuCatalog();

// Finds a GPU by id, alias or driver name, ignoring case, spaces, '-', '_' and the words
// "nvidia", "geforce", "tesla". kNotFound names the nearest ids. A name that several cards
// answer to (data/gpus.json "ambiguous_names": a100, h100, v100, h20, 3060, 3080, 4060 Ti)
// gives the first card listed for it, with the others in also_named.
Result<GpuSpec> FindGpu(std::string_view name);

// Parses a memory size: "24GiB", "24 GiB", "22.5GiB", "24576MiB", "80GB" (10^9), "512MB",
// or a plain byte count (GiB, MiB, G, M are binary; GB, MB, TB decimal). kInvalidArgument says
// what was expected.
Result<uint64_t> ParseMemorySize(std::string_view text);

// A GPU of `total_bytes` for --gpu-memory (no capability known: FP8/FP4 off).
GpuSpec CustomGpu(uint64_t total_bytes);

// An NVIDIA card's compute capability as major x 10 + minor (89 for "8.9"); 0 for an AMD card
// or one whose capability is not known.
int NvidiaComputeCapability(const GpuSpec& gpu);

}  // namespace vramfit

#endif  // VRAMFIT_GPU_H_
