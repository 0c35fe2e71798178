// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// by_level specs in real RocksDB databases: each table's filter has the
// bits per key of the rule in docs/LEVEL_SIZING.md ("The rule in RocksDB"),
// read back from the table properties (a filter's size is a function of
// its spec and key count), and no key is ever lost across levels, reopens,
// compactions, ingestion and universal compaction.

#include <gtest/gtest.h>
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/utilities/object_registry.h>
#include <rocksdb/utilities/options_util.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "adapters/rocksdb/rocksdb_compat.h"
#include "sstfilter/params.h"
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
using test::SstfilterLogLines;
using test::TableSetup;
using test::WaitIdle;
using test::WriteKeys;

constexpr uint64_t kKeys = 20000;

// The model tree of the rule: levels top..bottom, each `ratio` times the
// one above, and `l0` L0 files of `l0_keys` times the top level's keys.
// Returns {L0 file bits, bits at depth 0 (bottom), depth 1, ...}.
std::vector<double> ModelBits(const FilterSpec& spec, int top, int bottom,
                              double ratio, int l0, double l0_keys) {
  std::vector<uint64_t> runs;
  double keys = 1e12;
  for (int level = bottom; level >= top; level--) {
    runs.push_back(static_cast<uint64_t>(keys));
    if (level > top) keys /= ratio;
  }
  for (int f = 0; f < l0; f++) {
    runs.push_back(static_cast<uint64_t>(keys * l0_keys));
  }
  LevelPlan plan;
  EXPECT_TRUE(PlanLevelBits(spec.kind, runs, spec.bits_per_key, &plan).ok());
  std::vector<double> out = {plan.bits_per_key.back()};
  for (int d = 0; d <= bottom - top; d++) out.push_back(plan.bits_per_key[d]);
  return out;
}

// Level compaction: each level size_ratio times the one above, and
// l0_files L0 files holding together 1/size_ratio of the top level.
std::vector<double> RuleBits(const FilterSpec& spec, int top, int bottom) {
  return ModelBits(spec, top, bottom, spec.size_ratio, spec.l0_files,
                   1 / spec.size_ratio / spec.l0_files);
}

// Universal compaction: each run twice the one above, and
// (l0_files + 1) / 2 L0 files of half the top level each.
std::vector<double> UniversalRuleBits(const FilterSpec& spec, int top,
                                      int bottom) {
  return ModelBits(spec, top, bottom, 2, (spec.l0_files + 1) / 2, 0.5);
}

struct TableFile {
  int level;
  uint64_t entries;
  uint64_t filter_bytes;
};

// Every table of the default column family with its level.
std::vector<TableFile> Tables(rocksdb::DB* db) {
  std::map<std::string, int> level_of;
  rocksdb::ColumnFamilyMetaData meta;
  db->GetColumnFamilyMetaData(&meta);
  for (const rocksdb::LevelMetaData& l : meta.levels) {
    for (const rocksdb::SstFileMetaData& f : l.files) {
      level_of[f.db_path + f.name] = l.level;
    }
  }
  std::vector<TableFile> out;
  for (const auto& [file, p] : test::AllTables(db)) {
    EXPECT_EQ(level_of.count(file), 1u) << file;
    out.push_back({level_of[file], p->num_filter_entries, p->filter_size});
  }
  return out;
}

// The filter size a builder of `spec` at `bits` writes for `n` keys.
uint64_t FilterBytes(FilterSpec spec, double bits, uint64_t n) {
  spec.bits_per_key = bits;
  FilterParams p;
  EXPECT_TRUE(ParamsForSpec(spec, n, &p).ok()) << bits;
  return p.filter_bytes;
}

// The one table at `level` has the filter of `bits` bits per key.
void ExpectLevelBits(rocksdb::DB* db, const FilterSpec& spec, int level,
                     double bits, const std::string& what) {
  int found = 0;
  for (const TableFile& t : Tables(db)) {
    if (t.level != level) continue;
    found++;
    EXPECT_EQ(t.filter_bytes, FilterBytes(spec, bits, t.entries))
        << what << ": level " << level << ", " << t.entries << " keys, want "
        << bits << " bits per key";
  }
  EXPECT_GT(found, 0) << what << ": no table at level " << level;
}

std::vector<std::string> FilesAt(rocksdb::DB* db, int level) {
  rocksdb::ColumnFamilyMetaData meta;
  db->GetColumnFamilyMetaData(&meta);
  std::vector<std::string> out;
  for (const auto& f : meta.levels[static_cast<size_t>(level)].files) {
    out.push_back(f.name);
  }
  return out;
}

// CompactFiles of every file at level `from` into level `to`.
rocksdb::Status CompactLevelTo(rocksdb::DB* db, int from, int to) {
  return db->CompactFiles(rocksdb::CompactionOptions(), FilesAt(db, from), to);
}

class RocksDBByLevelTest : public ::testing::TestWithParam<std::string> {
 protected:
  FilterSpec Spec() const {
    FilterSpec s;
    EXPECT_TRUE(ParseFilterSpec(GetParam(), &s).ok());
    return s;
  }
};

TEST_P(RocksDBByLevelTest, LeveledTreeFollowsTheRule) {
  const FilterSpec spec = Spec();
  ScratchDir dir;
  TableSetup t;
  t.policy = MustPolicy(GetParam());
  rocksdb::Options o = MakeOptions(t);
  o.num_levels = 4;
  auto db = OpenDB(o, dir.path());
  ASSERT_TRUE(db);

  // A flush before any compaction: nothing known, the average.
  WriteKeys(db.get(), 0, kKeys, 2);
  ExpectLevelBits(db.get(), spec, 0, spec.bits_per_key, "first flush");
  // To L3, the bottom: the tree is L3 alone (and L0).
  ASSERT_TRUE(CompactLevelTo(db.get(), 0, 3).ok());
  const std::vector<double> alone = RuleBits(spec, 3, 3);
  ExpectLevelBits(db.get(), spec, 3, alone[1], "L3 alone");
  // A flush now: an L0 file of that tree.
  WriteKeys(db.get(), 1, kKeys, 20);
  ExpectLevelBits(db.get(), spec, 0, alone[0], "L0 over L3");
  // To L1: the tree is L1..L3, L1 two levels above the bottom.
  ASSERT_TRUE(CompactLevelTo(db.get(), 0, 1).ok());
  const std::vector<double> full = RuleBits(spec, 1, 3);
  ExpectLevelBits(db.get(), spec, 1, full[3], "L1 of L1..L3");
  // L1 to L2: one level above the bottom.
  ASSERT_TRUE(CompactLevelTo(db.get(), 1, 2).ok());
  ExpectLevelBits(db.get(), spec, 2, full[2], "L2 of L1..L3");
  WriteKeys(db.get(), 3, kKeys, 20);
  ExpectLevelBits(db.get(), spec, 0, full[0], "L0 over L1..L3");
  // The rule's bits fall with depth.
  EXPECT_GT(full[0], full[3]);
  EXPECT_GT(full[3], full[2]);
  EXPECT_GT(full[2], full[1]);
  EXPECT_LT(full[1], spec.bits_per_key);

  // Every key, at every level; absent keys are filtered by every table.
  auto check = [&](rocksdb::DB* d, const rocksdb::Options& opts,
                   const std::string& what) {
    SCOPED_TRACE(what);
    for (uint64_t i = 0; i < kKeys; i++) {
      std::string v;
      const bool present = i % 2 == 0 || i % 20 == 1 || i % 20 == 3;
      ASSERT_EQ(d->Get(rocksdb::ReadOptions(), PresentKey(i), &v).ok(), present)
          << PresentKey(i);
    }
    opts.statistics->Reset();
    ReadAbsent(d, kKeys, MissingKey, false);
    const double tables = static_cast<double>(Tables(d).size());
    EXPECT_GT(static_cast<double>(opts.statistics->getTickerCount(
                  rocksdb::BLOOM_FILTER_USEFUL)),
              0.9 * tables * kKeys);
    ReadAbsent(d, kKeys, MissingKey, true);
  };
  check(db.get(), o, "built");
  // Reopened with a new policy object, which has learned nothing yet: it
  // reads the tables of every size.
  db.reset();
  TableSetup fresh;
  fresh.policy = MustPolicy(GetParam());
  rocksdb::Options o2 = MakeOptions(fresh);
  o2.num_levels = 4;
  db = OpenDB(o2, dir.path());
  ASSERT_TRUE(db);
  check(db.get(), o2, "reopened");
  // Everything to the bottom, level by level (L0 -> L1 -> L2 -> L3): the
  // policy learns the levels again, and the last outputs are the bottom's.
  rocksdb::CompactRangeOptions cro;
  cro.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  ASSERT_TRUE(db->CompactRange(cro, nullptr, nullptr).ok());
  // Which levels it saw on the way depends on RocksDB's choice of
  // compactions: the bottom's bits of tree L<top>..L3, for some top.
  for (const TableFile& f : Tables(db.get())) {
    EXPECT_EQ(f.level, 3);
    bool found = false;
    for (int top = 1; top <= 3; top++) {
      found |= f.filter_bytes ==
               FilterBytes(spec, RuleBits(spec, top, 3)[1], f.entries);
    }
    EXPECT_TRUE(found) << f.filter_bytes << " bytes for " << f.entries;
    EXPECT_LT(f.filter_bytes, FilterBytes(spec, spec.bits_per_key, f.entries));
  }
  check(db.get(), o2, "compacted");
}

