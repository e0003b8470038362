# The signal and exit matrix of the command line (tests/tools/exit_matrix.py),
# included by tests/tools/cli.cmake: one test per command, so that ctest -j
# spreads them. Each sends SIGINT, SIGTERM and SIGHUP once the command has
# started its work, closes its stdout pipe, points each output at /dev/full
# and names one file twice, and checks the exit code, the stream of the
# summary and that every file left is complete (never 0 bytes).
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  foreach(cmd grid nexmark nexmark_threads nexmark_preload nexmark_sink workload
              place stress stress_workload)
    add_test(NAME exit.matrix_${cmd}
             COMMAND ${Python3_EXECUTABLE}
                     ${CMAKE_CURRENT_LIST_DIR}/exit_matrix.py
                     --build ${PROJECT_BINARY_DIR} ${cmd})
    set_tests_properties(exit.matrix_${cmd} PROPERTIES
                         LABELS "units" TIMEOUT 180)
  endforeach()
endif()
