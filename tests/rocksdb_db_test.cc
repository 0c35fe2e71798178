// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// sstfilter inside a real RocksDB on disk: no false negatives, and the
// filter really used, with a false-positive rate per probe near the kind's
// expected rate, across table layouts, read paths, file origins and
// reopenings. Counts come from RocksDB's own statistics tickers.

#include <gtest/gtest.h>
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/metadata.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/utilities/object_registry.h>
#include <rocksdb/utilities/options_util.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <thread>

#include "adapters/rocksdb/rocksdb_abi.h"
#include "adapters/rocksdb/rocksdb_forwarding.h"
#include "sstfilter/filter.h"
#include "sstfilter/rocksdb.h"
#include "tests/rocksdb_test_util.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using test::Counts;
using test::ExpectAllPresent;
using test::ExpectedFpr;
using test::ExpectFprNear;
using test::FilterCounts;
using test::MakeOptions;
using test::MissingKey;
using test::MissingKeyPresentPrefix;
using test::MustPolicy;
using test::OpenDB;
using test::PresentKey;
using test::ReadAbsent;
using test::ScratchDir;
using test::TableSetup;
using test::WriteKeys;

// Small enough that the whole suite runs in seconds, large enough that
// 20k absent probes at ~1% give ~200 false positives (noise ~7%).
constexpr uint64_t kKeys = 20000;

uint64_t Ticker(const rocksdb::Options& o, rocksdb::Tickers t) {
  return o.statistics->getTickerCount(t);
}

// Entries per filter of the current tables (one filter per file, or the
// whole file's entries for partitioned filters: the expected FPR depends
// on bits per entry, not on how the entries are split).
uint64_t EntriesPerFile(rocksdb::DB* db) {
  const auto tables = test::AllTables(db);
  return tables.empty() ? 0 : test::TotalFilterEntries(db) / tables.size();
}

// Every table was written by an sstfilter policy, and stores its filter
// under the metaindex key of our family: RocksDB's metaindex block keeps
// each key whole and uncompressed, so the file's bytes contain it.
void ExpectSstfilterTables(rocksdb::DB* db, bool partitioned = false) {
  const std::string key =
      std::string(partitioned ? "partitionedfilter." : "fullfilter.") +
      kFamilyName;
  for (const auto& [file, p] : test::AllTables(db)) {
    EXPECT_EQ(p->filter_policy_name.rfind(kRocksDBIdPrefix, 0), 0u)
        << file << ": " << p->filter_policy_name;
    EXPECT_GT(p->filter_size, 0u) << file;
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)),
                            std::istreambuf_iterator<char>());
    EXPECT_NE(bytes.find(key), std::string::npos) << file << " lacks " << key;
  }
}

// ---------------------------------------------------------------------------
// Every kind x every table layout: Get and MultiGet, whole keys and prefixes.

struct Layout {
  const char* name;
  bool partitioned;
  bool prefix;
  bool whole_key_filtering;
  bool cache_index_and_filter_blocks;
};

constexpr Layout kLayouts[] = {
    {"full", false, false, true, false},
    {"full_cached", false, false, true, true},
    {"full_prefix", false, true, true, false},
    {"full_prefix_only", false, true, false, false},
    {"full_prefix_only_cached", false, true, false, true},
    {"partitioned", true, false, true, false},
    {"partitioned_cached", true, false, true, true},
    {"partitioned_prefix", true, true, true, true},
    {"partitioned_prefix_only", true, true, false, false},
    {"partitioned_prefix_only_cached", true, true, false, true},
};

void PrintTo(const Layout& l, std::ostream* os) { *os << l.name; }

class RocksDBLayoutTest
    : public ::testing::TestWithParam<std::tuple<std::string, Layout>> {
 protected:
  const std::string& spec() const { return std::get<0>(GetParam()); }
  const Layout& layout() const { return std::get<1>(GetParam()); }

  TableSetup Setup() const {
    TableSetup t;
    t.policy = MustPolicy(spec());
    t.partitioned = layout().partitioned;
    t.prefix = layout().prefix;
    t.whole_key_filtering = layout().whole_key_filtering;
    t.cache_index_and_filter_blocks = layout().cache_index_and_filter_blocks;
    return t;
  }
};

