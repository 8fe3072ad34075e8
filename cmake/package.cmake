# SPDX-License-Identifier: MIT
# cmake/package.cmake — a Debian package of what `cmake --install` puts in
# the prefix (cmake/install.cmake), made by CPack:
#
#   cpack --config build/CPackConfig.cmake -B build/package
#
# gives ember_0.2.0_amd64.deb (the program, its man pages and completion,
# the library, the header, pkg-config and CMake files, the documents) and,
# where MPI was found, ember-mpi_0.2.0_amd64.deb (bin/ember-mpi, which
# `ember` runs under mpirun), so that the first needs no MPI. The packages
# install under /usr, as Debian's policy has packages do (/usr/local is the
# machine's administrator's), whatever prefix the build was configured
# with: the program finds its documents from where it lies, and the man
# pages are made at install time for the prefix. Their Depends come from
# dpkg-shlibdeps (Debian's dpkg-dev), which reads what each binary links;
# without it, the list below. tests/project/test_deb.sh installs it and uses it.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ember)
set(CPACK_PACKAGE_VENDOR "the ember authors")
set(CPACK_PACKAGE_CONTACT "the ember authors")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "minimal deep-learning runtime in C for CPUs, OpenCL devices and old NVIDIA GPUs")
set(CPACK_PACKAGE_DESCRIPTION "ember trains small neural networks (convolutions, BatchNorm, residual blocks, Adam)
on the CPU with OpenBLAS, on any OpenCL 1.2 device, and on NVIDIA GPUs from
Kepler up through the CUDA driver, compiling its kernels at run time. The
package holds the ember program, the library libember with its header and
pkg-config and CMake files, man pages, bash completion and the documents.")
set(CPACK_RESOURCE_FILE_LICENSE ${CMAKE_CURRENT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# a cross build's package is for the machine it targets (cmake/aarch64-linux-gnu.cmake:
# ember_0.2.0_arm64.deb), not for this one, whose architecture CPack asks dpkg for
if(CMAKE_CROSSCOMPILING AND CMAKE_SYSTEM_PROCESSOR STREQUAL "aarch64")
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
endif()
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL ember)
set(CPACK_DEBIAN_EMBER_PACKAGE_NAME ember)
if(TARGET ember_mpi_cli)
  list(APPEND CPACK_COMPONENTS_ALL mpi)
  set(CPACK_DEBIAN_MPI_PACKAGE_NAME ember-mpi)
  set(CPACK_DEBIAN_MPI_DESCRIPTION "ember built with MPI, to train as many processes under mpirun
ember-mpi is the ember program linked with Open MPI; `ember` started by
mpirun runs it in its place (mpirun -np 2 ember train).")
endif()
find_program(EMBER_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(EMBER_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  # what the program and the library link, by the names bookworm gives them
  set(CPACK_DEBIAN_EMBER_PACKAGE_DEPENDS "libc6, zlib1g, libpng16-16, libjpeg62-turbo")
  if(OPENBLAS_FOUND)
    string(APPEND CPACK_DEBIAN_EMBER_PACKAGE_DEPENDS ", libopenblas0 | libopenblas0-pthread")
  endif()
  set(CPACK_DEBIAN_MPI_PACKAGE_DEPENDS "${CPACK_DEBIAN_EMBER_PACKAGE_DEPENDS}, libopenmpi3")
endif()
include(CPack)
