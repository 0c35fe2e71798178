// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Range filters on real RocksDB databases (sstfilter/rocksdb.h): the
// collector by id and from OPTIONS files; scans with RocksDBRangeScan
// return exactly what scans without it return, a table holding a key of
// the range is never skipped, and empty ranges skip tables; through
// tombstones, range tombstones, short and empty keys, reopen and
// compaction.

#include <gtest/gtest.h>
#include <rocksdb/convenience.h>
#include <rocksdb/sst_file_reader.h>
#include <rocksdb/utilities/options_util.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "sstfilter/range.h"
#include "tests/rocksdb_test_util.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using namespace std::string_literals;
using test::AllTables;
using test::OpenDB;
using test::ScratchDir;

constexpr char kSpec[] = "range:14:max_range=16";

std::string BigEndian(uint64_t x) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; i++) s[i] = static_cast<char>(x >> (56 - 8 * i));
  return s;
}

rocksdb::Options RangeOptions(const char* spec = kSpec) {
  rocksdb::Options o = test::MakeOptions({test::MustPolicy("bloom:10")});
  std::shared_ptr<rocksdb::TablePropertiesCollectorFactory> f;
  rocksdb::Status s = NewRocksDBRangeCollectorFactory(spec, &f);
  EXPECT_TRUE(s.ok()) << s.ToString();
  o.table_properties_collector_factories.push_back(f);
  return o;
}

// The keys of [lower, upper) (no upper bound if null), read with or
// without the range filter; also counts the tables it skipped.
std::vector<std::string> Scan(rocksdb::DB* db, const std::string& lower,
                              const std::string* upper, bool filtered,
                              uint64_t* skipped = nullptr,
                              uint64_t* checked = nullptr) {
  std::optional<std::string> up;
  if (upper != nullptr) up = *upper;
  RocksDBRangeScan scan(lower, up);
  rocksdb::ReadOptions ro;
  rocksdb::Slice lo(lower), hi;
  if (filtered) {
    scan.Apply(&ro);
  } else {
    ro.iterate_lower_bound = &lo;
    if (upper != nullptr) {
      hi = *upper;
      ro.iterate_upper_bound = &hi;
    }
  }
  std::vector<std::string> out;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(ro));
  for (it->Seek(lower); it->Valid(); it->Next()) {
    out.push_back(it->key().ToString());
  }
  EXPECT_TRUE(it->status().ok()) << it->status().ToString();
  if (skipped != nullptr) *skipped += scan.tables_skipped();
  if (checked != nullptr) *checked += scan.tables_checked();
  return out;
}

// The user keys stored in every live table (tombstones included), with
// its properties: the ground truth for "never skip a table with a key".
struct LiveTable {
  std::set<std::string> keys;
  std::shared_ptr<const rocksdb::TableProperties> props;
};
std::vector<LiveTable> LiveTables(rocksdb::DB* db,
                                  const rocksdb::Options& options) {
  std::vector<LiveTable> out;
  for (const auto& [file, props] : AllTables(db)) {
    LiveTable t;
    t.props = props;
    rocksdb::SstFileReader reader(options);
    EXPECT_TRUE(reader.Open(file).ok()) << file;
    rocksdb::ReadOptions ro;
    std::unique_ptr<rocksdb::Iterator> it(reader.NewIterator(ro));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      t.keys.insert(it->key().ToString());
    }
    out.push_back(std::move(t));
  }
  return out;
}

// Random sparse 8-byte keys in 8 L0 tables, some deleted in later tables.
// `deleted`: the keys given a tombstone, sorted.
void FillTables(rocksdb::DB* db, std::vector<uint64_t>* all,
                std::vector<uint64_t>* deleted) {
  std::mt19937_64 rng(7);
  for (int t = 0; t < 8; t++) {
    for (int i = 0; i < 2000; i++) {
      const uint64_t k = rng() >> 8;  // images in [0, 2^56)
      ASSERT_TRUE(db->Put({}, BigEndian(k), "v").ok());
      all->push_back(k);
    }
    if (t > 0) {  // tombstones of some keys of earlier tables
      for (int i = 0; i < 100; i++) {
        const uint64_t k = (*all)[rng() % (t * 2000)];
        ASSERT_TRUE(db->Delete({}, BigEndian(k)).ok());
        deleted->push_back(k);
      }
    }
    ASSERT_TRUE(db->Flush({}).ok());
  }
  std::sort(all->begin(), all->end());
  std::sort(deleted->begin(), deleted->end());
}

// How many tables the scans of CheckScans skipped, and how many a kSpec
// filter is expected to skip: each table RocksDB asks about that holds no
// key of [lo, hi] is skipped unless the range spans 16 blocks of 16
// images or more (kRangeMaxBlocks: answered "may contain"), or a stored
// hash falls in one of its pieces' windows, which happens with
// probability 1 - (1 - 1/r)^(m (hi - lo + 1)) ~ 1 - e^-((hi - lo + 1) /
// 2^12) for the m keys of a table in r = m 2^12 (14 bits per key).
struct Skips {
  uint64_t skipped = 0;
  double expected = 0, variance = 0;

