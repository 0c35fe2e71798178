// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// What a spec's bits promise (docs/FORMAT.md): no filter a builder writes
// for it, of any number of keys, has an expected FPR above 1.1 times the
// spec's FPR at kLargeFilterKeys (2^20) keys; and the filters built at the
// sizes where that decides read at the planned FPR.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "policy/bloom_fallback.h"
#include "policy/format.h"
#include "policy/plan.h"
#include "sstfilter/filter.h"
#include "sstfilter/spec.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using test::AbsentKey;
using test::Key;

// The promise, as docs/FORMAT.md states it (kSmallFilterFprSlack).
constexpr double kPromise = 1.1;

double LargeFilterFpr(const FilterSpec& spec) {
  return internal::PlanFilter(spec, internal::kLargeFilterKeys).expected_fpr;
}

// n = 1 .. 5000, then steps of about 1/64 up to 10^5, then spot checks to
// 10^9 (the ribbon kind's banded form beyond ~10^9 keys).
std::vector<uint64_t> Counts() {
  std::vector<uint64_t> counts;
  for (uint64_t n = 1; n <= 5000; n++) counts.push_back(n);
  for (uint64_t n = 5001; n <= 100000; n += n / 64) counts.push_back(n);
  for (uint64_t n : {131071u, 1000000u, 10000000u, 123456789u}) {
    counts.push_back(n);
  }
  counts.push_back(uint64_t{1} << 31);  // banded ribbon
  return counts;
}

TEST(SmallFilterFprTest, EveryPlanKeepsTheLargeFilterFpr) {
  const std::vector<uint64_t> counts = Counts();
  int specs = 0;
  for (FilterKind kind : SpecKinds()) {
    for (double bits :
         {4.0,  5.0,  6.0,  7.0,  7.3,  8.0,  9.0,  9.5,  10.0, 11.0, 12.0,
          13.0, 14.0, 14.7, 16.0, 18.0, 20.0, 24.0, 31.1, 32.0, 48.0, 64.0}) {
      for (uint64_t seed : {0, 7}) {
        FilterSpec spec;
        spec.kind = kind;
        spec.bits_per_key = bits;
        spec.seed = seed;
        if (!spec.Validate().ok()) continue;
        const double ceiling = kPromise * LargeFilterFpr(spec);
        for (uint64_t n : counts) {
          ASSERT_LE(internal::PlanFilter(spec, n).expected_fpr, ceiling)
              << spec.ToString() << " n=" << n;
        }
        specs++;
      }
    }
  }
  // bloom and blocked_bloom take 22 of the bits, cuckoo and ribbon 20.
  EXPECT_EQ(specs, 2 * (22 + 22 + 20 + 20));
}

// The planned FPR is what the bytes do: `filters` filters of n keys each
// (disjoint fixed keys), each probed with `probes` absent keys; the false
// positives counted are within about 3 sigma of the planned rate, and the
// planned rate is within the ceiling.
void ExpectMeasuredFpr(const char* text, uint64_t n, int filters,
                       uint64_t probes) {
  const FilterSpec spec = test::MustParse(text);
  const FilterParams planned = internal::PlanFilter(spec, n);
  ASSERT_LE(planned.expected_fpr, kPromise * LargeFilterFpr(spec)) << text;
  uint64_t fp = 0;
  for (int f = 0; f < filters; f++) {
    std::unique_ptr<FilterBuilder> b;
    ASSERT_TRUE(NewFilterBuilder(spec, &b).ok());
    for (uint64_t i = 0; i < n; i++) b->AddKey(Key(f * n + i));
    std::string bytes;
    b->Finish(&bytes);
    ASSERT_EQ(bytes.size(), b->FilterSize(n)) << text;
    const FilterReader r = FilterReader::Open(bytes);
    ASSERT_TRUE(r.valid()) << text;
    EXPECT_EQ(r.kind(), planned.kind) << text;
    for (uint64_t i = 0; i < n; i++) {
      ASSERT_TRUE(r.MayMatch(Key(f * n + i))) << text << " filter " << f;
    }
    for (uint64_t j = 0; j < probes; j++) {
      fp += r.MayMatch(AbsentKey(f * probes + j));
    }
  }
  const double expect =
      planned.expected_fpr * static_cast<double>(filters * probes);
  EXPECT_NEAR(static_cast<double>(fp), expect, 3 * std::sqrt(expect) + 3)
      << text << " n=" << n << " planned FPR " << planned.expected_fpr;
}

