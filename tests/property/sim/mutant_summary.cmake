# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# sim.mutants.summary: count the mutants every test of which caught it.
#   cmake -DRESULTS=<dir> -DMUTANTS=<a;b;...> -P mutant_summary.cmake
# Each sim.mutant.<m> test writes <dir>/<m>.<test>: "caught by ..." or
# "missed by ...". Prints one line per mutant and "mutants caught: X/Y";
# fails if a mutant was missed. A mutant whose tests did not run this time
# (ctest -R picked others) is listed as not run: its own test reports why.

set(caught 0)
set(missed 0)
set(total 0)
foreach(m IN LISTS MUTANTS)
  math(EXPR total "${total} + 1")
  file(GLOB files "${RESULTS}/${m}.*")
  if(NOT files)
    message("mutant ${m}: not run")
    continue()
  endif()
  set(ok TRUE)
  set(lines "")
  foreach(f IN LISTS files)
    file(READ ${f} line)
    string(STRIP "${line}" line)
    string(APPEND lines "\n    ${line}")
    if(NOT line MATCHES "^caught")
      set(ok FALSE)
    endif()
  endforeach()
  if(ok)
    math(EXPR caught "${caught} + 1")
    message("mutant ${m}: caught${lines}")
  else()
    math(EXPR missed "${missed} + 1")
    message("mutant ${m}: NOT caught${lines}")
  endif()
endforeach()
message("mutants caught: ${caught}/${total}")
if(missed GREATER 0)
  message(FATAL_ERROR "${missed} mutant(s) not caught")
endif()