  // Expects the skips within 3 sigma of the expectation.
  void Check(const char* what) const {
    const double sigma = std::sqrt(variance);
    std::printf("%s: %llu tables skipped, expected %.1f (sigma %.1f)\n", what,
                static_cast<unsigned long long>(skipped), expected, sigma);
    EXPECT_NEAR(static_cast<double>(skipped), expected, 3 * sigma) << what;
  }
};

// Scans of L images starting at random points and at keys (non-empty),
// with and without the filter: equal results; tables holding a key of
// the range are never skipped; empty ranges skip tables as expected.
void CheckScans(rocksdb::DB* db, const rocksdb::Options& options,
                const std::vector<uint64_t>& all,
                const std::vector<uint64_t>& deleted, Skips* skips) {
  const std::vector<LiveTable> tables = LiveTables(db, options);
  ASSERT_FALSE(tables.empty());
  std::mt19937_64 rng(3);
  for (int q = 0; q < 600; q++) {
    const uint64_t len = uint64_t{1} << (rng() % 13);  // 1 .. 4096 images
    uint64_t lo = rng() >> 8;
    if (q % 3 == 0) lo = all[rng() % all.size()] - rng() % len;  // hits
    const std::string lower = BigEndian(lo), upper = BigEndian(lo + len);
    uint64_t skipped = 0, checked = 0;
    ASSERT_EQ(Scan(db, lower, &upper, true, &skipped, &checked),
              Scan(db, lower, &upper, false))
        << lo << " " << len;
    RocksDBRangeScan scan(lower, upper);
    uint64_t holding = 0;
    for (const LiveTable& t : tables) {
      auto it = t.keys.lower_bound(lower);
      if (it != t.keys.end() && *it < upper) {
        ASSERT_TRUE(scan.MayContain(*t.props)) << lo << " " << len;
        holding++;
      }
    }
    // A table holding a tombstone of a key in the range is never skipped,
    // but the tables read above show no deleted key: no expectation.
    const auto d = std::lower_bound(deleted.begin(), deleted.end(), lo);
    if (d != deleted.end() && *d < lo + len) continue;
    // The upper bound's image is in the range where its last byte is 0.
    const uint64_t hi = (lo + len) % 256 == 0 ? lo + len : lo + len - 1;
    const double p = (hi >> 4) - (lo >> 4) >= 16
                         ? 0
                         : std::exp(-static_cast<double>(hi - lo + 1) / 4096);
    ASSERT_GE(checked, holding);  // every table holding a key is asked
    const double empty = static_cast<double>(checked - holding);
    skips->skipped += skipped;
    skips->expected += empty * p;
    skips->variance += empty * p * (1 - p);
  }
}

TEST(RocksDBRangeTest, ScansMatchAndSkipThroughReopenAndCompaction) {
  ScratchDir dir;
  rocksdb::Options options = RangeOptions();
  std::vector<uint64_t> all, deleted;
  {
    auto db = OpenDB(options, dir.path());
    FillTables(db.get(), &all, &deleted);
    Skips skips;
    CheckScans(db.get(), options, all, deleted, &skips);
    skips.Check("8 L0 tables, 600 scans");
  }
  {  // reopen, with no collector configured: the filters are in the files
    rocksdb::Options plain = test::MakeOptions({test::MustPolicy("bloom:10")});
    auto db = OpenDB(plain, dir.path());
    Skips skips;
    CheckScans(db.get(), plain, all, deleted, &skips);
    skips.Check("reopened");
  }
  {  // compaction rewrites every table, with its filter
    auto db = OpenDB(options, dir.path());
    ASSERT_TRUE(db->CompactRange({}, nullptr, nullptr).ok());
    for (const auto& [file, props] : AllTables(db.get())) {
      EXPECT_EQ(props->user_collected_properties.count(kRocksDBRangeProperty),
                1u)
          << file;
    }
    Skips skips;
    CheckScans(db.get(), options, all, deleted, &skips);
    std::printf("after compaction: %zu tables\n", AllTables(db.get()).size());
    skips.Check("after compaction");
    EXPECT_GT(skips.expected, 100);  // tables asked and skipped
  }
}

