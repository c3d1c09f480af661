# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# What `cmake --install <build> [--prefix <dir>]` puts where, and how a
# consumer finds it again. Include from the top-level CMakeLists.txt after
# every library target exists (luf_static, luf_shared, and lib/user's
# luf_user if built).
#
#   <prefix>/include/luf/*.h, luf/platform/*.h      the headers
#   <prefix>/include/luf/luf_user.h, luf_proc.h     lib/user's headers (Linux)
#   <libdir>/libluf.so.<ver>, libluf.so.<soversion>, libluf.so, libluf.a
#   <libdir>/libluf_user.a                          lib/user's backends (Linux)
#   <libdir>/cmake/luf/lufConfig.cmake ...          find_package(luf CONFIG):
#       luf::luf      libluf.so: the slow paths; the fast paths are inline
#       luf::static   libluf.a, the same
#       luf::user     membarrier/mprotect backends (if built; link with one of the above)
#   <libdir>/pkgconfig/luf.pc                       -I<prefix>/include, -lluf
#   <libdir>/pkgconfig/luf-user.pc                  the backends (if built)
#   <docdir>/README.md, DESIGN.md, LICENSE, CHANGELOG.md, README-user.md (lib/user's)
#   <docdir>/tutorial.md, examples/tutorial/{pool,config}.c  the tutorial of <luf/luf_proc.h>
#   <docdir>/html/                                  the API reference (if built: docs/)
#   <mandir>/man3/luf_proc.3, luf_<function>.3      man pages of <luf/luf_proc.h> and of
#                                                   luf_last_error() & co. (docs/)
#
# Every package puts <prefix>/include alone on the include path: consumers
# write #include <luf/luf.h>, <luf/luf_user.h>.
#
# A build with LUF_DEBUG changes struct luf_folio: its packages carry
# -DLUF_DEBUG in every use, so a consumer cannot mix the two layouts.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(LUF_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/luf"
    CACHE STRING "Where lufConfig.cmake goes, relative to the prefix")
set(LUF_INSTALL_PKGCONFIGDIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig"
    CACHE STRING "Where luf.pc and luf-user.pc go, relative to the prefix")
mark_as_advanced(LUF_INSTALL_CMAKEDIR LUF_INSTALL_PKGCONFIGDIR)

# Exported names: luf::luf, luf::static (and luf::user), the same as the
# aliases inside this build, so a consumer's CMake code reads the same
# whether it uses add_subdirectory() or find_package().
set_target_properties(luf_shared PROPERTIES EXPORT_NAME luf)
set_target_properties(luf_static PROPERTIES EXPORT_NAME static)
set(_luf_targets luf_static luf_shared)
set(LUF_HAVE_USER OFF)
if(TARGET luf_user)
  set_target_properties(luf_user PROPERTIES EXPORT_NAME user)
  list(APPEND _luf_targets luf_user)
  set(LUF_HAVE_USER ON)
endif()

install(DIRECTORY include/luf DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT devel
        FILES_MATCHING PATTERN "*.h" PATTERN "kernel.h" EXCLUDE
        PATTERN "mutant.h" EXCLUDE) # test-only rule switches, if a branch has them
if(LUF_HAVE_USER)
  install(FILES lib/user/include/luf/luf_user.h lib/user/include/luf/luf_proc.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/luf
          COMPONENT devel)
endif()
install(TARGETS ${_luf_targets} EXPORT luf-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT devel
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime
                NAMELINK_COMPONENT devel
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT luf-targets NAMESPACE luf:: FILE luf-targets.cmake
        DESTINATION ${LUF_INSTALL_CMAKEDIR} COMPONENT devel)
# The same targets straight from this build tree (no install needed):
# set luf_DIR=<build> for find_package(luf CONFIG).
export(EXPORT luf-targets NAMESPACE luf:: FILE ${PROJECT_BINARY_DIR}/luf-targets.cmake)

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/lufConfig.cmake.in
  ${PROJECT_BINARY_DIR}/lufConfig.cmake INSTALL_DESTINATION ${LUF_INSTALL_CMAKEDIR})
# 0.x: a new minor version may change the API; from 1.0 on, the major.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_luf_compat SameMinorVersion)
else()
  set(_luf_compat SameMajorVersion)
endif()
write_basic_package_version_file(${PROJECT_BINARY_DIR}/lufConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY ${_luf_compat})
install(FILES ${PROJECT_BINARY_DIR}/lufConfig.cmake ${PROJECT_BINARY_DIR}/lufConfigVersion.cmake
        DESTINATION ${LUF_INSTALL_CMAKEDIR} COMPONENT devel)

# pkg-config files. Their prefix is the one given at install time
# (cmake --install --prefix), not the one configured: they are written by
# the install step itself. Templates: cmake/luf*.pc.in.
set(LUF_PC_PREFIX "@LUF_PC_PREFIX@") # kept for the install-time pass
foreach(d LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${d}}")
    set(LUF_PC_${d} "${CMAKE_INSTALL_${d}}")
  else()
    set(LUF_PC_${d} "\${prefix}/${CMAKE_INSTALL_${d}}")
  endif()
endforeach()
set(LUF_PC_CFLAGS "")
if(LUF_DEBUG)
  set(LUF_PC_CFLAGS " -DLUF_DEBUG")
endif()
set(_luf_pc luf)
if(LUF_HAVE_USER)
  list(APPEND _luf_pc luf-user)
endif()
foreach(pc ${_luf_pc})
  # First pass now (everything but the prefix), second at install time.
  configure_file(${CMAKE_CURRENT_LIST_DIR}/${pc}.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/${pc}.pc.in
                 @ONLY)
endforeach()
install(CODE "
  set(_luf_pc_dir \"${LUF_INSTALL_PKGCONFIGDIR}\")
  if(NOT IS_ABSOLUTE \"\${_luf_pc_dir}\")
    set(_luf_pc_dir \"\${CMAKE_INSTALL_PREFIX}/\${_luf_pc_dir}\")
  endif()
  set(LUF_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  foreach(pc ${_luf_pc})
    configure_file(\"${PROJECT_BINARY_DIR}/pkgconfig/\${pc}.pc.in\"
                   \"${PROJECT_BINARY_DIR}/pkgconfig/install/\${pc}.pc\" @ONLY)
    file(INSTALL DESTINATION \"\${_luf_pc_dir}\" TYPE FILE
         FILES \"${PROJECT_BINARY_DIR}/pkgconfig/install/\${pc}.pc\")
  endforeach()
" COMPONENT devel)

install(FILES LICENSE README.md docs/DESIGN.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT devel)
# lib/user's README (the backends, the user-space contract) next to it,
# and the tutorial of <luf/luf_proc.h> with the program it is made of.
if(LUF_HAVE_USER)
  install(FILES lib/user/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} RENAME README-user.md
          COMPONENT devel)
  install(FILES docs/tutorial.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT devel)
  install(FILES examples/tutorial/pool.c examples/tutorial/config.c DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples/tutorial
          COMPONENT devel)
endif()
if(EXISTS ${PROJECT_SOURCE_DIR}/CHANGELOG.md)
  install(FILES CHANGELOG.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT devel)
endif()
unset(_luf_targets)
unset(_luf_compat)
unset(_luf_pc)
