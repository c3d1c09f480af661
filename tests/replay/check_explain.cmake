# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# luf-replay --explain (issue 16, item 4): one "flush" line per flush
# operation of every policy, as many per policy as its flushes in the table
# and in the summary by cause, each naming a cause, the trace line and call
# of the event that forced it (with luf's abort cause, or -), and its CPUs; on late-join.strace the exact
# lines are known.
# Usage: cmake -DEXE=luf-replay -DTRACE=file -DLATE=late-join.strace -P check_explain.cmake
function(replay trace)
  execute_process(COMMAND ${EXE} --quiet --explain ${trace} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "luf-replay --explain ${trace} exited with ${rc}: ${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

replay(${LATE})
foreach(line
    "flush immediate call +- +line 5 +pid 100 +munmap +cpu 0 +remote 1 +cpus 0-1\n"
    "flush batched +batch-end - +line 6 +pid 100 +mmap +cpu 0 +remote 1 +cpus 0-1\n"
    "flush luf +upgrade +prot_upgrade line 9 +pid 100 +mprotect +cpu 0 +remote 1 +cpus 0-1\n"
    "flush operations by cause:"
    "  immediate +1 +0 +0 +0 +0 +0 +0 +1\n")
  if(NOT out MATCHES "${line}")
    message(FATAL_ERROR "--explain on ${LATE} lacks '${line}':\n${out}")
  endif()
endforeach()

replay(${TRACE})
string(REGEX MATCHALL "\nflush [a-z]+ +[a-z-]+ +[a-z_-]+ +line [0-9]+ +pid -?[0-9]+ +[a-z0-9_]+ +cpu [0-9]+ +remote [0-9]+ +cpus [0-9]" lines "${out}")
list(LENGTH lines total)
if(total EQUAL 0)
  message(FATAL_ERROR "--explain on ${TRACE}: no flush lines:\n${out}")
endif()
foreach(p immediate batched luf oracle)
  string(REGEX MATCHALL "\nflush ${p} " mine "${out}")
  list(LENGTH mine n)
  string(REGEX MATCH "\n  ${p} +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +([0-9]+) +[0-9]+ +[0-9.inf-]+ +[0-9.inf-]+ +[0-9]+\n" row "${out}")
  set(flushes ${CMAKE_MATCH_1})
  string(REGEX MATCH "\n  ${p} +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +([0-9]+)\n" sum "${out}")
  set(total_by_cause ${CMAKE_MATCH_1})
  if(NOT row OR NOT sum OR NOT n EQUAL flushes OR NOT n EQUAL total_by_cause)
    message(FATAL_ERROR "${p} on ${TRACE}: ${n} flush lines, table '${flushes}', "
                        "summary total '${total_by_cause}'")
  endif()
endforeach()
message(STATUS "${TRACE}: ${total} flush lines, each counted in the table and by cause")
