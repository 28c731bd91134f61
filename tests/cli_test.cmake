# CLI contract: exit codes, stdout/stderr split, and golden output for catalog models.
# Run by ctest as: cmake -DVRAMFIT=... -DSRC=... -DWORK=... -P tests/cli_test.cmake
file(MAKE_DIRECTORY ${WORK})
set(failures 0)

include(${CMAKE_CURRENT_LIST_DIR}/cli_run.cmake)

function(golden name)
  set(g ${SRC}/tests/golden/${name})
  if(DEFINED ENV{VRAMFIT_UPDATE_GOLDEN})
    file(WRITE ${g} "${last_out}")
  endif()
  file(READ ${g} want)
  if(NOT want STREQUAL last_out)
    message(SEND_ERROR "${name}: output differs from tests/golden/${name} (see ${WORK}; "
                       "VRAMFIT_UPDATE_GOLDEN=1 ctest -R cli_golden rewrites it)")
  endif()
endfunction()

run(inspect_gptq 0 inspect qwen3-30b-a3b-gptq-int4)
golden(inspect_qwen3-30b-a3b-gptq-int4.txt)
run(inspect_awq_json 0 inspect qwen2.5-7b-instruct-awq --json)
golden(inspect_qwen2.5-7b-instruct-awq.json)
run(inspect_next 0 inspect qwen3-next-80b-a3b-instruct)
golden(inspect_qwen3-next-80b-a3b-instruct.txt)
# Tiny configs of each family and quantization layout: the synthesized tensor lists, reviewed
# by hand against the families' checkpoints (names, dtypes, shapes).
file(GLOB tiny RELATIVE ${SRC}/tests/configs ${SRC}/tests/configs/*)
foreach(t ${tiny})
  run(tiny_${t} 0 inspect tests/configs/${t} --tensors)
  golden(configs/${t}.txt)
endforeach()
run(models 0 models)
golden(models.txt)
run(gpus 0 gpus)
golden(gpus.txt)
run(plan_4b 0 plan qwen3-4b-instruct-2507-awq --gpu 4090 --max-model-len 262144)
golden(plan_qwen3-4b-awq_4090_256k.txt)
run(plan_35b 0 plan qwen3.5-35b-a3b-awq --gpu 4090 -tp 2 --max-model-len 4096 --explain)
golden(plan_qwen3.5-35b-a3b-awq_2x4090.txt)
run(plan_json 0 plan qwen3-8b --gpu h100 --max-model-len auto --json)
golden(plan_qwen3-8b_h100_auto.json)
run(plan_bad_gpu 2 plan qwen3-8b --gpu rtx-9090)
if(NOT last_err MATCHES "nearest: ")
  message(SEND_ERROR "plan_bad_gpu: no suggestion in '${last_err}'")
endif()
# The same card twice for an engine planned with one card type: give it once, with the count
# in the command.
run(check_same_cards 2 check --gpu rtx-3090,rtx-3090 --
    llama-server -m fuzz/corpus/gguf/llama-arrays.gguf)
if(NOT last_err MATCHES "give the card once")
  message(SEND_ERROR "check_same_cards: '${last_err}'")
endif()
# A Hub-style id matched to a catalog entry by its last part only says which model was read;
# the catalog's own repo id does not.
run(check_by_name 0 check --gpu h100-sxm -- vllm serve someorg/Qwen3-8B --max-model-len 8192)
if(NOT last_err MATCHES "someorg/Qwen3-8B is neither a local path.*read as the catalog's qwen3-8b")
  message(SEND_ERROR "check_by_name: no note in '${last_err}'")
endif()
run(check_catalog_repo 0 check --gpu h100-sxm -- vllm serve Qwen/Qwen3-8B --max-model-len 8192)
if(last_err MATCHES "by its name")
  message(SEND_ERROR "check_catalog_repo: a by-name note for the catalog's repo: '${last_err}'")
endif()
# What vLLM refuses while its config is built is a plan that fails at startup, with the ways
# out re-planned (a plan exits 0; check exits 1).
run(plan_bad_tp 0 plan qwen3-8b --gpu h100-sxm -tp 3)
string(CONCAT re "FAILS at startup: Total number of attention heads \\(32\\) must be "
                 "divisible by tensor parallel size \\(3\\)")
if(NOT last_out MATCHES "${re}" OR NOT last_out MATCHES "--tensor-parallel-size 2 ")
  message(SEND_ERROR "plan_bad_tp: '${last_out}'")
endif()
run(check_long_len 1 check --gpu h100-sxm -- vllm serve qwen3-8b --max-model-len 131072)
if(NOT last_out MATCHES "FAILS at startup: User-specified max_model_len \\(131072\\)"
   OR NOT last_out MATCHES "--hf-overrides '{\"rope_scaling\": {\"rope_type\": \"yarn\"")
  message(SEND_ERROR "check_long_len: '${last_out}'")
endif()
# SGLang: plan, check of a real launch line (quotes, JSON, unknown flags named), both failures.
run(plan_sglang 0 plan llama-3.1-8b-instruct --gpu h100 --engine sglang)
golden(plan_llama-3.1-8b_h100_sglang.txt)
run(check_sglang_fits 0 check --gpu h100 -- python -m sglang.launch_server --model-path qwen3-8b
    --tp 2 --mem-fraction-static 0.85
    --json-model-override-args "{\"max_position_embeddings\": 32768}" --enable-hierarchical-cache)
if(NOT last_err MATCHES "--enable-hierarchical-cache"
   OR NOT last_out MATCHES "context-length 32768")
  message(SEND_ERROR "check_sglang_fits: '${last_out}' '${last_err}'")
endif()
run(check_sglang_pool 1 check --gpu h100 -- sglang serve --model-path qwen3-32b
    --mem-fraction-static 0.7 --context-length 8192)
if(NOT last_out MATCHES "Not enough memory. Please try to increase --mem-fraction-static")
  message(SEND_ERROR "check_sglang_pool: '${last_out}'")
endif()
run(fit_sglang 0 fit qwen3-32b --gpu h100 --engine sglang)
# A 4-bit sibling in the catalog: Qwen's AWQ or RedHat's w4a16, whichever holds more KV.
if(NOT last_out MATCHES "python -m sglang.launch_server --model-path "
   OR NOT last_out MATCHES "(Qwen/Qwen3-32B-AWQ|RedHatAI/Qwen3-32B-quantized.w4a16)")
  message(SEND_ERROR "fit_sglang: '${last_out}'")
endif()
run(plan_sglang_tp3 0 plan qwen3-8b --gpu h100-sxm --engine sglang --tp-size 3)
if(NOT last_out MATCHES "FAILS at startup: Total number of attention heads \\(32\\) must be")
  message(SEND_ERROR "plan_sglang_tp3: '${last_out}'")
endif()
run(plan_sglang_vllm_flag 2 plan qwen3-8b --gpu h100 --engine sglang --max-model-len 4096)
if(NOT last_err MATCHES "--max-model-len is not a flag of SGLang")
  message(SEND_ERROR "plan_sglang_vllm_flag: '${last_err}'")
endif()
run(check_fails 1 check --gpu 4090 -- vllm serve qwen3-4b-instruct-2507-awq --max-model-len=262144
    --port 8000)
run(check_fits 0 check --gpu 4090 -- python -m vllm.entrypoints.openai.api_server --model
    qwen3.5-35b-a3b-awq -tp 2 --max-model-len 4096 --limit-mm-per-prompt {"image":2}
    --max-logprobs 3 --enable-prompt-embeds)
if(NOT last_err MATCHES "flags not modelled \\(ignored\\): --enable-prompt-embeds" OR
   NOT last_err MATCHES "flags read, no memory effect: --max-logprobs")
  message(SEND_ERROR "check_fits: unknown flags not reported: '${last_err}'")
endif()
# Flag and environment names holding a control byte are echoed escaped (issue 11).
string(ASCII 27 esc)
run(check_escaped_flag 2 check --gpu h100 -- "X${esc}=1" vllm serve qwen3-8b "--foo${esc}[2J" 3)
string(FIND "${last_err}" "${esc}" esc_at)
if(NOT esc_at EQUAL -1 OR NOT last_err MATCHES "--foo\\\\x1b\\[2J[^:]*: vLLM 0.22 has no such flag"
   OR NOT last_err MATCHES "ignored\\): X\\\\x1b\n")
  message(SEND_ERROR "check_escaped_flag: flag name not escaped: '${last_err}'")
endif()
run(check_fit_advice 0 check --gpu 4090 -- vllm serve qwen3-4b-instruct-2507-awq --max-model-len
    128000)
run(check_v0_env 1 check --gpu 3090 -- VLLM_USE_V1=0 vllm serve meta-llama/Llama-3.1-8B-Instruct
    --max-model-len 29000)
if(NOT last_out MATCHES "larger than the maximum number of tokens that can be stored in KV cache")
  message(SEND_ERROR "check_v0_env: V0 max-length check not applied: '${last_out}'")
endif()
# fit: the reported scenarios; each emitted command passes `check`.
run(fit_4b_awq 0 fit qwen3-4b-instruct-2507-awq --gpu 4090)
golden(fit_qwen3-4b-awq_4090.txt)
run(fit_4b_awq_json 0 fit qwen3-4b-instruct-2507-awq --gpu 4090 --json)
set(fit_json "${last_out}")
string(JSON n LENGTH "${fit_json}" options)
math(EXPR last "${n} - 1")
foreach(i RANGE ${last})
  string(JSON cmd GET "${fit_json}" options ${i} command)
  separate_arguments(cmd_list UNIX_COMMAND "${cmd}")
  run(fit_4b_awq_check_${i} 0 check --gpu 4090 -- ${cmd_list})
endforeach()
run(fit_35b_awq 0 fit qwen3.5-35b-a3b-awq --gpu 4090 --gpus 2 --goal concurrency --min-context 4096
    --json)
string(JSON cmd GET "${last_out}" best command)
separate_arguments(cmd_list UNIX_COMMAND "${cmd}")
run(fit_35b_awq_check 0 check --gpu 4090 -- ${cmd_list})
run(fit_unmet 1 fit qwen3-8b --gpu 4090 --min-context 40960 --min-concurrency 64 --no-variants)
if(NOT last_out MATCHES
   "cannot be met: no context >= 40,960 tokens at 64x concurrency fits on 1 x rtx-4090")
  message(SEND_ERROR "fit_unmet: '${last_out}'")
endif()
run(fit_too_long 2 fit qwen3-8b --gpu 4090 --min-context 1m)
run(fit_bad_len 2 fit qwen3-8b --gpu 4090 --min-context 12.5K)
run(fit_no_gpu 2 fit qwen3-8b)
run(fit_bad_goal 2 fit qwen3-8b --gpu 4090 --goal speed)
run(fit_zero_gpus 2 fit qwen3-8b --gpu 4090 --gpus 0)  # it searched one GPU and exited 0
if(NOT last_err MATCHES "--gpus 0: expected 1 to 64")
  message(SEND_ERROR "fit_zero_gpus: '${last_err}'")
endif()
run(fit_gpus_table 0 fit qwen3-8b --gpus-table --gpus 4)
golden(fit_gpus_table_qwen3-8b.txt)
# doctor: text and JSON, the calibrated plan, stdin, and what it cannot read.
set(kv29k ${SRC}/tests/doctor/corpus/vllm-kv-max-seq-len-29000-llama3.1-8b-3090-10517.log)
run(doctor_kv 0 doctor ${kv29k})
golden(doctor_kv_29000.txt)
run(doctor_kv_model 0 doctor ${kv29k} --model llama-3.1-8b-instruct --gpu 3090)
golden(doctor_kv_29000_calibrated.txt)
# SGLang with --model alone: the plan calibrated on the load-end line (free before the load =
# avail mem 7.55 + mem usage 15.40 = 22.95 GiB, after it 7.55 GiB; the GPU taken as 23 GiB).
# Its fix is the lowest --mem-fraction-static whose pool holds one request of Qwen3-8B's 40,960
# tokens at 36 layers x 2 x 8 KV heads x 128 x 2 B = 147,456 B a token (5.625 GiB):
# rest = 7.55 - 22.95 x (1 - f) >= 5.625 from f = 0.9161: 0.92 (41,608 tokens; 0.91: 39,936).
set(sgl ${SRC}/tests/doctor/cases/sglang-calibrated-not-enough-qwen3-8b-4090.log)
run(doctor_sglang_calibrated 0 doctor ${sgl} --model qwen3-8b)
if(NOT last_out MATCHES "--mem-fraction-static 0.92"
   OR NOT last_out MATCHES "calibrated plan \\(free memory before the load 22.95 GiB")
  message(SEND_ERROR "doctor_sglang_calibrated: '${last_out}'")
endif()
run(doctor_sglang_calibrated_json 0 doctor ${sgl} --model qwen3-8b --gpu 4090 --json)
string(JSON engine GET "${last_out}" engine)
string(JSON fix GET "${last_out}" fixes 0 change)
string(JSON before GET "${last_out}" numbers calibrated_free_before_load_bytes)
if(NOT engine STREQUAL "sglang" OR NOT fix STREQUAL "--mem-fraction-static 0.92"
   OR NOT before MATCHES "^2464237" OR NOT last_out MATCHES "calibrated plan \\(free memory")
  message(SEND_ERROR "doctor_sglang_calibrated_json: ${engine} '${fix}' ${before}")
endif()
run(doctor_json 0 doctor ${SRC}/tests/doctor/reported/seed-001-qwen3.5-35b-a3b-awq-image-upload.log
    --model qwen3.5-35b-a3b-awq --json)
string(JSON schema GET "${last_out}" schema)
string(JSON stage GET "${last_out}" stage)
string(JSON cause GET "${last_out}" cause)
string(JSON req GET "${last_out}" numbers requested_bytes)
if(NOT schema STREQUAL "vramfit.doctor/1" OR NOT stage STREQUAL "runtime" 
   OR NOT cause STREQUAL "multimodal_encoder"
   OR NOT req STREQUAL "19327352832")
  message(SEND_ERROR "doctor_json: ${schema} ${stage} ${cause} ${req}")
endif()
string(JSON other TYPE "${last_out}" other_error)
if(NOT other STREQUAL "NULL")
  message(SEND_ERROR "doctor_json: other_error is ${other}, not null")
endif()
# A failure that is not out-of-memory: diagnosed (exit 0), the error named and its line quoted,
# no memory setting among the fixes.
set(ima ${SRC}/tests/doctor/cases/not-oom-vllm-v1-illegal-access-dump.log)
run(doctor_not_oom 0 doctor ${ima})
golden(doctor_not_oom_illegal_access.txt)
run(doctor_not_oom_json 0 doctor ${ima} --json)
string(JSON cause GET "${last_out}" cause)
string(JSON kind GET "${last_out}" other_error kind)
string(JSON line GET "${last_out}" other_error line)
string(JSON fix GET "${last_out}" fixes 0 change)
string(JSON nfix LENGTH "${last_out}" fixes)
if(NOT cause STREQUAL "not_out_of_memory" OR NOT kind STREQUAL "illegal_memory_access"
   OR NOT line GREATER 0 OR NOT fix STREQUAL "CUDA_LAUNCH_BLOCKING=1" OR NOT nfix EQUAL 1)
  message(SEND_ERROR "doctor_not_oom_json: ${cause} ${kind} ${line} '${fix}' ${nfix}")
endif()
execute_process(COMMAND ${VRAMFIT} doctor - INPUT_FILE ${kv29k} RESULT_VARIABLE rc OUTPUT_VARIABLE
                out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "cause:  kv_too_long_context")
  message(SEND_ERROR "doctor_stdin: exit ${rc}: ${out}${err}")
endif()
file(WRITE ${WORK}/empty.log "")
run(doctor_empty 2 doctor ${WORK}/empty.log)
if(NOT last_err MATCHES "the log is empty")
  message(SEND_ERROR "doctor_empty: '${last_err}'")
endif()
run(doctor_missing 2 doctor ${WORK}/no-such.log)
file(WRITE ${WORK}/unknown.log "starting my app\nERROR something unrelated failed\n")
run(doctor_unknown 2 doctor ${WORK}/unknown.log)
if(NOT last_err MATCHES "not placed: line 2: ERROR something unrelated failed")
  message(SEND_ERROR "doctor_unknown: '${last_err}'")
endif()
run(doctor_binary 2 doctor ${SRC}/tests/bad/overlap.safetensors)
run(check_no_command 2 check --gpu 4090)
run(check_not_vllm 2 check --gpu 4090 -- sglang launch)
run(plan_bad_len 2 plan qwen3-8b --gpu h100 --max-model-len -5)
run(plan_bad_util 2 plan qwen3-8b --gpu h100 --gpu-memory-utilization 1.5)

run(bad_file 2 inspect ${SRC}/tests/bad/overlap.safetensors)
if(NOT last_err MATCHES "overlaps tensor" OR NOT last_out STREQUAL "")
  message(SEND_ERROR "bad_file: diagnostics must go to stderr only: '${last_err}' / '${last_out}'")
endif()
# Every handcrafted broken input exits 2 with its message on stderr and nothing on stdout.
file(GLOB bad_inputs RELATIVE ${SRC}/tests/bad ${SRC}/tests/bad/*)
foreach(b ${bad_inputs})
  run(bad_${b} 2 inspect ${SRC}/tests/bad/${b})
  if(last_err STREQUAL "" OR NOT last_out STREQUAL "")
    message(SEND_ERROR "bad input ${b}: expected a message on stderr only")
  endif()
endforeach()
run(unknown_model 2 inspect qwen3-9b)
if(NOT last_err MATCHES "nearest: .*qwen3-8b")
  message(SEND_ERROR "unknown_model: no suggestion in '${last_err}'")
endif()
# Hub ids (ctest runs this offline, HF_HUB_OFFLINE=1, with an empty cache: no network).
run(hub_id 2 inspect someorg/some-model)
if(NOT last_err MATCHES "someorg/some-model@main: offline .*Hugging Face Hub cache")
  message(SEND_ERROR "hub_id: '${last_err}'")
endif()
run(hub_id_bad 2 inspect someorg/some--model)
if(NOT last_err MATCHES "not a Hub repo id: expected org/name\\[@revision\\]")
  message(SEND_ERROR "hub_id_bad: '${last_err}'")
endif()
# run_err(NAME RC REGEX ARGS...): run() that also fails when stderr does not match REGEX.
function(run_err name expect_rc regex)
  run(${name} ${expect_rc} ${ARGN})
  if(NOT last_err MATCHES "${regex}")
    message(SEND_ERROR "${name}: stderr does not match '${regex}': '${last_err}'")
  endif()
  set(last_out "${last_out}" PARENT_SCOPE)
  set(last_err "${last_err}" PARENT_SCOPE)
endfunction()
# "--gpu 2x rtx3090": the count before the card, the card a stray word; both commands say how.
run_err(gpu_count_word_plan 2 "--gpu 2x rtx3090: --gpu names one card \\(--gpu rtx3090\\);"
        plan qwen3-8b --gpu 2x rtx3090)
run_err(gpu_count_word_check 2 "--gpu 2x rtx3090: --gpu names one card \\(--gpu rtx3090\\)"
        check --gpu 2x rtx3090 -- vllm serve qwen3-8b -tp 2)
# The help's own llama.cpp example names a file that is not here: planned as the what-if its
# name spells, said on the plan's what-if line.
run(check_gguf_name 0 check --gpu 4090 -- llama-server -m Qwen3-8B-Q4_K_M.gguf -ngl 99 -c 32768)
if(NOT last_out MATCHES "what-if: GGUF Q4_K_M for the missing file Qwen3-8B-Q4_K_M.gguf")
  message(SEND_ERROR "check_gguf_name: '${last_out}'")
endif()
# A GPU name several cards answer to: read as the first card of data/gpus.json's
# ambiguous_names, with a note naming it and the ids of the others; a card's own id: no note.
string(CONCAT re "note: --gpu a100 fits several cards; read as a100-80gb \\(80 GB\\); give "
                 "--gpu a100-40gb \\(40 GB\\) for another")
run_err(gpu_ambiguous 0 "${re}" plan qwen3-8b --gpu a100 --json)
string(JSON total GET "${last_out}" gpus 0 total_bytes)
run(gpu_a100_80 0 plan qwen3-8b --gpu a100-80gb --json)
string(JSON total_80 GET "${last_out}" gpus 0 total_bytes)
if(NOT total EQUAL total_80 OR last_err MATCHES "several cards")
  message(SEND_ERROR "gpu_a100_80: ${total} vs ${total_80}, '${last_err}'")
endif()
string(CONCAT re "read as h100-sxm \\(80 GB\\); give --gpu h100-pcie \\(80 GB\\), "
                 "h100-nvl \\(94 GB\\) for another")
run_err(gpu_h100 0 "${re}" plan qwen3-8b --gpu H100)
# Consumer cards sold with two memory sizes under one name: the bare name and the driver's
# name both note the other size.
string(CONCAT re "read as rtx-3060-12gb \\(12 GB\\); give --gpu rtx-3060-8gb \\(8 GB\\) "
                 "for another")
run_err(gpu_3060 0 "${re}" plan qwen3-8b --gpu 3060)
run_err(gpu_3060_driver_name 0 "${re}" plan qwen3-8b --gpu "NVIDIA GeForce RTX 3060")
string(CONCAT re "read as rtx-4060-ti-8gb \\(8 GB\\); give --gpu rtx-4060-ti-16gb \\(16 GB\\) "
                 "for another")
run_err(gpu_4060ti 0 "${re}" plan qwen3-8b --gpu "RTX 4060 Ti")
# A card added with its own total: the plan reads it, by id and by alias alike.
run(gpu_rtx4080 0 plan qwen3-8b --gpu rtx-4080 --json)
string(JSON total_4080 GET "${last_out}" gpus 0 total_bytes)
run(gpu_4080_alias 0 plan qwen3-8b --gpu 4080 --json)
string(JSON total_4080_alias GET "${last_out}" gpus 0 total_bytes)
if(NOT total_4080 EQUAL 16828596224 OR NOT total_4080_alias EQUAL total_4080
   OR last_err MATCHES "several cards")
  message(SEND_ERROR "gpu_rtx4080: ${total_4080} / ${total_4080_alias}, '${last_err}'")
endif()
# A size in GB (powers of ten) says what it comes to in GiB.
string(CONCAT re "--gpu-memory 16GB: read as 16000000000 bytes = 14.90 GiB \\(GB and MB "
                 "are powers of ten; 16GiB counts in powers of two\\)")
run_err(gpu_memory_gb 0 "${re}" plan qwen3-8b --gpu-memory 16GB)
# A mistyped subcommand is named, with the list of real ones; a directory given as the log or
# the script is named as one.
run_err(subcommand_typo 2 "unknown subcommand \"plna\"; the subcommands: inspect, models, plan"
        plna qwen3-8b --gpu 4090)
run_err(doctor_directory 2 "^vramfit doctor: tests: a directory, not a log file" doctor tests)
run_err(script_directory 2 "^vramfit check: tests: a directory, not a file"
        check --gpu 4090 --script tests)
# fit with an older release: its "check it" line plans the same release, with its launcher.
string(CONCAT re "check it: vramfit check --gpu rtx-4090 --engine vllm@0.3 -- python -m "
                 "vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-7B-Instruct ")
run(fit_old_release_check_line 0 fit qwen2.5-7b-instruct --gpu 4090 --engine vllm@0.3)
if(NOT last_out MATCHES "${re}")
  message(SEND_ERROR "fit_old_release_check_line: '${last_out}'")
endif()
# One of check's own options after -- is the engine's (vLLM reads --gpu as its
# --gpu-memory-utilization): the refusal says it goes before --.
run_err(check_own_option_after_dashes 2
        "--gpu-memory-utilization \"h100\".*--gpu after -- belongs to the engine's command; "
        check -- vllm serve Qwen/Qwen3-8B --gpu h100)
# A 16-bit 12B model whose weights load on a 24 GB card but leave too little for the profile
# run: online quantization is offered as for a load failure.
run(plan_profile_online_quant 0 plan gemma-3-12b-it --gpu 4090)
if(NOT last_out MATCHES "FAILS at profile"
   OR NOT last_out MATCHES "\n  --quantization bitsandbytes +fits")
  message(SEND_ERROR "plan_profile_online_quant: '${last_out}'")
endif()
# A plan-only flag given to check before -- is named.
run_err(check_flag_before_command 2 "^vramfit check: --compile-cache-warm before -- is not check's"
        check --gpu 4090 --compile-cache-warm -- vllm serve qwen3-8b)
# An endless input is refused, never read to the end: a device as the log, more than 16 MiB
# as a script or --env file.
run_err(doctor_device 2 "^vramfit doctor: /dev/zero: a device, not a log file" doctor /dev/zero)
run_err(script_endless 2 "/dev/zero: more than 16 MiB: not a deploy script"
        check --gpu 4090 --script /dev/zero)
run_err(env_endless 2 "/dev/zero: more than 16 MiB: not a deploy script or environment file"
        check --gpu 4090 --env /dev/zero --script tests/scripts/004_vllm_awq_256k.sh)
# --engine as people write the engine (llama.cpp, SGLang), and a vLLM flag given to SGLang.
run(engine_title 0 plan qwen3-8b --gpu 4090 --engine SGLang@0.5.5)
if(NOT last_out MATCHES "^SGLang 0.5.5 rules")
  message(SEND_ERROR "engine_title: '${last_out}'")
endif()
run_err(engine_title_llamacpp 2 "llama.cpp runs GGUF files"
        plan qwen3-8b --gpu 4090 --engine llama.cpp)
run_err(sglang_vllm_flag 2 "SGLang spells the nearest setting --context-length"
        plan qwen3-8b --gpu 4090 --engine sglang --max-model-len 32k)
# Every SGLang flag is planned, named as not modelled (lists too, their values with them), or
# refused as SGLang's parser refuses it (exit 2, naming the nearest real flags).
run_err(check_sglang_unmodelled 0
        "flags not modelled \\(ignored\\): --enable-hierarchical-cache --cuda-graph-bs"
        check --gpu h100 -- sglang serve --model-path qwen3-8b --enable-hierarchical-cache
        --cuda-graph-bs 1 2 4 --context-length 8192)
run_err(check_sglang_unknown 2
        "--max-model-len: SGLang 0.5.5 or 0.5.13 has no such flag .*--context-length"
        check --gpu h100 -- python -m sglang.launch_server --model-path qwen3-8b
        --max-model-len 8192)
run_err(check_sglang_typo 2 "--mem-fraction-statc: .*nearest: --mem-fraction-static"
        check --gpu h100 -- sglang serve --model-path qwen3-8b --mem-fraction-statc 0.8)
run_err(check_sglang_release 2 "--limit-mm-data-per-request: SGLang 0.5.5 has no such flag"
        check --gpu h100 --sglang-version 0.5.5 -- sglang serve --model-path qwen3-8b
        --limit-mm-data-per-request {"image":1})
run_err(check_sglang_switch_value 2 "true is neither a flag nor a flag's value"
        check --gpu h100 -- sglang serve --model-path qwen3-8b --disable-cuda-graph true)
# SGLang's --kv-cache-dtype choices have no plain fp8 (vLLM's word): refused with SGLang's.
run_err(check_sglang_kv_fp8 2 "invalid choice: 'fp8' .*vLLM's fp8 is SGLang's fp8_e4m3"
        check --gpu h100 -- sglang serve --model-path qwen3-8b --kv-cache-dtype fp8)
# --quantization takes SGLang's choices only; an online method other than fp8 is named.
run_err(check_sglang_quant_choice 2 "argument --quantization: invalid choice: 'int4'"
        check --gpu h100 -- sglang serve --model-path qwen3-8b --quantization int4)
run(check_sglang_quant_note 0 check --gpu h100 -- sglang serve --model-path qwen3-8b
    --quantization w8a8_int8 --context-length 8192)
if(NOT last_out MATCHES "--quantization w8a8_int8 of a 16-bit checkpoint is not modelled")
  message(SEND_ERROR "check_sglang_quant_note: '${last_out}'")
endif()
# DP attention splits the TP group: more GPUs are counted as TP x PP, not x DP as well.
run(plan_sglang_dp_attention_gpus 0 plan qwen3-32b --gpu 4090 --engine sglang --tp 2 --dp 2
    --enable-dp-attention --context-length 32768)
if(NOT last_out MATCHES "--tp-size 4 \\(4 GPUs\\)" OR last_out MATCHES "\\(8 GPUs")
  message(SEND_ERROR "plan_sglang_dp_attention_gpus: '${last_out}'")
endif()
# A flag without its value, on vramfit's line and on the engine's.
run_err(flag_no_value 2 "^vramfit plan: --tensor-parallel-size needs a value \\(INT\\)"
        plan qwen3-8b --gpu 4090 -tp)
string(CONCAT re "--max-model-len needs a value \\(`vllm serve` stops with \"argument "
                 "--max-model-len: expected one argument\"\\)")
run_err(vllm_flag_no_value 2 "${re}" check --gpu 4090 -- vllm serve qwen3-8b --max-model-len)
# Spellings vLLM's parser accepts (an abbreviation, `_` for `-`, dotted keys) are read as the
# flag they stand for: the verdict changes with them, and none is "not modelled".
foreach(f "--max-model 8192" "--max_model_len 8192" "--max-model=8192")
  separate_arguments(words UNIX_COMMAND "${f}")
  run(check_vllm_spelling 0 check --gpu 4090 -- vllm serve qwen3-8b ${words})
  if(NOT last_out MATCHES "vllm serve Qwen/Qwen3-8B --max-model-len 8192 " OR
     last_err MATCHES "not modelled")
    message(SEND_ERROR "check_vllm_spelling ${f}: '${last_out}' '${last_err}'")
  endif()
endforeach()
# A word no vLLM option takes, and a switch given a value, stop `vllm serve`: exit 2, never
# passed over. `--no-NAME` of a switch is its off (the default), undoing an earlier `--NAME`.
run_err(check_vllm_switch_word 2 "true \\(after --enforce-eager, a switch that takes no value"
        check --gpu 4090 -- vllm serve qwen3-8b --enforce-eager true)
run_err(check_vllm_stray_word 2 "extra is neither a flag nor a flag's value"
        check --gpu 4090 -- vllm serve qwen3-8b extra --max-model-len 8192)
run_err(check_vllm_switch_value 2 "--enforce-eager=1 takes no value"
        check --gpu 4090 -- vllm serve qwen3-8b --enforce-eager=1)
# argparse reads the positional model wherever it stands: after a switch it is the model.
run(check_vllm_model_after_switch 0 check --gpu 4090 -- vllm serve --enforce-eager qwen3-8b
    --max-model-len 8192)
run(check_vllm_model_after_value 0 check --gpu 4090 -- vllm serve --port 8000 qwen3-8b
    --max-model-len 8192)
run_err(check_vllm_word_after_value 2 "extra is neither a flag nor a flag's value"
        check --gpu 4090 -- vllm serve qwen3-8b --max-model-len 8192 extra)
run(check_vllm_no_switch 0 check --gpu 4090 -- vllm serve qwen3-8b --max-model-len 8192
    --enforce-eager --no-enforce-eager)
if(last_out MATCHES "--enforce-eager" OR last_err MATCHES "not modelled")
  message(SEND_ERROR "check_vllm_no_switch: '${last_out}' '${last_err}'")
endif()
# Server and logging flags with no memory effect pass silently.
run(check_vllm_quiet_flags 0 check --gpu 4090 -- vllm serve qwen3-8b --max-model-len 8192
    --max-log-len 100 --ssl-keyfile k.pem --root-path /api --tokenizer-mode auto)
if(last_err MATCHES "not modelled")
  message(SEND_ERROR "check_vllm_quiet_flags: '${last_err}'")
endif()
# CPU swap space, the config's reader and the workers' launcher change nothing on the GPU
# (a recipe's line for vLLM 0.14: --swap-space 16 --distributed-executor-backend mp).
run(check_vllm_quiet_cpu_flags 0 check --gpu 4090 --vllm-version 0.14 -- vllm serve qwen3-8b
    --max-model-len 8192 --swap-space 16 --distributed-executor-backend mp --config-format hf)
set(quiet "--swap-space --distributed-executor-backend --config-format")
if(NOT last_err MATCHES "flags read, no memory effect: ${quiet}\n" OR
   last_err MATCHES "not modelled")
  message(SEND_ERROR "check_vllm_quiet_cpu_flags: '${last_err}'")
endif()
# The Qwen3 model card's line for vLLM 0.8.5: --enable-reasoning only parses the replies.
run(check_vllm_quiet_reasoning 0 check --gpu 4090 --vllm-version 0.8.5 -- vllm serve qwen3-8b
    --max-model-len 8192 --enable-reasoning --reasoning-parser deepseek_r1 --rope-theta 2000000)
if(NOT last_err MATCHES "no memory effect: --enable-reasoning --reasoning-parser --rope-theta\n" OR
   last_err MATCHES "not modelled")
  message(SEND_ERROR "check_vllm_quiet_reasoning: '${last_err}'")
endif()
# In-flight bitsandbytes quantization of a 16-bit checkpoint packs the linears to NF4 while
# loading: Qwen3-8B's 15.27 GiB of bf16 weights hold 5.67 GiB.
run(check_vllm_bnb_inflight 0 check --gpu h100 -- vllm serve qwen3-8b --quantization
    bitsandbytes)
if(NOT last_out MATCHES "load +weights 5.67 GiB" OR last_out MATCHES "not modelled")
  message(SEND_ERROR "check_vllm_bnb_inflight: '${last_out}'")
endif()
# TurboQuant and NVFP4 KV caches (0.22's CacheDType): planned in their own page sizes; NVFP4 is
# read only on compute capability 10.x.
run(check_vllm_turboquant 0 check --gpu h100 -- vllm serve llama-3.1-8b-instruct
    --kv-cache-dtype turboquant_4bit_nc)
if(NOT last_out MATCHES "verdict: fits")
  message(SEND_ERROR "check_vllm_turboquant: '${last_out}'")
endif()
run(check_vllm_nvfp4_kv_ampere 1 check --gpu rtx-3090 -- vllm serve llama-3.1-8b-instruct
    --max-model-len 4096 --kv-cache-dtype nvfp4)
if(NOT last_out MATCHES "nvfp4 needs FlashInfer's trtllm-gen attention on a compute capability")
  message(SEND_ERROR "check_vllm_nvfp4_kv_ampere: '${last_out}'")
endif()
# fp8_ds_mla is the sparse MLA backends' layout: a dense model gets no attention backend.
run(check_vllm_fp8_ds_mla_dense 1 check --gpu h200 -- vllm serve deepseek-v3 -tp 8
    --kv-cache-dtype fp8_ds_mla)
if(NOT last_out MATCHES "fp8_ds_mla is read only by the sparse MLA attention backends")
  message(SEND_ERROR "check_vllm_fp8_ds_mla_dense: '${last_out}'")
endif()
# --rope-scaling (0.4.3 to 0.10) sets the config's rope_scaling, so YaRN x4 allows 131072
# tokens on Qwen3-8B (40960 in its config.json); from the release that dropped it, refused.
run(check_vllm_rope_scaling 0 check --gpu h100 --vllm-version 0.9.2 -- vllm serve qwen3-8b
    --rope-scaling
    "{\"rope_type\":\"yarn\",\"factor\":4.0,\"original_max_position_embeddings\":32768}"
    --max-model-len 131072)
if(NOT last_out MATCHES "one 131,072-token request" OR last_err MATCHES "not modelled")
  message(SEND_ERROR "check_vllm_rope_scaling: '${last_out}' '${last_err}'")
endif()
run_err(check_vllm_rope_scaling_bad 2 "--rope-scaling: expected a JSON object of rope_scaling"
    check --gpu h100 --vllm-version 0.9.2 -- vllm serve qwen3-8b --rope-scaling=yarn)
run_err(check_vllm_rope_scaling_gone 2
    "--rope-scaling: vLLM 0.22 no longer has this flag.*--hf-overrides"
    check --gpu h100 --vllm-version 0.22 -- vllm serve qwen3-8b --rope-scaling "{}")
# --async-scheduling has no memory effect; --kv-offloading-size is a host KV tier (the plan's
# notes say so, the GPU pool is unchanged); a size that is not GiB above 0 exits 2.
run(check_vllm_kv_offloading 0 check --gpu h100 -- vllm serve qwen3-8b --async-scheduling
    --kv-offloading-size 24 --max-model-len 32768)
if(NOT last_out MATCHES "a host KV tier of 24 GiB" OR last_err MATCHES "not modelled" OR
   NOT last_err MATCHES "no memory effect: --async-scheduling" OR
   NOT last_out MATCHES "--kv-offloading-size 24")
  message(SEND_ERROR "check_vllm_kv_offloading: '${last_out}' '${last_err}'")
endif()
run_err(check_vllm_kv_offloading_bad 2 "--kv-offloading-size 24GB: expected a size in GiB"
    check --gpu h100 -- vllm serve qwen3-8b --kv-offloading-size 24GB)
run_err(check_vllm_kv_offloading_backend_bad 2 "--kv-offloading-backend disk: expected native"
    check --gpu h100 -- vllm serve qwen3-8b --kv-offloading-size 4 --kv-offloading-backend disk)
# `plan` takes the host KV tier too and prints it back; --cudagraph-capture-sizes takes several
# words (argparse's nargs="+") in plan and check alike, up to the next flag.
run(plan_vllm_kv_offloading_and_capture_sizes 0 plan qwen3-8b --gpu h100 --max-model-len 8192
    --kv-offloading-size 24 --cudagraph-capture-sizes 1 2 4 8 --max-num-seqs 8 --explain)
if(NOT last_out MATCHES "a host KV tier of 24 GiB" OR
   NOT last_out MATCHES "--kv-offloading-size 24" OR
   NOT last_out MATCHES "--cudagraph-capture-sizes 1 2 4 8" OR
   NOT last_out MATCHES "graphs over 4 capture sizes up to 8")
  message(SEND_ERROR "plan_vllm_kv_offloading_and_capture_sizes: '${last_out}' '${last_err}'")
endif()
run(check_vllm_capture_sizes 0 check --gpu h100 -- vllm serve qwen3-8b --cudagraph-capture-sizes
    1 2 4 8 --max-num-seqs 8)
if(NOT last_out MATCHES "--cudagraph-capture-sizes 1 2 4 8" OR last_err MATCHES "not modelled")
  message(SEND_ERROR "check_vllm_capture_sizes: '${last_out}' '${last_err}'")
endif()
run_err(check_vllm_capture_sizes_twice 2 "mutually exclusive"
    check --gpu h100 -- vllm serve qwen3-8b --cudagraph-capture-sizes 1 2
    --compilation-config "{\"cudagraph_capture_sizes\": [4]}")
# --mm-encoder-tp-mode data: modelled for the Qwen-VL encoders (a note, nothing unmodelled).
run(check_vllm_mm_encoder_data 0 check --gpu h100 -- vllm serve qwen2.5-vl-72b-instruct -tp 4
    --max-model-len 32768 --mm-encoder-tp-mode data)
if(NOT last_out MATCHES "whole on each of the 4 ranks" OR last_err MATCHES "not modelled")
  message(SEND_ERROR "check_vllm_mm_encoder_data: '${last_out}' '${last_err}'")
endif()
# A flag that changes nothing for this model is named on check's stderr as plan names it.
run(check_vllm_without_effect 0 check --gpu h100 -- vllm serve qwen3-8b
    --disable-hybrid-kv-cache-manager)
if(NOT last_err MATCHES "without effect here \\(not modelled\\): --disable-hybrid-kv-cache")
  message(SEND_ERROR "check_vllm_without_effect: '${last_err}'")
endif()
# A KV connector on a linear-attention hybrid: vLLM refuses at start-up (check and plan alike);
# on a sliding-window model it is planned with the whole context in every layer.
run(check_vllm_kv_connector_linear 1 check --gpu h200 -- vllm serve qwen3-next-80b-a3b-instruct
    -tp 2 --kv-transfer-config "{\"kv_connector\": \"LMCacheConnectorV1\"}")
if(NOT last_out MATCHES "FAILS at startup: vLLM refuses to start: --kv-transfer-config" OR
   NOT last_out MATCHES "drop --kv-transfer-config")
  message(SEND_ERROR "check_vllm_kv_connector_linear: '${last_out}'")
endif()
# LMCache's server process holds about 0.55 GiB on each GPU outside vLLM's budget: at 0.97 of a
# 4090 the check fails as the KV cache is set up, and the advice is the utilization that fits.
run(check_vllm_lmcache_headroom 1 check --gpu rtx4090 -- vllm serve Qwen/Qwen3-8B
    --max-model-len 8192 --gpu-memory-utilization 0.97
    --kv-transfer-config "{\"kv_connector\": \"LMCacheMPConnector\"}")
if(NOT last_out MATCHES "FAILS at kv_cache: CUDA out of memory as the KV cache is set up" OR
   NOT last_out MATCHES "--gpu-memory-utilization 0.9[0-3] +fits")
  message(SEND_ERROR "check_vllm_lmcache_headroom: '${last_out}'")
endif()
run(plan_vllm_kv_connector_sliding 0 plan gpt-oss-20b --gpu h100 --max-model-len 65536
    --kv-transfer-config "{\"kv_connector\": \"NixlConnector\"}")
if(NOT last_out MATCHES "turns the hybrid KV cache manager off")
  message(SEND_ERROR "plan_vllm_kv_connector_sliding: '${last_out}'")
endif()
run_err(plan_vllm_kv_connector_bad 2 "--kv-transfer-config: expected a JSON object" plan
    gpt-oss-20b --gpu h100 --kv-transfer-config "[1]")
run(check_vllm_dotted 1 check --gpu h100 -- vllm serve qwen3-vl-30b-a3b-instruct
    --limit-mm-per-prompt.image 4 --limit-mm-per-prompt.video=0)
if(NOT last_out MATCHES "--limit-mm-per-prompt '{\"image\":4,\"video\":0}'" OR
   last_err MATCHES "not modelled")
  message(SEND_ERROR "check_vllm_dotted: '${last_out}' '${last_err}'")
endif()
# A CUDA_VISIBLE_DEVICES prefix after -- limits the GPUs as it does in a script, with or
# without a launch prefix between it and the engine.
foreach(launch "" "nohup")
  run_err(check_visible_devices 2 "CUDA_VISIBLE_DEVICES=0 leaves 1 GPU.s. visible; the "
          check --gpu 4090 -- CUDA_VISIBLE_DEVICES=0 ${launch} vllm serve qwen3-8b -tp 2)
endforeach()
run(check_visible_devices_enough 0 check --gpu 4090 -- CUDA_VISIBLE_DEVICES=0,1 vllm serve
    qwen3-8b -tp 2 --max-model-len 8192)
# vLLM's --config FILE: the YAML file's flags are read, placed before the command line's own
# (which win); a file that cannot be read, or a line that is not `key: value`, exits 2.
file(WRITE ${WORK}/vllm-config.yaml "# served by vLLM\nmodel: qwen3-8b\n"
     "max_model_len: 8192 # short\nenforce-eager: true\nenable-prefix-caching: false\n"
     "limit-mm-per-prompt:\n  image: 2\n")
run(check_vllm_config 0 check --gpu 4090 -- vllm serve --config ${WORK}/vllm-config.yaml
    --max-model-len 4096)
if(NOT last_out MATCHES "vllm serve Qwen/Qwen3-8B --max-model-len 4096 [^\n]*--enforce-eager"
   OR NOT last_out MATCHES "--limit-mm-per-prompt '{\"image\":2}'" OR last_err MATCHES "--config")
  message(SEND_ERROR "check_vllm_config: '${last_out}' '${last_err}'")
endif()
run_err(check_vllm_config_missing 2 "--config no-such.yaml: vLLM reads flags from this YAML file"
        check --gpu 4090 -- vllm serve qwen3-8b --config no-such.yaml)
file(WRITE ${WORK}/vllm-config-bad.yaml "model: qwen3-8b\nmax-model-len 8192\n")
run_err(check_vllm_config_bad 2 "vllm-config-bad.yaml:2: expected `key: value`"
        check --gpu 4090 -- vllm serve --config=${WORK}/vllm-config-bad.yaml)
string(REPEAT "[" 600 open)
string(REPEAT "]" 600 close)
file(WRITE ${WORK}/vllm-config-deep.yaml
     "model: qwen3-8b\nhf-overrides: {\"x\": ${open}${close}}\n")
run_err(check_vllm_config_deep 2 "vllm-config-deep.yaml:2: a value nested deeper than 512"
        check --gpu 4090 -- vllm serve --config ${WORK}/vllm-config-deep.yaml)
# A launch line that starts an engine without a model vramfit reads says which.
run_err(check_ollama_serve 2 "`ollama serve` loads no model: check the `ollama run MODEL`"
        check --gpu 4090 -- OLLAMA_HOST=0.0.0.0 ollama serve)
run_err(check_docker_unknown_image 2 "a container whose image vramfit does not know"
        check --gpu 4090 -- docker run --gpus all ghcr.io/ggml-org/llama.cpp:full-cuda
        --run -m /models/x.gguf -c 4096)
# llama.cpp's server images run llama-server (docs/docker.md's line, a local model mounted).
run(check_docker_llamacpp_server 0 check --gpu 4090 -- docker run -p 8080:8080 -v
    ${SRC}/tests/gguf:/models --gpus all ghcr.io/ggml-org/llama.cpp:server-cuda
    -m tests/gguf/tiny-qwen3-Q4_K_M.gguf -c 512 --host 0.0.0.0 --port 8080 --n-gpu-layers 99)
if(NOT last_out MATCHES "llama-server -m tests/gguf/tiny-qwen3-Q4_K_M.gguf -c 512 -ngl 99")
  message(SEND_ERROR "check_docker_llamacpp_server: '${last_out}'")
endif()
# A card named again is read once: its notes are said once, however many ranks it stands for.
run(gpu_list_same_card 0 plan qwen3-8b --gpu h100,h100 --gpu-memory 80GB -tp 2)
string(REGEX MATCHALL "fits several cards" notes "${last_err}")
string(REGEX MATCHALL "GB and MB are powers of ten" sizes "${last_err}")
list(LENGTH notes n_notes)
list(LENGTH sizes n_sizes)
if(NOT n_notes EQUAL 1 OR NOT n_sizes EQUAL 1)
  message(SEND_ERROR "gpu_list_same_card: ${n_notes} card notes, ${n_sizes} size notes: "
                     "'${last_err}'")
endif()
# A card count or a list where --gpu names one card.
foreach(g "2x4090" "4090 x2")
  run_err(gpu_count 2 "--gpu names one card; give --gpu 4090 and the count as -tp 2"
          plan qwen3-8b --gpu ${g})
endforeach()
# A bare number is GiB; an impossible one is quoted as typed, not with the unit added.
run_err(gpu_memory_zero 2 "memory size \"0\" \\(a bare number: GiB\\): expected between"
        plan qwen3-8b --gpu-memory 0)
run_err(gpu_list 2 "cards are separated by commas, one per vLLM pipeline stage"
        plan qwen3-8b --gpu 4090+3090)
run_err(gpu_list_count 2 "--gpu names 2 cards, but the deployment has 1 pipeline stage"
        plan qwen3-8b --gpu 4090,3090)
# Models only a downloader resolves: an Ollama library name not in vramfit's table (the ones
# in it plan their GGUF what-if, below), a llama.cpp -hf repo read offline (and Ollama's hf.co/
# form of the same), each exit 2 saying what to pass instead.
string(CONCAT re "\"starcoder2:15b\" is an Ollama library name, which vramfit does not "
                 "download: give the GGUF file Ollama pulled, the blob on the FROM line of "
                 "`ollama show --modelfile starcoder2:15b`")
run_err(ollama_library 2 "${re}" check --gpu 4090 -- ollama run starcoder2:15b)
string(CONCAT re "Qwen/Qwen3-8B-GGUF.*llama.cpp's -hf downloads a .gguf file from the Hub: "
                 "without a network, give that file as -m FILE.gguf")
run_err(llamacpp_hf_offline 2 "${re}"
        check --gpu 4090 -- llama-server -hf Qwen/Qwen3-8B-GGUF:Q4_K_M)
run_err(ollama_hf_offline 2 "Qwen/Qwen3-8B-GGUF.*offline"
        check --gpu 4090 -- ollama run hf.co/Qwen/Qwen3-8B-GGUF:Q4_K_M)
# -hf where the Hub cannot be reached (a refused connection, not HF_HUB_OFFLINE): the what-if
# its tag spells, with the vision projector -hf also fetches planned from the catalog model's
# tower (Qwen3.6's qwen3vl_merger at 16 bits): at -c 120000 it does not fit beside the model
# (exit 1); --no-mmproj-auto (--no-mmproj) leaves it out and the plan fits (exit 0).
function(run_unreachable name expect_rc)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=HF_HUB_OFFLINE
                          HF_ENDPOINT=http://127.0.0.1:1 ${VRAMFIT} ${ARGN}
                  WORKING_DIRECTORY ${SRC} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL expect_rc)
    message(SEND_ERROR "${name}: exit ${rc}, expected ${expect_rc}\nstdout: ${out}\n${err}")
  endif()
  set(last_out "${out}" PARENT_SCOPE)
endfunction()
set(hf_tight llama-server -hf unsloth/Qwen3.6-35B-A3B-GGUF:Q4_K_M -ngl 99 -c 120000 -np 1)
run_unreachable(llamacpp_hf_unreachable_mmproj 1 check --gpu 3090 -- ${hf_tight})
if(NOT last_out MATCHES "what-if: GGUF Q4_K_M for the Hub file .*the Hub was not reached"
   OR NOT last_out MATCHES "warmup +vision projector 851.77 MiB \\+ encoder compute"
   OR NOT last_out MATCHES "FAILS at warmup")
  message(SEND_ERROR "llamacpp_hf_unreachable_mmproj: '${last_out}'")
endif()
run_unreachable(llamacpp_hf_unreachable_no_mmproj 0 check --gpu 3090 -- ${hf_tight}
                --no-mmproj-auto)
if(last_out MATCHES "vision projector")
  message(SEND_ERROR "llamacpp_hf_unreachable_no_mmproj: '${last_out}'")
endif()
# Hostile inputs (docs/testing.md). A FIFO where a file is expected is refused with exit 2,
# never waited on: each run has a time limit, so a blocking read fails the test instead of
# hanging it.
function(run_limited name expect_rc)
  execute_process(COMMAND ${VRAMFIT} ${ARGN} WORKING_DIRECTORY ${SRC} TIMEOUT 30
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL expect_rc)
    message(SEND_ERROR "${name}: exit ${rc}, expected ${expect_rc}\nstderr: ${err}")
  endif()
  set(last_out "${out}" PARENT_SCOPE)
  set(last_err "${err}" PARENT_SCOPE)
endfunction()
set(h ${WORK}/hostile)
file(REMOVE_RECURSE ${h})
set(tiny_cfg "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\",\"hidden_size\":8,\
\"num_hidden_layers\":1,\"num_attention_heads\":2,\"intermediate_size\":16,\"vocab_size\":4}")
file(WRITE ${h}/weights/config.json "${tiny_cfg}")
file(WRITE ${h}/shard/config.json "${tiny_cfg}")
file(WRITE ${h}/shard/model.safetensors.index.json "{\"weight_map\":{\"a\":\"s.safetensors\"}}")
file(MAKE_DIRECTORY ${h}/config ${h}/file)
foreach(f weights/model.safetensors config/config.json shard/s.safetensors file/w.safetensors
        file/model)
  execute_process(COMMAND mkfifo ${h}/${f} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(SEND_ERROR "mkfifo ${h}/${f} failed")
  endif()
endforeach()
foreach(c weights/model.safetensors:weights config/config.json:config
          config/config.json:config/config.json shard/s.safetensors:shard
          file/w.safetensors:file/w.safetensors file/model:file/model)
  string(REPLACE ":" ";" pair "${c}")
  list(GET pair 0 fifo)
  list(GET pair 1 model)
  foreach(cmd inspect plan)
    set(gpu "")
    if(cmd STREQUAL "plan")
      set(gpu --gpu 4090)
    endif()
    run_limited(fifo_${cmd}_${model} 2 ${cmd} ${h}/${model} ${gpu})
    if(NOT last_err MATCHES "${fifo}: (not a regular file|expected a checkpoint directory)")
      message(SEND_ERROR "fifo ${fifo} via ${cmd} ${model}: '${last_err}'")
    endif()
  endforeach()
endforeach()
# Logs that are not UTF-8 and lines longer than the cuts: JSON without an abort.
foreach(log latin1-kv-error chinese-long-lines)
  run_limited(doctor_hostile_${log} 0 doctor ${SRC}/tests/doctor/hostile/${log}.log --json)
  string(JSON cause ERROR_VARIABLE json_err GET "${last_out}" cause)
  if(json_err OR NOT cause STREQUAL "kv_too_long_context")
    message(SEND_ERROR "doctor_hostile_${log}: ${json_err} ${cause}")
  endif()
  run_limited(doctor_hostile_${log}_text 0 doctor ${SRC}/tests/doctor/hostile/${log}.log)
endforeach()
# A zero divisor in a config: exit 2 naming the key and its range (it was SIGFPE).
foreach(key patch_size spatial_merge_size)
  string(REPLACE "_size" "" short ${key})
  string(REPLACE "spatial_" "" short ${short})
  run_limited(plan_vision_${key}_0 2 plan ${SRC}/tests/bad/config-vision-${short}-0 --gpu 4090)
  if(NOT last_err MATCHES "\"vision_config\".\"${key}\": expected an integer in \\[1, ")
    message(SEND_ERROR "plan_vision_${key}_0: '${last_err}'")
  endif()
endforeach()
# A flag given twice: the last wins, as in vLLM's argparse (it was exit 2).
run_limited(check_tp_twice 0 check --gpu h100 -- vllm serve qwen3-8b -tp 2 -tp 1 --max-model-len
            4096)
if(NOT last_out MATCHES "vllm serve [^ ]+ --max-model-len 4096"
   OR last_out MATCHES "--tensor-parallel-size")
  message(SEND_ERROR "check_tp_twice: '${last_out}'")
endif()
# Numbers beyond what vLLM accepts: exit 2 naming the flag (they were exit 0 with a wrapped
# activation peak or "needs 0 B", or exit 2 for a product that had wrapped).
set(awq4b vllm serve qwen3-4b-instruct-2507-awq)
foreach(c "batched|--max-num-batched-tokens 4611686018427387904: expected 1 to 2147483647|\
${awq4b};--max-num-batched-tokens;4611686018427387904;--max-model-len;4096"
          "long|--max-model-len 4503599627370496: expected 1 to|VLLM_ALLOW_LONG_MAX_MODEL_LEN=1;\
${awq4b};--max-model-len;4503599627370496"
          "seqs|--max-num-seqs 9223372036854775807: expected 1 to|${awq4b};--max-num-seqs;\
9223372036854775807"
          "tp|--tensor-parallel-size 4611686018427387904: expected 1 to 4096|${awq4b};-tp;\
4611686018427387904;-pp;4"
          "offload_nan|--cpu-offload-gb \"nan\": expected a number|${awq4b};--cpu-offload-gb;nan"
          "offload_huge|--cpu-offload-gb 1e\\+300: expected 0 to|${awq4b};--cpu-offload-gb;1e300"
          "util_nan|--gpu-memory-utilization \"nan\": expected a number|${awq4b};\
--gpu-memory-utilization;nan")
  string(REGEX MATCH "^([^|]*)\\|([^|]*)\\|(.*)$" m "${c}")
  set(name ${CMAKE_MATCH_1})
  set(want "${CMAKE_MATCH_2}")
  run_limited(check_huge_${name} 2 check --gpu 4090 -- ${CMAKE_MATCH_3})
  if(NOT last_err MATCHES "${want}")
    message(SEND_ERROR "check_huge_${name}: '${last_err}'")
  endif()
endforeach()
run_limited(plan_util_nan 2 plan qwen3-8b --gpu h100 --gpu-memory-utilization nan)
run_limited(plan_engine_huge_release 2 plan qwen3-8b --gpu h100 --engine vllm@214749.0)
if(NOT last_err MATCHES "\"214749.0\": expected MAJOR.MINOR")
  message(SEND_ERROR "plan_engine_huge_release: '${last_err}'")
endif()
# `vllm@` with nothing after it is an error, not the newest release's rules.
run_err(plan_engine_empty_release 2 "--engine vllm@: no version after '@'"
        plan qwen3-8b --gpu h100 --engine vllm@)
# A plan flag the release does not act on is named on stderr, never dropped silently.
run_err(plan_compile_cache_warm_v1 0
        "without effect here \\(not modelled\\): --compile-cache-warm: vLLM 0.21 runs"
        plan qwen3-8b --gpu h100 --engine vllm@0.21 --compile-cache-warm)
# Each release's own flags: a plan whose command the release cannot run is an error, and advice
# offers only what the release has (no --kv-cache-dtype before 0.3).
run_err(plan_kv_dtype_before_03 2 "--kv-cache-dtype fp8: vLLM 0.2.7 has no such flag"
        plan meta-llama-3-8b --gpu a10 --engine vllm@0.2.7 --kv-cache-dtype fp8)
run(plan_advice_v027 0 plan meta-llama-3-8b --gpu a10 --engine vllm@0.2.7 --max-model-len 8192)
if(last_out MATCHES "kv-cache-dtype")
  message(SEND_ERROR "plan_advice_v027: advice a release does not have: '${last_out}'")
endif()
# A release that refuses the model whatever the card: plan and fit point to the refusal and
# the release that lifts it, never to larger GPUs.
run(plan_refused_by_release 0 plan llama-3.1-8b-instruct --gpu h100 --engine vllm@0.4.3)
string(CONCAT re "what fits: nothing, on any GPU: vLLM 0.4.3 cannot read [^\n]*"
       "use --engine vllm@0.5.3.post1 or newer")
if(NOT last_out MATCHES "${re}" OR last_out MATCHES "vramfit gpus")
  message(SEND_ERROR "plan_refused_by_release: '${last_out}'")
endif()
run(fit_refused_by_release 1 fit mixtral-8x7b-instruct-v0.1 --gpu h200 --engine vllm@0.2.1)
if(NOT last_out MATCHES "use --engine vllm@0.2.[0-9]+ or newer" OR last_out MATCHES "nothing fits")
  message(SEND_ERROR "fit_refused_by_release: '${last_out}'")
endif()
run_err(check_flag_of_a_later_release 2
        "--cpu-offload-gb: vLLM 0.5.2 has no such flag \\(`vllm serve` stops with"
        check --gpu a10 --engine vllm@0.5.2 -- vllm serve meta-llama-3-8b --cpu-offload-gb 4)
run_err(check_vllm_serve_before_052 2
        "`vllm serve`: vLLM 0.4.2 has no `vllm` command"
        check --gpu a10 --engine vllm@0.4.2 -- vllm serve meta-llama-3-8b --max-model-len 4096)
run_limited(fit_quantization_word 2 fit qwen3-4b-instruct-2507-awq --gpu 4090 --quantization
            "awq_marlin$(touch ${WORK}/pwned)")
if(NOT last_err MATCHES "argument --quantization/-q: invalid choice")
  message(SEND_ERROR "fit_quantization_word: '${last_err}'")
endif()
# Emitted commands survive a shell: a model path made of quotes and a command substitution,
# and a JSON flag value, come back from `sh` as the same single words, and nothing runs.
set(odd "${h}/m $(touch ${WORK}/pwned) 'q\"")
file(WRITE "${odd}/config.json" "${tiny_cfg}")
file(WRITE ${h}/words.sh "vllm() { for w in \"$@\"; do printf '%s\\n' \"$w\"; done; }\n")
set(overrides "{\"max_position_embeddings\": 8192}")
foreach(c plan fit)
  run_limited(shell_${c} 0 ${c} "${odd}" --gpu 4090 --json --hf-overrides "${overrides}")
  if(c STREQUAL "plan")
    string(JSON cmd GET "${last_out}" command)
  else()
    string(JSON cmd GET "${last_out}" best command)
  endif()
  execute_process(COMMAND sh -n -c "${cmd}" RESULT_VARIABLE rc ERROR_VARIABLE err)
  execute_process(COMMAND sh -c ". ${h}/words.sh; ${cmd}" OUTPUT_VARIABLE words)
  string(REPLACE "\n" ";" words "${words}")
  list(GET words 1 model)
  list(FIND words --hf-overrides at)
  math(EXPR at "${at} + 1")
  list(GET words ${at} json)
  if(NOT rc EQUAL 0 OR NOT model STREQUAL "${odd}" OR NOT json STREQUAL "${overrides}"
     OR EXISTS ${WORK}/pwned)
    message(SEND_ERROR "shell_${c}: '${cmd}' reads back as '${words}' (sh -n: ${rc} ${err})")
  endif()
endforeach()
# Names made of terminal escapes: escaped in the text report and in messages.
string(ASCII 27 esc)
run_limited(inspect_escape_names 0 inspect ${SRC}/tests/hostile/escape-names --tensors)
if(last_out MATCHES "${esc}" OR NOT last_out MATCHES "weight\\\\x1b\\[2J\\\\x1b\\[H"
   OR NOT last_out MATCHES "line\\\\nforged: fits")
  message(SEND_ERROR "inspect_escape_names: raw or missing escapes in '${last_out}'")
endif()
run_limited(inspect_escape_names_json 0 inspect ${SRC}/tests/hostile/escape-names --json --tensors)
if(last_out MATCHES "${esc}")
  message(SEND_ERROR "inspect_escape_names_json: a raw ESC in the JSON")
endif()
run_limited(bad_escape_name 2 inspect ${SRC}/tests/bad/escape-name.safetensors)
if(last_err MATCHES "${esc}" OR NOT last_err MATCHES "x1b\\[2J")
  message(SEND_ERROR "bad_escape_name: '${last_err}'")
endif()
run(bad_flag 2 inspect qwen3-8b --no-such-flag)
run(no_command 2)
run(help 0 --help)
run(inspect_help 0 inspect --help)
# A speculative draft model named by catalog id is read and planned (weights, KV layers); one
# that cannot be read is said on stderr and named in the plan's notes.
run(check_draft_model 0 check --gpu h100 -- vllm serve llama-3.3-70b-instruct-fp8-dynamic -tp 2
    --max-model-len 16384
    --speculative-config "{\"model\": \"llama-3.1-8b-instruct\", \"num_speculative_tokens\": 3}")
if(NOT last_out MATCHES "draft model llama-3.1-8b-instruct adds")
  message(SEND_ERROR "check_draft_model: no draft weights in '${last_out}'")
endif()
run(check_draft_unread 1 check --gpu h100 -- vllm serve llama-3.3-70b-instruct-fp8-dynamic -tp 2
    --max-model-len 16384
    --speculative-config "{\"model\": \"no-such/draft\", \"num_speculative_tokens\": 3}")
if(NOT last_err MATCHES "draft model could not be read" OR NOT last_out MATCHES "was not read"
   OR NOT last_out MATCHES "verdict: UNCERTAIN, fits only without what is not counted")
  message(SEND_ERROR "check_draft_unread: '${last_err}' / '${last_out}'")
endif()
# SGLang: an unread draft is never a plain "fits" (check exits 1, as for a predicted failure);
# the JSON says what is not counted.
run(check_sglang_draft_unread 1 check --gpu h100 --json -- python -m sglang.launch_server
    --model-path qwen3-8b --context-length 8192 --speculative-algorithm EAGLE
    --speculative-draft-model-path no-such/draft)
if(NOT last_out MATCHES "\"confidence\": \"low\""
   OR NOT last_out MATCHES "\"not_counted\": \[[^]]*no-such/draft \(not read\)")
  message(SEND_ERROR "check_sglang_draft_unread: '${last_out}'")
endif()

# GGUF (issue 16): a tiny qwen3 model in a Q4_K_M-like mix, as a file and as the one model of
# a directory; every broken GGUF in tests/bad/ exits 2 (the loop above).
run(inspect_gguf 0 inspect tests/gguf/tiny-qwen3-Q4_K_M.gguf)
golden(inspect_tiny-qwen3-Q4_K_M.gguf.txt)
run(inspect_gguf_json 0 inspect tests/gguf/tiny-qwen3-Q4_K_M.gguf --json)
golden(inspect_tiny-qwen3-Q4_K_M.gguf.json)
run(inspect_gguf_dir 0 inspect tests/gguf)
run(bad_gguf_endian 2 inspect tests/bad/big-endian.gguf)
if(NOT last_err MATCHES "byte 4: version reads 0x03000000, version 3 byte-swapped")
  message(SEND_ERROR "bad_gguf_endian: '${last_err}'")
endif()
# Planning a GGUF file waits for the llama.cpp engine: every engine modelled today refuses it.
run(plan_gguf 2 plan tests/gguf/tiny-qwen3-Q4_K_M.gguf --gpu h100)
if(NOT last_err MATCHES "planning a GGUF file under vLLM is not modelled")
  message(SEND_ERROR "plan_gguf: '${last_err}'")
endif()
# The llama.cpp engine plans it: plan, check -- llama-server / llama-cli (exit 1 with the
# longest -c that fits), fit; and refuses a safetensors checkpoint.
run(plan_gguf_llamacpp 0 plan tests/gguf/tiny-qwen3-Q4_K_M.gguf --gpu h100 --engine llamacpp
    -c 8192)
golden(plan_llamacpp_tiny-qwen3-Q4_K_M.txt)
run(check_llamacpp 0 check --gpu 4090 -- CUDA_VISIBLE_DEVICES=0 llama-server
    -m tests/gguf/tiny-qwen3-Q4_K_M.gguf -ngl 99 -c 32768 -fa on --jinja --mlock --lora a.gguf)
if(NOT last_err MATCHES "flags not modelled \\(ignored\\): --lora a.gguf"
   OR NOT last_err MATCHES "no memory effect: --jinja --mlock"
   OR NOT last_out MATCHES "KV buffer 32.00 MiB")
  message(SEND_ERROR "check_llamacpp: '${last_err}' / '${last_out}'")
endif()
# (--fit off: with it, llama.cpp would move every layer to the CPU and fail on the compute
# buffer instead)
run(check_llamacpp_fails 1 check --gpu-memory 1GiB --json -- llama-cli
    -m tests/gguf/tiny-qwen3-Q4_K_M.gguf -c 4000000 --fit off)
if(NOT last_out MATCHES "\"failure_stage\": \"kv_cache\"" OR NOT last_out MATCHES "-c 259072")
  message(SEND_ERROR "check_llamacpp_fails: '${last_out}'")
endif()
run(fit_llamacpp 0 fit tests/gguf/tiny-qwen3-Q4_K_M.gguf --engine llamacpp --gpu 4090)
if(NOT last_out MATCHES "llama-server -m tests/gguf/tiny-qwen3-Q4_K_M.gguf")
  message(SEND_ERROR "fit_llamacpp: '${last_out}'")
endif()
# The vision projector (--mmproj): its weights and encoder on CUDA0 as the warm-up stage, the
# tokens of one image; check reads it from the llama-server line; one not found is said.
run(plan_llamacpp_mmproj 0 plan tests/gguf/tiny-qwen3-Q4_K_M.gguf --engine llamacpp --gpu 4090
    -c 8192 --mmproj tests/gguf-vision/mmproj-tiny-gemma3.gguf)
if(NOT last_out MATCHES "warmup +vision projector 2.00 KiB \\+ encoder compute 188.50 MiB"
   OR NOT last_out MATCHES "an image is 256 tokens, 32 per request")
  message(SEND_ERROR "plan_llamacpp_mmproj: '${last_out}'")
endif()
run(check_llamacpp_mmproj 0 check --gpu 4090 -- llama-server
    -m tests/gguf/tiny-qwen3-Q4_K_M.gguf -c 8192 --mmproj tests/gguf-vision/mmproj-tiny-gemma3.gguf)
if(NOT last_out MATCHES "encoder compute 188.50 MiB" OR last_err MATCHES "not modelled")
  message(SEND_ERROR "check_llamacpp_mmproj: '${last_err}' / '${last_out}'")
endif()
run(check_llamacpp_mmproj_ubatch 1 check --gpu 4090 -- llama-server
    -m tests/gguf/tiny-qwen3-Q4_K_M.gguf -ub 128 -mm tests/gguf-vision/mmproj-tiny-gemma3.gguf)
if(NOT last_out MATCHES "non-causal attention requires n_ubatch")
  message(SEND_ERROR "check_llamacpp_mmproj_ubatch: '${last_out}'")
endif()
run(plan_llamacpp_mmproj_missing 0 plan tests/gguf/tiny-qwen3-Q4_K_M.gguf --engine llamacpp
    --gpu 4090 --mmproj tests/gguf-vision/none.gguf)
if(NOT last_err MATCHES "the vision projector could not be read")
  message(SEND_ERROR "plan_llamacpp_mmproj_missing: '${last_err}'")
endif()
run(plan_llamacpp_safetensors 2 plan qwen3-8b --engine llamacpp --gpu h100)
if(NOT last_err MATCHES "llama.cpp runs GGUF files")
  message(SEND_ERROR "plan_llamacpp_safetensors: '${last_err}'")
endif()
# Ollama (issue 16 part 4): plan with Ollama's parameters, check `ollama run` with its
# environment (exit 1 when layers stay on the CPU, fixes as Modelfile lines and variables),
# a deploy script's exports, fit, and the refusals.
run(plan_ollama 0 plan tests/gguf/tiny-qwen3-Q4_K_M.gguf --engine ollama --gpu 4090
    --num-ctx 2048 --num-parallel 2)
if(NOT last_out MATCHES "offload 3/3 layers" OR NOT last_out MATCHES
   "OLLAMA_CONTEXT_LENGTH=2048 OLLAMA_NUM_PARALLEL=2 ollama run tests/gguf/tiny-qwen3-Q4_K_M.gguf")
  message(SEND_ERROR "plan_ollama: '${last_out}'")
endif()
run(check_ollama_fails 1 check --gpu-memory 600MiB -- OLLAMA_NUM_PARALLEL=64
    OLLAMA_HOST=0.0.0.0 OLLAMA_LLM_LIBRARY=cuda_v12 ollama run tests/gguf/tiny-qwen3-Q4_K_M.gguf
    --verbose)
if(NOT last_out MATCHES "FAILS at kv_cache: offloaded 0/3 layers"
   OR NOT last_out MATCHES "PARAMETER num_ctx 1024"
   OR NOT last_out MATCHES "OLLAMA_NUM_PARALLEL=1"
   OR NOT last_err MATCHES "environment not modelled \\(ignored\\): OLLAMA_LLM_LIBRARY=cuda_v12"
   OR NOT last_err MATCHES "flags read, no memory effect: --verbose"
   OR NOT last_err MATCHES "environment read, no memory effect: OLLAMA_HOST")
  message(SEND_ERROR "check_ollama_fails: '${last_out}' / '${last_err}'")
endif()
file(WRITE ${WORK}/ollama-deploy.sh "export OLLAMA_NUM_PARALLEL=64\nollama serve &\n"
     "ollama run tests/gguf/tiny-qwen3-Q4_K_M.gguf\n")
run(check_ollama_script 1 check --gpu-memory 600MiB --script ${WORK}/ollama-deploy.sh)
if(NOT last_out MATCHES "num_ctx 4096 x 64 parallel")
  message(SEND_ERROR "check_ollama_script: '${last_out}' / '${last_err}'")
endif()
run(check_ollama_engine 0 check --gpu 4090 --engine ollama tests/gguf/tiny-qwen3-Q4_K_M.gguf
    --num-ctx 2048 --kv-cache-type q8_0)
if(NOT last_out MATCHES "num_ctx 2048 x 1 parallel, q8_0")
  message(SEND_ERROR "check_ollama_engine: '${last_out}'")
endif()
run(check_ollama_kv_type 2 check --gpu 4090 -- OLLAMA_KV_CACHE_TYPE=fp8 ollama run
    tests/gguf/tiny-qwen3-Q4_K_M.gguf)
if(NOT last_err MATCHES "Ollama reads f16, q8_0 or q4_0")
  message(SEND_ERROR "check_ollama_kv_type: '${last_err}'")
endif()
run(fit_ollama 0 fit tests/gguf/tiny-qwen3-Q4_K_M.gguf --engine ollama --gpu 4090)
if(NOT last_out MATCHES "OLLAMA_CONTEXT_LENGTH=4096 ollama run tests/gguf/tiny-qwen3-Q4_K_M.gguf")
  message(SEND_ERROR "fit_ollama: '${last_out}'")
endif()
run(plan_ollama_safetensors 2 plan qwen3-8b --engine ollama --gpu h100)
if(NOT last_err MATCHES "Ollama runs GGUF files")
  message(SEND_ERROR "plan_ollama_safetensors: '${last_err}'")
endif()

# What-if quantization (issue 15): --as-quantized synthesizes the checkpoint a quantizer would
# write from the unquantized model and plans it, marked as a what-if in text and JSON.
run(plan_what_if 0 plan qwen3-30b-a3b --gpu 4090 --as-quantized awq --max-model-len 8192)
golden(plan_qwen3-30b-a3b_as-awq_4090.txt)
run(plan_what_if_json 0 plan qwen3-30b-a3b --gpu h100 --as-quantized gptq --bits 3 --json)
if(NOT last_out MATCHES "\"what_if\": \"GPTQ 3-bit g128\"")
  message(SEND_ERROR "plan_what_if_json: no what_if key in '${last_out}'")
endif()
run(inspect_what_if 0 inspect qwen2.5-7b-instruct --as-quantized gptq --bits 8 --json)
if(NOT last_out MATCHES "\"what_if\": \"GPTQ 8-bit g128\"" OR
   NOT last_out MATCHES "\"parameters\": 7615616512")
  message(SEND_ERROR "inspect_what_if: '${last_out}'")
endif()
run(fit_what_if 0 fit qwen3-8b --gpu 4090 --as-quantized fp8)
if(NOT last_out MATCHES "what-if: FP8 block 128x128 of qwen3-8b")
  message(SEND_ERROR "fit_what_if: '${last_out}'")
endif()
run(fit_what_if_json 0 fit qwen3-8b --gpu 4090 --as-quantized fp8 --json)
if(NOT last_out MATCHES "\"model\": \"qwen3-8b as FP8 block 128x128\"")
  message(SEND_ERROR "fit_what_if: '${last_out}'")
endif()
run(what_if_quantized 2 plan qwen3-8b-awq --gpu 4090 --as-quantized gptq)
if(NOT last_err MATCHES "already quantized \\(awq\\); give the unquantized model")
  message(SEND_ERROR "what_if_quantized: '${last_err}'")
endif()
run(what_if_bits 2 inspect qwen3-8b --as-quantized awq --bits 3)
if(NOT last_err MATCHES "--bits 3: awq packs 4 bits only")
  message(SEND_ERROR "what_if_bits: '${last_err}'")
endif()
run(what_if_alone 2 inspect qwen3-8b --bits 3)
if(NOT last_err MATCHES "go with --as-quantized METHOD")
  message(SEND_ERROR "what_if_alone: '${last_err}'")
endif()
# fit proposes a what-if when the unquantized model cannot meet the goal.
run(fit_propose 1 fit qwen3-32b --gpu 4090 --no-variants)
if(NOT last_out MATCHES "what-if: AWQ 4-bit g128 would fit [0-9,]+ tokens")
  message(SEND_ERROR "fit_propose: '${last_out}'")
endif()
run(quantization_online 2 plan qwen3-8b --gpu 4090 --quantization awq)
if(NOT last_err MATCHES "`--as-quantized awq` plans the checkpoint a quantizer would write")
  message(SEND_ERROR "quantization_online: '${last_err}'")
endif()

# check --script (issue 15): the field reports' deploy scripts (tests/scripts/README.md) give
# the verdict `plan` gives for the same flags, the plan's JSON inside the script's report.
# `gpu` is a list: the GPU flags both commands take. With --model-as PATH=ID the numbers are
# ID's and the printed command names PATH, what the script launches: the two commands differ
# in that one word, and the reports are the same once PATH reads as the plan's model word.
function(script_verdict name script model_as gpu)
  run(${name}_plan 0 plan ${ARGN} ${gpu} --json)
  string(STRIP "${last_out}" want)
  string(JSON fits GET "${want}" fits)
  set(rc 1)
  if(fits)
    set(rc 0)
  endif()
  run(${name} ${rc} check ${gpu} --json --script ${script} --model-as ${model_as})
  string(REGEX REPLACE "=.*" "" path "${model_as}")
  string(JSON plan_cmd GET "${want}" command)
  string(JSON got ERROR_VARIABLE no_json GET "${last_out}" invocations 0 plan)
  string(JSON check_cmd ERROR_VARIABLE no_json GET "${got}" command)
  separate_arguments(plan_words UNIX_COMMAND "${plan_cmd}")
  separate_arguments(check_words UNIX_COMMAND "${check_cmd}")
  list(LENGTH plan_words n_plan)
  list(LENGTH check_words n_check)
  set(named 0)
  # The script's command keeps, after the plan's words, the flags the plan does not read
  # (--port, --served-model-name, ...), as written.
  foreach(w IN ZIP_LISTS plan_words check_words)
    string(FIND "${w_1}" "${path}" has_path)
    if("${w_0}" STREQUAL "")
      continue()
    elseif(NOT has_path EQUAL -1)
      math(EXPR named "${named} + 1")
    elseif(NOT w_0 STREQUAL w_1)
      message(SEND_ERROR "${name}: `${w_1}` where `plan` has `${w_0}` ('${check_cmd}')")
    endif()
  endforeach()
  if(named EQUAL 0 OR n_check LESS n_plan)
    message(SEND_ERROR "${name}: the command should name ${path}: '${check_cmd}'")
  endif()
  # The rest of the report, the numbers first, is `plan ID`'s; the advice's commands name PATH.
  string(JSON want REMOVE "${want}" command)
  string(JSON got ERROR_VARIABLE no_json REMOVE "${got}" command)
  string(JSON n_advice ERROR_VARIABLE no_advice LENGTH "${want}" advice)
  if(n_advice GREATER 0)
    math(EXPR last "${n_advice} - 1")
    foreach(i RANGE ${last})
      string(JSON a_cmd ERROR_VARIABLE no_cmd GET "${got}" advice ${i} command)
      if(no_cmd STREQUAL "NOTFOUND")
        string(FIND "${a_cmd}" "${path}" has_path)
        if(has_path EQUAL -1)
          message(SEND_ERROR "${name}: advice ${i} does not name ${path}: '${a_cmd}'")
        endif()
        string(JSON got REMOVE "${got}" advice ${i} command)
        string(JSON want REMOVE "${want}" advice ${i} command)
      endif()
    endforeach()
  endif()
  if(NOT got STREQUAL want)
    message(SEND_ERROR "${name}: the plan of `plan ${ARGN}` is not in '${last_out}'")
  endif()
  set(last_err "${last_err}" PARENT_SCOPE)
endfunction()
script_verdict(script_001 tests/scripts/001_deploy_qwen_multimodal.sh
               /root/models/Qwen3.5-35B-A3B-AWQ-4bit=qwen3.5-35b-a3b-awq "--gpu;4090"
               qwen3.5-35b-a3b-awq -tp 2 --max-model-len 4096 --enforce-eager)
if(NOT last_err MATCHES "001_deploy_qwen_multimodal.sh:14: a comment inside a `\\\\`-continued")
  message(SEND_ERROR "script_001: the continuation before the comment not noted: '${last_err}'")
endif()
script_verdict(script_004 tests/scripts/004_vllm_awq_256k.sh
               /models/Qwen3-4B-Instruct-awq=qwen3-4b-instruct-2507-awq "--gpu;4090"
               qwen3-4b-instruct-2507-awq --dtype half --quantization awq
               --max-model-len 262144 --gpu-memory-utilization 0.95)
# Report 000: Qwen 3.6 AWQ on vLLM, two 40 GB cards (CUDA_VISIBLE_DEVICES=0,1), TP 2, 8192.
script_verdict(script_000 tests/scripts/000_vllm_qwen36_awq.sh
               /models/Qwen3.6-35B-A3B-AWQ=qwen3.6-35b-a3b-awq "--gpu;a100-40gb"
               qwen3.6-35b-a3b-awq -tp 2 --max-model-len 8192)
# Report 002: its Python diagnosis script loads the 4-bit AWQ 7B with from_quantized on
# cuda:0, on the 8 GB card the report names (the gptq/awq branches are one load).
script_verdict(script_002 tests/scripts/002_quant_oom_diagnose.py
               ./4bit-awq-7b-model=qwen2.5-7b-instruct-awq "--gpu-memory;8GiB"
               qwen2.5-7b-instruct-awq --engine transformers --device-map cuda:0)
if(NOT last_err MATCHES "002_quant_oom_diagnose.py:86: the same transformers as "
   OR NOT last_err MATCHES "AutoAWQForCausalLM.from_quantized: the quantizer's own loader")
  message(SEND_ERROR "script_002: '${last_err}'")
endif()
# A model card's quickstart (tests/scripts/card_qwen3_8b.py): generate() holds the literal chat
# prompt (about 87 tokens) + the card's max_new_tokens=32768, not the model's 40,960-token
# context filled by the prompt: it fits a 24 GB card (it failed at the prefill when planned as a
# 40,704-token prompt). The same 32,768 new tokens' KV still fails a 19 GiB card, at runtime.
run(script_card 0 check --gpu 4090 --script tests/scripts/card_qwen3_8b.py)
golden(check_script_card_qwen3-8b_4090.txt)
set(want "card_qwen3_8b.py:10: generate\\(\\) on line 30: prompt about 87 tokens \\(a chat of 1 ")
string(APPEND want "message\\(s\\), 42 bytes of text: 3 bytes a token[^\n]*max_new_tokens=32768: ")
string(APPEND want "planned for 32855 tokens")
if(NOT last_err MATCHES "${want}")
  message(SEND_ERROR "script_card: '${last_err}'")
endif()
# The same program as a new user gives it: `-- python FILE.py`, or the file as check's MODEL.
run_err(script_card_python 0 "card_qwen3_8b.py: a Python program, read as --script"
        check --gpu 4090 -- python tests/scripts/card_qwen3_8b.py)
run_err(script_card_model 0 "card_qwen3_8b.py: read as --script"
        check --gpu 4090 tests/scripts/card_qwen3_8b.py)
run_err(script_python_missing 2 "no_such_file.py: no such file here to read as a Python program"
        check --gpu 4090 -- python no_such_file.py)
# A model without --engine or a command: which engine is asked, not "--engine : only ...".
run_err(check_model_no_engine 2 "Qwen/Qwen3-8B: which engine runs it\\? give --engine vllm"
        check --gpu 4090 Qwen/Qwen3-8B)
function(card_stage name gpu stage)
  run(${name} 1 check ${gpu} --json --script tests/scripts/card_qwen3_8b.py ${ARGN})
  string(JSON got ERROR_VARIABLE no_json GET "${last_out}" invocations 0 plan failure_stage)
  if(NOT got STREQUAL stage)
    message(SEND_ERROR "${name}: fails at '${got}', expected ${stage}: '${last_out}'")
  endif()
endfunction()
card_stage(script_card_19gib "--gpu-memory;19GiB" runtime)
# check --prompt-tokens N gives the prompt: 40,000 tokens' prefill does not fit the 24 GB card.
card_stage(script_card_prompt "--gpu;4090" profile --prompt-tokens 40000)
# A prompt typed at run time is not known: planned as before, the context filled, with the flag
# that gives it; the flag is for scripts only.
file(WRITE ${WORK}/typed.py [=[
from transformers import AutoModelForCausalLM, AutoTokenizer
tok = AutoTokenizer.from_pretrained("Qwen/Qwen3-8B")
model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen3-8B", dtype="auto", device_map="auto")
question = input("> ")
inputs = tok(question, return_tensors="pt").to(model.device)
print(tok.decode(model.generate(**inputs, max_new_tokens=512)[0]))
]=])
run(script_typed 1 check --gpu 4090 --script ${WORK}/typed.py)
set(want "typed.py:3: generate\\(\\) on line 6: the prompt is not known \\(the result of ")
string(APPEND want "input\\(...\\), a call the reader does not follow\\): planned as before, the ")
string(APPEND want "prompt filling the context \\(max_position_embeddings\\); give its length ")
string(APPEND want "with `vramfit check --prompt-tokens N`")
if(NOT last_err MATCHES "${want}" OR NOT last_out MATCHES "--max-length 40960 --max-new-tokens 512")
  message(SEND_ERROR "script_typed: '${last_out}' / '${last_err}'")
endif()
run(script_typed_given 0 check --gpu 4090 --prompt-tokens 2000 --script ${WORK}/typed.py)
# The pipeline form of the Llama 3.1 model card: a chat of two literal messages,
# max_new_tokens=256 (planned before as a 130,816-token prompt's prefill: 44.40 GiB).
file(WRITE ${WORK}/llama_card.py [=[
import torch
import transformers
pipe = transformers.pipeline("text-generation", model="meta-llama/Llama-3.1-8B-Instruct",
                             model_kwargs={"torch_dtype": torch.bfloat16}, device_map="auto")
messages = [{"role": "system", "content": "You answer in one short sentence."},
            {"role": "user", "content": "What is a KV cache?"}]
print(pipe(messages, max_new_tokens=256)[0]["generated_text"][-1])
]=])
run(script_llama_card 0 check --gpu 4090 --script ${WORK}/llama_card.py)
if(NOT last_err MATCHES
   "llama_card.py:3: pipeline call on line 7: prompt about [0-9]+ tokens \\(a chat of 2 "
   OR NOT last_out MATCHES "--prompt-tokens [0-9]+ --max-new-tokens 256")
  message(SEND_ERROR "script_llama_card: '${last_out}' / '${last_err}'")
endif()
run(check_prompt_tokens_no_script 2 check --gpu 4090 --prompt-tokens 100 -- transformers qwen3-8b)
if(NOT last_err MATCHES "--prompt-tokens N sets the prompt length of a Python script")
  message(SEND_ERROR "check_prompt_tokens_no_script: '${last_err}'")
endif()
run(kv_report_002 0 kv --layers 32 --kv-heads 32 --head-dim 128 --context 4096)
if(NOT last_out MATCHES "per sequence +2.00 GiB\n")
  message(SEND_ERROR "kv_report_002: the report's 7B 4K fp16 KV is 2.00 GiB: '${last_out}'")
endif()
run(script_001_text 0 check --gpu 4090 --script tests/scripts/001_deploy_qwen_multimodal.sh
    --model-as /root/models/Qwen3.5-35B-A3B-AWQ-4bit/=qwen3.5-35b-a3b-awq)
set(want "^tests/scripts/001_deploy_qwen_multimodal.sh:10: python -m vllm[^\n]*--enforce-eager ")
string(APPEND want "[^\n]*--trust-remote-code  \\(model read as qwen3.5-35b-a3b-awq\\)\n")
if(NOT last_out MATCHES "${want}")
  message(SEND_ERROR "script_001_text: '${last_out}'")
endif()
# A path of the serving machine without --model-as: exit 2 with the hint.
run(script_no_model_as 2 check --gpu 4090 --script tests/scripts/004_vllm_awq_256k.sh)
if(NOT last_err MATCHES "004_vllm_awq_256k.sh:4: .*--model-as PATH=ID")
  message(SEND_ERROR "script_no_model_as: '${last_err}'")
endif()
# A flag vLLM does not have (the report's --enable-flash-attn False) stops vllm serve: exit 2
# with the nearest real flags; so does one the chosen release does not have yet.
run(script_004_flash 2 check --gpu 4090 --script tests/scripts/004_flash_attn_off.sh
    --model-as /models/Qwen3-4B-Instruct-awq=qwen3-4b-instruct-2507-awq)
set(want "004_flash_attn_off.sh:4: --enable-flash-attn: vLLM 0.22 has no such flag ")
string(APPEND want "\\(`vllm serve` stops with \"unrecognized arguments\"\\); nearest: --")
if(NOT last_err MATCHES "${want}")
  message(SEND_ERROR "script_004_flash: '${last_err}'")
endif()
run(check_unknown_flag 2 check --gpu h100 -- vllm serve qwen3-8b --max-modle-len 4096)
if(NOT last_err MATCHES "nearest: --max-model-len")
  message(SEND_ERROR "check_unknown_flag: '${last_err}'")
endif()
run(check_flag_too_new 2 check --gpu h100 --vllm-version 0.10 -- vllm serve qwen3-8b
    --kv-cache-memory-bytes 8589934592)
if(NOT last_err MATCHES "--kv-cache-memory-bytes: vLLM 0.10 has no such flag")
  message(SEND_ERROR "check_flag_too_new: '${last_err}'")
endif()
# A whole command as one word; variables from --env FILE; GPUs a script makes visible.
run(check_one_string 0 check --gpu h100 -- "vllm serve qwen3-8b --max-model-len 8192")
file(WRITE ${WORK}/serve.env "MODEL=qwen3-8b\nexport LEN=8192\n")
file(WRITE ${WORK}/vars.sh [=[#!/bin/sh
exec vllm serve "$MODEL" --max-model-len ${LEN:-4096}
]=])
run(script_env 0 check --gpu h100 --script ${WORK}/vars.sh --env ${WORK}/serve.env)
if(NOT last_out MATCHES
   "vars.sh:2: LEN=8192 MODEL=qwen3-8b vllm serve qwen3-8b --max-model-len 8192\n")
  message(SEND_ERROR "script_env: '${last_out}'")
endif()
run(script_unset 2 check --gpu h100 --script ${WORK}/vars.sh)
if(NOT last_err MATCHES "vars.sh:2: \\$MODEL is not set, in the vLLM command of line 2")
  message(SEND_ERROR "script_unset: '${last_err}'")
endif()
file(WRITE ${WORK}/gpus.sh "CUDA_VISIBLE_DEVICES=0,1 vllm serve qwen3-8b -tp 2\n"
           "docker run --rm --gpus 1 vllm/vllm-openai:v0.10.1 --model qwen3-8b -tp 2\n")
run(script_gpus 2 check --gpu h100 --json --script ${WORK}/gpus.sh)
if(NOT last_err MATCHES "gpus.sh:2: --gpus 1 leaves 1 GPU\\(s\\) visible; the command needs 2"
   OR NOT last_out MATCHES "\"where\": \"[^\"]*gpus.sh:1\", \"exit\": 0")
  message(SEND_ERROR "script_gpus: '${last_out}' / '${last_err}'")
endif()
run(script_none 2 check --gpu h100 --script tests/scripts/README.md)
# Hostile scripts: exit 2 naming file:line, never a crash or a hang.
run(script_nul 2 check --gpu h100 --script tests/scripts/hostile/nul.sh)
if(NOT last_err MATCHES "hostile/nul.sh:3: a NUL byte")
  message(SEND_ERROR "script_nul: '${last_err}'")
endif()
run(script_quote 2 check --gpu h100 --script tests/scripts/hostile/unterminated.sh)
if(NOT last_err MATCHES "unterminated.sh:1: unterminated \" \\(opened here\\)")
  message(SEND_ERROR "script_quote: '${last_err}'")
endif()
run(script_quote_py 2 check --gpu h100 --script tests/scripts/hostile/unterminated_prompt.py)
if(NOT last_err MATCHES "unterminated_prompt.py:4: unterminated string \" \\(opened here\\)")
  message(SEND_ERROR "script_quote_py: '${last_err}'")
endif()
string(REPEAT "a" 1048576 long)
file(WRITE ${WORK}/long.sh "vllm serve qwen3-8b\n# ${long}\n")
run(script_long_line 2 check --gpu h100 --script ${WORK}/long.sh)
if(NOT last_err MATCHES "long.sh:2: a line of 1048578 bytes")
  message(SEND_ERROR "script_long_line: '${last_err}'")
endif()
string(REPEAT "\${A:-" 5000 deep)
file(WRITE ${WORK}/deep.sh "vllm serve ${deep}\n")
run(script_deep 2 check --gpu h100 --script ${WORK}/deep.sh)
if(NOT last_err MATCHES "deep.sh:1: \\$\\{...\\} nested more than 32 deep")
  message(SEND_ERROR "script_deep: '${last_err}'")
endif()

# vramfit kv (issue 15 part 4): the KV calculator from a model or from raw dimensions.
run(kv_dims 0 kv --layers 32 --kv-heads 8 --head-dim 128 --context 128K --batch 4)
if(NOT last_out MATCHES "per token \\(K/V, MLA latent\\) +128.00 KiB\n"
   OR NOT last_out MATCHES "per sequence +16.00 GiB\n"
   OR NOT last_out MATCHES "total, 4 x per sequence +64.00 GiB\n")
  message(SEND_ERROR "kv_dims: '${last_out}'")
endif()
run(kv_model_json 0 kv qwen3-8b --context 1000 --engine vllm --json)
string(JSON bytes GET "${last_out}" bytes_per_sequence)
string(JSON blocks GET "${last_out}" blocks_per_sequence)
string(JSON schema GET "${last_out}" schema)
if(NOT bytes EQUAL 148635648 OR NOT blocks EQUAL 63 OR NOT schema STREQUAL "vramfit.kv/1")
  message(SEND_ERROR "kv_model_json: '${last_out}'")
endif()
run(kv_model 0 kv qwen3-8b --context 1000)
if(NOT last_out MATCHES "per sequence +140.62 MiB\n")
  message(SEND_ERROR "kv_model: '${last_out}'")
endif()
run(kv_linear 0 kv qwen3-next-80b-a3b-instruct --context 4096 -t 2)
if(NOT last_out MATCHES "linear state, per sequence")
  message(SEND_ERROR "kv_linear: '${last_out}'")
endif()
run(kv_none 2 kv --context 4096)
run(kv_both 2 kv qwen3-8b --layers 2 --kv-heads 1 --head-dim 4 --context 4096)
run(kv_bad_layers 2 kv --layers -1 --kv-heads 1 --head-dim 4 --context 4096)
if(NOT last_err MATCHES "--layers -1: expected 1 to")
  message(SEND_ERROR "kv_bad_layers: '${last_err}'")
endif()

# transformers: AutoAWQ's fused cache charged at load, images through the vision tower, and
# --tp-plan refused by name (issue 13 part 2).
run(tf_fused 0 plan llama-3.1-8b-instruct --as-quantized awq --engine transformers --gpu 4090
    --do-fuse --fuse-max-seq-len 131072 --prompt-tokens 1024 --max-new-tokens 1024)
if(NOT last_out MATCHES "fused AWQ cache 18.00 GiB \\(131,072 tokens, batch 1\\)"
   OR NOT last_out MATCHES "FAILS at load" OR NOT last_out MATCHES "--fuse-max-seq-len 128880")
  message(SEND_ERROR "tf_fused: '${last_out}'")
endif()
run(tf_images_eager 1 check --gpu h100 -- transformers qwen2.5-vl-7b-instruct --dtype bfloat16
    --prompt-tokens 256 --max-new-tokens 256 --images-per-prompt 1 --attn-implementation eager)
if(NOT last_out MATCHES "FAILS at profile" OR NOT last_out MATCHES "--max-pixels [0-9]+")
  message(SEND_ERROR "tf_images_eager: '${last_out}'")
endif()
run(tf_images_sdpa 0 check --gpu h100 -- transformers qwen2.5-vl-7b-instruct --dtype bfloat16
    --prompt-tokens 256 --max-new-tokens 256 --images-per-prompt 1)
# bitsandbytes 4-bit under device_map="auto" on one 12 GB card: accelerate's 90% leaves some
# layers for the CPU, which the quantizer refuses; every weight on GPU 0 fits.
run(tf_bnb_auto_map 1 check --gpu rtx-3060-12gb -- transformers Qwen/Qwen3-14B --load-in-4bit
    --prompt-tokens 2000 --max-new-tokens 512)
if(NOT last_out MATCHES "FAILS at load: Some modules are dispatched on the CPU"
   OR NOT last_out MATCHES "\n  --device-map 0 +fits")
  message(SEND_ERROR "tf_bnb_auto_map: '${last_out}'")
endif()
run(tf_tp_plan 2 check --gpu h100 -- transformers qwen3-8b --tp-plan auto)
if(NOT last_err MATCHES "tp_plan tensor parallelism")
  message(SEND_ERROR "tf_tp_plan: '${last_err}'")
endif()

# A new user's command lines (tryout): vLLM's -O shorthand is a real flag, named as not
# modelled; a zero that the settings would read as "the default" is refused instead.
run(tryout_o3 0 check --gpu 4090 -- vllm serve qwen3-8b-awq -O3 --max-model-len 8192)
if(last_err MATCHES "not modelled" OR NOT last_out MATCHES "-O3: vLLM's optimization level")
  message(SEND_ERROR "tryout_o3: '${last_out}' '${last_err}'")
endif()
# vLLM's LoRA slots (engines/vllm/lora.cc) and -O0 (no compile, no graphs), as check reads them.
run(check_lora_qwen3-8b 0 check --gpu h100-sxm -- vllm serve Qwen/Qwen3-8B --enable-lora
    --max-loras 4 --max-lora-rank 64)
golden(check_lora_qwen3-8b_h100.txt)
run(check_o0_qwen3-8b 0 check --gpu h100-sxm -- vllm serve Qwen/Qwen3-8B -O0)
golden(check_o0_qwen3-8b_h100.txt)
# Before 0.12 -O N is the compilation level, and the release's parser is asked about -O itself.
run(check_o0_v010 0 check --vllm-version 0.10 --gpu h100-sxm -- vllm serve Qwen/Qwen3-8B -O0)
if(NOT last_out MATCHES "before vLLM 0.12 -O is --compilation-config's level"
   OR NOT last_out MATCHES "cudagraph +none")
  message(SEND_ERROR "check_o0_v010: '${last_out}' '${last_err}'")
endif()
run(check_level_flag_v010 2 check --vllm-version 0.10 --gpu h100-sxm -- vllm serve
    Qwen/Qwen3-8B --optimization-level 0)
if(NOT last_err MATCHES "--optimization-level: vLLM 0.10 has no such flag")
  message(SEND_ERROR "check_level_flag_v010: '${last_err}'")
endif()
run(check_lora_bias 0 check --vllm-version 0.10 --gpu h100-sxm -- vllm serve Qwen/Qwen3-8B
    --enable-lora --enable-lora-bias)
if(NOT last_err MATCHES "not modelled \\(ignored\\): --enable-lora-bias")
  message(SEND_ERROR "check_lora_bias: '${last_err}'")
endif()
run(tryout_zero_seqs 2 check --gpu 4090 -- vllm serve qwen3-8b --max-num-seqs=0)
if(NOT last_err MATCHES "--max-num-seqs 0: expected 1 or more")
  message(SEND_ERROR "tryout_zero_seqs: '${last_err}'")
endif()
run(tryout_zero_util 2 plan qwen3-8b --gpu 4090 --gpu-memory-utilization 0)
if(NOT last_err MATCHES "--gpu-memory-utilization 0: expected a fraction")
  message(SEND_ERROR "tryout_zero_util: '${last_err}'")
endif()
# --engine beside a command of that engine is accepted (its @release applies); another engine's
# command is named. Launch words no engine reads (docker run, nohup) are read as a shell line.
run(tryout_engine_and_command 0 check --engine vllm@0.10 --gpu 4090 -- vllm serve qwen3-8b
    --max-model-len 8192)
if(NOT last_out MATCHES "vLLM 0.10 rules")
  message(SEND_ERROR "tryout_engine_and_command: '${last_out}'")
endif()
run(tryout_engine_mismatch 2 check --engine vllm --gpu 4090 -- python -m sglang.launch_server
    --model-path qwen3-8b)
if(NOT last_err MATCHES "--engine vllm, but the command after -- is for SGLang")
  message(SEND_ERROR "tryout_engine_mismatch: '${last_err}'")
endif()
run(tryout_docker_words 0 check --gpu 4090 -- docker run --gpus all vllm/vllm-openai:v0.10.1
    --model qwen3-8b --max-model-len 8192)
if(NOT last_out MATCHES "vLLM 0.10 rules")
  message(SEND_ERROR "tryout_docker_words: '${last_out}'")
endif()
# An old tag's image runs its own launcher: the `vllm serve` that stands in for it is no refusal.
run(tryout_docker_old_tag 0 check --gpu a100-80gb -- docker run --gpus all
    vllm/vllm-openai:v0.4.2 --model meta-llama-3-8b --max-model-len 4096)
if(NOT last_out MATCHES "vLLM 0.4 rules")
  message(SEND_ERROR "tryout_docker_old_tag: '${last_out}'")
endif()
# vLLM's image installs FlashInfer, so up to 0.11.0 its sampler warm-up samples with it (14 B a
# logit over 1,024 x 151,936 logits on an H100); a bare `vllm serve` of the same release is planned
# with the sort of a pip install (39 B), as is `plan` without --flashinfer-installed.
run(flashinfer_image 0 check --gpu h100 --json -- docker run --gpus all vllm/vllm-openai:v0.10.1
    --model qwen3-8b --max-model-len 16000)
if(NOT last_out MATCHES "\"activation_peak_bytes\": 2178154496"
   OR NOT last_out MATCHES "FlashInfer.s 14 B per logit[^\"]*since FlashInfer is installed")
  message(SEND_ERROR "flashinfer_image: '${last_out}'")
endif()
run(flashinfer_pip 0 check --gpu h100 --json --vllm-version 0.10.1 -- vllm serve qwen3-8b
    --max-model-len 16000)
if(NOT last_out MATCHES "\"activation_peak_bytes\": 6067716096")
  message(SEND_ERROR "flashinfer_pip: '${last_out}'")
endif()
run(flashinfer_plan_flag 0 plan qwen3-8b --gpu h100 --engine vllm@0.10.1 --max-model-len 16000
    --flashinfer-installed --json)
if(NOT last_out MATCHES "\"activation_peak_bytes\": 2178154496")
  message(SEND_ERROR "flashinfer_plan_flag: '${last_out}'")
endif()
run(tryout_nohup_words 0 check --gpu 4090 -- nohup vllm serve qwen3-8b --max-model-len 8192
    --served-model-name "it's $HOME")
# A relative path that is not here gets the same hint, with the catalog id its last part names.
run_err(tryout_relative_path 2 "a path on the serving machine\\? .*--model-as ./models/qwen3-8b"
        check --gpu 4090 -- vllm serve ./models/qwen3-8b --max-model-len 8192)
# A model path that exists but is broken gets no "a path on the serving machine?" hint.
file(WRITE ${WORK}/tryout_broken.gguf "GGUF")
run(tryout_broken_gguf 2 check --gpu 4090 -- llama-server -m ${WORK}/tryout_broken.gguf)
if(last_err MATCHES "serving machine")
  message(SEND_ERROR "tryout_broken_gguf: '${last_err}'")
endif()
run(tryout_missing_gguf 2 check --gpu 4090 -- llama-server -m /nonexistent/tryout.gguf)
if(NOT last_err MATCHES "serving machine")
  message(SEND_ERROR "tryout_missing_gguf: '${last_err}'")
endif()
# An unknown flag names the subcommand and the words, in the order given.
run(tryout_unknown_flag 2 plan qwen3-8b --gpu 4090 --bogus-flag 3)
if(NOT last_err MATCHES "^vramfit plan: unexpected argument\\(s\\): --bogus-flag 3 ")
  message(SEND_ERROR "tryout_unknown_flag: '${last_err}'")
endif()
# A mistyped flag gets the subcommand's nearest one; a GPU count asked the usual ways, how
# vramfit asks for it; another engine's flag, the --engine that reads it.
run(tryout_flag_slip 2 plan qwen3-8b --gpu 4090 --max-model-length 8192)
if(NOT last_err MATCHES "--max-model-length: did you mean --max-model-len\\?")
  message(SEND_ERROR "tryout_flag_slip: '${last_err}'")
endif()
run(tryout_gpu_count 2 plan qwen3-8b --gpu 4090 --gpus 2)
if(NOT last_err MATCHES "--gpus: the GPU count is --tensor-parallel-size N")
  message(SEND_ERROR "tryout_gpu_count: '${last_err}'")
endif()
run(tryout_other_engine_flag 2 plan qwen3-8b --gpu 4090 --tp-size 2)
if(NOT last_err MATCHES "--tp-size: not a vLLM flag vramfit reads \\(it is read with --engine")
  message(SEND_ERROR "tryout_other_engine_flag: '${last_err}'")
endif()
run(tryout_check_gpu_count 2 check --gpus 2 -- vllm serve Qwen/Qwen3-8B)
if(NOT last_err MATCHES "^vramfit check: --gpus 2 before -- are not check's.*--gpus: the GPU")
  message(SEND_ERROR "tryout_check_gpu_count: '${last_err}'")
endif()
# A command naming a catalog entry that has no published repo says to put a checkpoint there.
run(tryout_placeholder_repo 0 plan qwen3.6-35b-a3b-awq --gpu rtx-4090)
if(NOT last_out MATCHES "note: qwen3.6-35b-a3b-awq in the command is a catalog entry with no")
  message(SEND_ERROR "tryout_placeholder_repo: '${last_out}'")
endif()
# kv reads the engines' names for the context length.
run(tryout_kv_context_alias 0 kv qwen3-8b --max-model-len 32k --batch 2)
if(NOT last_out MATCHES "total, 2 x per sequence")
  message(SEND_ERROR "tryout_kv_context_alias: '${last_out}'")
endif()
# A serving-machine path named after a catalog entry: the --model-as flag that reads it.
run(tryout_model_as_hint 2 check --gpu 4090 -- vllm serve /models/Qwen3.6-35B-A3B-AWQ/ -tp 2)
if(NOT last_err MATCHES "--model-as /models/Qwen3.6-35B-A3B-AWQ=qwen3.6-35b-a3b-awq")
  message(SEND_ERROR "tryout_model_as_hint: '${last_err}'")
endif()
# A plan that fits gets no "more GPUs" advice that would not hold more tokens (Ollama and
# llama.cpp size the cache by the context asked for).
run(tryout_no_idle_gpus 0 check --gpu 4090 -- ollama run tests/gguf/tiny-qwen3-Q4_K_M.gguf)
if(last_out MATCHES "more GPU")
  message(SEND_ERROR "tryout_no_idle_gpus: '${last_out}'")
endif()
# CLI11's own errors are headed by the subcommand they are about.
run(tryout_bad_goal 2 fit qwen3-8b --gpu 4090 --goal banana)
if(NOT last_err MATCHES "^vramfit fit: --goal: banana")
  message(SEND_ERROR "tryout_bad_goal: '${last_err}'")
endif()
# Mixed cards in one vLLM pipeline: one card per stage, the partition from the environment, the
# binding stage in text and JSON.
set(coder qwen3-coder-30b-a3b-instruct-fp8)
run(mixed_check 1 check --gpu 5070ti,5090d --vllm-version 0.15 -- VLLM_PP_LAYER_PARTITION=16,32
    vllm serve ${coder} -pp 2 --gpu-memory-utilization 0.9)
if(NOT last_out MATCHES "stage 0  layers 0-15 +NVIDIA GeForce RTX 5070 Ti"
   OR NOT last_out MATCHES "stage 1  layers 16-47 +NVIDIA GeForce RTX 5090 D"
   OR NOT last_out MATCHES "stage 0 binds"
   OR NOT last_out MATCHES "VLLM_PP_LAYER_PARTITION=16,32 vllm serve"
   OR last_err MATCHES "VLLM_PP_LAYER_PARTITION")
  message(SEND_ERROR "mixed_check: '${last_out}' '${last_err}'")
endif()
run(mixed_plan_json 0 plan ${coder} --gpu 5070ti,5090d -pp 2 --pp-layer-partition 16,32
    --engine vllm@0.15 --gpu-memory-utilization 0.9 --json)
if(NOT last_out MATCHES "\"binding_stage\": 0"
   OR NOT last_out MATCHES "\"id\": \"rtx-5090-d\""
   OR NOT last_out MATCHES "\"first_layer\": 16,")
  message(SEND_ERROR "mixed_plan_json: '${last_out}'")
endif()
run(plan_no_stages_json 0 plan qwen3-8b --gpu 4090 --max-model-len 4096 --json)
if(NOT last_out MATCHES "\"binding_stage\": null"
   OR NOT last_out MATCHES "\"pipeline_stages\": \\[\\]")
  message(SEND_ERROR "plan_no_stages_json: '${last_out}'")
endif()
foreach(c "count|--gpu names 3 cards, but the deployment has 2 pipeline stage|--gpu;4090,4090,4090;\
-pp;2"
          "empty|--gpu \"4090,\": an empty entry|--gpu;4090,;-pp;2"
          "unknown|nearest|--gpu;4090,rtx-9090;-pp;2"
          "sizes|--gpu names 2 cards but --gpu-memory gives 3 sizes|--gpu;4090,4090;--gpu-memory;\
16GiB,16GiB,16GiB;-pp;2"
          "sum|sum\\(partitions\\)=35 does not match num_hidden_layers=36\\.|--gpu;4090;-pp;2;\
--pp-layer-partition;17,18"
          "len|len\\(partitions\\)=3 does not match pp_size=2\\.|--gpu;4090;-pp;2;\
--pp-layer-partition;12,12,12"
          "text|Invalid partition string: 12/24|--gpu;4090;-pp;2;--pp-layer-partition;12/24"
          "sglang|mixed cards \\(one per pipeline stage\\) are planned for vLLM only|\
--gpu;4090,h100;--engine;sglang")
  string(REGEX MATCH "^([^|]*)\\|([^|]*)\\|(.*)$" m "${c}")
  run_limited(mixed_bad_${CMAKE_MATCH_1} 2 plan qwen3-8b ${CMAKE_MATCH_3})
  if(NOT last_err MATCHES "${CMAKE_MATCH_2}")
    message(SEND_ERROR "mixed_bad_${CMAKE_MATCH_1}: '${last_err}'")
  endif()
endforeach()
run(mixed_check_env_sum 2 check --gpu 4090 -- VLLM_PP_LAYER_PARTITION=10,10 vllm serve qwen3-8b
    -pp 2)
if(NOT last_err MATCHES "VLLM_PP_LAYER_PARTITION=10,10: sum\\(partitions\\)=20 does not match")
  message(SEND_ERROR "mixed_check_env_sum: '${last_err}'")
endif()
run(mixed_doctor_one_card 2 doctor ${kv29k} --model llama-3.1-8b-instruct --gpu 3090,3090)
if(NOT last_err MATCHES "read by `plan` and `check` only")
  message(SEND_ERROR "mixed_doctor_one_card: '${last_err}'")
endif()
# Command lines as users type them (docs/cli.md, "Checked command lines"): flags without a
# memory effect are named once in one line; the mistakes people make when pasting commands
# are refused with what to type instead.
run(lines_vllm_no_memory 0 check --gpu 4090 -- vllm serve qwen3-8b --max-model-len 8192
    --host 0.0.0.0 --port 8000 --api-key k --trust-remote-code --port 8001)
set(quiet "--host --port --api-key --trust-remote-code")
if(NOT last_err MATCHES "flags read, no memory effect: ${quiet}\n" OR last_err MATCHES "modelled")
  message(SEND_ERROR "lines_vllm_no_memory: '${last_err}'")
endif()
run(lines_sglang_no_memory 0 check --gpu h100-sxm -- python -m sglang.launch_server --model-path
    qwen3-8b --host 0.0.0.0 --port 30000 --log-level warning --tp 2)
if(NOT last_err MATCHES "flags read, no memory effect: --host --port --log-level\n")
  message(SEND_ERROR "lines_sglang_no_memory: '${last_err}'")
endif()
run(lines_sglang_plan_tp 0 plan qwen3-8b --gpu h100-sxm --engine sglang --tp 2)
if(NOT last_out MATCHES "2 x NVIDIA H100" OR NOT last_out MATCHES "--tp-size 2")
  message(SEND_ERROR "lines_sglang_plan_tp: '${last_out}'")
endif()
file(WRITE ${WORK}/lines/broken/config.json "{\"model_type\": \"qwen3\", \"hidden_size\": 8,,}")
run(lines_broken_config 2 inspect ${WORK}/lines/broken)
if(NOT last_err MATCHES "${WORK}/lines/broken/config.json: byte [0-9]+: invalid JSON")
  message(SEND_ERROR "lines_broken_config: '${last_err}'")
endif()
run(lines_em_dash 2 check --gpu 4090 -- vllm serve qwen3-8b —enforce-eager)
if(NOT last_err MATCHES "—enforce-eager starts with an em dash \\(U\\+2014\\).*--enforce-eager")
  message(SEND_ERROR "lines_em_dash: '${last_err}'")
endif()
run(lines_plan_em_dash 2 plan qwen3-8b --gpu 4090 –max-model-len 8192)
if(NOT last_err MATCHES "an en dash \\(U\\+2013\\).*type it as --max-model-len")
  message(SEND_ERROR "lines_plan_em_dash: '${last_err}'")
endif()
run(lines_empty_value 2 check --gpu 4090 -- "vllm serve qwen3-8b --max-model-len ''")
if(NOT last_err MATCHES "--max-model-len \"\": an empty value")
  message(SEND_ERROR "lines_empty_value: '${last_err}'")
endif()
run(lines_uv_run 0 check --gpu 4090 -- uv run vllm serve qwen3-8b --max-model-len 8192)
run(lines_bare_fa 2 check --gpu 4090 -- llama-server -m tests/gguf/tiny-qwen3-Q4_K_M.gguf -fa
    -ctk q8_0)
if(NOT last_err MATCHES "-fa \\(--flash-attn\\) needs a value: on, off or auto")
  message(SEND_ERROR "lines_bare_fa: '${last_err}'")
endif()
# A build before -fa took a value (b6194, llama.cpp discussion 15396's `-ngl 99 -fa`): on.
run(lines_bare_fa_old_build 0 check --gpu 4090 --llamacpp-version b6194 -- llama-server -m
    tests/gguf/tiny-qwen3-Q4_K_M.gguf -ngl 99 -fa)
if(NOT last_out MATCHES "flash attention on" OR NOT last_out MATCHES "-ngl 99 -fa")
  message(SEND_ERROR "lines_bare_fa_old_build: '${last_out}'")
endif()
# LLAMA_ARG_* variables are flags before the command line's own (common/arg.cpp).
run(lines_llama_arg_env 0 check --gpu 4090 -- LLAMA_ARG_CTX_SIZE=2048 LLAMA_ARG_N_PARALLEL=1
    llama-server -m tests/gguf/tiny-qwen3-Q4_K_M.gguf)
if(NOT last_out MATCHES "-c 2048 -np 1" OR last_err MATCHES "not modelled")
  message(SEND_ERROR "lines_llama_arg_env: '${last_out}' '${last_err}'")
endif()
# ... where flash attention is off unless -fa is given: a quantized V cache is refused.
run(lines_fa_old_build_default_off 2 check --gpu 4090 --llamacpp-version b6194 -- llama-server
    -m tests/gguf/tiny-qwen3-Q4_K_M.gguf -ctv q8_0)
if(NOT last_err MATCHES "V cache quantization requires flash_attn")
  message(SEND_ERROR "lines_fa_old_build_default_off: '${last_err}'")
endif()
# A compose file's `command: >` is YAML, not a shell line: named as a compose file up front.
file(WRITE ${WORK}/lines/compose.yml "services:\n  vllm:\n    image: vllm/vllm-openai\n"
     "    command: >\n      --model Qwen/Qwen3-8B\n      --max-model-len 32768\n")
run(lines_compose 2 check --gpu 4090 --script ${WORK}/lines/compose.yml)
if(NOT last_err MATCHES "a docker compose file, which check does not read: give the service's")
  message(SEND_ERROR "lines_compose: '${last_err}'")
endif()
file(WRITE ${WORK}/lines/run.bat
     "set CUDA_VISIBLE_DEVICES=0\r\nvllm serve qwen3-8b --max-model-len 8192\r\n")
run(lines_bat 0 check --gpu 4090 --script ${WORK}/lines/run.bat)
if(NOT last_err MATCHES "run.bat: a Windows script, read as a POSIX shell script")
  message(SEND_ERROR "lines_bat: '${last_err}'")
endif()
run(lines_vllm_sglang_spelling 2 check --gpu 4090 -- vllm serve qwen3-8b --tp 2)
if(NOT last_err MATCHES "vLLM spells the nearest setting --tensor-parallel-size \\(-tp\\)")
  message(SEND_ERROR "lines_vllm_sglang_spelling: '${last_err}'")
endif()
# Flags pasted from a server command into plan or fit: read (with their values, wherever they
# stand), said in one line, never taken as MODEL.
run(lines_plan_no_memory 0 plan --port 8000 qwen3-8b --gpu 4090 --max-model-len 8192
    --trust-remote-code --host=0.0.0.0 --port 8001)
set(quiet "--port --trust-remote-code --host")
if(NOT last_err MATCHES "vramfit plan: flags read, no memory effect: ${quiet}\n"
   OR NOT last_out MATCHES "max-model-len 8192")
  message(SEND_ERROR "lines_plan_no_memory: '${last_out}' '${last_err}'")
endif()
run(lines_plan_not_modelled 2 plan qwen3-8b --gpu 4090 --enable-lora-bias)
if(NOT last_err MATCHES "unexpected argument\\(s\\): --enable-lora-bias")
  message(SEND_ERROR "lines_plan_not_modelled: '${last_err}'")
endif()

# GGUF what-ifs and Ollama library names: `--as-quantized q4_k_m` plans the GGUF file
# llama.cpp's converter and quantizer would make; a library name plans that what-if of its
# catalog model; a name not in the table keeps the download advice and lists the nearest.
run(plan_llamacpp_gguf_what_if 0 plan qwen3-8b --engine llamacpp --gpu 4090
    --as-quantized q4_k_m)
if(NOT last_out MATCHES "what-if: GGUF Q4_K_M, a checkpoint synthesized"
   OR NOT last_out MATCHES "model buffer 4.35 GiB: 36 of 36 layers")
  message(SEND_ERROR "plan_llamacpp_gguf_what_if: '${last_out}'")
endif()
run(check_ollama_library 0 check --gpu rtx-4090 -- ollama run qwen3:32b)
if(NOT last_out MATCHES "what-if: GGUF Q4_K_M of Ollama's qwen3:32b, the GGUF file llama.cpp"
   OR NOT last_out MATCHES "offload 65/65 layers")
  message(SEND_ERROR "check_ollama_library: '${last_out}'")
endif()
run(check_ollama_library_bare 0 check --gpu rtx-4090 -- ollama run qwen3)
if(NOT last_out MATCHES "Ollama's qwen3:8b")
  message(SEND_ERROR "check_ollama_library_bare: '${last_out}'")
endif()
run(plan_ollama_library_q8 0 plan qwen3:32b-q8_0 --engine ollama --gpu h100 --json)
if(NOT last_out MATCHES "\"what_if\": \"GGUF Q8_0 of Ollama's qwen3:32b\"")
  message(SEND_ERROR "plan_ollama_library_q8: '${last_out}'")
endif()
string(CONCAT re "not in vramfit's table of Ollama library names; nearest: qwen3:30b, "
                 "qwen3:32b.*is an Ollama library name, which vramfit does not download")
run_err(check_ollama_library_unknown 2 "${re}" check --gpu rtx-4090 -- ollama run qwen3:33b)
run_err(check_ollama_library_unknown_bare 2
        "which vramfit does not download.*nearest to it: [a-z]"
        check --gpu rtx-4090 -- ollama run starcoder2)
run_err(plan_gguf_what_if_bits 2 "a GGUF file type fixes its own types"
        plan qwen3-8b --engine llamacpp --gpu 4090 --as-quantized q4_k_m --bits 4)
# A Gated DeltaNet hybrid as Qwen3NextModel converts it: KV in the full-attention layers only,
# the linear layers' recurrent state beside it.
run(plan_gguf_what_if_linear 0
    plan qwen3-next-80b-a3b-instruct --engine llamacpp --gpu h100-sxm --as-quantized q4_k_m)
if(NOT last_out MATCHES "what-if: GGUF Q4_K_M.*recurrent state")
  message(SEND_ERROR "plan_gguf_what_if_linear: '${last_out}'")
endif()
# DeepSeek's MLA is laid out as DeepseekV2Model writes it, from its FP8 checkpoint.
run(plan_gguf_what_if_mla 0 plan deepseek-v3 --engine llamacpp --gpu h100 --as-quantized q4_k_m)
if(NOT last_out MATCHES "what-if: GGUF Q4_K_M")
  message(SEND_ERROR "plan_gguf_what_if_mla: '${last_out}'")
endif()
