#!/usr/bin/env bash
# Reading speed of a whole `vramfit inspect` process on local files, beside the baseline a user
# would write: a ten-line Python script that json.loads every shard's header and nothing else.
# Builds the binary `make build` gives users (the default preset, RelWithDebInfo), writes the
# fixture (bench/make_fixture.cc: a hollow Qwen3-MoE AWQ checkpoint, 128 experts in 8 shards by
# default: 56,115 tensors), then runs both commands in alternation and prints their medians and
# the ratio. Usage:
#   bash bench/inspect-vs-python.sh [RUNS] [EXPERTS] [SHARDS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-11}
experts=${2:-128}
shards=${3:-8}
cmake --preset default -DVRAMFIT_BUILD_BENCH=ON >/dev/null
cmake --build build --target vramfit vramfit_bench_fixture >/dev/null
dir=$(mktemp -d /tmp/vramfit-read-bench.XXXXXX)
trap 'rm -rf "$dir"' EXIT
./build/vramfit_bench_fixture "$dir/ckpt" "$experts" "$shards"
cat > "$dir/baseline.py" <<'PY'
import glob, json, struct, sys
tensors = 0
for path in sorted(glob.glob(sys.argv[1] + "/*.safetensors")):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        tensors += len(header) - ("__metadata__" in header)
print(tensors)
PY
python3 - "$runs" "$dir" <<'PY'
import os, statistics, subprocess, sys, time
runs, d = int(sys.argv[1]), sys.argv[2]
cmds = {
    "vramfit inspect DIR --json": ["./build/vramfit", "inspect", d + "/ckpt", "--json"],
    "python3 json.loads of each header": ["python3", d + "/baseline.py", d + "/ckpt"],
}
wall = {k: [] for k in cmds}
cpu = {k: [] for k in cmds}  # user + system seconds of the process: what a shared machine
for _ in range(runs):        # does not inflate
    for k, c in cmds.items():
        t = time.perf_counter()
        p = subprocess.Popen(c, stdout=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        wall[k].append(time.perf_counter() - t)
        cpu[k].append(ru.ru_utime + ru.ru_stime)
        if status != 0:
            sys.exit(f"{c[0]} failed: status {status}")
ms = lambda v: statistics.median(v) * 1000
for k in cmds:
    print(f"{k:36s} wall median {ms(wall[k]):7.1f} ms, cpu median {ms(cpu[k]):7.1f} ms")
a, b = list(cmds)
print(f"vramfit / python ({runs} runs each): wall {ms(wall[a]) / ms(wall[b]):.2f}x, "
      f"cpu {ms(cpu[a]) / ms(cpu[b]):.2f}x")
PY
