# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# cmake -DEXE=<property test built with a LUF_MUTANT_*> [-DFILTER=suite/test] -P expect_fail.cmake
#
# A mutant build switches one safety rule off (tests/MUTANTS.md). This passes
# only if the property test FAILS on it, by a property assertion (a message
# naming its LUF_SEED), not by a crash or a timeout: a check that cannot
# fail proves nothing.
cmake_minimum_required(VERSION 3.20)

if(NOT DEFINED EXE)
  message(FATAL_ERROR "expect_fail.cmake: -DEXE=... missing")
endif()
set(args --jobs=2 --fail-fast)
if(FILTER)
  list(APPEND args --filter=${FILTER})
endif()
execute_process(COMMAND ${EXE} ${args} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
set(all "${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "the mutant survived: every property of ${EXE} passed\n${all}")
endif()
string(REGEX MATCH "LUF_SEED=0x[0-9a-f]+ step [0-9]+: [^\n]*" caught "${all}")
if(NOT caught)
  message(FATAL_ERROR "${EXE} failed (${rc}), but not by a property assertion\n${all}")
endif()
message(STATUS "caught: ${caught}")
