// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Databases whose filter blocks are damaged on disk still return every
// present key with its value, in RocksDB and in LevelDB.
//
// Two ways the damage reaches a reader, both tested on real databases:
// - The engine checks block checksums (RocksDB always unless the table is
//   written with kNoChecksum; LevelDB with paranoid_checks): it finds the
//   damage and drops the filter. Any damage, payload included, is safe.
// - The engine hands over the damaged bytes (RocksDB kNoChecksum; LevelDB
//   without paranoid_checks). Our reader must then see the damage itself:
//   since format version 4 a filter's trailer checks the whole filter
//   (docs/FORMAT.md, "Damaged bytes"), so damage to its trailer or its
//   payload reads as "may match". Filters written before (trailer-only
//   checks) are not among these cases.
//
// The filters are found in the table file by their bytes: RocksDB's full
// filter is exactly what our builder makes of the keys in order; LevelDB's
// are captured as the policy makes them.
//
// The cases can fail: with the payload inverted and no checksums, both
// engines lost present keys before the payload check (tried by hand), and
// the engines' own filters lose keys to single flipped bits
// (LevelDBBitFlipTest, RocksDBBitFlipTest).

#include <gtest/gtest.h>
#include <leveldb/cache.h>
#include <leveldb/db.h>
#include <leveldb/filter_policy.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "adapters/rocksdb/rocksdb_compat.h"
#include "adapters/rocksdb/rocksdb_forwarding.h"
#include "harness/leveldb_counting.h"
#include "policy/format.h"
#include "sstfilter/filter.h"
#include "sstfilter/leveldb.h"
#include "sstfilter/rocksdb.h"
#include "tests/rocksdb_test_util.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace test {
namespace {

namespace fs = std::filesystem;

// How a filter is damaged. Every one of them is something the trailer's
// check sees, so a reader handed the bytes answers "may match" (inverting a
// compact filter's payload escapes its 7-bit check with probability 2^-7,
// so that case runs on RocksDB's one large full filter only).
enum class Damage {
  kCheckByte,     // the trailer's check bits flipped (either form)
  kTrailerZeros,  // the last three bytes (check, len, tag) zeroed
  kAllOnes,       // every byte of the filter set to 0xff
  kPayloadFlip,   // every payload byte inverted
  kPayloadBit,    // one bit flipped in the middle of the payload
};

const char* DamageName(Damage d) {
  switch (d) {
    case Damage::kCheckByte:
      return "check bits flipped";
    case Damage::kTrailerZeros:
      return "trailer zeroed";
    case Damage::kAllOnes:
      return "all ones";
    case Damage::kPayloadFlip:
      return "payload inverted";
    case Damage::kPayloadBit:
      return "one payload bit flipped";
  }
  return "?";
}

void Apply(Damage d, char* filter, size_t size) {
  switch (d) {
    case Damage::kCheckByte:
      // A compact trailer (docs/FORMAT.md: top bit of the last byte set)
      // keeps its 7 check bits in the low bits of the byte before it; a
      // full trailer's check byte is third from the end.
      if (static_cast<uint8_t>(filter[size - 1]) & 0x80) {
        filter[size - 2] ^= 0x5a;
      } else {
        filter[size - 3] ^= 0x5a;
      }
      break;
    case Damage::kTrailerZeros:
      std::fill(filter + size - 3, filter + size, '\0');
      break;
    case Damage::kAllOnes:
      std::fill(filter, filter + size, '\xff');
      break;
    case Damage::kPayloadFlip: {
      const size_t payload = FilterReader::Open({filter, size}).payload_size();
      for (size_t i = 0; i < payload; i++) filter[i] = ~filter[i];
      break;
    }
    case Damage::kPayloadBit: {
      // One flipped payload bit: caught for certain by either checked form.
      const size_t payload = FilterReader::Open({filter, size}).payload_size();
      filter[payload / 2] ^= 0x10;
      break;
    }
  }
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void WriteFile(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << p;
}

// How many single-bit flips the flip experiments make per kind:
// SSTFILTER_FLIPS=<n>, or 30 (docs/RELIABILITY.md quotes 1,000).
uint64_t FlipsPerKind() {
  const char* env = std::getenv("SSTFILTER_FLIPS");
  return env ? std::strtoull(env, nullptr, 10) : 30;
}

// Where a filter sits in a table file.
struct Place {
  fs::path file;
  size_t at, size;
};

// Inverts bit `bit` of the filter at `p` in its file (again: restores it).
void InvertBit(const Place& p, uint64_t bit) {
  std::string bytes = ReadFile(p.file);
  bytes[p.at + bit / 8] ^= static_cast<char>(1 << (bit % 8));
  WriteFile(p.file, bytes);
}

void PrintFlips(const char* engine, const std::string& name, uint64_t flips,
                size_t filters, uint64_t lossy_flips, uint64_t keys_lost) {
  std::printf(
      "[flips] %s %s: %llu flips in %zu filters, %llu of them lost keys, "
      "%llu keys lost\n",
      engine, name.c_str(), static_cast<unsigned long long>(flips), filters,
      static_cast<unsigned long long>(lossy_flips),
      static_cast<unsigned long long>(keys_lost));
}

// Damages, in every table file of `dir` with extension `ext`, each of the
// `filters` it contains. Returns how many filters were damaged.
size_t DamageTables(const std::string& dir, const std::string& ext,
                    const std::vector<std::string>& filters, Damage d) {
  size_t damaged = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ext) continue;
    std::string bytes = ReadFile(entry.path());
    for (const std::string& f : filters) {
      // Filters of a few bytes (an empty filter) could match elsewhere.
      if (f.size() < 16) continue;
      const size_t at = bytes.find(f);
      if (at == std::string::npos) continue;
      EXPECT_EQ(bytes.find(f, at + 1), std::string::npos) << "ambiguous";
      Apply(d, &bytes[at], f.size());
      damaged++;
    }
    WriteFile(entry.path(), bytes);
  }
  return damaged;
}

