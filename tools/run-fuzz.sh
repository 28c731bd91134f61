#!/usr/bin/env bash
# Runs each libFuzzer target (built by `make fuzz`, the `fuzz` preset) for FUZZ_SECONDS
# (default 60) and prints how many inputs each ran. Seeds: the committed corpus
# fuzz/corpus/<target>/ plus the test data below. libFuzzer writes the inputs it finds into
# the FIRST corpus directory, which is a scratch one, build-fuzz/corpus/<target>/, never a
# folder under tests/ or fuzz/. A crash stops the run and leaves its input in
# build-fuzz/crashes/<target>-*; each finding becomes a regression test (docs/testing.md).
#
#   FUZZ_SECONDS=600 tools/run-fuzz.sh             every target, ten minutes each
#   FUZZ_SECONDS=3 tools/run-fuzz.sh plan render   two targets, a smoke run
#   tools/run-fuzz.sh --smoke                      every target for FUZZ_SECONDS (default 3)
#                                                  when build-fuzz/ holds them; else exit 77
#                                                  (the ctest `fuzz_smoke` counts it skipped)
set -euo pipefail
cd "$(dirname "$0")/.."
b=build-fuzz
all=(safetensors index config doctor command plan checkpoint render cli gguf script)
secs=${FUZZ_SECONDS:-60}
if [ "${1:-}" = --smoke ]; then
  shift
  secs=${FUZZ_SECONDS:-3}
  for t in "${all[@]}"; do
    [ -x "$b/fuzz_$t" ] || { echo "fuzz smoke: no $b/fuzz_$t (make fuzz): skipped"; exit 77; }
  done
fi
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")
for t in "${all[@]}"; do mkdir -p "$b/corpus/$t"; done
mkdir -p $b/crashes
cp tests/doctor/corpus/*.log tests/doctor/reported/*.log tests/doctor/hostile/*.log \
    tests/doctor/cases/*.log tests/doctor/fuzz-regressions/*.log $b/corpus/doctor/
cp tests/bad/*.safetensors $b/corpus/safetensors/ 2>/dev/null || true
cp tests/bad/*.gguf $b/corpus/gguf/ 2>/dev/null || true
cp tests/scripts/*.sh tests/scripts/*.py tests/scripts/hostile/*.sh tests/scripts/hostile/*.py \
    $b/corpus/script/
find tests/bad -name 'model.safetensors.index.json' -exec sh -c \
    'cp "$1" "'$b'/corpus/index/$(echo "$1" | tr / _)"' _ {} \;
find tests/bad tests/configs -name config.json -exec sh -c \
    'cp "$1" "'$b'/corpus/config/$(echo "$1" | tr / _)"' _ {} \;
python3 - "$b/corpus/config" <<'PY'
import json, glob, os, sys
for p in glob.glob("data/models/*.json"):
    d = json.load(open(p))
    open(os.path.join(sys.argv[1], os.path.basename(p)), "w").write(json.dumps(d["config"]))
PY
for t in "${targets[@]}"; do
  log=$b/fuzz_$t.log
  seeds=()
  [ -d "fuzz/corpus/$t" ] && seeds+=("fuzz/corpus/$t")
  dict=()  # words the target's parser keys on (fuzz/<target>.dict), where there is a list
  [ -f "fuzz/$t.dict" ] && dict+=("-dict=fuzz/$t.dict")
  ./$b/fuzz_$t -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
      -print_final_stats=1 -artifact_prefix=$b/crashes/$t- "${dict[@]}" $b/corpus/$t \
      "${seeds[@]}" \
      >"$log" 2>&1 || {
    echo "fuzz_$t: FAILED, see $log"; tail -30 "$log"; exit 1; }
  runs=$(grep -ao 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  # The executions that replayed the seed corpus before mutation began (libFuzzer's "INITED"
  # line): a target whose corpus takes the whole budget to load has mutated nothing.
  inited=$(grep -aoE '#[0-9]+[[:space:]]+INITED' "$log" | head -1 | grep -oE '[0-9]+' || true)
  echo "fuzz_$t: $runs executions in ${secs}s (${inited:-?} of them loading its corpus), no crash"
done
