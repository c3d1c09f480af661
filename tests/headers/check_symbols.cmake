# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# cmake -DNM=nm -DMODE=exports|imports -DFILE=<elf> -DAPI=<luf/api.h> -P check_symbols.cmake
#
# exports: the dynamic symbols FILE (libluf.so) defines are exactly the
#          functions listed in LUF_API_LIST of api.h: all of them, nothing
#          else (the linker's own section/boundary symbols aside).
# imports: FILE (a program built with LUF_LINKED) takes luf_ symbols from a
#          shared library instead of inlining the API.
cmake_minimum_required(VERSION 3.20)

foreach(v NM MODE FILE API)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_symbols.cmake: -D${v}=... missing")
  endif()
endforeach()

# The API: every "LUF_API(type, luf_name, (" entry of LUF_API_LIST.
file(READ ${API} api_text)
string(REGEX MATCHALL "LUF_API\\([^,\n]+, luf_[a-z0-9_]+, \\(" entries "${api_text}")
set(api)
foreach(e ${entries})
  string(REGEX REPLACE "^.*, (luf_[a-z0-9_]+), \\($" "\\1" name "${e}")
  list(APPEND api ${name})
endforeach()
list(LENGTH api nr_api)
if(nr_api LESS 10)
  message(FATAL_ERROR "only ${nr_api} API names parsed from ${API}: parser out of date?")
endif()

if(MODE STREQUAL "exports")
  set(nm_args -D --defined-only)
else()
  set(nm_args -D --undefined-only)
endif()
execute_process(COMMAND ${NM} ${nm_args} ${FILE} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} ${nm_args} ${FILE} failed (${rc})")
endif()
string(REGEX REPLACE "\n$" "" out "${out}")
string(REPLACE "\n" ";" lines "${out}")

# Symbols the linker defines in every shared object, not part of any API.
set(linker_symbols _init _fini _edata _end __bss_start _DYNAMIC _GLOBAL_OFFSET_TABLE_)
set(syms)
foreach(line ${lines})
  string(REGEX MATCH "([A-Za-z]) ([^ ]+)$" _ "${line}")
  set(type ${CMAKE_MATCH_1})
  string(REGEX REPLACE "@.*$" "" name "${CMAKE_MATCH_2}")
  if(name STREQUAL "" OR type STREQUAL "A" OR name IN_LIST linker_symbols)
    continue()
  endif()
  list(APPEND syms ${name})
endforeach()

set(bad)
if(MODE STREQUAL "exports")
  foreach(s ${syms})
    if(NOT s MATCHES "^luf_" OR NOT s IN_LIST api)
      list(APPEND bad "exported but not in the API: ${s}")
    endif()
  endforeach()
  foreach(s ${api})
    if(NOT s IN_LIST syms)
      list(APPEND bad "in the API but not exported: ${s}")
    endif()
  endforeach()
else()
  foreach(s luf_init luf_pcpu_fold luf_free_at luf_alloc_at luf_ugen_before)
    if(NOT s IN_LIST syms)
      list(APPEND bad "not imported from libluf: ${s}")
    endif()
  endforeach()
endif()

if(bad)
  string(REPLACE ";" "\n  " bad "${bad}")
  message(FATAL_ERROR "${FILE}:\n  ${bad}")
endif()
list(LENGTH syms n)
message(STATUS "${MODE}: ${n} dynamic symbols of ${FILE} as expected (${nr_api} API functions)")
