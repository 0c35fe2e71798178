// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The LevelDB adapter: first the policy on its own (specs, appending,
// sizes, allocations, threads, damaged bytes), then real LevelDB databases
// on disk whose table-file reads are counted by an EnvWrapper.
//
// The databases hold DbKeys() keys (200,000 by default; set
// SSTFILTER_LEVELDB_TEST_KEYS to change it, e.g. to 1000000) of 16 bytes
// with 100-byte values, uncompressed, in 4 KiB blocks: ~34 keys per block
// and per filter, as LevelDB writes them. Block cache off, so every data
// block a Get needs is a Read on a table file.

#include "sstfilter/leveldb.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "harness/keys.h"
#include "harness/leveldb_counting.h"
#include "harness/scratch.h"
#include "leveldb/cache.h"
#include "leveldb/db.h"
#include "leveldb/env.h"
#include "leveldb/filter_policy.h"
#include "leveldb/options.h"
#include "leveldb/slice.h"
#include "leveldb/write_batch.h"
#include "sstfilter/filter.h"
#include "sstfilter/params.h"
#include "sstfilter/secret.h"
#include "tests/test_util.h"

// Allocation counting. Replacing the global operator new (and its deletes,
// so every pair stays malloc/free, also under ASan) lets a test count the
// allocations its own thread makes; LevelDB's background threads do not
// disturb the count.
namespace {
thread_local uint64_t t_allocations = 0;
void* CountedAlloc(std::size_t size) {
  ++t_allocations;
  return std::malloc(size == 0 ? 1 : size);
}
}  // namespace

// Out of line, so that the compiler does not see free() meet a pointer
// from operator new at an inlined call site (-Wmismatched-new-delete).
#define SSTFILTER_TEST_NOINLINE __attribute__((noinline))
SSTFILTER_TEST_NOINLINE void* operator new(std::size_t size) {
  if (void* p = CountedAlloc(size)) return p;
  throw std::bad_alloc();
}
SSTFILTER_TEST_NOINLINE void* operator new[](std::size_t size) {
  return operator new(size);
}
SSTFILTER_TEST_NOINLINE void* operator new(std::size_t size,
                                           const std::nothrow_t&) noexcept {
  return CountedAlloc(size);
}
SSTFILTER_TEST_NOINLINE void* operator new[](std::size_t size,
                                             const std::nothrow_t&) noexcept {
  return CountedAlloc(size);
}
SSTFILTER_TEST_NOINLINE void operator delete(void* p) noexcept { std::free(p); }
SSTFILTER_TEST_NOINLINE void operator delete[](void* p) noexcept {
  std::free(p);
}
SSTFILTER_TEST_NOINLINE void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
SSTFILTER_TEST_NOINLINE void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
SSTFILTER_TEST_NOINLINE void operator delete(void* p,
                                             const std::nothrow_t&) noexcept {
  std::free(p);
}
SSTFILTER_TEST_NOINLINE void operator delete[](void* p,
                                               const std::nothrow_t&) noexcept {
  std::free(p);
}

