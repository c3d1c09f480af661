# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# cmake -DCC=<compiler> -DLANG=<c|c++> -DSTD=<c11|c++17|...> "-DFLAGS=<f1;f2...>"
#       "-DINCS=<dir1;dir2>" "-DSOURCES=<src1;src2...>" -P strict.cmake
#
# Compiles each generated header translation unit (one public header
# included alone, twice) as LANG with -std=STD, FLAGS and -I of each of INCS,
# syntax only. Fails, naming every header that gave an error or a warning
# (FLAGS carry -Werror), after trying them all.
cmake_minimum_required(VERSION 3.20)

set(incflags "")
foreach(d ${INCS})
  list(APPEND incflags -I${d})
endforeach()
set(failed "")
set(n 0)
foreach(src ${SOURCES})
  execute_process(COMMAND ${CC} -x ${LANG} -std=${STD} ${FLAGS} ${incflags} -fsyntax-only ${src}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  math(EXPR n "${n} + 1")
  if(NOT rc EQUAL 0 OR NOT out STREQUAL "")
    file(STRINGS ${src} what REGEX "^/\\* Generated")
    message("---- ${src}: ${what}\n${out}")
    list(APPEND failed ${src})
  endif()
endforeach()
if(failed)
  list(LENGTH failed nf)
  message(FATAL_ERROR "${nf} of ${n} header translation units fail as ${LANG} -std=${STD} with ${CC}")
endif()
message("all ${n} header translation units compile warning-free as ${LANG} -std=${STD} with ${CC}")