constexpr uint64_t kKeys = 20000;

// ---------------------------------------------------------------------------
// RocksDB

class RocksDBDamageTest : public ::testing::TestWithParam<std::string> {
 protected:
  rocksdb::Options Options(bool checksums) {
    TableSetup t;
    t.policy = MustPolicy(GetParam());
    rocksdb::Options o = MakeOptions(t);
    // MakeOptions' table options, with the checksum choice.
    auto* bt = o.table_factory->GetOptions<rocksdb::BlockBasedTableOptions>();
    EXPECT_NE(bt, nullptr);
    if (!checksums) bt->checksum = rocksdb::kNoChecksum;
    return o;
  }

  // The full filter RocksDB writes for PresentKey(0 .. kKeys-1).
  std::string ExpectedFilter() {
    FilterSpec spec;
    EXPECT_TRUE(ParseFilterSpec(GetParam(), &spec).ok());
    std::unique_ptr<FilterBuilder> b;
    EXPECT_TRUE(NewFilterBuilder(spec, &b).ok());
    for (uint64_t i = 0; i < kKeys; i++) b->AddKey(PresentKey(i));
    std::string f;
    b->Finish(&f);
    return f;
  }

  // Writes the DB, damages its filter, reopens it and reads every key.
  void Run(bool checksums, Damage d) {
    SCOPED_TRACE(std::string(DamageName(d)) +
                 (checksums ? ", checksums on" : ", no checksums"));
    ScratchDir dir;
    const std::string path = dir.Sub("db");
    {
      rocksdb::Options o = Options(checksums);
      auto db = OpenDB(o, path);
      ASSERT_TRUE(db);
      WriteKeys(db.get(), 0, kKeys);
      // The filter works before the damage: absent keys are answered by it.
      o.statistics->Reset();
      ReadAbsent(db.get(), 2000, MissingKey, /*multiget=*/false);
      EXPECT_GT(Counts(o.statistics.get()).negatives, 1900u);
    }
    ASSERT_EQ(DamageTables(path, ".sst", {ExpectedFilter()}, d), 1u)
        << "the filter was not found in the table file";
    for (bool cached : {false, true}) {
      rocksdb::Options o = Options(checksums);
      auto* bt = o.table_factory->GetOptions<rocksdb::BlockBasedTableOptions>();
      bt->cache_index_and_filter_blocks = cached;
      auto db = OpenDB(o, path);
      ASSERT_TRUE(db);
      ExpectAllPresent(db.get(), kKeys);
      // Absent keys are still absent; the damaged filter saved no read.
      o.statistics->Reset();
      ReadAbsent(db.get(), 2000, MissingKey, /*multiget=*/true);
      EXPECT_EQ(Counts(o.statistics.get()).negatives, 0u);
    }
  }
};