TEST(SmallFilterFprTest, BuiltFiltersReadAtThePlannedFpr) {
  // The flush-sized file of the natural tree: one segment of 6 blocks,
  // given 59 columns (r = 9, 5 wide blocks) where its 10 bits per key buy
  // 49 (FPR 2^-8).
  ExpectMeasuredFpr("ribbon:10", 640, 40, 50000);
  // LevelDB's filters: compact dense, r = 10 where the budget gave 9.
  ExpectMeasuredFpr("ribbon:10", 33, 200, 10000);
  // A half-loaded segment: a standard Bloom filter reaches the ceiling in
  // fewer bytes.
  ExpectMeasuredFpr("ribbon:10", 100, 100, 20000);
  ExpectMeasuredFpr("ribbon:7", 300, 40, 20000);
  // A blocked Bloom filter just past 1 KiB, rounded up to whole blocks.
  ExpectMeasuredFpr("blocked_bloom:10", 846, 40, 20000);
}

// Where the ceiling gives filters more bytes than their bits, builders
// write exactly the planned size, and every key matches.
TEST(SmallFilterFprTest, BuildersWriteThePlannedSize) {
  for (const char* text : {"ribbon:10", "ribbon:7.3", "ribbon:20:seed=7",
                           "ribbon:4", "ribbon:31.1", "blocked_bloom:10"}) {
    const FilterSpec spec = test::MustParse(text);
    std::unique_ptr<FilterBuilder> b;
    ASSERT_TRUE(NewFilterBuilder(spec, &b).ok());
    for (uint64_t n = 1; n <= 1200; n += n < 300 ? 1 : 7) {
      const std::string bytes = test::BuildFilter(spec, n);
      ASSERT_EQ(bytes.size(), b->FilterSize(n)) << text << " n=" << n;
      ASSERT_TRUE(test::AllMayMatch(bytes, n)) << text << " n=" << n;
    }
  }
}

// The standard Bloom filter a ribbon spec writes in place of a small
// ribbon filter of `total` bytes (BloomSpecOfTotal): the largest one that
// fits, as a scan of every payload from the top finds it, and its FPR never
// rises as the total grows (the planner halves its search on that: the
// smallest total that reaches a ceiling). Every total to 8 bytes per key
// and 300 more, at each count to 200 and at some larger ones, with each
// hashing (the trailer's size depends on it).
TEST(SmallFilterFprTest, BloomFallbackIsTheLargestThatFitsAndFallsWithItsSize) {
  std::vector<FilterSpec> hashings(4);
  for (FilterSpec& s : hashings) {
    s.kind = FilterKind::kRibbon;
    s.bits_per_key = 10;
  }
  hashings[1].seed = 12345;
  hashings[2].keyed = true;
  hashings[3].salt = true;
  std::vector<uint64_t> counts;
  for (uint64_t n = 1; n <= 200; n++) counts.push_back(n);
  for (uint64_t n : {257u, 1000u, 2049u}) counts.push_back(n);
  auto scanned = [](uint64_t total, uint64_t n, const FilterSpec& spec) {
    for (uint64_t b = total > 2 ? total - 2 : 1; b > 1; b--) {
      const FilterSpec s =
          internal::BloomSpecForBytes(FilterKind::kBloom, b, n, spec);
      const internal::KindPlan plan = internal::PlanBloomFamily(s, n, false);
      if (plan.payload_bytes == b &&
          internal::PlannedFilterBytes(plan, s) <= total) {
        return s;
      }
    }
    return internal::BloomSpecForBytes(FilterKind::kBloom, 1, n, spec);
  };
  for (const FilterSpec& spec : hashings) {
    for (uint64_t n : counts) {
      double last_fpr = 1;
      for (uint64_t total = 1; total <= 8 * n + 300; total++) {
        const FilterSpec s = internal::BloomSpecOfTotal(total, n, spec);
        ASSERT_EQ(s, scanned(total, n, spec)) << n << " keys, " << total;
        const double fpr =
            internal::PlanBloomFamily(s, n, true).params.expected_fpr;
        ASSERT_LE(fpr, last_fpr) << n << " keys, " << total << " bytes";
        last_fpr = fpr;
      }
    }
  }
}

}  // namespace
}  // namespace sstfilter
