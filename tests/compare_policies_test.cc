// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The policy list of sstfilter_compare: parsing, run planning, sizing X@Y
// at equal memory (with the engines' real built-in builders), and the
// verdict drawn from the equal-memory pairs.

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sstfilter/filter.h"
#include "tools/sstfilter_compare/bound.h"
#include "tools/sstfilter_compare/engine.h"
#include "tools/sstfilter_compare/policies.h"
#include "tools/sstfilter_compare/verdict.h"

namespace sstfilter {
namespace compare {
namespace {

PolicyRequest MustParse(const std::string& text) {
  PolicyRequest r;
  Status s = ParsePolicyEntry(text, &r);
  EXPECT_TRUE(s.ok()) << text << ": " << s.ToString();
  return r;
}

// The error message of parsing `text`, which must fail.
std::string ParseError(const std::string& text) {
  PolicyRequest r;
  Status s = ParsePolicyEntry(text, &r);
  EXPECT_FALSE(s.ok()) << text;
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << text;
  return s.message();
}

TEST(ComparePoliciesTest, ParsesEveryForm) {
  PolicyRequest r = MustParse("none");
  EXPECT_EQ(r.policy.family, Family::kNone);
  EXPECT_EQ(r.engines, unsigned{kAllEngines});

  r = MustParse("rocksdb:bloom:9.5");
  EXPECT_EQ(r.policy.family, Family::kRocksDBBloom);
  EXPECT_EQ(r.policy.bits_per_key, 9.5);
  EXPECT_EQ(r.engines, unsigned{kRocksDB});
  EXPECT_EQ(r.policy.ToString(), "rocksdb:bloom:9.5");

  r = MustParse("rocksdb:ribbon:10");
  EXPECT_EQ(r.policy.family, Family::kRocksDBRibbon);

  r = MustParse("leveldb:bloom:10");
  EXPECT_EQ(r.policy.family, Family::kLevelDBBloom);
  EXPECT_EQ(r.engines, unsigned{kLevelDB});

  r = MustParse("sstfilter.blocked_bloom:10");
  EXPECT_EQ(r.policy.family, Family::kSstfilter);
  EXPECT_EQ(r.policy.spec.kind, FilterKind::kBlockedBloom);
  EXPECT_EQ(r.policy.ToString(), "blocked_bloom:10");
  EXPECT_EQ(r.policy.FamilyName(), "blocked_bloom");
  EXPECT_EQ(r.engines, unsigned{kAllEngines});

  r = MustParse("leveldb/cuckoo:12");
  EXPECT_EQ(r.policy.spec.kind, FilterKind::kCuckoo);
  EXPECT_EQ(r.engines, unsigned{kLevelDB});

  r = MustParse("cuckoo@rocksdb:bloom:10");
  EXPECT_TRUE(r.sized);
  EXPECT_EQ(r.policy.FamilyName(), "cuckoo");
  EXPECT_EQ(r.reference.ToString(), "rocksdb:bloom:10");
  EXPECT_EQ(r.engines, unsigned{kRocksDB});

  r = MustParse("rocksdb:bloom@cuckoo:12");
  EXPECT_TRUE(r.sized);
  EXPECT_EQ(r.policy.family, Family::kRocksDBBloom);
  EXPECT_EQ(r.engines, unsigned{kRocksDB});

  // RocksDB's Ribbon at the memory of an sstfilter policy: RocksDB only.
  r = MustParse("rocksdb:ribbon@blocked_bloom:10");
  EXPECT_TRUE(r.sized);
  EXPECT_EQ(r.policy.family, Family::kRocksDBRibbon);
  EXPECT_EQ(r.policy.FamilyName(), "rocksdb:ribbon");
  EXPECT_EQ(r.reference.ToString(), "blocked_bloom:10");
  EXPECT_EQ(r.engines, unsigned{kRocksDB});

  r = MustParse("bloom:seed=7@blocked_bloom:10");
  EXPECT_EQ(r.policy.spec.kind, FilterKind::kBloom);
  EXPECT_EQ(r.policy.spec.seed, 7u);
  EXPECT_EQ(r.engines, unsigned{kAllEngines});
}

TEST(ComparePoliciesTest, ParsesRibbonEverywhereAndByLevelFamilies) {
  // RocksDB's Ribbon with bloom_before_level = -1: a family of its own.
  PolicyRequest r = MustParse("rocksdb:ribbon_all:10.5");
  EXPECT_EQ(r.policy.family, Family::kRocksDBRibbonAll);
  EXPECT_EQ(r.policy.bits_per_key, 10.5);
  EXPECT_EQ(r.policy.ToString(), "rocksdb:ribbon_all:10.5");
  EXPECT_EQ(r.policy.FamilyName(), "rocksdb:ribbon_all");
  EXPECT_EQ(r.engines, unsigned{kRocksDB});
  EXPECT_NE(MustParse("rocksdb:ribbon:10").policy.FamilyName(),
            r.policy.FamilyName());

  // Both Ribbons at the memory of a by_level policy.
  r = MustParse("rocksdb:ribbon_all@ribbon:10:by_level");
  EXPECT_TRUE(r.sized);
  EXPECT_EQ(r.policy.family, Family::kRocksDBRibbonAll);
  EXPECT_TRUE(r.reference.spec.by_level);
  EXPECT_EQ(r.reference.ToString(), "ribbon:10:by_level");
  r = MustParse("rocksdb:ribbon@ribbon:10:by_level");
  EXPECT_EQ(r.policy.family, Family::kRocksDBRibbon);

  // by_level is part of an sstfilter family (its own chart line), and a
  // family may carry it.
  EXPECT_EQ(MustParse("ribbon:10:by_level").policy.FamilyName(),
            "ribbon:by_level");
  EXPECT_EQ(
      MustParse("bloom:10:seed=7:by_level:size_ratio=8").policy.FamilyName(),
      "bloom:seed=7:by_level:size_ratio=8");
  EXPECT_EQ(MustParse("ribbon:10").policy.FamilyName(), "ribbon");
  r = MustParse("blocked_bloom:by_level@rocksdb:bloom:10");
  EXPECT_TRUE(r.policy.spec.by_level);
  EXPECT_EQ(r.policy.FamilyName(), "blocked_bloom:by_level");

  EXPECT_NE(ParseError("rocksdb:ribbon_all:0").find("[1, 64]"),
            std::string::npos);
  EXPECT_NE(ParseError("rocksdb:ribbonall:10").find("ribbon_all"),
            std::string::npos);
}

TEST(ComparePoliciesTest, RejectsBadEntriesWithTheReason) {
  EXPECT_NE(ParseError("frob:3").find("frob:3"), std::string::npos);
  EXPECT_NE(ParseError("bloom:-3").find("bits per key"), std::string::npos);
  EXPECT_NE(ParseError("leveldb:bloom:9.5").find("whole bits"),
            std::string::npos);
  EXPECT_NE(ParseError("rocksdb:bloom:0").find("[1, 64]"), std::string::npos);
  EXPECT_NE(ParseError("rocksdb:bloom:ten").find("not a decimal"),
            std::string::npos);
  EXPECT_NE(ParseError("rocksdb:cuckoo:10").find("unknown built-in"),
            std::string::npos);
  EXPECT_NE(ParseError("rocksdb:cuckoo:10")
                .find("expected rocksdb:bloom:<bits>, rocksdb:ribbon:<bits>, "
                      "rocksdb:ribbon_all:<bits> or leveldb:bloom:<bits>"),
            std::string::npos);
  EXPECT_NE(ParseError("rocksdb:bloom@leveldb:bloom:10").find("no engine"),
            std::string::npos);
  EXPECT_NE(ParseError("leveldb/rocksdb:bloom:10").find("no engine"),
            std::string::npos);
  EXPECT_NE(ParseError("rocksdb:ribbon@leveldb:bloom:10").find("no engine"),
            std::string::npos);
  EXPECT_NE(ParseError("cuckoo@none").find("none"), std::string::npos);
  EXPECT_NE(ParseError("bloom:10@blocked_bloom:10").find("not a family"),
            std::string::npos);
  EXPECT_NE(ParseError("a@b@c").find("'@'"), std::string::npos);
  ParseError("");
  ParseError("rocksdb/");
}

TEST(ComparePoliciesTest, ListExpandsSweeps) {
  std::vector<PolicyRequest> list;
  ASSERT_TRUE(
      ParsePolicyList("none,cuckoo:*,rocksdb:bloom@bloom:*", "8,12.5", &list)
          .ok());
  std::vector<std::string> texts;
  for (const PolicyRequest& r : list) texts.push_back(r.text);
  EXPECT_EQ(texts, (std::vector<std::string>{"none", "cuckoo:8", "cuckoo:12.5",
                                             "rocksdb:bloom@bloom:8",
                                             "rocksdb:bloom@bloom:12.5"}));

  EXPECT_FALSE(ParsePolicyList("cuckoo:*", "", &list).ok());
  EXPECT_FALSE(ParsePolicyList("cuckoo:12", "8,10", &list).ok());
  EXPECT_FALSE(ParsePolicyList("cuckoo:*", "8,x", &list).ok());
  EXPECT_FALSE(ParsePolicyList("none,,bloom:10", "", &list).ok());
  EXPECT_FALSE(ParsePolicyList("", "", &list).ok());
}

std::vector<std::string> Labels(const std::vector<PlannedRun>& runs) {
  std::vector<std::string> out;
  for (const PlannedRun& r : runs) {
    out.push_back(r.label + (r.implicit ? " (implicit)" : ""));
  }
  return out;
}

TEST(ComparePoliciesTest, PlanPutsReferencesFirstAndDropsRepeats) {
  std::vector<PolicyRequest> list;
  ASSERT_TRUE(ParsePolicyList("rocksdb:bloom@cuckoo:12,none,bloom:10,"
                              "sstfilter.bloom:10,blocked_bloom@bloom:10",
                              "", &list)
                  .ok());
  EXPECT_EQ(Labels(PlanRuns(list, kRocksDB)),
            (std::vector<std::string>{"cuckoo:12 (implicit)",
                                      "rocksdb:bloom@cuckoo:12", "none",
                                      "bloom:10", "blocked_bloom@bloom:10"}));
  EXPECT_EQ(
      Labels(PlanRuns(list, kLevelDB)),
      (std::vector<std::string>{"none", "bloom:10", "blocked_bloom@bloom:10"}));

  // A reference listed later is not implicit, and runs once, first.
  ASSERT_TRUE(
      ParsePolicyList("cuckoo@leveldb:bloom:10,leveldb:bloom:10", "", &list)
          .ok());
  EXPECT_EQ(Labels(PlanRuns(list, kLevelDB)),
            (std::vector<std::string>{"leveldb:bloom:10",
                                      "cuckoo@leveldb:bloom:10"}));
  EXPECT_TRUE(PlanRuns(list, kRocksDB).empty());
}

FilterBytesFn EngineBytes(Engine* engine) {
  return [engine](const Policy& p, int level, uint64_t n, uint64_t* bytes) {
    return engine->BuiltinFilterBytes(p, level, n, bytes);
  };
}

// Bytes of `p`'s filters for `tables`, built by the engine.
uint64_t TreeBytes(Engine* engine, const Policy& p,
                   const std::vector<FilterTable>& tables) {
  uint64_t total = 0;
  for (const FilterTable& t : tables) {
    uint64_t bytes = 0;
    EXPECT_TRUE(engine->BuiltinFilterBytes(p, t.level, t.keys, &bytes).ok());
    total += bytes;
  }
  return total;
}

TEST(ComparePoliciesTest, SizesSstfilterKindsToATargetWithTheirBuilder) {
  constexpr uint64_t kKeys = 100000;
  std::unique_ptr<FilterBuilder> b;
  FilterSpec spec;
  ASSERT_TRUE(ParseFilterSpec("blocked_bloom:10", &spec).ok());
  ASSERT_TRUE(NewFilterBuilder(spec, &b).ok());
  const double target = static_cast<double>(b->FilterSize(kKeys));

  Policy x = MustParse("blocked_bloom@bloom:10").policy;
  Policy out;
  ASSERT_TRUE(SizeToMemory(x, kKeys, target, nullptr, &out).ok());
  EXPECT_EQ(out.spec.kind, FilterKind::kBlockedBloom);
  ASSERT_TRUE(NewFilterBuilder(out.spec, &b).ok());
  EXPECT_LE(static_cast<double>(b->FilterSize(kKeys)), target);
  EXPECT_NEAR(out.spec.bits_per_key, 10, 0.01);

  // Far more memory than any filter of the kind needs: its maximum.
  ASSERT_TRUE(SizeToMemory(x, 10, 1e9, nullptr, &out).ok());
  EXPECT_EQ(out.spec.bits_per_key, MaxBitsPerKey(FilterKind::kBlockedBloom));
  // Less than its smallest filter: an error naming the sizes.
  Status s = SizeToMemory(x, kKeys, 100, nullptr, &out);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("100000 keys"), std::string::npos) << s.message();
}

TEST(ComparePoliciesTest, SizesBuiltinsWithTheEnginesBuilders) {
  std::unique_ptr<Engine> rocksdb = NewRocksDBEngine(false, RocksDBTree());
  uint64_t target = 0;
  Policy ref = MustParse("rocksdb:bloom:12.5").policy;
  ASSERT_TRUE(rocksdb->BuiltinFilterBytes(ref, 1, 50000, &target).ok());
  EXPECT_NEAR(static_cast<double>(target) * 8 / 50000, 12.5, 0.1);
  Policy out;
  ASSERT_TRUE(SizeToMemory(MustParse("rocksdb:bloom@bloom:10").policy, 50000,
                           static_cast<double>(target),
                           EngineBytes(rocksdb.get()), &out)
                  .ok());
  EXPECT_EQ(out.family, Family::kRocksDBBloom);
  EXPECT_NEAR(out.bits_per_key, 12.5, 0.05);
  uint64_t bytes = 0;
  ASSERT_TRUE(rocksdb->BuiltinFilterBytes(out, 1, 50000, &bytes).ok());
  EXPECT_LE(bytes, target);

  // LevelDB's Bloom takes whole bits per key.
  std::unique_ptr<Engine> leveldb = NewLevelDBEngine();
  ASSERT_TRUE(leveldb
                  ->BuiltinFilterBytes(MustParse("leveldb:bloom:12").policy, 1,
                                       33, &target)
                  .ok());
  ASSERT_TRUE(SizeToMemory(MustParse("leveldb:bloom@bloom:10").policy, 33,
                           static_cast<double>(target) + 0.5,
                           EngineBytes(leveldb.get()), &out)
                  .ok());
  EXPECT_EQ(out.bits_per_key, 12);
}

TEST(ComparePoliciesTest, SizesRibbonWithRocksDBsRibbonBuilder) {
  constexpr uint64_t kKeys = 50000;
  std::unique_ptr<Engine> rocksdb = NewRocksDBEngine(false, RocksDBTree());
  // The memory of sstfilter's blocked Bloom at 10 bits/key.
  std::unique_ptr<FilterBuilder> b;
  ASSERT_TRUE(
      NewFilterBuilder(MustParse("blocked_bloom:10").policy.spec, &b).ok());
  const double target = static_cast<double>(b->FilterSize(kKeys));
  Policy out;
  ASSERT_TRUE(SizeToMemory(MustParse("rocksdb:ribbon@blocked_bloom:10").policy,
                           kKeys, target, EngineBytes(rocksdb.get()), &out)
                  .ok());
  EXPECT_EQ(out.family, Family::kRocksDBRibbon);
  uint64_t bytes = 0;
  ASSERT_TRUE(rocksdb->BuiltinFilterBytes(out, 1, kKeys, &bytes).ok());
  EXPECT_LE(static_cast<double>(bytes), target);
  // Ribbon takes ~30% less space than Bloom for the same FPR, so at equal
  // memory its Bloom-equivalent bits per key are well above 10.
  EXPECT_GT(out.bits_per_key, 11);
  // The largest that fits: 0.1 bits/key more is larger than the target.
  Policy more = out;
  more.bits_per_key += 0.1;
  ASSERT_TRUE(rocksdb->BuiltinFilterBytes(more, 1, kKeys, &bytes).ok());
  EXPECT_GT(static_cast<double>(bytes), target);
}

// X@Y against a whole tree: each table sized with the builder RocksDB
// uses at its level (Ribbon as shipped: Bloom for flushed L0 tables), the
// total at most the target and within a fraction of a percent of it.
TEST(ComparePoliciesTest, SizesRibbonToAWholeTreeLevelByLevel) {
  std::unique_ptr<Engine> rocksdb = NewRocksDBEngine(false, RocksDBTree());
  // A small leveled tree: 4 flushed L0 tables, L1, L2 (keys 1:10:100).
  std::vector<FilterTable> tables(4);
  for (FilterTable& t : tables) {
    t.level = 0;
    t.keys = 500;
  }
  tables.push_back({1, 20000, 0});
  tables.push_back({2, 100000, 0});
  tables.push_back({2, 100000, 0});
  // What ribbon:10:by_level might spend: ~10 bits per key over the tree.
  const double target = 10.0 * 222000 / 8;
  Policy shipped, all;
  ASSERT_TRUE(SizeToMemory(MustParse("rocksdb:ribbon@ribbon:10").policy, tables,
                           target, EngineBytes(rocksdb.get()), &shipped)
                  .ok());
  ASSERT_TRUE(SizeToMemory(MustParse("rocksdb:ribbon_all@ribbon:10").policy,
                           tables, target, EngineBytes(rocksdb.get()), &all)
                  .ok());
  for (const Policy& p : {shipped, all}) {
    const double bytes =
        static_cast<double>(TreeBytes(rocksdb.get(), p, tables));
    EXPECT_LE(bytes, target) << p.ToString();
    EXPECT_GE(bytes, 0.995 * target) << p.ToString();
    Policy more = p;
    more.bits_per_key += 0.05;
    EXPECT_GT(static_cast<double>(TreeBytes(rocksdb.get(), more, tables)),
              target)
        << more.ToString();
  }
  // The shipped Ribbon pays Bloom's bits for its L0 tables, so it gets
  // fewer (Bloom-equivalent) bits than Ribbon everywhere.
  EXPECT_LT(shipped.bits_per_key, all.bits_per_key);
  // At a level >= 1 both build the same Ribbon filter.
  uint64_t a = 0, b = 0;
  ASSERT_TRUE(rocksdb->BuiltinFilterBytes(shipped, 1, 20000, &a).ok());
  Policy same = all;
  same.bits_per_key = shipped.bits_per_key;
  ASSERT_TRUE(rocksdb->BuiltinFilterBytes(same, 1, 20000, &b).ok());
  EXPECT_EQ(a, b);
  ASSERT_TRUE(rocksdb->BuiltinFilterBytes(shipped, 0, 20000, &a).ok());
  ASSERT_TRUE(rocksdb->BuiltinFilterBytes(same, 0, 20000, &b).ok());
  EXPECT_GT(a, b);  // L0 flush: Bloom against Ribbon
}

TEST(ComparePoliciesTest, SizingStaysWithinTheBudget) {
  const Policy x = MustParse("cuckoo@bloom:10").policy;
  Policy out;
  Status s = SizeToMemory(x, 1000, 2000, nullptr, &out);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::unique_ptr<FilterBuilder> b;
  ASSERT_TRUE(NewFilterBuilder(out.spec, &b).ok());
  EXPECT_LE(b->FilterSize(1000), 2000u);
}

// A keyed family is sized with the run's secret: its filters carry the
// key id, and the sized spec stays keyed.
TEST(ComparePoliciesTest, SizingAKeyedFamily) {
  const Policy x = MustParse("blocked_bloom:keyed@bloom:10").policy;
  Policy out;
  Status s = SizeToMemory(x, 1000, 1300, nullptr, &out);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(out.spec.keyed);
  std::unique_ptr<FilterBuilder> b;
  ASSERT_TRUE(NewFilterBuilder(out.spec, &b, RunSecret().get()).ok());
  EXPECT_LE(b->FilterSize(1000), 1300u);
  EXPECT_GT(b->FilterSize(1000), 1200u);
}

// A finished run of `policy` (`label`: X@Y when sized) whose absent phase
// read `reads` blocks in 10,000 Gets, with `bytes` of filters.
PolicyRun AbsentRun(const std::string& engine, const std::string& label,
                    const std::string& policy, uint64_t reads, uint64_t bytes) {
  PolicyRun r;
  r.engine = engine;
  r.label = label;
  const PolicyRequest req = MustParse(policy);
  r.policy = req.policy;
  const size_t at = label.find('@');
  if (at != std::string::npos) {
    r.sized = true;
    r.reference = label.substr(at + 1);
  }
  r.build.filter_bytes = bytes;
  PhaseResult absent;
  absent.phase = Phase::kAbsent;
  absent.ops = 10000;
  absent.io.reads = reads;
  r.phases.push_back(absent);
  return r;
}

Report TwoEngineReport() {
  Report report;
  report.engines = {{"rocksdb", "7.8.3", ""}, {"leveldb", "1.23", ""}};
  return report;
}

TEST(CompareVerdictTest,
     NamesOurBestPolicyAgainstTheStrongestBuiltinAtItsMemory) {
  Report report = TwoEngineReport();
  report.runs = {
      AbsentRun("rocksdb", "rocksdb:bloom:10", "rocksdb:bloom:10", 480, 1250),
      AbsentRun("rocksdb", "ribbon:10", "ribbon:10", 90, 1250),
      // At ribbon:10's memory Bloom reads 5x ours, Ribbon 0.8x: Ribbon is
      // the rival, and ribbon:10 loses to it ...
      AbsentRun("rocksdb", "rocksdb:bloom@ribbon:10", "rocksdb:bloom:10", 450,
                1249),
      AbsentRun("rocksdb", "rocksdb:ribbon@ribbon:10", "rocksdb:ribbon:14.5",
                72, 1248),
      // ... while by_level reads 0.45x Ribbon's at its memory: the verdict.
      AbsentRun("rocksdb", "ribbon:10:by_level", "ribbon:10:by_level", 36,
                1240),
      AbsentRun("rocksdb", "rocksdb:ribbon@ribbon:10:by_level",
                "rocksdb:ribbon:14.4", 80, 1250),
      // LevelDB: our kind sized to LevelDB's Bloom, and LevelDB's Bloom wins.
      AbsentRun("leveldb", "leveldb:bloom:10", "leveldb:bloom:10", 100, 1000),
      AbsentRun("leveldb", "cuckoo@leveldb:bloom:10", "cuckoo:8", 250, 980),
  };
  const std::vector<Verdict> v = Verdicts(report);
  ASSERT_EQ(v.size(), 2u);
  ASSERT_NE(v[0].ours, nullptr);
  EXPECT_EQ(v[0].ours->label, "ribbon:10:by_level");
  EXPECT_EQ(v[0].rival->label, "rocksdb:ribbon@ribbon:10:by_level");
  EXPECT_DOUBLE_EQ(v[0].ratio, 36.0 / 80);
  EXPECT_DOUBLE_EQ(v[0].bytes_ratio, 1250.0 / 1240);
  EXPECT_EQ(v[0].text,
            "RocksDB: ribbon:10:by_level reads 0.45x RocksDB's Ribbon's "
            "absent-key reads at equal memory (rocksdb:ribbon:14.4; filter "
            "bytes: RocksDB's Ribbon's 1.008x ours; 36 against 80 block reads "
            "in 10000 absent Gets each)");
  ASSERT_NE(v[1].ours, nullptr);
  EXPECT_EQ(v[1].ours->label, "cuckoo@leveldb:bloom:10");
  EXPECT_DOUBLE_EQ(v[1].ratio, 2.5);
  EXPECT_EQ(v[1].text,
            "LevelDB: LevelDB's Bloom wins: leveldb:bloom:10 reads 0.40x the "
            "absent-key reads of cuckoo@leveldb:bloom:10 (cuckoo:8), our best, "
            "at equal memory (filter bytes: LevelDB's Bloom's 1.020x ours; "
            "250 against 100 block reads in 10000 absent Gets each)");
}

TEST(CompareVerdictTest, SaysSoWhenThereIsNoPairOrATie) {
  Report report = TwoEngineReport();
  report.runs = {
      // Not at equal memory: no verdict for RocksDB.
      AbsentRun("rocksdb", "rocksdb:bloom:10", "rocksdb:bloom:10", 480, 1250),
      AbsentRun("rocksdb", "ribbon:10", "ribbon:10", 90, 1250),
      // Neither read a block: a tie, with the counts.
      AbsentRun("leveldb", "leveldb:bloom:10", "leveldb:bloom:10", 0, 1000),
      AbsentRun("leveldb", "ribbon@leveldb:bloom:10", "ribbon:9.7", 0, 990),
  };
  const std::vector<Verdict> v = Verdicts(report);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].ours, nullptr);
  EXPECT_EQ(v[0].text.rfind("RocksDB: no verdict: ", 0), 0u) << v[0].text;
  EXPECT_NE(v[0].text.find("rocksdb:ribbon@ribbon:10:by_level"),
            std::string::npos);
  EXPECT_EQ(v[1].text.rfind("LevelDB: tie: ribbon@leveldb:bloom:10 "
                            "(ribbon:9.7) and LevelDB's Bloom",
                            0),
            0u)
      << v[1].text;
  EXPECT_NE(v[1].text.find("0 against 0 block reads"), std::string::npos);
}

