// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Policies shared by engines working on many threads at once, on real
// databases.
// - LevelDB: one policy's CreateFilter builder slot used by a DB's
//   background compactions and, at the same time, by another DB's
//   recovery on the opening thread. tools/test --tsan runs it under
//   ThreadSanitizer (with the shared readers of filter_test,
//   rocksdb_db_test and c_api_test).
// - RocksDB: flushes and compactions building filters on background
//   threads while Get and MultiGet threads share the readers. Not under
//   TSan: the uninstrumented librocksdb publishes new tables through
//   atomics TSan cannot see, which it reports as races (false ones).

#include <gtest/gtest.h>
#include <leveldb/db.h>
#include <leveldb/filter_policy.h>
#include <rocksdb/db.h>
#include <rocksdb/table.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "sstfilter/leveldb.h"
#include "sstfilter/rocksdb.h"
#include "tests/rocksdb_test_util.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace test {
namespace {

std::string Val(uint64_t i) { return "value-" + std::to_string(i); }

class ConcurrencyTest : public ::testing::TestWithParam<std::string> {};

// Our LevelDB policy, noting which threads call CreateFilter and how many
// calls overlap.
class WatchedPolicy final : public leveldb::FilterPolicy {
 public:
  explicit WatchedPolicy(const std::string& spec) {
    EXPECT_TRUE(NewLevelDBFilterPolicy(spec, &inner_).ok());
  }
  const char* Name() const override { return inner_->Name(); }
  void CreateFilter(const leveldb::Slice* keys, int n,
                    std::string* dst) const override {
    const int now = ++in_flight_;
    int max = max_in_flight_.load();
    while (now > max && !max_in_flight_.compare_exchange_weak(max, now)) {
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      threads_.insert(std::this_thread::get_id());
    }
    inner_->CreateFilter(keys, n, dst);
    --in_flight_;
  }
  bool KeyMayMatch(const leveldb::Slice& key,
                   const leveldb::Slice& filter) const override {
    return inner_->KeyMayMatch(key, filter);
  }
  size_t num_threads() const {
    std::lock_guard<std::mutex> lock(mu_);
    return threads_.size();
  }
  int max_in_flight() const { return max_in_flight_.load(); }