TEST_P(RocksDBDamageTest, ChecksummedTablesDropADamagedFilter) {
  for (Damage d :
       {Damage::kPayloadFlip, Damage::kCheckByte, Damage::kAllOnes}) {
    Run(/*checksums=*/true, d);
  }
}

TEST_P(RocksDBDamageTest, DamagedFilterHandedOverReadsAsMayMatch) {
  for (Damage d : {Damage::kCheckByte, Damage::kTrailerZeros, Damage::kAllOnes,
                   Damage::kPayloadFlip}) {
    Run(/*checksums=*/false, d);
  }
}

INSTANTIATE_TEST_SUITE_P(AllKinds, RocksDBDamageTest,
                         ::testing::ValuesIn(AllKindSpecs()));

// Damage our check cannot see: one set bit of the payload's last non-zero
// byte cleared, then the trailer (same form and size) written again over
// the damaged bytes. Every set bit of a Bloom filter was set by some key,
// and every bit of a stored cuckoo fingerprint belongs to one: the filter
// now misses a key. The bit is a probe target, not a header (ribbon's
// segmented form starts with its directory, whose damage the reader
// catches). REQUIRES: [data, data + size) is one of our filters.
void ClearASetBitAndReseal(char* data, size_t size) {
  const size_t payload = FilterReader::Open({data, size}).payload_size();
  for (size_t i = payload; i-- > 0;) {
    if (data[i] != 0) {
      data[i] = static_cast<char>(data[i] & (data[i] - 1));
      break;
    }
  }
  internal::Trailer t;
  EXPECT_TRUE(
      internal::ParseTrailer(reinterpret_cast<const uint8_t*>(data), size, &t));
  std::string sealed(data, payload);
  internal::AppendTrailer(t, &sealed);
  EXPECT_EQ(sealed.size(), size);
  std::copy(sealed.begin(), sealed.end(), data);
}

// A policy whose builders are its inner policy's, each wrapped by `wrap`
// (which takes ownership); it reads with the inner policy's readers.
class WrappingPolicy final : public rocksdb::FilterPolicy {
 public:
  using Wrap =
      std::function<rocksdb::FilterBitsBuilder*(rocksdb::FilterBitsBuilder*)>;
  WrappingPolicy(std::shared_ptr<const rocksdb::FilterPolicy> p, Wrap wrap)
      : inner_(std::move(p)), wrap_(std::move(wrap)) {}
  const char* Name() const override { return "WrappingPolicy"; }
  const char* CompatibilityName() const override {
    return inner_->CompatibilityName();
  }
  rocksdb::FilterBitsBuilder* GetBuilderWithContext(
      const rocksdb::FilterBuildingContext& ctx) const override {
    return wrap_(inner_->GetBuilderWithContext(ctx));
  }
  rocksdb::FilterBitsReader* GetFilterBitsReader(
      const rocksdb::Slice& contents) const override {
    return inner_->GetFilterBitsReader(contents);
  }

 private:
  const std::shared_ptr<const rocksdb::FilterPolicy> inner_;
  const Wrap wrap_;
};

// A builder that hands each filter its inner builder finished to `hook`
// before RocksDB sees it (the hook may change the bytes: ours are our own
// allocation, new char[] in the adapter, so writable).
class FinishHookBuilder final : public internal::ForwardingBitsBuilder {
 public:
  using Hook = std::function<void(rocksdb::Slice)>;
  FinishHookBuilder(rocksdb::FilterBitsBuilder* inner, Hook hook)
      : ForwardingBitsBuilder(inner), hook_(std::move(hook)) {}
  // RocksDB 7.8 calls the second form; older ones the first.
  rocksdb::Slice Finish(std::unique_ptr<const char[]>* buf) override {
    return Hooked(inner()->Finish(buf));
  }
  rocksdb::Slice Finish(std::unique_ptr<const char[]>* buf,
                        rocksdb::Status* status) override {
    return Hooked(inner()->Finish(buf, status));
  }

