# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# luf-demo's command line (issue 14, class 8): every numeric option is
# range-checked and a bad value is named with its option (exit 2; a value
# like --rounds -1 used to wrap to ULONG_MAX and hang); --help prints the
# usage on stdout (exit 0); an unknown option or a stray argument is named
# (exit 2). Each run has a time limit: a hang fails the test.
# Usage: cmake -DEXE=luf-demo -P check_args.cmake
function(run expect_rc pattern)
  execute_process(COMMAND ${EXE} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err TIMEOUT 30)
  if(NOT rc STREQUAL "${expect_rc}")
    message(FATAL_ERROR "luf-demo ${ARGN}: exit '${rc}', expected ${expect_rc}\n"
                        "stdout:\n${out}\nstderr:\n${err}")
  endif()
  if(pattern AND NOT "${out}${err}" MATCHES "${pattern}")
    message(FATAL_ERROR "luf-demo ${ARGN}: output lacks '${pattern}':\n"
                        "stdout:\n${out}\nstderr:\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

# out of range, negative, not a number, over 64 bits: named with the option
run(2 "--rounds wants a number in 1\\.\\.[0-9]+, not '-1'" --rounds -1)
run(2 "--rounds wants a number in 1\\.\\.[0-9]+, not '0'" --rounds 0)
run(2 "--rounds wants a number in 1\\.\\.[0-9]+, not '1e3'" --rounds 1e3)
run(2 "--rounds wants a number in 1\\.\\.[0-9]+, not '99999999999999999999999'"
    --rounds 99999999999999999999999)
run(2 "--rounds wants a number in 1\\.\\.[0-9]+, not ' 5'" --rounds " 5")
run(2 "--cpus wants a number in 2\\.\\.8192, not '1'" --cpus 1)
run(2 "--cpus wants a number in 2\\.\\.8192, not '8193'" --cpus 8193)
run(2 "--cpus wants a number in 2\\.\\.8192, not '-16'" --cpus -16)
run(2 "--cpus wants a number in 2\\.\\.8192, not '4294967298'" --cpus 4294967298)
run(2 "--mms wants a number in 1\\.\\.[0-9]+, not '0'" --mms 0)
run(2 "--mms wants a number in 1\\.\\.[0-9]+, not 'many'" --mms many)
run(2 "--batch wants a number in 1\\.\\.[0-9]+, not '-3'" --batch -3)
run(2 "--batch wants a number in 1\\.\\.[0-9]+, not '1000000'" --batch 1000000)
run(2 "--seed wants a number in 0\\.\\.18446744073709551615, not '-1'" --seed -1)
run(2 "--seed wants a number in 0\\.\\.18446744073709551615, not '18446744073709551616'"
    --seed 18446744073709551616)
run(2 "--rounds wants a number in 1\\.\\.[0-9]+, not ''" --rounds=)
# a missing value, an unknown option, a stray argument
run(2 "--rounds needs a value" --cpus 4 --rounds)
run(2 "unknown option '--bogus'" --rounds 10 --bogus)
run(2 "unknown option '-r'" -r 10)
run(2 "unexpected argument 'extra'" --rounds 10 extra)
# --help: the usage on stdout, nothing run
foreach(h --help -h)
  run(0 "usage: luf-demo" ${h})
  if(out MATCHES "shootdowns +IPIs" OR NOT out MATCHES "--rounds N.*Exit status")
    message(FATAL_ERROR "luf-demo ${h}: not just the usage, or no exit status:\n${out}")
  endif()
endforeach()
# good values, in every form, are taken
run(0 "4 CPUs, 3 mms, 100 reclaim rounds of up to 8 read-only pages"
    --cpus 4 --mms=3 --rounds 100 --batch 0x8 --seed 18446744073709551615)
