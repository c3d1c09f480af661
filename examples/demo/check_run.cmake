# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# scripts/run.sh, the main job, passes its arguments to luf-demo and fails
# cleanly on a bad one: luf-demo's message naming it, exit 2, no replay
# after it (scripts/run.sh --rounds -1 used to hang). --help prints the
# usage and runs nothing; good arguments reach luf-demo, then the replay
# runs. It builds into BUILD (LUF_RUN_BUILD), not the source tree's build/run.
# Usage: cmake -DBASH=bash -DRUN=scripts/run.sh -DBUILD=dir [-DTIMEOUT=s] -P check_run.cmake
if(NOT TIMEOUT)
  set(TIMEOUT 600)
endif()
function(run expect_rc pattern)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env LUF_RUN_BUILD=${BUILD} ${BASH} ${RUN} ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT ${TIMEOUT})
  if(NOT rc STREQUAL "${expect_rc}")
    message(FATAL_ERROR "run.sh ${ARGN}: exit '${rc}', expected ${expect_rc}\n"
                        "stdout:\n${out}\nstderr:\n${err}")
  endif()
  if(pattern AND NOT "${out}${err}" MATCHES "${pattern}")
    message(FATAL_ERROR "run.sh ${ARGN}: output lacks '${pattern}':\n"
                        "stdout:\n${out}\nstderr:\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

run(2 "luf-demo: --rounds wants a number in 1\\.\\.[0-9]+, not '-1'" --rounds -1)
if(out MATCHES "nr_tlb_remote_flush")
  message(FATAL_ERROR "run.sh --rounds -1: the replay ran after the demo failed:\n${out}")
endif()
run(2 "luf-demo: unknown option '--bogus'" --rounds 300 --bogus)
run(0 "usage: scripts/run.sh.*--rounds N" --help)
if(out MATCHES "shootdowns +IPIs|nr_tlb_remote_flush")
  message(FATAL_ERROR "run.sh --help ran the demo or the replay:\n${out}")
endif()
run(0 "luf-demo: 4 CPUs, 8 mms, 300 reclaim rounds.*node-codegen.*chart: " --rounds 300 --cpus 4)
