// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// auto specs in real RocksDB databases: a tree RocksDB shapes itself, with
// the level listener (the real tree) and without (the model tree). Every
// filter written is counted by kind on its way to the table; the tree's
// filter memory is the spec's within a few percent, and every key reads
// back.

#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "adapters/rocksdb/rocksdb_forwarding.h"
#include "sstfilter/filter.h"
#include "sstfilter/rocksdb.h"
#include "sstfilter/spec.h"
#include "tests/rocksdb_test_util.h"

namespace sstfilter {
namespace {

using test::ExpectAllPresent;
using test::MakeOptions;
using test::MissingKey;
using test::MustPolicy;
using test::OpenDB;
using test::PresentKey;
using test::ReadAbsent;
using test::ScratchDir;
using test::TableSetup;
using test::WaitIdle;

// Filters written, by the kind their bytes say.
struct KindCounts {
  std::mutex mu;
  std::map<FilterKind, int> filters;
  void Add(rocksdb::Slice f) {
    const FilterKind k = FilterReader::Open({f.data(), f.size()}).kind();
    std::lock_guard<std::mutex> l(mu);
    filters[k]++;
  }
};

// Our builder, telling `counts` the kind of each filter it finishes.
class CountingBuilder final : public internal::ForwardingBitsBuilder {
 public:
  CountingBuilder(rocksdb::FilterBitsBuilder* inner, KindCounts* counts)
      : ForwardingBitsBuilder(inner), counts_(counts) {}
  rocksdb::Slice Finish(std::unique_ptr<const char[]>* buf) override {
    return Counted(inner()->Finish(buf));
  }
  rocksdb::Slice Finish(std::unique_ptr<const char[]>* buf,
                        rocksdb::Status* status) override {
    return Counted(inner()->Finish(buf, status));
  }

 private:
  rocksdb::Slice Counted(rocksdb::Slice f) {
    counts_->Add(f);
    return f;
  }
  KindCounts* const counts_;
};

// Our policy, its builders wrapped in CountingBuilder; it reads with ours.
class CountingPolicy final : public rocksdb::FilterPolicy {
 public:
  CountingPolicy(std::shared_ptr<const rocksdb::FilterPolicy> p,
                 KindCounts* counts)
      : inner_(std::move(p)), counts_(counts) {}
  const char* Name() const override { return inner_->Name(); }
  const char* CompatibilityName() const override {
    return inner_->CompatibilityName();
  }
  rocksdb::FilterBitsBuilder* GetBuilderWithContext(
      const rocksdb::FilterBuildingContext& ctx) const override {
    rocksdb::FilterBitsBuilder* b = inner_->GetBuilderWithContext(ctx);
    return b == nullptr ? nullptr : new CountingBuilder(b, counts_);
  }
  rocksdb::FilterBitsReader* GetFilterBitsReader(
      const rocksdb::Slice& contents) const override {
    return inner_->GetFilterBitsReader(contents);
  }

