// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The RocksDB builder's methods of the newer RocksDB generations, on every
// generation: AddKeyAndAlt (RocksDB 9.6+), CalculateSpace and
// EstimatedFpRate (10.9+). Older RocksDB never calls them, so they are
// reached through the adapter's own class (adapters/rocksdb/rocksdb_builder.h).

#include "adapters/rocksdb/rocksdb_builder.h"

#include <gtest/gtest.h>
#include <rocksdb/table.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "adapters/rocksdb/rocksdb_abi.h"
#include "sstfilter/filter.h"
#include "sstfilter/rocksdb.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using internal::RocksDBBitsBuilder;
using test::Key;

class RocksDBBuilderTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(NewRocksDBFilterPolicy(GetParam(), &policy_).ok());
  }
  std::unique_ptr<RocksDBBitsBuilder> Builder() {
    rocksdb::BlockBasedTableOptions table_options;
    rocksdb::FilterBuildingContext ctx(table_options);
    rocksdb::FilterBitsBuilder* b = policy_->GetBuilderWithContext(ctx);
#if defined(__GXX_RTTI)
    auto* ours = dynamic_cast<RocksDBBitsBuilder*>(b);
    EXPECT_NE(ours, nullptr) << "the policy builds a RocksDBBitsBuilder";
#else  // -fno-rtti, as against a RocksDB release build: ours by construction
    auto* ours = static_cast<RocksDBBitsBuilder*>(b);
#endif
    if (ours == nullptr) delete b;
    return std::unique_ptr<RocksDBBitsBuilder>(ours);
  }
  // Finishes `b` into buf_ and returns a reader over the filter.
  std::unique_ptr<rocksdb::FilterBitsReader> Finish(RocksDBBitsBuilder* b) {
    filter_ = b->Finish(&buf_);
    return std::unique_ptr<rocksdb::FilterBitsReader>(
        policy_->GetFilterBitsReader(filter_));
  }

  std::shared_ptr<const rocksdb::FilterPolicy> policy_;
  std::unique_ptr<const char[]> buf_;
  rocksdb::Slice filter_;
};

// Key(i) is "key-" + 11 digits + 'a': its first 13 bytes, shared by 100
// keys, name i / 100.
std::string Prefix(uint64_t i) { return Key(i).substr(0, 13); }

TEST_P(RocksDBBuilderTest, KeyAndAltBothMatch) {
  auto b = Builder();
  ASSERT_NE(b, nullptr);
  for (uint64_t i = 0; i < 3000; i++) b->AddKeyAndAlt(Key(i), Prefix(i));
  auto r = Finish(b.get());
  for (uint64_t i = 0; i < 3000; i++) {
    ASSERT_TRUE(r->MayMatch(Key(i))) << i;
    ASSERT_TRUE(r->MayMatch(Prefix(i))) << i;
  }
}

TEST_P(RocksDBBuilderTest, RepeatedAltsAndKeysCountOnce) {
  auto b = Builder();
  ASSERT_NE(b, nullptr);
  // 3000 keys sharing 30 prefixes, each key twice in a row: the core alone
  // would count 3000 keys + 3000 prefixes (+ repeats), not 3030.
  for (uint64_t i = 0; i < 3000; i++) {
    b->AddKeyAndAlt(Key(i), Prefix(i));
    b->AddKeyAndAlt(Key(i), Prefix(i));
  }
  EXPECT_EQ(b->EstimateEntriesAdded(), 3030u);
  const size_t size_3030 = b->CalculateSpace(3030);
  auto r = Finish(b.get());
  EXPECT_EQ(filter_.size(), size_3030) << "sized for distinct entries";
}

TEST_P(RocksDBBuilderTest, DeduplicatesAcrossKeyAndAltAsRocksDBDescribes) {
  // filter_policy_internal.h (9.6+): AddKey(k1); AddKeyAndAlt(k2, a2)
  // de-dups k2<>k1, k2<>a2, a2<>k1; a following AddKeyAndAlt(k3, a3)
  // de-dups k3<>k2, a3<>a2, k3<>a2, a3<>k2.
  auto b = Builder();
  ASSERT_NE(b, nullptr);
  b->AddKey("a");
  b->AddKeyAndAlt("a", "a");  // partitioned filters: a prefix as both
  EXPECT_EQ(b->EstimateEntriesAdded(), 1u);
  b->AddKeyAndAlt("b", "a");  // alt repeats the previous key and alt
  EXPECT_EQ(b->EstimateEntriesAdded(), 2u);
  b->AddKeyAndAlt("a", "b");  // key repeats the previous alt, alt the key
  EXPECT_EQ(b->EstimateEntriesAdded(), 2u);
  b->AddKeyAndAlt("c", "c");
  b->AddKey("c");
  EXPECT_EQ(b->EstimateEntriesAdded(), 3u);
  auto r = Finish(b.get());
  for (const char* k : {"a", "b", "c"}) EXPECT_TRUE(r->MayMatch(k)) << k;
}