// Hand-computed: each L0 table is a run of its own, each level L1+ one run
// however many tables it has; the bound is 2^-(b - H).
TEST(CompareBoundTest, SortedRunsEntropyAndBound) {
  // Two runs of 1/2 each (L1 in two tables): H = 1, at 10 bits 2^-9.
  const std::vector<FilterTable> halves = {
      {1, 250, 0}, {1, 250, 0}, {2, 500, 0}};
  EXPECT_EQ(SortedRunKeys(halves), (std::vector<uint64_t>{500, 500}));
  EXPECT_DOUBLE_EQ(RunEntropy(SortedRunKeys(halves)), 1.0);
  EXPECT_DOUBLE_EQ(AbsentReadsBound(10, 1.0), 1.0 / 512);
  // Two L0 tables of 1/4 and a level of 1/2: H = 1.5.
  const std::vector<FilterTable> l0 = {{0, 250, 0}, {0, 250, 0}, {3, 500, 0}};
  EXPECT_DOUBLE_EQ(RunEntropy(SortedRunKeys(l0)), 1.5);
  EXPECT_DOUBLE_EQ(AbsentReadsBound(8, 1.5), std::exp2(-6.5));
  // One run: H = 0, the bound of a single filter, 2^-b.
  EXPECT_DOUBLE_EQ(RunEntropy({1000}), 0.0);
  EXPECT_DOUBLE_EQ(AbsentReadsBound(10, 0), 1.0 / 1024);
  // No keys: unknown.
  EXPECT_EQ(RunEntropy({}), -1);
  EXPECT_EQ(RunEntropy({0, 0}), -1);
}