// A newer table holding only a tombstone of a key in the range must be
// read, or the deleted value below would show.
TEST(RocksDBRangeTest, TombstonesAreNeverSkipped) {
  ScratchDir dir;
  rocksdb::Options options = RangeOptions();
  auto db = OpenDB(options, dir.path());
  const std::string a = BigEndian(1000), b = BigEndian(5000);
  ASSERT_TRUE(db->Put({}, a, "v").ok());
  ASSERT_TRUE(db->Put({}, b, "v").ok());
  ASSERT_TRUE(db->Flush({}).ok());
  ASSERT_TRUE(db->Delete({}, a).ok());
  ASSERT_TRUE(db->Put({}, BigEndian(1u << 30), "v").ok());
  ASSERT_TRUE(db->Flush({}).ok());
  // A range tombstone over b, alone in a newest table.
  ASSERT_TRUE(db->DeleteRange({}, db->DefaultColumnFamily(), BigEndian(4000),
                              BigEndian(6000))
                  .ok());
  ASSERT_TRUE(db->Flush({}).ok());
  for (uint64_t lo : {990, 1000, 3000, 4999, 5000}) {
    const std::string lower = BigEndian(lo), upper = BigEndian(lo + 16);
    EXPECT_EQ(Scan(db.get(), lower, &upper, true),
              Scan(db.get(), lower, &upper, false));
    EXPECT_TRUE(Scan(db.get(), lower, &upper, true).empty()) << lo;
  }
  // The table with the range tombstone has no filter and is never skipped.
  int with_filter = 0;
  for (const auto& [file, props] : AllTables(db.get())) {
    const bool has =
        props->user_collected_properties.count(kRocksDBRangeProperty) != 0;
    EXPECT_EQ(has, props->num_range_deletions == 0) << file;
    with_filter += has;
  }
  EXPECT_EQ(with_filter, 2);
}

// Keys shorter than the segment, the empty key, lo == hi, open ends and
// the whole key space: every bound pair over a small set of keys.
TEST(RocksDBRangeTest, ShortAndEmptyKeysEveryBoundPair) {
  ScratchDir dir;
  rocksdb::Options options = RangeOptions("range:10:len=4:max_range=4");
  auto db = OpenDB(options, dir.path());
  const std::vector<std::string> keys = {"",
                                         "a",
                                         "a\x00"s,
                                         "ab",
                                         "abc",
                                         "abcd",
                                         "abcde",
                                         "b",
                                         "b\x01",
                                         "zz",
                                         "\xff\xff\xff\xff\xff"};
  // Each key in its own table, so skipping shows per key.
  for (const auto& k : keys) {
    ASSERT_TRUE(db->Put({}, k, "v").ok());
    ASSERT_TRUE(db->Flush({}).ok());
  }
  std::vector<std::string> bounds = keys;
  for (const auto& k : keys) {
    bounds.push_back(k + "\x00"s);
    bounds.push_back(k + "\x01");
    bounds.push_back(k + "\xff");
  }
  uint64_t skipped = 0;
  for (const auto& lo : bounds) {
    EXPECT_EQ(Scan(db.get(), lo, nullptr, true, &skipped),
              Scan(db.get(), lo, nullptr, false));
    for (const auto& hi : bounds) {
      ASSERT_EQ(Scan(db.get(), lo, &hi, true, &skipped),
                Scan(db.get(), lo, &hi, false))
          << test::Hex(lo) << " " << test::Hex(hi);
    }
  }
  EXPECT_GT(skipped, 0u);
  EXPECT_EQ(Scan(db.get(), "", nullptr, true).size(), keys.size());
}

TEST(RocksDBRangeTest, CollectorById) {
  rocksdb::ConfigOptions co;
  co.registry->AddLibrary("sstfilter", RegisterRocksDBFilterPolicies, "");
  std::shared_ptr<rocksdb::TablePropertiesCollectorFactory> f;
  ASSERT_TRUE(rocksdb::TablePropertiesCollectorFactory::CreateFromString(
                  co, "sstfilter.range_collector", &f)
                  .ok());
  ASSERT_NE(f, nullptr);
  EXPECT_STREQ(f->Name(), kRocksDBRangeCollectorId);
  EXPECT_EQ(f->ToString(), "sstfilter.range_collector (range:14)");
  ASSERT_TRUE(rocksdb::TablePropertiesCollectorFactory::CreateFromString(
                  co, "id=sstfilter.range_collector;spec=range:10:len=4", &f)
                  .ok());
  EXPECT_EQ(f->ToString(), "sstfilter.range_collector (range:10:len=4)");
  rocksdb::Status s =
      rocksdb::TablePropertiesCollectorFactory::CreateFromString(
          co, "id=sstfilter.range_collector;spec=range:2", &f);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("within [4, 32]"), std::string::npos)
      << s.ToString();
  EXPECT_FALSE(NewRocksDBRangeCollectorFactory("range:14:len=9", &f).ok());
}

// RocksDB writes the collector with its spec into the OPTIONS file, and
// loads it back by id.
TEST(RocksDBRangeTest, CollectorFromOptionsFile) {
  ScratchDir dir;
  rocksdb::Options options = RangeOptions("range:12:len=4:max_range=64");
  {
    auto db = OpenDB(options, dir.path());
  }
  rocksdb::ConfigOptions co;
  co.registry->AddLibrary("sstfilter", RegisterRocksDBFilterPolicies, "");
  co.ignore_unsupported_options = false;
  rocksdb::DBOptions db_options;
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  rocksdb::Status s =
      rocksdb::LoadLatestOptions(co, dir.path(), &db_options, &cfs);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(cfs.size(), 1u);
  const auto& factories = cfs[0].options.table_properties_collector_factories;
  ASSERT_EQ(factories.size(), 1u);
  EXPECT_EQ(factories[0]->ToString(),
            "sstfilter.range_collector (range:12:len=4:max_range=64)");
}

}  // namespace
}  // namespace sstfilter
