// A fake libnvidia-ml for the monitor's tests and benchmark: the same C ABI as the functions
// vramfit loads (src/monitor/nvml_abi.h), answering from a scripted trace instead of a driver.
//
// The trace ($VRAMFIT_FAKE_NVML_TRACE), one directive a line, '#' starts a comment:
//   gpu TOTAL NAME...                      a GPU (index = order), TOTAL in bytes or NNMiB/NNGiB
//   phase NAME GPU USED [child BYTES] [pid N BYTES]...
//                                          memory.used of GPU in phase NAME, and its processes
//                                          ("child": the first child process of the caller,
//                                          the engine the monitor started)
// The phase is the first word of the file $VRAMFIT_FAKE_NVML_PHASE (the fake engine writes it
// before each step); without that file, or naming no phase, the first phase of the trace.
// $VRAMFIT_FAKE_NVML_INIT_ERROR=N makes nvmlInit_v2 return N. Built twice: with the _v3 and _v2
// process calls, and (FAKE_NVML_V1_ONLY) with only the unversioned one and its 16-byte records.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "monitor/nvml_abi.h"

namespace {

namespace abi = vramfit::nvml_abi;

struct Proc {
  bool child = false;
  unsigned int pid = 0;
  unsigned long long bytes = 0;
};

struct Row {
  std::string phase;
  unsigned int gpu = 0;
  unsigned long long used = 0;
  std::vector<Proc> procs;
};

struct Gpu {
  unsigned long long total = 0;
  std::string name;
};

struct Trace {
  std::vector<Gpu> gpus;
  std::vector<Row> rows;
  std::string phase_file;
  bool loaded = false;
};

Trace& T() {
  static Trace t;
  return t;
}

unsigned long long Size(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  const std::string unit = end ? end : "";
  if (unit == "GiB") return static_cast<unsigned long long>(v * 1073741824.0);
  if (unit == "MiB") return static_cast<unsigned long long>(v * 1048576.0);
  return static_cast<unsigned long long>(v);
}

void Load() {
  Trace& t = T();
  t = Trace();
  t.loaded = true;
  const char* path = std::getenv("VRAMFIT_FAKE_NVML_TRACE");
  const char* phase = std::getenv("VRAMFIT_FAKE_NVML_PHASE");
  if (phase) t.phase_file = phase;
  if (!path) return;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream w(line);
    std::string word;
    if (!(w >> word)) continue;
    if (word == "gpu") {
      Gpu g;
      std::string total;
      w >> total;
      g.total = Size(total);
      std::getline(w >> std::ws, g.name);
      t.gpus.push_back(g);
    } else if (word == "phase") {
      Row r;
      std::string used;
      w >> r.phase >> r.gpu >> used;
      r.used = Size(used);
      std::string key;
      while (w >> key) {
        Proc p;
        std::string bytes;
        if (key == "child") {
          p.child = true;
        } else {
          w >> p.pid;
        }
        w >> bytes;
        p.bytes = Size(bytes);
        r.procs.push_back(p);
      }
      t.rows.push_back(r);
    }
  }
}

std::string CurrentPhase() {
  const Trace& t = T();
  std::string phase;
  if (!t.phase_file.empty()) {
    std::ifstream in(t.phase_file);
    in >> phase;
  }
  for (const Row& r : t.rows) {
    if (r.phase == phase) return phase;
  }
  return t.rows.empty() ? "" : t.rows.front().phase;
}

const Row* RowOf(unsigned int gpu, const std::string& phase) {
  for (const Row& r : T().rows) {
    if (r.gpu == gpu && r.phase == phase) return &r;
  }
  return nullptr;
}

// The caller's first child (the engine the monitor started), from /proc.
unsigned int FirstChild() {
  const std::string path =
      "/proc/self/task/" + std::to_string(getpid()) + "/children";
  std::ifstream in(path);
  unsigned int pid = 0;
  in >> pid;
  return pid;
}

unsigned int IndexOf(abi::Device d) {
  return static_cast<unsigned int>(reinterpret_cast<uintptr_t>(d) - 1);
}

template <typename Record>
abi::Return Processes(abi::Device d, unsigned int* count, void* out) {
  const Row* r = RowOf(IndexOf(d), CurrentPhase());
  const size_t n = r ? r->procs.size() : 0;
  if (n > *count) {
    *count = static_cast<unsigned int>(n);
    return abi::kErrorInsufficientSize;
  }
  Record* rec = static_cast<Record*>(out);
  for (size_t i = 0; i < n; ++i) {
    Record x{};
    x.pid = r->procs[i].child ? FirstChild() : r->procs[i].pid;
    x.usedGpuMemory = r->procs[i].bytes;
    rec[i] = x;
  }
  *count = static_cast<unsigned int>(n);
  return abi::kSuccess;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) abi::Return nvmlInit_v2() {
  if (const char* e = std::getenv("VRAMFIT_FAKE_NVML_INIT_ERROR")) return std::atoi(e);
  Load();
  return abi::kSuccess;
}

__attribute__((visibility("default"))) abi::Return nvmlShutdown() { return abi::kSuccess; }

__attribute__((visibility("default"))) const char* nvmlErrorString(abi::Return r) {
  switch (r) {
    case abi::kSuccess:
      return "Success";
    case abi::kErrorDriverNotLoaded:
      return "Driver Not Loaded";
    case abi::kErrorInsufficientSize:
      return "Insufficient Size";
    default:
      return "Unknown Error";
  }
}

__attribute__((visibility("default"))) abi::Return nvmlDeviceGetCount_v2(unsigned int* n) {
  *n = static_cast<unsigned int>(T().gpus.size());
  return abi::kSuccess;
}

__attribute__((visibility("default"))) abi::Return nvmlDeviceGetHandleByIndex_v2(
    unsigned int i, abi::Device* d) {
  if (i >= T().gpus.size()) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *d = reinterpret_cast<abi::Device>(static_cast<uintptr_t>(i) + 1);
  return abi::kSuccess;
}

__attribute__((visibility("default"))) abi::Return nvmlDeviceGetName(abi::Device d, char* name,
                                                                     unsigned int length) {
  const std::string& s = T().gpus.at(IndexOf(d)).name;
  if (length == 0) return 7;
  std::snprintf(name, length, "%s", s.c_str());
  return abi::kSuccess;
}

__attribute__((visibility("default"))) abi::Return nvmlDeviceGetMemoryInfo(abi::Device d,
                                                                           abi::Memory* m) {
  const unsigned int i = IndexOf(d);
  const Row* r = RowOf(i, CurrentPhase());
  m->total = T().gpus.at(i).total;
  m->used = r ? r->used : 0;
  m->free = m->total > m->used ? m->total - m->used : 0;
  return abi::kSuccess;
}

#ifdef FAKE_NVML_V1_ONLY
__attribute__((visibility("default"))) abi::Return nvmlDeviceGetComputeRunningProcesses(
    abi::Device d, unsigned int* count, void* out) {
  return Processes<abi::ProcessInfoV1>(d, count, out);
}
#else
__attribute__((visibility("default"))) abi::Return nvmlDeviceGetComputeRunningProcesses_v3(
    abi::Device d, unsigned int* count, void* out) {
  return Processes<abi::ProcessInfo>(d, count, out);
}
__attribute__((visibility("default"))) abi::Return nvmlDeviceGetComputeRunningProcesses_v2(
    abi::Device d, unsigned int* count, void* out) {
  return Processes<abi::ProcessInfo>(d, count, out);
}
#endif

}  // extern "C"