// A run's absent reads over the bound of its tree at its filter bits per
// key; "-" (-1) without a tree (LevelDB) or without filters.
TEST(CompareBoundTest, RunRatioAndVerdict) {
  Report report = TwoEngineReport();
  report.num_keys = 1000;
  report.runs = {
      AbsentRun("rocksdb", "ribbon:10:by_level", "ribbon:10:by_level", 36,
                1240),
      AbsentRun("rocksdb", "rocksdb:ribbon@ribbon:10:by_level",
                "rocksdb:ribbon:14.4", 80, 1250),
  };
  for (PolicyRun& r : report.runs) {
    r.build.tables = {{1, 500, 0}, {2, 500, 0}};  // H = 1
    r.build.filter_block_bytes = 1250;            // 10 bits per key
  }
  const PolicyRun& ours = report.runs[0];
  EXPECT_DOUBLE_EQ(ours.run_entropy(), 1.0);
  EXPECT_DOUBLE_EQ(ours.absent_reads_bound(1000), 1.0 / 512);
  EXPECT_DOUBLE_EQ(ours.ratio_vs_bound(1000), 0.0036 * 512);  // 1.8432
  const std::vector<Verdict> v = Verdicts(report);
  EXPECT_EQ(v[0].text,
            "RocksDB: ribbon:10:by_level reads 0.45x RocksDB's Ribbon's "
            "absent-key reads at equal memory (rocksdb:ribbon:14.4; filter "
            "bytes: RocksDB's Ribbon's 1.008x ours; 36 against 80 block reads "
            "in 10000 absent Gets each; 1.84x and 4.10x the information "
            "bound)");

  PolicyRun no_tree = ours;
  no_tree.build.tables.clear();
  EXPECT_EQ(no_tree.run_entropy(), -1);
  EXPECT_EQ(no_tree.ratio_vs_bound(1000), -1);
  PolicyRun no_filter = ours;
  no_filter.build.filter_block_bytes = 0;
  EXPECT_DOUBLE_EQ(no_filter.run_entropy(), 1.0);
  EXPECT_EQ(no_filter.absent_reads_bound(1000), -1);
  EXPECT_EQ(no_filter.ratio_vs_bound(1000), -1);
}

}  // namespace
}  // namespace compare
}  // namespace sstfilter
