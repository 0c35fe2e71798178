// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// auto specs: parsing, the cost planner (PlanFilterCosts), the choice of a
// kind for one filter (ChooseKindForKeys) and the builder that makes it.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sstfilter/filter.h"
#include "sstfilter/params.h"
#include "sstfilter/secret.h"
#include "sstfilter/spec.h"

namespace sstfilter {
namespace {

FilterSpec Must(const std::string& text) {
  FilterSpec s;
  const Status st = ParseFilterSpec(text, &s);
  EXPECT_TRUE(st.ok()) << text << ": " << st.message();
  return s;
}

// A leveled tree, top first: 4 L0 files of 25,000 keys, then levels of
// 10^6, 10^7, 10^8 keys.
const std::vector<uint64_t> kTree = {25000,   25000,    25000,    25000,
                                     1000000, 10000000, 100000000};
constexpr size_t kTreeL0 = 4;

CostPlan MustPlan(const std::string& text, const std::vector<uint64_t>& runs,
                  size_t l0_runs, const std::vector<KindCost>& costs = {}) {
  CostPlan plan;
  const Status s = PlanFilterCosts(Must(text), runs,
                                   TreeRebuilds(runs, l0_runs), &plan, costs);
  EXPECT_TRUE(s.ok()) << s.message();
  return plan;
}

TEST(AutoSpecTest, ParsesAndRoundTrips) {
  const FilterSpec a = Must("auto:10");
  EXPECT_TRUE(a.auto_kind);
  EXPECT_FALSE(a.by_level);
  EXPECT_EQ(a.bits_per_key, 10);
  EXPECT_EQ(a.read_us, kAutoReadMicros);
  EXPECT_EQ(a.build_x, kAutoBuildRatio);
  EXPECT_EQ(a.ToString(), "auto:10");
  EXPECT_EQ(Must("sstfilter.auto:10"), a);
  for (const char* text :
       {"auto:9.5", "auto:10:keyed", "auto:10:salt", "auto:10:seed=7",
        "auto:10:read_us=2.5", "auto:10:build_x=1.5",
        "auto:12:seed=3:keyed:size_ratio=8:l0_files=6:read_us=0:build_x="
        "1000",
        "auto:10:ribbon_build_ns=80",
        "auto:10:read_us=3:bloom_query_ns=20:bloom_build_ns=16:blocked_bloom_"
        "query_ns=10:blocked_bloom_build_ns=14:ribbon_query_ns=28:ribbon_build_"
        "ns=75.5"}) {
    const FilterSpec s = Must(text);
    EXPECT_TRUE(s.auto_kind) << text;
    EXPECT_EQ(s.ToString(), text);
    EXPECT_EQ(Must(s.ToString()), s) << text;
  }
  // Not the same spec as any kind's.
  EXPECT_NE(Must("auto:10"), Must("blocked_bloom:10"));
  EXPECT_NE(Must("auto:10:read_us=5"), Must("auto:10"));
  EXPECT_NE(Must("auto:10:ribbon_query_ns=5"), Must("auto:10"));
  EXPECT_EQ(Must("auto:10:ribbon_build_ns=80").ribbon_build_ns, 80);
}

TEST(AutoSpecTest, BadOptionsNameTheOption) {
  struct Case {
    const char* text;
    const char* named;
  };
  for (const Case& c :
       {Case{"auto:10:read_us=-1", "read_us"},
        Case{"auto:10:read_us=2000000", "read_us"},
        Case{"auto:10:read_us=x", "read_us"},
        Case{"auto:10:read_us=nan", "read_us"},
        Case{"auto:10:build_x=0.5", "build_x"},
        Case{"auto:10:build_x=", "build_x"},
        Case{"auto:10:by_level", "by_level"},
        Case{"auto:10:size_ratio=1", "size_ratio"},
        Case{"auto:10:read_us=1:read_us=2", "read_us"},
        Case{"auto:10:salt:seed=3", "salt"},
        Case{"auto:10:fast", "fast"},
        Case{"auto:0.5", "auto bits per key"},
        Case{"auto:65", "auto bits per key"},
        Case{"auto", "<kind>:<bits_per_key>"},
        Case{"bloom:10:read_us=5", "read_us"},
        Case{"ribbon:10:build_x=2", "build_x"},
        Case{"auto:10:ribbon_build_ns=-1", "ribbon_build_ns"},
        Case{"auto:10:bloom_query_ns=2000000", "bloom_query_ns"},
        Case{"auto:10:blocked_bloom_query_ns=x", "blocked_bloom_query_ns"},
        Case{"auto:10:ribbon_query_ns=inf", "ribbon_query_ns"},
        Case{"auto:10:cuckoo_query_ns=5", "cuckoo_query_ns"},
        Case{"ribbon:10:ribbon_build_ns=80", "ribbon_build_ns"}}) {
    FilterSpec s;
    const Status st = ParseFilterSpec(c.text, &s);
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << c.text;
    EXPECT_NE(st.message().find(c.named), std::string::npos)
        << c.text << ": " << st.message();
    EXPECT_NE(st.message().find(c.text), std::string::npos) << st.message();
  }
  // A spec made in code is checked the same way.
  FilterSpec s = Must("auto:10");
  s.by_level = true;
  EXPECT_NE(s.Validate().message().find("by_level"), std::string::npos);
  s = Must("auto:10");
  s.kind = FilterKind::kRibbon;
  EXPECT_FALSE(s.Validate().ok());
}

TEST(AutoPlanTest, RebuildWeights) {
  // All 1.111e8 keys were flushed: each L0 key weighs all / L0 keys.
  const std::vector<double> w = TreeRebuilds(kTree, kTreeL0);
  ASSERT_EQ(w.size(), kTree.size());
  EXPECT_DOUBLE_EQ(w[0], 111100000.0 / 100000);
  EXPECT_DOUBLE_EQ(w[3], w[0]);
  // L1: every key below passed it, rewritten 1 + 10^6 / (2 * 10^5) times.
  EXPECT_DOUBLE_EQ(w[4], 111000000.0 / 1000000 * (1 + 5.0));
  EXPECT_DOUBLE_EQ(w[5], 110000000.0 / 10000000 * (1 + 5.0));
  EXPECT_DOUBLE_EQ(w[6], 1 + 5.0);
  // No L0 run: the first level is taken as 10x the one above it.
  EXPECT_DOUBLE_EQ(TreeRebuilds({1000, 10000}, 0)[0], 11.0 * (1 + 5));
  // A level far larger than the one above: its rewrites are capped.
  EXPECT_DOUBLE_EQ(TreeRebuilds({1, 10000}, 1)[1], 1 + 500.0);
  EXPECT_EQ(TreeRebuilds({0, 5}, 1)[0], 0);
}

TEST(AutoPlanTest, MemoryIsTheBudget) {
  for (const char* text : {"auto:10", "auto:6", "auto:16:read_us=2",
                           "auto:10:read_us=0", "auto:10:build_x=1"}) {
    const CostPlan p = MustPlan(text, kTree, kTreeL0);
    double keys = 0;
    for (uint64_t n : kTree) keys += static_cast<double>(n);
    EXPECT_DOUBLE_EQ(p.budget_bits, Must(text).bits_per_key * keys) << text;
    // Within 0.1% (rounding to bytes and blocks, trailers).
    EXPECT_NEAR(p.total_bits / p.budget_bits, 1.0, 0.001) << text;
    for (size_t i = 0; i < kTree.size(); i++) {
      EXPECT_GE(p.bits_per_key[i], MinBitsPerKey(p.kinds[i])) << text << i;
      EXPECT_LE(p.bits_per_key[i], MaxBitsPerKey(p.kinds[i])) << text << i;
      // Each run's FPR is its filter's at its keys.
      FilterSpec k;
      k.kind = p.kinds[i];
      k.bits_per_key = p.bits_per_key[i];
      FilterParams fp;
      ASSERT_TRUE(ParamsForSpec(k, kTree[i], &fp).ok());
      EXPECT_EQ(p.fpr[i], fp.expected_fpr);
    }
  }
}

// When reads are all that counts, auto reads no more than the ribbon kind
// planned by level (it may mix kinds where that reads less).
TEST(AutoPlanTest, CostlyReadsReadAsFewAsRibbonByLevel) {
  const CostPlan p =
      MustPlan("auto:10:read_us=1000000:build_x=1000", kTree, kTreeL0);
  LevelPlan ribbon;
  ASSERT_TRUE(PlanLevelBits(FilterKind::kRibbon, kTree, 10, &ribbon).ok());
  EXPECT_LE(p.expected_false_positives, 1.03 * ribbon.expected_false_positives);
  EXPECT_GE(p.expected_false_positives, 0.8 * ribbon.expected_false_positives);
  // The last level, 90% of the keys, is ribbon's.
  EXPECT_EQ(p.kinds.back(), FilterKind::kRibbon);
}

// When reads cost nothing, every run takes the kind of the fastest query,
// and the least memory of it the budget allows... spent anyway.
TEST(AutoPlanTest, FreeReadsPickTheFastestKind) {
  const CostPlan p = MustPlan("auto:10:read_us=0", kTree, kTreeL0);
  for (FilterKind k : p.kinds) EXPECT_EQ(k, FilterKind::kBlockedBloom);
  // Not a fixed answer: with bloom the fastest, bloom everywhere.
  std::vector<KindCost> costs = DefaultKindCosts();
  for (KindCost& c : costs) {
    if (c.kind == FilterKind::kBloom) c.query_ns = 1;
  }
  const CostPlan q = MustPlan("auto:10:read_us=0", kTree, kTreeL0, costs);
  for (FilterKind k : q.kinds) EXPECT_EQ(k, FilterKind::kBloom);
  EXPECT_NEAR(q.expected_query_ns, static_cast<double>(kTree.size()), 1e-9);
}

// A spec's own costs replace the defaults of their kind, and decide: the
// ribbon kind probed as fast as blocked Bloom takes every run; built at
// twice its default cost, fewer runs than by default, within the budget.
TEST(AutoPlanTest, CostsInTheSpecReplaceTheDefaults) {
  const CostPlan d = MustPlan("auto:10", kTree, kTreeL0);
  EXPECT_NE(d.kinds.front(), FilterKind::kRibbon);
  const CostPlan fast =
      MustPlan("auto:10:ribbon_query_ns=11.6", kTree, kTreeL0);
  for (size_t i = 0; i < fast.kinds.size(); i++) {
    EXPECT_EQ(fast.kinds[i], FilterKind::kRibbon) << "run " << i;
    EXPECT_EQ(fast.query_ns[i], 11.6) << "run " << i;
  }
  EXPECT_LT(fast.expected_false_positives, d.expected_false_positives);
  const auto ribbons = [](const CostPlan& p) {
    size_t n = 0;
    for (FilterKind k : p.kinds) n += k == FilterKind::kRibbon ? 1 : 0;
    return n;
  };
  const CostPlan slow =
      MustPlan("auto:10:ribbon_build_ns=216.8", kTree, kTreeL0);
  EXPECT_GT(ribbons(d), 0u);
  EXPECT_LT(ribbons(slow), ribbons(d));
  EXPECT_EQ(slow.build_ns[slow.kinds.size() - 1],
            slow.kinds.back() == FilterKind::kRibbon ? 216.8 : 15.2);
  EXPECT_LE(slow.build_ns_total, 8 * slow.blocked_bloom_build_ns * 1.0001);
  // Costs passed to the planner win over the spec's.
  const CostPlan given = MustPlan("auto:10:ribbon_build_ns=216.8", kTree,
                                  kTreeL0, DefaultKindCosts());
  EXPECT_EQ(given.kinds, d.kinds);
  // One filter, no tree: the same costs decide.
  EXPECT_EQ(
      ChooseKindForKeys(Must("auto:10:read_us=100:build_x=1000"), 100000).kind,
      FilterKind::kRibbon);
  EXPECT_NE(
      ChooseKindForKeys(
          Must("auto:10:read_us=100:build_x=1000:ribbon_build_ns=1000000"),
          100000)
          .kind,
      FilterKind::kRibbon);
}

TEST(AutoPlanTest, BuildBudgetIsRespected) {
  double last_reads = INFINITY;
  double last_build = 0;
  for (double x : {1.0, 1.5, 2.0, 3.0, 5.0, 1000.0}) {
    const std::string text =
        "auto:10:read_us=1000:build_x=" + std::to_string(x);
    const CostPlan p = MustPlan(text, kTree, kTreeL0);
    EXPECT_LE(p.build_ns_total, x * p.blocked_bloom_build_ns * (1 + 1e-9))
        << text;
    // A larger budget never reads more, and here it is spent.
    EXPECT_LE(p.expected_false_positives, last_reads * (1 + 1e-9)) << text;
    EXPECT_GE(p.build_ns_total, last_build) << text;
    last_reads = p.expected_false_positives;
    last_build = p.build_ns_total;
  }
  // At 1x only blocked Bloom, the cheapest to build, fits.
  const CostPlan one = MustPlan("auto:10:build_x=1", kTree, kTreeL0);
  for (FilterKind k : one.kinds) EXPECT_EQ(k, FilterKind::kBlockedBloom);
  // With the budget free, ribbon is used where reads are costly.
  const CostPlan free = MustPlan("auto:10:build_x=1000", kTree, kTreeL0);
  EXPECT_EQ(free.kinds.back(), FilterKind::kRibbon);
  EXPECT_LT(free.expected_false_positives, 0.5 * one.expected_false_positives);
}

// Flushes are rebuilt for every key of the tree and probed by every Get:
// at the default costs they get a kind fast to build and query, and bits
// enough that they are not where the reads come from.
TEST(AutoPlanTest, SmallFlushRunsGetAFastKind) {
  const std::vector<uint64_t> tree = {640,     640,      640,
                                      1000000, 10000000, 100000000};
  const CostPlan p = MustPlan("auto:10", tree, 3);
  for (size_t i = 0; i < 3; i++) {
    EXPECT_NE(p.kinds[i], FilterKind::kRibbon) << i;
    EXPECT_LT(p.fpr[i], 0.01 * p.expected_false_positives) << i;
  }
  EXPECT_EQ(p.kinds.back(), FilterKind::kRibbon);
  // A tiny run is planned on its own filter's FPR and size: the plan's
  // memory counts its trailer, and stays the budget.
  EXPECT_NEAR(p.total_bits / p.budget_bits, 1.0, 0.001);
  // One run of 300 keys: its trailer is ~0.3 bits per key, which the
  // large-filter curve would not see (1.03x the budget or more). In
  // Bloom's small form (whole bytes) it spends the budget; the ribbon
  // kind's small filters grow in coarser steps, and stay within it.
  const CostPlan bloom = MustPlan("auto:10:build_x=1", {300}, 1);
  EXPECT_LE(bloom.total_bits, bloom.budget_bits * 1.005);
  EXPECT_GE(bloom.total_bits, bloom.budget_bits * 0.99);
  const CostPlan ribbon = MustPlan("auto:10", {300}, 1);
  EXPECT_EQ(ribbon.kinds[0], FilterKind::kRibbon);
  EXPECT_LE(ribbon.total_bits, ribbon.budget_bits * 1.005);
  EXPECT_GE(ribbon.total_bits, ribbon.budget_bits * 0.95);
}

// L0 files of one flush size are alike runs (the planner works out the
// first of them once): each gets the same kind and bits as the others,
// and the plan spends the budget, whether or not the build budget binds.
TEST(AutoPlanTest, AlikeRunsArePlannedAlike) {
  const std::vector<uint64_t> tree = {14903, 9000,    14903,  14903,
                                      70000, 1000000, 9000000};
  for (const char* text :
       {"auto:10", "auto:10:build_x=1.5", "auto:7:read_us=10"}) {
    const CostPlan p = MustPlan(text, tree, 4);
    for (size_t i : {2, 3}) {
      EXPECT_EQ(p.kinds[i], p.kinds[0]) << text << i;
      EXPECT_EQ(p.bits_per_key[i], p.bits_per_key[0]) << text << i;
    }
    EXPECT_NEAR(p.total_bits / p.budget_bits, 1.0, 0.001) << text;
  }
}

TEST(AutoPlanTest, BadArguments) {
  CostPlan p;
  EXPECT_TRUE(
      PlanFilterCosts(Must("ribbon:10"), kTree, TreeRebuilds(kTree, 4), &p)
          .code() == Status::Code::kInvalidArgument);
  EXPECT_TRUE(PlanFilterCosts(Must("auto:10"), {}, {}, &p).code() ==
              Status::Code::kInvalidArgument);
  EXPECT_TRUE(PlanFilterCosts(Must("auto:10"), kTree, {1.0}, &p).code() ==
              Status::Code::kInvalidArgument);
  std::vector<KindCost> cuckoo = DefaultKindCosts();
  cuckoo.push_back({FilterKind::kCuckoo, 10, 10});
  EXPECT_TRUE(PlanFilterCosts(Must("auto:10"), kTree, TreeRebuilds(kTree, 4),
                              &p, cuckoo)
                  .code() == Status::Code::kInvalidArgument);
  const std::vector<KindCost> no_blocked = {{FilterKind::kRibbon, 10, 10}};
  EXPECT_TRUE(PlanFilterCosts(Must("auto:10"), kTree, TreeRebuilds(kTree, 4),
                              &p, no_blocked)
                  .code() == Status::Code::kInvalidArgument);
}

TEST(AutoChoiceTest, OneFilterByCost) {
  // Reads free: the fastest query.
  EXPECT_EQ(ChooseKindForKeys(Must("auto:10:read_us=0"), 100000).kind,
            FilterKind::kBlockedBloom);
  // Reads dear: the fewest false positives at 10 bits, the ribbon kind.
  EXPECT_EQ(
      ChooseKindForKeys(Must("auto:10:read_us=100:build_x=1000"), 100000).kind,
      FilterKind::kRibbon);
  // Build at blocked Bloom's cost only: blocked Bloom.
  EXPECT_EQ(ChooseKindForKeys(Must("auto:10:build_x=1"), 100000).kind,
            FilterKind::kBlockedBloom);
  // Bits only Bloom kinds take.
  EXPECT_NE(ChooseKindForKeys(Must("auto:40:build_x=1000"), 100000).kind,
            FilterKind::kRibbon);
  const FilterSpec c = ChooseKindForKeys(Must("auto:9.5:seed=5:keyed"), 1000);
  EXPECT_EQ(c.bits_per_key, 9.5);
  EXPECT_EQ(c.seed, 5u);
  EXPECT_TRUE(c.keyed);
  EXPECT_FALSE(c.auto_kind);
  EXPECT_TRUE(c.Validate().ok());
}

// One level of small filters (LevelDB), as docs/LEVELDB.md says: at the
// default costs the ribbon kind for every filter of two keys or more; at
// build_x=3 standard Bloom's bytes, but for 6 counts between 837 and 890
// keys (blocked Bloom, which writes its filters of up to 818 keys in the
// standard form); in the page cache (read_us=3) a Bloom kind from 5 keys
// on, at read_us=1 for every count.
TEST(AutoChoiceTest, SmallFiltersAsTheDocsSay) {
  auto written = [](const FilterSpec& chosen, uint64_t n) {
    FilterParams p;
    EXPECT_TRUE(ParamsForSpec(chosen, n, &p).ok());
    return p.kind;
  };
  const FilterSpec defaults = Must("auto:10");
  const FilterSpec slow_build = Must("auto:10:build_x=3");
  const FilterSpec cached = Must("auto:10:read_us=3");
  const FilterSpec in_memory = Must("auto:10:read_us=1");
  int blocked = 0;
  for (uint64_t n = 2; n <= 4096; n++) {
    SCOPED_TRACE(n);
    ASSERT_EQ(ChooseKindForKeys(defaults, n).kind, FilterKind::kRibbon);
    const FilterSpec b = ChooseKindForKeys(slow_build, n);
    if (written(b, n) == FilterKind::kBlockedBloom) {
      blocked++;
      EXPECT_GE(n, 837u);
      EXPECT_LE(n, 890u);
    } else {
      ASSERT_EQ(written(b, n), FilterKind::kBloom);
    }
    if (n >= 5) {
      ASSERT_NE(ChooseKindForKeys(cached, n).kind, FilterKind::kRibbon);
    }
    ASSERT_NE(ChooseKindForKeys(in_memory, n).kind, FilterKind::kRibbon);
  }
  EXPECT_EQ(blocked, 6);
}

// The auto builder writes the kind it chooses, as that kind's builder
// writes it, and loses no key.
TEST(AutoBuilderTest, WritesTheChosenKind) {
  for (const char* text : {"auto:10", "auto:10:build_x=1000", "auto:10:salt",
                           "auto:10:read_us=0", "auto:3.5:seed=9"}) {
    const FilterSpec spec = Must(text);
    std::unique_ptr<FilterBuilder> b;
    ASSERT_TRUE(NewFilterBuilder(spec, &b).ok());
    for (uint64_t n : {0, 1, 36, 1000, 100000}) {
      const uint64_t seed = b->seed();
      for (uint64_t i = 0; i < n; i++) b->AddKey("key" + std::to_string(i));
      std::string bytes;
      b->Finish(&bytes);
      EXPECT_EQ(bytes.size(), b->FilterSize(n)) << text << " " << n;
      // The same bytes as the chosen kind's own builder.
      FilterSpec k = ChooseKindForKeys(spec, n);
      k.seed = seed;
      k.salt = false;
      std::unique_ptr<FilterBuilder> direct;
      ASSERT_TRUE(NewFilterBuilder(k, &direct).ok());
      for (uint64_t i = 0; i < n; i++)
        direct->AddKey("key" + std::to_string(i));
      std::string want;
      direct->Finish(&want);
      EXPECT_EQ(bytes, want) << text << " " << n;
      const FilterReader r = FilterReader::Open(bytes);
      ASSERT_TRUE(r.valid()) << text << " " << n;
      for (uint64_t i = 0; i < n; i++) {
        ASSERT_TRUE(r.MayMatch("key" + std::to_string(i))) << text << " " << i;
      }
      if (spec.salt && n > 0) {
        EXPECT_NE(b->seed(), seed);
      }
    }
  }
  // Ribbon for a large filter when reads are dear, blocked Bloom when free.
  std::unique_ptr<FilterBuilder> b;
  for (const auto& [text, kind] :
       {std::pair<const char*, FilterKind>{"auto:10:build_x=1000",
                                           FilterKind::kRibbon},
        {"auto:10:read_us=0", FilterKind::kBlockedBloom}}) {
    ASSERT_TRUE(NewFilterBuilder(Must(text), &b).ok());
    for (int i = 0; i < 100000; i++) b->AddKey("k" + std::to_string(i));
    std::string bytes;
    b->Finish(&bytes);
    EXPECT_EQ(FilterReader::Open(bytes).kind(), kind) << text;
  }
}

TEST(AutoBuilderTest, KeyedNeedsItsSecret) {
  std::unique_ptr<FilterBuilder> b;
  EXPECT_TRUE(NewFilterBuilder(Must("auto:10:keyed"), &b).code() ==
              Status::Code::kInvalidArgument);
  std::unique_ptr<const FilterSecret> secret;
  ASSERT_TRUE(
      NewFilterSecret("sstfilter test secret 0123456789", &secret).ok());
  ASSERT_TRUE(NewFilterBuilder(Must("auto:10:keyed"), &b, secret.get()).ok());
  for (int i = 0; i < 5000; i++) b->AddKey("k" + std::to_string(i));
  std::string bytes;
  b->Finish(&bytes);
  EXPECT_FALSE(FilterReader::Open(bytes).valid());  // no secret: may match
  const FilterReader r = FilterReader::Open(bytes, secret.get());
  ASSERT_TRUE(r.valid());
  for (int i = 0; i < 5000; i++)
    ASSERT_TRUE(r.MayMatch("k" + std::to_string(i)));
}

}  // namespace
}  // namespace sstfilter