 private:
  rocksdb::Slice Hooked(rocksdb::Slice f) {
    hook_(f);
    return f;
  }
  const Hook hook_;
};

// A fault during a build: a bit of the filter flips in memory before its
// trailer's check is computed (damage after it reads as "may match"). The
// injection is this test's own: a builder wrapped around ours damages the
// filter Finish returned (ClearASetBitAndReseal).
TEST_P(RocksDBDamageTest, FaultDuringBuildFailsTheFlush) {
  for (bool detect : {true, false}) {
    SCOPED_TRACE(detect ? "detect_filter_construct_corruption"
                        : "no verification");
    ScratchDir dir;
    TableSetup t;
    t.policy = std::make_shared<WrappingPolicy>(
        MustPolicy(GetParam()), [](rocksdb::FilterBitsBuilder* b) {
          return new FinishHookBuilder(b, [](rocksdb::Slice f) {
            ClearASetBitAndReseal(const_cast<char*>(f.data()), f.size());
          });
        });
    t.detect_filter_construct_corruption = detect;
    const rocksdb::Options o = MakeOptions(t);
    auto db = OpenDB(o, dir.Sub("db"));
    ASSERT_TRUE(db);
    rocksdb::WriteOptions wo;
    for (uint64_t i = 0; i < kKeys; i++) {
      ASSERT_TRUE(db->Put(wo, PresentKey(i), ValueOf(i)).ok());
    }
    const rocksdb::Status s = db->Flush(rocksdb::FlushOptions());
    if (detect) {
      // MaybePostVerify finds the key the filter lost: no table is written.
      EXPECT_TRUE(s.IsCorruption()) << s.ToString();
      EXPECT_NE(s.ToString().find("misses one of its keys"), std::string::npos)
          << s.ToString();
      std::vector<rocksdb::LiveFileMetaData> files;
      db->GetLiveFilesMetaData(&files);
      EXPECT_TRUE(files.empty());
    } else {
      // Without the check the damaged filter is written, and a key is lost:
      // what the check is for.
      ASSERT_TRUE(s.ok()) << s.ToString();
      uint64_t lost = 0;
      std::string v;
      for (uint64_t i = 0; i < kKeys; i++) {
        lost += db->Get(rocksdb::ReadOptions(), PresentKey(i), &v).IsNotFound();
      }
      EXPECT_GE(lost, 1u);
    }
  }
}

// One bit flipped at a time inside the stored filter block, RocksDB with no
// checksum verified (tables written with kNoChecksum, reads with
// ReadOptions::verify_checksums = false): each flip is made in the table
// file, the DB opened afresh (its own block cache) and every key read, then
// the bit restored. The filter's bytes are found in the file as the builder
// made them (FinishHookBuilder). sstfilter's filters check their own bytes,
// so no flip loses a key; RocksDB's own filters are run beside them and
// printed, not asserted. A control proves the damaged bytes reach the
// filter's reader unverified: damage no check can see (our filter resealed,
// RocksDB's zeroed) loses keys. SSTFILTER_FLIPS=<n> sets the flips per kind.
// The filters of the experiment: every sstfilter kind, RocksDB's Bloom
// filter ("rocksdb.bloom:10": NewBloomFilterPolicy(10)) and RocksDB's
// Ribbon ("rocksdb.ribbon:10": NewRibbonFilterPolicy(10, -1), Ribbon at
// every level; the default writes Bloom filters on flushes).
bool IsRocksDBsOwn(const std::string& name) {
  return name.rfind("rocksdb.", 0) == 0;
}
std::shared_ptr<const rocksdb::FilterPolicy> FlipTestPolicy(
    const std::string& name) {
  if (name == "rocksdb.bloom:10") {
    return std::shared_ptr<const rocksdb::FilterPolicy>(
        rocksdb::NewBloomFilterPolicy(10));
  }
  if (name == "rocksdb.ribbon:10") {
    return std::shared_ptr<const rocksdb::FilterPolicy>(
        rocksdb::NewRibbonFilterPolicy(10, -1));
  }
  return MustPolicy(name);
}