 private:
  const std::shared_ptr<const rocksdb::FilterPolicy> inner_;
  KindCounts* const counts_;
};

struct Loaded {
  std::map<FilterKind, int> kinds;  // filters written, by kind
  double bits_per_key = 0;          // of the tables that stay
};

// A tree RocksDB shapes from 200,000 Puts (8 L0 files before a
// compaction, small levels; universal: 6 sorted runs before a merge), with
// the policy of `text`, with or without the level listener. Every key
// reads back, and absent ones are absent.
Loaded LoadNaturalTree(const std::string& text, bool listener,
                       bool universal = false) {
  Loaded out;
  KindCounts counts;
  ScratchDir dir;
  TableSetup t;
  const std::shared_ptr<const rocksdb::FilterPolicy> ours = MustPolicy(text);
  t.policy = std::make_shared<CountingPolicy>(ours, &counts);
  rocksdb::Options o = MakeOptions(t);
  if (listener) {
    std::shared_ptr<rocksdb::EventListener> l;
    EXPECT_TRUE(NewRocksDBLevelListener(ours, &l).ok());
    o.listeners.push_back(l);
  }
  o.disable_auto_compactions = false;
  o.write_buffer_size = 64 << 10;
  o.target_file_size_base = 64 << 10;
  o.max_bytes_for_level_base = 256 << 10;
  o.level0_file_num_compaction_trigger = 8;
  o.level_compaction_dynamic_level_bytes = true;
  if (universal) {
    o.compaction_style = rocksdb::kCompactionStyleUniversal;
    o.level0_file_num_compaction_trigger = 6;
  }
  auto db = OpenDB(o, dir.path());
  if (!db) return out;
  constexpr uint64_t kMany = 200000;
  test::LoadOverlappingKeys(db.get(), kMany, universal);
  double bits = 0, keys = 0;
  for (const auto& [file, p] : test::AllTables(db.get())) {
    bits += 8.0 * static_cast<double>(p->filter_size);
    keys += static_cast<double>(p->num_filter_entries);
  }
  // No false negative: every present key through Get and MultiGet.
  ExpectAllPresent(db.get(), kMany);
  ReadAbsent(db.get(), 20000, MissingKey, false);
  std::lock_guard<std::mutex> l(counts.mu);
  out.kinds = counts.filters;
  out.bits_per_key = keys > 0 ? bits / keys : 0;
  return out;
}

std::string Describe(const Loaded& l) {
  std::string s = l.bits_per_key > 0
                      ? "bits/key " + std::to_string(l.bits_per_key) + ";"
                      : "filters:";
  for (const auto& [kind, n] : l.kinds) {
    s += std::string(" ") + FilterKindName(kind) + " x " + std::to_string(n);
  }
  return s;
}

// With the listener the tree is planned as it is: flushes and small upper
// levels get a Bloom kind, the large levels the ribbon kind, at the
// spec's memory. This tree ends as its levels drain after the last Put,
// and the files that stay were planned while they were larger: by_level
// specs measure 0.94-0.99x their memory here (rocksdb_level_test), auto:10
// 9.41-9.79 bits per key in 14 runs (build_x 3 and 8), 10.12 once small
// filters took the bytes that keep their FPR (the tree's many small
// tables), and 10.47 once under ASan on Debian 13 (automatic compactions
// there shape a tree of more small tables); the bounds are about twice
// that spread from its middle, and exclude an average off by 10%.
TEST(RocksDBAutoTest, ListenerMixesKindsAtTheSpecsMemory) {
  const Loaded l = LoadNaturalTree("auto:10", true);
  std::printf("auto:10, listener: %s\n", Describe(l).c_str());
  EXPECT_GE(l.kinds.size(), 2u) << Describe(l);
  EXPECT_GT(l.kinds.count(FilterKind::kRibbon), 0u) << Describe(l);
  EXPECT_GE(l.bits_per_key, 9.1) << Describe(l);
  EXPECT_LE(l.bits_per_key, 10.8) << Describe(l);
}

// Universal compaction with the listener: its sorted runs are planned as
// levels are, the small ones a Bloom kind, the large ones ribbon, near the
// spec's memory: 9.39-10.48 bits per key in 17 runs with earlier cost
// defaults and the bottom run planned for the whole tree, 9.75-10.08 in
// five with today's, while other work loaded the machine (the tree
// shapes itself, and filters keep the bits of the tree they were built
// for); the bounds are about twice that spread from its middle, cut to
// exclude an average 10% off.
TEST(RocksDBAutoTest, ListenerPlansUniversalRuns) {
  const Loaded l = LoadNaturalTree("auto:10", true, /*universal=*/true);
  std::printf("auto:10, universal, listener: %s\n", Describe(l).c_str());
  // (Without the plan, the builders choose by each filter's keys: ribbon
  // for these, a Bloom kind for a rare tiny one. With it, 72 and 95 of
  // ~400 filters were standard Bloom in two runs.)
  auto written = [&l](FilterKind k) {
    const auto it = l.kinds.find(k);
    return it == l.kinds.end() ? 0 : it->second;
  };
  EXPECT_GE(written(FilterKind::kBlockedBloom) + written(FilterKind::kBloom),
            10)
      << Describe(l);
  EXPECT_GT(written(FilterKind::kRibbon), 0) << Describe(l);
  EXPECT_GT(l.bits_per_key, 9.0) << Describe(l);
  EXPECT_LT(l.bits_per_key, 11.0) << Describe(l);
}

// Without it, the model tree: kinds mixed too, memory above the spec's
// (by_level specs: 1.04-1.13x). auto:10 measured 11.06-12.54 bits per key
// in 9 runs once small filters took the bytes that keep their FPR, and
// 10.97-11.70 in four with today's cost defaults: every
// table of this tree holds under 1,000 keys, and the model plans them as
// the larger tables of a settled tree. The bounds are about twice that
// spread from its middle.
TEST(RocksDBAutoTest, ModelMixesKinds) {
  const Loaded l = LoadNaturalTree("auto:10", false);
  std::printf("auto:10, model: %s\n", Describe(l).c_str());
  EXPECT_GE(l.kinds.size(), 2u) << Describe(l);
  EXPECT_GE(l.bits_per_key, 10.3) << Describe(l);
  EXPECT_LE(l.bits_per_key, 13.3) << Describe(l);
}

// The spec's costs reach the tables: reads that cost nothing make every
// filter blocked Bloom (or its standard form where it is small), a build
// budget of blocked Bloom's own the same.
TEST(RocksDBAutoTest, CostsInTheSpecDecide) {
  for (const char* text : {"auto:10:read_us=0", "auto:10:build_x=1"}) {
    const Loaded l = LoadNaturalTree(text, true);
    std::printf("%s: %s\n", text, Describe(l).c_str());
    EXPECT_EQ(l.kinds.count(FilterKind::kRibbon), 0u) << text;
    EXPECT_GT(l.kinds.count(FilterKind::kBlockedBloom), 0u) << text;
  }
}

// Where no tree plans the filter, the auto builder picks the kind by each
// filter's keys: partitioned filters (many small filters per table, sized
// through ApproximateNumEntries) and universal compaction. No key is lost,
// and more than one kind is written where the counts call for it.
TEST(RocksDBAutoTest, PartitionedAndUniversal) {
  for (const bool universal : {false, true}) {
    SCOPED_TRACE(universal ? "universal" : "partitioned");
    KindCounts counts;
    ScratchDir dir;
    TableSetup t;
    t.policy = std::make_shared<CountingPolicy>(MustPolicy("auto:10"), &counts);
    t.partitioned = !universal;
    rocksdb::Options o = MakeOptions(t);
    if (universal) o.compaction_style = rocksdb::kCompactionStyleUniversal;
    auto db = OpenDB(o, dir.path());
    ASSERT_TRUE(db);
    constexpr uint64_t kKeys = 20000;
    test::WriteKeys(db.get(), 0, kKeys, 2);
    test::WriteKeys(db.get(), 1, kKeys, 2);
    ASSERT_TRUE(
        db->CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr)
            .ok());
    ExpectAllPresent(db.get(), kKeys);
    ReadAbsent(db.get(), kKeys, MissingKey, false);
    ReadAbsent(db.get(), kKeys, MissingKey, true);
    std::lock_guard<std::mutex> l(counts.mu);
    int filters = 0;
    for (const auto& [kind, n] : counts.filters) {
      EXPECT_NE(kind, FilterKind::kEmpty);
      filters += n;
    }
    Loaded seen;
    seen.kinds = counts.filters;
    std::printf("auto:10, %s: %s\n", universal ? "universal" : "partitioned",
                Describe(seen).c_str());
    EXPECT_GE(filters, universal ? 3 : 10);
    // The default costs give the ribbon kind to filters of most sizes.
    EXPECT_GT(counts.filters[FilterKind::kRibbon], 0);
    if (universal) {
      // With no listener the LOG says what auto does instead.
      std::string log;
      for (const std::string& line : test::SstfilterLogLines(dir.path())) {
        log += line + "\n";
      }
      EXPECT_NE(log.find("[sstfilter] sstfilter.auto:10: no level listener "
                         "follows column family \"default\" yet, so auto "
                         "sizes its filters on a model tree of sorted runs "
                         "each twice the next newer"),
                std::string::npos)
          << log;
    }
  }
}

// The policy's names: "sstfilter.auto", its id the spec's (written as
// "id=..." when it has a '='), and the family's compatibility name.
TEST(RocksDBAutoTest, Names) {
  const auto p = MustPolicy("auto:10");
  EXPECT_STREQ(p->Name(), "sstfilter.auto");
  EXPECT_EQ(p->GetId(), "sstfilter.auto:10");
  EXPECT_STREQ(p->CompatibilityName(), kFamilyName);
  EXPECT_EQ(MustPolicy("sstfilter.auto:9.5:read_us=3")->GetId(),
            "id=sstfilter.auto:9.5:read_us=3");
  std::shared_ptr<const rocksdb::FilterPolicy> bad;
  const rocksdb::Status s = NewRocksDBFilterPolicy("auto:10:read_us=-1", &bad);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("read_us"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace sstfilter
