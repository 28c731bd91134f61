// NVML loaded at run time: dlopen of libnvidia-ml.so.1 (or the library the options or
// $VRAMFIT_NVML_LIBRARY name), the functions looked up by name (nvml_abi.h), the GPUs listed
// once at Open, and per-GPU memory and compute processes read on each call. Never linked, so
// the binary runs where no driver is installed; that case is a Status saying so.
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "monitor/nvml_abi.h"
#include "vramfit/monitor.h"

namespace vramfit {

namespace abi = nvml_abi;

struct Nvml::Impl {
  void* handle = nullptr;
  std::string library;
  abi::ShutdownFn shutdown = nullptr;
  abi::ErrorStringFn error_string = nullptr;
  abi::GetMemoryFn get_memory = nullptr;
  abi::GetProcessesFn get_processes = nullptr;
  bool processes_v1 = false;  // the unversioned entry point: 16-byte records
  uint32_t max_processes = 64;
  std::vector<abi::Device> devices;
  std::vector<GpuInfo> gpus;
  std::vector<unsigned char> buffer;  // process records

  std::string Say(abi::Return r) const {
    const char* s = error_string ? error_string(r) : nullptr;
    return s ? fmt::format("{} (NVML error {})", s, r) : fmt::format("NVML error {}", r);
  }

