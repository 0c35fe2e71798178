// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// PRIVATE, never installed. The FilterBitsBuilder of every sstfilter
// RocksDB policy (rocksdb_policy.cc), declared here so that tests can reach
// the methods a RocksDB generation does not call (AddKeyAndAlt before 9.6,
// CalculateSpace and EstimatedFpRate before 10.9): every generation builds
// and tests all of them, and each overrides RocksDB's where it exists.

#ifndef SSTFILTER_ADAPTERS_ROCKSDB_ROCKSDB_BUILDER_H_
#define SSTFILTER_ADAPTERS_ROCKSDB_ROCKSDB_BUILDER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "adapters/rocksdb/rocksdb_abi.h"
#include "sstfilter/filter.h"

#if SSTFILTER_ROCKSDB_GENERATION >= 2
#define SSTFILTER_OVERRIDE_SINCE_G2 override
#else
#define SSTFILTER_OVERRIDE_SINCE_G2
#endif
#if SSTFILTER_ROCKSDB_GENERATION >= 3
#define SSTFILTER_OVERRIDE_SINCE_G3 override
#else
#define SSTFILTER_OVERRIDE_SINCE_G3
#endif

namespace sstfilter {
namespace internal {

// Builds one filter per Finish: one per SST (full filters) or one per
// partition (partitioned filters, where RocksDB reuses the builder).
// Grammar: ((AddKey | AddKeyAndAlt)* Finish MaybePostVerify?)*
class RocksDBBitsBuilder final : public rocksdb::FilterBitsBuilder {
 public:
  // `verify`: keep the hashes of each filter so MaybePostVerify can check
  // every one of them against the bytes (detect_filter_construct_corruption),
  // reading keyed filters with `secret` (the core's).
  RocksDBBitsBuilder(std::unique_ptr<FilterBuilder> core, bool verify,
                     std::shared_ptr<const FilterSecret> secret = nullptr);

  void AddKey(const rocksdb::Slice& key) override;

  // Adds `key` and `alt`; both match afterwards. A hash equal to the
  // previous call's key or alt (since the last Finish) is not added again:
  // (k1, p) (k2, p) (k2, k2) counts k1, p and k2 once each.
  void AddKeyAndAlt(const rocksdb::Slice& key,
                    const rocksdb::Slice& alt) SSTFILTER_OVERRIDE_SINCE_G2;

  // The core's count: 0 if and only if nothing was added.
  size_t EstimateEntriesAdded() override;

  // Zero entries give the 8-byte "never matches" filter, never an empty
  // slice (which RocksDB would read as "no filter").
  rocksdb::Slice Finish(std::unique_ptr<const char[]>* buf) override;
  // RocksDB's Finish(buf, status) calls the one above: not hidden.
  using rocksdb::FilterBitsBuilder::Finish;

  rocksdb::Status MaybePostVerify(const rocksdb::Slice& filter) override;

  size_t ApproximateNumEntries(size_t bytes) override;

  // Exactly the bytes Finish writes for `num_entries` distinct entries
  // (FilterBuilder::FilterSize): no allocation, no building.
  size_t CalculateSpace(size_t num_entries) SSTFILTER_OVERRIDE_SINCE_G3;

  // The expected FPR of that filter (ParamsForSpec); 0 for no entries.
  double EstimatedFpRate(size_t num_entries,
                         size_t bytes) SSTFILTER_OVERRIDE_SINCE_G3;

 private:
  void Add(uint64_t hash);

  const std::unique_ptr<FilterBuilder> core_;
  const bool verify_;
  const std::shared_ptr<const FilterSecret> secret_;
  // The previous call's key and alt hashes, since the last Finish.
  uint64_t last_key_ = 0;
  uint64_t last_alt_ = 0;
  bool has_last_key_ = false;
  bool has_last_alt_ = false;
  std::vector<uint64_t> pending_;   // hashes since the last Finish
  std::vector<uint64_t> finished_;  // hashes of the filter Finish returned
};

}  // namespace internal
}  // namespace sstfilter

#endif  // SSTFILTER_ADAPTERS_ROCKSDB_ROCKSDB_BUILDER_H_