class RocksDBBitFlipTest : public ::testing::TestWithParam<std::string> {
 protected:
  // One table of PresentKey(0 .. kKeys-1); place_ is its filter.
  void SetUp() override {
    path_ = dir_.Sub("db");
    policy_ = std::make_shared<WrappingPolicy>(
        FlipTestPolicy(GetParam()), [this](rocksdb::FilterBitsBuilder* b) {
          return new FinishHookBuilder(b, [this](rocksdb::Slice f) {
            std::lock_guard<std::mutex> lock(mu_);
            filters_.push_back(f.ToString());
          });
        });
    {
      auto db = OpenDB(Options(), path_);
      ASSERT_TRUE(db);
      WriteKeys(db.get(), 0, kKeys);
    }
    ASSERT_EQ(filters_.size(), 1u);
    const std::string& f = filters_[0];
    if (GetParam() == "rocksdb.ribbon:10") {
      // RocksDB's Ribbon metadata: marker -2 five bytes from the end.
      ASSERT_EQ(static_cast<uint8_t>(f[f.size() - 5]), 0xfe);
    }
    for (const auto& entry : fs::directory_iterator(path_)) {
      if (entry.path().extension() != ".sst") continue;
      const std::string bytes = ReadFile(entry.path());
      const size_t at = bytes.find(f);
      ASSERT_NE(at, std::string::npos) << "the filter is not in the table";
      ASSERT_EQ(bytes.find(f, at + 1), std::string::npos) << "ambiguous";
      place_ = {entry.path(), at, f.size()};
    }
    ASSERT_FALSE(place_.file.empty());
  }

  // Tables without block checksums, so that the engine hands the filter's
  // bytes over as they are (RocksDB 7.8 verifies a filter block's checksum
  // whatever ReadOptions::verify_checksums says); a fresh block cache for
  // every open; no checks of the DB's own.
  rocksdb::Options Options() const {
    TableSetup t;
    t.policy = policy_;
    rocksdb::Options o = MakeOptions(t);
    o.table_factory->GetOptions<rocksdb::BlockBasedTableOptions>()->checksum =
        rocksdb::kNoChecksum;
    o.paranoid_checks = false;
    o.paranoid_file_checks = false;
    return o;
  }

  // Opens the DB afresh and Gets every key without verifying checksums:
  // how many read NotFound.
  uint64_t KeysLost() {
    std::unique_ptr<rocksdb::DB> db;
    const rocksdb::Status s = OpenInto(&db, [&](auto* out) {
      return rocksdb::DB::OpenForReadOnly(Options(), path_, out);
    });
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!db) return kKeys;
    rocksdb::ReadOptions ro;
    ro.verify_checksums = false;
    std::string v;
    uint64_t lost = 0;
    for (uint64_t i = 0; i < kKeys; i++) {
      lost += db->Get(ro, PresentKey(i), &v).IsNotFound();
    }
    return lost;
  }

  ScratchDir dir_;
  std::string path_;
  std::mutex mu_;
  std::vector<std::string> filters_;
  std::shared_ptr<const rocksdb::FilterPolicy> policy_;
  Place place_;
};

TEST_P(RocksDBBitFlipTest, NoFlipLosesAKey) {
  ASSERT_EQ(KeysLost(), 0u);
  std::mt19937_64 rng(20261202);
  const uint64_t flips = FlipsPerKind();
  uint64_t lossy_flips = 0, keys_lost = 0;
  for (uint64_t flip = 0; flip < flips; flip++) {
    const uint64_t bit = rng() % (8 * place_.size);
    InvertBit(place_, bit);
    const uint64_t lost = KeysLost();
    InvertBit(place_, bit);
    lossy_flips += lost != 0;
    keys_lost += lost;
  }
  PrintFlips("rocksdb", GetParam(), flips, 1, lossy_flips, keys_lost);
  if (!IsRocksDBsOwn(GetParam())) {
    EXPECT_EQ(keys_lost, 0u);
  }
  // The control: damage that passes every check the filter has reaches
  // its reader, so the reads above saw the flipped bytes too.
  const std::string intact = ReadFile(place_.file);
  std::string bytes = intact;
  char* f = &bytes[place_.at];
  if (IsRocksDBsOwn(GetParam())) {
    std::fill(f, f + place_.size - 5, '\0');  // all but the metadata
  } else {
    ClearASetBitAndReseal(f, place_.size);
  }
  WriteFile(place_.file, bytes);
  EXPECT_GE(KeysLost(), 1u) << "the reads verified checksums after all?";
  WriteFile(place_.file, intact);
}