TEST_P(RocksDBLayoutTest, NoFalseNegativesAndFilterUsed) {
  ScratchDir dir;
  const rocksdb::Options o = MakeOptions(Setup());
  auto db = OpenDB(o, dir.path());
  ASSERT_TRUE(db);
  // Two overlapping files (even and odd keys): absent probes check both.
  WriteKeys(db.get(), 0, kKeys, 2);
  WriteKeys(db.get(), 1, kKeys, 2);
  ExpectSstfilterTables(db.get(), layout().partitioned);
  ExpectAllPresent(db.get(), kKeys);
  const double expected = ExpectedFpr(spec(), EntriesPerFile(db.get()));

  if (layout().partitioned && layout().cache_index_and_filter_blocks &&
      !layout().prefix) {
    // Reading every key loaded every filter block into the block cache once:
    // per file, the partitions plus their top-level index. Their number
    // shows that RocksDB cut partitions where our ApproximateNumEntries
    // said: for metadata_block_size 4096 it asks for 3687 bytes (10% under),
    // then cuts at the next data block boundary.
    // Not with a prefix extractor: RocksDB 7.8 (to 9.5) then counts AddKey
    // calls, repeats included, against ApproximateNumEntries (prefix-only
    // partitions come out ~4x small), and asks for a cut only when the
    // count hits it exactly (`==`), which a key plus a new prefix can step
    // over (one partition for the rest of the file). Both are RocksDB's,
    // the same for its own filters.
    const auto tables = test::AllTables(db.get());
    uint64_t filter_bytes = 0, entries = 0;
    for (const auto& [f, p] : tables) {
      filter_bytes += p->filter_size;
      entries += p->num_filter_entries;
    }
    rocksdb::BlockBasedTableOptions bt;
    rocksdb::FilterBuildingContext ctx(bt);
    std::unique_ptr<rocksdb::FilterBitsBuilder> b(
        MustPolicy(spec())->GetBuilderWithContext(ctx));
    const uint64_t per_partition = b->ApproximateNumEntries(3687);
    const uint64_t files = tables.size();
    const uint64_t blocks = Ticker(o, rocksdb::BLOCK_CACHE_FILTER_ADD);
    ASSERT_GT(blocks, files);
    const uint64_t partitions = blocks - files;
    const uint64_t expected =
        files * ((entries / files + per_partition - 1) / per_partition);
    std::printf("  %llu partitions (expected %llu), %.0f bytes on average\n",
                static_cast<unsigned long long>(partitions),
                static_cast<unsigned long long>(expected),
                static_cast<double>(filter_bytes) / partitions);
    EXPECT_GE(partitions + files, expected);
    EXPECT_LE(partitions, expected + files);
    EXPECT_LT(static_cast<double>(filter_bytes) / partitions, 1.1 * 4096);
  }

  for (bool multiget : {false, true}) {
    const std::string what = std::string(multiget ? "MultiGet" : "Get");
    // Keys whose prefix is absent too: every layout filters them.
    o.statistics->Reset();
    ReadAbsent(db.get(), kKeys, MissingKey, multiget);
    FilterCounts c = Counts(o.statistics.get());
    EXPECT_EQ(c.probes(), 2 * kKeys) << what;
    EXPECT_GT(c.negatives, 0u) << what;
    ExpectFprNear(c.positive_rate(), expected, what + " absent prefix");

    // Keys whose prefix is present: only whole-key filtering rejects them.
    o.statistics->Reset();
    ReadAbsent(db.get(), kKeys, MissingKeyPresentPrefix, multiget);
    c = Counts(o.statistics.get());
    if (layout().whole_key_filtering) {
      ExpectFprNear(c.positive_rate(), expected, what + " present prefix");
    } else {
      EXPECT_EQ(c.negatives, 0u) << what
                                 << ": a prefix filter that was added "
                                    "must match";
    }
  }

  if (layout().prefix) {
    // Prefix iteration consults the filter: present prefixes give their
    // four keys, absent ones nothing.
    rocksdb::ReadOptions ro;
    ro.prefix_same_as_start = true;
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(ro));
    for (uint64_t g = 0; g < 1000; g++) {
      it->Seek(test::MakeKey(8 * g, 0));
      int found = 0;
      for (; it->Valid(); it->Next()) found++;
      ASSERT_EQ(found, 4) << "prefix " << 8 * g;
    }
    o.statistics->Reset();
    for (uint64_t g = 0; g < 1000; g++) {
      it->Seek(test::MakeKey(8 * g + 1, 0));
      ASSERT_FALSE(it->Valid());
    }
    ASSERT_TRUE(it->status().ok());
#if ROCKSDB_MAJOR * 100 + ROCKSDB_MINOR >= 803
    // 8.3+ counts seeks a filter answered in tickers of their own.
    EXPECT_GT(Ticker(o, rocksdb::NON_LAST_LEVEL_SEEK_FILTERED) +
                  Ticker(o, rocksdb::LAST_LEVEL_SEEK_FILTERED),
              0u);
#else
    EXPECT_GT(Ticker(o, rocksdb::BLOOM_FILTER_PREFIX_USEFUL), 0u);
#endif
  }
}

