// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// PRIVATE, never installed. Our own declarations of RocksDB's
// FilterBitsBuilder and FilterBitsReader, for every RocksDB from 7.0 to 11.x.
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
//
// The layouts, read from filter_policy_internal.h at the tags of
// facebook/rocksdb and checked slot by slot against those headers by
// adapters/rocksdb/abi_check (docs/ROCKSDB.md records the runs):
//
//   generation  releases        FilterBitsBuilder virtuals after ~dtor
//   G0          7.0.0 - 7.0.2   AddKey, EstimateEntriesAdded, Finish(buf),
//                               Finish(buf, status), MaybePostVerify,
//                               ApproximateNumEntries
//   G1          7.0.3 - 9.5.x   the same (FilterPolicy gained
//                               CompatibilityName in 7.0.3)
//   G2          9.6 - 10.8.x    AddKeyAndAlt inserted after AddKey
//   G3          10.9 - 11.x     G2 + CalculateSpace, EstimatedFpRate
//
// FilterBitsReader is the same in all four: ~dtor, MayMatch(const Slice&),
// MayMatch(int, Slice**, bool*). Versions before 7.0 declared both classes
// in the public header, and releases after 11.x are unknown: this file
// refuses both (the CMake of the adapter says so first, naming the version).

#ifndef SSTFILTER_ADAPTERS_ROCKSDB_ROCKSDB_ABI_H_
#define SSTFILTER_ADAPTERS_ROCKSDB_ROCKSDB_ABI_H_

#include <rocksdb/filter_policy.h>
#include <rocksdb/slice.h>
#include <rocksdb/status.h>
#include <rocksdb/version.h>

#include <cstddef>
#include <memory>

#if !defined(ROCKSDB_MAJOR) || !defined(ROCKSDB_MINOR) || \
    !defined(ROCKSDB_PATCH)
#error "sstfilter: <rocksdb/version.h> lacks ROCKSDB_MAJOR/MINOR/PATCH"
#endif

#define SSTFILTER_ROCKSDB_VERSION \
  (ROCKSDB_MAJOR * 10000 + ROCKSDB_MINOR * 100 + ROCKSDB_PATCH)

// SSTFILTER_ROCKSDB_GENERATION: 0 to 3, per the table above.
#if SSTFILTER_ROCKSDB_VERSION < 70000
#error \
    "sstfilter: RocksDB < 7.0 is not supported (FilterBitsBuilder was public and laid out differently)"
#elif SSTFILTER_ROCKSDB_VERSION < 70003
#define SSTFILTER_ROCKSDB_GENERATION 0
#elif SSTFILTER_ROCKSDB_VERSION < 90600
#define SSTFILTER_ROCKSDB_GENERATION 1
#elif SSTFILTER_ROCKSDB_VERSION < 100900
#define SSTFILTER_ROCKSDB_GENERATION 2
#elif SSTFILTER_ROCKSDB_VERSION < 120000
#define SSTFILTER_ROCKSDB_GENERATION 3
#else
#error \
    "sstfilter: RocksDB >= 12.0 is not known: check filter_policy_internal.h and add its layout to adapters/rocksdb/rocksdb_abi.h"
#endif

namespace ROCKSDB_NAMESPACE {

// Keep every virtual in this exact order (the table above).
class FilterBitsBuilder {
 public:
  virtual ~FilterBitsBuilder() {}

  // A key or a prefix. Arrives sorted for whole keys only; prefixes
  // interleave, and repeats are common.
  virtual void AddKey(const Slice& key) = 0;

#if SSTFILTER_ROCKSDB_GENERATION >= 2
  // A key and its alternate (its prefix; or a prefix twice, from
  // partitioned filters): both must match afterwards. RocksDB expects
  // repeats of either, back to back, not to count twice.
  virtual void AddKeyAndAlt(const Slice& key, const Slice& alt) = 0;
#endif

  // Distinct entries added so far (an estimate); 0 if and only if none.
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

#if SSTFILTER_ROCKSDB_GENERATION >= 3
  // Bytes of the filter for `num_entries` entries. RocksDB calls it with
  // EstimateEntriesAdded() at every data block: it must be cheap.
  virtual size_t CalculateSpace(size_t num_entries) = 0;

  // Expected false-positive rate of a `bytes`-byte filter that Finish wrote
  // for `num_entries` entries.
  virtual double EstimatedFpRate(size_t num_entries, size_t bytes) = 0;
#endif
};

// The same in every generation. One reader serves one filter block;
// RocksDB calls it from many threads at once, so the methods must be
// thread-safe although not const.
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

#endif  // SSTFILTER_ADAPTERS_ROCKSDB_ROCKSDB_ABI_H_
