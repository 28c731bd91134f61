#!/usr/bin/env bash
# Runs each libFuzzer target (built by `make fuzz`) for FUZZ_SECONDS (default 60), seeded
# from the test data, and prints how many inputs each ran clean. Crashes stop the run and
# leave the input in build-fuzz/crashes/.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${FUZZ_SECONDS:-60}
b=build-fuzz
mkdir -p $b/corpus/{safetensors,index,config,doctor} $b/crashes
cp tests/doctor/corpus/*.log tests/doctor/reported/*.log $b/corpus/doctor/
cp tests/bad/*.safetensors $b/corpus/safetensors/ 2>/dev/null || true
find tests/bad -name 'model.safetensors.index.json' -exec sh -c \
    'cp "$1" "'$b'/corpus/index/$(echo "$1" | tr / _)"' _ {} \;
find tests/bad -name config.json -exec sh -c \
    'cp "$1" "'$b'/corpus/config/$(echo "$1" | tr / _)"' _ {} \;
python3 - "$b/corpus/config" <<'PY'
import json, glob, os, sys
for p in glob.glob("data/models/*.json"):
    d = json.load(open(p))
    open(os.path.join(sys.argv[1], os.path.basename(p)), "w").write(json.dumps(d["config"]))
PY
for t in safetensors index config doctor; do
  log=$b/fuzz_$t.log
  ./$b/fuzz_$t -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
      -print_final_stats=1 -artifact_prefix=$b/crashes/$t- $b/corpus/$t >"$log" 2>&1 || {
    echo "fuzz_$t: FAILED, see $log"; tail -30 "$log"; exit 1; }
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  echo "fuzz_$t: $runs executions in ${secs}s, no crash"
done
