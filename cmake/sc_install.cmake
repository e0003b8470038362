# What `cmake --install` puts in the prefix (included by the top
# CMakeLists.txt): libsubcirc.a, libsubcirc.so.MAJOR, the public headers
# under include/subcirc/ (operators/, runtime/, units/ and the umbrella
# subcirc.h; no *_int.h), lib/pkgconfig/subcirc.pc and the CMake package
# config lib/cmake/subcirc/. The CLI installs itself (tools/CMakeLists.txt).
# tests/install/check.sh checks all of it from outside the tree.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS subcirc subcirc_shared EXPORT subcircTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

foreach(h IN LISTS sc_public_headers)
  get_filename_component(dir ${h} DIRECTORY)
  install(FILES ${PROJECT_SOURCE_DIR}/${h}
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/subcirc/${dir})
endforeach()
install(FILES ${PROJECT_BINARY_DIR}/include/subcirc/subcirc.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/subcirc)

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

set(sc_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/subcirc)
install(EXPORT subcircTargets NAMESPACE subcirc:: DESTINATION ${sc_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/subcircConfig.cmake.in
  ${PROJECT_BINARY_DIR}/subcircConfig.cmake INSTALL_DESTINATION ${sc_cmake_dir})
# 0.x: a new minor version may break the interface.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/subcircConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/subcircConfig.cmake
              ${PROJECT_BINARY_DIR}/subcircConfigVersion.cmake
        DESTINATION ${sc_cmake_dir})
