// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// PRIVATE, never installed. The one place that knows the type of
// rocksdb::ReadOptions::table_filter: a std::function through RocksDB
// 11.x; on RocksDB's main branch a pointer to one. SetTableFilter works
// with both; with the pointer form the caller keeps *filter alive for as
// long as the ReadOptions is used.

#ifndef SSTFILTER_ADAPTERS_ROCKSDB_ROCKSDB_TABLE_FILTER_H_
#define SSTFILTER_ADAPTERS_ROCKSDB_ROCKSDB_TABLE_FILTER_H_

#include <type_traits>

namespace sstfilter {

template <typename TableFilter, typename F>
void SetTableFilter(TableFilter* slot, const F* filter) {
  if constexpr (std::is_pointer_v<TableFilter>) {
    *slot = filter;
  } else {
    *slot = *filter;
  }
}

}  // namespace sstfilter

#endif  // SSTFILTER_ADAPTERS_ROCKSDB_ROCKSDB_TABLE_FILTER_H_
