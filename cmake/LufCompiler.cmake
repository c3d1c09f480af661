# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# Refuse, at configure time and with a clear message, a C compiler luf is
# not known to build with. Include right after project(): the C11-atomics
# probe of the top-level CMakeLists.txt then only runs on a compiler that
# passed this check.
#
# Known good: GCC >= 4.9 (first with <stdatomic.h>), Clang >= 3.6
# (C11 atomics and _Alignas complete), AppleClang >= 7.0 (Clang 3.7),
# IntelLLVM (Clang-based). Anything else stops here unless
# -DLUF_ALLOW_UNTESTED_COMPILER=ON, which lets the C11 probe decide.

option(LUF_ALLOW_UNTESTED_COMPILER "Configure with a C compiler luf was not tested with" OFF)

set(_luf_cc "${CMAKE_C_COMPILER_ID}")
set(_luf_ver "${CMAKE_C_COMPILER_VERSION}")
set(_luf_min "")
if(_luf_cc STREQUAL "GNU")
  set(_luf_min 4.9)
elseif(_luf_cc STREQUAL "Clang")
  set(_luf_min 3.6)
elseif(_luf_cc STREQUAL "AppleClang")
  set(_luf_min 7.0)
elseif(_luf_cc STREQUAL "IntelLLVM")
  set(_luf_min 0)
endif()

if(_luf_min STREQUAL "")
  set(_luf_msg "luf: the C compiler ${CMAKE_C_COMPILER} (${_luf_cc} ${_luf_ver}) is not one luf "
               "is known to build with: GCC >= 4.9, Clang >= 3.6, AppleClang >= 7.0 or IntelLLVM "
               "(luf needs C11 <stdatomic.h>, _Alignas and GCC-style attributes). "
               "Choose one with -DCMAKE_C_COMPILER=gcc (or clang) in a fresh build directory, or "
               "pass -DLUF_ALLOW_UNTESTED_COMPILER=ON to try anyway.")
  if(LUF_ALLOW_UNTESTED_COMPILER)
    message(WARNING ${_luf_msg})
  else()
    message(FATAL_ERROR ${_luf_msg})
  endif()
elseif(_luf_ver VERSION_LESS _luf_min)
  message(FATAL_ERROR "luf: ${_luf_cc} ${_luf_ver} (${CMAKE_C_COMPILER}) is too old: luf needs "
                      "${_luf_cc} >= ${_luf_min} for C11 <stdatomic.h>. Use a newer compiler "
                      "with -DCMAKE_C_COMPILER=... in a fresh build directory.")
endif()
unset(_luf_cc)
unset(_luf_ver)
unset(_luf_min)
unset(_luf_msg)
