# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# The reclamation libraries the real-thread benchmarks compare luf with
# (bench/peers, bench/ds): liburcu's membarrier flavour and Concurrency
# Kit. Sets LUF_SMR_LIBS_FOUND, LUF_SMR_INCLUDES and LUF_SMR_LIBRARIES
# (with lib/user, the threads library and libdl for bench/common/syscount.c),
# or says what is missing. Debian: liburcu-dev, libck-dev (scripts/deps.sh).
set(LUF_SMR_LIBS_FOUND OFF)
if(NOT TARGET luf_user)
  set(LUF_SMR_MISSING "lib/user (Linux only)")
  return()
endif()
find_package(Threads REQUIRED)
find_path(LUF_URCU_INCLUDE urcu/urcu-memb.h)
find_library(LUF_URCU_MEMB urcu-memb)
find_library(LUF_URCU_COMMON urcu-common)
find_path(LUF_CK_INCLUDE ck_epoch.h)
find_library(LUF_CK ck)
if(NOT LUF_URCU_INCLUDE OR NOT LUF_URCU_MEMB OR NOT LUF_CK_INCLUDE OR NOT LUF_CK)
  set(LUF_SMR_MISSING "liburcu-dev or libck-dev")
  return()
endif()
set(LUF_SMR_LIBS_FOUND ON)
set(LUF_SMR_INCLUDES ${LUF_URCU_INCLUDE} ${LUF_CK_INCLUDE} ${PROJECT_SOURCE_DIR}/bench/common)
set(LUF_SMR_LIBRARIES luf_user luf_static ${LUF_URCU_MEMB} ${LUF_URCU_COMMON} ${LUF_CK}
    Threads::Threads ${CMAKE_DL_LIBS})
