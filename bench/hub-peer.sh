#!/usr/bin/env bash
# Side by side on one mock Hub (loopback): vramfit's Hub source and @huggingface/hub's
# parseSafetensorsMetadata reading a 160-shard repo (bench/bench_hub.cc serves it and times
# both). The npm package is installed here, into bench/hub-peer/node_modules (git-ignored),
# never vendored. Usage: bench/hub-peer.sh [BUILD_DIR]   (default: build; RUNS=5)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get install -y -qq nodejs npm >&2
fi
if [ ! -d "$here/hub-peer/node_modules/@huggingface/hub" ]; then
  (cd "$here/hub-peer" && npm install --no-audit --no-fund --silent >&2)
fi
cmake --build "$build" --target vramfit vramfit_hub_bench >&2
"$build/vramfit_hub_bench" --runs "${RUNS:-5}" --vramfit "$build/vramfit" \
    --peer "node $here/hub-peer/peer.mjs"
