#!/bin/bash
# `vramfit monitor` as a user runs it (ctest: monitor_cli): usage errors and their exit code 2,
# the no-driver message, the child's exit code passed through, the child's output unchanged,
# the CSV in nvidia-smi's columns, --json, --plan's predicted column, and Ctrl-C (SIGINT sent to
# the monitor) passed on to the child. Runs over the fake NVML and the fake engine; no GPU.
# Usage: cli_test.sh VRAMFIT FAKE_NVML_LIBRARY SOURCE_DIR WORK_DIR
set -u
vramfit=$1
export VRAMFIT_NVML_LIBRARY=$2
src=$3
work=$4
dir=$src/tests/monitor
mkdir -p "$work"
export VRAMFIT_FAKE_NVML_TRACE=$dir/vllm.trace
export VRAMFIT_FAKE_NVML_PHASE=$work/phase
fails=0

fail() {
  echo "FAIL: $*" >&2
  fails=$((fails + 1))
}

# expect NAME RC [ARGS...]: runs vramfit, keeps stdout/stderr in $work/NAME.{out,err}.
expect() {
  local name=$1 rc=$2
  shift 2
  rm -f "$VRAMFIT_FAKE_NVML_PHASE"
  "$vramfit" "$@" > "$work/$name.out" 2> "$work/$name.err"
  local got=$?
  [ "$got" -eq "$rc" ] || fail "$name: exit $got, expected $rc ($(head -c 400 "$work/$name.err"))"
}

has() {  # has NAME.STREAM TEXT
  grep -qF -- "$2" "$work/$1" || fail "$1 lacks '$2': $(head -c 600 "$work/$1")"
}

engine=(bash "$dir/fake_engine.sh")

# Usage errors: exit 2 with a message naming the problem.
expect no_command 2 monitor
has no_command.err "vramfit monitor: no command: give the engine's command after --"
expect both 2 monitor --pid 1 -- true
has both.err "give either --pid N or a command after --, not both"
expect html 2 monitor --html out.html -- true
has html.err "--html is not available yet"
expect interval 2 monitor --interval 0 -- true
has interval.err "--interval 0: expected 1 to 3600000 milliseconds"
expect plan_missing 2 monitor --plan "$work/none.json" -- true
has plan_missing.err "none.json: cannot open the plan"
expect plan_bad 2 monitor --plan "$dir/vllm.trace" -- true
has plan_bad.err "the plan is not JSON"
expect plan_fifo 2 monitor --plan /dev/zero -- true
has plan_fifo.err "/dev/zero: not a plan (expected a \`vramfit plan --json\` file"
expect gpu_alone 2 monitor --gpu h100 -- true
has gpu_alone.err "--gpu needs --model"

# No driver: the library cannot be loaded.
VRAMFIT_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 expect no_driver 2 monitor -- true
has no_driver.err \
  "vramfit monitor: no NVIDIA driver: /nonexistent/libnvidia-ml.so.1 could not be loaded"

# A command that cannot start.
expect not_found 2 monitor -- /nonexistent/engine
has not_found.err "cannot run /nonexistent/engine: No such file or directory"

# The child's exit code, its output unchanged (stdout on stdout, stderr on stderr).
printf '%s\n' "out hello from the engine" "err a warning" "exit 3" > "$work/exit3.schedule"
expect exit3 3 monitor --interval 10 -- "${engine[@]}" "$work/exit3.schedule"
[ "$(cat "$work/exit3.out")" = "hello from the engine" ] \
  || fail "exit3: stdout changed: $(cat "$work/exit3.out")"
has exit3.err "a warning"
has exit3.err "monitor: exited 3 after"

# A full vLLM start-up against the golden plan: the stage table with the predicted column, and
# the CSV in nvidia-smi's columns (two GPUs a sample).
rm -f "$work/gpu.csv"
expect vllm 0 monitor --interval 20 --plan "$src/tests/golden/plan_qwen3-8b_h100_auto.json" \
  --csv "$work/gpu.csv" -- "${engine[@]}" "$dir/vllm.schedule"
has vllm.err "difference"
has vllm.err "(predicted: vllm@0.22 on a 79.19 GiB GPU; the plan said it fits)"
has vllm.err "kv_cache"
has vllm.out "Application startup complete."
[ "$(head -1 "$work/gpu.csv")" = "timestamp, index, name, memory.used [MiB], memory.total [MiB]" ] \
  || fail "csv header: $(head -1 "$work/gpu.csv")"
when='[0-9]{4}/[0-9]{2}/[0-9]{2} [0-9:]{8}\.[0-9]{3}'
row="^$when, 1, NVIDIA H100 80GB HBM3, 1536 MiB, 81559 MiB\$"
grep -qE "$row" "$work/gpu.csv" || fail "csv rows: $(sed -n 2,3p "$work/gpu.csv")"
grep -q ", 0, NVIDIA H100 80GB HBM3, 38912 MiB, 81559 MiB" "$work/gpu.csv" \
  || fail "csv: no 38 GiB row"

# --json: the report alone on stdout (the child's stdout goes to stderr).
VRAMFIT_FAKE_NVML_TRACE=$dir/llama_cpp.trace \
  expect json 0 monitor --json --interval 20 -- "${engine[@]}" "$dir/llama_cpp.schedule"
if command -v jq > /dev/null; then
  [ "$(jq -r .schema "$work/json.out")" = "vramfit.monitor/1" ] || fail "json: schema"
  [ "$(jq -r '[.marks[].stage] | join(",")' "$work/json.out")" = "load,kv_cache,runtime" ] \
    || fail "json: marks $(jq -c '[.marks[].stage]' "$work/json.out")"
  [ "$(jq -r '.stages[] | select(.stage=="kv_cache") | .used_peak_bytes[0]' "$work/json.out")" \
    = "$((7680 * 1048576))" ] || fail "json: kv_cache peak"
fi
has json.err "main: server is listening"

# Ctrl-C: SIGINT to the monitor reaches the child, which exits 42.
rm -f "$VRAMFIT_FAKE_NVML_PHASE"
"$vramfit" monitor --interval 20 --timeout 10 -- "${engine[@]}" "$dir/interrupt.schedule" \
  > "$work/int.out" 2> "$work/int.err" &
monitor=$!
sleep 0.5
kill -INT "$monitor"
wait "$monitor"
rc=$?
[ "$rc" -eq 42 ] || fail "interrupt: exit $rc, expected 42 ($(cat "$work/int.err"))"
has int.err "interrupted"

# --timeout: a child that never exits is stopped; exit 124.
expect timeout 124 monitor --interval 20 --timeout 0.3 -- "${engine[@]}" "$dir/hang.schedule"
has timeout.err "stopped at the timeout (exit 124)"

if [ "$fails" -ne 0 ]; then
  echo "$fails monitor CLI check(s) failed (outputs in $work)" >&2
  exit 1
fi
echo "monitor CLI: all checks passed"
