// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// sstfilter compiled into RocksDB (sstfilter.mk): the sources of the core
// (sstfilter::policy) and of the RocksDB adapter (sstfilter::rocksdb), as
// one translation unit, so that RocksDB's build lists a single file from
// this folder, and the registration function RocksDB's build calls for
// ObjectRegistry::Default(). tests/CMakeLists.txt builds this file as one
// library and checks the list below against those two targets' sources.

// sstfilter::policy
#include "policy/bloom/bloom.cc"
#include "policy/bloom/bloom_reader.cc"
#include "policy/bloom/counting_bloom.cc"
#include "policy/builder.cc"
#include "policy/cost_plan.cc"
#include "policy/cuckoo/cuckoo.cc"
#include "policy/cuckoo/cuckoo_reader.cc"
#include "policy/cuckoo/dynamic_cuckoo.cc"
#include "policy/format.cc"
#include "policy/hash.cc"
#include "policy/kinds.cc"
#include "policy/mutable_common.cc"
#include "policy/params.cc"
#include "policy/range/range.cc"
#include "policy/reader.cc"
#include "policy/ribbon/ribbon.cc"
#include "policy/ribbon/ribbon_banded.cc"
#include "policy/ribbon/ribbon_dense.cc"
#include "policy/ribbon/ribbon_plan.cc"
#include "policy/ribbon/ribbon_reader.cc"
#include "policy/ribbon/ribbon_segmented.cc"
#include "policy/spec.cc"
#include "policy/status.cc"
// sstfilter::rocksdb
#include <rocksdb/utilities/object_registry.h>

#include <string>

#include "adapters/rocksdb/rocksdb_level.cc"
#include "adapters/rocksdb/rocksdb_listener.cc"
#include "adapters/rocksdb/rocksdb_policy.cc"
#include "adapters/rocksdb/rocksdb_range.cc"
#include "sstfilter/rocksdb.h"

// sstfilter_FUNC in sstfilter.mk. RocksDB declares it extern "C" with this
// signature (its RegistrarFunc) and registers it under "sstfilter" in every
// ObjectRegistry it makes: every "sstfilter.*" policy id and the level
// listener. Returns the number of factories added.
extern "C" __attribute__((visibility("default"))) int
sstfilter_register_rocksdb_plugin(ROCKSDB_NAMESPACE::ObjectLibrary& library,
                                  const std::string& arg) {
  return sstfilter::RegisterRocksDBFilterPolicies(library, arg);
}
