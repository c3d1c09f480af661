# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# The checkers' self-test, repeated: `luf-jit --no-abort` with its default
# arguments patches live code without the write-upgrade abort, so every run
# must fail (issue 14: it passed 2 runs of 5). A run fails through luf's S2
# check (luf_upgrade_check refuses the write upgrade) and, when a caller was
# in the patched block, through the callers' own check (a crash or a wrong
# result); at least one run of RUNS must show the latter, or the end-to-end
# check has lost its teeth. RUNS runs (default 20), each with a time limit;
# the times are printed. Exit 77 of a run (no membarrier SYNC_CORE) skips.
# Usage: cmake -DEXE=luf-jit [-DRUNS=20] -P check_no_abort.cmake
if(NOT RUNS)
  set(RUNS 20)
endif()
set(failed 0)
set(seen 0)
set(times "")
foreach(i RANGE 1 ${RUNS})
  string(TIMESTAMP t0 "%s%f")
  execute_process(COMMAND ${EXE} --no-abort RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err TIMEOUT 60)
  string(TIMESTAMP t1 "%s%f")
  math(EXPR ms "(${t1} - ${t0}) / 1000")
  list(APPEND times "${ms}")
  if(rc STREQUAL "77")
    message("SKIP: ${out}")
    return()
  endif()
  if(rc STREQUAL "1" AND "${out}${err}" MATCHES
     "luf-jit: FAIL: (wrong results|a caller crashed|write upgrade with a flush still owed)")
    math(EXPR failed "${failed} + 1")
    if("${out}${err}" MATCHES "luf-jit: FAIL: (wrong results|a caller crashed)")
      math(EXPR seen "${seen} + 1")
    endif()
  else()
    message("run ${i}: exit '${rc}', the broken protocol went unnoticed:\n${out}${err}")
  endif()
endforeach()
string(REPLACE ";" " " times "${times}")
message("luf-jit --no-abort: ${failed} of ${RUNS} runs failed as they must, ${seen} of them "
        "with a caller running stale or rewritten code; ms per run: ${times}")
if(NOT failed EQUAL RUNS)
  math(EXPR passed "${RUNS} - ${failed}")
  message(FATAL_ERROR "luf-jit --no-abort passed ${passed} of ${RUNS} runs")
endif()
if(seen EQUAL 0)
  message(FATAL_ERROR "no caller ever saw the broken protocol in ${RUNS} runs")
endif()
