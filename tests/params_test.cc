// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.

#include "sstfilter/params.h"

#include <gtest/gtest.h>

#include <cmath>

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

}  // namespace
}  // namespace sstfilter