TEST_P(RocksDBByLevelTest, IngestedFilesGetTheAverage) {
  const FilterSpec spec = Spec();
  ScratchDir dir;
  TableSetup t;
  t.policy = MustPolicy(GetParam());
  rocksdb::Options o = MakeOptions(t);
  const std::string sst = dir.Sub("external.sst");
  {
    rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), o);
    ASSERT_TRUE(writer.Open(sst).ok());
    for (uint64_t i = 0; i < kKeys; i++) {
      ASSERT_TRUE(writer.Put(PresentKey(i), test::ValueOf(i)).ok());
    }
    ASSERT_TRUE(writer.Finish().ok());
  }
  auto db = OpenDB(o, dir.Sub("db"));
  ASSERT_TRUE(db);
  ASSERT_TRUE(
      db->IngestExternalFile({sst}, rocksdb::IngestExternalFileOptions()).ok());
  const std::vector<TableFile> tables = Tables(db.get());
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0].filter_bytes,
            FilterBytes(spec, spec.bits_per_key, tables[0].entries));
  ExpectAllPresent(db.get(), kKeys);
  ReadAbsent(db.get(), kKeys, MissingKey, false);
}

TEST_P(RocksDBByLevelTest, AutomaticCompactionsKeepEveryKey) {
  // RocksDB shapes the tree itself: small memtables and levels, automatic
  // compactions, dynamic level sizes. Deeper tables get fewer bits, and
  // the tree's filter memory stays near the average the spec names.
  const FilterSpec spec = Spec();
  ScratchDir dir;
  TableSetup t;
  t.policy = MustPolicy(GetParam());
  rocksdb::Options o = MakeOptions(t);
  o.disable_auto_compactions = false;
  o.write_buffer_size = 64 << 10;
  o.target_file_size_base = 64 << 10;
  o.max_bytes_for_level_base = 256 << 10;
  o.level_compaction_dynamic_level_bytes = true;
  auto db = OpenDB(o, dir.path());
  ASSERT_TRUE(db);
  constexpr uint64_t kMany = 200000;
  test::LoadOverlappingKeys(db.get(), kMany);
  std::map<int, std::pair<double, double>> per_level;  // bits, keys
  double bits = 0, keys = 0;
  for (const TableFile& f : Tables(db.get())) {
    per_level[f.level].first += 8.0 * static_cast<double>(f.filter_bytes);
    per_level[f.level].second += static_cast<double>(f.entries);
    bits += 8.0 * static_cast<double>(f.filter_bytes);
    keys += static_cast<double>(f.entries);
  }
  double above = 1e9, top = 0, b = 0;
  int levels = 0;
  for (const auto& [level, bk] : per_level) {
    if (level == 0) continue;
    b = bk.first / bk.second;
    std::printf("L%d: %.2f bits/key, %.0f keys\n", level, b, bk.second);
    if (levels++ == 0) top = b;
    // Each table keeps the bits of the tree it was built for: the upper
    // levels, filled at different moments of the load, sit within a few
    // percent of each other in either order (2.5% inverted in one run on
    // RocksDB 9.10 under load; bytes of whole filters vary too).
    EXPECT_LE(b, above * 1.05) << "level " << level;
    above = b;
  }
  // The last level holds ~90% of the keys: 0.41-0.64 of the top non-L0
  // level's bits per key over the four kinds (uniform bits would be 1).
  ASSERT_GE(levels, 2);
  EXPECT_LE(b, 0.75 * top);
  const double avg_bits = FilterBytes(spec, spec.bits_per_key, 1 << 20) * 8.0 /
                          static_cast<double>(1 << 20);
  EXPECT_NEAR(bits / keys, avg_bits, 0.15 * avg_bits);
  ExpectAllPresent(db.get(), kMany);
  ReadAbsent(db.get(), kKeys, MissingKey, true);
}

TEST_P(RocksDBByLevelTest, IdAndOptionsFile) {
  for (const std::string& text :
       {GetParam(), GetParam() + ":size_ratio=8:l0_files=2"}) {
    SCOPED_TRACE(text);
    auto policy = MustPolicy(text);
    FilterSpec spec;
    ASSERT_TRUE(ParseFilterSpec(text, &spec).ok());
    const std::string id = policy->GetId();
    // '=' in an id needs RocksDB's "id=" form.
    EXPECT_EQ(id, (text.find('=') != std::string::npos ? "id=" : "") +
                      std::string(kRocksDBIdPrefix) + spec.ToString());
    ScratchDir dir;
    TableSetup t;
    t.policy = policy;
    {
      auto db = OpenDB(MakeOptions(t), dir.path());
      WriteKeys(db.get(), 0, kKeys);
    }
    rocksdb::ConfigOptions co;
    co.registry = rocksdb::ObjectRegistry::NewInstance();
    co.registry->AddLibrary("sstfilter", RegisterRocksDBFilterPolicies, "");
    rocksdb::DBOptions db_options;
    std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
    ASSERT_TRUE(
        rocksdb::LoadLatestOptions(co, dir.path(), &db_options, &cfs).ok());
    const auto* bt = cfs[0]
                         .options.table_factory
                         ->GetOptions<rocksdb::BlockBasedTableOptions>();
    ASSERT_NE(bt, nullptr);
    ASSERT_NE(bt->filter_policy, nullptr);
    EXPECT_EQ(bt->filter_policy->GetId(), id);
  }
}

// ---- The level listener: plans on the tree's real key counts -------------

// The keys of the tree's runs, in the order the sizer plans them: levels
// >= 1 from the top, then the L0 files from the oldest (the newest last).
struct Runs {
  std::vector<uint64_t> keys;
  std::vector<int> level;                    // of keys[i]
  std::vector<std::vector<uint64_t>> files;  // file numbers of keys[i]
};

// Column family `cf` (nullptr: the default one): its files, and its
// tables' properties.
rocksdb::ColumnFamilyMetaData Meta(rocksdb::DB* db,
                                   rocksdb::ColumnFamilyHandle* cf) {
  rocksdb::ColumnFamilyMetaData meta;
  db->GetColumnFamilyMetaData(cf != nullptr ? cf : db->DefaultColumnFamily(),
                              &meta);
  return meta;
}

rocksdb::TablePropertiesCollection CfTables(rocksdb::DB* db,
                                            rocksdb::ColumnFamilyHandle* cf) {
  rocksdb::TablePropertiesCollection props;
  EXPECT_TRUE(db->GetPropertiesOfAllTables(
                    cf != nullptr ? cf : db->DefaultColumnFamily(), &props)
                  .ok());
  return props;
}

Runs RealRuns(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf = nullptr) {
  const rocksdb::ColumnFamilyMetaData meta = Meta(db, cf);
  Runs out;
  for (const rocksdb::LevelMetaData& l : meta.levels) {
    uint64_t keys = 0;
    std::vector<uint64_t> files;
    for (const rocksdb::SstFileMetaData& f : l.files) {
      keys += f.num_entries;
      files.push_back(f.file_number);
    }
    if (l.level >= 1 && keys > 0) {
      out.keys.push_back(keys);
      out.level.push_back(l.level);
      out.files.push_back(files);
    }
  }
  std::vector<std::pair<uint64_t, uint64_t>> l0;  // file number, keys
  for (const rocksdb::SstFileMetaData& f : meta.levels[0].files) {
    l0.push_back({f.file_number, f.num_entries});
  }
  std::sort(l0.begin(), l0.end());
  for (const auto& [number, keys] : l0) {
    out.keys.push_back(keys);
    out.level.push_back(0);
    out.files.push_back({number});
  }
  return out;
}

