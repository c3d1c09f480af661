# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# Bad input for luf-replay: a malformed line is an error naming the file,
# the line number and what was expected; --lenient skips it and counts it;
# a truncated gzip file, binary garbage and an overlong line do not crash.
# Usage: cmake -DEXE=luf-replay -DDIR=scratch-dir -DTRACE=good.gz -P check_badinput.cmake
file(MAKE_DIRECTORY ${DIR})
function(run expect_rc pattern)
  execute_process(COMMAND ${EXE} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc STREQUAL "${expect_rc}")
    message(FATAL_ERROR "luf-replay ${ARGN}: exit ${rc}, expected ${expect_rc}\n${out}${err}")
  endif()
  if(pattern AND NOT "${out}${err}" MATCHES "${pattern}")
    message(FATAL_ERROR "luf-replay ${ARGN}: output lacks '${pattern}':\n${out}${err}")
  endif()
endfunction()

file(WRITE ${DIR}/bad.strace
  "10 00:00:00.000001 mmap(NULL, 8192, PROT_READ, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f0000000000\n"
  "10 00:00:00.000002 munmap(0x7f0000000000, 8192\n"
  "10 00:00:00.000003 mmap(NULL, 8192, PROT_READ, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f0000000000\n")
run(1 "bad.strace:2: expected the arguments to end with" ${DIR}/bad.strace)
run(0 "skipped 1 malformed lines" --lenient ${DIR}/bad.strace)

# binary garbage: an error, or with --lenient a run that survives it and
# says that nothing was left to replay (an error too: no events)
string(RANDOM LENGTH 4000 ALPHABET "\t !\"#()*+,-./0123456789:<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]_abcdefghijklmnopqrstuvwxyz{|}~" junk)
# A line starting with '#' is a kernel trace's header (rp_kparse_sniff()):
# the junk starts with a character that is not, or 1 run in 87 reads it as
# a kernel trace.
string(PREPEND junk "@")
file(WRITE ${DIR}/junk.strace "${junk}\n${junk}\n")
run(1 "junk.strace:1: expected" ${DIR}/junk.strace)
run(1 "junk.strace: no events" --lenient ${DIR}/junk.strace)

# an overlong line (> 64 KiB)
string(REPEAT "x" 70000 long)
file(WRITE ${DIR}/long.strace "${long}\n10 00:00:00.1 munmap(0x1000, 4096) = 0\n")
run(1 "long.strace:1: expected a line shorter than 64 KiB" ${DIR}/long.strace)
run(0 "skipped 1 malformed" --lenient ${DIR}/long.strace)

# a truncated gzip file
file(READ ${TRACE} gz HEX)
string(LENGTH "${gz}" n)
math(EXPR half "${n} / 4 * 2")
string(SUBSTRING "${gz}" 0 ${half} cut)
string(REGEX REPLACE "(..)" "\\\\x\\1" cut "${cut}")
file(WRITE ${DIR}/cut.hex "${cut}")
execute_process(COMMAND printf "%b" "${cut}" OUTPUT_FILE ${DIR}/cut.strace.gz)
run(1 "truncated or corrupt compressed data" ${DIR}/cut.strace.gz)
run(0 "" --lenient ${DIR}/cut.strace.gz)

# a missing file, a bad option
run(1 "No such file" ${DIR}/does-not-exist)
run(2 "--cpus wants" --cpus 0 ${TRACE})

# kernel traces (rp_kparse.h): a malformed line, lost events, a CPU beyond
# --cpus and a folio outside the memory map are errors naming the line;
# --lenient skips them and counts them.
set(hdr "reclaim-1 [000] 1.000001:")
file(WRITE ${DIR}/bad.ktrace
  "${hdr} switch: (switch_mm_irqs_off+0x0/0x33f) prev=0x1 next=0xa0\n"
  "${hdr} unmap: (try_to_unmap_one+0x0/0x432) folio=0xffffea0000000140 mm=0xa0\n"
  "${hdr} unmap: (try_to_unmap_one+0x0/0x432) folio=0xffffea0000000140 mm=0xa0 vmflags=0xd1\n"
  "${hdr} batch: (try_to_unmap_flush+0x0/0x2a)\n")
run(1 "bad.ktrace:2: expected unmap: folio=0x.. mm=0x.. vmflags=0x.." --cpus 4 ${DIR}/bad.ktrace)
run(0 "skipped 1 lines it could not replay" --cpus 4 --lenient ${DIR}/bad.ktrace)
file(WRITE ${DIR}/lost.ktrace
  "${hdr} unmap: (x) folio=0xffffea0000000140 mm=0xa0 vmflags=0xd1\n"
  "CPU:2 [LOST 17 EVENTS]\n"
  "${hdr} batch: (x)\n")
run(1 "lost.ktrace:2: expected no lost events" --cpus 4 ${DIR}/lost.ktrace)
file(WRITE ${DIR}/cpu.ktrace
  "${hdr} unmap: (x) folio=0xffffea0000000140 mm=0xa0 vmflags=0xd1\n"
  "reclaim-1 [007] 1.2: batch: (x)\n")
run(1 "cpu.ktrace:2: expected a CPU below --cpus" --cpus 4 ${DIR}/cpu.ktrace)
run(0 "" --cpus 8 ${DIR}/cpu.ktrace)
file(WRITE ${DIR}/folio.ktrace
  "${hdr} unmap: (x) folio=0xffff888000000140 mm=0xa0 vmflags=0xd1\n"
  "${hdr} batch: (x)\n")
run(1 "folio.ktrace:1: expected a folio pointer in the memory map" --cpus 4 ${DIR}/folio.ktrace)
file(WRITE ${DIR}/none.ktrace "# tracer: nop\n${hdr} sched_wakeup: comm=x pid=3\n")
run(1 "none.ktrace: no unmap or allocation events" --cpus 4 ${DIR}/none.ktrace)
