#!/bin/bash
# A fake inference engine for the monitor's tests: plays a schedule of real engine log lines
# (vLLM, SGLang, llama.cpp; the formats of tests/doctor/corpus/) and memory phases. The phase
# is what the fake NVML (fake_nvml.cc) reports: the engine writes it before a step, so a
# stage's memory is always seen between the lines that open and close the stage.
#
# Schedule (one step a line; '#' lines and blank lines skipped):
#   phase NAME     the fake NVML's phase becomes NAME ($VRAMFIT_FAKE_NVML_PHASE, written whole)
#   sleep S        wait S seconds
#   out TEXT       TEXT on stdout          err TEXT   TEXT on stderr
#   exit N         end with code N         signal SIG end by the signal SIG (a crash)
#   on_int N       on SIGINT: say "interrupted" on stderr and exit N
#   hang           wait until stopped
set -u
ulimit -c 0
sched=$1
phase_file=${VRAMFIT_FAKE_NVML_PHASE:-/dev/null}
while IFS= read -r line || [ -n "$line" ]; do
  cmd=${line%% *}
  arg=${line#* }
  case "$cmd" in
    phase) printf '%s\n' "$arg" > "$phase_file.tmp" && mv -f "$phase_file.tmp" "$phase_file" ;;
    sleep) sleep "$arg" ;;
    out) printf '%s\n' "$arg" ;;
    err) printf '%s\n' "$arg" >&2 ;;
    exit) exit "$arg" ;;
    signal) kill -s "$arg" $$ ;;
    on_int) code=$arg; trap 'echo interrupted >&2; exit $code' INT ;;
    hang) while true; do sleep 0.05; done ;;
    *) ;;
  esac
done < "$sched"