// The plan's average: the spec's, minus what the filters of the runs
// `counted` (files that stay, and that the listener saw created) spend
// over their runs' plan at the spec's average, per key of the tree.
double PlanAverage(rocksdb::DB* db, const FilterSpec& spec, const Runs& runs,
                   const std::vector<size_t>& counted,
                   rocksdb::ColumnFamilyHandle* cf = nullptr) {
  std::map<uint64_t, std::pair<uint64_t, double>> filters;  // keys, bits
  for (const auto& [file, p] : CfTables(db, cf)) {
    filters[std::stoull(file.substr(file.rfind('/') + 1))] = {
        p->num_filter_entries, 8.0 * static_cast<double>(p->filter_size)};
  }
  LevelPlan plan;
  EXPECT_TRUE(
      PlanLevelBits(spec.kind, runs.keys, spec.bits_per_key, &plan).ok());
  double over = 0, keys = 0;
  for (uint64_t k : runs.keys) keys += static_cast<double>(k);
  for (size_t i : counted) {
    for (uint64_t n : runs.files[i]) {
      over += filters[n].second -
              8.0 * FilterBytes(spec, plan.bits_per_key[i], filters[n].first);
    }
  }
  return spec.bits_per_key -
         over / keys * (spec.bits_per_key * keys / plan.budget_bits);
}

// The bits PlanLevelBits gives run `i` of the real tree at `average`.
double PlannedBits(const FilterSpec& spec, const Runs& runs, size_t i,
                   double average) {
  LevelPlan plan;
  EXPECT_TRUE(PlanLevelBits(spec.kind, runs.keys, average, &plan).ok());
  return plan.bits_per_key[i];
}

// The bits of a bottom run of `n` keys written by a universal merge of
// every run: its bits in the plan at `average` of it and newer runs
// holding n / 2 keys in all: n / 4, n / 8, ... down to `flush` keys (at
// least n / 64), the rest in one run.
double UniversalBottomBits(const FilterSpec& spec, uint64_t n, uint64_t flush,
                           double average) {
  std::vector<uint64_t> keys = {n};
  uint64_t newer = 0;
  for (uint64_t run = n / 4; newer < n / 2; run /= 2) {
    const uint64_t k =
        run >= std::max<uint64_t>(flush, n / 64 + 1) ? run : n / 2 - newer;
    keys.insert(keys.begin(), k);
    newer += k;
  }
  LevelPlan plan;
  EXPECT_TRUE(PlanLevelBits(spec.kind, keys, average, &plan).ok());
  return plan.bits_per_key.back();
}

uint64_t NewestL0(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf = nullptr) {
  const rocksdb::ColumnFamilyMetaData meta = Meta(db, cf);
  uint64_t newest = 0;
  for (const auto& f : meta.levels[0].files) {
    newest = std::max(newest, f.file_number);
  }
  return newest;
}

// The tables at `level` (or only file `number` if not 0) have filters of
// `bits` bits per key, within 0.5% (the plan's average is rounded to the
// byte sizes of the filters it was computed from).
void ExpectBits(rocksdb::DB* db, const FilterSpec& spec, int level,
                uint64_t number, double bits, const std::string& what,
                rocksdb::ColumnFamilyHandle* cf = nullptr) {
  std::map<uint64_t, int> level_of;
  const rocksdb::ColumnFamilyMetaData meta = Meta(db, cf);
  for (const auto& l : meta.levels) {
    for (const auto& f : l.files) level_of[f.file_number] = l.level;
  }
  int found = 0;
  for (const auto& [file, p] : CfTables(db, cf)) {
    const uint64_t n = std::stoull(file.substr(file.rfind('/') + 1));
    if (level_of[n] != level || (number != 0 && n != number)) continue;
    found++;
    const double want =
        static_cast<double>(FilterBytes(spec, bits, p->num_filter_entries));
    EXPECT_NEAR(static_cast<double>(p->filter_size), want, 0.005 * want)
        << what << ": " << p->num_filter_entries << " keys, want " << bits
        << " bits per key";
  }
  EXPECT_GT(found, 0) << what;
}

// Present: the base (even i) and the batches written so far (i % 20 ==
// 1, 3, ...); every other key reads NotFound.
void ExpectKeys(rocksdb::DB* db, uint64_t range, int batches) {
  for (uint64_t i = 0; i < range; i++) {
    const bool present =
        i % 2 == 0 || (i % 20) / 2 < static_cast<uint64_t>(batches);
    std::string v;
    ASSERT_EQ(db->Get(rocksdb::ReadOptions(), PresentKey(i), &v).ok(), present)
        << PresentKey(i);
  }
  ReadAbsent(db, range, MissingKey, false);
}

// How a test attaches the level listener: in code (NewRocksDBLevelListener),
// or with the policy from option strings (kLevelListenerId) and, at each
// reopen, from the OPTIONS file RocksDB wrote, as a user with no code.
enum class Attach { kCode, kOptions };

// A registry with sstfilter's ids, as the plugin gives the stock tools.
rocksdb::ConfigOptions SstfilterConfig() {
  rocksdb::ConfigOptions co;
  co.registry = rocksdb::ObjectRegistry::NewInstance();
  co.registry->AddLibrary("sstfilter", RegisterRocksDBFilterPolicies, "");
  return co;
}

// The exact line of docs/ROCKSDB.md.
const std::string kListenerLine =
    std::string("listeners={") + kLevelListenerId + "}";

// `o` with the policy `text` and the level listener set by option strings.
void ConfigureFromStrings(const std::string& text, rocksdb::Options* o) {
  const rocksdb::ConfigOptions co = SstfilterConfig();
  rocksdb::DBOptions db;
  rocksdb::ColumnFamilyOptions cf;
  ASSERT_TRUE(rocksdb::GetDBOptionsFromString(co, *o, kListenerLine, &db).ok());
  ASSERT_TRUE(rocksdb::GetColumnFamilyOptionsFromString(
                  co, *o,
                  "block_based_table_factory={filter_policy={" +
                      MustPolicy(text)->GetId() + "}}",
                  &cf)
                  .ok());
  *o = rocksdb::Options(db, cf);
  ASSERT_EQ(o->listeners.size(), 1u);
  EXPECT_EQ(o->listeners[0]->GetId(), kLevelListenerId);
}

// The options of the OPTIONS file RocksDB last wrote in `dir`, which must
// hold the listener line and the policy `text`.
void LoadOptionsFile(const std::string& dir, const std::string& text,
                     rocksdb::Options* o) {
  rocksdb::DBOptions db;
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  ASSERT_TRUE(
      rocksdb::LoadLatestOptions(SstfilterConfig(), dir, &db, &cfs).ok());
  ASSERT_EQ(db.listeners.size(), 1u);
  EXPECT_EQ(db.listeners[0]->GetId(), kLevelListenerId);
  *o = rocksdb::Options(db, cfs[0].options);
  const auto* bt =
      o->table_factory->GetOptions<rocksdb::BlockBasedTableOptions>();
  ASSERT_NE(bt, nullptr);
  ASSERT_NE(bt->filter_policy, nullptr);
  EXPECT_EQ(bt->filter_policy->GetId(), MustPolicy(text)->GetId());
  // The file holds the line as docs/ROCKSDB.md writes it.
  std::string file;
  ASSERT_TRUE(
      rocksdb::GetLatestOptionsFileName(dir, rocksdb::Env::Default(), &file)
          .ok());
  std::string contents;
  ASSERT_TRUE(rocksdb::ReadFileToString(rocksdb::Env::Default(),
                                        dir + "/" + file, &contents)
                  .ok());
  EXPECT_NE(contents.find("  " + kListenerLine + "\n"), std::string::npos)
      << contents;
}

// `o`, made for `policy` (of the spec `text`), gets the level listener as
// `attach` says: in code, or by option strings at the first open and from
// the OPTIONS file RocksDB wrote in `dir` at a `reopen`.
void AttachListener(const std::string& text,
                    const std::shared_ptr<const rocksdb::FilterPolicy>& policy,
                    Attach attach, bool reopen, const std::string& dir,
                    rocksdb::Options* o) {
  if (attach == Attach::kCode) {
    std::shared_ptr<rocksdb::EventListener> listener;
    ASSERT_TRUE(NewRocksDBLevelListener(policy, &listener).ok());
    o->listeners.push_back(listener);
  } else if (!reopen) {
    ConfigureFromStrings(text, o);
  } else {
    LoadOptionsFile(dir, text, o);
  }
}

