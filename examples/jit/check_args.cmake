# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# luf-jit's command line: a value out of range or not a number is named
# with its option (exit 2; --ops -1 used to wrap to ULONG_MAX and run
# forever), an unknown option is named, --help prints the usage (exit 0).
# Usage: cmake -DEXE=luf-jit -P check_args.cmake
function(run expect_rc pattern)
  execute_process(COMMAND ${EXE} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err TIMEOUT 30)
  if(NOT rc STREQUAL "${expect_rc}" OR NOT "${out}${err}" MATCHES "${pattern}")
    message(FATAL_ERROR "luf-jit ${ARGN}: exit '${rc}', expected ${expect_rc} and '${pattern}':\n"
                        "${out}${err}")
  endif()
endfunction()

run(2 "--ops wants a number in 1\\.\\.[0-9]+, not '-1'" --ops -1)
run(2 "--callers wants a number in 1\\.\\.64, not '0'" --callers 0)
run(2 "--spin wants a number in 1\\.\\.[0-9]+, not 'x'" --spin x)
run(2 "--patch-every wants a number in 0\\.\\.[0-9]+, not '-2'" --patch-every -2)
run(2 "unknown option '--bogus'" --bogus)
run(2 "a value is missing after '--ops'" --ops)
run(0 "usage: luf-jit.*--no-abort.*Exit status" --help)
