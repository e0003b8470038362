# What `cmake --install` puts in the prefix (included by the top
# CMakeLists.txt): libsubcirc.a, libsubcirc.so.MAJOR, the public headers
# under include/subcirc/ (SC_PUBLIC_HEADERS and the umbrella subcirc.h),
# lib/pkgconfig/subcirc.pc and the CMake package config lib/cmake/subcirc/.
# With MPI, libsubcirc-mpi beside it: libsubcirc-mpi.a, libsubcirc-mpi.so.MAJOR,
# its headers (SC_MPI_HEADERS and subcirc_mpi.h), subcirc-mpi.pc and the
# package config's component mpi (subcircMpiTargets.cmake, an export set of
# its own, so that find_package(subcirc) without it never needs MPI).
# The CLI installs itself (tools/CMakeLists.txt).
# tests/install/check.sh checks all of it from outside the tree.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS subcirc subcirc_shared EXPORT subcircTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# sc_install_headers(UMBRELLA HEADERS...): the headers, each under its
# folder, and the umbrella made from them (sc_umbrella).
function(sc_install_headers umbrella)
  foreach(h IN LISTS ARGN)
    get_filename_component(dir ${h} DIRECTORY)
    install(FILES ${PROJECT_SOURCE_DIR}/${h}
            DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/subcirc/${dir})
  endforeach()
  install(FILES ${PROJECT_BINARY_DIR}/include/subcirc/${umbrella}
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/subcirc)
endfunction()
sc_install_headers(subcirc.h ${SC_PUBLIC_HEADERS})

# The .pc file's paths are relative to its own place, so a prefix given
# only at install time (cmake --install --prefix P) is honoured.
file(RELATIVE_PATH sc_pc_up ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig
     ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" sc_pc_up "${sc_pc_up}")
set(SC_PC_PREFIX "\${pcfiledir}/${sc_pc_up}")
set(SC_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
set(SC_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/subcirc.pc.in
               ${PROJECT_BINARY_DIR}/subcirc.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/subcirc.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The package config's component mpi finds MPI the way this build did
# (SC_MPI_VIA): through pkg-config's ompi-c, or CMake's FindMPI.
set(SC_MPI_VIA "")
if(SC_MPI_LIB)
  install(TARGETS subcirc_mpi subcirc_mpi_shared EXPORT subcircMpiTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  sc_install_headers(subcirc_mpi.h ${SC_MPI_HEADERS})
  # subcirc-mpi.pc: MPI through its own .pc where there is one (Open
  # MPI's ompi-c), else the flags FindMPI found.
  set(SC_PC_MPI_REQUIRES "")
  set(SC_PC_MPI_LIBS "")
  set(SC_PC_MPI_CFLAGS "")
  if(OMPI_FOUND)
    set(SC_MPI_VIA pkg-config)
    set(SC_PC_MPI_REQUIRES ", ompi-c")
  else()
    set(SC_MPI_VIA FindMPI)
    foreach(l IN LISTS MPI_C_LIBRARIES)
      string(APPEND SC_PC_MPI_LIBS " ${l}")
    endforeach()
    foreach(d IN LISTS MPI_C_INCLUDE_DIRS)
      string(APPEND SC_PC_MPI_CFLAGS " -I${d}")
    endforeach()
  endif()
  configure_file(${PROJECT_SOURCE_DIR}/cmake/subcirc-mpi.pc.in
                 ${PROJECT_BINARY_DIR}/subcirc-mpi.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/subcirc-mpi.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()

set(sc_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/subcirc)
install(EXPORT subcircTargets NAMESPACE subcirc:: DESTINATION ${sc_cmake_dir})
if(SC_MPI_LIB)
  install(EXPORT subcircMpiTargets NAMESPACE subcirc:: DESTINATION ${sc_cmake_dir})
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/subcircConfig.cmake.in
  ${PROJECT_BINARY_DIR}/subcircConfig.cmake INSTALL_DESTINATION ${sc_cmake_dir})
# 0.x: a new minor version may break the interface.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/subcircConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/subcircConfig.cmake
              ${PROJECT_BINARY_DIR}/subcircConfigVersion.cmake
        DESTINATION ${sc_cmake_dir})

# The example programs and workload plugins (tests/examples/, built and
# run by the tests) as documentation: a user copies one and builds it
# against this install.
install(FILES ${PROJECT_SOURCE_DIR}/tests/examples/README.md
              ${PROJECT_SOURCE_DIR}/tests/examples/circuit.c
              ${PROJECT_SOURCE_DIR}/tests/examples/runtime.c
              ${PROJECT_SOURCE_DIR}/tests/examples/settle.c
              ${PROJECT_SOURCE_DIR}/tests/examples/ticks.c
              ${PROJECT_SOURCE_DIR}/tests/examples/payments.c
              ${PROJECT_SOURCE_DIR}/tests/examples/running.c
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