// by_level on the listener's tree: each new table gets the bits of its run
// in the plan of the real tree, also after a reopen.
void ListenerPlansOnTheRealTree(const std::string& text, Attach attach) {
  FilterSpec spec;
  ASSERT_TRUE(ParseFilterSpec(text, &spec).ok());
  ScratchDir dir;
  constexpr uint64_t kRange = 200000;  // base: 100000 keys; batches 10000
  bool opened = false;
  auto open = [&](std::unique_ptr<rocksdb::DB>* db, bool compactions) {
    TableSetup t;
    t.policy = MustPolicy(text);
    rocksdb::Options o = MakeOptions(t);
    AttachListener(text, t.policy, attach, opened, dir.path(), &o);
    opened = true;
    o.num_levels = 3;
    o.level0_file_num_compaction_trigger = 3;
    o.max_bytes_for_level_base = 1 << 30;  // only L0 -> L1 compactions
    // Static level sizes (RocksDB 8.4+ defaults to dynamic ones, which
    // would compact L0 straight into L2, the base level of a small tree).
    o.level_compaction_dynamic_level_bytes = false;
    o.disable_auto_compactions = !compactions;
    *db = OpenDB(o, dir.path());
  };
  std::unique_ptr<rocksdb::DB> db;
  open(&db, false);
  ASSERT_TRUE(db);
  // The base, in flushes of 10000 keys, moved to L2.
  for (uint64_t b = 0; b < 10; b++) {
    WriteKeys(db.get(), 2 * b, kRange, 20);
  }
  rocksdb::CompactRangeOptions to_l2;
  to_l2.change_level = true;
  to_l2.target_level = 2;
  ASSERT_TRUE(db->CompactRange(to_l2, nullptr, nullptr).ok());
  ASSERT_TRUE(db->SetOptions({{"disable_auto_compactions", "false"}}).ok());
  int batches = 0;
  auto batch = [&] { WriteKeys(db.get(), 1 + 2 * batches++, kRange, 20); };

  // L2 100000, L0 10000 + the new 10000: the new file's run in that plan.
  batch();
  batch();
  Runs runs = RealRuns(db.get());
  ASSERT_EQ(runs.keys, (std::vector<uint64_t>{100000, 10000, 10000}));
  uint64_t newest = NewestL0(db.get());
  const double l0_bits =
      PlannedBits(spec, runs, 2, PlanAverage(db.get(), spec, runs, {0, 1}));
  ExpectBits(db.get(), spec, 0, newest, l0_bits, "L0 over L2");
  EXPECT_GT(l0_bits, spec.bits_per_key + 1);
  // A third flush: L0 -> L1 (30000 keys) over L2.
  batch();
  WaitIdle(db.get());
  runs = RealRuns(db.get());
  ASSERT_EQ(runs.level, (std::vector<int>{1, 2}));
  // L0 is empty: the plan counts l0_files / 2 = 2 flushes of 10000 keys.
  runs.keys.insert(runs.keys.end(), {10000, 10000});
  runs.files.insert(runs.files.end(), {{}, {}});
  // The files that stayed: L2's.
  ExpectBits(db.get(), spec, 1, 0,
             PlannedBits(spec, runs, 0, PlanAverage(db.get(), spec, runs, {1})),
             "L1 of 3");
  ExpectKeys(db.get(), kRange, batches);

  // Reopened with a new policy and listener: the tree is learned again
  // from the first flush (the model would give the average: no
  // compaction seen yet).
  db.reset();
  open(&db, true);
  ASSERT_TRUE(db);
  ExpectKeys(db.get(), kRange, batches);
  batch();
  batch();
  runs = RealRuns(db.get());
  ASSERT_EQ(runs.keys, (std::vector<uint64_t>{30000, 100000, 10000, 10000}));
  // Only files it saw created count in the average: the first L0 file.
  ExpectBits(db.get(), spec, 0, NewestL0(db.get()),
             PlannedBits(spec, runs, 3, PlanAverage(db.get(), spec, runs, {2})),
             "L0 after reopen");
  batch();
  WaitIdle(db.get());
  runs = RealRuns(db.get());
  ASSERT_EQ(runs.keys, (std::vector<uint64_t>{60000, 100000}));
  runs.keys.insert(runs.keys.end(), {10000, 10000});
  // None of the files that stayed (L2) was created by this listener.
  ExpectBits(db.get(), spec, 1, 0,
             PlannedBits(spec, runs, 0, spec.bits_per_key), "L1 after reopen");
  ExpectKeys(db.get(), kRange, batches);
}

TEST_P(RocksDBByLevelTest, ListenerPlansOnTheRealTree) {
  ListenerPlansOnTheRealTree(GetParam(), Attach::kCode);
}

TEST_P(RocksDBByLevelTest, ListenerFromOptionsPlansOnTheRealTree) {
  ListenerPlansOnTheRealTree(GetParam(), Attach::kOptions);
}

// Universal compaction with the listener: each sorted run (each L0 file,
// each non-empty level >= 1) gets the bits of its run in the plan of the
// real tree, as under level compaction: flushes, compactions into a level
// and compactions into L0 alike, also after a reopen.
void ListenerPlansUniversalRuns(const std::string& text, Attach attach) {
  FilterSpec spec;
  ASSERT_TRUE(ParseFilterSpec(text, &spec).ok());
  ScratchDir dir;
  constexpr uint64_t kRange = 200000;  // base: 100000 keys; batches 10000
  bool opened = false;
  auto open = [&](std::unique_ptr<rocksdb::DB>* db) {
    TableSetup t;
    t.policy = MustPolicy(text);
    rocksdb::Options o = MakeOptions(t);
    AttachListener(text, t.policy, attach, opened, dir.path(), &o);
    if (attach == Attach::kOptions && opened) {
      EXPECT_EQ(o.compaction_style, rocksdb::kCompactionStyleUniversal);
    }
    opened = true;
    o.compaction_style = rocksdb::kCompactionStyleUniversal;
    o.num_levels = 4;
    o.level0_file_num_compaction_trigger = 3;  // sorted runs
    // Runs merge while the next is at most 1.2x their sum.
    o.compaction_options_universal.size_ratio = 20;
    o.disable_auto_compactions = true;
    *db = OpenDB(o, dir.path());
  };
  std::unique_ptr<rocksdb::DB> db;
  open(&db);
  ASSERT_TRUE(db);
  // The base, in flushes of 10000 keys, all compacted into L3 (universal's
  // CompactRange writes the last level): the tree is L3 and, with no L0
  // file, l0_files / 2 = 2 flushes of 10000 keys.
  for (uint64_t b = 0; b < 10; b++) {
    WriteKeys(db.get(), 2 * b, kRange, 20);
  }
  ASSERT_TRUE(
      db->CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr).ok());
  Runs runs = RealRuns(db.get());
  ASSERT_EQ(runs.level, (std::vector<int>{3}));
  runs.keys.insert(runs.keys.end(), {10000, 10000});
  const double l3_bits = PlannedBits(spec, runs, 0, spec.bits_per_key);
  ExpectBits(db.get(), spec, 3, 0, l3_bits, "L3 alone");
  EXPECT_LT(l3_bits, spec.bits_per_key - 0.5);

  ASSERT_TRUE(db->SetOptions({{"disable_auto_compactions", "false"}}).ok());
  int batches = 0;
  auto batch = [&] { WriteKeys(db.get(), 1 + 2 * batches++, kRange, 20); };
  // A flush: the new L0 file and one more to come over L3.
  batch();
  runs = RealRuns(db.get());
  ASSERT_EQ(runs.keys, (std::vector<uint64_t>{100000, 10000}));
  runs.keys.push_back(10000);
  runs.files.push_back({});
  const double l0_bits =
      PlannedBits(spec, runs, 1, PlanAverage(db.get(), spec, runs, {0}));
  ExpectBits(db.get(), spec, 0, NewestL0(db.get()), l0_bits, "L0 over L3");
  EXPECT_GT(l0_bits, spec.bits_per_key + 0.5);
  // A second: three sorted runs, so the two L0 files merge into L2 (the
  // level above the next run, L3).
  batch();
  WaitIdle(db.get());
  runs = RealRuns(db.get());
  ASSERT_EQ(runs.level, (std::vector<int>{2, 3}));
  ASSERT_EQ(runs.keys, (std::vector<uint64_t>{20000, 100000}));
  runs.keys.insert(runs.keys.end(), {10000, 10000});
  runs.files.insert(runs.files.end(), {{}, {}});
  const double l2_bits =
      PlannedBits(spec, runs, 0, PlanAverage(db.get(), spec, runs, {1}));
  ExpectBits(db.get(), spec, 2, 0, l2_bits, "L2 over L3");
  EXPECT_GT(l0_bits, l2_bits + 0.5);
  EXPECT_GT(l2_bits, l3_bits + 0.5);
  ExpectKeys(db.get(), kRange, batches);

  // Reopened with a new policy and listener (from the OPTIONS file: the
  // universal style with it). A flush of 30000 keys, then two of ~2000:
  // at five sorted runs the two small L0 files merge, and the next run
  // being the big L0 file, into L0. That compaction's table gets its
  // run's bits, not a flush's.
  db.reset();
  open(&db);
  ASSERT_TRUE(db);
  {
    rocksdb::WriteOptions wo;
    wo.disableWAL = true;
    for (int b = 0; b < 3; b++) {
      const uint64_t first = 1 + 2 * static_cast<uint64_t>(batches++);
      for (uint64_t i = first; i < kRange; i += 20) {
        ASSERT_TRUE(db->Put(wo, PresentKey(i), test::ValueOf(i)).ok());
      }
    }
    ASSERT_TRUE(db->Flush(rocksdb::FlushOptions()).ok());
  }
  // Keys past kRange; the newer file a little larger, so that the older
  // is within universal's size ratio of it.
  WriteKeys(db.get(), kRange, kRange + 2000);
  WriteKeys(db.get(), kRange + 2000, kRange + 4010);
  ASSERT_TRUE(db->SetOptions({{"level0_file_num_compaction_trigger", "5"},
                              {"disable_auto_compactions", "false"}})
                  .ok());
  WaitIdle(db.get());
  runs = RealRuns(db.get());
  ASSERT_EQ(runs.level, (std::vector<int>{2, 3, 0, 0}));
  ASSERT_EQ(runs.keys, (std::vector<uint64_t>{20000, 100000, 30000, 4010}));
  // Of the files that stay, this listener saw only the big L0 file made.
  const double merged_bits =
      PlannedBits(spec, runs, 3, PlanAverage(db.get(), spec, runs, {2}));
  ExpectBits(db.get(), spec, 0, NewestL0(db.get()), merged_bits,
             "L0 compaction");
  EXPECT_GT(merged_bits, spec.bits_per_key + 0.5);
  ExpectKeys(db.get(), kRange, batches);
  for (uint64_t i = kRange; i < kRange + 4010; i++) {
    std::string v;
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), PresentKey(i), &v).ok())
        << PresentKey(i);
  }
}