TEST_P(RocksDBBuilderTest, FinishForgetsThePreviousAlt) {
  // A partition boundary between two keys of one prefix: the prefix must
  // be in the second filter too, although it repeats the previous alt.
  auto b = Builder();
  ASSERT_NE(b, nullptr);
  b->AddKeyAndAlt(Key(100), Prefix(100));
  Finish(b.get());
  b->AddKeyAndAlt(Key(101), Prefix(101));  // same prefix
  EXPECT_EQ(b->EstimateEntriesAdded(), 2u);
  auto r = Finish(b.get());
  EXPECT_TRUE(r->MayMatch(Key(101)));
  EXPECT_TRUE(r->MayMatch(Prefix(101)));
}

TEST_P(RocksDBBuilderTest, CalculateSpaceIsWhatFinishWrites) {
  auto b = Builder();
  ASSERT_NE(b, nullptr);
  uint64_t next = 0;
  for (size_t n : {0, 1, 2, 7, 64, 100, 1000, 4321, 20000}) {
    for (size_t i = 0; i < n; i++) b->AddKey(Key(next++));
    ASSERT_EQ(b->EstimateEntriesAdded(), n);
    // As RocksDB 10.9+ calls it at every data block.
    const size_t predicted = b->CalculateSpace(b->EstimateEntriesAdded());
    Finish(b.get());
    EXPECT_EQ(filter_.size(), predicted) << n << " entries";
  }
}

// RocksDB frees *buf and reads the returned slice: the slice lies inside
// the buffer and starts at a 64-byte boundary, so a blocked Bloom block
// read from it is one cache line, whatever malloc returned.
TEST_P(RocksDBBuilderTest, FinishPlacesTheFilterAtACacheLineInItsBuffer) {
  auto b = Builder();
  ASSERT_NE(b, nullptr);
  uint64_t next = 0;
  for (size_t n : {0, 1, 100, 5000}) {
    for (size_t i = 0; i < n; i++) b->AddKey(Key(next++));
    auto r = Finish(b.get());
    const auto addr = reinterpret_cast<uintptr_t>(filter_.data());
    EXPECT_EQ(addr % 64, 0u) << n << " entries";
    EXPECT_GE(filter_.data(), buf_.get());
    EXPECT_LT(filter_.data(), buf_.get() + 64);
    for (size_t i = next - n; i < next; i++) ASSERT_TRUE(r->MayMatch(Key(i)));
  }
}

TEST_P(RocksDBBuilderTest, CalculateSpaceAgreesWithApproximateNumEntries) {
  auto b = Builder();
  ASSERT_NE(b, nullptr);
  for (size_t n : {1, 10, 1000, 100000}) {
    const size_t bytes = b->CalculateSpace(n);
    EXPECT_GE(b->ApproximateNumEntries(bytes), n) << n;
    EXPECT_LT(b->ApproximateNumEntries(bytes - 1), n) << n;
  }
}

TEST_P(RocksDBBuilderTest, EstimatedFpRateMatchesTheMeasuredRate) {
  auto b = Builder();
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->EstimatedFpRate(0, b->CalculateSpace(0)), 0.0);
  constexpr size_t kKeys = 20000;
  constexpr uint64_t kProbes = 200000;
  for (uint64_t i = 0; i < kKeys; i++) b->AddKey(Key(i));
  auto r = Finish(b.get());
  const double estimate = b->EstimatedFpRate(kKeys, filter_.size());
  uint64_t hits = 0;
  for (uint64_t i = 0; i < kProbes; i++)
    hits += r->MayMatch(test::AbsentKey(i));
  const double measured = static_cast<double>(hits) / kProbes;
  EXPECT_GT(estimate, 0.0);
  EXPECT_LT(estimate, 0.05);
  // Within 25% (+ two expected hits): the sampling error is far smaller.
  EXPECT_NEAR(measured, estimate, 0.25 * estimate + 2.0 / kProbes)
      << "measured " << measured << ", estimated " << estimate;
}

INSTANTIATE_TEST_SUITE_P(AllKinds, RocksDBBuilderTest,
                         ::testing::ValuesIn(test::AllKindSpecs()));

}  // namespace
}  // namespace sstfilter
