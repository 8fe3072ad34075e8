# SPDX-License-Identifier: MIT
# cmake/install.cmake — what `cmake --install` puts in the prefix, for
# programs that embed ember (docs/embedding.md):
#
#   include/ember.h with its parts in include/ember/, include/ember-mpi.h (an
#   ember_collective over MPI, header only)
#   lib/libember.so.0.2.0, libember.so.0.2 (the SONAME), libember.so; lib/libember.a
#   lib/pkgconfig/ember.pc        pkg-config --cflags --libs ember (--static for libember.a)
#   lib/cmake/ember/              find_package(ember): ember::ember, ember::ember_static
#   bin/ember                     the command-line program (no MPI)
#   bin/ember-mpi                 the same with MPI, run by `ember` under mpirun (component "mpi")
#   share/man/man1/ember.1, ember-COMMAND.1     made from the program's --help (cmake/ember-man.sh),
#                                               saying where this prefix has the documents
#   share/bash-completion/completions/ember     tools/completion.bash
#   share/doc/ember/              README.md, LICENSE, docs/, examples/
#
# Both ember.pc and the CMake package find the prefix from where they lie,
# so an installed tree may be moved or copied elsewhere whole. Everything
# is component "ember" but ember-mpi, so that a package of the rest needs
# no MPI (cmake/package.cmake).
include(CMakePackageConfigHelpers)
set(CMAKE_INSTALL_DEFAULT_COMPONENT_NAME ember)

install(TARGETS ember EXPORT emberTargets)
install(TARGETS ember_static EXPORT emberStaticTargets)
install(TARGETS ember_cli)
if(TARGET ember_mpi_cli)
  install(TARGETS ember_mpi_cli COMPONENT mpi)
