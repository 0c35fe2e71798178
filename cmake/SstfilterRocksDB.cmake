# Which RocksDB releases the RocksDB adapter supports, and what they need.
# The layouts themselves are adapters/rocksdb/rocksdb_abi.h's; this file
# only answers, at configure time and naming the version, whether a release
# is one that header knows (it refuses the others too, as a backstop).

# The first release supported, and the first one not known yet.
set(SSTFILTER_ROCKSDB_MIN_VERSION 7.0.0)
set(SSTFILTER_ROCKSDB_UNKNOWN_VERSION 12.0.0)
# From 10.7 RocksDB's public headers require C++20.
set(SSTFILTER_ROCKSDB_CXX20_VERSION 10.7.0)

# sstfilter_rocksdb_header_version(<include dir> <out var>): the
# MAJOR.MINOR.PATCH that <rocksdb/version.h> under <include dir> declares,
# or "" if there is no such header.
function(sstfilter_rocksdb_header_version include_dir out)
  set(header ${include_dir}/rocksdb/version.h)
  set(version "")
  if(EXISTS ${header})
    file(STRINGS ${header} lines REGEX "^#define ROCKSDB_(MAJOR|MINOR|PATCH) ")
    foreach(part MAJOR MINOR PATCH)
      string(REGEX MATCH "ROCKSDB_${part} ([0-9]+)" _ "${lines}")
      list(APPEND version ${CMAKE_MATCH_1})
    endforeach()
    list(JOIN version "." version)
  endif()
  set(${out} "${version}" PARENT_SCOPE)
endfunction()

# sstfilter_rocksdb_support(<version> <supported var> <cxx std var>
#                           <message var>): whether the adapter supports
# RocksDB <version>, the C++ standard its headers need (17 or 20), and, if
# unsupported, a message naming the version and the supported range.
function(sstfilter_rocksdb_support version supported_out std_out message_out)
  set(supported OFF)
  set(std 17)
  set(message "")
  if(NOT version MATCHES "^[0-9]+\\.[0-9]+\\.[0-9]+$")
    set(message "cannot tell the RocksDB version (\"${version}\")")
  elseif(version VERSION_LESS SSTFILTER_ROCKSDB_MIN_VERSION)
    set(message "RocksDB ${version} is older than ${SSTFILTER_ROCKSDB_MIN_VERSION}, the first release the adapter supports")
  elseif(version VERSION_GREATER_EQUAL SSTFILTER_ROCKSDB_UNKNOWN_VERSION)
    set(message "RocksDB ${version} is newer than any release the adapter knows (7.0 to 11.x); its filter classes must be checked first (docs/ROCKSDB.md)")
  else()
    set(supported ON)
    if(version VERSION_GREATER_EQUAL SSTFILTER_ROCKSDB_CXX20_VERSION)
      set(std 20)
    endif()
  endif()
  set(${supported_out} ${supported} PARENT_SCOPE)
  set(${std_out} ${std} PARENT_SCOPE)
  set(${message_out} "${message}" PARENT_SCOPE)
endfunction()
