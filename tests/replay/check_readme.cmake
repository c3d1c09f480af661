# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# The README's claims about where luf saves (issue 16, item 5) are the
# programs' own numbers: every "-X% (trace)" of its paragraph on the traces
# is luf-replay's reduction of remote flushes against batched on that
# bundled trace (16 CPUs), and its "N% fewer IPIs than batched in its
# default run" is what luf-demo prints with no arguments.
# Usage: cmake -DREPLAY=luf-replay -DDEMO=luf-demo -DREADME=README.md -DTRACES=dir -P check_readme.cmake
file(READ ${README} readme)
string(REGEX MATCH "The two parts measure different things\\.[^`]*" para "${readme}")
if(NOT para)
  message(FATAL_ERROR "README.md: the paragraph on what the two parts measure is gone")
endif()
string(REGEX REPLACE "[ \n]+" " " para "${para}")
string(REGEX MATCHALL "-[0-9]+\\.[0-9]% \\([a-z-]+\\)" claims "${para}")
list(LENGTH claims n)
if(n LESS 3)
  message(FATAL_ERROR "README.md: expected the replay's numbers per trace, found '${claims}'")
endif()
foreach(c ${claims})
  string(REGEX MATCH "-([0-9.]+)% \\(([a-z-]+)\\)" _ "${c}")
  set(pct ${CMAKE_MATCH_1})
  set(trace ${TRACES}/${CMAKE_MATCH_2}.strace.gz)
  execute_process(COMMAND ${REPLAY} --json --quiet ${trace} RESULT_VARIABLE rc OUTPUT_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "luf-replay ${trace}: exit ${rc}")
  endif()
  string(JSON got GET "${out}" luf_reduction_percent vs_batched)
  # one decimal, as the README writes it (luf-replay's table rounds the same way)
  execute_process(COMMAND printf "%.1f" ${got} OUTPUT_VARIABLE shown)
  if(NOT shown STREQUAL pct)
    message(FATAL_ERROR "README.md says -${pct}% for ${CMAKE_MATCH_2}; luf-replay gives -${shown}%")
  endif()
endforeach()
string(REGEX MATCH "\\(([0-9.]+)% fewer IPIs than batched in its default run\\)" _ "${para}")
set(demo_pct ${CMAKE_MATCH_1})
execute_process(COMMAND ${DEMO} RESULT_VARIABLE rc OUTPUT_VARIABLE out)
string(REGEX MATCH "luf sends ([0-9.]+)% fewer IPIs than batched" _ "${out}")
if(NOT rc EQUAL 0 OR NOT demo_pct OR NOT CMAKE_MATCH_1 STREQUAL demo_pct)
  message(FATAL_ERROR "README.md says the demo sends ${demo_pct}% fewer IPIs than batched; "
                      "luf-demo (exit ${rc}) prints '${CMAKE_MATCH_1}'")
endif()
message(STATUS "README.md's numbers match luf-replay (${claims}) and luf-demo (${demo_pct}%)")