endif()
install(FILES include/ember.h include/ember-mpi.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/ember DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")

# The man pages, from the help text of the program just built, so that they
# say what --help says; every command `ember --help` lists has its page
# (tests/project/test_install.sh checks that the list below is the program's).
set(EMBER_COMMANDS train eval predict generate summary export import plot devices ptx)
set(EMBER_MAN_PAGES ${CMAKE_BINARY_DIR}/man/ember.1)
foreach(command IN LISTS EMBER_COMMANDS)
  list(APPEND EMBER_MAN_PAGES ${CMAKE_BINARY_DIR}/man/ember-${command}.1)
endforeach()
# (Not in the Windows build, which has no man and cannot run ember.exe here
# without Wine: its zip carries the help as text, scripts/windows-package.sh.)
if(NOT WIN32)
# (A cross build runs the program under its emulator: EMBER_RUN.)
add_custom_command(OUTPUT ${EMBER_MAN_PAGES}
                   COMMAND ${CMAKE_COMMAND} -E env "EMBER_RUN=${CMAKE_CROSSCOMPILING_EMULATOR}"
                           sh ${CMAKE_CURRENT_SOURCE_DIR}/cmake/ember-man.sh $<TARGET_FILE:ember_cli>
                           ${CMAKE_BINARY_DIR}/man ${CMAKE_INSTALL_FULL_DOCDIR}
                   DEPENDS ember_cli cmake/ember-man.sh
                   COMMENT "The man pages, from ember --help"
                   VERBATIM)
add_custom_target(ember_man ALL DEPENDS ${EMBER_MAN_PAGES})
# Installed, they say where the documents are in the prefix installed to, which
# `cmake --install --prefix` and CPack (/usr) decide only then: made again at install time.
if(IS_ABSOLUTE "${CMAKE_INSTALL_DOCDIR}")
  set(EMBER_MAN_DOCS "${CMAKE_INSTALL_DOCDIR}")
else()
  set(EMBER_MAN_DOCS "\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DOCDIR}")
endif()
install(CODE "
  execute_process(COMMAND ${CMAKE_COMMAND} -E env \"EMBER_RUN=${CMAKE_CROSSCOMPILING_EMULATOR}\"
                          sh ${CMAKE_CURRENT_SOURCE_DIR}/cmake/ember-man.sh $<TARGET_FILE:ember_cli>
                          ${CMAKE_BINARY_DIR}/man-installed \"${EMBER_MAN_DOCS}\" RESULT_VARIABLE failed)
  if(failed)
    message(FATAL_ERROR \"cmake/ember-man.sh could not make the man pages\")
  endif()
  file(GLOB pages ${CMAKE_BINARY_DIR}/man-installed/*.1)
  file(INSTALL \${pages} DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_MANDIR}/man1\")")
endif()
install(FILES tools/completion.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME ember)
install(FILES README.md LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
install(DIRECTORY examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

# What libember.a needs besides itself, read from EMBER_LINK_LIBS: the
# packages of its imported targets, which the CMake config finds again, and
# their pkg-config modules (Requires.private), the plain libraries and the
# threads flag (Libs.private), for pkg-config --static. A new dependency
# needs its module named here.
set(EMBER_PC_MODULE_ZLIB zlib)
set(EMBER_PC_MODULE_PNG libpng)
set(EMBER_PC_MODULE_JPEG libjpeg)
set(EMBER_CONFIG_PACKAGES "")
set(EMBER_PC_REQUIRES "")
set(EMBER_PC_LIBS_PRIVATE "${CMAKE_THREAD_LIBS_INIT}")
foreach(lib IN LISTS EMBER_LINK_LIBS)
  if(lib MATCHES "^\\$<")
    # OpenBLAS as $<BUILD_INTERFACE:...> and $<INSTALL_INTERFACE:...>: below
  elseif(TARGET ${lib} AND NOT lib MATCHES "::")
    # the Windows build's OpenBLAS (cmake/windows.cmake): its DLL and import
    # library are installed beside ember's, and linked by file name
    get_target_property(implib ${lib} IMPORTED_IMPLIB)
    get_target_property(dll ${lib} IMPORTED_LOCATION)
    get_filename_component(implib_name ${implib} NAME)
    string(APPEND EMBER_PC_LIBS_PRIVATE " -l:${implib_name}")
    install(FILES ${implib} DESTINATION ${CMAKE_INSTALL_LIBDIR})
    install(FILES ${dll} DESTINATION ${CMAKE_INSTALL_BINDIR})
  elseif(lib MATCHES "^([A-Za-z0-9_]+)::")
    set(package ${CMAKE_MATCH_1})
    if(DEFINED EMBER_PC_MODULE_${package})
      list(APPEND EMBER_PC_REQUIRES ${EMBER_PC_MODULE_${package}})
    elseif(NOT package STREQUAL "Threads")
      message(FATAL_ERROR "cmake/install.cmake: ember links ${lib}; set EMBER_PC_MODULE_${package} "
                          "to its pkg-config module, for ember.pc")
    endif()
    list(APPEND EMBER_CONFIG_PACKAGES ${package})
  else()
    string(APPEND EMBER_PC_LIBS_PRIVATE " -l${lib}")
  endif()
endforeach()
set(EMBER_CONFIG_PACKAGES_TEXT ${EMBER_CONFIG_PACKAGES})
if(OPENBLAS_FOUND)
  set(EMBER_USES_OPENBLAS TRUE)
  list(APPEND EMBER_PC_REQUIRES openblas)
  list(APPEND EMBER_CONFIG_PACKAGES_TEXT OpenBLAS)
else()
  set(EMBER_USES_OPENBLAS FALSE)
endif()
list(JOIN EMBER_CONFIG_PACKAGES_TEXT ", " EMBER_CONFIG_PACKAGES_TEXT)

# The CMake package. The shared library's targets need nothing else; the
# static library's name what it links, which the config finds first, so
# they are a file of their own.
set(EMBER_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ember)
install(EXPORT emberTargets NAMESPACE ember:: DESTINATION ${EMBER_CMAKE_DIR})
install(EXPORT emberStaticTargets NAMESPACE ember:: DESTINATION ${EMBER_CMAKE_DIR})
configure_package_config_file(cmake/emberConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/emberConfig.cmake
                              INSTALL_DESTINATION ${EMBER_CMAKE_DIR})
# while the major version is 0, minors break the ABI: 0.2 accepts 0.2.x only
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/emberConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/emberConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/emberConfigVersion.cmake
        DESTINATION ${EMBER_CMAKE_DIR})

# ember.pc, with the prefix relative to the file's own folder (${pcfiledir},
# which pkg-config and pkgconf both define)
set(EMBER_PC_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${EMBER_PC_DIR}")
  set(EMBER_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH up "/prefix/${EMBER_PC_DIR}" "/prefix")
  string(REGEX REPLACE "/$" "" up "${up}")
  set(EMBER_PC_PREFIX "\${pcfiledir}/${up}")
endif()
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(EMBER_PC_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(EMBER_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
list(JOIN EMBER_PC_REQUIRES ", " EMBER_PC_REQUIRES_PRIVATE)
string(STRIP "${EMBER_PC_LIBS_PRIVATE}" EMBER_PC_LIBS_PRIVATE)
configure_file(cmake/ember.pc.in ${CMAKE_CURRENT_BINARY_DIR}/ember.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ember.pc DESTINATION ${EMBER_PC_DIR})
