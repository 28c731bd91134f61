# `run(NAME EXPECTED_RC ARGS...)`: runs ${VRAMFIT} ARGS in ${SRC}, keeps its stdout and stderr
# in ${WORK}/NAME.out and .err and in last_out / last_err, and fails the script's test when the
# exit code is not EXPECTED_RC. Included by the CLI test scripts (cli_test.cmake, ...).
function(run name expect_rc)
  execute_process(COMMAND ${VRAMFIT} ${ARGN} WORKING_DIRECTORY ${SRC}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  file(WRITE ${WORK}/${name}.out "${out}")
  file(WRITE ${WORK}/${name}.err "${err}")
  if(NOT rc EQUAL expect_rc)
    message(SEND_ERROR "${name}: exit ${rc}, expected ${expect_rc}\nstdout: ${out}\nstderr: ${err}")
  endif()
  set(last_out "${out}" PARENT_SCOPE)
  set(last_err "${err}" PARENT_SCOPE)
endfunction()