std::vector<std::tuple<std::string, Layout>> AllCases() {
  std::vector<std::tuple<std::string, Layout>> cases;
  for (const std::string& spec : test::AllKindSpecs()) {
    for (const Layout& l : kLayouts) cases.emplace_back(spec, l);
  }
  return cases;
}

std::string CaseName(
    const ::testing::TestParamInfo<std::tuple<std::string, Layout>>& info) {
  std::string s = std::get<0>(info.param) + "_" + std::get<1>(info.param).name;
  for (char& c : s) {
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return s;
}

INSTANTIATE_TEST_SUITE_P(AllKinds, RocksDBLayoutTest,
                         ::testing::ValuesIn(AllCases()), CaseName);

// ---------------------------------------------------------------------------
// Per kind: where files come from, reopening, options, threads.

class RocksDBTest : public ::testing::TestWithParam<std::string> {
 protected:
  const std::string& spec() const { return GetParam(); }
  TableSetup Setup() const {
    TableSetup t;
    t.policy = MustPolicy(spec());
    return t;
  }

  // Absent Gets: the filter rejects most, at the kind's rate.
  void ExpectFiltering(rocksdb::DB* db, const rocksdb::Options& o,
                       const std::string& spec_written,
                       const std::string& what) {
    o.statistics->Reset();
    ReadAbsent(db, kKeys, MissingKey, false);
    const FilterCounts c = Counts(o.statistics.get());
    EXPECT_GT(c.negatives, 0u) << what;
    ExpectFprNear(c.positive_rate(),
                  ExpectedFpr(spec_written, EntriesPerFile(db)), what);
  }
  // Absent Gets that no filter answered.
  void ExpectNoFiltering(rocksdb::DB* db, const rocksdb::Options& o,
                         const std::string& what) {
    o.statistics->Reset();
    ReadAbsent(db, 2000, MissingKey, false);
    EXPECT_EQ(Counts(o.statistics.get()).negatives, 0u) << what;
  }
};

TEST_P(RocksDBTest, FlushAndMultiLevelCompaction) {
  ScratchDir dir;
  rocksdb::Options o = MakeOptions(Setup());
  o.num_levels = 4;
  auto db = OpenDB(o, dir.path());
  ASSERT_TRUE(db);
  // Four flushes, compacted to L2; two more, compacted to L1; one in L0.
  // Each round writes every 7th key, so every file spans the key range.
  for (uint64_t r = 0; r < 4; r++) WriteKeys(db.get(), r, kKeys, 7);
  rocksdb::CompactRangeOptions cro;
  cro.change_level = true;
  cro.target_level = 2;
  ASSERT_TRUE(db->CompactRange(cro, nullptr, nullptr).ok());
  for (uint64_t r = 4; r < 6; r++) WriteKeys(db.get(), r, kKeys, 7);
  rocksdb::ColumnFamilyMetaData meta;
  db->GetColumnFamilyMetaData(&meta);
  std::vector<std::string> l0;
  for (const auto& f : meta.levels[0].files) l0.push_back(f.name);
  ASSERT_EQ(l0.size(), 2u);
  ASSERT_TRUE(db->CompactFiles(rocksdb::CompactionOptions(), l0, 1).ok());
  ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), "", "empty key").ok());
  WriteKeys(db.get(), 6, kKeys, 7);
  for (int level = 0; level <= 2; level++) {
    std::string files;
    ASSERT_TRUE(db->GetProperty(
        "rocksdb.num-files-at-level" + std::to_string(level), &files));
    EXPECT_NE(files, "0") << "level " << level;
  }
  ExpectSstfilterTables(db.get());
  ExpectAllPresent(db.get(), kKeys);
  std::string v;
  ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), "", &v).ok());
  EXPECT_EQ(v, "empty key");
  ExpectFiltering(db.get(), o, spec(), "three levels");
  // Each absent Get probes the filter of one file per level (but for the
  // few keys below a file's smallest key).
  EXPECT_GE(Counts(o.statistics.get()).probes(), 3 * kKeys - 100);
}