namespace sstfilter {
namespace {

using test::Key;
using test::NeighbourKey;

using PolicyPtr = std::unique_ptr<const leveldb::FilterPolicy>;

PolicyPtr MustMakePolicy(const std::string& spec) {
  PolicyPtr p;
  leveldb::Status s = NewLevelDBFilterPolicy(spec, &p);
  if (!s.ok()) {
    ADD_FAILURE() << spec << ": " << s.ToString();
    abort();
  }
  return p;
}

std::vector<leveldb::Slice> Slices(const std::vector<std::string>& keys) {
  return std::vector<leveldb::Slice>(keys.begin(), keys.end());
}

// Keys first .. first+n-1.
std::vector<std::string> Keys(uint64_t first, uint64_t n) {
  std::vector<std::string> keys;
  for (uint64_t i = first; i < first + n; i++) keys.push_back(Key(i));
  return keys;
}

std::string CreateFilter(const leveldb::FilterPolicy& p,
                         const std::vector<std::string>& keys) {
  const std::vector<leveldb::Slice> slices = Slices(keys);
  std::string out;
  p.CreateFilter(slices.data(), static_cast<int>(slices.size()), &out);
  return out;
}

// What the core builds for `keys` under `spec`.
std::string CoreFilter(const std::string& spec,
                       const std::vector<std::string>& keys) {
  std::unique_ptr<FilterBuilder> b;
  EXPECT_TRUE(NewFilterBuilder(test::MustParse(spec), &b).ok());
  for (const std::string& k : keys) b->AddKey(k);
  std::string out;
  b->Finish(&out);
  return out;
}

// Ceiling of a measured FPR (and of reads per absent Get) for filters of
// `keys_per_filter` keys: 1.5x the expected FPR plus 0.3 points, so fixed
// keys never flake. It holds for filters of a single key too (a standard
// Bloom of a few bytes: measured 0.12% for bloom:10 at one key).
double FprCeiling(const std::string& spec, uint64_t keys_per_filter) {
  FilterParams p;
  EXPECT_TRUE(ParamsForSpec(test::MustParse(spec), keys_per_filter, &p).ok());
  return 1.5 * p.expected_fpr + 0.003;
}

// ============================================================================
// The policy on its own.

TEST(LevelDBPolicyTest, BadSpecIsAnErrorNamingTheProblem) {
  struct Case {
    const char* spec;
    const char* mentions;
  };
  for (const Case& c :
       {Case{"", "expected <kind>:<bits_per_key>"},
        Case{"bloom", "expected <kind>:<bits_per_key>"},
        Case{"nosuch:10", "unknown filter kind"},
        Case{"leveldb.BuiltinBloomFilter2:10", "unknown filter kind"},
        Case{"bloom:ten", "not a decimal number"},
        Case{"bloom:0", "bits per key"},
        Case{"blocked_bloom:1e9", "not a decimal number"},
        Case{"bloom:10:pepper", "unknown option \"pepper\""}}) {
    SCOPED_TRACE(c.spec);
    PolicyPtr p;
    const leveldb::Status s = NewLevelDBFilterPolicy(c.spec, &p);
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_EQ(p, nullptr);
    const std::string msg = s.ToString();
    EXPECT_NE(msg.find(std::string("\"") + c.spec + "\""), std::string::npos)
        << msg;
    EXPECT_NE(msg.find(c.mentions), std::string::npos) << msg;
  }
}

// Every kind with a builder makes a policy; a kind without one (empty, the
// mutable forms) does not parse, and the policy says so.
TEST(LevelDBPolicyTest, KindWithoutBuilderIsAnErrorOtherwiseWorks) {
  for (const char* spec :
       {"bloom:12", "blocked_bloom:12", "cuckoo:12", "ribbon:12"}) {
    SCOPED_TRACE(spec);
    PolicyPtr p;
    const leveldb::Status s = NewLevelDBFilterPolicy(spec, &p);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_NE(p, nullptr);
  }
  for (const char* spec :
       {"empty:12", "counting_bloom:12", "dynamic_cuckoo:12"}) {
    SCOPED_TRACE(spec);
    PolicyPtr p;
    const leveldb::Status s = NewLevelDBFilterPolicy(spec, &p);
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_EQ(p, nullptr);
    EXPECT_NE(s.ToString().find(std::string("\"") + spec + "\""),
              std::string::npos)
        << s.ToString();
    EXPECT_NE(s.ToString().find("unknown filter kind"), std::string::npos)
        << s.ToString();
  }
}

class LevelDBPolicyKindTest : public ::testing::TestWithParam<std::string> {};

TEST_P(LevelDBPolicyKindTest, NameIsTheFamilyNameWithOrWithoutPrefix) {
  for (const std::string& spec : {GetParam(), "sstfilter." + GetParam()}) {
    PolicyPtr p = MustMakePolicy(spec);
    EXPECT_STREQ(p->Name(), "sstfilter.v1") << spec;
    EXPECT_STREQ(p->Name(), kFamilyName) << spec;
  }
}

TEST_P(LevelDBPolicyKindTest, CreateFilterAppendsWhatTheCoreBuilds) {
  PolicyPtr p = MustMakePolicy(GetParam());
  const std::string prefix = "bytes LevelDB wrote before";
  std::string dst = prefix;
  size_t start = dst.size();
  for (uint64_t n : {36, 1, 0, 500, 2}) {
    SCOPED_TRACE(n);
    const std::vector<std::string> keys = Keys(1000 * n, n);
    const std::vector<leveldb::Slice> slices = Slices(keys);
    p->CreateFilter(slices.data(), static_cast<int>(n), &dst);
    ASSERT_EQ(dst.compare(0, prefix.size(), prefix), 0) << "prefix altered";
    const std::string filter = dst.substr(start);
    EXPECT_EQ(filter, CoreFilter(GetParam(), keys));
    EXPECT_TRUE(FilterReader::Open(filter).valid());
    for (const std::string& k : keys) {
      ASSERT_TRUE(p->KeyMayMatch(k, filter)) << k;
    }
    start = dst.size();
  }
}

TEST_P(LevelDBPolicyKindTest, TinyBatchesStayTiny) {
  PolicyPtr p = MustMakePolicy(GetParam());
  const FilterSpec spec = test::MustParse(GetParam());
  std::unique_ptr<FilterBuilder> b;
  ASSERT_TRUE(NewFilterBuilder(spec, &b).ok());
  for (uint64_t n : {1, 2, 3, 5, 10, 36, 100}) {
    const size_t size = CreateFilter(*p, Keys(0, n)).size();
    EXPECT_EQ(size, b->FilterSize(n)) << "n=" << n;
    // The payload near n * bits_per_key and a trailer of a few bytes: no
    // 64-byte block minimum, no fixed header of tens of bytes. (Up to 1.4
    // times the bits where they would miss the FPR the spec promises: the
    // ribbon kind's 65 to a few hundred keys, written as standard Bloom of
    // ~14.6 bits per key at ribbon:10; docs/FORMAT.md.)
    const double budget = std::ceil(1.4 * n * spec.bits_per_key / 8) + 16;
    EXPECT_LE(size, budget) << "n=" << n;
  }
}

TEST_P(LevelDBPolicyKindTest, NoFalseNegativesAndFewFalsePositivesPerBatch) {
  PolicyPtr p = MustMakePolicy(GetParam());
  for (uint64_t n : {1, 2, 3, 7, 36, 200, 5000}) {
    SCOPED_TRACE(n);
    const uint64_t filters = std::max<uint64_t>(1, 20000 / n);
    uint64_t probes = 0, far = 0, neighbour = 0;
    for (uint64_t f = 0; f < filters; f++) {
      const std::vector<std::string> keys = Keys(f * n, n);
      const std::string filter = CreateFilter(*p, keys);
      for (uint64_t i = f * n; i < f * n + n; i++) {
        ASSERT_TRUE(p->KeyMayMatch(Key(i), filter)) << i;
        far += p->KeyMayMatch(test::AbsentKey(i), filter);
        neighbour += p->KeyMayMatch(NeighbourKey(i), filter);
        probes++;
      }
    }
    const double ceiling = FprCeiling(GetParam(), n);
    EXPECT_LE(far / double(probes), ceiling);
    EXPECT_LE(neighbour / double(probes), ceiling);
  }
}

// Filters of one kind are read by the policy of any other kind: they share
// Name(), so LevelDB hands them over.
TEST_P(LevelDBPolicyKindTest, ReadsFiltersOfEveryKind) {
  PolicyPtr reader = MustMakePolicy(GetParam());
  for (const std::string& writer_spec : test::AllKindSpecs()) {
    PolicyPtr writer = MustMakePolicy(writer_spec);
    const std::vector<std::string> keys = Keys(77, 36);
    const std::string filter = CreateFilter(*writer, keys);
    for (const std::string& k : keys) {
      ASSERT_TRUE(reader->KeyMayMatch(k, filter)) << writer_spec << " " << k;
    }
    int matches = 0;
    for (int i = 0; i < 1000; i++) {
      matches += reader->KeyMayMatch(test::AbsentKey(i), filter);
    }
    EXPECT_LT(matches, 50) << writer_spec << ": filter not really read";
  }
}

TEST_P(LevelDBPolicyKindTest, DamagedFiltersMayMatch) {
  PolicyPtr p = MustMakePolicy(GetParam());
  const std::string good = CreateFilter(*p, Keys(0, 36));
  std::vector<std::string> damaged = {"",
                                      "x",
                                      std::string(5, '\0'),
                                      std::string(4096, '\xff'),
                                      good.substr(0, good.size() - 1),
                                      good.substr(1),
                                      good + "junk"};
  std::string flipped = good;
  flipped.back() ^= 0x20;  // version nibble of the tag
  damaged.push_back(flipped);
  for (const std::string& filter : damaged) {
    for (uint64_t i = 0; i < 100; i++) {
      ASSERT_TRUE(p->KeyMayMatch(Key(i), filter))
          << "filter of " << filter.size() << " bytes";
    }
  }
}

TEST_P(LevelDBPolicyKindTest, KeyMayMatchDoesNotAllocate) {
  PolicyPtr p = MustMakePolicy(GetParam());
  const std::vector<std::string> keys = Keys(0, 36);
  const std::string filter = CreateFilter(*p, keys);
  std::vector<std::string> probes;
  for (uint64_t i = 0; i < 1000; i++) probes.push_back(NeighbourKey(i));
  const uint64_t before = t_allocations;
  int matches = 0;
  for (const std::string& k : probes) matches += p->KeyMayMatch(k, filter);
  for (const std::string& k : keys) matches += p->KeyMayMatch(k, filter);
  EXPECT_EQ(t_allocations - before, 0u);
  EXPECT_GE(matches, 36);
}

TEST_P(LevelDBPolicyKindTest, CreateFilterReusesItsBuilder) {
  PolicyPtr p = MustMakePolicy(GetParam());
  std::vector<std::vector<std::string>> batches;
  for (uint64_t f = 0; f < 100; f++) batches.push_back(Keys(f * 36, 36));
  std::vector<std::vector<leveldb::Slice>> slices;
  for (const auto& b : batches) slices.push_back(Slices(b));
  std::string dst;
  dst.reserve(1 << 16);
  // Warm up: the builder grows its buffers once.
  p->CreateFilter(slices[0].data(), 36, &dst);
  const uint64_t before = t_allocations;
  for (const auto& s : slices) {
    dst.clear();  // keeps the capacity, as LevelDB's result_ does
    p->CreateFilter(s.data(), 36, &dst);
  }
  EXPECT_EQ(t_allocations - before, 0u) << "allocations in 100 CreateFilter";
  EXPECT_EQ(dst, CoreFilter(GetParam(), batches.back()));
}

// Many threads share one policy (as DBs sharing it do); each result must be
// exactly what a private builder makes.
TEST_P(LevelDBPolicyKindTest, ConcurrentCreateFilterIsCorrect) {
  PolicyPtr p = MustMakePolicy(GetParam());
  constexpr int kThreads = 4;
  constexpr uint64_t kCalls = 2000;
  std::vector<std::vector<std::string>> expected(kThreads);
  for (int t = 0; t < kThreads; t++) {
    for (uint64_t c = 0; c < kCalls; c++) {
      const uint64_t n = 1 + (c * 7 + t) % 40;
      expected[t].push_back(CoreFilter(GetParam(), Keys(c * 100 + t, n)));
    }
  }
  std::atomic<uint64_t> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      std::string dst;
      for (uint64_t c = 0; c < kCalls; c++) {
        const uint64_t n = 1 + (c * 7 + t) % 40;
        const std::vector<std::string> keys = Keys(c * 100 + t, n);
        const std::vector<leveldb::Slice> slices = Slices(keys);
        const size_t start = dst.size();
        p->CreateFilter(slices.data(), static_cast<int>(n), &dst);
        if (dst.compare(start, std::string::npos, expected[t][c]) != 0) {
          mismatches++;
        }
        if (dst.size() > 4096) dst.clear();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0u);
}

INSTANTIATE_TEST_SUITE_P(AllKinds, LevelDBPolicyKindTest,
                         ::testing::ValuesIn(test::AllKindSpecs()));
// auto: one level of small filters, each of the kind whose Get costs least
// at its keys: at the default costs the ribbon kind; at build_x=3 (the
// ribbon kind over budget) standard Bloom, which blocked Bloom's filters
// of up to 818 keys are.
INSTANTIATE_TEST_SUITE_P(Auto, LevelDBPolicyKindTest,
                         ::testing::Values("auto:10", "auto:10:build_x=3"));

// ============================================================================
// Real databases on disk.

uint64_t DbKeys() {
  if (const char* env = std::getenv("SSTFILTER_LEVELDB_TEST_KEYS")) {
    const uint64_t n = std::strtoull(env, nullptr, 10);
    if (n >= 1000) return n;
  }
  return 200000;
}

std::string Value(uint64_t i) {
  std::string v(100, static_cast<char>('a' + i % 26));
  v.replace(0, 16, Key(i));
  return v;
}

// A LevelDB database in a fresh directory, with counted reads.
class LevelDBTest : public ::testing::TestWithParam<std::string> {
 protected:
  static constexpr uint64_t kAbsentGets = 50000;
  // Typical keys per filter here: 4 KiB blocks of ~120-byte entries.
  static constexpr uint64_t kKeysPerFilter = 32;

