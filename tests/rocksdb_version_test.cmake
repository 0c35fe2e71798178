# The RocksDB releases the adapter accepts at configure time
# (cmake/SstfilterRocksDB.cmake), run with cmake -P by ctest.
include(${SOURCE_DIR}/cmake/SstfilterRocksDB.cmake)

function(expect version want_supported want_std want_text)
  sstfilter_rocksdb_support("${version}" supported std text)
  if(NOT supported STREQUAL want_supported OR NOT std STREQUAL want_std)
    message(FATAL_ERROR "${version}: got ${supported}/${std}, want ${want_supported}/${want_std}")
  endif()
  if(NOT text MATCHES "${want_text}")
    message(FATAL_ERROR "${version}: message \"${text}\" lacks \"${want_text}\"")
  endif()
endfunction()

expect(6.29.5 OFF 17 "RocksDB 6\\.29\\.5 is older than 7\\.0\\.0")
expect(7.0.0 ON 17 "^$")
expect(7.8.3 ON 17 "^$")
expect(9.10.0 ON 17 "^$")
expect(10.6.2 ON 17 "^$")
expect(10.7.0 ON 20 "^$")
expect(11.8.1 ON 20 "^$")
expect(12.0.0 OFF 17 "RocksDB 12\\.0\\.0 is newer than any release")
expect(9.10 OFF 17 "cannot tell the RocksDB version")

# The header parser, on a made-up header.
set(dir ${WORK_DIR}/rocksdb_version_test/include/rocksdb)
file(MAKE_DIRECTORY ${dir})
file(WRITE ${dir}/version.h
  "#define ROCKSDB_MAJOR 9\n#define ROCKSDB_MINOR 10\n#define ROCKSDB_PATCH 0\n")
sstfilter_rocksdb_header_version(${WORK_DIR}/rocksdb_version_test/include v)
if(NOT v STREQUAL "9.10.0")
  message(FATAL_ERROR "header version: got \"${v}\", want 9.10.0")
endif()
