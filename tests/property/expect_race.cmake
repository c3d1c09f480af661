# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# cmake -DEXE=<tsan_order built with LUF_MUTANT_DONE_RELAXED, under TSan> -P expect_race.cmake
#
# Passes only if ThreadSanitizer reports a data race on the frame (the
# reader's load through its stale entry against the allocator's reuse):
# the acquire that LUF_MUTANT_DONE_RELAXED removes is what orders them.
cmake_minimum_required(VERSION 3.20)

if(NOT DEFINED EXE)
  message(FATAL_ERROR "expect_race.cmake: -DEXE=... missing")
endif()
execute_process(COMMAND ${EXE} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
set(all "${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "the mutant survived: no race reported by ${EXE}\n${all}")
endif()
string(FIND "${all}" "WARNING: ThreadSanitizer: data race" race)
string(REGEX MATCH "(reader|allocator)[^\n]*tsan_order.c" where "${all}")
if(race EQUAL -1 OR NOT where)
  message(FATAL_ERROR "${EXE} failed (${rc}), but not by a race on the frame\n${all}")
endif()
message(STATUS "caught: ThreadSanitizer data race in ${where}")
