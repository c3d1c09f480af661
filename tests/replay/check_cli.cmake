# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# luf-replay given bad input or used in unusual ways (issue 14, class 8):
# each case names the input (file:line where there is one) and exits with
# the documented status (luf-replay --help):
#   0 success, 1 bad input, 2 usage, 3 safety violation, 4 out of memory,
#   5 the chart could not be drawn (the table was printed first).
# Usage: cmake -DEXE=luf-replay -DDIR=scratch-dir -DTRACE=good.gz -DCASE=name -P check_cli.cmake
# Cases: overflow empty directory option help stdin png_missing png_fails png no_process
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR})

# run(rc regex [ENV var=value...] [INPUT file] ARGS args...): exit status and output
function(run expect_rc pattern)
  cmake_parse_arguments(R "" "INPUT" "ENV;ARGS" ${ARGN})
  set(cmd ${EXE} ${R_ARGS})
  if(R_ENV)
    set(cmd ${CMAKE_COMMAND} -E env ${R_ENV} ${cmd})
  endif()
  if(R_INPUT)
    set(in INPUT_FILE ${R_INPUT})
  endif()
  execute_process(COMMAND ${cmd} ${in} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err TIMEOUT 120)
  string(SUBSTRING "${R_ARGS}" 0 300 shown)
  if(NOT rc STREQUAL "${expect_rc}")
    message(FATAL_ERROR "luf-replay ${shown}: exit '${rc}', expected ${expect_rc}\n"
                        "stdout:\n${out}\nstderr:\n${err}")
  endif()
  if(pattern AND NOT "${out}${err}" MATCHES "${pattern}")
    message(FATAL_ERROR "luf-replay ${shown}: output lacks '${pattern}':\n"
                        "stdout:\n${out}\nstderr:\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

set(mmap "mmap(NULL, 8192, PROT_READ, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f0000000000")
set(good "10 00:00:00.000001 ${mmap}\n10 00:00:00.000002 munmap(0x7f0000000000, 8192) = 0\n")
file(WRITE ${DIR}/good.strace "${good}")

if(CASE STREQUAL "overflow")
  # A number beyond 64 bits is refused, naming the file and line, never
  # wrapped into a plausible value (a munmap length of 10^26 gave rc 0).
  foreach(bad
      "munmap(0x7f0000000000, 100000000000000000000000000) = 0"  # decimal argument
      "munmap(0x7f0000000000, 18446744073709551616) = 0"         # 2^64
      "munmap(0x17f0000000000000000, 8192) = 0"                  # hex argument
      "mprotect(0x7f0000000000, 8192, 0x100000000000000001) = 0" # flags
      "brk(NULL) = 0x1000000000000000000000"                     # return value
      "munmap(0xfffffffffffff000, 8192) = 0"                     # address + length wraps
      )
    file(WRITE ${DIR}/big.strace "10 00:00:00.000001 ${mmap}\n10 00:00:00.000002 ${bad}\n")
    run(1 "big\\.strace:2: expected .*64 bits" ARGS ${DIR}/big.strace)
  endforeach()
  file(WRITE ${DIR}/big.strace "100000000000000000000000 00:00:00.000001 ${mmap}\n")
  run(1 "big\\.strace:1: expected a pid .*64 bits" ARGS ${DIR}/big.strace)
  # the largest values still parse; a failed call may carry any length
  file(WRITE ${DIR}/max.strace
    "10 00:00:00.000001 ${mmap}\n"
    "10 00:00:00.000002 munmap(0x7f0000000000, 18446744073709551615) = -1 EINVAL (Invalid argument)\n"
    "10 00:00:00.000003 madvise(0x7f0000000000, 8192, MADV_DONTNEED) = 0\n"
    "10 00:00:00.000004 mprotect(0x7f0000000000, 8192, 0xffffffffffffffff) = 0\n")
  run(0 "max\\.strace: 4 lines" ARGS ${DIR}/max.strace)
elseif(CASE STREQUAL "empty")
  # An empty trace (or one with nothing but blank lines, or nothing but
  # junk skipped by --lenient) is an error: there is nothing to replay.
  file(WRITE ${DIR}/empty.strace "")
  run(1 "empty\\.strace: no events" ARGS ${DIR}/empty.strace)
  file(WRITE ${DIR}/blank.strace "\n\n  \n")
  run(1 "blank\\.strace: no events" ARGS ${DIR}/blank.strace)
  file(WRITE ${DIR}/junk.strace "@@@@\n####\n")
  run(1 "junk\\.strace: no events.*2 malformed lines skipped" ARGS --lenient ${DIR}/junk.strace)
  # the traces before the empty one are still reported
  run(1 "good\\.strace: 2 lines.*empty\\.strace: no events" ARGS ${DIR}/good.strace
      ${DIR}/empty.strace)
elseif(CASE STREQUAL "directory")
  run(1 "luf-replay: ${DIR}: is a directory" ARGS ${DIR})
  if("${out}${err}" MATCHES "corrupt")
    message(FATAL_ERROR "a directory reported as corrupt data:\n${err}")
  endif()
elseif(CASE STREQUAL "option")
  # An unknown option or a missing or bad value says what was wrong.
  run(2 "unknown option '--bogus'" ARGS --bogus ${DIR}/good.strace)
  run(2 "unknown option '-x'" ARGS -x ${DIR}/good.strace)
  run(2 "--cpus needs a value" ARGS ${DIR}/good.strace --cpus)
  run(2 "--png needs a value" ARGS ${DIR}/good.strace --png)
  run(2 "--png= needs a value" ARGS --png= ${DIR}/good.strace)
  run(2 "unknown option '--pngx'" ARGS --pngx ${DIR}/good.strace)
  run(2 "--cpus wants 1\\.\\.4096, not 'many'" ARGS --cpus many ${DIR}/good.strace)
  run(2 "--cpus wants 1\\.\\.4096, not '-1'" ARGS --cpus -1 ${DIR}/good.strace)
  run(2 "--cpus wants 1\\.\\.4096, not '18446744073709551617'"
      ARGS --cpus 18446744073709551617 ${DIR}/good.strace)
  run(2 "--cpus wants 1\\.\\.4096, not '4097'" ARGS --cpus 4097 ${DIR}/good.strace)
  run(2 "no TRACE given" ARGS --json)
  # options may follow the traces; "--" ends them
  run(0 "good\\.strace: 2 lines, .* 4 CPUs" ARGS ${DIR}/good.strace --cpus 4)
  run(1 "--json: No such file" ARGS -- --json)
elseif(CASE STREQUAL "help")
  run(0 "usage: luf-replay" ARGS --help)
  foreach(want "'-'.*standard input" "Exit status" "0 +success" "1 +bad input" "2 +usage"
          "3 +a safety violation" "4 +out of memory" "5 +the chart")
    if(NOT out MATCHES "${want}")
      message(FATAL_ERROR "--help lacks '${want}':\n${out}")
    endif()
  endforeach()
elseif(CASE STREQUAL "stdin")
  run(0 "<stdin>: 2 lines, 2 calls" INPUT ${DIR}/good.strace ARGS -)
  file(WRITE ${DIR}/bad.strace "10 00:00:00.000001 ${mmap}\n10 munmap(0x7f0000000000\n")
  run(1 "<stdin>:2: expected" INPUT ${DIR}/bad.strace ARGS -)
  run(0 "\"trace\": \"<stdin>\"" INPUT ${TRACE} ARGS --json --quiet -)
  # results that cannot be written are an error, not a silent success
  execute_process(COMMAND ${EXE} ${DIR}/good.strace OUTPUT_FILE /dev/full RESULT_VARIABLE rc
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 1 OR NOT err MATCHES "could not write the results")
    message(FATAL_ERROR "stdout on /dev/full: exit ${rc}, expected 1:\n${err}")
  endif()
elseif(CASE STREQUAL "png_missing" OR CASE STREQUAL "png_fails")
  # No gnuplot on the PATH, or a gnuplot that dies without reading its
  # input: the table comes first, then the chart's failure, exit 5; never
  # SIGPIPE (exit 141) with the table lost. A chart script larger than a
  # pipe's buffer (the long file name) made the old code block writing to
  # a gnuplot that had gone, and die of SIGPIPE every time.
  file(MAKE_DIRECTORY ${DIR}/bin)
  if(CASE STREQUAL "png_fails")
    file(WRITE ${DIR}/bin/gnuplot "#!/bin/sh\nexit 1\n")
    file(CHMOD ${DIR}/bin/gnuplot PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
    set(why "gnuplot failed")
  else()
    set(why "gnuplot not found on the PATH")
  endif()
  string(REPEAT "x" 70000 long)
  foreach(png ${DIR}/chart.png ${DIR}/${long}.png)
    run(5 "" ENV PATH=${DIR}/bin ARGS --png ${png} ${DIR}/good.strace ${TRACE})
    if(NOT out MATCHES "good\\.strace: 2 lines.*nr_tlb_remote_flush.*luf against immediate.*luf against immediate")
      message(FATAL_ERROR "the tables were not printed before the chart failed:\n${out}")
    endif()
    if(NOT err MATCHES "luf-replay: [^\n]*\\.png: ${why}")
      message(FATAL_ERROR "the chart's failure is not named ('${why}'):\n${err}")
    endif()
  endforeach()
  run(5 "" ENV PATH=${DIR}/bin ARGS --json --png ${DIR}/chart.png ${DIR}/good.strace)
  if(NOT out MATCHES "\"nr_tlb_remote_flush\"")
    message(FATAL_ERROR "--json: the results were not printed before the chart failed:\n${out}")
  endif()
elseif(CASE STREQUAL "png")
  # A chart of a trace whose bars are all 0 (single-threaded processes):
  # no log scale to fail on. Needs gnuplot.
  find_program(GNUPLOT gnuplot)
  if(NOT GNUPLOT)
    message("SKIP: no gnuplot on the PATH")
    return()
  endif()
  file(WRITE ${DIR}/zero.strace "${good}")
  run(0 "chart: ${DIR}/it's.png" ARGS --png "${DIR}/it's.png" ${DIR}/zero.strace)
  file(SIZE "${DIR}/it's.png" size)
  if(size LESS 1000)
    message(FATAL_ERROR "the chart ${DIR}/it's.png has ${size} bytes")
  endif()
elseif(CASE STREQUAL "no_process")
  # 20 single-threaded processes traced without the process class
  # (strace -f -e trace=memory): no clone/fork/execve/exit_group lines.
  # Read as 20 separate processes (not threads of one address space), all
  # flushes local, and a warning that says to re-capture.
  set(t "")
  foreach(round 1 2 3)
    foreach(pid RANGE 100 119)
      set(t "${t}${pid} 00:00:00.000001 ${mmap}\n")
      set(t "${t}${pid} 00:00:00.000002 munmap(0x7f0000000000, 8192) = 0\n")
    endforeach()
  endforeach()
  foreach(pid RANGE 100 119)
    set(t "${t}${pid} 00:00:00.000003 +++ exited with 0 +++\n") # printed without -e process
  endforeach()
  file(WRITE ${DIR}/memonly.strace "${t}")
  run(0 "" ARGS --json ${DIR}/memonly.strace)
  string(JSON mms GET "${out}" address_spaces)
  string(JSON remote GET "${out}" policies immediate nr_tlb_remote_flush)
  if(NOT mms EQUAL 20 OR NOT remote EQUAL 0)
    message(FATAL_ERROR "20 processes read as ${mms} address spaces, ${remote} remote flushes "
                        "(expected 20 and 0):\n${out}")
  endif()
  foreach(want "memonly\\.strace: warning: no process events" "20 pids"
          "separate processes" "re-capture with .strace -f -tt -e trace=memory,process")
    if(NOT err MATCHES "${want}")
      message(FATAL_ERROR "the warning lacks '${want}':\n${err}")
    endif()
  endforeach()
  # with process events, an unknown pid is still a thread (strace -p of threads)
  file(WRITE ${DIR}/threads.strace
    "10 00:00:00.000001 execve(\"/bin/x\", [\"x\"], 0x1 /* 1 var */) = 0\n"
    "10 00:00:00.000002 ${mmap}\n11 00:00:00.000003 munmap(0x7f0000000000, 8192) = 0\n")
  run(0 "" ARGS --json ${DIR}/threads.strace)
  string(JSON remote GET "${out}" policies immediate nr_tlb_remote_flush)
  if(NOT remote EQUAL 1 OR NOT err MATCHES "pids without a clone record: 1, read as threads")
    message(FATAL_ERROR "a pid attached without a clone record: ${remote} remote flushes "
                        "(expected 1: a thread of pid 10):\n${out}${err}")
  endif()
else()
  message(FATAL_ERROR "unknown CASE '${CASE}'")
endif()
