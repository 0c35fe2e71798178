// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.

#include "sstfilter/params.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace sstfilter {
namespace {

TEST(ParamsTest, StandardBloomFormula) {
  EXPECT_EQ(StandardBloomProbes(10), 7);
  EXPECT_NEAR(StandardBloomFpr(10, 7), 0.00819, 0.00001);
  EXPECT_NEAR(StandardBloomFpr(16, 11), 0.000459, 0.000002);
  EXPECT_EQ(StandardBloomProbes(1), 1);
  EXPECT_EQ(StandardBloomProbes(64), 30);  // clamped
}

TEST(ParamsTest, BlockedBloomFormula) {
  // Cache-local Bloom with 512-bit blocks at 10 bits/key: the best k is 6
  // or 7 and the FPR ~0.95%, above the standard 0.82%.
  const int k = BlockedBloomProbes(10);
  EXPECT_GE(k, 6);
  EXPECT_LE(k, 7);
  const double f = BlockedBloomFpr(10, k);
  EXPECT_GT(f, StandardBloomFpr(10, 7));
  EXPECT_NEAR(f, 0.0095, 0.0003);
  // More bits, fewer false positives.
  EXPECT_LT(BlockedBloomFpr(16, BlockedBloomProbes(16)), f);
  EXPECT_LT(BlockedBloomFpr(1, 1), 1.0);
}

// The definition BlockedBloomProbes answers from a table of steps: the k
// in [1, 16] with the least BlockedBloomFpr, the smallest on a tie.
int ArgminBlockedBloomFpr(double bits_per_key) {
  int best = 1;
  double best_fpr = BlockedBloomFpr(bits_per_key, 1);
  for (int k = 2; k <= 16; k++) {
    const double f = BlockedBloomFpr(bits_per_key, k);
    if (f < best_fpr) {
      best = k;
      best_fpr = f;
    }
  }
  return best;
}

TEST(ParamsTest, BlockedBloomProbesIsTheArgminOnEveryHundredthOfTheRange) {
  // Every bits per key a spec accepts with two decimals, [1, 64].
  int steps = 0, prev = 0;
  for (int i = 100; i <= 6400; i++) {
    const double b = i / 100.0;
    const int k = BlockedBloomProbes(b);
    ASSERT_EQ(k, ArgminBlockedBloomFpr(b)) << b;
    if (k != prev) steps++;
    prev = k;
  }
  EXPECT_EQ(steps, 16);  // 1, 2, ..., 16: every k is the answer somewhere
}

TEST(ParamsTest, BlockedBloomProbesIsTheArgminAroundEveryStep) {
  // Find each step by bisection over doubles (as the table was made), then
  // compare at 2^s ulps either side of it: the table's side, the window
  // where the argmin is computed, and the flicker of rounding inside it.
  for (int k = 2; k <= 16; k++) {
    double lo = 1, hi = 64;  // argmin(lo) < k <= argmin(hi)
    for (;;) {
      const double mid = lo + (hi - lo) / 2;
      if (mid <= lo || mid >= hi) break;
      (ArgminBlockedBloomFpr(mid) >= k ? hi : lo) = mid;
    }
    EXPECT_EQ(BlockedBloomProbes(hi), ArgminBlockedBloomFpr(hi)) << k;
    for (int s = 0; s < 52; s++) {
      for (double b :
           {hi - std::ldexp(hi, s - 52), hi + std::ldexp(hi, s - 52)}) {
        ASSERT_EQ(BlockedBloomProbes(b), ArgminBlockedBloomFpr(b))
            << "k " << k << ", b " << b;
      }
    }
  }
}

TEST(ParamsTest, BlockedBloomProbesIsTheArgminAtRandomPoints) {
  uint64_t state = 7;
  for (int i = 0; i < 1000; i++) {
    state = state * 6364136223846793005u + 1442695040888963407u;
    const double b = 1 + 63 * static_cast<double>(state >> 11) * 0x1p-53;
    ASSERT_EQ(BlockedBloomProbes(b), ArgminBlockedBloomFpr(b)) << b;
  }
  // Outside [1, 64] (no spec asks, ParamsForFpr may) it is computed.
  for (double b : {0.0, 0.5, 0.999, 64.5, 100.0, 1000.0}) {
    EXPECT_EQ(BlockedBloomProbes(b), ArgminBlockedBloomFpr(b)) << b;
  }
}

TEST(ParamsTest, ParamsForFprReachesTarget) {
  for (FilterKind kind : {FilterKind::kBloom, FilterKind::kBlockedBloom}) {
    for (double target : {0.1, 0.01, 0.001, 0.0001}) {
      FilterParams p;
      ASSERT_TRUE(ParamsForFpr(kind, 1000000, target, &p).ok());
      EXPECT_LE(p.expected_fpr, target);
      // Not wastefully large: 1/8 bit less would miss the target.
      FilterParams q;
      FilterSpec spec{kind, p.bits_per_key - 0.125, 0};
      ASSERT_TRUE(ParamsForSpec(spec, 1000000, &q).ok());
      EXPECT_GT(q.expected_fpr, target * 0.98) << FilterKindName(kind);
    }
  }
  FilterParams p;
  ASSERT_TRUE(ParamsForFpr(FilterKind::kBloom, 1000000, 0.01, &p).ok());
  EXPECT_NEAR(p.bits_per_key, 9.6, 0.1);
  EXPECT_EQ(p.num_probes, 7);
}

TEST(ParamsTest, ParamsForFprRejectsBadTargets) {
  FilterParams p;
  EXPECT_FALSE(ParamsForFpr(FilterKind::kBloom, 100, 0, &p).ok());
  EXPECT_FALSE(ParamsForFpr(FilterKind::kBloom, 100, 1, &p).ok());
  EXPECT_FALSE(ParamsForFpr(FilterKind::kBloom, 100, -0.5, &p).ok());
  EXPECT_FALSE(ParamsForFpr(FilterKind::kBloom, 100, std::nan(""), &p).ok());
  EXPECT_FALSE(ParamsForFpr(FilterKind::kBloom, 100, 1e-30, &p).ok());
  EXPECT_FALSE(ParamsForFpr(FilterKind::kEmpty, 100, 0.01, &p).ok());
}

TEST(ParamsTest, HugeKeyCountsDoNotOverflow) {
  // 5 billion keys at 10 bits/key: 6.25 GB, beyond 32-bit sizes.
  for (const char* kind : {"bloom", "blocked_bloom"}) {
    FilterSpec spec;
    ASSERT_TRUE(ParseFilterSpec(std::string(kind) + ":10", &spec).ok());
    FilterParams p;
    ASSERT_TRUE(ParamsForSpec(spec, 5000000000ull, &p).ok());
    EXPECT_GE(p.filter_bytes, 6250000000ull);
    EXPECT_LE(p.filter_bytes, 6250000000ull + 128);
    EXPECT_LT(p.expected_fpr, 0.01);
  }
}

TEST(ParamsTest, SmallBlockedSpecsWriteStandardBloom) {
  FilterSpec spec{FilterKind::kBlockedBloom, 10, 0};
  FilterParams p;
  ASSERT_TRUE(ParamsForSpec(spec, 36, &p).ok());
  EXPECT_EQ(p.kind, FilterKind::kBloom);
  EXPECT_LE(p.filter_bytes, 36 * 10 / 8 + 8);
  ASSERT_TRUE(ParamsForSpec(spec, 100000, &p).ok());
  EXPECT_EQ(p.kind, FilterKind::kBlockedBloom);
}

// ---- PlanLevelBits ----------------------------------------------------------

TEST(LevelPlanTest, FewerFalsePositivesThanUniformAtEqualMemory) {
  const std::vector<uint64_t> tree = {250000,  250000,   250000,   250000,
                                      1000000, 10000000, 100000000};
  for (FilterKind kind : SpecKinds()) {
    for (double avg : {6.0, 10.0, 16.0}) {
      LevelPlan plan;
      ASSERT_TRUE(PlanLevelBits(kind, tree, avg, &plan).ok());
      ASSERT_EQ(plan.bits_per_key.size(), tree.size());
      SCOPED_TRACE(std::string(FilterKindName(kind)) + ":" +
                   std::to_string(avg));
      // Memory: the budget, within rounding (cuckoo: one run may round down
      // a whole fingerprint bit).
      const double tolerance =
          kind == FilterKind::kCuckoo ? 1.05 / 0.95 * 1e8 : 1e-4 * avg * 1.2e8;
      EXPECT_LE(plan.total_bits, plan.budget_bits + 1e-4 * plan.budget_bits);
      EXPECT_NEAR(plan.total_bits, plan.budget_bits, tolerance);
      // The budget is the uniform filters' memory.
      EXPECT_NEAR(plan.budget_bits / 112000000.0, avg,
                  kind == FilterKind::kCuckoo ? avg * 0.06 : 0.01);
      // Fewer false positives; with a 10x tree, well under half.
      EXPECT_LT(plan.expected_false_positives,
                0.5 * plan.uniform_false_positives);
      double sum = 0;
      for (double f : plan.fpr) sum += f;
      EXPECT_DOUBLE_EQ(sum, plan.expected_false_positives);
      // Smaller runs get at least as many bits per key.
      for (size_t i = 1; i < tree.size(); i++) {
        if (tree[i] >= tree[i - 1]) {
          EXPECT_LE(plan.bits_per_key[i], plan.bits_per_key[i - 1] + 1e-9) << i;
        }
      }
      // The last level holds 89% of the keys and gets less than the average.
      EXPECT_LT(plan.bits_per_key.back(), avg);
      for (double b : plan.bits_per_key) {
        EXPECT_GE(b, MinBitsPerKey(kind));
        EXPECT_LE(b, MaxBitsPerKey(kind));
      }
    }
  }
}

TEST(LevelPlanTest, FalsePositivesProportionalToKeys) {
  // Monkey's optimum: away from the clamps, FPR per run ~ keys per run.
  LevelPlan plan;
  ASSERT_TRUE(PlanLevelBits(FilterKind::kBloom, {1000000, 10000000, 100000000},
                            10, &plan)
                  .ok());
  EXPECT_NEAR(plan.fpr[1] / plan.fpr[2], 0.1, 0.02);
  EXPECT_NEAR(plan.fpr[0] / plan.fpr[2], 0.01, 0.003);
  // ~ ln(10) / ln(2)^2 = 4.8 more bits per key per level up.
  EXPECT_NEAR(plan.bits_per_key[0] - plan.bits_per_key[1], 4.8, 0.5);
  EXPECT_NEAR(plan.bits_per_key[1] - plan.bits_per_key[2], 4.8, 0.5);
}

TEST(LevelPlanTest, OneRunGetsTheAverage) {
  for (FilterKind kind : SpecKinds()) {
    LevelPlan plan;
    ASSERT_TRUE(PlanLevelBits(kind, {5000000}, 12, &plan).ok());
    EXPECT_NEAR(plan.bits_per_key[0], 12, 1e-9) << FilterKindName(kind);
    EXPECT_DOUBLE_EQ(plan.expected_false_positives,
                     plan.uniform_false_positives);
  }
  // Equal runs: equal bits, but for the one run whose hull segment the
  // budget ends in.
  LevelPlan plan;
  ASSERT_TRUE(PlanLevelBits(FilterKind::kBlockedBloom, {1000, 1000000, 1000000},
                            10, &plan)
                  .ok());
  EXPECT_NEAR(plan.bits_per_key[1], plan.bits_per_key[2], 0.5);
  EXPECT_GT(plan.bits_per_key[0], plan.bits_per_key[1] + 5);
}

TEST(LevelPlanTest, ZeroKeys) {
  LevelPlan plan;
  ASSERT_TRUE(
      PlanLevelBits(FilterKind::kBloom, {0, 1000000, 0, 10000000}, 10, &plan)
          .ok());
  EXPECT_EQ(plan.bits_per_key[0], 0);
  EXPECT_EQ(plan.fpr[0], 0);
  EXPECT_EQ(plan.bits_per_key[2], 0);
  EXPECT_GT(plan.bits_per_key[1], plan.bits_per_key[3]);
  ASSERT_TRUE(PlanLevelBits(FilterKind::kBloom, {0, 0}, 10, &plan).ok());
  EXPECT_EQ(plan.expected_false_positives, 0);
  EXPECT_EQ(plan.total_bits, 0);
}

TEST(LevelPlanTest, ClampsAtTheKindsRange) {
  // A huge budget: every run at the maximum, memory under the budget.
  LevelPlan plan;
  ASSERT_TRUE(
      PlanLevelBits(FilterKind::kBloom, {1000, 1000000, 100000000}, 64, &plan)
          .ok());
  for (double b : plan.bits_per_key) EXPECT_EQ(b, 64);
  // A tiny budget: the last level at the minimum, small runs above it.
  ASSERT_TRUE(
      PlanLevelBits(FilterKind::kBloom, {1000, 1000000, 100000000}, 1, &plan)
          .ok());
  EXPECT_EQ(plan.bits_per_key[2], 1);
  // A run so small it would want more than the maximum is clamped, and
  // the bits it cannot use go to the others.
  ASSERT_TRUE(
      PlanLevelBits(FilterKind::kCuckoo, {1, 100000000}, 20, &plan).ok());
  EXPECT_LE(plan.bits_per_key[0], MaxBitsPerKey(FilterKind::kCuckoo));
  EXPECT_NEAR(plan.bits_per_key[1], 20, 1.0);
}

TEST(LevelPlanTest, RejectsBadInput) {
  LevelPlan plan;
  EXPECT_FALSE(PlanLevelBits(FilterKind::kBloom, {}, 10, &plan).ok());
  EXPECT_FALSE(PlanLevelBits(FilterKind::kBloom, {100}, 0.5, &plan).ok());
  EXPECT_FALSE(PlanLevelBits(FilterKind::kBloom, {100}, 65, &plan).ok());
  EXPECT_FALSE(
      PlanLevelBits(FilterKind::kBloom, {100}, std::nan(""), &plan).ok());
  EXPECT_FALSE(PlanLevelBits(FilterKind::kEmpty, {100}, 10, &plan).ok());
  EXPECT_FALSE(
      PlanLevelBits(FilterKind::kCountingBloom, {100}, 10, &plan).ok());
}

}  // namespace
}  // namespace sstfilter
