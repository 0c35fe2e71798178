// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// PRIVATE, never installed. A FilterBitsBuilder that forwards every virtual
// of the RocksDB generation built against (rocksdb_abi.h) to an inner
// builder, for wrappers that observe a builder (tests, the comparison
// tool): they override what they watch and inherit the rest, whatever the
// generation.

#ifndef SSTFILTER_ADAPTERS_ROCKSDB_ROCKSDB_FORWARDING_H_
#define SSTFILTER_ADAPTERS_ROCKSDB_ROCKSDB_FORWARDING_H_

#include <cstddef>
#include <memory>

#include "adapters/rocksdb/rocksdb_abi.h"

namespace sstfilter {
namespace internal {

class ForwardingBitsBuilder : public rocksdb::FilterBitsBuilder {
 public:
  // Takes ownership of `inner` (RocksDB's raw pointer). REQUIRES: non-null.
  explicit ForwardingBitsBuilder(rocksdb::FilterBitsBuilder* inner)
      : inner_(inner) {}

  void AddKey(const rocksdb::Slice& key) override { inner_->AddKey(key); }
#if SSTFILTER_ROCKSDB_GENERATION >= 2
  void AddKeyAndAlt(const rocksdb::Slice& key,
                    const rocksdb::Slice& alt) override {
    inner_->AddKeyAndAlt(key, alt);
  }
#endif
  size_t EstimateEntriesAdded() override {
    return inner_->EstimateEntriesAdded();
  }
  rocksdb::Slice Finish(std::unique_ptr<const char[]>* buf) override {
    return inner_->Finish(buf);
  }
  rocksdb::Slice Finish(std::unique_ptr<const char[]>* buf,
                        rocksdb::Status* status) override {
    return inner_->Finish(buf, status);
  }
  rocksdb::Status MaybePostVerify(const rocksdb::Slice& filter) override {
    return inner_->MaybePostVerify(filter);
  }
  size_t ApproximateNumEntries(size_t bytes) override {
    return inner_->ApproximateNumEntries(bytes);
  }
#if SSTFILTER_ROCKSDB_GENERATION >= 3
  size_t CalculateSpace(size_t num_entries) override {
    return inner_->CalculateSpace(num_entries);
  }
  double EstimatedFpRate(size_t num_entries, size_t bytes) override {
    return inner_->EstimatedFpRate(num_entries, bytes);
  }
#endif

 protected:
  rocksdb::FilterBitsBuilder* inner() { return inner_.get(); }

 private:
  const std::unique_ptr<rocksdb::FilterBitsBuilder> inner_;
};

}  // namespace internal
}  // namespace sstfilter

#endif  // SSTFILTER_ADAPTERS_ROCKSDB_ROCKSDB_FORWARDING_H_