  void SetUp() override {
    scratch_ = std::make_unique<harness::ScratchDir>("sstfilter_leveldb");
    dir_ = scratch_->path();
    block_cache_.reset(leveldb::NewLRUCache(0));  // capacity 0: no caching
  }
  void TearDown() override {
    db_.reset();
    scratch_.reset();
  }

  leveldb::Options Options(const leveldb::FilterPolicy* policy) {
    leveldb::Options o;
    o.env = &env_;
    o.create_if_missing = true;
    o.filter_policy = policy;
    o.block_cache = block_cache_.get();
    o.compression = leveldb::kNoCompression;
    return o;
  }

  void Open(const leveldb::FilterPolicy* policy) {
    db_.reset();
    leveldb::DB* db = nullptr;
    leveldb::Status s = leveldb::DB::Open(Options(policy), dir_, &db);
    ASSERT_TRUE(s.ok()) << s.ToString();
    db_.reset(db);
  }

  // Writes Key(0 .. n-1) with `value_size`-byte values, then compacts
  // everything into one level.
  void Fill(uint64_t n, size_t value_size = 100) {
    leveldb::WriteBatch batch;
    for (uint64_t i = 0; i < n; i++) {
      std::string v = Value(i);
      v.resize(value_size, 'v');
      batch.Put(Key(i), v);
      if (batch.ApproximateSize() > (1 << 20) || i + 1 == n) {
        ASSERT_TRUE(db_->Write(leveldb::WriteOptions(), &batch).ok());
        batch.Clear();
      }
    }
    db_->CompactRange(nullptr, nullptr);
    int levels_with_files = 0;
    for (int level = 0; level < 7; level++) {
      std::string files;
      ASSERT_TRUE(db_->GetProperty(
          "leveldb.num-files-at-level" + std::to_string(level), &files));
      levels_with_files += files != "0";
    }
    // So that an absent Get consults exactly one table and one filter.
    ASSERT_EQ(levels_with_files, 1);
  }

