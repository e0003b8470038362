# cmake -DEXE=PROGRAM -DEXPECTED=FILE -P expect.cmake: run PROGRAM and fail
# unless it exits 0 and its standard output is exactly FILE. Its standard
# error is shown on failure, never compared (settle.c writes a planted
# failure's details there).
execute_process(COMMAND ${EXE} RESULT_VARIABLE rc
                OUTPUT_VARIABLE got ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message("${got}${err}")
  message(FATAL_ERROR "${EXE} exited with ${rc}")
endif()
file(READ ${EXPECTED} want)
if(NOT got STREQUAL want)
  message("--- got:\n${got}--- expected (${EXPECTED}):\n${want}${err}")
  message(FATAL_ERROR "${EXE}: the output is not ${EXPECTED}")
endif()
