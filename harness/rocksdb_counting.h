// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// RocksDB wrappers that count what a filter does, for tests, benchmarks and
// the compare tool.
//
// CountingFileSystem: every Read of a table file (*.sst), and every request
// of a MultiRead, calls CountRead (harness/io_counters.h).
//
// InstrumentedPolicy: delegates everything to an inner policy (so files
// carry the inner policy's names and format) and counts what RocksDB asks
// of it: builders made, keys added, filters finished and the time spent in
// Finish (where filters are built; AddKey only hashes), also split by the
// reason and level of each builder's FilterBuildingContext, readers made (in
// PolicyCalls, shared by all threads), and every reader answer (through
// CountProbes, on the thread that asked). It declares RocksDB's
// FilterBitsBuilder/FilterBitsReader through the adapter's ABI header.

#ifndef SSTFILTER_HARNESS_ROCKSDB_COUNTING_H_
#define SSTFILTER_HARNESS_ROCKSDB_COUNTING_H_

#include <rocksdb/file_system.h>
#include <rocksdb/filter_policy.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace sstfilter {
namespace harness {

class CountingFileSystem : public rocksdb::FileSystemWrapper {
 public:
  explicit CountingFileSystem(const std::shared_ptr<rocksdb::FileSystem>& base)
      : FileSystemWrapper(base) {}

  const char* Name() const override { return "SstfilterCountingFileSystem"; }

  rocksdb::IOStatus NewRandomAccessFile(
      const std::string& name, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSRandomAccessFile>* result,
      rocksdb::IODebugContext* dbg) override;
};

// What RocksDB asked of an InstrumentedPolicy, from every thread.
struct PolicyCalls {
  std::atomic<uint64_t> builders{0};
  std::atomic<uint64_t> keys_added{0};
  std::atomic<uint64_t> finishes{0};     // filters built
  std::atomic<uint64_t> build_nanos{0};  // inside the builders' Finish
  std::atomic<uint64_t> readers{0};

  // The same filters split by what made their table, as the builder's
  // FilterBuildingContext says: its reason and level_at_creation.
  enum Reason { kFlush, kCompaction, kOther, kNumReasons };
  static constexpr int kMaxLevel = 7;  // deeper or unknown: kMaxLevel + 1
  struct Slot {
    std::atomic<uint64_t> nanos{0};    // inside Finish
    std::atomic<uint64_t> keys{0};     // keys added to the builders
    std::atomic<uint64_t> filters{0};  // filters finished
  };
  Slot slots[kNumReasons][kMaxLevel + 2];

  double build_seconds() const {
    return static_cast<double>(build_nanos.load()) * 1e-9;
  }
};

class InstrumentedPolicy final : public rocksdb::FilterPolicy {
 public:
  // `calls` must outlive the policy and every builder and reader it makes.
  InstrumentedPolicy(std::shared_ptr<const rocksdb::FilterPolicy> inner,
                     PolicyCalls* calls)
      : inner_(std::move(inner)), calls_(calls) {}

  const char* Name() const override { return inner_->Name(); }
  const char* CompatibilityName() const override {
    return inner_->CompatibilityName();
  }
  std::string GetId() const override { return inner_->GetId(); }

  rocksdb::FilterBitsBuilder* GetBuilderWithContext(
      const rocksdb::FilterBuildingContext& context) const override;
  rocksdb::FilterBitsReader* GetFilterBitsReader(
      const rocksdb::Slice& contents) const override;

 private:
  const std::shared_ptr<const rocksdb::FilterPolicy> inner_;
  PolicyCalls* const calls_;
};

}  // namespace harness
}  // namespace sstfilter

#endif  // SSTFILTER_HARNESS_ROCKSDB_COUNTING_H_
