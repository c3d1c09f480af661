# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# Replays one trace with luf-replay --json and checks the table:
# every policy present, no safety violation, and
#   batched <= immediate, luf <= immediate   (flush operations: each of their
#                                 flushes covers a removal immediate flushed on
#                                 its own; remote flushes are not ordered: a
#                                 flush can be remote where immediate's was local)
#   every policy >= the bounds    (cpus_flushed >= bounds.cpus_flushed,
#                                 flushes >= bounds.flushes: lib/sim/luf_cmp.h)
#   oracle == the operation bound (flushes == bounds.flushes: the oracle is
#                                 that bound's stabbing, computed apart)
# luf against batched is reported, not required: luf can need more
# (bench/replay/README.md).
# Usage: cmake -DEXE=luf-replay -DTRACE=file [-DCPUS=n] -P check_replay.cmake
if(NOT CPUS)
  set(CPUS 16)
endif()
execute_process(COMMAND ${EXE} --json --quiet --cpus ${CPUS} ${TRACE} RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "luf-replay ${TRACE} exited with ${rc}: ${err}")
endif()
foreach(p immediate batched luf oracle)
  string(JSON pol ERROR_VARIABLE jerr GET "${out}" policies ${p})
  if(jerr)
    message(FATAL_ERROR "policy ${p} missing from the table: ${jerr}\n${out}")
  endif()
  foreach(k nr_tlb_remote_flush nr_tlb_remote_flush_received nr_tlb_local_flush_all
            nr_tlb_local_flush_one flushes cpus_flushed)
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
foreach(p batched luf)
  if(${p}_flushes GREATER immediate_flushes)
    message(FATAL_ERROR "flushes: expected ${p} (${${p}_flushes}) <= immediate "
                        "(${immediate_flushes}) on ${TRACE}")
  endif()
endforeach()
string(JSON bound_cpus GET "${out}" bounds cpus_flushed)
string(JSON bound_ops GET "${out}" bounds flushes)
foreach(p immediate batched luf oracle)
  if(${p}_cpus_flushed LESS bound_cpus OR ${p}_flushes LESS bound_ops)
    message(FATAL_ERROR "${p} below a lower bound on ${TRACE}: ${${p}_cpus_flushed} CPUs "
                        "flushed (bound ${bound_cpus}), ${${p}_flushes} flushes (bound ${bound_ops})")
  endif()
endforeach()
if(NOT oracle_flushes EQUAL bound_ops)
  message(FATAL_ERROR "oracle ${oracle_flushes} flushes, operation bound ${bound_ops} on ${TRACE}")
endif()
message(STATUS "${TRACE}: remote flushes immediate ${immediate_nr_tlb_remote_flush}, batched "
               "${batched_nr_tlb_remote_flush}, luf ${luf_nr_tlb_remote_flush}, oracle "
               "${oracle_nr_tlb_remote_flush}; bounds ${bound_cpus} CPUs flushed, ${bound_ops} flushes")