TEST_P(RocksDBByLevelTest, ListenerPlansUniversalRuns) {
  ListenerPlansUniversalRuns(GetParam(), Attach::kCode);
}

TEST_P(RocksDBByLevelTest, ListenerFromOptionsPlansUniversalRuns) {
  ListenerPlansUniversalRuns(GetParam(), Attach::kOptions);
}

// Universal compaction's own merge of every run (not CompactRange's, as
// above) writes the bottom run for the middle of its life: the bits of a
// tree whose newer runs hold half its keys, fewer than the plan of the
// tree as it is gives it. CompactRange rewriting it next plans the tree as
// it is, though its runs are those of the last plan.
TEST_P(RocksDBByLevelTest, ListenerPlansTheUniversalBottomRunForLater) {
  FilterSpec spec;
  ASSERT_TRUE(ParseFilterSpec(GetParam(), &spec).ok());
  ScratchDir dir;
  TableSetup t;
  t.policy = MustPolicy(GetParam());
  rocksdb::Options o = MakeOptions(t);
  AttachListener(GetParam(), t.policy, Attach::kCode, false, dir.path(), &o);
  o.compaction_style = rocksdb::kCompactionStyleUniversal;
  o.num_levels = 4;
  o.level0_file_num_compaction_trigger = 8;  // sorted runs
  o.disable_auto_compactions = false;
  std::unique_ptr<rocksdb::DB> db = OpenDB(o, dir.path());
  ASSERT_TRUE(db);
  // Eight flushes of 5000 keys, then a merge of all eight into L3.
  constexpr uint64_t kFlush = 5000, kKeys = 8 * kFlush;
  for (uint64_t b = 0; b < kKeys; b += kFlush) {
    WriteKeys(db.get(), b, b + kFlush);
  }
  WaitIdle(db.get(), /*universal=*/true);
  Runs runs = RealRuns(db.get());
  ASSERT_EQ(runs.level, (std::vector<int>{3}));
  ASSERT_EQ(runs.keys, (std::vector<uint64_t>{kKeys}));
  const double bits =
      UniversalBottomBits(spec, kKeys, kFlush, spec.bits_per_key);
  ExpectBits(db.get(), spec, 3, 0, bits, "L3 by a merge of every run");
  runs.keys.insert(runs.keys.end(), {kFlush, kFlush});
  const double as_it_is = PlannedBits(spec, runs, 0, spec.bits_per_key);
  EXPECT_LT(bits, as_it_is - 0.1);
  // CompactRange rewriting that run, the tree unchanged: planned as it is.
  rocksdb::CompactRangeOptions force;
  force.bottommost_level_compaction =
      rocksdb::BottommostLevelCompaction::kForce;
  ASSERT_TRUE(db->CompactRange(force, nullptr, nullptr).ok());
  ASSERT_EQ(RealRuns(db.get()).level, (std::vector<int>{3}));
  ExpectBits(db.get(), spec, 3, 0, as_it_is, "L3 by CompactRange after it");
  for (uint64_t i = 0; i < kKeys; i++) {
    std::string v;
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), PresentKey(i), &v).ok())
        << PresentKey(i);
  }
}

// One column family of an open database, and the keys written to it.
struct Tree {
  rocksdb::DB* db;
  rocksdb::ColumnFamilyHandle* cf;
  uint64_t base;      // keys of its L2
  uint64_t next = 0;  // keys written so far
};

// Writes `n` new keys to `t` and flushes them into one L0 file.
void Flush(Tree* t, uint64_t n) {
  rocksdb::WriteOptions wo;
  wo.disableWAL = true;
  for (uint64_t i = t->next; i < t->next + n; i++) {
    ASSERT_TRUE(t->db->Put(wo, t->cf, PresentKey(i), test::ValueOf(i)).ok());
  }
  t->next += n;
  ASSERT_TRUE(t->db->Flush(rocksdb::FlushOptions(), t->cf).ok());
}

// The number of the newest table at `level` of `t`.
uint64_t NewestAt(const Tree& t, int level) {
  const rocksdb::ColumnFamilyMetaData meta = Meta(t.db, t.cf);
  uint64_t newest = 0;
  for (const auto& f : meta.levels[static_cast<size_t>(level)].files) {
    newest = std::max(newest, f.file_number);
  }
  return newest;
}