TEST_P(RocksDBTest, SstFileWriterAndIngest) {
  ScratchDir dir;
  const rocksdb::Options o = MakeOptions(Setup());
  const std::string sst = dir.Sub("external.sst");
  {
    rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), o);
    ASSERT_TRUE(writer.Open(sst).ok());
    for (uint64_t i = 0; i < kKeys; i++) {  // sorted, as SstFileWriter needs
      ASSERT_TRUE(writer.Put(PresentKey(i), test::ValueOf(i)).ok());
    }
    rocksdb::ExternalSstFileInfo info;
    ASSERT_TRUE(writer.Finish(&info).ok());
    EXPECT_EQ(info.num_entries, kKeys);
  }
  auto db = OpenDB(o, dir.Sub("db"));
  ASSERT_TRUE(db);
  ASSERT_TRUE(
      db->IngestExternalFile({sst}, rocksdb::IngestExternalFileOptions()).ok());
  ExpectSstfilterTables(db.get());
  ExpectAllPresent(db.get(), kKeys);
  ExpectFiltering(db.get(), o, spec(), "ingested file");
}

TEST_P(RocksDBTest, DetectFilterConstructCorruption) {
  // RocksDB then calls MaybePostVerify on every filter; ours checks every
  // key against the bytes, so a sound build must pass it.
  ScratchDir dir;
  for (bool partitioned : {false, true}) {
    TableSetup t = Setup();
    t.partitioned = partitioned;
    t.detect_filter_construct_corruption = true;
    const rocksdb::Options o = MakeOptions(t);
    const std::string path = dir.Sub(partitioned ? "p" : "f");
    auto db = OpenDB(o, path);
    ASSERT_TRUE(db);
    WriteKeys(db.get(), 0, kKeys);
    ExpectAllPresent(db.get(), kKeys);
    ExpectFiltering(db.get(), o, spec(), partitioned ? "partitioned" : "full");
  }
}

TEST_P(RocksDBTest, ReopenWithBuiltinBloomThenBack) {
  ScratchDir dir;
  const rocksdb::Options ours = MakeOptions(Setup());
  {
    auto db = OpenDB(ours, dir.path());
    WriteKeys(db.get(), 0, kKeys);
  }
  TableSetup builtin_setup;
  builtin_setup.policy.reset(rocksdb::NewBloomFilterPolicy(10));
  const rocksdb::Options builtin = MakeOptions(builtin_setup);
  {
    // RocksDB's Bloom does not read our filters ("fullfilter.sstfilter.v1"
    // is not its key): correct reads, no filtering.
    auto db = OpenDB(builtin, dir.path());
    ASSERT_TRUE(db);
    ExpectAllPresent(db.get(), kKeys);
    ExpectNoFiltering(db.get(), builtin, "our file, built-in policy");
    // Compaction rewrites the file with the built-in filter.
    rocksdb::CompactRangeOptions cro;
    cro.bottommost_level_compaction =
        rocksdb::BottommostLevelCompaction::kForce;
    ASSERT_TRUE(db->CompactRange(cro, nullptr, nullptr).ok());
    for (const auto& [f, p] : test::AllTables(db.get())) {
      EXPECT_EQ(p->filter_policy_name.rfind(kRocksDBIdPrefix, 0),
                std::string::npos);
    }
    builtin.statistics->Reset();
    ReadAbsent(db.get(), 2000, MissingKey, false);
    EXPECT_GT(Counts(builtin.statistics.get()).negatives, 0u);
  }
  {
    // And ours does not read RocksDB's.
    auto db = OpenDB(ours, dir.path());
    ASSERT_TRUE(db);
    ExpectAllPresent(db.get(), kKeys);
    ExpectNoFiltering(db.get(), ours, "built-in file, our policy");
  }
}

