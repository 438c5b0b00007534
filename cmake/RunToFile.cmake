# Run at build time (cmake -P): runs CMD (a ;-list) and writes its standard output to OUT,
# gzip -9n'ed when GZIP is true (man pages). Fails, leaving no OUT, if CMD fails.
#   -DCMD=prog;arg;... -DOUT=file [-DGZIP=ON]
execute_process(COMMAND ${CMD} OUTPUT_FILE "${OUT}.tmp" RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  file(REMOVE "${OUT}.tmp")
  message(FATAL_ERROR "${CMD} failed: ${status}")
endif()
if(GZIP)
  execute_process(COMMAND gzip -9n -c "${OUT}.tmp" OUTPUT_FILE "${OUT}" RESULT_VARIABLE status)
  file(REMOVE "${OUT}.tmp")
  if(NOT status EQUAL 0)
    file(REMOVE "${OUT}")
    message(FATAL_ERROR "gzip ${OUT} failed: ${status}")
  endif()
else()
  file(RENAME "${OUT}.tmp" "${OUT}")
endif()