  ~Impl() {
    if (shutdown) shutdown();
    if (handle) dlclose(handle);
  }
};

namespace {

template <typename Fn>
Fn Find(void* handle, const char* name) {
  return reinterpret_cast<Fn>(dlsym(handle, name));
}

// The library to load: the option, the environment, or the driver's soname.
std::string LibraryName(const NvmlOptions& options) {
  if (!options.library.empty()) return options.library;
  const char* env = std::getenv("VRAMFIT_NVML_LIBRARY");
  if (env && *env) return env;
  return "libnvidia-ml.so.1";
}

}  // namespace

Result<std::unique_ptr<Nvml>> Nvml::Open(const NvmlOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->library = LibraryName(options);
  impl->max_processes = std::max<uint32_t>(1, std::min<uint32_t>(options.max_processes, 4096));
  impl->handle = dlopen(impl->library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!impl->handle) {
    const char* why = dlerror();
    return Status::NotFound(fmt::format(
        "no NVIDIA driver: {} could not be loaded ({}); `monitor` needs the NVIDIA driver's "
        "NVML library (set VRAMFIT_NVML_LIBRARY to its path if it is installed elsewhere)",
        impl->library, why ? why : "no reason given"));
  }
  auto init = Find<abi::InitFn>(impl->handle, "nvmlInit_v2");
  auto count_fn = Find<abi::GetCountFn>(impl->handle, "nvmlDeviceGetCount_v2");
  auto handle_fn = Find<abi::GetHandleFn>(impl->handle, "nvmlDeviceGetHandleByIndex_v2");
  auto name_fn = Find<abi::GetNameFn>(impl->handle, "nvmlDeviceGetName");
  impl->error_string = Find<abi::ErrorStringFn>(impl->handle, "nvmlErrorString");
  impl->get_memory = Find<abi::GetMemoryFn>(impl->handle, "nvmlDeviceGetMemoryInfo");
  auto shutdown = Find<abi::ShutdownFn>(impl->handle, "nvmlShutdown");
  impl->get_processes =
      Find<abi::GetProcessesFn>(impl->handle, "nvmlDeviceGetComputeRunningProcesses_v3");
  if (!impl->get_processes) {
    impl->get_processes =
        Find<abi::GetProcessesFn>(impl->handle, "nvmlDeviceGetComputeRunningProcesses_v2");
  }
  if (!impl->get_processes) {
    impl->get_processes =
        Find<abi::GetProcessesFn>(impl->handle, "nvmlDeviceGetComputeRunningProcesses");
    impl->processes_v1 = impl->get_processes != nullptr;
  }
  const char* missing = !init ? "nvmlInit_v2"
                        : !count_fn ? "nvmlDeviceGetCount_v2"
                        : !handle_fn ? "nvmlDeviceGetHandleByIndex_v2"
                        : !name_fn ? "nvmlDeviceGetName"
                        : !impl->get_memory ? "nvmlDeviceGetMemoryInfo"
                        : !shutdown ? "nvmlShutdown"
                                    : nullptr;
  if (missing) {
    return Status::Unsupported(
        fmt::format("{}: no function {} (a driver older than NVML 11?)", impl->library, missing));
  }
  if (abi::Return r = init(); r != abi::kSuccess) {
    return Status::Unsupported(fmt::format(
        "no NVIDIA driver: {} loaded but did not initialise: {}", impl->library, impl->Say(r)));
  }
  impl->shutdown = shutdown;
  unsigned int n = 0;
  if (abi::Return r = count_fn(&n); r != abi::kSuccess) {
    return Status::Unsupported(fmt::format("{}: counting GPUs: {}", impl->library, impl->Say(r)));
  }
  if (n > 1024) return Status::Corrupt(fmt::format("{}: {} GPUs reported", impl->library, n));
  for (unsigned int i = 0; i < n; ++i) {
    abi::Device d = nullptr;
    if (abi::Return r = handle_fn(i, &d); r != abi::kSuccess) {
      return Status::Unsupported(fmt::format("{}: GPU {}: {}", impl->library, i, impl->Say(r)));
    }
    char name[abi::kDeviceNameBufferSize + 1] = {};
    GpuInfo g;
    g.index = i;
    if (name_fn(d, name, abi::kDeviceNameBufferSize) == abi::kSuccess) {
      name[abi::kDeviceNameBufferSize] = '\0';
      g.name.assign(name, strnlen(name, abi::kDeviceNameBufferSize));
    }
    abi::Memory m{};
    if (impl->get_memory(d, &m) == abi::kSuccess) g.total_bytes = m.total;
    impl->devices.push_back(d);
    impl->gpus.push_back(std::move(g));
  }
  // Room for 32-byte records (nvml_abi.h) at the capacity NVML is told.
  impl->buffer.resize(size_t{impl->max_processes} * 32);
  return std::unique_ptr<Nvml>(new Nvml(std::move(impl)));
}

Nvml::Nvml(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Nvml::~Nvml() = default;

const std::vector<GpuInfo>& Nvml::gpus() const { return impl_->gpus; }

Status Nvml::Read(Reading* out) {
  Impl& m = *impl_;
  out->gpus.resize(m.devices.size());
  Status status;
  for (size_t i = 0; i < m.devices.size(); ++i) {
    GpuReading& g = out->gpus[i];
    g.processes.clear();
    abi::Memory mem{};
    if (abi::Return r = m.get_memory(m.devices[i], &mem); r != abi::kSuccess) {
      status = Status::Io(fmt::format("GPU {} memory: {}", i, m.Say(r)));
      continue;
    }
    g.used_bytes = mem.used;
    g.total_bytes = mem.total;
    if (!m.get_processes) continue;
    unsigned int count = m.max_processes;
    abi::Return r = m.get_processes(m.devices[i], &count, m.buffer.data());
    // kErrorInsufficientSize: more processes than max_processes; none are listed this time.
    if (r != abi::kSuccess) continue;
    count = std::min(count, m.max_processes);
    const size_t stride = m.processes_v1 ? sizeof(abi::ProcessInfoV1) : sizeof(abi::ProcessInfo);
    for (unsigned int k = 0; k < count; ++k) {
      const unsigned char* rec = m.buffer.data() + k * stride;
      ProcessMemory p;
      unsigned long long used = 0;
      // pid at offset 0, usedGpuMemory at offset 8 in both layouts.
      std::memcpy(&p.pid, rec + offsetof(abi::ProcessInfo, pid), sizeof(unsigned int));
      std::memcpy(&used, rec + offsetof(abi::ProcessInfo, usedGpuMemory), sizeof(used));
      static_assert(offsetof(abi::ProcessInfo, usedGpuMemory) ==
                    offsetof(abi::ProcessInfoV1, usedGpuMemory));
      p.used_bytes = used == abi::kValueNotAvailable ? 0 : used;
      g.processes.push_back(p);
    }
  }
  return status;
}

}  // namespace vramfit