TEST_P(RocksDBTest, ReopenWithNoPolicy) {
  ScratchDir dir;
  {
    auto db = OpenDB(MakeOptions(Setup()), dir.path());
    WriteKeys(db.get(), 0, kKeys);
  }
  const rocksdb::Options none = MakeOptions(TableSetup{});
  auto db = OpenDB(none, dir.path());
  ASSERT_TRUE(db);
  ExpectAllPresent(db.get(), kKeys);
  ExpectNoFiltering(db.get(), none, "no policy");
}

TEST_P(RocksDBTest, ReopenWithEveryOtherKind) {
  // One family: a policy of any kind reads the filters of any other, and
  // they filter at the rate of the kind that WROTE them.
  ScratchDir dir;
  {
    auto db = OpenDB(MakeOptions(Setup()), dir.path());
    WriteKeys(db.get(), 0, kKeys);
  }
  for (const std::string& other : test::AllKindSpecs()) {
    TableSetup t;
    t.policy = MustPolicy(other);
    const rocksdb::Options o = MakeOptions(t);
    auto db = OpenDB(o, dir.path());
    ASSERT_TRUE(db);
    ExpectAllPresent(db.get(), kKeys);
    ExpectFiltering(db.get(), o, spec(),
                    "written by " + spec() + ", read by " + other);
  }
}

// A registry that knows our ids, without touching the process-wide default
// (this binary never registers there, so the "unknown id" cases are real).
rocksdb::ConfigOptions ConfigWithSstfilter() {
  rocksdb::ConfigOptions co;
  co.registry = rocksdb::ObjectRegistry::NewInstance();
  co.registry->AddLibrary("sstfilter", RegisterRocksDBFilterPolicies, "");
  return co;
}

const rocksdb::BlockBasedTableOptions* TableOptionsOf(
    const rocksdb::ColumnFamilyOptions& o) {
  return o.table_factory->GetOptions<rocksdb::BlockBasedTableOptions>();
}

TEST_P(RocksDBTest, OptionsFileRoundTrip) {
  for (const std::string& spec_text : {spec(), spec() + ":seed=77"}) {
    SCOPED_TRACE(spec_text);
    ScratchDir dir;
    TableSetup t;
    t.policy = MustPolicy(spec_text);
    const std::string id = t.policy->GetId();
    {
      auto db = OpenDB(MakeOptions(t), dir.path());
      WriteKeys(db.get(), 0, kKeys);
    }
    // With our ids registered: the same policy comes back, and works.
    rocksdb::DBOptions db_options;
    std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
    ASSERT_TRUE(rocksdb::LoadLatestOptions(ConfigWithSstfilter(), dir.path(),
                                           &db_options, &cfs)
                    .ok());
    ASSERT_EQ(cfs.size(), 1u);
    const auto* bt = TableOptionsOf(cfs[0].options);
    ASSERT_NE(bt, nullptr);
    ASSERT_NE(bt->filter_policy, nullptr);
    EXPECT_EQ(bt->filter_policy->GetId(), id);
    EXPECT_STREQ(bt->filter_policy->Name(), t.policy->Name());
    EXPECT_STREQ(bt->filter_policy->CompatibilityName(), kFamilyName);

    rocksdb::Options reopened(db_options, cfs[0].options);
    reopened.statistics = rocksdb::CreateDBStatistics();
    auto db = OpenDB(reopened, dir.path());
    ASSERT_TRUE(db);
    ExpectAllPresent(db.get(), kKeys);
    ExpectFiltering(db.get(), reopened, spec(), "reopened from OPTIONS");
    db.reset();

    // Without them, RocksDB silently drops the filter -- even with
    // ignore_unsupported_options=false, since RocksDB 7.8 ignores every
    // error of a by-name option read from an OPTIONS file. The hazard
    // docs/ROCKSDB.md warns about, pinned so a change in RocksDB is noticed.
    for (bool ignore : {true, false}) {
      cfs.clear();
      rocksdb::ConfigOptions plain;
      plain.ignore_unsupported_options = ignore;
      ASSERT_TRUE(
          rocksdb::LoadLatestOptions(plain, dir.path(), &db_options, &cfs)
              .ok());
      EXPECT_EQ(TableOptionsOf(cfs[0].options)->filter_policy, nullptr);
    }
  }
}