std::vector<std::string> KindsAndRocksDBFilters() {
  std::vector<std::string> specs = AllKindSpecs();
  specs.push_back("rocksdb.bloom:10");
  specs.push_back("rocksdb.ribbon:10");
  return specs;
}

INSTANTIATE_TEST_SUITE_P(AllKinds, RocksDBBitFlipTest,
                         ::testing::ValuesIn(KindsAndRocksDBFilters()),
                         SpecName);

// ---------------------------------------------------------------------------
// LevelDB

// A policy (ours, or LevelDB's own Bloom filter for "leveldb"), keeping a
// copy of every filter it makes.
class CapturingPolicy final : public leveldb::FilterPolicy {
 public:
  explicit CapturingPolicy(const std::string& spec) {
    if (spec == "leveldb") {
      inner_.reset(leveldb::NewBloomFilterPolicy(10));
    } else {
      EXPECT_TRUE(NewLevelDBFilterPolicy(spec, &inner_).ok());
    }
  }
  const char* Name() const override { return inner_->Name(); }
  void CreateFilter(const leveldb::Slice* keys, int n,
                    std::string* dst) const override {
    const size_t start = dst->size();
    inner_->CreateFilter(keys, n, dst);
    std::lock_guard<std::mutex> lock(mu_);
    filters_.push_back(dst->substr(start));
  }
  bool KeyMayMatch(const leveldb::Slice& key,
                   const leveldb::Slice& filter) const override {
    const bool may = inner_->KeyMayMatch(key, filter);
    probes_.fetch_add(1, std::memory_order_relaxed);
    positives_.fetch_add(may, std::memory_order_relaxed);
    return may;
  }
  std::vector<std::string> filters() const {
    std::lock_guard<std::mutex> lock(mu_);
    return filters_;
  }
  // The filter queries LevelDB made since the last ResetCounts(), and how
  // many of them answered "may match".
  uint64_t probes() const { return probes_.load(std::memory_order_relaxed); }
  uint64_t positives() const {
    return positives_.load(std::memory_order_relaxed);
  }
  void ResetCounts() {
    probes_.store(0, std::memory_order_relaxed);
    positives_.store(0, std::memory_order_relaxed);
  }

 private:
  std::unique_ptr<const leveldb::FilterPolicy> inner_;
  mutable std::mutex mu_;
  mutable std::vector<std::string> filters_;
  mutable std::atomic<uint64_t> probes_{0};
  mutable std::atomic<uint64_t> positives_{0};
};

// Writes keys 0..kKeys-1 with value(i) into a new LevelDB at `path` and
// compacts everything into tables.
template <typename ValueOf>
void WriteLevelDB(const leveldb::Options& o, const std::string& path,
                  ValueOf value) {
  leveldb::DB* raw = nullptr;
  ASSERT_TRUE(leveldb::DB::Open(o, path, &raw).ok());
  std::unique_ptr<leveldb::DB> db(raw);
  for (uint64_t i = 0; i < kKeys; i++) {
    ASSERT_TRUE(db->Put(leveldb::WriteOptions(), Key(i), value(i)).ok());
  }
  db->CompactRange(nullptr, nullptr);
}

class LevelDBDamageTest : public ::testing::TestWithParam<std::string> {
 protected:
  static std::string Value(uint64_t i) { return "value-" + std::to_string(i); }

  // What reading kAbsent absent keys cost: the filter queries LevelDB made
  // (and how many said "may match") and the data blocks it read.
  struct AbsentReads {
    uint64_t probes, positives, reads;
  };
  static constexpr uint64_t kAbsent = 2000;

