// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// PRIVATE, never installed. The one home of the changes in RocksDB's
// public API, from 7.0 to 11.x and its main branch, that this library's
// code meets outside the filter classes (rocksdb_abi.h has those):
//
//   ReadOptions::table_filter  a std::function through 11.x; on RocksDB's
//                              main branch a pointer to one (SetTableFilter)
//   DB::Open, OpenForReadOnly  return the database through a DB** until
//                              10.x, a std::unique_ptr<DB>* from 11.0
//                              (OpenInto)

#ifndef SSTFILTER_ADAPTERS_ROCKSDB_ROCKSDB_COMPAT_H_
#define SSTFILTER_ADAPTERS_ROCKSDB_ROCKSDB_COMPAT_H_

#include <rocksdb/db.h>
#include <rocksdb/version.h>

#include <memory>
#include <type_traits>

namespace sstfilter {

// Points *slot at *filter (pointer form) or copies it (std::function
// form). With the pointer form the caller keeps *filter alive for as long
// as the ReadOptions is used.
template <typename TableFilter, typename F>
void SetTableFilter(TableFilter* slot, const F* filter) {
  if constexpr (std::is_pointer_v<TableFilter>) {
    *slot = filter;
  } else {
    *slot = *filter;
  }
}

// Runs `open`, a call of one of DB's Open functions given the out
// parameter of this release, and leaves the database in *db:
//   OpenInto(&db, [&](auto* out) { return rocksdb::DB::Open(o, path, out); });
template <typename Open>
rocksdb::Status OpenInto(std::unique_ptr<rocksdb::DB>* db, Open&& open) {
#if ROCKSDB_MAJOR >= 11
  db->reset();
  return open(db);
#else
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = open(&raw);
  db->reset(raw);
  return s;
#endif
}

}  // namespace sstfilter

#endif  // SSTFILTER_ADAPTERS_ROCKSDB_ROCKSDB_COMPAT_H_
