#!/usr/bin/env bash
# Writes the stdout, stderr and exit code of a broad set of vramfit commands into DIR, one
# file per command, so that a refactoring can be proven output-neutral:
#   tools/snapshot-outputs.sh build/vramfit /tmp/before   (before the change)
#   tools/snapshot-outputs.sh build/vramfit /tmp/after    (after it)
#   diff -r /tmp/before /tmp/after                        (must print nothing)
# Timings are masked so that only real differences remain.
# Covers every catalog model on several cards and flag sets (plan, plan --json --explain),
# check command lines, fit goals, the GPU table, every doctor corpus log (text and JSON, with
# and without a model), and inspect of every catalog model and test config.
set -uo pipefail
bin=$(realpath "$1"); out=$2
cd "$(dirname "$0")/.."
mkdir -p "$out"
n=0
run() {  # run NAME ARGS...
  local name=$1; shift
  n=$((n + 1))
  "$bin" "$@" >"$out/$name.out" 2>"$out/$name.err" </dev/null
  echo "$?" >"$out/$name.rc"
}
models=$("$bin" models --json | python3 -c \
    'import json,sys; print(" ".join(m["id"] for m in json.load(sys.stdin)["models"]))')
for m in $models; do
  run "inspect_$m" inspect "$m" --json
  for g in 4090 h100 a100-40gb v100-32gb; do
    run "plan_${m}_$g" plan "$m" --gpu "$g"
  done
  run "plan_${m}_h100_json" plan "$m" --gpu h100 --json --explain
  run "plan_${m}_tp2_fp8" plan "$m" --gpu 4090 -tp 2 --kv-cache-dtype fp8 --max-model-len 32768
  run "plan_${m}_auto_eager" plan "$m" --gpu l40s --max-model-len auto --enforce-eager --json
  run "plan_${m}_v0" plan "$m" --gpu 3090 --v0-engine --max-model-len 8192 --engine vllm@0.9
  run "plan_${m}_old" plan "$m" --gpu a100 -tp 4 --engine vllm@0.10.1 --max-num-seqs 32 --json
  run "plan_${m}_pp" plan "$m" --gpu h100 -tp 2 -pp 2 --max-model-len 16k \
      --gpu-memory-utilization 0.8
  run "plan_${m}_ep" plan "$m" --gpu h200 -tp 2 -dp 2 --enable-expert-parallel --json
  run "plan_${m}_mm" plan "$m" --gpu 4090 --limit-mm-per-prompt '{"image":4}' \
      --mm-processor-kwargs '{"max_pixels":4000000}' --cpu-offload-gb 2
  run "fit_${m}_4090" fit "$m" --gpu 4090 --json
done
for t in tests/configs/*; do run "inspect_cfg_$(basename "$t")" inspect "$t" --tensors --json; done
for m in qwen3-8b qwen3-4b-instruct-2507-awq qwen3.5-35b-a3b-awq qwen3-30b-a3b deepseek-v2-lite \
    gpt-oss-20b; do
  run "fit_${m}_gpus" fit "$m" --goal gpus --min-context 32k --json
  run "fit_${m}_conc" fit "$m" --gpu 4090 --gpus 2 --goal concurrency --min-context 8192
  run "fit_${m}_ctx4" fit "$m" --gpu a10 --gpus 4 --min-concurrency 4 --no-eager
  run "fit_${m}_table" fit "$m" --gpus-table --gpus 4 --json
  run "fit_${m}_fixed" fit "$m" --gpu 4090 --gpus 2 -tp 2 --kv-cache-dtype auto --max-num-seqs 8
done
run check_a check --gpu 4090 -- vllm serve qwen3-4b-instruct-2507-awq --max-model-len=262144 \
    --port 8000
run check_b check --gpu 4090 --json -- python -m vllm.entrypoints.openai.api_server --model \
    qwen3.5-35b-a3b-awq -tp 2 --max-model-len 4096 --limit-mm-per-prompt '{"image":2}' --foo-bar 3
run check_c check --gpu 3090 -- VLLM_USE_V1=0 vllm serve meta-llama/Llama-3.1-8B-Instruct \
    --max-model-len 29000
run check_d check --gpu h100 -- env FOO=1 CUDA_VISIBLE_DEVICES=0,1 vllm serve qwen3-8b -tp=2 \
    --max-model-len 128K --gpu-memory-utilization 0.95
run check_e check --gpu-memory 24GiB --other-memory 1GiB -- vllm serve qwen3-8b --max-model-len \
    25.6k --kv-cache-memory-bytes 4GiB
run check_f check --gpu 4090 -- vllm serve
run check_g check --gpu 4090 -- python3 -m vllm.entrypoints.openai.api_server
run check_h check --gpu 4090 --vllm-version 0.10 -- VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 vllm serve \
    qwen3-8b --max-model-len 100000
run check_i check -- vllm serve qwen3-8b
run check_j check --gpu 4090 -- sglang serve --model-path qwen3-8b
run plan_bad1 plan qwen3-8b --gpu rtx-9090
run plan_bad2 plan qwen3-8b --gpu h100 -tp 3
run plan_bad3 plan qwen3-8b --gpu h100 --engine sglang
run plan_bad4 plan qwen3-8b --gpu h100 --max-model-len 12x
run plan_bad5 plan qwen3-8b --gpu h100 --gpu-memory 80GB
run plan_bad6 plan qwen3-8b --gpu-memory 80G
run plan_bad7 plan nope/nothing --gpu h100
run plan_bad8 plan qwen3-8b --gpu h100 --quantization awq
run plan_bad9 plan qwen3-8b-awq --gpu h100 --quantization gptq
run plan_bad10 plan qwen3-8b --gpu h100 --engine vllm@0.5
run plan_bad11 plan qwen3-8b --gpu h100 --max-model-len 1000000
run plan_bad12 plan qwen3-8b --gpu h100 --v0-engine --engine vllm@0.12
run plan_bad13 plan qwen3-8b --gpu h100 --other-memory 2GB --max-model-len 8192
run plan_bad14 plan qwen3-8b --gpu h100 --limit-mm-per-prompt image=x
run fit_bad1 fit qwen3-8b --gpu 4090 --min-context 10000000
run fit_bad2 fit qwen3-8b --gpus 100
run fit_bad3 fit qwen3-8b
run fit_bad4 fit qwen3-8b --gpu 4090 --min-concurrency 0
for l in tests/doctor/corpus/*.log; do
  b=$(basename "$l" .log)
  run "doctor_$b" doctor "$l"
  run "doctor_${b}_json" doctor "$l" --json
done
run doctor_cal doctor tests/doctor/corpus/vllm-kv-max-seq-len-29000-llama3.1-8b-3090-10517.log \
    --model llama-3.1-8b-instruct --gpu 3090 --json
run doctor_cal2 doctor tests/doctor/corpus/vllm-kv-max-seq-len-29000-llama3.1-8b-3090-10517.log \
    --model llama-3.1-8b-instruct --gpu 3090
for l in tests/doctor/corpus/vllm-*.log; do
  b=$(basename "$l" .log)
  run "doctor_m_$b" doctor "$l" --model qwen3-8b --gpu 4090 --json
done
run doctor_empty doctor /dev/null
run doctor_missing doctor /nonexistent.log
run gpus gpus --json
run models models --json
# Wall-clock timings ("... plans in 0.03 s") differ from run to run: masked.
sed -i -E 's/plans in [0-9.]+ s/plans in ? s/' "$out"/*.err
echo "$n commands -> $out" >&2