  // Opens the DB at `path`, reads every present key (which also opens
  // every table, so that the counts below are data blocks only), then
  // NeighbourKey(0 .. kAbsent-1): absent keys inside the tables' key
  // ranges, so that each of them reaches a table's filter.
  AbsentReads ReadAll(const leveldb::Options& o, const std::string& path,
                      CapturingPolicy* policy, harness::CountingEnv* env) {
    leveldb::DB* raw = nullptr;
    EXPECT_TRUE(leveldb::DB::Open(o, path, &raw).ok());
    std::unique_ptr<leveldb::DB> db(raw);
    if (!db) return {};
    leveldb::ReadOptions ro;
    ro.verify_checksums = o.paranoid_checks;
    ro.fill_cache = false;
    std::string v;
    for (uint64_t i = 0; i < kKeys; i++) {
      const leveldb::Status s = db->Get(ro, Key(i), &v);
      EXPECT_TRUE(s.ok()) << "false negative? " << Key(i) << ": "
                          << s.ToString();
      if (!s.ok()) return {};
      EXPECT_EQ(v, Value(i));
    }
    policy->ResetCounts();
    env->Reset();
    for (uint64_t i = 0; i < kAbsent; i++) {
      EXPECT_TRUE(db->Get(ro, NeighbourKey(i), &v).IsNotFound());
    }
    const AbsentReads r{policy->probes(), policy->positives(), env->reads()};
    // A damaged filter must not turn the DB's reads into errors either.
    std::string stats;
    EXPECT_TRUE(db->GetProperty("leveldb.stats", &stats));
    return r;
  }

  // Writes the DB and reads it (the filters work), damages its filters,
  // reopens it and reads every key again. With paranoid checks LevelDB
  // must drop every damaged filter (it never asks one); without, it
  // hands the damaged bytes to our reader, which must answer "may match"
  // to every query. Either way every absent key costs a data-block read
  // and no present key is lost.
  void Run(bool paranoid, Damage d) {
    SCOPED_TRACE(std::string(DamageName(d)) +
                 (paranoid ? ", paranoid checks" : ", no checks"));
    ScratchDir dir;
    const std::string path = dir.Sub("db");
    CapturingPolicy policy(GetParam());
    harness::CountingEnv env;
    const std::unique_ptr<leveldb::Cache> no_cache(leveldb::NewLRUCache(0));
    leveldb::Options o;
    o.create_if_missing = true;
    o.filter_policy = &policy;
    o.compression = leveldb::kNoCompression;
    o.paranoid_checks = paranoid;
    o.env = &env;
    o.block_cache = no_cache.get();
    ASSERT_NO_FATAL_FAILURE(WriteLevelDB(o, path, Value));
    const std::vector<std::string> filters = policy.filters();
    ASSERT_GT(filters.size(), 10u);

    // Before the damage the filters are used: an absent key costs a
    // data-block read only where its filter said "may match".
    const AbsentReads before = ReadAll(o, path, &policy, &env);
    std::printf("[absent] %s: %llu probes, %llu may match, %llu reads\n",
                GetParam().c_str(),
                static_cast<unsigned long long>(before.probes),
                static_cast<unsigned long long>(before.positives),
                static_cast<unsigned long long>(before.reads));
    ASSERT_GE(before.probes, kAbsent * 99 / 100);  // a few fall between tables
    EXPECT_EQ(before.reads, before.positives);
    // The 10-bit kinds pass ~1.3% of these keys (26), cuckoo:12 none; a
    // refused filter would pass all 2,000.
    EXPECT_LE(before.positives, kAbsent / 40);

    // Every filter the tables hold: LevelDB writes one per 2 KiB of data
    // blocks, 121 for these ~250 KB of tables (the policy also made the
    // filters of tables that compaction has since deleted).
    ASSERT_GE(DamageTables(path, ".ldb", filters, d), 100u)
        << "the filters were not found in the table files";

    const AbsentReads after = ReadAll(o, path, &policy, &env);
    if (paranoid) {
      EXPECT_EQ(after.probes, 0u) << "LevelDB kept a damaged filter";
    } else {
      EXPECT_EQ(after.probes, before.probes) << "LevelDB dropped the filter";
      EXPECT_EQ(after.positives, after.probes)
          << "our reader used a damaged filter";
    }
    EXPECT_EQ(after.reads, before.probes);
  }
};

TEST_P(LevelDBDamageTest, ParanoidChecksDropADamagedFilter) {
  for (Damage d :
       {Damage::kPayloadBit, Damage::kPayloadFlip, Damage::kCheckByte}) {
    Run(/*paranoid=*/true, d);
  }
}

