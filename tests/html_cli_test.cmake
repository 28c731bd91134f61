# `--html FILE` as a user runs it (ctest html_cli): each command writes a page that opens with
# the doctype and embeds its JSON, `--html -` prints the page instead of the usual output, and
# a file that cannot be written is exit 2 naming the flag and the path.
# Run: cmake -DVRAMFIT=path/to/vramfit -DSRC=source/dir -DWORK=scratch/dir -P html_cli_test.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

include(${CMAKE_CURRENT_LIST_DIR}/cli_run.cmake)

function(expect_page name file schema)
  file(READ ${file} page)
  if(NOT page MATCHES "^<!DOCTYPE html>" OR NOT page MATCHES "\"schema\": \"${schema}\""
     OR NOT page MATCHES "<svg class=\"chart")
    message(SEND_ERROR "${name}: ${file} is not a ${schema} page with a chart")
  endif()
endfunction()

set(log ${SRC}/tests/doctor/corpus/vllm-kv-max-seq-len-29000-llama3.1-8b-3090-10517.log)
run(plan 0 plan qwen3-4b-instruct-2507-awq --gpu 4090 --max-model-len 262144
    --html ${WORK}/plan.html)
expect_page(plan ${WORK}/plan.html vramfit.plan/1)
if(NOT last_out MATCHES "verdict: FAILS at kv_cache" OR NOT last_err MATCHES "wrote .*plan.html")
  message(SEND_ERROR "plan: the usual output and a 'wrote' line expected: ${last_out} ${last_err}")
endif()
run(check 1 check --gpu 4090 --html ${WORK}/check.html -- vllm serve qwen3-30b-a3b)
expect_page(check ${WORK}/check.html vramfit.plan/1)
run(fit 0 fit qwen3-4b-instruct-2507-awq --gpu 4090 --json --html ${WORK}/fit.html)
expect_page(fit ${WORK}/fit.html vramfit.fit/1)
if(NOT last_out MATCHES "^{")
  message(SEND_ERROR "fit --json --html: the JSON expected on stdout")
endif()
run(inspect 0 inspect qwen3-30b-a3b-gptq-int4 --html ${WORK}/inspect.html)
expect_page(inspect ${WORK}/inspect.html vramfit.inspect/1)
run(doctor 0 doctor ${log} --model llama-3.1-8b-instruct --gpu 3090 --html ${WORK}/doctor.html)
expect_page(doctor ${WORK}/doctor.html vramfit.doctor/1)
run(stdout 0 plan qwen3-8b --gpu 4090 --html -)
if(NOT last_out MATCHES "^<!DOCTYPE html>" OR last_out MATCHES "verdict:")
  message(SEND_ERROR "--html -: the page alone expected on stdout")
endif()
run(unwritable 2 plan qwen3-8b --gpu 4090 --html ${WORK}/no/such/dir/x.html)
if(NOT last_err MATCHES "vramfit plan: --html .*no/such/dir/x.html: cannot write the report")
  message(SEND_ERROR "unwritable: '${last_err}'")
endif()
