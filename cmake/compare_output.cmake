# Runs a program and compares its stdout with a file, byte for byte (a CTest golden test).
#   cmake -DCMD=<program> [-DARGS=a;b] -DEXPECTED=<file> -P compare_output.cmake
execute_process(COMMAND ${CMD} ${ARGS} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${CMD} ${ARGS} exited with ${rc}\n${err}")
endif()
file(READ ${EXPECTED} want)
if(NOT out STREQUAL want)
  message(FATAL_ERROR "output of ${CMD} ${ARGS} differs from ${EXPECTED}\n--- got:\n${out}--- expected:\n${want}---")
endif()
