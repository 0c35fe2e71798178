// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// libsstfilter_rocksdb_plugin.so: registers every "sstfilter.*" filter
// policy id in RocksDB's default ObjectLibrary when the library is loaded,
// so that programs built without sstfilter -- the stock db_bench, ldb and
// sst_dump -- accept the ids in OPTIONS files:
//
//   LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libsstfilter_rocksdb_plugin.so
//       db_bench --options_file=OPTIONS ...        (one command line)
//
// The library depends on librocksdb.so, so the dynamic loader initializes
// RocksDB before running this initializer.

#include <rocksdb/utilities/object_registry.h>

#include "sstfilter/rocksdb.h"

namespace {

const int kRegistered = sstfilter::RegisterRocksDBFilterPolicies(
    *rocksdb::ObjectLibrary::Default(), "");

}  // namespace

// For programs that dlopen() the plugin and want to see it took effect.
extern "C" __attribute__((visibility("default"))) int
sstfilter_rocksdb_plugin_factories() {
  return kRegistered;
}
