// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.

#include "harness/rocksdb_counting.h"

#include <chrono>
#include <utility>

#include "adapters/rocksdb/rocksdb_abi.h"
#include "adapters/rocksdb/rocksdb_forwarding.h"
#include "harness/io_counters.h"

namespace sstfilter {
namespace harness {
namespace {

using Clock = std::chrono::steady_clock;

class CountingFile : public rocksdb::FSRandomAccessFileOwnerWrapper {
 public:
  using FSRandomAccessFileOwnerWrapper::FSRandomAccessFileOwnerWrapper;

  rocksdb::IOStatus Read(uint64_t offset, size_t n,
                         const rocksdb::IOOptions& options,
                         rocksdb::Slice* result, char* scratch,
                         rocksdb::IODebugContext* dbg) const override {
    rocksdb::IOStatus s =
        target()->Read(offset, n, options, result, scratch, dbg);
    CountRead(result->size());
    return s;
  }

  rocksdb::IOStatus MultiRead(rocksdb::FSReadRequest* reqs, size_t num_reqs,
                              const rocksdb::IOOptions& options,
                              rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s = target()->MultiRead(reqs, num_reqs, options, dbg);
    for (size_t i = 0; i < num_reqs; i++) CountRead(reqs[i].result.size());
    return s;
  }
};

// The slot of `calls` for a builder made with `context`.
PolicyCalls::Slot* SlotFor(const rocksdb::FilterBuildingContext& context,
                           PolicyCalls* calls) {
  using Reason = rocksdb::TableFileCreationReason;
  const int reason = context.reason == Reason::kFlush ? PolicyCalls::kFlush
                     : context.reason == Reason::kCompaction
                         ? PolicyCalls::kCompaction
                         : PolicyCalls::kOther;
  const int level = context.level_at_creation;
  return &calls->slots[reason][level >= 0 && level <= PolicyCalls::kMaxLevel
                                   ? level
                                   : PolicyCalls::kMaxLevel + 1];
}

// Forwards every virtual of the RocksDB generation built against; counts
// keys and times Finish, in total and in the slot of the builder's context.
class TimedBuilder final : public internal::ForwardingBitsBuilder {
 public:
  TimedBuilder(rocksdb::FilterBitsBuilder* inner, PolicyCalls* calls,
               PolicyCalls::Slot* slot)
      : ForwardingBitsBuilder(inner), calls_(calls), slot_(slot) {}

  void AddKey(const rocksdb::Slice& key) override {
    calls_->keys_added.fetch_add(1, std::memory_order_relaxed);
    keys_++;
    inner()->AddKey(key);
  }
  rocksdb::Slice Finish(std::unique_ptr<const char[]>* buf) override {
    const Clock::time_point t = Clock::now();
    rocksdb::Slice s = inner()->Finish(buf);
    Record(t);
    return s;
  }
  rocksdb::Slice Finish(std::unique_ptr<const char[]>* buf,
                        rocksdb::Status* status) override {
    const Clock::time_point t = Clock::now();
    rocksdb::Slice s = inner()->Finish(buf, status);
    Record(t);
    return s;
  }

 private:
  void Record(Clock::time_point start) {
    const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(
        Clock::now() - start);
    const auto n = static_cast<uint64_t>(nanos.count());
    calls_->build_nanos.fetch_add(n, std::memory_order_relaxed);
    calls_->finishes.fetch_add(1, std::memory_order_relaxed);
    slot_->nanos.fetch_add(n, std::memory_order_relaxed);
    slot_->keys.fetch_add(keys_, std::memory_order_relaxed);
    slot_->filters.fetch_add(1, std::memory_order_relaxed);
    keys_ = 0;
  }

  PolicyCalls* const calls_;
  PolicyCalls::Slot* const slot_;
  uint64_t keys_ = 0;  // added since the last Finish
};

class CountingReader final : public rocksdb::FilterBitsReader {
 public:
  explicit CountingReader(rocksdb::FilterBitsReader* inner) : inner_(inner) {}

  bool MayMatch(const rocksdb::Slice& entry) override {
    const bool r = inner_->MayMatch(entry);
    CountProbes(1, r ? 1 : 0);
    return r;
  }
  void MayMatch(int num_keys, rocksdb::Slice** keys, bool* may_match) override {
    inner_->MayMatch(num_keys, keys, may_match);
    uint64_t positives = 0;
    for (int i = 0; i < num_keys; i++) positives += may_match[i] ? 1 : 0;
    CountProbes(static_cast<uint64_t>(num_keys), positives, /*batched=*/true);
  }

 private:
  const std::unique_ptr<rocksdb::FilterBitsReader> inner_;
};

}  // namespace

rocksdb::IOStatus CountingFileSystem::NewRandomAccessFile(
    const std::string& name, const rocksdb::FileOptions& options,
    std::unique_ptr<rocksdb::FSRandomAccessFile>* result,
    rocksdb::IODebugContext* dbg) {
  rocksdb::IOStatus s =
      target()->NewRandomAccessFile(name, options, result, dbg);
  const std::string suffix = ".sst";
  if (s.ok() && name.size() >= suffix.size() &&
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
    result->reset(new CountingFile(std::move(*result)));
  }
  return s;
}

rocksdb::FilterBitsBuilder* InstrumentedPolicy::GetBuilderWithContext(
    const rocksdb::FilterBuildingContext& context) const {
  rocksdb::FilterBitsBuilder* b = inner_->GetBuilderWithContext(context);
  if (b == nullptr) return nullptr;
  calls_->builders.fetch_add(1, std::memory_order_relaxed);
  // RocksDB takes ownership.
  return new TimedBuilder(b, calls_, SlotFor(context, calls_));
}

rocksdb::FilterBitsReader* InstrumentedPolicy::GetFilterBitsReader(
    const rocksdb::Slice& contents) const {
  rocksdb::FilterBitsReader* r = inner_->GetFilterBitsReader(contents);
  if (r == nullptr) return nullptr;
  calls_->readers.fetch_add(1, std::memory_order_relaxed);
  return new CountingReader(r);  // RocksDB takes ownership
}

}  // namespace harness
}  // namespace sstfilter
