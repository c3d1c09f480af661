# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# Replays one trace with luf-replay --json and checks the table:
# every policy present, no safety violation, and
#   batched <= immediate, luf <= immediate   (nr_tlb_remote_flush and flush operations:
#                                 each of their flushes covers a removal immediate
#                                 flushed on its own)
#   luf >= oracle                 (flush operations: the oracle's bound)
# luf against batched is reported, not required: luf can need more (on
# python-threads it does; bench/replay/README.md).
# Usage: cmake -DEXE=luf-replay -DTRACE=file -P check_replay.cmake
execute_process(COMMAND ${EXE} --json --quiet ${TRACE} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "luf-replay ${TRACE} exited with ${rc}: ${err}")
endif()
foreach(p immediate batched luf oracle)
  string(JSON pol ERROR_VARIABLE jerr GET "${out}" policies ${p})
  if(jerr)
    message(FATAL_ERROR "policy ${p} missing from the table: ${jerr}\n${out}")
  endif()
  foreach(k nr_tlb_remote_flush nr_tlb_remote_flush_received nr_tlb_local_flush_all
            nr_tlb_local_flush_one flushes)
    string(JSON v GET "${pol}" ${k})
    set(${p}_${k} ${v})
  endforeach()
  foreach(rule S1 S2 S3 S4)
    string(JSON v GET "${pol}" violations ${rule})
    if(NOT v EQUAL 0)
      message(FATAL_ERROR "${p} broke ${rule} ${v} times on ${TRACE}")
    endif()
  endforeach()
endforeach()
foreach(k nr_tlb_remote_flush flushes)
  foreach(p batched luf)
    if(${p}_${k} GREATER immediate_${k})
      message(FATAL_ERROR "${k}: expected ${p} (${${p}_${k}}) <= immediate "
                          "(${immediate_${k}}) on ${TRACE}")
    endif()
  endforeach()
endforeach()
if(luf_flushes LESS oracle_flushes)
  message(FATAL_ERROR "luf (${luf_flushes}) below the oracle's bound (${oracle_flushes}) on ${TRACE}")
endif()
message(STATUS "${TRACE}: remote flushes immediate ${immediate_nr_tlb_remote_flush}, batched "
               "${batched_nr_tlb_remote_flush}, luf ${luf_nr_tlb_remote_flush}, oracle "
               "${oracle_nr_tlb_remote_flush}")