  // Opens every table (their index and filter blocks are read then), so
  // that later counts are data blocks only.
  void OpenAllTables(uint64_t n) {
    std::string v;
    for (uint64_t i = 0; i < n; i += 97) db_->Get(ReadOpts(), Key(i), &v);
  }

  static leveldb::ReadOptions ReadOpts() {
    leveldb::ReadOptions r;
    r.fill_cache = false;
    return r;
  }

  // Gets every Key(i < n); returns how many were missing or wrong.
  uint64_t MissingKeys(uint64_t n, size_t value_size = 100) {
    uint64_t missing = 0;
    std::string v;
    for (uint64_t i = 0; i < n; i++) {
      std::string want = Value(i);
      want.resize(value_size, 'v');
      leveldb::Status s = db_->Get(ReadOpts(), Key(i), &v);
      if (!s.ok() || v != want) missing++;
    }
    return missing;
  }

  // Table-file reads per Get of `count` absent keys made by key(j); asserts
  // that every one of them is absent.
  template <typename KeyFn>
  double ReadsPerAbsentGet(uint64_t count, KeyFn key) {
    std::string v;
    env_.Reset();
    for (uint64_t j = 0; j < count; j++) {
      EXPECT_TRUE(db_->Get(ReadOpts(), key(j), &v).IsNotFound()) << key(j);
    }
    return env_.reads() / double(count);
  }
  double FarReads(uint64_t n) {
    return ReadsPerAbsentGet(
        kAbsentGets, [n](uint64_t j) { return harness::FarAbsentKey(j, n); });
  }
  double NeighbourReads(uint64_t n) {
    return ReadsPerAbsentGet(kAbsentGets, [n](uint64_t j) {
      return harness::NeighbourAbsentKey(j, n);
    });
  }
  double AnyByteNeighbourReads(uint64_t n) {
    return ReadsPerAbsentGet(kAbsentGets, [n](uint64_t j) {
      return harness::AnyByteNeighbourKey(j, n);
    });
  }

