#!/usr/bin/env bash
# The browser tests of the HTML reports (ctest's browser_reports): writes each report kind with
# the vramfit command, then loads every page from file:// in headless Chromium (Debian's
# chromium, driven by playwright-core from tests/browser/package-lock.json) and checks each bar
# against the page's embedded JSON; then the page of `vramfit serve` (page.mjs). Exit 77
# (skipped) only when chromium is not installed.
# Usage: run.sh VRAMFIT SRC_DIR OUT_DIR
set -euo pipefail
vramfit=$1 src=$2 out=$3
chromium_bin=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$chromium_bin" ]; then
  echo "browser tests skipped: no chromium on this machine (make deps installs Debian's)" >&2
  exit 77
fi
if [ ! -d "$src/tests/browser/node_modules/playwright-core" ]; then
  if [ "${CI:-}" = true ]; then
    echo "browser tests: tests/browser/node_modules is missing (make deps runs npm ci)" >&2
    exit 1
  fi
  echo "browser tests skipped: run make deps (npm ci in tests/browser) first" >&2
  exit 77
fi
rm -rf "$out" && mkdir -p "$out"
# The reported scenarios and one report of every other kind.
"$vramfit" plan qwen3-4b-instruct-2507-awq --gpu 4090 --max-model-len 262144 \
  --html "$out/plan-qwen3-4b-awq-256k-4090.html" >/dev/null
"$vramfit" check --gpu 4090 --html "$out/check-qwen3.5-35b-a3b-awq-2x4090-images.html" -- \
  vllm serve qwen3.5-35b-a3b-awq --tensor-parallel-size 2 \
  --limit-mm-per-prompt '{"image": 2}' >/dev/null
"$vramfit" check --gpu 4090 --html "$out/check-qwen3-30b-a3b-bf16-load.html" -- \
  vllm serve qwen3-30b-a3b >/dev/null || [ $? -eq 1 ]
"$vramfit" fit qwen3-4b-instruct-2507-awq --gpu 4090 --html "$out/fit-qwen3-4b-awq-4090.html" \
  >/dev/null 2>&1
"$vramfit" inspect qwen3-30b-a3b-gptq-int4 --html "$out/inspect-qwen3-30b-a3b-gptq.html" \
  >/dev/null
"$vramfit" doctor "$src/tests/doctor/corpus/vllm-kv-max-seq-len-29000-llama3.1-8b-3090-10517.log" \
  --model llama-3.1-8b-instruct --gpu 3090 --html "$out/doctor-llama3.1-8b-3090.html" >/dev/null
status=0
CHROMIUM="$chromium_bin" node "$src/tests/browser/reports.mjs" "$out" || status=1
CHROMIUM="$chromium_bin" node "$src/tests/browser/page.mjs" "$vramfit" "$out" || status=1
exit $status
