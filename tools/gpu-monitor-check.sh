#!/usr/bin/env bash
# `vramfit monitor` on a real GPU: a program allocates known amounts with the CUDA runtime in
# stages that print vLLM's stage lines, `vramfit monitor` watches it against a plan of exactly
# those amounts, and the measured vs expected figures are written to validation/monitor/.
#
# NOT RUN YET: written on a machine without a GPU (the session that added `monitor` had none).
# Run it where `nvidia-smi` works, from the repository root, after `cmake --build build`:
#   tools/gpu-monitor-check.sh [GPU_INDEX]
# The allocator is PyTorch when `python3 -c 'import torch'` works, else a CUDA C program built
# with nvcc. Each stage allocates with cudaMalloc (PyTorch: torch.empty on the device, which the
# caching allocator takes from cudaMalloc) and touches the memory so it is resident.
set -euo pipefail
cd "$(dirname "$0")/.."
gpu=${1:-0}
vramfit=${VRAMFIT:-build/vramfit}
out=validation/monitor
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
[[ -x $vramfit ]] || { echo "no $vramfit: build first (cmake --build build)" >&2; exit 2; }
command -v nvidia-smi > /dev/null || { echo "no nvidia-smi: this needs an NVIDIA GPU" >&2; exit 2; }

# The amounts, MiB: weights (load), activations (profile), KV cache, CUDA graphs.
weights=2048 activation=1024 kv=3072 graphs=512
export CUDA_VISIBLE_DEVICES=$gpu WEIGHTS=$weights ACTIVATION=$activation KV=$kv GRAPHS=$graphs

if python3 -c 'import torch; assert torch.cuda.is_available()' 2> /dev/null; then
  allocator=(python3 tools/gpu-monitor/alloc.py)
elif command -v nvcc > /dev/null; then
  nvcc -O2 -o "$work/alloc" tools/gpu-monitor/alloc.cu
  allocator=("$work/alloc")
else
  echo "neither PyTorch with CUDA nor nvcc: nothing can allocate GPU memory" >&2
  exit 2
fi

# A plan of exactly those amounts (the CUDA context is what the allocator's process shows
# before its first allocation; it is read from the measured startup stage, so only the stages'
# increments are compared).
mib=1048576
cat > "$work/plan.json" <<EOF
{"schema": "vramfit.plan/1", "engine": "allocator", "fits": true, "failure_stage": null,
 "gpus": [{"total_bytes": 0, "cuda_context_bytes": 0,
           "weights_bytes": $((weights * mib)), "load_peak_bytes": $((weights * mib)),
           "activation_peak_bytes": $((activation * mib)), "non_torch_bytes": 0,
           "kv_cache_bytes": $((kv * mib)), "cudagraph_bytes": $((graphs * mib)),
           "device_used_bytes": $(((weights + activation + kv + graphs) * mib))}]}
EOF

stamp=$(date -u +%Y%m%dT%H%M%SZ)
name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i "$gpu" | tr ' /' '__')
"$vramfit" monitor --interval 50 --plan "$work/plan.json" --json \
  --csv "$out/$stamp-$name.csv" -- "${allocator[@]}" > "$out/$stamp-$name.json"
"$vramfit" monitor --interval 50 --plan "$work/plan.json" -- "${allocator[@]}" \
  2> "$out/$stamp-$name.txt" > /dev/null
echo "written: $out/$stamp-$name.{json,txt,csv}"
if command -v jq > /dev/null; then
  # Measured minus expected per stage, the CUDA context (the startup stage's figure) taken off.
  jq -r '(.stages[0].measured_bytes) as $ctx | .stages[] | select(.reached)
         | "\(.stage)\t\((.measured_bytes - $ctx) / 1048576 | floor) MiB measured\t"
           + "\((.predicted_bytes // 0) / 1048576 | floor) MiB expected"' "$out/$stamp-$name.json"
fi