  harness::CountingEnv env_;
  std::unique_ptr<harness::ScratchDir> scratch_;
  std::string dir_;
  std::unique_ptr<leveldb::Cache> block_cache_;
  std::unique_ptr<leveldb::DB> db_;
};

// Zero false negatives; absent Gets read a data block about as often as the
// filter's FPR, for far and for neighbour keys; without a filter they read
// one every time, so the filter really is consulted.
TEST_P(LevelDBTest, AbsentGetsRarelyReadDataBlocks) {
  const uint64_t n = DbKeys();
  PolicyPtr policy = MustMakePolicy(GetParam());
  Open(policy.get());
  ASSERT_NO_FATAL_FAILURE(Fill(n));
  OpenAllTables(n);

  env_.Reset();
  ASSERT_EQ(MissingKeys(n), 0u) << "false negatives or lost keys";
  // Exactly one data block per present Get: the counting sees every read,
  // and nothing but data blocks.
  EXPECT_EQ(env_.reads(), n);

  const double ceiling = FprCeiling(GetParam(), kKeysPerFilter);
  const double far = FarReads(n);
  const double neighbour = NeighbourReads(n);
  const double any_byte = AnyByteNeighbourReads(n);
  RecordProperty("far_reads_per_absent_get", std::to_string(far));
  RecordProperty("neighbour_reads_per_absent_get", std::to_string(neighbour));
  RecordProperty("any_byte_neighbour_reads_per_absent_get",
                 std::to_string(any_byte));
  EXPECT_LE(far, ceiling);
  EXPECT_LE(neighbour, ceiling);
  EXPECT_LE(any_byte, ceiling);
  // Not zero either: then the Gets would not reach the tables at all.
  EXPECT_GT(far, 0.0);

  Open(nullptr);
  OpenAllTables(n);
  const double unfiltered = FarReads(n);
  EXPECT_GE(unfiltered, 0.99);
  EXPECT_LE(far, 0.1 * unfiltered);
}

// A keyed, salted DB: with its secret, absent Gets rarely read a data
// block; with another secret or none, every key still reads back (its
// filters then match everything).
TEST_P(LevelDBTest, KeyedFiltersNeedTheirSecret) {
  const uint64_t n = 20000;
  auto secret = [](std::string_view bytes) {
    std::unique_ptr<const FilterSecret> s;
    EXPECT_TRUE(NewFilterSecret(bytes, &s).ok());
    return std::shared_ptr<const FilterSecret>(std::move(s));
  };
  auto policy = [](const std::string& spec,
                   std::shared_ptr<const FilterSecret> secret) {
    PolicyPtr p;
    const leveldb::Status s = NewLevelDBFilterPolicy(spec, secret, &p);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return p;
  };
  PolicyPtr none;
  const leveldb::Status s =
      NewLevelDBFilterPolicy(GetParam() + ":keyed", &none);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("is keyed"), std::string::npos) << s.ToString();

