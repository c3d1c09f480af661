# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# cmake -DNM=nm -DLIB=<library> -DHEADERS="<h1>;<h2>..." [-DEXACT=1] -P check_exports.cmake
#
# Every symbol LIB defines and exports must be API: a function or object
# declared (not static inline) in one of HEADERS. With EXACT, every such
# declaration must also be defined by LIB. Internal helpers are static, or
# static inline with a __luf_ name, so they never show up here; the one
# internal function a library exports, __luf_fail() (luf/error.h: backends
# in other libraries report through it), is declared like the API.
cmake_minimum_required(VERSION 3.20)

set(api "")
foreach(h ${HEADERS})
  file(STRINGS ${h} lines)
  foreach(line ${lines})
    # A declaration starts in column 0 with a type, not "static", "#", "typedef" or a comment.
    if(line MATCHES "^(extern |const |struct |enum |unsigned |int |long |void |bool |size_t )"
       AND NOT line MATCHES "^static" AND NOT line MATCHES "^struct [a-z_]+;$"
       AND line MATCHES "[ *]((__)?luf_[a-z0-9_]+)( *\\(|;)")
      list(APPEND api ${CMAKE_MATCH_1})
    endif()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES api)
if(NOT api)
  message(FATAL_ERROR "no API declarations found in ${HEADERS}")
endif()

if(LIB MATCHES "\\.so")
  set(nm_args -D --defined-only)
else()
  set(nm_args -g --defined-only)
endif()
execute_process(COMMAND ${NM} ${nm_args} ${LIB} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} ${LIB} failed (${rc})")
endif()
string(REPLACE "\n" ";" out "${out}")
set(defined "")
set(bad "")
foreach(row ${out})
  # "<address> <type> <name>"; skip archive member headers and the loader's own.
  if(row MATCHES "^[0-9a-f]+ [A-Za-z] ([A-Za-z0-9_.@]+)$")
    set(sym ${CMAKE_MATCH_1})
    if(sym MATCHES "^(_init|_fini|__bss_start|_edata|_end)$")
      continue()
    endif()
    list(APPEND defined ${sym})
    list(FIND api ${sym} i)
    if(i EQUAL -1)
      list(APPEND bad ${sym})
    endif()
  endif()
endforeach()
if(bad)
  message(FATAL_ERROR "${LIB} exports symbols that are not API: ${bad}")
endif()
if(EXACT)
  foreach(sym ${api})
    list(FIND defined ${sym} i)
    if(i EQUAL -1)
      list(APPEND bad ${sym})
    endif()
  endforeach()
  if(bad)
    message(FATAL_ERROR "${LIB} lacks API functions declared in the headers: ${bad}")
  endif()
endif()
list(LENGTH defined n)
message(STATUS "${LIB}: ${n} exported symbols, all API")
