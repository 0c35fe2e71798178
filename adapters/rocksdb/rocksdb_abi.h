// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// PRIVATE, never installed. Our own declarations of RocksDB's
// FilterBitsBuilder and FilterBitsReader.
//
// Why this file exists: since RocksDB 7.0 <rocksdb/filter_policy.h> only
// forward-declares these two classes, yet FilterPolicy::GetBuilderWithContext
// and GetFilterBitsReader return them. Their definitions live in the
// internal header table/block_based/filter_policy_internal.h, which Debian's
// librocksdb-dev does not ship. A custom FilterPolicy must subclass them, so
// we declare them here.
//
// What makes this safe: the library calls these objects only through their
// vtables. Under the Itanium C++ ABI (GCC and Clang on Linux) a class's
// vtable holds its virtual functions in declaration order (the destructor
// takes two slots), so a class with the same name, the same virtual
// functions with the same signatures and in the same order as the
// library's is called correctly by it. The classes have no data members.
// A wrong order would call the wrong function at the first flush, so
// tests/rocksdb_db_test.cc would crash; it does not.
//
// Facts, read from the RocksDB sources (facebook/rocksdb, tags v7.0.1
// through v9.6.1, table/block_based/filter_policy_internal.h):
//   * 7.0 to 9.5: FilterBitsBuilder declares, in this order: the virtual
//     destructor, AddKey(const Slice&), EstimateEntriesAdded(),
//     Finish(std::unique_ptr<const char[]>*),
//     Finish(std::unique_ptr<const char[]>*, Status*) (forwards to the
//     first by default), MaybePostVerify(const Slice&) (OK by default),
//     ApproximateNumEntries(size_t). FilterBitsReader declares: the virtual
//     destructor, MayMatch(const Slice&), MayMatch(int, Slice**, bool*)
//     (loops over the first by default).
//   * 9.6 inserted AddKeyAndAlt(const Slice&, const Slice&) after AddKey
//     and moved CalculateSpace/EstimatedFpRate into FilterBitsBuilder: a
//     different layout, which this file does not declare.
// Versions before 7.0 declared both classes in the public header, so this
// file must not be used there either.

#ifndef SSTFILTER_ADAPTERS_ROCKSDB_ROCKSDB_ABI_H_
#define SSTFILTER_ADAPTERS_ROCKSDB_ROCKSDB_ABI_H_

#include <cstddef>
#include <memory>

#include <rocksdb/filter_policy.h>
#include <rocksdb/slice.h>
#include <rocksdb/status.h>
#include <rocksdb/version.h>

#if !defined(ROCKSDB_MAJOR) || !defined(ROCKSDB_MINOR)
#error "sstfilter: <rocksdb/version.h> defines no ROCKSDB_MAJOR/ROCKSDB_MINOR"
#endif

#define SSTFILTER_ROCKSDB_VERSION (ROCKSDB_MAJOR * 100 + ROCKSDB_MINOR)

#if SSTFILTER_ROCKSDB_VERSION < 700
#error "sstfilter: RocksDB < 7.0 is not supported (FilterBitsBuilder was public and differently laid out)"
#elif SSTFILTER_ROCKSDB_VERSION >= 906
#error "sstfilter: RocksDB >= 9.6 is not supported yet: FilterBitsBuilder gained AddKeyAndAlt; add its layout to adapters/rocksdb/rocksdb_abi.h"
#else

namespace ROCKSDB_NAMESPACE {

// RocksDB 7.0 - 9.5 layout. Keep every virtual in this exact order.
class FilterBitsBuilder {
 public:
  virtual ~FilterBitsBuilder() {}

  // A key or a prefix. Arrives sorted for whole keys only; prefixes
  // interleave, and repeats are common.
  virtual void AddKey(const Slice& key) = 0;

  // Distinct entries added so far (an estimate; 0 means unknown).
  virtual size_t EstimateEntriesAdded() = 0;

  // Builds the filter of the keys added since the last Finish, moves the
  // buffer holding it into *buf (RocksDB frees it with delete[]) and
  // returns a slice over it. The builder is then reused (partitions).
  virtual Slice Finish(std::unique_ptr<const char[]>* buf) = 0;

  // As above, reporting a construction failure in *status if non-null.
  virtual Slice Finish(std::unique_ptr<const char[]>* buf, Status* status) {
    (void)status;
    return Finish(buf);
  }

  // Called on every filter Finish returned, if Finish reported no error.
  virtual Status MaybePostVerify(const Slice& filter) {
    (void)filter;
    return Status::OK();
  }

  // How many entries a filter of at most `bytes` holds (sizes partitions).
  virtual size_t ApproximateNumEntries(size_t bytes) = 0;
};

// RocksDB 7.0 - 9.5 layout. Keep every virtual in this exact order.
// One reader serves one filter block; RocksDB calls it from many threads at
// once, so the methods must be thread-safe although not const.
class FilterBitsReader {
 public:
  virtual ~FilterBitsReader() {}

  virtual bool MayMatch(const Slice& entry) = 0;

  // may_match[i] = MayMatch(*keys[i]); MultiGet passes up to 32 keys.
  virtual void MayMatch(int num_keys, Slice** keys, bool* may_match) {
    for (int i = 0; i < num_keys; ++i) may_match[i] = MayMatch(*keys[i]);
  }
};

}  // namespace ROCKSDB_NAMESPACE

#endif  // version check

#endif  // SSTFILTER_ADAPTERS_ROCKSDB_ROCKSDB_ABI_H_
