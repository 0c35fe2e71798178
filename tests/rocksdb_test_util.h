// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Helpers of the RocksDB adapter tests: a scratch directory, fixed keys with
// prefixes, and a real RocksDB opened on disk with statistics on.

#ifndef SSTFILTER_TESTS_ROCKSDB_TEST_UTIL_H_
#define SSTFILTER_TESTS_ROCKSDB_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <rocksdb/table_properties.h>
#include <rocksdb/version.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "adapters/rocksdb/rocksdb_compat.h"
#include "harness/keys.h"
#include "harness/rocksdb_range_scan.h"
#include "harness/scratch.h"
#include "sstfilter/params.h"
#include "sstfilter/rocksdb.h"
#include "sstfilter/spec.h"

namespace sstfilter {
namespace test {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents.
class ScratchDir : public harness::ScratchDir {
 public:
  ScratchDir() : harness::ScratchDir("sstfilter_rocksdb") {}
};

// Waits until `db` runs no flush or compaction and has none pending
// (harness::WaitForCompactions). `universal`: without RocksDB's
// "compaction-pending", which universal compaction can leave set.
// REQUIRES: the test links sstfilter_harness_rocksdb.
inline void WaitIdle(rocksdb::DB* db, bool universal = false) {
  const rocksdb::Status s = harness::WaitForCompactions(db, !universal);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

// Keys with an 11-byte prefix "p" + 10 digits and a 2-byte suffix. Present
// key i has prefix number 8 * (i / 4), shared by four keys. Missing keys
// have prefix numbers in between (8g + 1 .. 8g + 4, each its own, so
// prefix filters see as many distinct probes as whole-key filters), or a
// present prefix with a suffix no present key has. All sort inside the
// range of the present keys, so RocksDB must consult the filter for them.
constexpr size_t kPrefixLen = 11;
// "p" + 10 digits + "-" + one suffix digit. REQUIRES: 0 <= suffix <= 9.
inline std::string MakeKey(uint64_t prefix_number, int suffix) {
  static const harness::KeySpace* keys =
      new harness::KeySpace(harness::KeySpace::Decimal("p", 10, "-0"));
  return keys->Key(prefix_number, static_cast<char>('0' + suffix));
}
inline std::string PresentKey(uint64_t i) {
  return MakeKey(8 * (i / 4), i % 4);
}
inline std::string MissingKey(uint64_t i) {
  return MakeKey(8 * (i / 4) + 1 + i % 4, i % 4);
}
inline std::string MissingKeyPresentPrefix(uint64_t i) {
  return MakeKey(8 * (i / 4), 4 + i % 4);
}
inline bool IsPresentKey(const std::string& key) {
  return std::stoull(key.substr(1, 10)) % 8 == 0 && key.back() < '4';
}
inline std::string ValueOf(uint64_t i) { return "value-" + std::to_string(i); }

// Puts keys 0 .. n-1 (PresentKey, ValueOf) in an order that makes the
// tables of a natural tree overlap (a stride of 7919), WAL off, then
// flushes and waits until no flush or compaction runs (WaitIdle). REQUIRES:
// n not a multiple of 7919.
inline void LoadOverlappingKeys(rocksdb::DB* db, uint64_t n,
                                bool universal = false) {
  rocksdb::WriteOptions wo;
  wo.disableWAL = true;
  for (uint64_t i = 0; i < n; i++) {
    const uint64_t k = (i * 7919) % n;
    EXPECT_TRUE(db->Put(wo, PresentKey(k), ValueOf(k)).ok());
  }
  EXPECT_TRUE(db->Flush(rocksdb::FlushOptions()).ok());
  WaitIdle(db, universal);
}

inline std::shared_ptr<const rocksdb::FilterPolicy> MustPolicy(
    const std::string& spec) {
  std::shared_ptr<const rocksdb::FilterPolicy> p;
  rocksdb::Status s = NewRocksDBFilterPolicy(spec, &p);
  if (!s.ok()) {
    ADD_FAILURE() << spec << ": " << s.ToString();
    std::abort();
  }
  return p;
}

// How a test's tables filter.
struct TableSetup {
  std::shared_ptr<const rocksdb::FilterPolicy> policy;
  bool partitioned = false;
  bool prefix = false;  // fixed prefix extractor of kPrefixLen
  bool whole_key_filtering = true;
  bool cache_index_and_filter_blocks = false;
  bool detect_filter_construct_corruption = false;
};

inline rocksdb::Options MakeOptions(const TableSetup& t) {
  rocksdb::Options o;
  o.create_if_missing = true;
  o.statistics = rocksdb::CreateDBStatistics();
  o.disable_auto_compactions = true;
  o.compression = rocksdb::kNoCompression;
  o.max_open_files = -1;
  o.info_log_level = rocksdb::WARN_LEVEL;
  if (t.prefix) {
    o.prefix_extractor.reset(rocksdb::NewFixedPrefixTransform(kPrefixLen));
  }
  rocksdb::BlockBasedTableOptions bt;
  bt.filter_policy = t.policy;
  bt.whole_key_filtering = t.whole_key_filtering;
  bt.cache_index_and_filter_blocks = t.cache_index_and_filter_blocks;
  bt.detect_filter_construct_corruption = t.detect_filter_construct_corruption;
  bt.block_cache = rocksdb::NewLRUCache(8 << 20);
  if (t.partitioned) {
    bt.partition_filters = true;
    bt.index_type = rocksdb::BlockBasedTableOptions::kTwoLevelIndexSearch;
    bt.metadata_block_size = 4096;
#if ROCKSDB_MAJOR * 100 + ROCKSDB_MINOR >= 906
    // Cut filter partitions where the filter's ApproximateNumEntries says,
    // not also wherever the index partitions are cut (9.6+; 7.x and 8.x
    // cut the two together, yet rarely for the index at this size).
    bt.decouple_partitioned_filters = true;
#endif
  }
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(bt));
  return o;
}

inline std::unique_ptr<rocksdb::DB> OpenDB(const rocksdb::Options& o,
                                           const std::string& path) {
  std::unique_ptr<rocksdb::DB> db;
  rocksdb::Status s =
      OpenInto(&db, [&](auto* out) { return rocksdb::DB::Open(o, path, out); });
  EXPECT_TRUE(s.ok()) << s.ToString();
  return db;
}

// Writes PresentKey(i) for i in [begin, end) with `step`, then flushes.
inline void WriteKeys(rocksdb::DB* db, uint64_t begin, uint64_t end,
                      uint64_t step = 1) {
  rocksdb::WriteOptions wo;
  wo.disableWAL = true;
  for (uint64_t i = begin; i < end; i += step) {
    ASSERT_TRUE(db->Put(wo, PresentKey(i), ValueOf(i)).ok());
  }
  ASSERT_TRUE(db->Flush(rocksdb::FlushOptions()).ok());
}

// MultiGet of key(0 .. n-1) in batches of 32; check(i, key(i), status,
// value) on each answer, stopping at the first fatal failure.
template <typename KeyFn, typename CheckFn>
void MultiGetAll(rocksdb::DB* db, uint64_t n, KeyFn key, CheckFn check) {
  constexpr size_t kBatch = 32;
  std::vector<std::string> keys(kBatch);
  std::vector<rocksdb::Slice> slices(kBatch);
  std::vector<rocksdb::PinnableSlice> values(kBatch);
  std::vector<rocksdb::Status> statuses(kBatch);
  for (uint64_t i = 0; i < n; i += kBatch) {
    const size_t m = std::min<uint64_t>(kBatch, n - i);
    for (size_t j = 0; j < m; j++) {
      keys[j] = key(i + j);
      slices[j] = keys[j];
      values[j].Reset();
    }
    db->MultiGet(rocksdb::ReadOptions(), db->DefaultColumnFamily(), m,
                 slices.data(), values.data(), statuses.data());
    for (size_t j = 0; j < m; j++) {
      check(i + j, keys[j], statuses[j], values[j]);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// The lines of the database's info LOG (in `dir`) that sstfilter's
// policies wrote: each from its "[sstfilter]" tag to the line's end.
inline std::vector<std::string> SstfilterLogLines(const std::string& dir) {
  std::string log;
  EXPECT_TRUE(
      rocksdb::ReadFileToString(rocksdb::Env::Default(), dir + "/LOG", &log)
          .ok());
  std::vector<std::string> out;
  for (size_t at = log.find("[sstfilter]"); at != std::string::npos;
       at = log.find("[sstfilter]", at + 1)) {
    out.push_back(log.substr(at, log.find('\n', at) - at));
  }
  return out;
}

// Every one of PresentKey(0 .. n-1) reads back, through Get and MultiGet.
inline void ExpectAllPresent(rocksdb::DB* db, uint64_t n) {
  rocksdb::ReadOptions ro;
  std::string v;
  for (uint64_t i = 0; i < n; i++) {
    rocksdb::Status s = db->Get(ro, PresentKey(i), &v);
    ASSERT_TRUE(s.ok()) << "false negative? " << PresentKey(i) << ": "
                        << s.ToString();
    ASSERT_EQ(v, ValueOf(i));
  }
  MultiGetAll(db, n, PresentKey,
              [](uint64_t i, const std::string& key, const rocksdb::Status& s,
                 const rocksdb::PinnableSlice& value) {
                ASSERT_TRUE(s.ok()) << "MultiGet false negative? " << key;
                ASSERT_EQ(value.ToString(), ValueOf(i));
              });
}

// Reads keys that were never written: Get (multiget=false) or MultiGet in
// batches of 32. Every one must be NotFound.
template <typename KeyFn>
void ReadAbsent(rocksdb::DB* db, uint64_t n, KeyFn key, bool multiget) {
  rocksdb::ReadOptions ro;
  if (!multiget) {
    std::string v;
    for (uint64_t i = 0; i < n; i++) {
      ASSERT_TRUE(db->Get(ro, key(i), &v).IsNotFound()) << key(i);
    }
    return;
  }
  MultiGetAll(
      db, n, key,
      [](uint64_t, const std::string& k, const rocksdb::Status& s,
         const rocksdb::PinnableSlice&) { ASSERT_TRUE(s.IsNotFound()) << k; });
}

// What the filters said about the probes since the last Reset().
struct FilterCounts {
  uint64_t negatives = 0;  // the filter said "no": a read saved
  uint64_t positives = 0;  // the filter said "may match"
  uint64_t probes() const { return negatives + positives; }
  double positive_rate() const {
    return probes() == 0 ? 0 : static_cast<double>(positives) / probes();
  }
};

// Whole-key probes (Get, MultiGet) and prefix-only Get probes count in
// BLOOM_FILTER_USEFUL / _FULL_POSITIVE; prefix-only MultiGet probes in
// BLOOM_FILTER_PREFIX_CHECKED / _PREFIX_USEFUL (RocksDB 7.8).
inline FilterCounts Counts(rocksdb::Statistics* stats) {
  FilterCounts c;
  c.negatives = stats->getTickerCount(rocksdb::BLOOM_FILTER_USEFUL) +
                stats->getTickerCount(rocksdb::BLOOM_FILTER_PREFIX_USEFUL);
  const uint64_t prefix_checked =
      stats->getTickerCount(rocksdb::BLOOM_FILTER_PREFIX_CHECKED);
  const uint64_t prefix_useful =
      stats->getTickerCount(rocksdb::BLOOM_FILTER_PREFIX_USEFUL);
  c.positives = stats->getTickerCount(rocksdb::BLOOM_FILTER_FULL_POSITIVE) +
                (prefix_checked - prefix_useful);
  return c;
}

// The FPR a filter of `spec` is expected to have for `entries` entries.
inline double ExpectedFpr(const std::string& spec, uint64_t entries) {
  FilterSpec s;
  FilterParams p;
  if (!ParseFilterSpec(spec, &s).ok() || !ParamsForSpec(s, entries, &p).ok()) {
    ADD_FAILURE() << "bad spec " << spec;
    return 1;
  }
  return p.expected_fpr;
}

// A measured FPR is "near" the expected one: within [0.4x, 1.5x + 0.2
// points]. Keys are fixed, so this never flakes; with >= 10k probes at ~1%
// sampling noise is ~10%, far inside the band, while a filter of another
// size or kind (or none) falls outside it.
inline void ExpectFprNear(double measured, double expected,
                          const std::string& what) {
  std::printf("  %-48s FPR %.4f%%  expected %.4f%%\n", what.c_str(),
              100 * measured, 100 * expected);
  EXPECT_LE(measured, 1.5 * expected + 0.002)
      << what << " expected " << expected;
  EXPECT_GE(measured, 0.4 * expected) << what << " expected " << expected;
}

// Table properties of every live SST.
inline rocksdb::TablePropertiesCollection AllTables(rocksdb::DB* db) {
  rocksdb::TablePropertiesCollection props;
  EXPECT_TRUE(db->GetPropertiesOfAllTables(&props).ok());
  return props;
}

inline uint64_t TotalFilterEntries(rocksdb::DB* db) {
  uint64_t n = 0;
  for (const auto& [file, p] : AllTables(db)) n += p->num_filter_entries;
  return n;
}

}  // namespace test
}  // namespace sstfilter

#endif  // SSTFILTER_TESTS_ROCKSDB_TEST_UTIL_H_
