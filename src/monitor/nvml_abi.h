// The few NVML C functions and types vramfit calls, declared here from their documented layouts
// so that nothing includes or links the driver's nvml.h: the library is dlopen'ed at run time
// (nvml.cc) and the tests' fake (tests/monitor/fake_nvml.cc) implements the same ABI.
//
// Source: nvml.h of the CUDA Toolkit 12.4 (NVML_API_VERSION 12), the layouts unchanged since
// the _v2 entry points of CUDA 11 and still those of CUDA 12.8:
//   nvmlReturn_t                     int enum; NVML_SUCCESS 0, INSUFFICIENT_SIZE 7, ...
//   nvmlDevice_t                     opaque pointer (struct nvmlDevice_st*)
//   nvmlMemory_t                     { unsigned long long total, free, used; }       (24 bytes)
//   nvmlProcessInfo_v1_t             { unsigned int pid; unsigned long long usedGpuMemory; }
//                                    (16 bytes: 4 of padding after pid)
//   nvmlProcessInfo_t (v2, and v3's) { pid; usedGpuMemory; unsigned int gpuInstanceId,
//                                    computeInstanceId; }                            (24 bytes)
// One 12.2-era nvml.h added `unsigned long long usedGpuCcProtectedMemory` to nvmlProcessInfo_t;
// later headers moved it to nvmlProcessDetail_v1_t and read _v3 with the 24-byte record (as
// nvidia-ml-py 12.550 does). The process buffers here have room for 32-byte records anyway.
// usedGpuMemory is NVML_VALUE_NOT_AVAILABLE (all ones) where the driver cannot tell (WDDM).
#ifndef VRAMFIT_MONITOR_NVML_ABI_H_
#define VRAMFIT_MONITOR_NVML_ABI_H_

#include <cstdint>

namespace vramfit::nvml_abi {

using Return = int;  // nvmlReturn_t
inline constexpr Return kSuccess = 0;                // NVML_SUCCESS
inline constexpr Return kErrorInsufficientSize = 7;  // NVML_ERROR_INSUFFICIENT_SIZE
inline constexpr Return kErrorDriverNotLoaded = 9;   // NVML_ERROR_DRIVER_NOT_LOADED
inline constexpr Return kErrorFunctionNotFound = 13; // NVML_ERROR_FUNCTION_NOT_FOUND

using Device = struct nvmlDevice_st*;  // nvmlDevice_t

struct Memory {  // nvmlMemory_t
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct ProcessInfoV1 {  // nvmlProcessInfo_v1_t
  unsigned int pid;
  unsigned long long usedGpuMemory;
};

struct ProcessInfo {  // nvmlProcessInfo_v2_t, nvmlProcessInfo_t (what _v2 and _v3 fill)
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

static_assert(sizeof(Memory) == 24);
static_assert(sizeof(ProcessInfoV1) == 16);
static_assert(sizeof(ProcessInfo) == 24);

inline constexpr unsigned long long kValueNotAvailable = ~0ULL;  // NVML_VALUE_NOT_AVAILABLE
inline constexpr unsigned int kDeviceNameBufferSize = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE

// The functions' C signatures (extern "C" in nvml.h).
extern "C" {
using InitFn = Return (*)();                                 // nvmlInit_v2
using ShutdownFn = Return (*)();                             // nvmlShutdown
using ErrorStringFn = const char* (*)(Return);               // nvmlErrorString
using GetCountFn = Return (*)(unsigned int*);                // nvmlDeviceGetCount_v2
using GetHandleFn = Return (*)(unsigned int, Device*);       // nvmlDeviceGetHandleByIndex_v2
using GetNameFn = Return (*)(Device, char*, unsigned int);   // nvmlDeviceGetName
using GetMemoryFn = Return (*)(Device, Memory*);             // nvmlDeviceGetMemoryInfo
// nvmlDeviceGetComputeRunningProcesses_v3 and _v2 (ProcessInfo), and the unversioned v1
// (ProcessInfoV1). In: *count = the buffer's capacity; out: the processes written, or
// kErrorInsufficientSize with *count = the processes there are.
using GetProcessesFn = Return (*)(Device, unsigned int*, void*);
}

}  // namespace vramfit::nvml_abi

#endif  // VRAMFIT_MONITOR_NVML_ABI_H_