// Two databases open at once, one with two column families, all with the
// same by_level policy and the listener from option strings, on trees of
// very different shapes (L1 and L2 runs). Each flushes in turn, the
// listener publishing each tree at its flush; only then does each compact
// its L0 files into L1 with CompactFiles, which tells no listener, so the
// output's bits come from the last plan of its own channel. Each must be
// the L1 bits of its own tree's plan: a channel shared by the databases
// (or by all trees) would hand the first trees the plan of the tree that
// flushed last.
TEST_P(RocksDBByLevelTest, OptionsListenerKeepsTreesApart) {
  const FilterSpec spec = Spec();
  ScratchDir dir_a, dir_b;
  auto open = [&](const std::string& path, const std::vector<std::string>& cfs,
                  std::vector<rocksdb::ColumnFamilyHandle*>* handles,
                  std::unique_ptr<rocksdb::DB>* db) {
    TableSetup t;
    t.policy = MustPolicy(GetParam());
    rocksdb::Options o = MakeOptions(t);
    ConfigureFromStrings(GetParam(), &o);
    o.create_missing_column_families = true;
    o.num_levels = 3;
    std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
    for (const std::string& cf : cfs) descriptors.push_back({cf, o});
    ASSERT_TRUE(OpenInto(db, [&](auto* out) {
                  return rocksdb::DB::Open(o, path, descriptors, handles, out);
                }).ok());
  };
  std::unique_ptr<rocksdb::DB> a, b;
  std::vector<rocksdb::ColumnFamilyHandle*> a_cfs, b_cfs;
  open(dir_a.path(), {rocksdb::kDefaultColumnFamilyName, "other"}, &a_cfs, &a);
  open(dir_b.path(), {rocksdb::kDefaultColumnFamilyName}, &b_cfs, &b);
  ASSERT_TRUE(a && b);
  // {tree, L2 keys, L1 keys}: L1 a fifth, a third and a hundredth of L2.
  struct Shape {
    Tree tree;
    uint64_t l1;
  };
  std::vector<Shape> shapes = {{{a.get(), a_cfs[0], 100000}, 20000},
                               {{a.get(), a_cfs[1], 30000}, 10000},
                               {{b.get(), b_cfs[0], 200000}, 2000}};
  constexpr uint64_t kL0 = 5000;  // keys of each L0 file
  for (Shape& s : shapes) {
    Tree& t = s.tree;
    for (int f = 0; f < 10; f++) Flush(&t, t.base / 10);
    rocksdb::CompactRangeOptions to_l2;
    to_l2.change_level = true;
    to_l2.target_level = 2;
    ASSERT_TRUE(t.db->CompactRange(to_l2, t.cf, nullptr, nullptr).ok());
    Flush(&t, s.l1);
    rocksdb::ColumnFamilyMetaData meta = Meta(t.db, t.cf);
    ASSERT_TRUE(t.db->CompactFiles(rocksdb::CompactionOptions(), t.cf,
                                   {meta.levels[0].files[0].name}, 1)
                    .ok());
    Flush(&t, kL0);  // the first L0 file, and the size of the next flush
  }
  // The second L0 file of each tree, in turn: the listener publishes each
  // tree's plan at its flush. The L1 bits of that plan, counting the
  // filters of the runs that stay (all but the new file).
  std::vector<double> l1_bits;
  for (Shape& s : shapes) {
    Flush(&s.tree, kL0);
    const Runs runs = RealRuns(s.tree.db, s.tree.cf);
    ASSERT_EQ(runs.keys, (std::vector<uint64_t>{s.l1, s.tree.base, kL0, kL0}));
    l1_bits.push_back(
        PlannedBits(spec, runs, 0,
                    PlanAverage(s.tree.db, spec, runs, {0, 1, 2}, s.tree.cf)));
  }
  // The three plans differ, or the test proves nothing: a shared channel
  // would give the first two trees the third's bits.
  for (size_t i = 0; i + 1 < shapes.size(); i++) {
    EXPECT_GT(std::abs(l1_bits[i] - l1_bits.back()), 0.3) << i;
  }
  // Each tree's L0 files into L1, in turn.
  for (size_t i = 0; i < shapes.size(); i++) {
    const Tree& t = shapes[i].tree;
    SCOPED_TRACE(t.base);
    std::vector<std::string> l0;
    const rocksdb::ColumnFamilyMetaData meta = Meta(t.db, t.cf);
    for (const auto& f : meta.levels[0].files) l0.push_back(f.name);
    ASSERT_EQ(l0.size(), 2u);
    ASSERT_TRUE(
        t.db->CompactFiles(rocksdb::CompactionOptions(), t.cf, l0, 1).ok());
    ExpectBits(t.db, spec, 1, NewestAt(t, 1), l1_bits[i],
               "L0 compacted into L1", t.cf);
  }
  for (auto* h : a_cfs) ASSERT_TRUE(a->DestroyColumnFamilyHandle(h).ok());
  for (auto* h : b_cfs) ASSERT_TRUE(b->DestroyColumnFamilyHandle(h).ok());
}

// A by_level policy with no listener says so, once, in the LOG, with the
// line that fixes it; with the listener it does not.
TEST_P(RocksDBByLevelTest, NoListenerIsWrittenToTheLog) {
  for (const bool listener : {false, true}) {
    SCOPED_TRACE(listener);
    ScratchDir dir;
    TableSetup t;
    t.policy = MustPolicy(GetParam());
    rocksdb::Options o = MakeOptions(t);
    if (listener) ConfigureFromStrings(GetParam(), &o);
    {
      auto db = OpenDB(o, dir.path());
      ASSERT_TRUE(db);
      for (int f = 0; f < 3; f++) WriteKeys(db.get(), f, 3000, 3);
      ASSERT_TRUE(
          db->CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr)
              .ok());
    }
    const std::vector<std::string> lines = SstfilterLogLines(dir.path());
    if (listener) {
      EXPECT_TRUE(lines.empty()) << lines[0];
      continue;
    }
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].find("no level listener"), std::string::npos)
        << lines[0];
    EXPECT_NE(lines[0].find(kListenerLine), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find(t.policy->GetId()), std::string::npos) << lines[0];
  }
}

// RocksDB tells listeners of no CompactFiles job: a table CompactFiles
// writes before any flush or compaction since the database opened gets the
// warning (saying so), and the next flush, which the listener reports,
// the line that the tree is followed.
TEST_P(RocksDBByLevelTest, CompactFilesFirstWarnsThenTheListenerFollows) {
  ScratchDir dir;
  TableSetup t;
  t.policy = MustPolicy(GetParam());
  rocksdb::Options o = MakeOptions(t);
  ConfigureFromStrings(GetParam(), &o);
  o.info_log_level = rocksdb::InfoLogLevel::INFO_LEVEL;
  o.num_levels = 3;
  o.disable_auto_compactions = true;
  {
    auto db = OpenDB(o, dir.path());
    ASSERT_TRUE(db);
    for (int f = 0; f < 2; f++) WriteKeys(db.get(), f, 6000, 2);
  }
  auto db = OpenDB(o, dir.path());
  ASSERT_TRUE(db);
  std::vector<std::string> l0;
  rocksdb::ColumnFamilyMetaData meta;
  db->GetColumnFamilyMetaData(&meta);
  for (const rocksdb::SstFileMetaData& f : meta.levels[0].files) {
    l0.push_back(f.name);
  }
  ASSERT_EQ(l0.size(), 2u);
  ASSERT_TRUE(db->CompactFiles(rocksdb::CompactionOptions(), l0, 1).ok());
  std::vector<std::string> lines = SstfilterLogLines(dir.path());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find(t.policy->GetId() +
                          ": no level listener follows column family "
                          "\"default\" yet"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("RocksDB tells listeners of no CompactFiles job"),
            std::string::npos)
      << lines[0];
  WriteKeys(db.get(), 6000, 9000);
  lines = SstfilterLogLines(dir.path());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[1].find("is attached to this database"), std::string::npos)
      << lines[1];
  EXPECT_NE(lines[2].find(": column family \"default\" sizes its filters on "
                          "the tree that the level listener"),
            std::string::npos)
      << lines[2];
  ExpectAllPresent(db.get(), 9000);
}

// Without the listener universal compaction has the model tree of
// UniversalRuleBits: a flush before any merge gets the average, a merge's
// table at level L >= 1 the bits of depth bottom - L, a later flush and a
// merge into L0 those of an L0 file; the LOG says so and how to add the
// listener.
TEST_P(RocksDBByLevelTest, UniversalWithoutListenerFollowsItsModel) {
  const FilterSpec spec = Spec();
  ScratchDir dir;
  TableSetup t;
  t.policy = MustPolicy(GetParam());
  rocksdb::Options o = MakeOptions(t);
  o.compaction_style = rocksdb::kCompactionStyleUniversal;
  o.num_levels = 4;
  {
    auto db = OpenDB(o, dir.path());
    ASSERT_TRUE(db);
    WriteKeys(db.get(), 0, kKeys, 2);
    ExpectLevelBits(db.get(), spec, 0, spec.bits_per_key, "first flush");
    ASSERT_TRUE(
        db->CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr)
            .ok());
    const std::vector<double> alone = UniversalRuleBits(spec, 3, 3);
    ExpectLevelBits(db.get(), spec, 3, alone[1], "the bottom run alone");
    WriteKeys(db.get(), 1, kKeys, 2);
    ExpectLevelBits(db.get(), spec, 0, alone[0], "a flush over it");
    ASSERT_TRUE(CompactLevelTo(db.get(), 0, 2).ok());
    const std::vector<double> two = UniversalRuleBits(spec, 2, 3);
    ExpectLevelBits(db.get(), spec, 2, two[2], "a run above the bottom");
    // Two flushes over them, merged into L0: one L0 run, as a flush is.
    WriteKeys(db.get(), 0, kKeys / 2, 3);
    WriteKeys(db.get(), 1, kKeys / 2, 3);
    ASSERT_EQ(FilesAt(db.get(), 0).size(), 2u);
    ASSERT_TRUE(CompactLevelTo(db.get(), 0, 0).ok());
    ASSERT_EQ(FilesAt(db.get(), 0).size(), 1u);
    ExpectLevelBits(db.get(), spec, 0, two[0], "a merge into L0");
    // Small runs more than the average, the bottom less (cuckoo's whole
    // fingerprint bits may give the run above the bottom the average).
    EXPECT_GT(alone[0], spec.bits_per_key);
    EXPECT_GE(two[2], spec.bits_per_key);
    EXPECT_GT(two[2], two[1]);
    EXPECT_LT(alone[1], spec.bits_per_key);
    ExpectAllPresent(db.get(), kKeys);
    ReadAbsent(db.get(), kKeys, MissingKey, false);
  }
  const std::vector<std::string> lines = SstfilterLogLines(dir.path());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("no level listener"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("sizes its filters on a model tree of sorted runs "
                          "each twice the next newer"),
            std::string::npos)
      << lines[0];
}

