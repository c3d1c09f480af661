# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# cmake -DEXE=<fuzz_api mutant> -DWORK=<dir> -DCORPUS=<dir> -DSECONDS=<n>
#       [-DARGS=<libFuzzer flags>] -P expect_crash.cmake
#
# A mutant build switches one safety rule off (tests/MUTANTS.md). This passes
# only if the API fuzzer's oracle catches it within SECONDS: libFuzzer must
# stop on an abort that follows a "luf-fuzz-api: VIOLATION" line, not on a
# sanitizer report (a bug in the harness, or another one), a timeout or a
# run that found nothing. WORK is emptied first, so every run starts from
# the committed corpus alone.
cmake_minimum_required(VERSION 3.20)

foreach(v EXE WORK CORPUS SECONDS)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "expect_crash.cmake: -D${v}=... missing")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/corpus)
if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.23)
  set(fmt "%s.%f")
else()
  set(fmt "%s")
endif()
string(TIMESTAMP t0 "${fmt}" UTC)
execute_process(COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=1
                        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
                        ${EXE} -max_total_time=${SECONDS} ${ARGS} -artifact_prefix=${WORK}/
                        ${WORK}/corpus ${CORPUS}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
string(TIMESTAMP t1 "${fmt}" UTC)
set(all "${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "the mutant survived ${SECONDS} s of fuzzing: ${EXE}\n${all}")
endif()
if(all MATCHES "ERROR: (Address|Leak|UndefinedBehavior)Sanitizer|runtime error:")
  message(FATAL_ERROR "${EXE} stopped on a sanitizer report, not on the oracle\n${all}")
endif()
string(REGEX MATCH "luf-fuzz-api: VIOLATION [^\n]*" caught "${all}")
if(NOT caught OR NOT all MATCHES "ERROR: libFuzzer: deadly signal")
  message(FATAL_ERROR "${EXE} failed (${rc}), but not by the oracle\n${all}")
endif()
string(REGEX MATCH "Test unit written to [^\n]*" unit "${all}")
# Elapsed wall time in milliseconds (to the second before CMake 3.23).
function(to_ms stamp var)
  string(REGEX MATCH "^([0-9]+)\\.?([0-9]*)" _ "${stamp}")
  set(sec ${CMAKE_MATCH_1})
  string(SUBSTRING "${CMAKE_MATCH_2}000" 0 3 frac)
  string(REGEX REPLACE "^0+([0-9])" "\\1" frac "${frac}")
  math(EXPR v "${sec} * 1000 + ${frac}")
  set(${var} ${v} PARENT_SCOPE)
endfunction()
to_ms("${t0}" a)
to_ms("${t1}" b)
math(EXPR ms "${b} - ${a}")
message(STATUS "caught after ${ms} ms: ${caught}\n-- ${unit}")
