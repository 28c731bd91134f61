# tools/gpu-monitor-check.sh's allocator (PyTorch): known amounts in vLLM-like stages.
import os, sys, time, torch
MiB = 1 << 20
def log(s):
    print(s, flush=True)
def take(mib):
    t = torch.empty(mib * MiB, dtype=torch.uint8, device="cuda")
    t.fill_(1)
    torch.cuda.synchronize()
    return t
torch.zeros(1, device="cuda")  # the CUDA context
time.sleep(1)
log("INFO [gpu_model_runner.py] Starting to load model check/allocator...")
time.sleep(1)
w = take(int(os.environ["WEIGHTS"]))
time.sleep(1)
log(f"INFO [gpu_model_runner.py] Model loading took {int(os.environ['WEIGHTS'])/1024:.2f} GiB and 1.0 seconds")
time.sleep(1)
a = take(int(os.environ["ACTIVATION"]))
time.sleep(1)
log(f"INFO [gpu_worker.py] Available KV cache memory: {int(os.environ['KV'])/1024:.2f} GiB")
time.sleep(1)
k = take(int(os.environ["KV"]))
time.sleep(1)
log("INFO [gpu_model_runner.py] Capturing CUDA graph shapes")
time.sleep(1)
g = take(int(os.environ["GRAPHS"]))
time.sleep(1)
log(f"INFO [gpu_model_runner.py] Graph capturing finished in 1 secs, took {int(os.environ['GRAPHS'])/1024:.2f} GiB")
time.sleep(2)
log("INFO:     Application startup complete.")
time.sleep(2)