// How a test gives a database the level listener, for the LOG lines.
enum class Listener { kNone, kMadeNotAdded, kOtherFamily, kCode, kOptions };

// The lines of each way, and the bits of a new L0 file over an L2 of 50000
// keys (two L0 files of 5000): the listener's plan when the database
// carries a listener, else the model's, which a listener made but not
// added to the database, or added but made for another column family,
// leaves as it is.
TEST_P(RocksDBByLevelTest, ListenerAttachesInTheLogAndMissingOneIsAWarning) {
  const FilterSpec spec = Spec();
  std::map<Listener, double> bits;  // of the newest L0 file
  for (const Listener how :
       {Listener::kNone, Listener::kMadeNotAdded, Listener::kOtherFamily,
        Listener::kCode, Listener::kOptions}) {
    SCOPED_TRACE(static_cast<int>(how));
    ScratchDir dir;
    TableSetup t;
    t.policy = MustPolicy(GetParam());
    rocksdb::Options o = MakeOptions(t);
    std::shared_ptr<rocksdb::EventListener> listener;
    if (how == Listener::kCode || how == Listener::kMadeNotAdded) {
      ASSERT_TRUE(NewRocksDBLevelListener(t.policy, &listener).ok());
      if (how == Listener::kCode) o.listeners.push_back(listener);
    } else if (how == Listener::kOtherFamily) {
      ASSERT_TRUE(NewRocksDBLevelListener(t.policy, &listener, "other").ok());
      o.listeners.push_back(listener);
    } else if (how == Listener::kOptions) {
      ConfigureFromStrings(GetParam(), &o);
    }
    o.info_log_level = rocksdb::InfoLogLevel::INFO_LEVEL;
    o.num_levels = 3;
    const std::string id = MustPolicy(GetParam())->GetId();
    {
      auto db = OpenDB(o, dir.path());
      ASSERT_TRUE(db);
      for (uint64_t b = 0; b < 10; b++) WriteKeys(db.get(), 2 * b, 100000, 20);
      rocksdb::CompactRangeOptions to_l2;
      to_l2.change_level = true;
      to_l2.target_level = 2;
      ASSERT_TRUE(db->CompactRange(to_l2, nullptr, nullptr).ok());
      WriteKeys(db.get(), 1, 100000, 20);
      WriteKeys(db.get(), 3, 100000, 20);
      const Runs runs = RealRuns(db.get());
      ASSERT_EQ(runs.keys, (std::vector<uint64_t>{50000, 5000, 5000}));
      for (const auto& [file, p] : test::AllTables(db.get())) {
        if (std::stoull(file.substr(file.rfind('/') + 1)) ==
            NewestL0(db.get())) {
          bits[how] = 8.0 * static_cast<double>(p->filter_size) /
                      static_cast<double>(p->num_filter_entries);
        }
      }
      if (how == Listener::kCode || how == Listener::kOptions) {
        ExpectBits(db.get(), spec, 0, NewestL0(db.get()),
                   PlannedBits(spec, runs, 2,
                               PlanAverage(db.get(), spec, runs, {0, 1})),
                   "newest L0");
      }
    }
    std::string warnings, attached, listened;
    for (const std::string& line : SstfilterLogLines(dir.path())) {
      if (line.find("[sstfilter] the level listener (" +
                    std::string(kLevelListenerId) + ")") == 0) {
        attached += line + "\n";
      } else if (line.find("sizes its filters on the tree that the level "
                           "listener") != std::string::npos) {
        listened += line + "\n";
      } else {
        warnings += line + "\n";
      }
    }
    switch (how) {
      case Listener::kNone:
        EXPECT_EQ(attached + listened, "");
        EXPECT_NE(warnings.find(id + ": no level listener follows column "
                                     "family \"default\" yet, so by_level "
                                     "sizes its filters on a model tree"),
                  std::string::npos)
            << warnings;
        break;
      case Listener::kOtherFamily:
        EXPECT_EQ(listened, "");
        EXPECT_NE(attached.find("it reports the tree of column family "
                                "\"other\""),
                  std::string::npos)
            << attached;
        [[fallthrough]];
      case Listener::kMadeNotAdded:
        if (how == Listener::kMadeNotAdded) {
          EXPECT_EQ(attached + listened, "");
        }
        // One warning: the listener made for this policy is not in the
        // database, the filters use the model, and how to fix it.
        EXPECT_EQ(std::count(warnings.begin(), warnings.end(), '\n'), 1)
            << warnings;
        for (const char* part :
             {"this policy has a level listener made by "
              "sstfilter::NewRocksDBLevelListener, but this database does "
              "not carry one that follows column family \"default\"",
              "sizes its filters on a model tree",
              "Fix: add the listener to options.listeners before DB::Open"}) {
          EXPECT_NE(warnings.find(id + ": "), std::string::npos) << warnings;
          EXPECT_NE(warnings.find(part), std::string::npos) << warnings;
        }
        break;
      case Listener::kCode:
        EXPECT_EQ(warnings, "");
        EXPECT_EQ(attached, "[sstfilter] the level listener (" +
                                std::string(kLevelListenerId) +
                                ") made in code for " + id +
                                " is attached to this database: it reports "
                                "the tree of column family \"default\" to "
                                "that policy\n");
        EXPECT_NE(listened.find(id), std::string::npos) << listened;
        break;
      case Listener::kOptions:
        EXPECT_EQ(warnings, "");
        EXPECT_EQ(attached,
                  "[sstfilter] the level listener (" +
                      std::string(kLevelListenerId) +
                      ") is attached to this database: it reports the tree "
                      "of each column family to the by_level policies "
                      "building its tables\n");
        EXPECT_NE(listened.find(id), std::string::npos) << listened;
        break;
    }
  }
  std::printf(
      "newest L0 bits/key: no listener %.3f, made not added %.3f, made for "
      "another column family %.3f, in code %.3f, from options %.3f\n",
      bits[Listener::kNone], bits[Listener::kMadeNotAdded],
      bits[Listener::kOtherFamily], bits[Listener::kCode],
      bits[Listener::kOptions]);
  // A listener not in the database changes nothing; one in it does.
  EXPECT_EQ(bits[Listener::kMadeNotAdded], bits[Listener::kNone]);
  EXPECT_EQ(bits[Listener::kOtherFamily], bits[Listener::kNone]);
  EXPECT_EQ(bits[Listener::kCode], bits[Listener::kOptions]);
  EXPECT_GT(std::abs(bits[Listener::kCode] - bits[Listener::kNone]), 0.5);
}

// A tree RocksDB shapes itself from 200000 Puts, with 8 L0 files before a
// compaction and small levels: its filters' bits over those of the spec's
// uniform filters, with or without the listener.
// (`listener` false: the model's, 1.04-1.13 in the same runs.)
double NaturalTreeSpend(const std::string& text, bool listener) {
  FilterSpec spec;
  EXPECT_TRUE(ParseFilterSpec(text, &spec).ok());
  ScratchDir dir;
  TableSetup t;
  t.policy = MustPolicy(text);
  rocksdb::Options o = MakeOptions(t);
  if (listener) {
    std::shared_ptr<rocksdb::EventListener> l;
    EXPECT_TRUE(NewRocksDBLevelListener(t.policy, &l).ok());
    o.listeners.push_back(l);
  }
  o.disable_auto_compactions = false;
  o.write_buffer_size = 64 << 10;
  o.target_file_size_base = 64 << 10;
  o.max_bytes_for_level_base = 256 << 10;
  o.level0_file_num_compaction_trigger = 8;
  o.level_compaction_dynamic_level_bytes = true;
  auto db = OpenDB(o, dir.path());
  if (!db) return 0;
  constexpr uint64_t kMany = 200000;
  test::LoadOverlappingKeys(db.get(), kMany);
  double bits = 0, uniform_bits = 0;
  for (const TableFile& f : Tables(db.get())) {
    bits += 8.0 * static_cast<double>(f.filter_bytes);
    uniform_bits += 8.0 * static_cast<double>(
                              FilterBytes(spec, spec.bits_per_key, f.entries));
  }
  ExpectAllPresent(db.get(), kMany);
  ReadAbsent(db.get(), kKeys, MissingKey, false);
  return bits / uniform_bits;
}