  const PolicyPtr writer = policy(GetParam() + ":keyed:salt",
                                  secret("leveldb test secret 0123456789ab"));
  Open(writer.get());
  ASSERT_NO_FATAL_FAILURE(Fill(n));
  const PolicyPtr same = policy(GetParam() + ":keyed:salt",
                                secret("leveldb test secret 0123456789ab"));
  const PolicyPtr other =
      policy(GetParam(), secret("another leveldb secret, 32 bytes"));
  const PolicyPtr unkeyed = policy(GetParam(), nullptr);
  for (const PolicyPtr* p : {&same, &other, &unkeyed}) {
    Open(p->get());
    OpenAllTables(n);
    ASSERT_EQ(MissingKeys(n), 0u);
    const double far = FarReads(n);
    if (p == &same) {
      EXPECT_LE(far, FprCeiling(GetParam(), kKeysPerFilter));
    } else {
      EXPECT_GE(far, 0.99) << "no filter without the writer's secret";
    }
  }
}

// One key per block: CreateFilter sees batches of a single key.
TEST_P(LevelDBTest, LargeValuesGiveOneKeyFilters) {
  const uint64_t n = 3000;
  const size_t value_size = 5000;
  PolicyPtr policy = MustMakePolicy(GetParam());
  Open(policy.get());
  ASSERT_NO_FATAL_FAILURE(Fill(n, value_size));
  OpenAllTables(n);
  env_.Reset();
  ASSERT_EQ(MissingKeys(n, value_size), 0u);
  EXPECT_EQ(env_.reads(), n);
  EXPECT_LE(FarReads(n), FprCeiling(GetParam(), 1));
  EXPECT_LE(NeighbourReads(n), FprCeiling(GetParam(), 1));
  EXPECT_LE(AnyByteNeighbourReads(n), FprCeiling(GetParam(), 1));
}

// A DB written with one sstfilter kind, reopened with LevelDB's Bloom, with
// no filter, and with every sstfilter kind: no key is lost. The other
// sstfilter kinds read its filters (same Name()), so they still skip blocks;
// the built-in Bloom finds no filter of its name and reads every block.
TEST_P(LevelDBTest, ReopenWithOtherPoliciesLosesNoKey) {
  const uint64_t n = DbKeys() / 4;
  {
    PolicyPtr policy = MustMakePolicy(GetParam());
    Open(policy.get());
    ASSERT_NO_FATAL_FAILURE(Fill(n));
    db_.reset();
  }
  {
    std::unique_ptr<const leveldb::FilterPolicy> builtin(
        leveldb::NewBloomFilterPolicy(10));
    Open(builtin.get());
    EXPECT_EQ(MissingKeys(n), 0u) << "LevelDB Bloom";
    EXPECT_GE(FarReads(n), 0.99) << "LevelDB Bloom read a filter not its own";
    db_.reset();
  }
  Open(nullptr);
  EXPECT_EQ(MissingKeys(n), 0u) << "no filter";
  for (const std::string& other : test::AllKindSpecs()) {
    SCOPED_TRACE(other);
    PolicyPtr policy = MustMakePolicy(other);
    Open(policy.get());
    OpenAllTables(n);
    EXPECT_EQ(MissingKeys(n), 0u);
    EXPECT_LE(FarReads(n), FprCeiling(GetParam(), kKeysPerFilter));
    db_.reset();
  }
}

INSTANTIATE_TEST_SUITE_P(AllKinds, LevelDBTest,
                         ::testing::ValuesIn(test::AllKindSpecs()));
INSTANTIATE_TEST_SUITE_P(Auto, LevelDBTest,
                         ::testing::Values("auto:10", "auto:10:build_x=3"));

}  // namespace
}  // namespace sstfilter
