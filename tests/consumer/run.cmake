# Run by ctest: install the build tree into a scratch prefix, then build and
# run the consumer project against that prefix only.
#
#   -DFROM_DEB=ON  install by making the Debian package (cpack -G DEB) and
#                  unpacking it (dpkg-deb -x) instead, check its contents,
#                  and also build the consumers with pkg-config alone.

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
  if(rc)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
if(FROM_DEB)
  run("cpack -G DEB" ${CMAKE_CPACK_COMMAND} -G DEB
      --config ${BINARY_DIR}/CPackConfig.cmake -B ${WORK_DIR}/packages)
  file(GLOB debs ${WORK_DIR}/packages/*.deb)
  list(LENGTH debs n)
  if(NOT n EQUAL 1)
    message(FATAL_ERROR "expected one .deb, found: ${debs}")
  endif()
  run("dpkg-deb -x" dpkg-deb -x ${debs} ${WORK_DIR}/root)
  execute_process(COMMAND dpkg-deb -f ${debs} Package Depends
                  OUTPUT_VARIABLE control)
  message(STATUS "${debs}:\n${control}")
  set(prefix ${WORK_DIR}/root${INSTALL_PREFIX})
  # What the package must hold, wherever the adapters were built.
  foreach(f include/sstfilter/filter.h include/sstfilter/c.h
            ${LIBDIR}/libsstfilter_policy.a ${LIBDIR}/libsstfilter_c.a
            ${LIBDIR}/cmake/sstfilter/sstfilterConfig.cmake
            ${LIBDIR}/pkgconfig/sstfilter.pc bin/sstfilter)
    if(NOT EXISTS ${prefix}/${f})
      message(FATAL_ERROR "the package lacks ${f}")
    endif()
  endforeach()
  if(HAS_ROCKSDB)
    foreach(f include/sstfilter/rocksdb.h ${LIBDIR}/libsstfilter_rocksdb.a
              ${LIBDIR}/libsstfilter_rocksdb_plugin.so
              ${LIBDIR}/pkgconfig/sstfilter-rocksdb.pc)
      if(NOT EXISTS ${prefix}/${f})
        message(FATAL_ERROR "the package lacks ${f}")
      endif()
    endforeach()
    if(NOT control MATCHES "librocksdb-dev \\(>= [0-9]+\\.[0-9]+\\)")
      message(FATAL_ERROR "the package does not depend on librocksdb-dev")
    endif()
  endif()
  if(HAS_LEVELDB AND NOT control MATCHES "libleveldb-dev")
    message(FATAL_ERROR "the package does not depend on libleveldb-dev")
  endif()
  run("the packaged sstfilter command" ${prefix}/bin/sstfilter params --keys=1000
    --fpr=0.01)
else()
  set(prefix ${WORK_DIR}/prefix)
  run("install" ${CMAKE_COMMAND} --install ${BINARY_DIR} --prefix ${prefix})
endif()

# A sanitized build installs sanitized archives: link the consumer alike.
set(extra)
if(SANITIZE)
  set(extra -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=${SANITIZE})
endif()
run("configuring the consumer" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer
    -B ${WORK_DIR}/build -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${prefix} ${extra})
run("building the consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
foreach(program consumer consumer_rocksdb consumer_leveldb c_consumer)
  if(EXISTS ${WORK_DIR}/build/${program})
    run("${program}" ${WORK_DIR}/build/${program})
  elseif(program STREQUAL "consumer" OR program STREQUAL "c_consumer")
    message(FATAL_ERROR "${program} was not built")
  endif()
endforeach()

if(NOT FROM_DEB)
  return()
endif()

# A Makefile-based engine: the compiler and pkg-config only.
set(ENV{PKG_CONFIG_PATH} ${prefix}/${LIBDIR}/pkgconfig)
function(pkg_build name source pc compiler std)
  execute_process(COMMAND pkg-config --cflags --libs ${pc}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE flags ERROR_VARIABLE err
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(rc)
    message(FATAL_ERROR "pkg-config ${pc} failed: ${err}")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  set(out ${WORK_DIR}/pkg-config/${name})
  file(MAKE_DIRECTORY ${WORK_DIR}/pkg-config)
  run("${compiler} ${source} with pkg-config ${pc}" ${compiler} ${std}
      ${SOURCE_DIR}/tests/consumer/${source} -o ${out} ${flags})
  run("${name} (pkg-config)" ${out})
endfunction()
pkg_build(consumer main.cc sstfilter ${CXX} -std=c++17)
pkg_build(c_consumer c_main.c sstfilter ${CC} -std=c11)
if(HAS_ROCKSDB)
  pkg_build(consumer_rocksdb rocksdb_main.cc sstfilter-rocksdb ${CXX}
            -std=c++${ROCKSDB_CXX})
endif()
if(HAS_LEVELDB)
  pkg_build(consumer_leveldb leveldb_main.cc sstfilter-leveldb ${CXX} -std=c++17)
endif()