// This tree ends as its levels drain after the last Put (L5 from ~35% of
// the keys to ~7%), and the files that stay were planned while they were
// larger: measured 0.94-0.99 with the listener, 1.04-1.13 by the model
// (docs/BENCHMARKS.md has a 10^7-key tree).
TEST_P(RocksDBByLevelTest, ListenerKeepsANaturalTreeNearTheAverage) {
  const double spend = NaturalTreeSpend(GetParam(), true);
  std::printf("filter bits over uniform's: %.4f\n", spend);
  EXPECT_NEAR(spend, 1.0, 0.08);
}

// A universal tree RocksDB shapes itself (64 KiB memtables, automatic
// compactions, 6 sorted runs before one), with the listener or without
// it: each sorted run's {filter bits, keys}, and its keys' bits with
// uniform filters.
struct RunBits {
  double bits = 0, keys = 0, uniform_bits = 0;
};
std::vector<RunBits> UniversalTreeRuns(const std::string& text, bool listener) {
  FilterSpec spec;
  EXPECT_TRUE(ParseFilterSpec(text, &spec).ok());
  ScratchDir dir;
  TableSetup t;
  t.policy = MustPolicy(text);
  rocksdb::Options o = MakeOptions(t);
  if (listener) {
    std::shared_ptr<rocksdb::EventListener> l;
    EXPECT_TRUE(NewRocksDBLevelListener(t.policy, &l).ok());
    o.listeners.push_back(l);
  }
  o.compaction_style = rocksdb::kCompactionStyleUniversal;
  o.disable_auto_compactions = false;
  o.write_buffer_size = 256 << 10;  // more than a chunk's keys
  o.level0_file_num_compaction_trigger = 6;
  auto db = OpenDB(o, dir.path());
  if (!db) return {};
  // The keys in chunks, each flushed and its merges settled before the
  // next (as tools/compare loads its natural tree): the tree is then the
  // same in every run. Put without pauses, the tree took the shape of the
  // merges' pace, and in 1 of 48 runs was one run of all the keys.
  constexpr uint64_t kMany = 200000, kChunk = 2500;
  rocksdb::WriteOptions wo;
  wo.disableWAL = true;
  for (uint64_t begin = 0; begin < kMany; begin += kChunk) {
    for (uint64_t i = begin; i < std::min(kMany, begin + kChunk); i++) {
      const uint64_t k = (i * 7919) % kMany;
      EXPECT_TRUE(db->Put(wo, PresentKey(k), test::ValueOf(k)).ok());
    }
    EXPECT_TRUE(db->Flush(rocksdb::FlushOptions()).ok());
    WaitIdle(db.get(), /*universal=*/true);
  }
  std::map<uint64_t, int> level_of;
  for (const auto& lm : Meta(db.get(), nullptr).levels) {
    for (const auto& f : lm.files) level_of[f.file_number] = lm.level;
  }
  // Each L0 file a run (by its number), each level >= 1 one run.
  std::map<std::pair<int, uint64_t>, RunBits> by_run;
  for (const auto& [file, p] : CfTables(db.get(), nullptr)) {
    const uint64_t n = std::stoull(file.substr(file.rfind('/') + 1));
    RunBits& r = by_run[{level_of[n], level_of[n] == 0 ? n : 0}];
    r.bits += 8.0 * static_cast<double>(p->filter_size);
    r.keys += static_cast<double>(p->num_filter_entries);
    r.uniform_bits +=
        8.0 * static_cast<double>(
                  FilterBytes(spec, spec.bits_per_key, p->num_filter_entries));
  }
  ExpectAllPresent(db.get(), kMany);
  ReadAbsent(db.get(), kKeys, MissingKey, false);
  std::vector<RunBits> out;
  for (const auto& [run, r] : by_run) out.push_back(r);
  std::sort(out.begin(), out.end(),
            [](const RunBits& a, const RunBits& b) { return a.keys < b.keys; });
  return out;
}

// The smallest run gets more bits per key than uniform filters, the
// largest fewer (or as many), and the smallest at least 0.4 bits per key
// more than the largest for each doubling of keys between them (uniform
// filters: none). On RocksDB 7.8.3's tree of 6 runs of 2,500 to 135,000
// keys: 0.91 (ribbon) to 1.54 (blocked Bloom) per doubling; the plan's
// optimum is about 1.4, but files keep the bits of older shapes of the
// tree, and the bottom run's are planned for a larger tree. The tree's filter memory within 4% of uniform's: universal merges
// reshape the tree, the bottom run is planned for the middle of its life,
// and the correction of the plan's average reaches the new tables only.
// Measured 0.99 (cuckoo, whose whole fingerprint bits step by 8%) to 1.02
// (blocked Bloom) of uniform's (1.04 to 1.08 when the bottom run was
// planned for the whole tree); the leveled tree above, -1% to -6%.
TEST_P(RocksDBByLevelTest, ListenerPlansAUniversalTreeRunByRun) {
  const std::vector<RunBits> runs = UniversalTreeRuns(GetParam(), true);
  ASSERT_FALSE(runs.empty());
  double bits = 0, uniform_bits = 0;
  std::printf("runs (bits per key/keys):");
  for (const RunBits& r : runs) {
    std::printf(" %.2f/%.0f", r.bits / r.keys, r.keys);
    bits += r.bits;
    uniform_bits += r.uniform_bits;
  }
  std::printf("; filter bits over uniform's: %.4f\n", bits / uniform_bits);
  EXPECT_NEAR(bits / uniform_bits, 1.0, 0.04);
  // (Cuckoo may give the largest run uniform's whole fingerprint bits.)
  EXPECT_LE(runs.back().bits, runs.back().uniform_bits);
  if (runs.size() >= 2) {
    EXPECT_GT(runs.front().bits, runs.front().uniform_bits);
    EXPECT_GT(runs.front().bits / runs.front().keys,
              runs.back().bits / runs.back().keys +
                  0.4 * std::log2(runs.back().keys / runs.front().keys));
  }
}

// The same tree without the listener, on the model of
// UniversalRuleBits: the smallest run at least half a bit per key more
// than the largest for each doubling of keys between them (measured 0.80
// (ribbon) to 1.40 (blocked Bloom); uniform filters: none), and the filter
// memory within 0.85 to 1.05 of uniform's (measured 0.93 to 0.97: the
// model knows neither the runs' keys nor how many there are, and nothing
// corrects it; its bottom run holds half the keys, this tree's 68%).
TEST_P(RocksDBByLevelTest, ModelSizesAUniversalTreeRunByRun) {
  const std::vector<RunBits> runs = UniversalTreeRuns(GetParam(), false);
  ASSERT_GE(runs.size(), 2u);
  double bits = 0, uniform_bits = 0;
  std::printf("runs (bits per key/keys):");
  for (const RunBits& r : runs) {
    std::printf(" %.2f/%.0f", r.bits / r.keys, r.keys);
    bits += r.bits;
    uniform_bits += r.uniform_bits;
  }
  std::printf("; filter bits over uniform's: %.4f\n", bits / uniform_bits);
  EXPECT_GT(bits / uniform_bits, 0.85);
  EXPECT_LT(bits / uniform_bits, 1.05);
  EXPECT_GT(runs.front().bits / runs.front().keys,
            runs.back().bits / runs.back().keys +
                0.5 * std::log2(runs.back().keys / runs.front().keys));
}

TEST(RocksDBLevelListenerTest, RejectsPoliciesNotOurs) {
  std::shared_ptr<rocksdb::EventListener> listener;
  std::shared_ptr<const rocksdb::FilterPolicy> builtin(
      rocksdb::NewBloomFilterPolicy(10));
  rocksdb::Status s = NewRocksDBLevelListener(builtin, &listener);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find(builtin->GetId()), std::string::npos)
      << s.ToString();
  EXPECT_TRUE(NewRocksDBLevelListener(nullptr, &listener).IsInvalidArgument());
  EXPECT_EQ(listener, nullptr);
  EXPECT_TRUE(NewRocksDBLevelListener(MustPolicy("bloom:10"), &listener).ok());
  EXPECT_NE(listener, nullptr);
}

INSTANTIATE_TEST_SUITE_P(StaticKinds, RocksDBByLevelTest,
                         ::testing::Values("blocked_bloom:10:by_level",
                                           "bloom:8:by_level",
                                           "cuckoo:12:by_level",
                                           "ribbon:10:by_level"),
                         [](const auto& info) {
                           std::string n = info.param;
                           n = n.substr(0, n.find(':'));
                           return n;
                         });

}  // namespace
}  // namespace sstfilter