TEST_P(RocksDBTest, ConcurrentReaders) {
  // RocksDB shares one FilterBitsReader per filter block between threads.
  ScratchDir dir;
  for (bool cached : {false, true}) {
    TableSetup t = Setup();
    t.cache_index_and_filter_blocks = cached;
    const rocksdb::Options o = MakeOptions(t);
    auto db = OpenDB(o, dir.Sub(cached ? "cached" : "plain"));
    ASSERT_TRUE(db);
    WriteKeys(db.get(), 0, kKeys);
    o.statistics->Reset();
    constexpr int kThreads = 4;
    std::atomic<uint64_t> errors{0};
    std::vector<std::thread> threads;
    for (int th = 0; th < kThreads; th++) {
      threads.emplace_back([&, th] {
        rocksdb::ReadOptions ro;
        std::string v;
        std::vector<std::string> keys;
        for (uint64_t i = th; i < kKeys; i += kThreads) {
          if (!db->Get(ro, PresentKey(i), &v).ok()) errors++;
          if (!db->Get(ro, MissingKey(i), &v).IsNotFound()) errors++;
          keys.push_back(i % 2 ? PresentKey(i) : MissingKey(i));
          if (keys.size() == 32 || i + kThreads >= kKeys) {
            std::vector<rocksdb::Slice> s(keys.begin(), keys.end());
            std::vector<rocksdb::PinnableSlice> vals(s.size());
            std::vector<rocksdb::Status> st(s.size());
            db->MultiGet(ro, db->DefaultColumnFamily(), s.size(), s.data(),
                         vals.data(), st.data());
            for (size_t j = 0; j < s.size(); j++) {
              const bool present = test::IsPresentKey(keys[j]);
              if (present ? !st[j].ok() : !st[j].IsNotFound()) errors++;
            }
            keys.clear();
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(errors.load(), 0u);
    EXPECT_GT(Counts(o.statistics.get()).negatives, kKeys / 2);
  }
}

INSTANTIATE_TEST_SUITE_P(AllKinds, RocksDBTest,
                         ::testing::ValuesIn(test::AllKindSpecs()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string s = info.param;
                           for (char& c : s) {
                             if (!isalnum(static_cast<unsigned char>(c)))
                               c = '_';
                           }
                           return s;
                         });

// ---------------------------------------------------------------------------
// RocksDB really calls OUR builder and reader, through our declarations of
// its classes: a policy that forwards to ours and counts every call.

struct CallCounts {
  std::atomic<uint64_t> builders{0}, keys_added{0}, finishes{0};
  std::atomic<uint64_t> readers{0}, single_probes{0}, batched_calls{0},
      batched_keys{0};
};

class CountingBuilder : public internal::ForwardingBitsBuilder {
 public:
  CountingBuilder(rocksdb::FilterBitsBuilder* inner, CallCounts* c)
      : ForwardingBitsBuilder(inner), c_(c) {}
  void AddKey(const rocksdb::Slice& key) override {
    c_->keys_added++;
    inner()->AddKey(key);
  }
  rocksdb::Slice Finish(std::unique_ptr<const char[]>* buf) override {
    c_->finishes++;
    return inner()->Finish(buf);
  }
  rocksdb::Slice Finish(std::unique_ptr<const char[]>* buf,
                        rocksdb::Status* status) override {
    c_->finishes++;
    return inner()->Finish(buf, status);
  }

 private:
  CallCounts* c_;
};

class CountingReader : public rocksdb::FilterBitsReader {
 public:
  CountingReader(rocksdb::FilterBitsReader* inner, CallCounts* c)
      : inner_(inner), c_(c) {}
  bool MayMatch(const rocksdb::Slice& entry) override {
    c_->single_probes++;
    return inner_->MayMatch(entry);
  }
  void MayMatch(int n, rocksdb::Slice** keys, bool* may_match) override {
    c_->batched_calls++;
    c_->batched_keys += n;
    inner_->MayMatch(n, keys, may_match);
  }

 private:
  std::unique_ptr<rocksdb::FilterBitsReader> inner_;
  CallCounts* c_;
};

class CountingPolicy : public rocksdb::FilterPolicy {
 public:
  CountingPolicy(std::shared_ptr<const rocksdb::FilterPolicy> inner,
                 CallCounts* c)
      : inner_(std::move(inner)), c_(c) {}
  const char* Name() const override { return "CountingPolicy"; }
  const char* CompatibilityName() const override {
    return inner_->CompatibilityName();
  }
  rocksdb::FilterBitsBuilder* GetBuilderWithContext(
      const rocksdb::FilterBuildingContext& ctx) const override {
    c_->builders++;
    return new CountingBuilder(inner_->GetBuilderWithContext(ctx), c_);
  }
  rocksdb::FilterBitsReader* GetFilterBitsReader(
      const rocksdb::Slice& contents) const override {
    c_->readers++;
    return new CountingReader(inner_->GetFilterBitsReader(contents), c_);
  }

 private:
  std::shared_ptr<const rocksdb::FilterPolicy> inner_;
  CallCounts* c_;
};

class RocksDBCallsOurCodeTest : public RocksDBTest {};

TEST_P(RocksDBCallsOurCodeTest, BuilderAndReaderThroughOurDeclarations) {
  for (bool partitioned : {false, true}) {
    SCOPED_TRACE(partitioned ? "partitioned" : "full");
    ScratchDir dir;
    CallCounts calls;
    TableSetup t;
    t.policy = std::make_shared<CountingPolicy>(MustPolicy(spec()), &calls);
    t.partitioned = partitioned;
    const rocksdb::Options o = MakeOptions(t);
    auto db = OpenDB(o, dir.path());
    ASSERT_TRUE(db);
    WriteKeys(db.get(), 0, kKeys);
    EXPECT_EQ(calls.builders.load(), 1u);
    EXPECT_EQ(calls.keys_added.load(), kKeys);
    if (partitioned) {
      EXPECT_GT(calls.finishes.load(), 3u);  // one per partition
    } else {
      EXPECT_EQ(calls.finishes.load(), 1u);
    }
    // The metaindex key RocksDB stored is ours: the file reads back with a
    // reader from our policy (a mismatch would silently skip the filter).
    ExpectAllPresent(db.get(), kKeys);
    EXPECT_GT(calls.readers.load(), 0u);
    const uint64_t single_before = calls.single_probes.load();
    o.statistics->Reset();
    ReadAbsent(db.get(), kKeys, MissingKey, false);
    EXPECT_EQ(calls.single_probes.load() - single_before, kKeys);
    const FilterCounts get = Counts(o.statistics.get());
    EXPECT_GT(get.negatives, 0u);

    // MultiGet uses the batched overload, with whole batches.
    const uint64_t batched_before = calls.batched_keys.load();
    o.statistics->Reset();
    ReadAbsent(db.get(), kKeys, MissingKey, true);
    EXPECT_GT(calls.batched_calls.load(), 0u);
    EXPECT_EQ(calls.batched_keys.load() - batched_before, kKeys);
    const FilterCounts multi = Counts(o.statistics.get());
    // Same filter, same keys: the batched path answers exactly like the
    // single one.
    EXPECT_EQ(multi.negatives, get.negatives);
  }
}

INSTANTIATE_TEST_SUITE_P(AllKinds, RocksDBCallsOurCodeTest,
                         ::testing::ValuesIn(test::AllKindSpecs()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string s = info.param;
                           for (char& c : s) {
                             if (!isalnum(static_cast<unsigned char>(c)))
                               c = '_';
                           }
                           return s;
                         });

}  // namespace
}  // namespace sstfilter