TEST_P(LevelDBDamageTest, DamagedFilterHandedOverReadsAsMayMatch) {
  for (Damage d : {Damage::kPayloadBit, Damage::kCheckByte,
                   Damage::kTrailerZeros, Damage::kAllOnes}) {
    Run(/*paranoid=*/false, d);
  }
}

INSTANTIATE_TEST_SUITE_P(AllKinds, LevelDBDamageTest,
                         ::testing::ValuesIn(AllKindSpecs()));

// One bit flipped at a time inside the stored filters, LevelDB's default
// options (no checksum verified): each flip is made in the table file,
// the DB reopened and every key read, then the bit restored. sstfilter's
// filters check their own bytes, so no flip loses a key; LevelDB's own
// Bloom filter ("leveldb"), which has no check, loses keys in the same
// experiment, as many as its set bits predict (the control: the flips
// reach the reader). SSTFILTER_FLIPS=<n> sets the flips per kind (the
// figures of docs/RELIABILITY.md: 1000).
class LevelDBBitFlipTest : public ::testing::TestWithParam<std::string> {};

TEST_P(LevelDBBitFlipTest, NoFlipLosesAKey) {
  const uint64_t flips = FlipsPerKind();
  ScratchDir dir;
  const std::string path = dir.Sub("db");
  CapturingPolicy policy(GetParam());
  leveldb::Options o;
  o.create_if_missing = true;
  o.filter_policy = &policy;
  ASSERT_NO_FATAL_FAILURE(
      WriteLevelDB(o, path, [](uint64_t) { return std::string("v"); }));
  // Where each live filter sits.
  std::vector<Place> places;
  for (const auto& entry : fs::directory_iterator(path)) {
    if (entry.path().extension() != ".ldb") continue;
    const std::string bytes = ReadFile(entry.path());
    for (const std::string& f : policy.filters()) {
      if (f.size() < 16) continue;  // could match elsewhere
      const size_t at = bytes.find(f);
      if (at != std::string::npos)
        places.push_back({entry.path(), at, f.size()});
    }
  }
  ASSERT_GE(places.size(), 50u);  // 75 for these 20,000 keys
  std::mt19937_64 rng(20261202);
  uint64_t lossy_flips = 0, keys_lost = 0;
  for (uint64_t flip = 0; flip < flips; flip++) {
    const Place& p = places[rng() % places.size()];
    const uint64_t bit = rng() % (8 * p.size);
    InvertBit(p, bit);
    uint64_t lost = 0;
    {
      leveldb::DB* raw = nullptr;
      ASSERT_TRUE(leveldb::DB::Open(o, path, &raw).ok());
      std::unique_ptr<leveldb::DB> db(raw);
      std::string v;
      for (uint64_t i = 0; i < kKeys; i++) {
        lost += db->Get(leveldb::ReadOptions(), Key(i), &v).IsNotFound();
      }
    }
    InvertBit(p, bit);
    lossy_flips += lost != 0;
    keys_lost += lost;
  }
  PrintFlips("leveldb", GetParam(), flips, places.size(), lossy_flips,
             keys_lost);
  if (GetParam() != "leveldb") {
    EXPECT_EQ(keys_lost, 0u);
  } else {
    // The control: the flips reach the reader. LevelDB's Bloom filter (10
    // bits per key, 6 probes) has a fraction 1 - e^-0.6 = 0.45 of its bits
    // set, every one set by some key, so about that fraction of flips
    // clears a bit a present key needs: 13.5 of 30 (11 measured). At
    // least 3 sigma below that expectation must have lost keys.
    const double p = 1 - std::exp(-0.6);
    const double expected = p * static_cast<double>(flips);
    const double sigma = std::sqrt(expected * (1 - p));
    EXPECT_GE(static_cast<double>(lossy_flips), expected - 3 * sigma)
        << "the flips did not reach LevelDB's filter reader";
    EXPECT_GT(keys_lost, 0u);
  }
}

std::vector<std::string> KindsAndLevelDBBloom() {
  std::vector<std::string> specs = AllKindSpecs();
  specs.push_back("leveldb");
  return specs;
}

INSTANTIATE_TEST_SUITE_P(AllKinds, LevelDBBitFlipTest,
                         ::testing::ValuesIn(KindsAndLevelDBBloom()), SpecName);

}  // namespace
}  // namespace test
}  // namespace sstfilter
