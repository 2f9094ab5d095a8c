# ctest helper: runs PROGRAM with ARGS (comma-separated) and passes only when it exits non-zero
# AND its output matches the regular expression EXPECT (a crash or a vague message both fail).
string(REPLACE "," ";" arguments "${ARGS}")
execute_process(COMMAND "${PROGRAM}" ${arguments}
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("exit status: ${status}\n${out}${err}")
if(status EQUAL 0)
  message(FATAL_ERROR "expected a failure, but the command succeeded")
endif()
if(NOT status MATCHES "^[0-9]+$")
  message(FATAL_ERROR "the command did not exit normally: ${status}")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "output does not match '${EXPECT}'")
endif()