 private:
  std::unique_ptr<const leveldb::FilterPolicy> inner_;
  mutable std::atomic<int> in_flight_{0};
  mutable std::atomic<int> max_in_flight_{0};
  mutable std::mutex mu_;
  mutable std::set<std::thread::id> threads_;
};

TEST_P(ConcurrencyTest, LevelDBConcurrentCompactionsAndRecoveries) {
  WatchedPolicy policy(GetParam());
  ScratchDir dir;
  leveldb::Options o;
  o.create_if_missing = true;
  o.filter_policy = &policy;
  o.write_buffer_size = 64 << 10;  // many flushes, then compactions
  o.max_file_size = 128 << 10;
  constexpr uint64_t kCompactingKeys = 60000;
  constexpr int kReopens = 12;
  constexpr uint64_t kKeysPerReopen = 2000;

  // DB 1: written without pause; LevelDB's background thread flushes and
  // compacts, calling CreateFilter.
  std::atomic<int> failures{0};
  std::thread writer([&] {
    leveldb::DB* raw = nullptr;
    if (!leveldb::DB::Open(o, dir.Sub("compacting"), &raw).ok()) {
      failures++;
      return;
    }
    std::unique_ptr<leveldb::DB> db(raw);
    for (uint64_t i = 0; i < kCompactingKeys; i++) {
      if (!db->Put(leveldb::WriteOptions(), Key(i), Val(i)).ok()) failures++;
    }
    std::string v;
    for (uint64_t i = 0; i < kCompactingKeys; i++) {
      if (!db->Get(leveldb::ReadOptions(), Key(i), &v).ok() || v != Val(i)) {
        failures++;
      }
    }
  });
  // DB 2: reopened again and again with a log to recover, so that this
  // thread calls CreateFilter (DB::Open writes the log into a table).
  leveldb::Options big = o;
  big.write_buffer_size = 4 << 20;  // the log is recovered, not flushed
  for (int r = 0; r < kReopens; r++) {
    leveldb::DB* raw = nullptr;
    ASSERT_TRUE(leveldb::DB::Open(big, dir.Sub("recovering"), &raw).ok());
    std::unique_ptr<leveldb::DB> db(raw);
    for (uint64_t i = r * kKeysPerReopen; i < (r + 1) * kKeysPerReopen; i++) {
      ASSERT_TRUE(db->Put(leveldb::WriteOptions(), Key(i), Val(i)).ok());
    }
  }
  writer.join();
  EXPECT_EQ(failures.load(), 0);
  // Filters were made on LevelDB's background thread and on this one.
  // (ThreadSanitizer needs no overlap in time to see a race, only two
  // threads; how many calls did overlap is printed.)
  EXPECT_GE(policy.num_threads(), 2u);
  RecordProperty("max_concurrent_create_filter", policy.max_in_flight());
  std::printf("max concurrent CreateFilter calls: %d\n",
              policy.max_in_flight());
  leveldb::DB* raw = nullptr;
  ASSERT_TRUE(leveldb::DB::Open(big, dir.Sub("recovering"), &raw).ok());
  std::unique_ptr<leveldb::DB> db(raw);
  std::string v;
  for (uint64_t i = 0; i < kReopens * kKeysPerReopen; i++) {
    ASSERT_TRUE(db->Get(leveldb::ReadOptions(), Key(i), &v).ok()) << Key(i);
    ASSERT_EQ(v, Val(i));
  }
}

TEST_P(ConcurrencyTest, RocksDBConcurrentBuildsAndReads) {
  ScratchDir dir;
  TableSetup t;
  t.policy = MustPolicy(GetParam());
  rocksdb::Options o = MakeOptions(t);
  o.disable_auto_compactions = false;
  o.write_buffer_size = 64 << 10;
  o.level0_file_num_compaction_trigger = 2;
  o.max_background_jobs = 4;
  auto db = OpenDB(o, dir.path());
  ASSERT_TRUE(db);
  constexpr uint64_t kKeys = 40000;
  constexpr int kReaders = 3;
  std::atomic<uint64_t> written{0};
  std::atomic<uint64_t> errors{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  threads.emplace_back([&] {
    rocksdb::WriteOptions wo;
    wo.disableWAL = true;
    for (uint64_t i = 0; i < kKeys; i++) {
      if (!db->Put(wo, PresentKey(i), ValueOf(i)).ok()) errors++;
      written.store(i + 1, std::memory_order_release);
    }
    done = true;
  });
  for (int r = 0; r < kReaders; r++) {
    threads.emplace_back([&, r] {
      rocksdb::ReadOptions ro;
      std::string v;
      uint64_t round = 0;
      while (!done.load()) {
        const uint64_t n = written.load(std::memory_order_acquire);
        if (n == 0) continue;
        // Keys already written must be found, by Get and by MultiGet.
        const uint64_t i = (round++ * 7919 + r) % n;
        if (!db->Get(ro, PresentKey(i), &v).ok() || v != ValueOf(i)) errors++;
        if (!db->Get(ro, MissingKey(i), &v).IsNotFound()) errors++;
        std::vector<std::string> keys;
        for (uint64_t j = 0; j < 16; j++) {
          keys.push_back(PresentKey((i + j * 31) % n));
          keys.push_back(MissingKey(i + j));
        }
        std::vector<rocksdb::Slice> s(keys.begin(), keys.end());
        std::vector<rocksdb::PinnableSlice> vals(s.size());
        std::vector<rocksdb::Status> st(s.size());
        db->MultiGet(ro, db->DefaultColumnFamily(), s.size(), s.data(),
                     vals.data(), st.data());
        for (size_t j = 0; j < s.size(); j++) {
          if (j % 2 == 0 ? !st[j].ok() : !st[j].IsNotFound()) errors++;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0u);
  ASSERT_TRUE(db->Flush(rocksdb::FlushOptions()).ok());
  ExpectAllPresent(db.get(), kKeys);
}

INSTANTIATE_TEST_SUITE_P(AllKinds, ConcurrencyTest,
                         ::testing::ValuesIn(AllKindSpecs()));

}  // namespace
}  // namespace test
}  // namespace sstfilter
