// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// PRIVATE, never installed. The range collector's registration
// (rocksdb_range.cc), which RegisterRocksDBFilterPolicies (rocksdb_policy.cc)
// calls.

#ifndef SSTFILTER_ADAPTERS_ROCKSDB_ROCKSDB_RANGE_H_
#define SSTFILTER_ADAPTERS_ROCKSDB_ROCKSDB_RANGE_H_

#include <rocksdb/utilities/object_registry.h>

namespace sstfilter {
namespace internal {

// Adds the factory of "sstfilter.range_collector" to `library`.
void RegisterRocksDBRangeCollector(rocksdb::ObjectLibrary& library);

}  // namespace internal
}  // namespace sstfilter

#endif  // SSTFILTER_ADAPTERS_ROCKSDB_ROCKSDB_RANGE_H_
