# Run by ctest: install the build tree into a scratch prefix, then build and
# run the consumer project against that prefix only.
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BINARY_DIR}
                        --prefix ${WORK_DIR}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "install failed: ${rc}")
endif()
# A sanitized build installs sanitized archives: link the consumer alike.
set(extra)
if(SANITIZE)
  set(extra -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=${SANITIZE})
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer
                        -B ${WORK_DIR}/build -G ${GENERATOR}
                        -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix ${extra}
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configuring the consumer failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "building the consumer failed: ${rc}")
endif()
execute_process(COMMAND ${WORK_DIR}/build/consumer RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "the consumer failed: ${rc}")
endif()
if(EXISTS ${WORK_DIR}/build/consumer_rocksdb)
  execute_process(COMMAND ${WORK_DIR}/build/consumer_rocksdb RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "the RocksDB consumer failed: ${rc}")
  endif()
endif()
if(EXISTS ${WORK_DIR}/build/consumer_leveldb)
  execute_process(COMMAND ${WORK_DIR}/build/consumer_leveldb RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "the LevelDB consumer failed: ${rc}")
  endif()
endif()
