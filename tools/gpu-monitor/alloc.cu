// tools/gpu-monitor-check.sh's allocator (CUDA runtime): known amounts in vLLM-like stages.
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <cuda_runtime.h>
static void* take(long mib) {
  void* p = nullptr;
  if (cudaMalloc(&p, mib << 20) != cudaSuccess) { std::printf("cudaMalloc failed\n"); std::exit(1); }
  cudaMemset(p, 1, mib << 20);
  cudaDeviceSynchronize();
  return p;
}
static long env(const char* k) { return std::atol(std::getenv(k)); }
int main() {
  cudaFree(nullptr);  // the CUDA context
  sleep(1);
  std::printf("INFO [gpu_model_runner.py] Starting to load model check/allocator...\n"); std::fflush(stdout);
  sleep(1); take(env("WEIGHTS")); sleep(1);
  std::printf("INFO [gpu_model_runner.py] Model loading took %.2f GiB and 1.0 seconds\n", env("WEIGHTS") / 1024.0); std::fflush(stdout);
  sleep(1); take(env("ACTIVATION")); sleep(1);
  std::printf("INFO [gpu_worker.py] Available KV cache memory: %.2f GiB\n", env("KV") / 1024.0); std::fflush(stdout);
  sleep(1); take(env("KV")); sleep(1);
  std::printf("INFO [gpu_model_runner.py] Capturing CUDA graph shapes\n"); std::fflush(stdout);
  sleep(1); take(env("GRAPHS")); sleep(1);
  std::printf("INFO [gpu_model_runner.py] Graph capturing finished in 1 secs, took %.2f GiB\n", env("GRAPHS") / 1024.0); std::fflush(stdout);
  sleep(2);
  std::printf("INFO:     Application startup complete.\n"); std::fflush(stdout);
  sleep(2);
  return 0;
}
