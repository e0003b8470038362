# The public API's contract sweep (tests/api/gen_sweep.py, sweep.h): the
# suite is generated at build time from the public headers' prototypes, so a
# new function of a public header is swept by the next build; one ctest per
# header, api_sweep.<header> (a new header is added to SC_PUBLIC_HEADERS,
# which reconfigures). Included by tests/CMakeLists.txt.
find_package(Python3 REQUIRED COMPONENTS Interpreter)

set(sc_sweep_headers ${SC_PUBLIC_HEADERS})
set(sc_sweep_libs subcirc sc_testprop)
if(TARGET sc_mpi)
  list(APPEND sc_sweep_headers ${SC_MPI_HEADERS})
  list(APPEND sc_sweep_libs sc_mpi)
endif()
list(TRANSFORM sc_sweep_headers PREPEND ${PROJECT_SOURCE_DIR}/
     OUTPUT_VARIABLE sc_sweep_deps)
set(sc_sweep_c ${CMAKE_CURRENT_BINARY_DIR}/api_sweep.c)
add_custom_command(
  OUTPUT ${sc_sweep_c}
  COMMAND Python3::Interpreter ${CMAKE_CURRENT_LIST_DIR}/gen_sweep.py
          ${sc_sweep_c} ${sc_sweep_headers}
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
  DEPENDS ${CMAKE_CURRENT_LIST_DIR}/gen_sweep.py ${sc_sweep_deps}
  COMMENT "Generating the public API's contract sweep from its headers"
  VERBATIM)
add_executable(test_api_sweep ${sc_sweep_c} ${CMAKE_CURRENT_LIST_DIR}/sweep.c
               ${PROJECT_SOURCE_DIR}/tests/support/nothing_ran.c)
target_link_libraries(test_api_sweep PRIVATE ${sc_sweep_libs}
                      PkgConfig::CRITERION ${SC_ALLOCATOR})
target_include_directories(test_api_sweep PRIVATE ${PROJECT_SOURCE_DIR})
# A case may create a file named by its string argument: in a folder of
# its own.
set(sc_sweep_dir ${CMAKE_CURRENT_BINARY_DIR}/api_sweep)
file(MAKE_DIRECTORY ${sc_sweep_dir})
foreach(h IN LISTS sc_sweep_headers)
  string(REGEX REPLACE "[^A-Za-z0-9_]" "_" name ${h})
  add_test(NAME api_sweep.${name}
           COMMAND test_api_sweep --filter api_sweep/${name} --ascii -j1
           WORKING_DIRECTORY ${sc_sweep_dir})
  set_tests_properties(api_sweep.${name} PROPERTIES
    LABELS "api" FAIL_REGULAR_EXPRESSION "Tested: 0 " TIMEOUT 300)
endforeach()
